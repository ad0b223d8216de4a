"""The figures of notebooks 02 and 03: image grids of counterfactuals, composition curves, CLD histograms, P1/P2, fine-tuning."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...metrics.minimality import identity_cld
from .config import MODEL_LABELS

if TYPE_CHECKING:
    from .result import BenchmarkResult


def composition_grid(
    result: BenchmarkResult, models: Sequence[str], units: Sequence[int] = (0, 1, 2), fig: Any = None
) -> np.ndarray:
    """Figs 2 / 3 / 6 / 8: each row one unit of one model, columns the factual and cycles 1..m.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`~cflib.experiments.benchmark.run_benchmark`.
    models : sequence of str
        Model keys, one block of rows each.
    units : sequence of int
        Shown test units (indices into the first ``n_show``).
    fig : matplotlib.figure.Figure, optional
        Figure to draw in.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import image_grid

    rows, labels = [], []
    for mdl in models:
        for u in units:
            rows.append(result.figures["composition"][mdl][u])
            labels.append(
                f"{MODEL_LABELS[mdl].split(' (')[0] if mdl not in ('vae_fixed', 'vae_learned') else MODEL_LABELS[mdl]} #{u}"
            )
    imgs = np.stack(rows)
    cols = ["x"] + [f"m={k}" for k in range(1, imgs.shape[1])]
    return image_grid(_display(imgs), row_labels=labels, col_labels=cols, vmin=0, vmax=1, panel=0.75, fig=fig)


def intervention_grid(result: BenchmarkResult, models: Sequence[str], unit: int = 0, fig: Any = None) -> np.ndarray:
    """Figs 4 / 5 / 7 / 9 with the true counterfactual as an extra row: factual, then one column per intervention.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`~cflib.experiments.benchmark.run_benchmark`.
    models : sequence of str
        Model keys, one row each.
    unit : int
        The shown test unit (an index into the first ``n_show``).
    fig : matplotlib.figure.Figure, optional
        Figure to draw in.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import image_grid

    parents = tuple(result.figures["do_values"])
    rows = [np.stack([result.figures["factual"][unit]] + [result.figures["true"][p][unit] for p in parents])]
    labels = ["true"]
    for mdl in models:
        rows.append(
            np.stack(
                [result.figures["factual"][unit]] + [result.figures["interventions"][mdl][p][unit] for p in parents]
            )
        )
        labels.append(MODEL_LABELS[mdl])
    fp = result.figures["factual_parents"]
    dv = result.figures["do_values"]
    cols = ["factual\n" + ", ".join(f"{p}={_fmt(fp[p][unit])}" for p in parents)] + [
        f"do({p}={_fmt(dv[p][unit])})" for p in parents
    ]
    return image_grid(_display(np.stack(rows)), row_labels=labels, col_labels=cols, vmin=0, vmax=1, panel=1.0, fig=fig)


def _fmt(v: Any) -> str:
    v = float(v)
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 or abs(v) >= 20 else f"{v:.1f}"


def _display(imgs: np.ndarray) -> np.ndarray:
    # (rows, cols, C, H, W) -> grey (rows, cols, H, W) or colour (rows, cols, H, W, 3)
    if imgs.shape[2] == 1:
        return imgs[:, :, 0]
    return np.moveaxis(imgs, 2, -1)


def plot_composition_curves(
    result: BenchmarkResult,
    models: Sequence[str],
    distances: Sequence[str] = ("l1_pixel", "l1_embedding", "perceptual"),
    axes: Any = None,
) -> np.ndarray:
    """Mean composition distance against the number of cycles, with 95 % bands over images (Table 1's curves).

    Parameters
    ----------
    result : BenchmarkResult
    models : sequence of str
        Model keys.
    distances : sequence of str
        One panel per distance.
    axes : sequence of matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import line_with_band, subplots

    if axes is None:
        _, axes = subplots(1, len(distances), width=3.6, height=3.0)
    axes = np.atleast_1d(axes)
    for ax, dist in zip(axes, distances, strict=True):
        for mdl in models:
            arr = result.per_image[mdl]["composition"][dist]
            se = arr.std(0, ddof=1) / np.sqrt(len(arr))
            line_with_band(
                np.arange(1, arr.shape[1] + 1),
                arr.mean(0),
                arr.mean(0) - 1.96 * se,
                arr.mean(0) + 1.96 * se,
                label=MODEL_LABELS[mdl],
                ax=ax,
            )
        ax.set_xlabel("cycles m")
        ax.set_title(dist)
    axes[0].set_ylabel("distance to x (mean, 95% band)")
    axes[0].legend(fontsize=7)
    return axes


def plot_cld_histograms(
    result: BenchmarkResult, models: Sequence[str], *, unit: str = "test image", ax: Any = None
) -> Any:
    """Per-image CLD of each model, with the identity map's value ``log(0.8 + 0.2e)`` marked.

    Parameters
    ----------
    result : BenchmarkResult
    models : sequence of str
        Model or reference keys.
    unit : str
        What a test unit is called on the axis label.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    for mdl in models:
        ax.hist(result.per_image[mdl]["cld"], bins=30, histtype="step", label=MODEL_LABELS[mdl])
    ident = identity_cld(result.config.cld_weights)
    ax.axvline(ident, color="0.3", ls="--", label=f"identity {ident:.4f}")
    ax.set_xlabel(f"CLD per {unit}")
    ax.set_ylabel(f"{unit}s")
    ax.legend(fontsize=6)
    return ax


def plot_p1_p2(table: pd.DataFrame, ax: Any = None) -> Any:
    """Each model's ``P1 = P(S_x* <= div)`` against ``P2 = P(S_x >= div)`` (Table 5's minimality columns).

    Parameters
    ----------
    table : pandas.DataFrame
        ``result.table_realism_minimality``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    ax.scatter(table["P1"], table["P2"])
    for name, row in table.iterrows():
        ax.annotate(name.split(" (")[0] if "VAE" not in name else name, (row["P1"], row["P2"]), fontsize=6)
    ax.set_xlabel("P1 = P(S_x* <= div)")
    ax.set_ylabel("P2 = P(S_x >= div)")
    return ax


def plot_finetuning_history(history: Mapping[str, Sequence[float]], axes: Any = None) -> np.ndarray:
    """The HVAE's counterfactual fine-tuning: classifier loss, NELBO against its constraint, Lagrange multiplier.

    Parameters
    ----------
    history : mapping
        ``result.finetune_history["hvae_cf"]`` (``cf_loss``, ``nelbo``, ``constraint``, ``lambda``).
    axes : sequence of three matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import subplots

    if axes is None:
        _, axes = subplots(1, 3, width=3.0, height=2.6)
    axes[0].plot(history["cf_loss"])
    axes[0].set_title("classifier loss on x*")
    axes[1].plot(history["nelbo"])
    axes[1].axhline(history["constraint"][0], color="0.3", ls="--")
    axes[1].set_title("NELBO per pixel (constraint dashed)")
    axes[2].plot(history["lambda"])
    axes[2].set_title("Lagrange multiplier")
    for ax, what in zip(axes, ("cross-entropy", "NELBO per pixel", "λ"), strict=False):
        ax.set_ylabel(what)
    for ax in axes:
        ax.set_xlabel("step")
    return axes
