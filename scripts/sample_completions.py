"""Sample real completions from a model the way GRPO does and score them in the sandbox, keeping
everything the verifier coder reads: the text, why generation stopped, and each test's status.

    python scripts/sample_completions.py --model smollm2 --problems builtin,humaneval:40 \
        --samples 3 --max-new-tokens 192 -o completions.jsonl

This is how `tests/fixtures/rollouts/smollm2_labelled.jsonl` was made (then labelled by hand).
`--rescore FILE` scores a file's completions again with the current sandbox and extraction,
keeping everything else (labels included).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2")
    parser.add_argument(
        "--problems", default="builtin,humaneval:40", help="comma-separated: builtin, humaneval[:N] or humaneval:A-B"
    )
    parser.add_argument("--ids", default=None, help="Only these problem ids (comma-separated).")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--max-new-tokens", type=int, default=192)
    parser.add_argument("--temperature", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rescore", type=Path, default=None, help="Score this file's completions again instead of sampling."
    )
    parser.add_argument("-o", "--output", type=Path, required=True)
    args = parser.parse_args()
    if args.rescore is not None:
        records = [json.loads(line) for line in args.rescore.read_text().splitlines() if line.strip()]
        write_scored(records, _problems(args.problems), args.output)
        print(f"{len(records)} completions scored again → {args.output}")
        return

    import torch
    from tqdm import tqdm
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from curriculab.training.models import CODE_INSTRUCTION, resolve_model

    problems = _problems(args.problems)
    if args.ids:
        wanted = set(args.ids.split(","))
        problems = [p for p in problems if p.problem_id in wanted]
    path, kwargs, short = resolve_model(args.model)
    torch.manual_seed(args.seed)
    tokenizer = AutoTokenizer.from_pretrained(path, **kwargs)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    network = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32, **kwargs).eval()
    records = []
    for problem in tqdm(problems, desc="sampling", unit="problem"):
        if getattr(tokenizer, "chat_template", None):
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": CODE_INSTRUCTION + problem.prompt}],
                tokenize=False,
                add_generation_prompt=True,
            )
        else:
            text = problem.prompt
        batch = tokenizer([text], return_tensors="pt")
        with torch.no_grad():
            out = network.generate(
                **batch,
                do_sample=True,
                temperature=args.temperature,
                max_new_tokens=args.max_new_tokens,
                num_return_sequences=args.samples,
                pad_token_id=tokenizer.pad_token_id,
            )
        for k, ids in enumerate(out[:, batch["input_ids"].shape[1] :].tolist()):
            ended = tokenizer.eos_token_id in ids
            ids = ids[: ids.index(tokenizer.eos_token_id)] if ended else ids
            records.append(
                {
                    "completion_id": f"{problem.problem_id}#{k}",
                    "problem_id": problem.problem_id,
                    "completion": tokenizer.decode(ids, skip_special_tokens=True),
                    "finish_reason": "stop" if ended else "length",
                    "completion_tokens": len(ids),
                }
            )
    for record in records:
        record["model"] = short
    write_scored(records, problems, args.output)
    print(f"{len(records)} completions of {short} → {args.output}")


def _problems(spec: str) -> list:
    from curriculab.training.problems import builtin_problems, humaneval_problems

    problems = []
    for part in spec.split(","):
        name, _, span = part.partition(":")
        first, _, last = span.rpartition("-") if "-" in span else ("0", "", span)
        chosen = builtin_problems() if name == "builtin" else humaneval_problems(int(last) if last else None)
        problems += chosen[int(first or 0) :]
    return problems


def write_scored(records: list[dict], problems: list, output: Path) -> None:
    """Score every record's completion in the sandbox and write the records with their tests."""
    from curriculab.training.rewards import Scorer

    scorer = Scorer({p.problem_id: p for p in problems})
    results = scorer.run([r["problem_id"] for r in records], [r["completion"] for r in records])
    tiers = {p.problem_id: {t.test_id: t.tier for t in p.tests} for p in problems}
    with open(output, "w") as sink:
        for record, result in zip(records, results):
            record["status"] = result.status
            record["tests"] = [
                {
                    "test_id": o.test_id,
                    "tier": tiers[record["problem_id"]].get(o.test_id),
                    "passed": o.passed,
                    "status": o.status,
                    "detail": o.detail,
                }
                for o in result.outcomes
            ]
            sink.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
