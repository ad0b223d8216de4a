"""Claims of the synthetic notebooks 01, 02, 03 and 07: one function per notebook.

The helpers and the paper's words they share with :mod:`.claims_images` are in :mod:`.decisions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import claims
from ... import verdicts as vd
from .calibration_power import NULL_FORMS
from .decisions import (
    HIGH,
    HIGH_ECA,
    IN_SUM,
    MOST,
    NOTES_SIGN,
    OWN,
    OWN_CHANGE,
    alignment_parts,
    count,
    difference_interval,
    join_parts,
    undecided_note,
)
from .tables import alignment_pivot, rejection_rate_by_form

_FIG2_WORDS = "of our statistical test are correlated with ECA, as opposed to DP and EO."


def _any_part(parts: Mapping[str, vd.Decision], what: str) -> vd.Decision:
    """A claim that needs one of its parts ("in some world"): reproduced if any part is, not reproduced if all are not."""
    verdict_list = [d.verdict for d in parts.values()]
    verdict = (
        vd.REPRODUCED
        if vd.REPRODUCED in verdict_list
        else vd.NOT_REPRODUCED
        if verdict_list and all(v == vd.NOT_REPRODUCED for v in verdict_list)
        else vd.UNDECIDED
    )
    key = next((k for k, d in parts.items() if d.verdict == verdict), next(iter(parts)))
    detail = "; ".join(f"{k}: {d.verdict}" for k, d in parts.items())
    return vd.Decision(
        verdict,
        parts[key].interval,
        f"{what}: reproduced if any part is, not reproduced if every part is not, otherwise undecided. Parts: {detail}",
    )


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C1, C2 and C9 of notebook 01 (Theorem 4.2 and the ECA identity).

    Parameters
    ----------
    results : mapping
        ``exact`` (:func:`theorem42_enumeration`), ``n_z``, ``identity`` (:func:`eca_identity_study`)
        and ``n_identity``.

    Returns
    -------
    pandas.DataFrame
        The claims table rows of this notebook.
    """
    exact, n_z, identity, n_identity = claims.require(results, ["exact", "n_z", "identity", "n_identity"])
    thm_gap = claims.record("thm42_enumeration_gap", float(exact["|Delta - E[(g-h)^2]|"]))
    max_abs_err = claims.record("identity_max_abs_err", float(identity["diff"].abs().max()))
    min_delta = claims.record("identity_min_delta", float(identity["Delta_hat"].min()))
    n_test = n_identity // 2
    c1 = join_parts(
        {
            "residual": vd.decide_below(
                vd.exact(thm_gap, method="exact enumeration, floating-point residual"),
                1e-12,
                inclusive=True,
                quantity="|Delta - E[(g-h)^2]|",
            ),
            "g differs from h": vd.decide_above(
                vd.exact(float(exact["E[(g - h)^2]"]), method="exact enumeration"),
                0.0,
                quantity="E[(g-h)^2] of a g that reads A",
            ),
        },
        "the identity and its 'only if' side",
    )
    claims.claim(
        "C1",
        "Theorem 4.2: E[Yhat g(A,Z)] - E[Yhat h(Z)] = E[(g - h)^2] >= 0, zero iff g = h.",
        paper="identity (proof in App. D)",
        ours=thm_gap,
        decision=c1,
        quote="Intuitively, Theorem 4.2 follows from the law of total variance",
        source="Sec. 4.2, Theorem 4.2 (proof in App. D)",
        evidence=f"exact enumeration on a 2 x {n_z} discrete law: |Delta - E[(g-h)^2]| = {thm_gap:.1e}; the only error is "
        "floating-point rounding, so the band is 1e-12.",
        kind="reproduction",
    )
    # C2: per-unit differences e_i = y_i (g_i - h_i) - p(1-p) 1[flip_i] have mean Delta_hat - p(1-p)(1-ECA);
    # a row with no variance (no unit moved) is decided on its point, never on an infinite z.
    tol = 1 / np.sqrt(n_test)
    rows = {
        f"{r.dataset}/{r.model}": vd.decide_within(
            vd.normal_interval(r.diff, r.diff_se, method=f"standard error over {n_test} test units"),
            -tol,
            tol,
            quantity="Delta_hat - p(1-p)(1-ECA)",
        )
        for r in identity.itertuples()
    }
    c2 = join_parts(rows, f"every classifier x dataset ({len(rows)})")
    claims.claim(
        "C2",
        "For binary A independent of Z and hard labels, Delta = p(1-p)(1-ECA) (derived in the notes).",
        paper="derivation (notes 2.3); notes' check: 0.0717 vs 0.0719",
        ours=f"max |Delta_hat - p(1-p)(1-ECA)| = {max_abs_err:.2g}",
        decision=c2,
        quote="With binary A (P(A=1)=p), A ⊥ Z, Z = all exogenous content, a deterministic DGP and hard-label f: Δ = p(1−p)(1 − ECA).",
        source="notes §2.3 and §5 item 2: a derivation, not in the paper",
        kind=OWN,
        change="the book's own finding, not a reproduction (issue 27): the paper states no link between its functional and ECA; the "
        "identity is the notes' derivation, so it is no longer counted among the paper's claims. The rule is unchanged: each row's "
        "interval inside the notes' Monte-Carlo tolerance 1/sqrt(n) (it replaced |z| <= 4, under which a row whose per-unit "
        "differences were all zero had a standard error of 0 and z = inf)",
        evidence=f"{len(identity)} classifiers x datasets, {n_test} test units each; per row the 95% normal interval of the mean "
        f"per-unit difference y(g - h) - p(1-p) 1[flip] must lie in +-1/sqrt(n) = +-{tol:.3f} (the notes' tolerance).",
    )
    c9 = join_parts(
        {
            f"{r.dataset}/{r.model}": vd.decide_above(
                vd.normal_interval(r.Delta_hat, r.Delta_se, method=f"standard error over {n_test} test units"),
                0.0,
                inclusive=True,
                quantity="Delta_hat",
            )
            for r in identity.itertuples()
        },
        f"every classifier x dataset ({len(identity)})",
    )
    claims.claim(
        "C9",
        "The paired mean difference of yhat*g - yhat*h is non-negative up to noise.",
        paper=">= 0 (Delta = E[(g-h)^2])",
        ours=min_delta,
        decision=c9,
        quote=NOTES_SIGN,
        source="notes §5 item 9, not in the paper",
        kind=OWN,
        change=OWN_CHANGE.format(what="the sign check is the notes' item 9, a property a sound test must have"),
        evidence="Delta_hat of every classifier and dataset with the oracle generator, each with its 95% normal interval "
        "(a classifier no intervention moves has d = 0 exactly).",
        note=undecided_note(c9, 0.0, n_test, "test units", "notebooks/params/full.yaml runs 20000"),
    )
    return claims.rows(["C1", "C2", "C9"])


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C3, C3-regression and C3b of notebook 02 (Figure 2).

    Correlations are bootstrapped over the classifiers of each dataset (the panels of Figure 2). The
    standardised residual spread of each test, ``sqrt(1 - r^2)``, is recorded (``mean_spread_gap_generator``)
    but decides nothing apart: it is a function of ``|r|``, so "lower variance" read on a comparable scale is
    C3's correlation read without its sign (issue 27 merged the former claim C5 into C3).

    Parameters
    ----------
    results : mapping
        ``results`` (:func:`audit_synthetic_zoos`), ``align`` (:func:`figure2_alignment`), ``kinds``,
        ``a_effect``, ``z_layer`` and ``seed``.

    Returns
    -------
    pandas.DataFrame
    """
    audit, align, kinds, a_effect, z_layer, seed = claims.require(
        results, ["results", "align", "kinds", "a_effect", "z_layer", "seed"]
    )
    align_r = alignment_pivot(align, "r", kinds)
    for key, col in (
        ("r_cit_generator", "CIT-LR (generator)"),
        ("r_cit_regression", "CIT-LR (regression)"),
        ("r_dp", "DP"),
        ("r_eo", "EO"),
    ):
        claims.record(key, align_r[col].round(3).to_dict())
    claims.record("median_r_cit_generator", float(align_r["CIT-LR (generator)"].median()))
    claims.record("median_r_cit_regression", float(align_r["CIT-LR (regression)"].median()))
    panels = dict(list(audit.groupby("dataset", sort=False)))
    per = len(audit) // max(1, len(panels))
    where = "notebooks/params/full.yaml runs 10 seeds (the paper's 100 classifiers per dataset)"
    change = (
        "the old rule counted datasets (r > 0 in >= 5/6, above DP and EO in >= 4/6) without an interval; the paper's "
        "sentence is about Figure 2 as a whole, so the quantity is now the mean over the six panels, bootstrapped over "
        "classifiers"
    )
    merged = (
        "; the former claim C5 is merged into C3: C5 applied the Fig. 3 sentence ('higher correlation and lower "
        "variance') to Fig. 2 with the spread measured as sqrt(1 - r^2), the residual sd in units of each test's own sd, which "
        "is a function of |r|, so C5 was C3 read without its sign and counted one finding twice. C3 keeps the paper's words "
        "about Fig. 2 and its rule; the spread difference is reported in its evidence"
    )
    ivs = {
        form: alignment_parts(panels, "eca", f"{form}_log10p", ["dp_log10p", "eo_log10p"], seed=seed)
        for form in ("cit_gen", "cit_reg")
    }
    spread = ivs["cit_gen"]["spread gap"]
    claims.record("mean_spread_gap_generator", float(spread.estimate))
    shown = (
        f"{spread.estimate:.3f} [{spread.low:.3f}, {spread.high:.3f}]"
        if spread.defined
        else f"undefined ({spread.method})"
    )
    spread_text = (
        " The paper's 'lower variance' (said of Fig. 3) adds nothing on a comparable scale: the mean standardised "
        f"spread sqrt(1 - r^2) of CIT-LR minus the smaller of DP's and EO's is {shown}, a function of the same |r| "
        "(it was claim C5)."
    )
    for key, form, statement in (
        ("C3", "cit_gen", "Fig. 2: CIT-LR log p rises with ECA, more than for DP and EO (generator form of Alg. 1)."),
        (
            "C3-regression",
            "cit_reg",
            "The same alignment with the regression form of the authors' synthetic code (g, h fitted to yhat on the known Z).",
        ),
    ):
        iv = ivs[form]
        d = join_parts(
            {
                "r > 0": vd.decide_above(iv["r"], 0.0, quantity="mean r(ECA, log10 p) of CIT-LR"),
                "r above DP's and EO's": vd.decide_above(iv["r gap"], 0.0, quantity="mean of r_CIT - max(r_DP, r_EO)"),
            },
            "correlated with ECA and more than DP and EO",
        )
        claims.claim(
            key,
            statement,
            paper="qualitative: CIT-LR aligns with ECA, DP/EO do not",
            ours={"mean r": round(iv["r"].estimate, 3), "mean r_CIT - max(r_DP, r_EO)": round(iv["r gap"].estimate, 3)},
            decision=d,
            quote=_FIG2_WORDS,
            change=change + (merged if key == "C3" else ""),
            source="Sec. 6.2, Fig. 2"
            + ("" if key == "C3" else " (the regression form is the authors' code, notes §3.1.4)"),
            evidence=f"Pearson r of ECA vs log10 p in each of {len(panels)} datasets ({per} classifiers each), a_effect = {a_effect}"
            + (f", g per group and h = A-marginal of g on Z = {z_layer}." if key != "C3" else "." + spread_text),
            note=undecided_note(d, 0.0, per, "classifiers per dataset", where),
            kind="reproduction",
        )
    high = audit["eca"] >= HIGH
    rej = audit["cit_gen_p"] < 0.05
    iv_hi = vd.binomial_interval(int(rej[high].sum()), int(high.sum()), unit=f"classifiers with ECA >= {HIGH}")
    iv_lo = vd.binomial_interval(int(rej[~high].sum()), int((~high).sum()), unit=f"classifiers with ECA < {HIGH}")
    d3b = join_parts(
        {
            "high ECA not rejected": vd.decide_below(iv_hi, MOST, quantity=f"rejection rate at ECA >= {HIGH}"),
            "low ECA rejected": vd.decide_above(iv_lo, MOST, quantity=f"rejection rate at ECA < {HIGH}"),
        },
        "both ECA ranges",
    )
    claims.claim(
        "C3b",
        f"Most classifiers with high ECA (>= {HIGH}) are not rejected at 0.05; most with low ECA are rejected (generator form).",
        paper="qualitative",
        ours={
            f"reject | ECA >= {HIGH}": round(iv_hi.estimate, 3) if iv_hi.defined else None,
            f"reject | ECA < {HIGH}": round(iv_lo.estimate, 3) if iv_lo.defined else None,
        },
        decision=d3b,
        quote=IN_SUM + " ... " + HIGH_ECA,
        source="Sec. 6.3 (said of Figs. 3-4; the notes §5 item 3 apply it to Fig. 2)",
        change="the book's own finding, not a reproduction (issue 38): the paper says this of its real-data Figs. 3-4 "
        "(trained classifiers on images); here it is applied to the book's synthetic oracle of Fig. 2, where a consistent "
        f"test rightly rejects high-ECA classifiers. Before: the old ranges (ECA >= 0.95, < 0.85) and bars (<= 25%, >= 75%) "
        f"were not the paper's; its only number for a high ECA is {HIGH}, and 'rejects' / 'does not' are read as most "
        "(more than half) of each range",
        evidence=f"CIT-LR (generator) p < 0.05 pooled over the {len(panels)} datasets. A consistent test detects a few % of "
        "flipped predictions, so rejecting a classifier with ECA 0.9 is correct behaviour; the paper's pattern needs a less "
        "powerful test.",
        note=undecided_note(d3b, MOST, len(audit), "classifiers", where),
        kind=OWN,
    )
    return claims.rows(["C3", "C3-regression", "C3b"])


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C4a, C4b (parity counterexamples) and, with the curves, C7, C7-code and C8 of notebook 03.

    Also records the sweep point's power and mean ECA.

    Parameters
    ----------
    results : mapping
        ``sweep_sim`` (p-values of the sweep point), ``counter`` (:func:`parity_counterexamples`), ``alpha``,
        ``n_world``; with the curves also ``calib`` (:func:`calibration_study`), ``power_n`` (:func:`power_table`),
        ``n_rep``, ``n``, ``n_rep_code``, ``power_ns``, ``effect_for_n`` and ``n_rep_power``.

    Returns
    -------
    pandas.DataFrame
    """
    sweep_sim, counter, alpha, n_world = claims.require(results, ["sweep_sim", "counter", "alpha", "n_world"])
    power_point = rejection_rate_by_form(sweep_sim, alpha=alpha)
    claims.record("power_generator", float(power_point["generator"]))
    claims.record("power_regression", float(power_point["regression"]))
    claims.record("mean_eca_sweep_point", float(sweep_sim["eca"].mean()))
    ce = counter.reset_index()
    _claim_parity_rejects_invariant(
        ce[(ce["model"] == "content") & ce["world"].str.startswith("world 1")].iloc[0], alpha, n_world
    )
    _claim_parity_accepts_shortcut(ce[ce["model"] == "shortcut"], alpha, n_world)
    if results.get("calib") is None:  # the sweep runs without the curves
        return claims.rows(["C4a", "C4b"])
    calib, power_n, n_rep, n, n_rep_code, power_ns, effect_for_n, n_rep_power = claims.require(
        results, ["calib", "power_n", "n_rep", "n", "n_rep_code", "power_ns", "effect_for_n", "n_rep_power"]
    )
    _claims_calibration(calib, alpha, n_rep, n_rep_code, n)
    _claim_power_rises(power_n, power_ns, effect_for_n, n_rep_power)
    return claims.rows(["C4a", "C4b", "C7", "C7-code", "C8"])


