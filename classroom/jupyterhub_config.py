"""A JupyterHub for a class using dltutor, on one machine. Two set-ups, chosen by CLASSROOM_MODE:

* ``class`` (the default): **for a real class.** Each student is a Unix account of their own
  (``useradd``) in one group (CLASSROOM_GROUP), logs in with that account's password (PAM,
  JupyterHub's own login for system accounts; an OAuth or LDAP login can replace it, see
  classroom/README.md), and their JupyterLab runs as that account in their own home
  (LocalProcessSpawner). Homes are made private to their owner at each start, the hub's state
  folder is the hub's alone, and no student's server runs as root.
* ``load-test``: **for the load test only** (``make classroom-test``). Any name logs in (the
  dummy login, with a password made at random at each start unless CLASSROOM_PASSWORD is set),
  the homes are folders under CLASSROOM_DIR, and every student's server runs as one account:
  the hub's own, or CLASSROOM_RUN_AS when the hub is root. Nothing keeps students apart, so it
  is refused unless the hub listens on 127.0.0.1.

Every student finds the chapters in their home, copied there by :func:`give_chapters` as the
student before their server starts (dltutor/launch/hub.py). The kit is installed once, in the
environment the hub runs in.

Read from the environment:

* ``CLASSROOM_MODE``: ``class`` (default) or ``load-test``
* ``CLASSROOM_DIR``: the hub's state (and the load test's homes); default ./hub-data
* ``CLASSROOM_IP`` / ``CLASSROOM_PORT``: where the hub listens (default 127.0.0.1:8000)
* ``CLASSROOM_SSL_CERT`` / ``CLASSROOM_SSL_KEY``: HTTPS for a hub reached from other machines
  (or ``CLASSROOM_BEHIND_HTTPS=1`` when an HTTPS proxy on this machine is in front of it)
* ``CLASSROOM_GROUP``: the Unix group whose members may log in (default ``dltutor-class``)
* ``CLASSROOM_TEACHERS``: accounts that are the hub's admins (comma-separated; optional)
* ``CLASSROOM_ADMIN_TOKEN``: a token for a service that creates students and starts servers
  (the load test and the isolation test use it; leave it unset for a class)
* ``CLASSROOM_RUN_AS``: load test as root: the account every student's server runs as
* ``CLASSROOM_MEM_LIMIT``: what one student's server may use (e.g. ``1G``)
"""
import grp
import ipaddress
import os
import pwd
import secrets
import shutil
import sys
from pathlib import Path

from jupyterhub.spawner import SimpleLocalProcessSpawner, set_user_setuid
from traitlets import Unicode

from dltutor.launch.hub import give_chapters

c = get_config()  # noqa: F821  (JupyterHub provides it)

mode = os.environ.get("CLASSROOM_MODE", "class")
if mode not in ("class", "load-test"):
    sys.exit(f"classroom: CLASSROOM_MODE={mode!r}: use 'class' (a real class) or 'load-test'")

data = Path(os.environ.get("CLASSROOM_DIR", "hub-data")).resolve()
state = data / "state"            # cookie secret, database, proxy pid: the hub's alone
state.mkdir(parents=True, exist_ok=True)
state.chmod(0o700)

