"""Models: image generative models (VAE, hierarchical VAE, GAN, latent diffusion), flows, pseudo-oracles, MINE.

Import from the submodules (``from cflib.models.vae import ConditionalVAE``).
"""
