"""Studies of notebook 04 (the SP-PP spectrum): SPM against iPPM along the business-necessity spectrum (Sec. 4, Fig. 6)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...fairness.adapt import fair_predictor
from ...fairness.decomposition import ippm, spm
from ...fairness.effects import MEASURES, EffectEstimates, ctf_effects
from ...fairness.sfm import StandardFairnessModel
from .common import EFFECTS, with_progress

__all__ = [
    "pareto_study",
    "effects_kept",
]


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
    for lab, r in with_progress(jobs, progress, "predictors"):
        fp = fair_predictor(
            data,
            sfm,
            bn_sets[lab],
            w_parents=w_parents,
            learner=learner,
            transport_learner=transport_learner,
            n_folds=n_folds,
            seed=seed * 1000 + r,
        )
        if r == 0:
            first[lab] = fp
        s = fp["score"].to_numpy()
        cls = (s > np.quantile(s, quantile)).astype(float)
        rows.append({"bn": lab, "rep": r, "spm": spm(x, cls), "spm_score": spm(x, s), "ippm": ippm(x, y, s, bins)})
    return (pd.DataFrame(rows), first) if return_predictions else pd.DataFrame(rows)


def effects_kept(
    first: Mapping[str, pd.DataFrame],
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    *,
    learner: Any = "hgb",
    n_folds: int = 5,
    seed: int = 0,
) -> pd.DataFrame:
    """DR decomposition of each fair predictor's score on the adapted covariates (the paper's choice).

    Parameters
    ----------
    first : mapping
        ``{BN label: predictor frame}`` from :func:`pareto_study` with ``return_predictions=True``.
    data : pandas.DataFrame
        The COMPAS data (for the attribute ``nonwhite``).
    sfm : StandardFairnessModel
    learner : str or estimator
    n_folds : int
    seed : int

    Returns
    -------
    pandas.DataFrame
        Indexed by BN label: ``TV, DE, IE, SE`` as "estimate [low, high]" text, and ``_se``, ``_ie``
        (estimates) and ``_sd`` (standard errors per effect) for the claims.
    """
    rows = []
    for lab, fp in first.items():
        ad = pd.DataFrame({c: fp[c + "_adapted"] for c in [*sfm.z, *sfm.w]}).assign(
            nonwhite=data.nonwhite.values, score=fp.score.values
        )
        e = ctf_effects(ad, sfm, "score", learner=learner, n_folds=n_folds, seed=seed)
        assert isinstance(e, EffectEstimates)  # one outcome: one result
        rows.append(
            {
                "BN": lab,
                **{m: f"{e.estimate[m]:+.3f} [{e.ci[m][0]:+.3f}, {e.ci[m][1]:+.3f}]" for m in MEASURES},
                "_se": e.estimate["SE"],
                "_ie": e.estimate["IE"],
                "_sd": {m: e.se[m] for m in EFFECTS},
            }
        )
    return pd.DataFrame(rows).set_index("BN")
