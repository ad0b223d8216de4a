"""The inputs of an image audit, checked: the images, their attributes, and the classifier called batch-wise.

Each check raises one line naming the argument and the fix.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...validation import ValidationError, ValidationTypeError, describe

__all__ = ["BATCH", "batched", "check_frame", "check_images", "image_predictor", "per_image"]

#: Images per call of the classifier and of the attribute reader.
BATCH = 256


def check_images(images: Any, name: str = "images") -> np.ndarray:
    """The images as a float32 array ``(n, C, H, W)`` in [0, 1], or one line naming the fix.

    Parameters
    ----------
    images : array-like
        The audited images.
    name : str
        The argument's name, for the messages.

    Returns
    -------
    numpy.ndarray

    Raises
    ------
    cflib.validation.ValidationError, cflib.validation.ValidationTypeError
        Not numeric, the wrong number of axes, NaN or values outside [0, 1].
    """
    if images is None or isinstance(images, (str, bytes, Mapping, pd.DataFrame)) or callable(images):
        raise ValidationTypeError(
            f"{name} must be a numeric array of shape (n, C, H, W) in [0, 1], got {describe(images)} "
            f"({type(images).__name__})"
        )
    try:
        x = np.asarray(images)
    except (TypeError, ValueError):
        raise ValidationTypeError(
            f"{name} must be a rectangular numeric array of shape (n, C, H, W), got {type(images).__name__}"
        ) from None
    if not (np.issubdtype(x.dtype, np.number) or x.dtype == bool):
        raise ValidationTypeError(
            f"{name} must be numeric, got dtype {x.dtype}: convert the images to floats in [0, 1]"
        )
    if x.ndim == 3:
        raise ValidationError(
            f"{name} must have shape (n, C, H, W), got {x.shape}: add the channel axis ({name}[:, None]) for grey images"
        )
    if x.ndim != 4 or min(x.shape) < 1:
        raise ValidationError(f"{name} must have shape (n, C, H, W) with every axis >= 1, got {x.shape}")
    x = x.astype(np.float32, copy=False)
    lo, hi = float(x.min()), float(x.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValidationError(
            f"{name} holds {int((~np.isfinite(x)).sum())} NaN or infinite values: drop or repair those images"
        )
    if lo < 0.0 or hi > 1.0:
        fix = f"divide by 255 ({name} / 255)" if hi <= 255.0 and lo >= 0.0 else "rescale them to [0, 1]"
        raise ValidationError(f"{name} must hold intensities in [0, 1], got values in [{lo:.4g}, {hi:.4g}]: {fix}")
    return x


def check_frame(
    attributes: Any, n: int, attribute: Any, outcome: Any, parents: Any, levels: Any
) -> tuple[pd.DataFrame, Any, Any, list[str], np.ndarray]:
    """The attributes checked against the images: the columns named, the two levels compared, a binary outcome.

    Parameters
    ----------
    attributes : pandas.DataFrame
        One row per image.
    n : int
        The number of images.
    attribute : str
        The sensitive attribute's column.
    outcome : str or None
        The column of the true 0/1 label.
    parents : str or sequence of str
        Columns the generator holds fixed.
    levels : (x0, x1) or None
        The two levels to compare (needed when the attribute has more than two).

    Returns
    -------
    (pandas.DataFrame, x0, x1, list of str, numpy.ndarray)
        The attributes, the two levels, the parents as a list and the mask of the images at either level.

    Raises
    ------
    cflib.validation.ValidationError, cflib.validation.ValidationTypeError
        One line naming the argument at fault.
    """
    if not isinstance(attributes, pd.DataFrame):
        raise ValidationTypeError(
            f"attributes must be a pandas DataFrame with one row per image, got {type(attributes).__name__}"
        )
    if len(attributes) != n:
        raise ValidationError(f"attributes must have one row per image ({n}), got {len(attributes)} rows")
    if not isinstance(attribute, str):
        raise ValidationTypeError(
            f"attribute must be the name (str) of a column of attributes, got {describe(attribute)}"
        )
    if isinstance(parents, str):
        parents = [parents]
    if not isinstance(parents, (list, tuple)) or not all(isinstance(p, str) for p in parents):
        raise ValidationTypeError(f"parents must be a list of column names, got {describe(parents)}")
    parents = list(parents)
    if outcome is not None and not isinstance(outcome, str):
        raise ValidationTypeError(f"outcome must be a column name (str) or None, got {describe(outcome)}")
    cols = [attribute, *parents] + ([outcome] if outcome is not None else [])
    for c, what in (
        [(attribute, "attribute")] + [(p, "parents") for p in parents] + ([(outcome, "outcome")] if outcome else [])
    ):
        if c not in attributes.columns:
            raise ValidationError(
                f"{what}: column {c!r} is not in attributes; its columns are {list(map(str, attributes.columns))[:20]}"
            )
    if attribute in parents or attribute == outcome:  # the outcome may be a parent the generator holds fixed
        raise ValidationError(
            f"attribute {attribute!r} cannot also be the outcome or a parent; name another column for "
            f"outcome={outcome!r} and parents={parents}"
        )
    bad = [c for c in cols if attributes[c].isna().any()]
    if bad:
        raise ValidationError(f"attributes: column(s) {bad} hold missing values; drop those images or fill the values")
    a = attributes[attribute].to_numpy()
    found = list(pd.unique(a))
    if levels is None:
        if len(found) < 2:
            raise ValidationError(
                f"attribute {attribute!r} is constant ({describe(found[0])}): the audit compares two levels"
            )
        if len(found) > 2:
            raise ValidationError(
                f"attribute {attribute!r} has {len(found)} levels {sorted(map(str, found))[:6]}: "
                "name the two to compare with levels=(x0, x1)"
            )
        x0, x1 = sorted(found, key=lambda v: (str(type(v)), v))
    else:
        if (
            isinstance(levels, (str, bytes))
            or not isinstance(levels, Sequence)
            or len(levels) != 2
            or levels[0] == levels[1]
        ):
            raise ValidationError(
                f"levels must be a pair of two different values of {attribute!r} (x0, x1), got {describe(levels)}"
            )
        x0, x1 = levels
        missing = [v for v in (x0, x1) if v not in set(found)]
        if missing:
            raise ValidationError(
                f"levels: {describe(missing)} not found in column {attribute!r}, whose values are {sorted(map(str, found))[:6]}"
            )
    keep = np.isin(a, [x0, x1])
    counts = [(a == v).sum() for v in (x0, x1)]
    if min(counts) < 2:
        raise ValidationError(
            f"attribute {attribute!r} needs at least 2 images at each level, got {dict(zip(map(str, (x0, x1)), map(int, counts), strict=True))}"
        )
    if outcome is not None:
        y = attributes[outcome].to_numpy()[keep]
        if not set(pd.unique(y)) <= {0, 1}:
            raise ValidationError(
                f"outcome: column {outcome!r} must be binary 0/1 (the label the classifier predicts), got values "
                f"{sorted(map(str, pd.unique(y)))[:6]}"
            )
    return attributes, x0, x1, parents, keep


def per_image(fn: Callable[[np.ndarray], Any], x: np.ndarray, name: str) -> np.ndarray:
    """A function of images called in batches of :data:`BATCH`: one value per image, as it returns them.

    Parameters
    ----------
    fn : callable
        ``images -> values`` (a column of shape ``(n, 1)`` is read as ``(n,)``).
    x : numpy.ndarray
        The images.
    name : str
        What ``fn`` is, for the message.

    Returns
    -------
    numpy.ndarray
        ``(n,)``, of the dtype ``fn`` returns.

    Raises
    ------
    cflib.validation.ValidationError
        ``fn`` does not return one value per image.
    """
    outs = []
    for i in range(0, len(x), BATCH):
        part = x[i : i + BATCH]
        v = np.asarray(fn(part))
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1 or v.shape[0] != len(part):
            raise ValidationError(
                f"{name} must return one value per image ({len(part)} for a batch of {len(part)}), got shape {v.shape}"
            )
        outs.append(v)
    return np.concatenate(outs)


def batched(fn: Callable[[np.ndarray], Any], x: np.ndarray, name: str) -> np.ndarray:
    """A function of images called in batches of :data:`BATCH`, its outputs checked: one finite number per image.

    Parameters
    ----------
    fn : callable
        ``images -> values``.
    x : numpy.ndarray
        The images.
    name : str
        What ``fn`` is, for the messages.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` floats.

    Raises
    ------
    cflib.validation.ValidationError, cflib.validation.ValidationTypeError
        The wrong shape, a non-numeric dtype, NaN or infinite values.
    """
    v = per_image(fn, x, name)
    if not (np.issubdtype(v.dtype, np.number) or v.dtype == bool):
        raise ValidationTypeError(f"{name} must return numeric scores or labels, got dtype {v.dtype}")
    v = v.astype(float)
    if not np.isfinite(v).all():
        raise ValidationError(
            f"{name} returned {int((~np.isfinite(v)).sum())} NaN or infinite values; it must give a finite score per image"
        )
    return v


def _module_predictor(module: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A torch module's outputs read as logits: sigmoid of one column, softmax's last class of several."""
    import torch

    def run(x: np.ndarray) -> np.ndarray:
        params = list(module.parameters()) if hasattr(module, "parameters") else []
        device = params[0].device if params else torch.device("cpu")
        was_training = bool(getattr(module, "training", False))
        module.eval()
        try:
            with torch.no_grad():
                out = module(torch.from_numpy(np.ascontiguousarray(x)).to(device)).float().cpu()
        finally:
            module.train(was_training)
        if out.ndim == 2 and out.shape[1] >= 2:
            return torch.softmax(out, dim=1)[:, -1].numpy()
        return torch.sigmoid(out.reshape(out.shape[0], -1)[:, 0] if out.ndim == 2 else out).numpy()

    return run


def image_predictor(predict: Any) -> Callable[[np.ndarray], np.ndarray]:
    """The classifier as a function ``images -> scores``: a callable as it is, a torch module read as logits.

    Parameters
    ----------
    predict : callable or torch.nn.Module

    Returns
    -------
    callable

    Raises
    ------
    cflib.validation.ValidationTypeError
        ``predict`` is neither.
    """
    try:
        import torch

        if isinstance(predict, torch.nn.Module):
            return _module_predictor(predict)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    if not callable(predict):
        raise ValidationTypeError(
            f"predict must be a callable images -> scores or a torch.nn.Module, got {describe(predict)} "
            f"({type(predict).__name__})"
        )
    return predict
