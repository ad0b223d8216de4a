"""Training of the benchmark's models: anti-causal predictors, attribute mechanisms, image mechanisms, the CLD's VAE.

The image mechanisms, the anti-causal predictors and the CLD's VAE go through the shared model cache
(:func:`cflib.runtime.fit_cached`), so a notebook that scores the models of another (the metrics notebook after
the MorphoSynth benchmark) trains none of them again; the intensity flow is small and trains on every run.
"""

from __future__ import annotations

import copy
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

import numpy as np

from ...data.morphosynth import MorphoSynth
from ...data.smileyfaces import SmileyFaces
from ...models.predictors import AntiCausalPredictor
from ...runtime import LoadsItself, SavesItself, fit_cached
from ...scm import morpho_attributes
from ...scm.deep import ClosedForm, RootMechanism
from .config import BenchmarkConfig, DatasetSpec

if TYPE_CHECKING:
    from ...models.gan import ConditionalGAN
    from ...models.hvae import HierarchicalConditionalVAE
    from ...models.image_mechanisms import DeepImageMechanism
    from ...models.vae import ConditionalVAE


def _cached(
    cfg: BenchmarkConfig,
    cache: bool | str | os.PathLike[str],
    name: str,
    cls: LoadsItself,
    fit: Callable[[], _Model],
    key: Mapping[str, Any],
    code: Sequence[Any] = (),
) -> _Model:
    """``fit()``, or its model from the shared cache (``cache`` as in :func:`train_image_models`), keyed on ``key``
    and the code of ``cls`` and ``code``."""
    if cache is False:
        return fit()
    return fit_cached(
        fit,
        load=lambda path: cls.load(path, device=cfg.device),
        name=f"benchmark-{cfg.dataset}-{name}",
        key=key,
        code=[cls, *code],
        cache_dir=None if cache is True else cache,
    )


def train_predictors(
    cfg: BenchmarkConfig,
    spec: DatasetSpec,
    x_train: np.ndarray,
    train: MorphoSynth | SmileyFaces,
    cache: bool | str | os.PathLike[str] = True,
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
    cache : bool or path-like
        Keep the predictors in the shared model cache (keyed on the images, the targets and the settings) and
        load them when asked again; a path names another cache folder; ``False`` always trains.

    Returns
    -------
    predictors : dict
        Parent -> the predictor that scores effectiveness and gives the metric features.
    predictors_ft : dict or None
        Parent -> binary classifier for the HVAE's counterfactual fine-tuning, or ``None``.
    """
    shape = (spec.channels, cfg.size, cfg.size)

    def predictor(name: str, kind: str, x: np.ndarray, y: np.ndarray, seed: int) -> AntiCausalPredictor:
        n_classes = 10 if kind == "multiclass" else None
        balance = kind != "regression"
        return _cached(
            cfg,
            cache,
            name,
            AntiCausalPredictor,
            lambda: AntiCausalPredictor(
                shape, kind, n_classes=n_classes, width=cfg.width, hidden=cfg.hidden, seed=seed
            ).fit(x, y, epochs=cfg.predictor_epochs, balance=balance, device=cfg.device, seed=seed),
            {
                "model": name,
                "x": x,
                "y": np.asarray(y),
                "settings": {"kind": kind, "width": cfg.width, "hidden": cfg.hidden, "seed": seed},
                "epochs": cfg.predictor_epochs,
            },
        )

    predictors = {
        p: predictor(f"predictor-{p}", spec.kinds[p], x_train, getattr(train, p), cfg.seed + j)
        for j, p in enumerate(spec.parents)
    }
    predictors_ft = None
    if "hvae_cf" in cfg.models:
        half = np.arange(len(x_train)) % 2 == 1
        predictors_ft = {
            p: predictor(f"predictor-ft-{p}", "binary", x_train[half], getattr(train, p)[half], cfg.seed + 100 + j)
            for j, p in enumerate(spec.parents)
        }
    return predictors, predictors_ft


def attribute_mechanisms(
    cfg: BenchmarkConfig, train: MorphoSynth | SmileyFaces
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Learned attribute mechanisms (shared by all models) and the true ones (for the reference).

    Parameters
    ----------
    cfg : BenchmarkConfig
        The run's settings (seed, ``flow_epochs``).
    train : MorphoSynth or SmileyFaces
        The training units (their type is the dataset's).

    Returns
    -------
    learned : dict
        Parent -> mechanism: MorphoSynth's intensity is a conditional flow fitted to ``train``, the roots
        resample the training values.
    true : dict
        Parent -> the data's own mechanism (for the true counterfactual).
    """
    if isinstance(train, MorphoSynth):
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


class _Architecture(TypedDict):
    """The architecture settings every image model takes."""

    width: int
    hidden: int
    seed: int


class _FitSettings(TypedDict):
    """The optimiser settings the ``fit`` of the VAEs and the HVAE take."""

    batch_size: int
    lr: float
    device: str
    seed: int
    show_progress: bool


_Model = TypeVar("_Model", bound=SavesItself)


@dataclass(frozen=True)
class _ImageTraining:
    """What every image model of one :func:`train_image_models` call shares: data, settings, cache, timings."""

    cfg: BenchmarkConfig
    x: np.ndarray
    pa: np.ndarray
    spec: DatasetSpec
    timings: dict[str, float]
    cache: bool | str | os.PathLike[str]

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.spec.channels, self.cfg.size, self.cfg.size)

    @property
    def architecture(self) -> _Architecture:
        return {"width": self.cfg.width, "hidden": self.cfg.hidden, "seed": self.cfg.seed}

    @property
    def fit_settings(self) -> _FitSettings:
        cfg = self.cfg
        return {
            "batch_size": cfg.batch_size,
            "lr": cfg.lr,
            "device": cfg.device,
            "seed": cfg.seed,
            "show_progress": False,
        }

    def trained(self, name: str, cls: LoadsItself, fit: Callable[[], _Model], code: Sequence[Any] = ()) -> _Model:
        """``fit()``, or its model from the shared cache (keyed on the data, ``name``'s settings and the code)."""
        cfg = self.cfg
        t0 = time.perf_counter()
        key = {
            "model": name,
            "x": self.x,
            "pa": self.pa,
            "settings": {f: getattr(cfg, f) for f in (*_SHARED_SETTINGS, *_TRAINING_SETTINGS[name])},
        }
        model = _cached(cfg, self.cache, name, cls, fit, key, code)
        self.timings[f"train {name}"] = time.perf_counter() - t0
        return model

    def vae_mechanism(self, model: ConditionalVAE, temperature: float) -> DeepImageMechanism:
        """The image mechanism of a trained VAE or HVAE, abducting at pixel-noise ``temperature``."""
        from ...models.image_mechanisms import DeepImageMechanism

        return DeepImageMechanism(model, self.spec.encoder, noise_temperature=temperature, seed=self.cfg.seed)

    def hvae_mechanism(self, model: HierarchicalConditionalVAE) -> DeepImageMechanism:
        """The image mechanism of a trained HVAE, at the HVAE's noise and posterior temperatures."""
        from ...models.image_mechanisms import DeepImageMechanism

        cfg = self.cfg
        return DeepImageMechanism(
            model,
            self.spec.encoder,
            noise_temperature=cfg.hvae_temperature,
            posterior_temperature=cfg.hvae_posterior_temperature,
            seed=cfg.seed,
        )

    def gan_mechanism(self, model: ConditionalGAN) -> DeepImageMechanism:
        """The image mechanism of a trained GAN."""
        from ...models.image_mechanisms import DeepImageMechanism

        return DeepImageMechanism(model, self.spec.encoder, seed=self.cfg.seed)


