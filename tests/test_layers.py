"""The layering contract (`.importlinter`, DESIGN.md's import direction) holds, and fails on a
planted upward import. import-linter reads the installed layout, where the root folders sit under
`curriculab/`; the test builds that layout from pyproject's package-dir map (an editable install's
finder would hide it)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # two import-linter runs over a copy of the tree

ROOT = Path(__file__).resolve().parents[1]
_LINT = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in "
         "str(getattr(f, '__module__', '')) + type(f).__module__]; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(config_filename=sys.argv[1]))")


def installed_layout(target: Path) -> Path:
    """The package tree a wheel installs (`curriculab/analysis`, ...), copied from the checkout."""
    folders = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    for package, folder in sorted(folders.items(), key=lambda item: item[0].count(".")):
        shutil.copytree(ROOT / folder, target.joinpath(*package.split(".")), dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    return target


def lint(site: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _LINT, str(ROOT / ".importlinter")], cwd=site, capture_output=True,
                          text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(site)})


def test_the_layers_hold(tmp_path):
    done = lint(installed_layout(tmp_path))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    site = installed_layout(tmp_path)
    planted = site / "curriculab" / "trajectory" / "vocabulary.py"
    planted.write_text(planted.read_text() + "\n\ndef _planted():\n    from curriculab.training import problems  # noqa\n")
    done = lint(site)
    assert done.returncode == 1
    assert "curriculab.trajectory is not allowed to import curriculab.training" in done.stdout
    assert "curriculab.trajectory.vocabulary -> curriculab.training.problems" in done.stdout
