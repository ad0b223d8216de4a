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

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from ..data.toy_cxr import DISEASES, ToyCXR, check_images, shortcut_training_set
from ..runtime import get_device
from ._train import load_model, save_model

__all__ = ["CNN_ARCHITECTURES", "SmallCNN", "CNNZooMember", "train_zoo", "zoo_table", "one_vs_rest_auc", "audit_cnn_zoo"]

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
        return torch.from_numpy(check_images(images, self.size)[:, None] * 2.0 - 1.0)

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
        from tqdm import tqdm  # tqdm.auto warns in kernels without ipywidgets

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
        dev = get_device(device)
        self.to(dev).train()
        gen = torch.Generator().manual_seed(seed)
        opt = torch.optim.Adam(self.parameters(), lr=lr, weight_decay=weight_decay)
        n = x.shape[0]
        bar = tqdm(range(epochs), desc=f"{self.arch}", disable=not progress if progress is not None else None, leave=False)
        for _ in bar:
            perm = torch.randperm(n, generator=gen)
            for i in range(0, n, batch_size):
                idx = perm[i : i + batch_size]
                out = self(x[idx].to(dev))
                tgt = yt[idx].to(dev)
                if self.n_outputs == 1:
                    loss = nn.functional.binary_cross_entropy_with_logits(out[:, 0], tgt.float())
                else:
                    loss = nn.functional.cross_entropy(out, tgt)
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
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


@dataclass
class CNNZooMember:
    """One classifier of the zoo.

    Attributes
    ----------
    name : str
        ``"<arch> rho=<rho> s<seed>"``.
    arch : str
        Architecture.
    disease : str
        Disease it predicts.
    rho : float
        Shortcut strength of its training set.
    seed : int
        Seed.
    model : SmallCNN
        The fitted classifier.
    """

    name: str
    arch: str
    disease: str
    rho: float
    seed: int
    model: SmallCNN = field(repr=False)

    def predict(self, images: np.ndarray) -> np.ndarray:
        """Hard 0/1 predictions (the Ŷ the test uses)."""
        return self.model.predict(images)

    def predict_proba(self, images: np.ndarray) -> np.ndarray:
        """Predicted probability of the disease."""
        return self.model.predict_proba(images)


def train_zoo(
    data: ToyCXR,
    *,
    diseases: Sequence[str] = DISEASES,
    archs: Sequence[str] = ("cnn-s", "cnn-m", "mlp"),
    rhos: Sequence[float] = (0.0, 0.5, 0.9),
    seeds: Sequence[int] = (0,),
    epochs: int = 4,
    batch_size: int = 64,
    device: str = "auto",
    progress: bool | None = None,
) -> list[CNNZooMember]:
    """Train one binary classifier per (disease, architecture, shortcut strength, seed).

    Parameters
    ----------
    data : ToyCXR
        Training images (the shortcut re-rendering uses their exogenous content).
    diseases : sequence of str
        Diseases to train for.
    archs : sequence of str
        Architectures (keys of :data:`CNN_ARCHITECTURES`).
    rhos : sequence of float
        Shortcut strengths in [0, 1].
    seeds : sequence of int
        Seeds (initialisation, batch order and shortcut re-rendering).
    epochs, batch_size : int
        Training settings.
    device : str
        Device.
    progress : bool, optional
        Show a bar over the zoo.

    Returns
    -------
    list of CNNZooMember
    """
    from tqdm import tqdm  # tqdm.auto warns in kernels without ipywidgets

    if not isinstance(data, ToyCXR):
        raise TypeError(f"data must be a ToyCXR, got {type(data).__name__}")
    for d in diseases:
        if d not in DISEASES:
            raise ValueError(f"unknown disease {d!r}; expected among {DISEASES}")
    jobs = [(d, a, r, s) for d in diseases for a in archs for r in rhos for s in seeds]
    zoo = []
    for d, arch, rho, s in tqdm(jobs, desc="zoo", disable=not progress if progress is not None else None):
        # Each (rho, seed) gets its own initialisation and batch order, so members trained on the same
        # images (a disease without association, where rho changes nothing) are distinct checkpoints.
        member_seed = 1000 * s + round(rho * 100)
        x, y, _ = shortcut_training_set(data, d, rho, seed=member_seed)
        model = SmallCNN(arch, data.size, 1, seed=member_seed).fit(x, y, epochs=epochs, batch_size=batch_size, device=device, seed=member_seed)
        zoo.append(CNNZooMember(f"{arch} rho={rho:g} s{s}", arch, d, float(rho), int(s), model))
    return zoo


