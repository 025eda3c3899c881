#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""circles.py OBJ...: the circles between object files, from the symbols nm says each
defines and uses: a file that uses a symbol of another which (directly or through others)
uses one of its own. Prints each group of files that use each other in a circle (a strongly
connected component of more than one file) and exits 1 if there is one; 0 and nothing
printed otherwise. docs/HACKING.md: no two files use each other."""
import os
import subprocess
import sys


def symbols(objs):
    """{obj: (defined, used)}, from one nm over every file (one process: a loaded machine
    makes a process a file slow)."""
    out = subprocess.run(["nm", "-A", *objs], capture_output=True, text=True,
                         check=True).stdout
    syms = {o: (set(), set()) for o in objs}
    for line in out.splitlines():
        obj, _, rest = line.partition(":")
        f = rest.split()
        if obj not in syms:
            continue
        if len(f) == 3 and f[1] in "TDBRVWC":
            syms[obj][0].add(f[2])
        elif len(f) == 2 and f[0] == "U":
            syms[obj][1].add(f[1])
    return syms


def main(objs):
    names = [os.path.basename(o).removesuffix(".o") for o in objs]
    owner, uses = {}, {}
    syms = symbols(objs)
    for name, obj in zip(names, objs):
        d, u = syms[obj]
        for s in d:
            owner.setdefault(s, name)
        uses[name] = u
    edges = {n: sorted({owner[s] for s in uses[n] if owner.get(s, n) != n}) for n in names}
    # Tarjan's strongly connected components
    index, low, stack, on, groups, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            g = []
            while True:
                w = stack.pop()
                on.discard(w)
                g.append(w)
                if w == v:
                    break
            if len(g) > 1:
                groups.append(sorted(g))

    sys.setrecursionlimit(10000)
    for n in names:
        if n not in index:
            visit(n)
    for g in groups:
        print("circle: " + " <-> ".join(g))
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
