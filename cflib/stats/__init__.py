"""Statistical tests: kernels, MMD, closeness (N-TE, CF-CLOT), counterfactual invariance (CIT-LR, DP, EO).

Import from the submodules (``from cflib.stats.mmd import mmd_test``).
"""
