"""Figures of the chapter's notebooks 01-04 (each function draws on axes it is given or creates, and returns them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
from scipy import stats

from ...plotting import line_with_band, subplots
from .audit import AuditResult

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "plot_output_histograms",
    "plot_closed_form",
    "plot_concentration",
    "plot_zscore_qq",
    "plot_type1",
    "plot_power",
    "plot_audit_grid",
    "plot_bandwidth_study",
    "plot_flip_vs_set",
]


def plot_output_histograms(y: np.ndarray, y_cf: np.ndarray, ax: Axes | None = None) -> Axes:
    """Histograms of factual and counterfactual predicted probabilities (the two laws P and Q).

    Parameters
    ----------
    y, y_cf : numpy.ndarray, (m, 1)
        From :func:`counterfactual_outputs`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    bins = np.linspace(0, 1, 41).tolist()  # the same edges, as the sequence matplotlib's stubs ask for
    ax.hist(y[:, 0], bins=bins, alpha=0.6, density=True, label="factual $\\hat Y$ (P)")
    ax.hist(y_cf[:, 0], bins=bins, alpha=0.6, density=True, label="counterfactual $\\hat Y_{a'}$ (Q)")
    ax.set_xlabel("predicted probability")
    ax.set_ylabel("density")
    ax.legend()
    return ax


def plot_closed_form(closed: Mapping[str, pd.DataFrame], axes: Sequence[Axes]) -> Sequence[Axes]:
    """One panel per case of :func:`closed_form_study`: the mean estimate with a 2 s.e. band and the closed form.

    Parameters
    ----------
    closed : mapping
        Output of :func:`closed_form_study`.
    axes : sequence of matplotlib.axes.Axes
        One per case.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        ``axes``.
    """
    for ax, (name, df) in zip(axes, closed.items(), strict=True):
        x = df["parameter"]
        line_with_band(
            x, df["mean"], df["mean"] - 2 * df["se"], df["mean"] + 2 * df["se"], label="estimate (mean, ±2 s.e.)", ax=ax
        )
        ax.plot(x, df["closed form"], "k--", lw=1, label="closed form")
        ax.set_xlabel(name)
        ax.set_ylabel("N-TE")
        ax.legend()
    return axes


def _log_m_axis(ax: Axes, ms: Sequence[int]) -> None:
    ax.set_xscale("log")
    ax.set_xlabel("m (pairs)")
    ax.set_xticks(list(ms), [str(m) for m in ms])
    ax.tick_params(axis="x", which="minor", labelbottom=False)


