"""The claims of notebooks 01 and 02: ``claims_01`` (C1, C6, C7) and ``claims_02`` (C11, C13), all over test images.

The claims of the other notebooks live beside them: :mod:`~cflib.experiments.soundness.claims_colour_digits`
(``claims_03``, Tables 1-4), :mod:`~cflib.experiments.soundness.claims_trade_offs` (``claims_04``, Tables 5-7)
and :mod:`~cflib.experiments.soundness.claims_truth` (``claims_05``, beyond the paper).

Each takes a plain dict of what the notebook computed, decides every claim with a rule of :mod:`cflib.verdicts`
on an interval, records it through :func:`cflib.claims.claim` with the paper's words of
:data:`~cflib.experiments.soundness.deciding.QUOTES`, and returns those claims' rows of
:func:`cflib.claims.claims_table`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

import cflib.data.colour_digits as cd

from ... import claims
from ... import verdicts as vd
from ...metrics import axioms as ax
from .common import PARENTS
from .deciding import (
    all_hold,
    claim,
    consistent,
    difference,
    undecided_note,
)
from .support import resampled
from .tables import summary_value

# ----------------------------------------------------------------------------------------------------
# 01: from axioms to metrics
# ----------------------------------------------------------------------------------------------------


def _l1_violation(seed: int) -> float:
    """Largest violation of the metric properties of the l1 distance on random images (0 for a metric on the 0-255 scale)."""
    a, b, c = np.random.default_rng(seed).random((3, 50, 3, 8, 8))
    d = ax.l1_distance
    return float(
        max(
            np.abs(d(a, a)).max(),
            np.abs(d(a, b) - d(b, a)).max(),
            np.max(d(a, c) - d(a, b) - d(b, c)),
            -min(d(a, b).min(), 0.0),
            abs(d(np.zeros((1, 3, 2, 2)), np.ones((1, 3, 2, 2)))[0] - 255),
        )
    )


#: Float rounding on the 0-255 scale: distances below this are zero (a thousandth of one grey level).
FLOAT_ZERO = 1e-3


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C1 (identity), C6 (ground truth) and C7 (the l1 distance is a metric) of notebook 01: all sanity checks.

    Parameters
    ----------
    results : dict
        ``summary`` (:func:`score_functions` of ``"identity"`` and ``"ground truth"``), ``clean`` (oracle
        scores on clean images, parent -> value), ``do_digit`` and ``digit`` (counterfactual and current
        digits), ``m``, ``cycles``, ``commutativity`` (:func:`commutativity_study`), ``truth_effectiveness``
        (:func:`truth_effectiveness`) and ``seed``.

    Returns
    -------
    pandas.DataFrame
        The rows of C1, C6 and C7.
    """
    claims.require(
        results,
        ["summary", "clean", "do_digit", "digit", "m", "cycles", "commutativity", "truth_effectiveness", "seed"],
        "claims_01",
    )
    s, m, cycles, te = results["summary"], results["m"], results["cycles"], results["truth_effectiveness"]
    n = len(results["digit"])

    def val(model: str, metric: str, intervened: str = "null", measured: str = "image", step: int = 1) -> float:
        return summary_value(s, metric, intervened, measured, step, model=model)

    def comp_rev(model: str) -> float:
        comp = max(val(model, "composition", step=j) for j in range(1, m + 1))
        return max(comp, *(val(model, "reversibility", k, step=c) for k in PARENTS for c in range(1, cycles + 1)))

    id_dist, id_dacc, id_herr = (
        comp_rev("identity"),
        val("identity", "effectiveness", "digit", "digit"),
        val("identity", "effectiveness", "hue", "hue"),
    )
    claims.record("identity_digit_accuracy", id_dacc)
    claims.record("identity_hue_error", id_herr)
    acc = vd.binomial_interval(int(round(id_dacc * n / 100)), n, unit="test images")
    herr = vd.normal_interval(
        id_herr,
        100 * np.sqrt(1 / 48 / n),
        method=f"standard error of a uniform circular error on [0, 0.5], {n} test images",
    )
    parts = [
        vd.decide_within(
            vd.exact(id_dist), 0, 0, quantity="largest composition / reversibility distance of the identity"
        ),
        consistent(
            acc, 0.1, quantity="identity's digit accuracy (chance: do-values drawn from 10 near-balanced classes)"
        ),
        consistent(herr, 25.0, quantity="identity's hue error x 100 (circular chance)"),
    ]
    claim(
        "C1",
        "Identity: composition and reversibility are exactly 0 for every m; effectiveness is at chance "
        "(digit accuracy 1/10, hue error: chance 1/3 linear, here 1/4 circular).",
        paper="0 / 0 / 10.50 % digit, 32.98 hue (linear)",
        ours=f"largest distance {id_dist:.1f}, digit {id_dacc:.2f} %, hue {id_herr:.2f}",
        decision=all_hold(parts, rule="distances exactly 0; digit accuracy and hue error consistent with chance"),
        evidence=f"digit accuracy {acc}; hue error {herr}",
        kind="sanity check",
    )
    comm = results["commutativity"]
    gt_dist = comp_rev("ground truth")
    lemma = float(max(comm["commutativity l1 (max)"].max(), comm["joint l1 (max)"].max()))
    unseen = te[~te["seen by the oracle"]]
    d_eff = difference(
        unseen["digit correct"], te["clean digit correct"], unit="unseen true counterfactuals vs clean test images"
    )
    h_eff = difference(te["hue error"], te["clean hue error"], unit="true counterfactuals vs clean test images")
    parts = [
        vd.decide_below(
            vd.exact(gt_dist),
            FLOAT_ZERO,
            inclusive=True,
            quantity="largest composition / reversibility distance of the truth",
        ),
        vd.decide_below(
            vd.exact(lemma),
            FLOAT_ZERO,
            inclusive=True,
            quantity="largest gap between the two orders and the joint intervention",
        ),
        consistent(d_eff, 0.0, quantity="digit accuracy on unseen true counterfactuals minus on clean test images"),
        consistent(h_eff, 0.0, quantity="hue error on true counterfactuals minus on clean test images"),
    ]
    claim(
        "C6",
        "A ground-truth counterfactual function scores 0 on composition and reversibility; its effectiveness equals the "
        "oracle's on clean images (on counterfactuals the oracle did not train on); its partial functions commute and equal "
        "the joint intervention (Lemma C.1).",
        paper="qualitative (Sec. 3.1.1, Lemma A.1, Lemma C.1)",
        ours=f"largest distance {gt_dist:.2g}, largest commutativity / joint gap {lemma:.2g}; digit accuracy {100 * unseen['digit correct'].mean():.2f} % on "
        f"{len(unseen)} unseen counterfactuals vs {100 * te['clean digit correct'].mean():.2f} % clean",
        decision=all_hold(
            parts,
            rule="zero distances and Lemma C.1 gaps (float rounding); effectiveness consistent with the oracle's clean scores",
        ),
        evidence=f"digit accuracy difference {d_eff}; hue error difference {h_eff}; {int(te['seen by the oracle'].sum())} of {len(te)} "
        "counterfactuals are exemplars the oracle trained on and are left out of the digit comparison",
        kind="sanity check",
        change="the old rule asked the digit accuracy on every true counterfactual to be within 1 point of the clean accuracy, both ways; most "
        "of those counterfactuals are exemplars the oracle trained on, so it read them better than clean test images; Lemma C.1 also "
        "says both orders equal the joint intervention g(eps, pa1*, pa2*), now checked",
    )
    viol = _l1_violation(results["seed"])
    claim(
        "C7",
        "The l1 distance is a metric (zero on equal images, symmetric, triangle inequality) on the 0-255 scale.",
        paper="App. B",
        ours=f"largest violation {viol:.2g} on 50 random image triples; black vs white = 255",
        decision=vd.decide_below(
            vd.exact(viol), 1e-9, inclusive=True, quantity="largest violation of a metric property"
        ),
        evidence="exact checks on random images",
        kind="sanity check",
    )
    return claims.rows(["C1", "C6", "C7"])


