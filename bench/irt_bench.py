"""IRT benchmark: 100 models × 50,000 tasks × 5 attempts simulated from known 2PL parameters.

    python bench/irt_bench.py [--models 100 --tasks 50000 --attempts 5]

Prints the fit's wall time, its recovery of the true difficulties (Spearman), and the ratio of its
time to the plain per-task pass-rate computation over the same cells, in one run. Then the
held-out check: fit on 4 of the 5 attempts of every cell, predict the 5th; log-loss and AUC of
the IRT predictions against the per-task pass rate (Laplace-smoothed) on the same attempts.
Goal (issue #4): Spearman ≥ 0.95 and fit ≤ 60 s on this machine.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=100)
    parser.add_argument("--tasks", type=int, default=50_000)
    parser.add_argument("--attempts", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    from curriculab.analysis.irt import fit_irt

    rng = np.random.default_rng(args.seed)
    theta = rng.normal(0, 1, args.models)
    b = rng.normal(0, 1.2, args.tasks)
    a = np.exp(rng.normal(0, 0.3, args.tasks))
    mi, ti = (g.ravel() for g in np.meshgrid(np.arange(args.models), np.arange(args.tasks), indexing="ij"))
    p_true = 1 / (1 + np.exp(-a[ti] * (theta[mi] - b[ti])))
    train_k = rng.binomial(args.attempts - 1, p_true)  # attempts 1..4
    held_out = rng.random(len(p_true)) < p_true  # attempt 5
    k = train_k + held_out
    n = np.full_like(k, args.attempts)

    started = time.perf_counter()
    rate = np.bincount(ti, k, args.tasks) / np.bincount(ti, n, args.tasks)  # the baseline: per-task pass rate
    baseline_s = time.perf_counter() - started
    started = time.perf_counter()
    fit = fit_irt(mi, ti, n, k, [f"m{i}" for i in range(args.models)], [f"t{j}" for j in range(args.tasks)])
    fit_s = time.perf_counter() - started
    from curriculab.analysis.difficulty import _auc, _log_loss

    train = fit_irt(
        mi,
        ti,
        np.full_like(k, args.attempts - 1),
        train_k,
        [f"m{i}" for i in range(args.models)],
        [f"t{j}" for j in range(args.tasks)],
    )
    irt_p = train.predict(mi, ti)
    base_p = (
        (np.bincount(ti, train_k, args.tasks) + 1)
        / (np.bincount(ti, np.full_like(k, args.attempts - 1), args.tasks) + 2)
    )[ti]
    y = held_out.astype(float)
    print(
        json.dumps(
            {
                "models": args.models,
                "tasks": args.tasks,
                "attempts": args.attempts,
                "cells": int(len(k)),
                "fit_s": round(fit_s, 2),
                "sweeps": fit.iterations,
                "converged": fit.converged,
                "pass_rate_s": round(baseline_s, 4),
                "ratio_fit_over_pass_rate": round(fit_s / baseline_s, 1),
                "spearman_difficulty": round(float(spearmanr(fit.difficulty, b).statistic), 4),
                "spearman_ability": round(float(spearmanr(fit.ability, theta).statistic), 4),
                "spearman_discrimination": round(float(spearmanr(fit.discrimination, a).statistic), 4),
                "spearman_pass_rate_vs_difficulty": round(float(spearmanr(-rate, b).statistic), 4),
                "mean_difficulty_se": round(float(fit.difficulty_se.mean()), 4),
                "held_out_attempts": int(len(y)),
                "held_out_irt_log_loss": round(_log_loss(y, irt_p), 4),
                "held_out_pass_rate_log_loss": round(_log_loss(y, base_p), 4),
                "held_out_irt_auc": round(_auc(y, irt_p), 4),
                "held_out_pass_rate_auc": round(_auc(y, base_p), 4),
                "goal": "spearman_difficulty >= 0.95 and fit_s <= 60",
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
