"""The tabular audit of a Dask DataFrame, with numbers that do not depend on how the rows are split (issue 30).

:func:`audit_distributed` audits a model on data that do not fit one process: the doubly robust TV, Ctf-DE,
Ctf-IE and Ctf-SE of the prediction and of the outcome (Plecko & Bareinboim, arXiv 2306.05059, Def. 3 and
Props. 3-4; the cross-fitted ATT-type AIPW estimator of :func:`cflib.fairness.effects.ctf_effects`), the
white-box Ctf-DE of the model, the group table (rates with Wilson intervals) and the demographic-parity,
equal-opportunity and false-positive-rate differences with Newcombe intervals (Ma et al., eqs. 5-6).

Design (:mod:`cflib.audit.partitions`, :mod:`cflib.audit.reproducible`):

* the model is applied partition by partition (``map_partitions``); no step collects the rows to one process
  except the nuisance subsample, at most ``nuisance_rows`` rows;
* each row's cross-fitting fold, its rank in the nuisance subsample and its bootstrap multipliers are pure
  functions of a 64-bit hash of the row (of a ``key`` column, or of its content) and the seed;
* the nuisance models of each fold are fitted on the client, on the subsample rows of the other folds (the
  ``nuisance_rows`` rows of smallest rank, sorted by rank, so the fits see the same rows in the same order
  however the data are split; all the rows when there are fewer), then sent to the workers with the tasks;
* each row's AIPW terms and influence values are computed inside its partition, and every sum is exact
  (integer limbs), so adding partitions' sums in any order gives the same total;
* bootstrap replicates reweight the rows by ``1 + g`` with Rademacher ``g`` drawn from (row hash, replicate,
  seed), with the nuisances held fixed (the inner bootstrap of :func:`ctf_effects`, whose multinomial counts
  need the whole sample).

With a counterfactual model (``counterfactual=``), each pair row is also predicted on its counterfactual row
(``do(x = the other level)``, in its partition) and two more passes give CF-CLOT with random Fourier features
(:mod:`cflib.stats.closeness_rff`: the feature sums, then the units' row means given the broadcast totals; the
bandwidth from the median heuristic on the nuisance subsample's first rows, the features from the seed).

Three passes over the partitions (scan, sums, influence; five with a counterfactual model), each a tree reduction
of ``split_every`` results at a time. A worker lost mid-pass is replaced (the nanny restarts it) and its tasks are
recomputed from the graph: the same numbers come back.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ..fairness.effects import MIN_UNITS_PER_FOLD, RELIABLE_UNITS, RELIABLE_UNITS_PER_FOLD, make_learner
from ..fairness.sfm import StandardFairnessModel
from ..stats.closeness_rff import CFCLOTRFFResult, cfclot_rff_finish, rff_map
from ..stats.kernels import make_kernel, median_bandwidth
from ..validation import check_alpha, check_count, check_level, check_real, warn
from .directions import DIRECTIONS, DirectionEnds, direction_row
from .distributed_tables import (
    audit_rows,
    decision_rule,
    effect_estimates,
    estimates_from_sums,
    group_table,
    learner_name,
    parity_differences,
)
from .inputs import positive_column, predictor
from .intersections import with_intersections
from .partitions import (
    ECA_COUNTS,
    HASH,
    YCF,
    YHAT,
    InfluencePart,
    PartitionSpec,
    ScanPart,
    SumsPart,
    combine,
    fit_nuisances,
    influence_partition,
    rff_partition,
    rff_rows_partition,
    scan_partition,
    sums_partition,
    with_counterfactuals,
    with_predictions,
)
from .provenance import cflib_version, environment, model_hash, model_type, plain, plain_tree
from .report import AuditReport
from .reproducible import CHUNK_ROWS, exact_value
from .rows import cit_row, eca_row, eca_rule
from .settings import AuditSettings
from .status import add_status, resolve_tolerances

__all__ = ["AuditReport", "audit_dask_frame", "audit_distributed", "is_dask_frame"]

#: Most levels a categorical confounder or mediator may have (each becomes a column of the nuisance designs).
MAX_LEVELS = 1000
#: Subsample rows (the first by rank) whose factual and counterfactual predictions set CF-CLOT's median bandwidth.
BANDWIDTH_ROWS = 500


def audit_distributed(
    predict: Any,
    data: Any,
    *,
    sfm: StandardFairnessModel,
    settings: AuditSettings | None = None,
    key: str | None = None,
    n_folds: int = 5,
    nuisance_rows: int = 200_000,
    level: float | None = None,
    clip: float = 0.01,
    n_features: int = 256,
    bandwidth: float | str = "median",
    client: Any = None,
    split_every: int = 8,
    **options: Any,
) -> AuditReport:
    """Audit a model on a Dask DataFrame: doubly robust effects, group table and parity, the same for any partitioning.

    Parameters
    ----------
    predict : callable or scikit-learn estimator
        The model: a callable ``DataFrame -> predictions`` or an estimator (as in :func:`cflib.audit.audit`),
        applied to each partition as given.
    data : dask.dataframe.DataFrame
        One row per unit with the columns of ``sfm`` (the outcome is optional), e.g.
        ``dask.dataframe.read_parquet("decisions/*.parquet")``.
    sfm : cflib.fairness.StandardFairnessModel
        Roles of the columns. ``x0``/``x1`` name the pair compared (rows of other levels are left out); without
        them the attribute must hold 0/1 (or booleans).
    settings : AuditSettings, optional
        The options shared with the in-memory audit (:class:`cflib.audit.settings.AuditSettings`; here the default
        learner is ``"linear"``); ``**options`` replace some of them.
    key : str, optional
        A column identifying the rows (an id): the folds, the subsample and the bootstrap multipliers are drawn
        from its hash. Without it, from the hash of the row's content (all columns as given), so identical rows
        share their fold and multipliers.
    n_folds : int
        Cross-fitting folds (at least 2).
    nuisance_rows : int
        Largest number of rows the nuisance models (and CIT-LR) are fitted on (a subsample of the smallest
        hash-derived ranks; all rows when the pair has fewer). The report says how many were used.
    level : float, optional
        Level of the intervals; default ``1 - alpha``.
    clip : float
        Propensities are clipped to ``[clip, 1 - clip]``.
    n_features : int
        CF-CLOT's random Fourier frequencies ``D``: their draw adds ``O(1 / sqrt(D))`` to its standard error.
    bandwidth : float or "median"
        CF-CLOT's Gaussian bandwidth; ``"median"``: the median heuristic on the subsample's first predictions.
    client : distributed.Client or str, optional
        The cluster: a client, or a scheduler's address. Default: the current client, else a LocalCluster of one
        single-threaded worker per core, closed at the end.
    split_every : int
        Partition results combined per task of the reductions.
    **options
        Fields of :class:`~cflib.audit.settings.AuditSettings`, as in :func:`cflib.audit.audit`: ``alpha``,
        ``seed`` (also of the hashes), ``n_boot`` (0: normal intervals from the influence-function standard errors;
        from 2 on bootstrap percentiles with Rademacher multipliers), ``learner``, ``y1``, ``threshold``,
        ``counterfactual`` (adds ECA, CF-CLOT with random Fourier features and, with ``z``, CIT-LR on the
        subsample), ``epsilon``, ``z``, ``tolerances``, ``progress`` (a progress bar per pass, quiet when
        standard error is not a terminal), ``groups`` and ``min_group_size`` (intersectional groups).

    Returns
    -------
    AuditReport
        The report of :func:`cflib.audit.audit` (``details`` holds ``effects``, ``parity``, ``settings``, ``level``).

    Raises
    ------
    TypeError, ValueError
        One line naming the argument: ``data`` not a Dask DataFrame, a missing column, ``key`` not a column,
        missing values, an attribute with other levels and no ``x0``/``x1``, too few units for the folds, ...

    Warns
    -----
    cflib.CflibWarning
        Fewer than ``max(RELIABLE_UNITS, RELIABLE_UNITS_PER_FOLD * n_folds)`` units in the smaller group.
    """
    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    s = (settings or AuditSettings(learner="linear")).with_options(**options)
    shape = (key, n_folds, nuisance_rows, level, clip, split_every)
    spec, f, level_, learners = _checked(predict, data, sfm, s, *shape)
    tols, epsilon = resolve_tolerances(s.tolerances, s.epsilon)
    closeness = _checked_closeness(s.counterfactual, epsilon, n_features, bandwidth, float(s.alpha))
    log = _Progress(s.progress, t0, 3 + 2 * (closeness is not None))
    conn, owned = _connect(client)
    timing: dict[str, Any] = {"started_utc": started}
    try:
        got = _passes(conn, data, f, spec, sfm, learners, split_every, log, timing, closeness)
    finally:
        log.close()
        for obj in owned:
            obj.close()
    report = _assemble(got, s, predict, sfm, data, (level_, learners, split_every, tols, closeness))
    timing["wall_seconds"] = round(time.perf_counter() - t0, 2)
    return dataclasses.replace(report, timing=timing)


@dataclass(frozen=True)
class _Passes:
    """What the three passes over the partitions give (the spec with the categorical levels the scan found)."""

    spec: PartitionSpec
    scan: ScanPart
    sums: SumsPart
    infl: InfluencePart
    means: np.ndarray
    draws: np.ndarray | None
    counts: tuple[float, float]
    pair_n: int
    n_parts: int
    notes: tuple[str, ...]
    closeness: tuple[CFCLOTRFFResult | None, CFCLOTRFFResult | None] | None = None


@dataclass(frozen=True)
class _Closeness:
    """CF-CLOT's settings: the counterfactual model, the tolerance, the features and the level."""

    counterfactual: Any
    epsilon: float
    n_features: int
    bandwidth: float | str
    alpha: float


