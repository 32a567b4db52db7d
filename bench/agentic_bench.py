"""Agentic training's figures (issue #46), each against a baseline measured in the same process.

1. The environment's share of an agentic GRPO step: a short real run (`train_agent`, tiny model,
   warmed up, bubblewrap episodes) with the environment's calls (reset, bash, the verdict) timed.
2. Episodes per second with 1 environment (reused, one episode after another, as TRL runs resets
   and tools) and with 8 environments at once (threads): the ratio is what a parallel rollout
   worker would gain.
3. Rules against the environment, per code, on scripted episodes of every built-in task: five
   behaviours each (solve and check, solve without a check, look around and stop, retry a failing
   command unchanged, re-read a file unchanged) — real episodes in the sandbox, coded by both.
4. The verification term's effect, simulated: the share of rollouts that finish without a check
   after their last edit, after two rounds of GRPO-style updates, with the term on and off at the
   same budget, over 400 seeds (95% intervals).

    python bench/agentic_bench.py [--parts 1234]

Part 3 against an earlier revision's coders: `PYTHONPATH=<its site> python bench/agentic_bench.py --parts 3`
(`bench/ab.py`'s `baseline_site` makes one).
"""

from __future__ import annotations

import functools
import statistics
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from curriculab.training.terminal.environment import TerminalEnvironment
from curriculab.training.terminal.suite import BUILTIN_SUITE
from curriculab.training.terminal.task import load_task
from curriculab.training.terminal.warmup import check_command, solution_command


def environment_share() -> None:
    from curriculab.planner.tasks import export_task_plan
    from curriculab.training.agentic import train_agent

    spent = {"seconds": 0.0, "episodes": 0}
    originals = {name: getattr(TerminalEnvironment, name) for name in ("reset", "bash")}
    result_property = TerminalEnvironment.result

    def timed(name):
        @functools.wraps(originals[name])  # TRL reads the tool's signature and docstring
        def call(self, *args, **kwargs):
            started = time.perf_counter()
            try:
                return originals[name](self, *args, **kwargs)
            finally:
                spent["seconds"] += time.perf_counter() - started
                spent["episodes"] += name == "reset"

        return call

    def timed_result(self):
        started = time.perf_counter()
        try:
            return result_property.fget(self)
        finally:
            spent["seconds"] += time.perf_counter() - started

    from curriculab.analysis.store import Store
    from curriculab.planner.tasks import build_task_plan
    from curriculab.training.terminal.suite import task_directories

    with tempfile.TemporaryDirectory() as folder:
        paths = task_directories("builtin")
        from curriculab.analysis.ingest import ingest

        with Store(Path(folder) / "s.duckdb") as store:
            ingest(store, [str(p) for p in paths.values()], "tasks")
            plan = build_task_plan(store, "bench", "builtin", sorted(paths))
        config = export_task_plan(plan, Path(folder) / "plan.yaml")
        for name in originals:
            setattr(TerminalEnvironment, name, timed(name))
        TerminalEnvironment.result = property(timed_result)
        try:
            done = train_agent(config, "tiny", output_dir=Path(folder) / "run", max_steps=4, save_steps=100)
        finally:
            for name, function in originals.items():
                setattr(TerminalEnvironment, name, function)
            TerminalEnvironment.result = result_property
    per_episode = spent["seconds"] / max(1, spent["episodes"])
    print(
        f"1. agentic GRPO, tiny model, 4 steps × 4 episodes: environment {spent['seconds']:.2f} s of "
        f"{done.seconds:.2f} s training = {spent['seconds'] / done.seconds:.1%} of a step; "
        f"{per_episode * 1000:.0f} ms per episode (reset, commands, verdict)"
    )


def _episode(environment: TerminalEnvironment, task_id: str, solution: str) -> None:
    environment.reset(task_id=task_id)
    environment.bash("ls")
    environment.bash(solution)
    assert environment.result is not None  # the verdict runs on the first read


