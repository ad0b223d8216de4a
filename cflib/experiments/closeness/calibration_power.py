"""Studies of notebook 02 (calibration and power): CF-CLOT's z-scores, type-I error and power by simulation.

The z-score at the null boundary N-TE = epsilon (Theorem 1), the rejection rate there for the paper's
and the delta-method standard errors (Theorem 2), the power against the sample size with Theorem 3's
normal approximation, and the four calibrations of the epsilon = 0 test.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy import stats

from ...stats.closeness import (
    cfclot_test,
    gaussian_pair_sample,
    shift_for_target_nte,
    simulate_cfclot,
)

__all__ = [
    "boundary_zscores",
    "ks_normality",
    "type1_study",
    "power_study",
    "power_point",
    "EPS0_METHODS",
    "eps0_study",
    "boundary_bootstrap",
]


def boundary_zscores(
    eps_grid: Sequence[float], m: int, n_reps: int, alpha: float, rng: np.random.Generator
) -> dict[float, pd.DataFrame]:
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


def type1_study(
    eps_grid: Sequence[float],
    m_grid: Sequence[int],
    n_reps: int,
    alpha: float,
    rng: np.random.Generator,
    *,
    reuse: Mapping[float, pd.DataFrame] | None = None,
    reuse_m: int | None = None,
) -> pd.DataFrame:
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
            df = (
                reuse[eps]
                if reuse is not None and m == reuse_m
                else simulate_cfclot(m, eps, eps, n_reps=n_reps, alpha=alpha, seed=rng)
            )
            rows.append(
                {
                    "epsilon": eps,
                    "m": m,
                    "paper": df["reject_paper"].mean(),
                    "delta": df["reject_delta"].mean(),
                    "sd(sqrt(m) T)": df["statistic"].std() * np.sqrt(m),
                    "mean sigma paper": df["sigma_paper"].mean(),
                    "mean sigma delta": df["sigma_delta"].mean(),
                }
            )
    return pd.DataFrame(rows)


def _power_theory(m: int, eps_prime: float, eps: float, sd: float, alpha: float) -> float:
    """Theorem 3's normal approximation of the power (scales corrected, notes Sec. 2.7)."""
    return stats.norm.sf(stats.norm.ppf(1 - alpha) - np.sqrt(m) * (eps_prime - eps) / sd)


def power_study(
    m_grid: Sequence[int], eps_primes: Sequence[float], eps: float, n_reps: int, alpha: float, rng: np.random.Generator
) -> pd.DataFrame:
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
            rows.append(
                {"m": m, "eps'": e1, "power": df["reject_delta"].mean(), "theory": _power_theory(m, e1, eps, sd, alpha)}
            )
    return pd.DataFrame(rows)


def power_point(
    m: int, eps_prime: float, eps: float, n_reps: int, alpha: float, rng: np.random.Generator
) -> dict[str, float]:
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
    return {
        "power_point": float(pt["reject_delta"].mean()),
        "power_paper_point": float(pt["reject_paper"].mean()),
        "power_theory_point": float(_power_theory(m, eps_prime, eps, sd, alpha)),
        "mean_nte_point": float(pt["statistic"].mean()),
    }


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
    null: dict[str, list[bool]] = {k: [] for k in EPS0_METHODS}
    alt: dict[str, list[bool]] = {k: [] for k in EPS0_METHODS}
    for _ in range(n_reps):
        y, y_cf = gaussian_pair_sample(m, 0.0, seed=rng)
        y1, y1_cf = gaussian_pair_sample(m, shift, seed=rng)
        for k in EPS0_METHODS:
            null[k].append(cfclot_test(y, y_cf, 0.0, method=k, bandwidth=1.0, n_boot=n_boot, seed=rng).rejected)
            alt[k].append(cfclot_test(y1, y1_cf, 0.0, method=k, bandwidth=1.0, n_boot=n_boot, seed=rng).rejected)
    return pd.DataFrame(
        {
            "type-I (P = Q)": {k: np.mean(v) for k, v in null.items()},
            f"power (shift {shift})": {k: np.mean(v) for k, v in alt.items()},
        }
    )


def boundary_bootstrap(
    eps_grid: Sequence[float], m: int, n_reps: int, n_boot: int, rng: np.random.Generator
) -> pd.DataFrame:
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
        rej = [
            cfclot_test(
                *gaussian_pair_sample(m, delta, seed=rng),
                eps,
                method="bootstrap",
                bandwidth=1.0,
                n_boot=n_boot,
                seed=rng,
            ).rejected
            for _ in range(n_reps)
        ]
        rows.append({"epsilon": eps, "m": m, "bootstrap rejection rate": np.mean(rej), "replications": n_reps})
    return pd.DataFrame(rows)
