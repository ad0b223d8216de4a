"""Toy chest X-rays: a procedural stand-in for CheXpert / MIMIC-CXR with true counterfactuals.

Implements the substitute data of the ``invariance-test`` chapter, part 2, for Ma et al., *AI alignment
in medical imaging: unveiling hidden biases through counterfactual analysis* (Sections 6.3 and
Appendices F.2-G.2). The paper audits chest X-ray classifiers for counterfactual invariance to
self-reported race on CheXpert and MIMIC-CXR, which cannot be shipped. These images keep what the
audit needs:

* label-bearing anatomy: a thorax, two lung fields, a heart silhouette whose cardio-thoracic ratio
  exceeds 0.5 under **cardiomegaly**, a basal fluid level under **effusion** and a bright blob in a lung
  under **consolidation**;
* a sensitive attribute :math:`A` with three imbalanced groups (standing for the paper's white / black /
  asian patients) that leaves a *subtle, disease-irrelevant* visible trace: a shift of the soft-tissue
  density outside the lungs and the heart;
* disease prevalence that differs by group for cardiomegaly and effusion (the paper's Fig. 6 association)
  and **not** for consolidation (the paper's "invariant" column);
* exogenous content :math:`U` (pose, size, anatomy, rib phase, sensor noise) drawn once per image, so the
  **true counterfactual** under :math:`do(A=a')` is the same image re-rendered with the same :math:`U`
  and diseases and the new group: only the trace changes.

The counterfactual holds the disease status fixed, as the paper's :math:`Z` ("all non-sensitive
features") does: it is the image of the same patient with the group's trace swapped, not a new patient
drawn from the other group's prevalence.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..runtime import as_generator
from ..validation import check_grey_images
from .protocol import check_do

__all__ = [
    "DISEASES",
    "GROUPS",
    "ToyCXR",
    "toy_cxr",
    "shortcut_training_set",
    "check_images",
    "prevalence_table",
    "plot_prevalence",
]

#: Diseases drawn into the images, in the column order of ``ToyCXR.D``.
DISEASES = ("cardiomegaly", "effusion", "consolidation")
#: Group names: what each toy group stands for in the paper's data (imbalanced like CheXpert/MIMIC).
GROUPS = ("group 0 (white)", "group 1 (black)", "group 2 (asian)")

_DEFAULT_PREVALENCE = {
    # P(disease | A = a) for a = 0, 1, 2. Consolidation does not depend on A (the paper's invariant column).
    "cardiomegaly": (0.20, 0.40, 0.12),
    "effusion": (0.25, 0.15, 0.45),
    "consolidation": (0.30, 0.30, 0.30),
}
# Soft-tissue density shift per group, times ``trace_strength``: the visible A-trace.
_TRACE = np.array([0.0, 0.12, -0.12])


def check_images(x: np.ndarray, size: int | None = None, name: str = "images") -> np.ndarray:
    """Validate a batch of grey images in [0, 1] and return it as float32 ``(n, H, W)``.

    The same check as every single-channel model's (:func:`cflib.validation.check_grey_images`).

    Parameters
    ----------
    x : array-like
        Images of shape ``(n, H, W)`` or ``(n, 1, H, W)``.
    size : int, optional
        Required side length ``H = W``.
    name : str
        Argument name used in error messages.

    Returns
    -------
    numpy.ndarray
        ``float32`` array of shape ``(n, H, W)``.
    """
    return check_grey_images(x, size, name=name)


def _check_groups(a: np.ndarray, n_groups: int, name: str = "A") -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind not in "iub":
        if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            a = a.astype(int)
        else:
            raise TypeError(f"{name} must hold integer group codes 0..{n_groups - 1}, got dtype {a.dtype}")
    if a.size and (a.min() < 0 or a.max() >= n_groups):
        raise ValueError(
            f"{name} has a group outside 0..{n_groups - 1}: unknown attribute value {int(a.max() if a.max() >= n_groups else a.min())}"
        )
    return a.astype(np.int64)


@dataclass(frozen=True)
class ToyCXR:
    """A batch of toy chest X-rays with everything needed to re-render them.

    Attributes
    ----------
    images : numpy.ndarray
        ``(n, size, size)`` float32 images in [0, 1].
    A : numpy.ndarray
        ``(n,)`` group codes in ``0..n_groups-1``.
    D : numpy.ndarray
        ``(n, 3)`` disease indicators in the order of :data:`DISEASES`.
    U : dict of numpy.ndarray
        Exogenous content per image (pose, size, anatomy, rib phase, noise field).
    size : int
        Side length in pixels.
    trace_strength : float
        Multiplier of the soft-tissue shift that marks the group.
    prevalence : dict
        ``P(disease | A = a)`` used to draw ``D``.
    group_probs : tuple of float
        ``P(A = a)``.
    """

    images: np.ndarray
    A: np.ndarray
    D: np.ndarray
    U: dict = field(repr=False)
    size: int = 32
    trace_strength: float = 1.0
    prevalence: dict = field(default_factory=lambda: dict(_DEFAULT_PREVALENCE), repr=False)
    group_probs: tuple = (0.6, 0.25, 0.15)

    @property
    def n(self) -> int:
        """Number of images."""
        return int(self.A.shape[0])

    @property
    def n_groups(self) -> int:
        """Number of groups of the sensitive attribute."""
        return len(self.group_probs)

    def label(self, disease: str) -> np.ndarray:
        """Binary label of one disease.

        Parameters
        ----------
        disease : str
            One of :data:`DISEASES`.

        Returns
        -------
        numpy.ndarray
            ``(n,)`` integer labels.
        """
        if disease not in DISEASES:
            raise ValueError(f"disease must be one of {DISEASES}, got {disease!r}")
        return self.D[:, DISEASES.index(disease)].copy()

    def render(self, A: int | Sequence[int] | np.ndarray | None = None, idx: np.ndarray | None = None) -> np.ndarray:
        """Re-render images with the same exogenous content and diseases and possibly new groups.

        Parameters
        ----------
        A : int or array-like, optional
            New group per image (or one group for all); ``None`` keeps the observed groups.
        idx : array-like of int, optional
            Subset of images to render (all by default).

        Returns
        -------
        numpy.ndarray
            ``(len(idx), size, size)`` images; with ``A`` the true counterfactuals under ``do(A)``.
        """
        idx = np.arange(self.n) if idx is None else np.asarray(idx)
        a = self.A[idx] if A is None else _check_groups(np.broadcast_to(np.asarray(A), idx.shape), self.n_groups)
        u = {k: v[idx] for k, v in self.U.items()}
        return _render(u, self.D[idx], a, self.size, self.trace_strength)

    def counterfactual(self, a: int | Sequence[int] | np.ndarray) -> np.ndarray:
        """True counterfactual images under ``do(A = a)``.

        Parameters
        ----------
        a : int or array-like of int
            Target group for every image, or one per image.

        Returns
        -------
        numpy.ndarray
            ``(n, size, size)`` images.
        """
        return self.render(A=a)

    def observations(self) -> dict[str, np.ndarray]:
        """The group ``A``, the diseases ``D`` and the image ``"x"`` (the :class:`~cflib.data.protocol.CounterfactualDataset` protocol)."""
        return {"A": self.A.copy(), "D": self.D.copy(), "x": self.images.copy()}

    def true_counterfactual(self, do: Mapping[str, Any], idx: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """True counterfactuals under ``do(A = a)``: same exogenous content and diseases, new group.

        Parameters
        ----------
        do : mapping
            ``{"A": group or one group per unit}``.
        idx : array-like of int, optional
            Restrict to these units.

        Returns
        -------
        dict
            ``{"A", "D", "x"}``.
        """
        idx = np.arange(self.n) if idx is None else np.asarray(idx)
        a = check_do(do, ("A",), len(idx), "ToyCXR").get("A", self.A[idx])
        return {"A": np.asarray(a).astype(self.A.dtype), "D": self.D[idx].copy(), "x": self.render(A=a, idx=idx)}

    def disease_region(self, idx: np.ndarray | None = None) -> np.ndarray:
        """Pixels of the lungs and the heart, where every disease is drawn and the trace never is.

        Parameters
        ----------
        idx : array-like of int, optional
            Subset of images (all by default).

        Returns
        -------
        numpy.ndarray
            ``(len(idx), size, size)`` boolean masks.
        """
        idx = np.arange(self.n) if idx is None else np.asarray(idx)
        u = {k: v[idx] for k, v in self.U.items()}
        return _regions(u, self.size)[0] > 0.5

    def subset(self, idx: np.ndarray) -> ToyCXR:
        """The images at ``idx`` as a new :class:`ToyCXR`.

        Parameters
        ----------
        idx : array-like of int or bool
            Which images to keep.

        Returns
        -------
        ToyCXR
        """
        idx = np.asarray(idx)
        return ToyCXR(
            images=self.images[idx],
            A=self.A[idx],
            D=self.D[idx],
            U={k: v[idx] for k, v in self.U.items()},
            size=self.size,
            trace_strength=self.trace_strength,
            prevalence=self.prevalence,
            group_probs=self.group_probs,
        )


def _soft(inside: np.ndarray, edge: float) -> np.ndarray:
    # Anti-aliased indicator: a logistic ramp of width ``edge`` on a signed "inside" distance.
    return 1.0 / (1.0 + np.exp(-np.clip(inside / edge, -40, 40)))


def _regions(
    u: Mapping[str, np.ndarray], size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Soft masks of (lungs or heart, body, left lung, right lung, heart), the pose-normalised grid and the edge."""
    g = np.linspace(-1.0, 1.0, size, dtype=np.float64)
    yy, xx = np.meshgrid(g, g, indexing="ij")
    yy, xx = yy[None], xx[None]
    s = u["scale"][:, None, None]
    x = (xx - u["dx"][:, None, None]) / s
    y = (yy - u["dy"][:, None, None]) / s
    edge = 1.5 / size

    body = _soft(1.0 - np.sqrt((x / 0.86) ** 2 + (y / 0.95) ** 2), edge)
    lw, lh = u["lung_w"][:, None, None], u["lung_h"][:, None, None]
    lung_l = _soft(1.0 - np.sqrt(((x + 0.40) / lw) ** 2 + ((y + 0.02) / lh) ** 2), edge * 2)
    lung_r = _soft(1.0 - np.sqrt(((x - 0.40) / lw) ** 2 + ((y + 0.02) / lh) ** 2), edge * 2)
    lungs = np.clip(lung_l + lung_r, 0, 1)

    # Heart: its half-width over the thorax half-width (0.86) is the cardio-thoracic ratio.
    hw = u["heart_w"][:, None, None]
    heart = _soft(1.0 - np.sqrt(((x - 0.08) / hw) ** 2 + ((y - 0.30) / 0.26) ** 2), edge * 2)
    return np.maximum(lungs, heart), body, lung_l, lung_r, heart, x, y, edge


