"""The installed package finds its own libtessera: the search order of _lib.py, an installed layout
(site-packages/tessera/ with libtessera.so beside the modules, as `pip install ./python` makes it),
and the package version agreeing with the C library's."""
import os
import re
import shutil
import subprocess
import sys

import tessera
from tessera import _lib

from conftest import REPO

PACKAGE = os.path.dirname(os.path.abspath(tessera.__file__))


def test_explicit_library_is_the_only_candidate(monkeypatch):
    monkeypatch.setenv("TESSERA_LIBRARY", "/somewhere/libtessera.so")
    assert _lib._candidates() == ["/somewhere/libtessera.so"]


def test_bundled_library_comes_first_then_the_checkout_build(monkeypatch):
    monkeypatch.delenv("TESSERA_LIBRARY", raising=False)
    paths = _lib._candidates()
    assert paths[0] == os.path.join(PACKAGE, "libtessera.so")
    assert paths[1] == os.path.join(REPO, "build", "lib", "libtessera.so")  # imported from the checkout


def _installed_copy(site):
    """The package's modules copied into site/tessera, the library linked in beside them."""
    target = site / "tessera"
    shutil.copytree(PACKAGE, target, ignore=shutil.ignore_patterns("__pycache__", "libtessera.so*"))
    os.symlink(os.path.realpath(tessera.library_path()), target / "libtessera.so")
    return target


def _run(code, site, cwd):
    """Runs code in a fresh interpreter that sees only the copy at site (no TESSERA_LIBRARY, no checkout)."""
    env = {k: v for k, v in os.environ.items() if k not in ("TESSERA_LIBRARY", "PYTHONPATH")}
    env["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_installed_layout_loads_the_bundled_library(tmp_path):
    site = tmp_path / "site"
    target = _installed_copy(site)
    out = _run("import tessera; print(tessera.library_path()); print(tessera.version_string())", site, tmp_path)
    assert out[0] == str(target / "libtessera.so")
    assert out[1] == tessera.version_string()


def test_installed_layout_does_not_look_for_a_build_tree(tmp_path):
    site = tmp_path / "site"
    _installed_copy(site)
    out = _run("from tessera import _lib; print('\\n'.join(_lib._candidates()))", site, tmp_path)
    assert not any(os.path.join("build", "lib") in p for p in out), out


def test_pyproject_version_is_the_headers(header_version):
    text = open(os.path.join(REPO, "python", "pyproject.toml")).read()
    version = re.search(r'^version = "([^"]+)"', text, re.M).group(1)
    assert version == ".".join(map(str, header_version))
