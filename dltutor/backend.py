"""The one place that knows NumPy from CuPy.

Every array the engine computes with belongs to a *backend*: NumPy on the CPU (the default) or
CuPy on an NVIDIA GPU. Ops never import NumPy or CuPy themselves; they ask for the array module
of their input with :func:`get_array_module` and call ``xp.exp``, ``xp.zeros`` and so on.
That single rule is what lets the same notebook run on a laptop and on a GPU.

>>> import dltutor as dt
>>> dt.backend.current().name
'numpy'
>>> with dt.backend.use("numpy"):
...     dt.ones(2).device
'cpu'

CuPy is imported only when the GPU is asked for, so ``import dltutor`` stays light.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
from typing import Any, Callable, Sequence

import numpy as np

from .sums_of_squares import blas_sums_of_squares, dot_sums_of_squares

__all__ = [
    "Backend",
    "GPUUnavailableError",
    "register",
    "use",
    "current",
    "get",
    "gpu_available",
    "backend_of",
    "get_array_module",
    "to_numpy",
    "reads_are_free",
    "sums_of_squares",
    "run_fused",
    "scatter_add",
]

#: CuPy's own wheel for the machine's CUDA (the kit is not on PyPI; in a clone,
#: ``pip install -e ".[gpu]"`` installs the same).
INSTALL_HINT = "pip install cupy-cuda12x"


class GPUUnavailableError(RuntimeError):
    """Raised when the GPU backend is asked for but CuPy or a usable GPU is missing."""


class Backend:
    """An array library the engine can compute with.

    ``xp`` is the array module (``numpy`` or ``cupy``), ``array_type`` the class of its arrays,
    ``device`` the name tensors report (``"cpu"`` or ``"gpu"``). ``reads_are_free`` is False
    where reading a value on the host (``float(x)``) makes the host wait for the device: then
    a training step reads nothing and defers its checks (host_reads.py), with ``start_read``
    copying values to the host without waiting. ``fuse`` turns an elementwise function into
    one kernel (:meth:`fused`; CuPy's ``cupy.fuse``).

    >>> b = current()
    >>> b.name, b.device, b.xp.__name__
    ('numpy', 'cpu', 'numpy')
    """

    def __init__(self, name: str, device: str, xp: Any, array_type: type,
                 to_numpy: Callable[[Any], np.ndarray], from_numpy: Callable[[np.ndarray], Any],
                 erf: Callable[[Any], Any] | None = None,
                 sums_of_squares: Callable[[Sequence[Any]], list[float]] | None = None,
                 reads_are_free: bool = True,
                 start_read: Callable[[Any], Callable[[], np.ndarray]] | None = None,
                 fuse: Callable[[Callable[..., Any]], Callable[..., Any]] | None = None):
        self.name = name
        self.device = device
        self.xp = xp
        self.array_type = array_type
        self._to_numpy = to_numpy
        self._from_numpy = from_numpy
        self._erf = erf
        self._sums_of_squares = sums_of_squares
        self.reads_are_free = reads_are_free
        self._start_read = start_read
        self._fuse = fuse
        self._fused: dict[Callable[..., Any], Callable[..., Any]] = {}

    def erf(self, array: Any) -> Any:
        """The error function elementwise (NumPy has none: SciPy's or CuPy's is used)."""
        if self._erf is None:
            raise ValueError(f"the {self.name} backend has no erf function (needed by gelu); "
                             "give it one with Backend(..., erf=...)")
        return self._erf(array)

    def sums_of_squares(self, arrays: Sequence[Any]) -> list[float]:
        """:func:`sums_of_squares` of this backend's arrays: one dot product per array, or the
        faster way the backend was given."""
        if self._sums_of_squares is not None:
            return self._sums_of_squares(arrays)
        return dot_sums_of_squares(arrays, self.ignore_float_errors())

    def start_read(self, array: Any) -> Callable[[], np.ndarray]:
        """Start copying ``array`` to the host; the function returned gives the NumPy copy,
        waiting for it if it has not arrived (where reads are free, it is made at once).

        >>> NUMPY.start_read(np.array([1.0, 2.0]))()
        array([1., 2.])
        """
        if self._start_read is not None:
            return self._start_read(array)
        values = np.array(self.to_numpy(array))
        return lambda: values

    def fused(self, kernel: Callable[..., Any]) -> Callable[..., Any]:
        """``kernel(xp, *args)`` as a function of ``*args`` that runs it on this backend.

        A kernel is an elementwise formula: arrays of one shape (or 0-d) and numbers in, only
        arithmetic, ``xp``'s elementwise functions (``sqrt``, ``maximum``, ``where``) and
        writes ``a[...] = value`` into its array arguments; an argument may be None, and
        ``if x is None`` then chooses the formula. CuPy compiles it into ONE GPU kernel
        (``cupy.fuse``), where each line run separately would launch a kernel and write a
        temporary array; NumPy runs it as written. Made once per kernel.

        >>> def axpy(xp, y, a, x):
        ...     y[...] = a * x + y
        >>> y = np.ones(3)
        >>> NUMPY.fused(axpy)(y, 2.0, np.arange(3.0)); y
        array([1., 3., 5.])
        """
        runner = self._fused.get(kernel)
        if runner is None:
            runner = self._fused[kernel] = (self._fuse(kernel) if self._fuse is not None else
                                            functools.partial(kernel, self.xp))
        return runner

    def asarray(self, data: Any, dtype: Any = None) -> Any:
        """Make an array of this backend from a list, scalar or array of any backend."""
        owner = backend_of(data)
        if owner is not None and owner is not self:
            data = owner.to_numpy(data)
        if isinstance(data, np.ndarray) and self.array_type is not np.ndarray:
            data = self._from_numpy(data)
        return self.xp.asarray(data, dtype=dtype)

    def ignore_float_errors(self) -> Any:
        """A context in which log(0), 1/0 and overflow give inf/nan silently, as in PyTorch (not
        NumPy's RuntimeWarning; ``dt.detect_anomaly()`` is the kit's way to find them)."""
        if issubclass(self.array_type, np.ndarray):
            return np.errstate(all="ignore")
        return contextlib.nullcontext()

    def to_numpy(self, array: Any) -> np.ndarray:
        """Copy (or view, on the CPU) an array of this backend as a NumPy array."""
        return self._to_numpy(array)

    def __repr__(self) -> str:
        return f"Backend({self.name!r}, device={self.device!r})"

    def __eq__(self, other: object) -> bool:
        # ``dt.backend.current() == "numpy"`` reads naturally in a notebook.
        if isinstance(other, str):
            return other in (self.name, self.device)
        return self is other

    __hash__ = object.__hash__


def _scipy_erf(array: np.ndarray) -> np.ndarray:
    from scipy.special import erf  # SciPy comes with scikit-learn; imported only when needed
    return erf(array)


NUMPY = Backend("numpy", "cpu", np, np.ndarray, to_numpy=np.asarray, from_numpy=lambda a: a,
                erf=_scipy_erf, sums_of_squares=blas_sums_of_squares)

_registry: dict[str, Backend] = {"numpy": NUMPY}
#: The backend of every registered array class (``np.ndarray`` -> NumPy). It is the live
#: registry: read it (Function checks every op's output against it), change it only through
#: :func:`register` and :func:`unregister`.
BACKEND_BY_ARRAY_TYPE: dict[type, Backend] = {np.ndarray: NUMPY}
_current: Backend = NUMPY

# Names a learner may use for a device, mapped to the backend that serves it.
_DEVICE_ALIASES = {"cpu": "numpy", "gpu": "cupy", "cuda": "cupy"}


def register(backend: Backend) -> Backend:
    """Make a backend known by its name (the tests register a marker backend this way).

    >>> b = register(Backend("numpy2", "cpu2", np, np.ndarray, np.asarray, lambda a: a))
    >>> get("numpy2") is b
    True
    >>> unregister("numpy2")
    """
    _registry[backend.name] = backend
    if backend.array_type not in BACKEND_BY_ARRAY_TYPE:
        BACKEND_BY_ARRAY_TYPE[backend.array_type] = backend
    return backend


def unregister(name: str) -> None:
    """Forget a backend registered with :func:`register` (NumPy stays)."""
    global _current
    if name == "numpy":
        raise ValueError("the NumPy backend cannot be unregistered")
    backend = _registry.pop(name)
    if BACKEND_BY_ARRAY_TYPE.get(backend.array_type) is backend:
        del BACKEND_BY_ARRAY_TYPE[backend.array_type]
    if _current is backend:
        _current = NUMPY


def _load_cupy() -> Backend:
    """Import CuPy and check for a GPU, or explain exactly what is missing."""
    try:
        cupy = importlib.import_module("cupy")
    except ImportError as exc:
        raise GPUUnavailableError(
            f"The GPU backend needs CuPy, which is not installed ({exc}). Install it with: "
            f"{INSTALL_HINT} (CuPy for CUDA 12; cupy-cuda13x for CUDA 13), or keep using the "
            "CPU with dt.backend.use('numpy').") from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CUDA driver missing or broken
        raise GPUUnavailableError(
            f"CuPy is installed but no usable GPU was found ({type(exc).__name__}: {exc}). "
            "Check `nvidia-smi`, or keep using the CPU with dt.backend.use('numpy').") from None
    if count < 1:
        raise GPUUnavailableError("CuPy is installed but the machine has no GPU. Keep using "
                                  "the CPU with dt.backend.use('numpy').")
    def cupy_erf(array: Any) -> Any:
        return importlib.import_module("cupyx.scipy.special").erf(array)

    def cupy_start_read(array: Any) -> Callable[[], np.ndarray]:
        # Into page-locked memory, queued behind the work already sent: the host goes on.
        host = importlib.import_module("cupyx").empty_pinned(array.shape, array.dtype)
        cupy.asnumpy(array, out=host, blocking=False)
        arrived = cupy.cuda.get_current_stream().record()

        def values() -> np.ndarray:
            arrived.synchronize()
            return host
        return values

    def cupy_fuse(kernel: Callable[..., Any]) -> Callable[..., Any]:
        # cupy.fuse traces the formula with CuPy's array module and compiles it; it names the
        # kernel (a lambda's name is no C identifier).
        return cupy.fuse(kernel_name=kernel.__name__)(lambda *args: kernel(cupy, *args))

    return register(Backend("cupy", "gpu", cupy, cupy.ndarray, to_numpy=cupy.asnumpy,
                            from_numpy=cupy.asarray, erf=cupy_erf, reads_are_free=False,
                            start_read=cupy_start_read, fuse=cupy_fuse))


def get(name: str | Backend) -> Backend:
    """The backend called ``name`` ("numpy", "cupy") or serving a device ("cpu", "gpu", "cuda").

    >>> get("cpu").name
    'numpy'
    """
    if isinstance(name, Backend):
        return name
    key = _DEVICE_ALIASES.get(name, name)
    if key in _registry:
        return _registry[key]
    for backend in _registry.values():
        if backend.device == name:
            return backend
    if key == "cupy":
        return _load_cupy()
    known = sorted(set(_registry) | set(_DEVICE_ALIASES))
    raise ValueError(f"unknown backend or device {name!r}; choose one of {known}")


class _Restore:
    """What :func:`use` returns: the switch is already made; ``with`` undoes it on exit."""

    def __init__(self, previous: Backend):
        self.previous = previous

    def __enter__(self) -> Backend:
        return _current

    def __exit__(self, *exc_info: object) -> None:
        global _current
        _current = self.previous


def use(name: str | Backend) -> _Restore:
    """Switch the backend that new tensors are made on. Works as a call or a ``with`` block.

    >>> use("numpy")            # doctest: +ELLIPSIS
    <...>
    >>> with use("cpu"):
    ...     current().name
    'numpy'
    """
    global _current
    backend = get(name)
    previous, _current = _current, backend
    return _Restore(previous)


def current() -> Backend:
    """The backend new tensors are made on.

    >>> current()
    Backend('numpy', device='cpu')
    """
    return _current


def gpu_available() -> bool:
    """True when CuPy imports and sees at least one GPU. Never raises.

    >>> isinstance(gpu_available(), bool)
    True
    """
    try:
        get("cupy")
    except GPUUnavailableError:
        return False
    return True


def backend_of(array: Any) -> Backend | None:
    """The backend that owns ``array``, or None for lists, scalars and foreign objects.

    >>> backend_of(np.zeros(2)).name
    'numpy'
    """
    backend = BACKEND_BY_ARRAY_TYPE.get(type(array))
    if backend is not None:
        return backend
    for array_type, candidate in list(BACKEND_BY_ARRAY_TYPE.items()):
        if isinstance(array, array_type) and array_type is not np.ndarray:
            return candidate
    if isinstance(array, np.ndarray):
        return NUMPY
    return None


def reads_are_free(array: Any) -> bool:
    """Whether reading ``array``'s values on the host costs nothing more than reading them
    (False on a GPU, where the host waits for the device: ``Backend.reads_are_free``).

    >>> reads_are_free(np.zeros(2))
    True
    """
    # (the registry first: one lookup for the usual array, asked once or twice a step)
    backend = BACKEND_BY_ARRAY_TYPE.get(type(array)) or backend_of(array) or NUMPY
    return backend.reads_are_free


def get_array_module(array: Any) -> Any:
    """The array module (``numpy`` or ``cupy``) to compute on ``array`` with.

    >>> get_array_module(np.ones(3)).__name__
    'numpy'
    """
    backend = BACKEND_BY_ARRAY_TYPE.get(type(array))
    if backend is None:
        backend = backend_of(array) or NUMPY
    return backend.xp


def to_numpy(array: Any) -> np.ndarray:
    """A NumPy copy of an array of any backend (a view for NumPy arrays).

    >>> to_numpy(np.arange(3))
    array([0, 1, 2])
    """
    backend = backend_of(array)
    if backend is None:
        return np.asarray(array)
    return backend.to_numpy(array)


def sums_of_squares(arrays: Sequence[Any]) -> list[float]:
    """The squared L2 norm of each array (all of one backend) as Python floats, added in their
    dtype: too large is ``inf`` (as in PyTorch), NaN stays NaN, empty is 0.0, with no warning.

    >>> sums_of_squares([np.array([3.0, 4.0]), np.array([np.inf]), np.zeros(0)])
    [25.0, inf, 0.0]
    """
    if not arrays:
        return []
    return (backend_of(arrays[0]) or NUMPY).sums_of_squares(arrays)


def run_fused(kernel: Callable[..., Any], *args: Any) -> Any:
    """Run the elementwise ``kernel(xp, *args)`` as one kernel on the backend of ``args[0]``
    (an array): see :meth:`Backend.fused`.

    >>> def scale_into(xp, out, x, factor):
    ...     out[...] = x * factor
    >>> out = np.zeros(2)
    >>> run_fused(scale_into, out, np.array([1.0, 2.0]), 3.0); out
    array([3., 6.])
    """
    return (backend_of(args[0]) or NUMPY).fused(kernel)(*args)


def scatter_add(target: Any, index: Any, values: Any) -> None:
    """``target[index] += values`` in place, where repeated indices add up (not overwrite).

    NumPy spells it ``np.add.at``; older CuPy ``cupyx.scatter_add``.

    >>> t = np.zeros(3)
    >>> scatter_add(t, np.array([0, 0, 2]), np.ones(3))
    >>> t
    array([2., 0., 1.])
    """
    add_at = getattr(get_array_module(target).add, "at", None)
    if add_at is not None:
        add_at(target, index, values)
    else:  # pragma: no cover - CuPy before ufunc.at
        importlib.import_module("cupyx").scatter_add(target, index, values)


def ignore_float_errors(array: Any) -> Any:
    """:meth:`Backend.ignore_float_errors` of the backend that owns ``array``.

    >>> with ignore_float_errors(np.zeros(1)):
    ...     np.log(np.zeros(1))
    array([-inf])
    """
    return (backend_of(array) or NUMPY).ignore_float_errors()


def float_errors_ignored(func: Callable) -> Callable:
    """``func`` run as inside :func:`ignore_float_errors`, for a function that runs every step
    (backward): NumPy's errstate is cheaper as a decorator than as a context. (CuPy never warns.)

    >>> float_errors_ignored(np.log)(np.zeros(1))
    array([-inf])
    """
    return np.errstate(all="ignore")(func)
