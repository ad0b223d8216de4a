"""N-TE (the NAMMD treatment effect) and the CF-CLOT distribution-closeness test.

Implements Fu et al. (2025), *Testing for Causal Fairness*: Definition 4 / Eq. 8 and 23 (population
N-TE), Eq. 9-10 (the ratio-of-U-statistics estimator), Theorem 1 and Eq. 13 (normal threshold
``tau = eps + sigma z_{1-alpha} / sqrt(m)``), Eq. 11 and Algorithm 1 (bootstrap), Sec. 4.2 (the
``eps = 0`` case is an MMD two-sample test). Equation numbers follow the paper; the corrections are
those of the implementation notes (``papers/notes/002_testing_causal_fairness_cfclot.md``):

* ``variance="paper"`` is the paper's Eq. 13 standard error, built from the U-statistic variance
  components ``zeta_1, zeta_2`` of ``H`` alone; Theorem 1's proof treats the denominator as a
  constant, which under-estimates the spread for larger ``eps``.
* ``variance="delta"`` (default) is the delta-method standard error of the ratio: because factual and
  counterfactual outputs of the same units form the pairs of both U-statistics,
  ``N-TE_hat - eps = mean(G) / mean(D)`` exactly with ``G = H - eps D``, so the variance components of
  ``G`` give the right asymptotic variance at the boundary ``N-TE = eps``.
* Eq. 11's multinomial weights ``w_i - 1/m`` are not centred; ``method="bootstrap"`` uses the centred
  ``w_i - 1`` at ``eps = 0`` and resamples units (uncentred weights) for ``eps > 0``;
  ``method="bootstrap-literal"`` keeps the paper's weights, for comparison only.

Closed forms of the population N-TE for Gaussian and Bernoulli outputs (notes, claim C4) are given
for checking the estimator and for reading ``eps`` as a gap between rates.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from ..results import BaseTestResult, check_alpha
from ..runtime import as_generator, get_device
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_axes,
    check_choice,
    check_count,
    check_finite,
    check_positive,
    check_probability,
    check_real,
    describe,
    warn,
)
from .engine import quadratic_forms
from .kernels import Kernel, as_2d, make_kernel, to_tensor
from .mmd import check_same_dim, check_same_rows, resampling_warnings, signflip_null

if TYPE_CHECKING:
    import torch

__all__ = [
    "CFCLOTResult",
    "cfclot_test",
    "cfclot_statistics",
    "cfclot_statistics_batch",
    "nte",
    "mte",
    "nte_gaussian",
    "nte_bernoulli",
    "nte_sup_gaussian",
    "shift_for_target_nte",
    "gap_for_target_nte",
    "gaussian_pair_sample",
    "hoeffding_bound",
    "simulate_cfclot",
]

_METHODS = ("auto", "normal", "bootstrap", "signflip", "bootstrap-literal")
_VARIANCES = ("delta", "paper")
#: Fewest pairs for the normal threshold of Eq. 13 (a z-score of a ratio of U-statistics).
MIN_NORMAL_PAIRS = 30


# --------------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------------
def _check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    if not isinstance(epsilon, (int, float, np.floating, np.integer)) or isinstance(epsilon, (bool, np.bool_)):
        raise ValidationTypeError(
            f"{name} must be a number in [0, 1), got {describe(epsilon)} ({type(epsilon).__name__})"
        )
    if not np.isfinite(epsilon) or not (0 <= epsilon < 1):
        raise ValidationError(f"{name} must lie in [0, 1) because N-TE is normalised to [0, 1], got {epsilon!r}")
    return float(epsilon)


def _check_pairs(y: Any, y_cf: Any) -> tuple[np.ndarray, np.ndarray]:
    y = as_2d(y, "y")
    y_cf = as_2d(y_cf, "y_cf")
    check_same_rows(y, y_cf, ("y", "y_cf"), "row i holds the factual and counterfactual output of unit i")
    check_same_dim(y, y_cf, ("y", "y_cf"))
    return y, y_cf


# --------------------------------------------------------------------------------------------------
# sufficient statistics over (possibly repeated) pair-units
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairStats:
    """Pair-unit types, their counts and type-level kernel blocks (diagonals kept).

    The sufficient statistics of CF-CLOT (:func:`pair_stats`): every statistic and resampling null of
    :func:`cfclot_test` is a quadratic form in the unit weights over these blocks.
    """

    h: torch.Tensor  # (u, u): H between types; H(z, z) is the value for two *different* units of type z
    d: torch.Tensor  # (u, u): D between types
    counts: torch.Tensor  # (u,)
    inverse: np.ndarray  # unit -> type
    m: int
    K: float


def pair_stats(y: np.ndarray, y_cf: np.ndarray, kernel: Kernel, device: Any) -> PairStats:
    """The pair-unit types of ``(y, y_cf)`` (repeated pairs merged, with counts) and their kernel blocks ``H`` and ``D``.

    Parameters
    ----------
    y, y_cf : numpy.ndarray, shape (m, d)
        Checked factual and counterfactual outputs, row ``i`` of each from unit ``i``.
    kernel : Kernel
        A fitted kernel.
    device : str or torch.device
        Where the blocks are computed.

    Returns
    -------
    PairStats
    """
    import torch

    m = y.shape[0]
    pairs = np.concatenate([y, y_cf], axis=1)
    uniq, inverse, counts = np.unique(pairs, axis=0, return_inverse=True, return_counts=True)
    inverse = np.asarray(inverse).reshape(-1)
    if uniq.shape[0] == m:  # all pair-units distinct: keep the original order (no compression)
        uniq, inverse, counts = pairs, np.arange(m), np.ones(m, dtype=np.int64)
    dim = y.shape[1]
    dev = get_device(device)
    a = to_tensor(uniq[:, :dim], dev)
    b = to_tensor(uniq[:, dim:], dev)
    kaa, kbb, kab = kernel.gram(a), kernel.gram(b), kernel.gram(a, b)
    K = kernel.upper_bound
    return PairStats(
        h=kaa + kbb - kab - kab.T,
        d=4.0 * K - kaa - kbb,
        counts=torch.as_tensor(counts, dtype=torch.float64, device=dev),
        inverse=inverse,
        m=m,
        K=K,
    )


def _offdiag_sum(a: torch.Tensor, c: torch.Tensor) -> float:
    """Sum over ordered pairs of distinct units, ``sum_{i != j} A_ij``, from type-level ``A``."""
    return float(c @ (a @ c) - (c * a.diagonal()).sum())


def _zetas(total: Any, row_sq: Any, sq: Any, m: int) -> tuple[Any, Any]:
    """Unbiased variance components of an order-2 U-statistic from three sums over distinct units.

    ``total = sum_{i!=j} g_ij``, ``row_sq = sum_i r_i^2`` with ``r_i = sum_{j!=i} g_ij``, and
    ``sq = sum_{i!=j} g_ij^2``. Splitting ``total^2`` by how many indices two ordered pairs share gives
    the sums over distinct triples (``row_sq - sq``) and quadruples (``total^2 - 2 sq - 4 triples``),
    hence unbiased estimates of ``E[g12 g13]``, ``E[g12^2]`` and ``(E g12)^2``. The plug-in
    ``mean_i rbar_i^2 - U^2`` is biased upwards by about ``zeta_2 / m`` (the noise of each row mean),
    which makes the test conservative at small ``m``. The sums are floats, or tensors of them (one per replication).
    """
    triples = row_sq - sq
    quads = total * total - 2 * sq - 4 * triples
    e_g12_g13 = triples / (m * (m - 1) * (m - 2))
    e_g12_g34 = quads / (m * (m - 1) * (m - 2) * (m - 3))
    return e_g12_g13 - e_g12_g34, sq / (m * (m - 1)) - e_g12_g34


def _moments(g: torch.Tensor, c: torch.Tensor, m: int) -> tuple[float, float, float]:
    """U-statistic mean and unbiased variance components ``zeta_1``, ``zeta_2`` of kernel ``g``."""
    total = _offdiag_sum(g, c)
    r = g @ c - g.diagonal()  # row sum of each unit of a type, excluding the unit itself
    row_sq = float((c * r * r).sum())
    sq = _offdiag_sum(g * g, c)
    if m < 4:  # the unbiased (E g)^2 needs four distinct units: fall back to plug-in components
        u = total / (m * (m - 1))
        return u, row_sq / (m * (m - 1) ** 2) - u * u, sq / (m * (m - 1)) - u * u
    zeta1, zeta2 = _zetas(total, row_sq, sq, m)
    return total / (m * (m - 1)), float(zeta1), float(zeta2)


def _sigma(zeta1: float, zeta2: float, m: int, mean_d: float) -> float:
    # exact finite-sample variance of an order-2 U-statistic, times m (Hoeffding; notes Sec. 2.7)
    var_m = ((4 * m - 8) * zeta1 + 2 * zeta2) / (m - 1)
    return float(np.sqrt(max(var_m, 0.0)) / mean_d)


def cfclot_statistics(
    y: Any,
    y_cf: Any,
    epsilon: float = 0.0,
    *,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    device: Any = "cpu",
    seed: int | np.random.Generator | None = 0,
) -> dict[str, float]:
    """Estimated N-TE and both standard errors of CF-CLOT, without a decision.

    Works in ``O(u^2)`` for ``u`` distinct (factual, counterfactual) pairs, so hard-label or other
    discrete outputs cost ``O(m)`` whatever the sample size (notes, Sec. 2.5).

    Parameters
    ----------
    y, y_cf : array-like, shape (m,) or (m, d)
        Factual and counterfactual outputs; row ``i`` of each belongs to unit ``i``.
    epsilon : float
        The tolerance in ``[0, 1)``; enters the delta-method standard error.
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
    device : str or torch.device
    seed : int, Generator or None
        Subsampling randomness of the median heuristic on large samples.

    Returns
    -------
    dict
        ``statistic`` (N-TE estimate, Eq. 10), ``mte`` (its numerator, the paired MMD_u^2, Eq. 21),
        ``mean_d`` (its denominator), ``sigma_delta``, ``sigma_paper`` (standard deviations of
        ``sqrt(m) * statistic``), ``m`` and ``bandwidth``.
    """
    y, y_cf = _check_pairs(y, y_cf)
    epsilon = _check_epsilon(epsilon)
    k = make_kernel(kernel, bandwidth).fit(y, y_cf, seed=seed)
    ps = pair_stats(y, y_cf, k, device)
    return _stats_from(ps, epsilon, k)


def _stats_from(ps: PairStats, epsilon: float, k: Kernel) -> dict[str, float]:
    m, c = ps.m, ps.counts
    pairs = m * (m - 1)
    num = _offdiag_sum(ps.h, c)
    den = _offdiag_sum(ps.d, c)
    mean_d = den / pairs
    _, z1p, z2p = _moments(ps.h, c, m)
    _, z1d, z2d = _moments(ps.h - epsilon * ps.d, c, m)
    return {
        "statistic": num / den,
        "mte": num / pairs,
        "mean_d": mean_d,
        "sigma_delta": _sigma(z1d, z2d, m, mean_d),
        "sigma_paper": _sigma(z1p, z2p, m, mean_d),
        "m": m,
        "bandwidth": float(k.bandwidth),
    }


def cfclot_statistics_batch(
    y: Any,
    y_cf: Any,
    epsilon: float,
    *,
    kernel: str | Kernel = "gaussian",
    bandwidth: float = 1.0,
    device: Any = "cpu",
    chunk: int = 64,
) -> pd.DataFrame:
    """:func:`cfclot_statistics` for many replications at once (for simulation studies).

    Parameters
    ----------
    y, y_cf : array-like, shape (R, m) or (R, m, d)
        ``R`` independent replications of ``m`` pairs each.
    epsilon : float
        Tolerance in ``[0, 1)``.
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float
        A fixed number: in a simulation the target N-TE must not move with a data-chosen bandwidth.
    device : str or torch.device
    chunk : int
        Replications per batched kernel computation (memory is ``3 * chunk * m^2`` numbers).

    Returns
    -------
    pandas.DataFrame
        One row per replication: ``statistic, mte, mean_d, sigma_delta, sigma_paper``.
    """
    import torch

    epsilon = _check_epsilon(epsilon)
    chunk = check_count(chunk, "chunk")
    k = make_kernel(kernel, bandwidth)
    if not k.is_fitted:
        raise ValidationError("cfclot_statistics_batch needs a numeric bandwidth (the simulated truth depends on it)")
    yy, yc = _replications(y, "y"), _replications(y_cf, "y_cf")
    if yy.shape != yc.shape:
        raise ValidationError(
            f"y and y_cf must have the same shape (R, m) or (R, m, d), got {np.shape(y)} and {np.shape(y_cf)}"
        )
    n_rep, m, _ = yy.shape
    if n_rep < 1:
        raise ValidationError(f"y and y_cf must hold at least one replication, got shape {np.shape(y)}")
    dev = get_device(device)
    s = float(k.bandwidth)
    K = k.upper_bound
    pairs = m * (m - 1)

    def gram(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        if k.name == "gaussian":
            d2 = (a * a).sum(-1)[:, :, None] + (b * b).sum(-1)[:, None, :] - 2 * a @ b.transpose(1, 2)
            return torch.exp(-d2.clamp_min(0) / (2 * s * s))
        return torch.exp(-torch.cdist(a, b, p=1.0) / s)

    if m < 4:
        raise ValidationError(f"cfclot_statistics_batch needs m >= 4 pairs per replication, got {m}")

    def sigma(tot: torch.Tensor, row: torch.Tensor, sq: torch.Tensor, mean_d: torch.Tensor) -> torch.Tensor:
        z1, z2 = _zetas(tot, row, sq, m)
        return torch.sqrt(torch.clamp(((4 * m - 8) * z1 + 2 * z2) / (m - 1), min=0.0)) / mean_d

    def bsum(
        a: torch.Tensor, b: torch.Tensor | None = None
    ) -> torch.Tensor:  # per-replication sum of a (or of a * b) without keeping the product
        return a.sum((1, 2)) if b is None else torch.einsum("rij,rij->r", a, b)

    rows = []
    for start in range(0, n_rep, chunk):
        a = torch.as_tensor(yy[start : start + chunk], device=dev)
        b = torch.as_tensor(yc[start : start + chunk], device=dev)
        # w = Kaa + Kbb and h = w - Kab - Kab^T with zero diagonals; D = 4K - w off the diagonal, so every
        # sum over D follows from sums over w (fewer m x m temporaries: this runs thousands of times)
        w = gram(a, a).add_(gram(b, b))
        kab = gram(a, b)
        h = (w - kab).sub_(kab.transpose(1, 2))
        del kab
        w.diagonal(dim1=1, dim2=2).zero_()
        h.diagonal(dim1=1, dim2=2).zero_()
        s_h, s_w = bsum(h), bsum(w)
        r_h, r_w = h.sum(2), w.sum(2)
        s_hh, s_hw, s_ww = bsum(h, h), bsum(h, w), bsum(w, w)
        s_d = 4 * K * pairs - s_w
        r_d = 4 * K * (m - 1) - r_w
        s_dd = 16 * K * K * pairs - 8 * K * s_w + s_ww
        s_hd = 4 * K * s_h - s_hw
        mean_d = s_d / pairs
        # G = H - eps D: its sums are linear in those of H and D
        s_g = s_h - epsilon * s_d
        r_g = r_h - epsilon * r_d
        s_gg = s_hh - 2 * epsilon * s_hd + epsilon**2 * s_dd
        rows.append(
            torch.stack(
                [
                    s_h / s_d,
                    s_h / pairs,
                    mean_d,
                    sigma(s_g, (r_g * r_g).sum(1), s_gg, mean_d),
                    sigma(s_h, (r_h * r_h).sum(1), s_hh, mean_d),
                ],
                dim=1,
            )
            .cpu()
            .numpy()
        )
    return pd.DataFrame(np.concatenate(rows), columns=["statistic", "mte", "mean_d", "sigma_delta", "sigma_paper"])


def _replications(y: Any, name: str) -> np.ndarray:
    """Replications of paired outputs as a finite float64 ``(R, m, d)`` array."""
    if y is None or isinstance(y, (str, bytes)):
        raise ValidationTypeError(f"{name} must be a numeric array of shape (R, m) or (R, m, d), got {describe(y)}")
    arr = np.asarray(y)
    if arr.dtype.kind not in "biuf":
        raise ValidationTypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim == 2:
        arr = arr[..., None]
    if arr.ndim != 3:
        raise ValidationError(f"{name} must have shape (R, m) or (R, m, d), got {np.shape(y)}")
    return check_finite(arr, name)


# --------------------------------------------------------------------------------------------------
# estimators
# --------------------------------------------------------------------------------------------------
def nte(
    y: Any,
    y_cf: Any,
    *,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    device: Any = "cpu",
) -> float:
    """The N-TE estimator (Eq. 10): ``sum_{i!=j} H_ij / sum_{i!=j} D_ij``.

    Parameters
    ----------
    y, y_cf : array-like, shape (m,) or (m, d)
        Factual and counterfactual outputs (row ``i`` of each from unit ``i``; independent samples of
        equal size work too).
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
    device : str or torch.device

    Returns
    -------
    float
        Estimated N-TE; consistent for ``MMD^2 / (4K - ||mu_P||^2 - ||mu_Q||^2)``. Can be slightly
        negative (the numerator is unbiased, not non-negative); never clip it inside a test.
    """
    return cfclot_statistics(y, y_cf, 0.0, kernel=kernel, bandwidth=bandwidth, device=device)["statistic"]


def mte(
    y: Any,
    y_cf: Any,
    *,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    device: Any = "cpu",
) -> float:
    """The M-TE estimator (Eq. 21): the paired unbiased MMD^2, the numerator of N-TE.

    Parameters
    ----------
    y, y_cf : array-like, shape (m,) or (m, d)
    kernel, bandwidth, device
        As in :func:`nte`.

    Returns
    -------
    float
    """
    return cfclot_statistics(y, y_cf, 0.0, kernel=kernel, bandwidth=bandwidth, device=device)["mte"]


def nte_gaussian(
    delta: Any,
    *,
    tau1: float = 1.0,
    tau2: float = 1.0,
    d: int = 1,
    bandwidth: float = 1.0,
) -> np.ndarray | float:
    """Population N-TE between ``N(mu1, tau1^2 I_d)`` and ``N(mu2, tau2^2 I_d)`` for the Gaussian kernel.

    With ``s`` the bandwidth and ``delta = ||mu1 - mu2||`` (notes, claim C4)::

        A = (s^2 / (s^2 + 2 tau1^2))^(d/2),   B = (s^2 / (s^2 + 2 tau2^2))^(d/2)
        C = (s^2 / (s^2 + tau1^2 + tau2^2))^(d/2) exp(-delta^2 / (2 (s^2 + tau1^2 + tau2^2)))
        N-TE = (A + B - 2C) / (4 - A - B)

    Parameters
    ----------
    delta : float or array-like
        Euclidean distance between the means.
    tau1, tau2 : float
        Standard deviations (per coordinate).
    d : int
        Dimension.
    bandwidth : float
        Kernel bandwidth ``s``.

    Returns
    -------
    float or numpy.ndarray
    """
    tau1, tau2, bandwidth = (
        check_positive(v, nm) for nm, v in (("tau1", tau1), ("tau2", tau2), ("bandwidth", bandwidth))
    )
    d = check_count(d, "d")
    s2 = float(bandwidth) ** 2
    delta = _real_array(delta, "delta")
    a = (s2 / (s2 + 2 * tau1**2)) ** (d / 2)
    b = (s2 / (s2 + 2 * tau2**2)) ** (d / 2)
    v = s2 + tau1**2 + tau2**2
    c = (s2 / v) ** (d / 2) * np.exp(-(delta**2) / (2 * v))
    out = (a + b - 2 * c) / (4 - a - b)
    return float(out) if out.ndim == 0 else out


def nte_sup_gaussian(*, tau: float = 1.0, d: int = 1, bandwidth: float = 1.0) -> float:
    """Supremum over location shifts of :func:`nte_gaussian` with ``tau1 = tau2 = tau`` (0.4058 for 1-D, s = tau = 1).

    Parameters
    ----------
    tau : float
        Standard deviation of both laws (``> 0``).
    d : int
        Dimension.
    bandwidth : float
        Kernel bandwidth ``s > 0``.

    Returns
    -------
    float
    """
    tau, bandwidth, d = check_positive(tau, "tau"), check_positive(bandwidth, "bandwidth"), check_count(d, "d")
    a = (bandwidth**2 / (bandwidth**2 + 2 * tau**2)) ** (d / 2)
    return float(2 * a / (4 - 2 * a))


def shift_for_target_nte(epsilon: float, *, tau: float = 1.0, d: int = 1, bandwidth: float = 1.0) -> float:
    """Location shift ``delta`` at which two ``N(., tau^2 I_d)`` laws have N-TE equal to ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target in ``[0, sup)``, with ``sup`` from :func:`nte_sup_gaussian`.
    tau, d, bandwidth
        As in :func:`nte_gaussian`.

    Returns
    -------
    float
        ``delta >= 0``.

    Raises
    ------
    ValueError
        If ``epsilon`` is not reachable by any shift with this kernel and scale.
    """
    epsilon = _check_epsilon(epsilon)
    sup = nte_sup_gaussian(tau=tau, d=d, bandwidth=bandwidth)  # checks tau, d and bandwidth
    if epsilon >= sup:
        raise ValueError(
            f"epsilon={epsilon} is unreachable: location shifts of N(., {tau}^2 I_{d}) with bandwidth {bandwidth} "
            f"give N-TE below {sup:.4f}; lower epsilon or use a larger bandwidth relative to tau"
        )
    if epsilon == 0:
        return 0.0

    def f(x: float) -> float:
        return float(nte_gaussian(x, tau1=tau, tau2=tau, d=d, bandwidth=bandwidth)) - epsilon

    hi = 1.0
    while f(hi) < 0:
        hi *= 2
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-12))


def nte_bernoulli(p1: Any, p2: Any, *, r: float = 0.0) -> np.ndarray | float:
    """Population N-TE between Bernoulli(p1) and Bernoulli(p2) outputs in ``{0, 1}``.

    With ``r = k(0, 1)`` (``r = exp(-1 / (2 s^2))`` for the Gaussian kernel; ``r -> 0`` as ``s -> 0``)::

        A = 1 - 2 p1 (1 - p1)(1 - r),   B = 1 - 2 p2 (1 - p2)(1 - r)
        N-TE = 2 (1 - r)(p1 - p2)^2 / (4 - A - B)

    Parameters
    ----------
    p1, p2 : float or array-like
        Positive rates in ``[0, 1]``.
    r : float
        Kernel value between the two outcomes, in ``[0, 1)``.

    Returns
    -------
    float or numpy.ndarray
    """
    p1, p2 = _real_array(p1, "p1"), _real_array(p2, "p2")
    for name, p in (("p1", p1), ("p2", p2)):
        if np.any((p < 0) | (p > 1)):
            raise ValidationError(f"{name} must hold probabilities in [0, 1], got values in [{p.min():g}, {p.max():g}]")
    r = check_real(r, "r", low=0.0, high=1.0, high_open=True)
    a = 1 - 2 * p1 * (1 - p1) * (1 - r)
    b = 1 - 2 * p2 * (1 - p2) * (1 - r)
    out = 2 * (1 - r) * (p1 - p2) ** 2 / (4 - a - b)
    return float(out) if out.ndim == 0 else out


def gap_for_target_nte(epsilon: float, *, r: float = 0.0, center: float = 0.5) -> float:
    """Gap ``p1 - p2`` between two rates centred on ``center`` whose Bernoulli N-TE equals ``epsilon``.

    Parameters
    ----------
    epsilon : float
        Target N-TE in ``[0, 1)``.
    r : float
        Kernel value ``k(0, 1)``.
    center : float
        Midpoint of the two rates (0.5: rates ``0.5 +- gap / 2``).

    Returns
    -------
    float
        The gap in ``[0, 2 min(center, 1 - center)]``.

    Raises
    ------
    ValueError
        If no gap around ``center`` reaches ``epsilon``.
    """
    epsilon = _check_epsilon(epsilon)
    r = check_real(r, "r", low=0.0, high=1.0, high_open=True)
    center = check_probability(center, "center")
    gmax = 2 * min(center, 1 - center)

    def f(g: float) -> float:
        return float(nte_bernoulli(center + g / 2, center - g / 2, r=r)) - epsilon

    if f(gmax) < 0:
        raise ValueError(f"epsilon={epsilon} is unreachable with rates centred on {center} and r={r}")
    if epsilon == 0:
        return 0.0
    return float(optimize.brentq(f, 0.0, gmax, xtol=1e-12))


def _real_array(value: Any, name: str) -> np.ndarray:
    """A finite float array (or scalar) of real numbers."""
    if value is None or isinstance(value, (str, bytes)):
        raise ValidationTypeError(f"{name} must be a real number or an array of them, got {describe(value)}")
    arr = np.asarray(value)
    if arr.dtype.kind not in "biuf":
        raise ValidationTypeError(f"{name} must be a real number or an array of them, got dtype {arr.dtype}")
    if arr.size == 0:
        raise ValidationError(f"{name} must not be empty")
    return check_finite(np.asarray(arr, dtype=float), name)


def hoeffding_bound(t: Any, m: int, *, width: float) -> np.ndarray | float:
    """Hoeffding's bound for an order-2 U-statistic (the paper's Theorem 4).

    ``P(|U - E U| >= t) <= 2 exp(-2 floor(m/2) t^2 / width^2)``, with ``width = b - a`` the range of the
    kernel: ``4K`` for ``H`` and ``2K`` for ``D``.

    Parameters
    ----------
    t : float or array-like
        Deviation(s).
    m : int
        Sample size.
    width : float
        Range of the U-statistic's kernel.

    Returns
    -------
    float or numpy.ndarray
        The bound, capped at 1.
    """
    t = _real_array(t, "t")
    m = check_count(m, "m")
    width = check_positive(width, "width")
    out = np.minimum(1.0, 2 * np.exp(-2 * (m // 2) * t**2 / width**2))
    return float(out) if out.ndim == 0 else out


def gaussian_pair_sample(
    m: int,
    delta: float,
    *,
    d: int = 1,
    tau1: float = 1.0,
    tau2: float = 1.0,
    n_reps: int | None = None,
    seed: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Draw factual ``N(0, tau1^2 I)`` and counterfactual ``N(delta e_1, tau2^2 I)`` outputs.

    A synthetic stand-in with a known population N-TE (:func:`nte_gaussian`), used to check calibration.

    Parameters
    ----------
    m : int
        Pairs per replication.
    delta : float
        Mean shift along the first coordinate.
    d : int
        Dimension.
    tau1, tau2 : float
        Standard deviations.
    n_reps : int, optional
        If given, return ``n_reps`` replications stacked on a leading axis.
    seed : int, Generator or None

    Returns
    -------
    (y, y_cf) : tuple of numpy.ndarray
        Shape ``(m, d)``, or ``(n_reps, m, d)``.
    """
    m = check_count(m, "m", minimum=2)
    d = check_count(d, "d")
    delta = check_real(delta, "delta")
    tau1, tau2 = check_positive(tau1, "tau1"), check_positive(tau2, "tau2")
    shape = (m, d) if n_reps is None else (check_count(n_reps, "n_reps"), m, d)
    rng = as_generator(seed)
    y = rng.normal(0.0, tau1, size=shape)
    y_cf = rng.normal(0.0, tau2, size=shape)
    y_cf[..., 0] += delta
    return y, y_cf


