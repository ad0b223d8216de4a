"""Metrics of the benchmark chapter: CLD, Fréchet distance, composition distances, effectiveness, paired tests."""

import math

import numpy as np
import pytest
from sklearn.metrics import f1_score

from cflib.metrics.benchmark_metrics import (
    InterventionSampler,
    l1_pixel,
    memoize_features,
    paired_comparison,
    perceptual_distance,
    score,
)
from cflib.metrics.minimality import (
    counterfactual_latent_divergence,
    discretize,
    gaussian_kl_diag,
    identity_cld,
    kl_matrix,
)
from cflib.metrics.realism import frechet_distance, frechet_feature_distance


def _latents(n=400, d=8, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), rng.normal(scale=0.3, size=(n, d)) - 1


def test_identity_cld_is_log_point8_plus_point2e():
    assert identity_cld() == pytest.approx(math.log(0.8 + 0.2 * math.e))
    assert round(identity_cld(), 4) == 0.2954
    mu, lv = _latents()
    g = np.arange(400) % 5
    res = counterfactual_latent_divergence((mu, lv), (mu, lv), g, (g + 1) % 5)
    assert res.statistic == pytest.approx(0.29539, abs=1e-5)
    assert np.all(res.p1 == 0) and np.all(res.p2 == 1)


def test_cld_range_and_formula():
    mu, lv = _latents()
    mu2, lv2 = _latents(seed=1)
    g = np.arange(400) % 4
    res = counterfactual_latent_divergence((mu, lv), (mu2, lv2), g, (g + 2) % 4)
    assert np.all((res.cld >= 0) & (res.cld <= 1))
    np.testing.assert_allclose(res.cld, np.log(0.8 * np.exp(res.p1) + 0.2 * np.exp(res.p2)))
    # the official code's KL (means as log-scales) is a different number
    off = counterfactual_latent_divergence((mu, lv), (mu2, lv2), g, (g + 2) % 4, official=True)
    assert off.official and off.statistic != pytest.approx(res.statistic)
    # a 2-D reference group with a per-unit intervened column
    ref = np.column_stack([g, (g * 7) % 3])
    col = np.arange(400) % 2
    res2 = counterfactual_latent_divergence(
        (mu, lv),
        (mu2, lv2),
        ref[np.arange(400), col],
        (ref[np.arange(400), col] + 1) % np.where(col == 0, 4, 3),
        reference_group=ref,
        parent=col,
    )
    assert res2.cld.shape == (400,)
    assert list(res.summary().columns)[:3] == ["CLD", "P1", "P2"]


def test_gaussian_kl_closed_forms():
    z = np.zeros((1, 1))
    assert gaussian_kl_diag(z, z, z, z)[0] == 0
    assert gaussian_kl_diag(z, z, z + 1, z)[0] == pytest.approx(0.5)
    # KL(N(0, 4) || N(0, 1)) = 0.5 (4 - 1 - log 4)
    assert gaussian_kl_diag(z, z + math.log(4), z, z)[0] == pytest.approx(0.5 * (3 - math.log(4)))
    mu, lv = _latents(30)
    pair = np.array([[gaussian_kl_diag(mu[a], lv[a], mu[b], lv[b]) for b in range(30)] for a in range(30)])
    np.testing.assert_allclose(kl_matrix(mu, lv, mu, lv), pair, atol=1e-12)


def test_cld_bad_input():
    mu, lv = _latents(50)
    g = np.zeros(50, int)
    with pytest.raises(ValueError, match="no reference image"):
        counterfactual_latent_divergence((mu, lv), (mu, lv), g, g + 1)
    with pytest.raises(ValueError, match="2-D array"):
        counterfactual_latent_divergence((mu[:, 0], lv), (mu, lv), g, g)
    with pytest.raises(ValueError, match="parent"):
        counterfactual_latent_divergence((mu, lv), (mu, lv), g, g, reference_group=np.zeros((50, 2)))


def test_discretize_equal_width():
    np.testing.assert_array_equal(discretize(np.array([0.0, 0.49, 0.51, 1.0]), 2), [0, 0, 1, 1])


