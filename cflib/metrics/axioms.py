"""Soundness metrics of counterfactual models from Pearl's axioms: the one implementation in cflib.

Monteiro et al. (ICLR 2023, Sec. 3.1-3.2, App. B-C; Tables 1-4) define the metrics for a black-box
counterfactual function ``x* = f(x, pa, pa*)``; Melistas et al. (*Benchmarking counterfactual image
generation*, Sec. 3.3 (a)-(b), Eqs. 7-8) apply them to deep SCMs. Both are computed here (by the modules
listed at the end, all re-exported by this one), on any
:class:`~cflib.scm.protocol.CounterfactualModel` (``abduct`` / ``predict`` / ``counterfactual`` over a
dict of named variables):

* :func:`measure_composition` -- ``d(x, f_null^(m)(x))`` for ``m = 1..M``: the null intervention
  applied ``m`` times, every variable of the output fed back in;
* :func:`measure_reversibility` -- ``d(x, p^(c)(x))`` with ``p`` = intervene, then set the intervened
  variables back to their factual values, for cycles ``c = 1..C``;
* :func:`measure_effectiveness` -- readers (pseudo-oracles or anti-causal predictors) read each
  attribute back from the counterfactual image, against the counterfactual value of that attribute;
* :func:`measure_commutativity` -- Lemma C.1: two interventions in either order give the same image.

Each returns a result object that keeps the per-image arrays. The interventions come from ``do``
values or from a sampler passed in (:class:`InterventionSampler`: another value or bin, the
benchmark's protocol; :class:`MarginalSampler`: the training marginal, the axiomatic-soundness
protocol). The image distance is :func:`l1_distance` (App. B: mean absolute pixel difference, on
the 0-255 scale for images in [0, 1]); it checks a declared value range instead of clipping.

The function form of the axiomatic-soundness chapter -- :func:`composition`, :func:`reversibility`,
:func:`effectiveness`, :func:`commutativity` on ``f(x, pa, pa*)`` -- is the same computation through
one adapter (:class:`~cflib.scm.adapters.FunctionModel`), returning plain arrays.
:func:`soundness_report` runs them all into one long DataFrame, :func:`summarise` averages over images
then reports mean and population std over seeds, :func:`table1` lays it out like the paper's Table 1,
and :func:`average_rank` / :func:`rank_change` implement the ranking of Tables 2-4.

Where each part lives (every name stays importable from here):

* :mod:`cflib.metrics.image_distance` -- :func:`l1_distance`;
* :mod:`cflib.metrics.samplers` -- :class:`InterventionSampler`, :class:`MarginalSampler`,
  :func:`sample_do_values`;
* :mod:`cflib.metrics.readers` -- :class:`Oracle`, :class:`AttributePredictor`, :func:`score`,
  :class:`AbsoluteError`;
* :mod:`cflib.metrics.measures` -- the ``measure_*`` functions and their result objects;
* :mod:`cflib.metrics.function_form` -- the function form, :func:`soundness_report` and the image
  sequences of Fig. 1;
* this module -- the summaries, the Table-1 layout and the rankings of Tables 2-4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..scm.adapters import FunctionModel, ParentEncoder, Parents
from ..scm.adapters import ImageModelAdapter as ModelFunction
from ..scm.protocol import CounterfactualModel
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_count,
    check_names,
    describe,
    warn,
)
from .function_form import CounterfactualFunction as CounterfactualFunction
from .function_form import commutativity as commutativity
from .function_form import composition as composition
from .function_form import composition_sequence as composition_sequence
from .function_form import effectiveness as effectiveness
from .function_form import partial as partial
from .function_form import reversibility as reversibility
from .function_form import reversibility_sequence as reversibility_sequence
from .function_form import score_counterfactuals as score_counterfactuals
from .function_form import soundness_report as soundness_report
from .image_distance import l1_distance as l1_distance
from .measures import CommutativityResult as CommutativityResult
from .measures import CompositionResult as CompositionResult
from .measures import EffectivenessResult as EffectivenessResult
from .measures import ReversibilityResult as ReversibilityResult
from .measures import measure_commutativity as measure_commutativity
from .measures import measure_composition as measure_composition
from .measures import measure_effectiveness as measure_effectiveness
from .measures import measure_reversibility as measure_reversibility
from .readers import AbsoluteError as AbsoluteError
from .readers import AttributePredictor as AttributePredictor
from .readers import Oracle as Oracle
from .readers import score as score
from .samplers import InterventionSampler as InterventionSampler
from .samplers import MarginalSampler as MarginalSampler
from .samplers import Sampler as Sampler
from .samplers import sample_do_values as sample_do_values

# The names imported from this package's modules above stay importable from here (``axioms.score``) but
# are listed in their own module's __all__ only, so that cflib.metrics exports each name once.
__all__ = [
    "Parents",
    "CounterfactualModel",
    "ParentEncoder",
    "ModelFunction",
    "FunctionModel",
    "summarise",
    "table1",
    "average_rank",
    "rank_change",
    "effectiveness_ranks",
]


# ----------------------------------------------------------------------------------------------------
# Summaries over seeds, the Table-1 layout and the rankings of Tables 2-4
# ----------------------------------------------------------------------------------------------------
def _check_str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValidationTypeError(f"{name} must be a name (str), got {describe(value)} ({type(value).__name__})")
    return value


def _frame(df: Any, name: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ValidationTypeError(f"{name} must be a pandas DataFrame, got {describe(df)} ({type(df).__name__})")
    if df.empty:
        raise ValidationError(f"{name} is empty: it needs rows")
    return df


def summarise(df: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Mean and population std (ddof = 0) over seeds of the per-seed values, as the paper reports.

    Parameters
    ----------
    df : pandas.DataFrame
        Concatenated :func:`soundness_report` outputs with a ``seed`` column.
    by : sequence of str
        Label columns identifying a model configuration.

    Returns
    -------
    pandas.DataFrame
        One row per configuration, metric, intervened, measured and step, with ``mean``, ``std`` and ``seeds``.
    """
    by = check_names(by, "by", what="column")
    _frame(df, "df")
    keys = [*by, "metric", "intervened", "measured", "step"] + (["oracles"] if "oracles" in df.columns else [])
    missing = [k for k in [*keys, "value"] if k not in df.columns]
    if missing:
        raise ValidationError(f"df lacks column(s) {missing}; expected soundness_report output with labels {list(by)}")
    g = df.groupby(keys, sort=False)["value"]
    return g.agg(mean="mean", std=lambda v: float(np.std(v, ddof=0)), seeds="count").reset_index()


