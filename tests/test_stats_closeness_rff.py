"""CF-CLOT with random Fourier features (:mod:`cflib.stats.closeness_rff`, issue 30).

The statistic converges to the exact-kernel N-TE of :func:`cflib.stats.closeness.cfclot_test` at the rate
``1 / sqrt(D)``; the sums of any split of the rows, added in any order, give the same numbers; the test holds its
level at the null boundary ``N-TE = epsilon`` (the features' randomness included), where a threshold from the units'
variance alone does not.
"""

from __future__ import annotations

import warnings

import matplotlib
import numpy as np
import pytest

import cflib
from cflib.results import BaseTestResult
from cflib.stats.closeness import cfclot_test, gaussian_pair_sample, shift_for_target_nte
from cflib.stats.closeness_rff import (
    CFCLOTRFFResult,
    RFFPairSums,
    RFFRowSums,
    cfclot_rff_finish,
    cfclot_rff_test,
    combine_rff_sums,
    rff_map,
    rff_pair_sums,
    rff_row_sums,
)
from cflib.verdicts import binomial_interval

matplotlib.use("Agg")

EPS, BW = 0.3, 1.5
DELTA = shift_for_target_nte(EPS, d=2, bandwidth=BW)  # Gaussian location pairs with N-TE exactly 0.3


def boundary_pairs(m: int, seed) -> tuple[np.ndarray, np.ndarray]:
    return gaussian_pair_sample(m, DELTA, d=2, seed=seed)


def test_the_statistic_converges_to_the_exact_kernel_nte_like_one_over_root_d():
    y, y_cf = boundary_pairs(300, 1)
    exact = cfclot_test(y, y_cf, EPS, bandwidth=BW, method="normal")
    grid = (16, 64, 256, 1024, 4096)
    res = {d: cfclot_rff_test(y, y_cf, EPS, n_features=d, bandwidth=BW, seed=5) for d in grid}
    for d, r in res.items():
        # sqrt(D) (T_D - T) has a standard deviation near 0.3 here (sigma_features): 1.5 is five of them
        assert abs(r.statistic - exact.statistic) <= 1.5 / np.sqrt(d), d
        assert abs(r.mte - exact.mte) <= 5.0 / np.sqrt(d) and abs(
            r.mean_d - (exact.mte / exact.statistic)
        ) <= 5.0 / np.sqrt(d)
        assert 0.15 < r.sigma_features < 0.5
    assert abs(res[4096].statistic - exact.statistic) < 0.02
    # the units' part tends to the exact delta-method sigma (plug-in, so a little larger)
    assert res[4096].sigma == pytest.approx(exact.sigma, rel=0.06)
    # the error shrinks like 1 / sqrt(D): over 20 feature seeds its root mean square is sigma_features / sqrt(D)
    for d in (64, 1024):
        runs = [cfclot_rff_test(y, y_cf, EPS, n_features=d, bandwidth=BW, seed=s) for s in range(20)]
        rms = np.sqrt(np.mean([(r.statistic - exact.statistic) ** 2 for r in runs]))
        predicted = np.mean([r.sigma_features for r in runs]) / np.sqrt(d)
        assert 0.5 < rms / predicted < 1.6, (d, rms, predicted)


