"""The chapter's figures: the ECA identity, Figure 2, calibration and power, the toy X-rays and Figures 3-4, 8, 10, 11."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ... import plotting
from ...data.toy_cxr import DISEASES, ToyCXR
from .calibration_power import NULL_FORMS
from .cxr_zoo import AUDIT_TESTS, CNNZooMember
from .synthetic import FIGURE2_TESTS

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


def plot_eca_identity(identity: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Scatter CIT-LR's :math:`\\hat\\Delta` against the ground truth :math:`p(1-p)(1-\\mathrm{ECA})`.

    Parameters
    ----------
    identity : pandas.DataFrame
        Output of :func:`eca_identity_study`.
    ax : matplotlib axes, optional

    Returns
    -------
    matplotlib axes
    """
    if ax is None:
        _, ax = plotting.subplots(1, 1, width=4.2, height=3.6)
    for j, (kind, sub) in enumerate(identity.groupby("dataset", sort=False)):
        ax.scatter(sub["p(1-p)(1-ECA)"], sub["Delta_hat"], s=22, color=plotting.PALETTE[j], label=kind)
    plotting.identity_line(ax)
    ax.set_xlabel("p(1-p)(1-ECA)  (ground truth)")
    ax.set_ylabel(r"$\hat\Delta$ = mean of $\hat y(\hat g - \hat h)$")
    ax.legend(fontsize=8)
    return ax


def plot_figure2(results: pd.DataFrame, *, alpha: float = 0.05) -> np.ndarray:
    """Figure 2: log10 p of each test against ECA, one column per dataset and one row per test.

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`audit_synthetic_zoos`.
    alpha : float
        Level drawn as a line.

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    from ...stats.invariance import plot_pvalue_vs_eca

    n_kinds = results["dataset"].nunique()
    # The authors' plots use y-limits (-30, 0); we zoom in when every p-value is larger than 1e-30.
    y_low = max(-30.0, float(np.nanmin(results[[f"{k}_log10p" for k in FIGURE2_TESTS]].to_numpy())) - 1.0)
    fig, axes = plotting.subplots(
        len(FIGURE2_TESTS), n_kinds, width=2.3, height=2.1, sharex=True, sharey=True, squeeze=False
    )
    for c, (kind, sub) in enumerate(results.groupby("dataset", sort=False)):
        for r, (key, label) in enumerate(FIGURE2_TESTS.items()):
            plot_pvalue_vs_eca(
                sub["eca"],
                sub[f"{key}_log10p"],
                alpha=alpha,
                ax=axes[r, c],
                color=plotting.PALETTE[r],
                ylim=(y_low, 0.5),
                title=kind if r == 0 else None,
            )
            axes[r, c].set_xlabel("ECA" if r == len(FIGURE2_TESTS) - 1 else "")
            axes[r, c].set_ylabel(f"{label}\nlog10 p" if c == 0 else "", fontsize=8)
    return axes


def plot_null_pvalues(null: pd.DataFrame) -> np.ndarray:
    """Histogram and uniform QQ plot of the regression-form p-values under the null.

    Parameters
    ----------
    null : pandas.DataFrame
        First output of :func:`calibration_study`.

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    fig, axes = plotting.subplots(1, 2, width=4.0, height=3.2)
    for j, form in enumerate(NULL_FORMS):
        p = null.loc[null["form"] == form, "p"]
        axes[0].hist(p, bins=20, range=(0, 1), histtype="step", lw=1.6, color=plotting.PALETTE[j], label=form)
        plotting.qq_uniform(p, label=form, ax=axes[1])
    axes[0].set_xlabel("p-value under the null")
    axes[0].set_ylabel("replications")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
    return axes


