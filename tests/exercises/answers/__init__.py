"""Each chapter's exercise answers, one module a chapter (``chNN.py``): ``CASES`` gives, for each
exercise id, the right values of the variables it reads and typical wrong values with words the
"not yet" message must contain; ``SELF_CONTAINED`` the ids whose solution runs on its own.
tests/exercises/test_chapters.py runs the checks of tests/exercise_checks.py on every one."""
from __future__ import annotations

import importlib

from dltutor import exercises


def chapter(number: str):
    """The answers module of chapter ``number`` (its ``CASES`` and ``SELF_CONTAINED``)."""
    return importlib.import_module(f"{__name__}.ch{number}")


#: {chapter number: (CASES, SELF_CONTAINED)} for every chapter that has exercises.
CHAPTERS = {number: (chapter(number).CASES, chapter(number).SELF_CONTAINED)
            for number in exercises.CHAPTERS}
