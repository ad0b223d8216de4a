"""CIT-LR Figs. 8, 10, 11: the paper's per-disease grid (observed group x target group, plus the flip column),
with the figure's legend whole below the panels."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pytest

import cflib.experiments.invariance.figures as figures
from cflib import plotting
from cflib.data.toy_cxr import DISEASES, toy_cxr


class _Member(SimpleNamespace):
    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        # Depends on the image and on rho, so each panel's points identify the member and the image drawn.
        flat = np.asarray(x).reshape(len(x), -1)
        return np.clip(flat[:, : flat.shape[1] // 2].mean(1) * 3 + self.rho / 10, 0, 1)


def _zoo() -> list[_Member]:
    return [
        _Member(arch=arch, seed=0, rho=r, disease=d)
        for arch in ("cnn", "mlp")
        for d in DISEASES
        for r in (0.0, 0.5, 0.9)
    ]


def test_each_panel_plots_the_observed_groups_units_against_their_counterfactual_or_flip():
    plotting.set_style()
    test = toy_cxr(40, seed=0)
    cfs = [test.counterfactual(a) for a in range(3)]
    axes = figures.plot_factual_vs_counterfactual(_zoo(), test, cfs, disease="effusion")
    assert axes.shape == (3, 4)
    assert [ax.get_title() for ax in axes[0]] == ["do(A=0)", "do(A=1)", "do(A=2)", "flip"]
    flipped = test.images[:, :, ::-1].copy()
    for a in range(3):
        rows = np.asarray(test.A) == a
        for j in range(4):
            ax = axes[a, j]
            # two members per panel, the first architecture's smallest and largest rho; the middle rho is left out
            assert [c.get_label() for c in ax.collections] == ["cnn, rho=0", "cnn, rho=0.9"]
            for c, rho in zip(ax.collections, (0.0, 0.9), strict=True):
                m = _Member(rho=rho)
                target = flipped if j == 3 else cfs[j]
                want = np.column_stack([m.predict_proba(test.images)[rows], m.predict_proba(target)[rows]])
                np.testing.assert_allclose(c.get_offsets(), want)
    plt.close("all")


def test_the_legend_is_the_figures_whole_and_below_the_panels():
    plotting.set_style()
    test = toy_cxr(40, seed=0)
    axes = figures.plot_factual_vs_counterfactual(_zoo(), test, [test.images] * 3, disease="cardiomegaly")
    fig = axes[0, 0].figure
    assert all(a.get_legend() is None for a in axes.flat)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["cnn, rho=0", "cnn, rho=0.9"]
    fig.canvas.draw()
    box = legend.get_window_extent().transformed(fig.transFigure.inverted())
    assert box.x0 >= 0 and box.x1 <= 1 and box.y0 >= 0
    assert box.y1 <= min(a.get_position().y0 for a in axes[-1])
    plt.close("all")


def test_bad_input_names_the_argument():
    test = toy_cxr(20, seed=0)
    with pytest.raises(ValueError, match="disease must be one of"):
        figures.plot_factual_vs_counterfactual(_zoo(), test, [test.images] * 3, disease="edema")
    with pytest.raises(ValueError, match="counterfactuals must hold one array per group"):
        figures.plot_factual_vs_counterfactual(_zoo(), test, [test.images] * 2, disease="effusion")
    with pytest.raises(ValueError, match="zoo has no classifier"):
        figures.plot_factual_vs_counterfactual(_zoo()[:3], test, [test.images] * 3, disease="consolidation")
