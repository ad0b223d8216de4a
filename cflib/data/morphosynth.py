"""MorphoSynth: a Morpho-MNIST stand-in with true counterfactual images.

Substitute data for the Morpho-MNIST experiments of Melistas et al. (*Benchmarking counterfactual
image generation*, Sec. 4.1 and Fig. 1a). MNIST cannot be downloaded here, so the digits are
rendered from the TrueType fonts that ship with matplotlib (DejaVu, STIX, Computer Modern). What the
substitute keeps is the causal structure and the attribute mechanisms of the paper's data, which are
deepscm's (Pawlowski et al. 2020), reused from :func:`cflib.scm.morpho_attributes`:

* thickness ``t = 0.5 + Gamma(shape 10, rate 5)`` (pixels at the 28x28 scale);
* intensity ``i = 64 + 191 sigmoid(2 (t - 2.5) + 0.5 eps)``;
* digit ``d`` uniform on 0..9, independent;
* image ``x = SetIntensity(SetThickness(glyph(d, style), t), i)``.

Each glyph outline is reduced to its one-pixel skeleton (Zhang-Suen thinning). ``SetThickness`` is a
distance transform: a pixel's stroke value is ``clip(t/2 + 1/2 - dist(pixel, skeleton), 0, 1)``
(anti-aliased disc of diameter ``t`` swept along the skeleton), and ``SetIntensity`` scales the
stroke so that its plateau has grey level ``i``. The exogenous style (font, rotation, shear, scale,
shift) is kept per unit, so the **true counterfactual image** of any intervention on ``d``, ``t`` or
``i`` is obtained by re-rendering with the unit's own noise: the ground truth the paper lacked.
What is lost against MNIST: handwriting variability is replaced by ten font families plus affine
jitter, so absolute metric values are not comparable to the paper's.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from ..runtime import as_generator
from ..scm.examples import morpho_attributes
from ..scm.graph import CausalGraph

__all__ = [
    "FONTS",
    "T_RANGE",
    "I_RANGE",
    "MorphoSynth",
    "make_morphosynth",
    "glyph_skeletons",
    "render_digits",
    "set_thickness",
    "set_intensity",
    "encode_parents",
    "morphosynth_graph",
]

#: Font files (matplotlib's ``mpl-data/fonts/ttf``) used as "writers".
FONTS: tuple[str, ...] = (
    "DejaVuSans.ttf",
    "DejaVuSans-Oblique.ttf",
    "DejaVuSerif.ttf",
    "DejaVuSerif-Italic.ttf",
    "DejaVuSansMono.ttf",
    "STIXGeneral.ttf",
    "STIXGeneralItalic.ttf",
    "cmr10.ttf",
    "cmss10.ttf",
    "cmtt10.ttf",
)

#: Normalisation ranges of the official code (``min/max`` of Morpho-MNIST's t and i).
T_RANGE = (0.876, 6.256)
I_RANGE = (66.6, 254.9)

_GLYPH_RES = 48  # raster size for thinning; the skeleton is then used as a point set
_GLYPH_HEIGHT = 20.0 / 28.0  # MNIST digits are ~20 px tall in a 28 px frame


def morphosynth_graph() -> CausalGraph:
    """The causal graph of Fig. 1a: ``t -> i``, ``t -> x``, ``i -> x``, ``d -> x``.

    Returns
    -------
    CausalGraph
    """
    return CausalGraph({"t": [], "i": ["t"], "d": [], "x": ["t", "i", "d"]})


# ----------------------------------------------------------------------------------------------
# glyphs and skeletons
# ----------------------------------------------------------------------------------------------
def _zhang_suen(mask: np.ndarray) -> np.ndarray:
    """One-pixel skeleton of a binary image (Zhang & Suen 1984), vectorised over pixels."""
    img = np.pad(mask.astype(np.uint8), 1)
    while True:
        changed = False
        for step in (0, 1):
            p = img
            # neighbours P2..P9 clockwise from north
            n = [
                p[:-2, 1:-1],
                p[:-2, 2:],
                p[1:-1, 2:],
                p[2:, 2:],
                p[2:, 1:-1],
                p[2:, :-2],
                p[1:-1, :-2],
                p[:-2, :-2],
            ]
            b = sum(n)
            a = sum(((n[k] == 0) & (n[(k + 1) % 8] == 1)).astype(np.uint8) for k in range(8))
            c = p[1:-1, 1:-1] == 1
            if step == 0:
                cond = (n[0] * n[2] * n[4] == 0) & (n[2] * n[4] * n[6] == 0)
            else:
                cond = (n[0] * n[2] * n[6] == 0) & (n[0] * n[4] * n[6] == 0)
            kill = c & (b >= 2) & (b <= 6) & (a == 1) & cond
            if kill.any():
                img[1:-1, 1:-1][kill] = 0
                changed = True
        if not changed:
            return img[1:-1, 1:-1].astype(bool)


def _glyph_mask(font: str, digit: int, res: int) -> np.ndarray:
    import matplotlib
    from matplotlib.font_manager import FontProperties
    from matplotlib.path import Path
    from matplotlib.textpath import TextPath

    fname = os.path.join(matplotlib.get_data_path(), "fonts", "ttf", font)
    path = TextPath((0, 0), str(digit), size=1, prop=FontProperties(fname=fname))
    v = path.vertices
    lo, hi = v.min(0), v.max(0)
    h = float((hi - lo).max()) * 1.25
    g = (np.arange(res) + 0.5) / res
    gx, gy = np.meshgrid(g, g)
    cx, cy = (lo + hi) / 2
    pts = np.c_[cx + (gx.ravel() - 0.5) * h, cy - (gy.ravel() - 0.5) * h]
    inside = np.zeros(len(pts), bool)
    # Even-odd rule over the outline's polygons: the inner contours of 0, 4, 6, 8, 9 are holes.
    for poly in path.to_polygons():
        inside ^= Path(poly).contains_points(pts)
    return inside.reshape(res, res)


@lru_cache(maxsize=4)
def glyph_skeletons(fonts: tuple[str, ...] = FONTS) -> tuple[np.ndarray, np.ndarray]:
    """Skeleton point sets of the digits 0-9 in each font.

    Parameters
    ----------
    fonts : tuple of str
        Font file names inside matplotlib's ``fonts/ttf`` folder.

    Returns
    -------
    points : numpy.ndarray
        ``(len(fonts), 10, P, 2)`` skeleton coordinates ``(x, y)`` in glyph units: the digit's
        height is 1 and it is centred on the origin; shorter skeletons repeat points up to ``P``.
    counts : numpy.ndarray
        ``(len(fonts), 10)`` number of distinct skeleton points.
    """
    sk: list[list[np.ndarray]] = []
    for font in fonts:
        row = []
        for dgt in range(10):
            skel = _zhang_suen(_glyph_mask(font, dgt, _GLYPH_RES))
            r, c = np.nonzero(skel)
            xy = np.c_[c, -r].astype(float)
            xy -= (xy.min(0) + xy.max(0)) / 2
            height = max(np.ptp(xy[:, 1]), 1.0)
            row.append(xy / height)
        sk.append(row)
    p_max = max(len(s) for row in sk for s in row)
    points = np.zeros((len(fonts), 10, p_max, 2))
    counts = np.zeros((len(fonts), 10), int)
    for f, row in enumerate(sk):
        for dgt, s in enumerate(row):
            points[f, dgt] = s[np.arange(p_max) % len(s)]
            counts[f, dgt] = len(s)
    return points, counts


# ----------------------------------------------------------------------------------------------
# rendering
# ----------------------------------------------------------------------------------------------
def set_thickness(dist: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """Stroke of thickness ``t`` from the distance to the skeleton (anti-aliased).

    Parameters
    ----------
    dist : numpy.ndarray
        ``(n, H, W)`` distance of each pixel to the glyph's skeleton, in pixels.
    t : float or numpy.ndarray
        Thickness in pixels (scalar or length ``n``).

    Returns
    -------
    numpy.ndarray
        Stroke coverage in [0, 1], same shape as ``dist``.
    """
    t = np.asarray(t, dtype=float).reshape(-1, *([1] * (np.ndim(dist) - 1)))
    return np.clip(t / 2 + 0.5 - dist, 0.0, 1.0)


def set_intensity(stroke: np.ndarray, i: np.ndarray | float) -> np.ndarray:
    """Grey levels (0-255) of a stroke whose plateau has intensity ``i``.

    Parameters
    ----------
    stroke : numpy.ndarray
        ``(n, H, W)`` stroke coverage in [0, 1].
    i : float or numpy.ndarray
        Intensity (scalar or length ``n``), in grey levels.

    Returns
    -------
    numpy.ndarray
        Image in [0, 255].
    """
    i = np.asarray(i, dtype=float).reshape(-1, *([1] * (np.ndim(stroke) - 1)))
    return np.clip(i * stroke, 0.0, 255.0)


def _style_matrix(style: Mapping[str, np.ndarray]) -> np.ndarray:
    rot, shear, scale = (np.asarray(style[k], float) for k in ("rotation", "shear", "scale"))
    c, s = np.cos(rot), np.sin(rot)
    # rotation @ shear @ scale, one 2x2 per unit
    a = np.empty((len(rot), 2, 2))
    a[:, 0, 0] = scale * c
    a[:, 0, 1] = scale * (c * shear - s)
    a[:, 1, 0] = scale * s
    a[:, 1, 1] = scale * (s * shear + c)
    return a


def render_digits(
    d: np.ndarray, t: np.ndarray, i: np.ndarray, style: Mapping[str, np.ndarray], size: int = 28, *, chunk: int = 256
) -> np.ndarray:
    """Render digit images from attributes and exogenous style (the true image mechanism).

    Parameters
    ----------
    d : numpy.ndarray
        ``(n,)`` digits in 0..9.
    t : numpy.ndarray
        ``(n,)`` thickness in pixels at the 28x28 scale.
    i : numpy.ndarray
        ``(n,)`` intensity in grey levels.
    style : mapping
        Arrays of length ``n``: ``font`` (index into :data:`FONTS`), ``rotation`` (radians),
        ``shear``, ``scale``, ``dx``, ``dy`` (pixels).
    size : int
        Image side in pixels (thickness and shifts scale with ``size / 28``).
    chunk : int
        Units rendered at once (memory ~ ``chunk * size^2 * P`` floats).

    Returns
    -------
    numpy.ndarray
        ``(n, 1, size, size)`` float32 images in [0, 255].
    """
    import torch

    d = np.asarray(d).astype(int)
    t = np.asarray(t, float)
    i = np.asarray(i, float)
    n = len(d)
    if t.shape != (n,) or i.shape != (n,):
        raise ValueError(f"d, t and i must be 1-D arrays of the same length, got {d.shape}, {t.shape}, {i.shape}")
    if np.any((d < 0) | (d > 9)):
        raise ValueError("d must hold digits in 0..9")
    if not isinstance(size, (int, np.integer)) or size < 8:
        raise ValueError(f"size must be an integer >= 8, got {size!r}")
    points, _ = glyph_skeletons()
    font = np.asarray(style["font"]).astype(int)
    px = size / 28.0
    a = _style_matrix(style) * (_GLYPH_HEIGHT * size)
    shift = np.c_[np.asarray(style["dx"], float), np.asarray(style["dy"], float)] * px
    g = np.arange(size) + 0.5
    gx, gy = np.meshgrid(g, g)
    grid = torch.from_numpy(np.c_[gx.ravel(), gy.ravel()].astype(np.float32))
    out = np.empty((n, 1, size, size), np.float32)
    centre = np.array([size / 2, size / 2])
    for s in range(0, n, chunk):
        sl = slice(s, min(s + chunk, n))
        p = points[font[sl], d[sl]]  # (b, P, 2) glyph units, y up
        p = np.einsum("bij,bpj->bpi", a[sl], p)
        p[..., 1] *= -1  # image rows grow downwards
        p += centre + shift[sl, None, :]
        dist_t = torch.cdist(grid.expand(len(p), -1, -1), torch.from_numpy(p.astype(np.float32))).amin(-1)
        dist = dist_t.numpy().reshape(-1, size, size)
        out[sl, 0] = set_intensity(set_thickness(dist, t[sl] * px), i[sl])
    return out


def encode_parents(t: np.ndarray, i: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Parents of the image as the models see them: ``[t, i]`` scaled to [-1, 1] and one-hot ``d``.

    Parameters
    ----------
    t, i, d : numpy.ndarray
        Thickness, intensity and digit, length ``n`` each.

    Returns
    -------
    numpy.ndarray
        ``(n, 12)`` float32, as in the official code (min-max scaling with :data:`T_RANGE`,
        :data:`I_RANGE`).
    """
    t = np.asarray(t, float).reshape(-1)
    i = np.asarray(i, float).reshape(-1)
    d = np.asarray(d).reshape(-1).astype(int)
    if not (len(t) == len(i) == len(d)):
        raise ValueError(f"t, i and d must have the same length, got {len(t)}, {len(i)}, {len(d)}")
    tn = 2 * (t - T_RANGE[0]) / (T_RANGE[1] - T_RANGE[0]) - 1
    inn = 2 * (i - I_RANGE[0]) / (I_RANGE[1] - I_RANGE[0]) - 1
    return np.c_[tn, inn, np.eye(10)[d]].astype(np.float32)


