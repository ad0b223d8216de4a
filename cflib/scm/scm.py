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
    """

    forward: Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray]
    noise: Callable[[np.random.Generator, int], np.ndarray]
    inverse: Callable[[Mapping[str, np.ndarray], np.ndarray], np.ndarray] | None = None


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
    ValueError
        A node without a mechanism, or a mechanism for a node not in the graph.
    """

    def __init__(self, graph: CausalGraph, mechanisms: Mapping[str, Mechanism]) -> None:
        if not isinstance(graph, CausalGraph):
            raise TypeError(f"graph must be a CausalGraph, got {type(graph).__name__}")
        missing = [n for n in graph.nodes if n not in mechanisms]
        extra = [n for n in mechanisms if n not in graph.nodes]
        if missing:
            raise ValueError(f"no mechanism for node(s) {', '.join(missing)}; give one Mechanism per node")
        if extra:
            raise ValueError(f"mechanism(s) for {', '.join(extra)} which are not nodes of the graph")
        for n, m in mechanisms.items():
            if not isinstance(m, Mechanism):
                raise TypeError(f"mechanism for {n!r} must be a Mechanism, got {type(m).__name__}")
        self.graph = graph
        self.mechanisms = dict(mechanisms)

    # -- helpers -----------------------------------------------------------------------------
    def _check_values(self, values: Mapping[str, np.ndarray], what: str) -> tuple[Values, int]:
        missing = [n for n in self.graph.nodes if n not in values]
        if missing:
            raise ValueError(f"{what} lacks node(s) {', '.join(missing)}")
        arrays = {n: np.asarray(values[n], dtype=float) for n in self.graph.nodes}
        sizes = {n: a.shape[0] if a.ndim else 1 for n, a in arrays.items()}
        if len(set(sizes.values())) != 1:
            raise ValueError(f"{what} has arrays of different lengths: {sizes}")
        for n, a in arrays.items():
            if np.isnan(a).any():
                raise ValueError(f"{what}[{n!r}] contains NaN")
        return arrays, next(iter(sizes.values()))

    def _check_interventions(self, interventions: Mapping[str, object], n: int | None) -> dict[str, object]:
        out: dict[str, object] = {}
        for k, v in interventions.items():
            if k not in self.graph.nodes:
                raise ValueError(f"cannot intervene on {k!r}: not a node of the graph (nodes: {', '.join(self.graph.nodes)})")
            if callable(v):
                out[k] = v
                continue
            arr = np.asarray(v, dtype=float)
            if arr.ndim > 1 or (n is not None and arr.ndim == 1 and arr.shape[0] != n):
                raise ValueError(f"intervention value for {k!r} must be a scalar or have length {n}, got shape {arr.shape}")
            out[k] = arr
        return out

    # -- the three operations -------------------------------------------------------------------
    def predict(self, noise: Mapping[str, np.ndarray], do: Mapping[str, object] | None = None) -> Values:
        """Push exogenous noise through the (possibly intervened) model.

        Parameters
        ----------
        noise : mapping
            Noise array per node (length n).
        do : mapping, optional
            Interventions ``{node: value}`` with a scalar, an array of length n, or a callable
            ``f(factual_values) -> array`` evaluated on the values the same noise gives without
            intervention (e.g. ``lambda v: v["t"] + 1``).

        Returns
        -------
        dict
            Node -> array of length n.
        """
        n = len(next(iter(noise.values())))
        interventions = self._check_interventions(do or {}, n)
        # Callable interventions are functions of the unit's factual values (e.g. t -> t + 1).
        factual = self.predict(noise) if any(callable(v) for v in interventions.values()) else {}
        values: Values = {}
        for node in self.graph.topological_order():
            if node in interventions:
                v = interventions[node]
                v = v(factual) if callable(v) else v
                values[node] = np.broadcast_to(np.asarray(v, dtype=float), (n,)).copy()
            else:
                pa = {p: values[p] for p in self.graph.parents(node)}
                values[node] = np.asarray(self.mechanisms[node].forward(pa, np.asarray(noise[node])), dtype=float)
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
        if not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"n must be a positive integer, got {n!r}")
        rng = as_generator(seed)
        noise = {node: np.asarray(self.mechanisms[node].noise(rng, int(n))) for node in self.graph.topological_order()}
        values = self.predict(noise)
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
                raise ValueError(f"do() needs a scalar value for {k!r}; use counterfactual() for unit-level values")
            c = float(v)
            mechs[k] = Mechanism(forward=lambda pa, u, c=c: np.full(len(u), c), noise=self.mechanisms[k].noise, inverse=None)
        return SCM(self.graph.mutilate(interventions), mechs)

    def abduct(self, values: Mapping[str, np.ndarray]) -> Values:
        """Recover each unit's exogenous noise from its observed values.

        Parameters
        ----------
        values : mapping
            Observed value per node.

        Returns
        -------
        dict
            Noise per node.

        Raises
        ------
        ValueError
            A node whose mechanism has no inverse.
        """
        values, _ = self._check_values(values, "values")
        noise: Values = {}
        for node in self.graph.topological_order():
            inv = self.mechanisms[node].inverse
            if inv is None:
                raise ValueError(f"node {node!r} has no inverse mechanism: its noise cannot be abducted")
            noise[node] = np.asarray(inv({p: values[p] for p in self.graph.parents(node)}, values[node]), dtype=float)
        return noise

    def counterfactual(self, obs: Mapping[str, np.ndarray], do: Mapping[str, object]) -> Values:
        """Counterfactual values: abduction, action, prediction (the :class:`~cflib.scm.protocol.CounterfactualModel` protocol).

        Parameters
        ----------
        obs : mapping
            Observed (factual) values per node.
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
        noise = self.abduct(values)
        return self.predict(noise, interventions)
