"""The benchmark's convergence criterion: has a trained image model stopped learning? (issue 38, item 4).

Under-training is not failure. A comparison of models that are still learning says nothing about the paper's
trained models, so each trained image model gets one criterion read from its own training history: the share of
its total loss decrease made in the last 10 % of its epochs (:data:`LAST_FRACTION`). At or below 1 %
(:data:`CONVERGED_SHARE`) the model counts as converged; above it, or when the loss did not fall at all, it is still
learning. The loss is the model's training loss (the negative ELBO of the VAEs and the HVAE); for the GAN, whose
adversarial losses do not settle by design, its composition term (eq. 7). A fine-tuned model (``hvae_cf``,
``gan_ft``) is read on the training of the model it starts from.

:func:`guard` applies the criterion to one verdict part: a comparison of two trained models is undecided when
either has not converged (:func:`cflib.verdicts.not_converged`), whatever it read; a bar for one trained model
(accuracy at least 0.6, closer to the truth than the unchanged image) is undecided when it fails or is undecided
(more training would change that), and a bar an unconverged model already clears stands.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from ... import verdicts
from .config import MODEL_LABELS
from .parts import Part

#: The last fraction of a model's epochs the criterion reads.
LAST_FRACTION = 0.1
#: The largest share of the total loss decrease those epochs may make for the model to count as converged.
CONVERGED_SHARE = 0.01
#: The history entry the criterion reads, per model family (the GAN's adversarial losses do not settle).
_LOSS = {"gan": "composition_l2"}
#: A fine-tuned model is read on the training of the model it starts from.
_BASE = {"hvae_cf": "hvae", "gan_ft": "gan"}


@dataclass(frozen=True)
class Convergence:
    """One trained model's convergence criterion in one training seed.

    Attributes
    ----------
    model : str
        Model key.
    base : str
        The model whose training is read (itself, or the model a fine-tuned one starts from).
    loss : str
        The history entry read (``"loss"``, or ``"composition_l2"`` for a GAN).
    epochs : int
        Epochs of its training.
    last : int
        Epochs the criterion reads (the last :data:`LAST_FRACTION` of them, at least one).
    share : float
        Share of the loss decrease over the whole training made in those last epochs (``nan`` when the loss did not
        fall, or when there is no history).
    """

    model: str
    base: str
    loss: str
    epochs: int
    last: int
    share: float

    @property
    def converged(self) -> bool:
        """Whether the share is at most :data:`CONVERGED_SHARE` (a loss that did not fall has not converged)."""
        return bool(np.isfinite(self.share) and self.share <= CONVERGED_SHARE)

    def text(self, seed: Any) -> str:
        """The criterion's reading in words, for a verdict's rule."""
        what = "its composition term" if self.loss == "composition_l2" else "its loss"
        label = MODEL_LABELS.get(self.model, self.model)
        if self.base != self.model:
            label += f" (read on the {MODEL_LABELS.get(self.base, self.base)} it starts from)"
        if self.epochs < 2:
            return f"{label} trained {self.epochs} epoch (seed {seed}), too few to read a convergence from"
        if not np.isfinite(self.share):
            return f"{label}: {what} did not fall over its {self.epochs} epochs (seed {seed})"
        return (
            f"{label} made {100 * self.share:.1f} % of the decrease of {what} in its last {self.last} of "
            f"{self.epochs} epochs (seed {seed}), above {100 * CONVERGED_SHARE:g} %"
        )


def loss_share(losses: Sequence[float], fraction: float = LAST_FRACTION) -> tuple[float, int]:
    """Share of a loss's total decrease made in the last ``fraction`` of its epochs.

    Parameters
    ----------
    losses : sequence of float
        The per-epoch mean losses, in order.
    fraction : float
        The last fraction of the epochs read (at least one epoch).

    Returns
    -------
    share : float
        ``(loss[-1 - k] - loss[-1]) / (loss[0] - loss[-1])`` with ``k`` the epochs read; ``nan`` when the loss did not
        fall over the training or there are fewer than two epochs.
    k : int
        The epochs read: ``ceil(fraction * epochs)``, at least one and at most ``epochs - 1``.
    """
    arr = np.asarray(losses, float)
    if arr.ndim != 1:
        raise ValueError(f"losses must be one value per epoch, got shape {arr.shape}")
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must lie in (0, 1), got {fraction!r}")
    k = max(1, int(np.ceil(fraction * len(arr) - 1e-9)))  # at least the last `fraction` of the epochs
    if len(arr) < 2 or not np.all(np.isfinite(arr)) or arr[0] <= arr[-1]:
        return float("nan"), min(k, max(len(arr) - 1, 0))
    k = min(k, len(arr) - 1)
    return float((arr[-1 - k] - arr[-1]) / (arr[0] - arr[-1])), k


def training_convergence(mechanisms: Mapping[str, Any]) -> dict[str, Convergence]:
    """The convergence criterion of every trained image model of one benchmark run.

    Parameters
    ----------
    mechanisms : mapping
        Model key -> :class:`~cflib.models.image_mechanisms.DeepImageMechanism` (``BenchmarkResult.mechanisms``).

    Returns
    -------
    dict
        Model key -> :class:`Convergence`.
    """
    out = {}
    for mdl in mechanisms:
        base = _BASE.get(mdl, mdl)
        loss = _LOSS.get(base, "loss")
        source = mechanisms[base] if base in mechanisms else mechanisms[mdl]
        history = list(getattr(source.model, "history_", []) or [])
        share, last = loss_share([h[loss] for h in history]) if history else (float("nan"), 0)
        out[mdl] = Convergence(mdl, base if base in mechanisms else mdl, loss, len(history), last, share)
    return out


def convergence_table(runs: Mapping[Any, Any]) -> pd.DataFrame:
    """Per trained model and training seed, the share of its loss decrease made in its last 10 % of epochs.

    Parameters
    ----------
    runs : mapping
        Seed -> :class:`~cflib.experiments.benchmark.result.BenchmarkResult` (its ``mechanisms`` are read).

    Returns
    -------
    pandas.DataFrame
        One row per model (its label): the share in % per seed ("—" where the loss did not fall, or one epoch
        gives nothing to read), the epochs, and ``converged`` (in every seed, at most :data:`CONVERGED_SHARE`).
    """
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError("runs must map each training seed to its BenchmarkResult")
    convergence = {s: training_convergence(r.mechanisms) for s, r in runs.items()}
    rows = {}
    for mdl in next(iter(convergence.values())):
        row: dict[str, Any] = {
            f"seed {s}: last-10% share (%)": f"{100 * c[mdl].share:.2f}" if np.isfinite(c[mdl].share) else "—"
            for s, c in convergence.items()
        }
        row["epochs"] = next(iter(convergence.values()))[mdl].epochs
        row["converged"] = "yes" if all(c[mdl].converged for c in convergence.values()) else "no"
        rows[MODEL_LABELS.get(mdl, mdl)] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def unconverged(convergence: Mapping[Any, Mapping[str, Convergence]]) -> dict[str, str]:
    """The trained models that have not converged in some seed, with the criterion's reading (the worst seed).

    Parameters
    ----------
    convergence : mapping
        Seed -> :func:`training_convergence` of that seed's run.

    Returns
    -------
    dict
        Model key -> the reading in words (:meth:`Convergence.text`); models converged in every seed are absent.
    """
    out: dict[str, str] = {}
    worst: dict[str, float] = {}
    for s, per_model in convergence.items():
        for mdl, c in per_model.items():
            badness = np.inf if not np.isfinite(c.share) else c.share
            if not c.converged and badness > worst.get(mdl, -np.inf):
                worst[mdl], out[mdl] = badness, c.text(s)
    return out


def guard(part: Part, models: Sequence[str], trained: Sequence[str], still_learning: Mapping[str, str]) -> Part:
    """A verdict part, undecided when the trained models it reads have not converged (see the module's rule).

    Parameters
    ----------
    part : Part
        The part as its interval decided it.
    models : sequence of str
        The models it reads (trained models and references such as ``identity`` or ``true``).
    trained : sequence of str
        The trained models of the run (those with a convergence criterion).
    still_learning : mapping
        :func:`unconverged` of the run.

    Returns
    -------
    Part
        ``part`` unchanged, or with its decision through :func:`cflib.verdicts.not_converged` and ``criterion`` set.
    """
    reads = [m for m in dict.fromkeys(models) if m in trained]
    bad = [still_learning[m] for m in reads if m in still_learning]
    # a comparison of trained models moves whatever it read; a bar for one model only when it is not cleared
    moves = (verdicts.NOT_REPRODUCED, verdicts.UNDECIDED) + ((verdicts.REPRODUCED,) if len(reads) >= 2 else ())
    if not bad or part.decision.verdict not in moves:
        return part
    criterion = "; ".join(bad)
    return replace(part, decision=verdicts.not_converged(part.decision, criterion), criterion=criterion)
