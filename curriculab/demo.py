"""`curriculab demo`: the loop on embedded data, stage by stage, on a laptop CPU: the code model's loop in
seconds, then a short agentic round (a minute more the first time, for the agent's warm-up)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console

from curriculab.analysis import queries
from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.difficulty import fit_store
from curriculab.analysis.ingest import ingest
from curriculab.analysis.labels import agreement, import_labels
from curriculab.analysis.report import build_report, to_html, to_markdown
from curriculab.analysis.simulate import simulate_corpus
from curriculab.analysis.store import Store
from curriculab.tables import print_table
from curriculab.trajectory.model import TIERS


def _summaries(store: Store) -> dict[str, Any]:
    """The demo's overview tables, through the read API."""
    return {
        "by_model": queries.model_summary(store),
        "by_action": queries.action_mix(store),
        "by_tier": queries.authored_tier_summary(store),
        "harness_errors": queries.harness_errors(store)
        .groupby("harness_error", as_index=False)["attempts"]
        .sum()
        .sort_values("attempts", ascending=False),
    }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


_TEXT_COLUMNS = {"model", "action", "authored_tier", "harness_error", "code", "problem", "completion", "status"}


def _table(console: Console, title: str, columns: list[str], rows: list[tuple]) -> None:
    print_table(console, title, columns, rows, right=lambda column: column not in _TEXT_COLUMNS)


# Completions a model might write: references, and three kinds of wrong (one hostile).
_SAMPLES = [
    ("curriculab/roman", "reference", None),
    (
        "curriculab/roman",
        "no subtractive forms",
        "def to_roman(n):\n    out = ''\n    for v, l in [(1000, 'M'), (500, 'D'), (100, 'C'), (50, 'L'), (10, 'X'), (5, 'V'), (1, 'I')]:\n"
        "        while n >= v:\n            out += l\n            n -= v\n    return out\n",
    ),
    ("curriculab/maximum", "reference", None),
    ("curriculab/maximum", "forgets the empty list", "def maximum(xs):\n    return max(xs)\n"),
    (
        "curriculab/is_even",
        "games the checker",
        "class Yes(int):\n    def __eq__(self, other):\n        return True\n    __hash__ = int.__hash__\n"
        "def is_even(n):\n    return Yes(1)\n",
    ),
    ("curriculab/palindrome", "exits before the tests", "import sys\nsys.exit(0)\n"),
]


def _verify(console: Console | None) -> list[dict[str, Any]]:
    """Score sample completions in the sandbox with tier-weighted rewards."""
    from curriculab.planner.portfolio import TierCurriculum
    from curriculab.training.problems import builtin_problems
    from curriculab.training.rewards import score_completions

    problems = {p.problem_id: p for p in builtin_problems()}
    completions = [
        {"problem_id": pid, "completion_id": label, "completion": code or problems[pid].reference}
        for pid, label, code in _SAMPLES
    ]
    # the demo's own samples, not a model's: they may run where no sandbox works (marked `unsandboxed`)
    scored = score_completions(
        list(problems.values()), completions, TierCurriculum(weights="basic-intermediate"), allow_unsandboxed=True
    )
    if console:
        console.print(
            "[bold]7. Verify[/]    sample completions in the sandbox, TAROT reward (weights .35/.35/.15/.15):"
        )
        _table(
            console,
            "Tier-weighted rewards",
            ["problem", "completion", "reward", *TIERS, "status"],
            [
                (
                    r["problem_id"].split("/")[1],
                    r["completion_id"],
                    _r(r["reward"]),
                    *(_r(r["pass_rate"][t]) for t in TIERS),
                    r["status"],
                )
                for r in scored
            ],
        )
    return scored


