"""Causal graphs and structural causal models (abduction, action, prediction)."""

from __future__ import annotations

from .examples import fit_intensity_mechanism, intensity_mechanism, morpho_attributes
from .graph import CausalGraph
from .scm import SCM, Mechanism

__all__ = ["CausalGraph", "SCM", "Mechanism", "morpho_attributes", "intensity_mechanism", "fit_intensity_mechanism"]
