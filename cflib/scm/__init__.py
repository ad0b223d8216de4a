"""Causal graphs and structural causal models (abduction, action, prediction), and deep SCMs.

The core (:class:`CausalGraph`, :class:`SCM`, :class:`Mechanism`, the Morpho-MNIST attribute
mechanisms) is imported eagerly; the deep SCM of the benchmark chapter (:mod:`cflib.scm.deep`) on
first use.
"""

from __future__ import annotations

from .._lazy import attach
from .examples import fit_intensity_mechanism, intensity_mechanism, morpho_attributes
from .graph import CausalGraph
from .scm import SCM, Mechanism

__getattr__, __dir__, __all__ = attach(
    __name__,
    __file__,
    eager={
        "CausalGraph": CausalGraph,
        "SCM": SCM,
        "Mechanism": Mechanism,
        "morpho_attributes": morpho_attributes,
        "intensity_mechanism": intensity_mechanism,
        "fit_intensity_mechanism": fit_intensity_mechanism,
    },
)