def _world_p_value(p: float, name: str, n_world: int) -> vd.Interval:
    """A parity world's p-value as an exact quantity (the world is fixed: no sampling error to carry)."""
    return vd.exact(float(p), method=f"p-value of the {name} test on {n_world} units")


def _claim_parity_rejects_invariant(inv: pd.Series, alpha: float, n_world: int) -> None:
    """C4a: DP and EO reject the invariant classifier (ECA = 1) of a world where P(Y | A) differs; CIT-LR does not."""
    c4a = join_parts(
        {
            "ECA = 1": vd.decide_within(
                vd.exact(float(inv["ECA"]), method=f"ECA over {n_world} units"), 1.0, 1.0, quantity="ECA"
            ),
            "DP rejects": vd.decide_below(_world_p_value(inv["DP p"], "DP", n_world), alpha, quantity="DP p"),
            "EO rejects": vd.decide_below(_world_p_value(inv["EO p"], "EO", n_world), alpha, quantity="EO p"),
            "CIT-LR does not": vd.decide_above(
                _world_p_value(inv["CIT-LR p"], "CIT-LR", n_world), alpha, inclusive=True, quantity="CIT-LR p"
            ),
        },
        "all four",
    )
    claims.claim(
        "C4a",
        "An invariant classifier (ECA = 1) is rejected by DP and EO when P(Y | A) differs across groups.",
        paper="qualitative (Sec. 6.3: DP and EO reject almost all high-ECA models)",
        ours=f"ECA = {inv['ECA']:.2f}; DP p = {inv['DP p']:.1e}, EO p = {inv['EO p']:.1e}, CIT-LR p = {inv['CIT-LR p']:.2g}",
        decision=c4a,
        kind="sanity check",
        quote="Similarly, we observe that DP and EO are misaligned with CI as in Def. 4.1.",
        source="Sec. 6.2 (the notes §5 item 4a: demonstrable by construction)",
        evidence=f"parity_world with prevalence (0.2, 0.45) and group-1 false positives 0.25, n = {n_world}; Welch tests at {alpha}. "
        "A world built for the purpose: a sanity check of the tests, not a reproduction.",
    )


