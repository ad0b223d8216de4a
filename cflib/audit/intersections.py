"""Group tables from counts, and intersectional groups: every combination of some columns, compared with the largest.

:func:`counts_table` builds the group table (:func:`cflib.stats.rates.group_rates`' columns: ``n`` and each rate with
its Wilson interval) from per-group counts, the same in memory and from a cluster's reduced counts.
:func:`cell_counts` counts the combinations of ``groups=["sex", "race"]`` present in a frame (the distributed scan
counts them partition by partition, :mod:`cflib.audit.partitions`), and :func:`with_intersections` adds their table
and the DP, EO and FPR differences of every combination against the largest one to a report's rows:

* each difference has Newcombe's interval at level ``1 - alpha / m`` over the ``m`` comparisons (Bonferroni, so the
  intervals hold together) and a p-value Holm-adjusted over the ``m`` comparisons (Holm 1979: the ``i``-th smallest
  of ``m`` p-values times ``m - i + 1``, made monotone), so the report keeps family-wise level ``alpha``;
* a combination with fewer than ``min_group_size`` units is listed with its ``n`` and status ``inconclusive`` (its
  comparisons too, with their numbers), never dropped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..stats.rates import newcombe_difference, rate_row
from .partitions import GROUP_COUNTS, cell_counts, cell_labels
from .rows import check_row, difference_row

__all__ = ["cell_counts", "cell_labels", "counts_table", "holm", "with_intersections"]

#: The differences compared per combination: name -> (numerator, denominator of each rate, what it compares).
_METRICS = {
    "DP": ("sel", "n", "selection rates", "invariance-test, eq. 5"),
    "EO": ("tp", "y1", "true-positive rates, units with y = 1", "invariance-test, eq. 6"),
    "FPR difference": ("fp", "n0", "false-positive rates, units with y = 0", "invariance-test, eq. 6"),
}


def counts_table(
    counts: Mapping[str, np.ndarray], decision: str | None, binary_y: bool, why_no_y: str, level: float
) -> pd.DataFrame:
    """The group table of :func:`cflib.stats.rates.group_rates` from per-group counts (same columns and notes).

    Parameters
    ----------
    counts : mapping of str to numpy.ndarray
        Group -> the counts of :data:`cflib.audit.partitions.GROUP_COUNTS`.
    decision : {"lab", "thr"} or None
        Which decisions to read (labels, the threshold, none).
    binary_y : bool
        Whether there is a 0/1 outcome.
    why_no_y : str
        Why the outcome's rates are not estimable when ``binary_y`` is false.
    level : float
        Level of the Wilson intervals.

    Returns
    -------
    pandas.DataFrame
        Indexed by group (sorted as text): ``n`` and each rate of :data:`cflib.stats.rates.RATES` with its interval,
        numerator and denominator, and ``note``.
    """
    no_decision = "predictions outside [0, 1] are not decisions"
    rows = {}
    for label in sorted(counts, key=str):
        c = dict(zip(GROUP_COUNTS, (int(v) for v in counts[label]), strict=True))
        n, ny = c["n"], c["y1"]
        sel, tp, fp = (c[f"{k}_{decision}"] for k in ("sel", "tp", "fp")) if decision else (0, 0, 0)
        kn: dict[str, tuple[int, int] | None] = {
            "base_rate": (ny, n) if binary_y else None,
            "selection_rate": (sel, n) if decision else None,
            "tpr": (tp, ny) if decision and binary_y else None,
            "fpr": (fp, n - ny) if decision and binary_y else None,
            "ppv": (tp, sel) if decision and binary_y else None,
        }
        rows[str(label)] = rate_row(n, kn, level, why_no_y if not binary_y else no_decision)
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group"
    return out


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment of ``m`` p-values (NaN left out of ``m`` and returned as NaN).

    Parameters
    ----------
    pvalues : sequence of float

    Returns
    -------
    list of float
        The adjusted p-values: the ``i``-th smallest times ``m - i + 1``, made non-decreasing, at most 1.
    """
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.size, math.nan)
    idx = np.flatnonzero(np.isfinite(p))
    order = idx[np.argsort(p[idx], kind="mergesort")]
    m, running = len(order), 0.0
    for i, j in enumerate(order):
        running = max(running, min(1.0, (m - i) * p[j]))
        out[j] = running
    return out.tolist()


