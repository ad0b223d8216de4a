"""The axiom metrics in the function form ``x* = f(x, pa, pa*)`` of the axiomatic-soundness chapter.

Monteiro et al. (ICLR 2023, Sec. 3.1-3.2, eqs. 1-3, App. C) score a black-box counterfactual function.
:func:`composition`, :func:`reversibility`, :func:`effectiveness` and :func:`commutativity` are the
metrics of :mod:`cflib.metrics.measures` on ``f`` through one adapter
(:class:`~cflib.scm.adapters.FunctionModel`), returning plain arrays; :func:`soundness_report` runs them
all into one long DataFrame (the input of :func:`cflib.metrics.axioms.summarise`). Also here: the partial
function ``f_k`` (App. C), the image sequences of Fig. 1 and the re-scoring of counterfactual images with
other oracles (Tables 2-4).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol, overload, runtime_checkable

import numpy as np
import pandas as pd

from ..scm.adapters import FunctionModel, Parents, check_output, function_name
from ..scm.adapters import check_parent_dict as _check_parent_dict
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_callable,
    check_count,
    check_finite,
    describe,
)
from .image_distance import Distance, image_batch, l1_distance
from .measures import (
    measure_commutativity,
    measure_composition,
    measure_effectiveness,
    measure_reversibility,
)
from .readers import Oracle, check_reader_output
from .samplers import check_values

__all__ = [
    "CounterfactualFunction",
    "partial",
    "composition",
    "reversibility",
    "effectiveness",
    "commutativity",
    "soundness_report",
    "composition_sequence",
    "reversibility_sequence",
    "score_counterfactuals",
]


@runtime_checkable
class CounterfactualFunction(Protocol):
    """``x* = f(x, pa, pa_star)`` on numpy images ``(n, C, H, W)`` in [0, 1] and parent dicts."""

    parent_names: tuple[str, ...]

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray: ...


def partial(f: CounterfactualFunction, parent: str) -> Callable[[np.ndarray, Parents, np.ndarray], np.ndarray]:
    """Partial counterfactual function ``f_k(x, pa, v) = f(x, pa, {**pa, k: v})`` (App. C).

    Parameters
    ----------
    f : CounterfactualFunction
        Full function.
    parent : str
        The parent ``k`` to change.

    Returns
    -------
    callable
    """
    _check_function(f)
    _check_parent(f, parent)

    def fk(x: np.ndarray, pa: Parents, value: np.ndarray) -> np.ndarray:
        return check_output(f, f(x, pa, {**pa, parent: np.asarray(value)}), x)

    return fk


# ----------------------------------------------------------------------------------------------------
# The metrics on f, through one adapter
# ----------------------------------------------------------------------------------------------------
def _check_function(f: Any) -> None:
    if not callable(f) or not hasattr(f, "parent_names"):
        raise ValidationTypeError(
            f"f must be a counterfactual function: callable f(x, pa, pa_star) with a parent_names attribute, got {describe(f)}"
        )


def _prepare(f: CounterfactualFunction, x: Any, pa: Any) -> tuple[FunctionModel, dict[str, np.ndarray]]:
    _check_function(f)
    if x is None or isinstance(x, (str, bytes, Mapping)):
        raise ValidationTypeError(
            f"x must be a numeric array of shape (n, C, H, W), got {describe(x)} ({type(x).__name__})"
        )
    try:
        x = np.asarray(x, dtype=np.float32)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"x must be a numeric array of shape (n, C, H, W), got {describe(x)}") from None
    if x.ndim != 4 or len(x) == 0:
        raise ValidationError(f"x must have shape (n, C, H, W) with n >= 1, got {x.shape}")
    check_finite(x, "x")
    image = "x" if "x" not in f.parent_names else "image"
    model = f if isinstance(f, FunctionModel) and f.image == image else FunctionModel(f, image)
    return model, {**_check_parent_dict(pa, f.parent_names, len(x), "pa"), image: x}


def _images_and_parents(f: CounterfactualFunction, x: Any, pa: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    model, obs = _prepare(f, x, pa)
    x = obs.pop(model.image)
    return x, obs


def _check_parent(f: CounterfactualFunction, parent: str) -> None:
    if not isinstance(parent, str):
        raise ValidationTypeError(
            f"parent must be a parent name (str), got {describe(parent)} ({type(parent).__name__})"
        )
    if parent not in f.parent_names:
        raise ValidationError(f"unknown parent name {parent!r}; the function's parents are {list(f.parent_names)}")


def _do_values(do_values: np.ndarray, n: int, name: str = "do_values") -> np.ndarray:
    do_values = check_values(do_values, name)
    if len(do_values) != n:
        raise ValidationError(f"{name} has {len(do_values)} values for {n} images")
    return do_values


def _check_oracles(oracles: Any, name: str, known: Sequence[str]) -> dict[str, Any]:
    """Parent -> an object with ``score(x, target)``, each parent one of ``known``."""
    if not isinstance(oracles, Mapping):
        raise ValidationTypeError(
            f"{name} must be a dict parent name -> oracle, got {describe(oracles)} ({type(oracles).__name__})"
        )
    for k, o in oracles.items():
        if not callable(getattr(o, "score", None)):
            raise ValidationTypeError(
                f"{name}[{k!r}] must be an oracle with a score(x, target) method, got {describe(o)}"
            )
    unknown = set(oracles) - set(known)
    if unknown:
        raise ValidationError(
            f"{name} has unknown parent name(s) {sorted(map(str, unknown))}; the function's parents are {list(known)}"
        )
    return dict(oracles)


def composition(
    f: CounterfactualFunction, x: np.ndarray, pa: Parents, m: int = 10, distance: Distance = l1_distance
) -> np.ndarray:
    """Composition distances ``d(x, f^(j)(x, pa, pa))`` for ``j = 1..m`` (eq. 1): :func:`measure_composition` on ``f``.

    Parameters
    ----------
    f : CounterfactualFunction
        The model, with its noise fixed per image.
    x : numpy.ndarray, shape (n, C, H, W)
        Observed images.
    pa : dict
        Their parents.
    m : int
        Largest power.
    distance : callable
        Per-image distance (default :func:`l1_distance`).

    Returns
    -------
    numpy.ndarray, shape (m, n)
        Row ``j - 1`` is composition^(j).
    """
    model, obs = _prepare(f, x, pa)
    m = check_count(m, "m")
    check_callable(distance, "distance")
    res = measure_composition(model, obs, cycles=m, distances={"d": distance}, image=model.image)
    return np.ascontiguousarray(res.distances["d"].T)


def reversibility(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    parent: str,
    do_values: np.ndarray,
    cycles: int = 5,
    distance: Distance = l1_distance,
) -> np.ndarray:
    """Reversibility distances after ``c = 1..cycles`` cycles ``x -> f(., pa, pa*) -> f(., pa*, pa)`` (eq. 2).

    :func:`measure_reversibility` on ``f``.

    Parameters
    ----------
    f : CounterfactualFunction
        The model.
    x : numpy.ndarray, shape (n, C, H, W)
        Observed images.
    pa : dict
        Their parents.
    parent : str
        Intervened parent ``k``; ``pa* = {**pa, k: do_values}`` is reused in every cycle.
    do_values : numpy.ndarray, shape (n,)
        Counterfactual values of ``parent``.
    cycles : int
        Number of cycles.
    distance : callable
        Per-image distance.

    Returns
    -------
    numpy.ndarray, shape (cycles, n)
        Row ``c - 1`` is reversibility^(c) (after ``2c`` applications).
    """
    model, obs = _prepare(f, x, pa)
    cycles = check_count(cycles, "cycles")
    _check_parent(f, parent)
    check_callable(distance, "distance")
    do = {parent: _do_values(do_values, len(obs[model.image]))}
    res = measure_reversibility(model, obs, do=do, cycles=cycles, distances={"d": distance}, image=model.image)
    return np.ascontiguousarray(res.distances["d"].T)


@overload
def effectiveness(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    parent: str,
    do_values: np.ndarray,
    oracles: Mapping[str, Oracle],
    *,
    return_images: Literal[False] = False,
) -> dict[str, np.ndarray]: ...


@overload
def effectiveness(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    parent: str,
    do_values: np.ndarray,
    oracles: Mapping[str, Oracle],
    *,
    return_images: Literal[True],
) -> tuple[dict[str, np.ndarray], np.ndarray]: ...


def effectiveness(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    parent: str,
    do_values: np.ndarray,
    oracles: Mapping[str, Oracle],
    *,
    return_images: bool = False,
) -> dict[str, np.ndarray] | tuple[dict[str, np.ndarray], np.ndarray]:
    """Effectiveness of a partial intervention on ``parent`` read back by pseudo-oracles (eq. 3).

    :func:`measure_effectiveness` on ``f`` with one intervention.

    Parameters
    ----------
    f : CounterfactualFunction
        The model.
    x : numpy.ndarray, shape (n, C, H, W)
        Observed images.
    pa : dict
        Their parents.
    parent : str
        Intervened parent.
    do_values : numpy.ndarray, shape (n,)
        Its counterfactual values.
    oracles : dict
        Parent name -> oracle with ``score(x, target)``; every parent that has an oracle is measured
        (the intervened one against ``do_values``, the others against their unchanged values).
    return_images : bool
        Also return the counterfactual images.

    Returns
    -------
    dict
        Measured parent -> per-image score (correctness or absolute error); and the images if asked.
    """
    model, obs = _prepare(f, x, pa)
    _check_parent(f, parent)
    _check_oracles(oracles, "oracles", f.parent_names)
    do = {parent: _do_values(do_values, len(obs[model.image]))}
    if not oracles:
        xs = model.counterfactual(obs, do)[model.image]
        return ({}, xs) if return_images else {}
    res = measure_effectiveness(model, obs, oracles, do=do, interventions=[parent], image=model.image)
    scores = {k: res.per_image[(parent, k)] for k in oracles}
    return (scores, res.counterfactuals[parent][model.image]) if return_images else scores


def commutativity(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    parent_a: str,
    do_a: np.ndarray,
    parent_b: str,
    do_b: np.ndarray,
    distance: Distance = l1_distance,
) -> np.ndarray:
    """Distance between the two orders of two partial interventions (Lemma C.1): :func:`measure_commutativity` on ``f``.

    Parameters
    ----------
    f : CounterfactualFunction
        The model.
    x : numpy.ndarray
        Observed images.
    pa : dict
        Their parents.
    parent_a, parent_b : str
        The two (different) intervened parents.
    do_a, do_b : numpy.ndarray
        Their counterfactual values.
    distance : callable
        Per-image distance.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    model, obs = _prepare(f, x, pa)
    for p in (parent_a, parent_b):
        _check_parent(f, p)
    if parent_a == parent_b:
        raise ValidationError("parent_a and parent_b must be different parents")
    check_callable(distance, "distance")
    res = measure_commutativity(
        model, obs, {parent_a: do_a}, {parent_b: do_b}, distances={"d": distance}, image=model.image
    )
    return res.distances["d"]


