"""The class hub of classroom/jupyterhub_config.py, for real: a JupyterHub on 127.0.0.1, real
Unix accounts (made with useradd, removed afterwards), their real login, and a kernel of one
student trying to reach another's work and the hub's secrets.

It needs root (accounts, and a hub that runs each student as their own account), JupyterHub
(the classroom extra, in the test extras) and configurable-http-proxy (npm; `make test`
installs it into build/ where npm is found). Elsewhere it is skipped with the reason, except
where DLTUTOR_REQUIRE_HUB is set (CI), where a missing piece fails it.
"""
from __future__ import annotations

import contextlib
import grp
import json
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROXY = ROOT / "build" / "node" / "node_modules" / ".bin" / "configurable-http-proxy"


def _missing() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root: it makes Unix accounts and runs a hub that switches to them"
    if not shutil.which("useradd"):
        return "needs useradd"
    for module in ("jupyterhub", "websocket", "psutil", "requests"):
        try:
            __import__(module)
        except ImportError:
            return f"needs {module} (pip install -e '.[classroom]')"
    if not (PROXY.exists() or shutil.which("configurable-http-proxy")):
        return "needs configurable-http-proxy (npm; make test installs it into build/)"
    return None


if _missing():
    if os.environ.get("DLTUTOR_REQUIRE_HUB"):
        pytest.fail(f"DLTUTOR_REQUIRE_HUB is set: {_missing()}", pytrace=False)
    pytest.skip(_missing(), allow_module_level=True)

import requests  # noqa: E402 - only once the hub is known to be there

from tests.delivery.test_classroom import load_test_module  # noqa: E402 - only once the hub is known to be there

load_test = load_test_module()


@contextlib.contextmanager
def class_accounts(count: int, outsiders: int = 1):
    """``count`` students in a new group and ``outsiders`` accounts outside it, each with a
    home (useradd -m) and a password; all removed afterwards, with their processes."""
    tag = secrets.token_hex(3)
    group = f"dlt{tag}"
    names = [f"dlt{tag}{chr(97 + i)}" for i in range(count + outsiders)]
    passwords = {name: secrets.token_urlsafe(12) for name in names}
    subprocess.run(["groupadd", group], check=True)
    try:
        for i, name in enumerate(names):
            extra = ["-G", group] if i < count else []
            subprocess.run(["useradd", "-m", "-s", "/bin/bash", *extra, name], check=True)
        subprocess.run(["chpasswd"], input="".join(f"{n}:{p}\n" for n, p in passwords.items()),
                       text=True, check=True)
        yield group, names[:count], names[count:], passwords
    finally:
        for name in names:
            subprocess.run(["pkill", "-KILL", "-u", name], check=False)
        time.sleep(0.5)
        for name in names:
            subprocess.run(["userdel", "-r", name], check=False, capture_output=True)
        subprocess.run(["groupdel", group], check=False)


def log_in(base: str, name: str, password: str) -> bool:
    """The hub's login form, as a browser fills it in: True when the hub lets the person in."""
    with requests.Session() as browser:
        browser.get(f"{base}/hub/login", timeout=30)
        answer = browser.post(f"{base}/hub/login", timeout=60, allow_redirects=False,
                              data={"username": name, "password": password,
                                    "_xsrf": browser.cookies.get("_xsrf", "")})
        return answer.status_code == 302 and "jupyterhub-session-id" in browser.cookies


def start_server(hub, name: str) -> None:
    """Start ``name``'s server through the hub's API (made a hub user first if need be)."""
    import urllib.error

    try:
        hub.api("POST", f"/hub/api/users/{name}")
    except urllib.error.HTTPError as error:
        assert error.code == 409, error                          # logged in before: known
    hub.api("POST", f"/hub/api/users/{name}/server")
    deadline = time.monotonic() + 180
    while not hub.api("GET", f"/hub/api/users/{name}")["servers"].get("", {}).get("ready"):
        assert time.monotonic() < deadline, f"{name}'s server was not ready in 180 s"
        time.sleep(0.5)


def server_ready(hub, name: str) -> bool:
    """Whether ``name``'s server is up (False for a name the hub does not know yet)."""
    import urllib.error

    try:
        return bool(hub.api("GET", f"/hub/api/users/{name}")["servers"].get("", {}).get("ready"))
    except urllib.error.HTTPError:
        return False


#: Run in a student's kernel: try each thing and say "ok" or the error's name.
PROBE = '''
import json, os
def attempt(action):
    try:
        action()
        return "ok"
    except Exception as error:
        return type(error).__name__
def read(path):
    with open(path, "rb") as f:
        f.read(1)
def write(path):
    with open(path, "a") as f:
        f.write("x")
print(json.dumps({name: attempt(action) for name, action in ACTIONS.items()}))
'''


