"""How the chapter's claims are decided: the paper's words, joint decisions and the intervals they rest on.

Intervals over test images (paired or Welch), over training seeds (each seed's mean over its images), and
the notes of undecided claims (the sizes that would decide them).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from ... import claims
from ... import verdicts as vd

#: The paper's words (verbatim) that each claim checks, and where they are. Claims that are not the
#: paper's quote the implementation notes or say that they are the book's own.
QUOTES: dict[str, tuple[str, str]] = {
    "C1": (
        "We can see that the identity function achieves perfect composition and reversibility but, as expected, fails at effectiveness.",
        "Sec. 4.1, 'Comparing with poor counterfactuals'; Table 1, identity row (0.00 / 10.50 / 32.98)",
    ),
    "C2": (
        "close to the value without the encoder $l_1^{(10)} = 19.04 \\ (0.09)$",
        "Sec. 4.1; Table 1, 'VAE w/o encoder' row: 19.04 (0.09) as composition and as reversibility too",
    ),
    "C3": (
        "$l_1^{(10)} = 17.36 \\ (0.62)$, close to the value without the encoder $l_1^{(10)} = 19.04 \\ (0.09)$, indicating that the VAE "
        "progressively loses the identity of the image and converges to a random sample (Figure 1a).",
        "Sec. 4.1, Figure 1a",
    ),
    "C4": (
        "To obtain lower bounds for the soundness metrics, we include two models that, by design, cannot perform abduction: the identity "
        "function and a VAE without the encoder at inference time (Bernoulli VAE, $\\beta = 1$).",
        "Sec. 4.1; Table 1, unconfounded block",
    ),
    "C5": (
        "reversibility^(1) ≥ composition^(1) for the VAEs … (two applications vs one). Holds in every VAE row of Table 1, e.g. 7.67 vs 5.98.",
        "notes §5 item 5, read from Table 1; the paper's text does not state it",
    ),
    "C6": (
        "This implies the existence of a null transformation f(x, pa, pa) = x since if $pa^* = pa$, then x is not affected. … "
        "Then, the composition of $f_1(\\cdot)$ and $f_2(\\cdot)$ is commutative",
        "Sec. 3.1.1 (composition, effectiveness $Pa(f(x, pa, pa^*)) = pa^*$); App. C.1, Lemma C.1, eqs. 11-12",
    ),
    "C7": (
        "In this paper, we opted to use the l_1 distance, which is a metric, because we can directly interpret its value as the average "
        "pixel intensity by which two images differ.",
        "App. B",
    ),
    "C8": (
        "For the confounded scenario without full support, we see a significant drop in performance",
        "Sec. 4.1, 'Comparing models and scenarios'; Table 1",
    ),
    "C9": (
        "which we cannot recover even when using a simulated intervention since the lack of support prevents us from sampling points from "
        "some areas of the joint distribution.",
        "Sec. 4.1, 'Comparing models and scenarios'; Table 1",
    ),
    "C10": (
        "Nevertheless, when the confounded distribution has full support, we can recover the performance using a simulated intervention "
        "or selecting an appropriate β penalty for the VAE.",
        "Sec. 4.1, 'Comparing models and scenarios'; Table 1",
    ),
    "C11": (
        "In the absence of interventional data, we use simulated interventions by resampling the data – note that this is only possible "
        "when the observed joint distribution has full support over the product of marginals.",
        "Sec. 3.3, eq. 4",
    ),
    "C12": (
        "The GAN with composition constraint … has the best hue effectiveness (1.84 / 1.77) and the best composition (5.25 with SI). "
        "It has the *worst* digit reversibility (10.75)",
        "notes §5 item 12, read from Table 1; the paper's text does not state it",
    ),
    "C13": (
        "When training the pseudo-oracles on the confounded scenario w/ full support, we obtain a digit accuracy of 90.67% and hue absolute "
        "error of 6.34% – down from 99.18% and 1.38% respectively, for the oracles trained on unconfounded data. However, using a "
        "simulated intervention, we obtained 96.70% and 4.11% for the digit accuracy and hue absolute error, respectively.",
        "Sec. 4.1, 'Measuring effectiveness using pseudo-oracles trained on biased data'",
    ),
    "C14": (
        "Regardless, we show in Tables 2, 3 that the relative performance ranking of the models is only slightly affected by the "
        "decrease in oracle quality due to confounding.",
        "Sec. 4.1; Tables 2-4 captions (0.8(3) / 0.75, 0.8(3) / 0.625, 0.91(6) / 0.6875)",
    ),
    "C15": (
        "The lack of exogenous factors explains the consistency in the composition scores after repeated null interventions.",
        "Sec. 4.2; Table 5 (VAE composition 1.62 at m = 1 and m = 10)",
    ),
    "C16": (
        "Conversely, abducting only a subset trends the model towards obeying the conditioning at the cost of faithfulness to the input "
        "observation. In other words, there is a trade-off between effectiveness and composition/reversibility.",
        "Sec. 4.3; Table 6, Figure 7",
    ),
    "C17": (
        "Notice how no penalty (β =1) yields the best likelihood, composition and reversibility at the cost of low effectiveness "
        "(i.e. ignored counterfactual conditioning under full abduction).",
        "App. F, Table 7 caption (β = 1, 3, 5, 7, 10)",
    ),
    "C17-nll": (
        "Notice how no penalty (β =1) yields the best likelihood",
        "App. F, Table 7 caption; NLL 2.874 -> 4.446 bits/dim for β = 1 -> 10",
    ),
    "C18": (
        "Notice how low prior temperatures affect the effectiveness of cycled back images the most (Figure (a)).",
        "App. F, Figure 8 caption",
    ),
    "C19": (
        "The process is repeated for the remaining columns, showing progressive degradation away from the original observation.",
        "App. F, Figure 13 caption",
    ),
    "B1": (
        "use the axiomatic constraints to restrict the set of functions that could represent the counterfactual, thus deriving distance "
        "metrics between the approximate and ideal functions.",
        "Abstract; the check against true counterfactuals is this book's, not in the paper or the notes",
    ),
}


def claim(
    key: str,
    statement: str,
    *,
    decision: vd.Decision | None = None,
    verdict: str | None = None,
    kind: str,
    undecided: str = "",
    **kw: Any,
) -> None:
    """Record a claim with the paper's words of :data:`QUOTES`; ``undecided`` is the note kept only when the decision is undecided.

    Parameters
    ----------
    key : str
        Claim key of :data:`QUOTES` (``"C1"``, ..., ``"B1"``).
    statement : str
        What the claim says, in the book's words.
    decision : cflib.verdicts.Decision, optional
        The decision; without it, ``verdict`` is recorded as given.
    verdict : str, optional
        A verdict without a decision (a claim that cannot be decided at this scale).
    kind : str
        ``"reproduction"``, ``"sanity check"`` or ``"book's own finding"``.
    undecided : str
        The note kept when the decision is undecided (what would decide it).
    **kw
        The other fields of :func:`cflib.claims.claim` (``paper``, ``ours``, ``evidence``, ``change``, ...).

    Returns
    -------
    None
    """
    quote, source = QUOTES[key]
    if decision is not None and decision.verdict == vd.UNDECIDED and undecided:
        kw["note"] = undecided
    decide = {"decision": decision} if decision is not None else {"verdict": verdict}
    claims.claim(key, statement, quote=quote, source=source, kind=kind, **decide, **kw)


def all_hold(parts: Iterable[vd.Decision], rule: str) -> vd.Decision:
    """The joint decision of parts that must all hold (:func:`cflib.verdicts.combine`).

    The report keeps the interval of the first part whose verdict is the joint one, and every distinct part rule.

    Parameters
    ----------
    parts : iterable of cflib.verdicts.Decision
        The parts.
    rule : str
        The joint rule, in words.

    Returns
    -------
    cflib.verdicts.Decision
    """
    return vd.combine(list(parts), rule=rule, detail="rules")


def part_interval(decision: vd.Decision) -> vd.Interval:
    """The interval a part's decision read (every ``cflib.verdicts.decide_*`` rule keeps one; a joint decision has none).

    Parameters
    ----------
    decision : cflib.verdicts.Decision
        A part's decision.

    Returns
    -------
    cflib.verdicts.Interval

    Raises
    ------
    ValueError
        If the decision has no interval (a joint decision of :func:`all_hold`).
    """
    if decision.interval is None:
        raise ValueError(f"the decision has no interval (a joint decision?): {decision.rule}")
    return decision.interval


def consistent(interval: vd.Interval, value: float, *, quantity: str) -> vd.Decision:
    """A value predicted by construction (a chance level, an oracle's own accuracy) lies inside the interval.

    reproduced if the interval contains ``value``, not reproduced if it excludes it, undecided when the
    interval is undefined. Used only for sanity checks, whose prediction is exact.

    Parameters
    ----------
    interval : cflib.verdicts.Interval
        The measured quantity's interval.
    value : float
        The value predicted by construction.
    quantity : str
        What the interval measures, for the rule.

    Returns
    -------
    cflib.verdicts.Decision
    """
    rule = f"{quantity} = {value:g}: reproduced if its interval contains {value:g}, not reproduced if it excludes it"
    if not interval.defined:
        return vd.Decision(vd.UNDECIDED, interval, rule)
    inside = interval.low <= value <= interval.high
    return vd.Decision(vd.REPRODUCED if inside else vd.NOT_REPRODUCED, interval, rule)


def undecided_note(interval: vd.Interval | None, n_now: int, unit: str) -> str:
    """The note of an undecided claim whose boundary is 0 (:func:`cflib.verdicts.deciding_size`).

    Parameters
    ----------
    interval : cflib.verdicts.Interval or None
        The deciding interval (``None`` when there is none).
    n_now : int
        The number of units it rests on now.
    unit : str
        What the units are (``"test images"``, ``"training seeds"``).

    Returns
    -------
    str
        The number of units that would decide it at the same estimate, or why none would.
    """
    size = vd.deciding_size(interval, 0.0, n_now) if interval is not None else None
    if size is None:
        return f"the estimate sits on the boundary or its interval is undefined: no size decides it at this estimate ({n_now} {unit} now)"
    return f"at the same estimate about {size} {unit} (now {n_now}) would decide it"


def difference(a: Any, b: Any, *, unit: str = "test images") -> vd.Interval:
    """Normal interval of ``mean(a) - mean(b)`` from two samples (Welch standard error; conservative for paired samples).

    Parameters
    ----------
    a, b : array_like
        The two samples (flattened).
    unit : str
        What their values are, for the interval's method.

    Returns
    -------
    cflib.verdicts.Interval
        Undefined (NaN) when a sample has fewer than two values.
    """
    a, b = np.asarray(a, dtype=float).ravel(), np.asarray(b, dtype=float).ravel()
    if min(a.size, b.size) < 2:
        return vd.Interval(
            float("nan"), float("nan"), float("nan"), f"difference of means, {a.size} and {b.size} {unit} (too few)"
        )
    se = float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
    return vd.normal_interval(
        a.mean() - b.mean(), se, method=f"Welch standard error of a difference of means, {a.size} and {b.size} {unit}"
    )


def paired_difference(a: Any, b: Any, *, unit: str = "test images") -> vd.Interval:
    """t interval of the mean per-image difference ``a - b`` (the same images under two conditions).

    Parameters
    ----------
    a, b : array_like
        Per-image values, the same images in the same order.
    unit : str
        What the images are, for the interval's method.

    Returns
    -------
    cflib.verdicts.Interval
    """
    return vd.mean_interval(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), unit=f"{unit}, paired")


def seed_array(values: Any) -> np.ndarray:
    """Per-image values as a ``(training seeds, images)`` array; a 1-d array is one seed's.

    Parameters
    ----------
    values : array_like
        ``(images,)`` or ``(seeds, ...)`` values.

    Returns
    -------
    numpy.ndarray
        Shape ``(seeds, images)``.
    """
    a = np.asarray(values, dtype=float)
    return a.reshape(1, -1) if a.ndim <= 1 else a.reshape(a.shape[0], -1)


def seed_diff(a: Any, b: Any = None, *, paired: bool = True, unit: str = "test images") -> vd.Interval:
    """Interval of ``mean(a) - mean(b)`` (or of ``mean(a)``) with training seeds as the units.

    ``a`` and ``b`` are per-image values, ``(seeds, images)`` (:func:`seed_array`). With two or more seeds:
    :func:`cflib.verdicts.seed_interval` of the per-seed differences of the means over the images (seed
    ``i`` of one configuration against seed ``i`` of the other). With one seed: the interval over that
    seed's images (paired, or Welch for different images or do-values), which decides nothing about
    models; the claim passes it through :func:`seeded`.

    Parameters
    ----------
    a : array_like
        Per-image values of one configuration, ``(seeds, images)`` or one seed's ``(images,)``.
    b : array_like, optional
        The other configuration's, with as many seeds; without it, the interval is of ``mean(a)``.
    paired : bool
        With one seed, whether ``a`` and ``b`` are the same images (a paired t interval) or not (Welch).
    unit : str
        What the images are, for the interval's method.

    Returns
    -------
    cflib.verdicts.Interval
    """
    a2 = seed_array(a)
    b2 = None if b is None else seed_array(b)
    if b2 is not None and b2.shape[0] != a2.shape[0]:
        raise ValueError(
            f"the two configurations have {a2.shape[0]} and {b2.shape[0]} training seeds; compare like with like"
        )
    if a2.shape[0] >= 2:
        return vd.seed_interval(a2.mean(1) - (0.0 if b2 is None else b2.mean(1)), within=unit)
    if b2 is None:
        return vd.mean_interval(a2[0], unit=unit)
    return paired_difference(a2[0], b2[0], unit=unit) if paired else difference(a2[0], b2[0], unit=unit)


def seeded(decision: vd.Decision, n_seeds: int) -> vd.Decision:
    """A model comparison's decision: as it is with two or more training seeds, :func:`cflib.verdicts.one_seed` with one.

    Parameters
    ----------
    decision : cflib.verdicts.Decision
        The decision on the interval.
    n_seeds : int
        Training seeds behind it.

    Returns
    -------
    cflib.verdicts.Decision
    """
    return decision if n_seeds >= 2 else vd.one_seed(decision)


def seed_note(decision: vd.Decision, n_seeds: int) -> str:
    """The note of an undecided model comparison: the training seeds that would decide it.

    Parameters
    ----------
    decision : cflib.verdicts.Decision
        The (undecided) decision.
    n_seeds : int
        Training seeds behind it.

    Returns
    -------
    str
    """
    if n_seeds < 2:
        return (
            "one training seed: a model comparison needs training seeds as units; run at least 3 (parameter seeds; the full scale, "
            "notebooks/params/full.yaml, trains 5)"
        )
    return (
        undecided_note(decision.interval, n_seeds, "training seeds")
        + " (the full scale, notebooks/params/full.yaml, trains 5 seeds and larger models)"
    )
