"""The per-partition stages of the distributed audit and how their results combine.

Issue 30: the doubly robust effects of Plecko & Bareinboim (arXiv 2306.05059, Def. 3, Props. 3-4; the
estimator of :func:`cflib.fairness.effects.ctf_effects`) and the group table and parity differences (Ma et al.,
eqs. 5-6) on a Dask DataFrame. :func:`cflib.audit.distributed.audit_distributed` runs three passes over the
partitions, each reduced by a tree of :func:`combine` calls:

1. :func:`scan_partition` (after :func:`with_predictions`, which applies the model and hashes the rows): row
   and group counts for the group table, missing values, the levels of categorical columns, the range of the
   predictions, and the candidates of the nuisance subsample: the rows with the smallest hash-derived rank
   (:func:`top_rows`), so the subsample is the same however the rows are split;
2. :func:`sums_partition`: each row's AIPW terms from the broadcast fold models (:class:`FoldNuisances`, fitted by
   :func:`fit_nuisances` on the subsample) and their exact sums, plain and under every bootstrap replicate's
   multipliers;
3. :func:`influence_partition`: each row's influence-function values given the estimates of pass 2, and the
   exact sums of their squares (the standard errors), with the white-box direct effect of the model.

With a counterfactual model, :func:`with_counterfactuals` adds each pair row's prediction on its counterfactual
row (``do(x = the other level)``), and two more passes give CF-CLOT with random Fourier features
(:mod:`cflib.stats.closeness_rff`; Fu et al., Eq. 7-13): :func:`rff_partition` (the feature sums) and
:func:`rff_rows_partition` (the units' row means given the broadcast totals).

Every per-row number depends on the row, the seed and the broadcast models only, and every sum is exact
(:mod:`cflib.audit.reproducible`), so the passes give the same totals for any partitioning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..fairness.effects import make_learner, thread_cap
from ..stats.closeness_rff import RFFMap, RFFPairSums, RFFRowSums, combine_rff_sums, rff_pair_sums, rff_row_sums
from .inputs import checked_predictions, counterfactual_frame, one_line
from .reproducible import add_sums, exact_multiplier_sums, exact_sums, fold_of, hash_stream, row_hashes

__all__ = [
    "ECA_COUNTS",
    "cell_counts",
    "cell_labels",
    "GROUP_COUNTS",
    "HASH",
    "YCF",
    "YHAT",
    "FoldNuisances",
    "InfluencePart",
    "PartitionSpec",
    "ScanPart",
    "SumsPart",
    "combine",
    "design",
    "fit_nuisances",
    "influence_partition",
    "rff_partition",
    "rff_rows_partition",
    "scan_partition",
    "sums_partition",
    "top_rows",
    "with_counterfactuals",
    "with_predictions",
]

#: Column the model's predictions are written to (added by :func:`with_predictions`).
YHAT = "__cflib_y_hat"
#: Column of the row hashes (added by :func:`with_predictions`).
HASH = "__cflib_row_hash"
#: Column of the predictions on the counterfactual rows (added by :func:`with_counterfactuals`).
YCF = "__cflib_y_cf"
#: Counts kept per group for the group table: units, ``y = 1``, then decisions, true and false positives under
#: the threshold rule and under the 0/1-label rule (which rule applies is known only after the scan).
GROUP_COUNTS = ("n", "y1", "sel_thr", "tp_thr", "fp_thr", "sel_lab", "tp_lab", "fp_lab")
_RANK, _TIE = "__cflib_rank", "__cflib_tie"


@dataclass(frozen=True)
class PartitionSpec:
    """What every partition function needs to know: the roles, the pair compared and the settings.

    Attributes
    ----------
    x, z, w : str, tuple of str
        The SFM's protected attribute, confounders and mediators.
    x0, x1 : scalar
        The baseline and the compared level; rows of other levels are left out of every stage but the count.
    y : str or None
        The outcome column (``None`` without one).
    y1 : scalar or None
        The outcome's positive label (``1{y == y1}``), or ``None`` for a numeric or boolean outcome.
    key : str or None
        The column hashed for the folds and multipliers, or ``None`` for the row's content in ``columns``.
    columns : tuple of str
        The data's columns as given (hashed when ``key`` is ``None``).
    seed, n_folds, nuisance_rows, n_boot : int
    threshold : float
        Scores at or above it are decision 1.
    clip : float
        Propensities are clipped to ``[clip, 1 - clip]``.
    categorical : tuple of str
        The confounders and mediators that are one-hot encoded.
    levels : mapping of str to tuple
        Each categorical column's levels (sorted by their text), known after the scan.
    groups : tuple of str
        Columns whose combinations are the intersectional groups (:mod:`cflib.audit.intersections`).
    """

    x: str
    x0: Any
    x1: Any
    z: tuple[str, ...]
    w: tuple[str, ...]
    y: str | None
    y1: Any
    key: str | None
    columns: tuple[str, ...]
    seed: int
    n_folds: int
    nuisance_rows: int
    n_boot: int
    threshold: float
    clip: float
    categorical: tuple[str, ...]
    levels: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    groups: tuple[str, ...] = ()

    @property
    def outcomes(self) -> tuple[str, ...]:
        """The outcomes whose effects are estimated: the predictions (``"_y_hat"``), then the outcome."""
        return ("_y_hat",) if self.y is None else ("_y_hat", self.y)


def with_predictions(part: pd.DataFrame, f: Callable[[pd.DataFrame], Any], spec: PartitionSpec) -> pd.DataFrame:
    """The partition with the model's predictions (:data:`YHAT`) and the row hashes (:data:`HASH`) added.

    Parameters
    ----------
    part : pandas.DataFrame
        One partition, as given.
    f : callable
        The model, ``frame -> predictions``; it sees the partition as given.
    spec : PartitionSpec

    Returns
    -------
    pandas.DataFrame
    """
    h = row_hashes(part, spec.key, spec.columns, spec.seed)
    complete = _complete(part, spec)
    y_hat = np.full(len(part), np.nan)  # rows with missing values are not predicted: the scan counts and refuses them
    if complete.any():
        rows = part if complete.all() else part.loc[complete]
        try:
            raw = f(rows)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"predict: the model failed on data ({one_line(exc)})") from None
        y_hat[complete] = checked_predictions(raw, len(rows), "predict")
    return part.assign(**{YHAT: y_hat, HASH: h})


def with_counterfactuals(
    part: pd.DataFrame, f: Callable[[pd.DataFrame], Any], counterfactual: Any, spec: PartitionSpec
) -> pd.DataFrame:
    """The partition (after :func:`with_predictions`) with the prediction on each pair row's counterfactual row.

    Rows of the pair compared get ``f`` of their row under ``do(x = the other level)`` (:func:`counterfactual_frame`)
    in :data:`YCF`; other rows, and rows with missing values (which the scan refuses), get NaN.

    Parameters
    ----------
    part : pandas.DataFrame
    f : callable
        The model.
    counterfactual : CounterfactualModel or callable
    spec : PartitionSpec

    Returns
    -------
    pandas.DataFrame
    """
    y_cf = np.full(len(part), np.nan)
    col = part[spec.x]
    is1 = (col == spec.x1).to_numpy(dtype=bool, na_value=False)
    keep = (is1 | (col == spec.x0).to_numpy(dtype=bool, na_value=False)) & _complete(part, spec)
    if keep.any():
        rows = part.loc[keep, list(spec.columns)]
        target = np.where(is1[keep], spec.x0, spec.x1)  # as the in-memory audit: the other level of the pair
        cf = counterfactual_frame(counterfactual, rows, spec.x, target)
        try:
            raw = f(cf)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"predict: the model failed on the counterfactual rows ({one_line(exc)})") from None
        y_cf[keep] = checked_predictions(raw, len(rows), "predict on the counterfactual rows")
    return part.assign(**{YCF: y_cf})


def _roles(spec: PartitionSpec) -> list[str]:
    """The columns that must be complete: the roles (with the outcome when there is one) and the key."""
    role = [spec.x, *spec.z, *spec.w] + ([spec.y] if spec.y is not None else [])
    return role + ([spec.key] if spec.key is not None and spec.key not in role else [])


def _bad_values(part: pd.DataFrame, spec: PartitionSpec) -> pd.DataFrame:
    """Per row and role column: whether the value is missing (or an infinite number)."""
    cols = _roles(spec)
    bad = part[cols].isna()
    for c in cols:
        if pd.api.types.is_float_dtype(part[c].dtype):
            bad[c] = bad[c] | np.isinf(part[c].to_numpy(dtype=float, na_value=np.nan))
    return bad


def _complete(part: pd.DataFrame, spec: PartitionSpec) -> NDArray[np.bool_]:
    return ~_bad_values(part, spec).any(axis=1).to_numpy(dtype=bool)


def _pair(part: pd.DataFrame, spec: PartitionSpec) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    """The rows of the pair compared and their attribute as 0/1 (1 for ``x1``)."""
    col = part[spec.x]
    is1 = (col == spec.x1).to_numpy(dtype=bool, na_value=False)
    is0 = (col == spec.x0).to_numpy(dtype=bool, na_value=False)
    keep = is0 | is1
    return part.loc[keep], is1[keep].astype(np.int64)


def _outcome_values(part: pd.DataFrame, spec: PartitionSpec) -> NDArray[np.float64]:
    """``(m, n_outcomes)``: the predictions and (when there is one) the outcome as numbers."""
    cols = [part[YHAT].to_numpy(dtype=float)]
    if spec.y is not None:
        v = part[spec.y]
        if spec.y1 is not None:
            hit = (v == spec.y1).to_numpy(dtype=bool, na_value=False)
            if not hit.any() and len(v):
                hit = (v.astype(str).str.strip() == str(spec.y1).strip()).to_numpy(dtype=bool)
            cols.append(hit.astype(float))
        else:
            cols.append(v.to_numpy(dtype=float))
    return np.column_stack(cols) if cols[0].size else np.zeros((0, len(cols)))


def design(frame: pd.DataFrame, cols: Sequence[str], levels: Mapping[str, Sequence[Any]]) -> NDArray[np.float64]:
    """The feature matrix of ``cols``: numbers as they are, categorical columns one-hot with the first level dropped.

    The levels are the whole data's (found by the scan), so every partition gets the same columns.

    Parameters
    ----------
    frame : pandas.DataFrame
    cols : sequence of str
    levels : mapping of str to sequence
        The levels of each categorical column; columns not in it are numeric (or boolean).

    Returns
    -------
    numpy.ndarray
        ``(len(frame), p)`` floats.
    """
    parts: list[NDArray[np.float64]] = []
    for c in cols:
        if c in levels:
            lv = list(levels[c])
            codes = pd.Categorical(frame[c].astype(object), categories=lv).codes
            parts.extend((codes == j).astype(float) for j in range(1, len(lv)))
        else:
            parts.append(frame[c].to_numpy(dtype=float))
    return np.column_stack(parts) if parts else np.zeros((len(frame), 0))


@dataclass
class ScanPart:
    """What the scan (pass 1) learns from some partitions; :func:`combine` adds two of them.

    Attributes
    ----------
    n_rows : int
        Rows, every level of the attribute included.
    levels : dict
        Rows per level of the attribute (missing values excluded).
    missing : dict of str to int
        Missing values per role (and key) column.
    categories : dict of str to set
        Values of each categorical column among the pair's rows.
    yhat_min, yhat_max : float
        Range of the predictions on the pair's rows.
    yhat_labels : bool
        Whether every prediction is 0 or 1.
    y_binary : bool
        Whether every outcome value is 0 or 1.
    groups : dict of str to numpy.ndarray
        Per level of the pair (as text), the :data:`GROUP_COUNTS`.
    x1_sums : numpy.ndarray of object
        Exact sums of each outcome over the ``x1`` rows (the constant nuisances when ``z`` is empty).
    candidates : pandas.DataFrame
        The nuisance subsample's candidates: at most ``nuisance_rows`` rows, in rank order.
    nuisance_rows : int
        The subsample's largest size.
    fingerprint : tuple of int
        Two sums modulo ``2**64`` of the rows' 64-bit hashes (plain and mixed): the same for any order and split.
    cells : dict of str to numpy.ndarray
        Per combination of ``spec.groups`` among the pair's rows, the :data:`GROUP_COUNTS`.
    eca : numpy.ndarray or None
        With counterfactual predictions: pairs, pairs equal, equal as decisions at the threshold and at 0.5, and
        within ``1e-9`` (:data:`ECA_COUNTS`).
    ycf_min, ycf_max : float
        Range of the counterfactual predictions.
    ycf_labels : bool
        Whether every counterfactual prediction is 0 or 1.
    """

    n_rows: int
    levels: dict[Any, int]
    missing: dict[str, int]
    categories: dict[str, set[Any]]
    yhat_min: float
    yhat_max: float
    yhat_labels: bool
    y_binary: bool
    groups: dict[str, NDArray[np.int64]]
    x1_sums: NDArray[np.object_]
    candidates: pd.DataFrame
    nuisance_rows: int
    fingerprint: tuple[int, int] = (0, 0)
    cells: dict[str, NDArray[np.int64]] = field(default_factory=dict)
    eca: NDArray[np.int64] | None = None
    ycf_min: float = np.inf
    ycf_max: float = -np.inf
    ycf_labels: bool = True


def scan_partition(part: pd.DataFrame, spec: PartitionSpec) -> ScanPart:
    """Pass 1 on one partition (after :func:`with_predictions`): counts, levels, ranges and subsample candidates.

    Parameters
    ----------
    part : pandas.DataFrame
    spec : PartitionSpec

    Returns
    -------
    ScanPart
    """
    bad = _bad_values(part, spec)
    missing = {c: int(v) for c, v in bad.sum().items()}
    part = part.loc[~bad.any(axis=1).to_numpy(dtype=bool)]  # the audit refuses them after the scan
    counts = part[spec.x].value_counts(dropna=True)
    levels = {(k.item() if hasattr(k, "item") else k): int(v) for k, v in counts.items()}
    sub, x01 = _pair(part, spec)
    outs = _outcome_values(sub, spec)
    y_hat = outs[:, 0]
    groups = {}
    y = outs[:, 1] if spec.y is not None else np.zeros(len(sub))
    yb = (y == 1).astype(np.int64)
    dec_thr = (y_hat >= spec.threshold).astype(np.int64)
    dec_lab = (y_hat == 1).astype(np.int64)
    for g, level in ((0, spec.x0), (1, spec.x1)):
        m = x01 == g
        if not m.any():
            continue
        groups[str(level)] = np.array(
            [
                m.sum(),
                yb[m].sum(),
                dec_thr[m].sum(),
                (dec_thr * yb)[m].sum(),
                (dec_thr * (1 - yb))[m].sum(),
                dec_lab[m].sum(),
                (dec_lab * yb)[m].sum(),
                (dec_lab * (1 - yb))[m].sum(),
            ],
            dtype=np.int64,
        )
    cats = {c: set(pd.unique(sub[c].dropna())) for c in spec.categorical}
    return ScanPart(
        fingerprint=_fingerprint(part[HASH].to_numpy(dtype=np.uint64)),
        cells=cell_counts(sub, spec.groups, y_hat, y, spec.threshold) if spec.groups else {},
        **_eca_counts(sub, y_hat, spec),
        n_rows=len(part),
        levels=levels,
        missing=missing,
        categories=cats,
        yhat_min=float(y_hat.min()) if y_hat.size else np.inf,
        yhat_max=float(y_hat.max()) if y_hat.size else -np.inf,
        yhat_labels=bool(np.isin(y_hat, (0.0, 1.0)).all()),
        y_binary=bool(np.isin(y, (0.0, 1.0)).all()) if spec.y is not None else False,
        groups=groups,
        x1_sums=exact_sums(outs[x01 == 1]),
        candidates=top_rows(_candidates(sub, outs, spec), spec.nuisance_rows),
        nuisance_rows=spec.nuisance_rows,
    )


def cell_labels(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Each row's combination of ``columns`` as text, ``"sex=F & race=B"``.

    Parameters
    ----------
    frame : pandas.DataFrame
    columns : sequence of str

    Returns
    -------
    numpy.ndarray of str
    """
    parts = [f"{c}=" + frame[c].astype(str) for c in columns]
    out = parts[0]
    for p in parts[1:]:
        out = out + " & " + p
    return out.to_numpy(dtype=object)


