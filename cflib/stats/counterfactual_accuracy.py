"""Expected counterfactual accuracy (Ma et al. 2024, eqs. 7-8): the share of predictions a counterfactual leaves unchanged."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from cflib.results import Interval
from cflib.validation import ValidationError, ValidationTypeError, check_axes, check_real, describe

from .proportions import wilson_interval
from .unit_arrays import per_unit_values

__all__ = ["ECAResult", "expected_counterfactual_accuracy"]


@dataclass(frozen=True, eq=False)
class ECAResult:
    """Expected counterfactual accuracy (eqs. 7-8): the share of units whose prediction does not change.

    Attributes
    ----------
    eca : float
        Mean agreement between factual and counterfactual predictions.
    n : int
        Number of (unit, target level) pairs averaged.
    ci : cflib.results.Interval
        95% Wilson interval (treating the pairs as independent).
    agree : numpy.ndarray
        Per-pair agreement indicators.
    tol : float
        Tolerance under which two predictions count as equal.
    """

    eca: float
    n: int
    ci: Interval
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
        return pd.DataFrame(
            [{"ECA": self.eca, "ci_low": self.ci[0], "ci_high": self.ci[1], "n": self.n, "tol": self.tol}]
        )

    def plot(self, ax: Any = None) -> Any:
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


def _predict(model: Any, x: Any) -> np.ndarray:
    if model is None:
        return np.asarray(x)
    if hasattr(model, "predict"):
        return np.asarray(model.predict(x))
    if callable(model):
        return np.asarray(model(x))
    raise TypeError(
        f"model must have a predict method, be callable, or be None (x are predictions); got {type(model).__name__}"
    )


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
        raise ValidationTypeError(
            f"model must have a predict method, be callable, or be None (x are predictions); got {type(model).__name__}"
        )
    if levels is not None and (isinstance(levels, (str, bytes)) or not hasattr(levels, "__len__")):
        raise ValidationTypeError(f"levels must be a sequence of target levels, got {describe(levels)}")
    pred = per_unit_values(_predict(model, x), "predictions on x")
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
    preds_cf = [
        per_unit_values(_predict(model, c), f"predictions on x_cf[{j}]", n, n_name="the predictions on x")
        for j, c in enumerate(cf_list)
    ]
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
    return ECAResult(
        eca=k / agree_flat.size,
        n=int(agree_flat.size),
        ci=Interval.of(
            wilson_interval(k, agree_flat.size, 0.95),
            estimate=k / agree_flat.size,
            method=f"95% Wilson, {agree_flat.size} (unit, level) pairs",
        ),
        agree=agree_flat,
        tol=float(tol),
    )
