"""Calibration of every test in ``cflib.stats`` and ``cflib.fairness`` on data the chapters never use.

Two studies:

* :func:`cit_lr_dependence_study`: level and power of the regression form of CIT-LR (Ma et al.,
  2024, Sec. 5 and 6.2; :func:`cflib.stats.invariance.cit_lr_test`) against the strength of the
  dependence between the adjustment set ``Z`` and the attribute ``A``, for each of its forms. The data
  (:func:`common_cause_data`) have ``Z`` and ``A`` sharing a common cause, so ``Z`` is a valid
  adjustment set but is not independent of ``A``: the practical case the paper's forms assume away.
* :func:`calibration_table`: for every test (MMD, CF-CLOT at the null boundary, CIT-LR in its
  regression and generator forms, DP, EO, the doubly robust effects' intervals and Algorithm 1 of
  Plecko & Bareinboim), the empirical type-I error or coverage over ``R`` null replications with a
  Clopper-Pearson interval and a pass/fail verdict.

Every replication ``r`` of a case draws from ``numpy.random.default_rng([seed, case_index, r])``:
the numbers depend on the seed only, not on the order or the process the cases run in.

The page's claims (:func:`claims_calibration`) read each rate's Clopper-Pearson interval against
Bradley's liberal band ``[0.5 alpha, 1.5 alpha]`` (:func:`level_band`) with the rules of
:mod:`cflib.verdicts`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from .. import verdicts as vd

__all__ = [
    "clopper_pearson",
    "common_cause_data",
    "CIT_FORMS",
    "cit_lr_dependence_study",
    "plot_dependence_study",
    "CalibrationCase",
    "CalibrationResult",
    "calibration_cases",
    "calibration_table",
    "level_band",
    "deciding_replications",
    "claims_calibration",
]


def clopper_pearson(k: int, n: int, level: float = 0.99) -> tuple[float, float]:
    """Exact (Clopper-Pearson) binomial interval for ``k`` successes in ``n`` trials.

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials, ``n >= 1``.
    level : float
        Coverage in (0, 1).

    Returns
    -------
    (low, high) : tuple of float

    Examples
    --------
    >>> clopper_pearson(0, 10, 0.95)[0]
    0.0
    """
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(k, (int, np.integer)) or not 0 <= k <= n:
        raise ValueError(f"k must be an integer in [0, n={n}], got {k!r}")
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1), got {level!r}")
    tail = (1 - level) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(tail, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - tail, k + 1, n - k))
    return lo, hi


def _rng(seed: int, *keys: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), *map(int, keys)])


# --------------------------------------------------------------------------------------------
# CIT-LR when Z depends on A
# --------------------------------------------------------------------------------------------
def common_cause_data(
    n: int, *, dependence: float, a_effect: float = 0.0, seed: int | np.random.Generator | None = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predictions, attribute and adjustment set with ``Z`` and ``A`` sharing a common cause.

    ``U, W ~ N(0, 1)``; ``A ~ Bernoulli(sigmoid(dependence * U))``; ``Z = (U, W)``; the audited
    classifier predicts ``1[sin(1.5 U) + 0.5 U + 0.7 W + 0.5 e + a_effect * A > 0]`` with ``e ~ N(0, 1)``
    independent image noise. ``Z`` is a valid adjustment set (it blocks ``A <- U -> Y_hat``), so the
    classifier is counterfactually invariant exactly when ``a_effect = 0``; ``dependence = 0`` makes
    ``Z`` independent of ``A`` (the paper's assumption). The non-linear ``sin`` term makes a logistic
    :math:`\\hat g` misspecified, as any learner is on real data.

    Parameters
    ----------
    n : int
        Units.
    dependence : float
        Log-odds of ``A`` per unit of ``U`` (0: independent).
    a_effect : float
        Direct effect of ``A`` on the classifier's score (0: invariant).
    seed : int, numpy.random.Generator or None
        Randomness.

    Returns
    -------
    (y_hat, a, z) : tuple of numpy.ndarray
        Hard predictions (n,), attribute in {0, 1} (n,), adjustment set (n, 2).
    """
    from cflib.runtime import as_generator

    if not isinstance(n, (int, np.integer)) or n < 4:
        raise ValueError(f"n must be an integer >= 4, got {n!r}")
    rng = as_generator(seed)
    u, w = rng.standard_normal(n), rng.standard_normal(n)
    a = (rng.random(n) < expit(float(dependence) * u)).astype(int)
    score = np.sin(1.5 * u) + 0.5 * u + 0.7 * w + 0.5 * rng.standard_normal(n) + float(a_effect) * a
    return (score > 0).astype(int), a, np.column_stack([u, w])


