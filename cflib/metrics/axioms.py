"""Soundness metrics of counterfactual image models from Pearl's axioms (Monteiro et al., ICLR 2023, Sec. 3.1-3.2, App. B-C; Tables 1-4).

A counterfactual model is treated as a black-box **counterfactual function**
``x* = f(x, pa, pa*)`` with abduction implicit (Sec. 3.1). Parents are dicts ``name -> (n,)``
array. A stochastic model (a VAE) is turned into one function by fixing its noise per image
(:class:`ModelFunction`), which the paper does for repeated applications.

Metrics (distances are the l1 of App. B: mean absolute pixel difference on the 0-255 scale):

* :func:`composition` — ``d(x, f^(m)(x, pa, pa))`` for ``m = 1..M`` (the null intervention);
* :func:`reversibility` — ``d(x, p^(c)(x, pa, pa*))`` with ``p(x) = f(f(x, pa, pa*), pa*, pa)``, for
  cycles ``c = 1..C`` (indexed by cycles, two applications each);
* :func:`effectiveness` — after a *partial* intervention on one parent, pseudo-oracles read every
  parent back: the intervened one against ``pa*_k``, the others against their unchanged values;
* :func:`commutativity` — Lemma C.1: two partial interventions in either order give the same image.

:func:`soundness_report` runs all of them into one long DataFrame, :func:`summarise` averages over
images then reports mean and population std over seeds, :func:`table1` lays it out like the paper's
Table 1, and :func:`average_rank` / :func:`rank_change` implement the ranking of Tables 2-4.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pandas as pd

from cflib.runtime import as_generator

__all__ = [
    "Parents",
    "CounterfactualFunction",
    "Oracle",
    "ParentEncoder",
    "ModelFunction",
    "partial",
    "l1_distance",
    "composition",
    "reversibility",
    "effectiveness",
    "commutativity",
    "sample_do_values",
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

Parents = Mapping[str, np.ndarray]


@runtime_checkable
class CounterfactualFunction(Protocol):
    """``x* = f(x, pa, pa_star)`` on numpy images ``(n, C, H, W)`` in [0, 1] and parent dicts."""

    parent_names: tuple[str, ...]

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray: ...


class Oracle(Protocol):
    """A pseudo-oracle: ``score(x, target)`` gives per-image correctness or absolute error."""

    kind: str

    def score(self, x: Any, target: Any) -> np.ndarray: ...


# ----------------------------------------------------------------------------------------------------
# Parents, encoders and the counterfactual-function adapter
# ----------------------------------------------------------------------------------------------------
def _check_parent_dict(pa: Any, names: Sequence[str], n: int | None, name: str) -> dict[str, np.ndarray]:
    if not isinstance(pa, Mapping):
        raise TypeError(f"{name} must be a dict parent name -> (n,) array, got {type(pa).__name__}")
    unknown = set(pa) - set(names)
    if unknown:
        raise ValueError(f"{name} has unknown parent name(s) {sorted(unknown)}; the model's parents are {list(names)}")
    missing = set(names) - set(pa)
    if missing:
        raise ValueError(f"{name} is missing parent(s) {sorted(missing)}; the model's parents are {list(names)}")
    out = {k: np.asarray(pa[k]).reshape(-1) for k in names}
    for k, v in out.items():
        if n is not None and len(v) != n:
            raise ValueError(f"{name}[{k!r}] has {len(v)} values but the image batch has {n}: give one value per image")
    return out


class ParentEncoder:
    """Encode a parent dict into the float matrix the image models take.

    Parameters
    ----------
    spec : dict
        Parent name -> ``("categorical", n_classes)``, ``"circular"`` (a value in [0, 1) encoded as
        ``(cos 2πv, sin 2πv)``) or ``"continuous"`` (the raw value). Columns follow the dict order.

    Examples
    --------
    >>> enc = ParentEncoder({"digit": ("categorical", 10), "hue": "circular"})
    >>> enc.encode({"digit": np.array([3]), "hue": np.array([0.25])}).round(3).tolist()
    [[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]]
    """

    def __init__(self, spec: Mapping[str, Any]) -> None:
        if not isinstance(spec, Mapping) or not spec:
            raise TypeError("spec must be a non-empty dict parent name -> kind")
        self.spec: dict[str, tuple] = {}
        for k, v in spec.items():
            kind = (v,) if isinstance(v, str) else tuple(v)
            if kind[0] == "categorical":
                if len(kind) != 2 or int(kind[1]) < 2:
                    raise ValueError(f"spec[{k!r}] must be ('categorical', n_classes >= 2), got {v!r}")
                kind = ("categorical", int(kind[1]))
            elif kind[0] not in ("circular", "continuous"):
                raise ValueError(f"spec[{k!r}] must be ('categorical', n), 'circular' or 'continuous', got {v!r}")
            self.spec[k] = kind
        self.names = tuple(self.spec)
        start, self.groups = 0, {}
        for k, kind in self.spec.items():
            w = kind[1] if kind[0] == "categorical" else 2 if kind[0] == "circular" else 1
            self.groups[k] = list(range(start, start + w))
            start += w
        self.dim = start

    def encode(self, pa: Parents, n: int | None = None, name: str = "pa") -> np.ndarray:
        """Encode ``pa`` into an ``(n, dim)`` float32 matrix (errors name unknown or missing parents)."""
        d = _check_parent_dict(pa, self.names, n, name)
        n = len(next(iter(d.values())))
        out = np.zeros((n, self.dim), dtype=np.float32)
        for k, kind in self.spec.items():
            v, cols = d[k], self.groups[k]
            if kind[0] == "categorical":
                iv = v.astype(np.int64)
                if np.any(iv != v) or (n and (iv.min() < 0 or iv.max() >= kind[1])):
                    raise ValueError(f"{name}[{k!r}] must hold integer classes in 0..{kind[1] - 1}")
                out[np.arange(n), cols[0] + iv] = 1.0
            elif kind[0] == "circular":
                a = 2 * np.pi * v.astype(np.float64)
                out[:, cols[0]] = np.cos(a)
                out[:, cols[1]] = np.sin(a)
            else:
                out[:, cols[0]] = v
        return out

    def parent_groups(self) -> list[list[int]]:
        """Columns per parent, in order (for :meth:`cflib.models.gan.ConditionalGAN.fit`)."""
        return [self.groups[k] for k in self.names]


class ModelFunction:
    """Turn an image model into a counterfactual function with its noise fixed per image.

    Parameters
    ----------
    model : object
        Has ``counterfactual(x, pa_enc, pa_star_enc, eps=..., **kwargs)`` (the cflib VAE/HVAE/GAN API).
    encoder : ParentEncoder
        Encodes the parent dicts.
    eps : array, optional
        Noise per image, fixing one function per observation (see ``model.sample_noise``).
        With ``eps`` given, the function only accepts batches of the same size.
    **kwargs
        Passed to ``model.counterfactual`` (e.g. ``abduct_levels``, ``temperature``).
    """

    def __init__(self, model: Any, encoder: ParentEncoder, eps: Any | None = None, **kwargs: Any) -> None:
        if not hasattr(model, "counterfactual"):
            raise TypeError("model must have a counterfactual(x, pa, pa_star, eps=...) method")
        self.model = model
        self.encoder = encoder
        self.eps = eps
        self.kwargs = kwargs
        self.parent_names = encoder.names

    @classmethod
    def sample(cls, model: Any, encoder: ParentEncoder, n: int, seed: int | np.random.Generator | None = 0, **kwargs: Any) -> "ModelFunction":
        """Draw one function per image: fixed noise ``model.sample_noise(n, seed)`` (none for deterministic models)."""
        eps = model.sample_noise(n, seed) if hasattr(model, "sample_noise") else None
        return cls(model, encoder, eps, **kwargs)

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        if self.eps is not None and len(self.eps) != len(x):
            raise ValueError(f"this function fixes noise for {len(self.eps)} images but got {len(x)}; sample a function for this batch")
        a = self.encoder.encode(pa, len(x), "pa")
        b = self.encoder.encode(pa_star, len(x), "pa_star")
        return np.asarray(self.model.counterfactual(x, a, b, eps=self.eps, **self.kwargs))


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
    if parent not in f.parent_names:
        raise ValueError(f"unknown parent name {parent!r}; the function's parents are {list(f.parent_names)}")

    def fk(x: np.ndarray, pa: Parents, value: np.ndarray) -> np.ndarray:
        return f(x, pa, {**pa, parent: np.asarray(value)})

    return fk


# ----------------------------------------------------------------------------------------------------
# Distance and metrics
# ----------------------------------------------------------------------------------------------------
def l1_distance(a: np.ndarray, b: np.ndarray, scale: float = 255.0) -> np.ndarray:
    """Per-image l1 distance of App. B: mean over pixels and channels of ``|a - b|``, times ``scale``.

    Parameters
    ----------
    a, b : numpy.ndarray, shape (n, ...)
        Image batches with intensities in [0, 1].
    scale : float
        255 gives the paper's "average pixel intensity by which two images differ".

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"image batches must have the same shape, got {a.shape} and {b.shape}")
    return scale * np.abs(np.clip(a, 0, 1) - np.clip(b, 0, 1)).reshape(len(a), -1).mean(1)


