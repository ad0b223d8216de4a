"""Bad input to :mod:`cflib.stats` gets one clear line: a table of malformed calls over the whole stats API.

Each row is a call, the error (or :class:`cflib.CflibWarning`) it must raise, and the names its message
must contain. Every call runs in an empty working folder that must still be empty afterwards, and the
error must be raised by cflib's own code (never from inside numpy, scipy or torch). Rows cover, for
each public function of ``cflib.stats.__all__``: empty, NaN/inf, mis-shaped (transposed, 1-d vs 2-d,
mismatched features or lengths), wrong-typed, out-of-range and too-small input.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

import cflib
from cflib import stats
from cflib.stats import kernels as ker
from cflib.stats import mmd as mmd_mod

from .validation_table import Case, case, one_clear_line

# ---------------------------------------------------------------------------- small inputs
RNG = np.random.default_rng(0)
X = RNG.normal(size=(40, 2))
Y = RNG.normal(0.3, 1.0, size=(40, 2))
Y1, YCF1 = RNG.normal(size=40), RNG.normal(0.2, 1.0, size=40)
K = stats.GaussianKernel(1.0)
ZT = ker.to_tensor(np.vstack([X, Y]))
XT, YT = ker.to_tensor(X), ker.to_tensor(Y)
H = mmd_mod.paired_h_matrix(X, Y, K)[0]
GEN = np.random.default_rng(1)
EMPTY = np.empty((0, 2))
WITH_NAN = X.copy()
WITH_NAN[3, 1] = np.nan
WITH_INF = X.copy()
WITH_INF[5, 0] = np.inf
STRINGS = ["a", "b", "c", "d"]
V = torch.ones((80, 3), dtype=torch.float64)
FMAP = stats.rff_map(2, n_features=16, seed=0)
PAIR_SUMS = stats.rff_pair_sums(X, Y, FMAP)
ROW_SUMS = stats.rff_row_sums(X, Y, FMAP, PAIR_SUMS, 0.1)

N = 60
A = np.repeat([0, 1], N // 2)
ZC = RNG.normal(size=(N, 2))
YHAT = (ZC[:, 0] + RNG.normal(size=N) > 0).astype(float)
YTRUE = (ZC[:, 0] > 0).astype(float)
G_EST, H_EST = RNG.uniform(size=N), RNG.uniform(size=N)
CF = np.stack([YHAT, YHAT], axis=1)
P_NAN = np.r_[0.5, np.nan, 0.2]
POWER = pd.DataFrame(
    {"n": [100], "test": ["t"], "rejection_rate": [0.5], "se": [0.1], "seconds_per_test": [0.1], "shift": [0.3]}
)


def _rows(i0: int, i1: int, out):
    return out.fill_(0.0)


def _gen(z, a, rng):
    return np.asarray(z)


def _predict_wrong(x):
    return np.zeros(3)


# ---------------------------------------------------------------------------- the table


W = cflib.CflibWarning

CASES: list[Case] = [
    # --- kernels: as_2d, to_tensor, median_bandwidth, Kernel, make_kernel, GaussianKernel, LaplaceKernel
    case("wilson_interval-k-above-n", ValueError, "k", lambda: stats.wilson_interval(11, 10)),
    case("wilson_interval-level", ValueError, "level", lambda: stats.wilson_interval(3, 10, level=1.5)),
    case("newcombe_difference-k-above-n", ValueError, "k1", lambda: stats.newcombe_difference(1, 10, 12, 10)),
    case("newcombe_interval-k-above-n", ValueError, "k2", lambda: stats.newcombe_interval(1, 10, 12, 10)),
    case("newcombe_test-not-counts", TypeError, "k1", lambda: stats.newcombe_test(0.5, 10, 2, 10)),
    case("clopper_pearson_interval-n", ValueError, "n", lambda: stats.clopper_pearson_interval(0, -2)),
    case(
        "welch_difference-level", ValueError, "level", lambda: stats.welch_difference([0.0, 1.0], [1.0, 2.0], level=2)
    ),
    case("group_rates-length", ValueError, "decision", lambda: stats.group_rates([0, 1], [0, 1, 1])),
    case("group_rates-coding", ValueError, "decision", lambda: stats.group_rates([0, 1, 0], [0, 2, 1])),
    case("rate_row-level", ValueError, "level", lambda: stats.rate_row(3, {"base_rate": (1, 3)}, 1.5, "")),
    case("rate_row-k-above-n", ValueError, "k", lambda: stats.rate_row(3, {"base_rate": (4, 3)}, 0.95, "")),
    case("as_2d-none", TypeError, "x", lambda: stats.as_2d(None)),
    case("as_2d-string", TypeError, "x", lambda: stats.as_2d("abc")),
    case("as_2d-list-of-strings", TypeError, ("x", "numeric"), lambda: stats.as_2d(STRINGS)),
    case("as_2d-numeric-strings", TypeError, ("x", "numeric"), lambda: stats.as_2d(["1", "2", "3"])),
    case("as_2d-ragged", TypeError, ("x", "rectangular"), lambda: stats.as_2d([[1, 2], [3]])),
    case("as_2d-empty", ValueError, ("x", "at least 2"), lambda: stats.as_2d([])),
    case("as_2d-no-features", ValueError, ("x", "feature"), lambda: stats.as_2d(np.zeros((5, 0)))),
    case("as_2d-3d", ValueError, ("x", "shape"), lambda: stats.as_2d(np.zeros((4, 2, 2)))),
    case("as_2d-scalar", ValueError, ("x", "shape"), lambda: stats.as_2d(3.0)),
    case("as_2d-nan", ValueError, ("x", "NaN"), lambda: stats.as_2d(WITH_NAN)),
    case("as_2d-inf", ValueError, ("x", "infinite"), lambda: stats.as_2d(WITH_INF)),
    case("as_2d-complex", TypeError, ("x", "numeric"), lambda: stats.as_2d(np.ones(4) * 1j)),
    case("to_tensor-list", TypeError, ("x", "as_2d"), lambda: stats.to_tensor([1.0, 2.0])),
    case("to_tensor-strings", TypeError, "x", lambda: stats.to_tensor(np.array(STRINGS))),
    case("median_bandwidth-none", ValueError, ("median_bandwidth", "sample"), lambda: stats.median_bandwidth()),
    case("median_bandwidth-empty", ValueError, "samples[0]", lambda: stats.median_bandwidth(EMPTY)),
    case("median_bandwidth-nan", ValueError, ("samples[1]", "NaN"), lambda: stats.median_bandwidth(X, WITH_NAN)),
    case("median_bandwidth-features", ValueError, "columns", lambda: stats.median_bandwidth(X, np.ones((5, 3)))),
    case("median_bandwidth-kernel", ValueError, "kernel", lambda: stats.median_bandwidth(X, kernel="cosine")),
    case("median_bandwidth-max_n", ValueError, "max_n", lambda: stats.median_bandwidth(X, max_n=-1)),
    case("median_bandwidth-max_n-bool", TypeError, "max_n", lambda: stats.median_bandwidth(X, max_n=True)),
    case("Kernel-name-type", TypeError, "kernel", lambda: stats.Kernel(3)),
    case("Kernel-name", ValueError, "kernel", lambda: stats.Kernel("cosine")),
    case("Kernel-bandwidth-zero", ValueError, "bandwidth", lambda: stats.Kernel("gaussian", 0.0)),
    case("Kernel-bandwidth-nan", ValueError, "bandwidth", lambda: stats.Kernel("gaussian", np.nan)),
    case("Kernel-bandwidth-none", TypeError, "bandwidth", lambda: stats.Kernel("gaussian", None)),
    case("GaussianKernel-negative", ValueError, "bandwidth", lambda: stats.GaussianKernel(-1.0)),
    case("LaplaceKernel-string", ValueError, "bandwidth", lambda: stats.LaplaceKernel("mean")),
    case("make_kernel-type", TypeError, "kernel", lambda: stats.make_kernel(None)),
    case("gram-unfitted", ValueError, ("bandwidth", "fit"), lambda: stats.GaussianKernel().gram(X)),
    case("gram-chunk-negative", ValueError, "chunk_size", lambda: K.gram(X, chunk_size=-5)),
    case("gram-chunk-float", TypeError, "chunk_size", lambda: K.gram(X, chunk_size=2.5)),
    case("gram-features", ValueError, ("x", "y"), lambda: K.gram(X, np.ones((4, 3)))),
    case("gram-nan", ValueError, ("y", "NaN"), lambda: K.gram(X, WITH_NAN)),
    case("value_at-negative", ValueError, "distance", lambda: K.value_at(-1.0)),
    case("value_at-string", TypeError, "distance", lambda: K.value_at("1")),
    case("fit-empty", ValueError, "samples[0]", lambda: stats.GaussianKernel().fit(EMPTY)),
    # --- engine
    case("default_chunk-negative", ValueError, "n_rows", lambda: stats.default_chunk(-3)),
    case("default_chunk-float", TypeError, "n_rows", lambda: stats.default_chunk(10.0)),
    case("default_chunk-budget", ValueError, "budget_bytes", lambda: stats.default_chunk(10, budget_bytes=0)),
    case("check_precision", ValueError, "precision", lambda: stats.check_precision("half")),
    case("check_precision-list", ValueError, "precision", lambda: stats.check_precision(["mixed"])),
    case("quadratic_forms-rows", TypeError, "rows", lambda: stats.quadratic_forms(np.eye(3), 3, None)),
    case("quadratic_forms-n_rows", ValueError, "n_rows", lambda: stats.quadratic_forms(_rows, 0, None)),
    case("quadratic_forms-n_rows-bool", TypeError, "n_rows", lambda: stats.quadratic_forms(_rows, True, None)),
    case(
        "quadratic_forms-v-transposed",
        ValueError,
        ("v", "transpose"),
        lambda: stats.quadratic_forms(_rows, 80, V.T.contiguous()),
    ),
    case(
        "quadratic_forms-v-numpy", TypeError, ("v", "torch"), lambda: stats.quadratic_forms(_rows, 80, np.ones((80, 3)))
    ),
    case(
        "quadratic_forms-exact-1d", ValueError, "exact", lambda: stats.quadratic_forms(_rows, 80, None, exact=V[:, 0])
    ),
    case("quadratic_forms-chunk", ValueError, "chunk", lambda: stats.quadratic_forms(_rows, 80, V, chunk=-1)),
    case(
        "quadratic_forms-precision",
        ValueError,
        "precision",
        lambda: stats.quadratic_forms(_rows, 80, V, precision="f16"),
    ),
    case("rounding_bound-dtype", ValueError, "dtype", lambda: stats.rounding_bound(np.ones(3), 10, "float16")),
    case("rounding_bound-negative", ValueError, "abs_q", lambda: stats.rounding_bound(-np.ones(3), 10, "float32")),
    case("rounding_bound-nan", ValueError, "abs_q", lambda: stats.rounding_bound(np.r_[1.0, np.nan], 10, "float32")),
    case("rounding_bound-strings", TypeError, "abs_q", lambda: stats.rounding_bound(np.array(STRINGS), 10, "float32")),
    case("rounding_bound-n_rows", ValueError, "n_rows", lambda: stats.rounding_bound(np.ones(3), -10, "float32")),
    case(
        "settle-lengths",
        ValueError,
        ("values", "bound"),
        lambda: stats.settle_near_ties(np.ones(3), np.ones(2), 0.5, lambda i: i),
    ),
    case(
        "settle-nan",
        ValueError,
        ("values", "NaN"),
        lambda: stats.settle_near_ties(np.r_[1.0, np.nan], np.ones(2), 0.5, lambda i: i),
    ),
    case(
        "settle-2d", ValueError, "values", lambda: stats.settle_near_ties(np.ones((2, 2)), np.ones(2), 0.5, lambda i: i)
    ),
    case(
        "settle-threshold",
        TypeError,
        "threshold",
        lambda: stats.settle_near_ties(np.ones(2), np.ones(2), "0.5", lambda i: i),
    ),
    case(
        "settle-threshold-inf",
        ValueError,
        "threshold",
        lambda: stats.settle_near_ties(np.ones(2), np.ones(2), np.inf, lambda i: i),
    ),
    case("settle-recompute", TypeError, "recompute", lambda: stats.settle_near_ties(np.ones(2), np.ones(2), 0.5, None)),
    # --- mmd
    case("mmd2-empty", ValueError, ("x", "at least 2"), lambda: stats.mmd2(EMPTY, Y)),
    case("mmd2-nan", ValueError, ("y", "NaN"), lambda: stats.mmd2(X, WITH_NAN)),
    case("mmd2-transposed", ValueError, ("y", "transpose y (y.T)"), lambda: stats.mmd2(X, Y.T)),
    case("mmd2-features", ValueError, ("x", "y", "columns"), lambda: stats.mmd2(X, np.ones((10, 3)))),
    case("mmd2-string", TypeError, "y", lambda: stats.mmd2(X, "y")),
    case("mmd2-estimator", ValueError, "estimator", lambda: stats.mmd2(X, Y, estimator="quadratic")),
    case("mmd2-paired-lengths", ValueError, ("x", "y", "rows"), lambda: stats.mmd2(X, Y[:30], estimator="paired")),
    case("mmd2-bandwidth", ValueError, "bandwidth", lambda: stats.mmd2(X, Y, bandwidth=-1.0)),
    case("mmd_test-empty", ValueError, ("y", "at least 2"), lambda: stats.mmd_test(X, EMPTY)),
    case("mmd_test-inf", ValueError, ("x", "infinite"), lambda: stats.mmd_test(WITH_INF, Y)),
    case("mmd_test-transposed-paired", ValueError, ("y", "transpose"), lambda: stats.mmd_test(X, Y.T, paired=True)),
    case("mmd_test-1d-vs-2d", ValueError, ("x", "y", "columns"), lambda: stats.mmd_test(Y1, Y)),
    case("mmd_test-list-of-strings", TypeError, ("x", "numeric"), lambda: stats.mmd_test(STRINGS, STRINGS)),
    case(
        "mmd_test-n_permutations-negative",
        ValueError,
        "n_permutations",
        lambda: stats.mmd_test(X, Y, n_permutations=-5),
    ),
    case(
        "mmd_test-n_permutations-bool", TypeError, "n_permutations", lambda: stats.mmd_test(X, Y, n_permutations=True)
    ),
    case(
        "mmd_test-n_permutations-float", TypeError, "n_permutations", lambda: stats.mmd_test(X, Y, n_permutations=99.0)
    ),
    case("mmd_test-batch", ValueError, "batch", lambda: stats.mmd_test(X, Y, batch=0)),
    case("mmd_test-chunk", ValueError, "chunk", lambda: stats.mmd_test(X, Y, chunk=-2)),
    case("mmd_test-paired-type", TypeError, "paired", lambda: stats.mmd_test(X, Y, paired="yes")),
    case("mmd_test-estimator", ValueError, "estimator", lambda: stats.mmd_test(X, Y, estimator="linear")),
    case("mmd_test-seed", ValueError, "seed", lambda: stats.mmd_test(X, Y, seed=-1)),
    case(
        "mmd_test-few-permutations", W, ("n_permutations", "19"), lambda: stats.mmd_test(X, Y, n_permutations=9, seed=0)
    ),
    case(
        "mmd_test-few-pairs",
        W,
        ("m=4 pairs", "distinct"),
        lambda: stats.mmd_test(X[:4], Y[:4], paired=True, n_permutations=99, seed=0),
    ),
    case("mmd_test-few-units", W, ("n=3", "distinct"), lambda: stats.mmd_test(X[:3], Y[:3], n_permutations=99, seed=0)),
    case("paired_h_matrix-kernel", TypeError, "kernel", lambda: stats.paired_h_matrix(X, Y, "gaussian")),
    case(
        "paired_h_matrix-unfitted",
        ValueError,
        ("kernel", "fit"),
        lambda: stats.paired_h_matrix(X, Y, stats.GaussianKernel()),
    ),
    case("paired_h_matrix-shape", ValueError, ("x", "y", "shape"), lambda: stats.paired_h_matrix(X, Y[:10], K)),
    case("paired_h_matrix-nan", ValueError, ("x", "NaN"), lambda: stats.paired_h_matrix(WITH_NAN, Y, K)),
    case("kernel_rows-numpy", TypeError, ("z", "torch"), lambda: stats.kernel_rows(K, X)),
    case("kernel_rows-1d", ValueError, "z", lambda: stats.kernel_rows(K, XT[:, 0])),
    case("paired_rows-shape", ValueError, ("y", "shape"), lambda: stats.paired_rows(K, XT, YT[:5])),
    case("signflip_null-draws", ValueError, "n_draws", lambda: stats.signflip_null(H, -1, GEN)),
    case("signflip_null-rng", TypeError, "rng", lambda: stats.signflip_null(H, 10, 0)),
    case("signflip_null-nonsquare", ValueError, "h", lambda: stats.signflip_null(H[:5], 10, GEN)),
    case("signflip_null-callable-n_rows", ValueError, "n_rows", lambda: stats.signflip_null(_rows, 10, GEN)),
    case("signflip_null-batch", TypeError, "batch", lambda: stats.signflip_null(H, 10, GEN, batch=False)),
    case("permutation_null-n", ValueError, "n", lambda: stats.permutation_null(K, ZT, 79, 10, GEN)),
    case("permutation_null-n-negative", ValueError, "n", lambda: stats.permutation_null(K, ZT, -4, 10, GEN)),
    case(
        "permutation_null-permutations", ValueError, "n_permutations", lambda: stats.permutation_null(K, ZT, 40, 0, GEN)
    ),
    case(
        "permutation_null-estimator",
        ValueError,
        "estimator",
        lambda: stats.permutation_null(K, ZT, 40, 10, GEN, estimator="linear"),
    ),
    case("permutation_null-z", TypeError, "z", lambda: stats.permutation_null(K, None, 40, 10, GEN)),
    # --- linear-time MMD
    case("linear_mmd_test-too-small", ValueError, "at least 4 rows", lambda: stats.linear_mmd_test(X[:3], Y[:3])),
    case("linear_mmd_test-nan", ValueError, ("x", "NaN"), lambda: stats.linear_mmd_test(WITH_NAN, Y)),
    case("linear_mmd_test-transposed", ValueError, ("y", "transpose"), lambda: stats.linear_mmd_test(X, Y.T)),
    case("linear_mmd_test-none", TypeError, "y", lambda: stats.linear_mmd_test(X, None)),
    case("linear_mmd_test-empty", ValueError, "x", lambda: stats.linear_mmd_test([], Y)),
    case("block_mmd_test-block", ValueError, "block_size", lambda: stats.block_mmd_test(X, Y, block_size=1)),
    case("block_mmd_test-block-float", TypeError, "block_size", lambda: stats.block_mmd_test(X, Y, block_size=8.0)),
    case("block_mmd_test-two-blocks", ValueError, "block_size", lambda: stats.block_mmd_test(X, Y, block_size=32)),
    case("block_mmd_test-inf", ValueError, ("y", "infinite"), lambda: stats.block_mmd_test(X, WITH_INF)),
    case("rff_features-bandwidth", ValueError, "bandwidth", lambda: stats.rff_features(X, 0.0, 8)),
    case("rff_features-bandwidth-string", TypeError, "bandwidth", lambda: stats.rff_features(X, "1", 8)),
    case("rff_features-n_features", ValueError, "n_features", lambda: stats.rff_features(X, 1.0, -8)),
    case("rff_features-empty", ValueError, "x", lambda: stats.rff_features(EMPTY, 1.0, 8)),
    case(
        "rff_mmd_test-n_permutations", ValueError, "n_permutations", lambda: stats.rff_mmd_test(X, Y, n_permutations=-1)
    ),
    case("rff_mmd_test-n_features-bool", TypeError, "n_features", lambda: stats.rff_mmd_test(X, Y, n_features=True)),
    case("rff_mmd_test-features", ValueError, "columns", lambda: stats.rff_mmd_test(X, np.ones((10, 3)))),
    case(
        "rff_mmd_test-few-permutations", W, "n_permutations", lambda: stats.rff_mmd_test(X, Y, n_permutations=5, seed=0)
    ),
    # --- closeness_rff: CF-CLOT with random Fourier features and its distributed pieces
    case("cfclot_rff_test-epsilon-zero", ValueError, "epsilon", lambda: stats.cfclot_rff_test(Y1, YCF1, 0.0)),
    case("cfclot_rff_test-epsilon-string", TypeError, "epsilon", lambda: stats.cfclot_rff_test(Y1, YCF1, "0.1")),
    case("cfclot_rff_test-lengths", ValueError, ("y", "y_cf"), lambda: stats.cfclot_rff_test(Y1, YCF1[:30], 0.1)),
    case("cfclot_rff_test-nan", ValueError, ("y", "NaN"), lambda: stats.cfclot_rff_test(WITH_NAN, Y, 0.1)),
    case(
        "cfclot_rff_test-n_features", ValueError, "n_features", lambda: stats.cfclot_rff_test(X, Y, 0.1, n_features=1)
    ),
    case("cfclot_rff_test-alpha", ValueError, "alpha", lambda: stats.cfclot_rff_test(X, Y, 0.1, alpha=1.5)),
    case("cfclot_rff_test-few-pairs", W, "30 pairs", lambda: stats.cfclot_rff_test(X[:10], Y[:10], 0.1, seed=0)),
    case("rff_map-bandwidth", ValueError, "bandwidth", lambda: stats.rff_map(2, bandwidth=0.0)),
    case("rff_map-dim", TypeError, "dim", lambda: stats.rff_map(2.5)),
    case("rff_pair_sums-fmap", TypeError, "fmap", lambda: stats.rff_pair_sums(X, Y, "features")),
    case("rff_pair_sums-columns", ValueError, "columns", lambda: stats.rff_pair_sums(X[:, :1], Y[:, :1], FMAP)),
    case("rff_pair_sums-inf", ValueError, ("y_cf", "infinite"), lambda: stats.rff_pair_sums(X, WITH_INF, FMAP)),
    case("rff_row_sums-pair_sums", ValueError, "pair_sums", lambda: stats.rff_row_sums(X, Y, FMAP, None, 0.1)),
    case("rff_row_sums-epsilon", ValueError, "epsilon", lambda: stats.rff_row_sums(X, Y, FMAP, PAIR_SUMS, 1.0)),
    case("combine_rff_sums-none", TypeError, "combine_rff_sums", lambda: stats.combine_rff_sums()),
    case("combine_rff_sums-mixed", TypeError, "one kind", lambda: stats.combine_rff_sums(PAIR_SUMS, ROW_SUMS)),
    case(
        "cfclot_rff_finish-types", TypeError, "RFFRowSums", lambda: stats.cfclot_rff_finish(PAIR_SUMS, PAIR_SUMS, FMAP)
    ),
    case(
        "cfclot_rff_finish-other-pairs",
        ValueError,
        "same pairs",
        lambda: stats.cfclot_rff_finish(PAIR_SUMS, stats.rff_row_sums(X[:5], Y[:5], FMAP, PAIR_SUMS, 0.1), FMAP),
    ),
    case(
        "cfclot_rff_finish-fmap",
        ValueError,
        "fmap",
        lambda: stats.cfclot_rff_finish(PAIR_SUMS, ROW_SUMS, stats.rff_map(2, n_features=8)),
    ),
    case("linear_power_study-n_grid", ValueError, "n_grid", lambda: stats.linear_power_study((100, -5))),
    case("linear_power_study-n_grid-string", TypeError, "n_grid", lambda: stats.linear_power_study("100")),
    case("linear_power_study-n_grid-empty", ValueError, "n_grid", lambda: stats.linear_power_study(())),
    case("linear_power_study-blocks", ValueError, ("n_grid", "block_size"), lambda: stats.linear_power_study((40,))),
    case("linear_power_study-alpha", ValueError, "alpha", lambda: stats.linear_power_study((100,), alpha=1.5)),
    case("linear_power_study-n_reps", ValueError, "n_reps", lambda: stats.linear_power_study((100,), n_reps=0)),
    case("linear_power_study-shift", ValueError, "shift", lambda: stats.linear_power_study((100,), np.nan)),
    case(
        "plot_linear_power-columns",
        ValueError,
        ("power", "rejection_rate"),
        lambda: stats.plot_linear_power(POWER.drop(columns="rejection_rate")),
    ),
    case("plot_linear_power-type", TypeError, "power", lambda: stats.plot_linear_power({"n": [1]})),
    case("plot_linear_power-axes", TypeError, "axes[0]", lambda: stats.plot_linear_power(POWER, axes=[1, 2])),
    case("plot_linear_power-axes-one", TypeError, "axes", lambda: stats.plot_linear_power(POWER, axes="ax")),
    # --- closeness
    case("cfclot_test-empty", ValueError, ("y", "at least 2"), lambda: stats.cfclot_test([], [], 0.1)),
    case("cfclot_test-nan", ValueError, ("y_cf", "NaN"), lambda: stats.cfclot_test(Y1, np.r_[np.nan, YCF1[1:]], 0.1)),
    case(
        "cfclot_test-transposed",
        ValueError,
        ("y_cf", "transpose y_cf (y_cf.T)"),
        lambda: stats.cfclot_test(X, Y.T, 0.1),
    ),
    case(
        "cfclot_test-row-vector",
        ValueError,
        ("y_cf", "transpose it (y_cf.T)"),
        lambda: stats.cfclot_test(Y1, Y1[None, :], 0.1),
    ),
    case("cfclot_test-lengths", ValueError, ("y", "y_cf", "rows"), lambda: stats.cfclot_test(Y1, YCF1[:30], 0.1)),
    case("cfclot_test-1d-vs-2d", ValueError, ("y", "y_cf", "columns"), lambda: stats.cfclot_test(Y1, X, 0.1)),
    case("cfclot_test-epsilon-string", TypeError, "epsilon", lambda: stats.cfclot_test(Y1, YCF1, "0.1")),
    case("cfclot_test-epsilon-negative", ValueError, "epsilon", lambda: stats.cfclot_test(Y1, YCF1, -0.1)),
    case("cfclot_test-alpha", ValueError, "alpha", lambda: stats.cfclot_test(Y1, YCF1, 0.1, alpha=0.0)),
    case("cfclot_test-alpha-string", TypeError, "alpha", lambda: stats.cfclot_test(Y1, YCF1, 0.1, alpha="0.05")),
    case("cfclot_test-n_boot", ValueError, "n_boot", lambda: stats.cfclot_test(Y1, YCF1, 0.0, n_boot=-10)),
    case("cfclot_test-max_dense", TypeError, "max_dense", lambda: stats.cfclot_test(Y1, YCF1, 0.0, max_dense=None)),
    case("cfclot_test-method", ValueError, "method", lambda: stats.cfclot_test(Y1, YCF1, 0.1, method="exact")),
    case(
        "cfclot_test-variance-list",
        ValueError,
        "variance",
        lambda: stats.cfclot_test(Y1, YCF1, 0.1, variance=["delta"]),
    ),
    case("cfclot_test-few-pairs-normal", W, ("30 pairs", "m=10"), lambda: stats.cfclot_test(Y1[:10], YCF1[:10], 0.1)),
    case("cfclot_test-few-boot", W, ("n_boot", "19"), lambda: stats.cfclot_test(Y1, YCF1, 0.0, n_boot=9, seed=0)),
    case(
        "cfclot_test-few-pairs-signflip",
        W,
        ("m=4 pairs", "distinct"),
        lambda: stats.cfclot_test(Y1[:4], YCF1[:4], 0.0, n_boot=99, seed=0),
    ),
    case(
        "cfclot_statistics-transposed",
        ValueError,
        ("y", "transpose y (y.T)"),
        lambda: stats.cfclot_statistics(X.T, Y, 0.1),
    ),
    case("cfclot_statistics-none", TypeError, "y_cf", lambda: stats.cfclot_statistics(Y1, None)),
    case("cfclot_statistics-epsilon", ValueError, "epsilon", lambda: stats.cfclot_statistics(Y1, YCF1, 1.0)),
    case(
        "cfclot_statistics_batch-shape",
        ValueError,
        ("y", "y_cf", "shape"),
        lambda: stats.cfclot_statistics_batch(np.zeros((3, 10)), np.zeros((3, 9)), 0.1),
    ),
    case(
        "cfclot_statistics_batch-1d", ValueError, ("y", "(R, m)"), lambda: stats.cfclot_statistics_batch(Y1, YCF1, 0.1)
    ),
    case(
        "cfclot_statistics_batch-strings",
        TypeError,
        "y",
        lambda: stats.cfclot_statistics_batch(np.array([STRINGS]), np.array([STRINGS]), 0.1),
    ),
    case(
        "cfclot_statistics_batch-nan",
        ValueError,
        ("y_cf", "NaN"),
        lambda: stats.cfclot_statistics_batch(np.zeros((2, 8)), np.full((2, 8), np.nan), 0.1),
    ),
    case(
        "cfclot_statistics_batch-empty",
        ValueError,
        "replication",
        lambda: stats.cfclot_statistics_batch(np.zeros((0, 8)), np.zeros((0, 8)), 0.1),
    ),
    case(
        "cfclot_statistics_batch-small",
        ValueError,
        "m >= 4",
        lambda: stats.cfclot_statistics_batch(np.zeros((2, 3)), np.zeros((2, 3)), 0.1),
    ),
    case(
        "cfclot_statistics_batch-chunk",
        ValueError,
        "chunk",
        lambda: stats.cfclot_statistics_batch(np.zeros((2, 8)), np.zeros((2, 8)), 0.1, chunk=0),
    ),
    case(
        "cfclot_statistics_batch-median",
        ValueError,
        "bandwidth",
        lambda: stats.cfclot_statistics_batch(np.zeros((2, 8)), np.zeros((2, 8)), 0.1, bandwidth="median"),
    ),
    case("nte-empty", ValueError, "y", lambda: stats.nte([], [])),
    case("nte-lengths", ValueError, ("y", "y_cf"), lambda: stats.nte(Y1, YCF1[:5])),
    case("mte-inf", ValueError, ("y", "infinite"), lambda: stats.mte(np.r_[np.inf, Y1[1:]], YCF1)),
    case("mte-strings", TypeError, "y", lambda: stats.mte(STRINGS, STRINGS)),
    case("nte_gaussian-tau", ValueError, "tau1", lambda: stats.nte_gaussian(0.5, tau1=0.0)),
    case("nte_gaussian-tau-string", TypeError, "tau2", lambda: stats.nte_gaussian(0.5, tau2="1")),
    case("nte_gaussian-delta-nan", ValueError, ("delta", "NaN"), lambda: stats.nte_gaussian([0.5, np.nan])),
    case("nte_gaussian-delta-empty", ValueError, "delta", lambda: stats.nte_gaussian([])),
    case("nte_gaussian-d", ValueError, "d", lambda: stats.nte_gaussian(0.5, d=0)),
    case("nte_sup_gaussian-tau", ValueError, "tau", lambda: stats.nte_sup_gaussian(tau=-1.0)),
    case("nte_sup_gaussian-d", TypeError, "d", lambda: stats.nte_sup_gaussian(d=1.5)),
    case("shift_for_target_nte-epsilon", ValueError, "epsilon", lambda: stats.shift_for_target_nte(1.2)),
    case(
        "shift_for_target_nte-bandwidth", ValueError, "bandwidth", lambda: stats.shift_for_target_nte(0.1, bandwidth=0)
    ),
    case("nte_bernoulli-range", ValueError, "p1", lambda: stats.nte_bernoulli(1.5, 0.5)),
    case("nte_bernoulli-nan", ValueError, ("p2", "NaN"), lambda: stats.nte_bernoulli(0.5, P_NAN)),
    case("nte_bernoulli-string", TypeError, "p1", lambda: stats.nte_bernoulli("0.5", 0.5)),
    case("nte_bernoulli-r", ValueError, "r", lambda: stats.nte_bernoulli(0.5, 0.4, r=1.0)),
    case("gap_for_target_nte-center", ValueError, "center", lambda: stats.gap_for_target_nte(0.1, center=1.0)),
    case("gap_for_target_nte-r", TypeError, "r", lambda: stats.gap_for_target_nte(0.1, r=None)),
    case("gap_for_target_nte-epsilon", ValueError, "epsilon", lambda: stats.gap_for_target_nte(np.inf)),
    case("hoeffding_bound-m", ValueError, "m", lambda: stats.hoeffding_bound(0.1, -4, width=4.0)),
    case("hoeffding_bound-width", ValueError, "width", lambda: stats.hoeffding_bound(0.1, 10, width=0.0)),
    case(
        "hoeffding_bound-t-nan", ValueError, ("t", "NaN"), lambda: stats.hoeffding_bound([0.1, np.nan], 10, width=4.0)
    ),
    case("hoeffding_bound-t-none", TypeError, "t", lambda: stats.hoeffding_bound(None, 10, width=4.0)),
    case("gaussian_pair_sample-m", ValueError, "m", lambda: stats.gaussian_pair_sample(-5, 0.5)),
    case("gaussian_pair_sample-m-small", ValueError, "m", lambda: stats.gaussian_pair_sample(1, 0.5)),
    case("gaussian_pair_sample-n_reps", ValueError, "n_reps", lambda: stats.gaussian_pair_sample(10, 0.5, n_reps=0)),
    case("gaussian_pair_sample-d", TypeError, "d", lambda: stats.gaussian_pair_sample(10, 0.5, d=None)),
    case("gaussian_pair_sample-delta", ValueError, "delta", lambda: stats.gaussian_pair_sample(10, np.nan)),
    case("gaussian_pair_sample-tau", ValueError, "tau1", lambda: stats.gaussian_pair_sample(10, 0.5, tau1=-1.0)),
    case("simulate_cfclot-m", ValueError, "m", lambda: stats.simulate_cfclot(3, 0.1, 0.1)),
    case("simulate_cfclot-true_nte", ValueError, "true_nte", lambda: stats.simulate_cfclot(50, 1.5, 0.1)),
    case("simulate_cfclot-n_reps", ValueError, "n_reps", lambda: stats.simulate_cfclot(50, 0.1, 0.1, n_reps=-1)),
    case("simulate_cfclot-alpha", TypeError, "alpha", lambda: stats.simulate_cfclot(50, 0.1, 0.1, alpha=None)),
    # --- invariance
    case("paired_t_test-empty", ValueError, "d", lambda: stats.paired_t_test([])),
    case("paired_t_test-one", ValueError, ("d", "at least 2"), lambda: stats.paired_t_test([1.0])),
    case("paired_t_test-nan", ValueError, ("d", "NaN"), lambda: stats.paired_t_test([1.0, np.nan, 2.0])),
    case("paired_t_test-2d", ValueError, ("d", "one-dimensional"), lambda: stats.paired_t_test(np.ones((3, 4)))),
    case("paired_t_test-strings", TypeError, ("d", "numeric"), lambda: stats.paired_t_test(STRINGS)),
    case("paired_t_test-none", TypeError, "d", lambda: stats.paired_t_test(None)),
    case("paired_t_test-alternative", ValueError, "alternative", lambda: stats.paired_t_test([1.0, 2.0], "bigger")),
    case("ci_functional-empty", ValueError, "y_hat", lambda: stats.ci_functional([], [], [])),
    case("ci_functional-lengths", ValueError, ("g", "y_hat"), lambda: stats.ci_functional(YHAT, G_EST[:10], H_EST)),
    case(
        "ci_functional-inf",
        ValueError,
        ("h", "infinite"),
        lambda: stats.ci_functional([1.0, 0.0], [0.5, 0.5], [np.inf, 0.0]),
    ),
    case(
        "cit_lr_from_estimates-row",
        ValueError,
        ("y_hat", "ravel"),
        lambda: stats.cit_lr_from_estimates(YHAT[None, :], G_EST, H_EST),
    ),
    case(
        "cit_lr_from_estimates-one",
        ValueError,
        ("y_hat", "at least 2"),
        lambda: stats.cit_lr_from_estimates([1.0], [0.5], [0.5]),
    ),
    case(
        "cit_lr_from_estimates-method",
        TypeError,
        "method",
        lambda: stats.cit_lr_from_estimates(YHAT, G_EST, H_EST, method=3),
    ),
    case(
        "cit_lr_from_estimates-d",
        ValueError,
        ("d", "NaN"),
        lambda: stats.cit_lr_from_estimates(YHAT, G_EST, H_EST, d=np.full(N, np.nan)),
    ),
    case("cit_lr_test-empty", ValueError, ("a", "entries"), lambda: stats.cit_lr_test(YHAT, [], ZC)),
    case("cit_lr_test-z-transposed", ValueError, ("z", "transpose"), lambda: stats.cit_lr_test(YHAT, A, ZC.T)),
    case(
        "cit_lr_test-z-strings",
        TypeError,
        ("z", "numeric"),
        lambda: stats.cit_lr_test(YHAT, A, np.array([STRINGS] * 15).reshape(N, 1)),
    ),
    case(
        "cit_lr_test-z-inf",
        ValueError,
        ("z", "infinite"),
        lambda: stats.cit_lr_test(YHAT, A, np.where(ZC > 2, np.inf, ZC)),
    ),
    case("cit_lr_test-a-none", TypeError, "a", lambda: stats.cit_lr_test(YHAT, None, ZC)),
    case("cit_lr_test-a-nan", ValueError, ("a", "NaN"), lambda: stats.cit_lr_test(YHAT, np.r_[np.nan, A[1:]], ZC)),
    case("cit_lr_test-n_folds", ValueError, "n_folds", lambda: stats.cit_lr_test(YHAT, A, ZC, n_folds=1)),
    case("cit_lr_test-n_folds-bool", TypeError, "n_folds", lambda: stats.cit_lr_test(YHAT, A, ZC, n_folds=True)),
    case(
        "cit_lr_test-too-small",
        ValueError,
        ("units", "n_folds"),
        lambda: stats.cit_lr_test(YHAT[:6], A[[0, 1, 2, 30, 31, 32]], ZC[:6], n_folds=5),
    ),
    case("cit_lr_test-cross_fit", TypeError, "cross_fit", lambda: stats.cit_lr_test(YHAT, A, ZC, cross_fit="yes")),
    case("cit_lr_test-learner", TypeError, "learner", lambda: stats.cit_lr_test(YHAT, A, ZC, learner="ridge")),
    case("cit_lr_test-g_mode", ValueError, "g_mode", lambda: stats.cit_lr_test(YHAT, A, ZC, g_mode="both")),
    case(
        "cit_lr_test-test_mask", ValueError, "test_mask", lambda: stats.cit_lr_test(YHAT, A, ZC, test_mask=np.ones(N))
    ),
    case(
        "cit_lr_test-p_a-strings",
        TypeError,
        ("p_a", "numeric"),
        lambda: stats.cit_lr_test(YHAT, A, ZC, h_mode="marginalize", p_a=["a", "b"]),
    ),
    case(
        "cit_lr_test-p_a-negative",
        ValueError,
        "p_a",
        lambda: stats.cit_lr_test(YHAT, A, ZC, h_mode="marginalize", p_a=[-1.0, 2.0]),
    ),
    case(
        "counterfactual_predictions-predict",
        TypeError,
        "predict",
        lambda: stats.counterfactual_predictions(None, _gen, ZC, [0, 1]),
    ),
    case(
        "counterfactual_predictions-n_mc",
        ValueError,
        "n_mc",
        lambda: stats.counterfactual_predictions(_predict_wrong, _gen, ZC, [0, 1], n_mc=0),
    ),
    case(
        "counterfactual_predictions-levels",
        ValueError,
        "levels",
        lambda: stats.counterfactual_predictions(_predict_wrong, _gen, ZC, [0]),
    ),
    case(
        "counterfactual_predictions-levels-int",
        TypeError,
        "levels",
        lambda: stats.counterfactual_predictions(_predict_wrong, _gen, ZC, 2),
    ),
    case(
        "counterfactual_predictions-z-none",
        TypeError,
        "z",
        lambda: stats.counterfactual_predictions(_predict_wrong, _gen, None, [0, 1]),
    ),
    case(
        "counterfactual_predictions-z-empty",
        ValueError,
        "z",
        lambda: stats.counterfactual_predictions(_predict_wrong, _gen, EMPTY, [0, 1]),
    ),
    case(
        "counterfactual_predictions-wrong-output",
        ValueError,
        ("predict", "generate", "60"),
        lambda: stats.counterfactual_predictions(_predict_wrong, _gen, ZC, [0, 1]),
    ),
    case(
        "cit_lr_generative-cf-transposed",
        ValueError,
        ("cf_predictions", "transpose"),
        lambda: stats.cit_lr_generative(YHAT, A, CF.T[None]),
    ),
    case(
        "cit_lr_generative-cf-strings",
        TypeError,
        "cf_predictions",
        lambda: stats.cit_lr_generative(YHAT, A, np.full((N, 2), "x")),
    ),
    case("cit_lr_generative-cf-none", TypeError, "cf_predictions", lambda: stats.cit_lr_generative(YHAT, A, None)),
    case(
        "cit_lr_generative-cf-nan",
        ValueError,
        ("cf_predictions", "NaN"),
        lambda: stats.cit_lr_generative(YHAT, A, CF * np.nan),
    ),
    case(
        "cit_lr_generative-levels", ValueError, "levels", lambda: stats.cit_lr_generative(YHAT, A, CF, levels=[0, 1, 2])
    ),
    case("cit_lr_generative-empty", ValueError, "y_hat", lambda: stats.cit_lr_generative([], [], np.zeros((0, 2)))),
    case(
        "cit_lr_generative-alternative",
        ValueError,
        "alternative",
        lambda: stats.cit_lr_generative(YHAT, A, CF, alternative="up"),
    ),
    case("demographic_parity_test-empty", ValueError, "y_hat", lambda: stats.demographic_parity_test([], [])),
    case(
        "demographic_parity_test-a-empty", ValueError, ("a", "entries"), lambda: stats.demographic_parity_test(YHAT, [])
    ),
    case(
        "demographic_parity_test-inf",
        ValueError,
        ("y_hat", "infinite"),
        lambda: stats.demographic_parity_test(np.r_[np.inf, YHAT[1:]], A),
    ),
    case(
        "demographic_parity_test-a-2d",
        ValueError,
        ("a", "one-dimensional"),
        lambda: stats.demographic_parity_test(YHAT, np.c_[A, A]),
    ),
    case(
        "demographic_parity_test-a-mixed",
        TypeError,
        "a",
        lambda: stats.demographic_parity_test(YHAT[:4], np.array(["x", None, "y", "x"], dtype=object)),
    ),
    case(
        "demographic_parity_test-strings",
        TypeError,
        ("y_hat", "numeric"),
        lambda: stats.demographic_parity_test(STRINGS, [0, 0, 1, 1]),
    ),
    case(
        "demographic_parity_test-n_bootstrap",
        ValueError,
        "n_bootstrap",
        lambda: stats.demographic_parity_test(YHAT, A, method="paper_bootstrap", n_bootstrap=-3),
    ),
    case(
        "demographic_parity_test-binary",
        TypeError,
        "binary",
        lambda: stats.demographic_parity_test(YHAT, A, binary="yes"),
    ),
    case(
        "demographic_parity_test-small-group",
        ValueError,
        ("group", "at least 2"),
        lambda: stats.demographic_parity_test(YHAT[:5], [0, 0, 0, 0, 1]),
    ),
    case(
        "demographic_parity_test-method",
        ValueError,
        "method",
        lambda: stats.demographic_parity_test(YHAT, A, method="z"),
    ),
    case("equal_opportunity_test-y-none", TypeError, "y", lambda: stats.equal_opportunity_test(YHAT, A, None)),
    case(
        "equal_opportunity_test-y-nan",
        ValueError,
        ("y", "NaN"),
        lambda: stats.equal_opportunity_test(YHAT, A, np.r_[np.nan, YTRUE[1:]]),
    ),
    case("equal_opportunity_test-y-short", ValueError, "y", lambda: stats.equal_opportunity_test(YHAT, A, YTRUE[:10])),
    case(
        "equal_opportunity_test-too-few",
        ValueError,
        ("y ==", "at least 4"),
        lambda: stats.equal_opportunity_test(YHAT, A, YTRUE, y_value=7),
    ),
    case(
        "eca-tol-negative",
        ValueError,
        "tol",
        lambda: stats.expected_counterfactual_accuracy(None, YHAT, YHAT, tol=-0.1),
    ),
    case(
        "eca-tol-nan", ValueError, "tol", lambda: stats.expected_counterfactual_accuracy(None, YHAT, YHAT, tol=np.nan)
    ),
    case("eca-tol-string", TypeError, "tol", lambda: stats.expected_counterfactual_accuracy(None, YHAT, YHAT, tol="0")),
    case("eca-model", TypeError, "model", lambda: stats.expected_counterfactual_accuracy("clf", YHAT, YHAT)),
    case("eca-empty", ValueError, "predictions on x", lambda: stats.expected_counterfactual_accuracy(None, [], [])),
    case("eca-lengths", ValueError, "x_cf[0]", lambda: stats.expected_counterfactual_accuracy(None, YHAT, YHAT[:10])),
    case(
        "eca-nan",
        ValueError,
        ("x_cf[0]", "NaN"),
        lambda: stats.expected_counterfactual_accuracy(None, YHAT, YHAT * np.nan),
    ),
    case("eca-no-sets", ValueError, "x_cf", lambda: stats.expected_counterfactual_accuracy(None, YHAT, [])),
    case("eca-levels", TypeError, "levels", lambda: stats.expected_counterfactual_accuracy(None, YHAT, YHAT, levels=3)),
    case("alignment_stats-lengths", ValueError, ("log10_p", "eca"), lambda: stats.alignment_stats([0.5, 0.7], [-1.0])),
    case(
        "alignment_stats-positive",
        ValueError,
        ("log10_p", "<= 0"),
        lambda: stats.alignment_stats([0.5, 0.7, 0.9], [0.5, 0.3, 0.1]),
    ),
    case(
        "alignment_stats-nan",
        W,
        ("log10_p", "NaN"),
        lambda: stats.alignment_stats([0.5, 0.7, 0.9], [-1.0, np.nan, -3.0]),
    ),
    case(
        "alignment_stats-eca-nan",
        ValueError,
        ("eca", "NaN"),
        lambda: stats.alignment_stats([0.5, np.nan], [-1.0, -2.0]),
    ),
    case("alignment_stats-strings", TypeError, "log10_p", lambda: stats.alignment_stats([0.5, 0.7], ["a", "b"])),
    case(
        "alignment_stats-floor", ValueError, "floor", lambda: stats.alignment_stats([0.5, 0.7], [-1.0, -2.0], floor=5.0)
    ),
    case(
        "plot_pvalue_vs_eca-alpha",
        ValueError,
        "alpha",
        lambda: stats.plot_pvalue_vs_eca([0.5, 0.7], [-1.0, -2.0], alpha=1.0),
    ),
    case(
        "plot_pvalue_vs_eca-band_k",
        ValueError,
        "band_k",
        lambda: stats.plot_pvalue_vs_eca([0.5, 0.7], [-1.0, -2.0], band_k=-1.0),
    ),
    case(
        "plot_pvalue_vs_eca-ylim",
        ValueError,
        "ylim",
        lambda: stats.plot_pvalue_vs_eca([0.5, 0.7], [-1.0, -2.0], ylim=(0.5, -30)),
    ),
    case(
        "plot_pvalue_vs_eca-ylim-type",
        TypeError,
        "ylim",
        lambda: stats.plot_pvalue_vs_eca([0.5, 0.7], [-1.0, -2.0], ylim=5),
    ),
    case(
        "plot_pvalue_vs_eca-ax", TypeError, "ax", lambda: stats.plot_pvalue_vs_eca([0.5, 0.7], [-1.0, -2.0], ax="left")
    ),
    case("plot_pvalue_vs_eca-empty", ValueError, "eca", lambda: stats.plot_pvalue_vs_eca([], [])),
    case("rejection_summary-empty", ValueError, "pvalues", lambda: stats.rejection_summary([])),
    case("rejection_summary-range", ValueError, ("pvalues", "[0, 1]"), lambda: stats.rejection_summary([0.2, 1.5])),
    case("rejection_summary-nan", ValueError, ("pvalues", "NaN"), lambda: stats.rejection_summary([0.2, np.nan])),
    case("rejection_summary-alpha", ValueError, "alpha", lambda: stats.rejection_summary([0.2, 0.5], alpha=0.0)),
    case(
        "rejection_summary-alpha-string", TypeError, "alpha", lambda: stats.rejection_summary([0.2, 0.5], alpha="0.05")
    ),
    case("rejection_summary-level", ValueError, "level", lambda: stats.rejection_summary([0.2, 0.5], level=1.0)),
]


def test_the_table_is_large_and_its_ids_unique():
    assert len(CASES) >= 60
    assert len({c.id for c in CASES}) == len(CASES)


def test_the_table_covers_every_public_function_of_stats():
    """Every public callable of ``cflib.stats`` (result classes aside) appears in at least one row."""
    results = {
        "CFCLOTResult",
        "CFCLOTRFFResult",
        "RFFMap",
        "RFFPairSums",
        "RFFRowSums",
        "CITResult",
        "ECAResult",
        "GroupParityResult",
        "LinearMMDResult",
        "MMDTestResult",
        "QuadraticForms",
        "RateDifference",
        "RATES",
    }  # result classes, and the names of the group rates
    ids = {c.id.split("-")[0] for c in CASES}
    aliases = {"expected_counterfactual_accuracy": "eca", "settle_near_ties": "settle", "Kernel": "gram"}
    missing = [
        name for name in stats.__all__ if name not in results and name not in ids and aliases.get(name) not in ids
    ]
    assert not missing, missing


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_malformed_call_gets_one_clear_line(c: Case, tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    one_clear_line(c)
    assert not any(tmp_path.iterdir()), "the call wrote into the working folder"


def _results() -> dict[str, object]:
    """One instance of every stats result type that has a ``reject`` method."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cflib.CflibWarning)
        return {
            "MMDTestResult": stats.mmd_test(X, Y, n_permutations=19, seed=0),
            "LinearMMDResult": stats.linear_mmd_test(X, Y),
            "CITResult": stats.cit_lr_from_estimates(YHAT, G_EST, H_EST),
            "GroupParityResult": stats.demographic_parity_test(YHAT, A),
        }


