"""Parameter: a tensor a module learns, with Paddle's per-parameter settings as attributes;
and UninitializedParameter, the parameter of a lazy layer before its first forward pass.

>>> import dltutor as dt
>>> from dltutor import nn
>>> p = nn.Parameter(dt.zeros(2, 3), lr_mult=2.0)
>>> p.requires_grad, p.lr_mult, p.need_clip, p.regularizer
(True, 2.0, True, None)
"""
from __future__ import annotations

from numbers import Real
from typing import Any, TypeGuard, cast

import numpy as np

from .. import backend as B
from .. import checks
from ..autograd import Tensor, float32, no_grad
from ..autograd.dtypes import cast_problem, to_array
from ..autograd.arrays import Array
from ..autograd.function import init_tensor


class Parameter(Tensor):
    """A tensor that a :class:`~dltutor.nn.Module` registers as learnable.

    Three attributes come from Paddle's ``ParamAttr`` and are honoured by every optimizer:

    * ``lr_mult``: this parameter's learning rate is the group's lr times ``lr_mult``
      (0 means it never moves).
    * ``regularizer``: an ``optim.L1Decay``/``optim.L2Decay`` that replaces the optimizer's
      ``weight_decay`` for this parameter.
    * ``need_clip``: False keeps this parameter out of gradient clipping.

    Made from a Tensor, a Parameter shares its memory; from a list or array, it copies.

    >>> import numpy as np
    >>> p = Parameter(np.ones((2, 2)), need_clip=False)
    >>> p
    Parameter(shape=(2, 2), dtype=float64, need_clip=False)
    tensor([[1., 1.],
            [1., 1.]], dtype=float64, requires_grad=True)
    """

    __slots__ = ("_lr_mult", "_regularizer", "_need_clip")

    def __init__(self, data: Any, requires_grad: bool = True, *, lr_mult: float = 1.0,
                 regularizer: Any = None, need_clip: bool = True):
        array = data.data if isinstance(data, Tensor) else to_array(data)
        if array.dtype.kind not in "fc":
            raise TypeError(f"a Parameter must hold floating-point values, got {array.dtype}; "
                            "make it with dtype=dt.float32")
        # All three checked before anything is set: a refused setting leaves no half-made object.
        settings = (check_lr_mult(lr_mult), check_regularizer(regularizer),
                    checks.flag("Parameter", "need_clip", need_clip))
        init_tensor(self, array, bool(requires_grad))  # shares a Tensor's memory: no copy
        self._lr_mult, self._regularizer, self._need_clip = settings

    # The three settings are properties: ``p.lr_mult = nan`` after construction meets the
    # constructor's own check (an optimizer reads them on every step and trusts them).
    @property
    def lr_mult(self) -> float:
        """This parameter's learning rate is the group's lr times this (0: it never moves).

        >>> p = Parameter([1.0])
        >>> p.lr_mult = float("nan")
        Traceback (most recent call last):
        ...
        ValueError: Parameter of shape (1,): lr_mult must be a number >= 0 and finite (0 freezes
        the parameter), got nan
        """
        return self._lr_mult

    @lr_mult.setter
    def lr_mult(self, value: Any) -> None:
        self._lr_mult = check_lr_mult(value, self._owner())

    @property
    def regularizer(self) -> Any:
        """An ``optim.L1Decay``/``optim.L2Decay`` that replaces the optimizer's weight decay for
        this parameter, or None.

        >>> Parameter([1.0]).regularizer = 0.01
        Traceback (most recent call last):
        ...
        TypeError: Parameter of shape (1,): regularizer must be an optim.L1Decay or
        optim.L2Decay (or None), got float; for a plain number use the optimizer's weight_decay
        """
        return self._regularizer

    @regularizer.setter
    def regularizer(self, value: Any) -> None:
        self._regularizer = check_regularizer(value, self._owner())

    @property
    def need_clip(self) -> bool:
        """False keeps this parameter out of gradient clipping; True or False only.

        >>> Parameter([1.0]).need_clip = "no"
        Traceback (most recent call last):
        ...
        TypeError: Parameter of shape (1,): need_clip must be True or False, got 'no'
        """
        return self._need_clip

    @need_clip.setter
    def need_clip(self, value: Any) -> None:
        self._need_clip = checks.flag(self._owner(), "need_clip", value)

    def _owner(self) -> str:
        # A parameter does not know its name (its module does): its shape tells it apart.
        try:
            return f"Parameter of shape {tuple(self.shape)}"
        except ValueError:                 # a lazy layer's parameter has no shape yet
            return "Parameter"

    def set_value(self, value: Any) -> "Parameter":
        """Copy ``value`` into this parameter in place (same object, so ties and optimizers
        keep seeing it). The shape must match; the dtype is converted, and a value the
        parameter's dtype cannot hold (1e300 in float32) is refused, as a load refuses it.

        >>> p = Parameter([1.0, 2.0])
        >>> p.set_value([5.0, 6.0]).tolist()
        [5.0, 6.0]
        """
        source = value.data if isinstance(value, Tensor) else value
        with np.errstate(over="ignore", invalid="ignore"):    # the check below says it
            new = to_array(source, self.dtype, caller="set_value")   # refuses strings, ...
        # Checked on the value as given (a list is read as NumPy reads it, in float64): 1e300
        # must not become inf in a float32 parameter without a word, as a load may not either.
        problem = cast_problem(source if hasattr(source, "dtype") else np.asarray(source),
                               self.dtype)
        if problem:
            raise ValueError(f"set_value: the new value {problem}; nothing was changed. Fix the "
                             f"values first (np.clip, np.nan_to_num, np.round) or give the "
                             f"parameter a wider dtype (.double())")
        if tuple(new.shape) != tuple(self.shape):
            raise ValueError(f"set_value: the parameter has shape {tuple(self.shape)} but the new "
                             f"value has shape {tuple(new.shape)}; reshape the value first")
        with no_grad():
            self.data[...] = new
        return self

    def __repr__(self) -> str:
        extras = [f"shape={tuple(self.shape)}", f"dtype={self.dtype}"]
        if self.lr_mult != 1.0:
            extras.append(f"lr_mult={self.lr_mult:g}")
        if self.regularizer is not None:
            extras.append(f"regularizer={self.regularizer!r}")
        if not self.need_clip:
            extras.append("need_clip=False")
        if not self.requires_grad:
            extras.append("requires_grad=False")
        return f"Parameter({', '.join(extras)})\n{Tensor.__repr__(self)}"


