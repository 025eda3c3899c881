# SPDX-License-Identifier: MIT
"""test_install.py: the package as pip installs it (unittest, run by python/tests/run.sh).

The installed wheel's metadata (license, its file, author, project URLs, from
pyproject.toml); the backend's own reader of pyproject.toml (for Pythons without
tomllib) agrees with tomllib; and `pip install -e ./python` in a fresh venv of the
system's python3, offline, imports the package from the source tree, from another
directory, with `python -m punctual` working (skipped where venv or pip is missing).
"""
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import punctual

PYTHON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SYSTEM_PYTHON = "/usr/bin/python3" if os.access("/usr/bin/python3", os.X_OK) else sys.executable


def pyproject():
    try:
        import tomllib
    except ImportError:
        return None
    with open(os.path.join(PYTHON_DIR, "pyproject.toml"), "rb") as f:
        return tomllib.load(f)


class Metadata(unittest.TestCase):
    def test_fields(self):
        meta = importlib.metadata.metadata("punctual")
        self.assertEqual(meta["Name"], "punctual")
        self.assertEqual(meta["Version"], punctual.__version__)
        self.assertEqual(meta["License"], "MIT")
        self.assertEqual(meta.get_all("License-File"), ["LICENSE"])
        self.assertTrue(meta["Author"])
        self.assertTrue(meta["Home-page"].startswith("https://"))
        urls = meta.get_all("Project-URL")
        self.assertIn(f"Homepage, {meta['Home-page']}", urls)
        project = pyproject()
        if project:
            p = project["project"]
            self.assertEqual(meta["Summary"], p["description"])
            self.assertEqual(urls, [f"{k}, {v}" for k, v in p["urls"].items()])
            self.assertEqual(meta["Requires-Python"], p["requires-python"])

    def test_license_file_in_the_wheel(self):
        dist = importlib.metadata.distribution("punctual")
        text = dist.read_text("licenses/LICENSE")
        self.assertIsNotNone(text)
        self.assertIn("MIT License", text)
        with open(os.path.join(PYTHON_DIR, "LICENSE"), encoding="utf-8") as f:
            self.assertEqual(text, f.read())

    def test_main_is_in_the_wheel(self):
        files = {str(f) for f in importlib.metadata.files("punctual")}
        self.assertIn("punctual/__main__.py", files)


class BackendToml(unittest.TestCase):
    def test_own_reader_agrees_with_tomllib(self):
        project = pyproject()
        if project is None:
            self.skipTest("no tomllib (Python < 3.11) to compare with")
        sys.path.insert(0, os.path.join(PYTHON_DIR, "build_backend"))
        try:
            import punctual_build
        finally:
            sys.path.pop(0)
        with open(os.path.join(PYTHON_DIR, "pyproject.toml"), encoding="utf-8") as f:
            self.assertEqual(punctual_build._toml_read(f.read()), project)


class Editable(unittest.TestCase):
    def test_pip_install_e(self):
        probe = subprocess.run([SYSTEM_PYTHON, "-c", "import ensurepip, venv"],
                               stderr=subprocess.DEVNULL)
        if probe.returncode != 0:
            self.skipTest(f"no venv with pip for {SYSTEM_PYTHON} (Debian: python3-venv)")
        tmp = tempfile.mkdtemp(prefix="punctual-editable-")
        try:
            venv = os.path.join(tmp, "venv")
            subprocess.run([SYSTEM_PYTHON, "-m", "venv", venv], check=True)
            py = os.path.join(venv, "bin", "python")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            # the library python.build built (run.sh), else one of its own
            env["PUNCTUAL_BUILD_DIR"] = (os.environ.get("PUNCTUAL_BUILD_DIR")
                                         or os.path.join(tmp, "build"))
            p = subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "-e", PYTHON_DIR],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=600)
            self.assertEqual(p.returncode, 0, p.stdout)
            code = ("import punctual, punctual.asyncio\n"
                    "print(punctual.cpu_count(), punctual.__file__)")
            out = subprocess.run([py, "-c", code], env=env, cwd=tmp, stdout=subprocess.PIPE,
                                 check=True, text=True).stdout.split()
            self.assertEqual(int(out[0]), punctual.cpu_count())
            self.assertEqual(out[1], os.path.join(PYTHON_DIR, "punctual", "__init__.py"))
            # from python/ itself, where punctual/ has no extension beside it
            subprocess.run([py, "-c", "import punctual; punctual.cpu_count()"], env=env,
                           cwd=PYTHON_DIR, check=True)
            subprocess.run([py, "-m", "punctual", "-n", "0"], env=env, cwd=tmp, check=True,
                           stdout=subprocess.DEVNULL)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
