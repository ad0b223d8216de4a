"""The demographic-parity and equal-opportunity baselines of Ma et al. (2024, Sec. 6.1, eqs. 5-6).

Welch t-tests between groups (equal opportunity restricted to ``y == y_value``, i.e. it really
conditions on the label); with more than two groups a chi-square test (hard labels) or the
Alexander-Govern test (scores). ``method="paper_bootstrap"`` reproduces the authors' code: 1000 bootstrap
draws per group compared with a paired t-test.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from cflib.results import BaseTestResult
from cflib.runtime import as_generator
from cflib.validation import (
    ValidationError,
    ValidationTypeError,
    check_axes,
    check_choice,
    check_count,
    check_finite,
    describe,
)

from .student_t import paired_t_test, t_pvalue
from .unit_arrays import (
    attribute_levels,
    check_alternative,
    check_bool,
    is_binary,
    not_array,
    per_unit_values,
)

__all__ = ["GroupParityResult", "demographic_parity_test", "equal_opportunity_test"]

_LN10 = math.log(10.0)


def _check_binary(y: np.ndarray, name: str) -> None:
    if not is_binary(y):
        bad = np.unique(y[(y != 0) & (y != 1)])[:3]
        raise ValueError(
            f"{name} must hold hard binary predictions in {{0, 1}} here, got values such as {bad.tolist()}; "
            "threshold the scores (e.g. (p >= 0.5).astype(int)) or use a method that accepts scores"
        )


@dataclass(frozen=True, eq=False)
class GroupParityResult(BaseTestResult):
    """Result of a demographic-parity or equal-opportunity test between groups of ``a``.

    Attributes
    ----------
    statistic : float
        Welch t (two groups), chi-square or Alexander-Govern statistic (more groups), or the
        paired t of the bootstrap draws (``method="paper_bootstrap"``).
    pvalue, log10_pvalue : float
        P-value and its base-10 logarithm.
    df : float
        Degrees of freedom of the reference distribution (NaN where it has none).
    criterion : str
        ``"demographic parity"`` or ``"equal opportunity"``.
    method : str
        The test used.
    groups : tuple
        Levels of ``a`` (sorted).
    rates : tuple of float
        Mean prediction per group (the positive rate for hard labels).
    counts : tuple of int
        Units per group entering the test.
    difference : float
        Largest minus smallest group rate.
    alternative : str
        Alternative hypothesis of the two-group tests.
    """

    strict_rejection = True  # rejects when pvalue < alpha

    statistic: float
    pvalue: float
    log10_pvalue: float
    df: float
    criterion: str
    method: str
    groups: tuple
    rates: tuple
    counts: tuple
    difference: float
    alternative: str

    def summary(self) -> pd.DataFrame:
        """One row per group (rate, count) with the test's statistic and p-value repeated.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame(
            {
                "criterion": self.criterion,
                "group": list(self.groups),
                "n": list(self.counts),
                "rate": list(self.rates),
                "statistic": self.statistic,
                "p": self.pvalue,
                "method": self.method,
            }
        )

    def plot(self, ax: Any = None) -> Any:
        """Bar chart of the group rates with 95% normal-approximation intervals.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on.

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if check_axes(ax) is None else ax
        rates = np.asarray(self.rates)
        counts = np.asarray(self.counts)
        se = np.sqrt(np.clip(rates * (1 - rates), 0, None) / np.maximum(counts, 1))
        ax.bar([str(g) for g in self.groups], rates, yerr=1.96 * se, color="#0072B2", alpha=0.85, capsize=4)
        ax.set_ylabel("mean prediction")
        ax.set_xlabel("group")
        ax.set_title(f"{self.criterion}: p = {self.pvalue:.2g}", fontsize=10)
        return ax


def _two_group_welch(x0: np.ndarray, x1: np.ndarray, alternative: str) -> tuple[float, float, float, float]:
    n0, n1 = x0.size, x1.size
    m0, m1 = x0.mean(), x1.mean()
    v0, v1 = x0.var(ddof=1), x1.var(ddof=1)
    se2 = v0 / n0 + v1 / n1
    if se2 <= 0:
        # Both groups constant: identical means are parity (p = 1); different means are certain.
        if m0 == m1:
            return 0.0, 1.0, 0.0, float("nan")
        t = math.copysign(math.inf, m1 - m0)
        df = float(n0 + n1 - 2)
    else:
        t = (m1 - m0) / math.sqrt(se2)
        df = se2**2 / ((v0 / n0) ** 2 / (n0 - 1) + (v1 / n1) ** 2 / (n1 - 1))
    p, logp = t_pvalue(t, df, alternative)
    return float(t), p, logp, float(df)


def _parity_test(
    y_hat: np.ndarray,
    codes: np.ndarray,
    levels: np.ndarray,
    *,
    criterion: str,
    method: str,
    alternative: str,
    n_bootstrap: int,
    seed: Any,
    binary: bool | None,
) -> GroupParityResult:
    check_alternative(alternative)
    check_choice(method, "method", ("welch", "paper_bootstrap"))
    n_bootstrap = check_count(n_bootstrap, "n_bootstrap", minimum=2)
    check_bool(binary, "binary", allow_none=True)
    is_bin = is_binary(y_hat)
    if binary:
        _check_binary(y_hat, "y_hat")
    n_lev = levels.size
    counts = np.bincount(codes, minlength=n_lev)
    if np.any(counts < 2):
        small = [levels[j].item() if hasattr(levels[j], "item") else levels[j] for j in np.where(counts < 2)[0]]
        raise ValidationError(f"every group needs at least 2 units for a {criterion} test; group(s) {small} have fewer")
    sums = np.bincount(codes, weights=y_hat, minlength=n_lev)
    rates = sums / counts
    df: float  # degrees of freedom: whole for the paired t-test, NaN where none apply
    if method == "paper_bootstrap":
        if n_lev != 2:
            raise ValidationError("method='paper_bootstrap' compares exactly two groups; use method='welch' for more")
        rng = as_generator(seed)
        x0, x1 = y_hat[codes == 0], y_hat[codes == 1]
        # The authors' code: independent bootstrap draws from each group, then a *paired* t-test.
        b0 = x0[rng.integers(0, x0.size, n_bootstrap)]
        b1 = x1[rng.integers(0, x1.size, n_bootstrap)]
        t, p, logp, df = paired_t_test(b1 - b0, alternative)
        name = f"paired t on {n_bootstrap} bootstrap draws (paper code)"
    elif n_lev == 2:
        t, p, logp, df = _two_group_welch(y_hat[codes == 0], y_hat[codes == 1], alternative)
        name = "Welch t"
    elif is_bin:
        table = np.stack([counts - sums, sums], axis=1)
        if np.any(table.sum(axis=0) == 0):
            t, p, logp, df = 0.0, 1.0, 0.0, float(n_lev - 1)
        else:
            res = stats.chi2_contingency(table, correction=False)
            t, df = float(res.statistic), float(res.dof)
            logp = float(stats.chi2.logsf(t, df) / _LN10)
            p = float(10**logp)
        name = "chi-square (groups x prediction)"
    else:
        groups = [y_hat[codes == j] for j in range(n_lev)]
        if all(np.ptp(gx) == 0 for gx in groups):
            same = np.ptp(rates) == 0
            t, p, logp, df = (0.0, 1.0, 0.0, float("nan")) if same else (math.inf, 0.0, -math.inf, float("nan"))
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                res = stats.alexandergovern(*groups)
            t, df = float(res.statistic), float(n_lev - 1)
            logp = float(stats.chi2.logsf(t, df) / _LN10)
            p = float(10**logp)
        name = "Alexander-Govern (heteroscedastic one-way)"
    return GroupParityResult(
        statistic=float(t),
        pvalue=float(p),
        log10_pvalue=float(logp),
        df=float(df),
        criterion=criterion,
        method=name,
        groups=tuple(lv.item() if hasattr(lv, "item") else lv for lv in levels),
        rates=tuple(float(r) for r in rates),
        counts=tuple(int(c) for c in counts),
        difference=float(rates.max() - rates.min()),
        alternative=alternative,
    )


def demographic_parity_test(
    y_hat: Any,
    a: Any,
    *,
    method: str = "welch",
    alternative: str = "two-sided",
    n_bootstrap: int = 1000,
    binary: bool | None = None,
    seed: int | np.random.Generator | None = 0,
) -> GroupParityResult:
    """Test demographic parity, :math:`P[f(X)=1 | A=a] = P[f(X)=1 | A=a']` (eq. 5).

    Parameters
    ----------
    y_hat : array-like of shape (n,)
        Predictions (hard labels or scores).
    a : array-like of shape (n,)
        Sensitive attribute (at least two levels).
    method : {"welch", "paper_bootstrap"}
        ``"welch"``: Welch t-test between the two groups; with more groups a chi-square test of
        independence (hard labels) or the Alexander-Govern test (scores).
        ``"paper_bootstrap"``: the authors' code (two groups only).
    alternative : {"two-sided", "greater", "less"}
        For two groups, H1 on ``rate(second level) - rate(first level)``.
    n_bootstrap : int
        Draws per group for ``"paper_bootstrap"``.
    binary : bool, optional
        If True, require hard labels in {0, 1} and raise otherwise.
    seed : int, numpy.random.Generator or None
        Randomness of the bootstrap.

    Returns
    -------
    GroupParityResult
    """
    y_hat = per_unit_values(y_hat, "y_hat")
    levels, codes = attribute_levels(a, y_hat.size)
    return _parity_test(
        y_hat,
        codes,
        levels,
        criterion="demographic parity",
        method=method,
        alternative=alternative,
        n_bootstrap=n_bootstrap,
        seed=seed,
        binary=binary,
    )


def equal_opportunity_test(
    y_hat: Any,
    a: Any,
    y: Any,
    *,
    y_value: Any = 1,
    method: str = "welch",
    alternative: str = "two-sided",
    n_bootstrap: int = 1000,
    binary: bool | None = None,
    seed: int | np.random.Generator | None = 0,
) -> GroupParityResult:
    """Test equal opportunity, :math:`P[f(X)=1 | Y=y, A=a] = P[f(X)=1 | Y=y, A=a']` (eq. 6).

    Unlike the authors' code, the test really conditions on the label: it is the demographic-parity
    test on the units with ``y == y_value`` (the true-positive rates for ``y_value = 1``).

    Parameters
    ----------
    y_hat : array-like of shape (n,)
        Predictions.
    a : array-like of shape (n,)
        Sensitive attribute.
    y : array-like of shape (n,)
        True labels.
    y_value : scalar
        The label to condition on.
    method, alternative, n_bootstrap, binary, seed
        As in :func:`demographic_parity_test`.

    Returns
    -------
    GroupParityResult
    """
    y_hat = per_unit_values(y_hat, "y_hat")
    n = y_hat.size
    if not_array(y):
        raise ValidationTypeError(f"y must be a 1-d array-like with one label per unit, got {describe(y)}")
    y_arr = np.asarray(y)
    if y_arr.ndim != 1 or y_arr.shape[0] != n:
        raise ValidationError(f"y must be one-dimensional with one label per unit ({n}), got shape {y_arr.shape}")
    if y_arr.dtype.kind in "fc":
        check_finite(y_arr, "y")
    attribute_levels(a, n)  # validates a on all units first (length, constant)
    keep = y_arr == y_value
    if keep.sum() < 4:
        raise ValidationError(f"only {int(keep.sum())} units have y == {y_value!r}; equal opportunity needs at least 4")
    a_sub = np.asarray(a)[keep]
    levels, codes = attribute_levels(a_sub, int(keep.sum()), name=f"a among units with y == {y_value!r}")
    return _parity_test(
        y_hat[keep],
        codes,
        levels,
        criterion="equal opportunity",
        method=method,
        alternative=alternative,
        n_bootstrap=n_bootstrap,
        seed=seed,
        binary=binary,
    )
