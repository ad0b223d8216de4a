"""SmileyFaces: a CelebA stand-in with two independent, imbalanced binary attributes.

Substitute data for the CelebA experiments of Melistas et al. (*Benchmarking counterfactual image
generation*, Sec. 4.2, Fig. 1b: ``smiling -> image <- eyeglasses``). CelebA cannot be downloaded
here, so faces are drawn procedurally in RGB. What the substitute keeps: two binary parents that
are independent of each other and imbalanced like CelebA's (Smiling about 48 %, Eyeglasses rare,
about 7 %), a *small* image region per attribute (a mouth, a pair of rings), and nuisance factors
(skin, hair, background, pose) that a VAE will blur. What it loses: real faces' detail and
variability, so absolute metric values are not comparable to the paper's.

The nuisances are the exogenous noise of the image; they are stored per unit so that the **true
counterfactual** of ``do(s)`` or ``do(e)`` is the same face re-drawn with the attribute changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..runtime import as_generator
from ..scm.graph import CausalGraph

__all__ = ["SmileyFaces", "make_smileyfaces", "render_faces", "smileyfaces_graph"]

_SKIN = np.array([[0.96, 0.80, 0.69], [0.87, 0.67, 0.52], [0.70, 0.50, 0.36], [0.45, 0.31, 0.22], [0.98, 0.87, 0.77]])
_HAIR = np.array([[0.10, 0.07, 0.05], [0.45, 0.30, 0.15], [0.85, 0.70, 0.35], [0.55, 0.20, 0.10], [0.35, 0.35, 0.35]])


def smileyfaces_graph() -> CausalGraph:
    """The causal graph of Fig. 1b: ``s -> x <- e`` (smiling, eyeglasses).

    Returns
    -------
    CausalGraph
    """
    return CausalGraph({"s": [], "e": [], "x": ["s", "e"]})


def _cover(signed_dist: np.ndarray) -> np.ndarray:
    """Anti-aliased coverage of a shape from its signed distance (negative inside), in pixels."""
    return np.clip(0.5 - signed_dist, 0.0, 1.0)


def _paint(img: np.ndarray, alpha: np.ndarray, colour: np.ndarray) -> np.ndarray:
    # img (n, 3, H, W), alpha (n, H, W), colour (n, 3)
    a = alpha[:, None]
    return img * (1 - a) + a * colour[:, :, None, None]


def _curve_distance(gx: np.ndarray, gy: np.ndarray, px: np.ndarray, py: np.ndarray) -> np.ndarray:
    # distance of each pixel to a polyline sampled densely: (n, P) points -> (n, H, W)
    d2 = (gx[None, :, :, None] - px[:, None, None, :]) ** 2 + (gy[None, :, :, None] - py[:, None, None, :]) ** 2
    return np.sqrt(d2.min(-1))


def render_faces(
    s: np.ndarray, e: np.ndarray, style: Mapping[str, np.ndarray], size: int = 32, *, chunk: int = 512
) -> np.ndarray:
    """Draw faces from the attributes and the per-unit nuisances (the true image mechanism).

    Parameters
    ----------
    s, e : numpy.ndarray
        ``(n,)`` binary smiling and eyeglasses indicators.
    style : mapping
        Per-unit nuisances as drawn by :func:`make_smileyfaces`.
    size : int
        Image side in pixels (the geometry is defined at 32 px and scaled).
    chunk : int
        Units drawn at once.

    Returns
    -------
    numpy.ndarray
        ``(n, 3, size, size)`` float32 images in [0, 1].
    """
    s = np.asarray(s).astype(int)
    e = np.asarray(e).astype(int)
    n = len(s)
    if e.shape != (n,) or s.ndim != 1:
        raise ValueError(f"s and e must be 1-D arrays of the same length, got {s.shape} and {e.shape}")
    if np.any((s != 0) & (s != 1)) or np.any((e != 0) & (e != 1)):
        raise ValueError("s and e must be binary (0 or 1)")
    if not isinstance(size, (int, np.integer)) or size < 16:
        raise ValueError(f"size must be an integer >= 16, got {size!r}")
    k = size / 32.0
    g = (np.arange(size) + 0.5) / k  # pixel centres in 32-px units
    gx, gy = np.meshgrid(g, g)
    out = np.empty((n, 3, size, size), np.float32)
    u = np.linspace(-1, 1, 15)
    for a in range(0, n, chunk):
        sl = slice(a, min(a + chunk, n))
        st = {key: np.asarray(v)[sl] for key, v in style.items()}
        m = len(st["cx"])
        cx, cy, r = st["cx"][:, None, None], st["cy"][:, None, None], st["radius"][:, None, None]
        # background: vertical gradient between two colours
        w = (gy / 32.0)[None, None]
        img = st["bg_top"][:, :, None, None] * (1 - w) + st["bg_bottom"][:, :, None, None] * w
        img = np.broadcast_to(img, (m, 3, size, size)).copy()
        dist_c = np.sqrt((gx - cx) ** 2 + (gy - cy) ** 2)
        # hair: a larger disc behind the face, visible above it
        hair = _cover((dist_c - (r + st["hair"][:, None, None])) * k) * (gy < cy - 0.2 * r)
        img = _paint(img, hair, _HAIR[st["hair_colour"]])
        img = _paint(img, _cover((dist_c - r) * k), st["skin"])
        # eyes
        ex = st["eye_spacing"][:, None, None]
        ey = cy - 0.25 * r
        d_left = np.sqrt((gx - (cx - ex)) ** 2 + (gy - ey) ** 2)
        d_right = np.sqrt((gx - (cx + ex)) ** 2 + (gy - ey) ** 2)
        dark = np.full((m, 3), 0.08)
        img = _paint(img, _cover((np.minimum(d_left, d_right) - 1.3) * k), dark)
        # mouth: a smile bends the corners up by `curve` pixels, a neutral mouth is flat
        half = st["mouth_width"][:, None]
        px = st["cx"][:, None] + half * u[None]
        depth = np.where(s[sl] == 1, st["smile_depth"], 0.0)[:, None]
        py = (st["cy"] + 0.45 * st["radius"])[:, None] + depth * (1 - u[None] ** 2) - 0.5 * depth
        mouth = _cover((_curve_distance(gx, gy, px, py) - 0.9) * k)
        img = _paint(img, mouth, np.tile([[0.55, 0.05, 0.08]], (m, 1)))
        # eyeglasses: two rings around the eyes and a bridge
        ring = np.minimum(np.abs(d_left - 3.0), np.abs(d_right - 3.0))
        bridge_x = np.abs(gx - cx) - (ex - 3.0)
        bridge = np.maximum(bridge_x, np.abs(gy - ey) - 0.45)
        glass = _cover((np.minimum(ring - 0.55, bridge)) * k) * (e[sl] == 1)[:, None, None]
        img = _paint(img, glass, st["frame"])
        out[sl] = np.clip(img, 0, 1)
    return out


@dataclass
class SmileyFaces:
    """A SmileyFaces sample: RGB images, the two attributes and the nuisances behind each face.

    Attributes
    ----------
    x : numpy.ndarray
        ``(n, 3, size, size)`` float32 in [0, 1].
    s, e : numpy.ndarray
        Smiling and eyeglasses (0/1 ints).
    style : dict
        Per-unit nuisances (the image's exogenous noise).
    size : int
        Image side.
    """

    x: np.ndarray
    s: np.ndarray
    e: np.ndarray
    style: dict[str, np.ndarray]
    size: int
    graph: CausalGraph = field(default_factory=smileyfaces_graph)

    def __len__(self) -> int:
        return len(self.s)

    @property
    def parents(self) -> np.ndarray:
        """``(n, 2)`` float32 parents of the image, ``[s, e]``."""
        return np.c_[self.s, self.e].astype(np.float32)

    def observations(self) -> dict[str, np.ndarray]:
        """The observed variables ``{"s", "e", "x"}`` (the input of a DeepSCM)."""
        return {"s": self.s.copy(), "e": self.e.copy(), "x": self.x.copy()}

    def subset(self, idx: np.ndarray | slice | Sequence[int]) -> SmileyFaces:
        """The units ``idx`` as a new :class:`SmileyFaces`."""
        idx = np.arange(len(self))[idx]
        return SmileyFaces(
            x=self.x[idx],
            s=self.s[idx],
            e=self.e[idx],
            style={k: v[idx] for k, v in self.style.items()},
            size=self.size,
        )

    def render(self, s: np.ndarray, e: np.ndarray) -> np.ndarray:
        """Draw each unit's face with the given attributes (the true image mechanism)."""
        return render_faces(np.asarray(s), np.asarray(e), self.style, self.size)

    def true_counterfactual(
        self, do: Mapping[str, np.ndarray | float], idx: np.ndarray | None = None
    ) -> dict[str, np.ndarray]:
        """The true counterfactual face of each unit under ``do`` (same nuisances, new attributes).

        Parameters
        ----------
        do : mapping
            ``{"s" | "e": 0/1 scalar or array of length n}``.
        idx : array of int, optional
            Restrict to these units.

        Returns
        -------
        dict
            ``{"s", "e", "x"}``.
        """
        unit = self if idx is None else self.subset(idx)
        n = len(unit)
        vals = {"s": unit.s.copy(), "e": unit.e.copy()}
        for k, v in do.items():
            if k not in vals:
                raise ValueError(f"cannot intervene on {k!r}: SmileyFaces' attributes are 's' and 'e'")
            v = np.asarray(v)
            if v.ndim > 1 or (v.ndim == 1 and len(v) != n):
                raise ValueError(f"do[{k!r}] must be a scalar or have length {n}, got shape {v.shape}")
            vals[k] = np.broadcast_to(v, (n,)).astype(int).copy()
        return {**vals, "x": unit.render(vals["s"], vals["e"])}


def make_smileyfaces(
    n: int,
    size: int = 32,
    *,
    p_smile: float = 0.48,
    p_glasses: float = 0.07,
    seed: int | np.random.Generator | None = 0,
) -> SmileyFaces:
    """Draw ``n`` faces with independent ``s ~ Bernoulli(p_smile)`` and ``e ~ Bernoulli(p_glasses)``.

    Parameters
    ----------
    n : int
        Number of faces.
    size : int
        Image side (32 by default; CelebA in the paper is 64).
    p_smile, p_glasses : float
        Attribute prevalences (CelebA: about 0.48 and 0.07).
    seed : int or numpy.random.Generator
        Randomness.

    Returns
    -------
    SmileyFaces
    """
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
        raise ValueError(f"n must be a positive integer, got {n!r}")
    for name, p in (("p_smile", p_smile), ("p_glasses", p_glasses)):
        if not 0 < p < 1:
            raise ValueError(f"{name} must lie strictly between 0 and 1, got {p}")
    rng = as_generator(seed)
    s = (rng.random(n) < p_smile).astype(int)
    e = (rng.random(n) < p_glasses).astype(int)
    skin = _SKIN[rng.integers(0, len(_SKIN), n)] + 0.04 * rng.standard_normal((n, 3))
    style = {
        "cx": 16 + 1.2 * rng.standard_normal(n),
        "cy": 17 + 1.0 * rng.standard_normal(n),
        "radius": rng.uniform(10.0, 12.0, n),
        "hair": rng.uniform(0.8, 2.5, n),
        "hair_colour": rng.integers(0, len(_HAIR), n),
        "skin": np.clip(skin, 0, 1),
        "bg_top": rng.uniform(0.2, 0.95, (n, 3)),
        "bg_bottom": rng.uniform(0.2, 0.95, (n, 3)),
        "eye_spacing": rng.uniform(3.8, 4.8, n),
        "mouth_width": rng.uniform(3.5, 5.0, n),
        "smile_depth": rng.uniform(2.6, 3.6, n),
        "frame": np.clip(rng.uniform(0.0, 0.25, (n, 1)) + 0.05 * rng.standard_normal((n, 3)), 0, 1),
    }
    x = render_faces(s, e, style, size)
    return SmileyFaces(x=x, s=s, e=e, style=style, size=int(size))
