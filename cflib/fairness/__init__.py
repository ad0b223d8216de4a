"""Causal fairness: the standard fairness model, doubly robust Ctf-DE/IE/SE, TV and predictive-parity decompositions.

Import from the submodules (``from cflib.fairness.effects import ctf_effects``).
"""
