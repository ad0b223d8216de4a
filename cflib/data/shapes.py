"""A 2-D shapes scene standing in for 3D Shapes (Monteiro et al., ICLR 2023, Sec. 4.2, App. E).

**Substitute data.** The paper uses DeepMind's 3D Shapes (480 000 rendered 64x64 images, six
independent discrete factors, no exogenous noise). It cannot be downloaded here; this module renders
a flat analogue with the same six factors and the same property that matters for the paper's
Table 5: the image is a *deterministic* function of its parents, so there is nothing to abduct
and the true counterfactual is simply a re-rendering with the changed factor.

Scene: a pale wall above a darker floor, separated by a horizon tilted by the orientation; a
saturated object (circle, square or triangle, scaled and rotated by the orientation) in the middle.
The wall and floor are drawn with lower saturation/value than the object, so an object of the same
hue as its background stays visible. Images are anti-aliased by 4x supersampling.

Factors (default sizes, 4*4*4*3*3*4 = 2 304 images): ``floor_hue``, ``wall_hue``, ``object_hue``
(4 hues each), ``scale`` (3), ``shape`` (3), ``orientation`` (4).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from cflib.runtime import as_generator

from .protocol import check_do

__all__ = [
    "FACTORS",
    "DEFAULT_SIZES",
    "ShapesScene",
    "render_shapes",
    "shapes_scene",
    "true_counterfactual",
    "check_factors",
    "encode_factors",
    "factor_groups",
]

#: Factor names, in the order of the paper's Table 5 columns (alphabetical).
FACTORS = ("floor_hue", "object_hue", "orientation", "scale", "shape", "wall_hue")

#: Number of levels per factor.
DEFAULT_SIZES = {"floor_hue": 4, "object_hue": 4, "orientation": 4, "scale": 3, "shape": 3, "wall_hue": 4}

_SHAPE_NAMES = ("circle", "square", "triangle")


def _hsv(h: np.ndarray, s: float, v: float) -> np.ndarray:
    k = np.mod(np.array([5.0, 3.0, 1.0]) + 6.0 * np.mod(h, 1.0)[..., None], 6.0)
    return v - v * s * np.clip(np.minimum(k, 4.0 - k), 0.0, 1.0)


def check_factors(
    parents: Mapping[str, Any], sizes: Mapping[str, int] | None = None, name: str = "parents"
) -> dict[str, np.ndarray]:
    """Validate a dict of factor values (all six, integer levels within range, equal lengths).

    Parameters
    ----------
    parents : dict
        Factor name -> ``(n,)`` integer levels.
    sizes : dict, optional
        Levels per factor (default :data:`DEFAULT_SIZES`).
    name : str
        Argument name for messages.

    Returns
    -------
    dict of numpy.ndarray
    """
    sizes = dict(DEFAULT_SIZES if sizes is None else sizes)
    if not isinstance(parents, Mapping):
        raise TypeError(f"{name} must be a dict factor -> levels")
    unknown = set(parents) - set(FACTORS)
    if unknown:
        raise ValueError(f"{name} has unknown factor(s) {sorted(unknown)}; the factors are {list(FACTORS)}")
    missing = set(FACTORS) - set(parents)
    if missing:
        raise ValueError(f"{name} is missing factor(s) {sorted(missing)}")
    out = {k: np.asarray(parents[k]).reshape(-1).astype(np.int64) for k in FACTORS}
    n = len(out[FACTORS[0]])
    for k, v in out.items():
        if len(v) != n:
            raise ValueError(f"{name}: factor {k!r} has {len(v)} values, expected {n}")
        if v.size and (v.min() < 0 or v.max() >= sizes[k]):
            raise ValueError(
                f"{name}: factor {k!r} must be an integer level in 0..{sizes[k] - 1}, got values in [{v.min()}, {v.max()}]"
            )
    return out


def render_shapes(
    parents: Mapping[str, Any], resolution: int = 16, sizes: Mapping[str, int] | None = None, supersample: int = 4
) -> np.ndarray:
    """Render scenes from their factors: the (deterministic) image mechanism and the true counterfactual.

    Parameters
    ----------
    parents : dict
        Factor name -> ``(n,)`` integer levels.
    resolution : int
        Image side.
    sizes : dict, optional
        Levels per factor.
    supersample : int
        Anti-aliasing factor.

    Returns
    -------
    numpy.ndarray, shape (n, 3, resolution, resolution), float32 in [0, 1]
    """
    sizes = dict(DEFAULT_SIZES if sizes is None else sizes)
    f = check_factors(parents, sizes)
    n = len(f["shape"])
    out = np.empty((n, 3, int(resolution), int(resolution)), dtype=np.float32)
    for start in range(0, n, 128):  # chunks bound the supersampled buffers to a few MB
        sl = slice(start, start + 128)
        out[sl] = _render_chunk({k: v[sl] for k, v in f.items()}, int(resolution), sizes, int(supersample))
    return out


def _render_chunk(f: dict[str, np.ndarray], resolution: int, sizes: dict[str, int], supersample: int) -> np.ndarray:
    n = len(f["shape"])
    r = resolution * supersample
    t = ((np.arange(r) + 0.5) / r).astype(np.float32)
    yy, xx = np.meshgrid(t, t, indexing="ij")
    # orientation: angle in [-35, 35] degrees for the horizon and the object
    ang = np.deg2rad(-35 + 70 * f["orientation"] / max(sizes["orientation"] - 1, 1)).astype(np.float32)
    horizon = 0.55 + (xx[None] - 0.5) * np.tan(ang)[:, None, None]
    floor = yy[None] > horizon
    cx, cy = 0.5, 0.55
    scale = (0.16 + 0.14 * f["scale"] / max(sizes["scale"] - 1, 1)).astype(np.float32)
    dx, dy = xx[None] - cx, yy[None] - cy
    c, s = np.cos(ang)[:, None, None], np.sin(ang)[:, None, None]
    u = (c * dx + s * dy) / scale[:, None, None]
    v = (-s * dx + c * dy) / scale[:, None, None]
    circle = u**2 + v**2 <= 1.0
    square = (np.abs(u) <= 0.85) & (np.abs(v) <= 0.85)
    triangle = (v <= 0.75) & (v >= -1.0 + 2 * np.abs(u)) & (np.abs(u) <= 0.95)
    shp = f["shape"][:, None, None]
    obj = np.where(shp == 0, circle, np.where(shp == 1, square, triangle))
    hues = {k: f[k] / sizes[k] for k in ("floor_hue", "wall_hue", "object_hue")}
    wall_rgb = _hsv(hues["wall_hue"], 0.35, 0.9).astype(np.float32)
    floor_rgb = _hsv(hues["floor_hue"], 0.6, 0.55).astype(np.float32)
    obj_rgb = _hsv(hues["object_hue"] + 0.5 / sizes["object_hue"], 1.0, 1.0).astype(np.float32)
    img = np.where(floor[..., None], floor_rgb[:, None, None, :], wall_rgb[:, None, None, :])
    img = np.where(obj[..., None], obj_rgb[:, None, None, :], img)
    img = img.reshape(n, resolution, supersample, resolution, supersample, 3).mean((2, 4))
    return np.moveaxis(img, -1, 1).astype(np.float32)


@dataclass(frozen=True)
class ShapesScene:
    """A shapes-scene data set.

    Attributes
    ----------
    x : numpy.ndarray, shape (n, 3, H, W)
    parents : dict of numpy.ndarray
        Factor -> integer levels.
    sizes : dict
        Levels per factor.
    resolution : int
    """

    x: np.ndarray
    parents: dict[str, np.ndarray]
    sizes: dict[str, int]
    resolution: int

    def __len__(self) -> int:
        return len(self.x)

    @property
    def pa(self) -> np.ndarray:
        """One-hot encoding of all factors (in :data:`FACTORS` order), for the models."""
        return encode_factors(self.parents, self.sizes)

    def observations(self) -> dict[str, np.ndarray]:
        """The factors and the image ``"x"`` (the :class:`~cflib.data.protocol.CounterfactualDataset` protocol)."""
        return {**{k: v.copy() for k, v in self.parents.items()}, "x": self.x.copy()}

    def true_counterfactual(self, do: Mapping[str, Any], idx: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The true counterfactual of each unit under ``do``: the scene re-rendered with the new factors.

        Parameters
        ----------
        do : mapping
            Factor -> level (scalar or one per unit).
        idx : array of int, optional
            Restrict to these units.

        Returns
        -------
        dict
            Every factor and ``"x"``.
        """
        unit = self if idx is None else self.subset(idx)
        vals = {
            **{k: v.copy() for k, v in unit.parents.items()},
            **check_do(do, tuple(unit.parents), len(unit), "the shapes scene"),
        }
        vals = {k: v.astype(np.int64) for k, v in vals.items()}
        return {
            **vals,
            "x": true_counterfactual(unit.x, unit.parents, vals, resolution=unit.resolution, sizes=unit.sizes),
        }

    def subset(self, idx: np.ndarray) -> ShapesScene:
        """Rows ``idx`` as a new data set."""
        idx = np.asarray(idx)
        return ShapesScene(self.x[idx], {k: v[idx] for k, v in self.parents.items()}, self.sizes, self.resolution)

    def split(
        self, test_fraction: float = 0.1, seed: int | np.random.Generator | None = 1
    ) -> tuple[ShapesScene, ShapesScene]:
        """Random train/test split (paper: 90/10)."""
        if not 0 < test_fraction < 1:
            raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
        perm = as_generator(seed).permutation(len(self))
        k = int(round(test_fraction * len(self)))
        return self.subset(np.sort(perm[k:])), self.subset(np.sort(perm[:k]))


