# SPDX-License-Identifier: MIT
"""punctual: libpunctual for Python programs.

Precise sleeps (never early, late by at most a precision you choose), the
calling thread's timer slack, and a CPU count that honours the cgroup CPU quota
(os.cpu_count() and os.process_cpu_count() do not: CPython issue #80235). Time
is int nanoseconds on CLOCK_MONOTONIC, the clock of time.monotonic() and of
asyncio's loop.time(). Waits release the GIL; a KeyboardInterrupt ends a long
one within 25 ms. A bad argument raises TypeError (a wrong type), ValueError (a
negative or NaN value, a budget outside [0, 1]) or OverflowError (a duration or
a deadline too large for int64 ns), naming the function and the argument; a
failure of the library raises OSError with its errno.

    import punctual
    pool_size = punctual.cpu_count()           # 2 in a container limited to 1.5 CPUs
    deadline = punctual.now_ns()
    for _ in range(10):
        deadline += 1_000_000                  # every 1 ms, without drift
        punctual.sleep_until(deadline, precision_ns=20_000)

punctual.asyncio.sleep() is the same for a coroutine; `python -m punctual`
shows the CPU count and a sample of sleep lateness.
"""
# no `from __future__ import annotations`: it would leave the name annotations in
# dir(punctual); the module's own names are its API, the rest private
import typing as _typing

from . import _punctual

__all__ = [
    "now_ns", "cpu_count", "cpu_info", "sleep_until", "sleep", "slack_get", "slack_set",
    "get_budget", "set_budget", "sleep_stats", "DEFAULT_PRECISION_NS", "Budget",
]
__version__: str = _punctual.LIBRARY_VERSION

#: The precision of a sleep that names none: 10 us (what `punctual run --precise` uses).
DEFAULT_PRECISION_NS: int = _punctual.DEFAULT_PRECISION_NS

#: A CPU budget for spinning: a fraction of the thread's time in [0, 1] (0: never spin,
#: the kernel alone; 1: precision at any cost), or "auto", the library's measured default
#: (spin only where more CPU still buys punctuality).
Budget = _typing.Union[float, str]


def _ppm(budget: _typing.Optional[Budget], func: str) -> _typing.Optional[int]:
    """A budget as the library's parts per million (-1: auto); None stays None."""
    return None if budget is None else _budget_ppm(budget, func)


def _budget_ppm(budget: Budget, func: str) -> int:
    """A budget as the library's parts per million (-1: auto); func names the caller in
    the messages."""
    if isinstance(budget, str):
        if budget == "auto":
            return _punctual.BUDGET_AUTO
        raise ValueError(f"{func}(): budget must be in [0, 1] or 'auto', got {budget!r}")
    if isinstance(budget, bool) or not isinstance(budget, (int, float)):
        raise TypeError(
            f"{func}(): budget must be a float in [0, 1] or 'auto', not {type(budget).__name__}")
    # compared as it is, never converted: NaN fails it, and so does an int too large for a
    # float (10**400), shown only where its repr is short
    if not 0 <= budget <= 1:
        if isinstance(budget, int) and abs(budget) >= 10**18:
            got = f"an int of {budget.bit_length()} bits"
        else:
            got = repr(budget)
        raise ValueError(f"{func}(): budget must be in [0, 1] or 'auto', got {got}")
    return round(budget * _punctual.BUDGET_FULL)


def now_ns() -> int:
    """CLOCK_MONOTONIC in ns, read through the vDSO (pn_now). Never goes backwards;
    time.monotonic_ns() reads the same clock."""
    return _punctual.now_ns()


def cpu_count(fresh: bool = False) -> int:
    """How many CPUs this process may use, >= 1: the affinity set and the cgroup CPU
    quota (v1 or v2, the tightest level up the tree), a fraction rounded up (1.5 -> 2).
    PUNCTUAL_CPU_COUNT=N overrides it and PUNCTUAL_CPU_ROUNDING=ceil|floor|nearest picks
    the rounding. The answer is cached for 20 ms (one atomic load while fresh, cheap in a
    loop); fresh=True evaluates it now."""
    return _punctual.cpu_count_fresh() if fresh else _punctual.cpu_count()


