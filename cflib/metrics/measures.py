"""The axiom metrics on any :class:`~cflib.scm.protocol.CounterfactualModel`: composition, reversibility,
effectiveness and commutativity, each with a result object that keeps the per-image arrays.

Monteiro et al. (ICLR 2023, Sec. 3.1-3.2, App. B-C) and Melistas et al. (Sec. 3.3 (a)-(b), Eqs. 7-8):

* :func:`measure_composition` -- ``d(x, f_null^(m)(x))`` for ``m = 1..M``: the null intervention
  applied ``m`` times, every variable of the output fed back in;
* :func:`measure_reversibility` -- ``d(x, p^(c)(x))`` with ``p`` = intervene, then set the intervened
  variables back to their factual values, for cycles ``c = 1..C``;
* :func:`measure_effectiveness` -- readers (:mod:`cflib.metrics.readers`) read each attribute back from
  the counterfactual image, against the counterfactual value of that attribute;
* :func:`measure_commutativity` -- Lemma C.1: two interventions in either order give the same image.

The interventions come from ``do`` values or from a sampler (:mod:`cflib.metrics.samplers`); the image
distance is :func:`~cflib.metrics.image_distance.l1_distance` unless others are given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..results import BaseTestResult
from ..runtime import as_generator
from ..scm.adapters import function_name
from ..scm.protocol import CounterfactualModel
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_callable,
    check_count,
    check_finite,
    check_names,
    describe,
)
from .image_distance import Distance, l1_distance
from .readers import check_readers, read_attribute
from .samplers import Sampler, check_sampler, draw_interventions

__all__ = [
    "CompositionResult",
    "ReversibilityResult",
    "EffectivenessResult",
    "CommutativityResult",
    "measure_composition",
    "measure_reversibility",
    "measure_effectiveness",
    "measure_commutativity",
]


def _check_model(model: Any) -> None:
    if not isinstance(model, CounterfactualModel):
        raise ValidationTypeError(
            f"model must implement the CounterfactualModel protocol (abduct, predict, counterfactual), got {type(model).__name__}; "
            "wrap a function f(x, pa, pa_star) in cflib.scm.adapters.FunctionModel"
        )


def _distances(distances: Mapping[str, Distance] | None) -> dict[str, Distance]:
    if distances is not None and not isinstance(distances, Mapping):
        raise ValidationTypeError(
            f"distances must be a mapping name -> d(a, b), got {describe(distances)} ({type(distances).__name__})"
        )
    out: dict[str, Distance] = dict(distances) if distances is not None else {"l1": l1_distance}
    if not out:
        raise ValidationError("distances must name at least one distance")
    for k, d in out.items():
        check_callable(d, f"distances[{k!r}]")
    return out


def _distance(name: str, d: Distance, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``d(a, b)``, refused (naming the distance) unless it is one finite number per image."""
    out = np.asarray(d(a, b))
    if out.shape != (len(a),):
        raise ValidationError(
            f"the distance {name!r} ({function_name(d)}) returned shape {out.shape}, expected ({len(a)},): one value per image"
        )
    check_finite(out, f"the output of the distance {name!r}")
    return out


def _check_obs(obs: Any, image: str, what: str = "obs") -> int:
    """A mapping of variables holding the image variable ``image``; returns the number of units."""
    if not isinstance(obs, Mapping):
        raise ValidationTypeError(
            f"{what} must be a mapping variable name -> values, got {describe(obs)} ({type(obs).__name__})"
        )
    if not isinstance(image, str):
        raise ValidationTypeError(
            f"image must be a variable name (str), got {describe(image)} ({type(image).__name__})"
        )
    if image not in obs:
        raise ValidationError(f"{what} lacks the image variable {image!r} (variables: {', '.join(map(str, obs))})")
    x = obs[image]
    if x is None or isinstance(x, (str, bytes, Mapping)) or np.ndim(x) == 0 or len(x) == 0:
        raise ValidationError(f"{what}[{image!r}] must hold at least one unit (one row per unit), got {describe(x)}")
    return len(x)


