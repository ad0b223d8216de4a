"""Tests of the Colour-Digits SCMs, the full-support check, the simulated-intervention resampler and the shapes scene."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from cflib.data import colour_digits as cd
from cflib.data import shapes as sh


def test_colourise_is_value_times_pure_hue():
    gray = np.random.default_rng(0).random((5, 4, 4)).astype(np.float32)
    hue = np.array([0.0, 1 / 3, 2 / 3, 0.5, 0.999])
    x = cd.colourise(gray, hue)
    np.testing.assert_allclose(x.max(1), gray, atol=1e-6)  # exact abduction of the grey image
    np.testing.assert_allclose(x[0, :, 0, 0] / gray[0, 0, 0], [1, 0, 0], atol=1e-6)  # red
    np.testing.assert_allclose(x[1, :, 0, 0] / gray[1, 0, 0], [0, 1, 0], atol=1e-6)  # green
    np.testing.assert_allclose(cd.measure_hue(cd.colourise(np.ones((5, 4, 4)), hue)), np.mod(hue, 1), atol=1e-6)
    with pytest.raises(ValueError, match="hue has 2 values for 5 images"):
        cd.colourise(gray, hue[:2])


def test_scm_hue_distributions():
    d = np.repeat(np.arange(10), 3000)
    h = cd.sample_hue(d, "confounded", 0)
    for c in (2, 5, 7):  # away from the wrap-around
        assert abs(h[d == c].mean() - (c / 10 + 0.05)) < 0.005
        assert abs(h[d == c].std() - 0.05) < 0.005
    u = cd.sample_hue(d, "unconfounded", 0)
    assert abs(np.corrcoef(d, u)[0, 1]) < 0.03 and u.min() >= 0 and u.max() < 1
    f = cd.sample_hue(d, "confounded_full_support", 0, outlier_p=0.2)
    far = cd.hue_error(f, d / 10 + 0.05) > 0.25  # outliers land far from their band with prob. ~1/2
    assert 0.07 < far.mean() < 0.13
    with pytest.raises(ValueError, match="scm must be one of"):
        cd.sample_hue(d, "biased", 0)


def test_full_support_by_scm():
    kw = {"replicas": 4, "resolution": 8}
    assert cd.has_full_support(cd.colour_digits("unconfounded", **kw).parents)
    assert not cd.has_full_support(cd.colour_digits("confounded", **kw).parents)
    rep = cd.support_report(cd.colour_digits("confounded_full_support", outlier_p=0.1, **kw).parents)
    assert rep.full_support and rep.statistic == 0 and rep.counts.shape == (10, 5)
    assert rep.summary().loc[0, "cells"] == 50


def test_simulated_intervention_makes_parents_independent():
    data = cd.colour_digits("confounded_full_support", replicas=4, resolution=8, outlier_p=0.1)
    idx = cd.simulated_intervention(data.parents, seed=0)
    counts, _, _ = cd.joint_histogram(data.parents)
    after, _, _ = cd.joint_histogram({k: v[idx] for k, v in data.parents.items()}, discrete=["digit"])
    p = after / after.sum()
    prod = p.sum(1, keepdims=True) * p.sum(0, keepdims=True)
    assert np.abs(p - prod).max() < 0.15 * prod.max()  # integer rounding of the repeat counts only
    # every sample of a cell is repeated the same integer number of times
    reps = np.bincount(idx, minlength=len(data))
    names, codes, _, _ = cd._binned(data.parents, 5, None)
    for cell in {tuple(c) for c in np.stack(codes, 1)[:200]}:
        rows = np.flatnonzero((codes[0] == cell[0]) & (codes[1] == cell[1]))
        assert len(np.unique(reps[rows])) == 1
    assert reps.min() >= 1
    # deterministic given the seed
    np.testing.assert_array_equal(idx, cd.simulated_intervention(data.parents, seed=0))


def test_simulated_intervention_warns_and_keeps_holes():
    data = cd.colour_digits("confounded", replicas=4, resolution=8)
    with pytest.warns(UserWarning, match="full support"):
        idx = cd.simulated_intervention(data.parents)
    before, _, _ = cd.joint_histogram(data.parents)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        after, _, _ = cd.joint_histogram(
            {k: v[idx] for k, v in data.parents.items()}, bins={"hue": 5}, discrete=["digit"]
        )
    assert np.all(after[before == 0] == 0)
    with pytest.raises(ValueError, match="unknown parent"):
        cd.simulated_intervention(data.parents, independent=["colour"])


def test_true_counterfactual_exact_inverse():
    data = cd.colour_digits("unconfounded", "test", replicas=1, resolution=8, seed=1)
    rng = np.random.default_rng(0)
    ps = {"digit": rng.integers(0, 10, len(data)), "hue": rng.random(len(data))}
    cf = cd.true_counterfactual(data.x, data.parents, ps)
    np.testing.assert_allclose(cd.measure_hue(cf, 0.05), ps["hue"], atol=1e-4)
    back = cd.true_counterfactual(cf, ps, data.parents)
    np.testing.assert_allclose(back, data.x, atol=1e-6)
    # the style (ink-mass rank) is kept across digits
    imgs, labels, style = cd.digit_bank(8)
    assert np.all(np.bincount(labels) == 174)
    with pytest.raises(ValueError, match="unknown parent"):
        cd.true_counterfactual(data.x, data.parents, {**ps, "size": ps["hue"]})


def test_colour_digits_split_and_encoding():
    tr = cd.colour_digits("unconfounded", "train", replicas=2, resolution=8)
    te = cd.colour_digits("unconfounded", "test", replicas=2, resolution=8)
    assert not set(tr.base) & set(te.base)
    assert tr.x.shape[1:] == (3, 8, 8) and tr.x.dtype == np.float32
    assert tr.pa.shape == (len(tr), 12)
    np.testing.assert_allclose(tr.pa[:, :10].argmax(1), tr.digit)
    with pytest.raises(ValueError, match="split"):
        cd.colour_digits(split="validation")


def test_shapes_scene():
    sizes = {"object_hue": 2, "floor_hue": 2, "wall_hue": 2, "orientation": 2, "scale": 2, "shape": 3}
    d = sh.shapes_scene(sizes, resolution=12)
    assert len(d) == 2 * 2 * 2 * 2 * 2 * 3 and d.x.shape[1:] == (3, 12, 12)
    assert d.x.min() >= 0 and d.x.max() <= 1
    # one distinct image per combination
    assert len(np.unique(d.x.reshape(len(d), -1).round(5), axis=0)) == len(d)
    tr, te = d.split(0.25, seed=0)
    assert len(tr) + len(te) == len(d)
    assert d.pa.shape == (len(d), sum(sizes.values()))
    with pytest.raises(ValueError, match="unknown factor"):
        sh.shapes_scene({"colour": 3})
    with pytest.raises(ValueError, match="integer level"):
        sh.render_shapes({**d.parents, "shape": d.parents["shape"] + 5}, 12, d.sizes)
