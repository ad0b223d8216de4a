"""Linear-time MMD tests, for samples too large for the quadratic-time permutation test.

Three options, each costing ``O(N)`` kernel evaluations (times a block size or a feature count):

* :func:`linear_mmd_test`: the linear-time statistic of Gretton et al. (2012), *A kernel two-sample
  test*, Sec. 6 (Lemma 14, Corollary 16): the mean of ``h`` over ``floor(min(n, m) / 2)`` disjoint
  quadruples, asymptotically normal with a variance estimated from the same ``h`` values.
* :func:`block_mmd_test`: the incomplete U-statistic of Zaremba, Gretton & Blaschko (2013), *B-test: a
  non-parametric, low variance kernel two-sample test*: the unbiased MMD^2 within disjoint blocks of
  ``block_size`` points per sample, averaged over blocks; asymptotically normal across blocks.
* :func:`rff_mmd_test`: the Gaussian kernel replaced by ``D`` random Fourier features (Rahimi & Recht
  2007), so that MMD^2 becomes ``||mean phi(x) - mean phi(y)||^2``, with an exact label-permutation
  p-value ``(1 + k) / (1 + B)`` (the features are drawn independently of the data, so the test is
  exact in finite samples for any ``D``).

The first two are calibrated only asymptotically; their level is checked in
``tests/test_stats_mmd_linear.py`` and their power against the full test is shown in the closeness-test
chapter (notebook 05), from :func:`linear_power_study`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..results import BaseTestResult, check_alpha
from ..runtime import as_generator
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_axes,
    check_columns,
    check_count,
    check_positive,
    check_real,
    describe,
)
from .kernels import Kernel, as_2d, make_kernel
from .mmd import check_same_dim, distinct_splits, mmd_test, resampling_pvalue, resampling_warnings

__all__ = [
    "LinearMMDResult",
    "linear_mmd_test",
    "block_mmd_test",
    "rff_mmd_test",
    "rff_features",
    "linear_power_study",
    "plot_linear_power",
]


@dataclass(frozen=True)
class LinearMMDResult(BaseTestResult):
    """Result of a linear-time MMD test.

    Attributes
    ----------
    statistic : float
        The MMD^2 estimate of the test.
    pvalue : float
    method : str
        ``"linear"``, ``"block"`` or ``"rff"``.
    std_error : float or None
        Standard error of ``statistic`` (normal-approximation tests).
    n, m : int
        Sample sizes.
    kernel : Kernel
        With the bandwidth used.
    warnings : tuple of str
        Why the p-value may be unreliable (too few permutations or units); empty when it is not.
    """

    statistic: float
    pvalue: float
    method: str
    std_error: float | None
    n: int
    m: int
    kernel: Kernel
    warnings: tuple[str, ...] = ()


def _prepare(
    x: Any, y: Any, kernel: str | Kernel, bandwidth: float | str, seed: Any
) -> tuple[np.ndarray, np.ndarray, Kernel]:
    x = as_2d(x, "x")
    y = as_2d(y, "y")
    check_same_dim(x, y)
    k = make_kernel(kernel, bandwidth).fit(x, y, seed=seed)
    return x, y, k


def _kvec(k: Kernel, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``k(a_i, b_i)`` row by row."""
    s = float(k.bandwidth)
    if k.name == "gaussian":
        return np.exp(-((a - b) ** 2).sum(-1) / (2 * s * s))
    return np.exp(-np.abs(a - b).sum(-1) / s)


def _normal_result(h: np.ndarray, method: str, n: int, m: int, k: Kernel) -> LinearMMDResult:
    """One-sided normal test of ``E h = 0`` from i.i.d. block values ``h``."""
    stat = float(h.mean())
    se = float(h.std(ddof=1) / np.sqrt(h.size))
    p = float(stats.norm.sf(stat / se)) if se > 0 else (0.0 if stat > 0 else 1.0)
    return LinearMMDResult(stat, p, method, se, n, m, k)


