"""The toy chest X-ray CNN zoo of Sec. 6.3: training, Table 6's AUC and the audit of Figures 3-4 and 8-12.

The CNN zoo stands in for the paper's 10 torchvision architectures x 10 checkpoints trained on
CheXpert / MIMIC-CXR: small classifiers (:class:`cflib.models.cnn_zoo.SmallCNN`) trained per disease on
toy chest X-rays in which the group trace predicts the label with strength ``rho``
(:func:`cflib.data.toy_cxr.shortcut_training_set`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ...data.toy_cxr import DISEASES, ToyCXR, shortcut_training_set

if TYPE_CHECKING:  # torch is imported only by the image experiments
    from ...models.cnn_zoo import SmallCNN


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
        Architectures (keys of :data:`cflib.models.cnn_zoo.CNN_ARCHITECTURES`).
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

    from ...models.cnn_zoo import SmallCNN

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
        model = SmallCNN(arch, data.size, 1, seed=member_seed).fit(
            x, y, epochs=epochs, batch_size=batch_size, device=device, seed=member_seed
        )
        zoo.append(CNNZooMember(f"{arch} rho={rho:g} s{s}", arch, d, float(rho), int(s), model))
    return zoo


def _auc_rows(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """ROC-AUC of each row (Mann-Whitney form with mid-ranks for ties), vectorised over rows."""
    from scipy.stats import rankdata

    ranks = rankdata(scores, axis=1)
    n1 = labels.sum(axis=1)
    n0 = labels.shape[1] - n1
    with np.errstate(invalid="ignore", divide="ignore"):
        return ((ranks * labels).sum(axis=1) - n1 * (n1 + 1) / 2) / (n1 * n0)


def one_vs_rest_auc(
    proba: np.ndarray, y: np.ndarray, *, names: Sequence[str] | None = None, n_boot: int = 200, seed: int = 0
) -> pd.DataFrame:
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


#: The tests of Figures 3-4: label -> column suffix of :func:`audit_cnn_zoo`.
AUDIT_TESTS = {
    "CIT-LR (CLDM+D)": "CIT-LR[CLDM+D]",
    "CIT-LR (paper CLDM)": "CIT-LR[CLDM]",
    "CIT-LR (true cf)": "CIT-LR[true]",
    "DP": "DP",
    "EO": "EO",
}


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
    from ...stats.invariance import (
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
        row = {
            "name": m.name,
            "arch": m.arch,
            "disease": m.disease,
            "rho": m.rho,
            "seed": m.seed,
            "accuracy": float((y_hat == y).mean()),
            "ECA": float(eca),
        }
        proba = m.predict_proba(images)
        for lv in levels:
            sel = np.equal(A, lv)
            row[f"AUC A={lv}"] = (
                float(_auc_rows(proba[sel][None], y[sel][None].astype(float))[0])
                if 0 < y[sel].sum() < sel.sum()
                else np.nan
            )
        for src, cfs in counterfactuals.items():
            cf_pred = np.stack([m.predict(c) for c in cfs], axis=1).astype(float)
            r = cit_lr_generative(y_hat, A, cf_pred, levels=levels, p_a=p_a)
            row.update(
                {
                    f"t CIT-LR[{src}]": r.statistic,
                    f"p CIT-LR[{src}]": r.pvalue,
                    f"log10p CIT-LR[{src}]": r.log10_pvalue,
                    f"mean d CIT-LR[{src}]": r.mean_diff,
                }
            )
        for label, parity in (("DP", demographic_parity_test(y_hat, A)), ("EO", equal_opportunity_test(y_hat, A, y))):
            row.update(
                {f"t {label}": parity.statistic, f"p {label}": parity.pvalue, f"log10p {label}": parity.log10_pvalue}
            )
        rows.append(row)
    return pd.DataFrame(rows)
