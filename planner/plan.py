"""The plan: from the store's evidence to a curriculum a trainer runs unchanged, with the figure
behind every choice; stored in `plans`, exported as `plan.yaml` + a Parquet dataset."""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from curriculab.analysis import queries
from curriculab.analysis.store import PlanRow, Store
from curriculab.planner.config import (
    CurriculumSection,
    DatasetSection,
    DynamicSection,
    PlanHeader,
    RewardSection,
    TrainingConfig,
    round_floats,
)
from curriculab.planner.dynamic import DynamicSettings
from curriculab.planner.evidence import (
    CodeDecision,
    PlanError,
    coded_decisions,
    estimate_capability,
    reward_terms,
    shift_toward,
    time_reading,
)
from curriculab.planner.portfolio import ORDERS, STRATEGIES, WEIGHTS, Strategy, Thresholds, choose, p_all_same
from curriculab.trajectory.vocabulary import TIERS

PLANNER_VERSION = "2"
"""Bumped when the same inputs would give a different plan (2: verifier codes, reward terms)."""
PASS_REWARDS = ("tarot_reward", "avg_reward", "pass_all_reward")
"""The pass rewards every plan lists (TRL logs each); the strategy's own gets weight 1."""
STRATEGY_REWARD = {"tarot": "tarot_reward", "avg_reward": "avg_reward", "pass_all": "pass_all_reward"}
DEFAULT_CODERS = ("rules", "verifier")
"""Whose codes a plan reads: behavioural rules (agent trials) and the verifier (completions, per-test profiles)."""


