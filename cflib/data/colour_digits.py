"""Colour-Digits: scikit-learn's digits coloured by hue, standing in for Colour-MNIST (Monteiro et al., ICLR 2023, Sec. 4.1, App. D.1; Sec. 3.3, eq. 4).

**Substitute data.** The paper's Colour-MNIST colours the 70 000 MNIST digits. MNIST cannot be
downloaded here, so this module colours the 8x8 digits bundled with scikit-learn
(``load_digits``: 1 797 images, of which 174 per class are kept), upsampled to ``resolution``. It keeps what the paper's experiments rely on: a
discrete parent (digit, 10 classes), a continuous parent (hue), exogenous style, and the three hue
SCMs (unconfounded, confounded without full support, confounded with full support). Each base image
is replicated with fresh hue draws to enlarge the data, which keeps the confounding.

Image mechanism (App. D.1): the grey digit is the value channel of an HSV image with saturation 1
and hue ``h``, i.e. ``rgb = intensity * pure_rgb(h)``.

The SCM is fully specified, so the **true counterfactual** is known: the exogenous noise is the
style rank ``u`` of the digit within its class (exemplars sorted by ink mass, so ``u`` reads as
"stroke thickness"; each class keeps 174 exemplars, so ranks match one to one). ``do(digit = d')`` renders the exemplar of class ``d'`` at the same rank;
``do(hue = h')`` recolours the same grey image. Abduction is exact: the grey image is the maximum
over the colour channels.

Hue is circular (0 and 1 are both red); labels are wrapped into ``[0, 1)`` and hue errors are
measured circularly (:func:`hue_error`), so an identity model's chance error under uniform
do-values is 1/4 instead of the paper's linear 1/3 (notes §7.3).

Also here: the joint histogram of binned parents, the full-support check and the
simulated-intervention resampler of Sec. 3.3 (integer repeat counts, as the official code).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from cflib.runtime import as_generator

from ..results import BaseTestResult
from .protocol import check_do

__all__ = [
    "SCMS",
    "ColourDigits",
    "colour_digits",
    "colourise",
    "pure_rgb",
    "sample_hue",
    "digit_bank",
    "true_counterfactual",
    "measure_hue",
    "hue_error",
    "encode_parents",
    "SupportReport",
    "joint_histogram",
    "cell_index",
    "support_report",
    "has_full_support",
    "simulated_intervention",
]

#: The paper's three hue SCMs.
SCMS = ("unconfounded", "confounded", "confounded_full_support")


def pure_rgb(hue: np.ndarray) -> np.ndarray:
    """RGB of a fully saturated, full-value colour of hue ``hue`` (wrapped into [0, 1)); shape ``(*hue.shape, 3)``."""
    h = np.mod(np.asarray(hue, dtype=np.float64), 1.0)
    # HSV -> RGB with s = v = 1 in closed form: each channel is a clipped triangle wave of the hue.
    k = np.mod(np.array([5.0, 3.0, 1.0]) + 6.0 * h[..., None], 6.0)
    return 1.0 - np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)


def colourise(gray: np.ndarray, hue: np.ndarray) -> np.ndarray:
    """Colour grey images with a hue: ``rgb = intensity * pure_rgb(hue)``.

    Parameters
    ----------
    gray : numpy.ndarray, shape (n, H, W)
        Intensities in ``[0, 1]``.
    hue : numpy.ndarray, shape (n,)
        Hues (wrapped into ``[0, 1)``).

    Returns
    -------
    numpy.ndarray, shape (n, 3, H, W), float32
    """
    gray = np.asarray(gray, dtype=np.float32)
    hue = np.asarray(hue, dtype=np.float64).reshape(-1)
    if gray.ndim != 3:
        raise ValueError(f"gray must have shape (n, H, W), got {gray.shape}")
    if len(hue) != len(gray):
        raise ValueError(f"hue has {len(hue)} values for {len(gray)} images")
    rgb = pure_rgb(hue).astype(np.float32)
    return gray[:, None, :, :] * rgb[:, :, None, None]


@lru_cache(maxsize=8)
def _bank(resolution: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from sklearn.datasets import load_digits

    d = load_digits()
    imgs = d.images.astype(np.float32) / 16.0
    if resolution != 8:
        import torch
        import torch.nn.functional as F

        t = F.interpolate(
            torch.from_numpy(imgs)[:, None], size=(resolution, resolution), mode="bilinear", align_corners=False
        )
        imgs = t[:, 0].clamp(0, 1).numpy()
    labels = d.target.astype(np.int64)
    # The exogenous style: index j of the exemplar in its class, sorted by ink mass. Every class keeps
    # the same number m of exemplars (evenly spread over its mass ranks), so j -> j is a bijection
    # between classes and the true digit counterfactual is exactly invertible.
    mass = imgs.reshape(len(imgs), -1).sum(1)
    m = int(np.bincount(labels, minlength=10).min())
    keep, style = [], []
    for c in range(10):
        idx = np.flatnonzero(labels == c)
        order = idx[np.argsort(mass[idx], kind="stable")]
        keep.append(order[np.round(np.linspace(0, len(order) - 1, m)).astype(int)])
        style.append(np.arange(m))
    keep_a = np.concatenate(keep)
    rank = (np.concatenate(style) + 0.5) / m
    return imgs[keep_a], labels[keep_a], rank


def digit_bank(resolution: int = 16) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grey exemplars, their digit labels and their style rank ``u``.

    Parameters
    ----------
    resolution : int
        Side of the (bilinearly upsampled) square images; 8 is the native size.

    Returns
    -------
    images : numpy.ndarray, shape (1740, resolution, resolution)
        174 exemplars per class (the size of the smallest class), spread over the ink-mass ranks.
    digits : numpy.ndarray of int, shape (1740,)
    style : numpy.ndarray of float, shape (1740,)
        Style rank ``(j + 0.5) / 174`` of the exemplar's ink mass within its class: the exogenous noise.
    """
    if isinstance(resolution, bool) or not isinstance(resolution, (int, np.integer)) or resolution < 4:
        raise ValueError(f"resolution must be an integer >= 4, got {resolution!r}")
    imgs, labels, rank = _bank(int(resolution))
    return imgs.copy(), labels.copy(), rank.copy()


