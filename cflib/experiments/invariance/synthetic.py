"""The synthetic studies of notebooks 01-02: Theorem 4.2, the ECA identity and the Figure 2 protocol.

The Table 1 zoo (:mod:`.zoo`) is trained and audited on the synthetic SCMs of App. F.1
(:func:`cflib.data.invariance_synthetic.invariance_synthetic`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ...data.invariance_synthetic import invariance_synthetic
from .zoo import audit_zoo, classifier_zoo, fit_zoo


def theorem42_enumeration(rng: np.random.Generator, *, p_a: float = 0.3, n_z: int = 6) -> pd.Series:
    """Theorem 4.2 by exact enumeration on a random discrete law of ``(A, Z)`` and a random ``g``.

    Draws :math:`P(Z)` (Dirichlet) and :math:`g(a, z) = P(\\hat Y = 1 | a, z)` (uniform) from ``rng``,
    sets :math:`h(z) = \\sum_a P(a) g(a, z)` and sums the three expectations over the ``2 x n_z`` cells.

    Parameters
    ----------
    rng : numpy.random.Generator
        Randomness of the law and of ``g``.
    p_a : float
        :math:`P(A = 1)`, with A independent of Z.
    n_z : int
        Number of values of Z.

    Returns
    -------
    pandas.Series
        ``E[Yhat g]``, ``E[Yhat h]``, ``E[(g - h)^2]`` and the gap ``|Delta - E[(g-h)^2]|``.
    """
    pz = rng.dirichlet(np.ones(n_z))
    g_tab = rng.random((2, n_z))  # g(a, z) = P(Yhat = 1 | A = a, Z = z)
    h_tab = (1 - p_a) * g_tab[0] + p_a * g_tab[1]  # h(z) = sum_a P(a) g(a, z) since Z is independent of A
    w = np.array([1 - p_a, p_a])[:, None] * pz[None, :]  # P(A = a, Z = z)
    exact = pd.Series(
        {
            "E[Yhat g]": (w * g_tab * g_tab).sum(),  # E[Yhat g] = E[g E[Yhat | A, Z]] = E[g^2]
            "E[Yhat h]": (w * g_tab * h_tab[None]).sum(),
            "E[(g - h)^2]": (w * (g_tab - h_tab[None]) ** 2).sum(),
        }
    )
    exact["|Delta - E[(g-h)^2]|"] = float(abs(exact["E[Yhat g]"] - exact["E[Yhat h]"] - exact["E[(g - h)^2]"]))
    return exact


def eca_identity_study(
    kinds: Sequence[str], n_identity: int, types: Sequence[str], *, a_effect: float, seed: int = 0
) -> pd.DataFrame:
    """Compare CIT-LR's mean paired difference with :math:`p(1-p)(1-\\mathrm{ECA})` over datasets and classifiers.

    Each dataset is split in halves; the Table 1 classifiers of ``types`` are fitted on the first and
    audited on the second with the oracle generator (the true SCM, :math:`do(A = 0)` and :math:`do(A = 1)`).

    Parameters
    ----------
    kinds : sequence of str
        Dataset kinds (:data:`cflib.data.invariance_synthetic.KINDS`).
    n_identity : int
        Units per dataset.
    types : sequence of str
        Keys of :data:`TABLE1`.
    a_effect : float
        Strength of A's effect.
    seed : int
        Seed of the samples and the classifiers.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, classifier): ``ECA``, ``Delta_hat`` with its standard error ``Delta_se``,
        ``E[(g-h)^2]``, ``p(1-p)(1-ECA)``, and ``diff`` = ``Delta_hat - p(1-p)(1-ECA)`` (the mean of per-unit
        differences) with its standard error ``diff_se``.
    """
    from ...stats.invariance import cit_lr_generative, expected_counterfactual_accuracy

    rows = []
    for i, kind in enumerate(kinds):
        d = invariance_synthetic(kind, n_identity, a_effect=a_effect, seed=100 + seed + i)
        tr, te = np.arange(n_identity // 2), np.arange(n_identity // 2, n_identity)
        zoo = classifier_zoo(seeds=[seed], include=types)
        fit_zoo(zoo, d.x[tr], d.y[tr])
        p = d.params.p_a
        for m in zoo:
            eca = expected_counterfactual_accuracy(m, d.x[te], d.x_cf[te]).eca
            cf = np.stack([m.predict(d.x_do(0)[te]), m.predict(d.x_do(1)[te])], axis=1)
            y_hat = m.predict(d.x[te])
            res = cit_lr_generative(y_hat, d.a[te], cf, p_a=[1 - p, p])
            target = p * (1 - p) * (1 - eca)
            # Per unit: d_i = y_i (g_i - h_i) (CIT-LR's paired difference) and e_i = d_i - p(1-p) 1[f flips under the A-flip],
            # whose mean is Delta_hat - p(1-p)(1-ECA); their standard errors are 0 only when every unit's value is equal.
            d_i = y_hat * (cf[np.arange(len(te)), d.a[te].astype(int)] - cf @ np.array([1 - p, p]))
            e_i = d_i - p * (1 - p) * (y_hat != m.predict(d.x_cf[te]))
            rows.append(
                {
                    "dataset": kind,
                    "model": m.kind,
                    "ECA": eca,
                    "Delta_hat": res.mean_diff,
                    "E[(g-h)^2]": res.effect,
                    "p(1-p)(1-ECA)": target,
                    "diff": float(e_i.mean()),
                    "diff_se": float(e_i.std(ddof=1) / np.sqrt(e_i.size)),
                    "Delta_se": float(d_i.std(ddof=1) / np.sqrt(d_i.size)),
                }
            )
    return pd.DataFrame(rows)


#: The tests of Figure 2: column prefix of :func:`audit_zoo` -> label.
FIGURE2_TESTS = {"cit_gen": "CIT-LR (generator)", "cit_reg": "CIT-LR (regression)", "dp": "DP", "eo": "EO"}


def audit_synthetic_zoos(
    kinds: Sequence[str],
    n: int,
    rng: np.random.Generator,
    *,
    test_size: float,
    seeds: Sequence[int],
    types: Sequence[str] | None,
    a_effect: float,
    n_mc: int,
    z_layer: str | int,
    seed: int = 0,
) -> pd.DataFrame:
    """Train and audit the Table 1 zoo on each synthetic dataset (the protocol behind Figure 2).

    Parameters
    ----------
    kinds : sequence of str
        Dataset kinds.
    n : int
        Units per dataset.
    rng : numpy.random.Generator
        Draws each dataset's random test split.
    test_size : float
        Share of test units.
    seeds : sequence of int
        ``random_state`` values per classifier type.
    types : sequence of str or None
        Keys of :data:`TABLE1` (``None``: all ten).
    a_effect : float
        Strength of A's effect.
    n_mc : int
        Monte-Carlo draws of the generator per unit and level.
    z_layer : "root" or int
        Z of the regression form.
    seed : int
        Seed of the samples and of the audit.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`audit_zoo` for every dataset, with a ``dataset`` column.
    """
    audits = []
    for i, kind in enumerate(kinds):
        data = invariance_synthetic(kind, n, a_effect=a_effect, seed=1000 * (seed + 1) + i)
        test = np.zeros(n, dtype=bool)
        test[rng.choice(n, int(round(test_size * n)), replace=False)] = True
        zoo = classifier_zoo(seeds=seeds, include=types)
        fit_zoo(zoo, data.x[~test], data.y[~test])
        audit = audit_zoo(zoo, data, test, n_mc=n_mc, z_layer=z_layer, seed=seed)
        audits.append(audit.assign(dataset=kind))
    return pd.concat(audits, ignore_index=True)


def figure2_alignment(results: pd.DataFrame, *, alpha: float = 0.05) -> pd.DataFrame:
    """Per dataset and test: Pearson r of ECA vs log10 p, residual sd, and rejection rates by ECA range.

    Parameters
    ----------
    results : pandas.DataFrame
        Output of :func:`audit_synthetic_zoos`.
    alpha : float
        Level of the rejection rates.

    Returns
    -------
    pandas.DataFrame
        One row per (dataset, test).
    """
    from ...stats.invariance import alignment_stats

    rows = []
    for kind, sub in results.groupby("dataset", sort=False):
        for key, label in FIGURE2_TESTS.items():
            st = alignment_stats(sub["eca"], sub[f"{key}_log10p"])
            one, hi, lo = sub["eca"] == 1, sub["eca"] >= 0.95, sub["eca"] < 0.85
            rows.append(
                {
                    "dataset": kind,
                    "test": label,
                    "r": st["r"],
                    "resid_sd": st["resid_sd"],
                    "reject | ECA=1": (sub.loc[one, f"{key}_p"] < alpha).mean() if one.any() else np.nan,
                    "reject | ECA>=0.95": (sub.loc[hi, f"{key}_p"] < alpha).mean() if hi.any() else np.nan,
                    "reject | ECA<0.85": (sub.loc[lo, f"{key}_p"] < alpha).mean() if lo.any() else np.nan,
                }
            )
    return pd.DataFrame(rows)
