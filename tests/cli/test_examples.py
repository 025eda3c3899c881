#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""test_examples.py PUNCTUAL SOURCE_DIR [clocksources]: every example in punctual(1)'s EXAMPLES
and in the README's shell blocks runs as written: a short one whole (exit 0), a long one (a
full probe or sleep, a tune without --for: a minute, a duration of 10 s or more) until it has
parsed its options and started (still running after 1 s, or done with 0: never exit 2). Placeholders are filled in: sudo
dropped (the tests run as root), PID, 1234 and $(pidof ...) this process, the command `run`
starts (APP, ./app, java App, ...) `true` unless it is punctual itself (the one tune
measures, a Python loop of 150 sleeps: a p99 needs 100), and files (lat.hist,
before.json, after.json) in a scratch directory, where the compare example finds the two
reports it makes, as recorded (tests/fixtures/compare: probes under --slack 50us and 1ns).
Exits 1 if any example fails.
They run four at a time, each in a scratch directory of its own (copies of the two reports).
Those that switch the system's clocksource (--clocksources) run only with the argument
"clocksources", alone and one at a time (an entry of their own, which ctest keeps from the
tests that check the clocksource); without it, all the others."""
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

PN, SRC = sys.argv[1], sys.argv[2]
SWITCHING = sys.argv[3:] == ["clocksources"]
if os.environ.get("PUNCTUAL_EMULATOR"):
    # the examples' `run` lines start the host's programs, which cannot load a cross-built shim
    print(f"SKIP: under {os.environ['PUNCTUAL_EMULATOR']}: the examples run host programs "
          "under `punctual run`, which cannot load the cross-built shim")
    sys.exit(77)
# the tool's directory first on PATH, then this python3 (a link, where PATH's python3 is a
# version manager's shim: pyenv's shell script costs more CPU than the example it starts)
PYDIR = tempfile.mkdtemp()
os.symlink(sys.executable, os.path.join(PYDIR, "python3"))
env = dict(os.environ, PATH=os.pathsep.join([os.path.dirname(os.path.abspath(PN)), PYDIR,
                                             os.environ["PATH"]]))


def man_examples(path):
    out, on = [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("# "):
            on = line.strip() == "# EXAMPLES"
            continue
        m = re.match(r"^\*(.+)\*\s*$", line)
        if on and m:
            out.append(m.group(1).replace("\\\\", "\\"))
    return out


def readme_examples(path):
    out, block = [], False
    for line in open(path, encoding="utf-8"):
        if line.startswith("```"):
            block = not block and line.strip() in ("```sh", "```bash")
            continue
        if block:
            cmd = re.sub(r"\s+#\s.*$", "", line.rstrip("\n")).strip()
            if re.match(r"^(sudo )?punctual\b", cmd):
                out.append(cmd)
    return out


def fill(seg):
    seg = re.sub(r"^sudo ", "", seg.strip())
    seg = re.sub(r"\$\(pidof [^)]*\)", str(os.getpid()), seg)
    seg = re.sub(r"\b(PID|1234)\b", str(os.getpid()), seg)
    # the command run starts: true, unless it is punctual itself
    m = re.match(r"^(punctual run .*? -- )(\S+)(.*)$", seg)
    if m and m.group(2) != "punctual":
        seg = m.group(1) + "true"
    # the command tune measures: one with the 100 timed waits a p99 needs
    m = re.match(r"^(punctual tune .*?-- )(\S+)(.*)$", seg)
    if m:
        seg = m.group(1) + "python3 -c 'import time; [time.sleep(0.001) for _ in range(150)]'"
    return seg


def is_long(seg):
    if re.search(r"\bprobe\b", seg) and not re.search(r"--quick|--compare", seg):
        return True
    if re.search(r"--duration (\d+m|[1-9]\d+s|\d+h)\b|--clocksources", seg):
        return True
    if re.match(r"^punctual tune\b", seg) and not re.search(r"--for|--revert", seg):
        return True
    return bool(re.match(r"^punctual (sleep)\b", seg)) and "--duration" not in seg


def check(cmd, cwd):
    """Runs one example; returns (ok, exit status or None, stderr)."""
    if is_long(cmd):
        # until it has parsed and started: no pipe, no redirect
        core = re.split(r"\s[|>]", cmd)[0]
        p = subprocess.Popen(["bash", "-c", "exec " + core], cwd=cwd, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            rc = p.wait(timeout=1)
        except subprocess.TimeoutExpired:
            p.terminate()
            p.wait()
            rc = None
        err = p.stderr.read().decode(errors="replace")
        return rc is None or rc == 0, rc, err
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], cwd=cwd, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=120)
    return r.returncode == 0, r.returncode, r.stderr.decode(errors="replace")


def main():
    examples = [("punctual(1)", e) for e in man_examples(os.path.join(SRC, "docs/punctual.1.scd"))]
    examples += [("README", e) for e in readme_examples(os.path.join(SRC, "README.md"))]
    tmp = tempfile.mkdtemp()
    fails = 0
    try:
        segs = [(where, seg, fill(seg)) for where, line in examples
                for seg in line.split(";") if seg.strip()]
        segs = [s for s in segs if ("--clocksources" in s[2]) == SWITCHING]
        # the compare example's two reports (where it is among them): the pair it makes,
        # recorded (cli.compare compares two of this build's own)
        recorded = {"before.json": "slack-50us.json", "after.json": "slack-1ns.json"}
        names = tuple(recorded) if any(".json" in s[2] for s in segs) else ()
        for f in names:
            shutil.copy(os.path.join(SRC, "tests/fixtures/compare", recorded[f]),
                        os.path.join(tmp, f))

        def one(i):
            cwd = os.path.join(tmp, str(i))
            os.mkdir(cwd)
            for f in names:
                shutil.copy(os.path.join(tmp, f), cwd)
            return check(segs[i][2], cwd)

        with concurrent.futures.ThreadPoolExecutor(max_workers=1 if SWITCHING else 4) as pool:
            results = list(pool.map(one, range(len(segs))))
        for (where, seg, cmd), (ok, rc, err) in zip(segs, results):
            if not ok:
                fails += 1
                print(f"FAIL: {where}: '{seg.strip()}' (ran '{cmd}'): exit {rc}: "
                      f"{err.strip()[:300]}")
        print(f"{len(segs)} commands of {len(examples)} examples, {fails} failed")
    finally:
        shutil.rmtree(tmp)
        shutil.rmtree(PYDIR)
    return 1 if fails or not segs else 0


sys.exit(main())
