"""Notebook 04, Table 5: the soundness of models on the shapes scene (no exogenous noise)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...data import shapes as sh
from ...metrics import axioms as ax
from ...models.oracles import fit_oracles
from .common import ORACLE_SEED, check_seeds, image_values, sample_do
from .training import train_cached_paper_model


def shapes_study(
    s_train: sh.ShapesScene,
    s_test: sh.ShapesScene,
    *,
    steps: int,
    oracle_steps: int,
    vae_lr: float,
    gan_lr: float,
    run_gan: bool,
    batch_size: int,
    cycles: int,
    seeds: Sequence[int],
    seed: int,
    device: str = "auto",
    cache: bool = True,
) -> tuple[dict[str, Any], pd.DataFrame, pd.Series, dict[str, dict[tuple, np.ndarray]]]:
    """Table 5 on the shapes scene: factor oracles, the Bernoulli beta=1 VAE (and the GAN) per training seed, scored with every metric.

    Parameters
    ----------
    s_train, s_test : ShapesScene
        Training and test scenes.
    steps, oracle_steps : int
        Model and oracle training steps.
    vae_lr, gan_lr : float
        Learning rates.
    run_gan : bool
        Also train the composition-constrained GAN (its target is the training set: the factors are independent).
    batch_size, cycles : int
        Minibatch size and reversibility cycles (composition uses m = 10).
    seeds : sequence of int
        Training seeds: one model of each kind per seed (its noise draw uses the same seed).
    seed : int
        Seed of the do-values (the same for every model; oracles use the chapter's fixed oracle seed).
    device : str
        Torch device.
    cache : bool
        Train the models through the shared model cache (:func:`cflib.runtime.fit_cached`).

    Returns
    -------
    models : dict
        ``"VAE"`` (and ``"GAN"``) -> the first seed's trained model.
    summary : pandas.DataFrame
        :func:`~cflib.metrics.axioms.summarise` by model (mean and std over the seeds).
    oracle_accuracy : pandas.Series
        Each factor oracle's accuracy (%) on clean test images.
    images : dict
        Model -> ``(metric, intervened, measured, step, oracles)`` -> per-test-scene values, shape ``(seeds, scenes)``.
    """
    seeds = check_seeds(seeds)
    enc = ax.ParentEncoder({k: ("categorical", s_train.sizes[k]) for k in sh.FACTORS})
    oracles = fit_oracles(
        s_train.x,
        s_train.parents,
        {k: ("classification", s_train.sizes[k]) for k in sh.FACTORS},
        steps=oracle_steps,
        seed=ORACLE_SEED,
        device=device,
    )
    accuracy = pd.Series(
        {k: 100 * o.score(s_test.x, s_test.parents[k]).mean() for k, o in oracles.items()},
        name="oracle accuracy on clean test images (%)",
    )
    do = sample_do(s_train.parents, len(s_test), seed=seed, names=sh.FACTORS)
    reports: list[pd.DataFrame] = []
    per_seed: dict[str, dict[tuple[str, str, str, int, str], list[np.ndarray]]] = {}
    first: dict[str, Any] = {}
    for sd, s in enumerate(seeds):
        models = {
            "VAE": train_cached_paper_model(
                "bernoulli_b1",
                s_train.x,
                s_train.pa,
                steps=steps,
                lr=vae_lr,
                batch_size=batch_size,
                seed=s,
                device=device,
                cache=cache,
            )
        }
        if run_gan:
            models["GAN"] = train_cached_paper_model(
                "gan",
                s_train.x,
                s_train.pa,
                steps=steps,
                lr=gan_lr,
                batch_size=batch_size,
                seed=s,
                device=device,
                target_indices=np.arange(len(s_train)),
                parent_groups=enc.parent_groups(),
                cache=cache,
            )
        for name, model in models.items():
            first.setdefault(name, model)
            f = ax.ModelFunction.sample(model, enc, len(s_test), seed=s)
            reports.append(
                ax.soundness_report(
                    f, s_test.x, s_test.parents, do, oracles, m=10, cycles=cycles, labels={"model": name, "seed": sd}
                )
            )
            for key, v in image_values(f, s_test.x, s_test.parents, do, oracles, m=10, cycles=cycles).items():
                per_seed.setdefault(name, {}).setdefault(key, []).append(np.asarray(v, dtype=float))
    images = {name: {key: np.stack(v) for key, v in vals.items()} for name, vals in per_seed.items()}
    return first, ax.summarise(pd.concat(reports, ignore_index=True)), accuracy, images
