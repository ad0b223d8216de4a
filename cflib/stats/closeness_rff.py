"""CF-CLOT with random Fourier features: the closeness test from sums that add across partitions (issue 30).

The test of :func:`cflib.stats.closeness.cfclot_test` (Fu et al. 2025, *Testing for Causal Fairness*: N-TE of
Eq. 8-10, the normal threshold of Eq. 13 with the delta-method standard error of the implementation notes) with
the Gaussian kernel ``k(x, x') = exp(-||x - x'||^2 / (2 s^2))`` replaced by random Fourier features (Rahimi &
Recht 2007) in their cosine-sine form. With ``D`` frequencies ``w_j ~ N(0, I / s^2)`` drawn from a seed,
``psi_j(x) = (cos(w_j . x), sin(w_j . x))`` has ``psi_j(x) . psi_j(x') = cos(w_j . (x - x'))``, whose mean over
the frequencies is ``k(x, x')`` (the cosine-sine pair has no random phase, whose noise ``cos(w . (x + x') + 2b)``
would multiply the features' part of the variance). For the ``n`` pairs ``(y_i, y_cf_i)`` write ``f_i = psi(y_i)``,
``g_i = psi(y_cf_i)`` and ``h_i = f_i - g_i`` (``2D``-vectors, two entries per frequency).

**Estimator.** Everything follows from ``n`` and the sums ``S_f = sum f_i``, ``S_g = sum g_i`` (``2D`` numbers
each, ``S_h = S_f - S_g``) and ``Q_h,j = sum_i ||h_ij||^2`` (``D`` numbers; ``||f_ij||^2 = ||g_ij||^2 = 1``). Per
frequency ``j``, the unbiased U-statistics over pairs of distinct units ``i != k`` of ``H`` and ``D``::

    A_j = (||S_h,j||^2 - Q_h,j) / (n (n - 1))
    B_j = 4K - (||S_f,j||^2 - n + ||S_g,j||^2 - n) / (n (n - 1))          (K = 1)

The paired MMD^2 (M-TE, Eq. 21) is ``mean_j A_j = (||sum_i phi_i||^2 - sum_i ||phi_i||^2) / (n (n - 1))`` with
``phi_i = h_i / sqrt(D)``, and the N-TE estimate is ``T = mean_j A_j / mean_j B_j`` (Eq. 10 with the feature
kernel ``k_D(x, x') = phi(x) . phi(x')``, which is unbiased for ``k``).

**Variance at the boundary.** ``T - eps = U_G / U_D`` with ``G = H - eps D`` (as for the delta method of
:func:`cfclot_test`). ``T`` averages over two independent samples, the units and the features, so its variance
has a part from each (the first-order terms of its Hoeffding decomposition):

* units: the influence of unit ``i`` is ``2 (r_i - U_G) / U_D`` with ``r_i`` its row mean of ``G``,
  ``r_i = [h_i . (S_h - h_i) + eps (f_i . (S_f - f_i) + g_i . (S_g - g_i))] / (D (n - 1)) - 4K eps``, so
  ``sigma_u^2 = 4 (mean_i r_i^2 - (mean_i r_i)^2) / U_D^2`` (the variance of ``sqrt(n) T``). The ``r_i`` need the
  totals ``S``: a second pass over the rows, with the totals broadcast;
* features: the influence of frequency ``j`` is ``(A_j - eps B_j - U_G) / U_D``, so
  ``sigma_f^2 = var_j(A_j - eps B_j) / U_D^2`` (the variance of ``sqrt(D) T``).

The test rejects ``H0: N-TE <= eps`` (N-TE of the exact Gaussian kernel) when ``T > eps + z_{1-alpha} se`` with
``se = sqrt(sigma_u^2 / n + sigma_f^2 / D)``; ``p = 1 - Phi((T - eps) / se)``. The feature part keeps the level at
any ``n``: with ``D`` fixed and ``n`` growing, ``T`` converges to the N-TE of the random kernel ``k_D``, which
misses the exact N-TE by ``O(1 / sqrt(D))``, and a test that ignored it would reject at the boundary about half
the time. ``mean_i r_i^2`` is the plug-in second moment, biased up by ``O(zeta_2 / n)`` (slightly conservative at
small ``n``; :func:`cfclot_test` uses the unbiased components, which need all ``n^2`` kernel values).

**Exact sums.** Each row's values are rounded to the grid ``2**-GRID_BITS`` (an error below ``1e-12`` that
depends on the row alone) and summed as integers, so the sums of any split of the rows add to the same totals:
:func:`rff_pair_sums` (pass 1) and :func:`rff_row_sums` (pass 2) on each partition, :func:`combine_rff_sums` to
add them in any order, and :func:`cfclot_rff_finish` for the decision. :func:`cfclot_rff_test` runs the same
stages on arrays in memory (in row chunks), so it gives the distributed audit's numbers on the same rows.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special, stats

from ..results import BaseTestResult, check_alpha
from ..runtime import as_generator
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_axes,
    check_count,
    check_positive,
    check_real,
    describe,
    warn,
)
from .closeness import MIN_NORMAL_PAIRS
from .kernels import as_2d, make_kernel
from .mmd import check_same_dim, check_same_rows

__all__ = [
    "CFCLOTRFFResult",
    "RFFMap",
    "RFFPairSums",
    "RFFRowSums",
    "cfclot_rff_finish",
    "cfclot_rff_test",
    "combine_rff_sums",
    "rff_map",
    "rff_pair_sums",
    "rff_row_sums",
]

#: Per-row values are rounded to multiples of ``2**-GRID_BITS`` and summed as integers.
GRID_BITS = 40
#: Largest absolute per-row value the exact sums take (``psi`` is bounded by 1, ``|r_i|`` by 10).
MAX_ABS = 2.0**11
#: Fewest frequencies for the features' part of the variance (estimated from the ``D`` per-frequency statistics).
MIN_FEATURES = 32
_SUM_ROWS = 2**10  # rows per int64 partial sum: 2**10 * 2**51 < 2**63
_K = 1.0  # the Gaussian kernel's bound, in the N-TE denominator 4K - E k(Y, Y') - E k(Ycf, Ycf')


# --------------------------------------------------------------------------------------------------
# the features and the exact sums
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class RFFMap:
    """Random Fourier features of the Gaussian kernel (``D`` frequencies), drawn once and shared by every partition.

    Attributes
    ----------
    w : numpy.ndarray, shape (d, D)
        Frequencies, ``N(0, I / s^2)``.
    bandwidth : float
        The kernel's bandwidth ``s``.
    """

    w: np.ndarray
    bandwidth: float

    @property
    def dim(self) -> int:
        """The dimension ``d`` of the outputs the features read."""
        return int(self.w.shape[0])

    @property
    def n_features(self) -> int:
        """The number ``D`` of frequencies (``2D`` features: a cosine and a sine each)."""
        return int(self.w.shape[1])

    def transform(self, y: np.ndarray) -> np.ndarray:
        """``psi(y) = (cos(y w), sin(y w))``, row by row (the same numbers for a row whatever rows surround it).

        Parameters
        ----------
        y : numpy.ndarray, shape (m, d)

        Returns
        -------
        numpy.ndarray, shape (m, 2D)
            Cosines in columns ``0 .. D-1``, sines in ``D .. 2D-1``; ``E[psi(x) . psi(x')] / D = k(x, x')`` over
            the draw of the frequencies.
        """
        z = np.zeros((y.shape[0], self.n_features))
        for k in range(self.dim):  # element-wise products in a fixed order, not a BLAS product (blocking-free)
            z += y[:, k : k + 1] * self.w[k]
        return np.concatenate([np.cos(z), np.sin(z)], axis=1)


def rff_map(
    dim: int, *, n_features: int = 256, bandwidth: float = 1.0, seed: int | np.random.Generator | None = 0
) -> RFFMap:
    """Draw ``D`` frequencies of random Fourier features of the Gaussian kernel from ``seed``.

    Parameters
    ----------
    dim : int
        Dimension ``d`` of the outputs.
    n_features : int
        Frequencies ``D`` (at least 2; the features' part of the variance wants :data:`MIN_FEATURES`).
    bandwidth : float
        Gaussian bandwidth ``s > 0``.
    seed : int, Generator or None
        Randomness of the features: an integer gives the same features on every machine.

    Returns
    -------
    RFFMap
    """
    dim = check_count(dim, "dim")
    n_features = check_count(n_features, "n_features", minimum=2)
    bandwidth = check_positive(bandwidth, "bandwidth")
    rng = as_generator(seed)
    return RFFMap(rng.normal(0.0, 1.0 / bandwidth, size=(dim, n_features)), bandwidth)


def _exact_sums(values: np.ndarray) -> np.ndarray:
    """Column sums of ``(m, c)`` floats as Python integers in units of ``2**-GRID_BITS`` (exact, order-free)."""
    if values.size and not np.isfinite(values).all():
        raise ValidationError("the closeness sums hold NaN or infinite values; check the outputs")
    if values.size and np.abs(values).max() >= MAX_ABS:
        raise ValidationError(f"the closeness sums take per-row values below {MAX_ABS:g} in absolute value")
    total = np.zeros(values.shape[1], dtype=object)
    for start in range(0, values.shape[0], _SUM_ROWS):
        q = values[start : start + _SUM_ROWS] * 2.0**GRID_BITS  # a power of two: exact
        total = total + np.rint(q, out=q).astype(np.int64).sum(axis=0).astype(object)
    return total


def _value(total: np.ndarray) -> np.ndarray:
    """Exact sums rounded once to the nearest floats."""
    return np.ldexp(np.asarray(total, dtype=object).astype(np.float64), -GRID_BITS)  # int -> float rounds once


@dataclass(frozen=True)
class RFFPairSums:
    """Pass 1 over some pairs: their count and the exact sums ``S_f`` (``2D``), ``S_g`` (``2D``) and ``Q_h`` (``D``).

    Attributes
    ----------
    n : int
        Pairs.
    sums : numpy.ndarray of object, shape (5 D,)
        ``S_f``, ``S_g``, ``Q_h`` end to end, Python integers in units of ``2**-GRID_BITS``;
        :func:`combine_rff_sums` adds them.
    """

    n: int
    sums: np.ndarray

    def totals(self) -> dict[str, np.ndarray]:
        """The sums as floats: ``S_f, S_g, S_h`` (``2D`` each; ``S_h = S_f - S_g``, subtracted exactly) and ``Q_h``.

        Returns
        -------
        dict of str to numpy.ndarray
        """
        s, d2 = self.sums, 2 * (self.sums.size // 5)
        s_f, s_g = s[:d2], s[d2 : 2 * d2]
        return {"S_f": _value(s_f), "S_g": _value(s_g), "S_h": _value(s_f - s_g), "Q_h": _value(s[2 * d2 :])}


@dataclass(frozen=True)
class RFFRowSums:
    """Pass 2 over some pairs: their count and the exact sums of ``r_i`` and ``r_i^2`` (row means of ``G``).

    Attributes
    ----------
    n : int
    sums : numpy.ndarray of object, shape (2,)
    epsilon : float
        The tolerance ``G = H - eps D`` was formed with.
    """

    n: int
    sums: np.ndarray
    epsilon: float


def _pairs(y: Any, y_cf: Any, fmap: Any) -> tuple[np.ndarray, np.ndarray]:
    """Checked ``(m, d)`` outputs (``m = 0`` allowed: an empty partition) that ``fmap`` can read."""
    if not isinstance(fmap, RFFMap):
        raise ValidationTypeError(f"fmap must be the RFFMap of rff_map, got {describe(fmap)}")
    y, y_cf = as_2d(y, "y", min_rows=0), as_2d(y_cf, "y_cf", min_rows=0)
    check_same_rows(y, y_cf, ("y", "y_cf"), "row i holds the factual and counterfactual output of unit i")
    check_same_dim(y, y_cf, ("y", "y_cf"))
    if y.shape[1] != fmap.dim:
        raise ValidationError(f"y has {y.shape[1]} columns but fmap reads {fmap.dim}; draw it with rff_map(dim=...)")
    return y, y_cf


def rff_pair_sums(y: Any, y_cf: Any, fmap: RFFMap, *, chunk_rows: int = 4096) -> RFFPairSums:
    """Pass 1 on some pairs (one partition): the count and the exact feature sums.

    Parameters
    ----------
    y, y_cf : array-like, shape (m,) or (m, d)
        Factual and counterfactual outputs of ``m >= 0`` units.
    fmap : RFFMap
        The features (the same for every partition).
    chunk_rows : int
        Rows whose features are held at once (memory ``~ 8 chunk_rows D`` floats).

    Returns
    -------
    RFFPairSums
    """
    y, y_cf = _pairs(y, y_cf, fmap)
    chunk_rows = check_count(chunk_rows, "chunk_rows")
    total = np.zeros(5 * fmap.n_features, dtype=object)
    for f, g in _feature_chunks(y, y_cf, fmap, chunk_rows):
        total = total + _pair_block(f, g)
    return RFFPairSums(int(y.shape[0]), total)


def _feature_chunks(
    y: np.ndarray, y_cf: np.ndarray, fmap: RFFMap, chunk_rows: int
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The features ``(f, g)`` of ``chunk_rows`` pairs at a time."""
    for start in range(0, y.shape[0], chunk_rows):
        yield fmap.transform(y[start : start + chunk_rows]), fmap.transform(y_cf[start : start + chunk_rows])


def _pair_block(f: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Pass 1's exact sums ``S_f, S_g, Q_h`` of a block of features."""
    nf = f.shape[1] // 2
    h2 = (f - g) ** 2
    return _exact_sums(np.concatenate([f, g, h2[:, :nf] + h2[:, nf:]], axis=1))


def _row_block(f: np.ndarray, g: np.ndarray, t: dict[str, np.ndarray], epsilon: float, n: int) -> np.ndarray:
    """Pass 2's exact sums of ``r_i`` and ``r_i^2`` over a block of features, given the totals ``t`` of ``n`` pairs."""
    h = f - g
    dots = (h * (t["S_h"] - h)).sum(1) + epsilon * ((f * (t["S_f"] - f)).sum(1) + (g * (t["S_g"] - g)).sum(1))
    r = dots / ((f.shape[1] // 2) * (n - 1)) - 4 * _K * epsilon
    return _exact_sums(np.column_stack([r, r * r]))


def rff_row_sums(
    y: Any, y_cf: Any, fmap: RFFMap, pair_sums: RFFPairSums, epsilon: float, *, chunk_rows: int = 4096
) -> RFFRowSums:
    """Pass 2 on some pairs: the exact sums of each unit's row mean ``r_i`` of ``G = H - eps D`` and of ``r_i^2``.

    Parameters
    ----------
    y, y_cf : array-like, shape (m,) or (m, d)
    fmap : RFFMap
    pair_sums : RFFPairSums
        Pass 1 over *all* the pairs (:func:`combine_rff_sums` of every partition's), broadcast.
    epsilon : float
        The tolerance of the test, in ``(0, 1)``.
    chunk_rows : int

    Returns
    -------
    RFFRowSums
    """
    y, y_cf = _pairs(y, y_cf, fmap)
    epsilon = _check_epsilon(epsilon)
    chunk_rows = check_count(chunk_rows, "chunk_rows")
    if not isinstance(pair_sums, RFFPairSums) or pair_sums.n < 2:
        raise ValidationError(f"pair_sums must be the RFFPairSums of at least 2 pairs, got {describe(pair_sums)}")
    if pair_sums.sums.shape != (5 * fmap.n_features,):
        raise ValidationError("pair_sums must come from the same fmap (the same number of features)")
    t = pair_sums.totals()
    total = np.zeros(2, dtype=object)
    for f, g in _feature_chunks(y, y_cf, fmap, chunk_rows):
        total = total + _row_block(f, g, t, epsilon, pair_sums.n)
    return RFFRowSums(int(y.shape[0]), total, epsilon)


def combine_rff_sums(*parts: Any) -> Any:
    """Add the sums of some partitions (all :class:`RFFPairSums` or all :class:`RFFRowSums`), in any order.

    Parameters
    ----------
    *parts : RFFPairSums or RFFRowSums

    Returns
    -------
    RFFPairSums or RFFRowSums
        Integer sums add exactly: any tree of calls gives the same result.
    """
    if not parts or not all(type(p) is type(parts[0]) for p in parts):
        raise ValidationTypeError("combine_rff_sums takes one or more sums of one kind (RFFPairSums or RFFRowSums)")
    first = parts[0]
    total = first.sums.copy()
    for p in parts[1:]:
        total = total + p.sums
    n = sum(p.n for p in parts)
    if isinstance(first, RFFPairSums):
        return RFFPairSums(n, total)
    if isinstance(first, RFFRowSums):
        if any(p.epsilon != first.epsilon for p in parts):
            raise ValidationError("combine_rff_sums: the row sums were formed with different epsilons")
        return RFFRowSums(n, total, first.epsilon)
    raise ValidationTypeError(f"combine_rff_sums takes RFFPairSums or RFFRowSums, got {describe(first)}")


def _check_epsilon(epsilon: Any) -> float:
    eps = check_real(epsilon, "epsilon", low=0.0, high=1.0, high_open=True)
    if eps == 0:
        raise ValidationError(
            "epsilon must lie in (0, 1): at epsilon = 0 the statistic is degenerate and the normal threshold "
            "does not hold; use cfclot_test(..., method='signflip') or rff_mmd_test"
        )
    return eps


# --------------------------------------------------------------------------------------------------
# the result and the decision
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CFCLOTRFFResult(BaseTestResult):
    """Result of :func:`cfclot_rff_test` (or of :func:`cfclot_rff_finish`) for ``H0: N-TE <= epsilon``.

    Attributes
    ----------
    statistic : float
        Estimated N-TE, ``mean_j A_j / mean_j B_j``.
    pvalue : float
        ``1 - Phi((statistic - epsilon) / std_error)``.
    rejected : bool
        The decision at the test's ``alpha`` (:meth:`reject` gives it at another level).
    threshold : float
        ``epsilon + z_{1-alpha} std_error``.
    std_error : float
        ``sqrt(sigma^2 / m + sigma_features^2 / n_features)``.
    sigma : float
        Standard deviation of ``sqrt(m) * statistic`` from the units (delta method at ``N-TE = epsilon``).
    sigma_features : float
        Standard deviation of ``sqrt(n_features) * statistic`` from the draw of the features.
    epsilon, alpha : float
    m : int
        Pairs.
    n_features : int
    bandwidth : float
    mte : float
        The numerator (paired MMD^2, M-TE).
    mean_d : float
        The denominator.
    warnings : tuple of str
        Why the decision may be unreliable (too few pairs or features, a zero standard error).
    """

    statistic: float
    pvalue: float
    rejected: bool
    threshold: float
    std_error: float
    sigma: float
    sigma_features: float
    epsilon: float
    alpha: float
    m: int
    n_features: int
    bandwidth: float
    mte: float
    mean_d: float
    warnings: tuple[str, ...] = ()

    def reject(self, alpha: float | None = None) -> bool:
        """Whether the test judges the model epsilon-unfair at level ``alpha``.

        Parameters
        ----------
        alpha : float, optional
            Level in (0, 1); the test's own ``alpha`` (then :attr:`rejected`) when omitted.

        Returns
        -------
        bool
            The statistic above ``epsilon + z_{1-alpha} std_error``.
        """
        if alpha is None:
            return self.rejected
        alpha = check_alpha(alpha)
        return bool(self.statistic > self.epsilon + self.std_error * stats.norm.ppf(1 - alpha))

    def summary(self) -> pd.DataFrame:
        """One-row table: statistic, threshold, standard errors, p-value, decision and settings (and warnings).

        Returns
        -------
        pandas.DataFrame
        """
        df = pd.DataFrame(
            [
                {
                    "N-TE": self.statistic,
                    "epsilon": self.epsilon,
                    "threshold": self.threshold,
                    "std_error": self.std_error,
                    "sigma": self.sigma,
                    "sigma_features": self.sigma_features,
                    "pvalue": self.pvalue,
                    "reject": self.rejected,
                    "alpha": self.alpha,
                    "m": self.m,
                    "n_features": self.n_features,
                    "bandwidth": self.bandwidth,
                }
            ]
        )
        if self.warnings:
            df["warning"] = "; ".join(self.warnings)
        return df

    def plot(self, ax: Any = None) -> Any:
        """The normal null at ``N-TE = epsilon`` with the threshold and the statistic.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if check_axes(ax) is None else ax
        if self.std_error > 0:
            sd = self.std_error
            grid = np.linspace(self.epsilon - 4 * sd, max(self.epsilon + 4 * sd, self.statistic + sd), 300)
            ax.plot(
                grid, stats.norm.pdf(grid, self.epsilon, sd), color="0.4", label="normal null at N-TE = $\\epsilon$"
            )
        ax.axvline(self.threshold, color="0.3", ls="--", lw=1, label="threshold")
        ax.axvline(self.statistic, color="C3", lw=2, label=f"N-TE = {self.statistic:.3g} (p = {self.pvalue:.3g})")
        ax.set_xlabel(f"N-TE ({self.n_features} random features)")
        ax.set_ylabel("density")
        ax.legend(fontsize=8)
        return ax


def _per_frequency(s: np.ndarray) -> np.ndarray:
    """``||s_j||^2`` per frequency of a ``2D``-vector (cosine and sine entries)."""
    half = s.size // 2
    return s[:half] ** 2 + s[half:] ** 2


def cfclot_rff_finish(
    pair_sums: RFFPairSums, row_sums: RFFRowSums, fmap: RFFMap, *, alpha: float = 0.05
) -> CFCLOTRFFResult:
    """The N-TE, its standard error and the decision, from the two passes' totals.

    Parameters
    ----------
    pair_sums : RFFPairSums
        Pass 1 over all the pairs.
    row_sums : RFFRowSums
        Pass 2 over all the pairs (its ``epsilon`` is the test's).
    fmap : RFFMap
        The features both passes used.
    alpha : float
        Level.

    Returns
    -------
    CFCLOTRFFResult

    Warns
    -----
    cflib.CflibWarning
        Fewer than :data:`~cflib.stats.closeness.MIN_NORMAL_PAIRS` pairs or :data:`MIN_FEATURES` features, or a
        zero standard error (the p-value is then 0 or 1).
    """
    alpha = check_alpha(alpha)
    if not isinstance(pair_sums, RFFPairSums) or not isinstance(row_sums, RFFRowSums):
        raise ValidationTypeError("cfclot_rff_finish takes the RFFPairSums and RFFRowSums of the two passes")
    if not isinstance(fmap, RFFMap) or pair_sums.sums.shape != (5 * fmap.n_features,):
        raise ValidationError("fmap must be the RFFMap the sums were formed with (same number of features)")
    n, eps, nf = pair_sums.n, row_sums.epsilon, fmap.n_features
    if n < 2 or row_sums.n != n:
        raise ValidationError(f"the two passes must cover the same pairs, at least 2: got {n} and {row_sums.n}")
    t = pair_sums.totals()
    pairs = n * (n - 1)
    a = (_per_frequency(t["S_h"]) - t["Q_h"]) / pairs
    b = 4 * _K - (_per_frequency(t["S_f"]) - n + _per_frequency(t["S_g"]) - n) / pairs
    mean_a, mean_d = float(a.mean()), float(b.mean())
    statistic = mean_a / mean_d
    r_sum, r_sq = _value(row_sums.sums)
    zeta1 = max(float(r_sq / n - (r_sum / n) ** 2), 0.0)
    sigma = 2 * math.sqrt(zeta1) / mean_d
    sigma_f = float(np.std(a - eps * b, ddof=1)) / mean_d
    se = math.sqrt(sigma**2 / n + sigma_f**2 / nf)
    notes: list[str] = []
    if n < MIN_NORMAL_PAIRS:
        notes.append(warn(f"cfclot_rff: the normal threshold is unreliable below {MIN_NORMAL_PAIRS} pairs, got m={n}"))
    if nf < MIN_FEATURES:
        notes.append(
            warn(
                f"cfclot_rff: the features' part of the variance is estimated from n_features={nf} values; "
                f"use at least {MIN_FEATURES}"
            )
        )
    z = float(special.ndtri(1 - alpha))
    if se > 0:
        pvalue = float(special.ndtr(-(statistic - eps) / se))
    else:
        pvalue = 0.0 if statistic > eps else 1.0
        notes.append(
            warn("cfclot_rff: the estimated standard error is 0, so the threshold is epsilon and the p-value 0 or 1")
        )
    threshold = eps + z * se
    return CFCLOTRFFResult(
        statistic,
        pvalue,
        bool(statistic > threshold),
        threshold,
        se,
        sigma,
        sigma_f,
        eps,
        alpha,
        n,
        nf,
        fmap.bandwidth,
        mean_a,
        mean_d,
        tuple(notes),
    )


def cfclot_rff_test(
    y: Any,
    y_cf: Any,
    epsilon: float,
    *,
    n_features: int = 256,
    bandwidth: float | str = "median",
    alpha: float = 0.05,
    seed: int | np.random.Generator | None = None,
    chunk_rows: int = 4096,
) -> CFCLOTRFFResult:
    """CF-CLOT with random Fourier features: test ``H0: N-TE <= epsilon`` in ``O(m D)`` time and ``O(chunk D)`` memory.

    The two passes of the distributed version (:func:`rff_pair_sums`, :func:`rff_row_sums`,
    :func:`cfclot_rff_finish`) on arrays in memory: the same numbers as any partitioning of the same rows.

    Parameters
    ----------
    y, y_cf : array-like, shape (m,) or (m, d)
        Factual and counterfactual outputs; row ``i`` of each belongs to unit ``i``.
    epsilon : float
        Tolerated N-TE (of the exact Gaussian kernel), in ``(0, 1)``.
    n_features : int
        Random Fourier features ``D``; the standard error includes their randomness, so fewer features cost power,
        not level.
    bandwidth : float or "median"
        Gaussian bandwidth; ``"median"``: median heuristic on the pooled outputs (a subsample of 1000).
    alpha : float
        Level, in ``(0, 1)``.
    seed : int, Generator or None
        Randomness of the median heuristic's subsample (when it needs one), then of the features.
    chunk_rows : int
        Rows whose features are held at once.

    Returns
    -------
    CFCLOTRFFResult

    Raises
    ------
    ValueError
        Samples of different lengths or dimensions, NaN, fewer than 2 pairs, ``epsilon`` outside ``(0, 1)``.

    Warns
    -----
    cflib.CflibWarning
        As :func:`cfclot_rff_finish`.
    """
    y, y_cf = as_2d(y, "y"), as_2d(y_cf, "y_cf")
    check_same_rows(y, y_cf, ("y", "y_cf"), "row i holds the factual and counterfactual output of unit i")
    check_same_dim(y, y_cf, ("y", "y_cf"))
    epsilon = _check_epsilon(epsilon)
    alpha = check_alpha(alpha)
    n_features = check_count(n_features, "n_features", minimum=2)
    rng = as_generator(seed)
    s = float(make_kernel("gaussian", bandwidth).fit(y, y_cf, seed=rng).bandwidth)
    fmap = rff_map(y.shape[1], n_features=n_features, bandwidth=s, seed=rng)
    chunk_rows = check_count(chunk_rows, "chunk_rows")
    if y.shape[0] > chunk_rows:  # the two passes of the distributed version, features recomputed in each
        pair_sums = rff_pair_sums(y, y_cf, fmap, chunk_rows=chunk_rows)
        row_sums = rff_row_sums(y, y_cf, fmap, pair_sums, epsilon, chunk_rows=chunk_rows)
    else:  # one block: the same per-row values, the features computed once
        f, g = fmap.transform(y), fmap.transform(y_cf)
        pair_sums = RFFPairSums(y.shape[0], _pair_block(f, g))
        row_sums = RFFRowSums(y.shape[0], _row_block(f, g, pair_sums.totals(), epsilon, y.shape[0]), epsilon)
    return cfclot_rff_finish(pair_sums, row_sums, fmap, alpha=alpha)