def cell_counts(
    frame: pd.DataFrame, columns: Sequence[str], y_hat: np.ndarray, y01: np.ndarray | None, threshold: float
) -> dict[str, np.ndarray]:
    """The counts of :data:`cflib.audit.partitions.GROUP_COUNTS` per combination of ``columns`` present.

    Parameters
    ----------
    frame : pandas.DataFrame
    columns : sequence of str
    y_hat : numpy.ndarray
        The predictions.
    y01 : numpy.ndarray or None
        The outcome as numbers (``y == 1`` counts as positive).
    threshold : float
        Scores at or above it are decision 1.

    Returns
    -------
    dict of str to numpy.ndarray
        Combination label -> ``n, y1, sel_thr, tp_thr, fp_thr, sel_lab, tp_lab, fp_lab``.
    """
    labels = cell_labels(frame, columns)
    yb = (np.asarray(y01) == 1).astype(np.int64) if y01 is not None else np.zeros(len(frame), np.int64)
    thr = (np.asarray(y_hat) >= threshold).astype(np.int64)
    lab = (np.asarray(y_hat) == 1).astype(np.int64)
    cols = np.column_stack(
        [np.ones(len(frame), np.int64), yb, thr, thr * yb, thr * (1 - yb), lab, lab * yb, lab * (1 - yb)]
    )
    out = {}
    for label in pd.unique(labels):
        out[str(label)] = cols[labels == label].sum(axis=0).astype(np.int64)
    return out


