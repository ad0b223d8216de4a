"""CIT-LR when the adjustment set depends on the attribute: data and the level/power study.

:func:`common_cause_data` has ``Z`` and ``A`` share a common cause, so ``Z`` is a valid adjustment set but
is not independent of ``A``; :func:`cit_lr_dependence_study` measures each form's level and power there.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, TypedDict

import numpy as np
import pandas as pd
from scipy.special import expit

from ... import verdicts as vd


def replication_rng(seed: int, *keys: int) -> np.random.Generator:
    """The generator of one replication: ``numpy.random.default_rng([seed, *keys])``.

    Parameters
    ----------
    seed : int
        The study's seed.
    *keys : int
        The case's (or grid point's) indices and the replication's index.

    Returns
    -------
    numpy.random.Generator
    """
    return np.random.default_rng([int(seed), *map(int, keys)])


# --------------------------------------------------------------------------------------------
# CIT-LR when Z depends on A
# --------------------------------------------------------------------------------------------
def common_cause_data(
    n: int, *, dependence: float, a_effect: float = 0.0, seed: int | np.random.Generator | None = 0
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Predictions, attribute and adjustment set with ``Z`` and ``A`` sharing a common cause.

    ``U, W ~ N(0, 1)``; ``A ~ Bernoulli(sigmoid(dependence * U))``; ``Z = (U, W)``; the audited
    classifier predicts ``1[sin(1.5 U) + 0.5 U + 0.7 W + 0.5 e + a_effect * A > 0]`` with ``e ~ N(0, 1)``
    independent image noise. ``Z`` is a valid adjustment set (it blocks ``A <- U -> Y_hat``), so the
    classifier is counterfactually invariant exactly when ``a_effect = 0``; ``dependence = 0`` makes
    ``Z`` independent of ``A`` (the paper's assumption). The non-linear ``sin`` term makes a logistic
    :math:`\\hat g` misspecified, as any learner is on real data.

    Parameters
    ----------
    n : int
        Units.
    dependence : float
        Log-odds of ``A`` per unit of ``U`` (0: independent).
    a_effect : float
        Direct effect of ``A`` on the classifier's score (0: invariant).
    seed : int, numpy.random.Generator or None
        Randomness.

    Returns
    -------
    (y_hat, a, z) : tuple of numpy.ndarray
        Hard predictions (n,), attribute in {0, 1} (n,), adjustment set (n, 2).
    """
    from cflib.runtime import as_generator

    if not isinstance(n, (int, np.integer)) or n < 4:
        raise ValueError(f"n must be an integer >= 4, got {n!r}")
    rng = as_generator(seed)
    u, w = rng.standard_normal(n), rng.standard_normal(n)
    a = (rng.random(n) < expit(float(dependence) * u)).astype(int)
    score = np.sin(1.5 * u) + 0.5 * u + 0.7 * w + 0.5 * rng.standard_normal(n) + float(a_effect) * a
    return (score > 0).astype(int), a, np.column_stack([u, w])


class CitForm(TypedDict):
    """The keyword arguments of :func:`~cflib.stats.invariance.cit_lr_test` that make one form of the test."""

    h_mode: str
    g_mode: str


#: Forms of :func:`cflib.stats.invariance.cit_lr_test` compared by :func:`cit_lr_dependence_study`.
CIT_FORMS: dict[str, CitForm] = {
    "debiased, joint g (default)": {"h_mode": "debiased", "g_mode": "joint"},
    "debiased, separate g": {"h_mode": "debiased", "g_mode": "separate"},
    "marginalize, separate g (paper)": {"h_mode": "marginalize", "g_mode": "separate"},
    "marginalize, joint g": {"h_mode": "marginalize", "g_mode": "joint"},
    "regress, separate g (authors' code)": {"h_mode": "regress", "g_mode": "separate"},
}


