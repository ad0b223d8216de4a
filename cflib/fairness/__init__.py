"""Causal fairness: the standard fairness model, doubly robust Ctf-DE/IE/SE, TV and predictive-parity decompositions.

Every public name of the sub-modules is available here (``from cflib.fairness import ...``) and is
imported on first use only (see :mod:`cflib._lazy`).
"""

from __future__ import annotations

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__)
