"""Maximum mean discrepancy: estimators and fast permutation / sign-flip two-sample tests.

Implements App. A.2 and A.4 of Fu et al. (2025), *Testing for Causal Fairness* (Eq. 16, the
squared MMD; Eq. 21, the M-TE, i.e. the unbiased paired MMD^2), which the paper's ``epsilon = 0``
("strong" sensitivity) case reduces to, following Gretton et al. (2012), *A kernel two-sample test*,
Lemma 6 (unbiased and biased estimators) and Sec. 6 (linear-time estimator).

The tests evaluate every permutation at once as a matrix product over the kernel matrix: with ``E``
the ``(N, B)`` matrix of group indicators of ``B`` permutations, ``K @ E`` gives all within-group sums.
The product runs over row blocks of ``K`` computed on the fly (:mod:`cflib.stats.engine`), so memory is
``O(N x chunk)`` and the full matrix never exists; products are float32, and every permutation that
float32 rounding could put on the other side of the observed statistic is recomputed in float64. The paired test flips the order inside each
(factual, counterfactual) pair with Rademacher signs ``s``; the statistic becomes ``s' H s``, again one
matrix product for all draws, and the test is exact in finite samples because within-pair swaps are a
group of transformations that leaves the joint law invariant under the null of exchangeable pairs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..results import BaseTestResult
from ..runtime import as_generator, get_device
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_axes,
    check_choice,
    check_count,
    describe,
    warn,
)
from .engine import check_precision, quadratic_forms, rounding_bound, settle_near_ties
from .kernels import Kernel, as_2d, make_kernel, to_tensor

if TYPE_CHECKING:
    import torch

__all__ = [
    "mmd2",
    "mmd_test",
    "MMDTestResult",
    "paired_h_matrix",
    "signflip_null",
    "permutation_null",
    "kernel_rows",
    "paired_rows",
]

_ESTIMATORS = ("unbiased", "biased", "linear", "paired")


def _fitted_kernel(kernel: str | Kernel, bandwidth: float | str, *samples: np.ndarray, seed: Any = 0) -> Kernel:
    return make_kernel(kernel, bandwidth).fit(*samples, seed=seed)


#: Fewest distinct values a resampling null must take for its p-value to reach below 0.05.
_MIN_DISTINCT = 20


def _transposed(a: np.ndarray, b: np.ndarray, names: tuple[str, str], a_fits: bool, b_fits: bool) -> str:
    """``": transpose b (b.T)"`` for the array whose transpose would fit, else ``""``.

    When both would, the one with fewer rows than columns is taken (units usually outnumber features).
    """
    if a_fits and b_fits:
        a_fits, b_fits = a.shape[0] < a.shape[1], b.shape[0] < b.shape[1]
    name = names[1] if b_fits else names[0] if a_fits else None
    return f": transpose {name} ({name}.T)" if name else ""


def check_same_dim(x: np.ndarray, y: np.ndarray, names: tuple[str, str] = ("x", "y")) -> None:
    """Refuse two samples with different numbers of columns (features), hinting at a transpose that would fit.

    Parameters
    ----------
    x, y : numpy.ndarray, shape (n, d) and (m, d)
        The two samples.
    names : (str, str)
        Their argument names, for the message.

    Returns
    -------
    None

    Raises
    ------
    ValidationError
        Different numbers of columns.
    """
    if x.shape[1] != y.shape[1]:
        hint = _transposed(x, y, names, x.shape[0] == y.shape[1], y.shape[0] == x.shape[1])
        raise ValidationError(
            f"{names[0]} and {names[1]} must have the same number of columns (features), got shapes "
            f"{x.shape} and {y.shape}{hint}"
        )


def check_same_rows(x: np.ndarray, y: np.ndarray, names: tuple[str, str], what: str) -> None:
    """Paired samples: one row per unit in each (``what`` says why, for the message).

    Parameters
    ----------
    x, y : numpy.ndarray, shape (m, d)
        The two samples, row ``i`` of each from unit ``i``.
    names : (str, str)
        Their argument names, for the message.
    what : str
        Why they must have the same rows.

    Returns
    -------
    None

    Raises
    ------
    ValidationError
        Different numbers of rows.
    """
    if x.shape[0] != y.shape[0]:
        hint = _transposed(x, y, names, x.shape[1] == y.shape[0], y.shape[1] == x.shape[0])
        raise ValidationError(
            f"{names[0]} and {names[1]} must have the same number of rows ({what}), got shapes "
            f"{x.shape} and {y.shape}{hint}"
        )


def _check_kernel(kernel: Any, name: str = "kernel") -> Kernel:
    """A fitted :class:`Kernel` (numeric bandwidth)."""
    if not isinstance(kernel, Kernel):
        raise ValidationTypeError(
            f"{name} must be a cflib.stats.Kernel (make_kernel(...).fit(x, y)), got {describe(kernel)}"
        )
    if not kernel.is_fitted:
        raise ValidationError(f"{name} must be fitted (a numeric bandwidth): call {name}.fit(x, y) first")
    return kernel


def _check_rng(rng: Any) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise ValidationTypeError(
            f"rng must be a numpy.random.Generator (np.random.default_rng(seed)), got {describe(rng)}"
        )
    return rng


def _check_tensor(t: Any, name: str, shape: tuple[int | None, ...]) -> torch.Tensor:
    """A real torch tensor of the given shape (``None``: any size on that axis)."""
    import torch

    if not isinstance(t, torch.Tensor) or t.is_complex():
        raise ValidationTypeError(f"{name} must be a real torch.Tensor, got {describe(t)}")
    if t.ndim != len(shape) or any(s is not None and s != n for s, n in zip(shape, t.shape, strict=True)):
        want = "(" + ", ".join("*" if s is None else str(s) for s in shape) + ")"
        raise ValidationError(f"{name} must have shape {want}, got {tuple(t.shape)}")
    return t


def distinct_splits(n: int, m: int) -> float:
    """Distinct label permutations of samples of sizes ``n`` and ``m`` (``inf`` past 40 units: plenty).

    Swapping the two labels of equal-size samples gives the same statistic, hence the halving.

    Parameters
    ----------
    n, m : int
        The sample sizes.

    Returns
    -------
    float
        ``C(n + m, n)`` (halved when ``n == m``), or ``inf``.
    """
    return math.comb(n + m, n) / (2 if n == m else 1) if n + m <= 40 else math.inf


def resampling_warnings(
    n_draws: int, n_distinct: float, alpha: float, *, draws: str, units: str, needed: str = "more units"
) -> tuple[str, ...]:
    """The :class:`cflib.CflibWarning` messages of a resampling p-value ``(1 + k) / (1 + B)``.

    Parameters
    ----------
    n_draws : int
        ``B``.
    n_distinct : float
        How many distinct values the null statistic can take with these units (``inf``: plenty).
    alpha : float
        The level the p-value is meant for.
    draws : str
        The argument that sets ``B`` (``"n_permutations"``, ``"n_boot"``).
    units : str
        The units and their count, for the message (``"m=4 pairs"``).
    needed : str
        What to use instead, for the message (``"at least 6 pairs"``).

    Returns
    -------
    tuple of str
        Empty when the p-value can go below ``alpha``; the warnings are also emitted.
    """
    out = []
    if 1.0 / (1 + n_draws) > alpha:
        out.append(
            warn(
                f"with {draws}={n_draws} the p-value cannot go below 1/({draws} + 1) = {1 / (1 + n_draws):.3g} "
                f"> alpha={alpha:g}, so the test can never reject; use {draws} >= {math.ceil(1 / alpha) - 1}",
                stacklevel=4,
            )
        )
    if n_distinct < max(_MIN_DISTINCT, 1 / alpha):
        out.append(
            warn(
                f"with {units} the resampling null takes at most {int(n_distinct)} distinct values, so its "
                f"p-value is too coarse for a test at alpha={alpha:g}; use {needed}",
                stacklevel=4,
            )
        )
    return tuple(out)


def paired_h_matrix(
    x: Any, y: Any, kernel: Kernel, *, device: Any = "cpu"
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Kernel blocks of paired samples: ``H`` of the paired MMD U-statistic and the two diagonal blocks.

    Parameters
    ----------
    x, y : array-like, shape (m, d)
        Row ``i`` of ``x`` and row ``i`` of ``y`` form pair-unit ``i`` (factual, counterfactual).
    kernel : Kernel
        A fitted kernel (numeric bandwidth).
    device : str or torch.device

    Returns
    -------
    (H, Kxx, Kyy) : tuple of torch.Tensor, each (m, m)
        ``H_ij = k(x_i,x_j) + k(y_i,y_j) - k(x_i,y_j) - k(y_i,x_j)`` with a zero diagonal (Eq. 9 of the
        paper), and the within-sample Gram matrices (diagonals zeroed as well), from which the
        N-TE denominator ``D_ij = 4K - Kxx_ij - Kyy_ij`` is built.
    """
    _check_kernel(kernel)
    xt = x if hasattr(x, "device") else to_tensor(as_2d(x, "x"), device)
    yt = y if hasattr(y, "device") else to_tensor(as_2d(y, "y"), xt.device)
    if tuple(xt.shape) != tuple(yt.shape):
        raise ValidationError(
            f"x and y must have the same shape (row i of each is pair-unit i), got {tuple(xt.shape)} "
            f"and {tuple(yt.shape)}"
        )
    kxx = kernel.gram(xt)
    kyy = kernel.gram(yt)
    kxy = kernel.gram(xt, yt)
    h = kxx + kyy - kxy - kxy.T
    h.fill_diagonal_(0.0)
    kxx.fill_diagonal_(0.0)
    kyy.fill_diagonal_(0.0)
    return h, kxx, kyy


