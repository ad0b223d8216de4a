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

This module holds CIT-LR (its result, the regression and generator forms, the counterfactual predictions
of the generator form); the other parts live in modules of their own and stay importable from here:
:mod:`cflib.stats.student_t` (:func:`paired_t_test`), :mod:`cflib.stats.group_parity` (the DP and EO
baselines), :mod:`cflib.stats.counterfactual_accuracy` (ECA), :mod:`cflib.stats.replications`
(:func:`alignment_stats`, :func:`plot_pvalue_vs_eca`, :func:`rejection_summary`) and
:mod:`cflib.stats.unit_arrays` (the checks of the per-unit arrays).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
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
    check_callable,
    check_choice,
    check_count,
    describe,
)

from .counterfactual_accuracy import ECAResult as ECAResult
from .counterfactual_accuracy import (
    expected_counterfactual_accuracy as expected_counterfactual_accuracy,
)
from .group_parity import GroupParityResult as GroupParityResult
from .group_parity import demographic_parity_test as demographic_parity_test
from .group_parity import equal_opportunity_test as equal_opportunity_test
from .replications import alignment_stats as alignment_stats
from .replications import plot_pvalue_vs_eca as plot_pvalue_vs_eca
from .replications import rejection_summary as rejection_summary
from .student_t import paired_t_test
from .unit_arrays import (
    as_numeric,
    attribute_levels,
    check_alternative,
    check_bool,
    is_binary,
    not_array,
    per_unit_rows,
    per_unit_values,
)

# paired_t_test, GroupParityResult, ECAResult, the DP/EO tests, ECA and the summaries over replications
# stay importable from here (cflib.stats.invariance.demographic_parity_test) but are listed in their own
# module's __all__ only, so that cflib.stats exports each name once.
__all__ = [
    "CITResult",
    "cit_lr_from_estimates",
    "cit_lr_test",
    "cit_lr_generative",
    "counterfactual_predictions",
    "ci_functional",
]


# --------------------------------------------------------------------------------------------
# the result of CIT-LR
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CITResult(BaseTestResult):
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

    def plot(self, ax: Any = None) -> Any:
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


# --------------------------------------------------------------------------------------------
# CIT-LR
# --------------------------------------------------------------------------------------------
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
    y_hat = per_unit_values(y_hat, "y_hat")
    g = per_unit_values(g, "g", y_hat.size)
    h = per_unit_values(h, "h", y_hat.size)
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
    check_alternative(alternative)
    if not isinstance(method, str):
        raise ValidationTypeError(f"method must be a string (a label stored in the result), got {describe(method)}")
    y_hat = per_unit_values(y_hat, "y_hat", min_size=2)
    g = per_unit_values(g, "g", y_hat.size)
    h = per_unit_values(h, "h", y_hat.size)
    d = y_hat * g - y_hat * h if d is None else per_unit_values(d, "d", y_hat.size)
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


def _check_learner(value: Any, name: str) -> Any:
    """``None``, a scikit-learn estimator (``get_params``) or a zero-argument callable returning one."""
    if value is not None and not hasattr(value, "get_params") and not callable(value):
        raise ValidationTypeError(
            f"{name} must be a scikit-learn estimator or a callable returning one, got {describe(value)}"
        )
    return value


def _default_learner(binary: bool) -> Any:  # a scikit-learn pipeline
    from sklearn.linear_model import LogisticRegression, Ridge
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if binary:
        return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000))
    return make_pipeline(StandardScaler(), Ridge(alpha=1.0))


def _fit_learner(
    learner: Any, x_train: np.ndarray, y_train: np.ndarray, binary: bool
) -> Callable[[np.ndarray], np.ndarray]:
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


def _nuisance_learner(binary: bool) -> Any:  # a scikit-learn pipeline
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


def _fit_propensity(
    learner: Any, z_train: np.ndarray, codes_train: np.ndarray, n_lev: int
) -> Callable[[np.ndarray], np.ndarray]:
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
    g_mode, n_folds = _check_cit_options(
        alternative, h_mode, g_mode, n_folds, cross_fit, learner, h_learner, propensity_learner
    )
    y_hat = per_unit_values(y_hat, "y_hat")
    n = y_hat.size
    levels, codes = attribute_levels(a, n)
    z = per_unit_rows(z, "z", n)
    if n < 2 * n_folds:
        raise ValidationError(f"need at least {2 * n_folds} units for n_folds={n_folds}, got {n}")
    data = _cit_data(y_hat, codes, levels, z, learner, h_learner, propensity_learner, g_mode, h_mode, p_a)
    _warn_where_uncalibrated(data)
    fold, test_folds = _cit_folds(test_mask, n, n_folds, cross_fit, seed)
    ys, gs, hs, ds = zip(*(_fold_terms(data, fold != k, fold == k) for k in test_folds), strict=True)
    label = f"CIT-LR (known Z, {'cross-fit' if cross_fit and test_mask is None else 'split'}, h={h_mode})"
    return cit_lr_from_estimates(
        np.concatenate(ys),
        np.concatenate(gs),
        np.concatenate(hs),
        alternative=alternative,
        method=label,
        d=np.concatenate(ds),
    )