def soundness_report(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    do_values: Mapping[str, np.ndarray],
    oracles: Mapping[str, Oracle],
    *,
    m: int = 10,
    cycles: int = 5,
    labels: Mapping[str, Any] | None = None,
    extra_oracles: Mapping[str, Mapping[str, Oracle]] | None = None,
) -> pd.DataFrame:
    """All soundness metrics for one model (one seed) as a long DataFrame.

    Parameters
    ----------
    f : CounterfactualFunction
        The model with its noise fixed per image.
    x : numpy.ndarray
        Test images.
    pa : dict
        Their parents.
    do_values : dict
        Intervened parent -> counterfactual values (one per image).
    oracles : dict
        Parent -> pseudo-oracle.
    m, cycles : int
        Composition powers and reversibility cycles.
    labels : dict, optional
        Constant columns to add (e.g. ``{"model": "VAE", "seed": 0}``).
    extra_oracles : dict, optional
        Other oracle families (name -> parent -> oracle) that re-score the *same* counterfactual
        images (Tables 2-4).

    Returns
    -------
    pandas.DataFrame
        Columns ``metric`` (composition / reversibility / effectiveness), ``intervened`` (parent or
        ``"null"``), ``measured`` (parent read by an oracle, or ``"image"``), ``step`` (power or
        cycle; 1 for effectiveness), ``oracles`` (``"main"`` or the extra family's name; ``"none"``
        for distances), ``value`` (mean over images; effectiveness x 100) and the labels.
    """
    x, pa = _images_and_parents(f, x, pa)
    if not isinstance(do_values, Mapping):
        raise ValidationTypeError(
            f"do_values must be a dict parent name -> values, got {describe(do_values)} ({type(do_values).__name__})"
        )
    for k, dv in do_values.items():
        _check_parent(f, k)
        _do_values(dv, len(x), f"do_values[{k!r}]")
    _check_oracles(oracles, "oracles", f.parent_names)
    m, cycles = check_count(m, "m"), check_count(cycles, "cycles")
    if labels is not None and not isinstance(labels, Mapping):
        raise ValidationTypeError(
            f"labels must be a dict column -> value, got {describe(labels)} ({type(labels).__name__})"
        )
    if extra_oracles is not None and not isinstance(extra_oracles, Mapping):
        raise ValidationTypeError(
            f"extra_oracles must be a dict family -> (parent -> oracle), got {describe(extra_oracles)}"
        )
    for fam, orc in (extra_oracles or {}).items():
        _check_oracles(orc, f"extra_oracles[{fam!r}]", f.parent_names)
    rows = []
    comp = composition(f, x, pa, m)
    rows += [
        {
            "metric": "composition",
            "intervened": "null",
            "measured": "image",
            "step": j + 1,
            "oracles": "none",
            "value": float(v),
        }
        for j, v in enumerate(comp.mean(1))
    ]
    for k, dv in do_values.items():
        rev = reversibility(f, x, pa, k, dv, cycles)
        rows += [
            {
                "metric": "reversibility",
                "intervened": k,
                "measured": "image",
                "step": c + 1,
                "oracles": "none",
                "value": float(v),
            }
            for c, v in enumerate(rev.mean(1))
        ]
        eff, xs = effectiveness(f, x, pa, k, dv, oracles, return_images=True)
        rows += [
            {
                "metric": "effectiveness",
                "intervened": k,
                "measured": j,
                "step": 1,
                "oracles": "main",
                "value": 100.0 * float(np.mean(s)),
            }
            for j, s in eff.items()
        ]
        ps = {**pa, k: np.asarray(dv).reshape(-1)}
        for fam, orc in (extra_oracles or {}).items():
            rows += [
                {"metric": "effectiveness", "intervened": k, "measured": j, "step": 1, "oracles": fam, "value": v}
                for j, v in score_counterfactuals(xs, ps, orc).items()
            ]
    df = pd.DataFrame(rows)
    for key, val in (labels or {}).items():
        df[key] = val
    return df


