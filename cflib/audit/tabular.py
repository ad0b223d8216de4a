"""The tabular audit, :func:`audit`, in named stages.

:func:`audit` checks the call (:func:`cflib.audit.inputs.validate_arguments` and :func:`_checked_call`),
prepares the data (missing values, the outcome as numbers) and the predictions (:func:`_predictions`), chooses
the comparisons (:func:`_comparisons`), computes the group table (:func:`_group_table`), runs every check of
each comparison into the table (:func:`_checks_table`, each pair by :func:`cflib.audit.comparison.audit_pair`), and
assembles it and the provenance (:func:`_provenance`) into an :class:`~cflib.audit.AuditReport`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..fairness.effects import MEASURES
from ..fairness.sfm import StandardFairnessModel
from .checks import COLUMNS
from .comparison import audit_pair
from .distributed import audit_dask_frame, is_dask_frame
from .inputs import (
    binary_outcome,
    checked_predictions,
    decisions,
    missing_values,
    one_line,
    positive_column,
    predictor,
    validate_arguments,
)
from .intersections import cell_counts, with_intersections
from .provenance import cflib_version, data_hash, environment, model_hash, model_type, plain
from .report import AuditReport
from .settings import MIN_GROUP_SIZE, AuditSettings
from .status import STATUS_COLUMNS, add_status, resolve_tolerances

if TYPE_CHECKING:
    import dask.dataframe as dd

__all__ = ["audit"]


def audit(
    predict: Any,
    data: pd.DataFrame | dd.DataFrame,
    *,
    sfm: StandardFairnessModel,
    counterfactual: Any = None,
    z: Sequence[str] | None = None,
    scores: Any = None,
    business_necessity: Sequence[str] = (),
    epsilon: float = 0.1,
    alpha: float = 0.05,
    seed: int = 0,
    n_boot: int = 200,
    learner: Any = "hgb",
    progress: bool = True,
    y1: Any = None,
    impute: bool = False,
    reference: Any = None,
    threshold: float = 0.5,
    n_jobs: int | None = None,
    tolerances: Mapping[str, float] | None = None,
    groups: Sequence[str] | None = None,
    min_group_size: int = MIN_GROUP_SIZE,
) -> AuditReport:
    """Audit a model's predictions for causal unfairness, counterfactual variance and closeness.

    Parameters
    ----------
    predict : callable or scikit-learn estimator or None
        The model: a callable ``DataFrame -> P(y = y1)`` (or the 0/1 decision), or an estimator (its
        ``predict_proba`` column of class ``y1`` in ``classes_``, or of class 1 when they are 0/1, else
        ``1{predict == y1}``; other classes are refused) on its fitted columns or ``sfm``'s x, z, w columns.
        ``None`` when ``scores`` are given. With ``impute=True`` the model sees the filled rows.
    data : pandas.DataFrame or dask.dataframe.DataFrame
        One row per unit with the columns of ``sfm`` (the outcome ``sfm.y`` is optional), as it comes:
        string, categorical and boolean confounders and mediators are handled by every learner. A Dask
        DataFrame is audited out of core (:func:`cflib.audit.distributed.audit_dask_frame`).
    sfm : cflib.fairness.StandardFairnessModel
        Roles of the columns: protected attribute ``x``, confounders ``z``, mediators ``w``, outcome ``y``.
        ``x0``/``x1`` name the two levels to compare (the others are left out); without them a 0/1 or
        boolean attribute compares 1 with 0, and an attribute with more than two levels is audited
        pairwise, every level against ``reference``.
    counterfactual : CounterfactualModel or callable, optional
        Gives each unit's counterfactual row under ``do(x = the other level)``: an object with
        ``counterfactual(obs: dict, do: dict) -> dict`` (:class:`cflib.scm.CounterfactualModel`) or a
        function ``frame -> frame``. Enables ECA, CF-CLOT and (with ``z``) CIT-LR.
    z : sequence of str, optional
        Columns that form a valid adjustment set for CIT-LR (the non-sensitive content of each unit).
    scores : array-like, optional
        Predictions already computed on ``data`` (instead of calling ``predict``).
    business_necessity : sequence of {"DE", "IE", "SE"}
        Effects allowed to pass into the prediction (Algorithm 1); default none.
    epsilon : float
        Tolerated N-TE of CF-CLOT.
    alpha : float
        Level of every test; intervals are at ``1 - alpha``. With ``k`` pairwise comparisons each uses
        ``alpha / k`` (Bonferroni), so the whole report keeps level ``alpha``.
    seed : int
        Seed of every random draw (folds, bootstrap, permutations).
    n_boot : int
        Bootstrap replicates of the effects (0: normal intervals only).
    learner : {"hgb", "linear", "rf"} or estimator
        Nuisance regressions of the doubly robust effects.
    progress : bool
        Show a progress bar over the steps.
    y1 : scalar, optional
        The positive label of the outcome (``">50K"``): the audit reads ``1{y == y1}``. Needed for a
        string or categorical outcome; a boolean outcome counts ``True``; a numeric one is used as it is.
    impute : bool
        Fill missing values of the confounders and mediators (median of a number, most frequent level
        of a category) instead of refusing them; the report says which and how many. Rows without the
        attribute or the outcome are always refused.
    reference : scalar, optional
        The baseline level when the attribute has more than two levels (default: its most frequent
        level); each other level is compared with it.
    threshold : float
        Scores in [0, 1] at or above it count as decision 1 (group table, DP, EO, FPR difference, ECA).
    n_jobs : int, optional
        Cross-fitting folds fitted at once, in separate processes (:func:`cflib.fairness.effects.ctf_effects`);
        the numbers do not depend on it. Default: one per available core (at most the 5 folds) from 5000 rows
        on, where a fit takes long enough to pay for starting the processes, and 1 below.
    tolerances : dict of str to float, optional
        The largest effect accepted per check (``{"DP": 0.05, "ECA": 0.02}``), overriding
        :data:`cflib.audit.status.TOLERANCES` (sources in :data:`cflib.audit.status.TOLERANCE_SOURCES`). Each row's
        ``status`` is ``flagged`` (its interval lies beyond the tolerance), ``clear`` (within it), ``inconclusive``
        (neither; ``n_to_decide`` says what sample would decide) or ``not estimable``. ``"CF-CLOT"`` sets
        ``epsilon``.

    groups : sequence of str, optional
        Columns whose combinations are the intersectional groups (``["sex", "race"]``): the group table per
        combination present, and DP, EO and FPR differences of each against the largest, with intervals and the
        Holm correction over the comparisons (:mod:`cflib.audit.intersections`).
    min_group_size : int
        A combination with fewer units is listed with its ``n``, its comparisons ``inconclusive``, never dropped.

    Returns
    -------
    AuditReport
        The same type in memory and on a Dask cluster.

    Raises
    ------
    TypeError, ValueError
        One line naming the argument: a missing role column, a constant attribute, missing values (with
        the column and the count), a string outcome without ``y1``, predictions of the wrong shape, an
        alpha outside (0, 1), ...
    """
    settings = AuditSettings(
        alpha=alpha,
        seed=seed,
        n_boot=n_boot,
        learner=learner,
        y1=y1,
        threshold=threshold,
        epsilon=epsilon,
        counterfactual=counterfactual,
        z=z,
        tolerances=tolerances,
        progress=progress,
        groups=groups,
        min_group_size=min_group_size,
    )
    if is_dask_frame(data):
        refused = {"scores": scores, "business_necessity": business_necessity, "impute": impute, "reference": reference}
        return audit_dask_frame(predict, data, sfm=sfm, settings=settings, n_jobs=n_jobs, **refused)
    return _audit_frame(predict, data, sfm, settings, scores, business_necessity, impute, reference, n_jobs)


def _audit_frame(
    predict: Any,
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    s: AuditSettings,
    scores: Any,
    business_necessity: Sequence[str],
    impute: bool,
    reference: Any,
    n_jobs: int | None,
) -> AuditReport:
    """The in-memory audit of :func:`audit` with its settings."""
    from tqdm import tqdm

    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    tols, epsilon = resolve_tolerances(s.tolerances, s.epsilon)
    alpha, seed, n_boot, y1, threshold = s.alpha, s.seed, s.n_boot, s.y1, s.threshold
    sfm, alpha, levels = validate_arguments(
        data, sfm, alpha, n_boot, epsilon, seed, business_necessity, threshold, impute, reference
    )
    group_cols = s.group_columns()
    data, bn, z, n_jobs = _checked_call(
        predict, data, sfm, levels, s.counterfactual, s.z, scores, business_necessity, n_jobs, group_cols
    )
    filled, imputed = missing_values(data, sfm, bool(impute))
    y01 = binary_outcome(data[sfm.y], y1, sfm.y) if sfm.y in data.columns else None
    f, y_hat = _predictions(predict, scores, filled, sfm, y1)
    pairs = _comparisons(data, sfm, levels, reference)
    decision, decided_by = decisions(y_hat, float(threshold))
    steps = 2 + len(pairs) * (2 + (s.counterfactual is not None))
    bar = tqdm(total=steps, desc="audit", disable=not s.progress)
    groups = _group_table(data, sfm, decision, y01, alpha, bar)
    checked = s.with_options(alpha=alpha, epsilon=epsilon, z=z)
    # the model sees the filled rows when impute=True asked for them
    outputs = (y_hat, y01, decision, decided_by)
    table, details, notes = _checks_table(
        pairs, f, (filled, filled), outputs, sfm, checked, imputed, bn, bar, int(n_jobs), tols
    )
    if group_cols is not None:
        cells = cell_counts(data, group_cols, y_hat, y01, float(threshold))
        groups, table, inter = with_intersections(table, cells, _kind(decided_by, y01), s, tols, group_cols)
    provenance = _provenance(
        data,
        sfm,
        pairs,
        alpha=alpha,
        reference=reference,
        predict=predict,
        counterfactual=s.counterfactual,
        z=z,
        bn=bn,
        y1=y1,
        seed=seed,
        n_boot=n_boot,
        decided_by=decided_by,
        threshold=threshold,
        imputed=imputed,
    )
    provenance["tolerances"] = tols
    if group_cols is not None:
        provenance["intersections"] = inter
    bar.update(1)
    bar.close()
    timing = {"started_utc": started, "wall_seconds": round(time.perf_counter() - t0, 2)}
    return AuditReport(table, alpha, provenance, timing, details, notes, groups)


def _checks_table(
    pairs: list[tuple[Any, Any]],
    f: Callable[[pd.DataFrame], np.ndarray] | None,
    frames: tuple[pd.DataFrame, pd.DataFrame],
    outputs: tuple[np.ndarray, np.ndarray | None, np.ndarray | None, str],
    sfm: StandardFairnessModel,
    s: AuditSettings,
    imputed: dict[str, int],
    bn: tuple[str, ...],
    bar: Any,
    n_jobs: int,
    tolerances: Mapping[str, float],
) -> tuple[pd.DataFrame, dict[str, Any], tuple[str, ...]]:
    """Every check of each comparison (:func:`cflib.audit.comparison.audit_pair`) on its two levels' rows, each at
    level ``alpha / k`` over ``k`` comparisons: the report's table (rows named ``[x1 vs x0]`` when ``k > 1``), the
    details, and the notes (the imputation first, then the warnings raised). Each row's status
    (:func:`cflib.audit.status.add_status`) is decided at the pair's level on the pair's rows."""
    data, filled = frames
    y_hat, y01, decision, decided_by = outputs
    k = len(pairs)
    alpha_pair = s.alpha / k
    pair_settings = s.with_options(alpha=alpha_pair)
    rows: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    notes: tuple[str, ...] = ()
    if imputed:
        notes += (
            f"imputed missing values in {', '.join(f'{c!r} ({n})' for c, n in imputed.items())} for the audit's own "
            "models and the model (median of a number, most frequent level of a category)",
        )
    for x0, x1 in pairs:
        suffix = f" [{x1} vs {x0}]" if k > 1 else ""
        keep = data[sfm.x].isin([x0, x1]).to_numpy()
        pair_sfm = sfm if sfm.x0 is not None or (x0, x1) == (0, 1) else replace(sfm, x0=x0, x1=x1)
        got = audit_pair(
            f,
            (data.loc[keep].reset_index(drop=True), filled.loc[keep].reset_index(drop=True)),
            (y_hat[keep], None if y01 is None else y01[keep], None if decision is None else decision[keep], decided_by),
            pair_sfm,
            (x0, x1),
            pair_settings,
            bn,
            bar,
            n_jobs,
        )
        pair_rows = pd.DataFrame.from_dict(got[0], orient="index")
        pair_rows = add_status(pair_rows, alpha_pair, tolerances, int(keep.sum()))
        for name, row in pair_rows.iterrows():
            rows[str(name) + suffix] = row.to_dict()
        details.update({key + suffix: v for key, v in got[1].items()})
        notes = tuple(dict.fromkeys((*notes, *got[2])))
    bar.set_postfix_str("report")
    table = pd.DataFrame.from_dict(rows, orient="index")[[COLUMNS[0], "se", *COLUMNS[1:], "flagged", *STATUS_COLUMNS]]
    table.index.name = "check"
    return table, details, notes


def _checked_call(
    predict: Any,
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    levels: list[Any],
    counterfactual: Any,
    z: Sequence[str] | None,
    scores: Any,
    business_necessity: Sequence[str],
    n_jobs: int | None,
    group_cols: list[str] | None = None,
) -> tuple[pd.DataFrame, tuple[str, ...], list[str] | None, int]:
    """The rest of the call checked: the rows of one named pair, business necessity, the model or its scores, ``z``,
    the intersectional ``groups`` and ``n_jobs`` (its default: one process per core, at most 5, from 5000 rows on)."""
    absent = [c for c in group_cols or [] if c not in data.columns]
    if absent:
        raise ValueError(f"groups: column(s) {absent} are not in data; its columns are {list(data.columns)[:20]}")
    if sfm.x0 is not None and len(levels) > 2:  # one named pair: the other levels are left out (and not hashed)
        data = data[data[sfm.x].isin([sfm.x0, sfm.x1])].reset_index(drop=True)
    bn = tuple(business_necessity)
    if not set(bn) <= set(MEASURES[1:]):
        raise ValueError(f"business_necessity must hold effects among DE, IE, SE, got {bn!r}")
    if predict is None and scores is None:
        raise ValueError("predict: give the model (predict=) or its predictions on data (scores=)")
    if z is not None:
        z = [z] if isinstance(z, str) else list(z)
        missing = [c for c in z if c not in data.columns]
        if missing:
            raise ValueError(f"z: column(s) {missing} are not in data")
    if counterfactual is not None and predict is None:
        raise ValueError("counterfactual: the counterfactual checks call the model; give predict=")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1):
        raise ValueError(f"n_jobs must be a whole number >= 1 or None (one per core on large data), got {n_jobs!r}")
    if n_jobs is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        n_jobs = min(5, cores) if len(data) >= 5000 else 1
    return data, bn, z, n_jobs


def _predictions(
    predict: Any, scores: Any, data: pd.DataFrame, sfm: StandardFairnessModel, y1: Any
) -> tuple[Callable[[pd.DataFrame], np.ndarray] | None, np.ndarray]:
    """The model as a function of a frame (``None`` without one) and its predictions on ``data`` (or the scores given)."""
    cols = [sfm.x, *sfm.z, *sfm.w]
    f = predictor(predict, data, cols, y1) if predict is not None else None
    if scores is not None:
        y_hat = checked_predictions(scores, len(data), "scores")
    else:
        assert f is not None, "predict: _checked_call refuses a call with neither predict nor scores"
        try:
            raw = f(data)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"predict: the model failed on data ({one_line(exc)})") from None
        y_hat = checked_predictions(raw, len(data), "predict")
    return f, y_hat


def _kind(decided_by: str, y01: np.ndarray | None) -> tuple[str | None, bool, str]:
    """Which decisions the predictions give (``"lab"``, ``"thr"``, ``None``), whether the outcome is 0/1, and why not."""
    decision = "lab" if decided_by.startswith("the predictions") else "thr" if decided_by.startswith("score") else None
    binary_y = y01 is not None and set(np.unique(y01)) <= {0.0, 1.0}
    why = "no outcome column" if y01 is None else "the outcome is not 0/1: name its positive label with y1="
    return decision, binary_y, why


def _comparisons(
    data: pd.DataFrame, sfm: StandardFairnessModel, levels: list[Any], reference: Any
) -> list[tuple[Any, Any]]:
    """The comparisons: one pair (x0, x1), or every level against the reference (Bonferroni over the pairs)."""
    if sfm.x0 is not None:
        pairs = [(sfm.x0, sfm.x1)]
    elif len(levels) == 2 and reference is None:
        pairs = [tuple(sfm.levels(data.dropna(subset=[sfm.x])))]
    else:
        counts = data[sfm.x].value_counts()
        ref = reference if reference is not None else counts.index[0]
        pairs = [(ref, lv) for lv in sorted((v for v in levels if v != ref), key=str)]
    return pairs


def _group_table(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    decision: np.ndarray | None,
    y01: np.ndarray | None,
    alpha: float,
    bar: Any,
) -> pd.DataFrame:
    """Each level's size and rates with Wilson intervals (:func:`cflib.stats.rates.group_rates`), one step of the bar."""
    from ..stats.rates import group_rates

    binary_y = y01 is not None and set(np.unique(y01)) <= {0.0, 1.0}
    bar.set_postfix_str("group table")
    groups = group_rates(
        data[sfm.x].astype(str).to_numpy(),
        decision,
        y01.astype(int) if binary_y and y01 is not None else None,
        level=1 - alpha,
        no_decision="predictions outside [0, 1] are not decisions",
        no_outcome="no outcome column" if y01 is None else "the outcome is not 0/1: name its positive label with y1=",
    )
    bar.update(1)
    return groups


