"""Conditional β-VAE as a counterfactual image model (Monteiro et al., ICLR 2023, Sec. 3.4, eq. 5; App. D.2.2).

The VAE approximates the image mechanism ``x := g(eps, pa)``: the encoder ``q(z | x, pa)`` does
abduction, replacing ``pa`` by ``pa*`` is the action and the decoder mean ``E[x | z, pa*]`` is the
prediction. With the reparameterisation noise ``eps_z`` fixed per image the counterfactual
function ``f(x, pa, pa*) = decode(mu(x, pa) + sigma(x, pa) * eps_z, pa*)`` is deterministic, which
is how the paper evaluates repeated interventions ("sample a unique function per observation and
keep it fixed").

API (images ``(n, C, H, W)`` in ``[0, 1]``; ``pa`` a float matrix ``(n, k)`` the caller encodes,
e.g. one-hot digit + (cos, sin) hue; numpy in -> numpy out, tensor in -> tensor out)::

    vae = ConditionalVAE(image_shape=(3, 16, 16), parent_dim=12, latent_dim=16,
                         likelihood="bernoulli", beta=1.0)
    vae.fit(x, pa, epochs=20, batch_size=128, lr=1e-3, device="auto", seed=0, indices=None)
    z = vae.abduct(x, pa, eps=None)            # posterior mean, or mu + sigma * eps
    x_rec = vae.decode(z, pa)                  # decoder mean in [0, 1]
    x_cf = vae.counterfactual(x, pa, pa_star, eps=vae.sample_noise(len(x), seed=1))
    x_new = vae.sample(pa, seed=0)             # prior samples (the "VAE without encoder")
    elbo = vae.elbo(x, pa)                     # per-image ELBO in nats
    vae.save("vae.pt"); vae = ConditionalVAE.load("vae.pt")

Parent values outside the training range raise ``ValueError`` (``check_range=False`` forces them).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from cflib.runtime import as_generator, get_device

from ._train import (
    ConvDecoder,
    ConvEncoder,
    ParentRange,
    check_images,
    check_indices,
    check_parents,
    check_positive_int,
    like_input,
    load_model,
    run_steps,
    save_model,
    seeded,
    to_tensor,
)

__all__ = ["ConditionalVAE", "LIKELIHOODS"]

#: Pixel likelihoods of the paper's VAE variants (App. D.2.2).
LIKELIHOODS = ("bernoulli", "normal")

_CHUNK = 2048  # rows per forward pass at inference: bounds memory for large test sets


def _noise(n: int, dim: int | Sequence[int], seed: int | np.random.Generator | None) -> torch.Tensor:
    shape = (n, *dim) if isinstance(dim, (tuple, list)) else (n, dim)
    return torch.from_numpy(as_generator(seed).standard_normal(shape).astype(np.float32))


class ConditionalVAE(nn.Module):
    """Conditional β-VAE with a Bernoulli or Normal pixel likelihood.

    Parameters
    ----------
    image_shape : tuple of int
        ``(C, H, W)`` of the images.
    parent_dim : int
        Width ``k`` of the encoded parent vector.
    latent_dim : int
        Size of ``z`` (paper: 16).
    likelihood : {"bernoulli", "normal"}
        Bernoulli on continuous intensities (cross-entropy; the paper's β=1, 2 models) or a Normal
        with fixed variance on the ``[-1, 1]`` scale (the paper's β=5 model, variance 0.1).
    beta : float
        Weight of the KL term (eq. 5). Larger β pushes information into the conditioning.
    normal_variance : float
        Fixed pixel variance of the Normal likelihood on the ``[-1, 1]`` scale.
    width : int
        Convolution channels of the encoder/decoder.
    hidden : int
        Width of the dense layers.
    n_down : int, optional
        Stride-2 stages (default: down to about 4x4).
    seed : int, optional
        Seed of the weight initialisation (``None``: torch's global generator).
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        parent_dim: int,
        latent_dim: int = 16,
        likelihood: str = "bernoulli",
        beta: float = 1.0,
        normal_variance: float = 0.1,
        width: int = 32,
        hidden: int = 128,
        n_down: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__()
        if len(tuple(image_shape)) != 3:
            raise ValueError(f"image_shape must be (C, H, W), got {image_shape!r}")
        if likelihood not in LIKELIHOODS:
            raise ValueError(f"likelihood must be one of {LIKELIHOODS}, got {likelihood!r}")
        if not beta > 0:
            raise ValueError(f"beta must be positive, got {beta!r}")
        if not normal_variance > 0:
            raise ValueError(f"normal_variance must be positive, got {normal_variance!r}")
        self.image_shape = tuple(int(s) for s in image_shape)
        self.parent_dim = check_positive_int(parent_dim, "parent_dim")
        self.latent_dim = check_positive_int(latent_dim, "latent_dim")
        self.likelihood = likelihood
        self.beta = float(beta)
        self.normal_variance = float(normal_variance)
        self._config = {
            "image_shape": list(self.image_shape),
            "parent_dim": self.parent_dim,
            "latent_dim": self.latent_dim,
            "likelihood": likelihood,
            "beta": self.beta,
            "normal_variance": self.normal_variance,
            "width": width,
            "hidden": hidden,
            "n_down": n_down,
        }
        with seeded(seed):
            self.encoder = ConvEncoder(self.image_shape, width=width, out_dim=hidden, n_down=n_down)
            # Paper: tmp = Dense(128)(concat(encoder(x), pa)); mu = Dense(16); sigma = softplus(Dense(16)).
            self.posterior_net = nn.Sequential(
                nn.Linear(hidden + self.parent_dim, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 2 * self.latent_dim)
            )
            self.decoder = ConvDecoder(
                self.image_shape, in_dim=self.latent_dim + self.parent_dim, width=width, n_down=n_down
            )
        self.parent_range: ParentRange | None = None
        self.history_: list[dict[str, float]] = []

    # -- helpers --------------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        """Device the weights live on."""
        return next(self.parameters()).device

    def _images(self, x: Any, name: str = "x") -> torch.Tensor:
        return check_images(x, self.image_shape, name, self.device)

    def _parents(self, pa: Any, n: int, name: str, check_range: bool) -> torch.Tensor:
        t = check_parents(pa, n, self.parent_dim, name, self.device)
        if check_range and self.parent_range is not None:
            self.parent_range.check(t, name)
        return t

    def sample_noise(self, n: int, seed: int | np.random.Generator | None = None) -> torch.Tensor:
        """Standard-normal noise ``eps_z`` of shape ``(n, latent_dim)``: fixes one counterfactual function per image.

        Parameters
        ----------
        n : int
            Number of images.
        seed : int, numpy.random.Generator or None
            Randomness.

        Returns
        -------
        torch.Tensor
            On the CPU; moved to the model's device when used.
        """
        return _noise(check_positive_int(n, "n"), self.latent_dim, seed)

    def posterior(self, x: torch.Tensor, pa: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Mean and scale of the Gaussian posterior ``q(z | x, pa)``.

        Parameters
        ----------
        x : torch.Tensor
            Images ``(n, C, H, W)`` in [0, 1] on the model's device.
        pa : torch.Tensor
            Parents ``(n, parent_dim)`` on the model's device.

        Returns
        -------
        tuple of torch.Tensor
            ``(mu, sigma)``, each ``(n, latent_dim)``; ``sigma > 0``.
        """
        h = self.posterior_net(torch.cat([self.encoder(x), pa], dim=1))
        mu, s = h.chunk(2, dim=1)
        return mu, F.softplus(s) + 1e-4

    def _load_from_state_dict(self, state_dict: dict, prefix: str, *args: Any, **kwargs: Any) -> None:
        # Checkpoints written before the posterior head became ``posterior_net`` (the method took the name).
        old = prefix + "posterior."
        for key in [k for k in state_dict if k.startswith(old)]:
            state_dict[prefix + "posterior_net." + key[len(old) :]] = state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, *args, **kwargs)

    def _decode_raw(self, z: torch.Tensor, pa: torch.Tensor) -> torch.Tensor:
        return self.decoder(torch.cat([z, pa], dim=1))

    def mean(self, raw: torch.Tensor) -> torch.Tensor:
        """Image mean in [0, 1] of the likelihood whose raw decoder output is ``raw``.

        Parameters
        ----------
        raw : torch.Tensor
            Decoder output ``(n, C, H, W)`` (logits for Bernoulli, the [-1, 1] mean for Normal).

        Returns
        -------
        torch.Tensor
            ``(n, C, H, W)`` in [0, 1].
        """
        # Bernoulli: sigmoid probabilities; Normal: mean on [-1, 1] mapped back to [0, 1].
        if self.likelihood == "bernoulli":
            return torch.sigmoid(raw)
        return ((raw + 1.0) / 2.0).clamp(0.0, 1.0)

    def log_likelihood(self, raw: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """Per-image log-likelihood ``log p(x | raw)`` summed over pixels.

        Parameters
        ----------
        raw : torch.Tensor
            Decoder output ``(n, C, H, W)``.
        x : torch.Tensor
            Images ``(n, C, H, W)`` in [0, 1].

        Returns
        -------
        torch.Tensor
            ``(n,)``.
        """
        if self.likelihood == "bernoulli":
            ll = -F.binary_cross_entropy_with_logits(raw, x, reduction="none")
        else:
            x2 = 2.0 * x - 1.0
            ll = -0.5 * ((x2 - raw) ** 2 / self.normal_variance + math.log(2 * math.pi * self.normal_variance))
        return ll.flatten(1).sum(1)

    def _terms(
        self, x: torch.Tensor, pa: torch.Tensor, eps: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        mu, sigma = self.posterior(x, pa)
        eps = torch.randn_like(mu) if eps is None else eps
        z = mu + sigma * eps
        ll = self.log_likelihood(self._decode_raw(z, pa), x)
        kl = 0.5 * (mu**2 + sigma**2 - 1.0 - 2.0 * torch.log(sigma)).sum(1)
        return ll, kl

    # -- the counterfactual API -----------------------------------------------------------------
    @torch.no_grad()
    def abduct(
        self,
        x: Any,
        pa: Any,
        eps: Any | None = None,
        *,
        seed: int | np.random.Generator | None = None,
        check_range: bool = False,
    ) -> Any:
        """Abduction: the latent code of ``x`` given its parents.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Observed images in ``[0, 1]``.
        pa : array or tensor, shape (n, k)
            Their encoded parents.
        eps : array or tensor, shape (n, latent_dim), optional
            Reparameterisation noise: ``z = mu + sigma * eps``. ``None`` (and no ``seed``) returns the posterior mean.
        seed : int or Generator, optional
            Draw ``eps`` from this seed instead.
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, latent_dim)
        """
        self.eval()
        xt = self._images(x)
        pat = self._parents(pa, len(xt), "pa", check_range)
        if eps is None and seed is not None:
            eps = self.sample_noise(len(xt), seed)
        if eps is not None:
            eps = to_tensor(eps, "eps", self.device)
            if eps.shape != (len(xt), self.latent_dim):
                raise ValueError(
                    f"eps must have shape (n, latent_dim) = {(len(xt), self.latent_dim)}, got {tuple(eps.shape)}"
                )
        out = []
        for s in range(0, len(xt), _CHUNK):
            mu, sigma = self.posterior(xt[s : s + _CHUNK], pat[s : s + _CHUNK])
            out.append(mu if eps is None else mu + sigma * eps[s : s + _CHUNK])
        return like_input(torch.cat(out), x)

    @torch.no_grad()
    def decode(self, z: Any, pa: Any, *, check_range: bool = True) -> Any:
        """Prediction: the decoder mean image for latents ``z`` and parents ``pa``.

        Parameters
        ----------
        z : array or tensor, shape (n, latent_dim)
            Latent codes (from :meth:`abduct`, or prior draws).
        pa : array or tensor, shape (n, k)
            Encoded parents to decode with.
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
            Images in ``[0, 1]``.
        """
        self.eval()
        zt = to_tensor(z, "z", self.device)
        if zt.ndim != 2 or zt.shape[1] != self.latent_dim:
            raise ValueError(f"z must have shape (n, {self.latent_dim}), got {tuple(zt.shape)}")
        pat = self._parents(pa, len(zt), "pa", check_range)
        out = [self.mean(self._decode_raw(zt[s : s + _CHUNK], pat[s : s + _CHUNK])) for s in range(0, len(zt), _CHUNK)]
        return like_input(torch.cat(out), z)

    @torch.no_grad()
    def counterfactual(
        self,
        x: Any,
        pa: Any,
        pa_star: Any,
        eps: Any | None = None,
        *,
        seed: int | np.random.Generator | None = None,
        check_range: bool = True,
    ) -> Any:
        """Abduction-action-prediction: ``decode(abduct(x, pa, eps), pa_star)``.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Observed images.
        pa, pa_star : array or tensor, shape (n, k)
            Observed and counterfactual encoded parents.
        eps : array or tensor, shape (n, latent_dim), optional
            Fixed noise per image (see :meth:`sample_noise`); ``None`` uses the posterior mean.
        seed : int or Generator, optional
            Draw ``eps`` from this seed.
        check_range : bool
            Refuse ``pa_star`` outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
        """
        xt = self._images(x)
        pst = self._parents(pa_star, len(xt), "pa_star", check_range)
        z = self.abduct(xt, pa, eps, seed=seed)
        return like_input(self.decode(z, pst, check_range=False), x)

    @torch.no_grad()
    def sample(
        self,
        pa: Any,
        *,
        seed: int | np.random.Generator | None = None,
        temperature: float = 1.0,
        eps: Any | None = None,
        check_range: bool = True,
    ) -> Any:
        """Draw images from the conditional prior ``z ~ N(0, temperature^2 I)``.

        Parameters
        ----------
        pa : array or tensor, shape (n, k)
            Encoded parents.
        seed : int or Generator, optional
            Randomness for ``z``.
        temperature : float
            Prior standard deviation.
        eps : array or tensor, optional
            Use this standard-normal noise instead of drawing it.
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
        """
        pat = check_parents(pa, None, self.parent_dim, "pa", self.device)
        eps = self.sample_noise(len(pat), seed) if eps is None else to_tensor(eps, "eps")
        return like_input(self.decode(eps.to(self.device) * float(temperature), pat, check_range=check_range), pa)

    @torch.no_grad()
    def elbo(
        self, x: Any, pa: Any, *, seed: int | np.random.Generator | None = 0, beta: float | None = None
    ) -> np.ndarray:
        """Per-image evidence lower bound in nats (one-sample estimate).

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Images.
        pa : array or tensor, shape (n, k)
            Encoded parents.
        seed : int or Generator, optional
            Randomness of the one-sample estimate.
        beta : float, optional
            KL weight (default 1: the true bound; the model's own β gives its training objective).

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        self.eval()
        xt = self._images(x)
        pat = self._parents(pa, len(xt), "pa", False)
        eps = self.sample_noise(len(xt), seed).to(self.device)
        b = 1.0 if beta is None else float(beta)
        out = []
        for s in range(0, len(xt), _CHUNK):
            ll, kl = self._terms(xt[s : s + _CHUNK], pat[s : s + _CHUNK], eps[s : s + _CHUNK])
            out.append(ll - b * kl)
        return torch.cat(out).cpu().numpy()

    # -- training ---------------------------------------------------------------------------------
    def fit(
        self,
        x: Any,
        pa: Any,
        epochs: int = 20,
        batch_size: int = 128,
        lr: float = 1e-3,
        *,
        weight_decay: float = 1e-4,
        device: str = "auto",
        seed: int = 0,
        indices: Any | None = None,
        steps: int | None = None,
        show_progress: bool | None = None,
    ) -> ConditionalVAE:
        """Maximise the β-ELBO with AdamW (paper: lr 1e-3, weight decay 1e-4).

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Training images in ``[0, 1]``.
        pa : array or tensor, shape (n, k)
            Encoded parents.
        epochs : int
            Passes over ``indices`` (ignored when ``steps`` is given).
        batch_size : int
            Minibatch size.
        lr : float
            Learning rate.
        weight_decay : float
            AdamW weight decay.
        device : str
            ``"auto"`` (CUDA when present), ``"cpu"`` or ``"cuda"``.
        seed : int
            Seed of the initialisation-independent randomness (batches, reparameterisation).
        indices : array of int, optional
            Rows to train on, with repeats (e.g. a simulated-intervention resampling).
        steps : int, optional
            Train for exactly this many minibatch steps instead of ``epochs``.
        show_progress : bool, optional
            Show a tqdm bar (default: when attached to a terminal).

        Returns
        -------
        ConditionalVAE
            ``self``, trained; ``history_`` holds the mean loss per epoch.
        """
        dev = get_device(device)
        self.to(dev)
        xt = check_images(x, self.image_shape, "x")
        if xt.min() < 0 or xt.max() > 1:
            raise ValueError("x must hold intensities in [0, 1]")
        pat = check_parents(pa, len(xt), self.parent_dim, "pa")
        idx = check_indices(indices, len(xt))
        batch_size = check_positive_int(batch_size, "batch_size")
        epochs = check_positive_int(epochs, "epochs")
        self.parent_range = ParentRange.from_data(pat if idx is None else pat[idx])
        xt, pat = xt.to(dev), pat.to(dev)
        opt = torch.optim.AdamW(self.parameters(), lr=lr, weight_decay=weight_decay)
        self.train()

        def step(b: torch.Tensor) -> dict[str, float]:
            ll, kl = self._terms(xt[b], pat[b])
            loss = (self.beta * kl - ll).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return {"loss": float(loss.detach()), "nll": float(-ll.mean().detach()), "kl": float(kl.mean().detach())}

        self.history_ += run_steps(step, len(xt), batch_size, epochs, steps, seed, idx, "ConditionalVAE", show_progress)
        self.eval()
        return self

    # -- persistence ------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write config, weights, training range and history to ``path`` (atomic)."""
        return save_model(
            self,
            path,
            self._config,
            {
                "parent_range": None if self.parent_range is None else self.parent_range.state(),
                "history": self.history_,
            },
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "cpu") -> ConditionalVAE:
        """Load a model written by :meth:`save` onto ``device``."""
        model, extra = load_model(cls, path, device)
        model.parent_range = ParentRange.from_state(extra.get("parent_range"))
        model.history_ = list(extra.get("history", []))
        return model