def _claim_parity_accepts_shortcut(sc: pd.DataFrame, alpha: float, n_world: int) -> None:
    """C4b: in some world DP and EO accept the shortcut classifier (ECA < 0.8) that CIT-LR rejects."""
    worlds = {
        r.world.split(" (")[0]: join_parts(
            {
                "ECA < 0.8": vd.decide_below(
                    vd.exact(float(r.ECA), method=f"ECA over {n_world} units"), 0.8, quantity="ECA"
                ),
                "DP accepts": vd.decide_above(
                    _world_p_value(r._5, "DP", n_world), alpha, inclusive=True, quantity="DP p"
                ),
                "EO accepts": vd.decide_above(
                    _world_p_value(r._6, "EO", n_world), alpha, inclusive=True, quantity="EO p"
                ),
                "CIT-LR rejects": vd.decide_below(_world_p_value(r._4, "CIT-LR", n_world), alpha, quantity="CIT-LR p"),
            },
            "all four",
        )
        for r in sc.itertuples()
    }
    claims.claim(
        "C4b",
        "A clearly non-invariant classifier (ECA << 1) can pass DP and EO.",
        paper="qualitative (Sec. 6.3)",
        ours="; ".join(
            f"{r.world.split(' (')[0]}: ECA = {r.ECA:.2f}, DP p = {r._5:.2g}, EO p = {r._6:.2g}, CIT-LR p = {r._4:.1e}"
            for r in sc.itertuples()
        ),
        decision=_any_part(worlds, "some world"),
        kind="sanity check",
        quote="Similarly, we observe that DP and EO are misaligned with CI as in Def. 4.1.",
        source="Sec. 6.2 (the notes §5 item 4b: demonstrable by construction)",
        evidence="the shortcut classifier 1[c1 + 1.5 sign(t) c2 > 0]: group rates equal by symmetry of c2, so DP and EO accept by "
        "construction in the world without association.",
    )


