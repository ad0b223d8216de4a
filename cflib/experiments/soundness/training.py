"""Training the chapter's models once, through the shared model cache (:func:`cflib.runtime.fit_cached`).

The paper's Colour-Digits and shapes models, the conditional VAEs of the beta sweep and of the zoo
(notebooks 04 and 05 share the ones they both train), and the hierarchical VAEs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

import cflib.data.colour_digits as cd

from ...models.baselines import train_paper_model
from ...models.hvae import HierarchicalConditionalVAE
from ...models.vae import ConditionalVAE
from ...runtime import LoadsItself
from .common import check_seeds, digit_hue_encoder


def _cached(
    cls: LoadsItself,
    fit: Callable[[], Any],
    key: Mapping[str, Any],
    *,
    name: str,
    device: str,
    code: Sequence[Any] = (),
    cache: bool = True,
) -> Any:
    """Train ``fit()`` once through :func:`cflib.runtime.fit_cached` (keyed on ``key`` and the code of ``cls``), or directly when ``cache`` is false."""
    if not cache:
        return fit()
    from ...runtime import fit_cached

    return fit_cached(
        fit, load=lambda path: cls.load(path, device=device), key=dict(key), code=[cls, *code], name=f"axiomatic-{name}"
    )


def train_cached_paper_model(
    name: str, x: np.ndarray, pa: np.ndarray, *, cache: bool = True, device: str = "auto", **kwargs: Any
) -> Any:
    """:func:`cflib.models.baselines.train_paper_model` through the shared model cache.

    A rebuild, or another notebook asking for the same model, loads it instead of training it again.

    Parameters
    ----------
    name : str
        Configuration (:data:`cflib.models.baselines.PAPER_MODELS`).
    x, pa : numpy.ndarray
        Training images and encoded parents.
    cache : bool
        Go through :func:`cflib.runtime.fit_cached` (keyed on the data, every training argument and the
        training code); ``False`` trains without reading or writing the cache.
    device : str
        Torch device.
    **kwargs
        The other arguments of :func:`~cflib.models.baselines.train_paper_model` (``steps``, ``seed``, ...).

    Returns
    -------
    ConditionalVAE or ConditionalGAN
    """
    from ...models.baselines import PAPER_MODELS
    from ...models.gan import ConditionalGAN

    if name not in PAPER_MODELS:
        raise ValueError(f"name must be one of {sorted(PAPER_MODELS)}, got {name!r}")
    cls = ConditionalGAN if PAPER_MODELS[name]["cls"] == "gan" else ConditionalVAE
    key = {"model": name, "x": np.asarray(x), "pa": np.asarray(pa), **kwargs}
    return _cached(
        cls,
        lambda: train_paper_model(name, x, pa, device=device, **kwargs),
        key,
        name=f"colour-digits-{name}",
        device=device,
        code=[train_paper_model],
        cache=cache,
    )


def colour_digits_vae(
    x: np.ndarray,
    pa: np.ndarray,
    *,
    beta: float,
    steps: int,
    batch_size: int,
    seed: int,
    likelihood: str = "bernoulli",
    device: str = "auto",
    cache: bool = True,
) -> ConditionalVAE:
    """A conditional VAE on Colour-Digits through the model cache: notebooks 04 (beta sweep) and 05 (zoo) share the ones they both train.

    Parameters
    ----------
    x, pa : numpy.ndarray
        Training images and encoded parents (:func:`~cflib.experiments.soundness.common.digit_hue_encoder`).
    beta : float
        KL weight.
    steps, batch_size : int
        Training steps and minibatch size.
    seed : int
        Model and training seed.
    likelihood : str
        ``"bernoulli"`` or ``"normal"``.
    device : str
        Torch device.
    cache : bool
        Train through the shared model cache (:func:`cflib.runtime.fit_cached`); ``False`` trains without
        reading or writing it.

    Returns
    -------
    ConditionalVAE
    """
    return _cached(
        ConditionalVAE,
        lambda: ConditionalVAE(x.shape[1:], digit_hue_encoder().dim, beta=beta, likelihood=likelihood, seed=seed).fit(
            x, pa, steps=steps, batch_size=batch_size, seed=seed, device=device
        ),
        {
            "x": x,
            "pa": pa,
            "beta": float(beta),
            "likelihood": likelihood,
            "steps": steps,
            "batch_size": batch_size,
            "seed": seed,
        },
        name="colour-digits-vae",
        device=device,
        cache=cache,
    )


def train_hvaes(
    train: cd.ColourDigits,
    *,
    levels: int,
    beta: float,
    steps: int,
    batch_size: int,
    seeds: Sequence[int],
    device: str = "auto",
    cache: bool = True,
) -> list[HierarchicalConditionalVAE]:
    """One hierarchical conditional VAE per training seed (Table 6, Figures 7, 8 and 11).

    Parameters
    ----------
    train : ColourDigits
        Training split.
    levels : int
        Latent groups.
    beta : float
        KL weight.
    steps, batch_size : int
        Training steps and minibatch size.
    seeds : sequence of int
        Training seeds.
    device : str
        Torch device.
    cache : bool
        Train through the shared model cache (:func:`cflib.runtime.fit_cached`).

    Returns
    -------
    list of HierarchicalConditionalVAE
        In the order of ``seeds``.
    """
    dim = digit_hue_encoder().dim

    def fit(s: int) -> HierarchicalConditionalVAE:
        return HierarchicalConditionalVAE(train.x.shape[1:], dim, levels=levels, beta=beta, seed=s).fit(
            train.x, train.pa, steps=steps, batch_size=batch_size, seed=s, device=device
        )

    return [
        _cached(
            HierarchicalConditionalVAE,
            functools.partial(fit, s),
            {
                "x": train.x,
                "pa": train.pa,
                "levels": levels,
                "beta": float(beta),
                "steps": steps,
                "batch_size": batch_size,
                "seed": s,
            },
            name="hvae",
            device=device,
            cache=cache,
        )
        for s in check_seeds(seeds)
    ]
