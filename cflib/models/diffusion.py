"""Conditional latent diffusion for image counterfactuals, built with diffusers from configs.

Implements the conditional latent diffusion model (CLDM) of Ma et al., *AI alignment in medical imaging:
unveiling hidden biases through counterfactual analysis*, Section 3.2, Appendix H.1 and Algorithm 1:

* **stage 1**, an ``AutoencoderKL`` (diffusers) maps an image to a latent ``z0`` with an isotropic
  Gaussian prior (reconstruction + KL loss);
* **stage 2**, a class-conditional ``UNet2DModel`` (diffusers) predicts the noise
  :math:`\\epsilon_\\theta(z_t, t, a)` and is trained with the DDPM loss
  :math:`E\\|\\epsilon - \\epsilon_\\theta(z_t, t, a)\\|^2` on the frozen autoencoder's latents. The label
  enters through a learned embedding added to the time embedding, with a null label dropped in at
  rate ``cond_dropout`` so that the same network is also the unconditional model (classifier-free
  guidance), as in the paper's official code;
* optionally (``aux_classes``), the UNet is also conditioned on **auxiliary parents** ``c`` of the image
  that the intervention on ``A`` must hold fixed (in the toy chest X-rays: the disease labels). The
  paper's CLDM conditions on ``A`` alone, so ``p(x | a)`` mixes the trace of ``A`` with everything
  associated with ``A``; swapping ``a`` then also pulls the diseases towards the new group's prevalence.
  With ``c`` in the condition, ``do(A = a')`` is generated from ``p(x | a', c)`` with the patient's own
  ``c``. Each embedding has its own null entry: guidance contrasts ``(a', c)`` with ``(null, c)``, and an
  optional second (compositional) guidance term ``aux_guidance`` contrasts ``(null, c)`` with
  ``(null, null)`` to strengthen the parents the intervention holds fixed;
* **sampling** with DDIM (diffusers' ``DDIMScheduler``);
* **abduction** by deterministic DDIM inversion of the encoded image under its observed label up to a
  noise level ``t_star``, **action** by swapping the label and **prediction** by DDIM denoising under
  the new label, then decoding. ``t_star`` controls how much of the image is re-imagined (the paper's
  "reduce beta and T" variance control, Appendix H.1, plays the same role); with ``t_star`` equal to the
  full chain this is Algorithm 1's forward-noise-then-generate.

Nothing is downloaded: both networks are built from configs (set ``HF_HUB_OFFLINE=1``). The same code
runs on CPU and CUDA (``device="auto"``); noise is drawn on the CPU from a seeded generator and moved
to the device, so a seed gives the same noise on either.
"""

from __future__ import annotations

import copy
import hashlib
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import torch
from torch import nn

from ..runtime import fit_cached, get_device
from ._train import check_grey_images, optimizer_step, shuffled_batches, train

os.environ.setdefault("HF_HUB_OFFLINE", "1")

__all__ = ["LDMConfig", "LatentDiffusion", "fit_cldm_pair", "fit_latent_diffusion", "independence_weights"]


def _digest(a: np.ndarray) -> bytes:
    """A 16-byte digest of an array's bytes (a key of :meth:`LatentDiffusion._abducted`)."""
    return hashlib.blake2b(np.ascontiguousarray(a).tobytes(), digest_size=16).digest()


class LatentTransform(Protocol):
    """A map of the clean latents applied before abduction (a fitted :class:`cflib.models.mine.MINEDisentangler`)."""

    def transform(self, z: np.ndarray) -> np.ndarray:
        """The transformed latents, same shape as ``z``."""
        ...


@dataclass(frozen=True)
class LDMConfig:
    """Architecture and noise schedule of a :class:`LatentDiffusion`.

    Attributes
    ----------
    size : int
        Image side length (grey images, one channel).
    n_classes : int
        Number of values of the conditioning attribute.
    latent_channels : int
        Channels of the autoencoder's latent.
    vae_channels : tuple of int
        ``block_out_channels`` of the ``AutoencoderKL``; the latent side is ``size / 2**(len - 1)``.
    unet_channels : tuple of int
        ``block_out_channels`` of the ``UNet2DModel``.
    layers_per_block : int
        ResNet layers per block in both networks.
    attention : bool
        Put self-attention in the UNet's lowest-resolution block (the paper's UNet has
        cross-attention; the official code has none).
    num_train_timesteps : int
        Length ``T`` of the diffusion chain.
    beta_schedule : str
        ``"linear"`` or ``"scaled_linear"`` (diffusers names).
    beta_start, beta_end : float
        Ends of the noise schedule.
    cond_dropout : float
        Probability of replacing the label by the null label while training (and, independently, of
        replacing all auxiliary parents by theirs).
    aux_classes : tuple of int
        Number of values of each auxiliary categorical parent the UNet is conditioned on (empty: the
        paper's CLDM, conditioned on the attribute alone).
    """

    size: int = 32
    n_classes: int = 3
    latent_channels: int = 4
    vae_channels: tuple = (16, 32, 32)
    unet_channels: tuple = (32, 64)
    layers_per_block: int = 1
    attention: bool = False
    num_train_timesteps: int = 1000
    beta_schedule: str = "linear"
    beta_start: float = 1e-4
    beta_end: float = 0.02
    cond_dropout: float = 0.2
    aux_classes: tuple = ()

    def __post_init__(self) -> None:
        if self.size < 8 or self.size % 2 ** (len(self.vae_channels) - 1):
            raise ValueError(f"size must be >= 8 and divisible by 2**(len(vae_channels)-1), got {self.size}")
        if self.n_classes < 2:
            raise ValueError(f"n_classes must be at least 2, got {self.n_classes}")
        if self.beta_schedule not in ("linear", "scaled_linear"):
            raise ValueError(f"beta_schedule must be 'linear' or 'scaled_linear', got {self.beta_schedule!r}")
        if not 0 <= self.cond_dropout < 1:
            raise ValueError(f"cond_dropout must be in [0, 1), got {self.cond_dropout}")
        if any(not isinstance(c, (int, np.integer)) or c < 2 for c in self.aux_classes):
            raise ValueError(
                f"aux_classes must hold integers >= 2 (values per auxiliary parent), got {self.aux_classes!r}"
            )
        if not 0 < self.beta_start < self.beta_end < 1:
            raise ValueError(f"need 0 < beta_start < beta_end < 1, got {self.beta_start}, {self.beta_end}")

    @property
    def latent_size(self) -> int:
        """Side length of the latent."""
        return self.size // 2 ** (len(self.vae_channels) - 1)


