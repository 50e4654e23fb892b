"""The lab as an app: a demo picker, one line saying what to try, and the live lab below.

``notebooks/lab.ipynb`` is this and nothing else, so that Voilà (and the Binder lab badge) show
the lab alone. Each entry of :data:`DEMOS` is a ready-made lab from :mod:`dltutor.lab.demos`;
the line beside the menu says what experiment it is made for. Picking another demo closes the running lab (its training
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
from collections.abc import Callable
from typing import Any

import ipywidgets as W

from ..i18n import text
from . import demos
from .controller import TrainingLab
from .widgets import LabView

#: The demos the app offers, in menu order: name -> the function that builds its lab. The
#: menu shows ``text("lab.demo.<name>")`` and the experiment to try, ``text("lab.try.<name>")``
#: (:mod:`dltutor.i18n`), in the learner's language.
DEMOS: dict[str, Callable[[], TrainingLab]] = {
    "two moons": demos.moons_mlp,
    "exploding gradients": demos.exploding_gradients,
    "spirals": demos.spirals_mlp,
    "pretrained features": demos.pretrained_features,
    "tied layer": demos.tied_mlp,
    "handwritten digits": demos.digits_mlp,
}


class LabApp:
    """The demo picker and the live view of the chosen demo (``app.view``, a
    :class:`~dltutor.lab.widgets.LabView`); ``app.widget`` is what the page shows.

    The picker has the CSS class ``dltutor-demo`` and the help line ``dltutor-help``.
    """

    def __init__(self, demo: str = "two moons"):
        if demo not in DEMOS:
            raise ValueError(f"LabApp: unknown demo {demo!r}; choose one of {list(DEMOS)}")
        self.picker = W.Dropdown(options=[(text(f"lab.demo.{name}"), name) for name in DEMOS],
                                 value=demo, description=text("lab.app.demo"),
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
        self.help.value = (f"<span style='font-size:14px'><b>{text('lab.app.try')}</b> "
                           f"{html.escape(text(f'lab.try.{demo}'))}</span>")
        view = LabView(DEMOS[demo]())
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