def table1(
    summary: pd.DataFrame,
    by: Sequence[str] = ("model",),
    *,
    composition_step: int = 1,
    reversibility_step: int = 1,
    decimals: int = 2,
    oracles: str = "main",
) -> pd.DataFrame:
    """Lay a :func:`summarise` output out like the paper's Table 1: one row per model, "mean (std)" cells.

    Columns: ``composition``, then per intervened parent ``p``: effectiveness of every measured
    parent (``do(p): acc/err q``) and ``do(p): reversibility``.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`summarise`.
    by : sequence of str
        Configuration columns (the row index).
    composition_step, reversibility_step : int
        Which power / cycle to show (paper: 1).
    decimals : int
        Rounding.
    oracles : str
        Which oracle family's effectiveness to show.

    Returns
    -------
    pandas.DataFrame
    """
    by = check_names(by, "by", what="column")
    _frame(summary, "summary")
    missing = [k for k in [*by, "metric", "intervened", "measured", "step", "mean", "std"] if k not in summary.columns]
    if missing:
        raise ValidationError(f"summary lacks column(s) {missing}; expected summarise output with labels {list(by)}")
    composition_step, reversibility_step = (
        check_count(composition_step, "composition_step"),
        check_count(reversibility_step, "reversibility_step"),
    )
    decimals = check_count(decimals, "decimals", minimum=0)
    _check_str(oracles, "oracles")
    s = summary
    if "oracles" in s.columns:
        s = s[(s.metric != "effectiveness") | (s.oracles == oracles)]

    def cell(r: pd.Series) -> str:
        return f"{r['mean']:.{decimals}f} ({r['std']:.{decimals}f})"

    parts = []
    c = s[(s.metric == "composition") & (s.step == composition_step)].copy()
    c["column"] = "composition"
    parts.append(c)
    e = s[s.metric == "effectiveness"].copy()
    e["column"] = "do(" + e.intervened + "): " + e.measured
    parts.append(e)
    r = s[(s.metric == "reversibility") & (s.step == reversibility_step)].copy()
    r["column"] = "do(" + r.intervened + "): reversibility"
    parts.append(r)
    long = pd.concat(parts)
    long["cell"] = long.apply(cell, axis=1)
    order = list(dict.fromkeys(long["column"]))
    wide = long.pivot_table(index=list(by), columns="column", values="cell", aggfunc="first", sort=False)
    return wide[[c for c in order if c in wide.columns]]