def linear_mmd_test(
    x: Any,
    y: Any,
    *,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    seed: int | np.random.Generator | None = 0,
) -> LinearMMDResult:
    """Linear-time MMD test of Gretton et al. (2012, Sec. 6): normal approximation over disjoint quadruples.

    Parameters
    ----------
    x : array-like, shape (n, d)
    y : array-like, shape (m, d)
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
    seed : int, Generator or None
        Subsampling randomness of the median heuristic only (the test itself is deterministic; shuffle
        the rows first if their order is not random).

    Returns
    -------
    LinearMMDResult
        ``statistic`` equals ``mmd2(x, y, estimator="linear")``; needs at least 4 rows per sample.
    """
    x, y, k = _prepare(x, y, kernel, bandwidth, seed)
    p = min(x.shape[0], y.shape[0]) // 2
    if p < 2:
        raise ValueError(f"linear_mmd_test needs at least 4 rows in each sample, got {x.shape[0]} and {y.shape[0]}")
    x1, x2, y1, y2 = x[0 : 2 * p : 2], x[1 : 2 * p : 2], y[0 : 2 * p : 2], y[1 : 2 * p : 2]
    h = _kvec(k, x1, x2) + _kvec(k, y1, y2) - _kvec(k, x1, y2) - _kvec(k, x2, y1)
    return _normal_result(h, "linear", x.shape[0], y.shape[0], k)


def block_mmd_test(
    x: Any,
    y: Any,
    *,
    block_size: int = 32,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    seed: int | np.random.Generator | None = 0,
) -> LinearMMDResult:
    """B-test (Zaremba et al. 2013): unbiased MMD^2 within disjoint blocks, normal across blocks.

    Parameters
    ----------
    x : array-like, shape (n, d)
    y : array-like, shape (m, d)
    block_size : int
        Points of each sample per block (``>= 2``); cost is ``O(N * block_size)``. Rows beyond the last
        full block are dropped; at least two blocks are needed.
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
    seed : int, Generator or None
        Subsampling randomness of the median heuristic.

    Returns
    -------
    LinearMMDResult
        ``statistic`` is the mean of the per-block ``mmd2(..., estimator="unbiased")``.
    """
    block_size = check_count(block_size, "block_size", minimum=2)
    x, y, k = _prepare(x, y, kernel, bandwidth, seed)
    nb = min(x.shape[0], y.shape[0]) // block_size
    if nb < 2:
        raise ValueError(
            f"block_mmd_test needs at least two blocks of block_size={block_size} rows per sample, "
            f"got {x.shape[0]} and {y.shape[0]} rows; lower block_size"
        )
    b = block_size
    xb = x[: nb * b].reshape(nb, b, -1)
    yb = y[: nb * b].reshape(nb, b, -1)

    def within(a: np.ndarray, c: np.ndarray) -> np.ndarray:  # (nb, b, b) kernel blocks
        return _kvec(k, a[:, :, None, :], c[:, None, :, :])

    kxx, kyy, kxy = within(xb, xb), within(yb, yb), within(xb, yb)
    off = b * (b - 1)
    diag = k.value_at(0.0) * b
    h = (kxx.sum((1, 2)) - diag) / off + (kyy.sum((1, 2)) - diag) / off - 2 * kxy.mean((1, 2))
    return _normal_result(h, "block", x.shape[0], y.shape[0], k)


def rff_features(
    x: np.ndarray, bandwidth: float, n_features: int, seed: int | np.random.Generator | None = 0
) -> np.ndarray:
    """Random Fourier features of the Gaussian kernel: ``E[phi(x)' phi(y)] = exp(-||x - y||^2 / (2 s^2))``.

    Parameters
    ----------
    x : array-like, shape (N, d)
    bandwidth : float
        The Gaussian bandwidth ``s > 0``.
    n_features : int
        Number of features ``D``.
    seed : int, Generator or None
        Randomness of the frequencies ``W ~ N(0, I / s^2)`` and phases ``b ~ U(0, 2 pi)``.

    Returns
    -------
    numpy.ndarray, shape (N, D)
        ``sqrt(2 / D) cos(x W + b)``.
    """
    x = as_2d(x, "x", min_rows=1)
    n_features = check_count(n_features, "n_features")
    bandwidth = check_positive(bandwidth, "bandwidth")
    rng = as_generator(seed)
    w = rng.normal(0.0, 1.0 / bandwidth, size=(x.shape[1], n_features))
    b = rng.uniform(0.0, 2 * np.pi, size=n_features)
    return np.sqrt(2.0 / n_features) * np.cos(x @ w + b)


