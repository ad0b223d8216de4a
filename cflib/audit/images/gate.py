"""The generator gate of an image audit (Monteiro et al., ICLR 2023, eqs. 1-3): composition, reversibility and
effectiveness, each with an interval over the images, against documented thresholds (:data:`GATE_DEFAULTS`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from ...validation import check_overrides
from .rows import make_row

__all__ = ["GATE_DEFAULTS", "check_gate", "gate_rows"]

#: Default thresholds of the generator gate. ``composition`` and ``reversibility`` bound the mean l1
#: distance (0-255 scale, Monteiro et al., App. B) between an image and the generator's null intervention
#: or its round trip: the upper end of the interval must lie at or below them. ``effectiveness`` bounds
#: the share of counterfactuals read as the intervened level: the lower end must lie at or above it.
GATE_DEFAULTS: dict[str, float] = {"composition": 12.0, "reversibility": 12.0, "effectiveness": 0.8}


def check_gate(gate: Any) -> dict[str, float]:
    """The gate's thresholds: :data:`GATE_DEFAULTS` overridden by ``gate``, each checked.

    Parameters
    ----------
    gate : mapping or None
        Thresholds among ``composition``, ``reversibility`` (in [0, 255]) and ``effectiveness`` (in [0, 1]).

    Returns
    -------
    dict of str to float

    Raises
    ------
    cflib.validation.ValidationError, cflib.validation.ValidationTypeError
        An unknown threshold or a value out of range.
    """
    return check_overrides(
        gate,
        GATE_DEFAULTS,
        "gate",
        what="threshold",
        example="{'effectiveness': 0.9}",
        high={"composition": 255.0, "reversibility": 255.0, "effectiveness": 1.0},
    )


def gate_rows(
    d_null: np.ndarray, d_back: np.ndarray, hits: np.ndarray, gate: Mapping[str, float], level: float
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """The three rows of the generator gate (Monteiro et al., eqs. 1-3) and the axioms that fail.

    Parameters
    ----------
    d_null : numpy.ndarray
        l1 distance (0-255 scale) between each image and its null intervention.
    d_back : numpy.ndarray
        l1 distance between each image and its round trip.
    hits : numpy.ndarray
        Whether the reader reads each counterfactual as the intervened level.
    gate : mapping
        The thresholds (:func:`check_gate`).
    level : float
        Coverage of the intervals.

    Returns
    -------
    (dict, list of str)
        The rows ``generator composition``, ``generator reversibility``, ``generator effectiveness``, and a text for
        each failed axiom (empty: the generator passes).
    """
    from ...verdicts import binomial_interval, mean_interval

    rows, failed = {}, []
    for name, d, eq, what in (
        ("composition", d_null, "eq. 1", "the null intervention f(x, pa, pa)"),
        ("reversibility", d_back, "eq. 2", "the round trip f(f(x, pa, pa*), pa*, pa)"),
    ):
        iv = mean_interval(d, level=level, unit="images")
        ok = iv.high <= gate[name]
        text = f"{iv.estimate:.3g} [{iv.low:.3g}, {iv.high:.3g}] vs <= {gate[name]:g}"
        if not ok:
            failed.append(f"{name} ({text})")
        rows[f"generator {name}"] = make_row(
            iv.estimate,
            iv.low,
            iv.high,
            math.nan,
            ("pass" if ok else "fail") + f": mean l1 {text}",
            f"mean l1 distance (0-255 scale) between each image and {what}, {iv.method}; passes when "
            f"the interval's upper end is <= {gate[name]:g}",
            f"axiomatic-soundness, {eq} ({name})",
        )
    iv = binomial_interval(int(hits.sum()), int(hits.size), level=level, unit="images")
    ok = iv.low >= gate["effectiveness"]
    text = f"{iv.estimate:.3g} [{iv.low:.3g}, {iv.high:.3g}] vs >= {gate['effectiveness']:g}"
    if not ok:
        failed.append(f"effectiveness ({text})")
    rows["generator effectiveness"] = make_row(
        iv.estimate,
        iv.low,
        iv.high,
        math.nan,
        ("pass" if ok else "fail") + f": {text}",
        "share of counterfactuals f(x, pa, pa*) the attribute reader reads as the intervened "
        f"level, {iv.method}; passes when the interval's lower end is >= {gate['effectiveness']:g}",
        "axiomatic-soundness, eq. 3 (effectiveness)",
    )
    return rows, failed
