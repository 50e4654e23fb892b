"""The classroom kit without starting a hub (``make classroom-test`` starts one): the hub
configuration loads and says what the README says, and the sizing arithmetic is right."""
from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest
from traitlets.config import Config

ROOT = Path(__file__).resolve().parents[2]


def load_test_module():
    spec = importlib.util.spec_from_file_location("load_test", ROOT / "classroom" / "load_test.py")
    module = importlib.util.module_from_spec(spec)
    pytest.importorskip("websocket")
    spec.loader.exec_module(module)
    return module


def load_hub_config(monkeypatch, tmp_path, **settings) -> Config:
    """classroom/jupyterhub_config.py as JupyterHub loads it, with ``settings`` in the
    environment (a SystemExit is the hub refusing to start)."""
    pytest.importorskip("jupyterhub")
    for key in ("CLASSROOM_MODE", "CLASSROOM_IP", "CLASSROOM_RUN_AS", "CLASSROOM_GROUP"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("CLASSROOM_DIR", str(tmp_path))
    for key, value in settings.items():
        monkeypatch.setenv(key, value)
    config = Config()
    code = (ROOT / "classroom" / "jupyterhub_config.py").read_text()
    exec(compile(code, "jupyterhub_config.py", "exec"), {"get_config": lambda: config})
    return config


def test_the_load_test_set_up_is_explicit_and_keeps_to_loopback(tmp_path, monkeypatch):
    run_as = {"CLASSROOM_RUN_AS": "nobody"} if os.geteuid() == 0 else {}
    config = load_hub_config(monkeypatch, tmp_path, CLASSROOM_MODE="load-test",
                             CLASSROOM_ADMIN_TOKEN="secret", **run_as)
    assert config.JupyterHub.ip == "127.0.0.1"
    assert config.JupyterHub.authenticator_class == "dummy"
    assert len(config.DummyAuthenticator.password) >= 16          # made at random, not shared
    assert config.SimpleLocalProcessSpawner.home_dir_template.startswith(str(tmp_path))
    assert config.JupyterHub.services[0]["api_token"] == "secret"
    assert config.Spawner.pre_spawn_hook.__name__ == "give_chapters"
    assert oct((tmp_path / "state").stat().st_mode & 0o777) == "0o700"
    with pytest.raises(SystemExit, match="127.0.0.1 only"):
        load_hub_config(monkeypatch, tmp_path, CLASSROOM_MODE="load-test",
                        CLASSROOM_IP="0.0.0.0", **run_as)


def test_a_class_uses_its_accounts_and_their_passwords(tmp_path, monkeypatch):
    import grp

    if os.geteuid() != 0:
        with pytest.raises(SystemExit, match="runs as root"):
            load_hub_config(monkeypatch, tmp_path, CLASSROOM_GROUP=grp.getgrgid(0).gr_name)
        return
    config = load_hub_config(monkeypatch, tmp_path, CLASSROOM_GROUP=grp.getgrgid(0).gr_name,
                             CLASSROOM_TEACHERS="tina, tom")
    assert config.JupyterHub.authenticator_class == "pam"
    assert config.PAMAuthenticator.allowed_groups == {grp.getgrgid(0).gr_name}
    assert config.JupyterHub.spawner_class == "localprocess"
    assert config.Authenticator.admin_users == {"tina", "tom"}
    assert "root" in config.Authenticator.blocked_users
    assert "services" not in config.JupyterHub                   # no service token by default


def test_the_z2jh_values_carry_no_password_and_refuse_the_dummy_login():
    """Zero to JupyterHub loads hub.config over the chart's defaults (whose login is the dummy
    one), then runs each hub.extraConfig snippet in order: the kit's refuses to start until a
    real login is named."""
    yaml = pytest.importorskip("yaml")
    values = yaml.safe_load((ROOT / "classroom" / "z2jh-values.yaml").read_text())
    assert "password" not in json.dumps(values).lower()

    def start_hub(extra_config: dict) -> None:
        config = Config({"JupyterHub": {"authenticator_class": "dummy"}})   # the chart's
        for app, settings in {**values["hub"].get("config", {}), **extra_config}.items():
            config[app].update(settings)
        for _, snippet in sorted(values["hub"]["extraConfig"].items()):
            exec(snippet, {"c": config})

    with pytest.raises(SystemExit, match="no real login yet"):
        start_hub({})
    with pytest.raises(SystemExit, match="no real login yet"):
        start_hub({"JupyterHub": {"authenticator_class": "jupyterhub.auth.DummyAuthenticator"}})
    start_hub({"JupyterHub": {"authenticator_class": "github"}})         # a real login starts


def test_the_load_tests_class_table_check_tells_right_from_wrong(tmp_path):
    """The hub test's last step without a hub: homes whose 03.1 verdicts are (or are not) the
    ones its students were told to give."""
    from dltutor.exercises import record

    load_test = load_test_module()
    names = [f"student{i:03d}" for i in range(4)]
    for name in names:
        status = "correct" if load_test.exercise_answer(name) == "0.1155" else "not yet"
        (tmp_path / name).mkdir()
        record.save_entry(tmp_path / name / record.FILE_NAME, "03.1", status=status, hints=0)
    assert load_test.class_progress(tmp_path, names) == {"students": 4, "correct": 2,
                                                         "as_expected": True}
    record.save_entry(tmp_path / names[1] / record.FILE_NAME, "03.1", status="correct", hints=0)
    assert load_test.class_progress(tmp_path, names)["as_expected"] is False


def test_the_sizing_table_follows_from_the_measurements():
    load_test = load_test_module()
    records = [{"name": f"s{i}", "ok": True, "first_kernel_s": 10.0 + i, "lab_s": 5.0,
                "peak_rss_mib": 256.0 + (100.0 if i == 19 else 0.0), "cpu_s": 6.0}
               for i in range(20)]
    table = load_test.sizing({"students": 20, "steps": 300, "records": records,
                              "hub_rss_mib": 100.0,
                              "machine": {"cores": 2, "memory_gib": 8.0}})
    # 95th percentile of memory: 256 MiB (19 of 20 students) -> 4 students per GiB;
    # 6 CPU-seconds per 5 minutes at 70 % -> 35 students per core
    assert "**35 students per core, 4.0 students per GiB**" in table
    assert "| 30 | 1 | 8 |" in table and "| 300 | 9 | 75 |" in table
    assert load_test.p95([1.0, 2.0]) == 2.0


def test_several_runs_give_ranges_and_the_sizing_of_the_run_that_needed_most():
    """Machines of one kind differ from run to run: the table shows each measure's median as a
    range over the runs, and plans with the slowest run's CPU and the largest memory."""
    load_test = load_test_module()

    def run(first_kernel, cpu, rss):
        records = [{"name": f"s{i}", "ok": True, "server_ready_s": first_kernel - 4,
                    "first_kernel_s": first_kernel, "import_s": 0.3, "lab_s": 5.0,
                    "peak_rss_mib": rss, "cpu_s": cpu} for i in range(20)]
        return {"students": 20, "steps": 300, "records": records, "hub_rss_mib": 100.0,
                "machine": {"cores": 2, "memory_gib": 8.0}}

    table = load_test.sizing({"runs": [run(36.0, 3.0, 256.0), run(89.0, 6.0, 300.0)]})
    assert "| time to first kernel (s) | 36.0-89.0 |" in table
    assert "| import dltutor in that kernel (s) | 0.30 |" in table
    assert "Measured: 2 runs of 20 students" in table
    # the slower run: 6 CPU-s per student -> 35 per core (the faster gave 70); memory 300 MiB
    assert "(students per core over the runs: 35, 70)" in table
    assert "**35 students per core, 3.4 students per GiB**" in table
    assert load_test.runs_of(run(1.0, 1.0, 1.0))[0]["students"] == 20    # an older file


def test_both_readmes_show_the_recorded_measurement():
    """The sizing in README.md and README.zh.md is the one the recorded run gives
    (benchmarks/classroom.json): a new measurement must reach both."""
    import json

    table = load_test_module().sizing(
        json.loads((ROOT / "benchmarks" / "classroom.json").read_text(encoding="utf-8")))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    readme_zh = (ROOT / "README.zh.md").read_text(encoding="utf-8")
    assert table in readme, "README.md: paste `python classroom/load_test.py --table`"
    rows = [line for line in table.splitlines() if line.startswith(("| 30 |", "| 100 |", "| 300 |"))]
    per_core, per_gib = table.split("**")[1].replace(" students per core,", "").split()[:2]
    assert len(rows) == 3 and all(row in readme_zh for row in rows), rows
    assert f"每核 {per_core} 名学生、每 GiB {per_gib} 名学生" in readme_zh