def probe(hub, student: str, actions: dict[str, str]) -> dict[str, str]:
    """What ``student``'s kernel can do: ``actions`` maps a name to a Python expression."""
    code = "ACTIONS = {" + ", ".join(f"{k!r}: lambda: {v}" for k, v in actions.items()) + "}"
    code = PROBE.replace("print(json", code + "\nprint(json")
    return json.loads(load_test.run_in_kernel(hub, student, code, timeout=120).strip()
                      .splitlines()[-1])


@pytest.fixture(scope="module")
def class_hub():
    """A class hub (CLASSROOM_MODE=class) with students ana and ben (and one outsider)."""
    with class_accounts(2) as (group, students, outsiders, passwords):
        state = Path(tempfile.mkdtemp(prefix="dltutor-class-hub-"))
        port = load_test.socketless_port().__enter__()
        hub = load_test.Hub(state, port, str(PROXY) if PROXY.exists() else None, mode="class",
                            settings={"CLASSROOM_GROUP": group})
        try:
            with load_test.reachable_for(students, load_test.what_students_run()):
                hub.wait_until_up()
                yield hub, students, outsiders, passwords, state
        finally:
            hub.stop()
            print((state / "hub.log").read_text(errors="replace")[-3000:])
            shutil.rmtree(state, ignore_errors=True)


def test_only_the_class_logs_in_with_its_own_passwords(class_hub):
    hub, (ana, ben), (outsider,), passwords, _ = class_hub
    assert log_in(hub.base, ana, passwords[ana])
    assert not log_in(hub.base, ana, passwords[ben])              # another's password
    assert not log_in(hub.base, ana, "dltutor")                    # the old shared one
    assert not log_in(hub.base, outsider, passwords[outsider])    # not in the class's group
    assert not log_in(hub.base, "root", "anything")


def test_a_student_reaches_neither_anothers_work_nor_the_hubs_secrets(class_hub):
    hub, (ana, ben), _, _, state = class_hub
    import psutil

    for student in (ana, ben):
        start_server(hub, student)
    ana_home, ben_home = (Path(pwd.getpwnam(s).pw_dir) for s in (ana, ben))
    # each got the chapters, as their own files, in a home closed to others
    for student, home in ((ana, ana_home), (ben, ben_home)):
        chapter = home / "00_welcome.ipynb"
        assert chapter.exists() and chapter.stat().st_uid == pwd.getpwnam(student).pw_uid
        assert home.stat().st_mode & 0o007 == 0, oct(home.stat().st_mode)
    # every student's server runs as that student, none as root
    servers = {p.info["username"] for p in psutil.process_iter(["username", "cmdline"])
               if "jupyterhub.singleuser" in " ".join(p.info["cmdline"] or [])}
    assert servers == {ana, ben}, servers
    assert probe(hub, ana, {"write": f"write({str(ana_home / 'notes.txt')!r})"}) == \
        {"write": "ok"}
    hub_pid = hub.process.pid
    proxy = [p.pid for p in psutil.Process(hub_pid).children(recursive=True)
             if "configurable-http-proxy" in " ".join(p.cmdline())]
    ana_server = next(p.pid for p in psutil.process_iter(["username", "cmdline"])
                      if p.info["username"] == ana
                      and "jupyterhub.singleuser" in " ".join(p.info["cmdline"] or []))
    attempts = {
        "list ana's home": f"os.listdir({str(ana_home)!r})",
        "read ana's notes": f"read({str(ana_home / 'notes.txt')!r})",
        "read ana's chapter": f"read({str(ana_home / '00_welcome.ipynb')!r})",
        "write into ana's home": f"write({str(ana_home / 'from-ben.txt')!r})",
        "change ana's chapter": f"write({str(ana_home / '00_welcome.ipynb')!r})",
        "read the cookie secret": f"read({str(state / 'state' / 'jupyterhub_cookie_secret')!r})",
        "read the hub's database": f"read({str(state / 'state' / 'jupyterhub.sqlite')!r})",
        "read the hub's environment (admin token)": f"read('/proc/{hub_pid}/environ')",
        "read the proxy's environment (its token)": f"read('/proc/{proxy[0]}/environ')",
        "read ana's server's environment (her token)": f"read('/proc/{ana_server}/environ')",
    }
    control = {"list his own home": f"os.listdir({str(ben_home)!r})",
               "write his own notes": f"write({str(ben_home / 'notes.txt')!r})"}
    found = probe(hub, ben, {**attempts, **control})
    assert {k: found[k] for k in control} == {k: "ok" for k in control}, found
    assert {k: found[k] for k in attempts} == {k: "PermissionError" for k in attempts}, found
    # and no command line on the machine holds a secret
    secrets_held = [hub.token, (state / "state" / "jupyterhub_cookie_secret").read_text().strip()]
    for process in psutil.process_iter(["cmdline"]):
        line = " ".join(process.info["cmdline"] or [])
        assert not any(secret in line for secret in secrets_held), process