def _render(u: dict, D: np.ndarray, A: np.ndarray, size: int, trace_strength: float) -> np.ndarray:
    """Draw images from exogenous content ``u``, diseases ``D`` and groups ``A`` (vectorised over images)."""
    _, body, lung_l, lung_r, heart, x, y, edge = _regions(u, size)
    lungs = np.clip(lung_l + lung_r, 0, 1)

    # Soft tissue carries the group's trace; the lungs and the heart are drawn over it, so the trace
    # never touches a disease-bearing structure.
    tissue = 0.42 + trace_strength * _TRACE[A][:, None, None]
    img = 0.05 + body * (tissue - 0.05)
    ribs = 0.035 * np.sin(2 * np.pi * (y * 4.5 + u["rib_phase"][:, None, None]))
    img = img * (1 - lungs) + lungs * (0.14 + ribs)

    # Effusion: fluid fills the lung bases below a level (both sides or one side).
    eff = D[:, 1][:, None, None].astype(float)
    side = u["eff_side"][:, None, None]
    base = _soft(y - u["eff_level"][:, None, None], edge * 2)
    which = np.where(side == 0, lung_l + lung_r, np.where(side == 1, lung_l, lung_r))
    fluid = eff * base * np.clip(which, 0, 1)
    img = img * (1 - fluid) + fluid * 0.62

    # Consolidation: a bright blob inside one lung field.
    con = D[:, 2][:, None, None].astype(float)
    cx = np.where(u["con_side"] == 1, -0.40, 0.40)[:, None, None] + u["con_dx"][:, None, None]
    cy = u["con_dy"][:, None, None]
    blob = np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (2 * u["con_r"][:, None, None] ** 2))
    img = img + con * 0.42 * blob * lungs

    img = img * (1 - heart) + heart * 0.78
    img = img + u["noise"]
    return np.clip(img, 0.0, 1.0).astype(np.float32)


