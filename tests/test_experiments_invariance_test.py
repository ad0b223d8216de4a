"""Tests of the invariance-test chapter's experiments: the Table 1 and CNN zoos, the studies and claims_01..06 (Ma et al.)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from cflib import claims
from cflib.data.invariance_synthetic import draw_params, invariance_synthetic
from cflib.data.toy_cxr import DISEASES, GROUPS
from cflib.experiments import invariance_test as exp
from cflib.experiments.invariance_test import (
    TABLE1,
    audit_zoo,
    classifier_zoo,
    fit_zoo,
    make_classifier,
    simulate_cit_pvalues,
)
from cflib.stats.invariance import rejection_summary

from .conftest import verdicts

pytestmark = pytest.mark.usefixtures("fresh_claims")


R, NR, INC = "reproduced", "not reproduced", "undecided at this scale"


# ---------------------------------------------------------------- the Table 1 zoo and the simulations
def test_zoo_factory():
    zoo = classifier_zoo(seeds=range(3))
    assert len(zoo) == 30 and len({m.name for m in zoo}) == 30
    assert len(classifier_zoo(seeds=range(3), dedupe=True)) == sum(3 if TABLE1[k][2] else 1 for k in TABLE1)
    rf = make_classifier("forest", 1, scale=False)
    assert rf.get_params()["max_features"] == "sqrt" and rf.get_params()["n_estimators"] == 50
    with pytest.raises(ValueError, match="unknown classifier"):
        classifier_zoo(include=["resnet"])
    d = invariance_synthetic("linear", 300, seed=0)
    small = classifier_zoo(seeds=[0], include=["logreg", "tree5", "linear_svc"])
    table = fit_zoo(small, d.x, d.y)
    assert list(table["name"]) == [m.name for m in small]
    assert (table["train_acc"] > 0.5).all()
    with pytest.raises(ValueError, match="single class"):
        fit_zoo(small, d.x, np.zeros(300, dtype=int))
    t1 = exp.table1()
    assert list(t1["type"]) == list(TABLE1) and t1["seed matters"].sum() == sum(v[2] for v in TABLE1.values())


def test_audit_zoo_columns_and_ground_truth():
    d = invariance_synthetic("linear", 400, a_effect=0.2, seed=1)
    test = np.zeros(400, dtype=bool)
    test[:100] = True
    zoo = classifier_zoo(seeds=[0], include=["logreg", "tree5"])
    fit_zoo(zoo, d.x[~test], d.y[~test])
    table = audit_zoo(zoo, d, test, n_mc=1)
    assert len(table) == 2
    for col in ("eca", "cit_gen_p", "cit_reg_p", "dp_p", "eo_p", "cit_gen_log10p"):
        assert col in table
    m = zoo[0]
    assert table.loc[0, "eca"] == pytest.approx(np.mean(m.predict(d.x[test]) == m.predict(d.x_cf[test])))
    with pytest.raises(ValueError, match="boolean mask"):
        audit_zoo(zoo, d, np.arange(400))


def test_simulate_cit_pvalues_null_and_effect():
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    null = draw_params("linear", seed=2).with_effect(0.0)
    train = invariance_synthetic("linear", 1000, params=null, a_effect=0.0, seed=5)
    f = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(train.x, train.y)
    sim = simulate_cit_pvalues(null, f, 200, 5, forms=("generator",), seed=0)
    # Exact null: the generator form sees no flipped prediction and returns p = 1.
    assert (sim["p"] == 1.0).all() and (sim["eca"] == 1.0).all()
    assert exp.rejection_rate_by_form(sim).to_dict() == {"generator": 0.0}
    with pytest.raises(ValueError, match="forms"):
        simulate_cit_pvalues(null, f, 50, 2, forms=("bootstrap",))
    with pytest.raises(TypeError, match="predict"):
        simulate_cit_pvalues(null, object(), 50, 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_theorem42_enumeration_is_an_exact_identity(seed):
    exact = exp.theorem42_enumeration(np.random.default_rng(seed), p_a=0.3, n_z=6)
    assert exact["|Delta - E[(g-h)^2]|"] < 1e-15 and exact["E[(g - h)^2]"] > 0


def test_eca_identity_study_matches_the_closed_form():
    identity = exp.eca_identity_study(["linear"], 800, ["logreg", "tree5"], a_effect=0.3, seed=0)
    assert list(identity["model"]) == ["logreg", "tree5"]
    # Delta_hat estimates p(1-p)(1-ECA) on the same units: within Monte-Carlo error, and never negative.
    assert (identity["z"].abs() <= 4).all() and (identity["Delta_hat"] >= 0).all()


def test_power_table_and_parity_counterexamples():
    by_n = pd.DataFrame({"form": ["generator"] * 4 + ["regression"] * 4, "n": [50, 50, 400, 400] * 2,
                         "p": [0.5, 0.01, 0.001, 0.002, 0.9, 0.8, 0.04, 0.5]})
    table = exp.power_table(by_n, alpha=0.05)
    assert table.loc["generator"].tolist() == [0.5, 1.0] and table.loc["regression"].tolist() == [0.0, 0.5]
    counter = exp.parity_counterexamples(600, seed=0)
    assert counter.shape == (4, 4)
    content = counter.xs("content", level="model")
    assert (content["ECA"] == 1).all() and (content["CIT-LR p"] == 1).all()  # reads c1 only: invariant


# ---------------------------------------------------------------- the CNN zoo
def test_one_vs_rest_auc_matches_sklearn_with_ties():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 300)
    proba = np.round(rng.dirichlet(np.ones(3), 300) + 0.3 * np.eye(3)[y], 1)  # rounding makes ties
    auc = exp.one_vs_rest_auc(proba, y, names=list("abc"), n_boot=50, seed=0)
    for c, name in enumerate("abc"):
        assert auc.loc[name, "AUC"] == pytest.approx(roc_auc_score(y == c, proba[:, c]), abs=1e-12)
    assert (auc["sd"] > 0).all() and (auc["sd"] < 0.1).all()
    perfect = exp.one_vs_rest_auc(np.eye(3)[y], y, n_boot=10)
    assert (perfect["AUC"] == 1).all() and list(perfect.index) == [0, 1, 2]
    with pytest.raises(ValueError, match="proba"):
        exp.one_vs_rest_auc(proba[:10], y)


class _Reader:
    """A fake classifier of 4x4 images: reads pixel (0, 0) (the 'trace') or pixel (3, 3) (the 'content')."""

    def __init__(self, pixel):
        self.pixel = pixel

    def predict_proba(self, images):
        return np.asarray(images)[:, self.pixel[0], self.pixel[1]]

    def predict(self, images):
        return (self.predict_proba(images) > 0.5).astype(np.int64)


def test_audit_cnn_zoo_separates_trace_users_from_invariant_members():
    rng = np.random.default_rng(0)
    n = 400
    A = rng.integers(0, 2, n)
    D = np.column_stack([rng.integers(0, 2, n), rng.integers(0, 2, n), rng.integers(0, 2, n)])
    content = rng.random(n)

    def render(a):
        img = np.zeros((n, 4, 4))
        img[:, 0, 0] = a * 0.6 + 0.2 * rng.random(n)  # the trace of the group
        img[:, 3, 3] = content
        return img

    true_cf = [render(np.zeros(n)), render(np.ones(n))]
    images = np.where(A[:, None, None] == 1, true_cf[1], true_cf[0])
    zoo = [exp.CNNZooMember("content", "fake", "cardiomegaly", 0.0, 0, _Reader((3, 3))),
           exp.CNNZooMember("trace", "fake", "effusion", 1.0, 0, _Reader((0, 0)))]
    audit = exp.audit_cnn_zoo(zoo, images, A, D, {"true": true_cf}, true_cf)
    inv, use = audit.iloc[0], audit.iloc[1]
    assert inv["ECA"] == 1 and inv["p CIT-LR[true]"] == 1 and inv["mean d CIT-LR[true]"] == 0
    assert use["ECA"] == 0 and use["p CIT-LR[true]"] < 1e-10  # flips under every intervention
    assert use["p DP"] < 1e-10 and 0 <= inv["AUC A=0"] <= 1
    assert list(exp.zoo_table(zoo).columns) == ["name", "arch", "disease", "rho", "seed"]


def test_ldm_counterfactual_passes_the_diseases_only_to_models_conditioned_on_them():
    calls = []

    class Fake:
        def __init__(self, aux):
            self.config = SimpleNamespace(aux_classes=aux)

        def counterfactual(self, images, a, a_new, **kw):
            calls.append(kw)
            return images

    data = SimpleNamespace(images=np.arange(12.0).reshape(3, 2, 2), A=np.array([0, 1, 2]), D=np.eye(3))
    settings = {"data": data, "t_star": 600, "steps": 10, "guidance": 2.0, "aux_guidance": 3.0}
    out = exp.ldm_counterfactual(Fake(3), np.array([2, 0]), 1, **settings)
    np.testing.assert_array_equal(out, data.images[[2, 0]])
    np.testing.assert_array_equal(calls[-1]["aux"], np.eye(3)[[2, 0]])
    assert calls[-1]["aux_guidance"] == 3.0 and calls[-1]["t_star"] == 600
    exp.ldm_counterfactual(Fake(3), np.array([0]), 1, **{**settings, "aux_guidance": 1.0})
    assert calls[-1]["aux_guidance"] == 1.0  # the w_d = 1 ablation overrides the default
    exp.ldm_counterfactual(Fake(0), np.array([0]), 1, **settings)
    assert "aux" not in calls[-1] and "aux_guidance" not in calls[-1]


# ---------------------------------------------------------------- claims_01
def _results_01(gap=0.0, effect=0.1, z=(0.5, -1.0), delta=(0.02, 0.0)):
    exact = pd.Series({"E[(g - h)^2]": effect, "|Delta - E[(g-h)^2]|": gap})
    identity = pd.DataFrame({"z": z, "Delta_hat": delta, "p(1-p)(1-ECA)": [0.021, 0.0]})
    return {"exact": exact, "n_z": 6, "identity": identity, "n_identity": 1000}


def test_claims_01_verdicts():
    table = exp.claims_01(_results_01())
    assert verdicts(table) == {"C1": R, "C2": R, "C9": R}
    assert claims._STATE["values"]["identity_max_abs_z"] == 1.0
    assert claims._STATE["values"]["identity_max_abs_err"] == pytest.approx(0.001)
    claims.reset()
    assert verdicts(exp.claims_01(_results_01(gap=1e-9, z=(5.0, 0.0), delta=(-0.01, 0.0)))) == {"C1": NR, "C2": NR, "C9": NR}
    claims.reset()
    assert verdicts(exp.claims_01(_results_01(effect=0.0)))["C1"] == NR  # g = h: the identity says nothing
    with pytest.raises(ValueError, match="identity"):
        exp.claims_01({"exact": None, "n_z": 6, "n_identity": 10})
    with pytest.raises(TypeError, match="mapping"):
        exp.claims_01([1, 2])


# ---------------------------------------------------------------- claims_02
def _align(kinds, r_cit, sd_cit=0.5, reject=(0.0, 0.1, 0.9)):
    rows = []
    for kind in kinds:
        for label in exp.FIGURE2_TESTS.values():
            cit = label.startswith("CIT")
            rows.append({"dataset": kind, "test": label, "r": r_cit if cit else 0.1, "resid_sd": sd_cit if cit else 1.0,
                         "reject | ECA=1": reject[0], "reject | ECA>=0.95": reject[1], "reject | ECA<0.85": reject[2]})
    return pd.DataFrame(rows)


def test_claims_02_verdicts():
    kinds = [f"k{i}" for i in range(6)]
    base = {"kinds": kinds, "n_audited": 120, "a_effect": 0.1, "z_layer": "root"}
    table = exp.claims_02({**base, "align": _align(kinds, 0.8)})
    assert verdicts(table) == {"C3": R, "C3-regression": R, "C5": R, "C3b": R}
    assert "over 20 classifiers per dataset" in table.set_index("key").loc["C3", "evidence"]
    assert claims._STATE["values"]["median_r_cit_generator"] == 0.8
    claims.reset()
    bad = exp.claims_02({**base, "align": _align(kinds, -0.2, sd_cit=2.0, reject=(0.5, 0.6, 0.3))})
    assert verdicts(bad) == {"C3": NR, "C3-regression": NR, "C5": NR, "C3b": NR}
    claims.reset()  # fewer than the six datasets: no verdict
    assert set(verdicts(exp.claims_02({**base, "kinds": kinds[:2], "align": _align(kinds[:2], 0.8)})).values()) == {INC}
    claims.reset()  # no classifier in an ECA range: C3b cannot be judged
    assert verdicts(exp.claims_02({**base, "align": _align(kinds, 0.8, reject=(0.0, np.nan, 0.9))}))["C3b"] == INC


# ---------------------------------------------------------------- claims_03
def _counter(shortcut_dp):
    idx = pd.MultiIndex.from_product([["world 1 (association + label bias)", "world 2 (no association)"], ["content", "shortcut"]],
                                     names=["world", "model"])
    return pd.DataFrame({"ECA": [1.0, 0.6, 1.0, 0.6], "CIT-LR p": [1.0, 1e-8, 1.0, 1e-8], "DP p": [1e-5, 1e-4, 0.5, shortcut_dp],
                         "EO p": [1e-3, 1e-4, 0.5, 0.6]}, index=idx)


def _curves(null_p, power):
    forms = {"generator": null_p, "regression, h = marginal of g": null_p, "regression, h regressed (code)": null_p}
    calib = pd.DataFrame({f: rejection_summary(p, 0.05) for f, p in forms.items()}).T
    power_n = pd.DataFrame([power, power], index=["generator", "regression"], columns=[50, 800])
    return {"calib": calib, "power_n": power_n, "n_rep": 200, "n": 400, "n_rep_code": 200, "power_ns": [50, 800],
            "effect_for_n": 0.05, "n_rep_power": 30}


def test_claims_03_verdicts_with_and_without_curves():
    sweep = pd.DataFrame({"form": ["generator", "generator", "regression", "regression"], "p": [0.01, 0.2, 0.04, 0.06],
                          "eca": [0.9, 0.8, 0.9, 0.8]})
    base = {"sweep_sim": sweep, "alpha": 0.05, "n_world": 2000}
    table = exp.claims_03({**base, "counter": _counter(0.5)})  # the sweep: no curves
    assert verdicts(table) == {"C4a": R, "C4b": R}
    assert claims._STATE["values"]["power_generator"] == 0.5 and claims._STATE["values"]["mean_eca_sweep_point"] == pytest.approx(0.85)
    claims.reset()
    uniform = np.linspace(0.0025, 0.9975, 200)
    table = exp.claims_03({**base, "counter": _counter(0.5), **_curves(uniform, [0.1, 0.9])})
    assert verdicts(table) == {"C4a": R, "C4b": R, "C7": R, "C7-code": R, "C8": R}
    claims.reset()
    table = exp.claims_03({**base, "counter": _counter(1e-4), **_curves(np.full(200, 0.001), [0.1, 0.7])})
    assert verdicts(table) == {"C4a": R, "C4b": NR, "C7": NR, "C7-code": NR, "C8": NR}
    claims.reset()
    with pytest.raises(ValueError, match="power_n"):
        exp.claims_03({**base, "counter": _counter(0.5), "calib": _curves(uniform, [0, 1])["calib"]})


# ---------------------------------------------------------------- claims_04
def test_claims_04_verdicts():
    prevalence = pd.DataFrame({"p-value": [1e-6, 1e-3, 0.4]}, index=list(DISEASES))
    auc = pd.DataFrame({"AUC": [0.99, 0.97, 0.98], "sd": [0.01, 0.02, 0.01]}, index=list(GROUPS))
    assert verdicts(exp.claims_04({"auc": auc, "prevalence": prevalence, "n_test": 2000})) == {"C13": R, "C14": R}
    claims.reset()
    weak = {"auc": auc.assign(AUC=[0.99, 0.9, 0.98]), "prevalence": prevalence.assign(**{"p-value": [1e-6, 0.3, 0.4]}), "n_test": 50}
    assert verdicts(exp.claims_04(weak)) == {"C13": NR, "C14": NR}


# ---------------------------------------------------------------- claims_05
def _check(eff, present, l1):
    rows = {}
    for name in ("CLDM+D", "CLDM+D, w_d = 1", "CLDM"):
        for g in GROUPS:
            rows[(name, g)] = {"effectiveness %": eff, "disease kept %": 90.0,
                               **{f"present kept %, {d}": present for d in DISEASES},
                               "disease kept %, true cf": 95.0, "disease kept %, AE reconstruction": 93.0,
                               "disease-region L1 to truth": l1, "autoencoder floor": 2.0, "random patient": 20.0}
    return pd.DataFrame(rows).T


def _quality(eff, fd):
    names = ["VAE beta=1", "CLDM", "DLDM", "CLDM+D"]
    cols = pd.MultiIndex.from_tuples([("effectiveness %", "all"), ("FD", "all"), ("composition L1", "all")])
    return pd.DataFrame([[eff[n], fd[n], {"CLDM": 9.0}.get(n, 3.0)] for n in names], index=names, columns=cols)


def _results_05(eff=80.0, present=95.0, l1=5.0, order=True, sd=(4.0, 1.0), mi=(0.5, 0.1)):
    eff_q = {"VAE beta=1": 60.0, "CLDM": 80.0, "DLDM": 81.0, "CLDM+D": 85.0}
    fd = {"VAE beta=1": 3.0, "CLDM": 2.0, "DLDM": 1.9, "CLDM+D": 1.8} if order else {"VAE beta=1": 1.0, "CLDM": 2.0, "DLDM": 1.9, "CLDM+D": 1.8}
    variance = pd.DataFrame({"pixel sd across draws (0-255)": sd, "L1 to truth (0-255)": [5.0, 6.0], "effectiveness %": [80.0, 75.0]},
                            index=["t* = 600", "t* = 150"])
    mine = {"mi_before": SimpleNamespace(statistic=mi[0], pvalue=0.01), "mi_after": SimpleNamespace(statistic=mi[1], pvalue=0.2),
            "shift": np.full(10, 1e-3)}
    return {"judge_accuracy": pd.Series({"group predictor": 0.97}), "check": _check(eff, present, l1), "mine": mine,
            "quality": _quality(eff_q, fd), "variance": variance, "n_test": 150, "n_variance": 40, "t_star": 600,
            "mine_lambda": 1e-3, "mi_steps": 100}


def test_claims_05_verdicts():
    table = exp.claims_05(_results_05())
    assert verdicts(table) == {"DONE-1": R, "DONE-1-present": R, "DONE-1-paper-CLDM": R, "C10": INC, "C11": R, "C12": R}
    assert claims._STATE["values"]["apred_test_accuracy"] == 0.97
    assert set(claims._STATE["values"]) >= {"cf_check", "mi_before", "mi_after", "generation_quality", "variance_control"}
    claims.reset()
    bad = exp.claims_05(_results_05(eff=50.0, present=80.0, order=False, sd=(1.0, 2.0), mi=(0.5, 0.48)))
    assert verdicts(bad) == {"DONE-1": NR, "DONE-1-present": NR, "DONE-1-paper-CLDM": NR, "C10": NR, "C11": NR, "C12": NR}
    claims.reset()  # effective, but the disease region is no closer to the truth than a random patient's
    assert verdicts(exp.claims_05(_results_05(l1=15.0)))["DONE-1"] == NR


# ---------------------------------------------------------------- claims_06 and the audit tables
def _audit(p_invariant=0.5, n_users=3, sig_neg=0):
    rows = []
    for d in DISEASES:
        users = 0 if d == "consolidation" else n_users
        for i in range(6):
            use = i < users
            row = {"arch": "cnn-s", "rho": float(i), "seed": 0, "disease": d, "ECA": 0.7 + 0.01 * i if use else 1.0,
                   "t CIT-LR[CLDM+D]": 5.0 if use else 0.1, "mean d CIT-LR[CLDM+D]": -0.01 if i < sig_neg else 0.01}
            for key in exp.AUDIT_TESTS.values():
                row[f"p {key}"] = 1e-5 if use else (1e-4 if key in ("DP", "EO") else p_invariant)
            rows.append(row)
    audit = pd.DataFrame(rows)
    if sig_neg:
        audit["p CIT-LR[CLDM+D]"] = np.where(audit["mean d CIT-LR[CLDM+D]"] < 0, 1e-5, audit["p CIT-LR[CLDM+D]"])
    return audit


def _audit_align(r_cit):
    return pd.DataFrame({(label, d): {"r": r_cit if label.startswith("CIT") else 0.1, "resid_sd": 0.5 if label.startswith("CIT") else 2.0,
                                      "n": 6} for label in exp.AUDIT_TESTS for d in DISEASES}).T


def _results_06(audit, r_cit=0.9):
    return {"audit": audit, "rates": exp.rejection_rates(audit), "align": _audit_align(r_cit), "alpha": 0.05, "n_test": 300,
            "rhos": [0.0, 1.0], "n_zoo": len(audit)}


def test_rejection_rates_and_table12():
    audit = _audit()
    rates = exp.rejection_rates(audit)
    inv = rates.loc[("CIT-LR (CLDM+D)", "ignores trace (ECA >= 0.99)")]
    assert (inv["rejected"], inv["classifiers"], inv["rate"]) == (0, 12, 0.0)
    assert rates.loc[("DP", "ignores trace (ECA >= 0.99)"), "rate"] == 1.0 and inv["95% CI"] == "[0.00, 0.26]"
    table = exp.table12(audit)
    assert table.loc[("cnn-s", 0.0, 0), "cardiomegaly"] == "5.00 / 1e-05" and "t / p" not in audit
    assert table.loc[("cnn-s", 5.0, 0), "effusion ECA"] == 1.0


def test_claims_06_verdicts():
    table = exp.claims_06(_results_06(_audit()))
    assert verdicts(table) == {"DONE-2": R, "DONE-2-paper-CLDM": R, "DONE-2-oracle": R, "C6": R, "C5": R, "C9": R, "C15": R}
    assert "consolidation" not in table.set_index("key").loc["C5", "evidence"]  # no ECA spread: not informative
    assert claims._STATE["values"]["rejection_rates"]["CIT-LR (CLDM+D)|uses trace (ECA < 0.9)"] == 1.0
    claims.reset()
    bad = exp.claims_06(_results_06(_audit(p_invariant=0.001, sig_neg=3), r_cit=-0.5))
    assert verdicts(bad) == {"DONE-2": NR, "DONE-2-paper-CLDM": NR, "DONE-2-oracle": NR, "C6": NR, "C5": NR, "C9": NR, "C15": NR}
    claims.reset()  # only one trace user per disease: too few classifiers to judge the rejection rates
    few = verdicts(exp.claims_06(_results_06(_audit(n_users=1))))
    assert few["DONE-2"] == few["C6"] == INC
