#!/bin/bash
# SPDX-License-Identifier: MIT
# test_signs.sh SOURCE_DIR: the signs a reader follows point where they should.
# - A source file's first comment that opens with a file name ("name.c: ...") names the file
#   itself: a file moved, its head comment follows. A file named in any comment of a .c or .h
#   file exists in the tree, but for a few of the kernel's and other projects' (OUTSIDE).
# - The docs stand alone: README.md and docs/ point nowhere outside the repository (no
#   "../shared", no checks of another tree, no link that leaves the tree or leads nowhere).
# - docs/HACKING.md's layout names every .c file of src/ and tools/ in its folder's entry.
SRC=$1
cd "$SRC" || exit 1
# python3 as ctest found it (a version manager's shim costs about 0.4 s of CPU a start)
PY=${PUNCTUAL_TEST_PYTHON3:-python3}
fails=0
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

mapfile -t sources < <(find src tools include tests bench fuzz python/ext -name '*.[ch]' | sort)

# the first line that reads as a label ("/* name.c:", " * name.h:") names the file itself
# (one grep for every file: -H names the file, -m1 keeps its first label line)
while IFS= read -r bad; do
	fail "$bad"
done < <(grep -H -m1 -oE '^(/\*|//| \*)[[:space:]]*[A-Za-z0-9_./-]+\.[ch]:' "${sources[@]}" |
	awk -F: '{ f = $1; n = $2; sub(/^(\/\*|\/\/| \*)[[:space:]]*/, "", n)
		b = f; sub(/.*\//, "", b); nb = n; sub(/.*\//, "", nb)
		if (nb != b) print f ": its head comment names " n }')

# every file a comment names exists; OUTSIDE: the kernel's sources and headers, libev's
# header, and vmlinux.h, which bpftool writes at build time
while IFS= read -r bad; do
	fail "$bad"
done < <("$PY" - "${sources[@]}" <<'PY'
import os, re, sys
OUTSIDE = ("linux/", "arch/", "kernel/", "ev.h", "vmlinux.h")
tree = set()
for top in ("src", "tools", "include", "tests", "bench", "fuzz", "python", "cmake", "docs"):
    for d, _, fs in os.walk(top):
        tree.update(fs)
name = re.compile(r"(?<![A-Za-z0-9_./-])([A-Za-z0-9_./-]*[A-Za-z0-9_]\.[ch])(?![A-Za-z0-9_])")
for f in sys.argv[1:]:
    text = open(f, errors="replace").read()
    for c in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S):
        for n in name.findall(c.group(0)):
            if os.path.basename(n) not in tree and not n.startswith(OUTSIDE):
                line = text.count("\n", 0, c.start()) + 1
                print(f"{f}:{line}: a comment names {n}, which is not in the tree")
PY
)

# the docs stand alone
mapfile -t docs < <(find README.md python/README.md docs -type f ! -name '*.png' ! -name '*.svg' | sort)
out=$(grep -niE '\.\./shared|/work/|acceptance|check [0-9]{2}\b' "${docs[@]}" | head -5)
[ -z "$out" ] || fail "the docs point outside the repository: $out"
while IFS= read -r bad; do
	fail "$bad"
done < <("$PY" - "${docs[@]}" <<'PY'
import os, re, sys
root = os.path.realpath(".")
for f in sys.argv[1:]:
    if not f.endswith(".md"):
        continue
    for target in re.findall(r"\]\(([^)\s]+)\)", open(f).read()):
        if re.match(r"[a-z]+:|#", target):
            continue  # a URL or an anchor of the page
        path = os.path.realpath(os.path.join(os.path.dirname(f), target.split("#")[0]))
        if not path.startswith(root + os.sep) or not os.path.exists(path):
            print(f"{f}: a link to {target}, outside the tree or nowhere")
PY
)

# docs/HACKING.md's layout: each .c file in the entry of its folder (or of the nearest
# folder above it that has one)
while IFS= read -r bad; do
	fail "$bad"
done < <("$PY" - <<'PY'
import os, re
text = open("docs/HACKING.md").read()
m = re.search(r"^## Layout\n.*?^```\n(.*?)^```", text, re.S | re.M)
if not m:
    print("docs/HACKING.md has no layout block"); raise SystemExit
blocks, stack = {}, []
for line in m.group(1).split("\n"):
    if not line.strip():
        continue
    indent = len(line) - len(line.lstrip(" "))
    while stack and stack[-1][0] >= indent:
        stack.pop()
    first = line.split()[0]
    if first.endswith("/"):
        path = (stack[-1][1] if stack else "") + first
        stack.append((indent, path))
        blocks[path] = ""
    for _, p in stack:
        blocks[p] += line + "\n"
for top in ("src", "tools"):
    for d, _, fs in os.walk(top):
        for f in sorted(fs):
            if not f.endswith(".c"):
                continue
            folder = d + "/"
            while folder not in blocks and folder.count("/") > 1:
                folder = folder[: folder.rstrip("/").rfind("/") + 1]
            if not re.search(r"(^|[^A-Za-z0-9_.])" + re.escape(f) + r"\b", blocks.get(folder, "")):
                print(f"docs/HACKING.md: {d}/{f} is not in the layout's entry for {folder}")
PY
)

[ "$fails" -eq 0 ] || exit 1
echo "house.signs: head comments, the docs' references and HACKING.md's layout hold"
