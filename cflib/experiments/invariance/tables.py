"""The chapter's tables: dataset checks, Table 1, the alignment and power tables and the CNN zoo audit tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ...data.invariance_synthetic import InvarianceData
from ...data.toy_cxr import DISEASES, GROUPS
from .cxr_zoo import AUDIT_TESTS, CNNZooMember
from .synthetic import FIGURE2_TESTS
from .zoo import TABLE1


def dataset_overview(datasets: Mapping[str, InvarianceData]) -> pd.DataFrame:
    """Descriptive statistics of the App. F.1 datasets (group and label balance, size of A's effect).

    Parameters
    ----------
    datasets : mapping of str to InvarianceData
        One sample per dataset kind.

    Returns
    -------
    pandas.DataFrame
        One row per dataset.
    """
    return pd.DataFrame(
        {
            kind: {
                "P(A=1)": d.a.mean(),
                "P(Y=1)": d.y.mean(),
                "P(Y=1|A=1) - P(Y=1|A=0)": d.y[d.a == 1].mean() - d.y[d.a == 0].mean(),
                "mean |X|": np.abs(d.x).mean(),
                "mean |X_cf - X|": np.abs(d.x_cf - d.x).mean(),
            }
            for kind, d in datasets.items()
        }
    ).T


def counterfactual_checks(d: InvarianceData) -> pd.Series:
    """Checks of the true counterfactuals: composition, agreement of ``x_do`` with ``x_cf``, relative size.

    Parameters
    ----------
    d : InvarianceData
        A synthetic sample.

    Returns
    -------
    pandas.Series
    """
    return pd.Series(
        {
            "max |X_{A<-A} - X| (composition)": np.abs(d.x_do(d.a) - d.x).max(),
            "max |X_{A<-1-A} - X_cf|": np.abs(d.x_do(1 - d.a) - d.x_cf).max(),
            "mean |X_cf - X| / mean |X|": np.abs(d.x_cf - d.x).mean() / np.abs(d.x).mean(),
        }
    )


def table1() -> pd.DataFrame:
    """Table 1 of the paper as a frame: type, classifier, hyperparameters, whether the seed matters.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame(
        [
            {
                "type": key,
                "classifier": desc,
                "hyperparameters": ", ".join(f"{k}={v}" for k, v in hp.items()),
                "seed matters": dep,
            }
            for key, (desc, hp, dep) in TABLE1.items()
        ]
    )


def alignment_pivot(align: pd.DataFrame, value: str, kinds: Sequence[str]) -> pd.DataFrame:
    """One column of :func:`figure2_alignment` as a dataset x test table.

    Parameters
    ----------
    align : pandas.DataFrame
        Output of :func:`figure2_alignment`.
    value : {"r", "resid_sd"}
        The column to spread.
    kinds : sequence of str
        Row order.

    Returns
    -------
    pandas.DataFrame
    """
    return align.pivot(index="dataset", columns="test", values=value).loc[list(kinds), list(FIGURE2_TESTS.values())]


def rejection_by_eca(align: pd.DataFrame) -> pd.DataFrame:
    """Rejection rates per test in three ECA ranges, averaged over datasets.

    Parameters
    ----------
    align : pandas.DataFrame
        Output of :func:`figure2_alignment`.

    Returns
    -------
    pandas.DataFrame
    """
    return align.groupby("test", sort=False)[["reject | ECA=1", "reject | ECA>=0.95", "reject | ECA<0.85"]].mean()


def power_table(by_n: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Rejection rate per form (rows) and sample size (columns).

    Parameters
    ----------
    by_n : pandas.DataFrame
        First output of :func:`power_study` (or any p-value table with ``form`` and ``n``).
    alpha : float
        Level.

    Returns
    -------
    pandas.DataFrame
    """
    return by_n.groupby(["form", "n"])["p"].apply(lambda p: float(np.mean(p < alpha))).unstack()


def rejection_rate_by_form(sim: pd.DataFrame, *, alpha: float = 0.05) -> pd.Series:
    """Share of p-values below ``alpha`` per form of CIT-LR.

    Parameters
    ----------
    sim : pandas.DataFrame
        Output of :func:`simulate_cit_pvalues`.
    alpha : float
        Level.

    Returns
    -------
    pandas.Series
    """
    return sim.groupby("form")["p"].apply(lambda p: float(np.mean(p < alpha)))


def zoo_table(zoo: Sequence[CNNZooMember]) -> pd.DataFrame:
    """One row per zoo member (name, architecture, disease, rho, seed).

    Parameters
    ----------
    zoo : sequence of CNNZooMember
        Output of :func:`train_zoo`.

    Returns
    -------
    pandas.DataFrame
    """
    return pd.DataFrame(
        [{"name": m.name, "arch": m.arch, "disease": m.disease, "rho": m.rho, "seed": m.seed} for m in zoo]
    )


def group_auc_table(audit: pd.DataFrame) -> pd.DataFrame:
    """Disease ROC-AUC within each group, per architecture and shortcut strength (Tables 2-3).

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.

    Returns
    -------
    pandas.DataFrame
    """
    auc = audit.pivot_table(index=["arch", "rho"], columns="disease", values=[f"AUC A={a}" for a in range(3)])
    auc.columns = [f"{d} | {GROUPS[int(c[-1])].split(' (')[1].rstrip(')')}" for c, d in auc.columns]
    return auc


def table12(audit: pd.DataFrame) -> pd.DataFrame:
    """Tables 12-13: CIT-LR (CLDM+D) ``t / p`` and the ECA per model and disease.

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.

    Returns
    -------
    pandas.DataFrame
    """
    tp = audit.assign(
        **{
            "t / p": [
                f"{t:.2f} / {p:.2g}" for t, p in zip(audit["t CIT-LR[CLDM+D]"], audit["p CIT-LR[CLDM+D]"], strict=True)
            ]
        }
    )
    table = tp.pivot_table(index=["arch", "rho", "seed"], columns="disease", values="t / p", aggfunc="first")[
        list(DISEASES)
    ]
    eca_table = audit.pivot_table(index=["arch", "rho", "seed"], columns="disease", values="ECA")[list(DISEASES)]
    return table.join(eca_table.round(3).add_suffix(" ECA"))


#: The two groups of :func:`rejection_rates`: classifiers that ignore the group trace and those that use it.
_INVARIANT, _USES = "ignores trace (ECA >= 0.99)", "uses trace (ECA < 0.9)"


def rejection_rates(audit: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Rejection rates with Clopper-Pearson 95% intervals of each test among trace-ignoring and trace-using classifiers.

    Parameters
    ----------
    audit : pandas.DataFrame
        Output of :func:`audit_cnn_zoo`.
    alpha : float
        Level of the tests.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(test, group)``: ``rejected, classifiers, rate, 95% CI``.
    """
    from scipy.stats import binomtest

    def rate(mask, key):
        k, n = int((audit.loc[mask, f"p {key}"] < alpha).sum()), int(mask.sum())
        ci = binomtest(k, n).proportion_ci() if n else None
        return {
            "rejected": k,
            "classifiers": n,
            "rate": k / n if n else np.nan,
            "95% CI": f"[{ci.low:.2f}, {ci.high:.2f}]" if n else "-",
        }

    groups = ((_INVARIANT, audit["ECA"] >= 0.99), (_USES, audit["ECA"] < 0.9))
    return pd.DataFrame({(label, grp): rate(mask, key) for label, key in AUDIT_TESTS.items() for grp, mask in groups}).T
