"""dltutor: learn deep-learning parameter management with a small engine you can read.

>>> import dltutor as dt
>>> w = dt.tensor([1.0, 2.0], requires_grad=True)
>>> loss = (w * w).sum()
>>> loss.backward()
>>> w.grad
tensor([2., 4.])
"""
import builtins

from . import autodiff, backend, cuda, data, diagnose, nn, optim, stats, trace, twins, utils
from .devices import device
from .autograd import *  # noqa: F403 - the tensor API: dt.tensor, dt.exp, dt.no_grad, ...
from .autograd import __all__ as _autograd_all
from .autograd import bool_, float16, float32, float64, int32, int64  # named: aliased below
from .i18n import get_language, set_language
from .io import CheckpointError, load, save

__all__ = ["autodiff", "backend", "cuda", "data", "device", "diagnose", "nn", "optim", "stats", "trace",
           "utils", "quick_mode", "save", "load", "CheckpointError", "set_language",
           "get_language", *_autograd_all]
__version__ = "0.1.0"

# In a notebook, a PyTorch or Paddle twin run where that framework is missing prints one line
# on how to install it, not a traceback (twins.py; outside IPython this does nothing).
twins.explain_missing_frameworks()


def quick_mode() -> builtins.bool:  # (below, dltutor's bool is a dtype)
    """True when the environment variable ``DLTUTOR_QUICK`` is ``1``.

    The tests and ``make notebooks`` set it, so notebooks can run shorter training loops there
    (``epochs = 5 if dt.quick_mode() else 50``); when you run a notebook yourself it is off.

    >>> quick_mode() in (True, False)
    True
    """
    import os

    return os.environ.get("DLTUTOR_QUICK") == "1"


# PyTorch's short dtype names: dt.float is dt.float32, dt.double is dt.float64, and so on. They
# are attributes only, left out of __all__, so `from dltutor import *` never hides Python's own
# float, int and bool. (Defined last: below this line those names are dtypes in this module.)
float = float32
double = float64
half = float16
long = int64
int = int32
bool = bool_
