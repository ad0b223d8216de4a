"""Shared input checks for cflib's public functions and its command line (layer 0).

In the spirit of scipy's ``_*_iv`` helpers and fairlearn's ``utils/_input_validation.py``: every
public function calls these first, so bad input fails in cflib's own code with **one line** that
names the argument, what was expected and what was received, never deep inside numpy,
scikit-learn or yaml. Input that is legal but gives an unreliable answer (too few units for an
interval's normal approximation, say) gets a :class:`CflibWarning` instead, which says why and what
size is needed.

Errors are :class:`ValidationError` (a ``ValueError``) or :class:`ValidationTypeError` (a
``TypeError``), so ``except ValueError`` keeps working. ``pandas`` is imported only by the checks on
data frames, and :mod:`cflib.results` only by :func:`check_probability`, so the command line can use
the parameter checks without loading them.
"""

from __future__ import annotations

import math
import numbers
import re
import warnings
from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal, overload

import numpy as np

__all__ = [
    "check_grey_images",
    "CflibWarning",
    "ValidationError",
    "ValidationTypeError",
    "warn",
    "describe",
    "check_array",
    "check_finite",
    "check_same_length",
    "check_count",
    "check_real",
    "check_overrides",
    "check_positive",
    "check_axes",
    "check_probability",
    "check_attribute",
    "check_columns",
    "check_callable",
    "check_choice",
    "Range",
    "parse_range",
    "implicit_range",
    "check_parameter",
    "check_names",
]


class CflibWarning(UserWarning):
    """Legal input for which cflib's answer cannot be trusted (too few units, a rough approximation).

    Filter it like any warning: ``warnings.simplefilter("error", cflib.CflibWarning)`` turns it into
    an error.
    """


class ValidationError(ValueError):
    """A value out of range, mis-shaped, non-finite or too small."""


class ValidationTypeError(TypeError):
    """An argument of the wrong type."""


def warn(message: str, stacklevel: int = 3) -> str:
    """Emit a :class:`CflibWarning` and return its message (for results that record it).

    Parameters
    ----------
    message : str
        One line: what is unreliable and what size is needed.
    stacklevel : int
        As :func:`warnings.warn`; the default points at the caller of the public function.

    Returns
    -------
    str
        ``message``.
    """
    warnings.warn(message, CflibWarning, stacklevel=stacklevel)
    return message


def describe(value: Any) -> str:
    """A short, one-line description of a received value for an error message.

    Parameters
    ----------
    value : object

    Returns
    -------
    str
        ``repr`` for scalars and short strings, ``type`` and shape for arrays and frames.
    """
    if hasattr(value, "shape") and hasattr(value, "dtype") and not np.isscalar(value):
        return f"{type(value).__name__} of shape {tuple(value.shape)} and dtype {value.dtype}"
    if hasattr(value, "shape") and hasattr(value, "columns"):
        return f"{type(value).__name__} of shape {tuple(value.shape)}"
    if isinstance(value, (list, tuple)) and len(value) > 6:
        return f"{type(value).__name__} of length {len(value)}"
    text = repr(value).replace("\n", " ")
    return text if len(text) <= 80 else text[:77] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, (bool, np.bool_))


