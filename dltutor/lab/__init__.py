"""The live training lab: a controller you can drive from code, and a widget view of it.

``TrainingLab`` (plain Python, no widgets) owns the loop and the controls; ``lab.show()`` (or
just ``lab`` as the last line of a cell) displays the ipywidgets view (plots drawn in the browser) from
``dltutor.lab.widgets``. ``dltutor.lab.demos`` has ready-made labs.

>>> from dltutor.lab import TrainingLab, demos
>>> demos.moons_mlp().layers
['0', '2', '4']
"""
from typing import Any

from . import demos
from .controller import CLIP_MODES, TrainingLab, set_show_view
from .errors import LabError


def show_widget_view(lab: TrainingLab) -> Any:
    """What ``lab.show()`` does: a live :class:`~dltutor.lab.widgets.LabView` of ``lab``,
    registered as that lab's one live view; returns the widget to display.

    >>> show_widget_view(demos.moons_mlp()).__class__.__name__
    'VBox'
    >>> from dltutor.lab.widgets import close_all; close_all()
    """
    # Imported here, not at the top: `import dltutor.lab` stays quick and works without
    # ipywidgets; the widgets load the first time a lab is shown.
    from .widgets import LabView

    return LabView(lab).show()


# The controller never imports its view (see controller.set_show_view): the package connects them.
set_show_view(show_widget_view)

__all__ = ["CLIP_MODES", "LabError", "TrainingLab", "demos"]
