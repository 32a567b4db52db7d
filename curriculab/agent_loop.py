"""The agentic loop: plan --tasks → agentic GRPO → episodes coded → re-plan, for N rounds.

Round 1 plans for the agent (`<target>`) from the store; its episodes land as trajectories of the
agent `curriculab-terminal` under that name, coded by the environment, the rules and the
verifier; round 2 plans from them, so its reasons cite round 1's codes and its task mix or reward
terms move for them. Each round ends with a held-out evaluation: greedy episodes on tasks kept out
of training, stored under `<target>@eval` (apart from the rollouts the plan reads). Seeded;
resumable: a finished round (its `round.json`) is not run again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from curriculab.analysis import queries
from curriculab.analysis.coding import coder_agreement
from curriculab.analysis.ingest.pipeline import ingest
from curriculab.analysis.store import Store
from curriculab.planner import plan as planning
from curriculab.planner.config import TrainingConfig
from curriculab.planner.tasks import build_task_plan, export_task_plan
from curriculab.taxonomy.coders.environment import CODES as ENVIRONMENT_CODES


@dataclass
class AgentRound:
    """One round of the agentic loop."""

    round: int
    """1, 2, ..."""
    plan_id: str
    """The stored plan."""
    reward_functions: list[str]
    """The plan's reward functions."""
    reward_weights: list[float]
    """Their weights."""
    task_mix: dict[str, int]
    """Rows per task in the plan's dataset."""
    code_reasons: list[str] = field(default_factory=list)
    """The plan's reasons that act on (or ignore) failure codes."""
    run_id: str = ""
    """The training run."""
    episodes: int = 0
    """Training episodes written and stored."""
    seconds: float = 0.0
    """Training time (`trainer.train`)."""
    rollout_codes: list[dict[str, Any]] = field(default_factory=list)
    """The environment's codes on this round's episodes: code, n, failures, share, ci_low, ci_high."""
    agreement: list[dict[str, Any]] = field(default_factory=list)
    """Rules against the environment, per code, on every stored episode so far."""
    held_out: dict[str, Any] = field(default_factory=dict)
    """The held-out evaluation (`training.terminal.evaluation.Evaluation`)."""


def run_agentic_loop(
    db_path: str,
    suite: str,
    rounds: int,
    steps_per_round: int,
    out: Path,
    *,
    target: str = "tiny-agent",
    weights: str = "tiny",
    held_out: Sequence[str] = (),
    seed: int = 0,
    say: Callable[[str], None] = print,
    grpo_overrides: dict[str, Any] | None = None,
    allow_unsandboxed: bool = False,
) -> list[AgentRound]:
    """Run `rounds` rounds planning for `target` (the name its episodes carry) and training `weights`
    (tiny, smollm2 or a model directory); each round starts from the previous round's final weights.
    `allow_unsandboxed`: where bubblewrap is missing, episodes (training's and the held-out
    evaluation's alike) run on the namespaces backend."""
    from curriculab.training.agentic import episode_backend, train_agent
    from curriculab.training.models import TrainError
    from curriculab.training.terminal.evaluation import evaluate_agent
    from curriculab.training.terminal.suite import task_directories

    tasks = task_directories(suite)
    backend = episode_backend(allow_unsandboxed)  # refuses before anything runs where none works
    unknown = sorted(set(held_out) - set(tasks))
    if unknown:
        raise TrainError(f"--held-out: {unknown} are not tasks of {suite}")
    out.mkdir(parents=True, exist_ok=True)
    with Store(db_path) as store:  # the suite's tasks, so plans can read their kinds and milestones
        ingest(store, [str(p) for p in tasks.values()], "tasks")
    history: list[AgentRound] = []
    current_model = weights
    for number in range(1, rounds + 1):
        folder = out / f"round{number}"
        done = folder / "round.json"
        if done.exists():  # resumable: a finished round stays as it was
            history.append(AgentRound(**json.loads(done.read_text())))
            current_model = str(folder / "train" / "final")
            say(f"round {number}: done before ({done})")
            continue
        with Store(db_path, read_only=True) as store:
            made = build_task_plan(store, target, suite, sorted(tasks), held_out=held_out)
        with Store(db_path) as store:
            planning.save(store, made)
        path = export_task_plan(made, folder / "plan.yaml")
        config = TrainingConfig.load(path)
        config.grpo.update({"seed": seed, **(grpo_overrides or {})})
        current = AgentRound(
            number,
            made.plan_id,
            made.reward_functions,
            made.reward_weights,
            {e.problem_id: e.copies for e in made.task_mix},
            [r for r in made.reasons if r.split(" (")[0] in {c["code"] for c in made.codes} or r.startswith("reward:")],
        )
        say(f"round {number}: plan {made.plan_id} rewards {dict(zip(made.reward_functions, made.reward_weights))}")
        for reason in current.code_reasons:
            say(f"  {reason}")
        result = train_agent(
            config,
            current_model,
            output_dir=folder / "train",
            db_path=db_path,
            max_steps=steps_per_round,
            model_label=target,
            announce=say,
            allow_unsandboxed=allow_unsandboxed,
        )
        current.run_id, current.episodes, current.seconds = result.run_id, result.rollouts, round(result.seconds, 2)
        current_model = str(folder / "train" / "final")
        if held_out:
            evaluation_run = f"{out.name}-r{number}-eval"  # the job folder's name is the store's run_id
            evaluation = evaluate_agent(
                current_model,
                tasks,
                list(held_out),
                folder / evaluation_run,
                f"{target}@eval",
                trial_prefix=evaluation_run,
                backend=backend,
            )
            with Store(db_path) as store:
                ingest(store, [evaluation.job_dir])
            current.held_out = asdict(evaluation)
            say(
                f"  held-out: {evaluation.passed}/{evaluation.episodes} passed, milestone share "
                f"{evaluation.milestone_share:.2f}, {evaluation.tool_calls} commands"
            )
        with Store(db_path, read_only=True) as store:
            current.rollout_codes = queries.episode_codes.records(store, result.run_id + "-", coder="environment")
            current.agreement = [
                {**asdict(a), "agreement": a.agreement}
                for a in coder_agreement(store, "rules", "environment", ENVIRONMENT_CODES)
            ]
        say(
            f"  {current.episodes} episodes; environment codes: "
            + ", ".join(f"{r['code']} {r['share']:.0%}" for r in current.rollout_codes if r.get("share") is not None)
        )
        folder.mkdir(parents=True, exist_ok=True)
        done.write_text(json.dumps(asdict(current), indent=1, default=str))
        history.append(current)
    (out / "loop.json").write_text(json.dumps([asdict(r) for r in history], indent=1, default=str))
    return history
