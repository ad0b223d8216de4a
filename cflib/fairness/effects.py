"""Cross-fitted doubly robust estimators of TV, Ctf-DE, Ctf-IE and Ctf-SE.

Implements the counterfactual measures of Plecko & Bareinboim (arXiv 2306.05059), Def. 3 (Eqs. 5-7),
their identification under the standard fairness model (Prop. 4, App. B, Eqs. 54-56 with the sign of
Eq. 56 corrected to match Eq. 7) and the decomposition of the statistical parity measure (Prop. 3,
Eq. 8)::

    TV = Ctf-DE_{x0,x1}(y | x0) - Ctf-IE_{x1,x0}(y | x0) - Ctf-SE_{x1,x0}(y).

The paper does not specify an estimator (its script used the R package faircause). Here, with
``mu_1(z, w) = E[Y | x1, z, w]``, ``m_1(z) = E[Y | x1, z]`` and propensities ``p(x | .)``, the two
counterfactual means the measures need at ``x = x0`` are estimated by ATT-type augmented inverse
probability weighting (AIPW), cross-fitted over ``n_folds`` folds:

* ``A = E[Y_{x1, W_{x0}} | x0]`` by ``(1/n0) sum_i [1{x0} mu_1 + 1{x1} p(x0|z,w)/p(x1|z,w) (Y - mu_1)]``;
* ``B = E[Y_{x1} | x0]`` by ``(1/n0) sum_i [1{x0} m_1 + 1{x1} p(x0|z)/p(x1|z) (Y - m_1)]``.

Then ``DE = A - Ybar0``, ``IE = A - B``, ``SE = B - Ybar1`` and ``TV = Ybar1 - Ybar0``, so the
decomposition holds exactly (to rounding) in every sample and every bootstrap replicate. Propensities
are clipped, never trimmed: dropping units would change the estimand and break the identity.
Standard errors come from the influence functions; the bootstrap resamples units with the cross-fitted
nuisances held fixed (the inner bootstrap of faircause), vectorised as one matrix product.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, overload

import numpy as np
import pandas as pd
from scipy import stats

from ..results import Estimate, Interval, TestResult
from ..runtime import as_generator
from ..validation import (
    check_callable,
    check_columns,
    check_count,
    check_probability,
    check_real,
    warn,
)
from .sfm import SFMArrays, StandardFairnessModel

__all__ = [
    "MEASURES",
    "EffectEstimates",
    "ctf_effects",
    "make_learner",
    "thread_cap",
    "whitebox_direct_effect",
    "identify_discrete",
]

#: Rows of every result: the total variation and the three pathway measures.
MEASURES = ("TV", "DE", "IE", "SE")

_LEARNERS = ("linear", "hgb", "rf")

#: Minimum-sample rules of :func:`ctf_effects`. Folds are stratified by ``x``, so with at least
#: ``MIN_UNITS_PER_FOLD`` units of each group per fold every training set holds both groups (the
#: propensity fits need both classes) and at least two ``x1`` units (the outcome regressions), and
#: each group's standard deviation in the influence function is defined: below that, an error.
MIN_UNITS_PER_FOLD = 2
#: Below ``RELIABLE_UNITS`` units in the smaller group (or ``RELIABLE_UNITS_PER_FOLD`` per fold) the
#: estimates are computed but a :class:`cflib.CflibWarning` says the normal interval (and its p-value)
#: cannot be trusted: the influence-function standard error is then itself noisy and the learners are
#: fitted on a few dozen units per fold. Measured on a linear SFM (linear learners, 2 folds, 300
#: replications per size): the 95% intervals of DE/IE/SE covered 0.89-0.93 with 8-23 units in the
#: smaller group and 0.93-0.94 with 47.
RELIABLE_UNITS = 50
RELIABLE_UNITS_PER_FOLD = 10


@contextmanager
def thread_cap(n_threads: int | None = 1) -> Iterator[None]:
    """Cap BLAS and OpenMP threads, loading scikit-learn's OpenMP runtime first so the cap reaches it.

    ``threadpoolctl.threadpool_limits`` only limits libraries already loaded when it is entered. In a
    fresh process scikit-learn's OpenMP runtime (used by gradient boosting) is loaded later, by the
    first fit, and would run with every core: on a small shared machine that made the first call of
    :func:`ctf_effects` 15 to 150 times slower than the next ones.

    Parameters
    ----------
    n_threads : int or None
        Thread limit; ``None`` leaves the libraries' defaults and does nothing.

    Yields
    ------
    None
    """
    if n_threads is None:
        yield
        return
    if not isinstance(n_threads, (int, np.integer)) or isinstance(n_threads, bool) or n_threads < 1:
        raise ValueError(f"n_threads must be a positive integer or None, got {n_threads!r}")
    import sklearn.utils._openmp_helpers  # noqa: F401  (loads the OpenMP runtime so the cap below applies)

    with _controller().limit(limits=int(n_threads)):
        yield


# threadpoolctl finds the loaded BLAS and OpenMP libraries by scanning the process's shared objects, which
# took about a fifth of a small cross-fitted fit when done on every call; the scan is kept until a new module
# is imported (the way a new library gets loaded).
_CONTROLLER: dict[str, Any] = {}


def _controller() -> Any:
    """The process's ``threadpoolctl.ThreadpoolController``, made again whenever ``sys.modules`` has grown."""
    from threadpoolctl import ThreadpoolController

    if _CONTROLLER.get("modules") != len(sys.modules):
        _CONTROLLER["controller"] = ThreadpoolController()
        _CONTROLLER["modules"] = len(sys.modules)
    return _CONTROLLER["controller"]