def _prepare(f: CounterfactualFunction, x: Any, pa: Any) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    if not callable(f) or not hasattr(f, "parent_names"):
        raise TypeError("f must be a counterfactual function: callable f(x, pa, pa_star) with a parent_names attribute")
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 4:
        raise ValueError(f"x must have shape (n, C, H, W), got {x.shape}")
    return x, _check_parent_dict(pa, f.parent_names, len(x), "pa")


def _check_m(m: int, name: str) -> int:
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"{name} must be a positive integer, got {m!r}")
    return int(m)


def composition(f: CounterfactualFunction, x: np.ndarray, pa: Parents, m: int = 10, distance: Callable[[np.ndarray, np.ndarray], np.ndarray] = l1_distance) -> np.ndarray:
    """Composition distances ``d(x, f^(j)(x, pa, pa))`` for ``j = 1..m`` (eq. 1).

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
    x, pa = _prepare(f, x, pa)
    m = _check_m(m, "m")
    y, out = x, []
    for _ in range(m):  # sequential by definition: each application feeds the next
        y = f(y, pa, pa)
        out.append(distance(x, y))
    return np.stack(out)


def reversibility(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    parent: str,
    do_values: np.ndarray,
    cycles: int = 5,
    distance: Callable[[np.ndarray, np.ndarray], np.ndarray] = l1_distance,
) -> np.ndarray:
    """Reversibility distances after ``c = 1..cycles`` cycles ``x -> f(., pa, pa*) -> f(., pa*, pa)`` (eq. 2).

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
    x, pa = _prepare(f, x, pa)
    cycles = _check_m(cycles, "cycles")
    if parent not in f.parent_names:
        raise ValueError(f"unknown parent name {parent!r}; the function's parents are {list(f.parent_names)}")
    do_values = np.asarray(do_values).reshape(-1)
    if len(do_values) != len(x):
        raise ValueError(f"do_values has {len(do_values)} values for {len(x)} images")
    ps = {**pa, parent: do_values}
    y, out = x, []
    for _ in range(cycles):
        y = f(f(y, pa, ps), ps, pa)
        out.append(distance(x, y))
    return np.stack(out)


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
    x, pa = _prepare(f, x, pa)
    if parent not in f.parent_names:
        raise ValueError(f"unknown parent name {parent!r}; the function's parents are {list(f.parent_names)}")
    unknown = set(oracles) - set(f.parent_names)
    if unknown:
        raise ValueError(f"oracles has unknown parent name(s) {sorted(unknown)}; the function's parents are {list(f.parent_names)}")
    do_values = np.asarray(do_values).reshape(-1)
    if len(do_values) != len(x):
        raise ValueError(f"do_values has {len(do_values)} values for {len(x)} images")
    ps = {**pa, parent: do_values}
    xs = f(x, pa, ps)
    scores = {k: np.asarray(o.score(xs, ps[k]), dtype=np.float64) for k, o in oracles.items()}
    return (scores, xs) if return_images else scores


