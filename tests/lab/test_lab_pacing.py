"""The lab's paced training loop (dltutor.lab.pacing) without widgets or a browser: a stub lab
whose steps take a known time, a fake clock that only moves when the loop steps or sleeps, and
asyncio.run. The fake time makes the counts exact: no test here depends on the machine's
speed."""
from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from dltutor.lab.pacing import PacedTrainer


class FakeClock:
    """Seconds that pass only when a step runs or the loop sleeps."""

    def __init__(self):
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds
        await asyncio.sleep(0)          # let other tasks (the test's scenario) run


class StubLab:
    """Just what the loop uses: ``steps_done`` and ``step(1)``; each step takes ``step_seconds``
    of fake time, and step number ``fail_at`` raises."""

    def __init__(self, clock: FakeClock, step_seconds: float = 0.001, fail_at: int | None = None):
        self.clock, self.step_seconds, self.fail_at = clock, step_seconds, fail_at
        self.steps_done = 0

    def step(self, n: int = 1) -> None:
        assert n == 1, "the loop steps one at a time, so a control applies from the next step"
        if self.steps_done + 1 == self.fail_at:
            raise FloatingPointError("the loss is NaN")
        self.clock.now += self.step_seconds
        self.steps_done += 1


def trainer_for(pace=None, slice_seconds=0.02, step_seconds=0.001, fail_at=None):
    clock = FakeClock()
    lab = StubLab(clock, step_seconds, fail_at)
    calls = {"slices": 0, "stops": []}
    trainer = PacedTrainer(lab, pace=pace, slice_seconds=slice_seconds,
                           on_slice=lambda: calls.__setitem__("slices", calls["slices"] + 1),
                           on_stop=calls["stops"].append, clock=clock, sleep=clock.sleep)
    return trainer, lab, clock, calls


def test_the_pacing_module_does_not_import_ipywidgets():
    code = ("import sys, dltutor.lab.pacing; "
            "assert 'ipywidgets' not in sys.modules and 'anywidget' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_train_runs_the_requested_steps_in_slices_then_stops_once():
    trainer, lab, clock, calls = trainer_for(pace=None, slice_seconds=0.02, step_seconds=0.001)
    asyncio.run(trainer.train(steps=100))
    assert lab.steps_done == 100 and not trainer.running
    # 20 steps of 1 ms fill a 20 ms slice: 5 slices (and one that finds the end), each
    # followed by the short sleep that lets widget messages in
    assert calls["slices"] == 6 and clock.sleeps == [0.001] * 6
    assert calls["stops"] == [None]


@pytest.mark.parametrize("pace", [2.0, 10.0, 40.0])
def test_at_a_chosen_pace_it_makes_exactly_the_steps_due(pace):
    trainer, lab, clock, _ = trainer_for(pace=pace, step_seconds=0.0)
    asyncio.run(trainer.train(seconds=1.0))
    # steps due at 0, 1/pace, 2/pace, ... up to the end of the second: pace + 1 of them
    assert lab.steps_done == pace + 1
    assert all(s <= 0.05 for s in clock.sleeps)   # never asleep for long: clicks stay quick


def test_the_pace_can_change_while_it_runs():
    trainer, lab, clock, _ = trainer_for(pace=5.0, step_seconds=0.0)

    async def scenario():
        trainer.play()
        while clock.now < 101.0:
            await asyncio.sleep(0)
        slow = lab.steps_done
        trainer.set_pace(50.0)                    # what the speed slider does
        while clock.now < 102.0:
            await asyncio.sleep(0)
        trainer.pause()
        await trainer.wait()
        return slow, lab.steps_done - slow

    slow, fast = asyncio.run(scenario())
    assert 5 <= slow <= 7 and 48 <= fast <= 52


def test_play_twice_keeps_one_loop_and_pause_stops_it():
    trainer, lab, _, calls = trainer_for(pace=None)

    async def scenario():
        assert trainer.play() is True
        task = trainer.task
        assert trainer.play() is False and trainer.task is task   # no second loop
        assert trainer.running
        while lab.steps_done < 50:
            await asyncio.sleep(0)
        trainer.pause()
        await trainer.wait()

    asyncio.run(scenario())
    assert not trainer.running and calls["stops"] == [None]


def test_an_error_stops_the_loop_and_is_handed_to_on_stop():
    trainer, lab, _, calls = trainer_for(pace=None, fail_at=7)
    asyncio.run(trainer.train(steps=100))
    assert lab.steps_done == 6 and not trainer.running
    (error,) = calls["stops"]
    assert isinstance(error, FloatingPointError)


def test_close_cancels_the_task_and_play_then_does_nothing():
    trainer, lab, _, calls = trainer_for(pace=None)

    async def scenario():
        trainer.play()
        while lab.steps_done < 10:
            await asyncio.sleep(0)
        trainer.close()
        with pytest.raises(asyncio.CancelledError):
            await trainer.task

    asyncio.run(scenario())
    steps = lab.steps_done
    assert trainer.play() is False and lab.steps_done == steps
    assert calls["stops"] == [None]               # on_stop still runs once, without an error


def test_a_machine_that_falls_behind_does_not_race_to_catch_up():
    trainer, lab, clock, _ = trainer_for(pace=10.0, step_seconds=0.0)

    async def scenario():
        trainer.play()
        while lab.steps_done < 3:
            await asyncio.sleep(0)
        clock.now += 5.0                          # the kernel was busy for 5 s
        before = lab.steps_done
        while lab.steps_done == before:
            await asyncio.sleep(0)
        trainer.pause()
        await trainer.wait()
        return before

    before = asyncio.run(scenario())
    # 50 steps fell due in those 5 s: it takes one or two and goes on at 10 per second
    assert 1 <= lab.steps_done - before <= 2
