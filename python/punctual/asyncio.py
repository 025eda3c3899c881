# SPDX-License-Identifier: MIT
"""punctual.asyncio: a precise sleep for coroutines, on any asyncio event loop.

asyncio's timers wake late: the loop rounds its epoll timeout up to whole
milliseconds, and the kernel adds the timer slack (50 us) and the wakeup
latency. punctual.asyncio.sleep() lets the loop's own timer run until `margin`
(2 ms by default) before the deadline, then ends the wait precisely with the
library, in the loop's thread, blocking the loop for that last stretch (about
1 ms on average, with the GIL released so other threads run). Other tasks wait
through it; that is the price of the precision. A smaller margin blocks less and
is late more often (whenever the loop's own wakeup is later than the margin); a
sleep shorter than the margin blocks for all of it. The CPU it uses is the
library's: kernel sleeps, and a short spin only where the precision needs it.
"""
from __future__ import annotations

import asyncio as _asyncio
from typing import Optional, TypeVar

from . import _punctual

__all__ = ["sleep", "LOOP_MARGIN"]

#: Seconds before the deadline at which the loop's timer hands over to the precise wait:
#: the loop's rounding to whole ms plus its usual wakeup latency.
LOOP_MARGIN: float = 0.002

T = TypeVar("T")


async def sleep(
    seconds: float,
    result: Optional[T] = None,
    *,
    precision: float = _punctual.DEFAULT_PRECISION_NS / 1e9,
    margin: float = LOOP_MARGIN,
) -> Optional[T]:
    """asyncio.sleep(seconds, result), never early and late by at most precision seconds
    (10 us by default) unless the CPU stalls. Awaits the loop's timer until margin seconds
    before the deadline, then blocks the loop for the rest (see the module's note).
    Cancellable until the last stretch. ValueError, OverflowError or TypeError for bad
    arguments, as punctual.sleep."""
    ns = _punctual.seconds_to_ns(seconds, "seconds")
    precision_ns = _punctual.seconds_to_ns(precision, "precision")
    margin_ns = _punctual.seconds_to_ns(margin, "margin")
    deadline = _punctual.now_ns() + ns
    # loop.time() is time.monotonic(), CLOCK_MONOTONIC: the deadline's clock
    early = deadline - margin_ns - _punctual.now_ns()
    await _asyncio.sleep(early / 1e9 if early > 0 else 0)
    _punctual.sleep_until(deadline, precision_ns)
    return result