@pytest.mark.parametrize("ax", ["left", 0, np.zeros(2)], ids=["string", "int", "array"])
def test_every_result_type_s_plot_refuses_what_is_not_axes(ax):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cflib.CflibWarning)
        results = [
            *_results().values(),
            stats.cfclot_test(Y1, YCF1, 0.1),
            stats.expected_counterfactual_accuracy(None, YHAT, 1 - YHAT),
        ]
    assert len(results) == 6  # LinearMMDResult draws with the default plot of cflib.results.BaseTestResult
    for res in results:
        with pytest.raises(TypeError, match="ax must be a matplotlib Axes"):
            res.plot(ax=ax)


@pytest.mark.parametrize(
    "alpha, error",
    [
        (0, ValueError),
        (1, ValueError),
        (1.5, ValueError),
        (-0.1, ValueError),
        (np.nan, ValueError),
        ("0.05", TypeError),
        (True, TypeError),
        (None, TypeError),
    ],
)
def test_every_result_type_s_reject_refuses_a_bad_alpha(alpha, error):
    for name, res in _results().items():
        with pytest.raises(error, match="alpha"):
            res.reject(alpha)
        assert isinstance(res.reject(0.05), bool), name
    # CF-CLOT's reject(alpha) checks alpha the same way; without one it is the decision at the test's own alpha
    with pytest.raises(error, match="alpha"):
        stats.cfclot_test(Y1, YCF1, 0.1, alpha=alpha)
    res = stats.cfclot_test(Y1, YCF1, 0.1)
    if alpha is not None:  # None asks for the test's own alpha
        with pytest.raises(error, match="alpha"):
            res.reject(alpha)
    assert res.reject() is res.rejected


