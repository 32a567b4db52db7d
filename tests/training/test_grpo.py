"""`curriculab train` with the tiny model on CPU: a real TRL GRPOTrainer on a real plan, rollouts
and metrics into a real store, and a resume after kill -9 that duplicates nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from curriculab.analysis.store import Store
from curriculab.cli import cli
from curriculab.taxonomy.coders.verifier import COMPLETION_CODES

pytestmark = pytest.mark.slow  # real GRPO runs


def _store_figures(db: Path) -> dict:
    with Store(db, read_only=True) as store:
        run = store.query("select distinct run_id from trajectories where run_id like 'grpo-%'").rows
        rollouts = store.query(
            "select count(*), count(distinct trajectory_id) from trajectories where run_id like 'grpo-%'"
        ).rows[0]
        tiers = store.query("""select count(distinct r.tier), count(*) from test_results r join trajectories t using (trajectory_id)
                               where t.run_id like 'grpo-%'""").rows[0]
        steps = store.query(
            """select step, count(*) from training_metrics where name = 'reward' group by 1 order by 1"""
        ).rows
        alpha = dict(
            ((s, n), v)
            for s, n, v in store.query("select step, name, value from training_metrics where name like 'alpha/%'").rows
        )
        errors = store.query("select count(*) from ingest_errors").scalar()
    return {"runs": run, "rollouts": rollouts, "tiers": tiers, "reward_steps": steps, "alpha": alpha, "errors": errors}


def test_train_lands_rollouts_and_metrics_and_follows_the_schedule(planned, tmp_path):
    db, plan = planned
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
            "5",
            "--output-dir",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "5 steps, 40 rollouts" in result.stdout
    figures = _store_figures(db)
    assert len(figures["runs"]) == 1 and figures["rollouts"] == (40, 40)  # 5 steps × 8 generations, each once
    assert figures["tiers"][0] == 4 and figures["tiers"][1] == 40 * 8  # every test result, with its tier
    assert figures["reward_steps"] == [(step, 1) for step in range(1, 6)]  # one row per logging step
    alpha = figures["alpha"]
    # forward: basic alone in the first fifth of training, all four tiers from 60%
    assert alpha[(1, "alpha/basic")] > 0 and alpha[(1, "alpha/intermediate")] == 0 and alpha[(1, "alpha/edge")] == 0
    assert all(alpha[(5, f"alpha/{t}")] > 0 for t in ("basic", "intermediate", "complex", "edge"))
    assert figures["errors"] == 0
    # where each step's time went: every logging step, the parts adding up to the step, tokens counted
    with Store(db, read_only=True) as store:
        rows = store.query(
            "select step, name, value from training_metrics where name like 'time/%' "
            "or name in ('step_time', 'generated_tokens', 'generated_tokens_per_s')"
        ).rows
    by_step: dict[int, dict[str, float]] = {}
    for step, name, value in rows:
        by_step.setdefault(step, {})[name] = value
    assert sorted(by_step) == [1, 2, 3, 4, 5]
    for step, m in by_step.items():
        parts = m["time/generation_s"] + m["time/reward_s"] + m["time/train_s"] + m["time/store_s"]
        assert m["time/generation_s"] > 0 and m["time/reward_s"] > 0 and m["generated_tokens"] > 0, (step, m)
        assert parts == pytest.approx(m["step_time"], abs=1e-6) or m["time/train_s"] == 0, (step, m)
        assert m["generated_tokens_per_s"] == pytest.approx(m["generated_tokens"] / m["time/generation_s"])
    assert "tok/s)" in result.stdout  # the summary line shows the breakdown
    assert "model: tiny writes noise by design" in result.stdout  # zero rewards are not taken for a fault
    # one bar and one line per step: the libraries' bars and warnings went to the run's log, and are back after
    for noise in ("Generating train split", "Loading weights", "Writing model shards", "Warning", "warnings.warn"):
        assert noise not in result.stderr + result.stdout, noise
    assert (tmp_path / "run" / "libraries.log").is_file()
    from transformers.utils import logging as hf_logging

    assert hf_logging.is_progress_bar_enabled()


def test_a_run_killed_mid_way_resumes_without_duplicating_rollouts(planned, tmp_path):
    db, plan = planned
    output = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "curriculab.cli",
        "train",
        "--db",
        str(db),
        "--config",
        str(plan),
        "--model",
        "tiny",
        "--max-steps",
        "6",
        "--save-steps",
        "2",
        "--output-dir",
        str(output),
    ]
    first = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 240
    while not (output / "checkpoint-4").exists() and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(first.pid, signal.SIGKILL)  # kill -9 mid-run
    first.wait()
    assert not (output / "checkpoint-6").exists(), "the run finished before it could be killed"
    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    figures = _store_figures(db)
    assert len(figures["runs"]) == 1 and figures["rollouts"] == (48, 48)  # 6 steps × 8, each held once
    assert figures["reward_steps"] == [(step, 1) for step in range(1, 7)]
    assert figures["errors"] == 0


def test_a_two_round_loop_plans_trains_and_replans(demo_store_copy, tmp_path):
    result = CliRunner().invoke(
        cli,
        [
            "loop",
            "--db",
            str(demo_store_copy),
            "--model",
            "atlas-7b-coder",
            "--rounds",
            "2",
            "--steps-per-round",
            "2",
            "--out",
            str(tmp_path / "loop"),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("round ")]
    assert lines[0].startswith("round 1: plan ") and " for atlas-7b-coder: " in lines[0]
    assert lines[1].startswith("round 2: plan ") and " for atlas-7b-coder@round1: " in lines[1]
    assert "basic pass rate" in lines[1]  # the change from round 1, in figures
    with Store(demo_store_copy, read_only=True) as store:
        plans = store.query("select target_model from plans order by created_at").rows
        rounds = dict(
            store.query(
                "select model, count(*) from trajectories where model like 'atlas-7b-coder@round%' group by 1"
            ).rows
        )
    assert {"atlas-7b-coder", "atlas-7b-coder@round1"} <= {
        p[0] for p in plans
    }  # a plan per round (the same plan is stored once)
    assert rounds == {"atlas-7b-coder@round1": 16, "atlas-7b-coder@round2": 16}
    summary = json.loads((tmp_path / "loop" / "loop.json").read_text())
    assert [r["round"] for r in summary] == [1, 2] and summary[1]["changes"]
    # the loop closes in meaning: round 1's rollouts are coded, and round 2's plan acts on those codes
    assert "round 1 rollouts (16): " in result.stdout and "failed rollouts" in result.stdout
    first_codes = {r["code"]: r for r in summary[0]["rollout_codes"]}
    assert first_codes and all(0 <= r["ci_low"] <= r["share"] <= r["ci_high"] <= 1 for r in first_codes.values())
    effects = summary[1]["code_effects"]
    cited = [e for e in effects if e.startswith("reward: format_reward added")]
    assert cited and any(f"{code} " in cited[0] and "judged failures (95% CI" in cited[0] for code in first_codes)
    assert any(
        line.startswith("  from round 1's rollout codes: reward: format_reward") for line in result.stdout.splitlines()
    )
    assert "reward 1·tarot_reward → 1·tarot_reward + " in lines[1]  # the reward section differs, for that reason
    with Store(demo_store_copy, read_only=True) as store:
        statuses = store.query("""select count(*), count(distinct c.trajectory_id) from coding_status c join trajectories t
                                  using (trajectory_id) where c.coder = 'verifier' and t.model like 'atlas-7b-coder@round%'
                                  and c.status in ('present', 'absent')""").rows[0]
    assert statuses == (32 * len(COMPLETION_CODES), 32)  # every rollout, every completion code, none not_applicable


def test_the_gpu_check_runs_its_cpu_path_once_per_backend_and_says_which_it_could_not_run(tmp_path):
    root = Path(__file__).resolve().parents[2]
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    done = subprocess.run(
        [
            "bash",
            str(root / "bench" / "gpu_check.sh"),
            "--cpu",
            "--steps",
            "2",
            "--backends",
            "generate,vllm-colocate,static-cache",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHON": sys.executable, "TMPDIR": str(temporary)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert not list(temporary.glob("curriculab-gpu-check-*"))  # its store and checkpoints are not left behind
    first, skipped, second = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert skipped == {"generation_backend": "vllm-colocate", "skipped": "vllm-colocate needs a CUDA GPU"}
    assert (first["generation_backend"], second["generation_backend"]) == ("generate", "static-cache")
    for figures in (first, second):  # each its own run
        assert figures["device"] == "cpu" and figures["steps"] == 2 and figures["rollouts"] == 16
        assert figures["tokens_per_s"] > 0 and figures["mean_step_s"] > 0 and figures["peak_memory_gib"] > 0
        assert figures["sandbox"] == "bwrap" and figures["backend"] == "transformers"
        breakdown = figures["breakdown_mean_after_step_1"]
        assert (
            breakdown["time/generation_s"] > 0
            and breakdown["time/reward_s"] > 0
            and breakdown["generated_tokens_per_s"] > 0
        )


def _bare_gpu_box(tmp_path: Path) -> dict[str, str]:
    """The environment of a bare GPU box: no bubblewrap (here: a PATH without it)."""
    bare = tmp_path / "bin"
    bare.mkdir()
    for tool in ("bash", "sh", "dirname", "prlimit", "setpriv", "unshare", "env", "true", "ldd"):
        (bare / tool).symlink_to(f"/usr/bin/{tool}")
    return {**os.environ, "PYTHON": sys.executable, "PATH": str(bare)}


@pytest.mark.alone  # two steps of training must fit in its 20 s: not beside another worker's CPU
def test_the_gpu_check_stops_inside_its_time_budget_and_flags_unsandboxed_scoring(tmp_path):
    # what a bare GPU box has: no bubblewrap, so scoring is unsandboxed, only when asked and said
    # out loud; and a time limit the figures must come back inside
    root = Path(__file__).resolve().parents[2]
    env = _bare_gpu_box(tmp_path)
    command = [
        "/usr/bin/bash",
        str(root / "bench" / "gpu_check.sh"),
        "--cpu",
        "--backends",
        "generate",  # one backend: all of the budget is its own, so a loaded machine still fits two steps
        "--steps",
        "200",
        "--max-seconds",
        "20",  # its tenth held back for what follows training must cover a slow machine's store and exit
    ]
    refused = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert refused.returncode != 0 and "pass --allow-unsandboxed" in refused.stderr
    started = time.monotonic()
    done = subprocess.run(command + ["--allow-unsandboxed"], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    (figures,) = lines
    assert figures["generation_backend"] == "generate"
    # as root without bubblewrap, completions are scored under the namespaces sandbox, as episodes are
    assert figures["sandbox"] == "namespaces (no bubblewrap: unshare and chroot, the same seccomp filter)"
    assert figures["stopped_by_max_seconds"] and 2 <= figures["steps"] < 200, figures
    assert figures["breakdown_mean_after_step_1"]["time/generation_s"] > 0
    assert figures["wall_s"] <= 20, figures  # setup, steps, checkpoints and store: inside the budget
    assert time.monotonic() - started < 75


def test_the_gpu_check_refuses_a_work_dir_that_holds_anything_and_leaves_it_as_it_was(tmp_path):
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "store.duckdb").write_text("an earlier run's")
    done = subprocess.run(
        ["bash", str(root / "bench" / "gpu_check.sh"), "--cpu", "--work-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert done.returncode != 0 and f"--work-dir {tmp_path} is not empty: name a new or empty folder" in done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["store.duckdb"]
    assert (tmp_path / "store.duckdb").read_text() == "an earlier run's"


@pytest.mark.skipif(os.geteuid() != 0, reason="episodes without bubblewrap (namespaces and chroot) need root")
def test_the_gpu_checks_agentic_mode_runs_terminal_episodes_without_bubblewrap_and_says_so(tmp_path):
    root = Path(__file__).resolve().parents[2]
    work = tmp_path / "work"
    command = [str(root / "bench" / "gpu_check.sh"), "--cpu", "--agentic", "--steps", "2", "--allow-unsandboxed"]
    done = subprocess.run(
        ["/usr/bin/bash", *command, "--work-dir", str(work)],
        capture_output=True,
        text=True,
        timeout=600,
        env=_bare_gpu_box(tmp_path),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (figures,) = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    with Store(work / "store.duckdb", read_only=True) as store:  # --work-dir keeps the run's store for SQL
        assert store.query("select count(*) from trajectories where model not like '%@eval'").scalar() == 8
    assert (
        figures["mode"] == "agentic"
        and figures["sandbox"] == "namespaces (no bubblewrap: unshare and chroot, the same seccomp filter)"
    )
    assert figures["steps"] == 2 and figures["episodes"] == 8 and figures["episodes_per_s"] > 0
    split = figures["breakdown_mean_after_step_1"]
    assert split["time/environment_s"] > 0 and split["time/generation_s"] > 0 and split["time/train_s"] >= 0
    assert 0 < figures["environment_share"] < 1


def test_the_dynamic_schedule_drives_alpha_from_live_pass_rates(planned, tmp_path):
    # the tiny model passes nothing: no tier is informative, so the dynamic schedule keeps practising
    # the one closest to the band (basic), where the forward schedule would have added tiers by now
    db, plan = planned
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
            "4",
            "--dynamic",
            "--output-dir",
            str(tmp_path / "run"),
        ],
    )
    assert result.exit_code == 0, result.output
    alpha = _store_figures(db)["alpha"]
    assert alpha[(4, "alpha/basic")] > 0
    assert alpha[(4, "alpha/intermediate")] == alpha[(4, "alpha/complex")] == alpha[(4, "alpha/edge")] == 0


def test_a_config_that_is_not_an_exported_plan_is_refused_with_the_fix(tmp_path, demo_store_copy):
    broken = tmp_path / "plan.yaml"
    broken.write_text("grpo: {num_generations: 8}\n")
    result = CliRunner().invoke(cli, ["train", "--db", str(demo_store_copy), "--config", str(broken)])
    assert result.exit_code == 1
    assert f"{broken}: section 'curriculum' is missing; export the plan with `curriculab plan -o`" in result.stderr
    missing_store = CliRunner().invoke(cli, ["train", "--db", str(tmp_path / "none.duckdb"), "--config", str(broken)])
    assert missing_store.exit_code == 1 and "no store at" in missing_store.stderr


def test_a_loop_can_start_from_an_empty_store(tmp_path):
    # a model trained from scratch: round 1 plans from the prior (nothing to code or fit yet),
    # round 2 from round 1's rollout codes alone
    db = tmp_path / "empty.duckdb"
    with Store(db):
        pass
    result = CliRunner().invoke(
        cli,
        [
            "loop",
            "--db",
            str(db),
            "--model",
            "fresh",
            "--rounds",
            "2",
            "--steps-per-round",
            "1",
            "--out",
            str(tmp_path / "loop"),
        ],
    )
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("round ")]
    assert (
        lines[0].startswith("round 1: plan ") and lines[1].startswith("round 2: plan ") and "format_reward" in lines[1]
    )