def make_learner(spec: Any, kind: str, seed: int | None = None) -> Any:
    """Build a scikit-learn learner from a name or clone a given estimator.

    Parameters
    ----------
    spec : {"linear", "hgb", "rf"} or scikit-learn estimator
        ``"linear"``: least squares / logistic regression; ``"hgb"``: histogram gradient boosting;
        ``"rf"``: random forest (100 trees, leaves of at least 5 units). An estimator is cloned.
    kind : {"regressor", "classifier"}
        What the learner is used for (outcome regression or propensity).
    seed : int, optional
        ``random_state`` for the named learners.

    Returns
    -------
    sklearn.base.BaseEstimator
        An unfitted estimator.

    Raises
    ------
    TypeError
        ``spec`` has no ``fit`` method, or a classifier lacks ``predict_proba``.
    ValueError
        Unknown name or kind.
    """
    from sklearn.base import clone

    if kind not in ("regressor", "classifier"):
        raise ValueError(f"kind must be 'regressor' or 'classifier', got {kind!r}")
    if isinstance(spec, str):
        if spec not in _LEARNERS:
            raise ValueError(f"learner must be one of {_LEARNERS} or a scikit-learn estimator, got {spec!r}")
        if spec == "linear":
            from sklearn.linear_model import LinearRegression, LogisticRegression

            return LinearRegression() if kind == "regressor" else LogisticRegression(max_iter=2000)
        if spec == "hgb":
            from sklearn.ensemble import (
                HistGradientBoostingClassifier,
                HistGradientBoostingRegressor,
            )

            cls = HistGradientBoostingRegressor if kind == "regressor" else HistGradientBoostingClassifier
            # Early stopping on a 10% validation split keeps the fits fast and the propensities from
            # overfitting into extreme inverse weights.
            return cls(
                max_iter=200,
                learning_rate=0.1,
                min_samples_leaf=20,
                early_stopping=True,
                validation_fraction=0.1,
                n_iter_no_change=5,
                random_state=seed,
            )
        from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor

        cls = RandomForestRegressor if kind == "regressor" else RandomForestClassifier
        return cls(n_estimators=100, min_samples_leaf=5, n_jobs=1, random_state=seed)
    if not hasattr(spec, "fit"):
        raise TypeError(f"learner must have a fit method (a scikit-learn estimator), got {type(spec).__name__}")
    if kind == "classifier" and not hasattr(spec, "predict_proba"):
        raise TypeError(f"propensity_learner must have predict_proba, {type(spec).__name__} has not")
    if kind == "regressor" and not hasattr(spec, "predict"):
        raise TypeError(f"learner must have a predict method, {type(spec).__name__} has not")
    return clone(spec)


