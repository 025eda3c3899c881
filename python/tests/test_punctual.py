# SPDX-License-Identifier: MIT
"""test_punctual.py: the package's behaviour (unittest, run by python/tests/run.sh).

Invariants, never speeds: no sleep or punctual loop timer returns early (by now_ns() and
by time.monotonic_ns(), the same clock), bad input raises the documented exception with a
message naming the function and the argument, the GIL is released while a sleep waits, a
ready fd ends a punctual loop's wait, the CPU count is cached and >= 1 and explained, the
slack and budget round-trip, a signal's handler runs during a long sleep at any distance
from its deadline (its KeyboardInterrupt ends it; a handler that returns leaves the sleep
never early), and the modules' namespaces hold their API alone.
"""
import asyncio
import decimal
import fractions
import json
import math
import os
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
import unittest

import punctual
import punctual.asyncio as paio

MS = 1_000_000
HERE = os.path.dirname(os.path.abspath(__file__))


class Clock(unittest.TestCase):
    def test_same_clock_as_monotonic(self):
        for _ in range(1000):
            a = time.monotonic_ns()
            n = punctual.now_ns()
            b = time.monotonic_ns()
            self.assertLessEqual(a, n)
            self.assertLessEqual(n, b)

    def test_never_backwards(self):
        last = punctual.now_ns()
        for _ in range(10000):
            n = punctual.now_ns()
            self.assertGreaterEqual(n, last)
            last = n


class Sleeps(unittest.TestCase):
    def test_sleep_until_never_early(self):
        for precision in (0, 1000, 10_000, MS):
            for length in (0, 50_000, 300_000, MS, 3 * MS):
                for _ in range(10):
                    d = punctual.now_ns() + length
                    punctual.sleep_until(d, precision_ns=precision)
                    self.assertGreaterEqual(punctual.now_ns(), d)
                    self.assertGreaterEqual(time.monotonic_ns(), d)
        self.assertEqual(punctual.sleep_stats()["early"], 0)

    def test_sleep_never_early(self):
        for seconds in (0, 0.0001, 0.001, 0.0025):
            for budget in (None, 0, 0.5, 1.0, "auto"):
                t0 = time.monotonic_ns()
                punctual.sleep(seconds, precision=1e-6, budget=budget)
                self.assertGreaterEqual(time.monotonic_ns() - t0, math.ceil(seconds * 1e9))

    def test_past_deadline_returns(self):
        punctual.sleep_until(0)
        punctual.sleep_until(punctual.now_ns() - MS, 0)
        punctual.sleep(0)

    def test_long_sleep_in_chunks_never_early(self):
        # past the extension's 50 ms chunks: the last one still ends at the deadline
        d = punctual.now_ns() + 130 * MS
        punctual.sleep_until(d, 1000)
        self.assertGreaterEqual(time.monotonic_ns(), d)

    def test_gil_released(self):
        stamps = []
        stop = threading.Event()

        def other():
            while not stop.is_set():
                stamps.append(time.monotonic_ns())
                time.sleep(0.001)

        t = threading.Thread(target=other)
        t.start()
        try:
            time.sleep(0.02)  # let it start
            start = punctual.now_ns()
            punctual.sleep_until(start + 200 * MS, 1000, budget=1.0)
            end = punctual.now_ns()
        finally:
            stop.set()
            t.join()
        # with the GIL held through the wait, the other thread could not have run in the
        # middle of it
        inside = [s for s in stamps if start + 20 * MS < s < end - 20 * MS]
        self.assertTrue(inside, "no other thread ran during a 200 ms sleep")


