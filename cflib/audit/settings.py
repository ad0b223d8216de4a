"""The options every form of the audit shares (in memory, on a Dask cluster), in one frozen :class:`AuditSettings`.

:func:`cflib.audit.audit` and :func:`cflib.audit.distributed.audit_distributed` take these options as keywords and
hold them in one :class:`AuditSettings`; a new shared option is added here once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MIN_GROUP_SIZE", "AuditSettings"]

#: Smallest intersectional group whose comparisons are decided (smaller ones are listed, ``inconclusive``).
MIN_GROUP_SIZE = 30


@dataclass(frozen=True)
class AuditSettings:
    """The options the tabular audit shares between its in-memory and its distributed form.

    Attributes
    ----------
    alpha : float
        Level of every test; intervals at ``1 - alpha``.
    seed : int
        Seed of every random draw.
    n_boot : int
        Bootstrap replicates of the effects.
    learner : {"hgb", "linear", "rf"} or estimator
        Nuisance regressions of the doubly robust effects.
    y1 : scalar, optional
        The outcome's positive label.
    threshold : float
        Scores in [0, 1] at or above it are decision 1.
    epsilon : float
        CF-CLOT's tolerated N-TE.
    counterfactual : CounterfactualModel or callable, optional
        Each unit's counterfactual row under ``do(x = the other level)``: adds ECA, CF-CLOT and (with ``z``) CIT-LR.
    z : sequence of str, optional
        CIT-LR's adjustment set.
    tolerances : mapping of str to float, optional
        The largest effect accepted per check (:mod:`cflib.audit.status`).
    progress : bool
        Show a progress bar (quiet when standard error is not a terminal).
    groups : sequence of str, optional
        Columns whose combinations form intersectional groups (``["sex", "race"]``): their group table and DP, EO
        and FPR differences against the largest combination (:mod:`cflib.audit.intersections`).
    min_group_size : int
        Combinations with fewer units are listed with their ``n`` and ``inconclusive``, never dropped.
    """

    alpha: float = 0.05
    seed: int = 0
    n_boot: int = 200
    learner: Any = "hgb"
    y1: Any = None
    threshold: float = 0.5
    epsilon: float = 0.1
    counterfactual: Any = None
    z: Sequence[str] | None = None
    tolerances: Mapping[str, float] | None = None
    progress: bool = True
    groups: Sequence[str] | None = None
    min_group_size: int = MIN_GROUP_SIZE

    def with_options(self, **options: Any) -> AuditSettings:
        """These settings with some options replaced.

        Parameters
        ----------
        **options
            Fields of :class:`AuditSettings`.

        Returns
        -------
        AuditSettings

        Raises
        ------
        TypeError
            An option that is not a field (the message lists them).
        """
        names = [f.name for f in dataclasses.fields(self)]
        unknown = sorted(k for k in options if k not in names)
        if unknown:
            raise TypeError(f"unknown audit option(s) {unknown}; the options are {names}")
        return dataclasses.replace(self, **options)

    def group_columns(self) -> list[str] | None:
        """The intersectional group columns as a list (``None`` without them).

        Returns
        -------
        list of str or None

        Raises
        ------
        ValueError
            ``groups`` is not a column name or a list of them, or ``min_group_size`` is not a whole number >= 1.
        """
        if isinstance(self.min_group_size, bool) or not isinstance(self.min_group_size, int) or self.min_group_size < 1:
            raise ValueError(f"min_group_size must be a whole number >= 1, got {self.min_group_size!r}")
        if self.groups is None:
            return None
        cols = [self.groups] if isinstance(self.groups, str) else list(self.groups)
        if not cols or not all(isinstance(c, str) and c for c in cols) or len(set(cols)) < len(cols):
            raise ValueError(
                f"groups must name one or more distinct columns, such as ['sex', 'race'], got {self.groups!r}"
            )
        return cols
