"""The verdict parts of the benchmark's claims: one comparison each, joined into a claim's decision and note.

A claim of the chapter is a list of :class:`Part` (one-sided or band comparisons of an interval with a
boundary); :func:`record_claim` joins them (:func:`join_parts`: every part must hold, the interval shown is
the deciding part's) and records the claim with a tally and, when undecided, the size that would decide it.
:func:`degenerate_metric` says when a substitute metric cannot rank the models at all.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import claims, verdicts
from .config import MODEL_LABELS

#: What adds test images to a claim decided over test images (for an undecided claim's note).
MORE_TEST_IMAGES = "params/full.yaml runs 10000 test images"
#: What adds units to a claim decided over training seeds (for an undecided claim's note).
MORE_SEEDS = "the units are training seeds: the notebook's seeds parameter adds them, each seed's models are cached"
#: The caption of the paper's Table 5, quoted by the realism and minimality claims.
TABLE5_CAPTION = "Table 5: Realism and Minimality for MorphoMNIST and CelebA."
#: The source of a claim the paper does not make.
NOT_PAPER = "not in the paper"


@dataclass(frozen=True)
class Part:
    """One comparison of a claim: its label, its decision, the boundary it was decided against and its units.

    Attributes
    ----------
    label : str
        What is compared (shown in the claim's tally and note).
    decision : cflib.verdicts.Decision
        The comparison's verdict with its interval (a combined decision, which has none, is refused).
    threshold : float
        The boundary it was decided against (the nearer edge for a band).
    n : int
        Units of the interval (0 when its method names none).
    criterion : str
        When the models it reads have not converged (:func:`~cflib.experiments.benchmark.convergence.guard`): the
        convergence criterion's reading, which made it undecided; else ``""``.

    Raises
    ------
    ValueError
        If ``decision`` carries no interval.
    """

    label: str
    decision: verdicts.Decision
    threshold: float
    n: int
    criterion: str = ""

    def __post_init__(self) -> None:
        if self.decision.interval is None:
            raise ValueError(
                f"part {self.label!r}: its decision must carry the interval it was decided on "
                "(a one-sided or band decision, not a combined one)"
            )

    @property
    def interval(self) -> verdicts.Interval:
        """The interval the comparison was decided on (a part's decision always carries one)."""
        iv = self.decision.interval
        assert iv is not None  # checked in __post_init__
        return iv


def interval_units(interval: verdicts.Interval) -> int:
    """The number of units an interval rests on, read from its method (``", <n> "``; 0 when it names none).

    Parameters
    ----------
    interval : cflib.results.Interval

    Returns
    -------
    int
    """
    found = re.search(r", (\d+) ", interval.method)
    return int(found.group(1)) if found else 0


def side_part(
    label: str, interval: verdicts.Interval, side: str, threshold: float = 0.0, *, inclusive: bool = False
) -> Part:
    """A one-sided comparison: the interval lies below (or above) the threshold.

    Parameters
    ----------
    label : str
        What is compared.
    interval : cflib.results.Interval
        The quantity's interval.
    side : {"below", "above"}
        Where the claim puts the quantity.
    threshold : float
        The boundary.
    inclusive : bool
        Whether the boundary itself satisfies the claim.

    Returns
    -------
    Part
    """
    rule = verdicts.decide_below if side == "below" else verdicts.decide_above
    return Part(
        label, rule(interval, threshold, inclusive=inclusive, quantity=label), threshold, interval_units(interval)
    )


def band_part(label: str, interval: verdicts.Interval, low: float, high: float) -> Part:
    """A two-sided comparison: the interval lies within ``[low, high]``.

    Parameters
    ----------
    label : str
        What is compared.
    interval : cflib.results.Interval
        The quantity's interval.
    low, high : float
        The band.

    Returns
    -------
    Part
        Its threshold is the band's edge nearer the estimate.
    """
    n = interval_units(interval)
    edge = low if abs(interval.estimate - low) < abs(interval.estimate - high) else high
    return Part(label, verdicts.decide_within(interval, low, high, quantity=label), edge, n)


def part_margin(part: Part) -> float:
    """How many half-widths the interval's nearer end lies from the boundary (for the part shown).

    Parameters
    ----------
    part : Part

    Returns
    -------
    float
        ``-inf`` for an undefined interval, ``inf`` for a zero-width one.
    """
    iv = part.interval
    if not iv.defined:
        return -np.inf
    half = (iv.high - iv.low) / 2
    gap = min(abs(iv.low - part.threshold), abs(iv.high - part.threshold))
    return np.inf if half == 0 else gap / half


def join_parts(parts: Sequence[Part], what: str, more: str = MORE_TEST_IMAGES) -> tuple[verdicts.Decision, str, str]:
    """Join a claim's comparisons: the combined decision, with the deciding part's interval, a tally and a note.

    The interval recorded is the part nearest its boundary when every part is reproduced, otherwise the
    first part with the combined verdict. An undecided claim's note says how many test units would
    decide that part if its estimate stayed where it is (the half-width shrinks as one over root n).

    Parameters
    ----------
    parts : sequence of Part
        The claim's comparisons.
    what : str
        The joint rule, in words (e.g. ``"all 12 comparisons"``).
    more : str
        What adds units, for an undecided claim's note.

    Returns
    -------
    decision : cflib.verdicts.Decision
    tally : str
        How many parts are reproduced, not reproduced and undecided.
    note : str
        For an undecided claim, the size that would decide it; else ``""``.
    """
    d = verdicts.combine([p.decision for p in parts], rule=what)
    if d.verdict == verdicts.REPRODUCED:
        shown, why = min(parts, key=part_margin), "the part nearest its boundary"
    else:
        shown, why = next(p for p in parts if p.decision.verdict == d.verdict), "the first part that decides"
    decision = verdicts.Decision(d.verdict, shown.interval, f"{d.rule}. Interval shown ({why}): {shown.decision.rule}")
    counts = {
        v: sum(p.decision.verdict == v for p in parts)
        for v in (verdicts.REPRODUCED, verdicts.NOT_REPRODUCED, verdicts.UNDECIDED)
    }
    tally = (
        f"{counts[verdicts.REPRODUCED]}/{len(parts)} parts reproduced, {counts[verdicts.NOT_REPRODUCED]} not reproduced, "
        f"{counts[verdicts.UNDECIDED]} undecided; the interval is that of {shown.label}"
    )
    note = ""
    if d.verdict == verdicts.UNDECIDED:
        iv = shown.interval
        gap = abs(iv.estimate - shown.threshold) if iv.defined else 0.0
        unit = "training seeds" if "training seed" in iv.method else "units"
        if shown.criterion:
            note = (
                f"{shown.label}: the models have not converged ({shown.criterion}); training them longer decides it, "
                "not more units (params/full.yaml sets the epochs of paper scale)."
            )
        elif iv.method.endswith("1 training seed"):
            note = f"{shown.label}: decided on one training seed, and a model comparison needs at least two ({more})."
        elif not iv.defined or shown.n < 2:
            note = f"{shown.label}: no interval at {shown.n} {unit}; more {unit} would decide it ({more})."
        elif gap == 0:
            note = f"{shown.label}: the estimate sits on the boundary {shown.threshold:g}; no size decides it unless the estimate moves."
        else:
            need = int(np.ceil(shown.n * ((iv.high - iv.low) / 2 / gap) ** 2))
            note = (
                f"{shown.label} straddles {shown.threshold:g}: at this estimate about {need} {unit} (now {shown.n}) would "
                f"decide it ({more})."
            )
    return decision, tally, note


def record_claim(
    key: str,
    statement: str,
    parts: Sequence[Part],
    what: str,
    *,
    paper: Any,
    ours: Any,
    evidence: str,
    quote: str,
    source: str,
    kind: str,
    change: str = "",
    more: str = MORE_TEST_IMAGES,
) -> None:
    """Record a claim decided by its parts (:func:`join_parts`) through :func:`cflib.claims.claim`.

    Parameters
    ----------
    key, statement : str
        The claim's key and statement.
    parts : sequence of Part
        Its comparisons.
    what : str
        The joint rule, in words.
    paper, ours : object
        The paper's and the book's numbers.
    evidence : str
        What the comparisons rest on (the tally is appended).
    quote, source : str
        The paper's words and where they are.
    kind : str
        The claim's kind (``"reproduction"``, ``"sanity check"``, :data:`cflib.claims.FINDING`).
    change : str
        How the book's test differs from the paper's.
    more : str
        What adds units, for an undecided claim's note.

    Returns
    -------
    None
    """
    decision, tally, note = join_parts(parts, what, more)
    claims.claim(
        key,
        statement,
        paper=paper,
        ours=ours,
        evidence=f"{evidence}; {tally}",
        decision=decision,
        quote=quote,
        source=source,
        kind=kind,
        note=note,
        change=change,
    )


def degenerate_metric(
    values: Mapping[str, float], what: str, *, lower_is_better: bool | None, floor: float | None = None
) -> str:
    """Why a substitute metric cannot tell the models apart, or ``""`` when it can.

    The rule (the issue's): a metric is degenerate on the substitute data when it is constant across the
    models (a spread below 1e-9: a floor or a ceiling, so it cannot rank them), or when it ranks the true
    counterfactual worst of all (then a lower or higher value is not "more realistic" or "more minimal"
    here). The references (``"true"``, ``"identity"``) are shown but do not enter the spread.

    Parameters
    ----------
    values : mapping
        Label -> the metric's value, the models and ``"true"`` (and ``"identity"``) included.
    what : str
        The metric's name, for the text.
    lower_is_better : bool or None
        The metric's direction (``None``: it has none, e.g. P1; only constancy is checked).
    floor : float, optional
        For a probability: every model's value at or below ``floor`` is its floor (P1 below one in a
        thousand for every model cannot say which model has the highest).

    Returns
    -------
    str
        The measurement that shows the degeneracy (for the claim's note), or ``""``.
    """
    shown = ", ".join(f"{MODEL_LABELS.get(k, k)} {v:.3g}" for k, v in values.items())
    models = [v for k, v in values.items() if k not in ("true", "identity")]
    if max(models) - min(models) < 1e-9:
        return f"{what} is the same for every model ({shown}): it cannot tell the models apart here."
    if floor is not None and max(models) <= floor:
        return f"{what} sits at its floor for every model (all at most {floor:g}: {shown}): it cannot tell the models apart here."
    if lower_is_better is None:
        return ""
    worst = max(values, key=lambda k: values[k]) if lower_is_better else min(values, key=lambda k: values[k])
    if worst == "true":
        return f"{what} ranks the true counterfactual worst ({shown}): on this substitute it does not measure what the paper's metric does."
    return ""