@dataclass(frozen=True)
class EffectEstimates:
    """Estimates of TV, Ctf-DE, Ctf-IE and Ctf-SE for one outcome.

    Attributes
    ----------
    outcome : str
        The outcome (or predictor) column.
    estimate, se, pvalue : dict
        Measure -> point estimate, standard error, two-sided p-value of ``measure = 0``.
    ci : dict
        Measure -> :class:`~cflib.results.Interval` ``(low, high)`` at ``level``.
    level : float
        Confidence level.
    draws : numpy.ndarray or None
        ``(n_boot, 4)`` bootstrap replicates in the order of :data:`MEASURES`.
    influence : numpy.ndarray
        ``(n, 4)`` estimated influence functions (used for paired comparisons).
    n0, n1 : int
        Units with ``x0`` and ``x1``.
    n_clipped : int
        Propensities that hit the clipping bounds.
    components : dict
        The four means behind the measures (``A``, ``B``, ``Ybar0``, ``Ybar1``).
    method : str
        Learner and interval method, for the record.
    warnings : tuple of str
        The :class:`cflib.CflibWarning` messages raised while estimating (e.g. too few units for
        the normal interval); :meth:`summary` shows them in a ``warning`` column.
    """

    outcome: str
    estimate: dict
    se: dict
    pvalue: dict
    ci: dict
    level: float
    draws: np.ndarray | None
    influence: np.ndarray = field(repr=False)
    n0: int = 0
    n1: int = 0
    n_clipped: int = 0
    components: dict = field(default_factory=dict)
    method: str = ""
    warnings: tuple[str, ...] = ()

    @property
    def statistic(self) -> pd.Series:
        """Point estimates as a Series indexed by :data:`MEASURES`."""
        return pd.Series(self.estimate)[list(MEASURES)]

    def significant(self, measure: str) -> bool:
        """Whether the interval of ``measure`` excludes 0.

        Parameters
        ----------
        measure : {"TV", "DE", "IE", "SE"}

        Returns
        -------
        bool
        """
        return self.as_estimate(measure).significant()

    def as_estimate(self, measure: str) -> Estimate:
        """One measure as a :class:`~cflib.results.Estimate` (estimate, se, interval).

        Parameters
        ----------
        measure : {"TV", "DE", "IE", "SE"}

        Returns
        -------
        cflib.results.Estimate
        """
        if measure not in MEASURES:
            raise ValueError(f"measure must be one of {MEASURES}, got {measure!r}")
        return Estimate(
            self.estimate[measure],
            self.se[measure],
            self.ci[measure],
            self.level,
            name=f"{measure}({self.outcome})",
            method=self.method,
        )

    def as_test(self, measure: str) -> TestResult:
        """The test of ``measure = 0`` as a :class:`~cflib.results.TestResult` (z statistic, p-value).

        Parameters
        ----------
        measure : {"TV", "DE", "IE", "SE"}

        Returns
        -------
        cflib.results.TestResult
        """
        e = self.as_estimate(measure)
        z = e.estimate / e.se if e.se > 0 else (0.0 if e.estimate == 0 else math.copysign(math.inf, e.estimate))
        return TestResult(z, self.pvalue[measure], name=f"{measure}({self.outcome}) = 0")

    def decomposition_residual(self) -> float:
        """Largest ``|TV - (DE - IE - SE)|`` over the estimate and every bootstrap replicate.

        Returns
        -------
        float
            Zero up to floating-point rounding (Prop. 3 holds exactly for this estimator).
        """
        rows = [np.array([self.estimate[m] for m in MEASURES])]
        if self.draws is not None:
            rows.append(self.draws)
        v = np.vstack(rows)
        return float(np.max(np.abs(v[:, 0] - (v[:, 1] - v[:, 2] - v[:, 3]))))

    def summary(self) -> pd.DataFrame:
        """One row per measure: estimate, se, interval and p-value.

        Returns
        -------
        pandas.DataFrame
        """
        df = pd.DataFrame(
            {
                "estimate": [self.estimate[m] for m in MEASURES],
                "se": [self.se[m] for m in MEASURES],
                "ci_low": [self.ci[m][0] for m in MEASURES],
                "ci_high": [self.ci[m][1] for m in MEASURES],
                "pvalue": [self.pvalue[m] for m in MEASURES],
            },
            index=pd.Index(MEASURES, name=self.outcome),
        )
        if self.warnings:
            df["warning"] = "; ".join(self.warnings)
        return df

    def plot(
        self,
        ax: Any = None,
        *,
        color: str | None = None,
        label: str | None = None,
        offset: float = 0.0,
        width: float = 0.6,
    ) -> Any:
        """Bar chart of the four measures with their intervals.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
        color, label : str, optional
        offset, width : float
            Horizontal offset and width of the bars (to group several outcomes).

        Returns
        -------
        matplotlib.axes.Axes
        """
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        pos = np.arange(len(MEASURES)) + offset
        est = np.array([self.estimate[m] for m in MEASURES])
        lo = np.array([self.ci[m][0] for m in MEASURES])
        hi = np.array([self.ci[m][1] for m in MEASURES])
        ax.bar(pos, est, width=width, color=color, label=label or self.outcome)
        ax.errorbar(pos, est, yerr=[est - lo, hi - est], fmt="none", ecolor="0.2", capsize=3, lw=1)
        ax.axhline(0, color="0.3", lw=0.8)
        ax.set_xticks(np.arange(len(MEASURES)))
        ax.set_xticklabels(["TV", "Ctf-DE", "Ctf-IE", "Ctf-SE"])
        return ax


def _check_learner_arg(spec: Any, name: str) -> None:
    if spec is None or isinstance(spec, str):
        if isinstance(spec, str) and spec not in _LEARNERS:
            raise ValueError(f"{name} must be one of {_LEARNERS} or a scikit-learn estimator, got {spec!r}")
        return
    if not hasattr(spec, "fit"):
        raise TypeError(f"{name} must have a fit method (a scikit-learn estimator), got {type(spec).__name__}")


