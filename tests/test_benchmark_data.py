"""MorphoSynth and SmileyFaces: the synthetic stand-ins of the benchmark chapter and their true counterfactuals."""

import numpy as np
import pytest
from scipy import stats

from cflib.data.morphosynth import encode_parents, make_morphosynth, set_intensity, set_thickness
from cflib.data.smileyfaces import make_smileyfaces


@pytest.fixture(scope="module")
def ms():
    return make_morphosynth(300, 16, seed=3)


def test_morphosynth_shapes_ranges_and_determinism(ms):
    assert ms.x.shape == (300, 1, 16, 16) and ms.x.dtype == np.float32
    assert ms.x.min() >= 0 and ms.x.max() <= 255
    assert set(np.unique(ms.d)) <= set(range(10))
    again = make_morphosynth(300, 16, seed=3)
    assert again.fingerprint() == ms.fingerprint()
    assert make_morphosynth(300, 16, seed=4).fingerprint() != ms.fingerprint()


def test_morphosynth_attribute_mechanisms_are_deepscm():
    # i = 64 + 191 sigmoid(2 (t - 2.5) + 0.5 eps): logit-scale residuals are N(0, 0.5^2).
    ds = make_morphosynth(2000, 16, seed=0)
    y = np.log((ds.i - 64) / (255 - ds.i))
    resid = y - 2 * (ds.t - 2.5)
    assert abs(resid.std() - 0.5) < 0.03
    assert abs((ds.t - 0.5).mean() - 2.0) < 0.05  # Gamma(10, rate 5) has mean 2


def test_null_intervention_reproduces_the_image(ms):
    cf = ms.true_counterfactual({})
    np.testing.assert_array_equal(cf["x"], ms.x)
    cf = ms.true_counterfactual({"t": ms.t, "d": ms.d})
    np.testing.assert_allclose(cf["x"], ms.x, atol=1e-3)


def test_graph_mutilation_in_true_counterfactuals(ms):
    do_t = ms.true_counterfactual({"t": 5.0})
    assert np.all(do_t["i"] > ms.i - 1e-9) and np.mean(np.abs(do_t["i"] - ms.i)) > 1  # t -> i: intensity moves
    do_i = ms.true_counterfactual({"i": 100.0})
    np.testing.assert_array_equal(do_i["t"], ms.t)  # i does not cause t
    do_d = ms.true_counterfactual({"d": (ms.d + 1) % 10})
    np.testing.assert_array_equal(do_d["t"], ms.t)
    np.testing.assert_array_equal(do_d["i"], ms.i)


def test_thickness_adds_ink_and_intensity_sets_the_plateau(ms):
    thin = ms.true_counterfactual({"t": 1.5, "i": 200.0})["x"]
    thick = ms.true_counterfactual({"t": 5.0, "i": 200.0})["x"]
    assert np.all(thick.reshape(300, -1).sum(1) > thin.reshape(300, -1).sum(1))
    # a thick stroke has a plateau exactly at the intensity
    np.testing.assert_allclose(thick.reshape(300, -1).max(1), 200.0, rtol=1e-6)


def test_set_thickness_and_intensity_closed_forms():
    dist = np.array([[[0.0, 1.0, 2.0, 3.0]]])
    np.testing.assert_allclose(set_thickness(dist, 2.0), [[[1.0, 0.5, 0.0, 0.0]]])
    np.testing.assert_allclose(set_intensity(np.array([[[1.0, 0.5]]]), 100.0), [[[100.0, 50.0]]])


def test_encode_parents():
    pa = encode_parents(np.array([0.876, 6.256]), np.array([66.6, 254.9]), np.array([3, 7]))
    np.testing.assert_allclose(pa[:, :2], [[-1, -1], [1, 1]], atol=1e-6)
    assert pa[0, 2 + 3] == 1 and pa[1, 2 + 7] == 1 and pa.shape == (2, 12)


def test_morphosynth_bad_input(ms):
    with pytest.raises(ValueError, match="cannot intervene on 'x'"):
        ms.true_counterfactual({"x": 1.0})
    with pytest.raises(ValueError, match="length 300"):
        ms.true_counterfactual({"t": np.ones(3)})
    with pytest.raises(ValueError, match="n must be a positive integer"):
        make_morphosynth(0)
    with pytest.raises(ValueError, match="digits in 0..9"):
        ms.true_counterfactual({"d": 12})


def test_smileyfaces_prevalence_independence_and_counterfactuals():
    ds = make_smileyfaces(4000, 16, seed=1)
    assert ds.x.shape == (4000, 3, 16, 16) and ds.x.min() >= 0 and ds.x.max() <= 1
    # prevalences inside 99.9 % binomial intervals
    for v, p in ((ds.s, 0.48), (ds.e, 0.07)):
        lo, hi = stats.binom.interval(0.999, len(v), p)
        assert lo <= v.sum() <= hi
    assert stats.chi2_contingency(np.histogram2d(ds.s, ds.e, bins=2)[0])[1] > 0.001
    sub = ds.subset(np.arange(50))
    same = sub.true_counterfactual({"s": sub.s, "e": sub.e})
    np.testing.assert_array_equal(same["x"], sub.x)
    flip = sub.true_counterfactual({"e": 1 - sub.e})
    assert np.all(np.abs(flip["x"] - sub.x).reshape(50, -1).max(1) > 0.1)
    np.testing.assert_array_equal(flip["s"], sub.s)
    # do(s) only changes the lower half of the face (the mouth)
    smile = sub.true_counterfactual({"s": 1 - sub.s})["x"]
    np.testing.assert_array_equal(smile[..., :7, :], sub.x[..., :7, :])
    with pytest.raises(ValueError, match="cannot intervene on 'z'"):
        sub.true_counterfactual({"z": 1})
    with pytest.raises(ValueError, match="p_glasses"):
        make_smileyfaces(10, p_glasses=0.0)