def _check_mapping(value: Any, name: str, obs: Mapping[str, Any]) -> dict[str, Any]:
    """An intervention ``{variable: value(s)}`` on variables of ``obs``."""
    if not isinstance(value, Mapping):
        raise ValidationTypeError(
            f"{name} must be a mapping variable -> value(s), got {describe(value)} ({type(value).__name__})"
        )
    check_names(list(value), name, list(obs))
    return dict(value)


def _image_out(model: Any, cf: Any, image: str, shape: tuple[int, ...]) -> np.ndarray:
    """The image of a model's counterfactual, refused (naming the model) when missing or mis-shaped."""
    if not isinstance(cf, Mapping) or image not in cf:
        raise ValidationError(
            f"the counterfactual model {function_name(model)} returned {describe(cf)}, expected a dict holding {image!r}"
        )
    x = np.asarray(cf[image])
    if x.shape != shape:
        raise ValidationError(
            f"the counterfactual model {function_name(model)} returned {image!r} of shape {x.shape}, expected {shape}"
        )
    if x.dtype.kind in "fc" and not np.isfinite(x).all():
        raise ValidationError(
            f"the counterfactual model {function_name(model)} returned {int((~np.isfinite(x)).sum())} NaN or infinite value(s) in {image!r}"
        )
    return x


# ----------------------------------------------------------------------------------------------------
# Composition
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CompositionResult(BaseTestResult):
    """Composition distances ``d(x, f_null^m(x))`` for ``m = 1..M``, per image.

    Attributes
    ----------
    statistic : float
        Mean of the first distance at ``m = 1``.
    pvalue : float
        Page-type trend test across cycles (one-sided Spearman of per-image distance vs ``m``,
        averaged over images and tested against 0 with a t-test); ``nan`` for one cycle.
    distances : dict
        Name -> ``(n, M)`` array.
    cycles : numpy.ndarray
        ``1..M``.
    images : numpy.ndarray
        The images of a few units through the cycles (for figures), ``(k, M + 1, ...)``.
    """

    statistic: float
    pvalue: float
    distances: dict[str, np.ndarray] = field(repr=False)
    cycles: np.ndarray = field(repr=False)
    images: np.ndarray = field(repr=False)

    def at(self, m: int) -> dict[str, np.ndarray]:
        """Per-image distances after ``m`` cycles."""
        if check_count(m, "m") > len(self.cycles):
            raise ValidationError(f"m must be in 1..{len(self.cycles)}, got {m}")
        return {k: v[:, m - 1] for k, v in self.distances.items()}

    def summary(self, cycles: Sequence[int] = (1, 10)) -> pd.DataFrame:
        """Mean and standard deviation over images per distance and number of cycles."""
        cycles = [check_count(m, "cycles") for m in ([cycles] if np.ndim(cycles) == 0 else cycles)]
        rows = []
        for name, arr in self.distances.items():
            for m in cycles:
                if m <= arr.shape[1]:
                    rows.append(
                        {"distance": name, "cycles": m, "mean": arr[:, m - 1].mean(), "std": arr[:, m - 1].std(ddof=1)}
                    )
        return pd.DataFrame(rows)

    def plot(self, ax: Any = None, distance: str | None = None, label: str | None = None) -> Any:
        """Mean distance against the number of cycles with a 95 % band over images."""
        return _plot_cycles(
            self.distances, self.cycles, "null-intervention cycles m", "composition", ax, distance, label
        )


