"""A student's MPI engines are private on a shared machine (the class hub: every student a Unix
account on one machine). Student A starts two engines; student B, another account, finds every
port A's processes listen on (as anyone can, in /proc/net/tcp) and tries each with a client of
its own: it must neither make A's engines run code nor hear anything from them (A's engines
print a secret over and over while B listens), and it cannot read A's connection files or
A's processes' environments, where the keys are. And nothing of A's listens beyond 127.0.0.1.

Real accounts (useradd, removed afterwards with everything they ran): it needs root, and is
skipped elsewhere, except where DLTUTOR_REQUIRE_HUB is set (CI), where that fails it.
"""
from __future__ import annotations

import contextlib
import json
import os
import pwd
import secrets
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from tests.delivery.test_classroom import load_test_module

ROOT = Path(__file__).resolve().parents[2]


def _missing() -> str | None:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "needs root: it makes two Unix accounts and runs a program as each"
    for program in ("useradd", "userdel", "runuser"):
        if not shutil.which(program):
            return f"needs {program}"
    return None


if _missing():
    if os.environ.get("DLTUTOR_REQUIRE_HUB"):
        pytest.fail(f"DLTUTOR_REQUIRE_HUB is set: {_missing()}", pytrace=False)
    pytest.skip(_missing(), allow_module_level=True)

#: Student A: start two engines, give them a secret, say its pid, then have the engines print
#: the secret until the test closes stdin; finally check the engines still answer, and stop.
STUDENT_A = '''
import json, os, select, sys
import dltutor.distributed as dist
try:
    engines = dist.start_engines(2)
except TimeoutError as error:
    # Once in a full suite run the engines never registered (and never alone, beside the
    # other engine tests or under load). This test is about privacy, not start-up: keep the
    # first failure's account (what the engines printed) on stderr, and start again once.
    print(error, file=sys.stderr, flush=True)
    engines = dist.start_engines(2)
engines.client[:].execute("SECRET = 'held-by-A-' + 'only'", block=True)
print(json.dumps({"pid": os.getpid()}), flush=True)
rounds = 0
while not select.select([sys.stdin], [], [], 0.2)[0]:
    engines.client[:].execute("print(SECRET)", block=True)
    rounds += 1
still = engines.client[:].apply_sync(lambda: 6 * 7)
print(json.dumps({"rounds": rounds, "still_answering": still}), flush=True)
engines.stop()
'''

#: Student B: try A's files, A's environments, and every port of A's as /proc/net/tcp shows
#: them, each with a signed request (B's own key) to run code that would write MARKER, a
#: subscription that would hear whatever the port publishes, and the greeting of an MPI
#: launcher's proxy (hydra's mpiexec took it from anyone, and ended A's engines).
STUDENT_B = '''
import contextlib, json, os, socket, sys, time, zmq
from jupyter_client.session import Session
task = json.loads(sys.argv[1])
def attempt(path):
    try:
        open(path, "rb").read(1)
        return "ok"
    except OSError as error:
        return type(error).__name__
def ports_of(uid):
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in open(table).read().splitlines()[1:]:
            cells = row.split()
            address, port = cells[1].rsplit(":", 1)
            if cells[3] == "0A" and int(cells[7]) == uid and len(address) == 8:  # LISTEN, IPv4
                ip = ".".join(str(int(address[i:i + 2], 16)) for i in (6, 4, 2, 0))
                found.add(("127.0.0.1" if ip == "0.0.0.0" else ip, int(port, 16)))
    return sorted(found)
ports = ports_of(task["uid"])
session = Session(key=os.urandom(32))
code = f"open({task['marker']!r}, 'w').write('B ran code in A\\'s engine')"
context = zmq.Context()
sockets = []
for ip, port in ports:
    ask = context.socket(zmq.DEALER)
    ask.linger = 0
    ask.connect(f"tcp://{ip}:{port}")
    for kind, content in (("execute_request", {"code": code, "silent": False}),
                          ("apply_request", {})):
        session.send(ask, kind, content=content)
    listen = context.socket(zmq.SUB)
    listen.linger = 0
    listen.setsockopt(zmq.SUBSCRIBE, b"")
    listen.connect(f"tcp://{ip}:{port}")
    sockets += [ask, listen]
    with contextlib.suppress(OSError):       # what a hydra proxy says first: "HYD", its id 0
        socket.create_connection((ip, port), timeout=2).sendall(b"HYD\\0" + bytes(4))
heard = []
deadline = time.monotonic() + task["listen_s"]
while time.monotonic() < deadline:
    for sock in sockets:
        while sock.poll(10):
            heard.append(repr(sock.recv_multipart())[:200])
print(json.dumps({"ports": ports, "heard": heard,
                  "files": {path: attempt(path) for path in task["files"]}}))
'''


