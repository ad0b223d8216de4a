"""Notebook 03: the calibration and power studies of CIT-LR and the parity counterexamples.

Replicated CIT-LR simulations on fresh samples of one fixed synthetic SCM and one fixed classifier
(:func:`simulate_cit_pvalues`), under no effect (calibration) and with an effect (power), and the two
parity worlds in which DP and EO disagree with counterfactual invariance.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...data.invariance_synthetic import SyntheticParams, invariance_synthetic, parity_world


def simulate_cit_pvalues(
    params: SyntheticParams,
    model: object,
    n: int,
    n_rep: int,
    *,
    forms: tuple[str, ...] = ("generator", "regression"),
    n_mc: int = 1,
    h_mode: str = "marginalize",
    seed: int = 0,
) -> pd.DataFrame:
    """P-values of CIT-LR over fresh samples from one fixed SCM and one fixed classifier.

    Used for the calibration (``params.a_effect == 0``) and power studies: replication ``r`` draws
    ``n`` new units with seed ``seed + r`` and tests the same model on them.

    Parameters
    ----------
    params : SyntheticParams
        The SCM (fixed across replications).
    model : estimator
        A fitted classifier with ``predict``.
    n : int
        Units per replication.
    n_rep : int
        Number of replications.
    forms : tuple of {"generator", "regression"}
        Which forms of CIT-LR to run: the oracle-generator form (Alg. 1 with the true SCM) and the
        known-Z regression form (:func:`cflib.stats.invariance.cit_lr_test`, 50/50 split).
    n_mc : int
        Monte-Carlo draws of the generator form.
    h_mode : {"marginalize", "regress"}
        :math:`\\hat h` of the regression form.
    seed : int
        First sample seed.

    Returns
    -------
    pandas.DataFrame
        One row per replication and form: ``rep, form, t, p, log10p, eca``.
    """
    from ...stats.invariance import cit_lr_generative, cit_lr_test, counterfactual_predictions

    if not hasattr(model, "predict"):
        raise TypeError("model must be a fitted classifier with a predict method")
    if not isinstance(n_rep, (int, np.integer)) or n_rep < 1:
        raise ValueError(f"n_rep must be a positive integer, got {n_rep!r}")
    bad = [f for f in forms if f not in ("generator", "regression")]
    if bad or not forms:
        raise ValueError(f"forms must be a non-empty subset of ('generator', 'regression'), got {forms!r}")
    rows = []
    p = params.p_a
    for r in range(n_rep):
        d = invariance_synthetic(params.kind, n, params=params, a_effect=params.a_effect, seed=seed + r)
        y_hat = model.predict(d.x)
        eca = float(np.mean(model.predict(d.x_cf) == y_hat))
        for form in forms:
            if form == "generator":
                cf = counterfactual_predictions(model.predict, d.sample_x, d.z_root, [0, 1], n_mc=n_mc, seed=seed + r)
                res = cit_lr_generative(y_hat, d.a, cf, p_a=[1 - p, p])
            else:
                res = cit_lr_test(y_hat, d.a, d.z_root, h_mode=h_mode, seed=seed + r)
            rows.append(
                {"rep": r, "form": form, "t": res.statistic, "p": res.pvalue, "log10p": res.log10_pvalue, "eca": eca}
            )
    return pd.DataFrame(rows)


#: The two regression forms of the calibration study: h the A-marginal of g, and the authors' separately regressed h.
NULL_FORMS = ("regression, h = marginal of g", "regression, h regressed (code)")


def trained_model(params: SyntheticParams, *, n_train: int = 2000, seed: int = 0) -> Any:
    """The audited classifier of the calibration and power studies: standardised logistic regression.

    Fitted once on ``n_train`` units of its own world (sample seed ``10_000 + seed``).

    Parameters
    ----------
    params : SyntheticParams
        The SCM.
    n_train : int
        Training units.
    seed : int
        Seed offset of the training sample.

    Returns
    -------
    sklearn.pipeline.Pipeline
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    d = invariance_synthetic(params.kind, n_train, params=params, a_effect=params.a_effect, seed=10_000 + seed)
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(d.x, d.y)


