"""Bounded characteristic kernels and their Gram matrices, in torch (CPU or CUDA).

Implements the kernel ingredients of Fu et al. (2025), *Testing for Causal Fairness*, Sec. 2.2 and
App. A.2: a positive-definite kernel bounded as ``0 <= k(z, z') <= K``. The paper names neither the
kernel nor its bandwidth (notes, Sec. 7 item 1); we offer the Gaussian kernel
``exp(-||x - y||^2 / (2 s^2))`` and the Laplace kernel ``exp(-||x - y||_1 / s)``, both characteristic
with ``K = 1``, with the bandwidth ``s`` given as a number or chosen by the median heuristic
(Gretton et al. 2012, Sec. 8) on the pooled sample.

Gram matrices are computed in row blocks so that the intermediate distance tensors stay bounded
for large samples; the Gram matrix itself is what every quadratic-time test needs anyway.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from ..runtime import as_generator, get_device
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_choice,
    check_count,
    check_finite,
    check_real,
    describe,
)

if TYPE_CHECKING:
    import torch

__all__ = ["Kernel", "GaussianKernel", "LaplaceKernel", "make_kernel", "median_bandwidth", "as_2d", "to_tensor"]

_KERNELS = ("gaussian", "laplace")


def as_2d(x: Any, name: str = "x", *, min_rows: int = 2) -> np.ndarray:
    """Validate a sample and return it as a float64 array of shape ``(n, d)``.

    Parameters
    ----------
    x : array-like, shape (n,) or (n, d)
        The sample; a 1-D array is one feature.
    name : str
        Argument name used in error messages.
    min_rows : int
        Smallest accepted number of rows.

    Returns
    -------
    numpy.ndarray
        ``float64`` array of shape ``(n, d)``.

    Raises
    ------
    TypeError
        If ``x`` is not numeric.
    ValueError
        If ``x`` has more than two dimensions, fewer than ``min_rows`` rows, or contains NaN/inf.
    """
    if hasattr(x, "detach"):  # a torch tensor, possibly on a GPU
        x = x.detach().cpu().numpy()
    if x is None or isinstance(x, (str, bytes, Mapping)) or callable(x):
        raise ValidationTypeError(f"{name} must be a numeric array-like of shape (n,) or (n, d), got {describe(x)}")
    try:
        arr = np.asarray(x)
        if arr.dtype == object:
            arr = arr.astype(np.float64)
    except (TypeError, ValueError):  # ragged nested lists, or objects that are not numbers
        raise ValidationTypeError(f"{name} must be a rectangular numeric array-like, got {describe(x)}") from None
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating) or arr.dtype == bool):
        raise ValidationTypeError(f"{name} must be numeric (real numbers), got dtype {arr.dtype}")
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValidationError(f"{name} must have shape (n,) or (n, d), got shape {arr.shape}")
    if arr.shape[0] < min_rows:
        hint = f": transpose it ({name}.T) if its columns are the samples" if 0 < arr.shape[0] < arr.shape[1] else ""
        raise ValidationError(f"{name} needs at least {min_rows} samples (rows), got {arr.shape[0]}{hint}")
    if arr.shape[1] < 1:
        raise ValidationError(f"{name} must have at least one feature column, got shape {arr.shape}")
    check_finite(arr, name)
    return arr


def to_tensor(x: np.ndarray | torch.Tensor, device: Any = "cpu") -> torch.Tensor:
    """Return ``x`` as a float64 torch tensor on ``device`` (a string or a ``torch.device``).

    Parameters
    ----------
    x : numpy.ndarray or torch.Tensor
        A numeric array (validate samples with :func:`as_2d` first).
    device : str or torch.device

    Returns
    -------
    torch.Tensor

    Raises
    ------
    TypeError
        If ``x`` is not a numeric array.
    """
    import torch

    if isinstance(x, torch.Tensor):
        numeric = not x.is_complex()
    else:
        numeric = isinstance(x, np.ndarray) and (x.dtype == bool or x.dtype.kind in "iuf")
    if not numeric:
        raise ValidationTypeError(
            f"x must be a numeric numpy array or torch tensor (see cflib.stats.as_2d), got {describe(x)}"
        )
    dev = device if isinstance(device, torch.device) else get_device(device)
    if isinstance(x, np.ndarray) and not x.flags.writeable:
        x = np.array(x)  # torch warns on read-only arrays (e.g. broadcast views); copy once instead
    return torch.as_tensor(x, dtype=torch.float64, device=dev)


def _pairwise(
    x: torch.Tensor, y: torch.Tensor, p: int, out: torch.Tensor | None = None, y_sq: torch.Tensor | None = None
) -> torch.Tensor:
    import torch

    if p == 2:
        # ||y||^2 - 2 x.y + ||x||^2: one matrix product and in-place updates (no N x N temporaries);
        # clamp the tiny negatives of cancellation
        y_sq = (y * y).sum(1) if y_sq is None else y_sq
        d2 = torch.addmm(y_sq[None, :], x, y.T, alpha=-2.0, out=out)
        return d2.add_((x * x).sum(1)[:, None]).clamp_min_(0.0)
    d1 = torch.cdist(x, y, p=1.0)
    return d1 if out is None else out.copy_(d1)


def median_bandwidth(
    *samples: Any, kernel: str = "gaussian", max_n: int = 1000, seed: int | np.random.Generator | None = 0
) -> float:
    """Median heuristic: the median distance between distinct points of the pooled sample.

    Parameters
    ----------
    *samples : array-like, shape (n_i, d)
        One or more samples with the same number of columns; they are pooled.
    kernel : {"gaussian", "laplace"}
        Euclidean distance for the Gaussian kernel, L1 distance for the Laplace kernel.
    max_n : int
        Pooled points beyond this are subsampled (without replacement) to keep the cost bounded.
    seed : int, Generator or None
        Randomness of the subsample (only used when the pooled sample exceeds ``max_n``).

    Returns
    -------
    float
        The median of the off-diagonal distances. If it is zero (discrete outputs with a dominant
        value), the mean of the non-zero distances is used, and 1.0 if every point is identical,
        so the kernel never degenerates to an indicator of equality by accident.
    """
    if not samples:
        raise ValidationError("median_bandwidth needs at least one sample (pass the arrays to pool)")
    check_choice(kernel, "kernel", _KERNELS)
    max_n = check_count(max_n, "max_n", minimum=2)
    arrs = [as_2d(s, f"samples[{i}]", min_rows=1) for i, s in enumerate(samples)]
    if len({a.shape[1] for a in arrs}) != 1:
        raise ValidationError(
            f"all samples must have the same number of columns (features), got {[a.shape[1] for a in arrs]}"
        )
    z = np.concatenate(arrs, axis=0)
    if z.shape[0] > max_n:
        z = z[as_generator(seed).choice(z.shape[0], size=max_n, replace=False)]
    if z.shape[0] < 2:
        return 1.0
    t = to_tensor(z, "cpu")
    d = _pairwise(t, t, 2 if kernel == "gaussian" else 1)
    if kernel == "gaussian":
        d = d.sqrt()
    iu = np.triu_indices(z.shape[0], k=1)
    dist = d.numpy()[iu]
    med = float(np.median(dist))
    if med > 0:
        return med
    nz = dist[dist > 0]
    return float(nz.mean()) if nz.size else 1.0


@dataclass(frozen=True)
class Kernel:
    """A bounded translation-invariant kernel with a fixed or data-chosen bandwidth.

    Parameters
    ----------
    name : {"gaussian", "laplace"}
        ``gaussian``: ``exp(-||x-y||^2 / (2 s^2))``; ``laplace``: ``exp(-||x-y||_1 / s)``.
    bandwidth : float or "median"
        The scale ``s > 0``, or ``"median"`` to choose it with :func:`median_bandwidth` on the
        samples passed to :meth:`fit`.

    Attributes
    ----------
    upper_bound : float
        ``K = sup k = 1``, the constant of the N-TE denominator ``4K - ||mu_P||^2 - ||mu_Q||^2``.
    """

    name: str = "gaussian"
    bandwidth: float | str = "median"

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise ValidationTypeError(
                f"kernel must be one of {_KERNELS}, got {describe(self.name)} ({type(self.name).__name__})"
            )
        check_choice(self.name, "kernel", _KERNELS)
        bw = self.bandwidth
        if isinstance(bw, str):
            if bw != "median":
                raise ValidationError(f"bandwidth must be a positive number or 'median', got {bw!r}")
        elif not isinstance(bw, (int, float, np.floating, np.integer)) or isinstance(bw, (bool, np.bool_)):
            raise ValidationTypeError(
                f"bandwidth must be a positive number or 'median', got {describe(bw)} ({type(bw).__name__})"
            )
        elif not np.isfinite(bw) or bw <= 0:
            raise ValidationError(f"bandwidth must be a positive finite number or 'median', got {bw!r}")

    @property
    def upper_bound(self) -> float:
        """The bound ``K`` of the kernel (1 for both kernels offered)."""
        return 1.0

    @property
    def is_fitted(self) -> bool:
        """Whether the bandwidth is a number (``True``) or still ``"median"``."""
        return not isinstance(self.bandwidth, str)

    def fit(self, *samples: Any, seed: int | np.random.Generator | None = 0) -> Kernel:
        """Return a kernel with a numeric bandwidth (the median heuristic on ``samples`` if needed).

        Parameters
        ----------
        *samples : array-like
            Samples to pool for the median heuristic; ignored when the bandwidth is a number.
        seed : int, Generator or None
            Subsampling randomness of the median heuristic for large samples.

        Returns
        -------
        Kernel
            A new, fitted kernel (kernels are immutable).
        """
        if self.is_fitted:
            return self
        return replace(self, bandwidth=median_bandwidth(*samples, kernel=self.name, seed=seed))

    def gram(
        self,
        x: Any,
        y: Any | None = None,
        *,
        device: Any = "cpu",
        chunk_size: int = 4096,
        out: torch.Tensor | None = None,
        y_sq: torch.Tensor | None = None,
    ) -> torch.Tensor:
        """Kernel matrix ``k(x_i, y_j)`` as a float64 torch tensor.

        Parameters
        ----------
        x : array-like or torch.Tensor, shape (n, d)
            Arrays are checked with :func:`as_2d`; tensors are taken as already checked (the
            resampling engine passes row blocks of validated samples here in its inner loop).
        y : array-like or torch.Tensor, shape (m, d), optional
            Defaults to ``x``.
        device : str or torch.device
            Where to compute (``"auto"`` picks CUDA when available).
        chunk_size : int
            Rows of ``x`` processed at once; bounds the memory of the distance computation.
        out : torch.Tensor, optional
            A contiguous float64 ``(n, m)`` tensor to write into (no allocation of the result).
        y_sq : torch.Tensor, optional
            ``(y * y).sum(1)``, precomputed when many row blocks share the same ``y`` (Gaussian kernel).

        Returns
        -------
        torch.Tensor
            Shape ``(n, m)``, entries in ``[0, 1]``.
        """
        import torch

        if not self.is_fitted:
            raise ValidationError("the bandwidth is still 'median': call kernel.fit(samples) first (or pass a number)")
        chunk_size = check_count(chunk_size, "chunk_size")
        xt = x if isinstance(x, torch.Tensor) else to_tensor(as_2d(x, "x", min_rows=1), device)
        yt = (
            xt if y is None else (y if isinstance(y, torch.Tensor) else to_tensor(as_2d(y, "y", min_rows=1), xt.device))
        )
        if xt.ndim != 2 or yt.ndim != 2 or xt.shape[1] != yt.shape[1]:
            raise ValidationError(
                f"x and y must have shapes (n, d) and (m, d) with the same d, got {tuple(xt.shape)} and {tuple(yt.shape)}"
            )
        s = float(self.bandwidth)
        # -(d / c) computed as d / (-c): the same float64 result as exp(-d / c), without temporaries
        neg_c = -(2.0 * s * s) if self.name == "gaussian" else -s
        p = 2 if self.name == "gaussian" else 1
        if xt.shape[0] <= chunk_size:  # one block: no copy into a preallocated output
            return _pairwise(xt, yt, p, out, y_sq).div_(neg_c).exp_()
        if out is None:
            out = torch.empty((xt.shape[0], yt.shape[0]), dtype=torch.float64, device=xt.device)
        for start in range(0, xt.shape[0], int(chunk_size)):
            blk = xt[start : start + chunk_size]
            _pairwise(blk, yt, p, out[start : start + blk.shape[0]], y_sq).div_(neg_c).exp_()
        return out

    def __call__(self, x: Any, y: Any | None = None, **kwargs: Any) -> torch.Tensor:
        """Alias of :meth:`gram`."""
        return self.gram(x, y, **kwargs)

    def value_at(self, distance: float) -> float:
        """Kernel value at a given distance (Euclidean for Gaussian, L1 for Laplace).

        Useful for closed forms: for outputs in ``{0, 1}``, ``r = k(0, 1) = value_at(1)``.

        Parameters
        ----------
        distance : float
            A distance ``>= 0``.

        Returns
        -------
        float
        """
        if not self.is_fitted:
            raise ValidationError("the bandwidth is still 'median': fit the kernel first")
        distance = check_real(distance, "distance", low=0.0)
        s = float(self.bandwidth)
        return float(np.exp(-(distance**2) / (2 * s * s)) if self.name == "gaussian" else np.exp(-abs(distance) / s))


def GaussianKernel(bandwidth: float | str = "median") -> Kernel:
    """Gaussian (RBF) kernel ``exp(-||x - y||^2 / (2 s^2))``; see :class:`Kernel`."""
    return Kernel("gaussian", bandwidth)


def LaplaceKernel(bandwidth: float | str = "median") -> Kernel:
    """Laplace kernel ``exp(-||x - y||_1 / s)``; see :class:`Kernel`."""
    return Kernel("laplace", bandwidth)


def make_kernel(kernel: str | Kernel = "gaussian", bandwidth: float | str = "median") -> Kernel:
    """Build a :class:`Kernel` from a name and a bandwidth, or pass a kernel through.

    Parameters
    ----------
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
        Ignored when ``kernel`` is already a :class:`Kernel`.

    Returns
    -------
    Kernel
    """
    if isinstance(kernel, Kernel):
        return kernel
    if not isinstance(kernel, str):
        raise ValidationTypeError(
            f"kernel must be 'gaussian', 'laplace' or a cflib.stats.kernels.Kernel, got {type(kernel).__name__}"
        )
    return Kernel(kernel, bandwidth)