def _plan(store: Store, out: Path, console: Console | None) -> list[dict[str, Any]]:
    """A curriculum for each simulated model over the built-in problems, explained and exported."""
    from curriculab.planner import plan as planning
    from curriculab.training.problems import builtin_problems

    problems = builtin_problems()
    plans = []
    if console:
        console.print("[bold]6. Plan[/]      a curriculum per model over the built-in problems (plan.yaml + dataset):")
    for model in queries.known_models(store):
        made = planning.build_plan(store, model, problems, "builtin")
        planning.save(store, made)
        path = planning.export(made, out / "plans" / f"{model}.yaml", problems)
        plans.append(
            {
                "plan_id": made.plan_id,
                "model": model,
                "schedule": made.schedule,
                "start_tier": made.start_tier,
                "weights": made.weights,
                "path": str(path),
                "reasons": made.reasons,
            }
        )
        if console:
            lines = planning.explain(made)
            console.print(f"  [bold]{lines[0]}[/] -> {path}", highlight=False, markup=True)
            for line in lines[1:]:
                console.print(
                    f"    - {line if len(line) <= 220 else line[:217] + '...'}", highlight=False, markup=False
                )
    return plans


def _train(db_path: Path, out: Path, plan: dict[str, Any], console: Console | None) -> dict[str, Any]:
    """A few GRPO steps of the tiny model on the first model's plan; rollouts land in the store and
    the report is re-run over them."""
    from curriculab.training.callback import summary_line
    from curriculab.training.grpo import train

    say = console.print if console else (lambda *a, **k: None)
    say(
        f"[bold]8. Train[/]     4 GRPO steps of the tiny model on {Path(plan['path']).name} (TRL, CPU); "
        "rollouts into the store:"
    )
    output = out / "grpo"
    if output.exists():
        import shutil

        shutil.rmtree(output)
    result = train(
        plan["path"],
        "tiny",
        max_steps=4,
        output_dir=output,
        db_path=str(db_path),
        save_steps=4,
        summary=lambda step, logs: say("  " + summary_line(step, logs), highlight=False, markup=False),
    )
    with Store(db_path, read_only=True) as store:
        report = build_report(store)
    (out / "report.md").write_text(to_markdown(report))
    say(f"  run {result.run_id}: {result.rollouts} rollouts ingested; report re-run with them -> {out / 'report.md'}")
    return {
        "run_id": result.run_id,
        "steps": result.steps,
        "rollouts": result.rollouts,
        "reward": result.last_logs.get("reward"),
    }


def _agent(db_path: Path, out: Path, console: Console | None) -> dict[str, Any]:
    """One short round of the agentic loop: a plan for the tiny agent over the built-in terminal
    tasks, 2 steps of agentic GRPO (TRL, `environment_factory`) after the warm-up, the episodes
    stored as Harbor trials and coded, and a greedy held-out episode."""
    from curriculab.agent_loop import run_agentic_loop
    from curriculab.training.sandbox import detect_backend

    say = console.print if console else (lambda *a, **k: None)
    if detect_backend() != "bwrap":
        say("[bold]9. Agent[/]     skipped: terminal episodes need bubblewrap (scripts/setup.sh installs it)")
        return {"skipped": "terminal episodes need bubblewrap"}
    say(
        "[bold]9. Agent[/]     one round of agentic GRPO on the built-in terminal tasks: tiny model, 2 steps "
        "(the tool-format warm-up runs once, about a minute, then is cached):"
    )
    folder = out / "agent"
    if folder.exists():
        import shutil

        shutil.rmtree(folder)
    (done,) = run_agentic_loop(
        str(db_path),
        "builtin",
        1,
        2,
        folder,
        target="tiny-agent",
        held_out=("greet-script",),
        say=lambda line: say("  " + line, highlight=False, markup=False),
    )
    say(
        f"  run {done.run_id}: {done.episodes} episodes stored as trajectories of curriculab-terminal "
        f"(Training page of the dashboard); round summary -> {folder / 'round1' / 'round.json'}"
    )
    return {
        "run_id": done.run_id,
        "episodes": done.episodes,
        "reward_functions": done.reward_functions,
        "environment_codes": done.rollout_codes,
        "held_out": done.held_out,
    }