def _checked_closeness(
    counterfactual: Any, epsilon: Any, n_features: Any, bandwidth: Any, alpha: float
) -> _Closeness | None:
    """CF-CLOT's arguments checked (one line naming each), or ``None`` without a counterfactual model."""
    if counterfactual is None:
        return None
    if not (hasattr(counterfactual, "counterfactual") or callable(counterfactual)):
        raise TypeError(
            "counterfactual must implement counterfactual(obs, do) or be a function frame -> frame, "
            f"got {type(counterfactual).__name__}"
        )
    eps = check_real(epsilon, "epsilon", low=0.0, high=1.0, high_open=True)
    if eps == 0:
        raise ValueError("epsilon must lie in (0, 1): the distributed CF-CLOT has the normal threshold only")
    make_kernel("gaussian", bandwidth)  # a positive number or "median"
    return _Closeness(counterfactual, eps, check_count(n_features, "n_features", minimum=2), bandwidth, alpha)


def _passes(
    conn: Any,
    data: Any,
    f: Callable[[pd.DataFrame], Any],
    spec: PartitionSpec,
    sfm: StandardFairnessModel,
    learners: tuple[Any, Any],
    split_every: int,
    log: _Progress,
    timing: dict[str, Any],
    closeness: _Closeness | None = None,
) -> _Passes:
    """Scan, fit the fold models on the subsample, reduce the AIPW sums, the influence functions (and CF-CLOT)."""
    if getattr(conn, "dashboard_link", None):
        log(f"dashboard {conn.dashboard_link}")
    meta = data._meta.assign(**{YHAT: np.zeros(0), HASH: np.zeros(0, dtype=np.uint64)})
    frame = data.map_partitions(with_predictions, f, spec, meta=meta)
    if closeness is not None:
        cf = _shared(closeness.counterfactual)
        frame = frame.map_partitions(with_counterfactuals, f, cf, spec, meta=meta.assign(**{YCF: np.zeros(0)}))
    parts = frame.to_delayed()
    n_pass = 3 if closeness is None else 5
    log(f"pass 1/{n_pass}: scan of {len(parts)} partitions")
    scan = _reduce(conn, parts, scan_partition, (spec,), split_every)
    timing["scan_seconds"] = log.step("fitting the nuisances")
    spec, notes = _after_scan(scan, spec, sfm)
    sub = scan.candidates
    pair_n = int(sum(g[0] for g in scan.groups.values()))
    x1_n = int(scan.groups[str(spec.x1)][0])
    x1_means = exact_value(scan.x1_sums) / x1_n
    models = fit_nuisances(sub, spec, learners[0], learners[1], x1_means, x1_n / pair_n, _learner_seed(spec.seed))
    timing["fit_seconds"] = log.lap()
    log(f"pass 2/{n_pass}: AIPW sums and bootstrap")
    sums = _reduce(conn, parts, sums_partition, (spec, _shared(models)), split_every)
    timing["sums_seconds"] = log.step(f"pass 3/{n_pass}: influence functions")
    means, draws, counts = estimates_from_sums(sums, spec)
    shares = (counts[0] / pair_n, counts[1] / pair_n)
    infl = _reduce(conn, parts, influence_partition, (spec, _shared(models), means, shares, _shared(f)), split_every)
    timing["influence_seconds"] = log.step("")
    clot = None
    if closeness is not None:
        clot = _closeness_passes(conn, parts, spec, scan, closeness, split_every, log, timing)
        notes = (*notes, *(w for r in clot if r is not None for w in r.warnings))
    return _Passes(spec, scan, sums, infl, means, draws, counts, pair_n, len(parts), notes, clot)


