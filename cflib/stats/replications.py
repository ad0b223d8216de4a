"""Summaries over replicated tests and over classifiers: rejection rates and the alignment of p-values with ECA.

:func:`rejection_summary` gives the rejection rate of replicated tests with its interval and the
interval a calibrated test falls in (calibration and power studies); :func:`alignment_stats` and
:func:`plot_pvalue_vs_eca` relate each classifier's log10 p-value to its expected counterfactual accuracy
(Ma et al. 2024, Figs. 2-4).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from cflib.results import check_alpha
from cflib.validation import (
    ValidationError,
    ValidationTypeError,
    check_axes,
    check_probability,
    check_real,
    describe,
    warn,
)

from .proportions import wilson_interval
from .unit_arrays import per_unit_values

__all__ = ["alignment_stats", "plot_pvalue_vs_eca", "rejection_summary"]


def _log10_pvalues(log10_p: Any, n: int) -> np.ndarray:
    """log10 p-values, one per classifier: ``-inf`` (an underflowed p) is allowed, NaN warns, above 0 is refused."""
    y = per_unit_values(log10_p, "log10_p", n, numeric=False, n_name="eca")
    if y.dtype != bool and y.dtype.kind not in "iuf":
        raise ValidationTypeError(f"log10_p must be numeric, got dtype {y.dtype}")
    y = y.astype(float)
    if np.any(y > 1e-6):  # NaN compares False; a rounding error above 0 is clipped to 0 below
        raise ValidationError(
            f"log10_p must be <= 0 (p-values <= 1), got values up to {np.nanmax(y):g}: pass log10(p), not p or -log10(p)"
        )
    n_nan = int(np.isnan(y).sum())
    if n_nan:
        warn(f"log10_p holds {n_nan} NaN value(s); those classifiers are left out", stacklevel=4)
    return y


def alignment_stats(eca: Any, log10_p: Any, *, floor: float = -300.0) -> dict[str, float]:
    """Pearson r between ECA and log10 p, and the residual spread around the fitted line.

    Parameters
    ----------
    eca : array-like
        ECA of each classifier.
    log10_p : array-like
        log10 p-value of each classifier (``-inf`` is clipped at ``floor``).
    floor : float
        Lower clip for log10 p.

    Returns
    -------
    dict
        ``r`` (Pearson), ``slope``, ``intercept``, ``resid_sd`` (ddof 2), ``n``; NaN where the
        points are constant in either coordinate.
    """
    x = per_unit_values(eca, "eca")
    floor = check_real(floor, "floor", high=0.0)
    y = np.clip(_log10_pvalues(log10_p, x.size), floor, 0.0)
    ok = np.isfinite(y)
    x, y = x[ok], y[ok]
    out = {
        "r": float("nan"),
        "slope": float("nan"),
        "intercept": float("nan"),
        "resid_sd": float("nan"),
        "n": int(x.size),
    }
    if x.size > 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
        slope, intercept = np.polyfit(x, y, 1)
        resid = y - (slope * x + intercept)
        out.update(
            r=float(np.corrcoef(x, y)[0, 1]),
            slope=float(slope),
            intercept=float(intercept),
            resid_sd=float(resid.std(ddof=2) if x.size > 3 else np.nan),
        )
    return out


def plot_pvalue_vs_eca(
    eca: Any,
    log10_p: Any,
    *,
    alpha: float = 0.05,
    band_k: float = 1.5,
    ylim: tuple[float, float] | None = (-30.0, 0.5),
    color: str = "#0072B2",
    title: str | None = None,
    ax: Any = None,
) -> Any:
    """One panel of Fig. 2: log10 p against ECA with the fitted line, a ±``band_k`` sd band and α.

    Parameters
    ----------
    eca, log10_p : array-like
        One point per classifier.
    alpha : float
        Significance level drawn as a red dashed line.
    band_k : float
        Half-width of the band in residual standard deviations (1.5 in the authors' code).
    ylim : tuple of float, optional
        y-limits (the authors' plots use (-30, 0)); points below are drawn at the lower limit.
    color : str
        Colour of points and line.
    title : str, optional
        Panel title; Pearson r and residual sd are appended.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    alpha = check_alpha(alpha)
    band_k = check_real(band_k, "band_k", low=0.0)
    if ylim is not None:
        if isinstance(ylim, (str, bytes)) or not hasattr(ylim, "__len__") or len(ylim) != 2:
            raise ValidationTypeError(f"ylim must be None or a pair (low, high), got {describe(ylim)}")
        if check_real(ylim[0], "ylim[0]") >= check_real(ylim[1], "ylim[1]"):
            raise ValidationError(f"ylim must be (low, high) with low < high, got {ylim!r}")
    x = per_unit_values(eca, "eca")
    y = np.clip(_log10_pvalues(log10_p, x.size), -300.0, 0.0)
    ax = plt.gca() if check_axes(ax) is None else ax
    st = alignment_stats(x, y)
    y_show = y if ylim is None else np.maximum(y, ylim[0])
    ax.scatter(x, y_show, s=14, alpha=0.75, color=color, edgecolor="none")
    if np.isfinite(st["r"]):
        grid = np.linspace(x.min(), x.max(), 50)
        line = st["slope"] * grid + st["intercept"]
        ax.plot(grid, line, color=color, lw=1.3)
        if np.isfinite(st["resid_sd"]):
            ax.fill_between(
                grid, line - band_k * st["resid_sd"], line + band_k * st["resid_sd"], color=color, alpha=0.15, lw=0
            )
    from ..plotting import ALPHA_COLOR

    ax.axhline(math.log10(alpha), color=ALPHA_COLOR, ls="--", lw=1)
    if ylim is not None:
        ax.set_ylim(*ylim)
    label = f"r = {st['r']:.2f}, sd = {st['resid_sd']:.2g}"
    ax.set_title(label if title is None else f"{title}\n{label}", fontsize=9)
    ax.set_xlabel("ECA")
    ax.set_ylabel(r"$\log_{10} p$")
    return ax


def rejection_summary(pvalues: Any, alpha: float = 0.05, level: float = 0.99) -> dict[str, Any]:
    """Rejection rate of replicated tests with intervals for calibration and power studies.

    Parameters
    ----------
    pvalues : array-like
        P-values of independent replications.
    alpha : float
        Significance level.
    level : float
        Coverage of the intervals.

    Returns
    -------
    dict
        ``rate`` (share of p < alpha), ``k``, ``n``, ``ci`` (Wilson interval of the rate),
        ``null_interval`` (central binomial interval of the rate if the true size were ``alpha``:
        a calibrated test falls inside it with probability >= ``level``), ``calibrated``
        (rate inside ``null_interval``) and ``ks_pvalue`` (Kolmogorov-Smirnov test of uniformity).
    """
    p = per_unit_values(pvalues, "pvalues")
    if np.any((p < 0) | (p > 1)):
        raise ValidationError(f"pvalues must be numbers in [0, 1], got values in [{p.min():g}, {p.max():g}]")
    alpha = check_alpha(alpha)
    level = check_probability(level, "level")
    n = p.size
    k = int(np.sum(p < alpha))
    lo, hi = stats.binom.ppf([(1 - level) / 2, (1 + level) / 2], n, alpha)
    return {
        "rate": k / n,
        "k": k,
        "n": n,
        "ci": wilson_interval(k, n, level),
        "null_interval": (float(lo) / n, float(hi) / n),
        "calibrated": bool(lo <= k <= hi),
        "ks_pvalue": float(stats.kstest(p, "uniform").pvalue),
    }
