"""The ground-truth protocol of the synthetic datasets: ``true_counterfactual(do, idx)``.

The papers' datasets (MNIST, CelebA, MIMIC-CXR) have no true counterfactuals; the synthetic stand-ins
of :mod:`cflib.data` do, because their generators keep each unit's exogenous noise. A dataset that
implements :class:`CounterfactualDataset` (MorphoSynth, SmileyFaces, Colour-Digits, the shapes scene and
the toy chest X-rays) gives its units as a dict of named variables, the same dict a
:class:`~cflib.scm.protocol.CounterfactualModel` takes, and the true counterfactual of any of them under
any intervention on the image's parents, so a model's counterfactuals can be compared with the truth.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = ["CounterfactualDataset", "check_do"]


@runtime_checkable
class CounterfactualDataset(Protocol):
    """A dataset with ground-truth counterfactuals.

    Methods
    -------
    observations()
        The observed variables of every unit as a dict (the image under ``"x"``).
    true_counterfactual(do, idx=None)
        The true counterfactual values of every variable of the units ``idx`` (all by default) under
        ``do``: one value (broadcast) or one per unit for each intervened variable.
    """

    def observations(self) -> dict[str, np.ndarray]:
        """The observed variables of every unit."""

    def true_counterfactual(self, do: Mapping[str, Any], idx: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """True counterfactual values of every variable under ``do``."""


def check_do(do: Any, allowed: tuple[str, ...], n: int, dataset: str) -> dict[str, np.ndarray]:
    """Check an intervention dict and broadcast each value to one per unit.

    Parameters
    ----------
    do : Any
        Candidate intervention ``{variable: value or values}``.
    allowed : tuple of str
        Variables that may be intervened on.
    n : int
        Number of units.
    dataset : str
        Dataset name used in error messages.

    Returns
    -------
    dict
        Variable -> ``(n,)`` array.
    """
    if not isinstance(do, Mapping):
        raise TypeError(f"do must be a dict variable -> value(s), got {type(do).__name__}")
    out = {}
    for k, v in do.items():
        if k not in allowed:
            raise ValueError(
                f"cannot intervene on {k!r}: {dataset}'s interventions are on {', '.join(map(repr, allowed))}"
            )
        v = np.asarray(v)
        if v.ndim > 1 or (v.ndim == 1 and len(v) != n):
            raise ValueError(f"do[{k!r}] must be a scalar or have length {n}, got shape {v.shape}")
        out[k] = np.broadcast_to(v, (n,)).copy()
    return out
