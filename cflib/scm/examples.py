"""Example SCMs with closed-form mechanisms.

``morpho_attributes`` is the attribute part of Morpho-MNIST's generative model as used by deepscm
(Pawlowski et al. 2020) and the benchmark paper (Melistas et al., Sec. 4.1): stroke thickness
``t = 0.5 + g`` with ``g ~ Gamma(shape 10, rate 5)`` and intensity
``i = 64 + 191 * sigmoid(2 (t - 2.5) + 0.5 eps)`` with ``eps ~ N(0, 1)``.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, logit

from ..validation import ValidationError, check_array, check_positive, check_real, check_same_length
from .graph import CausalGraph
from .scm import SCM, Mechanism

__all__ = ["morpho_attributes", "intensity_mechanism", "fit_intensity_mechanism"]

I_LOW, I_RANGE = 64.0, 191.0


def intensity_mechanism(slope: float = 2.0, center: float = 2.5, noise_scale: float = 0.5) -> Mechanism:
    """The intensity mechanism ``i = 64 + 191 sigmoid(slope (t - center) + noise_scale eps)``.

    Parameters
    ----------
    slope, center, noise_scale : float
        Mechanism parameters (deepscm's values by default).

    Returns
    -------
    Mechanism
        With an exact inverse ``eps = (logit((i - 64)/191) - slope (t - center)) / noise_scale``.
    """
    slope, center = check_real(slope, "slope"), check_real(center, "center")
    noise_scale = check_positive(noise_scale, "noise_scale")

    def forward(pa, u):
        return I_LOW + I_RANGE * expit(slope * (pa["t"] - center) + noise_scale * u)

    def inverse(pa, i):
        frac = (np.asarray(i) - I_LOW) / I_RANGE
        if np.any((frac <= 0) | (frac >= 1)):
            raise ValidationError("intensity must lie strictly between 64 and 255 to be abducted")
        return (logit(frac) - slope * (pa["t"] - center)) / noise_scale

    return Mechanism(forward=forward, noise=lambda rng, n: rng.standard_normal(n), inverse=inverse)


def morpho_attributes() -> SCM:
    """Thickness -> intensity SCM of Morpho-MNIST (deepscm's mechanisms).

    Returns
    -------
    SCM
        Nodes ``t`` (thickness) and ``i`` (intensity), both invertible.
    """
    thickness = Mechanism(
        forward=lambda pa, u: 0.5 + u,
        noise=lambda rng, n: rng.gamma(shape=10.0, scale=1 / 5.0, size=n),
        inverse=lambda pa, t: np.asarray(t) - 0.5,
    )
    return SCM(CausalGraph({"t": [], "i": ["t"]}), {"t": thickness, "i": intensity_mechanism()})


def fit_intensity_mechanism(t: np.ndarray, i: np.ndarray) -> tuple[Mechanism, dict[str, float]]:
    """Estimate the intensity mechanism's slope, centre and noise scale from observational data.

    On the logit scale the mechanism is linear, ``logit((i - 64)/191) = slope t - slope center +
    noise_scale eps``, so ordinary least squares recovers it; the residual standard deviation
    estimates ``noise_scale``. The estimated mechanism keeps the functional form, so its
    counterfactuals differ from the truth only through estimation error.

    Parameters
    ----------
    t, i : numpy.ndarray
        Observed thickness and intensity (same length, at least 3 units, ``t`` not constant, ``i``
        strictly between 64 and 255).

    Returns
    -------
    (Mechanism, dict)
        The fitted mechanism and its parameters ``{"slope", "center", "noise_scale"}``.

    Raises
    ------
    TypeError, ValueError
        Arrays that are not 1-D, of different lengths, shorter than 3, non-finite, a constant ``t``, or an
        intensity outside (64, 255) (its logit is infinite).
    """
    t = np.asarray(check_array(t, "t"), dtype=float)
    i = np.asarray(check_array(i, "i"), dtype=float)
    check_same_length(t=t, i=i)
    if t.size < 3:
        raise ValidationError(f"need at least 3 units to fit the mechanism, got {t.size}")
    if np.ptp(t) == 0:
        raise ValidationError(f"t must vary to fit a slope, got the constant {t[0]!r}")
    if i.min() <= I_LOW or i.max() >= I_LOW + I_RANGE:
        raise ValidationError(
            f"i must lie strictly between {I_LOW:g} and {I_LOW + I_RANGE:g} (its logit is fitted), got [{i.min():.4g}, {i.max():.4g}]"
        )
    y = logit((i - I_LOW) / I_RANGE)
    slope, intercept = np.polyfit(t, y, 1)
    resid = y - (slope * t + intercept)
    noise_scale = float(np.sqrt(resid @ resid / (t.size - 2)))
    params = {"slope": float(slope), "center": float(-intercept / slope), "noise_scale": noise_scale}
    return intensity_mechanism(**params), params
