"""Generation backends against `model.generate` on this machine, in one process: alternated pairs.

    python bench/generation_backends.py [--model tiny|smollm2|PATH] [--prompts 8] [--new-tokens 32]
                                        [--pairs 5] [--backends static-cache continuous-batching]

What `train --generation-backend auto` measures, with more repeats: each pair times `generate`
(transformers' dynamic cache) and one other backend on the same prompts (the built-in problems,
chat-formatted where the model has a template), one warm-up run each, sampling as in training; the
side that goes first alternates. Prints tokens/s per pair and the median ratio backend / generate.
On a CUDA machine the model runs in bf16 on the GPU; elsewhere on the CPU in fp32.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--prompts", type=int, default=8)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--backends", nargs="+", default=["static-cache", "continuous-batching"])
    args = parser.parse_args()

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from curriculab.training.generation import probe, unavailable_reason
    from curriculab.training.grpo import _prompt_text
    from curriculab.training.models import CODE_INSTRUCTION, resolve_model
    from curriculab.training.problems import builtin_problems

    cuda = torch.cuda.is_available()
    path, kwargs, name = resolve_model(args.model)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    model = AutoModelForCausalLM.from_pretrained(path, **kwargs, **({"dtype": torch.bfloat16} if cuda else {}))
    model.to("cuda" if cuda else "cpu").eval()
    chat = bool(getattr(tokenizer, "chat_template", None))
    prompts = [
        _prompt_text([{"role": "user", "content": CODE_INSTRUCTION + p.prompt}] if chat else p.prompt, tokenizer)
        for p in builtin_problems()[: args.prompts]
    ]
    out = {
        "model": name,
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "torch": torch.__version__,
        "prompts": len(prompts),
        "new_tokens": args.new_tokens,
        "pairs": args.pairs,
        "backends": {},
    }
    for backend in args.backends:
        reason = unavailable_reason(backend, cuda)
        if reason:
            out["backends"][backend] = {"unmeasured": reason}
            print(f"{backend}: unmeasured ({reason})", flush=True)
            continue
        rates: dict[str, list[float]] = {"generate": [], backend: []}
        for pair in range(args.pairs):
            order = ["generate", backend] if pair % 2 == 0 else [backend, "generate"]
            for side in order:
                rates[side].append(probe(model, tokenizer, prompts, side, args.new_tokens, repeats=1).tokens_per_s)
            print(
                f"{backend} pair {pair + 1} ({order[0]} first): generate {rates['generate'][-1]:,.0f} tok/s, "
                f"{backend} {rates[backend][-1]:,.0f} tok/s",
                flush=True,
            )
        ratios = [b / g for b, g in zip(rates[backend], rates["generate"])]
        out["backends"][backend] = {
            "generate_tokens_per_s": round(statistics.median(rates["generate"]), 1),
            "tokens_per_s": round(statistics.median(rates[backend]), 1),
            "ratio_median": round(statistics.median(ratios), 3),
            "ratio_range": [round(min(ratios), 3), round(max(ratios), 3)],
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
