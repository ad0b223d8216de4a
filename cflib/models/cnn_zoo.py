"""A zoo of small image classifiers with graded reliance on a sensitive-attribute trace.

Stands in for the classifier pool of Ma et al., *AI alignment in medical imaging: unveiling hidden
biases through counterfactual analysis*, Section 6.3 and Appendix F.2 (10 torchvision architectures x
10 checkpoints trained on CheXpert / MIMIC-CXR), scaled down to CPU: a few small architectures
(:data:`CNN_ARCHITECTURES`), each trained per disease on toy chest X-rays in which the group trace predicts
the label with strength ``rho`` (:func:`cflib.data.toy_cxr.shortcut_training_set`). ``rho = 0`` gives
classifiers that see only the data's own group-disease association; larger ``rho`` gives classifiers
that lean on the trace and are therefore not counterfactually invariant. The same class with three
outputs is the attribute predictor of the paper's Table 6 and of the effectiveness metric (App. I).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import torch
from torch import nn

from ..runtime import get_device
from ._train import (
    check_grey_images,
    check_positive_int,
    load_model,
    optimizer_step,
    save_model,
    shuffled_batches,
    train,
)

__all__ = ["CNN_ARCHITECTURES", "SmallCNN"]

#: Architectures of the zoo: name -> (conv channels, hidden units of the head).
CNN_ARCHITECTURES = {
    "cnn-s": ((8, 16), 16),
    "cnn-m": ((16, 32), 32),
    "cnn-l": ((16, 32, 64), 32),
    "mlp": ((), 64),
}


class SmallCNN(nn.Module):
    """A small convolutional (or MLP) classifier for grey images in [0, 1].

    Parameters
    ----------
    arch : str
        One of :data:`CNN_ARCHITECTURES`.
    size : int
        Image side length.
    n_outputs : int
        1 for a binary classifier (sigmoid), ``k >= 2`` for ``k`` classes (softmax).
    seed : int
        Seed of the weight initialisation.
    """

    def __init__(self, arch: str = "cnn-m", size: int = 32, n_outputs: int = 1, *, seed: int = 0) -> None:
        super().__init__()
        if arch not in CNN_ARCHITECTURES:
            raise ValueError(f"arch must be one of {sorted(CNN_ARCHITECTURES)}, got {arch!r}")
        if n_outputs < 1:
            raise ValueError(f"n_outputs must be >= 1, got {n_outputs}")
        self.arch, self.size, self.n_outputs = arch, int(size), int(n_outputs)
        convs, hidden = CNN_ARCHITECTURES[arch]
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            layers: list[nn.Module] = []
            c_in, side = 1, self.size
            for c in convs:
                layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2)]
                c_in, side = c, side // 2
            self.features = nn.Sequential(*layers, nn.Flatten())
            self.head = nn.Sequential(nn.Linear(c_in * side * side, hidden), nn.ReLU(), nn.Linear(hidden, n_outputs))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits for images ``(n, 1, size, size)`` in [-1, 1]."""
        return self.head(self.features(x))

    def _tensor(self, images: np.ndarray) -> torch.Tensor:
        return torch.from_numpy(check_grey_images(images, self.size)[:, None] * 2.0 - 1.0)

    def fit(
        self,
        images: np.ndarray,
        y: np.ndarray,
        *,
        epochs: int = 5,
        batch_size: int = 64,
        lr: float = 2e-3,
        weight_decay: float = 1e-4,
        device: str = "auto",
        seed: int = 0,
        progress: bool | None = None,
    ) -> SmallCNN:
        """Train with Adam on (binary or multi-class) cross-entropy.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].
        y : numpy.ndarray
            ``(n,)`` labels: 0/1 when ``n_outputs == 1``, else ``0..n_outputs-1``.
        epochs, batch_size, lr, weight_decay : numbers
            Optimisation settings.
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed : int
            Seed of the batch order.
        progress : bool, optional
            Show a tqdm bar (``None``: only on a terminal).

        Returns
        -------
        SmallCNN
            ``self``.
        """
        x = self._tensor(images)
        y = np.asarray(y)
        if y.shape != (x.shape[0],):
            raise ValueError(f"y must have shape ({x.shape[0]},) to match images, got {y.shape}")
        k = max(2, self.n_outputs)
        if y.dtype.kind == "f" and np.all(y == np.round(y)):
            y = y.astype(np.int64)
        if y.dtype.kind not in "iub" or y.min() < 0 or y.max() >= k:
            raise ValueError(f"y must hold integer labels in 0..{k - 1}, got values in [{y.min()}, {y.max()}]")
        yt = torch.from_numpy(y.astype(np.int64))
        batch_size = check_positive_int(batch_size, "batch_size")
        dev = get_device(device)
        self.to(dev).train()
        gen = torch.Generator().manual_seed(seed)
        opt = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=weight_decay)

        def step(idx: torch.Tensor) -> dict[str, float]:
            out = self(x[idx].to(dev))
            tgt = yt[idx].to(dev)
            if self.n_outputs == 1:
                loss = nn.functional.binary_cross_entropy_with_logits(out[:, 0], tgt.float())
            else:
                loss = nn.functional.cross_entropy(out, tgt)
            return {"loss": optimizer_step(opt, loss)}

        per_epoch = math.ceil(x.shape[0] / batch_size)
        self.history_ = train(step, shuffled_batches(x.shape[0], batch_size, gen), epochs * per_epoch, per_epoch=per_epoch,
                              progress=progress, desc=self.arch)
        self.eval()
        return self

    @torch.no_grad()
    def predict_proba(self, images: np.ndarray, batch_size: int = 512) -> np.ndarray:
        """Predicted probabilities.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].
        batch_size : int
            Inference batch size.

        Returns
        -------
        numpy.ndarray
            ``(n,)`` probability of the positive class (binary) or ``(n, k)`` class probabilities.
        """
        self.eval()
        x = self._tensor(images)
        dev = next(self.parameters()).device
        out = torch.cat([self(x[i : i + batch_size].to(dev)).cpu() for i in range(0, x.shape[0], batch_size)])
        if self.n_outputs == 1:
            return torch.sigmoid(out[:, 0]).numpy()
        return torch.softmax(out, dim=1).numpy()

    def predict(self, images: np.ndarray) -> np.ndarray:
        """Hard predictions: 0/1 (binary) or the arg-max class.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].

        Returns
        -------
        numpy.ndarray
            ``(n,)`` integer predictions.
        """
        p = self.predict_proba(images)
        return (p >= 0.5).astype(np.int64) if p.ndim == 1 else p.argmax(1)

    @torch.no_grad()
    def embed(self, images: np.ndarray, batch_size: int = 512) -> np.ndarray:
        """Penultimate-layer features (used for the in-domain Fréchet distance).

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, size, size)`` images in [0, 1].
        batch_size : int
            Inference batch size.

        Returns
        -------
        numpy.ndarray
            ``(n, hidden)`` features.
        """
        self.eval()
        x = self._tensor(images)
        dev = next(self.parameters()).device
        trunk = nn.Sequential(self.features, *list(self.head)[:-1])
        return torch.cat([trunk(x[i : i + batch_size].to(dev)).cpu() for i in range(0, x.shape[0], batch_size)]).numpy()

    def save(self, path: str | os.PathLike) -> Path:
        """Save architecture and weights atomically.

        Parameters
        ----------
        path : path-like
            Target file.

        Returns
        -------
        pathlib.Path
        """
        return save_model(self, path, {"arch": self.arch, "size": self.size, "n_outputs": self.n_outputs})

    @classmethod
    def load(cls, path: str | os.PathLike, device: str = "auto") -> SmallCNN:
        """Load a classifier written by :meth:`save`.

        Parameters
        ----------
        path : path-like
            File written by :meth:`save`.
        device : str
            Device.

        Returns
        -------
        SmallCNN
        """
        model, _ = load_model(cls, path, device)
        return model.eval()
