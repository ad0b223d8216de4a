"""Models: image generative models (VAE, hierarchical VAE, GAN, latent diffusion), flows, pseudo-oracles, MINE.

Every public name of the sub-modules is available here (``from cflib.models import ...``) and is
imported on first use only (see :mod:`cflib._lazy`).
"""

from __future__ import annotations

from .._lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, __file__)
