"""Checks of the per-unit arrays of the invariance tests: predictions, attributes, representations.

Every test of :mod:`cflib.stats.invariance`, :mod:`cflib.stats.group_parity`,
:mod:`cflib.stats.counterfactual_accuracy` and :mod:`cflib.stats.replications` takes plain NumPy arrays with
one value (or row) per unit; these checks refuse anything else with one clear line naming the argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from cflib.validation import (
    ValidationError,
    ValidationTypeError,
    check_choice,
    check_finite,
    describe,
)

_ALTERNATIVES = ("two-sided", "greater", "less")


def not_array(x: Any) -> bool:
    """Whether ``x`` cannot be an array of per-unit values (``None``, a string, a mapping or a callable).

    Parameters
    ----------
    x : object
        The candidate.

    Returns
    -------
    bool
    """
    return x is None or isinstance(x, (str, bytes, Mapping)) or callable(x)


def as_numeric(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` as float64, refusing non-numeric dtypes (objects holding numbers are converted).

    Parameters
    ----------
    arr : numpy.ndarray
        The values.
    name : str
        The argument's name, for the message.

    Returns
    -------
    numpy.ndarray
        ``float64``, finite.

    Raises
    ------
    ValidationTypeError
        Non-numeric values.
    ValidationError
        NaN or inf.
    """
    if arr.dtype == object:
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise ValidationTypeError(
                f"{name} must be numeric, got values of dtype object such as {describe(arr.flat[0])}"
            ) from None
    if arr.dtype != bool and arr.dtype.kind not in "iuf":
        raise ValidationTypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    return check_finite(arr.astype(float), name)


def per_unit_values(
    x: Any, name: str, n: int | None = None, *, numeric: bool = True, n_name: str = "y_hat", min_size: int = 1
) -> np.ndarray:
    """Validate a 1-D array (length ``n`` if given, at least ``min_size`` units, finite if numeric).

    Parameters
    ----------
    x : array-like
        One value per unit (a ``(n, 1)`` column is flattened).
    name : str
        The argument's name, for the messages.
    n : int, optional
        The required length.
    numeric : bool
        Require numbers (returned as finite float64).
    n_name : str
        The argument whose length ``n`` is, for the message.
    min_size : int
        Fewest units accepted.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationTypeError
        Not an array, or non-numeric values where numbers are required.
    ValidationError
        Not one-dimensional, the wrong length, too few units, NaN or inf.
    """
    if not_array(x):
        raise ValidationTypeError(f"{name} must be a 1-d array-like with one value per unit, got {describe(x)}")
    arr = np.asarray(x)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        hint = f": pass {name}[0] or {name}.ravel()" if arr.ndim == 2 and arr.shape[0] == 1 else ""
        raise ValidationError(f"{name} must be one-dimensional (one value per unit), got shape {arr.shape}{hint}")
    if n is not None and arr.shape[0] != n:
        raise ValidationError(f"{name} has {arr.shape[0]} entries but {n_name} has {n}: pass one value per unit")
    if arr.shape[0] < min_size:
        raise ValidationError(f"{name} must hold at least {min_size} unit(s), got {arr.shape[0]}")
    if numeric:
        if arr.dtype != bool and arr.dtype.kind not in "iuf":
            raise ValidationTypeError(f"{name} must be numeric, got dtype {arr.dtype}")
        arr = as_numeric(arr, name)
    return arr


