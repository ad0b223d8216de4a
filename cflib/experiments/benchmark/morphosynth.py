"""Notebook 01's MorphoSynth: the learned intensity flow checked against the truth, and the dataset's figures."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...data.morphosynth import MorphoSynth
from ...scm import morpho_attributes
from ...scm.deep import DeepSCM


@dataclass(frozen=True)
class FlowCheck:
    """A conditional flow fitted to MorphoSynth's intensity mechanism and checked against the truth.

    Attributes
    ----------
    flow : ConditionalFlow1D
        The fitted flow of ``i | t``.
    test : slice
        The held-out units (the second half of the data).
    eps_hat : numpy.ndarray
        Noise abducted by the flow on the held-out units.
    roundtrip : float
        Largest ``|predict(abduct(i)) - i|`` on the held-out units (grey levels).
    cf_mae : float
        Mean ``|i*_flow - i*_true|`` under ``do(t = t_star)`` on the held-out units (grey levels).
    t_star : float
        The intervention value.
    cf_errors : numpy.ndarray
        Per held-out unit ``|i*_flow - i*_true|`` (``cf_mae`` is their mean).
    """

    flow: Any
    test: slice
    eps_hat: np.ndarray
    roundtrip: float
    cf_mae: float
    t_star: float
    cf_errors: np.ndarray


def fit_intensity_flow(data: MorphoSynth, *, epochs: int, seed: int, t_star: float = 4.0) -> FlowCheck:
    """Fit the paper's conditional flow of intensity given thickness (Sec. 3.2) and check it against the truth.

    The flow is trained on the first half of the units; the second half measures the exactness of its
    inverse and the error of its counterfactual intensities under ``do(t = t_star)``.

    Parameters
    ----------
    data : MorphoSynth
        Units with their true attribute mechanisms.
    epochs : int
        Training epochs of the flow.
    seed : int
        Seed of the flow's initialisation and training.
    t_star : float
        Thickness of the counterfactual check.

    Returns
    -------
    FlowCheck
    """
    from ...models.flows import ConditionalFlow1D

    half = len(data) // 2
    flow = ConditionalFlow1D(["t"], bounds=(64.0, 255.0), seed=seed).fit(
        data.i[:half], {"t": data.t[:half]}, epochs=epochs, seed=seed, device="cpu"
    )
    test = slice(half, None)
    eps_hat = flow.abduct(data.i[test], {"t": data.t[test]})
    roundtrip = np.max(np.abs(flow.predict(eps_hat, {"t": data.t[test]}) - data.i[test]))
    true_cf_i = morpho_attributes().counterfactual({"t": data.t[test], "i": data.i[test]}, {"t": t_star})["i"]
    flow_cf_i = flow.predict(eps_hat, {"t": np.full(len(eps_hat), t_star)})
    errors = np.abs(flow_cf_i - true_cf_i)
    return FlowCheck(
        flow=flow,
        test=test,
        eps_hat=eps_hat,
        roundtrip=float(roundtrip),
        cf_mae=float(np.mean(errors)),
        t_star=t_star,
        cf_errors=errors,
    )


def plot_morphosynth_attributes(data: MorphoSynth, axes: Any = None) -> np.ndarray:
    """Fig. 1a's data: the joint distribution of thickness and intensity, and the thickness histogram.

    Parameters
    ----------
    data : MorphoSynth
    axes : sequence of two matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import subplots

    if axes is None:
        _, axes = subplots(1, 2, width=3.6, height=3.0)
    axes[0].scatter(data.t, data.i, s=3, alpha=0.3)
    tt = np.linspace(data.t.min(), data.t.max(), 200)
    axes[0].plot(tt, 64 + 191 / (1 + np.exp(-2 * (tt - 2.5))), color="C1", label="i at eps = 0")
    axes[0].set_xlabel("thickness t (px at 28x28)")
    axes[0].set_ylabel("intensity i")
    axes[0].legend()
    axes[1].hist(data.t, bins=40)
    axes[1].set_xlabel("thickness t")
    axes[1].set_ylabel("count")
    return axes


