"""The closed loop: analyse → plan → train → ingest → re-plan, for N rounds.

Round 1 plans for `--model` from the store (or a prior, when the store does not know it); each
later round plans for the previous round's rollouts (model `<M>@round<r>`) and trains on from the
previous round's last checkpoint. Every round's plan is stored; its figures and the change from
the round before are printed and kept in `<out>/loop.json`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from curriculab.analysis import queries
from curriculab.analysis.coding import run_rule_coders
from curriculab.analysis.difficulty import fit_store
from curriculab.analysis.store import Store
from curriculab.planner import plan as planning
from curriculab.taxonomy.model import TIERS


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


def _describe(previous: Round, current: Round, diff_rows) -> list[str]:
    words = []
    for tier in TIERS:
        a, b = previous.tier_pass_rates.get(tier), current.tier_pass_rates.get(tier)
        if a is not None and b is not None and round(a, 2) != round(b, 2):
            words.append(f"{tier} pass rate {a:.2f} → {b:.2f}")
    words += [f"{what} {a} → {b}" for what, a, b in diff_rows if what in ("schedule", "start_tier", "band")]
    return words or ["no change"]


def run_loop(db_path: str, model: str, rounds: int, steps_per_round: int, out: Path, problems, problems_spec: str, *,
             train_model: str = "tiny", prior: str | None = "weak", say: Callable[[str], None] = print) -> list[Round]:
    from curriculab.training.grpo import summary_line, train

    out.mkdir(parents=True, exist_ok=True)
    history: list[Round] = []
    checkpoint: str = train_model
    planned_for = model
    previous_plan = None
    for number in range(1, rounds + 1):
        with Store(db_path) as store:  # analyse: code what landed, refit difficulty
            run_rule_coders(store)
            fit_store(store)
        with Store(db_path, read_only=True) as store:
            made = planning.build_plan(store, planned_for, problems, problems_spec,
                                       prior=prior if planned_for not in queries.known_models(store) else None)
        with Store(db_path) as store:
            planning.save(store, made)
        path = planning.export(made, out / f"round{number}" / "plan.yaml", problems)
        current = Round(number, planned_for, made.plan_id,
                        made.schedule + (f" from {made.start_tier}" if made.start_tier else ""), made.weights,
                        dict(made.capability.get("per_tier") or {}))
        if history:
            current.changes = _describe(history[-1], current, planning.diff(previous_plan, made))
        say(f"round {number}: plan {made.plan_id} for {planned_for}: {current.schedule}, "
            f"w {', '.join(f'{t} {made.weights[t]:.2f}' for t in TIERS)}"
            + (f"; {'; '.join(current.changes)}" if current.changes else ""))
        label = f"{model}@round{number}"
        output = out / f"round{number}" / "run"
        result = train(path, checkpoint, max_steps=steps_per_round, output_dir=output, db_path=db_path,
                       save_steps=steps_per_round, model_label=label, summary=lambda s, logs: say("  " + summary_line(s, logs)))
        current.run_id, current.rollouts = result.run_id, result.rollouts
        history.append(current)
        previous_plan = made
        checkpoint = str(output / f"checkpoint-{steps_per_round}")
        planned_for = label
        (out / "loop.json").write_text(json.dumps([asdict(r) for r in history], indent=2))
    return history