#: Forms of :func:`cflib.stats.invariance.cit_lr_test` compared by :func:`cit_lr_dependence_study`.
CIT_FORMS: dict[str, dict[str, str]] = {
    "debiased, joint g (default)": {"h_mode": "debiased", "g_mode": "joint"},
    "debiased, separate g": {"h_mode": "debiased", "g_mode": "separate"},
    "marginalize, separate g (paper)": {"h_mode": "marginalize", "g_mode": "separate"},
    "marginalize, joint g": {"h_mode": "marginalize", "g_mode": "joint"},
    "regress, separate g (authors' code)": {"h_mode": "regress", "g_mode": "separate"},
}


def cit_lr_dependence_study(
    dependences: Sequence[float] = (0.0, 0.5, 1.0, 2.0),
    a_effects: Sequence[float] = (0.0, 0.5),
    *,
    forms: Sequence[str] | None = None,
    n: int = 1000,
    n_rep: int = 100,
    alpha: float = 0.05,
    level: float = 0.99,
    seed: int = 0,
) -> pd.DataFrame:
    """Rejection rate of each CIT-LR form against the strength of the Z-A dependence.

    Replication ``r`` at dependence ``s`` and effect ``e`` draws :func:`common_cause_data` with seed
    ``[seed, i_s, i_e, r]``; all forms test the same draws (and the same folds).

    Parameters
    ----------
    dependences : sequence of float
        Values of ``dependence`` (log-odds of ``A`` per unit of the common cause).
    a_effects : sequence of float
        Values of ``a_effect``; 0 gives the level, others the power.
    forms : sequence of str, optional
        Keys of :data:`CIT_FORMS` (default: all).
    n : int
        Units per replication (half train the regressions, half are tested).
    n_rep : int
        Replications per point.
    alpha : float
        Level of each test.
    level : float
        Coverage of the Clopper-Pearson interval of the rejection rate.
    seed : int
        Base seed.

    Returns
    -------
    pandas.DataFrame
        One row per (dependence, a_effect, form): ``rejections, n_rep, rate, ci_low, ci_high`` and
        ``calibrated`` (for ``a_effect == 0``: the interval contains ``alpha``; NaN otherwise).
    """
    from cflib.stats.invariance import cit_lr_test

    forms = list(CIT_FORMS) if forms is None else list(forms)
    unknown = [f for f in forms if f not in CIT_FORMS]
    if unknown:
        raise ValueError(f"unknown form(s) {unknown}; choose from {list(CIT_FORMS)}")
    if not isinstance(n_rep, (int, np.integer)) or n_rep < 1:
        raise ValueError(f"n_rep must be a positive integer, got {n_rep!r}")
    rows = []
    for i_s, s in enumerate(dependences):
        for i_e, e in enumerate(a_effects):
            hits = dict.fromkeys(forms, 0)
            for r in range(n_rep):
                y_hat, a, z = common_cause_data(n, dependence=s, a_effect=e, seed=_rng(seed, i_s, i_e, r))
                for f in forms:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)  # the paper's forms warn by design here
                        hits[f] += cit_lr_test(y_hat, a, z, seed=r, **CIT_FORMS[f]).pvalue < alpha
            for f in forms:
                lo, hi = clopper_pearson(int(hits[f]), n_rep, level)
                rows.append({
                    "dependence": float(s), "a_effect": float(e), "form": f, "rejections": int(hits[f]),
                    "n_rep": n_rep, "rate": hits[f] / n_rep, "ci_low": lo, "ci_high": hi,
                    "calibrated": bool(lo <= alpha <= hi) if e == 0 else np.nan,
                })
    return pd.DataFrame(rows)


