"""Predictors along the business-necessity spectrum, and counterfactual outcomes ``Y_{x0}``.

Plecko & Bareinboim (arXiv 2306.05059) build their fair predictors (Sec. 4, Fig. 6) and estimate the
counterfactual ``Y_{x0}`` behind Theorem 1's terms (App. A.2) with the R package *fairadapt*
(Plecko & Meinshausen 2020), which is not available in Python. This module implements a documented
substitute, :class:`SequentialTransport` ("fairadapt-lite"): walk the causal order and map every
descendant of ``X`` of an ``x1`` unit to the value it would take in the ``x0`` world, given its
already-mapped parents, under one of two assumptions per variable:

* **continuous** variables: additive noise, so the unit keeps its residual
  ``v' = v - m(x1, pa) + m(x0, pa')`` (exact in additive-noise SCMs such as App. A.2);
* **discrete** variables (binary, or non-negative integer counts): rank preservation. The
  conditional CDF ``F(t | pa) = P(V <= t | pa)`` is modelled at up to ``max_levels`` support points
  ``t`` by one classifier each; the unit keeps its quantile ``u``, drawn uniformly inside the jump
  ``[F(v - 1 | x1, pa), F(v | x1, pa)]`` (randomised tie-breaking, as fairadapt does), and gets the
  category between support points where ``F(. | x0, pa')`` reaches ``u``; inside a category the unit
  keeps its relative rank and takes the matching value among the ``x0`` units in that category.

fairadapt uses quantile regression forests for all of them; the two agree when the noise is additive.
Variables named *resolving* (fairadapt's ``res.vars``) are not mapped, but their descendants are mapped
conditionally on them. To remove the spurious effect the confounders ``Z`` are given ``X`` as a parent
in the transport graph (``X <-> Z`` has no direction, but mapping ``Z`` to its ``x0``-conditional law
removes the variation it carries): the paper's script never did this, so its "BN = Z" equals its
"BN = {}" (notes, Sec. 2.12).

:func:`projection_predictor` builds predictors that satisfy causal predictive parity exactly at the
population level for ``BN = {Z}`` (``E[Y | x1, z]``) and ``BN = {Z, W}`` (``E[Y | x1, z, w]``); see the
chapter for why a transported predictor decomposes differently on the original covariates.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike

from ..runtime import as_generator
from ..validation import check_array, check_count
from .effects import make_learner, thread_cap
from .sfm import StandardFairnessModel, bn_effects

__all__ = ["SequentialTransport", "transport_graph", "fair_predictor", "projection_predictor", "demean_by_group"]


def _kind(v: np.ndarray) -> str:
    u = np.unique(v)
    if u.size <= 2:
        return "binary"
    if np.all(v >= 0) and np.allclose(v, np.round(v)) and u.size <= 100:
        return "count"
    return "continuous"


def _support(v: np.ndarray, max_levels: int, min_count: int = 10) -> np.ndarray:
    """Support points at which the CDF of a discrete variable is modelled.

    At most ``max_levels`` distinct quantiles (all values but the largest when there are few), keeping
    only points with at least ``min_count`` units on each side so every classifier sees both classes.
    """
    u = np.unique(v)
    cand = (
        u[:-1]
        if u.size <= max_levels + 1
        else np.unique(np.quantile(v, np.linspace(0, 1, max_levels + 2)[1:-1], method="lower"))
    )
    below = np.searchsorted(np.sort(v), cand, side="right")
    return cand[(below >= min_count) & (v.size - below >= min_count)]


def _cdf(models: Sequence[tuple[float, Any]], feats: np.ndarray) -> np.ndarray:
    """``(n, k)`` monotone conditional CDF at the modelled support points."""
    cols = []
    for _, m in models:
        cols.append(
            np.full(feats.shape[0], m) if isinstance(m, float) else m.predict_proba(feats)[:, list(m.classes_).index(1)]
        )
    F = np.column_stack(cols) if cols else np.zeros((feats.shape[0], 0))
    return np.maximum.accumulate(F, axis=1)  # separate classifiers need not be monotone


def _discrete_transport(
    models: Sequence[tuple[float, Any]],
    x0_sorted: np.ndarray,
    val: np.ndarray,
    f_obs: np.ndarray,
    f_new: np.ndarray,
    rng: np.random.Generator,
) -> np.ndarray:
    ts = np.array([t for t, _ in models])
    n = val.size
    ar = np.arange(n)
    F1 = np.hstack([np.zeros((n, 1)), _cdf(models, f_obs), np.ones((n, 1))])
    F0 = np.hstack([np.zeros((n, 1)), _cdf(models, f_new), np.ones((n, 1))])
    # Category c of each value: (ts[c-1], ts[c]], with c = len(ts) above every support point.
    cat = np.searchsorted(ts, val, side="left")
    u = F1[ar, cat] + (F1[ar, cat + 1] - F1[ar, cat]) * rng.random(n)
    new_cat = np.minimum((F0[:, 1:-1] < u[:, None]).sum(axis=1), ts.size)
    # Within the new category, keep the unit's relative rank and read the value off the x0 units'
    # values in that category (exact when every support value is modelled; the categories are then points).
    lo_f, hi_f = F0[ar, new_cat], F0[ar, new_cat + 1]
    r = np.clip((u - lo_f) / np.maximum(hi_f - lo_f, 1e-12), 0, 1 - 1e-12)
    edges = np.concatenate([[-np.inf], ts, [np.inf]])
    start = np.searchsorted(x0_sorted, edges[new_cat], side="right")
    stop = np.searchsorted(x0_sorted, edges[new_cat + 1], side="right")
    size = stop - start
    idx = np.clip(start + np.floor(r * size).astype(int), 0, max(x0_sorted.size - 1, 0))
    fallback = np.where(np.isfinite(edges[new_cat + 1]), edges[new_cat + 1], val)
    return np.where(size > 0, x0_sorted[idx], fallback)


class SequentialTransport:
    """Map the descendants of ``X`` of ``x1`` units to the ``x0`` world, in causal order.

    Parameters
    ----------
    parents : mapping of str to sequence of str
        The causal graph as ``{node: [parents]}``; ``x`` must be a node. Only descendants of ``x``
        are mapped.
    x : str
        Protected attribute column (coded 0 = ``x0``, 1 = ``x1``).
    resolving : sequence of str
        Descendants of ``x`` that are kept as they are (business necessity).
    learner : {"hgb", "linear", "rf"} or scikit-learn estimator
        Regressor for continuous/count variables; its classifier counterpart for binary ones
        (a custom estimator is used as given for both and must offer ``predict_proba`` for binary ones).
    max_levels : int
        Most support points at which the CDF of a discrete variable is modelled (one classifier each);
        a variable with at most ``max_levels + 1`` values is modelled at every value.
    seed : int or numpy.random.Generator, optional
        Learner seeds and the randomised ranks of discrete variables.

    Attributes
    ----------
    order_ : list of str
        Variables that are mapped, in causal order.
    kinds_ : dict
        Variable -> ``"continuous"``, ``"count"`` or ``"binary"`` (the last two are transported by rank).
    """

    def __init__(
        self,
        parents: Mapping[str, Sequence[str]],
        x: str,
        *,
        resolving: Sequence[str] = (),
        learner: Any = "hgb",
        max_levels: int = 8,
        seed: int | np.random.Generator | None = None,
    ) -> None:
        from ..scm.graph import CausalGraph

        if not isinstance(parents, Mapping):
            raise TypeError(f"parents must be a mapping {{node: [parents]}}, got {type(parents).__name__}")
        self.graph = CausalGraph(parents)
        if x not in self.graph.nodes:
            raise ValueError(f"x={x!r} is not a node of the graph")
        bad = [r for r in resolving if r not in self.graph.nodes]
        if bad:
            raise ValueError(f"resolving variables {bad} are not nodes of the graph")
        if isinstance(learner, str):
            make_learner(learner, "regressor")
        elif not hasattr(learner, "fit"):
            raise TypeError(f"learner must have a fit method, got {type(learner).__name__}")
        check_count(max_levels, "max_levels")
        self.max_levels = int(max_levels)
        self.x = x
        self.resolving = tuple(resolving)
        self.learner = learner
        self.seed = seed

    def fit(self, data: pd.DataFrame) -> SequentialTransport:
        """Fit one conditional model per mapped variable on all units.

        Parameters
        ----------
        data : pandas.DataFrame
            Must hold every node of the graph, numeric, without missing values; ``x`` coded 0/1.

        Returns
        -------
        SequentialTransport
            ``self``.
        """
        self._check(data)
        rng = as_generator(self.seed)
        self._rng_seed = int(rng.integers(2**31 - 1))
        desc = self.graph.descendants(self.x)
        self.order_ = [v for v in self.graph.topological_order() if v in desc and v not in self.resolving]
        self.kinds_, self.models_, self.x0_values_ = {}, {}, {}
        with thread_cap(1):
            for v in self.order_:
                pa = list(self.graph.parents(v))
                feats = data[pa].to_numpy(float)
                val = data[v].to_numpy(float)
                kind = _kind(val)
                self.kinds_[v] = kind
                if kind == "continuous":
                    m = (
                        make_learner(self.learner, "regressor", self._rng_seed)
                        if isinstance(self.learner, str)
                        else make_learner(self.learner, "regressor")
                    )
                    m.fit(feats, val)
                else:
                    ts = _support(val, self.max_levels)
                    m = []
                    self.x0_values_[v] = np.sort(val[data[self.x].to_numpy() == 0])
                    for t in ts:
                        lab = (val <= t).astype(int)
                        if lab.min() == lab.max():  # degenerate threshold: constant CDF value
                            m.append((t, float(lab[0])))
                            continue
                        c = (
                            make_learner(self.learner, "classifier", self._rng_seed)
                            if isinstance(self.learner, str)
                            else make_learner(self.learner, "classifier")
                        )
                        m.append((t, c.fit(feats, lab)))
                self.models_[v] = (pa, m)
        return self

    def _check(self, data: pd.DataFrame) -> None:
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        miss = [c for c in self.graph.nodes if c not in data.columns]
        if miss:
            raise ValueError(f"columns {miss} of the graph are not in data")
        if data[list(self.graph.nodes)].isna().any().any():
            raise ValueError("data has missing values in graph columns; drop or impute them first")
        num = [c for c in self.graph.nodes if pd.api.types.is_float_dtype(data[c])]
        if num and np.isinf(data[num].to_numpy()).any():
            raise ValueError("data has infinite values in graph columns; drop or replace them first")
        vals = set(pd.unique(data[self.x]))
        if not vals <= {0, 1}:
            raise ValueError(f"x column {self.x!r} must be coded 0/1, got {sorted(map(str, vals))}")

    def transform(self, data: pd.DataFrame) -> pd.DataFrame:
        """The ``x0``-world values of every mapped variable (``x0`` units keep theirs).

        Parameters
        ----------
        data : pandas.DataFrame

        Returns
        -------
        pandas.DataFrame
            A copy of ``data`` with mapped columns replaced; ``x`` itself is unchanged.
        """
        if not hasattr(self, "models_"):
            raise RuntimeError("call fit(data) before transform(data)")
        self._check(data)
        rng = np.random.default_rng(self._rng_seed + 1)
        out = data.copy()
        x1 = data[self.x].to_numpy() == 1
        if not x1.any():
            return out
        with thread_cap(1):
            for v in self.order_:
                pa, m = self.models_[v]
                f_obs = data.loc[x1, pa].to_numpy(float)  # factual parents, X = x1
                f_new = out.loc[x1, pa].to_numpy(float).copy()  # already-mapped parents
                if self.x in pa:
                    f_new[:, pa.index(self.x)] = 0.0
                val = data.loc[x1, v].to_numpy(float)
                kind = self.kinds_[v]
                if kind == "continuous":
                    new = val - m.predict(f_obs) + m.predict(f_new)
                else:
                    new = _discrete_transport(m, self.x0_values_[v], val, f_obs, f_new, rng)
                out.loc[x1, v] = new
        return out

    def fit_transform(self, data: pd.DataFrame) -> pd.DataFrame:
        """:meth:`fit` then :meth:`transform` on the same data.

        Parameters
        ----------
        data : pandas.DataFrame

        Returns
        -------
        pandas.DataFrame
        """
        return self.fit(data).transform(data)


def transport_graph(
    sfm: StandardFairnessModel, w_parents: Mapping[str, Sequence[str]] | None = None, bn: Sequence[str] | set[str] = ()
) -> tuple[dict[str, list[str]], list[str]]:
    """The transport graph and resolving variables that remove the effects outside ``bn``.

    Parameters
    ----------
    sfm : StandardFairnessModel
        Its ``x``, ``z``, ``w`` and ``y`` define the SFM: ``X, Z -> W -> Y``, ``X, Z -> Y``.
    w_parents : mapping, optional
        Parents *within W* of each mediator (e.g. juvenile counts -> priors -> charge); default: the
        mediators in the order given each depend on all earlier ones.
    bn : set of {"Z", "W"} (or {"SE", "IE"})
        Business necessity. ``Z`` not in BN: ``Z`` gets ``X`` as a parent, so it is mapped (the
        spurious effect is removed). ``W`` in BN: mediators are resolving (the indirect effect is kept).
        The direct effect is always removed.

    Returns
    -------
    (dict, list)
        ``parents`` for :class:`SequentialTransport` and the resolving variables.
    """
    keep = bn_effects(bn)
    if "DE" in keep:
        raise ValueError("the direct effect cannot be in business necessity for a transported predictor")
    x, zs, ws = sfm.x, list(sfm.z), list(sfm.w)
    parents: dict[str, list[str]] = {x: []}
    for i, z in enumerate(zs):
        parents[z] = ([] if "SE" in keep else [x]) + zs[:i]
    for i, w in enumerate(ws):
        inner = list(w_parents[w]) if w_parents is not None and w in w_parents else ws[:i]
        parents[w] = [x, *zs, *inner]
    parents[sfm.y] = [x, *zs, *ws]
    resolving = ws if "IE" in keep else []
    return parents, resolving


def _crossfit_proba(
    feats: np.ndarray, target: np.ndarray, learner: Any, n_folds: int, rng: np.random.Generator
) -> np.ndarray:
    """Out-of-fold predicted P(target = 1) (the script's out-of-bag forest predictions)."""
    n = target.size
    fold = rng.permutation(np.arange(n) % n_folds)
    out = np.empty(n)
    seed = int(rng.integers(2**31 - 1))
    binary = np.unique(target).size <= 2
    for k in range(n_folds):
        te = fold == k
        if binary:
            m = make_learner(learner, "classifier", seed).fit(feats[~te], target[~te])
            out[te] = m.predict_proba(feats[te])[:, list(m.classes_).index(1)] if 1 in m.classes_ else 0.0
        else:
            m = make_learner(learner, "regressor", seed).fit(feats[~te], target[~te])
            out[te] = m.predict(feats[te])
    return out


def _check_sfm_folds(data: pd.DataFrame, sfm: StandardFairnessModel, n_folds: Any) -> None:
    """The SFM, the data and enough units of each group for ``n_folds`` out-of-fold fits.

    The folds are not stratified here, so the rule of :func:`~cflib.fairness.effects.ctf_effects`
    (two units of each group per fold) is a floor, not a guarantee.
    """
    if not isinstance(sfm, StandardFairnessModel):
        raise TypeError(f"sfm must be a StandardFairnessModel, got {type(sfm).__name__}")
    check_count(n_folds, "n_folds", minimum=2)
    sfm.validate(data)
    smaller = int(data[sfm.x].value_counts().min())
    if smaller < 2 * n_folds:
        raise ValueError(
            f"data: the smaller group of {sfm.x!r} has {smaller} units; n_folds={n_folds} needs at least {2 * n_folds}"
        )


def fair_predictor(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    bn: Sequence[str] | set[str] = (),
    *,
    w_parents: Mapping[str, Sequence[str]] | None = None,
    learner: Any = "hgb",
    transport_learner: Any = "hgb",
    n_folds: int = 5,
    seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """A fairadapt-style predictor that keeps only the effects in ``bn`` (Sec. 4, Fig. 6).

    The data are mapped to the ``x0`` world by :class:`SequentialTransport` along
    :func:`transport_graph` (outcome included), a classifier is trained on the mapped features and
    mapped outcome with ``X`` restored to its original value, and every unit gets an out-of-fold
    prediction from its mapped features (the script used a random forest's out-of-bag predictions).

    Parameters
    ----------
    data : pandas.DataFrame
    sfm : StandardFairnessModel
        ``x`` must be coded 0/1 and ``y`` be the outcome to predict.
    bn : set of {"Z", "W"}
        Business necessity (see :func:`transport_graph`).
    w_parents : mapping, optional
        Parents within ``W``.
    learner, transport_learner : {"hgb", "linear", "rf"} or scikit-learn estimator
        Predictor and transport models.
    n_folds : int
        Folds for the out-of-fold predictions.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        ``score`` (the prediction) and the mapped columns (suffix ``_adapted``), one row per unit.
    """
    _check_sfm_folds(data, sfm, n_folds)
    rng = as_generator(seed)
    parents, resolving = transport_graph(sfm, w_parents, bn)
    cols = list(parents)
    ad = SequentialTransport(parents, sfm.x, resolving=resolving, learner=transport_learner, seed=rng).fit_transform(
        data[cols]
    )
    feats = ad[[sfm.x, *sfm.z, *sfm.w]].to_numpy(float)
    feats[:, 0] = data[sfm.x].to_numpy(float)  # X restored, as in the paper's script
    with thread_cap(1):
        score = _crossfit_proba(feats, ad[sfm.y].to_numpy(float), learner, n_folds, rng)
    out = pd.DataFrame({"score": score}, index=data.index)
    for c in [*sfm.z, *sfm.w, sfm.y]:
        out[c + "_adapted"] = ad[c].to_numpy()
    return out


def projection_predictor(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    bn: Sequence[str] | set[str],
    *,
    learner: Any = "hgb",
    n_folds: int = 5,
    seed: int | np.random.Generator | None = None,
) -> np.ndarray:
    """Out-of-fold predictor that satisfies causal predictive parity exactly at population level.

    * ``BN = {Z}``: ``Y_hat = E[Y | x1, z]``. No ``X`` and no ``W`` in it, so Ctf-DE = Ctf-IE = 0,
      and ``Ctf-SE(Y_hat) = E[m_1(Z) | x0] - E[m_1(Z) | x1] = E[Y_{x1} | x0] - E[Y | x1] = Ctf-SE(Y)``.
    * ``BN = {Z, W}``: ``Y_hat = E[Y | x1, z, w]``; Ctf-DE = 0 and its IE and SE equal those of ``Y``
      by the same argument (Eqs. 54-56).
    * ``BN = {}``: the overall mean (the only predictor with zero effects on every pathway that this
      construction offers).

    Parameters
    ----------
    data : pandas.DataFrame
    sfm : StandardFairnessModel
    bn : set of {"Z", "W"} (or {"SE", "IE"})
        ``{W}`` alone is not offered by this construction (a ValueError says so).
    learner : {"hgb", "linear", "rf"} or scikit-learn regressor
    n_folds : int
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    numpy.ndarray
        One prediction per row.
    """
    keep = bn_effects(bn)
    if "DE" in keep:
        raise ValueError("the direct effect is never in business necessity here")
    if keep == {"IE"}:
        raise ValueError("projection_predictor supports BN = {}, {Z} or {Z, W}; for BN = {W} use fair_predictor")
    _check_sfm_folds(data, sfm, n_folds)
    arr = sfm.arrays(data)
    assert arr.y is not None  # the SFM's outcome column
    if not keep:
        return np.full(arr.y.size, arr.y.mean())
    feats = arr.z if keep == {"SE"} else np.hstack([arr.z, arr.w])
    rng = as_generator(seed)
    n = arr.y.size
    fold = rng.permutation(np.arange(n) % n_folds)
    out = np.empty(n)
    seed_ = int(rng.integers(2**31 - 1))
    with thread_cap(1):
        for k in range(n_folds):
            te = fold == k
            tr1 = (~te) & (arr.x == 1)
            if feats.shape[1] == 0:
                out[te] = arr.y[tr1].mean()
                continue
            m = make_learner(learner, "regressor", seed_).fit(feats[tr1], arr.y[tr1])
            out[te] = m.predict(feats[te])
    return out


def demean_by_group(score: ArrayLike, x: ArrayLike) -> np.ndarray:
    """Force statistical parity in the mean: ``s - E[s | x] + E[s]`` (used to illustrate Prop. 2).

    Parameters
    ----------
    score : array-like
    x : array-like
        Protected attribute coded 0/1.

    Returns
    -------
    numpy.ndarray
    """
    s = check_array(score, "score").astype(float)
    x = check_array(x, "x", n=s.size, n_name="score", numeric=False)
    out = s.copy()
    for g in np.unique(x):
        out[x == g] += s.mean() - s[x == g].mean()
    return out