def _folds(x: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold label per unit, stratified by ``x`` so every training set holds both groups."""
    fold = np.empty(x.size, dtype=int)
    for g in (0, 1):
        idx = np.flatnonzero(x == g)
        perm = rng.permutation(idx)
        fold[perm] = np.arange(idx.size) % n_folds
    return fold


#: Most levels a string or categorical column may have for the gradient-boosting learner's native
#: categorical splits (its bins hold at most 255 values, one kept for missing values).
_MAX_NATIVE_LEVELS = 250


@dataclass(frozen=True)
class _Design:
    """Feature matrices of ``Z`` and ``(Z, W)`` for one kind of learner, with their categorical columns.

    One-hot indicators (first level dropped) for linear models, forests and user estimators; for the
    ``"hgb"`` learner, string, categorical and boolean columns stay one column each (integer codes
    with native categorical splits): the same information, in far fewer columns, so each fit is
    several times faster on data such as Adult (81 one-hot columns against 9).
    """

    z: np.ndarray
    zw: np.ndarray
    cat_z: np.ndarray | None = None
    cat_zw: np.ndarray | None = None


def _is_categorical(s: pd.Series) -> bool:
    return not pd.api.types.is_numeric_dtype(s) or isinstance(s.dtype, pd.CategoricalDtype)


def _designs(data: pd.DataFrame, sfm: StandardFairnessModel, arr: Any, specs: Sequence[Any]) -> dict[str, _Design]:
    """The design each learner in ``specs`` sees: keys ``"onehot"`` and, when it pays, ``"native"``."""
    out = {"onehot": _Design(arr.z, np.hstack([arr.z, arr.w]))}
    cols = [*sfm.z, *sfm.w]
    cats = [c for c in cols if _is_categorical(data[c])]
    if (
        any(isinstance(s, str) and s == "hgb" for s in specs)
        and cats
        and all(data[c].nunique() <= _MAX_NATIVE_LEVELS for c in cats)
    ):
        parts, mask = [], []
        for c in cols:
            s = data[c]
            if c in cats:
                codes = pd.Categorical(s.astype(str) if s.dtype == bool else s).codes
                parts.append(codes.astype(float))
            else:
                parts.append(s.to_numpy(dtype=float))
            mask.append(c in cats)
        mat = np.column_stack(parts) if parts else np.zeros((len(data), 0))
        mask_arr = np.asarray(mask, dtype=bool)
        nz = len(sfm.z)
        out["native"] = _Design(mat[:, :nz], mat, mask_arr[:nz], mask_arr)
    return out


def _design_for(designs: dict[str, _Design], spec: Any) -> _Design:
    return designs["native"] if isinstance(spec, str) and spec == "hgb" and "native" in designs else designs["onehot"]


def _learner(spec: Any, kind: str, seed: int | None, categorical: np.ndarray | None) -> Any:
    est = make_learner(spec, kind, seed)
    if categorical is not None and categorical.any():
        est.set_params(categorical_features=categorical)
    return est


def _fit_predict_proba(
    spec: Any,
    feats: np.ndarray,
    x: np.ndarray,
    tr: np.ndarray,
    te: np.ndarray,
    seed: int | None,
    categorical: np.ndarray | None = None,
) -> np.ndarray:
    if feats.shape[1] == 0:
        return np.full(te.sum(), x[tr].mean())
    clf = _learner(spec, "classifier", seed, categorical).fit(feats[tr], x[tr])
    return clf.predict_proba(feats[te])[:, list(clf.classes_).index(1)]


def _fit_predict_mean(
    spec: Any,
    feats: np.ndarray,
    y: np.ndarray,
    tr: np.ndarray,
    te: np.ndarray,
    seed: int | None,
    categorical: np.ndarray | None = None,
) -> np.ndarray:
    if feats.shape[1] == 0:
        return np.full(te.sum(), y[tr].mean())
    reg = _learner(spec, "regressor", seed, categorical).fit(feats[tr], y[tr])
    return np.asarray(reg.predict(feats[te]), dtype=float)


def _fold_fits(
    k: int,
    fold: np.ndarray,
    x: np.ndarray,
    dp: _Design,
    dl: _Design,
    outcomes: dict[str, np.ndarray],
    learner: Any,
    propensity_learner: Any,
    seed: int,
    n_threads: int | None,
) -> dict[str, Any]:
    """Every nuisance of fold ``k``, fitted on the other folds: the two propensities and each outcome's two regressions."""
    with thread_cap(n_threads):  # again here: a worker process does not inherit the caller's cap
        te = fold == k
        tr = ~te
        tr1 = tr & (x == 1)
        return {
            "p_z": _fit_predict_proba(propensity_learner, dp.z, x, tr, te, seed, dp.cat_z),
            "p_zw": _fit_predict_proba(propensity_learner, dp.zw, x, tr, te, seed, dp.cat_zw),
            "m1": {name: _fit_predict_mean(learner, dl.z, y, tr1, te, seed, dl.cat_z) for name, y in outcomes.items()},
            "mu1": {
                name: _fit_predict_mean(learner, dl.zw, y, tr1, te, seed, dl.cat_zw) for name, y in outcomes.items()
            },
        }


def _nuisances(
    arr: SFMArrays,
    outcomes: dict[str, np.ndarray],
    learner: Any,
    propensity_learner: Any,
    n_folds: int,
    rng: np.random.Generator,
    seed: int,
    designs: dict[str, _Design] | None = None,
    n_jobs: int = 1,
    n_threads: int | None = 1,
) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], dict[str, np.ndarray]]:
    x = arr.x
    designs = designs or {"onehot": _Design(arr.z, np.hstack([arr.z, arr.w]))}
    dp, dl = _design_for(designs, propensity_learner), _design_for(designs, learner)
    n = x.size
    fold = _folds(x, n_folds, rng)
    p_z = np.empty(n)
    p_zw = np.empty(n)
    m1 = {k: np.empty(n) for k in outcomes}
    mu1 = {k: np.empty(n) for k in outcomes}
    # Every nuisance is fitted once per fold: the two propensities are shared by all outcomes, and
    # each outcome's two regressions are its own (a difference of outcomes needs none: see ctf_effects).
    # The folds are independent, so with n_jobs > 1 they run in parallel processes; every fit has its own
    # seed, so the numbers are the same whatever n_jobs is.
    args = (fold, x, dp, dl, outcomes, learner, propensity_learner, seed, n_threads)
    if n_jobs > 1:
        from joblib import Parallel, delayed

        fits = Parallel(n_jobs=min(n_jobs, n_folds), backend="loky")(
            delayed(_fold_fits)(k, *args) for k in range(n_folds)
        )
    else:
        fits = [_fold_fits(k, *args) for k in range(n_folds)]
    for k, f in enumerate(fits):
        te = fold == k
        p_z[te], p_zw[te] = f["p_z"], f["p_zw"]
        for name in outcomes:
            m1[name][te], mu1[name][te] = f["m1"][name], f["mu1"][name]
    if arr.z.shape[1] == 0:
        # Z empty: p(x1 | z) and m_1(z) are constants; full-sample values make B = Ybar1 exactly,
        # so Ctf-SE = 0 exactly (faircause sets it to 0 in this case).
        p_z[:] = x.mean()
        for name, y in outcomes.items():
            m1[name][:] = y[x == 1].mean()
    return p_z, p_zw, m1, mu1


