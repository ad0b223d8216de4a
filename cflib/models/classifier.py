"""One image classifier (and regressor) for the book's learned readers of images.

The pseudo-oracles of the effectiveness metric (Monteiro et al., ICLR 2023, Sec. 3.2, App. D.2.1:
:class:`cflib.models.oracles.CNNOracle`) and the classifiers audited for counterfactual invariance and
used as attribute predictors (Ma et al., Sec. 6.3, App. I: :class:`cflib.models.cnn_zoo.SmallCNN`)
are the same object: a network ``head(features(x))`` trained on images to read one target. This
module holds what they share: target kinds and their checks and losses, the supervised training step
(on :func:`cflib.models._train.train`), batched inference, predictions, scores, the penultimate
embedding, and saving. A subclass builds ``features`` and ``head`` and says how images enter
(:meth:`ImageClassifier._inputs`).

Target kinds: ``"binary"`` (one logit, 0/1 labels), ``"classification"`` (``n_classes`` logits,
integer labels), ``"regression"`` (a real value) and ``"circular"`` (a hue in ``[0, 1)``, read
through ``(cos, sin)``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ._train import load_model, optimizer_step, save_model

__all__ = ["TARGET_KINDS", "ImageClassifier", "check_target", "score_predictions"]

#: Targets an :class:`ImageClassifier` can read.
TARGET_KINDS = ("binary", "classification", "regression", "circular")


def _n_outputs(kind: str, n_classes: int | None) -> int:
    if kind not in TARGET_KINDS:
        raise ValueError(f"kind must be one of {TARGET_KINDS}, got {kind!r}")
    if kind == "classification" and (n_classes is None or n_classes < 2):
        raise ValueError("a classification model needs n_classes >= 2")
    return {"binary": 1, "classification": n_classes or 0, "regression": 1, "circular": 2}[kind]


def check_target(y: Any, n: int, kind: str, n_classes: int | None = None) -> np.ndarray:
    """Validate training targets: one per image, integer labels in range for classes, finite values otherwise.

    Parameters
    ----------
    y : array-like
        Targets, shape ``(n,)`` (or ``(n, 1)``).
    n : int
        Number of images.
    kind : {"binary", "classification", "regression", "circular"}
        Target kind.
    n_classes : int, optional
        Number of classes (``"classification"``).

    Returns
    -------
    numpy.ndarray
        ``int64`` labels (binary, classification) or ``float64`` values.

    Raises
    ------
    ValueError
        If the count, the labels or the values are wrong.
    """
    n_outputs = _n_outputs(kind, n_classes)  # checks kind, and n_classes for "classification"
    y = np.asarray(y).reshape(-1)
    if len(y) != n:
        raise ValueError(f"y has {len(y)} values for {n} images: give one target per image")
    if kind in ("binary", "classification"):
        k = 2 if kind == "binary" else int(n_outputs)  # n_outputs is n_classes for "classification"
        if y.dtype.kind == "b" or (y.dtype.kind == "f" and np.all(y == np.round(y))):
            y = y.astype(np.int64)
        if y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= k:
            raise ValueError(f"y must hold integer labels in 0..{k - 1}, got values in [{y.min()}, {y.max()}]")
        return y.astype(np.int64)
    y = y.astype(np.float64)
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinite values")
    return y


def score_predictions(pred: np.ndarray, target: np.ndarray, kind: str) -> np.ndarray:
    """Per-image score: correctness (0/1) for labels, absolute (circular for hues) error otherwise.

    Parameters
    ----------
    pred, target : numpy.ndarray, shape (n,)
        Predictions and targets.
    kind : {"binary", "classification", "regression", "circular"}
        Target kind.

    Returns
    -------
    numpy.ndarray of float, shape (n,)
    """
    pred = np.asarray(pred)
    target = np.asarray(target).reshape(-1)
    if pred.shape != target.shape:
        raise ValueError(f"target has shape {target.shape} but there are {pred.shape} predictions")
    if kind in ("binary", "classification"):
        return (pred == target.astype(np.int64)).astype(np.float64)
    diff = np.abs(pred.astype(np.float64) - target.astype(np.float64))
    if kind == "circular":
        diff = np.mod(diff, 1.0)
        diff = np.minimum(diff, 1.0 - diff)
    return diff


class ImageClassifier(nn.Module):
    """Base of the project's image classifiers and regressors: ``head(features(x))`` reading one target.

    A subclass builds ``self.features`` and ``self.head`` (its last layer outputs
    ``n_outputs(kind)`` values), sets ``self.kind``, ``self.n_classes`` and ``self._config`` (its
    constructor arguments, for :meth:`save`), and implements :meth:`_inputs`.

    Attributes
    ----------
    history_ : list of dict
        Training losses (see :func:`cflib.models._train.train`).
    """

    #: Images per forward pass at inference.
    inference_batch = 512

    features: nn.Module  # built by the subclass: images -> features
    head: nn.Module  # built by the subclass: features -> outputs

    def __init__(self, kind: str, n_classes: int | None) -> None:
        super().__init__()
        self.n_outputs = _n_outputs(kind, n_classes)
        self.kind = kind
        self.n_classes = None if n_classes is None else int(n_classes)
        self._config: dict[str, Any] = {}
        self.history_: list[dict[str, float]] = []

    @property
    def device(self) -> torch.device:
        """Device the weights live on."""
        return next(self.parameters()).device

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Raw outputs: logits, a value, or ``(cos, sin)``."""
        return self.head(self.features(x))

    def _inputs(self, x: Any) -> torch.Tensor:
        """Validate images and return the network's input tensor (on the CPU)."""
        raise NotImplementedError

    def _targets(self, y: Any, n: int, device: torch.device) -> torch.Tensor:
        """Training targets in the form the loss takes."""
        y = check_target(y, n, self.kind, self.n_classes)
        if self.kind == "classification":
            return torch.as_tensor(y, dtype=torch.long, device=device)
        if self.kind == "binary":
            return torch.as_tensor(y, dtype=torch.long, device=device).float()
        if self.kind == "circular":
            a = 2 * np.pi * y
            return torch.as_tensor(np.stack([np.cos(a), np.sin(a)], 1), dtype=torch.float32, device=device)
        return torch.as_tensor(y, dtype=torch.float32, device=device)[:, None]

    def _loss(self, out: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if self.kind == "classification":
            return F.cross_entropy(out, target)
        if self.kind == "binary":
            return F.binary_cross_entropy_with_logits(out[:, 0], target)
        return F.mse_loss(out, target)

    def _training_step(
        self,
        x: torch.Tensor,
        target: torch.Tensor,
        optimizer: torch.optim.Optimizer,
        augment: Callable[[torch.Tensor], torch.Tensor] | None = None,
    ) -> Callable[[torch.Tensor], dict[str, float]]:
        """The step of :func:`cflib.models._train.train`: one optimizer step on the rows of a batch."""
        dev = self.device

        def step(b: torch.Tensor) -> dict[str, float]:
            xb = x[b] if augment is None else augment(x[b])
            return {"loss": optimizer_step(optimizer, self._loss(self(xb.to(dev)), target[b].to(dev)))}

        return step

    @torch.no_grad()
    def _outputs(self, x: Any, net: nn.Module | None = None) -> torch.Tensor:
        self.eval()
        xt = self._inputs(x)
        net = self if net is None else net
        dev, bs = self.device, self.inference_batch
        return torch.cat([net(xt[i : i + bs].to(dev)).cpu() for i in range(0, xt.shape[0], bs)])

    def predict_proba(self, x: Any) -> np.ndarray:
        """Class probabilities (binary and classification models).

        Parameters
        ----------
        x : array or tensor
            Images (see the subclass).

        Returns
        -------
        numpy.ndarray
            ``(n,)`` probability of class 1 (binary) or ``(n, k)`` class probabilities.
        """
        if self.kind not in ("binary", "classification"):
            raise ValueError(
                f"predict_proba needs a binary or classification model; this one reads a {self.kind} target"
            )
        out = self._outputs(x)
        return torch.sigmoid(out[:, 0]).numpy() if self.kind == "binary" else torch.softmax(out, dim=1).numpy()

    def predict(self, x: Any) -> np.ndarray:
        """Read the target from images: labels (0/1 or the arg-max class), values, or hues in ``[0, 1)``.

        Parameters
        ----------
        x : array or tensor
            Images (see the subclass).

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        if self.kind == "binary":
            return (self.predict_proba(x) >= 0.5).astype(np.int64)
        out = self._outputs(x).numpy()
        if self.kind == "classification":
            return out.argmax(1)
        if self.kind == "circular":
            return np.mod(np.arctan2(out[:, 1], out[:, 0]) / (2 * np.pi), 1.0)
        return out[:, 0].astype(np.float64)

    def score(self, x: Any, target: Any) -> np.ndarray:
        """Per-image correctness (labels) or absolute error (values, hues).

        Parameters
        ----------
        x : array or tensor
            Images.
        target : array, shape (n,)
            What the images should show.

        Returns
        -------
        numpy.ndarray, shape (n,)
        """
        return score_predictions(self.predict(x), target, self.kind)

    def embed(self, x: Any) -> np.ndarray:
        """Penultimate-layer features (e.g. for an in-domain Fréchet distance).

        Parameters
        ----------
        x : array or tensor
            Images.

        Returns
        -------
        numpy.ndarray
            ``(n, d)`` features: the input of the head's last layer.
        """
        trunk = (
            nn.Sequential(self.features, *list(self.head)[:-1])
            if isinstance(self.head, nn.Sequential)
            else self.features
        )
        return self._outputs(x, trunk).numpy()

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write constructor arguments, weights and training history (atomic).

        Parameters
        ----------
        path : path-like
            Target file.

        Returns
        -------
        pathlib.Path
        """
        return save_model(self, path, self._config, {"history": self.history_})

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "auto") -> ImageClassifier:
        """Load a model written by :meth:`save`.

        Parameters
        ----------
        path : path-like
            File written by :meth:`save`.
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.

        Returns
        -------
        ImageClassifier
            The model (of the calling class), in evaluation mode.
        """
        model, extra = load_model(cls, path, device)
        model.history_ = list(extra.get("history", []))
        return model.eval()
