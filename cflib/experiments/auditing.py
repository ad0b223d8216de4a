"""Experiments of the chapter *Audit your own model*: the reader's models on COMPAS and Adult, and the claims.

The chapter shows :func:`cflib.audit.audit` on models a practitioner would train, and checks that the
one-call report reproduces the numbers the chapters compute by hand:

* :func:`prepare_adult`: UCI Adult under the standard fairness model (Plecko & Bareinboim's coding of
  the census example: ``X`` = sex, ``Z`` = age, race and native country, ``W`` = education, marital
  status, relationship, work class, occupation and hours, ``Y`` = income above 50K);
* :func:`compas_model` and :func:`adult_model`: the models the reader trains (gradient boosting on
  COMPAS; a one-hot logistic regression on Adult), both reading the protected attribute;
* :func:`report_frame`: the rendered HTML report as an inline frame for the book page;
* :func:`claims_01`: the verdict of the chapter's notebook;
* the conformance page (notebook 02): :func:`faircause_table` (the audit's COMPAS effects beside the paper's,
  computed with faircause), :data:`AEQUITAS_COMPAS`, :func:`compas_by_race` and :func:`aequitas_table` (the group
  table beside the Aequitas COMPAS example's counts and rates), :func:`direct_rates`, the figures and
  :func:`claims_02`.
"""

from __future__ import annotations

import html
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .. import claims
from ..fairness.sfm import StandardFairnessModel

__all__ = ["ADULT_SFM", "PAPER_COMPAS", "AEQUITAS_COMPAS", "prepare_adult", "compas_model", "adult_model", "report_frame",
           "audit_benchmark", "paper_tv_band", "claims_01", "compas_by_race", "aequitas_table", "faircause_table",
           "direct_rates", "plot_faircause", "plot_error_rates", "claims_02"]

#: Roles of the Adult columns (after :func:`prepare_adult`), with ``x0`` = male and ``x1`` = female.
ADULT_SFM = StandardFairnessModel(
    x="female",
    z=["age", "race", "native_country"],
    w=["education_num", "marital_status", "relationship", "workclass", "occupation", "hours_per_week"],
    y="high_income",
)


def prepare_adult(raw: pd.DataFrame | None = None, n: int | None = None, seed: int = 0) -> pd.DataFrame:
    """Adult recoded for :data:`ADULT_SFM` (optionally a random subsample of ``n`` rows).

    Parameters
    ----------
    raw : pandas.DataFrame, optional
        The UCI table; by default :func:`cflib.data.real.load_adult`.
    n : int, optional
        Rows to keep (all when ``None``).
    seed : int
        Seed of the subsample.

    Returns
    -------
    pandas.DataFrame
        Columns of :data:`ADULT_SFM`; ``native_country`` is reduced to United-States / other.
    """
    if raw is None:
        from ..data.real import load_adult

        raw = load_adult()
    d = pd.DataFrame({
        "female": (raw["sex"] == "Female").astype(int),
        "age": raw["age"].astype(float),
        "race": raw["race"].astype(str),
        "native_country": np.where(raw["native-country"] == "United-States", "US", "other"),
        "education_num": raw["education-num"].astype(float),
        "marital_status": raw["marital-status"].astype(str),
        "relationship": raw["relationship"].astype(str),
        "workclass": raw["workclass"].astype(str),
        "occupation": raw["occupation"].astype(str),
        "hours_per_week": raw["hours-per-week"].astype(float),
        "high_income": raw["income-per-year"].astype(str).str.startswith(">").astype(int),
    })
    if n is not None and n < len(d):
        d = d.sample(n=n, random_state=seed).reset_index(drop=True)
    return d


def compas_model(data: pd.DataFrame, sfm: StandardFairnessModel, seed: int = 0) -> Any:
    """A gradient-boosting classifier of two-year recidivism on every SFM column, the attribute included.

    Parameters
    ----------
    data : pandas.DataFrame
        COMPAS as :func:`cflib.fairness.compas.prepare_compas` returns it.
    sfm : StandardFairnessModel
    seed : int

    Returns
    -------
    sklearn.ensemble.HistGradientBoostingClassifier
        Fitted on ``[x, *z, *w]``.
    """
    from sklearn.ensemble import HistGradientBoostingClassifier

    cols = [sfm.x, *sfm.z, *sfm.w]
    return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, random_state=seed).fit(data[cols], data[sfm.y])


