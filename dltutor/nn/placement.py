"""Where a module's numbers live: ``to(device)``, ``to(dtype)``, ``double()``, ``float()``.

Every parameter and buffer moves or is cast in place: the Parameter objects stay the same, so
an optimizer made before the move, and a parameter tied between two layers, keep working.
:class:`~dltutor.nn.Module` inherits these methods from :class:`ModulePlacement`.

>>> from dltutor import nn
>>> layer = nn.Linear(2, 2); weight = layer.weight
>>> layer.double().weight is weight, weight.dtype
(True, dtype('float64'))
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator, TypeVar

import numpy as np

from .. import devices
from ..autograd import Tensor
from ..autograd.placement import to_targets

#: The module a method was called on, which it returns (``net = net.to("cuda")`` keeps its type).
SomeModule = TypeVar("SomeModule", bound="ModulePlacement")


class ModulePlacement:
    """Module's ``to``, ``double`` and ``float`` (a mixin: :class:`~dltutor.nn.Module`
    inherits it, nothing else does)."""

    if TYPE_CHECKING:                    # what the methods below use of Module
        def parameters(self, recurse: bool = True) -> Iterator[Tensor]: ...

        def buffers(self, recurse: bool = True) -> Iterator[Tensor]: ...

    def to(self: SomeModule, *targets: Any, device: Any = None, dtype: Any = None) -> SomeModule:
        """Move every parameter and buffer to a device, cast the floating-point ones to a
        dtype, or both, in place, as PyTorch's ``module.to(device)``, ``module.to(dt.float64)``,
        ``module.to(device, dtype)``. Plain tensor attributes (not registered) stay behind.

        The Parameter objects stay the same, so an optimizer made before the move still sees
        them. Returns the module.

        >>> from dltutor import nn
        >>> import dltutor as dt
        >>> nn.Linear(2, 2).to("cpu").weight.device
        'cpu'
        >>> nn.Linear(2, 2).to(dt.float64).weight.dtype
        dtype('float64')
        """
        device, dtype = to_targets(targets, device, dtype)
        if dtype is not None and dtype.kind != "f":       # checked before anything moves
            raise TypeError(f"{type(self).__name__}.to: a module casts its floating-point "
                            f"parameters and buffers, so the dtype must be a float, got {dtype}")
        if device is not None:
            target = devices.backend_for(device)
            for tensor in list(self.parameters()) + list(self.buffers()):
                tensor.data = target.asarray(tensor.data)
                if tensor.grad is not None:
                    tensor.grad.data = target.asarray(tensor.grad.data)
        if dtype is not None:
            self._cast_floats(dtype)
        return self

    def double(self: SomeModule) -> SomeModule:
        """Cast every floating-point parameter and buffer to float64, in place.

        The Parameter objects stay the same (optimizers and ties keep working). Computing in
        float64 makes results that float32 rounding would blur reproducible to many digits.

        >>> from dltutor import nn
        >>> nn.Linear(2, 2).double().weight.dtype
        dtype('float64')
        """
        return self._cast_floats(np.float64)

    def float(self: SomeModule) -> SomeModule:
        """Cast every floating-point parameter and buffer to float32, in place (the default).

        >>> from dltutor import nn
        >>> nn.Linear(2, 2).double().float().weight.dtype
        dtype('float32')
        """
        return self._cast_floats(np.float32)

    def _cast_floats(self: SomeModule, dtype: Any) -> SomeModule:
        for tensor in list(self.parameters()) + list(self.buffers()):
            if tensor.data.dtype.kind == "f":
                tensor.data = tensor.data.astype(dtype)
                if tensor.grad is not None:
                    tensor.grad.data = tensor.grad.data.astype(dtype)
        return self
