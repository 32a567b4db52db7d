"""The layering contract (`.importlinter`, docs/layout.md's import direction) holds, read by
import-linter from the checkout itself (`curriculab/<name>` are symlinks to the top-level folders,
so static tools resolve `curriculab.*` as Python does), and fails on a planted upward import (in a
copy of the package). Static tools find every module where it lives."""

from __future__ import annotations

import ast
import os
import re
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


# SQL over the store's tables lives in the store, the read API, and the rule coders' statements
# (which run only through `Store.code_with_rules`); the analyst's console examples are SQL a person
# sends through `queries.select_from`, the sealed door from outside.
SQL_HOMES = ("analysis/store/", "analysis/queries/", "taxonomy/coders/rules.py")
CONSOLE_EXAMPLES = {"dashboard/views/sql.py", "curriculab/demo.py", "curriculab/commands/store.py"}
_TABLE = (
    r"(?:trajectories|steps|tasks|runs|test_results|failure_codes|coding_status|labels|plans|training_metrics"
    r"|irt_tasks|irt_models|irt_checks|ingest_manifest|ingest_errors|code_reliability|schema_migrations|v_\w+)\b"
)
_SQL = re.compile(
    rf"\bselect\b[^;]{{0,400}}?\bfrom\s+{_TABLE}|\binsert\s+into\s+{_TABLE}|\bupdate\s+{_TABLE}\s+set\b"
    rf"|\bdelete\s+from\s+{_TABLE}",
    re.IGNORECASE,
)
_RUNS_SQL = {"query", "query_many", "frame", "run_statements", "execute", "sql"}


def _sql_in(path: Path, relative: str) -> list[str]:
    """Where the module at `path` holds SQL over a store table or runs SQL on a connection."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        statement = isinstance(node, ast.Constant) and isinstance(node.value, str) and _SQL.search(node.value)
        # prose that quotes a console query for a person to run (`select ...`) is a hint, not a read
        if statement and statement.string[statement.start() - 1 : statement.start()] not in ("`", '"'):
            if relative not in CONSOLE_EXAMPLES:
                found.append(f"{relative}:{node.lineno}: SQL over a store table")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _RUNS_SQL:
            found.append(f"{relative}:{node.lineno}: .{node.func.attr}(...)")
    return found


def test_sql_over_the_store_lives_in_the_store_and_the_read_api_only():
    found = []
    for package in [*FOLDERS, "curriculab"]:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative.split("/")[1] in FOLDERS or relative.startswith(SQL_HOMES):
                continue  # the links (their files are read under their own folders), and SQL's homes
            found += _sql_in(path, relative)
    assert found == []


def test_the_sql_check_finds_a_statement_outside_its_homes(tmp_path):
    planted = tmp_path / "evidence.py"
    planted.write_text(
        'def f(store):\n    return store.query("select count(*) from trajectories where model = ?", ["m"])\n'
        "HINT = 'check the name with `curriculab query \"select distinct model from trajectories\"`'\n"
    )
    assert sorted(_sql_in(planted, "planner/evidence.py")) == [
        "planner/evidence.py:2: .query(...)",
        "planner/evidence.py:2: SQL over a store table",
    ]
