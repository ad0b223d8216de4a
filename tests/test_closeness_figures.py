"""The closeness audit grid: one quantity per panel, bars from 0, no second y-axis, no legend over the bars."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import cflib.experiments.closeness as exp


def test_the_audit_grid_draws_accuracy_and_unfairness_in_separate_panels_from_zero():
    t = pd.DataFrame({"variant": ["SAA", "SSA", "SFA"], "accuracy": [0.81, 0.78, 0.8], "unfairness": [0.12, 0.0, 0.03]})
    u = t.assign(accuracy=[0.7, 0.69, 0.71], unfairness=[0.2, 0.01, 0.05])
    audits = {("adult", "logreg"): SimpleNamespace(table=t), ("adult", "mlp"): SimpleNamespace(table=u)}
    axes = exp.plot_audit_grid(audits, ["adult"], ["logreg", "mlp"])
    assert axes.shape == (1, 4)
    fig = axes[0, 0].figure
    assert len(fig.axes) == 4  # no twin axes
    for ax, values in zip(axes[0], (t.accuracy, t.unfairness, u.accuracy, u.unfairness), strict=True):
        assert ax.get_legend() is None
        np.testing.assert_allclose([p.get_width() for p in ax.patches], values)
        assert ax.get_xlim()[0] == 0 and ax.get_xlim()[1] >= max(values)
    assert [x.get_text() for x in axes[0, 0].get_yticklabels()] == ["SAA", "SSA", "SFA"]
    plt.close("all")
