"""Repeated-sampling experiments of the parity-decomposition chapter.

Each function runs one of the studies of Plecko & Bareinboim (arXiv 2306.05059) or of the notes'
checkable claims over repetitions and returns a tidy table for the notebooks to plot:

* :func:`coverage_study`: DR estimates on the linear SFM against the closed forms (notes, claim 6);
* :func:`a2_terms_study`: Theorem 1's integrated terms against ``n`` (App. A.2, Fig. 7) and the per-bin
  Term I against its ground truth (Fig. 8);
* :func:`pareto_study`: SPM against iPPM for predictors along the business-necessity spectrum
  (Sec. 4, Fig. 6);
* :func:`cookbook_study`: Algorithm 1 verdicts over repeated samples of the COMPAS-like SFM (claim 14).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..data.fairness_sim import (
    LinearSFMParams,
    appendix_a2_scm,
    compas_like_sfm,
    linear_sfm,
    linear_sfm_truth,
)
from .adapt import SequentialTransport, fair_predictor
from .decomposition import ippm, pp_decomposition, spm
from .effects import MEASURES, ctf_effects, make_learner
from .parity import causal_predictive_parity
from .sfm import StandardFairnessModel

__all__ = ["coverage_study", "a2_terms_study", "pareto_study", "cookbook_study", "A2_PARENTS"]

#: Causal graph of the App. A.2 SCM (Z is empty).
A2_PARENTS = {"x": [], "w1": ["x"], "w2": ["x", "w1"], "y": ["x", "w1", "w2"]}


def _progress(it, show: bool, desc: str):
    if not show:
        return it
    # Plain tqdm: tqdm.auto warns when ipywidgets is missing, which would clutter the executed pages.
    from tqdm import tqdm

    return tqdm(it, desc=desc)


def coverage_study(
    n: int, reps: int, *, params: LinearSFMParams | None = None, learner: Any = "linear", n_boot: int = 0, seed: int = 0, progress: bool = False
) -> pd.DataFrame:
    """Repeat the DR estimator on fresh linear-SFM samples and compare with the closed forms.

    Parameters
    ----------
    n : int
        Sample size per repetition.
    reps : int
        Repetitions.
    params : LinearSFMParams, optional
        Coefficients (default ``LinearSFMParams()``).
    learner : str or estimator
        Passed to :func:`~cflib.fairness.effects.ctf_effects`.
    n_boot : int
        Bootstrap replicates per repetition (checks the identity in every replicate).
    seed : int
    progress : bool
        Show a progress bar.

    Returns
    -------
    pandas.DataFrame
        One row per (rep, measure): ``estimate, se, ci_low, ci_high, truth, covered, z, residual``
        (``residual``: largest TV-identity violation over the estimate and its bootstrap replicates).
    """
    params = LinearSFMParams() if params is None else params
    truth = linear_sfm_truth(params)
    sfm = StandardFairnessModel("x", ["z"], ["w"], "y")
    rows = []
    for r in _progress(range(reps), progress, "repetitions"):
        d = linear_sfm(n, params, seed=seed * 100_003 + r)
        e = ctf_effects(d, sfm, learner=learner, n_boot=n_boot, seed=r)
        res = e.decomposition_residual()
        for m in MEASURES:
            lo, hi = e.ci[m]
            rows.append({"rep": r, "measure": m, "estimate": e.estimate[m], "se": e.se[m], "ci_low": lo, "ci_high": hi, "truth": truth[m], "covered": lo <= truth[m] <= hi, "z": (e.estimate[m] - truth[m]) / e.se[m], "residual": res})
    return pd.DataFrame(rows)


def _fit_predictor(d: pd.DataFrame, seed: int) -> np.ndarray:
    """The App. A.2 predictor: gradient boosting on (X, W1, W2), evaluated in-sample as in the script."""
    from threadpoolctl import threadpool_limits

    feats = d[["x", "w1", "w2"]].to_numpy(float)
    with threadpool_limits(limits=1):
        m = make_learner("hgb", "regressor", seed).fit(feats, d["y"].to_numpy(float))
        return m.predict(feats)


def a2_terms_study(ns: Sequence[int], reps: int, *, bins: int = 20, transport_learner: Any = "hgb", seed: int = 0, progress: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Theorem 1 on the App. A.2 SCM: integrated terms against ``n`` and per-bin Term I.

    For every ``n`` and repetition: draw the SCM, fit the predictor (gradient boosting, standing in
    for the paper's xgboost), estimate ``Y_{x0}`` by :class:`SequentialTransport` (additive-noise
    residual transfer, standing in for fairadapt) and decompose PPM per quantile bin (Eqs. 50-52); the
    ground truth uses the SCM's own ``Y_{x0}`` on the same bins (Fig. 8's construction).

    Parameters
    ----------
    ns : sequence of int
        Sample sizes.
    reps : int
        Repetitions per sample size.
    bins : int
        Quantile bins of the predictor (20 in the paper).
    transport_learner : str or estimator
        Regressor of the transport.
    seed : int
    progress : bool

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        Integrated table (one row per n, rep: ``term_I, term_II, ppm, true_term_I, true_term_II``) and
        per-bin table (one row per n, rep, bin: ``term_I, true_term_I, term_II, ppm``).
    """
    integ, perbin = [], []
    jobs = [(n, r) for n in ns for r in range(reps)]
    for n, r in _progress(jobs, progress, "samples"):
        s = seed * 1_000_003 + 7919 * r + n
        d = appendix_a2_scm(n, seed=s)
        yh = _fit_predictor(d, s)
        ad = SequentialTransport(A2_PARENTS, "x", learner=transport_learner, seed=s).fit_transform(d[["x", "w1", "w2", "y"]])
        est = pp_decomposition(d.x, d.y, yh, ad.y, bins=bins)
        tru = pp_decomposition(d.x, d.y, yh, d.y_x0, bins=bins)
        integ.append({"n": n, "rep": r, **est.integrated, "true_term_I": tru.integrated["term_I"], "true_term_II": tru.integrated["term_II"]})
        t = est.table
        perbin.append(pd.DataFrame({"n": n, "rep": r, "bin": t.index + 1, "term_I": t.term_I, "true_term_I": tru.table.term_I, "term_II": t.term_II, "ppm": t.ppm}))
    return pd.DataFrame(integ).drop(columns="term_III"), pd.concat(perbin, ignore_index=True)


