"""Figures of the parity-decomposition chapter (Plecko & Bareinboim, arXiv 2306.05059, Figs. 1-8).

Each helper takes an optional ``ax`` and returns the axes, like :mod:`cflib.plotting`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.axes import Axes

from ..plotting import PALETTE, line_with_band
from ..validation import check_array, check_columns, describe

__all__ = ["plot_sfm", "plot_effect_bars", "plot_pareto", "plot_terms_vs_n", "plot_term1_by_bin", "plot_bn_spectrum"]

#: A causal diagram's layout: node -> position, directed edges, bidirected (confounding) edges.
_Layout = tuple[dict[str, tuple[float, float]], list[tuple[str, str]], list[tuple[str, str]]]

_LAYOUTS: dict[str, _Layout] = {
    "sfm": (
        {"X": (0, 0), "Z": (1, 1), "W": (1, -1), "Y": (2, 0)},
        [("X", "W"), ("X", "Y"), ("Z", "W"), ("Z", "Y"), ("W", "Y")],
        [("X", "Z")],
    ),
    "sfm_yhat": (
        {"X": (0, 0), "W": (1, 1), "Y": (2, 0.6), "Ŷ": (2, -0.6)},
        [("X", "W"), ("X", "Y"), ("W", "Y"), ("X", "Ŷ"), ("W", "Ŷ")],
        [],
    ),
    "compas": (
        {
            "race": (0, 0),
            "sex": (0.8, 1.3),
            "age": (1.6, 1.3),
            "J": (1, -1),
            "P": (2, -1),
            "D": (3, -1),
            "Y": (3.2, 0.4),
        },
        [
            ("race", "J"),
            ("race", "P"),
            ("race", "D"),
            ("race", "Y"),
            ("sex", "J"),
            ("sex", "P"),
            ("sex", "D"),
            ("sex", "Y"),
            ("age", "J"),
            ("age", "P"),
            ("age", "D"),
            ("age", "Y"),
            ("J", "P"),
            ("J", "Y"),
            ("P", "D"),
            ("P", "Y"),
            ("D", "Y"),
        ],
        [("race", "sex"), ("race", "age")],
    ),
    "a2": (
        {"X": (0, 0), "W1": (1, 1), "W2": (2, 1), "Y": (3, 0)},
        [("X", "W1"), ("X", "W2"), ("X", "Y"), ("W1", "W2"), ("W1", "Y"), ("W2", "Y")],
        [],
    ),
}


def _axes(ax: Any) -> Any:
    """``ax`` or the current axes; anything else is refused before drawing starts."""
    if ax is None:
        return plt.gca()
    if not isinstance(ax, Axes):
        raise TypeError(f"ax must be a matplotlib Axes or None, got {type(ax).__name__}")
    return ax


def plot_sfm(kind: str = "sfm", ax: Any = None) -> Any:
    """Draw a causal diagram of the paper: the SFM (Fig. 2), the SFM with a predictor and ``Z``
    empty (Fig. 3), the COMPAS SFM (Fig. 4) or the App. A.2 SCM.

    Parameters
    ----------
    kind : {"sfm", "sfm_yhat", "compas", "a2"}
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    if kind not in _LAYOUTS:
        raise ValueError(f"kind must be one of {tuple(_LAYOUTS)}, got {kind!r}")
    pos, edges, bidir = _LAYOUTS[kind]
    ax = _axes(ax)
    for a, b in edges:
        rad = 0.25 if (a, b) in (("J", "D"), ("race", "D")) else 0.0  # avoid edges hidden behind a node
        ax.annotate(
            "",
            xy=pos[b],
            xytext=pos[a],
            arrowprops={
                "arrowstyle": "-|>",
                "color": "0.25",
                "lw": 1.0,
                "shrinkA": 14,
                "shrinkB": 14,
                "connectionstyle": f"arc3,rad={rad}",
            },
        )
    for a, b in bidir:
        ax.annotate(
            "",
            xy=pos[b],
            xytext=pos[a],
            arrowprops={
                "arrowstyle": "<|-|>",
                "color": PALETTE[3],
                "lw": 1.2,
                "ls": "--",
                "shrinkA": 14,
                "shrinkB": 14,
                "connectionstyle": "arc3,rad=0.3",
            },
        )
    for name, (px, py) in pos.items():
        ax.scatter([px], [py], s=900, color="white", edgecolor="0.2", zorder=3)
        ax.text(px, py, name, ha="center", va="center", zorder=4, fontsize=9 if len(name) > 2 else 11)
    xs, ys = zip(*pos.values(), strict=False)
    ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
    ax.set_ylim(min(ys) - 0.6, max(ys) + 0.6)
    ax.set_axis_off()
    ax.set_aspect("equal")
    return ax