class BadInput(unittest.TestCase):
    def test_sleep_until(self):
        cases = [(-1, ValueError), (float("nan"), TypeError), (1.5, TypeError),
                 ("x", TypeError), (None, TypeError), (2**63, OverflowError),
                 (-(2**70), ValueError), (float("inf"), TypeError)]
        for bad, exc in cases:
            with self.subTest(bad=bad):
                with self.assertRaises(exc):
                    punctual.sleep_until(bad)
                with self.assertRaises(exc):
                    punctual.sleep_until(punctual.now_ns(), bad)

    def test_sleep(self):
        cases = [(-1, ValueError), (-0.5, ValueError), (float("nan"), ValueError),
                 (float("inf"), OverflowError), (1e300, OverflowError), (2**70, OverflowError),
                 (10**400, OverflowError), (-(10**400), ValueError), (-(10**5000), ValueError),
                 (float("-inf"), ValueError), (decimal.Decimal("-1"), ValueError),
                 ("1", TypeError), (b"1", TypeError), (None, TypeError), ([], TypeError),
                 (1j, TypeError)]
        for bad, exc in cases:
            with self.subTest(bad=bad):
                with self.assertRaises(exc):
                    punctual.sleep(bad)
                with self.assertRaises(exc):
                    punctual.sleep(0, precision=bad)

    def test_budget(self):
        for bad, exc in [(-0.1, ValueError), (1.5, ValueError), (float("nan"), ValueError),
                         (2, ValueError), (10**400, ValueError), (-(10**400), ValueError),
                         (10**5000, ValueError), (float("inf"), ValueError),
                         ("full", ValueError), (True, TypeError), ([], TypeError)]:
            with self.subTest(bad=bad):
                with self.assertRaises(exc):
                    punctual.sleep(0, budget=bad)
                with self.assertRaises(exc):
                    punctual.set_budget(bad)
        with self.assertRaises(TypeError):
            punctual.set_budget(None)
        with self.assertRaises(ValueError):
            punctual._punctual.sleep_until(0, 0, 2_000_000)

    def test_slack(self):
        for bad, exc in [(-1, ValueError), (-(2**64), ValueError), (2**64, OverflowError),
                         (1.0, TypeError), ("1", TypeError), (None, TypeError)]:
            with self.subTest(bad=bad):
                with self.assertRaises(exc):
                    punctual.slack_set(bad)

    def test_asyncio(self):
        for bad, exc in [(-1, ValueError), (float("nan"), ValueError), ("x", TypeError)]:
            with self.subTest(bad=bad):
                with self.assertRaises(exc):
                    asyncio.run(paio.sleep(bad))
                with self.assertRaises(exc):
                    asyncio.run(paio.sleep(0, precision=bad))


    def test_other_real_numbers(self):
        # what time.sleep takes: any real number, seconds as a Fraction or Decimal too
        for seconds in (fractions.Fraction(1, 2000), decimal.Decimal("0.0005"), True):
            t0 = time.monotonic_ns()
            punctual.sleep(seconds)
            self.assertGreaterEqual(time.monotonic_ns() - t0, math.ceil(float(seconds) * 1e9))

    def test_messages_name_the_function_and_the_argument(self):
        def loop_run(**kw):
            async def main():
                pass

            coro = main()
            try:
                paio.run(coro, **kw)
            finally:
                coro.close()

        cases = [
            (lambda: punctual.sleep(None), TypeError,
             "sleep(): seconds must be a real number, not NoneType"),
            (lambda: punctual.sleep(0, precision="x"), TypeError,
             "sleep(): precision must be a real number, not str"),
            (lambda: punctual.sleep(-1), ValueError, "sleep(): seconds must be >= 0, got -1"),
            (lambda: punctual.sleep(float("nan")), ValueError, "sleep(): seconds must not be NaN"),
            (lambda: punctual.sleep(10**400), OverflowError, "sleep(): seconds is too large"),
            (lambda: punctual.sleep(0, budget=[]), TypeError,
             "sleep(): budget must be a float in [0, 1] or 'auto', not list"),
            (lambda: punctual.sleep(0, budget=2), ValueError,
             "sleep(): budget must be in [0, 1] or 'auto', got 2"),
            (lambda: punctual.sleep_until(None), TypeError,
             "sleep_until(): deadline_ns must be an int of nanoseconds, not NoneType"),
            (lambda: punctual.sleep_until(0, 1.5), TypeError,
             "sleep_until(): precision_ns must be an int of nanoseconds, not float"),
            (lambda: punctual.sleep_until(-5), ValueError,
             "sleep_until(): deadline_ns must be >= 0, got -5"),
            (lambda: punctual.sleep_until(2**63), OverflowError,
             "sleep_until(): deadline_ns is beyond int64"),
            (lambda: punctual.sleep_until(0, budget="all"), ValueError,
             "sleep_until(): budget must be in [0, 1] or 'auto', got 'all'"),
            (lambda: punctual.slack_set(None), TypeError,
             "slack_set(): ns must be an int of nanoseconds, not NoneType"),
            (lambda: punctual.set_budget(None), TypeError,
             "set_budget(): budget must be a float in [0, 1] or 'auto', not NoneType"),
            (lambda: punctual.set_budget(10**400), ValueError,
             "set_budget(): budget must be in [0, 1] or 'auto', got an int of 1329 bits"),
            (lambda: punctual.set_budget(float("nan")), ValueError,
             "set_budget(): budget must be in [0, 1] or 'auto', got nan"),
            (lambda: asyncio.run(paio.sleep(None)), TypeError,
             "sleep(): seconds must be a real number, not NoneType"),
            (lambda: asyncio.run(paio.sleep(0, margin=-1)), ValueError,
             "sleep(): margin must be >= 0"),
            (lambda: paio.new_event_loop(None), TypeError,
             "new_event_loop(): precision must be a real number, not NoneType"),
            (lambda: paio.EventLoopPolicy(-1.0), ValueError,
             "EventLoopPolicy(): precision must be >= 0"),
            (lambda: paio.PreciseEpollSelector("x"), TypeError,
             "PreciseEpollSelector(): precision must be a real number, not str"),
            (lambda: loop_run(precision=None), TypeError,
             "run(): precision must be a real number, not NoneType"),
        ]
        for call, exc, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(exc) as cm:
                    call()
                self.assertTrue(str(cm.exception).startswith(message), str(cm.exception))


