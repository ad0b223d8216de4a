"""A zoo of small image classifiers with graded reliance on a sensitive-attribute trace.

Stands in for the classifier pool of Ma et al., *AI alignment in medical imaging: unveiling hidden
biases through counterfactual analysis*, Section 6.3 and Appendix F.2 (10 torchvision architectures x
10 checkpoints trained on CheXpert / MIMIC-CXR), scaled down to CPU: a few small architectures
(:data:`CNN_ARCHITECTURES`), each trained per disease on toy chest X-rays in which the group trace predicts
the label with strength ``rho`` (:func:`cflib.data.toy_cxr.shortcut_training_set`). ``rho = 0`` gives
classifiers that see only the data's own group-disease association; larger ``rho`` gives classifiers
that lean on the trace and are therefore not counterfactually invariant. The same class with three
outputs is the attribute predictor of the paper's Table 6 and of the effectiveness metric (App. I).
The zoo itself is trained by :func:`cflib.experiments.invariance.train_zoo`; the classifier shares
fitting, prediction and saving with the pseudo-oracles through :class:`cflib.models.classifier.ImageClassifier`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import nn

from ..runtime import get_device
from ._train import check_grey_images, check_positive_int, seeded, shuffled_batches, train
from .classifier import ImageClassifier

__all__ = ["CNN_ARCHITECTURES", "SmallCNN"]

#: Architectures of the zoo: name -> (conv channels, hidden units of the head).
CNN_ARCHITECTURES = {
    "cnn-s": ((8, 16), 16),
    "cnn-m": ((16, 32), 32),
    "cnn-l": ((16, 32, 64), 32),
    "mlp": ((), 64),
}


class SmallCNN(ImageClassifier):
    """A small convolutional (or MLP) classifier for grey images in [0, 1] (an :class:`ImageClassifier`).

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
        if arch not in CNN_ARCHITECTURES:
            raise ValueError(f"arch must be one of {sorted(CNN_ARCHITECTURES)}, got {arch!r}")
        if n_outputs < 1:
            raise ValueError(f"n_outputs must be >= 1, got {n_outputs}")
        super().__init__("binary" if n_outputs == 1 else "classification", None if n_outputs == 1 else int(n_outputs))
        self.arch, self.size = arch, int(size)
        self._config = {"arch": self.arch, "size": self.size, "n_outputs": self.n_outputs}
        convs, hidden = CNN_ARCHITECTURES[arch]
        with seeded(seed):
            layers: list[nn.Module] = []
            c_in, side = 1, self.size
            for c in convs:
                layers += [nn.Conv2d(c_in, c, 3, padding=1), nn.BatchNorm2d(c), nn.ReLU(), nn.MaxPool2d(2)]
                c_in, side = c, side // 2
            self.features = nn.Sequential(*layers, nn.Flatten())
            self.head = nn.Sequential(nn.Linear(c_in * side * side, hidden), nn.ReLU(), nn.Linear(hidden, n_outputs))

    def _inputs(self, images: Any) -> torch.Tensor:
        """``(n, size, size)`` grey images in [0, 1] -> ``(n, 1, size, size)`` in [-1, 1]."""
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
            Show a progress bar (``None``: unless run by :mod:`cflib.runner`).

        Returns
        -------
        SmallCNN
            ``self``.
        """
        x = self._inputs(images)
        batch_size = check_positive_int(batch_size, "batch_size")
        self.to(get_device(device)).train()
        target = self._targets(y, x.shape[0], torch.device("cpu"))
        opt = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=weight_decay)
        per_epoch = math.ceil(x.shape[0] / batch_size)
        batches = shuffled_batches(x.shape[0], batch_size, torch.Generator().manual_seed(seed))
        self.history_ = train(
            self._training_step(x, target, opt),
            batches,
            epochs * per_epoch,
            per_epoch=per_epoch,
            progress=progress,
            desc=self.arch,
        )
        return self.eval()
