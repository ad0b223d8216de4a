"""Tests of the SFM, the doubly robust Ctf-DE/IE/SE estimators and Algorithm 1 (Plecko & Bareinboim)."""

from __future__ import annotations

import numpy as np
import pytest

from cflib.data.fairness_sim import (
    LinearSFMParams,
    compas_like_sfm,
    ctf_truth,
    discrete_sfm,
    discrete_sfm_joint,
    linear_sfm,
    linear_sfm_counterfactuals,
    linear_sfm_truth,
)
from cflib.fairness.effects import MEASURES, ctf_effects, identify_discrete, whitebox_direct_effect
from cflib.fairness.parity import causal_predictive_parity, cookbook_population
from cflib.fairness.sfm import StandardFairnessModel, bn_effects

SFM = StandardFairnessModel("x", ["z"], ["w"], "y")


@pytest.fixture(scope="module")
def lin():
    return linear_sfm(3000, seed=11)


def test_tv_identity_exact_in_estimate_and_every_bootstrap(lin):
    res = ctf_effects(lin, SFM, ["y", "y_hat"], learner="linear", n_boot=300, seed=1)
    for r in res.values():
        assert r.decomposition_residual() < 1e-10
        assert r.draws.shape == (300, 4)
        tv = (
            lin.y[lin.x == 1].mean() - lin.y[lin.x == 0].mean()
            if r.outcome == "y"
            else lin.y_hat[lin.x == 1].mean() - lin.y_hat[lin.x == 0].mean()
        )
        assert r.estimate["TV"] == pytest.approx(tv, abs=1e-12)


def test_linear_sfm_estimates_within_3se_of_closed_forms(lin):
    truth = linear_sfm_truth()
    r = ctf_effects(lin, SFM, learner="linear", seed=2)
    for m in MEASURES:
        assert abs(r.estimate[m] - truth[m]) < 3 * r.se[m], (m, r.estimate[m], truth[m], r.se[m])


def test_closed_forms_match_monte_carlo_counterfactuals():
    p = LinearSFMParams(a_xw=0.7, b_z=-0.4, mu1=1.5)
    t = linear_sfm_truth(p)
    assert t["TV"] == pytest.approx(t["DE"] - t["IE"] - t["SE"])
    # Potential outcomes by hand (shared noise) for a large sample.
    rng = np.random.default_rng(0)
    n = 400_000
    x = (rng.random(n) < p.p).astype(int)
    z = p.mu0 + (p.mu1 - p.mu0) * x + rng.standard_normal(n)
    uw, uy = rng.standard_normal((2, n))
    w = lambda xx: p.a_xw * xx + p.a_zw * z + uw  # noqa: E731
    y = lambda xx, ww: p.b_x * xx + p.b_w * ww + p.b_z * z + uy  # noqa: E731
    mc = ctf_truth(x, y(0, w(0)), y(1, w(1)), y(1, w(0)))
    for m in MEASURES:
        assert mc[m] == pytest.approx(t[m], abs=0.02)


def test_linearity_paired_difference_exact_with_linear_learners(lin):
    d = lin.assign(diff=lin.y - lin.y_hat)
    r = ctf_effects(d, SFM, ["y", "y_hat", "diff"], learner="linear", seed=3)
    for m in MEASURES:
        assert r["diff"].estimate[m] == pytest.approx(r["y"].estimate[m] - r["y_hat"].estimate[m], abs=1e-9)


def test_whitebox_direct_effect_agrees_with_dr(lin):
    f = lambda df: 0.5 * df["x"] + 1.0 * df["w"] + 0.8 * df["z"]  # noqa: E731  (= y_hat)
    wb = whitebox_direct_effect(lin, SFM, f)
    assert wb == pytest.approx(0.5, abs=1e-12)
    r = ctf_effects(lin, SFM, "y_hat", learner="linear", seed=4)
    assert abs(r.estimate["DE"] - wb) < 2 * r.se["DE"] + 1e-6


def test_empty_z_gives_zero_spurious_effect():
    df = linear_sfm(1000, seed=5)
    r = ctf_effects(df, StandardFairnessModel("x", [], ["w", "z"], "y"), learner="linear", seed=0)
    assert r.estimate["SE"] == pytest.approx(0.0, abs=1e-12)


