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
# no `from __future__ import annotations`: it would leave the name annotations in
# dir(punctual.asyncio); every other import is private too
import asyncio as _asyncio
import select as _select
import selectors as _selectors
import typing as _typing

from . import _punctual

__all__ = ["sleep", "LOOP_MARGIN", "PRECISE_LOOP_MARGIN", "PreciseEpollSelector", "new_event_loop",
           "EventLoopPolicy", "run"]
_DEFAULT_PRECISION = _punctual.DEFAULT_PRECISION_NS / 1e9

#: Seconds before the deadline at which the loop's timer hands over to the precise wait:
#: the loop's rounding to whole ms plus its usual wakeup latency.
LOOP_MARGIN: float = 0.002
#: The same on a punctual loop: the loop's work between its timer and the woken task.
PRECISE_LOOP_MARGIN: float = 0.00005

_T = _typing.TypeVar("_T")


async def sleep(
    seconds: float,
    result: _typing.Optional[_T] = None,
    *,
    precision: float = _DEFAULT_PRECISION,
    margin: _typing.Optional[float] = None,
) -> _typing.Optional[_T]:
    """asyncio.sleep(seconds, result), never early and late by at most precision seconds
    (10 us by default) unless the CPU stalls. Awaits the loop's timer until margin seconds
    before the deadline (None: PRECISE_LOOP_MARGIN on a loop this module made, else
    LOOP_MARGIN), then blocks the loop for the rest (see the module's note). Cancellable
    until the last stretch. ValueError, OverflowError or TypeError for bad arguments, as
    punctual.sleep."""
    ns = _punctual.seconds_to_ns(seconds, "sleep(): seconds")
    precision_ns = _punctual.seconds_to_ns(precision, "sleep(): precision")
    if margin is None:
        precise = isinstance(_asyncio.get_running_loop(), _PreciseLoop)
        margin = PRECISE_LOOP_MARGIN if precise else LOOP_MARGIN
    margin_ns = _punctual.seconds_to_ns(margin, "sleep(): margin")
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
    Waits without a timeout, or with none left, are epoll's own. It uses the selector's
    public API alone (fileno(), get_map()), so it holds on any Python's selectors."""

    def __init__(self, precision: float = _DEFAULT_PRECISION) -> None:
        self.precision_ns = _punctual.seconds_to_ns(precision, "PreciseEpollSelector(): precision")
        super().__init__()

    def select(
        self, timeout: _typing.Optional[float] = None
    ) -> _typing.List[_typing.Tuple[_selectors.SelectorKey, int]]:
        if timeout is None or timeout <= 0:
            return super().select(timeout)
        deadline = _punctual.now_ns() + _punctual.seconds_to_ns(timeout, "select(): timeout")
        keys = self.get_map()
        events = _punctual.epoll_wait_until(self.fileno(), max(len(keys), 1), deadline,
                                            self.precision_ns)
        ready = []
        for fd, event in events:  # as EpollSelector.select maps them
            mask = 0
            if event & ~_select.EPOLLIN:
                mask |= _selectors.EVENT_WRITE
            if event & ~_select.EPOLLOUT:
                mask |= _selectors.EVENT_READ
            key = keys.get(fd)
            if key:
                ready.append((key, mask & key.events))
        return ready


class _PreciseLoop(_asyncio.SelectorEventLoop):
    """The loop new_event_loop() makes: sleep() knows its timers are precise by its class."""


def new_event_loop(precision: float = _DEFAULT_PRECISION) -> _asyncio.AbstractEventLoop:
    """An asyncio loop whose timers fire never early and late by at most precision seconds
    (10 us by default) unless the CPU stalls: a SelectorEventLoop over
    PreciseEpollSelector."""
    _punctual.seconds_to_ns(precision, "new_event_loop(): precision")
    return _PreciseLoop(PreciseEpollSelector(precision))


class EventLoopPolicy(_asyncio.DefaultEventLoopPolicy):
    """The default policy, with punctual loops: asyncio.set_event_loop_policy(
    punctual.asyncio.EventLoopPolicy()) makes asyncio.run's loops precise."""

    def __init__(self, precision: float = _DEFAULT_PRECISION) -> None:
        super().__init__()
        self._precision = precision
        # bad input fails here, not at the first loop
        _punctual.seconds_to_ns(precision, "EventLoopPolicy(): precision")

    def new_event_loop(self) -> _asyncio.AbstractEventLoop:
        return new_event_loop(self._precision)


def run(
    main: _typing.Coroutine[_typing.Any, _typing.Any, _T],
    *,
    debug: _typing.Optional[bool] = None,
    precision: float = _DEFAULT_PRECISION,
) -> _T:
    """asyncio.run(main, debug=debug) on a punctual loop: True or False sets the loop's
    debug mode; None is asyncio.run's default (from 3.11 the loop's own: on with
    PYTHONASYNCIODEBUG or -X dev; before, off)."""
    import sys  # here, not in dir(punctual.asyncio); a module mypy knows by this name

    _punctual.seconds_to_ns(precision, "run(): precision")
    if sys.version_info >= (3, 11):
        with _asyncio.Runner(debug=debug,
                             loop_factory=lambda: new_event_loop(precision)) as runner:
            return runner.run(main)
    old = _asyncio.get_event_loop_policy()
    _asyncio.set_event_loop_policy(EventLoopPolicy(precision))
    try:
        return _asyncio.run(main) if debug is None else _asyncio.run(main, debug=debug)
    finally:
        _asyncio.set_event_loop_policy(old)