def _closeness_passes(
    conn: Any,
    parts: Sequence[Any],
    spec: PartitionSpec,
    scan: ScanPart,
    closeness: _Closeness,
    split_every: int,
    log: _Progress,
    timing: dict[str, Any],
) -> tuple[CFCLOTRFFResult | None, CFCLOTRFFResult | None]:
    """CF-CLOT per direction from two passes: the bandwidth and features on the client, then each direction's
    feature sums and row means (``None`` for a direction with fewer than 2 units)."""
    bw = closeness.bandwidth
    if bw == "median":  # the subsample's first rows by rank: the same rows for any partitioning
        first = scan.candidates.head(BANDWIDTH_ROWS)
        bw = median_bandwidth(first["__cflib_out_0"], first[YCF], seed=spec.seed)
    fmap = rff_map(1, n_features=closeness.n_features, bandwidth=float(bw), seed=spec.seed)
    log(f"pass 4/5: CF-CLOT per direction, {closeness.n_features} random Fourier features")
    pair_sums = _reduce(conn, parts, rff_partition, (spec, _shared(fmap)), split_every)
    timing["cfclot_sums_seconds"] = log.step("pass 5/5: CF-CLOT row means")
    args = (spec, _shared(fmap), _shared(pair_sums), closeness.epsilon)
    row_sums = _reduce(conn, parts, rff_rows_partition, args, split_every)
    timing["cfclot_rows_seconds"] = log.step("")
    # each direction at alpha / 2 (Bonferroni), as the in-memory audit's row (cflib.audit.directions)
    d0, d1 = (
        cfclot_rff_finish(pair_sums[c], row_sums[c], fmap, alpha=closeness.alpha / 2) if pair_sums[c].n >= 2 else None
        for c in (0, 1)
    )
    return d0, d1


