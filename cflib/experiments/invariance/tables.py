"""The chapter's tables: dataset checks, Table 1, the alignment and power tables and the CNN zoo audit tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ...data.invariance_synthetic import InvarianceData
from ...data.toy_cxr import DISEASES, GROUPS
from ...formatting import format_pvalue
from ..papers.values import paper_table, show_side_by_side, side_by_side
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
                f"{t:.2f} / {format_pvalue(p)}"
                for t, p in zip(audit["t CIT-LR[CLDM+D]"], audit["p CIT-LR[CLDM+D]"], strict=True)
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
    from ...stats.proportions import clopper_pearson_interval

    def rate(mask, key):
        k, n = int((audit.loc[mask, f"p {key}"] < alpha).sum()), int(mask.sum())
        low, high = clopper_pearson_interval(k, n, 0.95)
        return {
            "rejected": k,
            "classifiers": n,
            "rate": k / n if n else np.nan,
            "95% CI": f"[{low:.2f}, {high:.2f}]" if n else "-",
        }

    groups = ((_INVARIANT, audit["ECA"] >= 0.99), (_USES, audit["ECA"] < 0.9))
    return pd.DataFrame({(label, grp): rate(mask, key) for label, key in AUDIT_TESTS.items() for grp, mask in groups}).T


#: The paper whose tables these are.
PAPER = "invariance-test"
#: Per paper table: the book's metric column of :func:`~cflib.experiments.invariance.diffusion.quality_table`.
_QUALITY = {7: "composition L1", 8: "effectiveness %", 9: "composition L1", 10: "effectiveness %", 11: "FD"}


def _paper_model(label: str) -> str:
    """``"VAE beta=0.001"`` -> ``"VAE β=0"`` (the book's smallest beta stands for the paper's 0), CLDM/DLDM as they are."""
    if not label.startswith("VAE beta="):
        return label
    beta = float(label.split("=", 1)[1])
    return "VAE β=0" if beta < 0.01 else f"VAE β={beta:g}"


def quality_versus_paper(quality: pd.DataFrame, table_no: int) -> Any:
    """The paper's Table 7 or 9 (composition), 8 or 10 (effectiveness), 11 (FID) beside the book's toy chest X-rays.

    Parameters
    ----------
    quality : pandas.DataFrame
        From :func:`~cflib.experiments.invariance.diffusion.quality_table`: ``(metric, group)`` columns.
    table_no : int
        7, 8 (CheXpert), 9, 10 (MIMIC-CXR) or 11 (FID, its CheXpert column).

    Returns
    -------
    pandas.io.formats.style.Styler
        Models matched by name, groups by the intervention ``do(group)``; each cell with its rank among the models
        both tables have (1 = best).
    """
    if table_no not in _QUALITY:
        raise ValueError(f"table_no must be one of {sorted(_QUALITY)}, got {table_no!r}")
    paper = paper_table(PAPER, f"Table {table_no}")
    metric = _QUALITY[table_no]
    if metric not in quality.columns.get_level_values(0):
        raise ValueError(f"quality must have {metric!r} columns (quality_table's output)")
    if table_no == 11:
        cols = {(metric, "all"): "CheXpert"}
        what = (
            "the book's Fréchet distance on its group predictor's penultimate features, in place of FID (Inception-v3)"
        )
    else:
        cols = {(metric, g): f"do({g})" for m, g in quality.columns if m == metric and g != "all"}
        what = (
            "the book's mean absolute pixel difference (0-255) of each toy image to its regeneration under the null "
            "intervention, per observed group"
            if table_no in (7, 9)
            else "the share (%) of counterfactuals under do(group) that the book's group predictor assigns to that group"
        )
    frame = side_by_side(quality, paper, rows={r: _paper_model(r) for r in quality.index}, columns=cols, ranks=True)
    caption = (
        f"Paper Table {table_no} ({paper.caption}) beside the book: toy chest X-rays in place of "
        f"{'MIMIC-CXR' if table_no in (9, 10) else 'CheXpert'}; {what}. "
        "The book's smallest beta stands for the paper's beta = 0. Each cell: the value and, in brackets, its rank "
        "among the models both tables have (1 = best)."
    )
    return show_side_by_side(frame, caption)


#: The toy diseases' names in the paper (the toy data has three of the paper's five).
_PAPER_DISEASE = {"cardiomegaly": "Cardiomegaly", "effusion": "Pleural Effusion", "consolidation": "Consolidation"}


def zoo_versus_paper(audit: pd.DataFrame, table_no: int, *, alpha: float = 0.05) -> Any:
    """The paper's Table 2 or 3 (group ROC-AUC), 12 or 13 (CIT-LR t-tests) beside the book's classifier zoo.

    The paper's rows are ten named ImageNet CNNs, the book's a zoo of small CNNs and MLPs with graded
    shortcut reliance, so rows cannot be matched: both tables are summarised per disease over their
    classifiers, Table 2 as the mean AUC in each group, Table 12 as the number of classifiers CIT-LR
    rejects at ``alpha`` (the book's CIT-LR with the CLDM+D counterfactuals).

    Parameters
    ----------
    audit : pandas.DataFrame
        From :func:`~cflib.experiments.invariance.cxr_zoo.audit_cnn_zoo`.
    table_no : int
        2, 12 (CheXpert), 3 or 13 (MIMIC-CXR).
    alpha : float
        Level of the count of rejections (Table 12).

    Returns
    -------
    pandas.io.formats.style.Styler
        Rows: the paper's diseases; a disease the toy data lacks shows the paper's value beside "—".
    """
    if table_no not in (2, 3, 12, 13):
        raise ValueError(f"table_no must be 2, 3, 12 or 13, got {table_no!r}")
    data = "MIMIC-CXR" if table_no in (3, 13) else "CheXpert"
    paper = paper_table(PAPER, f"Table {table_no}").frame()
    by_disease = audit.assign(disease=audit["disease"].map(_PAPER_DISEASE)).groupby("disease", sort=False)
    if table_no in (2, 3):
        pmean = paper.groupby(level="race").mean().T
        races = {a: GROUPS[a].split(" (")[1].rstrip(")").capitalize() for a in range(len(GROUPS))}
        book = (
            by_disease[[f"AUC A={a}" for a in races]].mean().rename(columns={f"AUC A={a}": r for a, r in races.items()})
        )
        frame = side_by_side(book, pmean[list(races.values())])
        caption = (
            f"Paper Table {table_no} (ROC-AUC on {data} per disease and race, mean over its ten ImageNet CNNs) beside the book "
            "(toy chest X-rays with three groups standing for White, Black and Asian; mean over the zoo's classifiers)."
        )
        return show_side_by_side(frame, caption)
    pvals = paper[[c for c in paper.columns if c.endswith(" p")]]
    counts = pd.DataFrame(
        {
            "classifiers": [float(pvals[c].notna().sum()) for c in pvals.columns],
            f"rejected at {alpha:g}": [float((pvals[c] < alpha).sum()) for c in pvals.columns],
        },
        index=[c[:-2] for c in pvals.columns],
    )
    p = by_disease["p CIT-LR[CLDM+D]"]
    book = pd.DataFrame(
        {"classifiers": p.count(), f"rejected at {alpha:g}": p.apply(lambda s: float((s < alpha).sum()))}
    )
    frame = side_by_side(book.astype(float), counts, counts=list(counts.columns))
    caption = (
        f"Paper Table {table_no} (CIT-LR paired t-tests on {data}, ten ImageNet CNNs per disease) counted: classifiers "
        f"rejected at {alpha:g}, beside the book's zoo on toy chest X-rays (CIT-LR with the CLDM+D counterfactuals)."
    )
    return show_side_by_side(frame, caption)
