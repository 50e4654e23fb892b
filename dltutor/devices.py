"""Devices by PyTorch's names: the first line of most PyTorch tutorials runs as it is.

>>> import dltutor as dt
>>> device = dt.device("cuda" if dt.cuda.is_available() else "cpu")
>>> x = dt.zeros(2, 3, device="cpu").to(device)
>>> x.shape
(2, 3)

dltutor computes on the CPU (NumPy) or on one NVIDIA GPU (CuPy). ``"cuda"``, ``"cuda:0"`` and
the kit's own ``"gpu"`` all name that GPU; ``"cpu"`` the CPU. A ``dt.device`` can be made on
any machine, as in PyTorch: only moving a tensor to a GPU the machine lacks raises (with
:class:`~dltutor.backend.GPUUnavailableError`, which says what to install).

Wherever a device is taken (``Tensor.to``, ``Module.to``, the ``device=`` of ``dt.zeros``,
``dt.ones``, ``dt.full``, ``dt.rand``, ``dt.randn``, ``dt.normal`` and ``dt.tensor``, and
``dt.load(..., map_location=)``), a ``dt.device``, one of those names or a backend works, and
:func:`backend_for` is the one place that reads it.
"""
from __future__ import annotations

from typing import Any

from . import backend as B

#: Each name a learner may give, as (type, index) of the device it means (dt.load's
#: map_location takes the same names).
DEVICE_NAMES = {"cpu": ("cpu", None), "cpu:0": ("cpu", 0), "cuda": ("cuda", None),
                "cuda:0": ("cuda", 0), "gpu": ("cuda", None)}


class device:  # PyTorch's name: torch.device
    """A device: ``dt.device("cpu")``, ``dt.device("cuda")``, ``dt.device("cuda:0")`` or
    ``dt.device("cuda", 0)``. ``.type`` is ``"cpu"`` or ``"cuda"``, ``.index`` None or 0.

    >>> import dltutor as dt
    >>> dt.device("cuda:0")
    device(type='cuda', index=0)
    >>> dt.device("cpu") == "cpu", str(dt.device("cuda", 0))
    (True, 'cuda:0')
    >>> dt.device("cuda:1")
    Traceback (most recent call last):
    ...
    ValueError: device('cuda:1'): dltutor uses one GPU, 'cuda' (or 'cuda:0'); there is no 'cuda:1'
    """

    __slots__ = ("type", "index")
    type: str                   # (the slots' types, for mypy)
    index: int | None

    def __init__(self, type: Any, index: int | None = None):  # PyTorch's name
        if isinstance(type, device):
            type, index = type.type, type.index if index is None else index
        spec = type if index is None else f"{type}:{index}"
        if not isinstance(spec, str):
            raise TypeError(f"device: give a name such as 'cpu' or 'cuda', got a "
                            f"{spec.__class__.__name__}")
        if spec not in DEVICE_NAMES:
            raise ValueError(_unknown_device_message(spec))
        self.type, self.index = DEVICE_NAMES[spec]

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = DEVICE_NAMES.get(other)
            return other is not None and (self.type, self.index) == other
        if isinstance(other, device):
            return (self.type, self.index) == (other.type, other.index)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.type, self.index))


def _unknown_device_message(spec: str) -> str:
    if spec.startswith("cuda:"):
        return (f"device({spec!r}): dltutor uses one GPU, 'cuda' (or 'cuda:0'); there is no "
                f"{spec!r}")
    return (f"device({spec!r}): unknown device; dltutor has 'cpu' and one GPU, called 'cuda' "
            "(or 'cuda:0', or 'gpu')")


def backend_for(target: Any) -> B.Backend:
    """The backend that computes on ``target``: a ``dt.device``, a device name (``"cpu"``,
    ``"cuda"``, ``"cuda:0"``, ``"gpu"``), a backend name (``"numpy"``, ``"cupy"``) or a
    backend. Asking for the GPU on a machine without one raises GPUUnavailableError.

    >>> backend_for(device("cpu")).name, backend_for("cpu:0").name
    ('numpy', 'numpy')
    """
    if isinstance(target, B.Backend):
        return target
    if isinstance(target, str) and (target in DEVICE_NAMES or target.startswith(("cuda:", "cpu:"))):
        target = device(target)          # (an unknown index gets the device's own message)
    if isinstance(target, device):
        return B.get("cpu" if target.type == "cpu" else "gpu")
    if isinstance(target, str):
        return B.get(target)
    raise TypeError(f"expected a device ('cpu', 'cuda', dt.device(...)), got a "
                    f"{type(target).__name__}")