def sample_hue(
    digits: np.ndarray,
    scm: str,
    rng: int | np.random.Generator | None = None,
    *,
    sigma: float = 0.05,
    outlier_p: float = 0.05,
) -> np.ndarray:
    """Draw hues under one of the paper's SCMs (App. D.1), wrapped into ``[0, 1)``.

    Parameters
    ----------
    digits : numpy.ndarray of int
        Digit of each image.
    scm : {"unconfounded", "confounded", "confounded_full_support"}
        ``unconfounded``: ``h ~ U(0, 1)``; ``confounded``: ``h ~ N(d/10 + 0.05, sigma)``;
        ``confounded_full_support``: the confounded draw, replaced by ``U(0, 1)`` with probability ``outlier_p``.
    rng : int, Generator or None
        Randomness.
    sigma : float
        Spread of the confounded hue (paper: 0.05).
    outlier_p : float
        Outlier probability of the full-support SCM (paper: 0.01 on 60 000 images; the default 0.05
        keeps every cell populated with only ~1 400 base images).

    Returns
    -------
    numpy.ndarray of float, shape (n,)
    """
    if scm not in SCMS:
        raise ValueError(f"scm must be one of {SCMS}, got {scm!r}")
    if not 0 <= outlier_p <= 1:
        raise ValueError(f"outlier_p must be in [0, 1], got {outlier_p!r}")
    rng = as_generator(rng)
    digits = np.asarray(digits)
    n = len(digits)
    if scm == "unconfounded":
        return rng.uniform(0.0, 1.0, n)
    hue = rng.normal(digits / 10.0 + 0.05, sigma)
    if scm == "confounded_full_support":
        out = rng.random(n) < outlier_p
        hue = np.where(out, rng.uniform(0.0, 1.0, n), hue)
    return np.mod(hue, 1.0)