def plot_dependence_study(table: pd.DataFrame, *, alpha: float = 0.05, axes: Any = None) -> np.ndarray:
    """Level (left) and power (right) of each form against the Z-A dependence, with intervals.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`cit_lr_dependence_study` (power: its largest ``a_effect``).
    alpha : float
        Level drawn as a dashed line.
    axes : sequence of two matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from cflib.plotting import subplots

    if axes is None:
        _, axes = subplots(1, 2, width=4.4, height=3.3)
    axes = np.asarray(axes).ravel()
    panels = [(0.0, "type-I error (invariant classifier)"), (float(table["a_effect"].max()), "power (classifier uses A)")]
    for ax, (eff, title) in zip(axes, panels, strict=True):
        sub = table[table["a_effect"] == eff]
        for i, (form, g) in enumerate(sub.groupby("form", sort=False)):
            x = g["dependence"].to_numpy() + 0.03 * (i - 2)
            ax.errorbar(x, g["rate"], yerr=[g["rate"] - g["ci_low"], g["ci_high"] - g["rate"]], marker="o", ms=4, capsize=2, label=form)
        if eff == 0:
            ax.axhline(alpha, color="0.3", ls="--", lw=1)
        ax.set_xlabel("dependence of A on the common cause (log-odds)")
        ax.set_ylabel("rejection rate")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title if eff == 0 else f"{title}, effect {eff:g}", fontsize=10)
    axes[0].legend(fontsize=7)
    return axes


# --------------------------------------------------------------------------------------------
# the calibration table
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CalibrationCase:
    """One test under a null (or one interval with a known truth) and how to replicate it.

    Attributes
    ----------
    name : str
        Test and setting.
    function : str
        The cflib function checked.
    quantity : str
        ``"type-I error"`` (events are rejections) or ``"coverage"`` (events are intervals covering
        the truth).
    nominal : float
        Target rate: ``alpha`` or the interval's level.
    data : str
        The null data, in words.
    n_per_rep : int
        Units (or pairs) per replication.
    replicate : callable
        ``replicate(rng) -> bool``: one replication's event.
    conservative : bool
        The test guarantees only ``rate <= nominal`` (e.g. a Bonferroni union): it passes when the
        interval's lower end is at most ``nominal``.
    expected_fail : str
        Empty, or why the case is expected outside the interval (a form kept to show its failure).
    stream : int, optional
        Random stream of the replications (default: the case's position). Rows that read different
        numbers off one fit per replication share a stream.
    quote, source : str
        The words the row checks, verbatim, and where they are: a paper's promise of a level (then
        ``reproduces`` is true) or, for a check of cflib's own test, the paper's or the notes' words about it.
    reproduces : bool
        The row checks a level the paper itself promises (a reproduction); otherwise it is a sanity
        check of cflib's test.
    """

    name: str
    function: str
    quantity: str
    nominal: float
    data: str
    n_per_rep: int
    replicate: Callable[[np.random.Generator], bool]
    conservative: bool = False
    expected_fail: str = ""
    stream: int | None = None
    quote: str = ""
    source: str = ""
    reproduces: bool = False

    def run(self, n_rep: int, seed: int, index: int) -> np.ndarray:
        """Events of ``n_rep`` replications (replication ``r`` uses the seed ``[seed, stream or index, r]``).

        Parameters
        ----------
        n_rep : int
            Replications.
        seed, index : int
            Base seed and the case's position (separates the cases' random streams).

        Returns
        -------
        numpy.ndarray of bool
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            stream = index if self.stream is None else self.stream
            return np.array([bool(self.replicate(_rng(seed, stream, r))) for r in range(n_rep)])


# The words each row checks. Only the CF-CLOT boundary rows check a level a paper promises (Fu et al.,
# Theorem 2); the others check cflib's own tests against the level their papers or notes take for granted.
_CFCLOT_LEVEL = ("Based on Theorem 1, we can directly control the Type I error of the test with a confidence level of α",
                 "Fu et al. (002), Sec. 4.1, before Theorem 2 (Pr(N-TE > tau_alpha | H0) -> alpha as m -> infinity)")
_RESAMPLING_LEVEL = ("With a valid resampling null, type-I ≤ α and power → 1 for any P ≠ Q.",
                     "notes on Fu et al. (002), §5 C9; not in the paper")
_SIGNFLIP_LEVEL = ("The Rademacher sign-flip version is exact: test with `P[p ≤ α] ≤ α` at small m.",
                   "notes on Fu et al. (002), §5 C9; not in the paper")
_CIT_LEVEL = ("If A has no effect on X (M_i = N_i, or f uses only A-invariant features), the CIT-LR rejection rate at "
              "α=0.05 should lie within a binomial confidence interval of 0.05 over replications.",
              "notes on Ma et al. (000), §5 item 7 [S]; not in the paper")
_CIT_MARGINAL = ("Equivalent and cheaper, because Z ⊥ A: ĥ(z) = Σ_a P(a) ĝ(a,z).",
                 "notes on Ma et al. (000), §7.1 item 4 (the paper's Z is independent of A, Lemma D.3); not in the paper")
_DP_TEST = ("To make it convenient for comparison, we transform DP into a statistical test, by conducting a paired t-test "
            "to determine if (5) holds.", "Ma et al. (000), Sec. 6.1 (no level is stated; cflib's form is a Welch test)")
_EO_TEST = ("Again we transform the criteria into a statistical test, by conducting a paired t-test to determine if (6) holds.",
            "Ma et al. (000), Sec. 6.1 (no level is stated; cflib's form is a Welch test)")