def _split(n: int, parts: int, rng: np.random.Generator) -> list[slice]:
    cuts = np.sort(rng.choice(np.arange(0, n + 1), size=parts - 1, replace=True))  # empty parts allowed
    edges = [0, *cuts.tolist(), n]
    return [slice(a, b) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _tree(parts: list) -> object:
    while len(parts) > 1:
        parts = [combine_rff_sums(*parts[i : i + 3]) for i in range(0, len(parts), 3)]
    return parts[0]


def test_sums_split_into_any_chunks_give_identical_results():
    rng = np.random.default_rng(3)
    y, y_cf = boundary_pairs(1500, 2)
    fmap = rff_map(2, n_features=64, bandwidth=BW, seed=9)
    whole = rff_pair_sums(y, y_cf, fmap)
    rows_whole = rff_row_sums(y, y_cf, fmap, whole, EPS)
    ref = cfclot_rff_finish(whole, rows_whole, fmap)
    # the in-memory test (one block, features computed once) and its chunked form are the same numbers
    mem = cfclot_rff_test(y, y_cf, EPS, n_features=64, bandwidth=BW, seed=9)
    chunked = cfclot_rff_test(y, y_cf, EPS, n_features=64, bandwidth=BW, seed=9, chunk_rows=77)
    for r in (mem, chunked):
        assert (r.statistic, r.pvalue, r.std_error, r.sigma) == (ref.statistic, ref.pvalue, ref.std_error, ref.sigma)
    for parts in (2, 3, 7, 50):
        pieces = _split(len(y), parts, rng)
        order = rng.permutation(parts)
        pair = [rff_pair_sums(y[pieces[i]], y_cf[pieces[i]], fmap, chunk_rows=int(rng.integers(1, 300))) for i in order]
        total = _tree(pair)
        assert total.n == whole.n and np.array_equal(total.sums, whole.sums)  # the integers, exactly
        rows = _tree([rff_row_sums(y[pieces[i]], y_cf[pieces[i]], fmap, total, EPS) for i in order])
        assert np.array_equal(rows.sums, rows_whole.sums)
        got = cfclot_rff_finish(total, rows, fmap)
        np.testing.assert_allclose(
            [got.statistic, got.pvalue, got.std_error, got.sigma, got.sigma_features, got.mte],
            [ref.statistic, ref.pvalue, ref.std_error, ref.sigma, ref.sigma_features, ref.mte],
            rtol=0,
            atol=1e-9,
        )
    # not vacuous: other features give other numbers
    other = cfclot_rff_test(y, y_cf, EPS, n_features=64, bandwidth=BW, seed=10)
    assert abs(other.statistic - ref.statistic) > 1e-6


def test_level_at_the_null_boundary_within_a_binomial_interval():
    """Fresh data and features per replication at N-TE = epsilon: rejections at rate alpha; without the features'
    part of the variance the threshold rejects far too often once the units outnumber the features."""
    reps = 300
    rejected = 0
    for r in range(reps):
        rng = np.random.default_rng([11, r])
        y, y_cf = boundary_pairs(200, rng)
        rejected += cfclot_rff_test(y, y_cf, EPS, n_features=128, bandwidth=BW, seed=rng).rejected
    iv = binomial_interval(rejected, reps, level=0.99)
    assert iv.low <= 0.05 <= iv.high, (rejected, iv)
    full = units_only = 0
    reps_big = 100
    for r in range(reps_big):
        rng = np.random.default_rng([12, r])
        y, y_cf = boundary_pairs(2000, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cflib.CflibWarning)  # 16 features: below MIN_FEATURES, on purpose
            res = cfclot_rff_test(y, y_cf, EPS, n_features=16, bandwidth=BW, seed=rng)
        full += res.rejected
        units_only += res.statistic > EPS + 1.645 * res.sigma / np.sqrt(res.m)
    assert (
        binomial_interval(full, reps_big, level=0.99).low <= 0.05 <= binomial_interval(full, reps_big, level=0.99).high
    )
    assert binomial_interval(units_only, reps_big, level=0.99).low > 0.2, units_only


def test_the_result_decides_summarises_and_draws():
    y, y_cf = boundary_pairs(400, 4)
    y_cf = y_cf + np.array([0.8, 0.0])  # well past the boundary
    res = cfclot_rff_test(y, y_cf, EPS, n_features=64, seed=0)
    assert isinstance(res, CFCLOTRFFResult) and isinstance(res, BaseTestResult)
    assert res.rejected and res.pvalue < 0.05 and res.reject() is res.rejected
    assert res.reject(0.05) == (res.pvalue <= 0.05) and res.threshold == pytest.approx(EPS + 1.6448536 * res.std_error)
    assert res.std_error == pytest.approx(np.sqrt(res.sigma**2 / res.m + res.sigma_features**2 / res.n_features))
    row = res.summary().iloc[0]
    assert row["N-TE"] == res.statistic and row["n_features"] == 64 and "warning" not in res.summary().columns
    ax = res.plot()
    assert ax.get_xlabel().startswith("N-TE")
    with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
        res.plot(ax="left")
    close = cfclot_rff_test(y, y, EPS, n_features=64, seed=0)  # identical outputs: N-TE 0, far below epsilon
    assert close.statistic == 0.0 and close.pvalue > 0.99 and not close.rejected


def test_small_samples_and_few_features_warn_and_bad_input_is_refused():
    y, y_cf = boundary_pairs(20, 5)
    with pytest.warns(cflib.CflibWarning, match="30 pairs"):
        res = cfclot_rff_test(y, y_cf, EPS, n_features=64, seed=0)
    assert res.warnings and res.summary()["warning"].iloc[0] == "; ".join(res.warnings)
    y, y_cf = boundary_pairs(100, 5)
    with pytest.warns(cflib.CflibWarning, match="n_features=8"):
        cfclot_rff_test(y, y_cf, EPS, n_features=8, seed=0)
    with pytest.raises(ValueError, match="epsilon"):
        cfclot_rff_test(y, y_cf, 0.0)
    fmap = rff_map(2, n_features=16, seed=0)
    with pytest.raises(ValueError, match="columns"):
        rff_pair_sums(y[:, :1], y_cf[:, :1], fmap)
    part = rff_pair_sums(y, y_cf, fmap)
    with pytest.raises(ValueError, match="same pairs"):
        cfclot_rff_finish(part, rff_row_sums(y[:50], y_cf[:50], fmap, part, EPS), fmap)
    with pytest.raises(TypeError, match="one kind"):
        combine_rff_sums(part, rff_row_sums(y, y_cf, fmap, part, EPS))
    # an empty partition adds nothing
    empty = rff_pair_sums(np.zeros((0, 2)), np.zeros((0, 2)), fmap)
    assert isinstance(empty, RFFPairSums) and empty.n == 0
    assert np.array_equal(combine_rff_sums(part, empty).sums, part.sums)
    assert isinstance(rff_row_sums(np.zeros((0, 2)), np.zeros((0, 2)), fmap, part, EPS), RFFRowSums)
