"""Generation backends: a named one is checked, `auto` measures the in-process ones on the model about
to be trained and keeps the fastest, and the choice is said, stored with the run and reused."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from curriculab.analysis.store import Store
from curriculab.cli import cli
from curriculab.training.generation import CLEAR_WIN, BackendUnavailable, choose_backend, probed
from curriculab.training.models import CACHE_DIR, resolve_model
from curriculab.training.problems import builtin_problems

pytestmark = pytest.mark.slow  # real GRPO runs


@pytest.fixture(scope="module")
def tiny():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path, kwargs, _ = resolve_model("tiny", CACHE_DIR)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return AutoModelForCausalLM.from_pretrained(path, **kwargs), tokenizer


def test_auto_measures_each_in_process_backend_and_keeps_the_fastest(tiny):
    model, tokenizer = tiny
    prompts = [p.prompt for p in builtin_problems()[:4]]
    chosen, probes = choose_backend("auto", False, model, tokenizer, prompts, 8)
    assert [p.backend for p in probes] == list(probed(False)) == ["generate", "static-cache"]
    assert all(p.tokens > 0 and p.seconds > 0 for p in probes)
    fastest = max(probes, key=lambda p: p.tokens_per_s)
    clear = fastest.tokens_per_s >= CLEAR_WIN * probes[0].tokens_per_s
    assert chosen == (fastest.backend if clear else "generate")
    assert "continuous-batching" in probed(True)  # measured where it can win


def test_a_named_backend_is_checked_and_one_this_machine_cannot_run_says_what_it_needs():
    assert choose_backend("static-cache", False) == ("static-cache", [])
    with pytest.raises(BackendUnavailable, match="^vllm-colocate needs a CUDA GPU$"):
        choose_backend("vllm-colocate", False)
    with pytest.raises(
        BackendUnavailable,
        match="^unknown generation backend 'fast'; choose one of auto, generate, "
        "static-cache, continuous-batching, vllm-colocate, vllm-server$",
    ):
        choose_backend("fast", False)


def _train(planned, tmp_path, *extra):
    db, plan = planned
    return CliRunner().invoke(
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
            "2",
            "--output-dir",
            str(tmp_path),
            *extra,
        ],
    )


def test_train_says_which_backend_generated_and_stores_it_with_the_run(planned, tmp_path):
    db, _ = planned
    asked = _train(planned, tmp_path / "static", "--generation-backend", "static-cache")
    assert asked.exit_code == 0, asked.output
    assert "generation: static-cache (asked for)" in asked.stdout and "2 steps, 16 rollouts" in asked.stdout
    auto = _train(planned, tmp_path / "auto")
    assert auto.exit_code == 0, auto.output
    line = re.search(
        r"generation: (generate|static-cache) \(auto, (fastest here|none measured 10% faster than "
        r"generate here); tokens/s generate [\d,]+, static-cache [\d,]+; measured (now|earlier, \S+)\)",
        auto.stdout,
    )
    assert line, auto.stdout
    again = _train(planned, tmp_path / "again")  # the same machine, model and shape: the measurement is reused
    assert f"generation: {line.group(1)} (auto" in again.stdout and "measured earlier" in again.stdout
    with Store(db, read_only=True) as store:
        stored = [
            json.loads(c)["generation_backend"]
            for (c,) in store.query("select config from runs where run_id like 'grpo-%' order by run_id").rows
        ]
    assert sorted(stored) == sorted(["static-cache", line.group(1), line.group(1)])


def test_a_backend_the_machine_cannot_run_is_refused_before_training_with_the_fix(planned, tmp_path):
    result = _train(planned, tmp_path, "--use-vllm", "colocate")
    assert result.exit_code != 0
    assert result.output.strip().splitlines()[-1] == (
        "Error: vllm-colocate needs a CUDA GPU. Choose another --generation-backend, or leave it at auto"
    )


def test_a_checkpoint_of_the_same_architecture_reuses_its_measurement_and_another_does_not(tiny, tmp_path):
    from transformers import AutoModelForCausalLM

    from curriculab.training.grpo import architecture_key

    model, _ = tiny
    model.config.use_cache = False  # as a trainer saves its checkpoints
    model.save_pretrained(tmp_path / "round1" / "checkpoint-2")  # a loop's next round trains from here
    model.config.use_cache = True
    checkpoint = AutoModelForCausalLM.from_pretrained(tmp_path / "round1" / "checkpoint-2")
    assert architecture_key(checkpoint) == architecture_key(model)
    wider = AutoModelForCausalLM.from_config(type(model.config)(**{**model.config.to_dict(), "hidden_size": 96}))
    assert architecture_key(wider) != architecture_key(model)