def encode_factors(parents: Mapping[str, Any], sizes: Mapping[str, int] | None = None) -> np.ndarray:
    """One-hot encode the six factors (in :data:`FACTORS` order) into a float32 matrix."""
    sizes = dict(DEFAULT_SIZES if sizes is None else sizes)
    f = check_factors(parents, sizes)
    n = len(f["shape"])
    blocks = []
    for k in FACTORS:
        b = np.zeros((n, sizes[k]), dtype=np.float32)
        b[np.arange(n), f[k]] = 1.0
        blocks.append(b)
    return np.concatenate(blocks, 1)


def factor_groups(sizes: Mapping[str, int] | None = None) -> dict[str, list[int]]:
    """Columns of :func:`encode_factors` belonging to each factor."""
    sizes = dict(DEFAULT_SIZES if sizes is None else sizes)
    out, start = {}, 0
    for k in FACTORS:
        out[k] = list(range(start, start + sizes[k]))
        start += sizes[k]
    return out


def shapes_scene(sizes: Mapping[str, int] | None = None, resolution: int = 16) -> ShapesScene:
    """Every combination of the factors, rendered once (as 3D Shapes: one image per combination).

    Parameters
    ----------
    sizes : dict, optional
        Levels per factor (default :data:`DEFAULT_SIZES`; unknown names are an error).
    resolution : int
        Image side.

    Returns
    -------
    ShapesScene
    """
    sizes = dict(DEFAULT_SIZES) if sizes is None else {**DEFAULT_SIZES, **_check_sizes(sizes)}
    grids = np.meshgrid(*[np.arange(sizes[k]) for k in FACTORS], indexing="ij")
    parents = {k: g.reshape(-1) for k, g in zip(FACTORS, grids, strict=True)}
    return ShapesScene(render_shapes(parents, resolution, sizes), parents, sizes, int(resolution))


