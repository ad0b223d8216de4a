"""The claims of notebooks 01-04: one ``claims_<nn>`` function per notebook that turns its results into claim verdicts.

Each claim is an estimate with its interval, decided by a rule of :mod:`cflib.verdicts` written from the
paper's words; the private helpers below build those intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import claims
from ... import verdicts as vd
from ...data.fairness_sim import A2_ATE
from .common import CHUNKS, EFFECTS
from .cookbook import PAPER_FIG5

__all__ = [
    "EQUIVALENCE_MARGIN",
    "claims_01",
    "claims_02",
    "claims_03",
    "claims_04",
]


#: Margin of the claims that an effect is zero or that two effects are equal (1 percentage point, notes Sec. 7.8):
#: such a claim is reproduced only when the effect's whole 95% interval lies within it.
EQUIVALENCE_MARGIN = 0.01


def _batch_interval(
    estimate: float, se: float, over: str = f"{CHUNKS} disjoint chunks of the population"
) -> vd.Interval:
    return vd.normal_interval(estimate, se, method=f"batch-means standard error over {over}")


def _finite(values: Any) -> np.ndarray:
    """The defined values (a repetition whose statistic is undefined, e.g. an empty bin, is left out)."""
    v = np.asarray(values, dtype=float)
    return v[np.isfinite(v)]


def _reps_interval(values: Any, unit: str = "repetitions") -> vd.Interval:
    return vd.mean_interval(_finite(values), unit=unit)


def _if_interval(estimate: float, se: float) -> vd.Interval:
    return vd.normal_interval(estimate, se, method="influence-function standard error")


def _two_sample_interval(a: Any, b: Any, unit: str = "repetitions") -> vd.Interval:
    """Normal interval of ``mean(a) - mean(b)`` for two independent samples (undefined with fewer than two values in either)."""
    a, b = _finite(a), _finite(b)
    est = float(a.mean() - b.mean()) if min(a.size, b.size) else np.nan
    if min(a.size, b.size) < 2:
        return vd.Interval(
            est, np.nan, np.nan, f"two-sample interval, {a.size} and {b.size} {unit} (fewer than two: no spread)"
        )
    se = float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
    return vd.normal_interval(est, se, method=f"two-sample standard error, {a.size} and {b.size} {unit}")


def _claim_c1(r: Mapping[str, Any]) -> None:
    """C1 (Prop. 3): the TV decomposition holds exactly for the estimator."""
    reps, n_boot = r["reps"], r["n_boot"]
    worst = max(r["residual"], r["max_residual"])
    claims.claim(
        "C1",
        "Prop. 3: TV = Ctf-DE - Ctf-IE - Ctf-SE holds exactly for the estimator, in-sample and in every bootstrap replicate.",
        paper="exact identity",
        ours=worst,
        kind="sanity check",
        quote="The statistical parity measure admits a decomposition into its direct, indirect, and spurious variations",
        source="Prop. 3, Eq. 8",
        decision=vd.decide_below(
            vd.exact(worst, method="largest residual over every sample and bootstrap replicate (rounding only)"),
            1e-10,
            inclusive=True,
            quantity="max |TV - (DE - IE - SE)|",
        ),
        evidence=f"max residual over {reps} samples x 20 bootstrap replicates and one sample x {n_boot} replicates. "
        "The estimator shares its two counterfactual means between the measures, so the identity holds by construction",
    )


def _claim_c3(r: Mapping[str, Any]) -> None:
    """C3 (notes' claim 3): the estimator is linear in the outcome with shared folds."""
    lin_gap = r["lin_gap"]
    claims.claim(
        "C3",
        "Linearity: Ctf(Y) - Ctf(Y_hat) = Ctf(Y - Y_hat) with linear learners and shared folds.",
        paper="exact",
        ours=lin_gap,
        kind="sanity check",
        quote="Ctf-CE(Y) − Ctf-CE(Ŷ) = Ctf-CE(Y − Ŷ) for the estimator, with shared folds and nuisance learners that are linear in the outcome",
        source="notes §5 claim 3, not in the paper",
        decision=vd.decide_below(
            vd.exact(lin_gap, method="one sample, the same folds and propensities (rounding only)"),
            1e-9,
            inclusive=True,
            quantity="max |Ctf(Y) - Ctf(Y_hat) - Ctf(Y - Y_hat)|",
        ),
        evidence="same folds and propensities; an identity of the estimator",
    )


def _claim_c6(r: Mapping[str, Any]) -> None:
    """C6: the DR intervals cover the linear SFM's closed forms."""
    reps = r["reps"]
    coverage = pd.Series(r["coverage"])
    parts = [
        vd.decide_above(
            vd.binomial_interval(round(float(c) * reps), reps, unit="samples"),
            0.90,
            inclusive=True,
            quantity=f"coverage of {m}'s 95% interval",
        )
        for m, c in coverage.items()
    ]
    claims.claim(
        "C6",
        "Linear SFM: the DR estimator's 95% intervals cover the closed forms of TV, DE, IE and SE at >= 90%.",
        paper="closed forms DE=b_x, IE=-b_w a_xw, SE=-(b_z+b_w a_zw)(mu1-mu0)",
        ours={"coverage": coverage.round(3).to_dict()},
        kind="sanity check",
        quote="95% CIs should cover at about the nominal rate (coverage ≥ 90% over 100 repetitions)",
        source="notes §5 claim 6, not in the paper",
        decision=vd.combine(parts, rule="coverage >= 0.90 for every measure", detail=True),
        change="the single-sample 'within 3 SE' part is dropped: it is one draw of what the coverage over all samples measures",
        note="undecided while a coverage's Clopper-Pearson interval contains 0.90: about 400 samples decide a coverage of 0.93 or more, "
        "1000 (params/full.yaml) one of 0.92",
        evidence=f"n={r['n']}, {reps} samples, influence-function normal intervals, learner={r['learner']}; it checks cflib's estimator against Def. 3",
    )


def _claim_c7(r: Mapping[str, Any]) -> None:
    """C7 (App. B): the identification formulas against counterfactual Monte Carlo; Eq. 56's printed sign."""
    n_discrete = r["n_discrete"]
    ident = r["identification"]
    mc_se = ident["Monte Carlo se"]
    parts = [
        vd.decide_within(
            vd.normal_interval(
                ident.loc[m, "Monte Carlo counterfactuals"] - ident.loc[m, "Eqs. 54-55, Eq. 7 sign"],
                mc_se[m],
                method=f"Monte Carlo standard error, {n_discrete} units",
            ),
            -0.003,
            0.003,
            quantity=f"{m}: Monte Carlo - identification formula",
        )
        for m in EFFECTS
    ]
    parts.append(
        vd.decide_within(
            vd.normal_interval(
                ident.loc["SE", "Monte Carlo counterfactuals"] + ident.loc["SE", "Eq. 56 as printed"],
                mc_se["SE"],
                method=f"Monte Carlo standard error, {n_discrete} units",
            ),
            -0.003,
            0.003,
            quantity="SE: Monte Carlo + Eq. 56 as printed (opposite sign)",
        )
    )
    claims.claim(
        "C7",
        "App. B: Eqs. 54-55 and Eq. 56 with Eq. 7's sign match counterfactual Monte Carlo; Eq. 56 as printed has the opposite sign.",
        paper="Eq. 56 printed with the opposite sign (erratum)",
        ours={
            "gap": (ident.iloc[:, 1] - ident.iloc[:, 0]).round(5).to_dict(),
            "SE_eq56": float(ident.loc["SE", "Eq. 56 as printed"]),
        },
        quote="are identifiable from observational data, that is, they can be computed uniquely from the observational distribution $P(V)$",
        source="Prop. 4 and App. B, Eqs. 54-56",
        decision=vd.combine(parts, rule="every formula within 0.003 of the Monte Carlo counterfactuals", detail=True),
        change="the band is a fixed ±0.003 (the notes' tolerance) around an interval from the Monte Carlo standard error; "
        "it was 0.003 scaled by sqrt(1e6 / n) around the point",
        note="undecided while the Monte Carlo interval is wider than the band: 1e6 units decide it",
        evidence=f"exact joint vs {n_discrete} Monte Carlo units from the same units' noise",
        kind="reproduction",
    )


def _claim_c17(r: Mapping[str, Any]) -> None:
    """C17: the white-box cross-check of the DR direct effect."""
    wb, dr = r["whitebox"], r["dr_de"]
    tol = 0.1 * abs(wb)
    claims.claim(
        "C17",
        "White-box cross-check: DR Ctf-DE(y_hat|x0) equals the plug-in mean of f(x1,.) - f(x0,.) within 10% of it.",
        paper="(notes' check)",
        ours={"whitebox": wb, "dr": dr, "se": r["dr_de_se"]},
        kind="sanity check",
        quote="For a white-box predictor f, the DR Ctf-DE(ŷ|x0) equals the direct plug-in mean_{x0}[f(x1,Z,W) − f(x0,Z,W)] within 2 SE.",
        source="notes §5 claim 17, not in the paper",
        decision=vd.decide_within(_if_interval(dr - wb, r["dr_de_se"]), -tol, tol, quantity="DR DE - plug-in DE"),
        change="'within 2 SE' passes any estimate when the SE is large; equality now needs the difference's 95% interval "
        "inside ±10% of the plug-in value",
        note="undecided while the interval is wider than the band: the book's n = 2000 decides it",
        evidence="non-linear f(x, z, w) = 0.5x + tanh(w) + 0.3xz^2, DR with gradient boosting, one sample, IF standard error",
    )


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C1, C3, C6, C7 and C17 of notebook 01 (the SFM and the TV decomposition).

    Parameters
    ----------
    results : mapping
        ``residual`` (identity residual of one sample), ``max_residual`` (over the coverage study),
        ``reps``, ``n_boot``, ``n``, ``learner``, ``lin_gap`` (:func:`linearity_gap`), ``coverage``
        (coverage per measure over ``reps`` samples, a Series), ``identification``
        (:func:`discrete_identification`'s table), ``n_discrete``, ``whitebox`` (plug-in DE),
        ``dr_de`` and ``dr_de_se`` (the DR estimate of the same DE and its standard error).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(
        results,
        [
            "residual",
            "max_residual",
            "reps",
            "n_boot",
            "n",
            "learner",
            "lin_gap",
            "coverage",
            "identification",
            "n_discrete",
            "whitebox",
            "dr_de",
            "dr_de_se",
        ],
    )
    r = results
    _claim_c1(r)
    _claim_c3(r)
    _claim_c6(r)
    _claim_c7(r)
    _claim_c17(r)
    return claims.rows(["C1", "C3", "C6", "C7", "C17"])


def _claim_c2(r: Mapping[str, Any]) -> None:
    """C2 (proof of Thm. 1): the three-term identity in every bin, and a vanishing Term III without Z."""
    n_population, bins, se = r["n_population"], r["bins"], r["se"]
    claims.claim(
        "C2",
        "Proof of Thm. 1: PPM = Term I + Term II + Term III in every bin; Term III ~ 0 when Z is empty.",
        paper="identity; Term III = 0 without Z",
        ours={"residual": r["three_residual"], "iTerm_III": r["term_III"]},
        quote="Since there are no backdoor paths between X and Y , \\hat{Y} , Term (III) vanishes.",
        source="App. A.1, Eqs. 32-34",
        decision=vd.combine(
            [
                vd.decide_below(
                    vd.exact(r["three_residual"], method="largest per-bin residual (rounding only)"),
                    1e-10,
                    inclusive=True,
                    quantity="max |PPM - (I + II + III)|",
                ),
                vd.decide_within(_batch_interval(r["term_III"], se["term_III"]), -0.02, 0.02, quantity="iTerm III"),
            ],
            rule="the identity and a vanishing Term III",
            detail=True,
        ),
        change="Term III's band is a fixed ±0.02 around an interval; it was 0.02 scaled by sqrt(400000 / n) around the point",
        note="undecided while Term III's interval is wider than ±0.02: 400000 units decide it",
        evidence=f"true counterfactuals of the App. A.2 SCM, n={n_population}, {bins} bins",
        kind="reproduction",
    )


def _claim_c4(r: Mapping[str, Any], cf: Mapping[str, float]) -> None:
    """C4 (Corollary 1): the efficient predictor's terms against their closed forms in the linear SCM."""
    cor1, n_population = r["cor1"], r["n_population"]
    eff_col, se_eff = cor1.iloc[:, 1], cor1["se (efficient)"]
    targets = {"Term I": cf["term_I"], "Term II (+III)": cf["term_II"], "PPM": 0.0, "SPM": cf["spm"]}
    claims.claim(
        "C4",
        "Corollary 1: Term I = TE and Term II = -TE for an efficient predictor in the linear SCM; PPM = 0 and SPM = TE.",
        paper=f"Term I = {cf['term_I']:.2f}, Term II = {cf['term_II']:.2f}",
        ours=eff_col.round(3).to_dict(),
        quote="For the additional special case of linear SCMs, the terms appearing in the decomposition in Eq. 10 can be computed explicitly",
        source="Sec. 3, Corollary 1, Eqs. 11-12",
        decision=vd.combine(
            [
                vd.decide_within(_batch_interval(eff_col[k] - t, se_eff[k]), -0.03, 0.03, quantity=f"{k} - closed form")
                for k, t in targets.items()
            ],
            rule="every term within 0.03 of its closed form",
            detail=True,
        ),
        note="undecided while an interval is wider than ±0.03: 400000 units decide it",
        evidence=f"true counterfactuals, n={n_population}, interior deciles",
        kind="reproduction",
    )


def _claim_c5(r: Mapping[str, Any], cf: Mapping[str, float]) -> None:
    """C5: with homogeneous effects, Term I = TE for any predictor."""
    eff, noisy = r["eff_table"], r["noisy_table"]
    dev = float(max(np.abs(eff.term_I - cf["term_I"]).max(), np.abs(noisy.term_I - cf["term_I"]).max()))
    claims.claim(
        "C5",
        "Homogeneous effects: Term I = TE for any predictor (efficient or noisy) in the linear SCM.",
        paper="Term I = TE",
        ours={"efficient": float(eff.term_I.mean()), "noisy": float(noisy.term_I.mean()), "max_deviation": dev},
        kind="sanity check",
        quote="for any set of units selected by x_1, \\widehat{y} , the effect in Term (I) *does not depend on the constructed predictor \\widehat{Y}*",
        source="Sec. 3, after Eq. 14",
        decision=vd.decide_below(
            vd.exact(dev, method="every bin, true counterfactuals; the unit-level effect is the constant TE"),
            1e-9,
            inclusive=True,
            quantity="max |Term I - TE| over bins and both predictors",
        ),
        evidence="every bin; in a linear SCM every unit's effect is TE (Eq. 36), so this holds by construction",
    )


def _claim_c8(r: Mapping[str, Any]) -> None:
    """C8 (Prop. 1, Fig. 7): the efficient predictor is calibrated; the fitted learner's |iPPM| falls with n."""
    cor1, n_population = r["cor1"], r["n_population"]
    eff_col, se_eff = cor1.iloc[:, 1], cor1["se (efficient)"]
    integ, ns, reps = r["integ"], r["ns"], r["reps"]
    top, bottom = integ[integ.n == max(ns)].ppm.abs(), integ[integ.n == min(ns)].ppm.abs()
    claims.claim(
        "C8",
        "Prop. 1 and Fig. 7: the efficient predictor satisfies PP (interior-bin PPM ~ 0); the fitted learner's |iPPM| falls as n grows.",
        paper="PP holds for E[Y|x,w]; iPPM closer to 0 as n grows",
        ours={
            "linear_interior_ppm": float(eff_col["PPM"]),
            "a2_abs_ippm_by_n": integ.assign(a=integ.ppm.abs()).groupby("n").a.mean().round(3).to_dict(),
        },
        quote="The figure illustrates that as the number of samples increases, the predictor \\widehat{Y} is closer to calibration "
        "(iPPM is closer to 0), as predicted by Prop. 1.",
        source="App. A.2 (Fig. 7) and Prop. 1",
        decision=vd.combine(
            [
                vd.decide_within(
                    _batch_interval(eff_col["PPM"], se_eff["PPM"]),
                    -0.02,
                    0.02,
                    quantity="interior-bin PPM, efficient predictor",
                ),
                vd.decide_below(
                    _two_sample_interval(top, bottom),
                    0.0,
                    quantity=f"|iPPM| at n={max(ns)} - |iPPM| at n={min(ns)} (fitted learner)",
                ),
            ],
            rule="calibration of the efficient predictor and a falling |iPPM|",
            detail=True,
        ),
        change="the paper says iPPM gets closer to 0 as n grows: the fitted learner's |iPPM| must now fall from the smallest to the largest n "
        "(the old rule let it grow by up to 0.05)",
        note=f"undecided while an interval straddles its bound. The interior-bin PPM of 10 bins carries a binning bias near 0.02 (notes §2.13): "
        "about 2.5 million units (params/full.yaml: 4 million) narrow its interval to ±0.002. The |iPPM| comparison has "
        f"{reps} repetitions per n here, the paper's 20 in params/full.yaml; with 20 bins the oracle's own iPPM is about 0.03, "
        "so |iPPM| stops falling near that value",
        evidence=f"linear SCM with n={n_population} (batch-means se); App. A.2 with {reps} repetitions at n={min(ns)} and n={max(ns)}",
        kind="reproduction",
    )


def _claim_c9(r: Mapping[str, Any]) -> None:
    """C9 (Prop. 2): SP and PP exclude each other unless Y is independent of X."""
    prop, n_population = r["prop"], r["n_population"]
    sp = prop.loc["SP-forced Y_hat"]
    claims.claim(
        "C9",
        "Prop. 2: a predictor forced to SP has PPM bounded away from 0 when TV(Y) != 0; the efficient one has SPM = TV(Y).",
        paper="SP and PP exclusive unless Y indep. X",
        ours={col: v.dropna().to_dict() for col, v in prop.round(3).items()},  # Y's own iPPM is undefined: left out
        quote="are mutually exclusive except in degenerate cases when $Y \\perp\\!\\!\\!\\perp X$",
        source="Prop. 2",
        decision=vd.combine(
            [
                vd.decide_below(
                    vd.exact(abs(sp["SPM"]), method="group-demeaned predictor (rounding only)"),
                    1e-8,
                    inclusive=True,
                    quantity="|SPM| of the SP-forced predictor",
                ),
                vd.decide_above(
                    _batch_interval(sp["iPPM interior bins"], sp["se iPPM interior bins"]),
                    0.5,
                    quantity="interior-bin iPPM of the SP-forced predictor",
                ),
                vd.decide_within(
                    _batch_interval(
                        prop.loc["efficient Y_hat", "SPM - TV(Y)"], prop.loc["efficient Y_hat", "se SPM - TV(Y)"]
                    ),
                    -0.05,
                    0.05,
                    quantity="SPM(efficient) - TV(Y)",
                ),
            ],
            rule="SP-forced: SPM 0 and iPPM above 0.5; efficient: SPM = TV(Y) within 0.05",
            detail=True,
        ),
        note="undecided while an interval straddles its bound: 400000 units decide it",
        evidence=f"linear SCM, n={n_population}, group-demeaned efficient predictor",
        kind="reproduction",
    )


def _claim_c10(r: Mapping[str, Any]) -> None:
    """C10: the efficient learner has the same counterfactual effects as Y."""
    cpp = r["cpp"]
    claims.claim(
        "C10",
        "The efficient learner E[Y|X,Z,W] has the same Ctf-DE/IE/SE as Y (causal predictive parity for all effects).",
        paper="(notes' observation; implied by Prop. 4)",
        ours=cpp.round(4).to_dict(),
        kind="sanity check",
        quote="An efficient learner Ŷ = E[Y | X, Z, W] satisfies CPP for all three effects exactly, at population level.",
        source="notes §2.7, not in the paper",
        decision=vd.combine(
            [
                vd.decide_within(
                    _if_interval(cpp.loc[m, "estimate"], cpp.loc[m, "se"]), -0.05, 0.05, quantity=f"Ctf-{m}(Y - Y_hat)"
                )
                for m in EFFECTS
            ],
            rule="every effect of Y - Y_hat within ±0.05",
            detail=True,
        ),
        change="'|estimate| < 3 SE' cannot confirm an equality; each effect's 95% interval must now lie within ±0.05 (the chapter's "
        "tolerance for SPM = TV(Y) in the same linear models)",
        note="undecided while an interval is wider than ±0.05: n = 100000 decides it",
        evidence=f"paired DR estimates of Ctf(Y - Y_hat) on the linear SFM, n={r['n_cpp']}; Y - Y_hat is the outcome noise, so the "
        "population effects are 0 by construction",
    )


def _claim_c11(r: Mapping[str, Any], cf: Mapping[str, float]) -> None:
    """C11: CPP for all effects does not imply PP."""
    cor1, n_population = r["cor1"], r["n_population"]
    noisy_col, se_noisy = cor1.iloc[:, 2], cor1["se (noisy)"]
    claims.claim(
        "C11",
        "Caveat: CPP for all effects does not imply PP (efficient + noise keeps SPM but its interior |PPM| is large).",
        paper="BN = all 'leads to PP' (intuitive, no theorem)",
        ours={"spm_noisy": float(noisy_col["SPM"]), "mean_abs_ppm_noisy": float(noisy_col["mean |PPM|"])},
        kind="sanity check",
        quote="CPP on all three effects does not imply PP.",
        source="notes §2.7 and §5 claim 11, not in the paper (a caveat to its 'will lead to predictive parity')",
        decision=vd.combine(
            [
                vd.decide_above(
                    _batch_interval(noisy_col["mean |PPM|"], se_noisy["mean |PPM|"]),
                    0.3,
                    quantity="interior mean |PPM|, noisy",
                ),
                vd.decide_within(
                    _batch_interval(noisy_col["SPM"] - cf["spm"], se_noisy["SPM"]),
                    -0.03,
                    0.03,
                    quantity="SPM(noisy) - TE",
                ),
            ],
            rule="miscalibrated yet the same SPM",
            detail=True,
        ),
        evidence=f"linear SCM, n={n_population}, interior bins; independent noise keeps every mean and breaks calibration by construction",
    )


def _claim_c12(r: Mapping[str, Any]) -> None:
    """C12 (App. A.2, Figs. 7-8): the integrated terms cancel, Term I is U-shaped and tracked, the ATE is 1.6111."""
    integ, ns, bins, reps = r["integ"], r["ns"], r["bins"], r["reps"]
    tru8, ate = np.asarray(r["fig8_truth"]), r["ate"]
    within = np.asarray(r["within"], dtype=bool)
    big_n = integ[integ.n == max(ns)]
    mid = slice(bins // 2 - 2, bins // 2 + 2)
    with np.errstate(
        all="ignore"
    ):  # a bin without units of one group has no Term I: _reps_interval leaves such repetitions out
        u_shape = np.minimum(tru8[:, 0], tru8[:, -1]) - tru8[:, mid].mean(axis=1)
    identity = float(np.max(np.abs(integ.term_I + integ.term_II - integ.ppm)))
    parts = [
        vd.decide_above(_reps_interval(big_n.term_I), 1.2, quantity=f"iTerm I at n={max(ns)}"),
        vd.decide_below(_reps_interval(big_n.term_II), -1.2, quantity=f"iTerm II at n={max(ns)}"),
        vd.decide_below(
            vd.exact(identity, method="every sample (rounding only)"),
            1e-10,
            inclusive=True,
            quantity="max |iTerm I + iTerm II - iPPM|",
        ),
        vd.decide_above(
            _reps_interval(u_shape), 0.0, quantity="true Term I: smaller tail bin minus the middle four bins"
        ),
        vd.decide_above(
            vd.binomial_interval(int(within.sum()), within.size, unit="bins")
            if tru8.shape[0] > 1
            else vd.Interval(float(within.mean()), np.nan, np.nan, "one repetition: no spread to compare with"),
            0.6,
            inclusive=True,
            quantity="share of bins whose mean estimate is within 1 sd of the truth",
        ),
        vd.decide_within(_batch_interval(ate - A2_ATE, r["se"]["ate"]), -0.02, 0.02, quantity="ATE - 1.6111"),
    ]
    claims.claim(
        "C12",
        "App. A.2: iTerm I ~ +1.7 and iTerm II ~ -1.7 cancel; per-bin Term I is U-shaped and the estimate tracks the truth; ATE = 1.6111.",
        paper="Figs. 7-8 (qualitative)",
        ours={
            "iTerm_I": float(big_n.term_I.mean()),
            "iTerm_II": float(big_n.term_II.mean()),
            "iPPM": float(big_n.ppm.mean()),
            "bins_within_1sd": float(within.mean()),
            "ATE": ate,
        },
        quote="iTerm I and iTerm II are different from 0, and cancel each other out, as predicted by Thm. 1 … the terms Term I_i are estimated correctly",
        source="App. A.2, Figs. 7-8",
        decision=vd.combine(parts, rule="every part of Figs. 7-8", detail=True),
        note="t intervals need at least 2 repetitions; the paper used 20 per n and 50 for Fig. 8 (params/full.yaml: 20)",
        evidence=f"{reps} repetitions per n, n up to {max(ns)}; Fig. 8 at its n over {within.size} bins",
        kind="reproduction",
    )


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C2, C4, C5, C8, C9, C10, C11 and C12 of notebook 02 (Theorem 1, Corollary 1, Props. 1-2, App. A.2).

    Parameters
    ----------
    results : mapping
        ``three_residual``, ``term_III`` and ``se`` (:func:`a2_three_terms`: its residual, integrated Term III
        and standard errors), ``n_population``, ``bins``, ``cor1``, ``eff_table``, ``noisy_table``
        (:func:`corollary1`'s table and the two decompositions' tables), ``prop`` (:func:`calibration_vs_parity`),
        ``cpp`` and ``n_cpp`` (:func:`efficient_ctf_gap` and its sample size), ``integ`` (:func:`a2_terms_study`),
        ``ns``, ``within`` (:func:`fig8_within_1sd`), ``fig8_truth`` (true Term I, reps by bins), ``ate``, ``reps``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(
        results,
        [
            "three_residual",
            "term_III",
            "se",
            "n_population",
            "bins",
            "cor1",
            "eff_table",
            "noisy_table",
            "prop",
            "cpp",
            "n_cpp",
            "integ",
            "ns",
            "within",
            "fig8_truth",
            "ate",
            "reps",
        ],
    )
    r = results
    cor1 = r["cor1"]
    cf = dict(zip(("term_I", "term_II", "spm"), cor1.iloc[[0, 1, 3], 0], strict=True))
    _claim_c2(r)
    _claim_c4(r, cf)
    _claim_c5(r, cf)
    _claim_c8(r)
    _claim_c9(r)
    _claim_c10(r)
    _claim_c11(r, cf)
    _claim_c12(r)
    return claims.rows(["C2", "C4", "C5", "C8", "C9", "C10", "C11", "C12"])


#: The change note of C13 and C14: how the oracle fair predictor is built now.
_ORACLE_CHANGE = (
    "the oracle fair predictor is now 1{U < E[Y | x1, Z]} with its own noise U: it reads Z only, so its zero DE and IE are what the "
    "estimator identifies and its SE equals Y's (notes §7.16: 'build the oracle at x1'). The old oracle read each unit's "
    "counterfactual mediators W_{x0}, i.e. the mediators' exogenous noise, which the SFM rules out"
)


def _effect_interval(effects: pd.DataFrame, outcome: str, m: str) -> vd.Interval:
    """The influence-function interval of effect ``m`` of ``outcome`` in :func:`effects_table`'s table."""
    return _if_interval(effects.loc[(outcome, m), "estimate"], effects.loc[(outcome, m), "se"])


def _claim_c13(r: Mapping[str, Any]) -> None:
    """C13: Algorithm 1 at population level on the COMPAS-like SFM."""
    truth, tse = r["truth"], r["truth_se"]
    gap = truth["fp"]["SE"] - truth["y"]["SE"]
    atol = 0.005
    over = f"{CHUNKS} further populations of {r['n_truth'] // (4 * CHUNKS)} units, rescaled to {r['n_truth']}"
    claims.claim(
        "C13",
        "Alg. 1 at population level (COMPAS-like SFM, BN={SE}): NP fails DE and IE; the oracle FP passes DE and IE and its SE equals Y's.",
        paper="NP fails DE, IE; FP passes (COMPAS, Sec. 4)",
        ours={
            "np_DE": truth["np"]["DE"],
            "np_IE": truth["np"]["IE"],
            "fp_DE": truth["fp"]["DE"],
            "fp_IE": truth["fp"]["IE"],
            "fp_SE_gap": gap,
        },
        kind="sanity check",
        quote="We conclude that Northpointe’s predictions \\hat{Y}^{NP} violate the legal doctrines of fairness, while our predictions "
        "\\hat{Y}^{FP} do not",
        source="Sec. 4 (here on the notes' COMPAS-like SFM at population level, notes §4.3)",
        decision=vd.combine(
            [
                vd.decide_above(
                    _batch_interval(truth["np"]["DE"], tse["np"]["DE"], over), atol, quantity="NP's Ctf-DE"
                ),
                vd.decide_below(
                    _batch_interval(truth["np"]["IE"], tse["np"]["IE"], over), -atol, quantity="NP's Ctf-IE"
                ),
                vd.decide_within(
                    _batch_interval(truth["fp"]["DE"], tse["fp"]["DE"], over), -atol, atol, quantity="FP's Ctf-DE"
                ),
                vd.decide_within(
                    _batch_interval(truth["fp"]["IE"], tse["fp"]["IE"], over), -atol, atol, quantity="FP's Ctf-IE"
                ),
                vd.decide_within(
                    _batch_interval(gap, tse["fp - y"]["SE"], over), -atol, atol, quantity="Ctf-SE(FP) - Ctf-SE(Y)"
                ),
            ],
            rule=f"Algorithm 1 on the population truth, tolerance {atol}",
            detail=True,
        ),
        change=_ORACLE_CHANGE,
        evidence=f"counterfactual truth from {r['n_truth']} units. The simulator gives NP a direct race effect and the oracle reads Z only, "
        f"so this holds by construction. Y itself fails BN={{SE}} (its own IE is {truth['y']['IE']:.3f})",
    )


def _claim_c14(r: Mapping[str, Any]) -> None:
    """C14: finite-sample Algorithm 1 on the COMPAS-like SFM."""
    reps_sim, learner = r["reps_sim"], r["learner"]
    r_np, r_fp = float(r["rates"].get("np", np.nan)), float(r["rates"].get("fp", np.nan))
    k_np, k_fp = round((1 - r_np) * reps_sim), round(r_fp * reps_sim)
    claims.claim(
        "C14",
        "Finite-sample Alg. 1 (n ~ 7000, alpha=0.05): NP -> FAIL and the oracle FP -> SUCCESS in >= 80% of samples.",
        paper="(notes' check of the paper's procedure)",
        ours={"np_fail_rate": 1 - r_np, "fp_success_rate": r_fp},
        kind="sanity check",
        quote="NP → FAIL and FP → SUCCESS in ≥ 80% of replications, using the bootstrap/IF test at α = 0.05",
        source="notes §5 claim 14, not in the paper (which says only that 'one needs to perform hypothesis testing')",
        decision=vd.combine(
            [
                vd.decide_above(
                    vd.binomial_interval(k_np, reps_sim, unit="samples"), 0.8, inclusive=True, quantity="NP's FAIL rate"
                ),
                vd.decide_above(
                    vd.binomial_interval(k_fp, reps_sim, unit="samples"),
                    0.8,
                    inclusive=True,
                    quantity="FP's SUCCESS rate",
                ),
            ],
            rule="both rates at least 0.8",
            detail=True,
        ),
        change=_ORACLE_CHANGE,
        note="undecided while a rate's Clopper-Pearson interval contains 0.8. Three tests at 5% pass a fair predictor about 0.95^3 = 0.86 of "
        "the time, and about 150 samples separate 0.86 from 0.8 (params/full.yaml: 200); 17 samples decide an all-FAIL NP",
        evidence=f"{reps_sim} samples of n={r['n_sim']}, paired difference rule at 5%, learner={learner}; it checks cflib's Algorithm 1 "
        "on a world whose answer is known",
    )


def _claim_c15a(r: Mapping[str, Any]) -> None:
    """C15a: the COMPAS data facts TV(Y) and TV(Northpointe)."""
    tv_y, tv_np = r["tv_y"], r["tv_np"]
    data_fact = "the full 7214 rows, no sampling (exact)"
    claims.claim(
        "C15a",
        "COMPAS data facts: TV(Y) = 8.64% and TV(Northpointe) = 16.94%.",
        paper={"TV_Y": 0.0864, "TV_NP": 0.1694},
        ours={"TV_Y": tv_y, "TV_NP": tv_np},
        kind="sanity check",
        quote="TV(Y) = +8.64% and TV(NP) = +16.94% (exact data facts)",
        source="notes §5 claim 15, not in the paper (it shows SPM only as bars of Fig. 5); checks the script's coding of the data",
        decision=vd.combine(
            [
                vd.decide_within(vd.exact(tv_y, method=data_fact), 0.08635, 0.08645, quantity="TV(Y)"),
                vd.decide_within(vd.exact(tv_np, method=data_fact), 0.16935, 0.16945, quantity="TV(NP)"),
            ],
            rule="both equal to 4 decimals",
            detail=True,
        ),
        evidence="7214 unfiltered rows, x0 = Caucasian",
    )


def _claim_c15b(r: Mapping[str, Any]) -> list[vd.Decision]:
    """C15b (Fig. 5): the signs of COMPAS's effects. Returns Northpointe's parts, which C15c reuses."""
    effects, verdicts, learner = r["effects"], r["verdicts"], r["learner"]

    def iv(outcome: str, m: str) -> vd.Interval:
        return _effect_interval(effects, outcome, m)

    np_parts = [
        vd.decide_above(iv("Ŷ NP", "DE"), 0.0, quantity="Ctf-DE(NP)"),
        vd.decide_below(iv("Ŷ NP", "IE"), 0.0, quantity="Ctf-IE(NP)"),
    ]
    np_se_differs = verdicts.loc[("Ŷ NP", "difference"), "SE"] != "pass"
    claims.claim(
        "C15b",
        "COMPAS Fig. 5: DE(NP) > 0, IE(NP) < 0 and IE(Y) < 0, significantly; SE(Y) < 0 and SE(NP) < 0 as in Eqs. 27-28.",
        paper={k: PAPER_FIG5[k].to_dict() for k in ("Y", "Ŷ NP")},
        ours={k: effects.xs(k)["estimate"].round(4).to_dict() for k in ("Y", "Ŷ NP")},
        quote="Northpointe’s predictions clearly violate the disparate treatment doctrine … the indirect effect, which is not in the business "
        "necessity set, is different from 0 for the Northpointe’s predictions … the indirect effect is different from 0 for the true "
        "outcome (red bar), indicating a bias in the current real world",
        source="Sec. 4, Eqs. 21-29 and Fig. 5",
        decision=vd.combine(
            [
                *np_parts,
                vd.decide_below(iv("Y", "IE"), 0.0, quantity="Ctf-IE(Y)"),
                vd.decide_below(iv("Y", "SE"), 0.0, quantity="Ctf-SE(Y)"),
                vd.decide_below(iv("Ŷ NP", "SE"), 0.0, quantity="Ctf-SE(NP)"),
            ],
            rule="the paper's signs, each 95% interval excluding 0",
            detail=True,
        ),
        change="the part 'DE(Y) not significant' is dropped: the paper's words say nothing of it, and a non-significant estimate cannot "
        "confirm a zero effect",
        evidence=f"cross-fitted AIPW ({learner}, {r['n_folds']} folds), 95% IF intervals; SE(NP) vs SE(Y) paired test: "
        f"{'differ' if np_se_differs else 'no difference'} (the paper saw no violation)",
        kind="reproduction",
    )
    return np_parts


def _claim_c15c(r: Mapping[str, Any], np_parts: Sequence[vd.Decision]) -> None:
    """C15c: Algorithm 1 on COMPAS, Northpointe failing and the fair predictor on the adapted covariates passing."""
    effects, verdicts, learner, margin = r["effects"], r["verdicts"], r["learner"], r["margin"]

    def iv(outcome: str, m: str) -> vd.Interval:
        return _effect_interval(effects, outcome, m)

    fp = "Ŷ FP (adapted Z, W)"
    se_gap = effects.loc[(fp, "SE"), "estimate"] - effects.loc[("Y", "SE"), "estimate"]
    se_gap_se = float(np.hypot(effects.loc[(fp, "SE"), "se"], effects.loc[("Y", "SE"), "se"]))
    fp_parts = [
        vd.decide_within(iv(fp, "DE"), -margin, margin, quantity="Ctf-DE(FP), adapted covariates"),
        vd.decide_within(iv(fp, "IE"), -margin, margin, quantity="Ctf-IE(FP), adapted covariates"),
        vd.decide_within(
            vd.normal_interval(se_gap, se_gap_se, method="influence-function standard errors, taken as independent"),
            -margin,
            margin,
            quantity="Ctf-SE(FP) - Ctf-SE(Y)",
        ),
    ]
    d15c = vd.combine(
        [*np_parts, *fp_parts], rule=f"NP's effects away from 0; FP's DE, IE and SE gap within ±{margin:g}", detail=True
    )
    fp_ivs = "; ".join(
        f"{m} {d.interval.estimate:+.4f} [{d.interval.low:+.4f}, {d.interval.high:+.4f}]"
        for m, d in zip(("FP's Ctf-DE", "FP's Ctf-IE", "Ctf-SE(FP) - Ctf-SE(Y)"), fp_parts, strict=True)
        if d.interval is not None
    )
    # The rule reads the whole of COMPAS: when it leaves the claim undecided, no larger sample of these data exists to decide it.
    decided15c: dict[str, Any] = (
        {"decision": d15c}
        if d15c.verdict != vd.UNDECIDED
        else {
            "verdict": vd.NOT_CHECKABLE,
            "rule": f"given by hand: the rule ({d15c.rule}) leaves it undecided on all {r['n_rows']} rows of COMPAS, and no larger sample exists",
        }
    )
    claims.claim(
        "C15c",
        "COMPAS Alg. 1 (BN={SE}): Northpointe fails (DE and IE); the fairadapt-style FP, decomposed on the adapted covariates, passes.",
        paper="NP FAIL (DE, IE); FP SUCCESS",
        ours={
            "NP": verdicts.loc[("Ŷ NP", "difference"), "Algorithm 1"],
            "FP_adapted": effects.xs(fp)["estimate"].round(4).to_dict(),
            "FP_original_covariates": verdicts.loc[("Ŷ FP", "difference"), "Algorithm 1"],
            "proj": verdicts.loc[("Ŷ proj", "equivalence"), "Algorithm 1"],
        },
        quote="We conclude that Northpointe’s predictions \\hat{Y}^{NP} violate the legal doctrines of fairness, while our predictions "
        "\\hat{Y}^{FP} do not",
        source="Sec. 4, Eqs. 21-29",
        change="FP is now decomposed on the adapted Z and W, as the paper did (it was decomposed on the original covariates, where the "
        "transport map is a direct effect); Algorithm 1 asserts Ctf-DE = Ctf-IE = 0 and equal SEs, so FP's 95% intervals must lie "
        f"within ±{margin:g} (a non-significant effect cannot confirm a zero). Issue 27: a claim the rule leaves undecided on "
        "the whole data set is not checkable here, not 'undecided at this scale': COMPAS has no larger sample",
        note=f"Not checkable here while an interval of FP's effects reaches past ±{margin:g}: the rule already reads all {r['n_rows']} "
        "rows of COMPAS and no larger sample of these data exists, so no size can decide it. The half-widths shrink as "
        "1/sqrt(n), and the paper's own FP intervals (±1.11pp for DE, ±1.98pp for IE) would not decide it either. C14 checks "
        "the procedure on synthetic samples"
        if d15c.verdict == vd.UNDECIDED
        else "",
        evidence=f"cross-fitted AIPW ({learner}, {r['n_folds']} folds), 95% IF intervals on all {r['n_rows']} rows (every part's interval is in the rule); FP: {fp_ivs}; "
        f"decomposed on the original covariates FP gives {verdicts.loc[('Ŷ FP', 'difference'), 'Algorithm 1']} and "
        f"E[Y | x1, Z] gives {verdicts.loc[('Ŷ proj', 'equivalence'), 'Algorithm 1']} (equivalence rule)",
        **decided15c,
        kind="reproduction",
    )


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C13, C14, C15a, C15b and C15c of notebook 03 (COMPAS, Fig. 5 and Algorithm 1).

    Parameters
    ----------
    results : mapping
        ``truth`` and ``truth_se`` (:func:`compas_truth`), ``n_truth``, ``rates`` (:func:`cookbook_summary`),
        ``reps_sim``, ``n_sim``, ``learner``, ``n_folds``, ``tv_y``, ``tv_np``, ``effects`` (:func:`effects_table`),
        ``verdicts`` (:func:`algorithm1`'s table), ``margin`` (the equivalence margin) and ``n_rows`` (the rows of the
        COMPAS data the effects were estimated on: all of them, so a claim the rule leaves undecided there is not
        checkable here).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(
        results,
        [
            "truth",
            "truth_se",
            "n_truth",
            "rates",
            "reps_sim",
            "n_sim",
            "learner",
            "n_folds",
            "tv_y",
            "tv_np",
            "effects",
            "verdicts",
            "margin",
            "n_rows",
        ],
    )
    r = results
    _claim_c13(r)
    _claim_c14(r)
    _claim_c15a(r)
    np_parts = _claim_c15b(r)
    _claim_c15c(r, np_parts)
    return claims.rows(["C13", "C14", "C15a", "C15b", "C15c"])


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C16 and C16b of notebook 04 (the SP-PP spectrum, Fig. 6).

    Parameters
    ----------
    results : mapping
        ``study`` (:func:`pareto_study`, with BN labels ``∅``, ``Z``, ``W``, ``Z, W``), ``front``
        (:func:`pareto_front`), ``kept`` (:func:`effects_kept`), ``reps``, ``quantile``, ``bins``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(results, ["study", "front", "kept", "reps", "quantile", "bins"])
    f, kept, reps = results["front"], results["kept"], results["reps"]
    # The adaptations of every BN set share their seeds by repetition, so the comparisons are paired by repetition.
    spm_, ippm_ = (results["study"].pivot(index="rep", columns="bn", values=v) for v in ("spm", "ippm"))
    unit = "repetitions (paired)"
    parts = [
        vd.decide_above(_reps_interval(spm_["Z, W"] - spm_["∅"], unit), 0.0, quantity="SPM(Z, W) - SPM(∅)"),
        vd.decide_above(
            _reps_interval(ippm_["∅"].abs() - ippm_["Z, W"].abs(), unit), 0.0, quantity="|iPPM(∅)| - |iPPM(Z, W)|"
        ),
    ]
    for k in ("Z", "W"):
        parts += [
            vd.decide_above(_reps_interval(spm_[k] - spm_["∅"], unit), -0.02, quantity=f"SPM({k}) - SPM(∅)"),
            vd.decide_above(_reps_interval(spm_["Z, W"] - spm_[k], unit), -0.02, quantity=f"SPM(Z, W) - SPM({k})"),
        ]
    claims.claim(
        "C16",
        "Fig. 6: SPM lowest for BN=∅ and highest for BN={Z,W}; iPPM the reverse; Z and W in between.",
        paper="qualitative ordering (Z contributes little)",
        ours=f.round(4).to_dict(),
        quote="yields the lowest SPM, but the largest iPPM. Conversely, $\\text{BN} = \\{Z, W\\}$ yields the lowest iPPM, but the largest SPM. "
        "The BN sets Z, W interpolate between the two notions",
        source="Sec. 4, Fig. 6",
        decision=vd.combine(parts, rule="the ends ordered and Z, W between them (0.02 slack)", detail=True),
        note="t intervals need at least 2 repetitions; the paper used 10 (params/full.yaml)",
        evidence=f"{reps} adaptations per BN set, SPM at the {results['quantile']:.0%} quantile, iPPM over {results['bins']} bins",
        kind="reproduction",
    )
    margin = EQUIVALENCE_MARGIN

    def removed(bn: str, m: str) -> vd.Decision:
        return vd.decide_within(
            _if_interval(kept.loc[bn, "_se" if m == "SE" else "_ie"], kept.loc[bn, "_sd"][m]),
            -margin,
            margin,
            quantity=f"Ctf-{m} at BN = {bn}",
        )

    claims.claim(
        "C16b",
        "The transport removes the targeted effects: Ctf-SE ~ 0 when Z is not in BN, Ctf-IE ~ 0 when W is not in BN.",
        paper="(issue requirement; the paper's script never removed SE)",
        ours={
            "IE_by_BN": {k: float(kept.loc[k, "_ie"]) for k in f.index},
            "SE_by_BN": {k: float(kept.loc[k, "_se"]) for k in f.index},
        },
        kind="sanity check",
        quote="That is, if $\\text{BN} = W$, then our procedure removes the spurious effect, but keeps the indirect effect intact "
        "(other choices of the BN set are similar)",
        source="Sec. 4, Pareto frontier",
        decision=vd.combine(
            [removed("∅", "SE"), removed("W", "SE"), removed("∅", "IE"), removed("Z", "IE")],
            rule=f"every removed effect within ±{margin:g}",
            detail=True,
        ),
        change=f"'no significant effect' cannot confirm a removal: each removed effect's 95% interval must now lie within ±{margin:g} "
        "(the chapter's equivalence margin)",
        note=f"undecided while an interval reaches past ±{margin:g}; COMPAS has only 7214 rows, so no larger sample of these data exists",
        evidence="DR decomposition of each score on the adapted covariates, 95% IF intervals (first repetition); on the adapted "
        "covariates cflib's transport removes these effects by construction",
    )
    return claims.rows(["C16", "C16b"])