c.JupyterHub.ip = os.environ.get("CLASSROOM_IP", "127.0.0.1")
c.JupyterHub.port = int(os.environ.get("CLASSROOM_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")
chp = os.environ.get("CLASSROOM_PROXY") or shutil.which("configurable-http-proxy")
if chp:
    c.ConfigurableHTTPProxy.command = [chp]

c.Spawner.default_url = "/lab/tree/00_welcome.ipynb"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# what a student's server may use; the sizing table in benchmarks/RESULTS.md says how much
c.Spawner.mem_limit = os.environ.get("CLASSROOM_MEM_LIMIT") or None
c.Spawner.pre_spawn_hook = give_chapters      # the chapters, copied as the student
# Kernels speak to their server over Unix sockets in the student's own runtime folder (mode
# 0700). Over TCP on 127.0.0.1, Jupyter's default, any account on the machine could subscribe
# to a kernel's output channel and read all it prints: listening needs no key.
c.Spawner.args = ["--KernelManager.transport=ipc"]
c.Authenticator.blocked_users = {"root"}


def on_loopback(ip: str) -> bool:
    """Whether the hub can be reached from this machine only."""
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return ip == "localhost"


if mode == "class":
    # -- who may log in: the class's Unix accounts, with their own passwords ---------------
    group = os.environ.get("CLASSROOM_GROUP", "dltutor-class")
    try:
        grp.getgrnam(group)
    except KeyError:
        sys.exit(f"classroom: there is no Unix group {group!r}. Make it (groupadd {group}) and "
                 f"add each student (useradd -m -G {group} NAME; passwd NAME), or name "
                 f"another group in CLASSROOM_GROUP")
    c.JupyterHub.authenticator_class = "pam"
    c.PAMAuthenticator.allowed_groups = {group}
    c.Authenticator.admin_users = {name.strip() for name in
                                   os.environ.get("CLASSROOM_TEACHERS", "").split(",")
                                   if name.strip()}
    # -- passwords never cross a network in the clear ---------------------------------------
    cert, key = os.environ.get("CLASSROOM_SSL_CERT"), os.environ.get("CLASSROOM_SSL_KEY")
    if cert and key:
        c.JupyterHub.ssl_cert, c.JupyterHub.ssl_key = cert, key
    elif not on_loopback(c.JupyterHub.ip) and os.environ.get("CLASSROOM_BEHIND_HTTPS") != "1":
        sys.exit(f"classroom: the hub would take passwords over plain HTTP on "
                 f"{c.JupyterHub.ip}: give it a certificate (CLASSROOM_SSL_CERT and "
                 f"CLASSROOM_SSL_KEY), or put it behind an HTTPS proxy on this machine and "
                 f"say so with CLASSROOM_BEHIND_HTTPS=1")
    # -- where each student's JupyterLab runs: as their own account, in their own home -----
    c.JupyterHub.spawner_class = "localprocess"
    if os.geteuid() != 0:
        sys.exit("classroom: a class hub runs as root, so that each student's server can run "
                 "as the student (sudo -E jupyterhub -f classroom/jupyterhub_config.py); "
                 "CLASSROOM_MODE=load-test is the one-account test set-up")
else:
    if not on_loopback(c.JupyterHub.ip):
        sys.exit(f"classroom: the load test's set-up lets anyone in and keeps no one apart; it "
                 f"listens on 127.0.0.1 only (CLASSROOM_IP is {c.JupyterHub.ip!r}). For a "
                 f"class, use CLASSROOM_MODE=class")
    homes = data / "homes"
    homes.mkdir(parents=True, exist_ok=True)
    run_as = os.environ.get("CLASSROOM_RUN_AS", "")
    if os.geteuid() == 0:
        if not run_as or pwd.getpwnam(run_as).pw_uid == 0:
            sys.exit("classroom: the load test as root needs an account that is not root to "
                     "run the students' servers: CLASSROOM_RUN_AS=NAME (useradd --system NAME)")
        os.chown(homes, pwd.getpwnam(run_as).pw_uid, pwd.getpwnam(run_as).pw_gid)

    class LoadTestSpawner(SimpleLocalProcessSpawner):
        """Every student's server as one account (``run_as``), in a folder of ``homes``."""

        run_as = Unicode(run_as)

        def make_preexec_fn(self, name):
            become = set_user_setuid(self.run_as, chdir=False) if self.run_as else None
            start_in_home = super().make_preexec_fn(name)

            def preexec():
                if become:
                    become()
                start_in_home()
            return preexec

    c.JupyterHub.authenticator_class = "dummy"
    c.DummyAuthenticator.password = (os.environ.get("CLASSROOM_PASSWORD")
                                     or secrets.token_urlsafe(16))
    c.Authenticator.allow_all = True
    c.JupyterHub.spawner_class = LoadTestSpawner
    c.SimpleLocalProcessSpawner.home_dir_template = str(homes / "{username}")

# -- a service that creates students and starts their servers (the tests' hands) ------------
token = os.environ.get("CLASSROOM_ADMIN_TOKEN")
if token:
    c.JupyterHub.services = [{"name": "load-test", "api_token": token}]
    c.JupyterHub.load_roles = [{
        "name": "load-test", "services": ["load-test"],
        "scopes": ["admin:users", "admin:servers", "access:servers", "list:users",
                   "read:users"],
    }]