class _LabelEmbedding(nn.Module):
    # Sum of learned embeddings of the attribute and of each auxiliary parent; index ``classes`` of each
    # table is its null label. Fed to the UNet through ``class_embed_type="identity"``.
    def __init__(self, classes: Sequence[int], dim: int) -> None:
        super().__init__()
        self.tables = nn.ModuleList([nn.Embedding(c + 1, dim) for c in classes])

    def forward(self, labels: torch.Tensor) -> torch.Tensor:
        return sum(table(labels[:, j]) for j, table in enumerate(self.tables))


def _groups(channels: Sequence[int]) -> int:
    # GroupNorm needs a group count dividing every channel width.
    g = 8
    while g > 1 and any(c % g for c in channels):
        g //= 2
    return g


class LatentDiffusion(nn.Module):
    """Conditional latent diffusion model (autoencoder + class-conditional UNet) with counterfactuals.

    Parameters
    ----------
    config : LDMConfig, optional
        Architecture; keyword arguments override its fields.
    seed : int
        Seed of the weight initialisation.
    **overrides
        Fields of :class:`LDMConfig`.

    Examples
    --------
    >>> from cflib.data.toy_cxr import toy_cxr
    >>> data = toy_cxr(256, seed=0)
    >>> ldm = LatentDiffusion(seed=0).fit(data.images, data.A, vae_epochs=1, diffusion_epochs=1)
    >>> x_cf = ldm.counterfactual(data.images[:4], data.A[:4], a_new=1)
    """

    # buffers (register_buffer): the DDPM schedule's cumulative alphas and the latents' scale
    alphas_cumprod: torch.Tensor
    latent_scale: torch.Tensor

    def __init__(self, config: LDMConfig | None = None, *, seed: int = 0, **overrides) -> None:
        super().__init__()
        import warnings

        with warnings.catch_warnings():  # diffusers imports tqdm.auto, which warns in kernels without ipywidgets
            warnings.filterwarnings("ignore", message="IProgress not found")
            from diffusers.models.autoencoders.autoencoder_kl import AutoencoderKL
            from diffusers.models.unets.unet_2d import UNet2DModel
            from diffusers.schedulers.scheduling_ddim import DDIMScheduler
            from diffusers.schedulers.scheduling_ddpm import DDPMScheduler

        cfg = config or LDMConfig()
        if not isinstance(cfg, LDMConfig):
            raise TypeError(f"config must be an LDMConfig, got {type(cfg).__name__}")
        unknown = set(overrides) - set(LDMConfig.__dataclass_fields__)
        if unknown:
            raise ValueError(
                f"unknown LDMConfig fields {sorted(unknown)}; expected among {sorted(LDMConfig.__dataclass_fields__)}"
            )
        cfg = LDMConfig(
            **{**asdict(cfg), **{k: (tuple(v) if isinstance(v, list) else v) for k, v in overrides.items()}}
        )
        self.config = cfg
        nv = len(cfg.vae_channels)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.vae = AutoencoderKL(
                in_channels=1,
                out_channels=1,
                down_block_types=("DownEncoderBlock2D",) * nv,
                up_block_types=("UpDecoderBlock2D",) * nv,
                block_out_channels=tuple(cfg.vae_channels),
                layers_per_block=cfg.layers_per_block,
                latent_channels=cfg.latent_channels,
                norm_num_groups=_groups(cfg.vae_channels),
                sample_size=cfg.size,
                mid_block_add_attention=False,
            )
            nu = len(cfg.unet_channels)
            down = ["DownBlock2D"] * nu
            up = ["UpBlock2D"] * nu
            if cfg.attention:
                down[-1], up[0] = "AttnDownBlock2D", "AttnUpBlock2D"
            self.unet = UNet2DModel(
                sample_size=cfg.latent_size,
                in_channels=cfg.latent_channels,
                out_channels=cfg.latent_channels,
                layers_per_block=cfg.layers_per_block,
                block_out_channels=tuple(cfg.unet_channels),
                down_block_types=tuple(down),
                up_block_types=tuple(up),
                class_embed_type="identity",  # fed by self.label_embedding
                norm_num_groups=_groups(cfg.unet_channels),
                add_attention=cfg.attention,
            )
            self.label_embedding = _LabelEmbedding((cfg.n_classes, *cfg.aux_classes), 4 * cfg.unet_channels[0])
        sched = {
            "num_train_timesteps": cfg.num_train_timesteps,
            "beta_schedule": cfg.beta_schedule,
            "beta_start": cfg.beta_start,
            "beta_end": cfg.beta_end,
        }
        self.ddpm = DDPMScheduler(**sched)
        self.ddim = DDIMScheduler(**sched, clip_sample=False, set_alpha_to_one=True)
        self.register_buffer("alphas_cumprod", self.ddpm.alphas_cumprod.clone().float())
        self.register_buffer("latent_scale", torch.ones(()))
        self.history: dict[str, list[float]] = {"vae": [], "diffusion": []}
        self._last_abduction: tuple[tuple, np.ndarray] | None = None  # see _abducted

    # ------------------------------------------------------------------ helpers
    @property
    def null_label(self) -> int:
        """Index of the null (unconditional) label."""
        return self.config.n_classes

    @property
    def device(self) -> torch.device:
        """Device the parameters live on."""
        return next(self.parameters()).device

    def _images(self, x: np.ndarray, name: str = "images") -> torch.Tensor:
        arr = check_grey_images(x, self.config.size, name=name)
        return torch.from_numpy(arr[:, None] * 2.0 - 1.0)

    def _labels(self, a, n: int, name: str = "A") -> torch.Tensor:
        arr = np.asarray(a)
        if arr.ndim == 0:
            arr = np.full(n, arr.item())
        if arr.shape != (n,):
            raise ValueError(f"{name} must be one label or one per image ({n}), got shape {arr.shape}")
        if arr.dtype.kind == "f" and np.all(arr == np.round(arr)):
            arr = arr.astype(np.int64)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{name} must hold integer labels 0..{self.config.n_classes - 1}, got dtype {arr.dtype}")
        if arr.min() < 0 or arr.max() >= self.config.n_classes:
            bad = arr[(arr < 0) | (arr >= self.config.n_classes)][0]
            raise ValueError(f"{name} has unknown attribute value {bad}; expected 0..{self.config.n_classes - 1}")
        return torch.from_numpy(arr.astype(np.int64))

    def _condition(self, a: torch.Tensor, aux, *, required: bool, name: str = "aux") -> torch.Tensor:
        # (n, 1 + k) long tensor: the attribute, then the auxiliary parents (their null labels if absent).
        k = len(self.config.aux_classes)
        n = a.shape[0]
        if aux is None:
            if k and required:
                raise ValueError(
                    f"{name} is required: this model is conditioned on {k} auxiliary parent(s) with "
                    f"{list(self.config.aux_classes)} values, which a counterfactual holds fixed; pass one row per image"
                )
            aux_t = torch.tensor(self.config.aux_classes, dtype=torch.int64).repeat(n, 1)
        else:
            if not k:
                raise ValueError(
                    f"{name} was given but the model has no auxiliary parents (LDMConfig.aux_classes is empty)"
                )
            arr = np.asarray(aux)
            if arr.ndim == 1 and k == 1:
                arr = arr[:, None]
            if arr.shape != (n, k):
                raise ValueError(
                    f"{name} must have shape ({n}, {k}) (one row per image, one column per auxiliary parent), got {arr.shape}"
                )
            if arr.dtype.kind == "b" or (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
                arr = arr.astype(np.int64)
            if arr.dtype.kind not in "iu":
                raise TypeError(f"{name} must hold integer labels, got dtype {arr.dtype}")
            hi = np.asarray(self.config.aux_classes)
            bad = (arr < 0) | (arr >= hi)
            if bad.any():
                j = int(np.flatnonzero(bad.any(axis=0))[0])
                raise ValueError(
                    f"{name} column {j} has unknown value {arr[bad.any(axis=1)][0, j]}; expected 0..{hi[j] - 1}"
                )
            aux_t = torch.from_numpy(arr.astype(np.int64))
        return torch.cat([a.reshape(n, 1), aux_t], dim=1)

    def _unet(self, z: torch.Tensor, t: torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        return self.unet(z, t, class_labels=self.label_embedding(cond.to(z.device))).sample

    @staticmethod
    def _seed_gen(seed: int | None) -> torch.Generator:
        g = torch.Generator()
        g.manual_seed(int(np.random.SeedSequence(seed).generate_state(1)[0]) if seed is not None else torch.seed())
        return g

    def _batches(self, n: int, batch_size: int):
        for i in range(0, n, batch_size):
            yield slice(i, min(i + batch_size, n))

    # ------------------------------------------------------------------ training
    def fit(
        self,
        images: np.ndarray,
        A: np.ndarray,
        *,
        aux: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
        vae_epochs: int = 10,
        diffusion_epochs: int = 30,
        batch_size: int = 64,
        lr: float = 1e-3,
        kl_weight: float = 1e-4,
        device: str = "auto",
        seed: int = 0,
        progress: bool | None = None,
    ) -> LatentDiffusion:
        """Train the autoencoder, then the conditional UNet on its frozen latents.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` training images in [0, 1].
        A : numpy.ndarray
            ``(n,)`` attribute labels in ``0..n_classes-1``.
        aux : numpy.ndarray, optional
            ``(n, len(aux_classes))`` auxiliary parents; required when the config has ``aux_classes``.
        sample_weight : numpy.ndarray, optional
            ``(n,)`` non-negative weights of the diffusion stage: its mini-batches are drawn with
            probability proportional to them (e.g. :func:`independence_weights`, so that the model does
            not learn the association between ``A`` and the other parents).
        vae_epochs, diffusion_epochs : int
            Passes over the data for each stage.
        batch_size : int
            Mini-batch size.
        lr : float
            Adam learning rate (both stages; cosine-decayed).
        kl_weight : float
            Weight of the KL term of the autoencoder.
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed : int
            Seed of the batches and the diffusion noise.
        progress : bool, optional
            Show a progress bar (``None``: unless run by :mod:`cflib.runner`).

        Returns
        -------
        LatentDiffusion
            ``self``, trained and moved to ``device``.
        """
        x = self._images(images)
        a = self._labels(A, x.shape[0])
        self.fit_autoencoder(
            x,
            epochs=vae_epochs,
            batch_size=batch_size,
            lr=lr,
            kl_weight=kl_weight,
            device=device,
            seed=seed,
            progress=progress,
        )
        self.fit_diffusion(
            x,
            a,
            aux=aux,
            sample_weight=sample_weight,
            epochs=diffusion_epochs,
            batch_size=batch_size,
            lr=lr,
            device=device,
            seed=seed + 1,
            progress=progress,
        )
        return self

    def fit_autoencoder(
        self,
        x: torch.Tensor | np.ndarray,
        *,
        epochs: int = 10,
        batch_size: int = 64,
        lr: float = 1e-3,
        kl_weight: float = 1e-4,
        device: str = "auto",
        seed: int = 0,
        progress: bool | None = None,
    ) -> LatentDiffusion:
        """Stage 1: train the ``AutoencoderKL`` (L1 + MSE reconstruction + ``kl_weight`` * KL).

        Parameters
        ----------
        x : torch.Tensor or numpy.ndarray
            Images, ``(n, 1, size, size)`` in [-1, 1] (tensor) or ``(n, size, size)`` in [0, 1] (array).
        epochs, batch_size, lr, kl_weight, device, seed, progress
            As in :meth:`fit`.

        Returns
        -------
        LatentDiffusion
            ``self``.
        """
        if not isinstance(x, torch.Tensor):
            x = self._images(x)
        dev = get_device(device)
        self.to(dev)
        gen = self._seed_gen(seed)
        opt = torch.optim.Adam(self.vae.parameters(), lr=lr)
        n = x.shape[0]
        total = epochs * math.ceil(n / batch_size)
        self.vae.train()

        def step(idx: torch.Tensor) -> dict[str, float]:
            xb = x[idx].to(dev)
            post = self.vae.encode(xb).latent_dist
            eps = torch.randn(post.mean.shape, generator=gen).to(dev)
            z = post.mean + post.std * eps
            rec = self.vae.decode(z).sample
            loss = (rec - xb).abs().mean() + ((rec - xb) ** 2).mean() + kl_weight * post.kl().mean() / z[0].numel()
            return {"loss": optimizer_step(opt, loss)}

        history = train(
            step,
            shuffled_batches(n, batch_size, gen),
            total,
            scheduler=torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(1, total)),
            progress=progress,
            desc="autoencoder",
        )
        self.history["vae"] += [h["loss"] for h in history]
        self.vae.eval()
        with torch.no_grad():
            # Scale latents to unit variance so the diffusion's noise schedule fits them (as LDMs do).
            z = torch.cat([self.vae.encode(x[sl].to(dev)).latent_dist.mean for sl in self._batches(n, 256)])
            self.latent_scale.fill_(float(z.std().clamp_min(1e-3)))
        return self

    def fit_diffusion(
        self,
        x: torch.Tensor | np.ndarray,
        a: torch.Tensor | np.ndarray,
        *,
        aux: np.ndarray | None = None,
        sample_weight: np.ndarray | None = None,
        epochs: int = 30,
        batch_size: int = 64,
        lr: float = 1e-3,
        device: str = "auto",
        seed: int = 1,
        progress: bool | None = None,
    ) -> LatentDiffusion:
        """Stage 2: train the conditional UNet with the DDPM noise-prediction loss on frozen latents.

        Parameters
        ----------
        x : torch.Tensor or numpy.ndarray
            Images (as in :meth:`fit_autoencoder`).
        a : torch.Tensor or numpy.ndarray
            Labels ``(n,)``.
        aux : numpy.ndarray, optional
            Auxiliary parents (as in :meth:`fit`).
        sample_weight : numpy.ndarray, optional
            Sampling weights of the training images (as in :meth:`fit`).
        epochs, batch_size, lr, device, seed, progress
            As in :meth:`fit`.

        Returns
        -------
        LatentDiffusion
            ``self``.
        """
        if not isinstance(x, torch.Tensor):
            x = self._images(x)
        if not isinstance(a, torch.Tensor):
            a = self._labels(a, x.shape[0])
        cond = self._condition(a, aux, required=True)
        dev = get_device(device)
        self.to(dev)
        z0 = self._encode_tensor(x).cpu()
        gen = self._seed_gen(seed)
        opt = torch.optim.Adam([*self.unet.parameters(), *self.label_embedding.parameters()], lr=lr)
        nulls = torch.tensor([self.config.n_classes, *self.config.aux_classes], dtype=torch.int64)
        w: torch.Tensor | None = None
        if sample_weight is not None:
            w_np = np.asarray(sample_weight, dtype=np.float64)
            if w_np.shape != (z0.shape[0],) or not np.all(np.isfinite(w_np)) or w_np.min() < 0 or w_np.sum() <= 0:
                raise ValueError(
                    f"sample_weight must be {z0.shape[0]} finite non-negative weights, not all zero; got shape {w_np.shape}"
                )
            w = torch.from_numpy(w_np)
        n = z0.shape[0]
        total = epochs * math.ceil(n / batch_size)
        T = self.config.num_train_timesteps
        self.unet.train()
        self.label_embedding.train()

        def step(idx: torch.Tensor) -> dict[str, float]:
            zb = z0[idx]
            noise = torch.randn(zb.shape, generator=gen)
            t = torch.randint(0, T, (zb.shape[0],), generator=gen)
            lab = cond[idx].clone()
            # Drop the attribute and (independently) the auxiliary parents to their null labels.
            drop = torch.rand(zb.shape[0], 2, generator=gen) < self.config.cond_dropout
            lab[drop[:, 0], 0] = nulls[0]
            lab[drop[:, 1], 1:] = nulls[1:]
            zt = self.ddpm.add_noise(zb, noise, t)
            pred = self._unet(zt.to(dev), t.to(dev), lab)
            return {"loss": optimizer_step(opt, ((pred - noise.to(dev)) ** 2).mean())}

        history = train(
            step,
            shuffled_batches(n, batch_size, gen, weights=w),
            total,
            scheduler=torch.optim.lr_scheduler.CosineAnnealingLR(opt, max(1, total)),
            progress=progress,
            desc="diffusion",
        )
        self.history["diffusion"] += [h["loss"] for h in history]
        self.unet.eval()
        return self

    def copy_autoencoder(self, other: LatentDiffusion) -> LatentDiffusion:
        """Take over the trained autoencoder (weights and latent scale) of another model.

        Two diffusion models on the same latents (e.g. conditioned on different parents) then differ
        only in their second stage; train that one with :meth:`fit_diffusion`.

        Parameters
        ----------
        other : LatentDiffusion
            A model with the same image size and autoencoder architecture.

        Returns
        -------
        LatentDiffusion
            ``self``.
        """
        if not isinstance(other, LatentDiffusion):
            raise TypeError(f"other must be a LatentDiffusion, got {type(other).__name__}")
        fields = ("size", "latent_channels", "vae_channels", "layers_per_block")
        mine, theirs = ({f: getattr(c, f) for f in fields} for c in (self.config, other.config))
        if mine != theirs:
            raise ValueError(f"the autoencoders differ: this model has {mine}, the other {theirs}")
        self.vae.load_state_dict(other.vae.state_dict())
        self.latent_scale.copy_(other.latent_scale)
        self.to(other.device)
        return self

    # ------------------------------------------------------------------ latents
    @torch.no_grad()
    def _encode_tensor(self, x: torch.Tensor) -> torch.Tensor:
        dev = self.device
        out = [self.vae.encode(x[sl].to(dev)).latent_dist.mean for sl in self._batches(x.shape[0], 256)]
        return torch.cat(out) / self.latent_scale

    @torch.no_grad()
    def _decode_tensor(self, z: torch.Tensor) -> torch.Tensor:
        dev = self.device
        out = [self.vae.decode(z[sl].to(dev) * self.latent_scale).sample for sl in self._batches(z.shape[0], 256)]
        return torch.cat(out)

    def encode(self, images: np.ndarray) -> np.ndarray:
        """Encode images to (scaled) latents, the posterior means of the autoencoder.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].

        Returns
        -------
        numpy.ndarray
            ``(n, latent_channels, latent_size, latent_size)`` latents of roughly unit variance.
        """
        self.eval()
        return self._encode_tensor(self._images(images)).cpu().numpy()

    def decode(self, latents: np.ndarray) -> np.ndarray:
        """Decode latents to images in [0, 1].

        Parameters
        ----------
        latents : numpy.ndarray
            ``(n, latent_channels, latent_size, latent_size)``.

        Returns
        -------
        numpy.ndarray
            ``(n, size, size)`` images.
        """
        z = torch.as_tensor(np.asarray(latents, dtype=np.float32))
        shape = (self.config.latent_channels, self.config.latent_size, self.config.latent_size)
        if z.ndim != 4 or tuple(z.shape[1:]) != shape:
            raise ValueError(f"latents must have shape (n, {shape[0]}, {shape[1]}, {shape[2]}), got {tuple(z.shape)}")
        self.eval()
        x = self._decode_tensor(z)
        return ((x[:, 0].clamp(-1, 1) + 1) / 2).cpu().numpy()

    def reconstruct(self, images: np.ndarray) -> np.ndarray:
        """Autoencoder reconstruction (encode, then decode).

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].

        Returns
        -------
        numpy.ndarray
            ``(n, size, size)`` reconstructions.
        """
        return self.decode(self.encode(images))

    # ------------------------------------------------------------------ DDIM
    def _eps(
        self, z: torch.Tensor, t: int, cond: torch.Tensor, guidance: float, aux_guidance: float = 1.0
    ) -> torch.Tensor:
        # Classifier-free guidance: eps(null, null) + aux_guidance [eps(null, c) - eps(null, null)]
        #                           + guidance [eps(a, c) - eps(null, c)]
        # The first difference strengthens the auxiliary parents, the second the attribute only.
        tt = torch.full((z.shape[0],), int(t), dtype=torch.long, device=z.device)
        if guidance == 1.0 and aux_guidance == 1.0:
            return self._unet(z, tt, cond)
        null_a = cond.clone()
        null_a[:, 0] = self.null_label
        if aux_guidance == 1.0:
            e_c, e_a = self._unet(torch.cat([z, z]), torch.cat([tt, tt]), torch.cat([cond, null_a])).chunk(2)
            return e_a + guidance * (e_c - e_a)
        null_all = null_a.clone()
        null_all[:, 1:] = torch.tensor(self.config.aux_classes, dtype=torch.int64)
        e_c, e_a, e_0 = self._unet(
            torch.cat([z, z, z]), torch.cat([tt, tt, tt]), torch.cat([cond, null_a, null_all])
        ).chunk(3)
        return e_0 + aux_guidance * (e_a - e_0) + guidance * (e_c - e_a)

    def _check_aux_guidance(self, aux_guidance: float) -> float:
        if not isinstance(aux_guidance, (int, float, np.floating)) or not np.isfinite(aux_guidance):
            raise TypeError(f"aux_guidance must be a finite number, got {aux_guidance!r}")
        if aux_guidance != 1.0 and not self.config.aux_classes:
            raise ValueError(
                "aux_guidance needs auxiliary parents to guide, but this model has none (LDMConfig.aux_classes is empty); "
                "leave it at 1"
            )
        return float(aux_guidance)

    def _grid(self, t_star: int, steps: int) -> list[int]:
        T = self.config.num_train_timesteps
        if not isinstance(t_star, (int, np.integer)) or not 1 <= t_star <= T - 1:
            raise ValueError(
                f"t_star must be an integer in [1, {T - 1}] (the noise level of the abduction), got {t_star!r}"
            )
        if not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"steps must be a positive integer, got {steps!r}")
        grid = np.unique(np.round(np.linspace(0, t_star, min(steps, t_star) + 1)).astype(int))
        return [int(t) for t in grid]

    def _abar(self, t: int) -> torch.Tensor:
        return self.alphas_cumprod[t] if t >= 0 else torch.ones((), device=self.alphas_cumprod.device)

    @torch.no_grad()
    def invert(
        self, images: np.ndarray, A: np.ndarray, *, aux: np.ndarray | None = None, t_star: int = 500, steps: int = 20
    ) -> np.ndarray:
        """Abduction: deterministic DDIM inversion of the encoded images under their labels.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].
        A : array-like of int
            Observed labels (one, or one per image).
        aux : numpy.ndarray, optional
            ``(n, len(aux_classes))`` auxiliary parents; required when the model has them.
        t_star : int
            Noise level to invert to (``T - 1`` for the whole chain).
        steps : int
            DDIM steps between 0 and ``t_star``.

        Returns
        -------
        numpy.ndarray
            Latents ``z_{t_star}`` that DDIM-denoise back to the images' latents under ``A``.
        """
        self.eval()
        x = self._images(images)
        cond = self._condition(self._labels(A, x.shape[0]), aux, required=True)
        return self._abducted(
            self._encode_tensor(x).cpu().numpy(), cond, t_star, steps
        ).copy()  # the remembered one stays intact

    def _ddim_move(self, z: torch.Tensor, eps: torch.Tensor, t_from: int, t_to: int) -> torch.Tensor:
        a_from, a_to = self._abar(t_from), self._abar(t_to)
        x0 = (z - (1 - a_from).sqrt() * eps) / a_from.sqrt()
        return a_to.sqrt() * x0 + (1 - a_to).sqrt() * eps

    @torch.no_grad()
    def denoise(
        self,
        latents: np.ndarray,
        A: np.ndarray,
        *,
        aux: np.ndarray | None = None,
        t_star: int = 500,
        steps: int = 20,
        guidance: float = 1.0,
        aux_guidance: float = 1.0,
    ) -> np.ndarray:
        """Prediction: DDIM-denoise latents at noise level ``t_star`` under labels ``A`` and decode.

        Parameters
        ----------
        latents : numpy.ndarray
            ``z_{t_star}``, e.g. from :meth:`invert`.
        A : array-like of int
            Labels to condition on (one, or one per latent).
        aux : numpy.ndarray, optional
            ``(n, len(aux_classes))`` auxiliary parents; required when the model has them.
        t_star : int
            Noise level of ``latents``.
        steps : int
            DDIM steps.
        guidance : float
            Classifier-free guidance scale of the attribute (1: the conditional model alone).
        aux_guidance : float
            Guidance scale of the auxiliary parents (compositional classifier-free guidance; 1: none).
            Only for models with auxiliary parents.

        Returns
        -------
        numpy.ndarray
            ``(n, size, size)`` images in [0, 1].
        """
        self.eval()
        z = torch.as_tensor(np.asarray(latents, dtype=np.float32))
        cond = self._condition(self._labels(A, z.shape[0]), aux, required=True)
        aux_guidance = self._check_aux_guidance(aux_guidance)
        grid = self._grid(t_star, steps)
        out = []
        for sl in self._batches(z.shape[0], 256):
            zb = z[sl].to(self.device)
            for i in range(len(grid) - 1, 0, -1):
                eps = self._eps(zb, grid[i], cond[sl], guidance, aux_guidance)
                zb = self._ddim_move(zb, eps, grid[i], grid[i - 1] if i > 1 else -1)
            out.append(zb)
        x = self._decode_tensor(torch.cat(out))
        return ((x[:, 0].clamp(-1, 1) + 1) / 2).cpu().numpy()

    def counterfactual(
        self,
        images: np.ndarray,
        A: np.ndarray,
        a_new: int | np.ndarray,
        *,
        aux: np.ndarray | None = None,
        t_star: int = 500,
        steps: int = 20,
        guidance: float = 1.0,
        aux_guidance: float = 1.0,
        disentangler: LatentTransform | None = None,
        abduction: str = "ddim",
        seed: int | None = 0,
    ) -> np.ndarray:
        """Counterfactual images under ``do(A = a_new)``: abduction, action, prediction.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` factual images in [0, 1].
        A : array-like of int
            Observed labels.
        a_new : int or array-like of int
            Intervened labels (one, or one per image); ``a_new = A`` gives the null-intervention
            reconstruction used by the composition metric.
        aux : numpy.ndarray, optional
            ``(n, len(aux_classes))`` auxiliary parents of the images, held fixed under the intervention;
            required when the model has them.
        t_star, steps, guidance, aux_guidance
            As in :meth:`invert` and :meth:`denoise`.
        disentangler : LatentTransform, optional
            A fitted :class:`cflib.models.mine.MINEDisentangler`: its map :math:`\\phi` is applied to the
            clean latent before inversion (the DLDM of Section 3.3).
        abduction : {"ddim", "forward"}
            ``"ddim"``: deterministic DDIM inversion (the default); ``"forward"``: Algorithm 1's
            forward noising :math:`z_{t^*} \\sim q(z_{t^*} | z_0)` with fresh noise, so repeated
            calls with different ``seed`` give different counterfactuals (Appendix H.1's variance).
        seed : int or None
            Seed of the forward noise (``abduction="forward"`` only).

        Returns
        -------
        numpy.ndarray
            ``(n, size, size)`` counterfactual images.
        """
        x = check_grey_images(images, self.config.size)
        cond = self._condition(self._labels(A, x.shape[0]), aux, required=True)
        new = self._labels(a_new, x.shape[0], name="a_new")
        self._check_aux_guidance(aux_guidance)
        if abduction == "ddim":
            z0 = self.encode(x)
            zt = self._abducted(z0 if disentangler is None else disentangler.transform(z0), cond, t_star, steps)
        elif abduction == "forward":
            self._grid(t_star, steps)
            z0 = self.encode(x)
            if disentangler is not None:
                z0 = disentangler.transform(z0)
            z0t = torch.as_tensor(z0)
            noise = torch.randn(z0t.shape, generator=self._seed_gen(seed))
            zt = self.ddpm.add_noise(z0t, noise, torch.full((z0t.shape[0],), int(t_star))).numpy()
        else:
            raise ValueError(f"abduction must be 'ddim' or 'forward', got {abduction!r}")
        return self.denoise(
            zt, new.numpy(), aux=aux, t_star=t_star, steps=steps, guidance=guidance, aux_guidance=aux_guidance
        )

    def _abducted(self, z: np.ndarray, cond: torch.Tensor, t_star: int, steps: int) -> np.ndarray:
        """The DDIM inversion of the clean latents ``z`` under their factual condition, remembered for the next call.

        Counterfactuals of the same images under several targets (one :meth:`counterfactual` call per target)
        share their abduction: it depends on the latents, the factual labels, ``t_star``, ``steps`` and the
        UNet's weights, not on ``a_new``. The key holds all five (the weights by their tensors and in-place update
        counters, so training, loading weights or another UNet forgets it), and the last inversion alone is kept.
        """
        weights = tuple((id(p), p._version) for m in (self.unet, self.label_embedding) for p in m.parameters())
        key = (z.shape, z.dtype.str, _digest(z), _digest(cond.cpu().numpy()), int(t_star), int(steps), weights)
        if self._last_abduction is None or self._last_abduction[0] != key:
            self._last_abduction = (key, self._invert_latent(z, cond, t_star, steps))
        return self._last_abduction[1]

    @torch.no_grad()
    def _invert_latent(self, z0: np.ndarray, cond: torch.Tensor, t_star: int, steps: int) -> np.ndarray:
        z = torch.as_tensor(z0)
        grid = self._grid(t_star, steps)
        out = []
        for sl in self._batches(z.shape[0], 256):
            zb = z[sl].to(self.device)
            prev = -1
            for t in grid[1:]:
                eps = self._eps(zb, max(prev, 0), cond[sl], 1.0)
                zb = self._ddim_move(zb, eps, prev, t)
                prev = t
            out.append(zb.cpu())
        return torch.cat(out).numpy()

    @torch.no_grad()
    def sample(
        self,
        A: np.ndarray,
        *,
        aux: np.ndarray | None = None,
        steps: int = 25,
        guidance: float = 1.0,
        seed: int | None = 0,
    ) -> np.ndarray:
        """Generate new images under labels ``A`` with DDIM from pure noise (diffusers' ``DDIMScheduler``).

        Parameters
        ----------
        A : array-like of int
            One label per image to generate (``self.null_label`` is not allowed; use guidance 0 for
            unconditional samples).
        aux : numpy.ndarray, optional
            ``(len(A), len(aux_classes))`` auxiliary parents; ``None`` leaves them unspecified (their null
            labels).
        steps : int
            DDIM steps.
        guidance : float
            Classifier-free guidance scale.
        seed : int or None
            Seed of the initial noise.

        Returns
        -------
        numpy.ndarray
            ``(len(A), size, size)`` images in [0, 1].
        """
        self.eval()
        arr = np.atleast_1d(np.asarray(A))
        cond = self._condition(self._labels(arr, arr.shape[0]), aux, required=False)
        c = self.config
        gen = self._seed_gen(seed)
        z = torch.randn((cond.shape[0], c.latent_channels, c.latent_size, c.latent_size), generator=gen)
        sched = copy.deepcopy(self.ddim)
        sched.set_timesteps(steps)
        out = []
        for sl in self._batches(z.shape[0], 256):
            zb = z[sl].to(self.device)
            for t in sched.timesteps:
                eps = self._eps(zb, int(t), cond[sl], guidance)
                zb = sched.step(eps, t, zb, eta=0.0).prev_sample
            out.append(zb)
        x = self._decode_tensor(torch.cat(out))
        return ((x[:, 0].clamp(-1, 1) + 1) / 2).cpu().numpy()

    # ------------------------------------------------------------------ persistence
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save config and weights atomically (``torch.save`` to a temporary file, then rename).

        Parameters
        ----------
        path : path-like
            Target file (``.pt``).

        Returns
        -------
        pathlib.Path
            The written path.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(path.suffix + ".tmp")
        state = {k: v.detach().cpu() for k, v in self.state_dict().items()}
        torch.save({"config": asdict(self.config), "state": state, "history": self.history}, tmp)
        os.replace(tmp, path)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "auto") -> LatentDiffusion:
        """Load a model written by :meth:`save`.

        Parameters
        ----------
        path : path-like
            File written by :meth:`save`.
        device : str
            Device to put the model on.

        Returns
        -------
        LatentDiffusion
        """
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no saved model at {path}")
        blob = torch.load(path, map_location="cpu", weights_only=False)
        cfg: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in blob["config"].items()}
        model = cls(LDMConfig(**cfg))
        model.load_state_dict(blob["state"])
        model.history = blob.get("history", {"vae": [], "diffusion": []})
        model.eval()
        return model.to(get_device(device))


