# SPDX-License-Identifier: MIT
"""python -m punctual: what the package sees on this machine.

How many CPUs this process may use and why (punctual.cpu_info(), the figures of
`punctual cpus`), then how late a few sleeps wake with time.sleep and with
punctual.sleep, taking turns: p50, p99 and max of the lateness past each deadline.
--json prints the same as one JSON object. Bad arguments exit 2 with one line on
stderr.
"""
import argparse
import json
import math
import sys
import time
import typing

import punctual

DEFAULT_SLEEPS = 100
DEFAULT_LENGTH = 0.001
Sample = typing.Dict[str, typing.Any]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        # one line, not argparse's usage and message
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def _parser() -> _Parser:
    p = _Parser(
        prog="python -m punctual",
        description="How many CPUs this process may use and why (punctual.cpu_count's "
        "answer), then the lateness of sleeps with time.sleep and with punctual.sleep.")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("-n", "--sleeps", type=int, default=DEFAULT_SLEEPS, metavar="N",
                   help=f"sleeps of each function, taking turns (default {DEFAULT_SLEEPS}; "
                   "0: none)")
    p.add_argument("--length", type=float, default=DEFAULT_LENGTH, metavar="SECONDS",
                   help=f"each sleep's length (default {DEFAULT_LENGTH}), up to 1 s")
    return p


def _quantile(sorted_ns: typing.List[int], q: float) -> int:
    """The nearest-rank quantile q of a sorted list."""
    return sorted_ns[max(0, math.ceil(q * len(sorted_ns)) - 1)]


def _sample(sleeps: int, length: float) -> typing.List[Sample]:
    """The lateness of each function's sleeps past their deadlines, in ns."""
    length_ns = math.ceil(length * 1e9)
    funcs: typing.List[typing.Tuple[str, typing.Callable[[float], None]]] = [
        ("time.sleep", time.sleep), ("punctual.sleep", punctual.sleep)]
    late: typing.List[typing.List[int]] = [[] for _ in funcs]
    for _ in range(sleeps):
        for i, (_, f) in enumerate(funcs):
            t0 = punctual.now_ns()
            f(length)
            late[i].append(punctual.now_ns() - t0 - length_ns)
    out = []
    for (name, _), ns in zip(funcs, late):
        ns.sort()
        out.append({"function": name, "late_p50_ns": _quantile(ns, 0.5),
                    "late_p99_ns": _quantile(ns, 0.99), "late_max_ns": ns[-1]})
    return out


def _safe(s: typing.Optional[str]) -> str:
    """s for a terminal: a cgroup's name may hold any byte but '/' and NUL."""
    if s is None:
        return "-"
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in s)


def _text_cpus(info: typing.Dict[str, typing.Any]) -> str:
    cg, limit = info["cgroup"], info["limit"]
    affinity = info["affinity"]
    lines = [
        f"cpus: {info['count']}",
        f"  why:      {_safe(info['reason'])}",
        f"  affinity: {f'{affinity} CPUs' if affinity else 'unreadable'}"
        f" ({info['affinity_list'] or '-'}),"
        f" {info['online'] or 'unknown'} online",
        f"  cgroup:   {cg['version']}"
        + (f" (limit read from {cg['controller']}) {_safe(cg['path'])} at {_safe(cg['dir'])}"
           if cg["path"] else ""),
    ]
    if limit:
        lines.append(f"  limit:    {limit['cpus']:.6g} CPUs at {_safe(limit['path'])},"
                     f" {info['rounding']} -> {limit['count']}")
    else:
        lines.append("  limit:    none")
    if info["override"]:
        lines.append(f"  override: PUNCTUAL_CPU_COUNT={info['override']}")
    for name, key in (("PUNCTUAL_CPU_COUNT", "override_invalid"),
                      ("PUNCTUAL_CPU_ROUNDING", "rounding_invalid")):
        if info[key] is not None:
            lines.append(f"  ignored:  {name}={_safe(info[key])!r}")
    return "\n".join(lines)


def _text_sleeps(sleeps: int, length: float, sample: typing.List[Sample]) -> str:
    lines = [f"sleep lateness, {sleeps} sleeps of {length * 1e3:g} ms each (us past the"
             " deadline):", f"  {'':16}{'p50':>9}{'p99':>9}{'max':>9}"]
    for s in sample:
        lines.append(f"  {s['function']:16}" + "".join(
            f"{s[k] / 1e3:9.1f}" for k in ("late_p50_ns", "late_p99_ns", "late_max_ns")))
    return "\n".join(lines)


def main(argv: typing.Optional[typing.List[str]] = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 <= args.sleeps <= 1_000_000:
        parser.error(f"--sleeps must be 0 to 1000000, not {args.sleeps}")
    if not 0 < args.length <= 1:  # NaN fails it too
        parser.error(f"--length must be over 0 and at most 1 second, not {args.length}")
    info = punctual.cpu_info()
    try:
        sample = _sample(args.sleeps, args.length) if args.sleeps else None
    except KeyboardInterrupt:
        return 130  # as a shell reports SIGINT, without a traceback
    if args.json:
        sleep = None if sample is None else {
            "sleeps": args.sleeps,
            "length_ns": math.ceil(args.length * 1e9), "functions": sample}
        print(json.dumps({"version": punctual.__version__, "cpus": info, "sleep": sleep}))
        return 0
    print(f"punctual {punctual.__version__}")
    print(_text_cpus(info))
    if sample is not None:
        print(_text_sleeps(args.sleeps, args.length, sample))
    return 0


def _run() -> int:
    """main(), with what stdout refuses (a full disk, a closed pipe) as one line and
    status 1, not a traceback."""
    try:
        st = main()
        sys.stdout.flush()
        return st
    except OSError as e:
        try:
            sys.stdout = None  # nothing more to flush at exit
        finally:
            print(f"python -m punctual: cannot write the report: {e.strerror or e}",
                  file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(_run())
