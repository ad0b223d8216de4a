"""Notebook 05: the soundness metrics against the true counterfactual error (beyond the paper).

A zoo of counterfactual functions of varying quality, per training seed, and each function's metrics
beside its true error (Colour-Digits' true counterfactuals are known).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import cflib.data.colour_digits as cd

from ...metrics import axioms as ax
from ...models.baselines import GroundTruth, Identity, NoEncoderVAE
from .common import PARENTS, check_seeds, digit_hue_encoder
from .training import colour_digits_vae, train_hvaes

#: Notebook 05's VAE zoo: name -> (training SCM, beta, likelihood, full training?).
ZOO_VAES = {
    "VAE": ("unconfounded", 1.0, "bernoulli", True),
    "VAE beta=8": ("unconfounded", 8.0, "bernoulli", True),
    "Normal VAE beta=5": ("unconfounded", 5.0, "normal", True),
    "VAE early-stopped": ("unconfounded", 1.0, "bernoulli", False),
    "VAE confounded": ("confounded", 1.0, "bernoulli", True),
    # the larger zoo of issue 20 (B1 was undecided on 13 functions): more KL weights, likelihoods and training regimes
    "VAE beta=0.2": ("unconfounded", 0.2, "bernoulli", True),
    "VAE beta=2": ("unconfounded", 2.0, "bernoulli", True),
    "VAE beta=30": ("unconfounded", 30.0, "bernoulli", True),
    "Normal VAE beta=1": ("unconfounded", 1.0, "normal", True),
    "VAE beta=8 early-stopped": ("unconfounded", 8.0, "bernoulli", False),
    "VAE confounded beta=8": ("confounded", 8.0, "bernoulli", True),
    "Normal VAE confounded beta=5": ("confounded", 5.0, "normal", True),
    "VAE confounded early-stopped": ("confounded", 1.0, "bernoulli", False),
}

#: The soundness metrics compared with the true error (lower is better for each).
TRUTH_METRICS = ["composition", "reversibility", "effectiveness error"]


def truth_zoo(
    data: Mapping[str, cd.ColourDigits],
    n: int,
    *,
    steps: int,
    early_steps: int,
    levels: int,
    hvae_beta: float,
    hvae_steps: int,
    batch_size: int,
    seed: int,
    device: str = "auto",
    cache: bool = True,
) -> dict[str, ax.CounterfactualFunction]:
    """A zoo of counterfactual functions of varying quality, each with its noise fixed for ``n`` test images.

    The identity, the ground truth, the VAE without encoder, the VAEs of :data:`ZOO_VAES` and a
    hierarchical VAE at every number of abducted levels.

    Parameters
    ----------
    data : dict
        ``"unconfounded"`` and ``"confounded"`` training splits.
    n : int
        Test images.
    steps, early_steps : int
        Training steps of a fully trained and of the early-stopped VAE.
    levels : int
        Latent groups of the hierarchical VAE.
    hvae_beta : float
        Its KL weight.
    hvae_steps, batch_size : int
        Its training steps; the minibatch size of all models.
    seed : int
        Training seed: model, training and noise seed of every function.
    device : str
        Torch device.
    cache : bool
        Train through the shared model cache (:func:`cflib.runtime.fit_cached`; notebook 04 trains the
        same beta = 1 VAE and hierarchical VAE).

    Returns
    -------
    dict
        Name -> counterfactual function.
    """
    enc = digit_hue_encoder()
    vaes = {
        name: colour_digits_vae(
            data[scm].x,
            data[scm].pa,
            beta=b,
            likelihood=lik,
            steps=steps if full else early_steps,
            batch_size=batch_size,
            seed=seed,
            device=device,
            cache=cache,
        )
        for name, (scm, b, lik, full) in ZOO_VAES.items()
    }
    (hvae,) = train_hvaes(
        data["unconfounded"],
        levels=levels,
        beta=hvae_beta,
        steps=hvae_steps,
        batch_size=batch_size,
        seeds=[seed],
        device=device,
        cache=cache,
    )
    zoo: dict[str, ax.CounterfactualFunction] = {
        "identity": Identity(enc.names),
        "ground truth": GroundTruth(cd.true_counterfactual, enc.names),
        "VAE w/o encoder": NoEncoderVAE(vaes["VAE"], enc, n, seed=seed),
    }
    zoo |= {name: ax.ModelFunction.sample(m, enc, n, seed=seed) for name, m in vaes.items()}
    return zoo | {
        f"HVAE k={k}": ax.ModelFunction.sample(hvae, enc, n, seed=seed, abduct_levels=k) for k in range(levels + 1)
    }


def truth_study(
    data: Mapping[str, cd.ColourDigits],
    test: cd.ColourDigits,
    do: Mapping[str, np.ndarray],
    oracles: Mapping[str, Any],
    *,
    seeds: Sequence[int],
    **zoo_kwargs: Any,
) -> dict[int, pd.DataFrame]:
    """:func:`true_error_table` of one :func:`truth_zoo` per training seed.

    Parameters
    ----------
    data : dict
        ``"unconfounded"`` and ``"confounded"`` training splits.
    test : ColourDigits
        Test split.
    do : dict
        ``"digit"`` and ``"hue"`` -> counterfactual values (the same for every seed).
    oracles : dict
        Digit and hue oracles.
    seeds : sequence of int
        Training seeds, one zoo each.
    **zoo_kwargs
        The other arguments of :func:`truth_zoo` (``steps``, ``early_steps``, ``levels``, ...).

    Returns
    -------
    dict
        Seed -> the zoo's table.
    """
    return {
        s: true_error_table(truth_zoo(data, len(test), seed=s, **zoo_kwargs), test, do, oracles)
        for s in check_seeds(seeds)
    }


def true_error_table(
    zoo: Mapping[str, ax.CounterfactualFunction],
    test: cd.ColourDigits,
    do: Mapping[str, np.ndarray],
    oracles: Mapping[str, Any],
) -> pd.DataFrame:
    """Soundness metrics and the true counterfactual error of every function, per intervention.

    Parameters
    ----------
    zoo : dict
        Name -> function, with the true one under ``"ground truth"``.
    test : ColourDigits
        Test split.
    do : dict
        ``"digit"`` and ``"hue"`` -> counterfactual values.
    oracles : dict
        Digit and hue oracles.

    Returns
    -------
    pandas.DataFrame
        One row per (model, intervention): composition^(1), reversibility^(1), the effectiveness error
        (100 - digit accuracy, or hue error x 100), the true error ``d(f(x, pa, pa*), f_true(x, pa, pa*))``
        and the ``combined rank`` (mean rank of the three metrics within the intervention).
    """
    if "ground truth" not in zoo:
        raise ValueError("zoo needs the true counterfactual function under the name 'ground truth'")
    truth, rows = zoo["ground truth"], []
    for name, f in zoo.items():
        comp = ax.composition(f, test.x, test.parents, m=1)[0].mean()
        for k in PARENTS:
            scored = ax.effectiveness(f, test.x, test.parents, k, do[k], oracles, return_images=True)
            assert isinstance(scored, tuple)  # return_images=True: (scores, counterfactual images)
            eff, xs = scored
            rows.append(
                {
                    "model": name,
                    "intervention": k,
                    "composition": comp,
                    "reversibility": ax.reversibility(f, test.x, test.parents, k, do[k], cycles=1)[0].mean(),
                    "effectiveness error": 100 * (1 - eff["digit"].mean()) if k == "digit" else 100 * eff["hue"].mean(),
                    "true error": ax.l1_distance(xs, truth(test.x, test.parents, {**test.parents, k: do[k]})).mean(),
                }
            )
    table = pd.DataFrame(rows)
    table["combined rank"] = table.groupby("intervention")[TRUTH_METRICS].rank().mean(axis=1)
    return table
