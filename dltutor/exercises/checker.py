"""One exercise: what it reads from the notebook, how it checks it, its hints and solution.

An :class:`Exercise` reads the learner's own variables (by name, from the namespace of the
cell that calls ``check()``), so the learner writes ordinary code and then asks::

    ex.q1.check()        # correct / not yet (and what differs) / not attempted
    ex.q1.hint()         # the next hint; hints come one at a time
    ex.q1.solution()     # an answer, only when asked

A starter cell assigns :data:`____` (four underscores) to the variables; while one of them
still holds it, or is missing, the exercise is "not attempted".

>>> ex = Exercise("99.1", names=("answer",), expects="ch03.q1.expects",      # "a number"
...               check=lambda answer: None if answer == 42 else f"got {answer!r}, not 42",
...               hints=("ch03.q3.hint1",), solution="answer = 42")
>>> ex.verdict({"answer": ____}).status
'not attempted'
>>> ex.verdict({"answer": 41}).message
'Exercise 99.1: not yet. got 41, not 42'
>>> ex.verdict({"answer": 42}).status
'correct'
>>> Exercise("99.2", names=("answer",), expects="ch03.q1.expects", check=lambda answer: 1 / answer,
...          hints=(), solution="").verdict({"answer": "six"}).message   # the check raised
'Exercise 99.2: not yet. answer should be a number; this answer is of type str.'
>>> def broken(x):
...     return x + undefined_name
>>> Exercise("99.3", names=("f",), expects="ch03.q2.expects", check=lambda f: f(1),
...          hints=(), solution="").verdict({"f": broken}).message   # the learner's code raised
"Exercise 99.3: not yet. f raised NameError: name 'undefined_name' is not defined"
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, NamedTuple, Tuple, Union

from ..i18n import TABLES, text
from . import record
from .answers import raised
from .view import show


class _Blank:
    """The placeholder a starter cell puts where the learner's answer goes."""

    _instance = None

    def __new__(cls) -> "_Blank":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "____"


#: Put this where an answer goes: ``dtype_of_t = ____``.
____ = _Blank()


#: What an exercise's check returns: None when the answer is right, else a short sentence saying
#: what differs (``text(key, ...)``: the learner's language); or ``(None, note)``: right, with a
#: note to add to "correct".
CheckResult = Union[str, None, Tuple[None, str]]


class Verdict(NamedTuple):
    """The result of checking one exercise: ``status`` is ``"correct"``, ``"not yet"`` or
    ``"not attempted"``; ``message`` is the sentence ``check()`` prints."""

    status: str
    message: str


