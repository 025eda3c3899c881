# SPDX-License-Identifier: MIT
"""test_cgroup.py: cpu_count() inside a real cgroup with a CPU quota.

It makes a cgroup under the process's own in the cpu hierarchy (v1 cpu, or v2 with the
cpu controller), gives it a quota, runs a child Python in a cgroup below it (which has
none: the tightest level up the tree is the limit) and compares the child's cpu_count()
with cpus.h's rule: min(the affinity set, the limit rounded up, or as
PUNCTUAL_CPU_ROUNDING says), at least 1. The cgroups are removed whatever happens. Where
none can be made (not root, no cpu controller, a read-only cgroupfs) every test skips
with the reason; run as a script, it then prints "SKIP: reason" and exits 77.
"""
import math
import os
import subprocess
import sys
import unittest

CHILD = "import os, punctual; print(punctual.cpu_count(), os.cpu_count())"


def _cpu_hierarchy():
    """(directory of this process's cgroup in the cpu hierarchy, version 1 or 2), or a
    reason string why there is none."""
    with open("/proc/self/cgroup") as f:
        groups = [line.rstrip("\n").split(":", 2) for line in f]
    with open("/proc/self/mountinfo") as f:
        mounts = [line.split() for line in f]
    for m in mounts:
        sep = m.index("-")
        fstype, opts = m[sep + 1], m[sep + 3].split(",")
        if fstype == "cgroup" and "cpu" in opts:
            path = next((g[2] for g in groups if "cpu" in g[1].split(",")), None)
            if path is not None:
                return os.path.join(m[4], os.path.relpath(path, m[3])), 1
    for m in mounts:
        sep = m.index("-")
        if m[sep + 1] == "cgroup2":
            path = next((g[2] for g in groups if g[0] == "0"), "/")
            return os.path.normpath(os.path.join(m[4], os.path.relpath(path, m[3]))), 2
    return "no cgroup hierarchy with the cpu controller is mounted"


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)


class Quota:
    """A cgroup outer/ with quota/period and an inner/ below it, removed on exit."""

    def __init__(self, base, version, quota_us, period_us=100000):
        self.version = version
        self.outer = os.path.join(base, "pn-python-test-%d" % os.getpid())
        self.inner = os.path.join(self.outer, "inner")
        self.quota_us, self.period_us = quota_us, period_us

    def __enter__(self):
        os.mkdir(self.outer)
        try:
            if self.version == 1:
                _write(os.path.join(self.outer, "cpu.cfs_period_us"), str(self.period_us))
                _write(os.path.join(self.outer, "cpu.cfs_quota_us"), str(self.quota_us))
            else:
                _write(os.path.join(self.outer, "cpu.max"), "%d %d" % (self.quota_us,
                                                                       self.period_us))
            os.mkdir(self.inner)
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc):
        for d in (self.inner, self.outer):
            if os.path.isdir(d):
                os.rmdir(d)

    def run(self, env=None):
        """The child's (cpu_count(), os.cpu_count()), run inside inner/."""
        procs = os.path.join(self.inner, "cgroup.procs")
        out = subprocess.run([sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE,
                             check=True, text=True, timeout=60,
                             preexec_fn=lambda: _write(procs, str(os.getpid()))).stdout
        count, host = out.split()
        return int(count), int(host)


def _reason_to_skip():
    if os.geteuid() != 0:
        return "making a cgroup needs root"
    found = _cpu_hierarchy()
    if isinstance(found, str):
        return found
    base, version = found
    if version == 2:
        try:
            with open(os.path.join(base, "cgroup.controllers")) as f:
                if "cpu" not in f.read().split():
                    return "the cgroup v2 hierarchy has no cpu controller here"
            # enabling it would change the host's cgroups for good: only where it is on
            with open(os.path.join(base, "cgroup.subtree_control")) as f:
                if "cpu" not in f.read().split():
                    return "the v2 cpu controller is not enabled below %s" % base
        except OSError as e:
            return "cannot read the v2 controllers of %s: %s" % (base, e.strerror)
    try:
        with Quota(base, version, 50000):
            pass
    except OSError as e:
        return "cannot make a cgroup with a CPU quota under %s: %s" % (base, e.strerror)
    return None


SKIP = _reason_to_skip()


@unittest.skipIf(SKIP, SKIP)
class RealCgroup(unittest.TestCase):
    def setUp(self):
        self.base, self.version = _cpu_hierarchy()
        self.affinity = len(os.sched_getaffinity(0))

    def expect(self, limit, rounding=math.ceil):
        return max(1, min(self.affinity, rounding(limit)))

    def test_half_a_cpu_in_the_parent(self):
        with Quota(self.base, self.version, 50000) as q:
            count, host = q.run()
        self.assertEqual(count, self.expect(0.5))
        print("cgroup v%d, quota 0.5 CPU: cpu_count() %d, os.cpu_count() %d"
              % (self.version, count, host), file=sys.stderr)

    def test_one_and_a_half_rounded(self):
        for rounding, fn in (("ceil", math.ceil), ("floor", math.floor)):
            env = dict(os.environ, PUNCTUAL_CPU_ROUNDING=rounding)
            with Quota(self.base, self.version, 150000) as q:
                count, _ = q.run(env)
            self.assertEqual(count, self.expect(1.5, fn), rounding)


if __name__ == "__main__":
    if SKIP:
        print("SKIP: " + SKIP)
        sys.exit(77)
    unittest.main()
