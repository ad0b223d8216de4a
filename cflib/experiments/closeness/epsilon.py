"""Studies of notebook 04 (what epsilon means and where the test is blind).

The rate gaps a tolerance epsilon accepts, the role of the bandwidth in which epsilon can be reached,
flip against set-to-value interventions on a strongly unfair model, and the paper's LLM example.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike
from scipy import stats

from ...stats.closeness import (
    cfclot_test,
    gap_for_target_nte,
    nte,
    nte_bernoulli,
    nte_gaussian,
    nte_sup_gaussian,
)
from .audit import counterfactual_gap, counterfactual_outputs

__all__ = [
    "R_VALUES",
    "epsilon_gap_tables",
    "bandwidth_study",
    "direction_study",
    "flip_vs_set_study",
    "llm_example",
]


#: Kernel values k(0, 1) of the epsilon-to-rate-gap table: a sharp kernel and the Gaussian of bandwidth 1.
R_VALUES = {"r = 0": 0.0, "r = exp(-1/2)": float(np.exp(-0.5))}


def epsilon_gap_tables(gaps_pp: ArrayLike, eps_list: Sequence[float]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """N-TE of two decision rates ``0.5 ± gap/2``, and the largest gap each epsilon tolerates, for both ``r``.

    Parameters
    ----------
    gaps_pp : array-like of float
        Gaps in percentage points.
    eps_list : sequence of float
        Tolerances.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
        N-TE (rows ``r``, columns gaps) and tolerated gaps in points (rows ``r``, columns epsilon).
    """
    gaps = np.asarray(gaps_pp, dtype=float)
    table_gap = pd.DataFrame(
        {name: nte_bernoulli(0.5 + gaps / 200, 0.5 - gaps / 200, r=r) for name, r in R_VALUES.items()},
        index=pd.Index(gaps, name="gap (percentage points)"),
    ).T
    tolerated = pd.DataFrame(
        {name: [100 * gap_for_target_nte(e, r=r) for e in eps_list] for name, r in R_VALUES.items()},
        index=pd.Index(list(eps_list), name="epsilon"),
    ).T
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


def flip_vs_set_study(
    n_units: int, betas: Sequence[float], n_boot: int, rng: np.random.Generator, *, shares: Sequence[float] = (0.5, 0.2)
) -> pd.DataFrame:
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
                rows.append(
                    {
                        "P(a=1)": p,
                        "beta": beta,
                        "intervention": "flip" if how == "flip" else "set a := 0",
                        "N-TE": nte(y, y_cf),
                        "s.e.": at01.sigma / np.sqrt(at01.m),
                        "mean |Δp|": counterfactual_gap(model, units, ["a"], how),
                        "reject eps=0": cfclot_test(y, y_cf, 0.0, n_boot=n_boot, seed=rng).rejected
                        if beta > 0
                        else None,
                        "reject eps=0.1": at01.rejected,
                    }
                )
    return pd.DataFrame(rows)


def direction_study(n_units: int, betas: Sequence[float], seed: int, *, epsilon: float = 0.1) -> pd.DataFrame:
    """The flip of a balanced attribute tested pooled and per direction (the book's own finding).

    The closeness paper defines N-TE for one direction, ``do(a_t -> a_t')`` (Definition 4). Flipping every unit at
    once and comparing the pooled factual outputs with the pooled counterfactual ones mixes both directions: for
    ``f = sigmoid(c + beta a)`` with ``P(a = 1) = 1/2`` the two pooled samples have the same distribution whatever
    ``beta`` (:func:`flip_vs_set_study`). Each direction alone (the units with ``a = 0`` under ``do(a -> 1)``, those
    with ``a = 1`` under ``do(a -> 0)``) compares ``sigmoid(c)`` with ``sigmoid(c + beta)``, and sees it.

    Parameters
    ----------
    n_units : int
        Units (about half with ``a = 1``).
    betas : sequence of float
        Logit effects of the attribute.
    seed : int
        Seed of the units (a stream of its own: the other studies of the notebook keep theirs) and of the tests.
    epsilon : float
        CF-CLOT's tolerance (normal threshold, delta-method standard error).

    Returns
    -------
    pandas.DataFrame
        One row per ``beta``: N-TE (with its 95% interval) and p-value pooled and for each direction, the larger
        directional N-TE's
        ``1 - 0.05`` interval from the two ``97.5%`` intervals (each direction at ``alpha / 2``, as the audit's
        ``CF-CLOT`` row), and whether each form rejects ``epsilon``-closeness at level 0.05.
    """
    from scipy.stats import norm

    gen = np.random.default_rng([seed, 4])
    units = pd.DataFrame({"a": gen.binomial(1, 0.5, n_units), "c": gen.normal(size=n_units)})
    a = units["a"].to_numpy()
    z = float(norm.ppf(1 - 0.05 / 2))
    rows = []
    for beta in betas:

        def model(X: pd.DataFrame, beta: float = beta) -> np.ndarray:
            return 1 / (1 + np.exp(-(X["c"] + beta * X["a"])))

        y, y_cf = counterfactual_outputs(model, units, "a", "flip")
        pooled = cfclot_test(y, y_cf, epsilon, seed=seed)
        ways = [cfclot_test(y[a == code], y_cf[a == code], epsilon, alpha=0.025, seed=seed) for code in (0, 1)]
        worst = max(ways, key=lambda r: r.statistic)
        # epsilon > 0: the normal threshold, whose delta-method sigma is always set
        half, pooled_half = (z * float(r.sigma or 0.0) / np.sqrt(r.m) for r in (worst, pooled))
        rows.append(
            {
                "beta": beta,
                "N-TE pooled": pooled.statistic,
                "pooled low": pooled.statistic - pooled_half,
                "pooled high": pooled.statistic + pooled_half,
                "p pooled": pooled.pvalue,
                "N-TE a=0 under do(a->1)": ways[0].statistic,
                "N-TE a=1 under do(a->0)": ways[1].statistic,
                "larger N-TE low": worst.statistic - half,
                "larger N-TE high": worst.statistic + half,
                "p per direction": min(1.0, 2 * min(r.pvalue for r in ways)),
                "reject pooled": pooled.rejected,
                "reject per direction": any(r.rejected for r in ways),
            }
        )
    return pd.DataFrame(rows).set_index("beta")


def llm_example(
    m: int, rng: np.random.Generator, *, p1: float = 0.73, p2: float = 0.735, epsilon: float = 0.001
) -> pd.Series:
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
    return pd.Series(
        {
            "two-proportion z-test p-value": 2 * stats.norm.sf(abs(z_two)),
            "N-TE estimate": close.statistic,
            "N-TE closed form (r = 0)": nte_bernoulli(p1, p2),
            f"CF-CLOT eps={epsilon:g} p-value": close.pvalue,
            "CF-CLOT rejects": close.rejected,
            "rate difference": y_cf.mean() - y.mean(),
            "s.e. of the rate difference": np.sqrt((y.mean() * (1 - y.mean()) + y_cf.mean() * (1 - y_cf.mean())) / m),
            "N-TE s.e.": close.sigma / np.sqrt(m),
        }
    )
