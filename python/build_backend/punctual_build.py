# SPDX-License-Identifier: MIT
"""punctual_build: the package's own PEP 517 build backend.

It needs nothing from PyPI, so `pip install ./python` works offline: it builds
libpunctual's static archive with CMake from the project's tree (the repository
around python/, or the copy an sdist carries in libpunctual/), compiles the C
extension against it with the system compiler and Python's headers, and writes
the wheel (a zip with .dist-info/METADATA, WHEEL and RECORD) by hand.

Environment: CC (the compiler; cc by default), PUNCTUAL_BUILD_DIR (a directory
to build the library in and keep, so that a second build is incremental; a
temporary one by default).
"""
from __future__ import annotations

import base64
import hashlib
import importlib.machinery
import io
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
SUMMARY = "Precise sleeps, timer slack and a container-aware CPU count (libpunctual)"
# what the sdist carries of the project: what CMake reads with tests, benchmarks and
# man pages off
LIBRARY_PARTS = ("CMakeLists.txt", "cmake", "include", "src", "tools", "docs", "packaging")
PACKAGE_FILES = ("__init__.py", "asyncio.py", "_punctual.pyi", "py.typed")


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


def _metadata() -> str:
    with open(os.path.join(HERE, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    return (
        "Metadata-Version: 2.1\n"
        f"Name: {NAME}\nVersion: {_version()}\nSummary: {SUMMARY}\n"
        "License: MIT\nRequires-Python: >=3.8\n"
        "Classifier: Operating System :: POSIX :: Linux\n"
        "Classifier: Programming Language :: C\n"
        "Description-Content-Type: text/markdown\n\n" + readme
    )


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


def _build_extension(build_dir: str, log: list) -> str:
    """The extension module, linked to the archive; its symbols other than PyInit stay
    inside it (--exclude-libs), so another copy of libpunctual in the process is apart."""
    archive = _build_library(os.path.join(build_dir, "lib"), log)
    include = sysconfig.get_paths()["include"]
    if not os.path.isfile(os.path.join(include, "Python.h")):
        raise RuntimeError(f"punctual_build: no Python.h in {include} (Debian: python3-dev)")
    out = os.path.join(build_dir, "_punctual" + importlib.machinery.EXTENSION_SUFFIXES[0])
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


def get_requires_for_build_wheel(config_settings=None) -> list:
    return []


def get_requires_for_build_sdist(config_settings=None) -> list:
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None) -> str:
    d = os.path.join(metadata_directory, _dist_info())
    os.makedirs(d, exist_ok=True)
    for name, text in (("METADATA", _metadata()), ("WHEEL", _wheel_file())):
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(text)
    return _dist_info()


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None) -> str:
    keep = os.environ.get("PUNCTUAL_BUILD_DIR")
    build_dir = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="punctual-build-")
    log: list = []
    try:
        ext = _build_extension(build_dir, log)
        files = {f"{NAME}/{n}": _read(os.path.join(HERE, NAME, n)) for n in PACKAGE_FILES}
        files[f"{NAME}/{os.path.basename(ext)}"] = _read(ext)
        info = _dist_info()
        files[f"{info}/METADATA"] = _metadata().encode()
        files[f"{info}/WHEEL"] = _wheel_file().encode()
        files[f"{info}/top_level.txt"] = f"{NAME}\n".encode()
        name = f"{NAME}-{_version()}-{_tag()}.whl"
        os.makedirs(wheel_directory, exist_ok=True)
        _write_wheel(os.path.join(wheel_directory, name), files)
        return name
    finally:
        if not keep:
            shutil.rmtree(build_dir, ignore_errors=True)


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
