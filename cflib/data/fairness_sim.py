"""Simulators with known truth for the parity-decomposition chapter.

Structural causal models compatible with the standard fairness model of Plecko & Bareinboim
(arXiv 2306.05059, Fig. 2), each returning observed columns *and* the counterfactuals obtained by
re-solving the same units' equations (shared exogenous noise), so that every Ctf measure and every
term of Theorem 1 has an exact or Monte Carlo ground truth:

* :func:`linear_sfm`: a Gaussian linear SFM with a confounder; closed forms of TV, Ctf-DE, Ctf-IE and
  Ctf-SE in :func:`linear_sfm_truth` (notes, claim 6), the units' counterfactuals under their own noise in
  :func:`linear_sfm_counterfactuals`;
* :func:`linear_mediation_scm`: the linear SCM of Corollary 1 (``Z`` empty);
* :func:`appendix_a2_scm`: the non-linear SCM of the paper's App. A.2 (Eqs. 44-49);
* :func:`discrete_sfm` and :func:`discrete_sfm_joint`: a binary SFM with ``X <-> Z`` confounding and
  its exact joint distribution (to check the identification formulas, App. B);
* :func:`compas_like_sfm`: a synthetic stand-in for COMPAS (notes, Sec. 4.3), with a Northpointe-like
  score and an oracle fair predictor; its mechanisms :func:`compas_w` (the mediators) and
  :func:`compas_py` (the risk of recidivism) are public for callers that integrate over the mediators'
  noise (:func:`cflib.experiments.parity.compas_fair_risk`). They are not listed in ``__all__``, so
  ``cflib.data`` does not re-export them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats
from scipy.special import expit

from ..runtime import as_generator

__all__ = [
    "LinearSFMParams",
    "linear_sfm",
    "linear_sfm_truth",
    "linear_sfm_counterfactuals",
    "linear_mediation_scm",
    "appendix_a2_scm",
    "a2_oracle_predictor",
    "A2_ATE",
    "discrete_sfm",
    "discrete_sfm_joint",
    "compas_like_sfm",
    "ctf_truth",
]

#: ATE = ETT of the App. A.2 SCM with alpha = 1, beta = 1/2: 1.5 + 1/9 (notes, Sec. 3.1).
A2_ATE = 1.5 + 1.0 / 9.0


def _check_n(n: int) -> int:
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    return int(n)


def ctf_truth(x: np.ndarray, y_x0: np.ndarray, y_x1: np.ndarray, y_x1_wx0: np.ndarray) -> dict[str, float]:
    """Ctf-DE, Ctf-IE, Ctf-SE and TV from simulated potential outcomes (Def. 3).

    Parameters
    ----------
    x : numpy.ndarray
        Observed protected attribute (0 = ``x0``, 1 = ``x1``).
    y_x0, y_x1 : numpy.ndarray
        ``Y_{x0}`` and ``Y_{x1}`` of every unit (or their means over the unit's own outcome noise).
    y_x1_wx0 : numpy.ndarray
        The nested counterfactual ``Y_{x1, W_{x0}}``.

    Returns
    -------
    dict
        ``TV, DE, IE, SE`` with ``TV = DE - IE - SE`` exactly (consistency: ``Y = Y_x`` when ``X = x``).
    """
    x = np.asarray(x).astype(bool)
    a = y_x1_wx0[~x].mean()
    de = a - y_x0[~x].mean()
    ie = a - y_x1[~x].mean()
    se = y_x1[~x].mean() - y_x1[x].mean()
    return {"TV": float(y_x1[x].mean() - y_x0[~x].mean()), "DE": float(de), "IE": float(ie), "SE": float(se)}


# --------------------------------------------------------------------------- linear SFM
@dataclass(frozen=True)
class LinearSFMParams:
    """Coefficients of the linear SFM.

    ``X ~ Bern(p)``, ``Z | X ~ N(mu0 + (mu1 - mu0) X, 1)`` (this encodes ``X <-> Z``; setting ``X``
    leaves ``Z`` alone), ``W = a_xw X + a_zw Z + U_W``, ``Y = b_x X + b_w W + b_z Z + U_Y`` with
    ``U_W, U_Y ~ N(0, sigma^2)``.
    """

    p: float = 0.5
    mu0: float = 0.0
    mu1: float = 1.0
    a_xw: float = 1.0
    a_zw: float = 0.5
    b_x: float = 0.5
    b_w: float = 1.0
    b_z: float = 0.8
    sigma: float = 1.0


def linear_sfm_truth(params: LinearSFMParams = LinearSFMParams()) -> dict[str, float]:
    """Closed-form TV and Ctf measures of the linear SFM (notes, claim 6).

    Parameters
    ----------
    params : LinearSFMParams

    Returns
    -------
    dict
        ``DE = b_x``, ``IE = -b_w a_xw``, ``SE = -(b_z + b_w a_zw)(mu1 - mu0)``, ``TV = DE - IE - SE``.
    """
    d = params.mu1 - params.mu0
    de = params.b_x
    ie = -params.b_w * params.a_xw
    se = -(params.b_z + params.b_w * params.a_zw) * d
    return {"TV": de - ie - se, "DE": de, "IE": ie, "SE": se}


def linear_sfm(
    n: int, params: LinearSFMParams = LinearSFMParams(), *, seed: int | np.random.Generator | None = None
) -> pd.DataFrame:
    """Draw ``n`` units from the linear SFM.

    Parameters
    ----------
    n : int
        Sample size.
    params : LinearSFMParams
        Coefficients.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        Columns ``x, z, w, y`` and the efficient predictor ``y_hat = E[Y | x, z, w]``.
    """
    n = _check_n(n)
    if not 0 < params.p < 1:
        raise ValueError(f"params.p must lie in (0, 1), got {params.p}")
    rng = as_generator(seed)
    x = (rng.random(n) < params.p).astype(int)
    z = params.mu0 + (params.mu1 - params.mu0) * x + rng.standard_normal(n)
    w = params.a_xw * x + params.a_zw * z + params.sigma * rng.standard_normal(n)
    mean_y = params.b_x * x + params.b_w * w + params.b_z * z
    y = mean_y + params.sigma * rng.standard_normal(n)
    return pd.DataFrame({"x": x, "z": z, "w": w, "y": y, "y_hat": mean_y})


def linear_sfm_counterfactuals(
    n: int, params: LinearSFMParams = LinearSFMParams(), *, seed: int | np.random.Generator | None = None
) -> pd.DataFrame:
    """Draw the units of :func:`linear_sfm` with each unit's counterfactuals under its own noise.

    The same draws in the same order as :func:`linear_sfm`, so the same seed gives the same ``x, z, w, y``; then
    the structural equations are solved again with ``X`` set, keeping the unit's ``Z``, ``U_W`` and ``U_Y`` (``Z``
    is confounded with ``X``, not caused by it). :func:`ctf_truth` of the columns is the Monte Carlo value of the
    Ctf measures on these units, which :func:`linear_sfm_truth` gives in closed form.

    Parameters
    ----------
    n : int
        Sample size.
    params : LinearSFMParams
        Coefficients.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        ``x, z, w, y``; ``w_x0, w_x1`` (``W`` under ``do(X = x0)``, ``do(X = x1)``); ``y_x0, y_x1`` (``Y_{x0}``,
        ``Y_{x1}``); ``y_x1_w0`` (the nested ``Y_{x1, W_{x0}}``: ``X = x1`` in ``Y``'s equation, ``W`` at its value
        under ``x0``).
    """
    n = _check_n(n)
    if not 0 < params.p < 1:
        raise ValueError(f"params.p must lie in (0, 1), got {params.p}")
    rng = as_generator(seed)
    x = (rng.random(n) < params.p).astype(int)
    z = params.mu0 + (params.mu1 - params.mu0) * x + rng.standard_normal(n)
    u_w = params.sigma * rng.standard_normal(n)
    u_y = params.sigma * rng.standard_normal(n)

    def w_of(xx: np.ndarray | float) -> np.ndarray:
        return params.a_xw * xx + params.a_zw * z + u_w

    def y_of(xx: np.ndarray | float, ww: np.ndarray) -> np.ndarray:
        return params.b_x * xx + params.b_w * ww + params.b_z * z + u_y

    w, w0, w1 = w_of(x), w_of(0.0), w_of(1.0)
    return pd.DataFrame(
        {
            "x": x,
            "z": z,
            "w": w,
            "y": y_of(x, w),
            "w_x0": w0,
            "w_x1": w1,
            "y_x0": y_of(0.0, w0),
            "y_x1": y_of(1.0, w1),
            "y_x1_w0": y_of(1.0, w0),
        }
    )


def linear_mediation_scm(
    n: int,
    *,
    a_xw: float = 0.8,
    a_wy: float = 1.5,
    a_xy: float = 0.5,
    p: float = 0.5,
    seed: int | np.random.Generator | None = None,
) -> pd.DataFrame:
    """The linear SCM of Corollary 1: ``W = a_xw X + U_W``, ``Y = a_xy X + a_wy W + U_Y`` (``Z`` empty).

    Parameters
    ----------
    n : int
    a_xw, a_wy, a_xy : float
        Path coefficients.
    p : float
        ``P(X = 1)``.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        ``x, w, y``, the efficient predictor ``y_hat`` and the counterfactuals ``y_x0, y_x1``,
        ``y_hat_x0, y_hat_x1`` of every unit.
    """
    n = _check_n(n)
    rng = as_generator(seed)
    x = (rng.random(n) < p).astype(int)
    uw, uy = rng.standard_normal(n), rng.standard_normal(n)

    def solve(xx):
        w = a_xw * xx + uw
        return w, a_xy * xx + a_wy * w + uy, a_xy * xx + a_wy * w

    w, y, yh = solve(x)
    _, y0, yh0 = solve(np.zeros(n))
    _, y1, yh1 = solve(np.ones(n))
    return pd.DataFrame({"x": x, "w": w, "y": y, "y_hat": yh, "y_x0": y0, "y_x1": y1, "y_hat_x0": yh0, "y_hat_x1": yh1})


# --------------------------------------------------------------------------- App. A.2
def a2_oracle_predictor(x: np.ndarray, w1: np.ndarray, w2: np.ndarray, beta: float = 0.5) -> np.ndarray:
    """The efficient predictor ``E[Y | x, w1, w2] = w1 w2 / 6 + w1 + beta x`` of the App. A.2 SCM.

    Parameters
    ----------
    x, w1, w2 : numpy.ndarray
    beta : float

    Returns
    -------
    numpy.ndarray
    """
    return np.asarray(w1) * np.asarray(w2) / 6.0 + np.asarray(w1) + beta * np.asarray(x)


def appendix_a2_scm(
    n: int, *, alpha: float = 1.0, beta: float = 0.5, seed: int | np.random.Generator | None = None
) -> pd.DataFrame:
    """The SCM of the paper's App. A.2 (Eqs. 44-49), with every unit's counterfactuals.

    ``X ~ Bern(1/2)``, ``W1 = alpha X + U1``, ``W2 = W1^2 / 4 - X / 3 + U2``,
    ``Y = W1 W2 / 6 + W1 + beta X + U_Y`` with standard normal ``U1, U2, U_Y``.

    Parameters
    ----------
    n : int
    alpha, beta : float
        The script's parameterisation (paper: 1 and 1/2).
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        ``x, w1, w2, y``, the true counterfactuals ``y_x0, y_x1`` and ``w1_x0, w2_x0``.
    """
    n = _check_n(n)
    rng = as_generator(seed)
    x = (rng.random(n) < 0.5).astype(int)
    u1, u2, uy = rng.standard_normal((3, n))

    def solve(xx):
        w1 = alpha * xx + u1
        w2 = w1**2 / 4 - xx / 3 + u2
        return w1, w2, w1 * w2 / 6 + w1 + beta * xx + uy

    w1, w2, y = solve(x)
    w1_0, w2_0, y0 = solve(np.zeros(n))
    _, _, y1 = solve(np.ones(n))
    return pd.DataFrame({"x": x, "w1": w1, "w2": w2, "y": y, "y_x0": y0, "y_x1": y1, "w1_x0": w1_0, "w2_x0": w2_0})


# --------------------------------------------------------------------------- discrete SFM
_DISCRETE = {"px": 0.5, "pz": (0.3, 0.7), "pw": (0.2, 0.3, 0.3), "py": (0.1, 0.15, 0.25, 0.35)}


def _discrete_probs(params):
    pz = params["pz"]
    a0, ax, az = params["pw"]
    b0, bx, bz, bw = params["py"]
    return pz, lambda x, z: a0 + ax * x + az * z, lambda x, z, w: b0 + bx * x + bz * z + bw * w


def discrete_sfm_joint(params: dict | None = None) -> pd.DataFrame:
    """Exact joint distribution of the binary SFM of :func:`discrete_sfm`.

    Parameters
    ----------
    params : dict, optional
        ``px = P(X=1)``, ``pz = (P(Z=1|x0), P(Z=1|x1))``, ``pw = (a0, a_x, a_z)`` with
        ``P(W=1|x,z) = a0 + a_x x + a_z z`` and ``py = (b0, b_x, b_z, b_w)`` likewise for ``Y``.

    Returns
    -------
    pandas.DataFrame
        16 rows ``x, z, w, y, p``.
    """
    params = {**_DISCRETE, **(params or {})}
    pz, pw, py = _discrete_probs(params)
    rows = []
    for x in (0, 1):
        for z in (0, 1):
            for w in (0, 1):
                for y in (0, 1):
                    p = params["px"] if x else 1 - params["px"]
                    p *= pz[x] if z else 1 - pz[x]
                    p *= pw(x, z) if w else 1 - pw(x, z)
                    p *= py(x, z, w) if y else 1 - py(x, z, w)
                    rows.append((x, z, w, y, p))
    return pd.DataFrame(rows, columns=["x", "z", "w", "y", "p"])


def discrete_sfm(n: int, params: dict | None = None, *, seed: int | np.random.Generator | None = None) -> pd.DataFrame:
    """Sample a binary SFM with ``X <-> Z`` confounding, with every unit's counterfactuals.

    ``Z`` is drawn given ``X`` (the bidirected edge: the two share an unobserved cause), and
    ``W = 1{U_W < P(W=1|x,z)}``, ``Y = 1{U_Y < P(Y=1|x,z,w)}`` with uniform noise shared across worlds.

    Parameters
    ----------
    n : int
    params : dict, optional
        See :func:`discrete_sfm_joint`.
    seed : int or numpy.random.Generator, optional

    Returns
    -------
    pandas.DataFrame
        ``x, z, w, y`` and ``y_x0, y_x1, y_x1_wx0``.
    """
    n = _check_n(n)
    params = {**_DISCRETE, **(params or {})}
    pz, pw, py = _discrete_probs(params)
    rng = as_generator(seed)
    x = (rng.random(n) < params["px"]).astype(int)
    z = (rng.random(n) < np.where(x == 1, pz[1], pz[0])).astype(int)
    uw, uy = rng.random((2, n))

    def w_of(xx):
        return (uw < pw(xx, z)).astype(int)

    def y_of(xx, w):
        return (uy < py(xx, z, w)).astype(int)

    zeros, ones = np.zeros(n, int), np.ones(n, int)
    w = w_of(x)
    return pd.DataFrame(
        {
            "x": x,
            "z": z,
            "w": w,
            "y": y_of(x, w),
            "y_x0": y_of(zeros, w_of(zeros)),
            "y_x1": y_of(ones, w_of(ones)),
            "y_x1_wx0": y_of(ones, w_of(zeros)),
        }
    )


# --------------------------------------------------------------------------- COMPAS-like SFM
def compas_w(
    x: np.ndarray, z1: np.ndarray, z2: np.ndarray, uj: np.ndarray, up: np.ndarray, ud: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The mediators of the COMPAS-like SFM from their uniform noise (the mechanisms of :func:`compas_like_sfm`).

    Parameters
    ----------
    x : numpy.ndarray
        Race (1 = Non-White); a counterfactual value sets it for every unit.
    z1, z2 : numpy.ndarray
        Male (0/1) and age.
    uj, up, ud : numpy.ndarray
        Uniform noise of the juvenile offences, the priors and the felony charge (inverse-CDF draws).

    Returns
    -------
    (numpy.ndarray, numpy.ndarray, numpy.ndarray)
        ``j`` (juvenile offences, Poisson), ``p`` (priors, Poisson) and ``d`` (felony charge, 0/1), each
        broadcast to the inputs' shape.
    """
    lam_j = np.exp(-2.3 + 0.9 * x + 0.3 * z1 - 0.05 * (z2 - 18))
    j = stats.poisson.ppf(uj, lam_j)
    lam_p = np.exp(0.3 + 0.35 * x + 0.3 * z1 + 0.02 * (z2 - 18) + 0.3 * np.minimum(j, 5))
    p = stats.poisson.ppf(up, lam_p)
    d = (ud < expit(0.3 + 0.25 * x + 0.1 * z1 + 0.15 * np.log1p(p))).astype(float)
    return j, p, d


