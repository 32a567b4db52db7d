"""One episode never stops a run: every way an episode's environment can fail (its sandbox does not
start, the judge crashes, the container is gone under a command) is that rollout's None with the
reason, counted in the step's metrics and written with the episode; what the agent's own doing
causes (a judge that times out, files past the judge's bounds) is a verdict of 0 with the reason."""

from __future__ import annotations

import json
import shutil

import pytest

from curriculab.training.terminal import EpisodeLimits
from curriculab.training.terminal.environment import TerminalEnvironment
from curriculab.training.terminal.rewards import milestone_reward, verification_reward
from tests.training.terminal_tasks import MILESTONE_SOLUTION, write_task

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (scripts/setup.sh installs it)"),
]

DEEP = "RUN mkdir -p " + "/".join(["n"] * 80) + "\n"


def _failing_suite(tmp_path):
    """Tasks that fail each in its own way, and an honest one beside them."""
    base = "FROM ubuntu:24.04\nWORKDIR /app\nCOPY data.txt /app/data.txt\n"
    broken_judge = write_task(tmp_path, "broken-judge")
    (broken_judge / "tests" / "helper.py").symlink_to("/nonexistent/helper.py")  # the judge cannot copy its tests
    slow = write_task(
        tmp_path,
        "slow-judge",
        test_sh="#!/bin/bash\nsleep 30\n",
        toml='version = "1.0"\n[metadata]\ndifficulty = "easy"\nnumber_of_milestones = 2\n'
        "[verifier]\ntimeout_sec = 1.0\n",
    )
    return {
        "cannot-start": write_task(tmp_path, "cannot-start", dockerfile=base + "RUN false\n"),
        "broken-judge": broken_judge,
        "slow-judge": slow,
        "too-deep": write_task(tmp_path, "too-deep", dockerfile=base + DEEP),
        "honest": write_task(tmp_path, "honest", solve_sh=None, dockerfile=base),
    }


LIMITS = EpisodeLimits(command_timeout_s=10, judged_depth=40)


def test_each_failure_is_its_episodes_none_or_zero_with_the_reason_and_never_an_exception(tmp_path):
    suite = _failing_suite(tmp_path)
    with TerminalEnvironment(suite, LIMITS) as environment:
        seen = {}
        for task_id in suite:
            told = environment.reset(task_id=task_id)
            assert "hello" in told  # the model is told its task even where the sandbox failed
            if task_id == "honest":
                environment.bash(MILESTONE_SOLUTION.replace("#!/bin/bash\n", ""))
            first = environment.result
            assert environment.result is first  # judged once, success or failure
            seen[task_id] = (first, milestone_reward([environment]), verification_reward([environment]))
    start, broken, slow, deep, honest = (seen[t] for t in suite)
    assert start[0].failure.startswith("the episode could not start: needs its image: its Dockerfile's `RUN false`")
    assert start[1] == start[2] == [None]
    assert broken[0].failure.startswith("the judge failed: ") and broken[1] == [None]
    # the agent's doing, not the environment's: scored 0 with the reason
    assert slow[0].failure is None and slow[1] == [0.0] and slow[0].error == "main: the verifier timed out after 1 s"
    assert deep[0].failure is None and deep[1] == [0.0]
    assert deep[0].steps[0].refused == "the agent left folders nested more than 40 deep"
    assert honest[1] == [1.0] and honest[0].failure is None


def test_a_container_gone_under_a_command_ends_the_episode_as_a_failure(tmp_path, require_docker):
    from curriculab.training.terminal.docker import client

    docker = client()
    require_docker(docker is not None)
    task = write_task(tmp_path, "greet")
    with TerminalEnvironment({"greet": task}, LIMITS, backend="docker") as environment:
        environment.reset(task_id="greet")
        assert environment.bash("echo hi").startswith("[exit code 0]\nhi")
        environment._episode._agent.container.remove(force=True)  # the daemon lost it
        assert environment.bash("ls") == "[the environment failed; nothing ran]"
        assert environment.bash("ls") == "[the environment failed; nothing ran]"
        assert environment.result.failure.startswith("a command could not run: ")
        assert milestone_reward([environment]) == [None]


def test_a_grpo_step_over_failing_episodes_trains_on_and_counts_them(tmp_path):
    """A real GRPOTrainer step (the tiny agent model) whose batch holds every failing kind."""
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig

    from curriculab.training.callback import MetricsLog
    from curriculab.training.models import tiny_agent_model_dir
    from curriculab.training.terminal.chat import enable_tool_calling
    from curriculab.training.terminal.episode_log import EpisodeLog
    from curriculab.training.timing import StepClock
    from curriculab.training.trainer import CurriculumGRPOTrainer

    suite = _failing_suite(tmp_path)
    path = str(tiny_agent_model_dir(tmp_path / "models"))
    tokenizer = enable_tool_calling(AutoTokenizer.from_pretrained(path))
    tokenizer.padding_side = "left"
    clock = StepClock()
    ids = ["cannot-start", "broken-judge", "too-deep", "honest"]
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": ""}], "task_id": t} for t in ids])
    log = EpisodeLog(tmp_path / "rollouts", "failing", "tiny-agent", tokenizer)
    args = GRPOConfig(
        output_dir=str(tmp_path / "run"),
        max_steps=1,
        per_device_train_batch_size=8,
        num_generations=2,
        max_completion_length=16,
        use_cpu=True,
        bf16=False,
        report_to="none",
        logging_steps=1,
        save_strategy="no",
        shuffle_dataset=False,
    )
    metrics_path = tmp_path / "metrics.jsonl"
    trainer = CurriculumGRPOTrainer(
        model=AutoModelForCausalLM.from_pretrained(path),
        reward_funcs=[milestone_reward, verification_reward],
        args=args,
        train_dataset=dataset,
        processing_class=tokenizer,
        environment_factory=lambda: TerminalEnvironment(suite, LIMITS, clock=clock),
        callbacks=[MetricsLog(None, metrics_path, clock)],
        clock=clock,
        episode_hooks=[log],  # the episode log rides on the trainer, not on a reward
    )
    trainer.train()
    step = json.loads(metrics_path.read_text().splitlines()[0])["metrics"]
    assert step["env/failures"] == 4  # two rollouts each of the task that cannot start and the broken judge
    trials = {p.name: json.loads((p / "result.json").read_text()) for p in log.job.iterdir()}
    assert len(trials) == 8 and log.written == 8 and log.unscored == 4
    failed = [
        t
        for t in trials.values()
        if t["exception_info"] and t["exception_info"]["exception_type"] == "EnvironmentError"
    ]
    assert sorted(t["task_name"] for t in failed) == ["broken-judge"] * 2 + ["cannot-start"] * 2
    deep = [t for t in trials.values() if t["task_name"] == "too-deep"]
    assert all(t["verifier_result"]["rewards"]["reward"] == 0 for t in deep)
    for made in trainer._environment_pool[None]:
        made.__exit__()
