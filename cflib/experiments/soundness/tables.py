"""The chapter's tables: summary look-ups, Tables 2-4 (effectiveness ranks), Table 5 and the metric-truth correlations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from scipy import stats

from ...metrics import axioms as ax
from .common import BLOCKS, PARENTS
from .truth import TRUTH_METRICS

#: Tables 2-4's effectiveness columns: (intervened, measured) -> higher is better.
RANK_COLUMNS = {("digit", "digit"): True, ("digit", "hue"): False, ("hue", "digit"): True, ("hue", "hue"): False}


def summary_value(
    summary: pd.DataFrame, metric: str, intervened: str = "null", measured: str = "image", step: int = 1, **labels: Any
) -> float:
    """One mean of an :func:`cflib.metrics.axioms.summarise` table (the first matching row).

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`~cflib.metrics.axioms.summarise`.
    metric : str
        ``"composition"``, ``"reversibility"`` or ``"effectiveness"``.
    intervened, measured : str
        Intervened parent (``"null"`` for composition) and parent read by the oracle (``"image"`` for distances).
    step : int
        Composition power or reversibility cycle.
    **labels
        Further column filters, e.g. ``model="identity"``, ``block="confounded"``, ``oracles="main"``.

    Returns
    -------
    float
    """
    q = summary[
        (summary.metric == metric)
        & (summary.intervened == intervened)
        & (summary.measured == measured)
        & (summary.step == step)
    ]
    for col, val in labels.items():
        if col not in q.columns:
            raise ValueError(f"summary has no column {col!r}; its columns are {list(summary.columns)}")
        q = q[q[col] == val]
    if q.empty:
        raise ValueError(
            f"no summary row for metric={metric!r}, intervened={intervened!r}, measured={measured!r}, step={step}, {labels}"
        )
    return float(q["mean"].iloc[0])


def rank_robustness(summary: pd.DataFrame) -> tuple[dict[tuple[int, str], pd.DataFrame], pd.DataFrame]:
    """Tables 2-4: effectiveness ranks of the two confounded blocks under each alternative oracle family.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`soundness_study` summary.

    Returns
    -------
    rank_tables : dict
        ``(table number, block)`` -> :func:`~cflib.metrics.axioms.effectiveness_ranks` table.
    rank_changes : pandas.DataFrame
        Mean absolute rank change, one row per table, one column per block.
    """
    rank_tables, changes = {}, {}
    for fam, table_no in [("biased", 2), ("biased + SI", 3), ("linear", 4)]:
        for b in ("confounded", "confounded_full_support"):
            t = ax.effectiveness_ranks(summary[summary.block == b], ["SI", "model"], fam, RANK_COLUMNS)
            rank_tables[table_no, b] = t
            changes[f"Table {table_no}: {fam}", BLOCKS[b]] = t["abs diff"].mean()
    return rank_tables, pd.Series(changes).unstack()


def table5(summary: pd.DataFrame, cycles: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Table 5 layout: effectiveness per factor with reversibility after 1 and ``cycles`` cycles, and composition at m = 1 and 10.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`shapes_study` summary.
    cycles : int
        Reversibility cycles that were run.

    Returns
    -------
    effectiveness : pandas.DataFrame
        Rows (intervened factor, model); oracle scores and the two reversibility columns.
    composition : pandas.DataFrame
        Rows per model, columns the composition power (all of 1..10).
    """
    eff = summary[summary.metric == "effectiveness"].pivot_table(
        index=["intervened", "model"], columns="measured", values="mean"
    )
    rev = summary[summary.metric == "reversibility"].pivot_table(
        index=["intervened", "model"], columns="step", values="mean"
    )
    table = eff.round(2).join(
        rev[[1, cycles]].round(2).rename(columns={1: "rev l1 (1 cycle)", cycles: f"rev l1 ({cycles} cycles)"})
    )
    return table, summary[summary.metric == "composition"].pivot_table(index="model", columns="step", values="mean")


def metric_truth_correlations(table: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation of each metric (and the combined rank) with the true error, per intervention.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`true_error_table` output.

    Returns
    -------
    pandas.DataFrame
        Index (intervention, metric); columns ``Spearman rho`` and ``p-value``.
    """
    corr = {}
    for k in PARENTS:
        sub = table[table.intervention == k]
        for metric in [*TRUTH_METRICS, "combined rank"]:
            r = stats.spearmanr(sub[metric], sub["true error"])
            corr[k, metric] = {"Spearman rho": r.statistic, "p-value": r.pvalue}
    return pd.DataFrame(corr).T


def seed_correlations(tables: Mapping[int, pd.DataFrame]) -> pd.DataFrame:
    """:func:`metric_truth_correlations` of each seed's zoo, side by side, and their mean.

    Parameters
    ----------
    tables : dict
        Seed -> :func:`true_error_table` (:func:`truth_study`).

    Returns
    -------
    pandas.DataFrame
        Index (intervention, metric); one column of Spearman rho per seed (``seed <s>``) and ``mean``.
    """
    if not tables:
        raise ValueError("tables must hold at least one seed's table")
    out = pd.DataFrame({f"seed {s}": metric_truth_correlations(t)["Spearman rho"] for s, t in tables.items()})
    out["mean"] = out.mean(axis=1)
    return out
