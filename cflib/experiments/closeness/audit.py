"""The audit protocol of the chapter (Fu et al. 2025, CF-CLOT): interventions, screening and SAA / SSA / SFA-eps.

The auditing pipeline of the paper: Definition 1 (the factual outputs ``f(A_s, A_c)`` and the
counterfactual outputs ``f(A_s \\ a_t, do(a_t -> a_t'), A_c)`` of a trained model), Eq. 7
(epsilon-counterfactual closeness fairness for every sensitive attribute) and the experimental
protocol of Sec. 5.1 (SAA: all attributes; SSA: no sensitive attribute; SFA-eps: drop only the
attributes CF-CLOT flags at tolerance ``eps``), with :func:`audit_tabular` running it on one data set
and one model family (notebook 03).

The paper leaves the intervention undefined ("removing sensitive attributes or converting them into
noise"); here it is explicit (notes, Sec. 7 item 3): ``"flip"`` swaps the two levels of a binary
attribute, a value sets every unit to that level, ``"resample"`` redraws the attribute from its
marginal (noise), and a callable does anything else. Other features are held fixed: this is the
model-level flip test, not a counterfactual through an SCM. The "unfairness" of the experiments is
also undefined (notes, item 14); :func:`counterfactual_gap` uses the mean absolute change of the
predicted probability under the intervention, averaged over the sensitive attributes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...results import check_alpha
from ...runtime import as_generator
from ...stats.closeness import cfclot_test
from ...stats.kernels import Kernel, make_kernel

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "intervene",
    "counterfactual_outputs",
    "counterfactual_gap",
    "screen_attributes",
    "ScreeningResult",
    "audit_feature_sets",
    "AuditResult",
    "audit_tabular",
]


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

    def plot(self, ax: Axes | None = None) -> Axes:
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
            rows.append(
                {
                    "attribute": a,
                    "epsilon": e,
                    "nte": r.statistic,
                    "pvalue": r.pvalue,
                    "reject": r.rejected,
                    "threshold": r.threshold,
                    "sigma": np.nan if r.sigma is None else r.sigma,
                    "method": r.method,
                    "m": r.m,
                }
            )
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

    def plot(self, ax: Axes | None = None) -> Axes:
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
    screening = screen_attributes(
        saa, X_test, sensitive, epsilons, intervention=intervention, seed=rng, **screen_kwargs
    )
    rows = []
    for variant, cols in screening.feature_sets(features, sensitive).items():
        model = fit(cols)
        acc = float(np.mean(np.asarray(model.predict(X_test[cols])) == np.asarray(y_test)))
        # the unfairness probe intervenes on every sensitive attribute, including dropped ones (their gap is 0)
        probe = _ColumnSelect(model, cols)
        rows.append(
            {
                "variant": variant,
                "dropped": ", ".join(f for f in features if f not in cols) or "-",
                "n_features": len(cols),
                "accuracy": acc,
                "unfairness": counterfactual_gap(probe, X_test, list(sensitive), intervention, seed=rng),
            }
        )
    return AuditResult(pd.DataFrame(rows), screening)


class _ColumnSelect:
    """A model restricted to some columns, accepting a frame with more columns."""

    def __init__(self, model: Any, cols: list[str]) -> None:
        self.model, self.cols = model, cols

    def predict_proba(self, X: pd.DataFrame) -> np.ndarray:
        return self.model.predict_proba(X[self.cols])

    def predict(self, X: pd.DataFrame) -> np.ndarray:
        return self.model.predict(X[self.cols])


def audit_tabular(
    task: Any,
    arch: str,
    *,
    n_train: int,
    n_test: int,
    epochs: int,
    width: int,
    epsilons: Sequence[float],
    max_m: int | None = 1000,
    n_boot: int = 500,
    seed: int = 0,
    device: str = "auto",
) -> AuditResult:
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
    from ...models.tabular import make_tabular_pipeline

    n_tr = min(n_train, int(0.7 * len(task.frame)))
    X_tr, y_tr, X_te, y_te = task.split(n_tr, min(n_test, len(task.frame) - n_tr), seed=seed)

    def make(cols: list[str]) -> Any:
        return make_tabular_pipeline(
            arch,
            [c for c in task.categorical if c in cols],
            [c for c in task.numeric if c in cols],
            seed=seed,
            device=device,
            epochs=epochs,
            width=width,
        )

    return audit_feature_sets(
        make, X_tr, y_tr, X_te, y_te, task.features, task.sensitive, epsilons, seed=seed, max_m=max_m, n_boot=n_boot
    )
