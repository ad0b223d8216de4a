"""Tests of the parity-decomposition chapter's experiments: studies, tables and claims (Plecko & Bareinboim)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cflib import claims
from cflib.data.fairness_sim import A2_ATE, LinearSFMParams, compas_like_sfm, linear_sfm_truth
from cflib.experiments import parity as exp
from cflib.fairness.decomposition import linear_pp_terms
from cflib.fairness.sfm import StandardFairnessModel

from .conftest import verdicts

pytestmark = pytest.mark.usefixtures("fresh_claims")


# ---------------------------------------------------------------- studies
def test_coverage_study_keeps_the_identity_and_the_closed_forms():
    cov = exp.coverage_study(400, 2, learner="linear", n_boot=5, seed=1)
    truth = linear_sfm_truth(LinearSFMParams())
    assert len(cov) == 2 * 4 and (cov.residual < 1e-10).all()
    for m, t in truth.items():
        assert (cov.loc[cov.measure == m, "truth"] == t).all()
    table = exp.coverage_table(cov)
    assert list(table.index) == ["TV", "DE", "IE", "SE"] and table.coverage.between(0, 1).all()
    pd.testing.assert_frame_equal(cov, exp.coverage_study(400, 2, learner="linear", n_boot=5, seed=1))


def test_a2_terms_study_terms_add_up_and_fig8_helpers():
    integ, perbin = exp.a2_terms_study(
        [400], 2, bins=5, transport_learner=exp.make_transport_learner("quadratic"), seed=0
    )
    assert len(integ) == 2 and len(perbin) == 2 * 5
    np.testing.assert_allclose(integ.term_I + integ.term_II, integ.ppm, atol=1e-12)
    est, tru = exp.fig8_arrays(perbin, 400)
    assert est.shape == tru.shape == (2, 5)
    assert exp.fig8_within_1sd(tru, tru).all()
    assert not exp.fig8_within_1sd(np.array([[0.0], [0.2]]), np.array([[1.0], [1.0]])).any()  # 0.9 away, sd 0.1
    with pytest.raises(ValueError, match="sample sizes"):
        exp.fig8_arrays(perbin, 999)
    with pytest.raises(ValueError, match="quadratic"):
        exp.make_transport_learner("forest")


def test_three_terms_and_corollary1_match_the_closed_forms():
    three, ate, se = exp.a2_three_terms(20_000, bins=10, seed=0)
    assert three.identity_residual() < 1e-10 and abs(ate - A2_ATE) < 4 * se["ate"]
    assert (
        0 < se["term_III"] < 0.05 and abs(three.integrated["term_III"]) < 4 * se["term_III"]
    )  # Term III = 0 without Z
    coef = {"a_xw": 0.8, "a_wy": 1.5, "a_xy": 0.5}
    cor1, eff, noisy, lin = exp.corollary1(coef, 20_000, rng=np.random.default_rng(0), seed=0)
    cf = linear_pp_terms(**coef)
    assert list(cor1.iloc[[0, 1, 3], 0]) == [cf["term_I"], cf["term_II"], cf["spm"]]
    np.testing.assert_allclose(eff.table.term_I, cf["term_I"])  # Term I = TE in every bin, for any predictor
    np.testing.assert_allclose(noisy.table.term_I, cf["term_I"])
    assert (
        cor1.loc["Term I", "se (efficient)"] < 1e-12
        and (cor1.loc[["PPM", "SPM"], ["se (efficient)", "se (noisy)"]] > 0).all().all()
    )
    prop = exp.calibration_vs_parity(lin)
    assert abs(prop.loc["SP-forced Y_hat", "SPM"]) < 1e-10 and prop.loc["Y", "SPM - TV(Y)"] == 0.0
    assert prop.loc["SP-forced Y_hat", "se iPPM interior bins"] > 0
    cpp = exp.efficient_ctf_gap(4000, seed=0)
    assert list(cpp.index) == ["DE", "IE", "SE"] and (cpp.se > 0).all() and (cpp.estimate.abs() < 4 * cpp.se).all()


def test_discrete_identification_and_linearity():
    ident, exact, mc = exp.discrete_identification(200_000, seed=0)
    assert list(ident.index) == ["DE", "IE", "SE"]
    assert exact["SE_eq56_as_printed"] == pytest.approx(-exact["SE"])  # the erratum: Eq. 56 has the opposite sign
    assert float((ident.iloc[:, 0] - ident.iloc[:, 1]).abs().max()) < 0.01
    assert ((ident["Monte Carlo se"] > 0) & (ident["Monte Carlo se"] < 0.01)).all()
    from cflib.data.fairness_sim import linear_sfm

    data = linear_sfm(500, seed=0)
    assert exp.linearity_gap(data, StandardFairnessModel("x", ["z"], ["w"], "y"), seed=0) < 1e-9


def test_cookbook_and_pareto_studies_on_the_compas_like_sfm():
    study = exp.cookbook_study(1500, 1, learner="linear", seed=0)
    assert set(study.predictor) == {"np", "fp"} and set(study.effect) == {"DE", "IE", "SE"}
    assert study.groupby(["rep", "predictor"]).verdict.nunique().eq(1).all()
    _, truth = compas_like_sfm(20_000, seed=0, return_truth=True)
    rates, per_effect = exp.cookbook_summary(study, truth)
    assert set(rates.index) == {"np", "fp"} and rates.between(0, 1).all()
    assert per_effect.loc[("np", "DE"), "truth"] == truth["np"]["DE"]
    assert per_effect.loc[("fp", "SE"), "truth"] == truth["y"]["SE"] - truth["fp"]["SE"]

    data = compas_like_sfm(1200, seed=1)
    sfm = StandardFairnessModel("x", ["z1", "z2"], ["j", "p", "d"], "y")
    bn_sets = {"∅": set(), "Z, W": {"Z", "W"}}
    res, first = exp.pareto_study(
        data, sfm, bn_sets, 1, learner="linear", transport_learner="linear", n_folds=2, return_predictions=True
    )
    front = exp.pareto_front(res, bn_sets)
    assert list(front.index) == ["∅", "Z, W"] and (front.spm_sd == 0).all()  # one repetition: sd filled with 0
    kept = exp.effects_kept(
        first,
        data.rename(columns={"x": "nonwhite"}),
        StandardFairnessModel("nonwhite", ["z1", "z2"], ["j", "p", "d"], "y"),
        learner="linear",
        n_folds=2,
    )
    assert list(kept.index) == ["∅", "Z, W"] and set(kept.iloc[0]["_sd"]) == {"DE", "IE", "SE"}


# ---------------------------------------------------------------- claims_01
def results_01(**changes):
    ident = pd.DataFrame(
        {
            "Eqs. 54-55, Eq. 7 sign": [0.1, -0.05, -0.03],
            "Monte Carlo counterfactuals": [0.101, -0.051, -0.029],
            "Monte Carlo se": [0.0005] * 3,
            "Eq. 56 as printed": [np.nan, np.nan, 0.03],
        },
        index=["DE", "IE", "SE"],
    )
    r = {
        "residual": 1e-16,
        "max_residual": 1e-15,
        "reps": 400,
        "n_boot": 200,
        "n": 2000,
        "learner": "linear",
        "lin_gap": 1e-13,
        "coverage": pd.Series({"TV": 0.95, "DE": 0.94, "IE": 0.96, "SE": 0.95}),
        "identification": ident,
        "n_discrete": 1_000_000,
        "whitebox": 0.5,
        "dr_de": 0.52,
        "dr_de_se": 0.005,
    }
    r.update(changes)
    return r


def test_claims_01_reproduced_failing_and_undecided():
    t = exp.claims_01(results_01())
    assert verdicts(t) == dict.fromkeys(["C1", "C3", "C6", "C7", "C17"], "reproduced")
    assert list(t.columns)[:6] == ["key", "statement", "paper", "ours", "verdict", "evidence"]
    assert (t.quote != "").all() and t.interval.notna().all() and (t.rule != "").all()
    assert dict(zip(t.key, t.kind, strict=True)) == {
        "C1": "sanity check",
        "C3": "sanity check",
        "C6": "sanity check",
        "C7": "reproduction",
        "C17": "sanity check",
    }
    assert t.set_index("key").loc["C6", "interval"]["method"].startswith("95% Clopper-Pearson, 400 samples")
    bad_ident = results_01()["identification"].assign(**{"Monte Carlo counterfactuals": [0.12, -0.05, -0.03]})
    v = verdicts(
        exp.claims_01(
            results_01(
                max_residual=1e-6,
                lin_gap=1e-6,
                coverage=pd.Series({"TV": 0.8, "DE": 0.95}),
                identification=bad_ident,
                dr_de=0.7,
            )
        )
    )
    assert set(v.values()) == {"not reproduced"}
    # 3 of 3 samples covered: the Clopper-Pearson interval [0.29, 1] contains 0.90; no samples at all: no interval
    assert verdicts(exp.claims_01(results_01(reps=3)))["C6"] == "undecided at this scale"
    assert verdicts(exp.claims_01(results_01(reps=0)))["C6"] == "undecided at this scale"
    # a Monte Carlo standard error of 0.01 makes the interval wider than the ±0.003 band; zero variance decides on the point
    wide = results_01()["identification"].assign(**{"Monte Carlo se": [0.01] * 3})
    assert verdicts(exp.claims_01(results_01(identification=wide)))["C7"] == "undecided at this scale"
    exact_mc = results_01()["identification"].assign(**{"Monte Carlo se": [0.0] * 3})
    assert verdicts(exp.claims_01(results_01(identification=exact_mc)))["C7"] == "reproduced"
    assert verdicts(exp.claims_01(results_01(dr_de_se=0.05)))["C17"] == "undecided at this scale"


def test_claims_bad_results():
    with pytest.raises(ValueError, match="missing"):
        exp.claims_01({"residual": 0.0})
    with pytest.raises(TypeError, match="mapping"):
        exp.claims_02(None)
    with pytest.raises(ValueError, match="missing"):
        exp.claims_03({})
    with pytest.raises(ValueError, match="missing"):
        exp.claims_04({"front": None})


# ---------------------------------------------------------------- claims_02
def results_02(**changes):
    cf = linear_pp_terms(a_xw=0.8, a_wy=1.5, a_xy=0.5)
    cor1 = pd.DataFrame(
        {
            "closed form (efficient)": [cf["term_I"], cf["term_II"], 0.0, cf["spm"], 0.0],
            "efficient, interior bins": [cf["term_I"] + 0.01, cf["term_II"] - 0.01, 0.005, cf["spm"] + 0.01, 0.01],
            "efficient + N(0,1) noise": [cf["term_I"], -1.0, 0.6, cf["spm"] + 0.01, 0.5],
            "se (efficient)": [0.0, 0.002, 0.002, 0.002, 0.002],
            "se (noisy)": [0.0, 0.002, 0.01, 0.002, 0.01],
        },
        index=["Term I", "Term II (+III)", "PPM", "SPM", "mean |PPM|"],
    )
    eff = pd.DataFrame({"term_I": [cf["term_I"]] * 10, "ppm": [0.0] * 10})
    noisy = pd.DataFrame({"term_I": [cf["term_I"]] * 10, "ppm": [0.6, 0.5, -0.5, 0.4, -0.4, 0.4, 0.5, -0.5, 0.6, 0.7]})
    prop = pd.DataFrame(
        {
            "SPM": [1.7, 1.71, 0.0],
            "iPPM (10 bins)": [np.nan, 0.0, 1.5],
            "iPPM interior bins": [np.nan, 0.0, 1.4],
            "SPM - TV(Y)": [0.0, 0.01, -1.7],
            "se SPM - TV(Y)": [0.0, 0.005, 0.005],
            "se iPPM interior bins": [np.nan, 0.01, 0.01],
        },
        index=["Y", "efficient Y_hat", "SP-forced Y_hat"],
    )
    integ = pd.DataFrame(
        {"n": [1000, 1000, 10000, 10000], "term_I": [1.6, 1.7, 1.7, 1.72], "term_II": [-1.5, -1.58, -1.68, -1.699]}
    )
    integ["ppm"] = integ.term_I + integ.term_II
    u = (np.arange(20) - 9.5) ** 2 / 100  # U-shaped true Term I per bin, the same in every repetition (zero variance)
    r = {
        "three_residual": 1e-15,
        "term_III": 0.001,
        "se": {"term_III": 0.002, "ate": 0.001},
        "n_population": 400_000,
        "bins": 20,
        "cor1": cor1,
        "eff_table": eff,
        "noisy_table": noisy,
        "prop": prop,
        "cpp": pd.DataFrame({"estimate": [0.001] * 3, "se": [0.005] * 3}, index=["DE", "IE", "SE"]),
        "n_cpp": 100_000,
        "integ": integ,
        "ns": [1000, 10000],
        "within": np.ones(20, bool),
        "fig8_truth": np.tile(1.5 + u, (5, 1)),
        "ate": A2_ATE,
        "reps": 2,
    }
    r.update(changes)
    return r


def test_claims_02_reproduced_failing_and_undecided():
    t = exp.claims_02(results_02())
    assert set(verdicts(t).values()) == {"reproduced"}
    assert (t.quote != "").all() and t.interval.notna().all()
    assert set(t.key[t.kind == "sanity check"]) == {"C5", "C10", "C11"}
    r = results_02()
    r["cor1"] = r["cor1"].copy()
    r["cor1"].iloc[2, 1] = 0.05  # PPM of the efficient predictor off by 0.05
    r["noisy_table"] = r["noisy_table"].assign(term_I=r["noisy_table"].term_I + 0.1)
    r["prop"] = r["prop"].copy()
    r["prop"].loc["SP-forced Y_hat", "iPPM interior bins"] = 0.1
    r["cpp"] = r["cpp"].assign(estimate=[0.001, 0.2, 0.001])
    v = verdicts(exp.claims_02({**r, "term_III": 0.05, "fig8_truth": np.ones((5, 20)), "ate": 1.5}))
    assert v == dict.fromkeys(["C2", "C4", "C5", "C8", "C9", "C10", "C11", "C12"], "not reproduced") | {
        "C11": "reproduced"
    }
    # a Term III interval wider than ±0.02 is undecided, not a failure
    assert (
        verdicts(exp.claims_02(results_02(term_III=0.01, se={"term_III": 0.01, "ate": 0.001})))["C2"]
        == "undecided at this scale"
    )
    # one repetition per n: no t interval, no two-sample interval
    one = results_02()["integ"].groupby("n").head(1)
    v = verdicts(exp.claims_02(results_02(integ=one, reps=1)))
    assert v["C12"] == v["C8"] == "undecided at this scale"
    # |iPPM| that grows with n refutes Fig. 7's reading; an estimate off the truth fails C12 on its own
    grow = results_02()["integ"].assign(ppm=[0.01, 0.012, 0.1, 0.12])
    assert verdicts(exp.claims_02(results_02(integ=grow)))["C8"] == "not reproduced"
    assert verdicts(exp.claims_02(results_02(within=np.zeros(20, bool))))["C12"] == "not reproduced"
    # a repetition with an empty bin is left out of the U-shape; one repetition has no spread to compare with
    holes = results_02()["fig8_truth"].copy()
    holes[0, 0] = np.nan
    assert verdicts(exp.claims_02(results_02(fig8_truth=holes)))["C12"] == "reproduced"
    assert (
        verdicts(exp.claims_02(results_02(fig8_truth=holes[:1], within=np.zeros(20, bool))))["C12"]
        == "undecided at this scale"
    )
    assert (
        verdicts(exp.claims_02(results_02(cpp=r["cpp"].assign(estimate=0.0, se=0.05))))["C10"]
        == "undecided at this scale"
    )


# ---------------------------------------------------------------- claims_03
def results_03(np_verdict="FAIL", rates=None, reps_sim=20, tv_y=0.0864, fp_de=(-0.001, 0.003), np_de=(0.06, 0.01)):
    truth = {
        "y": {"TV": 0.08, "DE": 0.0, "IE": -0.04, "SE": -0.04},
        "np": {"TV": 0.16, "DE": 0.07, "IE": -0.06, "SE": -0.03},
        "fp": {"TV": 0.04, "DE": 0.0, "IE": 0.0, "SE": -0.0401},
    }
    truth_se = {o: {m: 0.0 if v == 0.0 else 0.001 for m, v in t.items()} for o, t in truth.items()} | {
        "fp - y": {"TV": 0.0005, "DE": 0.0, "IE": 0.0, "SE": 0.0005}
    }
    idx = pd.MultiIndex.from_product(
        [["Ŷ NP", "Ŷ FP", "Ŷ proj"], ["difference", "equivalence"]], names=["predictor", "rule"]
    )
    verdicts_table = pd.DataFrame({"DE": "pass", "IE": "pass", "SE": "pass", "Algorithm 1": "SUCCESS"}, index=idx)
    verdicts_table.loc[("Ŷ NP", "difference"), ["DE", "Algorithm 1"]] = ["FAIL", np_verdict]
    est = {
        ("Y", "DE"): (-0.007, 0.012),
        ("Y", "IE"): (-0.05, 0.006),
        ("Y", "SE"): (-0.03, 0.003),
        ("Ŷ NP", "DE"): np_de,
        ("Ŷ NP", "IE"): (-0.08, 0.008),
        ("Ŷ NP", "SE"): (-0.037, 0.008),
        ("Ŷ FP (adapted Z, W)", "DE"): fp_de,
        ("Ŷ FP (adapted Z, W)", "IE"): (0.0, 0.004),
        ("Ŷ FP (adapted Z, W)", "SE"): (-0.028, 0.002),
    }
    effects = pd.DataFrame(
        list(est.values()),
        columns=["estimate", "se"],
        index=pd.MultiIndex.from_tuples(list(est), names=["outcome", "measure"]),
    )
    return {
        "truth": truth,
        "truth_se": truth_se,
        "n_truth": 400_000,
        "rates": pd.Series(rates or {"np": 0.0, "fp": 1.0}),
        "reps_sim": reps_sim,
        "n_sim": 7214,
        "learner": "hgb",
        "n_folds": 5,
        "tv_y": tv_y,
        "tv_np": 0.1694,
        "effects": effects,
        "verdicts": verdicts_table,
        "margin": 0.01,
        "n_rows": 7214,
    }


def test_claims_03_reproduced_failing_and_undecided():
    t = exp.claims_03(results_03())
    assert set(verdicts(t).values()) == {"reproduced"}
    assert set(t.key[t.kind == "sanity check"]) == {"C13", "C14", "C15a"}
    assert (t.quote != "").all() and t.interval.notna().all()
    # the FP passes in 2 of 20 samples; a wrong TV; a significant FP direct effect; NP's direct effect negative
    v = verdicts(
        exp.claims_03(results_03(rates={"np": 0.0, "fp": 0.1}, tv_y=0.09, fp_de=(0.05, 0.005), np_de=(-0.02, 0.005)))
    )
    assert v["C14"] == v["C15a"] == v["C15b"] == v["C15c"] == "not reproduced" and v["C13"] == "reproduced"
    # one sample: [0.025, 1] contains 0.8; an FP interval wider than ±1pp: a zero effect is neither confirmed nor refuted, and the
    # estimate already reads every row of COMPAS, so C15c is not checkable here (issue 27), with its interval kept in the evidence
    t = exp.claims_03(results_03(reps_sim=1, fp_de=(0.0, 0.01))).set_index("key")
    assert t.loc["C14", "verdict"] == "undecided at this scale"
    c15c = t.loc["C15c"]
    assert c15c["verdict"] == "not checkable here" and c15c["interval"] is None and c15c["kind"] == "reproduction"
    assert (
        "7214 rows" in c15c["note"]
        and "no larger sample" in c15c["note"]
        and "+0.0000 [-0.0196, +0.0196]" in c15c["evidence"]
    )
    assert "not checkable here" in claims._STATE["claims"]["C15c"]["change"] and "undecided" in c15c["rule"]
    # NP's direct effect undecided: the same, whatever FP gives
    assert verdicts(exp.claims_03(results_03(np_de=(0.01, 0.01))))["C15c"] == "not checkable here"
    r = results_03()
    r["truth"] = {**r["truth"], "fp": {**r["truth"]["fp"], "SE": -0.05}}  # the oracle's SE 0.01 away from Y's
    assert verdicts(exp.claims_03(r))["C13"] == "not reproduced"


def test_compas_oracle_reads_z_only_and_matches_the_outcome_se():
    d = compas_like_sfm(3000, seed=0)
    p = exp.compas_fair_risk(d)
    assert p.shape == (3000,) and ((p > 0) & (p < 1)).all()
    # a function of Z alone: equal Z, equal risk, whatever X and the mediators
    twin = d.assign(x=1 - d.x, j=0, p=0, d=0)
    np.testing.assert_array_equal(exp.compas_fair_risk(twin), p)
    truth, se = exp.compas_truth(20_000, seed=0, chunks=4)
    assert truth["fp"]["DE"] == truth["fp"]["IE"] == 0.0 and se["fp"]["DE"] == 0.0
    assert (
        abs(truth["fp"]["SE"] - truth["y"]["SE"]) < 4 * se["fp - y"]["SE"] + 0.002
    )  # E[Y_x1 | x] = E[E[Y | x1, Z] | x]


# ---------------------------------------------------------------- claims_04
def results_04(spm=(0.1, 0.2, 0.25, 0.3), reps=5, se_kept=0.0, sd=0.003):
    labels = ["∅", "Z", "W", "Z, W"]
    ippm = [0.3, 0.2, 0.15, 0.05]
    noise = np.linspace(-0.01, 0.01, reps)
    study = pd.DataFrame(
        [
            {"bn": b, "rep": r, "spm": s + noise[r], "ippm": i - noise[r]}
            for b, s, i in zip(labels, spm, ippm, strict=True)
            for r in range(reps)
        ]
    )
    front = exp.pareto_front(study, labels)
    sds = dict.fromkeys(("DE", "IE", "SE"), sd)
    kept = pd.DataFrame(
        {"_se": [se_kept, 0.03, 0.0, 0.03], "_ie": [0.0, 0.0, -0.05, -0.05], "_sd": [sds] * 4}, index=labels
    )
    return {"study": study, "front": front, "kept": kept, "reps": reps, "quantile": 0.68, "bins": 10}


def test_claims_04_reproduced_failing_and_undecided():
    t = exp.claims_04(results_04())
    assert verdicts(t) == {"C16": "reproduced", "C16b": "reproduced"} and list(t.kind) == [
        "reproduction",
        "sanity check",
    ]
    v = verdicts(
        exp.claims_04(results_04(spm=(0.1, 0.5, 0.25, 0.3), se_kept=0.05))
    )  # Z far outside [∅, {Z, W}]; SE kept at BN = ∅
    assert v == {"C16": "not reproduced", "C16b": "not reproduced"}
    v = verdicts(exp.claims_04(results_04(reps=1, sd=0.02)))  # one repetition: no t interval; intervals wider than ±1pp
    assert v == {"C16": "undecided at this scale", "C16b": "undecided at this scale"}
