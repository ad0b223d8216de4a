"""Real tabular classification tasks with binary sensitive attributes (COMPAS, Adult, German credit).

The closeness-test chapter audits models trained on these tasks (Fu et al., Sec. 5.2, whose UCI and
Kaggle data sets are not shipped in any registry package: these are the substitutes, named as such).
The data come from :mod:`cflib.data.real`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .real import load_adult, load_compas, load_german

__all__ = ["TabularTask", "tabular_task"]


@dataclass(frozen=True)
class TabularTask:
    """A real tabular classification task with binary sensitive attributes, ready for an audit.

    Attributes
    ----------
    name : str
        ``compas``, ``adult`` or ``german``.
    frame : pandas.DataFrame
        Features only (sensitive and non-sensitive), one row per unit.
    target : numpy.ndarray
        Binary labels (1 = the favourable or predicted event named in ``target_name``).
    target_name : str
    sensitive : list of str
        Binary sensitive attributes (columns of ``frame``).
    categorical, numeric : list of str
        Encoding of every column of ``frame``.
    stands_for : str
        Which data set of the paper it substitutes and what it keeps.
    """

    name: str
    frame: pd.DataFrame = field(repr=False)
    target: np.ndarray = field(repr=False)
    target_name: str
    sensitive: list[str]
    categorical: list[str]
    numeric: list[str]
    stands_for: str

    @property
    def features(self) -> list[str]:
        """All feature columns (SAA's feature set)."""
        return list(self.categorical) + list(self.numeric)

    def split(self, n_train: int, n_test: int, *, seed: int = 0):
        """Random disjoint train/test subsamples: ``(X_train, y_train, X_test, y_test)``."""
        n = len(self.frame)
        if n_train < 10 or n_test < 10 or n_train + n_test > n:
            raise ValueError(f"need 10 <= n_train, n_test and n_train + n_test <= {n}, got {n_train} and {n_test}")
        idx = np.random.default_rng(seed).permutation(n)
        tr, te = idx[:n_train], idx[n_train : n_train + n_test]
        return (
            self.frame.iloc[tr].reset_index(drop=True),
            self.target[tr],
            self.frame.iloc[te].reset_index(drop=True),
            self.target[te],
        )


def _yes(mask: Any) -> np.ndarray:
    return np.where(np.asarray(mask), "yes", "no")


def tabular_task(name: str) -> TabularTask:
    """Load COMPAS, Adult or German credit as an audit task with binary sensitive attributes.

    Substitutes for the paper's UCI Student Performance / Obesity / Dropout and Kaggle Credit Risk data
    (not shipped in any registry package): each keeps a binary outcome, a handful of legitimate
    features and sensitive attributes of the kinds the paper audits (sex, an origin attribute, age
    thresholded as in its credit-risk experiment).

    Parameters
    ----------
    name : {"compas", "adult", "german"}
        ``compas``: two-year recidivism, ProPublica filtering (6172 rows); sensitive ``sex``, ``race``
        (African-American or not), ``young`` (age < 25). ``adult``: income > 50K (32561 rows); sensitive
        ``sex``, ``race`` (white or not), ``young`` (age < 30). ``german``: good credit (1000 rows);
        sensitive ``sex`` (from personal status), ``young`` (age < 25), ``foreign`` (foreign worker).

    Returns
    -------
    TabularTask
    """
    if name == "compas":
        d = load_compas()
        d = d[
            (d["days_b_screening_arrest"].between(-30, 30))
            & (d["is_recid"] != -1)
            & (d["c_charge_degree"] != "O")
            & (d["score_text"] != "N/A")
        ].reset_index(drop=True)
        frame = pd.DataFrame(
            {
                "sex": d["sex"],
                "race": _yes(d["race"] == "African-American"),
                "young": _yes(d["age"] < 25),
                "charge_degree": d["c_charge_degree"],
                "priors_count": d["priors_count"],
                "juv_fel_count": d["juv_fel_count"],
                "juv_misd_count": d["juv_misd_count"],
                "juv_other_count": d["juv_other_count"],
            }
        )
        return TabularTask(
            "compas",
            frame,
            d["two_year_recid"].to_numpy().astype(int),
            "two-year recidivism",
            ["sex", "race", "young"],
            ["sex", "race", "young", "charge_degree"],
            ["priors_count", "juv_fel_count", "juv_misd_count", "juv_other_count"],
            "stands for the paper's UCI tabular sets: binary outcome, sex / origin / age attributes",
        )
    if name == "adult":
        d = load_adult()
        frame = pd.DataFrame(
            {
                "sex": d["sex"],
                "race": _yes(d["race"] == "White"),
                "young": _yes(d["age"] < 30),
                "workclass": d["workclass"],
                "occupation": d["occupation"],
                "marital": d["marital-status"],
                "education_num": d["education-num"],
                "hours": d["hours-per-week"],
                "log_gain": np.log1p(d["capital-gain"]),
                "log_loss": np.log1p(d["capital-loss"]),
            }
        )
        return TabularTask(
            "adult",
            frame,
            (d["income-per-year"] == ">50K").to_numpy().astype(int),
            "income > 50K",
            ["sex", "race", "young"],
            ["sex", "race", "young", "workclass", "occupation", "marital"],
            ["education_num", "hours", "log_gain", "log_loss"],
            "stands for the paper's Students' Dropout / Obesity sets: larger, sex / origin / age attributes",
        )
    if name == "german":
        d = load_german()
        cats = [
            "status",
            "credit_history",
            "purpose",
            "savings",
            "employment",
            "other_debtors",
            "property",
            "installment_plans",
            "housing",
            "skill_level",
            "telephone",
        ]
        nums = [
            "month",
            "credit_amount",
            "investment_as_income_percentage",
            "residence_since",
            "number_of_credits",
            "people_liable_for",
        ]
        frame = pd.DataFrame(
            {
                "sex": np.where(d["personal_status"].isin(["A92", "A95"]), "female", "male"),
                "young": _yes(d["age"] < 25),
                "foreign": _yes(d["foreign_worker"] == "A201"),
                **{c: d[c] for c in cats},
                **{c: d[c].astype(float) for c in nums},
            }
        )
        return TabularTask(
            "german",
            frame,
            (d["credit"] == 1).to_numpy().astype(int),
            "good credit",
            ["sex", "young", "foreign"],
            ["sex", "young", "foreign", *cats],
            nums,
            "stands for the paper's Kaggle Credit Risk set (Fig. 5): credit outcome, age thresholded",
        )
    raise ValueError(f"name must be 'compas', 'adult' or 'german', got {name!r}")
