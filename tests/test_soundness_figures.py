"""The soundness chapter's Figures 8, 9 and 10: what each panel draws, from a small hierarchical VAE."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

import cflib.experiments.soundness as exp
from cflib.experiments.soundness.common import colour_digits_test, digit_hue_encoder
from cflib.metrics import axioms as ax


@pytest.fixture(scope="module")
def hvae_and_test():
    train, test = colour_digits_test(8, 300, seed=0), colour_digits_test(8, 30, seed=1)
    h = exp.train_hvaes(train, levels=2, beta=0.1, steps=3, batch_size=32, seeds=[0], device="cpu", cache=False)[0]
    return h, test


def _shown(a) -> np.ndarray:
    return np.asarray(a.images[0].get_array())


def test_figure8_draws_the_three_metrics_with_effectiveness_from_0_to_100():
    idx = pd.Index([0.0, 0.5, 1.0], name="temperature")
    f8 = pd.DataFrame(
        {
            "composition l1": [5.0, 6.0, 7.0],
            "reversibility l1": [8.0, 9.0, 10.0],
            "digit accuracy (%)": [98.0, 99.0, 99.5],
            "cycled-back digit accuracy (%)": [97.5, 98.0, 99.0],
        },
        index=idx,
    )
    axes = exp.plot_temperature(f8)
    drawn = [[list(line.get_ydata()) for line in a.get_lines()] for a in axes]
    assert drawn[0] == [[5.0, 6.0, 7.0]] and drawn[1] == [[8.0, 9.0, 10.0]]
    assert drawn[2] == [[98.0, 99.0, 99.5], [97.5, 98.0, 99.0]]
    assert axes[2].get_ylim() == (0.0, 100.0) and axes[0].get_ylim()[0] == 0.0
    assert [a.get_title()[:3] for a in axes] == ["(a)", "(b)", "(c)"]
    plt.close("all")


def test_figure9_shows_each_test_image_and_its_counterfactuals_per_temperature(hvae_and_test):
    h, test = hvae_and_test
    axes = exp.plot_temperature_counterfactuals(h, test, [0.0, 1.0], seed=0, rows=2)
    assert axes.shape == (4, 4)
    idx = np.linspace(10, len(test) - 1, 2).astype(int)
    # the first column is the observation itself, the same at both temperatures
    for r, i in enumerate(np.repeat(idx, 2)):
        np.testing.assert_allclose(_shown(axes[r, 0]), np.moveaxis(np.asarray(test.x[i]), 0, -1), atol=1e-6)
    # the digit counterfactual and its cycle back are the model's, at the row's temperature (k = 1, the same seed)
    pa = {k: v[idx] for k, v in test.parents.items()}
    target = {**pa, "digit": (pa["digit"] + 5) % 10}
    for r, t in ((0, 0.0), (1, 1.0)):
        f = ax.ModelFunction.sample(h, digit_hue_encoder(), 2, seed=0, abduct_levels=1, temperature=t)
        cf = f(test.x[idx], pa, target)
        np.testing.assert_allclose(_shown(axes[r, 2]), np.moveaxis(np.asarray(cf[0]), 0, -1), atol=1e-5)
        np.testing.assert_allclose(_shown(axes[r, 3]), np.moveaxis(np.asarray(f(cf, target, pa)[0]), 0, -1), atol=1e-5)
    with pytest.raises(ValueError, match="temperatures"):
        exp.plot_temperature_counterfactuals(h, test, [], seed=0)
    plt.close("all")


def test_figure10_lays_out_four_interventions_by_temperature(hvae_and_test):
    h, test = hvae_and_test
    axes = exp.plot_temperature_traversal(h, test, [0.0, 0.5, 1.0], seed=0, row=3)
    assert axes.shape == (4, 3)
    assert [a.get_title() for a in axes[0]] == ["t=0", "t=0.5", "t=1"]
    with pytest.raises(ValueError, match="row"):
        exp.plot_temperature_traversal(h, test, [1.0], seed=0, row=len(test))
    plt.close("all")


def test_figure12_moves_the_hue_from_full_to_no_abduction(hvae_and_test):
    h, test = hvae_and_test
    axes = exp.plot_abduction_strip(h, test, seed=0, attribute="hue")
    assert axes.shape == (3, h.levels + 2)
    idx = np.linspace(10, len(test) - 1, 3).astype(int)
    pa = {k: v[idx] for k, v in test.parents.items()}
    target = {**pa, "hue": (pa["hue"] + 0.5) % 1.0}
    f = ax.ModelFunction.sample(h, digit_hue_encoder(), 3, seed=0, abduct_levels=h.levels)
    np.testing.assert_allclose(
        _shown(axes[1, 1]), np.moveaxis(np.asarray(f(test.x[idx], pa, target)[1]), 0, -1), atol=1e-5
    )
    with pytest.raises(ValueError, match="attribute"):
        exp.plot_abduction_strip(h, test, seed=0, attribute="shape")
    plt.close("all")