#: What :attr:`ScanPart.eca` counts: pairs, equal, equal as decisions at the threshold and at 0.5, within 1e-9.
ECA_COUNTS = ("n", "equal", "agree_threshold", "agree_half", "agree_tol")
_MIX = np.uint64(0x9E3779B97F4A7C15)


def _fingerprint(h: NDArray[np.uint64]) -> tuple[int, int]:
    """Two sums modulo ``2**64`` of the row hashes: plain, and of each hash times an odd constant then squared."""
    with np.errstate(over="ignore"):
        mixed = h * _MIX
        return int(h.sum(dtype=np.uint64)), int((mixed * mixed).sum(dtype=np.uint64))


def _eca_counts(sub: pd.DataFrame, y_hat: NDArray[np.float64], spec: PartitionSpec) -> dict[str, Any]:
    """ECA's counts and the range of the counterfactual predictions (nothing without them)."""
    if YCF not in sub.columns:
        return {}
    yc = sub[YCF].to_numpy(dtype=float)
    counts = [
        yc.size,
        (y_hat == yc).sum(),
        ((y_hat >= spec.threshold) == (yc >= spec.threshold)).sum(),
        ((y_hat >= 0.5) == (yc >= 0.5)).sum(),
        (np.abs(y_hat - yc) <= 1e-9).sum(),
    ]
    return {
        "eca": np.array(counts, dtype=np.int64),
        "ycf_min": float(yc.min()) if yc.size else np.inf,
        "ycf_max": float(yc.max()) if yc.size else -np.inf,
        "ycf_labels": bool(np.isin(yc, (0.0, 1.0)).all()),
    }


