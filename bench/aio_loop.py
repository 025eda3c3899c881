# SPDX-License-Identifier: MIT
"""aio_loop.py: Python's asyncio and selectors, unmodified, for `punctual run --precise`
(asyncio waits in epoll_wait with its timeout rounded up to whole ms).

  python3 aio_loop.py bench LABEL   asyncio.sleep and loop.call_later loops at 1 ms (1000
      after 50 to warm up) and 10 ms (150); one Markdown row each: lateness against the
      instant asked for (the call + the delay, on time.monotonic_ns) p50 and p99 in us,
      and the CPU share (time.process_time / wall time, %).
  python3 aio_loop.py check         deterministic output (order, counts, results) for the
      tests; "early" counts what returns or runs before Python guarantees (a selector's
      select(t) with nothing ready before t has passed: Python rounds t up to the call's
      unit; an asyncio callback before its time minus the loop's clock resolution, which
      is how asyncio decides a timer is due): must be 0. On stderr, how many calls the
      shim made precise.
"""
import asyncio
import os
import selectors
import sys
import threading
import time


def pct(a, q):
    s = sorted(a)
    return s[min(len(s) - 1, int(len(s) * q))]


async def sleeps(d, n, warm):
    late = []
    for i in range(n + warm):
        t0 = time.monotonic_ns()
        await asyncio.sleep(d / 1e3)
        if i >= warm:
            late.append(time.monotonic_ns() - t0 - d * 1000000)
    return late


async def call_laters(d, n, warm):
    loop = asyncio.get_running_loop()
    late = []
    for i in range(n + warm):
        fut = loop.create_future()
        t0 = time.monotonic_ns()
        loop.call_later(d / 1e3, lambda f=fut: f.set_result(time.monotonic_ns()))
        t1 = await fut
        if i >= warm:
            late.append(t1 - t0 - d * 1000000)
    return late


async def bench(label):
    for name, fn in (("asyncio.sleep", sleeps), ("loop.call_later", call_laters)):
        for d, n in ((1, 1000), (10, 150)):
            c0, w0 = time.process_time_ns(), time.monotonic_ns()
            late = await fn(d, n, 50)
            cpu = 100 * (time.process_time_ns() - c0) / (time.monotonic_ns() - w0)
            print(f"| {name}({d} ms) | {label} | {pct(late, 0.5) / 1e3:.1f} | "
                  f"{pct(late, 0.99) / 1e3:.1f} | {cpu:.0f} |")


early = 0


def timed(fn, t):
    """fn() must not return before t seconds (nothing is ready); its result."""
    global early
    t0 = time.monotonic_ns()
    r = fn()
    if time.monotonic_ns() - t0 < t * 1e9:
        early += 1
    return r


def check_selectors():
    rd, wr = os.pipe()
    kinds = [("EpollSelector", selectors.EpollSelector, (0.001, 0.0021)),
             ("PollSelector", selectors.PollSelector, (0.001, 0.003)),
             ("SelectSelector", selectors.SelectSelector, (0.0001, 0.00125))]
    for name, cls, timeouts in kinds:
        sel = cls()
        key = sel.register(rd, selectors.EVENT_READ)
        empty = sum(1 for _ in range(100) for t in timeouts if timed(lambda: sel.select(t), t) == [])
        print(f"{name}.select({', '.join(str(t) for t in timeouts)}) on an idle pipe: "
              f"{empty} of 200 returned nothing")
        print(f"{name}.select(0): {sel.select(0)}")
        os.write(wr, b"x")
        r = sel.select(0.001)
        print(f"{name}.select(0.001), ready pipe: {[(k.fd == rd, ev) for k, ev in r]}")
        os.read(rd, 1)
        th = threading.Thread(target=lambda: (time.sleep(0.002), os.write(wr, b"y")))
        th.start()
        r = sel.select(30)
        th.join()
        os.read(rd, 1)
        print(f"{name}.select(30), pipe written after 2 ms: {[(k == key, ev) for k, ev in r]}")
        sel.close()
    os.close(rd)
    os.close(wr)


async def check_asyncio():
    global early
    loop = asyncio.get_running_loop()
    res = time.get_clock_info("monotonic").resolution

    def due(when, log, name):
        if loop.time() < when - res:
            early += 1
        log.append(name)

    # Chains of asyncio.sleep: never sooner than asked.
    for d, n in ((0.001, 200), (0.002, 50), (0.01, 10)):
        for _ in range(n):
            t0 = time.monotonic()
            await asyncio.sleep(d)
            if time.monotonic() - t0 < d - res:
                early += 1
        print(f"asyncio.sleep({d}) chain: {n} sleeps")
    # call_at from one base: callbacks run in the order of their times.
    log, base = [], loop.time()
    done = loop.create_future()
    for k, name in ((5, "e"), (1, "a"), (3, "c"), (2, "b"), (4, "d")):
        loop.call_at(base + k * 0.001, due, base + k * 0.001, log, name)
    cancelled = loop.call_at(base + 0.0025, due, base + 0.0025, log, "cancelled")
    cancelled.cancel()
    loop.call_at(base + 0.006, done.set_result, None)
    await done
    print(f"call_at order: {' '.join(log)}")
    # A timeout: wait_for on a future nobody sets.
    try:
        await asyncio.wait_for(loop.create_future(), 0.005)
        print("wait_for: no timeout")
    except asyncio.TimeoutError:
        print("wait_for(0.005): TimeoutError")
    # A reader during a pending timer: a pipe written by a thread after 2 ms.
    rd, wr = os.pipe()
    got = loop.create_future()
    loop.add_reader(rd, lambda: got.set_result(os.read(rd, 8)))
    guard = loop.call_later(30, lambda: got.set_result(b"timeout"))
    th = threading.Thread(target=lambda: (time.sleep(0.002), os.write(wr, b"ping")))
    th.start()
    print(f"add_reader during a 30 s timer: {(await got).decode()}")
    th.join()
    guard.cancel()
    loop.remove_reader(rd)
    os.close(rd)
    os.close(wr)


def shim_calls():
    """How many calls libpunctual-preload.so made precise here, or "absent"."""
    import ctypes
    try:
        f = ctypes.CDLL(None).punctual_preload_handled
    except AttributeError:
        return "absent"
    f.restype = ctypes.c_ulong
    return f"loaded, {f()} calls made precise"


def main():
    if len(sys.argv) >= 2 and sys.argv[1] == "bench":
        asyncio.run(bench(sys.argv[2] if len(sys.argv) > 2 else "python3"))
    elif sys.argv[1:] == ["check"]:
        check_selectors()
        asyncio.run(check_asyncio())
        print(f"early: {early}")
        print(f"shim: {shim_calls()}", file=sys.stderr)
    else:
        print("usage: aio_loop.py bench LABEL | check", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