def _boot_weights(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n)`` multinomial resampling counts: the units' weights in each bootstrap replicate."""
    return rng.multinomial(n, np.full(n, 1.0 / n), size=n_boot).astype(float)


def _estimate(
    x: np.ndarray,
    y: np.ndarray,
    p_z: np.ndarray,
    p_zw: np.ndarray,
    m1: np.ndarray,
    mu1: np.ndarray,
    n_boot: int,
    level: float,
    ci: str,
    rng: np.random.Generator | None,
    name: str,
    method: str,
    n_clipped: int,
    wts: np.ndarray | None = None,
) -> EffectEstimates:
    n = x.size
    x0m = (1 - x).astype(float)
    x1m = x.astype(float)
    # Per-unit contributions; dividing their sums by n0 (or n1) gives the four means.
    a = x0m * mu1 + x1m * (1 - p_zw) / p_zw * (y - mu1)
    b = x0m * m1 + x1m * (1 - p_z) / p_z * (y - m1)
    c0 = x0m * y
    c1 = x1m * y
    n0, n1 = x0m.sum(), x1m.sum()
    A, B, Y0, Y1 = a.sum() / n0, b.sum() / n0, c0.sum() / n0, c1.sum() / n1
    est = {"TV": Y1 - Y0, "DE": A - Y0, "IE": A - B, "SE": B - Y1}
    pi0, pi1 = n0 / n, n1 / n
    phiA = (a - x0m * A) / pi0
    phiB = (b - x0m * B) / pi0
    phi0 = x0m * (y - Y0) / pi0
    phi1 = x1m * (y - Y1) / pi1
    infl = np.column_stack([phi1 - phi0, phiA - phi0, phiA - phiB, phiB - phi1])
    se_if = infl.std(axis=0, ddof=1) / np.sqrt(n)
    draws = None
    if n_boot > 0:
        # Multinomial resampling weights: one matrix product gives every replicate's four sums.
        if wts is None:
            assert rng is not None, "bootstrap replicates need their weights (wts) or a generator (rng)"
            wts = _boot_weights(n, n_boot, rng)
        S = wts @ np.column_stack([a, b, c0, c1, x0m, x1m])
        bA, bB, bY0, bY1 = S[:, 0] / S[:, 4], S[:, 1] / S[:, 4], S[:, 2] / S[:, 4], S[:, 3] / S[:, 5]
        draws = np.column_stack([bY1 - bY0, bA - bY0, bA - bB, bB - bY1])
    zq = stats.norm.ppf(0.5 + level / 2)
    se, cis, pv = {}, {}, {}
    for j, m in enumerate(MEASURES):
        if ci == "percentile":
            assert draws is not None  # ctf_effects asks for n_boot >= 2 with percentile intervals
            s = float(draws[:, j].std(ddof=1))
            lo, hi = np.quantile(draws[:, j], [(1 - level) / 2, (1 + level) / 2])
        else:
            s = float(se_if[j])
            lo, hi = est[m] - zq * s, est[m] + zq * s
        se[m] = s
        cis[m] = Interval.of(
            (float(lo), float(hi)),
            estimate=float(est[m]),
            method=f"{100 * level:g}% {'percentile bootstrap' if ci == 'percentile' else 'normal, influence-function SE'}",
        )
        pv[m] = float(2 * stats.norm.sf(abs(est[m]) / s)) if s > 0 else (0.0 if est[m] != 0 else 1.0)
    return EffectEstimates(
        outcome=name,
        estimate={k: float(v) for k, v in est.items()},
        se=se,
        pvalue=pv,
        ci=cis,
        level=level,
        draws=draws,
        influence=infl,
        n0=int(n0),
        n1=int(n1),
        n_clipped=n_clipped,
        components={"A": float(A), "B": float(B), "Ybar0": float(Y0), "Ybar1": float(Y1)},
        method=method,
    )


# A str is also a Sequence[str]: the first overload is the one for it, as the isinstance check is at run time.
@overload
def ctf_effects(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    outcome: str | None = ...,
    *,
    learner: Any = ...,
    propensity_learner: Any = ...,
    n_folds: int = ...,
    n_boot: int = ...,
    ci: str = ...,
    level: float = ...,
    clip: float = ...,
    seed: int | np.random.Generator | None = ...,
    n_threads: int | None = ...,
    differences: Mapping[str, tuple[str, str]] | None = ...,
    n_jobs: int = ...,
) -> EffectEstimates: ...


