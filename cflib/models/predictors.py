"""Anti-causal attribute predictors ``g_k(x) -> pa_k`` for effectiveness, embeddings and perceptual features.

Melistas et al. (*Benchmarking counterfactual image generation*, Sec. 3.3 (b), App. A.5): the
predictors trained on real images that the benchmark's effectiveness, composition embedding and
Fréchet features read. Moved here from :mod:`cflib.metrics.benchmark_metrics` (a model, not a metric).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..runtime import as_generator

__all__ = ["AntiCausalPredictor"]


class AntiCausalPredictor:
    """An anti-causal predictor ``g_k(x)`` for effectiveness, embeddings and perceptual features.

    Wraps the project's :class:`cflib.models.oracles.CNNOracle` (the pseudo-oracle of the
    axiomatic-soundness chapter) and adds what the benchmark needs: regression targets
    standardised for training and reported in original units, class balancing by resampling
    (the paper's weighted random sampler, App. A.5), the penultimate features as an embedding
    (the paper's composition embedding and our Fréchet features), and the convolutional feature
    maps for the in-domain perceptual distance. Unlike the paper's ``q(t | x, i)`` it reads the
    image alone (``context = ()``): stroke width is visible whatever the intensity.

    Parameters
    ----------
    image_shape : tuple of int
        ``(C, H, W)``.
    kind : {"regression", "multiclass", "binary"}
        Target type.
    n_classes : int, optional
        Classes for ``"multiclass"`` (``"binary"`` uses 2).
    width, hidden : int
        CNN size.
    seed : int
        Initialisation seed.
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        kind: str = "regression",
        n_classes: int | None = None,
        width: int = 16,
        hidden: int = 64,
        seed: int = 0,
    ) -> None:
        from .oracles import CNNOracle

        if kind not in ("regression", "multiclass", "binary"):
            raise ValueError(f"kind must be 'regression', 'multiclass' or 'binary', got {kind!r}")
        if kind == "multiclass" and (n_classes is None or n_classes < 2):
            raise ValueError("a multiclass predictor needs n_classes >= 2")
        self.kind = kind
        self.context: tuple[str, ...] = ()
        oracle_kind = "regression" if kind == "regression" else "classification"
        self.oracle = CNNOracle(
            image_shape,
            kind=oracle_kind,
            n_classes=None if kind == "regression" else (2 if kind == "binary" else n_classes),
            width=width,
            hidden=hidden,
            seed=seed,
        )
        self.loc_, self.scale_ = 0.0, 1.0

    @property
    def module(self):
        """The underlying torch module (logits for classifiers), e.g. for counterfactual fine-tuning."""
        return self.oracle

    def fit(
        self,
        images: np.ndarray,
        y: np.ndarray,
        *,
        epochs: int = 5,
        batch_size: int = 128,
        lr: float = 2e-3,
        balance: bool = False,
        device: str = "auto",
        seed: int = 0,
    ) -> AntiCausalPredictor:
        """Train on real images; returns self.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, C, H, W)`` in [0, 1].
        y : numpy.ndarray
            Targets.
        epochs, batch_size, lr : int, int, float
            Optimisation.
        balance : bool
            Resample classes to equal frequency (the weighted random sampler for imbalanced attributes).
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.
        seed : int
            Randomness.

        Returns
        -------
        AntiCausalPredictor
        """
        y = np.asarray(y)
        if len(y) != len(images):
            raise ValueError(f"y has {len(y)} values for {len(images)} images")
        indices = None
        if self.kind == "regression":
            self.loc_, self.scale_ = float(y.mean()), float(y.std() or 1.0)
            target = (y - self.loc_) / self.scale_
        else:
            target = y.astype(int)
            if balance:
                rng = as_generator(seed)
                classes, counts = np.unique(target, return_counts=True)
                w = (1.0 / counts)[np.searchsorted(classes, target)]
                indices = rng.choice(len(target), size=len(target), replace=True, p=w / w.sum())
        self.oracle.fit(
            images,
            target,
            epochs=epochs,
            batch_size=batch_size,
            lr=lr,
            device=device,
            seed=seed,
            indices=indices,
            show_progress=False,
        )
        return self

    def predict(self, images: np.ndarray, context: np.ndarray | None = None) -> np.ndarray:
        """Predicted attribute in original units (values, class ids or 0/1)."""
        out = self.oracle.predict(np.asarray(images, np.float32))
        return out * self.scale_ + self.loc_ if self.kind == "regression" else out.astype(int)

    def feature_maps(
        self, images: np.ndarray, *, return_embedding: bool = False
    ) -> list[np.ndarray] | tuple[list[np.ndarray], np.ndarray]:
        """Activations of each convolutional stage, ``[(n, C, H, W), ...]``, for the perceptual distance.

        Parameters
        ----------
        images : numpy.ndarray
            ``(n, C, H, W)`` in [0, 1].
        return_embedding : bool
            Also return the penultimate features (:meth:`embed`) computed in the same pass.

        Returns
        -------
        list of numpy.ndarray, or (list of numpy.ndarray, numpy.ndarray)
            The feature maps, and with ``return_embedding`` the ``(n, hidden)`` embedding.
        """
        import torch

        net = self.oracle.features.net
        maps, feats = [], []
        with torch.no_grad():
            for s in range(0, len(images), 1024):
                h = torch.as_tensor(np.asarray(images[s : s + 1024], np.float32), device=self.oracle.device)
                level = []
                for layer in net:
                    h = layer(h)
                    if isinstance(layer, torch.nn.LeakyReLU) and h.ndim == 4:
                        level.append(h.cpu().numpy())
                maps.append(level)
                feats.append(h.cpu().numpy())
        out = [np.concatenate([m[k] for m in maps]) for k in range(len(maps[0]))]
        return (out, np.concatenate(feats)) if return_embedding else out

    def embed(self, images: np.ndarray) -> np.ndarray:
        """Penultimate features ``(n, hidden)`` (the paper's per-predictor composition embedding)."""
        return self.feature_maps(images, return_embedding=True)[1]

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the CNN (constructor arguments, weights, history) and the target's kind and scale (atomic).

        Parameters
        ----------
        path : path-like
            Target file.

        Returns
        -------
        pathlib.Path
        """
        from ._train import save_model

        oracle = self.oracle
        extra = {"history": oracle.history_, "predictor": {"kind": self.kind, "loc": self.loc_, "scale": self.scale_}}
        return save_model(oracle, path, oracle._config, extra)

    @classmethod
    def load(cls, path: str | os.PathLike[str], device: str = "auto") -> AntiCausalPredictor:
        """Load a predictor written by :meth:`save`.

        Parameters
        ----------
        path : path-like
            File written by :meth:`save`.
        device : str
            ``"auto"``, ``"cpu"`` or ``"cuda"``.

        Returns
        -------
        AntiCausalPredictor
        """
        from ._train import load_model
        from .oracles import CNNOracle

        oracle, extra = load_model(CNNOracle, path, device)
        if "predictor" not in extra:
            raise ValueError(f"{path} holds a CNNOracle without a predictor's kind and scale: not written by save()")
        oracle.history_ = list(extra.get("history", []))
        pred = cls.__new__(cls)
        pred.oracle, pred.context = oracle.eval(), ()
        pred.kind, pred.loc_, pred.scale_ = (extra["predictor"][k] for k in ("kind", "loc", "scale"))
        return pred