def _plot_cycles(
    distances: dict[str, np.ndarray],
    cycles: np.ndarray,
    xlabel: str,
    metric: str,
    ax: Any,
    distance: str | None,
    label: str | None,
) -> Any:
    import matplotlib.pyplot as plt

    from ..plotting import line_with_band

    ax = plt.gca() if ax is None else ax
    name = distance or next(iter(distances))
    arr = distances[name]
    se = arr.std(0, ddof=1) / np.sqrt(len(arr))
    mean = arr.mean(0)
    line_with_band(cycles, mean, mean - 1.96 * se, mean + 1.96 * se, label=label, ax=ax)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"{metric} ({name})")
    return ax


def _trend_pvalue(first: np.ndarray) -> float:
    """Growth over cycles: per-image Spearman rho of distance vs m, tested > 0 across images."""
    cycles = first.shape[1]
    if cycles < 2:
        return float("nan")
    ranks = stats.rankdata(first, axis=1)
    m_r = stats.rankdata(np.arange(cycles))
    rc = ranks - ranks.mean(1, keepdims=True)
    mc = m_r - m_r.mean()
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = (rc @ mc) / (np.sqrt((rc**2).sum(1)) * np.sqrt((mc**2).sum()))
    rho = rho[np.isfinite(rho)]
    if len(rho) > 1 and np.ptp(rho) > 1e-6:
        return float(stats.ttest_1samp(rho, 0.0, alternative="greater").pvalue)
    return float("nan")


def measure_composition(
    model: CounterfactualModel,
    obs: Mapping[str, Any],
    *,
    cycles: int = 10,
    distances: Mapping[str, Distance] | None = None,
    image: str = "x",
    keep_images: int = 0,
    hold: Sequence[str] = (),
) -> CompositionResult:
    """Composition over ``1..cycles`` null interventions (Monteiro et al. eq. 1; Melistas et al. Eq. 7), per image.

    Each cycle is ``model.counterfactual(state, do)`` with every variable of the previous output fed
    back in; ``do`` sets the ``hold`` variables to the values they already have (Pearl's composition
    axiom), the empty intervention by default.

    Parameters
    ----------
    model : CounterfactualModel
        The model (noise fixed per unit for a stochastic one).
    obs : mapping
        Factual values of every variable.
    cycles : int
        Largest ``m``.
    distances : mapping, optional
        Name -> ``d(a, b) -> (n,)`` on the image; default ``{"l1": l1_distance}``.
    image : str
        Name of the image variable.
    keep_images : int
        Units whose images are kept through the cycles (for figures).
    hold : sequence of str
        Variables intervened on at their current values in each cycle.

    Returns
    -------
    CompositionResult
    """
    _check_model(model)
    cycles = check_count(cycles, "cycles")
    distances = _distances(distances)
    _check_obs(obs, image)
    keep_images = check_count(keep_images, "keep_images", minimum=0)
    hold = check_names(hold, "hold", list(obs))
    x0 = np.asarray(obs[image])
    chain = [obs]
    for _ in range(cycles):  # sequential by definition: each application feeds the next
        chain.append(model.counterfactual(chain[-1], {k: chain[-1][k] for k in hold}))
        _image_out(model, chain[-1], image, x0.shape)
    out = {
        name: np.column_stack([_distance(name, d, x0, np.asarray(c[image])) for c in chain[1:]])
        for name, d in distances.items()
    }
    first = next(iter(out.values()))
    k = min(int(keep_images), len(x0))
    imgs = np.stack([np.asarray(c[image])[:k] for c in chain], axis=1)
    return CompositionResult(
        statistic=float(first[:, 0].mean()),
        pvalue=_trend_pvalue(first),
        distances=out,
        cycles=np.arange(1, cycles + 1),
        images=imgs,
    )


