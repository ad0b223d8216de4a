"""The claims of notebooks 01-05: one ``claims_<nn>`` function per notebook that turns its results into claim verdicts.

Each claim is an estimate with its interval, decided by a rule of :mod:`cflib.verdicts` written from the
paper's words (or, for the book's own findings and sanity checks, from the notes and the issues); the
private helpers below build those intervals and join the parts of a claim.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ... import claims
from ... import verdicts as vd
from ...formatting import format_pvalue
from ...stats.closeness import nte
from .calibration_power import EPS0_METHODS
from .nte_mmd import closed_form_max_z

__all__ = [
    "claims_01",
    "claims_02",
    "claims_03",
    "claims_03_scm",
    "claims_04",
    "claims_05",
]


#: Kind of the claims that check a property the paper does not state (the notes' derivations and measurements).
_OWN = "book's own finding"


_OWN_CHANGE = (
    "the book's own finding, not a reproduction (issue 27): the paper does not state it ({what}), so it is no longer "
    "counted among the paper's claims; the rule is unchanged"
)


_ONE_SEED_CHANGE = (
    "issue 38: the audits are {n} (data set, model) pairs, each trained on one seed; different data sets are not "
    "replications of one comparison, so the claim is undecided (cflib.verdicts.one_seed). Before: "
)
_ONE_SEED_AUDITS = (
    "Undecided: each of the {n} audits trains its models on one seed; the comparison needs two or more training seeds "
    "per (data set, model), with seed_interval over the per-seed differences of each audit."
)


def _rate_interval(rate: float, n: int, unit: str = "replications") -> vd.Interval:
    """Clopper-Pearson interval of a rejection rate measured over ``n`` replications."""
    return vd.binomial_interval(int(round(float(rate) * n)), int(n), unit=unit)


def _binomial_se(rate: float, n: int) -> float:
    return float(np.sqrt(rate * (1 - rate) / n))


def _difference(a: float, se_a: float, b: float, se_b: float, *, same_units: bool, what: str) -> vd.Interval:
    """Normal interval of ``a - b``: independent standard errors add in quadrature; on the same units
    ``sd(a - b) <= sd(a) + sd(b)`` whatever their correlation, so the sum is used (conservative)."""
    se = float(se_a + se_b) if same_units else float(np.hypot(se_a, se_b))
    how = "s.e. bounded by the sum of both (same units)" if same_units else "independent s.e."
    return vd.normal_interval(a - b, se, method=f"{what}, {how}")


def _nte_interval(estimate: float, se: float, method: str) -> vd.Interval:
    """Normal interval of an N-TE estimate from CF-CLOT's delta-method standard error.

    A standard error of 0 (or NaN) is not a zero variance: the unbiased variance components can fall
    below 0 near P = Q and are clipped, so the interval is left undefined and the claim undecided.
    """
    if not np.isfinite(se) or se <= 0:
        return vd.Interval(
            float(estimate), np.nan, np.nan, f"{method}; no usable standard error (estimated as {se:.2g})"
        )
    return vd.normal_interval(estimate, se, method=method)


def _ks_distance(z: Any, level: float = 0.95, where: str = "") -> vd.Interval:
    """Kolmogorov distance of the law of ``z`` from N(0, 1) with the Dvoretzky-Kiefer-Wolfowitz band.

    With probability ``level`` the empirical CDF is within ``sqrt(log(2 / (1 - level)) / (2 n))`` of the
    true one (Massart's constant), so the true distance lies within that much of the observed one.
    """
    z = np.asarray(z, dtype=float)
    d = float(stats.kstest(z, "norm").statistic)
    half = float(np.sqrt(np.log(2 / (1 - level)) / (2 * z.size)))
    return vd.Interval(
        d,
        max(0.0, d - half),
        d + half,
        f"{100 * level:g}% Dvoretzky-Kiefer-Wolfowitz band, {z.size} z-scores {where}".rstrip(),
    )


def _iv(decision: vd.Decision) -> vd.Interval:
    """The interval a decision read. Every decision of these claims has one; only a joint decision of no parts
    (:func:`cflib.verdicts.combine`) lacks it, and showing its numbers is then an error, not a blank."""
    if decision.interval is None:
        raise ValueError(f"the decision has no interval to show (a joint decision of no parts): {decision.rule}")
    return decision.interval


def _every(
    parts: Sequence[vd.Decision], what: str, *, pick: Callable[[vd.Decision], float] | None = None
) -> vd.Decision:
    """Parts that must all hold, with the distinct part rules (:func:`cflib.verdicts.combine`, ``detail="rules"``)."""
    return vd.combine(parts, rule=what, detail="rules", pick=pick)


def _deciding_size(decision: vd.Decision, bounds: Sequence[float], n_now: int, unit: str) -> str:
    """The note of an undecided claim (empty otherwise): the ``unit`` that would decide its deciding part at the
    same estimate (:func:`cflib.verdicts.deciding_size`)."""
    if decision.verdict != vd.UNDECIDED:
        return ""
    iv = decision.interval
    size = vd.deciding_size(iv, bounds, n_now) if iv is not None else None
    if size is None:
        return (
            f"No size decides it at this estimate: the interval is undefined or the estimate sits on the boundary "
            f"({iv.method if iv is not None else 'no interval'}; {n_now} {unit} now)."
        )
    return f"At the same estimate about {size} {unit} (now {n_now}) would decide it."


def _mean_iv(row: Any, mc: str) -> vd.Interval:
    """Normal interval of a grid point's mean estimate from its standard error over the replications ``mc``."""
    return vd.normal_interval(row["mean"], row["se"], method=f"s.e. over {mc}")


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C1, C2, C3, C4, C10 (and the sanity check S1 when the benchmark ran) of notebook 01 (N-TE and MMD).

    Parameters
    ----------
    results : mapping
        ``identities`` (:func:`estimator_identities`), ``closed`` (:func:`closed_form_study`),
        ``conc`` (:func:`concentration_study`), ``n_reps``, ``m_check`` and ``bench`` (the contents
        of ``benchmarks/results/bench_mmd.json``, or ``None``).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.

    Notes
    -----
    The bands of C2 and C4 are ``1 / m``: a ratio of two U-statistics is biased by ``O(1 / m)``, while
    Theorem 1 centres the estimator on the true N-TE at the ``1 / sqrt(m)`` scale.
    """
    claims.require(results, ["identities", "closed", "conc", "n_reps", "m_check", "bench"])
    identities, closed, conc, n_reps, m = (
        results["identities"],
        results["closed"],
        results["conc"],
        results["n_reps"],
        results["m_check"],
    )
    grid = pd.concat(closed, names=["case", "row"]).reset_index(level=0).reset_index(drop=True)
    mc = f"{n_reps} replications of m = {m}"
    _claim_c1(grid, mc, n_reps)
    band = 1.0 / m
    _claim_c2(identities, grid, band, mc, n_reps)
    _claim_c3(identities)
    _claim_c4(grid, closed, band, mc, n_reps)
    _claim_c10(conc, n_reps)
    keys = ["C1", "C2", "C3", "C4", "C10"]
    if results["bench"] is not None:
        _claim_s1(results["bench"]["mmd_vs_hyppo"])
        keys.append("S1")
    return claims.rows(keys)


def _claim_c1(grid: pd.DataFrame, mc: str, n_reps: int) -> None:
    """C1: N-TE in [0, 1], read on the closed forms and on the largest mean estimate of the grid."""
    top = grid.loc[grid["mean"].idxmax()]
    est_top = vd.decide_below(_mean_iv(top, mc), 1.0, inclusive=True, quantity="largest mean estimate of the grid")
    exact_cf = "closed forms over the shift and gap grids (exact)"
    c1 = _every(
        [
            est_top,
            vd.decide_within(
                vd.exact(grid["closed form"].max(), method=exact_cf), 0.0, 1.0, quantity="largest closed-form N-TE"
            ),
            vd.decide_within(
                vd.exact(grid["closed form"].min(), method=exact_cf), 0.0, 1.0, quantity="smallest closed-form N-TE"
            ),
        ],
        "N-TE in [0, 1]: closed forms and the estimator",
    )
    claims.claim(
        "C1",
        "N-TE lies in [0, 1] (population); the estimator never exceeds 1 + O(1/sqrt(m)).",
        paper="N-TE in [0, 1]",
        ours=f"closed forms in [{grid['closed form'].min():.3f}, {grid['closed form'].max():.3f}]; "
        f"max mean estimate {top['mean']:.3f}; point masses give {nte(np.zeros(10), np.full(10, 100.0), bandwidth=1.0):.3f}",
        decision=c1,
        note=_deciding_size(c1, (1.0,), n_reps, "replications per point"),
        evidence=f"closed forms and {mc} per grid point (Gaussian shifts, Bernoulli gaps)",
        quote="Since N-TE normalizes the treatment effects to lie within the [0, 1] range, we can interpret its results as the "
        "degree of distributional differences corresponding to the RKHS.",
        source="Sec. 1 (Introduction); Def. 4, Eq. 8",
        kind="reproduction",
    )


def _claim_c2(identities: pd.Series, grid: pd.DataFrame, band: float, mc: str, n_reps: int) -> None:
    """C2 (Lemma 1, both directions): the mean estimate is within ``band`` of 0 under P = Q, above 0 where P ≠ Q."""
    null_iv = vd.normal_interval(
        identities["mean N-TE under P = Q"], identities["s.e. of that mean"], method=f"s.e. over {mc}, P = Q"
    )
    at_null = vd.decide_within(null_iv, -band, band, quantity="mean estimate under P = Q")
    apart = [
        vd.decide_above(_mean_iv(r, mc), 0.0, quantity="mean estimate where P ≠ Q")
        for _, r in grid[grid["closed form"] > 0].iterrows()
    ]
    claims.claim(
        "C2",
        "N-TE = 0 iff P = Q: under P = Q the estimator's mean is 0 (within its O(1/m) bias); where P ≠ Q it is above 0.",
        paper="Lemma 1",
        ours=f"P = Q: mean {null_iv.estimate:.2e} [{null_iv.low:.1e}, {null_iv.high:.1e}] (band ±{band:.1e}); "
        f"P ≠ Q: smallest lower bound {min(_iv(p).low for p in apart):.3f} over {len(apart)} grid points",
        decision=(c2 := _every([at_null, *apart], "both directions of the 'iff'")),
        note=_deciding_size(c2, (-band, 0.0, band), n_reps, "replications"),
        evidence=f"{mc} under P = Q and at every grid point with P ≠ Q",
        quote="We have [N-TE = 0] if and only if [P_n = P_{a_t′,n}] for characteristic kernel",
        source="Lemma 1 (Sec. 4.2.1; proof in App. A.5)",
        change="Lemma 1 is an 'if and only if': the rule now checks both directions (the mean under P = Q within the "
        "estimator's O(1/m) bias of 0, and above 0 wherever P ≠ Q); the old rule asked only that the P = Q mean be "
        "within 3 s.e. of 0, which a smaller run passes more easily",
        kind="reproduction",
    )


def _claim_c3(identities: pd.Series) -> None:
    """C3: the exact identities of the estimator, to floating-point tolerance."""
    ident_err = float(max(identities.iloc[1:4]))
    claims.claim(
        "C3",
        "Exact identities: N-TE = MTE / mean(D), symmetric in (Y, Y_cf), invariant to relabelling units.",
        paper="exact (derived)",
        ours=f"max abs deviation {ident_err:.1e}",
        decision=vd.decide_below(
            vd.exact(ident_err, method="three identities evaluated on one sample (exact)"),
            1e-10,
            inclusive=True,
            quantity="largest deviation (floating-point tolerance)",
        ),
        evidence="three identities on one sample",
        kind="sanity check",
        quote="N-TE_bar = MMD_u²(Y, Ycf) / mean_{i≠j}(D_ij). [...] Symmetry: the estimator is unchanged when Y and Ycf are swapped. "
        "[...] It is invariant to jointly permuting units.",
        source="notes §5 C3 (derived; the first identity is the paper's Eq. 25), not a claim of the paper",
    )


def _claim_c4(grid: pd.DataFrame, closed: Mapping[str, pd.DataFrame], band: float, mc: str, n_reps: int) -> None:
    """C4 (Theorem 1): the bias of every grid point's mean estimate lies within ``band`` of its closed form."""
    bias = [
        vd.decide_within(
            vd.normal_interval(r["mean"] - r["closed form"], r["se"], method=f"s.e. over {mc}"),
            -band,
            band,
            quantity="bias of the mean estimate",
        )
        for _, r in grid.iterrows()
    ]
    c4 = _every(bias, "every grid point", pick=lambda d: max(abs(_iv(d).low), abs(_iv(d).high)))
    claims.claim(
        "C4",
        "The estimator is consistent for the closed-form N-TE (Gaussian shifts, Bernoulli gaps): its bias is within O(1/m).",
        paper="Theorem 1 (closed forms: notes)",
        ours=f"largest |bias| interval bound {max(abs(_iv(c4).low), abs(_iv(c4).high)):.2e} (band ±{band:.1e}); "
        f"max |mean - truth| / s.e. = {closed_form_max_z(closed):.2f}",
        decision=c4,
        evidence=f"{mc} per grid point, {len(grid)} points",
        note=_deciding_size(c4, (-band, band), n_reps, "replications per point"),
        quote="We show that the empirical estimator of our N-TE, i.e. [N-TE = ε] has an asymptotic gaussian distribution",
        source="Sec. 4.1 (Theorem 1); closed forms: notes §5 C4",
        change="the old rule passed when every point was within 4 s.e. of its closed form, which fewer replications pass "
        "more easily; Theorem 1 centres the estimator on the true N-TE, so every point's bias interval must now lie "
        "within the O(1/m) bias a ratio of U-statistics has",
        kind="reproduction",
    )


def _claim_c10(conc: pd.DataFrame, n_reps: int) -> None:
    """C10 (Theorem 4): at every m, the share of deviations beyond the 5% Hoeffding bound is at most 0.05."""
    exceed = [
        vd.decide_below(
            _rate_interval(r["P(|dev| >= t_H)"], n_reps, f"replications at m = {int(r['m'])}"),
            0.05,
            inclusive=True,
            quantity="share of |MTE - MMD^2| beyond the 5% Hoeffding bound, at each m",
        )
        for _, r in conc.iterrows()
    ]
    claims.claim(
        "C10",
        "Hoeffding's bound (Theorem 4) holds for the M-TE numerator.",
        paper="P(|U - EU| >= t) <= 2 exp(-2 floor(m/2) t^2 / (4K)^2)",
        ours=f"exceedance at the 5% bound: max {conc['P(|dev| >= t_H)'].max():.3f}; bound / empirical quantile ≈ "
        f"{np.median(conc['Hoeffding 95% t'] / conc['empirical 95% |MTE - MMD^2|']):.0f}x",
        decision=(c10 := _every(exceed, "every m")),
        note=_deciding_size(c10, (0.05,), n_reps, "replications per m"),
        evidence=f"m in {list(conc['m'])}, {n_reps} replications each (valid but loose)",
        quote="Theorem 4 (Large deviation for U-statistic). If the function [h] is bounded, i.e. [a ≤ h ≤ b], we have "
        "[Pr(|U_n − η| ≥ t) ≤ 2 exp(−2⌊n/m⌋t²/(b−a)²)]",
        source="App. A.3, Theorem 4 (Eq. 19)",
        kind="reproduction",
    )


def _claim_s1(hb: Mapping[str, Any]) -> None:
    """S1: cflib's MMD permutation test against hyppo's (``benchmarks/results/bench_mmd.json``, ``mmd_vs_hyppo``)."""
    timed = f"median CPU seconds of the benchmark harness ({hb.get('speedup_basis', 'fresh processes')}); it records no spread"
    s1 = _every(
        [
            vd.decide_below(
                vd.exact(hb["statistic_abs_diff"], method="the two statistics on the same data"),
                1e-8,
                inclusive=True,
                quantity="|statistic difference|",
            ),
            vd.decide_above(
                vd.exact(hb["speedup"], method=timed), 200.0, inclusive=True, quantity="speed-up over hyppo"
            ),
        ],
        "same statistic and at least 200x faster",
    )
    claims.claim(
        "S1",
        "cflib's MMD permutation test equals hyppo's and is at least 200x faster (issue 8 bar, not a paper claim).",
        paper="not in the paper",
        ours=f"{hb['speedup']:.0f}x faster; statistic diff {hb['statistic_abs_diff']:.1e}; "
        f"p-values {hb['pvalue_cflib']:.3f} vs {hb['pvalue_hyppo']:.3f} ({hb['pvalue_diff_in_mc_se']:.1f} Monte-Carlo s.e. apart)",
        decision=s1,
        kind="sanity check",
        evidence=f"benchmarks/results/bench_mmd.json, n = m = {hb['n']}, d = {hb['d']}, {hb['n_permutations']} permutations, shared 2-core machine",
        quote="same statistic up to float error, p-values agreeing within Monte-Carlo error, and cflib at least 200× faster on 2 CPU cores",
        source="issue 8 (Build); a check of cflib against a peer, not in the paper",
    )


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C5, C5b, C6 (the paper's σ̂), C6-corrected (the book's), C7 and C9 of notebook 02 (calibration and power).

    Parameters
    ----------
    results : mapping
        ``qq`` (:func:`boundary_zscores`), ``type1`` (:func:`type1_study`), ``inside_rate`` (rejection
        rate strictly inside the null), ``power`` (:func:`power_study`), ``eps0_table`` (:func:`eps0_study`),
        and the parameters ``alpha, eps_grid, m_grid, n_reps, qq_m, power_m_grid, power_reps, eps0_reps,
        eps0_m, n_boot``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.

    Notes
    -----
    A level is "held" in Bradley's liberal sense (:data:`cflib.verdicts.BRADLEY_BAND`): a type-I error in ``[alpha / 2, 3 alpha / 2]``.
    The z-scores' law is "N(0, 1)" when its Kolmogorov distance from N(0, 1) is at most ``alpha / 2``: the
    rejection rate at the boundary is one minus the z-scores' CDF at ``z_{1 - alpha}``, so that distance keeps
    the level inside Bradley's band.
    """
    claims.require(
        results,
        [
            "qq",
            "type1",
            "inside_rate",
            "power",
            "eps0_table",
            "alpha",
            "eps_grid",
            "m_grid",
            "n_reps",
            "qq_m",
            "power_m_grid",
            "power_reps",
            "eps0_reps",
            "eps0_m",
            "n_boot",
        ],
    )
    r = results
    alpha, eps_grid, n_reps, qq_m = r["alpha"], list(r["eps_grid"]), r["n_reps"], r["qq_m"]
    band = vd.level_band(alpha)
    _claim_c5(r, alpha, eps_grid, n_reps, qq_m)
    at = r["type1"].set_index(["epsilon", "m"])
    m_ref = qq_m if qq_m in r["m_grid"] else max(r["m_grid"])
    _claim_c5b(at, m_ref, eps_grid, alpha, band, n_reps)
    _claim_c6(r, at, m_ref, eps_grid, alpha, band, n_reps)
    _claim_c7(r, eps_grid)
    _claim_c9(r, alpha, band)
    return claims.rows(["C5", "C5b", "C6", "C6-corrected", "C7", "C9"])


def _claim_c5(r: Mapping[str, Any], alpha: float, eps_grid: list[float], n_reps: int, qq_m: int) -> None:
    """C5 (Theorem 1): at every ε the delta-method z-scores are within α/2 of N(0, 1) in Kolmogorov distance."""
    dist = [
        vd.decide_below(
            _ks_distance(r["qq"][e]["z_delta"], where=f"N-TE = ε = {e}"),
            alpha / 2,
            inclusive=True,
            quantity="Kolmogorov distance of the delta-method z-scores from N(0, 1), at each ε",
        )
        for e in eps_grid
    ]
    c5 = _every(dist, "every ε")
    worst = max(dist, key=lambda d: _iv(d).estimate)
    c5_note = ""
    if c5.verdict == vd.UNDECIDED:
        # exactly normal z-scores have an expected Kolmogorov distance of about 0.8687 / sqrt(n); the DKW half-width adds
        # sqrt(log(40) / (2 n)): the interval lies below alpha / 2 once their sum does
        n_dec = int(np.ceil(((np.sqrt(np.log(40) / 2) + 0.8687) / (alpha / 2)) ** 2))
        c5_note = (
            f"Largest observed distance {_iv(worst).estimate:.3f}. If the z-scores are exactly N(0, 1) at m = {qq_m}, "
            f"about {n_dec} replications per ε (now {n_reps}) decide it; params/full.yaml runs that many."
        )
    claims.claim(
        "C5",
        "Theorem 1: at N-TE = eps > 0 the z-score is asymptotically N(0, 1).",
        paper="asymptotic normality",
        ours="Kolmogorov distance (delta s.e.) = " + ", ".join(f"{_iv(d).estimate:.3f}" for d in dist),
        decision=c5,
        evidence=f"{n_reps} z-scores per ε at m = {qq_m} (N-TE = ε); distance at most α/2 = {alpha / 2:g}",
        note=c5_note,
        quote="Theorem 1 (N-TE asymptotic gaussian distribution.). If [N-TE = ε] with [ε ∈ (0, 1]], we have "
        "[√m (N-TE_bar − ε) →d N(0, σ²)]",
        source="Sec. 4.1, Theorem 1 (Eq. 12; proof in App. A.6)",
        change="the old rule passed when a Kolmogorov-Smirnov test did not reject at 0.01, which fewer replications pass "
        "more easily; the distance of the z-scores' law from N(0, 1) now has a DKW interval and must be at most α/2, "
        "the error that keeps the level of the test built on it within Bradley's band",
        kind="reproduction",
    )


def _claim_c5b(
    at: pd.DataFrame, m_ref: int, eps_grid: list[float], alpha: float, band: tuple[float, float], n_reps: int
) -> None:
    """C5b (the notes' derivation): at the largest ε the paper's σ̂ is anti-conservative, the delta-method σ̂ calibrated."""
    big = max(eps_grid)
    big = max(eps_grid)
    paper_iv = _rate_interval(at.loc[(big, m_ref), "paper"], n_reps)
    delta_iv = _rate_interval(at.loc[(big, m_ref), "delta"], n_reps)
    c5b = _every(
        [
            vd.decide_above(paper_iv, alpha, quantity=f"type-I error with the paper's σ̂ at ε = {big}"),
            vd.decide_within(delta_iv, *band, quantity=f"type-I error with the delta-method σ̂ at ε = {big}"),
        ],
        "the paper's σ̂ anti-conservative and the delta-method σ̂ calibrated",
    )
    claims.claim(
        "C5b",
        "The paper's sigma-hat (Eq. 13) ignores the denominator and is anti-conservative for larger eps; the delta-method one is calibrated.",
        paper="(notes, derived) paper 0.064 vs delta 0.050 at eps = 0.3",
        ours=f"paper {paper_iv.estimate:.3f} [{paper_iv.low:.3f}, {paper_iv.high:.3f}] vs delta {delta_iv.estimate:.3f} "
        f"[{delta_iv.low:.3f}, {delta_iv.high:.3f}] at eps = {big}, m = {m_ref}",
        decision=c5b,
        note=_deciding_size(c5b, (alpha, *band), n_reps, "replications"),
        evidence=f"{n_reps} replications at N-TE = ε = {big}, m = {m_ref}; calibrated: Bradley's [{band[0]:g}, {band[1]:g}]",
        quote="The paper's σ equals σ_δ only when ε → 0. [...] In a prototype simulation (§5, item C5b) the paper's variance is "
        "anti-conservative for larger ε.",
        source="notes §2.6 (the proof of Theorem 1 treats the denominator as a constant), not a claim of the paper",
        kind=_OWN,
        change=_OWN_CHANGE.format(what="the anti-conservative σ̂ is the notes' derivation §2.6")
        + "; before, the band α ± 2.2 "
        "binomial s.e. was the sampling noise itself and shrank with the replications; 'calibrated' "
        "is now Bradley's [α/2, 3α/2] and 'anti-conservative' a type-I error above α",
    )


def _claim_c6(
    r: Mapping[str, Any],
    at: pd.DataFrame,
    m_ref: int,
    eps_grid: list[float],
    alpha: float,
    band: tuple[float, float],
    n_reps: int,
) -> None:
    """C6 (Theorem 2) in the paper's printed form and C6-corrected in the book's (issue 38: split in two).

    C6 reads the boundary rejection rate of the test with the paper's printed σ̂ (Eq. 13): the paper's own form of
    Theorem 2. C6-corrected reads the delta-method σ̂ the book derived (notes §2.6) and the rate strictly inside the
    null: a correction the book made, so it is the book's own finding, not a reproduction.
    """

    def bounds_for(form: str, label: str) -> list[vd.Decision]:
        return [
            vd.decide_within(
                _rate_interval(at.loc[(e, m_ref), form], n_reps, f"replications at N-TE = ε = {e}"),
                *band,
                quantity=f"type-I error with {label} at N-TE = ε, at each ε",
            )
            for e in eps_grid
        ]

    quote = (
        "Under null hypothesis [H0: N-TE ≤ ε], Type-I error is bounded by [α], by setting the testing threshold as the "
        "[(1 − α)]-quantile of the asymptotic null distribution of [N-TE_bar] in Theorem 1. That is: "
        "[Pr(N-TE_bar > τ_α | H0) → α, m → ∞]"
    )
    printed = bounds_for("paper", "the paper's printed σ̂ (Eq. 13)")
    c6 = _every(printed, "every ε, with the paper's printed σ̂")
    claims.claim(
        "C6",
        "Theorem 2 as printed: with the paper's σ̂ (Eq. 13) the rejection rate at the boundary N-TE = ε tends to alpha.",
        paper=f"alpha = {alpha}",
        ours=f"rates with the paper's σ̂ {', '.join(f'{_iv(d).estimate:.3f}' for d in printed)} at m = {m_ref}",
        decision=c6,
        note=_deciding_size(c6, band, n_reps, "replications"),
        evidence=f"{n_reps} replications per ε at m = {m_ref}, the test's threshold from the paper's printed σ̂ (Eq. 13); "
        f"Bradley's [{band[0]:g}, {band[1]:g}]",
        quote=quote,
        source="Sec. 4.1, Theorem 2 with Eq. 13",
        change="issue 38: Theorem 2 split in two. C6 is now the paper's printed form (its σ̂ of Eq. 13, which ignores the "
        "ratio's denominator); the book's corrected form, which the old C6 read, is C6-corrected, the book's own finding. "
        "Before that: the band α ± 2.2 binomial s.e. was the sampling noise itself; the boundary rate must lie in Bradley's "
        "[α/2, 3α/2]",
        kind="reproduction",
    )
    bounds = bounds_for("delta", "the delta-method σ̂")
    inside = vd.decide_below(
        _rate_interval(r["inside_rate"], n_reps), alpha, inclusive=True, quantity="type-I error at N-TE = ε/2"
    )
    c6c = _every([*bounds, inside], "every ε and inside the null, with the delta-method σ̂")
    claims.claim(
        "C6-corrected",
        "Theorem 2 with the book's corrected σ̂: the rejection rate at the boundary tends to alpha; strictly inside the "
        "null it is at most alpha.",
        paper=f"alpha = {alpha}",
        ours=f"delta rates {', '.join(f'{_iv(d).estimate:.3f}' for d in bounds)} at m = {m_ref}; inside null {r['inside_rate']:.3f}",
        decision=c6c,
        note=_deciding_size(c6c, band, n_reps, "replications"),
        evidence=f"{n_reps} replications per ε at m = {m_ref}; Bradley's [{band[0]:g}, {band[1]:g}]; inside: N-TE = ε/2 at m = {max(r['m_grid'])}",
        quote=quote,
        source="Sec. 4.1, Theorem 2, with the delta-method σ̂ of the notes §2.6 in place of Eq. 13",
        kind=_OWN,
        change="the book's own finding, not a reproduction (issue 38): Theorem 2 split in two; this half is decided only "
        "through the book's correction (the delta-method σ̂ of notes §2.6 in place of the paper's Eq. 13), and the paper's "
        "printed form is C6",
    )


def _claim_c7(r: Mapping[str, Any], eps_grid: list[float]) -> None:
    """C7 (Theorem 3): for every ε' the power rises from the smallest to the largest m."""
    power, power_reps = r["power"], r["power_reps"]
    m_lo, m_hi = min(r["power_m_grid"]), max(r["power_m_grid"])
    grows = []
    for e1, sub in power.groupby("eps'", sort=True):
        lo, hi = (float(sub.loc[sub["m"] == m, "power"].iloc[0]) for m in (m_lo, m_hi))
        rise = _difference(
            hi,
            _binomial_se(hi, power_reps),
            lo,
            _binomial_se(lo, power_reps),
            same_units=False,
            what=f"{power_reps} replications per point, N-TE = {e1}",
        )
        # a power of 1 already at the smallest m has reached its limit: nothing is left to rise
        grows.append(
            vd.decide_above(
                rise,
                0.0,
                inclusive=lo == 1.0,
                quantity=f"power at m = {m_hi} minus power at m = {m_lo} (at least 0 when both are 1), at each ε'",
            )
        )
    gap = float(np.max(np.abs(power["power"] - power["theory"])))
    eps_primes = [float(e) for e in sorted(power["eps'"].unique())]
    top = power[power["m"] == m_hi]
    claims.claim(
        "C7",
        "Theorem 3: for every eps' > eps the rejection rate rises with m (consistency: it tends to 1).",
        paper="consistency",
        ours=f"power at m = {m_hi}: {top['power'].min():.2f}-{top['power'].max():.2f}, at m = {m_lo}: "
        f"{power.loc[power['m'] == m_lo, 'power'].min():.2f}-{power.loc[power['m'] == m_lo, 'power'].max():.2f}; "
        f"max |power - normal approximation| = {gap:.2f}",
        decision=(c7 := _every(grows, "every ε'")),
        note=_deciding_size(c7, (0.0,), power_reps, "replications per point"),
        evidence=f"{power_reps} replications per point at m = {m_lo} and m = {m_hi}, ε = {eps_grid[0]}, ε' in {eps_primes}",
        quote="Under alternative hypothesis [H1: N-TE ≥ ε], the test always successfully rejects the null hypothesis based on "
        "Theorem 1. That is: [Pr(N-TE_bar > τ_α | H1) → 1, m → ∞]",
        source="Sec. 4.1, Theorem 3 (proof in App. A.7)",
        change="the paper's Theorem 3 says the power tends to 1 as m grows; the old rule added thresholds the paper does not "
        "state (power at least 0.9 at the largest m for ε' >= 0.2, within 0.15 of the normal approximation); the rule "
        "now asks the power to rise from the smallest to the largest m for every ε'",
        kind="reproduction",
    )


def _claim_c9(r: Mapping[str, Any], alpha: float, band: tuple[float, float]) -> None:
    """C9 (the notes' measurements): the calibrations of the ε = 0 test, sign flips, Eq. 13 and the literal Eq. 11."""
    eps0, eps0_reps = r["eps0_table"], r["eps0_reps"]
    rate0 = {k: _rate_interval(eps0.loc[k, "type-I (P = Q)"], eps0_reps) for k in EPS0_METHODS}
    power_col = eps0.columns[1]
    parts = [
        vd.decide_below(rate0["signflip"], band[1], inclusive=True, quantity="type-I error of the sign-flip test"),
        vd.decide_below(rate0["normal"], alpha, quantity="type-I error of the Eq. 13 threshold at ε = 0"),
        vd.decide_below(rate0["bootstrap-literal"], alpha, quantity="type-I error of the literal Eq. 11 weights"),
        vd.decide_below(
            _rate_interval(eps0.loc["bootstrap-literal", power_col], eps0_reps),
            alpha,
            quantity=f"rejection rate of the literal Eq. 11 weights under the alternative ({power_col})",
        ),
    ]
    c9 = _every(parts, "every part")
    claims.claim(
        "C9",
        "eps = 0 is an MMD two-sample test: a valid resampling null holds the level; Eq. 13 is conservative and the literal Eq. 11 weights never reject.",
        paper="(notes) bootstrap 0.04, normal 0.00, literal 0.00 under P = Q",
        ours="; ".join(f"{k} {eps0.loc[k, 'type-I (P = Q)']:.3f}/{eps0.loc[k, power_col]:.2f}" for k in EPS0_METHODS)
        + " (type-I/power)",
        decision=c9,
        note=_deciding_size(c9, (band[1], alpha), eps0_reps, "replications"),
        evidence=f"{eps0_reps} replications at m = {r['eps0_m']}, {r['n_boot']} draws per test; level held: at most 3α/2 (Bradley)",
        quote="In this type of task, CF-CLOT can be implemented using MMD, and we will further discuss this special case in Appendix A.4.",
        source="Sec. 4.2.1 (Eq. 14); the calibrations compared are the notes' (§2.8, §5 C9)",
        kind=_OWN,
        change=_OWN_CHANGE.format(
            what="the paper says only that ε = 0 is an MMD two-sample test; the level of a resampling "
            "null, the conservative Eq. 13 threshold and the literal Eq. 11 weights are the notes' "
            "measurements"
        )
        + "; before, 'controls type-I' was a rate within 2.5 binomial s.e. of α and 'very conservative' / 'never reject' a rate "
        "at most 0.01, hand-set; now the sign-flip level is held when its rate is at most 3α/2 (Bradley), 'conservative' "
        "is a rate below α, and 'never rejects' is a rate below α under the null and under the alternative",
    )


def _claims_fig13ab(acc: pd.DataFrame, unf: pd.DataFrame, audits: str, n_aud: int) -> None:
    """Fig1-3a (SAA more accurate than SSA) and Fig1-3b (SFA-0 fairer than SAA), over the audits."""
    d_acc = (acc["SAA"] - acc["SSA"]).to_numpy(dtype=float)
    claims.claim(
        "Fig1-3a",
        "SAA is more accurate than SSA (the paper: SAA best, SSA and SFA-0/0.1 'similar but poorer').",
        paper="qualitative (Figs. 1-3, 5)",
        ours=f"SAA - SSA accuracy: mean {d_acc.mean():.3f} over {n_aud} audits, positive in {int((d_acc > 0).sum())}",
        decision=(
            vd.one_seed(
                vd.decide_above(
                    vd.mean_interval(d_acc, unit="audits"), 0.0, quantity="mean SAA - SSA accuracy over audits"
                )
            )
        ),
        note=_ONE_SEED_AUDITS.format(n=n_aud),
        evidence=f"{audits}, accuracy on each audit's held-out units; t interval over audits",
        quote="SAA achieved the best accuracy results across all datasets, while SFA-[ε]=0.3 performed similarly, except for "
        "the Obesity dataset. In contrast, SSA, SFA-[ε]=0.1, and SFA-[ε] yielded similar but poorer results.",
        source="Sec. 5.1.2 (Figs. 1-3)",
        change=_ONE_SEED_CHANGE.format(n=n_aud)
        + "the old rule read 'SAA within 0.01 of the best variant in 75% of audits', a tolerance and share the paper "
        "does not state; the paper's words set SAA against SSA ('similar but poorer'), so the rule is now the mean "
        "SAA - SSA accuracy over audits above 0",
        kind="reproduction",
    )
    d_unf = (unf["SAA"] - unf["SFA-0"]).to_numpy(dtype=float)
    claims.claim(
        "Fig1-3b",
        "SFA-0 is fairer than SAA: CF-CLOT at eps = 0 removes the attributes that carry the unfairness.",
        paper="qualitative",
        ours=f"SAA - SFA-0 unfairness: mean {d_unf.mean():.4f} over {n_aud} audits "
        f"(SFA-0 {float(unf['SFA-0'].mean()):.4f}, SAA {float(unf['SAA'].mean()):.4f})",
        decision=(
            vd.one_seed(
                vd.decide_above(
                    vd.mean_interval(d_unf, unit="audits"), 0.0, quantity="mean SAA - SFA-0 unfairness over audits"
                )
            )
        ),
        note=_ONE_SEED_AUDITS.format(n=n_aud),
        evidence=f"{audits}; unfairness = mean |Δp| under the flip; t interval over audits",
        quote="From a fairness perspective, SSA, SFA-[ε]=0.1, and SFA-[ε] achieved fairness, while SAA and SFA-[ε]=0.3 "
        "exhibited comparable degrees of unfairness.",
        source="Sec. 5.1.2 (Figs. 1-3)",
        change=_ONE_SEED_CHANGE.format(n=n_aud)
        + "the old claim joined SSA's zero unfairness, which holds by construction (now the sanity check Fig1-3b-SSA), "
        "with SFA-0 <= SAA in every audit; the rule now reads the part that CF-CLOT decides: SFA-0 less unfair than SAA",
        kind="reproduction",
    )


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C8, Fig1-3a, Fig1-3b, Fig1-3b-SSA, Fig1-3c and C11 of notebook 03 (the SAA / SSA / SFA audits).

    Parameters
    ----------
    results : mapping
        ``screenings`` (``{(data set, model): ScreeningResult}``), ``n_sensitive`` (``{data set: number of
        sensitive attributes}``), ``acc`` and ``unf`` (:func:`audit_tables`), ``n_train``, ``datasets``, ``archs``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(results, ["screenings", "n_sensitive", "acc", "unf", "n_train", "datasets", "archs"])
    screenings, acc, unf = results["screenings"], results["acc"], results["unf"]
    n_aud = len(screenings)
    audits = f"{n_aud} audits ({len(results['datasets'])} data sets x {len(results['archs'])} models)"
    nested = [s.is_nested() for s in screenings.values()]
    share = vd.exact(
        float(np.mean(nested)),
        method=f"nesting checked on each of the {n_aud} audits run (a property of each screening, no estimate)",
    )
    claims.claim(
        "C8",
        "Flagged sets nest in epsilon: F(0.3) ⊆ F(0.1) ⊆ F(0), so SFA accuracy and unfairness are monotone in epsilon.",
        paper="qualitative (Sec. 5.1)",
        ours=f"nested in {sum(nested)}/{n_aud} audits",
        decision=vd.decide_within(share, 1.0, 1.0, quantity="share of audits whose flagged sets nest"),
        kind="sanity check",
        evidence=f"{audits}; delta-method s.e. at ε > 0, sign flips at ε = 0",
        quote="For fixed data, with the paper's σ̂ (independent of ε), rejection at ε2 implies rejection at every ε1 < ε2. "
        "So flagged sets nest: F(0.3) ⊆ F(0.1) ⊆ F(0).",
        source="notes §5 C8: nesting holds by construction with the paper's σ̂; this checks that cflib's delta-method σ̂ "
        "and sign-flip test at ε = 0 keep it",
    )
    _claims_fig13ab(acc, unf, audits, n_aud)
    ssa = float(np.abs(unf["SSA"].to_numpy(dtype=float)).max())
    claims.claim(
        "Fig1-3b-SSA",
        "SSA is fair: a model that never reads the sensitive attributes does not move under their flip.",
        paper="qualitative",
        ours=f"largest SSA unfairness {ssa:.1e} over {n_aud} audits",
        decision=vd.decide_below(
            vd.exact(ssa, method=f"computed on each of the {n_aud} audits"),
            0.0,
            inclusive=True,
            quantity="largest SSA unfairness",
        ),
        kind="sanity check",
        evidence=f"{audits}; holds by construction",
        quote="From a fairness perspective, SSA, SFA-[ε]=0.1, and SFA-[ε] achieved fairness",
        source="Sec. 5.1.2 (Figs. 1-3)",
    )
    flags = []
    for (name, arch), s in screenings.items():
        rows = s.table[np.isclose(s.table["epsilon"], 0.1)]
        for _, row in rows.iterrows():
            iv = _nte_interval(
                row["nte"],
                float(row["sigma"]) / np.sqrt(row["m"]),
                f"{name} / {arch}, {row['attribute']}: delta-method s.e. of CF-CLOT, m = {int(row['m'])}",
            )
            flags.append(vd.decide_above(iv, 0.1, quantity="N-TE of a sensitive attribute"))
    if not flags:
        raise ValueError(
            "the screenings hold no test at epsilon = 0.1, which claim Fig1-3c reads; screen at epsilons including 0.1"
        )
    c3 = _every(flags, f"every sensitive attribute of the {n_aud} audits", pick=lambda d: _iv(d).estimate)
    f01 = [len(s.flagged(0.1)) == results["n_sensitive"][k[0]] for k, s in screenings.items()]
    f03 = [len(s.flagged(0.3)) for s in screenings.values() if any(np.isclose(e, 0.3) for e in s.epsilons)]
    f0 = [len(s.flagged(0.0)) for s in screenings.values() if any(np.isclose(e, 0.0) for e in s.epsilons)]
    claims.claim(
        "Fig1-3c",
        "Every sensitive attribute is flagged at eps = 0.1: its N-TE exceeds 0.1 (SFA-0.1 = SSA).",
        paper="qualitative (Sec. 5.1 reading of Figs. 1-3)",
        ours=f"all flagged at 0.1 in {sum(f01)}/{n_aud} audits; largest N-TE {_iv(c3).estimate:.4f}; "
        f"flagged at 0: {np.mean(f0) if f0 else float('nan'):.1f} on average; at 0.3: {sum(f03)} in all",
        decision=vd.on_substitute(
            c3,
            "whether an attribute's N-TE exceeds 0.1 is a property of the paper's data sets (Student Performance, "
            "Obesity, Dropout), which the book replaces",
        ),
        note="Differs with the substitute data: the claim is that the paper's sensitive attributes (sex, parents' jobs and "
        "education, gender, age...) each move its models' outputs by an N-TE above 0.1 on its UCI and Kaggle data sets "
        f"(notes §3.2). The book audits {', '.join(map(str, results['datasets']))} instead: the CF-CLOT test and the SAA/SSA/"
        "SFA protocol are kept, the data sets' attributes and their effect sizes are not, so no N-TE read here says whether "
        "the paper's exceed 0.1.",
        evidence=f"{len(flags)} CF-CLOT tests ({audits}) at α = 0.05 on probability outputs with the median bandwidth; "
        "notebook 04 shows why 0.1 is rarely reached. The paper states no kernel, bandwidth or output representation",
        quote="The similar results of SFA-[ε]=0.1, SFA-[ε], and SSA suggested that the features used for training were the same, "
        "demonstrating that CF-CLOT effectively identified the sensitive attributes we set as unfair. [...] The attributes "
        "considered fair in the [ε]=0.3 scenario were deemed unfair in the [ε]=0.1 and [ε]=0 scenarios",
        source="Sec. 5.1.2 (Figs. 1-3)",
        change="issue 38: substitutes by one rule; the substitute data sets do not keep the attributes' effect sizes "
        "the claim is about. Before: the old rule also required that no attribute be flagged at ε = 0.3 in any audit; the paper's words make "
        "SFA-0.3 equal SAA only on two of its three data sets ('except for the Obesity dataset'), so that half is not "
        "a claim about every audit; the rule reads the ε = 0.1 half, which the paper states for every data set",
        kind="reproduction",
    )
    claims.claim(
        "C11",
        "CF-CLOT flags exactly the attributes whose true N-TE exceeds epsilon.",
        paper="Sec. 5 (implicit)",
        ours="no ground truth on real data",
        verdict=vd.NOT_CHECKABLE,
        rule="given by hand: the quantity (each attribute's true N-TE) cannot be computed on real data at any scale",
        evidence="the true N-TE of a model on real data is unknown at any scale",
        note="Its checkable analogue, CF-CLOT's decisions against a known N-TE, is checked on simulated outputs with a "
        "closed-form N-TE in notebook 02: C6 and C6-corrected (rejection rate α at N-TE = ε with the paper's and the corrected σ̂, at most α inside the null) and C7 "
        "(rejection rate rising with m when N-TE > ε).",
        quote="Across different datasets, CF-CLOT successfully identified unfair sensitive attributes, demonstrating it has "
        "achieved fairness analysis by DCT with testing consistency.",
        source="Sec. 5.1.2",
        change="no scale can check it on real data (the true N-TE is unknown), so it is not checkable here rather than "
        "undecided at this scale",
        kind="reproduction",
    )
    return claims.rows(["C8", "Fig1-3a", "Fig1-3b", "Fig1-3b-SSA", "Fig1-3c", "C11"])


def _claim_directions(directions: pd.DataFrame, n_units: int) -> None:
    """C12-directions (the book's own finding): per direction, CF-CLOT sees the flip the pooled comparison misses."""
    beta = float(directions.index.max())
    row = directions.loc[beta]
    ci = vd.Interval(
        float(max(row["N-TE a=0 under do(a->1)"], row["N-TE a=1 under do(a->0)"])),
        float(row["larger N-TE low"]),
        float(row["larger N-TE high"]),
        "the larger direction's delta-method interval, 97.5% per direction (Bonferroni)",
    )
    pooled = vd.Interval(
        float(row["N-TE pooled"]), float(row["pooled low"]), float(row["pooled high"]), "delta-method standard error"
    )
    decision = vd.combine(
        {
            "per direction above epsilon": vd.decide_above(ci, 0.1, quantity="the larger directional N-TE"),
            "pooled within epsilon": vd.decide_below(pooled, 0.1, quantity="the pooled N-TE"),
        },
        rule="the pooled flip misses what each direction sees",
        detail="verdicts",
    )
    claims.claim(
        "C12-directions",
        "Flipping every unit of a balanced attribute at once and comparing the pooled outputs misses an unfair "
        "model; tested per direction (Definition 4's do(a_t -> a_t')), CF-CLOT flags it at epsilon 0.1.",
        paper="Definition 4 defines N-TE for one direction do(a_t -> a_t')",
        ours=f"beta {beta:g}: pooled N-TE {row['N-TE pooled']:.3f} (p {format_pvalue(row['p pooled'])}); per "
        f"direction {row['N-TE a=0 under do(a->1)']:.3f} and {row['N-TE a=1 under do(a->0)']:.3f} "
        f"(p {format_pvalue(row['p per direction'])})",
        decision=decision,
        kind="book's own finding",
        evidence=f"f = sigmoid(c + beta a), a ~ Bern(1/2), c ~ N(0, 1), {n_units} units (a stream of their own); "
        "CF-CLOT at epsilon 0.1 with the normal threshold, pooled at alpha 0.05 and each direction at 0.025",
        quote="Given a deep model f_Y(·) and sensitive attribute a_t ∈ A_s, suppose Ŷ represents factual potential "
        "outcomes and Ŷ_{a_t'} represents the counterfactual one. The N-TE of do(a_t → a_t') is",
        source="Definition 4",
    )


def _c12_decision(at_beta: pd.DataFrame, n_units: Any) -> vd.Decision:
    """C12's parts at the reference logit effect: flip below set-to-value at P(a=1) = 0.5 and above it at 0.2 (where
    those shares were run), and every N-TE below 0.1."""

    def row(share: float, how: str) -> pd.Series:
        return at_beta[(at_beta["P(a=1)"] == share) & (at_beta["intervention"] == how)].iloc[0]

    flip_set = []
    for share, (hi, lo) in ((0.5, ("set a := 0", "flip")), (0.2, ("flip", "set a := 0"))):
        if share in set(at_beta["P(a=1)"]):
            a, b = row(share, hi), row(share, lo)
            flip_set.append(
                vd.decide_above(
                    _difference(
                        a["N-TE"],
                        a["s.e."],
                        b["N-TE"],
                        b["s.e."],
                        same_units=True,
                        what=f"delta-method s.e., {n_units} units",
                    ),
                    0.0,
                    quantity=f"N-TE ({hi}) - N-TE ({lo}) at P(a=1) = {share}",
                )
            )
    below = [
        vd.decide_below(
            _nte_interval(
                rw["N-TE"],
                rw["s.e."],
                f"P(a=1) = {rw['P(a=1)']}, {rw['intervention']}: delta-method s.e., {n_units} units",
            ),
            0.1,
            quantity="N-TE at logit effect 2",
        )
        for _, rw in at_beta.iterrows()
    ]
    return _every([*flip_set, *below], "every part")


def claims_03_scm(comparison: Any) -> pd.DataFrame:
    """Claims Fig6-accuracy and Fig6-detection of notebook 03: CF-CLOT's SFA-0 against the SCM method's oracle on
    the synthetic credit SCM (:func:`scm_method_comparison`; the paper's Sec. 5.3, Fig. 6).

    Parameters
    ----------
    comparison : SCMComparison

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    t, det = comparison.table, comparison.detections
    seeds = sorted(t["seed"].unique())
    by = t.pivot(index="seed", columns="variant", values="accuracy")
    unf = t.pivot(index="seed", columns="variant", values="unfairness")
    d_acc = vd.seed_interval(by["SCM oracle"] - by["SFA-0"], within="test rows")
    where = (
        f"{len(seeds)} seeds (fresh SCM data, models and screening each), logistic regressions; the SCM method is "
        "epsilon-IFair's oracle at epsilon 0 with the true graph (the features that are no descendants of a sensitive "
        f"attribute); unfairness is the interventional gap of p from the SCM, {comparison.n_mc} Monte Carlo units"
    )
    quote = (
        "although the effect of CF-CLOT was slightly inferior to that of the SCM method on both datasets, the difference "
        "was minimal. This proves that under the same settings, CF-CLOT and IFair detected the same unfair sensitive "
        "attributes."
    )
    substitute = (
        "A synthetic credit SCM with a known graph (a direct, a mediated and an inert binary sensitive attribute) and "
        "the oracle of the SCM method stand in for epsilon-IFair's learned PDAGs on UCI Student Performance and Kaggle "
        "Credit Risk, which have no offline implementation or data"
    )
    acc_decision = vd.decide_within(d_acc, -0.02, 0.02, quantity="accuracy of the SCM method - accuracy of SFA-0")
    claims.claim(
        "Fig6-accuracy",
        "CF-CLOT (SFA-0) is slightly inferior to the SCM method, with a minimal difference: here, SFA-0's accuracy "
        "within 2 points of the SCM method's.",
        paper="qualitative (Fig. 6: slightly inferior, minimal difference)",
        ours=f"accuracy SCM method - SFA-0 = {d_acc.estimate:+.3f} [{d_acc.low:+.3f}, {d_acc.high:+.3f}]; interventional "
        f"unfairness SFA-0 {unf['SFA-0'].mean():.3f}, SCM method {unf['SCM oracle'].mean():.3f}",
        decision=acc_decision,
        evidence=where,
        quote=quote,
        source="Sec. 5.3, Fig. 6",
        kind=_OWN,
        note=" ".join(
            [
                _deciding_size(acc_decision, (-0.02, 0.02), len(seeds), "seeds"),
                substitute + ". SFA-0 keeps the mediator of an unfair attribute, which the SCM method drops: it is "
                "more accurate and less interventionally fair, so the direction of 'inferior' depends on which of the "
                "two is read",
            ]
        ).strip(),
    )
    det_decision = vd.decide_above(
        vd.binomial_interval(int(det["agree"].sum()), len(det), unit="(seed, sensitive attribute) pairs"),
        0.8,
        quantity="share of (seed, attribute) pairs on which the two agree",
    )
    claims.claim(
        "Fig6-detection",
        "CF-CLOT and the SCM method detect the same unfair sensitive attributes (of the model with all attributes).",
        paper="qualitative (Sec. 5.3: the same attributes detected)",
        ours=f"agree on {int(det['agree'].sum())}/{len(det)} (seed, attribute) pairs; flagged by CF-CLOT at epsilon 0: "
        + ", ".join(f"{a} {v:.0%}" for a, v in det.groupby("attribute", sort=False)["cfclot"].mean().items()),
        decision=det_decision,
        evidence=where + "; CF-CLOT: the exact sign-flip test at epsilon 0 on the model with all attributes; the SCM "
        "method: that model's interventional gap with a 95% interval excluding 0",
        quote=quote,
        source="Sec. 5.3, Fig. 6",
        kind=_OWN,
        note=" ".join([_deciding_size(det_decision, (0.8,), len(det), "(seed, attribute) pairs"), substitute]).strip(),
        rule="agreement on more than 80% of the (seed, attribute) pairs: reproduced if the Clopper-Pearson interval of "
        "the share lies above 0.8, not reproduced if below, undecided if it contains 0.8",
    )
    return claims.rows(["Fig6-accuracy", "Fig6-detection"])


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C4, C12, C12-directions (with ``directions``) and C13 of notebook 04 (what epsilon means).

    Parameters
    ----------
    results : mapping
        ``table_gap`` and ``tolerated`` (:func:`epsilon_gap_tables`, with gap 10 and epsilons 0.01, 0.05,
        0.1, 0.3 among their columns), ``blind`` (:func:`flip_vs_set_study`), ``betas``, ``n_units``,
        ``llm`` (:func:`llm_example`) and ``m_llm``; optionally ``directions`` (:func:`direction_study`).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(results, ["table_gap", "tolerated", "blind", "betas", "n_units", "llm", "m_llm"])
    table_gap, tolerated, blind, betas, llm = (
        results["table_gap"],
        results["tolerated"],
        results["blind"],
        results["betas"],
        results["llm"],
    )
    # the notes print the gaps to 0.1 points and N-TE to 4 decimals: each must lie within half a unit of the last digit
    closed = "closed form nte_bernoulli solved with brentq (exact)"
    ours_gaps = tolerated.loc["r = 0", [0.01, 0.05, 0.1, 0.3]].to_numpy(dtype=float)
    parts = [
        vd.decide_within(vd.exact(g, method=closed), p - 0.05, p + 0.05, quantity=f"gap tolerated at ε = {e} (points)")
        for g, p, e in zip(ours_gaps, (12.2, 27.1, 37.8, 62.6), (0.01, 0.05, 0.1, 0.3), strict=True)
    ]
    parts.append(
        vd.decide_within(
            vd.exact(table_gap.loc["r = 0", 10], method=closed),
            0.0067 - 5e-5,
            0.0067 + 5e-5,
            quantity="N-TE of a 10-point gap",
        )
    )
    claims.claim(
        "C4",
        "Reading epsilon for decisions: eps = 0.01, 0.05, 0.1, 0.3 tolerate rate gaps of 12.2, 27.1, 37.8, 62.6 points (r = 0).",
        paper="(notes, closed form) 12.2 / 27.1 / 37.8 / 62.6",
        ours=" / ".join(f"{v:.1f}" for v in ours_gaps),
        decision=_every(parts, "every value, to the notes' printed precision"),
        kind="sanity check",
        evidence="closed form nte_bernoulli solved with brentq; within half a unit of the notes' last digit",
        quote="With r = 0, ε = 0.01, 0.05, 0.1, 0.3 correspond to gaps of 12.2, 27.1, 37.8 and 62.6 percentage points",
        source="notes §5 C4 (a closed-form calculation of the notes), not a claim of the paper",
        change="the tolerance is now half a unit of the notes' printed precision (0.05 points) instead of 0.1 points",
    )
    beta_ref = 2.0 if 2.0 in betas else max(betas)  # the notes' "strongly unfair" model: logit effect 2
    at_beta = blind[blind["beta"] == beta_ref]

    c12 = _c12_decision(at_beta, results["n_units"])
    half = at_beta[at_beta["P(a=1)"] == 0.5]
    claims.claim(
        "C12",
        "The marginal comparison is blind to a strongly unfair model (logit effect 2) under the flip of a balanced attribute: "
        "the intervention changes the answer, and no intervention brings it to eps = 0.1.",
        paper="(notes) flip N-TE ≈ -0.0002, set-to-value 0.022-0.033 at beta = 2",
        ours=f"beta = {beta_ref:g}, P(a=1) = 0.5: flip {float(half.loc[half['intervention'] == 'flip', 'N-TE'].iloc[0]):.4f}, "
        f"set {float(half.loc[half['intervention'] == 'set a := 0', 'N-TE'].iloc[0]):.4f}, "
        f"mean |Δp| {float(half.loc[half['intervention'] == 'flip', 'mean |Δp|'].iloc[0]):.2f}; "
        f"largest N-TE at this beta {float(at_beta['N-TE'].max()):.3f}",
        decision=c12,
        note=_deciding_size(c12, (0.0, 0.1), results["n_units"], "units per share of a = 1"),
        evidence=f"{results['n_units']} units per share of a = 1, probability outputs, median bandwidth; s.e. of CF-CLOT at ε = 0.1",
        quote='The "flip" intervention a → 1−a leaves the output marginal unchanged, so N-TE = 0 even for β = 2. [...] '
        "The choice of intervention changes the answer. Even a strongly unfair model (logit effect 2) has N-TE of only "
        "about 0.02–0.05, below every ε the paper uses",
        source="notes §5 C12 (a pitfall the notes derive), not a claim of the paper",
        kind=_OWN,
        change=_OWN_CHANGE.format(what="the flip-versus-set pitfall is the notes' derivation")
        + "; before, the old rule used hand-set bounds (|flip| < 0.005, set > 0.01, mean |Δp| > 0.2); the notes' words are now "
        "read as: flip below set-to-value at P(a=1) = 0.5 and above it at 0.2 (the intervention changes the answer), "
        "and every N-TE at logit effect 2 below 0.1",
    )
    m_llm = results["m_llm"]
    diff = vd.normal_interval(
        llm["rate difference"], llm["s.e. of the rate difference"], method=f"two-proportion s.e., m = {m_llm} per group"
    )
    closeness = _nte_interval(llm["N-TE estimate"], llm["N-TE s.e."], f"delta-method s.e. of CF-CLOT, m = {m_llm}")
    c13 = _every(
        [
            vd.decide_above(diff, 0.0, quantity="rate difference 73.5% - 73% (the two-sample test)"),
            vd.decide_below(closeness, 0.001, quantity="N-TE (CF-CLOT at ε = 0.001)"),
        ],
        "both parts",
    )
    claims.claim(
        "C13",
        "LLM example: a 73% vs 73.5% rating is told apart by a two-sample test at large m, while its N-TE lies below eps = 0.001.",
        paper="qualitative (introduction)",
        ours=f"rate difference {diff.estimate:.4f} [{diff.low:.4f}, {diff.high:.4f}] (two-sample p = {llm['two-proportion z-test p-value']:.2g}); "
        f"N-TE = {closeness.estimate:.1e} [{closeness.low:.1e}, {closeness.high:.1e}] (closed form {llm['N-TE closed form (r = 0)']:.1e})",
        decision=c13,
        note=_deciding_size(c13, (0.0, 0.001), m_llm, "ratings per group"),
        evidence=f"m = {m_llm} ratings per group, binary outputs, r = 0",
        quote="For example, if a large language model (LLM) rates sensitive photos of men at 73% and women at 73.5%, the "
        "two-sample test would label it as unfair, even though there is no significant gender discrimination in general cognition.",
        source="Sec. 1 (Introduction)",
        change="'accepted by CF-CLOT' was a non-rejection at ε = 0.001; it is now the N-TE's interval lying below 0.001, "
        "and 'rejected by a two-sample test' the rate difference's interval lying above 0",
        kind="reproduction",
    )
    keys = ["C4", "C12", "C13"]
    if "directions" in results:
        _claim_directions(results["directions"], int(results["n_units"]))
        keys.insert(2, "C12-directions")
    return claims.rows(keys)


def claims_05(results: Mapping[str, Any]) -> pd.DataFrame:
    """Sanity checks L1 and L2 of notebook 05 (linear-time MMD tests; issue 14, not claims of a paper).

    Parameters
    ----------
    results : mapping
        ``level`` and ``power``: tables of :func:`cflib.stats.mmd_linear.linear_power_study` under the null
        (one sample size) and under a shift (several), with the full test first; ``alpha``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these checks.
    """
    claims.require(results, ["level", "power", "alpha"])
    level, power, alpha = results["level"], results["power"], results["alpha"]
    quote = "with their level checked (binomial interval) and their power against the full test shown on a figure in the closeness chapter"
    held = [
        vd.decide_below(
            _rate_interval(r["rejection_rate"], int(r["n_reps"]), f"replications, {r['test']}"),
            vd.level_band(alpha)[1],
            inclusive=True,
            quantity="type-I error of each test",
        )
        for _, r in level.iterrows()
    ]
    n_level = int(level["n_reps"].iloc[0])
    l1 = _every(held, "every test", pick=lambda d: _iv(d).high)
    claims.claim(
        "L1",
        "Every linear-time test and the full test hold the level alpha = 0.05.",
        paper="exact (permutation) or asymptotic (normal)",
        ours=", ".join(f"{r['test']}: {r['rejection_rate']:.3f}" for _, r in level.iterrows()),
        decision=l1,
        kind="sanity check",
        note=_deciding_size(l1, (vd.level_band(alpha)[1],), n_level, "replications"),
        evidence=f"{n_level} replications at n = m = {int(level['n'].iloc[0])}; level held: type-I error at most 3α/2 (Bradley)",
        quote=quote,
        source="issue 14 (Build): checks of cflib's linear-time tests, not in the paper",
        change="the old rule passed when the count lay in the 99% binomial interval around α (a non-rejection, easier with "
        "fewer replications); the level is now held when the Clopper-Pearson interval lies at or below 3α/2 (Bradley)",
    )
    tests = list(dict.fromkeys(power["test"]))
    rate = power.pivot(index="n", columns="test", values="rejection_rate")
    se = power.pivot(index="n", columns="test", values="se")
    k = len(rate)
    gaps = [
        vd.decide_above(
            vd.normal_interval(
                float((rate[tests[0]] - rate[t]).mean()),
                float(np.sqrt((se[tests[0]] ** 2 + se[t] ** 2).sum()) / k),
                method=f"{t}: mean over {k} sample sizes, independent binomial s.e. (conservative: same data)",
            ),
            0.0,
            inclusive=True,
            quantity="power of the full test minus a linear-time test's, averaged over n",
        )
        for t in tests[1:]
    ]
    n_reps = int(power["n_reps"].iloc[0])
    l2 = _every(gaps, "every linear-time test", pick=lambda d: -_iv(d).low)
    claims.record("power_full_largest_n", float(rate[tests[0]].iloc[-1]))
    claims.claim(
        "L2",
        "At equal n the full permutation test is at least as powerful as each linear-time test (averaged over the n grid).",
        paper="expected: the linear-time tests use O(N) of the N^2 kernel pairs",
        ours="; ".join(f"{t}: {_iv(d).estimate:+.3f}" for t, d in zip(tests[1:], gaps, strict=True)),
        decision=l2,
        kind="sanity check",
        note=_deciding_size(l2, (0.0,), n_reps, "replications per n"),
        evidence=f"{n_reps} replications per n in {list(rate.index)}, shift {power['shift'].iloc[0]}",
        quote=quote,
        source="issue 14 (Build): checks of cflib's linear-time tests, not in the paper",
        change="the old rule passed unless some n had the full test more than 2 s.e. below a linear-time test; the power "
        "gap, averaged over the n grid, must now have an interval at or above 0",
    )
    return claims.rows(["L1", "L2"])
