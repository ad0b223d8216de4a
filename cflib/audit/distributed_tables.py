"""The results of the distributed audit: :class:`DistributedAudit` and the tables it holds, from reduced sums.

Issue 30. From the exact sums of :mod:`cflib.audit.partitions`: the means and bootstrap replicates of the doubly
robust effects (Plecko & Bareinboim, arXiv 2306.05059, Def. 3 and Props. 3-4; :func:`estimates_from_sums`), their
influence-function standard errors and intervals (:func:`effect_estimates`), the group table of
:func:`cflib.stats.rates.group_rates` from reduced counts (:func:`group_table`), the DP/EO/FPR differences with
Newcombe intervals (Ma et al., eqs. 5-6; :func:`parity_differences`), and the report's rows (:func:`audit_rows`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..fairness.effects import MEASURES, EffectEstimates
from ..results import Interval
from ..stats.rates import RateDifference, newcombe_difference
from .checks import COLUMNS
from .intersections import counts_table
from .partitions import GROUP_COUNTS, InfluencePart, PartitionSpec, ScanPart, SumsPart
from .report import AuditReport
from .reproducible import add_sums, exact_value
from .rows import Finding, check_row, difference_row, effect_rows, rows_table, whitebox_row

__all__ = [
    "DistributedAudit",
    "audit_rows",
    "decision_rule",
    "effect_estimates",
    "estimates_from_sums",
    "group_table",
    "learner_name",
    "parity_differences",
]


#: Deprecated: the distributed audit returns an :class:`~cflib.audit.AuditReport` (issue 37); the old name stays an
#: alias of it. Its effects, parity differences, settings and interval level are in ``report.details``.
DistributedAudit = AuditReport


def learner_name(spec: Any) -> str:
    """A learner's name as the report writes it: the name given, or the estimator's class.

    Parameters
    ----------
    spec : str or estimator

    Returns
    -------
    str
    """
    return spec if isinstance(spec, str) else type(spec).__name__


def estimates_from_sums(
    sums: SumsPart, spec: PartitionSpec
) -> tuple[np.ndarray, np.ndarray | None, tuple[float, float]]:
    """The means behind the effects and their bootstrap replicates, from pass 2's exact sums.

    ``A``, ``B`` and ``Ybar0`` are sums over the ``x0`` count, ``Ybar1`` over the ``x1`` count (the estimator of
    :func:`cflib.fairness.effects.ctf_effects`). Replicate ``b`` weighs each row by ``1 + g[i, b]``: its sums are the
    plain sums plus the multiplier sums, added exactly before the one rounding.

    Parameters
    ----------
    sums : SumsPart
        The reduced sums of :func:`cflib.audit.partitions.sums_partition`.
    spec : PartitionSpec

    Returns
    -------
    means : numpy.ndarray
        ``(n_out, 4)``: each outcome's ``A, B, Ybar0, Ybar1``.
    draws : numpy.ndarray or None
        ``(n_out, n_boot, 4)`` replicates of TV, DE, IE, SE (``None`` without replicates).
    counts : (float, float)
        Rows with ``x0`` and with ``x1``.
    """
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


def effect_estimates(
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
    """One :class:`~cflib.fairness.effects.EffectEstimates` per outcome, from the reduced sums.

    ``TV = Ybar1 - Ybar0``, ``DE = A - Ybar0``, ``IE = A - B``, ``SE = B - Ybar1``; the standard error of each is
    ``sd(phi) / sqrt(n)`` with ``sd`` from the exact sums of the influence values and their squares (pass 3);
    the interval is the bootstrap percentile interval from 2 replicates on (as in :func:`cflib.audit.audit`),
    else the normal one. The per-row influence values are not kept (``influence`` is empty).

    Parameters
    ----------
    spec : PartitionSpec
    means : numpy.ndarray
        ``(n_out, 4)`` from :func:`estimates_from_sums`.
    draws : numpy.ndarray or None
        ``(n_out, n_boot, 4)`` replicates.
    infl : InfluencePart
        Pass 3's sums.
    counts : (float, float)
        Rows with ``x0`` and ``x1``.
    n_clipped : int
        Propensities clipped.
    level : float
        Level of the intervals.
    learner : str or estimator
        The nuisance learner (for ``method``).
    n_sub, n_pair : int
        Rows the nuisances were fitted on, and rows compared.
    notes : tuple of str
        Warnings to record.

    Returns
    -------
    dict of str to EffectEstimates
        Keyed by ``spec.outcomes`` (``"_y_hat"`` and the outcome column).
    """
    n = counts[0] + counts[1]
    s1, s2 = exact_value(infl.sums), exact_value(infl.squares)
    zq = float(stats.norm.ppf(0.5 + level / 2))
    percentile = spec.n_boot >= 2 and draws is not None
    fit = "all rows" if n_sub == n_pair else f"a {n_sub}-row subsample"
    method = (
        f"cross-fitted AIPW ({learner_name(learner)}, {spec.n_folds} hash folds, nuisances on {fit}), "
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


def decision_rule(scan: ScanPart, threshold: float) -> tuple[str | None, str]:
    """Which decisions the predictions give (as :func:`cflib.audit.inputs.decisions`): labels, a threshold, or none.

    Parameters
    ----------
    scan : ScanPart
        The reduced scan (range of the predictions and whether they are all 0 or 1).
    threshold : float

    Returns
    -------
    (str or None, str)
        ``"lab"``, ``"thr"`` or ``None`` (the counts of :data:`cflib.audit.partitions.GROUP_COUNTS` to read), and
        the rule in words.
    """
    if scan.yhat_labels:
        return "lab", "the predictions (0/1 labels)"
    if scan.yhat_min >= 0.0 and scan.yhat_max <= 1.0:
        return "thr", f"score >= {threshold}"
    return None, "none (predictions outside [0, 1] are neither labels nor probabilities)"


def group_table(scan: ScanPart, spec: PartitionSpec, decision: str | None, level: float) -> pd.DataFrame:
    """The group table of :func:`cflib.stats.rates.group_rates` from the reduced counts (same columns and notes).

    Parameters
    ----------
    scan : ScanPart
    spec : PartitionSpec
    decision : {"lab", "thr"} or None
        From :func:`decision_rule`.
    level : float
        Level of the Wilson intervals.

    Returns
    -------
    pandas.DataFrame
        Indexed by group (as text): ``n`` and each rate of :data:`cflib.stats.rates.RATES` with its interval,
        numerator and denominator, and ``note``.
    """
    binary_y = spec.y is not None and scan.y_binary
    no_outcome = "no outcome column" if spec.y is None else "the outcome is not 0/1: name its positive label with y1="
    return counts_table(scan.groups, decision, binary_y, no_outcome, level)


def parity_differences(
    scan: ScanPart, spec: PartitionSpec, decision: str | None, level: float
) -> dict[str, RateDifference | None]:
    """DP, EO and the FPR difference (``x1`` minus ``x0``) with Newcombe intervals from the reduced counts.

    Parameters
    ----------
    scan : ScanPart
    spec : PartitionSpec
    decision : {"lab", "thr"} or None
        From :func:`decision_rule`; ``None`` leaves every difference not estimable.
    level : float

    Returns
    -------
    dict of str to RateDifference or None
        ``"DP"`` and, with an outcome, ``"EO"`` and ``"FPR difference"``; ``None`` where not estimable (no decisions,
        or an outcome that is not 0/1).
    """
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


def audit_rows(
    effects: dict[str, EffectEstimates],
    infl: InfluencePart,
    parity: dict[str, RateDifference | None],
    spec: PartitionSpec,
    decided_by: str,
    level: float,
    alpha: float,
    counts: tuple[float, float],
) -> pd.DataFrame:
    """The report's rows: the effects of the prediction and of the outcome, the white-box Ctf-DE, DP, EO, FPR.

    Parameters
    ----------
    effects : dict of str to EffectEstimates
        From :func:`effect_estimates`.
    infl : InfluencePart
        Pass 3's sums (with the white-box differences when the model was given).
    parity : dict of str to RateDifference or None
        From :func:`parity_differences`.
    spec : PartitionSpec
    decided_by : str
        The decision rule in words.
    level, alpha : float
        Level of the intervals, and of the tests (``pvalue < alpha``).
    counts : (float, float)
        Rows with ``x0`` and ``x1``.

    Returns
    -------
    pandas.DataFrame
        Indexed by check name, columns ``estimate, se, ci_low, ci_high, pvalue, verdict, method, reference, flagged``.
    """
    whitebox, how = None, ""
    if infl.whitebox is not None:
        whitebox = _whitebox_finding(infl, level, counts[0])
        how = f"the model evaluated at x = {spec.x1!r} on the {int(counts[0])} units with x = {spec.x0!r}, normal interval"
    outcomes = {"_y_hat": ""} if spec.y is None else {"_y_hat": "", spec.y: " (y)"}
    rows = effect_rows(effects, outcomes, whitebox, how)
    for name, d in parity.items():
        rows[name] = _parity_row(name, d, spec, decided_by, level, alpha)
    return rows_table(rows, [COLUMNS[0], "se", *COLUMNS[1:]])


def _whitebox_finding(infl: InfluencePart, level: float, n0: float) -> Finding:
    """Ctf-DE from the model itself: mean over the ``x0`` rows of ``f(x1, z, w) - f(x0, z, w)``, normal interval."""
    s, q = exact_value(infl.whitebox)
    mean = s / n0
    se = math.sqrt(max((q - s * s / n0) / (n0 - 1), 0.0) / n0) if n0 > 1 else math.nan
    zq = float(stats.norm.ppf(0.5 + level / 2))
    return whitebox_row(mean, se, mean - zq * se, mean + zq * se, q == 0.0)


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
    missing = (
        "the predictions are not decisions (outside [0, 1])"
        if decided_by.startswith("none")
        else "the outcome is not 0/1 (name its positive label with y1=)"
    )
    return check_row(name, difference_row(d, what[1], alpha, missing), method=method, reference=what[2])
