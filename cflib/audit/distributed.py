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

Three passes over the partitions (scan, sums, influence), each a tree reduction of ``split_every`` results
at a time. A worker lost mid-pass is replaced (the nanny restarts it) and its tasks are recomputed from the
graph: the same numbers come back.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..fairness.effects import (
    MEASURES,
    MIN_UNITS_PER_FOLD,
    RELIABLE_UNITS,
    RELIABLE_UNITS_PER_FOLD,
    EffectEstimates,
    make_learner,
)
from ..fairness.sfm import StandardFairnessModel
from ..results import Interval
from ..stats.rates import RATES, RateDifference, newcombe_difference, wilson_interval
from ..validation import check_alpha, check_count, check_level, check_real, warn
from .checks import COLUMNS, EFFECT_NAMES
from .inputs import predictor
from .partitions import (
    GROUP_COUNTS,
    HASH,
    YHAT,
    InfluencePart,
    PartitionSpec,
    ScanPart,
    SumsPart,
    combine,
    fit_nuisances,
    influence_partition,
    scan_partition,
    sums_partition,
    with_predictions,
)
from .provenance import cflib_version, environment, model_hash, model_type, plain
from .reproducible import CHUNK_ROWS, add_sums, exact_value

__all__ = ["DistributedAudit", "audit_distributed"]

#: Most levels a categorical confounder or mediator may have (each becomes a column of the nuisance designs).
MAX_LEVELS = 1000