#: Run in the listener's kernel: once the other student's kernel is up, subscribe to every TCP
#: port the other student listens on (as /proc/net/tcp shows them to anyone), say so, and
#: count what comes until the other student is done printing.
EAVESDROP = '''
import json, os, time, zmq
deadline = time.monotonic() + 120
while not os.path.exists(SPEAKING) and time.monotonic() < deadline:
    time.sleep(0.2)
ports = set()
for row in open("/proc/net/tcp").read().splitlines()[1:]:
    cells = row.split()
    if cells[3] == "0A" and int(cells[7]) == UID:                # LISTEN, the other's
        ports.add(int(cells[1].rsplit(":", 1)[1], 16))
context = zmq.Context()
sockets = []
for port in ports:
    listen = context.socket(zmq.SUB)
    listen.setsockopt(zmq.SUBSCRIBE, b"")
    listen.connect(f"tcp://127.0.0.1:{port}")
    sockets.append(listen)
open(LISTENING, "w").close()
heard = 0
while not os.path.exists(DONE) and time.monotonic() < deadline:
    for listen in sockets:
        while listen.poll(10):
            listen.recv_multipart()
            heard += 1
print(json.dumps({"ports": len(ports), "heard": heard}))
'''

#: Run in the speaker's kernel: say it is up, and once the listener listens, print for a while.
SPEAK = '''
import os, time
open(SPEAKING, "w").close()
deadline = time.monotonic() + 120
while not os.path.exists(LISTENING) and time.monotonic() < deadline:
    time.sleep(0.2)
for _ in range(20):
    print("what only its author should see", flush=True)
    time.sleep(0.1)
open(DONE, "w").close()
'''


def test_no_other_account_hears_what_a_students_kernel_prints(class_hub):
    """Kernels speak over Unix sockets in the student's runtime folder: over TCP on 127.0.0.1
    (Jupyter's default) another account could subscribe to a kernel's output, no key needed."""
    import threading

    hub, (ana, ben), _, _, _ = class_hub
    for student in (ana, ben):
        if not server_ready(hub, student):
            start_server(hub, student)
    flags = {name: f"/tmp/dltutor-{secrets.token_hex(4)}-{name.lower()}"
             for name in ("SPEAKING", "LISTENING", "DONE")}
    given = "".join(f"{name} = {path!r}\n" for name, path in flags.items())
    given += f"UID = {pwd.getpwnam(ana).pw_uid}\n"
    heard: list[str] = []
    listener = threading.Thread(target=lambda: heard.append(
        load_test.run_in_kernel(hub, ben, given + EAVESDROP, timeout=180)))
    listener.start()
    try:
        load_test.run_in_kernel(hub, ana, given + SPEAK, timeout=180)
    finally:
        listener.join(timeout=200)
        for flag in flags.values():
            Path(flag).unlink(missing_ok=True)
    found = json.loads(heard[0].strip().splitlines()[-1])
    assert found["ports"] > 0, found                 # ana's server listens (its HTTP port)
    assert found["heard"] == 0, found


def test_the_hub_refuses_to_start_where_it_would_be_unsafe(tmp_path):
    """The load test's open door only on loopback; a class's passwords only over HTTPS; a
    class needs its group."""
    def start(**settings):
        env = {**os.environ, "CLASSROOM_DIR": str(tmp_path), **settings}
        return subprocess.run([sys.executable, "-m", "jupyterhub", "-f",
                               str(ROOT / "classroom" / "jupyterhub_config.py")],
                              env=env, capture_output=True, text=True, timeout=120)

    group = grp.getgrgid(0).gr_name
    cases = {
        "listens on 127.0.0.1 only": dict(CLASSROOM_MODE="load-test", CLASSROOM_IP="0.0.0.0"),
        "an account that is not root": dict(CLASSROOM_MODE="load-test"),
        "no Unix group 'nobody-here'": dict(CLASSROOM_GROUP="nobody-here"),
        "plain HTTP": dict(CLASSROOM_GROUP=group, CLASSROOM_IP="0.0.0.0"),
        "'class' (a real class) or 'load-test'": dict(CLASSROOM_MODE="demo"),
    }
    for said, settings in cases.items():
        done = start(**settings)
        assert done.returncode != 0 and said.replace("'", "") in \
            done.stderr.replace("'", "") + done.stdout.replace("'", ""), (said, done.stderr[-800:])