# --------------------------------------------------------------------------------------------
# the stages of cit_lr_test
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class _CITData:
    """The checked inputs of :func:`cit_lr_test` and the learners and forms every fold uses."""

    y_hat: np.ndarray
    codes: np.ndarray
    levels: np.ndarray
    z: np.ndarray
    onehot: np.ndarray
    binary: bool
    learner: Any
    h_learner: Any
    propensity_learner: Any
    g_mode: str
    h_mode: str
    p_a: Any

    @property
    def n_lev(self) -> int:
        """Number of levels of the attribute."""
        return self.levels.size


def _check_cit_options(
    alternative: str,
    h_mode: str,
    g_mode: str | None,
    n_folds: int,
    cross_fit: bool,
    learner: Any,
    h_learner: Any,
    propensity_learner: Any,
) -> tuple[str, int]:
    """Check the options of :func:`cit_lr_test`; return ``g_mode`` (its default follows ``h_mode``) and ``n_folds``."""
    check_alternative(alternative)
    check_choice(h_mode, "h_mode", ("debiased", "marginalize", "regress"))
    if g_mode is None:
        g_mode = "joint" if h_mode == "debiased" else "separate"
    check_choice(g_mode, "g_mode", ("separate", "joint"))
    n_folds = check_count(n_folds, "n_folds", minimum=2)
    check_bool(cross_fit, "cross_fit")
    for name, lrn in (("learner", learner), ("h_learner", h_learner), ("propensity_learner", propensity_learner)):
        _check_learner(lrn, name)
    return g_mode, n_folds


def _cit_data(
    y_hat: np.ndarray,
    codes: np.ndarray,
    levels: np.ndarray,
    z: np.ndarray,
    learner: Any,
    h_learner: Any,
    propensity_learner: Any,
    g_mode: str,
    h_mode: str,
    p_a: Any,
) -> _CITData:
    """The inputs with the default learners filled in: splines for the nuisances of the debiased form."""
    binary = is_binary(y_hat)
    learner = _default_learner(binary) if learner is None else learner
    if h_mode == "debiased":
        h_learner = _nuisance_learner(binary) if h_learner is None else h_learner
        propensity_learner = _nuisance_learner(True) if propensity_learner is None else propensity_learner
    else:
        h_learner = learner if h_learner is None else h_learner
    onehot = np.eye(levels.size)[codes]
    return _CITData(
        y_hat, codes, levels, z, onehot, binary, learner, h_learner, propensity_learner, g_mode, h_mode, p_a
    )


def _warn_where_uncalibrated(data: _CITData) -> None:
    """Warn for the paper's forms where they are not calibrated (``z`` visibly depends on ``a``; ``regress`` always)."""
    if data.h_mode == "marginalize":
        smd, p_dep = _dependence_of_z_on_a(data.z, data.codes, data.n_lev)
        if smd > 0.1 and p_dep < 1e-3:
            warnings.warn(
                f"cit_lr_test(h_mode='marginalize') assumes z is independent of a, but z's group means differ "
                f"(largest standardised difference {smd:.2f}, Bonferroni p = {p_dep:.2g}); the test is then "
                "not calibrated. Use h_mode='debiased' (the default), which stays valid when z depends on a.",
                UserWarning,
                stacklevel=3,
            )
    elif data.h_mode == "regress":
        warnings.warn(
            "cit_lr_test(h_mode='regress') (the authors' code) compares two separately fitted regressions and "
            "rejects too often even when z is independent of a; use it only to reproduce that code. "
            "h_mode='debiased' (the default) is calibrated.",
            UserWarning,
            stacklevel=3,
        )


def _cit_folds(test_mask: Any, n: int, n_folds: int, cross_fit: bool, seed: Any) -> tuple[np.ndarray, Sequence[int]]:
    """Each unit's fold, and the folds held out for the test (fold 0 = the test units of an explicit ``test_mask``)."""
    if test_mask is not None:
        tm = np.asarray(test_mask)
        if tm.shape != (n,) or tm.dtype != bool:
            raise ValidationError(f"test_mask must be a boolean array of shape ({n},), got {tm.dtype} {tm.shape}")
        if tm.sum() < 2 or (~tm).sum() < 2:
            raise ValidationError("test_mask must leave at least 2 units on each side of the split")
        fold = (~tm).astype(int)  # fold 0 = the test units
        test_folds: Sequence[int] = [0]
    else:
        rng = as_generator(seed)
        fold = rng.permutation(np.arange(n) % n_folds)
        test_folds = range(n_folds) if cross_fit else [0]
    return fold, test_folds


