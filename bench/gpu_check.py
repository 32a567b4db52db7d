"""A short GRPO run with the same code as `curriculab train`, for the figures that matter on a GPU.

    bash bench/gpu_check.sh [--cpu] [--model tiny|smollm2|PATH.gguf|DIR] [--steps 6] [--vllm]
                            [--backends B,B] [--allow-unsandboxed] [--max-seconds S] [--agentic]
                            [--work-dir DIR]

With --agentic: agentic GRPO instead (the same code as `train` on a `plan --tasks builtin` plan):
the built-in terminal suite's tasks as episodes, after the tool-format warm-up (cached), and one
JSON line with episodes per second and the step's time split (generation, environment, reward,
train, store). Where bubblewrap does not work (a GPU box), --allow-unsandboxed runs the episodes
under namespaces and chroot (root; the same seccomp filter, weaker mounts), and
the line says so: `bash bench/gpu_check.sh --agentic --model smollm2 --allow-unsandboxed`.

On CUDA: bf16. With --cpu: the CPU path (use_cpu, no bf16), which CI runs. It trains once per
generation backend (`--backends`, default every one `train --generation-backend auto` would
measure on this device, plus vLLM colocate with --vllm) and prints one JSON line per backend:
tokens/s, mean step time and where it went (generation, reward, train, store), peak memory (GPU
memory on CUDA, resident memory on CPU) and, on CUDA with nvidia-ml-py, GPU utilisation. A backend
that cannot run here gets a line with `skipped` and why.

On a GPU box with no network and no bubblewrap: bring the wheels (`../shared/gpu/bundle.sh` packs
trl, datasets, duckdb, pydantic and the project's wheel) and the model as a GGUF file, install
them with `pip install --no-index --find-links WHEELS curriculab`, then run
`bash bench/gpu_check.sh --model SmolLM2-135M-Instruct.Q4_1.gguf --allow-unsandboxed --max-seconds 240`.
`--allow-unsandboxed` scores completions under namespaces and chroot as root (rlimits and
namespaces only otherwise; see docs/sandbox.md's sandbox section); the output says which. `--max-seconds` is the check's budget from its start, shared
equally by the backends still to run (less a tenth, for reading the figures back and a loaded
machine's jitter): each one's training stops early enough to leave its checkpoint and store, so
every line comes back inside it (`wall_s` reports the whole check so far). `--work-dir DIR` keeps
the run's store (its rollouts, episodes and codes, for SQL afterwards), plan and checkpoints;
without it they go to a temporary folder that is removed at the end.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

BREAKDOWN = (
    "time/generation_s",
    "time/reward_s",
    "time/train_s",
    "time/store_s",
    "generated_tokens_per_s",
    "gpu/utilization_pct",
    "gpu/memory_peak_gib",
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cpu", action="store_true", help="Force the CPU path (what CI runs).")
    parser.add_argument("--model", default="tiny", help="tiny, smollm2, a local .gguf file or a model directory.")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--vllm", action="store_true", help="Also generate with vLLM colocated (CUDA and vllm only).")
    parser.add_argument(
        "--backends",
        default=None,
        help="Comma-separated generation backends (default: what `auto` measures here, plus vllm-colocate with --vllm).",
    )
    parser.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="Score without bubblewrap (rlimits and namespaces only); flagged in the output.",
    )
    parser.add_argument(
        "--max-seconds", type=float, default=None, help="Stop training after the step that passes this."
    )
    parser.add_argument("--agentic", action="store_true", help="Agentic GRPO in the built-in terminal tasks.")
    parser.add_argument(
        "--work-dir",
        type=Path,
        default=None,
        help="A new or empty folder to keep the run's store, plan and checkpoints in (default: a temporary "
        "folder, removed at the end).",
    )
    args = parser.parse_args()
    if args.work_dir is not None:
        if args.work_dir.exists() and any(args.work_dir.iterdir()):
            raise SystemExit(f"--work-dir {args.work_dir} is not empty: name a new or empty folder")
        args.work_dir.mkdir(parents=True, exist_ok=True)
        _run(args, args.work_dir)
        return
    with tempfile.TemporaryDirectory(prefix="curriculab-gpu-check-", ignore_cleanup_errors=True) as work:
        _run(args, Path(work))


SANDBOX_SAYS = {
    "namespaces": "namespaces (no bubblewrap: unshare and chroot, the same seccomp filter)",
    "rlimits": "unsandboxed (rlimits and namespaces)",
}
"""How a line names a sandbox other than bubblewrap."""


def _run(args: argparse.Namespace, work: Path) -> None:
    """The checks, their store, plan and checkpoints under `work`."""
    check_started = time.perf_counter()
    from curriculab.training.sandbox import detect_backend, unsandboxed_backend

    sandbox = detect_backend()
    if sandbox == "rlimits" and not args.allow_unsandboxed:  # said before torch's seconds of import
        raise SystemExit(
            "no sandbox works here (bubblewrap is missing or cannot start). Install bubblewrap, or pass "
            "--allow-unsandboxed to score under namespaces and chroot (root), else rlimits only"
        )
    if sandbox == "rlimits":
        sandbox = unsandboxed_backend()

    import torch

    from curriculab.analysis.store import Store
    from curriculab.planner import plan as planning
    from curriculab.training.generation import probed, unavailable_reason
    from curriculab.training.grpo import train
    from curriculab.training.problems import builtin_problems

    cuda = torch.cuda.is_available() and not args.cpu
    if args.vllm and not cuda:
        raise SystemExit("--vllm needs a CUDA GPU")
    if args.agentic:
        if args.vllm or (args.backends and set(args.backends.split(",")) - {"auto", "generate"}):
            raise SystemExit(
                "--agentic generates with transformers' generate (TRL's tool-call loop): --vllm and --backends other "
                "than generate are for the problem check; drop them"
            )
        print(json.dumps(_agentic_check(args, cuda, sandbox, work, check_started, torch)), flush=True)
        return
    backends = args.backends.split(",") if args.backends else [*probed(cuda), *(["vllm-colocate"] if args.vllm else [])]
    problems = builtin_problems()
    with Store(work / "store.duckdb") as store:
        made = planning.build_plan(store, "gpu-check", problems, "builtin", prior="weak")
    plan = planning.export(made, work / "plan.yaml", problems)
    for index, backend in enumerate(backends):
        why_not = unavailable_reason(backend, cuda)
        if why_not:
            print(json.dumps({"generation_backend": backend, "skipped": why_not}), flush=True)
            continue
        budget = None
        if args.max_seconds is not None:  # what is left, shared by this backend and those after it, less a
            # tenth for what follows training (reading the figures back) and a loaded machine's jitter
            budget = 0.9 * (args.max_seconds - (time.perf_counter() - check_started)) / (len(backends) - index)
        print(
            json.dumps(
                _check(args, backend, budget, cuda, sandbox, plan, work / backend, check_started, train, Store, torch)
            ),
            flush=True,
        )


def _peak_memory_gib(cuda, torch) -> float:
    """GPU memory allocated at its peak on CUDA, else the process's peak resident memory."""
    if cuda:
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _check(args, backend, budget, cuda, sandbox, plan, work, check_started, train, Store, torch) -> dict:
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    started = time.perf_counter()
    db = work.parent / "store.duckdb"
    # under a time budget, checkpoints (and the store's ingest behind them) come every few steps, so
    # little is left to store when the budget ends training
    result = train(
        plan,
        args.model,
        max_steps=args.steps,
        output_dir=work / "out",
        db_path=str(db),
        save_steps=args.steps if budget is None else min(args.steps, 5),
        force_cpu=not cuda,
        generation_backend=backend,
        allow_unsandboxed=args.allow_unsandboxed,
        stop_after_s=None if budget is None else budget - (time.perf_counter() - started),
    )
    wall = time.perf_counter() - check_started
    with Store(db, read_only=True) as store:
        rows = store.query(
            "select step, name, value from training_metrics where run_id = ? and step > 1 and "
            f"name in ('step_time', {', '.join(repr(n) for n in BREAKDOWN)})",
            [result.run_id],
        )[1]
        tokens = store.query(
            "select max(value) from training_metrics where run_id = ? and name = 'num_tokens'", [result.run_id]
        )[1][0][0]
    by_name: dict[str, list[float]] = {}
    for _, name, value in rows:
        by_name.setdefault(name, []).append(value)
    peak = _peak_memory_gib(cuda, torch)
    return {
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "dtype": "bf16" if cuda else "fp32",
        "backend": "vllm" if backend.startswith("vllm") else "transformers",
        "generation_backend": backend,
        "model": args.model,
        "sandbox": SANDBOX_SAYS.get(sandbox, sandbox),
        "steps": result.steps,
        "steps_asked": args.steps,
        "stopped_by_max_seconds": result.steps < args.steps,
        "wall_s": round(wall, 2),
        "rollouts": result.rollouts,
        "tokens_per_s": round(tokens / result.seconds, 1) if tokens else None,
        "mean_step_s": round(statistics.mean(by_name["step_time"]), 3) if by_name.get("step_time") else None,
        "breakdown_mean_after_step_1": {
            name: round(statistics.mean(values), 3) for name, values in by_name.items() if name != "step_time"
        },
        "peak_memory_gib": round(peak, 3),
        "peak_memory_kind": "GPU allocated" if cuda else "process RSS (the check's peak so far)",
    }


