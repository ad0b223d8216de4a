"""The image distance of the axiom metrics: l1 in grey levels (Monteiro et al., App. B).

:func:`l1_distance` is the mean absolute pixel difference per image, on the 0-255 scale for images in
[0, 1]; it checks a declared value range instead of clipping. :func:`image_batch` is the check of an
image batch that the distances of :mod:`cflib.metrics.benchmark_metrics` share.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_finite,
    check_positive,
    check_real,
    describe,
)

__all__ = ["l1_distance"]

#: A per-image distance ``d(a, b) -> (n,)`` between two image batches.
Distance = Callable[[np.ndarray, np.ndarray], np.ndarray]


def l1_distance(
    a: np.ndarray, b: np.ndarray, scale: float = 255.0, value_range: tuple[float, float] | None = (0.0, 1.0)
) -> np.ndarray:
    """Per-image l1 distance of App. B: mean over pixels and channels of ``|a - b|``, times ``scale``.

    Parameters
    ----------
    a, b : numpy.ndarray, shape (n, ...)
        Image batches.
    scale : float
        255 gives the paper's "average pixel intensity by which two images differ" for images in [0, 1].
    value_range : (float, float) or None
        The declared range of the intensities: a value outside it is an error (values are never
        clipped). ``None`` declares no range (e.g. images on the 0-255 scale with ``scale=1``).

    Returns
    -------
    numpy.ndarray, shape (n,)

    Raises
    ------
    TypeError
        Non-numeric images, a non-numeric ``scale`` or ``value_range``.
    ValueError
        Different shapes, empty batches, NaN or inf, a ``scale`` that is not positive, or intensities
        outside ``value_range``.
    """
    scale = check_positive(scale, "scale")
    lo, hi = check_value_range(value_range)
    a, b = image_batch(a, "a"), image_batch(b, "b")
    if a.shape != b.shape:
        raise ValidationError(f"image batches a and b must have the same shape, got {a.shape} and {b.shape}")
    for name, v in (("a", a), ("b", b)):
        v_lo, v_hi = v.min(), v.max()  # one pass each: NaN and inf show up in them
        if not (np.isfinite(v_lo) and np.isfinite(v_hi)):
            check_finite(v, name)
        if v_lo < lo or v_hi > hi:
            raise ValidationError(
                f"{name} has intensities in [{v_lo:.4g}, {v_hi:.4g}], outside the declared value_range "
                f"[{lo}, {hi}]: rescale the images or pass value_range=None"
            )
    return scale * np.abs(a - b).reshape(len(a), -1).mean(1)


def image_batch(v: Any, name: str) -> np.ndarray:
    """A batch of images as float64, refused unless it is numeric with at least one image.

    Parameters
    ----------
    v : array-like, shape (n, ...)
        The images.
    name : str
        The argument's name, for the message.

    Returns
    -------
    numpy.ndarray
        ``float64`` array of the same shape.

    Raises
    ------
    ValidationTypeError
        ``None``, a string, a mapping or non-numeric values.
    ValidationError
        A scalar or an empty batch.
    """
    if v is None or isinstance(v, (str, bytes, Mapping)):
        raise ValidationTypeError(
            f"{name} must be a numeric array with one row per image, got {describe(v)} ({type(v).__name__})"
        )
    try:
        arr = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"{name} must be a numeric array with one row per image, got {describe(v)}") from None
    if arr.ndim == 0 or arr.size == 0:
        raise ValidationError(
            f"{name} must hold at least one image (shape (n, ...) with n >= 1), got shape {arr.shape}"
        )
    return arr


def check_value_range(value_range: Any) -> tuple[float, float]:
    """A declared range of intensities ``(low, high)`` with ``low < high``; ``None`` declares none.

    Parameters
    ----------
    value_range : (float, float) or None
        The declared range.

    Returns
    -------
    (float, float)
        ``(low, high)``, or ``(-inf, inf)`` for ``None``.

    Raises
    ------
    ValidationTypeError
        Not a pair of real numbers.
    ValidationError
        ``low >= high``.
    """
    if value_range is None:
        return -np.inf, np.inf
    if isinstance(value_range, (str, bytes)) or not isinstance(value_range, Sequence) or len(value_range) != 2:
        raise ValidationTypeError(f"value_range must be a pair (low, high) or None, got {describe(value_range)}")
    lo, hi = check_real(value_range[0], "value_range[0]"), check_real(value_range[1], "value_range[1]")
    if not lo < hi:
        raise ValidationError(f"value_range must have low < high, got {tuple(value_range)}")
    return lo, hi