def _with_cfclot(
    rows: pd.DataFrame,
    settings: dict[str, Any],
    res: tuple[CFCLOTRFFResult | None, CFCLOTRFFResult | None] | None,
    spec: PartitionSpec,
    alpha: float,
    epsilon: float,
) -> pd.DataFrame:
    """The report's rows with CF-CLOT's appended (and its settings added to ``settings``), when it ran."""
    if res is None:
        return rows
    settings["cfclot"] = _cfclot_settings(res)
    out = pd.concat([rows, _cfclot_row(res, rows.columns, spec, alpha, epsilon)])
    out.index.name = "check"
    return out


def _cfclot_row(
    res: tuple[CFCLOTRFFResult | None, CFCLOTRFFResult | None],
    columns: Any,
    spec: PartitionSpec,
    alpha: float,
    epsilon: float,
) -> pd.DataFrame:
    """The report's ``"CF-CLOT"`` row: the in-memory audit's per-direction row, each direction's N-TE and standard
    error from the random-feature estimator."""
    from scipy.stats import norm

    z = float(norm.ppf(1 - alpha / 2))
    ends = [None if r is None else DirectionEnds(r.statistic, z * r.std_error, r.pvalue, r.m) for r in res]
    some = next(r for r in res if r is not None) if any(r is not None for r in res) else None
    how = "CF-CLOT per direction"
    if some is not None:
        how += f", normal threshold, {some.n_features} random Fourier features (bandwidth {some.bandwidth:.4g})"
    row = direction_row(
        ends, epsilon, alpha, (spec.x0, spec.x1), how, "closeness-test, Eq. 7 and Def. 4 (per direction)"
    )
    row["se"] = max((r.std_error for r in res if r is not None), default=math.nan)
    return pd.DataFrame.from_dict({"CF-CLOT": row}, orient="index")[list(columns)]


def _cfclot_settings(res: tuple[CFCLOTRFFResult | None, CFCLOTRFFResult | None]) -> dict[str, Any]:
    """CF-CLOT's settings and each direction's numbers for the report (``settings["cfclot"]``)."""
    got = [r for r in res if r is not None]
    out: dict[str, Any] = {}
    if got:
        out = {
            "epsilon": got[0].epsilon,
            "n_features": got[0].n_features,
            "bandwidth": got[0].bandwidth,
            "features": "cosine-sine random Fourier features of the Gaussian kernel, frequencies from the seed",
            "pairs": sum(r.m for r in got),
        }
    out["directions"] = {
        key: None
        if r is None
        else {
            "pairs": r.m,
            "statistic": r.statistic,
            "std_error": r.std_error,
            "pvalue": r.pvalue,
            "threshold": r.threshold,
            "sigma_units": r.sigma,
            "sigma_features": r.sigma_features,
            "mte": r.mte,
            "mean_d": r.mean_d,
        }
        for key, r in zip(DIRECTIONS, res, strict=True)
    }
    return out


def _settings(
    spec: PartitionSpec,
    learners: tuple[Any, Any],
    n_sub: int,
    pair_n: int,
    decided_by: str,
    n_parts: int,
    split_every: int,
) -> dict[str, Any]:
    """What the audit used, for the report: folds, the nuisance subsample, the bootstrap, learners, memory."""
    return {
        "n_folds": spec.n_folds,
        "folds": "hash of the key" if spec.key is not None else "hash of the row's content",
        "key": spec.key,
        "nuisance_rows": spec.nuisance_rows,
        "nuisance_rows_used": n_sub,
        "nuisance_fit": "all rows of the other folds"
        if n_sub == pair_n
        else f"a hash-selected subsample of {n_sub} of {pair_n} rows",
        "n_boot": spec.n_boot,
        "multipliers": "Rademacher, from (row hash, replicate, seed); replicate weights 1 + g",
        "interval": "percentile bootstrap" if spec.n_boot >= 2 else "normal, influence-function SE",
        "seed": spec.seed,
        "learner": learner_name(learners[0]),
        "propensity_learner": learner_name(learners[1]),
        "clip": spec.clip,
        "threshold": spec.threshold,
        "decisions": decided_by,
        "n_partitions": n_parts,
        "split_every": split_every,
        "memory_per_task": f"one partition with its predictions, plus {CHUNK_ROWS} x n_boot bootstrap multipliers "
        f"({CHUNK_ROWS * max(spec.n_boot, 1) * 8 / 2**20:.0f} MiB); the client holds the subsample",
    }