def pareto_study(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    bn_sets: Mapping[str, set[str]],
    reps: int,
    *,
    w_parents: Mapping[str, Sequence[str]] | None = None,
    quantile: float = 0.68,
    bins: int = 10,
    learner: Any = "hgb",
    transport_learner: Any = "hgb",
    n_folds: int = 5,
    seed: int = 0,
    progress: bool = False,
    return_predictions: bool = False,
) -> pd.DataFrame | tuple[pd.DataFrame, dict]:
    """SPM and iPPM of fair predictors along the business-necessity spectrum (Fig. 6).

    Parameters
    ----------
    data : pandas.DataFrame
    sfm : StandardFairnessModel
        ``x`` coded 0/1, ``y`` the true outcome.
    bn_sets : mapping
        Label -> BN set, e.g. ``{"∅": set(), "Z": {"Z"}, "W": {"W"}, "Z, W": {"Z", "W"}}``.
    reps : int
        Repetitions of the adaptation (different seeds; the script used 10).
    w_parents : mapping, optional
        Parents within ``W`` (see :func:`~cflib.fairness.adapt.transport_graph`).
    quantile : float
        SPM is computed on predictions binarised at this quantile of the scores (the script: 0.68).
    bins : int
        Quantile bins of the score for iPPM.
    learner, transport_learner : str or estimator
    n_folds : int
        Folds of the out-of-fold predictions.
    seed : int
    progress : bool
    return_predictions : bool
        Also return the output of :func:`~cflib.fairness.adapt.fair_predictor` of the first repetition
        of every BN set (to decompose them without refitting).

    Returns
    -------
    pandas.DataFrame or (pandas.DataFrame, dict)
        One row per (bn, rep): ``spm, spm_score, ippm``; with ``return_predictions`` also
        ``{bn label: predictor frame}``.
    """
    x = data[sfm.x].to_numpy()
    y = data[sfm.y].to_numpy(float)
    rows, first = [], {}
    jobs = [(lab, r) for lab in bn_sets for r in range(reps)]
    for lab, r in _progress(jobs, progress, "predictors"):
        fp = fair_predictor(data, sfm, bn_sets[lab], w_parents=w_parents, learner=learner, transport_learner=transport_learner, n_folds=n_folds, seed=seed * 1000 + r)
        if r == 0:
            first[lab] = fp
        s = fp["score"].to_numpy()
        cls = (s > np.quantile(s, quantile)).astype(float)
        rows.append({"bn": lab, "rep": r, "spm": spm(x, cls), "spm_score": spm(x, s), "ippm": ippm(x, y, s, bins)})
    return (pd.DataFrame(rows), first) if return_predictions else pd.DataFrame(rows)


def cookbook_study(n: int, reps: int, *, bn: set[str] = frozenset({"Z"}), learner: Any = "hgb", seed: int = 0, test: str = "difference", margin: float | None = None, progress: bool = False) -> pd.DataFrame:
    """Algorithm 1 on repeated samples of the COMPAS-like SFM, for the Northpointe-like score and the oracle FP.

    Parameters
    ----------
    n : int
        Sample size (the real data have 7214 rows).
    reps : int
    bn : set of str
    learner : str or estimator
    seed : int
    test : {"difference", "equivalence"}
    margin : float, optional
    progress : bool

    Returns
    -------
    pandas.DataFrame
        One row per (rep, predictor, effect): ``tested, ci_low, ci_high, passed`` and the overall
        ``verdict`` of the repetition.
    """
    sfm = StandardFairnessModel("x", ["z1", "z2"], ["j", "p", "d"], "y")
    rows = []
    for r in _progress(range(reps), progress, "samples"):
        d = compas_like_sfm(n, seed=seed * 10_007 + r)
        d = d.assign(diff_np=d.y - d.np, diff_fp=d.y - d.fp)
        est = ctf_effects(d, sfm, ["y", "np", "fp", "diff_np", "diff_fp"], learner=learner, seed=r)
        for p in ("np", "fp"):
            res = causal_predictive_parity(d, sfm, "y", p, bn, test=test, margin=margin, estimates={"y": est["y"], "y_hat": est[p], "diff": est["diff_" + p]})
            for c in res.checks:
                rows.append({"rep": r, "predictor": p, "effect": c.effect, "tested": c.tested, "ci_low": c.ci[0], "ci_high": c.ci[1], "passed": c.passed, "verdict": res.verdict})
    return pd.DataFrame(rows)
