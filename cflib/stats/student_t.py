"""Student's t p-values on the log scale, and the paired t-test of CIT-LR and of the paper's bootstrap.

:func:`t_pvalue` keeps the size of p-values far below 1e-300 (their base-10 logarithm is what the
figures of the invariance chapter plot); :func:`paired_t_test` is the one-sample t-test of the per-unit
terms of CIT-LR (Ma et al., Alg. 1).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import stats

from cflib.validation import ValidationError

from .unit_arrays import check_alternative, per_unit_values

__all__ = ["paired_t_test"]

_LN10 = math.log(10.0)


def t_pvalue(t: float, df: float, alternative: str) -> tuple[float, float]:
    """P-value and its log10 (computed on the log scale so tiny p-values keep their size).

    Parameters
    ----------
    t : float
        The t statistic.
    df : float
        Degrees of freedom.
    alternative : {"two-sided", "greater", "less"}
        The alternative hypothesis.

    Returns
    -------
    (float, float)
        The p-value and its base-10 logarithm (NaN for a NaN statistic).
    """
    if np.isnan(t):
        return float("nan"), float("nan")
    if alternative == "two-sided":
        logp = min(0.0, _t_logsf(abs(t), df) + math.log(2.0))
    elif alternative == "greater":
        logp = _t_logsf(t, df)
    else:
        logp = _t_logsf(-t, df)
    return float(math.exp(logp)), float(logp / _LN10)


def _t_logsf(t: float, df: float) -> float:
    """log P(T > t) for Student's t, finite far into the tail where SciPy underflows to -inf."""
    logp = float(stats.t.logsf(t, df))
    if np.isfinite(logp) or not np.isfinite(t) or t <= 0:
        return logp
    # sf(t) = I_x(df/2, 1/2) / 2 with x = df / (df + t^2); for small x the leading term of the
    # incomplete beta series is x^a (1-x)^b / (a B(a, b)).
    from scipy.special import betaln

    a, b = df / 2.0, 0.5
    log_x = math.log(df) - math.log(df + t * t)
    log_1mx = math.log(t * t) - math.log(df + t * t)
    return a * log_x + b * log_1mx - math.log(a) - float(betaln(a, b)) - math.log(2.0)


def paired_t_test(d: Any, alternative: str = "two-sided") -> tuple[float, float, float, int]:
    """Paired (one-sample) t-test of ``mean(d) = 0``.

    Parameters
    ----------
    d : array-like
        Paired differences.
    alternative : {"two-sided", "greater", "less"}
        Alternative hypothesis on the mean of ``d``.

    Returns
    -------
    (t, pvalue, log10_pvalue, df) : tuple
        If every ``d`` is identical the t statistic is 0 (p = 1) when that value is 0 and
        :math:`\\pm\\infty` otherwise, instead of the NaN SciPy returns.
    """
    check_alternative(alternative)
    d = per_unit_values(d, "d")
    n = d.size
    if n < 2:
        raise ValidationError(f"d needs at least 2 units for a t-test, got {n}")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    # A tolerance relative to the values' size: "all equal" must survive rounding in mean/sd.
    scale = max(1.0, float(np.abs(d).max()))
    if sd <= 1e-14 * scale:
        if abs(mean) <= 1e-14 * scale:
            return 0.0, 1.0, 0.0, n - 1
        t = math.copysign(math.inf, mean)
    else:
        t = math.sqrt(n) * mean / sd
    p, logp = t_pvalue(t, n - 1, alternative)
    return float(t), p, logp, n - 1
