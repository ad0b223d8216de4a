"""Numbers as a reader sees them: p-values (``< 0.001``), three significant figures, intervals.

Used by the audit report (:mod:`cflib.audit`: its HTML page, plain-language summary and model card) and
available to the book's pages, so a number reads the same wherever it is printed. Nothing here rounds
what is stored: the JSON keeps every digit, these functions only render.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["format_pvalue", "format_number", "format_interval", "format_percent"]


def _check_real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None


def _check_digits(digits: Any, name: str = "digits") -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {digits!r}")
    return digits


def format_number(value: Any, digits: int = 3, *, missing: str = "") -> str:
    """``value`` to ``digits`` significant figures, in plain notation between 1e-4 and 1e6.

    Parameters
    ----------
    value : float
        The number; NaN or infinite gives ``missing`` (NaN) or ``"inf"``/``"-inf"``.
    digits : int
        Significant figures (at least 1).
    missing : str
        Text for NaN (a value that could not be estimated).

    Returns
    -------
    str
        For example ``0.0123``, ``-0.187``, ``1.00`` (trailing zeros kept: they are significant), ``1.23e-05``.

    Examples
    --------
    >>> format_number(0.012345), format_number(-0.18749), format_number(32561, 3), format_number(1.0)
    ('0.0123', '-0.187', '32600', '1.00')
    """
    v = _check_real(value, "value")
    digits = _check_digits(digits)
    if math.isnan(v):
        return missing
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0" if digits == 1 else "0." + "0" * (digits - 1)
    mag = math.floor(math.log10(abs(v)))
    rounded = float(f"{v:.{digits - 1}e}")  # round to the significant figures first (0.09996 -> 0.100)
    if rounded != 0:
        mag = math.floor(math.log10(abs(rounded)))
    if not -4 <= mag < 6:
        return f"{v:.{digits - 1}e}"
    if mag >= digits - 1:
        return f"{round(rounded):d}"
    return f"{rounded:.{digits - 1 - mag}f}"


def format_pvalue(p: Any, *, floor: float = 0.001, digits: int = 2, missing: str = "") -> str:
    """A p-value as it is reported: ``< 0.001`` below ``floor``, else ``digits`` significant figures.

    Parameters
    ----------
    p : float
        The p-value, in [0, 1]; NaN gives ``missing`` (a row without a test).
    floor : float
        Smallest value printed as a number, in (0, 1).
    digits : int
        Significant figures above the floor.
    missing : str
        Text for NaN.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        ``p`` outside [0, 1], or ``floor`` outside (0, 1).

    Examples
    --------
    >>> format_pvalue(0.0), format_pvalue(1.8e-99), format_pvalue(0.0012), format_pvalue(0.5), format_pvalue(1.0)
    ('< 0.001', '< 0.001', '0.0012', '0.50', '1.0')
    """
    v = _check_real(p, "p")
    f = _check_real(floor, "floor")
    digits = _check_digits(digits)
    if not 0 < f < 1:
        raise ValueError(f"floor must lie in (0, 1), got {floor!r}")
    if math.isnan(v):
        return missing
    if not 0 <= v <= 1:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    if v < f:
        return f"< {format_number(f, 1)}"
    return format_number(v, digits)


def format_interval(low: Any, high: Any, digits: int = 3, *, missing: str = "") -> str:
    """``[low, high]`` with :func:`format_number`; ``missing`` when either end is NaN.

    Parameters
    ----------
    low, high : float
    digits : int
    missing : str

    Returns
    -------
    str

    Examples
    --------
    >>> format_interval(-0.0123, 0.0456)
    '[-0.0123, 0.0456]'
    """
    lo, hi = _check_real(low, "low"), _check_real(high, "high")
    if math.isnan(lo) or math.isnan(hi):
        return missing
    return f"[{format_number(lo, digits)}, {format_number(hi, digits)}]"


def format_percent(value: Any, digits: int = 3, *, missing: str = "") -> str:
    """A proportion as a percentage with ``digits`` significant figures (``0.1694`` -> ``16.9%``).

    Parameters
    ----------
    value : float
    digits : int
    missing : str

    Returns
    -------
    str
    """
    v = _check_real(value, "value")
    if math.isnan(v):
        return missing
    return f"{format_number(100 * v, digits)}%"
