"""The lab as an app: a demo picker, one line saying what to try, and the live lab below.

``notebooks/lab.ipynb`` is this and nothing else, so that Voilà (and the Binder lab badge) show
the lab alone. Each entry of :data:`DEMOS` is a ready-made lab from :mod:`dltutor.lab.demos`
and the experiment it is made for. Picking another demo closes the running lab (its training
stops) and shows the new one, at the new demo's own speed.

>>> app = LabApp()
>>> app.picker.value, app.view.lab.name
('two moons', 'moons MLP')
>>> app.picker.value = "exploding gradients"       # what choosing it in the menu does
>>> app.view.lab.name
'exploding gradients'
>>> app.close()
"""
from __future__ import annotations

import html
from typing import Any, Callable, NamedTuple

import ipywidgets as W

from . import demos
from .controller import TrainingLab
from .widgets import LabView


class Demo(NamedTuple):
    """A lab to build and the one-line experiment to try with it."""

    build: Callable[[], TrainingLab]
    try_this: str


#: The demos the app offers, in menu order.
DEMOS: dict[str, Demo] = {
    "two moons": Demo(demos.moons_mlp,
                      "Press play. Tick freeze on layer 2 and watch its norm go flat while "
                      "the other layers learn; set a layer's lr × to 0 or 10."),
    "exploding gradients": Demo(demos.exploding_gradients,
                                "Press play: the loss overflows within a few steps. Reset, set "
                                "clip to global norm at 1 and play again: now it learns."),
    "spirals": Demo(demos.spirals_mlp,
                    "Three spiral arms, a narrow first layer. Set layer 0's lr × to 10 and it "
                    "untangles them much sooner; at 0 it stalls. Reset between tries."),
    "pretrained features": Demo(demos.pretrained_features,
                                "Layers 0.0 and 0.2 read digits (see 'digits, pretrained "
                                "head'); the new head learns odd vs even. Freeze both before "
                                "play and the digit accuracy stays put; leave them free and "
                                "it collapses."),
    "tied layer": Demo(demos.tied_mlp,
                       "Layer 2 is used twice: freeze it and both uses stop; its gradient is "
                       "the sum of the two uses."),
    "handwritten digits": Demo(demos.digits_mlp,
                               "Adam on 8x8 digits: set layer 0's lr × to 0 (a fixed feature "
                               "extractor) and see how far the last layer gets alone."),
}


class LabApp:
    """The demo picker and the live view of the chosen demo (``app.view``, a
    :class:`~dltutor.lab.widgets.LabView`); ``app.widget`` is what the page shows.

    The picker has the CSS class ``dltutor-demo`` and the help line ``dltutor-help``.
    """

    def __init__(self, demo: str = "two moons"):
        if demo not in DEMOS:
            raise ValueError(f"LabApp: unknown demo {demo!r}; choose one of {list(DEMOS)}")
        self.picker = W.Dropdown(options=list(DEMOS), value=demo, description="demo",
                                 layout=W.Layout(width="280px"),
                                 style={"description_width": "40px"})
        self.picker.add_class("dltutor-demo")
        self.help = W.HTML(layout=W.Layout(flex="1 1 300px"))
        self.help.add_class("dltutor-help")
        self.view = self._open(demo)
        self.widget = W.VBox([W.HBox([self.picker, self.help],
                                     layout=W.Layout(flex_flow="row wrap")),
                              self.view.widget], layout=W.Layout(width="100%"))
        self.widget.add_class("dltutor-app")
        self.picker.observe(lambda change: self._switch(change["new"]), names="value")

    def _open(self, demo: str) -> LabView:
        entry = DEMOS[demo]
        self.help.value = (f"<span style='font-size:14px'><b>Try this:</b> "
                           f"{html.escape(entry.try_this)}</span>")
        view = LabView(entry.build())
        view.show()                     # the one live view of this lab's name
        return view

    def _switch(self, demo: str) -> None:
        """Close the running demo (its training stops) and show ``demo`` in its place."""
        self.view.close()
        self.view = self._open(demo)
        self.widget.children = (self.widget.children[0], self.view.widget)

    def close(self) -> None:
        """Stop training and close every widget of the app."""
        self.view.close()
        self.picker.close()
        self.help.close()
        self.widget.close()

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)


def app(demo: str = "two moons") -> Any:
    """The lab app, ready to display (the last line of a cell shows it).

    >>> a = app("tied layer")
    >>> a.view.lab.layers
    ['0', '2', '6']
    >>> a.close()
    """
    return LabApp(demo)
