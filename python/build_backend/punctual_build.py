# SPDX-License-Identifier: MIT
"""punctual_build: the package's own PEP 517 build backend.

It needs nothing from PyPI, so `pip install ./python` works offline: it builds
libpunctual's static archive with CMake from the project's tree (the repository
around python/, or the copy an sdist carries in libpunctual/), compiles the C
extension against it with the system compiler and Python's headers, and writes
the wheel (a zip with .dist-info/METADATA, WHEEL, RECORD and the license) by
hand. The metadata is pyproject.toml's [project], the version CMakeLists.txt's.

`pip install -e ./python` (PEP 660) installs a wheel of two files: a .pth that
imports _punctual_editable, whose finder loads the package from this source tree
and its C extension from the build directory. Edits to punctual/*.py show at the
next import; an edit to ext/_punctual.c or the library needs the install again.

Environment: CC (the compiler; cc by default), PUNCTUAL_BUILD_DIR (a directory
to build the library in and keep, so that a second build is incremental; a
temporary one by default, and python/build for an editable install, whose
extension stays there).
"""
from __future__ import annotations

import base64
import hashlib
import importlib.machinery
import io
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "punctual"
# what the sdist carries of the project: what CMake reads with tests, benchmarks and
# man pages off
LIBRARY_PARTS = ("CMakeLists.txt", "cmake", "include", "src", "tools", "docs", "packaging")
PACKAGE_FILES = ("__init__.py", "__main__.py", "asyncio.py", "_punctual.pyi", "py.typed")
# the editable install's finder module and the .pth that imports it
EDITABLE_MODULE = "_punctual_editable"


def _library_root() -> str:
    """The project tree whose CMakeLists.txt builds libpunctual."""
    for root in (os.path.join(HERE, "libpunctual"), os.path.dirname(HERE)):
        if os.path.isfile(os.path.join(root, "CMakeLists.txt")) and os.path.isfile(
            os.path.join(root, "include", "punctual", "punctual.h")
        ):
            return root
    raise RuntimeError(
        "punctual_build: libpunctual's sources are not beside the package: build from "
        "the punctual repository's python/ folder (pip install ./python) or from its sdist"
    )


