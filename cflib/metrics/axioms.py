"""Soundness metrics of counterfactual models from Pearl's axioms: the one implementation in cflib.

Monteiro et al. (ICLR 2023, Sec. 3.1-3.2, App. B-C; Tables 1-4) define the metrics for a black-box
counterfactual function ``x* = f(x, pa, pa*)``; Melistas et al. (*Benchmarking counterfactual image
generation*, Sec. 3.3 (a)-(b), Eqs. 7-8) apply them to deep SCMs. Both are computed here, on any
:class:`~cflib.scm.protocol.CounterfactualModel` (``abduct`` / ``predict`` / ``counterfactual`` over a
dict of named variables):

* :func:`measure_composition` -- ``d(x, f_null^(m)(x))`` for ``m = 1..M``: the null intervention
  applied ``m`` times, every variable of the output fed back in;
* :func:`measure_reversibility` -- ``d(x, p^(c)(x))`` with ``p`` = intervene, then set the intervened
  variables back to their factual values, for cycles ``c = 1..C``;
* :func:`measure_effectiveness` -- readers (pseudo-oracles or anti-causal predictors) read each
  attribute back from the counterfactual image, against the counterfactual value of that attribute;
* :func:`measure_commutativity` -- Lemma C.1: two interventions in either order give the same image.

Each returns a result object that keeps the per-image arrays. The interventions come from ``do``
values or from a sampler passed in (:class:`InterventionSampler`: another value or bin, the
benchmark's protocol; :class:`MarginalSampler`: the training marginal, the axiomatic-soundness
protocol). The image distance is :func:`l1_distance` (App. B: mean absolute pixel difference, on
the 0-255 scale for images in [0, 1]); it checks a declared value range instead of clipping.

The function form of the axiomatic-soundness chapter -- :func:`composition`, :func:`reversibility`,
:func:`effectiveness`, :func:`commutativity` on ``f(x, pa, pa*)`` -- is the same computation through
one adapter (:class:`~cflib.scm.adapters.FunctionModel`), returning plain arrays.
:func:`soundness_report` runs them all into one long DataFrame, :func:`summarise` averages over images
then reports mean and population std over seeds, :func:`table1` lays it out like the paper's Table 1,
and :func:`average_rank` / :func:`rank_change` implement the ranking of Tables 2-4.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd
from scipy import stats

from ..runtime import as_generator
from ..scm.adapters import FunctionModel, ParentEncoder, Parents, _check_output, _function_name
from ..scm.adapters import ImageModelAdapter as ModelFunction
from ..scm.adapters import check_parent_dict as _check_parent_dict
from ..scm.protocol import CounterfactualModel
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_callable,
    check_choice,
    check_count,
    check_finite,
    check_names,
    check_positive,
    check_real,
    describe,
    warn,
)

__all__ = [
    "Parents",
    "CounterfactualFunction",
    "CounterfactualModel",
    "Oracle",
    "AttributePredictor",
    "Sampler",
    "ParentEncoder",
    "ModelFunction",
    "FunctionModel",
    "partial",
    "l1_distance",
    "InterventionSampler",
    "MarginalSampler",
    "sample_do_values",
    "score",
    "AbsoluteError",
    "CompositionResult",
    "ReversibilityResult",
    "EffectivenessResult",
    "CommutativityResult",
    "measure_composition",
    "measure_reversibility",
    "measure_effectiveness",
    "measure_commutativity",
    "composition",
    "reversibility",
    "effectiveness",
    "commutativity",
    "soundness_report",
    "summarise",
    "table1",
    "average_rank",
    "rank_change",
    "effectiveness_ranks",
    "composition_sequence",
    "reversibility_sequence",
    "score_counterfactuals",
]

Distance = Callable[[np.ndarray, np.ndarray], np.ndarray]


@runtime_checkable
class CounterfactualFunction(Protocol):
    """``x* = f(x, pa, pa_star)`` on numpy images ``(n, C, H, W)`` in [0, 1] and parent dicts."""

    parent_names: tuple[str, ...]

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray: ...


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


class Sampler(Protocol):
    """Draws one counterfactual value per unit: ``sample(var, factual, rng) -> (n,)``."""

    def sample(self, var: str, factual: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray: ...


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
        return f(x, pa, {**pa, parent: np.asarray(value)})

    return fk


# ----------------------------------------------------------------------------------------------------
# The image distance
# ----------------------------------------------------------------------------------------------------
def l1_distance(a: np.ndarray, b: np.ndarray, scale: float = 255.0, value_range: tuple[float, float] | None = (0.0, 1.0)) -> np.ndarray:
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
    lo, hi = _value_range(value_range)
    a, b = _image_batch(a, "a"), _image_batch(b, "b")
    if a.shape != b.shape:
        raise ValidationError(f"image batches a and b must have the same shape, got {a.shape} and {b.shape}")
    for name, v in (("a", a), ("b", b)):
        v_lo, v_hi = v.min(), v.max()  # one pass each: NaN and inf show up in them
        if not (np.isfinite(v_lo) and np.isfinite(v_hi)):
            check_finite(v, name)
        if v_lo < lo or v_hi > hi:
            raise ValidationError(f"{name} has intensities in [{v_lo:.4g}, {v_hi:.4g}], outside the declared value_range "
                                  f"[{lo}, {hi}]: rescale the images or pass value_range=None")
    return scale * np.abs(a - b).reshape(len(a), -1).mean(1)


def _image_batch(v: Any, name: str) -> np.ndarray:
    if v is None or isinstance(v, (str, bytes, Mapping)):
        raise ValidationTypeError(f"{name} must be a numeric array with one row per image, got {describe(v)} ({type(v).__name__})")
    try:
        arr = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"{name} must be a numeric array with one row per image, got {describe(v)}") from None
    if arr.ndim == 0 or arr.size == 0:
        raise ValidationError(f"{name} must hold at least one image (shape (n, ...) with n >= 1), got shape {arr.shape}")
    return arr


def _value_range(value_range: Any) -> tuple[float, float]:
    if value_range is None:
        return -np.inf, np.inf
    if isinstance(value_range, (str, bytes)) or not isinstance(value_range, Sequence) or len(value_range) != 2:
        raise ValidationTypeError(f"value_range must be a pair (low, high) or None, got {describe(value_range)}")
    lo, hi = check_real(value_range[0], "value_range[0]"), check_real(value_range[1], "value_range[1]")
    if not lo < hi:
        raise ValidationError(f"value_range must have low < high, got {tuple(value_range)}")
    return lo, hi


# ----------------------------------------------------------------------------------------------------
# Intervention samplers
# ----------------------------------------------------------------------------------------------------
def sample_do_values(train_values: np.ndarray, n: int, seed: int | np.random.Generator | None = 0, *, current: np.ndarray | None = None) -> np.ndarray:
    """Counterfactual values drawn from the empirical training marginal, independently per image.

    The paper (official code) draws from the marginal without excluding the current value, which
    is why the identity model still scores ~10 % digit accuracy. Passing ``current`` redraws
    values equal to it (a forced change) instead.

    Parameters
    ----------
    train_values : numpy.ndarray
        The parent's training values.
    n : int
        Number of draws.
    seed : int, Generator or None
        Randomness.
    current : numpy.ndarray, optional
        Current values to avoid (discrete parents).

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    train_values = _values(train_values, "train_values")
    n = check_count(n, "n")
    if current is not None:
        current = _values(current, "current")
        if len(current) != n:
            raise ValidationError(f"current must hold one value per draw (n = {n}), got {len(current)}")
    rng = as_generator(seed)
    out = rng.choice(train_values, size=n)
    if current is not None:
        if len(np.unique(train_values)) < 2:
            raise ValidationError("cannot force a change: train_values has a single distinct value")
        same = out == current
        while same.any():  # rejection: a handful of rounds, the mass of one value is < 1
            out[same] = rng.choice(train_values, size=int(same.sum()))
            same = out == current
    return out