def _agentic_check(args, cuda, sandbox, work, check_started, torch) -> dict:
    from curriculab.analysis import queries
    from curriculab.analysis.ingest import ingest
    from curriculab.analysis.store import Store
    from curriculab.planner.tasks import build_task_plan, export_task_plan
    from curriculab.training.agentic import train_agent
    from curriculab.training.terminal.suite import task_directories

    tasks = task_directories("builtin")
    db = work / "store.duckdb"
    with Store(db) as store:
        ingest(store, [str(p) for p in tasks.values()], "tasks")
        plan = export_task_plan(build_task_plan(store, "gpu-check-agent", "builtin", sorted(tasks)), work / "plan.yaml")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    result = train_agent(
        plan,
        args.model,
        max_steps=args.steps,
        output_dir=work / "out",
        db_path=str(db),
        save_steps=args.steps,
        force_cpu=not cuda,
        allow_unsandboxed=args.allow_unsandboxed,
        # the time left of --max-seconds, less a tenth for reading the figures back
        stop_after_s=0.9 * (args.max_seconds - (time.perf_counter() - check_started)) if args.max_seconds else None,
    )
    wall = time.perf_counter() - check_started
    with Store(db, read_only=True) as store:
        curves = queries.training_curves(store, run_id=result.run_id)
    later = curves[curves["step"] > 1]  # the first step pays one-time costs (the first sandbox, the kernels)
    means = later.groupby("name")["value"].mean()
    split = {n: round(float(means[n]), 3) for n in (*BREAKDOWN, "time/environment_s") if n in means}
    step_s = float(means["step_time"]) if "step_time" in means else None
    return {
        "device": torch.cuda.get_device_name(0) if cuda else "cpu",
        "dtype": "bf16" if cuda else "fp32",
        "mode": "agentic",
        "model": args.model,
        "sandbox": SANDBOX_SAYS.get(sandbox, sandbox),
        "steps": result.steps,
        "episodes": result.rollouts,
        "episodes_per_s": round(result.rollouts / result.seconds, 3) if result.seconds else None,
        "mean_step_s": round(step_s, 3) if step_s else None,
        "environment_share": round(split["time/environment_s"] / step_s, 3)
        if step_s and "time/environment_s" in split
        else None,
        "breakdown_mean_after_step_1": split,
        "wall_s": round(wall, 2),
        "peak_memory_gib": round(_peak_memory_gib(cuda, torch), 3),
    }


if __name__ == "__main__":
    main()