def _candidates(sub: pd.DataFrame, outs: NDArray[np.float64], spec: PartitionSpec) -> pd.DataFrame:
    """The pair's rows as the nuisance fits need them, with their rank and a tie-break hash of their content."""
    cols = [spec.x, *spec.z, *spec.w]
    frame = sub[cols].reset_index(drop=True)
    for j in range(len(spec.outcomes)):
        frame[f"__cflib_out_{j}"] = outs[:, j]
    h = sub[HASH].to_numpy(dtype=np.uint64)
    frame[HASH] = h
    frame[_RANK] = hash_stream(h, spec.seed, 2)
    content = [c for c in frame.columns if c not in (HASH, _RANK)]
    frame[_TIE] = pd.util.hash_pandas_object(frame[content], index=False).to_numpy(dtype=np.uint64)
    if YCF in sub.columns:  # after the tie-break: the subsample is the same with or without a counterfactual model
        frame[YCF] = sub[YCF].to_numpy(dtype=float)
    return frame


def top_rows(frame: pd.DataFrame, n: int) -> pd.DataFrame:
    """The ``n`` rows of smallest (rank, content hash), sorted: the subsample is the same however rows are split.

    Two rows that tie on both are the same in every column the nuisance fits use, so which one is kept does not
    matter; the ``n`` smallest of a union are the ``n`` smallest of the parts' ``n`` smallest.

    Parameters
    ----------
    frame : pandas.DataFrame
        Candidates (from :func:`scan_partition`).
    n : int

    Returns
    -------
    pandas.DataFrame
        At most ``n`` rows, index reset.
    """
    if len(frame) > n:
        rank = frame[_RANK].to_numpy(dtype=np.uint64)
        cut = np.partition(rank, n - 1)[n - 1]
        frame = frame.loc[rank <= cut]
    return frame.sort_values([_RANK, _TIE], kind="mergesort").head(n).reset_index(drop=True)


