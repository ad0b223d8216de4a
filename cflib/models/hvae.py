"""Hierarchical conditional VAE with partial abduction and prior temperature (Monteiro et al., ICLR 2023, Sec. 4.3, App. F, eq. 15).

A small top-down (ladder) VAE standing in for the paper's 42-layer conditional VDVAE. Latent groups
``z_0 .. z_{L-1}`` are generated top-down; the parents are injected at every level:

    p(z | pa)    = p(z_0) prod_{i>=1} p(z_i | z_{<i}, pa)
    q(z | x, pa) = q(z_0 | x) prod_{i>=1} q(z_i | z_{<i}, x, pa)

**Partial abduction** (the paper's knob of Table 6 / Fig. 7): a counterfactual keeps the posterior
latents of the first ``k`` levels (top-down, the coarsest first) and samples the remaining
``L - k`` from the conditional prior given ``pa*``, at a **temperature** ``t`` (Fig. 8). ``k = L`` is
full abduction (faithful, tends to ignore ``pa*``), ``k = 0`` a fresh sample (effective, unfaithful).
With the noise ``eps`` fixed per image, the counterfactual function is deterministic.

API (images ``(n, C, H, W)`` in ``[0, 1]``, ``pa`` float ``(n, k)``; numpy in -> numpy out)::

    hvae = HierarchicalConditionalVAE(image_shape=(3, 16, 16), parent_dim=12, levels=4, latent_dim=8, beta=1.0)
    hvae.fit(x, pa, epochs=20, batch_size=128, lr=1e-3, device="auto", seed=0)
    z = hvae.abduct(x, pa, eps=None)                          # (n, levels, latent_dim)
    x_rec = hvae.decode(z, pa)                                # all levels given
    eps = hvae.sample_noise(len(x), seed=1)                   # (n, levels, latent_dim)
    x_cf = hvae.counterfactual(x, pa, pa_star, abduct_levels=2, temperature=0.5, eps=eps)
    hvae.save("hvae.pt"); HierarchicalConditionalVAE.load("hvae.pt")
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
from .vae import LIKELIHOODS

__all__ = ["HierarchicalConditionalVAE"]

_CHUNK = 2048


def _gauss_kl(mq: torch.Tensor, sq: torch.Tensor, mp: torch.Tensor, sp: torch.Tensor) -> torch.Tensor:
    """KL(N(mq, sq^2) || N(mp, sp^2)) summed over the last dimension."""
    return (torch.log(sp / sq) + (sq**2 + (mq - mp) ** 2) / (2 * sp**2) - 0.5).sum(-1)


class HierarchicalConditionalVAE(nn.Module):
    """Top-down conditional VAE with ``levels`` latent groups, partial abduction and prior temperature.

    Parameters
    ----------
    image_shape : tuple of int
        ``(C, H, W)``.
    parent_dim : int
        Width of the encoded parent vector.
    levels : int
        Number of latent groups ``L`` (the paper's VDVAE has 42 stochastic layers).
    latent_dim : int
        Size of each group.
    beta : float
        KL weight (paper: 5; with 1 the model ignores the conditioning).
    likelihood : {"bernoulli", "normal"}
        Pixel likelihood (see :class:`cflib.models.vae.ConditionalVAE`).
    normal_variance : float
        Fixed variance of the Normal likelihood on the ``[-1, 1]`` scale.
    width, hidden : int
        Convolution channels and width of the top-down state.
    n_down : int, optional
        Stride-2 stages of the image encoder/decoder.
    seed : int, optional
        Seed of the weight initialisation.
    """

    #: Per-step losses of :func:`cflib.models.image_mechanisms.counterfactual_finetune` (set only by it and by
    #: :meth:`load`; saved with the model).
    finetune_history_: dict[str, list[float]]

    def __init__(
        self,
        image_shape: Sequence[int],
        parent_dim: int,
        levels: int = 4,
        latent_dim: int = 8,
        beta: float = 1.0,
        likelihood: str = "bernoulli",
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
        self.image_shape = tuple(int(s) for s in image_shape)
        self.parent_dim = check_positive_int(parent_dim, "parent_dim")
        self.levels = check_positive_int(levels, "levels")
        self.latent_dim = check_positive_int(latent_dim, "latent_dim")
        self.beta = float(beta)
        self.likelihood = likelihood
        self.normal_variance = float(normal_variance)
        self.hidden = int(hidden)
        self._config = {
            "image_shape": list(self.image_shape),
            "parent_dim": self.parent_dim,
            "levels": self.levels,
            "latent_dim": self.latent_dim,
            "beta": self.beta,
            "likelihood": likelihood,
            "normal_variance": self.normal_variance,
            "width": width,
            "hidden": hidden,
            "n_down": n_down,
        }
        d, k, h = self.latent_dim, self.parent_dim, self.hidden
        with seeded(seed):
            self.encoder = ConvEncoder(self.image_shape, width=width, out_dim=h, n_down=n_down)
            self.d0 = nn.Parameter(torch.zeros(h))
            # q(z_0 | x) has no parents (eq. 15); deeper posteriors and priors see the state and pa.
            self.post = nn.ModuleList(
                [nn.Sequential(nn.Linear(h, h), nn.LeakyReLU(0.2), nn.Linear(h, 2 * d))]
                + [
                    nn.Sequential(nn.Linear(2 * h + k, h), nn.LeakyReLU(0.2), nn.Linear(h, 2 * d))
                    for _ in range(self.levels - 1)
                ]
            )
            self.prior = nn.ModuleList(
                [
                    nn.Sequential(nn.Linear(h + k, h), nn.LeakyReLU(0.2), nn.Linear(h, 2 * d))
                    for _ in range(self.levels - 1)
                ]
            )
            self.update = nn.ModuleList(
                [nn.Sequential(nn.Linear(h + d + k, h), nn.LeakyReLU(0.2), nn.Linear(h, h)) for _ in range(self.levels)]
            )
            self.decoder = ConvDecoder(self.image_shape, in_dim=h + k, width=width, n_down=n_down)
        self.parent_range: ParentRange | None = None
        self.history_: list[dict[str, float]] = []

    # -- helpers ----------------------------------------------------------------------------------
    @property
    def device(self) -> torch.device:
        """Device the weights live on."""
        return next(self.parameters()).device

    def _parents(self, pa: Any, n: int, name: str, check_range: bool) -> torch.Tensor:
        t = check_parents(pa, n, self.parent_dim, name, self.device)
        if check_range and self.parent_range is not None:
            self.parent_range.check(t, name)
        return t

    def _eps(self, eps: Any | None, n: int, seed: int | np.random.Generator | None) -> torch.Tensor | None:
        if eps is None and seed is not None:
            eps = self.sample_noise(n, seed)
        if eps is None:
            return None
        t = to_tensor(eps, "eps", self.device)
        if tuple(t.shape) != (n, self.levels, self.latent_dim):
            raise ValueError(
                f"eps must have shape (n, levels, latent_dim) = {(n, self.levels, self.latent_dim)}, got {tuple(t.shape)}"
            )
        return t

    def _check_k(self, abduct_levels: int | None) -> int:
        if abduct_levels is None:
            return self.levels
        if (
            isinstance(abduct_levels, bool)
            or not isinstance(abduct_levels, (int, np.integer))
            or not 0 <= abduct_levels <= self.levels
        ):
            raise ValueError(
                f"abduct_levels must be an integer in 0..{self.levels} (levels of the model), got {abduct_levels!r}"
            )
        return int(abduct_levels)

    @staticmethod
    def _split(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mu, s = h.chunk(2, dim=-1)
        return mu, F.softplus(s) + 1e-4

    def _prior(self, i: int, d: torch.Tensor, pa: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if i == 0:
            return torch.zeros(len(d), self.latent_dim, device=d.device), torch.ones(
                len(d), self.latent_dim, device=d.device
            )
        return self._split(self.prior[i - 1](torch.cat([d, pa], 1)))

    def _posterior(
        self, i: int, d: torch.Tensor, h: torch.Tensor, pa: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if i == 0:
            return self._split(self.post[0](h))
        return self._split(self.post[i](torch.cat([d, h, pa], 1)))

    def _step(self, i: int, d: torch.Tensor, z: torch.Tensor, pa: torch.Tensor) -> torch.Tensor:
        return d + self.update[i](torch.cat([d, z, pa], 1))

    def mean(self, raw: torch.Tensor) -> torch.Tensor:
        """Image mean in [0, 1] of the likelihood whose raw decoder output is ``raw``.

        Parameters
        ----------
        raw : torch.Tensor
            Decoder output ``(n, C, H, W)``.

        Returns
        -------
        torch.Tensor
            ``(n, C, H, W)`` in [0, 1].
        """
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
            ll = -0.5 * (
                (2.0 * x - 1.0 - raw) ** 2 / self.normal_variance + math.log(2 * math.pi * self.normal_variance)
            )
        return ll.flatten(1).sum(1)

    def infer(
        self, x: torch.Tensor, pa: torch.Tensor, eps: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Posterior pass through every level (a training and fine-tuning hook).

        Parameters
        ----------
        x : torch.Tensor
            Images ``(n, C, H, W)`` in [0, 1] on the model's device.
        pa : torch.Tensor
            Parents ``(n, parent_dim)``.
        eps : torch.Tensor or None
            Reparameterisation noise ``(n, levels, latent_dim)``; ``None`` draws it from torch's generator.

        Returns
        -------
        tuple of torch.Tensor
            Latents ``(n, levels, latent_dim)``, KL per level ``(n, levels)`` and the final decoder state.
        """
        h = self.encoder(x)
        d = self.d0.expand(len(x), -1)
        zs, kls = [], []
        for i in range(self.levels):
            mq, sq = self._posterior(i, d, h, pa)
            mp, sp = self._prior(i, d, pa)
            e = torch.randn_like(mq) if eps is None else eps[:, i]
            z = mq + sq * e
            kls.append(_gauss_kl(mq, sq, mp, sp))
            zs.append(z)
            d = self._step(i, d, z, pa)
        return torch.stack(zs, 1), torch.stack(kls, 1), d

    def generate(
        self,
        pa: torch.Tensor,
        z_fixed: torch.Tensor | None,
        k: int,
        temperature: float,
        eps: torch.Tensor | None,
        n: int,
    ) -> torch.Tensor:
        """Top-down pass: the first ``k`` levels from ``z_fixed``, the rest from the prior.

        Parameters
        ----------
        pa : torch.Tensor
            Parents ``(n, parent_dim)`` the image is generated under.
        z_fixed : torch.Tensor or None
            Latents ``(n, levels, latent_dim)`` (only the first ``k`` are read); ``None`` when ``k == 0``.
        k : int
            Number of abducted levels kept.
        temperature : float
            Scale of the prior noise at the remaining levels.
        eps : torch.Tensor or None
            Prior noise ``(n, levels, latent_dim)``; ``None`` draws it from torch's generator.
        n : int
            Number of images.

        Returns
        -------
        torch.Tensor
            Raw decoder output ``(n, C, H, W)``; :meth:`mean` maps it to an image.
        """
        d = self.d0.expand(n, -1)
        for i in range(self.levels):
            if i < k:
                if z_fixed is None:
                    raise ValueError(f"z_fixed is needed to keep the first k = {k} levels")
                z = z_fixed[:, i]
            else:
                mp, sp = self._prior(i, d, pa)
                e = torch.randn_like(mp) if eps is None else eps[:, i]
                z = mp + temperature * sp * e
            d = self._step(i, d, z, pa)
        return self.decoder(torch.cat([d, pa], 1))

    def sample_noise(self, n: int, seed: int | np.random.Generator | None = None) -> torch.Tensor:
        """Standard-normal noise ``(n, levels, latent_dim)`` fixing one counterfactual function per image."""
        n = check_positive_int(n, "n")
        return torch.from_numpy(
            as_generator(seed).standard_normal((n, self.levels, self.latent_dim)).astype(np.float32)
        )

    # -- the counterfactual API ---------------------------------------------------------------------
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
        """Abduction: posterior latents of every level, computed top-down with the observed parents.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Observed images.
        pa : array or tensor, shape (n, k)
            Their encoded parents.
        eps : array or tensor, shape (n, levels, latent_dim), optional
            Reparameterisation noise; ``None`` (and no ``seed``) takes posterior means.
        seed : int or Generator, optional
            Draw ``eps`` from this seed.
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, levels, latent_dim)
        """
        self.eval()
        xt = check_images(x, self.image_shape, "x", self.device)
        pat = self._parents(pa, len(xt), "pa", check_range)
        e = self._eps(eps, len(xt), seed)
        out = []
        for s in range(0, len(xt), _CHUNK):
            sl = slice(s, s + _CHUNK)
            if e is None:
                # posterior means: run the pass with zero noise
                zs, _, _ = self.infer(
                    xt[sl], pat[sl], torch.zeros(len(xt[sl]), self.levels, self.latent_dim, device=self.device)
                )
            else:
                zs, _, _ = self.infer(xt[sl], pat[sl], e[sl])
            out.append(zs)
        return like_input(torch.cat(out), x)

    @torch.no_grad()
    def decode(
        self,
        z: Any,
        pa: Any,
        *,
        abduct_levels: int | None = None,
        temperature: float = 1.0,
        eps: Any | None = None,
        seed: int | np.random.Generator | None = None,
        check_range: bool = True,
    ) -> Any:
        """Prediction: generate top-down with ``pa``, fixing the first ``abduct_levels`` groups to ``z``.

        Parameters
        ----------
        z : array or tensor, shape (n, levels, latent_dim)
            Latents (only the first ``abduct_levels`` groups are used).
        pa : array or tensor, shape (n, k)
            Encoded parents.
        abduct_levels : int, optional
            Number of fixed groups ``k`` (default: all).
        temperature : float
            Standard-deviation multiplier of the prior for the sampled groups.
        eps : array or tensor, shape (n, levels, latent_dim), optional
            Noise of the sampled groups (fixes the function); ``None`` draws it from ``seed``.
        seed : int or Generator, optional
            Randomness when ``eps`` is not given (default 0 when some groups are sampled, so that the
            call is deterministic).
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
            Decoder mean in ``[0, 1]``.
        """
        self.eval()
        k = self._check_k(abduct_levels)
        if not temperature >= 0:
            raise ValueError(f"temperature must be non-negative, got {temperature!r}")
        zt = to_tensor(z, "z", self.device)
        if zt.ndim != 3 or tuple(zt.shape[1:]) != (self.levels, self.latent_dim):
            raise ValueError(f"z must have shape (n, {self.levels}, {self.latent_dim}), got {tuple(zt.shape)}")
        pat = self._parents(pa, len(zt), "pa", check_range)
        e = self._eps(eps, len(zt), seed if seed is not None else (0 if k < self.levels else None))
        out = []
        for s in range(0, len(zt), _CHUNK):
            sl = slice(s, s + _CHUNK)
            raw = self.generate(pat[sl], zt[sl], k, float(temperature), None if e is None else e[sl], len(zt[sl]))
            out.append(self.mean(raw))
        return like_input(torch.cat(out), z)

    @torch.no_grad()
    def counterfactual(
        self,
        x: Any,
        pa: Any,
        pa_star: Any,
        eps: Any | None = None,
        *,
        abduct_levels: int | None = None,
        temperature: float = 1.0,
        seed: int | np.random.Generator | None = None,
        check_range: bool = True,
    ) -> Any:
        """Counterfactual with partial abduction: fix the first ``abduct_levels`` posterior groups, sample the rest given ``pa_star``.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Observed images.
        pa, pa_star : array or tensor, shape (n, k)
            Observed and counterfactual encoded parents.
        eps : array or tensor, shape (n, levels, latent_dim), optional
            Noise fixing the function per image: posterior reparameterisation of the abducted groups
            and prior draws of the others. ``None``: posterior means, and prior draws from ``seed`` (0).
        abduct_levels : int, optional
            ``k`` (default all levels: full abduction).
        temperature : float
            Prior temperature of the non-abducted groups.
        seed : int or Generator, optional
            Draw ``eps`` from this seed.
        check_range : bool
            Refuse ``pa_star`` outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
        """
        xt = check_images(x, self.image_shape, "x", self.device)
        pst = self._parents(pa_star, len(xt), "pa_star", check_range)
        e = self._eps(eps, len(xt), seed)
        z = self.abduct(xt, pa, e)
        return like_input(
            self.decode(z, pst, abduct_levels=abduct_levels, temperature=temperature, eps=e, check_range=False), x
        )

    @torch.no_grad()
    def sample(
        self,
        pa: Any,
        *,
        seed: int | np.random.Generator | None = None,
        temperature: float = 1.0,
        check_range: bool = True,
    ) -> Any:
        """Draw images from the conditional prior (no abduction).

        Parameters
        ----------
        pa : array or tensor, shape (n, k)
            Encoded parents.
        seed : int or Generator, optional
            Randomness.
        temperature : float
            Prior temperature.
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
        """
        pat = check_parents(pa, None, self.parent_dim, "pa", self.device)
        z = torch.zeros(len(pat), self.levels, self.latent_dim, device=self.device)
        eps = self.sample_noise(len(pat), seed)
        return like_input(
            self.decode(z, pat, abduct_levels=0, temperature=temperature, eps=eps, check_range=check_range), pa
        )

    @torch.no_grad()
    def elbo(
        self, x: Any, pa: Any, *, seed: int | np.random.Generator | None = 0, per_level: bool = False
    ) -> np.ndarray:
        """Per-image ELBO in nats (one-sample estimate), or the KL of each level.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Images.
        pa : array or tensor, shape (n, k)
            Encoded parents.
        seed : int or Generator, optional
            Noise of the estimate.
        per_level : bool
            Return the KL per level, shape ``(n, levels)``, instead of the ELBO.

        Returns
        -------
        numpy.ndarray
        """
        self.eval()
        xt = check_images(x, self.image_shape, "x", self.device)
        pat = self._parents(pa, len(xt), "pa", False)
        e = self._eps(None, len(xt), seed)
        zs, kls, d = self.infer(xt, pat, e)
        if per_level:
            return kls.cpu().numpy()
        ll = self.log_likelihood(self.decoder(torch.cat([d, pat], 1)), xt)
        return (ll - kls.sum(1)).cpu().numpy()

    # -- training -----------------------------------------------------------------------------------
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
    ) -> HierarchicalConditionalVAE:
        """Maximise the β-ELBO (sum of the level KLs weighted by β) with AdamW.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Training images in ``[0, 1]``.
        pa : array or tensor, shape (n, k)
            Encoded parents.
        epochs, batch_size : int
            Passes and minibatch size.
        lr, weight_decay : float
            AdamW settings.
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed : int
            Seed of shuffling and reparameterisation noise.
        indices : array of int, optional
            Rows to train on (e.g. a simulated-intervention resampling).
        steps : int, optional
            Exact number of steps instead of ``epochs``.
        show_progress : bool, optional
            Force the progress bar on or off.

        Returns
        -------
        HierarchicalConditionalVAE
            ``self``.
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
            xb, pb = xt[b], pat[b]
            _, kls, d = self.infer(xb, pb, None)
            ll = self.log_likelihood(self.decoder(torch.cat([d, pb], 1)), xb)
            kl = kls.sum(1)
            loss = (self.beta * kl - ll).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            return {"loss": float(loss.detach()), "nll": float(-ll.mean().detach()), "kl": float(kl.mean().detach())}

        self.history_ += run_steps(
            step, len(xt), batch_size, epochs, steps, seed, idx, "HierarchicalConditionalVAE", show_progress
        )
        self.eval()
        return self

    # -- persistence --------------------------------------------------------------------------------
    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write config, weights, training range and history to ``path`` (atomic)."""
        return save_model(
            self,
            path,
            self._config,
            {
                "parent_range": None if self.parent_range is None else self.parent_range.state(),
                "history": self.history_,
                "finetune_history": getattr(self, "finetune_history_", None),
            },
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "cpu") -> HierarchicalConditionalVAE:
        """Load a model written by :meth:`save` onto ``device``."""
        model, extra = load_model(cls, path, device)
        model.parent_range = ParentRange.from_state(extra.get("parent_range"))
        model.history_ = list(extra.get("history", []))
        if extra.get("finetune_history") is not None:
            model.finetune_history_ = extra["finetune_history"]
        return model