@overload
def ctf_effects(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    outcome: Sequence[str],
    *,
    learner: Any = ...,
    propensity_learner: Any = ...,
    n_folds: int = ...,
    n_boot: int = ...,
    ci: str = ...,
    level: float = ...,
    clip: float = ...,
    seed: int | np.random.Generator | None = ...,
    n_threads: int | None = ...,
    differences: Mapping[str, tuple[str, str]] | None = ...,
    n_jobs: int = ...,
) -> dict[str, EffectEstimates]: ...


def ctf_effects(
    data: pd.DataFrame,
    sfm: StandardFairnessModel,
    outcome: str | Sequence[str] | None = None,
    *,
    learner: Any = "hgb",
    propensity_learner: Any = None,
    n_folds: int = 5,
    n_boot: int = 0,
    ci: str = "normal",
    level: float = 0.95,
    clip: float = 0.01,
    seed: int | np.random.Generator | None = None,
    n_threads: int | None = 1,
    differences: Mapping[str, tuple[str, str]] | None = None,
    n_jobs: int = 1,
) -> EffectEstimates | dict[str, EffectEstimates]:
    """Cross-fitted doubly robust TV, Ctf-DE, Ctf-IE and Ctf-SE (Def. 3, Props. 3-4).

    Parameters
    ----------
    data : pandas.DataFrame
        One row per unit.
    sfm : StandardFairnessModel
        Roles of the columns.
    outcome : str or sequence of str, optional
        Outcome or predictor column(s) to decompose (default ``sfm.y``). Several outcomes share the
        folds and the propensity fits, so their estimates are paired.
    learner : {"hgb", "linear", "rf"} or scikit-learn regressor
        Outcome regressions ``mu_1(z, w)`` and ``m_1(z)`` (fitted on ``x1`` units).
    propensity_learner : {"hgb", "linear", "rf"} or scikit-learn classifier, optional
        Propensities ``p(x1 | z)`` and ``p(x1 | z, w)``; defaults to the counterpart of ``learner``.
    n_folds : int
        Cross-fitting folds (at least 2).
    n_boot : int
        Bootstrap replicates (0: none). Needed for ``ci="percentile"``.
    ci : {"normal", "percentile"}
        Influence-function normal interval, or bootstrap percentile interval.
    level : float
        Confidence level in (0, 1).
    clip : float
        Propensities are clipped to ``[clip, 1 - clip]`` (units are never dropped).
    seed : int or numpy.random.Generator, optional
        Folds, learners and bootstrap.
    n_threads : int or None
        Threads the learners may use (BLAS/OpenMP). 1 by default: on a small shared machine
        OpenMP threads of gradient boosting contend badly; ``None`` leaves the libraries' default.
    differences : mapping of str to (str, str), optional
        Outcomes defined as the difference of two others, ``{"diff": ("y", "y_hat")}`` for
        ``y - y_hat``; both must be in ``outcome``. A difference needs no fits of its own: its
        regressions are the difference of the two outcomes' regressions (a conditional mean is linear in
        the outcome), so with the same propensities and bootstrap draws its estimates, intervals and
        replicates are exactly those of ``a`` minus those of ``b`` (the paired comparison Algorithm 1 needs).
        Requires a sequence ``outcome``; the results hold one entry per difference as well.
    n_jobs : int
        Folds fitted at once, in separate processes (each fit still uses ``n_threads``). The results do not
        depend on it; more than one pays on data large enough for a fit to take seconds.

    Returns
    -------
    EffectEstimates or dict of str to EffectEstimates
        One result, or one per outcome (and difference) when ``outcome`` is a sequence.

    Raises
    ------
    TypeError, ValueError
        Bad data (see :meth:`StandardFairnessModel.validate`) or bad arguments, or fewer than
        ``MIN_UNITS_PER_FOLD * n_folds`` units in the smaller group (some training fold would lack a group).

    Warns
    -----
    cflib.CflibWarning
        Fewer than ``max(RELIABLE_UNITS, RELIABLE_UNITS_PER_FOLD * n_folds)`` units in the smaller group:
        the estimates are returned but their intervals and p-values are unreliable; the message is
        kept in :attr:`EffectEstimates.warnings`.
    """
    single, names, diffs, propensity_learner = _check_ctf_args(
        sfm, outcome, learner, propensity_learner, n_folds, n_boot, ci, level, clip, differences, n_jobs
    )
    sfm.validate(data, names)
    arr = sfm.arrays(data, "")
    smaller = int(np.bincount(arr.x, minlength=2).min())
    if smaller < MIN_UNITS_PER_FOLD * n_folds:
        raise ValueError(
            f"data: the smaller group of {sfm.x!r} has {smaller} units; cross-fitting with n_folds={n_folds} needs at "
            f"least {MIN_UNITS_PER_FOLD * n_folds} ({MIN_UNITS_PER_FOLD} per fold) so that every training fold holds both groups"
        )
    notes: tuple[str, ...] = ()
    need = max(RELIABLE_UNITS, RELIABLE_UNITS_PER_FOLD * n_folds)
    if smaller < need:
        notes = (
            warn(
                f"ctf_effects: the smaller group of {sfm.x!r} has {smaller} units; intervals and p-values are unreliable "
                f"below {need} ({RELIABLE_UNITS} units, and {RELIABLE_UNITS_PER_FOLD} per fold with n_folds={n_folds})"
            ),
        )
    outs = {nm: data[nm].to_numpy(dtype=float) for nm in names}
    rng = as_generator(seed)
    lseed = int(rng.integers(2**31 - 1))
    designs = _designs(data, sfm, arr, (learner, propensity_learner))
    with thread_cap(n_threads):
        p_z, p_zw, m1, mu1 = _nuisances(
            arr,
            outs,
            learner,
            propensity_learner,
            n_folds,
            rng,
            lseed,
            designs,
            n_jobs=int(n_jobs),
            n_threads=n_threads,
        )
    for dname, (a, b) in diffs.items():
        outs[dname] = outs[a] - outs[b]
        m1[dname], mu1[dname] = m1[a] - m1[b], mu1[a] - mu1[b]
    lo, hi = clip, 1 - clip
    n_clipped = int(((p_z < lo) | (p_z > hi)).sum() + ((p_zw < lo) | (p_zw > hi)).sum())
    p_z, p_zw = np.clip(p_z, lo, hi), np.clip(p_zw, lo, hi)
    lname = learner if isinstance(learner, str) else type(learner).__name__
    method = f"cross-fitted AIPW ({lname}, {n_folds} folds), {ci} {level:.0%} CI"
    res = {}
    # Same bootstrap weights for every outcome (one draw from one shared seed): the replicates are paired.
    wts = _boot_weights(arr.x.size, n_boot, np.random.default_rng(lseed + 1)) if n_boot > 0 else None
    for nm in [*names, *diffs]:
        res[nm] = _estimate(
            arr.x, outs[nm], p_z, p_zw, m1[nm], mu1[nm], n_boot, level, ci, None, nm, method, n_clipped, wts=wts
        )
        if notes:
            res[nm] = replace(res[nm], warnings=notes)
    return res[names[0]] if single else res


