"""Group rates with Wilson intervals and differences of group means with Welch intervals.

The observational side of an audit (what Aequitas and fairlearn's ``MetricFrame`` report, with the
uncertainty they leave out): per group the size, base rate, selection rate, true- and false-positive
rates and positive predictive value, each with a Wilson score interval (Wilson 1927; Brown, Cai &
DasGupta 2001 recommend it over the Wald interval for small groups and rates near 0 or 1), and the
difference of two groups' rates with Newcombe's hybrid score interval (Newcombe 1998, method 10, built
from the two Wilson intervals; honest for small groups and rates of 0 or 1) and the p-value that inverts
it, or, for means of scores, the Welch interval that inverts the Welch t-test of
:func:`cflib.stats.invariance.demographic_parity_test` (Ma et al., eqs. 5-6). Either way the interval
excludes 0 exactly when the p-value is below its level. A rate whose denominator is empty is
reported as *not estimable* with the reason, never as 0. The proportion intervals themselves
(Wilson, Newcombe) live in :mod:`cflib.stats.proportions`; ``wilson_interval`` is re-exported here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..results import BaseTestResult, Interval
from ..validation import check_probability
from .proportions import newcombe_interval, newcombe_test
from .proportions import wilson_interval as wilson_interval  # re-exported: its home is cflib.stats.proportions

__all__ = ["RATES", "RateDifference", "welch_difference", "newcombe_difference", "group_rates", "rate_row"]

#: The rates of :func:`group_rates`: name -> (numerator, denominator) in words.
RATES = {
    "base_rate": ("y = 1", "all units"),
    "selection_rate": ("decision = 1", "all units"),
    "tpr": ("decision = 1", "units with y = 1"),
    "fpr": ("decision = 1", "units with y = 0"),
    "ppv": ("y = 1", "units with decision = 1"),
}


@dataclass(frozen=True)
class RateDifference(BaseTestResult):
    """``mean(v1) - mean(v0)`` with an interval and the p-value of a zero difference that agree with each other.

    Attributes
    ----------
    statistic : float
        Welch's t, or for Newcombe's interval the normal quantile at which the interval reaches 0.
    pvalue : float
        Two-sided p-value: the interval at level ``1 - pvalue`` has 0 as an end, so the interval at any
        level excludes 0 exactly when ``pvalue < 1 - level``.
    difference : float
        ``mean(v1) - mean(v0)`` (NaN when not estimable).
    ci : cflib.results.Interval
        ``difference -+ t_{df, (1+level)/2} * se`` (Welch) or Newcombe's interval; NaN when the standard error is 0 (both groups constant).
    df : float
        Welch-Satterthwaite degrees of freedom.
    level : float
    n0, n1 : int
    reason : str
        Empty when estimable, else why not (too few units in a group).
    method : str
        ``"welch"`` or ``"newcombe"``.
    """

    statistic: float
    pvalue: float
    difference: float
    ci: Interval
    df: float
    level: float
    n0: int
    n1: int
    reason: str = ""
    method: str = "welch"

    def __post_init__(self) -> None:
        object.__setattr__(self, "ci", _interval(self.ci, self.difference, self.level, self.method))

    def summary(self) -> pd.DataFrame:
        """One row: difference, interval, t, df, p-value, group sizes and the reason when not estimable.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame(
            [
                {
                    "difference": self.difference,
                    "ci_low": self.ci[0],
                    "ci_high": self.ci[1],
                    "statistic": self.statistic,
                    "df": self.df,
                    "pvalue": self.pvalue,
                    "n0": self.n0,
                    "n1": self.n1,
                    "reason": self.reason,
                }
            ]
        )


def _interval(bounds: Any, difference: float, level: float, method: str) -> Interval:
    """The interval of a :class:`RateDifference` from its ``(low, high)`` (an :class:`Interval` is kept as is)."""
    return Interval.of(bounds, estimate=difference, method=f"{100 * level:g}% {method}")