def is_dask_frame(data: object) -> bool:
    """Whether ``data`` is a Dask DataFrame (without importing Dask when no Dask object can exist yet).

    Parameters
    ----------
    data : object

    Returns
    -------
    bool
    """
    module = sys.modules.get("dask.dataframe")
    return module is not None and isinstance(data, module.DataFrame)


def audit_dask_frame(
    predict: Any,
    data: Any,
    *,
    sfm: StandardFairnessModel,
    settings: AuditSettings,
    scores: Any = None,
    business_necessity: Sequence[str] = (),
    impute: bool = False,
    reference: Any = None,
    n_jobs: int | None = None,
) -> AuditReport:
    """:func:`cflib.audit.audit` called with a Dask DataFrame: :func:`audit_distributed` with the same settings.

    The options of the in-memory audit that the distributed audit does not have (precomputed ``scores``,
    Algorithm 1's ``business_necessity``, imputation and pairwise comparisons against a ``reference``) are refused
    with one line; ``n_jobs`` (the in-memory folds' processes) has nothing to act on.

    Parameters
    ----------
    predict : callable or scikit-learn estimator
    data : dask.dataframe.DataFrame
    sfm : cflib.fairness.StandardFairnessModel
    settings : AuditSettings
        The options shared with the in-memory audit.
    scores, business_necessity, impute, reference
        Must be left at their defaults (refused otherwise).
    n_jobs
        Ignored: nothing to act on out of core.

    Returns
    -------
    AuditReport

    Raises
    ------
    ValueError
        An option the distributed audit does not have, or what :func:`audit_distributed` refuses.
    """
    refused = {
        "scores": scores is not None,
        "business_necessity": bool(tuple(business_necessity)),
        "impute": bool(impute),
        "reference": reference is not None,
    }
    named = [k for k, given in refused.items() if given]
    if named:
        raise ValueError(
            f"{', '.join(named)}: the audit of a Dask DataFrame (cflib.audit.distributed) runs the effects, the group "
            "table, DP/EO/FPR and (with counterfactual=) ECA, CF-CLOT and CIT-LR only; audit a sample in memory "
            "(data.sample(...).compute()) for the other checks"
        )
    del n_jobs  # nothing to act on out of core
    return audit_distributed(predict, data, sfm=sfm, settings=settings)


class _Progress:
    """A progress bar over the passes (tqdm, quiet when standard error is not a terminal), and each pass's seconds."""

    def __init__(self, on: bool, t0: float, n_pass: int) -> None:
        from tqdm import tqdm

        self.last = t0
        self.bar = tqdm(total=n_pass, desc="audit_distributed", unit="pass", disable=None if on else True)

    def __call__(self, msg: str) -> None:
        self.bar.set_postfix_str(msg, refresh=True)

    def lap(self) -> float:
        now = time.perf_counter()
        out, self.last = round(now - self.last, 2), now
        return out

    def step(self, what: str) -> float:
        """One pass done: the bar moves on, and the seconds since the last lap."""
        self.bar.update(1)
        self.bar.set_postfix_str(what, refresh=False)
        return self.lap()

    def close(self) -> None:
        self.bar.close()


