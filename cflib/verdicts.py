"""Decision rules for the papers' claims: an estimate, its interval, a rule written down first, a verdict.

Every claim the book checks is decided the same way. The quantity the paper's words are about is
estimated with an interval (binomial over units, a t interval over seeds or units, a bootstrap, or
a normal interval from a standard error), and a rule fixed *before* running says on which side of a
threshold (or inside which band) the paper's claim lies:

- **reproduced**: the whole interval lies on the paper's side;
- **not reproduced**: the whole interval lies on the other side;
- **undecided at this scale**: the interval straddles the boundary (the :class:`Decision` says so,
  and the claim should say what size would decide it).

Two more verdicts are given by hand, never by a rule: **not checkable here** (the quantity cannot
be computed on this book's data, and the claim says where its checkable analogue lives) and
**differs with the substitute data** (the claim is about data this book replaces, and the claim
says why the substitute changes the answer). :func:`combine` joins the verdicts of a claim made of
several parts.

Degenerate cases have a defined answer, never an infinite statistic: a zero-width interval (no
variance, e.g. every per-unit difference is 0) is compared as a point; an undefined interval (no
units, one unit for a t interval, a NaN estimate) gives "undecided at this scale".
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .results import Interval
from .validation import ValidationError, ValidationTypeError, check_count, check_probability

__all__ = [
    "REPRODUCED",
    "NOT_REPRODUCED",
    "UNDECIDED",
    "NOT_CHECKABLE",
    "SUBSTITUTE",
    "VERDICTS",
    "Decision",
    "Interval",
    "exact",
    "binomial_interval",
    "mean_interval",
    "normal_interval",
    "bootstrap_interval",
    "correlation_interval",
    "decide_above",
    "decide_below",
    "decide_within",
    "combine",
    "deciding_size",
    "seed_interval",
    "one_seed",
    "seed_count",
    "on_substitute",
    "not_converged",
    "seed_problem",
    "BRADLEY_BAND",
    "level_band",
    "check_needs",
]

REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
UNDECIDED = "undecided at this scale"
NOT_CHECKABLE = "not checkable here"
SUBSTITUTE = "differs with the substitute data"

#: The fixed vocabulary of verdicts, in the report's order.
VERDICTS = (REPRODUCED, NOT_REPRODUCED, UNDECIDED, NOT_CHECKABLE, SUBSTITUTE)


@dataclass(frozen=True)
class Decision:
    """A verdict together with the interval and the rule it came from.

    Attributes
    ----------
    verdict : str
        One of :data:`VERDICTS`.
    interval : Interval or None
        The estimate and interval the rule read (``None`` for a combined decision).
    rule : str
        The decision rule in words.
    """

    verdict: str
    interval: Interval | None
    rule: str


def _count(n: int, unit: str) -> str:
    return f"{n} {unit[:-1] if n == 1 and unit.endswith('s') else unit}"


def _level_text(level: float) -> str:
    return f"{100 * level:g}%"


def exact(value: Any, *, method: str = "exact computation, no sampling error") -> Interval:
    """A zero-width interval for a quantity computed without sampling error (an identity's residual).

    Parameters
    ----------
    value : float
        The computed quantity.
    method : str
        Why it has no sampling error.

    Returns
    -------
    Interval
    """
    v = float(_finite_1d([value], "value")[0])
    return Interval(v, v, v, method)


def binomial_interval(k: Any, n: Any, *, level: float = 0.95, unit: str = "units") -> Interval:
    """Clopper-Pearson (exact) interval for a proportion ``k / n`` (:func:`cflib.stats.proportions.clopper_pearson_interval`).

    Parameters
    ----------
    k : int
        Successes, ``0 <= k <= n``.
    n : int
        Trials (0 allowed: the interval is then undefined).
    level : float
        Confidence level in (0, 1).
    unit : str
        What was counted, for the method text.

    Returns
    -------
    Interval
        Exact at ``k = 0`` and ``k = n``; undefined (NaN) when ``n = 0``.
    """
    from .stats.proportions import clopper_pearson_interval

    n = check_count(n, "n", minimum=0)
    k = check_count(k, "k", minimum=0)
    if k > n:
        raise ValidationError(f"k must be at most n = {n}, got {k}")
    level = check_probability(level, "level")
    method = f"{_level_text(level)} Clopper-Pearson, {_count(n, unit)}"
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, method + " (no units)")
    low, high = clopper_pearson_interval(k, n, level)
    return Interval(k / n, low, high, method)


def _finite_1d(values: Any, name: str) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValidationTypeError(f"{name} must be numbers, got {type(values).__name__}") from None
    if not np.isfinite(arr).all():
        raise ValidationError(f"{name} must be finite, got {int((~np.isfinite(arr)).sum())} NaN or inf of {arr.size}")
    return arr


def mean_interval(values: Any, *, level: float = 0.95, unit: str = "units") -> Interval:
    """Student-t interval for the mean of ``values`` (units, seeds or replications).

    Parameters
    ----------
    values : array-like of float
        Independent observations of the quantity.
    level : float
        Confidence level in (0, 1).
    unit : str
        What one value is, for the method text.

    Returns
    -------
    Interval
        Zero width when every value is equal (no variance: the claim is decided on the point);
        undefined with fewer than two values.
    """
    from scipy.stats import t

    arr = _finite_1d(values, "values")
    level = check_probability(level, "level")
    n = arr.size
    method = f"{_level_text(level)} t interval, {_count(n, unit)}"
    if n == 0:
        return Interval(math.nan, math.nan, math.nan, method + " (no units)")
    mean = float(arr.mean())
    if n == 1:
        return Interval(mean, math.nan, math.nan, method + " (one value: no spread)")
    se = float(arr.std(ddof=1) / math.sqrt(n))
    half = float(t.ppf(0.5 + level / 2, n - 1)) * se
    return Interval(mean, mean - half, mean + half, method + (" (no variance)" if se == 0 else ""))


def normal_interval(estimate: Any, se: Any, *, level: float = 0.95, method: str = "standard error") -> Interval:
    """Normal interval ``estimate ± z · se`` from an estimator's standard error.

    Parameters
    ----------
    estimate : float
        The point estimate.
    se : float
        Its standard error, ``>= 0`` (0 gives a zero-width interval).
    level : float
        Confidence level in (0, 1).
    method : str
        Where the standard error comes from (influence function, bootstrap, ...).

    Returns
    -------
    Interval
    """
    from scipy.stats import norm

    est = float(_finite_1d([estimate], "estimate")[0])
    s = float(_finite_1d([se], "se")[0])
    if s < 0:
        raise ValidationError(f"se must be >= 0, got {s}")
    level = check_probability(level, "level")
    half = float(norm.ppf(0.5 + level / 2)) * s
    return Interval(est, est - half, est + half, f"{_level_text(level)} normal interval, {method}")


def bootstrap_interval(
    values: Any,
    statistic: Callable[[np.ndarray], float] = np.mean,
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    unit: str = "units",
) -> Interval:
    """Percentile bootstrap interval of ``statistic`` over the rows of ``values``.

    Parameters
    ----------
    values : array-like
        One row per unit (1-d, or 2-d with units on the first axis).
    statistic : callable
        Maps an array of resampled rows to a float.
    level : float
        Confidence level in (0, 1).
    n_boot : int
        Bootstrap draws.
    seed : int
        Seed of the resampling.
    unit : str
        What one row is, for the method text.

    Returns
    -------
    Interval
        Undefined with fewer than two rows.
    """
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"values must be numbers, got {type(values).__name__}") from None
    if not np.isfinite(arr).all():
        raise ValidationError("values must be finite (NaN or inf found)")
    if not callable(statistic):
        raise ValidationTypeError(f"statistic must be callable, got {type(statistic).__name__}")
    n_boot = check_count(n_boot, "n_boot")
    level = check_probability(level, "level")
    n = arr.shape[0] if arr.ndim else 0
    method = f"{_level_text(level)} percentile bootstrap, {_count(n, unit)}, {n_boot} draws"
    if n < 2:
        est = float(statistic(arr)) if n == 1 else math.nan
        return Interval(est, math.nan, math.nan, method + " (fewer than two units)")
    rng = np.random.default_rng(seed)
    draws = np.array([statistic(arr[rng.integers(0, n, n)]) for _ in range(n_boot)], dtype=float)
    low, high = np.quantile(draws, [0.5 - level / 2, 0.5 + level / 2])
    return Interval(float(statistic(arr)), float(low), float(high), method)


def correlation_interval(
    r: Any, n: Any, *, level: float = 0.95, spearman: bool = False, unit: str = "units"
) -> Interval:
    """Fisher-z interval of a correlation over ``n`` independent units.

    Parameters
    ----------
    r : float
        Pearson (or Spearman) correlation in [-1, 1]; NaN (a constant variable) gives an undefined
        interval.
    n : int
        Units it was computed on (at least 4 for a defined interval).
    level : float
        Confidence level in (0, 1).
    spearman : bool
        ``r`` is Spearman's rho: the standard error of ``atanh(rho)`` is ``sqrt(1.06 / (n - 3))``
        (Fieller, Hartley and Pearson, 1957) instead of ``sqrt(1 / (n - 3))``.
    unit : str
        What one unit is, for the method text.

    Returns
    -------
    Interval
        ``tanh(atanh(r) ± z · se)``; zero width at ``|r| = 1``; undefined for ``n < 4`` or NaN ``r``.
    """
    from scipy.stats import norm

    if isinstance(r, bool) or not isinstance(r, (int, float, np.integer, np.floating)):
        raise ValidationTypeError(f"r must be a correlation (a float in [-1, 1]), got {type(r).__name__}")
    r = float(r)
    if not (math.isnan(r) or -1 <= r <= 1):
        raise ValidationError(f"r must be a correlation in [-1, 1], got {r!r}")
    n = check_count(n, "n", minimum=0)
    level = check_probability(level, "level")
    method = f"{_level_text(level)} Fisher-z interval{' (Spearman)' if spearman else ''}, {_count(n, unit)}"
    if n < 4 or math.isnan(r):
        return Interval(
            r, math.nan, math.nan, method + (" (fewer than 4 units)" if n < 4 else " (undefined correlation)")
        )
    if abs(r) == 1:
        return Interval(r, r, r, method + " (|r| = 1)")
    half = float(norm.ppf(0.5 + level / 2)) * math.sqrt((1.06 if spearman else 1.0) / (n - 3))
    z = math.atanh(r)
    return Interval(r, math.tanh(z - half), math.tanh(z + half), method)


def _check_interval(interval: Any) -> Interval:
    if not isinstance(interval, Interval):
        raise ValidationTypeError(
            f"interval must be a cflib.verdicts.Interval (from binomial_interval, mean_interval, normal_interval "
            f"or bootstrap_interval), got {type(interval).__name__}"
        )
    return interval


def _bound(value: Any, name: str) -> float:
    v = float(_finite_1d([value], name)[0])
    return v


def decide_above(
    interval: Interval, threshold: float, *, inclusive: bool = False, quantity: str = "the estimate"
) -> Decision:
    """The paper claims the quantity lies above ``threshold``.

    Parameters
    ----------
    interval : Interval
        The quantity's estimate and interval.
    threshold : float
        The boundary the paper's words give (or imply: 0 for "positive", chance for "above chance").
    inclusive : bool
        The claim is ``>= threshold`` rather than ``> threshold``.
    quantity : str
        What is estimated, for the rule text.

    Returns
    -------
    Decision
        reproduced if ``low > threshold`` (``>=`` when inclusive), not reproduced if ``high < threshold``
        (``<=`` when not inclusive), otherwise undecided; undecided when the interval is undefined.
    """
    iv, t = _check_interval(interval), _bound(threshold, "threshold")
    op = ">=" if inclusive else ">"
    rule = f"{quantity} {op} {t:g}: reproduced if its interval lies {'at or ' if inclusive else ''}above {t:g}, not reproduced if it lies below, undecided if it contains {t:g}"
    if not iv.defined:
        return Decision(UNDECIDED, iv, rule)
    if (iv.low >= t) if inclusive else (iv.low > t):
        return Decision(REPRODUCED, iv, rule)
    if (iv.high < t) if inclusive else (iv.high <= t):
        return Decision(NOT_REPRODUCED, iv, rule)
    return Decision(UNDECIDED, iv, rule)


def decide_below(
    interval: Interval, threshold: float, *, inclusive: bool = False, quantity: str = "the estimate"
) -> Decision:
    """The paper claims the quantity lies below ``threshold`` (the mirror of :func:`decide_above`).

    Parameters
    ----------
    interval : Interval
        The quantity's estimate and interval.
    threshold : float
        The boundary.
    inclusive : bool
        The claim is ``<= threshold`` rather than ``< threshold``.
    quantity : str
        What is estimated, for the rule text.

    Returns
    -------
    Decision
    """
    iv, t = _check_interval(interval), _bound(threshold, "threshold")
    op = "<=" if inclusive else "<"
    rule = f"{quantity} {op} {t:g}: reproduced if its interval lies {'at or ' if inclusive else ''}below {t:g}, not reproduced if it lies above, undecided if it contains {t:g}"
    if not iv.defined:
        return Decision(UNDECIDED, iv, rule)
    if (iv.high <= t) if inclusive else (iv.high < t):
        return Decision(REPRODUCED, iv, rule)
    if (iv.low > t) if inclusive else (iv.low >= t):
        return Decision(NOT_REPRODUCED, iv, rule)
    return Decision(UNDECIDED, iv, rule)


def decide_within(interval: Interval, low: float, high: float, *, quantity: str = "the estimate") -> Decision:
    """The paper claims the quantity lies in ``[low, high]`` (an identity up to a tolerance, a value).

    Parameters
    ----------
    interval : Interval
        The quantity's estimate and interval.
    low, high : float
        The band the paper's words allow (``low <= high``).
    quantity : str
        What is estimated, for the rule text.

    Returns
    -------
    Decision
        reproduced if the interval lies inside the band, not reproduced if it lies wholly outside,
        otherwise undecided.
    """
    iv, lo, hi = _check_interval(interval), _bound(low, "low"), _bound(high, "high")
    if lo > hi:
        raise ValidationError(f"low must be <= high, got low={lo:g}, high={hi:g}")
    rule = f"{quantity} in [{lo:g}, {hi:g}]: reproduced if its interval lies inside, not reproduced if it lies outside, undecided if it overlaps an edge"
    if not iv.defined:
        return Decision(UNDECIDED, iv, rule)
    if lo <= iv.low and iv.high <= hi:
        return Decision(REPRODUCED, iv, rule)
    if iv.high < lo or iv.low > hi:
        return Decision(NOT_REPRODUCED, iv, rule)
    return Decision(UNDECIDED, iv, rule)


def combine(
    decisions: Iterable[Decision | str] | Mapping[str, Decision],
    *,
    rule: str = "every part",
    detail: bool | str = False,
    pick: Callable[[Decision], float] | None = None,
) -> Decision:
    """Join the parts of a claim that needs all of them ("for every model", "A and B"), keeping the deciding part.

    Parameters
    ----------
    decisions : iterable of Decision or str, or mapping of str to Decision
        The parts' decisions (or bare verdicts); a mapping names them (for ``detail="verdicts"``).
    rule : str
        What the parts are, for the rule text.
    detail : bool or {"rules", "verdicts"}
        What the joint rule appends: nothing (``False``); every part's rule and interval (``True``); the
        distinct part rules (``"rules"``); every named part's verdict and interval (``"verdicts"``).
    pick : callable, optional
        Among the parts whose verdict is the joint one, show the interval of the largest by ``pick``
        (default: the first).

    Returns
    -------
    Decision
        not reproduced if any part is not reproduced; reproduced if every part is; otherwise
        undecided at this scale. A claim with no parts is undecided. The joint decision carries the
        interval of the part that decides it (the first, or the largest by ``pick``, of the parts whose
        verdict is the joint one).
    """
    if detail not in (False, True, "rules", "verdicts"):
        raise ValidationError(f"detail must be False, True, 'rules' or 'verdicts', got {detail!r}")
    named = dict(decisions) if isinstance(decisions, Mapping) else None
    if detail == "verdicts" and named is None:
        raise ValidationTypeError("detail='verdicts' needs decisions as a mapping of part names to decisions")
    parts = [
        d if isinstance(d, Decision) else Decision(d, None, "")
        for d in (named.values() if named is not None else decisions)
    ]
    for d in parts:
        if d.verdict not in (REPRODUCED, NOT_REPRODUCED, UNDECIDED):
            raise ValidationError(
                f"decisions must be reproduced, not reproduced or undecided at this scale, got {d.verdict!r}"
            )
    text = f"{rule}: reproduced if every part is, not reproduced if any part is not, otherwise undecided"
    if detail is True and parts:
        text += " (" + "; ".join(f"{d.rule} [{d.interval}]" if d.interval else d.rule for d in parts) + ")"
    if not parts:
        return Decision(UNDECIDED, None, text + " (no parts)")
    if detail == "rules":
        text += f" (parts: {'; '.join(dict.fromkeys(d.rule for d in parts))})"
    elif detail == "verdicts":
        assert named is not None  # checked on entry: "verdicts" needs a mapping
        text += ". Parts: " + "; ".join(
            f"{k}: {d.verdict}" + (f" at {d.interval}" if d.interval is not None else "") for k, d in named.items()
        )
    verdicts = [d.verdict for d in parts]
    joint = (
        NOT_REPRODUCED
        if NOT_REPRODUCED in verdicts
        else REPRODUCED
        if all(v == REPRODUCED for v in verdicts)
        else UNDECIDED
    )
    deciding = [d for d in parts if d.verdict == joint]
    shown = max(deciding, key=pick) if pick is not None else deciding[0]
    return Decision(joint, shown.interval, text)


def deciding_size(
    interval: Interval, boundaries: float | Iterable[float], n: int, *, max_factor: int = 1000
) -> int | None:
    """How many units would decide a claim at the same estimate: the note of an undecided claim.

    Parameters
    ----------
    interval : Interval
        The deciding part's estimate and interval, computed on ``n`` units.
    boundaries : float or iterable of float
        The rule's boundaries (a threshold, or a band's two edges); the nearest one counts.
    n : int
        Units the interval was computed on.
    max_factor : int
        Search no further than ``max_factor * n`` units.

    Returns
    -------
    int or None
        The smallest size whose interval, at the same estimate, no longer contains the nearest
        boundary: exact for a Clopper-Pearson interval (searched), else from the half-width on the
        boundary's side shrinking as ``1/sqrt(n)``. ``None`` when no size decides it: the interval is
        undefined, the estimate sits on the boundary, or more than ``max_factor * n`` units are needed.
    """
    iv = _check_interval(interval)
    n = check_count(n, "n")
    bounds = [_bound(b, "boundaries") for b in (boundaries if isinstance(boundaries, Iterable) else [boundaries])]
    if not bounds:
        raise ValidationError("boundaries must hold at least one number")
    if not iv.defined:
        return None
    b = min(bounds, key=lambda t: abs(iv.estimate - t))
    gap = abs(iv.estimate - b)
    if gap == 0:
        return None
    if "Clopper-Pearson" in iv.method:
        for size in np.unique(np.geomspace(n, max_factor * n, 400).astype(int)):
            trial = binomial_interval(int(round(iv.estimate * size)), int(size))
            if not trial.low <= b <= trial.high:
                return int(size)
        return None
    half = (iv.estimate - iv.low) if iv.estimate > b else (iv.high - iv.estimate)
    size = int(math.ceil(n * (half / gap) ** 2))
    return size if size <= max_factor * n else None


def seed_interval(per_seed: Any, *, level: float = 0.95, within: str = "test images") -> Interval:
    """Interval with training seeds as the units: a t interval over per-seed estimates.

    A comparison of trained models varies with the training seed by more than its sampling error over
    test images, so a claim about models is decided on the seeds: each seed's estimate (a mean, a
    difference of means or a distance over its test images) is one unit, and the images are nested
    within it. With ``n`` seeds the t quantile has ``n - 1`` degrees of freedom (4.30 at 3 seeds).

    Parameters
    ----------
    per_seed : array-like of float
        One estimate per training seed.
    level : float
        Confidence level in (0, 1).
    within : str
        What each seed's estimate averages over, for the method text.

    Returns
    -------
    Interval
        As :func:`mean_interval` with the unit "training seeds"; undefined with one seed.
    """
    iv = mean_interval(per_seed, level=level, unit="training seeds")
    return Interval(iv.estimate, iv.low, iv.high, f"{iv.method}, each the mean over its {within}")


def one_seed(decision: Decision) -> Decision:
    """Mark a model comparison decided on one training seed as undecided.

    An interval over the test images of one trained model says nothing about the seed-to-seed
    spread of the comparison, so it cannot decide a claim about the models: the verdict becomes
    undecided at this scale and the rule says why; the image-level interval is kept (its method
    names the single seed) to show what that seed gave.

    Parameters
    ----------
    decision : Decision
        The decision the image-level interval gave.

    Returns
    -------
    Decision
        Undecided, with the interval's method ending in ", 1 training seed" and the original
        verdict in the rule.
    """
    if not isinstance(decision, Decision):
        raise ValidationTypeError(f"decision must be a cflib.verdicts.Decision, got {type(decision).__name__}")
    iv = decision.interval
    if iv is not None and not iv.method.endswith("1 training seed"):
        iv = Interval(iv.estimate, iv.low, iv.high, f"{iv.method}, 1 training seed")
    if decision.verdict not in (REPRODUCED, NOT_REPRODUCED, UNDECIDED):
        return decision
    return Decision(
        UNDECIDED,
        iv,
        f"undecided: one training seed (a model comparison needs training seeds as units; "
        f"over this seed's test images alone it would read {decision.verdict}). {decision.rule}",
    )


def on_substitute(decision: Decision, why: str) -> Decision:
    """Mark a claim read on substitute data that does not keep what the claim is about (issue 38).

    A metric shown degenerate on a substitute data set, or a model family or data set the book replaces
    with one that lacks what the claim is about, decides no claim: the verdict becomes "differs with the
    substitute data", the interval is kept as the measurement, and the rule says what the substitute's
    reading would have been. The claim's ``note`` says why the substitute differs.

    Parameters
    ----------
    decision : Decision
        The decision the rule gave on the substitute.
    why : str
        What the substitute lacks (one clause, for the rule text).

    Returns
    -------
    Decision
        Unchanged when the substitute gave no measurement (no interval, or an undefined one): there is then
        nothing to set beside the paper, and the claim stays undecided at this scale.
    """
    if not isinstance(decision, Decision):
        raise ValidationTypeError(f"decision must be a cflib.verdicts.Decision, got {type(decision).__name__}")
    if not isinstance(why, str) or not why.strip():
        raise ValidationError("why must say what the substitute lacks (a non-empty string)")
    iv = decision.interval
    if iv is None or not np.all(np.isfinite([iv.estimate, iv.low, iv.high])):
        return decision
    return Decision(
        SUBSTITUTE,
        decision.interval,
        f"given by hand: {why.strip()}; on the substitute the rule reads {decision.verdict}. {decision.rule}",
    )


def not_converged(decision: Decision, criterion: str) -> Decision:
    """Mark a comparison of models that have not converged as undecided at this scale (issue 38).

    Under-training is not failure: when a convergence criterion recorded for the models (the unconfounded control's
    error against the paper's, the loss's last-10% slope, matched training steps) says they have not converged, the
    comparison says nothing about the paper's trained models. The verdict becomes undecided, the interval is kept, and
    the rule says what the criterion read and what the comparison would have read.

    Parameters
    ----------
    decision : Decision
        The decision the comparison gave.
    criterion : str
        What the convergence criterion read, and the training that would meet it.

    Returns
    -------
    Decision
    """
    if not isinstance(decision, Decision):
        raise ValidationTypeError(f"decision must be a cflib.verdicts.Decision, got {type(decision).__name__}")
    if not isinstance(criterion, str) or not criterion.strip():
        raise ValidationError("criterion must say what the convergence criterion read (a non-empty string)")
    return Decision(
        UNDECIDED,
        decision.interval,
        f"undecided: the models have not converged ({criterion.strip()}); at this training it would read "
        f"{decision.verdict}. {decision.rule}",
    )


_SEED_WORDS = re.compile(
    r"\b(?:training|oracle|model) seeds?\b|\b(?:one|1|single) (?:training |oracle )?seed\b|\bsingle-seed\b", re.I
)
_SEED_COUNT = re.compile(r"\b(\d+) (?:training |oracle )?seeds?\b", re.I)


def seed_count(method: str) -> int | None:
    """How many training (or oracle) seeds an interval's method names, e.g. ``"95% t interval, 3 training seeds"``.

    Parameters
    ----------
    method : str
        The interval's method text (:attr:`Interval.method`).

    Returns
    -------
    int or None
        The smallest seed count the text names; ``None`` when it names none.
    """
    if not isinstance(method, str):
        raise ValidationTypeError(f"method must be a string (an Interval's method), got {type(method).__name__}")
    counts = [int(m) for m in _SEED_COUNT.findall(method)]
    return min(counts) if counts else None


def seed_problem(claim: Mapping[str, Any]) -> str | None:
    """Why a recorded claim breaks the seed rule, or ``None`` when it keeps it (issue 38).

    A claim names a model comparison when its evidence, rule or interval method speaks of training,
    oracle or model seeds (or of one seed). Such a claim is decided (reproduced or not reproduced) only
    on an interval whose method names two or more seeds (:func:`seed_interval`); with one seed it is
    undecided (:func:`one_seed`). Sanity checks and the verdicts given by hand are exempt.

    Parameters
    ----------
    claim : mapping
        A claim as recorded (``cflib.claims.claim``'s JSON): ``verdict``, ``kind``, ``evidence``, ``rule``
        and ``interval`` (a mapping with ``method``, or ``None``).

    Returns
    -------
    str or None
    """
    if not isinstance(claim, Mapping):
        raise ValidationTypeError(f"claim must be a mapping (a recorded claim), got {type(claim).__name__}")
    if claim.get("verdict") not in (REPRODUCED, NOT_REPRODUCED) or claim.get("kind") == "sanity check":
        return None
    interval = claim.get("interval") or {}
    method = str(interval.get("method", "")) if isinstance(interval, Mapping) else ""
    text = " ".join(str(claim.get(k, "")) for k in ("evidence", "rule")) + " " + method
    if not _SEED_WORDS.search(text):
        return None
    n = seed_count(method)
    if n is not None and n >= 2:
        return None
    return (
        f"{claim.get('key', '?')} is {claim.get('verdict')} on a model comparison whose interval names "
        f"{'no seeds' if n is None else f'{n} seed'} ({method or 'no interval'}): decide it over two or more training "
        "seeds (seed_interval), or mark it one_seed (undecided)"
    )


#: Bradley's (1978) liberal criterion: a test holds its level ``alpha`` when its type-I error lies in
#: ``[0.5 alpha, 1.5 alpha]``; an interval holds its level when its miss rate does. No paper gives a
#: tolerance for "controls the type-I error at alpha"; this is the book's reading, fixed before running.
BRADLEY_BAND = (0.5, 1.5)


def level_band(nominal: float, *, coverage: bool = False) -> tuple[float, float]:
    """The band a calibrated rate lies in, by Bradley's liberal criterion (:data:`BRADLEY_BAND`).

    Parameters
    ----------
    nominal : float
        ``alpha`` for a type-I error, the level for a coverage; in (0, 1).
    coverage : bool
        The rate is a coverage (the band is put on its miss rate ``1 - coverage``).

    Returns
    -------
    (low, high) : tuple of float
        ``[0.5 alpha, 1.5 alpha]`` for a type-I error; ``[1 - 1.5 (1 - level), 1 - 0.5 (1 - level)]`` for a
        coverage.

    Examples
    --------
    >>> level_band(0.05)
    (0.025, 0.075)
    >>> level_band(0.95, coverage=True)
    (0.925, 0.975)
    """
    nominal = check_probability(nominal, "nominal")
    miss = 1 - nominal if coverage else nominal
    lo, hi = (round(f * miss, 12) for f in BRADLEY_BAND)
    return (round(1 - hi, 12), round(1 - lo, 12)) if coverage else (lo, hi)


def check_needs(needs: Any) -> dict[str, Any]:
    """Check the size an undecided claim asks for, and return it as a plain dict.

    Parameters
    ----------
    needs : mapping
        ``size`` (int >= 1, the size that would decide the claim), ``unit`` (str, e.g. ``"replications"``),
        ``now`` (int >= 0, the size this run used), ``parameter`` (str, the notebook parameter
        ``notebooks/params/full.yaml`` sets to ``size``), ``seconds_per_unit`` (float >= 0 or None: the
        seconds one unit took in this run, measured by the notebook) and ``gpu`` (bool: whether that step
        runs on a GPU when one is present).

    Returns
    -------
    dict

    Raises
    ------
    TypeError, ValueError
        A missing or unknown key, or a value of the wrong type or range.
    """
    if not isinstance(needs, dict):
        raise TypeError(f"needs must be a dict with size, unit, now, parameter, seconds_per_unit, gpu; got {needs!r}")
    keys = {"size", "unit", "now", "parameter", "seconds_per_unit", "gpu"}
    if set(needs) != keys:
        raise ValueError(f"needs must have exactly the keys {sorted(keys)}, got {sorted(needs)}")
    for name, least in (("size", 1), ("now", 0)):
        v = needs[name]
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < least:
            raise ValueError(f"needs[{name!r}] must be an integer >= {least}, got {v!r}")
    for name in ("unit", "parameter"):
        if not isinstance(needs[name], str) or not needs[name].strip():
            raise ValueError(f"needs[{name!r}] must be a non-empty string, got {needs[name]!r}")
    rate = needs["seconds_per_unit"]
    if rate is not None and (isinstance(rate, bool) or not isinstance(rate, (int, float)) or not rate >= 0):
        raise ValueError(f"needs['seconds_per_unit'] must be a finite number >= 0 or None, got {rate!r}")
    if not isinstance(needs["gpu"], (bool, np.bool_)):
        raise TypeError(f"needs['gpu'] must be True or False, got {needs['gpu']!r}")
    return {
        "size": int(needs["size"]),
        "unit": needs["unit"],
        "now": int(needs["now"]),
        "parameter": needs["parameter"],
        "seconds_per_unit": None if rate is None else float(rate),
        "gpu": bool(needs["gpu"]),
    }