# ----------------------------------------------------------------------------------------------------
# Image sequences for the figures, and re-scoring counterfactuals with other oracles
# ----------------------------------------------------------------------------------------------------
def composition_sequence(f: CounterfactualFunction, x: np.ndarray, pa: Parents, m: int = 9) -> np.ndarray:
    """Images ``x, f(x), f^(2)(x), ..., f^(m)(x)`` under the null intervention (Fig. 1a).

    Parameters
    ----------
    f : CounterfactualFunction
        The model.
    x : numpy.ndarray, shape (n, C, H, W)
        Observed images.
    pa : dict
        Their parents.
    m : int
        Number of applications.

    Returns
    -------
    numpy.ndarray, shape (n, m + 1, C, H, W)
    """
    x, pa = _images_and_parents(f, x, pa)
    out, y = [x], x
    for _ in range(check_count(m, "m")):
        y = check_output(f, f(y, pa, pa), x)
        out.append(y)
    return np.stack(out, 1)


def reversibility_sequence(
    f: CounterfactualFunction, x: np.ndarray, pa: Parents, parent: str, do_values: np.ndarray, cycles: int = 4
) -> np.ndarray:
    """Images ``x, f(x, pa, pa*), f(., pa*, pa), f(., pa, pa*), ...`` over ``cycles`` cycles (Fig. 1c).

    Returns
    -------
    numpy.ndarray, shape (n, 2 * cycles + 1, C, H, W)
    """
    x, pa = _images_and_parents(f, x, pa)
    _check_parent(f, parent)
    ps = {**pa, parent: _do_values(do_values, len(x))}
    out, y = [x], x
    for _ in range(check_count(cycles, "cycles")):
        y = check_output(f, f(y, pa, ps), x)
        out.append(y)
        y = check_output(f, f(y, ps, pa), x)
        out.append(y)
    return np.stack(out, 1)


