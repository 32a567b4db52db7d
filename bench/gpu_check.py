"""A short GRPO run with the same code as `curriculab train`, for the figures that matter on a GPU.

    bash bench/gpu_check.sh [--cpu] [--model tiny|smollm2] [--steps 6] [--vllm]

On CUDA: bf16 (and vLLM colocate with --vllm, when vllm is installed). With --cpu: the CPU path
(use_cpu, no bf16), which CI runs. Prints tokens/s, mean step time and peak memory (GPU memory
on CUDA, resident memory on CPU) as JSON.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", action="store_true", help="Force the CPU path (what CI runs).")
    parser.add_argument("--model", default="tiny")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--vllm", action="store_true", help="Generate with vLLM colocated (CUDA and vllm only).")
    args = parser.parse_args()

    import torch

    from curriculab.analysis.store import Store
    from curriculab.planner import plan as planning
    from curriculab.training.grpo import train
    from curriculab.training.problems import builtin_problems

    cuda = torch.cuda.is_available() and not args.cpu
    if args.vllm and not cuda:
        raise SystemExit("--vllm needs a CUDA GPU")
    work = Path(tempfile.mkdtemp(prefix="curriculab-gpu-check-"))
    problems = builtin_problems()
    with Store(work / "store.duckdb") as store:
        made = planning.build_plan(store, "gpu-check", problems, "builtin", prior="weak")
    plan = planning.export(made, work / "plan.yaml", problems)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    result = train(plan, args.model, max_steps=args.steps, output_dir=work / "out", db_path=str(work / "store.duckdb"),
                   save_steps=args.steps, use_vllm="colocate" if args.vllm else None, force_cpu=not cuda)
    with Store(work / "store.duckdb", read_only=True) as store:
        times = [v for (v,) in store.query("select value from training_metrics where name = 'step_time' and step > 1")[1]]
        tokens = store.query("select max(value) from training_metrics where name = 'num_tokens'")[1][0][0]
    peak = torch.cuda.max_memory_allocated() / 2**30 if cuda else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(json.dumps({
        "device": torch.cuda.get_device_name(0) if cuda else "cpu", "dtype": "bf16" if cuda else "fp32",
        "vllm": bool(args.vllm), "model": args.model, "steps": result.steps, "rollouts": result.rollouts,
        "tokens_per_s": round(tokens / result.seconds, 1) if tokens else None,
        "mean_step_s": round(sum(times) / len(times), 3) if times else None,
        "peak_memory_gib": round(peak, 3), "peak_memory_kind": "GPU allocated" if cuda else "process RSS",
    }, indent=2))


if __name__ == "__main__":
    main()