def average_rank(table: pd.DataFrame, columns: Mapping[str, bool]) -> pd.Series:
    """Average rank over columns, ranking all rows jointly (Tables 2-4 recipe; ties get the mean rank).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per model configuration, numeric columns.
    columns : dict
        Column -> ``True`` if higher is better (accuracy), ``False`` if lower is better (error).

    Returns
    -------
    pandas.Series
        Mean rank per row (1 = best).
    """
    _frame(table, "table")
    if not isinstance(columns, Mapping) or not columns:
        raise ValidationTypeError(
            f"columns must be a non-empty dict column -> higher_is_better (bool), got {describe(columns)}"
        )
    for c, hib in columns.items():
        if not isinstance(hib, (bool, np.bool_)):
            raise ValidationTypeError(
                f"columns[{c!r}] must be True (higher is better) or False (lower is better), got {describe(hib)}"
            )
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValidationError(f"table lacks column(s) {missing}")
    nan = [c for c in columns if table[c].isna().any()]
    if nan:
        warn(
            f"table has missing values in column(s) {nan}: those rows are ranked on their other columns only; fill or drop them for a fair rank"
        )
    ranks = pd.concat([table[c].rank(ascending=not hib, method="average") for c, hib in columns.items()], axis=1)
    return ranks.mean(axis=1)


def effectiveness_ranks(
    summary: pd.DataFrame,
    by: Sequence[str],
    family: str,
    columns: Mapping[tuple[str, str], bool],
    *,
    reference: str = "main",
) -> pd.DataFrame:
    """Tables 2-4: effectiveness under one oracle family, its average rank and the change from the reference family.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`summarise` output with an ``oracles`` column, restricted to one block of models.
    by : sequence of str
        Columns identifying a model configuration (the rows, ranked jointly).
    family : str
        Oracle family to rank with.
    columns : dict
        ``(intervened, measured) -> higher_is_better`` (True for accuracies, False for errors).
    reference : str
        Family giving the "original rank" (Table 1's oracles).

    Returns
    -------
    pandas.DataFrame
        The effectiveness columns (means), ``avg rank``, ``original rank`` and ``abs diff``.
    """
    by = check_names(by, "by", what="column")
    _frame(summary, "summary")
    missing = [k for k in [*by, "metric", "oracles", "intervened", "measured", "mean"] if k not in summary.columns]
    if missing:
        raise ValidationError(
            f"summary lacks column(s) {missing}; expected summarise output of soundness reports with extra oracle families"
        )
    _check_str(family, "family")
    _check_str(reference, "reference")
    if not isinstance(columns, Mapping) or not columns:
        raise ValidationTypeError(
            f"columns must be a non-empty dict (intervened, measured) -> higher_is_better, got {describe(columns)}"
        )
    for key in columns:
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(v, str) for v in key)):
            raise ValidationTypeError(
                f"columns keys must be pairs (intervened, measured) of names, got {describe(key)}"
            )
    e = summary[summary.metric == "effectiveness"]

    def wide(fam: str) -> pd.DataFrame:
        sub = e[e.oracles == fam]
        if sub.empty:
            raise ValueError(f"no effectiveness rows for oracle family {fam!r}")
        return sub.pivot_table(index=list(by), columns=["intervened", "measured"], values="mean", sort=False)

    w, ref = wide(family), wide(reference)
    cols = dict(columns)
    absent = [k for k in cols if k not in w.columns or k not in ref.columns]
    if absent:
        raise ValidationError(
            f"columns names (intervened, measured) pair(s) {absent} with no effectiveness rows for {family!r} or {reference!r}"
        )
    out = w[list(cols)].copy()
    out.columns = [f"do({a}): {b}" for a, b in cols]
    named = {f"do({a}): {b}": hib for (a, b), hib in cols.items()}
    ref_t = ref.loc[w.index, list(cols)].copy()
    ref_t.columns = out.columns
    out["avg rank"] = average_rank(out, named)
    out["original rank"] = average_rank(ref_t, named)
    out["abs diff"] = (out["avg rank"] - out["original rank"]).abs()
    return out


def rank_change(rank_a: pd.Series, rank_b: pd.Series) -> float:
    """Mean absolute difference between two average-rank vectors over the same rows (the captions of Tables 2-4)."""
    for name, r in (("rank_a", rank_a), ("rank_b", rank_b)):
        if not isinstance(r, pd.Series):
            raise ValidationTypeError(
                f"{name} must be a pandas Series (the output of average_rank), got {describe(r)} ({type(r).__name__})"
            )
        if r.empty:
            raise ValidationError(f"{name} is empty: it needs ranked rows")
        if r.isna().any():
            raise ValidationError(f"{name} has {int(r.isna().sum())} missing rank(s)")
    if not rank_a.index.equals(rank_b.index):
        raise ValidationError("rank_a and rank_b must rank the same rows (same index, same order)")
    return float(np.mean(np.abs(rank_a.to_numpy() - rank_b.to_numpy())))
