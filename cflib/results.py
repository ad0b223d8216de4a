"""The result types every estimate and test in cflib returns, in the spirit of ``scipy.stats``.

Two kinds of answer come out of the book's methods, and they are kept apart:

- an :class:`Estimate` is a number with its uncertainty (a standard error and a
  :class:`Interval`) and *no* p-value: a Fréchet distance, a composition error, a
  counterfactual effect;
- a :class:`TestResult` is a hypothesis test: a statistic, a p-value, the null distribution where one
  was simulated, and one decision rule, :meth:`TestResult.reject`.

The chapter-specific result classes (``MMDTestResult``, ``CITResult``, ``EffectEstimates``, ...) carry
more fields, but each either *is* one of these or exposes them, so a user meets one vocabulary:
``statistic``, ``pvalue``, ``reject(alpha)``, ``estimate``, ``se``, ``ci.low``, ``ci.high``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .validation import check_alpha, check_axes, check_level

__all__ = ["Interval", "Estimate", "BaseTestResult", "TestResult", "check_alpha", "check_level"]


@dataclass(frozen=True)
class Interval:
    """An estimate with its interval and how the interval was made: the one interval type of cflib.

    The claims' verdicts (:mod:`cflib.verdicts`) and the results' confidence intervals (``result.ci``)
    are both this class. It also behaves as the pair ``(low, high)``: ``low, high = result.ci``,
    ``result.ci[0]`` and ``tuple(result.ci)`` work where a plain pair was returned before.

    Attributes
    ----------
    estimate : float
        The point estimate (NaN when undefined or not carried).
    low, high : float
        The interval's bounds (NaN when undefined; ``low == high`` for a zero-variance estimate).
    method : str
        How the interval was made, e.g. ``"95% Clopper-Pearson, 200 images"`` (may be empty).
    """

    estimate: float
    low: float
    high: float
    method: str = ""

    @property
    def defined(self) -> bool:
        """Whether the estimate and both bounds are finite numbers."""
        return all(math.isfinite(v) for v in (self.estimate, self.low, self.high))

    @property
    def width(self) -> float:
        """``high - low``."""
        return float(self.high - self.low)

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies in the closed interval ``[low, high]``.

        Parameters
        ----------
        value : float

        Returns
        -------
        bool
        """
        return bool(self.low <= value <= self.high)

    def excludes_zero(self) -> bool:
        """Whether the interval lies strictly on one side of 0.

        Returns
        -------
        bool
        """
        return bool(self.low > 0 or self.high < 0)

    def __iter__(self) -> Iterator[float]:
        return iter((self.low, self.high))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> float:
        return (self.low, self.high)[index]

    def __str__(self) -> str:
        if not self.defined:
            return f"{self.estimate:.4g} (interval undefined: {self.method})"
        return f"{self.estimate:.4g} [{self.low:.4g}, {self.high:.4g}] ({self.method})"

    @classmethod
    def of(cls, pair: Any, estimate: float = math.nan, method: str = "") -> Interval:
        """Build one from any ``(low, high)`` pair (an :class:`Interval` is returned unchanged).

        Parameters
        ----------
        pair : sequence of two floats, or Interval
            The bounds.
        estimate : float
            The point estimate the interval belongs to (NaN when not carried).
        method : str
            How the interval was made.

        Returns
        -------
        Interval

        Raises
        ------
        ValueError
            If ``pair`` does not have two elements or ``low > high``.
        """
        if isinstance(pair, cls):
            return pair
        vals = list(pair)
        if len(vals) != 2:
            raise ValueError(f"a confidence interval needs (low, high), got {pair!r}")
        lo, hi = float(vals[0]), float(vals[1])
        if lo > hi:
            raise ValueError(f"a confidence interval needs low <= high, got ({lo}, {hi})")
        return cls(float(estimate), lo, hi, method)


