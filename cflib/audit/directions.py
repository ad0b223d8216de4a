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
from typing import Any

import numpy as np

__all__ = ["directional_cfclot"]


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
    parts: list[str] = []
    notes: list[str] = []
    ends: list[tuple[float, float, float, float]] = []  # estimate, low, high, p
    for code, (src, dst) in enumerate(((labels[0], labels[1]), (labels[1], labels[0]))):
        key = "x0 -> x1" if code == 0 else "x1 -> x0"
        sel = a01 == code
        if sel.sum() < 2:
            results[key] = None
            parts.append(f"{src} -> {dst}: fewer than 2 units")
            continue
        res = cfclot_test(y_hat[sel], y_cf[sel], epsilon, alpha=alpha / 2, seed=seed)
        results[key] = res
        notes.extend(res.warnings)
        lo = hi = math.nan
        if res.method == "normal" and res.sigma is not None:
            half = z * float(res.sigma) / math.sqrt(res.m)
            lo, hi = res.statistic - half, res.statistic + half
        ends.append((float(res.statistic), lo, hi, float(res.pvalue)))
        parts.append(
            f"{src} -> {dst}: N-TE {res.statistic:.3g}"
            + (f" [{lo:.3g}, {hi:.3g}]" if np.isfinite(lo) else "")
            + f", p {res.pvalue:.3g}, {res.m} units"
        )
    method = (
        f"CF-CLOT per direction (the units with x = {labels[0]} under do(x -> {labels[1]}), those with "
        f"x = {labels[1]} under do(x -> {labels[0]})), N-TE <= {epsilon}, each at alpha/2 = {alpha / 2:.3g} "
        f"(Bonferroni); estimate and interval: the larger N-TE, its {1 - alpha:.0%} interval from the "
        f"{1 - alpha / 2:.1%} intervals of both; p-value: twice the smaller. " + "; ".join(parts)
    )
    row: dict[str, Any] = {
        "ci_low": math.nan,
        "ci_high": math.nan,
        "method": method,
        "reference": "closeness-test, Eq. 7 and Def. 4 (per direction)",
    }
    if len(ends) < 2:
        row.update(
            estimate=math.nan,
            pvalue=math.nan,
            verdict="not estimable: a direction has fewer than 2 units (" + "; ".join(parts) + ")",
        )
        return row, results, tuple(dict.fromkeys(notes))
    worst = int(np.argmax([e[0] for e in ends]))
    p = min(1.0, 2 * min(e[3] for e in ends))
    lows, highs = [e[1] for e in ends], [e[2] for e in ends]
    if all(np.isfinite(lows)) and all(np.isfinite(highs)):
        row.update(ci_low=max(lows), ci_high=max(highs))
    which = ("do(x -> {1}) on the {0} units", "do(x -> {0}) on the {1} units")[worst].format(*labels)
    row.update(
        estimate=ends[worst][0],
        pvalue=p,
        verdict=f"not {epsilon}-close (N-TE > {epsilon} under {which})"
        if p < alpha
        else f"no evidence against {epsilon}-closeness in either direction",
    )
    return row, results, tuple(dict.fromkeys(notes))
