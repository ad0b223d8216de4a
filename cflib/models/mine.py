"""MINE-based disentangling map of a latent from a sensitive attribute.

Implements Section 3.3, Appendix C and Appendix H.2 of Ma et al., *AI alignment in medical imaging:
unveiling hidden biases through counterfactual analysis*: a perturbation

.. math:: \\phi_{\\lambda,\\delta}(z_0) = z_0 + \\lambda\\, m_\\delta(z_0) / \\lVert m_\\delta(z_0) \\rVert_2

whose network :math:`m_\\delta` is trained to *minimise* the Donsker-Varadhan lower bound on the mutual
information :math:`I(\\phi(z_0); A)`,

.. math:: I(\\phi(z_0); A) \\ge \\max_\\theta\\; E_{P(z,a)}[T_\\theta(\\phi(z_0), a)]
          - \\log E_{P(z) \\otimes P(a)}[e^{T_\\theta(\\phi(z_0), a)}],

while the critic :math:`T_\\theta` *maximises* it (MINE, Belghazi et al. 2018). The product of marginals
is sampled by shuffling ``a`` within a batch. Optimisation follows App. H.2: Adam (lr 1e-4, weight decay
1e-5), batch 64, gradient clipping at norm 1, five critic updates per perturbation update, and
:math:`\\lambda = 10^{-3}`. The networks are the paper's Tables 4 and 5 scaled down for CPU: a
U-shaped convolutional :math:`m_\\delta` without skip connections and a small residual critic that
sees the latent concatenated with one-hot label maps.

Note the paper's own caveat, checked in the book: with :math:`\\lambda = 10^{-3}` and a unit-norm
direction, :math:`\\lVert \\phi(z_0) - z_0 \\rVert_2 = 10^{-3}` for every input, so :math:`\\phi` is
essentially the identity; :func:`estimate_mi` measures the bound before and after with fresh critics.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from ..results import BaseTestResult
from ..runtime import get_device
from ._train import load_model, optimizer_step, random_batches, save_model, train

__all__ = ["dv_bound", "Critic", "Perturbation", "MINEDisentangler", "MIEstimate", "estimate_mi"]


def dv_bound(t_joint: torch.Tensor, t_marginal: torch.Tensor) -> torch.Tensor:
    """Donsker-Varadhan lower bound on mutual information from critic values.

    Parameters
    ----------
    t_joint : torch.Tensor
        ``(n,)`` critic values on pairs drawn from the joint ``P(z, a)``.
    t_marginal : torch.Tensor
        ``(m,)`` critic values on pairs from the product of marginals.

    Returns
    -------
    torch.Tensor
        ``mean(t_joint) - log(mean(exp(t_marginal)))`` in nats (a scalar), computed with
        ``logsumexp`` for stability.
    """
    m = t_marginal.shape[0]
    return t_joint.mean() - (torch.logsumexp(t_marginal, dim=0) - np.log(m))


def _check_latents(z, a, n_classes: int) -> tuple[torch.Tensor, torch.Tensor]:
    zt = torch.as_tensor(np.asarray(z, dtype=np.float32))
    if zt.ndim != 4:
        raise ValueError(f"z must be latents of shape (n, channels, H, W), got {tuple(zt.shape)}")
    if not torch.isfinite(zt).all():
        raise ValueError("z contains NaN or infinite values")
    aa = np.asarray(a)
    if aa.shape != (zt.shape[0],):
        raise ValueError(f"a must have shape ({zt.shape[0]},) to match z, got {aa.shape}")
    if aa.dtype.kind not in "iu" or aa.min() < 0 or aa.max() >= n_classes:
        raise ValueError(f"a must hold integer labels 0..{n_classes - 1}")
    return zt, torch.as_tensor(aa.astype(np.int64))


class Critic(nn.Module):
    """Statistics network :math:`T_\\theta(z, a)`: a small residual CNN on ``concat(z, one_hot(a))``.

    Parameters
    ----------
    channels : int
        Latent channels.
    n_classes : int
        Number of attribute values (one-hot label maps, paper Table 5).
    hidden : int
        Width of the convolutions.
    """

    def __init__(self, channels: int, n_classes: int, hidden: int = 32) -> None:
        super().__init__()
        self.n_classes = n_classes
        # No batch normalisation (unlike Table 5): the joint and the product-of-marginals terms are
        # evaluated in separate forward passes, and batch statistics that differ between them let the
        # critic score the batch instead of the pair, which inflates the training bound.
        self.stem = nn.Sequential(nn.Conv2d(channels + n_classes, hidden, 3, padding=1), nn.ReLU())
        self.block = nn.Sequential(
            nn.Conv2d(hidden, hidden, 3, padding=1), nn.ReLU(), nn.Conv2d(hidden, hidden, 3, padding=1)
        )
        self.down = nn.Sequential(nn.Conv2d(hidden, 2 * hidden, 3, stride=2, padding=1), nn.ReLU())
        self.out = nn.Linear(2 * hidden, 1)

    def forward(self, z: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        """Critic value per pair, shape ``(n,)``."""
        onehot = nn.functional.one_hot(a, self.n_classes).float()[:, :, None, None].expand(-1, -1, *z.shape[2:])
        h = self.stem(torch.cat([z, onehot], dim=1))
        h = torch.relu(h + self.block(h))
        h = self.down(h).mean(dim=(2, 3))
        return self.out(h)[:, 0]


class Perturbation(nn.Module):
    """Perturbation network :math:`m_\\delta`: a U-shaped CNN whose output has the latent's shape (Table 4).

    Parameters
    ----------
    channels : int
        Latent channels.
    hidden : int
        Width of the first level (doubled at the bottom).
    """

    def __init__(self, channels: int, hidden: int = 16) -> None:
        super().__init__()

        def block(c_in: int, c_out: int) -> nn.Sequential:
            return nn.Sequential(
                nn.Conv2d(c_in, c_out, 3, padding=1),
                nn.ReLU(),
                nn.BatchNorm2d(c_out),
                nn.Conv2d(c_out, c_out, 3, padding=1),
                nn.ReLU(),
                nn.BatchNorm2d(c_out),
            )

        self.down = nn.Sequential(block(channels, hidden), nn.MaxPool2d(2), block(hidden, 2 * hidden))
        self.up = nn.Sequential(
            nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False),
            block(2 * hidden, hidden),
            nn.Conv2d(hidden, channels, 3, padding=1),
        )

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        """Raw perturbation direction, same shape as ``z``."""
        return self.up(self.down(z))


class MINEDisentangler(nn.Module):
    """The disentangling map :math:`\\phi_{\\lambda,\\delta}` trained against a MINE critic.

    Parameters
    ----------
    latent_shape : tuple of int
        ``(channels, H, W)`` of the latents (``H``, ``W`` even).
    n_classes : int
        Number of attribute values.
    lam : float
        Step length :math:`\\lambda` of the normalised perturbation (paper: 1e-3).
    hidden : int
        Width of both networks.
    seed : int
        Seed of the weight initialisation.
    """

    def __init__(
        self, latent_shape: tuple[int, int, int], n_classes: int, *, lam: float = 1e-3, hidden: int = 16, seed: int = 0
    ) -> None:
        super().__init__()
        if len(latent_shape) != 3 or latent_shape[1] % 2 or latent_shape[2] % 2:
            raise ValueError(f"latent_shape must be (channels, H, W) with even H and W, got {latent_shape}")
        if n_classes < 2:
            raise ValueError(f"n_classes must be at least 2, got {n_classes}")
        if not np.isfinite(lam) or lam < 0:
            raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
        self.latent_shape, self.n_classes, self.lam = tuple(int(s) for s in latent_shape), int(n_classes), float(lam)
        self.hidden = int(hidden)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            self.m = Perturbation(latent_shape[0], hidden)
            self.critic = Critic(latent_shape[0], n_classes, 2 * hidden)
        self.history: dict[str, list[float]] = {"critic_bound": [], "perturbation_bound": []}

    def phi(self, z: torch.Tensor) -> torch.Tensor:
        """:math:`\\phi(z) = z + \\lambda\\, m(z) / \\lVert m(z) \\rVert_2` (norm per sample, over all dims)."""
        d = self.m(z)
        norm = d.flatten(1).norm(dim=1).clamp_min(1e-12)[:, None, None, None]
        return z + self.lam * d / norm

    def fit(
        self,
        z: np.ndarray,
        a: np.ndarray,
        *,
        steps: int = 200,
        batch_size: int = 64,
        lr: float = 1e-4,
        weight_decay: float = 1e-5,
        critic_steps: int = 5,
        clip: float = 1.0,
        device: str = "auto",
        seed: int = 0,
        progress: bool | None = None,
    ) -> MINEDisentangler:
        """Alternate ``critic_steps`` critic ascents and one perturbation descent on the DV bound.

        Parameters
        ----------
        z : numpy.ndarray
            ``(n, channels, H, W)`` latents.
        a : numpy.ndarray
            ``(n,)`` labels.
        steps : int
            Perturbation updates (each preceded by ``critic_steps`` critic updates).
        batch_size, lr, weight_decay, critic_steps, clip : numbers
            Optimisation settings of App. H.2.
        device : str
            Device.
        seed : int
            Seed of the batches and label shuffles.
        progress : bool, optional
            Show a progress bar (``None``: unless run by :mod:`cflib.runner`).

        Returns
        -------
        MINEDisentangler
            ``self``.
        """
        zt, at = _check_latents(z, a, self.n_classes)
        if tuple(zt.shape[1:]) != self.latent_shape:
            raise ValueError(f"z must have latent shape {self.latent_shape}, got {tuple(zt.shape[1:])}")
        dev = get_device(device)
        self.to(dev).train()
        gen = torch.Generator().manual_seed(seed)
        opt_c = torch.optim.Adam(self.critic.parameters(), lr=lr, weight_decay=weight_decay)
        opt_m = torch.optim.Adam(self.m.parameters(), lr=lr, weight_decay=weight_decay)

        def bound_on(idx: torch.Tensor, shuf: torch.Tensor, *, perturb: bool) -> torch.Tensor:
            # shuf: labels from an independent draw, the product of marginals
            zb = zt[idx].to(dev)
            with torch.set_grad_enabled(perturb):
                zp = self.phi(zb)
            return dv_bound(self.critic(zp, at[idx].to(dev)), self.critic(zp, at[shuf].to(dev)))

        def step(draws: list[torch.Tensor]) -> dict[str, float]:
            for j in range(critic_steps):
                bound = bound_on(draws[2 * j], draws[2 * j + 1], perturb=False)
                optimizer_step(opt_c, -bound, clip)
                self.history["critic_bound"].append(float(bound.detach()))
            bound = bound_on(draws[-2], draws[-1], perturb=True)
            return {
                "perturbation_bound": optimizer_step(opt_m, bound, clip)
            }  # minimise the information phi(z) keeps about a

        sampler = random_batches(zt.shape[0], min(batch_size, zt.shape[0]), gen, per_step=2 * (critic_steps + 1))
        history = train(step, sampler, steps, progress=progress, desc="MINE")
        self.history["perturbation_bound"] += [h["perturbation_bound"] for h in history]
        self.eval()
        return self

    @torch.no_grad()
    def transform(self, z: np.ndarray) -> np.ndarray:
        """Apply :math:`\\phi` to latents.

        Parameters
        ----------
        z : numpy.ndarray
            ``(n, channels, H, W)`` latents.

        Returns
        -------
        numpy.ndarray
            :math:`\\phi(z)`, same shape.
        """
        zt = torch.as_tensor(np.asarray(z, dtype=np.float32))
        if zt.ndim != 4 or tuple(zt.shape[1:]) != self.latent_shape:
            raise ValueError(f"z must have shape (n, {', '.join(map(str, self.latent_shape))}), got {tuple(zt.shape)}")
        self.eval()
        dev = next(self.parameters()).device
        return torch.cat([self.phi(zt[i : i + 512].to(dev)).cpu() for i in range(0, zt.shape[0], 512)]).numpy()

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Save settings and weights atomically.

        Parameters
        ----------
        path : path-like
            Target file.

        Returns
        -------
        pathlib.Path
        """
        config = {
            "latent_shape": tuple(self.latent_shape),
            "n_classes": self.n_classes,
            "lam": self.lam,
            "hidden": self.hidden,
        }
        return save_model(self, path, config)

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "auto") -> MINEDisentangler:
        """Load a disentangler written by :meth:`save`.

        Parameters
        ----------
        path : path-like
            File written by :meth:`save`.
        device : str
            Device.

        Returns
        -------
        MINEDisentangler
        """
        model, _ = load_model(cls, path, device)
        return model.eval()