@dataclass(frozen=True)
class DistributedAudit:
    """The outcome of :func:`audit_distributed`.

    Attributes
    ----------
    rows : pandas.DataFrame
        One row per check, indexed by name as in :class:`cflib.audit.AuditReport` (``"TV"``, ``"Ctf-DE"``,
        ``"Ctf-IE"``, ``"Ctf-SE"``, ``"Ctf-DE (white-box)"``, the outcome's ``"... (y)"`` rows, ``"DP"``,
        ``"EO"``, ``"FPR difference"``), columns ``estimate, se, ci_low, ci_high, pvalue, verdict, method,
        reference, flagged``.
    groups : pandas.DataFrame
        Per level of the attribute: ``n`` and the base rate, selection rate, TPR, FPR and PPV with Wilson
        intervals (the columns of :func:`cflib.stats.rates.group_rates`), from reduced counts.
    effects : dict of str to EffectEstimates
        ``"_y_hat"`` (the prediction) and the outcome's column: estimates, influence-function standard errors,
        intervals and bootstrap replicates (``influence`` is empty: the per-row values stay on the workers).
    parity : dict of str to RateDifference or None
        ``"DP"``, ``"EO"``, ``"FPR difference"`` (``None`` where not estimable).
    alpha : float
        Level of the tests (a check is flagged at ``pvalue <= alpha`` or an interval excluding 0).
    level : float
        Level of every interval.
    settings : dict
        What the audit used: folds, the nuisance subsample asked for and used, replicates, multipliers, seed,
        learners, key, clipping, the decision rule, partitions and the memory a task holds.
    provenance : dict
        Rows, group counts, roles, a fingerprint of the rows (independent of their order), the model's hash and
        type, versions.
    timing : dict
        Start time, wall time and each pass's seconds.
    warnings : tuple of str
        Why some answer may be unreliable (too few units in a group).
    """

    rows: pd.DataFrame
    groups: pd.DataFrame
    effects: dict[str, EffectEstimates]
    parity: dict[str, RateDifference | None]
    alpha: float
    level: float
    settings: dict[str, Any]
    provenance: dict[str, Any]
    timing: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The checks, one row each: estimate, standard error, interval, p-value and verdict.

        Returns
        -------
        pandas.DataFrame
            Indexed by check name.
        """
        return self.rows[["estimate", "se", "ci_low", "ci_high", "pvalue", "verdict"]].copy()

    def flagged(self) -> pd.Series:
        """Whether each check found what it looks for at level ``alpha``.

        Returns
        -------
        pandas.Series of bool
            Indexed by check name.
        """
        return self.rows["flagged"].astype(bool)

    def to_dict(self) -> dict[str, Any]:
        """The result as plain JSON data (NaN as ``None``).

        Returns
        -------
        dict
            ``rows`` and ``groups`` (lists of records with their name), ``effects`` (each outcome's bootstrap
            replicates left out), ``alpha``, ``level``, ``settings``, ``provenance``, ``timing``, ``warnings``.
        """

        def records(df: pd.DataFrame, name: str) -> list[dict[str, Any]]:
            return [{name: str(i), **{k: _json(v) for k, v in r.items()}} for i, r in df.iterrows()]

        effects = {
            k: {"estimate": e.estimate, "se": e.se, "pvalue": e.pvalue, "ci": {m: list(e.ci[m]) for m in MEASURES}}
            for k, e in self.effects.items()
        }
        return {
            "rows": records(self.rows, "check"),
            "groups": records(self.groups, "group"),
            "effects": _json(effects),
            "alpha": self.alpha,
            "level": self.level,
            "settings": _json(self.settings),
            "provenance": _json(self.provenance),
            "timing": _json(self.timing),
            "warnings": list(self.warnings),
        }


def _json(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json(x) for x in v]
    return plain(v)


def audit_distributed(
    predict: Any,
    data: Any,
    *,
    sfm: StandardFairnessModel,
    key: str | None = None,
    n_folds: int = 5,
    nuisance_rows: int = 200_000,
    n_boot: int = 200,
    alpha: float = 0.05,
    level: float | None = None,
    seed: int = 0,
    learner: Any = "linear",
    y1: Any = None,
    threshold: float = 0.5,
    clip: float = 0.01,
    client: Any = None,
    split_every: int = 8,
    progress: bool = True,
) -> DistributedAudit:
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
    key : str, optional
        A column identifying the rows (an id): the folds, the subsample and the bootstrap multipliers are drawn
        from its hash. Without it, from the hash of the row's content (all columns as given), so identical rows
        share their fold and multipliers.
    n_folds : int
        Cross-fitting folds (at least 2).
    nuisance_rows : int
        Largest number of rows the nuisance models are fitted on (a subsample of the smallest hash-derived ranks;
        all rows when the pair has fewer). The report says how many were used.
    n_boot : int
        Bootstrap replicates (0: normal intervals from the influence-function standard errors; from 2 on the
        intervals are bootstrap percentiles, as in :func:`cflib.audit.audit`).
    alpha : float
        Level of the tests.
    level : float, optional
        Level of the intervals; default ``1 - alpha``.
    seed : int
        Seed of the hashes (folds, subsample, multipliers) and of the named learners.
    learner : {"linear", "hgb", "rf"} or scikit-learn estimator
        Nuisance regressions (the propensities use the matching classifier; ``"hgb"`` for an estimator).
    y1 : scalar, optional
        The outcome's positive label (the audit reads ``1{y == y1}``); needed for a string outcome.
    threshold : float
        Scores in [0, 1] at or above it are decision 1 (group table and parity).
    clip : float
        Propensities are clipped to ``[clip, 1 - clip]``.
    client : distributed.Client or str, optional
        The cluster: a client, or a scheduler's address. Default: the current client, else a LocalCluster of one
        single-threaded worker per core, closed at the end.
    split_every : int
        Partition results combined per task of the reductions.
    progress : bool
        Write a line per pass to standard error (the tasks also show in the Dask dashboard).

    Returns
    -------
    DistributedAudit

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
    spec, f, level_, learners = _checked(
        predict,
        data,
        sfm,
        key,
        n_folds,
        nuisance_rows,
        n_boot,
        alpha,
        level,
        seed,
        learner,
        y1,
        threshold,
        clip,
        split_every,
    )
    alpha = float(alpha)
    log = _Log(progress, t0)
    conn, owned = _connect(client)
    timing: dict[str, Any] = {"started_utc": started}
    try:
        if progress and getattr(conn, "dashboard_link", None):
            log(f"dashboard {conn.dashboard_link}")
        meta = data._meta.assign(**{YHAT: np.zeros(0), HASH: np.zeros(0, dtype=np.uint64)})
        parts = data.map_partitions(with_predictions, f, spec, meta=meta).to_delayed()
        log(f"pass 1/3 (scan) over {len(parts)} partitions")
        scan = _reduce(conn, parts, scan_partition, (spec,), split_every)
        timing["scan_seconds"] = log.lap()
        spec, notes = _after_scan(scan, spec, sfm)
        sub = scan.candidates
        log(f"fitting the nuisances of {spec.n_folds} folds on {len(sub)} subsample rows")
        pair_n = int(sum(g[0] for g in scan.groups.values()))
        x1_n = int(scan.groups[str(spec.x1)][0])
        x1_means = exact_value(scan.x1_sums) / x1_n
        models = fit_nuisances(sub, spec, learners[0], learners[1], x1_means, x1_n / pair_n, _learner_seed(seed))
        timing["fit_seconds"] = log.lap()
        log("pass 2/3 (AIPW sums and bootstrap)")
        sums = _reduce(conn, parts, sums_partition, (spec, _shared(models)), split_every)
        timing["sums_seconds"] = log.lap()
        means, draws, counts = _estimates(sums, spec)
        log("pass 3/3 (influence functions)")
        shares = (counts[0] / pair_n, counts[1] / pair_n)
        infl = _reduce(
            conn, parts, influence_partition, (spec, _shared(models), means, shares, _shared(f)), split_every
        )
        timing["influence_seconds"] = log.lap()
        n_parts = len(parts)
    finally:
        for obj in owned:
            obj.close()
    effects = _effects(spec, means, draws, infl, counts, sums.n_clipped, level_, learners[0], len(sub), pair_n, notes)
    decision, decided_by = _decision_rule(scan, spec.threshold)
    groups = _group_table(scan, spec, decision, level_)
    parity = _parity(scan, spec, decision, level_)
    rows = _rows(effects, infl, parity, spec, decided_by, level_, alpha, counts)
    settings = {
        "n_folds": spec.n_folds,
        "folds": "hash of the key" if key is not None else "hash of the row's content",
        "key": key,
        "nuisance_rows": spec.nuisance_rows,
        "nuisance_rows_used": len(sub),
        "nuisance_fit": "all rows of the other folds"
        if len(sub) == pair_n
        else f"a hash-selected subsample of {len(sub)} of {pair_n} rows",
        "n_boot": spec.n_boot,
        "multipliers": "Rademacher, from (row hash, replicate, seed); replicate weights 1 + g",
        "interval": "percentile bootstrap" if spec.n_boot >= 2 else "normal, influence-function SE",
        "seed": spec.seed,
        "learner": _learner_name(learners[0]),
        "propensity_learner": _learner_name(learners[1]),
        "clip": spec.clip,
        "threshold": spec.threshold,
        "decisions": decided_by,
        "n_partitions": n_parts,
        "split_every": split_every,
        "memory_per_task": f"one partition with its predictions, plus {CHUNK_ROWS} x n_boot bootstrap multipliers "
        f"({CHUNK_ROWS * max(spec.n_boot, 1) * 8 / 2**20:.0f} MiB); the client holds the subsample",
    }
    provenance = _provenance(scan, spec, sfm, predict, y1, data)
    timing["wall_seconds"] = round(time.perf_counter() - t0, 2)
    log(f"done in {timing['wall_seconds']} s")
    return DistributedAudit(rows, groups, effects, parity, alpha, level_, settings, provenance, timing, notes)


class _Log:
    """A line per stage on standard error (when ``progress``), and the seconds since the last lap."""

    def __init__(self, on: bool, t0: float) -> None:
        self.on, self.t0, self.last = on, t0, t0

    def __call__(self, msg: str) -> None:
        if self.on:
            print(f"audit_distributed [{time.perf_counter() - self.t0:6.1f} s]: {msg}", file=sys.stderr, flush=True)

    def lap(self) -> float:
        now = time.perf_counter()
        out, self.last = round(now - self.last, 2), now
        return out


def _checked(
    predict: Any,
    data: Any,
    sfm: Any,
    key: Any,
    n_folds: Any,
    nuisance_rows: Any,
    n_boot: Any,
    alpha: Any,
    level: Any,
    seed: Any,
    learner: Any,
    y1: Any,
    threshold: Any,
    clip: Any,
    split_every: Any,
) -> tuple[PartitionSpec, Callable[[pd.DataFrame], Any], float, tuple[Any, Any]]:
    """Every argument checked (one line naming it), and the partition spec, the model and the learners they give."""
    import dask.dataframe as dd

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
    f = predictor(predict, data._meta, [sfm.x, *sfm.z, *sfm.w])
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
    )
    return spec, f, level_, learners


def _numeric(dtype: Any) -> bool:
    """Numbers and booleans (used as they are); strings and categories are one-hot encoded."""
    return bool(pd.api.types.is_numeric_dtype(dtype)) and not isinstance(dtype, pd.CategoricalDtype)


def _learner_seed(seed: int) -> int:
    return int(seed) % (2**31 - 1)


def _learner_name(spec: Any) -> str:
    return spec if isinstance(spec, str) else type(spec).__name__


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


def _estimates(sums: SumsPart, spec: PartitionSpec) -> tuple[np.ndarray, np.ndarray | None, tuple[float, float]]:
    """Each outcome's means ``A, B, Ybar0, Ybar1`` ``(n_out, 4)``, the bootstrap replicates of the four measures
    ``(n_out, n_boot, 4)`` and the group sizes, from the exact sums."""
    s = exact_value(sums.sums)
    n0, n1 = float(s[0]), float(s[1])
    n_out = len(spec.outcomes)
    means = np.array(
        [[s[2 + 4 * j] / n0, s[3 + 4 * j] / n0, s[4 + 4 * j] / n0, s[5 + 4 * j] / n1] for j in range(n_out)]
    )
    draws = None
    if sums.boot is not None:
        rep = exact_value(add_sums(sums.boot, sums.sums[None, :]))  # weights 1 + g: plain sums plus multiplier sums
        out = []
        for j in range(n_out):
            c = 2 + 4 * j
            A, B = rep[:, c] / rep[:, 0], rep[:, c + 1] / rep[:, 0]
            Y0, Y1 = rep[:, c + 2] / rep[:, 0], rep[:, c + 3] / rep[:, 1]
            out.append(np.column_stack([Y1 - Y0, A - Y0, A - B, B - Y1]))
        draws = np.stack(out)
    return means, draws, (n0, n1)


def _effects(
    spec: PartitionSpec,
    means: np.ndarray,
    draws: np.ndarray | None,
    infl: InfluencePart,
    counts: tuple[float, float],
    n_clipped: int,
    level: float,
    learner: Any,
    n_sub: int,
    n_pair: int,
    notes: tuple[str, ...],
) -> dict[str, EffectEstimates]:
    """One :class:`EffectEstimates` per outcome: estimates, influence-function SEs, intervals, replicates."""
    n = counts[0] + counts[1]
    s1, s2 = exact_value(infl.sums), exact_value(infl.squares)
    zq = float(stats.norm.ppf(0.5 + level / 2))
    percentile = spec.n_boot >= 2 and draws is not None
    fit = "all rows" if n_sub == n_pair else f"a {n_sub}-row subsample"
    method = (
        f"cross-fitted AIPW ({_learner_name(learner)}, {spec.n_folds} hash folds, nuisances on {fit}), "
        f"{'percentile (Rademacher multiplier bootstrap)' if percentile else 'normal'} {level:.0%} CI"
    )
    out = {}
    for j, name in enumerate(spec.outcomes):
        A, B, Y0, Y1 = means[j]
        est = {"TV": Y1 - Y0, "DE": A - Y0, "IE": A - B, "SE": B - Y1}
        se, cis, pv = {}, {}, {}
        for i, m in enumerate(MEASURES):
            c = 4 * j + i
            var = max((s2[c] - s1[c] * s1[c] / n) / (n - 1), 0.0)
            se[m] = float(math.sqrt(var / n))
            if percentile:
                assert draws is not None
                lo, hi = np.quantile(draws[j][:, i], [(1 - level) / 2, (1 + level) / 2])
                how = f"{100 * level:g}% percentile bootstrap"
            else:
                lo, hi = est[m] - zq * se[m], est[m] + zq * se[m]
                how = f"{100 * level:g}% normal, influence-function SE"
            cis[m] = Interval.of((float(lo), float(hi)), estimate=float(est[m]), method=how)
            pv[m] = float(2 * stats.norm.sf(abs(est[m]) / se[m])) if se[m] > 0 else (0.0 if est[m] != 0 else 1.0)
        out[name] = EffectEstimates(
            outcome=name,
            estimate={k: float(v) for k, v in est.items()},
            se=se,
            pvalue=pv,
            ci=cis,
            level=level,
            draws=None if draws is None else draws[j],
            influence=np.zeros((0, len(MEASURES))),
            n0=int(counts[0]),
            n1=int(counts[1]),
            n_clipped=n_clipped,
            components={"A": float(A), "B": float(B), "Ybar0": float(Y0), "Ybar1": float(Y1)},
            method=method,
            warnings=notes,
        )
    return out


def _decision_rule(scan: ScanPart, threshold: float) -> tuple[str | None, str]:
    """Which decisions the predictions give (as :func:`cflib.audit.inputs.decisions`): labels, a threshold, or none."""
    if scan.yhat_labels:
        return "lab", "the predictions (0/1 labels)"
    if scan.yhat_min >= 0.0 and scan.yhat_max <= 1.0:
        return "thr", f"score >= {threshold}"
    return None, "none (predictions outside [0, 1] are neither labels nor probabilities)"


def _group_table(scan: ScanPart, spec: PartitionSpec, decision: str | None, level: float) -> pd.DataFrame:
    """The group table of :func:`cflib.stats.rates.group_rates` from the reduced counts (same columns and notes)."""
    binary_y = spec.y is not None and scan.y_binary
    no_outcome = "no outcome column" if spec.y is None else "the outcome is not 0/1: name its positive label with y1="
    no_decision = "predictions outside [0, 1] are not decisions"
    rows = {}
    for label in sorted(scan.groups, key=str):
        c = dict(zip(GROUP_COUNTS, (int(v) for v in scan.groups[label]), strict=True))
        n, ny = c["n"], c["y1"]
        sel, tp, fp = (c[f"{k}_{decision}"] for k in ("sel", "tp", "fp")) if decision else (0, 0, 0)
        kn: dict[str, tuple[int, int] | None] = {
            "base_rate": (ny, n) if binary_y else None,
            "selection_rate": (sel, n) if decision else None,
            "tpr": (tp, ny) if decision and binary_y else None,
            "fpr": (fp, n - ny) if decision and binary_y else None,
            "ppv": (tp, sel) if decision and binary_y else None,
        }
        row: dict[str, Any] = {"n": n}
        notes = []
        for rate, pair in kn.items():
            if pair is None:
                k, m, why = 0, 0, (no_outcome if not binary_y else no_decision)
            else:
                k, m = pair
                why = f"no {RATES[rate][1].removeprefix('units with ')}" if m == 0 else ""
            lo, hi = wilson_interval(k, m, level)
            row.update(
                {rate: k / m if m else math.nan, f"{rate}_low": lo, f"{rate}_high": hi, f"{rate}_k": k, f"{rate}_n": m}
            )
            if why:
                notes.append(f"{rate}: not estimable ({why})")
        row["note"] = "; ".join(dict.fromkeys(notes))
        rows[str(label)] = row
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group"
    return out


def _parity(
    scan: ScanPart, spec: PartitionSpec, decision: str | None, level: float
) -> dict[str, RateDifference | None]:
    """DP, EO and the FPR difference (``x1`` minus ``x0``) with Newcombe intervals from the reduced counts."""
    g0 = dict(zip(GROUP_COUNTS, (int(v) for v in scan.groups[str(spec.x0)]), strict=True))
    g1 = dict(zip(GROUP_COUNTS, (int(v) for v in scan.groups[str(spec.x1)]), strict=True))
    out: dict[str, RateDifference | None] = {"DP": None}
    if decision is None:
        return {"DP": None, "EO": None, "FPR difference": None} if spec.y is not None else out
    out["DP"] = newcombe_difference(g0[f"sel_{decision}"], g0["n"], g1[f"sel_{decision}"], g1["n"], level)
    if spec.y is not None:
        binary = scan.y_binary
        out["EO"] = (
            newcombe_difference(g0[f"tp_{decision}"], g0["y1"], g1[f"tp_{decision}"], g1["y1"], level)
            if binary
            else None
        )
        out["FPR difference"] = (
            newcombe_difference(
                g0[f"fp_{decision}"], g0["n"] - g0["y1"], g1[f"fp_{decision}"], g1["n"] - g1["y1"], level
            )
            if binary
            else None
        )
    return out


def _verdict(lo: float, hi: float, what: str) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "not estimable"
    return f"{what} (interval excludes 0)" if lo > 0 or hi < 0 else "no evidence (interval covers 0)"


def _rows(
    effects: dict[str, EffectEstimates],
    infl: InfluencePart,
    parity: dict[str, RateDifference | None],
    spec: PartitionSpec,
    decided_by: str,
    level: float,
    alpha: float,
    counts: tuple[float, float],
) -> pd.DataFrame:
    """The report's rows: the effects of the prediction and of the outcome, the white-box Ctf-DE, DP, EO, FPR."""
    rows: dict[str, dict[str, Any]] = {}
    for out, suffix in (("_y_hat", ""), (spec.y, " (y)")):
        if out is None or out not in effects:
            continue
        e = effects[out]
        for m in MEASURES:
            lo, hi = e.ci[m]
            rows[EFFECT_NAMES[m] + suffix] = {
                "estimate": e.estimate[m],
                "se": e.se[m],
                "ci_low": lo,
                "ci_high": hi,
                "pvalue": e.pvalue[m],
                "verdict": _verdict(lo, hi, "effect" if m != "TV" else "disparity"),
                "method": e.method,
                "reference": "parity-decomposition, Def. 3 and Props. 3-4",
                "flagged": bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0)),
            }
        if out == "_y_hat" and infl.whitebox is not None:
            rows["Ctf-DE (white-box)"] = _whitebox_row(infl, spec, level, counts[0])
    for name, d in parity.items():
        rows[name] = _parity_row(name, d, spec, decided_by, level, alpha)
    table = pd.DataFrame.from_dict(rows, orient="index")[[COLUMNS[0], "se", *COLUMNS[1:], "flagged"]]
    table.index.name = "check"
    return table


