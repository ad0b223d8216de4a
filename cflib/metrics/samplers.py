"""Intervention samplers of the axiom metrics: where the counterfactual parent values come from.

* :class:`InterventionSampler` -- another value or bin than the factual one (the benchmark's protocol,
  Melistas et al.);
* :class:`MarginalSampler` / :func:`sample_do_values` -- the training marginal (the axiomatic-soundness
  protocol, Monteiro et al.), optionally forcing a change;
* :func:`draw_interventions` -- the intervened values of the metrics: ``do`` values where given, else one
  sampler draw per variable.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np

from ..runtime import as_generator
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_count,
    check_finite,
    check_names,
    describe,
)

__all__ = ["Sampler", "InterventionSampler", "MarginalSampler", "sample_do_values"]


class Sampler(Protocol):
    """Draws one counterfactual value per unit: ``sample(var, factual, rng) -> (n,)``."""

    def sample(self, var: str, factual: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray: ...


def sample_do_values(
    train_values: np.ndarray, n: int, seed: int | np.random.Generator | None = 0, *, current: np.ndarray | None = None
) -> np.ndarray:
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
    train_values = check_values(train_values, "train_values")
    n = check_count(n, "n")
    if current is not None:
        current = check_values(current, "current")
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


def check_values(v: Any, name: str) -> np.ndarray:
    """Observed values of one variable, flattened: at least one, no NaN or inf.

    Parameters
    ----------
    v : array-like
        The values.
    name : str
        The argument's name, for the message.

    Returns
    -------
    numpy.ndarray
        The values as a flat array.

    Raises
    ------
    ValidationTypeError
        ``None``, a string, a mapping or a callable.
    ValidationError
        No values, NaN or inf.
    """
    if v is None or isinstance(v, (str, bytes, Mapping)) or callable(v):
        raise ValidationTypeError(f"{name} must be an array of values, got {describe(v)} ({type(v).__name__})")
    arr = np.asarray(v).reshape(-1)
    if arr.size == 0:
        raise ValidationError(f"{name} must not be empty: give at least one value")
    check_finite(arr, name)
    return arr


def _value_map(values: Any, name: str) -> dict[str, np.ndarray]:
    """A non-empty mapping variable name -> its observed values (checked by :func:`check_values`)."""
    if not isinstance(values, Mapping):
        raise ValidationTypeError(
            f"{name} must be a mapping parent name -> values, got {describe(values)} ({type(values).__name__})"
        )
    if not values:
        raise ValidationError(f"{name} must map at least one parent name to its values, got an empty mapping")
    return {k: check_values(v, f"{name}[{k!r}]") for k, v in values.items()}


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
        factual = check_values(factual, "factual")
        return sample_do_values(
            self.train_values[var], len(factual), rng, current=factual if var in self.force_change else None
        )


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
            k: np.linspace(v.min(), v.max(), self.n_bins + 1)[1:-1]
            for k, v in self.observed.items()
            if k not in self.discrete
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
        f = check_values(factual, "factual")
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


def draw_interventions(
    obs: Mapping[str, Any],
    do: Mapping[str, Any] | None,
    sampler: Sampler | None,
    names: Sequence[str],
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Intervened values per name: ``do[name]`` when given, else one sampler draw (in ``names`` order).

    Parameters
    ----------
    obs : mapping
        Factual values of every variable.
    do : mapping or None
        Fixed intervened values.
    sampler : Sampler or None
        Draws the values of the names not in ``do``.
    names : sequence of str
        The variables to intervene on.
    rng : numpy.random.Generator
        Randomness of the sampler.

    Returns
    -------
    dict
        Name -> intervened values.

    Raises
    ------
    ValidationError
        A name that is not in ``obs``, or one with neither a ``do`` value nor a sampler.
    """
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


def check_sampler(sampler: Any) -> None:
    """Refuse a ``sampler`` that is neither ``None`` nor an object with a ``sample(var, factual, rng)`` method.

    Parameters
    ----------
    sampler : object
        The candidate sampler.

    Returns
    -------
    None

    Raises
    ------
    ValidationTypeError
        An object without a callable ``sample``.
    """
    if sampler is not None and not callable(getattr(sampler, "sample", None)):
        raise ValidationTypeError(
            f"sampler must have a sample(var, factual, rng) method (an InterventionSampler or MarginalSampler), got {describe(sampler)}"
        )