def commutativity(
    f: CounterfactualFunction,
    x: np.ndarray,
    pa: Parents,
    parent_a: str,
    do_a: np.ndarray,
    parent_b: str,
    do_b: np.ndarray,
    distance: Callable[[np.ndarray, np.ndarray], np.ndarray] = l1_distance,
) -> np.ndarray:
    """Distance between the two orders of two partial interventions (Lemma C.1; the official code's test).

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
    x, pa = _prepare(f, x, pa)
    for p in (parent_a, parent_b):
        if p not in f.parent_names:
            raise ValueError(f"unknown parent name {p!r}; the function's parents are {list(f.parent_names)}")
    if parent_a == parent_b:
        raise ValueError("parent_a and parent_b must be different parents")
    pa_a = {**pa, parent_a: np.asarray(do_a)}
    pa_b = {**pa, parent_b: np.asarray(do_b)}
    both = {**pa, parent_a: np.asarray(do_a), parent_b: np.asarray(do_b)}
    ab = f(f(x, pa, pa_a), pa_a, both)
    ba = f(f(x, pa, pa_b), pa_b, both)
    return distance(ab, ba)


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
    rng = as_generator(seed)
    train_values = np.asarray(train_values).reshape(-1)
    if train_values.size == 0:
        raise ValueError("train_values must not be empty")
    out = rng.choice(train_values, size=int(n))
    if current is not None:
        current = np.asarray(current).reshape(-1)
        if len(np.unique(train_values)) < 2:
            raise ValueError("cannot force a change: train_values has a single distinct value")
        same = out == current
        while same.any():  # rejection: a handful of rounds, the mass of one value is < 1
            out[same] = rng.choice(train_values, size=int(same.sum()))
            same = out == current
    return out


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
    x, pa = _prepare(f, x, pa)
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
    keys = [*by, "metric", "intervened", "measured", "step"] + (["oracles"] if "oracles" in df.columns else [])
    missing = [k for k in keys if k not in df.columns]
    if missing:
        raise ValueError(f"df lacks column(s) {missing}; expected soundness_report output with labels {list(by)}")
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
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise ValueError(f"table lacks column(s) {missing}")
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
    e = summary[summary.metric == "effectiveness"]

    def wide(fam: str) -> pd.DataFrame:
        sub = e[e.oracles == fam]
        if sub.empty:
            raise ValueError(f"no effectiveness rows for oracle family {fam!r}")
        return sub.pivot_table(index=list(by), columns=["intervened", "measured"], values="mean", sort=False)

    w, ref = wide(family), wide(reference)
    cols = {c: hib for c, hib in columns.items()}
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
    if not rank_a.index.equals(rank_b.index):
        raise ValueError("rank_a and rank_b must rank the same rows (same index, same order)")
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
    x, pa = _prepare(f, x, pa)
    out, y = [x], x
    for _ in range(_check_m(m, "m")):
        y = f(y, pa, pa)
        out.append(y)
    return np.stack(out, 1)


def reversibility_sequence(f: CounterfactualFunction, x: np.ndarray, pa: Parents, parent: str, do_values: np.ndarray, cycles: int = 4) -> np.ndarray:
    """Images ``x, f(x, pa, pa*), f(., pa*, pa), f(., pa, pa*), ...`` over ``cycles`` cycles (Fig. 1c).

    Returns
    -------
    numpy.ndarray, shape (n, 2 * cycles + 1, C, H, W)
    """
    x, pa = _prepare(f, x, pa)
    if parent not in f.parent_names:
        raise ValueError(f"unknown parent name {parent!r}; the function's parents are {list(f.parent_names)}")
    ps = {**pa, parent: np.asarray(do_values).reshape(-1)}
    out, y = [x], x
    for _ in range(_check_m(cycles, "cycles")):
        y = f(y, pa, ps)
        out.append(y)
        y = f(y, ps, pa)
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
    unknown = set(oracles) - set(targets)
    if unknown:
        raise ValueError(f"oracles has parent name(s) {sorted(unknown)} with no target")
    return {k: 100.0 * float(np.mean(o.score(x_star, targets[k]))) for k, o in oracles.items()}
