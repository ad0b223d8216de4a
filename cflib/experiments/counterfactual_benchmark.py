"""The counterfactual-image benchmark: train deep SCMs and score them on the paper's four axes.

Melistas et al. (*Benchmarking counterfactual image generation*, Secs. 3-4, Tables 1-5) compare
deep SCMs that share their attribute mechanisms and differ in the image mechanism (VAE with fixed
or learned sigma, hierarchical VAE, GAN, GAN with encoder fine-tuning) on composition,
effectiveness, realism and minimality. :func:`run_benchmark` does the same on the project's
synthetic stand-ins (MorphoSynth for Morpho-MNIST, SmileyFaces for CelebA), where the true
counterfactual is known, and adds two reference "models" through the same :class:`DeepSCM`
interface: ``identity`` (the image never changes) and ``true`` (the data's own mechanism).

Everything is returned as DataFrames named after the paper's tables plus per-image arrays, so a
notebook can draw the figures and run paired comparisons between models on the same test images.

The module also holds the chapter's studies (the learned intensity flow of notebook 01, the temperature
sweep of 02, the metric-versus-truth configurations of 04), its figures, and one ``claims_<nn>``
function per notebook that turns the measured results into the recorded claim verdicts.
"""

from __future__ import annotations

import copy
import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import claims, verdicts
from ..data.morphosynth import MorphoSynth, encode_parents, make_morphosynth
from ..data.smileyfaces import SmileyFaces, make_smileyfaces
from ..metrics.benchmark_metrics import (
    InterventionSampler,
    embedding_l1,
    l1_pixel,
    memoize_features,
    paired_comparison,
    perceptual_distance,
    scm_composition,
    scm_effectiveness,
)
from ..metrics.minimality import counterfactual_latent_divergence, identity_cld
from ..metrics.realism import frechet_distance
from ..models.predictors import AntiCausalPredictor
from ..runtime import as_generator
from ..scm import morpho_attributes
from ..scm.deep import ClosedForm, DeepSCM, IdentityImage, OracleImage, RootMechanism

__all__ = [
    "MODELS", "BASELINES", "MODEL_LABELS", "BenchmarkConfig", "BenchmarkResult", "run_benchmark", "evaluate_scm",
    "with_temperature", "format_mean_std", "composition_grid", "intervention_grid",
    "FlowCheck", "fit_intensity_flow", "benchmark_results", "seed_results", "run_seeds", "seed_table", "learning_results", "claims_learning", "temperature_table", "paired_table", "score_configurations",
    "oriented_proxy", "rank_agreement", "within_model_agreement", "agreement_summary",
    "plot_morphosynth_attributes", "plot_glyph_skeletons", "plot_attribute_sweeps", "plot_interventional_vs_counterfactual",
    "plot_flow_fit", "plot_composition_curves", "plot_cld_histograms", "plot_p1_p2", "plot_finetuning_history",
    "plot_proxies_vs_truth", "claims_01", "claims_02", "claims_03", "claims_04",
]

#: Image mechanisms the benchmark can train (``hvae_cf`` only for SmileyFaces).
MODELS = ("vae_fixed", "vae_learned", "hvae", "hvae_cf", "gan", "gan_ft")
#: Reference "models" that need no training.
BASELINES = ("identity", "true")
#: Row labels as in the paper's tables.
MODEL_LABELS = {
    "vae_fixed": "VAE (σ=√e⁻⁵)",
    "vae_learned": "VAE (σ learned)",
    "hvae": "HVAE",
    "hvae_cf": "HVAE fine-tuned",
    "gan": "GAN",
    "gan_ft": "GAN fine-tuned",
    "identity": "identity (reference)",
    "true": "true counterfactual (reference)",
}


