"""Figures of notebooks 01 and 03: the standardised errors of the coverage study and the bars of Fig. 5."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ...fairness.decomposition import ippm
from ...fairness.effects import MEASURES, EffectEstimates
from .cookbook import COMPAS_OUTCOMES

__all__ = [
    "plot_standardised_errors",
    "fig5_bars",
]


def plot_standardised_errors(cov: pd.DataFrame, ax: Any = None) -> Any:
    """Histograms of ``(estimate - truth) / se`` per measure against the standard normal density.

    Parameters
    ----------
    cov : pandas.DataFrame
        Output of :func:`coverage_study`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    for m in MEASURES:
        ax.hist(cov.loc[cov.measure == m, "z"], bins=15, histtype="step", lw=1.5, density=True, label=m)
    g = np.linspace(-4, 4, 200)
    ax.plot(g, np.exp(-(g**2) / 2) / np.sqrt(2 * np.pi), color="0.3", ls="--", label="N(0, 1)")
    ax.set_xlabel("(estimate - truth) / se")
    ax.set_ylabel("density")
    ax.set_title(f"Standardised errors over {cov.rep.nunique()} samples")
    ax.legend()
    return ax


def fig5_bars(
    data: pd.DataFrame, est: Mapping[str, EffectEstimates]
) -> dict[str, dict[str, tuple[float, float, float]]]:
    """The bars of Fig. 5: Ctf-DE/IE/SE and SPM with 95% intervals, and iPPM over 10 bins of each score.

    Parameters
    ----------
    data : pandas.DataFrame
        First output of :func:`compas_effects`.
    est : mapping
        Second output of :func:`compas_effects`.

    Returns
    -------
    dict
        ``{outcome label: {measure: (value, low, high)}}`` for :func:`cflib.fairness.plots.plot_effect_bars`.
    """
    scores = {"Y": None, "Ŷ NP": "np_score", "Ŷ FP": "fp_score", "Ŷ proj": "proj_score"}
    bars = {}
    for k, v in COMPAS_OUTCOMES.items():
        e = est[v]
        bars[k] = {
            lab: (e.estimate[m], *e.ci[m])
            for lab, m in (("Ctf-DE", "DE"), ("Ctf-IE", "IE"), ("Ctf-SE", "SE"), ("SPM", "TV"))
        }
        ip = ippm(data.nonwhite, data.two_year_recid, data[scores[k]], 10) if scores[k] else np.nan
        bars[k]["iPPM"] = (ip, np.nan, np.nan)
    return bars
