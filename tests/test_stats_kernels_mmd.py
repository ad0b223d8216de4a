"""Tests of cflib.stats.kernels and cflib.stats.mmd (Fu et al. 2025, App. A.2/A.4; Gretton et al. 2012)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy.spatial.distance import cdist, pdist

from cflib import CflibWarning
from cflib.stats.kernels import GaussianKernel, Kernel, LaplaceKernel, make_kernel, median_bandwidth
from cflib.stats.mmd import mmd2, mmd_test


def rng(seed=0):
    return np.random.default_rng(seed)


# ---------------------------------------------------------------- kernels
def test_gaussian_and_laplace_gram_match_closed_form_and_chunking():
    x, y = rng().normal(size=(23, 3)), rng(1).normal(size=(17, 3))
    g = GaussianKernel(0.7).gram(x, y, chunk_size=5).numpy()
    np.testing.assert_allclose(g, np.exp(-cdist(x, y, "sqeuclidean") / (2 * 0.7**2)), rtol=1e-12, atol=1e-14)
    lap = LaplaceKernel(1.3).gram(x, y, chunk_size=4).numpy()
    np.testing.assert_allclose(lap, np.exp(-cdist(x, y, "cityblock") / 1.3), rtol=1e-12)
    # symmetric, unit diagonal, bounded by K = 1
    kxx = GaussianKernel(0.7).gram(x).numpy()
    np.testing.assert_allclose(kxx, kxx.T)
    np.testing.assert_allclose(np.diag(kxx), 1.0)
    assert kxx.max() <= 1.0 and kxx.min() >= 0.0


def test_median_bandwidth_is_median_of_distinct_pair_distances():
    x, y = rng().normal(size=(30, 2)), rng(2).normal(size=(20, 2))
    z = np.vstack([x, y])
    assert median_bandwidth(x, y) == pytest.approx(np.median(pdist(z)), rel=1e-12)
    assert median_bandwidth(x, y, kernel="laplace") == pytest.approx(np.median(pdist(z, "cityblock")), rel=1e-12)
    assert GaussianKernel().fit(x, y).bandwidth == pytest.approx(np.median(pdist(z)))
    # degenerate discrete sample: a dominant value never gives a zero bandwidth
    assert median_bandwidth(np.r_[np.zeros(50), np.ones(3)]) > 0


@pytest.mark.parametrize(
    "bw, error", [(0, ValueError), (-1.0, ValueError), (np.nan, ValueError), ("mean", ValueError), (True, TypeError)]
)
def test_bad_bandwidth_raises(bw, error):
    with pytest.raises(error, match="bandwidth"):
        Kernel("gaussian", bw)


def test_unknown_kernel_and_unfitted_gram_raise():
    with pytest.raises(ValueError, match="kernel must be one of"):
        make_kernel("cosine")
    with pytest.raises(TypeError):
        make_kernel(3)
    with pytest.raises(ValueError, match="fit"):
        GaussianKernel().gram(np.zeros((3, 1)))


# ---------------------------------------------------------------- mmd2
def _gauss_mmd2(delta, s=1.0, tau=1.0):
    a = (s**2 / (s**2 + 2 * tau**2)) ** 0.5
    c = a * np.exp(-(delta**2) / (2 * (s**2 + 2 * tau**2)))
    return 2 * a - 2 * c


def test_mmd2_symmetry_and_biased_equals_embedding_distance():
    x, y = rng().normal(size=(40, 2)), rng(1).normal(0.5, 1, size=(30, 2))
    for est in ("unbiased", "biased"):
        assert mmd2(x, y, bandwidth=1.0, estimator=est) == pytest.approx(
            mmd2(y, x, bandwidth=1.0, estimator=est), rel=1e-12
        )
    kxx = np.exp(-cdist(x, x, "sqeuclidean") / 2)
    kyy = np.exp(-cdist(y, y, "sqeuclidean") / 2)
    kxy = np.exp(-cdist(x, y, "sqeuclidean") / 2)
    assert mmd2(x, y, bandwidth=1.0, estimator="biased") == pytest.approx(
        kxx.mean() + kyy.mean() - 2 * kxy.mean(), rel=1e-12
    )
    u = (kxx.sum() - 40) / (40 * 39) + (kyy.sum() - 30) / (30 * 29) - 2 * kxy.mean()
    assert mmd2(x, y, bandwidth=1.0) == pytest.approx(u, rel=1e-12)
    with pytest.raises(ValueError, match="equal size"):
        mmd2(x, y, estimator="paired")


def test_unbiased_estimators_have_mean_zero_under_null_and_the_true_mean_under_a_shift():
    g = rng(3)
    draws = {"unbiased": [], "paired": [], "linear": []}
    shifted = []
    for _ in range(300):
        x, y = g.normal(size=(40, 1)), g.normal(size=(40, 1))
        for est in draws:
            draws[est].append(mmd2(x, y, bandwidth=1.0, estimator=est))
        shifted.append(mmd2(x, y + 1.0, bandwidth=1.0))
    for est, v in draws.items():
        v = np.asarray(v)
        assert abs(v.mean()) < 4 * v.std() / np.sqrt(v.size), est
    s = np.asarray(shifted)
    assert abs(s.mean() - _gauss_mmd2(1.0)) < 4 * s.std() / np.sqrt(s.size)


# ---------------------------------------------------------------- permutation tests
def test_permutation_null_values_are_statistics_of_relabellings():
    x, y = rng(4).normal(size=(4, 1)), rng(5).normal(size=(3, 1))
    z = np.vstack([x, y])
    exact = {
        round(mmd2(z[list(c)], z[[i for i in range(7) if i not in c]], bandwidth=1.0), 10)
        for c in itertools.combinations(range(7), 4)
    }
    res = mmd_test(x, y, bandwidth=1.0, n_permutations=200, seed=0, precision="float64")
    assert {round(v, 10) for v in res.null_distribution} <= exact
    assert round(res.statistic, 10) in exact
    # float32 products: every value within float32 accuracy of a relabelling's statistic, same p-value
    mixed = mmd_test(x, y, bandwidth=1.0, n_permutations=200, seed=0)
    ex = np.array(sorted(exact))
    assert np.abs(mixed.null_distribution[:, None] - ex[None, :]).min(1).max() < 1e-6
    assert mixed.pvalue == res.pvalue and mixed.statistic == pytest.approx(res.statistic, abs=1e-14)


def test_biased_and_unbiased_permutation_pvalues_coincide_for_equal_sizes():
    x, y = rng(6).normal(size=(30, 2)), rng(7).normal(0.3, 1, size=(30, 2))
    a = mmd_test(x, y, bandwidth=1.0, seed=11, estimator="unbiased")
    b = mmd_test(x, y, bandwidth=1.0, seed=11, estimator="biased")
    assert a.pvalue == b.pvalue
    assert b.statistic == pytest.approx(mmd2(x, y, bandwidth=1.0, estimator="biased"), rel=1e-10)


def test_signflip_null_contains_observed_and_is_symmetric_in_distribution():
    x, y = rng(8).normal(size=(25, 2)), rng(9).normal(size=(25, 2))
    res = mmd_test(x, y, paired=True, bandwidth=1.0, n_permutations=2000, seed=1)
    assert res.statistic == pytest.approx(mmd2(x, y, bandwidth=1.0, estimator="paired"), rel=1e-10)
    # flipping all signs at once leaves s'Hs unchanged: the null is a distribution of quadratic forms
    assert res.null_distribution.shape == (2000,)
    assert 0 < res.pvalue <= 1


@pytest.mark.parametrize("paired", [True, False])
def test_tests_are_exact_at_small_m(paired):
    # P[p <= alpha] <= alpha within binomial error: randomised permutation p-values are valid for any m
    g = rng(10)
    alpha, reps = 0.1, 300
    p = np.array(
        [
            mmd_test(
                g.normal(size=(8, 1)), g.normal(size=(8, 1)), paired=paired, bandwidth=1.0, n_permutations=99, seed=g
            ).pvalue
            for _ in range(reps)
        ]
    )
    rate = np.mean(p <= alpha)
    assert rate <= alpha + 2.5 * np.sqrt(alpha * (1 - alpha) / reps)
    assert rate >= alpha - 3.5 * np.sqrt(alpha * (1 - alpha) / reps)  # and not trivially conservative


def test_mmd_test_has_power_against_a_shift():
    x, y = rng(12).normal(size=(100, 2)), rng(13).normal(0.8, 1, size=(100, 2))
    for paired in (False, True):
        res = mmd_test(x, y, paired=paired, seed=0, n_permutations=200)
        assert res.pvalue < 0.01 and res.reject(0.05)
    assert list(res.summary().columns)[:2] == ["statistic (MMD^2_u)", "pvalue"]


def test_mmd_test_says_what_size_reaches_the_level():
    """Two units per sample: the permutation null takes 3 values (smallest p about 1/3 > 0.05), so the test
    can never reject; the warning says so and names the size needed (issue 25)."""
    x, y = rng(1).normal(size=(2, 1)), rng(2).normal(3.0, 1.0, size=(2, 1))
    with pytest.warns(
        CflibWarning, match=r"use at least 4 units per sample \(n = m = 4\).*1/3 = 0.333, above alpha=0.05"
    ):
        res = mmd_test(x, y, bandwidth=1.0, n_permutations=99, seed=0)
    assert len(res.warnings) == 1 and "at least 4 units per sample" in res.warnings[0]
    assert res.pvalue > 0.05 and not res.reject(0.05)  # the warning is right: it cannot reject
    with pytest.warns(CflibWarning, match=r"use at least 6 pairs.*1/2 = 0.5"):
        mmd_test(x, y, paired=True, bandwidth=1.0, n_permutations=99, seed=0)
    with pytest.warns(CflibWarning, match=r"n=3 and m=2 units.*at least 4 units per sample"):
        mmd_test(rng(3).normal(size=(3, 1)), y, bandwidth=1.0, n_permutations=99, seed=0)
    with warnings.catch_warnings():  # the sizes it names are enough: no warning there
        warnings.simplefilter("error", CflibWarning)
        assert (
            mmd_test(
                rng(4).normal(size=(4, 1)), rng(5).normal(size=(4, 1)), bandwidth=1.0, n_permutations=99, seed=0
            ).warnings
            == ()
        )
        assert (
            mmd_test(
                rng(6).normal(size=(6, 1)),
                rng(7).normal(size=(6, 1)),
                paired=True,
                bandwidth=1.0,
                n_permutations=99,
                seed=0,
            ).warnings
            == ()
        )


def test_mmd_bad_input():
    x = rng().normal(size=(10, 2))
    with pytest.raises(ValueError, match="same length"):
        mmd_test(x, x[:9], paired=True)
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        mmd_test(bad, x)
    with pytest.raises(ValueError, match="at least 2"):
        mmd_test(x[:1], x)
    with pytest.raises(ValueError, match="columns"):
        mmd2(x, x[:, :1])
    with pytest.raises(ValueError, match="n_permutations"):
        mmd_test(x, x, n_permutations=0)
    with pytest.raises(ValueError, match="estimator"):
        mmd2(x, x, estimator="quadratic")
    with pytest.raises(ValueError, match="alpha"):
        mmd_test(x, x, n_permutations=9, seed=0).reject(1.5)