def _claims_calibration(calib: pd.DataFrame, alpha: float, n_rep: int, n_rep_code: int, n: int) -> None:
    """C7 and C7-code: under no effect both forms of CIT-LR hold their level with uniform p-values; records the sizes."""
    marg, code = calib.loc[NULL_FORMS[0]], calib.loc[NULL_FORMS[1]]
    claims.record("size_marginal_h", float(marg["rate"]))
    claims.record("size_regressed_h", float(code["rate"]))
    claims.record("size_generator", float(calib.loc["generator", "rate"]))
    calib_words = (
        "the CIT-LR rejection rate at α=0.05 should lie within a binomial confidence interval of 0.05 over replications"
    )
    for key, row, reps, statement in (
        (
            "C7",
            marg,
            n_rep,
            "Under no effect, CIT-LR (h = A-marginal of g) holds its level: rejection rate at most 2 alpha, p-values uniform.",
        ),
        ("C7-code", code, n_rep_code, "The same calibration for the authors' variant with a separately regressed h."),
    ):
        iv = vd.binomial_interval(int(row["k"]), int(row["n"]), unit="null replications")
        d = join_parts(
            {
                "size": vd.decide_below(iv, 2 * alpha, inclusive=True, quantity="rejection rate under no effect"),
                "uniform p": vd.decide_above(
                    vd.exact(float(row["ks_pvalue"]), method="Kolmogorov-Smirnov p-value of uniform p"),
                    0.01,
                    quantity="KS p",
                ),
            },
            "level and uniformity",
        )
        claims.claim(
            key,
            statement,
            paper="not reported (property a sound test must have)",
            ours=f"{row['rate']:.3f} ({row['k']}/{row['n']}); KS p = {row['ks_pvalue']:.2g}",
            decision=d,
            quote=calib_words,
            source="notes §5 item 7, not in the paper",
            kind=OWN,
            change=OWN_CHANGE.format(what="the paper reports no calibration; the level check is the notes' item 7")
            + "; before, "
            "the old rule asked the rate to lie in the 99% acceptance interval around alpha, replaced by an interval "
            f"of the rate at most 2 alpha = {2 * alpha:g} (the tolerance of the chapter's notebook 07), so a conservative test holds its level",
            evidence=f"{reps} replications of n = {n}, a_effect = 0; KS test of uniform p > 0.01.",
            note=undecided_note(d, 2 * alpha, reps, "replications", "notebooks/params/full.yaml runs 1000"),
        )


