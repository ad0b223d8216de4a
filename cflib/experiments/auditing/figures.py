"""Figures of the conformance page (notebook 02): the audit's effects beside the paper's, and the error rates per
group beside Aequitas's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .conformance import AEQUITAS_COMPAS

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["plot_error_rates", "plot_faircause"]


def plot_faircause(table: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """The audit's effects and the paper's, each with its 95% interval, one row per outcome and effect.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`faircause_table`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ... import plotting

    if ax is None:
        _, ax = plotting.subplots(1, 1, width=6.0, height=3.4)
    labels = [f"{o} {e}" for o, e in table.index]
    pos = np.arange(len(labels))[::-1]
    ax.errorbar(
        table["ours (%)"],
        pos + 0.12,
        xerr=table["ours ± (%)"],
        fmt="o",
        capsize=3,
        color=plotting.PALETTE[0],
        label="the audit",
    )
    ax.errorbar(
        table["paper (%)"],
        pos - 0.12,
        xerr=table["paper ± (%)"],
        fmt="s",
        capsize=3,
        color=plotting.PALETTE[1],
        label="paper (faircause)",
    )
    ax.axvline(0.0, color="0.5", lw=0.8)
    ax.set_yticks(pos, labels)
    ax.set_xlabel("effect of race (percentage points, 95% interval)")
    ax.legend(loc="lower right", fontsize=8)
    return ax


def plot_error_rates(report: Any, ax: Axes | None = None) -> Axes:
    """False-positive and false-negative rates per group with Wilson intervals, and Aequitas's printed values.

    Parameters
    ----------
    report : cflib.audit.AuditReport
        The audit of :func:`compas_by_race`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from ... import plotting

    if ax is None:
        _, ax = plotting.subplots(1, 1, width=6.0, height=3.4)
    g = report.groups
    pos = np.arange(len(g))[::-1]
    fnr, fnr_lo, fnr_hi = 1 - g["tpr"], 1 - g["tpr_high"], 1 - g["tpr_low"]
    ax.errorbar(
        g["fpr"],
        pos + 0.12,
        xerr=[g["fpr"] - g["fpr_low"], g["fpr_high"] - g["fpr"]],
        fmt="o",
        capsize=3,
        color=plotting.PALETTE[3],
        label="FPR (audit)",
    )
    ax.errorbar(
        fnr,
        pos - 0.12,
        xerr=[fnr - fnr_lo, fnr_hi - fnr],
        fmt="o",
        capsize=3,
        color=plotting.PALETTE[0],
        label="FNR (audit)",
    )
    for i, grp in enumerate(g.index):
        printed = AEQUITAS_COMPAS["printed"].get(grp)
        if printed:
            ax.plot(
                [printed["fpr"], printed["fnr"]],
                [pos[i] + 0.12, pos[i] - 0.12],
                "kx",
                ms=7,
                label="Aequitas (printed)"
                if i == 0 or "Aequitas (printed)" not in ax.get_legend_handles_labels()[1]
                else None,
            )
    ax.set_yticks(pos, [f"{grp} (n={int(n)})" for grp, n in g["n"].items()])
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"rate ({1 - report.alpha:.0%} Wilson interval)")
    ax.legend(loc="lower right", fontsize=8)
    return ax
