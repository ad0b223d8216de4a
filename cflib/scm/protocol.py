"""The one counterfactual-model protocol: abduction, action and prediction over named variables.

Pearl's three steps (*Causality*, 2009, Sec. 7.1) as three methods on a dict of named variables
(parents and, for image models, the image). Every counterfactual model of the book implements it:
:class:`cflib.scm.SCM`, :class:`cflib.scm.deep.DeepSCM`, and, through the thin adapters of
:mod:`cflib.scm.adapters`, the conditional VAE, hierarchical VAE, GAN, latent-diffusion model and any
plain function ``f(x, pa, pa_star)`` (the counterfactual functions of Monteiro et al., ICLR 2023,
Sec. 3.1). The axiom metrics of :mod:`cflib.metrics.axioms` need nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["CounterfactualModel", "Values"]

Values = dict[str, np.ndarray]


@runtime_checkable
class CounterfactualModel(Protocol):
    """A model that answers counterfactual queries on units described by named variables.

    ``obs`` maps every variable the model knows (e.g. ``{"t", "i", "d", "x"}``) to one row per unit;
    ``do`` maps the intervened variables to one value (broadcast) or one value per unit. All three
    methods return plain dicts, so a counterfactual can be fed back in (composition, reversibility).

    Methods
    -------
    abduct(obs)
        The exogenous noise of every unit (whatever the model uses to represent it).
    predict(noise, do=None)
        Push the noise through the model with the ``do`` variables held fixed; every variable's values.
    counterfactual(obs, do)
        ``predict(abduct(obs), do)``: the counterfactual values of every variable.
    """

    def abduct(self, obs: Mapping[str, Any]) -> Any:
        """Abduction: the exogenous noise behind ``obs``."""

    def predict(self, noise: Any, do: Mapping[str, Any] | None = None) -> Values:
        """Action and prediction from abducted (or sampled) noise."""

    def counterfactual(self, obs: Mapping[str, Any], do: Mapping[str, Any]) -> Values:
        """Abduction, action and prediction in one call."""
