"""COMPAS under the standard fairness model of Plecko & Bareinboim (Sec. 4, Fig. 4).

The paper gives no sample, filter or coding; its script (notes, Sec. 3.2) reads ProPublica's
``compas-scores-two-years.csv`` unfiltered (7214 rows), takes ``x0`` = White (``Caucasian``) and
``x1`` = every other race, ``Z = {sex, age}``, ``W = {juvenile counts, priors, charge degree}``
with the order ``J -> P -> D`` inside ``W``, ``Y`` = two-year recidivism, and the Northpointe
prediction ``1{decile_score > 4}`` (score ``decile_score / 10`` for iPPM). With this coding,
``TV(Y) = 8.64%`` and ``TV(Northpointe) = 16.94%`` exactly.
"""

from __future__ import annotations

import pandas as pd

from .sfm import StandardFairnessModel

__all__ = ["COMPAS_W_PARENTS", "prepare_compas"]

_J = ["juv_fel_count", "juv_misd_count", "juv_other_count"]

#: Parents inside W, from the script's adjacency matrix: J -> P -> D.
COMPAS_W_PARENTS = {
    "juv_fel_count": [],
    "juv_misd_count": [],
    "juv_other_count": [],
    "priors_count": _J,
    "felony": [*_J, "priors_count"],
}


def prepare_compas(raw: pd.DataFrame | None = None) -> tuple[pd.DataFrame, StandardFairnessModel]:
    """COMPAS recoded for the SFM, and the SFM.

    Parameters
    ----------
    raw : pandas.DataFrame, optional
        ProPublica's table; by default :func:`cflib.data.real.load_compas` (which names
        ``cflib data fetch`` if the file is missing).

    Returns
    -------
    (pandas.DataFrame, StandardFairnessModel)
        Columns ``nonwhite`` (X: 1 = Non-White), ``male``, ``age`` (Z), the three juvenile counts,
        ``priors_count``, ``felony`` (W), ``two_year_recid`` (Y), ``northpointe`` (``1{decile > 4}``),
        ``np_score`` (``decile / 10``) and the original ``race``.
    """
    if raw is None:
        from ..data.real import load_compas

        raw = load_compas()
    need = ["race", "sex", "age", *_J, "priors_count", "c_charge_degree", "two_year_recid", "decile_score"]
    if not isinstance(raw, pd.DataFrame):
        raise TypeError(
            f"raw must be a pandas DataFrame (ProPublica's compas-scores-two-years.csv), got {type(raw).__name__}"
        )
    miss = [c for c in need if c not in raw.columns]
    if miss:
        raise ValueError(f"raw COMPAS table lacks columns {miss}; pass ProPublica's compas-scores-two-years.csv")
    if len(raw) == 0:
        raise ValueError("raw COMPAS table is empty: it needs rows")
    bad = [c for c in ["age", *_J, "priors_count", "two_year_recid", "decile_score"] if raw[c].isna().any()]
    if bad:
        raise ValueError(f"raw COMPAS table has missing values in {bad}; drop those rows first")
    df = pd.DataFrame(
        {
            "nonwhite": (raw["race"] != "Caucasian").astype(int),
            "male": (raw["sex"] == "Male").astype(int),
            "age": raw["age"].astype(float),
            **{c: raw[c].astype(float) for c in _J},
            "priors_count": raw["priors_count"].astype(float),
            "felony": (raw["c_charge_degree"] == "F").astype(int),
            "two_year_recid": raw["two_year_recid"].astype(int),
            "northpointe": (raw["decile_score"] > 4).astype(int),
            "np_score": raw["decile_score"] / 10.0,
            "race": raw["race"],
        }
    )
    sfm = StandardFairnessModel(x="nonwhite", z=["male", "age"], w=[*_J, "priors_count", "felony"], y="two_year_recid")
    return df, sfm
