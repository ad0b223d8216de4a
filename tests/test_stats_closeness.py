"""Tests of N-TE, CF-CLOT and the tabular models (Fu et al. 2025, Sec. 3-5, App. A.4-A.6)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from cflib.models.tabular import ARCHITECTURES, TabularClassifier
from cflib.stats.closeness import (
    _zetas,
    cfclot_statistics,
    cfclot_statistics_batch,
    cfclot_test,
    gap_for_target_nte,
    gaussian_pair_sample,
    hoeffding_bound,
    mte,
    nte,
    nte_bernoulli,
    nte_gaussian,
    nte_sup_gaussian,
    shift_for_target_nte,
)

Z95 = stats.norm.ppf(0.95)


# ---------------------------------------------------------------- closed forms (claim C4)
def test_gaussian_closed_form_matches_notes_and_edge_cases():
    assert nte_sup_gaussian() == pytest.approx(0.405827, abs=1e-6)
    for eps, delta in [(0.05, 0.8882), (0.1, 1.3029), (0.3, 2.8398)]:
        assert shift_for_target_nte(eps) == pytest.approx(delta, abs=1e-4)
        assert nte_gaussian(shift_for_target_nte(eps)) == pytest.approx(eps, abs=1e-10)
    assert nte_gaussian(0.0) == 0.0
    assert np.all(np.diff(nte_gaussian(np.linspace(0, 10, 50))) > 0)  # increasing in the shift
    with pytest.raises(ValueError, match="unreachable"):
        shift_for_target_nte(0.5)


def test_bernoulli_closed_form_and_rate_gap_table():
    # notes, C4: r = 0 gives 0.0067 at a 10-point gap and 1.0 at a 100-point gap
    assert nte_bernoulli(0.55, 0.45) == pytest.approx(0.0067, abs=1e-4)
    assert nte_bernoulli(1.0, 0.0) == pytest.approx(1.0)
    assert nte_bernoulli(0.75, 0.25, r=np.exp(-0.5)) == pytest.approx(0.086, abs=1e-3)
    for eps, gap in [(0.01, 0.122), (0.05, 0.271), (0.1, 0.378), (0.3, 0.626)]:
        assert gap_for_target_nte(eps) == pytest.approx(gap, abs=1e-3)


@pytest.mark.parametrize("case", ["gaussian", "bernoulli"])
def test_estimator_matches_closed_form_within_monte_carlo_error(case):
    g = np.random.default_rng(0)
    m = 1500
    if case == "gaussian":
        y, y_cf = gaussian_pair_sample(m, 1.3029, seed=g)
        truth = nte_gaussian(1.3029)
    else:
        y, y_cf = (g.random(m) < 0.8).astype(float), (g.random(m) < 0.3).astype(float)
        truth = nte_bernoulli(0.8, 0.3, r=np.exp(-0.5))
    st = cfclot_statistics(y, y_cf, truth, bandwidth=1.0)
    se = st["sigma_delta"] / np.sqrt(m)
    assert abs(st["statistic"] - truth) < 4 * se


# ---------------------------------------------------------------- identities (claims C1-C3)
def test_exact_identities_of_the_estimator():
    y, y_cf = gaussian_pair_sample(60, 1.0, d=2, seed=1)
    t = nte(y, y_cf, bandwidth=1.0)
    st = cfclot_statistics(y, y_cf, 0.1, bandwidth=1.0)
    assert t == pytest.approx(st["mte"] / st["mean_d"], rel=1e-12)
    assert t == pytest.approx(nte(y_cf, y, bandwidth=1.0), rel=1e-12)  # symmetric
    perm = np.random.default_rng(2).permutation(60)
    assert t == pytest.approx(nte(y[perm], y_cf[perm], bandwidth=1.0), rel=1e-12)  # unit relabelling
    assert mte(y, y_cf, bandwidth=1.0) == pytest.approx(st["mte"], rel=1e-12)
    assert t <= 1.0
    # extreme case: point masses at distance >> bandwidth have N-TE = 1
    assert nte(np.zeros(10), np.full(10, 100.0), bandwidth=1.0) == pytest.approx(1.0)


def test_compressed_discrete_path_equals_dense_path():
    g = np.random.default_rng(3)
    y, y_cf = g.integers(0, 3, size=(400, 1)).astype(float), g.integers(0, 2, size=(400, 1)).astype(float)
    a = cfclot_statistics(y, y_cf, 0.05, bandwidth=0.8)
    b = cfclot_statistics_batch(y[None], y_cf[None], 0.05, bandwidth=0.8).iloc[0]
    for key in ("statistic", "mte", "mean_d", "sigma_delta", "sigma_paper"):
        assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-12), key


def test_unbiased_variance_components_match_brute_force():
    g = np.random.default_rng(4)
    m = 7
    a = g.normal(size=(m, m))
    h = a + a.T
    np.fill_diagonal(h, 0.0)
    r = h.sum(1)
    z1, z2 = _zetas(h.sum(), (r * r).sum(), (h * h).sum(), m)
    trip = [h[i, j] * h[i, k] for i, j, k in itertools.permutations(range(m), 3)]
    quad = [h[i, j] * h[k, q] for i, j, k, q in itertools.permutations(range(m), 4)]
    sq = [h[i, j] ** 2 for i, j in itertools.permutations(range(m), 2)]
    assert z1 == pytest.approx(np.mean(trip) - np.mean(quad), rel=1e-10)
    assert z2 == pytest.approx(np.mean(sq) - np.mean(quad), rel=1e-10)


def test_batch_statistics_agree_with_single_calls():
    y, y_cf = gaussian_pair_sample(50, 1.0, n_reps=3, seed=5)
    df = cfclot_statistics_batch(y, y_cf, 0.2, bandwidth=1.0)
    for i in range(3):
        st = cfclot_statistics(y[i], y_cf[i], 0.2, bandwidth=1.0)
        assert df.loc[i, "statistic"] == pytest.approx(st["statistic"], rel=1e-10)
        assert df.loc[i, "sigma_delta"] == pytest.approx(st["sigma_delta"], rel=1e-8)
        r = cfclot_test(y[i], y_cf[i], 0.2, bandwidth=1.0)
        assert r.rejected == bool(st["statistic"] > 0.2 + st["sigma_delta"] * Z95 / np.sqrt(50))


# ---------------------------------------------------------------- calibration (claims C5, C6, C9)
@pytest.mark.parametrize("eps", [0.1, 0.3])
def test_type_one_error_at_the_boundary_m200(eps):
    m, reps = 200, 1000
    y, y_cf = gaussian_pair_sample(m, shift_for_target_nte(eps), n_reps=reps, seed=2025)
    df = cfclot_statistics_batch(y, y_cf, eps, bandwidth=1.0)
    rate = np.mean(df["statistic"] > eps + df["sigma_delta"] * Z95 / np.sqrt(m))
    assert 0.035 <= rate <= 0.065, rate
    # empirical spread of sqrt(m) * statistic vs the delta standard error (within 10 %)
    assert df["statistic"].std() * np.sqrt(m) == pytest.approx(df["sigma_delta"].mean(), rel=0.1)


def test_rejection_vanishes_strictly_inside_the_null_and_power_grows():
    m, reps = 200, 300
    inside = gaussian_pair_sample(m, shift_for_target_nte(0.03), n_reps=reps, seed=1)
    df = cfclot_statistics_batch(*inside, 0.1, bandwidth=1.0)
    assert np.mean(df["statistic"] > 0.1 + df["sigma_delta"] * Z95 / np.sqrt(m)) <= 0.01
    alt = gaussian_pair_sample(m, shift_for_target_nte(0.2), n_reps=reps, seed=2)
    df = cfclot_statistics_batch(*alt, 0.1, bandwidth=1.0)
    assert np.mean(df["statistic"] > 0.1 + df["sigma_delta"] * Z95 / np.sqrt(m)) >= 0.95


def test_signflip_cfclot_is_exact_at_eps_zero():
    g = np.random.default_rng(6)
    reps, alpha = 300, 0.1
    p = np.array(
        [cfclot_test(g.normal(size=10), g.normal(size=10), 0.0, n_boot=99, seed=g).pvalue for _ in range(reps)]
    )
    assert np.mean(p <= alpha) <= alpha + 2.5 * np.sqrt(alpha * (1 - alpha) / reps)


def test_methods_and_result_object():
    y, y_cf = gaussian_pair_sample(80, 1.5, seed=7)
    for method in ("signflip", "bootstrap", "bootstrap-literal", "normal"):
        r = cfclot_test(y, y_cf, 0.0, method=method, n_boot=199, seed=0)
        assert 0 < r.pvalue <= 1 and r.method == method
    assert cfclot_test(y, y_cf, 0.0, n_boot=199, seed=0).rejected  # a clear shift is detected at eps = 0
    r = cfclot_test(y, y_cf, 0.1, method="bootstrap", n_boot=199, seed=0)
    assert r.null_distribution.shape == (199,)
    s = cfclot_test(y, y_cf, 0.1).summary()
    assert {"N-TE", "threshold", "pvalue", "reject"} <= set(s.columns)
    # same seed, same numbers
    assert cfclot_test(y, y_cf, 0.0, seed=3).pvalue == cfclot_test(y, y_cf, 0.0, seed=3).pvalue


def test_hoeffding_bound_holds():
    m, reps = 50, 400
    y, y_cf = gaussian_pair_sample(m, 1.0, n_reps=reps, seed=8)
    df = cfclot_statistics_batch(y, y_cf, 0.0, bandwidth=1.0)
    truth = nte_gaussian(1.0) * (4 - 2 * (1 / 3) ** 0.5)  # population MMD^2
    t = 0.3
    assert np.mean(np.abs(df["mte"] - truth) >= t) <= hoeffding_bound(t, m, width=4.0)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"y_cf": np.zeros(9)}, "same number of rows"),
        ({"epsilon": 1.0}, "epsilon"),
        ({"epsilon": -0.1}, "epsilon"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.5}, "alpha"),
        ({"method": "asymptotic"}, "method"),
        ({"variance": "exact"}, "variance"),
        ({"method": "signflip", "epsilon": 0.1}, "epsilon=0"),
        ({"y": np.zeros(1), "y_cf": np.zeros(1)}, "at least 2"),
        ({"y": np.r_[np.nan, np.zeros(9)]}, "NaN"),
    ],
)
def test_cfclot_bad_input(kwargs, match):
    args = {"y": np.arange(10.0), "y_cf": np.arange(10.0) + 1, "epsilon": 0.1}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        cfclot_test(args.pop("y"), args.pop("y_cf"), args.pop("epsilon"), **args)


# ---------------------------------------------------------------- tabular models
@pytest.fixture
def one_thread():
    # tiny models on a shared machine: thread hand-offs dominate, one thread is several times faster
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_tabular_models_learn_and_round_trip(arch, tmp_path, one_thread):
    g = np.random.default_rng(10)
    X = g.normal(size=(240, 4))
    y = (X[:, 0] - X[:, 1] > 0).astype(int)
    clf = TabularClassifier(arch, width=8, epochs=20, batch_size=80, lr=1e-2).fit(X, y, seed=0, device="cpu")
    assert clf.score(X, y) > 0.85
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(1), 1.0, rtol=1e-6)
    clf.save(tmp_path / "m.pt")
    np.testing.assert_allclose(TabularClassifier.load(tmp_path / "m.pt").predict_proba(X), p, rtol=1e-6)
    if arch == "mlp":  # same seed, same model (checked once: it is the same code path for every arch)
        again = TabularClassifier(arch, width=8, epochs=20, batch_size=80, lr=1e-2).fit(X, y, seed=0, device="cpu")
        np.testing.assert_allclose(again.predict_proba(X), p, rtol=1e-5)


def test_tabular_bad_input():
    with pytest.raises(ValueError, match="arch"):
        TabularClassifier("gru")
    with pytest.raises(ValueError, match="two classes"):
        TabularClassifier().fit(np.zeros((5, 2)), np.zeros(5))


def test_simulate_cfclot_matches_single_tests():
    from cflib.stats.closeness import simulate_cfclot

    df = simulate_cfclot(60, 0.1, 0.1, n_reps=5, seed=0)
    assert list(df.columns[:5]) == ["statistic", "mte", "mean_d", "sigma_delta", "sigma_paper"]
    y, y_cf = gaussian_pair_sample(60, shift_for_target_nte(0.1), n_reps=5, seed=0)
    for i in range(5):
        r = cfclot_test(y[i], y_cf[i], 0.1, bandwidth=1.0)
        assert r.rejected == bool(df.loc[i, "reject_delta"])
        assert r.pvalue == pytest.approx(stats.norm.sf(df.loc[i, "z_delta"]), rel=1e-8)


def test_tabular_tasks_have_binary_sensitive_attributes():
    from cflib.data import DatasetMissingError
    from cflib.data.tabular_tasks import tabular_task

    try:
        task = tabular_task("german")
    except DatasetMissingError:
        pytest.skip("German credit is not fetched (cflib data fetch)")
    assert len(task.frame) == 1000 and set(np.unique(task.target)) == {0, 1}
    assert all(task.frame[s].nunique() == 2 for s in task.sensitive)
    assert set(task.features) == set(task.frame.columns)
    X_tr, y_tr, X_te, y_te = task.split(600, 300, seed=0)
    assert len(X_tr) == 600 and len(y_te) == 300
    with pytest.raises(ValueError, match="name"):
        tabular_task("student")


def test_zero_variance_estimate_is_warned_about_not_divided_by():
    """Identical binary outputs: the unbiased variance is clipped to 0, the normal decision is deterministic and says so."""
    import warnings

    from cflib import CflibWarning

    b = np.r_[np.zeros(1000), np.ones(1000)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = cfclot_test(b, b.copy(), 0.1)
    assert res.sigma == 0.0 and res.pvalue == 1.0 and not res.rejected and np.isfinite(res.threshold)
    assert any(issubclass(w.category, CflibWarning) for w in caught)
    assert any("variance of the statistic is 0" in w for w in res.warnings)


def test_reject_at_another_level_moves_the_normal_threshold_and_agrees_at_the_test_s_own():
    g = np.random.default_rng(21)
    y = g.normal(0, 1, (80, 1))
    y_cf = y + 0.4 + g.normal(0, 0.3, (80, 1))
    for method in ("normal", "bootstrap"):
        r = cfclot_test(y, y_cf, 0.05, method=method, n_boot=199, seed=0, alpha=0.05)
        assert r.reject() is r.rejected and r.reject(0.05) == r.rejected
        # a smaller level never rejects where a larger one does not
        assert [r.reject(a) for a in (0.001, 0.01, 0.05, 0.2)] == sorted(r.reject(a) for a in (0.001, 0.01, 0.05, 0.2))
    r = cfclot_test(y, y_cf, 0.05, alpha=0.05)
    for a in (0.01, 0.2):
        threshold = r.epsilon + r.sigma * stats.norm.ppf(1 - a) / np.sqrt(r.m)
        assert r.reject(a) == bool(r.statistic > threshold) == (cfclot_test(y, y_cf, 0.05, alpha=a).rejected)