def encode_parents(digit: np.ndarray, hue: np.ndarray) -> np.ndarray:
    """Model input encoding of the parents: one-hot digit (10) and ``(cos 2πh, sin 2πh)`` (2).

    The circular encoding keeps red at both ends of the hue range together, which the decoder
    needs to use the hue at all at small scale (notes §4 probe).

    Returns
    -------
    numpy.ndarray, shape (n, 12), float32
    """
    digit = np.asarray(digit).astype(np.int64).reshape(-1)
    hue = np.asarray(hue, dtype=np.float64).reshape(-1)
    if len(digit) != len(hue):
        raise ValueError(f"digit and hue must have the same length, got {len(digit)} and {len(hue)}")
    if digit.size and (digit.min() < 0 or digit.max() > 9):
        raise ValueError("digit values must be integers in 0..9")
    out = np.zeros((len(digit), 12), dtype=np.float32)
    out[np.arange(len(digit)), digit] = 1.0
    out[:, 10] = np.cos(2 * np.pi * hue)
    out[:, 11] = np.sin(2 * np.pi * hue)
    return out


@dataclass(frozen=True)
class ColourDigits:
    """A Colour-Digits split.

    Attributes
    ----------
    x : numpy.ndarray, shape (n, 3, H, W), float32
        Images in ``[0, 1]``.
    digit : numpy.ndarray of int, shape (n,)
    hue : numpy.ndarray of float, shape (n,)
        In ``[0, 1)``.
    style : numpy.ndarray of float, shape (n,)
        Exogenous style rank ``u`` (ground truth, not visible to models).
    base : numpy.ndarray of int, shape (n,)
        Index of the grey exemplar in :func:`digit_bank`.
    scm : str
    resolution : int
    """

    x: np.ndarray
    digit: np.ndarray
    hue: np.ndarray
    style: np.ndarray
    base: np.ndarray
    scm: str
    resolution: int

    @property
    def parents(self) -> dict[str, np.ndarray]:
        """``{"digit": ..., "hue": ...}``."""
        return {"digit": self.digit, "hue": self.hue}

    @property
    def pa(self) -> np.ndarray:
        """Encoded parents for the models, see :func:`encode_parents`."""
        return encode_parents(self.digit, self.hue)

    def __len__(self) -> int:
        return len(self.x)

    def subset(self, idx: np.ndarray) -> ColourDigits:
        """Rows ``idx`` (with repeats) as a new split."""
        idx = np.asarray(idx)
        return ColourDigits(
            self.x[idx], self.digit[idx], self.hue[idx], self.style[idx], self.base[idx], self.scm, self.resolution
        )

    def frame(self) -> pd.DataFrame:
        """The parents (and the hidden style) as a DataFrame."""
        return pd.DataFrame({"digit": self.digit, "hue": self.hue, "style": self.style})

    def observations(self) -> dict[str, np.ndarray]:
        """The observed variables ``{"digit", "hue", "x"}`` (the :class:`~cflib.data.protocol.CounterfactualDataset` protocol)."""
        return {"digit": self.digit.copy(), "hue": self.hue.copy(), "x": self.x.copy()}

    def true_counterfactual(self, do: Mapping[str, Any], idx: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The true counterfactual of each unit under ``do`` (:func:`true_counterfactual` on the split).

        Parameters
        ----------
        do : mapping
            ``{"digit" | "hue": scalar or array of length n}``.
        idx : array of int, optional
            Restrict to these units.

        Returns
        -------
        dict
            ``{"digit", "hue", "x"}`` counterfactual values.
        """
        unit = self if idx is None else self.subset(idx)
        vals = {
            "digit": unit.digit.copy(),
            "hue": unit.hue.copy(),
            **check_do(do, ("digit", "hue"), len(unit), "Colour-Digits"),
        }
        vals["digit"] = vals["digit"].astype(np.int64)
        return {**vals, "x": true_counterfactual(unit.x, unit.parents, vals, resolution=unit.resolution)}


def colour_digits(
    scm: str = "unconfounded",
    split: str = "train",
    *,
    replicas: int = 5,
    resolution: int = 16,
    sigma: float = 0.05,
    outlier_p: float = 0.05,
    test_fraction: float = 0.2,
    max_base: int | None = None,
    seed: int = 0,
) -> ColourDigits:
    """Generate a Colour-Digits split under one of the paper's SCMs.

    Parameters
    ----------
    scm : {"unconfounded", "confounded", "confounded_full_support"}
        Hue mechanism. The paper always *tests* on the unconfounded test split.
    split : {"train", "test", "all"}
        Which base exemplars (a fixed random split with ``test_fraction`` held out, independent of ``seed``).
    replicas : int
        Copies of each base exemplar, each with a fresh hue draw.
    resolution : int
        Image side.
    sigma, outlier_p : float
        See :func:`sample_hue`.
    test_fraction : float
        Share of exemplars in the test split.
    max_base : int, optional
        Use at most this many base exemplars (a stratified-by-order subset, for smoke runs).
    seed : int
        Seed of the hue draws.

    Returns
    -------
    ColourDigits
    """
    if split not in ("train", "test", "all"):
        raise ValueError(f"split must be 'train', 'test' or 'all', got {split!r}")
    if isinstance(replicas, bool) or not isinstance(replicas, (int, np.integer)) or replicas < 1:
        raise ValueError(f"replicas must be a positive integer, got {replicas!r}")
    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    imgs, labels, rank = (
        _bank(int(resolution))
        if isinstance(resolution, (int, np.integer)) and resolution >= 4
        else digit_bank(resolution)
    )
    perm = np.random.default_rng(12345).permutation(len(imgs))  # fixed split, whatever the seed
    n_test = int(round(test_fraction * len(imgs)))
    base = {"test": perm[:n_test], "train": perm[n_test:], "all": perm}[split]
    if max_base is not None:
        base = base[: int(max_base)]
    base = np.sort(np.tile(base, int(replicas)))
    rng = as_generator(seed)
    digit = labels[base]
    hue = sample_hue(digit, scm, rng, sigma=sigma, outlier_p=outlier_p)
    x = colourise(imgs[base], hue)
    return ColourDigits(x=x, digit=digit, hue=hue, style=rank[base], base=base, scm=scm, resolution=int(resolution))


def _as_parents(pa: Mapping[str, Any], n: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    if not isinstance(pa, Mapping):
        raise TypeError(f"{name} must be a dict with keys 'digit' and 'hue'")
    unknown = set(pa) - {"digit", "hue"}
    if unknown:
        raise ValueError(f"{name} has unknown parent(s) {sorted(unknown)}; Colour-Digits parents are 'digit' and 'hue'")
    missing = {"digit", "hue"} - set(pa)
    if missing:
        raise ValueError(f"{name} is missing parent(s) {sorted(missing)}")
    d = np.asarray(pa["digit"]).astype(np.int64).reshape(-1)
    h = np.asarray(pa["hue"], dtype=np.float64).reshape(-1)
    if len(d) != n or len(h) != n:
        raise ValueError(f"{name} has {len(d)} digits and {len(h)} hues for {n} images")
    return d, h


def true_counterfactual(
    x: np.ndarray, pa: Mapping[str, Any], pa_star: Mapping[str, Any], *, resolution: int | None = None
) -> np.ndarray:
    """The ground-truth counterfactual function of the Colour-Digits SCM.

    Abduction is exact: the grey exemplar is ``max`` over the colour channels and its style rank is
    looked up in the bank; the counterfactual renders the exemplar of class ``pa_star["digit"]`` with
    the nearest style rank (the same exemplar when the digit is unchanged) in hue ``pa_star["hue"]``.

    Parameters
    ----------
    x : numpy.ndarray, shape (n, 3, H, W)
        Colour-Digits images (factual or previously counterfactual).
    pa, pa_star : dict
        ``{"digit": (n,), "hue": (n,)}`` observed and counterfactual parents.
    resolution : int, optional
        Image side (default: from ``x``).

    Returns
    -------
    numpy.ndarray, shape (n, 3, H, W)
    """
    x = np.asarray(x, dtype=np.float32)
    if x.ndim != 4 or x.shape[1] != 3:
        raise ValueError(f"x must have shape (n, 3, H, W), got {x.shape}")
    res = x.shape[-1] if resolution is None else int(resolution)
    d, _ = _as_parents(pa, len(x), "pa")
    d_star, h_star = _as_parents(pa_star, len(x), "pa_star")
    imgs, labels, rank = _bank(res)
    gray = x.max(axis=1)
    flat = imgs.reshape(len(imgs), -1)
    out_base = np.empty(len(x), dtype=np.int64)
    for c in np.unique(np.concatenate([d, d_star])):
        members = np.flatnonzero(labels == c)
        rows = np.flatnonzero(d == c)
        if rows.size:
            # nearest exemplar of the observed class (exact match for images this SCM generated)
            dist = ((gray[rows].reshape(len(rows), -1)[:, None, :] - flat[members][None]) ** 2).sum(-1)
            out_base[rows] = members[dist.argmin(1)]
    u = rank[out_base]
    for c in np.unique(d_star):
        members = np.flatnonzero(labels == c)  # sorted by style, one exemplar per style rank
        rows = np.flatnonzero((d_star == c) & (d != c))
        if rows.size:
            out_base[rows] = members[np.abs(rank[members][None, :] - u[rows, None]).argmin(1)]
    return colourise(imgs[out_base], h_star)


def measure_hue(x: np.ndarray, value_threshold: float = 0.5) -> np.ndarray:
    """Programmatic hue oracle (official code): the circular median-like mean hue of pixels with value > threshold.

    Parameters
    ----------
    x : numpy.ndarray, shape (n, 3, H, W)
        Images in ``[0, 1]``.
    value_threshold : float
        Pixels whose HSV value (max channel) exceeds this count.

    Returns
    -------
    numpy.ndarray, shape (n,)
        Hue in ``[0, 1)`` (NaN for an image with no bright pixel).
    """
    import matplotlib.colors as mcolors

    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 4 or x.shape[1] != 3:
        raise ValueError(f"x must have shape (n, 3, H, W), got {x.shape}")
    hsv = mcolors.rgb_to_hsv(np.clip(np.moveaxis(x, 1, -1), 0, 1))
    mask = hsv[..., 2] > value_threshold
    ang = 2 * np.pi * hsv[..., 0]
    c = np.where(mask, np.cos(ang), 0).sum((1, 2))
    s = np.where(mask, np.sin(ang), 0).sum((1, 2))
    out = np.mod(np.arctan2(s, c) / (2 * np.pi), 1.0)
    out[mask.sum((1, 2)) == 0] = np.nan
    return out


def hue_error(pred: np.ndarray, target: np.ndarray, circular: bool = True) -> np.ndarray:
    """Absolute hue error, circular by default (``min(|a - b|, 1 - |a - b|)``, at most 1/2).

    Parameters
    ----------
    pred, target : numpy.ndarray
        Hues in ``[0, 1)``.
    circular : bool
        Circular distance (True) or the paper's plain absolute error (False).

    Returns
    -------
    numpy.ndarray
    """
    diff = np.abs(np.asarray(pred, dtype=np.float64) - np.asarray(target, dtype=np.float64))
    if circular:
        diff = np.mod(diff, 1.0)
        diff = np.minimum(diff, 1.0 - diff)
    return diff


# ---------------------------------------------------------------------------------------------------
# Full support and simulated interventions (Sec. 3.3, eq. 4)
# ---------------------------------------------------------------------------------------------------
def _binned(
    parents: Mapping[str, Any], bins: Mapping[str, Any] | int, discrete: Iterable[str] | None
) -> tuple[list[str], list[np.ndarray], list[np.ndarray], list[int]]:
    if not isinstance(parents, Mapping) or not parents:
        raise TypeError("parents must be a non-empty dict name -> (n,) array")
    names = sorted(parents)
    arrays = [np.asarray(parents[k]).reshape(-1) for k in names]
    n = len(arrays[0])
    if any(len(a) != n for a in arrays):
        raise ValueError("every parent array must have the same length")
    discrete = (
        set(discrete)
        if discrete is not None
        else {k for k, a in zip(names, arrays, strict=True) if np.issubdtype(a.dtype, np.integer)}
    )
    unknown = discrete - set(names)
    if unknown:
        raise ValueError(f"discrete names unknown parent(s) {sorted(unknown)}; parents are {names}")
    codes, edges, sizes = [], [], []
    for k, a in zip(names, arrays, strict=True):
        if k in discrete:
            levels, code = np.unique(a, return_inverse=True)
            codes.append(code)
            edges.append(levels)
            sizes.append(len(levels))
        else:
            nb = bins.get(k, 5) if isinstance(bins, Mapping) else int(bins)
            e = np.histogram_bin_edges(a.astype(np.float64), bins=nb)
            codes.append(np.clip(np.searchsorted(e, a, side="right") - 1, 0, nb - 1))
            edges.append(e)
            sizes.append(nb)
    return names, codes, edges, sizes


def cell_index(
    parents: Mapping[str, Any], bins: Mapping[str, int] | int = 5, discrete: Iterable[str] | None = None
) -> np.ndarray:
    """Flat index of each row's cell in the binned joint (see :func:`joint_histogram`).

    Returns
    -------
    numpy.ndarray of int, shape (n,)
    """
    _, codes, _, sizes = _binned(parents, bins, discrete)
    return np.ravel_multi_index(tuple(codes), tuple(sizes))


def joint_histogram(
    parents: Mapping[str, Any], bins: Mapping[str, int] | int = 5, discrete: Iterable[str] | None = None
) -> tuple[np.ndarray, list[str], list[np.ndarray]]:
    """Counts of the binned parents' joint (discrete parents by class, continuous by equal-width bins).

    Parameters
    ----------
    parents : dict
        Name -> ``(n,)`` values.
    bins : int or dict
        Bins for continuous parents (paper: 5 for hue).
    discrete : iterable of str, optional
        Parents treated as categorical (default: integer-typed ones).

    Returns
    -------
    counts : numpy.ndarray
        One axis per parent, in sorted-name order.
    names : list of str
    edges : list of numpy.ndarray
        Classes (discrete) or bin edges (continuous) per axis.
    """
    names, codes, edges, sizes = _binned(parents, bins, discrete)
    counts = np.zeros(tuple(sizes), dtype=np.int64)
    np.add.at(counts, tuple(codes), 1)
    return counts, names, edges


@dataclass(frozen=True)
class SupportReport(BaseTestResult):
    """The full-support check of Sec. 3.3.

    Attributes
    ----------
    counts : numpy.ndarray
        Joint histogram of the binned parents.
    names : list of str
        Axis names.
    edges : list of numpy.ndarray
        Classes or bin edges per axis.
    statistic : int
        Number of empty cells.
    full_support : bool
        True when no cell is empty.
    """

    counts: np.ndarray
    names: list[str]
    edges: list[np.ndarray]
    statistic: int
    full_support: bool
    pvalue: float = field(default=float("nan"))

    def summary(self) -> pd.DataFrame:
        """One row: cells, empty cells, smallest non-empty count, full support."""
        nz = self.counts[self.counts > 0]
        return pd.DataFrame(
            [
                {
                    "cells": int(self.counts.size),
                    "empty cells": self.statistic,
                    "min non-empty count": int(nz.min()) if nz.size else 0,
                    "full support": self.full_support,
                }
            ]
        )

    def plot(self, ax: Any = None) -> Any:
        """Heat map of the joint counts (2 parents), empty cells marked with a cross."""
        import matplotlib.pyplot as plt

        if self.counts.ndim != 2:
            raise ValueError("plot needs exactly two parents")
        ax = plt.gca() if ax is None else ax
        c = self.counts.astype(float)
        ax.imshow(np.log1p(c).T, origin="lower", aspect="auto", cmap="viridis")
        ii, jj = np.nonzero(c == 0)
        ax.scatter(ii, jj, marker="x", color="#D55E00", s=25, label="empty cell")
        ax.set_xlabel(self.names[0])
        ax.set_ylabel(f"{self.names[1]} bin")
        ax.set_xticks(range(c.shape[0]))
        ax.grid(False)
        ax.set_title(f"{self.statistic} empty of {c.size} cells")
        return ax


def support_report(
    parents: Mapping[str, Any], bins: Mapping[str, int] | int = 5, discrete: Iterable[str] | None = None
) -> SupportReport:
    """Check whether the binned joint of ``parents`` covers the product of the marginals.

    Parameters
    ----------
    parents, bins, discrete
        See :func:`joint_histogram`.

    Returns
    -------
    SupportReport
    """
    counts, names, edges = joint_histogram(parents, bins, discrete)
    empty = int((counts == 0).sum())
    return SupportReport(counts=counts, names=names, edges=edges, statistic=empty, full_support=empty == 0)


def has_full_support(
    parents: Mapping[str, Any], bins: Mapping[str, int] | int = 5, discrete: Iterable[str] | None = None
) -> bool:
    """True when every cell of the binned joint of ``parents`` is populated (see :func:`support_report`)."""
    return support_report(parents, bins, discrete).full_support


def simulated_intervention(
    parents: Mapping[str, Any],
    bins: Mapping[str, int] | int = 5,
    *,
    independent: Iterable[str] | None = None,
    discrete: Iterable[str] | None = None,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Row indices of a simulated intervention making ``independent`` parents independent of the rest (eq. 4).

    Each cell ``c`` of the binned joint gets the target mass ``P_do(c)`` (the product of the marginals
    of the ``independent`` parents times the joint of the others); every sample in ``c`` is repeated
    ``round(w_c / min w)`` times with ``w_c = P_do(c) / count_c`` (the official code's integer
    oversampling). Empty cells cannot be recovered: a ``UserWarning`` says the data lack full support.

    Parameters
    ----------
    parents : dict
        Name -> ``(n,)`` values.
    bins : int or dict
        Bins for continuous parents (paper: 5).
    independent : iterable of str, optional
        Parents to make independent (default: all of them, ``prod_k P(pa_k)``).
    discrete : iterable of str, optional
        Parents treated as categorical.
    seed : int, Generator or None
        Randomness of the final shuffle.

    Returns
    -------
    numpy.ndarray of int
        Shuffled indices into the rows of ``parents``, with repeats.
    """
    names, codes, edges, _ = _binned(parents, bins, discrete)
    counts, _, _ = joint_histogram(parents, bins, discrete)
    indep = set(names if independent is None else independent)
    unknown = indep - set(names)
    if unknown:
        raise ValueError(f"independent names unknown parent(s) {sorted(unknown)}; parents are {names}")
    p = counts / counts.sum()
    axes_i = [i for i, k in enumerate(names) if k in indep]
    axes_rest = tuple(i for i, k in enumerate(names) if k not in indep)
    # P_do = prod_{k in S} P(pa_k) * P(pa_rest)
    target = p.sum(axis=tuple(axes_i), keepdims=True) if axes_i else p.copy()
    for i in axes_i:
        other = tuple(j for j in range(p.ndim) if j != i)
        target = target * p.sum(axis=other, keepdims=True)
    if not axes_rest and axes_i:
        target = target / target.sum()
    w = np.divide(target, counts, out=np.zeros_like(target, dtype=np.float64), where=counts > 0)
    lacking = (counts == 0) & (target > 0)
    if lacking.any():
        warnings.warn(
            f"the parents do not have full support: {int(lacking.sum())} of {counts.size} cells are empty, so the simulated "
            "intervention cannot reach the product of the marginals there",
            UserWarning,
            stacklevel=2,
        )
    wmin = w[counts > 0].min()
    repeats = np.where(counts > 0, np.rint(w / wmin), 0).astype(np.int64)
    per_row = repeats[tuple(codes)]
    idx = np.repeat(np.arange(len(per_row)), per_row)
    return as_generator(seed).permutation(idx)