def per_unit_rows(x: Any, name: str, n: int) -> np.ndarray:
    """Validate a representation: one numeric row per unit, returned as finite float64 ``(n, p)``.

    Parameters
    ----------
    x : array-like
        ``(n,)`` (one column), ``(n, p)`` or ``(n, ...)`` (flattened per row).
    name : str
        The argument's name, for the messages.
    n : int
        The number of units (of ``y_hat``).

    Returns
    -------
    numpy.ndarray
        ``(n, p)``.

    Raises
    ------
    ValidationTypeError
        Not an array, or non-numeric values.
    ValidationError
        A scalar, the wrong number of rows, no column, NaN or inf.
    """
    if not_array(x):
        raise ValidationTypeError(f"{name} must be an array-like of shape ({n}, p), got {describe(x)}")
    arr = np.asarray(x)
    if arr.ndim == 0:
        raise ValidationError(f"{name} must have shape ({n}, p), one row per unit, got a scalar")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        arr = arr.reshape(arr.shape[0], -1)
    if arr.shape[0] != n:
        hint = f": transpose it ({name}.T)" if arr.shape[1] == n else ""
        raise ValidationError(f"{name} has {arr.shape[0]} rows but y_hat has {n}: pass one row per unit{hint}")
    if arr.shape[1] == 0:
        raise ValidationError(f"{name} must have at least one column, got shape {arr.shape}")
    return as_numeric(arr, name)


def attribute_levels(a: Any, n: int, name: str = "a") -> tuple[np.ndarray, np.ndarray]:
    """Return (levels, integer codes) of a sensitive attribute with at least two levels.

    Parameters
    ----------
    a : array-like
        One attribute value per unit.
    n : int
        The number of units.
    name : str
        The argument's name, for the messages.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        The sorted levels and each unit's index into them.

    Raises
    ------
    ValidationTypeError
        Not an array, or values that cannot be ordered.
    ValidationError
        Not one-dimensional, the wrong length, NaN or inf, a single level.
    """
    if not_array(a):
        raise ValidationTypeError(
            f"{name} must be a 1-d array-like with one attribute value per unit, got {describe(a)}"
        )
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValidationError(f"{name} must be one-dimensional (one attribute value per unit), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValidationError(f"{name} has {arr.shape[0]} entries but y_hat has {n}: pass one value per unit")
    if arr.dtype.kind in "fc":
        check_finite(arr, name)
    try:
        levels, codes = np.unique(arr, return_inverse=True)
    except TypeError:  # objects that cannot be ordered (None among strings, say)
        raise ValidationTypeError(
            f"{name} must hold values of one comparable type (numbers or strings), got "
            f"{describe(sorted({type(v).__name__ for v in arr.tolist()}))}"
        ) from None
    if levels.size < 2:
        got = f"only level {levels[0]!r}" if levels.size else "no units"
        raise ValidationError(f"{name} is constant ({got}); a test of invariance needs at least two groups")
    return levels, codes


def check_bool(value: Any, name: str, *, allow_none: bool = False) -> Any:
    """``value`` itself when it is ``True`` or ``False`` (or ``None`` if allowed).

    Parameters
    ----------
    value : object
        The candidate.
    name : str
        The argument's name, for the message.
    allow_none : bool
        Accept ``None``.

    Returns
    -------
    bool or None

    Raises
    ------
    ValidationTypeError
        Anything else.
    """
    if (value is None and allow_none) or isinstance(value, (bool, np.bool_)):
        return value
    raise ValidationTypeError(f"{name} must be True or False{' or None' if allow_none else ''}, got {describe(value)}")


def is_binary(y: np.ndarray) -> bool:
    """Whether every value is 0 or 1 (hard binary predictions).

    Parameters
    ----------
    y : numpy.ndarray
        The values.

    Returns
    -------
    bool
    """
    return bool(np.all((y == 0) | (y == 1)))


def _check_binary(y: np.ndarray, name: str) -> None:
    if not is_binary(y):
        bad = np.unique(y[(y != 0) & (y != 1)])[:3]
        raise ValueError(
            f"{name} must hold hard binary predictions in {{0, 1}} here, got values such as {bad.tolist()}; "
            "threshold the scores (e.g. (p >= 0.5).astype(int)) or use a method that accepts scores"
        )


def check_alternative(alternative: str) -> None:
    """Refuse an alternative hypothesis other than ``"two-sided"``, ``"greater"`` or ``"less"``.

    Parameters
    ----------
    alternative : str
        The candidate.

    Returns
    -------
    None

    Raises
    ------
    ValidationError
        Another value.
    """
    check_choice(alternative, "alternative", _ALTERNATIVES)