@dataclass
class BenchmarkConfig:
    """Settings of one benchmark run.

    The defaults are the book scale of the MorphoSynth notebooks (about 3 minutes of training per seed on
    one CPU thread); ``notebooks/params/full.yaml`` holds the paper's scale.

    Attributes
    ----------
    dataset : {"morphosynth", "smileyfaces"}
        MorphoSynth (Morpho-MNIST stand-in) or SmileyFaces (CelebA stand-in).
    size : int
        Image side in pixels.
    n_train, n_test : int
        Training and test images.
    models : tuple of str
        Image mechanisms to train (see :data:`MODELS`).
    baselines : tuple of str
        References to score too (see :data:`BASELINES`).
    epochs : int
        Training epochs of the VAEs and the HVAE.
    gan_epochs : int
        Training epochs of the GAN.
    gan_finetune_steps : int
        Encoder fine-tuning steps of ``gan_ft``.
    gan_composition_weight : float
        Weight of the GAN's composition penalty (eq. 7 of Monteiro et al.; their code uses 1). The paper's
        ALI/BiGAN gets reconstruction pressure from training its encoder jointly with the discriminator on
        (x, z) pairs; the project's image-to-image GAN gets it from this penalty. 0 gives pure adversarial
        training.
    gan_critic : {"projection", "concat"}
        The GAN critic: a spectrally normalised projection critic (the book's choice: at book scale a
        critic that reads the parents as extra channels never teaches the generator to change the digit)
        or the parents as extra input channels (App. D.2.2 of Monteiro et al.).
    gan_loss : {"hinge", "nonsaturating"}
        Adversarial loss (hinge goes with the spectrally normalised critic; the paper's is non-saturating).
    gan_lr : float
        Learning rate of the GAN (generator and critic).
    gan_ema : float
        Decay of the moving average of the generator's weights kept as the trained GAN (0: last iterate).
    gan_aux_weight : float
        Weight of the auxiliary-classifier loss (the critic reads the parents back; the generator must
        make it read ``pa*``); 0 turns it off. Projection critic only.
    gan_finetune_lr : float
        Learning rate of the encoder fine-tuning (paper: Adam 1e-4).
    cf_steps : int
        Counterfactual fine-tuning steps of ``hvae_cf``.
    cf_lr : float
        Learning rate of the counterfactual fine-tuning (paper: 1e-4 for 2000 steps; a few hundred
        steps at small scale need a larger one).
    predictor_epochs : int
        Training epochs of the anti-causal predictors.
    cld_vae_epochs : int
        Training epochs of the unconditional VAE of the CLD.
    flow_epochs : int
        Training epochs of the intensity flow (MorphoSynth).
    cycles : int
        Null-intervention cycles for composition (reported at 1 and ``cycles``).
    vae_temperature, hvae_temperature : float
        Pixel-noise temperature ``T`` (code: 0.1 and 0.3).
    hvae_posterior_temperature : float
        Posterior temperature of the HVAE's abduction (code: 0.1).
    beta : float
        KL weight of the VAEs and HVAE (paper: 1 Morpho-MNIST, 5 CelebA). The book uses 8: with a small
        decoder trained for minutes the latent code otherwise absorbs the digit, and the decoder ignores
        ``do(d)`` (digit accuracy under ``do(d)`` 0.44 for the fixed-σ VAE at β = 1, 0.89 at β = 8).
    vae_max_log_scale : float
        Ceiling of the learned-σ VAE's log-scale on the [-1, 1] scale (-2.5 is the fixed σ = √e⁻⁵): left
        free, a small model calls the strokes noise and decodes blurred digits.
    latent_dim : int
        Latent size of the VAEs (paper 16).
    width, hidden : int
        Convolution channels and dense width of the image models.
    hvae_levels : int
        Latent groups of the HVAE.
    batch_size : int
        Minibatch size.
    lr : float
        Learning rate of the image models.
    cld_weights : (float, float)
        ``(w1, w2)`` of the CLD.
    n_bins : int
        Bins of continuous parents (interventions and CLD).
    n_show : int
        Test units whose images are kept for figures.
    seed : int
        Seed of data, training and interventions.
    device : str
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    """

    dataset: str = "morphosynth"
    size: int = 16
    n_train: int = 10000
    n_test: int = 500
    models: tuple[str, ...] = ("vae_fixed", "vae_learned", "hvae", "gan", "gan_ft")
    baselines: tuple[str, ...] = ("identity", "true")
    epochs: int = 30
    gan_epochs: int = 30
    gan_finetune_steps: int = 200
    gan_composition_weight: float = 1.0
    gan_critic: str = "projection"
    gan_loss: str = "hinge"
    gan_lr: float = 2e-4
    gan_ema: float = 0.999
    gan_aux_weight: float = 10.0
    gan_finetune_lr: float = 1e-4
    cf_steps: int = 150
    cf_lr: float = 1e-4
    predictor_epochs: int = 6
    cld_vae_epochs: int = 8
    flow_epochs: int = 60
    cycles: int = 10
    vae_temperature: float = 0.1
    hvae_temperature: float = 0.3
    hvae_posterior_temperature: float = 0.1
    beta: float = 8.0
    vae_max_log_scale: float = -2.5
    latent_dim: int = 16
    width: int = 32
    hidden: int = 128
    hvae_levels: int = 4
    batch_size: int = 128
    lr: float = 2e-3
    cld_weights: tuple[float, float] = (0.8, 0.2)
    n_bins: int = 10
    n_show: int = 6
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.dataset not in ("morphosynth", "smileyfaces"):
            raise ValueError(f"dataset must be 'morphosynth' or 'smileyfaces', got {self.dataset!r}")
        self.models = tuple(self.models)
        self.baselines = tuple(self.baselines)
        unknown = [m for m in self.models if m not in MODELS]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; choose from {MODELS}")
        if "hvae_cf" in self.models and self.dataset != "smileyfaces":
            raise ValueError("hvae_cf (counterfactual fine-tuning with binary classifiers) is defined for dataset='smileyfaces' only")
        bad = [b for b in self.baselines if b not in BASELINES]
        if bad:
            raise ValueError(f"unknown baseline(s) {bad}; choose from {BASELINES}")
        for name in ("size", "n_train", "n_test", "epochs", "gan_epochs", "predictor_epochs", "cld_vae_epochs", "cycles", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        for name, allowed in (("gan_critic", ("projection", "concat")), ("gan_loss", ("hinge", "nonsaturating"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.gan_aux_weight > 0 and self.gan_critic != "projection":
            raise ValueError("gan_aux_weight > 0 needs gan_critic='projection' (the auxiliary head sits on its features); set gan_aux_weight=0")
        if self.n_test < 20:
            raise ValueError(f"n_test must be at least 20 for the metrics' reference sets, got {self.n_test}")


@dataclass
class BenchmarkResult:
    """Everything :func:`run_benchmark` measured.

    Attributes
    ----------
    config : BenchmarkConfig
    table_composition : pandas.DataFrame
        Table 1 (MorphoSynth) or 2 (SmileyFaces): mean and std over images per distance and cycles.
    table_effectiveness : pandas.DataFrame
        Table 3 or 4: rows model, columns ``(attribute, do(k))``.
    table_realism_minimality : pandas.DataFrame
        Table 5: Fréchet distance, CLD, P1, P2 (and the identity CLD).
    table_true_error : pandas.DataFrame
        Mean pixel l1 (0-255) between each model's counterfactual and the true one, per intervention.
    per_image : dict
        ``model -> {"composition": {distance: (n, cycles)}, "effectiveness": {(do, attr): (n,)},
        "true_error": {do: (n,)}, "cld": (n,), "p1": (n,), "p2": (n,), "features": (n, k)}`` (the
        features are the predictor embeddings of the realism counterfactuals, for intervals on the
        Fréchet distance).
    figures : dict
        Images for the figures: ``"composition"`` (model -> (k, cycles + 1, ...)),
        ``"interventions"`` (model -> {do: (k, ...)}), ``"factual"`` (k, ...), ``"do_values"``.
    predictor_quality : pandas.DataFrame
        Predictors on real test images (the ceiling of effectiveness).
    timings : dict
        Seconds per stage.
    models : dict
        The trained DeepSCMs (not serialised).
    """

    config: BenchmarkConfig
    table_composition: pd.DataFrame
    table_effectiveness: pd.DataFrame
    table_realism_minimality: pd.DataFrame
    table_true_error: pd.DataFrame
    per_image: dict[str, dict[str, Any]] = field(repr=False)
    figures: dict[str, Any] = field(repr=False)
    predictor_quality: pd.DataFrame = field(repr=False)
    timings: dict[str, float] = field(repr=False)
    models: dict[str, Any] = field(repr=False)
    extras: dict[str, Any] = field(repr=False, default_factory=dict)


# ----------------------------------------------------------------------------------------------
# pieces
# ----------------------------------------------------------------------------------------------
def _spec(cfg: BenchmarkConfig) -> dict[str, Any]:
    """Dataset-specific names: parents, their kinds, the parent encoder and the data."""
    if cfg.dataset == "morphosynth":
        return {
            "parents": ("t", "i", "d"),
            "kinds": {"t": "regression", "i": "regression", "d": "multiclass"},
            "discrete": ("d",),
            "encoder": lambda pa: encode_parents(pa["t"], pa["i"], pa["d"]),
            "pa_dim": 12,
            "channels": 1,
            "scale": 1.0 / 255.0,
        }
    return {
        "parents": ("s", "e"),
        "kinds": {"s": "binary", "e": "binary"},
        "discrete": ("s", "e"),
        "encoder": lambda pa: np.column_stack([np.asarray(pa["s"], np.float32), np.asarray(pa["e"], np.float32)]),
        "pa_dim": 2,
        "channels": 3,
        "scale": 1.0,
    }


def _make_data(cfg: BenchmarkConfig) -> tuple[MorphoSynth | SmileyFaces, MorphoSynth | SmileyFaces]:
    if cfg.dataset == "morphosynth":
        return make_morphosynth(cfg.n_train, cfg.size, seed=cfg.seed), make_morphosynth(cfg.n_test, cfg.size, seed=cfg.seed + 10_000)
    return make_smileyfaces(cfg.n_train, cfg.size, seed=cfg.seed), make_smileyfaces(cfg.n_test, cfg.size, seed=cfg.seed + 10_000)


def _obs(data: MorphoSynth | SmileyFaces, scale: float) -> dict[str, np.ndarray]:
    obs = data.observations()
    obs["x"] = np.asarray(data.x, dtype=np.float32) * np.float32(scale)  # the same expression as OracleImage
    return obs


def _attribute_mechanisms(cfg: BenchmarkConfig, train: Any, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Learned attribute mechanisms (shared by all models) and the true ones (for the reference)."""
    if cfg.dataset == "morphosynth":
        from ..models.flows import ConditionalFlow1D

        flow = ConditionalFlow1D(["t"], bounds=(64.0, 255.0), seed=cfg.seed).fit(
            train.i, {"t": train.t}, epochs=cfg.flow_epochs, seed=cfg.seed, device="cpu")
        learned = {"t": RootMechanism(train.t), "i": flow, "d": RootMechanism(train.d)}
        true = morpho_attributes().mechanisms
        return learned, {"t": ClosedForm(true["t"]), "i": ClosedForm(true["i"]), "d": RootMechanism(train.d)}
    learned = {"s": RootMechanism(train.s), "e": RootMechanism(train.e)}
    return learned, dict(learned)


#: The settings that determine each image model's weights (its cache key, with the training data and code).
_SHARED_SETTINGS = ("dataset", "size", "n_train", "seed", "width", "hidden", "batch_size")
_VAE_SETTINGS = ("epochs", "lr", "beta", "latent_dim")
_GAN_SETTINGS = ("gan_epochs", "gan_composition_weight", "gan_critic", "gan_loss", "gan_lr", "gan_ema", "gan_aux_weight")
_TRAINING_SETTINGS = {
    "vae_fixed": _VAE_SETTINGS,
    "vae_learned": (*_VAE_SETTINGS, "vae_max_log_scale"),
    "hvae": (*_VAE_SETTINGS, "hvae_levels"),
    "hvae_cf": (*_VAE_SETTINGS, "hvae_levels", "cf_steps", "cf_lr", "predictor_epochs"),
    "gan": _GAN_SETTINGS,
    "gan_ft": (*_GAN_SETTINGS, "gan_finetune_steps", "gan_finetune_lr"),
}


def _train_image_models(cfg: BenchmarkConfig, x: np.ndarray, pa: np.ndarray, spec: dict[str, Any],
                        predictors_ft: Mapping[str, AntiCausalPredictor] | None, timings: dict[str, float],
                        cache: bool | str | Any = True) -> dict[str, Any]:
    """Train (or load from the shared model cache) the image mechanisms of ``cfg.models``.

    Each model goes through :func:`cflib.runtime.fit_cached`, keyed on the training images and parents,
    every setting that changes its weights, and the code that trains it, so a rebuild, or another
    notebook asking for the same model (notebook 04 scores the seed-1 models of notebook 02), loads it.
    """
    from ..models.gan import ConditionalGAN
    from ..models.hvae import HierarchicalConditionalVAE
    from ..models.image_mechanisms import (
        FIXED_SIGMA_VARIANCE,
        DeepImageMechanism,
        LearnedScaleVAE,
        counterfactual_finetune,
        finetune_encoder,
    )
    from ..models.vae import ConditionalVAE
    from ..runtime import fit_cached

    shape = (spec["channels"], cfg.size, cfg.size)
    k = spec["pa_dim"]
    enc = spec["encoder"]
    common = {"width": cfg.width, "hidden": cfg.hidden, "seed": cfg.seed}
    fit_kw = {"batch_size": cfg.batch_size, "lr": cfg.lr, "device": cfg.device, "seed": cfg.seed, "show_progress": False}
    out: dict[str, Any] = {}
    want = set(cfg.models)
    raw: dict[str, Any] = {}

    def trained(name: str, cls: type, fit: Any, code: Sequence[Any] = ()) -> Any:
        t0 = time.perf_counter()
        if cache is False:
            model = fit()
        else:
            model = fit_cached(fit, load=lambda path: cls.load(path, device=cfg.device), name=f"benchmark-{cfg.dataset}-{name}",
                               key={"model": name, "x": x, "pa": pa,
                                    "settings": {f: getattr(cfg, f) for f in (*_SHARED_SETTINGS, *_TRAINING_SETTINGS[name])}},
                               code=[cls, *code],
                               cache_dir=None if cache is True else cache)
        timings[f"train {name}"] = time.perf_counter() - t0
        return model

    if "vae_fixed" in want:
        m = trained("vae_fixed", ConditionalVAE, lambda: ConditionalVAE(
            shape, k, latent_dim=cfg.latent_dim, likelihood="normal", normal_variance=FIXED_SIGMA_VARIANCE, beta=cfg.beta, **common
        ).fit(x, pa, epochs=cfg.epochs, **fit_kw))
        out["vae_fixed"] = DeepImageMechanism(m, enc, noise_temperature=cfg.vae_temperature, seed=cfg.seed)
    if "vae_learned" in want:
        m2 = trained("vae_learned", LearnedScaleVAE, lambda: LearnedScaleVAE(
            shape, k, latent_dim=cfg.latent_dim, beta=cfg.beta, max_log_scale=cfg.vae_max_log_scale, **common).fit(x, pa, epochs=cfg.epochs, **fit_kw))
        out["vae_learned"] = DeepImageMechanism(m2, enc, noise_temperature=cfg.vae_temperature, seed=cfg.seed)
    if want & {"hvae", "hvae_cf"}:
        h = trained("hvae", HierarchicalConditionalVAE, lambda: HierarchicalConditionalVAE(
            shape, k, levels=cfg.hvae_levels, latent_dim=max(2, cfg.latent_dim // 2), beta=cfg.beta,
            likelihood="normal", normal_variance=FIXED_SIGMA_VARIANCE, **common).fit(x, pa, epochs=cfg.epochs, **fit_kw))
        if "hvae" in want:
            out["hvae"] = DeepImageMechanism(h, enc, noise_temperature=cfg.hvae_temperature,
                                             posterior_temperature=cfg.hvae_posterior_temperature, seed=cfg.seed)
        if "hvae_cf" in want:
            clfs = {j: predictors_ft[p].module for j, p in enumerate(spec["parents"])}

            def finetuned_hvae() -> Any:
                hc = copy.deepcopy(h)
                counterfactual_finetune(hc, x, pa, clfs, steps=cfg.cf_steps, batch_size=min(64, cfg.batch_size), lr=cfg.cf_lr,
                                        device=cfg.device, seed=cfg.seed)
                return hc

            hc = trained("hvae_cf", HierarchicalConditionalVAE, finetuned_hvae, code=[counterfactual_finetune, AntiCausalPredictor])
            raw["hvae_cf_history"] = hc.finetune_history_
            out["hvae_cf"] = DeepImageMechanism(hc, enc, noise_temperature=cfg.hvae_temperature,
                                                posterior_temperature=cfg.hvae_posterior_temperature, seed=cfg.seed)
    if want & {"gan", "gan_ft"}:
        groups = [[0], [1], list(range(2, 12))] if cfg.dataset == "morphosynth" else [[0], [1]]
        g = trained("gan", ConditionalGAN, lambda: ConditionalGAN(
            shape, k, composition_weight=cfg.gan_composition_weight, critic=cfg.gan_critic, **common
        ).fit(x, pa, epochs=cfg.gan_epochs, batch_size=cfg.batch_size, lr=cfg.gan_lr, device=cfg.device, seed=cfg.seed,
              parent_groups=groups, show_progress=False, loss=cfg.gan_loss, ema=cfg.gan_ema, aux_weight=cfg.gan_aux_weight))
        if "gan" in want:
            out["gan"] = DeepImageMechanism(g, enc, seed=cfg.seed)
        if "gan_ft" in want:
            def finetuned_gan() -> Any:
                gf = copy.deepcopy(g)
                finetune_encoder(gf, x, pa, steps=cfg.gan_finetune_steps, batch_size=cfg.batch_size, lr=cfg.gan_finetune_lr,
                                 device=cfg.device, seed=cfg.seed)
                return gf

            gf = trained("gan_ft", ConditionalGAN, finetuned_gan, code=[finetune_encoder])
            raw["gan_ft_history"] = gf.finetune_history_
            out["gan_ft"] = DeepImageMechanism(gf, enc, seed=cfg.seed)
    out["_raw"] = raw
    return out


def _cld_encoder(cfg: BenchmarkConfig, x: np.ndarray, spec: dict[str, Any]):
    """Unconditional VAE for the CLD: the project's VAE with a constant (uninformative) parent."""
    import torch

    from ..models.vae import ConditionalVAE

    shape = (spec["channels"], cfg.size, cfg.size)
    vae = ConditionalVAE(shape, 1, latent_dim=cfg.latent_dim, likelihood="bernoulli", beta=1.0,
                         width=cfg.width, hidden=cfg.hidden, seed=cfg.seed + 1)
    zero = np.zeros((len(x), 1), np.float32)
    vae.fit(x, zero, epochs=cfg.cld_vae_epochs, batch_size=cfg.batch_size, lr=cfg.lr, device=cfg.device, seed=cfg.seed, show_progress=False)

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


@dataclass
class _EvalContext:
    """What every model is scored against: the same test units, interventions and metric models."""

    cfg: BenchmarkConfig
    parents: tuple[str, ...]
    kinds: dict[str, str]
    obs: dict[str, np.ndarray]
    distances: dict[str, Any]
    predictors: dict[str, AntiCausalPredictor]
    sampler: InterventionSampler
    do_values: dict[str, np.ndarray]
    truth: dict[str, dict[str, np.ndarray]]
    chosen: np.ndarray
    cld_encode: Any
    mu_f: np.ndarray
    lv_f: np.ndarray
    ref_groups: np.ndarray
    real_features: np.ndarray
    embed: Any
    show: np.ndarray


def evaluate_scm(ctx: _EvalContext, scm: DeepSCM, label: str) -> dict[str, Any]:
    """Score one deep SCM on composition, effectiveness, realism, minimality and the true error.

    Parameters
    ----------
    ctx : object
        ``result.extras["context"]`` of a :func:`run_benchmark` result (test units, interventions,
        predictors, CLD encoder), so a new model, or the same model at another temperature, is scored
        on exactly the same units and interventions as the others.
    scm : DeepSCM
        The model.
    label : str
        Row label.

    Returns
    -------
    dict
        ``rows`` (table rows), ``per_image`` arrays, ``figures`` images and ``summary`` (flat dict of
        the headline numbers).
    """
    cfg, parents, obs, n = ctx.cfg, ctx.parents, ctx.obs, len(ctx.chosen)
    comp = scm_composition(scm, obs, cycles=cfg.cycles, distances=ctx.distances, keep_images=len(ctx.show))
    eff = scm_effectiveness(scm, obs, ctx.predictors, ctx.sampler, do_values=ctx.do_values)
    true_err = {p: l1_pixel(255.0)(eff.counterfactuals[p]["x"], ctx.truth[p]["x"]) for p in parents}
    units = np.arange(n)
    cf_x = np.stack([eff.counterfactuals[p]["x"] for p in parents])[ctx.chosen, units]
    cf_features = ctx.embed(cf_x)
    fd = frechet_distance(ctx.real_features, cf_features)
    mu_c, lv_c = ctx.cld_encode(cf_x)
    cf_groups = np.stack([ctx.sampler.bin(p, ctx.do_values[p]) for p in parents])[ctx.chosen, units]
    cld = counterfactual_latent_divergence((ctx.mu_f, ctx.lv_f), (mu_c, lv_c), ctx.ref_groups[units, ctx.chosen], cf_groups,
                                           reference_group=ctx.ref_groups, parent=ctx.chosen, weights=cfg.cld_weights)
    rows_c = [{"model": label, "distance": dist, "cycles": m, "mean": arr[:, m - 1].mean(), "std": arr[:, m - 1].std(ddof=1)}
              for dist, arr in comp.distances.items() for m in sorted({1, cfg.cycles})]
    rows_e = [{"model": label, "attribute": attr, "intervention": do, "score": v} for do, row in eff.table.iterrows() for attr, v in row.items()]
    row_rm = {"model": label, "Fréchet (in-domain)": fd, "CLD": cld.statistic, "P1": cld.mean_p1, "P2": cld.mean_p2}
    row_t = {"model": label, **{f"do({p})": true_err[p].mean() for p in parents}}
    summary = {f"composition {d} m={m}": arr[:, m - 1].mean() for d, arr in comp.distances.items() for m in sorted({1, cfg.cycles})}
    summary.update({f"effectiveness {a} do({a})": eff.table.loc[f"do({a})", a] for a in parents})
    summary.update({"Fréchet": fd, "CLD": cld.statistic, "true error": float(np.mean([v.mean() for v in true_err.values()]))})
    per_image = {"composition": comp.distances, "composition_trend_p": comp.pvalue, "effectiveness": eff.per_image,
                 "true_error": true_err, "cld": cld.cld, "p1": cld.p1, "p2": cld.p2, "chosen": ctx.chosen, "features": cf_features,
                 "counterfactual_parents": {p: {q: eff.counterfactuals[p][q] for q in parents} for p in parents}}
    figures = {"composition": comp.images, "interventions": {p: eff.counterfactuals[p]["x"][ctx.show] for p in parents}}
    return {"rows": {"composition": rows_c, "effectiveness": rows_e, "realism_minimality": row_rm, "true_error": row_t},
            "per_image": per_image, "figures": figures, "summary": summary}


def with_temperature(result: BenchmarkResult, model: str, noise_temperature: float) -> DeepSCM:
    """The trained deep SCM ``model`` with another pixel-noise temperature (no retraining).

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.
    model : str
        A trained VAE or HVAE model key.
    noise_temperature : float
        New ``T``.

    Returns
    -------
    DeepSCM
    """
    from ..models.image_mechanisms import DeepImageMechanism

    mechs = result.extras["mechanisms"]
    if model not in mechs:
        raise ValueError(f"{model!r} was not trained in this run (trained: {sorted(mechs)})")
    old = mechs[model]
    new = DeepImageMechanism(old.model, old.parent_encoder, noise_temperature=noise_temperature,
                             posterior_temperature=old.posterior_temperature, seed=old.seed)
    scm = result.models[model]
    return DeepSCM(scm.graph, {**scm.mechanisms, "x": new})


def format_mean_std(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Turn the composition table's ``(distance, cycles, mean|std)`` columns into ``mean ± std`` strings."""
    out = {}
    for dist, m in dict.fromkeys((d, c) for d, c, _ in table.columns):
        out[(dist, f"{m} cycle" + ("s" if m > 1 else ""))] = [
            f"{a:.{digits}f} ± {b:.{digits}f}" for a, b in zip(table[(dist, m, "mean")], table[(dist, m, "std")], strict=False)]
    return pd.DataFrame(out, index=table.index)


def composition_grid(result: BenchmarkResult, models: Sequence[str], units: Sequence[int] = (0, 1, 2), fig: Any = None) -> np.ndarray:
    """Figs 2 / 3 / 6 / 8: each row one unit of one model, columns the factual and cycles 1..m.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import image_grid

    rows, labels = [], []
    for mdl in models:
        for u in units:
            rows.append(result.figures["composition"][mdl][u])
            labels.append(f"{MODEL_LABELS[mdl].split(' (')[0] if mdl not in ('vae_fixed', 'vae_learned') else MODEL_LABELS[mdl]} #{u}")
    imgs = np.stack(rows)
    cols = ["x"] + [f"m={k}" for k in range(1, imgs.shape[1])]
    return image_grid(_display(imgs), row_labels=labels, col_labels=cols, vmin=0, vmax=1, panel=0.75, fig=fig)


def intervention_grid(result: BenchmarkResult, models: Sequence[str], unit: int = 0, fig: Any = None) -> np.ndarray:
    """Figs 4 / 5 / 7 / 9 with the true counterfactual as an extra row: factual, then one column per intervention.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import image_grid

    parents = tuple(result.figures["do_values"])
    rows = [np.stack([result.figures["factual"][unit]] + [result.figures["true"][p][unit] for p in parents])]
    labels = ["true"]
    for mdl in models:
        rows.append(np.stack([result.figures["factual"][unit]] + [result.figures["interventions"][mdl][p][unit] for p in parents]))
        labels.append(MODEL_LABELS[mdl])
    fp = result.figures["factual_parents"]
    dv = result.figures["do_values"]
    cols = ["factual\n" + ", ".join(f"{p}={_fmt(fp[p][unit])}" for p in parents)] + [f"do({p}={_fmt(dv[p][unit])})" for p in parents]
    return image_grid(_display(np.stack(rows)), row_labels=labels, col_labels=cols, vmin=0, vmax=1, panel=1.0, fig=fig)


def _fmt(v: Any) -> str:
    v = float(v)
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 or abs(v) >= 20 else f"{v:.1f}"


def _display(imgs: np.ndarray) -> np.ndarray:
    # (rows, cols, C, H, W) -> grey (rows, cols, H, W) or colour (rows, cols, H, W, 3)
    if imgs.shape[2] == 1:
        return imgs[:, :, 0]
    return np.moveaxis(imgs, 2, -1)


# ----------------------------------------------------------------------------------------------
# the runner
# ----------------------------------------------------------------------------------------------
def run_benchmark(config: BenchmarkConfig | Mapping[str, Any] | None = None, *, cache: bool | str | os.PathLike = True,
                  **overrides: Any) -> BenchmarkResult:
    """Train the deep SCMs of the configuration and score them (Tables 1-5 plus the truth).

    Parameters
    ----------
    config : BenchmarkConfig or mapping, optional
        Settings (a mapping is turned into a :class:`BenchmarkConfig`).
    cache : bool or path-like
        Keep the trained image models in the shared model cache (:func:`cflib.runtime.fit_cached`,
        default ``_build/cache/models``) and load them when the same model is asked for again; a path
        names another cache folder; ``False`` always trains.
    **overrides
        Fields of :class:`BenchmarkConfig` to override.

    Returns
    -------
    BenchmarkResult

    Raises
    ------
    ValueError
        Unknown settings, models or datasets.
    """
    if config is None:
        config = BenchmarkConfig()
    if isinstance(config, Mapping):
        config = {**config}
    elif isinstance(config, BenchmarkConfig):
        config = asdict(config)
    else:
        raise TypeError(f"config must be a BenchmarkConfig or a mapping, got {type(config).__name__}")
    known = set(BenchmarkConfig.__dataclass_fields__)
    unknown = [k for k in {**config, **overrides} if k not in known]
    if unknown:
        raise ValueError(f"unknown benchmark setting(s) {unknown}; known: {sorted(known)}")
    cfg = BenchmarkConfig(**{**config, **overrides})
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    spec = _spec(cfg)
    parents = spec["parents"]

    t0 = time.perf_counter()
    train, test = _make_data(cfg)
    x_train = np.asarray(train.x, np.float32) * np.float32(spec["scale"])
    pa_train = spec["encoder"]({p: getattr(train, p) for p in parents})
    obs = _obs(test, spec["scale"])
    timings["data"] = time.perf_counter() - t0

    # Anti-causal predictors (evaluation), and a second set for counterfactual fine-tuning
    # trained on the other half of the data, so the fine-tuned HVAE is not scored by its teacher.
    t0 = time.perf_counter()
    shape = (spec["channels"], cfg.size, cfg.size)
    predictors = {}
    for j, p in enumerate(parents):
        kind = spec["kinds"][p]
        pred = AntiCausalPredictor(shape, kind, n_classes=10 if kind == "multiclass" else None, width=cfg.width, hidden=cfg.hidden, seed=cfg.seed + j)
        predictors[p] = pred.fit(x_train, getattr(train, p), epochs=cfg.predictor_epochs, balance=kind != "regression",
                                 device=cfg.device, seed=cfg.seed + j)
    predictors_ft = None
    if "hvae_cf" in cfg.models:
        half = np.arange(len(x_train)) % 2 == 1
        predictors_ft = {}
        for j, p in enumerate(parents):
            pred = AntiCausalPredictor(shape, "binary", width=cfg.width, hidden=cfg.hidden, seed=cfg.seed + 100 + j)
            predictors_ft[p] = pred.fit(x_train[half], getattr(train, p)[half], epochs=cfg.predictor_epochs, balance=True,
                                        device=cfg.device, seed=cfg.seed + 100 + j)
    timings["predictors"] = time.perf_counter() - t0
    quality = []
    for p, pred in predictors.items():
        from ..metrics.benchmark_metrics import score as _score

        s, _ = _score(pred.kind, getattr(test, p), pred.predict(obs["x"]))
        quality.append({"attribute": p, "metric": {"regression": "MAE", "multiclass": "accuracy", "binary": "F1"}[pred.kind], "real test images": s})
    quality = pd.DataFrame(quality)

    def _features(images: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        outs = [pred.feature_maps(images, return_embedding=True) for pred in predictors.values()]  # one pass per predictor
        return np.concatenate([o[1] for o in outs], axis=1), [m for o in outs for m in o[0]]

    features = memoize_features(_features)

    def embed(images: np.ndarray) -> np.ndarray:
        return features(images)[0]

    def maps(images: np.ndarray) -> list[np.ndarray]:
        return features(images)[1]

    distances = {"l1_pixel": l1_pixel(255.0), "l1_embedding": embedding_l1(embed), "perceptual": perceptual_distance(maps)}

    t0 = time.perf_counter()
    learned_attr, true_attr = _attribute_mechanisms(cfg, train, spec)
    timings["attribute mechanisms"] = time.perf_counter() - t0
    mechs = _train_image_models(cfg, x_train, pa_train, spec, predictors_ft, timings, cache=cache)
    raw = mechs.pop("_raw")
    scms: dict[str, DeepSCM] = {}
    for name in cfg.baselines:
        if name == "identity":
            scms[name] = DeepSCM(test.graph, {**learned_attr, "x": IdentityImage()})
        else:
            scms[name] = DeepSCM(test.graph, {**true_attr, "x": OracleImage(test, scale=spec["scale"])})
    for name in cfg.models:
        scms[name] = DeepSCM(test.graph, {**learned_attr, "x": mechs[name]})

    t0 = time.perf_counter()
    cld_encode = _cld_encoder(cfg, x_train, spec)
    timings["CLD encoder"] = time.perf_counter() - t0
    real_features = embed(x_train)
    mu_f, lv_f = cld_encode(obs["x"])

    # One set of interventions for every model: paired comparisons on the same units and values.
    rng = as_generator(cfg.seed + 1)
    sampler = InterventionSampler({p: getattr(test, p) for p in parents}, discrete=spec["discrete"], n_bins=cfg.n_bins)
    do_values = {p: sampler.sample(p, getattr(test, p), rng) for p in parents}
    chosen = rng.integers(0, len(parents), cfg.n_test)  # one random parent per unit for realism / minimality
    ref_groups = np.column_stack([sampler.bin(p, getattr(test, p)) for p in parents])
    truth: dict[str, dict[str, np.ndarray]] = {}
    oracle_scm = DeepSCM(test.graph, {**true_attr, "x": OracleImage(test, scale=spec["scale"])})
    for p in parents:
        truth[p] = oracle_scm.counterfactual(obs, {p: do_values[p]})

    show = np.arange(min(cfg.n_show, cfg.n_test))
    ctx = _EvalContext(cfg=cfg, parents=parents, kinds=spec["kinds"], obs=obs, distances=distances, predictors=predictors,
                       sampler=sampler, do_values=do_values, truth=truth, chosen=chosen, cld_encode=cld_encode, mu_f=mu_f,
                       lv_f=lv_f, ref_groups=ref_groups, real_features=real_features, embed=embed, show=show)
    comp_rows, eff_rows, rm_rows, true_rows = [], [], [], []
    per_image: dict[str, dict[str, Any]] = {}
    figures: dict[str, Any] = {"composition": {}, "interventions": {}, "factual": obs["x"][show], "do_values": {p: do_values[p][show] for p in parents},
                               "true": {p: truth[p]["x"][show] for p in parents}, "factual_parents": {p: obs[p][show] for p in parents}}
    for name, scm in scms.items():
        t0 = time.perf_counter()
        ev = evaluate_scm(ctx, scm, MODEL_LABELS[name])
        comp_rows += ev["rows"]["composition"]
        eff_rows += ev["rows"]["effectiveness"]
        rm_rows.append(ev["rows"]["realism_minimality"])
        true_rows.append(ev["rows"]["true_error"])
        per_image[name] = ev["per_image"]
        figures["composition"][name] = ev["figures"]["composition"]
        figures["interventions"][name] = ev["figures"]["interventions"]
        timings[f"evaluate {name}"] = time.perf_counter() - t0

    comp_df = pd.DataFrame(comp_rows)
    table_comp = comp_df.pivot_table(index="model", columns=["distance", "cycles"], values=["mean", "std"], sort=False)
    table_comp = table_comp.reorder_levels([1, 2, 0], axis=1).sort_index(axis=1, level=[0, 1], sort_remaining=False)
    eff_df = pd.DataFrame(eff_rows)
    metric_name = {"regression": "MAE", "multiclass": "acc", "binary": "F1"}
    eff_df["attribute"] = [f"{a} {metric_name[spec['kinds'][a]]}" for a in eff_df["attribute"]]
    table_eff = eff_df.pivot_table(index="model", columns=["attribute", "intervention"], values="score", sort=False)
    table_rm = pd.DataFrame(rm_rows).set_index("model")
    table_rm["identity CLD"] = identity_cld(cfg.cld_weights)
    table_true = pd.DataFrame(true_rows).set_index("model")
    timings["total"] = time.perf_counter() - t_all
    extras = {"raw_models": raw, "predictors": predictors, "do_values": do_values, "test": test, "obs": obs,
              "sampler": sampler, "distances": distances, "embed": embed, "cld_encode": cld_encode, "truth": truth,
              "learned_attributes": learned_attr, "mechanisms": mechs, "real_features": real_features, "context": ctx}
    return BenchmarkResult(config=cfg, table_composition=table_comp, table_effectiveness=table_eff, table_realism_minimality=table_rm,
                           table_true_error=table_true, per_image=per_image, figures=figures, predictor_quality=quality,
                           timings=timings, models=scms, extras=extras)


# ----------------------------------------------------------------------------------------------
# notebook 01: MorphoSynth and a learned attribute mechanism
# ----------------------------------------------------------------------------------------------
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
    from ..models.flows import ConditionalFlow1D

    half = len(data) // 2
    flow = ConditionalFlow1D(["t"], bounds=(64.0, 255.0), seed=seed).fit(
        data.i[:half], {"t": data.t[:half]}, epochs=epochs, seed=seed, device="cpu")
    test = slice(half, None)
    eps_hat = flow.abduct(data.i[test], {"t": data.t[test]})
    roundtrip = np.max(np.abs(flow.predict(eps_hat, {"t": data.t[test]}) - data.i[test]))
    true_cf_i = morpho_attributes().counterfactual({"t": data.t[test], "i": data.i[test]}, {"t": t_star})["i"]
    flow_cf_i = flow.predict(eps_hat, {"t": np.full(len(eps_hat), t_star)})
    errors = np.abs(flow_cf_i - true_cf_i)
    return FlowCheck(flow=flow, test=test, eps_hat=eps_hat, roundtrip=float(roundtrip),
                     cf_mae=float(np.mean(errors)), t_star=t_star, cf_errors=errors)


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
    from ..plotting import subplots

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
    from ..data.morphosynth import FONTS, glyph_skeletons
    from ..plotting import subplots

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


def plot_attribute_sweeps(data: MorphoSynth, unit: int, t_values: Sequence[float], i_values: Sequence[float]) -> np.ndarray:
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
    from ..plotting import image_grid

    if len(t_values) != len(i_values):
        raise ValueError(f"t_values and i_values must have the same length, got {len(t_values)} and {len(i_values)}")
    idx = np.array([unit])
    along_t = np.concatenate([data.true_counterfactual({"t": v}, idx=idx)["x"] for v in t_values])
    along_i = np.concatenate([data.true_counterfactual({"i": v}, idx=idx)["x"] for v in i_values])
    return image_grid(np.stack([along_t[:, 0], along_i[:, 0]]) / 255, row_labels=["do(t)", "do(i)"],
                      col_labels=[f"t={a:.1f} / i={b:.0f}" for a, b in zip(t_values, i_values, strict=True)],
                      vmin=0, vmax=1, panel=1.0)


def plot_interventional_vs_counterfactual(scm: DeepSCM, obs: Mapping[str, np.ndarray], noise_i: np.ndarray, *,
                                          t: float = 4.0, seed: int = 0, axes: Any = None) -> np.ndarray:
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
    from ..plotting import subplots

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


def plot_flow_fit(check: FlowCheck, data: MorphoSynth, t_values: Sequence[float] = (1.8, 2.5, 3.5), axes: Any = None) -> np.ndarray:
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
    from ..plotting import identity_line, subplots

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


# ----------------------------------------------------------------------------------------------
# notebooks 02-04: studies on a benchmark run
# ----------------------------------------------------------------------------------------------
def benchmark_results(result: BenchmarkResult) -> dict[str, Any]:
    """The plain results dict that :func:`claims_02` and :func:`claims_03` read from a benchmark run.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.

    Returns
    -------
    dict
        ``models`` (the trained model keys), ``cycles``, the tables ``composition``, ``effectiveness``,
        ``realism_minimality``, ``predictor_quality``, ``per_image``, ``obs`` (factual test units) and
        ``real_features`` (the training images' features, the Fréchet distance's reference set).
    """
    return {"models": tuple(result.config.models), "cycles": result.config.cycles,
            "composition": result.table_composition, "effectiveness": result.table_effectiveness,
            "realism_minimality": result.table_realism_minimality, "predictor_quality": result.predictor_quality,
            "per_image": result.per_image, "obs": result.extras["obs"], "real_features": result.extras["real_features"]}


def run_seeds(config: BenchmarkConfig | Mapping[str, Any] | None = None, seeds: Sequence[int] = (0, 1, 2), *,
              cache: bool | str | os.PathLike = True, **overrides: Any) -> dict[int, BenchmarkResult]:
    """:func:`run_benchmark` once per training seed (data, models, predictors and interventions all follow the seed).

    Parameters
    ----------
    config : BenchmarkConfig or mapping, optional
        Settings shared by every run.
    seeds : sequence of int
        Training seeds (at least two, for an interval over seeds).
    cache : bool or path-like
        See :func:`run_benchmark`.
    **overrides
        Fields of :class:`BenchmarkConfig` to override (not ``seed``).

    Returns
    -------
    dict
        ``seed -> BenchmarkResult``.
    """
    seeds = [int(s) for s in seeds]
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must hold at least two different seeds, got {seeds!r}")
    if "seed" in overrides:
        raise ValueError("give the training seeds with seeds=..., not seed=")
    return {s: run_benchmark(config, cache=cache, **{**overrides, "seed": s}) for s in seeds}


def _headline_columns(result: BenchmarkResult) -> dict[str, dict[str, tuple[float, float]]]:
    """Per model: the truth-based headline numbers of one run and the half-width of their 95 % interval over test images."""
    ctx = result.extras["context"]
    parents, kinds = ctx.parents, ctx.kinds
    eff = result.table_effectiveness
    frechet = _Frechet(result.extras["real_features"], result.per_image, list(result.per_image))

    def half(iv: verdicts.Interval) -> float:
        return (iv.high - iv.low) / 2

    out: dict[str, dict[str, tuple[float, float]]] = {}
    for mdl, per in result.per_image.items():
        err = np.mean([per["true_error"][p] for p in parents], axis=0)
        row = {"true error": (float(err.mean()), half(verdicts.mean_interval(err, unit="test images")))}
        for a in parents:
            col = next(c for c in eff.columns if c[0].split()[0] == a and c[1] == f"do({a})")
            arr = np.asarray(per["effectiveness"][(a, a)], float)
            if kinds[a] == "regression":
                iv = verdicts.mean_interval(arr, unit="test images")
            elif kinds[a] == "multiclass":
                iv = verdicts.binomial_interval(int(arr.sum()), len(arr), unit="test images")
            else:
                iv = _f1_interval(*_binary_outcomes(result.per_image, mdl, a))
            row[f"{col[0]} {col[1]}"] = (float(eff.loc[MODEL_LABELS[mdl], col]), half(iv))
        row["Fréchet"] = (frechet.point[mdl], 1.96 * float(np.std(frechet.draws[mdl], ddof=1)))
        out[mdl] = row
    return out


def seed_table(results: Mapping[int, BenchmarkResult], *, level: float = 0.95) -> pd.DataFrame:
    """The headline table over training seeds: true error, effectiveness and realism with intervals.

    Each run is one training seed; for every model and metric the table gives the per-seed values,
    their mean and a Student-t interval over seeds (the seed-to-seed variation of training, the
    uncertainty a reader re-training the models would see), and ``± test images``, the mean over seeds
    of the half-width of each seed's 95 % interval over its test images (t interval for the true error
    and the MAEs, Clopper-Pearson for an accuracy, paired percentile bootstrap for an F1, bootstrap
    standard error for the Fréchet distance): the uncertainty of one run's number. The true error is
    the mean pixel l1 (0-255) to the true counterfactual over the test images and interventions.

    Parameters
    ----------
    results : mapping
        ``seed -> BenchmarkResult`` from :func:`run_seeds`.
    level : float
        Confidence level of the intervals over seeds.

    Returns
    -------
    pandas.DataFrame
        Rows: model labels; columns ``(metric, "seed s" | "mean" | "low" | "high" | "± test images")``.
    """
    if len(results) < 2:
        raise ValueError(f"results must hold at least two seeds, got {len(results)}")
    per_seed = {s: _headline_columns(r) for s, r in results.items()}
    models = list(next(iter(per_seed.values())))
    metrics = list(next(iter(per_seed.values()))[models[0]])
    rows = {}
    for mdl in models:
        row = {}
        for met in metrics:
            vals = [per_seed[s][mdl][met][0] for s in results]
            ci = verdicts.mean_interval(vals, level=level, unit="training seeds")
            row.update({(met, f"seed {s}"): v for s, v in zip(results, vals, strict=True)})
            row.update({(met, "mean"): ci.estimate, (met, "low"): ci.low, (met, "high"): ci.high,
                        (met, "± test images"): float(np.mean([per_seed[s][mdl][met][1] for s in results]))})
        rows[MODEL_LABELS[mdl]] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


def learning_results(results: Mapping[int, BenchmarkResult]) -> dict[str, Any]:
    """What :func:`claims_learning` reads: per seed and model the per-image true errors and digit/attribute hits.

    Parameters
    ----------
    results : mapping
        ``seed -> BenchmarkResult``.

    Returns
    -------
    dict
        ``models`` (trained keys), ``parents``, ``kinds`` and ``runs``: ``seed -> {model -> {"true_error":
        (n,) mean over interventions, "effectiveness": {attribute: (n,) per-image outcome under do(attribute)},
        "target": {attribute: (n,) the intervened value}}}``.
    """
    first = next(iter(results.values()))
    parents = tuple(first.figures["do_values"])
    runs = {}
    for s, r in results.items():
        runs[s] = {mdl: {"true_error": np.mean([per["true_error"][p] for p in parents], axis=0),
                         "effectiveness": {p: np.asarray(per["effectiveness"][(p, p)], float) for p in parents},
                         "target": {p: np.asarray(per["counterfactual_parents"][p][p]) for p in parents}}
                   for mdl, per in r.per_image.items()}
    return {"models": tuple(first.config.models), "parents": parents, "kinds": dict(first.extras["context"].kinds), "runs": runs}


def _at_temperatures(result: BenchmarkResult, models: Sequence[str],
                     temperatures: Sequence[float]) -> Iterator[tuple[str, float, dict[str, Any]]]:
    """Yield ``(model, T, evaluate_scm output)`` for each trained model re-scored at each temperature."""
    for mdl in models:
        for T in temperatures:
            label = f"{MODEL_LABELS[mdl]} T={T}"
            yield mdl, T, evaluate_scm(result.extras["context"], with_temperature(result, mdl, T), label)


def temperature_table(result: BenchmarkResult, models: Sequence[str], temperatures: Sequence[float]) -> pd.DataFrame:
    """Composition after one cycle and the true error of trained models re-scored at other noise temperatures.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.
    models : sequence of str
        Trained VAE / HVAE keys.
    temperatures : sequence of float
        Pixel-noise temperatures ``T``.

    Returns
    -------
    pandas.DataFrame
        Index ``(model, T)``; columns the ``m=1`` composition distances and ``true error``.
    """
    rows = [{"model": MODEL_LABELS[mdl], "T": T, **{k: v for k, v in ev["summary"].items() if "m=1" in k or k == "true error"}}
            for mdl, T, ev in _at_temperatures(result, models, temperatures)]
    return pd.DataFrame(rows).set_index(["model", "T"])


def _composition(per_image: Mapping[str, Any], mdl: str, dist: str = "l1_pixel", m: int = 1) -> np.ndarray:
    return per_image[mdl]["composition"][dist][:, m - 1]


def paired_table(result: BenchmarkResult, pairs: Sequence[tuple[str, str]], *, seed: int = 0,
                 distances: Sequence[str] = ("l1_pixel", "l1_embedding", "perceptual")) -> pd.DataFrame:
    """Paired comparisons of composition between models on the same test images (after 1 and ``cycles`` cycles).

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.
    pairs : sequence of (str, str)
        Model keys ``(a, b)``; the difference is ``a - b``.
    seed : int
        Seed of the paired bootstrap interval.
    distances : sequence of str
        Composition distances.

    Returns
    -------
    pandas.DataFrame
        One row per distance, cycle count and pair: mean difference, bootstrap 95 % interval, Wilcoxon p.
    """
    rows = []
    for dist in distances:
        for m in sorted({1, result.config.cycles}):
            for a, b in pairs:
                r = paired_comparison(_composition(result.per_image, a, dist, m), _composition(result.per_image, b, dist, m), seed=seed)
                rows.append({"distance": dist, "m": m, "a": MODEL_LABELS[a], "b": MODEL_LABELS[b], "mean(a - b)": r.mean_diff,
                             "95% CI": f"[{claims.reader_number(r.ci[0])}, {claims.reader_number(r.ci[1])}]", "Wilcoxon p": r.pvalue})
    return pd.DataFrame(rows)


def score_configurations(result: BenchmarkResult, temperatures: Sequence[float]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Score a family of configurations on the same test units: VAEs / HVAE at each temperature, GANs, references.

    Parameters
    ----------
    result : BenchmarkResult
        A MorphoSynth run of :func:`run_benchmark` with the VAEs, the HVAE, both GANs and both references.
    temperatures : sequence of float
        Pixel-noise temperatures of the VAEs and the HVAE.

    Returns
    -------
    configs : pandas.DataFrame
        One row per configuration: ``kind`` (``model`` or ``reference``) and the summary of
        :func:`evaluate_scm` (composition, effectiveness, Fréchet, CLD, true error).
    per_image : dict
        Configuration label -> per-image arrays.
    """
    rows, per_image = [], {}

    def add(label: str, kind: str, ev: dict[str, Any]) -> None:
        rows.append({"configuration": label, "kind": kind, **ev["summary"]})
        per_image[label] = ev["per_image"]

    for mdl, T, ev in _at_temperatures(result, ("vae_fixed", "vae_learned", "hvae"), temperatures):
        add(f"{MODEL_LABELS[mdl]} T={T}", "model", ev)
    ctx = result.extras["context"]
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
        for subset, mask in (("all configurations", np.ones(len(configs), bool)), ("models only", (configs["kind"] == "model").to_numpy())):
            a, b = oriented_proxy(configs, name)[mask], configs["true error"].to_numpy()[mask]
            r = stats.spearmanr(a, b) if np.ptp(a) > 0 and np.ptp(b) > 0 else None
            agree.append({"proxy": name, "set": subset, "Spearman rho": np.nan if r is None else r.statistic,
                          "p-value": np.nan if r is None else r.pvalue, "n": int(mask.sum())})
    return pd.DataFrame(agree).pivot_table(index="proxy", columns="set", values=["Spearman rho", "p-value"], dropna=False)


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
    for name in ("composition l1_pixel m=1", "Fréchet", "CLD", "effectiveness t do(t)", "effectiveness i do(i)", "effectiveness d do(d)"):
        r, p = agreement[("Spearman rho", "models only")][name], agreement[("p-value", "models only")][name]
        lines.append(f"{name}: Spearman rho = {r:+.2f} (p = {p:.2g}) against the true error across model configurations")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# figures of notebooks 02-04
# ----------------------------------------------------------------------------------------------
def plot_composition_curves(result: BenchmarkResult, models: Sequence[str],
                            distances: Sequence[str] = ("l1_pixel", "l1_embedding", "perceptual"), axes: Any = None) -> np.ndarray:
    """Mean composition distance against the number of cycles, with 95 % bands over images (Table 1's curves).

    Parameters
    ----------
    result : BenchmarkResult
    models : sequence of str
        Model keys.
    distances : sequence of str
        One panel per distance.
    axes : sequence of matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import line_with_band, subplots

    if axes is None:
        _, axes = subplots(1, len(distances), width=3.6, height=3.0)
    axes = np.atleast_1d(axes)
    for ax, dist in zip(axes, distances, strict=True):
        for mdl in models:
            arr = result.per_image[mdl]["composition"][dist]
            se = arr.std(0, ddof=1) / np.sqrt(len(arr))
            line_with_band(np.arange(1, arr.shape[1] + 1), arr.mean(0), arr.mean(0) - 1.96 * se, arr.mean(0) + 1.96 * se,
                           label=MODEL_LABELS[mdl], ax=ax)
        ax.set_xlabel("cycles m")
        ax.set_title(dist)
    axes[0].set_ylabel("distance to x (mean, 95% band)")
    axes[0].legend(fontsize=7)
    return axes


def plot_cld_histograms(result: BenchmarkResult, models: Sequence[str], *, unit: str = "test image", ax: Any = None) -> Any:
    """Per-image CLD of each model, with the identity map's value ``log(0.8 + 0.2e)`` marked.

    Parameters
    ----------
    result : BenchmarkResult
    models : sequence of str
        Model or reference keys.
    unit : str
        What a test unit is called on the axis label.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    for mdl in models:
        ax.hist(result.per_image[mdl]["cld"], bins=30, histtype="step", label=MODEL_LABELS[mdl])
    ident = identity_cld(result.config.cld_weights)
    ax.axvline(ident, color="0.3", ls="--", label=f"identity {ident:.4f}")
    ax.set_xlabel(f"CLD per {unit}")
    ax.set_ylabel(f"{unit}s")
    ax.legend(fontsize=6)
    return ax


def plot_p1_p2(table: pd.DataFrame, ax: Any = None) -> Any:
    """Each model's ``P1 = P(S_x* <= div)`` against ``P2 = P(S_x >= div)`` (Table 5's minimality columns).

    Parameters
    ----------
    table : pandas.DataFrame
        ``result.table_realism_minimality``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    ax.scatter(table["P1"], table["P2"])
    for name, row in table.iterrows():
        ax.annotate(name.split(" (")[0] if "VAE" not in name else name, (row["P1"], row["P2"]), fontsize=6)
    ax.set_xlabel("P1 = P(S_x* <= div)")
    ax.set_ylabel("P2 = P(S_x >= div)")
    return ax


def plot_finetuning_history(history: Mapping[str, Sequence[float]], axes: Any = None) -> np.ndarray:
    """The HVAE's counterfactual fine-tuning: classifier loss, NELBO against its constraint, Lagrange multiplier.

    Parameters
    ----------
    history : mapping
        ``result.extras["raw_models"]["hvae_cf_history"]`` (``cf_loss``, ``nelbo``, ``constraint``, ``lambda``).
    axes : sequence of three matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import subplots

    if axes is None:
        _, axes = subplots(1, 3, width=3.0, height=2.6)
    axes[0].plot(history["cf_loss"])
    axes[0].set_title("classifier loss on x*")
    axes[1].plot(history["nelbo"])
    axes[1].axhline(history["constraint"][0], color="0.3", ls="--")
    axes[1].set_title("NELBO per pixel (constraint dashed)")
    axes[2].plot(history["lambda"])
    axes[2].set_title("Lagrange multiplier")
    for ax, what in zip(axes, ("cross-entropy", "NELBO per pixel", "λ"), strict=False):
        ax.set_ylabel(what)
    for ax in axes:
        ax.set_xlabel("step")
    return axes


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
    from ..plotting import subplots

    if axes is None:
        _, axes = subplots(1, len(proxies), width=2.8, height=2.8)
    axes = np.atleast_1d(axes)
    colours = {"vae_fixed": "C0", "vae_learned": "C1", "hvae": "C2"}
    for ax, name in zip(axes, proxies, strict=True):
        for label, row in configs.iterrows():
            c = next((col for k, col in colours.items() if label.startswith(MODEL_LABELS[k])), "C3" if row["kind"] == "model" else "0.2")
            ax.scatter(oriented_proxy(configs, name)[configs.index.get_loc(label)], row["true error"], color=c, s=18,
                       marker="o" if row["kind"] == "model" else "*")
        ax.set_xlabel(name, fontsize=8)
    axes[0].set_ylabel("true counterfactual error (pixel l1)")
    for label in (MODEL_LABELS["identity"], MODEL_LABELS["true"]):
        axes[0].annotate(label.split(" (")[0], (oriented_proxy(configs, proxies[0])[configs.index.get_loc(label)],
                                                 configs.loc[label, "true error"]), fontsize=7)
    return axes


# ----------------------------------------------------------------------------------------------
# claims: the paper's words, an interval over test images, a rule written down first
# ----------------------------------------------------------------------------------------------
#: The paper's Table 5 as printed (all 11 rows: CLD, P1, P2), for claim M2.
PAPER_TABLE5 = np.array([[0.276, 0.065, 0.843], [0.268, 0.055, 0.839], [0.272, 0.112, 0.736], [0.390, 0.339, 0.570],
                         [0.286, 0.119, 0.764], [0.310, 0.072, 0.925], [0.297, 0.014, 0.984], [0.295, 0.0001, 0.999],
                         [0.295, 0.003, 0.996], [0.362, 0.224, 0.777], [0.304, 0.046, 0.953]])

#: Bootstrap draws of the paired F1 intervals (percentiles) and of the Fréchet distance's standard error (seeded:
#: two builds give the same report).
_N_BOOT = 400
_N_BOOT_FRECHET = 200
_FULL = "params/full.yaml runs 10000 test images"
_TABLE1 = "Table 1: Composition for MorphoMNIST. For embeddings, we concatenate the last layer activations across all predictors trained."
_TABLE3 = "Table 3: Effectiveness on MorphoMNIST test set."
_TABLE5 = "Table 5: Realism and Minimality for MorphoMNIST and CelebA."
_NOT_PAPER = "not in the paper"
_SEEDS = "the units are training seeds: the notebook's seeds parameter adds them, each seed's models are cached"
_OWN = "a property the paper does not state (from the notes or the book's own experiments): the book's own finding, not a reproduction"


@dataclass(frozen=True)
class _Part:
    """One comparison of a claim: its label, its decision, the boundary it was decided against and its units."""

    label: str
    decision: verdicts.Decision
    threshold: float
    n: int


def _units(interval: verdicts.Interval) -> int:
    found = re.search(r", (\d+) ", interval.method)
    return int(found.group(1)) if found else 0


def _side(label: str, interval: verdicts.Interval, side: str, threshold: float = 0.0, *, inclusive: bool = False) -> _Part:
    rule = verdicts.decide_below if side == "below" else verdicts.decide_above
    return _Part(label, rule(interval, threshold, inclusive=inclusive, quantity=label), threshold, _units(interval))


def _band(label: str, interval: verdicts.Interval, low: float, high: float) -> _Part:
    n = _units(interval)
    edge = low if abs(interval.estimate - low) < abs(interval.estimate - high) else high
    return _Part(label, verdicts.decide_within(interval, low, high, quantity=label), edge, n)


def _margin(part: _Part) -> float:
    """How many half-widths the interval's nearer end lies from the boundary (for the part shown)."""
    iv = part.decision.interval
    if not iv.defined:
        return -np.inf
    half = (iv.high - iv.low) / 2
    gap = min(abs(iv.low - part.threshold), abs(iv.high - part.threshold))
    return np.inf if half == 0 else gap / half


def _every(parts: Sequence[_Part], what: str, more: str = _FULL) -> tuple[verdicts.Decision, str, str]:
    """Join a claim's comparisons: the combined decision, with the deciding part's interval, a tally and a note.

    The interval recorded is the part nearest its boundary when every part is reproduced, otherwise the
    first part with the combined verdict. An undecided claim's note says how many test units would
    decide that part if its estimate stayed where it is (the half-width shrinks as one over root n).
    """
    d = verdicts.combine([p.decision for p in parts], rule=what)
    if d.verdict == verdicts.REPRODUCED:
        shown, why = min(parts, key=_margin), "the part nearest its boundary"
    else:
        shown, why = next(p for p in parts if p.decision.verdict == d.verdict), "the first part that decides"
    decision = verdicts.Decision(d.verdict, shown.decision.interval, f"{d.rule}. Interval shown ({why}): {shown.decision.rule}")
    counts = {v: sum(p.decision.verdict == v for p in parts) for v in (verdicts.REPRODUCED, verdicts.NOT_REPRODUCED, verdicts.UNDECIDED)}
    tally = f"{counts[verdicts.REPRODUCED]}/{len(parts)} parts reproduced, {counts[verdicts.NOT_REPRODUCED]} not reproduced, " \
            f"{counts[verdicts.UNDECIDED]} undecided; the interval is that of {shown.label}"
    note = ""
    if d.verdict == verdicts.UNDECIDED:
        iv = shown.decision.interval
        gap = abs(iv.estimate - shown.threshold) if iv.defined else 0.0
        unit = "training seeds" if "training seed" in iv.method else "units"
        if iv.method.endswith("1 training seed"):
            note = f"{shown.label}: decided on one training seed, and a model comparison needs at least two ({more})."
        elif not iv.defined or shown.n < 2:
            note = f"{shown.label}: no interval at {shown.n} {unit}; more {unit} would decide it ({more})."
        elif gap == 0:
            note = f"{shown.label}: the estimate sits on the boundary {shown.threshold:g}; no size decides it unless the estimate moves."
        else:
            need = int(np.ceil(shown.n * ((iv.high - iv.low) / 2 / gap) ** 2))
            note = (f"{shown.label} straddles {shown.threshold:g}: at this estimate about {need} {unit} (now {shown.n}) would "
                    f"decide it ({more}).")
    return decision, tally, note


def _diff(a: Any, b: Any, unit: str = "test images") -> verdicts.Interval:
    """t interval of the mean of the per-unit differences ``a - b`` (the same units for both)."""
    return verdicts.mean_interval(np.asarray(a, float) - np.asarray(b, float), unit=unit)


def _boot_index(n: int, seed: int = 0, draws: int = _N_BOOT) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, (draws, n))


def _percentile(estimate: float, draws: np.ndarray, n: int) -> verdicts.Interval:
    """Percentile interval of paired bootstrap draws; undefined when a draw or the estimate is undefined."""
    method = f"95% paired percentile bootstrap, {n} test images, {len(draws)} draws"
    if n < 2 or not np.isfinite(estimate) or not np.isfinite(draws).all():
        return verdicts.Interval(float(estimate), np.nan, np.nan, method + " (undefined: an F1 without positives)")
    low, high = np.quantile(draws, [0.025, 0.975])
    return verdicts.Interval(float(estimate), float(low), float(high), method)


def _f1(target: np.ndarray, predicted: np.ndarray) -> np.ndarray:
    """F1 along the last axis (NaN where there is no positive target or prediction)."""
    tp = ((target == 1) & (predicted == 1)).sum(-1)
    wrong = (target != predicted).sum(-1)
    denom = 2 * tp + wrong
    return np.where(denom > 0, 2 * tp / np.maximum(denom, 1), np.nan)


def _outcomes(target: Any, hits: Any) -> tuple[np.ndarray, np.ndarray]:
    """Binary targets and the classifier's predictions, from the targets and its per-image 0/1 correctness."""
    target = np.asarray(target).astype(int)
    return target, np.where(np.asarray(hits) == 1, target, 1 - target)


def _binary_outcomes(per_image: Mapping[str, Any], mdl: str, attr: str) -> tuple[np.ndarray, np.ndarray]:
    """Targets and predictions of the ``attr`` classifier on the counterfactuals of ``do(attr)``."""
    return _outcomes(per_image[mdl]["counterfactual_parents"][attr][attr], per_image[mdl]["effectiveness"][(attr, attr)])


def _f1_interval(target: np.ndarray, predicted: np.ndarray) -> verdicts.Interval:
    """Percentile bootstrap interval of one F1 over test images."""
    idx = _boot_index(len(target))
    return _percentile(float(_f1(target, predicted)), _f1(target[idx], predicted[idx]), len(target))


def _f1_diff(per_image: Mapping[str, Any], a: str, b: str, attr: str) -> verdicts.Interval:
    """Paired bootstrap interval of ``F1(a) - F1(b)`` for the intervened attribute, over test images."""
    ta, pa = _binary_outcomes(per_image, a, attr)
    tb, pb = _binary_outcomes(per_image, b, attr)
    idx = _boot_index(len(ta))
    draws = _f1(ta[idx], pa[idx]) - _f1(tb[idx], pb[idx])
    return _percentile(float(_f1(ta, pa) - _f1(tb, pb)), draws, len(ta))


def _sqrt_psd(s: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh((s + s.T) / 2)
    return (v * np.sqrt(np.clip(w, 0, None))) @ v.T


class _Frechet:
    """Fréchet distances of counterfactual features to a fixed real set, with paired bootstrap draws over test images."""

    def __init__(self, real_features: Any, per_image: Mapping[str, Any], models: Sequence[str], *, draws: int = _N_BOOT_FRECHET) -> None:
        real = np.asarray(real_features, float)
        self.mu, cov = real.mean(0), np.atleast_2d(np.cov(real, rowvar=False))
        self.trace, self.root = float(np.trace(cov)), _sqrt_psd(cov)
        feats = {m: np.asarray(per_image[m]["features"], float) for m in models}
        self.n = len(next(iter(feats.values())))
        self.point = {m: self._distance(f) for m, f in feats.items()}
        self.draws: dict[str, np.ndarray] = {}
        if draws:
            idx = _boot_index(self.n, seed=1, draws=draws)
            self.draws = {m: np.array([self._distance(f[i]) for i in idx]) for m, f in feats.items()}

    def _distance(self, f: np.ndarray) -> float:
        # Tr (S_r S_f)^{1/2} = sum sqrt(eig(B^T B)) with B = (f - mean) S_r^{1/2} / sqrt(n - 1); B B^T has the same
        # nonzero eigenvalues and is the smaller matrix when there are fewer images than features.
        centred = f - f.mean(0)
        b = centred @ self.root / np.sqrt(len(f) - 1)
        eig = np.linalg.eigvalsh(b @ b.T if len(f) < b.shape[1] else b.T @ b)
        tr_cov = float((centred**2).sum() / (len(f) - 1))
        value = ((self.mu - f.mean(0)) ** 2).sum() + self.trace + tr_cov - 2 * np.sqrt(np.clip(eig, 0, None)).sum()
        return float(max(value, 0.0))

    def diff(self, a: str, b: str) -> verdicts.Interval:
        """Normal interval of ``FD(a) - FD(b)`` with the paired bootstrap's standard error (the same resampled test images).

        Not a percentile interval: resampled sets hold repeated images, which biases the Fréchet distance
        of every draw, so the percentiles need not even contain the estimate.
        """
        return verdicts.normal_interval(self.point[a] - self.point[b], np.std(self.draws[a] - self.draws[b], ddof=1),
                                        method=f"paired bootstrap standard error, {self.n} test images, {_N_BOOT_FRECHET} draws")


def _record(key: str, statement: str, parts: Sequence[_Part], what: str, *, paper: Any, ours: Any, evidence: str,
            quote: str, source: str, kind: str = "reproduction", change: str = "", more: str = _FULL) -> None:
    decision, tally, note = _every(parts, what, more)
    claims.claim(key, statement, paper=paper, ours=ours, evidence=f"{evidence}; {tally}", decision=decision, quote=quote,
                 source=source, kind=kind, note=note, change=change)


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 01 (MorphoSynth): graph mutilation (E6) and the learned intensity flow (X0-flow).

    Both are sanity checks of cflib's code: E6 runs the data's own SCM (exact quantities), X0-flow checks
    the flow's inverse (exact) and its counterfactual error (t interval over held-out units).

    Parameters
    ----------
    results : mapping
        ``mutilation``: four numbers in this order: mean ``|i* - i|`` after ``do(t)``, max ``|t* - t|`` after
        ``do(i)``, max ``|t* - t|`` after ``do(d)``, max ``|i* - i|`` after ``do(d)``; ``n_units``: units
        of the mutilation check; ``roundtrip`` and ``flow_errors`` (per held-out unit) from :class:`FlowCheck`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, ("mutilation", "n_units", "roundtrip", "flow_errors"), "claims_01")
    mutilation = [float(v) for v in results["mutilation"]]
    if len(mutilation) != 4:
        raise ValueError(f"results['mutilation'] must hold 4 numbers (see the docstring), got {len(mutilation)}")
    roundtrip, errors = float(results["roundtrip"]), np.asarray(results["flow_errors"], float)
    exact = verdicts.exact
    parts = [_side("mean |i* - i| after do(t)", exact(mutilation[0]), "above", 1.0),
             _side("max |t* - t| after do(i)", exact(mutilation[1]), "below", 0.0, inclusive=True),
             _side("max |t* - t| after do(d)", exact(mutilation[2]), "below", 0.0, inclusive=True),
             _side("max |i* - i| after do(d)", exact(mutilation[3]), "below", 1e-9)]
    _record("E6", "Graph mutilation: after do(t) the intensity changes; after do(i) the thickness does not; after do(d) neither does.",
            parts, "all four mutilation checks", paper="qualitative (Fig. 4 / 7, deterministic given the SCM)",
            ours=f"mean |i*-i| = {mutilation[0]:.2f}; max |t*-t| = {mutilation[1]:.1e}, {mutilation[2]:.1e}; max |i*-i| = {mutilation[3]:.1e}",
            evidence=f"the data's own SCM on {results['n_units']} units: exact values (no sampling); t exactly unchanged, i within float round-off 1e-9",
            quote="Intervening on thickness modifies intensity, while intervening on intensity does not affect thickness (graph "
                  "mutilation). Interventions on the digit alter neither.", source="Sec. 4.2, Fig. 4", kind="sanity check")
    parts = [_side("flow round-trip error (grey levels)", exact(roundtrip), "below", 1e-2),
             _side("flow counterfactual MAE under do(t=4) (grey levels)", verdicts.mean_interval(errors, unit="held-out units"), "below", 3.0)]
    _record("X0-flow", "A conditional flow recovers the intensity mechanism: exact inverse and accurate counterfactuals.", parts,
            "inverse and counterfactual error", paper="flows are exactly invertible (Sec. 3.2)",
            ours=f"round trip {roundtrip:.1e}; cf MAE {errors.mean():.2f}",
            evidence=f"round trip exact on {len(errors)} held-out units (< 1e-2 grey levels); counterfactual MAE < 3 grey levels",
            quote="Invertible, explicit used for the attribute mechanisms in conjunction with Conditional Normalising Flows [46]. "
                  "This mechanism is invertible by design.", source="Sec. 3.1 (three categories of mechanisms), Sec. 3.2",
            kind="sanity check")
    return claims.rows(["E6", "X0-flow"])


#: The bar a trained image mechanism must clear for the benchmark to compare working models (issue: models that learn).
LEARNING_BAR = {"digit accuracy": 0.6, "attribute F1": 0.7}


def claims_learning(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims that the trained models work, over every training seed: they do what the intervention asks and approach the truth.

    Not the paper's claims but the precondition of comparing its models: every trained mechanism, in every
    seed, (L1) makes the anti-causal predictor read the intervened value (MorphoSynth: digit accuracy under
    ``do(d)`` at least 0.6, binomial interval over test images; SmileyFaces: F1 of the flipped attribute at
    least 0.7 under ``do(s)`` and under ``do(e)``, where a coin flip scores about 0.5; paired percentile
    bootstrap) and (L2, MorphoSynth) lands closer to the true counterfactual than the unchanged image does
    (per-image true error minus the identity's, averaged over the three interventions; t interval over test
    images). SmileyFaces has no L2: an attribute flip changes a few pixels of a face, so the unchanged face
    is closer to the truth in pixels than any model's re-drawn face (the table of true errors shows it).

    Parameters
    ----------
    results : mapping
        From :func:`learning_results`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, ("models", "parents", "kinds", "runs"), "claims_learning")
    runs, models, parents, kinds = results["runs"], results["models"], results["parents"], results["kinds"]
    seeds = list(runs)
    faces = all(kinds[p] == "binary" for p in parents)
    parts, ours = [], {}
    if faces:
        bar = LEARNING_BAR["attribute F1"]
        for s in seeds:
            for mdl in models:
                for p in parents:
                    iv = _f1_interval(*_outcomes(runs[s][mdl]["target"][p], runs[s][mdl]["effectiveness"][p]))
                    parts.append(_side(f"{MODEL_LABELS[mdl]} F1 under do({p}), seed {s}", iv, "above", bar, inclusive=True))
                    ours[f"{MODEL_LABELS[mdl]} do({p}) seed {s}"] = round(iv.estimate, 3)
        key, statement = "L1-faces", f"Every trained model makes the attribute predictors read the flipped smile and eyeglasses: F1 at least {bar} in every seed."
        paper = "Table 4: F1 of the intervened attribute 0.82-1.00 for every model shown"
        source = "Sec. 4.2, Table 4"
    else:
        bar = LEARNING_BAR["digit accuracy"]
        for s in seeds:
            for mdl in models:
                hits = np.asarray(runs[s][mdl]["effectiveness"]["d"])
                parts.append(_side(f"{MODEL_LABELS[mdl]} digit accuracy under do(d), seed {s}",
                                   verdicts.binomial_interval(int(hits.sum()), len(hits), unit="test images"), "above", bar, inclusive=True))
                ours[f"{MODEL_LABELS[mdl]} seed {s}"] = round(float(hits.mean()), 3)
        key, statement = "L1-digit", f"Every trained model changes the digit under do(d): predictor accuracy at least {bar} in every seed."
        paper = "Table 3: y Acc under do(y) 0.451-0.972 (GAN fine-tuned lowest)"
        source = "Sec. 4.2, Table 3"
    _record(key, statement, parts, "every model in every seed", paper=paper, ours=ours,
            evidence=f"{len(seeds)} training seeds x {len(models)} models", source=source, kind="sanity check",
            quote="Effectiveness aims to identify how successful is the performed intervention. In other words, if we force a "
                  "variable X to have the value x, then X will take on the value x.")
    keys = [key]
    if not faces:
        parts, ours = [], {}
        for s in seeds:
            ident = runs[s]["identity"]["true_error"]
            for mdl in models:
                diff = _diff(runs[s][mdl]["true_error"], ident)
                parts.append(_side(f"{MODEL_LABELS[mdl]} true error - identity's, seed {s}", diff, "below", 0.0))
                ours[f"{MODEL_LABELS[mdl]} seed {s}"] = f"{runs[s][mdl]['true_error'].mean():.2f} vs {ident.mean():.2f}"
        _record("L2-truth", "Every trained model's counterfactuals are closer to the true counterfactual than the unchanged image is (every seed).",
                parts, "every model in every seed", paper="not measurable on Morpho-MNIST (no true counterfactuals)", ours=ours,
                evidence=f"mean pixel l1 (0-255) to the true counterfactual over do(t), do(i), do(d); {len(seeds)} seeds x {len(models)} models",
                quote="counterfactuals, by definition, are hypothetical scenarios without observable ground truths",
                source="Abstract (the book's substitute data has them)", kind="sanity check")
        keys.append("L2-truth")
    return claims.rows(keys)


_BENCHMARK_KEYS = ("models", "cycles", "realism_minimality", "predictor_quality", "per_image", "obs", "real_features")
#: The hierarchical-VAE mechanisms, re-scored at the VAEs' temperature for the model comparisons.
_HVAES = ("hvae", "hvae_cf")


def seed_results(runs: Mapping[int, BenchmarkResult], *, temperature: float | None = None) -> dict[int, dict[str, Any]]:
    """Per training seed, the results the model comparisons of :func:`claims_02` and :func:`claims_03` read.

    The official code abducts the VAEs at pixel-noise temperature 0.1 and the HVAE at 0.3, and a higher
    temperature alone lowers the composition error (at ``T = 1`` it is 0 by construction). So that a
    comparison is about the models and not about a setting, every HVAE is re-scored here (no
    retraining) at the VAEs' temperature, on the same test units and interventions.

    Parameters
    ----------
    runs : mapping
        ``seed -> BenchmarkResult`` from :func:`run_seeds` (or one seed's :func:`run_benchmark`).
    temperature : float, optional
        The one pixel-noise temperature of every VAE and HVAE (default: the runs' ``vae_temperature``).

    Returns
    -------
    dict
        ``seed ->`` :func:`benchmark_results` of that run with the HVAEs' per-image results at the matched
        temperature, plus ``temperature``.
    """
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must map each training seed to its BenchmarkResult (run_seeds(...) or {seed: run_benchmark(...)})")
    out = {}
    for s, r in runs.items():
        if not isinstance(r, BenchmarkResult):
            raise TypeError(f"runs[{s!r}] must be a BenchmarkResult, got {type(r).__name__}")
        t = float(r.config.vae_temperature if temperature is None else temperature)
        res = benchmark_results(r)
        per_image = dict(res["per_image"])
        for mdl in _HVAES:
            if mdl in r.extras["mechanisms"] and r.extras["mechanisms"][mdl].noise_temperature != t:
                per_image[mdl] = evaluate_scm(r.extras["context"], with_temperature(r, mdl, t), f"{MODEL_LABELS[mdl]} T={t:g}")["per_image"]
        out[s] = {**res, "per_image": per_image, "temperature": t}
    return out


class _Seeds:
    """Training seeds as the units of a model comparison.

    Each seed's estimate (a mean of paired per-image differences, or a difference of Fréchet distances or
    F1 scores over its test images) is one unit, and the claim is decided on
    :func:`cflib.verdicts.seed_interval` of those estimates. With one seed the image-level interval is
    shown but cannot decide (:func:`cflib.verdicts.one_seed`).
    """

    def __init__(self, runs: Any, models: Sequence[str], *, frechet: Sequence[str] = ()) -> None:
        if not isinstance(runs, Mapping) or not runs:
            raise ValueError("results['seeds'] must map each training seed to its results (see seed_results)")
        self.seeds, self.runs = list(runs), list(runs.values())
        self.n = len(self.runs)
        for s, r in runs.items():
            missing = [m for m in models if m not in r.get("per_image", {})]
            if missing:
                raise ValueError(f"results['seeds'][{s!r}] lacks the per-image results of {missing}")
        draws = _N_BOOT_FRECHET if self.n == 1 else 0
        self.frechet = [_Frechet(r["real_features"], r["per_image"], frechet, draws=draws) for r in self.runs] if frechet else []

    def part(self, label: str, stat: Callable[[int], float], image_interval: Callable[[int], verdicts.Interval], side: str,
             threshold: float = 0.0) -> _Part:
        """One comparison: ``stat(k)`` is seed ``k``'s estimate, ``image_interval(k)`` its interval over test images."""
        if self.n == 1:
            p = _side(label, image_interval(0), side, threshold)
            return _Part(label, verdicts.one_seed(p.decision), threshold, p.n)
        return _side(label, verdicts.seed_interval([stat(k) for k in range(self.n)]), side, threshold)

    def paired(self, label: str, diff: Callable[[Mapping[str, Any]], np.ndarray], side: str, threshold: float = 0.0) -> _Part:
        """A comparison of per-image paired differences ``diff(run)``: each seed's estimate is their mean."""
        return self.part(label, lambda k: float(np.mean(diff(self.runs[k]))),
                         lambda k: verdicts.mean_interval(diff(self.runs[k]), unit="test images"), side, threshold)

    def frechet_diff(self, a: str, b: str, side: str, label: str | None = None) -> _Part:
        """Fréchet distance of ``a`` minus that of ``b``: per seed, the difference of the two distances."""
        return self.part(label or f"Fréchet {MODEL_LABELS[a]} - {MODEL_LABELS[b]}", lambda k: self.frechet[k].point[a] - self.frechet[k].point[b],
                         lambda k: self.frechet[k].diff(a, b), side)

    def mean(self, value: Callable[[Mapping[str, Any]], float]) -> float:
        """The mean over seeds of ``value(run)``."""
        return float(np.mean([value(r) for r in self.runs]))

    @property
    def evidence(self) -> str:
        """What the comparisons rest on, for a claim's evidence."""
        n_img = len(np.asarray(self.runs[0]["per_image"]["identity"]["cld"]))
        if self.n == 1:
            return f"1 training seed ({n_img} test images): a model comparison needs at least two seeds"
        return f"{self.n} training seeds (seeds {', '.join(map(str, self.seeds))}) as the units, each the mean over its {n_img} test images"


def _eff(per_image: Mapping[str, Any], mdl: str, attr: str, do: str) -> np.ndarray:
    """Per-image effectiveness of the ``attr`` predictor under ``do(do)`` (absolute error or 0/1 correctness)."""
    return np.asarray(per_image[mdl]["effectiveness"][(do, attr)], float)


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 02 (MorphoSynth benchmark): composition, effectiveness, realism, minimality, overall.

    Every comparison between trained models takes the **training seeds as units**: per seed, the mean of
    the paired per-image differences on the same test images and interventions (composition, MAE, digit
    accuracy, CLD, P1) or the difference of the two Fréchet distances, then a t interval over the seeds
    (:func:`cflib.verdicts.seed_interval`); with one seed the comparison is undecided
    (:func:`cflib.verdicts.one_seed`). The models are compared at one pixel-noise temperature
    (:func:`seed_results`). A claim about several comparisons needs every one
    (:func:`cflib.verdicts.combine`). The sanity checks and the book's own findings read the first seed's
    run at the benchmark's settings. M2 checks the paper's own Table 5 (:data:`PAPER_TABLE5`). Records
    ``cld_jensen_gap``.

    Parameters
    ----------
    results : mapping
        :func:`benchmark_results` of the first seed's MorphoSynth run with the five models (``vae_fixed``,
        ``vae_learned``, ``hvae``, ``gan``, ``gan_ft``) and both references; ``seeds``, the per-seed
        results of :func:`seed_results`; and ``composition_at_T1_max`` (the largest pixel composition after
        one cycle at ``T = 1``, from :func:`temperature_table`).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, (*_BENCHMARK_KEYS, "seeds", "composition_at_T1_max"), "claims_02")
    L, MODELS, cycles = MODEL_LABELS, tuple(results["models"]), results["cycles"]
    R, per_image, comp_at_T1 = results["realism_minimality"], results["per_image"], results["composition_at_T1_max"]
    S = _Seeds(results["seeds"], MODELS, frechet=MODELS)
    temperature = next(iter(results["seeds"].values())).get("temperature")
    dists = ("l1_pixel", "l1_embedding", "perceptual")
    ms = sorted({1, cycles})
    n = len(_composition(per_image, "hvae"))
    paired = S.evidence + (f"; every VAE and HVAE abducts at one pixel-noise temperature T = {temperature:g}" if temperature is not None else "")
    matched = ("the HVAE abducted at T = 0.3 and the VAEs at 0.1 (the official code), so part of the HVAE's lead was the setting; "
               "now every model abducts at the VAEs' temperature, and training seeds, not test images, are the units")
    seeds_only = "training seeds, not the test images of one seed, are the units of a model comparison"

    def comp(r: Mapping[str, Any], mdl: str, dist: str = "l1_pixel", m: int = 1) -> np.ndarray:
        return _composition(r["per_image"], mdl, dist, m)

    def lower(a: str, b: str, dist: str, m: int) -> _Part:
        return S.paired(f"composition {dist} m={m}: {L[a]} - {L[b]}", lambda r: comp(r, a, dist, m) - comp(r, b, dist, m), "below")

    def higher(a: str, b: str, dist: str, m: int) -> _Part:
        return S.paired(f"composition {dist} m={m}: {L[a]} - {L[b]}", lambda r: comp(r, a, dist, m) - comp(r, b, dist, m), "above")

    def grows(mdl: str, dist: str) -> _Part:
        return S.paired(f"{L[mdl]} {dist}: m={cycles} - m=1", lambda r: comp(r, mdl, dist, cycles) - comp(r, mdl, dist, 1), "above")

    def mean(mdl: str, dist: str = "l1_pixel", m: int = 1) -> float:
        return S.mean(lambda r: float(comp(r, mdl, dist, m).mean()))

    _record("C1", "The HVAE composes better than both VAEs on every distance, at 1 and 10 cycles.",
            [lower("hvae", v, d, m) for d in dists for m in ms for v in ("vae_fixed", "vae_learned")], "all 12 comparisons",
            paper="0.438 vs 2.600 / 4.244 (pixel, m=1); 1.550 vs 7.698 / 9.855 (m=10)",
            ours=f"pixel m=1: {mean('hvae'):.2f} vs {mean('vae_learned'):.2f} / {mean('vae_fixed'):.2f}", evidence=paired,
            quote="We can observe that HVAE significantly outperforms all models across metrics both for […] and […]",
            source="Sec. 4.1, Table 1 (composition after 1 and 10 cycles)", change=matched, more=_SEEDS)
    _record("C2", "Composition error grows with the number of cycles (VAEs, HVAE, GAN fine-tuned; every distance).",
            [grows(mdl, d) for mdl in ("vae_fixed", "vae_learned", "hvae", "gan_ft") for d in dists], "all 12 model-distance pairs",
            paper="all m=10 entries above m=1 (Table 1)", ours=f"pixel, HVAE: {mean('hvae'):.2f} -> {mean('hvae', m=cycles):.2f}",
            evidence=f"per-image m={cycles} minus m=1; {paired}", quote=_TABLE1,
            source="Table 1: every 10-cycle entry above its 1-cycle entry for both VAEs, the HVAE and GAN fine-tuned", change=seeds_only,
            more=_SEEDS)
    others = [k for k in MODELS if k != "gan"]
    _record("C3", "The GAN without encoder fine-tuning has the worst composition after one cycle.",
            [higher("gan", k, d, 1) for d in dists for k in others],
            "GAN above each of the four other models on each distance", paper="16.779 vs <= 4.244 (pixel)",
            ours={d: L[max(MODELS, key=lambda k, d=d: mean(k, d))] for d in dists}, evidence=paired,
            quote="while GAN without cyclic cost minimisation performs poorly even from the first cycle.", source="Sec. 4.1, Table 1",
            change=matched, more=_SEEDS)
    c5 = [lower("gan_ft", "gan", "l1_pixel", 1)]
    c5 += [higher("gan_ft", v, d, cycles) for d in ("l1_embedding", "perceptual") for v in ("vae_fixed", "vae_learned")]
    _record("C5", "Encoder fine-tuning improves composition^1, but GAN-ft errors accumulate faster than the VAEs' (m=10).", c5,
            "the improvement and the four m=10 comparisons", paper="16.779 -> 3.807; emb 0.272 vs 0.135/0.158 at m=10",
            ours=f"pixel m=1 {mean('gan'):.2f} -> {mean('gan_ft'):.2f}; emb m={cycles} {mean('gan_ft', 'l1_embedding', cycles):.3f} vs "
                 f"{mean('vae_learned', 'l1_embedding', cycles):.3f}/{mean('vae_fixed', 'l1_embedding', cycles):.3f}", evidence=paired,
            quote="For GAN, we found that fine-tuning the cyclic cost minimisation was necessary to ensure closeness to the factual "
                  "image for both datasets.", source="Sec. 4 (Setup); Table 1, GAN fine-tuned at 10 cycles (embeddings, LPIPS)",
            change=seeds_only, more=_SEEDS)
    _record("C6", "A learned decoder σ composes better than a fixed σ.",
            [lower("vae_learned", "vae_fixed", d, m) for d in dists for m in ms], "all six comparisons",
            paper="2.600 < 4.244 (m=1); 7.698 < 9.855 (m=10)",
            ours=f"pixel m=1 {mean('vae_learned'):.2f} vs {mean('vae_fixed'):.2f}", evidence=paired,
            quote="We compare VAE with a fixed standard deviation of […] as used in [31, 3] versus a VAE with learnable standard deviation.",
            source="Sec. 4 (Setup); Table 1: 2.600 < 4.244 (1 cycle), 7.698 < 9.855 (10 cycles)", change=seeds_only, more=_SEEDS)
    _record("X1", "With pixel-noise temperature T = 1 the null intervention returns x exactly: composition is 0 and uninformative.",
            [_side("largest mean pixel composition^1 at T = 1", verdicts.exact(comp_at_T1, method="an identity of abduction at T = 1"),
                   "below", 0.05)], "the identity", paper="implied by Eqs. of Sec. 3.2; the code uses T = 0.1 / 0.3 (undisclosed)",
            ours=f"max mean pixel composition^1 at T=1: {comp_at_T1:.2e}",
            evidence="three trained models re-scored at T = 1; tolerance 0.05 grey levels (clipping)",
            quote="Abduction with a noise temperature of 1 makes composition exactly 0 (up to clamping) for VAE and HVAE, because ε "
                  "is abducted at the pixel level.", source=f"notes §5 X1, {_NOT_PAPER}", kind="sanity check")

    def eff(r: Mapping[str, Any], mdl: str, attr: str, do: str) -> np.ndarray:
        return _eff(r["per_image"], mdl, attr, do)

    def eff_mean(mdl: str, attr: str, do: str) -> float:
        return S.mean(lambda r: float(eff(r, mdl, attr, do).mean()))

    def eff_part(label: str, a: str, b: str, attr: str, do_a: str, do_b: str | None, side: str) -> _Part:
        return S.paired(label, lambda r: eff(r, a, attr, do_a) - eff(r, b, attr, do_b or do_a), side)

    cells = [(a, do) for a in ("t", "i") for do in ("t", "i", "d")]
    e1 = [eff_part(f"{a} MAE under do({do}): {L['hvae']} - {L[k]}", "hvae", k, a, do, None, "below")
          for a, do in cells for k in MODELS if k != "hvae"]
    best = {c: min(MODELS, key=lambda k, c=c: eff_mean(k, *c)) for c in cells}
    _record("E1", "The HVAE gives the lowest thickness and intensity MAE under every intervention (6 cells).", e1,
            "HVAE below each other model in each of the 6 cells", paper="6/6 cells",
            ours=f"row minimum is the HVAE in {sum(v == 'hvae' for v in best.values())}/6 cells", evidence=paired, quote=_TABLE3,
            source="Table 3: the HVAE is bold in all six thickness and intensity MAE cells", change=matched, more=_SEEDS)
    e2 = [eff_part(f"{L[k]}: i MAE under do(t) - under do(i)", k, k, "i", "t", "i", "below") for k in MODELS]
    _record("E2", "Intensity MAE under do(t) is lower than under do(i), for every model (the flow propagates t -> i).", e2,
            "all five models", paper="5/5 models", ours={L[k]: f"{eff_mean(k, 'i', 't'):.2f} < {eff_mean(k, 'i', 'i'):.2f}" for k in MODELS},
            evidence=f"per-image differences between the two interventions; {paired}",
            quote="We note that the error for intensity remains low when performing an intervention on thickness, compared to other "
                  "interventions, which showcases the effectiveness of the conditional intensity mechanism.", source="Sec. 4.2, Table 3",
            change=seeds_only, more=_SEEDS)
    e3 = [eff_part(f"{L[k]}: {a} MAE under do(i) - under do({o})", k, k, a, "i", o, "above")
          for k in MODELS for a in ("t", "i") for o in ("t", "d")]
    hardest = sum(max(("t", "i", "d"), key=lambda do, k=k, a=a: eff_mean(k, a, do)) == "i" for k in MODELS for a in ("t", "i"))
    _record("E3", "do(i) is the hardest intervention for the thickness and intensity predictors.", e3,
            "do(i) above do(t) and do(d) in each of the 10 (model, attribute) rows", paper="10/10 row groups",
            ours=f"do(i) is the largest mean MAE in {hardest}/10 row groups", evidence=paired, quote=_TABLE3,
            source="Table 3: the do(i) column is the largest thickness and intensity MAE for all five models", change=seeds_only, more=_SEEDS)
    acc = {k: eff_mean(k, "d", "d") for k in MODELS}
    e4 = [eff_part(f"digit accuracy under do(d): {L['hvae']} - {L[k]}", "hvae", k, "d", "d", None, "above") for k in MODELS if k != "hvae"]
    e4 += [eff_part(f"digit accuracy under do(d): {L['gan_ft']} - {L[k]}", "gan_ft", k, "d", "d", None, "below")
           for k in MODELS if k not in ("gan_ft", "hvae")]
    e4.append(eff_part(f"digit accuracy under do(d): {L['vae_learned']} - {L['vae_fixed']}", "vae_learned", "vae_fixed", "d", "d", None, "below"))
    _record("E4", "Digit accuracy under do(d): highest for the HVAE, lowest for GAN-ft, learned-σ VAE below fixed-σ VAE.", e4,
            "the eight orderings", paper="0.972 / 0.451; 0.775 < 0.933", ours={L[k]: round(v, 3) for k, v in acc.items()},
            evidence=f"paired per-image correctness differences; {paired}", quote=_TABLE3,
            source="Table 3, digit accuracy under do(y): HVAE 0.972 (bold), GAN fine-tuned 0.451, VAE σ learned 0.775 < σ fixed 0.933",
            change=matched, more=_SEEDS)
    cfp, obs = per_image["hvae"]["counterfactual_parents"], results["obs"]
    exact = verdicts.exact
    e6 = [_side("mean |i* - i| under do(t)", exact(np.mean(np.abs(cfp["t"]["i"] - obs["i"]))), "above", 1.0),
          _side("max |t* - t| under do(i)", exact(np.max(np.abs(cfp["i"]["t"] - obs["t"]))), "below", 0.0, inclusive=True),
          _side("max (|i* - i| - 1e-5 |i|) under do(d)", exact(np.max(np.abs(cfp["d"]["i"] - obs["i"]) - 1e-5 * np.abs(obs["i"]))),
                "below", 1e-6, inclusive=True)]
    _record("E6", "Graph mutilation in the learned SCM: do(t) changes i, do(i) leaves t, do(d) leaves t and i.", e6,
            "the three mutilation checks", paper="qualitative (Figs 4, 7)", ours="exact equalities and mean |i* - i| > 1 under do(t)",
            evidence="counterfactual parents of the HVAE SCM on all test units (exact values; i within float32 round-off of the flow, "
                     "1e-6 + 1e-5 |i|)",
            quote="Intervening on thickness modifies intensity, while intervening on intensity does not affect thickness (graph "
                  "mutilation). Interventions on the digit alter neither.", source="Sec. 4.2, Fig. 4", kind="sanity check")
    quality = results["predictor_quality"]
    ceiling = dict(zip(quality["attribute"], quality["real test images"], strict=True))
    true_t, true_d = _eff(per_image, "true", "t", "t"), _eff(per_image, "true", "d", "d")
    ceil = [_band("true counterfactual: t MAE under do(t)", verdicts.mean_interval(true_t, unit="test images"),
                  0.75 * ceiling["t"], 1.25 * ceiling["t"]),
            _side("true counterfactual: digit accuracy under do(d)",
                  verdicts.binomial_interval(int(true_d.sum()), len(true_d), unit="test images"), "above", ceiling["d"] - 0.03)]
    _record("X-ceiling", "The true counterfactual scores effectiveness at the predictors' ceiling (do(t) read by q(t|x), do(d) by q(d|x)).",
            ceil, "both", paper="not measurable in the paper",
            ours=f"true: t MAE {true_t.mean():.3f}, d acc {true_d.mean():.3f}; ceiling: {ceiling['t']:.3f}, {ceiling['d']:.3f}",
            evidence="within 25 % of the real-image MAE and above the real-image accuracy minus 0.03",
            quote="Report their accuracy on real test data: the ceiling for effectiveness.", source=f"notes §6.2 (notebook A, step 5), {_NOT_PAPER}",
            kind="sanity check")

    def true_diff(a: str, o: str) -> verdicts.Interval:
        return _diff(_eff(per_image, "true", a, "i"), _eff(per_image, "true", a, o))

    x4 = [_side(f"true counterfactual: {a} MAE under do(i) - under do({o})", true_diff(a, o), "above") for a in ("t", "i") for o in ("t", "d")]
    true_mean = {(a, do): float(_eff(per_image, "true", a, do).mean()) for a in ("t", "i") for do in ("t", "i")}
    _record("X4", "Even the true counterfactual scores worst under do(i): part of E3 is an artefact of the anti-causal predictors.", x4,
            "do(i) above do(t) and do(d) for both predictors", paper="E3 is read as a property of the models",
            ours=f"i MAE under do(i) {true_mean[('i', 'i')]:.1f} vs {ceiling['i']:.1f} on real images; t MAE {true_mean[('t', 'i')]:.3f} "
                 f"vs {true_mean[('t', 't')]:.3f} under do(t)", evidence=f"per-image differences of the true counterfactual on {n} test images",
            quote="Caveat the paper raises itself: data-driven predictors may give biased effectiveness measurements.",
            source=f"notes §2.7; the artefact is {_NOT_PAPER}", kind=claims.FINDING, change=_OWN)

    fd = {k: float(np.mean([f.point[k] for f in S.frechet])) for k in MODELS}
    boot = f"Fréchet distances of in-domain predictor features (not Inception); {S.evidence}"
    _record("R1", "Realism: HVAE < VAE (σ learned) < VAE (σ fixed).",
            [S.frechet_diff("hvae", "vae_learned", "below"), S.frechet_diff("vae_learned", "vae_fixed", "below")],
            "both orderings", paper="FID 5.362 < 10.124 < 17.096", ours={L[k]: round(fd[k], 3) for k in ("hvae", "vae_learned", "vae_fixed")},
            evidence=boot, quote="The FID metric in Table 5 aligns with our qualitative results, showing that HVAE outperforms VAEs on "
            "MorphoMNIST and GANs on CelebA.", source="Sec. 4.3, Table 5 (FID 5.362 < 10.124 < 17.096)", change=matched, more=_SEEDS)
    _record("R2", "The un-fine-tuned GAN has the worst realism, and encoder fine-tuning improves it.",
            [S.frechet_diff("gan", k, "above") for k in MODELS if k != "gan"] + [S.frechet_diff("gan_ft", "gan", "below")],
            "GAN above the four others, GAN fine-tuned below GAN", paper="72.766 -> 35.568",
            ours=f"{fd['gan']:.3f} -> {fd['gan_ft']:.3f}; worst: {L[max(fd, key=fd.get)]}", evidence=boot, quote=_TABLE5,
            source="Table 5, MorphoMNIST FID: GAN 72.766 (worst), GAN fine-tuned 35.568", change=matched, more=_SEEDS)
    ident = float(np.mean(per_image["identity"]["cld"]))
    all_cld = np.concatenate([np.asarray(per_image[k]["cld"], float) for k in (*MODELS, "identity")])
    m1_parts = [_band("identity CLD", exact(ident, method="every per-image CLD of the identity map, no sampling error"),
                      0.2954 - 1e-4, 0.2954 + 1e-4),
                _side("smallest per-image CLD", exact(all_cld.min()), "above", 0.0, inclusive=True),
                _side("largest per-image CLD", exact(all_cld.max()), "below", 1.0, inclusive=True)]
    _record("M1", "CLD lies in [0, 1] and the identity counterfactual scores log(0.8 + 0.2e) = 0.2954.", m1_parts, "the three properties",
            paper=0.2954, ours=round(ident, 4), evidence="identity rows and every per-image CLD of the five models (exact values)",
            quote="Metric property: with w = (0.8, 0.2), CLD ∈ [0, 1], and the identity counterfactual scores log(0.8 + 0.2e) = 0.2954.",
            source=f"notes §5 M1 (derived from Eq. 9), {_NOT_PAPER}", kind="sanity check")
    paper_gap = float(np.max(np.abs(np.log(0.8 * np.exp(PAPER_TABLE5[:, 1]) + 0.2 * np.exp(PAPER_TABLE5[:, 2])) - PAPER_TABLE5[:, 0])))
    ours_gap = float(np.max(np.abs(np.log(0.8 * np.exp(R["P1"]) + 0.2 * np.exp(R["P2"])) - R["CLD"])))
    claims.record("cld_jensen_gap", ours_gap)
    _record("M2", "The reported CLD equals log(0.8 e^mean P1 + 0.2 e^mean P2) within 0.001 (all 11 rows of Table 5).",
            [_side("largest gap on the paper's 11 rows", exact(paper_gap, method="the paper's printed numbers"), "below", 0.0015)],
            "the gap", paper="11 rows", ours=f"max gap on the paper's rows {paper_gap:.4f}; on ours (mean of per-image CLD) {ours_gap:.4f}",
            evidence="recomputed from the printed P1, P2 (rounding to 3 decimals allows 0.0015); our table averages Eq. 9 per image, "
                     "which differs from the formula at the averaged P's by Jensen's inequality",
            quote="Reported CLD equals log(0.8e^{P̄1} + 0.2e^{P̄2}) within 0.001 (all 11 rows).",
            source=f"notes §5 M2 (Table 5 and Eq. 9), {_NOT_PAPER}", kind=claims.FINDING, change=_OWN)

    def per(r: Mapping[str, Any], mdl: str, what: str) -> np.ndarray:
        return np.asarray(r["per_image"][mdl][what], float)

    def per_part(what: str, a: str, b: str, side: str) -> _Part:
        label = f"{'CLD' if what == 'cld' else what.upper()} {L[a]} - {L[b]}"
        return S.paired(label, lambda r: per(r, a, what) - per(r, b, what), side)

    cld = {k: S.mean(lambda r, k=k: float(per(r, k, "cld").mean())) for k in MODELS}
    m3 = [per_part("cld", "vae_learned", k, "below") for k in MODELS if k != "vae_learned"]
    m3 += [per_part("cld", "gan", k, "above") for k in MODELS if k not in ("gan", "vae_learned")]
    _record("M3", "Minimality: the learned-σ VAE has the lowest CLD and the un-fine-tuned GAN the highest.", m3,
            "learned-σ VAE below the four others, GAN above the other three", paper="0.268 lowest; 0.390 highest",
            ours={L[k]: round(v, 3) for k, v in cld.items()}, evidence=paired,
            quote="For minimality, we report the weighted CLD metric and its component probabilities (Table 5). We report lower "
                  "values for VAEs on MorphoMNIST", source="Sec. 4.3, Table 5 (CLD 0.268 lowest, GAN 0.390 highest)", change=matched,
            more=_SEEDS)
    _record("M5", "The GAN has the highest P1 (its counterfactuals land far from the factual).",
            [per_part("p1", "gan", k, "above") for k in MODELS if k != "gan"],
            "GAN above each of the four others", paper="0.339 (MorphoMNIST)",
            ours={L[k]: round(S.mean(lambda r, k=k: float(per(r, k, "p1").mean())), 3) for k in MODELS}, evidence=paired, quote=_TABLE5,
            source="Table 5, MorphoMNIST P(S_x* ≤ div): GAN 0.339 (highest)", change=matched, more=_SEEDS)
    g1_quote = ("We identify that the development of Deep-SCM-based conditional HVAE is in the right direction, as it outperformed all "
                "other models examined (VAEs, GANs) across all metrics performed.")
    rest = [k for k in MODELS if k != "hvae"]
    _record("G1-composition", "Composition: the HVAE is below every other model on every distance, at 1 and 10 cycles.",
            [lower("hvae", k, d, m) for d in dists for m in ms for k in rest], "HVAE below each of the four others, 6 columns",
            paper="stated (Sec. 5); Table 1 agrees", ours=f"pixel m=1: HVAE {mean('hvae'):.2f}, others {[round(mean(k), 2) for k in rest]}",
            evidence=paired, quote=g1_quote, source="Sec. 5 (Conclusion); Table 1", change=matched, more=_SEEDS)
    e_all = e1 + [eff_part(f"digit accuracy under do({do}): {L['hvae']} - {L[k]}", "hvae", k, "d", do, None, "above")
                  for do in ("t", "i", "d") for k in rest]
    _record("G1-effectiveness", "Effectiveness: the HVAE is best in all nine cells (thickness and intensity MAE, digit accuracy).", e_all,
            "HVAE better than each of the four others in each of the 9 cells", paper="stated (Sec. 5); contradicted by Table 3 (VAEs best digit accuracy under do(t), do(i))",
            ours=f"HVAE digit accuracy under do(d) {acc['hvae']:.3f}; t, i MAE row minimum in {sum(v == 'hvae' for v in best.values())}/6 cells",
            evidence=paired, quote=g1_quote, source="Sec. 5 (Conclusion); Table 3", change=matched, more=_SEEDS)
    _record("G1-realism", "Realism: the HVAE has the lowest Fréchet distance of the five models.", [S.frechet_diff("hvae", k, "below") for k in rest],
            "HVAE below each of the four others", paper="stated (Sec. 5); Table 5 agrees (5.362)", ours={L[k]: round(fd[k], 3) for k in MODELS},
            evidence=boot, quote=g1_quote, source="Sec. 5 (Conclusion); Table 5", change=matched, more=_SEEDS)
    _record("G1-minimality", "Minimality: the HVAE has the lowest CLD of the five models.",
            [per_part("cld", "hvae", k, "below") for k in rest],
            "HVAE below each of the four others", paper="stated (Sec. 5); contradicted by Table 5 (VAE σ learned 0.268 < HVAE 0.272)",
            ours={L[k]: round(v, 3) for k, v in cld.items()}, evidence=paired, quote=g1_quote, source="Sec. 5 (Conclusion); Table 5",
            change=matched, more=_SEEDS)
    return claims.rows(["C1", "C2", "C3", "C5", "C6", "X1", "E1", "E2", "E3", "E4", "E6", "X-ceiling", "X4",
                        "R1", "R2", "M1", "M2", "M3", "M5", "G1-composition", "G1-effectiveness", "G1-realism", "G1-minimality"])


def _degenerate(values: Mapping[str, float], what: str, *, lower_is_better: bool | None, floor: float | None = None) -> str:
    """Why a substitute metric cannot tell the models apart, or ``""`` when it can.

    The rule (the issue's): a metric is degenerate on the substitute data when it is constant across the
    models (a spread below 1e-9: a floor or a ceiling, so it cannot rank them), or when it ranks the true
    counterfactual worst of all (then a lower or higher value is not "more realistic" or "more minimal"
    here). The references (``"true"``, ``"identity"``) are shown but do not enter the spread.

    Parameters
    ----------
    values : mapping
        Label -> the metric's value, the models and ``"true"`` (and ``"identity"``) included.
    what : str
        The metric's name, for the text.
    lower_is_better : bool or None
        The metric's direction (``None``: it has none, e.g. P1; only constancy is checked).
    floor : float, optional
        For a probability: every model's value at or below ``floor`` is its floor (P1 below one in a
        thousand for every model cannot say which model has the highest).

    Returns
    -------
    str
        The measurement that shows the degeneracy (for the claim's note), or ``""``.
    """
    shown = ", ".join(f"{MODEL_LABELS.get(k, k)} {v:.3g}" for k, v in values.items())
    models = [v for k, v in values.items() if k not in ("true", "identity")]
    if max(models) - min(models) < 1e-9:
        return f"{what} is the same for every model ({shown}): it cannot tell the models apart here."
    if floor is not None and max(models) <= floor:
        return f"{what} sits at its floor for every model (all at most {floor:g}: {shown}): it cannot tell the models apart here."
    if lower_is_better is None:
        return ""
    worst = max(values, key=values.get) if lower_is_better else min(values, key=values.get)
    if worst == "true":
        return f"{what} ranks the true counterfactual worst ({shown}): on this substitute it does not measure what the paper's metric does."
    return ""


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 03 (SmileyFaces benchmark): composition, effectiveness of the fine-tuned HVAE, realism, minimality.

    Every comparison between trained models takes the training seeds as units (see :func:`claims_02`);
    with one seed it is undecided. A claim whose substitute metric is degenerate on SmileyFaces
    (:func:`_degenerate`: constant across the models and the truth, or ranking the truth worst), or that
    the substitute cannot reach at all (a margin above a ceiling), is "differs with the substitute data"
    with the measurement that shows it.

    Parameters
    ----------
    results : mapping
        :func:`benchmark_results` of the first seed's SmileyFaces run with the six models (``vae_fixed``,
        ``vae_learned``, ``hvae``, ``hvae_cf``, ``gan``, ``gan_ft``) and both references, and ``seeds``,
        the per-seed results of :func:`seed_results`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, (*_BENCHMARK_KEYS, "seeds"), "claims_03")
    L, MODELS, cycles = MODEL_LABELS, tuple(results["models"]), results["cycles"]
    refs = ("identity", "true")
    S = _Seeds(results["seeds"], (*MODELS, *refs), frechet=(*MODELS, *refs))
    ms = sorted({1, cycles})
    temperature = next(iter(results["seeds"].values())).get("temperature")
    paired = S.evidence + (f"; every VAE and HVAE abducts at one pixel-noise temperature T = {temperature:g}" if temperature is not None else "")
    matched = "every VAE and HVAE now abducts at the VAEs' temperature (the HVAEs used 0.3), and training seeds are the units"

    def comp(r: Mapping[str, Any], mdl: str, dist: str, m: int) -> np.ndarray:
        return _composition(r["per_image"], mdl, dist, m)

    def comp_part(a: str, b: str, dist: str, m: int, side: str) -> _Part:
        return S.paired(f"{dist} composition m={m}: {L[a]} - {L[b]}", lambda r: comp(r, a, dist, m) - comp(r, b, dist, m), side)

    def mean(mdl: str, dist: str, m: int) -> float:
        return S.mean(lambda r: float(comp(r, mdl, dist, m).mean()))

    def f1(mdl: str, attr: str) -> float:
        return S.mean(lambda r: float(_f1(*_binary_outcomes(r["per_image"], mdl, attr))))

    def f1_part(a: str, b: str, attr: str, side: str, threshold: float) -> _Part:
        def stat(k: int) -> float:
            pi = S.runs[k]["per_image"]
            return float(_f1(*_binary_outcomes(pi, a, attr)) - _f1(*_binary_outcomes(pi, b, attr)))
        return S.part(f"F1 for {attr} under do({attr}): {L[a]} - {L[b]}", stat,
                      lambda k: _f1_diff(S.runs[k]["per_image"], a, b, attr), side, threshold)

    comp_dists = ("l1_embedding", "perceptual")
    paper_rows = [k for k in MODELS if k not in ("hvae_cf", "hvae")]  # Table 2 has no ELBO-only HVAE row
    c7 = [comp_part("hvae_cf", k, d, m, "below") for d in comp_dists for m in ms for k in paper_rows]
    best = {f"{d} m={m}": L[min(MODELS, key=lambda k, d=d, m=m: mean(k, d, m))] for d in comp_dists for m in ms}
    _record("C7", "On faces the counterfactually fine-tuned HVAE has the best perceptual and embedding composition.", c7,
            "HVAE fine-tuned below each of the four other models of Table 2, per distance and cycle count",
            paper="LPIPS 0.063 vs >= 0.290; emb 0.498 vs >= 0.516 (m = 1)", ours=best, evidence=paired,
            quote="From Table 2 we observe that HVAE achieves the best composition scores in terms of […] embeddings and LPIPS distance",
            source="Sec. 4.1, Table 2 (the HVAE row is the fine-tuned HVAE)",
            change="compared only against the models of the paper's Table 2 (its HVAE row is the fine-tuned HVAE; the ELBO-only HVAE "
                   "is not in it); " + matched, more=_SEEDS)
    grow = [S.paired(f"{L[k]} {d}: m={cycles} - m=1", lambda r, k=k, d=d: comp(r, k, d, cycles) - comp(r, k, d, 1), "above")
            for k in ("vae_fixed", "vae_learned", "hvae_cf", "gan", "gan_ft") for d in comp_dists]
    _record("C2-faces", "Composition error grows with the number of cycles on faces (embedding and perceptual distances).", grow,
            "all ten model-distance pairs", paper="all m=10 above m=1 except the bug-affected pixel column (Table 2)",
            ours=f"perceptual, HVAE fine-tuned: {mean('hvae_cf', 'perceptual', 1):.3f} -> {mean('hvae_cf', 'perceptual', cycles):.3f}",
            evidence=f"per-image m={cycles} minus m=1; {paired}",
            quote="Particularly, it retains the details of the original image, while VAE progressively blurs and distorts it during repeating cycles.",
            source="Sec. 4.1, Fig. 3; Table 2 (every 10-cycle embedding and LPIPS entry above its 1-cycle entry)", change=matched, more=_SEEDS)
    worst = L[max(MODELS, key=lambda k: mean(k, "perceptual", 1))]
    _record("C3-faces", "The un-fine-tuned GAN has the worst perceptual composition after one cycle.",
            [comp_part("gan", k, "perceptual", 1, "above") for k in MODELS if k != "gan"], "GAN above each of the five others",
            paper="LPIPS 0.403 (worst)", ours=worst, evidence=paired,
            quote="while GAN again performs the worst.", source="Sec. 4.1, Table 2 (LPIPS 0.403 at 1 cycle)", change=matched, more=_SEEDS)
    fd = {k: float(np.mean([f.point[k] for f in S.frechet])) for k in (*MODELS, *refs)}
    fd_bad = _degenerate(fd, "The in-domain Fréchet distance (mean over seeds)", lower_is_better=True)
    boot = f"Fréchet distances of in-domain predictor features; {S.evidence}"
    e7 = [f1_part("hvae", "identity", a, "below", 0.25) for a in ("s", "e")]
    e7 += [f1_part("hvae_cf", "hvae", a, "above", 0.1) for a in ("s", "e")]
    e7.append(S.frechet_diff("hvae_cf", "hvae", "above"))
    _record("E7", "An HVAE trained only on the ELBO ignores interventions; counterfactual fine-tuning makes it effective at a realism cost.", e7,
            "the five parts", paper="HVAE 'unaffected by interventions'; HVAE-ft F1 0.998 / 0.981; FID 12.667 -> 22.047",
            ours=f"F1 do(s)/do(e): identity {f1('identity', 's'):.2f}/{f1('identity', 'e'):.2f}, HVAE {f1('hvae', 's'):.2f}/{f1('hvae', 'e'):.2f}, "
                 f"HVAE-ft {f1('hvae_cf', 's'):.2f}/{f1('hvae_cf', 'e'):.2f}; Fréchet {fd['hvae']:.3f} -> {fd['hvae_cf']:.3f}",
            evidence=f"ELBO-only HVAE within 0.25 F1 of the identity map; fine-tuning adds > 0.1 F1 on both attributes; Fréchet distance rises; {paired}",
            quote="We observe that by training HVAE only with the standard ELBO loss, the model exclusively reconstructs the initial image "
                  "and systematically ignores the causal/counterfactual condition.",
            source="Sec. 4.2; Table 4 (HVAE fine-tuned F1 0.998 / 0.981); Table 5 (FID 12.667 -> 22.047)", change=matched, more=_SEEDS)
    e8_quote = ("The fine-tuned HVAE outperforms all other models across most scenarios with the most evident difference being "
                "observed in interventions on the attribute eyeglasses.")
    e8_ours = f"{f1('hvae_cf', 'e'):.3f} vs {f1('vae_fixed', 'e'):.3f} / {f1('vae_learned', 'e'):.3f}"
    headroom = min(1 - f1(k, "e") for k in ("vae_fixed", "vae_learned"))
    if headroom <= 0.1:
        claims.claim("E8", "On the eyeglasses intervention the fine-tuned HVAE beats the VAEs by a wide margin.", paper="0.981 vs 0.771 / 0.810",
                     ours=e8_ours, evidence=f"F1 of the eyeglasses classifier on the counterfactuals of do(e); {S.evidence}",
                     decision=verdicts.Decision(verdicts.SUBSTITUTE, verdicts.exact(headroom, method=f"1 - the better VAE's eyeglasses F1, "
                                                                                               f"mean over {S.n} training seeds"),
                                                "a margin above 0.1 F1 needs a VAE F1 below 0.9; when both VAEs are above it no model can "
                                                "show the margin"),
                     quote=e8_quote, source="Sec. 4.2, Table 4 (0.981 vs 0.771 / 0.810)",
                     note=f"The VAEs already reach eyeglasses F1 {e8_ours.split(' vs ')[1]} (1 - F1 = {headroom:.3f} <= 0.1): on SmileyFaces "
                          "the eyeglasses classifier reads every model's counterfactual, so the ceiling leaves no room for the paper's margin.",
                     change="the substitute's eyeglasses F1 is at the ceiling for every model; the claim cannot be decided on it")
    else:
        _record("E8", "On the eyeglasses intervention the fine-tuned HVAE beats the VAEs by a wide margin.",
                [f1_part("hvae_cf", k, "e", "above", 0.1) for k in ("vae_fixed", "vae_learned")], "both VAEs", paper="0.981 vs 0.771 / 0.810",
                ours=e8_ours, evidence=f"F1 margin above 0.1; {paired}", quote=e8_quote, source="Sec. 4.2, Table 4 (0.981 vs 0.771 / 0.810)",
                change=matched, more=_SEEDS)
    realism = {"R1-faces": ("The ELBO-only HVAE has the best realism on faces.", [S.frechet_diff("hvae", k, "below") for k in MODELS if k != "hvae"],
                            "HVAE below each of the five others", "FID 12.667 (best)", {L[k]: round(fd[k], 3) for k in MODELS},
                            "HVAE without counterfactual training performs better on CelebA, as expected, since it does not introduce any information.",
                            "Sec. 4.3, Table 5 (CelebA FID 12.667)"),
               "R2-faces": ("On faces both GANs are more realistic than both VAEs.",
                            [S.frechet_diff(g, v, "below") for g in ("gan", "gan_ft") for v in ("vae_fixed", "vae_learned")],
                            "the four GAN-VAE comparisons", "41.5 / 31.6 vs 77.3 / 66.4",
                            {L[k]: round(fd[k], 3) for k in ("gan", "gan_ft", "vae_fixed", "vae_learned")}, _TABLE5,
                            "Table 5, CelebA FID: GAN 41.536, GAN fine-tuned 31.560 vs VAEs 77.307 / 66.412")}
    for key, (statement, parts, what, paper, ours, quote, source) in realism.items():
        if fd_bad:
            gap = fd["true"] - max(fd[k] for k in MODELS)
            claims.claim(key, statement, paper=paper, ours=ours, evidence=boot, quote=quote, source=source,
                         decision=verdicts.Decision(verdicts.SUBSTITUTE, verdicts.exact(gap, method="the true counterfactual's Fréchet distance "
                                                                                        f"minus the largest model's, mean over {S.n} training seeds"),
                                                    "decided only when the substitute's Fréchet distance is informative (not constant across "
                                                    "the models and the truth, and not ranking the true counterfactual worst)"),
                         note=fd_bad + " The features are the book's in-domain attribute classifiers' (no Inception network can be "
                                       "loaded here).",
                         change="the substitute's Fréchet distance ranks the true counterfactual worst, so it cannot decide realism")
        else:
            _record(key, statement, parts, what, paper=paper, ours=ours, evidence=boot, quote=quote, source=source, change=matched, more=_SEEDS)

    def per(r: Mapping[str, Any], mdl: str, what: str) -> np.ndarray:
        return np.asarray(r["per_image"][mdl][what], float)

    vaes = ("vae_fixed", "vae_learned", "hvae", "hvae_cf")
    p2 = [S.part(f"mean P2 of {L[k]}", lambda j, k=k: float(per(S.runs[j], k, "p2").mean()),
                 lambda j, k=k: verdicts.mean_interval(per(S.runs[j], k, "p2"), unit="test images"), "above", 0.9) for k in vaes]
    _record("M4", "On faces P2 is close to 1 for the VAE and HVAE rows, so their CLD sits near the identity value 0.2954.", p2,
            "all four rows above 0.9", paper="P2 0.925-0.999; CLD 0.295-0.310",
            ours={L[k]: round(S.mean(lambda r, k=k: float(per(r, k, "p2").mean())), 3) for k in vaes},
            evidence=f"per-image P2; {paired}",
            quote="We notice that for CelebA, the term […] cannot effectively discern changes that are too minimal from effective ones",
            source="Sec. 4.3, Table 5 (CelebA P(S_x ≥ div) 0.925-0.999)", change=matched, more=_SEEDS)
    p1 = {k: S.mean(lambda r, k=k: float(per(r, k, "p1").mean())) for k in (*MODELS, "true")}
    p1_bad = _degenerate(p1, "P1 (mean over seeds)", lower_is_better=None, floor=1e-3)
    m5 = ("The GAN has the highest P1 on faces.", "0.224", {L[k]: round(v, 3) for k, v in p1.items()}, _TABLE5,
          "Table 5, CelebA P(S_x* ≤ div): GAN 0.224 (highest)")
    if p1_bad:
        spread = max(v for k, v in p1.items() if k != "true") - min(v for k, v in p1.items() if k != "true")
        claims.claim("M5-faces", m5[0], paper=m5[1], ours=m5[2], evidence=f"per-image P1; {S.evidence}", quote=m5[3], source=m5[4],
                     decision=verdicts.Decision(verdicts.SUBSTITUTE, verdicts.exact(spread, method="spread of the mean P1 over the models, "
                                                                                    f"mean over {S.n} training seeds"),
                                                "decided only when the substitute's P1 is informative (not constant across the models)"),
                     note=p1_bad,
                     change="P1 sits at its floor (below 0.001) for every model on SmileyFaces, so it cannot rank the models")
    else:
        _record("M5-faces", m5[0], [S.paired(f"P1 {L['gan']} - {L[k]}", lambda r, k=k: per(r, "gan", "p1") - per(r, k, "p1"), "above")
                                    for k in MODELS if k != "gan"],
                "GAN above each of the five others", paper=m5[1], ours=m5[2], evidence=paired, quote=m5[3], source=m5[4], change=matched,
                more=_SEEDS)
    return claims.rows(["C7", "C2-faces", "C3-faces", "E7", "E8", "R1-faces", "R2-faces", "M4", "M5-faces"])


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 04: do the proxy metrics rank configurations like the true counterfactual error?

    Each X2 claim needs Spearman's rho > 0 across the model configurations (a Fisher-z interval over
    configurations); X3 checks the identity row (exact values, and a t interval of its per-image true
    error). Records ``rho_composition_all`` and ``rho_composition_models``.

    Parameters
    ----------
    results : mapping
        ``agreement`` from :func:`rank_agreement`, and ``configs`` and ``per_image`` from
        :func:`score_configurations`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, ("agreement", "configs", "per_image"), "claims_04")
    A, configs, per_image = results["agreement"], results["configs"], results["per_image"]
    rho_all, rho_mod = A[("Spearman rho", "all configurations")], A[("Spearman rho", "models only")]
    n_mod = int((configs["kind"] == "model").sum())
    comp = "composition l1_pixel m=1"
    claims.record("rho_composition_all", float(rho_all[comp]))
    claims.record("rho_composition_models", float(rho_mod[comp]))
    quote = ("Rank correlation (Spearman) across models between each no-ground-truth metric and the true counterfactual error "
             "‖x* − x*_true‖. For example: does lower composition or CLD go with lower true error?")
    source = f"notes §5 X2, {_NOT_PAPER}"
    evidence = f"Spearman across {n_mod} model configurations (three VAE/HVAE at each temperature, two GANs)"
    more = "the units are model configurations: more temperatures or training seeds add them, and they are not independent"

    def agrees(col: str) -> _Part:
        return _side(f"Spearman rho({col}, true error), models only", verdicts.correlation_interval(float(rho_mod[col]), n_mod, spearman=True,
                     unit="model configurations (they share trained models, so it is optimistic)"), "above")

    _record("X2-composition", "Better composition goes with counterfactuals closer to the truth (rank agreement across configurations).",
            [agrees(comp)], "rho", paper="implicit (composition is used to rank models)",
            ours=f"rho = {rho_all[comp]:.2f} (all), {rho_mod[comp]:.2f} (models only)", evidence=evidence, quote=quote, source=source,
            more=more)
    eff_cols = [c for c in rho_mod.index if c.startswith("effectiveness")]
    _record("X2-effectiveness", "Effectiveness (error of the anti-causal predictors) ranks configurations like the true error.",
            [agrees(c) for c in eff_cols], "each attribute", paper="implicit", ours={c: round(float(rho_mod[c]), 2) for c in eff_cols},
            evidence=evidence, quote=quote, source=source, more=more)
    for key, col in (("X2-realism", "Fréchet"), ("X2-minimality", "CLD")):
        _record(key, f"{col} ranks configurations like the true error.", [agrees(col)], "rho", paper="implicit",
                ours=f"rho = {rho_mod[col]:.2f} (models only), {rho_all[col]:.2f} (all)", evidence=evidence, quote=quote, source=source,
                more=more)
    identity, true = MODEL_LABELS["identity"], MODEL_LABELS["true"]

    def unit_error(label: str) -> np.ndarray:
        return np.mean([np.asarray(v, float) for v in per_image[label]["true_error"].values()], axis=0)

    exact = verdicts.exact
    x3 = [_side("identity composition^1 (pixel)", exact(configs.loc[identity, comp]), "below", 0.0, inclusive=True),
          _band("identity CLD", exact(configs.loc[identity, "CLD"]), 0.2954 - 1e-4, 0.2954 + 1e-4),
          _side("identity true error - true counterfactual's (grey levels)", _diff(unit_error(identity), unit_error(true)), "above", 1.0)]
    _record("X3", "The identity map has perfect composition and a CLD of 0.2954 while its counterfactuals are wrong.", x3, "the three parts",
            paper="implied by Eq. 7 and Eq. 9 (notes: 'minimality can reward doing nothing')",
            ours=f"composition {configs.loc[identity, comp]:.1f}, CLD {configs.loc[identity, 'CLD']:.4f}, true error {configs.loc[identity, 'true error']:.1f}",
            evidence="exact values of the identity row; its per-image true error against the true counterfactual's",
            quote="Always report the identity baseline next to CLD, and read minimality together with effectiveness.",
            source=f"notes §7.15 ('Minimality ↓' can reward doing nothing), {_NOT_PAPER}", kind="sanity check")
    return claims.rows(["X2-composition", "X2-effectiveness", "X2-realism", "X2-minimality", "X3"])
