"""Reliability per format family: a rule measured on one agent's logs vouches for that family alone,
and the planner, the report and `agreement` say which measurement they relied on."""

import json

import pytest

from curriculab.analysis import queries
from curriculab.analysis.ingest.common import add_trajectory
from curriculab.analysis.labels import agreement, planner_use, planner_use_by_code
from curriculab.analysis.store import RowBatch, Store
from curriculab.taxonomy.taxonomy import load_taxonomy
from curriculab.trajectory.model import Run, Trajectory
from curriculab.trajectory.vocabulary import format_family

VERSION = load_taxonomy().version
CODE = "skipped_verification"


def test_a_family_is_the_agent_inside_a_many_agent_format():
    assert format_family("claude-code", "claude-code") == "claude-code"
    assert format_family("swe-agent", None) == "swe-agent"
    assert format_family("harbor", "Codex") == "harbor/codex"
    assert format_family("harbor", None) == "harbor/unknown"
    assert format_family(None, None) == "unknown"


def _store_two_families(store: Store, n: int = 24) -> None:
    """`n` failed attempts read from Claude Code sessions and `n` from Codex CLI rollouts; the rules
    flag CODE on every other one; the annotator agrees on the Claude Code ones and disagrees on
    every Codex one."""
    batch = RowBatch()
    statuses, labels = [], {}
    for fmt, model in (("claude-code", "m-claude"), ("codex-cli", "m-codex")):
        run = Run(run_id=f"run-{fmt}", agent=fmt, model=model, source_format=fmt)
        for i in range(n):
            tid = f"{fmt}-{i}"
            t = Trajectory(
                trajectory_id=tid, run_id=run.run_id, run=run, task_id=f"t{i}", model=model, outcome="failed"
            )
            add_trajectory(batch, t, f"h-{tid}", fmt, "x")
            flagged = i % 2 == 0
            statuses.append((tid, CODE, "present" if flagged else "absent"))
            labels[(tid, CODE)] = flagged if fmt == "claude-code" else not flagged
    store.write_batch(batch)
    store.replace_codes(
        "rules",
        VERSION,
        [t for t, _, _ in statuses],
        [(t, c, 1.0, [], "planted") for t, c, s in statuses if s == "present"],
        [(t, c, s, None) for t, c, s in statuses],
    )
    store.save_labels("ann", VERSION, labels)


def test_agreement_is_measured_pooled_and_per_family(store):
    _store_two_families(store)
    results = {(r.family, r.code): r for r in agreement(store, "rules", "ann")}
    pooled, claude, codex = results[("", CODE)], results[("claude-code", CODE)], results[("codex-cli", CODE)]
    assert (pooled.n, claude.n, codex.n) == (48, 24, 24)
    assert claude.kappa == pytest.approx(1.0) and claude.reliable and claude.coverage == 1.0
    assert codex.kappa == pytest.approx(-1.0) and not codex.reliable
    assert pooled.kappa == pytest.approx(0.0) and not pooled.reliable
    stored = store.query("select family, reliable from code_reliability where code = ? order by family", [CODE]).rows
    assert stored == [("", False), ("claude-code", True), ("codex-cli", False)]


def test_the_planner_reads_the_systems_own_family(store):
    _store_two_families(store)
    agreement(store, "rules", "ann")
    rows = queries.records(queries.code_reliability(store, "rules", taxonomy_version=VERSION))
    mine = [r for r in rows if r["code"] == CODE]
    on_claude = planner_use(mine, family="claude-code")
    assert (
        on_claude.used
        and on_claude.why
        == "reliable (κ = 1.00 on 24 labels): the planner uses it on claude-code trajectories (ann's labels)"
    )
    on_codex = planner_use(mine, family="codex-cli")
    assert not on_codex.used and on_codex.why.startswith("unreliable (κ = -1.00 < 0.60 on 24 labels)")
    elsewhere = planner_use(mine, family="openhands")
    assert not elsewhere.used and elsewhere.status == "not used: no labels on openhands"
    assert elsewhere.why == (
        "no labels on openhands trajectories: measured only on all formats pooled, claude-code, codex-cli, "
        "which does not vouch for openhands: label some of its trajectories"
    )
    # a system whose failures come from two families needs both to vouch
    both = planner_use_by_code(mine, [CODE], VERSION, ["claude-code", "codex-cli"])[CODE]
    assert not both.used and both.why.startswith("codex-cli: unreliable")
    families = queries.format_families(queries.failure_formats.records(store))
    assert families == {"m-claude": ["claude-code"], "m-codex": ["codex-cli"]}


def test_exact_codes_hold_for_every_family(store):
    _store_two_families(store)
    store.save_reliability(
        "verifier",
        "(by construction)",
        VERSION,
        [("all_tests_fail", 0, None, None, 1.0, True, False)],
        method="verifier",
    )
    rows = queries.records(queries.code_reliability(store, "verifier", taxonomy_version=VERSION))
    assert planner_use(rows, family="openhands").used


def test_agreement_command_prints_the_family_and_coverage(tmp_path):
    from click.testing import CliRunner

    from curriculab.cli import cli

    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        _store_two_families(store)
    result = CliRunner().invoke(cli, ["--db", str(db), "agreement", "--coder", "rules", "--annotator", "ann", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(r["family"], r["code"], r["n"], r["coverage"]) for r in rows] == [
        ("all formats", CODE, 48, 1.0),
        ("claude-code", CODE, 24, 1.0),
        ("codex-cli", CODE, 24, 1.0),
    ]
