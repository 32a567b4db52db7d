#!/usr/bin/env bash
# A short GRPO run (same code as `curriculab train`): bf16 on CUDA (+ vLLM colocate with --vllm),
# or the CPU path with --cpu (what CI runs). Prints tokens/s, step time and peak memory as JSON.
set -euo pipefail
cd "$(dirname "$0")/.."
exec "${PYTHON:-.venv/bin/python}" bench/gpu_check.py "$@"
