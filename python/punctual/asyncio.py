# SPDX-License-Identifier: MIT
"""punctual.asyncio: precise waits for coroutines.

asyncio's timers wake late: the loop rounds its epoll timeout up to whole
milliseconds, and the kernel adds the timer slack (50 us) and the wakeup
latency. Two ways out:

- A punctual loop (new_event_loop(), EventLoopPolicy, run()): its selector waits
  with pn_epoll_wait_until, so every timer of the loop (asyncio.sleep,
  call_later, wait_for's timeouts) fires never early and late by at most the
  loop's precision, and an fd that becomes ready ends the wait at once. The CPU
  it costs is the library's: kernel waits, and a short spin before a deadline
  only where the precision needs it and the budget allows (punctual.set_budget).
- sleep(), on any loop: the loop's own timer until `margin` (2 ms) before the
  deadline, then the precise wait in the loop's thread, blocking the loop for
  that last stretch (about 1-2 ms, with the GIL released so that other threads
  run; other tasks of the loop wait through it). A smaller margin blocks less
  and is late more often (whenever the loop's own wakeup is later than it); a
  sleep shorter than the margin blocks for all of it. On a punctual loop the
  margin is 50 us: its timer is precise already, and the margin covers only the
  loop's own work between a timer and the task it wakes.
"""
from __future__ import annotations

import asyncio as _asyncio
import selectors as _selectors
from typing import Any, Coroutine, Optional, TypeVar

from . import _punctual

__all__ = ["sleep", "LOOP_MARGIN", "PRECISE_LOOP_MARGIN", "PreciseEpollSelector", "new_event_loop",
           "EventLoopPolicy", "run"]
_DEFAULT_PRECISION = _punctual.DEFAULT_PRECISION_NS / 1e9

#: Seconds before the deadline at which the loop's timer hands over to the precise wait:
#: the loop's rounding to whole ms plus its usual wakeup latency.
LOOP_MARGIN: float = 0.002
#: The same on a punctual loop: the loop's work between its timer and the woken task.
PRECISE_LOOP_MARGIN: float = 0.00005

T = TypeVar("T")


async def sleep(
    seconds: float,
    result: Optional[T] = None,
    *,
    precision: float = _DEFAULT_PRECISION,
    margin: Optional[float] = None,
) -> Optional[T]:
    """asyncio.sleep(seconds, result), never early and late by at most precision seconds
    (10 us by default) unless the CPU stalls. Awaits the loop's timer until margin seconds
    before the deadline (None: LOOP_MARGIN, or PRECISE_LOOP_MARGIN on a punctual loop),
    then blocks the loop for the rest (see the module's note). Cancellable until the last
    stretch. ValueError, OverflowError or TypeError for bad arguments, as punctual.sleep."""
    ns = _punctual.seconds_to_ns(seconds, "seconds")
    precision_ns = _punctual.seconds_to_ns(precision, "precision")
    if margin is None:
        precise = isinstance(getattr(_asyncio.get_running_loop(), "_selector", None),
                             PreciseEpollSelector)
        margin = PRECISE_LOOP_MARGIN if precise else LOOP_MARGIN
    margin_ns = _punctual.seconds_to_ns(margin, "margin")
    deadline = _punctual.now_ns() + ns
    # loop.time() is time.monotonic(), CLOCK_MONOTONIC: the deadline's clock
    early = deadline - margin_ns - _punctual.now_ns()
    await _asyncio.sleep(early / 1e9 if early > 0 else 0)
    _punctual.sleep_until(deadline, precision_ns)
    return result


class PreciseEpollSelector(_selectors.EpollSelector):
    """selectors.EpollSelector whose timed waits are pn_epoll_wait_until's: never [] before
    the timeout, late by at most precision seconds unless the CPU stalls (the plain one
    rounds the timeout up to whole ms, then wakes by the slack and the latency later).
    Waits without a timeout, or with none left, are epoll's own."""

    def __init__(self, precision: float = _DEFAULT_PRECISION) -> None:
        self.precision_ns = _punctual.seconds_to_ns(precision, "precision")
        super().__init__()

    def select(self, timeout: Optional[float] = None) -> list:
        if timeout is None or timeout <= 0:
            return super().select(timeout)
        deadline = _punctual.now_ns() + _punctual.seconds_to_ns(timeout, "timeout")
        max_ev = max(len(self._fd_to_key), 1)
        events = _punctual.epoll_wait_until(self._selector.fileno(), max_ev, deadline,
                                            self.precision_ns)
        ready = []
        for fd, event in events:  # as EpollSelector.select maps them
            mask = 0
            if event & ~self._EVENT_READ:
                mask |= _selectors.EVENT_WRITE
            if event & ~self._EVENT_WRITE:
                mask |= _selectors.EVENT_READ
            key = self._key_from_fd(fd)
            if key:
                ready.append((key, mask & key.events))
        return ready


def new_event_loop(precision: float = _DEFAULT_PRECISION) -> _asyncio.AbstractEventLoop:
    """An asyncio loop whose timers fire never early and late by at most precision seconds
    (10 us by default) unless the CPU stalls: a SelectorEventLoop over
    PreciseEpollSelector."""
    return _asyncio.SelectorEventLoop(PreciseEpollSelector(precision))


class EventLoopPolicy(_asyncio.DefaultEventLoopPolicy):
    """The default policy, with punctual loops: asyncio.set_event_loop_policy(
    punctual.asyncio.EventLoopPolicy()) makes asyncio.run's loops precise."""

    def __init__(self, precision: float = _DEFAULT_PRECISION) -> None:
        super().__init__()
        self._precision = precision
        _punctual.seconds_to_ns(precision, "precision")  # bad input fails here, not later

    def new_event_loop(self) -> _asyncio.AbstractEventLoop:
        return new_event_loop(self._precision)


def run(main: Coroutine[Any, Any, T], *, precision: float = _DEFAULT_PRECISION) -> T:
    """asyncio.run(main) on a punctual loop."""
    _punctual.seconds_to_ns(precision, "precision")
    if hasattr(_asyncio, "Runner"):  # 3.11+
        with _asyncio.Runner(loop_factory=lambda: new_event_loop(precision)) as runner:
            return runner.run(main)
    old = _asyncio.get_event_loop_policy()
    _asyncio.set_event_loop_policy(EventLoopPolicy(precision))
    try:
        return _asyncio.run(main)
    finally:
        _asyncio.set_event_loop_policy(old)
