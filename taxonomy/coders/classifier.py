"""A learned coder: TF-IDF over the rendered trajectory plus structural features, one calibrated
logistic regression per code (one-vs-rest), trained from human labels and cross-validated.

Agreement is measured on held-out folds before the model is saved; the saved file carries its
taxonomy version, so it is never applied to codes of another version.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from curriculab.taxonomy.agreement import binary_agreement
from curriculab.trajectory.errors import InputError

MIN_PER_CLASS = 4
"""A code needs at least this many present and absent labels to be learned."""


@dataclass
class TrainedClassifier:
    """A trained classifier with its provenance and held-out agreement."""

    classifier_id: str
    """Short hash of the training labels; the coder name is `classifier:<id>`."""
    taxonomy_version: str
    """Taxonomy the codes come from."""
    codes: list[str]
    """Codes it can assign."""
    vectorizer: Any
    """Fitted TF-IDF vectorizer."""
    scaler: Any
    """Fitted scaler for the structural features."""
    models: dict[str, Any]
    """One fitted estimator per code."""
    cv: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Per code agreement on held-out folds (n, kappa, precision, recall, f1)."""
    skipped: dict[str, str] = field(default_factory=dict)
    """Codes not learned, with the reason (too few labels of one class)."""
    trained_at: str = ""
    """UTC time of training."""
    n_trajectories: int = 0
    """Labelled trajectories used."""
    annotator: str = ""
    """Whose labels it learned from: agreement with them on `trained_on` is in-sample."""
    trained_on: list[str] = field(default_factory=list)
    """Trajectories whose labels it was fitted to."""

    @property
    def coder(self) -> str:
        return f"classifier:{self.classifier_id}"

    def save(self, path: Path | str) -> Path:
        import joblib

        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        joblib.dump(self, path)
        return path

    def predict_proba(self, texts: Sequence[str], features: Sequence[Sequence[float]]) -> dict[str, np.ndarray]:
        x = _matrix(self.vectorizer, self.scaler, texts, features)
        return {code: model.predict_proba(x)[:, 1] for code, model in self.models.items()}


def load_classifier(path: Path | str) -> TrainedClassifier:
    import joblib

    path = Path(path)
    if not path.exists():
        raise InputError(
            f"no classifier at {path}. Train one with `curriculab classifier train --annotator NAME -o {path}`"
        )
    try:
        model = joblib.load(path)
    except Exception as exc:  # truncated, corrupt or not a joblib file at all
        raise InputError(
            f"{path} cannot be read as a classifier ({type(exc).__name__}: {str(exc)[:80]}). "
            f"Train it again with `curriculab classifier train --annotator NAME -o {path}`"
        ) from None
    if not isinstance(model, TrainedClassifier):
        raise InputError(f"{path} is not a curriculab classifier. Train one with `curriculab classifier train`")
    return model


def _matrix(vectorizer: Any, scaler: Any, texts: Sequence[str], features: Sequence[Sequence[float]]):
    from scipy.sparse import csr_matrix, hstack

    return hstack(
        [vectorizer.transform(texts), csr_matrix(scaler.transform(np.asarray(features, dtype=float)))]
    ).tocsr()


def _estimator(y: np.ndarray):
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression

    base = LogisticRegression(C=4.0, class_weight="balanced", max_iter=2000)
    folds = int(min(3, np.bincount(y.astype(int)).min()))
    # calibration needs a few examples of each class per fold; with fewer, plain LR probabilities
    return CalibratedClassifierCV(base, method="sigmoid", cv=folds) if folds >= 2 else base


def train_classifier(
    trajectory_ids: Sequence[str],
    texts: Sequence[str],
    features: Sequence[Sequence[float]],
    labels: dict[str, dict[str, bool]],
    taxonomy_version: str,
    folds: int = 5,
    seed: int = 0,
    annotator: str = "",
) -> TrainedClassifier:
    """Train from `labels[code][trajectory_id] = present`; report out-of-fold agreement per code."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    index = {t: i for i, t in enumerate(trajectory_ids)}
    digest = hashlib.blake2b(digest_size=4)
    for code in sorted(labels):
        for t in sorted(labels[code]):
            digest.update(f"{code}|{t}|{int(labels[code][t])}\n".encode())
    vectorizer = TfidfVectorizer(
        token_pattern=r"[A-Za-z_][A-Za-z0-9_.\-/]+|[<>|&;]+",
        ngram_range=(1, 2),
        min_df=2,
        max_features=50_000,
        sublinear_tf=True,
    )
    vectorizer.fit(texts)
    scaler = StandardScaler().fit(np.asarray(features, dtype=float))
    x_all = _matrix(vectorizer, scaler, texts, features)
    result = TrainedClassifier(
        classifier_id=digest.hexdigest(),
        taxonomy_version=taxonomy_version,
        codes=[],
        vectorizer=vectorizer,
        scaler=scaler,
        models={},
        trained_at=datetime.now(UTC).isoformat(timespec="seconds"),
        n_trajectories=len({t for per in labels.values() for t in per}),
        annotator=annotator,
        trained_on=sorted({t for per in labels.values() for t in per}),
    )
    for code, per in sorted(labels.items()):
        rows = [index[t] for t in per if t in index]
        y = np.array([per[trajectory_ids[i]] for i in rows], dtype=int)
        positives, negatives = int(y.sum()), int(len(y) - y.sum())
        if min(positives, negatives) < MIN_PER_CLASS:
            result.skipped[code] = f"{positives} present and {negatives} absent labels; need {MIN_PER_CLASS} of each"
            continue
        x = x_all[rows]
        predicted = np.zeros(len(y), dtype=bool)
        k = min(folds, positives, negatives)
        for train, test in StratifiedKFold(n_splits=k, shuffle=True, random_state=seed).split(x, y):
            model = _estimator(y[train]).fit(x[train], y[train])
            predicted[test] = model.predict_proba(x[test])[:, 1] >= 0.5
        stats = binary_agreement(list(predicted), list(y.astype(bool)))
        result.cv[code] = {
            "n": stats.n,
            "folds": k,
            "kappa": stats.kappa,
            "precision": stats.precision,
            "recall": stats.recall,
            "f1": stats.f1,
        }
        result.models[code] = _estimator(y).fit(x, y)
        result.codes.append(code)
    return result
