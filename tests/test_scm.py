"""Causal graphs and SCMs: structure, interventions, and Pearl's axioms holding exactly."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from cflib.scm import SCM, CausalGraph, Mechanism, fit_intensity_mechanism, morpho_attributes


def test_graph_order_descendants_and_mutilation():
    g = CausalGraph({"a": [], "b": ["a"], "c": ["a", "b"], "d": ["c"]})
    order = g.topological_order()
    assert all(order.index(p) < order.index(n) for p, n in g.edges())
    assert g.descendants("a") == {"b", "c", "d"} and g.ancestors("d") == {"a", "b", "c"}
    assert g.children("a") == ("b", "c")
    m = g.mutilate(["c"])
    assert m.parents("c") == () and m.parents("b") == ("a",)
    assert g.parents("c") == ("a", "b")  # the original is untouched


def test_graph_rejects_cycles_unknown_parents_and_nodes():
    with pytest.raises(ValueError, match="cycle: .*a.*b"):
        CausalGraph({"a": ["b"], "b": ["a"]})
    with pytest.raises(ValueError, match="'z' of 'a' is not a node"):
        CausalGraph({"a": ["z"]})
    with pytest.raises(ValueError, match="self-loop"):
        CausalGraph({"a": ["a"]})
    with pytest.raises(ValueError, match="unknown node"):
        CausalGraph({"a": []}).mutilate(["q"])


def test_morpho_sample_matches_the_mechanisms():
    scm = morpho_attributes()
    v, u = scm.sample(50_000, seed=1, return_noise=True)
    # Gamma(shape 10, rate 5) has mean 2 and variance 0.4: t = 0.5 + g.
    assert abs(v["t"].mean() - 2.5) < 0.01 and abs(v["t"].var() - 0.4) < 0.01
    np.testing.assert_allclose(v["i"], 64 + 191 * expit(2 * (v["t"] - 2.5) + 0.5 * u["i"]))
    np.testing.assert_allclose(scm.abduct(v)["i"], u["i"], atol=1e-8)


def test_axioms_hold_exactly_and_counterfactual_has_closed_form():
    scm = morpho_attributes()
    v, u = scm.sample(1000, seed=2, return_noise=True)
    null = scm.counterfactual(v, {"t": v["t"]})
    np.testing.assert_allclose(null["i"], v["i"], rtol=0, atol=1e-9)  # composition
    cf = scm.counterfactual(v, {"t": lambda f: f["t"] + 1})
    np.testing.assert_allclose(cf["t"], v["t"] + 1)  # effectiveness
    np.testing.assert_allclose(cf["i"], 64 + 191 * expit(2 * (v["t"] + 1 - 2.5) + 0.5 * u["i"]))
    back = scm.counterfactual(cf, {"t": v["t"]})
    np.testing.assert_allclose(back["i"], v["i"], atol=1e-9)  # reversibility
    # Intervening on i leaves t alone (t is not a descendant of i).
    np.testing.assert_array_equal(scm.counterfactual(v, {"i": 100.0})["t"], v["t"])


def test_do_returns_mutilated_model():
    scm = morpho_attributes()
    d = scm.do({"t": 3.0})
    s = d.sample(100, seed=0)
    assert np.all(s["t"] == 3.0) and d.graph.parents("t") == ()
    with pytest.raises(ValueError, match="scalar"):
        scm.do({"t": [1.0, 2.0]})


def test_fitted_mechanism_recovers_parameters():
    v = morpho_attributes().sample(20_000, seed=3)
    _, params = fit_intensity_mechanism(v["t"], v["i"])
    assert params["slope"] == pytest.approx(2.0, abs=0.05)
    assert params["center"] == pytest.approx(2.5, abs=0.05)
    assert params["noise_scale"] == pytest.approx(0.5, abs=0.02)


def test_bad_input_is_named():
    scm = morpho_attributes()
    v = scm.sample(10, seed=0)
    with pytest.raises(ValueError, match="cannot intervene on 'x'"):
        scm.counterfactual(v, {"x": 1.0})
    with pytest.raises(ValueError, match="lacks node"):
        scm.counterfactual({"t": v["t"]}, {"t": 1.0})
    with pytest.raises(ValueError, match="length 10"):
        scm.counterfactual(v, {"t": np.ones(3)})
    with pytest.raises(ValueError, match="NaN"):
        scm.counterfactual({"t": np.full(10, np.nan), "i": v["i"]}, {"t": 1.0})
    with pytest.raises(ValueError, match="no mechanism for node"):
        SCM(CausalGraph({"a": [], "b": ["a"]}), {"a": scm.mechanisms["t"]})
    no_inverse = SCM(CausalGraph({"a": []}), {"a": Mechanism(lambda pa, u: u, lambda r, n: r.normal(size=n))})
    with pytest.raises(ValueError, match="no inverse"):
        no_inverse.abduct({"a": np.zeros(3)})
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        scm.sample(0)
    with pytest.raises(ValueError, match="at least 3"):
        fit_intensity_mechanism(np.ones(2), np.full(2, 100.0))