def zoo_table(zoo: Sequence[CNNZooMember]) -> pd.DataFrame:
    """One row per zoo member (name, architecture, disease, rho, seed).

    Parameters
    ----------
    zoo : sequence of CNNZooMember
        Output of :func:`train_zoo`.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame([{"name": m.name, "arch": m.arch, "disease": m.disease, "rho": m.rho, "seed": m.seed} for m in zoo])


def _auc_rows(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """ROC-AUC of each row (Mann-Whitney form with mid-ranks for ties), vectorised over rows."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=1)
    n1 = labels.sum(axis=1)
    n0 = labels.shape[1] - n1
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((ranks * labels).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def one_vs_rest_auc(proba: np.ndarray, y: np.ndarray, *, names: Sequence[str] | None = None, n_boot: int = 200, seed: int = 0) -> pd.DataFrame:
    """One-vs-rest ROC-AUC per class with a bootstrap standard deviation (the paper's Table 6 layout).

    Parameters
    ----------
    proba : numpy.ndarray
        ``(n, k)`` class probabilities.
    y : numpy.ndarray
        ``(n,)`` true classes ``0..k-1``.
    names : sequence of str, optional
        Class names for the index.
    n_boot : int
        Bootstrap resamples of the test set (all drawn at once).
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    pandas.DataFrame
        Columns ``AUC`` and ``sd`` (bootstrap), one row per class.
    """
    proba = np.asarray(proba, dtype=float)
    y = np.asarray(y)
    if proba.ndim != 2 or proba.shape[0] != y.shape[0]:
        raise ValueError(f"proba must be (n, k) with n = len(y) = {y.shape[0]}, got {proba.shape}")
    k = proba.shape[1]
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, y.shape[0], (n_boot, y.shape[0]))
    rows = []
    for c in range(k):
        lab = (y == c).astype(float)
        auc = float(_auc_rows(proba[None, :, c], lab[None])[0])
        boot = _auc_rows(proba[idx, c], lab[idx])
        rows.append({"AUC": auc, "sd": float(np.nanstd(boot, ddof=1))})
    return pd.DataFrame(rows, index=list(names) if names is not None else list(range(k)))


def audit_cnn_zoo(
    zoo: Sequence[CNNZooMember],
    images: np.ndarray,
    A: np.ndarray,
    D: np.ndarray,
    counterfactuals: dict,
    true_counterfactuals: Sequence[np.ndarray],
    *,
    p_a: Sequence[float] | None = None,
) -> pd.DataFrame:
    """Audit every zoo member: true ECA, CIT-LR with each counterfactual source, DP and EO.

    Implements the per-classifier protocol of Section 6.3: for each classifier :math:`f` and its disease,
    the hard predictions :math:`\\hat y = f(x)` on the test images, the generator form of CIT-LR
    (Algorithm 1, with :math:`\\hat g(a, z_i) = f(x_i^{do(A=a)})` and :math:`\\hat h = \\sum_a P(a)\\,\\hat g`)
    for every counterfactual source, the demographic-parity and equal-opportunity tests, and the
    expected counterfactual accuracy measured on the **true** counterfactuals (the ground truth the
    paper approximates with its own generator).

    Parameters
    ----------
    zoo : sequence of CNNZooMember
        Classifiers (each knows its disease).
    images : numpy.ndarray
        ``(n, H, W)`` test images.
    A : numpy.ndarray
        ``(n,)`` observed groups ``0..L-1``.
    D : numpy.ndarray
        ``(n, 3)`` true disease labels (columns in the order of :data:`cflib.data.toy_cxr.DISEASES`).
    counterfactuals : dict
        ``{source name: [images under do(A=0), do(A=1), ...]}``, one array per level.
    true_counterfactuals : sequence of numpy.ndarray
        True counterfactual images, one array per level.
    p_a : sequence of float, optional
        :math:`P(A = a)` for :math:`\\hat h`; default the test prevalence.

    Returns
    -------
    pandas.DataFrame
        One row per member: ``name, arch, disease, rho, accuracy, ECA``, the disease ROC-AUC within
        each group (the paper's Tables 2-3) and, per test, its t statistic,
        p-value and log10 p-value (``CIT-LR[<source>]``, ``DP``, ``EO``).
    """
    from ..stats.invariance import (
        cit_lr_generative,
        demographic_parity_test,
        equal_opportunity_test,
        expected_counterfactual_accuracy,
    )

    A = np.asarray(A)
    levels = list(range(len(true_counterfactuals)))
    rows = []
    for m in zoo:
        y = D[:, DISEASES.index(m.disease)]
        y_hat = m.predict(images).astype(float)
        true_pred = [m.predict(c) for c in true_counterfactuals]
        eca = expected_counterfactual_accuracy(None, y_hat, true_pred, a=A, levels=levels)
        row = {"name": m.name, "arch": m.arch, "disease": m.disease, "rho": m.rho, "seed": m.seed,
               "accuracy": float((y_hat == y).mean()), "ECA": float(eca)}
        proba = m.predict_proba(images)
        for lv in levels:
            sel = lv == A
            row[f"AUC A={lv}"] = float(_auc_rows(proba[sel][None], y[sel][None].astype(float))[0]) if 0 < y[sel].sum() < sel.sum() else np.nan
        for src, cfs in counterfactuals.items():
            cf_pred = np.stack([m.predict(c) for c in cfs], axis=1).astype(float)
            r = cit_lr_generative(y_hat, A, cf_pred, levels=levels, p_a=p_a)
            row.update({f"t CIT-LR[{src}]": r.statistic, f"p CIT-LR[{src}]": r.pvalue, f"log10p CIT-LR[{src}]": r.log10_pvalue,
                        f"mean d CIT-LR[{src}]": r.mean_diff})
        for label, r in (("DP", demographic_parity_test(y_hat, A)), ("EO", equal_opportunity_test(y_hat, A, y))):
            row.update({f"t {label}": r.statistic, f"p {label}": r.pvalue, f"log10p {label}": r.log10_pvalue})
        rows.append(row)
    return pd.DataFrame(rows)