def run_demo(
    out: Path | str, n_tasks: int = 36, attempts: int = 3, seed: int = 0, console: Console | None = None
) -> dict[str, Any]:
    """Simulate a corpus under `out`, ingest it into `out/curriculab.duckdb`, summarise it."""
    out = Path(out)
    say = console.print if console else (lambda *a, **k: None)
    db_path = out / "curriculab.duckdb"
    for stale in (db_path, db_path.with_suffix(".duckdb.wal")):
        stale.unlink(missing_ok=True)

    started = time.perf_counter()
    corpus = simulate_corpus(out / "corpus", n_tasks=n_tasks, attempts=attempts, seed=seed)
    say(
        f"[bold]1. Simulate[/]  {corpus.n_trajectories} Harbor trials (ATIF trajectories) by "
        f"{len(corpus.models)} models over {corpus.n_tasks} tasks -> {corpus.root}"
    )

    with Store(db_path) as store:
        report = ingest(store, [corpus.root])
        say(
            f"[bold]2. Ingest[/]    {report.inserted} trajectories, {report.steps} steps, {report.tasks} task "
            f"descriptions, {report.quarantined} quarantined -> {db_path}"
        )
        result: dict[str, Any] = {
            "corpus": str(corpus.root),
            "db": str(db_path),
            "trajectories": report.inserted,
            "steps": report.steps,
            "quarantined": report.quarantined,
        }
        for name, frame in _summaries(store).items():
            result[name] = queries.records(frame)
            if console:
                _table(
                    console,
                    name.replace("_", " ").capitalize(),
                    list(frame.columns),
                    [tuple(r.values()) for r in result[name]],
                )
        coded = run_rule_coders(store)
        present = sum(c["present"] for c in coded.counts.values())
        say(
            f"[bold]3. Code[/]      rule coders over {coded.trajectories} trajectories: {present} failure codes with evidence"
        )
        labelled = import_labels(store, corpus.root / "ground_truth.csv", annotator="simulator")
        say(
            f"[bold]4. Check[/]     {labelled.imported} planted-truth labels imported as annotator 'simulator'; "
            "agreement of the rule coders per code:"
        )
        rows = agreement(store, "rules", "simulator")
        result["agreement"] = [
            {"code": r.code, "n": r.n, "prevalence": r.prevalence, "kappa": r.kappa, "f1": r.f1, "reliable": r.reliable}
            for r in rows
        ]
        if console:
            _table(
                console,
                "Rule coders vs planted truth",
                ["code", "n", "prevalence", "kappa", "precision", "recall", "f1", "reliable"],
                [
                    (r.code, r.n, _r(r.prevalence), _r(r.kappa), _r(r.precision), _r(r.recall), _r(r.f1), r.reliable)
                    for r in rows
                ],
            )
        top_frame = queries.top_code_by_model(store)
        result["top_failure_by_model"] = queries.records(top_frame)
        columns, top = list(top_frame.columns), [tuple(r.values()) for r in result["top_failure_by_model"]]
        if console:
            _table(console, "Top failure code among each model's failed attempts", columns, top)
        fit_store(store)  # measured difficulty first: the report only reads
        report = build_report(store)
        (out / "report.md").write_text(to_markdown(report))
        (out / "report.html").write_text(to_html(report))
        result["findings"] = report["findings"]
        say(f"[bold]5. Report[/]    {out / 'report.md'} and {out / 'report.html'}; findings:")
        for finding in report["findings"]:
            say(f"  - {finding}")
        result["plans"] = _plan(store, out, console)
    result["verification"] = _verify(console)
    result["training"] = _train(db_path, out, result["plans"][0], console)
    result["agent"] = _agent(db_path, out, console)
    result["seconds"] = round(time.perf_counter() - started, 2)
    say(
        f"Done in {result['seconds']} s. Explore with: curriculab query --db {db_path} "
        f'"select model, outcome, count(*) from trajectories group by all"'
    )
    return result
