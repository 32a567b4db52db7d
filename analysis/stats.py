"""Small, exact statistics used by views, reports and tests."""

from __future__ import annotations

import functools
import math
import os
import tempfile
from pathlib import Path

Z95 = 1.959963984540054


def wilson_interval(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion; (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


@functools.lru_cache(maxsize=4096)  # a report asks it for every unit × task × k: a few thousand calls, few distinct
def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 − C(n−c, k) / C(n, k), for n samples with c correct."""
    if not 0 <= c <= n:
        raise ValueError(f"c={c} must be between 0 and n={n}")
    if k > n:
        raise ValueError(f"k={k} is larger than n={n}; pass@k needs at least k samples")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))


BOOTSTRAP_REPS = 2000
"""Resamples for task-clustered intervals (seeded: the same store gives the same interval)."""


def cluster_bootstrap(
    successes, trials, reps: int = BOOTSTRAP_REPS, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | tuple[None, None]:
    """Percentile interval of Σk/Σn when whole clusters (tasks) are resampled with replacement.

    Attempts at one task are not independent, so a binomial (Wilson) interval over attempts is
    too narrow; resampling tasks keeps each task's attempts together. `successes[c]` and
    `trials[c]` are per-cluster counts. (None, None) with fewer than two clusters that have trials.
    """
    return cluster_bootstraps([(successes, trials)], reps, seed, level)[0]


def cluster_bootstraps(
    groups, reps: int = BOOTSTRAP_REPS, seed: int = 0, level: float = 0.95
) -> list[tuple[float, float] | tuple[None, None]]:
    """`cluster_bootstrap` of each (successes, trials) group, from the same resamples: groups over
    the same number of clusters share one weight matrix and are computed together, in two matrix
    products and one quantile call per cluster count rather than per interval."""
    import numpy as np

    out: list[tuple[float, float] | tuple[None, None]] = [(None, None)] * len(groups)
    by_size: dict[int, list[int]] = {}
    arrays = [(np.asarray(k, float), np.asarray(n, float)) for k, n in groups]
    for g, (_, n) in enumerate(arrays):
        if (n > 0).sum() >= 2:  # one task says nothing about task-to-task variation
            by_size.setdefault(len(n), []).append(g)
    tail = (1 - level) / 2
    for size, members in by_size.items():
        weights = _cluster_weights(size, reps, seed)
        trials = np.stack([arrays[g][1] for g in members], axis=1)
        totals = _resampled_sums(weights, trials)  # (reps, groups)
        hits = _resampled_sums(weights, np.stack([arrays[g][0] for g in members], axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            rates = np.where(totals > 0, hits / totals, np.nan)  # a resample that drew no trials says nothing
        low, high = np.nanquantile(rates, [tail, 1 - tail], axis=0)
        for column, g in enumerate(members):
            out[g] = (float(low[column]), float(high[column]))
    return out


def cluster_bootstrap_difference(
    k_a, n_a, k_b, n_b, reps: int = BOOTSTRAP_REPS, seed: int = 0, level: float = 0.95
) -> tuple[float, float] | tuple[None, None]:
    """Percentile interval of rate(a) − rate(b), resampling the clusters (tasks) both share an index over."""
    import numpy as np

    arrays = [np.asarray(x, float) for x in (k_a, n_a, k_b, n_b)]
    if ((arrays[1] > 0) | (arrays[3] > 0)).sum() < 2 or arrays[1].sum() == 0 or arrays[3].sum() == 0:
        return None, None
    weights = _cluster_weights(len(arrays[0]), reps, seed)
    ka, na, kb, nb = (_resampled_sums(weights, x) for x in arrays)
    ok = (na > 0) & (nb > 0)
    diffs = ka[ok] / na[ok] - kb[ok] / nb[ok]
    tail = (1 - level) / 2
    return float(np.quantile(diffs, tail)), float(np.quantile(diffs, 1 - tail))


def _resampled_sums(weights, counts):
    """Each resample's total of per-cluster `counts` (integers): `weights @ counts`, in float32
    where every sum is an integer float32 holds exactly (below 2**24: at most clusters × the
    largest count), so the result equals float64's to the bit at half the memory traffic."""
    import numpy as np

    if counts.size and weights.shape[1] * float(np.max(counts, initial=0)) < 2**24:
        return (weights @ counts.astype(np.float32)).astype(float)
    return weights.astype(float) @ counts


@functools.lru_cache(maxsize=32)
def _cluster_weights(clusters: int, reps: int, seed: int):
    """How often each cluster is drawn in each resample: a (reps, clusters) count matrix (float32:
    counts are integers at most `clusters`, exact below 2**24). It depends on nothing else, so a
    report's intervals over the same number of tasks share one; read-only, since it is shared. Drawing it is a binomial per cluster and
    resample (no faster method reproduces it) and grows with the tasks, so it is also kept on
    disk (`weights_cache_dir()`), like bytecode: a file is used only if it is what the draw gives."""
    import numpy as np

    path = weights_cache_dir() / f"weights-{clusters}-{reps}-{seed}-numpy{np.__version__}.npy"
    try:
        counts = np.load(path, allow_pickle=False)
        if counts.shape != (reps, clusters) or not (counts.sum(axis=1, dtype=np.int64) == clusters).all():
            counts = None  # not what the draw gives: draw it again
    except (OSError, ValueError):  # absent, unreadable or not an array
        counts = None
    if counts is None:
        counts = np.random.default_rng(seed).multinomial(clusters, np.full(clusters, 1 / clusters), size=reps)
        _store_weights(path, counts)
    weights = counts.astype(np.float32 if clusters < 2**24 else float)
    weights.flags.writeable = False
    return weights


def weights_cache_dir() -> Path:
    """Where drawn bootstrap weights are kept: `$XDG_CACHE_HOME/curriculab/bootstrap`, else under `~/.cache`."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "curriculab" / "bootstrap"


def _store_weights(path: Path, counts) -> None:
    import numpy as np

    small = counts.astype(np.uint8 if counts.max() < 256 else np.uint16 if counts.max() < 65536 else np.int64)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = tempfile.NamedTemporaryFile(dir=path.parent, suffix=".tmp", delete=False)
    except OSError:
        return  # a read-only home: the next process draws again, nothing worse
    try:
        with handle:
            np.save(handle, small, allow_pickle=False)
        os.replace(handle.name, path)  # whole or not at all, for a report running beside this one
    except OSError:
        Path(handle.name).unlink(missing_ok=True)
