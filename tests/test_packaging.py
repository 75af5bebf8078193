"""A plain (not editable) install carries the microprograms and configs that ship with harts inside the
package, and finds them there; pyproject.toml lists every package.

The package is built as a wheel would hold it (setuptools' build_py, offline) from a copy of the files a
build reads, and imported from the build directory.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harts.errors import InputError
from harts.machine.config import load_config

REPO = Path(__file__).resolve().parent.parent


def files(root: Path, pattern: str) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob(pattern) if "__pycache__" not in p.parts}


def test_a_built_package_holds_every_module_and_finds_the_shipped_files(tmp_path):
    source, built = tmp_path / "source", tmp_path / "built"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("harts", "microcode", "configs"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-c", "from setuptools import setup; setup()", "--quiet", "build_py",
                    "--build-lib", str(built)], cwd=source, check=True, capture_output=True)
    package = built / "harts"
    assert files(package, "*.py") == files(REPO / "harts", "*.py")
    assert files(package / "microcode", "*") == files(REPO / "microcode", "*")
    assert files(package / "configs", "*") == files(REPO / "configs", "*")
    # From anywhere else, a shipped config is found by its name and its microprogram by the config's.
    probe = ("import harts, harts.machine.config as c; config = c.load_config('store_and_forward_e9'); "
             "print(harts.__file__, config.path, config.microcode_path())")
    found = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(built)},
                           check=True, capture_output=True, text=True).stdout.split()
    assert found == [str(package / "__init__.py"), str(package / "configs" / "store_and_forward_e9.yaml"),
                     str(package / "microcode" / "store_and_forward.yaml")]


def test_a_shipped_config_is_named_without_its_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("explicit_e5", "explicit_e5.yaml"):
        assert load_config(name).path == str(REPO / "configs" / "explicit_e5.yaml")
    (tmp_path / "explicit_e5.yaml").write_text("topology: {kind: hex, size: 3}\n")
    assert load_config("explicit_e5.yaml").topology_spec == {"kind": "hex", "size": 3}  # a file comes first
    with pytest.raises(InputError, match="nor is it the name of a config that ships with harts .*uniform_e9"):
        load_config("uniform_e10")
    with pytest.raises(InputError, match="file not found$"):
        load_config("elsewhere/uniform_e9")  # a path is only a path