class UninitializedParameterError(RuntimeError, ValueError):
    """A lazy layer's parameter was used before the layer's first forward pass created it.
    A RuntimeError (what PyTorch raises for its shape) and a ValueError (what it raises when an
    op meets one)."""


class _NoValuesYet:
    """What an :class:`UninitializedParameter` holds instead of an array: the sizes known so
    far (``template``) and whose parameter it is; every other use of it (``.shape``,
    ``.dtype``, arithmetic, indexing) raises the error that says what to do."""

    __slots__ = ("owner", "template")

    def __init__(self, owner: str, template: tuple[int | None, ...]):
        self.owner, self.template = owner, template

    def _refuse(self, what: str) -> UninitializedParameterError:
        return UninitializedParameterError(
            f"{self.owner} does not exist yet (asked for: {what}). A lazy layer creates its "
            "parameters at its first forward pass, when it sees the size of the input: run "
            "the model once on a batch, e.g. net(X), before you read, initialize, save or "
            "optimize them.")

    def __getattr__(self, name: str) -> Any:
        raise self._refuse(_ASKED.get(name, "its values"))

    def __getitem__(self, index: Any) -> Any:
        raise self._refuse("its values")

    def __setitem__(self, index: Any, value: Any) -> None:
        raise self._refuse("writing values")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._refuse("its values as an array")

    def __len__(self) -> int:
        raise self._refuse("its length")