class CpuCount(unittest.TestCase):
    def test_cached_and_positive(self):
        n = punctual.cpu_count()
        self.assertIsInstance(n, int)
        self.assertGreaterEqual(n, 1)
        self.assertLessEqual(n, len(os.sched_getaffinity(0)))
        self.assertEqual([punctual.cpu_count() for _ in range(1000)], [n] * 1000)
        self.assertEqual(punctual.cpu_count(fresh=True), n)

    def test_override(self):
        env = dict(os.environ, PUNCTUAL_CPU_COUNT="3")
        out = subprocess.run([sys.executable, "-c", "import punctual; print(punctual.cpu_count())"],
                             env=env, stdout=subprocess.PIPE, check=True, text=True).stdout
        self.assertEqual(out.strip(), "3")

    def test_info_explains_the_count(self):
        info = punctual.cpu_info()
        self.assertEqual(info["count"], punctual.cpu_count(fresh=True))
        self.assertTrue(info["reason"])
        # the shape of `punctual cpus --json`
        self.assertEqual(set(info), {"count", "reason", "online", "affinity", "affinity_list",
                                     "rounding", "rounding_invalid", "override",
                                     "override_invalid", "cgroup", "limit"})
        self.assertEqual(set(info["cgroup"]),
                         {"version", "controller", "path", "dir", "error", "levels"})
        self.assertIn(info["rounding"], ("ceil", "floor", "nearest"))
        self.assertEqual(info["affinity"], len(os.sched_getaffinity(0)))
        for level in info["cgroup"]["levels"]:
            self.assertEqual(set(level), {"path", "quota_us", "period_us", "shares", "error"})
        if info["limit"] is not None:
            self.assertEqual(set(info["limit"]), {"cpus", "count", "path", "level"})
            self.assertGreater(info["limit"]["cpus"], 0)

    def test_info_reports_the_override(self):
        env = dict(os.environ, PUNCTUAL_CPU_COUNT="3", PUNCTUAL_CPU_ROUNDING="sideways")
        code = "import json, punctual; print(json.dumps(punctual.cpu_info()))"
        out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                             check=True, text=True).stdout
        info = json.loads(out)
        self.assertEqual((info["count"], info["override"]), (3, 3))
        self.assertEqual(info["rounding_invalid"], "sideways")


class SlackAndBudget(unittest.TestCase):
    def test_slack_round_trip(self):
        # in a thread of its own: 0 puts back the value the thread started with
        seen = []

        def run():
            first = punctual.slack_get()
            punctual.slack_set(12345)
            seen.append(punctual.slack_get())
            punctual.slack_set(0)
            seen.append(punctual.slack_get() == first)

        t = threading.Thread(target=run)
        t.start()
        t.join()
        self.assertEqual(seen, [12345, True])

    def test_slack_is_put_back_after_an_exception(self):
        # a handler's exception ends a long sleep between chunks: the thread's own slack
        # stands after it, as after a sleep that ran to its end
        class Stop(Exception):
            pass

        def stop(signum, frame):
            raise Stop()

        before = punctual.slack_get()
        old = signal.signal(signal.SIGALRM, stop)
        try:
            signal.setitimer(signal.ITIMER_REAL, 0.05)
            with self.assertRaises(Stop):
                punctual.sleep(3)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)
        self.assertEqual(punctual.slack_get(), before)
        punctual.sleep(0.001)
        self.assertEqual(punctual.slack_get(), before)

    def test_budget_per_call_is_put_back(self):
        punctual.set_budget(0.25)
        try:
            punctual.sleep(0.0005, budget=1.0)
            self.assertEqual(punctual.get_budget(), 0.25)
            punctual.set_budget(0)
            self.assertEqual(punctual.get_budget(), 0)
        finally:
            punctual.set_budget("auto")


