"""CIT-LR Figs. 8-12: the legend is the figure's, whole, below the panels, at the figure's size."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np

import cflib.experiments.invariance.figures as figures
from cflib import plotting
from cflib.data.toy_cxr import DISEASES, toy_cxr


class _Member(SimpleNamespace):
    def predict_proba(self, x: np.ndarray) -> np.ndarray:
        return np.clip(np.asarray(x).reshape(len(x), -1).mean(1) * 3, 0, 1)


def test_figures_8_to_12_put_one_whole_legend_below_the_panels():
    plotting.set_style()
    test = toy_cxr(40, seed=0)
    zoo = [_Member(arch="cnn", seed=0, rho=r, disease=d) for d in DISEASES for r in (0.0, 0.9)]
    axes = figures.plot_factual_vs_counterfactual(zoo, test, [test.images] * 3)
    fig = axes[0, 0].figure
    assert all(a.get_legend() is None for a in axes.flat)
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["do(A=0)", "do(A=1)", "do(A=2)", "flip"]
    fig.canvas.draw()
    box = legend.get_window_extent().transformed(fig.transFigure.inverted())
    assert box.x0 >= 0 and box.x1 <= 1 and box.y0 >= 0
    assert box.y1 <= min(a.get_position().y0 for a in axes[-1])
    plt.close("all")