def test_identification_formulas_and_eq56_erratum():
    exact = identify_discrete(discrete_sfm_joint())
    d = discrete_sfm(400_000, seed=0)
    mc = ctf_truth(
        d.x.values, d.y_x0.values.astype(float), d.y_x1.values.astype(float), d.y_x1_wx0.values.astype(float)
    )
    for m in ("DE", "IE", "SE"):
        assert exact[m] == pytest.approx(mc[m], abs=0.006)
    assert exact["SE_eq56_as_printed"] == pytest.approx(-exact["SE"])
    assert exact["TV"] == pytest.approx(exact["DE"] - exact["IE"] - exact["SE"], abs=1e-12)
    # Closed form of the default discrete SFM: DE = b_x, IE = -b_w a_x.
    assert exact["DE"] == pytest.approx(0.15)
    assert exact["IE"] == pytest.approx(-0.35 * 0.3)


def test_same_seed_same_numbers(lin):
    a = ctf_effects(lin, SFM, learner="linear", n_boot=20, seed=7)
    b = ctf_effects(lin, SFM, learner="linear", n_boot=20, seed=7)
    assert a.estimate == b.estimate
    np.testing.assert_array_equal(a.draws, b.draws)


def test_summary_and_plot(lin):
    import matplotlib.pyplot as plt

    r = ctf_effects(lin, SFM, learner="linear", n_boot=50, ci="percentile", seed=8)
    s = r.summary()
    assert list(s.index) == list(MEASURES)
    assert (s.ci_low <= s.estimate).all() and (s.estimate <= s.ci_high).all()
    ax = r.plot()
    assert ax is not None
    plt.close("all")


@pytest.mark.parametrize(
    "mutate, exc, text",
    [
        (lambda d: d.assign(x=d.x + (d.index % 3 == 0)), ValueError, "binary"),
        (lambda d: d.drop(columns="w"), ValueError, "not in data"),
        (lambda d: d.assign(z=np.where(d.index == 3, np.nan, d.z)), ValueError, "missing values"),
        (lambda d: d.assign(y=d.y.astype(str)), TypeError, "numeric"),
    ],
)
def test_bad_data(lin, mutate, exc, text):
    with pytest.raises(exc, match=text):
        ctf_effects(mutate(lin.copy()), SFM, learner="linear")


def test_bad_arguments(lin):
    with pytest.raises(TypeError, match="fit"):
        ctf_effects(lin, SFM, learner=object())
    with pytest.raises(ValueError, match="learner"):
        ctf_effects(lin, SFM, learner="xgb")
    with pytest.raises(ValueError, match="n_folds"):
        ctf_effects(lin, SFM, learner="linear", n_folds=1)
    with pytest.raises(ValueError, match="n_boot"):
        ctf_effects(lin, SFM, learner="linear", ci="percentile")
    with pytest.raises(TypeError, match="StandardFairnessModel"):
        ctf_effects(lin, {"x": "x"})
    with pytest.raises(TypeError, match="list of column names"):
        StandardFairnessModel("x", "z", ["w"], "y")
    with pytest.raises(ValueError, match="one role"):
        StandardFairnessModel("x", ["z"], ["z"], "y")
    with pytest.raises(ValueError, match="x0= and x1="):
        StandardFairnessModel("x", ["z"], ["w"], "y").validate(lin.assign(x=np.where(lin.x == 1, "a", "b")))
    with pytest.raises(TypeError, match="string"):
        bn_effects("Z")
    with pytest.raises(ValueError, match="unknown"):
        bn_effects({"Q"})


def test_string_levels_are_accepted(lin):
    d = lin.assign(g=np.where(lin.x == 1, "B", "A"))
    sfm = StandardFairnessModel("g", ["z"], ["w"], "y", x0="A", x1="B")
    a = ctf_effects(d, sfm, learner="linear", seed=0)
    b = ctf_effects(lin, SFM, learner="linear", seed=0)
    assert a.estimate == pytest.approx(b.estimate)


def test_cookbook_on_linear_sfm_efficient_predictor_passes_cpp(lin):
    # y_hat = E[Y | x, z, w] has the same Ctf measures as Y: with BN = all, every CPP check passes.
    res = causal_predictive_parity(lin, SFM, "y", "y_hat", {"DE", "IE", "SE"}, learner="linear", seed=0)
    assert res.passed
    # With BN = {} it must fail: its effects are far from zero.
    res0 = causal_predictive_parity(lin, SFM, "y", "y_hat", set(), learner="linear", seed=0)
    assert not res0.passed and res0.verdict == "FAIL"
    assert set(res0.summary().index) == {"DE", "IE", "SE"}
    with pytest.raises(ValueError, match="margin"):
        causal_predictive_parity(lin, SFM, "y", "y_hat", set(), test="equivalence")


