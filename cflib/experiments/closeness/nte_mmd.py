"""Studies of notebook 01 (N-TE and MMD): closed forms, the estimator's identities and Hoeffding's bound.

Why N-TE normalises MMD (two Gaussian pairs with one MMD^2 and different N-TE), the estimator against
the closed forms of Gaussian shifts and Bernoulli rate gaps, its exact identities and its mean under
P = Q, and the concentration of the M-TE numerator against Hoeffding's bound (Theorem 4).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import optimize

from ...stats.closeness import (
    cfclot_statistics,
    cfclot_statistics_batch,
    gaussian_pair_sample,
    nte,
    nte_bernoulli,
    nte_gaussian,
    shift_for_target_nte,
)
from ...stats.mmd import mmd2

__all__ = [
    "normalisation_table",
    "closed_form_study",
    "closed_form_max_z",
    "estimator_identities",
    "concentration_study",
]


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
        rows.append(
            {
                "tau": tau,
                "shift": delta,
                "MMD^2": mm,
                "||mu||^2": a,
                "N-TE (closed form)": nte_gaussian(delta, tau1=tau, tau2=tau),
                "MMD^2 (estimate)": mmd2(yy, yc, bandwidth=1.0, estimator="paired"),
                "N-TE (estimate)": nte(yy, yc, bandwidth=1.0),
            }
        )
    return pd.DataFrame(rows)


def closed_form_study(
    m: int,
    n_reps: int,
    rng: np.random.Generator,
    *,
    shifts: Sequence[float] = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0),
    gaps: Sequence[float] = (0.0, 0.1, 0.2, 0.4, 0.6, 0.8),
) -> dict[str, pd.DataFrame]:
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
        est = cfclot_statistics_batch(*gaussian_pair_sample(m, d, n_reps=n_reps, seed=rng), 0.0, bandwidth=1.0)[
            "statistic"
        ]
        g_rows.append(
            {"parameter": d, "closed form": nte_gaussian(d), "mean": est.mean(), "se": est.std() / np.sqrt(n_reps)}
        )
    for gap in np.asarray(gaps, dtype=float):
        p1, p2 = 0.5 + gap / 2, 0.5 - gap / 2
        yb = (rng.random((n_reps, m)) < p1).astype(float)
        ycb = (rng.random((n_reps, m)) < p2).astype(float)
        est = cfclot_statistics_batch(yb, ycb, 0.0, bandwidth=1.0)["statistic"]
        b_rows.append(
            {
                "parameter": gap,
                "closed form": nte_bernoulli(p1, p2, r=r01),
                "mean": est.mean(),
                "se": est.std() / np.sqrt(n_reps),
            }
        )
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
    return max(
        float(np.max(np.abs(df["mean"] - df["closed form"]) / np.maximum(df["se"], 1e-12))) for df in closed.values()
    )


def estimator_identities(
    m: int, n_reps: int, closed: Mapping[str, pd.DataFrame], rng: np.random.Generator
) -> pd.Series:
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
    null_draws = cfclot_statistics_batch(*gaussian_pair_sample(m, 0.0, n_reps=n_reps, seed=rng), 0.0, bandwidth=1.0)[
        "statistic"
    ]
    return pd.Series(
        {
            "N-TE": st["statistic"],
            "|N-TE - MTE / mean(D)|": abs(st["statistic"] - st["mte"] / st["mean_d"]),
            "|N-TE(y, y_cf) - N-TE(y_cf, y)|": abs(st["statistic"] - nte(yc, yy, bandwidth=1.0)),
            "|N-TE - N-TE(units permuted)|": abs(st["statistic"] - nte(yy[perm_units], yc[perm_units], bandwidth=1.0)),
            "N-TE after swapping half the pairs": nte(ys, ycs, bandwidth=1.0),
            "max N-TE over shifts (must be <= 1)": max(
                closed["Gaussian shift"]["mean"].max(), closed["Bernoulli gap"]["mean"].max()
            ),
            "mean N-TE under P = Q": null_draws.mean(),
            "s.e. of that mean": null_draws.std() / np.sqrt(n_reps),
            "share of negative estimates under P = Q": float(np.mean(null_draws < 0)),
        }
    )


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
        rows.append(
            {
                "m": m,
                "empirical 95% |MTE - MMD^2|": np.quantile(dev, 0.95),
                "Hoeffding 95% t": t_h,
                "P(|dev| >= t_H)": float(np.mean(dev >= t_h)),
                "sd(sqrt(m) N-TE)": df["statistic"].std() * np.sqrt(m),
            }
        )
    return pd.DataFrame(rows)