def adult_model(data: pd.DataFrame, sfm: StandardFairnessModel = ADULT_SFM) -> Any:
    """A logistic regression on one-hot categories and standardised numbers, the attribute included.

    Parameters
    ----------
    data : pandas.DataFrame
        Adult as :func:`prepare_adult` returns it.
    sfm : StandardFairnessModel

    Returns
    -------
    sklearn.pipeline.Pipeline
        Fitted on ``[x, *z, *w]``.
    """
    from sklearn.compose import ColumnTransformer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder, StandardScaler

    cols = [sfm.x, *sfm.z, *sfm.w]
    cat = [c for c in cols if not pd.api.types.is_numeric_dtype(data[c])]
    num = [c for c in cols if c not in cat]
    prep = ColumnTransformer([("cat", OneHotEncoder(handle_unknown="ignore"), cat), ("num", StandardScaler(), num)])
    return make_pipeline(prep, LogisticRegression(max_iter=2000)).fit(data[cols], data[sfm.y])


def report_frame(page: str, height: int = 900) -> str:
    """The HTML report in an ``<iframe srcdoc>``, so its styles stay inside the frame on the book page.

    Parameters
    ----------
    page : str
        The text :meth:`cflib.audit.AuditReport.to_html` wrote.
    height : int
        Frame height in pixels.

    Returns
    -------
    str
    """
    return (f'<div class="cflib-audit-report"><iframe title="cflib audit report" '
            f'style="width:100%;height:{int(height)}px;border:1px solid #ccc" '
            f'srcdoc="{html.escape(page, quote=True)}"></iframe></div>')


def audit_benchmark() -> pd.Series | None:
    """The timing of the COMPAS audit written by ``python -m benchmarks audit`` (``None`` if not run yet).

    Returns
    -------
    pandas.Series or None
        Wall and CPU seconds of the one-call audit and of the same checks called one by one
        (``n_boot = 200``, two threads, medians of three runs in a fresh process), and the machine.
    """
    import json

    from ..paths import repo_root

    path = repo_root() / "benchmarks" / "results" / "audit_compas.json"
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    row, m = doc["row"], doc["machine"]
    keys = ["rows", "n_boot", "threads", "audit_wall_s", "audit_cpu_s", "by_hand_wall_s", "by_hand_cpu_s", "overhead_ratio_wall"]
    return pd.Series({**{k: row[k] for k in keys}, "machine": f"{m.get('cpu_model')}, {m.get('cpus')} CPUs"}, name="COMPAS audit")


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


def claims_01(r: Mapping[str, Any]) -> pd.DataFrame:
    """Verdicts of notebook 01: the one-call audit's COMPAS disparities against the paper's estimates.

    The audit's total variation of Northpointe's prediction and of the outcome is a difference of group
    means on the whole ProPublica table (no sampling error); the paper prints no TV, but its estimates of
    the three effects imply one by Proposition 3 (TV = Ctf-DE - Ctf-IE - Ctf-SE). Rule: each audit TV lies
    in :func:`paper_tv_band`. The parity-decomposition chapter checks the effects themselves; here the
    check runs through :func:`cflib.audit.audit`, so a change in the audit's plumbing shows up as a verdict.

    Parameters
    ----------
    r : mapping
        ``northpointe``: the :class:`~cflib.audit.AuditReport` of the Northpointe scores on COMPAS.

    Returns
    -------
    pandas.DataFrame
        The claims recorded.
    """
    from .. import verdicts as vd

    (report,) = claims.require(r, ["northpointe"], "claims_01")
    rows = report.rows
    ours = {"northpointe": float(rows.loc["TV", "estimate"]), "y": float(rows.loc["TV (y)", "estimate"])}
    parts, paper = [], {}
    for outcome, label in (("northpointe", "TV(Northpointe)"), ("y", "TV(Y)")):
        tv, lo, hi = paper_tv_band(outcome)
        paper[label] = round(tv, 4)
        parts.append(vd.decide_within(vd.exact(ours[outcome], method="difference of group means on all rows, no sampling error"),
                                      lo, hi, quantity=f"the audit's {label}"))
    claims.claim(
        "A1",
        "COMPAS (Sec. 4), through the one-call audit: the total variation of Northpointe's prediction and of the outcome agree "
        "with the TV the paper's effect estimates imply (Proposition 3: TV = Ctf-DE - Ctf-IE - Ctf-SE).",
        paper=paper, ours={"TV(Northpointe)": ours["northpointe"], "TV(Y)": ours["y"]},
        decision=vd.combine(parts, rule="both outcomes", detail=True),
        quote="Proposition 3 (Causal Decomposition of Statistical Parity [23]). *The statistical parity measure admits a "
              "decomposition into its direct, indirect, and spurious variations:* … "
              "$$\\text{Ctf-DE}_{x_0, x_1}(\\hat{y}^{NP} | x_0) = 6\\% \\pm 2.96\\%, \\quad (22)$$ … "
              "$$\\text{Ctf-IE}_{x_1, x_0}(\\hat{y}^{NP} | x_0) = -7.73\\% \\pm 1.53\\%, \\quad (25)$$ … "
              "$$\\text{Ctf-SE}_{x_1, x_0}(\\hat{y}^{NP}) = -3.75\\% \\pm 1.58\\%, \\quad (28)$$",
        source="Plecko & Bareinboim (004), Sec. 2.2 (Proposition 3) and Sec. 4, Eqs. (21)-(22), (24)-(25), (27)-(28)",
        evidence="the audit's TV rows on the unfiltered ProPublica table (7214 rows); the paper's band adds the three effects' "
                 "95% half-widths",
        change="the old rule compared the audit with 16.94% and 8.64% to 5e-5, numbers the paper never prints (the notes "
               "computed them from the data); the paper's COMPAS numbers are its effect estimates, whose DE - IE - SE is the TV "
               "by Proposition 3",
    )
    return claims.rows(["A1"])