def make_account(tag: str) -> str:
    name = f"dlt{tag}"
    subprocess.run(["useradd", "-m", "-s", "/bin/bash", name], check=True)
    return name


def remove_account(name: str) -> None:
    """End every process the account runs (all started by this test), then the account."""
    uid = pwd.getpwnam(name).pw_uid
    theirs = [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real == uid]
    for process in theirs:
        with contextlib.suppress(psutil.Error):
            process.kill()
    psutil.wait_procs(theirs, timeout=10)
    # MPI's shared-memory segments of killed engines stay in /dev/shm (userdel leaves them),
    # owned by a uid that the next useradd hands out again
    for segment in Path("/dev/shm").glob("mpich_shm_*"):
        with contextlib.suppress(OSError):
            if segment.stat().st_uid == uid:
                segment.unlink()
    subprocess.run(["userdel", "-r", name], check=False, capture_output=True)


def as_account(name: str, *python_args: str, **popen) -> subprocess.Popen:
    """Run this environment's Python with ``python_args`` as ``name``, in its home."""
    home = pwd.getpwnam(name).pw_dir
    command = ["runuser", "-u", name, "--", "env", f"HOME={home}", f"PYTHONPATH={ROOT}",
               sys.executable, *python_args]
    return subprocess.Popen(command, cwd=home, text=True, **popen)


@pytest.fixture(scope="module")
def students():
    """Two accounts, A and B, who can run this environment's Python and the kit."""
    load_test = load_test_module()
    tag = secrets.token_hex(3)
    names: list[str] = []
    try:
        for letter in "ab":
            names.append(make_account(tag + letter))
        with load_test.reachable_for(names, load_test.what_students_run()):
            yield names
    finally:
        for name in names:
            remove_account(name)


def listening(pid: int) -> set[tuple[str, int]]:
    """The addresses and TCP ports ``pid`` and every process it started listen on (as root)."""
    found = set()
    for process in [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            found |= {(c.laddr.ip, c.laddr.port) for c in process.net_connections("tcp")
                      if c.status == "LISTEN"}
    return found


def test_another_account_can_neither_run_code_in_nor_hear_from_a_students_engines(students):
    a, b = students
    home_a = Path(pwd.getpwnam(a).pw_dir)
    marker = Path(f"/tmp/dltutor-{b}-ran-code-in-{a}")
    student_a = as_account(a, "-c", STUDENT_A, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        started = student_a.stdout.readline()
        assert started, "student A's program ended before its engines were up (its stderr above)"
        pid = json.loads(started)["pid"]
        security = home_a / ".ipython" / "profile_default" / "security"
        keys = sorted(security.glob("ipcontroller-*.json"))
        assert keys and stat.S_IMODE(security.stat().st_mode) == 0o700
        assert all(stat.S_IMODE(key.stat().st_mode) == 0o600 for key in keys)
        engines = [p.pid for p in psutil.Process(pid).children(recursive=True)
                   if "ipyparallel.engine" in " ".join(p.cmdline())]
        task = {"uid": pwd.getpwnam(a).pw_uid, "marker": str(marker), "listen_s": 8,
                "files": [*map(str, keys), *(f"/proc/{e}/environ" for e in engines)]}
        ports_of_a = listening(pid)
        assert {ip for ip, _ in ports_of_a} == {"127.0.0.1"}   # none reachable from elsewhere
        probe = as_account(b, "-c", STUDENT_B, json.dumps(task), stdout=subprocess.PIPE)
        found = json.loads(probe.communicate(timeout=300)[0])
        assert set(found["files"].values()) == {"PermissionError"}, found["files"]
        assert {port for _, port in found["ports"]} >= {port for _, port in ports_of_a}
        assert found["heard"] == []
        assert not marker.exists()    # B listened listen_s seconds after asking: time to run
        student_a.stdin.close()
        last = student_a.stdout.readline()
        assert last, "A's program failed while B tried A's ports: its engines stopped (stderr above)"
        said = json.loads(last)
        assert said["rounds"] > 0 and said["still_answering"] == [42, 42], said
        assert student_a.wait(timeout=120) == 0
    finally:
        with contextlib.suppress(Exception):
            student_a.kill()
        marker.unlink(missing_ok=True)