def toy_cxr(
    n: int,
    size: int = 32,
    *,
    group_probs: Sequence[float] = (0.6, 0.25, 0.15),
    prevalence: dict | None = None,
    trace_strength: float = 1.0,
    noise_sd: float = 0.03,
    seed: int | np.random.Generator | None = 0,
) -> ToyCXR:
    """Draw toy chest X-rays with group-dependent disease prevalence and a visible group trace.

    Parameters
    ----------
    n : int
        Number of images.
    size : int
        Side length in pixels (at least 16).
    group_probs : sequence of float
        ``P(A = a)`` for the three groups; must sum to 1.
    prevalence : dict, optional
        ``{disease: (p_0, p_1, p_2)}`` overriding the default ``P(disease | A = a)``.
    trace_strength : float
        Multiplier of the soft-tissue density shift that marks the group (0 removes the trace:
        then ``A`` has no effect on the image and every classifier is counterfactually invariant).
    noise_sd : float
        Standard deviation of the sensor noise field (part of the exogenous content).
    seed : int, numpy.random.Generator or None
        Randomness.

    Returns
    -------
    ToyCXR
        Images, groups, diseases and the exogenous content that re-renders true counterfactuals.

    Examples
    --------
    >>> data = toy_cxr(8, seed=0)
    >>> x_cf = data.counterfactual(1)   # every image as if it belonged to group 1
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    if not isinstance(size, (int, np.integer)) or size < 16:
        raise ValueError(f"size must be an integer >= 16 (pixels), got {size!r}")
    probs = np.asarray(group_probs, dtype=float)
    if probs.shape != (3,) or np.any(probs <= 0) or abs(probs.sum() - 1) > 1e-6:
        raise ValueError(f"group_probs must be three positive probabilities summing to 1, got {tuple(group_probs)}")
    prev = dict(_DEFAULT_PREVALENCE)
    if prevalence is not None:
        unknown = set(prevalence) - set(DISEASES)
        if unknown:
            raise ValueError(f"prevalence has unknown diseases {sorted(unknown)}; expected keys among {DISEASES}")
        prev.update({k: tuple(float(v) for v in p) for k, p in prevalence.items()})
    for k, p in prev.items():
        if len(p) != 3 or any(not 0 <= v <= 1 for v in p):
            raise ValueError(f"prevalence[{k!r}] must be three probabilities in [0, 1], got {p}")
    if not np.isfinite(trace_strength) or trace_strength < 0:
        raise ValueError(f"trace_strength must be a finite number >= 0, got {trace_strength!r}")
    if not np.isfinite(noise_sd) or noise_sd < 0:
        raise ValueError(f"noise_sd must be a finite number >= 0, got {noise_sd!r}")
    rng = as_generator(seed)
    A = rng.choice(3, size=n, p=probs)
    P = np.array([prev[d] for d in DISEASES])  # (3 diseases, 3 groups)
    D = (rng.random((n, 3)) < P[:, A].T).astype(np.int64)
    cardio = D[:, 0] == 1
    # Heart half-width: CTR = heart_w / 0.86 is ~0.33 when healthy and ~0.55 with cardiomegaly.
    heart_w = np.where(cardio, rng.uniform(0.44, 0.52, n), rng.uniform(0.24, 0.34, n))
    U = {
        "dx": rng.normal(0, 0.03, n),
        "dy": rng.normal(0, 0.03, n),
        "scale": rng.uniform(0.92, 1.04, n),
        "lung_w": rng.uniform(0.27, 0.32, n),
        "lung_h": rng.uniform(0.55, 0.65, n),
        "heart_w": heart_w,
        "rib_phase": rng.uniform(0, 1, n),
        "eff_level": rng.uniform(0.20, 0.34, n),
        "eff_side": rng.integers(0, 3, n),
        "con_side": rng.integers(0, 2, n),
        "con_dx": rng.uniform(-0.08, 0.08, n),
        "con_dy": rng.uniform(-0.35, 0.10, n),
        "con_r": rng.uniform(0.09, 0.13, n),
        "noise": rng.normal(0, noise_sd, (n, size, size)),
    }
    images = _render(U, D, A, int(size), float(trace_strength))
    return ToyCXR(
        images=images,
        A=A.astype(np.int64),
        D=D,
        U=U,
        size=int(size),
        trace_strength=float(trace_strength),
        prevalence=prev,
        group_probs=tuple(float(p) for p in probs),
    )


def shortcut_training_set(
    data: ToyCXR, disease: str, rho: float, *, seed: int | np.random.Generator | None = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A training set in which the group trace predicts the label with strength ``rho``.

    With probability ``rho`` an image is re-rendered as if it came from the group with the highest
    prevalence of ``disease`` (when the disease is present) or the lowest (when absent), which turns the
    data's own group-disease association into a shortcut a classifier can learn. A disease whose
    prevalence does not depend on the group has no association to amplify and is returned unchanged:
    this is how the zoo gets the paper's "invariant" column.

    Parameters
    ----------
    data : ToyCXR
        Source images.
    disease : str
        One of :data:`DISEASES`.
    rho : float
        Shortcut strength in [0, 1]; 0 returns the observed images.
    seed : int, numpy.random.Generator or None
        Randomness of the re-rendering choice.

    Returns
    -------
    images : numpy.ndarray
        ``(n, size, size)`` training images.
    y : numpy.ndarray
        ``(n,)`` labels (the true disease status: only the trace is changed).
    A : numpy.ndarray
        ``(n,)`` groups the images were rendered with.
    """
    if not isinstance(data, ToyCXR):
        raise TypeError(f"data must be a ToyCXR, got {type(data).__name__}")
    if not 0 <= rho <= 1:
        raise ValueError(f"rho must be in [0, 1], got {rho!r}")
    y = data.label(disease)
    p = np.asarray(data.prevalence[disease])
    if rho == 0 or p.max() - p.min() < 1e-9:
        return data.images.copy(), y, data.A.copy()
    rng = as_generator(seed)
    hi, lo = int(np.argmax(p)), int(np.argmin(p))
    swap = rng.random(data.n) < rho
    a_new = np.where(swap, np.where(y == 1, hi, lo), data.A)
    return data.render(A=a_new), y, a_new