@dataclass
class SumsPart:
    """Pass 2's exact sums: the AIPW terms (:func:`sums_partition`), their bootstrap sums and the clipped propensities."""

    sums: NDArray[np.object_]
    boot: NDArray[np.object_] | None
    n_clipped: int


@dataclass
class InfluencePart:
    """Pass 3's exact sums: influence values, their squares, and the white-box direct effect's differences."""

    sums: NDArray[np.object_]
    squares: NDArray[np.object_]
    whitebox: NDArray[np.object_] | None


def combine(*parts: Any) -> Any:
    """Combine the results of some partitions (:class:`ScanPart`, :class:`SumsPart` or :class:`InfluencePart`).

    Counts and exact sums add, ranges widen and the subsample candidates keep the smallest ranks, so the
    combination is associative and commutative: any tree of calls gives the same result.

    Parameters
    ----------
    *parts : ScanPart, SumsPart, InfluencePart, RFFPairSums or RFFRowSums
        Of one kind (or tuples of them, combined element by element).

    Returns
    -------
    ScanPart, SumsPart, InfluencePart, RFFPairSums or RFFRowSums
    """
    first = parts[0]
    if isinstance(first, tuple):  # one result per CF-CLOT direction
        return tuple(combine(*same) for same in zip(*parts, strict=True))
    if isinstance(first, (RFFPairSums, RFFRowSums)):
        return combine_rff_sums(*parts)
    if isinstance(first, SumsPart):
        return SumsPart(
            add_sums(*(p.sums for p in parts)), add_sums(*(p.boot for p in parts)), sum(p.n_clipped for p in parts)
        )
    if isinstance(first, InfluencePart):
        return InfluencePart(
            add_sums(*(p.sums for p in parts)),
            add_sums(*(p.squares for p in parts)),
            add_sums(*(p.whitebox for p in parts)),
        )
    return _combine_scans(parts)