def _is_real(value: Any) -> bool:
    return isinstance(value, (numbers.Real, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def check_array(
    value: Any,
    name: str,
    *,
    ndim: int | tuple[int, ...] = 1,
    n: int | None = None,
    n_name: str = "the other arguments",
    numeric: bool = True,
    finite: bool = True,
    min_size: int = 1,
) -> np.ndarray:
    """An array of the expected dimension, length, dtype and finiteness.

    Parameters
    ----------
    value : array-like
        The argument (list, numpy array, pandas Series or DataFrame).
    name : str
        The argument's name, for the message.
    ndim : int or tuple of int
        Allowed numbers of dimensions (1: ``(n,)``, 2: ``(n, d)``).
    n : int, optional
        Required number of units (first axis). A 2-d array of shape ``(d, n)`` given where ``(n, d)``
        is expected is reported as transposed.
    n_name : str
        Where ``n`` comes from, for the message (e.g. ``"x"``).
    numeric : bool
        Require a numeric (or boolean) dtype.
    finite : bool
        Refuse NaN and inf (numeric arrays only).
    min_size : int
        Fewest units (first axis) accepted.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationTypeError
        ``value`` is not array-like, or not numeric where ``numeric``.
    ValidationError
        Wrong dimension or length, a transposed array, too few units, NaN or inf.
    """
    dims = (ndim,) if isinstance(ndim, int) else tuple(ndim)
    if value is None or isinstance(value, (str, bytes, Mapping)) or callable(value):
        raise ValidationTypeError(
            f"{name} must be an array-like of {' or '.join(f'{d}-d' for d in dims)}, got {describe(value)}"
        )
    try:
        arr = np.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists
        raise ValidationTypeError(
            f"{name} must be a rectangular array-like, got {type(value).__name__} ({exc})"
        ) from None
    if arr.dtype == object and numeric:
        try:
            arr = arr.astype(float)
        except (ValueError, TypeError):
            raise ValidationTypeError(
                f"{name} must be numeric, got values of dtype object such as {describe(arr.flat[0] if arr.size else None)}"
            ) from None
    if arr.ndim not in dims:
        want = " or ".join(("(n,)" if d == 1 else "(n, d)" if d == 2 else f"{d}-d") for d in dims)
        raise ValidationError(f"{name} must have shape {want}, got shape {arr.shape}")
    if numeric and not (np.issubdtype(arr.dtype, np.number) or arr.dtype == bool):
        raise ValidationTypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if n is not None and arr.shape[0] != n:
        if arr.ndim == 2 and arr.shape[1] == n:
            raise ValidationError(
                f"{name} must have shape ({n}, d) with one row per unit like {n_name}, got {arr.shape}: transpose it ({name}.T)"
            )
        raise ValidationError(f"{name} must have {n} rows like {n_name}, got shape {arr.shape}")
    if arr.shape[0] < min_size:
        raise ValidationError(f"{name} must hold at least {min_size} unit(s), got shape {arr.shape}")
    if finite and numeric:
        check_finite(arr, name)
    return arr


def check_finite(arr: np.ndarray, name: str) -> np.ndarray:
    """Refuse NaN and inf in a numeric array.

    Parameters
    ----------
    arr : numpy.ndarray
    name : str

    Returns
    -------
    numpy.ndarray
        ``arr``.

    Raises
    ------
    ValidationError
        With the count of NaN and of infinite entries.
    """
    if np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.complexfloating):
        bad = ~np.isfinite(arr)
        if bad.any():
            n_nan = int(np.isnan(arr).sum())
            raise ValidationError(
                f"{name} must be finite, got {n_nan} NaN and {int(bad.sum()) - n_nan} infinite value(s); drop or impute them first"
            )
    return arr


def check_same_length(**arrays: Any) -> int:
    """All arguments have the same number of units.

    Parameters
    ----------
    **arrays : array-like
        Name -> value.

    Returns
    -------
    int
        The common length.

    Raises
    ------
    ValidationError
        Naming every argument with its length.
    """
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValidationError(
            f"{', '.join(lengths)} must have the same length, got {', '.join(f'{k}: {v}' for k, v in lengths.items())}"
        )
    return next(iter(lengths.values()))


@overload
def check_count(value: Any, name: str, *, minimum: int = 1, allow_none: Literal[False] = False) -> int: ...


@overload
def check_count(value: Any, name: str, *, minimum: int = 1, allow_none: bool) -> int | None: ...


def check_count(value: Any, name: str, *, minimum: int = 1, allow_none: bool = False) -> int | None:
    """A whole number ``>= minimum`` (``bool`` refused).

    Parameters
    ----------
    value : int
    name : str
    minimum : int
        Smallest value accepted (1 for sizes, 0 where none is legal, 2 for folds).
    allow_none : bool
        Accept ``None`` (returned as is).

    Returns
    -------
    int or None

    Raises
    ------
    ValidationTypeError
        Not an integer (floats such as ``5.0`` included: sizes are counts).
    ValidationError
        Below ``minimum``.
    """
    if value is None and allow_none:
        return None
    if not _is_int(value):
        raise ValidationTypeError(
            f"{name} must be an integer >= {minimum}{' or None' if allow_none else ''}, got {describe(value)} ({type(value).__name__})"
        )
    if value < minimum:
        raise ValidationError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def check_real(
    value: Any, name: str, *, low: float | None = None, high: float | None = None, high_open: bool = False
) -> float:
    """A finite real number (``bool`` refused), optionally in ``[low, high]`` (or ``[low, high)``).

    Parameters
    ----------
    value : float
    name : str
    low, high : float, optional
        Bounds.
    high_open : bool
        Exclude ``high``.

    Returns
    -------
    float

    Raises
    ------
    ValidationTypeError
        Not a real number.
    ValidationError
        NaN, inf or out of bounds.
    """
    if not _is_real(value):
        raise ValidationTypeError(f"{name} must be a real number, got {describe(value)} ({type(value).__name__})")
    v = float(value)
    if not math.isfinite(v):
        raise ValidationError(f"{name} must be finite, got {value!r}")
    if (low is not None and v < low) or (high is not None and (v >= high if high_open else v > high)):
        raise ValidationError(
            f"{name} must be in [{low if low is not None else '-inf'}, {high if high is not None else 'inf'}{')' if high_open else ']'}, got {value!r}"
        )
    return v


def check_overrides(
    value: Any,
    defaults: Mapping[str, float],
    name: str,
    *,
    what: str,
    example: str,
    high: Mapping[str, float] | None = None,
    high_open: Collection[str] = (),
) -> dict[str, float]:
    """``defaults`` with some of its values replaced by the mapping ``value``, each replacement checked.

    Parameters
    ----------
    value : mapping of str to float, or None
        The replacements (``None``: the defaults as they are).
    defaults : mapping of str to float
        The known keys and their default values.
    name : str
        The argument's name, for the messages.
    what : str
        What a key is (``"check"``, ``"threshold"``), for the messages.
    example : str
        A valid ``value``, for the message when it is not a mapping.
    high : mapping of str to float, optional
        Upper bound per key (default: none); every value must be ``>= 0``.
    high_open : collection of str
        The keys whose upper bound is excluded.

    Returns
    -------
    dict of str to float

    Raises
    ------
    ValidationTypeError
        ``value`` is not a mapping, or a value is not a real number.
    ValidationError
        An unknown key, or a value out of range.
    """
    if value is None:
        return dict(defaults)
    if not isinstance(value, Mapping):
        raise ValidationTypeError(f"{name} must be a dict such as {example}, got {describe(value)}")
    unknown = sorted(str(k) for k in value if k not in defaults)
    if unknown:
        raise ValidationError(f"{name}: unknown {what}(s) {unknown}; the known {what}s are {list(defaults)}")
    bounds = high or {}
    out = dict(defaults)
    for k, v in value.items():
        out[k] = check_real(v, f"{name}[{k!r}]", low=0.0, high=bounds.get(k), high_open=k in high_open)
    return out


def check_probability(value: Any, name: str, *, closed: bool = False) -> float:
    """A probability: in ``(0, 1)`` (alpha, a confidence level) or, with ``closed``, in ``[0, 1]``.

    Parameters
    ----------
    value : float
    name : str
    closed : bool
        Accept the end points 0 and 1.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As :func:`check_alpha` (not a real number, ``bool`` included; out of range; NaN).
    """
    if not closed:
        return check_alpha(value, name)
    if not _is_real(value):
        raise ValidationTypeError(f"{name} must be a float in [0, 1], got {type(value).__name__}")
    if not 0.0 <= float(value) <= 1.0:
        raise ValidationError(f"{name} must be in [0, 1], got {value!r}")
    return float(value)


def check_attribute(values: Any, name: str, *, min_per_level: int = 2, levels: int | None = 2) -> np.ndarray:
    """A group attribute with enough levels and enough units in each.

    Parameters
    ----------
    values : array-like, 1-d
    name : str
    min_per_level : int
        Fewest units each level must hold.
    levels : int, optional
        Exact number of levels required (2 for a binary attribute); ``None``: at least two.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    ValidationError
        A constant attribute, the wrong number of levels, or a level with too few units.
    """
    arr = check_array(values, name, numeric=False)
    if arr.dtype.kind in "fc":
        check_finite(arr, name)
    lv, counts = np.unique(arr, return_counts=True)
    if len(lv) < 2:
        raise ValidationError(
            f"{name} must take at least two levels, got the constant {describe(lv[0] if len(lv) else None)}"
        )
    if levels is not None and len(lv) != levels:
        raise ValidationError(f"{name} must take exactly {levels} levels, got {len(lv)}: {describe(lv.tolist())}")
    if counts.min() < min_per_level:
        got = {describe(k): int(c) for k, c in zip(lv.tolist(), counts, strict=True)}
        raise ValidationError(f"{name} needs at least {min_per_level} units per level, got {got}")
    return arr


def check_columns(data: Any, columns: Sequence[str], name: str = "data") -> Any:
    """A pandas DataFrame holding ``columns``.

    Parameters
    ----------
    data : pandas.DataFrame
    columns : sequence of str
    name : str

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    ValidationTypeError
        ``data`` is not a DataFrame.
    ValidationError
        Columns are missing (named, with the first available ones), or the frame is empty.
    """
    import pandas as pd

    if not isinstance(data, pd.DataFrame):
        raise ValidationTypeError(f"{name} must be a pandas DataFrame, got {type(data).__name__}")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise ValidationError(f"{name} lacks column(s) {missing}; its columns are {list(map(str, data.columns))[:20]}")
    if len(data) == 0:
        raise ValidationError(f"{name} is empty: it needs rows")
    return data


def check_callable(value: Any, name: str) -> Any:
    """A callable argument.

    Parameters
    ----------
    value : callable
    name : str

    Returns
    -------
    callable

    Raises
    ------
    ValidationTypeError
    """
    if not callable(value):
        raise ValidationTypeError(f"{name} must be callable, got {describe(value)} ({type(value).__name__})")
    return value


def check_choice(value: Any, name: str, choices: Sequence[Any]) -> Any:
    """One of a fixed set of values.

    Parameters
    ----------
    value : object
    name : str
    choices : sequence

    Returns
    -------
    object

    Raises
    ------
    ValidationError
    """
    try:
        ok = value in choices
    except TypeError:  # unhashable values against a set
        ok = False
    if not ok:
        raise ValidationError(f"{name} must be one of {tuple(choices)}, got {describe(value)}")
    return value


# ---------------------------------------------------------------------------- notebook parameters
class Range:
    """An allowed interval for a numeric parameter, e.g. ``>=1`` or ``(0, 1)``.

    Parameters
    ----------
    low, high : float, optional
        Bounds (``None``: unbounded).
    low_open, high_open : bool
        Whether a bound is excluded.
    """

    def __init__(
        self, low: float | None = None, high: float | None = None, low_open: bool = False, high_open: bool = False
    ) -> None:
        self.low, self.high, self.low_open, self.high_open = low, high, low_open, high_open

    def __contains__(self, value: float) -> bool:
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return not (self.high is not None and (value >= self.high if self.high_open else value > self.high))

    def __str__(self) -> str:
        if self.low is not None and self.high is not None:
            return f"in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}{')' if self.high_open else ']'}"
        if self.low is not None:
            return f"{'>' if self.low_open else '>='} {self.low:g}"
        if self.high is not None:
            return f"{'<' if self.high_open else '<='} {self.high:g}"
        return "any value"

    __repr__ = __str__


_NUM = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_INTERVAL = re.compile(rf"^([\[(])\s*({_NUM})\s*,\s*({_NUM})\s*([\])])$")
_BOUND = re.compile(rf"^(>=|<=|>|<)\s*({_NUM})$")


def parse_range(text: str) -> Range:
    """Parse a range declared beside a notebook parameter (``# range: >=1``).

    Parameters
    ----------
    text : str
        ``>=a``, ``>a``, ``<=b``, ``<b`` (several joined by commas), or an interval ``[a, b]``,
        ``(a, b)``, ``[a, b)``, ``(a, b]``.

    Returns
    -------
    Range

    Raises
    ------
    ValidationError
        Text in none of these forms.
    """
    t = text.strip()
    m = _INTERVAL.match(t)
    if m:
        return Range(float(m[2]), float(m[3]), m[1] == "(", m[4] == ")")
    r = Range()
    parts = [p.strip() for p in t.split(",")]
    for part in parts:
        b = _BOUND.match(part)
        if not b:
            raise ValidationError(f"range must look like '>=1', '>0, <=1' or '(0, 1)', got {text!r}")
        op, v = b[1], float(b[2])
        if op.startswith(">"):
            r.low, r.low_open = v, op == ">"
        else:
            r.high, r.high_open = v, op == "<"
    return r


_SEED = re.compile(r"(^|_)seeds?($|_)")
_PROBABILITY = re.compile(r"^(alpha|level)$|_alpha$")


def implicit_range(name: str, default: Any) -> Range | None:
    """The range a parameter gets without a ``# range:`` comment.

    * a seed (``seed``, ``seeds``, ``zoo_seeds``, ``*_seed``): ``>= 0``;
    * any other parameter whose default is a positive integer (or a list of them): a size, ``>= 1``;
    * ``alpha``, ``level`` or ``*_alpha`` with a float default: ``(0, 1)``.

    Parameters
    ----------
    name : str
    default : object
        The default in the notebook's ``parameters`` cell.

    Returns
    -------
    Range or None
    """
    items = list(default) if isinstance(default, (list, tuple)) else [default]
    if not items:
        return None
    if all(_is_int(v) for v in items):
        if _SEED.search(name):
            return Range(0)
        if all(v >= 1 for v in items):
            return Range(1)
        return None
    if _PROBABILITY.search(name) and all(_is_real(v) for v in items):
        return Range(0, 1, True, True)
    return None


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if _is_int(value):
        return "int"
    if _is_real(value):
        return "float"
    if isinstance(value, str):
        return "str"
    return None


_EXPECT = {"bool": "true or false", "int": "an integer", "float": "a number", "str": "a string"}
_PLURAL = {"bool": "booleans", "int": "integers", "float": "numbers", "str": "strings"}


def _fits(kind: str, value: Any) -> bool:
    if kind == "float":
        return _is_real(value)
    return _kind(value) == kind


def check_parameter(
    name: str, value: Any, default: Any, *, literal: bool = True, allowed: Range | None = None, where: str = ""
) -> Any:
    """Check a notebook parameter's value against its default's type and its allowed range.

    The rule (CONTRIBUTING.md, "Parameters"): a value must have the type of the default (``bool``,
    ``int``, ``float`` where an ``int`` is also fine, ``str``, a list for a list default with entries of
    the type of the default's entries, a mapping for a mapping); a ``None`` default or a default that is
    not a literal accepts anything. Numbers (and the numeric entries of a list) must lie in ``allowed``,
    or in :func:`implicit_range` when the notebook declares none.

    Parameters
    ----------
    name : str
        The parameter.
    value : object
        The value given (``-p``, a params YAML, a sweep grid point).
    default : object
        The default of the notebook's ``parameters`` cell.
    literal : bool
        Whether ``default`` is a Python literal (a default computed by code accepts any value).
    allowed : Range, optional
        The range declared beside the parameter (``# range: ...``).
    where : str
        Prefix for the message (the source of the value and the notebook).

    Returns
    -------
    object
        ``value``.

    Raises
    ------
    ValidationTypeError
        A value of the wrong type (an empty ``-p n=`` is ``None``).
    ValidationError
        A value out of range, or NaN/inf where a number is expected.
    """
    pre = f"{where}: " if where else ""
    if not literal or default is None:
        return value
    shown = describe(value) if value is not None else "an empty value (None)"
    if isinstance(default, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            raise ValidationTypeError(f"{pre}{name} must be a list like its default {describe(default)}, got {shown}")
        kinds = {_kind(v) for v in default}
        kind = kinds.pop() if len(kinds) == 1 else None
        items = list(value)
    elif isinstance(default, Mapping):
        if not isinstance(value, Mapping):
            raise ValidationTypeError(
                f"{pre}{name} must be a mapping like its default {describe(default)}, got {shown}"
            )
        return value
    else:
        kind, items = _kind(default), [value]
    if kind is not None:
        for v in items:
            if not _fits(kind, v):
                what = f"a list of {_PLURAL[kind]}" if isinstance(default, (list, tuple)) else _EXPECT[kind]
                raise ValidationTypeError(
                    f"{pre}{name} must be {what} like its default {describe(default)}, got {shown}"
                )
            if kind in ("int", "float") and not math.isfinite(float(v)):
                raise ValidationError(f"{pre}{name} must be a finite number, got {shown}")
    rng = allowed if allowed is not None else implicit_range(name, default)
    if rng is not None:
        for v in items:
            if _is_real(v) and float(v) not in rng:
                raise ValidationError(f"{pre}{name} must be {rng}, got {shown}")
    return value


def check_grey_images(x: Any, size: int | None = None, name: str = "images") -> np.ndarray:
    """Validate a batch of square grey images in [0, 1] and return it as float32 ``(n, H, W)``.

    The input check of the single-channel models (:class:`cflib.models.cnn_zoo.SmallCNN`,
    :class:`cflib.models.diffusion.LatentDiffusion`) and of the toy chest X-ray data set. Values within 1e-3 outside [0, 1] (rounding of a
    renderer) are clipped; anything further out is an error.

    Parameters
    ----------
    x : array-like
        Images of shape ``(n, H, W)`` or ``(n, 1, H, W)``.
    size : int, optional
        Required side length ``H = W``.
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray
        ``float32`` array of shape ``(n, H, W)``.

    Raises
    ------
    TypeError
        If ``x`` is not numeric.
    ValueError
        If the shape, the side length or the value range is wrong, or values are not finite.
    """
    try:
        arr = np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be a numeric array of shape (n, H, W), got {type(x).__name__}") from exc
    if arr.ndim == 4 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 3 or arr.shape[1] != arr.shape[2] or arr.shape[0] == 0:
        raise ValueError(f"{name} must have shape (n, H, W) or (n, 1, H, W) with H == W and n >= 1, got {np.shape(x)}")
    if size is not None and arr.shape[1] != size:
        raise ValueError(
            f"{name} must be {size}x{size} images (the size the model was built for), got {arr.shape[1]}x{arr.shape[2]}"
        )
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values")
    lo, hi = float(arr.min()), float(arr.max())
    if lo < -1e-3 or hi > 1 + 1e-3:
        raise ValueError(
            f"{name} must have values in [0, 1], got [{lo:.3g}, {hi:.3g}]; rescale with (x + 1) / 2 if they are in [-1, 1]"
        )
    return np.clip(arr, 0.0, 1.0)


def check_positive(value: Any, name: str) -> float:
    """A finite real number ``> 0`` (``bool`` refused): a bandwidth, a scale, a standard deviation.

    Parameters
    ----------
    value : float
    name : str

    Returns
    -------
    float

    Raises
    ------
    ValidationTypeError
        Not a real number.
    ValidationError
        NaN, inf, zero or negative.
    """
    v = check_real(value, name)
    if v <= 0:
        raise ValidationError(f"{name} must be a positive number, got {value!r}")
    return v


def check_names(value: Any, name: str, known: Sequence[str] | None = None, *, what: str = "variable") -> list[str]:
    """One name or a sequence of names (a bare ``str`` is one name), each one of ``known``.

    Parameters
    ----------
    value : str or iterable of str
    name : str
        The argument's name, for the message.
    known : sequence of str, optional
        The allowed names (``None``: any string).
    what : str
        What the names denote, for the message (``"variable"``, ``"node"``, ``"parent"``).

    Returns
    -------
    list of str

    Raises
    ------
    ValidationTypeError
        Not a string or an iterable of strings.
    ValidationError
        A name that is not in ``known`` (the known ones are listed).
    """
    if isinstance(value, str):
        names = [value]
    elif value is None or isinstance(value, (bytes, Mapping)) or not hasattr(value, "__iter__"):
        raise ValidationTypeError(
            f"{name} must be a {what} name or a list of them, got {describe(value)} ({type(value).__name__})"
        )
    else:
        names = list(value)
    bad = [v for v in names if not isinstance(v, str)]
    if bad:
        raise ValidationTypeError(
            f"{name} must hold {what} names (str), got {describe(bad[0])} ({type(bad[0]).__name__})"
        )
    if known is not None:
        unknown = [v for v in names if v not in known]
        if unknown:
            raise ValidationError(f"{name} names unknown {what}(s) {unknown}; the {what}s are {list(known)}")
    return names


def check_axes(ax: Any, name: str = "ax") -> Any:
    """``None`` or a matplotlib ``Axes`` (the ``ax=`` argument of a ``plot`` method).

    Parameters
    ----------
    ax : matplotlib.axes.Axes or None
    name : str

    Returns
    -------
    matplotlib.axes.Axes or None

    Raises
    ------
    ValidationTypeError
        Anything else (a figure, a string, an array of axes).
    """
    if ax is None:
        return None
    from matplotlib.axes import Axes

    if not isinstance(ax, Axes):
        raise ValidationTypeError(f"{name} must be a matplotlib Axes or None, got {describe(ax)} ({type(ax).__name__})")
    return ax


def check_alpha(alpha: Any, name: str = "alpha") -> float:
    """Validate a significance level.

    Parameters
    ----------
    alpha : float
        The level to check.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    float
        ``alpha`` as a float.

    Raises
    ------
    TypeError
        If ``alpha`` is not a real number (``bool`` included).
    ValueError
        If ``alpha`` is not strictly between 0 and 1.
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a float in (0, 1), got {type(alpha).__name__}")
    a = float(alpha)
    if not 0.0 < a < 1.0:
        raise ValueError(f"{name} must be in (0, 1), got {alpha!r}")
    return a


def check_level(level: Any, name: str = "level") -> float:
    """Validate a confidence level (a probability strictly between 0 and 1).

    Parameters
    ----------
    level : float
        The level to check, e.g. ``0.95``.
    name : str
        The argument's name, for the error message.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        As :func:`check_alpha`.
    """
    return check_alpha(level, name)