def prevalence_table(data: ToyCXR) -> pd.DataFrame:
    """Observed prevalence of each disease per group with a chi-square test of independence.

    The toy counterpart of the paper's Figs. 6 and 7 (race vs disease on CheXpert / MIMIC-CXR).

    Parameters
    ----------
    data : ToyCXR
        Images with groups and diseases.

    Returns
    -------
    pandas.DataFrame
        One row per disease: prevalence in each group, the chi-square statistic, its p-value and the
        group count of each disease status.
    """
    from scipy.stats import chi2_contingency

    if not isinstance(data, ToyCXR):
        raise TypeError(f"data must be a ToyCXR, got {type(data).__name__}")
    rows = []
    for k, d in enumerate(DISEASES):
        # counts[a, v]: images of group a with disease status v, built in one bincount
        counts = np.bincount(data.A * 2 + data.D[:, k], minlength=2 * data.n_groups).reshape(data.n_groups, 2)
        chi2, p, _, _ = chi2_contingency(counts)
        row: dict[str, str | float] = {"disease": d}
        row.update({GROUPS[a]: counts[a, 1] / max(counts[a].sum(), 1) for a in range(data.n_groups)})
        row.update({"chi2": float(chi2), "p-value": float(p)})
        rows.append(row)
    return pd.DataFrame(rows).set_index("disease")


def plot_prevalence(data: ToyCXR, axes=None):
    """Bar plot of P(disease | group) per disease with the chi-square p-value (Figs. 6-7 layout).

    Parameters
    ----------
    data : ToyCXR
        Images with groups and diseases.
    axes : sequence of matplotlib.axes.Axes, optional
        One axes per disease; new ones by default.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    from ..plotting import PALETTE

    table = prevalence_table(data)
    if axes is None:
        _, axes = plt.subplots(1, len(DISEASES), figsize=(3.2 * len(DISEASES), 2.8), sharey=True)
    axes = np.atleast_1d(axes)
    for ax, (d, row) in zip(axes, table.iterrows(), strict=False):
        vals = [row[g] for g in GROUPS[: data.n_groups]]
        ax.bar(range(len(vals)), vals, color=PALETTE[: len(vals)])
        ax.set_xticks(range(len(vals)), [g.split(" (")[1].rstrip(")") for g in GROUPS[: data.n_groups]])
        ax.set_title(f"{d}\n$\\chi^2$ p = {row['p-value']:.2g}", fontsize=9)
    axes[0].set_ylabel("P(disease | group)")
    return axes