def _check_ctf_args(
    sfm: Any,
    outcome: Any,
    learner: Any,
    propensity_learner: Any,
    n_folds: Any,
    n_boot: Any,
    ci: Any,
    level: Any,
    clip: Any,
    differences: Any,
    n_jobs: Any,
) -> tuple[bool, list[str], dict[str, tuple[str, str]], Any]:
    """Check the arguments of :func:`ctf_effects` (all but the data).

    Returns whether ``outcome`` names one column, the outcome columns, the checked ``differences`` and the
    propensity learner (its default follows ``learner``).
    """
    if not isinstance(sfm, StandardFairnessModel):
        raise TypeError(f"sfm must be a StandardFairnessModel, got {type(sfm).__name__}")
    if outcome is None or isinstance(outcome, str):
        single, names = True, [sfm.y if outcome is None else outcome]
    elif isinstance(outcome, Sequence):
        single, names = False, list(outcome)
    else:
        raise TypeError(f"outcome must be a column name or a list of them, got {type(outcome).__name__}")
    if not names:
        raise ValueError("outcome must name at least one column")
    diffs = _check_differences(differences, names, single)
    _check_learner_arg(learner, "learner")
    if learner is None:
        raise TypeError("learner must be 'hgb', 'linear', 'rf' or a scikit-learn estimator, not None")
    if propensity_learner is None:
        propensity_learner = learner if isinstance(learner, str) else "hgb"
    _check_learner_arg(propensity_learner, "propensity_learner")
    check_count(n_folds, "n_folds", minimum=2)
    check_count(n_boot, "n_boot", minimum=0)
    check_count(n_jobs, "n_jobs", minimum=1)
    if ci not in ("normal", "percentile"):
        raise ValueError(f"ci must be 'normal' or 'percentile', got {ci!r}")
    if ci == "percentile" and n_boot < 2:
        raise ValueError("ci='percentile' needs n_boot >= 2 bootstrap replicates")
    check_probability(level, "level")
    check_real(clip, "clip", low=0.0, high=0.5, high_open=True)
    return single, names, diffs, propensity_learner


def _check_differences(differences: Any, names: list[str], single: bool) -> dict[str, tuple[str, str]]:
    if differences is None:
        return {}
    if not isinstance(differences, Mapping):
        raise TypeError(
            f"differences must map a name to a pair of outcomes, e.g. {{'diff': ('y', 'y_hat')}}, got {type(differences).__name__}"
        )
    if single and differences:
        raise ValueError(
            "differences need outcome to be a list of the columns they subtract, e.g. outcome=['y', 'y_hat']"
        )
    out = {}
    for k, v in differences.items():
        if (
            not isinstance(k, str)
            or not isinstance(v, (tuple, list))
            or len(v) != 2
            or not all(isinstance(c, str) for c in v)
        ):
            raise TypeError(
                f"differences: entry {k!r} must be a name mapped to two outcome columns (a, b) for a - b, got {v!r}"
            )
        bad = [c for c in v if c not in names]
        if bad:
            raise ValueError(f"differences: {k!r} subtracts {bad}, which are not among the outcomes {names}")
        if k in names:
            raise ValueError(f"differences: {k!r} is already an outcome column; give the difference another name")
        out[k] = (v[0], v[1])
    return out


