"""The rows of an image audit's report: one check each, with its interval, verdict, method and reference."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...stats.proportions import wilson_interval as wilson_bounds  # the one Wilson interval, re-exported

__all__ = ["decisions", "make_row", "parity_row", "wilson_bounds"]


def make_row(
    estimate: float, lo: float, hi: float, p: float, verdict: str, method: str, reference: str
) -> dict[str, Any]:
    """One row of the report, as plain floats and text.

    Parameters
    ----------
    estimate, lo, hi, p : float
        The estimate, the interval and the p-value (NaN where there is none).
    verdict, method, reference : str
        The verdict in words, how it was computed and the book's section.

    Returns
    -------
    dict
    """
    return {
        "estimate": float(estimate),
        "ci_low": float(lo),
        "ci_high": float(hi),
        "pvalue": float(p),
        "verdict": verdict,
        "method": method,
        "reference": reference,
    }


def decisions(s: np.ndarray, s_cf: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None, str]:
    """The predictions as decisions where they are labels or probabilities (at 0.5), else as scores.

    Parameters
    ----------
    s : numpy.ndarray
        The factual predictions.
    s_cf : numpy.ndarray, optional
        The counterfactual ones, read the same way.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray or None, str)
        Both, and what they are (``"decisions"``, ``"decisions (score >= 0.5)"`` or ``"scores"``).
    """
    both = s if s_cf is None else np.r_[s, s_cf]
    if set(np.unique(both)) <= {0.0, 1.0}:
        return s, s_cf, "decisions"
    if both.min() >= 0.0 and both.max() <= 1.0:  # a probability: compare the decisions it leads to
        return (
            (s >= 0.5).astype(float),
            None if s_cf is None else (s_cf >= 0.5).astype(float),
            "decisions (score >= 0.5)",
        )
    return s, s_cf, "scores"


def parity_row(
    y_hat: np.ndarray,
    a01: np.ndarray,
    level: float,
    alpha: float,
    seed: int,
    label: str,
    reference: str,
    criterion: str,
) -> tuple[dict[str, Any], Any]:
    """A demographic-parity row: the difference of mean predictions (x1 minus x0) with a Welch interval and the test's p-value.

    Parameters
    ----------
    y_hat : numpy.ndarray
        The predictions.
    a01 : numpy.ndarray
        The attribute coded 0/1.
    level : float
        Coverage of the interval.
    alpha : float
        Level of the test.
    seed : int
        Seed of the test.
    label : str
        What is averaged, for the method.
    reference : str
        The book's section.
    criterion : str
        The criterion's name (demographic parity, equal opportunity).

    Returns
    -------
    (dict, object)
        The row and the test's result.
    """
    from ...stats.invariance import demographic_parity_test
    from ...verdicts import normal_interval

    res = demographic_parity_test(y_hat, a01, seed=seed)
    r0, r1 = y_hat[a01 == 0], y_hat[a01 == 1]
    diff = float(r1.mean() - r0.mean())
    se = math.sqrt(r1.var(ddof=1) / r1.size + r0.var(ddof=1) / r0.size) if min(r0.size, r1.size) > 1 else math.nan
    iv = normal_interval(diff, se, level=level, method="Welch standard error") if math.isfinite(se) else None
    verdict = (
        f"mean scores differ (p < {alpha:g})" if res.pvalue < alpha else "no evidence of a difference in mean scores"
    )
    row = make_row(
        diff,
        iv.low if iv else math.nan,
        iv.high if iv else math.nan,
        res.pvalue,
        verdict,
        f"{criterion}: mean {label} at x1 minus at x0, {iv.method if iv else 'no interval'}; {res.method} p-value",
        reference,
    )
    return row, res
