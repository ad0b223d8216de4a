"""Counterfactual-invariance tests: CIT-LR, and the demographic-parity / equal-opportunity baselines.

Implements Ma, Quinzan, Willem & Bauer, *AI Alignment in Medical Imaging: Unveiling Hidden Biases
Through Counterfactual Analysis* (2024):

* Sec. 4, Theorem 4.2: a classifier :math:`f` is counterfactually invariant (CI) to :math:`A` iff
  :math:`E[\\hat Y g(A, Z)] = E[\\hat Y h(Z)]`, with :math:`g(a, z) = E[\\hat Y \\mid A=a, Z=z]` and
  :math:`h(z) = E[\\hat Y \\mid Z=z]`. The difference equals :math:`E[(g - h)^2] \\ge 0`.
* Sec. 5 and Algorithm 1 (CIT-LR): learn :math:`\\hat g, \\hat h` on one split and run a paired
  t-test of :math:`\\hat y \\hat g` against :math:`\\hat y \\hat h` on the other.
  :func:`cit_lr_test` is the *known-Z* (regression) form used on the synthetic data of Sec. 6.2;
  :func:`cit_lr_generative` is the *generator* form of Alg. 1, where :math:`\\hat g(a, z)` is a
  Monte-Carlo average of :math:`f` over counterfactuals generated from :math:`(z, a)`.
* Sec. 6.1: the demographic-parity (eq. 5) and equal-opportunity (eq. 6) baselines
  (:func:`demographic_parity_test`, :func:`equal_opportunity_test`).
* Eqs. (7)-(8): the expected counterfactual accuracy (:func:`expected_counterfactual_accuracy`).

Decisions where the paper is ambiguous (see the chapter's notes, Sec. 7.1):

* The statistic of Alg. 1 line 16 divides by a *difference* of dispersions, which is not a valid t
  statistic. We use the paired t-test on :math:`d_i = \\hat y_i(\\hat g_i - \\hat h_i)` with
  ``N - 1`` degrees of freedom (what the authors' code does), two-sided by default, with
  ``alternative="greater"`` available because the tested functional is non-negative.
* The paper takes :math:`Z \\perp A`. Then the A-marginal of :math:`\\hat g`,
  :math:`\\hat h(z) = \\sum_a P(a) \\hat g(a, z)` (``h_mode="marginalize"``), makes :math:`E[d_i] = 0`
  under the null for any :math:`\\hat g` fitted on another split (with the true :math:`P(a)`); a
  separately regressed :math:`\\hat h` (``h_mode="regress"``, the authors' code) is not calibrated.
  In practice :math:`Z` is correlated with :math:`A` (prevalence differs by group) and both forms
  then reject an invariant classifier far too often, so :func:`cit_lr_test` defaults to a doubly
  robust form (``h_mode="debiased"``: :math:`\\hat h(z) = \\sum_a \\hat P(a \\mid z) \\hat g(a, z)` and
  residualised predictions) that tests the same functional and stays calibrated; the paper's forms
  warn when their assumption is visibly violated.
* DP and EO are Welch t-tests between groups (EO restricted to ``y == y_value``, i.e. it really
  conditions on the label). ``method="paper_bootstrap"`` reproduces the authors' code: 1000
  bootstrap draws per group compared with a paired t-test.

All functions take plain NumPy arrays of predictions, so they audit any model.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from cflib.results import RejectsAtLevel, check_alpha
from cflib.runtime import as_generator
from cflib.validation import (
    ValidationError,
    ValidationTypeError,
    check_axes,
    check_callable,
    check_choice,
    check_count,
    check_finite,
    check_probability,
    check_real,
    describe,
    warn,
)

__all__ = [
    "CITResult",
    "GroupParityResult",
    "ECAResult",
    "paired_t_test",
    "cit_lr_from_estimates",
    "cit_lr_test",
    "cit_lr_generative",
    "counterfactual_predictions",
    "demographic_parity_test",
    "equal_opportunity_test",
    "expected_counterfactual_accuracy",
    "ci_functional",
    "alignment_stats",
    "plot_pvalue_vs_eca",
    "rejection_summary",
]

_ALTERNATIVES = ("two-sided", "greater", "less")
_LN10 = math.log(10.0)


# --------------------------------------------------------------------------------------------
# input checks
# --------------------------------------------------------------------------------------------
def _not_array(x: Any) -> bool:
    return x is None or isinstance(x, (str, bytes, Mapping)) or callable(x)


def _numeric(arr: np.ndarray, name: str) -> np.ndarray:
    """``arr`` as float64, refusing non-numeric dtypes (objects holding numbers are converted)."""
    if arr.dtype == object:
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise ValidationTypeError(f"{name} must be numeric, got values of dtype object such as {describe(arr.flat[0])}") from None
    if arr.dtype != bool and arr.dtype.kind not in "iuf":
        raise ValidationTypeError(f"{name} must be numeric, got dtype {arr.dtype}")
    return check_finite(arr.astype(float), name)


def _as_1d(x: Any, name: str, n: int | None = None, *, numeric: bool = True, n_name: str = "y_hat",
           min_size: int = 1) -> np.ndarray:
    """Validate a 1-D array (length ``n`` if given, at least ``min_size`` units, finite if numeric)."""
    if _not_array(x):
        raise ValidationTypeError(f"{name} must be a 1-d array-like with one value per unit, got {describe(x)}")
    arr = np.asarray(x)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        hint = f": pass {name}[0] or {name}.ravel()" if arr.ndim == 2 and arr.shape[0] == 1 else ""
        raise ValidationError(f"{name} must be one-dimensional (one value per unit), got shape {arr.shape}{hint}")
    if n is not None and arr.shape[0] != n:
        raise ValidationError(f"{name} has {arr.shape[0]} entries but {n_name} has {n}: pass one value per unit")
    if arr.shape[0] < min_size:
        raise ValidationError(f"{name} must hold at least {min_size} unit(s), got {arr.shape[0]}")
    if numeric:
        if arr.dtype != bool and arr.dtype.kind not in "iuf":
            raise ValidationTypeError(f"{name} must be numeric, got dtype {arr.dtype}")
        arr = _numeric(arr, name)
    return arr


def _as_2d(x: Any, name: str, n: int) -> np.ndarray:
    if _not_array(x):
        raise ValidationTypeError(f"{name} must be an array-like of shape ({n}, p), got {describe(x)}")
    arr = np.asarray(x)
    if arr.ndim == 0:
        raise ValidationError(f"{name} must have shape ({n}, p), one row per unit, got a scalar")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        arr = arr.reshape(arr.shape[0], -1)
    if arr.shape[0] != n:
        hint = f": transpose it ({name}.T)" if arr.shape[1] == n else ""
        raise ValidationError(f"{name} has {arr.shape[0]} rows but y_hat has {n}: pass one row per unit{hint}")
    if arr.shape[1] == 0:
        raise ValidationError(f"{name} must have at least one column, got shape {arr.shape}")
    return _numeric(arr, name)


def _groups(a: Any, n: int, name: str = "a") -> tuple[np.ndarray, np.ndarray]:
    """Return (levels, integer codes) of a sensitive attribute with at least two levels."""
    if _not_array(a):
        raise ValidationTypeError(f"{name} must be a 1-d array-like with one attribute value per unit, got {describe(a)}")
    arr = np.asarray(a)
    if arr.ndim != 1:
        raise ValidationError(f"{name} must be one-dimensional (one attribute value per unit), got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValidationError(f"{name} has {arr.shape[0]} entries but y_hat has {n}: pass one value per unit")
    if arr.dtype.kind in "fc":
        check_finite(arr, name)
    try:
        levels, codes = np.unique(arr, return_inverse=True)
    except TypeError:  # objects that cannot be ordered (None among strings, say)
        raise ValidationTypeError(f"{name} must hold values of one comparable type (numbers or strings), got "
                                  f"{describe(sorted({type(v).__name__ for v in arr.tolist()}))}") from None
    if levels.size < 2:
        got = f"only level {levels[0]!r}" if levels.size else "no units"
        raise ValidationError(f"{name} is constant ({got}); a test of invariance needs at least two groups")
    return levels, codes


def _check_learner(value: Any, name: str) -> Any:
    """``None``, a scikit-learn estimator (``get_params``) or a zero-argument callable returning one."""
    if value is not None and not hasattr(value, "get_params") and not callable(value):
        raise ValidationTypeError(f"{name} must be a scikit-learn estimator or a callable returning one, got {describe(value)}")
    return value


def _check_bool(value: Any, name: str, *, allow_none: bool = False) -> Any:
    if (value is None and allow_none) or isinstance(value, (bool, np.bool_)):
        return value
    raise ValidationTypeError(f"{name} must be True or False{' or None' if allow_none else ''}, got {describe(value)}")


def _is_binary(y: np.ndarray) -> bool:
    return bool(np.all((y == 0) | (y == 1)))


def _check_binary(y: np.ndarray, name: str) -> None:
    if not _is_binary(y):
        bad = np.unique(y[(y != 0) & (y != 1)])[:3]
        raise ValueError(
            f"{name} must hold hard binary predictions in {{0, 1}} here, got values such as {bad.tolist()}; "
            "threshold the scores (e.g. (p >= 0.5).astype(int)) or use a method that accepts scores"
        )


def _check_alternative(alternative: str) -> None:
    check_choice(alternative, "alternative", _ALTERNATIVES)


def _t_pvalue(t: float, df: float, alternative: str) -> tuple[float, float]:
    """P-value and its log10 (computed on the log scale so tiny p-values keep their size)."""
    if np.isnan(t):
        return float("nan"), float("nan")
    if alternative == "two-sided":
        logp = min(0.0, _t_logsf(abs(t), df) + math.log(2.0))
    elif alternative == "greater":
        logp = _t_logsf(t, df)
    else:
        logp = _t_logsf(-t, df)
    return float(math.exp(logp)), float(logp / _LN10)


def _t_logsf(t: float, df: float) -> float:
    """log P(T > t) for Student's t, finite far into the tail where SciPy underflows to -inf."""
    logp = float(stats.t.logsf(t, df))
    if np.isfinite(logp) or not np.isfinite(t) or t <= 0:
        return logp
    # sf(t) = I_x(df/2, 1/2) / 2 with x = df / (df + t^2); for small x the leading term of the
    # incomplete beta series is x^a (1-x)^b / (a B(a, b)).
    from scipy.special import betaln

    a, b = df / 2.0, 0.5
    log_x = math.log(df) - math.log(df + t * t)
    log_1mx = math.log(t * t) - math.log(df + t * t)
    return a * log_x + b * log_1mx - math.log(a) - float(betaln(a, b)) - math.log(2.0)


