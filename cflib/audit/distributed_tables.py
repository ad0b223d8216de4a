"""The results of the distributed audit: :class:`DistributedAudit` and the tables it holds, from reduced sums.

Issue 30. From the exact sums of :mod:`cflib.audit.partitions`: the means and bootstrap replicates of the doubly
robust effects (Plecko & Bareinboim, arXiv 2306.05059, Def. 3 and Props. 3-4; :func:`estimates_from_sums`), their
influence-function standard errors and intervals (:func:`effect_estimates`), the group table of
:func:`cflib.stats.rates.group_rates` from reduced counts (:func:`group_table`), the DP/EO/FPR differences with
Newcombe intervals (Ma et al., eqs. 5-6; :func:`parity_differences`), and the report's rows (:func:`audit_rows`).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..fairness.effects import MEASURES, EffectEstimates
from ..results import Interval
from ..stats.rates import RATES, RateDifference, newcombe_difference, wilson_interval
from .checks import COLUMNS, EFFECT_NAMES
from .partitions import GROUP_COUNTS, InfluencePart, PartitionSpec, ScanPart, SumsPart
from .provenance import plain
from .reproducible import add_sums, exact_value
from .status import gate_checks, statuses

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


@dataclass(frozen=True)
class DistributedAudit:
    """The outcome of :func:`audit_distributed`.

    Attributes
    ----------
    rows : pandas.DataFrame
        One row per check, indexed by name as in :class:`cflib.audit.AuditReport` (``"TV"``, ``"Ctf-DE"``,
        ``"Ctf-IE"``, ``"Ctf-SE"``, ``"Ctf-DE (white-box)"``, the outcome's ``"... (y)"`` rows, ``"DP"``,
        ``"EO"``, ``"FPR difference"``), columns ``estimate, se, ci_low, ci_high, pvalue, verdict, method,
        reference, flagged`` and the status columns (:func:`cflib.audit.status.add_status`: ``status``, ``tolerance``,
        ``n_to_decide``, ``status_reason``; ``flagged`` is ``status == "flagged"``).
    groups : pandas.DataFrame
        Per level of the attribute: ``n`` and the base rate, selection rate, TPR, FPR and PPV with Wilson
        intervals (the columns of :func:`cflib.stats.rates.group_rates`), from reduced counts.
    effects : dict of str to EffectEstimates
        ``"_y_hat"`` (the prediction) and the outcome's column: estimates, influence-function standard errors,
        intervals and bootstrap replicates (``influence`` is empty: the per-row values stay on the workers).
    parity : dict of str to RateDifference or None
        ``"DP"``, ``"EO"``, ``"FPR difference"`` (``None`` where not estimable).
    alpha : float
        Level of the tests; a check's status is decided on its interval against its tolerance.
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
        """The checks, one row each: estimate, standard error, interval, p-value, verdict and status.

        Returns
        -------
        pandas.DataFrame
            Indexed by check name.
        """
        out = self.rows[["estimate", "se", "ci_low", "ci_high", "pvalue", "verdict"]].copy()
        out["status"] = self.status()
        return out

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

    def to_json(self, path: str | os.PathLike[str]) -> Path:
        """Write :meth:`to_dict` as JSON (atomically, sorted keys): what ``cflib audit`` writes for Parquet data.

        Parameters
        ----------
        path : path-like

        Returns
        -------
        pathlib.Path
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")
        os.replace(tmp, path)
        return path

    def status(self) -> pd.Series:
        """The status of each check against its tolerance (``flagged``, ``clear``, ``inconclusive``, ``not estimable``).

        Returns
        -------
        pandas.Series of str
        """
        return statuses(self.rows)

    def gate(
        self, fail_on: str | Sequence[str] | None = None, require_clear: str | Sequence[str] | None = None
    ) -> list[str]:
        """The checks the gate fails on, as :meth:`cflib.audit.AuditReport.gate`: named in ``fail_on`` and flagged or
        not estimable, or named in ``require_clear`` and not clear.

        Parameters
        ----------
        fail_on, require_clear : str or sequence of str, optional
            Check names as in :attr:`rows`, comma-separated in one string or as a list; ``"any"`` selects every
            check, ``"model"`` every check of the predictions (:func:`cflib.audit.select_checks`).

        Returns
        -------
        list of str
            The failing checks among those selected, in the order of :attr:`rows` (empty: the gate passes).

        Raises
        ------
        ValueError
            An empty name, or a name that selects no check of this result.
        """
        return gate_checks(self.rows, fail_on, require_clear)


def _json(v: Any) -> Any:
    if isinstance(v, dict):
        return {str(k): _json(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_json(x) for x in v]
    return plain(v)


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


def _verdict(lo: float, hi: float, what: str) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "not estimable"
    return f"{what} (interval excludes 0)" if lo > 0 or hi < 0 else "no evidence (interval covers 0)"


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
    flagged = bool(d.pvalue < alpha)
    return {
        "estimate": d.difference,
        "se": math.nan,
        "ci_low": d.ci[0],
        "ci_high": d.ci[1],
        "pvalue": d.pvalue,
        "verdict": "differs from 0 (interval excludes 0)"
        if flagged
        else "no evidence of a difference (interval covers 0)",
        "method": method,
        "reference": what[2],
        "flagged": flagged,
    }
