"""Plans in the agent's language: `plan --tasks SUITE` chooses from a terminal task suite.

The same evidence as a code-model plan — each coder's failure codes for the model, used only
where reliable (exact by construction, or measured against labels), covered, and large enough
(`planner.evidence.failure_targets`) — expressed for tasks through the taxonomy's task-effect
table (`taxonomy/task_effects.yaml`): tasks built to provoke a used code (`exercises`), tasks of
the kinds its remediation names, deeper tasks where work breaks, and the process reward terms it
switches on. Measured difficulty (the model's pass rate per task, smoothed) weights each task by
the signal its next group can carry, p(1 − p). Every decision, used or ignored, is in the reasons.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from curriculab.analysis import queries
from curriculab.analysis.store import Store
from curriculab.planner.config import DatasetSection, PlanHeader, RewardSection, TrainingConfig
from curriculab.planner.evidence import CodeDecision, PlanError, coded_decisions, reward_terms, time_reading
from curriculab.planner.plan import TASK_PLAN_PREFIX, MixEntry, TaskPlan, grpo_section
from curriculab.taxonomy.task_effects import table_version, task_effects

TASK_CODERS = ("environment", "rules", "verifier")
"""Whose codes a task plan reads: the environment's (exact), the rules' and the verifier's trial codes."""
BASE_REWARD = "milestone_reward"
"""The outcome reward every task plan keeps (the share of milestones passed)."""
REWARD_CAP = 0.5
"""The largest weight a process term gets beside the outcome reward."""