def _whitebox_row(infl: InfluencePart, spec: PartitionSpec, level: float, n0: float) -> dict[str, Any]:
    """Ctf-DE from the model itself: mean over the ``x0`` rows of ``f(x1, z, w) - f(x0, z, w)``, normal interval."""
    s, q = exact_value(infl.whitebox)
    mean = s / n0
    se = math.sqrt(max((q - s * s / n0) / (n0 - 1), 0.0) / n0) if n0 > 1 else math.nan
    zq = float(stats.norm.ppf(0.5 + level / 2))
    lo, hi = mean - zq * se, mean + zq * se
    exact_zero = q == 0.0
    return {
        "estimate": mean,
        "se": se,
        "ci_low": lo,
        "ci_high": hi,
        "pvalue": math.nan,
        "verdict": "no direct effect: the prediction does not change with x on any unit"
        if exact_zero
        else _verdict(lo, hi, "effect"),
        "method": f"the model evaluated at x = {spec.x1!r} on the {int(n0)} units with x = {spec.x0!r}, normal interval",
        "reference": "parity-decomposition, notes Sec. 2.10 (white-box Ctf-DE)",
        "flagged": not exact_zero and bool(np.isfinite(lo) and (lo > 0 or hi < 0)),
    }


def _parity_row(
    name: str, d: RateDifference | None, spec: PartitionSpec, decided_by: str, level: float, alpha: float
) -> dict[str, Any]:
    """A DP/EO/FPR row: the difference ``x1 - x0`` of decision rates, Newcombe's interval, the p-value inverting it."""
    what = {
        "DP": ("demographic parity", "selection rates", "invariance-test, eq. 5"),
        "EO": ("equal opportunity", "true-positive rates, units with y = 1", "invariance-test, eq. 6"),
        "FPR difference": ("false-positive rate", "false-positive rates, units with y = 0", "invariance-test, eq. 6"),
    }[name]
    method = (
        f"{what[0]}: difference of decisions ({decided_by}) between {spec.x1!r} and {spec.x0!r}, "
        f"Newcombe hybrid score {level:.4g} interval and the p-value that inverts it"
    )
    if d is None or d.reason.startswith("not estimable"):
        if d is not None:
            why = f"{d.reason} ({what[1]})"
        elif decided_by.startswith("none"):
            why = "not estimable: the predictions are not decisions (outside [0, 1])"
        else:
            why = "not estimable: the outcome is not 0/1 (name its positive label with y1=)"
        return {
            "estimate": math.nan,
            "se": math.nan,
            "ci_low": math.nan,
            "ci_high": math.nan,
            "pvalue": math.nan,
            "verdict": why,
            "method": method,
            "reference": what[2],
            "flagged": False,
        }
    flagged = bool(d.pvalue <= alpha)
    return {
        "estimate": d.difference,
        "se": math.nan,
        "ci_low": d.ci[0],
        "ci_high": d.ci[1],
        "pvalue": d.pvalue,
        "verdict": "violated" if flagged else "no evidence of a violation",
        "method": method,
        "reference": what[2],
        "flagged": flagged,
    }


def _provenance(
    scan: ScanPart, spec: PartitionSpec, sfm: StandardFairnessModel, predict: Any, y1: Any, data: Any
) -> dict[str, Any]:
    """Rows, group counts, roles, the model, versions and a fingerprint of the rows that ignores their order."""
    return {
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
            "y1": plain(y1),
            "key": spec.key,
        },
        "columns": list(spec.columns),
        "model": model_hash(predict),
        "model_type": model_type(predict),
        "cflib_version": cflib_version(),
        "environment": environment(),
        "data": f"dask DataFrame, {data.npartitions} partitions",
        "sfm": repr(sfm),
    }