# --------------------------------------------------------------------------------------------------
# the test
# --------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CFCLOTResult(BaseTestResult):
    """Result of :func:`cfclot_test` for ``H0: N-TE <= epsilon`` against ``H1: N-TE > epsilon``.

    Attributes
    ----------
    statistic : float
        Estimated N-TE (Eq. 10).
    pvalue : float
        ``1 - Phi(sqrt(m) (statistic - epsilon) / sigma)`` for the normal method; a resampling p-value
        ``(1 + #{null >= statistic}) / (1 + B)`` otherwise.
    rejected : bool
        The decision at the test's ``alpha``: ``True`` when the model is judged epsilon-unfair for this
        attribute (:meth:`reject` gives it at any level).
    threshold : float
        Rejection threshold on the N-TE scale (Eq. 13 for the normal method; the ``1 - alpha``
        quantile of the resampling null otherwise).
    sigma : float or None
        Standard deviation of ``sqrt(m) * statistic`` used by the normal method.
    epsilon, alpha : float
    m : int
    method : str
    variance : str or None
    kernel : Kernel
        With the bandwidth actually used.
    mte : float
        Numerator of the statistic (the paired MMD_u^2, M-TE).
    null_distribution : numpy.ndarray or None
        Resampling replicates on the N-TE scale.
    warnings : tuple of str
        Why the decision may be unreliable (too few pairs for the normal threshold, too few draws or
        units for a resampling null); empty when it is not.

    Notes
    -----
    ``rejected`` is the decision at the ``alpha`` given to :func:`cfclot_test` (checked there);
    :meth:`reject` gives the decision at another level (the normal threshold, Eq. 13, moves with it).
    """

    statistic: float
    pvalue: float
    rejected: bool
    threshold: float
    sigma: float | None
    epsilon: float
    alpha: float
    m: int
    method: str
    variance: str | None
    kernel: Kernel
    mte: float
    null_distribution: np.ndarray | None = field(default=None, repr=False)
    warnings: tuple[str, ...] = ()

    def reject(self, alpha: float | None = None) -> bool:
        """Whether the test judges the model epsilon-unfair at level ``alpha``.

        Parameters
        ----------
        alpha : float, optional
            Significance level in (0, 1); the test's own ``alpha`` when omitted (then :attr:`rejected`).

        Returns
        -------
        bool
            Normal method: the N-TE above Eq. 13's threshold ``epsilon + z_{1 - alpha} sigma / sqrt(m)``;
            resampling methods: ``pvalue <= alpha``.
        """
        if alpha is None:
            return self.rejected
        alpha = check_alpha(alpha)
        if self.method != "normal":
            return bool(self.pvalue <= alpha)
        threshold = self.epsilon + (self.sigma or 0.0) * stats.norm.ppf(1 - alpha) / np.sqrt(self.m)
        return bool(self.statistic > threshold)

    def summary(self) -> pd.DataFrame:
        """One-row table with the statistic, threshold, p-value, decision and settings (and the warnings, if any)."""
        df = pd.DataFrame(
            [
                {
                    "N-TE": self.statistic,
                    "epsilon": self.epsilon,
                    "threshold": self.threshold,
                    "sigma": self.sigma,
                    "pvalue": self.pvalue,
                    "reject": self.rejected,
                    "alpha": self.alpha,
                    "m": self.m,
                    "method": self.method,
                    "variance": self.variance,
                    "bandwidth": float(self.kernel.bandwidth),
                }
            ]
        )
        if self.warnings:
            df["warning"] = "; ".join(self.warnings)
        return df

    def plot(self, ax: Any = None) -> Any:
        """The null distribution used (normal density or resampling histogram) with the statistic.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if check_axes(ax) is None else ax
        if self.null_distribution is not None:
            ax.hist(self.null_distribution, bins=40, density=True, color="0.75", label=f"{self.method} null")
        elif self.sigma and self.sigma > 0:
            sd = self.sigma / np.sqrt(self.m)
            grid = np.linspace(self.epsilon - 4 * sd, max(self.epsilon + 4 * sd, self.statistic + sd), 300)
            ax.plot(
                grid, stats.norm.pdf(grid, self.epsilon, sd), color="0.4", label="normal null at N-TE = $\\epsilon$"
            )
        ax.axvline(self.threshold, color="0.3", ls="--", lw=1, label="threshold")
        ax.axvline(self.statistic, color="C3", lw=2, label=f"N-TE = {self.statistic:.3g} (p = {self.pvalue:.3g})")
        ax.set_xlabel("N-TE")
        ax.set_ylabel("density")
        ax.legend(fontsize=8)
        return ax


def cfclot_test(
    y: Any,
    y_cf: Any,
    epsilon: float,
    *,
    alpha: float = 0.05,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    variance: str = "delta",
    method: str = "auto",
    n_boot: int = 500,
    seed: int | np.random.Generator | None = None,
    device: Any = "cpu",
    max_dense: int = 6000,
) -> CFCLOTResult:
    """CF-CLOT: test ``H0: N-TE(P_y, P_ycf) <= epsilon`` (epsilon-counterfactual closeness fairness).

    Parameters
    ----------
    y, y_cf : array-like, shape (m,) or (m, d)
        Factual and counterfactual model outputs; row ``i`` of each belongs to unit ``i``.
    epsilon : float
        Tolerated N-TE, in ``[0, 1)``. ``0`` is the paper's "strong" level: a two-sample test.
    alpha : float
        Level, in ``(0, 1)`` (the paper never states one; 0.05).
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
        ``"median"``: median heuristic on the pooled factual and counterfactual outputs.
    variance : {"delta", "paper"}
        Standard error of the normal method: ``delta`` (calibrated, default) or ``paper`` (Eq. 13 as
        printed, anti-conservative for larger ``epsilon``).
    method : {"auto", "normal", "bootstrap", "signflip", "bootstrap-literal"}
        ``normal``: the threshold of Eq. 13. ``bootstrap``: for ``epsilon > 0`` resample units and
        compare ``statistic - epsilon`` with the spread of ``T_b - statistic``; for ``epsilon = 0`` the
        centred multinomial bootstrap (Eq. 11 with ``w_i - 1``). ``signflip``: exact within-pair swap test
        (``epsilon = 0`` only). ``bootstrap-literal``: Eq. 11 with the paper's ``w_i - 1/m``
        (``epsilon = 0`` only; shown to be invalid). ``auto``: ``normal`` if ``epsilon > 0`` else ``signflip``.
    n_boot : int
        Resampling draws.
    seed : int, Generator or None
        Randomness of the resampling (and of the median heuristic's subsample).
    device : str or torch.device
    max_dense : int
        Largest ``m`` for the resampling methods, which need ``m x m`` matrices; subsample above it.

    Returns
    -------
    CFCLOTResult

    Raises
    ------
    ValueError
        On samples of different lengths, NaN, fewer than 2 pairs, ``epsilon`` outside ``[0, 1)``,
        ``alpha`` outside ``(0, 1)``, an unknown method/variance, or a method that needs ``epsilon = 0``.

    Warns
    -----
    cflib.CflibWarning
        The normal threshold with fewer than :data:`MIN_NORMAL_PAIRS` pairs; a resampling null whose
        p-value cannot go below ``alpha`` (too few draws ``n_boot`` or too few pairs). Recorded in
        :attr:`CFCLOTResult.warnings`.
    """
    y, y_cf = _check_pairs(y, y_cf)
    epsilon = _check_epsilon(epsilon)
    alpha = check_alpha(alpha)
    check_choice(variance, "variance", _VARIANCES)
    check_choice(method, "method", _METHODS)
    if method == "auto":
        method = "normal" if epsilon > 0 else "signflip"
    if method in ("signflip", "bootstrap-literal") and epsilon != 0:
        raise ValidationError(f"method={method!r} simulates the null N-TE = 0 and needs epsilon=0, got {epsilon}")
    n_boot = check_count(n_boot, "n_boot")
    max_dense = check_count(max_dense, "max_dense", minimum=2)
    m = y.shape[0]
    notes: tuple[str, ...]
    if method == "normal":
        notes = (
            ()
            if m >= MIN_NORMAL_PAIRS
            else (
                warn(
                    f"cfclot_test: the normal threshold (Eq. 13) is unreliable below {MIN_NORMAL_PAIRS} pairs, got m={m}; "
                    "use more pairs" + (", or method='signflip' (exact)" if epsilon == 0 else "")
                ),
            )
        )
    else:
        # signflip: s and -s give one value; bootstrap: multisets of m units out of m
        distinct = (
            2.0 ** (min(m, 64) - 1) if method == "signflip" else (math.comb(2 * m - 1, m) if m <= 20 else math.inf)
        )
        notes = resampling_warnings(n_boot, distinct, alpha, draws="n_boot", units=f"m={m} pairs")
    rng = as_generator(seed)
    k = make_kernel(kernel, bandwidth).fit(y, y_cf, seed=rng)
    ps = pair_stats(y, y_cf, k, device)
    st = _stats_from(ps, epsilon, k)
    m, t = ps.m, st["statistic"]
    z = stats.norm.ppf(1 - alpha)
    if method == "normal":
        sigma = st["sigma_delta"] if variance == "delta" else st["sigma_paper"]
        threshold = epsilon + sigma * z / np.sqrt(m)
        if sigma > 0:
            pvalue = float(stats.norm.sf(np.sqrt(m) * (t - epsilon) / sigma))
        else:  # no spread at all (e.g. identical outputs): the decision is deterministic
            pvalue = 0.0 if t > epsilon else 1.0
            notes = (
                *notes,
                warn(
                    f"cfclot_test: the estimated variance of the statistic is 0 (a negative unbiased estimate is "
                    f"clipped to 0 near P = Q), so the normal threshold is epsilon itself and the p-value is 0 or 1; "
                    f"use method='bootstrap' for a calibrated decision on these {m} pairs"
                ),
            )
        return CFCLOTResult(
            t,
            pvalue,
            bool(t > threshold),
            float(threshold),
            sigma,
            epsilon,
            float(alpha),
            m,
            "normal",
            variance,
            k,
            st["mte"],
            warnings=notes,
        )
    return _resampling_result(ps, st, k, epsilon, alpha, method, n_boot, max_dense, rng, notes)


def _resampling_result(
    ps: PairStats,
    st: dict[str, float],
    k: Kernel,
    epsilon: float,
    alpha: float,
    method: str,
    n_boot: int,
    max_dense: int,
    rng: np.random.Generator,
    notes: tuple[str, ...],
) -> CFCLOTResult:
    """The decision of :func:`cfclot_test` by a resampling null (every method but ``normal``)."""
    m, t = ps.m, st["statistic"]
    if m > max_dense:
        raise ValidationError(
            f"method={method!r} needs m x m matrices and m={m} exceeds max_dense={max_dense}; "
            "subsample the pairs or raise max_dense"
        )
    null = resample_null(ps, t, epsilon, method, n_boot, rng)
    tol = 1e-12 * max(1.0, abs(t))
    pvalue = float((1 + np.count_nonzero(null >= t - tol)) / (1 + n_boot))
    threshold = float(np.quantile(null, 1 - alpha))
    return CFCLOTResult(
        t,
        pvalue,
        bool(pvalue <= alpha),
        threshold,
        None,
        epsilon,
        float(alpha),
        m,
        method,
        None,
        k,
        st["mte"],
        null,
        notes,
    )


def _type_rows(a: torch.Tensor, inverse: np.ndarray) -> Callable[[int, int, torch.Tensor], torch.Tensor]:
    """Row blocks of the unit-level matrix ``a[inverse][:, inverse]`` with a zero diagonal, never formed whole."""
    import torch

    inv = torch.as_tensor(inverse, device=a.device)
    ar = torch.arange(inv.numel(), device=a.device)
    tmp: list[torch.Tensor] = []

    def rows(i0: int, i1: int, out: torch.Tensor) -> torch.Tensor:
        if not tmp or tmp[0].shape[0] < i1 - i0:
            tmp[:] = [a.new_empty((i1 - i0, a.shape[1]))]  # one scratch block, reused
        t = torch.index_select(a, 0, inv[i0:i1], out=tmp[0][: i1 - i0])
        torch.index_select(t, 1, inv, out=out)
        out[ar[: i1 - i0], ar[i0:i1]] = 0.0
        return out

    return rows


def resample_null(
    ps: PairStats, t: float, epsilon: float, method: str, n_boot: int, rng: np.random.Generator, *, batch: int = 512
) -> np.ndarray:
    """Resampling replicates on the N-TE scale: all draws as quadratic forms of ``H`` (and ``D``) by row blocks.

    Parameters
    ----------
    ps : PairStats
        The pair-unit blocks (:func:`pair_stats`).
    t : float
        The observed N-TE.
    epsilon : float
        The tolerance of the null hypothesis.
    method : {"signflip", "bootstrap", "bootstrap-literal"}
        The resampling scheme of :func:`cfclot_test`.
    n_boot : int
        Number of draws.
    rng : numpy.random.Generator
        Randomness of the draws.
    batch : int
        Draws per call of the generator (fixes the random stream).

    Returns
    -------
    numpy.ndarray
        The ``n_boot`` replicates.
    """
    import torch

    m, dev = ps.m, ps.h.device
    den = _offdiag_sum(ps.d, ps.counts)
    h_rows = _type_rows(ps.h, ps.inverse)
    if method == "signflip":
        return signflip_null(h_rows, n_boot, rng, batch=batch, n_rows=m, device=dev)[1] / den
    draws = np.concatenate(
        [rng.multinomial(m, np.full(m, 1.0 / m), size=min(batch, n_boot - b0)) for b0 in range(0, n_boot, batch)]
    )
    w = torch.as_tensor(draws.T, dtype=torch.float64, device=dev)
    if method == "bootstrap" and epsilon == 0:
        v = w - 1.0  # centred multinomial weights: a degenerate-U-statistic bootstrap of the null
        return quadratic_forms(h_rows, m, v, precision="float64", device=dev).q / den
    if method == "bootstrap-literal":
        v = w - 1.0 / m  # Eq. 11 as printed
        return quadratic_forms(h_rows, m, v, precision="float64", device=dev).q / den
    # resample units; the shifted bootstrap ratio approximates the law of T at N-TE = eps
    num = quadratic_forms(h_rows, m, w, precision="float64", device=dev).q
    dd = quadratic_forms(_type_rows(ps.d, ps.inverse), m, w, precision="float64", device=dev).q
    return epsilon + (num / dd - t)


def simulate_cfclot(
    m: int,
    true_nte: float,
    epsilon: float,
    *,
    n_reps: int = 1000,
    alpha: float = 0.05,
    d: int = 1,
    bandwidth: float = 1.0,
    seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Replicate the normal-threshold CF-CLOT on Gaussian location pairs with a known N-TE.

    Factual outputs ``N(0, I_d)`` and counterfactual outputs ``N(delta e_1, I_d)``, with ``delta`` chosen by
    :func:`shift_for_target_nte` so that the population N-TE equals ``true_nte``; both standard errors
    are evaluated on every replication.

    Parameters
    ----------
    m : int
        Pairs per replication.
    true_nte : float
        Population N-TE of the simulated pair (``= epsilon`` at the null boundary).
    epsilon : float
        Tolerance of the test.
    n_reps : int
        Replications.
    alpha : float
        Level.
    d : int
        Output dimension.
    bandwidth : float
        Fixed Gaussian bandwidth (the truth is defined for it).
    seed : int, Generator or None

    Returns
    -------
    pandas.DataFrame
        One row per replication: ``statistic, sigma_delta, sigma_paper, z_delta, z_paper, reject_delta,
        reject_paper`` (``z = sqrt(m) (statistic - epsilon) / sigma``; reject when ``z > z_{1-alpha}``).
    """
    m = check_count(m, "m", minimum=4)
    true_nte = _check_epsilon(true_nte, "true_nte")
    epsilon = _check_epsilon(epsilon)
    n_reps = check_count(n_reps, "n_reps")
    alpha = check_alpha(alpha)
    d = check_count(d, "d")
    bandwidth = check_positive(bandwidth, "bandwidth")
    delta = shift_for_target_nte(true_nte, d=d, bandwidth=bandwidth)
    y, y_cf = gaussian_pair_sample(m, delta, d=d, n_reps=n_reps, seed=seed)
    df = cfclot_statistics_batch(y, y_cf, epsilon, bandwidth=bandwidth)
    crit = stats.norm.ppf(1 - alpha)
    for v in _VARIANCES:
        df[f"z_{v}"] = np.sqrt(m) * (df["statistic"] - epsilon) / df[f"sigma_{v}"]
        df[f"reject_{v}"] = df[f"z_{v}"] > crit
    return df
