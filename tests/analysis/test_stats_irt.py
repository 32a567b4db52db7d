"""Wilson intervals, pass@k and IRT recovery, against hand-computed and known values."""

import numpy as np
import pytest
from scipy.stats import spearmanr

from curriculab.analysis.irt import fit_irt, measured_tiers
from curriculab.analysis.stats import pass_at_k, wilson_interval
from curriculab.analysis.store import Store


@pytest.mark.parametrize(
    "k, n, low, high",
    [
        (7, 20, 0.18119, 0.56715),  # p = .35: centre (.35 + 1.9208/20)/(1.19207), half-width by hand
        (0, 10, 0.0, 0.27753),  # 0/10: upper bound z²/(n + z²) = 3.8415/13.8415
        (10, 10, 0.72247, 1.0),
        (1, 2, 0.09453, 0.90547),
    ],
)
def test_wilson_by_hand_and_in_sql(k, n, low, high):
    assert wilson_interval(k, n) == pytest.approx((low, high), abs=1e-5)
    with Store(":memory:") as store:
        assert store.query(f"select wilson_low({k}, {n}), wilson_high({k}, {n})").rows[0] == pytest.approx(
            (low, high), abs=1e-5
        )


def test_wilson_of_nothing_is_the_whole_range():
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(
    "n, c, k, expected",
    [
        (5, 2, 1, 0.4),  # pass@1 is c/n
        (5, 2, 2, 1 - 3 / 10),  # 1 - C(3,2)/C(5,2)
        (5, 0, 3, 0.0),
        (5, 4, 2, 1.0),  # fewer than k failures: some draw must pass
        (10, 3, 5, 1 - 21 / 252),  # 1 - C(7,5)/C(10,5)
    ],
)
def test_pass_at_k_unbiased_estimator(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected)


def test_pass_at_k_refuses_impossible_inputs():
    with pytest.raises(ValueError, match="k=6 is larger than n=5"):
        pass_at_k(5, 1, 6)
    with pytest.raises(ValueError, match="c=7 must be between 0 and n=5"):
        pass_at_k(5, 7, 1)


def simulate(models=40, tasks=400, attempts=5, seed=0, two_pl=True):
    rng = np.random.default_rng(seed)
    theta, b = rng.normal(0, 1, models), rng.normal(0, 1.2, tasks)
    a = np.exp(rng.normal(0, 0.3, tasks)) if two_pl else np.ones(tasks)
    mi, ti = (g.ravel() for g in np.meshgrid(np.arange(models), np.arange(tasks), indexing="ij"))
    k = rng.binomial(attempts, 1 / (1 + np.exp(-a[ti] * (theta[mi] - b[ti]))))
    return theta, b, a, mi, ti, np.full_like(k, attempts), k


def test_2pl_recovers_known_parameters():
    theta, b, a, mi, ti, n, k = simulate()
    fit = fit_irt(mi, ti, n, k, [f"m{i}" for i in range(40)], [f"t{j}" for j in range(400)])
    assert fit.converged
    assert spearmanr(fit.difficulty, b).statistic > 0.95
    assert spearmanr(fit.ability, theta).statistic > 0.97
    assert (
        spearmanr(fit.discrimination, a).statistic > 0.3
    )  # discrimination is the hardest to pin with 200 draws a task
    # standard errors are honest: most true difficulties lie within 2 SE of the estimate (after aligning the scale)
    scale = np.std(fit.ability) / np.std(theta)
    inside = np.abs(fit.difficulty / scale - b) < 2 * fit.difficulty_se / scale + 0.3
    assert inside.mean() > 0.8


def test_rasch_recovers_and_more_attempts_shrink_errors():
    theta, b, _, mi, ti, n, k = simulate(two_pl=False, attempts=3)
    few = fit_irt(mi, ti, n, k, [f"m{i}" for i in range(40)], [f"t{j}" for j in range(400)], kind="rasch")
    theta, b, _, mi, ti, n, k = simulate(two_pl=False, attempts=12)
    many = fit_irt(mi, ti, n, k, [f"m{i}" for i in range(40)], [f"t{j}" for j in range(400)], kind="rasch")
    assert np.all(few.discrimination == 1) and spearmanr(many.difficulty, b).statistic > 0.95
    assert many.difficulty_se.mean() < few.difficulty_se.mean() / 1.5


def test_fit_refuses_bad_cells():
    with pytest.raises(ValueError, match="no attempts to fit"):
        fit_irt([], [], [], [], [], [])
    with pytest.raises(ValueError, match="passes must be between 0 and attempts"):
        fit_irt([0], [0], [2], [3], ["m"], ["t"])
    with pytest.raises(ValueError, match="Use '2pl' or 'rasch'"):
        fit_irt([0], [0], [2], [1], ["m"], ["t"], kind="3pl")


def test_measured_tiers_follow_the_authored_shares():
    difficulty = np.arange(10, dtype=float)
    assert (
        measured_tiers(difficulty, {"basic": 2, "intermediate": 5, "complex": 3})
        == ["basic"] * 2 + ["intermediate"] * 5 + ["complex"] * 3
    )