def _checked(
    predict: Any,
    data: Any,
    sfm: Any,
    s: AuditSettings,
    key: Any,
    n_folds: Any,
    nuisance_rows: Any,
    level: Any,
    clip: Any,
    split_every: Any,
) -> tuple[PartitionSpec, Callable[[pd.DataFrame], Any], float, tuple[Any, Any]]:
    """Every argument checked (one line naming it), and the partition spec, the model and the learners they give."""
    import dask.dataframe as dd

    n_boot, alpha, seed, learner, y1, threshold = s.n_boot, s.alpha, s.seed, s.learner, s.y1, s.threshold

    if not isinstance(data, dd.DataFrame):
        hint = (
            "; audit a pandas frame with cflib.audit.audit, or wrap it with dask.dataframe.from_pandas(data, npartitions=...)"
            if isinstance(data, pd.DataFrame)
            else ""
        )
        raise TypeError(
            f"data must be a dask.dataframe.DataFrame, got {type(data).__module__}.{type(data).__name__}{hint}"
        )
    if not isinstance(sfm, StandardFairnessModel):
        raise TypeError(f"sfm must be a StandardFairnessModel, got {type(sfm).__name__}")
    columns = [str(c) for c in data.columns]
    missing = [c for c in [sfm.x, *sfm.z, *sfm.w] if c not in columns]
    if missing:
        raise ValueError(f"data lacks the role column(s) {missing} of sfm; its columns are {columns[:20]}")
    if key is not None and (not isinstance(key, str) or key not in columns):
        raise ValueError(
            f"key must name a column of data (an id of the rows) or be None, got {key!r}; columns: {columns[:20]}"
        )
    if predict is None:
        raise ValueError("predict: give the model (a callable on a DataFrame or a scikit-learn estimator)")
    group_cols = s.group_columns() or []
    absent = [c for c in group_cols if c not in columns]
    if absent:
        raise ValueError(f"groups: column(s) {absent} are not in data; its columns are {columns[:20]}")
    cit_z = [s.z] if isinstance(s.z, str) else list(s.z or [])
    if [c for c in cit_z if c not in (*sfm.z, *sfm.w)]:
        raise ValueError(
            f"z: CIT-LR's columns {cit_z} must be among the confounders and mediators of sfm on a Dask frame"
        )
    f = predictor(predict, data._meta, [sfm.x, *sfm.z, *sfm.w], y1)
    check_count(n_folds, "n_folds", minimum=2)
    check_count(nuisance_rows, "nuisance_rows", minimum=2 * int(n_folds))
    check_count(n_boot, "n_boot", minimum=0)
    check_count(seed, "seed", minimum=0)
    check_count(split_every, "split_every", minimum=2)
    check_alpha(alpha)
    level_ = 1 - float(alpha) if level is None else check_level(level)
    threshold = check_real(threshold, "threshold")
    clip = check_real(clip, "clip", low=0.0, high=0.5, high_open=True)
    learners = (make_learner(learner, "regressor"), learner if isinstance(learner, str) else "hgb")
    make_learner(learners[1], "classifier")
    learners = (learner, learners[1])
    dtypes = data._meta.dtypes
    has_y = sfm.y in columns
    if has_y and y1 is None and not _numeric(dtypes[sfm.y]):
        raise ValueError(
            f"y1: the outcome column {sfm.y!r} holds labels (dtype {dtypes[sfm.y]}), not numbers; name the positive one with y1="
        )
    if sfm.x0 is not None:
        x0, x1 = sfm.x0, sfm.x1
    else:
        x0, x1 = (False, True) if pd.api.types.is_bool_dtype(dtypes[sfm.x]) else (0, 1)
    spec = PartitionSpec(
        x=sfm.x,
        x0=x0,
        x1=x1,
        z=tuple(sfm.z),
        w=tuple(sfm.w),
        y=sfm.y if has_y else None,
        y1=y1,
        key=key,
        columns=tuple(columns),
        seed=int(seed),
        n_folds=int(n_folds),
        nuisance_rows=int(nuisance_rows),
        n_boot=int(n_boot),
        threshold=threshold,
        clip=clip,
        categorical=tuple(c for c in (*sfm.z, *sfm.w) if not _numeric(dtypes[c])),
        groups=tuple(group_cols),
    )
    return spec, f, level_, learners


def _numeric(dtype: Any) -> bool:
    """Numbers and booleans (used as they are); strings and categories are one-hot encoded."""
    return bool(pd.api.types.is_numeric_dtype(dtype)) and not isinstance(dtype, pd.CategoricalDtype)


def _learner_seed(seed: int) -> int:
    return int(seed) % (2**31 - 1)


