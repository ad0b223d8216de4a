"""The Standard Fairness Model (SFM) over a pandas DataFrame.

Implements the causal assumptions of Plecko & Bareinboim, *Reconciling predictive and statistical
parity: a causal approach* (arXiv 2306.05059), Sec. 2 and Fig. 2: a binary protected attribute
``X``, confounders ``Z`` (not affected by ``X``, possibly confounded with it, ``X <-> Z``),
mediators ``W`` (possibly affected by ``X``) and an outcome ``Y`` (or a predictor ``Y_hat``, which has
the same parents ``X, Z, W``; Fig. 3). No other hidden confounding is assumed.

:class:`StandardFairnessModel` validates a data frame against these roles and turns it into the
numeric arrays the estimators of :mod:`cflib.fairness.effects` use.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["StandardFairnessModel", "SFMArrays", "BN_TO_EFFECT", "EFFECTS", "bn_effects"]

#: The three pathway-specific measures of Def. 3, in the order of Prop. 3.
EFFECTS = ("DE", "IE", "SE")

#: Business-necessity vocabulary of the paper's experiments (Sec. 4): a variable group in BN keeps
#: the effect that runs through it. The direct effect never runs through a group.
BN_TO_EFFECT = {"Z": "SE", "W": "IE"}


def bn_effects(bn: Iterable[str]) -> frozenset[str]:
    """Translate a business-necessity set into the set of effects it keeps.

    Parameters
    ----------
    bn : iterable of str
        Either effects (``"DE"``, ``"IE"``, ``"SE"``, Alg. 1's vocabulary) or variable groups
        (``"Z"``, ``"W"``, the vocabulary of Sec. 4), or a mix.

    Returns
    -------
    frozenset of str
        The effects in BN.

    Raises
    ------
    TypeError
        ``bn`` is a string (a common slip for ``{"Z"}``).
    ValueError
        An unknown name.
    """
    if isinstance(bn, str):
        raise TypeError(f"bn must be a set of names such as {{'Z'}} or {{'SE'}}, got the string {bn!r}")
    out = set()
    for b in bn:
        if b in EFFECTS:
            out.add(b)
        elif b in BN_TO_EFFECT:
            out.add(BN_TO_EFFECT[b])
        else:
            raise ValueError(
                f"unknown business-necessity element {b!r}; use effects {EFFECTS} or groups {tuple(BN_TO_EFFECT)}"
            )
    return frozenset(out)


@dataclass(frozen=True)
class SFMArrays:
    """Numeric view of a data frame under an SFM.

    Attributes
    ----------
    x : numpy.ndarray
        ``(n,)`` int array, 1 for ``x1`` and 0 for ``x0``.
    z : numpy.ndarray
        ``(n, p_z)`` float design matrix of the confounders (categoricals one-hot encoded).
    w : numpy.ndarray
        ``(n, p_w)`` float design matrix of the mediators.
    y : numpy.ndarray or None
        ``(n,)`` float outcome, if one was requested.
    """

    x: np.ndarray
    z: np.ndarray
    w: np.ndarray
    y: np.ndarray | None


def _design(df: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    if not cols:
        return np.zeros((len(df), 0))
    part = df[list(cols)]
    # Categorical/object columns become indicator columns (first level dropped) so every learner,
    # including linear ones, sees a full-rank numeric design.
    part = pd.get_dummies(part, drop_first=True, dtype=float)
    return part.to_numpy(dtype=float)


@dataclass(frozen=True)
class StandardFairnessModel:
    """The standard fairness model of Plecko & Bareinboim (Fig. 2) bound to column names.

    Parameters
    ----------
    x : str
        Protected attribute column. Must take exactly two values.
    z : sequence of str
        Confounder columns (may be empty); stored as a tuple.
    w : sequence of str
        Mediator columns (may be empty); stored as a tuple.
    y : str
        Outcome column.
    x0, x1 : Any, optional
        The baseline and comparison levels of ``x``. Default: if the column holds 0/1 (or
        ``False``/``True``), ``x0 = 0`` and ``x1 = 1``; otherwise they must be given.

    Examples
    --------
    >>> sfm = StandardFairnessModel(x="race", z=["sex", "age"], w=["priors"], y="recid",
    ...                             x0="White", x1="Non-White")
    """

    x: str
    z: Sequence[str]
    w: Sequence[str]
    y: str
    x0: Any = None
    x1: Any = None

    def __post_init__(self) -> None:
        for name in ("x", "y"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise TypeError(f"{name} must be a column name (non-empty string), got {getattr(self, name)!r}")
        for name in ("z", "w"):
            val = getattr(self, name)
            if isinstance(val, str):
                raise TypeError(f"{name} must be a list of column names, got the string {val!r}; use [{val!r}]")
            val = tuple(val)
            if not all(isinstance(c, str) for c in val):
                raise TypeError(f"{name} must be a list of column names (strings), got {val!r}")
            object.__setattr__(self, name, val)
        roles = [self.x, *self.z, *self.w, self.y]
        dup = {c for c in roles if roles.count(c) > 1}
        if dup:
            raise ValueError(f"a column can have only one role in the SFM; repeated: {sorted(dup)}")
        if (self.x0 is None) != (self.x1 is None):
            raise ValueError("give both x0 and x1, or neither (0/1 coding is then assumed)")
        if self.x0 is not None and self.x0 == self.x1:
            raise ValueError(f"x0 and x1 must differ, both are {self.x0!r}")

    # ------------------------------------------------------------------ validation
    def levels(self, data: pd.DataFrame) -> tuple[Any, Any]:
        """The ``(x0, x1)`` levels used for ``data``.

        Parameters
        ----------
        data : pandas.DataFrame

        Returns
        -------
        tuple
            ``(x0, x1)``.
        """
        vals = set(pd.unique(data[self.x]))
        if len(vals) != 2:
            raise ValueError(
                f"protected attribute {self.x!r} must be binary, it takes {len(vals)} values: {sorted(map(str, vals))[:10]}"
            )
        if self.x0 is not None:
            return self.x0, self.x1
        if vals <= {0, 1} or vals <= {False, True}:
            return 0, 1
        raise ValueError(
            f"column {self.x!r} has levels {sorted(map(str, vals))}; pass x0= and x1= to name the baseline and comparison"
        )

    def validate(self, data: pd.DataFrame, outcomes: Sequence[str] | None = None) -> None:
        """Check ``data`` against the SFM.

        Parameters
        ----------
        data : pandas.DataFrame
            The data.
        outcomes : sequence of str, optional
            Outcome/predictor columns that will be analysed (checked for presence, numeric type and
            missing values); default ``[self.y]``.

        Raises
        ------
        TypeError
            ``data`` is not a DataFrame, or an outcome is not numeric.
        ValueError
            Missing columns, missing values, a protected attribute that does not take exactly the
            two levels ``x0`` and ``x1``, or a group with fewer than two units.
        """
        if not isinstance(data, pd.DataFrame):
            raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
        if isinstance(outcomes, str):
            raise TypeError(f"outcomes must be a list of column names, got the string {outcomes!r}; use [{outcomes!r}]")
        if len(data) == 0:
            raise ValueError("data is empty: it needs rows of both levels of the protected attribute")
        outcomes = [self.y] if outcomes is None else list(dict.fromkeys(outcomes))
        cols = [self.x, *self.z, *self.w, *outcomes]
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise ValueError(f"columns {missing} are not in data; available: {list(data.columns)[:20]}")
        na = data[cols].isna().sum()
        na = na[na > 0]
        if len(na):
            raise ValueError(
                f"missing values in {dict(na)}; drop or impute them first (e.g. data.dropna(subset={list(na.index)}))"
            )
        num = [c for c in dict.fromkeys(cols) if pd.api.types.is_float_dtype(data[c])]
        inf = {c: int(n) for c, n in np.isinf(data[num]).sum().items() if n} if num else {}
        if inf:
            raise ValueError(f"infinite values in {inf}; data must be finite: drop or replace them first")
        x0, x1 = self.levels(data)
        vals = set(pd.unique(data[self.x]))
        if len(vals) != 2:
            raise ValueError(
                f"protected attribute {self.x!r} must be binary, it takes {len(vals)} values: {sorted(map(str, vals))[:10]}"
            )
        if vals != {x0, x1}:
            raise ValueError(
                f"protected attribute {self.x!r} takes values {sorted(map(str, vals))}, expected x0={x0!r} and x1={x1!r}"
            )
        counts = data[self.x].value_counts()
        if counts.min() < 2:
            raise ValueError(f"each level of {self.x!r} needs at least two units, got {dict(counts)}")
        for c in outcomes:
            if not pd.api.types.is_numeric_dtype(data[c]):
                raise TypeError(
                    f"outcome column {c!r} must be numeric (0/1 for a binary outcome), got dtype {data[c].dtype}"
                )

    def arrays(self, data: pd.DataFrame, outcome: str | None = None) -> SFMArrays:
        """Validate ``data`` and return its numeric view.

        Parameters
        ----------
        data : pandas.DataFrame
        outcome : str, optional
            Column to use as outcome; defaults to ``self.y``. Pass ``""`` for no outcome.

        Returns
        -------
        SFMArrays
        """
        out = self.y if outcome is None else outcome
        self.validate(data, [out] if out else [])
        _, x1 = self.levels(data)
        x = (data[self.x].to_numpy() == x1).astype(int)
        y = data[out].to_numpy(dtype=float) if out else None
        return SFMArrays(x=x, z=_design(data, self.z), w=_design(data, self.w), y=y)

    def with_outcome(self, y: str) -> StandardFairnessModel:
        """The same SFM with another outcome column (e.g. a predictor ``Y_hat``).

        Parameters
        ----------
        y : str

        Returns
        -------
        StandardFairnessModel
        """
        return StandardFairnessModel(self.x, self.z, self.w, y, self.x0, self.x1)
