"""Tables of notebooks 01, 03 and 04: coverage, the COMPAS effects beside Fig. 5, Algorithm 1's rates, the Pareto front."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...fairness.effects import MEASURES
from .common import EFFECTS
from .cookbook import COMPAS_OUTCOMES, PAPER_FIG5, PAPER_FIG5_HALFWIDTH

__all__ = [
    "coverage_table",
    "effects_table",
    "compare_fig5",
    "cookbook_summary",
    "pareto_front",
]


def coverage_table(cov: pd.DataFrame) -> pd.DataFrame:
    """Coverage of the 95% intervals and the spread of the estimates per measure.

    Parameters
    ----------
    cov : pandas.DataFrame
        Output of :func:`coverage_study`.

    Returns
    -------
    pandas.DataFrame
        Indexed by measure (``TV, DE, IE, SE``): ``coverage, mean_estimate, truth, mean_se, sd_estimate``.
    """
    coverage = cov.groupby("measure").agg(
        coverage=("covered", "mean"),
        mean_estimate=("estimate", "mean"),
        truth=("truth", "first"),
        mean_se=("se", "mean"),
        sd_estimate=("estimate", "std"),
    )
    return coverage.loc[list(MEASURES)]


def effects_table(est: Mapping[str, Any]) -> pd.DataFrame:
    """TV, Ctf-DE/IE/SE with standard errors and intervals of every outcome, and of ``Ŷ FP`` on the adapted covariates.

    Parameters
    ----------
    est : mapping
        Second output of :func:`compas_effects`.

    Returns
    -------
    pandas.DataFrame
        Indexed by (outcome label, measure): ``estimate, se, ci_low, ci_high, pvalue``.
    """
    labels = {**COMPAS_OUTCOMES, "Ŷ FP (adapted Z, W)": "fp_adapted"}
    return pd.concat({k: est[v].summary().rename_axis("measure") for k, v in labels.items()}, names=["outcome"])


def compare_fig5(est: Mapping[str, Any]) -> pd.DataFrame:
    """Our DE, IE, SE of Y, Northpointe and the fair predictor beside the paper's (Fig. 5), with sign and significance.

    Parameters
    ----------
    est : mapping
        Second output of :func:`compas_effects`.

    Returns
    -------
    pandas.DataFrame
        Rows ``(effect, outcome)`` (DE, IE, SE of Y, Northpointe, the fair predictor); columns ``paper (%)``,
        ``paper ± (%)``, ``book (%)`` (percentage points, the unit of the paper's Fig. 5 and of the book's plot,
        2 decimals), ``sign agrees`` and ``significance agrees``: five columns, so the table fits the page.
    """
    labels = ("Y", "Ŷ NP", "Ŷ FP")
    ours = pd.DataFrame(
        {k: [est[COMPAS_OUTCOMES[k]].estimate[m] for m in EFFECTS] for k in labels}, index=list(EFFECTS)
    )
    ours_sig = pd.DataFrame(
        {k: [est[COMPAS_OUTCOMES[k]].significant(m) for m in EFFECTS] for k in labels}, index=list(EFFECTS)
    )
    paper_sig = PAPER_FIG5.abs() > PAPER_FIG5_HALFWIDTH
    return pd.concat(
        {
            "paper (%)": (100 * PAPER_FIG5).round(2),
            "paper ± (%)": (100 * PAPER_FIG5_HALFWIDTH).round(2),
            "book (%)": (100 * ours).round(2),
            "sign agrees": np.sign(PAPER_FIG5) == np.sign(ours),
            "significance agrees": paper_sig == ours_sig,
        },
        axis=1,
    ).stack(level=1, future_stack=True)


def cookbook_summary(study: pd.DataFrame, truth: Mapping[str, Mapping[str, float]]) -> tuple[pd.Series, pd.DataFrame]:
    """SUCCESS rate of Algorithm 1 per predictor and pass rate per effect, with the tested quantity's truth.

    Parameters
    ----------
    study : pandas.DataFrame
        Output of :func:`cookbook_study`.
    truth : mapping
        ``{outcome: {effect: value}}`` from :func:`~cflib.data.fairness_sim.compas_like_sfm`
        (``return_truth=True``).

    Returns
    -------
    (pandas.Series, pandas.DataFrame)
        SUCCESS rate per predictor, and per (predictor, effect) ``pass_rate, mean_tested, truth``.
    """
    rates = study.groupby("predictor").apply(
        lambda g: (g.groupby("rep").verdict.first() == "SUCCESS").mean(), include_groups=False
    )
    per_effect = study.groupby(["predictor", "effect"]).agg(
        pass_rate=("passed", "mean"), mean_tested=("tested", "mean")
    )
    # The tested quantity is Ctf-CE(y_hat) for DE and IE, and Ctf-SE(y - y_hat) for SE (in BN).
    per_effect["truth"] = [truth["y"][e] - truth[p][e] if e == "SE" else truth[p][e] for p, e in per_effect.index]
    return rates, per_effect


def pareto_front(study: pd.DataFrame, bn_labels: Sequence[str]) -> pd.DataFrame:
    """Mean and standard deviation of SPM and iPPM per BN set (the points of Fig. 6).

    Parameters
    ----------
    study : pandas.DataFrame
        Output of :func:`pareto_study`.
    bn_labels : sequence of str
        The BN labels, in the order of the spectrum.

    Returns
    -------
    pandas.DataFrame
        Indexed by BN label: ``spm_mean, spm_sd, ippm_mean, ippm_sd`` (sd 0 with one repetition).
    """
    front = study.groupby("bn").agg(
        spm_mean=("spm", "mean"), spm_sd=("spm", "std"), ippm_mean=("ippm", "mean"), ippm_sd=("ippm", "std")
    )
    return front.loc[list(bn_labels)].fillna(0)
