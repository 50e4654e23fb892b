"""The kit's part in a class hub: each student's chapters, copied as that student.

``classroom/jupyterhub_config.py`` sets :func:`give_chapters` as JupyterHub's pre-spawn hook:
before a student's server starts, the chapters the student does not have yet are copied into
their home, and the home is made private to them (others' access taken away). The copy runs
as the student's own account (a short process: ``dltutor/notebook_copy.py``), so the hub,
often root, never writes into a folder a student controls, and every file belongs to them.

Which account and which home depend on the spawner; :func:`student_account` asks each one the
way it decides them itself:

=========================== ====================================== ==========================
spawner                     account                                home
=========================== ====================================== ==========================
SimpleLocalProcessSpawner   the one running servers (``run_as``,   ``home_dir_template``
(the load test only)        else the hub's own)
LocalProcessSpawner         the student's name                     the account's home
SystemdSpawner              ``username_template``                  ``user_workingdir``, else
                                                                   the account's home
DockerSpawner, KubeSpawner  none here: the container's own start   (inside the container)
                            copies (``post_start_cmd``, a
                            ``postStart`` hook)
=========================== ====================================== ==========================

>>> class User: name = "ana"; id = 7
>>> class SystemdSpawner:
...     user, username_template, user_workingdir = User(), "jupyter-{USERNAME}", "/srv/{USERID}"
...     dynamic_users = False
>>> student_account(SystemdSpawner())
Account(name='jupyter-ana', home=PosixPath('/srv/7'))
"""
from __future__ import annotations

import asyncio
import os
import pwd
import sys
from pathlib import Path
from typing import Any, NamedTuple

from .. import notebook_copy

#: How long a copy may take before the student's server starts without it (seconds).
COPY_TIMEOUT = 60


class Account(NamedTuple):
    """Who a student's server runs as (``name``; None: the hub's own account) and their home
    (None: not on this machine, a container copies for itself)."""

    name: str | None
    home: Path | None


def spawner_kinds(spawner: Any) -> list[str]:
    """The names of the spawner's classes, most specific first (TLJH's spawner is a
    SystemdSpawner; a school's own may subclass any of them).

    >>> class LocalProcessSpawner: pass
    >>> class SchoolSpawner(LocalProcessSpawner): pass
    >>> spawner_kinds(SchoolSpawner())[:2]
    ['SchoolSpawner', 'LocalProcessSpawner']
    """
    return [kind.__name__ for kind in type(spawner).__mro__]


def _home_of(account: str) -> Path:
    return Path(pwd.getpwnam(account).pw_dir)


def student_account(spawner: Any) -> Account:
    """The account a student's server runs as and the home it starts in (see the table in the
    module's docstring). A KeyError names an account the system does not have."""
    kinds, user = spawner_kinds(spawner), spawner.user
    if "SimpleLocalProcessSpawner" in kinds:
        return Account(getattr(spawner, "run_as", None) or None,
                       Path(spawner.home_dir_template.format(username=user.name)))
    if "SystemdSpawner" in kinds:
        if spawner.dynamic_users:                     # made by systemd as the server starts
            return Account(None, None)
        name = spawner.username_template.format(USERNAME=user.name, USERID=user.id)
        workdir = spawner.user_workingdir
        return Account(name, Path(workdir.format(USERNAME=user.name, USERID=user.id))
                       if workdir else _home_of(name))
    if "LocalProcessSpawner" in kinds:
        return Account(user.name, _home_of(user.name))
    return Account(None, None)


def copy_command(home: Path) -> list[str]:
    """The command that copies the chapters into ``home`` and makes it private: a bare,
    isolated Python (no site folder of the student's, no current folder on its path).

    >>> copy_command(Path("/home/ana"))[1:2], copy_command(Path("/home/ana"))[-2:]
    (['-I'], ['/home/ana', '--private'])
    """
    return [sys.executable, "-I", notebook_copy.__file__, str(home), "--private"]


def as_account(name: str | None) -> dict[str, Any]:
    """What ``subprocess`` needs to run a command as account ``name`` (the hub's own account
    when None): its user, its group, its groups and nothing of the hub's, and its home as the
    working folder. Refuses root: no student's work runs with the machine's keys."""
    if name is None:
        if os.geteuid() == 0:
            raise PermissionError("a student's server would run as root: give the load test an "
                                  "account of its own (CLASSROOM_RUN_AS), or use a spawner "
                                  "that runs each student as their own account")
        return {}
    entry = pwd.getpwnam(name)
    if entry.pw_uid == 0:
        raise PermissionError(f"refused: {name!r} is root; a student's server never runs as "
                              f"root (block it with c.Authenticator.blocked_users)")
    if os.geteuid() != 0 and entry.pw_uid != os.geteuid():
        raise PermissionError(f"the hub runs as {pwd.getpwuid(os.geteuid()).pw_name}, not as "
                              f"root, and cannot act as the student {name!r}")
    if entry.pw_uid == os.geteuid():
        return {}
    return {"user": entry.pw_uid, "group": entry.pw_gid,
            "extra_groups": os.getgrouplist(name, entry.pw_gid)}


async def give_chapters(spawner: Any) -> None:
    """JupyterHub's pre-spawn hook: copy the chapters into the student's home, as the student.

    A root account is refused (the spawn fails with the reason); a copy that fails or takes
    too long is logged and the server starts anyway (the student can run ``dltutor notebooks``).
    """
    account = student_account(spawner)
    if account.home is None:
        spawner.log.info("dltutor: %s's chapters are copied by their container's own start",
                         spawner.user.name)
        return
    switch = as_account(account.name)                 # raises for root: the spawn stops here
    process = await asyncio.create_subprocess_exec(
        *copy_command(account.home), cwd="/", stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT, **switch)
    try:
        said, _ = await asyncio.wait_for(process.communicate(), COPY_TIMEOUT)
    except asyncio.TimeoutError:
        process.kill()
        spawner.log.warning("dltutor: copying %s's chapters took over %d s; stopped",
                            spawner.user.name, COPY_TIMEOUT)
        return
    log = spawner.log.info if process.returncode == 0 else spawner.log.warning
    log("dltutor: %s: %s", spawner.user.name, said.decode(errors="replace").strip())