def cpu_info() -> _typing.Dict[str, _typing.Any]:
    """cpu_count() evaluated now, and why, as `punctual cpus --json` reports it: count,
    reason (one line), online, affinity, affinity_list, rounding, override, the cgroup
    (version, controller, path, dir, error, and the levels walked up from the process's
    cgroup, each with its path, quota_us, period_us, shares and error) and the limit (cpus,
    count, path and level of the tightest quota; None without one). None marks a value
    that is unknown or absent. Refreshes cpu_count()'s cache."""
    return _punctual.cpu_info()


def sleep_until(
    deadline_ns: int,
    precision_ns: int = DEFAULT_PRECISION_NS,
    budget: _typing.Optional[Budget] = None,
) -> None:
    """Sleeps until deadline_ns (now_ns()'s clock): returns at t >= deadline_ns, never
    before, and t <= deadline_ns + precision_ns unless the CPU stalls. A past deadline
    returns at once. The library sleeps in the kernel with a fitting timer slack and, only
    where the precision needs it and the budget allows, spins the last stretch.

    budget applies to this call only (None: the thread's, see set_budget). Raises
    TypeError for a non-int, ValueError for a negative value, OverflowError past int64.
    Releases the GIL while it waits; a signal handler (KeyboardInterrupt) runs within
    25 ms, its exception ending the wait."""
    _punctual.sleep_until(deadline_ns, precision_ns, _ppm(budget, "sleep_until"))


def sleep(
    seconds: float,
    precision: float = DEFAULT_PRECISION_NS / 1e9,
    budget: _typing.Optional[Budget] = None,
) -> None:
    """time.sleep(seconds), never early and late by at most precision seconds (10 us by
    default) unless the CPU stalls; budget as in sleep_until. ValueError for a negative or
    NaN value, OverflowError for an infinite one or one over 146 years, TypeError for a
    non-number."""
    ns = _punctual.seconds_to_ns(seconds, "sleep(): seconds")
    precision_ns = _punctual.seconds_to_ns(precision, "sleep(): precision")
    _punctual.sleep_until(_punctual.now_ns() + ns, precision_ns, _ppm(budget, "sleep"))


def slack_get() -> int:
    """The calling thread's timer slack in ns (50 us unless changed): how late the kernel
    may wake its timers (time.sleep, select, epoll) to coalesce wakeups."""
    return _punctual.slack_get()


def slack_set(ns: int) -> None:
    """Sets the calling thread's timer slack to ns; 0 puts back the thread's default.
    Threads it starts afterwards inherit it. TypeError for a non-int, ValueError if
    ns < 0, OverflowError past int64."""
    _punctual.slack_set(ns)


def get_budget() -> Budget:
    """The calling thread's spin budget: its own, else the process's default; a fraction
    of its time, or "auto"."""
    ppm = _punctual.budget_get()
    return "auto" if ppm == _punctual.BUDGET_AUTO else ppm / _punctual.BUDGET_FULL


def set_budget(budget: Budget) -> None:
    """Sets the calling thread's spin budget for its later sleeps: a fraction of its time
    in [0, 1] that spinning may use (in any 1.07 s), or "auto" to follow the process's
    default (PUNCTUAL_BUDGET, else the measured default). TypeError for a non-number,
    ValueError outside [0, 1] or NaN."""
    _punctual.budget_set(_budget_ppm(budget, "set_budget"))


def sleep_stats() -> _typing.Dict[str, int]:
    """The calling thread's sleeps so far (pn_sleep_stats): sleeps, past, early (stays
    0), late (beyond the precision), kernel_only, slept_ns, spun_ns, late_p50_ns,
    late_p99_ns (-1 before any sleep), late_budget (of late, those the spin budget
    caused), shared_waits (waits that did not spin because the CPU is shared)."""
    return _punctual.sleep_stats()


def __getattr__(name: str) -> _typing.Any:
    # punctual.asyncio on first use: importing asyncio costs tens of ms a program
    # that never awaits should not pay
    if name == "asyncio":
        import importlib

        return importlib.import_module(".asyncio", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
