"""Paddle's way of describing a parameter, mapped onto dltutor's one Parameter class.

In Paddle a layer's parameter is described by a ``ParamAttr`` (its initializer, learning rate,
regularizer, whether it trains, whether it is clipped) handed to the layer as ``weight_attr=``
/ ``bias_attr=``, and ``Layer.create_parameter`` makes one from such a description. Here the
description is :class:`ParamAttr`, and every field of it lands on an attribute of
:class:`~dltutor.nn.Parameter` (nothing is stored twice):

=====================  ==========================================================
``ParamAttr`` field    becomes
=====================  ==========================================================
``initializer``        the initializer run on the new parameter (as ``weight_init=``)
``learning_rate``      ``param.lr_mult``
``regularizer``        ``param.regularizer``
``trainable=False``    ``param.requires_grad == False`` (``param.stop_gradient == True``)
``need_clip``          ``param.need_clip``
=====================  ==========================================================

>>> import dltutor as dt
>>> from dltutor import nn, optim
>>> layer = nn.Linear(3, 2, weight_attr=nn.ParamAttr(learning_rate=0.5,
...                   regularizer=optim.L2Decay(0.01), need_clip=False), bias_attr=False)
>>> layer.weight.lr_mult, layer.weight.need_clip, layer.bias
(0.5, False, None)
"""
from __future__ import annotations

from numbers import Integral
from typing import Any

from ..autograd import as_dtype, float32, zeros
from . import init
from .parameter import Parameter, check_lr_mult, check_regularizer


def check_initializer(owner: str, name: str, value: Any) -> Any:
    """``value`` if it is None or a callable that fills a parameter (an initializer object
    such as ``init.Normal(0, 0.02)``, or a function), else a TypeError naming ``owner`` and
    ``name``. Layers (``weight_init=``) and :class:`ParamAttr` (``initializer=``) share it.

    >>> check_initializer("ParamAttr", "initializer", init.Normal)
    Traceback (most recent call last):
    ...
    TypeError: ParamAttr: initializer got the class Normal, not an initializer made from it; add the parentheses: initializer=Normal(...)
    """
    # A class is callable too, but calling it on the parameter would make an object
    # (with the parameter as its first argument) instead of filling the parameter.
    if isinstance(value, type):
        raise TypeError(f"{owner}: {name} got the class {value.__name__}, not an "
                        f"initializer made from it; add the parentheses: "
                        f"{name}={value.__name__}(...)")
    if value is not None and not callable(value):
        raise TypeError(f"{owner}: {name} must be an initializer such as "
                        f"init.Normal(0.0, 0.02), or a function of the parameter, got "
                        f"{type(value).__name__} ({value!r:.40})")
    return value


def _check_flag(name: str, value: Any) -> bool:
    # Paddle declares these as bool; a 0/1 or a string here is almost always a slip.
    if not isinstance(value, bool):
        raise TypeError(f"ParamAttr: {name} must be True or False, got {value!r}")
    return value


class ParamAttr:
    """Paddle's description of one parameter: ``ParamAttr(name=None, initializer=None,
    learning_rate=1.0, regularizer=None, trainable=True, need_clip=True)``.

    Give it to a layer (``nn.Linear(..., weight_attr=ParamAttr(...))``) or to
    ``Module.create_parameter(shape, attr=...)``; each field becomes an attribute of the
    Parameter made (see the table of :mod:`dltutor.nn.paddle_names`). Every argument is
    checked here, when the object is made.

    Two of Paddle's arguments are not taken: ``name`` (a dltutor parameter is named by where
    it sits, its ``state_dict`` key such as ``"fc.weight"``, so only None is accepted) and
    ``do_model_average`` (dltutor has no model averaging).

    >>> from dltutor import nn, optim
    >>> attr = ParamAttr(learning_rate=2.0, regularizer=optim.L1Decay(1e-4), trainable=False)
    >>> attr
    ParamAttr(initializer=None, learning_rate=2.0, regularizer=L1Decay(0.0001), trainable=False, need_clip=True)
    >>> ParamAttr(learning_rate=-1)
    Traceback (most recent call last):
    ...
    ValueError: ParamAttr: learning_rate must be a number >= 0 and finite (0 freezes the parameter), got -1
    """

    def __init__(self, name: str | None = None, initializer: Any = None,
                 learning_rate: float = 1.0, regularizer: Any = None, trainable: bool = True,
                 need_clip: bool = True):
        if name is not None:
            raise ValueError(f"ParamAttr: name={name!r} is not supported: dltutor names a "
                             "parameter by where it sits in the module (its state_dict key, "
                             "e.g. 'fc.weight'); leave name=None")
        # Checked with Parameter's own checks, so the rules (and messages) are the same.
        self.initializer = check_initializer("ParamAttr", "initializer", initializer)
        self.learning_rate = check_lr_mult(learning_rate, "ParamAttr", "learning_rate")
        self.regularizer = check_regularizer(regularizer, "ParamAttr")
        self.trainable = _check_flag("trainable", trainable)
        self.need_clip = _check_flag("need_clip", need_clip)

    def parameter_settings(self) -> dict[str, Any]:
        """The keyword arguments of :class:`~dltutor.nn.Parameter` this description means.

        >>> ParamAttr(learning_rate=0.5, need_clip=False).parameter_settings()
        {'requires_grad': True, 'lr_mult': 0.5, 'regularizer': None, 'need_clip': False}
        """
        return {"requires_grad": self.trainable, "lr_mult": self.learning_rate,
                "regularizer": self.regularizer, "need_clip": self.need_clip}

    def __repr__(self) -> str:
        return (f"ParamAttr(initializer={self.initializer!r}, learning_rate="
                f"{self.learning_rate!r}, regularizer={self.regularizer!r}, trainable="
                f"{self.trainable}, need_clip={self.need_clip})")


