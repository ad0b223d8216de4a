"""Intervals for proportions: Wilson score, Newcombe's hybrid score for a difference, Clopper-Pearson exact.

The one home of the package's proportion intervals; every other module calls these functions.

* :func:`wilson_interval`: the Wilson (1927) score interval of ``k / n``, recommended by Brown, Cai &
  DasGupta (2001) over the Wald interval for small ``n`` and proportions near 0 or 1.
* :func:`newcombe_interval`: Newcombe's (1998, method 10) hybrid score interval of a difference of two
  independent proportions, built from the two Wilson intervals; :func:`newcombe_test` is the p-value that
  inverts it (the interval excludes 0 exactly when the p-value is below ``1 - level``).
* :func:`clopper_pearson_interval`: the Clopper & Pearson (1934) exact interval from beta quantiles,
  the same as ``scipy.stats.binomtest(k, n).proportion_ci(method="exact")`` up to rounding.

**Ends.** The Wilson and Clopper-Pearson intervals are exactly 0 below at ``k = 0`` and exactly 1 above
at ``k = n`` (their true values there), and the Wilson ends are otherwise clipped to ``[0, 1]``: in exact
arithmetic the Wilson interval never leaves ``[0, 1]``, but in floating point its end at ``k = n`` is
often ``1 - 1e-16`` (an interval that would seem to exclude 1 at ``k = n``) and its end at ``k = 0`` a
few ``1e-17`` above 0. The clipping only removes such rounding.

**Empty groups.** ``n = 0`` is allowed and gives NaN ends (not estimable), so that a table of groups can
carry an empty one; ``n < 0``, ``k`` outside ``[0, n]``, counts that are not whole numbers and a level
outside ``(0, 1)`` raise.

Every function takes scalars or arrays (broadcast against each other) and returns floats for scalar
input, arrays otherwise.

This module imports nothing of cflib but :mod:`cflib.validation`, so the layer-0 :mod:`cflib.verdicts`
may use it (tests/test_layers.py places it at layer 0).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import ValidationError, ValidationTypeError, check_probability

__all__ = ["wilson_interval", "newcombe_interval", "newcombe_test", "clopper_pearson_interval"]

#: Bisection range and steps of :func:`newcombe_test`: the normal quantile at which the interval reaches 0.
_Z_MAX, _STEPS = 40.0, 80


def _counts(k: Any, n: Any, k_name: str = "k", n_name: str = "n") -> tuple[np.ndarray, np.ndarray]:
    """``k`` and ``n`` as float arrays of whole numbers with ``0 <= k <= n``."""
    out = []
    for name, v in ((k_name, k), (n_name, n)):
        arr = np.asarray(v)
        if arr.dtype == bool or not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
            raise ValidationTypeError(f"{name} must be whole numbers (counts), got {type(v).__name__} of {arr.dtype}")
        arr = arr.astype(float)
        if not np.isfinite(arr).all() or (arr != np.floor(arr)).any():
            raise ValidationTypeError(f"{name} must be whole numbers (counts), got {v!r}")
        out.append(arr)
    kk, nn = out
    if (nn < 0).any():
        raise ValidationError(f"{n_name} must be >= 0 (0 gives a NaN interval), got {n!r}")
    if ((kk < 0) | (kk > nn)).any():
        raise ValidationError(f"{k_name} must lie in [0, {n_name}], got {k_name}={k!r}, {n_name}={n!r}")
    return kk, nn


def _quantile(level: Any) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 + check_probability(level, "level") / 2))


def _out(scalar: bool, *arrays: np.ndarray) -> tuple[Any, ...]:
    return tuple(float(a) for a in arrays) if scalar else tuple(np.asarray(a, dtype=float) for a in arrays)


def _wilson_z(k: np.ndarray, n: np.ndarray, z: Any) -> tuple[np.ndarray, np.ndarray]:
    """Wilson ends at the normal quantile ``z`` (validated counts; NaN where ``n = 0``)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p = k / n
        den = 1 + z * z / n
        mid = (p + z * z / (2 * n)) / den
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
        low = np.where(k == 0, 0.0, np.maximum(0.0, mid - half))
        high = np.where(k == n, 1.0, np.minimum(1.0, mid + half))
    empty = n == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)


