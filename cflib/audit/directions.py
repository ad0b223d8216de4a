"""CF-CLOT per direction, as the closeness paper defines N-TE (Fu et al., Definition 4: one direction
``do(a -> a')``): the units with ``x0`` under ``do(x0 -> x1)`` and the units with ``x1`` under ``do(x1 -> x0)``.

Comparing the pooled factual outputs with the pooled outputs after flipping every unit is blind to two-sided
effects: with a balanced attribute, a classifier that says 1 exactly when the attribute is 1 gives two pooled
samples with the same distribution (half ones each) although every decision changes. Each direction alone sees it.
The report's ``CF-CLOT`` row tests both directions, each at ``alpha / 2`` (Bonferroni), and reports the larger
N-TE: its interval ``[max of the lower ends, max of the upper ends]`` covers ``max(N-TE(x0 -> x1), N-TE(x1 -> x0))``
at ``1 - alpha``, so the status (:func:`cflib.audit.status.decide_status`) is ``flagged`` when one direction's N-TE is
shown beyond ``epsilon`` and ``clear`` when both are shown within it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

__all__ = ["DIRECTIONS", "DirectionEnds", "direction_row", "directional_cfclot"]

#: The two directions' keys: the units with ``x0`` under ``do(x0 -> x1)``, those with ``x1`` under ``do(x1 -> x0)``.
DIRECTIONS = ("x0 -> x1", "x1 -> x0")


def directional_cfclot(
    y_hat: np.ndarray,
    y_cf: np.ndarray,
    a01: np.ndarray,
    epsilon: float,
    alpha: float,
    seed: int,
    labels: tuple[Any, Any] = ("x0", "x1"),
) -> tuple[dict[str, Any], dict[str, Any], tuple[str, ...]]:
    """The ``CF-CLOT`` row of an audit, tested per direction.

    Parameters
    ----------
    y_hat, y_cf : numpy.ndarray
        Each unit's factual and counterfactual output (under ``do(x = the other level)``).
    a01 : numpy.ndarray
        The attribute coded 0 (``x0``) / 1 (``x1``).
    epsilon : float
        Tolerated N-TE.
    alpha : float
        Level of the row (each direction at ``alpha / 2``; its interval at ``1 - alpha / 2``).
    seed : int
        Seed of the tests.
    labels : (x0, x1)
        The levels' names, for the verdict and the method.

    Returns
    -------
    (dict, dict, tuple of str)
        The row (``estimate, ci_low, ci_high, pvalue, verdict, method, reference``), the two directions' results
        (``"x0 -> x1"``, ``"x1 -> x0"``; ``None`` where a direction has fewer than 2 units) and their warnings.
    """
    from scipy.stats import norm

    from ..stats.closeness import cfclot_test

    z = float(norm.ppf(1 - alpha / 2))
    results: dict[str, Any] = {}
    notes: list[str] = []
    ends: list[DirectionEnds | None] = []
    for code in (0, 1):
        sel = a01 == code
        if sel.sum() < 2:
            results[DIRECTIONS[code]] = None
            ends.append(None)
            continue
        res = cfclot_test(y_hat[sel], y_cf[sel], epsilon, alpha=alpha / 2, seed=seed)
        results[DIRECTIONS[code]] = res
        notes.extend(res.warnings)
        half = z * float(res.sigma) / math.sqrt(res.m) if res.method == "normal" and res.sigma is not None else math.nan
        ends.append(DirectionEnds(float(res.statistic), half, float(res.pvalue), int(res.m)))
    method = "CF-CLOT per direction"
    row = direction_row(ends, epsilon, alpha, labels, method, "closeness-test, Eq. 7 and Def. 4 (per direction)")
    return row, results, tuple(dict.fromkeys(notes))


class DirectionEnds(NamedTuple):
    """One direction's CF-CLOT: its N-TE, the half-width of its ``1 - alpha / 2`` interval (NaN: none), its
    p-value at level ``alpha / 2`` and its number of units."""

    statistic: float
    half: float
    pvalue: float
    m: int


def direction_row(
    ends: Sequence[DirectionEnds | None],
    epsilon: float,
    alpha: float,
    labels: tuple[Any, Any],
    method: str,
    reference: str,
) -> dict[str, Any]:
    """The report's ``CF-CLOT`` row from its two directions' results (in memory or from a cluster's sums).

    Parameters
    ----------
    ends : sequence of two DirectionEnds or None
        ``x0 -> x1`` (the units with ``x0``) then ``x1 -> x0``; ``None`` where a direction has fewer than 2 units.
    epsilon : float
        Tolerated N-TE.
    alpha : float
        Level of the row (each direction was tested at ``alpha / 2``).
    labels : (x0, x1)
        The levels' names.
    method : str
        How each direction was computed, the start of the row's ``method``.
    reference : str
        The row's ``reference``.

    Returns
    -------
    dict
        ``estimate, ci_low, ci_high, pvalue, verdict, method, reference``: the larger N-TE, the interval
        ``[max of the lower ends, max of the upper ends]``, twice the smaller p-value.
    """
    parts = []
    for code, e in enumerate(ends):
        src, dst = labels[code], labels[1 - code]
        if e is None:
            parts.append(f"{src} -> {dst}: fewer than 2 units")
            continue
        ci = f" [{e.statistic - e.half:.3g}, {e.statistic + e.half:.3g}]" if np.isfinite(e.half) else ""
        parts.append(f"{src} -> {dst}: N-TE {e.statistic:.3g}{ci}, p {e.pvalue:.3g}, {e.m} units")
    row: dict[str, Any] = {
        "ci_low": math.nan,
        "ci_high": math.nan,
        "method": f"{method} (the units with x = {labels[0]} under do(x -> {labels[1]}), those with "
        f"x = {labels[1]} under do(x -> {labels[0]})), N-TE <= {epsilon}, each at alpha/2 = {alpha / 2:.3g} "
        f"(Bonferroni); estimate and interval: the larger N-TE, its {1 - alpha:.0%} interval from the "
        f"{1 - alpha / 2:.1%} intervals of both; p-value: twice the smaller. " + "; ".join(parts),
        "reference": reference,
    }
    got = [e for e in ends if e is not None]
    if len(got) < 2:
        row.update(
            estimate=math.nan,
            pvalue=math.nan,
            verdict="not estimable: a direction has fewer than 2 units (" + "; ".join(parts) + ")",
        )
        return row
    worst = int(np.argmax([e.statistic for e in got]))
    p = min(1.0, 2 * min(e.pvalue for e in got))
    if all(np.isfinite(e.half) for e in got):
        row.update(ci_low=max(e.statistic - e.half for e in got), ci_high=max(e.statistic + e.half for e in got))
    which = ("do(x -> {1}) on the {0} units", "do(x -> {0}) on the {1} units")[worst].format(*labels)
    row.update(
        estimate=got[worst].statistic,
        pvalue=p,
        verdict=f"not {epsilon}-close (N-TE > {epsilon} under {which})"
        if p < alpha
        else f"no evidence against {epsilon}-closeness in either direction",
    )
    return row
