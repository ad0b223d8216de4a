"""The conformance page of the chapter (notebook 02): published COMPAS numbers and the tables that set the audit's
beside them.

* :data:`PAPER_COMPAS` and :func:`paper_tv_band`: Plecko & Bareinboim's COMPAS effect estimates, and the TV they
  imply by Proposition 3;
* :func:`faircause_table`: the audit's COMPAS effects beside the paper's (computed with faircause);
* :data:`AEQUITAS_COMPAS`, :func:`compas_by_race` and :func:`aequitas_table`: the group table beside the Aequitas
  COMPAS example's counts and rates;
* :func:`direct_rates`: the group rates computed directly with pandas.
"""

from __future__ import annotations

import math
from typing import Any, TypedDict

import numpy as np
import pandas as pd

__all__ = [
    "AEQUITAS_COMPAS",
    "PAPER_COMPAS",
    "AequitasExample",
    "aequitas_table",
    "compas_by_race",
    "direct_rates",
    "faircause_table",
    "paper_tv_band",
]

#: Plecko & Bareinboim's COMPAS estimates (Sec. 4, Eqs. 21-22, 24-25, 27-28): (value, 95% half-width) in
#: percent for the outcome Y and Northpointe's prediction. The paper prints no TV; Proposition 3 gives it
#: as Ctf-DE - Ctf-IE - Ctf-SE.
PAPER_COMPAS = {
    "y": {"DE": (-0.08, 2.59), "IE": (-5.06, 1.24), "SE": (-3.17, 1.53)},
    "northpointe": {"DE": (6.0, 2.96), "IE": (-7.73, 1.53), "SE": (-3.75, 1.58)},
}


def paper_tv_band(outcome: str) -> tuple[float, float, float]:
    """The TV the paper's COMPAS estimates imply by Proposition 3, with a band from their intervals.

    Parameters
    ----------
    outcome : {"y", "northpointe"}

    Returns
    -------
    (tv, low, high) : tuple of float
        ``DE - IE - SE`` as a proportion, and ``tv ± (sum of the three 95% half-widths)``: the interval
        the sum lies in whenever each of the three intervals covers its effect (the paper reports no
        joint interval, so the widths add).
    """
    if outcome not in PAPER_COMPAS:
        raise ValueError(f"outcome must be one of {sorted(PAPER_COMPAS)}, got {outcome!r}")
    e = PAPER_COMPAS[outcome]
    tv = (e["DE"][0] - e["IE"][0] - e["SE"][0]) / 100
    half = sum(h for _, h in e.values()) / 100
    return tv, tv - half, tv + half


class AequitasExample(TypedDict):
    """The shape of :data:`AEQUITAS_COMPAS`: per race, the confusion counts ``(n, TP, FP, FN, TN)``; for the races
    the example prints, its rates by name (``fpr``, ``fnr``, ``tpr``, ``ppv``, ``base_rate``, ``selection_rate``);
    and the false-positive rates its text gives."""

    counts: dict[str, tuple[int, int, int, int, int]]
    printed: dict[str, dict[str, float]]
    text: dict[str, float]


#: The Aequitas COMPAS example's confusion counts per race (dssg/aequitas, docs/source/examples/compas_demo.ipynb,
#: the ``get_crosstabs`` table; 7214 rows, score Medium or High counted as positive, label two_year_recid) and
#: the rates it prints to two decimals. Its text: "44.8% of African-Americans who did not recidivate were marked
#: high or medium risk ..., compared with 23.4% of Caucasian non-reoffenders".
AEQUITAS_COMPAS: AequitasExample = {
    "counts": {  # group_size, tp, fp, fn, tn
        "African-American": (3696, 1369, 805, 532, 990),
        "Asian": (32, 6, 2, 3, 21),
        "Caucasian": (2454, 505, 349, 461, 1139),
        "Hispanic": (637, 103, 87, 129, 318),
        "Native American": (18, 9, 3, 1, 5),
        "Other": (377, 43, 36, 90, 208),
    },
    "printed": {  # fpr, fnr, tpr, precision (PPV), prev (base rate), pprev (selection rate), two decimals
        "African-American": {
            "fpr": 0.45,
            "fnr": 0.28,
            "tpr": 0.72,
            "ppv": 0.63,
            "base_rate": 0.51,
            "selection_rate": 0.59,
        },
        "Caucasian": {"fpr": 0.23, "fnr": 0.48, "tpr": 0.52, "ppv": 0.59, "base_rate": 0.39, "selection_rate": 0.35},
    },
    "text": {"African-American": 0.448, "Caucasian": 0.234},  # the false-positive rates the prose gives
}


def compas_by_race(raw: pd.DataFrame | None = None) -> pd.DataFrame:
    """ProPublica's COMPAS table as the Aequitas example reads it: race (six levels), decision, outcome.

    Parameters
    ----------
    raw : pandas.DataFrame, optional
        The unfiltered table (default :func:`cflib.data.real.load_compas`, 7214 rows).

    Returns
    -------
    pandas.DataFrame
        Columns ``race``, ``decision`` (1 when ``score_text`` is Medium or High), ``two_year_recid`` and the
        confounders and mediators of the parity chapter (``sex``, ``age``, ``priors_count``, ``juv_fel_count``).
    """
    if raw is None:
        from ...data.real import load_compas

        raw = load_compas()
    need = ["race", "score_text", "two_year_recid", "sex", "age", "priors_count", "juv_fel_count"]
    missing = [c for c in need if c not in raw.columns]
    if missing:
        raise ValueError(f"raw: the COMPAS table lacks columns {missing}")
    return pd.DataFrame(
        {
            "race": raw["race"].astype(str),
            "decision": raw["score_text"].isin(["Medium", "High"]).astype(int),
            "two_year_recid": raw["two_year_recid"].astype(int),
            "sex": raw["sex"].astype(str),
            "age": raw["age"].astype(float),
            "priors_count": raw["priors_count"].astype(float),
            "juv_fel_count": raw["juv_fel_count"].astype(float),
        }
    )