def rff_mmd_test(
    x: Any,
    y: Any,
    *,
    n_features: int = 256,
    bandwidth: float | str = "median",
    n_permutations: int = 500,
    seed: int | np.random.Generator | None = None,
    batch: int = 256,
) -> LinearMMDResult:
    """Random-feature MMD permutation test (Gaussian kernel), ``O(N * D * B)`` time, ``O(N * D)`` memory.

    Parameters
    ----------
    x : array-like, shape (n, d)
    y : array-like, shape (m, d)
    n_features : int
        Random Fourier features ``D``.
    bandwidth : float or "median"
        Gaussian bandwidth (median heuristic on the pooled sample by default).
    n_permutations : int
        Label permutations ``B``; the p-value is ``(1 + k) / (1 + B)``, exact for any ``D``.
    seed : int, Generator or None
        Randomness of the features, then of the permutations.
    batch : int
        Permutations per matrix product.

    Returns
    -------
    LinearMMDResult
        ``statistic`` is ``||mean phi(x) - mean phi(y)||^2``.

    Warns
    -----
    cflib.CflibWarning
        When the p-value cannot go below 0.05 (fewer than 19 permutations, or too few units); recorded
        in :attr:`LinearMMDResult.warnings`.
    """
    n_permutations = check_count(n_permutations, "n_permutations")
    batch = check_count(batch, "batch")
    n_features = check_count(n_features, "n_features")
    rng = as_generator(seed)
    x, y, k = _prepare(x, y, "gaussian", bandwidth, rng)
    n, m = x.shape[0], y.shape[0]
    notes = resampling_warnings(
        n_permutations, distinct_splits(n, m), 0.05, draws="n_permutations", units=f"n={n} and m={m} units"
    )
    phi = rff_features(np.concatenate([x, y]), float(k.bandwidth), n_features, rng)
    total = phi.sum(0)

    def stat(sx: np.ndarray) -> np.ndarray:  # sx: (b, D) feature sums of the first group
        return ((sx / n - (total - sx) / m) ** 2).sum(-1)

    observed = float(stat(phi[:n].sum(0)))
    template = np.r_[np.ones(n), np.zeros(m)]
    null = np.empty(n_permutations)
    for b0 in range(0, n_permutations, batch):
        b = min(batch, n_permutations - b0)
        e = rng.permuted(np.broadcast_to(template, (b, n + m)), axis=1)
        null[b0 : b0 + b] = stat(e @ phi)
    return LinearMMDResult(observed, resampling_pvalue(null, observed), "rff", None, n, m, k, notes)