class Asyncio(unittest.TestCase):
    def test_never_early(self):
        async def main():
            for seconds in (0, 0.0005, 0.001, 0.003, 0.006):
                for _ in range(5):
                    t0 = time.monotonic_ns()
                    r = await paio.sleep(seconds, "r", precision=1e-6)
                    self.assertEqual(r, "r")
                    self.assertGreaterEqual(time.monotonic_ns() - t0, math.ceil(seconds * 1e9))

        asyncio.run(main())

    def test_other_tasks_run_meanwhile(self):
        async def main():
            ticks = []

            async def ticker():
                for _ in range(5):
                    ticks.append(1)
                    await asyncio.sleep(0.005)

            t = asyncio.create_task(ticker())
            await paio.sleep(0.1)
            await t
            return len(ticks)

        self.assertEqual(asyncio.run(main()), 5)

    def test_cancel(self):
        async def main():
            task = asyncio.create_task(paio.sleep(30))
            await asyncio.sleep(0.01)
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task

        asyncio.run(main())


class PunctualLoop(unittest.TestCase):
    def test_timers_never_early(self):
        async def main():
            loop = asyncio.get_running_loop()
            self.assertIsInstance(loop._selector, paio.PreciseEpollSelector)
            for seconds in (0.0002, 0.001, 0.003):
                for _ in range(10):
                    t0 = time.monotonic_ns()
                    await asyncio.sleep(seconds)
                    self.assertGreaterEqual(time.monotonic_ns() - t0, math.ceil(seconds * 1e9))
                    t0 = time.monotonic_ns()
                    await paio.sleep(seconds)
                    self.assertGreaterEqual(time.monotonic_ns() - t0, math.ceil(seconds * 1e9))
                    fut = loop.create_future()
                    when = loop.time() + seconds
                    loop.call_at(when, lambda f=fut: f.set_result(loop.time()))
                    self.assertGreaterEqual(await fut, when)

        paio.run(main(), precision=1e-6)

    def test_a_ready_fd_ends_the_wait(self):
        async def main():
            loop = asyncio.get_running_loop()
            r, w = socket.socketpair()
            try:
                got = loop.create_future()
                loop.add_reader(r.fileno(), lambda: got.done() or got.set_result(r.recv(8)))
                loop.call_later(0.02, w.send, b"hi")
                # a 30 s timer pending meanwhile: the data, not it, ends the loop's wait
                loop.call_later(30, lambda: None)
                return await asyncio.wait_for(got, 20)
            finally:
                loop.remove_reader(r.fileno())
                r.close()
                w.close()

        self.assertEqual(paio.run(main()), b"hi")

    def test_policy(self):
        asyncio.set_event_loop_policy(paio.EventLoopPolicy(precision=2e-6))
        try:
            async def main():
                return asyncio.get_running_loop()._selector.precision_ns

            self.assertEqual(asyncio.run(main()), 2000)
        finally:
            asyncio.set_event_loop_policy(None)
        for bad, exc in [(-1, ValueError), ("x", TypeError), (float("nan"), ValueError)]:
            with self.assertRaises(exc):
                paio.EventLoopPolicy(precision=bad)
            with self.assertRaises(exc):
                paio.new_event_loop(precision=bad)

    def test_run_debug(self):
        async def debug():
            return asyncio.get_running_loop().get_debug()

        self.assertIs(paio.run(debug(), debug=True), True)
        self.assertIs(paio.run(debug(), debug=False), False)
        # None: asyncio.run's own default, whatever PYTHONASYNCIODEBUG says here
        self.assertEqual(paio.run(debug()), asyncio.run(debug()))
        code = ("import asyncio, punctual.asyncio as p\n"
                "async def d(): return asyncio.get_running_loop().get_debug()\n"
                "print(p.run(d()), asyncio.run(d()))")
        env = dict(os.environ, PYTHONASYNCIODEBUG="1")
        out = subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, check=True, text=True).stdout.split()
        self.assertEqual(out[0], out[1])


