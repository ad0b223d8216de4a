"""Statistical and predictive parity measures and the causal decomposition of predictive parity.

Implements Plecko & Bareinboim (arXiv 2306.05059):

* the statistical parity measure ``SPM = P(y_hat | x1) - P(y_hat | x0)`` (Eq. 2) and the predictive
  parity measure ``PPM(y | y_hat) = P(y | x1, y_hat) - P(y | x0, y_hat)`` (Eq. 3), per score bin, and
  its integrated version iPPM (Sec. 4; the script's equal-weight average over pooled quantile bins);
* Theorem 1 (Eq. 10) and its proof's three-term identity (App. A.1, Eqs. 32-34)::

      PPM = [E(y_x1 | x1, yh_x1) - E(y_x0 | x1, yh_x1)]          Term I (causal)
          + [E(y_x0 | x1, yh_x1) - E(y_x0 | x1, yh_x0)]          Term II (reverse-causal spurious)
          + [E(y_x0 | x1, yh_x0) - E(y_x0 | x0, yh_x0)]          Term III (zero when Z is empty)

  from true counterfactuals (:func:`pp_decomposition_counterfactual`), and the paper's estimator of
  App. A.2 (Eqs. 50-52) from an estimated ``Y_{x0}`` (:func:`pp_decomposition`), whose Term II
  contains Term III;
* Corollary 1 (Eqs. 11-12): the closed forms of Terms I and II in the linear case
  (:func:`linear_pp_terms`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..validation import check_array, check_real

__all__ = [
    "spm",
    "bin_scores",
    "ppm_table",
    "ippm",
    "PPDecomposition",
    "pp_decomposition",
    "pp_decomposition_counterfactual",
    "linear_pp_terms",
]


def _binary(x: ArrayLike, name: str = "x") -> np.ndarray:
    x = check_array(x, name, numeric=False, finite=False)
    vals = np.unique(x)
    if not (set(vals.tolist()) <= {0, 1}) or vals.size != 2:
        raise ValueError(f"{name} must be coded 0 (x0) / 1 (x1) and take both values, got values {vals[:10].tolist()}")
    return x.astype(int)


def _vec(v: ArrayLike, name: str, n: int) -> np.ndarray:
    return check_array(v, name, n=n, n_name="x").astype(float)


def spm(x: ArrayLike, outcome: ArrayLike) -> float:
    """Statistical parity measure ``E[outcome | x1] - E[outcome | x0]`` (Eq. 2; TV for a binary outcome).

    Parameters
    ----------
    x : array-like
        Protected attribute coded 0/1.
    outcome : array-like
        Outcome, prediction or score.

    Returns
    -------
    float
    """
    x = _binary(x)
    o = _vec(outcome, "outcome", x.size)
    return float(o[x == 1].mean() - o[x == 0].mean())


def bin_scores(score: ArrayLike, bins: int | np.ndarray = 10) -> tuple[np.ndarray, np.ndarray]:
    """Assign scores to bins at pooled quantiles (or to their unique values when there are few).

    Parameters
    ----------
    score : array-like
        Predictor values.
    bins : int or array-like
        Number of equal-probability bins, or explicit increasing edges.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Bin index per unit (0-based) and the edges (for unique-value binning: the sorted values).
    """
    s = check_array(score, "score").astype(float)
    if np.ndim(bins) == 0:
        if isinstance(bins, (bool, np.bool_)) or not isinstance(bins, (int, np.integer)) or bins < 1:
            raise ValueError(f"bins must be a positive integer or an array of edges, got {bins!r}")
        uniq = np.unique(s)
        if uniq.size <= bins:
            # A discrete score (deciles, a binary prediction): one bin per value, as in the script.
            return np.searchsorted(uniq, s), uniq
        edges = np.unique(np.quantile(s, np.linspace(0, 1, bins + 1)))
    else:
        edges = check_array(bins, "bins").astype(float)
        if edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ValueError("bin edges must be a strictly increasing 1-d array with at least two entries")
    idx = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, edges.size - 2)
    return idx, edges


def ppm_table(x: ArrayLike, y: ArrayLike, score: ArrayLike, bins: int | np.ndarray = 10) -> pd.DataFrame:
    """Predictive parity measure per score bin (Eq. 3).

    Parameters
    ----------
    x : array-like
        Protected attribute coded 0/1.
    y : array-like
        True outcome.
    score : array-like
        Predictor or score that defines the bins.
    bins : int or array-like
        See :func:`bin_scores`.

    Returns
    -------
    pandas.DataFrame
        One row per bin: ``n0, n1, mean_y0, mean_y1, ppm`` (``mean_y1 - mean_y0``; NaN where a group is empty).
    """
    x = _binary(x)
    y = _vec(y, "y", x.size)
    idx, _ = bin_scores(_vec(score, "score", x.size), bins)
    k = idx.max() + 1
    n0 = np.bincount(idx[x == 0], minlength=k)
    n1 = np.bincount(idx[x == 1], minlength=k)
    s0 = np.bincount(idx[x == 0], weights=y[x == 0], minlength=k)
    s1 = np.bincount(idx[x == 1], weights=y[x == 1], minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        m0 = np.where(n0 > 0, s0 / np.maximum(n0, 1), np.nan)
        m1 = np.where(n1 > 0, s1 / np.maximum(n1, 1), np.nan)
    return pd.DataFrame(
        {"n0": n0, "n1": n1, "mean_y0": m0, "mean_y1": m1, "ppm": m1 - m0}, index=pd.RangeIndex(k, name="bin")
    )


def ippm(x: ArrayLike, y: ArrayLike, score: ArrayLike, bins: int | np.ndarray = 10, *, weights: str = "equal") -> float:
    """Integrated predictive parity measure: the average of the per-bin PPM (Sec. 4).

    Parameters
    ----------
    x, y, score : array-like
        As in :func:`ppm_table`.
    bins : int or array-like
        See :func:`bin_scores`.
    weights : {"equal", "mass"}
        Equal weight per bin (the paper's script) or weight by the bin's number of units.

    Returns
    -------
    float
        Signed iPPM (x1 minus x0); bins lacking one group are skipped.
    """
    if weights not in ("equal", "mass"):
        raise ValueError(f"weights must be 'equal' or 'mass', got {weights!r}")
    t = ppm_table(x, y, score, bins)
    ok = t["ppm"].notna()
    if not ok.any():
        raise ValueError("no score bin holds units of both groups")
    w = np.ones(ok.sum()) if weights == "equal" else (t.loc[ok, "n0"] + t.loc[ok, "n1"]).to_numpy(float)
    return float(np.average(t.loc[ok, "ppm"], weights=w))


@dataclass(frozen=True)
class PPDecomposition:
    """Per-bin decomposition of the predictive parity measure (Theorem 1).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per score bin with ``term_I``, ``term_II``, ``term_III`` (NaN when not separable),
        ``ppm`` and the bin counts.
    integrated : dict
        Equal-weight averages over bins: ``term_I``, ``term_II``, ``term_III``, ``ppm``.
    kind : str
        ``"counterfactual"`` (true potential outcomes) or ``"estimated"`` (App. A.2 estimator).
    """

    table: pd.DataFrame
    integrated: dict
    kind: str

    def identity_residual(self) -> float:
        """Largest ``|PPM - (Term I + Term II + Term III)|`` over bins (zero up to rounding).

        Returns
        -------
        float
        """
        t = self.table.dropna(subset=["ppm", "term_I", "term_II"])
        rest = t["term_III"].fillna(0.0)
        return float(np.max(np.abs(t["ppm"] - (t["term_I"] + t["term_II"] + rest)))) if len(t) else float("nan")

    def summary(self) -> pd.DataFrame:
        """The integrated terms as a one-row-per-term table.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame({"value": self.integrated}).rename_axis("term")

    def plot(self, ax: Any = None) -> Any:
        """Per-bin Terms I, II (and III) and PPM against the bin index.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        b = np.arange(1, len(self.table) + 1)
        for col, lab in (("term_I", "Term I"), ("term_II", "Term II"), ("term_III", "Term III"), ("ppm", "PPM")):
            if self.table[col].notna().any():
                ax.plot(b, self.table[col], marker="o", ms=3, label=lab)
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_xlabel("score bin")
        ax.set_ylabel("value")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))  # outside: the curves span the whole panel
        return ax


def _bin_means(idx: np.ndarray, mask: np.ndarray, v: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    c = np.bincount(idx[mask], minlength=k)
    s = np.bincount(idx[mask], weights=v[mask], minlength=k)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(c > 0, s / np.maximum(c, 1), np.nan), c


def _integrate(table: pd.DataFrame) -> dict:
    return {
        c: float(np.nanmean(table[c])) if table[c].notna().any() else float("nan")
        for c in ("term_I", "term_II", "term_III", "ppm")
    }


def pp_decomposition(
    x: ArrayLike, y: ArrayLike, score: ArrayLike, y_x0: ArrayLike, bins: int | np.ndarray = 20
) -> PPDecomposition:
    """The paper's estimator of Theorem 1's terms per score bin (App. A.2, Eqs. 50-52).

    ``Term I_i = E[Y | x1, b_i] - E[Y_{x0} | x1, b_i]`` and
    ``Term II_i = E[Y_{x0} | x1, b_i] - E[Y | x0, b_i]`` (which includes Term III), so
    ``Term I_i + Term II_i = PPM_i`` exactly.

    Parameters
    ----------
    x : array-like
        Protected attribute coded 0/1.
    y : array-like
        Observed outcome.
    score : array-like
        Predictor defining the bins (pooled quantiles).
    y_x0 : array-like
        The counterfactual ``Y_{x0}`` of every unit (estimated, e.g. by
        :class:`cflib.fairness.adapt.SequentialTransport`, or true). For ``x0`` units it should equal ``y``.
    bins : int or array-like
        See :func:`bin_scores`.

    Returns
    -------
    PPDecomposition
    """
    x = _binary(x)
    n = x.size
    y, y0 = _vec(y, "y", n), _vec(y_x0, "y_x0", n)
    idx, _ = bin_scores(_vec(score, "score", n), bins)
    k = idx.max() + 1
    ey1, n1 = _bin_means(idx, x == 1, y, k)
    ey0, n0 = _bin_means(idx, x == 0, y, k)
    ecf, _ = _bin_means(idx, x == 1, y0, k)
    t = pd.DataFrame(
        {"n0": n0, "n1": n1, "term_I": ey1 - ecf, "term_II": ecf - ey0, "term_III": np.nan, "ppm": ey1 - ey0},
        index=pd.RangeIndex(k, name="bin"),
    )
    return PPDecomposition(t, _integrate(t), "estimated")


def pp_decomposition_counterfactual(
    x: ArrayLike, y_x0: ArrayLike, y_x1: ArrayLike, yhat_x0: ArrayLike, yhat_x1: ArrayLike, bins: int | np.ndarray = 20
) -> PPDecomposition:
    """Theorem 1's three terms per bin from true potential outcomes (App. A.1, Eqs. 32-34).

    Bins are the pooled quantiles of the factual predictor ``yhat = yhat_x1`` if ``x = 1`` else
    ``yhat_x0``; ``ppm`` is computed from the factual ``y`` and ``yhat`` by consistency, so the three
    terms add up to it exactly.

    Parameters
    ----------
    x : array-like
        Protected attribute coded 0/1.
    y_x0, y_x1 : array-like
        Potential outcomes of every unit.
    yhat_x0, yhat_x1 : array-like
        The predictor's potential values ``Yhat_{x0}``, ``Yhat_{x1}``.
    bins : int or array-like
        See :func:`bin_scores`.

    Returns
    -------
    PPDecomposition
    """
    x = _binary(x)
    n = x.size
    y0, y1 = _vec(y_x0, "y_x0", n), _vec(y_x1, "y_x1", n)
    h0, h1 = _vec(yhat_x0, "yhat_x0", n), _vec(yhat_x1, "yhat_x1", n)
    yh = np.where(x == 1, h1, h0)
    y = np.where(x == 1, y1, y0)
    _, edges = bin_scores(yh, bins)
    if np.ndim(bins) == 0 and np.unique(yh).size <= bins:
        i1, i0 = np.searchsorted(edges, h1), np.searchsorted(edges, h0)
        k = edges.size
    else:
        i1 = np.clip(np.searchsorted(edges, h1, side="right") - 1, 0, edges.size - 2)
        i0 = np.clip(np.searchsorted(edges, h0, side="right") - 1, 0, edges.size - 2)
        k = edges.size - 1
    ok1 = (i1 >= 0) & (i1 < k)
    ok0 = (i0 >= 0) & (i0 < k)
    i1, i0 = np.where(ok1, i1, 0), np.where(ok0, i0, 0)
    m1 = (x == 1) & ok1
    a, _ = _bin_means(i1, m1, y1, k)  # E(y_x1 | x1, yh_x1 in b)
    b, _ = _bin_means(i1, m1, y0, k)  # E(y_x0 | x1, yh_x1 in b)
    c, _ = _bin_means(i0, (x == 1) & ok0, y0, k)  # E(y_x0 | x1, yh_x0 in b)
    d, _ = _bin_means(i0, (x == 0) & ok0, y0, k)  # E(y_x0 | x0, yh_x0 in b)
    iy = np.where(x == 1, i1, i0)
    ey1, n1 = _bin_means(iy, x == 1, y, k)
    ey0, n0 = _bin_means(iy, x == 0, y, k)
    t = pd.DataFrame(
        {"n0": n0, "n1": n1, "term_I": a - b, "term_II": b - c, "term_III": c - d, "ppm": ey1 - ey0},
        index=pd.RangeIndex(k, name="bin"),
    )
    return PPDecomposition(t, _integrate(t), "counterfactual")


def linear_pp_terms(a_xw: float, a_wy: float, a_xy: float, x0: float = 0.0, x1: float = 1.0) -> dict[str, float]:
    """Corollary 1: Terms I and II of an efficient predictor in the linear SCM (Eqs. 11-12).

    Parameters
    ----------
    a_xw, a_wy, a_xy : float
        Path coefficients of ``W = a_xw X + U_W``, ``Y = a_xy X + a_wy W + U_Y``.
    x0, x1 : float
        The two levels of ``X`` (the paper assumes ``x1 - x0 = 1``).

    Returns
    -------
    dict
        ``term_I = TE``, ``term_II = -TE``, ``ppm = 0`` and ``spm = TE`` (the efficient predictor
        carries the whole total effect), with ``TE = (a_xw a_wy + a_xy)(x1 - x0)``.
    """
    for name, v in {"a_xw": a_xw, "a_wy": a_wy, "a_xy": a_xy, "x0": x0, "x1": x1}.items():
        check_real(v, name)
    te = (a_xw * a_wy + a_xy) * (x1 - x0)
    return {"term_I": te, "term_II": -te, "ppm": 0.0, "spm": te}