def whitebox_direct_effect(
    data: pd.DataFrame, sfm: StandardFairnessModel, predict: Callable[[pd.DataFrame], np.ndarray]
) -> float:
    """Plug-in Ctf-DE of a known predictor ``f(X, Z, W)``: ``mean over x0 units of f(x1,.) - f(x0,.)``.

    For ``x = x0`` the nested counterfactual ``Y_hat_{x1, W_{x0}}`` needs no model of ``W``: the
    ``x0`` units' own ``(Z, W)`` already follow ``P(z, w | x0)`` (notes, Sec. 2.10, claim 17).

    Parameters
    ----------
    data : pandas.DataFrame
    sfm : StandardFairnessModel
    predict : callable
        Takes a data frame with the SFM's columns and returns one prediction per row.

    Returns
    -------
    float
    """
    check_callable(predict, "predict")
    if not isinstance(sfm, StandardFairnessModel):
        raise TypeError(f"sfm must be a StandardFairnessModel, got {type(sfm).__name__}")
    sfm.validate(data, [])
    x0, x1 = sfm.levels(data)
    d0 = data[data[sfm.x] == x0]
    d1 = d0.copy()
    d1[sfm.x] = x1
    return float(np.mean(_predictions(predict, d1) - _predictions(predict, d0)))


def _predictions(predict: Callable[[pd.DataFrame], np.ndarray], frame: pd.DataFrame) -> np.ndarray:
    """``predict(frame)`` as one finite number per row, or a one-line error naming ``predict``."""
    name = getattr(predict, "__name__", type(predict).__name__)
    try:
        v = np.asarray(predict(frame), dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"predict ({name}) must return numbers, got a value that is not numeric ({exc})") from None
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.shape != (len(frame),):
        raise ValueError(f"predict ({name}) must return one prediction per row, shape ({len(frame)},), got {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError(f"predict ({name}) returned {int((~np.isfinite(v)).sum())} NaN or infinite prediction(s)")
    return v


def identify_discrete(
    joint: pd.DataFrame, *, prob: str = "p", x: str = "x", z: str = "z", w: str = "w", y: str = "y"
) -> dict[str, float]:
    """Ctf-DE, Ctf-IE and Ctf-SE from an exact discrete joint distribution (App. B, Eqs. 54-56).

    Parameters
    ----------
    joint : pandas.DataFrame
        One row per ``(x, z, w, y)`` cell with its probability; ``x`` coded 0/1, ``y`` numeric.
    prob, x, z, w, y : str
        Column names.

    Returns
    -------
    dict
        ``DE``, ``IE``, ``SE`` (with Eq. 7's sign), ``SE_eq56_as_printed`` (the paper's App. B formula,
        of opposite sign: an erratum) and ``TV``.
    """
    check_columns(joint, [prob, x, z, w, y], "joint")
    p = joint[prob].to_numpy(float)
    if not np.isfinite(p).all() or not np.isfinite(joint[y].to_numpy(float)).all():
        raise ValueError(f"joint columns {prob!r} and {y!r} must be finite, got NaN or inf")
    if set(pd.unique(joint[x])) - {0, 1}:
        raise ValueError(f"joint column {x!r} must be coded 0/1, got {sorted(map(str, pd.unique(joint[x])))[:10]}")
    if np.any(p < 0) or not np.isclose(p.sum(), 1):
        raise ValueError("joint probabilities must be non-negative and sum to 1")
    j = joint.assign(_py=joint[prob] * joint[y])
    pxzw = j.groupby([x, z, w])[prob].sum()
    Ey_xzw = j.groupby([x, z, w])["_py"].sum() / pxzw  # E[y | x, z, w]
    pxz = j.groupby([x, z])[prob].sum()
    pw_xz = pxzw / pxz.reindex(pxzw.index.droplevel(w)).to_numpy()  # P(w | x, z)
    px = j.groupby(x)[prob].sum()
    pz_x = pxz / px.reindex(pxz.index.get_level_values(x)).to_numpy()  # P(z | x)
    Ey_xz = j.groupby([x, z])["_py"].sum() / pxz
    zs = sorted(j[z].unique())
    ws = sorted(j[w].unique())

    def g(s: pd.Series, *k: Any) -> float:
        return float(s.get(k, 0.0))

    de = ie = 0.0
    for zz in zs:
        for ww in ws:
            de += (g(Ey_xzw, 1, zz, ww) - g(Ey_xzw, 0, zz, ww)) * g(pw_xz, 0, zz, ww) * g(pz_x, 0, zz)
            ie += g(Ey_xzw, 1, zz, ww) * (g(pw_xz, 0, zz, ww) - g(pw_xz, 1, zz, ww)) * g(pz_x, 0, zz)
    se7 = sum(g(Ey_xz, 1, zz) * (g(pz_x, 0, zz) - g(pz_x, 1, zz)) for zz in zs)
    ey1 = j[j[x] == 1]["_py"].sum() / px[1]
    ey0 = j[j[x] == 0]["_py"].sum() / px[0]
    return {"DE": de, "IE": ie, "SE": se7, "SE_eq56_as_printed": -se7, "TV": float(ey1 - ey0)}
