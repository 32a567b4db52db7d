"""The closed loop: analyse → plan → train → ingest → re-plan, for N rounds.

Round 1 plans for `--model` from the store (or a prior, when the store does not know it); each
later round plans for the previous round's rollouts (model `<M>@round<r>`) and trains on from the
previous round's last checkpoint. Rollouts are coded by the verifier as they land, so each
round prints the rollout failure distribution (share and 95% interval per code) and the plan
shifts those codes caused in the next round (α, w, task mix or a reward term). Every round's
plan is stored; its figures and the change from the round before are printed and kept in
`<out>/loop.json`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from curriculab.analysis import queries
from curriculab.analysis.coding import run_rule_coders, run_verifier_coder
from curriculab.analysis.difficulty import fit_store
from curriculab.analysis.store import Store
from curriculab.planner import plan as planning
from curriculab.trajectory.vocabulary import TIERS

if TYPE_CHECKING:
    from curriculab.training.problems import Problem


@dataclass
class Round:
    """One round of the loop."""

    round: int
    """1, 2, ..."""
    planned_for: str
    """The model name the plan was made for."""
    plan_id: str
    """The stored plan."""
    schedule: str
    """Its schedule (and start tier)."""
    weights: dict[str, float]
    """Its weights."""
    tier_pass_rates: dict[str, float | None]
    """The capability the plan saw, per tier."""
    run_id: str = ""
    """The training run."""
    rollouts: int = 0
    """Completions written."""
    changes: list[str] = field(default_factory=list)
    """What changed from the round before, in words."""
    code_effects: list[str] = field(default_factory=list)
    """The plan's reasons that act on the previous round's rollout codes."""
    rollout_codes: list[dict[str, Any]] = field(default_factory=list)
    """This round's rollout failure distribution (`queries.rollout_codes`): code, n, failures, share, ci_low, ci_high."""
    all_same_share: float | None = None
    """Share of this round's GRPO groups with all-equal rewards (no gradient)."""
    schedule_progress: float = 1.0
    """How far the round's schedule got (steps done over planned steps)."""


def _describe(previous: Round, current: Round, diff_rows: list[tuple[str, str, str]]) -> list[str]:
    words = []
    for tier in TIERS:
        a, b = previous.tier_pass_rates.get(tier), current.tier_pass_rates.get(tier)
        if a is not None and b is not None and round(a, 2) != round(b, 2):
            words.append(f"{tier} pass rate {a:.2f} → {b:.2f}")
    words += [
        f"{what} {a} → {b}"
        for what, a, b in diff_rows
        if what in ("schedule", "start_tier", "band", "reward", "codes used", "task mix") or what.startswith("weights.")
    ]
    return words or ["no change"]


def describe_distribution(rows: list[dict[str, Any]], limit: int = 6) -> str:
    if not rows:
        return "no failed rollouts"
    return (
        ", ".join(f"{r['code']} {r['share']:.0%} [{r['ci_low']:.0%}–{r['ci_high']:.0%}]" for r in rows[:limit])
        + f" of {rows[0]['failures']} failed rollouts"
    )


def run_loop(
    db_path: str,
    target: str,
    rounds: int,
    steps_per_round: int,
    out: Path,
    problems: list[Problem],
    problems_spec: str,
    *,
    weights: str = "tiny",
    prior: str | None = "weak",
    say: Callable[[str], None] = print,
    grpo_overrides: dict[str, Any] | None = None,
    allow_unsandboxed: bool = False,
) -> list[Round]:
    """Run `rounds` rounds of analyse → plan → train → ingest, planning for `target` (the model name
    its trajectories carry) and training `weights` (tiny, smollm2 or a model directory; each later
    round trains on from the round before's); `grpo_overrides` change the plans'
    `grpo` sections before training (e.g. a shorter max_completion_length on a CPU);
    `allow_unsandboxed`: score where no sandbox works (`train`'s option)."""
    from curriculab.training.callback import summary_line
    from curriculab.training.grpo import train

    out.mkdir(parents=True, exist_ok=True)
    history: list[Round] = []
    checkpoint: str = weights
    planned_for = target
    previous_plan: planning.ProblemPlan | None = None
    for number in range(1, rounds + 1):
        with Store(db_path) as store:  # analyse: code what landed, refit difficulty
            run_rule_coders(store)
            run_verifier_coder(store, uncoded_only=True)
            if queries.known_models(store):  # an empty store (a model trained from scratch) has nothing to fit yet
                fit_store(store)
        with Store(db_path, read_only=True) as store:
            made = planning.build_plan(
                store,
                planned_for,
                problems,
                problems_spec,
                prior=prior if planned_for not in queries.known_models(store) else None,
            )
        with Store(db_path) as store:
            planning.save(store, made)
        path = planning.export(made, out / f"round{number}" / "plan.yaml", problems)
        config = planning.training_config(made, path.name)
        config.base_dir = path.parent
        config.curriculum.planned_steps = steps_per_round  # the schedule spans the round
        config.grpo.update(grpo_overrides or {})
        current = Round(
            number,
            planned_for,
            made.plan_id,
            made.schedule + (f" from {made.start_tier}" if made.start_tier else ""),
            made.weights,
            dict(made.capability.get("per_tier") or {}),
        )
        current.code_effects = [
            r
            for r in made.reasons
            if r.startswith("reward: ") or (r.startswith("failure-driven shift") and "(verifier)" in r)
        ]
        ignored = [c["code"] for c in made.codes if c["coder"] == "verifier" and not c["used"] and c["share"]]
        if ignored:
            current.code_effects.append(
                f"rollout codes present but not acted on (share's lower bound under 5%, or no "
                f"curriculum effect): {', '.join(ignored)}"
            )
        if history and previous_plan is not None:
            current.changes = _describe(history[-1], current, planning.diff(previous_plan, made))
        say(
            f"round {number}: plan {made.plan_id} for {planned_for}: {current.schedule}, "
            f"w {', '.join(f'{t} {made.weights[t]:.2f}' for t in TIERS)}, reward "
            + " + ".join(f"{w:g}·{f}" for f, w in zip(made.reward_functions, made.reward_weights) if w)
            + (f"; {'; '.join(current.changes)}" if current.changes else "")
        )
        for effect in current.code_effects:
            say(f"  from round {number - 1}'s rollout codes: {effect}")
        label = f"{target}@round{number}"
        output = out / f"round{number}" / "run"
        result = train(
            config,
            checkpoint,
            max_steps=steps_per_round,
            output_dir=output,
            db_path=db_path,
            save_steps=steps_per_round,
            model_label=label,
            summary=lambda s, logs: say("  " + summary_line(s, logs)),
            allow_unsandboxed=allow_unsandboxed,
        )
        current.run_id, current.rollouts = result.run_id, result.rollouts
        current.all_same_share, current.schedule_progress = result.all_same_share, result.schedule_progress
        with Store(db_path, read_only=True) as store:
            current.rollout_codes = queries.records(queries.rollout_codes(store, run_id=result.run_id))
        say(
            f"  round {number} rollouts ({result.rollouts}): {describe_distribution(current.rollout_codes)}"
            + (f"; all-same groups {result.all_same_share:.0%}" if result.all_same_share is not None else "")
            + (f"; schedule reached {result.schedule_progress:.0%} of its plan" if result.schedule_progress < 1 else "")
        )
        history.append(current)
        previous_plan = made
        checkpoint = str(output / f"checkpoint-{steps_per_round}")
        planned_for = label
        (out / "loop.json").write_text(json.dumps([asdict(r) for r in history], indent=2))
    return history
