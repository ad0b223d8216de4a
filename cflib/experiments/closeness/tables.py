"""Tables of notebook 03 (the real-data audit): the audit tasks, and accuracy and unfairness by variant."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .audit import AuditResult

__all__ = [
    "tasks_table",
    "audit_tables",
]


def tasks_table(tasks: Mapping[str, Any]) -> pd.DataFrame:
    """One row per audit task: size, outcome, positive rate, sensitive attributes and the data set it stands for.

    Parameters
    ----------
    tasks : mapping
        ``{name: TabularTask}``.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame(
        [
            {
                "data set": t.name,
                "rows": len(t.frame),
                "outcome": t.target_name,
                "positive rate": t.target.mean(),
                "sensitive": ", ".join(t.sensitive),
                "other features": len(t.features) - len(t.sensitive),
                "stands for": t.stands_for,
            }
            for t in tasks.values()
        ]
    )


def audit_tables(
    audits: Mapping[tuple[str, str], AuditResult], epsilons: Sequence[float]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Accuracy and unfairness, audits (rows) by variant (columns: SAA, SSA, SFA-eps in order).

    Parameters
    ----------
    audits : mapping
        ``{(data set, model): AuditResult}``.
    epsilons : sequence of float
        The SFA tolerances.

    Returns
    -------
    (pandas.DataFrame, pandas.DataFrame)
    """
    results = pd.concat({k: a.summary().set_index("variant") for k, a in audits.items()}, names=["data", "model"])
    order = ["SAA", "SSA"] + [f"SFA-{e:g}" for e in epsilons]
    return results["accuracy"].unstack("variant")[order], results["unfairness"].unstack("variant")[order]