def independence_weights(A: np.ndarray, parents: np.ndarray) -> np.ndarray:
    """Balancing weights that make ``A`` independent of other discrete parents in the weighted sample.

    Each unit gets :math:`w = \\hat P(A = a)\\, \\hat P(C = c) / \\hat P(A = a, C = c)`, with ``C`` the joint
    configuration of ``parents``; the weighted joint distribution is then the product of the two
    marginals. A generator conditioned on ``A`` and trained on the weighted sample cannot learn the
    association between ``A`` and ``C`` (in the toy chest X-rays: the group's disease prevalence), so
    swapping ``A`` changes only what ``A`` itself draws.

    Parameters
    ----------
    A : numpy.ndarray
        ``(n,)`` attribute values.
    parents : numpy.ndarray
        ``(n,)`` or ``(n, k)`` discrete values of the other parents.

    Returns
    -------
    numpy.ndarray
        ``(n,)`` weights with mean 1.

    Examples
    --------
    >>> w = independence_weights(np.array([0, 0, 1, 1]), np.array([0, 0, 0, 1]))
    >>> w.round(3).tolist()
    [0.857, 0.857, 1.714, 0.571]
    """
    a = np.asarray(A)
    c = np.asarray(parents)
    if c.ndim == 1:
        c = c[:, None]
    if a.ndim != 1 or c.ndim != 2 or c.shape[0] != a.shape[0] or a.shape[0] == 0:
        raise ValueError(
            f"A must have shape (n,) and parents (n,) or (n, k) with the same n >= 1, got {a.shape} and {np.shape(parents)}"
        )
    _, ia = np.unique(a, return_inverse=True)
    _, ic = np.unique(c, axis=0, return_inverse=True)
    ic = ic.ravel()
    joint = np.zeros((ia.max() + 1, ic.max() + 1))
    np.add.at(joint, (ia, ic), 1.0)
    n = a.shape[0]
    w = (joint.sum(1)[ia] / n) * (joint.sum(0)[ic] / n) / (joint[ia, ic] / n)
    return w / w.mean()


