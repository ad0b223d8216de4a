"""Image models as mechanisms of a deep SCM, with the abducted-noise temperature exposed.

Melistas et al. (*Benchmarking counterfactual image generation*, Sec. 3.2 and App. A.2-A.4) use
three amortised image mechanisms: a conditional VAE (fixed or learned decoder sigma), a
conditional hierarchical VAE (optionally with counterfactual fine-tuning) and a conditional GAN
with an encoder (optionally with encoder fine-tuning). This module reuses the project's image
models (:class:`cflib.models.vae.ConditionalVAE`, :class:`cflib.models.hvae.HierarchicalConditionalVAE`,
:class:`cflib.models.gan.ConditionalGAN`, written for the axiomatic-soundness chapter) and adds what
the benchmark needs:

* :class:`DeepImageMechanism`: ``abduct`` / ``predict`` / ``sample_noise`` for a
  :class:`cflib.scm.deep.DeepSCM`. The image's exogenous noise is split as in the paper into a
  latent ``z`` (amortised inference) and a pixel-level ``eps = (x - mu(z, pa)) / sigma(z, pa)``.
  Prediction is ``x* = clip(mu(z, pa*) + T sigma(z, pa*) eps)``. The official code uses
  ``T = 0.1`` (VAE) and ``T = 0.3`` (HVAE), a setting the paper does not disclose (notes Sec. 7.1):
  with ``T = 1`` the null intervention returns ``x`` exactly and composition is trivially 0, with
  ``T < 1`` it returns ``(1 - T) mu + T x``, so **the temperature decides composition**.
* :class:`LearnedScaleVAE`: the "sigma learned" VAE (a second decoder head for the per-pixel
  log-scale), beside the fixed-sigma VAE, which is the project's Normal-likelihood VAE with
  variance ``e^-5`` (``sigma = sqrt(e^-5)``, the paper's value; the official code used a log-scale
  of -5, i.e. ``sigma = e^-5``).
* :func:`counterfactual_finetune`: Lagrangian counterfactual training of a hierarchical VAE (App.
  A.3.2, after De Sousa Ribeiro et al. 2023): minimise the classifiers' loss on counterfactuals
  subject to the negative ELBO staying below its pretrained level.
* :func:`finetune_encoder`: encoder fine-tuning of the GAN with the generator frozen (App. A.4,
  "cyclic cost minimisation"). The project's GAN is the composition-constrained image-to-image
  generator of Monteiro et al. rather than an ALI/BiGAN, so it has no latent prior and the
  latent-cycle term ``||z - E(G(z))||^2`` has no counterpart: only the image cycle
  ``|x - G(E(x, pa), pa)|_1`` is minimised. Trained adversarially with only a weak composition
  penalty (standing in for the reconstruction pressure ALI gets from its joint encoder-discriminator
  game; with none the project's GAN collapses at small scale) it plays the paper's "GAN"; after
  :func:`finetune_encoder`, "GAN fine-tuned".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..runtime import as_generator, get_device
from ._train import ConvDecoder, seeded
from .gan import ConditionalGAN
from .hvae import HierarchicalConditionalVAE
from .vae import ConditionalVAE

__all__ = [
    "FIXED_SIGMA_VARIANCE",
    "ImageNoise",
    "LearnedScaleVAE",
    "DeepImageMechanism",
    "counterfactual_finetune",
    "finetune_encoder",
]

#: Fixed decoder variance of the "sigma = sqrt(e^-5)" VAE, on the [-1, 1] pixel scale.
FIXED_SIGMA_VARIANCE = math.exp(-5.0)

ParentEncoder = Callable[[Mapping[str, np.ndarray]], np.ndarray]

#: The image models a :class:`DeepImageMechanism` wraps (a :class:`LearnedScaleVAE` is a ``ConditionalVAE``).
ImageModel = ConditionalVAE | HierarchicalConditionalVAE | ConditionalGAN


class LearnedScaleVAE(ConditionalVAE):
    """Conditional VAE whose Gaussian decoder also learns a per-pixel scale (the "sigma learned" row).

    Same parameters as :class:`cflib.models.vae.ConditionalVAE` plus ``min_log_scale`` (the
    official code clamps the log-scale at -9 with a discretised likelihood; with a continuous one a
    floor keeps the flat background from driving the likelihood to infinity) and ``max_log_scale``
    (a ceiling: a small model left free calls the strokes noise, raising their scale until the mean
    no longer has to fit them, and decodes blurred digits). The likelihood is always Normal on the
    ``[-1, 1]`` scale.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        parent_dim: int,
        latent_dim: int = 16,
        likelihood: str = "normal",
        beta: float = 1.0,
        normal_variance: float = FIXED_SIGMA_VARIANCE,
        width: int = 32,
        hidden: int = 128,
        n_down: int | None = None,
        seed: int | None = None,
        min_log_scale: float = -5.0,
        max_log_scale: float = 1.0,
    ) -> None:
        if likelihood != "normal":
            raise ValueError("LearnedScaleVAE has a Normal likelihood; likelihood must be 'normal'")
        super().__init__(
            image_shape,
            parent_dim,
            latent_dim=latent_dim,
            likelihood="normal",
            beta=beta,
            normal_variance=normal_variance,
            width=width,
            hidden=hidden,
            n_down=n_down,
            seed=seed,
        )
        c, h, w = self.image_shape
        with seeded(None if seed is None else seed + 1):
            self.decoder = ConvDecoder(
                (2 * c, h, w), in_dim=self.latent_dim + self.parent_dim, width=width, n_down=n_down
            )
        if not min_log_scale < max_log_scale:
            raise ValueError(f"min_log_scale must be below max_log_scale, got {min_log_scale!r} and {max_log_scale!r}")
        self.min_log_scale = float(min_log_scale)
        self.max_log_scale = float(max_log_scale)
        self._config["min_log_scale"] = self.min_log_scale
        self._config["max_log_scale"] = self.max_log_scale

    def _split_raw(self, raw: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        c = self.image_shape[0]
        return raw[:, :c], raw[:, c:].clamp(min=self.min_log_scale, max=self.max_log_scale)

    def mean(self, raw: torch.Tensor) -> torch.Tensor:
        """Image mean in [0, 1] (the location channels of ``raw``); see :meth:`ConditionalVAE.mean`."""
        loc, _ = self._split_raw(raw)
        return ((loc + 1.0) / 2.0).clamp(0.0, 1.0)

    def log_likelihood(self, raw: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Gaussian log-likelihood with the learned per-pixel scale; see :meth:`ConditionalVAE.log_likelihood`."""
        loc, log_s = self._split_raw(raw)
        z = (2.0 * x - 1.0 - loc) * torch.exp(-log_s)
        ll = -0.5 * z * z - log_s - 0.5 * math.log(2 * math.pi)
        return ll.flatten(1).sum(1)

    @torch.no_grad()
    def decode_scale(self, z: Any, pa: Any) -> np.ndarray:
        """Decoder standard deviation per pixel, on the ``[0, 1]`` scale.

        Parameters
        ----------
        z : array, shape (n, latent_dim)
            Latents.
        pa : array, shape (n, k)
            Encoded parents.

        Returns
        -------
        numpy.ndarray
            ``(n, C, H, W)``.
        """
        self.eval()
        zt = torch.as_tensor(np.asarray(z), dtype=torch.float32, device=self.device)
        pat = torch.as_tensor(np.asarray(pa), dtype=torch.float32, device=self.device)
        _, log_s = self._split_raw(self._decode_raw(zt, pat))
        return (torch.exp(log_s) / 2.0).cpu().numpy()


@dataclass(frozen=True)
class ImageNoise:
    """Exogenous noise of an image under an amortised mechanism.

    Attributes
    ----------
    z : numpy.ndarray
        Latent code(s) (``(n, d)``; ``(n, L, d)`` for the hierarchical VAE; the GAN's code).
    eps : numpy.ndarray or None
        Pixel-level noise ``(x - mu) / sigma`` (``None`` when the mechanism has none, e.g. the GAN).
    from_prior : bool
        ``z`` is prior noise of a hierarchical VAE (every level drawn from its conditional prior).
    """

    z: np.ndarray
    eps: np.ndarray | None
    from_prior: bool = False

    def __len__(self) -> int:
        return len(self.z)


class DeepImageMechanism:
    """An image model as a deep-SCM mechanism: abduction of ``(z, eps)``, tempered prediction.

    Parameters
    ----------
    model : ConditionalVAE, LearnedScaleVAE, HierarchicalConditionalVAE or ConditionalGAN
        A trained image model (images in [0, 1], encoded parents).
    parent_encoder : callable
        ``{parent name: array} -> (n, k)`` float matrix the model was trained with.
    noise_temperature : float
        ``T`` in ``x* = mu(z, pa*) + T sigma(z, pa*) eps`` (code: 0.1 VAE, 0.3 HVAE; 1 reproduces
        ``x`` under the null intervention; 0 drops the pixel noise). Ignored by the GAN.
    posterior_temperature : float
        ``z = mu_q + tau sigma_q u`` with ``u ~ N(0, I)`` at abduction (0: posterior mean; the
        official code samples with ``tau = 1`` for the VAE and 0.1 for the HVAE).
    seed : int
        Seed of the posterior draws (fixed, so a mechanism is a deterministic function).

    Raises
    ------
    TypeError
        ``model`` is not one of the supported image models.
    """

    def __init__(
        self,
        model: ImageModel,
        parent_encoder: ParentEncoder,
        *,
        noise_temperature: float = 0.1,
        posterior_temperature: float = 0.0,
        seed: int = 0,
    ) -> None:
        if not isinstance(model, (ConditionalVAE, HierarchicalConditionalVAE, ConditionalGAN)):
            raise TypeError(
                f"model must be a ConditionalVAE, HierarchicalConditionalVAE or ConditionalGAN, got {type(model).__name__}"
            )
        if not callable(parent_encoder):
            raise TypeError("parent_encoder must be a callable {name: array} -> (n, k) array")
        if noise_temperature < 0 or posterior_temperature < 0:
            raise ValueError("noise_temperature and posterior_temperature must be non-negative")
        self.model: ImageModel = model
        self.parent_encoder = parent_encoder
        self.noise_temperature = float(noise_temperature)
        self.posterior_temperature = float(posterior_temperature)
        self.seed = int(seed)
        self.is_gan = isinstance(model, ConditionalGAN)

    def _pa(self, pa: Mapping[str, np.ndarray], n: int) -> np.ndarray:
        arr = np.asarray(self.parent_encoder(pa), dtype=np.float32)
        if arr.ndim != 2 or arr.shape[0] != n:
            raise ValueError(f"parent_encoder must return an (n, k) array with n = {n}, got shape {arr.shape}")
        return arr

    def _decode(self, z: np.ndarray, pa: np.ndarray, from_prior: bool = False) -> np.ndarray:
        if from_prior:
            # Prior noise is generated level by level from the conditional prior, which only the hierarchical
            # VAE has (only its sample_noise sets from_prior); refuse it for the other models.
            if not isinstance(self.model, HierarchicalConditionalVAE):
                raise ValueError(
                    "noise with from_prior=True is prior noise of a hierarchical VAE; this mechanism's model is a "
                    f"{type(self.model).__name__}"
                )
            return np.asarray(
                self.model.decode(z, pa, abduct_levels=0, temperature=1.0, eps=z, check_range=False), dtype=np.float32
            )
        return np.asarray(self.model.decode(z, pa, check_range=False), dtype=np.float32)

    def _scale(self, z: np.ndarray, pa: np.ndarray, n: int) -> np.ndarray | float:
        if isinstance(self.model, LearnedScaleVAE):
            return self.model.decode_scale(z, pa)
        return 1.0  # a fixed sigma cancels: T sigma eps = T (x - mu)

    def _check_x(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        shape = tuple(self.model.image_shape)
        if x.ndim != 4 or tuple(x.shape[1:]) != shape:
            raise ValueError(f"images must have shape (n, {', '.join(map(str, shape))}), got {x.shape}")
        return x

    def abduct(self, value: np.ndarray, pa: Mapping[str, np.ndarray]) -> ImageNoise:
        """Abduction: ``z ~ q(z | x, pa)`` (at the posterior temperature) and the pixel noise.

        Parameters
        ----------
        value : numpy.ndarray
            ``(n, C, H, W)`` images in [0, 1].
        pa : mapping
            Factual parents.

        Returns
        -------
        ImageNoise
        """
        x = self._check_x(value)
        p = self._pa(pa, len(x))
        if isinstance(self.model, ConditionalGAN):
            return ImageNoise(z=np.asarray(self.model.abduct(x, p)), eps=None)
        eps = None
        if self.posterior_temperature > 0:
            shape = np.asarray(self.model.sample_noise(len(x), seed=self.seed)).shape
            eps = self.posterior_temperature * as_generator(self.seed).standard_normal(shape).astype(np.float32)
        z = np.asarray(self.model.abduct(x, p, eps))
        mu = self._decode(z, p)
        return ImageNoise(z=z, eps=(x - mu) / self._scale(z, p, len(x)))

    def predict(self, noise: ImageNoise, pa: Mapping[str, np.ndarray]) -> np.ndarray:
        """Prediction: ``clip(mu(z, pa) + T sigma(z, pa) eps, 0, 1)`` (the GAN: ``G(z, pa)``).

        Parameters
        ----------
        noise : ImageNoise
            From :meth:`abduct` or :meth:`sample_noise`.
        pa : mapping
            (Counterfactual) parents.

        Returns
        -------
        numpy.ndarray
            ``(n, C, H, W)`` in [0, 1].
        """
        if not isinstance(noise, ImageNoise):
            raise TypeError(f"noise must be an ImageNoise from abduct(), got {type(noise).__name__}")
        p = self._pa(pa, len(noise))
        mu = self._decode(noise.z, p, noise.from_prior)
        if self.is_gan or noise.eps is None or self.noise_temperature == 0:
            return np.clip(mu, 0.0, 1.0)
        return np.clip(mu + self.noise_temperature * self._scale(noise.z, p, len(mu)) * noise.eps, 0.0, 1.0).astype(
            np.float32
        )

    def sample_noise(self, n: int, rng: np.random.Generator | int | None = None) -> ImageNoise:
        """Prior draws: ``z`` from the latent prior and Gaussian pixel noise ``eps``.

        For the hierarchical VAE the prior of the lower levels depends on the parents, so ``z``
        holds standard-normal *prior noise* and :meth:`predict` generates every level from the
        conditional prior (``from_prior=True``). Pixel noise is in the units ``predict`` expects:
        standard normal for the learned-scale VAE, ``sigma * N(0, 1)`` for a fixed sigma, none for a
        Bernoulli likelihood.
        """
        if isinstance(self.model, ConditionalGAN):
            raise ValueError("the GAN mechanism has no latent prior to sample from (its code comes from an encoder)")
        rng = as_generator(rng)
        z_shape = np.asarray(self.model.sample_noise(1, seed=0)).shape[1:]
        z = rng.standard_normal((n, *z_shape)).astype(np.float32)
        e = rng.standard_normal((n, *self.model.image_shape)).astype(np.float32)
        if not isinstance(self.model, LearnedScaleVAE):
            sigma01 = math.sqrt(self.model.normal_variance) / 2 if self.model.likelihood == "normal" else 0.0
            e = e * sigma01
        return ImageNoise(z=z, eps=e, from_prior=isinstance(self.model, HierarchicalConditionalVAE))


# ----------------------------------------------------------------------------------------------
# fine-tuning
# ----------------------------------------------------------------------------------------------
def _hvae_nelbo_and_cf(
    model: HierarchicalConditionalVAE, x: torch.Tensor, pa: torch.Tensor, pa_star: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Negative ELBO per pixel and counterfactual images, differentiable (uses the model's internals)."""
    z, kl, d = model.infer(x, pa, None)
    raw = model.decoder(torch.cat([d, pa], 1))
    ll = model.log_likelihood(raw, x)
    n_pix = float(np.prod(model.image_shape))
    nelbo = ((model.beta * kl.sum(1) - ll) / n_pix).mean()
    x_star = model.mean(model.generate(pa_star, z, model.levels, 1.0, None, len(x)))
    return nelbo, x_star


def counterfactual_finetune(
    model: HierarchicalConditionalVAE,
    x: np.ndarray,
    pa: np.ndarray,
    classifiers: Mapping[int, nn.Module],
    *,
    steps: int = 200,
    batch_size: int = 64,
    lr: float = 1e-4,
    lagrange_lr: float = 0.1,
    damping: float = 100.0,
    p_flip: float = 0.8,
    elbo_slack: float = 0.05,
    device: str = "auto",
    seed: int = 0,
) -> dict[str, list[float]]:
    """Lagrangian counterfactual fine-tuning of a hierarchical VAE (App. A.3.2).

    Per batch: the negative ELBO ``nelbo`` (per pixel), counterfactuals ``x*`` for ``pa*`` equal to
    ``pa`` with one random binary column flipped with probability ``p_flip``, the classifiers'
    cross-entropy ``L_cf`` on ``x*``, and
    ``total = L_cf - (lambda - damping * sg(eps_elbo - nelbo)) (eps_elbo - nelbo)``; the model
    descends, ``lambda >= 0`` ascends. ``eps_elbo`` is the pretrained model's NELBO plus
    ``elbo_slack`` (the official code hard-codes 2.320, its own pretrained value).

    Parameters
    ----------
    model : HierarchicalConditionalVAE
        Pretrained on the ELBO; modified in place.
    x : numpy.ndarray
        ``(n, C, H, W)`` training images in [0, 1].
    pa : numpy.ndarray
        ``(n, k)`` encoded parents; the columns in ``classifiers`` must be binary.
    classifiers : mapping
        Column index -> frozen classifier module returning 2-class logits (e.g. a
        :class:`cflib.models.oracles.CNNOracle`). Use classifiers trained separately from the ones
        that later score effectiveness, to avoid the circularity the notes warn about.
    steps, batch_size, lr : int, int, float
        Optimisation (paper: 2K iterations, batch 32, AdamW lr 1e-4).
    lagrange_lr : float
        Step size of the multiplier (paper 0.1; code 1e-2).
    damping : float
        Damping of the constraint (code: 100).
    p_flip : float
        Probability of flipping an attribute per image (code: 0.8).
    elbo_slack : float
        Added to the measured pretrained NELBO to form the constraint.
    device : str
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    seed : int
        Randomness of batches and flips.

    Returns
    -------
    dict
        Per-step ``nelbo``, ``cf_loss`` and ``lambda``.
    """
    if not isinstance(model, HierarchicalConditionalVAE):
        raise TypeError(f"model must be a HierarchicalConditionalVAE, got {type(model).__name__}")
    if not classifiers:
        raise ValueError("classifiers must map at least one binary parent column to a classifier")
    x = np.asarray(x, np.float32)
    pa = np.asarray(pa, np.float32)
    if pa.ndim != 2 or pa.shape[0] != len(x) or pa.shape[1] != model.parent_dim:
        raise ValueError(f"pa must have shape ({len(x)}, {model.parent_dim}), got {pa.shape}")
    cols = sorted(int(c) for c in classifiers)
    for c in cols:
        if c < 0 or c >= pa.shape[1] or not np.isin(pa[:, c], (0.0, 1.0)).all():
            raise ValueError(f"classifier column {c} must index a binary (0/1) column of pa")
    dev = get_device(device)
    model.to(dev)
    for clf in classifiers.values():
        clf.to(dev).eval()
        for p in clf.parameters():
            p.requires_grad_(False)
    xt = torch.as_tensor(x, device=dev)
    pat = torch.as_tensor(pa, device=dev)
    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))
    with torch.no_grad():
        model.eval()
        probe = torch.randperm(len(xt), generator=gen)[: min(len(xt), 512)].to(dev)
        eps_elbo = float(_hvae_nelbo_and_cf(model, xt[probe], pat[probe], pat[probe])[0]) + float(elbo_slack)
    lam = torch.zeros((), device=dev, requires_grad=True)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.9), weight_decay=0.01)
    opt_lam = torch.optim.AdamW([lam], lr=lagrange_lr, betas=(0.9, 0.9), weight_decay=0.0, maximize=True)
    hist: dict[str, list[float]] = {"nelbo": [], "cf_loss": [], "lambda": [], "constraint": [eps_elbo]}
    model.train()
    col_t = torch.tensor(cols, device=dev)
    for _ in range(int(steps)):
        b = torch.randint(len(xt), (batch_size,), generator=gen).to(dev)
        xb, pb = xt[b], pat[b]
        k = col_t[torch.randint(len(cols), (len(b),), generator=gen).to(dev)]
        flip = (torch.rand(len(b), generator=gen).to(dev) < p_flip).float()
        ps = pb.clone()
        rows = torch.arange(len(b), device=dev)
        ps[rows, k] = flip * (1 - pb[rows, k]) + (1 - flip) * pb[rows, k]
        nelbo, x_star = _hvae_nelbo_and_cf(model, xb, pb, ps)
        cf_terms = [F.cross_entropy(classifiers[c](x_star), ps[:, c].long()) for c in cols]
        cf_loss = sum(cf_terms[1:], start=cf_terms[0]) / len(cols)  # sum(cf_terms), typed as a tensor
        gap = eps_elbo - nelbo
        damp = damping * gap.detach()
        total = cf_loss - (lam - damp) * gap
        opt.zero_grad(set_to_none=True)
        opt_lam.zero_grad(set_to_none=True)
        total.backward()
        opt.step()
        opt_lam.step()
        with torch.no_grad():
            lam.clamp_(min=0.0)
        hist["nelbo"].append(float(nelbo.detach()))
        hist["cf_loss"].append(float(cf_loss.detach()))
        hist["lambda"].append(float(lam.detach()))
    model.eval()
    model.finetune_history_ = hist  # saved with the model
    return hist