class Selector(unittest.TestCase):
    """PreciseEpollSelector on its own, as selectors.EpollSelector's users call it."""

    def test_ready_fds_and_masks(self):
        sel = paio.PreciseEpollSelector()
        r, w = socket.socketpair()
        try:
            key_r = sel.register(r, selectors.EVENT_READ, "r")
            key_w = sel.register(w, selectors.EVENT_READ | selectors.EVENT_WRITE, "w")
            self.assertEqual(sel.select(1.0), [(key_w, selectors.EVENT_WRITE)])
            w.send(b"x")
            got = dict((k.data, mask) for k, mask in sel.select(1.0))
            self.assertEqual(got, {"r": selectors.EVENT_READ, "w": selectors.EVENT_WRITE})
            sel.unregister(w)
            self.assertEqual(sel.select(1.0), [(key_r, selectors.EVENT_READ)])
            self.assertEqual(sel.select(0), [(key_r, selectors.EVENT_READ)])
            self.assertEqual(sel.select(None), [(key_r, selectors.EVENT_READ)])
        finally:
            sel.close()
            r.close()
            w.close()

    def test_timeout_never_early(self):
        with paio.PreciseEpollSelector(precision=1e-6) as sel:
            r, w = socket.socketpair()
            try:
                sel.register(r, selectors.EVENT_READ)
                for timeout in (0.0002, 0.001, 0.003):
                    t0 = time.monotonic_ns()
                    self.assertEqual(sel.select(timeout), [])
                    self.assertGreaterEqual(time.monotonic_ns() - t0, math.ceil(timeout * 1e9))
            finally:
                r.close()
                w.close()


class Namespace(unittest.TestCase):
    """dir() of each module holds its API: no math, typing or annotations imported."""

    def test_punctual(self):
        public = {n for n in dir(punctual) if not n.startswith("_")}
        self.assertEqual(public - {"asyncio"}, set(punctual.__all__))

    def test_punctual_asyncio(self):
        public = {n for n in dir(paio) if not n.startswith("_")}
        self.assertEqual(public, set(paio.__all__))

    def test_all_is_there(self):
        for module in (punctual, paio):
            for name in module.__all__:
                self.assertTrue(hasattr(module, name), name)


# A child that sleeps with a signal due 10 ms in, for deadlines from 20 to 400 ms past
# it (the last stretch of a wait too), and prints what became of each sleep.
SIGNALLED = """
import os, signal, sys, threading, time, punctual
caught = []
signal.signal(signal.SIGUSR1, lambda *a: caught.append(punctual.now_ns()))
for left_ms in (20, 35, 60, 80, 99, 150, 400):
    for signo in (signal.SIGUSR1, signal.SIGINT):
        caught.clear()
        t = threading.Timer(0.01, os.kill, (os.getpid(), signo))
        deadline = punctual.now_ns() + (10 + left_ms) * 1_000_000
        try:  # a loaded host may start the timer's thread late: its signal comes in start()
            t.start()
            punctual.sleep_until(deadline, 10_000)
            early = punctual.now_ns() < deadline
            # or after the sleep: the signal is sent and handled before it is counted
            t.join()
            during = sum(c < deadline for c in caught)
            print(left_ms, signo.name, "early" if early else "returned", len(caught), during,
                  flush=True)
        except KeyboardInterrupt:
            print(left_ms, signo.name, "KeyboardInterrupt", flush=True)
            t.join()
"""


class Signals(unittest.TestCase):
    def test_at_every_distance_from_the_deadline(self):
        # behaviour, not latency (a test asserts no speed): SIGINT's
        # KeyboardInterrupt always comes, and a handler that returns runs once and leaves
        # the sleep to end, never early; with 60 ms or more left, it runs during the
        # sleep, not after it (the wait looks at signals every 20 ms, even in its last
        # 100 ms)
        out = subprocess.run([sys.executable, "-c", SIGNALLED], stdout=subprocess.PIPE,
                             check=True, text=True, timeout=60).stdout.splitlines()
        self.assertEqual(len(out), 14, out)
        for line in out:
            left_ms, name, what = line.split()[:3]
            with self.subTest(left_ms=left_ms, signal=name):
                if name == "SIGINT":
                    self.assertEqual(what, "KeyboardInterrupt")
                else:
                    during = "1" if int(left_ms) >= 60 else line.split()[4]
                    self.assertEqual(line.split()[2:], ["returned", "1", during])

    def test_keyboard_interrupt_ends_a_long_sleep(self):
        code = "import punctual; print('ready', flush=True); punctual.sleep(60)"
        p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            self.assertEqual(p.stdout.readline().strip(), "ready")
            time.sleep(0.1)
            p.send_signal(signal.SIGINT)
            _, err = p.communicate(timeout=30)
        finally:
            p.kill()
            p.wait()
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("KeyboardInterrupt", err)


if __name__ == "__main__":
    unittest.main()
