"""A JupyterHub for a class using dltutor, on one machine: the configuration the load test runs.

Every student logs in, gets a JupyterLab of their own (a single-user server, started as a
process on this machine) and finds the chapters in their home folder, copied there at their
first login by the kit's ``copy_notebooks``, what ``dltutor notebooks`` runs (the kit is
installed once, in the shared environment the hub runs in). On a server with real accounts,
swap the two marked lines for the real authenticator and spawner (see classroom/README.md);
on The Littlest JupyterHub or Zero to JupyterHub, use their own files instead (also in the
README).

Read from the environment (the load test sets them):

* ``CLASSROOM_DIR``: a folder for the hub's state and the students' homes (default ./hub-data)
* ``CLASSROOM_PORT``: the hub's public port on 127.0.0.1 (default 8000)
* ``CLASSROOM_ADMIN_TOKEN``: a token for the load test's service (admin of users and servers)
* ``CLASSROOM_PASSWORD``: the shared password of the dummy login (default ``dltutor``)
"""
import contextlib
import io
import os
import shutil
import sys
from pathlib import Path

from dltutor.cli import copy_notebooks

c = get_config()  # noqa: F821  (JupyterHub provides it)

data = Path(os.environ.get("CLASSROOM_DIR", "hub-data")).resolve()
homes = data / "homes"
homes.mkdir(parents=True, exist_ok=True)

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(os.environ.get("CLASSROOM_PORT", "8000"))
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.cookie_secret_file = str(data / "jupyterhub_cookie_secret")
c.JupyterHub.db_url = f"sqlite:///{data / 'jupyterhub.sqlite'}"
c.ConfigurableHTTPProxy.pid_file = str(data / "jupyterhub-proxy.pid")
chp = os.environ.get("CLASSROOM_PROXY") or shutil.which("configurable-http-proxy")
if chp:
    c.ConfigurableHTTPProxy.command = [chp]

# -- who may log in: a shared password for a test class (swap for a real authenticator) ------
c.JupyterHub.authenticator_class = "dummy"                                       # <- swap
c.DummyAuthenticator.password = os.environ.get("CLASSROOM_PASSWORD", "dltutor")
c.Authenticator.allow_all = True

# -- where each student's JupyterLab runs: a process of this user, home folder per student --
c.JupyterHub.spawner_class = "simple"                                            # <- swap
c.SimpleLocalProcessSpawner.home_dir_template = str(homes / "{username}")
c.Spawner.default_url = "/lab/tree/00_welcome.ipynb"
c.Spawner.cmd = [sys.executable, "-m", "jupyterhub.singleuser"]
if os.geteuid() == 0:           # containers and CI run as root; Jupyter refuses unless told
    c.Spawner.args = ["--allow-root"]
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# what a student's server may use; the sizing table in benchmarks/RESULTS.md says how much
c.Spawner.mem_limit = os.environ.get("CLASSROOM_MEM_LIMIT") or None


def copy_chapters(spawner):
    """At each start, the chapters the student does not have yet (edits are never touched).

    The copy runs inside the hub, with the kit imported once when the hub starts: a few
    milliseconds per login. (A ``dltutor notebooks`` subprocess here would start Python and
    import the kit at every login, and the hub waits for a pre-spawn hook, so twenty students
    logging in at once queued behind twenty of those.)"""
    home = Path(spawner.home_dir_template.format(username=spawner.user.name))
    with contextlib.redirect_stdout(io.StringIO()):     # what it copied is for a person
        copy_notebooks(home)


c.Spawner.pre_spawn_hook = copy_chapters

# -- the load test's service: it creates students, starts their servers and opens kernels ---
token = os.environ.get("CLASSROOM_ADMIN_TOKEN")
if token:
    c.JupyterHub.services = [{"name": "load-test", "api_token": token}]
    c.JupyterHub.load_roles = [{
        "name": "load-test", "services": ["load-test"],
        "scopes": ["admin:users", "admin:servers", "access:servers", "list:users",
                   "read:users"],
    }]
