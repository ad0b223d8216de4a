"""The chapter's tables: summary look-ups, Tables 2-4 (effectiveness ranks), Table 5 and the metric-truth correlations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
from scipy import stats

from ...metrics import axioms as ax
from ..papers.values import paper_table, show_side_by_side, side_by_side
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


#: The paper whose tables these are, and its names of the book's blocks and Table 1 columns.
PAPER = "axiomatic-soundness"
_PAPER_BLOCK = {
    "unconfounded": "unconfounded",
    "confounded": "confounded w/o full support",
    "confounded_full_support": "confounded w/ full support",
}
_TABLE1_COLUMNS = {
    "composition": "comp",
    "do(digit): digit": "d-acc",
    "do(digit): hue": "d-ae",
    "do(digit): reversibility": "d-rev",
    "do(hue): digit": "h-acc",
    "do(hue): hue": "h-ae",
    "do(hue): reversibility": "h-rev",
}
_RANK_TABLE_COLUMNS = {
    "do(digit): digit": "d-acc",
    "do(digit): hue": "d-ae",
    "do(hue): digit": "h-acc",
    "do(hue): hue": "h-ae",
    "avg rank": "avg rank",
    "original rank": "original rank",
    "abs diff": "rank change",
}
_SCALE = (
    "the book: 8 x 8 scikit-learn digits coloured by the scenario's hue SCM, few training steps and seeds, "
    "in place of 28 x 28 Colour-MNIST, so compare ranks, not values"
)


def _mean_of(cell: Any) -> float:
    """The mean of a ``"mean (std)"`` cell of :func:`cflib.metrics.axioms.table1` (a number passes through)."""
    return float(cell.split(" (")[0]) if isinstance(cell, str) else float(cell)


def _paper_rows(book: pd.DataFrame, block: str) -> dict[Any, Any]:
    """Book ``(SI, model)`` -> the paper's label: the identity's capital, the unconfounded block's empty SI."""
    out = {}
    for si, model in book.index:
        name = "Identity" if model == "identity" else model
        out[(si, model)] = ("" if block == "unconfounded" else si, name)
    return out


def table1_versus_paper(table: pd.DataFrame, block: str) -> Any:
    """One block of the paper's Table 1 beside the book's (:func:`cflib.metrics.axioms.table1`), paired rows.

    Parameters
    ----------
    table : pandas.DataFrame
        The book's Table 1 of ``block``, rows ``(SI, model)``, ``"mean (std)"`` cells.
    block : str
        ``"unconfounded"``, ``"confounded"`` or ``"confounded_full_support"``.

    Returns
    -------
    pandas.io.formats.style.Styler
        Paper and book means with each model's rank in its column (1 = best).
    """
    if block not in _PAPER_BLOCK:
        raise ValueError(f"block must be one of {sorted(_PAPER_BLOCK)}, got {block!r}")
    paper = paper_table(PAPER, "Table 1")
    book = table.map(_mean_of)
    cols = {c: _TABLE1_COLUMNS[c] for c in book.columns if c in _TABLE1_COLUMNS}
    frame = side_by_side(
        book, paper.block(_PAPER_BLOCK[block]), rows=_paper_rows(book, block), columns=cols, ranks=True, layout="rows"
    )
    caption = (
        f"Paper Table 1, block '{_PAPER_BLOCK[block]}' (5 seeds; accuracies and hue errors in %, distances l1) "
        f"beside the book ({BLOCKS.get(block, block)}); {_SCALE}. Each cell: the mean and, in brackets, its rank "
        "among the models both tables have (1 = best)."
    )
    return show_side_by_side(frame, caption)


