"""The benchmark's settings: the models it can train, their labels, :class:`BenchmarkConfig` and the datasets' specs.

A run's configuration reaches each stage of :func:`cflib.experiments.benchmark.run_benchmark` as typed
objects: the :class:`BenchmarkConfig` the caller gives, and the :class:`DatasetSpec` of its dataset (the
parents, their kinds, the parent encoder and the image format), read from :attr:`BenchmarkConfig.spec`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ...data.morphosynth import encode_parents

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


def _encode_morphosynth(pa: Mapping[str, np.ndarray]) -> np.ndarray:
    return encode_parents(pa["t"], pa["i"], pa["d"])


def _encode_smileyfaces(pa: Mapping[str, np.ndarray]) -> np.ndarray:
    return np.column_stack([np.asarray(pa["s"], np.float32), np.asarray(pa["e"], np.float32)])


@dataclass(frozen=True)
class DatasetSpec:
    """What the benchmark needs to know about a dataset: its parents, their kinds, the parent encoder, the image format.

    Attributes
    ----------
    name : {"morphosynth", "smileyfaces"}
        The dataset.
    parents : tuple of str
        The image's parents (each is intervened on, and read back by an anti-causal predictor).
    kinds : dict
        Parent -> ``"regression"``, ``"multiclass"`` or ``"binary"``: the predictor's task and score.
    discrete : tuple of str
        Parents whose interventions draw values, not bins.
    encoder : callable
        ``encoder(parents) -> (n, pa_dim)`` array: the parents as the image mechanisms read them.
    pa_dim : int
        Width of the encoded parents.
    channels : int
        Image channels.
    scale : float
        Factor from the stored pixel values to the models' inputs (MorphoSynth stores grey levels 0-255).
    """

    name: str
    parents: tuple[str, ...]
    kinds: dict[str, str]
    discrete: tuple[str, ...]
    encoder: Callable[[Mapping[str, np.ndarray]], np.ndarray]
    pa_dim: int
    channels: int
    scale: float


def dataset_spec(dataset: str) -> DatasetSpec:
    """The :class:`DatasetSpec` of a benchmark dataset.

    Parameters
    ----------
    dataset : {"morphosynth", "smileyfaces"}
        MorphoSynth (Morpho-MNIST stand-in) or SmileyFaces (CelebA stand-in).

    Returns
    -------
    DatasetSpec

    Raises
    ------
    ValueError
        An unknown dataset.
    """
    if dataset == "morphosynth":
        return DatasetSpec(
            name="morphosynth",
            parents=("t", "i", "d"),
            kinds={"t": "regression", "i": "regression", "d": "multiclass"},
            discrete=("d",),
            encoder=_encode_morphosynth,
            pa_dim=12,
            channels=1,
            scale=1.0 / 255.0,
        )
    if dataset == "smileyfaces":
        return DatasetSpec(
            name="smileyfaces",
            parents=("s", "e"),
            kinds={"s": "binary", "e": "binary"},
            discrete=("s", "e"),
            encoder=_encode_smileyfaces,
            pa_dim=2,
            channels=3,
            scale=1.0,
        )
    raise ValueError(f"dataset must be 'morphosynth' or 'smileyfaces', got {dataset!r}")


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
            raise ValueError(
                "hvae_cf (counterfactual fine-tuning with binary classifiers) is defined for dataset='smileyfaces' only"
            )
        bad = [b for b in self.baselines if b not in BASELINES]
        if bad:
            raise ValueError(f"unknown baseline(s) {bad}; choose from {BASELINES}")
        for name in (
            "size",
            "n_train",
            "n_test",
            "epochs",
            "gan_epochs",
            "predictor_epochs",
            "cld_vae_epochs",
            "cycles",
            "batch_size",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        for name, allowed in (("gan_critic", ("projection", "concat")), ("gan_loss", ("hinge", "nonsaturating"))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        if self.gan_aux_weight > 0 and self.gan_critic != "projection":
            raise ValueError(
                "gan_aux_weight > 0 needs gan_critic='projection' (the auxiliary head sits on its features); set gan_aux_weight=0"
            )
        if self.n_test < 20:
            raise ValueError(f"n_test must be at least 20 for the metrics' reference sets, got {self.n_test}")

    @property
    def spec(self) -> DatasetSpec:
        """The :class:`DatasetSpec` of :attr:`dataset` (parents, their kinds, parent encoder, image format)."""
        return dataset_spec(self.dataset)