def _g_at_every_level(data: _CITData, tr: np.ndarray, te: np.ndarray) -> np.ndarray:
    """:math:`\\hat g(a, z)` fitted on the training units, at every level ``a`` for each test unit: ``(n_te, n_lev)``."""
    y_hat, z, codes, n_lev = data.y_hat, data.z, data.codes, data.n_lev
    # g evaluated at every level for each test unit: needed for h.
    n_te = int(te.sum())
    g_all = np.empty((n_te, n_lev))
    if data.g_mode == "separate":
        for j in range(n_lev):
            sel = tr & (codes == j)
            g_all[:, j] = _fit_learner(data.learner, z[sel], y_hat[sel], data.binary)(z[te])
    else:
        g_joint = _fit_learner(data.learner, np.hstack([z[tr], data.onehot[tr]]), y_hat[tr], data.binary)
        for j in range(n_lev):
            g_all[:, j] = g_joint(np.hstack([z[te], np.tile(np.eye(n_lev)[j], (n_te, 1))]))
    return g_all


def _fold_terms(
    data: _CITData, tr: np.ndarray, te: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(y_hat, g, h, d)`` on the test units of one fold, the nuisances fitted on its training units."""
    y_hat, z, codes = data.y_hat, data.z, data.codes
    g_all = _g_at_every_level(data, tr, te)
    g = g_all[np.arange(g_all.shape[0]), codes[te]]
    if data.h_mode == "debiased":
        h = np.sum(_fit_propensity(data.propensity_learner, z[tr], codes[tr], data.n_lev)(z[te]) * g_all, axis=1)
        m = _fit_learner(data.h_learner, z[tr], y_hat[tr], data.binary)(z[te])
        d = (y_hat[te] - m) * (g - h)
    else:
        if data.h_mode == "marginalize":
            h = g_all @ _level_weights(data.p_a, data.levels, codes[tr])
        else:
            h = _fit_learner(data.h_learner, z[tr], y_hat[tr], data.binary)(z[te])
        d = y_hat[te] * (g - h)
    return y_hat[te], g, h, d


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
        w = as_numeric(np.asarray([p_a[lv] for lv in levels.tolist()]), "p_a")
    else:
        if isinstance(p_a, (str, bytes)) or not hasattr(p_a, "__len__"):
            raise ValidationTypeError(
                f"p_a must be a mapping level -> probability or a sequence of probabilities, got {describe(p_a)}"
            )
        w = as_numeric(np.asarray(p_a), "p_a").ravel()
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
    if not_array(z) or not hasattr(z, "__len__"):
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
                raise ValidationError(
                    f"predict(generate(z, a, rng)) must return one prediction per unit of z ({n}), got "
                    f"shape {pred.shape} at level {lv!r}: check generate and predict"
                )
            out[j, :, j_lv] = as_numeric(pred.reshape(n), f"predict(generate(z, {lv!r}, rng))")
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
    y_hat = per_unit_values(y_hat, "y_hat", min_size=2)
    n = y_hat.size
    check_alternative(alternative)
    lev_obs, _ = attribute_levels(a, n)
    a_arr = np.asarray(a)
    if not_array(cf_predictions):
        raise ValidationTypeError(
            f"cf_predictions must be an array of shape (n, L) or (n_mc, n, L), got {describe(cf_predictions)}"
        )
    cf = np.asarray(cf_predictions)
    if cf.ndim == 2:
        cf = cf[None]
    if cf.ndim != 3 or cf.shape[1] != n or cf.shape[0] == 0:
        hint = ": transpose it (cf_predictions.T)" if cf.ndim == 3 and cf.shape[2] == n else ""
        raise ValidationError(
            f"cf_predictions must have shape (n, L) or (n_mc, n, L) with n = {n}, got {np.shape(cf_predictions)}{hint}"
        )
    cf = as_numeric(cf, "cf_predictions")
    if levels is not None and (isinstance(levels, (str, bytes)) or not hasattr(levels, "__iter__")):
        raise ValidationTypeError(f"levels must be a sequence of attribute values, got {describe(levels)}")
    lev = lev_obs if levels is None else np.asarray(list(levels))
    if lev.size != cf.shape[2]:
        raise ValidationError(f"cf_predictions has {cf.shape[2]} level columns but levels has {lev.size} entries")
    col = {lv: j for j, lv in enumerate(lev.tolist())}
    unknown = [lv for lv in np.unique(a_arr).tolist() if lv not in col]
    if unknown:
        raise ValidationError(f"a takes value(s) {unknown} that are not in levels {lev.tolist()}")
    codes = np.array([col[lv] for lv in a_arr.tolist()])
    g_all = cf.mean(axis=0)
    if p_a is None:
        w = np.bincount(codes, minlength=lev.size).astype(float)
        w = w / w.sum()
    else:
        w = _level_weights(p_a, lev, None)
    g = g_all[np.arange(n), codes]
    h = g_all @ w
    return cit_lr_from_estimates(y_hat, g, h, alternative=alternative, method="CIT-LR (generator)")