def with_intersections(
    rows: pd.DataFrame,
    counts: Mapping[str, np.ndarray],
    kind: tuple[str | None, bool, str],
    settings: Any,
    tolerances: Mapping[str, float],
    columns: Sequence[str],
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The intersectional group table, the report's rows with each combination's DP, EO and FPR difference, and
    what the provenance records of them.

    Parameters
    ----------
    rows : pandas.DataFrame
        The report's rows so far (with their status columns).
    counts : mapping of str to numpy.ndarray
        From :func:`cell_counts` (or the distributed scan).
    kind : (str or None, bool, str)
        The decisions read (``"lab"``, ``"thr"``, ``None``), whether the outcome is 0/1, and why not.
    settings : AuditSettings
        ``alpha`` and ``min_group_size``.
    tolerances : mapping of str to float
    columns : sequence of str
        The group columns (for the method).

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame, dict)
        The group table (:func:`counts_table` with ``status``: ``inconclusive`` below ``min_group_size``, else
        ``sufficient``), the rows with ``"DP [cell vs reference]"`` ... appended, and the provenance's
        ``intersections`` (columns, reference, comparisons, correction, min_group_size).
    """
    decision, binary_y, why_no_y = kind
    alpha, small = float(settings.alpha), int(settings.min_group_size)
    table = counts_table(counts, decision, binary_y, why_no_y, 1 - alpha)
    table["status"] = np.where(table["n"] < small, "inconclusive", "sufficient")
    ref = max(sorted(counts, key=str), key=lambda g: int(counts[g][0]))
    metrics = [m for m in _METRICS if m == "DP" or binary_y]
    cells = [g for g in table.index if g != ref]
    m = max(len(cells) * len(metrics), 1)
    level = 1 - alpha / m
    diffs = {}
    for metric in metrics:
        for g in cells:
            diffs[(metric, g)] = _difference(counts[ref], counts[g], metric, decision, level)
    adjusted = dict(zip(diffs, holm([d.pvalue if d is not None else math.nan for d in diffs.values()]), strict=True))
    new = {}
    for (metric, g), d in diffs.items():
        name = f"{metric} [{g} vs {ref}]"
        if d is not None and not d.reason.startswith("not estimable"):
            d = _with_pvalue(d, adjusted[(metric, g)])
        found = difference_row(d, _METRICS[metric][2], alpha, "the predictions are not decisions (outside [0, 1])")
        method = (
            f"{metric} of the intersectional group {g} against the largest, {ref} (groups of {', '.join(columns)}): "
            f"Newcombe hybrid score interval at {level:.4g} = 1 - alpha/{m} (Bonferroni over {m} comparisons), "
            f"p-value Holm-adjusted over the {m} comparisons"
        )
        row = check_row(name, found, method=method, reference=_METRICS[metric][3], alpha=alpha, tolerances=tolerances)
        n = int(counts[g][0])
        if min(n, int(counts[ref][0])) < small and row["status"] != "not estimable":
            row.update(
                status="inconclusive",
                flagged=False,
                n_to_decide=math.nan,
                status_reason=f"a group below min_group_size = {small} units ({g}: {n}, {ref}: {int(counts[ref][0])}): "
                "listed, not decided",
            )
        new[name] = row
    info = {
        "columns": list(columns),
        "reference": ref,
        "comparisons": len(diffs),
        "min_group_size": small,
        "correction": f"Holm over the {len(diffs)} comparisons (p-values and verdicts); intervals at 1 - alpha/"
        f"{m} (Bonferroni), on which each status is decided",
    }
    if not new:
        return table, rows, info
    extra = pd.DataFrame.from_dict(new, orient="index").reindex(columns=rows.columns)
    out = pd.concat([rows, extra])
    out.index.name = rows.index.name
    return table, out, info


def _difference(ref: np.ndarray, cell: np.ndarray, metric: str, decision: str | None, level: float) -> Any:
    """The metric's difference ``cell - reference`` with Newcombe's interval (``None`` without decisions)."""
    if decision is None:
        return None
    c0 = dict(zip(GROUP_COUNTS, (int(v) for v in ref), strict=True))
    c1 = dict(zip(GROUP_COUNTS, (int(v) for v in cell), strict=True))
    for c in (c0, c1):
        c["n0"] = c["n"] - c["y1"]
    num, den = _METRICS[metric][0], _METRICS[metric][1]
    key = f"{num}_{decision}"
    return newcombe_difference(c0[key], c0[den], c1[key], c1[den], level)


def _with_pvalue(d: Any, p: float) -> Any:
    """The difference with its Holm-adjusted p-value in place of its own."""
    import dataclasses

    return dataclasses.replace(d, pvalue=float(p))
