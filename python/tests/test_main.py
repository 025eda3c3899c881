# SPDX-License-Identifier: MIT
"""test_main.py: `python -m punctual` (unittest, run by python/tests/run.sh).

Its text and --json show the CPU count punctual.cpu_count() gives and a sample of
sleep lateness, never negative for punctual.sleep (never early); --help exits 0; bad
arguments exit 2 with one line on stderr and nothing on stdout.
"""
import json
import os
import subprocess
import sys
import unittest

import punctual


def run(*args):
    return subprocess.run([sys.executable, "-m", "punctual", *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=120)


class Output(unittest.TestCase):
    def test_text(self):
        p = run("-n", "5")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0], f"punctual {punctual.__version__}")
        self.assertIn(f"cpus: {punctual.cpu_count()}", lines)
        self.assertTrue(any(line.strip().startswith("why:") for line in lines))
        self.assertIn("sleep lateness, 5 sleeps of 1 ms each (us past the deadline):", lines)
        for name in ("time.sleep", "punctual.sleep"):
            row = [line.split() for line in lines if line.split()[:1] == [name]]
            self.assertEqual(len(row), 1, p.stdout)
            self.assertEqual(len(row[0]), 4, row)

    def test_json(self):
        p = run("--json", "-n", "20", "--length", "0.0005")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        out = json.loads(p.stdout)
        self.assertEqual(out["version"], punctual.__version__)
        self.assertEqual(out["cpus"]["count"], punctual.cpu_count())
        self.assertEqual(set(out["cpus"]), set(punctual.cpu_info()))
        sleep = out["sleep"]
        self.assertEqual((sleep["sleeps"], sleep["length_ns"]), (20, 500_000))
        self.assertEqual([f["function"] for f in sleep["functions"]],
                         ["time.sleep", "punctual.sleep"])
        for f in sleep["functions"]:
            self.assertLessEqual(f["late_p50_ns"], f["late_p99_ns"])
            self.assertLessEqual(f["late_p99_ns"], f["late_max_ns"])
        # never early, so no lateness below 0
        self.assertGreaterEqual(sleep["functions"][1]["late_p50_ns"], 0)

    def test_no_sleeps(self):
        p = run("--json", "--sleeps", "0")
        self.assertEqual(p.returncode, 0)
        self.assertIsNone(json.loads(p.stdout)["sleep"])
        p = run("-n", "0")
        self.assertEqual(p.returncode, 0)
        self.assertNotIn("sleep lateness", p.stdout)

    def test_override_shows(self):
        env = dict(os.environ, PUNCTUAL_CPU_COUNT="3")
        p = subprocess.run([sys.executable, "-m", "punctual", "-n", "0"], env=env,
                           stdout=subprocess.PIPE, text=True, check=True)
        self.assertIn("cpus: 3", p.stdout.splitlines())
        self.assertIn("  override: PUNCTUAL_CPU_COUNT=3", p.stdout.splitlines())


class Arguments(unittest.TestCase):
    def test_help(self):
        p = run("--help")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertTrue(p.stdout.startswith("usage: python -m punctual"))
        for option in ("--json", "--sleeps", "--length"):
            self.assertIn(option, p.stdout)

    def test_bad_arguments(self):
        for args in (["--bogus"], ["-n", "x"], ["-n", "-1"], ["-n", "1000001"], ["--length"],
                     ["--length", "0"], ["--length", "nan"], ["--length", "2"], ["extra"]):
            with self.subTest(args=args):
                p = run(*args)
                self.assertEqual(p.returncode, 2)
                self.assertEqual(p.stdout, "")
                self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
                self.assertTrue(p.stderr.startswith("python -m punctual: "), p.stderr)

    def test_full_stdout(self):
        # a report stdout refuses: one line on stderr, status 1, no traceback
        with open("/dev/full", "w") as full:
            p = subprocess.run([sys.executable, "-m", "punctual", "-n", "10"], stdout=full,
                               stderr=subprocess.PIPE, text=True, timeout=120)
        self.assertEqual(p.returncode, 1)
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertTrue(p.stderr.startswith("python -m punctual: cannot write"), p.stderr)


if __name__ == "__main__":
    unittest.main()
