"""The same plan on two processes: `accelerate launch --multi_gpu --num_processes 2` on CPU (TRL's
`use_cpu=True` makes it DDP over gloo). Every rank's rollouts land in the store once, the metrics
once per step, and one process reports the run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from curriculab.analysis.store import Store
from curriculab.cli import cli

pytestmark = pytest.mark.slow  # two training processes


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _train_on_two_processes(db: Path, plan: Path, output: Path, *options: str) -> subprocess.CompletedProcess[str]:
    """`accelerate launch` of `curriculab train` on two CPU processes (DDP over gloo) with `options`."""
    return subprocess.run(
        [
            str(Path(sys.executable).with_name("accelerate")),
            "launch",
            "--multi_gpu",
            "--num_processes",
            "2",
            "--main_process_port",
            str(_free_port()),
            "-m",
            "curriculab.cli",
            "train",
            "--db",
            str(db),
            "--config",
            str(plan),
            "--model",
            "tiny",
            "--output-dir",
            str(output),
            *options,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "CUDA_VISIBLE_DEVICES": ""},
    )


def test_two_processes_train_one_plan_and_land_every_rollout_once(planned, tmp_path):
    db, plan = planned
    run = _train_on_two_processes(
        db,
        plan,
        tmp_path / "run",
        "--max-steps",
        "3",
        "--save-steps",
        "2",
        "--static-sampling",
        "--generation-backend",
        "generate",
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.count("run grpo-") == 1  # rank 0 reports; rank 1 says nothing
    assert "3 steps, 48 rollouts" in run.stdout  # 3 steps × 8 completions × 2 ranks
    with Store(db, read_only=True) as store:
        rows, distinct, second = store.query("""select count(*), count(distinct trajectory_id),
            count(*) filter (trajectory_id like '%/r1-%') from trajectories where run_id like 'grpo-%'""").rows[0]
        steps = store.query(
            "select step, count(*) from training_metrics where name = 'reward' group by 1 order by 1"
        ).rows
        errors = store.query("select count(*) from ingest_errors").scalar()
    assert (rows, distinct, second) == (48, 48, 24)  # both ranks' completions, each once
    assert steps == [(1, 1), (2, 1), (3, 1)] and errors == 0
    shards = sorted(p.name for p in (tmp_path / "run" / "rollouts").iterdir())
    assert shards == [f"step-{s:06d}{suffix}.jsonl" for s in range(3) for suffix in ("", ".rank1")]


def test_live_sampling_on_several_processes_is_refused_with_the_fix(planned, tmp_path, monkeypatch):
    db, plan = planned
    monkeypatch.setenv("WORLD_SIZE", "2")  # as torchrun sets it; refused before any process group is made
    result = CliRunner().invoke(
        cli,
        [
            "train",
            "--db",
            str(db),
            "--config",
            str(plan),
            "--model",
            "tiny",
            "--max-steps",
            "1",
            "--output-dir",
            str(tmp_path),
            "--live-sampling",
        ],
    )
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == (
        "Error: live sampling keeps its statistics per process, so ranks would sample different problems. "
        "Pass --static-sampling to train on several processes"
    )


def test_two_processes_train_a_task_plan_land_every_episode_once_and_resume(tmp_path):
    """A task plan on two processes: each rank runs its own episodes, numbered apart; rank 0 alone
    reports, ingests and codes them; a resumed run carries on without storing any episode twice."""
    db, plan = tmp_path / "agent.duckdb", tmp_path / "plan.yaml"
    made = CliRunner().invoke(
        cli, ["--db", str(db), "plan", "--model", "tiny-agent", "--tasks", "builtin", "-o", str(plan)]
    )
    assert made.exit_code == 0, made.output

    def launch(steps: int, *extra: str) -> subprocess.CompletedProcess[str]:
        return _train_on_two_processes(
            db, plan, tmp_path / "run", "--max-steps", str(steps), "--save-steps", "1", *extra
        )

    first = launch(1)
    assert first.returncode == 0, first.stderr[-3000:]
    assert first.stdout.count("run grpo-") == 1  # rank 0 reports; rank 1 says nothing
    resumed = launch(2, "--resume")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    with Store(db, read_only=True) as store:
        rows, distinct, steps = store.query("""select count(*), count(distinct trajectory_id),
            list(distinct split_part(trajectory_id, '-', 5) order by 1) from trajectories where run_id like 'grpo-%'""").rows[
            0
        ]
        coded = store.query(
            "select count(distinct trajectory_id) from coding_status where coder = 'environment'"
        ).scalar()
        metrics = store.query(
            "select step, count(*) from training_metrics where name = 'reward' group by 1 order by 1"
        ).rows
        errors = store.query("select count(*) from ingest_errors").scalar()
    assert (rows, distinct) == (16, 16)  # 2 steps × 4 episodes × 2 ranks, each once
    assert coded == 16 and metrics == [(1, 1), (2, 1)] and errors == 0
    trials = sorted(p.name.rsplit("-", 1)[1] for p in (tmp_path / "run" / "rollouts").glob("*/*") if p.is_dir())
    assert trials == sorted([f"{i:02d}" for i in range(8)] * 2)  # rank 1's are 04–07 of each step
