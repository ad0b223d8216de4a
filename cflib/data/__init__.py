"""Data: synthetic generators with ground-truth counterfactuals, and real-data loaders.

Real data come only from registry packages (:mod:`cflib.data.real`); everything else is generated,
which also gives the true counterfactuals the papers never had. Every public name of the
sub-modules is available here and imported on first use only (see :mod:`cflib._lazy`).
"""

from __future__ import annotations

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__)
