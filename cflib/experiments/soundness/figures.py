"""The chapter's figures: Figures 1, 4, 5, 7 to 11 of the paper, and the book's own plots."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import cflib.data.colour_digits as cd

from ... import plotting
from ...data import shapes as sh
from ...metrics import axioms as ax
from ...models.baselines import GroundTruth
from ...models.hvae import HierarchicalConditionalVAE
from .common import PARENTS, SCM_TITLES, digit_hue_encoder
from .support import resampled
from .tables import summary_value
from .truth import TRUTH_METRICS


def plot_composition_reversibility(
    summary: pd.DataFrame, models: Sequence[str], *, band: bool = False, reference: str | None = None, where: str = ""
) -> np.ndarray:
    """Composition against m and hue reversibility against cycles, one line per model.

    Parameters
    ----------
    summary : pandas.DataFrame
        :func:`~cflib.metrics.axioms.summarise` output with a ``model`` column.
    models : sequence of str
        Models to draw.
    band : bool
        Shade mean +- std over seeds.
    reference : str, optional
        A model whose composition^(1) is drawn as a dashed horizontal line (the VAE without encoder).
    where : str
        Added to the panel titles (e.g. ``" (unconfounded)"``).

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    _, axes = plotting.subplots(1, 2, width=4.2, height=3.2)
    for name in models:
        c = summary[(summary.model == name) & (summary.metric == "composition")]
        r = summary[(summary.model == name) & (summary.metric == "reversibility") & (summary.intervened == "hue")]
        for a, d in zip(axes, (c, r), strict=True):
            lo, hi = (d["mean"] - d["std"], d["mean"] + d["std"]) if band else (None, None)
            plotting.line_with_band(d.step, d["mean"], lo, hi, label=name, ax=a)
    if reference is not None:
        level = summary_value(summary, "composition", model=reference)
        for a in axes:
            a.axhline(level, color="0.3", ls="--", lw=1, label=reference)
    axes[0].set(xlabel="m (null interventions)", ylabel="composition l1", title=f"composition{where}")
    axes[1].set(xlabel="cycles", ylabel="reversibility l1", title=f"hue reversibility{where}")
    axes[1].legend(fontsize=8)
    return axes


def plot_true_counterfactuals(
    truth: GroundTruth, x: np.ndarray, pa: Mapping[str, np.ndarray], do: Mapping[str, np.ndarray], rows: int = 6
) -> np.ndarray:
    """Six test images with their true counterfactuals under ``do(digit)`` and ``do(hue)``.

    Parameters
    ----------
    truth : GroundTruth
        The true counterfactual function.
    x, pa : numpy.ndarray, dict
        Test images and their parents.
    do : dict
        ``"digit"`` and ``"hue"`` -> counterfactual values.
    rows : int
        Number of images (spread evenly over the test set).

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    show = np.arange(0, len(x), len(x) // rows)[:rows]
    p = {k: v[show] for k, v in pa.items()}
    grid = np.stack(
        [
            x[show],
            truth(x[show], p, {"digit": do["digit"][show], "hue": p["hue"]}),
            truth(x[show], p, {"digit": p["digit"], "hue": do["hue"][show]}),
        ],
        1,
    )
    return plotting.image_grid(
        grid, row_labels=[f"digit {d}" for d in p["digit"]], col_labels=["observed", "do(digit)", "do(hue)"], panel=0.9
    )


def plot_hue_joints(scms: Mapping[str, cd.ColourDigits]) -> np.ndarray:
    """Figure 4: box plots of the hue per digit under each SCM.

    Parameters
    ----------
    scms : dict
        SCM name -> training split.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    _, axes = plotting.subplots(1, len(scms), width=3.6, height=3.0, sharey=True)
    for a, (name, d) in zip(np.atleast_1d(axes), scms.items(), strict=True):
        a.boxplot(
            [d.hue[d.digit == k] for k in range(10)],
            positions=range(10),
            widths=0.6,
            flierprops={"marker": "x", "ms": 3},
        )
        a.set(title=SCM_TITLES.get(name, name), xlabel="digit")
    np.atleast_1d(axes)[0].set_ylabel("hue")
    return axes


