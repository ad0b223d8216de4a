"""Deep structural causal models: abduction, action and prediction with learned mechanisms.

Implements the Deep-SCM paradigm (Pawlowski et al. 2020) as used by Melistas et al.
(*Benchmarking counterfactual image generation*, Sec. 3.1, pseudo-code of ``SCM.encode/decode``
in the official code): every node of a :class:`~cflib.scm.CausalGraph` has a mechanism with

* ``abduct(value, pa) -> noise``: infer the unit's exogenous noise from its value and parents;
* ``predict(noise, pa) -> value``: the structural assignment;
* ``sample_noise(n, rng) -> noise``: the noise prior.

Noise objects are opaque to the SCM (an array, a latent code, a pair ``(z, eps)``), so flows, VAEs,
hierarchical VAEs and GANs plug in alike. A counterfactual is ``predict(abduct(obs), do)``: the
intervened nodes are set (graph mutilation), their descendants are recomputed from their own
abducted noise with the *counterfactual* parents, and the other nodes keep their values. The
*null intervention* ``predict(abduct(obs))`` is what the composition axiom iterates.

Also here: the mechanisms that need no training (roots whose noise is their value, a closed-form
:class:`cflib.scm.Mechanism`, the identity image map and the true image mechanism of a synthetic
data set), which the benchmark uses as baselines.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..runtime import as_generator
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_count,
    check_finite,
    check_positive,
    describe,
)
from .graph import CausalGraph
from .scm import Mechanism as ClosedFormMechanism
from .scm import check_mapping

__all__ = [
    "DeepMechanism",
    "DeepSCM",
    "RootMechanism",
    "ClosedForm",
    "IdentityImage",
    "OracleImage",
]

Values = dict[str, np.ndarray]


@runtime_checkable
class DeepMechanism(Protocol):
    """What :class:`DeepSCM` needs from a node's mechanism.

    ``pa`` is always a dict ``{parent name: array of length n}`` in the order of the graph's
    parents; the mechanism encodes it as it likes.
    """

    def abduct(self, value: np.ndarray, pa: Mapping[str, np.ndarray]) -> Any:
        """Exogenous noise of each unit (exact inverse or a posterior draw)."""

    def predict(self, noise: Any, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """The structural assignment: value from noise and parents."""

    def sample_noise(self, n: int, rng: np.random.Generator) -> Any:
        """``n`` draws from the noise prior."""


def _root_values(values: Any) -> np.ndarray:
    if values is None or isinstance(values, (str, bytes, Mapping)) or np.ndim(values) == 0:
        raise ValidationTypeError(f"values must be an array with one row per unit, got {describe(values)}")
    arr = np.asarray(values).copy()
    if len(arr) == 0:
        raise ValidationError("values must not be empty: give at least one observed unit")
    return check_finite(arr, "values")


class RootMechanism:
    """A root whose noise is its value (the paper's choice for CelebA and for the digit).

    Parameters
    ----------
    values : array-like, optional
        Observed values; :meth:`sample_noise` resamples them (the empirical prior). Set later with
        :meth:`fit`.
    """

    def __init__(self, values: np.ndarray | None = None) -> None:
        self.values_ = None if values is None else _root_values(values)

    def fit(self, values: np.ndarray) -> RootMechanism:
        """Store the empirical distribution of ``values`` (at least one unit, no NaN or inf); returns self."""
        self.values_ = _root_values(values)
        return self

    def abduct(self, value: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """The value itself."""
        return np.asarray(value).copy()

    def predict(self, noise: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """The noise itself."""
        return np.asarray(noise).copy()

    def sample_noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Resample the stored values."""
        n = check_count(n, "n")
        if self.values_ is None:
            raise ValidationError("RootMechanism has no values to sample from: call fit(values) first")
        return self.values_[rng.integers(0, len(self.values_), n)]


class ClosedForm:
    """Adapter of a closed-form :class:`cflib.scm.Mechanism` (forward / noise / inverse).

    Parameters
    ----------
    mechanism : cflib.scm.Mechanism
        With an ``inverse`` (needed for abduction).
    """

    def __init__(self, mechanism: ClosedFormMechanism) -> None:
        if not isinstance(mechanism, ClosedFormMechanism):
            raise ValidationTypeError(f"mechanism must be a cflib.scm.Mechanism, got {type(mechanism).__name__}")
        self.mechanism = mechanism

    def abduct(self, value: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """``inverse(pa, value)``."""
        if self.mechanism.inverse is None:
            raise ValidationError("this closed-form mechanism has no inverse: its noise cannot be abducted")
        return np.asarray(
            self.mechanism.inverse({k: np.asarray(v, float) for k, v in pa.items()}, np.asarray(value, float))
        )

    def predict(self, noise: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """``forward(pa, noise)``."""
        return np.asarray(self.mechanism.forward({k: np.asarray(v, float) for k, v in pa.items()}, np.asarray(noise)))

    def sample_noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``noise(rng, n)``."""
        return np.asarray(self.mechanism.noise(rng, check_count(n, "n")))


class IdentityImage:
    """The identity counterfactual map: the image never changes, whatever its parents.

    The benchmark's lower reference for composition (exactly 0) and minimality (CLD equals
    ``log(w1 + w2 e)``), and its upper reference for "effectiveness without doing anything".
    """

    def abduct(self, value: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """The image itself."""
        return np.asarray(value).copy()

    def predict(self, noise: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """The abducted image, unchanged."""
        return np.asarray(noise).copy()

    def sample_noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The identity map has no generative model."""
        raise ValidationError("IdentityImage cannot sample new images: it only returns the image it was given")


class OracleImage:
    """The true image mechanism of a synthetic data set: exact abduction and prediction.

    Every image the data set rendered (its own units, and every image this mechanism renders later)
    is registered under a hash of its pixels together with the unit's index; abduction looks the
    image up, which is an exact inverse because rendering is deterministic given the unit's style.
    Prediction re-renders the unit's style with the (counterfactual) parents: the true
    counterfactual.

    Parameters
    ----------
    dataset : MorphoSynth or SmileyFaces
        Any object with ``x`` (images), ``subset(idx)`` and ``render(**parents)``.
    scale : float
        Multiplier applied to rendered images (``1/255`` puts MorphoSynth on [0, 1]); the
        factual images to abduct are :attr:`images`.
    """

    def __init__(self, dataset: Any, scale: float = 1.0) -> None:
        for attr in ("x", "subset", "render"):
            if not hasattr(dataset, attr):
                raise ValidationTypeError(
                    f"dataset must provide {attr!r} (a MorphoSynth or SmileyFaces), got {type(dataset).__name__}"
                )
        scale = check_positive(scale, "scale")
        self.dataset = dataset
        self.scale = np.float32(scale)
        self._table: dict[bytes, int] = {}
        self.images = self._scaled(dataset.x)
        self._register(self.images, np.arange(len(dataset.x)))

    def _scaled(self, images: np.ndarray) -> np.ndarray:
        return np.asarray(images, dtype=np.float32) * self.scale

    @staticmethod
    def _keys(images: np.ndarray) -> list[bytes]:
        flat = np.ascontiguousarray(np.asarray(images, dtype=np.float32).reshape(len(images), -1))
        return [hashlib.blake2b(row.tobytes(), digest_size=16).digest() for row in flat]

    def _register(self, images: np.ndarray, units: np.ndarray) -> None:
        for k, u in zip(self._keys(images), units, strict=False):
            self._table.setdefault(k, int(u))

    def abduct(self, value: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """The index of the unit that rendered each image (its exogenous style)."""
        units = [self._table.get(k, -1) for k in self._keys(value)]
        if min(units, default=0) < 0:
            raise ValidationError(
                "OracleImage can only abduct images rendered by its data set (true mechanism); got an unknown image"
            )
        return np.asarray(units)

    def predict(self, noise: np.ndarray, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """Re-render each unit's style with the parents ``pa``."""
        units = np.asarray(noise, int)
        images = self._scaled(self.dataset.subset(units).render(**{k: np.asarray(v) for k, v in pa.items()}))
        self._register(images, units)
        return images

    def sample_noise(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """Units of the data set drawn at random (their styles are the empirical noise prior)."""
        return rng.integers(0, len(self.dataset.x), check_count(n, "n"))


class DeepSCM:
    """A structural causal model whose mechanisms may be deep networks.

    Parameters
    ----------
    graph : CausalGraph or mapping
        The causal graph (a mapping ``{node: parents}`` is turned into a :class:`CausalGraph`,
        which rejects cycles).
    mechanisms : mapping of str to DeepMechanism
        One mechanism per node (objects with ``abduct``, ``predict`` and ``sample_noise``).

    Raises
    ------
    ValueError
        A cyclic graph, a node without a mechanism, or a mechanism for an unknown node.
    TypeError
        A mechanism without the three methods.

    Examples
    --------
    >>> from cflib.scm import morpho_attributes
    >>> true = morpho_attributes()
    >>> scm = DeepSCM(true.graph, {n: ClosedForm(m) for n, m in true.mechanisms.items()})
    >>> obs = true.sample(3, seed=0)
    >>> cf = scm.counterfactual(obs, {"t": 4.0})
    >>> bool((cf["t"] == 4.0).all())
    True
    """

    def __init__(self, graph: CausalGraph | Mapping[str, Any], mechanisms: Mapping[str, Any]) -> None:
        if not isinstance(graph, CausalGraph):
            if not isinstance(graph, Mapping):
                raise ValidationTypeError(
                    f"graph must be a CausalGraph or a mapping {{node: parents}}, got {type(graph).__name__}"
                )
            graph = CausalGraph(graph)
        if not isinstance(mechanisms, Mapping):
            raise ValidationTypeError(
                f"mechanisms must be a mapping {{node: mechanism}}, got {type(mechanisms).__name__}"
            )
        missing = [n for n in graph.nodes if n not in mechanisms]
        extra = [n for n in mechanisms if n not in graph.nodes]
        if missing:
            raise ValidationError(
                f"no mechanism for node(s) {', '.join(missing)}; give one mechanism per node of the graph"
            )
        if extra:
            raise ValidationError(
                f"mechanism(s) given for {', '.join(extra)}, which are not nodes of the graph ({', '.join(graph.nodes)})"
            )
        for n, m in mechanisms.items():
            if not all(callable(getattr(m, a, None)) for a in ("abduct", "predict", "sample_noise")):
                raise ValidationTypeError(
                    f"mechanism for {n!r} must have abduct, predict and sample_noise methods, got {type(m).__name__}"
                )
        self.graph = graph
        self.mechanisms = dict(mechanisms)
        self.order = graph.topological_order()

    # -- checks ---------------------------------------------------------------------------------
    def _check_obs(self, obs: Mapping[str, Any], what: str = "obs") -> tuple[Values, int]:
        check_mapping(obs, what)
        missing = [n for n in self.graph.nodes if n not in obs]
        if missing:
            raise ValidationError(f"{what} lacks node(s) {', '.join(missing)}; give every node of the graph")
        unknown = [k for k in obs if k not in self.graph.nodes]
        if unknown:
            raise ValidationError(f"{what} has key(s) {', '.join(map(str, unknown))} that are not nodes of the graph")
        arrays = {n: np.asarray(obs[n]) for n in self.graph.nodes}
        scalars = [n for n, a in arrays.items() if not a.ndim]
        if scalars:
            raise ValidationError(f"{what} values must be arrays with one row per unit, got a scalar for {scalars}")
        sizes = {n: a.shape[0] for n, a in arrays.items()}
        if len(set(sizes.values())) != 1:
            raise ValidationError(f"{what} arrays must all have the same number of units, got {sizes}")
        if next(iter(sizes.values())) == 0:
            raise ValidationError(f"{what} holds no units (arrays of length 0): give at least one")
        for n, a in arrays.items():
            check_finite(a, f"{what}[{n!r}]")
        return arrays, next(iter(sizes.values()))

    def _check_do(
        self, do: Mapping[str, Any] | None, n: int, shapes: Mapping[str, tuple[int, ...]] | None = None
    ) -> Values:
        if do is None:
            return {}
        check_mapping(do, "do")
        out: Values = {}
        for k, v in do.items():
            if k not in self.graph.nodes:
                raise ValidationError(
                    f"cannot intervene on {k!r}: not a node of the graph (nodes: {', '.join(self.graph.nodes)})"
                )
            arr = np.asarray(v)
            unit_shape = tuple(shapes[k]) if shapes is not None and k in shapes else ()
            if arr.shape == unit_shape:
                arr = np.broadcast_to(arr, (n, *unit_shape))
            elif arr.shape != (n, *unit_shape):
                raise ValidationError(
                    f"do[{k!r}] must be one value of shape {unit_shape} or {n} values of shape {(n, *unit_shape)}, got shape {arr.shape}"
                )
            out[k] = np.array(arr)
            check_finite(out[k], f"do[{k!r}]")
        return out

    # -- the three steps ------------------------------------------------------------------------
    def abduct(self, obs: Mapping[str, Any]) -> dict[str, Any]:
        """Abduction: the exogenous noise of every node for every unit.

        Parameters
        ----------
        obs : mapping
            Observed value of every node (arrays with one row per unit).

        Returns
        -------
        dict
            Node -> noise (whatever the mechanism returns).
        """
        values, _ = self._check_obs(obs)
        return {
            v: self.mechanisms[v].abduct(values[v], {p: values[p] for p in self.graph.parents(v)}) for v in self.order
        }

    def predict(self, noise: Mapping[str, Any], do: Mapping[str, Any] | None = None, *, n: int | None = None) -> Values:
        """Action and prediction: push the noise through the model, intervened nodes held fixed.

        Parameters
        ----------
        noise : mapping
            Noise per node, e.g. from :meth:`abduct` (intervened nodes may be missing).
        do : mapping, optional
            ``{node: value}``: one value for all units or one per unit.
        n : int, optional
            Number of units (inferred from the noise or ``do`` when omitted).

        Returns
        -------
        dict
            Node -> array of values.
        """
        check_mapping(noise, "noise")
        check_mapping({} if do is None else do, "do")
        n = check_count(n, "n", allow_none=True)
        do = dict(do or {})
        if n is None:
            first = next((noise[k] for k in self.order if k in noise and k not in do), None)
            if first is not None:
                n = len(first)
            else:
                n = max((len(np.asarray(v)) for v in do.values() if np.ndim(v) > 0), default=1)
        do = self._check_do(do, n, shapes={k: np.asarray(v).shape[1:] for k, v in do.items() if np.ndim(v) > 1})
        values: Values = {}
        for v in self.order:
            if v in do:
                values[v] = do[v]  # action: the mechanism is replaced by the constant (graph mutilation)
                continue
            if v not in noise:
                raise ValidationError(f"noise for node {v!r} is missing and {v!r} is not intervened on")
            values[v] = np.asarray(self.mechanisms[v].predict(noise[v], {p: values[p] for p in self.graph.parents(v)}))
        return values

    def counterfactual(self, obs: Mapping[str, Any], do: Mapping[str, Any]) -> Values:
        """Counterfactual of each unit under ``do``: abduction, action, prediction.

        Parameters
        ----------
        obs : mapping
            Factual values of every node.
        do : mapping
            ``{node: value}`` with one value (broadcast) or one per unit.

        Returns
        -------
        dict
            Counterfactual values of every node.

        Raises
        ------
        ValueError
            An intervention on a node not in the graph, or values of the wrong shape.
        """
        values, n = self._check_obs(obs)
        do = self._check_do(do, n, shapes={k: values[k].shape[1:] for k in values})
        return self.predict(self.abduct(values), do, n=n)

    def null_cycles(self, obs: Mapping[str, Any], m: int) -> list[Values]:
        """Apply the null intervention ``m`` times, feeding each output back in (composition).

        Parameters
        ----------
        obs : mapping
            Factual values.
        m : int
            Number of cycles (>= 1).

        Returns
        -------
        list of dict
            ``[obs, f(obs), f(f(obs)), ...]``, ``m + 1`` entries.
        """
        m = check_count(m, "m")
        values, n = self._check_obs(obs)
        out = [values]
        for _ in range(m):
            out.append(self.predict(self.abduct(out[-1]), n=n))
        return out

    def sample(
        self, n: int, do: Mapping[str, Any] | None = None, *, seed: int | np.random.Generator | None = None
    ) -> Values:
        """Observational (or interventional, with ``do``) samples: noise drawn from the prior.

        Parameters
        ----------
        n : int
            Number of units.
        do : mapping, optional
            Interventions.
        seed : int or numpy.random.Generator, optional
            Randomness.

        Returns
        -------
        dict
            Node -> array.
        """
        n = check_count(n, "n")
        check_mapping({} if do is None else do, "do")
        rng = as_generator(seed)
        do = do or {}
        noise = {v: self.mechanisms[v].sample_noise(int(n), rng) for v in self.order if v not in do}
        return self.predict(noise, do, n=int(n))