def welch_difference(v0: Any, v1: Any, level: float = 0.95) -> RateDifference:
    """Difference of two groups' means with the Welch interval and test (consistent with each other).

    Parameters
    ----------
    v0, v1 : array-like of float
        The values (0/1 decisions for a rate) of the baseline and comparison groups.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    RateDifference
        Not estimable (NaN, with ``reason``) when a group has fewer than two values.
    """
    check_probability(level, "level")
    a0, a1 = np.asarray(v0, dtype=float).ravel(), np.asarray(v1, dtype=float).ravel()
    n0, n1 = int(a0.size), int(a1.size)
    if min(n0, n1) < 2:
        small = "baseline" if n0 < 2 else "comparison"
        return RateDifference(
            math.nan,
            math.nan,
            math.nan,
            _interval((math.nan, math.nan), math.nan, level, "welch"),
            math.nan,
            level,
            n0,
            n1,
            f"not estimable: the {small} group has {min(n0, n1)} unit(s); the Welch interval needs 2 in each",
        )
    if not (np.isfinite(a0).all() and np.isfinite(a1).all()):
        raise ValueError("v0 and v1 must be finite; got NaN or infinite values")
    m0, m1 = float(a0.mean()), float(a1.mean())
    s0, s1 = float(a0.var(ddof=1)) / n0, float(a1.var(ddof=1)) / n1
    se2 = s0 + s1
    diff = m1 - m0
    if se2 <= 0:  # both groups constant: parity when the means agree, a certain difference otherwise
        t = 0.0 if diff == 0 else math.copysign(math.inf, diff)
        return RateDifference(
            t,
            1.0 if diff == 0 else 0.0,
            diff,
            _interval((math.nan, math.nan), diff, level, "welch"),
            float(n0 + n1 - 2),
            level,
            n0,
            n1,
            "no interval: every value in both groups is the same",
        )
    se = math.sqrt(se2)
    df = se2 * se2 / (s0 * s0 / (n0 - 1) + s1 * s1 / (n1 - 1))
    t = diff / se
    p = float(2 * stats.t.sf(abs(t), df))
    q = float(stats.t.ppf(0.5 + level / 2, df))
    ci = _interval((diff - q * se, diff + q * se), diff, level, "welch")
    return RateDifference(float(t), p, diff, ci, float(df), level, n0, n1, "", "welch")