@dataclass(frozen=True)
class Estimate:
    """A point estimate with its standard error and confidence interval (no p-value).

    Attributes
    ----------
    estimate : float
        The point estimate.
    se : float
        Its standard error (NaN when none was computed).
    ci : Interval
        The interval at ``level`` (both bounds NaN when none was computed).
    level : float
        Confidence level of ``ci``.
    name : str
        What is estimated, for tables.
    method : str
        How the uncertainty was obtained (``"bootstrap"``, ``"normal"``, ``"seeds"``, ...).
    """

    estimate: float
    se: float = math.nan
    ci: Interval = field(default=Interval(math.nan, math.nan, math.nan))
    level: float = 0.95
    name: str = ""
    method: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "estimate", float(self.estimate))
        object.__setattr__(self, "ci", Interval.of(self.ci, estimate=self.estimate, method=self.method))
        object.__setattr__(self, "se", float(self.se))

    @classmethod
    def normal(cls, estimate: float, se: float, level: float = 0.95, **kwargs: Any) -> Estimate:
        """An estimate with the normal-approximation interval ``estimate +- z se``.

        Parameters
        ----------
        estimate, se : float
            Point estimate and standard error (``se >= 0``).
        level : float
            Confidence level in (0, 1).
        **kwargs
            ``name`` and ``method``.

        Returns
        -------
        Estimate
        """
        from scipy import stats

        level = check_level(level)
        if not se >= 0:
            raise ValueError(f"se must be >= 0, got {se!r}")
        z = float(stats.norm.ppf(0.5 + level / 2))
        kwargs.setdefault("method", "normal")
        ci = Interval(float(estimate), estimate - z * se, estimate + z * se, kwargs["method"])
        return cls(estimate, se, ci, level, **kwargs)

    @classmethod
    def from_draws(cls, estimate: float, draws: Any, level: float = 0.95, **kwargs: Any) -> Estimate:
        """An estimate with the percentile interval and standard deviation of replicates.

        Parameters
        ----------
        estimate : float
            The point estimate on the full sample.
        draws : array-like
            Bootstrap (or seed) replicates; NaN replicates are dropped.
        level : float
            Confidence level in (0, 1).
        **kwargs
            ``name`` and ``method``.

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            If fewer than two finite replicates remain.
        """
        level = check_level(level)
        d = np.asarray(draws, dtype=float).ravel()
        d = d[np.isfinite(d)]
        if d.size < 2:
            raise ValueError(f"draws must hold at least 2 finite replicates, got {d.size}")
        lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
        kwargs.setdefault("method", "bootstrap")
        ci = Interval(float(estimate), float(lo), float(hi), kwargs["method"])
        return cls(estimate, float(d.std(ddof=1)), ci, level, **kwargs)

    def significant(self) -> bool:
        """Whether the interval excludes 0.

        Returns
        -------
        bool
        """
        return self.ci.excludes_zero()

    def summary(self) -> pd.DataFrame:
        """One row: estimate, se, ci_low, ci_high.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame(
            {"estimate": [self.estimate], "se": [self.se], "ci_low": [self.ci.low], "ci_high": [self.ci.high]},
            index=[self.name or "estimate"],
        )


class BaseTestResult:
    """The base of every hypothesis test's result in cflib: one decision rule, one table, one figure.

    A subclass has ``statistic`` and ``pvalue`` attributes (and may have ``null_distribution``). It inherits
    :meth:`reject` and, unless it draws something more specific, :meth:`summary` and :meth:`plot`, so every
    test answers ``reject(alpha)``, ``summary()`` and ``plot()`` (as ``scipy.stats``' results share theirs).
    Rejects when ``pvalue <= alpha``; a class that sets ``strict_rejection = True`` rejects only when
    ``pvalue < alpha``.
    """

    __test__ = False  # not a pytest test class, despite the name
    strict_rejection = False
    statistic: float  # declared for the type checker: every subclass has these two (dataclass fields)
    pvalue: float

    def reject(self, alpha: float = 0.05) -> bool:
        """Whether the test rejects its null hypothesis at level ``alpha``.

        Parameters
        ----------
        alpha : float
            Significance level in (0, 1).

        Returns
        -------
        bool
        """
        alpha = check_alpha(alpha)
        pvalue = self.pvalue
        return bool(pvalue < alpha if self.strict_rejection else pvalue <= alpha)

    def summary(self) -> pd.DataFrame:
        """One row: statistic and p-value.

        Returns
        -------
        pandas.DataFrame
        """
        name = getattr(self, "name", "") or "test"
        return pd.DataFrame(
            {"statistic": [float(self.statistic)], "pvalue": [float(self.pvalue)]},
            index=[name],
        )

    def plot(self, ax: Any = None) -> Any:
        """The simulated null distribution with the observed statistic, or, without one, the p-value on [0, 1].

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on (new ones when omitted).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt  # not cflib.plotting: it reads the claims, which read these results

        if check_axes(ax) is None:
            _, ax = plt.subplots(figsize=(4.5, 3.0), layout="constrained")
        null = getattr(self, "null_distribution", None)
        stat, pvalue = float(self.statistic), float(self.pvalue)
        if null is not None and np.size(null):
            ax.hist(np.asarray(null, dtype=float).ravel(), bins=30, color="0.7", label="null distribution")
            ax.axvline(stat, color="C3", label=f"observed (p = {pvalue:.3g})")
            ax.set(xlabel="statistic", ylabel="count")
        else:
            ax.axvline(0.05, color="0.5", ls="--", label="0.05")
            ax.plot([pvalue], [0], "o", color="C3", label=f"p = {pvalue:.3g} (statistic {stat:.3g})")
            ax.set(xlim=(0, 1), xlabel="p-value", yticks=[], ylabel="")
        ax.legend(frameon=False)
        return ax


@dataclass(frozen=True)
class TestResult(BaseTestResult):
    """A hypothesis test's outcome: statistic, p-value, null distribution and one decision rule.

    Attributes
    ----------
    statistic : float
        The test statistic.
    pvalue : float
        The p-value in [0, 1].
    null_distribution : numpy.ndarray or None
        Simulated null statistics (permutations, bootstrap draws), when the test simulated one.
    name : str
        The test's name, for tables.
    """

    __test__ = False  # not a pytest test class, despite the name

    statistic: float
    pvalue: float
    null_distribution: np.ndarray | None = field(default=None, repr=False)
    name: str = ""

    def __post_init__(self) -> None:
        p = float(self.pvalue)
        if not (0.0 <= p <= 1.0):
            raise ValueError(f"pvalue must be in [0, 1], got {self.pvalue!r}")
        object.__setattr__(self, "pvalue", p)
        object.__setattr__(self, "statistic", float(self.statistic))