def _values(v: Any, name: str) -> np.ndarray:
    """Observed values of one variable, flattened: at least one, no NaN or inf."""
    if v is None or isinstance(v, (str, bytes, Mapping)) or callable(v):
        raise ValidationTypeError(f"{name} must be an array of values, got {describe(v)} ({type(v).__name__})")
    arr = np.asarray(v).reshape(-1)
    if arr.size == 0:
        raise ValidationError(f"{name} must not be empty: give at least one value")
    check_finite(arr, name)
    return arr


def _value_map(values: Any, name: str) -> dict[str, np.ndarray]:
    """A non-empty mapping variable name -> its observed values (checked by :func:`_values`)."""
    if not isinstance(values, Mapping):
        raise ValidationTypeError(f"{name} must be a mapping parent name -> values, got {describe(values)} ({type(values).__name__})")
    if not values:
        raise ValidationError(f"{name} must map at least one parent name to its values, got an empty mapping")
    return {k: _values(v, f"{name}[{k!r}]") for k, v in values.items()}


class MarginalSampler:
    """The axiomatic-soundness protocol as a sampler: values from the training marginal (:func:`sample_do_values`).

    Parameters
    ----------
    train_values : mapping
        Parent name -> its training values.
    force_change : bool or sequence of str
        Redraw values equal to the factual one (for all parents, or for the named ones).
    """

    def __init__(self, train_values: Mapping[str, np.ndarray], force_change: bool | Sequence[str] = False) -> None:
        _value_map(train_values, "train_values")
        self.train_values = {k: np.asarray(v) for k, v in train_values.items()}
        if isinstance(force_change, (bool, np.bool_)) or force_change is None:
            self.force_change = set(self.train_values) if force_change else set()
        else:
            self.force_change = set(check_names(force_change, "force_change", list(self.train_values), what="parent"))

    def sample(self, var: str, factual: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One value per unit from the training marginal of ``var``.

        Parameters
        ----------
        var : str
            Parent to intervene on.
        factual : numpy.ndarray
            Its factual values (their number sets the number of draws).
        rng : numpy.random.Generator or int, optional
            Randomness.

        Returns
        -------
        numpy.ndarray
        """
        if var not in self.train_values:
            raise ValidationError(f"cannot intervene on {var!r}: the sampler knows {sorted(self.train_values)}")
        factual = _values(factual, "factual")
        return sample_do_values(self.train_values[var], len(factual), rng, current=factual if var in self.force_change else None)


class InterventionSampler:
    """Draw counterfactual parent values that differ from the factual ones (the benchmark's official protocol).

    Parameters
    ----------
    observed : mapping
        Name -> observed values (the test set's): the support interventions are drawn from.
    discrete : sequence of str
        Names of categorical / binary parents (another value is drawn).
    n_bins : int
        Continuous parents: the new value must fall in another of ``n_bins`` equal-width bins.
    """

    def __init__(self, observed: Mapping[str, np.ndarray], discrete: Sequence[str] = (), n_bins: int = 10) -> None:
        _value_map(observed, "observed")
        self.observed = {k: np.asarray(v) for k, v in observed.items()}
        self.discrete = set(check_names(discrete, "discrete", list(self.observed), what="parent"))
        self.n_bins = check_count(n_bins, "n_bins", minimum=2)
        self.edges = {
            k: np.linspace(v.min(), v.max(), self.n_bins + 1)[1:-1] for k, v in self.observed.items() if k not in self.discrete
        }

    def bin(self, var: str, values: np.ndarray) -> np.ndarray:
        """Category of ``values`` of ``var`` (the value itself for discrete parents).

        Parameters
        ----------
        var : str
            Parent name.
        values : numpy.ndarray
            Its values.

        Returns
        -------
        numpy.ndarray of int
        """
        self._check(var)
        v = np.asarray(values)
        return v.astype(int) if var in self.discrete else np.searchsorted(self.edges[var], v, side="right")

    def _check(self, var: str) -> None:
        if not isinstance(var, str) or var not in self.observed:
            raise ValidationError(f"cannot intervene on {var!r}: the sampler knows {sorted(self.observed)}")

    def sample(self, var: str, factual: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One counterfactual value per unit, different from its factual value (or bin).

        Parameters
        ----------
        var : str
            Parent to intervene on.
        factual : numpy.ndarray
            Factual values of ``var``.
        rng : numpy.random.Generator or int, optional
            Randomness.

        Returns
        -------
        numpy.ndarray
            Same length as ``factual``.
        """
        self._check(var)
        f = _values(factual, "factual")
        rng = as_generator(rng)
        if var in self.discrete:
            u = np.unique(self.observed[var])
            if len(u) < 2:
                raise ValidationError(f"{var!r} takes a single observed value: nothing to intervene to")
            pos = np.searchsorted(u, f)
            r = rng.integers(0, len(u) - 1, len(f))
            return u[r + (r >= pos)]  # uniform over the other values
        pool = self.observed[var]
        pool_bin = self.bin(var, pool)
        fb = self.bin(var, f)
        out = pool[rng.integers(0, len(pool), len(f))]
        todo = self.bin(var, out) == fb
        for _ in range(200):  # rejection: a few rounds suffice unless one bin holds nearly everything
            if not todo.any():
                break
            out[todo] = pool[rng.integers(0, len(pool), todo.sum())]
            todo = self.bin(var, out) == fb
        if todo.any():
            others = [pool[pool_bin != b] for b in fb[todo]]
            out[todo] = [o[rng.integers(0, len(o))] for o in others]
        return out


def _draw(obs: Mapping[str, Any], do: Mapping[str, Any] | None, sampler: Sampler | None, names: Sequence[str], rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Intervened values per name: ``do[name]`` when given, else one sampler draw (in ``names`` order)."""
    out = {}
    for k in names:
        if k not in obs:
            raise ValidationError(f"cannot intervene on {k!r}: it is not in obs ({', '.join(map(str, obs))})")
        if do is not None and k in do:
            out[k] = np.asarray(do[k])
        elif sampler is not None:
            out[k] = sampler.sample(k, np.asarray(obs[k]), rng)
        else:
            raise ValidationError(f"no value for the intervention on {k!r}: pass do={{{k!r}: values}} or a sampler")
    return out


def _check_sampler(sampler: Any) -> None:
    if sampler is not None and not callable(getattr(sampler, "sample", None)):
        raise ValidationTypeError(f"sampler must have a sample(var, factual, rng) method (an InterventionSampler or MarginalSampler), got {describe(sampler)}")


def _check_model(model: Any) -> None:
    if not isinstance(model, CounterfactualModel):
        raise ValidationTypeError(f"model must implement the CounterfactualModel protocol (abduct, predict, counterfactual), got {type(model).__name__}; "
                        "wrap a function f(x, pa, pa_star) in cflib.scm.adapters.FunctionModel")


def _check_steps(m: int, name: str) -> int:
    return check_count(m, name)


def _distances(distances: Mapping[str, Distance] | None) -> dict[str, Distance]:
    if distances is not None and not isinstance(distances, Mapping):
        raise ValidationTypeError(f"distances must be a mapping name -> d(a, b), got {describe(distances)} ({type(distances).__name__})")
    out = dict(distances) if distances is not None else {"l1": l1_distance}
    if not out:
        raise ValidationError("distances must name at least one distance")
    for k, d in out.items():
        check_callable(d, f"distances[{k!r}]")
    return out


def _distance(name: str, d: Distance, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``d(a, b)``, refused (naming the distance) unless it is one finite number per image."""
    out = np.asarray(d(a, b))
    if out.shape != (len(a),):
        raise ValidationError(f"the distance {name!r} ({_function_name(d)}) returned shape {out.shape}, expected ({len(a)},): one value per image")
    check_finite(out, f"the output of the distance {name!r}")
    return out


def _check_obs(obs: Any, image: str, what: str = "obs") -> int:
    """A mapping of variables holding the image variable ``image``; returns the number of units."""
    if not isinstance(obs, Mapping):
        raise ValidationTypeError(f"{what} must be a mapping variable name -> values, got {describe(obs)} ({type(obs).__name__})")
    if not isinstance(image, str):
        raise ValidationTypeError(f"image must be a variable name (str), got {describe(image)} ({type(image).__name__})")
    if image not in obs:
        raise ValidationError(f"{what} lacks the image variable {image!r} (variables: {', '.join(map(str, obs))})")
    x = obs[image]
    if x is None or isinstance(x, (str, bytes, Mapping)) or np.ndim(x) == 0 or len(x) == 0:
        raise ValidationError(f"{what}[{image!r}] must hold at least one unit (one row per unit), got {describe(x)}")
    return len(x)


def _check_mapping(value: Any, name: str, obs: Mapping[str, Any]) -> dict[str, Any]:
    """An intervention ``{variable: value(s)}`` on variables of ``obs``."""
    if not isinstance(value, Mapping):
        raise ValidationTypeError(f"{name} must be a mapping variable -> value(s), got {describe(value)} ({type(value).__name__})")
    check_names(list(value), name, list(obs))
    return dict(value)


def _image_out(model: Any, cf: Any, image: str, shape: tuple[int, ...]) -> np.ndarray:
    """The image of a model's counterfactual, refused (naming the model) when missing or mis-shaped."""
    if not isinstance(cf, Mapping) or image not in cf:
        raise ValidationError(f"the counterfactual model {_function_name(model)} returned {describe(cf)}, expected a dict holding {image!r}")
    x = np.asarray(cf[image])
    if x.shape != shape:
        raise ValidationError(f"the counterfactual model {_function_name(model)} returned {image!r} of shape {x.shape}, expected {shape}")
    if x.dtype.kind in "fc" and not np.isfinite(x).all():
        raise ValidationError(f"the counterfactual model {_function_name(model)} returned {int((~np.isfinite(x)).sum())} NaN or infinite value(s) in {image!r}")
    return x


# ----------------------------------------------------------------------------------------------------
# Composition
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CompositionResult:
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
                    rows.append({"distance": name, "cycles": m, "mean": arr[:, m - 1].mean(), "std": arr[:, m - 1].std(ddof=1)})
        return pd.DataFrame(rows)

    def plot(self, ax: Any = None, distance: str | None = None, label: str | None = None) -> Any:
        """Mean distance against the number of cycles with a 95 % band over images."""
        return _plot_cycles(self.distances, self.cycles, "null-intervention cycles m", "composition", ax, distance, label)


def _plot_cycles(distances: dict[str, np.ndarray], cycles: np.ndarray, xlabel: str, metric: str, ax: Any, distance: str | None,
                 label: str | None) -> Any:
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
    cycles = _check_steps(cycles, "cycles")
    distances = _distances(distances)
    _check_obs(obs, image)
    keep_images = check_count(keep_images, "keep_images", minimum=0)
    hold = check_names(hold, "hold", list(obs))
    x0 = np.asarray(obs[image])
    chain = [obs]
    for _ in range(cycles):  # sequential by definition: each application feeds the next
        chain.append(model.counterfactual(chain[-1], {k: chain[-1][k] for k in hold}))
        _image_out(model, chain[-1], image, x0.shape)
    out = {name: np.column_stack([_distance(name, d, x0, np.asarray(c[image])) for c in chain[1:]]) for name, d in distances.items()}
    first = next(iter(out.values()))
    k = min(int(keep_images), len(x0))
    imgs = np.stack([np.asarray(c[image])[:k] for c in chain], axis=1)
    return CompositionResult(statistic=float(first[:, 0].mean()), pvalue=_trend_pvalue(first), distances=out,
                             cycles=np.arange(1, cycles + 1), images=imgs)


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
        return pd.DataFrame([{"distance": name, "cycles": c, "mean": arr[:, c - 1].mean(), "std": arr[:, c - 1].std(ddof=1)}
                             for name, arr in self.distances.items() for c in self.cycles])

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
    cycles = _check_steps(cycles, "cycles")
    distances = _distances(distances)
    _check_obs(obs, image)
    do = None if do is None else _check_mapping(do, "do", obs)
    _check_sampler(sampler)
    names = check_names(parents, "parents", list(obs)) if parents is not None else list(do or {})
    if not names:
        raise ValidationError("give the intervention: do={parent: values} or parents=[...] with a sampler")
    forward = _draw(obs, do, sampler, names, as_generator(seed))
    back = {k: np.asarray(obs[k]) for k in forward}
    x0 = np.asarray(obs[image])
    state, out = obs, {name: [] for name in distances}
    for _ in range(cycles):
        state = model.counterfactual(model.counterfactual(state, forward), back)
        _image_out(model, state, image, x0.shape)
        for name, d in distances.items():
            out[name].append(_distance(name, d, x0, np.asarray(state[image])))
    arrays = {name: np.column_stack(v) for name, v in out.items()}
    return ReversibilityResult(statistic=float(next(iter(arrays.values()))[:, 0].mean()), distances=arrays,
                               cycles=np.arange(1, cycles + 1), do=forward)


# ----------------------------------------------------------------------------------------------------
# Effectiveness
# ----------------------------------------------------------------------------------------------------
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
            raise ValidationError(f"{name} must hold 0/1 labels for kind='binary', got values such as {describe(v[~np.isin(v, (0, 1))][:3].tolist())}")
        if kind == "multiclass" and v.dtype.kind in "fc" and not np.all(v == np.round(v)):
            raise ValidationError(f"{name} must hold whole class labels for kind='multiclass', got values such as {describe(v[v != np.round(v)][:3].tolist())}")
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
        raise ValidationTypeError(f"{name} must be an array with one value per image, got {describe(v)} ({type(v).__name__})")
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


def _read(reader: Any, cf: Mapping[str, Any], target: np.ndarray, image: str, attribute: str) -> tuple[float, np.ndarray]:
    """One reader on one counterfactual: an :class:`Oracle` (``score``) or an :class:`AttributePredictor`."""
    n = len(cf[image])
    if callable(getattr(reader, "score", None)):
        per = np.asarray(reader.score(cf[image], target), dtype=np.float64)
        _reader_output(per, n, f"the oracle of {attribute!r} ({_function_name(reader)}) returned")
        return float(per.mean()), per
    ctx = tuple(getattr(reader, "context", ()) or ())
    context = np.column_stack([np.asarray(cf[c], float) for c in ctx]) if ctx else None
    predicted = np.asarray(reader.predict(np.asarray(cf[image]), context))
    what = f"the predictor of {attribute!r} ({_function_name(reader)}) returned"
    _reader_output(predicted, n, what)
    if predicted.dtype.kind in "fc" and not np.isfinite(predicted).all():
        raise ValidationError(f"{what} {int((~np.isfinite(predicted)).sum())} NaN or infinite value(s)")
    target = np.asarray(target)
    return score(reader.kind, np.broadcast_to(target, (n,)) if target.ndim == 0 else target, predicted)


def _reader_output(v: np.ndarray, n: int, what: str) -> None:
    if v.shape != (n,):
        raise ValidationError(f"{what} shape {v.shape}, expected ({n},): one value per image")


def _check_readers(readers: Any, name: str, obs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Attribute -> an oracle (``score``) or a predictor (``kind``, ``predict``, optional ``context`` of variables in ``obs``)."""
    if not isinstance(readers, Mapping) or not readers:
        raise ValidationTypeError(f"{name} must be a non-empty dict attribute -> oracle or predictor, got {describe(readers)}")
    for a, r in readers.items():
        if callable(getattr(r, "score", None)):
            continue
        if not callable(getattr(r, "predict", None)):
            raise ValidationTypeError(f"{name}[{a!r}] must be an oracle (score(x, target)) or a predictor (kind, predict), got {describe(r)}")
        check_choice(getattr(r, "kind", None), f"{name}[{a!r}].kind", ("regression", "multiclass", "binary"))
        ctx = getattr(r, "context", ()) or ()
        if obs is not None:
            check_names(ctx, f"{name}[{a!r}].context", list(obs))
    return dict(readers)


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
        return self.table.stack().rename("score").reset_index().rename(columns={"level_0": "intervention", "level_1": "attribute"})

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
    _check_readers(readers, "readers", obs)
    check_names(list(readers), "readers", list(obs), what="variable")
    do = None if do is None else _check_mapping(do, "do", obs)
    _check_sampler(sampler)
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
        value = _draw(obs, do, sampler, [k], rng)[k]
        cf = model.counterfactual(obs, {k: value})
        _image_out(model, cf, image, np.shape(obs[image]))
        cfs[k], targets[k] = cf, value
        row = {}
        for a, reader in readers.items():
            s, per = _read(reader, cf, value if a == k else cf[a], image, a)
            row[a], per_image[(k, a)] = s, per
            if a == k:
                diag.append(s)
        table[f"do({k})"] = row
    return EffectivenessResult(statistic=float(np.nanmean(diag)) if diag else float("nan"),
                               table=pd.DataFrame(table).T, per_image=per_image, counterfactuals=cfs, targets=targets)


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
        return pd.DataFrame([{"distance": k, "mean": v.mean(), "std": v.std(ddof=1)} for k, v in self.distances.items()])

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


# ----------------------------------------------------------------------------------------------------
# The function form f(x, pa, pa*) (the axiomatic-soundness chapter): the same metrics through one adapter
# ----------------------------------------------------------------------------------------------------
def _check_function(f: Any) -> None:
    if not callable(f) or not hasattr(f, "parent_names"):
        raise ValidationTypeError(f"f must be a counterfactual function: callable f(x, pa, pa_star) with a parent_names attribute, got {describe(f)}")


def _prepare(f: CounterfactualFunction, x: Any, pa: Any) -> tuple[FunctionModel, dict[str, np.ndarray]]:
    _check_function(f)
    if x is None or isinstance(x, (str, bytes, Mapping)):
        raise ValidationTypeError(f"x must be a numeric array of shape (n, C, H, W), got {describe(x)} ({type(x).__name__})")
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
        raise ValidationTypeError(f"parent must be a parent name (str), got {describe(parent)} ({type(parent).__name__})")
    if parent not in f.parent_names:
        raise ValidationError(f"unknown parent name {parent!r}; the function's parents are {list(f.parent_names)}")


def _do_values(do_values: np.ndarray, n: int, name: str = "do_values") -> np.ndarray:
    do_values = _values(do_values, name)
    if len(do_values) != n:
        raise ValidationError(f"{name} has {len(do_values)} values for {n} images")
    return do_values


def _check_oracles(oracles: Any, name: str, known: Sequence[str]) -> dict[str, Any]:
    """Parent -> an object with ``score(x, target)``, each parent one of ``known``."""
    if not isinstance(oracles, Mapping):
        raise ValidationTypeError(f"{name} must be a dict parent name -> oracle, got {describe(oracles)} ({type(oracles).__name__})")
    for k, o in oracles.items():
        if not callable(getattr(o, "score", None)):
            raise ValidationTypeError(f"{name}[{k!r}] must be an oracle with a score(x, target) method, got {describe(o)}")
    unknown = set(oracles) - set(known)
    if unknown:
        raise ValidationError(f"{name} has unknown parent name(s) {sorted(map(str, unknown))}; the function's parents are {list(known)}")
    return dict(oracles)


def composition(f: CounterfactualFunction, x: np.ndarray, pa: Parents, m: int = 10, distance: Distance = l1_distance) -> np.ndarray:
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
    m = _check_steps(m, "m")
    check_callable(distance, "distance")
    res = measure_composition(model, obs, cycles=m, distances={"d": distance}, image=model.image)
    return np.ascontiguousarray(res.distances["d"].T)


def reversibility(f: CounterfactualFunction, x: np.ndarray, pa: Parents, parent: str, do_values: np.ndarray, cycles: int = 5,
                  distance: Distance = l1_distance) -> np.ndarray:
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
    cycles = _check_steps(cycles, "cycles")
    _check_parent(f, parent)
    check_callable(distance, "distance")
    do = {parent: _do_values(do_values, len(obs[model.image]))}
    res = measure_reversibility(model, obs, do=do, cycles=cycles, distances={"d": distance}, image=model.image)
    return np.ascontiguousarray(res.distances["d"].T)


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
    res = measure_commutativity(model, obs, {parent_a: do_a}, {parent_b: do_b}, distances={"d": distance}, image=model.image)
    return res.distances["d"]


# ----------------------------------------------------------------------------------------------------
# Report, Table-1 layout and ranking
# ----------------------------------------------------------------------------------------------------
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
        raise ValidationTypeError(f"do_values must be a dict parent name -> values, got {describe(do_values)} ({type(do_values).__name__})")
    for k, dv in do_values.items():
        _check_parent(f, k)
        _do_values(dv, len(x), f"do_values[{k!r}]")
    _check_oracles(oracles, "oracles", f.parent_names)
    m, cycles = _check_steps(m, "m"), _check_steps(cycles, "cycles")
    if labels is not None and not isinstance(labels, Mapping):
        raise ValidationTypeError(f"labels must be a dict column -> value, got {describe(labels)} ({type(labels).__name__})")
    if extra_oracles is not None and not isinstance(extra_oracles, Mapping):
        raise ValidationTypeError(f"extra_oracles must be a dict family -> (parent -> oracle), got {describe(extra_oracles)}")
    for fam, orc in (extra_oracles or {}).items():
        _check_oracles(orc, f"extra_oracles[{fam!r}]", f.parent_names)
    rows = []
    comp = composition(f, x, pa, m)
    rows += [{"metric": "composition", "intervened": "null", "measured": "image", "step": j + 1, "oracles": "none", "value": float(v)} for j, v in enumerate(comp.mean(1))]
    for k, dv in do_values.items():
        rev = reversibility(f, x, pa, k, dv, cycles)
        rows += [{"metric": "reversibility", "intervened": k, "measured": "image", "step": c + 1, "oracles": "none", "value": float(v)} for c, v in enumerate(rev.mean(1))]
        eff, xs = effectiveness(f, x, pa, k, dv, oracles, return_images=True)
        rows += [{"metric": "effectiveness", "intervened": k, "measured": j, "step": 1, "oracles": "main", "value": 100.0 * float(np.mean(s))} for j, s in eff.items()]
        ps = {**pa, k: np.asarray(dv).reshape(-1)}
        for fam, orc in (extra_oracles or {}).items():
            rows += [{"metric": "effectiveness", "intervened": k, "measured": j, "step": 1, "oracles": fam, "value": v} for j, v in score_counterfactuals(xs, ps, orc).items()]
    df = pd.DataFrame(rows)
    for key, val in (labels or {}).items():
        df[key] = val
    return df


def _check_str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ValidationTypeError(f"{name} must be a name (str), got {describe(value)} ({type(value).__name__})")
    return value


def _frame(df: Any, name: str) -> pd.DataFrame:
    if not isinstance(df, pd.DataFrame):
        raise ValidationTypeError(f"{name} must be a pandas DataFrame, got {describe(df)} ({type(df).__name__})")
    if df.empty:
        raise ValidationError(f"{name} is empty: it needs rows")
    return df


def summarise(df: pd.DataFrame, by: Sequence[str] = ("model",)) -> pd.DataFrame:
    """Mean and population std (ddof = 0) over seeds of the per-seed values, as the paper reports.

    Parameters
    ----------
    df : pandas.DataFrame
        Concatenated :func:`soundness_report` outputs with a ``seed`` column.
    by : sequence of str
        Label columns identifying a model configuration.

    Returns
    -------
    pandas.DataFrame
        One row per configuration, metric, intervened, measured and step, with ``mean``, ``std`` and ``seeds``.
    """
    by = check_names(by, "by", what="column")
    _frame(df, "df")
    keys = [*by, "metric", "intervened", "measured", "step"] + (["oracles"] if "oracles" in df.columns else [])
    missing = [k for k in [*keys, "value"] if k not in df.columns]
    if missing:
        raise ValidationError(f"df lacks column(s) {missing}; expected soundness_report output with labels {list(by)}")
    g = df.groupby(keys, sort=False)["value"]
    return g.agg(mean="mean", std=lambda v: float(np.std(v, ddof=0)), seeds="count").reset_index()


def table1(summary: pd.DataFrame, by: Sequence[str] = ("model",), *, composition_step: int = 1, reversibility_step: int = 1, decimals: int = 2, oracles: str = "main") -> pd.DataFrame:
    """Lay a :func:`summarise` output out like the paper's Table 1: one row per model, "mean (std)" cells.

    Columns: ``composition``, then per intervened parent ``p``: effectiveness of every measured
    parent (``do(p): acc/err q``) and ``do(p): reversibility``.

    Parameters
    ----------
    summary : pandas.DataFrame
        Output of :func:`summarise`.
    by : sequence of str
        Configuration columns (the row index).
    composition_step, reversibility_step : int
        Which power / cycle to show (paper: 1).
    decimals : int
        Rounding.
    oracles : str
        Which oracle family's effectiveness to show.

    Returns
    -------
    pandas.DataFrame
    """
    by = check_names(by, "by", what="column")
    _frame(summary, "summary")
    missing = [k for k in [*by, "metric", "intervened", "measured", "step", "mean", "std"] if k not in summary.columns]
    if missing:
        raise ValidationError(f"summary lacks column(s) {missing}; expected summarise output with labels {list(by)}")
    composition_step, reversibility_step = check_count(composition_step, "composition_step"), check_count(reversibility_step, "reversibility_step")
    decimals = check_count(decimals, "decimals", minimum=0)
    _check_str(oracles, "oracles")
    s = summary
    if "oracles" in s.columns:
        s = s[(s.metric != "effectiveness") | (s.oracles == oracles)]

    def cell(r: pd.Series) -> str:
        return f"{r['mean']:.{decimals}f} ({r['std']:.{decimals}f})"

    parts = []
    c = s[(s.metric == "composition") & (s.step == composition_step)].copy()
    c["column"] = "composition"
    parts.append(c)
    e = s[s.metric == "effectiveness"].copy()
    e["column"] = "do(" + e.intervened + "): " + e.measured
    parts.append(e)
    r = s[(s.metric == "reversibility") & (s.step == reversibility_step)].copy()
    r["column"] = "do(" + r.intervened + "): reversibility"
    parts.append(r)
    long = pd.concat(parts)
    long["cell"] = long.apply(cell, axis=1)
    order = list(dict.fromkeys(long["column"]))
    wide = long.pivot_table(index=list(by), columns="column", values="cell", aggfunc="first", sort=False)
    return wide[[c for c in order if c in wide.columns]]


def average_rank(table: pd.DataFrame, columns: Mapping[str, bool]) -> pd.Series:
    """Average rank over columns, ranking all rows jointly (Tables 2-4 recipe; ties get the mean rank).

    Parameters
    ----------
    table : pandas.DataFrame
        One row per model configuration, numeric columns.
    columns : dict
        Column -> ``True`` if higher is better (accuracy), ``False`` if lower is better (error).

    Returns
    -------
    pandas.Series
        Mean rank per row (1 = best).
    """
    _frame(table, "table")
    if not isinstance(columns, Mapping) or not columns:
        raise ValidationTypeError(f"columns must be a non-empty dict column -> higher_is_better (bool), got {describe(columns)}")
    for c, hib in columns.items():
        if not isinstance(hib, (bool, np.bool_)):
            raise ValidationTypeError(f"columns[{c!r}] must be True (higher is better) or False (lower is better), got {describe(hib)}")
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValidationError(f"table lacks column(s) {missing}")
    nan = [c for c in columns if table[c].isna().any()]
    if nan:
        warn(f"table has missing values in column(s) {nan}: those rows are ranked on their other columns only; fill or drop them for a fair rank")
    ranks = pd.concat([table[c].rank(ascending=not hib, method="average") for c, hib in columns.items()], axis=1)
    return ranks.mean(axis=1)


def effectiveness_ranks(summary: pd.DataFrame, by: Sequence[str], family: str, columns: Mapping[tuple[str, str], bool], *, reference: str = "main") -> pd.DataFrame:
    """Tables 2-4: effectiveness under one oracle family, its average rank and the change from the reference family.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`summarise` output with an ``oracles`` column, restricted to one block of models.
    by : sequence of str
        Columns identifying a model configuration (the rows, ranked jointly).
    family : str
        Oracle family to rank with.
    columns : dict
        ``(intervened, measured) -> higher_is_better`` (True for accuracies, False for errors).
    reference : str
        Family giving the "original rank" (Table 1's oracles).

    Returns
    -------
    pandas.DataFrame
        The effectiveness columns (means), ``avg rank``, ``original rank`` and ``abs diff``.
    """
    by = check_names(by, "by", what="column")
    _frame(summary, "summary")
    missing = [k for k in [*by, "metric", "oracles", "intervened", "measured", "mean"] if k not in summary.columns]
    if missing:
        raise ValidationError(f"summary lacks column(s) {missing}; expected summarise output of soundness reports with extra oracle families")
    _check_str(family, "family")
    _check_str(reference, "reference")
    if not isinstance(columns, Mapping) or not columns:
        raise ValidationTypeError(f"columns must be a non-empty dict (intervened, measured) -> higher_is_better, got {describe(columns)}")
    for key in columns:
        if not (isinstance(key, tuple) and len(key) == 2 and all(isinstance(v, str) for v in key)):
            raise ValidationTypeError(f"columns keys must be pairs (intervened, measured) of names, got {describe(key)}")
    e = summary[summary.metric == "effectiveness"]

    def wide(fam: str) -> pd.DataFrame:
        sub = e[e.oracles == fam]
        if sub.empty:
            raise ValueError(f"no effectiveness rows for oracle family {fam!r}")
        return sub.pivot_table(index=list(by), columns=["intervened", "measured"], values="mean", sort=False)

    w, ref = wide(family), wide(reference)
    cols = dict(columns)
    absent = [k for k in cols if k not in w.columns or k not in ref.columns]
    if absent:
        raise ValidationError(f"columns names (intervened, measured) pair(s) {absent} with no effectiveness rows for {family!r} or {reference!r}")
    out = w[list(cols)].copy()
    out.columns = [f"do({a}): {b}" for a, b in cols]
    named = {f"do({a}): {b}": hib for (a, b), hib in cols.items()}
    ref_t = ref.loc[w.index, list(cols)].copy()
    ref_t.columns = out.columns
    out["avg rank"] = average_rank(out, named)
    out["original rank"] = average_rank(ref_t, named)
    out["abs diff"] = (out["avg rank"] - out["original rank"]).abs()
    return out


def rank_change(rank_a: pd.Series, rank_b: pd.Series) -> float:
    """Mean absolute difference between two average-rank vectors over the same rows (the captions of Tables 2-4)."""
    for name, r in (("rank_a", rank_a), ("rank_b", rank_b)):
        if not isinstance(r, pd.Series):
            raise ValidationTypeError(f"{name} must be a pandas Series (the output of average_rank), got {describe(r)} ({type(r).__name__})")
        if r.empty:
            raise ValidationError(f"{name} is empty: it needs ranked rows")
        if r.isna().any():
            raise ValidationError(f"{name} has {int(r.isna().sum())} missing rank(s)")
    if not rank_a.index.equals(rank_b.index):
        raise ValidationError("rank_a and rank_b must rank the same rows (same index, same order)")
    return float(np.mean(np.abs(rank_a.to_numpy() - rank_b.to_numpy())))


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
    for _ in range(_check_steps(m, "m")):
        y = _check_output(f, f(y, pa, pa), x)
        out.append(y)
    return np.stack(out, 1)


def reversibility_sequence(f: CounterfactualFunction, x: np.ndarray, pa: Parents, parent: str, do_values: np.ndarray, cycles: int = 4) -> np.ndarray:
    """Images ``x, f(x, pa, pa*), f(., pa*, pa), f(., pa, pa*), ...`` over ``cycles`` cycles (Fig. 1c).

    Returns
    -------
    numpy.ndarray, shape (n, 2 * cycles + 1, C, H, W)
    """
    x, pa = _images_and_parents(f, x, pa)
    _check_parent(f, parent)
    ps = {**pa, parent: _do_values(do_values, len(x))}
    out, y = [x], x
    for _ in range(_check_steps(cycles, "cycles")):
        y = _check_output(f, f(y, pa, ps), x)
        out.append(y)
        y = _check_output(f, f(y, ps, pa), x)
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
    n = len(_image_batch(x_star, "x_star"))
    if not isinstance(targets, Mapping):
        raise ValidationTypeError(f"targets must be a dict parent name -> values, got {describe(targets)} ({type(targets).__name__})")
    _check_oracles(oracles, "oracles", list(oracles))
    unknown = set(oracles) - set(targets)
    if unknown:
        raise ValidationError(f"oracles has parent name(s) {sorted(map(str, unknown))} with no target")
    for k in oracles:
        _do_values(targets[k], n, f"targets[{k!r}]")
    out = {}
    for k, o in oracles.items():
        per = np.asarray(o.score(x_star, targets[k]))
        _reader_output(per, n, f"the oracle of {k!r} ({_function_name(o)}) returned")
        out[k] = 100.0 * float(np.mean(per))
    return out