def test_warnings_are_recorded_on_the_result_and_shown_in_its_summary():
    with pytest.warns(cflib.CflibWarning, match="m=10"):
        res = stats.cfclot_test(Y1[:10], YCF1[:10], 0.1)
    assert "30 pairs" in res.warnings[0]  # (a zero variance estimate on these 10 pairs may add a second)
    assert res.summary()["warning"].iloc[0] == "; ".join(res.warnings)
    with pytest.warns(cflib.CflibWarning, match="n_permutations"):
        m = stats.mmd_test(X, Y, n_permutations=9, seed=0)
    assert m.warnings and m.summary()["warning"].iloc[0] == "; ".join(m.warnings)
    # a p-value of 1/(B + 1) = 0.1: reject() at 0.05 can never be True, which the warning said
    assert m.pvalue >= 0.1 and not m.reject(0.05)
    with pytest.warns(cflib.CflibWarning, match="n_permutations"):
        r = stats.rff_mmd_test(X, Y, n_permutations=5, seed=0)
    assert r.warnings


def test_enough_units_and_draws_give_no_warning_and_no_column():
    with warnings.catch_warnings():
        warnings.simplefilter("error", cflib.CflibWarning)
        results = [
            stats.cfclot_test(Y1, YCF1, 0.1),
            stats.cfclot_test(Y1, YCF1, 0.0, n_boot=99, seed=0),
            stats.mmd_test(X, Y, n_permutations=99, seed=0),
            stats.mmd_test(X, Y, paired=True, n_permutations=99, seed=0),
            stats.mmd_test(X[:4], Y[:4], n_permutations=99, seed=0),
        ]  # C(8, 4) / 2 = 35 distinct splits
    for res in results:
        assert res.warnings == () and "warning" not in res.summary().columns


