"""The layering contract (`.importlinter`, DESIGN.md's import direction) holds, read by
import-linter from the checkout itself (`curriculab/<name>` are symlinks to the top-level folders,
so static tools resolve `curriculab.*` as Python does), and fails on a planted upward import (in a
copy of the package). Static tools find every module where it lives."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # two import-linter runs

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("analysis", "taxonomy", "planner", "training", "dashboard")
# no editable-install finder: what a static tool sees is the checkout on sys.path
_NO_FINDER = (
    "import sys; sys.meta_path[:] = [f for f in sys.meta_path if '__editable__' not in "
    "str(getattr(f, '__module__', '')) + type(f).__module__]; "
)
_LINT = _NO_FINDER + "from importlinter.cli import lint_imports; sys.exit(lint_imports(config_filename=sys.argv[1]))"


def lint(site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", _LINT, str(ROOT / ".importlinter")],
        cwd=site,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(site)},
    )


def test_every_curriculab_module_resolves_to_its_file_in_the_checkout():
    code = _NO_FINDER + (
        "import importlib.util; print(*[importlib.util.find_spec(f'curriculab.{n}.' + m).origin "
        "for n, m in (('analysis', 'queries.attempts'), ('taxonomy', 'taxonomy'), ('planner', 'plan'), "
        "('training', 'rewards'), ('dashboard', 'common'))], sep='\\n')"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    found = [Path(line).resolve() for line in done.stdout.split()]
    assert found == [
        ROOT / "analysis" / "queries" / "attempts.py",
        ROOT / "taxonomy" / "taxonomy.py",
        ROOT / "planner" / "plan.py",
        ROOT / "training" / "rewards.py",
        ROOT / "dashboard" / "common.py",
    ]
    assert all((ROOT / "curriculab" / name).resolve() == ROOT / name for name in FOLDERS)


def test_the_layers_hold():
    done = lint(ROOT)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "2 kept, 0 broken" in done.stdout


def test_an_upward_import_breaks_the_contract(tmp_path):
    site = tmp_path
    shutil.copytree(
        ROOT / "curriculab", site / "curriculab", ignore=shutil.ignore_patterns("__pycache__")
    )  # links followed
    planted = site / "curriculab" / "trajectory" / "vocabulary.py"
    planted.write_text(
        planted.read_text() + "\n\ndef _planted():\n    from curriculab.training import problems  # noqa\n"
    )
    done = lint(site)
    assert done.returncode == 1
    assert "curriculab.trajectory is not allowed to import curriculab.training" in done.stdout
    assert "curriculab.trajectory.vocabulary -> curriculab.training.problems" in done.stdout