def newcombe_difference(k0: Any, n0: Any, k1: Any, n1: Any, level: float = 0.95) -> RateDifference:
    """Difference of two proportions ``k1/n1 - k0/n0`` with Newcombe's hybrid score interval and its p-value.

    Newcombe (1998, method 10) combines the two groups' Wilson intervals; unlike the Wald or Welch
    interval it stays honest for small groups and rates of 0 or 1 (a group of 3 with no positive decision
    does not give a zero-width interval). The p-value inverts the interval: it is the ``alpha`` at which
    the ``1 - alpha`` interval has 0 as an end (found by bisection on the normal quantile), so the
    interval excludes 0 exactly when the p-value is below ``1 - level``.

    Parameters
    ----------
    k0, n0 : int
        Successes and units of the baseline group.
    k1, n1 : int
        Successes and units of the comparison group.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    RateDifference
        Not estimable (NaN, with ``reason``) when a group has no units.
    """
    for name, v in (("k0", k0), ("n0", n0), ("k1", k1), ("n1", n1)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
            raise TypeError(f"{name} must be a whole number >= 0, got {v!r}")
    if k0 > n0 or k1 > n1:
        raise ValueError(f"k0 <= n0 and k1 <= n1 are needed, got k0={k0}, n0={n0}, k1={k1}, n1={n1}")
    check_probability(level, "level")
    k0, n0, k1, n1 = int(k0), int(n0), int(k1), int(n1)
    if min(n0, n1) == 0:
        small = "baseline" if n0 == 0 else "comparison"
        return RateDifference(
            math.nan,
            math.nan,
            math.nan,
            _interval((math.nan, math.nan), math.nan, level, "newcombe"),
            math.nan,
            level,
            n0,
            n1,
            f"not estimable: the {small} group has no units",
            "newcombe",
        )
    d = k1 / n1 - k0 / n0
    lo, hi = newcombe_interval(k1, n1, k0, n0, level)
    statistic, p = newcombe_test(k1, n1, k0, n0)
    ci = _interval((lo, hi), d, level, "newcombe")
    return RateDifference(statistic, p, d, ci, math.nan, level, n0, n1, "", "newcombe")


def group_rates(
    groups: Any,
    decision: Any = None,
    y: Any = None,
    *,
    level: float = 0.95,
    no_decision: str = "no decisions",
    no_outcome: str = "no outcome",
) -> pd.DataFrame:
    """Per group: size, base rate, selection rate, TPR, FPR and PPV, each with a Wilson interval.

    Parameters
    ----------
    groups : array-like
        Group label per unit (any hashable values; the table is sorted by their text).
    decision : array-like of {0, 1}, optional
        The model's decision per unit; without it the decision-based rates are not estimable.
    y : array-like of {0, 1}, optional
        The true outcome per unit; without it the outcome-based rates are not estimable.
    level : float
        Level of the intervals.
    no_decision, no_outcome : str
        Why the rates that need ``decision`` (or ``y``) are not estimable when it is ``None``.

    Returns
    -------
    pandas.DataFrame
        Indexed by group (as text); columns ``n`` and, for each rate of :data:`RATES`, ``<rate>``,
        ``<rate>_low``, ``<rate>_high``, ``<rate>_k`` (numerator) and ``<rate>_n`` (denominator), and
        ``note`` (why a rate is not estimable; empty otherwise). A rate with an empty denominator is NaN.

    Raises
    ------
    ValueError
        Arrays of different lengths, or ``decision``/``y`` not coded 0/1.
    """
    check_probability(level, "level")
    g = np.asarray(groups)
    if g.ndim != 1 or g.size == 0:
        raise ValueError(f"groups must be a non-empty 1-d array of labels, got shape {g.shape}")
    arrays: dict[str, np.ndarray | None] = {}
    for name, v in (("decision", decision), ("y", y)):
        if v is None:
            arrays[name] = None
            continue
        a = np.asarray(v)
        if a.shape != g.shape:
            raise ValueError(f"{name} must have one value per unit ({g.size}), got shape {a.shape}")
        if not np.isin(a, (0, 1)).all():
            raise ValueError(f"{name} must be coded 0/1, got values {sorted(map(str, pd.unique(a)))[:5]}")
        arrays[name] = a.astype(int)
    d, yy = arrays["decision"], arrays["y"]
    missing = no_outcome if yy is None else no_decision
    rows = {}
    for lab in sorted(pd.unique(g), key=str):
        m = g == lab
        counts = {
            "base_rate": None if yy is None else (yy[m].sum(), m.sum()),
            "selection_rate": None if d is None else (d[m].sum(), m.sum()),
            "tpr": None if d is None or yy is None else (d[m & (yy == 1)].sum(), (m & (yy == 1)).sum()),
            "fpr": None if d is None or yy is None else (d[m & (yy == 0)].sum(), (m & (yy == 0)).sum()),
            "ppv": None if d is None or yy is None else (yy[m & (d == 1)].sum(), (m & (d == 1)).sum()),
        }
        rows[str(lab)] = rate_row(int(m.sum()), counts, level, missing)
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "group"
    return out


def rate_row(n: int, counts: Mapping[str, tuple[Any, Any] | None], level: float, missing: str) -> dict[str, Any]:
    """One group's row of :func:`group_rates` from its counts: each rate with its Wilson interval and counts.

    Parameters
    ----------
    n : int
        The group's size.
    counts : mapping of str to (numerator, denominator) or None
        Rate of :data:`RATES` -> its counts, or ``None`` when the rate cannot be computed (no decisions or no
        outcome); a zero denominator makes the rate NaN with the reason in the note.
    level : float
        Level of the Wilson intervals.
    missing : str
        Why a rate given as ``None`` is not estimable.

    Returns
    -------
    dict
        ``n``; per rate ``<rate>``, ``<rate>_low``, ``<rate>_high``, ``<rate>_k``, ``<rate>_n``; ``note``.
    """
    row: dict[str, Any] = {"n": n}
    notes = []
    for rate, kn in counts.items():
        if kn is None:
            k, m, why = 0, 0, missing
        else:
            k, m = int(kn[0]), int(kn[1])
            why = f"no {RATES[rate][1].removeprefix('units with ')}" if m == 0 else ""
        lo, hi = wilson_interval(k, m, level)
        row.update(
            {rate: k / m if m else math.nan, f"{rate}_low": lo, f"{rate}_high": hi, f"{rate}_k": k, f"{rate}_n": m}
        )
        if why:
            notes.append(f"{rate}: not estimable ({why})")
    row["note"] = "; ".join(dict.fromkeys(notes))
    return row