# --------------------------------------------------------------------------------------------
# result objects
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CITResult(RejectsAtLevel):
    """Result of a CIT-LR test (paired t-test of the moment equality of Theorem 4.2).

    Attributes
    ----------
    statistic : float
        Paired t statistic of :math:`d_i = \\hat y_i (\\hat g_i - \\hat h_i)`.
    pvalue : float
        P-value under the t distribution with ``df`` degrees of freedom.
    log10_pvalue : float
        :math:`\\log_{10}` p, computed on the log scale (keeps p-values below 1e-300).
    df : int
        Degrees of freedom, ``n - 1``.
    n : int
        Number of test units.
    mu_az, mu_z : float
        :math:`\\hat\\mu_{A,Z} = \\overline{\\hat y \\hat g}` and :math:`\\hat\\mu_Z = \\overline{\\hat y \\hat h}`.
    mean_diff, sd_diff : float
        Mean and standard deviation (ddof 1) of :math:`d`.
    effect : float
        :math:`\\overline{(\\hat g - \\hat h)^2}`, the plug-in of :math:`E[(g - h)^2]`.
    alternative : str
        ``"two-sided"``, ``"greater"`` (H1: the functional is positive) or ``"less"``.
    method : str
        Which form produced ``g`` and ``h``.
    d, g, h, y_hat : numpy.ndarray
        Per-unit values on the test split.
    """

    strict_rejection = True  # rejects when pvalue < alpha

    statistic: float
    pvalue: float
    log10_pvalue: float
    df: int
    n: int
    mu_az: float
    mu_z: float
    mean_diff: float
    sd_diff: float
    effect: float
    alternative: str
    method: str
    d: np.ndarray = field(repr=False)
    g: np.ndarray = field(repr=False)
    h: np.ndarray = field(repr=False)
    y_hat: np.ndarray = field(repr=False)

    def summary(self) -> pd.DataFrame:
        """One-row table of the test's numbers.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame(
            [
                {
                    "method": self.method,
                    "n": self.n,
                    "mu_AZ": self.mu_az,
                    "mu_Z": self.mu_z,
                    "mean d": self.mean_diff,
                    "E[(g-h)^2]": self.effect,
                    "t": self.statistic,
                    "df": self.df,
                    "p": self.pvalue,
                    "log10 p": self.log10_pvalue,
                    "alternative": self.alternative,
                }
            ]
        )

    def plot(self, ax=None):
        """Histogram of :math:`d_i` with its mean and 0 marked.

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
        ax.hist(self.d, bins=min(40, max(10, self.n // 10)), color="#0072B2", alpha=0.8)
        ax.axvline(0.0, color="0.3", lw=1, ls="--")
        ax.axvline(self.mean_diff, color="#D55E00", lw=1.5, label=f"mean d = {self.mean_diff:.3g}")
        ax.set_xlabel(r"$d_i = \hat y_i(\hat g_i - \hat h_i)$")
        ax.set_ylabel("units")
        ax.set_title(f"{self.method}: t = {self.statistic:.2f}, p = {self.pvalue:.2g}", fontsize=10)
        ax.legend()
        return ax


@dataclass(frozen=True, eq=False)
class GroupParityResult(RejectsAtLevel):
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

    def plot(self, ax=None):
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


@dataclass(frozen=True, eq=False)
class ECAResult:
    """Expected counterfactual accuracy (eqs. 7-8): the share of units whose prediction does not change.

    Attributes
    ----------
    eca : float
        Mean agreement between factual and counterfactual predictions.
    n : int
        Number of (unit, target level) pairs averaged.
    ci : tuple of float
        95% Wilson interval (treating the pairs as independent).
    agree : numpy.ndarray
        Per-pair agreement indicators.
    tol : float
        Tolerance under which two predictions count as equal.
    """

    eca: float
    n: int
    ci: tuple
    agree: np.ndarray = field(repr=False)
    tol: float = 0.0

    def __float__(self) -> float:
        return float(self.eca)

    @property
    def flip_rate(self) -> float:
        """``1 - eca``, the share of predictions changed by the intervention."""
        return 1.0 - self.eca

    def summary(self) -> pd.DataFrame:
        """One-row table: ECA, its interval and the number of pairs.

        Returns
        -------
        pandas.DataFrame
        """
        return pd.DataFrame([{"ECA": self.eca, "ci_low": self.ci[0], "ci_high": self.ci[1], "n": self.n, "tol": self.tol}])

    def plot(self, ax=None):
        """Bar of ECA and 1 - ECA with the interval.

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
        err = np.array([[self.eca - self.ci[0]], [self.ci[1] - self.eca]])
        ax.bar(["unchanged (ECA)"], [self.eca], yerr=err, color="#009E73", capsize=4)
        ax.bar(["changed"], [1 - self.eca], color="#D55E00")
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of units")
        return ax


# --------------------------------------------------------------------------------------------
# the paired t-test and CIT-LR
# --------------------------------------------------------------------------------------------
def paired_t_test(d: Any, alternative: str = "two-sided") -> tuple[float, float, float, int]:
    """Paired (one-sample) t-test of ``mean(d) = 0``.

    Parameters
    ----------
    d : array-like
        Paired differences.
    alternative : {"two-sided", "greater", "less"}
        Alternative hypothesis on the mean of ``d``.

    Returns
    -------
    (t, pvalue, log10_pvalue, df) : tuple
        If every ``d`` is identical the t statistic is 0 (p = 1) when that value is 0 and
        :math:`\\pm\\infty` otherwise, instead of the NaN SciPy returns.
    """
    _check_alternative(alternative)
    d = _as_1d(d, "d")
    n = d.size
    if n < 2:
        raise ValidationError(f"d needs at least 2 units for a t-test, got {n}")
    mean = float(d.mean())
    sd = float(d.std(ddof=1))
    # A tolerance relative to the values' size: "all equal" must survive rounding in mean/sd.
    scale = max(1.0, float(np.abs(d).max()))
    if sd <= 1e-14 * scale:
        if abs(mean) <= 1e-14 * scale:
            return 0.0, 1.0, 0.0, n - 1
        t = math.copysign(math.inf, mean)
    else:
        t = math.sqrt(n) * mean / sd
    p, logp = _t_pvalue(t, n - 1, alternative)
    return float(t), p, logp, n - 1


def ci_functional(y_hat: Any, g: Any, h: Any) -> dict[str, float]:
    """Plug-in estimates of the two sides of Theorem 4.2 and of :math:`E[(g - h)^2]`.

    Parameters
    ----------
    y_hat, g, h : array-like
        Predictions and the two regression functions evaluated at each unit.

    Returns
    -------
    dict
        ``E[Yhat g]``, ``E[Yhat h]``, their difference ``Delta`` and ``E[(g-h)^2]``.
    """
    y_hat = _as_1d(y_hat, "y_hat")
    g = _as_1d(g, "g", y_hat.size)
    h = _as_1d(h, "h", y_hat.size)
    e1, e2 = float(np.mean(y_hat * g)), float(np.mean(y_hat * h))
    return {"E[Yhat g]": e1, "E[Yhat h]": e2, "Delta": e1 - e2, "E[(g-h)^2]": float(np.mean((g - h) ** 2))}


def cit_lr_from_estimates(
    y_hat: Any, g: Any, h: Any, *, alternative: str = "two-sided", method: str = "CIT-LR", d: Any = None
) -> CITResult:
    """CIT-LR test from given estimates :math:`\\hat g(a_i, z_i)` and :math:`\\hat h(z_i)`.

    Parameters
    ----------
    y_hat : array-like of shape (n,)
        Predictions of the audited model on the test units (hard labels or scores).
    g : array-like of shape (n,)
        :math:`\\hat g(a_i, z_i)`, estimated without the test units.
    h : array-like of shape (n,)
        :math:`\\hat h(z_i)`, estimated without the test units.
    alternative : {"two-sided", "greater", "less"}
        ``"greater"`` tests H1: :math:`E[\\hat Y g] > E[\\hat Y h]` (the functional is non-negative).
    method : str
        Label stored in the result.
    d : array-like of shape (n,), optional
        Per-unit terms to test instead of :math:`\\hat y_i (\\hat g_i - \\hat h_i)` (the debiased
        form of :func:`cit_lr_test` passes :math:`(\\hat y_i - \\hat m_i)(\\hat g_i - \\hat h_i)`).

    Returns
    -------
    CITResult
    """
    _check_alternative(alternative)
    if not isinstance(method, str):
        raise ValidationTypeError(f"method must be a string (a label stored in the result), got {describe(method)}")
    y_hat = _as_1d(y_hat, "y_hat", min_size=2)
    g = _as_1d(g, "g", y_hat.size)
    h = _as_1d(h, "h", y_hat.size)
    d = y_hat * g - y_hat * h if d is None else _as_1d(d, "d", y_hat.size)
    t, p, logp, df = paired_t_test(d, alternative)
    return CITResult(
        statistic=t,
        pvalue=p,
        log10_pvalue=logp,
        df=df,
        n=int(y_hat.size),
        mu_az=float(np.mean(y_hat * g)),
        mu_z=float(np.mean(y_hat * h)),
        mean_diff=float(d.mean()),
        sd_diff=float(d.std(ddof=1)),
        effect=float(np.mean((g - h) ** 2)),
        alternative=alternative,
        method=method,
        d=d,
        g=g,
        h=h,
        y_hat=y_hat,
    )


def _default_learner(binary: bool):
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if binary:
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    return make_pipeline(StandardScaler(), Ridge(alpha=1.0))


def _fit_learner(learner: Any, x_train: np.ndarray, y_train: np.ndarray, binary: bool) -> Callable[[np.ndarray], np.ndarray]:
    """Fit a clone of ``learner``; return a function giving its estimate of E[y | x]."""
    from sklearn.base import clone

    if y_train.size == 0:
        raise ValueError("a group of the training split is empty; use more units or fewer folds")
    if np.all(y_train == y_train[0]):
        # A constant target (the model predicts one class on this group) is its own regression.
        const = float(y_train[0])
        return lambda x_eval: np.full(x_eval.shape[0], const)
    est = clone(learner) if hasattr(learner, "get_params") else learner()
    if binary and hasattr(est, "predict_proba"):
        est.fit(x_train, y_train.astype(int))
        col = list(est.classes_).index(1)
        return lambda x_eval: est.predict_proba(x_eval)[:, col]
    est.fit(x_train, y_train)
    return lambda x_eval: np.asarray(est.predict(x_eval), dtype=float)


def _nuisance_learner(binary: bool):
    """Default learner of E[Y_hat | Z] and P(A | Z) for ``h_mode="debiased"``: additive splines.

    A spline basis per column (then a lightly penalised logistic or ridge fit) captures the
    non-linear links between ``z``, the attribute and the predictions that a linear fit misses; the
    debiased test needs only the *product* of the two nuisance errors to be small.
    """
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import SplineTransformer, StandardScaler

    basis = [StandardScaler(), SplineTransformer(n_knots=5, degree=3, extrapolation="linear")]
    if binary:
        return make_pipeline(*basis, LogisticRegression(C=1.0, max_iter=2000))
    return make_pipeline(*basis, Ridge(alpha=1.0))


def _fit_propensity(learner: Any, z_train: np.ndarray, codes_train: np.ndarray, n_lev: int) -> Callable[[np.ndarray], np.ndarray]:
    """Fit P(A = level | Z) on the training units; return z -> (n, n_lev) probabilities."""
    from sklearn.base import clone

    present = np.unique(codes_train)
    if present.size < n_lev:
        raise ValueError("a level of a is missing from a training fold; use more units or fewer folds")
    est = clone(learner) if hasattr(learner, "get_params") else learner()
    if not hasattr(est, "predict_proba"):
        raise TypeError(f"propensity_learner must be a classifier with predict_proba, got {type(est).__name__}")
    est.fit(z_train, codes_train)
    cols = [list(est.classes_).index(j) for j in range(n_lev)]
    return lambda z_eval: np.asarray(est.predict_proba(z_eval))[:, cols]


def _dependence_of_z_on_a(z: np.ndarray, codes: np.ndarray, n_lev: int) -> tuple[float, float]:
    """Largest standardised mean difference of a column of ``z`` between groups, and its p-value.

    The p-value is the smallest Welch p-value over columns and pairs of groups, Bonferroni-adjusted.
    """
    best_smd, best_p, m = 0.0, 1.0, 0
    for j in range(n_lev):
        for k in range(j + 1, n_lev):
            zj, zk = z[codes == j], z[codes == k]
            if zj.shape[0] < 2 or zk.shape[0] < 2:
                continue
            sd = np.sqrt((zj.var(axis=0, ddof=1) + zk.var(axis=0, ddof=1)) / 2)
            ok = sd > 0
            if not ok.any():
                continue
            smd = np.abs(zj.mean(axis=0) - zk.mean(axis=0))[ok] / sd[ok]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                pv = stats.ttest_ind(zj[:, ok], zk[:, ok], equal_var=False).pvalue
            m += int(ok.sum())
            best_smd = max(best_smd, float(smd.max()))
            best_p = min(best_p, float(np.nanmin(np.atleast_1d(pv))))
    return best_smd, min(1.0, best_p * max(m, 1))


def cit_lr_test(
    y_hat: Any,
    a: Any,
    z: Any,
    *,
    learner: Any = None,
    h_learner: Any = None,
    propensity_learner: Any = None,
    g_mode: str | None = None,
    h_mode: str = "debiased",
    p_a: Mapping[Any, float] | Sequence[float] | None = None,
    n_folds: int = 2,
    cross_fit: bool = False,
    test_mask: Any = None,
    alternative: str = "two-sided",
    seed: int | np.random.Generator | None = 0,
) -> CITResult:
    """CIT-LR with a known (or estimated) representation ``z``: the regression form of Sec. 6.2.

    The units are split into ``n_folds`` folds. :math:`\\hat g(a, z) \\approx E[\\hat Y | A=a, Z=z]`
    (and the nuisance functions of ``h_mode``) are fitted on all folds but one and evaluated on the
    held-out fold, where a one-sample t-test of the per-unit terms :math:`d_i` is run (Alg. 1,
    steps 1-3). With ``cross_fit=True`` every fold is held out in turn and the test uses all units.

    The default, ``h_mode="debiased"``, stays calibrated when ``z`` depends on ``a`` (a common cause
    of the attribute and the content, e.g. a disease whose prevalence differs by group), which the
    paper's forms do not:

    .. math::

        \\hat h(z) = \\sum_a \\hat\\pi(a \\mid z)\\, \\hat g(a, z), \\qquad
        d_i = \\big(\\hat y_i - \\hat m(z_i)\\big)\\big(\\hat g(a_i, z_i) - \\hat h(z_i)\\big),

    with :math:`\\hat\\pi` a propensity model of ``a`` on ``z`` and :math:`\\hat m` a regression
    of :math:`\\hat y` on ``z``. :math:`\\hat h(z)` is then :math:`E[\\hat g(A, Z) \\mid Z = z]`, the
    population :math:`h(z) = E[\\hat Y \\mid Z = z]` when :math:`\\hat g = g`. Under H0
    (:math:`g(a, z) = h(z)`), :math:`E[d_i]` is the product of the errors of :math:`\\hat m` and
    :math:`\\hat\\pi` (a doubly robust, weighted generalised covariance measure), and the t
    statistic is scale-free in :math:`\\hat g`; under H1, :math:`E[d_i] \\to E[(g - h)^2]`, the
    functional of Theorem 4.2.

    Why the paper's forms fail when ``z`` depends on ``a``: ``h_mode="marginalize"`` weights
    :math:`\\hat g(a, \\cdot)` by :math:`P(a)` rather than :math:`P(a \\mid z)`, so
    :math:`E[d_i] = \\sum_a P(a)\\,(E[h \\hat g_a \\mid A=a] - E[h \\hat g_a])`, which is not 0 once
    the groups' ``z`` distributions differ and the fitted :math:`\\hat g_a` differ (a misspecified
    learner fitted on each group's own covariate range estimates a different function even when
    :math:`f` ignores ``a``). ``h_mode="regress"`` compares two separately fitted regressions whose
    estimation errors enter :math:`E[d_i]` at first order, so it rejects too often even when
    ``z`` is independent of ``a``. Both are kept to reproduce the paper and the authors' code, with a
    warning where they are invalid.

    Parameters
    ----------
    y_hat : array-like of shape (n,)
        Predictions of the audited model (hard labels in {0, 1} or scores).
    a : array-like of shape (n,)
        Sensitive attribute (two or more levels).
    z : array-like of shape (n, p)
        Non-sensitive content of each unit: a valid adjustment set for ``a`` and the prediction.
        It may depend on ``a`` with the default ``h_mode``; the paper's forms need it independent.
    learner : scikit-learn estimator or callable, optional
        Learns :math:`\\hat g(a, z) = E[\\hat Y | A=a, Z=z]`. Cloned for each fit (a zero-argument
        callable returning a fresh estimator also works). A classifier's ``predict_proba`` is used
        for hard labels, ``predict`` otherwise. Default: standardised logistic regression (hard
        labels) or ridge (scores).
    h_learner : estimator, optional
        Learner of :math:`E[\\hat Y | Z]`: :math:`\\hat m` for ``h_mode="debiased"`` (default:
        additive cubic splines, then logistic regression or ridge) or :math:`\\hat h` for
        ``h_mode="regress"`` (default: ``learner``).
    propensity_learner : classifier, optional
        Learns :math:`P(A = a | Z)` for ``h_mode="debiased"`` (default: additive cubic splines, then
        logistic regression).
    g_mode : {"joint", "separate"}, optional
        ``"joint"``: one learner on ``[z, onehot(a)]``; ``"separate"``: one learner per level of
        ``a`` fitted on that group's ``z`` (the authors' code). Default: ``"joint"`` with
        ``h_mode="debiased"`` (both are calibrated there; one fit on all units estimates an additive
        shift with less variance than one fit per group), ``"separate"`` with the paper's forms (as
        in the paper and the authors' code).
    h_mode : {"debiased", "marginalize", "regress"}
        ``"debiased"`` (default): the doubly robust form above, valid when ``z`` depends on ``a``.
        ``"marginalize"``: :math:`\\hat h(z) = \\sum_a P(a) \\hat g(a, z)` and
        :math:`d_i = \\hat y_i (\\hat g_i - \\hat h_i)` (Alg. 1 with an A-independent generator);
        valid only if ``z`` is independent of ``a``: a warning is issued when ``z``'s group means
        differ detectably. ``"regress"``: a separate regression of :math:`\\hat y` on ``z`` (the
        authors' code); not calibrated, always warns.
    p_a : mapping or sequence of float, optional
        :math:`P(A=a)` per level (sorted levels) for ``h_mode="marginalize"``; default: the
        prevalence in the training folds.
    n_folds : int
        Number of folds, at least 2 (2 = a 50/50 split, 5 = 80/20 as in the authors' code).
    cross_fit : bool
        Hold out every fold in turn and pool the differences (uses all units for the test).
    test_mask : array-like of bool, optional
        Explicit split instead of random folds: units where it is True form the test split,
        the others train the regressions (e.g. the audited model's own train/test split, as in the
        authors' code). Overrides ``n_folds`` and ``cross_fit``.
    alternative : {"two-sided", "greater", "less"}
        Alternative hypothesis on the mean of :math:`d_i` (an estimate of
        :math:`E[\\hat Y g] - E[\\hat Y h]`).
    seed : int, numpy.random.Generator or None
        Randomness of the fold assignment.

    Returns
    -------
    CITResult
        Per-unit ``d``, ``g``, ``h``, ``y_hat`` are on the test units (in fold order).

    Raises
    ------
    ValueError
        Length mismatch, NaN, a constant ``a``, unknown ``g_mode``/``h_mode``, too few units.

    Warns
    -----
    UserWarning
        ``h_mode="marginalize"`` with ``z`` detectably dependent on ``a``; ``h_mode="regress"``.
    """
    _check_alternative(alternative)
    check_choice(h_mode, "h_mode", ("debiased", "marginalize", "regress"))
    if g_mode is None:
        g_mode = "joint" if h_mode == "debiased" else "separate"
    check_choice(g_mode, "g_mode", ("separate", "joint"))
    n_folds = check_count(n_folds, "n_folds", minimum=2)
    _check_bool(cross_fit, "cross_fit")
    for name, lrn in (("learner", learner), ("h_learner", h_learner), ("propensity_learner", propensity_learner)):
        _check_learner(lrn, name)
    y_hat = _as_1d(y_hat, "y_hat")
    n = y_hat.size
    levels, codes = _groups(a, n)
    z = _as_2d(z, "z", n)
    if n < 2 * n_folds:
        raise ValidationError(f"need at least {2 * n_folds} units for n_folds={n_folds}, got {n}")
    binary = _is_binary(y_hat)
    learner = _default_learner(binary) if learner is None else learner
    if h_mode == "debiased":
        h_learner = _nuisance_learner(binary) if h_learner is None else h_learner
        propensity_learner = _nuisance_learner(True) if propensity_learner is None else propensity_learner
    else:
        h_learner = learner if h_learner is None else h_learner
    n_lev = levels.size
    if h_mode == "marginalize":
        smd, p_dep = _dependence_of_z_on_a(z, codes, n_lev)
        if smd > 0.1 and p_dep < 1e-3:
            warnings.warn(
                f"cit_lr_test(h_mode='marginalize') assumes z is independent of a, but z's group means differ "
                f"(largest standardised difference {smd:.2f}, Bonferroni p = {p_dep:.2g}); the test is then "
                "not calibrated. Use h_mode='debiased' (the default), which stays valid when z depends on a.",
                UserWarning,
                stacklevel=2,
            )
    elif h_mode == "regress":
        warnings.warn(
            "cit_lr_test(h_mode='regress') (the authors' code) compares two separately fitted regressions and "
            "rejects too often even when z is independent of a; use it only to reproduce that code. "
            "h_mode='debiased' (the default) is calibrated.",
            UserWarning,
            stacklevel=2,
        )
    onehot = np.eye(n_lev)[codes]
    if test_mask is not None:
        tm = np.asarray(test_mask)
        if tm.shape != (n,) or tm.dtype != bool:
            raise ValidationError(f"test_mask must be a boolean array of shape ({n},), got {tm.dtype} {tm.shape}")
        if tm.sum() < 2 or (~tm).sum() < 2:
            raise ValidationError("test_mask must leave at least 2 units on each side of the split")
        fold = (~tm).astype(int)  # fold 0 = the test units
        test_folds = [0]
    else:
        rng = as_generator(seed)
        fold = rng.permutation(np.arange(n) % n_folds)
        test_folds = range(n_folds) if cross_fit else [0]

    ys, gs, hs, ds = [], [], [], []
    for k in test_folds:
        tr, te = fold != k, fold == k
        # g evaluated at every level for each test unit: needed for h.
        n_te = int(te.sum())
        g_all = np.empty((n_te, n_lev))
        if g_mode == "separate":
            for j in range(n_lev):
                sel = tr & (codes == j)
                g_all[:, j] = _fit_learner(learner, z[sel], y_hat[sel], binary)(z[te])
        else:
            g_joint = _fit_learner(learner, np.hstack([z[tr], onehot[tr]]), y_hat[tr], binary)
            for j in range(n_lev):
                g_all[:, j] = g_joint(np.hstack([z[te], np.tile(np.eye(n_lev)[j], (n_te, 1))]))
        g = g_all[np.arange(n_te), codes[te]]
        if h_mode == "debiased":
            h = np.sum(_fit_propensity(propensity_learner, z[tr], codes[tr], n_lev)(z[te]) * g_all, axis=1)
            m = _fit_learner(h_learner, z[tr], y_hat[tr], binary)(z[te])
            d = (y_hat[te] - m) * (g - h)
        else:
            if h_mode == "marginalize":
                h = g_all @ _level_weights(p_a, levels, codes[tr])
            else:
                h = _fit_learner(h_learner, z[tr], y_hat[tr], binary)(z[te])
            d = y_hat[te] * (g - h)
        ys.append(y_hat[te])
        gs.append(g)
        hs.append(h)
        ds.append(d)
    label = f"CIT-LR (known Z, {'cross-fit' if cross_fit and test_mask is None else 'split'}, h={h_mode})"
    return cit_lr_from_estimates(
        np.concatenate(ys), np.concatenate(gs), np.concatenate(hs), alternative=alternative, method=label,
        d=np.concatenate(ds),
    )


def _level_weights(p_a: Any, levels: np.ndarray, train_codes: np.ndarray | None) -> np.ndarray:
    """P(A = level) as a vector over the sorted levels."""
    n_lev = levels.size
    if p_a is None:
        if train_codes is None:
            raise ValueError("p_a is required when no training attribute values are available")
        w = np.bincount(train_codes, minlength=n_lev).astype(float)
    elif isinstance(p_a, Mapping):
        missing = [lv for lv in levels.tolist() if lv not in p_a]
        if missing:
            raise ValidationError(f"p_a has no probability for level(s) {missing}; give one per level of a")
        w = _numeric(np.asarray([p_a[lv] for lv in levels.tolist()]), "p_a")
    else:
        if isinstance(p_a, (str, bytes)) or not hasattr(p_a, "__len__"):
            raise ValidationTypeError(f"p_a must be a mapping level -> probability or a sequence of probabilities, got {describe(p_a)}")
        w = _numeric(np.asarray(p_a), "p_a").ravel()
        if w.size != n_lev:
            raise ValidationError(f"p_a has {w.size} entries but a has {n_lev} levels {levels.tolist()}")
    if np.any(w < 0) or not np.isfinite(w).all() or w.sum() <= 0:
        raise ValidationError(f"p_a must be non-negative probabilities, got {w.tolist()}")
    return w / w.sum()


def counterfactual_predictions(
    predict: Callable[[Any], Any],
    generate: Callable[[Any, np.ndarray, np.random.Generator], Any],
    z: Any,
    levels: Sequence[Any],
    *,
    n_mc: int = 8,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Predictions of a model on generated counterfactuals, for Alg. 1's Monte-Carlo :math:`\\hat g`.

    Parameters
    ----------
    predict : callable
        The audited model: inputs -> predictions of shape (n,) (e.g. ``clf.predict``).
    generate : callable
        ``generate(z, a, rng)`` returns inputs generated from representation ``z`` under
        ``do(A = a)``; ``a`` is an array of shape (n,) holding one level. A stochastic generator
        draws its noise from ``rng``.
    z : array-like
        Representations of the n test units (any shape with n rows; passed to ``generate`` as is).
    levels : sequence
        Levels of the sensitive attribute to intervene with.
    n_mc : int
        Monte-Carlo draws per unit and level.
    seed : int, numpy.random.Generator or None
        Randomness passed to ``generate``.

    Returns
    -------
    numpy.ndarray of shape (n_mc, n, len(levels))
        ``out[j, i, l] = predict(generate(z, levels[l], rng))[i]`` for draw ``j``.
    """
    check_callable(predict, "predict")
    check_callable(generate, "generate")
    n_mc = check_count(n_mc, "n_mc")
    if isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__"):
        raise ValidationTypeError(f"levels must be a sequence of attribute values, got {describe(levels)}")
    levels = list(levels)
    if len(levels) < 2:
        raise ValidationError(f"levels must hold at least two attribute values, got {levels}")
    if _not_array(z) or not hasattr(z, "__len__"):
        raise ValidationTypeError(f"z must hold the representations of the n test units (n rows), got {describe(z)}")
    n = len(z)
    if n < 1:
        raise ValidationError("z must hold at least one unit, got 0 rows")
    rng = as_generator(seed)
    out = np.empty((n_mc, n, len(levels)))
    for j in range(n_mc):
        for j_lv, lv in enumerate(levels):
            pred = np.asarray(predict(generate(z, np.full(n, lv), rng)))
            if pred.size != n:
                raise ValidationError(f"predict(generate(z, a, rng)) must return one prediction per unit of z ({n}), got "
                                      f"shape {pred.shape} at level {lv!r}: check generate and predict")
            out[j, :, j_lv] = _numeric(pred.reshape(n), f"predict(generate(z, {lv!r}, rng))")
    return out


def cit_lr_generative(
    y_hat: Any,
    a: Any,
    cf_predictions: Any,
    *,
    levels: Sequence[Any] | None = None,
    p_a: Mapping[Any, float] | Sequence[float] | None = None,
    alternative: str = "two-sided",
) -> CITResult:
    """CIT-LR in the generator form of Algorithm 1.

    :math:`\\hat g(a, z_i)` is the Monte-Carlo mean of the model's predictions on counterfactuals
    generated from unit i's representation under :math:`do(A=a)` (lines 6 and 10 of Alg. 1), and
    :math:`\\hat h(z_i) = \\sum_a P(a)\\, \\hat g(a, z_i)` (the A-marginal; equal to Alg. 1's
    unconditional generation because :math:`Z \\perp A`).

    Parameters
    ----------
    y_hat : array-like of shape (n,)
        Predictions of the audited model on the observed test units.
    a : array-like of shape (n,)
        Observed sensitive attribute of the test units.
    cf_predictions : array-like of shape (n, L) or (n_mc, n, L)
        Predictions on generated counterfactuals, one column per level (see
        :func:`counterfactual_predictions`); Monte-Carlo draws along the first axis are averaged.
    levels : sequence, optional
        The L levels in column order; default the sorted unique values of ``a``.
    p_a : mapping or sequence of float, optional
        :math:`P(A = a)` per level; default the prevalence of the levels in ``a``.
    alternative : {"two-sided", "greater", "less"}
        Alternative hypothesis.

    Returns
    -------
    CITResult
        If the generated predictions do not depend on the level, ``d`` is identically 0 and the
        test returns t = 0, p = 1 (the exact null).
    """
    y_hat = _as_1d(y_hat, "y_hat", min_size=2)
    n = y_hat.size
    _check_alternative(alternative)
    lev_obs, _ = _groups(a, n)
    a_arr = np.asarray(a)
    if _not_array(cf_predictions):
        raise ValidationTypeError(f"cf_predictions must be an array of shape (n, L) or (n_mc, n, L), got {describe(cf_predictions)}")
    cf = np.asarray(cf_predictions)
    if cf.ndim == 2:
        cf = cf[None]
    if cf.ndim != 3 or cf.shape[1] != n or cf.shape[0] == 0:
        hint = ": transpose it (cf_predictions.T)" if cf.ndim == 3 and cf.shape[2] == n else ""
        raise ValidationError(f"cf_predictions must have shape (n, L) or (n_mc, n, L) with n = {n}, got {np.shape(cf_predictions)}{hint}")
    cf = _numeric(cf, "cf_predictions")
    if levels is not None and (isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__")):
        raise ValidationTypeError(f"levels must be a sequence of attribute values, got {describe(levels)}")
    levels = lev_obs if levels is None else np.asarray(list(levels))
    if levels.size != cf.shape[2]:
        raise ValidationError(f"cf_predictions has {cf.shape[2]} level columns but levels has {levels.size} entries")
    col = {lv: j for j, lv in enumerate(levels.tolist())}
    unknown = [lv for lv in np.unique(a_arr).tolist() if lv not in col]
    if unknown:
        raise ValidationError(f"a takes value(s) {unknown} that are not in levels {levels.tolist()}")
    codes = np.array([col[lv] for lv in a_arr.tolist()])
    g_all = cf.mean(axis=0)
    if p_a is None:
        w = np.bincount(codes, minlength=levels.size).astype(float)
        w = w / w.sum()
    else:
        w = _level_weights(p_a, levels, None)
    g = g_all[np.arange(n), codes]
    h = g_all @ w
    return cit_lr_from_estimates(y_hat, g, h, alternative=alternative, method="CIT-LR (generator)")


# --------------------------------------------------------------------------------------------
# baselines: demographic parity and equal opportunity
# --------------------------------------------------------------------------------------------
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
    p, logp = _t_pvalue(t, df, alternative)
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
    _check_alternative(alternative)
    check_choice(method, "method", ("welch", "paper_bootstrap"))
    n_bootstrap = check_count(n_bootstrap, "n_bootstrap", minimum=2)
    _check_bool(binary, "binary", allow_none=True)
    is_bin = _is_binary(y_hat)
    if binary:
        _check_binary(y_hat, "y_hat")
    n_lev = levels.size
    counts = np.bincount(codes, minlength=n_lev)
    if np.any(counts < 2):
        small = [levels[j].item() if hasattr(levels[j], "item") else levels[j] for j in np.where(counts < 2)[0]]
        raise ValidationError(f"every group needs at least 2 units for a {criterion} test; group(s) {small} have fewer")
    sums = np.bincount(codes, weights=y_hat, minlength=n_lev)
    rates = sums / counts
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
    y_hat = _as_1d(y_hat, "y_hat")
    levels, codes = _groups(a, y_hat.size)
    return _parity_test(
        y_hat, codes, levels, criterion="demographic parity", method=method, alternative=alternative,
        n_bootstrap=n_bootstrap, seed=seed, binary=binary,
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
    y_hat = _as_1d(y_hat, "y_hat")
    n = y_hat.size
    if _not_array(y):
        raise ValidationTypeError(f"y must be a 1-d array-like with one label per unit, got {describe(y)}")
    y_arr = np.asarray(y)
    if y_arr.ndim != 1 or y_arr.shape[0] != n:
        raise ValidationError(f"y must be one-dimensional with one label per unit ({n}), got shape {y_arr.shape}")
    if y_arr.dtype.kind in "fc":
        check_finite(y_arr, "y")
    _groups(a, n)  # validates a on all units first (length, constant)
    keep = y_arr == y_value
    if keep.sum() < 4:
        raise ValidationError(f"only {int(keep.sum())} units have y == {y_value!r}; equal opportunity needs at least 4")
    a_sub = np.asarray(a)[keep]
    levels, codes = _groups(a_sub, int(keep.sum()), name=f"a among units with y == {y_value!r}")
    return _parity_test(
        y_hat[keep], codes, levels, criterion="equal opportunity", method=method, alternative=alternative,
        n_bootstrap=n_bootstrap, seed=seed, binary=binary,
    )


# --------------------------------------------------------------------------------------------
# expected counterfactual accuracy
# --------------------------------------------------------------------------------------------
def _predict(model: Any, x: Any) -> np.ndarray:
    if model is None:
        return np.asarray(x)
    if hasattr(model, "predict"):
        return np.asarray(model.predict(x))
    if callable(model):
        return np.asarray(model(x))
    raise TypeError(f"model must have a predict method, be callable, or be None (x are predictions); got {type(model).__name__}")


def _wilson(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n == 0:
        return (float("nan"), float("nan"))
    phat = k / n
    den = 1 + z**2 / n
    mid = (phat + z**2 / (2 * n)) / den
    half = z * math.sqrt(phat * (1 - phat) / n + z**2 / (4 * n**2)) / den
    return (max(0.0, mid - half), min(1.0, mid + half))


def expected_counterfactual_accuracy(
    model: Any,
    x: Any,
    x_cf: Any,
    *,
    a: Any = None,
    levels: Sequence[Any] | None = None,
    tol: float = 0.0,
) -> ECAResult:
    """Expected counterfactual accuracy: the share of predictions unchanged by ``do(A = a')``.

    The operational form of eqs. (7)-(8) (and of the authors' code): ECA = mean over units and
    target levels of :math:`1[|f(x_i) - f(x_i^{cf})| \\le tol]`, with ``tol = 0`` for hard labels.

    Parameters
    ----------
    model : estimator, callable or None
        Object with ``predict``, or a callable ``x -> predictions``. ``None`` means ``x`` and
        ``x_cf`` already are predictions.
    x : array-like
        Factual inputs (n rows).
    x_cf : array-like or sequence of array-likes
        Counterfactual inputs with the same exogenous noise: one array like ``x`` (binary ``A``,
        flipped), or one array per target level (a list, or an array with a leading level axis
        when ``levels`` is given).
    a : array-like of shape (n,), optional
        Observed attribute. With several target levels, pairs whose target equals the observed
        level are excluded (the intervention would be the null one).
    levels : sequence, optional
        Target level of each entry of ``x_cf`` (required with ``a`` for several levels).
    tol : float
        Two predictions are equal when they differ by at most ``tol``. Must be > 0 for
        continuous scores.

    Returns
    -------
    ECAResult
    """
    tol = check_real(tol, "tol", low=0.0)
    if model is not None and not hasattr(model, "predict") and not callable(model):
        raise ValidationTypeError(f"model must have a predict method, be callable, or be None (x are predictions); got {type(model).__name__}")
    if levels is not None and (isinstance(levels, (str, bytes)) or not hasattr(levels, "__len__")):
        raise ValidationTypeError(f"levels must be a sequence of target levels, got {describe(levels)}")
    pred = _as_1d(_predict(model, x), "predictions on x")
    n = pred.size
    if isinstance(x_cf, (list, tuple)):
        cf_list = list(x_cf)
    elif levels is not None:
        cf_list = list(np.asarray(x_cf)) if not isinstance(x_cf, np.ndarray) or x_cf.shape[0] == len(levels) else [x_cf]
    else:
        cf_list = [x_cf]
    if levels is not None and len(levels) != len(cf_list):
        raise ValidationError(f"levels has {len(levels)} entries but x_cf holds {len(cf_list)} counterfactual sets")
    if not cf_list:
        raise ValidationError("x_cf must hold at least one counterfactual set, got an empty sequence")
    preds_cf = [_as_1d(_predict(model, c), f"predictions on x_cf[{j}]", n, n_name="the predictions on x")
                for j, c in enumerate(cf_list)]
    all_pred = np.concatenate([pred] + preds_cf)
    if tol == 0 and not np.allclose(all_pred, np.round(all_pred)):
        raise ValidationError(
            "predictions are continuous scores: pass tol > 0, or hard labels (e.g. model.predict) for ECA"
        )
    agree = np.stack([np.abs(pc - pred) <= tol for pc in preds_cf])  # (L, n)
    mask = np.ones_like(agree, dtype=bool)
    if a is not None and len(cf_list) > 1:
        if levels is None:
            raise ValidationError("pass levels (the target level of each x_cf entry) together with a")
        a_arr = np.asarray(a)
        if a_arr.shape != (n,):
            raise ValidationError(f"a must have shape ({n},), got {a_arr.shape}")
        mask = np.stack([a_arr != lv for lv in levels])
    agree_flat = agree[mask].astype(float)
    if agree_flat.size == 0:
        raise ValidationError("no (unit, target level) pair is left after excluding the observed levels")
    k = float(agree_flat.sum())
    return ECAResult(eca=k / agree_flat.size, n=int(agree_flat.size), ci=_wilson(k, agree_flat.size), agree=agree_flat, tol=float(tol))


# --------------------------------------------------------------------------------------------
# alignment of p-values with ECA (Figs. 2-4)
# --------------------------------------------------------------------------------------------
def _log10_pvalues(log10_p: Any, n: int) -> np.ndarray:
    """log10 p-values, one per classifier: ``-inf`` (an underflowed p) is allowed, NaN warns, above 0 is refused."""
    y = _as_1d(log10_p, "log10_p", n, numeric=False, n_name="eca")
    if y.dtype != bool and y.dtype.kind not in "iuf":
        raise ValidationTypeError(f"log10_p must be numeric, got dtype {y.dtype}")
    y = y.astype(float)
    if np.any(y > 1e-6):  # NaN compares False; a rounding error above 0 is clipped to 0 below
        raise ValidationError(f"log10_p must be <= 0 (p-values <= 1), got values up to {np.nanmax(y):g}: pass log10(p), not p or -log10(p)")
    n_nan = int(np.isnan(y).sum())
    if n_nan:
        warn(f"log10_p holds {n_nan} NaN value(s); those classifiers are left out", stacklevel=4)
    return y


def alignment_stats(eca: Any, log10_p: Any, *, floor: float = -300.0) -> dict[str, float]:
    """Pearson r between ECA and log10 p, and the residual spread around the fitted line.

    Parameters
    ----------
    eca : array-like
        ECA of each classifier.
    log10_p : array-like
        log10 p-value of each classifier (``-inf`` is clipped at ``floor``).
    floor : float
        Lower clip for log10 p.

    Returns
    -------
    dict
        ``r`` (Pearson), ``slope``, ``intercept``, ``resid_sd`` (ddof 2), ``n``; NaN where the
        points are constant in either coordinate.
    """
    x = _as_1d(eca, "eca")
    floor = check_real(floor, "floor", high=0.0)
    y = np.clip(_log10_pvalues(log10_p, x.size), floor, 0.0)
    ok = np.isfinite(y)
    x, y = x[ok], y[ok]
    out = {"r": float("nan"), "slope": float("nan"), "intercept": float("nan"), "resid_sd": float("nan"), "n": int(x.size)}
    if x.size > 2 and np.ptp(x) > 0 and np.ptp(y) > 0:
        slope, intercept = np.polyfit(x, y, 1)
        resid = y - (slope * x + intercept)
        out.update(r=float(np.corrcoef(x, y)[0, 1]), slope=float(slope), intercept=float(intercept), resid_sd=float(resid.std(ddof=2) if x.size > 3 else np.nan))
    return out


def plot_pvalue_vs_eca(
    eca: Any,
    log10_p: Any,
    *,
    alpha: float = 0.05,
    band_k: float = 1.5,
    ylim: tuple[float, float] | None = (-30.0, 0.5),
    color: str = "#0072B2",
    title: str | None = None,
    ax=None,
):
    """One panel of Fig. 2: log10 p against ECA with the fitted line, a ±``band_k`` sd band and α.

    Parameters
    ----------
    eca, log10_p : array-like
        One point per classifier.
    alpha : float
        Significance level drawn as a red dashed line.
    band_k : float
        Half-width of the band in residual standard deviations (1.5 in the authors' code).
    ylim : tuple of float, optional
        y-limits (the authors' plots use (-30, 0)); points below are drawn at the lower limit.
    color : str
        Colour of points and line.
    title : str, optional
        Panel title; Pearson r and residual sd are appended.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    alpha = check_alpha(alpha)
    band_k = check_real(band_k, "band_k", low=0.0)
    if ylim is not None:
        if isinstance(ylim, (str, bytes)) or not hasattr(ylim, "__len__") or len(ylim) != 2:
            raise ValidationTypeError(f"ylim must be None or a pair (low, high), got {describe(ylim)}")
        if check_real(ylim[0], "ylim[0]") >= check_real(ylim[1], "ylim[1]"):
            raise ValidationError(f"ylim must be (low, high) with low < high, got {ylim!r}")
    x = _as_1d(eca, "eca")
    y = np.clip(_log10_pvalues(log10_p, x.size), -300.0, 0.0)
    ax = plt.gca() if check_axes(ax) is None else ax
    st = alignment_stats(x, y)
    y_show = y if ylim is None else np.maximum(y, ylim[0])
    ax.scatter(x, y_show, s=14, alpha=0.75, color=color, edgecolor="none")
    if np.isfinite(st["r"]):
        grid = np.linspace(x.min(), x.max(), 50)
        line = st["slope"] * grid + st["intercept"]
        ax.plot(grid, line, color=color, lw=1.3)
        if np.isfinite(st["resid_sd"]):
            ax.fill_between(grid, line - band_k * st["resid_sd"], line + band_k * st["resid_sd"], color=color, alpha=0.15, lw=0)
    ax.axhline(math.log10(alpha), color="#D55E00", ls="--", lw=1)
    if ylim is not None:
        ax.set_ylim(*ylim)
    label = f"r = {st['r']:.2f}, sd = {st['resid_sd']:.2g}"
    ax.set_title(label if title is None else f"{title}\n{label}", fontsize=9)
    ax.set_xlabel("ECA")
    ax.set_ylabel(r"$\log_{10} p$")
    return ax


def rejection_summary(pvalues: Any, alpha: float = 0.05, level: float = 0.99) -> dict[str, Any]:
    """Rejection rate of replicated tests with intervals for calibration and power studies.

    Parameters
    ----------
    pvalues : array-like
        P-values of independent replications.
    alpha : float
        Significance level.
    level : float
        Coverage of the intervals.

    Returns
    -------
    dict
        ``rate`` (share of p < alpha), ``k``, ``n``, ``ci`` (Wilson interval of the rate),
        ``null_interval`` (central binomial interval of the rate if the true size were ``alpha``:
        a calibrated test falls inside it with probability >= ``level``), ``calibrated``
        (rate inside ``null_interval``) and ``ks_pvalue`` (Kolmogorov-Smirnov test of uniformity).
    """
    p = _as_1d(pvalues, "pvalues")
    if np.any((p < 0) | (p > 1)):
        raise ValidationError(f"pvalues must be numbers in [0, 1], got values in [{p.min():g}, {p.max():g}]")
    alpha = check_alpha(alpha)
    level = check_probability(level, "level")
    n = p.size
    k = int(np.sum(p < alpha))
    z = float(stats.norm.ppf(0.5 + level / 2))
    lo, hi = stats.binom.ppf([(1 - level) / 2, (1 + level) / 2], n, alpha)
    return {
        "rate": k / n,
        "k": k,
        "n": n,
        "ci": _wilson(k, n, z),
        "null_interval": (float(lo) / n, float(hi) / n),
        "calibrated": bool(lo <= k <= hi),
        "ks_pvalue": float(stats.kstest(p, "uniform").pvalue),
    }