def test_frechet_distance_closed_form_and_invariance():
    rng = np.random.default_rng(0)
    a = rng.normal(0, 1, (20000, 1))
    b = rng.normal(2, 3, (20000, 1))
    # 1-D: (mu1 - mu2)^2 + (s1 - s2)^2 = 4 + 4
    assert frechet_distance(a, b) == pytest.approx(8.0, rel=0.03)
    x = rng.normal(size=(500, 6))
    y = rng.normal(size=(400, 6)) * 1.5 + 0.3
    q, _ = np.linalg.qr(rng.normal(size=(6, 6)))
    assert frechet_distance(x @ q, y @ q) == pytest.approx(frechet_distance(x, y), rel=1e-8)
    assert frechet_distance(x, x) == pytest.approx(0.0, abs=1e-8)
    res = frechet_feature_distance(x, y, n_boot=50, seed=0)
    assert res.ci[0] <= res.statistic * 1.5 and res.summary().shape == (1, 4)
    with pytest.raises(ValueError, match="same width"):
        frechet_distance(x, y[:, :3])


def test_pixel_and_perceptual_distances():
    rng = np.random.default_rng(0)
    a = 0.5 * rng.random((5, 1, 8, 8))  # + 0.5 below stays in [0, 1], the range l1_pixel declares
    b = a.copy()
    b[:, :, 0, 0] += 0.5
    np.testing.assert_allclose(l1_pixel(255.0)(a, b), 255 * 0.5 / 64)
    maps = lambda x: [np.concatenate([x, x**2], 1)]  # noqa: E731
    d = perceptual_distance(maps)
    np.testing.assert_allclose(d(a, a), 0.0, atol=1e-12)
    assert np.all(d(a, b) > 0)
    calls = []
    f = memoize_features(lambda x: calls.append(1) or x.sum())
    f(a), f(a), f(b)
    assert len(calls) == 2


def test_intervention_sampler_changes_value_uniformly():
    rng = np.random.default_rng(0)
    d = rng.integers(0, 10, 5000)
    t = rng.gamma(10, 0.2, 5000)
    s = InterventionSampler({"d": d, "t": t}, discrete=["d"], n_bins=10)
    new_d = s.sample("d", d, 1)
    assert np.all(new_d != d)
    # uniform over the 9 other digits: each appears ~ 5000/10 times overall
    counts = np.bincount(new_d, minlength=10)
    assert counts.min() > 400 and counts.max() < 600
    new_t = s.sample("t", t, 2)
    assert np.all(s.bin("t", new_t) != s.bin("t", t))
    assert np.isin(new_t, t).all()
    with pytest.raises(ValueError, match="cannot intervene on 'z'"):
        s.sample("z", t)


def test_effectiveness_scores_match_sklearn():
    rng = np.random.default_rng(0)
    t = rng.integers(0, 2, 200)
    p = np.where(rng.random(200) < 0.8, t, 1 - t)
    assert score("binary", t, p)[0] == pytest.approx(f1_score(t, p))
    assert score("multiclass", t, p)[0] == pytest.approx((t == p).mean())
    assert score("regression", np.ones(3), np.array([0.0, 1.0, 3.0]))[0] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="kind"):
        score("ordinal", t, p)


def test_paired_comparison():
    rng = np.random.default_rng(0)
    a = rng.normal(size=300)
    same = paired_comparison(a, a)
    assert same.pvalue == 1.0 and same.mean_diff == 0
    shifted = paired_comparison(a + 0.3, a + rng.normal(scale=0.1, size=300))
    assert shifted.pvalue < 1e-6 and shifted.ci[0] < 0.3 < shifted.ci[1] + 0.05
    boot = paired_comparison(a + 0.3, a, test="bootstrap")
    assert boot.ci[0] == pytest.approx(0.3) and boot.pvalue == 0.0
    ca = (rng.random(200) < 0.9).astype(float)
    cb = (rng.random(200) < 0.5).astype(float)
    mc = paired_comparison(ca, cb, test="mcnemar")
    assert mc.pvalue < 1e-6
    with pytest.raises(ValueError, match="0/1"):
        paired_comparison(a, a, test="mcnemar")
    with pytest.raises(ValueError, match="same length"):
        paired_comparison(a, a[:5])


def test_paired_comparison_interval_is_an_interval_of_the_mean_difference():
    # PairedComparison.ci was declared a (low, high) tuple while it holds a cflib.results.Interval (found by mypy)
    from cflib.results import Interval

    a = np.random.default_rng(1).normal(size=300)
    res = paired_comparison(a + 0.3, a, test="bootstrap", n_boot=200)
    assert isinstance(res.ci, Interval) and res.ci.estimate == res.mean_diff
    assert res.ci.method == "95% paired bootstrap, 300 pairs" and res.ci.low <= res.mean_diff <= res.ci.high
    assert (res.summary().loc[0, "ci_low"], res.summary().loc[0, "ci_high"]) == tuple(res.ci)