class Exercise:
    """One checked exercise.

    ``id``: chapter and number, ``"01.1"``. ``names``: the learner's variables it reads.
    ``expects``: the key of what kind of value they hold, for the learner ("a number", "True or
    False"), said when an answer is of a kind the check cannot use. ``check(**values)``: returns
    None when the answer is right, else a short sentence saying what differs, made with
    ``text(key, ...)`` (it may also return ``(None, note)`` to add a note to "correct").
    ``hints``: the keys of the hints, shown one at a time. ``solution``: code shown by
    :meth:`solution`. ``title``: the key of a few words naming the exercise, shown beside its id
    where a list of exercises is shown (a class table, an unknown ``ex.qN``). The keys' texts are
    in ``dltutor/i18n``'s exercise tables (``en_exercises_01_06.py`` and its siblings).
    """

    def __init__(self, id: str, names: tuple[str, ...], expects: str,
                 check: Callable[..., CheckResult], hints: tuple[str, ...], solution: str,
                 *, title: str = ""):
        keys = [expects, *hints] + ([title] if title else [])
        unknown = [key for key in keys if key not in TABLES["en"]]
        if unknown:              # found when the chapter is imported, not when a hint is asked
            raise ValueError(f"exercise {id}: no text has the key {', '.join(map(repr, unknown))}; "
                             "add it to dltutor/i18n's exercise tables, in English and Chinese")
        self.id, self.names, self.expects, self._check = id, tuple(names), expects, check
        self.hints, self.code, self.title = tuple(hints), solution, title
        self.hints_shown = 0
        self.last_status = "not checked"

    # -- for learners ---------------------------------------------------------------------------
    def check(self) -> None:
        """Check the answer in the calling cell's variables and show the verdict (a coloured
        box in a notebook, the sentence elsewhere)."""
        verdict = self.verdict(_caller_namespace())
        show(verdict.status, verdict.message)
        record.save_entry(record.the_file(), self.id, status=verdict.status,
                          hints=self.hints_shown)

    def hint(self, n: int | None = None) -> None:
        """Print the next hint (or hint ``n``, counting from 1)."""
        if n is None:
            if self.hints_shown >= len(self.hints):
                print(text("exercise.no_more_hints", id=self.id,
                           solution=self._call("solution")))
                return
            self.hints_shown += 1
            n = self.hints_shown
            record.save_entry(record.the_file(), self.id, hints=self.hints_shown)
        if not 1 <= n <= len(self.hints):
            raise ValueError(f"exercise {self.id} has hints 1 to {len(self.hints)}, not {n}")
        print(text("exercise.hint", n=n, total=len(self.hints), id=self.id,
                   text=text(self.hints[n - 1])))

    def solution(self) -> None:
        """Print an answer (one of possibly several)."""
        print(text("exercise.solution", id=self.id, code=self.code))

    # -- for tests and for progress() ------------------------------------------------------------
    def verdict(self, namespace: dict[str, Any]) -> Verdict:
        """The verdict on the answer found in ``namespace`` (nothing is printed)."""
        unset = tuple(name for name in self.names if namespace.get(name, ____) is ____)
        if unset:              # name only what is still to be set (a chapter variable it
            verdict = Verdict("not attempted",                      # also reads is set)
                              text("exercise.not_attempted", id=self.id, names=_names(unset)))
        else:
            verdict = self._judge({name: namespace[name] for name in self.names})
        self.last_status = verdict.status
        return verdict

    def _judge(self, values: dict[str, Any]) -> Verdict:
        try:
            result = self._check(**values)
        except Exception as err:  # an answer of another kind may break the check
            culprit = _raiser(values, err)
            if culprit is not None:     # the learner's own code raised: say so, with its error
                return Verdict("not yet", text("exercise.not_yet", id=self.id,
                                               why=raised(culprit, err)))
            # One sentence on the kind of value expected, not the check's own exception.
            kinds = text("exercise.names_and").join(
                ", ".join(type(value).__name__ for value in values.values()).rsplit(", ", 1))
            return Verdict("not yet", text("exercise.wrong_kind", id=self.id,
                                           names=_names(self.names),
                                           expects=text(self.expects), kinds=kinds))
        note = None
        if isinstance(result, tuple):
            result, note = result
        if result is None:
            if note:
                return Verdict("correct", text("exercise.correct_note", id=self.id,
                                               note=note))
            return Verdict("correct", text("exercise.correct", id=self.id))
        return Verdict("not yet", text("exercise.not_yet", id=self.id, why=result))

    def shown_title(self) -> str:
        """The title in the kit's language ("" for an exercise without one).

        >>> from dltutor.i18n import use_language
        >>> with use_language("zh"):
        ...     chapter_08_q1 = Exercise("08.1", ("x",), "ch08.q1.expects", lambda x: None, (),
        ...                              "", title="ch08.q1.title")
        ...     chapter_08_q1.shown_title()
        'BatchNorm 的滑动均值'
        """
        return text(self.title) if self.title else ""

    def restore(self, entry: dict) -> None:
        """Take up where a recorded entry (see record.py) left off: its status and hints."""
        self.last_status = entry["status"]
        self.hints_shown = min(int(entry.get("hints", 0)), len(self.hints))

    def _call(self, method: str) -> str:
        chapter, number = self.id.split(".")
        return f"ex.q{number}.{method}()"

    def __repr__(self) -> str:
        return f"Exercise({self.id!r}, reads {', '.join(self.names)}: {self.last_status})"


def _names(names: tuple[str, ...]) -> str:
    return text("exercise.names_and").join(", ".join(names).rsplit(", ", 1)) \
        if len(names) > 1 else names[0]


def _raiser(values: dict[str, Any], err: BaseException) -> str | None:
    """The name of the learner's function that was running when ``err`` was raised, or None
    when the exception came from the check alone (an answer of another kind). Only functions
    count: a module's ``__call__`` is the kit's code, shared by every module the check calls.

    >>> def step_memory_mb(model):
    ...     return undefined_name
    >>> try:
    ...     step_memory_mb(None)
    ... except NameError as err:
    ...     _raiser({"step_memory_mb": step_memory_mb}, err)
    'step_memory_mb'
    """
    codes = {getattr(value, "__func__", value).__code__: name for name, value in values.items()
             if inspect.isfunction(value) or inspect.ismethod(value)}
    traceback = err.__traceback__
    while traceback is not None:          # every frame between the check and the raise
        if traceback.tb_frame.f_code in codes:
            return codes[traceback.tb_frame.f_code]
        traceback = traceback.tb_next
    return None


def _caller_namespace() -> dict[str, Any]:
    """The globals of the code that called ``check()`` (a notebook cell's are the kernel's
    user namespace), with its locals on top when called from inside a function."""
    frame = inspect.currentframe()
    try:
        caller: Any = frame.f_back.f_back  # type: ignore[union-attr]  # <- check <- the learner
        return {**caller.f_globals, **caller.f_locals}
    finally:
        del frame