def _task_rows(store: Store, task_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    rows = queries.tasks_by_id.records(store, list(task_ids))
    found = {}
    for row in rows:
        meta = json.loads(row["metadata"]) if isinstance(row["metadata"], str) else (row["metadata"] or {})
        found[row["task_id"]] = {
            "kind": meta.get("kind"),
            "exercises": list(meta.get("exercises") or []),
            "milestones": int(row["n_milestones"] or 1),
            "tier": row["tier_authored"],
        }
    return found


def build_task_plan(
    store: Store,
    model: str,
    suite: str,
    task_ids: Sequence[str],
    *,
    held_out: Sequence[str] = (),
    coders: Sequence[str] = TASK_CODERS,
    shift_strength: float = 2.0,
    group_size: int = 4,
    rows_per_task: int = 3,
    agent: str | None = None,
) -> TaskPlan:
    """A task plan for `model` over the suite's `task_ids` (read-only). `held_out` tasks are kept
    out of training (the loop's held-out evaluation uses them)."""
    known = _task_rows(store, task_ids)
    missing = [t for t in task_ids if t not in known]
    if missing:
        raise PlanError(
            f"{len(missing)} of the suite's tasks are not in the store (first: {missing[0]}). "
            f"Store them first: curriculab tasks import {suite}"
        )
    training = [t for t in task_ids if t not in set(held_out)]
    if not training:
        raise PlanError("every task is held out: keep at least one for training")
    reasons = [
        f"suite {suite}: {len(task_ids)} tasks, {len(held_out)} held out for evaluation, {len(training)} to train on"
    ]
    flagged = {r["task_id"]: r for r in queries.task_health.records(store, flagged_only=True)}
    suspect = [t for t in training if t in flagged]
    if suspect:
        if len(suspect) == len(training):
            raise PlanError(
                f"every training task is flagged by task health ({', '.join(suspect[:5])}…): check them and mark them "
                "with `curriculab tasks checked ID...`, or choose another suite"
            )
        training = [t for t in training if t not in flagged]
        reasons.append(
            f"task health: {len(suspect)} tasks kept out of the mix until checked ("
            + "; ".join(
                f"{t}: {flagged[t]['health']} in {flagged[t]['attempts']} attempts by {flagged[t]['systems']} systems"
                for t in suspect[:5]
            )
            + ("; …" if len(suspect) > 5 else "")
            + "): `curriculab tasks checked ID` puts one back"
        )
    decisions, versions = coded_decisions(store, model, coders, agent)  # `agent`: one system's codes and time
    if timing := time_reading(store, model, agent):
        reasons.append(timing)
    if model not in queries.known_models(store):
        reasons.append(f"no trajectories of {model} in the store: every task weighs the same, the outcome reward alone")
    effects = task_effects()
    used = [d for d in decisions if d.used]
    # one decision per code: the exact coder's where several coders found it
    by_code: dict[str, CodeDecision] = {}
    for d in used:
        if d.code not in by_code or (by_code[d.code].method == "labels" and d.method != "labels"):
            by_code[d.code] = d
    cells = {
        r["task_id"]: (int(r["passes"]), int(r["attempts"]))
        for r in queries.task_cells.records(store, model=model)
        if r["task_id"] in known
    }
    reached = queries.milestones_reached(store, model)
    depths = sorted(known[t]["milestones"] for t in training)
    deep = max(depths[len(depths) // 2], int(reached or 0))  # deeper: past the suite's median and what failures reach
    bonus = {t: 0.0 for t in training}
    why: dict[str, list[str]] = {t: [] for t in training}
    calling: list[CodeDecision] = []  # used codes whose task effect switches on a reward term
    for code, d in sorted(by_code.items()):
        effect = effects.get(code)
        if effect is None:
            reasons.append(f"{code} ({d.coder}): used, but the task-effect table has no entry: no task shift")
            continue
        amount = shift_strength * (d.ci_low or 0.0)
        chosen = [
            t
            for t in training
            if code in known[t]["exercises"]
            or known[t]["kind"] in effect.kinds
            or (effect.deeper_milestones and known[t]["milestones"] > deep)
        ]
        for t in chosen:
            bonus[t] += amount
            why[t].append(code)
        depth = (
            f"; more than {deep} milestones (its failures reach {reached or 0:.1f})" if effect.deeper_milestones else ""
        )
        reasons.append(
            f"{code} ({d.coder}): {d.reason.split(' → ')[0]} → {len(chosen)} tasks weighted ×(1 + {amount:.3f}) "
            f"(its own exercises, kinds {', '.join(effect.kinds) or 'none'}{depth}): {effect.note}"
        )
        if effect.reward_term:
            calling.append(replace(d, reward_term=effect.reward_term))
    for d in decisions:
        if not d.used:
            reasons.append(f"{d.code} ({d.coder}): {d.reason}")
    mix = []
    for t in training:
        passes, attempts = cells.get(t, (0, 0))
        p = (passes + 1) / (attempts + 2)
        weight = round(4 * p * (1 - p) * (1 + bonus[t]), 6)
        mix.append(
            MixEntry(
                problem_id=t,
                source="terminal",
                predicted_pass_rate=round(p, 4) if attempts else None,
                weight=weight,
                copies=0,
                tier_mix={known[t]["tier"]: 1.0} if known[t]["tier"] else {},
            )
        )
    total, rows = sum(e.weight for e in mix), rows_per_task * len(mix)
    for e in mix:  # at least one row each: no task of the suite is dropped, the weights say how often
        e.copies = max(1, round(rows * e.weight / total))
    measured = sum(1 for t in training if cells.get(t, (0, 0))[1])
    reasons.append(
        f"difficulty: {measured} of {len(training)} tasks have attempts by {model}; each weighs 4·p(1−p) with p its "
        "smoothed pass rate (signal a group of its rollouts can carry), times the code shifts above"
    )
    functions, weights = [BASE_REWARD], [1.0]
    for term, (weight, codes) in sorted(reward_terms(calling, REWARD_CAP).items()):
        functions.append(f"{term}_reward")
        weights.append(weight)
        reasons.append(
            f"reward: {term}_reward added with weight {weight:.3f} beside {BASE_REWARD} (the largest lower 95% bound "
            f"among {', '.join(codes)})"
        )
    if len(functions) == 1:
        reasons.append(f"reward: {BASE_REWARD} alone (no used code switches on a process term)")
    plan = TaskPlan(
        target_model=model,
        target_agent=agent,
        strategy="milestones",
        group_size=group_size,
        codes=[asdict(d) for d in decisions],
        taxonomy_version=", ".join(versions) or None,
        coder="+".join(coders),
        reward_functions=functions,
        reward_weights=weights,
        problems=f"{TASK_PLAN_PREFIX}{suite}",
        task_mix=mix,
        excluded={"held_out": len(held_out)},
        provenance={
            "store": queries.store_fingerprint(store),
            "inputs": {
                "model": model,
                "suite": suite,
                "held_out": sorted(held_out),
                "coders": list(coders),
                "shift_strength": shift_strength,
                "task_effects_version": table_version(),
            },
        },
        reasons=reasons,
    )
    plan.plan_id = plan.content_id()
    return plan


def task_grpo_section(plan: TaskPlan, output_dir: str = "runs/agentic") -> dict[str, Any]:
    """`trl.GRPOConfig` fields for agentic GRPO: small groups, a few tool turns."""
    return {
        **grpo_section(plan, output_dir),
        "max_completion_length": 1024,
        "max_tool_calling_iterations": 6,
        "learning_rate": 1.0e-5,
    }


def task_training_config(plan: TaskPlan, yaml_name: str = "plan.yaml", rows: int | None = None) -> TrainingConfig:
    """A task plan as the trainer takes it (plan.yaml is its dump; its dataset, the .parquet of the same name)."""
    return TrainingConfig(
        plan=PlanHeader(
            plan_id=plan.plan_id,
            planner_version=plan.planner_version,
            target_model=plan.target_model,
            provenance=plan.provenance,
            reasons=plan.reasons,
        ),
        grpo=task_grpo_section(plan),
        dataset=DatasetSection(
            path=Path(yaml_name).with_suffix(".parquet").name,
            rows=sum(e.copies for e in plan.task_mix) if rows is None else rows,
            tasks=plan.suite,
            columns=["task_id"],
        ),
        reward=RewardSection(functions=plan.reward_functions, weights=plan.reward_weights),
        scale=dict(SCALE),
    )


def export_task_plan(plan: TaskPlan, path: Path | str) -> Path:
    """Write plan.yaml and its dataset (one row per practice of a task: `task_id`) beside it."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    task_rows = [e.problem_id for e in plan.task_mix for _ in range(e.copies)]
    pq.write_table(pa.table({"task_id": task_rows}), path.with_suffix(".parquet"), compression="zstd")
    path.write_text(task_training_config(plan, path.name, len(task_rows)).to_yaml())
    return path


SCALE: Mapping[str, Any] = {
    "episodes": "set DOCKER_HOST to run episodes on a remote Docker daemon (`--backend docker`); "
    "bubblewrap runs them on this machine",
    "vllm": "on a GPU, use_vllm: true with vllm_mode colocate (or server with `trl vllm-serve`) generates the turns",
    "harbor": "teams on Harbor's cloud sandboxes can run the same task directories with trl.experimental.harbor "
    "(docs/training.md: what it keeps and loses)",
}
"""How a task plan scales (for people; `train` reads none of it)."""
