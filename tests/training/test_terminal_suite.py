"""The built-in suite of terminal tasks: enough of them, across the tiers and kinds, with room for
every behavioural code of the taxonomy, runnable here, and verifiers that `tasks check` trusts."""

from __future__ import annotations

import json
import os
import shutil
from collections import Counter

import pytest

from curriculab.taxonomy.taxonomy import load_taxonomy
from curriculab.training.terminal import check_task, load_task, readiness
from curriculab.training.terminal.suite import BUILTIN_SUITE

TASKS = sorted(p.parent for p in BUILTIN_SUITE.glob("*/task.toml"))
KINDS = {"atomic", "repair", "decoy", "verification", "workflow"}


def test_the_suite_spans_the_tiers_and_kinds_and_gives_every_behavioural_code_room():
    tasks = [load_task(path) for path in TASKS]
    assert len(tasks) >= 30
    assert Counter(t.config.difficulty for t in tasks) == {"easy": 10, "medium": 10, "hard": 10}
    assert {t.config.metadata["kind"] for t in tasks} == KINDS
    behavioural = {c.code for c in load_taxonomy("v2").codes if c.stage != "infra"}
    exercised = Counter(code for t in tasks for code in t.config.metadata["exercises"])
    assert set(exercised) == behavioural, set(exercised) ^ behavioural
    assert min(exercised.values()) >= 2  # every code has more than one task where it can occur
    for task in tasks:
        assert task.config.declared_milestones >= 2 and task.has_oracle, task.task_id
        assert readiness(task) == [], task.task_id  # bash, coreutils, grep/sed/awk and python3 only
        assert task.image.apt_packages == task.image.pip_packages == [], task.task_id
    assert sum(len(t.steps) > 1 for t in tasks) >= 3  # multi-step repairs and workflows
    # what git and a wheel carry: no empty folder, no dotfile (the Dockerfile makes empty folders)
    carried = [p for p in BUILTIN_SUITE.rglob("*") if "__pycache__" not in p.parts]
    assert [p for p in carried if p.name.startswith(".") or (p.is_dir() and not any(p.iterdir()))] == []
    # nor bytecode beside a task's files (scripts/setup.sh compiles the package, not the suite):
    # an episode would get it with the files its Dockerfile copies
    assert list(BUILTIN_SUITE.glob("*/environment/**/__pycache__")) == []


def test_tasks_import_builtin_stores_the_suite_with_its_tiers(cli_run):
    done = cli_run("tasks", "import", "builtin", "--json")
    assert done.exit_code == 0 and json.loads(done.stdout)["tasks"] == len(TASKS)
    rows = json.loads(
        cli_run("query", "SELECT tier_authored, count(*) AS n FROM tasks GROUP BY 1 ORDER BY 1", "--json").stdout
    )
    assert rows == [{"tier_authored": t, "n": 10} for t in ("basic", "complex", "intermediate")]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)")
def test_every_builtin_task_passes_its_check_oracle_one_and_do_nothing_zero_on_each_milestone():
    for path in TASKS:
        report = check_task(path)
        assert report.ok, (report.task_id, report.flags, report.reasons)
        declared = load_task(path).config.declared_milestones
        assert len(report.oracle.milestones) == declared, report.task_id
        assert set(report.oracle.milestones.values()) == {1.0}, report.task_id
        assert set(report.nop.milestones.values()) == {0.0}, report.task_id


def test_every_checker_ends_with_the_suites_shared_final_step_and_names_its_milestones():
    shared = (BUILTIN_SUITE / "milestones.py").read_text()
    checks = sorted(BUILTIN_SUITE.glob("*/tests/check.py")) + sorted(BUILTIN_SUITE.glob("*/steps/*/tests/check.py"))
    assert len(checks) >= 30
    for check in checks:
        # a stale copy would judge by old rules: `python -m curriculab.training.terminal.suite.milestones` rewrites them
        assert (check.parent / "milestones.py").read_text() == shared, check
        assert check.read_text().rstrip().endswith("finish(MILESTONES)"), check
    for path in TASKS:
        task = load_task(path)
        assert all(step.milestones for step in task.steps), task.task_id  # checked by name
        counted = len(task.steps[0].milestones) if len(task.steps) == 1 else len(task.steps)
        assert counted == task.config.declared_milestones, task.task_id


@pytest.mark.slow
@pytest.mark.docker
def test_every_builtin_task_passes_its_check_on_docker_and_on_namespaces(cli_run, require_docker):
    from curriculab.training.terminal.docker import client

    require_docker(client() is not None)
    backends = ["docker"] + (["namespaces"] if os.geteuid() == 0 else [])
    for backend in backends:
        done = cli_run("tasks", "check", "builtin", "--backend", backend, "--jobs", "4", "--json", db=False)
        reports = json.loads(done.stdout)
        assert done.exit_code == 0 and len(reports) == len(TASKS), (backend, done.output[-2000:])
        failing = [(r["task_id"], r["flags"], r["reasons"]) for r in reports if not r["ok"] or r["backend"] != backend]
        assert failing == [], backend
