"""The reader's data and models of the chapter *Audit your own model*, and the report as the book page shows it.

* :func:`prepare_adult`: UCI Adult under the standard fairness model (Plecko & Bareinboim's coding of
  the census example: ``X`` = sex, ``Z`` = age, race and native country, ``W`` = education, marital
  status, relationship, work class, occupation and hours, ``Y`` = income above 50K);
* :func:`compas_model` and :func:`adult_model`: the models the reader trains (gradient boosting on
  COMPAS; a one-hot logistic regression on Adult), both reading the protected attribute;
* :func:`report_frame`: the rendered HTML report as an inline frame for the book page;
* :func:`audit_benchmark`: the timing of the COMPAS audit (``python -m benchmarks audit``).
"""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import pandas as pd

from ...fairness.sfm import StandardFairnessModel

__all__ = ["ADULT_SFM", "adult_model", "audit_benchmark", "compas_model", "prepare_adult", "report_frame"]

#: Roles of the Adult columns (after :func:`prepare_adult`), with ``x0`` = male and ``x1`` = female.
ADULT_SFM = StandardFairnessModel(
    x="female",
    z=("age", "race", "native_country"),
    w=("education_num", "marital_status", "relationship", "workclass", "occupation", "hours_per_week"),
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
        from ...data.real import load_adult

        raw = load_adult()
    d = pd.DataFrame(
        {
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
        }
    )
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
    return HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05, random_state=seed).fit(
        data[cols], data[sfm.y]
    )


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
    return (
        f'<div class="cflib-audit-report"><iframe title="cflib audit report" '
        f'style="width:100%;height:{int(height)}px;border:1px solid #ccc" '
        f'srcdoc="{html.escape(page, quote=True)}"></iframe></div>'
    )


def audit_benchmark() -> pd.Series | None:
    """The timing of the COMPAS audit written by ``python -m benchmarks audit`` (``None`` if not run yet).

    Returns
    -------
    pandas.Series or None
        Wall and CPU seconds of the one-call audit and of the same checks called one by one
        (``n_boot = 200``, two threads, medians of three runs in a fresh process), and the machine.
    """
    import json

    from ...paths import repo_root

    path = repo_root() / "benchmarks" / "results" / "audit_compas.json"
    if not path.exists():
        return None
    doc = json.loads(path.read_text())
    row, m = doc["row"], doc["machine"]
    keys = [
        "rows",
        "n_boot",
        "threads",
        "audit_wall_s",
        "audit_cpu_s",
        "by_hand_wall_s",
        "by_hand_cpu_s",
        "overhead_ratio_wall",
    ]
    return pd.Series(
        {**{k: row[k] for k in keys}, "machine": f"{m.get('cpu_model')}, {m.get('cpus')} CPUs"}, name="COMPAS audit"
    )