def _claim_power_rises(power_n: pd.DataFrame, power_ns: Sequence[int], effect_for_n: float, n_rep_power: int) -> None:
    """C8 (the book's own): the generator form's power rises with n and reaches 0.8."""
    gen_n = power_n.loc["generator"]
    reg_n = power_n.loc["regression"]
    k_first, k_last = count(100 * gen_n.iloc[0], n_rep_power), count(100 * gen_n.iloc[-1], n_rep_power)
    c8 = join_parts(
        {
            "rises": vd.decide_above(
                difference_interval(k_last, n_rep_power, k_first, n_rep_power, unit="replications"),
                0.0,
                quantity=f"power at n = {power_ns[-1]} minus power at n = {power_ns[0]}",
            ),
            "reaches 0.8": vd.decide_above(
                vd.binomial_interval(k_last, n_rep_power, unit="replications"),
                0.8,
                quantity=f"power at n = {power_ns[-1]}",
            ),
        },
        "rises and reaches 0.8",
    )
    claims.claim(
        "C8",
        "For a fixed non-invariant classifier, power rises with n (and with the strength of the effect).",
        paper="not reported (property a sound test must have)",
        ours=f"generator form {gen_n.iloc[0]:.2f} -> {gen_n.iloc[-1]:.2f}, regression form {reg_n.iloc[0]:.2f} -> {reg_n.iloc[-1]:.2f} for n {power_ns[0]} -> {power_ns[-1]}",
        decision=c8,
        quote="For a fixed non-invariant f (ECA < 1), the rejection rate → 1 as the test-set size N grows.",
        source="notes §5 item 8, not in the paper",
        kind=OWN,
        change=OWN_CHANGE.format(what="the paper reports no power curve; the power check is the notes' item 8"),
        evidence=f"{n_rep_power} replications per n at a_effect = {effect_for_n}; the generator form (Alg. 1) decides, the "
        "regression form is reported alongside.",
        note=undecided_note(c8, 0.8, n_rep_power, "replications", "notebooks/params/full.yaml runs 200"),
    )