def _version() -> str:
    """The project's version, from project(... VERSION x.y.z) in CMakeLists.txt."""
    with open(os.path.join(_library_root(), "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(punctual VERSION ([0-9.]+)", f.read())
    if not m:
        raise RuntimeError("punctual_build: no project(punctual VERSION ...) in CMakeLists.txt")
    return m.group(1)


def _toml_skip(text: str, i: int) -> int:
    """The index of the next token at or after i: spaces, newlines and comments skipped."""
    while True:
        m = re.compile(r"[ \t\r\n]*(#[^\n]*)?").match(text, i)
        if not m or m.end() == i:
            return i
        i = m.end()


def _toml_value(text: str, i: int) -> tuple:
    """(value, index after it) for the TOML values pyproject.toml uses: basic strings,
    true/false, arrays and inline tables."""
    i = _toml_skip(text, i)
    m = re.compile(r'"((?:[^"\\\n]|\\.)*)"').match(text, i)
    if m:  # TOML's escapes in a basic string are JSON's
        return json.loads(m.group(0)), m.end()
    for word, value in (("true", True), ("false", False)):
        if text.startswith(word, i):
            return value, i + len(word)
    for opening, close in (("[", "]"), ("{", "}")):
        if text.startswith(opening, i):
            return _toml_items(text, i + 1, close)
    raise ValueError(f"punctual_build: pyproject.toml: a value the backend cannot read "
                     f"at {text[i : i + 30]!r} (Python 3.11's tomllib reads any)")


def _toml_items(text: str, i: int, close: str) -> tuple:
    """(list or dict, index after close): an array's values (close "]") or an inline
    table's key = value pairs (close "}")."""
    items: list = []
    while True:
        i = _toml_skip(text, i)
        if text.startswith(close, i):
            return (items if close == "]" else dict(items)), i + 1
        if close == "]":
            value, i = _toml_value(text, i)
            items.append(value)
        else:
            key, i = _toml_key(text, i)
            value, i = _toml_value(text, i)
            items.append((key, value))
        i = _toml_skip(text, i)
        if text.startswith(",", i):
            i += 1


def _toml_key(text: str, i: int) -> tuple:
    """(key, index after its =) of a bare or quoted key."""
    m = re.compile(r'\s*([A-Za-z0-9_-]+|"[^"\n]*")\s*=').match(text, i)
    if not m:
        raise ValueError(f"punctual_build: pyproject.toml: no key at {text[i : i + 30]!r}")
    return m.group(1).strip('"'), m.end()


def _toml_read(text: str) -> dict:
    """pyproject.toml as tomllib reads it, for Pythons before 3.11, which have none: the
    subset this file uses (tables, keys, the values _toml_value reads)."""
    doc: dict = {}
    table: dict = doc
    i = _toml_skip(text, 0)
    while i < len(text):
        m = re.compile(r"\[([A-Za-z0-9_.-]+)\]").match(text, i)
        if m:
            table = doc
            for part in m.group(1).split("."):
                table = table.setdefault(part, {})
            i = m.end()
        else:
            key, i = _toml_key(text, i)
            table[key], i = _toml_value(text, i)
        i = _toml_skip(text, i)
    return doc


def _project() -> dict:
    """pyproject.toml's [project] table."""
    with open(os.path.join(HERE, "pyproject.toml"), encoding="utf-8") as f:
        text = f.read()
    try:
        import tomllib  # 3.11+

        doc = tomllib.loads(text)
    except ImportError:
        doc = _toml_read(text)
    return doc["project"]


def _metadata() -> str:
    """Core metadata 2.1 from [project] (PEP 621's mapping). The license goes as License
    and License-File, which pip show and every installer read; the file is in the wheel
    under .dist-info/licenses/ (PEP 639's place)."""
    p = _project()
    lines = [
        "Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {_version()}",
        f"Summary: {p['description']}",
    ]
    urls = p.get("urls", {})
    if "Homepage" in urls:
        lines.append(f"Home-page: {urls['Homepage']}")
    for author in p.get("authors", []):  # Author for pip show, Author-email for PEP 621
        lines.append(f"Author: {author['name']}")
        if "email" in author:
            lines.append(f"Author-email: {author['name']} <{author['email']}>")
    lines.append(f"License: {p['license']}")  # license = "MIT", PEP 639's string form
    lines += [f"License-File: {f}" for f in p.get("license-files", [])]
    lines += [f"Project-URL: {label}, {url}" for label, url in urls.items()]
    lines.append(f"Requires-Python: {p['requires-python']}")
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    with open(os.path.join(HERE, p["readme"]), encoding="utf-8") as f:
        readme = f.read()
    lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + readme


def _license_files() -> dict:
    """{path in the wheel: bytes} of [project]'s license-files."""
    return {
        f"{_dist_info()}/licenses/{name}": _read(os.path.join(HERE, name))
        for name in _project().get("license-files", [])
    }


def _tag() -> str:
    """The wheel's tag: this interpreter, its ABI, this platform (cp311-cp311-linux_x86_64)."""
    if sys.implementation.name != "cpython":
        raise RuntimeError("punctual_build: the extension uses CPython's C API")
    py = "cp%d%d" % sys.version_info[:2]
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{py}{sys.abiflags}-{plat}"


def _dist_info() -> str:
    return f"{NAME}-{_version()}.dist-info"


def _wheel_file() -> str:
    return (
        "Wheel-Version: 1.0\nGenerator: punctual_build\nRoot-Is-Purelib: false\n"
        f"Tag: {_tag()}\n"
    )


def _run(cmd: list, log: list) -> None:
    log.append("$ " + " ".join(cmd))
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.append(p.stdout)
    if p.returncode != 0:
        sys.stderr.write("\n".join(log[-6:]) + "\n")
        raise RuntimeError(f"punctual_build: {cmd[0]} failed (status {p.returncode})")


def _build_library(build_dir: str, log: list) -> str:
    """libpunctual.a built by the project's CMakeLists.txt (position-independent objects)."""
    if not shutil.which("cmake"):
        raise RuntimeError("punctual_build: cmake is missing (the project's scripts/bootstrap)")
    jobs = str(max(1, len(os.sched_getaffinity(0))))
    _run(
        [
            "cmake", "-S", _library_root(), "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
            "-DPUNCTUAL_TESTS=OFF", "-DPUNCTUAL_BENCH=OFF", "-DPUNCTUAL_DOCS=OFF",
            "-DPUNCTUAL_SANITIZE=", "-DPUNCTUAL_WERROR=OFF",
        ],
        log,
    )
    _run(["cmake", "--build", build_dir, "--target", "punctual_static", "-j", jobs], log)
    return os.path.join(build_dir, "libpunctual.a")


def _build_extension(build_dir: str, out_dir: str, log: list) -> str:
    """The extension module in out_dir, linked to the archive; its symbols other than
    PyInit stay inside it (--exclude-libs), so another copy of libpunctual in the process
    is apart. The linker writes a new file, never over one a running process maps."""
    archive = _build_library(os.path.join(build_dir, "lib"), log)
    include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(include, "Python.h")):
        raise RuntimeError(f"punctual_build: no Python.h in {include} (Debian: python3-dev)")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, "_punctual" + importlib.machinery.EXTENSION_SUFFIXES[0])
    cc = os.environ.get("CC", "cc").split()
    _run(
        cc + [
            "-std=gnu11", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra",
            "-I", os.path.join(_library_root(), "include"), "-I", include,
            os.path.join(HERE, "ext", "_punctual.c"), archive, "-o", out,
            "-lpthread", "-lm", "-Wl,--exclude-libs,ALL", "-Wl,-z,nodelete",
        ],
        log,
    )
    return out


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(path: str, files: dict) -> None:
    """A wheel of files ({path in the wheel: bytes}) and its RECORD."""
    record_path = f"{_dist_info()}/RECORD"
    lines = [_record_line(p, d) for p, d in files.items()] + [f"{record_path},,"]
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p, d in files.items():
            info = zipfile.ZipInfo(p, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if p.endswith(".so") else 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(info, d)
        z.writestr(record_path, "\n".join(lines) + "\n")


def _read(path: str) -> bytes:
    with open(path, "rb") as f:
        return f.read()


def _finish_wheel(wheel_directory: str, files: dict) -> str:
    """Writes the wheel of files (the package's) with its .dist-info; returns its name."""
    info = _dist_info()
    files = dict(files)
    files[f"{info}/METADATA"] = _metadata().encode()
    files[f"{info}/WHEEL"] = _wheel_file().encode()
    files[f"{info}/top_level.txt"] = f"{NAME}\n".encode()
    files.update(_license_files())
    name = f"{NAME}-{_version()}-{_tag()}.whl"
    os.makedirs(wheel_directory, exist_ok=True)
    _write_wheel(os.path.join(wheel_directory, name), files)
    return name


def get_requires_for_build_wheel(config_settings=None) -> list:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list:
    return []


def get_requires_for_build_editable(config_settings=None) -> list:
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    for name, text in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)
    return _dist_info()


