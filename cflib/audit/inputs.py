"""The inputs of a tabular audit, checked and prepared: arguments, missing values, outcome, predictions.

Each check raises one line naming the argument at fault and the fix.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from ..fairness.sfm import StandardFairnessModel
from ..results import check_alpha
from ..validation import check_count, check_real

__all__ = [
    "binary_outcome",
    "checked_predictions",
    "counterfactual_frame",
    "decisions",
    "missing_values",
    "one_line",
    "positive_column",
    "predictor",
    "validate_arguments",
]


def one_line(text: Any, limit: int = 300) -> str:
    """An error text on one line, at most about ``limit`` characters, never cut inside a word.

    A longer text keeps its whole sentences that fit (else its whole words) and ends with `` [...]``.

    Parameters
    ----------
    text : object
        The message (an exception is read with ``str``).
    limit : int
        Characters kept at most, before the `` [...]`` mark.

    Returns
    -------
    str
    """
    flat = " ".join(str(text).split())
    if len(flat) <= limit:
        return flat
    head = flat[: limit + 1]
    cut = head.rfind(". ")
    if cut >= limit // 3:
        return flat[: cut + 1] + " [...]"
    cut = head.rfind(" ")
    return (flat[:cut] if cut > 0 else flat[:limit]).rstrip(" ,;:") + " [...]"


def _class_index(classes: Sequence[Any], label: Any) -> int | None:
    """Where ``label`` is among ``classes`` (equal, else equal as stripped text, as :func:`binary_outcome` reads it)."""
    for i, c in enumerate(classes):
        if c == label:
            return i
    for i, c in enumerate(classes):
        if str(c).strip() == str(label).strip():
            return i
    return None


def positive_column(predict: Any, y1: Any = None) -> tuple[int | None, str]:
    """Which output of the model the audit scores as P(y = y1), and that choice in words (for the report).

    An estimator with ``predict_proba`` is read at the column of ``y1`` in its ``classes_``; when ``y1`` is not a
    class (or not given) but the classes are 0/1 (or False/True), at the column of class 1 (a model fitted on
    ``y == y1``); any other model is refused. An estimator with
    ``predict`` only gives ``1{predict == y1}`` (its labels as they are without ``y1``). A callable is taken to
    return P(y = y1) (a score in [0, 1]) or the 0/1 decision itself.

    Parameters
    ----------
    predict : callable or estimator
        The model.
    y1 : scalar, optional
        The positive label of the outcome.

    Returns
    -------
    (int or None, str)
        The positive class's place in ``classes_``, which is its ``predict_proba`` column (``-1``, the last column,
        for ``predict_proba`` without ``classes_``; ``None`` for a callable or ``predict`` without ``classes_``), and
        the description.

    Raises
    ------
    ValueError
        ``y1`` is not among the estimator's classes, or an estimator whose classes are not 0/1 is given no ``y1``.
    """
    if not (hasattr(predict, "predict_proba") or hasattr(predict, "predict")):
        label = "1" if y1 is None else repr(y1)
        return None, f"the callable's output, read as P(y = {label}) or as the decision"
    classes = getattr(predict, "classes_", None)
    if not hasattr(predict, "predict_proba") and classes is None:
        return None, "predict (the model's outputs as they are: no classes_ to find y1 in)"
    shown = None if classes is None else [c.item() if isinstance(c, np.generic) else c for c in classes]
    if shown is None:
        if y1 is not None:
            raise ValueError(
                f"predict: the estimator has no classes_ to find y1={y1!r} in; pass a callable frame -> P(y = {y1!r}) "
                "instead"
            )
        return -1, "predict_proba's last column (the model has no classes_)"
    binary = set(shown) <= {0, 1} and 1 in shown
    at = None if y1 is None else _class_index(shown, y1)
    if at is not None:
        named = f"class {shown[at]!r} = y1"
    elif binary:  # fitted on 1{y == y1} (or on a 0/1 outcome): its class 1 is y1
        at = shown.index(1)
        named = f"class {shown[at]!r}" + ("" if y1 is None else f", the model's coding of y1 = {y1!r}")
    elif y1 is not None:
        raise ValueError(
            f"y1: {y1!r} is not among the model's classes {shown[:10]}; name the class the model predicts for "
            "the favourable outcome (config: roles.y1), or pass a callable frame -> P(y = y1)"
        )
    else:
        raise ValueError(
            f"y1: the model's classes are {shown[:10]}, not 0/1; name the positive one with y1= (config: roles.y1), "
            f"e.g. y1={shown[-1]!r}"
        )
    if not hasattr(predict, "predict_proba"):
        return at, f"predict == {shown[at]!r} ({named} as decision 1)"
    return at, f"predict_proba column {at} ({named}) of classes {shown[:10]}"


def validate_arguments(
    data: Any,
    sfm: Any,
    alpha: Any,
    n_boot: Any,
    epsilon: Any = 0.1,
    seed: Any = 0,
    business_necessity: Any = (),
    threshold: Any = 0.5,
    impute: Any = False,
    reference: Any = None,
) -> tuple[StandardFairnessModel, float, list[Any]]:
    """Check the arguments; return the SFM, alpha and the levels of the attribute (in the data's order).

    Parameters
    ----------
    data : pandas.DataFrame
        The audited rows.
    sfm : StandardFairnessModel
        The roles of the columns.
    alpha : float
        Level of the tests, in (0, 1).
    n_boot : int
        Bootstrap replicates (>= 0).
    epsilon : float
        Tolerated N-TE of CF-CLOT (>= 0).
    seed : int or numpy.random.Generator
        Seed of the random draws.
    business_necessity : sequence of str
        Effects allowed by business necessity (not a string).
    threshold : float
        Decision threshold of the scores, in (0, 1).
    impute : bool
        Whether missing values may be filled.
    reference : scalar, optional
        The baseline level of an attribute with more than two levels.

    Returns
    -------
    (StandardFairnessModel, float, list)
        The roles, alpha and the attribute's levels.

    Raises
    ------
    TypeError, ValueError
        One line naming the argument at fault.
    """
    check_real(epsilon, "epsilon", low=0.0)
    if not isinstance(seed, np.random.Generator):
        check_count(seed, "seed", minimum=0)
    if isinstance(business_necessity, str):
        raise TypeError(
            f"business_necessity must be a list of effects such as ['SE'], got the string {business_necessity!r}"
        )
    if (
        isinstance(threshold, bool)
        or not isinstance(threshold, (int, float, np.floating))
        or not 0 < float(threshold) < 1
    ):
        raise ValueError(
            f"threshold must be a number in (0, 1) (scores at or above it count as decision 1), got {threshold!r}"
        )
    if not isinstance(impute, (bool, np.bool_)):
        raise TypeError(f"impute must be true or false, got {impute!r}")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError("data is empty: the audit needs rows")
    if not isinstance(sfm, StandardFairnessModel):
        raise TypeError(
            f"sfm must be a cflib.fairness.StandardFairnessModel (the x, z, w, y roles), got {type(sfm).__name__}"
        )
    alpha = check_alpha(alpha)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise ValueError(f"n_boot must be a whole number >= 0, got {n_boot!r}")
    missing = [c for c in (sfm.x, *sfm.z, *sfm.w) if c not in data.columns]
    if missing:
        raise ValueError(f"sfm: role column(s) {missing} are not in data; its columns are {list(data.columns)[:20]}")
    levels = list(pd.unique(data[sfm.x].dropna()))
    if len(levels) < 2:
        raise ValueError(f"sfm.x: the protected attribute {sfm.x!r} is constant; the audit compares its levels")
    if reference is not None:
        if sfm.x0 is not None:
            raise ValueError(
                "reference: give either sfm's x0 and x1 (one pair) or reference (every level against it), not both"
            )
        if reference not in levels:
            raise ValueError(
                f"reference: {reference!r} is not a level of {sfm.x!r}; its levels are {sorted(map(str, levels))[:20]}"
            )
    elif sfm.x0 is None and len(levels) == 2 and not (set(levels) <= {0, 1} or set(levels) <= {False, True}):
        raise ValueError(
            f"sfm.x: {sfm.x!r} has levels {sorted(map(str, levels))}; name the baseline and comparison with "
            "x0= and x1= (config: roles.x0, roles.x1), or the baseline with reference="
        )
    if sfm.x0 is not None:
        absent = [v for v in (sfm.x0, sfm.x1) if v not in levels]
        if absent:
            raise ValueError(
                f"sfm.x0/x1: {absent} are not levels of {sfm.x!r}; its levels are {sorted(map(str, levels))[:20]}"
            )
    return sfm, alpha, levels


def missing_values(data: pd.DataFrame, sfm: StandardFairnessModel, impute: bool) -> tuple[pd.DataFrame, dict[str, int]]:
    """Refuse missing values (naming each column and its count) or, with ``impute``, fill them in the roles' columns.

    Infinite values are always refused, and so are missing values of the attribute or the outcome.

    Parameters
    ----------
    data : pandas.DataFrame
        The audited rows.
    sfm : StandardFairnessModel
        The roles; only their columns are looked at.
    impute : bool
        Fill missing values (median of a number, most frequent level of a category) instead of refusing them.

    Returns
    -------
    (pandas.DataFrame, dict)
        The data (a filled copy when something was imputed) and the number of values filled per column.

    Raises
    ------
    ValueError
        Infinite values, or missing values that cannot or may not be filled.
    """
    cols = list(dict.fromkeys([sfm.x, *sfm.z, *sfm.w] + ([sfm.y] if sfm.y in data.columns else [])))
    inf = {c: int(np.isinf(data[c].to_numpy(float)).sum()) for c in cols if pd.api.types.is_float_dtype(data[c])}
    inf = {c: n for c, n in inf.items() if n}
    if inf:
        raise ValueError(
            "data: infinite values in "
            + ", ".join(f"{c!r} ({n})" for c, n in inf.items())
            + "; replace or drop those rows first"
        )
    na = {c: int(data[c].isna().sum()) for c in cols}
    na = {c: n for c, n in na.items() if n}
    if not na:
        return data, {}
    fixed = [c for c in (sfm.x, sfm.y) if c in na]
    if fixed:
        raise ValueError(
            f"data: missing values in {', '.join(f'{c!r} ({na[c]})' for c in fixed)}; rows without the "
            f"protected attribute or the outcome cannot be audited: drop them (data.dropna(subset={fixed}))"
        )
    if not impute:
        raise ValueError(
            "data: missing values in "
            + ", ".join(f"{c!r} ({n} of {len(data)} rows)" for c, n in na.items())
            + "; drop those rows, or pass impute=True (config: impute: true) to fill them (median of a "
            "number, most frequent level of a category)"
        )
    out = data.copy()
    for c in na:
        s = out[c]
        fill = s.median() if pd.api.types.is_numeric_dtype(s) and s.dtype != bool else s.mode(dropna=True).iloc[0]
        out[c] = s.fillna(fill)
    return out, na


def binary_outcome(values: pd.Series, y1: Any, column: str) -> np.ndarray:
    """The outcome as numbers: ``1{y == y1}`` when ``y1`` is given, True/False as 1/0, numbers as they are.

    Parameters
    ----------
    values : pandas.Series
        The outcome column.
    y1 : scalar or None
        The positive label.
    column : str
        The column's name, for the messages.

    Returns
    -------
    numpy.ndarray
        Floats, one per row.

    Raises
    ------
    ValueError
        ``y1`` is not a value of the column, or the column holds labels and no ``y1`` is given.
    """
    if y1 is not None:
        vals = list(pd.unique(values))
        hit = values == y1
        if not hit.any():
            hit = values.astype(str).str.strip() == str(y1).strip()
        if not hit.any():
            raise ValueError(
                f"y1: {y1!r} is not a value of the outcome column {column!r}; its values are {sorted(map(str, vals))[:10]}"
            )
        return hit.to_numpy(dtype=float)
    if values.dtype == bool:
        return values.to_numpy(dtype=float)
    if not pd.api.types.is_numeric_dtype(values) or isinstance(values.dtype, pd.CategoricalDtype):
        vals = sorted(map(str, pd.unique(values)))
        raise ValueError(
            f"sfm.y: the outcome column {column!r} holds labels {vals[:10]}, not numbers; name the positive "
            f"one with y1= (config: roles.y1), e.g. y1={vals[-1]!r}"
        )
    return values.to_numpy(dtype=float)


def decisions(y_hat: np.ndarray, threshold: float) -> tuple[np.ndarray | None, str]:
    """0/1 decisions from the predictions: labels as they are, scores in [0, 1] at the threshold, else none.

    Parameters
    ----------
    y_hat : numpy.ndarray
        The predictions.
    threshold : float
        Scores at or above it are decision 1.

    Returns
    -------
    (numpy.ndarray or None, str)
        The decisions (``None`` when the predictions are neither labels nor probabilities) and how they were read.
    """
    if set(np.unique(y_hat)) <= {0.0, 1.0}:
        return y_hat.astype(int), "the predictions (0/1 labels)"
    if y_hat.min() >= 0.0 and y_hat.max() <= 1.0:
        return (y_hat >= threshold).astype(int), f"score >= {threshold}"
    return None, "none (predictions outside [0, 1] are neither labels nor probabilities)"


def predictor(
    predict: Any, data: pd.DataFrame, columns: Sequence[str], y1: Any = None
) -> Callable[[pd.DataFrame], np.ndarray]:
    """A function frame -> 1-d predictions from a callable or a scikit-learn estimator.

    Parameters
    ----------
    predict : callable or estimator
        A callable on a DataFrame returning P(y = y1) (or the 0/1 decision), or an estimator: its
        ``predict_proba`` column of the class ``y1`` (:func:`positive_column`) when it has one, else
        ``1{predict == y1}``.
    data : pandas.DataFrame
        The audited rows (the estimator's fitted columns must be among them).
    columns : sequence of str
        The columns given to an estimator that does not record the columns it was fitted on.
    y1 : scalar, optional
        The positive label of the outcome, looked up in the estimator's ``classes_``.

    Returns
    -------
    callable
        ``frame -> numpy.ndarray``.

    Raises
    ------
    TypeError, ValueError
        ``predict`` is neither, the estimator was fitted on columns the data lack, or its classes do not hold
        ``y1`` (:func:`positive_column`).
    """
    if hasattr(predict, "predict_proba") or hasattr(predict, "predict"):
        cols = list(getattr(predict, "feature_names_in_", columns))
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise ValueError(f"predict: the estimator was fitted on columns {missing} that data lacks")
        at, _ = positive_column(predict, y1)
        if at is None:
            return lambda d: np.asarray(predict.predict(d[cols]))
        if hasattr(predict, "predict_proba"):
            return lambda d: np.asarray(predict.predict_proba(d[cols]))[:, at]
        label = predict.classes_[at]
        return lambda d: (np.asarray(predict.predict(d[cols])) == label).astype(float)
    if callable(predict):
        return lambda d: np.asarray(predict(d))
    raise TypeError(
        f"predict must be a callable on a DataFrame or a scikit-learn estimator, got {type(predict).__name__}"
    )


def checked_predictions(values: Any, n: int, name: str) -> np.ndarray:
    """Predictions as one finite float per row, or one line saying what is wrong with them.

    Parameters
    ----------
    values : array-like
        What the model returned (a column vector is accepted).
    n : int
        The number of rows.
    name : str
        Where the values come from, for the messages.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` floats.

    Raises
    ------
    TypeError, ValueError
        The wrong shape, a non-numeric dtype, NaN or infinite values.
    """
    v = np.asarray(values)
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1 or v.size != n:
        raise ValueError(f"{name} must give one prediction per row ({n}), got shape {v.shape}")
    if not np.issubdtype(v.dtype, np.number) and v.dtype != bool:
        raise TypeError(f"{name} must give numeric predictions, got dtype {v.dtype}")
    v = v.astype(float)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} gave NaN or infinite predictions")
    return v


def counterfactual_frame(model: Any, rows: pd.DataFrame, x: str, target: NDArray[Any]) -> pd.DataFrame:
    """Each row's counterfactual row under ``do(x = target)``, as the in-memory audit forms it.

    Parameters
    ----------
    model : CounterfactualModel or callable
        An object with ``counterfactual(obs: dict, do: dict) -> dict`` of columns, or a function ``frame -> frame``
        called with ``x`` already set to ``target``.
    rows : pandas.DataFrame
        The factual rows (all their columns).
    x : str
        The protected attribute.
    target : numpy.ndarray
        Each row's intervened level.

    Returns
    -------
    pandas.DataFrame
        The counterfactual rows, ``x`` at ``target``.

    Raises
    ------
    TypeError, ValueError
        The model is neither form, returns the wrong shape, fails, or leaves ``x`` off the intervened level.
    """
    try:
        if hasattr(model, "counterfactual"):
            out = model.counterfactual({c: rows[c].to_numpy() for c in rows.columns}, do={x: target})
            if not isinstance(out, Mapping):
                raise TypeError(f"counterfactual(obs, do) must return a dict of columns, got {type(out).__name__}")
            cf = rows.copy()
            for c, v in out.items():
                if c in cf.columns:
                    v = np.asarray(v)
                    if v.shape[:1] != (len(rows),):
                        raise ValueError(f"column {c!r} has {v.shape[:1]} rows, expected {len(rows)}")
                    cf[c] = v.reshape(len(rows), -1)[:, 0] if v.ndim > 1 else v
        elif callable(model):
            cf = model(rows.assign(**{x: target}))
            if not isinstance(cf, pd.DataFrame) or len(cf) != len(rows):
                raise ValueError(f"the function must return a DataFrame of {len(rows)} rows")
        else:
            raise TypeError("counterfactual must implement counterfactual(obs, do) or be a function frame -> frame")
    except (ValueError, TypeError) as exc:
        text = one_line(exc)
        raise type(exc)(text if text.startswith("counterfactual") else f"counterfactual: {text}") from None
    if not (cf[x].to_numpy() == target).all():
        raise ValueError(f"counterfactual: the returned rows do not hold {x!r} at the intervened level")
    return cf