def aequitas_table(report: Any) -> pd.DataFrame:
    """The audit's group table beside the Aequitas example's counts and printed rates.

    Parameters
    ----------
    report : cflib.audit.AuditReport
        The audit of :func:`compas_by_race` (decisions as scores, race as the attribute).

    Returns
    -------
    pandas.DataFrame
        One row per race: the audit's n, TP, FP, FN, TN (from the table's numerators and denominators),
        Aequitas's, and the audit's FPR and FNR with their Wilson intervals (as text, three significant figures)
        beside the printed values (NaN where the example prints none).
    """
    g = report.groups
    rows = {}
    for race, (n, tp, fp, fn, tn) in AEQUITAS_COMPAS["counts"].items():
        r = g.loc[race]
        ours = (
            int(r["n"]),
            int(r["tpr_k"]),
            int(r["fpr_k"]),
            int(r["tpr_n"] - r["tpr_k"]),
            int(r["fpr_n"] - r["fpr_k"]),
        )
        printed = AEQUITAS_COMPAS["printed"].get(race, {})
        rows[race] = {
            "n": ours[0],
            "TP": ours[1],
            "FP": ours[2],
            "FN": ours[3],
            "TN": ours[4],
            "Aequitas n, TP, FP, FN, TN": f"{n}, {tp}, {fp}, {fn}, {tn}",
            "counts equal": ours == (n, tp, fp, fn, tn),
            "FPR": r["fpr"],
            "FPR interval": _bracket(r["fpr_low"], r["fpr_high"]),
            "Aequitas FPR": printed.get("fpr", np.nan),
            "FNR": 1 - r["tpr"],
            "FNR interval": _bracket(1 - r["tpr_high"], 1 - r["tpr_low"]),
            "Aequitas FNR": printed.get("fnr", np.nan),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _bracket(low: float, high: float) -> str:
    """An interval as the reader reads it: ``[0.426, 0.472]``."""
    from ...claims import reader_number

    return f"[{reader_number(float(low))}, {reader_number(float(high))}]"


def faircause_table(report: Any) -> pd.DataFrame:
    """The audit's COMPAS effects beside the paper's (faircause's) estimates, in combined standard errors.

    Parameters
    ----------
    report : cflib.audit.AuditReport
        The audit of Northpointe's prediction on the parity chapter's COMPAS frame (``prepare_compas``).

    Returns
    -------
    pandas.DataFrame
        One row per outcome and effect: ours and the paper's value and 95% half-width (in percent), the
        difference and ``z = difference / sqrt(se_ours^2 + se_paper^2)`` (the paper's s.e. is its half-width / 1.96).
    """
    from scipy import stats

    q = float(stats.norm.ppf(0.975))
    eff = report.details["effects"]
    rows = []
    for outcome, key in (("northpointe", "_y_hat"), ("y", report.provenance["roles"]["y"])):
        e = eff[key]
        for m, (val, half) in PAPER_COMPAS[outcome].items():
            ours, se = 100 * e.estimate[m], 100 * e.se[m]
            se_paper = half / q
            diff = ours - val
            rows.append(
                {
                    "outcome": outcome,
                    "effect": f"Ctf-{m}",
                    "ours (%)": ours,
                    "ours ± (%)": q * se,
                    "paper (%)": val,
                    "paper ± (%)": half,
                    "difference (%)": diff,
                    "z": diff / math.hypot(se, se_paper),
                }
            )
    return pd.DataFrame(rows).set_index(["outcome", "effect"])


def direct_rates(data: pd.DataFrame, group: str, decision: str, y: str) -> pd.DataFrame:
    """Base rate, selection rate, TPR, FPR and PPV per group with plain pandas (the reference of the group table).

    Parameters
    ----------
    data : pandas.DataFrame
    group, decision, y : str
        Columns: the group label, the 0/1 decision and the 0/1 outcome.

    Returns
    -------
    pandas.DataFrame
        Indexed by group (as text), columns ``n, base_rate, selection_rate, tpr, fpr, ppv``.
    """
    for c in (group, decision, y):
        if c not in data.columns:
            raise ValueError(f"data: column {c!r} is missing")
    out = {}
    for g, s in data.groupby(group):
        pos, neg, sel = s[s[y] == 1], s[s[y] == 0], s[s[decision] == 1]
        out[str(g)] = {
            "n": len(s),
            "base_rate": s[y].mean(),
            "selection_rate": s[decision].mean(),
            "tpr": pos[decision].mean() if len(pos) else np.nan,
            "fpr": neg[decision].mean() if len(neg) else np.nan,
            "ppv": sel[y].mean() if len(sel) else np.nan,
        }
    return pd.DataFrame.from_dict(out, orient="index")
