"""Agreement between coders and annotators: Cohen's kappa, precision/recall/F1, Krippendorff's alpha.

Pure functions over binary judgements (present / absent); missing judgements are `None`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from itertools import permutations
from typing import Sequence


@dataclass(frozen=True)
class BinaryAgreement:
    """Agreement of a coder with a reference on one code."""

    n: int
    """Items both judged."""
    prevalence: float
    """Share of items the reference marks present."""
    kappa: float | None
    """Cohen's kappa; None when it is undefined (both always say the same single value)."""
    precision: float | None
    """Of the items the coder marks present, the share the reference marks present."""
    recall: float | None
    """Of the items the reference marks present, the share the coder finds."""
    f1: float | None
    """Harmonic mean of precision and recall."""
    tp: int
    """Both present."""
    fp: int
    """Coder present, reference absent."""
    fn: int
    """Coder absent, reference present."""
    tn: int
    """Both absent."""

    def as_dict(self) -> dict:
        return asdict(self)


def binary_agreement(coder: Sequence[bool], reference: Sequence[bool]) -> BinaryAgreement:
    """Compare two equally long sequences of present/absent judgements."""
    if len(coder) != len(reference):
        raise ValueError(f"coder has {len(coder)} judgements, reference {len(reference)}; pair them item by item")
    tp = sum(1 for c, r in zip(coder, reference) if c and r)
    fp = sum(1 for c, r in zip(coder, reference) if c and not r)
    fn = sum(1 for c, r in zip(coder, reference) if not c and r)
    tn = len(coder) - tp - fp - fn
    n = len(coder)
    return BinaryAgreement(n=n, prevalence=(tp + fn) / n if n else 0.0, kappa=cohen_kappa(tp, fp, fn, tn),
                           precision=tp / (tp + fp) if tp + fp else None, recall=tp / (tp + fn) if tp + fn else None,
                           f1=2 * tp / (2 * tp + fp + fn) if tp + fp + fn else None, tp=tp, fp=fp, fn=fn, tn=tn)


def cohen_kappa(tp: int, fp: int, fn: int, tn: int) -> float | None:
    """Cohen's kappa from a 2×2 table: (p_o − p_e) / (1 − p_e)."""
    n = tp + fp + fn + tn
    if n == 0:
        return None
    observed = (tp + tn) / n
    expected = ((tp + fp) * (tp + fn) + (fn + tn) * (fp + tn)) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def krippendorff_alpha_nominal(units: Sequence[Sequence[object | None]]) -> float | None:
    """Krippendorff's alpha for nominal data; `units[i]` holds each annotator's value (None = missing).

    Units with fewer than two values are not pairable and are ignored.
    """
    coincidence: dict[tuple[object, object], float] = {}
    for unit in units:
        values = [v for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        for a, b in permutations(range(m), 2):
            key = (values[a], values[b])
            coincidence[key] = coincidence.get(key, 0.0) + 1.0 / (m - 1)
    n_total = sum(coincidence.values())
    if n_total == 0:
        return None
    marginals: dict[object, float] = {}
    for (a, _), count in coincidence.items():
        marginals[a] = marginals.get(a, 0.0) + count
    observed = sum(count for (a, b), count in coincidence.items() if a != b)
    expected = sum(marginals[a] * marginals[b] for a in marginals for b in marginals if a != b) / (n_total - 1)
    if expected == 0:
        return None
    return 1.0 - observed / expected
