"""Agreement between coders and annotators: Cohen's kappa, precision/recall/F1, Krippendorff's alpha.

Pure functions over binary judgements (present / absent); missing judgements are `None`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import permutations


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
    """Compare two equally long sequences of present/absent judgements (kappa, precision, recall
    and F1 from scikit-learn; None where a statistic is undefined)."""
    if len(coder) != len(reference):
        raise ValueError(f"coder has {len(coder)} judgements, reference {len(reference)}; pair them item by item")
    coder, reference = [bool(c) for c in coder], [bool(r) for r in reference]
    tp = sum(1 for c, r in zip(coder, reference) if c and r)
    fp = sum(1 for c, r in zip(coder, reference) if c and not r)
    fn = sum(1 for c, r in zip(coder, reference) if not c and r)
    tn = len(coder) - tp - fp - fn
    n = len(coder)
    if n == 0:
        return BinaryAgreement(
            n=0, prevalence=0.0, kappa=None, precision=None, recall=None, f1=None, tp=0, fp=0, fn=0, tn=0
        )
    from sklearn.metrics import f1_score, precision_score, recall_score

    return BinaryAgreement(
        n=n,
        prevalence=(tp + fn) / n,
        kappa=cohen_kappa(coder, reference),
        precision=float(precision_score(reference, coder)) if tp + fp else None,
        recall=float(recall_score(reference, coder)) if tp + fn else None,
        f1=float(f1_score(reference, coder)) if tp + fp + fn else None,
        tp=tp,
        fp=fp,
        fn=fn,
        tn=tn,
    )


def cohen_kappa(coder: Sequence[bool], reference: Sequence[bool]) -> float | None:
    """Cohen's kappa (scikit-learn's); None when undefined (both always give the same single value)."""
    if not coder or len(set(coder) | set(reference)) < 2:
        return None
    from sklearn.metrics import cohen_kappa_score

    return float(cohen_kappa_score(reference, coder))


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