def plot_glyph_skeletons(fonts: Sequence[int] = (0, 3, 6, 9), digit: int = 3, axes: Any = None) -> np.ndarray:
    """The one-pixel skeletons that MorphoSynth thickens: one digit in several fonts.

    Parameters
    ----------
    fonts : sequence of int
        Indices into :data:`cflib.data.morphosynth.FONTS`.
    digit : int
        The digit drawn.
    axes : sequence of matplotlib axes, optional
        One per font.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...data.morphosynth import FONTS, glyph_skeletons
    from ...plotting import subplots

    if axes is None:
        _, axes = subplots(1, len(fonts), width=1.6, height=1.8)
    points, counts = glyph_skeletons()
    for ax, f in zip(np.atleast_1d(axes), fonts, strict=True):
        p = points[f, digit, : counts[f, digit]]
        ax.scatter(p[:, 0], p[:, 1], s=2)
        ax.set_title(FONTS[f].replace(".ttf", ""), fontsize=7)
        ax.set_aspect("equal")
        ax.set_axis_off()
    return axes


def plot_attribute_sweeps(
    data: MorphoSynth, unit: int, t_values: Sequence[float], i_values: Sequence[float]
) -> np.ndarray:
    """True counterfactuals of one unit along thickness (top row) and along intensity (bottom row).

    Parameters
    ----------
    data : MorphoSynth
    unit : int
        The unit whose exogenous noise is kept.
    t_values, i_values : sequence of float
        The same number of thickness and intensity values.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import image_grid

    if len(t_values) != len(i_values):
        raise ValueError(f"t_values and i_values must have the same length, got {len(t_values)} and {len(i_values)}")
    idx = np.array([unit])
    along_t = np.concatenate([data.true_counterfactual({"t": v}, idx=idx)["x"] for v in t_values])
    along_i = np.concatenate([data.true_counterfactual({"i": v}, idx=idx)["x"] for v in i_values])
    return image_grid(
        np.stack([along_t[:, 0], along_i[:, 0]]) / 255,
        row_labels=["do(t)", "do(i)"],
        col_labels=[f"t={a:.1f} / i={b:.0f}" for a, b in zip(t_values, i_values, strict=True)],
        vmin=0,
        vmax=1,
        panel=1.0,
    )


def plot_interventional_vs_counterfactual(
    scm: DeepSCM, obs: Mapping[str, np.ndarray], noise_i: np.ndarray, *, t: float = 4.0, seed: int = 0, axes: Any = None
) -> np.ndarray:
    """Intensities under ``do(t)``: fresh units (interventional) against the same units (counterfactual).

    Parameters
    ----------
    scm : DeepSCM
        The (true) MorphoSynth SCM.
    obs : mapping
        Observed units.
    noise_i : numpy.ndarray
        The units' true intensity noise.
    t : float
        The intervention value.
    seed : int
        Seed of the interventional sample.
    axes : sequence of two matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import subplots

    interv = scm.sample(len(noise_i), {"t": t}, seed=seed)
    cf = scm.counterfactual(obs, {"t": t})
    r_cf = np.corrcoef(noise_i, cf["i"])[0, 1]
    r_int = np.corrcoef(noise_i, interv["i"])[0, 1]
    if axes is None:
        _, axes = subplots(1, 2, width=3.6, height=3.0)
    axes[0].hist([interv["i"], cf["i"]], bins=40, label=["interventional", "counterfactual"])
    axes[0].set_xlabel(f"intensity under t = {t:g}")
    axes[0].legend()
    axes[1].scatter(noise_i, cf["i"], s=2, alpha=0.3, label=f"counterfactual (r = {r_cf:.2f})")
    axes[1].scatter(noise_i, interv["i"], s=2, alpha=0.3, label=f"interventional (r = {r_int:.2f})")
    axes[1].set_xlabel("the unit's eps_i")
    axes[1].set_ylabel(f"intensity under t = {t:g}")
    axes[1].legend(fontsize=7)
    return axes


def plot_flow_fit(
    check: FlowCheck, data: MorphoSynth, t_values: Sequence[float] = (1.8, 2.5, 3.5), axes: Any = None
) -> np.ndarray:
    """The flow's training curve, its abducted noise against the true noise, and ``p(i | t)`` against the truth.

    Parameters
    ----------
    check : FlowCheck
        From :func:`fit_intensity_flow`.
    data : MorphoSynth
        The data it was fitted on.
    t_values : sequence of float
        Thicknesses at which the densities are drawn.
    axes : sequence of three matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import identity_line, subplots

    if axes is None:
        _, axes = subplots(1, 3, width=3.2, height=2.9)
    flow = check.flow
    axes[0].plot(flow.history_)
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("validation NLL")
    axes[1].scatter(data.noise["i"][check.test], check.eps_hat, s=2, alpha=0.3)
    identity_line(axes[1])
    axes[1].set_xlabel("true eps_i")
    axes[1].set_ylabel("abducted by the flow")
    grid = np.linspace(64.5, 254.5, 400)
    for k, tv in enumerate(t_values):
        dens = np.exp(flow.log_prob(grid, {"t": np.full(len(grid), tv)}).detach().numpy())
        z = (np.log((grid - 64) / (255 - grid)) - 2 * (tv - 2.5)) / 0.5
        true_dens = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi) / 0.5 * 191 / ((grid - 64) * (255 - grid))
        axes[2].plot(grid, dens, color=f"C{k}", label=f"t = {tv}")
        axes[2].plot(grid, true_dens, color=f"C{k}", ls="--")
    axes[2].set_xlabel("intensity")
    axes[2].set_ylabel("p(i | t): flow (solid), true (dashed)")
    axes[2].legend(fontsize=7)
    return axes