def plot_power(
    by_n: pd.DataFrame, by_effect: pd.DataFrame, *, effect_for_n: float, n_for_effect: int, alpha: float = 0.05
) -> np.ndarray:
    """Power curves of CIT-LR against n and against the effect strength, with binomial bands.

    Parameters
    ----------
    by_n, by_effect : pandas.DataFrame
        Outputs of :func:`power_study`.
    effect_for_n, n_for_effect : float, int
        The fixed effect of the first curve and the fixed sample size of the second (axis labels).
    alpha : float
        Level.

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    from ...stats.invariance import rejection_summary

    power_ns = sorted(by_n["n"].unique())
    fig, axes = plotting.subplots(1, 2, width=4.0, height=3.2, sharey=True)
    labels = {"n": f"units per replication n (a_effect = {effect_for_n})", "a_effect": f"a_effect (n = {n_for_effect})"}
    for ax, table, xcol in ((axes[0], by_n, "n"), (axes[1], by_effect, "a_effect")):
        for j, (form, sub) in enumerate(table.groupby("form", sort=False)):
            s = [rejection_summary(g["p"], alpha) for _, g in sub.groupby(xcol)]
            xs = sorted(sub[xcol].unique())
            plotting.line_with_band(
                xs,
                [q["rate"] for q in s],
                [q["ci"][0] for q in s],
                [q["ci"][1] for q in s],
                label=f"CIT-LR ({form})",
                color=plotting.PALETTE[j],
                ax=ax,
            )
        ax.axhline(alpha, color=plotting.ALPHA_COLOR, ls="--", lw=1)
        ax.set_xlabel(labels[xcol])
    axes[0].set_xscale("log")
    axes[0].set_xticks(power_ns, [str(m) for m in power_ns])
    axes[0].minorticks_off()
    axes[0].set_ylabel("rejection rate at 0.05")
    axes[0].legend(fontsize=7)
    return axes


def plot_true_counterfactuals(data: ToyCXR) -> Figure:
    """One healthy image and one per disease under do(A = 0, 1, 2), with the amplified A1 - A0 difference.

    Parameters
    ----------
    data : ToyCXR
        Images with their exogenous content.

    Returns
    -------
    matplotlib figure
        From :func:`cflib.plotting.image_grid`.
    """
    show = np.concatenate([np.flatnonzero(data.D.sum(1) == 0)[:1], [np.flatnonzero(data.D[:, k])[0] for k in range(3)]])
    cols = [data.render(A=a, idx=show) for a in range(3)]
    grid = np.stack(cols + [0.5 + 2 * (cols[1] - cols[0])], axis=1)
    labels = [
        f"A={data.A[i]}, " + (", ".join(d for d, v in zip(DISEASES, data.D[i], strict=True) if v) or "healthy")
        for i in show
    ]
    return plotting.image_grid(
        grid, row_labels=labels, col_labels=["do(A=0)", "do(A=1)", "do(A=2)", "2·(A1 − A0)"], vmin=0, vmax=1, panel=1.4
    )


def plot_training_curves(ldms: Mapping[str, Any]) -> np.ndarray:
    """Smoothed losses of the shared autoencoder and of each diffusion model (log scale).

    Parameters
    ----------
    ldms : mapping of str to LatentDiffusion
        Fitted models (``"CLDM+D"`` carries the autoencoder history).

    Returns
    -------
    numpy.ndarray of matplotlib axes
    """
    fig, axes = plotting.subplots(1, 2, width=4, height=2.8)
    curves = {
        "autoencoder": ldms["CLDM+D"].history["vae"],
        **{f"diffusion, {k}": m.history["diffusion"] for k, m in ldms.items()},
    }
    for key, h in curves.items():
        h = np.asarray(h)
        k = max(1, len(h) // 50)
        axes[0 if key == "autoencoder" else 1].plot(np.convolve(h, np.ones(k) / k, mode="valid"), label=key)
    for ax, title in zip(axes, ["autoencoder loss", "diffusion loss"], strict=True):
        ax.set_title(title)
        ax.set_xlabel("step")
        ax.set_ylabel("loss (smoothed)")
        ax.set_yscale("log")
    axes[1].legend(fontsize=8)
    return axes


def plot_counterfactual_rows(data: ToyCXR, show: np.ndarray, sources: Mapping[str, Sequence[np.ndarray]]) -> Figure:
    """Factual image, its counterfactuals under do(A = 0, 1, 2) and the amplified A1 - A0 difference, per source.

    Parameters
    ----------
    data : ToyCXR
        The images.
    show : numpy.ndarray
        Indices of the patients shown.
    sources : mapping of str to list of numpy.ndarray
        Per source, the counterfactuals of ``show`` under each group.

    Returns
    -------
    matplotlib figure
    """
    rows, names = [], []
    for j, i in enumerate(show):
        for kind, imgs in sources.items():
            rows.append([data.images[i]] + [im[j] for im in imgs] + [0.5 + 2 * (imgs[1][j] - imgs[0][j])])
            names.append(
                f"#{i} (A={data.A[i]}, {'+'.join(d[:4] for d, v in zip(DISEASES, data.D[i], strict=True) if v)}) {kind}"
            )
    return plotting.image_grid(
        np.array(rows),
        row_labels=names,
        col_labels=["factual", "do(A=0)", "do(A=1)", "do(A=2)", "2·(A1−A0)"],
        vmin=0,
        vmax=1,
        panel=1.25,
    )


def plot_factual_vs_counterfactual(
    zoo: Sequence[CNNZooMember], test: ToyCXR, counterfactuals: Sequence[np.ndarray], *, disease: str
) -> np.ndarray:
    """Figures 8, 10, 11: one disease's grid of predictions on the factual against the counterfactual image.

    The paper's layout: rows are the observed group, columns the target group of the counterfactual, and a
    last column with the horizontally flipped image, a change no classifier should care about. Each panel
    overlays the disease's classifiers of the first architecture and seed with the smallest and the largest
    shortcut strength, so the invariant classifier and the trace user are read on the same axes.

    Parameters
    ----------
    zoo : sequence of CNNZooMember
        Fitted classifiers.
    test : ToyCXR
        Test images.
    counterfactuals : sequence of numpy.ndarray
        Generated counterfactuals of all test images, one array per target group.
    disease : str
        One of :data:`cflib.data.toy_cxr.DISEASES`.

    Returns
    -------
    numpy.ndarray of matplotlib axes
        Shape ``(n_groups, n_groups + 1)``.
    """
    if disease not in DISEASES:
        raise ValueError(f"disease must be one of {DISEASES}, got {disease!r}")
    if len(counterfactuals) != test.n_groups:
        raise ValueError(f"counterfactuals must hold one array per group ({test.n_groups}), got {len(counterfactuals)}")
    own = [m for m in zoo if m.disease == disease]
    if not own:
        raise ValueError(f"zoo has no classifier of {disease!r}; pass a zoo trained on it")
    rhos = sorted({min(m.rho for m in own), max(m.rho for m in own)})
    pick = [next(m for m in own if m.arch == own[0].arch and m.seed == own[0].seed and m.rho == r) for r in rhos]
    k = test.n_groups
    fig, axes = plotting.subplots(k, k + 1, width=2.1, height=2.0, sharex=True, sharey=True)
    flipped = test.images[:, :, ::-1].copy()
    for colour, m in zip(plotting.PALETTE[: len(pick)], pick, strict=True):
        p0 = m.predict_proba(test.images)
        ys = [m.predict_proba(counterfactuals[a]) for a in range(k)] + [m.predict_proba(flipped)]
        for a in range(k):
            rows = np.asarray(test.A) == a
            for j, y in enumerate(ys):
                axes[a, j].scatter(p0[rows], y[rows], s=5, alpha=0.5, color=colour, label=f"{m.arch}, rho={m.rho:g}")
    for a in range(k):
        for j in range(k + 1):
            ax = axes[a, j]
            ax.set(xlim=(-0.03, 1.03), ylim=(-0.03, 1.03))
            plotting.identity_line(ax)
            if a == 0:
                ax.set_title("flip" if j == k else f"do(A={j})", fontsize=9)
        axes[a, 0].set_ylabel(f"observed A={a}\np(counterfactual)")
    for ax in axes[-1]:
        ax.set_xlabel("p(factual)")
    fig.suptitle(disease, fontsize=10)
    # One legend for the figure, below the panels, so it is neither cut nor drawn over the points.
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=len(labels), fontsize=9, markerscale=3)
    return axes


def plot_audit_pvalues(audit: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Figures 3-4: log10 p of each test in :data:`AUDIT_TESTS` against ECA, per disease; returns the alignment.

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.
    alpha : float
        Level drawn as a line.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(test, disease)``: Pearson ``r``, ``resid_sd`` and ``n``.
    """
    from ...stats.invariance import alignment_stats, plot_pvalue_vs_eca

    fig, axes = plotting.subplots(len(AUDIT_TESTS), len(DISEASES), width=3.0, height=2.5, sharex=True)
    align = {}
    for i, (label, key) in enumerate(AUDIT_TESTS.items()):
        for j, d in enumerate(DISEASES):
            sub = audit[audit.disease == d]
            plot_pvalue_vs_eca(
                sub["ECA"],
                sub[f"log10p {key}"],
                alpha=alpha,
                ylim=(-12, 0.5),
                color=plotting.PALETTE[i],
                title=f"{label}: {d}",
                ax=axes[i, j],
            )
            align[(label, d)] = alignment_stats(sub["ECA"], sub[f"log10p {key}"])
            if j:
                axes[i, j].set_ylabel("")
    return pd.DataFrame(align).T[["r", "resid_sd", "n"]]
