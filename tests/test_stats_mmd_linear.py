"""Linear-time MMD tests: exact identities with the quadratic estimators, level within binomial intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cflib.stats.kernels import GaussianKernel
from cflib.stats.mmd import mmd2
from cflib.stats.mmd_linear import (
    block_mmd_test,
    linear_mmd_test,
    linear_power_study,
    rff_features,
    rff_mmd_test,
)


def _binomial_ok(rejections: int, reps: int, alpha: float = 0.05, conf: float = 0.999) -> bool:
    lo, hi = stats.binom.interval(conf, reps, alpha)
    return lo <= rejections <= hi


def test_linear_statistic_is_the_linear_estimator():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(101, 3)), rng.normal(0.2, 1, size=(90, 3))
    assert linear_mmd_test(x, y, bandwidth=1.3).statistic == pytest.approx(
        mmd2(x, y, bandwidth=1.3, estimator="linear"), rel=1e-12
    )


def test_block_statistic_is_the_mean_of_blockwise_unbiased_mmd():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(40, 2)), rng.normal(0.5, 1, size=(43, 2))
    res = block_mmd_test(x, y, block_size=10, bandwidth=0.8)
    ref = np.mean([mmd2(x[i : i + 10], y[i : i + 10], bandwidth=0.8) for i in range(0, 40, 10)])
    assert res.statistic == pytest.approx(ref, rel=1e-12)


def test_rff_features_approximate_the_gaussian_kernel():
    rng = np.random.default_rng(2)
    z = rng.normal(size=(30, 4))
    phi = rff_features(z, 1.5, 20000, seed=3)
    err = np.abs(phi @ phi.T - GaussianKernel(1.5).gram(z).numpy())
    assert err.max() < 0.05  # Monte Carlo error ~ 1 / sqrt(D) = 0.007 per entry


@pytest.mark.parametrize("test", ["linear", "block", "rff"])
def test_level_within_binomial_interval(test):
    reps, rej = 400, 0
    for r in range(reps):
        rng = np.random.default_rng(1000 + r)
        x, y = rng.normal(size=(200, 2)), rng.normal(size=(200, 2))
        if test == "linear":
            p = linear_mmd_test(x, y, bandwidth=1.0).pvalue
        elif test == "block":
            p = block_mmd_test(x, y, block_size=20, bandwidth=1.0).pvalue
        else:
            p = rff_mmd_test(x, y, bandwidth=1.0, n_features=32, n_permutations=99, seed=r).pvalue
        rej += p <= 0.05
    assert _binomial_ok(rej, reps), f"{test}: {rej} rejections in {reps} at alpha = 0.05"


def test_power_study_orders_the_tests_and_has_power():
    df = linear_power_study((200,), 0.6, d=2, n_reps=20, n_permutations=99, seed=0)
    rate = df.set_index("test")["rejection_rate"]
    assert rate.iloc[0] >= 0.9  # the full test at n = 200 and a 0.6 shift
    assert (rate >= 0.15).all()  # every linear-time test has power well above alpha
    assert set(df.columns) >= {"n", "test", "rejection_rate", "se", "seconds_per_test"}


def test_bad_inputs():
    x = np.zeros((10, 2))
    with pytest.raises(ValueError, match="block_size"):
        block_mmd_test(x, x, block_size=1)
    with pytest.raises(ValueError, match="two blocks"):
        block_mmd_test(x, x, block_size=8)
    with pytest.raises(ValueError, match="at least 4 rows"):
        linear_mmd_test(x[:3], x[:3], bandwidth=1.0)
    with pytest.raises(ValueError, match="n_features"):
        rff_mmd_test(x, x, n_features=0)