# ----------------------------------------------------------------------------------------------------
# Reversibility
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ReversibilityResult:
    """Reversibility distances ``d(x, p^(c)(x))`` for cycles ``c = 1..C``, per image.

    Attributes
    ----------
    statistic : float
        Mean of the first distance after one cycle.
    distances : dict
        Name -> ``(n, C)`` array.
    cycles : numpy.ndarray
        ``1..C``.
    do : dict
        The intervened values of the forward step.
    """

    statistic: float
    distances: dict[str, np.ndarray] = field(repr=False)
    cycles: np.ndarray = field(repr=False)
    do: dict[str, np.ndarray] = field(repr=False)

    def at(self, c: int) -> dict[str, np.ndarray]:
        """Per-image distances after ``c`` cycles."""
        if check_count(c, "c") > len(self.cycles):
            raise ValidationError(f"c must be in 1..{len(self.cycles)}, got {c}")
        return {k: v[:, c - 1] for k, v in self.distances.items()}

    def summary(self) -> pd.DataFrame:
        """Mean and standard deviation over images per distance and cycle."""
        return pd.DataFrame(
            [
                {"distance": name, "cycles": c, "mean": arr[:, c - 1].mean(), "std": arr[:, c - 1].std(ddof=1)}
                for name, arr in self.distances.items()
                for c in self.cycles
            ]
        )

    def plot(self, ax: Any = None, distance: str | None = None, label: str | None = None) -> Any:
        """Mean distance against the number of cycles with a 95 % band over images."""
        return _plot_cycles(self.distances, self.cycles, "cycles c", "reversibility", ax, distance, label)


def measure_reversibility(
    model: CounterfactualModel,
    obs: Mapping[str, Any],
    *,
    do: Mapping[str, Any] | None = None,
    sampler: Sampler | None = None,
    parents: Sequence[str] | None = None,
    seed: int | np.random.Generator | None = 0,
    cycles: int = 5,
    distances: Mapping[str, Distance] | None = None,
    image: str = "x",
) -> ReversibilityResult:
    """Reversibility over ``c = 1..cycles`` cycles ``state -> do(pa*) -> do(pa)`` (Monteiro et al. eq. 2).

    The backward step sets the intervened variables back to their factual values.

    Parameters
    ----------
    model : CounterfactualModel
        The model.
    obs : mapping
        Factual values of every variable.
    do : mapping, optional
        Intervened variable -> value(s), reused in every cycle.
    sampler : Sampler, optional
        Draws the values of ``parents`` not in ``do``.
    parents : sequence of str, optional
        Variables to intervene on (default: the keys of ``do``).
    seed : int or Generator
        Randomness of the sampler.
    cycles : int
        Number of cycles.
    distances : mapping, optional
        Name -> image distance; default ``{"l1": l1_distance}``.
    image : str
        Name of the image variable.

    Returns
    -------
    ReversibilityResult
    """
    _check_model(model)
    cycles = check_count(cycles, "cycles")
    distances = _distances(distances)
    _check_obs(obs, image)
    do = None if do is None else _check_mapping(do, "do", obs)
    check_sampler(sampler)
    names = check_names(parents, "parents", list(obs)) if parents is not None else list(do or {})
    if not names:
        raise ValidationError("give the intervention: do={parent: values} or parents=[...] with a sampler")
    forward = draw_interventions(obs, do, sampler, names, as_generator(seed))
    back = {k: np.asarray(obs[k]) for k in forward}
    x0 = np.asarray(obs[image])
    state = obs
    out: dict[str, list[np.ndarray]] = {name: [] for name in distances}
    for _ in range(cycles):
        state = model.counterfactual(model.counterfactual(state, forward), back)
        _image_out(model, state, image, x0.shape)
        for name, d in distances.items():
            out[name].append(_distance(name, d, x0, np.asarray(state[image])))
    arrays = {name: np.column_stack(v) for name, v in out.items()}
    return ReversibilityResult(
        statistic=float(next(iter(arrays.values()))[:, 0].mean()),
        distances=arrays,
        cycles=np.arange(1, cycles + 1),
        do=forward,
    )