def _check_sizes(sizes: Mapping[str, int]) -> dict[str, int]:
    unknown = set(sizes) - set(FACTORS)
    if unknown:
        raise ValueError(f"sizes has unknown factor(s) {sorted(unknown)}; the factors are {list(FACTORS)}")
    for k, v in sizes.items():
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 2:
            raise ValueError(f"sizes[{k!r}] must be an integer >= 2, got {v!r}")
    return dict(sizes)


def true_counterfactual(
    x: np.ndarray,
    pa: Mapping[str, Any],
    pa_star: Mapping[str, Any],
    *,
    resolution: int | None = None,
    sizes: Mapping[str, int] | None = None,
) -> np.ndarray:
    """The true counterfactual function: no exogenous noise, so ``f(x, pa, pa*) = render(pa*)``.

    Parameters
    ----------
    x : numpy.ndarray, shape (n, 3, H, W)
        Observed images (only their number and size are used).
    pa, pa_star : dict
        Observed and counterfactual factors.
    resolution : int, optional
        Image side (default: from ``x``).
    sizes : dict, optional
        Levels per factor.

    Returns
    -------
    numpy.ndarray, shape (n, 3, H, W)
    """
    x = np.asarray(x)
    if x.ndim != 4:
        raise ValueError(f"x must have shape (n, 3, H, W), got {x.shape}")
    check_factors(pa, sizes, "pa")
    ps = check_factors(pa_star, sizes, "pa_star")
    if len(ps["shape"]) != len(x):
        raise ValueError(f"pa_star has {len(ps['shape'])} rows for {len(x)} images")
    return render_shapes(ps, x.shape[-1] if resolution is None else resolution, sizes)
