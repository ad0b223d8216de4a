"""The calibration cases of every test in ``cflib.stats`` and ``cflib.fairness``, and the table they fill.

Every replication ``r`` of case ``i`` draws from :func:`~.dependence.replication_rng` ``(seed, i, r)``, so the numbers
depend on the seed only, not on the order or the process the cases run in.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ... import verdicts as vd
from .dependence import common_cause_data, replication_rng


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
            return np.array([bool(self.replicate(replication_rng(seed, stream, r))) for r in range(n_rep)])


# The words each row checks. Only the CF-CLOT boundary rows check a level a paper promises (Fu et al.,
# Theorem 2); the others check cflib's own tests against the level their papers or notes take for granted.
_CFCLOT_LEVEL = (
    "Based on Theorem 1, we can directly control the Type I error of the test with a confidence level of α",
    "Fu et al. (002), Sec. 4.1, before Theorem 2 (Pr(N-TE > tau_alpha | H0) -> alpha as m -> infinity)",
)
_RESAMPLING_LEVEL = (
    "With a valid resampling null, type-I ≤ α and power → 1 for any P ≠ Q.",
    "notes on Fu et al. (002), §5 C9; not in the paper",
)
_SIGNFLIP_LEVEL = (
    "The Rademacher sign-flip version is exact: test with `P[p ≤ α] ≤ α` at small m.",
    "notes on Fu et al. (002), §5 C9; not in the paper",
)
_CIT_LEVEL = (
    "If A has no effect on X (M_i = N_i, or f uses only A-invariant features), the CIT-LR rejection rate at "
    "α=0.05 should lie within a binomial confidence interval of 0.05 over replications.",
    "notes on Ma et al. (000), §5 item 7 [S]; not in the paper",
)
_CIT_MARGINAL = (
    "Equivalent and cheaper, because Z ⊥ A: ĥ(z) = Σ_a P(a) ĝ(a,z).",
    "notes on Ma et al. (000), §7.1 item 4 (the paper's Z is independent of A, Lemma D.3); not in the paper",
)
_DP_TEST = (
    "To make it convenient for comparison, we transform DP into a statistical test, by conducting a paired t-test "
    "to determine if (5) holds.",
    "Ma et al. (000), Sec. 6.1 (no level is stated; cflib's form is a Welch test)",
)
_EO_TEST = (
    "Again we transform the criteria into a statistical test, by conducting a paired t-test to determine if (6) holds.",
    "Ma et al. (000), Sec. 6.1 (no level is stated; cflib's form is a Welch test)",
)
_EFFECT_CI = (
    "The indicated 95% confidence intervals are computed using repeated bootstrap repetitions of the dataset.",
    "Plecko & Bareinboim (004), Sec. 4, COMPAS (the paper's intervals are bootstrap ones; cflib's are influence-function "
    "normal intervals)",
)
_ALG1_TEST = (
    "In the finite sample case, one needs to perform hypothesis testing to see whether the effects differ.",
    "Plecko & Bareinboim (004), Sec. 3.1 after Alg. 1 (no level is stated)",
)
_ALG1_POPULATION = (
    "We remark that Alg. 1 is written in its population level version, in which the causal effects are "
    "estimated perfectly with no uncertainty.",
    "Plecko & Bareinboim (004), Sec. 3.1 after Alg. 1",
)


def _mmd_case(n: int) -> CalibrationCase:
    from cflib.stats.mmd import mmd_test

    def rep(rng: np.random.Generator) -> bool:  # skewed, bimodal in one coordinate: both samples from the same law
        def draw() -> np.ndarray:
            return np.column_stack([rng.exponential(size=n), rng.choice([-1.0, 1.0], n) + 0.3 * rng.standard_normal(n)])

        return mmd_test(draw(), draw(), n_permutations=200, seed=rng).pvalue < 0.05

    return CalibrationCase(
        "MMD permutation test",
        "cflib.stats.mmd.mmd_test",
        "type-I error",
        0.05,
        "two samples from one exponential x bimodal law",
        n,
        rep,
        quote=_RESAMPLING_LEVEL[0],
        source=_RESAMPLING_LEVEL[1],
    )


def _cfclot_boundary_case(m: int, variance: str) -> CalibrationCase:
    from cflib.stats.closeness import cfclot_test, gaussian_pair_sample, shift_for_target_nte

    eps = 0.3  # where Eq. 13's variance is visibly too small (the closeness chapter's calibration study)
    delta = shift_for_target_nte(eps, d=2, bandwidth=1.5)

    def rep(rng: np.random.Generator) -> bool:
        y, y_cf = gaussian_pair_sample(m, delta, d=2, seed=rng)
        return cfclot_test(y, y_cf, eps, bandwidth=1.5, variance=variance, method="normal").rejected

    note = "" if variance == "delta" else "Eq. 13's variance as printed is anti-conservative (closeness-test chapter)"
    return CalibrationCase(
        f"CF-CLOT, normal threshold, {variance} variance, at N-TE = epsilon = {eps:g}",
        "cflib.stats.closeness.cfclot_test",
        "type-I error",
        0.05,
        f"bivariate Gaussian location pairs with N-TE exactly {eps:g} (bandwidth 1.5)",
        m,
        rep,
        expected_fail=note,
        quote=_CFCLOT_LEVEL[0],
        source=_CFCLOT_LEVEL[1] + ("" if variance == "delta" else "; threshold with Eq. 13's variance as printed"),
        reproduces=True,
    )


def _cfclot_rff_boundary_case(m: int, n_features: int) -> CalibrationCase:
    from cflib.stats.closeness import gaussian_pair_sample, shift_for_target_nte
    from cflib.stats.closeness_rff import cfclot_rff_test

    eps = 0.3  # the data of the exact-kernel boundary rows
    delta = shift_for_target_nte(eps, d=2, bandwidth=1.5)

    def rep(rng: np.random.Generator) -> bool:  # fresh features every replication: their randomness is in the level
        y, y_cf = gaussian_pair_sample(m, delta, d=2, seed=rng)
        return cfclot_rff_test(y, y_cf, eps, n_features=n_features, bandwidth=1.5, seed=rng).rejected

    return CalibrationCase(
        f"CF-CLOT, random Fourier features (D = {n_features}), at N-TE = epsilon = {eps:g}",
        "cflib.stats.closeness_rff.cfclot_rff_test",
        "type-I error",
        0.05,
        f"bivariate Gaussian location pairs with N-TE exactly {eps:g} for the exact kernel (bandwidth 1.5)",
        m,
        rep,
        quote=_CFCLOT_LEVEL[0],
        source="Fu et al. (002), Sec. 4.1, before Theorem 2, for the exact kernel; the random-feature form with the "
        "features' variance in its threshold is cflib's (issue 30), not in the paper",
    )


def _cfclot_signflip_case(m: int) -> CalibrationCase:
    from cflib.stats.closeness import cfclot_test

    def rep(rng: np.random.Generator) -> bool:  # exchangeable pairs: a shared unit effect plus symmetric noise
        base = rng.standard_normal((m, 1))
        y, y_cf = base + rng.standard_t(4, (m, 1)), base + rng.standard_t(4, (m, 1))
        return cfclot_test(y, y_cf, 0.0, method="signflip", n_boot=200, seed=rng).rejected

    return CalibrationCase(
        "CF-CLOT, epsilon = 0 (sign-flip)",
        "cflib.stats.closeness.cfclot_test",
        "type-I error",
        0.05,
        "exchangeable pairs, t(4) noise around a shared unit effect",
        m,
        rep,
        quote=_SIGNFLIP_LEVEL[0],
        source=_SIGNFLIP_LEVEL[1],
    )


def _cit_regression_case(n: int, dependence: float, h_mode: str) -> CalibrationCase:
    from cflib.stats.invariance import cit_lr_test

    def rep(rng: np.random.Generator) -> bool:
        y_hat, a, z = common_cause_data(n, dependence=dependence, seed=rng)
        return cit_lr_test(y_hat, a, z, h_mode=h_mode, seed=rng).pvalue < 0.05  # each form's default g_mode

    why = (
        ""
        if h_mode == "debiased" or dependence == 0
        else "the paper's form assumes Z independent of A; here they share a cause (it warns)"
    )
    return CalibrationCase(
        f"CIT-LR regression, h={h_mode}, Z-A dependence {dependence:g}",
        "cflib.stats.invariance.cit_lr_test",
        "type-I error",
        0.05,
        "invariant classifier, Z and A with a common cause (common_cause_data)",
        n,
        rep,
        expected_fail=why,
        quote=(_CIT_MARGINAL if why else _CIT_LEVEL)[0],
        source=(_CIT_MARGINAL if why else _CIT_LEVEL)[1],
    )


def _cit_generator_case(n: int) -> CalibrationCase:
    from cflib.stats.invariance import cit_lr_generative, counterfactual_predictions

    def generate(
        z: np.ndarray, a: np.ndarray, rng: np.random.Generator
    ) -> np.ndarray:  # the image: content + an A-dependent stripe + noise
        return np.column_stack(
            [z[:, 0] + 0.5 * rng.standard_normal(len(z)), z[:, 1] + 1.5 * a + rng.standard_normal(len(z))]
        )

    def predict(x: np.ndarray) -> np.ndarray:  # reads the content coordinate only: invariant to A
        return (np.tanh(x[:, 0]) + 0.2 * x[:, 0] ** 2 > 0.3).astype(int)

    def rep(rng: np.random.Generator) -> bool:
        z = rng.standard_normal((n, 2))
        a = (rng.random(n) < 0.35).astype(int)
        y_hat = predict(generate(z, a, rng))
        cf = counterfactual_predictions(predict, generate, z, [0, 1], n_mc=2, seed=rng)
        return cit_lr_generative(y_hat, a, cf, p_a=[0.65, 0.35]).pvalue < 0.05

    return CalibrationCase(
        "CIT-LR generator form (Alg. 1)",
        "cflib.stats.invariance.cit_lr_generative",
        "type-I error",
        0.05,
        "invariant classifier on a stochastic generator, Z independent of A",
        n,
        rep,
        quote=_CIT_LEVEL[0],
        source=_CIT_LEVEL[1],
    )


def _parity_cases(n: int) -> list[CalibrationCase]:
    from cflib.stats.invariance import demographic_parity_test, equal_opportunity_test

    def dp(rng: np.random.Generator) -> bool:  # unbalanced groups, same positive rate
        a = (rng.random(n) < 0.3).astype(int)
        return demographic_parity_test((rng.random(n) < 0.2).astype(int), a).pvalue < 0.05

    def eo(rng: np.random.Generator) -> bool:  # labels depend on the group; predictions depend on the label only
        a = (rng.random(n) < 0.4).astype(int)
        y = (rng.random(n) < 0.3 + 0.3 * a).astype(int)
        y_hat = (rng.random(n) < np.where(y == 1, 0.7, 0.2)).astype(int)
        return equal_opportunity_test(y_hat, a, y).pvalue < 0.05

    return [
        CalibrationCase(
            "Demographic parity (Welch)",
            "cflib.stats.invariance.demographic_parity_test",
            "type-I error",
            0.05,
            "hard predictions with one positive rate, groups 30/70",
            n,
            dp,
            quote=_DP_TEST[0],
            source=_DP_TEST[1],
        ),
        CalibrationCase(
            "Equal opportunity (Welch on y = 1)",
            "cflib.stats.invariance.equal_opportunity_test",
            "type-I error",
            0.05,
            "base rates differ by group, TPR does not",
            n,
            eo,
            quote=_EO_TEST[0],
            source=_EO_TEST[1],
        ),
    ]


#: A linear SFM the parity chapter does not use (its default coefficients are changed).
_SFM_PARAMS = {
    "p": 0.4,
    "mu0": 0.0,
    "mu1": 0.7,
    "a_xw": 0.6,
    "a_zw": 0.3,
    "b_x": 0.3,
    "b_w": 0.8,
    "b_z": 0.5,
    "sigma": 1.0,
}


def _fairness_cases(n: int) -> list[CalibrationCase]:
    from cflib.data.fairness_sim import LinearSFMParams, linear_sfm, linear_sfm_truth
    from cflib.fairness.effects import ctf_effects
    from cflib.fairness.parity import causal_predictive_parity
    from cflib.fairness.sfm import StandardFairnessModel

    params = LinearSFMParams(**_SFM_PARAMS)
    truth = linear_sfm_truth(params)
    sfm = StandardFairnessModel(x="x", z=("z",), w=("w",), y="y")
    fits: dict[tuple, Any] = {}  # one fit per replication, shared by the rows of one stream

    def shared(rng: np.random.Generator, fit: Callable[[pd.DataFrame, int], Any]) -> Any:
        seq = rng.bit_generator.seed_seq  # replication_rng's: a SeedSequence of (seed, case, replication)
        if not isinstance(seq, np.random.SeedSequence) or not isinstance(seq.entropy, Sequence):
            raise TypeError(f"expected a generator of replication_rng (seeded with a sequence of keys), got {rng!r}")
        key = tuple(seq.entropy)
        if key not in fits:
            data = linear_sfm(n, params, seed=rng)
            fits[key] = fit(data, int(rng.integers(2**31 - 1)))
        return fits[key]

    def effects(data: pd.DataFrame, s: int) -> dict[str, tuple[float, float]]:
        return {m: tuple(ci) for m, ci in ctf_effects(data, sfm, learner="linear", seed=s).ci.items()}

    def algorithm1(
        data: pd.DataFrame, s: int
    ) -> tuple[bool, float]:  # the efficient predictor with every effect in business necessity: Alg. 1 must pass
        res = causal_predictive_parity(data, sfm, "y", "y_hat", {"DE", "IE", "SE"}, learner="linear", seed=s)
        return res.passed, res.pvalue

    def coverage(measure: str) -> Callable[[np.random.Generator], bool]:
        def rep(rng: np.random.Generator) -> bool:
            lo, hi = shared(rng, effects)[measure]
            return lo <= truth[measure] <= hi

        return rep

    # Linear learners (correct for this SFM, and fast) with the default 5 cross-fitting folds: with 2 folds
    # the nuisances see half the units and the intervals under-cover at n = 400 (Ctf-SE 0.92).
    coefficients = ", ".join(f"{k} = {v:g}" for k, v in _SFM_PARAMS.items())
    data = f"linear SFM with coefficients {coefficients} (not the chapter's); linear learners, 5 folds"
    alg1 = data + "; y_hat = E[Y | x, z, w], all effects in BN"
    cases = [
        CalibrationCase(
            f"Doubly robust Ctf-{m} 95% interval",
            "cflib.fairness.effects.ctf_effects",
            "coverage",
            0.95,
            data,
            n,
            coverage(m),
            stream=100,
            quote=_EFFECT_CI[0],
            source=_EFFECT_CI[1],
        )
        for m in ("DE", "IE", "SE")
    ]
    cases.append(
        CalibrationCase(
            "Algorithm 1, Bonferroni p-value (CPPResult.pvalue < alpha)",
            "cflib.fairness.parity.causal_predictive_parity",
            "type-I error",
            0.05,
            alg1,
            n,
            lambda rng: shared(rng, algorithm1)[1] < 0.05,
            conservative=True,
            stream=101,
            quote=_ALG1_TEST[0],
            source=_ALG1_TEST[1],
        )
    )
    cases.append(
        CalibrationCase(
            "Algorithm 1 verdict FAIL (each of 3 assertions at alpha)",
            "cflib.fairness.parity.causal_predictive_parity",
            "type-I error",
            0.05,
            alg1,
            n,
            lambda rng: not shared(rng, algorithm1)[0],
            stream=101,
            expected_fail="the verdict checks three assertions at alpha each (as Alg. 1 is printed): its family-wise "
            "error is about 1 - 0.95^3 = 0.14, more where an interval under-covers; CPPResult.pvalue "
            "(Bonferroni) is the level-alpha test",
            quote=_ALG1_POPULATION[0],
            source=_ALG1_POPULATION[1],
        )
    )
    return cases


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


def row_rule(
    quantity: str, nominal: float, conservative: bool, expect_failure: bool
) -> Callable[[vd.Interval], vd.Decision]:
    """The decision rule of one calibration row, as a function of its rate's interval (the claim's rule, which
    the table's verdict column reads too).

    Parameters
    ----------
    quantity : {"type-I error", "coverage"}
    nominal : float
        ``alpha`` or the level.
    conservative : bool
        The test promises only "at most ``alpha``".
    expect_failure : bool
        A form kept to show its failure: the rule says whether it misses its level on the side it errs.

    Returns
    -------
    callable
        ``rule(interval) -> cflib.verdicts.Decision``.
    """
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
        _cfclot_rff_boundary_case(200 // k, 128),  # last: the cases above keep their positions (their streams)
    ]


@dataclass(frozen=True, eq=False)
class CalibrationResult:
    """The calibration table: one row per test.

    Attributes
    ----------
    table : pandas.DataFrame
        ``test, function, quantity, data, n, R, events, rate, nominal, ci_low, ci_high, passed,
        conservative, expected_fail, quote, source, kind, seconds, stream`` (rows of one stream share one fit
        per replication: the first of them pays for it).
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
        """The table with rates and intervals rounded for display, and each row's claim (``K1``, ...) with the
        verdict its rule gives (:func:`row_rule`: the same as the claim's card).

        Returns
        -------
        pandas.DataFrame
        """
        t = self.table.copy()
        t["interval"] = [f"[{lo:.3f}, {hi:.3f}]" for lo, hi in zip(t["ci_low"], t["ci_high"], strict=True)]
        t["claim"] = [f"K{i + 1}" for i in range(len(t))]
        t["verdict"] = [  # the claim's verdict, by the claim's rule: the table and the cards speak one vocabulary
            row_rule(r.quantity, r.nominal, r.conservative, bool(r.expected_fail) and r.kind != "reproduction")(
                vd.binomial_interval(int(r.events), int(r.R), level=self.level, unit="replications")
            ).verdict
            for r in t.itertuples()
        ]
        return t[
            ["claim", "test", "quantity", "n", "R", "rate", "nominal", "interval", "verdict", "expected_fail"]
        ].round({"rate": 3})

    def plot(self, ax: Any = None) -> Any:
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
    reps: Mapping[str, int] | None = None,
) -> CalibrationResult:
    """Empirical type-I error or coverage of every test, with Clopper-Pearson intervals.

    A case passes when the interval of its rate contains the nominal value (for a conservative test:
    when the interval's lower end is at most the nominal value).

    Parameters
    ----------
    n_rep : int
        Null replications per case.
    reps : mapping of str to int, optional
        More replications for some cases, by claim key (``"K3"`` is the third case of
        :func:`calibration_cases`): case ``K<i>`` runs ``max(n_rep, reps["K<i>"])`` replications. Its first
        ``n_rep`` replications are those of the plain run (replication ``r`` draws from ``[seed, i, r]``), so
        a larger size only adds replications. The book gives the undecided rows the sizes their notes ask for.
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
    sizes = _replications(reps, n_rep, len(all_cases))
    chosen = list(range(len(all_cases)))
    if cases is not None:
        chosen = []
        for key in cases:
            hit = [i for i, c in enumerate(all_cases) if key == c.name] or [
                i for i, c in enumerate(all_cases) if key in c.name
            ]
            if len(hit) != 1:
                raise ValueError(f"case {key!r} matches {len(hit)} cases; names: {[c.name for c in all_cases]}")
            chosen.append(hit[0])
    rows = []
    for i in chosen:
        c = all_cases[i]
        t0 = time.perf_counter()
        n_i = sizes[i]
        events = c.run(n_i, seed, i)
        k = int(events.sum())
        lo, hi = tuple(vd.binomial_interval(k, n_i, level=level))
        passed = lo <= c.nominal if c.conservative else lo <= c.nominal <= hi
        rows.append(
            {
                "test": c.name,
                "function": c.function,
                "quantity": c.quantity,
                "data": c.data,
                "n": c.n_per_rep,
                "R": n_i,
                "events": k,
                "rate": k / n_i,
                "nominal": c.nominal,
                "ci_low": lo,
                "ci_high": hi,
                "passed": bool(passed),
                "conservative": c.conservative,
                "expected_fail": c.expected_fail,
                "quote": c.quote,
                "source": c.source,
                "kind": "reproduction" if c.reproduces else "sanity check",
                "seconds": time.perf_counter() - t0,
                "stream": i if c.stream is None else c.stream,
            }
        )
    return CalibrationResult(pd.DataFrame(rows), level)


def _replications(reps: Mapping[str, int] | None, n_rep: int, n_cases: int) -> list[int]:
    """Replications of each case: ``n_rep``, or more where ``reps`` names the case by its claim key."""
    if reps is None:
        return [int(n_rep)] * n_cases
    if not isinstance(reps, Mapping):
        raise TypeError(f"reps must be a mapping of claim keys to replications (e.g. {{'K3': 8000}}), got {reps!r}")
    sizes = [int(n_rep)] * n_cases
    for key, n in reps.items():
        m = re.fullmatch(r"K(\d+)", str(key))
        if m is None or not 1 <= int(m.group(1)) <= n_cases:
            raise ValueError(f"reps key {key!r} is not a claim key K1..K{n_cases} of calibration_cases()")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"reps[{key!r}] must be a positive integer of replications, got {n!r}")
        sizes[int(m.group(1)) - 1] = max(int(n_rep), int(n))
    return sizes