def _provenance(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    pairs: list[tuple[Any, Any]],
    *,
    alpha: float,
    reference: Any,
    predict: Any,
    counterfactual: Any,
    z: list[str] | None,
    bn: tuple[str, ...],
    y1: Any,
    seed: int,
    n_boot: int,
    decided_by: str,
    threshold: float,
    imputed: dict[str, int],
) -> dict[str, Any]:
    """The report's provenance: data and model hashes, roles, versions, seed, comparisons and their level."""
    has_y = sfm.y in data.columns
    k = len(pairs)
    alpha_pair = alpha / k
    counts = data[sfm.x].value_counts()
    x0_all, x1_all = pairs[0] if k == 1 else (pairs[0][0], None)
    return {
        "data_sha256": data_hash(data),
        "n_rows": int(len(data)),
        "group_counts": {str(k_): int(v) for k_, v in sorted(counts.items(), key=lambda kv: str(kv[0]))},
        "roles": {
            "x": sfm.x,
            "z": list(sfm.z),
            "w": list(sfm.w),
            "y": sfm.y if has_y else None,
            "x0": plain(x0_all),
            "x1": plain(x1_all),
            "cit_z": z,
            "business_necessity": list(bn),
            "y1": plain(y1),
            "reference": plain(pairs[0][0]) if k > 1 or reference is not None else None,
        },
        "model": model_hash(predict) if predict is not None else "scores given",
        "model_type": model_type(predict),
        "counterfactual": None if counterfactual is None else model_hash(counterfactual),
        "cflib_version": cflib_version(),
        "seed": int(seed),
        "n_boot": int(n_boot),
        "device": "cpu",
        "environment": environment(),
        "comparisons": [[plain(b), plain(a)] for a, b in pairs],
        "multiplicity": (
            f"{k} comparisons with the reference level {pairs[0][0]!r}: each test and interval is at level "
            f"{alpha}/{k} = {alpha_pair:.4g} (Bonferroni), so the report as a whole keeps level {alpha}"
            if k > 1
            else None
        ),
        "scored": "the scores given" if predict is None else positive_column(predict, y1)[1],
        "decisions": decided_by,
        "threshold": float(threshold),
        "imputed": {c: int(n) for c, n in imputed.items()},
    }