_EFFECT_CI = ("The indicated 95% confidence intervals are computed using repeated bootstrap repetitions of the dataset.",
              "Plecko & Bareinboim (004), Sec. 4, COMPAS (the paper's intervals are bootstrap ones; cflib's are influence-function "
              "normal intervals)")
_ALG1_TEST = ("In the finite sample case, one needs to perform hypothesis testing to see whether the effects differ.",
              "Plecko & Bareinboim (004), Sec. 3.1 after Alg. 1 (no level is stated)")
_ALG1_POPULATION = ("We remark that Alg. 1 is written in its population level version, in which the causal effects are "
                    "estimated perfectly with no uncertainty.", "Plecko & Bareinboim (004), Sec. 3.1 after Alg. 1")


def _mmd_case(n: int) -> CalibrationCase:
    from cflib.stats.mmd import mmd_test

    def rep(rng):  # skewed, bimodal in one coordinate: both samples from the same law
        def draw():
            return np.column_stack([rng.exponential(size=n), rng.choice([-1.0, 1.0], n) + 0.3 * rng.standard_normal(n)])
        return mmd_test(draw(), draw(), n_permutations=200, seed=rng).pvalue < 0.05

    return CalibrationCase("MMD permutation test", "cflib.stats.mmd.mmd_test", "type-I error", 0.05,
                           "two samples from one exponential x bimodal law", n, rep,
                           quote=_RESAMPLING_LEVEL[0], source=_RESAMPLING_LEVEL[1])


def _cfclot_boundary_case(m: int, variance: str) -> CalibrationCase:
    from cflib.stats.closeness import cfclot_test, gaussian_pair_sample, shift_for_target_nte

    eps = 0.3  # where Eq. 13's variance is visibly too small (the closeness chapter's calibration study)
    delta = shift_for_target_nte(eps, d=2, bandwidth=1.5)

    def rep(rng):
        y, y_cf = gaussian_pair_sample(m, delta, d=2, seed=rng)
        return cfclot_test(y, y_cf, eps, bandwidth=1.5, variance=variance, method="normal").reject

    note = "" if variance == "delta" else "Eq. 13's variance as printed is anti-conservative (closeness-test chapter)"
    return CalibrationCase(f"CF-CLOT, normal threshold, {variance} variance, at N-TE = epsilon = {eps:g}",
                           "cflib.stats.closeness.cfclot_test", "type-I error", 0.05,
                           f"bivariate Gaussian location pairs with N-TE exactly {eps:g} (bandwidth 1.5)", m, rep,
                           expected_fail=note, quote=_CFCLOT_LEVEL[0],
                           source=_CFCLOT_LEVEL[1] + ("" if variance == "delta" else "; threshold with Eq. 13's variance as printed"),
                           reproduces=True)


def _cfclot_signflip_case(m: int) -> CalibrationCase:
    from cflib.stats.closeness import cfclot_test

    def rep(rng):  # exchangeable pairs: a shared unit effect plus symmetric noise
        base = rng.standard_normal((m, 1))
        y, y_cf = base + rng.standard_t(4, (m, 1)), base + rng.standard_t(4, (m, 1))
        return cfclot_test(y, y_cf, 0.0, method="signflip", n_boot=200, seed=rng).reject

    return CalibrationCase("CF-CLOT, epsilon = 0 (sign-flip)", "cflib.stats.closeness.cfclot_test", "type-I error",
                           0.05, "exchangeable pairs, t(4) noise around a shared unit effect", m, rep,
                           quote=_SIGNFLIP_LEVEL[0], source=_SIGNFLIP_LEVEL[1])


def _cit_regression_case(n: int, dependence: float, h_mode: str) -> CalibrationCase:
    from cflib.stats.invariance import cit_lr_test

    def rep(rng):
        y_hat, a, z = common_cause_data(n, dependence=dependence, seed=rng)
        return cit_lr_test(y_hat, a, z, h_mode=h_mode, seed=rng).pvalue < 0.05  # each form's default g_mode

    why = ("" if h_mode == "debiased" or dependence == 0 else
           "the paper's form assumes Z independent of A; here they share a cause (it warns)")
    return CalibrationCase(f"CIT-LR regression, h={h_mode}, Z-A dependence {dependence:g}",
                           "cflib.stats.invariance.cit_lr_test", "type-I error", 0.05,
                           "invariant classifier, Z and A with a common cause (common_cause_data)", n, rep,
                           expected_fail=why, quote=(_CIT_MARGINAL if why else _CIT_LEVEL)[0],
                           source=(_CIT_MARGINAL if why else _CIT_LEVEL)[1])