def mmd2(
    x: Any,
    y: Any,
    *,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    estimator: str = "unbiased",
    device: Any = "cpu",
) -> float:
    """Estimate the squared MMD between the laws of ``x`` and ``y``.

    Parameters
    ----------
    x : array-like, shape (n, d)
    y : array-like, shape (m, d)
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
        Kernel bandwidth; ``"median"`` uses the median heuristic on the pooled sample.
    estimator : {"unbiased", "biased", "linear", "paired"}
        ``unbiased``: the U-statistic of Gretton et al. (2012, Eq. 3), any ``n, m >= 2``;
        ``biased``: the V-statistic ``||mu_x - mu_y||^2`` of the empirical embeddings (always >= 0);
        ``linear``: the linear-time estimator over ``floor(min(n, m) / 2)`` disjoint quadruples;
        ``paired``: the equal-size U-statistic over pair-units ``(x_i, y_i)`` (the paper's Eq. 21, the
        numerator of N-TE), which drops the ``k(x_i, y_i)`` terms; needs ``n == m``.
    device : str or torch.device
        Where the kernel matrices are computed.

    Returns
    -------
    float
        The estimate. The unbiased, paired and linear estimators can be slightly negative.
    """
    check_choice(estimator, "estimator", _ESTIMATORS)
    x = as_2d(x, "x")
    y = as_2d(y, "y")
    check_same_dim(x, y)
    k = _fitted_kernel(kernel, bandwidth, x, y)
    dev = get_device(device)
    n, m = x.shape[0], y.shape[0]
    if estimator == "linear":
        p = min(n, m) // 2
        xa, xb, ya, yb = (
            to_tensor(a, dev) for a in (x[0 : 2 * p : 2], x[1 : 2 * p : 2], y[0 : 2 * p : 2], y[1 : 2 * p : 2])
        )
        # k(a_i, b_i) row by row: the linear-time estimator never forms a Gram matrix
        h = _rowwise(k, xa, xb) + _rowwise(k, ya, yb) - _rowwise(k, xa, yb) - _rowwise(k, xb, ya)
        return float(h.mean())
    if estimator == "paired":
        check_same_rows(
            x, y, ("x", "y"), "estimator='paired' needs samples of equal size: row i of each is pair-unit i"
        )
        h, _, _ = paired_h_matrix(x, y, k, device=dev)
        return float(h.sum() / (m * (m - 1)))
    xt, yt = to_tensor(x, dev), to_tensor(y, dev)
    kxx, kyy, kxy = k.gram(xt), k.gram(yt), k.gram(xt, yt)
    if estimator == "biased":
        return float(kxx.mean() + kyy.mean() - 2 * kxy.mean())
    sxx = (kxx.sum() - kxx.diagonal().sum()) / (n * (n - 1))
    syy = (kyy.sum() - kyy.diagonal().sum()) / (m * (m - 1))
    return float(sxx + syy - 2 * kxy.mean())