# ----------------------------------------------------------------------------------------------
# the data set
# ----------------------------------------------------------------------------------------------
@dataclass
class MorphoSynth:
    """A MorphoSynth sample: images, attributes, and the exogenous noise behind them.

    Attributes
    ----------
    x : numpy.ndarray
        ``(n, 1, size, size)`` float32 images in [0, 255].
    t, i : numpy.ndarray
        Thickness (pixels at 28x28 scale) and intensity (grey levels).
    d : numpy.ndarray
        Digit labels (int).
    noise : dict
        Exogenous noise of the attribute SCM: ``{"t": gamma draw, "i": eps}``.
    style : dict
        Exogenous image noise per unit: ``font, rotation, shear, scale, dx, dy``.
    size : int
        Image side.
    """

    x: np.ndarray
    t: np.ndarray
    i: np.ndarray
    d: np.ndarray
    noise: dict[str, np.ndarray]
    style: dict[str, np.ndarray]
    size: int
    graph: CausalGraph = field(default_factory=morphosynth_graph)

    def __len__(self) -> int:
        return len(self.d)

    @property
    def parents(self) -> np.ndarray:
        """``(n, 12)`` encoded parents of the image (see :func:`encode_parents`)."""
        return encode_parents(self.t, self.i, self.d)

    def observations(self) -> dict[str, np.ndarray]:
        """The observed variables as a dict ``{"t", "i", "d", "x"}`` (the input of a DeepSCM)."""
        return {"t": self.t.copy(), "i": self.i.copy(), "d": self.d.copy(), "x": self.x.copy()}

    def subset(self, idx: np.ndarray | slice | Sequence[int]) -> MorphoSynth:
        """The units ``idx`` (with their noise) as a new :class:`MorphoSynth`."""
        idx = np.arange(len(self))[idx]
        return MorphoSynth(
            x=self.x[idx],
            t=self.t[idx],
            i=self.i[idx],
            d=self.d[idx],
            noise={k: v[idx] for k, v in self.noise.items()},
            style={k: v[idx] for k, v in self.style.items()},
            size=self.size,
        )

    def true_counterfactual(
        self, do: Mapping[str, np.ndarray | float], idx: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """The true counterfactual of each unit under ``do``: abduction is exact here.

        The attributes follow the SCM (``do(t)`` changes ``i`` through the unit's own ``eps``;
        ``do(i)`` leaves ``t``; ``do(d)`` leaves both), and the image is re-rendered with the unit's
        own style.

        Parameters
        ----------
        do : mapping
            ``{"t" | "i" | "d": scalar or array of length n}``.
        idx : array of int, optional
            Restrict to these units.

        Returns
        -------
        dict
            ``{"t", "i", "d", "x"}`` counterfactual values.

        Raises
        ------
        ValueError
            An unknown variable (``x`` cannot be intervened on here) or values of the wrong length.
        """
        unit = self if idx is None else self.subset(idx)
        n = len(unit)
        fixed: dict[str, np.ndarray] = {}  # do's values, one per unit
        for k in do:
            if k not in ("t", "i", "d"):
                raise ValueError(f"cannot intervene on {k!r}: MorphoSynth's attributes are 't', 'i' and 'd'")
            v = np.asarray(do[k], float)
            if v.ndim > 1 or (v.ndim == 1 and len(v) != n):
                raise ValueError(f"do[{k!r}] must be a scalar or have length {n}, got shape {v.shape}")
            fixed[k] = np.broadcast_to(v, (n,)).copy()
        attrs = morpho_attributes().predict(unit.noise, {k: v for k, v in fixed.items() if k in ("t", "i")})
        d = fixed["d"].astype(int) if "d" in fixed else unit.d.copy()
        if np.any((d < 0) | (d > 9)):
            raise ValueError("do['d'] must hold digits in 0..9")
        x = render_digits(d, attrs["t"], attrs["i"], unit.style, unit.size)
        return {"t": attrs["t"], "i": attrs["i"], "d": d, "x": x}

    def render(self, t: np.ndarray, i: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Render each unit's style with the given attributes (the true image mechanism)."""
        return render_digits(np.asarray(d), np.asarray(t, float), np.asarray(i, float), self.style, self.size)

    def fingerprint(self) -> str:
        """A short hash of the images (to check that two runs drew the same data)."""
        return hashlib.sha256(np.ascontiguousarray(self.x).tobytes()).hexdigest()[:12]


def make_morphosynth(
    n: int,
    size: int = 28,
    *,
    seed: int | np.random.Generator | None = 0,
    fonts: Sequence[int] | None = None,
    rotation_deg: float = 10.0,
    shear: float = 0.15,
    scale_range: tuple[float, float] = (0.85, 1.1),
    shift_px: float = 1.0,
) -> MorphoSynth:
    """Draw ``n`` units from the MorphoSynth SCM.

    Parameters
    ----------
    n : int
        Number of images.
    size : int
        Image side in pixels (28 as MNIST, 32 as the paper's padded MNIST, 16 for quick tests).
    seed : int or numpy.random.Generator
        Randomness (same seed, same images).
    fonts : sequence of int, optional
        Indices into :data:`FONTS` to draw the writer from (all by default).
    rotation_deg, shear, shift_px : float
        Standard deviations of the style jitter (degrees, shear factor, pixels at 28x28 scale).
    scale_range : (float, float)
        Uniform range of the glyph scale.

    Returns
    -------
    MorphoSynth
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    rng = as_generator(seed)
    font_ids = np.arange(len(FONTS)) if fonts is None else np.asarray(fonts, int)
    if font_ids.size == 0 or font_ids.min() < 0 or font_ids.max() >= len(FONTS):
        raise ValueError(f"fonts must be indices into FONTS (0..{len(FONTS) - 1})")
    attrs, noise = morpho_attributes().sample(int(n), seed=rng, return_noise=True)
    d = rng.integers(0, 10, size=n)
    style = {
        "font": rng.choice(font_ids, size=n),
        "rotation": np.deg2rad(rotation_deg) * rng.standard_normal(n),
        "shear": shear * rng.standard_normal(n),
        "scale": rng.uniform(*scale_range, size=n),
        "dx": shift_px * rng.standard_normal(n),
        "dy": shift_px * rng.standard_normal(n),
    }
    x = render_digits(d, attrs["t"], attrs["i"], style, size)
    return MorphoSynth(x=x, t=attrs["t"], i=attrs["i"], d=d, noise=noise, style=style, size=int(size))