def score_counterfactuals(x_star: np.ndarray, targets: Parents, oracles: Mapping[str, Oracle]) -> dict[str, float]:
    """Mean oracle score (x 100) of counterfactual images against their target parents.

    Lets Tables 2-4 re-score the *same* counterfactuals with other pseudo-oracles.

    Parameters
    ----------
    x_star : numpy.ndarray
        Counterfactual images.
    targets : dict
        Parent -> values the images should show.
    oracles : dict
        Parent -> oracle.

    Returns
    -------
    dict
        Parent -> accuracy (%) or mean absolute error (x 100).
    """
    n = len(image_batch(x_star, "x_star"))
    if not isinstance(targets, Mapping):
        raise ValidationTypeError(
            f"targets must be a dict parent name -> values, got {describe(targets)} ({type(targets).__name__})"
        )
    _check_oracles(oracles, "oracles", list(oracles))
    unknown = set(oracles) - set(targets)
    if unknown:
        raise ValidationError(f"oracles has parent name(s) {sorted(map(str, unknown))} with no target")
    for k in oracles:
        _do_values(targets[k], n, f"targets[{k!r}]")
    out = {}
    for k, o in oracles.items():
        per = np.asarray(o.score(x_star, targets[k]))
        check_reader_output(per, n, f"the oracle of {k!r} ({function_name(o)}) returned")
        out[k] = 100.0 * float(np.mean(per))
    return out
