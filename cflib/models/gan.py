"""Conditional GAN counterfactual model with a composition constraint (Monteiro et al., ICLR 2023, Sec. 3.4, eqs. 6-7; App. D.2.2).

The generator *is* the counterfactual function, ``x* = G(x, pa, pa*)``: an image encoder reads
``x``, the code is concatenated with ``pa`` and ``pa*`` and decoded (tanh output). Abduction is a
deterministic encoding (a delta posterior). Training matches the distribution of counterfactuals
to an *interventional* target distribution in which the parents are independent (built by a
simulated intervention, so the GAN needs full support), with a critic conditioned on the
counterfactual parents ``pa*`` (the official code's choice; the printed eq. 6 conditions on ``pa``,
a typo), the non-saturating generator loss and the composition penalty of eq. 7,

    R(G) = E || x - G(x, pa, pa) ||_2      (non-squared L2 on the [-1, 1] scale, weight 1).

Options that make the GAN learn the conditioning in minutes on a CPU (the benchmark chapter uses them;
the defaults are the paper's): a spectrally normalised projection critic (``critic="projection"``,
Miyato & Koyama 2018), the hinge loss (``fit(loss="hinge")``), an auxiliary head that reads the
parents back from the critic's features and trains the generator to make it read ``pa*``
(``fit(aux_weight=...)``, AC-GAN, Odena et al. 2017), and a moving average of the generator's weights
(``fit(ema=...)``).

API (images ``(n, C, H, W)`` in ``[0, 1]``, ``pa`` float ``(n, k)``)::

    gan = ConditionalGAN(image_shape=(3, 16, 16), parent_dim=12, composition_weight=1.0)
    gan.fit(x, pa, epochs=20, batch_size=128, lr=2e-4, device="auto", seed=0,
            source_indices=None, target_indices=si_idx, parent_groups=[[0..9], [10, 11]])
    u = gan.abduct(x, pa)              # deterministic code: concat(encoder(x), pa)
    x_cf = gan.decode(u, pa_star)      # = gan.counterfactual(x, pa, pa_star)
    gan.save("gan.pt"); ConditionalGAN.load("gan.pt")
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from cflib.runtime import get_device

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

__all__ = ["ConditionalGAN"]

_CHUNK = 2048


def _spectral(module: nn.Module) -> nn.Module:
    """Spectral normalisation of every convolution and dense layer of ``module`` (in place)."""
    for name, child in list(module.named_children()):
        if isinstance(child, (nn.Conv2d, nn.Linear)):
            setattr(module, name, nn.utils.parametrizations.spectral_norm(child))
        else:
            _spectral(child)
    if isinstance(module, (nn.Conv2d, nn.Linear)):
        return nn.utils.parametrizations.spectral_norm(module)
    return module


def _parent_groups(parent_groups: Sequence[Sequence[int]] | None, parent_dim: int) -> list[list[int]]:
    """The columns of ``pa`` per parent (each column its own group by default), refused unless they partition ``0..parent_dim - 1``."""
    groups = [[c] for c in range(parent_dim)] if parent_groups is None else [list(map(int, g)) for g in parent_groups]
    cols = sorted(c for g in groups for c in g)
    if cols != list(range(parent_dim)):
        raise ValueError(f"parent_groups must partition the columns 0..{parent_dim - 1} of pa, got {parent_groups!r}")
    return groups


@dataclass(eq=False)
class _FitState:
    """What the stages of :meth:`ConditionalGAN.fit` share: the data on the device, the optimisers, the draws of ``pa*``."""

    x11: torch.Tensor  # training images on the [-1, 1] scale
    pat: torch.Tensor  # their encoded parents
    tgt: torch.Tensor  # rows of the target (interventional) distribution
    groups: list[list[int]]  # columns of pa per parent
    member: torch.Tensor  # (groups, parent_dim) 0/1 membership of the columns
    dev: torch.device
    gen_params: list[nn.Parameter]
    opt_g: torch.optim.Optimizer
    opt_d: torch.optim.Optimizer
    averaged: list[torch.Tensor] | None  # the generator's moving average (ema > 0)
    draw: torch.Generator  # the draws of pa* and of the real target rows
    loss: str
    ema: float
    aux_weight: float
    done: int = 0  # steps averaged so far


class ConditionalGAN(nn.Module):
    """Deterministic counterfactual generator trained adversarially with a composition penalty.

    Parameters
    ----------
    image_shape : tuple of int
        ``(C, H, W)``.
    parent_dim : int
        Width of the encoded parent vector.
    composition_weight : float
        Weight λ of the composition penalty (eq. 7; the official code uses 1).
    width, hidden : int
        Convolution channels and dense width.
    n_down : int, optional
        Stride-2 stages of encoder/decoder/critic.
    seed : int, optional
        Seed of the weight initialisation.
    critic : {"concat", "projection"}
        ``"concat"``: the parents are broadcast as extra input channels of the critic (App. D.2.2, the
        default). ``"projection"``: a spectrally normalised projection critic, which learns the
        conditioning much faster at small scale (the benchmark chapter's choice).
    """

    #: Image-cycle L1 per step of :func:`cflib.models.image_mechanisms.finetune_encoder` (set only by it and by
    #: :meth:`load`; saved with the model).
    finetune_history_: list[float]

    def __init__(
        self,
        image_shape: Sequence[int],
        parent_dim: int,
        composition_weight: float = 1.0,
        width: int = 32,
        hidden: int = 128,
        n_down: int | None = None,
        seed: int | None = None,
        critic: str = "concat",
    ) -> None:
        super().__init__()
        if len(tuple(image_shape)) != 3:
            raise ValueError(f"image_shape must be (C, H, W), got {image_shape!r}")
        if composition_weight < 0:
            raise ValueError(f"composition_weight must be non-negative, got {composition_weight!r}")
        if critic not in ("concat", "projection"):
            raise ValueError(f"critic must be 'concat' or 'projection', got {critic!r}")
        self.critic_kind = critic
        self.image_shape = tuple(int(s) for s in image_shape)
        self.parent_dim = check_positive_int(parent_dim, "parent_dim")
        self.composition_weight = float(composition_weight)
        self.hidden = int(hidden)
        self._config = {
            "image_shape": list(self.image_shape),
            "parent_dim": self.parent_dim,
            "composition_weight": self.composition_weight,
            "width": width,
            "hidden": hidden,
            "n_down": n_down,
            "critic": critic,
        }
        k = self.parent_dim
        with seeded(seed):
            self.encoder = ConvEncoder(self.image_shape, width=width, out_dim=hidden, n_down=n_down)
            self.mix = nn.Sequential(nn.Linear(hidden + 2 * k, hidden), nn.LeakyReLU(0.2))
            self.decoder = ConvDecoder(self.image_shape, in_dim=hidden, width=width, n_down=n_down)
            if critic == "concat":
                # Critic: parents broadcast as extra image channels (App. D.2.2).
                self.critic_features: nn.Module = ConvEncoder(
                    self.image_shape, width=width, out_dim=hidden, n_down=n_down, extra_channels=k
                )
                self.critic_head: nn.Module = nn.Sequential(
                    nn.Linear(hidden, hidden), nn.LeakyReLU(0.2), nn.Linear(hidden, 1)
                )
            else:
                # Projection critic (Miyato & Koyama 2018) with spectral normalisation on every layer:
                # D(x, pa) = psi(phi(x)) + <W pa, phi(x)>, so the parents enter as an inner product
                # with the image features, a much stronger conditional signal than extra channels.
                self.critic_features = _spectral(
                    ConvEncoder(self.image_shape, width=width, out_dim=hidden, n_down=n_down)
                )
                self.critic_head = _spectral(nn.Linear(hidden, 1))
                self.critic_embed = _spectral(nn.Linear(k, hidden, bias=False))
                # Auxiliary head (AC-GAN, Odena et al. 2017): reads the parents back from the critic's
                # features; used by fit(aux_weight > 0).
                self.critic_aux = nn.Linear(hidden, k)
        self.parent_range: ParentRange | None = None
        self.history_: list[dict[str, float]] = []

    @property
    def device(self) -> torch.device:
        """Device the weights live on."""
        return next(self.parameters()).device

    @property
    def code_dim(self) -> int:
        """Size of the abducted code ``concat(encoder(x), pa)``."""
        return self.hidden + self.parent_dim

    def _parents(self, pa: Any, n: int, name: str, check_range: bool) -> torch.Tensor:
        t = check_parents(pa, n, self.parent_dim, name, self.device)
        if check_range and self.parent_range is not None:
            self.parent_range.check(t, name)
        return t

    def generate(self, x: torch.Tensor, pa: torch.Tensor, pa_star: torch.Tensor) -> torch.Tensor:
        """Generator ``G(x, pa, pa_star)`` (a training hook).

        Parameters
        ----------
        x : torch.Tensor
            Images ``(n, C, H, W)`` in [0, 1] on the model's device.
        pa : torch.Tensor
            Observed parents ``(n, parent_dim)``.
        pa_star : torch.Tensor
            Intervened parents ``(n, parent_dim)``.

        Returns
        -------
        torch.Tensor
            Generated images on the [-1, 1] scale.
        """
        u = torch.cat([self.encoder(2 * x - 1), pa], 1)
        return self._decode_code(u, pa_star)

    def _decode_code(self, u: torch.Tensor, pa_star: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.decoder(self.mix(torch.cat([u, pa_star], 1))))

    def _critic(self, x11: torch.Tensor, pa: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Critic score and, for the projection critic, the auxiliary head's parent predictions."""
        if self.critic_kind == "projection":
            h = self.critic_features(x11)
            return self.critic_head(h).squeeze(1) + (self.critic_embed(pa) * h).sum(1), self.critic_aux(h)
        maps = pa[:, :, None, None].expand(-1, -1, *x11.shape[2:])
        return self.critic_head(self.critic_features(torch.cat([x11, maps], 1))).squeeze(1), None

    def _critic_parameters(self) -> list[nn.Parameter]:
        mods = [self.critic_features, self.critic_head] + (
            [self.critic_embed, self.critic_aux] if self.critic_kind == "projection" else []
        )
        return [p for m in mods for p in m.parameters()]

    # -- the counterfactual API -----------------------------------------------------------------------
    @torch.no_grad()
    def abduct(self, x: Any, pa: Any, eps: Any | None = None, *, check_range: bool = False) -> Any:
        """Deterministic abduction: the code ``concat(encoder(x), pa)``.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Observed images in ``[0, 1]``.
        pa : array or tensor, shape (n, k)
            Encoded parents.
        eps : None
            Accepted for API symmetry with the VAEs; the GAN has no abduction noise.
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, code_dim)
        """
        self.eval()
        xt = check_images(x, self.image_shape, "x", self.device)
        pat = self._parents(pa, len(xt), "pa", check_range)
        out = [
            torch.cat([self.encoder(2 * xt[s : s + _CHUNK] - 1), pat[s : s + _CHUNK]], 1)
            for s in range(0, len(xt), _CHUNK)
        ]
        return like_input(torch.cat(out), x)

    @torch.no_grad()
    def decode(self, z: Any, pa: Any, *, check_range: bool = True) -> Any:
        """Prediction: the counterfactual image for an abducted code and the parents ``pa`` (= ``pa*``).

        Parameters
        ----------
        z : array or tensor, shape (n, code_dim)
            Codes from :meth:`abduct`.
        pa : array or tensor, shape (n, k)
            Counterfactual encoded parents.
        check_range : bool
            Refuse parents outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
            Images in ``[0, 1]``.
        """
        self.eval()
        zt = to_tensor(z, "z", self.device)
        if zt.ndim != 2 or zt.shape[1] != self.code_dim:
            raise ValueError(f"z must have shape (n, {self.code_dim}) as returned by abduct, got {tuple(zt.shape)}")
        pat = self._parents(pa, len(zt), "pa", check_range)
        out = [(self._decode_code(zt[s : s + _CHUNK], pat[s : s + _CHUNK]) + 1) / 2 for s in range(0, len(zt), _CHUNK)]
        return like_input(torch.cat(out), z)

    @torch.no_grad()
    def counterfactual(self, x: Any, pa: Any, pa_star: Any, eps: Any | None = None, *, check_range: bool = True) -> Any:
        """``x* = G(x, pa, pa*)`` (deterministic; ``eps`` is ignored).

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Observed images.
        pa, pa_star : array or tensor, shape (n, k)
            Observed and counterfactual encoded parents.
        eps : None
            Accepted for API symmetry.
        check_range : bool
            Refuse ``pa_star`` outside the training range.

        Returns
        -------
        array or tensor, shape (n, C, H, W)
        """
        xt = check_images(x, self.image_shape, "x", self.device)
        pst = self._parents(pa_star, len(xt), "pa_star", check_range)
        return like_input(self.decode(self.abduct(xt, pa), pst, check_range=False), x)

    # -- training -------------------------------------------------------------------------------------
    def fit(
        self,
        x: Any,
        pa: Any,
        epochs: int = 20,
        batch_size: int = 128,
        lr: float = 2e-4,
        *,
        weight_decay: float = 1e-4,
        betas: tuple[float, float] = (0.0, 0.9),
        device: str = "auto",
        seed: int = 0,
        source_indices: Any | None = None,
        target_indices: Any | None = None,
        parent_groups: Sequence[Sequence[int]] | None = None,
        steps: int | None = None,
        show_progress: bool | None = None,
        loss: str = "nonsaturating",
        ema: float = 0.0,
        aux_weight: float = 0.0,
    ) -> ConditionalGAN:
        """Alternate one critic and one generator step (adversarial loss + composition penalty).

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Training images in ``[0, 1]``.
        pa : array or tensor, shape (n, k)
            Encoded parents.
        epochs, batch_size : int
            Passes over the source rows and minibatch size.
        lr, weight_decay : float
            AdamW settings (paper: lr 1e-4, betas (0, 0.9)).
        betas : tuple of float
            AdamW betas.
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed : int
            Seed of shuffling and of the counterfactual-parent draws.
        source_indices : array of int, optional
            Rows of the source distribution (the observed joint, or a simulated intervention).
        target_indices : array of int, optional
            Rows of the target interventional distribution with independent parents (a simulated
            intervention of the data; default: all rows, only right when the parents are already independent).
        parent_groups : sequence of sequences of int, optional
            Columns of ``pa`` that form one parent (e.g. the ten one-hot digit columns). Each group is
            re-drawn from a random target row independently with probability 1/2, so the generator sees
            partial, full and null interventions. ``None``: every column is one group of its own.
        steps : int, optional
            Exact number of iterations instead of ``epochs``.
        show_progress : bool, optional
            Force the progress bar on or off.
        loss : {"nonsaturating", "hinge"}
            Adversarial loss: the non-saturating logistic loss (the paper's) or the hinge loss that
            usually goes with a spectrally normalised critic.
        ema : float
            Decay of an exponential moving average of the generator's weights (encoder, mixer,
            decoder), copied into the model at the end of training; 0 keeps the last iterate. The decay
            is warmed up as ``min(ema, (1 + k) / (10 + k))`` at step ``k``, so a short run is not
            dominated by the initial weights.
        aux_weight : float
            Weight of the auxiliary-classifier loss (projection critic only): the critic learns to read
            the parents of real images (cross-entropy for a multi-column group such as a one-hot digit,
            squared error for a single column) and the generator is trained to make it read ``pa*``
            from the counterfactual. 0 turns it off.

        Returns
        -------
        ConditionalGAN
            ``self``; ``history_`` holds critic loss, generator loss and composition distance per epoch.
        """
        dev = get_device(device)
        self.to(dev)
        xt = check_images(x, self.image_shape, "x")
        if xt.min() < 0 or xt.max() > 1:
            raise ValueError("x must hold intensities in [0, 1]")
        pat = check_parents(pa, len(xt), self.parent_dim, "pa")
        src = check_indices(source_indices, len(xt), "source_indices")
        tgt = check_indices(target_indices, len(xt), "target_indices")
        tgt = torch.arange(len(xt)) if tgt is None else tgt
        batch_size = check_positive_int(batch_size, "batch_size")
        epochs = check_positive_int(epochs, "epochs")
        self._check_fit_options(loss, ema, aux_weight)
        groups = _parent_groups(parent_groups, self.parent_dim)
        st = self._fit_state(
            xt,
            pat,
            src,
            tgt,
            groups,
            dev,
            lr=lr,
            betas=betas,
            weight_decay=weight_decay,
            seed=seed,
            loss=loss,
            ema=ema,
            aux_weight=aux_weight,
        )
        self.train()
        n_src = len(xt)
        self.history_ += run_steps(
            lambda b: self._fit_step(st, b),
            n_src,
            batch_size,
            epochs,
            steps,
            seed,
            src,
            "ConditionalGAN",
            show_progress,
        )
        self._keep_average(st)
        self.eval()
        return self

    # -- the stages of fit ----------------------------------------------------------------------------
    def _check_fit_options(self, loss: str, ema: float, aux_weight: float) -> None:
        """Refuse an unknown loss, an EMA decay outside [0, 1) and an auxiliary weight the critic cannot use."""
        if loss not in ("nonsaturating", "hinge"):
            raise ValueError(f"loss must be 'nonsaturating' or 'hinge', got {loss!r}")
        if not 0.0 <= ema < 1.0:
            raise ValueError(f"ema must be a decay in [0, 1), got {ema!r}")
        if aux_weight < 0 or (aux_weight > 0 and self.critic_kind != "projection"):
            raise ValueError(
                f"aux_weight must be non-negative, and positive only with critic='projection', got {aux_weight!r}"
            )

    def _fit_state(
        self,
        xt: torch.Tensor,
        pat: torch.Tensor,
        src: torch.Tensor | None,
        tgt: torch.Tensor,
        groups: list[list[int]],
        dev: torch.device,
        *,
        lr: float,
        betas: tuple[float, float],
        weight_decay: float,
        seed: int,
        loss: str,
        ema: float,
        aux_weight: float,
    ) -> _FitState:
        """The training range of the parents, the data on the device, the optimisers and the draws of ``pa*``."""
        member = torch.zeros(len(groups), self.parent_dim)
        for gi, g in enumerate(groups):
            member[gi, g] = 1.0
        member = member.to(dev)
        self.parent_range = ParentRange.from_data(torch.cat([pat if src is None else pat[src], pat[tgt]]))
        x11, pat = (2 * xt - 1).to(dev), pat.to(dev)
        tgt = tgt.to(dev)
        gen_params = [*self.encoder.parameters(), *self.mix.parameters(), *self.decoder.parameters()]
        crit_params = self._critic_parameters()
        opt_g = torch.optim.AdamW(gen_params, lr=lr, betas=betas, weight_decay=weight_decay)
        opt_d = torch.optim.AdamW(crit_params, lr=lr, betas=betas, weight_decay=weight_decay)
        averaged = [p.detach().clone() for p in gen_params] if ema > 0 else None
        draw = torch.Generator(device="cpu").manual_seed(int(seed) + 1)
        return _FitState(
            x11=x11,
            pat=pat,
            tgt=tgt,
            groups=groups,
            member=member,
            dev=dev,
            gen_params=gen_params,
            opt_g=opt_g,
            opt_d=opt_d,
            averaged=averaged,
            draw=draw,
            loss=loss,
            ema=ema,
            aux_weight=aux_weight,
        )

    def _fit_step(self, st: _FitState, b: torch.Tensor) -> dict[str, float]:
        """One critic step, one generator step and the moving average, on the source rows ``b``."""
        xb, pb = st.x11[b], st.pat[b]
        ps, treal = self._draw_parents(st, len(b), pb)
        # One generator pass serves both steps: the critic's update leaves the generator unchanged, so its
        # fakes are the ones the generator step would draw again (the generator has no random or running state).
        fake = self.generate((xb + 1) / 2, pb, ps)
        loss_d = self._critic_step(st, fake.detach(), ps, treal)
        adv, comp = self._generator_step(st, xb, pb, fake, ps)
        self._average_step(st)
        return {
            "critic": float(loss_d.detach()),
            "generator": float(adv.detach()),
            "composition_l2": float(comp.detach()),
        }

    def _draw_parents(self, st: _FitState, n: int, pb: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Counterfactual parents ``pa*`` (each parent group from a random target row with prob. 1/2) and the real target rows."""
        dev = st.dev
        # Counterfactual parents: each parent group taken from a random target row with prob. 1/2.
        rows = st.tgt[torch.randint(len(st.tgt), (n,), generator=st.draw).to(dev)]
        swap = (torch.rand(n, len(st.groups), generator=st.draw).to(dev) < 0.5).float() @ st.member
        ps = swap * st.pat[rows] + (1 - swap) * pb
        treal = st.tgt[torch.randint(len(st.tgt), (n,), generator=st.draw).to(dev)]
        return ps, treal

    def _aux_loss(self, st: _FitState, pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """The auxiliary head's loss: cross-entropy for a multi-column parent group, squared error for one column."""
        parts = [
            F.cross_entropy(pred[:, g], target[:, g].argmax(1))
            if len(g) > 1
            else F.mse_loss(pred[:, g[0]], target[:, g[0]])
            for g in st.groups
        ]
        return sum(parts[1:], start=parts[0]) / len(parts)  # the same sum as sum(parts), typed as a tensor

    def _critic_step(self, st: _FitState, fake: torch.Tensor, ps: torch.Tensor, treal: torch.Tensor) -> torch.Tensor:
        """One step of the critic: real target images against the generator's counterfactuals ``fake``; returns its loss."""
        d_real, a_real = self._critic(st.x11[treal], st.pat[treal])
        d_fake, _ = self._critic(fake, ps)
        if st.loss == "hinge":
            loss_d = F.relu(1 - d_real).mean() + F.relu(1 + d_fake).mean()
        else:
            loss_d = F.softplus(-d_real).mean() + F.softplus(d_fake).mean()
        if st.aux_weight > 0:
            assert a_real is not None  # fit() allows aux_weight > 0 only with the projection critic, which has the head
            loss_d = loss_d + st.aux_weight * self._aux_loss(st, a_real, st.pat[treal])
        st.opt_d.zero_grad(set_to_none=True)
        loss_d.backward()
        st.opt_d.step()
        return loss_d

    def _generator_step(
        self, st: _FitState, xb: torch.Tensor, pb: torch.Tensor, fake: torch.Tensor, ps: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One step of the generator on its counterfactuals ``fake`` of ``xb`` under ``ps``: adversarial loss plus the
        composition penalty (eq. 7); returns both terms."""
        # The critic's weights get no gradient here: the critic step sets its gradients anew before it uses them,
        # so computing them in this backward pass would be work thrown away.
        critic = self._critic_parameters()
        for p in critic:
            p.requires_grad_(False)
        try:
            d_gen, a_gen = self._critic(fake, ps)
        finally:
            for p in critic:
                p.requires_grad_(True)
        adv = -d_gen.mean() if st.loss == "hinge" else F.softplus(-d_gen).mean()
        if st.aux_weight > 0:
            assert a_gen is not None  # fit() allows aux_weight > 0 only with the projection critic, which has the head
            adv = adv + st.aux_weight * self._aux_loss(st, a_gen, ps)
        null = self.generate((xb + 1) / 2, pb, pb)
        comp = (xb - null).flatten(1).norm(dim=1).mean()
        loss_g = adv + self.composition_weight * comp
        st.opt_g.zero_grad(set_to_none=True)
        loss_g.backward()
        st.opt_g.step()
        return adv, comp

    def _average_step(self, st: _FitState) -> None:
        """Move the exponential moving average of the generator's weights (when ``ema > 0``)."""
        if st.averaged is not None:
            st.done += 1
            decay = min(st.ema, (1 + st.done) / (10 + st.done))  # warm-up: early averages forget the initialisation
            with torch.no_grad():
                for a, p in zip(st.averaged, st.gen_params, strict=True):
                    a.lerp_(p.detach(), 1 - decay)

    def _keep_average(self, st: _FitState) -> None:
        """Copy the moving average into the generator at the end of training (when ``ema > 0``)."""
        if st.averaged is not None:
            with torch.no_grad():
                for p, a in zip(st.gen_params, st.averaged, strict=True):
                    p.copy_(a)

    # -- persistence ------------------------------------------------------------------------------------
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
    def load(cls, path: str | os.PathLike[str], device: str = "cpu") -> ConditionalGAN:
        """Load a model written by :meth:`save` onto ``device``."""
        model, extra = load_model(cls, path, device)
        model.parent_range = ParentRange.from_state(extra.get("parent_range"))
        model.history_ = list(extra.get("history", []))
        if extra.get("finetune_history") is not None:
            model.finetune_history_ = extra["finetune_history"]
        return model
