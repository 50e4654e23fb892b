"""Diagnose parameter management: what is in the model, what the optimizer does to each
parameter, and why a parameter is (or is not) changing.

Four questions, four functions. Each returns a small report object that prints as aligned plain
text, shows as an HTML table in a notebook, and keeps its answers as plain data (``.rows``, a
list of dicts, and ``to_dict()``) for tests and your own code.

=================================  ===========================================================
:func:`summary`                    every parameter name: shape, count, dtype, requires_grad,
                                   lr_mult, regularizer, need_clip, group, effective lr, ties
:func:`explain_lr`                 how the number that multiplies this gradient is made, which
                                   decay and which clipping apply, frozen or not
:func:`why_not_updating`           a checklist answered from the live objects, and a verdict
:func:`ties`                       the groups of names that share one parameter object
=================================  ===========================================================

>>> import dltutor as dt
>>> from dltutor import nn, optim, diagnose
>>> net = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
>>> net[0].requires_grad_(False)
Linear(in_features=2, out_features=3, bias=True)
>>> opt = optim.SGD(net.named_parameters(), lr=0.1)
>>> net(dt.ones(4, 2)).sum().backward()
>>> diagnose.why_not_updating(net, opt, "0.weight").verdict
'not updating because: requires_grad is False (frozen)'

Nothing here changes the model or the optimizer: every report only reads them.

The four questions, and the :class:`~dltutor.trace.Recorder`, also take a PyTorch model with
its ``torch.optim`` optimizer, or a Paddle layer with its ``paddle.optimizer``: each answer is
then read from that framework's own state (``adapters/``, one small module per framework,
imported only when one of its objects arrives).

Each function has its own file, named after it; ``report.py`` holds the printing they share,
``lookup.py`` how a parameter is found in an optimizer, and ``optimizer_rules.py`` the decay
and clipping rules the reports work out for themselves.
"""
from .adapters import import_framework
from .explain_lr import LRExplanation, explain_lr
from .lookup import UnknownNameError
from .summary import Summary, summary
from .ties import Ties, ties
from .why_not_updating import CLIPPED_SCALE, UpdateCheck, why_not_updating

__all__ = ["summary", "explain_lr", "why_not_updating", "ties", "Summary", "LRExplanation",
           "UpdateCheck", "Ties", "UnknownNameError", "CLIPPED_SCALE", "import_framework"]
