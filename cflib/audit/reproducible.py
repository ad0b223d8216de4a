"""Numbers that do not depend on how the rows are split: row hashes, hash-derived streams and exact sums.

The building blocks of the distributed audit (:func:`cflib.audit.distributed.audit_distributed`, issue 30), which
estimates the doubly robust effects of Plecko & Bareinboim (arXiv 2306.05059, Def. 3, Props. 3-4) on a Dask
DataFrame. Every random choice is a pure function of a row and the seed, and every sum is exact, so the audit of
the same rows gives the same numbers for any partitioning and any order of the rows:

* :func:`row_hashes`: a 64-bit hash per row, of a key column or of the row's content
  (:func:`pandas.util.hash_pandas_object` with a hash key derived from the seed);
* :func:`hash_stream`: independent 64-bit streams derived from the row hash with the splitmix64 finaliser
  (:func:`splitmix64`), which give each row its cross-fitting fold (:func:`fold_of`), its rank in the nuisance
  subsample and its bootstrap multipliers (:func:`rademacher`: 64 replicates per 64-bit word);
* :func:`exact_sums` and :func:`exact_multiplier_sums`: sums of float columns (plain, or weighted by the
  multipliers of every bootstrap replicate) computed exactly. Each value is cut into integer limbs of
  :data:`LIMB_BITS` bits on the fixed grid ``2**-GRID_BITS``; a chunk's limb sums stay below ``2**53``, so a
  floating-point sum or matrix product of limbs is exact in any order, and partial sums are Python integers.
  Adding partitions' sums is then associative: the total is the same however the rows were split, and
  :func:`exact_value` rounds it to the nearest float once.

The only rounding left is each row's truncation to the grid (below ``2**-100`` absolute), which depends on the
row alone.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "CHUNK_ROWS",
    "GRID_BITS",
    "LIMB_BITS",
    "MAX_ABS",
    "N_LIMBS",
    "add_sums",
    "exact_multiplier_sums",
    "exact_sums",
    "exact_value",
    "fold_of",
    "hash_key",
    "hash_stream",
    "rademacher",
    "row_hashes",
    "splitmix64",
]

#: Values are truncated to multiples of ``2**-GRID_BITS`` before they are summed.
GRID_BITS = 100
#: Bits per limb: a limb is an integer below ``2**LIMB_BITS`` in absolute value.
LIMB_BITS = 38
#: Limbs per value: ``N_LIMBS * LIMB_BITS`` bits cover every ``|v| < MAX_ABS`` on the grid.
N_LIMBS = 4
#: Largest absolute value the exact sums take (``2**50``, about ``1.1e15``).
MAX_ABS = 2.0**50
#: Rows per chunk: ``CHUNK_ROWS * 2**LIMB_BITS <= 2**52``, so a chunk's limb sums are exact in float64.
CHUNK_ROWS = 2**14
#: Chunks summed in int64 before the partial sums move to Python integers (``2**52 * 2**10 < 2**63``).
_FLUSH_CHUNKS = 2**10

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_STREAM_PRIME = 0x100000001B3  # FNV prime: seed and stream fold into one 64-bit salt
_SIGNS = np.array([1.0, -1.0])  # bit 0 -> +1, bit 1 -> -1


def splitmix64(x: ArrayLike) -> NDArray[np.uint64]:
    """The splitmix64 finaliser (Steele, Lea & Flood 2014), a bijection of 64-bit integers that mixes every bit.

    Parameters
    ----------
    x : array-like of uint64

    Returns
    -------
    numpy.ndarray of uint64
        Same shape as ``x``.
    """
    z = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _MIX1
        z = (z ^ (z >> np.uint64(27))) * _MIX2
        return z ^ (z >> np.uint64(31))


def hash_key(seed: int) -> str:
    """The 16-character ``hash_key`` of :func:`pandas.util.hash_pandas_object` for a seed.

    Parameters
    ----------
    seed : int
        A whole number ``>= 0``.

    Returns
    -------
    str
        16 hexadecimal characters (a BLAKE2b digest of the seed).
    """
    return hashlib.blake2b(f"cflib.audit:{int(seed)}".encode(), digest_size=8).hexdigest()


def row_hashes(frame: pd.DataFrame, key: str | None, columns: Sequence[str], seed: int) -> NDArray[np.uint64]:
    """A 64-bit hash per row: of the ``key`` column, or of the row's content in ``columns``.

    The hash depends on the row's values and the seed only (not on the index, the partition or the row's
    position), so rows keep their folds, subsample ranks and bootstrap multipliers however the data are split.
    Rows with the same key (or, without a key, the same content) get the same hash.

    Parameters
    ----------
    frame : pandas.DataFrame
    key : str or None
        A column identifying the rows; ``None`` hashes ``columns``.
    columns : sequence of str
        The columns hashed when ``key`` is ``None`` (in this order).
    seed : int

    Returns
    -------
    numpy.ndarray of uint64
        One hash per row.
    """
    what = frame[key] if key is not None else frame[list(columns)]
    return pd.util.hash_pandas_object(what, index=False, hash_key=hash_key(seed)).to_numpy(dtype=np.uint64)


def hash_stream(h: ArrayLike, seed: int, stream: int) -> NDArray[np.uint64]:
    """Stream ``stream`` of 64-bit values derived from row hashes: ``splitmix64(h XOR salt(seed, stream))``.

    Parameters
    ----------
    h : array-like of uint64
        Row hashes (:func:`row_hashes`).
    seed : int
    stream : int
        Which stream (the audit uses 1 for folds, 2 for the subsample rank, 16 and up for the multipliers).

    Returns
    -------
    numpy.ndarray of uint64
    """
    salt = splitmix64(np.array([(int(seed) * _STREAM_PRIME + int(stream)) % 2**64], dtype=np.uint64))[0]
    return splitmix64(np.asarray(h, dtype=np.uint64) ^ salt)


def fold_of(h: ArrayLike, seed: int, n_folds: int) -> NDArray[np.int64]:
    """Each row's cross-fitting fold in ``0 .. n_folds - 1``, from its hash.

    Parameters
    ----------
    h : array-like of uint64
    seed : int
    n_folds : int

    Returns
    -------
    numpy.ndarray of int64
    """
    return (hash_stream(h, seed, 1) % np.uint64(n_folds)).astype(np.int64)


def rademacher(h: ArrayLike, seed: int, n_boot: int) -> NDArray[np.float64]:
    """Bootstrap multipliers ``g[i, b]`` in ``{-1, +1}``, a pure function of (row hash, replicate, seed).

    Replicate ``b`` reads bit ``b % 64`` of stream ``16 + b // 64``: equally likely signs, independent across
    rows and replicates (as far as splitmix64 is a good mixer).

    Parameters
    ----------
    h : array-like of uint64
        Row hashes.
    seed : int
    n_boot : int
        Replicates.

    Returns
    -------
    numpy.ndarray
        ``(len(h), n_boot)`` floats, each ``-1.0`` or ``1.0``.
    """
    hh = np.asarray(h, dtype=np.uint64)
    words = max(1, -(-int(n_boot) // 64))
    streams = np.column_stack([hash_stream(hh, seed, 16 + j) for j in range(words)]).astype("<u8")
    # Little-endian bytes unpacked little-end first: column 64 j + k is bit k of word j on every platform.
    bits = np.unpackbits(streams.view(np.uint8).reshape(hh.size, 8 * words), axis=1, bitorder="little")
    return _SIGNS[bits[:, : int(n_boot)]]


def _limbs(values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(m, c)`` values -> ``(m, c * N_LIMBS)`` integer-valued limbs (value ``c``'s limb ``k`` at ``c * N_LIMBS + k``).

    ``v`` is truncated to the grid ``2**-GRID_BITS`` and written as ``sum_k L_k 2**(LIMB_BITS k - GRID_BITS)`` with
    every ``|L_k| < 2**LIMB_BITS`` of the sign of ``v``; each step only clears leading bits, so it is exact.
    """
    if values.size and not np.isfinite(values).all():
        raise ValueError("the audit's per-row values hold NaN or infinite numbers; check the data and the model")
    if values.size and np.abs(values).max() >= MAX_ABS:
        raise ValueError(
            f"the audit's per-row values reach {np.abs(values).max():.3g}; the exact sums take |v| < 2**50: rescale the outcome"
        )
    r = np.trunc(np.ldexp(values, GRID_BITS))
    out = np.empty((*values.shape, N_LIMBS))
    for k in range(N_LIMBS - 1, -1, -1):
        top = np.trunc(np.ldexp(r, -LIMB_BITS * k))
        out[..., k] = top
        r = r - np.ldexp(top, LIMB_BITS * k)
    return out.reshape(values.shape[0], -1)


