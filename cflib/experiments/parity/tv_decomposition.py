"""Studies of notebook 01 (the standard fairness model and the TV decomposition).

The DR estimates on the linear SFM against the closed forms over repeated samples (notes, claim 6),
App. B's identification formulas on a discrete SFM (Eq. 56's sign) and the linearity of the estimator
in the outcome.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...data.fairness_sim import (
    LinearSFMParams,
    ctf_truth,
    discrete_sfm,
    discrete_sfm_joint,
    linear_sfm,
    linear_sfm_truth,
)
from ...fairness.effects import MEASURES, EffectEstimates, ctf_effects, identify_discrete
from ...fairness.sfm import StandardFairnessModel
from .common import EFFECTS, with_progress

__all__ = [
    "coverage_study",
    "discrete_identification",
    "linearity_gap",
]


def coverage_study(
    n: int,
    reps: int,
    *,
    params: LinearSFMParams | None = None,
    learner: Any = "linear",
    n_boot: int = 0,
    seed: int = 0,
    progress: bool = False,
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
    sfm = StandardFairnessModel("x", ("z",), ("w",), "y")
    rows = []
    for r in with_progress(range(reps), progress, "repetitions"):
        d = linear_sfm(n, params, seed=seed * 100_003 + r)
        e = ctf_effects(d, sfm, learner=learner, n_boot=n_boot, seed=r)
        assert isinstance(e, EffectEstimates)  # one outcome: one result
        res = e.decomposition_residual()
        for m in MEASURES:
            lo, hi = e.ci[m]
            rows.append(
                {
                    "rep": r,
                    "measure": m,
                    "estimate": e.estimate[m],
                    "se": e.se[m],
                    "ci_low": lo,
                    "ci_high": hi,
                    "truth": truth[m],
                    "covered": lo <= truth[m] <= hi,
                    "z": (e.estimate[m] - truth[m]) / e.se[m],
                    "residual": res,
                }
            )
    return pd.DataFrame(rows)


def discrete_identification(n: int, *, seed: int = 0) -> tuple[pd.DataFrame, dict[str, float], dict[str, float]]:
    """App. B's identification formulas on the exact joint of a discrete SFM against Monte Carlo counterfactuals.

    Parameters
    ----------
    n : int
        Monte Carlo units.
    seed : int

    Returns
    -------
    (pandas.DataFrame, dict, dict)
        The comparison table (rows DE, IE, SE; Eqs. 54-55 with Eq. 7's sign, Monte Carlo, the Monte
        Carlo standard error, Eq. 56 as printed), the exact identified measures and the Monte Carlo ones.
    """
    exact = identify_discrete(discrete_sfm_joint())
    d = discrete_sfm(n, seed=seed)
    y0, y1, y10 = (d[c].to_numpy(float) for c in ("y_x0", "y_x1", "y_x1_wx0"))
    mc = ctf_truth(d.x.values, y0, y1, y10)
    x0 = d.x.to_numpy() == 0
    n0, n1 = int(x0.sum()), int((~x0).sum())
    mc_se = {
        "DE": np.std((y10 - y0)[x0], ddof=1) / np.sqrt(n0),
        "IE": np.std((y10 - y1)[x0], ddof=1) / np.sqrt(n0),
        "SE": np.sqrt(np.var(y1[x0], ddof=1) / n0 + np.var(y1[~x0], ddof=1) / n1),
    }
    ident = pd.DataFrame(
        {
            "Eqs. 54-55, Eq. 7 sign": [exact[m] for m in EFFECTS],
            "Monte Carlo counterfactuals": [mc[m] for m in EFFECTS],
            "Monte Carlo se": [float(mc_se[m]) for m in EFFECTS],
            "Eq. 56 as printed": [np.nan, np.nan, exact["SE_eq56_as_printed"]],
        },
        index=list(EFFECTS),
    )
    return ident, exact, mc


def linearity_gap(data: pd.DataFrame, sfm: StandardFairnessModel, *, seed: int = 0) -> float:
    """Largest ``|Ctf(Y - Y_hat) - (Ctf(Y) - Ctf(Y_hat))|`` over the measures, linear learners, shared folds.

    Parameters
    ----------
    data : pandas.DataFrame
        With columns ``y`` and ``y_hat`` besides the SFM's.
    sfm : StandardFairnessModel
    seed : int

    Returns
    -------
    float
    """
    paired = ctf_effects(
        data.assign(diff=data.y - data.y_hat), sfm, ["y", "y_hat", "diff"], learner="linear", seed=seed
    )
    assert isinstance(paired, dict)  # a sequence of outcomes: outcome -> result
    return max(
        abs(paired["diff"].estimate[m] - (paired["y"].estimate[m] - paired["y_hat"].estimate[m])) for m in MEASURES
    )
