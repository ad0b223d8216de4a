"""Data: synthetic generators with ground-truth counterfactuals, and real-data loaders.

Real data come only from registry packages (:mod:`cflib.data.real`); everything else is generated,
which also gives the true counterfactuals the papers never had.
"""

from __future__ import annotations

from .real import DatasetMissingError, dataset_path, fetch, load_adult, load_compas, load_german

__all__ = ["DatasetMissingError", "dataset_path", "fetch", "load_adult", "load_compas", "load_german"]
