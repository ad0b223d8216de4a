"""Studies of notebook 03 (the COMPAS cookbook): Fig. 5, Algorithm 1, and the COMPAS-like SFM with known truth.

The two fair predictors of COMPAS and the Ctf measures of every outcome (Fig. 5), Algorithm 1's
verdicts, and on the COMPAS-like SFM the oracle fair predictor, the population truth and Algorithm 1
over repeated samples (claims 13-14).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from typing import Any

import numpy as np
import pandas as pd

from ...data.fairness_sim import compas_like_sfm, compas_py, compas_w, ctf_truth
from ...fairness.adapt import fair_predictor, projection_predictor
from ...fairness.effects import EffectEstimates, ctf_effects
from ...fairness.parity import causal_predictive_parity
from ...fairness.sfm import StandardFairnessModel
from .common import CHUNKS, with_progress

__all__ = [
    "COMPAS_OUTCOMES",
    "PAPER_FIG5",
    "PAPER_FIG5_HALFWIDTH",
    "compas_fair_risk",
    "compas_truth",
    "cookbook_study",
    "compas_effects",
    "algorithm1",
]


#: The four COMPAS outcomes of notebook 3: label -> column (true outcome, Northpointe, two fair predictors).
COMPAS_OUTCOMES = {"Y": "two_year_recid", "Ŷ NP": "northpointe", "Ŷ FP": "fp", "Ŷ proj": "proj_score"}


#: Fig. 5 of the paper (COMPAS): estimates and 95% half-widths of DE, IE, SE, read off the figure.
PAPER_FIG5 = pd.DataFrame(
    {"Y": [-0.0008, -0.0506, -0.0317], "Ŷ NP": [0.06, -0.0773, -0.0375], "Ŷ FP": [-0.0072, -0.0025, -0.0275]},
    index=["DE", "IE", "SE"],
)


PAPER_FIG5_HALFWIDTH = pd.DataFrame(
    {"Y": [0.0259, 0.0124, 0.0153], "Ŷ NP": [0.0296, 0.0153, 0.0158], "Ŷ FP": [0.0111, 0.0198, 0.0122]},
    index=["DE", "IE", "SE"],
)


@functools.lru_cache(maxsize=4)
def _fair_risk_curves(draws: int, seed: int) -> np.ndarray:
    """``E[Y | x1, z1, age]`` on :data:`_AGES` for ``z1 = 0, 1`` (rows), by scrambled Sobol points over the mediators' noise."""
    from scipy.stats import qmc

    u = qmc.Sobol(3, scramble=True, seed=seed).random(draws)
    shape = (_AGES.size, draws)
    uj, up, ud = (np.broadcast_to(u[:, k], shape) for k in range(3))
    age, one = np.broadcast_to(_AGES[:, None], shape), np.ones(shape)
    return np.array(
        [
            compas_py(one, male * one, age, *compas_w(one, male * one, age, uj, up, ud)).mean(axis=1)
            for male in (0.0, 1.0)
        ]
    )


#: Ages of the interpolation grid of :func:`compas_fair_risk` (risk is smooth in age; older ages are clamped).
_AGES = np.linspace(18.0, 100.0, 83)


def compas_fair_risk(data: pd.DataFrame, *, draws: int = 1024, seed: int = 0) -> np.ndarray:
    """``E[Y | x1, Z]`` of the COMPAS-like SFM for every row: the oracle fair score for BN = {SE}.

    A predictor that reads only ``Z`` (and noise of its own) has Ctf-DE = Ctf-IE = 0, both at the
    unit level and as the estimator identifies them from ``(X, Z, W)``, and its Ctf-SE equals that of
    ``Y`` because ``E[Y_{x1} | x] = E[E[Y | x1, Z] | x]`` (notes Sec. 7.16: "build the oracle at x1").
    The mediators' noise is integrated out by scrambled Sobol points shared by every age, on a grid
    of ages one year apart, then interpolated.

    Parameters
    ----------
    data : pandas.DataFrame
        Rows of :func:`~cflib.data.fairness_sim.compas_like_sfm` (columns ``z1``, ``z2``).
    draws : int
        Sobol points over the three mediator noises (a power of 2).
    seed : int
        Scrambling of the Sobol points.

    Returns
    -------
    numpy.ndarray
        ``E[Y | x1, z1, z2]`` per row.
    """
    curves = _fair_risk_curves(int(draws), int(seed))
    z1, z2 = data["z1"].to_numpy(int), data["z2"].to_numpy(float)
    return np.where(z1 == 1, np.interp(z2, _AGES, curves[1]), np.interp(z2, _AGES, curves[0]))


