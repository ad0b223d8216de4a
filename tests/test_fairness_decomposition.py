"""Tests of SPM/PPM/iPPM, Theorem 1's decomposition, Corollary 1 and the transport (Plecko & Bareinboim)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cflib.data.fairness_sim import (
    A2_ATE,
    a2_oracle_predictor,
    appendix_a2_scm,
    linear_mediation_scm,
)
from cflib.fairness.adapt import (
    SequentialTransport,
    demean_by_group,
    projection_predictor,
    transport_graph,
)
from cflib.fairness.decomposition import (
    bin_scores,
    ippm,
    linear_pp_terms,
    pp_decomposition,
    pp_decomposition_counterfactual,
    ppm_table,
    spm,
)
from cflib.fairness.sfm import StandardFairnessModel


def test_three_term_identity_exact_on_a2():
    d = appendix_a2_scm(20_000, seed=0)
    # Potential predictor values need the potential mediators: recompute them from the SCM noise.
    u1 = d.w1 - d.x
    w1_1 = 1 + u1
    u2 = d.w2 - (d.w1**2 / 4 - d.x / 3)
    w2_1 = w1_1**2 / 4 - 1 / 3 + u2
    h1 = a2_oracle_predictor(1, w1_1, w2_1)
    h0 = a2_oracle_predictor(0, d.w1_x0, d.w2_x0)
    dec = pp_decomposition_counterfactual(d.x, d.y_x0, d.y_x1, h0, h1, bins=20)
    assert dec.identity_residual() < 1e-10
    # Z is empty and X is independent of the noise: Term III is sampling noise only.
    assert abs(dec.integrated["term_III"]) < 0.1
    assert dec.integrated["term_I"] > 1.4 and dec.integrated["term_II"] < -1.4


def test_estimated_decomposition_identity_and_true_counterfactual():
    d = appendix_a2_scm(5000, seed=1)
    yh = a2_oracle_predictor(d.x, d.w1, d.w2)
    dec = pp_decomposition(d.x, d.y, yh, d.y_x0, bins=20)
    t = dec.table
    assert np.allclose(t.term_I + t.term_II, t.ppm)
    assert dec.integrated["term_I"] == pytest.approx(1.70, abs=0.15)


def test_corollary1_linear_terms_constant_across_bins():
    a = {"a_xw": 0.8, "a_wy": 1.5, "a_xy": 0.5}
    cf = linear_pp_terms(**a)
    assert cf["term_I"] == pytest.approx(1.7) and cf["term_II"] == pytest.approx(-1.7)
    d = linear_mediation_scm(200_000, **a, seed=0)
    dec = pp_decomposition_counterfactual(d.x, d.y_x0, d.y_x1, d.y_hat_x0, d.y_hat_x1, bins=10)
    # Homogeneous effects: Term I equals the total effect in every bin, exactly.
    assert np.allclose(dec.table.term_I, 1.7)
    interior = dec.table.iloc[1:-1]
    assert np.all(np.abs(interior.term_II + 1.7) < 0.06)
    assert spm(d.x, d.y_hat) == pytest.approx(1.7, abs=0.02)


def test_ppm_bins_unique_values_and_ippm():
    x = np.array([0, 0, 1, 1, 0, 1])
    y = np.array([0, 1, 1, 1, 0, 0])
    s = np.array([0.1, 0.1, 0.1, 0.1, 0.9, 0.9])
    t = ppm_table(x, y, s, bins=10)
    assert len(t) == 2  # a binary score gets one bin per value
    assert t.ppm.tolist() == pytest.approx([1 - 0.5, 0 - 0])
    assert ippm(x, y, s, bins=10) == pytest.approx(0.25)
    idx, edges = bin_scores(np.arange(100.0), 4)
    assert np.bincount(idx).tolist() == [25, 25, 25, 25]


def test_prop2_sp_forced_predictor_violates_pp():
    d = linear_mediation_scm(100_000, seed=2)
    fair = demean_by_group(d.y_hat, d.x)
    assert abs(spm(d.x, fair)) < 1e-10
    assert abs(ippm(d.x, d.y, fair, bins=10)) > 1.0
    assert abs(ippm(d.x, d.y, d.y_hat, bins=10)) < 0.1


def test_transport_recovers_counterfactual_in_additive_noise_scm():
    d = appendix_a2_scm(4000, seed=3)
    parents = {"x": [], "w1": ["x"], "w2": ["x", "w1"], "y": ["x", "w1", "w2"]}
    ad = SequentialTransport(parents, "x", learner="hgb", seed=0).fit_transform(d[["x", "w1", "w2", "y"]])
    x0 = d.x == 0
    assert np.array_equal(ad.y[x0], d.y[x0])  # x0 units keep their values
    err = np.abs(ad.y[~x0] - d.y_x0[~x0])
    assert err.mean() < 0.3 and np.corrcoef(ad.y[~x0], d.y_x0[~x0])[0, 1] > 0.95


def test_transport_binary_keeps_law():
    rng = np.random.default_rng(0)
    n = 20_000
    x = (rng.random(n) < 0.5).astype(int)
    v = (rng.random(n) < 0.2 + 0.5 * x).astype(int)
    ad = SequentialTransport({"x": [], "v": ["x"]}, "x", learner="linear", seed=1).fit_transform(
        pd.DataFrame({"x": x, "v": v})
    )
    assert ad.v[x == 1].mean() == pytest.approx(0.2, abs=0.02)
    # Rank preservation: units with v = 0 under x1 stay 0 under x0 (the lower quantiles).
    assert (ad.v[(x == 1) & (v == 0)] == 0).all()


def test_transport_graph_and_projection_errors():
    sfm = StandardFairnessModel("x", ["z"], ["w"], "y")
    par, res = transport_graph(sfm, bn=set())
    assert par["z"] == ["x"] and res == []
    par, res = transport_graph(sfm, bn={"Z", "W"})
    assert par["z"] == [] and res == ["w"]
    df = pd.DataFrame({"x": [0, 1] * 20, "z": np.arange(40.0), "w": np.arange(40.0) % 7, "y": np.arange(40.0) % 2})
    with pytest.raises(ValueError, match="BN = \\{W\\}"):
        projection_predictor(df, sfm, {"W"})
    with pytest.raises(ValueError, match="direct effect"):
        transport_graph(sfm, bn={"DE"})
    with pytest.raises(ValueError, match="not a node"):
        SequentialTransport({"a": []}, "x")
    with pytest.raises(ValueError, match="binary|0 \\(x0\\)"):
        spm([0, 1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        spm([0, 1, 1], [1, 2])


def test_a2_closed_form_ate():
    d = appendix_a2_scm(400_000, seed=4)
    assert (d.y_x1 - d.y_x0).mean() == pytest.approx(A2_ATE, abs=0.01)