def test_checks_do_not_change_valid_results():
    """Validation only refuses: equivalent valid inputs (list, float32-free array, pandas frame, (n, 1) column) give
    the same numbers as before the checks, and a seeded test is reproducible."""
    a = stats.mmd_test(X, Y, n_permutations=99, seed=3)
    b = stats.mmd_test(pd.DataFrame(X), Y.tolist(), n_permutations=99, seed=3)
    assert a.statistic == b.statistic and a.pvalue == b.pvalue
    np.testing.assert_array_equal(a.null_distribution, b.null_distribution)
    assert stats.nte(Y1, YCF1) == stats.nte(Y1[:, None], pd.Series(YCF1))
    assert stats.paired_t_test(list(G_EST - H_EST)) == stats.paired_t_test(G_EST - H_EST)
    assert stats.nte_bernoulli(0.7, 0.3) == pytest.approx(2 * 0.16 / (4 - 2 * (1 - 2 * 0.21)))


def test_every_result_type_of_stats_metrics_and_fairness_has_the_statistic_and_pvalue_the_base_reads():
    # results.BaseTestResult (once RejectsAtLevel) reads self.statistic and self.pvalue in reject(), summary() and
    # plot(); a subclass without them would fail there only at run time
    import dataclasses
    import importlib
    import inspect
    import pkgutil

    from cflib.results import BaseTestResult

    found = {}
    for pkg in ("cflib.stats", "cflib.metrics", "cflib.fairness"):
        for info in pkgutil.walk_packages(importlib.import_module(pkg).__path__, pkg + "."):
            for _, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass):
                if cls.__module__ == info.name and issubclass(cls, BaseTestResult):
                    found[cls.__qualname__] = {f.name for f in dataclasses.fields(cls)}
    assert len(found) >= 8, sorted(found)  # MMD, linear MMD, CF-CLOT, CIT-LR, DP/EO, rate difference, ...
    assert not [n for n, fields in found.items() if not {"statistic", "pvalue"} <= fields], found
    for res in _results().values():
        assert len(res.summary()) >= 1 and res.reject(1 - 1e-9) == (res.pvalue <= 1 - 1e-9)


def test_rate_differences_carry_their_interval_with_its_estimate_and_method():
    from cflib.results import Interval

    w = stats.welch_difference([0.0, 1.0, 1.0], [1.0, 1.0, 0.0, 1.0])
    assert isinstance(w.ci, Interval) and w.ci.estimate == w.difference and w.ci.method == "95% welch"
    nc = stats.newcombe_difference(2, 5, 4, 5, level=0.9)
    assert nc.ci.estimate == pytest.approx(0.4) and nc.ci.method == "90% newcombe" and nc.ci.low < 0.4 < nc.ci.high
    empty = stats.newcombe_difference(0, 0, 1, 3)
    assert empty.ci.method == "95% newcombe" and np.isnan(empty.ci.low) and empty.reason
    constant = stats.welch_difference([1.0, 1.0], [0.0, 0.0])
    assert constant.ci.estimate == -1.0 and np.isnan(constant.ci.high) and constant.pvalue == 0.0