#: What a learner was doing when an array attribute was read (for the error message).
_ASKED = {"shape": "its shape", "size": "its number of elements", "dtype": "its dtype",
          "ndim": "its number of dimensions"}


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet: ``template`` gives the known sizes and
    ``None`` for the ones the first input will fill in (the ``in_features`` of a weight).

    ``materialize(shape)`` gives it values (zeros, for the layer to initialize) and turns it
    into a plain :class:`~dltutor.nn.Parameter`, keeping the same object.

    >>> p = UninitializedParameter((3, None), "a test weight")
    >>> p.requires_grad, p.fits((3, 5)), p.fits((4, 5))
    (True, True, False)
    >>> p.materialize((3, 5)).shape, type(p).__name__
    ((3, 5), 'Parameter')
    """

    __slots__ = ()

    def __init__(self, template: tuple[int | None, ...], owner: str):
        # No slots of its own, so that materialize() can turn it into a Parameter in place.
        # (cast: the stand-in sits where the array will be, and refuses every use of one)
        init_tensor(self, cast(Array, _NoValuesYet(owner, tuple(template))), True)
        self._lr_mult, self._regularizer, self._need_clip = 1.0, None, True

    @property
    def _no_values(self) -> _NoValuesYet:
        """The stand-in ``.data`` holds until :meth:`materialize` (the cast in __init__)."""
        return cast(_NoValuesYet, self.data)

    @property
    def template(self) -> tuple[int | None, ...]:
        """The sizes known so far; None where the first input decides."""
        return self._no_values.template

    @property
    def shape(self) -> tuple[int, ...]:
        """Not known yet: raises, as in PyTorch."""
        raise self._no_values._refuse("its shape")

    def fits(self, shape: tuple[int, ...]) -> bool:
        """Whether ``shape`` agrees with every size already known."""
        template = self.template
        return len(shape) == len(template) and all(
            known is None or known == size for known, size in zip(template, shape))

    def materialize(self, shape: tuple[int, ...], dtype: Any = float32) -> Parameter:
        """Give the parameter zeros of ``shape`` and make it a plain Parameter (same object)."""
        if not self.fits(tuple(shape)):
            raise ValueError(f"{self._no_values.owner}: shape {tuple(shape)} does not fit the "
                             f"known sizes {_show(self.template)}")
        self.data = B.current().xp.zeros(tuple(shape), dtype=dtype)
        self.__class__ = Parameter  # type: ignore[assignment]  # same object, hooks and names kept
        return self

    def __repr__(self) -> str:
        return f"<UninitializedParameter: shape {_show(self.template)} until the first forward>"


def _show(template: tuple[int | None, ...]) -> str:
    return "(" + ", ".join("?" if n is None else str(n) for n in template) + \
        ("," if len(template) == 1 else "") + ")"


def is_uninitialized(param: Any) -> TypeGuard[UninitializedParameter]:
    """True for a lazy layer's parameter that its first forward has not created yet.

    >>> from dltutor import nn
    >>> is_uninitialized(nn.LazyLinear(2).weight), is_uninitialized(nn.Linear(1, 2).weight)
    (True, False)
    """
    return isinstance(param, UninitializedParameter)


def check_lr_mult(value: Any, owner: str = "Parameter", name: str = "lr_mult") -> float:
    """``value`` as a float if it is a finite number >= 0 (a learning-rate multiplier; 0
    freezes the parameter), else a ValueError naming ``owner`` and ``name``. Shared by
    Parameter and ``nn.ParamAttr`` (whose ``learning_rate`` is this number).

    >>> check_lr_mult(2)
    2.0
    >>> check_lr_mult(-1.0, "ParamAttr", "learning_rate")
    Traceback (most recent call last):
    ...
    ValueError: ParamAttr: learning_rate must be a number >= 0 and finite (0 freezes the
    parameter), got -1.0
    """
    # An infinite multiplier would turn the first step into inf/NaN weights.
    number: Any = value                  # (mypy's numbers.Real has no <)
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 <= number < float("inf"):
        raise ValueError(f"{owner}: {name} must be a number >= 0 and finite (0 freezes the "
                         f"parameter), got {value!r}")
    return float(value)


def check_regularizer(value: Any, owner: str = "Parameter") -> Any:
    """``value`` if it is None or a regularizer (an ``optim.L1Decay``/``optim.L2Decay``: an
    object with an ``add_to`` method) whose ``coeff`` is a finite number >= 0, else a TypeError
    (ValueError for the coeff) naming ``owner``. Shared by Parameter and ``nn.ParamAttr``.
    (nn cannot import optim, a higher layer: a regularizer is known by what it has.)

    >>> check_regularizer(None) is None
    True
    >>> check_regularizer(0.01, "ParamAttr")
    Traceback (most recent call last):
    ...
    TypeError: ParamAttr: regularizer must be an optim.L1Decay or optim.L2Decay (or None), got
    float; for a plain number use the optimizer's weight_decay
    """
    if value is not None and not callable(getattr(value, "add_to", None)):
        raise TypeError(f"{owner}: regularizer must be an optim.L1Decay or optim.L2Decay "
                        f"(or None), got {type(value).__name__}; for a plain number "
                        "use the optimizer's weight_decay")
    if value is not None:                   # a coeff changed after the regularizer was made
        checks.non_negative(owner, f"regularizer {type(value).__name__}'s coeff",
                            getattr(value, "coeff", None))
    return value