def plot_effect_bars(
    results: Mapping[str, Mapping[str, tuple[float, float, float]]], ax: Any = None, colors: Sequence[str] | None = None
) -> Any:
    """Grouped bars of measures with intervals, one group per measure (the layout of Fig. 5).

    Parameters
    ----------
    results : mapping
        ``{series label: {measure label: (estimate, ci_low, ci_high)}}``; every series must have the
        same measures (``NaN`` intervals draw no error bar).
    ax : matplotlib.axes.Axes, optional
    colors : sequence of str, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    if not isinstance(results, Mapping) or not results:
        raise TypeError(
            f"results must be a non-empty mapping {{series: {{measure: (estimate, low, high)}}}}, got {describe(results)}"
        )
    measures: list[str] = []
    for lab, row in results.items():
        if not isinstance(row, Mapping) or not row:
            raise TypeError(
                f"results[{lab!r}] must be a non-empty mapping {{measure: (estimate, low, high)}}, got {describe(row)}"
            )
        if measures and list(row) != measures:
            raise ValueError(f"results[{lab!r}] has measures {list(row)}, the first series has {measures}")
        measures = list(row)
        for m, v in row.items():
            if np.ndim(v) != 1 or len(v) != 3:
                raise ValueError(f"results[{lab!r}][{m!r}] must be (estimate, ci_low, ci_high), got {describe(v)}")
    if colors is not None and (isinstance(colors, str) or not len(colors)):
        raise TypeError(f"colors must be a non-empty list of colours, got {colors!r}")
    ax = _axes(ax)
    series = list(results)
    colors = colors or [PALETTE[3], PALETTE[2], PALETTE[0], PALETTE[1], PALETTE[4]]
    wdt = 0.8 / len(series)
    for i, s in enumerate(series):
        pos = np.arange(len(measures)) - 0.4 + wdt * (i + 0.5)
        est = np.array([results[s][m][0] for m in measures], float)
        lo = np.array([results[s][m][1] for m in measures], float)
        hi = np.array([results[s][m][2] for m in measures], float)
        ax.bar(pos, est, width=wdt, color=colors[i % len(colors)], label=s)
        ok = np.isfinite(lo) & np.isfinite(hi)
        ax.errorbar(
            pos[ok], est[ok], yerr=[est[ok] - lo[ok], hi[ok] - est[ok]], fmt="none", ecolor="0.15", capsize=3, lw=1
        )
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xticks(np.arange(len(measures)))
    ax.set_xticklabels(measures)
    ax.legend()
    return ax


def plot_pareto(table: pd.DataFrame, ax: Any = None) -> Any:
    """SPM against iPPM, one point per business-necessity set with sd error bars (Fig. 6).

    Parameters
    ----------
    table : pandas.DataFrame
        Index: BN labels; columns ``spm_mean, spm_sd, ippm_mean, ippm_sd``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_columns(table, ["spm_mean", "spm_sd", "ippm_mean", "ippm_sd"], "table")
    ax = _axes(ax)
    for i, (lab, r) in enumerate(table.iterrows()):
        ax.errorbar(
            r.spm_mean,
            r.ippm_mean,
            xerr=r.spm_sd,
            yerr=r.ippm_sd,
            fmt="o",
            ms=7,
            capsize=3,
            color=PALETTE[i % len(PALETTE)],
            label=f"BN = {lab}",
        )
    ax.set_xlabel("SPM (statistical parity measure)")
    ax.set_ylabel("iPPM (integrated predictive parity)")
    ax.legend()
    return ax


