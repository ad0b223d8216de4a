"""Notebook 03: the soundness study of Colour-Digit models (Tables 1-4, Figure 1's models).

The data of Table 1's three blocks, the main and alternative oracle families, the model configurations,
and the study that trains every configuration per training seed and scores it with every metric.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import cflib.data.colour_digits as cd

from ...metrics import axioms as ax
from ...models.baselines import MODEL_LABELS, Identity, NoEncoderVAE
from ...models.oracles import fit_oracles
from .common import (
    DIGIT_HUE_ORACLES,
    ORACLE_SEED,
    PARENTS,
    check_seeds,
    colour_digits_test,
    digit_hue_encoder,
    image_values,
    sample_do,
)
from .training import train_cached_paper_model


def colour_digit_blocks(
    *, replicas: int, resolution: int, outlier_p: float, hue_bins: int, n_test: int, seed: int
) -> tuple[dict[str, cd.ColourDigits], dict[str, np.ndarray], cd.ColourDigits, dict[str, dict[str, np.ndarray]]]:
    """Table 1's data: training splits of the three SCMs, their SI indices, the test split and do-values per block.

    Parameters
    ----------
    replicas, resolution : int
        Training copies per exemplar and image side.
    outlier_p : float
        Outlier probability of the full-support SCM.
    hue_bins : int
        Hue bins of the simulated intervention.
    n_test : int
        Unconfounded test images.
    seed : int
        Base seed (training ``seed``, test ``seed + 1``, do-values ``seed + 10 + i``).

    Returns
    -------
    train : dict
        Block -> training split.
    si : dict
        Block -> simulated-intervention indices (the block without full support keeps its holes).
    test : ColourDigits
    do : dict
        Block -> parent -> counterfactual values drawn from that block's training marginal.
    """
    train = {
        b: cd.colour_digits(b, "train", replicas=replicas, resolution=resolution, outlier_p=outlier_p, seed=seed)
        for b in cd.SCMS
    }
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the confounded scenario lacks full support: the point of the experiment
        si = {b: cd.simulated_intervention(d.parents, bins=hue_bins, seed=seed) for b, d in train.items()}
    test = colour_digits_test(resolution, n_test, seed=seed + 1)
    do = {b: sample_do(d.parents, len(test), seed=seed + 10, names=PARENTS) for b, d in train.items()}
    return train, si, test, do


def oracle_families(
    train: Mapping[str, cd.ColourDigits], si: Mapping[str, np.ndarray], *, steps: int, device: str = "auto"
) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """The main oracles (CNN, unconfounded data) and the three alternative families of Tables 2-4.

    Parameters
    ----------
    train : dict
        Block -> training split (needs ``"unconfounded"`` and ``"confounded_full_support"``).
    si : dict
        Block -> simulated-intervention indices.
    steps : int
        CNN training steps.
    device : str
        Torch device.

    Returns
    -------
    oracles : dict
        Parent -> main oracle.
    extra : dict
        ``"biased"``, ``"biased + SI"``, ``"linear"`` -> parent -> oracle.
    """
    uc, biased = train["unconfounded"], train["confounded_full_support"]
    oracles = fit_oracles(uc.x, uc.parents, DIGIT_HUE_ORACLES, steps=steps, seed=ORACLE_SEED, device=device)
    extra = {
        "biased": fit_oracles(
            biased.x, biased.parents, DIGIT_HUE_ORACLES, steps=steps, seed=ORACLE_SEED, device=device
        ),
        "biased + SI": fit_oracles(
            biased.x,
            biased.parents,
            DIGIT_HUE_ORACLES,
            steps=steps,
            seed=ORACLE_SEED,
            indices=si["confounded_full_support"],
            device=device,
        ),
        "linear": fit_oracles(uc.x, uc.parents, DIGIT_HUE_ORACLES, arch="linear"),
    }
    return oracles, extra


def table1_configs(models: Sequence[str], gan_configs: Sequence[Sequence[str]]) -> list[tuple[str, str, str]]:
    """Table 1's model configurations ``(block, SI flag, model)``: every VAE in every block and SI setting, then the GANs.

    Parameters
    ----------
    models : sequence of str
        VAE configurations (keys of :data:`cflib.models.baselines.PAPER_MODELS`).
    gan_configs : sequence of [block, SI flag]
        GAN trainings.

    Returns
    -------
    list of tuple
    """
    configs = [("unconfounded", "no", name) for name in models]
    configs += [("confounded", flag, name) for flag in ("no", "yes") for name in models]
    configs += [("confounded_full_support", flag, name) for flag in ("no", "yes") for name in models]
    return configs + [(block, flag, "gan") for block, flag in gan_configs]


def soundness_study(
    configs: Sequence[tuple[str, str, str]],
    train: Mapping[str, cd.ColourDigits],
    si: Mapping[str, np.ndarray],
    test: cd.ColourDigits,
    do: Mapping[str, Mapping[str, np.ndarray]],
    oracles: Mapping[str, Any],
    extra: Mapping[str, Mapping[str, Any]],
    *,
    seeds: Sequence[int],
    steps: int,
    gan_steps: int,
    gan_lr: float,
    batch_size: int,
    width: int,
    m: int,
    cycles: int,
    device: str = "auto",
    cache: bool = True,
) -> tuple[
    pd.DataFrame,
    dict[tuple[str, str, str, int], Any],
    dict[tuple[str, str, str], dict[tuple[str, str, str, int, str], np.ndarray]],
]:
    """Train every configuration for every training seed, add the identity and no-encoder baselines, and score them all.

    Parameters
    ----------
    configs : sequence of (block, SI flag, model)
        From :func:`table1_configs`; the first one's model is the VAE behind the no-encoder baseline.
    train, si, test, do :
        From :func:`colour_digit_blocks`.
    oracles, extra :
        From :func:`oracle_families`.
    seeds : sequence of int
        Training seeds: one separately trained model per configuration and seed (its noise draw uses the same seed).
    steps, gan_steps : int
        VAE and GAN training steps.
    gan_lr : float
        GAN learning rate.
    batch_size, width : int
        Minibatch size and convolution channels.
    m, cycles : int
        Composition powers and reversibility cycles.
    device : str
        Torch device.
    cache : bool
        Train through the shared model cache (:func:`train_cached_paper_model`).

    Returns
    -------
    summary : pandas.DataFrame
        :func:`~cflib.metrics.axioms.summarise` by block, SI and model (mean and std over the seeds).
    trained : dict
        ``(block, SI flag, model, seed index)`` -> trained model.
    images : dict
        ``(block, SI flag, model label)`` -> ``(metric, intervened, measured, step, oracles)`` -> per-test-image
        values, shape ``(seeds, test images)``: the claims decide on the seeds, each the mean over its images.
    """
    seeds = check_seeds(seeds)
    enc = digit_hue_encoder()
    reports: list[pd.DataFrame] = []
    trained: dict[tuple[str, str, str, int], Any] = {}
    per_seed: dict[tuple[str, str, str], dict[tuple[str, str, str, int, str], list[np.ndarray]]] = {}

    def score(f: ax.CounterfactualFunction, block: str, flag: str, name: str, sd: int) -> None:
        labels = {"block": block, "SI": flag, "model": name, "seed": sd}
        reports.append(
            ax.soundness_report(
                f, test.x, test.parents, do[block], oracles, m=m, cycles=cycles, labels=labels, extra_oracles=extra
            )
        )
        values = image_values(f, test.x, test.parents, do[block], oracles, m=m, cycles=cycles, extra=extra)
        stack = per_seed.setdefault((block, flag, name), {})
        for key, v in values.items():
            stack.setdefault(key, []).append(np.asarray(v, dtype=float))

    for sd, s in enumerate(seeds):
        for block, flag, name in configs:
            d, gan = train[block], name == "gan"
            model = train_cached_paper_model(
                name,
                d.x,
                d.pa,
                steps=gan_steps if gan else steps,
                lr=gan_lr if gan else None,
                batch_size=batch_size,
                seed=s,
                indices=si[block] if flag == "yes" else None,
                target_indices=si[block],
                parent_groups=enc.parent_groups(),
                device=device,
                width=width,
                cache=cache,
            )
            trained[block, flag, name, sd] = model
            score(
                ax.ModelFunction.sample(model, enc, len(test), seed=s), block, flag, MODEL_LABELS[name], sd
            )  # one function per test image
        score(Identity(enc.names), "unconfounded", "no", "identity", sd)
        score(
            NoEncoderVAE(trained[(*configs[0], sd)], enc, len(test), seed=s),
            "unconfounded",
            "no",
            "VAE w/o encoder",
            sd,
        )
    images = {cfg: {key: np.stack(v) for key, v in vals.items()} for cfg, vals in per_seed.items()}
    return ax.summarise(pd.concat(reports, ignore_index=True), by=["block", "SI", "model"]), trained, images


def figure1_models(
    trained: Mapping[tuple[str, str, str, int], Any], models: Sequence[str], configs: Sequence[tuple[str, str, str]]
) -> tuple[Any, Any]:
    """Figure 1's disentangled and entangled models (Normal VAE beta=5 with full support + SI, and without either).

    Without the Normal VAE in ``models``, the last configuration and the first VAE stand in.

    Parameters
    ----------
    trained : dict
        :func:`soundness_study`'s trained models, keyed ``(block, SI flag, model, seed index)``.
    models : sequence of str
        The VAE configurations that were trained.
    configs : sequence of (block, SI flag, model)
        :func:`table1_configs` output.

    Returns
    -------
    tuple
        ``(disentangled, entangled)``.
    """
    if "normal_b5" in models:
        return trained["confounded_full_support", "yes", "normal_b5", 0], trained["confounded", "no", "normal_b5", 0]
    return trained[(*configs[-1], 0)], trained["confounded", "no", models[0], 0]
