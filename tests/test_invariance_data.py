"""Tests of cflib.data.invariance_synthetic (Ma et al. 2024, App. F.1)."""

from __future__ import annotations

import numpy as np
import pytest

from cflib.data.invariance_synthetic import (
    KINDS,
    draw_params,
    invariance_synthetic,
    label_logits,
    structural_x,
)


@pytest.mark.parametrize("kind", KINDS)
def test_shapes_and_structural_equations(kind):
    d = invariance_synthetic(kind, 500, seed=1)
    k, L = 32, 2
    assert d.x.shape == (500, k) and d.x_cf.shape == (500, k) and d.z.shape == (500, L + 1, k)
    assert set(np.unique(d.a)) <= {0, 1} and set(np.unique(d.y)) <= {0, 1}
    p = d.params
    # Recompute every layer from the stored noise: Z_i = M_i Z_{i+1} A + N_i Z_{i+1} (1-A) + xi_i.
    a = d.a[:, None]
    for i in range(L - 1, -1, -1):
        expect = a * (d.z[:, i + 1] @ p.M[i].T) + (1 - a) * (d.z[:, i + 1] @ p.N[i].T) + d.xi[:, i]
        np.testing.assert_allclose(d.z[:, i], expect, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(d.x, d.z[:, 0] @ p.M_X.T + p.r + d.eps, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(d.logits, label_logits(p, d.z_root))


def test_counterfactual_uses_same_noise_and_matrices():
    d = invariance_synthetic("linear", 400, seed=2)
    # Flipping twice is the identity; flipping to the observed value reproduces x exactly.
    np.testing.assert_allclose(d.x_do(d.a), d.x, atol=1e-9)
    np.testing.assert_allclose(d.x_do(1 - d.a), d.x_cf, atol=1e-9)
    np.testing.assert_allclose(structural_x(d.params, d.a, d.z_root, xi=d.xi, eps=d.eps), d.x, atol=1e-9)
    # The counterfactual really differs (A has an effect at a_effect = 1).
    assert np.abs(d.x_cf - d.x).mean() > 1.0


def test_a_effect_zero_is_an_exact_null():
    d = invariance_synthetic("sin", 300, a_effect=0.0, seed=3)
    np.testing.assert_allclose(d.x_cf, d.x, atol=1e-9)
    np.testing.assert_allclose(d.params.M, d.params.N)


def test_fixed_params_fresh_samples_and_rescaling():
    p = draw_params("quadratic", seed=5)
    d1 = invariance_synthetic("quadratic", 100, params=p, seed=1)
    d2 = invariance_synthetic("quadratic", 100, params=p, seed=2)
    assert d1.params is p and not np.allclose(d1.x, d2.x)
    half = p.with_effect(0.5)
    np.testing.assert_allclose(half.N, p.M + 0.5 * (p.N - p.M))
    np.testing.assert_allclose(half.with_effect(1.0).N, p.N)
    d3 = invariance_synthetic("quadratic", 100, params=p, a_effect=0.0, seed=1)
    np.testing.assert_allclose(d3.params.N, p.M)
    # same seed, same numbers
    np.testing.assert_array_equal(invariance_synthetic("quadratic", 100, params=p, seed=1).x, d1.x)


def test_paper_prevalence_and_label_independent_of_a():
    d = invariance_synthetic("linear", 20_000, seed=4)
    assert abs(d.a.mean() - 0.3) < 0.02
    # Y depends only on the root: P(Y=1 | A) equal across groups within sampling error.
    diff = d.y[d.a == 1].mean() - d.y[d.a == 0].mean()
    assert abs(diff) < 0.03


def test_code_variant():
    p = draw_params("linear", variant="code", seed=0)
    assert p.p_a == 0.5 and p.label_mode == "threshold"
    np.testing.assert_allclose(np.abs(p.M).sum(axis=2), 1.0)
    d = invariance_synthetic("linear", 200, params=p, seed=0)
    np.testing.assert_array_equal(d.y, (d.logits >= 0).astype(int))


def test_bad_input():
    with pytest.raises(ValueError, match="kind must be one of"):
        invariance_synthetic("cubic", 10)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        invariance_synthetic("linear", 0)
    with pytest.raises(ValueError, match="p_a"):
        invariance_synthetic("linear", 10, p_a=1.5)
    with pytest.raises(ValueError, match="a_effect"):
        invariance_synthetic("linear", 10, a_effect=float("nan"))
    with pytest.raises(ValueError, match="params were drawn"):
        invariance_synthetic("sin", 10, params=draw_params("linear", seed=0))
    with pytest.raises(TypeError, match="SyntheticParams"):
        invariance_synthetic("linear", 10, params={"M": 1})


def test_parity_world_counterfactual_and_symmetry():
    from cflib.data.invariance_synthetic import parity_world

    w = parity_world(5000, prevalence=(0.2, 0.45), false_positive=(0.0, 0.25), seed=0)
    # Counterfactual changes only the trace column, and flips its sign component.
    np.testing.assert_allclose(w.x_cf[:, :2], w.x[:, :2])
    np.testing.assert_allclose(w.x_cf[:, 2] - w.x[:, 2], w.trace * 2 * (1 - 2 * w.a))
    assert abs(w.d[w.a == 1].mean() - 0.45) < 0.03 and abs(w.d[w.a == 0].mean() - 0.2) < 0.03
    assert np.all(w.y >= w.d)  # only false positives are added
    with pytest.raises(ValueError, match="prevalence"):
        parity_world(10, prevalence=(0.2, 1.5))