def compas_truth(
    n: int, *, seed: int = 0, chunks: int = CHUNKS
) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """Population Ctf measures of the COMPAS-like SFM's ``y``, ``np`` and oracle ``fp``, with Monte Carlo standard errors.

    The measures come from ``n`` units (:func:`~cflib.data.fairness_sim.compas_like_sfm` with
    ``return_truth=True``; the oracle is that of :func:`compas_fair_risk`, so its DE and IE are exactly
    0); the standard errors from the spread over ``chunks`` further populations of ``n / (4 chunks)``
    units, rescaled to ``n`` units.

    Parameters
    ----------
    n : int
    seed : int
    chunks : int

    Returns
    -------
    (dict, dict)
        ``{outcome: {TV, DE, IE, SE}}`` and their standard errors, with ``"fp - y"`` (the gap of the
        oracle's measures from Y's) in the second.
    """

    def one(m: int, s: Any) -> dict[str, dict[str, float]]:
        d, t = compas_like_sfm(m, seed=s, return_truth=True)
        p1 = compas_fair_risk(d)
        t["fp"] = ctf_truth(d.x.to_numpy(), p1, p1, p1)
        t["fp - y"] = {k: t["fp"][k] - t["y"][k] for k in t["y"]}
        return t

    truth = one(n, seed)
    size = max(n // (4 * chunks), 100)  # a quarter of the population's cost in all; the spread is rescaled to n units
    parts = [one(size, np.random.default_rng((seed, k))) for k in range(chunks)]
    se = {o: {m: float(np.std([p[o][m] for p in parts], ddof=1) * np.sqrt(size / n)) for m in truth[o]} for o in truth}
    del truth["fp - y"]
    return truth, se


def cookbook_study(
    n: int,
    reps: int,
    *,
    bn: AbstractSet[str] = frozenset({"Z"}),
    learner: Any = "hgb",
    seed: int = 0,
    test: str = "difference",
    margin: float | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Algorithm 1 on repeated samples of the COMPAS-like SFM, for the Northpointe-like score and the oracle FP.

    The oracle FP is ``1{U < E[Y | x1, Z]}`` (:func:`compas_fair_risk`) with its own uniform noise ``U``.

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
    sfm = StandardFairnessModel("x", ("z1", "z2"), ("j", "p", "d"), "y")
    rows = []
    for r in with_progress(range(reps), progress, "samples"):
        d = compas_like_sfm(n, seed=seed * 10_007 + r)
        # The oracle of compas_fair_risk replaces the simulator's fp (which reads the mediators' noise); its own noise
        # comes from a separate stream, so the sample itself is unchanged.
        fp = (np.random.default_rng((seed, r, 1)).random(n) < compas_fair_risk(d)).astype(int)
        d = d.assign(fp=fp, diff_np=d.y - d.np, diff_fp=d.y - fp)
        est = ctf_effects(d, sfm, ["y", "np", "fp", "diff_np", "diff_fp"], learner=learner, seed=r)
        assert isinstance(est, dict)  # a sequence of outcomes: outcome -> result
        for p in ("np", "fp"):
            res = causal_predictive_parity(
                d,
                sfm,
                "y",
                p,
                set(bn),
                test=test,
                margin=margin,
                estimates={"y": est["y"], "y_hat": est[p], "diff": est["diff_" + p]},
            )
            for c in res.checks:
                rows.append(
                    {
                        "rep": r,
                        "predictor": p,
                        "effect": c.effect,
                        "tested": c.tested,
                        "ci_low": c.ci[0],
                        "ci_high": c.ci[1],
                        "passed": c.passed,
                        "verdict": res.verdict,
                    }
                )
    return pd.DataFrame(rows)


def compas_effects(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    *,
    learner: Any = "hgb",
    n_folds: int = 5,
    n_boot: int = 0,
    seed: int = 0,
) -> tuple[pd.DataFrame, dict[str, EffectEstimates]]:
    """Fit the two fair predictors of COMPAS and estimate TV, Ctf-DE/IE/SE of every outcome of :data:`COMPAS_OUTCOMES`.

    ``Ŷ FP`` is the class prediction of :func:`~cflib.fairness.adapt.fair_predictor` (BN = {Z}) and
    ``Ŷ proj`` the score of :func:`~cflib.fairness.adapt.projection_predictor`; the paired differences
    ``d_<predictor> = Y - predictor`` are estimated on the same folds for Algorithm 1.

    Parameters
    ----------
    data : pandas.DataFrame
        Output of :func:`cflib.fairness.compas.prepare_compas`.
    sfm : StandardFairnessModel
    learner : str or estimator
        Nuisance, predictor and transport learner.
    n_folds, n_boot : int
        Cross-fitting folds and bootstrap replicates of the DR estimator.
    seed : int

    Returns
    -------
    (pandas.DataFrame, dict)
        ``data`` with the columns ``fp, fp_score, proj_score`` and the differences added, and
        ``{column: EffectEstimates}``, with ``"fp_adapted"``: ``Ŷ FP`` decomposed on the adapted ``Z`` and ``W``
        (the paper's choice).
    """
    from ...fairness.compas import COMPAS_W_PARENTS

    fp = fair_predictor(
        data, sfm, {"Z"}, w_parents=COMPAS_W_PARENTS, learner=learner, transport_learner=learner, seed=seed
    )
    data = data.assign(fp=(fp.score > 0.5).astype(int), fp_score=fp.score)
    data["proj_score"] = projection_predictor(data, sfm, {"Z"}, learner=learner, seed=seed)
    predictors = ("northpointe", "fp", "proj_score")
    data = data.assign(**{"d_" + k: data.two_year_recid - data[k] for k in predictors})
    cols = list(COMPAS_OUTCOMES.values()) + ["d_" + k for k in predictors]
    est = ctf_effects(data, sfm, cols, learner=learner, n_folds=n_folds, n_boot=n_boot, seed=seed)
    assert isinstance(est, dict)  # a sequence of outcomes: outcome -> result
    adapted = pd.DataFrame({c: fp[c + "_adapted"].to_numpy() for c in [*sfm.z, *sfm.w]}).assign(
        **{sfm.x: data[sfm.x].to_numpy(), "fp": data["fp"].to_numpy()}
    )
    fp_adapted = ctf_effects(adapted, sfm, "fp", learner=learner, n_folds=n_folds, seed=seed)
    assert isinstance(fp_adapted, EffectEstimates)  # one outcome: one result
    est["fp_adapted"] = fp_adapted
    return data, est


def algorithm1(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    est: Mapping[str, Any],
    *,
    bn: AbstractSet[str] = frozenset({"SE"}),
    margin: float | None = None,
) -> tuple[pd.DataFrame, dict]:
    """Algorithm 1 for the three predictors of :data:`COMPAS_OUTCOMES` under both rules (difference, equivalence).

    Parameters
    ----------
    data : pandas.DataFrame
        First output of :func:`compas_effects`.
    sfm : StandardFairnessModel
    est : mapping
        Second output of :func:`compas_effects` (the estimates are reused, not refitted).
    bn : set of str
        Business-necessity set of effects.
    margin : float, optional
        Equivalence margin.

    Returns
    -------
    (pandas.DataFrame, dict)
        One row per (predictor, rule): ``pass``/``FAIL`` per effect and the verdict; and
        ``{(predictor, rule): CPPResult}``.
    """
    rows, results = [], {}
    for k in ("Ŷ NP", "Ŷ FP", "Ŷ proj"):
        v = COMPAS_OUTCOMES[k]
        pre = {"y": est["two_year_recid"], "y_hat": est[v], "diff": est["d_" + v]}
        for test in ("difference", "equivalence"):
            r = causal_predictive_parity(
                data, sfm, "two_year_recid", v, set(bn), test=test, margin=margin, estimates=pre
            )
            results[(k, test)] = r
            rows.append(
                {
                    "predictor": k,
                    "rule": test,
                    **{c.effect: "pass" if c.passed else "FAIL" for c in r.checks},
                    "Algorithm 1": r.verdict,
                }
            )
    return pd.DataFrame(rows).set_index(["predictor", "rule"]), results