def _combine_scans(parts: Sequence[ScanPart]) -> ScanPart:
    levels: dict[Any, int] = {}
    missing: dict[str, int] = {}
    cats: dict[str, set[Any]] = {}
    groups: dict[str, NDArray[np.int64]] = {}
    for p in parts:
        for k, v in p.levels.items():
            levels[k] = levels.get(k, 0) + v
        for k, v in p.missing.items():
            missing[k] = missing.get(k, 0) + v
        for k, s in p.categories.items():
            cats[k] = cats.get(k, set()) | s
        for k, g in p.groups.items():
            groups[k] = groups[k] + g if k in groups else g.copy()
    n = parts[0].nuisance_rows
    cells: dict[str, NDArray[np.int64]] = {}
    for p in parts:
        for k, g in p.cells.items():
            cells[k] = cells[k] + g if k in cells else g.copy()
    ecas = [p.eca for p in parts if p.eca is not None]
    mask = np.uint64(2**64 - 1)
    return ScanPart(
        fingerprint=(
            int(sum(p.fingerprint[0] for p in parts) & int(mask)),
            int(sum(p.fingerprint[1] for p in parts) & int(mask)),
        ),
        cells=cells,
        eca=np.sum(ecas, axis=0).astype(np.int64) if ecas else None,
        ycf_min=min(p.ycf_min for p in parts),
        ycf_max=max(p.ycf_max for p in parts),
        ycf_labels=all(p.ycf_labels for p in parts),
        n_rows=sum(p.n_rows for p in parts),
        levels=levels,
        missing=missing,
        categories=cats,
        yhat_min=min(p.yhat_min for p in parts),
        yhat_max=max(p.yhat_max for p in parts),
        yhat_labels=all(p.yhat_labels for p in parts),
        y_binary=all(p.y_binary for p in parts),
        groups=groups,
        x1_sums=add_sums(*(p.x1_sums for p in parts)),
        candidates=top_rows(pd.concat([p.candidates for p in parts], ignore_index=True), n),
        nuisance_rows=n,
    )