# ----------------------------------------------------------------------------------------------------
# 02: Colour-Digits, full support and simulated interventions
# ----------------------------------------------------------------------------------------------------
def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C11 (the SI resampler) and C13 (oracles trained on biased data) of notebook 02.

    Parameters
    ----------
    results : dict
        ``scms`` (SCM name -> training split), ``si`` (:func:`simulated_interventions` indices of
        ``"confounded"`` and ``"confounded_full_support"``), ``hue_bins``, ``dependence``
        (:func:`si_dependence`), ``oracle_quality`` (:func:`oracle_quality`) and ``n_test`` (its test images).

    Returns
    -------
    pandas.DataFrame
        The rows of C11 and C13.
    """
    claims.require(results, ["scms", "si", "hue_bins", "dependence", "oracle_quality", "n_test"], "claims_02")
    scms, si, bins, dep, quality, n_test = (
        results[k] for k in ("scms", "si", "hue_bins", "dependence", "oracle_quality", "n_test")
    )
    claims.record("si_dependence", dep.round(4).to_dict())
    claims.record("oracle_quality", quality[["digit accuracy (%)", "hue error (x100)"]].round(2).to_dict())
    cf, nf = scms["confounded_full_support"], scms["confounded"]
    before_nf, _, _ = cd.joint_histogram(nf.parents, bins=bins)
    after_nf, _, _ = cd.joint_histogram(resampled(nf, si["confounded"]), bins=bins, discrete=["digit"])
    reps = np.bincount(si["confounded_full_support"], minlength=len(cf))
    cell = cd.cell_index(cf.parents, bins=bins)
    unequal = sum(len(np.unique(reps[cell == c])) > 1 for c in np.unique(cell))
    filled = int(np.sum(after_nf[before_nf == 0] > 0))
    dep_b, dep_a = dep.loc["confounded_full_support", "before"], dep.loc["confounded_full_support", "after SI"]
    claim(
        "C11",
        "SI resampler: after resampling, the binned joint is the product of the marginals; empty cells stay "
        "empty; every sample of a cell is repeated the same integer number of times.",
        paper="eq. 4 / official code",
        ours=f"max |joint - product| {dep_b:.4f} -> {dep_a:.4f}; "
        f"{int((before_nf == 0).sum())} empty cells, {filled} filled by SI; cells with unequal repeats: {unequal}",
        decision=all_hold(
            [
                vd.decide_below(vd.exact(dep_a / dep_b), 0.1, quantity="dependence after SI / before (full support)"),
                vd.decide_within(
                    vd.exact(filled + unequal), 0, 0, quantity="empty cells filled plus cells with unequal repeats"
                ),
            ],
            rule="dependence reduced more than 10-fold (integer repeat counts leave a rounding residue); holes and repeats exact",
        ),
        evidence="exact computations on the resampled indices",
        kind="sanity check",
    )
    acc, err, acc_se, err_se = (
        quality[c] for c in ("digit accuracy (%)", "hue error (x100)", "digit accuracy s.e.", "hue error s.e.")
    )
    u, c, s = "unconfounded (CNN)", "confounded (CNN)", "confounded + SI (CNN)"

    def diff(col: pd.Series, se: pd.Series, a: str, b: str) -> vd.Interval:
        return vd.normal_interval(
            col[a] - col[b], float(np.hypot(se[a], se[b])), method="standard errors over the test images of two oracles"
        )

    parts = {
        "confounded oracle worse on the digit": vd.decide_above(
            diff(acc, acc_se, u, c), 0, quantity="digit accuracy, unconfounded - confounded oracle"
        ),
        "confounded oracle worse on the hue": vd.decide_above(
            diff(err, err_se, c, u), 0, quantity="hue error, confounded - unconfounded oracle"
        ),
        "SI helps on the digit": vd.decide_above(
            diff(acc, acc_se, s, c), 0, quantity="digit accuracy, SI - confounded oracle"
        ),
        "SI helps on the hue": vd.decide_above(
            diff(err, err_se, c, s), 0, quantity="hue error, confounded - SI oracle"
        ),
    }
    claim(
        "C13",
        "Oracles trained on confounded data are worse on unconfounded test data, and SI helps them "
        "(digit 99.18 -> 90.67 -> 96.70 %; hue error 1.38 -> 6.34 -> 4.11).",
        paper="99.18 / 90.67 / 96.70 %; 1.38 / 6.34 / 4.11",
        ours=f"{acc[u]:.2f} / {acc[c]:.2f} / {acc[s]:.2f} %; {err[u]:.2f} / {err[c]:.2f} / {err[s]:.2f}",
        decision=vd.one_seed(
            all_hold(
                parts.values(),
                rule="confounded oracle worse than the unconfounded one, and the SI oracle better than the confounded one, on both parents",
            )
        ),
        evidence="; ".join(f"{k}: {d.verdict} ({d.interval})" for k, d in parts.items())
        + " (one oracle seed; intervals over test images)",
        change="issue 38: a comparison of trained oracles on one oracle seed is undecided (cflib.verdicts.one_seed), whatever its "
        "test images read. Before: the paper's words say the confounded oracle is worse and SI helps ('However, using a simulated "
        "intervention...'); the old rule also required the SI oracle to stay below the unconfounded one and called a partial "
        "ordering inconclusive",
        undecided="Undecided: one oracle seed per training set; the comparison needs two or more oracle seeds of each of the "
        "three oracles, with seed_interval over the per-seed differences (each oracle trains in seconds at this scale). Over this "
        "seed's test images: "
        + (
            undecided_note(
                next((d.interval for d in parts.values() if d.verdict == vd.UNDECIDED), None), n_test, "test images"
            )
            or "every part decided"
        )
        + "; the Colour-Digits test split has 348 exemplars, and the oracles' hue errors differ by hundredths of a point (the 8x8 colour "
        "images make the hue easy to read for every oracle)",
        kind="reproduction",
    )
    return claims.rows(["C11", "C13"])
