"""Readers of the effectiveness metric: pseudo-oracles and anti-causal predictors, and their scores.

An :class:`Oracle` scores each counterfactual image against the value it should show; an
:class:`AttributePredictor` reads the attribute back (Melistas et al.'s anti-causal predictors), scored
by :func:`score` (MAE, accuracy or F1). :class:`AbsoluteError` is the exact reader of a variable that is
observed directly; :func:`read_attribute` applies one reader to one counterfactual.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from ..scm.adapters import function_name
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_choice,
    check_finite,
    check_names,
    check_real,
    describe,
)

__all__ = ["Oracle", "AttributePredictor", "score", "AbsoluteError"]


class Oracle(Protocol):
    """A pseudo-oracle: ``score(x, target)`` gives per-image correctness or absolute error."""

    kind: str

    def score(self, x: Any, target: Any) -> np.ndarray: ...


class AttributePredictor(Protocol):
    """An anti-causal predictor ``g_k(x[, context]) -> pa_k`` (the benchmark's effectiveness readers).

    Attributes
    ----------
    kind : {"regression", "multiclass", "binary"}
        Output type (MAE, accuracy or F1).
    context : tuple of str
        Names of other variables it is conditioned on (e.g. ``("i",)`` for ``q(t | x, i)``).
    """

    kind: str
    context: tuple[str, ...]

    def predict(self, images: np.ndarray, context: np.ndarray | None = None) -> np.ndarray:
        """Predicted attribute (values, class labels or 0/1)."""


def score(kind: str, target: np.ndarray, predicted: np.ndarray) -> tuple[float, np.ndarray]:
    """Effectiveness score and its per-image contributions.

    Parameters
    ----------
    kind : {"regression", "multiclass", "binary"}
        MAE, accuracy or F1.
    target, predicted : numpy.ndarray
        Intervened values and predictions.

    Returns
    -------
    (float, numpy.ndarray)
        The score and the per-image absolute error (regression) or correctness (0/1).

    Raises
    ------
    TypeError, ValueError
        An unknown ``kind``, arrays of different shapes, empty, non-numeric or non-finite arrays, class
        labels that are not whole numbers (multiclass) or not 0/1 (binary).
    """
    check_choice(kind, "kind", ("regression", "multiclass", "binary"))
    t, p = _scores(target, "target"), _scores(predicted, "predicted")
    if t.shape != p.shape:
        raise ValidationError(f"target and predicted must have the same shape, got {t.shape} and {p.shape}")
    for name, v in (("target", t), ("predicted", p)):
        if kind == "binary" and not np.isin(v, (0, 1)).all():
            raise ValidationError(
                f"{name} must hold 0/1 labels for kind='binary', got values such as {describe(v[~np.isin(v, (0, 1))][:3].tolist())}"
            )
        if kind == "multiclass" and v.dtype.kind in "fc" and not np.all(v == np.round(v)):
            raise ValidationError(
                f"{name} must hold whole class labels for kind='multiclass', got values such as {describe(v[v != np.round(v)][:3].tolist())}"
            )
    if kind == "regression":
        err = np.abs(t.astype(float) - p.astype(float))
        return float(err.mean()), err
    if kind == "multiclass":
        ok = (t.astype(int) == p.astype(int)).astype(float)
        return float(ok.mean()), ok
    if kind == "binary":
        t, p = t.astype(int), p.astype(int)
        tp = float(((t == 1) & (p == 1)).sum())
        denom = 2 * tp + float(((t == 0) & (p == 1)).sum()) + float(((t == 1) & (p == 0)).sum())
        return (2 * tp / denom if denom else float("nan")), (t == p).astype(float)
    raise AssertionError(kind)  # unreachable: kind was checked


def _scores(v: Any, name: str) -> np.ndarray:
    """A non-empty, numeric, finite array of per-image values (targets, predictions, readings)."""
    if v is None or isinstance(v, (str, bytes, Mapping)):
        raise ValidationTypeError(
            f"{name} must be an array with one value per image, got {describe(v)} ({type(v).__name__})"
        )
    arr = np.asarray(v)
    if arr.dtype.kind not in "biufc":
        raise ValidationTypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    if arr.ndim == 0 or arr.size == 0:
        raise ValidationError(f"{name} must hold one value per image (at least one), got shape {arr.shape}")
    return check_finite(arr, name)


class AbsoluteError:
    """The exact reader of a variable that is observed directly: ``score(x, target) = |x - target|``.

    For models without an image (an SCM over attributes), pass the variable itself as ``image``.
    """

    kind = "regression"

    def score(self, x: Any, target: Any) -> np.ndarray:
        """Per-unit absolute error.

        Parameters
        ----------
        x, target : array-like
            Read values and the values they should have.

        Returns
        -------
        numpy.ndarray

        Raises
        ------
        TypeError, ValueError
            Non-numeric, empty or non-finite values, or a ``target`` that is neither one value nor shaped like ``x``
            (a ``(n, 1)`` target would broadcast to ``(n, n)``).
        """
        x = _scores(x, "x")
        if np.ndim(target) == 0:
            check_real(np.asarray(target).item(), "target")
        target = np.asarray(target) if np.ndim(target) == 0 else _scores(target, "target")
        if target.ndim and x.shape != target.shape:
            raise ValidationError(f"x and target must have the same shape, got {x.shape} and {target.shape}")
        return np.abs(np.asarray(x, dtype=np.float64) - np.asarray(target, dtype=np.float64))


def read_attribute(
    reader: Any, cf: Mapping[str, Any], target: np.ndarray, image: str, attribute: str
) -> tuple[float, np.ndarray]:
    """One reader on one counterfactual: an :class:`Oracle` (``score``) or an :class:`AttributePredictor`.

    Parameters
    ----------
    reader : Oracle or AttributePredictor
        The reader of ``attribute``.
    cf : mapping
        Counterfactual values of every variable.
    target : numpy.ndarray
        The values the image should show.
    image : str
        Name of the image variable.
    attribute : str
        The attribute read, for the messages.

    Returns
    -------
    (float, numpy.ndarray)
        The score and its per-image contributions.
    """
    n = len(cf[image])
    if callable(getattr(reader, "score", None)):
        per = np.asarray(reader.score(cf[image], target), dtype=np.float64)
        check_reader_output(per, n, f"the oracle of {attribute!r} ({function_name(reader)}) returned")
        return float(per.mean()), per
    ctx = tuple(getattr(reader, "context", ()) or ())
    context = np.column_stack([np.asarray(cf[c], float) for c in ctx]) if ctx else None
    predicted = np.asarray(reader.predict(np.asarray(cf[image]), context))
    what = f"the predictor of {attribute!r} ({function_name(reader)}) returned"
    check_reader_output(predicted, n, what)
    if predicted.dtype.kind in "fc" and not np.isfinite(predicted).all():
        raise ValidationError(f"{what} {int((~np.isfinite(predicted)).sum())} NaN or infinite value(s)")
    target = np.asarray(target)
    return score(reader.kind, np.broadcast_to(target, (n,)) if target.ndim == 0 else target, predicted)


def check_reader_output(v: np.ndarray, n: int, what: str) -> None:
    """Refuse a reader's output unless it holds one value per image.

    Parameters
    ----------
    v : numpy.ndarray
        The output.
    n : int
        Number of images.
    what : str
        Who returned it, for the message (``"the oracle of 'digit' (Oracle) returned"``).

    Returns
    -------
    None

    Raises
    ------
    ValidationError
        A shape other than ``(n,)``.
    """
    if v.shape != (n,):
        raise ValidationError(f"{what} shape {v.shape}, expected ({n},): one value per image")


def check_readers(readers: Any, name: str, obs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Attribute -> an oracle (``score``) or a predictor (``kind``, ``predict``, optional ``context`` of variables in ``obs``).

    Parameters
    ----------
    readers : mapping
        The candidate readers.
    name : str
        The argument's name, for the messages.
    obs : mapping, optional
        Variables a predictor's ``context`` may name.

    Returns
    -------
    dict
        The readers.

    Raises
    ------
    ValidationTypeError
        Not a non-empty mapping, or a reader with neither ``score`` nor ``predict``.
    ValidationError
        An unknown ``kind`` or a ``context`` naming a variable not in ``obs``.
    """
    if not isinstance(readers, Mapping) or not readers:
        raise ValidationTypeError(
            f"{name} must be a non-empty dict attribute -> oracle or predictor, got {describe(readers)}"
        )
    for a, r in readers.items():
        if callable(getattr(r, "score", None)):
            continue
        if not callable(getattr(r, "predict", None)):
            raise ValidationTypeError(
                f"{name}[{a!r}] must be an oracle (score(x, target)) or a predictor (kind, predict), got {describe(r)}"
            )
        check_choice(getattr(r, "kind", None), f"{name}[{a!r}].kind", ("regression", "multiclass", "binary"))
        ctx = getattr(r, "context", ()) or ()
        if obs is not None:
            check_names(ctx, f"{name}[{a!r}].context", list(obs))
    return dict(readers)
