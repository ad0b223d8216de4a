"""Studies of notebook 02 (predictive parity decomposed): Theorem 1, Corollary 1, Props. 1-2 and App. A.2.

Theorem 1's three terms on true counterfactuals of the App. A.2 SCM, Corollary 1 and Props. 1-2 on the
linear SCM, the efficient learner's Ctf measures, and Theorem 1's integrated terms against ``n`` (Fig. 7)
with the per-bin Term I against its ground truth (Fig. 8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...data.fairness_sim import (
    a2_oracle_predictor,
    appendix_a2_scm,
    linear_mediation_scm,
    linear_sfm,
)
from ...fairness.adapt import SequentialTransport, demean_by_group
from ...fairness.decomposition import (
    PPDecomposition,
    ippm,
    linear_pp_terms,
    pp_decomposition,
    pp_decomposition_counterfactual,
    ppm_table,
    spm,
)
from ...fairness.effects import ctf_effects, make_learner
from ...fairness.sfm import StandardFairnessModel
from .common import CHUNKS, EFFECTS, with_progress

__all__ = [
    "A2_PARENTS",
    "a2_three_terms",
    "corollary1",
    "calibration_vs_parity",
    "efficient_ctf_gap",
    "make_transport_learner",
    "a2_terms_study",
    "fig8_arrays",
    "fig8_within_1sd",
]


#: Causal graph of the App. A.2 SCM (Z is empty).
A2_PARENTS = {"x": [], "w1": ["x"], "w2": ["x", "w1"], "y": ["x", "w1", "w2"]}


_INNER = slice(1, -1)  # interior bins of a binned score (the tails carry binning bias)


def _chunk_se(frame: pd.DataFrame, stat: Any, chunks: int = CHUNKS) -> np.ndarray:
    """Batch-means standard error of ``stat(frame)``: the spread of ``stat`` over disjoint chunks of the rows.

    The rows are independent units, so the statistic on the whole frame has about ``1 / chunks`` of the
    variance of the statistic on one chunk: ``se = sd(chunk values) / sqrt(chunks)``.
    """
    parts = [np.asarray(stat(frame.iloc[k::chunks]), dtype=float) for k in range(chunks)]
    return np.std(parts, axis=0, ddof=1) / np.sqrt(chunks)


def a2_three_terms(n: int, *, bins: int = 20, seed: int = 0) -> tuple[PPDecomposition, float, dict[str, float]]:
    """Theorem 1's three terms per bin of the efficient predictor on the App. A.2 SCM, from true counterfactuals.

    Parameters
    ----------
    n : int
        Units of the population.
    bins : int
        Quantile bins of the predictor.
    seed : int

    Returns
    -------
    (PPDecomposition, float, dict)
        The decomposition, the ATE ``E[Y_x1 - Y_x0]`` of the sample, and the batch-means standard
        errors (:data:`CHUNKS` disjoint chunks) of the integrated Term III and of the ATE.
    """
    pop = appendix_a2_scm(n, seed=seed)
    u1 = pop.w1 - pop.x
    u2 = pop.w2 - (pop.w1**2 / 4 - pop.x / 3)
    w1_1 = 1 + u1  # the x1-world mediators of every unit
    w2_1 = w1_1**2 / 4 - 1 / 3 + u2
    pop = pop.assign(
        yh_x1=a2_oracle_predictor(np.ones(len(pop)), w1_1, w2_1),
        yh_x0=a2_oracle_predictor(np.zeros(len(pop)), pop.w1_x0, pop.w2_x0),
    )

    def terms(p: pd.DataFrame) -> PPDecomposition:
        return pp_decomposition_counterfactual(p.x, p.y_x0, p.y_x1, p.yh_x0, p.yh_x1, bins=bins)

    se = _chunk_se(pop, lambda p: [terms(p).integrated["term_III"], (p.y_x1 - p.y_x0).mean()])
    return terms(pop), float((pop.y_x1 - pop.y_x0).mean()), {"term_III": float(se[0]), "ate": float(se[1])}


def corollary1(
    coefficients: Mapping[str, float], n: int, *, rng: np.random.Generator, seed: int = 0
) -> tuple[pd.DataFrame, PPDecomposition, PPDecomposition, pd.DataFrame]:
    """Corollary 1 on the linear SCM: the efficient predictor and the same predictor plus N(0, 1) noise.

    Parameters
    ----------
    coefficients : mapping
        ``a_xw, a_wy, a_xy`` of :func:`~cflib.data.fairness_sim.linear_mediation_scm`.
    n : int
        Units.
    rng : numpy.random.Generator
        Draws the predictor's noise.
    seed : int
        Seed of the SCM's sample.

    Returns
    -------
    (pandas.DataFrame, PPDecomposition, PPDecomposition, pandas.DataFrame)
        The table (rows Term I, Term II (+III), PPM, SPM, mean |PPM|; columns closed form, efficient,
        noisy, the decomposition means over interior deciles, then the batch-means standard errors of the two
        sample columns), both decompositions (10 bins) and the sample (with the noise in ``noise``).
    """
    cf = linear_pp_terms(**coefficients)
    lin = linear_mediation_scm(n, **coefficients, seed=seed)
    lin["noise"] = rng.standard_normal(len(lin))

    def decompositions(d: pd.DataFrame) -> tuple[PPDecomposition, PPDecomposition]:
        return (
            pp_decomposition_counterfactual(d.x, d.y_x0, d.y_x1, d.y_hat_x0, d.y_hat_x1, bins=10),
            pp_decomposition_counterfactual(d.x, d.y_x0, d.y_x1, d.y_hat_x0 + d.noise, d.y_hat_x1 + d.noise, bins=10),
        )

    def column(dec: PPDecomposition, x: pd.Series, score: pd.Series) -> list[float]:
        t = dec.table
        return [
            t.term_I.iloc[_INNER].mean(),
            (t.term_II + t.term_III).iloc[_INNER].mean(),
            t.ppm.iloc[_INNER].mean(),
            spm(x, score),
            t.ppm.iloc[_INNER].abs().mean(),
        ]

    def columns(d: pd.DataFrame) -> np.ndarray:
        eff, noisy = decompositions(d)
        return np.array([column(eff, d.x, d.y_hat), column(noisy, d.x, d.y_hat + d.noise)]).T

    eff, noisy = decompositions(lin)
    se = _chunk_se(lin, columns)
    table = pd.DataFrame(
        {
            "closed form (efficient)": [cf["term_I"], cf["term_II"], 0.0, cf["spm"], 0.0],
            "efficient, interior bins": column(eff, lin.x, lin.y_hat),
            "efficient + N(0,1) noise": column(noisy, lin.x, lin.y_hat + lin.noise),
            "se (efficient)": se[:, 0],
            "se (noisy)": se[:, 1],
        },
        index=["Term I", "Term II (+III)", "PPM", "SPM", "mean |PPM|"],
    )
    return table, eff, noisy, lin


def calibration_vs_parity(lin: pd.DataFrame) -> pd.DataFrame:
    """SPM and iPPM of Y, the efficient predictor and the SP-forced (group-demeaned) predictor (Props. 1-2).

    Parameters
    ----------
    lin : pandas.DataFrame
        A sample of :func:`~cflib.data.fairness_sim.linear_mediation_scm`.

    Returns
    -------
    pandas.DataFrame
        Rows ``Y, efficient Y_hat, SP-forced Y_hat``; columns ``SPM, iPPM (10 bins), iPPM interior bins``,
        ``SPM - TV(Y)`` and the batch-means standard errors ``se SPM - TV(Y)`` and ``se iPPM interior bins``.
    """

    def table(d: pd.DataFrame) -> pd.DataFrame:
        sp_forced = demean_by_group(d.y_hat, d.x)
        t = pd.DataFrame(
            {
                "SPM": [spm(d.x, d.y), spm(d.x, d.y_hat), spm(d.x, sp_forced)],
                "iPPM (10 bins)": [np.nan, ippm(d.x, d.y, d.y_hat, 10), ippm(d.x, d.y, sp_forced, 10)],
                "iPPM interior bins": [
                    np.nan,
                    ppm_table(d.x, d.y, d.y_hat, 10).ppm.iloc[_INNER].mean(),
                    ppm_table(d.x, d.y, sp_forced, 10).ppm.iloc[_INNER].mean(),
                ],
            },
            index=["Y", "efficient Y_hat", "SP-forced Y_hat"],
        )
        return t.assign(**{"SPM - TV(Y)": t.SPM - t.SPM.iloc[0]})

    out = table(lin)
    se = pd.DataFrame(_chunk_se(lin, table), index=out.index, columns=out.columns)
    return out.assign(**{"se SPM - TV(Y)": se["SPM - TV(Y)"], "se iPPM interior bins": se["iPPM interior bins"]})


def efficient_ctf_gap(n: int, *, seed: int = 0) -> pd.DataFrame:
    """Paired DR estimates of ``Ctf(Y - Y_hat)`` for the efficient predictor on the linear SFM of notebook 1.

    Parameters
    ----------
    n : int
        Units.
    seed : int
        The sample is drawn with ``seed + 1`` and the estimator's folds with ``seed``.

    Returns
    -------
    pandas.DataFrame
        Rows DE, IE, SE: ``estimate`` and ``se`` (influence function) of ``Ctf(Y - Y_hat)``.
    """
    big = linear_sfm(n, seed=seed + 1)
    big = big.assign(diff=big.y - big.y_hat)
    cpp = ctf_effects(
        big, StandardFairnessModel("x", ("z",), ("w",), "y"), ["y", "y_hat", "diff"], learner="linear", seed=seed
    )
    assert isinstance(cpp, dict)  # a sequence of outcomes: outcome -> result
    d = cpp["diff"]
    return pd.DataFrame(
        {"estimate": [d.estimate[m] for m in EFFECTS], "se": [d.se[m] for m in EFFECTS]}, index=list(EFFECTS)
    )


def make_transport_learner(name: str) -> Any:
    """The transport's regression for :func:`a2_terms_study`: ``"quadratic"`` (degree-2 least squares) or ``"hgb"``.

    Parameters
    ----------
    name : {"quadratic", "hgb"}

    Returns
    -------
    sklearn estimator or str
    """
    if name == "quadratic":
        from sklearn.linear_model import LinearRegression
        from sklearn.pipeline import make_pipeline
        from sklearn.preprocessing import PolynomialFeatures

        return make_pipeline(PolynomialFeatures(2), LinearRegression())
    if name == "hgb":
        return "hgb"
    raise ValueError(f"transport learner must be 'quadratic' or 'hgb', got {name!r}")


def _fit_predictor(d: pd.DataFrame, seed: int) -> np.ndarray:
    """The App. A.2 predictor: gradient boosting on (X, W1, W2), evaluated in-sample as in the script."""
    from threadpoolctl import threadpool_limits

    feats = d[["x", "w1", "w2"]].to_numpy(float)
    with threadpool_limits(limits=1):
        m = make_learner("hgb", "regressor", seed).fit(feats, d["y"].to_numpy(float))
        return m.predict(feats)


def a2_terms_study(
    ns: Sequence[int],
    reps: int,
    *,
    bins: int = 20,
    transport_learner: Any = "hgb",
    seed: int = 0,
    progress: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
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
    for n, r in with_progress(jobs, progress, "samples"):
        s = seed * 1_000_003 + 7919 * r + n
        d = appendix_a2_scm(n, seed=s)
        yh = _fit_predictor(d, s)
        ad = SequentialTransport(A2_PARENTS, "x", learner=transport_learner, seed=s).fit_transform(
            d[["x", "w1", "w2", "y"]]
        )
        est = pp_decomposition(d.x, d.y, yh, ad.y, bins=bins)
        tru = pp_decomposition(d.x, d.y, yh, d.y_x0, bins=bins)
        integ.append(
            {
                "n": n,
                "rep": r,
                **est.integrated,
                "true_term_I": tru.integrated["term_I"],
                "true_term_II": tru.integrated["term_II"],
            }
        )
        t = est.table
        perbin.append(
            pd.DataFrame(
                {
                    "n": n,
                    "rep": r,
                    "bin": t.index + 1,
                    "term_I": t.term_I,
                    "true_term_I": tru.table.term_I,
                    "term_II": t.term_II,
                    "ppm": t.ppm,
                }
            )
        )
    return pd.DataFrame(integ).drop(columns="term_III"), pd.concat(perbin, ignore_index=True)


def fig8_arrays(perbin: pd.DataFrame, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin Term I estimates and truths at sample size ``n`` (repetitions by bins), as Fig. 8 plots them.

    Parameters
    ----------
    perbin : pandas.DataFrame
        Second output of :func:`a2_terms_study`.
    n : int
        One of its sample sizes.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray)
        Estimates and truths, each ``(reps, bins)``.
    """
    sel = perbin[perbin.n == n]
    if sel.empty:
        raise ValueError(f"n={n} is not one of the study's sample sizes {sorted(perbin.n.unique())}")
    return (
        sel.pivot(index="rep", columns="bin", values="term_I").to_numpy(),
        sel.pivot(index="rep", columns="bin", values="true_term_I").to_numpy(),
    )


def fig8_within_1sd(est: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """Per bin: is the mean estimate within one standard deviation (over repetitions) of the mean truth?

    Parameters
    ----------
    est, truth : numpy.ndarray
        ``(reps, bins)`` from :func:`fig8_arrays`.

    Returns
    -------
    numpy.ndarray of bool
    """
    return np.abs(np.nanmean(est, 0) - np.nanmean(truth, 0)) <= np.maximum(np.nanstd(est, 0), 1e-9)
