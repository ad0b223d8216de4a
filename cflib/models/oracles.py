"""Pseudo-oracles: learned readers of an image's parents, for the effectiveness metric (Monteiro et al., ICLR 2023, Sec. 3.2, App. D.2.1; Table 4).

Effectiveness asks whether the intervened parent can be read back from the counterfactual
image. The "oracle" that reads it is itself a model: a small CNN (the paper's
``Conv(64,4,s2) -> Conv(64,4,s2) -> Dense(128) -> Dense(out)``, trained with random translations)
or a linear model on raw pixels (logistic / ridge regression, Table 4).

Three kinds of target: ``"classification"`` (integer classes; scored by correctness),
``"regression"`` (a real value; absolute error) and ``"circular"`` (a hue in ``[0, 1)``, predicted
through ``(cos, sin)``; circular absolute error).

API::

    oracle = CNNOracle(image_shape=(3, 16, 16), kind="classification", n_classes=10, seed=0)
    oracle.fit(x, y, epochs=10, batch_size=128, lr=1e-3, device="auto", seed=0, indices=None)
    oracle.predict(x)                 # labels / values
    oracle.score(x, target)           # per image: 1.0/0.0 correct, or absolute error
    LinearOracle(kind="circular").fit(x, hue).score(x, hue)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from cflib.runtime import get_device

from ._train import ConvEncoder, check_images, check_indices, check_positive_int, run_steps, seeded
from .classifier import ImageClassifier, check_target, score_predictions

__all__ = ["KINDS", "CNNOracle", "LinearOracle", "fit_oracles"]

#: Target kinds an oracle can read.
KINDS = ("classification", "regression", "circular")


def _check_kind(kind: str, n_classes: int | None) -> None:
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if kind == "classification" and (n_classes is None or n_classes < 2):
        raise ValueError("a classification oracle needs n_classes >= 2")


def _shift(x: torch.Tensor, max_shift: int, gen: torch.Generator) -> torch.Tensor:
    """Random translation by up to ``max_shift`` pixels with black fill (the paper's augmentation)."""
    if max_shift <= 0:
        return x
    n, _, h, w = x.shape
    pad = F.pad(x, (max_shift,) * 4)
    dx = torch.randint(0, 2 * max_shift + 1, (n,), generator=gen)
    dy = torch.randint(0, 2 * max_shift + 1, (n,), generator=gen)
    rows = (dy[:, None] + torch.arange(h)[None]).to(x.device)
    cols = (dx[:, None] + torch.arange(w)[None]).to(x.device)
    idx = torch.arange(n, device=x.device)[:, None, None, None]
    ch = torch.arange(x.shape[1], device=x.device)[None, :, None, None]
    return pad[idx, ch, rows[:, None, :, None], cols[:, None, None, :]]


class CNNOracle(ImageClassifier):
    """Convolutional pseudo-oracle (App. D.2.1), an :class:`ImageClassifier` on a :class:`ConvEncoder`.

    Parameters
    ----------
    image_shape : tuple of int
        ``(C, H, W)``.
    kind : {"classification", "regression", "circular"}
        Target kind.
    n_classes : int, optional
        Number of classes (classification only).
    width, hidden : int
        Convolution channels and dense width.
    seed : int, optional
        Seed of the weight initialisation.
    """

    inference_batch = 4096

    features: ConvEncoder  # its ``net`` holds the layers whose maps :mod:`cflib.models.predictors` reads

    def __init__(
        self,
        image_shape: Sequence[int],
        kind: str = "classification",
        n_classes: int | None = None,
        width: int = 32,
        hidden: int = 128,
        seed: int | None = None,
    ) -> None:
        _check_kind(kind, n_classes)
        super().__init__(kind, n_classes)
        self.image_shape = tuple(int(s) for s in image_shape)
        if len(self.image_shape) != 3:
            raise ValueError(f"image_shape must be (C, H, W), got {image_shape!r}")
        self._config = {
            "image_shape": list(self.image_shape),
            "kind": kind,
            "n_classes": self.n_classes,
            "width": width,
            "hidden": hidden,
        }
        with seeded(seed):
            self.features = ConvEncoder(self.image_shape, width=width, out_dim=hidden)
            self.head = nn.Linear(hidden, self.n_outputs)

    def _inputs(self, x: Any) -> torch.Tensor:
        """Images ``(n, C, H, W)`` as a float tensor, checked against ``image_shape``."""
        return check_images(x, self.image_shape, "x")

    def fit(
        self,
        x: Any,
        y: Any,
        epochs: int = 10,
        batch_size: int = 128,
        lr: float = 1e-3,
        *,
        weight_decay: float = 1e-4,
        max_shift: float = 0.1,
        device: str = "auto",
        seed: int = 0,
        indices: Any | None = None,
        steps: int | None = None,
        show_progress: bool | None = None,
    ) -> CNNOracle:
        """Train with AdamW and random translations.

        Parameters
        ----------
        x : array or tensor, shape (n, C, H, W)
            Images.
        y : array, shape (n,)
            Targets (class ids, values, or hues in ``[0, 1)``).
        epochs, batch_size : int
            Passes and minibatch size.
        lr, weight_decay : float
            AdamW settings.
        max_shift : float
            Largest translation as a fraction of the image side (paper: 0.1).
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed : int
            Seed of shuffling and augmentation.
        indices : array of int, optional
            Training rows with repeats (e.g. a simulated intervention).
        steps : int, optional
            Exact number of steps.
        show_progress : bool, optional
            Show a progress bar (``None``: unless run by :mod:`cflib.runner`).

        Returns
        -------
        CNNOracle
            ``self``.
        """
        dev = get_device(device)
        self.to(dev)
        xt = self._inputs(x).to(dev)
        target = self._targets(y, len(xt), dev)
        idx = check_indices(indices, len(xt))
        batch_size = check_positive_int(batch_size, "batch_size")
        epochs = check_positive_int(epochs, "epochs")
        # floor: "up to max_shift of the side"; at 8x8 a one-pixel shift (12 %) already costs accuracy
        shift = int(np.floor(max_shift * self.image_shape[-1] + 1e-9))
        aug = torch.Generator().manual_seed(int(seed) + 7)
        opt = torch.optim.AdamW(self.parameters(), lr=lr, weight_decay=weight_decay)
        self.train()
        step = self._training_step(xt, target, opt, augment=lambda xb: _shift(xb, shift, aug))
        self.history_ += run_steps(step, len(xt), batch_size, epochs, steps, seed, idx, "CNNOracle", show_progress)
        return self.eval()


class LinearOracle:
    """Linear pseudo-oracle on raw pixels (Table 4): logistic regression or ridge regression.

    Parameters
    ----------
    kind : {"classification", "regression", "circular"}
        Target kind (circular targets are regressed through ``(cos, sin)``).
    n_classes : int, optional
        Number of classes (classification).
    C : float
        Inverse regularisation of the logistic regression.
    alpha : float
        Ridge penalty.
    """

    def __init__(
        self, kind: str = "classification", n_classes: int | None = None, C: float = 1.0, alpha: float = 1.0
    ) -> None:
        _check_kind(kind, n_classes)
        self.kind = kind
        self.n_classes = n_classes
        self.C = float(C)
        self.alpha = float(alpha)

    def fit(self, x: Any, y: Any, *, indices: Any | None = None, seed: int = 0, max_iter: int = 300) -> LinearOracle:
        """Fit on flattened pixels.

        Parameters
        ----------
        x : array, shape (n, C, H, W)
            Images.
        y : array, shape (n,)
            Targets.
        indices : array of int, optional
            Training rows with repeats.
        seed : int
            Solver seed.
        max_iter : int
            Iterations of the logistic-regression solver.

        Returns
        -------
        LinearOracle
            ``self``.
        """
        from sklearn.linear_model import LogisticRegression, Ridge

        xt = check_images(x, None, "x").numpy().reshape(len(x), -1)
        yt = check_target(y, len(xt), self.kind, self.n_classes)
        idx = check_indices(indices, len(xt))
        if idx is not None:
            xt, yt = xt[idx.numpy()], yt[idx.numpy()]
        self.image_shape_ = tuple(np.asarray(x).shape[1:]) if not isinstance(x, torch.Tensor) else tuple(x.shape[1:])
        if self.kind == "classification":
            self.model_ = LogisticRegression(C=self.C, max_iter=max_iter, random_state=seed).fit(xt, yt)
        elif self.kind == "circular":
            a = 2 * np.pi * yt
            self.model_ = Ridge(alpha=self.alpha).fit(xt, np.stack([np.cos(a), np.sin(a)], 1))
        else:
            self.model_ = Ridge(alpha=self.alpha).fit(xt, yt)
        return self

    def predict(self, x: Any) -> np.ndarray:
        """Read the parent from images (see :meth:`CNNOracle.predict`)."""
        if not hasattr(self, "model_"):
            raise ValueError("this LinearOracle is not fitted yet: call fit(x, y) first")
        xt = check_images(x, self.image_shape_, "x").numpy().reshape(len(x), -1)
        out = self.model_.predict(xt)
        if self.kind == "circular":
            return np.mod(np.arctan2(out[:, 1], out[:, 0]) / (2 * np.pi), 1.0)
        return np.asarray(out)

    def score(self, x: Any, target: Any) -> np.ndarray:
        """Per-image correctness or absolute error (see :func:`score_predictions`)."""
        return score_predictions(self.predict(x), target, self.kind)


def fit_oracles(
    x: Any,
    parents: dict[str, Any],
    kinds: dict[str, tuple[str, int | None]],
    *,
    arch: str = "cnn",
    steps: int = 500,
    batch_size: int = 64,
    seed: int = 0,
    indices: Any | None = None,
    device: str = "auto",
    **kwargs: Any,
) -> dict[str, Any]:
    """Train one pseudo-oracle per parent.

    Parameters
    ----------
    x : array, shape (n, C, H, W)
        Training images.
    parents : dict
        Parent -> ``(n,)`` targets.
    kinds : dict
        Parent -> ``(kind, n_classes)``; e.g. ``{"digit": ("classification", 10), "hue": ("circular", None)}``.
    arch : {"cnn", "linear"}
        Oracle family (the paper's CNN, or Table 4's linear models).
    steps, batch_size : int
        CNN training length.
    seed : int
        Seed (the paper trains oracles once with a fixed seed).
    indices : array of int, optional
        Training rows with repeats (a simulated intervention).
    device : str
        CNN device.
    **kwargs
        Passed to :class:`CNNOracle` (``width``, ``hidden``).

    Returns
    -------
    dict
        Parent -> fitted oracle.
    """
    if arch not in ("cnn", "linear"):
        raise ValueError(f"arch must be 'cnn' or 'linear', got {arch!r}")
    unknown = set(kinds) - set(parents)
    if unknown:
        raise ValueError(f"kinds names parent(s) {sorted(unknown)} that parents lacks")
    shape = tuple(np.asarray(x).shape[1:])
    out: dict[str, Any] = {}
    for i, (k, (kind, n_classes)) in enumerate(kinds.items()):
        if arch == "cnn":
            o = CNNOracle(shape, kind, n_classes, seed=seed + i, **kwargs)
            out[k] = o.fit(
                x, parents[k], steps=steps, batch_size=batch_size, seed=seed + i, indices=indices, device=device
            )
        else:
            out[k] = LinearOracle(kind, n_classes).fit(x, parents[k], indices=indices, seed=seed)
    return out