def fit_latent_diffusion(
    images: np.ndarray,
    A: np.ndarray,
    *,
    aux: np.ndarray | None = None,
    sample_weight: np.ndarray | None = None,
    autoencoder: LatentDiffusion | None = None,
    config: LDMConfig | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
    seed: int = 0,
    device: str = "auto",
    **fit_kwargs,
) -> LatentDiffusion:
    """Train a :class:`LatentDiffusion`, or load it if the same data, config and settings were trained before.

    Goes through :func:`cflib.runtime.fit_cached`: the key holds the images, labels, auxiliary parents,
    sample weights, config, seed, training settings, the device type and the reused autoencoder's
    weights, plus the code of :class:`LatentDiffusion` and what it calls (docstrings excluded) and the
    versions of the packages that code imports (torch, diffusers), so two notebooks that ask for the same
    model share one training run and a change that can move the weights retrains. A lock makes a second process wait for a model being trained and load it.

    Parameters
    ----------
    images, A : numpy.ndarray
        Training data (as in :meth:`LatentDiffusion.fit`).
    aux : numpy.ndarray, optional
        Auxiliary parents (as in :meth:`LatentDiffusion.fit`).
    sample_weight : numpy.ndarray, optional
        Sampling weights of the diffusion stage (as in :meth:`LatentDiffusion.fit`).
    autoencoder : LatentDiffusion, optional
        A trained model whose autoencoder is reused (:meth:`LatentDiffusion.copy_autoencoder`): only
        the diffusion stage is trained, and ``vae_epochs`` is ignored.
    config : LDMConfig, optional
        Architecture.
    cache_dir : path-like, optional
        Folder of cached models (default ``models`` in :func:`cflib.paths.cache_dir`).
    seed : int
        Seed of initialisation and training.
    device : str
        Device.
    **fit_kwargs
        Passed to :meth:`LatentDiffusion.fit`.

    Returns
    -------
    LatentDiffusion
        The trained model (attribute ``cache_path`` says where it is stored).
    """
    cfg = config or LDMConfig()
    x = check_grey_images(images, cfg.size)
    a = np.asarray(A, dtype=np.int64)
    dev = get_device(device)
    key = {
        "images": x,
        "A": a,
        "aux": None if aux is None else np.asarray(aux, dtype=np.int64),
        "sample_weight": None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64),
        "config": cfg,
        "seed": seed,
        "fit": {k: v for k, v in fit_kwargs.items() if k != "progress"},
        "device": dev.type,
        "autoencoder": None if autoencoder is None else autoencoder.vae.state_dict(),
    }
    if autoencoder is not None:
        fit_kwargs = {**fit_kwargs, "vae_epochs": 0}

    def fit() -> LatentDiffusion:
        model = LatentDiffusion(cfg, seed=seed)
        if autoencoder is not None:
            model.copy_autoencoder(autoencoder)
        return model.fit(x, a, aux=aux, sample_weight=sample_weight, seed=seed, device=device, **fit_kwargs)

    return fit_cached(
        fit,
        load=lambda path: LatentDiffusion.load(path, device=device),
        key=key,
        code=[LatentDiffusion],
        name="ldm",
        cache_dir=cache_dir,
    )