def linear_power_study(
    n_grid: tuple[int, ...] = (100, 200, 400, 800),
    shift: float = 0.3,
    *,
    d: int = 5,
    n_reps: int = 100,
    alpha: float = 0.05,
    n_permutations: int = 200,
    block_size: int = 32,
    n_features: int = 128,
    seed: int = 0,
) -> pd.DataFrame:
    """Rejection rates and run times of the full test and the three linear-time tests.

    Samples are ``x ~ N(0, I_d)`` and ``y ~ N(shift e_1, I_d)``; ``shift = 0`` gives the level.

    Parameters
    ----------
    n_grid : tuple of int
        Sample sizes ``n = m``.
    shift : float
        Mean shift along the first coordinate.
    d : int
        Dimension.
    n_reps : int
        Replications per sample size.
    alpha : float
        Level of each test.
    n_permutations : int
        Permutations of the full and the random-feature tests.
    block_size, n_features : int
        Of the B-test and of the random-feature test.
    seed : int
        Master seed (every replication gets its own stream).

    Returns
    -------
    pandas.DataFrame
        One row per (``n``, test): ``n, test, rejection_rate, se, seconds_per_test, n_reps, shift``.
    """
    if isinstance(n_grid, (str, bytes)) or not hasattr(n_grid, "__iter__"):
        raise ValidationTypeError(f"n_grid must be a sequence of sample sizes, got {describe(n_grid)}")
    n_grid = tuple(check_count(n, "n_grid entry", minimum=4) for n in n_grid)
    if not n_grid:
        raise ValidationError("n_grid must hold at least one sample size, got an empty sequence")
    shift = check_real(shift, "shift")
    d = check_count(d, "d")
    n_reps = check_count(n_reps, "n_reps")
    alpha = check_alpha(alpha)
    n_permutations = check_count(n_permutations, "n_permutations")
    block_size = check_count(block_size, "block_size", minimum=2)
    n_features = check_count(n_features, "n_features")
    seed = check_count(seed, "seed", minimum=0)
    if min(n_grid) < 2 * block_size:
        raise ValidationError(
            f"the B-test needs two blocks of block_size={block_size} rows: every n_grid entry must be "
            f">= {2 * block_size}, got {min(n_grid)}; lower block_size"
        )
    tests = {
        "full (permutation)": lambda x, y, s, r: (
            mmd_test(x, y, bandwidth=s, n_permutations=n_permutations, seed=r).pvalue
        ),
        f"B-test (block {block_size})": lambda x, y, s, r: (
            block_mmd_test(x, y, block_size=block_size, bandwidth=s).pvalue
        ),
        "linear (Gretton Sec. 6)": lambda x, y, s, r: linear_mmd_test(x, y, bandwidth=s).pvalue,
        f"random features (D = {n_features})": lambda x, y, s, r: (
            rff_mmd_test(x, y, n_features=n_features, bandwidth=s, n_permutations=n_permutations, seed=r).pvalue
        ),
    }
    rows = []
    ss = np.random.SeedSequence(seed)
    for n, child in zip(n_grid, ss.spawn(len(n_grid)), strict=True):
        rej = dict.fromkeys(tests, 0)
        secs = dict.fromkeys(tests, 0.0)
        for rep_seed in child.spawn(n_reps):
            rng = np.random.default_rng(rep_seed)
            x = rng.normal(size=(n, d))
            y = rng.normal(size=(n, d))
            y[:, 0] += shift
            s = make_kernel("gaussian").fit(x, y, seed=rng).bandwidth
            for t, f in tests.items():
                t0 = time.perf_counter()
                rej[t] += f(x, y, s, rng) <= alpha
                secs[t] += time.perf_counter() - t0
        for t in tests:
            rate = rej[t] / n_reps
            rows.append(
                {
                    "n": n,
                    "test": t,
                    "rejection_rate": rate,
                    "se": float(np.sqrt(rate * (1 - rate) / n_reps)),
                    "seconds_per_test": secs[t] / n_reps,
                    "n_reps": n_reps,
                    "shift": shift,
                }
            )
    return pd.DataFrame(rows)


def plot_linear_power(power: pd.DataFrame, axes: Any = None) -> Any:
    """Power (with 95 % bands) and time per test against ``n``, from :func:`linear_power_study`.

    Parameters
    ----------
    power : pandas.DataFrame
        Output of :func:`linear_power_study`.
    axes : sequence of two matplotlib.axes.Axes, optional
        Drawn on new axes (two panels) by default.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import line_with_band, subplots

    check_columns(power, ["n", "test", "rejection_rate", "se", "seconds_per_test", "shift"], "power")
    if axes is not None and (isinstance(axes, (str, bytes)) or not hasattr(axes, "__len__") or len(axes) != 2):
        raise ValidationTypeError(f"axes must be None or two matplotlib Axes, got {describe(axes)}")
    for i, a in enumerate([] if axes is None else axes):
        check_axes(a, f"axes[{i}]")
    if axes is None:
        _, axes = subplots(1, 2, width=4.6)
    for t, g in power.groupby("test", sort=False):
        r, se = g["rejection_rate"].to_numpy(), g["se"].to_numpy()
        line_with_band(g["n"], r, np.clip(r - 1.96 * se, 0, 1), np.clip(r + 1.96 * se, 0, 1), label=t, ax=axes[0])
        axes[1].loglog(g["n"], g["seconds_per_test"], marker="o", ms=4, label=t)
    axes[0].set(
        xscale="log",
        xlabel="n = m",
        ylabel="rejection rate",
        ylim=(0, 1.02),
        title=f"power at shift {power['shift'].iloc[0]:g}",
    )
    axes[1].set(xlabel="n = m", ylabel="seconds per test", title="time per test (shared CPU)")
    axes[0].legend(fontsize=8)
    return np.asarray(axes)