def _cit_generator_case(n: int) -> CalibrationCase:
    from cflib.stats.invariance import cit_lr_generative, counterfactual_predictions

    def generate(z, a, rng):  # the image: content + an A-dependent stripe + noise
        return np.column_stack([z[:, 0] + 0.5 * rng.standard_normal(len(z)), z[:, 1] + 1.5 * a + rng.standard_normal(len(z))])

    def predict(x):  # reads the content coordinate only: invariant to A
        return (np.tanh(x[:, 0]) + 0.2 * x[:, 0] ** 2 > 0.3).astype(int)

    def rep(rng):
        z = rng.standard_normal((n, 2))
        a = (rng.random(n) < 0.35).astype(int)
        y_hat = predict(generate(z, a, rng))
        cf = counterfactual_predictions(predict, generate, z, [0, 1], n_mc=2, seed=rng)
        return cit_lr_generative(y_hat, a, cf, p_a=[0.65, 0.35]).pvalue < 0.05

    return CalibrationCase("CIT-LR generator form (Alg. 1)", "cflib.stats.invariance.cit_lr_generative",
                           "type-I error", 0.05, "invariant classifier on a stochastic generator, Z independent of A",
                           n, rep, quote=_CIT_LEVEL[0], source=_CIT_LEVEL[1])


def _parity_cases(n: int) -> list[CalibrationCase]:
    from cflib.stats.invariance import demographic_parity_test, equal_opportunity_test

    def dp(rng):  # unbalanced groups, same positive rate
        a = (rng.random(n) < 0.3).astype(int)
        return demographic_parity_test((rng.random(n) < 0.2).astype(int), a).pvalue < 0.05

    def eo(rng):  # labels depend on the group; predictions depend on the label only
        a = (rng.random(n) < 0.4).astype(int)
        y = (rng.random(n) < 0.3 + 0.3 * a).astype(int)
        y_hat = (rng.random(n) < np.where(y == 1, 0.7, 0.2)).astype(int)
        return equal_opportunity_test(y_hat, a, y).pvalue < 0.05

    return [
        CalibrationCase("Demographic parity (Welch)", "cflib.stats.invariance.demographic_parity_test", "type-I error",
                        0.05, "hard predictions with one positive rate, groups 30/70", n, dp, quote=_DP_TEST[0], source=_DP_TEST[1]),
        CalibrationCase("Equal opportunity (Welch on y = 1)", "cflib.stats.invariance.equal_opportunity_test",
                        "type-I error", 0.05, "base rates differ by group, TPR does not", n, eo, quote=_EO_TEST[0],
                        source=_EO_TEST[1]),
    ]


#: A linear SFM the parity chapter does not use (its default coefficients are changed).
_SFM_PARAMS = {"p": 0.4, "mu0": 0.0, "mu1": 0.7, "a_xw": 0.6, "a_zw": 0.3, "b_x": 0.3, "b_w": 0.8, "b_z": 0.5, "sigma": 1.0}


def _fairness_cases(n: int) -> list[CalibrationCase]:
    from cflib.data.fairness_sim import LinearSFMParams, linear_sfm, linear_sfm_truth
    from cflib.fairness.effects import ctf_effects
    from cflib.fairness.parity import causal_predictive_parity
    from cflib.fairness.sfm import StandardFairnessModel

    params = LinearSFMParams(**_SFM_PARAMS)
    truth = linear_sfm_truth(params)
    sfm = StandardFairnessModel(x="x", z=["z"], w=["w"], y="y")
    fits: dict[tuple, Any] = {}  # one fit per replication, shared by the rows of one stream

    def shared(rng, fit):
        key = tuple(rng.bit_generator.seed_seq.entropy)
        if key not in fits:
            data = linear_sfm(n, params, seed=rng)
            fits[key] = fit(data, int(rng.integers(2**31 - 1)))
        return fits[key]

    def effects(data, s):
        return {m: tuple(ci) for m, ci in ctf_effects(data, sfm, learner="linear", seed=s).ci.items()}

    def algorithm1(data, s):  # the efficient predictor with every effect in business necessity: Alg. 1 must pass
        res = causal_predictive_parity(data, sfm, "y", "y_hat", {"DE", "IE", "SE"}, learner="linear", seed=s)
        return res.passed, res.pvalue

    def coverage(measure):
        def rep(rng):
            lo, hi = shared(rng, effects)[measure]
            return lo <= truth[measure] <= hi
        return rep

    # Linear learners (correct for this SFM, and fast) with the default 5 cross-fitting folds: with 2 folds
    # the nuisances see half the units and the intervals under-cover at n = 400 (Ctf-SE 0.92).
    coefficients = ", ".join(f"{k} = {v:g}" for k, v in _SFM_PARAMS.items())
    data = f"linear SFM with coefficients {coefficients} (not the chapter's); linear learners, 5 folds"
    alg1 = data + "; y_hat = E[Y | x, z, w], all effects in BN"
    cases = [CalibrationCase(f"Doubly robust Ctf-{m} 95% interval", "cflib.fairness.effects.ctf_effects", "coverage",
                             0.95, data, n, coverage(m), stream=100, quote=_EFFECT_CI[0], source=_EFFECT_CI[1])
             for m in ("DE", "IE", "SE")]
    cases.append(CalibrationCase(
        "Algorithm 1, Bonferroni p-value (CPPResult.pvalue < alpha)", "cflib.fairness.parity.causal_predictive_parity",
        "type-I error", 0.05, alg1, n, lambda rng: shared(rng, algorithm1)[1] < 0.05, conservative=True, stream=101,
        quote=_ALG1_TEST[0], source=_ALG1_TEST[1]))
    cases.append(CalibrationCase(
        "Algorithm 1 verdict FAIL (each of 3 assertions at alpha)", "cflib.fairness.parity.causal_predictive_parity",
        "type-I error", 0.05, alg1, n, lambda rng: not shared(rng, algorithm1)[0], stream=101,
        expected_fail="the verdict checks three assertions at alpha each (as Alg. 1 is printed): its family-wise "
                      "error is about 1 - 0.95^3 = 0.14, more where an interval under-covers; CPPResult.pvalue "
                      "(Bonferroni) is the level-alpha test",
        quote=_ALG1_POPULATION[0], source=_ALG1_POPULATION[1]))
    return cases