def _connect(client: Any) -> tuple[Any, list[Any]]:
    """The client to use and what to close at the end (a client or cluster made here)."""
    from distributed import Client, LocalCluster, default_client

    if client is None:
        try:
            return default_client(), []
        except ValueError:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
            cluster = LocalCluster(
                n_workers=cores,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            made = Client(cluster)
            return made, [made, cluster]
    if isinstance(client, str):
        made = Client(client)
        return made, [made]
    if isinstance(client, Client):
        return client, []
    raise TypeError(f"client must be a distributed.Client, a scheduler address or None, got {type(client).__name__}")


def _shared(obj: Any) -> Any:
    """One graph key for an object every task of a pass reads (the fold models, the model)."""
    import dask

    return dask.delayed(obj, traverse=False)


def _reduce(client: Any, parts: Sequence[Any], fn: Callable[..., Any], args: tuple[Any, ...], split_every: int) -> Any:
    """``fn`` on every partition, then a tree of :func:`combine` calls, computed on ``client``."""
    import dask

    tasks = [dask.delayed(fn, pure=False)(p, *args) for p in parts]
    while len(tasks) > 1:
        tasks = [
            dask.delayed(combine, pure=False)(*tasks[i : i + split_every]) for i in range(0, len(tasks), split_every)
        ]
    future = client.compute(tasks[0])
    try:
        return future.result()
    finally:
        future.release()


def _after_scan(
    scan: ScanPart, spec: PartitionSpec, sfm: StandardFairnessModel
) -> tuple[PartitionSpec, tuple[str, ...]]:
    """The scan's checks (missing values, levels, group sizes, the outcome's label), and the categorical levels."""
    na = {c: n for c, n in scan.missing.items() if n}
    if na:
        raise ValueError(
            f"data: missing (or infinite) values in {na}; the distributed audit does not impute: drop or fill them first"
        )
    if sfm.x0 is None and not set(scan.levels) <= {spec.x0, spec.x1}:
        raise ValueError(
            f"sfm.x: the attribute {spec.x!r} takes levels {sorted(map(str, scan.levels))[:10]}; the distributed audit "
            "compares one pair: name it with x0= and x1= in the StandardFairnessModel"
        )
    n0 = int(scan.groups[str(spec.x0)][0]) if str(spec.x0) in scan.groups else 0
    n1 = int(scan.groups[str(spec.x1)][0]) if str(spec.x1) in scan.groups else 0
    smaller = min(n0, n1)
    if smaller < MIN_UNITS_PER_FOLD * spec.n_folds:
        raise ValueError(
            f"data: the smaller group of {spec.x!r} has {smaller} units; cross-fitting with n_folds={spec.n_folds} needs "
            f"at least {MIN_UNITS_PER_FOLD * spec.n_folds}"
        )
    if spec.y1 is not None and not sum(int(g[1]) for g in scan.groups.values()):
        raise ValueError(f"y1: {spec.y1!r} is not a value of the outcome column {spec.y!r}")
    big = {c: len(v) for c, v in scan.categories.items() if len(v) > MAX_LEVELS}
    if big:
        raise ValueError(
            f"data: categorical column(s) with more than {MAX_LEVELS} levels {big}; encode them as numbers"
        )
    levels = {c: tuple(sorted(v, key=str)) for c, v in scan.categories.items()}
    notes: tuple[str, ...] = ()
    need = max(RELIABLE_UNITS, RELIABLE_UNITS_PER_FOLD * spec.n_folds)
    if smaller < need:
        notes = (
            warn(
                f"audit_distributed: the smaller group of {spec.x!r} has {smaller} units; intervals and p-values are "
                f"unreliable below {need}"
            ),
        )
    return replace(spec, levels=levels), notes


def _provenance(
    scan: ScanPart, spec: PartitionSpec, sfm: StandardFairnessModel, predict: Any, s: AuditSettings, data: Any
) -> dict[str, Any]:
    """Rows, group counts, roles, the model, versions and a fingerprint of the rows that ignores their order."""
    fp = hashlib.sha256(f"{scan.n_rows}:{scan.fingerprint[0]}:{scan.fingerprint[1]}:{spec.columns}".encode())
    cit_z = [s.z] if isinstance(s.z, str) else (list(s.z) if s.z is not None else None)
    return {
        "kind": "distributed",
        "data_sha256": f"sha256:{fp.hexdigest()}",
        "data_fingerprint": "sha256 of the row count, the columns and two sums modulo 2**64 of the rows' 64-bit "
        + ("hashes of the key column" if spec.key is not None else "content hashes")
        + ": the same for any order and partitioning of the rows",
        "n_rows": int(scan.n_rows),
        "n_rows_compared": int(sum(int(g[0]) for g in scan.groups.values())),
        "group_counts": {str(k): int(v) for k, v in sorted(scan.levels.items(), key=lambda kv: str(kv[0]))},
        "roles": {
            "x": spec.x,
            "z": list(spec.z),
            "w": list(spec.w),
            "y": spec.y,
            "x0": plain(spec.x0),
            "x1": plain(spec.x1),
            "y1": plain(s.y1),
            "key": spec.key,
            "cit_z": cit_z,
            "business_necessity": [],
        },
        "columns": list(spec.columns),
        "model": model_hash(predict),
        "model_type": model_type(predict),
        "counterfactual": None if s.counterfactual is None else model_hash(s.counterfactual),
        "scored": positive_column(predict, s.y1)[1],
        "cflib_version": cflib_version(),
        "seed": int(s.seed),
        "n_boot": int(s.n_boot),
        "device": "cpu",
        "environment": environment(),
        "threshold": float(spec.threshold),
        "data": f"dask DataFrame, {data.npartitions} partitions",
        "sfm": repr(sfm),
    }


def _assemble(
    got: _Passes, s: AuditSettings, predict: Any, sfm: StandardFairnessModel, data: Any, extras: tuple[Any, ...]
) -> AuditReport:
    """The report from the passes' reduced sums: the rows (effects, DP/EO/FPR, ECA, CF-CLOT, CIT-LR, intersectional
    groups), each decided against its tolerance, the group table, the provenance and the details.

    Parameters
    ----------
    got : _Passes
    s : AuditSettings
    predict : model
    sfm : StandardFairnessModel
    data : dask.dataframe.DataFrame
    extras : tuple
        The interval level, the learners, ``split_every``, the tolerances and CF-CLOT's settings (or ``None``).

    Returns
    -------
    AuditReport
        Without timing (the caller adds it).
    """
    level_, learners, split_every, tols, closeness = extras
    alpha, spec = float(s.alpha), got.spec
    n_sub = len(got.scan.candidates)
    sums = (got.means, got.draws, got.infl, got.counts, got.sums.n_clipped)
    effects = effect_estimates(spec, *sums, level_, learners[0], n_sub, got.pair_n, got.notes)
    decision, decided_by = decision_rule(got.scan, spec.threshold)
    groups = group_table(got.scan, spec, decision, level_)
    parity = parity_differences(got.scan, spec, decision, level_)
    rows = audit_rows(effects, got.infl, parity, spec, decided_by, level_, alpha, got.counts)
    settings = _settings(spec, learners, n_sub, got.pair_n, decided_by, got.n_parts, split_every)
    details: dict[str, Any] = {"effects": effects, "parity": parity, "settings": settings, "level": level_}
    rows = _with_row(rows, got.scan.eca is not None and _eca(got.scan, decided_by, details))
    rows = _with_cfclot(rows, settings, got.closeness, spec, alpha, closeness.epsilon if closeness else math.nan)
    rows = _with_row(rows, s.z is not None and s.counterfactual is not None and _cit(got.scan, spec, s, details))
    rows = add_status(rows, alpha, tols, float(sum(got.counts)))
    group_cols = s.group_columns()
    if group_cols:
        why = "no outcome column" if spec.y is None else "the outcome is not 0/1: name its positive label with y1="
        kind = (decision, spec.y is not None and got.scan.y_binary, why)
        groups, rows, inter = with_intersections(rows, got.scan.cells, kind, s, tols, group_cols)
    provenance = _provenance(got.scan, spec, sfm, predict, s, data)
    if group_cols:
        provenance["intersections"] = inter
    provenance.update(tolerances=tols, settings=plain_tree(settings), decisions=decided_by)
    return AuditReport(rows, alpha, provenance, {}, details, got.notes, groups)


def _with_row(rows: pd.DataFrame, row: Any) -> pd.DataFrame:
    """The rows with one more (a ``{name: row}`` mapping), or unchanged (``False``)."""
    if not row:
        return rows
    out = pd.concat([rows, pd.DataFrame.from_dict(row, orient="index").reindex(columns=rows.columns)])
    out.index.name = "check"
    return out


def _eca(scan: ScanPart, decided_by: str, details: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``ECA`` row from the scan's exact counts: the in-memory rule (:func:`cflib.audit.rows.eca_rule`) and
    Wilson interval on the same pairs."""
    from ..results import Interval
    from ..stats.counterfactual_accuracy import ECAResult
    from ..stats.rates import wilson_interval

    assert scan.eca is not None, "ECA needs the counterfactual predictions"
    c = dict(zip(ECA_COUNTS, (int(v) for v in scan.eca), strict=True))
    binary = scan.yhat_labels and scan.ycf_labels
    low, high = min(scan.yhat_min, scan.ycf_min), max(scan.yhat_max, scan.ycf_max)
    decide, thr, tol = eca_rule(binary, low, high, decided_by)
    k = (
        c["equal"]
        if binary
        else (c["agree_half"] if thr == 0.5 else c["agree_threshold"])
        if decide
        else c["agree_tol"]
    )
    n = c["n"]
    ci = Interval.of(wilson_interval(k, n, 0.95), estimate=k / n, method=f"95% Wilson, {n} (unit, level) pairs")
    eca = ECAResult(eca=k / n, n=n, ci=ci, agree=np.zeros(0), tol=tol)
    details["ECA"] = eca
    return {"ECA": eca_row(eca, decide, thr, "; exact counts over the partitions")}


def _cit(scan: ScanPart, spec: PartitionSpec, s: AuditSettings, details: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``CIT-LR`` row on the nuisance subsample (all the pair's rows when they are at most ``nuisance_rows``),
    the same rows in the same order for any partitioning."""
    from ..stats.invariance import cit_lr_test

    z = [s.z] if isinstance(s.z, str) else list(s.z or [])
    sub = scan.candidates
    zmat = pd.get_dummies(sub[z], drop_first=True, dtype=float).to_numpy(dtype=float)
    a = (sub[spec.x] == spec.x1).to_numpy().astype(int)
    cit = cit_lr_test(sub["__cflib_out_0"].to_numpy(dtype=float), a, zmat, seed=s.seed)
    details["CIT-LR"] = cit
    pair_n = int(sum(int(g[0]) for g in scan.groups.values()))
    how = "" if len(sub) == pair_n else f", on a hash-selected subsample of {len(sub)} of {pair_n} rows"
    return {"CIT-LR": cit_row(cit, z, float(s.alpha), how + " (rows in hash order)")}
