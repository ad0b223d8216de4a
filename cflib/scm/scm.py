"""Structural causal models with explicit mechanisms: sampling, interventions, counterfactuals.

Counterfactuals follow Pearl's three steps: *abduction* (recover each unit's exogenous noise from
its observed values with the inverse mechanism), *action* (replace the intervened mechanisms by
constants), *prediction* (push the abducted noise through the modified model). For invertible
mechanisms this is exact, so Pearl's axioms (composition, effectiveness, reversibility) hold to
machine precision; the foundations chapter checks this before the image chapters measure how far
learned models fall short of it (Monteiro et al. 2023, Sec. 2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..runtime import as_generator
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_callable,
    check_count,
    check_finite,
    describe,
)
from .graph import CausalGraph

__all__ = ["Mechanism", "SCM"]

Values = dict[str, np.ndarray]


@dataclass(frozen=True)
class Mechanism:
    """A structural assignment ``v = forward(parents, u)`` with exogenous noise ``u``.

    Parameters
    ----------
    forward : callable
        ``forward(pa, u) -> v`` where ``pa`` maps parent names to arrays of length n and ``u`` is
        the noise array.
    noise : callable
        ``noise(rng, n) -> u`` draws n noise values from a ``numpy.random.Generator``.
    inverse : callable, optional
        ``inverse(pa, v) -> u``, the abduction map. Without it the node cannot be abducted.

    Raises
    ------
    TypeError
        ``forward`` or ``noise`` (or a given ``inverse``) is not callable.
    """

    forward: Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]
    noise: Callable[[np.random.Generator, int], np.ndarray]
    inverse: Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray] | None = None

    def __post_init__(self) -> None:
        check_callable(self.forward, "forward")
        check_callable(self.noise, "noise")
        if self.inverse is not None:
            check_callable(self.inverse, "inverse")


def _constant(c: float) -> Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]:
    """The structural assignment of a node set to ``c`` by ``do``: ``c`` for every unit, whatever the parents."""

    def forward(pa: Mapping[str, np.ndarray], u: np.ndarray) -> np.ndarray:
        return np.full(len(u), c)

    return forward


def _units(value: object, what: str, n: int | None = None) -> np.ndarray:
    """One finite float per unit: an ``(n,)`` array (``n >= 1``); ``what`` names it in the message."""
    if value is None or isinstance(value, (str, bytes, Mapping)) or callable(value):
        raise ValidationTypeError(
            f"{what} must be an array of shape (n,), got {describe(value)} ({type(value).__name__})"
        )
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"{what} must be numeric, got {describe(value)}") from None
    if arr.ndim != 1 or arr.size == 0:
        raise ValidationError(f"{what} must have shape (n,) with n >= 1 units, got shape {arr.shape}")
    if n is not None and arr.shape[0] != n:
        raise ValidationError(f"{what} must have length {n} like the other nodes, got shape {arr.shape}")
    return check_finite(arr, what)


def check_mapping(value: object, what: str) -> Mapping:
    """``value`` itself when it is a mapping ``{node: values}``; anything else is refused, naming ``what``.

    Parameters
    ----------
    value : object
        The candidate mapping.
    what : str
        Its name, for the message (``"obs"``, ``"do"``, ``"noise"``).

    Returns
    -------
    collections.abc.Mapping
        ``value``.

    Raises
    ------
    ValidationTypeError
        ``value`` is not a mapping.
    """
    if not isinstance(value, Mapping):
        raise ValidationTypeError(
            f"{what} must be a mapping {{node: values}}, got {describe(value)} ({type(value).__name__})"
        )
    return value


class SCM:
    """A structural causal model over a :class:`CausalGraph` with one mechanism per node.

    Parameters
    ----------
    graph : CausalGraph
        The causal graph.
    mechanisms : mapping of str to Mechanism
        One mechanism per node of ``graph``.

    Raises
    ------
    TypeError
        ``graph`` is not a :class:`CausalGraph`, or ``mechanisms`` is not a mapping of :class:`Mechanism`.
    ValueError
        A node without a mechanism, or a mechanism for a node not in the graph.
    """

    def __init__(self, graph: CausalGraph, mechanisms: Mapping[str, Mechanism]) -> None:
        if not isinstance(graph, CausalGraph):
            raise ValidationTypeError(f"graph must be a CausalGraph, got {type(graph).__name__}")
        check_mapping(mechanisms, "mechanisms")
        missing = [n for n in graph.nodes if n not in mechanisms]
        extra = [n for n in mechanisms if n not in graph.nodes]
        if missing:
            raise ValidationError(f"no mechanism for node(s) {', '.join(missing)}; give one Mechanism per node")
        if extra:
            raise ValidationError(f"mechanism(s) for {', '.join(extra)} which are not nodes of the graph")
        for n, m in mechanisms.items():
            if not isinstance(m, Mechanism):
                raise ValidationTypeError(f"mechanism for {n!r} must be a Mechanism, got {type(m).__name__}")
        self.graph = graph
        self.mechanisms = dict(mechanisms)

    # -- helpers -----------------------------------------------------------------------------
    def _check_values(self, values: Mapping[str, np.ndarray], what: str) -> tuple[Values, int]:
        check_mapping(values, what)
        missing = [n for n in self.graph.nodes if n not in values]
        if missing:
            raise ValidationError(f"{what} lacks node(s) {', '.join(missing)}")
        arrays = {n: _units(values[n], f"{what}[{n!r}]") for n in self.graph.nodes}
        sizes = {n: a.shape[0] for n, a in arrays.items()}
        if len(set(sizes.values())) != 1:
            raise ValidationError(f"{what} has arrays of different lengths: {sizes}")
        return arrays, next(iter(sizes.values()))

    def _check_interventions(
        self, interventions: Mapping[str, object], n: int | None
    ) -> dict[str, np.ndarray | Callable[[Values], object]]:
        check_mapping(interventions, "do")
        out: dict[str, np.ndarray | Callable[[Values], object]] = {}
        for k, v in interventions.items():
            if k not in self.graph.nodes:
                raise ValidationError(
                    f"cannot intervene on {k!r}: not a node of the graph (nodes: {', '.join(self.graph.nodes)})"
                )
            if callable(v):
                out[k] = v
                continue
            try:
                arr = np.asarray(v, dtype=float)
            except (TypeError, ValueError):
                raise ValidationTypeError(
                    f"intervention value for {k!r} must be a number or an array of numbers, got {describe(v)}"
                ) from None
            if arr.ndim > 1 or (n is not None and arr.ndim == 1 and arr.shape[0] != n):
                raise ValidationError(
                    f"intervention value for {k!r} must be a scalar or have length {n}, got shape {arr.shape}"
                )
            out[k] = check_finite(arr, f"intervention value for {k!r}")
        return out

    def _check_noise(self, noise: Mapping[str, np.ndarray], interventions: Mapping[str, object]) -> int:
        check_mapping(noise, "noise")
        callables = any(
            callable(v) for v in interventions.values()
        )  # evaluated on the factual values: every node's noise
        missing = [k for k in self.graph.nodes if k not in noise and (callables or k not in interventions)]
        if missing:
            raise ValidationError(
                f"noise lacks node(s) {', '.join(missing)}; give the noise of every node that is not intervened on"
            )
        keys = [k for k in self.graph.topological_order() if k in noise]
        if not keys:
            raise ValidationError("noise must hold the noise of at least one node (the number of units comes from it)")
        n = len(_units(noise[keys[0]], f"noise[{keys[0]!r}]"))
        for k in keys[1:]:
            _units(noise[k], f"noise[{k!r}]", n)
        return n

    @staticmethod
    def _output(v: object, n: int, what: str, scalar: bool = False) -> np.ndarray:
        """A mechanism's (or a callable intervention's) output: ``n`` finite values, else an error naming it."""
        arr = np.asarray(v, dtype=float)
        if arr.shape != (n,) and not (scalar and arr.shape == ()):
            raise ValidationError(f"{what} returned shape {arr.shape}, expected ({n},)")
        if not np.isfinite(arr).all():
            raise ValidationError(f"{what} returned {int((~np.isfinite(arr)).sum())} NaN or infinite value(s)")
        return arr

    # -- the three operations -------------------------------------------------------------------
    def predict(self, noise: Mapping[str, np.ndarray], do: Mapping[str, object] | None = None) -> Values:
        """Push exogenous noise through the (possibly intervened) model.

        Parameters
        ----------
        noise : mapping
            Noise array per node (length n); intervened nodes may be left out.
        do : mapping, optional
            Interventions ``{node: value}`` with a scalar, an array of length n, or a callable
            ``f(factual_values) -> array`` evaluated on the values the same noise gives without
            intervention (e.g. ``lambda v: v["t"] + 1``).

        Returns
        -------
        dict
            Node -> array of length n.

        Raises
        ------
        TypeError, ValueError
            Noise or interventions that are not mappings, missing or unknown nodes, arrays of the wrong
            length, NaN or inf; a mechanism or callable intervention that returns the wrong shape or NaN.
        """
        do = check_mapping({} if do is None else do, "do")
        n = self._check_noise(noise, do)
        return self._predict(noise, self._check_interventions(do, n), n)

    def _predict(self, noise: Mapping[str, np.ndarray], interventions: Mapping[str, object], n: int) -> Values:
        # Callable interventions are functions of the unit's factual values (e.g. t -> t + 1).
        factual = self._predict(noise, {}, n) if any(callable(v) for v in interventions.values()) else {}
        values: Values = {}
        for node in self.graph.topological_order():
            if node in interventions:
                v = interventions[node]
                v = (
                    self._output(v(factual), n, f"the callable intervention do[{node!r}]", scalar=True)
                    if callable(v)
                    else v
                )
                values[node] = np.broadcast_to(np.asarray(v, dtype=float), (n,)).copy()
            else:
                pa = {p: values[p] for p in self.graph.parents(node)}
                values[node] = self._output(
                    self.mechanisms[node].forward(pa, np.asarray(noise[node])), n, f"the mechanism of {node!r}"
                )
        return values

    def sample(self, n: int, *, seed: int | np.random.Generator | None = None, return_noise: bool = False):
        """Draw ``n`` units from the observational distribution.

        Parameters
        ----------
        n : int
            Number of units (at least 1).
        seed : int or numpy.random.Generator, optional
            Randomness.
        return_noise : bool
            Also return the exogenous noise.

        Returns
        -------
        dict or (dict, dict)
            Values per node, and the noise per node when ``return_noise``.
        """
        n = check_count(n, "n")
        rng = as_generator(seed)
        noise = {node: np.asarray(self.mechanisms[node].noise(rng, n)) for node in self.graph.topological_order()}
        for node, u in noise.items():
            self._output(u, n, f"the noise of the mechanism of {node!r}")
        values = self._predict(noise, {}, n)
        return (values, noise) if return_noise else values

    def do(self, interventions: Mapping[str, object]) -> SCM:
        """The intervened model: mechanisms of the targets replaced by constants.

        Parameters
        ----------
        interventions : mapping
            ``{node: scalar}``.

        Returns
        -------
        SCM
            A new model over the mutilated graph.
        """
        interventions = self._check_interventions(interventions, None)
        mechs = dict(self.mechanisms)
        for k, v in interventions.items():
            if callable(v) or np.ndim(v) != 0:
                raise ValidationError(
                    f"do() needs a scalar value for {k!r}; use counterfactual() for unit-level values"
                )
            c = float(v)
            mechs[k] = Mechanism(forward=_constant(c), noise=self.mechanisms[k].noise, inverse=None)
        return SCM(self.graph.mutilate(interventions), mechs)

    def abduct(self, values: Mapping[str, np.ndarray]) -> Values:
        """Recover each unit's exogenous noise from its observed values.

        Parameters
        ----------
        values : mapping
            Observed value per node (finite arrays of one length n >= 1).

        Returns
        -------
        dict
            Noise per node.

        Raises
        ------
        ValueError
            A node whose mechanism has no inverse, or an inverse that returns the wrong shape or NaN.
        """
        values, n = self._check_values(values, "values")
        return self._abduct(values, n)

    def _abduct(self, values: Values, n: int) -> Values:
        noise: Values = {}
        for node in self.graph.topological_order():
            inv = self.mechanisms[node].inverse
            if inv is None:
                raise ValidationError(f"node {node!r} has no inverse mechanism: its noise cannot be abducted")
            noise[node] = self._output(
                inv({p: values[p] for p in self.graph.parents(node)}, values[node]),
                n,
                f"the inverse mechanism of {node!r}",
            )
        return noise

    def counterfactual(self, obs: Mapping[str, np.ndarray], do: Mapping[str, object]) -> Values:
        """Counterfactual values: abduction, action, prediction (the :class:`~cflib.scm.protocol.CounterfactualModel` protocol).

        Parameters
        ----------
        obs : mapping
            Observed (factual) values per node (finite arrays of one length n >= 1).
        do : mapping
            Interventions ``{node: value}``; scalars, arrays of length n or callables of the factual values
            (e.g. ``{"t": lambda v: v["t"] + 1}``).

        Returns
        -------
        dict
            Counterfactual value per node.
        """
        values, n = self._check_values(obs, "obs")
        interventions = self._check_interventions(do, n)
        return self._predict(self._abduct(values, n), interventions, n)
