# SPDX-License-Identifier: MIT
"""bench_python.py [N]: Python's sleeps beside the punctual package's, at 1 ms.

Variants, taking turns sleep by sleep (so that each sees the same moments of the
machine), N each (2000 by default) after 100 rounds to warm up, all in one thread:
time.sleep; punctual.sleep (the default precision, 10 us, and budget) and at 1 us with a
budget of 100% (precision at any cost); asyncio.sleep and punctual.asyncio.sleep on a
plain asyncio loop and on a punctual loop (punctual.asyncio.new_event_loop, 10 us); and a
spin on time.monotonic_ns() (the floor: what a Python thread that never sleeps sees).
Each variant runs in a thread of its own (the library learns and budgets per thread),
handed the turn by the main thread; a loop variant is one run_until_complete of a
coroutine that times its own await.
Lateness = the clock after the call - (the clock before it + 1 ms), in us; CPU % = the
thread's CPU time (time.thread_time_ns, the loop's work included) over the variant's wall
time. Prints Markdown.
"""
import asyncio
import os
import sys
import threading
import time

import punctual
import punctual.asyncio as paio

LENGTH = 0.001
LENGTH_NS = 1_000_000


def spin(seconds):
    end = time.monotonic_ns() + round(seconds * 1e9)
    while time.monotonic_ns() < end:
        pass


def timed(call):
    c0 = time.thread_time_ns()
    t0 = time.monotonic_ns()
    call()
    t1 = time.monotonic_ns()
    return t1 - t0, time.thread_time_ns() - c0


async def timed_await(make):
    c0 = time.thread_time_ns()
    t0 = time.monotonic_ns()
    await make()
    t1 = time.monotonic_ns()
    return t1 - t0, time.thread_time_ns() - c0


def on(loop, make):
    return lambda: loop.run_until_complete(timed_await(make))


def variants():
    """(name, a function sleeping LENGTH and returning (wall, cpu) ns) in turn order. Each
    runs in a thread of its own: the library learns and budgets per thread, and a loop
    belongs to one thread."""
    loops = threading.local()

    def loop(new):
        if not hasattr(loops, "loop"):
            loops.loop = new()
        return loops.loop

    return [
        ("time.sleep", lambda: timed(lambda: time.sleep(LENGTH))),
        ("punctual.sleep (10 us, auto budget)", auto),
        ("punctual.sleep (1 us, budget 100%)",
         lambda: timed(lambda: punctual.sleep(LENGTH, precision=1e-6, budget=1.0))),
        ("asyncio.sleep, plain loop",
         lambda: on(loop(asyncio.new_event_loop), lambda: asyncio.sleep(LENGTH))()),
        ("punctual.asyncio.sleep, plain loop (2 ms margin)",
         lambda: on(loop(asyncio.new_event_loop), lambda: paio.sleep(LENGTH))()),
        ("asyncio.sleep, punctual loop (10 us)",
         lambda: on(loop(paio.new_event_loop), lambda: asyncio.sleep(LENGTH))()),
        ("punctual.asyncio.sleep, punctual loop (50 us margin)",
         lambda: on(loop(paio.new_event_loop), lambda: paio.sleep(LENGTH))()),
        ("spin on monotonic_ns (floor)", lambda: timed(lambda: spin(LENGTH))),
    ]


AUTO_STATS = {}


def auto():
    r = timed(lambda: punctual.sleep(LENGTH))
    AUTO_STATS.update(punctual.sleep_stats())
    return r


class Turns(threading.Thread):
    """Runs fn once each time it is handed the turn, in its own thread."""

    def __init__(self, fn):
        super().__init__(daemon=True)
        self.fn, self.go, self.done, self.result = fn, threading.Event(), threading.Event(), None
        self.start()

    def run(self):
        while True:
            self.go.wait()
            self.go.clear()
            if self.fn is None:
                return
            self.result = self.fn()
            self.done.set()

    def turn(self):
        self.go.set()
        self.done.wait()
        self.done.clear()
        return self.result


def measure(n, warm):
    workers = [(name, Turns(fn)) for name, fn in variants()]
    late = {name: [] for name, _ in workers}
    cpu = dict.fromkeys(late, 0)
    wall = dict.fromkeys(late, 0)
    early = dict.fromkeys(late, 0)
    for i in range(warm + n):
        for name, w in workers:
            took, used = w.turn()
            if i < warm:
                continue
            late[name].append(took - LENGTH_NS)
            early[name] += took < LENGTH_NS
            cpu[name] += used
            wall[name] += took
    for _, w in workers:
        w.fn = None
        w.go.set()
        w.join()
    return late, cpu, wall, early


def pct(sorted_values, q):
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def main():
    args = [a for a in sys.argv[1:] if a != "--beside-hogs"]
    hogs = len(args) < len(sys.argv) - 1
    n = int(args[0]) if args else 2000
    late, cpu, wall, early = measure(n, 100)
    if hogs:
        print("### Beside CPU hogs")
        print()
        print("The same, beside stress-ng --cpu %d (two hogs per CPU, unpinned), as root:"
              % (2 * (os.cpu_count() or 1)))
        print("where punctual's waits see the CPU shared, they wait in the kernel under")
        print("SCHED_FIFO for the wait alone (docs/DESIGN.md, \"Real time for the wait alone\").")
        print()
    else:
        print("## Python: time.sleep, asyncio.sleep and the punctual package (bench_python.py)")
        print()
    print(f"1 ms sleeps, {n} of each after 100 rounds to warm up, the variants taking turns")
    print("sleep by sleep, each in a thread of its own, Python %s, the package"
          % sys.version.split()[0])
    print(f"{punctual.__version__} (`pip install ./python`). Lateness = the return - (the")
    print("call + 1 ms) on time.monotonic_ns, in us; early = returns before it; CPU % = the")
    print("thread's CPU time over the variant's wall time (a loop's own work included). The")
    print("punctual loop is punctual.asyncio.new_event_loop(); punctual.asyncio.sleep blocks")
    print("the loop for the margin's last stretch. The spin is the floor: what a thread that")
    print("never sleeps sees of the clock and of losing its CPU.")
    print()
    print("| variant | p50 us | p99 us | max us | early | CPU % |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, values in late.items():
        s = sorted(values)
        print("| %s | %.1f | %.1f | %.1f | %d | %.1f |" % (
            name, pct(s, 0.5) / 1e3, pct(s, 0.99) / 1e3, s[-1] / 1e3, early[name],
            100.0 * cpu[name] / wall[name]))
    ts = sorted(late["time.sleep"])
    ps = sorted(late["punctual.sleep (10 us, auto budget)"])
    print()
    print("punctual.sleep's p50 is %.1fx below time.sleep's in the same run. Its thread's"
          % (pct(ts, 0.5) / max(pct(ps, 0.5), 1)))
    st = AUTO_STATS
    print("pn_sleep_stats: %d sleeps, %d kernel only, %d not spun as the CPU was shared (a"
          % (st["sleeps"], st["kernel_only"], st["shared_waits"]))
    print("spin then loses its CPU to the tasks that share it), %d late beyond 10 us."
          % st["late"])
    print()


if __name__ == "__main__":
    main()