def prepare_metadata_for_build_editable(metadata_directory, config_settings=None) -> str:
    return prepare_metadata_for_build_wheel(metadata_directory, config_settings)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    keep = os.environ.get("PUNCTUAL_BUILD_DIR")
    build_dir = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="punctual-build-")
    log: list = []
    try:
        ext = _build_extension(build_dir, build_dir, log)
        files = {f"{NAME}/{n}": _read(os.path.join(HERE, NAME, n)) for n in PACKAGE_FILES}
        files[f"{NAME}/{os.path.basename(ext)}"] = _read(ext)
        return _finish_wheel(wheel_directory, files)
    finally:
        if not keep:
            shutil.rmtree(build_dir, ignore_errors=True)


# The editable install's finder, written with the two directories filled in. First on
# sys.meta_path, so that a punctual/ in the current directory (python/, where the source
# has no extension) does not shadow it.
EDITABLE_FINDER = """\
# punctual installed editable (pip install -e): written by punctual_build
import importlib.util
import sys

SOURCE = {source!r}
EXTENSION = {extension!r}


class Finder:
    \"\"\"Finds punctual in its source tree; its extension in the build directory.\"\"\"

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name != "punctual":
            return None
        return importlib.util.spec_from_file_location(
            name, SOURCE + "/__init__.py", submodule_search_locations=[SOURCE, EXTENSION])


sys.meta_path.insert(0, Finder)
"""


def build_editable(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    """A wheel that imports the package from this tree (PEP 660); the extension is built
    into PUNCTUAL_BUILD_DIR (python/build by default), which must stay."""
    keep = os.environ.get("PUNCTUAL_BUILD_DIR") or os.path.join(HERE, "build")
    build_dir = os.path.abspath(keep)
    extension = os.path.join(build_dir, "editable")
    _build_extension(build_dir, extension, [])
    finder = EDITABLE_FINDER.format(source=os.path.join(HERE, NAME), extension=extension)
    return _finish_wheel(wheel_directory, {
        f"{EDITABLE_MODULE}.py": finder.encode(),
        f"{EDITABLE_MODULE}.pth": f"import {EDITABLE_MODULE}\n".encode(),
    })


def _sdist_filter(info: tarfile.TarInfo):
    parts = info.name.split("/")
    if "__pycache__" in parts or info.name.endswith((".so", ".pyc")) or "build" in parts[1:2]:
        return None
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def build_sdist(sdist_directory, config_settings=None) -> str:
    """The package and the library's sources (libpunctual/), buildable without the
    repository."""
    base = f"{NAME}-{_version()}"
    name = f"{base}.tar.gz"
    os.makedirs(sdist_directory, exist_ok=True)
    root = _library_root()
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz", format=tarfile.PAX_FORMAT) as t:
        for entry in sorted(os.listdir(HERE)):
            if entry not in ("libpunctual", "build", "dist") and not entry.startswith("."):
                t.add(os.path.join(HERE, entry), f"{base}/{entry}", filter=_sdist_filter)
        for part in LIBRARY_PARTS:
            t.add(os.path.join(root, part), f"{base}/libpunctual/{part}", filter=_sdist_filter)
        pkg_info = _metadata().encode()
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        info.size = len(pkg_info)
        t.addfile(info, io.BytesIO(pkg_info))
    return name
