"""Notebook 04's study: do the proxy metrics rank model configurations like the true counterfactual error?

:func:`score_configurations` scores a family of configurations on one run's shared context;
:func:`rank_agreement` and :func:`within_model_agreement` correlate each proxy with the true error, and
:func:`plot_proxies_vs_truth` draws them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .config import MODEL_LABELS
from .evaluation import evaluate_scm
from .result import BenchmarkResult, at_temperatures


def score_configurations(result: BenchmarkResult, temperatures: Sequence[float]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Score a family of configurations on the same test units: VAEs / HVAE at each temperature, GANs, references.

    Parameters
    ----------
    result : BenchmarkResult
        A MorphoSynth run of :func:`~cflib.experiments.benchmark.run_benchmark` with the VAEs, the HVAE, both GANs and both references.
    temperatures : sequence of float
        Pixel-noise temperatures of the VAEs and the HVAE.

    Returns
    -------
    configs : pandas.DataFrame
        One row per configuration: ``kind`` (``model`` or ``reference``) and the summary of
        :func:`~cflib.experiments.benchmark.evaluation.evaluate_scm` (composition, effectiveness, Fréchet, CLD, true error).
    per_image : dict
        Configuration label -> per-image arrays.
    """
    rows, per_image = [], {}

    def add(label: str, kind: str, ev: dict[str, Any]) -> None:
        rows.append({"configuration": label, "kind": kind, **ev["summary"]})
        per_image[label] = ev["per_image"]

    for mdl, T, ev in at_temperatures(result, ("vae_fixed", "vae_learned", "hvae"), temperatures):
        add(f"{MODEL_LABELS[mdl]} T={T}", "model", ev)
    ctx = result.context
    for mdl in ("gan", "gan_ft"):
        add(MODEL_LABELS[mdl], "model", evaluate_scm(ctx, result.models[mdl], mdl))
    for ref in ("identity", "true"):
        add(MODEL_LABELS[ref], "reference", evaluate_scm(ctx, result.models[ref], ref))
    return pd.DataFrame(rows).set_index("configuration"), per_image


def oriented_proxy(configs: pd.DataFrame, column: str) -> np.ndarray:
    """A proxy metric oriented so that lower is better (digit accuracy enters as ``1 - accuracy``).

    Parameters
    ----------
    configs : pandas.DataFrame
        From :func:`score_configurations`.
    column : str
        A summary column.

    Returns
    -------
    numpy.ndarray
    """
    v = configs[column].to_numpy(float)
    return 1 - v if " d do(d)" in column else v


def rank_agreement(configs: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation across configurations between each proxy metric and the true counterfactual error.

    Parameters
    ----------
    configs : pandas.DataFrame
        From :func:`score_configurations`.

    Returns
    -------
    pandas.DataFrame
        Rows the proxies; columns ``(Spearman rho | p-value, all configurations | models only)``; NaN where
        a proxy or the truth is constant on the set (no ranking).
    """
    from scipy import stats

    proxies = [c for c in configs.columns if c.startswith("composition") or c in ("Fréchet", "CLD")]
    proxies += [c for c in configs.columns if c.startswith("effectiveness")]
    agree = []
    for name in proxies:
        for subset, mask in (
            ("all configurations", np.ones(len(configs), bool)),
            ("models only", (configs["kind"] == "model").to_numpy()),
        ):
            a, b = oriented_proxy(configs, name)[mask], configs["true error"].to_numpy()[mask]
            r = stats.spearmanr(a, b) if np.ptp(a) > 0 and np.ptp(b) > 0 else None
            agree.append(
                {
                    "proxy": name,
                    "set": subset,
                    "Spearman rho": np.nan if r is None else r.statistic,
                    "p-value": np.nan if r is None else r.pvalue,
                    "n": int(mask.sum()),
                }
            )
    return pd.DataFrame(agree).pivot_table(
        index="proxy", columns="set", values=["Spearman rho", "p-value"], dropna=False
    )


def within_model_agreement(per_image: Mapping[str, Any]) -> pd.DataFrame:
    """Spearman correlation over test images between per-image composition and per-image true error.

    Only the trained models at their benchmark temperatures (0.1 and 0.3) and the GANs are kept.

    Parameters
    ----------
    per_image : mapping
        From :func:`score_configurations`.

    Returns
    -------
    pandas.DataFrame
        Rows configurations, columns interventions, values Spearman's rho.
    """
    from scipy import stats

    within = []
    for label, pi in per_image.items():
        if not (label.endswith("T=0.1") or label.endswith("T=0.3") or label.startswith("GAN")):
            continue
        c1 = pi["composition"]["l1_pixel"][:, 0]
        for do, err in pi["true_error"].items():
            if np.ptp(c1) == 0 or np.ptp(err) == 0:
                continue
            r = stats.spearmanr(c1, err)
            within.append({"configuration": label, "intervention": f"do({do})", "rho": r.statistic, "p": r.pvalue})
    return pd.DataFrame(within).pivot_table(index="configuration", columns="intervention", values="rho")


def agreement_summary(agreement: pd.DataFrame) -> str:
    """One line per headline proxy: its Spearman rho and p-value against the true error, models only.

    Parameters
    ----------
    agreement : pandas.DataFrame
        From :func:`rank_agreement`.

    Returns
    -------
    str
    """
    lines = []
    for name in (
        "composition l1_pixel m=1",
        "Fréchet",
        "CLD",
        "effectiveness t do(t)",
        "effectiveness i do(i)",
        "effectiveness d do(d)",
    ):
        r, p = agreement[("Spearman rho", "models only")][name], agreement[("p-value", "models only")][name]
        lines.append(
            f"{name}: Spearman rho = {r:+.2f} (p = {p:.2g}) against the true error across model configurations"
        )
    return "\n".join(lines)


def plot_proxies_vs_truth(configs: pd.DataFrame, proxies: Sequence[str], axes: Any = None) -> np.ndarray:
    """Each configuration's oriented proxy metric against its true counterfactual error, one panel per proxy.

    Parameters
    ----------
    configs : pandas.DataFrame
        From :func:`score_configurations`.
    proxies : sequence of str
        Summary columns.
    axes : sequence of matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ...plotting import subplots

    if axes is None:
        _, axes = subplots(1, len(proxies), width=2.8, height=2.8)
    axes = np.atleast_1d(axes)
    colours = {"vae_fixed": "C0", "vae_learned": "C1", "hvae": "C2"}
    for ax, name in zip(axes, proxies, strict=True):
        for label, row in configs.iterrows():
            c = next(
                (col for k, col in colours.items() if label.startswith(MODEL_LABELS[k])),
                "C3" if row["kind"] == "model" else "0.2",
            )
            ax.scatter(
                oriented_proxy(configs, name)[configs.index.get_loc(label)],
                row["true error"],
                color=c,
                s=18,
                marker="o" if row["kind"] == "model" else "*",
            )
        ax.set_xlabel(name, fontsize=8)
    axes[0].set_ylabel("true counterfactual error (pixel l1)")
    for label in (MODEL_LABELS["identity"], MODEL_LABELS["true"]):
        axes[0].annotate(
            label.split(" (")[0],
            (oriented_proxy(configs, proxies[0])[configs.index.get_loc(label)], configs.loc[label, "true error"]),
            fontsize=7,
        )
    return axes
