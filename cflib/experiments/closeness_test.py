"""Experiments of the chapter *Testing for causal fairness* (Fu et al. 2025, CF-CLOT): audits, studies and claims.

The auditing pipeline of the paper: Definition 1 (the factual outputs ``f(A_s, A_c)`` and the
counterfactual outputs ``f(A_s \\ a_t, do(a_t -> a_t'), A_c)`` of a trained model), Eq. 7
(epsilon-counterfactual closeness fairness for every sensitive attribute) and the experimental
protocol of Sec. 5.1 (SAA: all attributes; SSA: no sensitive attribute; SFA-eps: drop only the
attributes CF-CLOT flags at tolerance ``eps``); the simulation studies of notebooks 01, 02 and 04
(closed forms, calibration and power, what epsilon tolerates); and one ``claims_<nn>`` function per
notebook that turns its results into claim verdicts.

The paper leaves the intervention undefined ("removing sensitive attributes or converting them into
noise"); here it is explicit (notes, Sec. 7 item 3): ``"flip"`` swaps the two levels of a binary
attribute, a value sets every unit to that level, ``"resample"`` redraws the attribute from its
marginal (noise), and a callable does anything else. Other features are held fixed: this is the
model-level flip test, not a counterfactual through an SCM. The "unfairness" of the experiments is
also undefined (notes, item 14); :func:`counterfactual_gap` uses the mean absolute change of the
predicted probability under the intervention, averaged over the sensitive attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import optimize, stats

from .. import claims
from .. import verdicts as vd
from ..plotting import line_with_band, subplots
from ..results import check_alpha
from ..runtime import as_generator
from ..stats.closeness import (
    cfclot_statistics,
    cfclot_statistics_batch,
    cfclot_test,
    gap_for_target_nte,
    gaussian_pair_sample,
    nte,
    nte_bernoulli,
    nte_gaussian,
    nte_sup_gaussian,
    shift_for_target_nte,
    simulate_cfclot,
)
from ..stats.kernels import Kernel, make_kernel
from ..stats.mmd import mmd2

__all__ = [
    "intervene",
    "counterfactual_outputs",
    "counterfactual_gap",
    "screen_attributes",
    "ScreeningResult",
    "audit_feature_sets",
    "AuditResult",
    "plot_output_histograms",
    "normalisation_table",
    "closed_form_study",
    "closed_form_max_z",
    "plot_closed_form",
    "estimator_identities",
    "concentration_study",
    "plot_concentration",
    "claims_01",
    "boundary_zscores",
    "ks_normality",
    "plot_zscore_qq",
    "type1_study",
    "plot_type1",
    "power_study",
    "plot_power",
    "power_point",
    "EPS0_METHODS",
    "eps0_study",
    "boundary_bootstrap",
    "claims_02",
    "audit_tabular",
    "tasks_table",
    "plot_audit_grid",
    "audit_tables",
    "claims_03",
    "R_VALUES",
    "epsilon_gap_tables",
    "bandwidth_study",
    "plot_bandwidth_study",
    "flip_vs_set_study",
    "plot_flip_vs_set",
    "llm_example",
    "claims_04",
    "claims_05",
]


# ---------------------------------------------------------------------------- interventions and the audit protocol
def _check_frame(X: Any, attribute: str) -> pd.DataFrame:
    if not isinstance(X, pd.DataFrame):
        raise TypeError(f"X must be a pandas DataFrame with named columns, got {type(X).__name__}")
    if attribute not in X.columns:
        raise ValueError(f"attribute {attribute!r} is not a column of X; columns are {list(X.columns)}")
    if X.shape[0] < 2:
        raise ValueError(f"X needs at least 2 rows, got {X.shape[0]}")
    if X[attribute].isna().any():
        raise ValueError(f"attribute {attribute!r} has missing values; impute or drop them first")
    if X[attribute].nunique() < 2:
        raise ValueError(
            f"attribute {attribute!r} is constant in X (single value {X[attribute].iloc[0]!r}); "
            "an intervention on it cannot be compared with the factual data"
        )
    return X


def intervene(
    X: pd.DataFrame,
    attribute: str,
    intervention: Any = "flip",
    *,
    seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """Return a copy of ``X`` with ``do(attribute -> a')`` applied to every row.

    Parameters
    ----------
    X : pandas.DataFrame
        Units (rows) and features (columns).
    attribute : str
        The sensitive attribute ``a_t`` to intervene on.
    intervention : "flip", "resample", a value, or callable
        ``"flip"``: swap the two levels of a binary attribute. ``"resample"``: redraw the column from
        its empirical marginal, independently of everything else. A value: set the attribute of every
        unit to it (must be one of the observed levels for non-numeric columns). A callable:
        ``f(column: pandas.Series) -> array-like`` of new values.
    seed : int, Generator or None
        Randomness of ``"resample"``.

    Returns
    -------
    pandas.DataFrame
        The counterfactual inputs; other columns unchanged.

    Raises
    ------
    ValueError
        Unknown column, a constant attribute, ``"flip"`` on a non-binary attribute, or a value never
        observed for a categorical attribute.
    """
    X = _check_frame(X, attribute)
    col = X[attribute]
    out = X.copy()
    if callable(intervention):
        new = np.asarray(intervention(col))
        if new.shape != (len(X),):
            raise ValueError(f"the intervention callable must return {len(X)} values, got shape {new.shape}")
        out[attribute] = new
    elif isinstance(intervention, str) and intervention == "flip":
        levels = col.unique()
        if len(levels) != 2:
            raise ValueError(
                f"intervention='flip' needs a binary attribute, but {attribute!r} has {len(levels)} levels; "
                "set it to a value (intervention=<level>) or use 'resample'"
            )
        a, b = levels
        out[attribute] = np.where(col == a, b, a)
        out[attribute] = out[attribute].astype(col.dtype)
    elif isinstance(intervention, str) and intervention == "resample":
        out[attribute] = as_generator(seed).permutation(col.to_numpy())
    else:
        numeric = pd.api.types.is_numeric_dtype(col)
        if not numeric and intervention not in set(col.unique()):
            raise ValueError(
                f"value {intervention!r} is not an observed level of {attribute!r}; levels are {sorted(map(str, col.unique()))}"
            )
        out[attribute] = intervention
        out[attribute] = out[attribute].astype(col.dtype)
    return out


def _outputs(model: Any, X: pd.DataFrame, output: str) -> np.ndarray:
    if output == "proba":
        if not hasattr(model, "predict_proba"):
            raise TypeError("output='proba' needs a model with predict_proba; use output='label' or pass a callable")
        p = np.asarray(model.predict_proba(X), dtype=float)
        # for two classes the second column carries all the information (the first is 1 - p)
        return p[:, 1:] if p.ndim == 2 and p.shape[1] == 2 else p
    if output == "label":
        return np.asarray(model.predict(X), dtype=float).reshape(len(X), -1)
    raise ValueError(f"output must be 'proba', 'label' or the model must be a callable, got {output!r}")


def counterfactual_outputs(
    model: Any,
    X: pd.DataFrame,
    attribute: str,
    intervention: Any = "flip",
    *,
    output: str = "proba",
    seed: int | np.random.Generator | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Factual and counterfactual outputs of a fitted model (the paper's Definition 1).

    Parameters
    ----------
    model : estimator or callable
        A fitted model with ``predict_proba`` / ``predict`` accepting ``X`` (e.g. a Pipeline), or a
        callable ``f(X) -> outputs``.
    X : pandas.DataFrame
        The audited units.
    attribute : str
        Sensitive attribute ``a_t``.
    intervention : "flip", "resample", a value or callable
        See :func:`intervene`.
    output : {"proba", "label"}
        ``proba``: class probabilities (positive class only for binary models); ``label``: hard labels.
        Ignored when ``model`` is a callable.
    seed : int, Generator or None
        Randomness of ``"resample"``.

    Returns
    -------
    (y, y_cf) : tuple of numpy.ndarray, each (m, d)
        Row ``i`` of both belongs to unit ``i``.
    """
    X_cf = intervene(X, attribute, intervention, seed=seed)
    if callable(model) and not hasattr(model, "predict"):
        y, y_cf = (np.asarray(model(Z), dtype=float).reshape(len(X), -1) for Z in (X, X_cf))
    else:
        y, y_cf = _outputs(model, X, output), _outputs(model, X_cf, output)
    return y, y_cf


def counterfactual_gap(
    model: Any,
    X: pd.DataFrame,
    attributes: Sequence[str],
    intervention: Any = "flip",
    *,
    output: str = "proba",
    seed: int | np.random.Generator | None = None,
) -> float:
    """Unfairness as used in this book's SAA / SSA / SFA comparisons.

    The mean over ``attributes`` of ``mean_i |f(x_i) - f(x_i^{cf})|_1``: how much the model's output for
    the same unit moves when only the sensitive attribute is intervened on. It is zero for a model that
    does not read the attribute.

    Parameters
    ----------
    model, X, intervention, output, seed
        As in :func:`counterfactual_outputs`.
    attributes : sequence of str
        Sensitive attributes (each must be a column of ``X``).

    Returns
    -------
    float
    """
    if isinstance(attributes, str) or len(attributes) == 0:
        raise ValueError("attributes must be a non-empty list of column names")
    gaps = []
    for a in attributes:
        y, y_cf = counterfactual_outputs(model, X, a, intervention, output=output, seed=seed)
        gaps.append(float(np.abs(y - y_cf).sum(1).mean()))
    return float(np.mean(gaps))


@dataclass(frozen=True)
class ScreeningResult:
    """CF-CLOT applied to every sensitive attribute at several tolerances.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (attribute, epsilon): ``attribute, epsilon, nte, pvalue, reject, threshold, sigma, method, m``
        (``sigma``: the standard deviation of ``sqrt(m) nte`` of the normal threshold, NaN for a resampling test).
    epsilons : tuple of float
    alpha : float
    """

    table: pd.DataFrame = field(repr=False)
    epsilons: tuple[float, ...]
    alpha: float

    @property
    def statistic(self) -> pd.Series:
        """Estimated N-TE per attribute."""
        return self.table.groupby("attribute", sort=False)["nte"].first()

    @property
    def pvalue(self) -> pd.DataFrame:
        """P-values, attributes by epsilon."""
        return self.table.pivot(index="attribute", columns="epsilon", values="pvalue")

    def flagged(self, epsilon: float) -> list[str]:
        """Attributes whose closeness hypothesis ``N-TE <= epsilon`` is rejected (judged unfair)."""
        if not any(np.isclose(epsilon, e) for e in self.epsilons):
            raise ValueError(f"epsilon={epsilon} was not screened; screened values are {self.epsilons}")
        sub = self.table[np.isclose(self.table["epsilon"], epsilon) & self.table["reject"]]
        return list(sub["attribute"])

    def feature_sets(self, features: Sequence[str], sensitive: Sequence[str]) -> dict[str, list[str]]:
        """Feature lists of SAA, SSA and SFA-eps for every screened epsilon (paper, Sec. 5.1)."""
        sets = {"SAA": list(features), "SSA": [f for f in features if f not in set(sensitive)]}
        for e in self.epsilons:
            drop = set(self.flagged(e))
            sets[f"SFA-{e:g}"] = [f for f in features if f not in drop]
        return sets

    def is_nested(self) -> bool:
        """Whether the flagged sets shrink as epsilon grows: F(e2) is a subset of F(e1) for e1 < e2."""
        eps = sorted(self.epsilons)
        return all(set(self.flagged(b)) <= set(self.flagged(a)) for a, b in zip(eps, eps[1:], strict=False))

    def summary(self) -> pd.DataFrame:
        """Attributes by epsilon: ``unfair`` / ``fair`` decisions, with the N-TE estimate."""
        dec = self.table.pivot(index="attribute", columns="epsilon", values="reject")
        dec = dec.map(lambda r: "unfair" if r else "fair")
        dec.columns = [f"eps={c:g}" for c in dec.columns]
        return pd.concat([self.statistic.rename("N-TE"), dec], axis=1)

    def plot(self, ax=None):
        """N-TE estimate per attribute with the screened tolerances as horizontal lines."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        s = self.statistic
        ax.bar(range(len(s)), s.values, color="C0")
        ax.set_xticks(range(len(s)), s.index, rotation=30, ha="right")
        for i, e in enumerate(sorted(self.epsilons)):
            if e > 0:
                ax.axhline(e, color=f"C{i + 1}", ls="--", lw=1, label=f"$\\epsilon$ = {e:g}")
        ax.set_ylabel("N-TE estimate")
        ax.legend(fontsize=8)
        return ax


def screen_attributes(
    model: Any,
    X: pd.DataFrame,
    attributes: Sequence[str],
    epsilons: Sequence[float] = (0.0, 0.1, 0.3),
    *,
    alpha: float = 0.05,
    intervention: Any = "flip",
    output: str = "proba",
    kernel: str | Kernel = "gaussian",
    bandwidth: float | str = "median",
    variance: str = "delta",
    n_boot: int = 500,
    max_m: int | None = 1000,
    seed: int | np.random.Generator | None = None,
) -> ScreeningResult:
    """Screen sensitive attributes with CF-CLOT at several tolerances (paper, Eq. 7 and Sec. 5.1).

    Parameters
    ----------
    model : estimator or callable
        The fitted model under audit.
    X : pandas.DataFrame
        Audited units (a held-out set).
    attributes : sequence of str
        Sensitive attributes to test, one CF-CLOT per attribute and tolerance.
    epsilons : sequence of float
        Tolerances in ``[0, 1)``; ``0`` uses the exact sign-flip test, ``> 0`` the normal threshold.
    alpha : float
        Level of each test (no multiplicity correction, as in the paper).
    intervention, output
        As in :func:`counterfactual_outputs`.
    kernel, bandwidth, variance, n_boot
        As in :func:`cflib.stats.closeness.cfclot_test`.
    max_m : int or None
        Subsample at most this many units (the test is ``O(m^2)``); ``None`` uses all.
    seed : int, Generator or None

    Returns
    -------
    ScreeningResult
    """
    if isinstance(attributes, str) or len(attributes) == 0:
        raise ValueError("attributes must be a non-empty list of column names")
    eps = tuple(float(e) for e in epsilons)
    if not eps:
        raise ValueError("epsilons must contain at least one tolerance")
    check_alpha(alpha)
    rng = as_generator(seed)
    if max_m is not None and len(X) > max_m:
        X = X.iloc[np.sort(rng.choice(len(X), size=max_m, replace=False))]
    rows = []
    for a in attributes:
        y, y_cf = counterfactual_outputs(model, X, a, intervention, output=output, seed=rng)
        # one bandwidth per attribute, so that every tolerance tests the same N-TE
        k = make_kernel(kernel, bandwidth).fit(y, y_cf, seed=rng)
        for e in eps:
            r = cfclot_test(y, y_cf, e, alpha=alpha, kernel=k, variance=variance, n_boot=n_boot, seed=rng)
            rows.append({"attribute": a, "epsilon": e, "nte": r.statistic, "pvalue": r.pvalue, "reject": r.reject,
                         "threshold": r.threshold, "sigma": np.nan if r.sigma is None else r.sigma, "method": r.method, "m": r.m})
    return ScreeningResult(pd.DataFrame(rows), eps, float(alpha))


@dataclass(frozen=True)
class AuditResult:
    """Accuracy and unfairness of SAA, SSA and SFA-eps models (the pattern of the paper's Figs. 1-3, 5).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per variant: ``variant, dropped, n_features, accuracy, unfairness``.
    screening : ScreeningResult
        The screening of the SAA model that defined the SFA variants.
    """

    table: pd.DataFrame = field(repr=False)
    screening: ScreeningResult = field(repr=False)

    def summary(self) -> pd.DataFrame:
        """The per-variant table."""
        return self.table.copy()

    def plot(self, ax=None):
        """Two groups of bars (accuracy, unfairness) per variant on one axes; returns the axes."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        t = self.table
        x = np.arange(len(t))
        ax.bar(x - 0.2, t["accuracy"], 0.4, label="accuracy", color="C0")
        ax2 = ax.twinx()
        ax2.bar(x + 0.2, t["unfairness"], 0.4, label="unfairness", color="C3")
        ax.set_xticks(x, t["variant"], rotation=30, ha="right")
        ax.set_ylabel("accuracy")
        ax2.set_ylabel("unfairness (mean |Δp|)")
        lo = max(0.0, float(t["accuracy"].min()) - 0.05)
        ax.set_ylim(lo, min(1.0, float(t["accuracy"].max()) + 0.03))
        h1, l1 = ax.get_legend_handles_labels()
        h2, l2 = ax2.get_legend_handles_labels()
        ax.legend(h1 + h2, l1 + l2, fontsize=8, loc="lower left")
        return ax


def audit_feature_sets(
    make_model: Callable[[list[str]], Any],
    X_train: pd.DataFrame,
    y_train: Any,
    X_test: pd.DataFrame,
    y_test: Any,
    features: Sequence[str],
    sensitive: Sequence[str],
    epsilons: Sequence[float] = (0.0, 0.1, 0.3),
    *,
    intervention: Any = "flip",
    seed: int | np.random.Generator | None = None,
    **screen_kwargs: Any,
) -> AuditResult:
    """Train SAA, screen its sensitive attributes, and retrain SSA and SFA-eps (paper, Sec. 5.1).

    Parameters
    ----------
    make_model : callable
        ``make_model(feature_list)`` returns an unfitted estimator that reads only those columns of a
        data frame (e.g. :func:`cflib.models.tabular.make_tabular_pipeline`).
    X_train, y_train, X_test, y_test
        Training and held-out data (data frames with every column of ``features``).
    features : sequence of str
        All attributes (SAA's feature set).
    sensitive : sequence of str
        The sensitive attributes (a subset of ``features``).
    epsilons : sequence of float
        Tolerances of the SFA variants.
    intervention : "flip", value, "resample" or callable
        The intervention of both the screening and the unfairness measure.
    seed : int, Generator or None
        Randomness of the screening.
    **screen_kwargs
        Passed to :func:`screen_attributes`.

    Returns
    -------
    AuditResult
        Models with identical feature sets are trained once and shared between variants.
    """
    features = list(features)
    missing = [s for s in sensitive if s not in features]
    if missing:
        raise ValueError(f"sensitive attributes {missing} are not in features")
    rng = as_generator(seed)
    fitted: dict[frozenset[str], Any] = {}

    def fit(cols: list[str]) -> Any:
        key = frozenset(cols)
        if key not in fitted:
            fitted[key] = make_model(cols).fit(X_train[cols], y_train)
        return fitted[key]

    saa = fit(features)
    screening = screen_attributes(saa, X_test, sensitive, epsilons, intervention=intervention, seed=rng, **screen_kwargs)
    rows = []
    for variant, cols in screening.feature_sets(features, sensitive).items():
        model = fit(cols)
        acc = float(np.mean(np.asarray(model.predict(X_test[cols])) == np.asarray(y_test)))
        # the unfairness probe intervenes on every sensitive attribute, including dropped ones (their gap is 0)
        probe = _ColumnSelect(model, cols)
        rows.append({"variant": variant, "dropped": ", ".join(f for f in features if f not in cols) or "-",
                     "n_features": len(cols), "accuracy": acc,
                     "unfairness": counterfactual_gap(probe, X_test, list(sensitive), intervention, seed=rng)})
    return AuditResult(pd.DataFrame(rows), screening)


class _ColumnSelect:
    """A model restricted to some columns, accepting a frame with more columns."""

    def __init__(self, model: Any, cols: list[str]) -> None:
        self.model, self.cols = model, cols

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.model.predict_proba(X[self.cols])

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.model.predict(X[self.cols])


# ---------------------------------------------------------------------------- how the claims are decided
#: Kind of the claims that check a property the paper does not state (the notes' derivations and measurements).
_OWN = "book's own finding"
_OWN_CHANGE = ("the book's own finding, not a reproduction (issue 27): the paper does not state it ({what}), so it is no longer "
               "counted among the paper's claims; the rule is unchanged")


def _rate_interval(rate: float, n: int, unit: str = "replications") -> vd.Interval:
    """Clopper-Pearson interval of a rejection rate measured over ``n`` replications."""
    return vd.binomial_interval(int(round(float(rate) * n)), int(n), unit=unit)


def _binomial_se(rate: float, n: int) -> float:
    return float(np.sqrt(rate * (1 - rate) / n))


def _difference(a: float, se_a: float, b: float, se_b: float, *, same_units: bool, what: str) -> vd.Interval:
    """Normal interval of ``a - b``: independent standard errors add in quadrature; on the same units
    ``sd(a - b) <= sd(a) + sd(b)`` whatever their correlation, so the sum is used (conservative)."""
    se = float(se_a + se_b) if same_units else float(np.hypot(se_a, se_b))
    how = "s.e. bounded by the sum of both (same units)" if same_units else "independent s.e."
    return vd.normal_interval(a - b, se, method=f"{what}, {how}")


def _nte_interval(estimate: float, se: float, method: str) -> vd.Interval:
    """Normal interval of an N-TE estimate from CF-CLOT's delta-method standard error.

    A standard error of 0 (or NaN) is not a zero variance: the unbiased variance components can fall
    below 0 near P = Q and are clipped, so the interval is left undefined and the claim undecided.
    """
    if not np.isfinite(se) or se <= 0:
        return vd.Interval(float(estimate), np.nan, np.nan, f"{method}; no usable standard error (estimated as {se:.2g})")
    return vd.normal_interval(estimate, se, method=method)


def _ks_distance(z: Any, level: float = 0.95, where: str = "") -> vd.Interval:
    """Kolmogorov distance of the law of ``z`` from N(0, 1) with the Dvoretzky-Kiefer-Wolfowitz band.

    With probability ``level`` the empirical CDF is within ``sqrt(log(2 / (1 - level)) / (2 n))`` of the
    true one (Massart's constant), so the true distance lies within that much of the observed one.
    """
    z = np.asarray(z, dtype=float)
    d = float(stats.kstest(z, "norm").statistic)
    half = float(np.sqrt(np.log(2 / (1 - level)) / (2 * z.size)))
    return vd.Interval(d, max(0.0, d - half), d + half, f"{100 * level:g}% Dvoretzky-Kiefer-Wolfowitz band, {z.size} z-scores {where}".rstrip())


def _every(parts: Sequence[vd.Decision], what: str, *, pick: Callable[[vd.Decision], float] | None = None) -> vd.Decision:
    """Join parts that must all hold (:func:`cflib.verdicts.combine`), keeping the interval of a part that decides:
    among the parts whose verdict is the joined one, the first, or the largest by ``pick``."""
    joined = vd.combine(parts, rule=what)
    deciding = [p for p in parts if p.verdict == joined.verdict] or list(parts)
    shown = (max(deciding, key=pick) if pick else deciding[0]) if deciding else None
    rules = "; ".join(dict.fromkeys(p.rule for p in parts))
    return vd.Decision(joined.verdict, shown.interval if shown is not None else None, f"{joined.rule} (parts: {rules})")


def _deciding_size(decision: vd.Decision, bounds: Sequence[float], n_now: int, unit: str) -> str:
    """The note of an undecided claim (empty otherwise): the ``unit`` that would decide its deciding part at the
    same estimate (:func:`cflib.verdicts.deciding_size`)."""
    if decision.verdict != vd.UNDECIDED:
        return ""
    iv = decision.interval
    size = vd.deciding_size(iv, bounds, n_now) if iv is not None else None
    if size is None:
        return (f"No size decides it at this estimate: the interval is undefined or the estimate sits on the boundary "
                f"({iv.method if iv is not None else 'no interval'}; {n_now} {unit} now).")
    return f"At the same estimate about {size} {unit} (now {n_now}) would decide it."


# ---------------------------------------------------------------------------- notebook 01
def plot_output_histograms(y: np.ndarray, y_cf: np.ndarray, ax=None):
    """Histograms of factual and counterfactual predicted probabilities (the two laws P and Q).

    Parameters
    ----------
    y, y_cf : numpy.ndarray, (m, 1)
        From :func:`counterfactual_outputs`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    bins = np.linspace(0, 1, 41)
    ax.hist(y[:, 0], bins=bins, alpha=0.6, density=True, label="factual $\\hat Y$ (P)")
    ax.hist(y_cf[:, 0], bins=bins, alpha=0.6, density=True, label="counterfactual $\\hat Y_{a'}$ (Q)")
    ax.set_xlabel("predicted probability")
    ax.set_ylabel("density")
    ax.legend()
    return ax


def _mmd2_gauss(delta: float, tau: float) -> tuple[float, float]:
    """Closed-form MMD^2 and ``||mu||^2`` of N(0, tau^2) vs N(delta, tau^2), bandwidth 1 (notes, claim C4)."""
    a = (1 / (1 + 2 * tau**2)) ** 0.5
    return nte_gaussian(delta, tau1=tau, tau2=tau) * (4 - 2 * a), a


def normalisation_table(m: int, rng: np.random.Generator) -> pd.DataFrame:
    """A narrow (tau = 0.3) and a wide (tau = 1) Gaussian pair tuned to the same MMD^2, with their N-TE.

    Parameters
    ----------
    m : int
        Pairs of the estimates.
    rng : numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        One row per pair: closed forms of MMD^2, ``||mu||^2`` and N-TE, and the estimates (bandwidth 1).
    """
    target, _ = _mmd2_gauss(0.6, 0.3)
    delta_wide = optimize.brentq(lambda d: _mmd2_gauss(d, 1.0)[0] - target, 0, 10)
    rows = []
    for tau, delta in [(0.3, 0.6), (1.0, delta_wide)]:
        yy, yc = gaussian_pair_sample(m, delta, tau1=tau, tau2=tau, seed=rng)
        mm, a = _mmd2_gauss(delta, tau)
        rows.append({"tau": tau, "shift": delta, "MMD^2": mm, "||mu||^2": a, "N-TE (closed form)": nte_gaussian(delta, tau1=tau, tau2=tau),
                     "MMD^2 (estimate)": mmd2(yy, yc, bandwidth=1.0, estimator="paired"), "N-TE (estimate)": nte(yy, yc, bandwidth=1.0)})
    return pd.DataFrame(rows)


def closed_form_study(m: int, n_reps: int, rng: np.random.Generator, *, shifts: Sequence[float] = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0),
                      gaps: Sequence[float] = (0.0, 0.1, 0.2, 0.4, 0.6, 0.8)) -> dict[str, pd.DataFrame]:
    """Mean N-TE estimate over replications against the closed forms (Gaussian shifts, Bernoulli rate gaps).

    Parameters
    ----------
    m : int
        Pairs per replication.
    n_reps : int
        Replications per point.
    rng : numpy.random.Generator
    shifts : sequence of float
        Location shifts of unit-variance Gaussians (bandwidth 1).
    gaps : sequence of float
        Gaps between two Bernoulli rates centred on 0.5 (``r = k(0, 1) = exp(-1/2)``).

    Returns
    -------
    dict
        ``{"Gaussian shift": table, "Bernoulli gap": table}``, each with ``parameter, closed form, mean, se``.
    """
    r01 = np.exp(-0.5)
    g_rows, b_rows = [], []
    for d in np.asarray(shifts, dtype=float):
        est = cfclot_statistics_batch(*gaussian_pair_sample(m, d, n_reps=n_reps, seed=rng), 0.0, bandwidth=1.0)["statistic"]
        g_rows.append({"parameter": d, "closed form": nte_gaussian(d), "mean": est.mean(), "se": est.std() / np.sqrt(n_reps)})
    for gap in np.asarray(gaps, dtype=float):
        p1, p2 = 0.5 + gap / 2, 0.5 - gap / 2
        yb = (rng.random((n_reps, m)) < p1).astype(float)
        ycb = (rng.random((n_reps, m)) < p2).astype(float)
        est = cfclot_statistics_batch(yb, ycb, 0.0, bandwidth=1.0)["statistic"]
        b_rows.append({"parameter": gap, "closed form": nte_bernoulli(p1, p2, r=r01), "mean": est.mean(), "se": est.std() / np.sqrt(n_reps)})
    return {"Gaussian shift": pd.DataFrame(g_rows), "Bernoulli gap": pd.DataFrame(b_rows)}


def closed_form_max_z(closed: Mapping[str, pd.DataFrame]) -> float:
    """Largest ``|mean - closed form| / se`` over every point of :func:`closed_form_study`.

    Parameters
    ----------
    closed : mapping
        Output of :func:`closed_form_study`.

    Returns
    -------
    float
    """
    return max(float(np.max(np.abs(df["mean"] - df["closed form"]) / np.maximum(df["se"], 1e-12))) for df in closed.values())


def plot_closed_form(closed: Mapping[str, pd.DataFrame], axes):
    """One panel per case of :func:`closed_form_study`: the mean estimate with a 2 s.e. band and the closed form.

    Parameters
    ----------
    closed : mapping
        Output of :func:`closed_form_study`.
    axes : sequence of matplotlib.axes.Axes
        One per case.

    Returns
    -------
    sequence of matplotlib.axes.Axes
        ``axes``.
    """
    for ax, (name, df) in zip(axes, closed.items(), strict=True):
        x = df["parameter"]
        line_with_band(x, df["mean"], df["mean"] - 2 * df["se"], df["mean"] + 2 * df["se"], label="estimate (mean, ±2 s.e.)", ax=ax)
        ax.plot(x, df["closed form"], "k--", lw=1, label="closed form")
        ax.set_xlabel(name)
        ax.set_ylabel("N-TE")
        ax.legend()
    return axes


def estimator_identities(m: int, n_reps: int, closed: Mapping[str, pd.DataFrame], rng: np.random.Generator) -> pd.Series:
    """The estimator's exact identities on one sample, its range over the closed-form study, and its mean under P = Q.

    Parameters
    ----------
    m : int
        Pairs.
    n_reps : int
        Replications under P = Q.
    closed : mapping
        Output of :func:`closed_form_study` (for the largest mean estimate).
    rng : numpy.random.Generator

    Returns
    -------
    pandas.Series
        Named quantities (deviations from the identities, the maximum, the null mean and its s.e.).
    """
    yy, yc = gaussian_pair_sample(m, 1.0, seed=rng)
    st = cfclot_statistics(yy, yc, 0.0, bandwidth=1.0)
    perm_units = rng.permutation(m)
    swap = rng.random(m) < 0.5
    ys, ycs = np.where(swap[:, None], yc, yy), np.where(swap[:, None], yy, yc)
    null_draws = cfclot_statistics_batch(*gaussian_pair_sample(m, 0.0, n_reps=n_reps, seed=rng), 0.0, bandwidth=1.0)["statistic"]
    return pd.Series({
        "N-TE": st["statistic"],
        "|N-TE - MTE / mean(D)|": abs(st["statistic"] - st["mte"] / st["mean_d"]),
        "|N-TE(y, y_cf) - N-TE(y_cf, y)|": abs(st["statistic"] - nte(yc, yy, bandwidth=1.0)),
        "|N-TE - N-TE(units permuted)|": abs(st["statistic"] - nte(yy[perm_units], yc[perm_units], bandwidth=1.0)),
        "N-TE after swapping half the pairs": nte(ys, ycs, bandwidth=1.0),
        "max N-TE over shifts (must be <= 1)": max(closed["Gaussian shift"]["mean"].max(), closed["Bernoulli gap"]["mean"].max()),
        "mean N-TE under P = Q": null_draws.mean(),
        "s.e. of that mean": null_draws.std() / np.sqrt(n_reps),
        "share of negative estimates under P = Q": float(np.mean(null_draws < 0)),
    })


def concentration_study(m_grid: Sequence[int], n_reps: int, rng: np.random.Generator) -> pd.DataFrame:
    """Deviation of the M-TE numerator from MMD^2 at N-TE = 0.1 against Hoeffding's bound (Theorem 4).

    Parameters
    ----------
    m_grid : sequence of int
        Sample sizes.
    n_reps : int
        Replications per sample size.
    rng : numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        One row per ``m``: the empirical 95% quantile of ``|MTE - MMD^2|``, the Hoeffding 95% ``t``, the
        share of replications beyond it and the spread of ``sqrt(m) N-TE``.
    """
    delta01 = shift_for_target_nte(0.1)
    true_mmd2 = nte_gaussian(delta01) * (4 - 2 * (1 / 3) ** 0.5)
    rows = []
    for m in m_grid:
        df = cfclot_statistics_batch(*gaussian_pair_sample(m, delta01, n_reps=n_reps, seed=rng), 0.1, bandwidth=1.0)
        dev = np.abs(df["mte"] - true_mmd2)
        t_h = 4.0 * np.sqrt(np.log(2 / 0.05) / (2 * (m // 2)))
        rows.append({"m": m, "empirical 95% |MTE - MMD^2|": np.quantile(dev, 0.95), "Hoeffding 95% t": t_h,
                     "P(|dev| >= t_H)": float(np.mean(dev >= t_h)), "sd(sqrt(m) N-TE)": df["statistic"].std() * np.sqrt(m)})
    return pd.DataFrame(rows)


def _log_m_axis(ax, ms: Sequence[int]) -> None:
    ax.set_xscale("log")
    ax.set_xlabel("m (pairs)")
    ax.set_xticks(list(ms), [str(m) for m in ms])
    ax.tick_params(axis="x", which="minor", labelbottom=False)


def plot_concentration(conc: pd.DataFrame, ax=None):
    """The empirical 95% deviation and Hoeffding's bound against ``m`` (log-log).

    Parameters
    ----------
    conc : pandas.DataFrame
        Output of :func:`concentration_study`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = line_with_band(conc["m"], conc["empirical 95% |MTE - MMD^2|"], label="empirical 95% quantile", ax=ax)
    line_with_band(conc["m"], conc["Hoeffding 95% t"], label="Hoeffding bound (Theorem 4)", ax=ax)
    ax.set_yscale("log")
    ax.set_ylabel("deviation")
    ax.set_xlabel("sample size m")
    ax.legend()
    _log_m_axis(ax, conc["m"])
    return ax


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C1, C2, C3, C4, C10 (and the sanity check S1 when the benchmark ran) of notebook 01 (N-TE and MMD).

    Parameters
    ----------
    results : mapping
        ``identities`` (:func:`estimator_identities`), ``closed`` (:func:`closed_form_study`),
        ``conc`` (:func:`concentration_study`), ``n_reps``, ``m_check`` and ``bench`` (the contents
        of ``benchmarks/results/bench_mmd.json``, or ``None``).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.

    Notes
    -----
    The bands of C2 and C4 are ``1 / m``: a ratio of two U-statistics is biased by ``O(1 / m)``, while
    Theorem 1 centres the estimator on the true N-TE at the ``1 / sqrt(m)`` scale.
    """
    claims.require(results, ["identities", "closed", "conc", "n_reps", "m_check", "bench"])
    identities, closed, conc, n_reps, m = results["identities"], results["closed"], results["conc"], results["n_reps"], results["m_check"]
    grid = pd.concat(closed, names=["case", "row"]).reset_index(level=0).reset_index(drop=True)
    mc = f"{n_reps} replications of m = {m}"

    def mean_iv(row: Any) -> vd.Interval:
        return vd.normal_interval(row["mean"], row["se"], method=f"s.e. over {mc}")

    top = grid.loc[grid["mean"].idxmax()]
    est_top = vd.decide_below(mean_iv(top), 1.0, inclusive=True, quantity="largest mean estimate of the grid")
    exact_cf = "closed forms over the shift and gap grids (exact)"
    c1 = _every([est_top,
                 vd.decide_within(vd.exact(grid["closed form"].max(), method=exact_cf), 0.0, 1.0, quantity="largest closed-form N-TE"),
                 vd.decide_within(vd.exact(grid["closed form"].min(), method=exact_cf), 0.0, 1.0, quantity="smallest closed-form N-TE")],
                "N-TE in [0, 1]: closed forms and the estimator")
    claims.claim("C1", "N-TE lies in [0, 1] (population); the estimator never exceeds 1 + O(1/sqrt(m)).",
                 paper="N-TE in [0, 1]", ours=f"closed forms in [{grid['closed form'].min():.3f}, {grid['closed form'].max():.3f}]; "
                 f"max mean estimate {top['mean']:.3f}; point masses give {nte(np.zeros(10), np.full(10, 100.0), bandwidth=1.0):.3f}",
                 decision=c1, note=_deciding_size(c1, (1.0,), n_reps, "replications per point"),
                 evidence=f"closed forms and {mc} per grid point (Gaussian shifts, Bernoulli gaps)",
                 quote="Since N-TE normalizes the treatment effects to lie within the [0, 1] range, we can interpret its results as the "
                       "degree of distributional differences corresponding to the RKHS.",
                 source="Sec. 1 (Introduction); Def. 4, Eq. 8")
    band = 1.0 / m
    null_iv = vd.normal_interval(identities["mean N-TE under P = Q"], identities["s.e. of that mean"], method=f"s.e. over {mc}, P = Q")
    at_null = vd.decide_within(null_iv, -band, band, quantity="mean estimate under P = Q")
    apart = [vd.decide_above(mean_iv(r), 0.0, quantity="mean estimate where P ≠ Q") for _, r in grid[grid["closed form"] > 0].iterrows()]
    claims.claim("C2", "N-TE = 0 iff P = Q: under P = Q the estimator's mean is 0 (within its O(1/m) bias); where P ≠ Q it is above 0.",
                 paper="Lemma 1", ours=f"P = Q: mean {null_iv.estimate:.2e} [{null_iv.low:.1e}, {null_iv.high:.1e}] (band ±{band:.1e}); "
                 f"P ≠ Q: smallest lower bound {min(p.interval.low for p in apart):.3f} over {len(apart)} grid points",
                 decision=(c2 := _every([at_null, *apart], "both directions of the 'iff'")),
                 note=_deciding_size(c2, (-band, 0.0, band), n_reps, "replications"),
                 evidence=f"{mc} under P = Q and at every grid point with P ≠ Q",
                 quote="We have [N-TE = 0] if and only if [P_n = P_{a_t′,n}] for characteristic kernel",
                 source="Lemma 1 (Sec. 4.2.1; proof in App. A.5)",
                 change="Lemma 1 is an 'if and only if': the rule now checks both directions (the mean under P = Q within the "
                        "estimator's O(1/m) bias of 0, and above 0 wherever P ≠ Q); the old rule asked only that the P = Q mean be "
                        "within 3 s.e. of 0, which a smaller run passes more easily")
    ident_err = float(max(identities.iloc[1:4]))
    claims.claim("C3", "Exact identities: N-TE = MTE / mean(D), symmetric in (Y, Y_cf), invariant to relabelling units.",
                 paper="exact (derived)", ours=f"max abs deviation {ident_err:.1e}",
                 decision=vd.decide_below(vd.exact(ident_err, method="three identities evaluated on one sample (exact)"), 1e-10,
                                          inclusive=True, quantity="largest deviation (floating-point tolerance)"),
                 evidence="three identities on one sample", kind="sanity check",
                 quote="N-TE_bar = MMD_u²(Y, Ycf) / mean_{i≠j}(D_ij). [...] Symmetry: the estimator is unchanged when Y and Ycf are swapped. "
                       "[...] It is invariant to jointly permuting units.",
                 source="notes §5 C3 (derived; the first identity is the paper's Eq. 25), not a claim of the paper")
    bias = [vd.decide_within(vd.normal_interval(r["mean"] - r["closed form"], r["se"], method=f"s.e. over {mc}"), -band, band,
                             quantity="bias of the mean estimate") for _, r in grid.iterrows()]
    c4 = _every(bias, "every grid point", pick=lambda d: max(abs(d.interval.low), abs(d.interval.high)))
    claims.claim("C4", "The estimator is consistent for the closed-form N-TE (Gaussian shifts, Bernoulli gaps): its bias is within O(1/m).",
                 paper="Theorem 1 (closed forms: notes)",
                 ours=f"largest |bias| interval bound {max(abs(c4.interval.low), abs(c4.interval.high)):.2e} (band ±{band:.1e}); "
                      f"max |mean - truth| / s.e. = {closed_form_max_z(closed):.2f}",
                 decision=c4, evidence=f"{mc} per grid point, {len(grid)} points",
                 note=_deciding_size(c4, (-band, band), n_reps, "replications per point"),
                 quote="We show that the empirical estimator of our N-TE, i.e. [N-TE = ε] has an asymptotic gaussian distribution",
                 source="Sec. 4.1 (Theorem 1); closed forms: notes §5 C4",
                 change="the old rule passed when every point was within 4 s.e. of its closed form, which fewer replications pass "
                        "more easily; Theorem 1 centres the estimator on the true N-TE, so every point's bias interval must now lie "
                        "within the O(1/m) bias a ratio of U-statistics has")
    exceed = [vd.decide_below(_rate_interval(r["P(|dev| >= t_H)"], n_reps, f"replications at m = {int(r['m'])}"), 0.05, inclusive=True,
                              quantity="share of |MTE - MMD^2| beyond the 5% Hoeffding bound, at each m")
              for _, r in conc.iterrows()]
    claims.claim("C10", "Hoeffding's bound (Theorem 4) holds for the M-TE numerator.",
                 paper="P(|U - EU| >= t) <= 2 exp(-2 floor(m/2) t^2 / (4K)^2)",
                 ours=f"exceedance at the 5% bound: max {conc['P(|dev| >= t_H)'].max():.3f}; bound / empirical quantile ≈ "
                      f"{np.median(conc['Hoeffding 95% t'] / conc['empirical 95% |MTE - MMD^2|']):.0f}x",
                 decision=(c10 := _every(exceed, "every m")), note=_deciding_size(c10, (0.05,), n_reps, "replications per m"), evidence=f"m in {list(conc['m'])}, {n_reps} replications each (valid but loose)",
                 quote="Theorem 4 (Large deviation for U-statistic). If the function [h] is bounded, i.e. [a ≤ h ≤ b], we have "
                       "[Pr(|U_n − η| ≥ t) ≤ 2 exp(−2⌊n/m⌋t²/(b−a)²)]",
                 source="App. A.3, Theorem 4 (Eq. 19)")
    keys = ["C1", "C2", "C3", "C4", "C10"]
    if results["bench"] is not None:
        hb = results["bench"]["mmd_vs_hyppo"]
        timed = f"median CPU seconds of the benchmark harness ({hb.get('speedup_basis', 'fresh processes')}); it records no spread"
        s1 = _every([vd.decide_below(vd.exact(hb["statistic_abs_diff"], method="the two statistics on the same data"), 1e-8, inclusive=True,
                                     quantity="|statistic difference|"),
                     vd.decide_above(vd.exact(hb["speedup"], method=timed), 200.0, inclusive=True, quantity="speed-up over hyppo")],
                    "same statistic and at least 200x faster")
        claims.claim("S1", "cflib's MMD permutation test equals hyppo's and is at least 200x faster (issue 8 bar, not a paper claim).",
                     paper="not in the paper", ours=f"{hb['speedup']:.0f}x faster; statistic diff {hb['statistic_abs_diff']:.1e}; "
                     f"p-values {hb['pvalue_cflib']:.3f} vs {hb['pvalue_hyppo']:.3f} ({hb['pvalue_diff_in_mc_se']:.1f} Monte-Carlo s.e. apart)",
                     decision=s1, kind="sanity check",
                     evidence=f"benchmarks/results/bench_mmd.json, n = m = {hb['n']}, d = {hb['d']}, {hb['n_permutations']} permutations, shared 2-core machine",
                     quote="same statistic up to float error, p-values agreeing within Monte-Carlo error, and cflib at least 200× faster on 2 CPU cores",
                     source="issue 8 (Build); a check of cflib against a peer, not in the paper")
        keys.append("S1")
    return claims.rows(keys)

# ---------------------------------------------------------------------------- notebook 02
def boundary_zscores(eps_grid: Sequence[float], m: int, n_reps: int, alpha: float, rng: np.random.Generator) -> dict[float, pd.DataFrame]:
    """Simulated CF-CLOT replications at the boundary N-TE = epsilon for every epsilon (Theorem 1).

    Parameters
    ----------
    eps_grid : sequence of float
        Tolerances.
    m : int
        Pairs per replication.
    n_reps : int
    alpha : float
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``{epsilon: table of} :func:`cflib.stats.closeness.simulate_cfclot```.
    """
    return {eps: simulate_cfclot(m, eps, eps, n_reps=n_reps, alpha=alpha, seed=rng) for eps in eps_grid}


def ks_normality(qq: Mapping[float, pd.DataFrame]) -> dict[tuple[float, str], float]:
    """Kolmogorov-Smirnov p-values of the z-scores (paper's and delta-method s.e.) against N(0, 1).

    Parameters
    ----------
    qq : mapping
        Output of :func:`boundary_zscores`.

    Returns
    -------
    dict
        ``{(epsilon, "paper" | "delta"): p-value}``.
    """
    return {(eps, v): stats.kstest(df[f"z_{v}"], "norm").pvalue for eps, df in qq.items() for v in ("paper", "delta")}


def plot_zscore_qq(qq: Mapping[float, pd.DataFrame], m: int):
    """QQ plots of the one-sided p-values ``1 - Phi(z)`` against the uniform law, one panel per epsilon.

    Parameters
    ----------
    qq : mapping
        Output of :func:`boundary_zscores`.
    m : int
        Its sample size (for the titles).

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import qq_uniform

    _, axes = subplots(1, len(qq), width=4)
    axes = np.atleast_1d(axes)
    for ax, (eps, df) in zip(axes, qq.items(), strict=True):
        for v in ("paper", "delta"):
            qq_uniform(stats.norm.sf(df[f"z_{v}"]), label=f"{v} $\\hat\\sigma$", ax=ax)
        ax.set_title(f"N-TE = $\\epsilon$ = {eps}, m = {m}")
        handles = dict(zip(*reversed(ax.get_legend_handles_labels()), strict=True))  # one entry per label
        ax.legend(handles.values(), handles.keys(), fontsize=8)
    return axes


def type1_study(eps_grid: Sequence[float], m_grid: Sequence[int], n_reps: int, alpha: float, rng: np.random.Generator, *,
                reuse: Mapping[float, pd.DataFrame] | None = None, reuse_m: int | None = None) -> pd.DataFrame:
    """Rejection rate at the boundary N-TE = epsilon per (epsilon, m), for both standard errors (Theorem 2).

    Parameters
    ----------
    eps_grid : sequence of float
    m_grid : sequence of int
    n_reps : int
    alpha : float
    rng : numpy.random.Generator
    reuse : mapping, optional
        Replications already drawn at ``reuse_m`` (:func:`boundary_zscores`), used instead of new ones.
    reuse_m : int, optional

    Returns
    -------
    pandas.DataFrame
        One row per (epsilon, m): rejection rates ``paper`` and ``delta``, the spread of ``sqrt(m) T``
        and the mean of both standard errors.
    """
    rows = []
    for eps in eps_grid:
        for m in m_grid:
            df = reuse[eps] if reuse is not None and m == reuse_m else simulate_cfclot(m, eps, eps, n_reps=n_reps, alpha=alpha, seed=rng)
            rows.append({"epsilon": eps, "m": m, "paper": df["reject_paper"].mean(), "delta": df["reject_delta"].mean(),
                         "sd(sqrt(m) T)": df["statistic"].std() * np.sqrt(m), "mean sigma paper": df["sigma_paper"].mean(),
                         "mean sigma delta": df["sigma_delta"].mean()})
    return pd.DataFrame(rows)


def plot_type1(type1: pd.DataFrame, alpha: float, n_reps: int, ax=None):
    """Rejection rate at the boundary against ``m``, with the band ``alpha ± 2`` binomial s.e.

    Parameters
    ----------
    type1 : pandas.DataFrame
        Output of :func:`type1_study`.
    alpha : float
    n_reps : int
        Replications per point (for the binomial band).
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    binom_se = np.sqrt(alpha * (1 - alpha) / n_reps)
    for eps, sub in type1.groupby("epsilon", sort=False):
        for v, ls in (("paper", "--"), ("delta", "-")):
            ax.plot(sub["m"], sub[v], ls, marker="o", label=f"$\\epsilon$ = {eps}, {v}")
    ax.axhspan(alpha - 2 * binom_se, alpha + 2 * binom_se, color="0.85", label="α ± 2 binomial s.e.")
    ax.set_ylabel("rejection rate at N-TE = ε")
    ax.set_xlabel("sample size m")
    ax.legend(fontsize=8)
    _log_m_axis(ax, sorted(type1["m"].unique()))
    return ax


def _power_theory(m: int, eps_prime: float, eps: float, sd: float, alpha: float) -> float:
    """Theorem 3's normal approximation of the power (scales corrected, notes Sec. 2.7)."""
    return stats.norm.sf(stats.norm.ppf(1 - alpha) - np.sqrt(m) * (eps_prime - eps) / sd)


def power_study(m_grid: Sequence[int], eps_primes: Sequence[float], eps: float, n_reps: int, alpha: float, rng: np.random.Generator) -> pd.DataFrame:
    """Rejection rate under N-TE = eps' > eps per (m, eps'), with the normal approximation of Theorem 3.

    Parameters
    ----------
    m_grid : sequence of int
    eps_primes : sequence of float
        True N-TE of the alternatives.
    eps : float
        Tolerance tested.
    n_reps : int
    alpha : float
    rng : numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        One row per (m, eps'): ``power`` (delta-method s.e.) and ``theory``.
    """
    rows = []
    for m in m_grid:
        for e1 in eps_primes:
            df = simulate_cfclot(m, e1, eps, n_reps=n_reps, alpha=alpha, seed=rng)
            sd = df["statistic"].std() * np.sqrt(m)
            rows.append({"m": m, "eps'": e1, "power": df["reject_delta"].mean(), "theory": _power_theory(m, e1, eps, sd, alpha)})
    return pd.DataFrame(rows)


def plot_power(power: pd.DataFrame, eps: float, ax=None):
    """Power against ``m`` per eps' (solid) with the normal approximation (dotted).

    Parameters
    ----------
    power : pandas.DataFrame
        Output of :func:`power_study`.
    eps : float
        The tolerance tested.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    for i, (e1, sub) in enumerate(power.groupby("eps'", sort=False)):
        ax.plot(sub["m"], sub["power"], marker="o", color=f"C{i}", label=f"ε' = {e1}")
        ax.plot(sub["m"], sub["theory"], ":", color=f"C{i}")
    ax.set_ylabel(f"rejection rate (ε = {eps})")
    ax.set_xlabel("sample size m")
    ax.legend(fontsize=8)
    ax.set_title("dotted: normal approximation")
    _log_m_axis(ax, sorted(power["m"].unique()))
    return ax


def power_point(m: int, eps_prime: float, eps: float, n_reps: int, alpha: float, rng: np.random.Generator) -> dict[str, float]:
    """One design point of the power study (the values the sweep ``closeness-power`` collects).

    Parameters
    ----------
    m : int
    eps_prime : float
        True N-TE.
    eps : float
        Tolerance tested.
    n_reps : int
    alpha : float
    rng : numpy.random.Generator

    Returns
    -------
    dict
        ``power_point`` (delta-method s.e.), ``power_paper_point`` (the paper's), ``power_theory_point``
        and ``mean_nte_point``.
    """
    pt = simulate_cfclot(m, eps_prime, eps, n_reps=n_reps, alpha=alpha, seed=rng)
    sd = pt["statistic"].std() * np.sqrt(m)
    return {"power_point": float(pt["reject_delta"].mean()), "power_paper_point": float(pt["reject_paper"].mean()),
            "power_theory_point": float(_power_theory(m, eps_prime, eps, sd, alpha)), "mean_nte_point": float(pt["statistic"].mean())}


#: The four calibrations of the epsilon = 0 test compared in notebook 02.
EPS0_METHODS = ("signflip", "bootstrap", "bootstrap-literal", "normal")


def eps0_study(m: int, shift: float, n_reps: int, n_boot: int, rng: np.random.Generator) -> pd.DataFrame:
    """Type-I error (P = Q) and power (a location shift) of the four calibrations of the epsilon = 0 test.

    Parameters
    ----------
    m : int
        Pairs.
    shift : float
        Location shift of the alternative.
    n_reps : int
    n_boot : int
        Resampling draws per test.
    rng : numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        Indexed by method: ``type-I (P = Q)`` and ``power (shift <shift>)``.
    """
    null = {k: [] for k in EPS0_METHODS}
    alt = {k: [] for k in EPS0_METHODS}
    for _ in range(n_reps):
        y, y_cf = gaussian_pair_sample(m, 0.0, seed=rng)
        y1, y1_cf = gaussian_pair_sample(m, shift, seed=rng)
        for k in EPS0_METHODS:
            null[k].append(cfclot_test(y, y_cf, 0.0, method=k, bandwidth=1.0, n_boot=n_boot, seed=rng).reject)
            alt[k].append(cfclot_test(y1, y1_cf, 0.0, method=k, bandwidth=1.0, n_boot=n_boot, seed=rng).reject)
    return pd.DataFrame({"type-I (P = Q)": {k: np.mean(v) for k, v in null.items()},
                         f"power (shift {shift})": {k: np.mean(v) for k, v in alt.items()}})


def boundary_bootstrap(eps_grid: Sequence[float], m: int, n_reps: int, n_boot: int, rng: np.random.Generator) -> pd.DataFrame:
    """Rejection rate of the unit-resampling bootstrap (``method="bootstrap"``, epsilon > 0) at the boundary.

    Parameters
    ----------
    eps_grid : sequence of float
    m : int
    n_reps : int
    n_boot : int
    rng : numpy.random.Generator

    Returns
    -------
    pandas.DataFrame
        One row per epsilon.
    """
    rows = []
    for eps in eps_grid:
        delta = shift_for_target_nte(eps)
        rej = [cfclot_test(*gaussian_pair_sample(m, delta, seed=rng), eps, method="bootstrap", bandwidth=1.0,
                           n_boot=n_boot, seed=rng).reject for _ in range(n_reps)]
        rows.append({"epsilon": eps, "m": m, "bootstrap rejection rate": np.mean(rej), "replications": n_reps})
    return pd.DataFrame(rows)


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C5, C5b, C6, C7 and C9 of notebook 02 (calibration and power).

    Parameters
    ----------
    results : mapping
        ``qq`` (:func:`boundary_zscores`), ``type1`` (:func:`type1_study`), ``inside_rate`` (rejection
        rate strictly inside the null), ``power`` (:func:`power_study`), ``eps0_table`` (:func:`eps0_study`),
        and the parameters ``alpha, eps_grid, m_grid, n_reps, qq_m, power_m_grid, power_reps, eps0_reps,
        eps0_m, n_boot``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.

    Notes
    -----
    A level is "held" in Bradley's liberal sense (:data:`cflib.verdicts.BRADLEY_BAND`): a type-I error in ``[alpha / 2, 3 alpha / 2]``.
    The z-scores' law is "N(0, 1)" when its Kolmogorov distance from N(0, 1) is at most ``alpha / 2``: the
    rejection rate at the boundary is one minus the z-scores' CDF at ``z_{1 - alpha}``, so that distance keeps
    the level inside Bradley's band.
    """
    claims.require(results, ["qq", "type1", "inside_rate", "power", "eps0_table", "alpha", "eps_grid", "m_grid", "n_reps", "qq_m",
                             "power_m_grid", "power_reps", "eps0_reps", "eps0_m", "n_boot"])
    r = results
    alpha, eps_grid, n_reps, qq_m = r["alpha"], list(r["eps_grid"]), r["n_reps"], r["qq_m"]
    band = vd.level_band(alpha)
    dist = [vd.decide_below(_ks_distance(r["qq"][e]["z_delta"], where=f"N-TE = ε = {e}"), alpha / 2, inclusive=True,
                            quantity="Kolmogorov distance of the delta-method z-scores from N(0, 1), at each ε") for e in eps_grid]
    c5 = _every(dist, "every ε")
    worst = max(dist, key=lambda d: d.interval.estimate)
    c5_note = ""
    if c5.verdict == vd.UNDECIDED:
        # exactly normal z-scores have an expected Kolmogorov distance of about 0.8687 / sqrt(n); the DKW half-width adds
        # sqrt(log(40) / (2 n)): the interval lies below alpha / 2 once their sum does
        n_dec = int(np.ceil(((np.sqrt(np.log(40) / 2) + 0.8687) / (alpha / 2)) ** 2))
        c5_note = (f"Largest observed distance {worst.interval.estimate:.3f}. If the z-scores are exactly N(0, 1) at m = {qq_m}, "
                   f"about {n_dec} replications per ε (now {n_reps}) decide it; params/full.yaml runs that many.")
    claims.claim("C5", "Theorem 1: at N-TE = eps > 0 the z-score is asymptotically N(0, 1).",
                 paper="asymptotic normality", ours="Kolmogorov distance (delta s.e.) = " + ", ".join(f"{d.interval.estimate:.3f}" for d in dist),
                 decision=c5, evidence=f"{n_reps} z-scores per ε at m = {qq_m} (N-TE = ε); distance at most α/2 = {alpha / 2:g}",
                 note=c5_note,
                 quote="Theorem 1 (N-TE asymptotic gaussian distribution.). If [N-TE = ε] with [ε ∈ (0, 1]], we have "
                       "[√m (N-TE_bar − ε) →d N(0, σ²)]",
                 source="Sec. 4.1, Theorem 1 (Eq. 12; proof in App. A.6)",
                 change="the old rule passed when a Kolmogorov-Smirnov test did not reject at 0.01, which fewer replications pass "
                        "more easily; the distance of the z-scores' law from N(0, 1) now has a DKW interval and must be at most α/2, "
                        "the error that keeps the level of the test built on it within Bradley's band")
    at = r["type1"].set_index(["epsilon", "m"])
    m_ref = qq_m if qq_m in r["m_grid"] else max(r["m_grid"])
    big = max(eps_grid)
    paper_iv = _rate_interval(at.loc[(big, m_ref), "paper"], n_reps)
    delta_iv = _rate_interval(at.loc[(big, m_ref), "delta"], n_reps)
    c5b = _every([vd.decide_above(paper_iv, alpha, quantity=f"type-I error with the paper's σ̂ at ε = {big}"),
                  vd.decide_within(delta_iv, *band, quantity=f"type-I error with the delta-method σ̂ at ε = {big}")],
                 "the paper's σ̂ anti-conservative and the delta-method σ̂ calibrated")
    claims.claim("C5b", "The paper's sigma-hat (Eq. 13) ignores the denominator and is anti-conservative for larger eps; the delta-method one is calibrated.",
                 paper="(notes, derived) paper 0.064 vs delta 0.050 at eps = 0.3",
                 ours=f"paper {paper_iv.estimate:.3f} [{paper_iv.low:.3f}, {paper_iv.high:.3f}] vs delta {delta_iv.estimate:.3f} "
                      f"[{delta_iv.low:.3f}, {delta_iv.high:.3f}] at eps = {big}, m = {m_ref}",
                 decision=c5b, note=_deciding_size(c5b, (alpha, *band), n_reps, "replications"), evidence=f"{n_reps} replications at N-TE = ε = {big}, m = {m_ref}; calibrated: Bradley's [{band[0]:g}, {band[1]:g}]",
                 quote="The paper's σ equals σ_δ only when ε → 0. [...] In a prototype simulation (§5, item C5b) the paper's variance is "
                       "anti-conservative for larger ε.",
                 source="notes §2.6 (the proof of Theorem 1 treats the denominator as a constant), not a claim of the paper",
                 kind=_OWN,
                 change=_OWN_CHANGE.format(what="the anti-conservative σ̂ is the notes' derivation §2.6") + "; before, the band α ± 2.2 "
                        "binomial s.e. was the sampling noise itself and shrank with the replications; 'calibrated' "
                        "is now Bradley's [α/2, 3α/2] and 'anti-conservative' a type-I error above α")
    bounds = [vd.decide_within(_rate_interval(at.loc[(e, m_ref), "delta"], n_reps, f"replications at N-TE = ε = {e}"), *band,
                               quantity="type-I error at N-TE = ε, at each ε") for e in eps_grid]
    inside = vd.decide_below(_rate_interval(r["inside_rate"], n_reps), alpha, inclusive=True, quantity="type-I error at N-TE = ε/2")
    c6 = _every([*bounds, inside], "every ε and inside the null")
    claims.claim("C6", "Theorem 2: the rejection rate at the boundary tends to alpha; strictly inside the null it is at most alpha.",
                 paper=f"alpha = {alpha}",
                 ours=f"delta rates {', '.join(f'{d.interval.estimate:.3f}' for d in bounds)} at m = {m_ref}; inside null {r['inside_rate']:.3f}",
                 decision=c6, note=_deciding_size(c6, band, n_reps, "replications"),
                 evidence=f"{n_reps} replications per ε at m = {m_ref}; Bradley's [{band[0]:g}, {band[1]:g}]; inside: N-TE = ε/2 at m = {max(r['m_grid'])}",
                 quote="Under null hypothesis [H0: N-TE ≤ ε], Type-I error is bounded by [α], by setting the testing threshold as the "
                       "[(1 − α)]-quantile of the asymptotic null distribution of [N-TE_bar] in Theorem 1. That is: "
                       "[Pr(N-TE_bar > τ_α | H0) → α, m → ∞]",
                 source="Sec. 4.1, Theorem 2",
                 change="the band α ± 2.2 binomial s.e. was the sampling noise itself; the boundary rate must now lie in Bradley's "
                        "[α/2, 3α/2], and inside the null the paper's words bound the type-I error by α (the old 'at most 0.01', "
                        "i.e. tending to 0, was the notes' derivation)")
    power, power_reps = r["power"], r["power_reps"]
    m_lo, m_hi = min(r["power_m_grid"]), max(r["power_m_grid"])
    grows = []
    for e1, sub in power.groupby("eps'", sort=True):
        lo, hi = (float(sub.loc[sub["m"] == m, "power"].iloc[0]) for m in (m_lo, m_hi))
        rise = _difference(hi, _binomial_se(hi, power_reps), lo, _binomial_se(lo, power_reps), same_units=False,
                           what=f"{power_reps} replications per point, N-TE = {e1}")
        # a power of 1 already at the smallest m has reached its limit: nothing is left to rise
        grows.append(vd.decide_above(rise, 0.0, inclusive=lo == 1.0,
                                     quantity=f"power at m = {m_hi} minus power at m = {m_lo} (at least 0 when both are 1), at each ε'"))
    gap = float(np.max(np.abs(power["power"] - power["theory"])))
    eps_primes = [float(e) for e in sorted(power["eps'"].unique())]
    top = power[power["m"] == m_hi]
    claims.claim("C7", "Theorem 3: for every eps' > eps the rejection rate rises with m (consistency: it tends to 1).",
                 paper="consistency",
                 ours=f"power at m = {m_hi}: {top['power'].min():.2f}-{top['power'].max():.2f}, at m = {m_lo}: "
                      f"{power.loc[power['m'] == m_lo, 'power'].min():.2f}-{power.loc[power['m'] == m_lo, 'power'].max():.2f}; "
                      f"max |power - normal approximation| = {gap:.2f}",
                 decision=(c7 := _every(grows, "every ε'")), note=_deciding_size(c7, (0.0,), power_reps, "replications per point"),
                 evidence=f"{power_reps} replications per point at m = {m_lo} and m = {m_hi}, ε = {eps_grid[0]}, ε' in {eps_primes}",
                 quote="Under alternative hypothesis [H1: N-TE ≥ ε], the test always successfully rejects the null hypothesis based on "
                       "Theorem 1. That is: [Pr(N-TE_bar > τ_α | H1) → 1, m → ∞]",
                 source="Sec. 4.1, Theorem 3 (proof in App. A.7)",
                 change="the paper's Theorem 3 says the power tends to 1 as m grows; the old rule added thresholds the paper does not "
                        "state (power at least 0.9 at the largest m for ε' >= 0.2, within 0.15 of the normal approximation); the rule "
                        "now asks the power to rise from the smallest to the largest m for every ε'")
    eps0, eps0_reps = r["eps0_table"], r["eps0_reps"]
    rate0 = {k: _rate_interval(eps0.loc[k, "type-I (P = Q)"], eps0_reps) for k in EPS0_METHODS}
    power_col = eps0.columns[1]
    parts = [vd.decide_below(rate0["signflip"], band[1], inclusive=True, quantity="type-I error of the sign-flip test"),
             vd.decide_below(rate0["normal"], alpha, quantity="type-I error of the Eq. 13 threshold at ε = 0"),
             vd.decide_below(rate0["bootstrap-literal"], alpha, quantity="type-I error of the literal Eq. 11 weights"),
             vd.decide_below(_rate_interval(eps0.loc["bootstrap-literal", power_col], eps0_reps), alpha,
                             quantity=f"rejection rate of the literal Eq. 11 weights under the alternative ({power_col})")]
    c9 = _every(parts, "every part")
    claims.claim("C9", "eps = 0 is an MMD two-sample test: a valid resampling null holds the level; Eq. 13 is conservative and the literal Eq. 11 weights never reject.",
                 paper="(notes) bootstrap 0.04, normal 0.00, literal 0.00 under P = Q",
                 ours="; ".join(f"{k} {eps0.loc[k, 'type-I (P = Q)']:.3f}/{eps0.loc[k, power_col]:.2f}" for k in EPS0_METHODS) + " (type-I/power)",
                 decision=c9, note=_deciding_size(c9, (band[1], alpha), eps0_reps, "replications"),
                 evidence=f"{eps0_reps} replications at m = {r['eps0_m']}, {r['n_boot']} draws per test; level held: at most 3α/2 (Bradley)",
                 quote="In this type of task, CF-CLOT can be implemented using MMD, and we will further discuss this special case in Appendix A.4.",
                 source="Sec. 4.2.1 (Eq. 14); the calibrations compared are the notes' (§2.8, §5 C9)", kind=_OWN,
                 change=_OWN_CHANGE.format(what="the paper says only that ε = 0 is an MMD two-sample test; the level of a resampling "
                                           "null, the conservative Eq. 13 threshold and the literal Eq. 11 weights are the notes' "
                                           "measurements") + "; before, 'controls type-I' was a rate within 2.5 binomial s.e. of α and 'very conservative' / 'never reject' a rate "
                        "at most 0.01, hand-set; now the sign-flip level is held when its rate is at most 3α/2 (Bradley), 'conservative' "
                        "is a rate below α, and 'never rejects' is a rate below α under the null and under the alternative")
    return claims.rows(["C5", "C5b", "C6", "C7", "C9"])

# ---------------------------------------------------------------------------- notebook 03
def audit_tabular(task: Any, arch: str, *, n_train: int, n_test: int, epochs: int, width: int, epsilons: Sequence[float],
                  max_m: int | None = 1000, n_boot: int = 500, seed: int = 0, device: str = "auto") -> AuditResult:
    """The SAA / SSA / SFA-eps protocol (:func:`audit_feature_sets`) for one data set and one model family.

    Parameters
    ----------
    task : cflib.data.tabular_tasks.TabularTask
        The data set (:func:`cflib.data.tabular_tasks.tabular_task`).
    arch : {"mlp", "cnn", "lstm", "transformer"}
        Model family (:func:`cflib.models.tabular.make_tabular_pipeline`).
    n_train, n_test : int
        Rows of the split; at most 70% of the data set trains.
    epochs, width : int
        Training epochs and hidden width.
    epsilons : sequence of float
        Tolerances of the SFA variants.
    max_m, n_boot : int
        Units per CF-CLOT test and sign flips at epsilon 0.
    seed : int
        Seed of the split, the models and the screening.
    device : str

    Returns
    -------
    AuditResult
    """
    from ..models.tabular import make_tabular_pipeline

    n_tr = min(n_train, int(0.7 * len(task.frame)))
    X_tr, y_tr, X_te, y_te = task.split(n_tr, min(n_test, len(task.frame) - n_tr), seed=seed)

    def make(cols: list[str]) -> Any:
        return make_tabular_pipeline(arch, [c for c in task.categorical if c in cols], [c for c in task.numeric if c in cols],
                                     seed=seed, device=device, epochs=epochs, width=width)

    return audit_feature_sets(make, X_tr, y_tr, X_te, y_te, task.features, task.sensitive, epsilons, seed=seed, max_m=max_m, n_boot=n_boot)


def tasks_table(tasks: Mapping[str, Any]) -> pd.DataFrame:
    """One row per audit task: size, outcome, positive rate, sensitive attributes and the data set it stands for.

    Parameters
    ----------
    tasks : mapping
        ``{name: TabularTask}``.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame([{"data set": t.name, "rows": len(t.frame), "outcome": t.target_name, "positive rate": t.target.mean(),
                          "sensitive": ", ".join(t.sensitive), "other features": len(t.features) - len(t.sensitive), "stands for": t.stands_for}
                         for t in tasks.values()])


def plot_audit_grid(audits: Mapping[tuple[str, str], AuditResult], datasets: Sequence[str], archs: Sequence[str]):
    """One panel per data set (rows) and model (columns): accuracy and unfairness of every variant.

    Parameters
    ----------
    audits : mapping
        ``{(data set, model): AuditResult}``.
    datasets, archs : sequence of str
        Row and column order.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    _, axes = subplots(len(datasets), len(archs), width=3.3, height=2.7, squeeze=False)
    for i, name in enumerate(datasets):
        for j, arch in enumerate(archs):
            ax = audits[(name, arch)].plot(ax=axes[i, j])
            ax.set_title(f"{name} / {arch}", fontsize=9)
            if (i, j) != (0, 0):
                ax.get_legend().remove()
    return axes


def audit_tables(audits: Mapping[tuple[str, str], AuditResult], epsilons: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Accuracy and unfairness, audits (rows) by variant (columns: SAA, SSA, SFA-eps in order).

    Parameters
    ----------
    audits : mapping
        ``{(data set, model): AuditResult}``.
    epsilons : sequence of float
        The SFA tolerances.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
    """
    results = pd.concat({k: a.summary().set_index("variant") for k, a in audits.items()}, names=["data", "model"])
    order = ["SAA", "SSA"] + [f"SFA-{e:g}" for e in epsilons]
    return results["accuracy"].unstack("variant")[order], results["unfairness"].unstack("variant")[order]


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C8, Fig1-3a, Fig1-3b, Fig1-3b-SSA, Fig1-3c and C11 of notebook 03 (the SAA / SSA / SFA audits).

    Parameters
    ----------
    results : mapping
        ``screenings`` (``{(data set, model): ScreeningResult}``), ``n_sensitive`` (``{data set: number of
        sensitive attributes}``), ``acc`` and ``unf`` (:func:`audit_tables`), ``n_train``, ``datasets``, ``archs``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(results, ["screenings", "n_sensitive", "acc", "unf", "n_train", "datasets", "archs"])
    screenings, acc, unf = results["screenings"], results["acc"], results["unf"]
    n_aud = len(screenings)
    audits = f"{n_aud} audits ({len(results['datasets'])} data sets x {len(results['archs'])} models)"
    nested = [s.is_nested() for s in screenings.values()]
    share = vd.exact(float(np.mean(nested)), method=f"nesting checked on each of the {n_aud} audits run (a property of each screening, no estimate)")
    claims.claim("C8", "Flagged sets nest in epsilon: F(0.3) ⊆ F(0.1) ⊆ F(0), so SFA accuracy and unfairness are monotone in epsilon.",
                 paper="qualitative (Sec. 5.1)", ours=f"nested in {sum(nested)}/{n_aud} audits",
                 decision=vd.decide_within(share, 1.0, 1.0, quantity="share of audits whose flagged sets nest"), kind="sanity check",
                 evidence=f"{audits}; delta-method s.e. at ε > 0, sign flips at ε = 0",
                 quote="For fixed data, with the paper's σ̂ (independent of ε), rejection at ε2 implies rejection at every ε1 < ε2. "
                       "So flagged sets nest: F(0.3) ⊆ F(0.1) ⊆ F(0).",
                 source="notes §5 C8: nesting holds by construction with the paper's σ̂; this checks that cflib's delta-method σ̂ "
                        "and sign-flip test at ε = 0 keep it")
    d_acc = (acc["SAA"] - acc["SSA"]).to_numpy(dtype=float)
    claims.claim("Fig1-3a", "SAA is more accurate than SSA (the paper: SAA best, SSA and SFA-0/0.1 'similar but poorer').",
                 paper="qualitative (Figs. 1-3, 5)",
                 ours=f"SAA - SSA accuracy: mean {d_acc.mean():.3f} over {n_aud} audits, positive in {int((d_acc > 0).sum())}",
                 decision=(fa := vd.decide_above(vd.mean_interval(d_acc, unit="audits"), 0.0, quantity="mean SAA - SSA accuracy over audits")),
                 note=_deciding_size(fa, (0.0,), n_aud, "audits"),
                 evidence=f"{audits}, accuracy on each audit's held-out units; t interval over audits",
                 quote="SAA achieved the best accuracy results across all datasets, while SFA-[ε]=0.3 performed similarly, except for "
                       "the Obesity dataset. In contrast, SSA, SFA-[ε]=0.1, and SFA-[ε] yielded similar but poorer results.",
                 source="Sec. 5.1.2 (Figs. 1-3)",
                 change="the old rule read 'SAA within 0.01 of the best variant in 75% of audits', a tolerance and share the paper "
                        "does not state; the paper's words set SAA against SSA ('similar but poorer'), so the rule is now the mean "
                        "SAA - SSA accuracy over audits above 0")
    d_unf = (unf["SAA"] - unf["SFA-0"]).to_numpy(dtype=float)
    claims.claim("Fig1-3b", "SFA-0 is fairer than SAA: CF-CLOT at eps = 0 removes the attributes that carry the unfairness.",
                 paper="qualitative", ours=f"SAA - SFA-0 unfairness: mean {d_unf.mean():.4f} over {n_aud} audits "
                 f"(SFA-0 {float(unf['SFA-0'].mean()):.4f}, SAA {float(unf['SAA'].mean()):.4f})",
                 decision=(fb := vd.decide_above(vd.mean_interval(d_unf, unit="audits"), 0.0, quantity="mean SAA - SFA-0 unfairness over audits")),
                 note=_deciding_size(fb, (0.0,), n_aud, "audits"),
                 evidence=f"{audits}; unfairness = mean |Δp| under the flip; t interval over audits",
                 quote="From a fairness perspective, SSA, SFA-[ε]=0.1, and SFA-[ε] achieved fairness, while SAA and SFA-[ε]=0.3 "
                       "exhibited comparable degrees of unfairness.",
                 source="Sec. 5.1.2 (Figs. 1-3)",
                 change="the old claim joined SSA's zero unfairness, which holds by construction (now the sanity check Fig1-3b-SSA), "
                        "with SFA-0 <= SAA in every audit; the rule now reads the part that CF-CLOT decides: SFA-0 less unfair than SAA")
    ssa = float(np.abs(unf["SSA"].to_numpy(dtype=float)).max())
    claims.claim("Fig1-3b-SSA", "SSA is fair: a model that never reads the sensitive attributes does not move under their flip.",
                 paper="qualitative", ours=f"largest SSA unfairness {ssa:.1e} over {n_aud} audits",
                 decision=vd.decide_below(vd.exact(ssa, method=f"computed on each of the {n_aud} audits"), 0.0, inclusive=True,
                                          quantity="largest SSA unfairness"),
                 kind="sanity check", evidence=f"{audits}; holds by construction",
                 quote="From a fairness perspective, SSA, SFA-[ε]=0.1, and SFA-[ε] achieved fairness",
                 source="Sec. 5.1.2 (Figs. 1-3)")
    flags = []
    for (name, arch), s in screenings.items():
        rows = s.table[np.isclose(s.table["epsilon"], 0.1)]
        for _, row in rows.iterrows():
            iv = _nte_interval(row["nte"], float(row["sigma"]) / np.sqrt(row["m"]),
                               f"{name} / {arch}, {row['attribute']}: delta-method s.e. of CF-CLOT, m = {int(row['m'])}")
            flags.append(vd.decide_above(iv, 0.1, quantity="N-TE of a sensitive attribute"))
    if not flags:
        raise ValueError("the screenings hold no test at epsilon = 0.1, which claim Fig1-3c reads; screen at epsilons including 0.1")
    c3 = _every(flags, f"every sensitive attribute of the {n_aud} audits", pick=lambda d: d.interval.estimate)
    f01 = [len(s.flagged(0.1)) == results["n_sensitive"][k[0]] for k, s in screenings.items()]
    f03 = [len(s.flagged(0.3)) for s in screenings.values() if any(np.isclose(e, 0.3) for e in s.epsilons)]
    f0 = [len(s.flagged(0.0)) for s in screenings.values() if any(np.isclose(e, 0.0) for e in s.epsilons)]
    claims.claim("Fig1-3c", "Every sensitive attribute is flagged at eps = 0.1: its N-TE exceeds 0.1 (SFA-0.1 = SSA).",
                 paper="qualitative (Sec. 5.1 reading of Figs. 1-3)",
                 ours=f"all flagged at 0.1 in {sum(f01)}/{n_aud} audits; largest N-TE {c3.interval.estimate:.4f}; "
                      f"flagged at 0: {np.mean(f0) if f0 else float('nan'):.1f} on average; at 0.3: {sum(f03)} in all",
                 decision=c3, note=_deciding_size(c3, (0.1,), int(screenings[next(iter(screenings))].table["m"].max()), "units per test"),
                 evidence=f"{len(flags)} CF-CLOT tests ({audits}) at α = 0.05 on probability outputs with the median bandwidth; "
                          "notebook 04 shows why 0.1 is rarely reached. The paper states no kernel, bandwidth or output representation",
                 quote="The similar results of SFA-[ε]=0.1, SFA-[ε], and SSA suggested that the features used for training were the same, "
                       "demonstrating that CF-CLOT effectively identified the sensitive attributes we set as unfair. [...] The attributes "
                       "considered fair in the [ε]=0.3 scenario were deemed unfair in the [ε]=0.1 and [ε]=0 scenarios",
                 source="Sec. 5.1.2 (Figs. 1-3)",
                 change="the old rule also required that no attribute be flagged at ε = 0.3 in any audit; the paper's words make "
                        "SFA-0.3 equal SAA only on two of its three data sets ('except for the Obesity dataset'), so that half is not "
                        "a claim about every audit; the rule reads the ε = 0.1 half, which the paper states for every data set")
    claims.claim("C11", "CF-CLOT flags exactly the attributes whose true N-TE exceeds epsilon.", paper="Sec. 5 (implicit)",
                 ours="no ground truth on real data", verdict=vd.NOT_CHECKABLE,
                 rule="given by hand: the quantity (each attribute's true N-TE) cannot be computed on real data at any scale",
                 evidence="the true N-TE of a model on real data is unknown at any scale",
                 note="Its checkable analogue, CF-CLOT's decisions against a known N-TE, is checked on simulated outputs with a "
                      "closed-form N-TE in notebook 02: C6 (rejection rate α at N-TE = ε, at most α inside the null) and C7 "
                      "(rejection rate rising with m when N-TE > ε).",
                 quote="Across different datasets, CF-CLOT successfully identified unfair sensitive attributes, demonstrating it has "
                       "achieved fairness analysis by DCT with testing consistency.",
                 source="Sec. 5.1.2",
                 change="no scale can check it on real data (the true N-TE is unknown), so it is not checkable here rather than "
                        "undecided at this scale")
    return claims.rows(["C8", "Fig1-3a", "Fig1-3b", "Fig1-3b-SSA", "Fig1-3c", "C11"])

# ---------------------------------------------------------------------------- notebook 04
#: Kernel values k(0, 1) of the epsilon-to-rate-gap table: a sharp kernel and the Gaussian of bandwidth 1.
R_VALUES = {"r = 0": 0.0, "r = exp(-1/2)": float(np.exp(-0.5))}


def epsilon_gap_tables(gaps_pp: Sequence[float], eps_list: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """N-TE of two decision rates ``0.5 ± gap/2``, and the largest gap each epsilon tolerates, for both ``r``.

    Parameters
    ----------
    gaps_pp : sequence of float
        Gaps in percentage points.
    eps_list : sequence of float
        Tolerances.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        N-TE (rows ``r``, columns gaps) and tolerated gaps in points (rows ``r``, columns epsilon).
    """
    gaps_pp = np.asarray(gaps_pp, dtype=float)
    table_gap = pd.DataFrame({name: nte_bernoulli(0.5 + gaps_pp / 200, 0.5 - gaps_pp / 200, r=r) for name, r in R_VALUES.items()},
                             index=pd.Index(gaps_pp, name="gap (percentage points)")).T
    tolerated = pd.DataFrame({name: [100 * gap_for_target_nte(e, r=r) for e in eps_list] for name, r in R_VALUES.items()},
                             index=pd.Index(list(eps_list), name="epsilon")).T
    return table_gap, tolerated


def bandwidth_study(bw: np.ndarray, shift: np.ndarray) -> tuple[np.ndarray, np.ndarray, pd.Series]:
    """N-TE of N(0, 1) vs N(shift, 1) over (bandwidth, shift), its supremum per bandwidth, and where 0.1 and 0.3 become reachable.

    Parameters
    ----------
    bw : numpy.ndarray
        Bandwidths (increasing).
    shift : numpy.ndarray
        Location shifts.

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, pandas.Series)
        N-TE grid ``(len(bw), len(shift))``, the supremum over shifts per bandwidth, and the smallest
        bandwidth of ``bw`` at which each epsilon is reachable.
    """
    grid = np.array([nte_gaussian(shift, bandwidth=s) for s in bw])
    sup = np.array([nte_sup_gaussian(bandwidth=s) for s in bw])
    reach = {e: float(bw[np.argmax(sup > e)]) for e in (0.1, 0.3)}
    return grid, sup, pd.Series(reach, name="smallest bandwidth at which epsilon is reachable (unit-variance outputs)")


def plot_bandwidth_study(bw: np.ndarray, shift: np.ndarray, grid: np.ndarray, sup: np.ndarray):
    """Heat map of N-TE over (shift, bandwidth) and the supremum over shifts against the bandwidth.

    Parameters
    ----------
    bw, shift : numpy.ndarray
        The axes of :func:`bandwidth_study`.
    grid, sup : numpy.ndarray
        Its outputs.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    fig, axes = subplots(1, 2, width=4.3)
    im = axes[0].pcolormesh(shift, bw, grid, shading="auto", vmin=0, vmax=1)
    axes[0].set_yscale("log")
    axes[0].set_xlabel("location shift δ")
    axes[0].set_ylabel("bandwidth s")
    fig.colorbar(im, ax=axes[0], label="N-TE")
    axes[1].plot(bw, sup, color="k")
    for e in (0.1, 0.3):
        axes[1].axhline(e, ls="--", lw=1, color="C3")
    axes[1].set_xscale("log")
    axes[1].set_xlabel("bandwidth s")
    axes[1].set_ylabel("sup over shifts of N-TE")
    return axes


def flip_vs_set_study(n_units: int, betas: Sequence[float], n_boot: int, rng: np.random.Generator, *,
                      shares: Sequence[float] = (0.5, 0.2)) -> pd.DataFrame:
    """N-TE, mean |Δp| and CF-CLOT decisions of ``f = sigmoid(c + beta a)`` under the flip and under ``a := 0``.

    Parameters
    ----------
    n_units : int
        Units per share of ``a = 1``.
    betas : sequence of float
        Logit effects of the attribute.
    n_boot : int
        Sign flips of the exact test at epsilon 0.
    rng : numpy.random.Generator
    shares : sequence of float
        ``P(a = 1)`` values.

    Returns
    -------
    pandas.DataFrame
        One row per (share, beta, intervention); ``s.e.`` is the delta-method standard error of the N-TE
        estimate from CF-CLOT at epsilon 0.1.
    """
    rows = []
    for p in shares:
        units = pd.DataFrame({"a": rng.binomial(1, p, n_units), "c": rng.normal(size=n_units)})
        for beta in betas:
            def model(X: pd.DataFrame, beta: float = beta) -> np.ndarray:
                return 1 / (1 + np.exp(-(X["c"] + beta * X["a"])))

            for how in ("flip", 0):
                y, y_cf = counterfactual_outputs(model, units, "a", how)
                at01 = cfclot_test(y, y_cf, 0.1, seed=0)  # seed: the median bandwidth subsamples the pooled outputs
                rows.append({"P(a=1)": p, "beta": beta, "intervention": "flip" if how == "flip" else "set a := 0",
                             "N-TE": nte(y, y_cf), "s.e.": at01.sigma / np.sqrt(at01.m),
                             "mean |Δp|": counterfactual_gap(model, units, ["a"], how),
                             "reject eps=0": cfclot_test(y, y_cf, 0.0, n_boot=n_boot, seed=rng).reject if beta > 0 else None,
                             "reject eps=0.1": at01.reject})
    return pd.DataFrame(rows)


def plot_flip_vs_set(blind: pd.DataFrame):
    """N-TE against beta per intervention, and the mean |Δp| under the flip, one panel per share of ``a = 1``.

    Parameters
    ----------
    blind : pandas.DataFrame
        Output of :func:`flip_vs_set_study`.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    shares = list(blind["P(a=1)"].unique())
    _, axes = subplots(1, len(shares), width=4.2)
    for ax, p in zip(np.atleast_1d(axes), shares, strict=True):
        sub = blind[blind["P(a=1)"] == p]
        for (how, g), ls in zip(sub.groupby("intervention"), ("-", "--"), strict=True):
            ax.plot(g["beta"], g["N-TE"], ls, marker="o", label=f"N-TE, {how}")
        flip = sub[sub["intervention"] == "flip"]
        ax.plot(flip["beta"], flip["mean |Δp|"], ":", marker="s", color="0.4", label="mean |Δp| (flip)")
        ax.axhline(0.1, color="C3", lw=1, ls="--", label="ε = 0.1")
        ax.set_title(f"P(a = 1) = {p}")
        ax.set_xlabel("logit effect β")
        ax.set_ylabel("N-TE, or mean |Δp|")
        ax.legend(fontsize=7)
    return axes


def llm_example(m: int, rng: np.random.Generator, *, p1: float = 0.73, p2: float = 0.735, epsilon: float = 0.001) -> pd.Series:
    """The paper's LLM example: two rating rates compared by a two-proportion z-test and by CF-CLOT with a tolerance.

    Parameters
    ----------
    m : int
        Ratings per group.
    rng : numpy.random.Generator
    p1, p2 : float
        Rating rates of the two groups.
    epsilon : float
        Tolerance of CF-CLOT.

    Returns
    -------
    pandas.Series
        The z-test p-value, the N-TE estimate and closed form (``r = 0``), CF-CLOT's p-value and decision,
        the rate difference with its standard error and the N-TE's delta-method standard error.
    """
    y = (rng.random(m) < p1).astype(float)
    y_cf = (rng.random(m) < p2).astype(float)
    pooled = (y.sum() + y_cf.sum()) / (2 * m)
    z_two = (y_cf.mean() - y.mean()) / np.sqrt(2 * pooled * (1 - pooled) / m)
    close = cfclot_test(y, y_cf, epsilon, bandwidth=0.01)  # bandwidth 0.01: r = k(0, 1) = 0
    return pd.Series({"two-proportion z-test p-value": 2 * stats.norm.sf(abs(z_two)), "N-TE estimate": close.statistic,
                      "N-TE closed form (r = 0)": nte_bernoulli(p1, p2), f"CF-CLOT eps={epsilon:g} p-value": close.pvalue,
                      "CF-CLOT rejects": close.reject, "rate difference": y_cf.mean() - y.mean(),
                      "s.e. of the rate difference": np.sqrt((y.mean() * (1 - y.mean()) + y_cf.mean() * (1 - y_cf.mean())) / m),
                      "N-TE s.e.": close.sigma / np.sqrt(m)})


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C4, C12 and C13 of notebook 04 (what epsilon means).

    Parameters
    ----------
    results : mapping
        ``table_gap`` and ``tolerated`` (:func:`epsilon_gap_tables`, with gap 10 and epsilons 0.01, 0.05,
        0.1, 0.3 among their columns), ``blind`` (:func:`flip_vs_set_study`), ``betas``, ``n_units``,
        ``llm`` (:func:`llm_example`) and ``m_llm``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these claims.
    """
    claims.require(results, ["table_gap", "tolerated", "blind", "betas", "n_units", "llm", "m_llm"])
    table_gap, tolerated, blind, betas, llm = results["table_gap"], results["tolerated"], results["blind"], results["betas"], results["llm"]
    # the notes print the gaps to 0.1 points and N-TE to 4 decimals: each must lie within half a unit of the last digit
    closed = "closed form nte_bernoulli solved with brentq (exact)"
    ours_gaps = tolerated.loc["r = 0", [0.01, 0.05, 0.1, 0.3]].to_numpy(dtype=float)
    parts = [vd.decide_within(vd.exact(g, method=closed), p - 0.05, p + 0.05, quantity=f"gap tolerated at ε = {e} (points)")
             for g, p, e in zip(ours_gaps, (12.2, 27.1, 37.8, 62.6), (0.01, 0.05, 0.1, 0.3), strict=True)]
    parts.append(vd.decide_within(vd.exact(table_gap.loc["r = 0", 10], method=closed), 0.0067 - 5e-5, 0.0067 + 5e-5,
                                  quantity="N-TE of a 10-point gap"))
    claims.claim("C4", "Reading epsilon for decisions: eps = 0.01, 0.05, 0.1, 0.3 tolerate rate gaps of 12.2, 27.1, 37.8, 62.6 points (r = 0).",
                 paper="(notes, closed form) 12.2 / 27.1 / 37.8 / 62.6", ours=" / ".join(f"{v:.1f}" for v in ours_gaps),
                 decision=_every(parts, "every value, to the notes' printed precision"), kind="sanity check",
                 evidence="closed form nte_bernoulli solved with brentq; within half a unit of the notes' last digit",
                 quote="With r = 0, ε = 0.01, 0.05, 0.1, 0.3 correspond to gaps of 12.2, 27.1, 37.8 and 62.6 percentage points",
                 source="notes §5 C4 (a closed-form calculation of the notes), not a claim of the paper",
                 change="the tolerance is now half a unit of the notes' printed precision (0.05 points) instead of 0.1 points")
    beta_ref = 2.0 if 2.0 in betas else max(betas)  # the notes' "strongly unfair" model: logit effect 2
    at_beta = blind[blind["beta"] == beta_ref]

    def row(share: float, how: str) -> pd.Series:
        return at_beta[(at_beta["P(a=1)"] == share) & (at_beta["intervention"] == how)].iloc[0]

    flip_set = []
    for share, (hi, lo) in ((0.5, ("set a := 0", "flip")), (0.2, ("flip", "set a := 0"))):
        if share in set(at_beta["P(a=1)"]):
            a, b = row(share, hi), row(share, lo)
            flip_set.append(vd.decide_above(_difference(a["N-TE"], a["s.e."], b["N-TE"], b["s.e."], same_units=True,
                                                        what=f"delta-method s.e., {results['n_units']} units"),
                                            0.0, quantity=f"N-TE ({hi}) - N-TE ({lo}) at P(a=1) = {share}"))
    below = [vd.decide_below(_nte_interval(rw["N-TE"], rw["s.e."], f"P(a=1) = {rw['P(a=1)']}, {rw['intervention']}: delta-method s.e., "
                                                                 f"{results['n_units']} units"), 0.1,
                             quantity="N-TE at logit effect 2") for _, rw in at_beta.iterrows()]
    c12 = _every([*flip_set, *below], "every part")
    half = at_beta[at_beta["P(a=1)"] == 0.5]
    claims.claim("C12", "The marginal comparison is blind to a strongly unfair model (logit effect 2) under the flip of a balanced attribute: "
                        "the intervention changes the answer, and no intervention brings it to eps = 0.1.",
                 paper="(notes) flip N-TE ≈ -0.0002, set-to-value 0.022-0.033 at beta = 2",
                 ours=f"beta = {beta_ref:g}, P(a=1) = 0.5: flip {float(half.loc[half['intervention'] == 'flip', 'N-TE'].iloc[0]):.4f}, "
                      f"set {float(half.loc[half['intervention'] == 'set a := 0', 'N-TE'].iloc[0]):.4f}, "
                      f"mean |Δp| {float(half.loc[half['intervention'] == 'flip', 'mean |Δp|'].iloc[0]):.2f}; "
                      f"largest N-TE at this beta {float(at_beta['N-TE'].max()):.3f}",
                 decision=c12, note=_deciding_size(c12, (0.0, 0.1), results["n_units"], "units per share of a = 1"),
                 evidence=f"{results['n_units']} units per share of a = 1, probability outputs, median bandwidth; s.e. of CF-CLOT at ε = 0.1",
                 quote="The \"flip\" intervention a → 1−a leaves the output marginal unchanged, so N-TE = 0 even for β = 2. [...] "
                       "The choice of intervention changes the answer. Even a strongly unfair model (logit effect 2) has N-TE of only "
                       "about 0.02–0.05, below every ε the paper uses",
                 source="notes §5 C12 (a pitfall the notes derive), not a claim of the paper", kind=_OWN,
                 change=_OWN_CHANGE.format(what="the flip-versus-set pitfall is the notes' derivation") + "; before, the old rule used hand-set bounds (|flip| < 0.005, set > 0.01, mean |Δp| > 0.2); the notes' words are now "
                        "read as: flip below set-to-value at P(a=1) = 0.5 and above it at 0.2 (the intervention changes the answer), "
                        "and every N-TE at logit effect 2 below 0.1")
    m_llm = results["m_llm"]
    diff = vd.normal_interval(llm["rate difference"], llm["s.e. of the rate difference"], method=f"two-proportion s.e., m = {m_llm} per group")
    closeness = _nte_interval(llm["N-TE estimate"], llm["N-TE s.e."], f"delta-method s.e. of CF-CLOT, m = {m_llm}")
    c13 = _every([vd.decide_above(diff, 0.0, quantity="rate difference 73.5% - 73% (the two-sample test)"),
                  vd.decide_below(closeness, 0.001, quantity="N-TE (CF-CLOT at ε = 0.001)")], "both parts")
    claims.claim("C13", "LLM example: a 73% vs 73.5% rating is told apart by a two-sample test at large m, while its N-TE lies below eps = 0.001.",
                 paper="qualitative (introduction)",
                 ours=f"rate difference {diff.estimate:.4f} [{diff.low:.4f}, {diff.high:.4f}] (two-sample p = {llm['two-proportion z-test p-value']:.2g}); "
                      f"N-TE = {closeness.estimate:.1e} [{closeness.low:.1e}, {closeness.high:.1e}] (closed form {llm['N-TE closed form (r = 0)']:.1e})",
                 decision=c13,
                 note=_deciding_size(c13, (0.0, 0.001), m_llm, "ratings per group"),
                 evidence=f"m = {m_llm} ratings per group, binary outputs, r = 0",
                 quote="For example, if a large language model (LLM) rates sensitive photos of men at 73% and women at 73.5%, the "
                       "two-sample test would label it as unfair, even though there is no significant gender discrimination in general cognition.",
                 source="Sec. 1 (Introduction)",
                 change="'accepted by CF-CLOT' was a non-rejection at ε = 0.001; it is now the N-TE's interval lying below 0.001, "
                        "and 'rejected by a two-sample test' the rate difference's interval lying above 0")
    return claims.rows(["C4", "C12", "C13"])


def claims_05(results: Mapping[str, Any]) -> pd.DataFrame:
    """Sanity checks L1 and L2 of notebook 05 (linear-time MMD tests; issue 14, not claims of a paper).

    Parameters
    ----------
    results : mapping
        ``level`` and ``power``: tables of :func:`cflib.stats.mmd_linear.linear_power_study` under the null
        (one sample size) and under a shift (several), with the full test first; ``alpha``.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for these checks.
    """
    claims.require(results, ["level", "power", "alpha"])
    level, power, alpha = results["level"], results["power"], results["alpha"]
    quote = "with their level checked (binomial interval) and their power against the full test shown on a figure in the closeness chapter"
    held = [vd.decide_below(_rate_interval(r["rejection_rate"], int(r["n_reps"]), f"replications, {r['test']}"), vd.level_band(alpha)[1],
                            inclusive=True, quantity="type-I error of each test") for _, r in level.iterrows()]
    n_level = int(level["n_reps"].iloc[0])
    l1 = _every(held, "every test", pick=lambda d: d.interval.high)
    claims.claim("L1", "Every linear-time test and the full test hold the level alpha = 0.05.",
                 paper="exact (permutation) or asymptotic (normal)", ours=", ".join(f"{r['test']}: {r['rejection_rate']:.3f}" for _, r in level.iterrows()),
                 decision=l1, kind="sanity check",
                 note=_deciding_size(l1, (vd.level_band(alpha)[1],), n_level, "replications"),
                 evidence=f"{n_level} replications at n = m = {int(level['n'].iloc[0])}; level held: type-I error at most 3α/2 (Bradley)",
                 quote=quote, source="issue 14 (Build): checks of cflib's linear-time tests, not in the paper",
                 change="the old rule passed when the count lay in the 99% binomial interval around α (a non-rejection, easier with "
                        "fewer replications); the level is now held when the Clopper-Pearson interval lies at or below 3α/2 (Bradley)")
    tests = list(dict.fromkeys(power["test"]))
    rate = power.pivot(index="n", columns="test", values="rejection_rate")
    se = power.pivot(index="n", columns="test", values="se")
    k = len(rate)
    gaps = [vd.decide_above(vd.normal_interval(float((rate[tests[0]] - rate[t]).mean()), float(np.sqrt((se[tests[0]] ** 2 + se[t] ** 2).sum()) / k),
                                               method=f"{t}: mean over {k} sample sizes, independent binomial s.e. (conservative: same data)"),
                            0.0, inclusive=True, quantity="power of the full test minus a linear-time test's, averaged over n") for t in tests[1:]]
    n_reps = int(power["n_reps"].iloc[0])
    l2 = _every(gaps, "every linear-time test", pick=lambda d: -d.interval.low)
    claims.record("power_full_largest_n", float(rate[tests[0]].iloc[-1]))
    claims.claim("L2", "At equal n the full permutation test is at least as powerful as each linear-time test (averaged over the n grid).",
                 paper="expected: the linear-time tests use O(N) of the N^2 kernel pairs",
                 ours="; ".join(f"{t}: {d.interval.estimate:+.3f}" for t, d in zip(tests[1:], gaps, strict=True)),
                 decision=l2, kind="sanity check",
                 note=_deciding_size(l2, (0.0,), n_reps, "replications per n"),
                 evidence=f"{n_reps} replications per n in {list(rate.index)}, shift {power['shift'].iloc[0]}",
                 quote=quote, source="issue 14 (Build): checks of cflib's linear-time tests, not in the paper",
                 change="the old rule passed unless some n had the full test more than 2 s.e. below a linear-time test; the power "
                        "gap, averaged over the n grid, must now have an interval at or above 0")
    return claims.rows(["L1", "L2"])
