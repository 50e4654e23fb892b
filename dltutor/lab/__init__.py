"""The live training lab: a controller you can drive from code, and a widget view of it.

``TrainingLab`` (plain Python, no widgets) owns the loop and the controls; ``lab.show()`` (or
just ``lab`` as the last line of a cell) displays the ipywidgets view (plots drawn in the browser) from
``dltutor.lab.widgets``. ``dltutor.lab.demos`` has ready-made labs.

>>> from dltutor.lab import TrainingLab, demos
>>> demos.moons_mlp().layers
['0', '2', '4']
"""
from . import demos
from .controller import CLIP_MODES, LabError, TrainingLab

__all__ = ["TrainingLab", "LabError", "CLIP_MODES", "demos"]
