"""How the chapter's claims are decided: the paper's words and bars shared by the claims, and the helpers.

Every claim is decided by a rule of :mod:`cflib.verdicts` on an estimate with its interval, written from
the paper's words (quoted verbatim with ``quote=``). Helpers of this chapter: joining the parts of a claim
while keeping the deciding part's interval, Newcombe's interval for a difference of two proportions, a
bootstrap over classifiers stratified by panel for correlations, and the size that would decide an
undecided estimate.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from ... import verdicts as vd
from ...stats.proportions import newcombe_interval

#: The notes' sign check of CIT-LR's paired mean (notebooks 01 and 06).
NOTES_SIGN = "The paired mean of ŷ·ĝ − ŷ·ĥ should be ≥ 0 up to noise."
#: The paper's summary of Figures 3-4 (Sec. 6.3), quoted by the claims of notebooks 02 and 06.
IN_SUM = (
    "In sum, our CIT-LR rejects the hypothesis test when ECA is low and does not when the ECA is high, "
    "demonstrating a stronger consistency over EO and DP."
)
#: The paper's words on DP and EO at high ECA (Sec. 6.3), quoted by the claims of notebooks 02 and 06.
HIGH_ECA = (
    "i.e., with relatively high ECA (\\geq 0.8) in the first and third column, DP and EO reject almost all the "
    "models when they actually should not."
)
#: The paper's only number for "high ECA" (Sec. 6.3); "most" and "almost all" read as more than half and more than 90%.
HIGH, MOST, ALMOST_ALL = 0.8, 0.5, 0.9
#: Kind of the claims that check a property the paper does not state (the notes' or the book's own).
OWN = "book's own finding"
#: The ``change`` of such a claim; ``{what}`` says what the paper does not state.
OWN_CHANGE = (
    "the book's own finding, not a reproduction (issue 27): the paper does not state it ({what}), so it is no longer "
    "counted among the paper's claims; the rule is unchanged"
)


def join_parts(parts: Mapping[str, vd.Decision], what: str) -> vd.Decision:
    """Join a claim's parts with :func:`cflib.verdicts.combine`, keeping the deciding part's interval.

    The interval shown is that of the first part that is not reproduced, else the first undecided one,
    else the first part; the rule lists every part's verdict and estimate.

    Parameters
    ----------
    parts : mapping of str to cflib.verdicts.Decision
        The claim's parts by name.
    what : str
        What the joint rule asks of the parts (e.g. ``"all four"``).

    Returns
    -------
    cflib.verdicts.Decision
    """
    return vd.combine(parts, rule=what, detail="verdicts")


def difference_interval(k1: int, n1: int, k2: int, n2: int, *, level: float = 0.95, unit: str = "units") -> vd.Interval:
    """Newcombe's hybrid score interval for ``k1/n1 - k2/n2`` (exact at 0 and 1, unlike the Wald interval).

    Parameters
    ----------
    k1, n1 : int
        Successes and units of the first proportion.
    k2, n2 : int
        Successes and units of the second proportion.
    level : float
        Confidence level.
    unit : str
        What the units are (for the interval's method).

    Returns
    -------
    cflib.verdicts.Interval
        Undefined (NaN) when either side has no units.
    """
    method = f"{100 * level:g}% Newcombe score interval of a difference of proportions, {n1} and {n2} {unit}"
    if n1 == 0 or n2 == 0:
        return vd.Interval(np.nan, np.nan, np.nan, method + " (no units)")
    low, high = newcombe_interval(k1, n1, k2, n2, level)
    return vd.Interval(k1 / n1 - k2 / n2, low, high, method)


def count(rate_percent: float, n: int) -> int:
    """The number of successes behind a percentage of ``n`` units (0 when there are no units).

    Parameters
    ----------
    rate_percent : float
        The success rate in percent.
    n : int
        Number of units.

    Returns
    -------
    int
    """
    return int(round(float(rate_percent) * n / 100)) if n > 0 and np.isfinite(rate_percent) else 0


def _deciding_size(interval: vd.Interval | None, threshold: float, n: int, unit: str) -> str:
    """What size would move ``interval`` off ``threshold`` at the same estimate (:func:`cflib.verdicts.deciding_size`)."""
    if interval is None:
        return f"it has no interval (a joint decision of no parts), so no number of {unit} decides it"
    if not interval.defined:
        return f"its interval is undefined with {n} {unit} ({interval.method}); more {unit} are needed"
    if interval.estimate == threshold:
        return f"no size decides it while the estimate sits at {threshold:g}"
    size = vd.deciding_size(interval, threshold, max(int(n), 1))
    if size is None:
        return f"more than {1000 * max(int(n), 1)} {unit} (now {n}) would be needed at an estimate of {interval.estimate:.3g}"
    return f"about {size} {unit} (now {n}) would decide it if the estimate stayed at {interval.estimate:.3g}"


def undecided_note(decision: vd.Decision, threshold: float, n: int, unit: str, where: str) -> str:
    """The note of an undecided claim: the deciding size and where that size is run.

    Parameters
    ----------
    decision : cflib.verdicts.Decision
        The claim's decision (the note is empty unless it is undecided; a decision without an interval,
        a joint decision of no parts, says so).
    threshold : float
        The bar the decision's interval must clear.
    n : int
        The current size.
    unit : str
        What the size counts.
    where : str
        Where a larger size is run (e.g. ``"notebooks/params/full.yaml runs 1000"``).

    Returns
    -------
    str
    """
    if decision.verdict != vd.UNDECIDED:
        return ""
    return f"Undecided: {_deciding_size(decision.interval, threshold, n, unit)}; {where}."


def _pearson_draws(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson r along the last axis (NaN where either side is constant)."""
    xc, yc = x - x.mean(-1, keepdims=True), y - y.mean(-1, keepdims=True)
    den = np.sqrt((xc * xc).sum(-1) * (yc * yc).sum(-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, (xc * yc).sum(-1) / np.where(den > 0, den, 1.0), np.nan)


def panel_bootstrap(
    panels: Mapping[str, pd.DataFrame],
    x: str,
    ys: Mapping[str, str],
    statistic: Callable[[dict], np.ndarray],
    *,
    n_boot: int = 2000,
    seed: int = 0,
    level: float = 0.95,
) -> vd.Interval:
    """Percentile bootstrap of a statistic of per-panel correlations, resampling classifiers within each panel.

    ``statistic`` maps ``{name: array (..., n_panels) of r(x, y_name)}`` to an array (...) and may use
    ``np.nan*`` to skip panels whose r is undefined; draws where it is undefined are dropped, and the
    interval is undefined if more than 5% are.

    Parameters
    ----------
    panels : mapping of str to pandas.DataFrame
        One frame of classifiers per panel.
    x : str
        Column correlated with each of ``ys``.
    ys : mapping of str to str
        Name -> column.
    statistic : callable
        Maps the per-panel correlations to the statistic.
    n_boot : int
        Bootstrap draws.
    seed : int
        Seed of the resampling.
    level : float
        Confidence level.

    Returns
    -------
    cflib.verdicts.Interval
    """
    sizes = [len(p) for p in panels.values()]
    method = f"{100 * level:g}% percentile bootstrap over classifiers within each of {len(panels)} panels ({min(sizes, default=0)}-{max(sizes, default=0)} each), {n_boot} draws"
    if not panels or min(sizes) < 3:
        return vd.Interval(np.nan, np.nan, np.nan, method + " (a panel has fewer than 3 classifiers)")
    rng = np.random.default_rng(seed)
    point: dict[str, list[np.ndarray]] = {k: [] for k in ys}
    draws: dict[str, list[np.ndarray]] = {k: [] for k in ys}
    for frame in panels.values():
        idx = rng.integers(0, len(frame), (n_boot, len(frame)))
        xv = frame[x].to_numpy(float)
        for k, col in ys.items():
            yv = frame[col].to_numpy(float)
            point[k].append(_pearson_draws(xv, yv))
            draws[k].append(_pearson_draws(xv[idx], yv[idx]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices: undefined draws, counted below
        est = float(statistic({k: np.array(v) for k, v in point.items()}))
        stats = np.asarray(statistic({k: np.stack(v, axis=-1) for k, v in draws.items()}), dtype=float)
    ok = np.isfinite(stats)
    if not np.isfinite(est) or ok.mean() < 0.95:
        return vd.Interval(
            est if np.isfinite(est) else np.nan, np.nan, np.nan, method + f" ({(~ok).sum()} undefined draws)"
        )
    low, high = np.quantile(stats[ok], [0.5 - level / 2, 0.5 + level / 2])
    dropped = f", {(~ok).sum()} undefined draws dropped" if (~ok).any() else ""
    return vd.Interval(est, float(low), float(high), method + dropped)


def alignment_parts(
    panels: Mapping[str, pd.DataFrame], x: str, cit: str, baselines: Sequence[str], *, seed: int
) -> dict:
    """Intervals of the mean over panels of r(CIT), of r(CIT) - max r(baseline) and of the standardised spread difference.

    Parameters
    ----------
    panels : mapping of str to pandas.DataFrame
        One frame of classifiers per panel (dataset or disease).
    x : str
        The ECA column.
    cit : str
        The log10 p column of CIT-LR.
    baselines : sequence of str
        The log10 p columns of the baseline tests.
    seed : int
        Seed of the bootstrap.

    Returns
    -------
    dict
        ``"r"``, ``"r gap"`` and ``"spread gap"`` -> :class:`cflib.verdicts.Interval` (:func:`panel_bootstrap`).
    """
    ys = {"cit": cit, **{f"b{i}": b for i, b in enumerate(baselines)}}
    base = [f"b{i}" for i in range(len(baselines))]

    def r_cit(r):
        return np.nanmean(r["cit"], axis=-1)

    def r_gap(r):
        best = r[base[0]]
        for b in base[1:]:
            best = np.fmax(best, r[b])
        return np.nanmean(r["cit"] - best, axis=-1)

    def spread_gap(r):  # sqrt(1 - r^2): the residual sd of log10 p around the fitted line, in units of its own sd
        s = {k: np.sqrt(1 - v**2) for k, v in r.items()}
        least = s[base[0]]
        for b in base[1:]:
            least = np.fmin(least, s[b])
        return np.nanmean(s["cit"] - least, axis=-1)

    return {
        name: panel_bootstrap(panels, x, ys, f, seed=seed)
        for name, f in (("r", r_cit), ("r gap", r_gap), ("spread gap", spread_gap))
    }