def train_image_models(
    cfg: BenchmarkConfig,
    x: np.ndarray,
    pa: np.ndarray,
    spec: DatasetSpec,
    predictors_ft: Mapping[str, AntiCausalPredictor] | None,
    timings: dict[str, float],
    cache: bool | str | os.PathLike[str] = True,
) -> tuple[dict[str, DeepImageMechanism], dict[str, Any]]:
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

    Raises
    ------
    ValueError
        If ``cfg.models`` has ``hvae_cf`` and ``predictors_ft`` is ``None``.
    """
    want = set(cfg.models)
    if "hvae_cf" in want and predictors_ft is None:
        raise ValueError("hvae_cf is fine-tuned against predictors_ft: pass them (train_predictors gives them)")
    run = _ImageTraining(cfg, x, pa, spec, timings, cache)
    out: dict[str, DeepImageMechanism] = {}
    raw: dict[str, Any] = {}
    if "vae_fixed" in want:
        out["vae_fixed"] = run.vae_mechanism(_fixed_scale_vae(run), cfg.vae_temperature)
    if "vae_learned" in want:
        out["vae_learned"] = run.vae_mechanism(_learned_scale_vae(run), cfg.vae_temperature)
    if want & {"hvae", "hvae_cf"}:
        h = _hvae(run)
        if "hvae" in want:
            out["hvae"] = run.hvae_mechanism(h)
        if "hvae_cf" in want:
            assert predictors_ft is not None  # refused above
            hc = _counterfactually_finetuned_hvae(run, h, predictors_ft)
            raw["hvae_cf"] = hc.finetune_history_
            out["hvae_cf"] = run.hvae_mechanism(hc)
    if want & {"gan", "gan_ft"}:
        g = _gan(run)
        if "gan" in want:
            out["gan"] = run.gan_mechanism(g)
        if "gan_ft" in want:
            gf = _encoder_finetuned_gan(run, g)
            raw["gan_ft"] = gf.finetune_history_
            out["gan_ft"] = run.gan_mechanism(gf)
    return out, raw


def _fixed_scale_vae(run: _ImageTraining) -> ConditionalVAE:
    """``vae_fixed``: the VAE with a fixed pixel variance (the paper's sigma = sqrt(e^-5))."""
    from ...models.image_mechanisms import FIXED_SIGMA_VARIANCE
    from ...models.vae import ConditionalVAE

    cfg, x, pa = run.cfg, run.x, run.pa
    shape, k, common, fit_kw = run.shape, run.spec.pa_dim, run.architecture, run.fit_settings
    return run.trained(
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


def _learned_scale_vae(run: _ImageTraining) -> ConditionalVAE:
    """``vae_learned``: the VAE that learns its per-pixel scale (capped at ``vae_max_log_scale``)."""
    from ...models.image_mechanisms import LearnedScaleVAE

    cfg, x, pa = run.cfg, run.x, run.pa
    shape, k, common, fit_kw = run.shape, run.spec.pa_dim, run.architecture, run.fit_settings
    return run.trained(
        "vae_learned",
        LearnedScaleVAE,
        lambda: LearnedScaleVAE(
            shape, k, latent_dim=cfg.latent_dim, beta=cfg.beta, max_log_scale=cfg.vae_max_log_scale, **common
        ).fit(x, pa, epochs=cfg.epochs, **fit_kw),
    )


def _hvae(run: _ImageTraining) -> HierarchicalConditionalVAE:
    """``hvae``: the hierarchical VAE trained on the ELBO (also the start of ``hvae_cf``)."""
    from ...models.hvae import HierarchicalConditionalVAE
    from ...models.image_mechanisms import FIXED_SIGMA_VARIANCE

    cfg, x, pa = run.cfg, run.x, run.pa
    shape, k, common, fit_kw = run.shape, run.spec.pa_dim, run.architecture, run.fit_settings
    return run.trained(
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


def _counterfactually_finetuned_hvae(
    run: _ImageTraining, h: HierarchicalConditionalVAE, predictors_ft: Mapping[str, AntiCausalPredictor]
) -> HierarchicalConditionalVAE:
    """``hvae_cf``: a copy of the HVAE fine-tuned so that ``predictors_ft`` read its counterfactuals' parents."""
    from ...models.hvae import HierarchicalConditionalVAE
    from ...models.image_mechanisms import counterfactual_finetune

    cfg, x, pa = run.cfg, run.x, run.pa
    clfs = {j: predictors_ft[p].module for j, p in enumerate(run.spec.parents)}

    def finetuned_hvae() -> HierarchicalConditionalVAE:
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

    return run.trained(
        "hvae_cf",
        HierarchicalConditionalVAE,
        finetuned_hvae,
        code=[counterfactual_finetune, AntiCausalPredictor],
    )


def _gan(run: _ImageTraining) -> ConditionalGAN:
    """``gan``: the conditional GAN with its encoder (also the start of ``gan_ft``)."""
    from ...models.gan import ConditionalGAN

    cfg, x, pa = run.cfg, run.x, run.pa
    shape, k, common = run.shape, run.spec.pa_dim, run.architecture
    groups = [[0], [1], list(range(2, 12))] if cfg.dataset == "morphosynth" else [[0], [1]]
    return run.trained(
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


def _encoder_finetuned_gan(run: _ImageTraining, g: ConditionalGAN) -> ConditionalGAN:
    """``gan_ft``: a copy of the GAN whose encoder is fine-tuned for composition."""
    from ...models.gan import ConditionalGAN
    from ...models.image_mechanisms import finetune_encoder

    cfg, x, pa = run.cfg, run.x, run.pa

    def finetuned_gan() -> ConditionalGAN:
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

    return run.trained("gan_ft", ConditionalGAN, finetuned_gan, code=[finetune_encoder])


def cld_encoder(
    cfg: BenchmarkConfig, x: np.ndarray, spec: DatasetSpec, cache: bool | str | os.PathLike[str] = True
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
    cache : bool or path-like
        Keep the VAE in the shared model cache (as :func:`train_predictors`).

    Returns
    -------
    callable
        ``encode(images) -> (mu, log_variance)``, the VAE's posterior as float64 arrays.
    """
    import torch

    from ...models.vae import ConditionalVAE

    shape = (spec.channels, cfg.size, cfg.size)

    def fit() -> ConditionalVAE:
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
        return vae.fit(
            x,
            zero,
            epochs=cfg.cld_vae_epochs,
            batch_size=cfg.batch_size,
            lr=cfg.lr,
            device=cfg.device,
            seed=cfg.seed,
            show_progress=False,
        )

    settings = ("latent_dim", "width", "hidden", "seed", "cld_vae_epochs", "batch_size", "lr")
    vae = _cached(
        cfg,
        cache,
        "cld-vae",
        ConditionalVAE,
        fit,
        {"model": "cld-vae", "x": x, "settings": {f: getattr(cfg, f) for f in settings}},
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