def plot_concentration(conc: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """The empirical 95% deviation and Hoeffding's bound against ``m`` (log-log).

    Parameters
    ----------
    conc : pandas.DataFrame
        Output of :func:`concentration_study`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = line_with_band(conc["m"], conc["empirical 95% |MTE - MMD^2|"], label="empirical 95% quantile", ax=ax)
    line_with_band(conc["m"], conc["Hoeffding 95% t"], label="Hoeffding bound (Theorem 4)", ax=ax)
    ax.set_yscale("log")
    ax.set_ylabel("deviation")
    ax.set_xlabel("sample size m")
    ax.legend()
    _log_m_axis(ax, conc["m"])
    return ax


def plot_zscore_qq(qq: Mapping[float, pd.DataFrame], m: int) -> np.ndarray:
    """QQ plots of the one-sided p-values ``1 - Phi(z)`` against the uniform law, one panel per epsilon.

    Parameters
    ----------
    qq : mapping
        Output of :func:`boundary_zscores`.
    m : int
        Its sample size (for the titles).

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import qq_uniform

    _, axes = subplots(1, len(qq), width=4)
    axes = np.atleast_1d(axes)
    for ax, (eps, df) in zip(axes, qq.items(), strict=True):
        for v in ("paper", "delta"):
            qq_uniform(stats.norm.sf(df[f"z_{v}"]), label=f"{v} $\\hat\\sigma$", ax=ax)
        ax.set_title(f"N-TE = $\\epsilon$ = {eps}, m = {m}")
        handles = dict(zip(*reversed(ax.get_legend_handles_labels()), strict=True))  # one entry per label
        ax.legend(handles.values(), handles.keys(), fontsize=8)
    return axes


def plot_type1(type1: pd.DataFrame, alpha: float, n_reps: int, ax: Axes | None = None) -> Axes:
    """Rejection rate at the boundary against ``m``, with the band ``alpha ± 2`` binomial s.e.

    Parameters
    ----------
    type1 : pandas.DataFrame
        Output of :func:`type1_study`.
    alpha : float
    n_reps : int
        Replications per point (for the binomial band).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    binom_se = np.sqrt(alpha * (1 - alpha) / n_reps)
    for eps, sub in type1.groupby("epsilon", sort=False):
        for v, ls in (("paper", "--"), ("delta", "-")):
            ax.plot(sub["m"], sub[v], ls, marker="o", label=f"$\\epsilon$ = {eps}, {v}")
    ax.axhspan(alpha - 2 * binom_se, alpha + 2 * binom_se, color="0.85", label="α ± 2 binomial s.e.")
    ax.set_ylabel("rejection rate at N-TE = ε")
    ax.set_xlabel("sample size m")
    ax.legend(fontsize=8)
    _log_m_axis(ax, sorted(type1["m"].unique()))
    return ax


def plot_power(power: pd.DataFrame, eps: float, ax: Axes | None = None) -> Axes:
    """Power against ``m`` per eps' (solid) with the normal approximation (dotted).

    Parameters
    ----------
    power : pandas.DataFrame
        Output of :func:`power_study`.
    eps : float
        The tolerance tested.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    for i, (e1, sub) in enumerate(power.groupby("eps'", sort=False)):
        ax.plot(sub["m"], sub["power"], marker="o", color=f"C{i}", label=f"ε' = {e1}")
        ax.plot(sub["m"], sub["theory"], ":", color=f"C{i}")
    ax.set_ylabel(f"rejection rate (ε = {eps})")
    ax.set_xlabel("sample size m")
    ax.legend(fontsize=8)
    ax.set_title("dotted: normal approximation")
    _log_m_axis(ax, sorted(power["m"].unique()))
    return ax


def plot_audit_grid(
    audits: Mapping[tuple[str, str], AuditResult], datasets: Sequence[str], archs: Sequence[str]
) -> np.ndarray:
    """Accuracy and unfairness of every variant, one row per data set and two panels per model.

    Each quantity has its own panel with horizontal bars from 0 (no second y-axis, no legend over the bars);
    the bars' numbers are written at their ends.

    Parameters
    ----------
    audits : mapping
        ``{(data set, model): AuditResult}``.
    datasets, archs : sequence of str
        Row and column order.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        ``(len(datasets), 2 * len(archs))``: for each model its accuracy panel, then its unfairness panel.
    """
    n_var = max(len(audits[(d, a)].table) for d in datasets for a in archs)
    _, axes = subplots(len(datasets), 2 * len(archs), width=1.9, height=0.32 * n_var + 1.0, squeeze=False)
    top = max(float(audits[(d, a)].table["unfairness"].max()) for d in datasets for a in archs)
    for i, name in enumerate(datasets):
        for j, arch in enumerate(archs):
            t = audits[(name, arch)].table
            y = np.arange(len(t))
            for k, (col, colour, label) in enumerate(
                (("accuracy", "C0", "accuracy"), ("unfairness", "C3", "unfairness (mean |Δp|)"))
            ):
                ax = axes[i, 2 * j + k]
                ax.barh(y, t[col], 0.6, color=colour)
                for yy, v in zip(y, t[col], strict=True):
                    ax.text(v, yy, f" {v:.2f}" if col == "accuracy" else f" {v:.2g}", va="center", fontsize=7)
                ax.set_xlim(0, 1.25 if col == "accuracy" else 1.3 * max(top, 1e-9))
                ax.set_yticks(y, t["variant"] if k == 0 else [""] * len(y))
                ax.invert_yaxis()
                ax.set_title(f"{name} / {arch}\n{label}" if k == 0 else f"\n{label}", fontsize=8)
                ax.tick_params(labelsize=7)
                if col == "accuracy":
                    ax.set_xticks([0, 0.5, 1])
                else:
                    ax.locator_params(axis="x", nbins=3)
    return axes


def plot_bandwidth_study(bw: np.ndarray, shift: np.ndarray, grid: np.ndarray, sup: np.ndarray) -> np.ndarray:
    """Heat map of N-TE over (shift, bandwidth) and the supremum over shifts against the bandwidth.

    Parameters
    ----------
    bw, shift : numpy.ndarray
        The axes of :func:`bandwidth_study`.
    grid, sup : numpy.ndarray
        Its outputs.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    fig, axes = subplots(1, 2, width=4.3)
    im = axes[0].pcolormesh(shift, bw, grid, shading="auto", vmin=0, vmax=1)
    axes[0].set_yscale("log")
    axes[0].set_xlabel("location shift δ")
    axes[0].set_ylabel("bandwidth s")
    fig.colorbar(im, ax=axes[0], label="N-TE")
    axes[1].plot(bw, sup, color="k")
    for e in (0.1, 0.3):
        axes[1].axhline(e, ls="--", lw=1, color="C3")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("bandwidth s")
    axes[1].set_ylabel("sup over shifts of N-TE")
    return axes


def plot_flip_vs_set(blind: pd.DataFrame) -> np.ndarray:
    """N-TE against beta per intervention, and the mean |Δp| under the flip, one panel per share of ``a = 1``.

    Parameters
    ----------
    blind : pandas.DataFrame
        Output of :func:`flip_vs_set_study`.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    shares = list(blind["P(a=1)"].unique())
    _, axes = subplots(1, len(shares), width=4.2)
    for ax, p in zip(np.atleast_1d(axes), shares, strict=True):
        sub = blind[blind["P(a=1)"] == p]
        for (how, g), ls in zip(sub.groupby("intervention"), ("-", "--"), strict=True):
            ax.plot(g["beta"], g["N-TE"], ls, marker="o", label=f"N-TE, {how}")
        flip = sub[sub["intervention"] == "flip"]
        ax.plot(flip["beta"], flip["mean |Δp|"], ":", marker="s", color="0.4", label="mean |Δp| (flip)")
        ax.axhline(0.1, color="C3", lw=1, ls="--", label="ε = 0.1")
        ax.set_title(f"P(a = 1) = {p}")
        ax.set_xlabel("logit effect β")
        ax.set_ylabel("N-TE, or mean |Δp|")
        ax.legend(fontsize=7)
    return axes