def fit_cldm_pair(
    images: np.ndarray,
    A: np.ndarray,
    parents: np.ndarray,
    *,
    config: LDMConfig | None = None,
    seed: int = 0,
    device: str = "auto",
    cache_dir: str | os.PathLike[str] | None = None,
    **fit_kwargs,
) -> dict[str, LatentDiffusion]:
    """The paper's CLDM and a CLDM that holds the other parents fixed, sharing one autoencoder (cached).

    * ``"CLDM+D"``: the UNet is conditioned on ``A`` and on ``parents`` (``aux_classes``) and trained on
      :func:`independence_weights`-balanced batches, so swapping ``A`` changes only what ``A`` draws;
      its autoencoder is trained here.
    * ``"CLDM"``: the paper's model, conditioned on ``A`` alone and trained on the observed data, on the
      same autoencoder; it learns ``p(x | a)``, association with the parents included.

    Parameters
    ----------
    images, A : numpy.ndarray
        Training data (as in :meth:`LatentDiffusion.fit`).
    parents : numpy.ndarray
        ``(n, k)`` discrete parents to hold fixed under ``do(A)`` (the toy chest X-rays' disease labels).
    config : LDMConfig, optional
        Architecture; its ``aux_classes`` are set from ``parents``.
    seed, device, cache_dir
        As in :func:`fit_latent_diffusion`.
    **fit_kwargs
        Passed to :meth:`LatentDiffusion.fit` (epochs, batch size, learning rate).

    Returns
    -------
    dict
        ``{"CLDM+D": model, "CLDM": model}``.
    """
    c = np.asarray(parents)
    if c.ndim == 1:
        c = c[:, None]
    if c.ndim != 2 or c.shape[0] != np.shape(A)[0]:
        raise ValueError(f"parents must have shape (n, k) with n = {np.shape(A)[0]}, got {np.shape(parents)}")
    cfg = config or LDMConfig()
    aux_classes = tuple(max(2, int(col.max()) + 1) for col in c.T)
    kw = {"seed": seed, "device": device, "cache_dir": cache_dir, **fit_kwargs}
    ours = fit_latent_diffusion(
        images, A, aux=c, sample_weight=independence_weights(A, c), config=replace(cfg, aux_classes=aux_classes), **kw
    )
    paper = fit_latent_diffusion(images, A, autoencoder=ours, config=replace(cfg, aux_classes=()), **kw)
    return {"CLDM+D": ours, "CLDM": paper}