def test_cookbook_population_compas_like():
    _, truth = compas_like_sfm(200_000, seed=0, return_truth=True)
    # Y itself passes only when every effect is in BN; under BN = {Z} its own indirect effect fails.
    assert cookbook_population(truth["y"], truth["y"], {"DE", "IE", "SE"}).passed.all()
    y_z = cookbook_population(truth["y"], truth["y"], {"Z"}, atol=0.005)
    assert y_z.loc["DE", "passed"] and not y_z.loc["IE", "passed"]
    np_ = cookbook_population(truth["y"], truth["np"], {"Z"}, atol=0.005)
    assert not np_.loc["DE", "passed"] and not np_.loc["IE", "passed"]
    fp = cookbook_population(truth["y"], truth["fp"], {"Z"}, atol=0.005)
    assert fp.loc["DE", "passed"] and fp.loc["IE", "passed"] and fp.loc["SE", "passed"]


@pytest.mark.slow
def test_ci_coverage_linear_sfm():
    """95% intervals cover the closed forms in >= 90% of 100 repetitions (n = 1000)."""
    truth = linear_sfm_truth()
    hits = np.zeros(4)
    for rep in range(100):
        r = ctf_effects(linear_sfm(1000, seed=1000 + rep), SFM, learner="linear", seed=rep)
        hits += [r.ci[m][0] <= truth[m] <= r.ci[m][1] for m in MEASURES]
    assert (hits / 100 >= 0.90).all(), hits


def test_ctf_effects_returns_one_result_for_a_name_and_a_dict_for_a_sequence(lin):
    from cflib.fairness.effects import EffectEstimates

    one = ctf_effects(lin, SFM, "y_hat", learner="linear", n_folds=2, seed=0)
    default = ctf_effects(lin, SFM, learner="linear", n_folds=2, seed=0)
    several = ctf_effects(lin, SFM, ("y", "y_hat"), learner="linear", n_folds=2, seed=0)
    assert isinstance(one, EffectEstimates) and one.outcome == "y_hat" and default.outcome == "y"
    assert isinstance(several, dict) and list(several) == ["y", "y_hat"]
    assert several["y_hat"].estimate == one.estimate and several["y"].estimate == default.estimate
    with pytest.raises(TypeError, match="outcome must be a column name"):
        ctf_effects(lin, SFM, 3, learner="linear")


def test_sfm_roles_take_any_sequence_of_names_and_keep_a_tuple():
    sfm = StandardFairnessModel("x", ["z"], ("w",), "y")
    assert sfm.z == ("z",) and sfm.w == ("w",) and sfm == SFM
    assert bn_effects(frozenset({"Z"})) == bn_effects(["SE"]) == frozenset({"SE"})


def test_linear_sfm_counterfactuals_are_the_same_units_and_give_the_closed_forms():
    """The same rows as linear_sfm; consistency (Y = Y_x where X = x); the Monte Carlo measures are the closed forms."""
    p = LinearSFMParams(a_xw=0.7, b_x=-0.3, mu1=0.4, p=0.3, b_z=1.2)
    cf = linear_sfm_counterfactuals(200_000, p, seed=1)
    d = linear_sfm(200_000, p, seed=1)
    np.testing.assert_array_equal(cf[["x", "z", "w", "y"]].to_numpy(), d[["x", "z", "w", "y"]].to_numpy())
    x1 = cf.x.to_numpy() == 1
    np.testing.assert_allclose(np.where(x1, cf.y_x1, cf.y_x0), cf.y, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.where(x1, cf.w_x1, cf.w_x0), cf.w, rtol=0, atol=1e-12)
    mc = ctf_truth(cf.x.to_numpy(), cf.y_x0.to_numpy(), cf.y_x1.to_numpy(), cf.y_x1_w0.to_numpy())
    t = linear_sfm_truth(p)
    # DE and IE are the same for every unit (no interactions); SE and TV carry the sample's Z.
    assert mc["DE"] == pytest.approx(t["DE"], abs=1e-12) and mc["IE"] == pytest.approx(t["IE"], abs=1e-12)
    assert mc["SE"] == pytest.approx(t["SE"], abs=0.02) and mc["TV"] == pytest.approx(t["TV"], abs=0.02)