@dataclass(frozen=True)
class MIEstimate(BaseTestResult):
    """Held-out Donsker-Varadhan estimate of :math:`I(Z; A)` from a freshly trained critic.

    Attributes
    ----------
    statistic : float
        The DV lower bound on the held-out half, in nats.
    pvalue : float
        Permutation p-value of the held-out bound against shuffled labels (small: dependence).
    upper : float
        :math:`H(A)` in nats, the largest value the information can take.
    curve : tuple of float
        Training-batch bounds, for the plot.
    null : tuple of float
        Held-out bounds with permuted labels.
    """

    statistic: float
    pvalue: float
    upper: float
    curve: tuple = field(repr=False)
    null: tuple = field(repr=False)

    def summary(self) -> pd.DataFrame:
        """One-row table: bound (nats), H(A), p-value."""
        return pd.DataFrame(
            {"MI lower bound (nats)": [self.statistic], "H(A) (nats)": [self.upper], "permutation p": [self.pvalue]}
        )

    def plot(self, ax=None):
        """Training curve of the bound with the held-out value and H(A).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        ax.plot(np.arange(len(self.curve)), self.curve, lw=1, alpha=0.7, label="training batches")
        ax.axhline(self.statistic, color="k", ls="--", lw=1, label="held out")
        ax.axhline(self.upper, color="0.5", ls=":", lw=1, label="H(A)")
        ax.set_xlabel("critic step")
        ax.set_ylabel("DV bound (nats)")
        ax.legend()
        return ax


def estimate_mi(
    z: np.ndarray,
    a: np.ndarray,
    n_classes: int,
    *,
    steps: int = 300,
    batch_size: int = 128,
    lr: float = 1e-3,
    hidden: int = 32,
    n_permutations: int = 19,
    device: str = "auto",
    seed: int = 0,
) -> MIEstimate:
    """Estimate :math:`I(Z; A)` with a fresh MINE critic trained on one half and evaluated on the other.

    Parameters
    ----------
    z : numpy.ndarray
        ``(n, channels, H, W)`` latents.
    a : numpy.ndarray
        ``(n,)`` labels.
    n_classes : int
        Number of attribute values.
    steps : int
        Critic updates.
    batch_size, lr, hidden : numbers
        Critic settings.
    n_permutations : int
        Held-out evaluations with permuted labels for the p-value (the critic is fixed, so this is a
        test of the held-out bound against label exchangeability).
    device : str
        Device.
    seed : int
        Seed of the split, the critic and the batches.

    Returns
    -------
    MIEstimate
    """
    zt, at = _check_latents(z, a, n_classes)
    n = zt.shape[0]
    if n < 20:
        raise ValueError(f"need at least 20 latents to estimate mutual information, got {n}")
    dev = get_device(device)
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(n, generator=gen)
    tr, te = perm[: n // 2], perm[n // 2 :]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        critic = Critic(zt.shape[1], n_classes, hidden).to(dev)
    opt = torch.optim.Adam(critic.parameters(), lr=lr)

    def step(draws: list[torch.Tensor]) -> dict[str, float]:
        idx, shuf = tr[draws[0]], tr[draws[1]]
        zb = zt[idx].to(dev)
        bound = dv_bound(critic(zb, at[idx].to(dev)), critic(zb, at[shuf].to(dev)))
        return {"bound": -optimizer_step(opt, -bound, 1.0)}

    critic.train()
    curve = [
        h["bound"]
        for h in train(
            step, random_batches(tr.shape[0], min(batch_size, tr.shape[0]), gen, per_step=2), steps, progress=False
        )
    ]
    critic.eval()
    with torch.no_grad():
        zte, ate = zt[te].to(dev), at[te].to(dev)
        # Marginal term: every test latent paired with every label value, weighted by P(a), is the
        # exact product-of-marginals expectation for a discrete A (less noisy than one shuffle).
        pa = torch.bincount(at, minlength=n_classes).float() / n
        t_all = torch.stack([critic(zte, torch.full_like(ate, k)) for k in range(n_classes)], dim=1)

        def bound_for(labels: torch.Tensor) -> float:
            joint = t_all.gather(1, labels[:, None])[:, 0].mean()
            marg = torch.logsumexp(t_all + torch.log(pa.to(dev).clamp_min(1e-12))[None], dim=(0, 1)) - np.log(
                t_all.shape[0]
            )
            return float(joint - marg)

        stat = bound_for(ate)
        null = [bound_for(ate[torch.randperm(ate.shape[0], generator=gen).to(dev)]) for _ in range(n_permutations)]
    p = pa[pa > 0]
    upper = float(-(p * p.log()).sum())
    pval = (1 + sum(v >= stat for v in null)) / (1 + n_permutations)
    return MIEstimate(statistic=stat, pvalue=float(pval), upper=upper, curve=tuple(curve), null=tuple(null))