class MixEntry(BaseModel):
    """One problem in the task mix."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    problem_id: str
    """The problem."""
    source: str
    """Where it comes from (curriculab, humaneval, a file's own label)."""
    predicted_pass_rate: float | None
    """The target model's pass rate on it, smoothed (None: no rollouts on it yet)."""
    weight: float
    """Relative sampling weight (expected signal p(1 − p), raised for problems that target used codes)."""
    copies: int
    """Rows of the dataset that hold it (how often it is practised)."""
    tier_mix: dict[str, float]
    """Share of its tests per tier."""


TASK_PLAN_PREFIX = "tasks:"
"""A task plan's `problems` is its suite behind this prefix."""


class _PlanCommon(BaseModel):
    """What every plan holds, whatever it trains: the model, rewards, codes read, mix and reasons."""

    model_config = ConfigDict(use_attribute_docstrings=True, extra="forbid")

    plan_id: str = ""
    """Hash of the plan's content (`content_id`): the same store and inputs give the same id."""
    planner_version: str = PLANNER_VERSION
    """Version of the planning rules."""
    target_model: str
    """The model the plan is for (the name its trajectories carry in the store)."""
    target_agent: str | None = None
    """The agent of the one system the plan is for (`plan --system "AGENT · MODEL"`); None: every
    system of the model, pooled (`plan --model`). Left out of the plan id when None, so ids stored
    before it existed stay what they were."""
    strategy: str
    """A problem plan's reward: tarot (tier-weighted), or a baseline (avg_reward, pass_all); a task plan's: milestones."""
    codes: list[dict[str, Any]]
    """Every failure code considered: used (with its shift) or ignored (with the reason)."""
    taxonomy_version: str | None
    """The taxonomy the codes come from (`coder:version` per coder when several were read)."""
    coder: str
    """The coder(s) whose codes were read, joined by `+`."""
    reward_functions: list[str] = Field(default_factory=lambda: list(PASS_REWARDS))
    """The reward functions, in TRL's order."""
    reward_weights: list[float] = Field(default_factory=lambda: [1.0, 0.0, 0.0])
    """One weight per reward function (TRL's `reward_weights`)."""
    problems: str
    """What it draws from: a problem set (builtin, humaneval, a file path) or `tasks:<suite>`."""
    task_mix: list[MixEntry]
    """Problems (or tasks) in the dataset and how often."""
    excluded: dict[str, int]
    """Left out, by reason: always_solved, never_solved, restored_for_diversity; held_out for tasks."""
    provenance: dict[str, Any]
    """Store fingerprint (row counts, content hash) and the inputs."""
    reasons: list[str] = Field(default_factory=list)
    """Every decision with the figure that caused it."""

    @property
    def target(self) -> str:
        """Whom the plan is for, as the report names it: the system agent · model, or the model."""
        return f"{self.target_agent} · {self.target_model}" if self.target_agent else self.target_model

    def content_id(self) -> str:
        """The plan id: a hash of the content, `kind` left out (it follows from `problems`). Plans had no kind
        before schema 17 (`_hashed` gives the body they were hashed over then), so ids stay what they were: a
        stored plan, its runs (`grpo-<plan_id>-…`) and their checkpoints are found again after the upgrade."""
        # rounded: DuckDB's parallel aggregates differ in the last bits from run to run
        body = round_floats(self._hashed(), 9)
        return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()[:12]

    def _hashed(self) -> dict[str, Any]:
        return self.model_dump(exclude={"plan_id", "kind", *self._unused()})

    def _unused(self) -> set[str]:
        """Fields this plan does not use, kept out of its id (a field added later leaves old ids as they were)."""
        return {"target_agent"} if self.target_agent is None else set()


class ProblemPlan(_PlanCommon):
    """A code-model curriculum over a tiered problem set: TAROT's schedule and tier weights."""

    kind: Literal["problems"] = "problems"
    """What the plan trains: a code model on problems."""
    capability: dict[str, Any]
    """value, se, source, per_tier, evidence (planner.evidence.Capability)."""
    band: str
    """weak, middle or strong: where the capability falls against the thresholds."""
    schedule: str
    """forward, reversed, all or static-<tier>."""
    start_tier: str | None
    """The first practised tier when the zero-variance guard moved it (None: the schedule's own)."""
    weights: dict[str, float]
    """w per tier after the failure-driven shift."""
    alpha_bias: dict[str, float]
    """Relative α per tier among the active ones (1 = no bias)."""
    thresholds: dict[str, Any]
    """The capability thresholds and the zero-variance guard used."""
    dynamic: dict[str, Any]
    """Settings of the dynamic schedule the training callback may switch on."""

    @property
    def group_size(self) -> int:
        """GRPO's group (num_generations), the one the zero-variance guard assumed."""
        return int(self.thresholds["group_size"])


class TaskPlan(_PlanCommon):
    """An agent curriculum over a terminal task suite (`planner.tasks`): milestone rewards, tasks
    weighted by measured difficulty and the codes acted on, no tier schedule."""

    kind: Literal["tasks"] = "tasks"
    """What the plan trains: an agent on terminal tasks."""
    group_size: int
    """GRPO's group (num_generations): episodes per task per step."""

    @property
    def suite(self) -> str:
        """The task suite (builtin or a folder of Harbor task directories)."""
        return self.problems.removeprefix(TASK_PLAN_PREFIX)

    @property
    def held_out(self) -> list[str]:
        """Tasks kept out of training for the held-out evaluation."""
        return list(self.provenance.get("inputs", {}).get("held_out") or [])

    def _hashed(self) -> dict[str, Any]:
        # the problem-plan fields a task plan held, empty, before plans had kinds
        legacy: dict[str, Any] = {"capability": {}, "band": "tasks", "schedule": "all", "start_tier": None}
        legacy |= {"weights": {}, "alpha_bias": {}, "thresholds": {"group_size": self.group_size}, "dynamic": {}}
        return self.model_dump(exclude={"plan_id", "kind", "group_size", *self._unused()}) | legacy


Plan = Annotated[ProblemPlan | TaskPlan, Field(discriminator="kind")]
"""A plan of either kind, told apart by `kind` (stored plans gained it in schema 17)."""
_PLAN: TypeAdapter[ProblemPlan | TaskPlan] = TypeAdapter(Plan)


def parse(text: str | bytes) -> ProblemPlan | TaskPlan:
    """A plan from its JSON (as `plans.plan` and `plan --json` hold it)."""
    return _PLAN.validate_json(text)


def _distance_to_band(predicted: float | None, lo: float, hi: float) -> float:
    """How far a predicted pass rate is from the band's nearer edge (no prediction: farthest)."""
    return math.inf if predicted is None else min(abs(predicted - lo), abs(predicted - hi))


def _tier_mix(problem: Any) -> dict[str, float]:
    counts = {t: 0 for t in TIERS}
    for test in problem.tests:
        counts[test.tier] += 1
    total = sum(counts.values())
    return {t: round(counts[t] / total, 4) for t in TIERS}


def _matches(problem: Any, task_filter: str) -> bool:
    kind, _, value = task_filter.partition(":")
    if kind == "has_tier":
        return any(t.tier == value for t in problem.tests)
    return len(problem.tests) >= int(value)


def select_tasks(
    store: Store,
    model: str,
    problems: Sequence[Any],
    decisions: list[CodeDecision],
    band: tuple[float, float] = (0.2, 0.8),
    source_floor: float = 0.1,
    max_copies: int = 4,
    target_bonus: float = 0.5,
) -> tuple[list[MixEntry], dict[str, int], list[str]]:
    """The task mix: problems in the model's informative band (pass rate from its rollouts,
    smoothed), always- and never-solved ones left out and counted, each source kept at
    `source_floor` of the mix at least, problems that target used codes weighted up."""
    lo, hi = band
    observed = {r["task_id"]: r for r in queries.records(queries.task_pass_rates(store, model=model)) if r["attempts"]}
    reasons = []
    filters = sorted({f for d in decisions if d.used for f in d.task_filters})
    entries, left_out = [], []
    for problem in problems:
        row = observed.get(problem.problem_id)
        predicted = None if row is None else (row["passes"] + 1) / (row["attempts"] + 2)  # Beta(1, 1) smoothing
        signal = 0.25 if predicted is None else predicted * (1 - predicted)
        bonus = 1 + target_bonus * sum(_matches(problem, f) for f in filters) / max(len(filters), 1)
        entry = MixEntry(
            problem_id=problem.problem_id,
            source=problem.source or "file",
            predicted_pass_rate=None if predicted is None else round(predicted, 4),
            weight=round(signal * bonus, 6),
            copies=1,
            tier_mix=_tier_mix(problem),
        )
        if predicted is not None and not lo <= predicted <= hi:
            left_out.append((entry, "always_solved" if predicted > hi else "never_solved"))
        else:
            entries.append(entry)
    excluded = {
        "always_solved": sum(k == "always_solved" for _, k in left_out),
        "never_solved": sum(k == "never_solved" for _, k in left_out),
        "restored_for_diversity": 0,
    }
    if not observed or all(p.problem_id not in observed for p in problems):
        reasons.append(
            f"task mix: no rollouts of {model} on these {len(problems)} problems yet (round 1): "
            "the whole set, with authored tiers"
        )
    else:
        reasons.append(
            f"task mix: {len(entries)} of {len(problems)} problems in the band {lo:.2f}–{hi:.2f} "
            f"(smoothed pass rate from {model}'s rollouts); left out {excluded['always_solved']} always solved, "
            f"{excluded['never_solved']} never solved"
        )
    sources = sorted({e.source for e, _ in left_out} | {e.source for e in entries})
    for source in sources:
        need = math.ceil(source_floor * max(len(entries), 1))
        have = sum(e.source == source for e in entries)
        spare = sorted(
            (e for e, _ in left_out if e.source == source),
            key=lambda e: _distance_to_band(e.predicted_pass_rate, lo, hi),
        )
        restored = spare[: max(0, need - have)]
        for e in restored:
            entries.append(e)
            left_out = [(x, k) for x, k in left_out if x is not e]
        if restored:
            excluded["restored_for_diversity"] += len(restored)
            reasons.append(
                f"task mix: restored {len(restored)} {source} problem(s) nearest the band to keep each source "
                f"at {source_floor:.0%} of the mix at least"
            )
    if filters:
        reasons.append(
            f"task mix: problems matching {', '.join(filters)} weighted up to ×{1 + target_bonus:g} "
            "(they address the codes acted on)"
        )
    top = max((e.weight for e in entries), default=1.0) or 1.0
    for e in entries:
        e.copies = max(1, round(e.weight / top * max_copies))
    entries.sort(key=lambda e: e.problem_id)
    return entries, excluded, reasons


POOLING_WARNING = "warning: "
"""How a reason that warns begins (the CLI repeats such reasons on stderr)."""


def pooling_warnings(store: Store, model: str) -> list[str]:
    """Reasons that warn when the model's row pools systems (several agents) or runs that name no model."""
    rows = queries.records(queries.model_pooling(store, model=model))
    concern = queries.pooling_concern(rows[0]) if rows else None
    if concern is None:
        return []
    pooled, kind = concern
    return [
        f"{POOLING_WARNING}{pooled}: "
        + (
            'its capability and pass rates mix systems. Plan for one system (`plan --system "AGENT · MODEL"`: its '
            "codes and time; its capability stays the model's unless its runs are ingested under their own model "
            "name with `curriculab ingest --model`/`--identities`)"
            if kind == "agents"
            else "they may be different models. Name them with `curriculab ingest --model` or `--identities`"
        )
    ]


def plan_target(store: Store, model: str | None, system: str | None) -> tuple[str | None, str, bool]:
    """(agent, model, whether its attempts are agent episodes) for `plan --model M` or `plan --system
    "AGENT · MODEL"` (agent None for a model's systems pooled); a system the store does not hold is an
    error listing the ones it does."""
    agent = None
    if system is not None:
        if model is not None:
            raise PlanError('give --model M or --system "AGENT · MODEL", not both')
        agent, _, model = (part.strip() for part in system.partition("·"))
        if not agent or not model:
            raise PlanError(f'--system {system!r} is not "AGENT · MODEL". Copy a system from `curriculab report`')
        known = [queries.system_name(r["agent"], r["model"]) for r in queries.systems.records(store)]
        if queries.system_name(agent, model) not in known:
            raise PlanError(f"no system {system!r} in the store. Known systems: {', '.join(known) or 'none'}")
    if model is None:
        raise PlanError(
            'plan needs --model M or --system "AGENT · MODEL" (or a subcommand: show, diff). List models: '
            'curriculab query "select distinct model from trajectories"'
        )
    return agent, model, queries.attempts_are_episodes(store, model, agent)


def build_plan(
    store: Store,
    model: str,
    problems: Sequence[Any],
    problems_spec: str,
    *,
    prior: str | None = None,
    coders: Sequence[str] = DEFAULT_CODERS,
    thresholds: Thresholds | None = None,
    dynamic: DynamicSettings | None = None,
    strategy: str = "tarot",
    shift_strength: float = 0.5,
    agent: str | None = None,
) -> ProblemPlan:
    """Plan a curriculum for `model` from the store (read-only; nothing is written); `agent`: for the
    one system agent · model (its failure codes and time; capability and mix stay the model's).
    `thresholds` and `dynamic`: the defaults of `Thresholds()` and `DynamicSettings()` when not given."""
    thresholds = thresholds if thresholds is not None else Thresholds()
    dynamic = dynamic if dynamic is not None else DynamicSettings()
    if strategy not in STRATEGIES:
        raise PlanError(f"strategy {strategy!r} is unknown; use {', '.join(STRATEGIES)}")
    capability = estimate_capability(store, model, prior)
    reasons = pooling_warnings(store, model)
    reasons.append(
        f"capability {capability.value:.2f}"
        + (f" ± {capability.se:.2f}" if capability.se is not None else "")
        + f" from {capability.source}: {capability.evidence}"
    )
    band, schedule, preset = choose(capability.value, thresholds)
    reasons.append(
        f"{band} (capability {capability.value:.2f}; weak below {thresholds.weak_below}, strong from "
        f"{thresholds.strong_from}) → {schedule} schedule, {preset} weights, as TAROT found for {band} models"
        if band != "middle"
        else f"between the thresholds ({thresholds.weak_below}–{thresholds.strong_from}) → forward schedule, uniform weights"
    )
    start_tier = None
    if schedule in ORDERS:
        order = ORDERS[schedule]
        measured = capability.per_tier
        if all(measured.get(t) is None for t in order):
            reasons.append(
                "zero-variance guard: no measured per-tier pass rates, so the start tier is the schedule's own"
            )
        else:
            g, limit = thresholds.group_size, thresholds.max_same_share
            same = {t: p_all_same(rate, g) for t in order if (rate := measured.get(t)) is not None}
            fine = [t for t in order if t in same and same[t] <= limit]
            chosen = fine[0] if fine else min(same, key=lambda t: same[t])
            if chosen != order[0]:
                start_tier = chosen
                first = order[0]
                why = (
                    f"{first} pass rate {measured[first]:.2f} makes {same[first]:.0%} of groups of {g} all-same"
                    if first in same
                    else f"{first} has no measured pass rate"
                )
                reasons.append(
                    f"zero-variance guard: {why} (limit {limit:.0%}) → starts on {chosen} "
                    f"({measured[chosen]:.2f}, {same[chosen]:.0%} all-same)"
                )
            else:
                reasons.append(
                    f"zero-variance guard: {chosen} pass rate {measured[chosen]:.2f} → {same[chosen]:.0%} of "
                    f"groups of {g} all-same (limit {limit:.0%}): start there"
                )
    decisions, versions = coded_decisions(store, model, coders, agent)
    if agent is not None:
        reasons.append(
            f"for the system {agent} · {model}: its failure codes and time; capability and the mix read every "
            f"attempt of {model}"
        )
    if timing := time_reading(store, model, agent):
        reasons.append(timing)
    weights, alpha_bias = shift_toward(WEIGHTS[preset], decisions, shift_strength)
    shifting = [d for d in decisions if d.used and d.tiers]
    if shifting:
        reasons.append(
            "failure-driven shift (each code adds strength × its share's lower 95% bound to its tiers): "
            + "; ".join(f"{d.code} ({d.coder}) {d.reason}" for d in shifting)
            + f" → w {', '.join(f'{t} {weights[t]:.3f}' for t in TIERS)}"
        )
    elif any(d.used for d in decisions):
        reasons.append("no used failure code targets tiers: weights stay the preset's")
    elif decisions:
        reasons.append("no failure code is reliable, covered and large enough to act on: weights stay the preset's")
    else:
        reasons.append(f"no coded failures of {model} in the store: weights stay the preset's")
    functions, reward_weights = (
        list(PASS_REWARDS),
        [1.0 if f == STRATEGY_REWARD[strategy] else 0.0 for f in PASS_REWARDS],
    )
    for term, (weight, codes) in reward_terms(decisions).items():
        functions.append(f"{term}_reward")
        reward_weights.append(weight)
        used_codes = [d for d in decisions if d.used and d.code in codes]
        reasons.append(
            f"reward: {term}_reward added with weight {weight:.3f} beside the pass reward (the largest lower "
            f"95% bound among {', '.join(codes)}; they overlap, so not summed): "
            + "; ".join(f"{d.code} {d.reason}" for d in used_codes)
        )
    for d in decisions:
        if not d.used:
            reasons.append(f"{d.code} ({d.coder}): {d.reason}")
    problems = list(problems)
    mix, excluded, mix_reasons = select_tasks(store, model, problems, decisions, dynamic.band)
    reasons += mix_reasons
    if strategy != "tarot":
        reasons.append(
            f"strategy {strategy}: the baseline reward replaces the tier-weighted one (schedule and weights "
            "kept for reference)"
        )
    plan = ProblemPlan(
        target_model=model,
        target_agent=agent,
        strategy=strategy,
        band=band,
        schedule=schedule,
        start_tier=start_tier,
        capability={k: v for k, v in asdict(capability).items()},
        weights=weights,
        alpha_bias=alpha_bias,
        thresholds=asdict(thresholds),
        dynamic=asdict(dynamic),
        codes=[asdict(d) for d in decisions],
        taxonomy_version=", ".join(versions) or None,
        coder="+".join(coders),
        problems=problems_spec,
        task_mix=mix,
        excluded=excluded,
        reasons=reasons,
        reward_functions=functions,
        reward_weights=reward_weights,
        provenance={
            "store": queries.store_fingerprint(store),
            "inputs": {
                "model": model,
                "prior": prior,
                "coders": list(coders),
                "strategy": strategy,
                "shift_strength": shift_strength,
                "problems": problems_spec,
            },
        },
    )
    plan.plan_id = plan.content_id()
    return plan


def grpo_section(plan: Plan, output_dir: str = "runs/grpo") -> dict[str, Any]:
    """Only `trl.GRPOConfig` fields, with GRPO defaults sized for one GPU (reward weights live in
    the reward section, beside the functions they weigh)."""
    group = plan.group_size
    return {
        "output_dir": output_dir,
        "num_generations": group,
        "per_device_train_batch_size": group,
        "gradient_accumulation_steps": 1,
        "max_completion_length": 512,
        "learning_rate": 1.0e-6,
        "beta": 0.0,
        "temperature": 1.0,
        "num_train_epochs": 1,
        "logging_steps": 1,
        "seed": 0,
        "report_to": "none",
        "log_completions": False,
    }


def export(plan: Plan, path: Path | str, problems: Sequence[Any]) -> Path:
    """Write `plan.yaml` (pinned sections) and its dataset Parquet beside it, from the problems
    the plan was made over. Deterministic: the same plan gives byte-identical files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dataset_path = path.with_suffix(".parquet")
    by_id = {p.problem_id: p for p in problems}
    missing = [e.problem_id for e in plan.task_mix if e.problem_id not in by_id]
    if missing:
        raise PlanError(
            f"the problems given lack {len(missing)} of the plan's problems (first: {missing[0]}). "
            f"Pass the set the plan was made over: {plan.problems}"
        )
    rows = [
        (by_id[e.problem_id].prompt, e.problem_id, json.dumps(e.tier_mix, sort_keys=True))
        for e in plan.task_mix
        for _ in range(e.copies)
    ]
    table = pa.table(
        {"prompt": [r[0] for r in rows], "problem_id": [r[1] for r in rows], "tier_mix": [r[2] for r in rows]}
    )
    pq.write_table(table, dataset_path, compression="zstd")
    path.write_text(render_config(plan, path.name, len(rows)))
    return path


def training_config(plan: ProblemPlan, yaml_name: str = "plan.yaml", rows: int | None = None) -> TrainingConfig:
    """The plan as the trainer takes it (plan.yaml is its dump; the dataset is the .parquet of the same name)."""
    rows = sum(e.copies for e in plan.task_mix) if rows is None else rows
    launch_model = '"$MODEL"'  # a shell variable: the commands paste as they are once MODEL names the weights
    return TrainingConfig(
        plan=PlanHeader(
            plan_id=plan.plan_id,
            planner_version=plan.planner_version,
            target_model=plan.target_model,
            provenance=plan.provenance,
            reasons=plan.reasons,
        ),
        grpo=grpo_section(plan),
        curriculum=CurriculumSection(
            strategy=cast(Strategy, plan.strategy),  # build_plan checked it is one of STRATEGIES
            schedule=plan.schedule,
            start_tier=plan.start_tier,
            weights=plan.weights,
            alpha_bias=plan.alpha_bias,
            thresholds=plan.thresholds,
            dynamic=DynamicSection(enabled=False, **plan.dynamic),
        ),
        dataset=DatasetSection(path=Path(yaml_name).with_suffix(".parquet").name, rows=rows, problems=plan.problems),
        reward=RewardSection(functions=plan.reward_functions, weights=plan.reward_weights),
        scale={
            "accelerate": {
                "compute_environment": "LOCAL_MACHINE",
                "distributed_type": "DEEPSPEED",
                "num_processes": 8,
                "mixed_precision": "bf16",
                "deepspeed_config": {
                    "zero_stage": 2,
                    "offload_optimizer_device": "none",
                    "offload_param_device": "none",
                    "zero3_init_flag": False,
                },
            },
            "deepspeed": "ZeRO-2 for models that fit one GPU's memory with optimizer state sharded; ZeRO-3 (set zero_stage: 3, "
            "zero3_init_flag: true) when the weights themselves must be sharded",
            "vllm": {
                "mode": "colocate",
                "modes": {
                    "server": "a separate GPU runs `trl vllm-serve`; training GPUs call it (use_vllm: true, vllm_mode: server)",
                    "colocate": "vLLM shares the training GPUs (use_vllm: true, vllm_mode: colocate); no extra process",
                },
            },
            "commands": {
                "one_gpu": f"curriculab train --config {yaml_name} --model {launch_model} --use-vllm colocate",
                "vllm_server": f"CUDA_VISIBLE_DEVICES=0 trl vllm-serve --model {launch_model}",
                "multi_gpu": f"CUDA_VISIBLE_DEVICES=1,2,3,4,5,6,7 accelerate launch --config_file accelerate.yaml "
                f"-m curriculab.cli train --config {yaml_name} --model {launch_model} --use-vllm server",
            },
        },
    )


def render_config(plan: Plan, yaml_name: str = "plan.yaml", rows: int | None = None) -> str:
    """The text of plan.yaml (its dataset is the .parquet of the same name)."""
    if isinstance(plan, TaskPlan):
        from curriculab.planner.tasks import task_training_config

        return task_training_config(plan, yaml_name, rows).to_yaml()
    return training_config(plan, yaml_name, rows).to_yaml()


def save(store: Store, plan: Plan) -> bool:
    """Store the plan in `plans` with its plan.yaml text (a plan id is its content: the same plan
    is stored once)."""
    allocation = (
        {"schedule": plan.schedule, "start_tier": plan.start_tier, "alpha_bias": plan.alpha_bias}
        if isinstance(plan, ProblemPlan)
        else {"held_out": plan.held_out}  # a task plan allocates no tiers: which tasks it keeps out
    )
    return store.save_plan(
        PlanRow(
            plan_id=plan.plan_id,
            target_model=plan.target_model,
            strategy=plan.strategy,
            allocation=json.dumps(allocation),
            weights=json.dumps(plan.weights if isinstance(plan, ProblemPlan) else {}),
            task_mix=json.dumps([e.model_dump() for e in plan.task_mix]),
            reasons=json.dumps(plan.reasons),
            config_yaml=render_config(plan),
            plan=plan.model_dump_json(),
            kind=plan.kind,
        )
    )


def load(store: Store, plan_id: str | None = None) -> Plan:
    """A stored plan (the newest when no id is given)."""
    frame = queries.plans(store)
    if frame.empty:
        raise PlanError("no plan is stored yet. Make one: curriculab plan --model M")
    rows = queries.records(frame)
    row = rows[0] if plan_id is None else next((r for r in rows if r["plan_id"] == plan_id), None)
    if row is None:
        raise PlanError(f"no plan {plan_id!r}. Stored: {', '.join(r['plan_id'] for r in rows[:10])}")
    return parse(row["plan"])


def explain(plan: Plan) -> list[str]:
    """The plan in words: one line per decision."""
    rows = sum(e.copies for e in plan.task_mix)
    if isinstance(plan, TaskPlan):
        rewards = ", ".join(f"{f} {w:.3f}" for f, w in zip(plan.reward_functions, plan.reward_weights))
        held = f", {len(plan.held_out)} held out" if plan.held_out else ""
        head = f"task plan {plan.plan_id} for {plan.target}: suite {plan.suite}, rewards {rewards}, "
        return [head + f"{len(plan.task_mix)} tasks ({rows} rows){held}", *plan.reasons]
    head = (
        f"plan {plan.plan_id} for {plan.target}: {plan.strategy}, {plan.schedule}"
        + (f" starting on {plan.start_tier}" if plan.start_tier else "")
        + f", w {', '.join(f'{t} {plan.weights[t]:.3f}' for t in TIERS)}, {len(plan.task_mix)} problems ({rows} rows)"
    )
    return [head, *plan.reasons]


Change = tuple[str, str, str]


def _listed(values: set[str]) -> str:
    return ", ".join(sorted(values)) or "-"


def _problem_changes(a: ProblemPlan, b: ProblemPlan) -> list[Change]:
    changes = [
        (name, str(getattr(a, name)), str(getattr(b, name)))
        for name in ("band", "schedule", "start_tier")
        if getattr(a, name) != getattr(b, name)
    ]
    for tier in TIERS:
        for name in ("weights", "alpha_bias"):
            va, vb = getattr(a, name).get(tier), getattr(b, name).get(tier)
            if va != vb:
                changes.append(
                    (f"{name}.{tier}", "-" if va is None else f"{va:.3f}", "-" if vb is None else f"{vb:.3f}")
                )
    ca, cb = a.capability["value"], b.capability["value"]
    if round(ca, 4) != round(cb, 4):
        changes.append(("capability", f"{ca:.3f}", f"{cb:.3f}"))
    return changes


def _task_changes(a: TaskPlan, b: TaskPlan) -> list[Change]:
    changes = []
    if set(a.held_out) != set(b.held_out):
        changes.append(("held-out tasks", _listed(set(a.held_out)), _listed(set(b.held_out))))
    if a.group_size != b.group_size:
        changes.append(("group size", str(a.group_size), str(b.group_size)))
    return changes


def diff(a: Plan, b: Plan) -> list[Change]:
    """(field, in a, in b) for what changed between two plans. Two problem plans compare their tier
    choices too (band, schedule, weights, capability); two task plans their held-out tasks and group;
    a task plan against a problem plan says they differ in kind and compares what they share: model,
    strategy, rewards, codes used and the mix."""
    changes: list[Change] = []
    if a.kind != b.kind:
        changes.append(("kind", a.kind, b.kind))
    for name in ("target_model", "strategy", "taxonomy_version", "problems"):
        if getattr(a, name) != getattr(b, name):
            changes.append((name, str(getattr(a, name)), str(getattr(b, name))))
    if isinstance(a, ProblemPlan) and isinstance(b, ProblemPlan):
        changes += _problem_changes(a, b)
    elif isinstance(a, TaskPlan) and isinstance(b, TaskPlan):
        changes += _task_changes(a, b)
    reward_a = " + ".join(f"{w:g}·{f}" for f, w in zip(a.reward_functions, a.reward_weights) if w)
    reward_b = " + ".join(f"{w:g}·{f}" for f, w in zip(b.reward_functions, b.reward_weights) if w)
    if reward_a != reward_b:
        changes.append(("reward", reward_a, reward_b))
    used_a = {c["code"] for c in a.codes if c["used"]}
    used_b = {c["code"] for c in b.codes if c["used"]}
    if used_a != used_b:
        changes.append(("codes used", _listed(used_a), _listed(used_b)))
    mix_a = {e.problem_id: e.copies for e in a.task_mix}
    mix_b = {e.problem_id: e.copies for e in b.task_mix}
    if set(mix_a) != set(mix_b):
        changes.append(
            (
                "task mix",
                f"{len(mix_a)} {a.kind}",
                f"{len(mix_b)} {b.kind} (+{len(set(mix_b) - set(mix_a))} −{len(set(mix_a) - set(mix_b))})",
            )
        )
    changed_copies = sum(mix_a[p] != mix_b[p] for p in set(mix_a) & set(mix_b))
    if changed_copies:
        changes.append(("task mix copies", "", f"{changed_copies} {b.kind} practised more or less often"))
    return changes