def throughput() -> None:
    tasks = [load_task(p.parent) for p in sorted(BUILTIN_SUITE.glob("*/task.toml"))]
    work = [(t.task_id, solution_command(t)) for t in tasks if len(t.steps) == 1 and solution_command(t)][:8]
    rates = {}
    for _ in range(5):
        with TerminalEnvironment() as one:
            started = time.perf_counter()
            for task_id, solution in work:
                _episode(one, task_id, solution)
            rates.setdefault(1, []).append(len(work) / (time.perf_counter() - started))
        many = [TerminalEnvironment() for _ in work]
        threads = [threading.Thread(target=_episode, args=(e, t, s)) for e, (t, s) in zip(many, work)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        rates.setdefault(8, []).append(len(work) / (time.perf_counter() - started))
        for environment in many:
            environment.__exit__()
    one_rate, eight_rate = statistics.median(rates[1]), statistics.median(rates[8])
    ratios = sorted(b / a for a, b in zip(rates[1], rates[8]))
    print(
        f"2. episodes per second: 1 environment {one_rate:.2f}, 8 at once {eight_rate:.2f}; 8 at once / 1: median "
        f"{statistics.median(ratios):.2f}× (pairs {', '.join(f'{r:.2f}' for r in ratios)}; the two sides alternated, "
        "8 solved episodes each)"
    )


BEHAVIOURS = ("solve_check", "solve", "look_stop", "retry_failing", "reread")


def agreement() -> None:
    from curriculab.analysis.coding import coder_agreement, run_environment_coder, run_rule_coders
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.store import Store
    from curriculab.taxonomy.coders.environment import CODES
    from curriculab.training.terminal.trial import write_trial

    tasks = [load_task(p.parent) for p in sorted(BUILTIN_SUITE.glob("*/task.toml"))]
    with tempfile.TemporaryDirectory() as folder, TerminalEnvironment() as environment:
        job = Path(folder) / "job"
        for task in tasks:
            solution = solution_command(task) or "true"
            for behaviour in BEHAVIOURS:
                environment.reset(task_id=task.task_id)
                environment.bash("ls")
                if behaviour.startswith("solve"):
                    environment.bash(solution)
                    if behaviour == "solve_check":
                        environment.bash(check_command(environment.commands[-1].changed))
                elif behaviour == "retry_failing":
                    environment.bash("python3 missing_script.py")
                    environment.bash("python3 missing_script.py")
                elif behaviour == "reread":
                    environment.bash("cat instruction.md 2>/dev/null || ls -la")
                    environment.bash("cat instruction.md 2>/dev/null || ls -la")
                assert environment.task is not None
                write_trial(job, f"{task.task_id}-{behaviour}", environment.task, environment.result, model="scripted")
        with Store(Path(folder) / "s.duckdb") as store:
            ingest(store, [job])
            run_environment_coder(store)
            run_rule_coders(store)
            rows = coder_agreement(store, "rules", "environment", CODES)
    print(
        f"3. rules vs environment on {len(tasks) * len(BEHAVIOURS)} scripted episodes ({len(tasks)} tasks × 5 behaviours):"
    )
    print("   code                   n   both  rules-only  env-only  agreement  kappa")
    for row in rows:
        kappa = "—" if row.kappa is None else f"{row.kappa:.2f}"
        share = "—" if row.agreement is None else f"{row.agreement:.2f}"
        print(f"   {row.code:<22}{row.n:>3}{row.both:>6}{row.only_first:>11}{row.only_second:>10}{share:>11}{kappa:>7}")


def verification_term(seeds: int = 400, rounds: int = 2, steps: int = 8, groups: int = 4, group_size: int = 8) -> None:
    """A policy checks after its last edit with probability σ(θ) (θ0 from the warm-up's 50%); a
    check raises the chance the work passes from 0.30 to 0.36. GRPO-style updates on group-relative
    advantages, milestone reward alone or with the verification term at weight 0.3."""

    def run(weight: float, rng: np.random.Generator) -> float:
        theta = 0.0
        for _ in range(rounds * steps):
            p = 1 / (1 + np.exp(-theta))
            checked = rng.random((groups, group_size)) < p
            passed = rng.random((groups, group_size)) < np.where(checked, 0.36, 0.30)
            reward = passed + weight * checked
            advantage = reward - reward.mean(axis=1, keepdims=True)
            theta += 0.5 * float((advantage * (checked - p)).mean())
        p = 1 / (1 + np.exp(-theta))
        return 1 - p  # share of rollouts finishing without a check after their last edit

    off = np.array([run(0.0, np.random.default_rng(s)) for s in range(seeds)])
    on = np.array([run(0.3, np.random.default_rng(s)) for s in range(seeds)])

    def ci(values: np.ndarray) -> str:
        low, high = np.percentile(values, [2.5, 97.5])
        return f"{values.mean():.3f} (95% of seeds {low:.3f}–{high:.3f})"

    difference = off - on
    low, high = np.percentile(difference, [2.5, 97.5])
    print(
        f"4. simulated, {rounds} rounds × {steps} steps, {groups} groups of {group_size}, {seeds} seeds: unverified share "
        f"term off {ci(off)}, term on {ci(on)}; off − on {difference.mean():.3f} (95% {low:.3f}–{high:.3f}); "
        "start 0.500"
    )


PARTS = {"1": environment_share, "2": throughput, "3": agreement, "4": verification_term}

if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", default="1234", help="Which figures to measure, by number (e.g. --parts 3).")
    for part in parser.parse_args().parts:
        PARTS[part]()