def test_held_out_metrics_match_textbook_values():
    import numpy as np

    from curriculab.analysis.difficulty import _auc, _log_loss

    y = np.array([1, 0, 1, 0])
    # AUC: of the 4 positive/negative pairs, 3 are ordered right
    assert _auc(y, np.array([0.9, 0.8, 0.7, 0.1])) == 0.75
    # log-loss of predicting 0.5 everywhere is ln 2
    assert abs(_log_loss(y.astype(float), np.full(4, 0.5)) - np.log(2)) < 1e-12
    assert np.isnan(_auc(np.array([1, 1]), np.array([0.2, 0.3])))


@pytest.mark.slow
def test_held_out_metrics_equal_scikit_learns_with_ties_and_extreme_probabilities():
    import numpy as np
    from sklearn.metrics import log_loss, roc_auc_score

    from curriculab.analysis.difficulty import _auc, _log_loss

    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(300):
        n = int(rng.integers(2, 60))
        y = rng.integers(0, 2, n)
        score = np.round(rng.random(n), int(rng.integers(1, 3)))  # one or two decimals: many ties
        p = np.where(rng.random(n) < 0.1, rng.integers(0, 2, n).astype(float), rng.random(n))  # some exactly 0 or 1
        assert _log_loss(y, p) == pytest.approx(log_loss(y, np.clip(p, 1e-6, 1 - 1e-6), labels=[0, 1]), rel=1e-12)
        if len(set(y.tolist())) == 2:
            assert _auc(y, score) == pytest.approx(roc_auc_score(y, score), rel=1e-12)
            checked += 1
    assert checked > 250


def test_cluster_bootstrap_intervals_equal_a_fresh_uncached_draw():
    # the weight matrix is cached (it depends only on clusters, reps and seed); the intervals must be
    # exactly those of drawing it afresh, for every call, in any order
    import numpy as np

    from curriculab.analysis.stats import (
        _cluster_weights,
        cluster_bootstrap,
        cluster_bootstrap_difference,
        cluster_bootstraps,
    )

    def reference(k, n, reps=2000, seed=0):
        weights = np.random.default_rng(seed).multinomial(len(n), np.full(len(n), 1 / len(n)), size=reps).astype(float)
        totals = weights @ np.asarray(n, float)
        rates = (weights @ np.asarray(k, float))[totals > 0] / totals[totals > 0]
        return float(np.quantile(rates, 0.025)), float(np.quantile(rates, 0.975))

    rng = np.random.default_rng(7)
    _cluster_weights.cache_clear()
    for size in (5, 40, 5, 120, 40):
        n = rng.integers(1, 9, size)
        k = rng.binomial(n, 0.4)
        # the same draws; equal to the last bits BLAS's summation order leaves (it differs by array alignment)
        assert cluster_bootstrap(k, n) == pytest.approx(reference(k, n), rel=1e-12)
        assert cluster_bootstrap(k, n, seed=3) == pytest.approx(reference(k, n, seed=3), rel=1e-12)
    assert _cluster_weights.cache_info().hits >= 4
    # many groups at once, from the same resamples: each equal to its own reference; groups of mixed
    # sizes, some with tasks no attempt reached (resamples without trials are dropped), and some too small
    groups = []
    for size in (5, 40, 5, 120, 40, 40, 3):
        n = rng.integers(0, 4, size)
        groups.append((rng.binomial(n, 0.5), n))
    groups += [([1], [2]), ([], []), ([0, 0, 1], [0, 0, 3])]
    together = cluster_bootstraps(groups, seed=5)
    for (k, n), interval in zip(groups, together):
        if (np.asarray(n) > 0).sum() < 2:
            assert interval == (None, None)
        else:
            assert interval == pytest.approx(reference(k, n, seed=5), rel=1e-12)
    assert together.count((None, None)) == 3
    low, high = cluster_bootstrap_difference([3, 4, 5], [8, 8, 8], [1, 2, 2], [8, 8, 8])
    assert low <= 12 / 24 - 5 / 24 <= high  # the difference of the pooled rates lies inside
    with pytest.raises(ValueError):
        _cluster_weights(5, 2000, 0)[0, 0] = 1.0  # shared, so read-only


def test_bootstrap_weights_kept_on_disk_are_the_draw_itself_and_a_bad_file_is_drawn_again(tmp_path, monkeypatch):
    import numpy as np

    from curriculab.analysis import stats

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    drawn = np.random.default_rng(4).multinomial(300, np.full(300, 1 / 300), size=500)
    stats._cluster_weights.cache_clear()
    first = stats._cluster_weights(300, 500, 4)
    files = list(stats.weights_cache_dir().glob("weights-300-500-4-*.npy"))
    assert len(files) == 1 and np.array_equal(first, drawn)
    stats._cluster_weights.cache_clear()  # a new process: read from the file
    assert np.array_equal(stats._cluster_weights(300, 500, 4), drawn)
    tampered = np.load(files[0])
    tampered[0, 0] += 1  # a resample that no longer draws 300 tasks
    np.save(files[0], tampered)
    stats._cluster_weights.cache_clear()
    assert np.array_equal(stats._cluster_weights(300, 500, 4), drawn)
    assert np.array_equal(np.load(files[0]), drawn)  # and written again
    files[0].write_bytes(b"not an array")
    stats._cluster_weights.cache_clear()
    assert np.array_equal(stats._cluster_weights(300, 500, 4), drawn)
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))  # no cache folder can be made: drawn, nothing stored
    stats._cluster_weights.cache_clear()
    assert np.array_equal(stats._cluster_weights(300, 500, 4), drawn)
    stats._cluster_weights.cache_clear()
