"""The "other machines" a learner may have, as environment variables on this one.

Two CPUs round the same float32 computation differently in the last bits: OpenBLAS picks a
matrix kernel for the CPU it finds (FMA or not, 4, 8 or 16 floats at a time), and NumPy picks
SIMD loops for ``exp``, ``tanh`` and friends. Both can be told to use another choice:

* ``OPENBLAS_CORETYPE=Sandybridge`` (or ``Haswell``, ``SkylakeX``, ``Prescott``, ...) makes
  OpenBLAS use that CPU family's kernels (NumPy's wheels ship OpenBLAS built for all of them);
* ``NPY_DISABLE_CPU_FEATURES="X86_V3 ..."`` makes NumPy use its baseline loops instead.

A kernel family needs the instructions it was written for: SkylakeX's kernels use AVX-512
and crash a CPU without it, so such a variant is reported as unavailable, with the reason,
instead of run. The rounding probe (``rounding_probe.py``) is one more variant that any
machine can run: it nudges the last bits on purpose.

``tests/notebooks/test_every_machine.py`` runs the notebooks and doctests under each available
variant; ``make test-cpus`` runs only those; ``python tests/notebooks/cpu_variants.py run NAME
[PATH...]`` runs pytest under one of them (``python tests/notebooks/cpu_variants.py`` lists
them).
"""
from __future__ import annotations

import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent          # tests/notebooks, where rounding_probe.py is
ROOT = HERE.parents[1]

# OpenBLAS core type -> the CPU flags (as /proc/cpuinfo names them) its kernels need.
OPENBLAS_FAMILIES = {
    "Haswell": {"avx2", "fma"},
    "SkylakeX": {"avx512f"},
    "Sandybridge": {"avx"},
    "Prescott": {"sse3"},   # /proc/cpuinfo calls SSE3 "pni"; every x86-64 CPU has it
}


@dataclass(frozen=True)
class Variant:
    """One way to round differently: a name, the environment that selects it, and why it
    cannot run here (None when it can)."""

    name: str
    env: dict[str, str] = field(default_factory=dict)
    pytest_args: tuple[str, ...] = ()
    unavailable: str | None = None


def cpu_flags() -> set[str]:
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[1].split())
            return flags | ({"sse3"} if "pni" in flags else set())
    return set()


def openblas_architecture() -> str | None:
    """The OpenBLAS kernel family NumPy uses on this machine (None without OpenBLAS)."""
    from threadpoolctl import threadpool_info

    for library in threadpool_info():
        if library.get("internal_api") == "openblas":
            return library.get("architecture")
    return None


def numpy_dispatch_targets() -> list[str]:
    """The SIMD targets NumPy chose on this CPU beyond its baseline (what can be disabled)."""
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # NumPy 1.x
        from numpy.core import _multiarray_umath as umath
    return [name for name in umath.__cpu_dispatch__ if umath.__cpu_features__.get(name)]


def variants() -> list[Variant]:
    """Every variant, available or not, in a fixed order."""
    found: list[Variant] = []
    native = openblas_architecture()
    flags = cpu_flags()
    x86 = platform.machine().lower() in ("x86_64", "amd64")
    for family, needs in OPENBLAS_FAMILIES.items():
        reason = None
        if native is None or not x86:
            reason = "NumPy here does not use OpenBLAS on x86-64"
        elif family.lower() == native.lower():
            reason = f"this machine's own kernels ({native}): the main test run already used them"
        elif not needs <= flags:
            reason = (f"this CPU lacks {', '.join(sorted(needs - flags))}, which OpenBLAS's "
                      f"{family} kernels need (they would crash it)")
        found.append(Variant(f"openblas-{family.lower()}", {"OPENBLAS_CORETYPE": family},
                             unavailable=reason))
    targets = numpy_dispatch_targets()
    found.append(Variant("numpy-baseline-loops",
                         {"NPY_DISABLE_CPU_FEATURES": " ".join(targets)},
                         unavailable=None if targets else
                         "NumPy uses no SIMD loops beyond its baseline on this CPU"))
    found.append(Variant("rounding-probe", {"PYTHONPATH": _prepend(str(HERE), "PYTHONPATH")},
                         pytest_args=("-p", "rounding_probe")))
    return found


def environment(variant: Variant, workdir: Path) -> dict[str, str]:
    """The environment to run pytest under ``variant`` (``workdir`` holds what it writes)."""
    env = {**os.environ, **variant.env}
    if variant.name == "rounding-probe":
        env["IPYTHONDIR"] = str(_ipython_startup_for_probe(workdir / "ipython"))
    return env


def pytest_command(variant: Variant, paths: list[str]) -> list[str]:
    """The pytest command line that runs ``paths`` under ``variant``."""
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
            *variant.pytest_args, *paths]


def _ipython_startup_for_probe(ipython_dir: Path) -> Path:
    """An IPYTHONDIR whose startup file loads the rounding probe into every kernel."""
    startup = ipython_dir / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-rounding-probe.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "import rounding_probe\n"
        "rounding_probe.install()\n")
    return ipython_dir


def _prepend(path: str, variable: str) -> str:
    rest = os.environ.get(variable)
    return path if not rest else path + os.pathsep + rest


def main(args: list[str]) -> int:
    """``python tests/notebooks/cpu_variants.py`` lists the variants; ``... run NAME [PATH...]``
    runs pytest on PATHs (default: the doctests and notebooks) under variant NAME."""
    print(f"numpy {np.__version__}, OpenBLAS kernels here: {openblas_architecture()}")
    by_name = {v.name: v for v in variants()}
    if not args:
        for v in by_name.values():
            status = f"unavailable: {v.unavailable}" if v.unavailable else "runs here"
            print(f"  {v.name:22s} {status}")
        return 0
    if args[0] != "run" or len(args) < 2 or args[1] not in by_name:
        print(f"usage: python tests/notebooks/cpu_variants.py [run NAME [PATH...]]; NAME is one "
              f"of {', '.join(by_name)}")
        return 2
    variant = by_name[args[1]]
    if variant.unavailable:
        print(f"{variant.name} cannot run here: {variant.unavailable}")
        return 2
    with tempfile.TemporaryDirectory() as workdir:
        default = ["dltutor", "notebooks", "--ignore=notebooks/zh"]   # zh runs the same code
        command = pytest_command(variant, args[2:] or default)
        return subprocess.run(command, cwd=ROOT,
                              env=environment(variant, Path(workdir))).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
