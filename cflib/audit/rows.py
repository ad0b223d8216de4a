"""The rows of an audit report, built in one place for the tabular, image and distributed audits.

Each row is built from its test's result object (an :class:`~cflib.fairness.effects.EffectEstimates` and one of its
measures, a :class:`~cflib.stats.rates.RateDifference`, an :class:`~cflib.stats.counterfactual_accuracy.ECAResult`,
a :class:`~cflib.stats.invariance.CITResult`, ...): :func:`check_row` reads the result's estimate, interval and
p-value, writes the verdict in words, and asks the result for its decision against the check's tolerance
(:func:`cflib.audit.status.row_status`: ``flagged``, ``clear``, ``inconclusive`` or ``not estimable``). No row
decides "flagged" by itself.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..fairness.effects import MEASURES, EffectEstimates
from .checks import EFFECT_NAMES
from .status import row_status

__all__ = [
    "Finding",
    "check_row",
    "cit_row",
    "difference_row",
    "eca_rule",
    "eca_row",
    "effect_rows",
    "interval_verdict",
    "whitebox_row",
]

#: The book page of the effects' rows.
EFFECT_REFERENCE = "parity-decomposition, Def. 3 and Props. 3-4"
#: The book page of the white-box Ctf-DE row.
WHITEBOX_REFERENCE = "parity-decomposition, notes Sec. 2.10 (white-box Ctf-DE)"
_NO_DIRECT = "no direct effect: the prediction does not change with x on any unit"


@dataclass(frozen=True)
class Finding:
    """What a test's result says, in the report's columns: the estimate, its interval, its p-value and its verdict.

    Attributes
    ----------
    estimate, ci_low, ci_high, pvalue : float
        NaN where the test has none.
    verdict : str
        In words; starts with ``"not estimable"`` when the test could not be computed.
    se : float
        The standard error where the test has one (distributed audits report it), else NaN.
    """

    estimate: float
    ci_low: float
    ci_high: float
    pvalue: float
    verdict: str
    se: float = math.nan

    @classmethod
    def missing(cls, why: str) -> Finding:
        """A test that could not be computed, with the reason (``why`` starts with ``not estimable``)."""
        return cls(math.nan, math.nan, math.nan, math.nan, why)

    def decide(
        self, name: str, alpha: float, tolerances: Mapping[str, float], n: float | None = None
    ) -> dict[str, Any]:
        """The result's decision against the check's tolerance: the status columns of :func:`row_status`.

        Parameters
        ----------
        name : str
            The check's name (its tolerance is looked up by its base name).
        alpha : float
            Level of the test.
        tolerances : mapping of str to float
        n : float, optional
            Units behind the result, for ``n_to_decide``.

        Returns
        -------
        dict
            ``status``, ``tolerance``, ``n_to_decide``, ``status_reason``.
        """
        return row_status(name, self.columns(), alpha, tolerances, n)

    def columns(self) -> dict[str, Any]:
        """The row's numeric columns and verdict.

        Returns
        -------
        dict
        """
        return {
            "estimate": self.estimate,
            "se": self.se,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "pvalue": self.pvalue,
            "verdict": self.verdict,
        }


def interval_verdict(lo: float, hi: float, excludes: str, covers: str = "no evidence (interval covers 0)") -> str:
    """The verdict of an interval against 0: ``excludes`` when it lies on one side, ``covers`` when it holds 0.

    Parameters
    ----------
    lo, hi : float
        The interval (not finite: ``"not estimable"``).
    excludes, covers : str
        The two verdicts.

    Returns
    -------
    str
    """
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "not estimable"
    return excludes if lo > 0 or hi < 0 else covers


def check_row(
    name: str,
    finding: Finding,
    *,
    method: str,
    reference: str,
    alpha: float | None = None,
    tolerances: Mapping[str, float] | None = None,
    n: float | None = None,
) -> dict[str, Any]:
    """One row of the report from its test's finding: its columns, and with ``tolerances`` its decision.

    Parameters
    ----------
    name : str
        The check's name.
    finding : Finding
        What the test's result says.
    method, reference : str
        How it was computed and the page of the book that explains it.
    alpha : float, optional
        Level of the test (with ``tolerances``).
    tolerances : mapping of str to float, optional
        Without them the row has no status yet (:func:`cflib.audit.status.add_status` asks each row later).
    n : float, optional
        Units behind the row.

    Returns
    -------
    dict
        ``estimate, se, ci_low, ci_high, pvalue, verdict, method, reference`` (and the status columns and
        ``flagged`` with ``tolerances``).
    """
    row = {**finding.columns(), "method": method, "reference": reference}
    if tolerances is not None:
        assert alpha is not None, "check_row: a decision needs the level alpha"
        row.update(finding.decide(name, alpha, tolerances, n))
        row["flagged"] = row["status"] == "flagged"
    return row


def effect_rows(
    effects: Mapping[str, EffectEstimates], outcomes: Mapping[str, str], whitebox: Finding | None, method: str = ""
) -> dict[str, dict[str, Any]]:
    """TV and Ctf-DE/IE/SE of each outcome (the prediction's and the true outcome's), and the white-box Ctf-DE.

    Parameters
    ----------
    effects : mapping of str to EffectEstimates
        Keyed by outcome column.
    outcomes : mapping of str to str
        Outcome column -> the suffix of its rows (``{"_y_hat": "", "y": " (y)"}``); outcomes missing from
        ``effects`` are left out.
    whitebox : Finding, optional
        The white-box Ctf-DE (:func:`whitebox_row`), placed after the prediction's effects.
    method : str
        The white-box row's method.

    Returns
    -------
    dict
        Check name -> row (:func:`check_row`).
    """
    rows: dict[str, dict[str, Any]] = {}
    for out, suffix in outcomes.items():
        if out not in effects:
            continue
        e = effects[out]
        for m in MEASURES:
            lo, hi = e.ci[m]
            what = "effect (interval excludes 0)" if m != "TV" else "disparity (interval excludes 0)"
            found = Finding(e.estimate[m], lo, hi, e.pvalue[m], interval_verdict(lo, hi, what), se=e.se[m])
            rows[EFFECT_NAMES[m] + suffix] = check_row(
                EFFECT_NAMES[m] + suffix, found, method=e.method, reference=EFFECT_REFERENCE
            )
        if suffix == "" and whitebox is not None:
            rows["Ctf-DE (white-box)"] = check_row(
                "Ctf-DE (white-box)", whitebox, method=method, reference=WHITEBOX_REFERENCE
            )
    return rows


def whitebox_row(mean: float, se: float, lo: float, hi: float, exact_zero: bool) -> Finding:
    """The white-box Ctf-DE's finding: the mean of ``f(x1, z, w) - f(x0, z, w)`` over the ``x0`` units.

    Parameters
    ----------
    mean, se : float
        The mean difference and its standard error.
    lo, hi : float
        Its interval.
    exact_zero : bool
        Whether the prediction does not change with ``x`` on any unit.

    Returns
    -------
    Finding
    """
    verdict = _NO_DIRECT if exact_zero else interval_verdict(lo, hi, "effect (interval excludes 0)")
    return Finding(mean, lo, hi, math.nan, verdict, se=se)


def difference_row(d: Any, what: str, alpha: float, missing: str = "") -> Finding:
    """A DP/EO/FPR finding: the difference ``x1 - x0`` of a :class:`~cflib.stats.rates.RateDifference`.

    Parameters
    ----------
    d : RateDifference or None
        The test's result (``None``: not computed, ``missing`` says why).
    what : str
        The rates compared (``"selection rates"``), for a difference that is not estimable.
    alpha : float
        Level of the test: the verdict is the result's rejection at ``p < alpha``.
    missing : str
        Why the difference was not computed (the row's verdict is ``"not estimable: <missing>"``).

    Returns
    -------
    Finding
    """
    if d is None:
        return Finding.missing(missing if missing.startswith("not estimable") else f"not estimable: {missing}")
    if d.reason.startswith("not estimable"):
        return Finding.missing(f"{d.reason} ({what})")
    # the interval at level 1 - alpha excludes 0 exactly when p < alpha (RateDifference inverts its interval)
    verdict = (
        "differs from 0 (interval excludes 0)"
        if d.pvalue < alpha
        else "no evidence of a difference (interval covers 0)"
    )
    return Finding(d.difference, d.ci[0], d.ci[1], d.pvalue, verdict)


def eca_rule(binary: bool, low: float, high: float, decided_by: str) -> tuple[bool, float, float]:
    """How ECA compares a unit's two predictions: as decisions at a threshold, or as they are.

    A score in [0, 1] is a probability: ECA compares the decisions it leads to (at the threshold), since almost every
    continuous score moves a little under any intervention.

    Parameters
    ----------
    binary : bool
        Whether every factual and counterfactual prediction is 0 or 1.
    low, high : float
        The range of both.
    decided_by : str
        The audit's decision rule in words (``"score >= 0.5"``).

    Returns
    -------
    (bool, float, float)
        Whether to compare decisions, the threshold, and the tolerance of equality (0 for labels and decisions,
        ``1e-9`` for other scores).
    """
    decide = not binary and low >= 0.0 and high <= 1.0
    thr = float(decided_by.split(">= ")[1]) if decided_by.startswith("score >= ") else 0.5
    return decide, thr, 0.0 if (binary or decide) else 1e-9


def eca_row(eca: Any, decide: bool, thr: float, how: str = "") -> dict[str, Any]:
    """The ``ECA`` row from an :class:`~cflib.stats.counterfactual_accuracy.ECAResult`.

    Parameters
    ----------
    eca : ECAResult
    decide : bool
        Whether the predictions were compared as decisions at ``thr`` (:func:`eca_rule`).
    thr : float
    how : str
        Added to the method (how the counts were made).

    Returns
    -------
    dict
    """
    what = f"decisions (score >= {thr})" if decide else "predictions"
    verdict = "invariant on every unit" if eca.eca == 1.0 else f"{eca.flip_rate:.1%} of {what} change under do(x)"
    found = Finding(eca.eca, eca.ci[0], eca.ci[1], math.nan, verdict)
    method = f"share of {what} unchanged by do(x = other level), Wilson interval{how}"
    return check_row("ECA", found, method=method, reference="invariance-test, eqs. 7-8")


def cit_row(cit: Any, z: Any, alpha: float, how: str = "") -> dict[str, Any]:
    """The ``CIT-LR`` row from a :class:`~cflib.stats.invariance.CITResult`: its statistic and p-value.

    Parameters
    ----------
    cit : CITResult
    z : list of str
        The adjustment set.
    alpha : float
        Level of the test (the verdict).
    how : str
        Added to the method (which rows it ran on).

    Returns
    -------
    dict
    """
    verdict = "not counterfactually invariant" if cit.pvalue < alpha else "no evidence against invariance"
    found = Finding(cit.statistic, math.nan, math.nan, cit.pvalue, verdict)
    return check_row("CIT-LR", found, method=f"CIT-LR given {z}{how}", reference="invariance-test, Alg. 1")


def rows_table(rows: Mapping[str, Mapping[str, Any]], columns: list[str]) -> pd.DataFrame:
    """The report's rows as a table indexed by ``check``, with ``columns`` in order.

    Parameters
    ----------
    rows : mapping of str to mapping
    columns : list of str

    Returns
    -------
    pandas.DataFrame
    """
    table = pd.DataFrame.from_dict(dict(rows), orient="index")[columns]
    table.index.name = "check"
    return table
