"""The class hub's pre-spawn hook (dltutor/launch/hub.py) with a stand-in for each spawner the
classroom guide names. A stand-in has the class name and the settings the real spawner reads
(checked against jupyterhub 5-6, jupyterhub-systemdspawner 1.0 and dockerspawner 14): the
hook must find the account and home each spawner itself would use. The real hub, with real
accounts, is tests/delivery/test_class_hub.py."""
from __future__ import annotations

import asyncio
import logging
import os
import pwd
from pathlib import Path

import pytest

from dltutor.launch.hub import Account, as_account, give_chapters, student_account

ME = pwd.getpwuid(os.geteuid())


class User:
    name, id = ME.pw_name, 7


def stand_in(kind: str, **settings):
    """An object of a class named ``kind`` with a user, a log and ``settings``."""
    return type(kind, (), {"user": User(), "log": logging.getLogger("hub"), **settings})()


def local_process(**settings):
    """A LocalProcessSpawner, or a subclass of it (a school's own)."""
    base = type("LocalProcessSpawner", (), {})
    return type("SchoolSpawner", (base,), {"user": User(), "log": logging.getLogger("hub"),
                                           **settings})()


def test_each_spawner_gives_its_own_account_and_home(tmp_path):
    simple = stand_in("SimpleLocalProcessSpawner", home_dir_template=f"{tmp_path}/{{username}}",
                      run_as="")
    assert student_account(simple) == Account(None, tmp_path / ME.pw_name)
    assert student_account(local_process()) == Account(ME.pw_name, Path(ME.pw_dir))
    systemd = stand_in("SystemdSpawner", username_template="{USERNAME}", user_workingdir=None,
                       dynamic_users=False)
    assert student_account(systemd) == Account(ME.pw_name, Path(ME.pw_dir))
    systemd.user_workingdir = "/srv/class/{USERID}"
    assert student_account(systemd) == Account(ME.pw_name, Path("/srv/class/7"))
    systemd.dynamic_users = True                      # the account exists once systemd made it
    assert student_account(systemd) == Account(None, None)
    docker = stand_in("DockerSpawner", image="dltutor", post_start_cmd="dltutor notebooks ~")
    assert student_account(docker) == Account(None, None)
    assert student_account(stand_in("KubeSpawner")) == Account(None, None)


def test_tljhs_spawner_is_a_systemd_spawner_with_its_user_names():
    base = type("SystemdSpawner", (), {})
    tljh = type("UserCreatingSpawner", (base,), {
        "user": User(), "username_template": "jupyter-{USERNAME}", "user_workingdir": None,
        "dynamic_users": False})()
    with pytest.raises(KeyError):                     # no jupyter-NAME account here
        student_account(tljh)


def test_no_students_server_runs_as_root():
    with pytest.raises(PermissionError, match="root"):
        as_account("root")
    if os.geteuid() == 0:                             # the hub's own account, when it is root
        with pytest.raises(PermissionError, match="CLASSROOM_RUN_AS"):
            as_account(None)
    else:
        assert as_account(None) == {} and as_account(ME.pw_name) == {}


def test_a_container_copies_for_itself_and_the_hook_does_nothing(caplog):
    docker = stand_in("DockerSpawner", image="dltutor")
    with caplog.at_level(logging.INFO, logger="hub"):
        asyncio.run(give_chapters(docker))
    assert "container's own start" in caplog.text


@pytest.mark.skipif(os.geteuid() == 0, reason="as root the hook refuses the hub's own account "
                    "(tested above); tests/delivery/test_class_hub.py copies as real students")
def test_the_hook_copies_the_chapters_and_closes_the_home(tmp_path):
    home = tmp_path / "ana"
    home.mkdir(mode=0o755)
    home.chmod(0o755)
    simple = stand_in("SimpleLocalProcessSpawner", home_dir_template=str(home), run_as="")
    asyncio.run(give_chapters(simple))
    assert (home / "00_welcome.ipynb").exists() and (home / "zh" / "lab.zh.ipynb").exists()
    assert home.stat().st_mode & 0o007 == 0
