# SPDX-License-Identifier: MIT
"""test_punctual.py: the package's behaviour (unittest, run by python/tests/run.sh).

Invariants, never speeds: no sleep or punctual loop timer returns early (by now_ns() and
by time.monotonic_ns(), the same clock), bad input raises the documented exception, the
GIL is released while a sleep waits, a ready fd ends a punctual loop's wait, the CPU count
is cached and >= 1, the slack and budget round-trip, and a signal ends a long sleep.
"""
import asyncio
import math
import os
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
                 (-(2**70), OverflowError), (float("inf"), TypeError)]
        for bad, exc in cases:
            with self.subTest(bad=bad):
                with self.assertRaises(exc):
                    punctual.sleep_until(bad)
                with self.assertRaises(exc):
                    punctual.sleep_until(punctual.now_ns(), bad)

    def test_sleep(self):
        cases = [(-1, ValueError), (-0.5, ValueError), (float("nan"), ValueError),
                 (float("inf"), OverflowError), (1e300, OverflowError), (2**70, OverflowError),
                 ("1", TypeError), (b"1", TypeError), (None, TypeError), ([], TypeError)]
        for bad, exc in cases:
            with self.subTest(bad=bad):
                with self.assertRaises(exc):
                    punctual.sleep(bad)
                with self.assertRaises(exc):
                    punctual.sleep(0, precision=bad)

    def test_budget(self):
        for bad, exc in [(-0.1, ValueError), (1.5, ValueError), (float("nan"), ValueError),
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
        for bad, exc in [(-1, ValueError), (2**64, OverflowError), (1.0, TypeError),
                         ("1", TypeError)]:
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


class Signals(unittest.TestCase):
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