def calibration_study(
    base: SyntheticParams, n: int, n_rep: int, n_rep_code: int, *, alpha: float = 0.05, seed: int = 0
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """CIT-LR p-values under no effect, for both forms and the authors' separately regressed h.

    Parameters
    ----------
    base : SyntheticParams
        The SCM; its effect is switched off.
    n : int
        Units per replication.
    n_rep, n_rep_code : int
        Replications of the two forms (h = A-marginal of g) and of the authors' variant.
    alpha : float
        Level.
    seed : int
        Seed.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        The p-values (one row per replication and form) and the rejection summary per form
        (:func:`cflib.stats.invariance.rejection_summary`).
    """
    from ...stats.invariance import rejection_summary

    null_params = base.with_effect(0.0)
    null_model = trained_model(null_params, seed=seed)
    null_marg = simulate_cit_pvalues(null_params, null_model, n, n_rep, forms=("generator", "regression"), seed=seed)
    with (
        warnings.catch_warnings()
    ):  # measuring the authors' form is the point here: its warning would repeat n_rep_code times
        warnings.filterwarnings("ignore", message=r"cit_lr_test\(h_mode='regress'\)")
        null_regr = simulate_cit_pvalues(
            null_params, null_model, n, n_rep_code, forms=("regression",), h_mode="regress", seed=seed
        )
    null = pd.concat(
        [
            null_marg.replace({"form": {"regression": NULL_FORMS[0]}}),
            null_regr.replace({"form": {"regression": NULL_FORMS[1]}}),
        ]
    )
    calib = pd.DataFrame({form: rejection_summary(sub["p"], alpha) for form, sub in null.groupby("form", sort=False)}).T
    return null, calib


def power_study(
    base: SyntheticParams,
    *,
    power_ns: Sequence[int],
    power_effects: Sequence[float],
    effect_for_n: float,
    n_for_effect: int,
    n_rep: int,
    seed: int = 0,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """CIT-LR p-values for a fixed non-invariant classifier over sample sizes and over effect strengths.

    Parameters
    ----------
    base : SyntheticParams
        The SCM; its effect is rescaled.
    power_ns : sequence of int
        Sample sizes of the power-vs-n curve (both forms, effect ``effect_for_n``).
    power_effects : sequence of float
        Effects of the power-vs-effect curve (generator form, ``n_for_effect`` units).
    effect_for_n : float
        Effect strength of the power-vs-n curve.
    n_for_effect : int
        Sample size of the power-vs-effect curve.
    n_rep : int
        Replications per point.
    seed : int
        Seed.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        P-values with an ``n`` column and with an ``a_effect`` column.
    """
    eff_params = base.with_effect(effect_for_n)
    eff_model = trained_model(eff_params, seed=seed)
    by_n = pd.concat(
        [simulate_cit_pvalues(eff_params, eff_model, m, n_rep, seed=seed + 7 * m).assign(n=m) for m in power_ns]
    )
    by_effect = pd.concat(
        [
            simulate_cit_pvalues(
                base.with_effect(e),
                trained_model(base.with_effect(e), seed=seed),
                n_for_effect,
                n_rep,
                forms=("generator",),
                seed=seed + 1,
            ).assign(a_effect=e)
            for e in power_effects
        ]
    )
    return by_n, by_effect


#: The two classifiers of the parity counterexamples: reads the disease only / leans on the trace.
PARITY_MODELS = {
    "content": lambda x: (x[:, 0] > 0).astype(int),
    "shortcut": lambda x: (x[:, 0] + 1.5 * np.sign(x[:, 2]) * x[:, 1] > 0).astype(int),
}


def parity_counterexamples(n_world: int, *, seed: int = 0) -> pd.DataFrame:
    """ECA and the p-values of CIT-LR, DP and EO for :data:`PARITY_MODELS` in two parity worlds.

    World 1 has a group-disease association and group-dependent false positives; world 2 has neither.

    Parameters
    ----------
    n_world : int
        Units per world.
    seed : int
        Seed.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(world, model)``.
    """
    from ...stats.invariance import (
        cit_lr_generative,
        counterfactual_predictions,
        demographic_parity_test,
        equal_opportunity_test,
        expected_counterfactual_accuracy,
    )

    worlds = {
        "world 1 (association + label bias)": parity_world(
            n_world, prevalence=(0.2, 0.45), false_positive=(0.0, 0.25), seed=seed
        ),
        "world 2 (no association)": parity_world(n_world, seed=seed + 1),
    }
    rows = []
    for wname, w in worlds.items():
        for mname, f in PARITY_MODELS.items():
            y_hat = f(w.x)
            cf = counterfactual_predictions(f, w.sample_x, w.z, [0, 1], n_mc=1, seed=seed)
            rows.append(
                {
                    "world": wname,
                    "model": mname,
                    "ECA": expected_counterfactual_accuracy(f, w.x, w.x_cf).eca,
                    "CIT-LR p": cit_lr_generative(y_hat, w.a, cf).pvalue,
                    "DP p": demographic_parity_test(y_hat, w.a).pvalue,
                    "EO p": equal_opportunity_test(y_hat, w.a, w.y).pvalue,
                }
            )
    return pd.DataFrame(rows).set_index(["world", "model"])