def finetune_encoder(
    gan: ConditionalGAN,
    x: np.ndarray,
    pa: np.ndarray,
    *,
    steps: int = 300,
    batch_size: int = 128,
    lr: float = 1e-4,
    device: str = "auto",
    seed: int = 0,
) -> list[float]:
    """Encoder fine-tuning of the GAN: minimise ``|x - G(E(x, pa), pa)|_1`` with the generator frozen.

    Parameters
    ----------
    gan : ConditionalGAN
        Trained GAN; its encoder is modified in place.
    x : numpy.ndarray
        ``(n, C, H, W)`` images in [0, 1].
    pa : numpy.ndarray
        ``(n, k)`` encoded parents.
    steps, batch_size, lr : int, int, float
        Optimisation (paper: Adam lr 1e-4, betas 0.5 / 0.999, batch 128).
    device : str
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    seed : int
        Randomness of the batches.

    Returns
    -------
    list of float
        Image-cycle L1 per step.
    """
    if not isinstance(gan, ConditionalGAN):
        raise TypeError(f"gan must be a ConditionalGAN, got {type(gan).__name__}")
    x = np.asarray(x, np.float32)
    pa = np.asarray(pa, np.float32)
    if pa.ndim != 2 or pa.shape != (len(x), gan.parent_dim):
        raise ValueError(f"pa must have shape ({len(x)}, {gan.parent_dim}), got {pa.shape}")
    dev = get_device(device)
    gan.to(dev)
    for p in gan.parameters():
        p.requires_grad_(False)
    for p in gan.encoder.parameters():
        p.requires_grad_(True)
    xt = torch.as_tensor(x, device=dev)
    pat = torch.as_tensor(pa, device=dev)
    opt = torch.optim.Adam(gan.encoder.parameters(), lr=lr, betas=(0.5, 0.999))
    gen = torch.Generator().manual_seed(int(seed))
    hist = []
    gan.train()
    for _ in range(int(steps)):
        b = torch.randint(len(xt), (batch_size,), generator=gen).to(dev)
        rec = gan.generate(xt[b], pat[b], pat[b])
        loss = (rec - (2 * xt[b] - 1)).abs().mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        hist.append(float(loss.detach()))
    for p in gan.parameters():
        p.requires_grad_(True)
    gan.eval()
    gan.finetune_history_ = hist  # saved with the model
    return hist