def _rowwise(k: Kernel, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    import torch

    s = float(k.bandwidth)
    if k.name == "gaussian":
        return torch.exp(-((a - b) ** 2).sum(1) / (2 * s * s))
    return torch.exp(-(a - b).abs().sum(1) / s)


@dataclass(frozen=True)
class MMDTestResult(BaseTestResult):
    """Result of :func:`mmd_test`.

    Attributes
    ----------
    statistic : float
        The observed unbiased MMD^2 (paired form when ``paired=True``).
    pvalue : float
        ``(1 + #{null >= statistic}) / (1 + n_permutations)``: a valid p-value in finite samples.
    null_distribution : numpy.ndarray
        The statistic under each permutation / sign flip.
    n_permutations : int
    paired : bool
    kernel : Kernel
        The kernel with the bandwidth actually used.
    n, m : int
        Sample sizes.
    warnings : tuple of str
        Why the p-value may be unreliable (too few draws or units); empty when it is not.
    """

    statistic: float
    pvalue: float
    null_distribution: np.ndarray = field(repr=False)
    n_permutations: int
    paired: bool
    kernel: Kernel
    n: int
    m: int
    warnings: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """One-row table: statistic, p-value, scheme, sizes, kernel and bandwidth (and the warnings, if any)."""
        df = pd.DataFrame(
            [
                {
                    "statistic (MMD^2_u)": self.statistic,
                    "pvalue": self.pvalue,
                    "scheme": "sign-flip (paired)" if self.paired else "permutation",
                    "n_permutations": self.n_permutations,
                    "n": self.n,
                    "m": self.m,
                    "kernel": self.kernel.name,
                    "bandwidth": float(self.kernel.bandwidth),
                }
            ]
        )
        if self.warnings:
            df["warning"] = "; ".join(self.warnings)
        return df

    def plot(self, ax: Any = None) -> Any:
        """Histogram of the permutation null with the observed statistic marked; returns the axes."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if check_axes(ax) is None else ax
        ax.hist(self.null_distribution, bins=40, color="0.7", label="permutation null")
        ax.axvline(self.statistic, color="C3", lw=2, label=f"observed (p = {self.pvalue:.3g})")
        ax.set_xlabel("MMD$^2_u$")
        ax.set_ylabel("count")
        ax.legend()
        return ax


def _as_rows(a: Any) -> Callable[[int, int, Any], Any]:
    """A row-block function from a full (torch) matrix, or the function itself."""
    return a if callable(a) else (lambda i0, i1, out: out.copy_(a[i0:i1]))


def _zero_block_diagonal(blk: torch.Tensor, i0: int) -> torch.Tensor:
    """Zero the entries ``(i, i)`` of rows ``i0:i0+len(blk)`` of a square matrix, in place."""
    import torch

    idx = torch.arange(blk.shape[0], device=blk.device)
    blk[idx, idx + i0] = 0.0
    return blk


def kernel_rows(kernel: Kernel, z: torch.Tensor) -> Callable[[int, int, torch.Tensor], torch.Tensor]:
    """Row blocks of the Gram matrix of ``z`` with a zero diagonal, for :func:`quadratic_forms`.

    Parameters
    ----------
    kernel : Kernel
        A fitted kernel.
    z : torch.Tensor, shape (N, d)

    Returns
    -------
    callable
        ``rows(i0, i1, out)``: writes ``k(z[i0:i1], z)`` with ``k(z_i, z_i)`` set to 0 into ``out``.
    """
    _check_kernel(kernel)
    _check_tensor(z, "z", (None, None))
    z_sq = (z * z).sum(1)
    return lambda i0, i1, out: _zero_block_diagonal(kernel.gram(z[i0:i1], z, out=out, y_sq=z_sq), i0)


def paired_rows(kernel: Kernel, x: torch.Tensor, y: torch.Tensor) -> Callable[[int, int, torch.Tensor], torch.Tensor]:
    """Row blocks of the paired matrix ``H`` (zero diagonal) without forming it.

    Parameters
    ----------
    kernel : Kernel
        A fitted kernel.
    x, y : torch.Tensor, shape (m, d)
        Row ``i`` of each belongs to pair-unit ``i``.

    Returns
    -------
    callable
        ``rows(i0, i1, out)``: writes rows ``i0:i1`` of
        ``H_ij = k(x_i,x_j) + k(y_i,y_j) - k(x_i,y_j) - k(y_i,x_j)`` into ``out``.
    """
    _check_kernel(kernel)
    _check_tensor(x, "x", (None, None))
    _check_tensor(y, "y", tuple(x.shape))
    tmp: list[Any] = []
    x_sq, y_sq = (x * x).sum(1), (y * y).sum(1)

    def rows(i0: int, i1: int, out: torch.Tensor) -> torch.Tensor:
        if not tmp or tmp[0].shape[0] < out.shape[0]:
            tmp[:] = [out.new_empty(out.shape)]  # one scratch block, reused
        t = tmp[0][: out.shape[0]]
        xb, yb = x[i0:i1], y[i0:i1]
        kernel.gram(xb, x, out=out, y_sq=x_sq).add_(kernel.gram(yb, y, out=t, y_sq=y_sq))
        out.sub_(kernel.gram(xb, y, out=t, y_sq=y_sq)).sub_(kernel.gram(yb, x, out=t, y_sq=x_sq))
        return _zero_block_diagonal(out, i0)

    return rows


def signflip_null(
    h: Any,
    n_draws: int,
    rng: np.random.Generator,
    *,
    batch: int = 512,
    precision: str = "mixed",
    chunk: int | None = None,
    n_rows: int | None = None,
    device: Any = "cpu",
) -> tuple[float, np.ndarray]:
    """The quadratic form ``1' H 1`` and its sign-flip replicates ``s' H s`` for Rademacher ``s``.

    Parameters
    ----------
    h : torch.Tensor of shape (m, m), or callable
        Symmetric matrix with zero diagonal, or ``rows(i0, i1)`` giving its float64 row blocks
        (:func:`paired_rows`), so that it is never formed.
    n_draws : int
    rng : numpy.random.Generator
        Signs are drawn as ``rng.choice((-1, 1), size=(m, b))`` for successive blocks of ``batch`` draws.
    batch : int
        Draws per call of the generator (fixes the random stream; not a memory bound any more).
    precision : {"mixed", "float64"}
        ``"mixed"``: float32 products, with every draw that float32 rounding could put on the other
        side of ``1' H 1`` recomputed in float64, so the count behind the p-value is the float64 one.
    chunk : int, optional
        Rows of ``H`` per block (memory ``chunk * m`` numbers); see :func:`quadratic_forms`.
    n_rows : int, optional
        ``m``; required when ``h`` is a callable.
    device : str or torch.device
        Device of the row blocks when ``h`` is a callable (a tensor's own device otherwise).

    Returns
    -------
    (float, numpy.ndarray)
        ``1' H 1`` and the ``n_draws`` unnormalised replicates; divide by ``m (m - 1)`` for the MMD^2 scale.
    """
    import torch

    if callable(h):
        if n_rows is None:
            raise ValidationError("n_rows is required when h is a callable of row blocks (pass m, the number of pairs)")
        m = check_count(n_rows, "n_rows", minimum=2)
    else:
        m = int(_check_tensor(h, "h", (None, None)).shape[0])
        _check_tensor(h, "h", (m, m))
        if n_rows is not None and check_count(n_rows, "n_rows", minimum=2) != m:
            raise ValidationError(
                f"n_rows must equal the size of h, got n_rows={n_rows} and h of shape {tuple(h.shape)}"
            )
    n_draws = check_count(n_draws, "n_draws")
    _check_rng(rng)
    batch = check_count(batch, "batch")
    precision = check_precision(precision)
    chunk = check_count(chunk, "chunk", allow_none=True)
    rows = _as_rows(h)
    dev = torch.device(device) if callable(h) else h.device
    s = np.concatenate(
        [rng.choice((-1.0, 1.0), size=(m, min(batch, n_draws - b0))) for b0 in range(0, n_draws, batch)], axis=1
    )
    st = torch.as_tensor(s, device=dev)
    qf = quadratic_forms(
        rows,
        m,
        st,
        exact=torch.ones((m, 1), dtype=torch.float64, device=dev),
        precision=precision,
        chunk=chunk,
        device=dev,
    )
    observed = float(qf.q_exact[0])
    bound = rounding_bound(np.full(n_draws, qf.abs_total), m, qf.dtype)

    def recompute(idx: np.ndarray) -> np.ndarray:
        return quadratic_forms(
            rows, m, None, exact=st[:, torch.as_tensor(idx, device=dev)], chunk=chunk, device=dev
        ).q_exact

    null, _ = settle_near_ties(qf.q, bound, observed - _tie_tol(observed), recompute)
    return observed, null


def _tie_tol(stat: float) -> float:
    """Tolerance for ties of a draw with the observed value (a draw that reproduces it exactly)."""
    return 1e-12 * max(1.0, abs(stat))


def _units_needed(n_distinct: float, alpha: float, *, paired: bool) -> str:
    """The sizes at which a permutation (or sign-flip) null can reach ``alpha``, for the warning of :func:`mmd_test`.

    With ``k`` units per sample the label permutations take ``C(2k, k) / 2`` distinct values and the
    smallest attainable p-value is about their inverse (``2^(k - 1)`` sign flips of ``k`` pairs); the
    smallest ``k`` at which that reaches ``alpha`` (and the null has at least ``_MIN_DISTINCT`` values) is
    the size needed.
    """
    enough = max(_MIN_DISTINCT, 1 / alpha)
    if not n_distinct < enough:  # no warning: the units given are enough
        return "more units"
    k = 2
    while (2.0 ** (k - 1) if paired else distinct_splits(k, k)) < enough:
        k += 1
    size = f"at least {k} pairs" if paired else f"at least {k} units per sample (n = m = {k})"
    return (
        f"{size} (the smallest p-value the units given can reach is about 1/{int(n_distinct)} = {1 / n_distinct:.3g}, "
        f"above alpha={alpha:g})"
    )


def resampling_pvalue(null: np.ndarray, stat: float) -> float:
    """``(1 + #{null >= stat}) / (1 + B)``, with exact ties counted.

    Parameters
    ----------
    null : numpy.ndarray
        The ``B`` replicates of the statistic under the null.
    stat : float
        The observed statistic.

    Returns
    -------
    float
        The resampling p-value (valid in finite samples).
    """
    return float((1.0 + np.count_nonzero(null >= stat - _tie_tol(stat))) / (1.0 + null.size))


def permutation_null(
    kernel: Kernel,
    z: torch.Tensor,
    n: int,
    n_permutations: int,
    rng: np.random.Generator,
    *,
    estimator: str = "unbiased",
    batch: int = 512,
    precision: str = "mixed",
    chunk: int | None = None,
) -> tuple[float, np.ndarray]:
    """Observed MMD^2 and its label-permutation replicates, over row blocks of the pooled Gram matrix.

    Parameters
    ----------
    kernel : Kernel
        A fitted kernel.
    z : torch.Tensor, shape (N, d)
        The pooled sample, the first ``n`` rows from ``x``.
    n : int
        Size of the first sample.
    n_permutations : int
    rng : numpy.random.Generator
        Group assignments are ``rng.permuted`` rows of the 0/1 template, ``batch`` at a time.
    estimator : {"unbiased", "biased"}
    batch : int
        Permutations per call of the generator (fixes the random stream).
    precision : {"mixed", "float64"}
        As in :func:`signflip_null`.
    chunk : int, optional
        Rows of the Gram matrix per block.

    Returns
    -------
    (float, numpy.ndarray)
        The observed statistic and the ``n_permutations`` replicates.
    """
    import torch

    _check_kernel(kernel)
    big_n = _check_tensor(z, "z", (None, None)).shape[0]
    check_choice(estimator, "estimator", ("unbiased", "biased"))
    least = 2 if estimator == "unbiased" else 1  # the unbiased statistic needs two units per sample
    n = check_count(n, "n", minimum=least)
    if big_n - n < least:
        raise ValidationError(
            f"n must leave at least {least} row(s) of z for the second sample, got n={n} of {big_n} rows"
        )
    n_permutations = check_count(n_permutations, "n_permutations")
    _check_rng(rng)
    batch = check_count(batch, "batch")
    precision = check_precision(precision)
    chunk = check_count(chunk, "chunk", allow_none=True)
    m = big_n - n
    template = np.r_[np.ones(n), np.zeros(m)]
    # shuffling each row of the 0/1 template gives independent uniform group assignments
    e = np.concatenate(
        [
            rng.permuted(np.broadcast_to(template, (min(batch, n_permutations - b0), big_n)), axis=1)
            for b0 in range(0, n_permutations, batch)
        ]
    )
    # Work with centred indicators v = e - c (c = n / N) and an approximately double-centred matrix
    # Kc = K0 - a 1' - 1 a' + mean(a), a_i the mean of row i over a fixed subset of columns: since
    # 1'v = 0, v' Kc v = v' K0 v exactly for any a, and e' K0 e = v' K0 v + 2 c r'e - c^2 1'K0 1. Kc's
    # entries are several times smaller than K0's, and so is the float32 rounding error.
    dev = z.device
    c = n / big_n
    cols = np.unique(np.linspace(0, big_n - 1, min(big_n, 256)).astype(np.int64))
    a = kernel.gram(z, z[cols]).mean(1)
    a_bar = float(a.mean())
    base = kernel_rows(kernel, z)

    def rows(i0: int, i1: int, out: torch.Tensor) -> torch.Tensor:
        return base(i0, i1, out).sub_(a[i0:i1, None]).sub_(a[None, :]).add_(a_bar)

    vt = torch.as_tensor(e.T - c, device=dev)
    v0 = torch.as_tensor(template[:, None] - c, device=dev)
    qf = quadratic_forms(rows, big_n, vt, exact=v0, precision=precision, chunk=chunk, device=dev)
    r = qf.row_sums + big_n * a.cpu().numpy()  # row sums of K0 from those of Kc
    total = float(r.sum())
    k0 = kernel.value_at(0.0)  # k(z, z): the self-similarities the V-statistic puts back
    # every statistic is c_q * sxx + c_r * (r' e) + c_0, with sxx = e' K0 e
    if estimator == "biased":
        c_q = 1 / n**2 + 1 / m**2 + 2 / (n * m)
        c_r = -2 / m**2 - 2 / (n * m)
        c_0 = (n * k0) / n**2 + (total + big_n * k0 - n * k0) / m**2
    else:
        c_q = 1 / (n * (n - 1)) + 1 / (m * (m - 1)) + 2 / (n * m)
        c_r = -2 / (m * (m - 1)) - 2 / (n * m)
        c_0 = total / (m * (m - 1))

    def stat(q: np.ndarray, er: np.ndarray) -> np.ndarray:
        sxx = q + 2 * c * er - c * c * total
        return c_q * sxx + c_r * er + c_0

    er = e @ r
    observed = float(stat(qf.q_exact, np.array([template @ r]))[0])
    null = stat(qf.q, er)
    # |v| <= max(c, 1 - c): the absolute terms of every quadratic form add up to at most this
    bound = c_q * rounding_bound(np.full(n_permutations, qf.abs_total * max(c, 1 - c) ** 2), big_n, qf.dtype)

    def recompute(idx: np.ndarray) -> np.ndarray:
        q64 = quadratic_forms(
            rows, big_n, None, exact=vt[:, torch.as_tensor(idx, device=dev)], chunk=chunk, device=dev
        ).q_exact
        return stat(q64, er[idx])

    null, _ = settle_near_ties(null, bound, observed - _tie_tol(observed), recompute)
    return observed, null


def mmd_test(
    x: Any,
    y: Any,
    *,
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    n_permutations: int = 1000,
    paired: bool = False,
    seed: int | np.random.Generator | None = None,
    device: Any = "cpu",
    batch: int = 512,
    estimator: str = "unbiased",
    precision: str = "mixed",
    chunk: int | None = None,
) -> MMDTestResult:
    """Kernel two-sample test of ``P_x = P_y`` with the unbiased MMD^2.

    Parameters
    ----------
    x : array-like, shape (n, d)
    y : array-like, shape (m, d)
    kernel : {"gaussian", "laplace"} or Kernel
    bandwidth : float or "median"
        ``"median"``: median heuristic on the pooled sample (computed once, before permuting).
    n_permutations : int
        Number of random permutations (or sign-flip draws when ``paired``).
    paired : bool
        ``True`` for paired samples (row ``i`` of ``x`` and ``y`` from the same unit, e.g. factual and
        counterfactual outputs): the statistic is the paired U-statistic (Eq. 21) and the null is
        generated by swapping within pairs, an exact test under exchangeability of each pair.
        ``False``: ordinary label permutations of the pooled sample, also exact for i.i.d. samples.
    seed : int, Generator or None
        Randomness of the permutations.
    device : str or torch.device
        ``"auto"`` uses a GPU when present.
    batch : int
        Permutations per call of the random generator; with ``seed`` it fixes the permutations drawn.
    estimator : {"unbiased", "biased"}
        Statistic of the unpaired test (``biased``: the V-statistic, as in ``hyppo``'s ``bias=True``).
        For equal sizes both give the same permutation p-value: with the total kernel sum fixed under
        permutation, each is an increasing affine function of the cross-sample sum. The paired test
        always uses the paired U-statistic.
    precision : {"mixed", "float64"}
        ``"mixed"`` (default): the kernel matrix is computed in float64 block by block and multiplied
        with all permutations in float32; every permutation whose float32 statistic lies within the
        rounding bound of the observed one is recomputed in float64, so the p-value is the float64
        p-value (the null distribution itself agrees with float64 to about 1e-6 relative).
        ``"float64"``: all products in float64.
    chunk : int, optional
        Rows of the ``(n + m) x (n + m)`` kernel matrix per block (default: about 64 MB per block).
        Memory is ``O((n + m) * (chunk + n_permutations))``; the full matrix is never formed.

    Returns
    -------
    MMDTestResult

    Warns
    -----
    cflib.CflibWarning
        When the p-value cannot go below 0.05: fewer than 19 permutations, or so few units that the
        null takes fewer than 20 distinct values (``m <= 5`` pairs, or ``n = m <= 3``: the smallest
        attainable p-value, about ``1 / C(2n, n)``, then exceeds the level); the message says the size
        needed. Recorded in :attr:`MMDTestResult.warnings`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> res = mmd_test(rng.normal(size=(100, 2)), rng.normal(0.5, 1, size=(100, 2)), seed=0)
    >>> res.pvalue < 0.05
    True
    """
    x = as_2d(x, "x")
    y = as_2d(y, "y")
    if not isinstance(paired, (bool, np.bool_)):
        raise ValidationTypeError(f"paired must be True or False, got {describe(paired)}")
    if paired:
        check_same_rows(
            x,
            y,
            ("x", "y"),
            "paired=True needs the same length: row i of each is one unit; use paired=False for independent samples",
        )
    check_same_dim(x, y)
    n_permutations = check_count(n_permutations, "n_permutations")
    batch = check_count(batch, "batch")
    precision = check_precision(precision)
    chunk = check_count(chunk, "chunk", allow_none=True)
    if estimator not in ("unbiased", "biased"):
        raise ValidationError(f"estimator must be 'unbiased' or 'biased' for mmd_test, got {describe(estimator)}")
    rng = as_generator(seed)
    n, m = x.shape[0], y.shape[0]
    if paired:  # s and -s give the same statistic
        distinct = 2.0 ** (min(m, 64) - 1)
        notes = resampling_warnings(
            n_permutations,
            distinct,
            0.05,
            draws="n_permutations",
            units=f"m={m} pairs",
            needed=_units_needed(distinct, 0.05, paired=True),
        )
    else:
        distinct = distinct_splits(n, m)
        notes = resampling_warnings(
            n_permutations,
            distinct,
            0.05,
            draws="n_permutations",
            units=f"n={n} and m={m} units",
            needed=_units_needed(distinct, 0.05, paired=False),
        )
    k = _fitted_kernel(kernel, bandwidth, x, y)
    dev = get_device(device)
    stat, null = _mmd_null(x, y, k, bool(paired), estimator, n_permutations, rng, batch, precision, chunk, dev)
    pvalue = resampling_pvalue(null, stat)
    return MMDTestResult(
        statistic=stat,
        pvalue=float(pvalue),
        null_distribution=null,
        n_permutations=n_permutations,
        paired=bool(paired),
        kernel=k,
        n=n,
        m=m,
        warnings=notes,
    )


def _mmd_null(
    x: np.ndarray,
    y: np.ndarray,
    k: Kernel,
    paired: bool,
    estimator: str,
    n_permutations: int,
    rng: np.random.Generator,
    batch: int,
    precision: str,
    chunk: int | None,
    dev: Any,
) -> tuple[float, np.ndarray]:
    """The observed MMD^2 of :func:`mmd_test` and its null replicates (sign flips of pairs, or permutations)."""
    n, m = x.shape[0], y.shape[0]
    if paired:
        scale = m * (m - 1)
        q_obs, q_null = signflip_null(
            paired_rows(k, to_tensor(x, dev), to_tensor(y, dev)),
            n_permutations,
            rng,
            batch=batch,
            precision=precision,
            chunk=chunk,
            n_rows=m,
            device=dev,
        )
        return q_obs / scale, q_null / scale
    return permutation_null(
        k,
        to_tensor(np.concatenate([x, y]), dev),
        n,
        n_permutations,
        rng,
        estimator=estimator,
        batch=batch,
        precision=precision,
        chunk=chunk,
    )
