"""Training of the benchmark's models: anti-causal predictors, attribute mechanisms, image mechanisms, the CLD's VAE.

The image mechanisms go through the shared model cache (:func:`cflib.runtime.fit_cached`); the
predictors, the intensity flow and the CLD's VAE are small and train on every run.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ...data.morphosynth import MorphoSynth
from ...data.smileyfaces import SmileyFaces
from ...models.predictors import AntiCausalPredictor
from ...scm import morpho_attributes
from ...scm.deep import ClosedForm, RootMechanism
from .config import BenchmarkConfig, DatasetSpec


def train_predictors(
    cfg: BenchmarkConfig, spec: DatasetSpec, x_train: np.ndarray, train: MorphoSynth | SmileyFaces
) -> tuple[dict[str, AntiCausalPredictor], dict[str, AntiCausalPredictor] | None]:
    """Anti-causal predictors (evaluation), and a second set for counterfactual fine-tuning.

    The second set (``hvae_cf`` runs only) is trained on the other half of the data, so the fine-tuned
    HVAE is not scored by its teacher.

    Parameters
    ----------
    cfg : BenchmarkConfig
        The run's settings (``predictor_epochs``, ``width``, ``hidden``, seed, device).
    spec : DatasetSpec
        The dataset's parents and their kinds.
    x_train : numpy.ndarray
        Training images on the models' scale.
    train : MorphoSynth or SmileyFaces
        The training units (the parents' values).

    Returns
    -------
    predictors : dict
        Parent -> the predictor that scores effectiveness and gives the metric features.
    predictors_ft : dict or None
        Parent -> binary classifier for the HVAE's counterfactual fine-tuning, or ``None``.
    """
    shape = (spec.channels, cfg.size, cfg.size)
    predictors = {}
    for j, p in enumerate(spec.parents):
        kind = spec.kinds[p]
        pred = AntiCausalPredictor(
            shape,
            kind,
            n_classes=10 if kind == "multiclass" else None,
            width=cfg.width,
            hidden=cfg.hidden,
            seed=cfg.seed + j,
        )
        predictors[p] = pred.fit(
            x_train,
            getattr(train, p),
            epochs=cfg.predictor_epochs,
            balance=kind != "regression",
            device=cfg.device,
            seed=cfg.seed + j,
        )
    predictors_ft = None
    if "hvae_cf" in cfg.models:
        half = np.arange(len(x_train)) % 2 == 1
        predictors_ft = {}
        for j, p in enumerate(spec.parents):
            pred = AntiCausalPredictor(shape, "binary", width=cfg.width, hidden=cfg.hidden, seed=cfg.seed + 100 + j)
            predictors_ft[p] = pred.fit(
                x_train[half],
                getattr(train, p)[half],
                epochs=cfg.predictor_epochs,
                balance=True,
                device=cfg.device,
                seed=cfg.seed + 100 + j,
            )
    return predictors, predictors_ft


def attribute_mechanisms(
    cfg: BenchmarkConfig, train: MorphoSynth | SmileyFaces
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Learned attribute mechanisms (shared by all models) and the true ones (for the reference).

    Parameters
    ----------
    cfg : BenchmarkConfig
        The run's settings (dataset, seed, ``flow_epochs``).
    train : MorphoSynth or SmileyFaces
        The training units.

    Returns
    -------
    learned : dict
        Parent -> mechanism: MorphoSynth's intensity is a conditional flow fitted to ``train``, the roots
        resample the training values.
    true : dict
        Parent -> the data's own mechanism (for the true counterfactual).
    """
    if cfg.dataset == "morphosynth":
        from ...models.flows import ConditionalFlow1D

        flow = ConditionalFlow1D(["t"], bounds=(64.0, 255.0), seed=cfg.seed).fit(
            train.i, {"t": train.t}, epochs=cfg.flow_epochs, seed=cfg.seed, device="cpu"
        )
        learned = {"t": RootMechanism(train.t), "i": flow, "d": RootMechanism(train.d)}
        true = morpho_attributes().mechanisms
        return learned, {"t": ClosedForm(true["t"]), "i": ClosedForm(true["i"]), "d": RootMechanism(train.d)}
    learned = {"s": RootMechanism(train.s), "e": RootMechanism(train.e)}
    return learned, dict(learned)


#: The settings that determine each image model's weights (its cache key, with the training data and code).
_SHARED_SETTINGS = ("dataset", "size", "n_train", "seed", "width", "hidden", "batch_size")
_VAE_SETTINGS = ("epochs", "lr", "beta", "latent_dim")
_GAN_SETTINGS = (
    "gan_epochs",
    "gan_composition_weight",
    "gan_critic",
    "gan_loss",
    "gan_lr",
    "gan_ema",
    "gan_aux_weight",
)
_TRAINING_SETTINGS = {
    "vae_fixed": _VAE_SETTINGS,
    "vae_learned": (*_VAE_SETTINGS, "vae_max_log_scale"),
    "hvae": (*_VAE_SETTINGS, "hvae_levels"),
    "hvae_cf": (*_VAE_SETTINGS, "hvae_levels", "cf_steps", "cf_lr", "predictor_epochs"),
    "gan": _GAN_SETTINGS,
    "gan_ft": (*_GAN_SETTINGS, "gan_finetune_steps", "gan_finetune_lr"),
}


def train_image_models(
    cfg: BenchmarkConfig,
    x: np.ndarray,
    pa: np.ndarray,
    spec: DatasetSpec,
    predictors_ft: Mapping[str, AntiCausalPredictor] | None,
    timings: dict[str, float],
    cache: bool | str | os.PathLike = True,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train (or load from the shared model cache) the image mechanisms of ``cfg.models``.

    Each model goes through :func:`cflib.runtime.fit_cached`, keyed on the training images and parents,
    every setting that changes its weights, and the code that trains it, so a rebuild, or another
    notebook asking for the same model (notebook 04 scores the seed-1 models of notebook 02), loads it.

    Parameters
    ----------
    cfg : BenchmarkConfig
        The run's settings.
    x, pa : numpy.ndarray
        Training images (on the models' scale) and their encoded parents.
    spec : DatasetSpec
        The dataset's parents, encoder and image format.
    predictors_ft : mapping or None
        The binary classifiers of the HVAE's counterfactual fine-tuning (needed for ``hvae_cf`` only).
    timings : dict
        Receives ``"train <model>"`` seconds per model.
    cache : bool or path-like
        See :func:`cflib.experiments.benchmark.run_benchmark`.

    Returns
    -------
    mechanisms : dict
        Model key -> :class:`cflib.models.image_mechanisms.DeepImageMechanism`.
    finetune_history : dict
        Model key (``hvae_cf``, ``gan_ft``) -> the history of its fine-tuning.
    """
    from ...models.gan import ConditionalGAN
    from ...models.hvae import HierarchicalConditionalVAE
    from ...models.image_mechanisms import (
        FIXED_SIGMA_VARIANCE,
        DeepImageMechanism,
        LearnedScaleVAE,
        counterfactual_finetune,
        finetune_encoder,
    )
    from ...models.vae import ConditionalVAE
    from ...runtime import fit_cached

    shape = (spec.channels, cfg.size, cfg.size)
    k = spec.pa_dim
    enc = spec.encoder
    common = {"width": cfg.width, "hidden": cfg.hidden, "seed": cfg.seed}
    fit_kw = {
        "batch_size": cfg.batch_size,
        "lr": cfg.lr,
        "device": cfg.device,
        "seed": cfg.seed,
        "show_progress": False,
    }
    out: dict[str, Any] = {}
    want = set(cfg.models)
    raw: dict[str, Any] = {}

    def trained(name: str, cls: type, fit: Any, code: Sequence[Any] = ()) -> Any:
        t0 = time.perf_counter()
        if cache is False:
            model = fit()
        else:
            model = fit_cached(
                fit,
                load=lambda path: cls.load(path, device=cfg.device),
                name=f"benchmark-{cfg.dataset}-{name}",
                key={
                    "model": name,
                    "x": x,
                    "pa": pa,
                    "settings": {f: getattr(cfg, f) for f in (*_SHARED_SETTINGS, *_TRAINING_SETTINGS[name])},
                },
                code=[cls, *code],
                cache_dir=None if cache is True else cache,
            )
        timings[f"train {name}"] = time.perf_counter() - t0
        return model

    if "vae_fixed" in want:
        m = trained(
            "vae_fixed",
            ConditionalVAE,
            lambda: ConditionalVAE(
                shape,
                k,
                latent_dim=cfg.latent_dim,
                likelihood="normal",
                normal_variance=FIXED_SIGMA_VARIANCE,
                beta=cfg.beta,
                **common,
            ).fit(x, pa, epochs=cfg.epochs, **fit_kw),
        )
        out["vae_fixed"] = DeepImageMechanism(m, enc, noise_temperature=cfg.vae_temperature, seed=cfg.seed)
    if "vae_learned" in want:
        m2 = trained(
            "vae_learned",
            LearnedScaleVAE,
            lambda: LearnedScaleVAE(
                shape, k, latent_dim=cfg.latent_dim, beta=cfg.beta, max_log_scale=cfg.vae_max_log_scale, **common
            ).fit(x, pa, epochs=cfg.epochs, **fit_kw),
        )
        out["vae_learned"] = DeepImageMechanism(m2, enc, noise_temperature=cfg.vae_temperature, seed=cfg.seed)
    if want & {"hvae", "hvae_cf"}:
        h = trained(
            "hvae",
            HierarchicalConditionalVAE,
            lambda: HierarchicalConditionalVAE(
                shape,
                k,
                levels=cfg.hvae_levels,
                latent_dim=max(2, cfg.latent_dim // 2),
                beta=cfg.beta,
                likelihood="normal",
                normal_variance=FIXED_SIGMA_VARIANCE,
                **common,
            ).fit(x, pa, epochs=cfg.epochs, **fit_kw),
        )
        if "hvae" in want:
            out["hvae"] = DeepImageMechanism(
                h,
                enc,
                noise_temperature=cfg.hvae_temperature,
                posterior_temperature=cfg.hvae_posterior_temperature,
                seed=cfg.seed,
            )
        if "hvae_cf" in want:
            clfs = {j: predictors_ft[p].module for j, p in enumerate(spec.parents)}

            def finetuned_hvae() -> Any:
                hc = copy.deepcopy(h)
                counterfactual_finetune(
                    hc,
                    x,
                    pa,
                    clfs,
                    steps=cfg.cf_steps,
                    batch_size=min(64, cfg.batch_size),
                    lr=cfg.cf_lr,
                    device=cfg.device,
                    seed=cfg.seed,
                )
                return hc

            hc = trained(
                "hvae_cf",
                HierarchicalConditionalVAE,
                finetuned_hvae,
                code=[counterfactual_finetune, AntiCausalPredictor],
            )
            raw["hvae_cf"] = hc.finetune_history_
            out["hvae_cf"] = DeepImageMechanism(
                hc,
                enc,
                noise_temperature=cfg.hvae_temperature,
                posterior_temperature=cfg.hvae_posterior_temperature,
                seed=cfg.seed,
            )
    if want & {"gan", "gan_ft"}:
        groups = [[0], [1], list(range(2, 12))] if cfg.dataset == "morphosynth" else [[0], [1]]
        g = trained(
            "gan",
            ConditionalGAN,
            lambda: ConditionalGAN(
                shape, k, composition_weight=cfg.gan_composition_weight, critic=cfg.gan_critic, **common
            ).fit(
                x,
                pa,
                epochs=cfg.gan_epochs,
                batch_size=cfg.batch_size,
                lr=cfg.gan_lr,
                device=cfg.device,
                seed=cfg.seed,
                parent_groups=groups,
                show_progress=False,
                loss=cfg.gan_loss,
                ema=cfg.gan_ema,
                aux_weight=cfg.gan_aux_weight,
            ),
        )
        if "gan" in want:
            out["gan"] = DeepImageMechanism(g, enc, seed=cfg.seed)
        if "gan_ft" in want:

            def finetuned_gan() -> Any:
                gf = copy.deepcopy(g)
                finetune_encoder(
                    gf,
                    x,
                    pa,
                    steps=cfg.gan_finetune_steps,
                    batch_size=cfg.batch_size,
                    lr=cfg.gan_finetune_lr,
                    device=cfg.device,
                    seed=cfg.seed,
                )
                return gf

            gf = trained("gan_ft", ConditionalGAN, finetuned_gan, code=[finetune_encoder])
            raw["gan_ft"] = gf.finetune_history_
            out["gan_ft"] = DeepImageMechanism(gf, enc, seed=cfg.seed)
    return out, raw


def cld_encoder(
    cfg: BenchmarkConfig, x: np.ndarray, spec: DatasetSpec
) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Unconditional VAE for the CLD: the project's VAE with a constant (uninformative) parent.

    Parameters
    ----------
    cfg : BenchmarkConfig
        The run's settings (``latent_dim``, ``cld_vae_epochs``, ...).
    x : numpy.ndarray
        Training images on the models' scale.
    spec : DatasetSpec
        The dataset's image format.

    Returns
    -------
    callable
        ``encode(images) -> (mu, log_variance)``, the VAE's posterior as float64 arrays.
    """
    import torch

    from ...models.vae import ConditionalVAE

    shape = (spec.channels, cfg.size, cfg.size)
    vae = ConditionalVAE(
        shape,
        1,
        latent_dim=cfg.latent_dim,
        likelihood="bernoulli",
        beta=1.0,
        width=cfg.width,
        hidden=cfg.hidden,
        seed=cfg.seed + 1,
    )
    zero = np.zeros((len(x), 1), np.float32)
    vae.fit(
        x,
        zero,
        epochs=cfg.cld_vae_epochs,
        batch_size=cfg.batch_size,
        lr=cfg.lr,
        device=cfg.device,
        seed=cfg.seed,
        show_progress=False,
    )

    def encode(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vae.eval()
        mus, lvs = [], []
        with torch.no_grad():
            for s in range(0, len(images), 1024):
                xb = torch.as_tensor(np.asarray(images[s : s + 1024], np.float32), device=vae.device)
                mu, sigma = vae.posterior(xb, torch.zeros(len(xb), 1, device=vae.device))
                mus.append(mu.cpu().numpy())
                lvs.append((2 * torch.log(sigma)).cpu().numpy())
        return np.concatenate(mus).astype(np.float64), np.concatenate(lvs).astype(np.float64)

    return encode