def compas_py(x: np.ndarray, z1: np.ndarray, z2: np.ndarray, j: np.ndarray, p: np.ndarray, d: np.ndarray) -> np.ndarray:
    """``P(Y = 1 | x, z1, z2, j, p, d)``: the two-year recidivism risk of the COMPAS-like SFM.

    Parameters
    ----------
    x : numpy.ndarray
        Race (1 = Non-White); it has no direct effect on the risk.
    z1, z2 : numpy.ndarray
        Male (0/1) and age.
    j, p, d : numpy.ndarray
        The mediators, e.g. from :func:`compas_w`.

    Returns
    -------
    numpy.ndarray
        The probability of recidivism per unit.
    """
    return expit(-0.45 + 0.0 * x + 0.3 * z1 - 0.04 * (z2 - 18) + 0.45 * np.log1p(p) + 0.3 * np.minimum(j, 5) + 0.1 * d)


def _compas_pnp(x, z1, z2, j, p, d):
    return expit(-0.75 + 0.3 * x + 0.3 * z1 - 0.04 * (z2 - 18) + 0.7 * np.log1p(p) + 0.5 * np.minimum(j, 5) + 0.1 * d)


def compas_like_sfm(n: int, *, seed: int | np.random.Generator | None = None, return_truth: bool = False):
    """Synthetic stand-in for COMPAS with known Ctf measures (notes, Sec. 4.3).

    It stands for ProPublica's Broward County data: ``x`` is race (1 = Non-White), ``z1`` male,
    ``z2`` age, mediators ``j`` (juvenile offences), ``p`` (priors) and ``d`` (felony charge), ``y``
    two-year recidivism, ``np`` a Northpointe-like score with a direct race effect, and ``fp`` the
    notes' oracle fair predictor ``1{U_N < E[Y | x0, Z, W_{x0}]}`` for BN = {Z}. It keeps the group
    differences of the real data (mediator means, a zero direct effect of race on Y, a negative
    indirect and spurious effect) but none of its individuals.

    Parameters
    ----------
    n : int
    seed : int or numpy.random.Generator, optional
    return_truth : bool
        Also return the population Ctf measures of ``y``, ``np`` and ``fp`` computed from the same
        units' counterfactuals (outcome noise integrated out analytically; ``fp``'s measures treat
        the predictor as a function of the unit's own ``W_{x0}``, so its DE and IE are 0 by
        construction).

    Returns
    -------
    pandas.DataFrame or (pandas.DataFrame, dict)
        Columns ``x, z1, z2, j, p, d, y, np, fp, prob_y``; with ``return_truth`` a dict
        ``{"y": {...}, "np": {...}, "fp": {...}}`` of ``TV, DE, IE, SE``.
    """
    n = _check_n(n)
    rng = as_generator(seed)
    x = (rng.random(n) < 0.66).astype(float)
    z1 = (rng.random(n) < 0.77 + 0.056 * x).astype(float)
    z2 = 18 + rng.gamma(2.5, (19.7 - 4.4 * x) / 2.5)
    uj, up, ud, uy, un = rng.random((5, n))
    w = compas_w(x, z1, z2, uj, up, ud)
    w0 = compas_w(np.zeros(n), z1, z2, uj, up, ud)
    w1 = compas_w(np.ones(n), z1, z2, uj, up, ud)
    py = compas_py(x, z1, z2, *w)
    pnp = _compas_pnp(x, z1, z2, *w)
    # Oracle fair predictor: the x0-world risk of the unit, at its own counterfactual mediators.
    pfp = compas_py(np.zeros(n), z1, z2, *w0)
    df = pd.DataFrame(
        {
            "x": x.astype(int),
            "z1": z1.astype(int),
            "z2": z2,
            "j": w[0],
            "p": w[1],
            "d": w[2],
            "y": (uy < py).astype(int),
            "np": (un < pnp).astype(int),
            "fp": (un < pfp).astype(int),
            "prob_y": py,
        }
    )
    if not return_truth:
        return df
    zeros, ones = np.zeros(n), np.ones(n)
    truth = {}
    for name, f in (("y", compas_py), ("np", _compas_pnp)):
        truth[name] = ctf_truth(x, f(zeros, z1, z2, *w0), f(ones, z1, z2, *w1), f(ones, z1, z2, *w0))
    # The oracle FP reads the unit's W_{x0}, which no intervention on X changes.
    truth["fp"] = ctf_truth(x, pfp, pfp, pfp)
    return df, truth
