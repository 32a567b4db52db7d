"""Training is wired as TRL is: options that check themselves, a reward registry with no fallback,
one job per callback, and the plan's `grpo:` section checked before any model loads."""

from __future__ import annotations

import time

import pytest
import yaml
from click.testing import CliRunner
from transformers import TrainerControl, TrainerState

from curriculab.cli import cli
from curriculab.planner.dynamic import DynamicSettings
from curriculab.planner.portfolio import REWARD_FUNCTIONS, LiveAllocation, TierCurriculum
from curriculab.training.callback import DynamicSchedule, MetricsLog, TimeBudget, run_callbacks
from curriculab.training.models import TrainError
from curriculab.training.options import TrainOptions
from curriculab.training.rewards import FORMAT_REWARD, PASS_SCORES, FormatReward, PassReward, make_reward_functions
from curriculab.training.timing import StepClock


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"max_steps": 0}, "max_steps must be a whole number of steps, 1 or more (got 0)"),
        ({"save_steps": 2.5}, "save_steps must be a whole number of steps, 1 or more (got 2.5)"),
        ({"stop_after_s": -1.0}, "stop_after_s must be a positive number of seconds (got -1.0)"),
        ({"use_vllm": "remote"}, "use_vllm must be one of server, colocate (got 'remote')"),
        ({"generation_backend": "fast"}, "generation_backend 'fast' unknown; use one of auto, "),
        (
            {"use_vllm": "server", "generation_backend": "generate"},
            "use_vllm='server' asks for vllm-server, generation_backend for generate: give one of them",
        ),
    ],
)
def test_train_options_name_what_is_wrong(changes, message):
    with pytest.raises(TrainError) as refused:
        TrainOptions(**changes)
    assert str(refused.value).startswith(message)


def test_train_takes_options_or_their_fields_and_refuses_an_unknown_one(tmp_path):
    from curriculab.training.grpo import train

    assert TrainOptions(use_vllm="colocate").backend_asked == "vllm-colocate"
    assert TrainOptions().backend_asked == "auto"
    with pytest.raises(
        TrainError, match="unexpected keyword argument 'max_step'; the options are TrainOptions' fields"
    ):
        train(tmp_path / "plan.yaml", max_step=3)
    with pytest.raises(TrainError, match=r"max_steps must be a whole number of steps, 1 or more \(got -2\)"):
        train(tmp_path / "plan.yaml", options=TrainOptions(max_steps=4), max_steps=-2)  # keywords override options


def test_a_typo_in_the_grpo_section_is_named_before_any_model_loads(planned, tmp_path):
    db, plan = planned
    doc = yaml.safe_load(plan.read_text())
    doc["grpo"]["learning_rte"] = 1e-5
    plan.write_text(yaml.safe_dump(doc))
    absent_model = tmp_path / "no-model-here"  # were the model loaded first, this would be the error
    result = CliRunner().invoke(
        cli, ["train", "--db", str(db), "--config", str(plan), "--model", str(absent_model), "--max-steps", "1"]
    )
    assert result.exit_code == 1
    assert (
        f"{plan}: grpo.learning_rte is not a trl.GRPOConfig field; did you mean 'learning_rate'? fix or remove the key"
        in result.stderr
    )
    assert not (tmp_path / "runs").exists() and not absent_model.exists()


def test_the_reward_registry_offers_exactly_what_a_plan_may_name():
    assert [*PASS_SCORES, FORMAT_REWARD] == list(REWARD_FUNCTIONS)
    assert FormatReward({}).__name__ == FORMAT_REWARD  # TRL names the metric from the instance
    with pytest.raises(ValueError, match="'format_reward' is not a pass reward; use one of tarot_reward, "):
        PassReward("format_reward", None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"reward function\(s\) \['tarot'\] unknown; use tarot_reward, "):
        make_reward_functions([], names=("tarot",))


def _stepped(callback, *, after_s: float = 0.0) -> TrainerControl:
    state, control = TrainerState(), TrainerControl()
    callback.on_train_begin(None, state, control)
    time.sleep(after_s)
    callback.on_step_end(None, state, control)
    return control


def test_the_time_budget_stops_before_a_step_that_would_leave_too_little_for_the_end():
    now = time.perf_counter()
    # 5 s spent, 1 s of setup to reserve for the end: 10 s leave room for more steps, 5.5 s do not
    assert not _stepped(TimeBudget(10.0, now - 5, now - 1, lambda: 0.0)).should_training_stop
    stopped = _stepped(TimeBudget(5.5, now - 5, now - 1, lambda: 0.0))
    assert stopped.should_training_stop and stopped.should_log and stopped.should_save  # its end still runs
    # a long last ingest is reserved too, even when the setup was quick
    assert _stepped(TimeBudget(10.0, now - 5, now - 1, lambda: 6.0)).should_training_stop


def test_the_dynamic_schedule_moves_alpha_only_on_a_log_with_pass_rates():
    live = LiveAllocation()
    schedule = DynamicSchedule(DynamicSettings(), live)
    schedule.on_log(None, TrainerState(), TrainerControl(), logs={"loss": 0.1})
    assert live.alpha is None
    schedule.on_log(None, TrainerState(), TrainerControl(), logs={"pass_rate/basic": 0.0, "pass_rate/edge": 0.0})
    assert live.alpha is not None and sum(live.alpha.values()) == pytest.approx(1.0)


def test_the_metrics_log_writes_each_log_with_the_weights_on_rank_0_only(tmp_path):
    curriculum = TierCurriculum()
    told = []
    for rank, path in ((0, tmp_path / "rank0.jsonl"), (1, tmp_path / "rank1.jsonl")):
        log = MetricsLog(curriculum, path, StepClock(), lambda step, numbers: told.append(step), main_process=rank == 0)
        state = TrainerState()
        state.global_step = 3
        log.on_log(None, state, TrainerControl(), logs={"reward": 0.5, "kl": 0.01})
    assert not (tmp_path / "rank1.jsonl").exists() and told == [3]
    (line,) = (tmp_path / "rank0.jsonl").read_text().splitlines()
    assert '"weight/edge": ' + str(float(curriculum.weights["edge"])) in line and '"step_time": ' in line


def test_a_run_has_the_schedule_and_the_budget_only_when_asked_for(tmp_path):
    plain = run_callbacks(TierCurriculum(), None, None, "run", tmp_path / "m.jsonl")  # type: ignore[arg-type]
    assert [type(c).__name__ for c in plain] == ["ProgressBar", "MetricsLog", "RolloutIngest"]
    full = run_callbacks(
        TierCurriculum(), None, None, "run", tmp_path / "m.jsonl", dynamic=DynamicSettings(), stop_after_s=60.0
    )  # type: ignore[arg-type]
    assert [type(c).__name__ for c in full] == [
        "ProgressBar",
        "DynamicSchedule",
        "MetricsLog",
        "RolloutIngest",
        "TimeBudget",
    ]
    assert full.store_seconds == 0.0
