"""The live lab's training loop: steps at a chosen speed in an asyncio task (no widgets here).

In Jupyter, Python code and the widgets' messages share one thread: the kernel's asyncio event
loop. A plain ``for`` loop of training steps would keep every click waiting until it ended. So
a :class:`PacedTrainer` trains in an :mod:`asyncio` task, in slices of about 20 ms of steps
(``slice_seconds``), each followed by a short ``await asyncio.sleep``: the kernel handles the
widget messages between two slices, and a control takes effect from the next step. At a
chosen speed (``pace`` steps per second) the task sleeps until the next step is due, so
training never runs ahead of the speed. Pressing play twice does not start a second loop.

The trainer knows nothing about the page. After each slice it calls ``on_slice()`` (the view
updates its status line and plots there) and when the loop ends ``on_stop(error)`` (the
exception that stopped it, or None). It needs of the lab only ``steps_done`` and ``step(1)``,
and it reads the time through ``clock`` and waits through ``sleep``: the tests drive it with a
stub lab and a fake clock.

>>> import asyncio
>>> from dltutor.lab import demos
>>> trainer = PacedTrainer(demos.moons_mlp(), pace=None)     # None: as fast as it goes
>>> asyncio.run(trainer.train(steps=5))
>>> trainer.lab.steps_done, trainer.running
(5, False)
"""
from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["SLICE_SECONDS", "PacedTrainer"]

#: Seconds of training steps between two looks at the widget messages.
SLICE_SECONDS = 0.02

_TASKS: set[asyncio.Task] = set()    # strong references: asyncio keeps only weak ones


def _nothing(*args: Any) -> None:
    """The default callback: do nothing."""


class PacedTrainer:
    """Trains ``lab`` in an asyncio task at ``pace`` steps per second (None: as fast as it
    goes), in slices of ``slice_seconds``; see the module docstring.

    ``on_slice()`` is called after every slice, ``on_stop(error)`` once when the loop ends.
    ``clock`` (seconds, like :func:`time.perf_counter`) and ``sleep`` (like
    :func:`asyncio.sleep`) are there for tests.
    """

    def __init__(self, lab: Any, pace: float | None = None,
                 slice_seconds: float = SLICE_SECONDS,
                 on_slice: Callable[[], None] = _nothing,
                 on_stop: Callable[[Exception | None], None] = _nothing,
                 clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.lab, self.slice_seconds = lab, slice_seconds
        self.on_slice, self.on_stop = on_slice, on_stop
        self.clock, self.sleep = clock, sleep
        self.task: asyncio.Task | None = None
        self.closed = False
        self._want_running = False
        self._stop_at: tuple[int | None, float | None] = (None, None)
        self.set_pace(math.inf if pace is None else pace)

    @property
    def running(self) -> bool:
        """True while the training task is alive and asked to go on."""
        return self._want_running and self.task is not None and not self.task.done()

    def set_pace(self, value: float) -> None:
        """``value`` steps per second from now on (inf: as fast as it goes)."""
        self.pace: float | None = None if math.isinf(value) else float(value)
        # The speed counts steps from this moment: (when, steps done then).
        self._pace_anchor = (self.clock(), self.lab.steps_done)

    def play(self, steps: int | None = None, seconds: float | None = None) -> bool:
        """Train in a task on the running asyncio loop until ``pause()``, an error, or
        ``steps`` more steps / ``seconds`` seconds. Returns True when it started a task: while
        one runs, play only sets the new stopping point (there is never a second loop)."""
        if self.closed:
            return False
        self._want_running = True
        self._stop_at = (None if steps is None else self.lab.steps_done + steps,
                         None if seconds is None else self.clock() + seconds)
        if self.task is not None and not self.task.done():
            return False
        self._pace_anchor = (self.clock(), self.lab.steps_done)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = asyncio.get_event_loop()
        self.task = loop.create_task(self._run())
        _TASKS.add(self.task)
        self.task.add_done_callback(_TASKS.discard)
        return True

    def pause(self) -> None:
        """Stop training after the current slice (at most ``slice_seconds``)."""
        self._want_running = False

    async def wait(self) -> None:
        """Wait until the training task (if one was started) has stopped."""
        if self.task is not None:
            await self.task

    async def train(self, steps: int | None = None, seconds: float | None = None) -> None:
        """``play(steps, seconds)`` and wait until the loop stops (for scripts and tests:
        ``asyncio.run(trainer.train(steps=100))``)."""
        self.play(steps=steps, seconds=seconds)
        await self.wait()

    def close(self) -> None:
        """Stop for good: cancel the task; ``play`` does nothing from now on."""
        self._want_running = False
        if self.task is not None and not self.task.done():
            self.task.cancel()
        self.closed = True

    async def _run(self) -> None:
        """The task: slices of steps, and a sleep after each so the kernel can handle the
        widget messages."""
        error = None
        try:
            while self._want_running and not self.closed:
                self._run_slice()
                self.on_slice()
                await self.sleep(self._pause_before_next_step())
        except Exception as exc:  # handed to on_stop (the view shows it)
            error = exc
        finally:
            self._want_running = False
            self.on_stop(error)

    def _run_slice(self) -> None:
        """Steps until the slice's time is up, the chosen speed allows no more, or the
        stopping point (``play(steps, seconds)``) is reached."""
        stop_step, stop_time = self._stop_at
        deadline = self.clock() + self.slice_seconds
        while True:
            if stop_step is not None and self.lab.steps_done >= stop_step:
                self._want_running = False
                break
            if self._steps_due() <= 0:      # at the chosen speed, not yet
                break
            self.lab.step(1)
            if self.clock() >= deadline:
                break
        if stop_time is not None and self.clock() >= stop_time:
            self._want_running = False

    def _steps_due(self) -> int:
        """How many steps the chosen speed allows now: the steps that fit in the time since the
        speed was set (or play pressed), minus those done. A machine that falls more than a
        second behind starts counting afresh, rather than racing to catch up."""
        if self.pace is None:
            return 1
        start, done_then = self._pace_anchor
        now = self.clock()
        due = int((now - start) * self.pace) + 1 - (self.lab.steps_done - done_then)
        if due > self.pace + 1:
            self._pace_anchor = (now - 1 / self.pace, self.lab.steps_done)
            return 1
        return due

    def _pause_before_next_step(self) -> float:
        """Seconds to sleep between slices: a moment for the widget messages, or, at a chosen
        speed, until the next step is due (at most one slice, so controls stay responsive)."""
        if self.pace is None:
            return 0.001
        start, done_then = self._pace_anchor
        next_due = start + (self.lab.steps_done - done_then) / self.pace
        return min(max(next_due - self.clock(), 0.001), max(self.slice_seconds, 0.05))