#: The Aequitas COMPAS example's confusion counts per race (dssg/aequitas, docs/source/examples/compas_demo.ipynb,
#: the ``get_crosstabs`` table; 7214 rows, score Medium or High counted as positive, label two_year_recid) and
#: the rates it prints to two decimals. Its text: "44.8% of African-Americans who did not recidivate were marked
#: high or medium risk ..., compared with 23.4% of Caucasian non-reoffenders".
AEQUITAS_COMPAS = {
    "counts": {  # group_size, tp, fp, fn, tn
        "African-American": (3696, 1369, 805, 532, 990),
        "Asian": (32, 6, 2, 3, 21),
        "Caucasian": (2454, 505, 349, 461, 1139),
        "Hispanic": (637, 103, 87, 129, 318),
        "Native American": (18, 9, 3, 1, 5),
        "Other": (377, 43, 36, 90, 208),
    },
    "printed": {  # fpr, fnr, tpr, precision (PPV), prev (base rate), pprev (selection rate), two decimals
        "African-American": {"fpr": 0.45, "fnr": 0.28, "tpr": 0.72, "ppv": 0.63, "base_rate": 0.51, "selection_rate": 0.59},
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
        from ..data.real import load_compas

        raw = load_compas()
    need = ["race", "score_text", "two_year_recid", "sex", "age", "priors_count", "juv_fel_count"]
    missing = [c for c in need if c not in raw.columns]
    if missing:
        raise ValueError(f"raw: the COMPAS table lacks columns {missing}")
    return pd.DataFrame({"race": raw["race"].astype(str), "decision": raw["score_text"].isin(["Medium", "High"]).astype(int),
                         "two_year_recid": raw["two_year_recid"].astype(int), "sex": raw["sex"].astype(str),
                         "age": raw["age"].astype(float), "priors_count": raw["priors_count"].astype(float),
                         "juv_fel_count": raw["juv_fel_count"].astype(float)})


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
        Aequitas's, and the audit's FPR and FNR with their Wilson intervals beside the printed values.
    """
    g = report.groups
    rows = {}
    for race, (n, tp, fp, fn, tn) in AEQUITAS_COMPAS["counts"].items():
        r = g.loc[race]
        ours = (int(r["n"]), int(r["tpr_k"]), int(r["fpr_k"]), int(r["tpr_n"] - r["tpr_k"]), int(r["fpr_n"] - r["fpr_k"]))
        printed = AEQUITAS_COMPAS["printed"].get(race, {})
        rows[race] = {"n": ours[0], "TP": ours[1], "FP": ours[2], "FN": ours[3], "TN": ours[4],
                      "Aequitas n, TP, FP, FN, TN": f"{n}, {tp}, {fp}, {fn}, {tn}",
                      "counts equal": ours == (n, tp, fp, fn, tn),
                      "FPR": r["fpr"], "FPR interval": (r["fpr_low"], r["fpr_high"]), "Aequitas FPR": printed.get("fpr", np.nan),
                      "FNR": 1 - r["tpr"], "FNR interval": (1 - r["tpr_high"], 1 - r["tpr_low"]),
                      "Aequitas FNR": printed.get("fnr", np.nan)}
    return pd.DataFrame.from_dict(rows, orient="index")


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
            rows.append({"outcome": outcome, "effect": f"Ctf-{m}", "ours (%)": ours, "ours ± (%)": q * se, "paper (%)": val,
                         "paper ± (%)": half, "difference (%)": diff, "z": diff / math.hypot(se, se_paper)})
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
        out[str(g)] = {"n": len(s), "base_rate": s[y].mean(), "selection_rate": s[decision].mean(),
                       "tpr": pos[decision].mean() if len(pos) else np.nan, "fpr": neg[decision].mean() if len(neg) else np.nan,
                       "ppv": sel[y].mean() if len(sel) else np.nan}
    return pd.DataFrame.from_dict(out, orient="index")


def claims_02(r: Mapping[str, Any]) -> pd.DataFrame:
    """Verdicts of notebook 02 (conformance): the audit's numbers beside published ones on the same data.

    Parameters
    ----------
    r : mapping
        ``northpointe``: the audit of Northpointe's prediction on :func:`cflib.fairness.compas.prepare_compas`;
        ``race``: the audit of the Medium/High decision on :func:`compas_by_race`; ``direct``: :func:`direct_rates`
        of the same frame.

    Returns
    -------
    pandas.DataFrame
        The claims recorded.
    """
    from .. import verdicts as vd

    northpointe, race, direct = claims.require(r, ["northpointe", "race", "direct"], "claims_02")
    table = faircause_table(northpointe)
    parts = [vd.decide_within(vd.exact(float(row["z"]), method="(ours - paper) / combined standard error"), -2.0, 2.0,
                              quantity=f"{o} {m}: the difference in combined standard errors")
             for (o, m), row in table.iterrows()]
    claims.claim(
        "A2",
        "COMPAS (Sec. 4), through the one-call audit: the counterfactual direct, indirect and spurious effects of race on "
        "Northpointe's prediction and on the outcome agree with the paper's estimates (faircause) within two combined "
        "standard errors.",
        paper={f"{o} {m}": float(row["paper (%)"]) for (o, m), row in table.iterrows()},
        ours={f"{o} {m}": round(float(row["ours (%)"]), 2) for (o, m), row in table.iterrows()},
        decision=vd.combine(parts, rule="all six effects", detail=True),
        quote="$$\\text{Ctf-DE}_{x_0, x_1}(\\hat{y}^{NP} | x_0) = 6\\% \\pm 2.96\\%, \\quad (22)$$ … "
              "$$\\text{Ctf-IE}_{x_1, x_0}(\\hat{y}^{NP} | x_0) = -7.73\\% \\pm 1.53\\%, \\quad (25)$$ … "
              "$$\\text{Ctf-SE}_{x_1, x_0}(\\hat{y}^{NP}) = -3.75\\% \\pm 1.58\\%, \\quad (28)$$",
        source="Plecko & Bareinboim (004), Sec. 4, Eqs. (21)-(22), (24)-(25), (27)-(28), computed with the faircause R package",
        evidence="the audit's effect rows (cross-fitted doubly robust, the audit's learner and bootstrap) on the unfiltered "
                 "ProPublica table (7214 rows); the paper's standard error is its 95% half-width / 1.96",
    )
    aeq = aequitas_table(race)
    counts_equal = bool(aeq["counts equal"].all())
    rate_parts = []
    for grp, printed in AEQUITAS_COMPAS["printed"].items():
        for rate, val in printed.items():
            ours = float(aeq.loc[grp, "FNR"]) if rate == "fnr" else float(race.groups.loc[grp, rate])
            rate_parts.append(vd.decide_within(vd.exact(ours), val - 0.005, val + 0.005,
                                               quantity=f"{grp} {rate} (printed {val:.2f})"))
    rate_parts.append(vd.REPRODUCED if counts_equal else vd.NOT_REPRODUCED)
    claims.claim(
        "A3",
        "The Aequitas COMPAS example (7214 rows, Medium or High risk counted as positive): the audit's group table gives "
        "the same confusion counts for every race and the rates it prints (FPR 0.45 against 0.23, FNR 0.28 against 0.48 "
        "for African-American and Caucasian defendants).",
        paper={f"{g} {k}": v for g, p in AEQUITAS_COMPAS["printed"].items() for k, v in p.items()},
        ours={f"{g} {k}": round(float(aeq.loc[g, "FNR"]) if k == "fnr" else float(race.groups.loc[g, k]), 4)
              for g, p in AEQUITAS_COMPAS["printed"].items() for k in p},
        decision=vd.combine(rate_parts, rule="every printed rate to two decimals, and every count", detail=True),
        quote="44.8% of African-Americans who did not recidivate were marked high or medium risk (with potential for "
              "associated penalties), compared with 23.4% of Caucasian non-reoffenders.",
        source="Aequitas COMPAS example (dssg/aequitas, docs/source/examples/compas_demo.ipynb): the get_crosstabs table and "
               "the text under 'How do I interpret parities?'",
        evidence=f"AuditReport.groups on the ProPublica table by race; counts equal for all six races: {counts_equal}",
        kind="sanity check",
    )
    g = race.groups
    worst = max(float(np.nanmax(np.abs(g[c].to_numpy(float) - direct[c].to_numpy(float)))) for c in
                ("base_rate", "selection_rate", "tpr", "fpr", "ppv"))
    same_n = bool((g["n"].to_numpy() == direct["n"].to_numpy()).all() and list(g.index) == list(direct.index))
    claims.claim(
        "A4",
        "The audit's group table equals the rates computed directly with pandas (every group, every rate).",
        paper=0.0, ours=worst,
        decision=vd.combine([vd.decide_within(vd.exact(worst), 0.0, 1e-12, quantity="the largest absolute difference"),
                             vd.REPRODUCED if same_n else vd.NOT_REPRODUCED], rule="rates and group sizes"),
        evidence="AuditReport.groups against cflib.experiments.auditing.direct_rates on the same decisions and outcome",
        kind="sanity check",
        quote="A conformance page in the audit chapter: the audit's numbers beside published ones on the same data "
              "(...), and a test that the group table equals rates computed directly.",
        source="the book's issue 29 (The audit in practice), Build: the conformance page",
    )
    return claims.rows(["A2", "A3", "A4"])


def plot_faircause(table: pd.DataFrame, ax=None):
    """The audit's effects and the paper's, each with its 95% interval, one row per outcome and effect.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`faircause_table`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .. import plotting

    if ax is None:
        _, ax = plotting.subplots(1, 1, width=6.0, height=3.4)
    labels = [f"{o} {e}" for o, e in table.index]
    pos = np.arange(len(labels))[::-1]
    ax.errorbar(table["ours (%)"], pos + 0.12, xerr=table["ours ± (%)"], fmt="o", capsize=3, color=plotting.PALETTE[0],
                label="the audit")
    ax.errorbar(table["paper (%)"], pos - 0.12, xerr=table["paper ± (%)"], fmt="s", capsize=3, color=plotting.PALETTE[1],
                label="paper (faircause)")
    ax.axvline(0.0, color="0.5", lw=0.8)
    ax.set_yticks(pos, labels)
    ax.set_xlabel("effect of race (percentage points, 95% interval)")
    ax.legend(loc="lower right", fontsize=8)
    return ax


def plot_error_rates(report: Any, ax=None):
    """False-positive and false-negative rates per group with Wilson intervals, and Aequitas's printed values.

    Parameters
    ----------
    report : cflib.audit.AuditReport
        The audit of :func:`compas_by_race`.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    from .. import plotting

    if ax is None:
        _, ax = plotting.subplots(1, 1, width=6.0, height=3.4)
    g = report.groups
    pos = np.arange(len(g))[::-1]
    fnr, fnr_lo, fnr_hi = 1 - g["tpr"], 1 - g["tpr_high"], 1 - g["tpr_low"]
    ax.errorbar(g["fpr"], pos + 0.12, xerr=[g["fpr"] - g["fpr_low"], g["fpr_high"] - g["fpr"]], fmt="o", capsize=3,
                color=plotting.PALETTE[3], label="FPR (audit)")
    ax.errorbar(fnr, pos - 0.12, xerr=[fnr - fnr_lo, fnr_hi - fnr], fmt="o", capsize=3, color=plotting.PALETTE[0],
                label="FNR (audit)")
    for i, grp in enumerate(g.index):
        printed = AEQUITAS_COMPAS["printed"].get(grp)
        if printed:
            ax.plot([printed["fpr"], printed["fnr"]], [pos[i] + 0.12, pos[i] - 0.12], "kx", ms=7,
                    label="Aequitas (printed)" if i == 0 or "Aequitas (printed)" not in ax.get_legend_handles_labels()[1] else None)
    ax.set_yticks(pos, [f"{grp} (n={int(n)})" for grp, n in g["n"].items()])
    ax.set_xlim(0, 1)
    ax.set_xlabel(f"rate ({1 - report.alpha:.0%} Wilson interval)")
    ax.legend(loc="lower right", fontsize=8)
    return ax
