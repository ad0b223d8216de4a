"""Notebook 04, the trade-offs between effectiveness and composition / reversibility (Tables 6-7, Figure 8).

Per-image trade-off values of one counterfactual function, the beta sweep of conditional VAEs (Table 7),
partial abduction of hierarchical VAEs (Table 6) and their prior temperature (Figure 8).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

import cflib.data.colour_digits as cd

from ...metrics import axioms as ax
from ...models.hvae import HierarchicalConditionalVAE
from .common import check_seeds, digit_hue_encoder
from .training import colour_digits_vae


def trade_off_images(
    f: ax.CounterfactualFunction, test: cd.ColourDigits, do_digit: np.ndarray, oracles: Mapping[str, Any]
) -> dict[str, np.ndarray]:
    """Per test image: composition^(1), digit reversibility^(1) and effectiveness under a digit intervention.

    Parameters
    ----------
    f : CounterfactualFunction
        The model with its noise fixed per test image.
    test : ColourDigits
        Test split.
    do_digit : numpy.ndarray
        Counterfactual digits.
    oracles : dict
        Digit and hue oracles.

    Returns
    -------
    dict
        ``composition l1``, ``reversibility l1``, ``digit accuracy (%)`` (0 or 100 per image) and ``hue error (x100)``, each ``(n,)``.
    """
    eff = ax.effectiveness(f, test.x, test.parents, "digit", do_digit, oracles)
    assert isinstance(eff, dict)  # without return_images: measured parent -> per-image scores
    return {
        "composition l1": ax.composition(f, test.x, test.parents, m=1)[0],
        "reversibility l1": ax.reversibility(f, test.x, test.parents, "digit", do_digit, cycles=1)[0],
        "digit accuracy (%)": 100 * np.asarray(eff["digit"], dtype=float),
        "hue error (x100)": 100 * np.asarray(eff["hue"], dtype=float),
    }


def _bits_per_dim(elbo: Any, test: cd.ColourDigits) -> Any:
    return -elbo / np.prod(test.x.shape[1:]) / np.log(2)


def _table(images: Mapping[Any, Mapping[str, np.ndarray]], index: str) -> pd.DataFrame:
    return pd.DataFrame({k: {c: float(v.mean()) for c, v in cols.items()} for k, cols in images.items()}).T.rename_axis(
        index
    )


def _stack_seeds(per_seed: Sequence[Mapping[Any, Mapping[str, np.ndarray]]]) -> dict[Any, dict[str, np.ndarray]]:
    """``[row -> column -> (images,)]`` per seed -> ``row -> column -> (seeds, images)``."""
    return {
        r: {c: np.stack([np.asarray(one[r][c], dtype=float) for one in per_seed]) for c in per_seed[0][r]}
        for r in per_seed[0]
    }


def beta_sweep(
    train: cd.ColourDigits,
    test: cd.ColourDigits,
    do_digit: np.ndarray,
    oracles: Mapping[str, Any],
    betas: Sequence[float],
    *,
    steps: int,
    batch_size: int,
    seeds: Sequence[int],
    device: str = "auto",
    cache: bool = True,
) -> tuple[pd.DataFrame, dict[float, dict[str, np.ndarray]]]:
    """Table 7: one conditional VAE per KL weight and training seed, its NLL bound and the means of :func:`trade_off_images`.

    Parameters
    ----------
    train, test : ColourDigits
        Unconfounded training and test splits.
    do_digit : numpy.ndarray
        Counterfactual digits of the test images.
    oracles : dict
        Digit and hue oracles.
    betas : sequence of float
        KL weights.
    steps, batch_size : int
        Training steps and minibatch size.
    seeds : sequence of int
        Training seeds (model, training and noise seed of each VAE).
    device : str
        Torch device.
    cache : bool
        Train through the shared model cache (:func:`cflib.runtime.fit_cached`).

    Returns
    -------
    table : pandas.DataFrame
        One row per beta: the means over seeds and test images.
    images : dict
        Beta -> column -> per-test-image values ``(seeds, images)`` (:func:`trade_off_images` and the NLL bound in bits/dim).
    """
    enc, runs = digit_hue_encoder(), []
    for s in check_seeds(seeds):
        images = {}
        for beta in betas:
            vae = colour_digits_vae(
                train.x, train.pa, beta=beta, steps=steps, batch_size=batch_size, seed=s, device=device, cache=cache
            )
            nll = _bits_per_dim(vae.elbo(test.x, test.pa, seed=s), test)
            images[beta] = {
                "NLL bound (bits/dim)": nll,
                **trade_off_images(ax.ModelFunction.sample(vae, enc, len(test), seed=s), test, do_digit, oracles),
            }
        runs.append(images)
    images = _stack_seeds(runs)
    return _table(images, "beta"), images


def partial_abduction(
    hvaes: Sequence[HierarchicalConditionalVAE],
    test: cd.ColourDigits,
    do_digit: np.ndarray,
    oracles: Mapping[str, Any],
    *,
    seeds: Sequence[int],
) -> tuple[pd.DataFrame, dict[int, dict[str, np.ndarray]]]:
    """Table 6: the means of :func:`trade_off_images` of the hierarchical VAEs for every number k of abducted latent groups.

    Parameters
    ----------
    hvaes : sequence of HierarchicalConditionalVAE
        Trained models with ``levels`` groups, one per training seed (:func:`train_hvaes`).
    test, do_digit, oracles :
        As in :func:`trade_off_images`.
    seeds : sequence of int
        The models' training seeds (each model's noise seed).

    Returns
    -------
    table : pandas.DataFrame
        One row per k = 0..levels: the means over seeds and test images.
    images : dict
        k -> column -> per-test-image values ``(seeds, images)``.
    """
    enc, seeds = digit_hue_encoder(), check_seeds(seeds)
    if len(hvaes) != len(seeds):
        raise ValueError(f"hvaes and seeds must match one to one, got {len(hvaes)} models and {len(seeds)} seeds")
    runs = [
        {
            k: trade_off_images(
                ax.ModelFunction.sample(h, enc, len(test), seed=s, abduct_levels=k), test, do_digit, oracles
            )
            for k in range(h.levels + 1)
        }
        for h, s in zip(hvaes, seeds, strict=True)
    ]
    images = _stack_seeds(runs)
    return _table(images, "levels abducted"), images


def temperature_sweep(
    hvaes: Sequence[HierarchicalConditionalVAE],
    test: cd.ColourDigits,
    do_digit: np.ndarray,
    oracles: Mapping[str, Any],
    temperatures: Sequence[float],
    *,
    seeds: Sequence[int],
) -> tuple[pd.DataFrame, dict[float, dict[str, np.ndarray]]]:
    """Figure 8: the means of :func:`trade_off_images` with one abducted group (k = 1) per prior temperature, plus the cycled-back digit accuracy.

    Parameters
    ----------
    hvaes : sequence of HierarchicalConditionalVAE
        Trained models, one per training seed (:func:`train_hvaes`).
    test, do_digit, oracles :
        As in :func:`trade_off_images`.
    temperatures : sequence of float
        Prior temperatures of the non-abducted groups.
    seeds : sequence of int
        The models' training seeds (each model's noise seed).

    Returns
    -------
    table : pandas.DataFrame
        One row per temperature, with ``cycled-back digit accuracy (%)``: ``f(f(x, pa, pa*), pa*, pa)`` read against the original digit.
    images : dict
        Temperature -> column -> per-test-image values ``(seeds, images)``.
    """
    enc, seeds = digit_hue_encoder(), check_seeds(seeds)
    if len(hvaes) != len(seeds):
        raise ValueError(f"hvaes and seeds must match one to one, got {len(hvaes)} models and {len(seeds)} seeds")
    ps = {**test.parents, "digit": do_digit}
    runs = []
    for h, s in zip(hvaes, seeds, strict=True):
        images = {}
        for t in temperatures:
            f = ax.ModelFunction.sample(h, enc, len(test), seed=s, abduct_levels=1, temperature=t)
            back = 100 * np.asarray(
                oracles["digit"].score(f(f(test.x, test.parents, ps), ps, test.parents), test.digit), dtype=float
            )
            images[t] = {**trade_off_images(f, test, do_digit, oracles), "cycled-back digit accuracy (%)": back}
        runs.append(images)
    images = _stack_seeds(runs)
    return _table(images, "temperature"), images