def plot_samples(scms: Mapping[str, cd.ColourDigits], per_digit: int = 4) -> np.ndarray:
    """Figure 5: ``per_digit`` samples of each digit from the unconfounded and the confounded SCM.

    Parameters
    ----------
    scms : dict
        SCM name -> training split; needs ``"unconfounded"`` and ``"confounded"``.
    per_digit : int
        Rows per SCM.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """

    def pick(d: cd.ColourDigits) -> np.ndarray:
        return np.concatenate(
            [np.flatnonzero(d.digit == k)[:: max(1, (d.digit == k).sum() // per_digit)][:per_digit] for k in range(10)]
        )

    r = scms["unconfounded"].resolution
    grid = np.concatenate(
        [
            scms[n].x[pick(scms[n])].reshape(10, per_digit, 3, r, r).transpose(1, 0, 2, 3, 4)
            for n in ("unconfounded", "confounded")
        ]
    )
    labels = ["(a) unconf."] + [""] * (per_digit - 1) + ["(b) conf."] + [""] * (per_digit - 1)
    return plotting.image_grid(grid, row_labels=labels, panel=0.55)


def plot_support_reports(reports: Mapping[str, cd.SupportReport]) -> np.ndarray:
    """Binned digit-hue joints of each SCM, with the count of empty cells in the titles.

    Parameters
    ----------
    reports : dict
        SCM name -> :func:`cflib.data.colour_digits.support_report`.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    _, axes = plotting.subplots(1, len(reports), width=3.4, height=2.6)
    for a, (name, rep) in zip(np.atleast_1d(axes), reports.items(), strict=True):
        rep.plot(ax=a)
        a.set_title(f"{SCM_TITLES.get(name, name)}\n{rep.statistic} empty cells", fontsize=9)
    return axes


def plot_si_before_after(scms: Mapping[str, cd.ColourDigits], si: Mapping[str, np.ndarray], bins: int) -> np.ndarray:
    """Log counts per (digit, hue bin) cell before and after the simulated intervention, per SCM.

    Parameters
    ----------
    scms : dict
        SCM name -> training split.
    si : dict
        SCM name -> simulated-intervention indices (:func:`simulated_interventions`).
    bins : int
        Hue bins.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    _, axes = plotting.subplots(1, 2 * len(si), width=2.9, height=2.5)
    for i, name in enumerate(si):
        before = cd.support_report(scms[name].parents, bins=bins)
        after = cd.support_report(resampled(scms[name], si[name]), bins=bins, discrete=["digit"])
        short = "w/o full support" if name == "confounded" else "w/ full support"
        for a, rep, when in ((axes[2 * i], before, "before"), (axes[2 * i + 1], after, "after SI")):
            rep.plot(ax=a)
            a.set_title(f"{short}: {when}\ncounts {rep.counts.min()}-{rep.counts.max()}", fontsize=9)
    return axes


def figure1(model: Any, test: cd.ColourDigits, rows: np.ndarray, title: str, *, seed: int) -> np.ndarray:
    """Figure 1: repeated null interventions, a null and a digit intervention, and two hue cycles, per test image.

    The three groups of columns are the paper's panels (a) composition, (b) effectiveness and (c) reversibility,
    lettered and separated by gaps.

    Parameters
    ----------
    model : object
        A Colour-Digits image model (VAE or GAN).
    test : ColourDigits
        Test split.
    rows : array of int
        Test images to show.
    title : str
        Label of the first row.
    seed : int
        Seed of the model's noise.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    f = ax.ModelFunction.sample(model, digit_hue_encoder(), len(rows), seed=seed)
    x, pa = test.x[rows], {k: v[rows] for k, v in test.parents.items()}
    comp = ax.composition_sequence(f, x, pa, m=5)
    eff = np.stack([x, f(x, pa, pa), f(x, pa, {**pa, "digit": (pa["digit"] + 3) % 10})], 1)
    rev = ax.reversibility_sequence(f, x, pa, "hue", (pa["hue"] + 0.5) % 1.0, cycles=2)
    cols = ["(a) x"] + [f"null {j}" for j in range(1, 6)] + ["(b) x", "null", "do(d+3)"]
    cols += ["(c) x", "do(h)", "back", "do(h)", "back"]
    labels = [f"{title}\ndigit {d}" if i == 0 else f"digit {d}" for i, d in enumerate(pa["digit"])]
    return plotting.image_grid(
        np.concatenate([comp, eff, rev], 1), col_labels=cols, row_labels=labels, panel=0.75, gaps_after=(5, 8)
    )


def plot_shape_counterfactuals(
    models: Mapping[str, Any], s_test: sh.ShapesScene, *, seed: int, rows: int = 4
) -> np.ndarray:
    """Each model's null, ``do(shape)`` and ``do(object_hue)`` counterfactuals of the first test scenes.

    Parameters
    ----------
    models : dict
        Name -> trained shapes-scene model.
    s_test : ShapesScene
        Test scenes.
    seed : int
        Noise seed.
    rows : int
        Scenes to show.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    enc = ax.ParentEncoder({k: ("categorical", s_test.sizes[k]) for k in sh.FACTORS})
    x, pa = s_test.x[:rows], {k: v[:rows] for k, v in s_test.parents.items()}
    panels, labels = [x], ["x"]
    for name, model in models.items():
        f = ax.ModelFunction.sample(model, enc, rows, seed=seed)
        panels += [
            f(x, pa, pa),
            f(x, pa, {**pa, "shape": (pa["shape"] + 1) % 3}),
            f(x, pa, {**pa, "object_hue": (pa["object_hue"] + 2) % s_test.sizes["object_hue"]}),
        ]
        labels += [f"{name}\nnull", f"{name}\ndo(shape)", f"{name}\ndo(hue)"]
    return plotting.image_grid(np.stack(panels, 1), col_labels=labels, panel=0.95)


def plot_partial_abduction(table6: pd.DataFrame) -> np.ndarray:
    """Figure 7: distances and digit effectiveness against the number of abducted groups.

    Parameters
    ----------
    table6 : pandas.DataFrame
        :func:`partial_abduction` output.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    _, axes = plotting.subplots(1, 2, width=4.2, height=3.1)
    plotting.line_with_band(table6.index, table6["composition l1"], label="composition", ax=axes[0])
    plotting.line_with_band(table6.index, table6["reversibility l1"], label="reversibility", ax=axes[0])
    plotting.line_with_band(
        table6.index, table6["digit accuracy (%)"], label="digit effectiveness", color=plotting.PALETTE[2], ax=axes[1]
    )
    axes[0].set(xlabel="levels abducted k", ylabel="l1 (0-255)", title="Figure 7 (reproduced): distances")
    axes[1].set(xlabel="levels abducted k", ylabel="digit accuracy (%)", title="effectiveness")
    axes[0].legend()
    return axes


def plot_abduction_strip(
    hvae: HierarchicalConditionalVAE, test: cd.ColourDigits, *, seed: int, shift: int = 5, attribute: str = "digit"
) -> np.ndarray:
    """Figures 11 and 12: three test images and their counterfactuals from full (k = L) to no abduction.

    Parameters
    ----------
    hvae : HierarchicalConditionalVAE
        Trained model.
    test : ColourDigits
        Test split.
    seed : int
        Noise seed.
    shift : int
        Digit change (mod 10) of ``do(digit + shift)``; ``attribute="hue"`` moves the hue half-way round instead.
    attribute : {"digit", "hue"}
        The intervened parent (Figure 11 intervenes on smiling, Figure 12 on eyeglasses).

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    if attribute not in ("digit", "hue"):
        raise ValueError(f"attribute must be 'digit' or 'hue', got {attribute!r}")
    enc, rows = digit_hue_encoder(), np.linspace(10, len(test) - 1, 3).astype(int)
    pa = {k: v[rows] for k, v in test.parents.items()}
    if attribute == "digit":
        target = {**pa, "digit": (pa["digit"] + shift) % 10}
        labels = [f"{a} -> {b}" for a, b in zip(pa["digit"], target["digit"], strict=True)]
    else:
        target = {**pa, "hue": (pa["hue"] + 0.5) % 1.0}
        labels = [f"hue {a:.2f} -> {b:.2f}" for a, b in zip(pa["hue"], target["hue"], strict=True)]
    ks = range(hvae.levels, -1, -1)
    strip = [test.x[rows]] + [
        ax.ModelFunction.sample(hvae, enc, len(rows), seed=seed, abduct_levels=k)(test.x[rows], pa, target) for k in ks
    ]
    return plotting.image_grid(
        np.stack(strip, 1), col_labels=["x"] + [f"k={k}" for k in ks], row_labels=labels, panel=0.9
    )


def plot_temperature(fig8: pd.DataFrame) -> np.ndarray:
    """Figure 8: composition, reversibility and digit effectiveness (counterfactual and cycled back) against the prior temperature.

    The effectiveness axis runs from 0 to 100 %, so a change of a few points is drawn at its true size.

    Parameters
    ----------
    fig8 : pandas.DataFrame
        :func:`temperature_sweep` output.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        The three panels (a) composition, (b) reversibility, (c) effectiveness.
    """
    _, axes = plotting.subplots(1, 3, width=3.3, height=3.0)
    plotting.line_with_band(fig8.index, fig8["composition l1"], label="composition", ax=axes[0])
    plotting.line_with_band(
        fig8.index, fig8["reversibility l1"], label="reversibility", color=plotting.PALETTE[1], ax=axes[1]
    )
    plotting.line_with_band(
        fig8.index, fig8["digit accuracy (%)"], label="counterfactual", color=plotting.PALETTE[2], ax=axes[2]
    )
    plotting.line_with_band(
        fig8.index, fig8["cycled-back digit accuracy (%)"], label="cycled back", color=plotting.PALETTE[3], ax=axes[2]
    )
    axes[0].set(xlabel="prior temperature t", ylabel="l1 (0-255)", title="(a) composition (k = 1)")
    axes[1].set(xlabel="prior temperature t", ylabel="l1 (0-255)", title="(b) digit reversibility (k = 1)")
    axes[2].set(xlabel="prior temperature t", ylabel="digit accuracy (%)", title="(c) effectiveness (k = 1)")
    axes[0].set_ylim(bottom=0)
    axes[1].set_ylim(bottom=0)
    axes[2].set_ylim(0, 100)
    axes[2].legend(loc="best", fontsize=8)
    return axes


def plot_temperature_counterfactuals(
    hvae: HierarchicalConditionalVAE,
    test: cd.ColourDigits,
    temperatures: Sequence[float],
    *,
    seed: int,
    shift: int = 5,
    rows: int = 3,
) -> np.ndarray:
    """Figure 9: observation, null intervention, ``do(digit + shift)`` and the cycled-back image, per prior temperature.

    One abducted group (k = 1), as in :func:`temperature_sweep`; one row per (test image, temperature).

    Parameters
    ----------
    hvae : HierarchicalConditionalVAE
        Trained model.
    test : ColourDigits
        Test split.
    temperatures : sequence of float
        Prior temperatures of the non-abducted groups.
    seed : int
        Noise seed.
    shift : int
        Digit change (mod 10).
    rows : int
        Test images to show.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    if not temperatures:
        raise ValueError("temperatures must name at least one temperature, e.g. [0.1, 1.0]")
    enc, idx = digit_hue_encoder(), np.linspace(10, len(test) - 1, rows).astype(int)
    x, pa = test.x[idx], {k: v[idx] for k, v in test.parents.items()}
    target = {**pa, "digit": (pa["digit"] + shift) % 10}
    strips, labels = [], []
    for i in range(rows):
        for t in temperatures:
            f = ax.ModelFunction.sample(hvae, enc, len(idx), seed=seed, abduct_levels=1, temperature=t)
            cf = f(x, pa, target)
            strips.append(np.stack([x, f(x, pa, pa), cf, f(cf, target, pa)], 1)[i])
            labels.append(f"{pa['digit'][i]} -> {target['digit'][i]}, t={t:g}")
    return plotting.image_grid(
        np.stack(strips), col_labels=["x", "null", f"do(d+{shift})", "cycled back"], row_labels=labels, panel=0.8
    )


def plot_temperature_traversal(
    hvae: HierarchicalConditionalVAE, test: cd.ColourDigits, temperatures: Sequence[float], *, seed: int, row: int = 10
) -> np.ndarray:
    """Figure 10: one test image under the four combinations of a digit and a hue intervention, per prior temperature.

    The digit and the hue stand for the paper's smiling and eyeglasses; one abducted group (k = 1).

    Parameters
    ----------
    hvae : HierarchicalConditionalVAE
        Trained model.
    test : ColourDigits
        Test split.
    temperatures : sequence of float
        Prior temperatures of the non-abducted groups (columns).
    seed : int
        Noise seed.
    row : int
        The test image.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    if not temperatures:
        raise ValueError("temperatures must name at least one temperature, e.g. [0.1, 1.0]")
    if not 0 <= row < len(test):
        raise ValueError(f"row must index the test split (0 to {len(test) - 1}), got {row}")
    enc = digit_hue_encoder()
    x, pa = test.x[[row] * 4], {k: np.repeat(v[[row]], 4) for k, v in test.parents.items()}
    target = {
        **pa,
        "digit": np.where([False, True, False, True], (pa["digit"] + 5) % 10, pa["digit"]),
        "hue": np.where([False, False, True, True], (pa["hue"] + 0.5) % 1.0, pa["hue"]),
    }
    cols = [
        ax.ModelFunction.sample(hvae, enc, 4, seed=seed, abduct_levels=1, temperature=t)(x, pa, target)
        for t in temperatures
    ]
    return plotting.image_grid(
        np.stack(cols, 1),
        col_labels=[f"t={t:g}" for t in temperatures],
        row_labels=["null", "do(digit)", "do(hue)", "do(digit, hue)"],
        panel=0.8,
    )


def plot_metric_truth(table: pd.DataFrame) -> np.ndarray:
    """Each metric (and the combined rank) against the true error, one row of panels per intervention.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`true_error_table` output.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    _, axes = plotting.subplots(2, 4, width=3.0, height=2.6)
    for i, k in enumerate(PARENTS):
        sub = table[table.intervention == k]
        for j, metric in enumerate([*TRUTH_METRICS, "combined rank"]):
            plotting.scatter_with_fit(sub[metric], sub["true error"], ax=axes[i, j])
            axes[i, j].set(xlabel=metric, ylabel=f"true error, do({k})" if j == 0 else "")
            axes[i, j].legend(fontsize=7, loc="upper left")
    return axes
