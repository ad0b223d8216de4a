"""Minimality: the weighted Counterfactual Latent Divergence (CLD).

Melistas et al. (*Benchmarking counterfactual image generation*, Sec. 3.3, Eq. 9), modified from
Sanchez & Tsaftaris (2022):

``CLD(x, x*) = log( w1 exp(P(S_x* <= div)) + w2 exp(P(S_x >= div)) )``

with ``div = d(x*, x)``, ``S_x`` the distances from the factual ``x`` to real images that share
its value of the intervened parent ``k``, ``S_x*`` the distances from ``x`` to real images that
have the counterfactual value of ``k``, and ``d`` the KL divergence between the diagonal-Gaussian
posteriors of an *unconditional* VAE, averaged over latent dimensions. ``P1 = P(S_x* <= div)`` is
low when the counterfactual stayed closer to the factual than most target-class images do;
``P2 = P(S_x >= div)`` is low when it moved further than most same-class images do.

Decisions (notes Sec. 7.3): the KL is the correct diagonal-Gaussian KL, ``KL(q_x' || q_x)``
(the code's direction), averaged over dimensions; the reference set is the test factuals;
continuous parents are discretised into equal-width bins. ``official=True`` reproduces the
official code's bug, which passes the posterior *means* as both location and log-scale.

The identity counterfactual has ``div = 0``, so ``P1 = 0`` and ``P2 = 1``:
``CLD = log(w1 + w2 e) = 0.2954`` for ``w = (0.8, 0.2)``: report it beside every CLD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_array,
    check_choice,
    check_count,
    check_finite,
    check_real,
    describe,
)

__all__ = [
    "gaussian_kl_diag",
    "kl_matrix",
    "identity_cld",
    "discretize",
    "CLDResult",
    "counterfactual_latent_divergence",
]


def _as2d(a: np.ndarray, name: str) -> np.ndarray:
    if a is None or isinstance(a, (str, bytes, dict)):
        raise ValidationTypeError(f"{name} must be a 2-D array (n, latent_dim), got {describe(a)} ({type(a).__name__})")
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"{name} must be a numeric 2-D array (n, latent_dim), got {describe(a)}") from None
    if a.ndim != 2:
        raise ValidationError(f"{name} must be a 2-D array (n, latent_dim), got shape {a.shape}")
    if a.shape[0] == 0 or a.shape[1] == 0:
        raise ValidationError(f"{name} must hold at least one unit and one latent dimension, got shape {a.shape}")
    if not np.isfinite(a).all():
        check_finite(a, name)
    return a


def _posterior(pair: object, name: str) -> tuple[np.ndarray, np.ndarray]:
    """A posterior ``(mu, logvar)``: two finite ``(n, d)`` arrays of one shape."""
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise ValidationTypeError(f"{name} must be a pair (mu, logvar) of (n, d) arrays, got {describe(pair)}")
    mu, lv = _as2d(pair[0], f"{name} mu"), _as2d(pair[1], f"{name} logvar")
    if mu.shape != lv.shape:
        raise ValidationError(f"{name} mu and logvar must have the same shape, got {mu.shape} and {lv.shape}")
    return mu, lv


def _weights(weights: object) -> tuple[float, float]:
    if not isinstance(weights, (tuple, list)) or len(weights) != 2:
        raise ValidationTypeError(f"weights must be a pair (w1, w2), got {describe(weights)}")
    w1, w2 = check_real(weights[0], "weights[0]", low=0.0), check_real(weights[1], "weights[1]", low=0.0)
    if w1 == w2 == 0:
        raise ValidationError("weights must not both be 0 (the CLD is a log of their weighted sum)")
    return w1, w2


def gaussian_kl_diag(
    mu_q: np.ndarray, logvar_q: np.ndarray, mu_p: np.ndarray, logvar_p: np.ndarray, reduce: str = "mean"
) -> np.ndarray:
    """``KL(N(mu_q, diag e^logvar_q) || N(mu_p, diag e^logvar_p))`` row by row.

    Parameters
    ----------
    mu_q, logvar_q, mu_p, logvar_p : numpy.ndarray
        ``(n, d)`` arrays (broadcastable).
    reduce : {"mean", "sum", "none"}
        Average or sum over the latent dimensions, or keep them.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` (or ``(n, d)`` with ``reduce="none"``).

    Raises
    ------
    TypeError, ValueError
        Non-numeric or non-finite arrays, shapes that do not broadcast, an unknown ``reduce``.
    """
    check_choice(reduce, "reduce", ("mean", "sum", "none"))
    names = ("mu_q", "logvar_q", "mu_p", "logvar_p")
    arrays = [_finite(v, k) for k, v in zip(names, (mu_q, logvar_q, mu_p, logvar_p), strict=True)]
    try:
        np.broadcast_shapes(*(a.shape for a in arrays))
    except ValueError:
        raise ValidationError(
            f"mu_q, logvar_q, mu_p and logvar_p must broadcast to one shape, got {[a.shape for a in arrays]}"
        ) from None
    return _gaussian_kl_diag(mu_q, logvar_q, mu_p, logvar_p, reduce)


def _finite(v: object, name: str) -> np.ndarray:
    try:
        arr = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"{name} must be a numeric array, got {describe(v)}") from None
    if arr.ndim == 0 or arr.size == 0:
        raise ValidationError(f"{name} must be an array with at least one value (n, d), got shape {arr.shape}")
    return check_finite(arr, name)


def _gaussian_kl_diag(
    mu_q: np.ndarray, logvar_q: np.ndarray, mu_p: np.ndarray, logvar_p: np.ndarray, reduce: str
) -> np.ndarray:
    per_dim = 0.5 * (logvar_p - logvar_q + (np.exp(logvar_q) + (mu_q - mu_p) ** 2) / np.exp(logvar_p) - 1.0)
    if reduce == "mean":
        return per_dim.mean(-1)
    if reduce == "sum":
        return per_dim.sum(-1)
    return per_dim


def kl_matrix(mu_a: np.ndarray, logvar_a: np.ndarray, mu_b: np.ndarray, logvar_b: np.ndarray) -> np.ndarray:
    """All pairwise ``KL(q_a[r] || q_b[j])``, averaged over dimensions, as an ``(n_a, n_b)`` matrix.

    Computed with matrix products (no loop over pairs): the quadratic term expands as
    ``sum_d (mu_a^2 - 2 mu_a mu_b + mu_b^2) / var_b``.

    Parameters
    ----------
    mu_a, logvar_a : numpy.ndarray
        ``(n_a, d)`` posteriors of the first argument of the KL.
    mu_b, logvar_b : numpy.ndarray
        ``(n_b, d)`` posteriors of the second argument.

    Returns
    -------
    numpy.ndarray
        ``(n_a, n_b)``.

    Raises
    ------
    TypeError, ValueError
        Non-numeric, non-finite or non-2-D arrays, or posteriors whose shapes do not match.
    """
    mu_a, logvar_a = _posterior((mu_a, logvar_a), "a")
    mu_b, logvar_b = _posterior((mu_b, logvar_b), "b")
    if mu_a.shape[1] != mu_b.shape[1]:
        raise ValidationError(f"a and b must have the same latent dimension, got {mu_a.shape[1]} and {mu_b.shape[1]}")
    return _kl_matrix(mu_a, logvar_a, mu_b, logvar_b)


def _kl_matrix(mu_a: np.ndarray, logvar_a: np.ndarray, mu_b: np.ndarray, logvar_b: np.ndarray) -> np.ndarray:
    inv_b = np.exp(-logvar_b)  # (n_b, d)
    var_a = np.exp(logvar_a)
    quad = (var_a + mu_a**2) @ inv_b.T - 2 * mu_a @ (mu_b * inv_b).T + (mu_b**2 * inv_b).sum(1)[None, :]
    logs = logvar_b.sum(1)[None, :] - logvar_a.sum(1)[:, None]
    d = mu_a.shape[1]
    return 0.5 * (logs + quad - d) / d


def identity_cld(weights: tuple[float, float] = (0.8, 0.2)) -> float:
    """CLD of the identity counterfactual, ``log(w1 + w2 e)`` (0.2954 for the paper's weights).

    Parameters
    ----------
    weights : (float, float)
        ``(w1, w2)``.

    Returns
    -------
    float
    """
    w1, w2 = _weights(weights)
    return float(math.log(w1 * math.exp(0.0) + w2 * math.exp(1.0)))


def discretize(
    values: np.ndarray, bins: int | np.ndarray = 10, value_range: tuple[float, float] | None = None
) -> np.ndarray:
    """Bin a continuous parent into ``bins`` equal-width categories (footnote 5: 10 bins).

    Parameters
    ----------
    values : numpy.ndarray
        Parent values.
    bins : int or numpy.ndarray
        Number of equal-width bins over ``value_range``, or explicit inner edges.
    value_range : (float, float), optional
        Range of the bins (default: the values' min and max).

    Returns
    -------
    numpy.ndarray
        Integer bin labels.
    """
    v = np.asarray(check_array(values, "values", ndim=(1, 2)), dtype=float)
    if np.ndim(bins) == 0:
        bins = check_count(bins, "bins")
        if value_range is not None:
            if not isinstance(value_range, (tuple, list)) or len(value_range) != 2:
                raise ValidationTypeError(
                    f"value_range must be a pair (low, high) or None, got {describe(value_range)}"
                )
            check_real(value_range[0], "value_range[0]"), check_real(value_range[1], "value_range[1]")
            if not value_range[0] < value_range[1]:
                raise ValidationError(f"value_range must have low < high, got {tuple(value_range)}")
        lo, hi = value_range if value_range is not None else (v.min(), v.max())
        edges = np.linspace(lo, hi, int(bins) + 1)[1:-1]
    else:
        edges = np.sort(np.asarray(check_array(bins, "bins"), float))
    return np.searchsorted(edges, v, side="right")


@dataclass(frozen=True)
class CLDResult:
    """Counterfactual latent divergence of a set of counterfactuals.

    Attributes
    ----------
    statistic : float
        Mean CLD over units (the paper's number); an estimate, not a test, so there is no p-value.
    cld : numpy.ndarray
        Per-unit CLD.
    p1, p2 : numpy.ndarray
        Per-unit ``P(S_x* <= div)`` and ``P(S_x >= div)``.
    div : numpy.ndarray
        Per-unit ``d(x*, x)``.
    weights : (float, float)
        ``(w1, w2)``.
    identity : float
        The identity map's CLD under the same weights (report it beside ``statistic``).
    official : bool
        Whether the official code's KL was used.
    """

    statistic: float
    cld: np.ndarray = field(repr=False)
    p1: np.ndarray = field(repr=False)
    p2: np.ndarray = field(repr=False)
    div: np.ndarray = field(repr=False)
    weights: tuple[float, float] = (0.8, 0.2)
    identity: float = 0.2954
    official: bool = False

    @property
    def mean_p1(self) -> float:
        """Mean ``P(S_x* <= div)``."""
        return float(self.p1.mean())

    @property
    def mean_p2(self) -> float:
        """Mean ``P(S_x >= div)``."""
        return float(self.p2.mean())

    def summary(self) -> pd.DataFrame:
        """One row: CLD, P1, P2, the identity baseline and the CLD implied by the mean P1, P2."""
        w1, w2 = self.weights
        implied = math.log(w1 * math.exp(self.mean_p1) + w2 * math.exp(self.mean_p2))
        return pd.DataFrame(
            [
                {
                    "CLD": self.statistic,
                    "P1": self.mean_p1,
                    "P2": self.mean_p2,
                    "identity CLD": self.identity,
                    "log(w1 e^P1 + w2 e^P2)": implied,
                    "n": len(self.cld),
                    "official KL": self.official,
                }
            ]
        )

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """Histogram of the per-unit CLD with the identity baseline marked."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        ax.hist(self.cld, bins=30, alpha=0.7, **kwargs)
        ax.axvline(self.identity, color="0.2", ls="--", lw=1, label=f"identity {self.identity:.4f}")
        ax.set_xlabel("CLD per image")
        ax.set_ylabel("count")
        ax.legend()
        return ax


def counterfactual_latent_divergence(
    factual: tuple[np.ndarray, np.ndarray],
    counterfactual: tuple[np.ndarray, np.ndarray],
    factual_group: np.ndarray,
    counterfactual_group: np.ndarray,
    *,
    reference: tuple[np.ndarray, np.ndarray] | None = None,
    reference_group: np.ndarray | None = None,
    parent: np.ndarray | None = None,
    weights: tuple[float, float] = (0.8, 0.2),
    official: bool = False,
    chunk: int = 1024,
) -> CLDResult:
    """Weighted CLD (Eq. 9) from latent posteriors of an unconditional VAE.

    Parameters
    ----------
    factual, counterfactual : (mu, logvar)
        ``(n, d)`` posterior means and log-variances of the factual and counterfactual images.
    factual_group, counterfactual_group : numpy.ndarray
        ``(n,)`` category (bin) of the intervened parent before and after the intervention.
    reference : (mu, logvar), optional
        Posteriors of the real images that form ``S`` (default: the factuals, as the code does).
    reference_group : numpy.ndarray, optional
        Categories of the reference images: ``(n_ref,)``, or ``(n_ref, K)`` with one column per
        parent together with ``parent``. Defaults to ``factual_group``.
    parent : numpy.ndarray, optional
        ``(n,)`` column of ``reference_group`` intervened for each unit (when it is 2-D).
    weights : (float, float)
        ``(w1, w2)``; the paper uses (0.8, 0.2).
    official : bool
        Use the official code's KL, which plugs the means in as log-scales too (a bug, for
        comparison only).
    chunk : int
        Units per block of the distance matrix.

    Returns
    -------
    CLDResult
    """
    mu_f, lv_f = _posterior(factual, "factual")
    mu_c, lv_c = _posterior(counterfactual, "counterfactual")
    n, d = mu_f.shape
    if mu_c.shape != (n, d):
        raise ValidationError(
            f"factual and counterfactual (mu, logvar) must all have shape {(n, d)}, got {mu_c.shape} for counterfactual"
        )
    if reference is None:
        mu_r, lv_r = mu_f, lv_f
        ref_group = np.asarray(factual_group) if reference_group is None else np.asarray(reference_group)
    else:
        mu_r, lv_r = _posterior(reference, "reference")
        if mu_r.shape[1] != d:
            raise ValidationError(f"reference must have latent dimension {d} like factual, got {mu_r.shape[1]}")
        if reference_group is None:
            raise ValidationError("reference_group is required when a reference set is given")
        ref_group = np.asarray(reference_group)
    fg, cg = np.asarray(factual_group), np.asarray(counterfactual_group)
    if fg.shape != (n,) or cg.shape != (n,):
        raise ValidationError(
            f"factual_group and counterfactual_group must have shape ({n},), got {fg.shape} and {cg.shape}"
        )
    if ref_group.ndim not in (1, 2) or ref_group.shape[0] != len(mu_r):
        raise ValidationError(
            f"reference_group must have shape ({len(mu_r)},) or ({len(mu_r)}, K), one row per reference image, got {ref_group.shape}"
        )
    columns: NDArray[np.int_] | None = None  # the column of a 2-D reference_group intervened for each unit
    if ref_group.ndim == 2:
        if parent is None:
            raise ValidationError(
                "parent (the intervened column of reference_group per unit) is required when reference_group is 2-D"
            )
        parent = np.asarray(check_array(parent, "parent", n=n, n_name="factual"))
        if parent.dtype.kind not in "iu" or parent.min() < 0 or parent.max() >= ref_group.shape[1]:
            raise ValidationError(
                f"parent must hold column indices of reference_group in 0..{ref_group.shape[1] - 1}, got {describe(parent)}"
            )
        columns = np.asarray(parent, int)
    w1, w2 = _weights(weights)
    chunk = check_count(chunk, "chunk")
    if official:
        # Official code: kl_divergence(loc=emb[:, 0], scale=emb[:, 0]), i.e. the means serve as log-scales.
        lv_f, lv_c, lv_r = 2 * mu_f, 2 * mu_c, 2 * mu_r
    div = _gaussian_kl_diag(mu_c, lv_c, mu_f, lv_f, "mean")  # d(x*, x) = KL(q_x* || q_x)
    p1 = np.empty(n)
    p2 = np.empty(n)
    for s in range(0, n, chunk):
        sl = slice(s, min(s + chunk, n))
        dist = _kl_matrix(mu_r, lv_r, mu_f[sl], lv_f[sl])  # (n_ref, b): d(x', x)
        if not official:
            dist = np.maximum(dist, 0.0)  # a KL is >= 0; the matrix expansion can round to -1e-16
        groups = ref_group[:, columns[sl]] if columns is not None else ref_group[:, None]
        same = groups == fg[sl][None, :]
        target = groups == cg[sl][None, :]
        dv = div[sl][None, :]
        with np.errstate(invalid="ignore", divide="ignore"):
            p1[sl] = ((dist <= dv) & target).sum(0) / target.sum(0)
            p2[sl] = ((dist >= dv) & same).sum(0) / same.sum(0)
    if np.isnan(p1).any() or np.isnan(p2).any():
        raise ValidationError(
            "some units have no reference image in their factual or counterfactual group; use coarser bins or a larger reference set"
        )
    cld = np.log(w1 * np.exp(p1) + w2 * np.exp(p2))
    return CLDResult(
        statistic=float(cld.mean()),
        cld=cld,
        p1=p1,
        p2=p2,
        div=div,
        weights=(float(w1), float(w2)),
        identity=identity_cld(weights),
        official=bool(official),
    )