def ranks_versus_paper(rank_tables: Mapping[tuple[int, str], pd.DataFrame], table_no: int, block: str) -> Any:
    """The paper's Table 2, 3 or 4 (one scenario) beside the book's effectiveness-rank table, paired rows.

    Parameters
    ----------
    rank_tables : mapping
        From :func:`rank_robustness`.
    table_no : int
        2, 3 or 4.
    block : str
        ``"confounded"`` or ``"confounded_full_support"``.

    Returns
    -------
    pandas.io.formats.style.Styler
        The effectiveness columns with each model's rank in its column, and the average ranks.
    """
    if (table_no, block) not in rank_tables:
        raise ValueError(f"(table_no, block) must be one of {sorted(rank_tables)}, got {(table_no, block)!r}")
    paper = paper_table(PAPER, f"Table {table_no}")
    book = rank_tables[table_no, block]
    cols = {c: _RANK_TABLE_COLUMNS[c] for c in book.columns if c in _RANK_TABLE_COLUMNS}
    frame = side_by_side(
        book, paper.block(_PAPER_BLOCK[block]), rows=_paper_rows(book, block), columns=cols, ranks=True, layout="rows"
    )
    caption = (
        f"Paper Table {table_no}, scenario '{_PAPER_BLOCK[block]}': {paper.caption} (%), beside the book's; "
        f"{_SCALE}. Effectiveness cells carry the model's rank in the column (1 = best); 'rank change' is the "
        "book's abs diff."
    )
    return show_side_by_side(frame, caption)


def _label(value: Any) -> str:
    """A row label as the registry writes it (``1.0`` -> ``"1"``, ``"floor_hue"`` -> ``"floor hue"``)."""
    if isinstance(value, (int, float)) and float(value) == int(value):
        return str(int(value))
    return str(value).replace("_", " ")


def trade_off_versus_paper(table: pd.DataFrame, table_no: int) -> Any:
    """The paper's Table 5 (3D Shapes), 6 (partial abduction) or 7 (beta) beside the book's regeneration.

    Parameters
    ----------
    table : pandas.DataFrame
        The book's table: :func:`table5`'s first frame, or ``partial_abduction``'s / ``beta_sweep``'s table.
    table_no : int
        5, 6 or 7.

    Returns
    -------
    pandas.io.formats.style.Styler
        Rows matched by label (intervened parent and model; abducted levels; beta), columns by meaning.
    """
    if table_no not in (5, 6, 7):
        raise ValueError(f"table_no must be 5, 6 or 7, got {table_no!r}")
    paper = paper_table(PAPER, f"Table {table_no}")
    rows = {r: tuple(_label(v) for v in r) if isinstance(r, tuple) else _label(r) for r in table.index}
    if table_no == 5:
        cols = {c: _label(c) for c in table.columns if _label(c) in paper.columns}
        rev = [c for c in table.columns if str(c).startswith("rev l1")]
        cols.update({rev[0]: "rev l1 (1)", rev[-1]: "rev l1 (10)"} if rev else {})
        caption = (
            "Paper Table 5 (3D Shapes, 64 x 64, 6 oracles' accuracy in % after an intervention on each parent; "
            "reversibility l1 after 1 and 10 cycles) beside the book's synthetic shapes (small images, few steps); "
            f"the book's '10 cycles' column is after {rev[-1][8:-1] if rev else '?'}."
        )
        frame = side_by_side(table, paper, rows=rows, columns=cols, layout="rows")
    else:
        names = {
            "composition l1": "composition l1" if table_no == 7 else "smiling comp l1",
            "reversibility l1": "reversibility l1" if table_no == 7 else "smiling rev l1",
            "digit accuracy (%)": "effectiveness F1" if table_no == 7 else "smiling F1",
            "NLL bound (bits/dim)": "NLL bits/dim (bound)",
        }
        cols = {c: names[c] for c in table.columns if c in names and (table_no == 7 or c != "NLL bound (bits/dim)")}
        what = "beta" if table_no == 7 else "number of abducted latent layers (the book: levels of its HVAE)"
        caption = (
            f"Paper Table {table_no} (CelebA-HQ smiling, conditional VDVAE, 42 latent layers) beside the book's "
            f"colour digits ({what}); the book's effectiveness is the digit accuracy (%) where the paper's is the "
            "smiling F1, and its images and models are far smaller, so compare the direction along the rows. "
            "Cells carry the row's rank in the column among the rows both tables have (1 = best)."
        )
        frame = side_by_side(table, paper, rows=rows, columns=cols, ranks=True)
    return show_side_by_side(frame, caption)
