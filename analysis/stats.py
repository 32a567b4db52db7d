"""Small, exact statistics used by views, reports and tests."""

from __future__ import annotations

import math

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


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 − C(n−c, k) / C(n, k), for n samples with c correct."""
    if not 0 <= c <= n:
        raise ValueError(f"c={c} must be between 0 and n={n}")
    if k > n:
        raise ValueError(f"k={k} is larger than n={n}; pass@k needs at least k samples")
    if n - c < k:
        return 1.0
    return 1.0 - math.prod((n - c - i) / (n - i) for i in range(k))
