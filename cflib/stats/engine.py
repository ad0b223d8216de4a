"""The resampling engine under every kernel-matrix null of :mod:`cflib.stats`.

Permutation, sign-flip and bootstrap nulls of quadratic-time kernel statistics all reduce to the
quadratic forms ``q_j = v_j' A v_j`` of one symmetric ``N x N`` matrix ``A`` (a Gram matrix, or the
paired ``H``) with ``B`` resampling vectors ``v_j`` (group indicators, Rademacher signs, bootstrap
weights): ``q = sum over rows of V * (A @ V)``. :func:`quadratic_forms` evaluates them

* in row blocks of ``A`` produced on demand, so memory is ``O(N x chunk + N x B)`` and the full matrix
  never exists (``n = m = 100000`` runs on a laptop);
* with every block computed in float64 and the product ``A_block @ V`` done in float32 (half the time and
  memory of float64 on a CPU, far less on a GPU) or in float64;
* in torch, so the same code runs on a CPU or on CUDA.

float32 products never change a p-value: :func:`rounding_bound` bounds the float32 error of each
``q_j`` (one rounding of each entry of ``A``, plus the probabilistic bound of Higham & Mary (2019),
*A new approach to probabilistic rounding error analysis*, Thm. 2.4, ``lambda sqrt(N) u`` per inner
product, with ``lambda = 8``: each bound fails with probability below ``1e-13`` under their model of
independent rounding errors), and the callers recompute in float64 every draw whose float32 value
lies within that bound of the observed statistic. Every comparison with the observed value is then the
float64 one, so the count ``k`` of ``(1 + k) / (1 + B)`` is the float64 count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_callable,
    check_choice,
    check_count,
    check_finite,
    check_real,
    describe,
)

if TYPE_CHECKING:
    import torch

__all__ = [
    "QuadraticForms",
    "quadratic_forms",
    "rounding_bound",
    "default_chunk",
    "settle_near_ties",
    "check_precision",
]

#: float32 unit roundoff and the probabilistic-bound multiplier (see the module docstring).
_U32 = 2.0**-24
_U64 = 2.0**-53
_LAMBDA = 8.0
_PRECISIONS = ("mixed", "float64")


@dataclass(frozen=True)
class QuadraticForms:
    """Output of :func:`quadratic_forms`.

    Attributes
    ----------
    q : numpy.ndarray, shape (B,)
        ``v_j' A v_j`` for the working-precision columns (float32 products summed in float64, or float64).
    q_exact : numpy.ndarray, shape (B_exact,)
        The same for the ``exact`` columns, always in float64.
    abs_total : float
        ``sum_ik |A_ik|``: with ``|v| <= 1`` it bounds ``sum_ik |v_ij| |A_ik| |v_kj|``, the scale of the
        rounding error of every ``q_j`` (equal to it for signs ``+-1``; for a non-negative ``A`` and 0/1
        indicators that scale is ``q_j`` itself).
    row_sums : numpy.ndarray, shape (N,)
        Row sums of ``A`` in float64.
    dtype : str
        ``"float32"`` or ``"float64"``: the precision of the products behind ``q``.
    """

    q: np.ndarray
    q_exact: np.ndarray
    abs_total: float
    row_sums: np.ndarray
    dtype: str


def default_chunk(n_rows: int, budget_bytes: int = 16 * 2**20) -> int:
    """Rows per block so that one float64 block of ``n_rows`` columns takes about ``budget_bytes``.

    Parameters
    ----------
    n_rows : int
        Size ``N`` of the square matrix.
    budget_bytes : int
        Memory of one float64 block.

    Returns
    -------
    int
        Between 16 and ``n_rows``.
    """
    n_rows = check_count(n_rows, "n_rows")
    budget_bytes = check_count(budget_bytes, "budget_bytes")
    return int(max(16, min(n_rows, budget_bytes // (8 * max(n_rows, 1)))))


def check_precision(precision: Any) -> str:
    """Validate a ``precision`` argument (``"mixed"`` or ``"float64"``) and return it.

    Parameters
    ----------
    precision : {"mixed", "float64"}

    Returns
    -------
    str

    Raises
    ------
    ValueError
        Any other value.
    """
    return check_choice(precision, "precision", _PRECISIONS)


def _check_vectors(v: Any, name: str, n_rows: int) -> torch.Tensor | None:
    """``None`` or a real 2-d torch tensor with ``n_rows`` rows (one column per resampling vector)."""
    import torch

    if v is None:
        return None
    if not isinstance(v, torch.Tensor) or v.is_complex():
        raise ValidationTypeError(
            f"{name} must be a real torch.Tensor of shape ({n_rows}, B) or None, got {describe(v)}"
        )
    if v.ndim != 2 or v.shape[0] != n_rows:
        hint = f": transpose it ({name}.T)" if v.ndim == 2 and v.shape[1] == n_rows else ""
        raise ValidationError(
            f"{name} must have shape ({n_rows}, B), one row per row of the matrix, got {tuple(v.shape)}{hint}"
        )
    return v


def quadratic_forms(
    rows: Callable[[int, int, Any], Any],
    n_rows: int,
    v: Any | None,
    *,
    exact: Any | None = None,
    precision: str = "mixed",
    chunk: int | None = None,
    device: Any = "cpu",
) -> QuadraticForms:
    """All quadratic forms ``v_j' A v_j`` of a symmetric matrix given by row blocks.

    Parameters
    ----------
    rows : callable
        ``rows(i0, i1, out)`` writes rows ``i0:i1`` of ``A`` (diagonal already set as the statistic
        needs) into ``out``, a float64 tensor of shape ``(i1 - i0, N)`` on ``device``, and returns it.
        One buffer serves every block: allocating a fresh block per step made the process grow by
        gigabytes over thousands of blocks (heap fragmentation).
    n_rows : int
        ``N``.
    v : torch.Tensor, shape (N, B), or None
        Resampling vectors (any float dtype; cast once to the working precision).
    exact : torch.Tensor, shape (N, B_exact), optional
        Columns evaluated in float64 in the same pass (the observed statistic, or draws to re-check).
    precision : {"mixed", "float64"}
        ``"mixed"``: products in float32, sums across blocks in float64. ``"float64"``: all float64.
    chunk : int, optional
        Rows per block; :func:`default_chunk` by default. Memory is about ``chunk * N`` float64
        numbers plus ``V`` itself.
    device : str or torch.device
        Where the blocks live.

    Returns
    -------
    QuadraticForms
    """
    import torch

    check_callable(rows, "rows")
    precision = check_precision(precision)
    n_rows = check_count(n_rows, "n_rows")
    _check_vectors(v, "v", n_rows)
    _check_vectors(exact, "exact", n_rows)
    chunk = default_chunk(n_rows) if chunk is None else check_count(chunk, "chunk")
    work = torch.float32 if precision == "mixed" else torch.float64
    vw = None if v is None else v.to(work)
    ve = None if exact is None else exact.to(torch.float64)
    b = 0 if vw is None else vw.shape[1]
    be = 0 if ve is None else ve.shape[1]
    q = torch.zeros(b, dtype=torch.float64)
    abs_total = 0.0
    q_exact = torch.zeros(be, dtype=torch.float64)
    row_sums = []
    rows_per = min(chunk, n_rows)
    buf64 = torch.empty((rows_per, n_rows), dtype=torch.float64, device=device)
    buf = None if vw is None or precision == "float64" else torch.empty((rows_per, n_rows), dtype=work, device=device)
    for i0 in range(0, n_rows, chunk):
        i1 = min(n_rows, i0 + chunk)
        blk = rows(i0, i1, buf64[: i1 - i0])
        row_sums.append(blk.sum(1).cpu())
        abs_total += float(torch.linalg.vector_norm(blk, ord=1))
        if ve is not None:
            q_exact += (ve[i0:i1] * (blk @ ve)).sum(0).cpu()
        if vw is not None:
            bw = blk if buf is None else buf[: i1 - i0].copy_(blk)  # one float32 buffer for every block
            q += (vw[i0:i1] * (bw @ vw)).to(torch.float64).sum(0).cpu()
    return QuadraticForms(
        q=q.numpy(),
        q_exact=q_exact.numpy(),
        abs_total=abs_total,
        row_sums=torch.cat(row_sums).numpy(),
        dtype="float32" if precision == "mixed" else "float64",
    )


def rounding_bound(abs_q: np.ndarray, n_rows: int, dtype: str) -> np.ndarray:
    """Bound on ``|q_float - q_exact|`` for quadratic forms from :func:`quadratic_forms`.

    One rounding of every entry of ``A`` and of ``V`` on the cast to float32 (``3 u`` relative for each
    term ``v_i A_ik v_k``), an inner product of length ``N`` per entry of ``A @ V`` (probabilistically
    ``lambda sqrt(N) u`` relative to its absolute terms), the element-wise product with ``V`` (one
    rounding), and the float64 sum over rows (``N u_64``); the absolute terms add up to ``abs_q``.
    A factor 2 is kept as a safety margin.

    Parameters
    ----------
    abs_q : numpy.ndarray
        ``sum_ik |v_ij| |A_ik| |v_kj|`` per column.
    n_rows : int
        ``N``.
    dtype : {"float32", "float64"}
        Precision of the products.

    Returns
    -------
    numpy.ndarray
        The bound per column (zeros for float64, where the callers' tie tolerance already applies).
    """
    check_choice(dtype, "dtype", ("float32", "float64"))
    n_rows = check_count(n_rows, "n_rows")
    abs_q = np.asarray(abs_q)
    if abs_q.dtype.kind not in "iuf":
        raise ValidationTypeError(f"abs_q must be a numeric array, got dtype {abs_q.dtype}")
    if not np.all(abs_q >= 0) or not np.isfinite(abs_q).all():
        raise ValidationError(
            "abs_q must hold finite sums of absolute values (>= 0), got negative, NaN or infinite entries"
        )
    if dtype == "float64":
        return np.zeros_like(abs_q)
    rel = _U32 * (4.0 + _LAMBDA * np.sqrt(n_rows)) + n_rows * _U64
    return 2.0 * rel * np.asarray(abs_q, dtype=np.float64)


def settle_near_ties(
    values: np.ndarray,
    bound: np.ndarray,
    threshold: float,
    recompute: Callable[[np.ndarray], np.ndarray],
) -> tuple[np.ndarray, int]:
    """Recompute in float64 the draws whose float32 value could lie on either side of ``threshold``.

    Parameters
    ----------
    values : numpy.ndarray, shape (B,)
        Null statistics from float32 products.
    bound : numpy.ndarray, shape (B,)
        Bound on the distance of each value from its float64 counterpart (:func:`rounding_bound`,
        scaled to the statistic).
    threshold : float
        The value the p-value compares with (the observed statistic minus the tie tolerance).
    recompute : callable
        ``recompute(indices)`` returns the float64 statistics of those draws.

    Returns
    -------
    (numpy.ndarray, int)
        The values with the ambiguous draws replaced by float64 ones, and how many were recomputed.
        ``count(values >= threshold)`` then equals the float64 count.
    """
    values, bound = np.asarray(values), np.asarray(bound)
    for name, a in (("values", values), ("bound", bound)):
        if a.ndim != 1 or a.dtype.kind not in "iuf":
            raise ValidationError(f"{name} must be a 1-d numeric array, got {describe(a)}")
        check_finite(a, name)
    if values.shape != bound.shape:
        raise ValidationError(f"values and bound must have the same length, got {values.size} and {bound.size}")
    threshold = check_real(threshold, "threshold")
    check_callable(recompute, "recompute")
    amb = np.flatnonzero(np.abs(values - threshold) <= bound)
    if amb.size == 0:
        return values, 0
    out = values.copy()
    out[amb] = recompute(amb)
    return out, int(amb.size)
