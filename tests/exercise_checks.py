"""The checks every chapter's exercises must pass, shared by ``tests/exercises/test_chapters.py``.

Each chapter's answers (``tests/exercises/answers/chNN.py``) give ``CASES`` (for each exercise
id: the right values of the variables it reads, and typical wrong values with words the "not
yet" message must contain) and ``SELF_CONTAINED`` (the ids whose solution runs on its own);
the test file runs these checks on every chapter's:

* the reference answer is correct, each typical wrong answer is "not yet" and names what
  differs, the untouched starter is "not attempted";
* every exercise of the chapter has a case;
* the chapter's code, run with each starter (``name = ____``) replaced by the exercise's
  solution, prints "correct" for every check (so the solutions work where learners run them).
"""
from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import numpy as np

import dltutor as dt
import dltutor.distributed  # dt.distributed.Engines, for _ending
from dltutor import exercises
from dltutor.exercises import ____

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import twins  # tools/twins.py

ROOT = Path(__file__).resolve().parent.parent


def chapter_source(number: str) -> Path:
    (path,) = sorted((ROOT / "notebooks" / "src").glob(f"{number}_*.py"))
    return path


def run_chapter_with_solutions(number: str) -> list[str]:
    """The verdict lines printed when chapter ``number`` runs with every starter replaced by
    its exercise's solution (in quick mode, in a scratch folder)."""
    import jupytext
    import matplotlib.pyplot as plt

    by_name = {name: exercise for exercise in exercises.CHAPTERS[number]
               for name in exercise.names}
    cells = jupytext.read(chapter_source(number)).cells
    shell = _shell_for_magics(cells)
    namespace: dict = shell.user_ns if shell is not None else {"__name__": "__main__"}
    out = io.StringIO()
    with contextlib.redirect_stdout(out), _ending(shell, namespace):
        for cell in cells:
            # A PyTorch or Paddle twin runs in the frameworks environment, not the kit's.
            if cell.cell_type != "code" or twins.twin_framework(cell) is not None:
                continue
            code = cell.source
            for line in code.splitlines():
                name = line.split("=")[0].strip()
                if line.strip().endswith("= ____") and name in by_name:
                    code = code.replace(line, by_name[name].code)
            try:
                if code.startswith("%%"):
                    shell.run_cell(code).raise_error()
                else:
                    exec(compile(code, chapter_source(number).name, "exec"), namespace)
            except Exception:
                if "raises-exception" not in cell.metadata.get("tags", []):
                    raise
            finally:
                # As Jupyter's inline backend does after each cell: the figures were shown, so
                # pyplot lets go of them (a cell that kept one in a variable still has it).
                plt.close("all")
    return [line for line in out.getvalue().splitlines() if line.startswith("Exercise ")]


def _shell_for_magics(cells) -> object | None:
    """An IPython shell when the chapter has cell magics (chapter 13's ``%%px`` cells, run in
    the MPI engines the chapter starts), else None: plain ``exec`` runs the other chapters."""
    if not any(c.cell_type == "code" and c.source.startswith("%%") for c in cells):
        return None
    from IPython.core.interactiveshell import InteractiveShell
    return InteractiveShell.instance()


@contextlib.contextmanager
def _ending(shell, namespace: dict):
    """After the chapter, even one that failed: stop the MPI engines it started, and drop the
    IPython shell, so later chapters run without one."""
    try:
        yield
    finally:
        engines = namespace.get("engines")
        if isinstance(engines, dt.distributed.Engines):
            engines.stop()
        if shell is not None:
            type(shell).clear_instance()


def exercise(exercise_id: str):
    """The exercise with id ``exercise_id`` (ids are unique across the chapters)."""
    (found,) = [e for chapter in exercises.CHAPTERS.values() for e in chapter
                if e.id == exercise_id]
    return found


def check_every_exercise_has_a_case(number: str, cases: dict) -> None:
    assert {e.id for e in exercises.CHAPTERS[number]} == set(cases)
    assert len(cases) >= 3, "at least three checked exercises per chapter"


def check_the_reference_answer_is_correct(exercise_id: str, right: dict) -> None:
    verdict = exercise(exercise_id).verdict(right)
    assert verdict.status == "correct", verdict.message
    assert verdict.message.startswith(f"Exercise {exercise_id}: correct.")


def check_typical_wrong_answers_say_what_differs(exercise_id: str, wrong: list) -> None:
    assert wrong, "each exercise needs at least one typical wrong answer"
    for values, words in wrong:
        verdict = exercise(exercise_id).verdict(values)
        assert verdict.status == "not yet", (values, verdict.message)
        for word in words:
            assert word in verdict.message, (word, verdict.message)


def check_the_starter_reports_not_attempted(exercise_id: str) -> None:
    found = exercise(exercise_id)
    starter = {name: ____ for name in found.names}
    assert found.verdict(starter).status == "not attempted"
    assert found.verdict({}).status == "not attempted"
    assert "replace ____" in found.verdict(starter).message


def check_the_self_contained_solution_runs_and_is_correct(exercise_id: str) -> None:
    found = exercise(exercise_id)
    namespace = {"dt": dt, "np": np}
    exec(found.code, namespace)                                  # our own code
    assert found.verdict(namespace).status == "correct"


def check_each_solution_is_correct_in_its_chapter(number: str, monkeypatch, tmp_path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.setenv("DLTUTOR_QUICK", "1")
    monkeypatch.chdir(tmp_path)
    verdicts = run_chapter_with_solutions(number)
    assert len(verdicts) == len(exercises.CHAPTERS[number]), verdicts
    assert all(": correct." in line for line in verdicts), verdicts