def calibration_cases(*, small: bool = False) -> list[CalibrationCase]:
    """The cases of the calibration page, one per test (and per form where forms differ).

    Parameters
    ----------
    small : bool
        Halve the units per replication (the smoke scale).

    Returns
    -------
    list of CalibrationCase
    """
    k = 2 if small else 1
    return [
        _mmd_case(60 // k),
        _cfclot_boundary_case(200 // k, "delta"),
        _cfclot_boundary_case(200 // k, "paper"),
        _cfclot_signflip_case(60 // k),
        _cit_regression_case(600 // k, 1.5, "debiased"),
        _cit_regression_case(600 // k, 0.0, "debiased"),
        _cit_regression_case(600 // k, 1.5, "marginalize"),
        _cit_generator_case(400 // k),
        *_parity_cases(300 // k),
        *_fairness_cases(400 // k),
    ]


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """The calibration table: one row per test.

    Attributes
    ----------
    table : pandas.DataFrame
        ``test, function, quantity, data, n, R, events, rate, nominal, ci_low, ci_high, passed,
        conservative, expected_fail, quote, source, kind, seconds``.
    level : float
        Coverage of the Clopper-Pearson intervals.
    """

    table: pd.DataFrame
    level: float

    @property
    def unexpected(self) -> pd.DataFrame:
        """Rows that failed without an explanation, or passed although expected to fail."""
        t = self.table
        return t[t["passed"] == (t["expected_fail"] != "")]

    def summary(self) -> pd.DataFrame:
        """The table with rates and intervals rounded for display.

        Returns
        -------
        pandas.DataFrame
        """
        t = self.table.copy()
        t["interval"] = [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(t["ci_low"], t["ci_high"], strict=True)]
        t["verdict"] = np.where(t["passed"], "pass", "FAIL") + np.where(t["expected_fail"] != "", " (expected)", "")
        return t[["test", "quantity", "n", "R", "rate", "nominal", "interval", "verdict", "expected_fail"]].round({"rate": 3})

    def plot(self, ax=None):
        """Each rate with its interval against the nominal value (deviation from nominal).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        t = self.table
        y = np.arange(len(t))[::-1]
        dev = t["rate"] - t["nominal"]
        err = [t["rate"] - t["ci_low"], t["ci_high"] - t["rate"]]
        colors = np.where(t["passed"], "#0072B2", "#D55E00")
        for yi, d, lo, hi, c in zip(y, dev, err[0], err[1], colors, strict=True):
            ax.errorbar(d, yi, xerr=[[lo], [hi]], fmt="o", color=c, capsize=2)
        ax.axvline(0, color="0.3", ls="--", lw=1)
        ax.set_yticks(y, t["test"], fontsize=7)
        ax.set_xlabel(f"rate - nominal ({self.level:.0%} Clopper-Pearson interval)")
        return ax


def calibration_table(
    n_rep: int = 1000,
    *,
    cases: Sequence[str] | None = None,
    small: bool = False,
    level: float = 0.99,
    seed: int = 0,
) -> CalibrationResult:
    """Empirical type-I error or coverage of every test, with Clopper-Pearson intervals.

    A case passes when the interval of its rate contains the nominal value (for a conservative test:
    when the interval's lower end is at most the nominal value).

    Parameters
    ----------
    n_rep : int
        Null replications per case.
    cases : sequence of str, optional
        Names (or unique substrings of names) of the cases to run; default all.
    small : bool
        Smaller samples per replication (smoke scale).
    level : float
        Coverage of the intervals.
    seed : int
        Base seed; case ``i`` and replication ``r`` use ``[seed, i, r]`` with ``i`` the case's
        position in :func:`calibration_cases` (or its ``stream``), so a subset reproduces the full
        table's rows.

    Returns
    -------
    CalibrationResult
    """
    import time

    if not isinstance(n_rep, (int, np.integer)) or n_rep < 1:
        raise ValueError(f"n_rep must be a positive integer, got {n_rep!r}")
    all_cases = calibration_cases(small=small)
    chosen = list(range(len(all_cases)))
    if cases is not None:
        chosen = []
        for key in cases:
            hit = [i for i, c in enumerate(all_cases) if key == c.name] or [i for i, c in enumerate(all_cases) if key in c.name]
            if len(hit) != 1:
                raise ValueError(f"case {key!r} matches {len(hit)} cases; names: {[c.name for c in all_cases]}")
            chosen.append(hit[0])
    rows = []
    for i in chosen:
        c = all_cases[i]
        t0 = time.perf_counter()
        events = c.run(n_rep, seed, i)
        k = int(events.sum())
        lo, hi = clopper_pearson(k, n_rep, level)
        passed = lo <= c.nominal if c.conservative else lo <= c.nominal <= hi
        rows.append({
            "test": c.name, "function": c.function, "quantity": c.quantity, "data": c.data, "n": c.n_per_rep,
            "R": n_rep, "events": k, "rate": k / n_rep, "nominal": c.nominal, "ci_low": lo, "ci_high": hi,
            "passed": bool(passed), "conservative": c.conservative, "expected_fail": c.expected_fail,
            "quote": c.quote, "source": c.source, "kind": "reproduction" if c.reproduces else "sanity check",
            "seconds": time.perf_counter() - t0,
        })
    return CalibrationResult(pd.DataFrame(rows), level)


# --------------------------------------------------------------------------------------------
# claims
# --------------------------------------------------------------------------------------------
def level_band(quantity: str, nominal: float) -> tuple[float, float]:
    """The band a calibrated rate lies in: Bradley's liberal criterion on the miss rate.

    Parameters
    ----------
    quantity : {"type-I error", "coverage"}
        What the rate is.
    nominal : float
        ``alpha`` for a type-I error, the level for a coverage.

    Returns
    -------
    (low, high) : tuple of float
        ``[0.5 alpha, 1.5 alpha]`` for a type-I error; ``[1 - 1.5 (1 - level), 1 - 0.5 (1 - level)]`` for a coverage.

    Examples
    --------
    >>> level_band("type-I error", 0.05)
    (0.025, 0.075)
    """
    if quantity not in ("type-I error", "coverage"):
        raise ValueError(f"quantity must be 'type-I error' or 'coverage', got {quantity!r}")
    return vd.level_band(nominal, coverage=quantity == "coverage")


def _row_rule(quantity: str, nominal: float, conservative: bool, expect_failure: bool) -> Callable[[vd.Interval], vd.Decision]:
    """The decision rule of one calibration row, as a function of its rate's interval."""
    lo, hi = level_band(quantity, nominal)
    what = f"{quantity} rate"
    if expect_failure:  # a form kept to show its failure: its rate lies beyond the band on the side it errs
        if quantity == "type-I error":
            return lambda iv: vd.decide_above(iv, hi, quantity=what)
        return lambda iv: vd.decide_below(iv, lo, quantity=what)
    if conservative:  # a Bonferroni union promises only "at most alpha"
        if quantity == "type-I error":
            return lambda iv: vd.decide_below(iv, hi, inclusive=True, quantity=what)
        return lambda iv: vd.decide_above(iv, lo, inclusive=True, quantity=what)
    return lambda iv: vd.decide_within(iv, lo, hi, quantity=what)


def deciding_replications(rate: float, rule: Callable[[vd.Interval], vd.Decision], *, level: float = 0.99, start: int = 1,
                          limit: int = 10**6) -> int | None:
    """The fewest replications at which ``rule`` would decide, if the observed ``rate`` stayed as it is.

    Parameters
    ----------
    rate : float
        The observed rate in [0, 1].
    rule : callable
        ``rule(interval) -> cflib.verdicts.Decision``.
    level : float
        Coverage of the Clopper-Pearson interval.
    start : int
        Replications already run (the search starts above them).
    limit : int
        Largest size searched.

    Returns
    -------
    int or None
        A multiple of a hundred at which the rule decides, or ``None`` when none up to ``limit`` decides
        (the rate sits on the rule's boundary).
    """
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must lie in [0, 1], got {rate!r}")

    def undecided(n: int) -> bool:
        return rule(vd.binomial_interval(int(round(rate * n)), n, level=level, unit="replications")).verdict == vd.UNDECIDED

    def hundreds(n: int) -> int:
        return int(-(-n // 100) * 100)

    n = hundreds(max(int(start), 100))
    while undecided(n):
        if n >= limit:
            return None
        n = min(hundreds(int(n * 1.25) + 1), limit)
    return n


def claims_calibration(result: CalibrationResult) -> pd.DataFrame:
    """Record one claim per calibration row: the rate's interval against its level (Bradley's band).

    A row checking a level the paper itself promises (CF-CLOT's Theorem 2, Fu et al.) is a reproduction
    of that promise, quoted; every other row checks cflib's own test and is a sanity check. Rule,
    written before running, on the rate's Clopper-Pearson interval at ``result.level``:

    - a test claimed to hold level ``alpha``: the interval lies inside ``[0.5 alpha, 1.5 alpha]``
      (:func:`level_band`; for an interval's coverage, its miss rate does);
    - a test that promises only "at most ``alpha``" (a Bonferroni union): the interval lies at or below ``1.5 alpha``;
    - a sanity check of a form kept to show its failure (``expected_fail``): the interval lies above
      ``1.5 alpha`` (it misses its level on the side it is known to err).

    An undecided row's note gives the replications that would decide it at the observed rate.

    Parameters
    ----------
    result : CalibrationResult
        Output of :func:`calibration_table`.

    Returns
    -------
    pandas.DataFrame
        The claims recorded (one per row, keys ``K1``, ``K2``, ...).
    """
    from cflib import claims

    if not isinstance(result, CalibrationResult):
        raise TypeError(f"result must be the CalibrationResult of calibration_table, got {type(result).__name__}")
    t = result.table
    claims.record("calibration_rates", dict(zip(t["test"], t["rate"].astype(float), strict=True)))
    claims.record("calibration_unexpected", list(result.unexpected["test"]))
    if len(t) == 1:  # one case per point of notebooks/sweeps/calibration.yaml: scalars for its table
        r = t.iloc[0]
        for key in ("test", "rate", "ci_low", "ci_high", "passed"):
            claims.record(f"case_{key}", r[key].item() if hasattr(r[key], "item") else r[key])
    keys = []
    for i, r in enumerate(t.itertuples()):
        key = f"K{i + 1}"
        keys.append(key)
        reproduction = r.kind == "reproduction"
        expect_failure = bool(r.expected_fail) and not reproduction
        rule = _row_rule(r.quantity, r.nominal, r.conservative, expect_failure)
        decision = rule(vd.binomial_interval(int(r.events), int(r.R), level=result.level, unit="replications"))
        what = "coverage" if r.quantity == "coverage" else ("size at most" if r.conservative else "size")
        lo, hi = level_band(r.quantity, r.nominal)
        if expect_failure:
            statement = f"{r.test} misses its nominal {what} {r.nominal:g}: {r.expected_fail}"
            change = (f"the failure is now read as the rate's interval beyond Bradley's liberal band [{lo:g}, {hi:g}] "
                      "(it was: the interval excludes the nominal value)")
        else:
            statement = f"{r.test}: {what} {r.nominal:g}" + (f" (expected to fail: {r.expected_fail})" if r.expected_fail else "")
            change = (f"'holds its level' is now read as the rate's interval inside Bradley's liberal band [{lo:g}, {hi:g}], "
                      "fixed before running (it was: the interval contains the nominal value and is narrower than 0.1, so a "
                      "wide interval could pass)")
            if r.expected_fail:
                change = ("the claim is now the paper's promise of level alpha, checked on its printed form, read on Bradley's "
                          f"liberal band [{lo:g}, {hi:g}] (it was the book's statement that this form misses its level)")
        note = ""
        if decision.verdict == vd.UNDECIDED:
            n = deciding_replications(float(r.rate), rule, level=result.level, start=int(r.R))
            note = (f"At the observed rate, about {n} replications would decide it." if n else
                    "The observed rate sits on the rule's boundary: no number of replications decides it at this rate.")
        claims.claim(
            key, statement, paper=r.nominal, ours=f"{r.events}/{r.R} = {r.rate:.3f}", decision=decision,
            quote=r.quote, source=r.source, kind=r.kind, note=note, change=change,
            evidence=f"{r.R} null replications of {r.data} (n = {r.n} per replication), cflib function {r.function}",
        )
    return claims.rows(keys)