def plot_terms_vs_n(table: pd.DataFrame, ax: Any = None) -> Any:
    """iTerm I, iTerm II and iPPM against the sample size, mean +- 1 sd over repetitions (Fig. 7).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per (n, repetition) with columns ``n, term_I, term_II, ppm``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    check_columns(table, ["n", "term_I", "term_II", "ppm"], "table")
    ax = _axes(ax)
    g = table.groupby("n")
    for col, lab, c in (
        ("term_I", "iTerm I", PALETTE[0]),
        ("term_II", "iTerm II", PALETTE[3]),
        ("ppm", "iPPM", PALETTE[2]),
    ):
        m, s = g[col].mean(), g[col].std().fillna(0)
        line_with_band(m.index, m.values, (m - s).values, (m + s).values, label=lab, color=c, ax=ax)
    ax.set_xscale("log")
    ax.axhline(0, color="0.3", lw=0.8)
    ax.set_xlabel("sample size n (log scale)")
    ax.set_ylabel("integrated value")
    ax.legend(loc="center right", bbox_to_anchor=(1.0, 0.3))
    return ax


def plot_term1_by_bin(truth: np.ndarray, estimates: np.ndarray, ax: Any = None) -> Any:
    """Per-bin Term I: truth (points) against estimates (line, mean +- 1 sd over repetitions) (Fig. 8).

    Parameters
    ----------
    truth : numpy.ndarray
        ``(reps, bins)`` or ``(bins,)`` true Term I per bin.
    estimates : numpy.ndarray
        ``(reps, bins)`` estimated Term I per bin.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    est = check_array(estimates, "estimates", ndim=(1, 2), finite=False)
    tru = check_array(truth, "truth", ndim=(1, 2), finite=False)
    est, tru = np.atleast_2d(est), np.atleast_2d(tru)
    if tru.shape[1] != est.shape[1]:
        raise ValueError(
            f"truth and estimates must have the same number of bins (last axis), got {tru.shape} and {est.shape}"
        )
    ax = _axes(ax)
    b = np.arange(1, est.shape[1] + 1)
    with warnings.catch_warnings():  # bins empty in every repetition (small runs) stay NaN, silently
        warnings.simplefilter("ignore", RuntimeWarning)
        m, s, t = np.nanmean(est, axis=0), np.nanstd(est, axis=0), np.nanmean(tru, axis=0)
    line_with_band(b, m, m - s, m + s, label="estimate (mean ± 1 sd)", color="0.1", ax=ax)
    ax.scatter(b, t, color=PALETTE[3], zorder=3, label="ground truth", s=25)
    ax.set_xlabel("bin of the predictor (20 quantile bins)")
    ax.set_ylabel("Term I")
    ax.legend()
    return ax


def plot_bn_spectrum(ax: Any = None) -> Any:
    """Schematic of Fig. 1 (right): from statistical parity (BN empty) to predictive parity (BN = all).

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    ax.annotate("", xy=(1, 0), xytext=(0, 0), arrowprops={"arrowstyle": "<|-|>", "lw": 1.5, "color": "0.3"})
    pts = [
        (0, "BN = ∅\nstatistical parity"),
        (1 / 3, "BN = {Z}\n(keep SE)"),
        (2 / 3, "BN = {W}\n(keep IE)"),
        (1, "BN = {Z, W}\n≈ predictive parity"),
    ]
    for i, (px, lab) in enumerate(pts):
        ax.scatter([px], [0], s=80, color=PALETTE[i], zorder=3)
        ax.text(px, 0.08 if i % 2 == 0 else -0.08, lab, ha="center", va="bottom" if i % 2 == 0 else "top", fontsize=9)
    ax.set_xlim(-0.2, 1.2)
    ax.set_ylim(-0.3, 0.3)
    ax.set_axis_off()
    return ax