@dataclass(frozen=True)
class FoldNuisances:
    """The nuisance models of every cross-fitting fold, fitted on the other folds' subsample rows.

    Attributes
    ----------
    folds : tuple of dict
        Per fold: ``"p_z"`` and ``"p_zw"`` (propensity classifiers of ``x1``, or a constant), ``"m1"`` and ``"mu1"``
        (per outcome, regressions among ``x1`` units on ``z`` and on ``(z, w)``, or a constant).
    """

    folds: tuple[dict[str, Any], ...]

    def predict(
        self, fold: NDArray[np.int64], zmat: NDArray[np.float64], zwmat: NDArray[np.float64], n_out: int
    ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """Each row's nuisances from the models of its own fold (fitted without it).

        Parameters
        ----------
        fold : numpy.ndarray of int
            Each row's fold.
        zmat, zwmat : numpy.ndarray
            Designs of ``z`` and ``(z, w)`` (:func:`design`).
        n_out : int
            Outcomes.

        Returns
        -------
        p_z, p_zw : numpy.ndarray
            ``(m,)`` propensities of ``x1`` (unclipped).
        m1, mu1 : numpy.ndarray
            ``(m, n_out)`` outcome regressions.
        """
        m = fold.size
        p_z, p_zw = np.empty(m), np.empty(m)
        m1, mu1 = np.empty((m, n_out)), np.empty((m, n_out))
        for k, models in enumerate(self.folds):
            te = fold == k
            if not te.any():
                continue
            p_z[te] = _proba(models["p_z"], zmat[te])
            p_zw[te] = _proba(models["p_zw"], zwmat[te])
            for j in range(n_out):
                m1[te, j] = _mean(models["m1"][j], zmat[te])
                mu1[te, j] = _mean(models["mu1"][j], zwmat[te])
        return p_z, p_zw, m1, mu1


def _proba(model: Any, feats: NDArray[np.float64]) -> NDArray[np.float64]:
    if isinstance(model, float):
        return np.full(feats.shape[0], model)
    return model.predict_proba(feats)[:, list(model.classes_).index(1)]


def _mean(model: Any, feats: NDArray[np.float64]) -> NDArray[np.float64]:
    if isinstance(model, float):
        return np.full(feats.shape[0], model)
    return np.asarray(model.predict(feats), dtype=float)


def fit_nuisances(
    sub: pd.DataFrame,
    spec: PartitionSpec,
    learner: Any,
    propensity_learner: Any,
    x1_means: NDArray[np.float64],
    p1: float,
    learner_seed: int,
) -> FoldNuisances:
    """Fit every fold's nuisance models on the subsample rows of the other folds (on the client).

    The subsample arrives sorted by rank (:func:`top_rows`), so the fits see the same rows in the same order
    however the data were split. Without confounders, ``p(x1 | z)`` and ``m_1(z)`` are the whole data's ``x1``
    share and ``x1`` means (as in :func:`cflib.fairness.effects.ctf_effects`, which makes Ctf-SE exactly 0).

    Parameters
    ----------
    sub : pandas.DataFrame
        The subsample (the scan's candidates).
    spec : PartitionSpec
        With the categorical levels filled in.
    learner, propensity_learner : str or estimator
        As in :func:`cflib.fairness.effects.make_learner`.
    x1_means : numpy.ndarray
        Each outcome's mean over the ``x1`` rows of the whole data.
    p1 : float
        The ``x1`` share of the pair's rows.
    learner_seed : int
        ``random_state`` of the named learners.

    Returns
    -------
    FoldNuisances

    Raises
    ------
    ValueError
        A fold's training rows lack a group or hold fewer than two ``x1`` units.
    """
    x = (sub[spec.x] == spec.x1).to_numpy(dtype=bool).astype(int)
    fold = fold_of(sub[HASH].to_numpy(dtype=np.uint64), spec.seed, spec.n_folds)
    zmat = design(sub, spec.z, spec.levels)
    zwmat = design(sub, [*spec.z, *spec.w], spec.levels)
    outs = sub[[f"__cflib_out_{j}" for j in range(len(spec.outcomes))]].to_numpy(dtype=float)
    fits = []
    with thread_cap(1):
        for k in range(spec.n_folds):
            tr = fold != k
            n1, n0 = int(x[tr].sum()), int((1 - x[tr]).sum())
            if n1 < 2 or n0 < 1:
                raise ValueError(
                    f"nuisance_rows: the training rows of fold {k} hold {n0} units with {spec.x}={spec.x0!r} and {n1} "
                    f"with {spec.x1!r}; each fold's fits need both groups and two {spec.x1!r} units: raise nuisance_rows "
                    "or lower n_folds"
                )
            t1 = tr & (x == 1)
            models: dict[str, Any] = {
                "p_z": _fit_proba(propensity_learner, zmat[tr], x[tr], learner_seed) if zmat.shape[1] else float(p1),
                "p_zw": _fit_proba(propensity_learner, zwmat[tr], x[tr], learner_seed),
                "m1": [
                    _fit_mean(learner, zmat[t1], outs[t1, j], learner_seed) if zmat.shape[1] else float(x1_means[j])
                    for j in range(outs.shape[1])
                ],
                "mu1": [_fit_mean(learner, zwmat[t1], outs[t1, j], learner_seed) for j in range(outs.shape[1])],
            }
            fits.append(models)
    return FoldNuisances(tuple(fits))


def _fit_proba(spec: Any, feats: NDArray[np.float64], x: NDArray[np.int64], seed: int) -> Any:
    if feats.shape[1] == 0:
        return float(x.mean())
    return make_learner(spec, "classifier", seed).fit(feats, x)


def _fit_mean(spec: Any, feats: NDArray[np.float64], y: NDArray[np.float64], seed: int) -> Any:
    if feats.shape[1] == 0:
        return float(y.mean())
    return make_learner(spec, "regressor", seed).fit(feats, y)


def _row_terms(
    part: pd.DataFrame, spec: PartitionSpec, models: FoldNuisances
) -> tuple[pd.DataFrame, NDArray[np.int64], NDArray[np.float64], NDArray[np.uint64], int]:
    """The pair's rows, their 0/1 attribute, their AIPW terms ``(m, 2 + 4 n_out)`` and hashes, and the clipped count.

    Columns of the terms: ``1{x0}``, ``1{x1}``, then per outcome ``a = 1{x0} mu_1 + 1{x1} p0(z,w)/p1(z,w) (Y - mu_1)``,
    ``b = 1{x0} m_1 + 1{x1} p0(z)/p1(z) (Y - m_1)``, ``1{x0} Y`` and ``1{x1} Y`` (:func:`ctf_effects`' estimator).
    """
    sub, x01 = _pair(part, spec)
    h = sub[HASH].to_numpy(dtype=np.uint64)
    outs = _outcome_values(sub, spec)
    n_out = len(spec.outcomes)
    zmat = design(sub, spec.z, spec.levels)
    zwmat = design(sub, [*spec.z, *spec.w], spec.levels)
    fold = fold_of(h, spec.seed, spec.n_folds)
    with thread_cap(1):
        p_z, p_zw, m1, mu1 = models.predict(fold, zmat, zwmat, n_out)
    lo, hi = spec.clip, 1 - spec.clip
    n_clipped = int(((p_z < lo) | (p_z > hi)).sum() + ((p_zw < lo) | (p_zw > hi)).sum())
    p_z, p_zw = np.clip(p_z, lo, hi), np.clip(p_zw, lo, hi)
    x0m, x1m = (1 - x01).astype(float), x01.astype(float)
    cols = [x0m, x1m]
    for j in range(n_out):
        y = outs[:, j]
        cols += [
            x0m * mu1[:, j] + x1m * (1 - p_zw) / p_zw * (y - mu1[:, j]),
            x0m * m1[:, j] + x1m * (1 - p_z) / p_z * (y - m1[:, j]),
            x0m * y,
            x1m * y,
        ]
    return sub, x01, np.column_stack(cols) if len(sub) else np.zeros((0, 2 + 4 * n_out)), h, n_clipped


def sums_partition(part: pd.DataFrame, spec: PartitionSpec, models: FoldNuisances) -> SumsPart:
    """Pass 2 on one partition: exact sums of the AIPW terms, plain and under every bootstrap replicate's multipliers.

    Parameters
    ----------
    part : pandas.DataFrame
        After :func:`with_predictions`.
    spec : PartitionSpec
    models : FoldNuisances

    Returns
    -------
    SumsPart
    """
    _, _, terms, h, n_clipped = _row_terms(part, spec, models)
    boot = exact_multiplier_sums(terms, h, spec.seed, spec.n_boot) if spec.n_boot > 0 else None
    return SumsPart(exact_sums(terms), boot, n_clipped)


def influence_partition(
    part: pd.DataFrame,
    spec: PartitionSpec,
    models: FoldNuisances,
    means: NDArray[np.float64],
    shares: tuple[float, float],
    f: Callable[[pd.DataFrame], Any] | None,
) -> InfluencePart:
    """Pass 3 on one partition: each row's influence values of TV, DE, IE, SE (per outcome), summed with their squares.

    Parameters
    ----------
    part : pandas.DataFrame
        After :func:`with_predictions`.
    spec : PartitionSpec
    models : FoldNuisances
    means : numpy.ndarray
        ``(n_out, 4)``: each outcome's ``A``, ``B``, ``Ybar0``, ``Ybar1`` (pass 2).
    shares : (float, float)
        ``n0 / n`` and ``n1 / n``.
    f : callable or None
        The model, for the white-box direct effect (``f(x1, z, w) - f(x0, z, w)`` on the ``x0`` rows); ``None`` skips it.

    Returns
    -------
    InfluencePart
        Sums over ``4 n_out`` columns (outcome by outcome, TV, DE, IE, SE), and the white-box differences' sum and
        sum of squares.
    """
    sub, x01, terms, _, _ = _row_terms(part, spec, models)
    pi0, pi1 = shares
    x0m, x1m = terms[:, 0], terms[:, 1]
    cols = []
    for j in range(len(spec.outcomes)):
        a, b, c0, c1 = (terms[:, 2 + 4 * j + i] for i in range(4))
        A, B, Y0, Y1 = means[j]
        y = np.where(x01 == 1, c1, c0)
        phi_a = (a - x0m * A) / pi0
        phi_b = (b - x0m * B) / pi0
        phi0 = x0m * (y - Y0) / pi0
        phi1 = x1m * (y - Y1) / pi1
        cols += [phi1 - phi0, phi_a - phi0, phi_a - phi_b, phi_b - phi1]
    infl = np.column_stack(cols) if len(sub) else np.zeros((0, 4 * len(spec.outcomes)))
    whitebox = None
    if f is not None:
        d0 = sub.loc[x01 == 0]
        diff = np.zeros(0)
        if len(d0):
            moved = checked_predictions(f(d0[list(spec.columns)].assign(**{spec.x: spec.x1})), len(d0), "predict")
            diff = moved - d0[YHAT].to_numpy(dtype=float)
        whitebox = exact_sums(np.column_stack([diff, diff * diff]) if diff.size else np.zeros((0, 2)))
    return InfluencePart(exact_sums(infl), exact_sums(infl * infl), whitebox)


def _pair_outputs(
    part: pd.DataFrame, spec: PartitionSpec, code: int
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The factual and counterfactual predictions of the pair's rows with attribute ``code`` (0: ``x0``, 1: ``x1``)."""
    sub, a01 = _pair(part, spec)
    sel = a01 == code
    return sub[YHAT].to_numpy(dtype=float)[sel], sub[YCF].to_numpy(dtype=float)[sel]


def rff_partition(part: pd.DataFrame, spec: PartitionSpec, fmap: RFFMap) -> tuple[RFFPairSums, RFFPairSums]:
    """CF-CLOT's pass 1 on one partition (after :func:`with_counterfactuals`): the exact feature sums per direction.

    Parameters
    ----------
    part : pandas.DataFrame
    spec : PartitionSpec
    fmap : RFFMap
        The random Fourier features, drawn once on the client.

    Returns
    -------
    (RFFPairSums, RFFPairSums)
        The rows with ``x0`` (under ``do(x0 -> x1)``), then those with ``x1`` (under ``do(x1 -> x0)``).
    """
    d0, d1 = (rff_pair_sums(*_pair_outputs(part, spec, code), fmap) for code in (0, 1))
    return d0, d1


def rff_rows_partition(
    part: pd.DataFrame,
    spec: PartitionSpec,
    fmap: RFFMap,
    pair_sums: tuple[RFFPairSums, RFFPairSums],
    epsilon: float,
) -> tuple[RFFRowSums, RFFRowSums]:
    """CF-CLOT's pass 2 on one partition: per direction, exact sums of the units' row means of ``G = H - eps D``.

    Parameters
    ----------
    part : pandas.DataFrame
    spec : PartitionSpec
    fmap : RFFMap
    pair_sums : (RFFPairSums, RFFPairSums)
        Pass 1 reduced over every partition, per direction.
    epsilon : float
        CF-CLOT's tolerance.

    Returns
    -------
    (RFFRowSums, RFFRowSums)
    """
    d0, d1 = (rff_row_sums(*_pair_outputs(part, spec, code), fmap, pair_sums[code], epsilon) for code in (0, 1))
    return d0, d1