def layer_attrs(layer: str, bias: bool, weight_init: Any, bias_init: Any, weight_attr: Any,
                bias_attr: Any) -> tuple[bool, Any, Any, dict, dict]:
    """What a layer's ``weight_attr``/``bias_attr`` (Paddle's) and ``bias``/``weight_init``/
    ``bias_init`` (dltutor's) mean together: ``(has_bias, weight_init, bias_init,
    weight_settings, bias_settings)``, the settings being Parameter keyword arguments.
    ``bias_attr=False`` means no bias, as in Paddle. An initializer given both ways is refused.

    >>> layer_attrs("Linear", True, None, None, ParamAttr(learning_rate=0.5), False)[0]
    False
    """
    weight_attr = _as_attr(layer, "weight_attr", weight_attr, allow_bool=False)
    if not bias and bias_attr not in (None, False):
        raise ValueError(f"{layer}: bias=False says there is no bias, but bias_attr="
                         f"{bias_attr!r} describes one; drop one of the two")
    has_bias = bias and bias_attr is not False
    if bias_attr is False and bias_init is not None:
        raise ValueError(f"{layer}: bias_init was given but bias_attr=False, so there is no "
                         "bias to initialize; drop one of the two")
    bias_attr = _as_attr(layer, "bias_attr", bias_attr, allow_bool=True)
    weight_init = _one_initializer(layer, "weight", weight_init, weight_attr)
    bias_init = _one_initializer(layer, "bias", bias_init, bias_attr)
    return (has_bias, weight_init, bias_init, weight_attr.parameter_settings(),
            bias_attr.parameter_settings())


def _as_attr(layer: str, name: str, value: Any, allow_bool: bool) -> ParamAttr:
    if value is None or (allow_bool and isinstance(value, bool)):
        return ParamAttr()             # False (no bias) is handled by the caller
    if not isinstance(value, ParamAttr):
        allowed = "an nn.ParamAttr, None or False" if allow_bool else "an nn.ParamAttr or None"
        raise TypeError(f"{layer}: {name} must be {allowed}, got {type(value).__name__} "
                        f"({value!r:.40}); for an initializer alone write "
                        f"{name.replace('_attr', '_init')}=... or {name}=nn.ParamAttr("
                        "initializer=...)")
    return value


def _one_initializer(layer: str, which: str, given: Any, attr: ParamAttr) -> Any:
    if given is not None and attr.initializer is not None:
        raise ValueError(f"{layer}: the {which}'s initializer was given twice, as {which}_init="
                         f"{given!r:.40} and as {which}_attr=ParamAttr(initializer="
                         f"{attr.initializer!r:.40}); keep one: {which}_init= (dltutor's way) or "
                         "the ParamAttr's initializer (Paddle's way)")
    return given if given is not None else attr.initializer


def new_parameter(owner: str, shape: Any, attr: Any = None, dtype: Any = None,
                  is_bias: bool = False, default_initializer: Any = None) -> Parameter | None:
    """What ``Module.create_parameter`` makes: a new Parameter of ``shape`` described by
    ``attr``, initialized by ``attr.initializer``, else ``default_initializer``, else Paddle's
    default (``XavierUniform`` for a weight, zeros for a bias). ``attr=False`` gives None, as
    in Paddle. Everything is checked before anything is drawn.

    >>> new_parameter("Module", [2, 3], default_initializer=init.Constant(1.0)).tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    where = f"{owner}.create_parameter"
    if (not isinstance(shape, (list, tuple))
            or not all(isinstance(n, Integral) and not isinstance(n, bool) and int(n) >= 0
                       for n in shape)):
        raise TypeError(f"{where}: shape must be a list or tuple of ints >= 0, got {shape!r}")
    if not isinstance(is_bias, bool):
        raise TypeError(f"{where}: is_bias must be True or False, got {is_bias!r}")
    if attr is False:
        return None                    # Paddle's way of saying "no such parameter"
    attr = _as_attr(where, "attr", attr, allow_bool=False)
    check_initializer(where, "default_initializer", default_initializer)
    dtype = float32 if dtype is None else as_dtype(dtype)
    if dtype is None or dtype.kind != "f":
        raise TypeError(f"{where}: dtype must be a floating-point type such as 'float32', got "
                        f"{dtype!r}")
    initializer = attr.initializer if attr.initializer is not None else default_initializer
    if initializer is None:
        if not is_bias and len(shape) < 2:
            # dltutor's Xavier needs a matrix or a kernel to read the fans from.
            raise ValueError(f"{where}: a weight of shape {tuple(shape)} has no fan in and fan "
                             "out for Paddle's default XavierUniform; pass is_bias=True (zeros) "
                             "or default_initializer=init.Uniform(...)")
        initializer = init.Constant(0.0) if is_bias else init.XavierUniform()
    param = Parameter(zeros(tuple(shape), dtype=dtype), **attr.parameter_settings())
    initializer(param)
    return param


__all__ = ["ParamAttr", "check_initializer", "layer_attrs", "new_parameter"]
