"""The status of every check of an audit against a stated tolerance: ``flagged``, ``clear``, ``inconclusive``, ``not estimable``.

One function, :func:`decide_status`, turns a check's interval and its tolerance into a status; :func:`add_status`
applies it to every row of a report (tabular, image and distributed audits alike). A check's tolerance is the
largest effect the auditor accepts (:data:`TOLERANCES`, with the source of each default in
:data:`TOLERANCE_SOURCES`); it defines an acceptable region of the checked quantity:

* ``flagged``: the interval lies wholly outside the region (the effect is beyond the tolerance);
* ``clear``: the interval lies wholly inside it (an equivalence decision: the effect is within the tolerance);
* ``inconclusive``: neither; the row's ``n_to_decide`` is the sample size at which an interval of the same
  shape around the observed estimate would decide (intervals narrowing as ``1 / sqrt(n)``);
* ``not estimable``: the check could not be computed (its verdict says why).

Both decisions read the report's ``1 - alpha`` interval, so each is a one-sided test at level ``alpha / 2``
(conservative; two one-sided tests at ``alpha`` would use the ``1 - 2 alpha`` interval). A check that has only a
p-value against exact invariance (CIT-LR, Algorithm 1's predictive parity, CF-CLOT at ``epsilon = 0``) can only
reject: it is ``flagged`` at ``p < alpha`` and ``inconclusive`` otherwise, never ``clear`` (not rejecting exact
invariance is no evidence that the effect is small), and its ``status_reason`` says so. The rows of the generator
gate take the gate's own decision (``pass`` is ``clear``, ``fail`` is ``flagged``: the generator has to be shown
good); rows that describe rather than test (the attribute reader's accuracy, accuracy per group) are
``descriptive`` and never gated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ..validation import check_overrides

__all__ = [
    "STATUSES",
    "STATUS_COLUMNS",
    "TOLERANCES",
    "TOLERANCE_SOURCES",
    "add_status",
    "base_check",
    "check_tolerances",
    "decide_status",
]

#: The four statuses of a check (and ``descriptive`` for rows that test nothing).
STATUSES = ("flagged", "clear", "inconclusive", "not estimable")

#: Columns :func:`add_status` adds to a report's rows.
STATUS_COLUMNS = ["status", "tolerance", "n_to_decide", "status_reason"]

_RATE = 0.1
#: Default tolerance of each check, on the scale of its estimate (see :data:`TOLERANCE_SOURCES`).
TOLERANCES: dict[str, float] = {
    "TV": _RATE,
    "Ctf-DE": _RATE,
    "Ctf-IE": _RATE,
    "Ctf-SE": _RATE,
    "Ctf-DE (white-box)": _RATE,
    "DP": _RATE,
    "EO": _RATE,
    "FPR difference": _RATE,
    "ECA": 0.02,
    "CF-CLOT": 0.1,
}
_FOUR_FIFTHS = (
    "the four-fifths rule (EEOC Uniform Guidelines, 29 CFR 1607.4(D)) read as a difference at a selection rate "
    "of 0.5: a rate of 0.4 against 0.5 is a ratio of 0.8, a gap of 0.1"
)
#: Where each default tolerance comes from.
TOLERANCE_SOURCES: dict[str, str] = {
    "TV": "|TV| <= 0.1 on the probability scale: " + _FOUR_FIFTHS,
    "Ctf-DE": "|effect| <= 0.1, the same scale as TV, of which it is a part (parity-decomposition)",
    "Ctf-IE": "|effect| <= 0.1, the same scale as TV, of which it is a part (parity-decomposition)",
    "Ctf-SE": "|effect| <= 0.1, the same scale as TV, of which it is a part (parity-decomposition)",
    "Ctf-DE (white-box)": "|effect| <= 0.1, as the doubly robust Ctf-DE",
    "DP": "|difference of selection rates| <= 0.1: " + _FOUR_FIFTHS,
    "EO": "|difference of true-positive rates| <= 0.1: " + _FOUR_FIFTHS,
    "FPR difference": "|difference of false-positive rates| <= 0.1: " + _FOUR_FIFTHS,
    "ECA": "ECA >= 0.98, at most 2% of decisions change under do(x) (the invariance chapter's reading of "
    "'nearly invariant'; tolerance 0.02 on the flip rate)",
    "CF-CLOT": "N-TE <= epsilon = 0.1, the closeness paper's (Fu et al.) experiments' tolerance. N-TE is on a "
    "squared scale: for 0/1 decisions a shift of the positive rate from 0 to p within one direction is an N-TE of "
    "p^2 / (1 + p (1 - p)) at most (cflib.stats.closeness.nte_bernoulli), so 0.1 tolerates a shift of about 0.35 "
    "and 0.02 one of about 0.15",
}

_INTERVAL = frozenset({"TV", "Ctf-DE", "Ctf-IE", "Ctf-SE", "Ctf-DE (white-box)", "DP", "EO", "FPR difference"})
_PVALUE_ONLY = {
    "CIT-LR": "CIT-LR tests exact counterfactual invariance (a p-value against no effect at all): it can reject, "
    "never show the effect small, so it is flagged or inconclusive. Its regression of the prediction on (x, z) is "
    "additive in x (one shift per level), so it sees the average effect of x given z: flips that go both ways "
    "(x raises some decisions and lowers others) cancel and it can pass them; ECA and CF-CLOT per direction see them",
    "PP (Algorithm 1)": "Algorithm 1 tests effects outside business necessity against exactly 0: it can reject, "
    "never show them small, so it is flagged or inconclusive",
    "CF-CLOT": "CF-CLOT without a normal interval (epsilon = 0, a resampling test) can reject closeness, not "
    "show it, so it is flagged or inconclusive",
}


def base_check(name: str) -> str:
    """The check a row belongs to: its name without a pair suffix ``[x1 vs x0]``, the outcome's ``(y)``, or a
    direction ``(x0 units)``.

    Parameters
    ----------
    name : str

    Returns
    -------
    str
    """
    base = str(name).split(" [", 1)[0]
    for suffix in (" (y)", " (x0 units)", " (x1 units)"):
        base = base.removesuffix(suffix)
    return base


def check_tolerances(tolerances: Any) -> dict[str, float]:
    """The tolerances of an audit: :data:`TOLERANCES` overridden by ``tolerances``, each checked.

    Parameters
    ----------
    tolerances : mapping of str to float, or None
        Check name (as in :data:`TOLERANCES`) -> tolerance ``>= 0`` on the check's scale (ECA's on the
        share of decisions that change, below 1).

    Returns
    -------
    dict of str to float

    Raises
    ------
    cflib.validation.ValidationTypeError
        ``tolerances`` is not a mapping.
    cflib.validation.ValidationError
        An unknown check or a tolerance out of range.
    """
    return check_overrides(
        tolerances,
        TOLERANCES,
        "tolerances",
        what="check",
        example="{'DP': 0.05, 'ECA': 0.02}",
        high={"ECA": 1.0, "CF-CLOT": 1.0},
        high_open=("ECA", "CF-CLOT"),
    )


def decide_status(
    estimate: float, low: float, high: float, region: tuple[float, float], n: float | None = None
) -> tuple[str, float]:
    """The status of a check from its interval and the acceptable region its tolerance defines.

    Parameters
    ----------
    estimate : float
        The point estimate (NaN: not estimable).
    low, high : float
        The interval (NaN: not estimable).
    region : (float, float)
        The acceptable values of the checked quantity: ``(-tol, tol)`` for a difference,
        ``(1 - tol, inf)`` for ECA, ``(-inf, epsilon)`` for N-TE.
    n : float, optional
        The sample size behind the interval, for ``n_to_decide``.

    Returns
    -------
    (str, float)
        The status (``flagged``, ``clear``, ``inconclusive``, ``not estimable``) and, when inconclusive, the
        sample size at which an interval of the same shape around ``estimate`` would decide (``inf`` when the
        estimate lies on the region's edge, NaN otherwise or without ``n``).
    """
    a, b = region
    if not (np.isfinite(estimate) and np.isfinite(low) and np.isfinite(high)):
        return "not estimable", math.nan
    if high < a or low > b:
        return "flagged", math.nan
    if a <= low and high <= b:
        return "clear", math.nan
    if n is None or not np.isfinite(n) or n <= 0:
        return "inconclusive", math.nan
    # the distance from the estimate to the region's edge (inside: to be cleared; outside: to be flagged),
    # against the half-width on the side that has to shrink
    inside = a <= estimate <= b
    dist = min(estimate - a, b - estimate) if inside else (a - estimate if estimate < a else estimate - b)
    half = max(estimate - low, high - estimate)
    if dist <= 0:
        return "inconclusive", math.inf
    return "inconclusive", float(math.ceil(n * (half / dist) ** 2 - 1e-9))


def _region(base: str, tol: float) -> tuple[float, float]:
    if base == "ECA":
        return 1.0 - tol, math.inf
    if base == "CF-CLOT":
        return -math.inf, tol
    return -tol, tol


def row_status(
    name: str, row: Mapping[str, Any], alpha: float, tolerances: Mapping[str, float], n: float | None
) -> dict[str, Any]:
    """The status columns of one report row: ``status``, ``tolerance``, ``n_to_decide``, ``status_reason``.

    Parameters
    ----------
    name : str
        The row's check name.
    row : mapping
        Its ``estimate, ci_low, ci_high, pvalue, verdict``.
    alpha : float
        The level of the row's test (its interval is at ``1 - alpha``).
    tolerances : mapping of str to float
        :func:`check_tolerances`.
    n : float, optional
        Units behind the row.

    Returns
    -------
    dict
    """
    base, verdict = base_check(name), str(row.get("verdict", ""))
    est, lo, hi, p = (_num(row.get(k)) for k in ("estimate", "ci_low", "ci_high", "pvalue"))
    out = {"status": "", "tolerance": math.nan, "n_to_decide": math.nan, "status_reason": ""}
    if verdict.startswith("not estimable"):
        out.update(status="not estimable", status_reason=verdict.removeprefix("not estimable").lstrip(": ") or verdict)
        return out
    if base.startswith("generator "):
        good = verdict.startswith("pass")
        out.update(status="clear" if good else "flagged", status_reason="the generator gate's own threshold")
        return out
    if base not in TOLERANCES and base not in _PVALUE_ONLY:
        out.update(status="descriptive", status_reason="describes the data or the model; tests nothing")
        return out
    tol = tolerances.get(base, math.nan)
    out["tolerance"] = tol
    if base in TOLERANCES and np.isfinite(lo) and np.isfinite(hi):
        status, n_dec = decide_status(est, lo, hi, _region(base, tol), n)
        out.update(status=status, n_to_decide=n_dec)
        if status == "inconclusive":
            out["status_reason"] = _inconclusive_text(n_dec)
        return out
    if base in _PVALUE_ONLY and np.isfinite(p):
        status = "flagged" if p < alpha else "inconclusive"
        out.update(status=status, status_reason=_PVALUE_ONLY[base])
        return out
    out.update(status="not estimable", status_reason="no interval and no p-value")
    return out


def add_status(
    table: pd.DataFrame, alpha: float, tolerances: Mapping[str, float], n: float | None = None
) -> pd.DataFrame:
    """The report's rows with ``status``, ``tolerance``, ``n_to_decide``, ``status_reason``, and ``flagged`` set to
    ``status == "flagged"`` (:func:`row_status` on each row).

    Parameters
    ----------
    table : pandas.DataFrame
        Rows indexed by check name with ``estimate, ci_low, ci_high, pvalue, verdict``.
    alpha : float
        Level of the rows' tests.
    tolerances : mapping of str to float
    n : float, optional
        Units behind the rows.

    Returns
    -------
    pandas.DataFrame
        A copy.
    """
    out = table.copy()
    cols = [row_status(str(c), r, alpha, tolerances, n) for c, r in out.iterrows()]
    for key in STATUS_COLUMNS:
        out[key] = [c[key] for c in cols]
    out["flagged"] = out["status"] == "flagged"
    return out


def _inconclusive_text(n_dec: float) -> str:
    if math.isnan(n_dec):  # no sample size behind the row (an intersectional comparison has two)
        return "the interval straddles the tolerance"
    if math.isinf(n_dec):
        return "the estimate lies on the tolerance: no sample size decides it"
    return f"about {int(n_dec):,} units would decide it at the observed estimate"


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def statuses(rows: pd.DataFrame) -> pd.Series:
    """The status of each row of a report (rows made before statuses: ``not estimable`` from the verdict,
    ``flagged`` from the ``flagged`` column, else ``inconclusive``).

    Parameters
    ----------
    rows : pandas.DataFrame

    Returns
    -------
    pandas.Series of str
    """
    if "status" in rows.columns:
        return rows["status"].astype(str)
    missing = rows["verdict"].astype(str).str.startswith("not estimable")
    flags = rows["flagged"].fillna(False).astype(bool) if "flagged" in rows.columns else missing & False
    return pd.Series(
        np.where(missing, "not estimable", np.where(flags, "flagged", "inconclusive")), index=rows.index, dtype=object
    )


def gate_checks(rows: pd.DataFrame, fail_on: Any = None, require_clear: Any = None) -> list[str]:
    """The checks that fail a gate: those named in ``fail_on`` that are flagged or not estimable, and those named
    in ``require_clear`` that are anything but clear (what ``cflib audit --fail-on/--require-clear`` exits 1 on).

    Parameters
    ----------
    rows : pandas.DataFrame
        A report's rows.
    fail_on, require_clear : str or sequence of str, optional
        Check names (:func:`cflib.audit.checks.select_checks`). Descriptive rows are never gated.

    Returns
    -------
    list of str
        In the order of ``rows`` (empty: the gate passes).
    """
    from .checks import select_checks

    st = statuses(rows)
    strict = set(select_checks(rows.index, require_clear)) if require_clear is not None else set()
    loose = set(select_checks(rows.index, fail_on)) if fail_on is not None else set()
    out = []
    for c in rows.index:
        s = st[c]
        if s == "descriptive":
            continue
        if (c in strict and s != "clear") or (c in loose and s in ("flagged", "not estimable")):
            out.append(str(c))
    return out


def resolve_tolerances(tolerances: Any, epsilon: Any) -> tuple[dict[str, float], Any]:
    """An audit's tolerances (:func:`check_tolerances`) and CF-CLOT's epsilon: ``tolerances["CF-CLOT"]`` when given,
    else ``epsilon``, which becomes the CF-CLOT tolerance.

    Parameters
    ----------
    tolerances : mapping or None
    epsilon : float
        The audit's ``epsilon`` argument (checked by the audit).

    Returns
    -------
    (dict of str to float, float)
    """
    tols = check_tolerances(tolerances)
    if tolerances is None or "CF-CLOT" not in tolerances:
        tols["CF-CLOT"] = epsilon
    return tols, tols["CF-CLOT"]