def wilson_interval(k: Any, n: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Wilson score interval of a proportion ``k / n``.

    Parameters
    ----------
    k : int or array-like of int
        Successes, ``0 <= k <= n`` (whole numbers; integer-valued floats are accepted).
    n : int or array-like of int
        Trials, ``n >= 0``; ``n = 0`` gives ``(nan, nan)`` (not estimable).
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float, or of numpy.ndarray for array input
        ``(p + z^2/2n -+ z sqrt(p(1-p)/n + z^2/4n^2)) / (1 + z^2/n)`` with ``p = k/n`` and
        ``z = Phi^-1((1 + level)/2)``; exactly 0 below at ``k = 0``, exactly 1 above at ``k = n``, and
        clipped to ``[0, 1]`` (rounding only) elsewhere.

    Raises
    ------
    TypeError
        ``k`` or ``n`` not whole numbers.
    ValueError
        ``n < 0``, ``k`` outside ``[0, n]``, or ``level`` outside (0, 1).

    Examples
    --------
    >>> from cflib.stats.proportions import wilson_interval
    >>> [round(b, 4) for b in wilson_interval(81, 263)]  # Newcombe (1998a), Table I
    [0.2553, 0.3662]
    """
    kk, nn = _counts(k, n)
    return _out(kk.ndim == 0 and nn.ndim == 0, *_wilson_z(kk, nn, _quantile(level)))


def _newcombe_z(k1: np.ndarray, n1: np.ndarray, k2: np.ndarray, n2: np.ndarray, z: Any) -> tuple[Any, Any]:
    """Newcombe's ends of ``k1/n1 - k2/n2`` at the normal quantile ``z`` (validated counts)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        p1, p2 = k1 / n1, k2 / n2
    l1, u1 = _wilson_z(k1, n1, z)
    l2, u2 = _wilson_z(k2, n2, z)
    d = p1 - p2
    return d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


def _pairs(k1: Any, n1: Any, k2: Any, n2: Any) -> tuple[np.ndarray, ...]:
    a, b = _counts(k1, n1, "k1", "n1")
    c, d = _counts(k2, n2, "k2", "n2")
    return tuple(np.broadcast_arrays(a, b, c, d))


def newcombe_interval(k1: Any, n1: Any, k2: Any, n2: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Newcombe's hybrid score interval of the difference ``k1/n1 - k2/n2`` of two independent proportions.

    Newcombe (1998, method 10): with ``(l_i, u_i)`` the Wilson interval of ``p_i = k_i/n_i``, the interval
    of ``d = p1 - p2`` is ``(d - sqrt((p1 - l1)^2 + (u2 - p2)^2), d + sqrt((u1 - p1)^2 + (p2 - l2)^2))``.
    Unlike the Wald interval it keeps a width at proportions of 0 or 1 and in small groups.

    Parameters
    ----------
    k1, n1 : int or array-like of int
        Successes and units of the first proportion.
    k2, n2 : int or array-like of int
        Successes and units of the second proportion.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float, or of numpy.ndarray for array input
        NaN where either group has no units.

    Raises
    ------
    TypeError, ValueError
        As :func:`wilson_interval`, naming ``k1``, ``n1``, ``k2`` or ``n2``.

    Examples
    --------
    >>> from cflib.stats.proportions import newcombe_interval
    >>> [round(b, 4) for b in newcombe_interval(56, 70, 48, 80)]  # Newcombe (1998b), Table II, example (h)
    [0.0524, 0.3339]
    """
    a, b, c, d = _pairs(k1, n1, k2, n2)
    return _out(a.ndim == 0, *_newcombe_z(a, b, c, d, _quantile(level)))


def newcombe_test(k1: Any, n1: Any, k2: Any, n2: Any) -> tuple[Any, Any]:
    """The test of ``p1 = p2`` that inverts Newcombe's interval: its signed normal quantile and p-value.

    The p-value is the ``alpha`` at which the ``1 - alpha`` interval of :func:`newcombe_interval` has 0 as
    an end (the end nearer 0 moves away from the difference as the quantile grows; it is found by
    bisection to about ``1e-23`` in the quantile), so the interval at any level excludes 0 exactly when
    the p-value is below ``1 - level``.

    Parameters
    ----------
    k1, n1 : int or array-like of int
        Successes and units of the first proportion.
    k2, n2 : int or array-like of int
        Successes and units of the second proportion.

    Returns
    -------
    (statistic, pvalue) : tuple of float, or of numpy.ndarray for array input
        ``statistic``: the normal quantile at which the interval reaches 0, with the sign of
        ``k1/n1 - k2/n2`` (0 when the proportions are equal; capped at 40); ``pvalue``: two-sided,
        ``min(1, 2 * (1 - Phi(|statistic|)))``. NaN where either group has no units.

    Raises
    ------
    TypeError, ValueError
        As :func:`newcombe_interval`.
    """
    from scipy.stats import norm

    a, b, c, d = _pairs(k1, n1, k2, n2)
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = a / b - c / d
    up = diff > 0

    def end(zz: np.ndarray) -> np.ndarray:
        lo, hi = _newcombe_z(a, b, c, d, zz)
        return np.where(up, lo, -hi)

    lo_z, hi_z = np.zeros_like(diff), np.full_like(diff, _Z_MAX)
    for _ in range(_STEPS):
        mid = (lo_z + hi_z) / 2
        above = end(mid) > 0
        lo_z, hi_z = np.where(above, mid, lo_z), np.where(above, hi_z, mid)
    zstar = np.where(end(np.full_like(diff, _Z_MAX)) > 0, _Z_MAX, (lo_z + hi_z) / 2)
    zstar = np.where(diff == 0, 0.0, zstar)
    empty = (b == 0) | (d == 0)
    stat = np.where(empty, np.nan, np.where(diff == 0, 0.0, np.copysign(zstar, diff)))
    p = np.where(empty, np.nan, np.minimum(1.0, 2 * norm.sf(zstar)))
    return _out(a.ndim == 0, stat, p)


def clopper_pearson_interval(k: Any, n: Any, level: float = 0.95) -> tuple[Any, Any]:
    """Clopper-Pearson (exact) interval of a proportion ``k / n`` from beta quantiles.

    Parameters
    ----------
    k : int or array-like of int
        Successes, ``0 <= k <= n``.
    n : int or array-like of int
        Trials, ``n >= 0``; ``n = 0`` gives ``(nan, nan)``.
    level : float
        Confidence level in (0, 1).

    Returns
    -------
    (low, high) : tuple of float, or of numpy.ndarray for array input
        ``(B^-1(a/2; k, n-k+1), B^-1(1-a/2; k+1, n-k))`` with ``a = 1 - level``; exactly 0 at ``k = 0``
        and exactly 1 at ``k = n``. Covers the true proportion with probability at least ``level``.

    Raises
    ------
    TypeError, ValueError
        As :func:`wilson_interval`.

    Examples
    --------
    >>> from cflib.stats.proportions import clopper_pearson_interval
    >>> [round(b, 4) for b in clopper_pearson_interval(0, 10)]  # 1 - 0.025**(1/10) above
    [0.0, 0.3085]
    """
    from scipy.stats import beta

    kk, nn = _counts(k, n)
    a = 1 - check_probability(level, "level")
    kk, nn = np.broadcast_arrays(kk, nn)
    with np.errstate(invalid="ignore"):
        low = np.where(kk == 0, 0.0, beta.ppf(a / 2, np.maximum(kk, 1), nn - kk + 1))
        high = np.where(kk == nn, 1.0, beta.ppf(1 - a / 2, kk + 1, np.maximum(nn - kk, 1)))
    empty = nn == 0
    return _out(kk.ndim == 0, np.where(empty, np.nan, low), np.where(empty, np.nan, high))