def cit_lr_dependence_study(
    dependences: Sequence[float] = (0.0, 0.5, 1.0, 2.0),
    a_effects: Sequence[float] = (0.0, 0.5),
    *,
    forms: Sequence[str] | None = None,
    n: int = 1000,
    n_rep: int = 100,
    alpha: float = 0.05,
    level: float = 0.99,
    seed: int = 0,
) -> pd.DataFrame:
    """Rejection rate of each CIT-LR form against the strength of the Z-A dependence.

    Replication ``r`` at dependence ``s`` and effect ``e`` draws :func:`common_cause_data` with seed
    ``[seed, i_s, i_e, r]``; all forms test the same draws (and the same folds).

    Parameters
    ----------
    dependences : sequence of float
        Values of ``dependence`` (log-odds of ``A`` per unit of the common cause).
    a_effects : sequence of float
        Values of ``a_effect``; 0 gives the level, others the power.
    forms : sequence of str, optional
        Keys of :data:`CIT_FORMS` (default: all).
    n : int
        Units per replication (half train the regressions, half are tested).
    n_rep : int
        Replications per point.
    alpha : float
        Level of each test.
    level : float
        Coverage of the Clopper-Pearson interval of the rejection rate.
    seed : int
        Base seed.

    Returns
    -------
    pandas.DataFrame
        One row per (dependence, a_effect, form): ``rejections, n_rep, rate, ci_low, ci_high`` and
        ``calibrated`` (for ``a_effect == 0``: the interval contains ``alpha``; NaN otherwise).
    """
    from cflib.stats.invariance import cit_lr_test

    forms = list(CIT_FORMS) if forms is None else list(forms)
    unknown = [f for f in forms if f not in CIT_FORMS]
    if unknown:
        raise ValueError(f"unknown form(s) {unknown}; choose from {list(CIT_FORMS)}")
    if not isinstance(n_rep, (int, np.integer)) or n_rep < 1:
        raise ValueError(f"n_rep must be a positive integer, got {n_rep!r}")
    rows = []
    for i_s, s in enumerate(dependences):
        for i_e, e in enumerate(a_effects):
            hits = dict.fromkeys(forms, 0)
            for r in range(n_rep):
                y_hat, a, z = common_cause_data(n, dependence=s, a_effect=e, seed=replication_rng(seed, i_s, i_e, r))
                for f in forms:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", UserWarning)  # the paper's forms warn by design here
                        hits[f] += cit_lr_test(y_hat, a, z, seed=r, **CIT_FORMS[f]).pvalue < alpha
            for f in forms:
                lo, hi = tuple(vd.binomial_interval(int(hits[f]), n_rep, level=level))
                rows.append(
                    {
                        "dependence": float(s),
                        "a_effect": float(e),
                        "form": f,
                        "rejections": int(hits[f]),
                        "n_rep": n_rep,
                        "rate": hits[f] / n_rep,
                        "ci_low": lo,
                        "ci_high": hi,
                        "calibrated": bool(lo <= alpha <= hi) if e == 0 else np.nan,
                    }
                )
    return pd.DataFrame(rows)


def plot_dependence_study(table: pd.DataFrame, *, alpha: float = 0.05, axes: Any = None) -> np.ndarray:
    """Level (left) and power (right) of each form against the Z-A dependence, with intervals.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`cit_lr_dependence_study` (power: its largest ``a_effect``).
    alpha : float
        Level drawn as a dashed line.
    axes : sequence of two matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from cflib.plotting import subplots

    if axes is None:
        _, axes = subplots(1, 2, width=4.4, height=3.3)
    axes = np.asarray(axes).ravel()
    panels = [
        (0.0, "type-I error (invariant classifier)"),
        (float(table["a_effect"].max()), "power (classifier uses A)"),
    ]
    for ax, (eff, title) in zip(axes, panels, strict=True):
        sub = table[table["a_effect"] == eff]
        for i, (form, g) in enumerate(sub.groupby("form", sort=False)):
            x = g["dependence"].to_numpy() + 0.03 * (i - 2)
            ax.errorbar(
                x,
                g["rate"],
                yerr=[g["rate"] - g["ci_low"], g["ci_high"] - g["rate"]],
                marker="o",
                ms=4,
                capsize=2,
                label=form,
            )
        if eff == 0:
            ax.axhline(alpha, color="0.3", ls="--", lw=1)
        ax.set_xlabel("dependence of A on the common cause (log-odds)")
        ax.set_ylabel("rejection rate")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(title if eff == 0 else f"{title}, effect {eff:g}", fontsize=10)
    axes[0].legend(fontsize=7)
    return axes
