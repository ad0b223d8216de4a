"""Tests of the toy chest X-ray generator (stand-in for CheXpert / MIMIC-CXR, Ma et al. Sec. 6.3)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cflib.data.toy_cxr import DISEASES, check_images, shortcut_training_set, toy_cxr


@pytest.fixture(scope="module")
def data():
    return toy_cxr(2000, size=32, seed=0)


def test_shapes_range_and_types(data):
    assert data.images.shape == (2000, 32, 32)
    assert data.images.dtype == np.float32
    assert data.images.min() >= 0 and data.images.max() <= 1
    assert data.A.shape == (2000,) and set(np.unique(data.A)) == {0, 1, 2}
    assert data.D.shape == (2000, 3) and set(np.unique(data.D)) <= {0, 1}


def test_same_seed_same_images_and_different_seed_differs():
    a, b, c = toy_cxr(20, seed=5), toy_cxr(20, seed=5), toy_cxr(20, seed=6)
    np.testing.assert_array_equal(a.images, b.images)
    assert not np.array_equal(a.images, c.images)


def test_render_reproduces_observed_images_exactly(data):
    np.testing.assert_array_equal(data.render(), data.images)
    np.testing.assert_array_equal(data.counterfactual(data.A), data.images)


def test_counterfactual_changes_only_the_trace(data):
    idx = np.arange(200)
    x0, x1, x2 = (data.render(A=a, idx=idx) for a in range(3))
    # the soft tissue is brighter in group 1 and darker in group 2 than in group 0
    assert (x1 - x0).mean() > 0.01 and (x2 - x0).mean() < -0.01
    # ... and nowhere else: with no trace the counterfactual is the factual image
    flat = toy_cxr(50, seed=1, trace_strength=0.0)
    for a in range(3):
        np.testing.assert_array_equal(flat.counterfactual(a), flat.images)
    # disease-bearing structures are unchanged: the heart centre keeps its value under every do(A)
    centre = (slice(None), 20, 17)  # inside the heart ellipse for every pose
    np.testing.assert_allclose(x0[centre], x1[centre], atol=1e-3)  # only the anti-aliased edge leaks


def test_prevalence_depends_on_group_except_consolidation(data):
    for k, d in enumerate(DISEASES):
        table = np.array([[np.sum((a == data.A) & (data.D[:, k] == v)) for v in (0, 1)] for a in range(3)])
        p = stats.chi2_contingency(table)[1]
        if d == "consolidation":
            assert p > 1e-3, "consolidation must not depend on the group"
        else:
            assert p < 1e-6, f"{d} prevalence must differ between groups"
        # each group's prevalence lies inside a 99.9% binomial interval around the configured one
        for a in range(3):
            n = int((a == data.A).sum())
            k_pos = int(data.D[a == data.A, k].sum())
            lo, hi = stats.binom.interval(0.999, n, data.prevalence[d][a])
            assert lo <= k_pos <= hi


def test_group_proportions(data):
    counts = np.bincount(data.A, minlength=3)
    for a, p in enumerate(data.group_probs):
        lo, hi = stats.binom.interval(0.999, data.n, p)
        assert lo <= counts[a] <= hi


def test_cardiomegaly_is_a_wider_heart(data):
    w = data.U["heart_w"] / 0.86  # cardio-thoracic ratio
    assert np.all(w[data.label("cardiomegaly") == 1] > 0.5)
    assert np.all(w[data.label("cardiomegaly") == 0] < 0.5)


def test_shortcut_training_set(data):
    x, y, a = shortcut_training_set(data, "cardiomegaly", 0.0)
    np.testing.assert_array_equal(x, data.images)
    x, y, a = shortcut_training_set(data, "cardiomegaly", 1.0, seed=0)
    p = np.asarray(data.prevalence["cardiomegaly"])
    assert np.all(a[y == 1] == np.argmax(p)) and np.all(a[y == 0] == np.argmin(p))
    np.testing.assert_array_equal(y, data.label("cardiomegaly"))
    np.testing.assert_array_equal(x, data.render(A=a))
    # no association to amplify: consolidation stays as observed
    x, y, a = shortcut_training_set(data, "consolidation", 1.0)
    np.testing.assert_array_equal(x, data.images)


def test_subset(data):
    sub = data.subset(np.arange(10))
    np.testing.assert_array_equal(sub.render(A=1), data.render(A=1, idx=np.arange(10)))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n": 0}, "n must be"),
        ({"n": 10, "size": 8}, "size"),
        ({"n": 10, "group_probs": (0.5, 0.5, 0.5)}, "group_probs"),
        ({"n": 10, "prevalence": {"flu": (0.1, 0.1, 0.1)}}, "unknown diseases"),
        ({"n": 10, "trace_strength": -1.0}, "trace_strength"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        toy_cxr(**kwargs)


def test_bad_attribute_and_disease(data):
    with pytest.raises(ValueError, match="unknown attribute value"):
        data.counterfactual(3)
    with pytest.raises(TypeError, match="integer group codes"):
        data.counterfactual(0.5)
    with pytest.raises(ValueError, match="disease must be one of"):
        data.label("flu")
    with pytest.raises(ValueError, match="rho"):
        shortcut_training_set(data, "effusion", 1.5)


def test_check_images_errors():
    ok = np.zeros((2, 16, 16))
    assert check_images(ok).shape == (2, 16, 16)
    assert check_images(ok[:, None]).shape == (2, 16, 16)
    with pytest.raises(ValueError, match="shape"):
        check_images(np.zeros((2, 16, 12)))
    with pytest.raises(ValueError, match="32x32"):
        check_images(ok, size=32)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        check_images(ok - 1.0)
    with pytest.raises(ValueError, match="NaN"):
        check_images(np.full((1, 16, 16), np.nan))
    with pytest.raises(TypeError):
        check_images(np.array([["a"]]))