# ----------------------------------------------------------------------------------------------------
# Effectiveness
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class EffectivenessResult:
    """Effectiveness of one model: every reader under every intervention (Monteiro et al. Table 1; Melistas et al. Tables 3-4).

    Attributes
    ----------
    statistic : float
        Mean over the diagonal cells (reader of the intervened attribute), for ranking only (a summary,
        not a test: there is no p-value).
    table : pandas.DataFrame
        Rows: intervention; columns: read attribute; values: mean score (MAE / accuracy / F1 for
        predictors, the mean oracle score for oracles).
    per_image : dict
        ``(intervention, attribute)`` -> per-image error (regression) or correctness.
    counterfactuals : dict
        Intervention -> counterfactual values of every variable.
    targets : dict
        Intervention -> the intervened values.
    """

    statistic: float
    table: pd.DataFrame
    per_image: dict[tuple[str, str], np.ndarray] = field(repr=False)
    counterfactuals: dict[str, dict[str, np.ndarray]] = field(repr=False)
    targets: dict[str, np.ndarray] = field(repr=False)

    def summary(self) -> pd.DataFrame:
        """Long format: intervention, attribute, score."""
        return (
            self.table.stack()
            .rename("score")
            .reset_index()
            .rename(columns={"level_0": "intervention", "level_1": "attribute"})
        )

    def plot(self, ax: Any = None) -> Any:
        """Heat map of the table."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        vals = self.table.to_numpy(float)
        ax.imshow(vals, cmap="viridis", aspect="auto")
        ax.set_xticks(range(vals.shape[1]), self.table.columns)
        ax.set_yticks(range(vals.shape[0]), self.table.index)
        for (r, c), v in np.ndenumerate(vals):
            ax.text(c, r, f"{v:.3g}", ha="center", va="center", color="w", fontsize=8)
        ax.set_xlabel("read attribute")
        ax.set_ylabel("intervention")
        return ax


def measure_effectiveness(
    model: CounterfactualModel,
    obs: Mapping[str, Any],
    readers: Mapping[str, Any],
    *,
    do: Mapping[str, Any] | None = None,
    sampler: Sampler | None = None,
    interventions: Sequence[str] | None = None,
    seed: int | np.random.Generator | None = 0,
    image: str = "x",
) -> EffectivenessResult:
    """Effectiveness (Monteiro et al. eq. 3; Melistas et al. Eq. 8): each reader on each intervention's counterfactual.

    Each intervention sets one variable; every reader reads its attribute back from the
    counterfactual image and is compared with the intervened value (for the intervened attribute)
    or that attribute's counterfactual value (unchanged, or downstream of the intervention).

    Parameters
    ----------
    model : CounterfactualModel
        The model.
    obs : mapping
        Factual values of every variable.
    readers : mapping
        Attribute -> an :class:`Oracle` (``score(x, target)`` per image) or an
        :class:`AttributePredictor` (``kind``, ``context``, ``predict``; a predictor with ``context``
        gets the counterfactual values of those variables, the paper's ``q(t | x, i*)``).
    do : mapping, optional
        Fixed intervened values per variable (compare models on the same interventions).
    sampler : Sampler, optional
        Draws the values of the interventions not in ``do``, in order, from one generator.
    interventions : sequence of str, optional
        Variables to intervene on, one at a time (default: the keys of ``do`` when no sampler is given,
        else every reader's attribute).
    seed : int or numpy.random.Generator
        Randomness of the sampler.
    image : str
        Name of the image variable.

    Returns
    -------
    EffectivenessResult
    """
    _check_model(model)
    _check_obs(obs, image)
    check_readers(readers, "readers", obs)
    check_names(list(readers), "readers", list(obs), what="variable")
    do = None if do is None else _check_mapping(do, "do", obs)
    check_sampler(sampler)
    rng = as_generator(seed)
    names = check_names(interventions, "interventions") if interventions is not None else []
    names = list(names or (do if do is not None and sampler is None else readers))
    for k in names:
        if k not in obs:
            raise ValidationError(f"cannot intervene on {k!r}: it is not in obs ({', '.join(map(str, obs))})")
    table: dict[str, dict[str, float]] = {}
    per_image: dict[tuple[str, str], np.ndarray] = {}
    cfs: dict[str, dict[str, np.ndarray]] = {}
    targets: dict[str, np.ndarray] = {}
    diag = []
    for k in names:
        value = draw_interventions(obs, do, sampler, [k], rng)[k]
        cf = model.counterfactual(obs, {k: value})
        _image_out(model, cf, image, np.shape(obs[image]))
        cfs[k], targets[k] = cf, value
        row = {}
        for a, reader in readers.items():
            s, per = read_attribute(reader, cf, value if a == k else cf[a], image, a)
            row[a], per_image[(k, a)] = s, per
            if a == k:
                diag.append(s)
        table[f"do({k})"] = row
    return EffectivenessResult(
        statistic=float(np.nanmean(diag)) if diag else float("nan"),
        table=pd.DataFrame(table).T,
        per_image=per_image,
        counterfactuals=cfs,
        targets=targets,
    )


# ----------------------------------------------------------------------------------------------------
# Commutativity
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CommutativityResult:
    """Distance between the two orders of two interventions (Lemma C.1), per image.

    Attributes
    ----------
    statistic : float
        Mean of the first distance.
    distances : dict
        Name -> ``(n,)`` array.
    do_a, do_b : dict
        The two interventions.
    """

    statistic: float
    distances: dict[str, np.ndarray] = field(repr=False)
    do_a: dict[str, np.ndarray] = field(repr=False)
    do_b: dict[str, np.ndarray] = field(repr=False)

    def summary(self) -> pd.DataFrame:
        """Mean and standard deviation over images per distance."""
        return pd.DataFrame(
            [{"distance": k, "mean": v.mean(), "std": v.std(ddof=1)} for k, v in self.distances.items()]
        )

    def plot(self, ax: Any = None, distance: str | None = None) -> Any:
        """Histogram of the per-image distances between the two orders."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        name = distance or next(iter(self.distances))
        ax.hist(self.distances[name], bins=30)
        ax.set_xlabel(f"commutativity ({name})")
        ax.set_ylabel("images")
        return ax


def measure_commutativity(
    model: CounterfactualModel,
    obs: Mapping[str, Any],
    do_a: Mapping[str, Any],
    do_b: Mapping[str, Any],
    *,
    distances: Mapping[str, Distance] | None = None,
    image: str = "x",
) -> CommutativityResult:
    """``d(f_b(f_a(x)), f_a(f_b(x)))`` for two interventions on different variables (Lemma C.1; the official code's test).

    Parameters
    ----------
    model : CounterfactualModel
        The model.
    obs : mapping
        Factual values of every variable.
    do_a, do_b : mapping
        The two interventions (disjoint variables).
    distances : mapping, optional
        Name -> image distance; default ``{"l1": l1_distance}``.
    image : str
        Name of the image variable.

    Returns
    -------
    CommutativityResult
    """
    _check_model(model)
    distances = _distances(distances)
    _check_obs(obs, image)
    do_a, do_b = _check_mapping(do_a, "do_a", obs), _check_mapping(do_b, "do_b", obs)
    if not do_a or not do_b or set(do_a) & set(do_b):
        raise ValidationError("do_a and do_b must be non-empty interventions on different variables")
    shape = np.shape(obs[image])
    ab = _image_out(model, model.counterfactual(model.counterfactual(obs, do_a), do_b), image, shape)
    ba = _image_out(model, model.counterfactual(model.counterfactual(obs, do_b), do_a), image, shape)
    out = {name: _distance(name, d, ab, ba) for name, d in distances.items()}
    return CommutativityResult(statistic=float(next(iter(out.values())).mean()), distances=out, do_a=do_a, do_b=do_b)