def _as_columns(values: ArrayLike) -> NDArray[np.float64]:
    """``(m,)`` or ``(m, c)`` values as an ``(m, c)`` float array."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        return v[:, None]
    if v.ndim != 2:
        raise ValueError(f"values must be (rows,) or (rows, columns), got shape {v.shape}")
    return v


def _to_python(limb_sums: NDArray[np.int64], n_cols: int) -> NDArray[np.object_]:
    """Limb sums ``(..., c * N_LIMBS)`` -> one Python integer per column (units of ``2**-GRID_BITS``)."""
    parts = limb_sums.reshape(*limb_sums.shape[:-1], n_cols, N_LIMBS).astype(object)
    total = np.zeros(parts.shape[:-1], dtype=object)
    for k in range(N_LIMBS):
        total = total + parts[..., k] * (1 << (LIMB_BITS * k))
    return total


def exact_sums(values: ArrayLike) -> NDArray[np.object_]:
    """Exact column sums of ``(m, c)`` floats, as Python integers in units of ``2**-GRID_BITS``.

    Parameters
    ----------
    values : array-like
        ``(m, c)`` finite floats with ``|v| < MAX_ABS`` (``(m,)`` is one column).

    Returns
    -------
    numpy.ndarray of object
        ``(c,)`` Python integers; add partitions' sums with :func:`add_sums`, read them with :func:`exact_value`.

    Raises
    ------
    ValueError
        A value is not finite or too large.
    """
    v = _as_columns(values)
    c = v.shape[1]
    total = np.zeros(c, dtype=object)
    acc = np.zeros(c * N_LIMBS, dtype=np.int64)
    for i, start in enumerate(range(0, v.shape[0], CHUNK_ROWS)):
        acc += _limbs(v[start : start + CHUNK_ROWS]).sum(axis=0).astype(np.int64)
        if (i + 1) % _FLUSH_CHUNKS == 0:
            total, acc = total + _to_python(acc, c), np.zeros_like(acc)
    return total + _to_python(acc, c)


def exact_multiplier_sums(values: ArrayLike, h: ArrayLike, seed: int, n_boot: int) -> NDArray[np.object_]:
    """Exact sums ``sum_i g[i, b] v[i, j]`` for every replicate ``b`` and column ``j``, with :func:`rademacher` multipliers.

    The multipliers are drawn chunk by chunk (``CHUNK_ROWS`` rows at a time), so memory stays at
    ``CHUNK_ROWS * n_boot`` floats whatever the partition's size.

    Parameters
    ----------
    values : array-like
        ``(m, c)`` finite floats, ``|v| < MAX_ABS``.
    h : array-like of uint64
        The rows' hashes.
    seed : int
    n_boot : int

    Returns
    -------
    numpy.ndarray of object
        ``(n_boot, c)`` Python integers in units of ``2**-GRID_BITS``.
    """
    v = _as_columns(values)
    hh = np.asarray(h, dtype=np.uint64)
    if hh.shape != (v.shape[0],):
        raise ValueError(f"h must hold one hash per row ({v.shape[0]}), got shape {hh.shape}")
    c = v.shape[1]
    total = np.zeros((int(n_boot), c), dtype=object)
    acc = np.zeros((int(n_boot), c * N_LIMBS), dtype=np.int64)
    for i, start in enumerate(range(0, v.shape[0], CHUNK_ROWS)):
        limbs = _limbs(v[start : start + CHUNK_ROWS])
        used = np.flatnonzero(np.any(limbs != 0, axis=0))  # zero limbs add nothing; skipping them is exact
        if used.size:
            g = rademacher(hh[start : start + CHUNK_ROWS], seed, n_boot)
            acc[:, used] += (g.T @ limbs[:, used]).astype(np.int64)  # integers below 2**52: exact in any order
        if (i + 1) % _FLUSH_CHUNKS == 0:
            total, acc = total + _to_python(acc, c), np.zeros_like(acc)
    return total + _to_python(acc, c)


def add_sums(*sums: Any) -> Any:
    """Add exact sums (object arrays of Python integers, or ``None`` for none) elementwise.

    Parameters
    ----------
    *sums : numpy.ndarray of object or None

    Returns
    -------
    numpy.ndarray of object or None
        ``None`` when every input is ``None``.
    """
    present = [s for s in sums if s is not None]
    if not present:
        return None
    total = present[0].copy()
    for s in present[1:]:
        total = total + s
    return total


def exact_value(total: Any) -> NDArray[np.float64]:
    """Exact sums (Python integers in units of ``2**-GRID_BITS``) rounded once to the nearest floats.

    Parameters
    ----------
    total : numpy.ndarray of object or int

    Returns
    -------
    numpy.ndarray of float64
        Same shape.
    """
    arr = np.asarray(total, dtype=object)
    flat = [math.ldexp(float(int(t)), -GRID_BITS) for t in arr.ravel()]
    return np.asarray(flat, dtype=np.float64).reshape(arr.shape)