def claims_07(study: pd.DataFrame, *, alpha: float = 0.05, power_target: float = 0.9) -> pd.DataFrame:
    """Claims D1-D4 of notebook 07 (CIT-LR when Z depends on A).

    Parameters
    ----------
    study : pandas.DataFrame
        Output of :func:`cflib.experiments.calibration.cit_lr_dependence_study` with the default and the paper's forms.
    alpha : float
        Level of the tests.
    power_target : float
        Power the default form must reach against the largest effect at the largest dependence.

    Returns
    -------
    pandas.DataFrame
    """
    if not isinstance(study, pd.DataFrame):
        raise TypeError(f"study must be the DataFrame of cit_lr_dependence_study, got {type(study).__name__}")
    default, paper = "debiased, joint g (default)", "marginalize, separate g (paper)"
    null = study[study["a_effect"] == 0]
    eff, s_max, s_min = (
        float(study["a_effect"].max()),
        float(study["dependence"].max()),
        float(null["dependence"].min()),
    )
    full = "notebooks/params/full.yaml runs 1000 replications"

    def row(form, dep, a_eff):
        return study[(study["form"] == form) & (study["dependence"] == dep) & (study["a_effect"] == a_eff)].iloc[0]

    def rate(r):
        return vd.binomial_interval(int(r.rejections), int(r.n_rep), unit="replications")

    def show(r):
        return f"{r.rejections}/{r.n_rep}"

    adjustment = "is assumed to form a valid adjustment set."
    d_null = null[null["form"] == default]
    claims.record(
        "level_default", {f"{s:g}": float(v) for s, v in zip(d_null["dependence"], d_null["rate"], strict=True)}
    )
    level_change = (
        f"the old rule asked every 99% interval to contain alpha and every rate to be at most {2 * alpha:g}; holding the "
        f"level is now a rate whose interval lies at or below {2 * alpha:g}"
    )
    d1 = join_parts(
        {
            f"s={r.dependence:g}": vd.decide_below(
                rate(r), 2 * alpha, inclusive=True, quantity="rejection rate of an invariant classifier"
            )
            for r in d_null.itertuples()
        },
        "every dependence",
    )
    n_rep = int(study["n_rep"].iloc[0])
    claims.claim(
        "D1",
        "The default CIT-LR holds its level (rejection rate at most 2 alpha) for every strength of the Z-A dependence (Z a valid adjustment set)",
        paper="Theorem 4.2 needs a valid adjustment set; Alg. 1 assumes Z independent of A",
        ours="; ".join(f"s={r.dependence:g}: {show(r)}" for r in d_null.itertuples()),
        decision=d1,
        quote=adjustment,
        source="Sec. 4.2, after Theorem 4.2 (the dependence study is the book's, not the paper's)",
        kind=OWN,
        change=OWN_CHANGE.format(
            what="the paper assumes a valid adjustment set and never varies the dependence; the default form is cflib's"
        )
        + "; before, "
        + level_change,
        evidence=f"rejections of an invariant classifier at alpha = {alpha}.",
        note=undecided_note(d1, 2 * alpha, n_rep, "replications per dependence", full),
    )
    r = row(default, s_max, eff)
    claims.record("power_default", float(r.rate))
    d2 = vd.decide_above(rate(r), power_target, inclusive=True, quantity="power of the default form")
    claims.claim(
        "D2",
        f"The default CIT-LR keeps power >= {power_target} against a classifier that uses A when Z depends on A",
        paper="not studied",
        ours=f"effect {eff:g}, s={s_max:g}: {show(r)}",
        decision=d2,
        quote="For a fixed non-invariant f (ECA < 1), the rejection rate → 1 as the test-set size N grows.",
        source="notes §5 item 8, not in the paper",
        evidence="rate over replications.",
        kind=OWN,
        change=OWN_CHANGE.format(what="the paper does not study a Z that depends on A; the default form is cflib's"),
        note=undecided_note(d2, power_target, n_rep, "replications", full),
    )
    p0, p1 = row(paper, s_min, 0.0), row(paper, s_max, 0.0)
    claims.record("level_paper_form", {"independent": float(p0.rate), "dependent": float(p1.rate)})
    marginal = "Equivalent and cheaper, because Z ⊥ A: ĥ(z) = Σ_a P(a) ĝ(a,z)."
    d3 = vd.decide_below(rate(p0), 2 * alpha, inclusive=True, quantity="rejection rate of an invariant classifier")
    claims.claim(
        "D3",
        "With Z independent of A (the paper's setting), the A-marginal h of Alg. 1 holds its level (rate at most 2 alpha)",
        paper="assumed (Lemma D.3)",
        ours=show(p0),
        decision=d3,
        quote=marginal,
        source="notes §7.1 item 4, after Lemma D.3",
        kind=OWN,
        change=OWN_CHANGE.format(what="the paper assumes the marginal h; its level is the notes' check")
        + "; before, "
        + level_change,
        evidence=f"rejections of an invariant classifier at alpha = {alpha}, s = {s_min:g}.",
        note=undecided_note(d3, 2 * alpha, n_rep, "replications", full),
    )
    d4 = vd.decide_above(rate(p1), alpha, quantity="rejection rate of an invariant classifier")
    claims.claim(
        "D4",
        "Once Z depends on A the A-marginal h rejects an invariant classifier above alpha (why the default changed)",
        paper="not stated (the paper assumes Z independent of A)",
        ours=f"s={s_max:g}: {show(p1)}",
        decision=d4,
        quote=marginal,
        source="notes §7.1 item 4: the marginal h needs Z independent of A",
        kind=OWN,
        change=OWN_CHANGE.format(
            what="the paper assumes Z independent of A; the failure under dependence is the notes' and the book's"
        ),
        evidence=f"rejections of an invariant classifier at alpha = {alpha}, s = {s_max:g}.",
        note=undecided_note(d4, alpha, n_rep, "replications", full),
    )
    return claims.rows(["D1", "D2", "D3", "D4"])
