"""The chapter's claims: ``claims_01`` to ``claims_05``, one per notebook.

Each ``claims_<nn>(results)`` takes a plain dict of what the notebook computed, decides every claim with
a rule of :mod:`cflib.verdicts` on an interval (over test images, over training seeds, or over
counterfactual functions for B1), records it through :func:`cflib.claims.claim` with the paper's words of
:data:`~cflib.experiments.soundness.deciding.QUOTES`, and returns those claims' rows of
:func:`cflib.claims.claims_table`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ... import claims
from ... import verdicts as vd
from ...data import colour_digits as cd
from ...metrics import axioms as ax
from ...models.baselines import MODEL_LABELS
from .common import BLOCKS, PARENTS
from .deciding import (
    all_hold,
    claim,
    consistent,
    difference,
    seed_array,
    seed_diff,
    seed_note,
    seeded,
    undecided_note,
)
from .support import resampled
from .tables import RANK_COLUMNS, seed_correlations, summary_value
from .truth import TRUTH_METRICS

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
        decision=all_hold(
            parts.values(),
            rule="confounded oracle worse than the unconfounded one, and the SI oracle better than the confounded one, on both parents",
        ),
        evidence="; ".join(f"{k}: {d.verdict} ({d.interval})" for k, d in parts.items())
        + " (one oracle seed; intervals over test images)",
        change="the paper's words say the confounded oracle is worse and SI helps ('However, using a simulated intervention...'); the old rule "
        "also required the SI oracle to stay below the unconfounded one and called a partial ordering inconclusive",
        undecided=undecided_note(
            next((d.interval for d in parts.values() if d.verdict == vd.UNDECIDED), None), n_test, "test images"
        )
        + "; the Colour-Digits test split has 348 exemplars, and the oracles' hue errors differ by hundredths of a point (the 8x8 colour "
        "images make the hue easy to read for every oracle)",
    )
    return claims.rows(["C11", "C13"])


# ----------------------------------------------------------------------------------------------------
# 03: soundness of Colour-Digit models (Tables 1-4)
# ----------------------------------------------------------------------------------------------------
def _rank_change_interval(
    images: Mapping[tuple[str, str, str], Mapping[tuple, np.ndarray]],
    block: str,
    family: str,
    *,
    n_boot: int = 500,
    seed: int = 0,
) -> vd.Interval:
    """Mean |change of average rank| (Tables 2-4) of one block and oracle family.

    With two or more training seeds: the change of each seed's models (ranked on that seed's means over
    the test images), and a t interval over the seeds. With one: a bootstrap over that seed's test images.
    """
    from scipy.stats import rankdata

    configs = [k for k in images if k[0] == block]
    cols = list(RANK_COLUMNS)
    sign = np.array([-1.0 if better else 1.0 for better in RANK_COLUMNS.values()])[None, :, None]

    def stack(fam: str) -> np.ndarray:  # (configs, 4, seeds, images)
        return np.stack(
            [np.stack([seed_array(images[c]["effectiveness", k, j, 1, fam]) for k, j in cols]) for c in configs]
        )

    main, alt = stack("main"), stack(family)

    def change(
        a: np.ndarray, b: np.ndarray, idx: np.ndarray
    ) -> np.ndarray:  # a, b: (configs, 4, images); idx: (draws, images) -> (draws,)
        r = [rankdata(sign * v[:, :, idx].mean(-1), axis=0).mean(1) for v in (a, b)]  # (configs, draws)
        return np.abs(r[1] - r[0]).mean(0)

    n_seeds, n = main.shape[2], main.shape[-1]
    every = np.arange(n)[None]
    if n_seeds >= 2:
        per_seed = [float(change(main[:, :, s], alt[:, :, s], every)[0]) for s in range(n_seeds)]
        return vd.seed_interval(
            per_seed, within=f"test images (each seed's {len(configs)} configurations ranked on their own)"
        )
    main, alt = main[:, :, 0], alt[:, :, 0]
    est = float(change(main, alt, every)[0])
    draws = change(main, alt, np.random.default_rng(seed).integers(0, n, (n_boot, n)))
    low, high = np.quantile(draws, [0.025, 0.975])
    return vd.Interval(
        est,
        float(low),
        float(high),
        f"95% percentile bootstrap over {n} test images, {n_boot} draws ({len(configs)} configurations)",
    )


#: The paper's Table 1, confounded block with full support (mean over 5 seeds; notes §4, cross-checked there against
#: the "original rank" columns of Tables 2-4): (block, SI flag, model) -> (metric, intervened, measured) -> value.
#: "yes*" is the GAN whose SI is only its target distribution. The test of C12's comparator reads it.
_T1_COLUMNS = (
    ("composition", "null", "image"),
    ("effectiveness", "digit", "digit"),
    ("effectiveness", "digit", "hue"),
    ("reversibility", "digit", "image"),
    ("effectiveness", "hue", "digit"),
    ("effectiveness", "hue", "hue"),
    ("reversibility", "hue", "image"),
)
TABLE1_FULL_SUPPORT: dict[tuple[str, str, str], dict[tuple[str, str, str], float]] = {
    ("confounded_full_support", si_flag, MODEL_LABELS[name]): dict(zip(_T1_COLUMNS, row, strict=True))
    for si_flag, name, row in [
        ("no", "bernoulli_b1", (6.68, 96.62, 8.52, 8.89, 99.20, 12.15, 8.45)),
        ("no", "bernoulli_b2", (7.56, 99.36, 2.70, 9.67, 99.47, 2.54, 9.32)),
        ("no", "normal_b5", (6.72, 95.53, 3.88, 9.06, 99.07, 3.59, 8.45)),
        ("yes*", "gan", (6.05, 95.17, 1.95, 11.18, 99.18, 1.73, 7.79)),
        ("yes", "bernoulli_b1", (6.67, 99.07, 2.31, 8.42, 99.37, 3.08, 8.40)),
        ("yes", "bernoulli_b2", (7.84, 99.63, 2.16, 9.63, 99.61, 2.01, 9.34)),
        ("yes", "normal_b5", (6.51, 97.75, 3.05, 8.35, 99.31, 2.73, 7.83)),
        ("yes", "gan", (5.25, 96.27, 1.84, 10.75, 99.01, 1.77, 6.20)),
    ]
}

#: C12's GAN: full support, trained with SI (the row of the notes' 5.25 / 1.84 / 1.77 / 10.75).
C12_GAN = ("confounded_full_support", "yes", MODEL_LABELS["gan"])

#: C12's parts: Table 1 column -> +1 where the claim says the GAN's value is the largest (the worst digit
#: reversibility), -1 where the smallest (the best composition and both hue errors, "1.84 / 1.77").
C12_PARTS: dict[str, tuple[tuple[str, str, str], int]] = {
    "composition": (("composition", "null", "image"), -1),
    "hue error under do(digit)": (("effectiveness", "digit", "hue"), -1),
    "hue error under do(hue)": (("effectiveness", "hue", "hue"), -1),
    "digit reversibility": (("reversibility", "digit", "image"), +1),
}


def _c12_comparators(configs: Any) -> list[tuple[str, str, str]]:
    """The configurations C12 compares its GAN with: the other models (the VAEs) of its block trained with the same SI.

    The notes' words (best composition "5.25 with SI", hue error 1.84 / 1.77, worst digit reversibility 10.75, against
    "the VAEs": model classes trade off differently) compare model classes. The same GAN trained with SI only for its
    target ("yes*") is not another model but another setting, and a VAE without SI differs from the GAN in the setting
    too: the comparison is at matched setting, full support and SI for both.
    """
    return [c for c in configs if c[0] == C12_GAN[0] and c[1] == C12_GAN[1] and c[2] != C12_GAN[2]]


def _c12_margins(values: Mapping[tuple[str, str, str], Mapping[tuple[str, str, str], Any]]) -> dict[str, Any]:
    """C12's margins, positive where the claim holds: ``sign * (GAN - comparator)`` per part and comparator.

    Parameters
    ----------
    values : dict
        Configuration -> Table 1 column -> value (a number, or an array over training seeds), e.g.
        :data:`TABLE1_FULL_SUPPORT`.

    Returns
    -------
    dict
        ``"<part> vs <model>"`` -> margin.
    """
    if C12_GAN not in values:
        raise ValueError(f"values has no configuration {C12_GAN}")
    gan = values[C12_GAN]
    return {
        f"{part} vs {o[2]}": sign * (np.asarray(gan[col], dtype=float) - np.asarray(values[o][col], dtype=float))
        for part, (col, sign) in C12_PARTS.items()
        for o in _c12_comparators(values)
    }


#: The change note of notebook 03's model comparisons (:func:`claims_03`).
_TABLE1_SEEDS_CHANGE = (
    "decided with training seeds as units (issue 27): a t interval over the per-seed estimates, each the mean over the test images "
    "(the seed-to-seed spread of trained models exceeds one model's interval over test images); with one seed the claim is "
    "undecided. The book scale trains 3 seeds (was 1)"
)

#: Table 1's unconfounded block without SI, and the name of the VAE without encoder.
_UNCONFOUNDED, _NO_ENCODER = ("unconfounded", "no"), "VAE w/o encoder"


class _Table1Values:
    """What the stages of :func:`claims_03` read: Table 1's means, the per-image values behind them and the number of training seeds."""

    def __init__(
        self, summary: pd.DataFrame, images: Mapping[tuple[str, str, str], Mapping[tuple, np.ndarray]]
    ) -> None:
        self.summary, self.images = summary, images
        self.n_seeds = seed_array(next(iter(next(iter(images.values())).values()))).shape[0]

    def v(
        self,
        block: str,
        si_flag: str,
        model: str,
        metric: str,
        intervened: str = "null",
        measured: str = "image",
        step: int = 1,
        oracles_: str | None = None,
    ) -> float:
        extra = {} if oracles_ is None else {"oracles": oracles_}
        return summary_value(
            self.summary, metric, intervened, measured, step, block=block, SI=si_flag, model=model, **extra
        )

    def img(
        self,
        block: str,
        si_flag: str,
        model: str,
        metric: str,
        intervened: str = "null",
        measured: str = "image",
        step: int = 1,
    ) -> np.ndarray:
        key = (block, si_flag, model)
        if key not in self.images:
            raise ValueError(f"images has no configuration {key}; pass soundness_study's per-image values")
        return seed_array(
            self.images[key][metric, intervened, measured, step, "main" if metric == "effectiveness" else "none"]
        )

    def eff(self, block: str, si_flag: str, model: str, intervened: str, measured: str) -> float:
        return self.v(block, si_flag, model, "effectiveness", intervened, measured, oracles_="main")

    @staticmethod
    def ev(parts: Mapping[str, vd.Decision]) -> str:
        return "; ".join(f"{k}: {d.interval}" for k, d in parts.items())

    def decide(self, key: str, parts: Mapping[str, vd.Decision], rule: str) -> dict[str, Any]:
        """The claim's decision over its parts, undecided with one seed, and the note saying which seeds would decide it."""
        d = seeded(all_hold(parts.values(), rule=rule), self.n_seeds)
        return {"decision": d, "undecided": seed_note(d, self.n_seeds)}


def _claim_c2(t: _Table1Values, m: int, cycles: int) -> np.ndarray:
    """C2: the VAE without encoder gives one distance at every m and cycle. Returns the mean of each distance."""
    img, eff = t.img, t.eff
    uc, ne_name = _UNCONFOUNDED, _NO_ENCODER
    ne = np.stack(
        [img(*uc, ne_name, "composition", step=j) for j in range(1, m + 1)]
        + [img(*uc, ne_name, "reversibility", k, step=c) for k in PARENTS for c in range(1, cycles + 1)]
    )  # (distances, seeds, images)
    spread = float((ne.max(0) - ne.min(0)).max() / ne.mean())
    ne_means = ne.reshape(len(ne), -1).mean(1)
    ne_dacc = eff(*uc, ne_name, "digit", "digit")
    claim(
        "C2",
        "VAE without encoder (noise fixed per image): composition^(1) = composition^(m) = reversibility^(c).",
        paper="19.04 in all three columns; digit accuracy 97.08 %",
        ours=f"{ne_means.min():.3f} .. {ne_means.max():.3f}; digit accuracy {ne_dacc:.1f} %",
        decision=vd.decide_below(
            vd.exact(spread, method="per image, exact: the decoder never reads the image"),
            1e-3,
            inclusive=True,
            quantity="largest per-image spread of the distances / their mean",
        ),
        evidence=f"all {len(ne)} distances of every test image and training seed equal to float rounding",
        kind="sanity check",
    )
    return ne_means


def _claims_c3_c4(t: _Table1Values, vaes: Sequence[str], m: int, ne_means: np.ndarray) -> None:
    """C3 (composition^(m) grows towards the no-encoder level) and C4 (the unconfounded ordering)."""
    v, img, eff, ev, decide = t.v, t.img, t.eff, t.ev, t.decide
    uc, ne_name, seeds_change = _UNCONFOUNDED, _NO_ENCODER, _TABLE1_SEEDS_CHANGE
    comp1 = {n: v(*uc, n, "composition", step=1) for n in vaes}
    compm = {n: v(*uc, n, "composition", step=m) for n in vaes}
    claims.record("composition_1_and_m", {n: [comp1[n], compm[n]] for n in vaes})
    parts = {
        n: vd.decide_above(
            seed_diff(img(*uc, n, "composition", step=m), img(*uc, n, "composition")),
            0,
            quantity=f"{n}: composition^({m}) - composition^(1)",
        )
        for n in vaes
    }
    claim(
        "C3",
        f"A VAE's composition^(m) increases with m and approaches the no-encoder level (m = 1 -> {m}).",
        paper="5.98 -> 17.36 vs 19.04 (Bernoulli beta=1)",
        ours="; ".join(f"{n}: {comp1[n]:.2f} -> {compm[n]:.2f}" for n in vaes) + f"; no encoder {ne_means[0]:.2f}",
        **decide(
            "C3",
            parts,
            f"composition^({m}) above composition^(1) for every VAE of the unconfounded block, per training seed",
        ),
        evidence=ev(parts),
        change=seeds_change,
    )
    id_d = eff(*uc, "identity", "digit", "digit")
    vae_d = [eff(*uc, n, "digit", "digit") for n in vaes]
    parts = {}
    for n in vaes:
        c1 = img(*uc, n, "composition")
        parts[f"{n} composition > 0"] = vd.decide_above(seed_diff(c1), 0, quantity=f"{n}: composition^(1)")
        parts[f"{n} below no encoder"] = vd.decide_above(
            seed_diff(img(*uc, ne_name, "composition"), c1), 0, quantity=f"no encoder - {n}: composition^(1)"
        )
        parts[f"{n} digit accuracy above identity"] = vd.decide_above(
            seed_diff(
                img(*uc, n, "effectiveness", "digit", "digit"), img(*uc, "identity", "effectiveness", "digit", "digit")
            ),
            0,
            quantity=f"{n} - identity: digit accuracy (%)",
        )
    claim(
        "C4",
        "Unconfounded ordering: 0 = identity < VAE composition^(1) < no-encoder composition; digit effectiveness identity < VAEs.",
        paper="0 < 5.98-6.86 < 19.04; 10.5 % vs 97-99.5 %",
        ours=f"0 < {min(comp1.values()):.2f}-{max(comp1.values()):.2f} < {ne_means[0]:.2f}; {id_d:.1f} % vs {min(vae_d):.1f}-{max(vae_d):.1f} %",
        **decide(
            "C4",
            parts,
            "every strict inequality of the ordering, for every VAE (the identity's 0 is exact), the no-encoder VAE of each seed "
            "decoding that seed's Bernoulli beta=1 VAE",
        ),
        evidence=ev(parts),
        change=seeds_change,
    )


def _vae_rows(summary: pd.DataFrame, vaes: Sequence[str]) -> list[tuple[str, str, str]]:
    """The (block, SI flag, model) configurations of the VAEs in Table 1's summary."""
    return [
        (r.block, r.SI, r.model)
        for r in summary[(summary.metric == "composition") & summary.model.isin(vaes)][["block", "SI", "model"]]
        .drop_duplicates()
        .itertuples()
    ]


def _claim_c5(t: _Table1Values, rows: Sequence[tuple[str, str, str]]) -> None:
    """C5 (the book's reading of Table 1): reversibility^(1) >= composition^(1) for every VAE configuration."""
    img, decide, seeds_change = t.img, t.decide, _TABLE1_SEEDS_CHANGE
    parts = {
        f"{b}/{si_flag}/{n} do({k})": vd.decide_above(
            seed_diff(img(b, si_flag, n, "reversibility", k), img(b, si_flag, n, "composition")),
            0,
            inclusive=True,
            quantity="reversibility^(1) - composition^(1)",
        )
        for b, si_flag, n in rows
        for k in PARENTS
    }
    n_rep = sum(d.verdict == vd.REPRODUCED for d in parts.values())
    claim(
        "C5",
        "The book's reading of Table 1 (the paper does not state it): reversibility^(1) >= composition^(1) for the VAEs "
        "(two applications against one).",
        paper="holds in every VAE row of Table 1 (not stated in the text)",
        ours=f"{n_rep} of {len(parts)} (VAE configuration, intervention) pairs decided >= 0",
        **decide(
            "C5", parts, "reversibility^(1) - composition^(1) >= 0 for every VAE configuration and both interventions"
        ),
        evidence="; ".join(
            f"{k}: {d.verdict} {d.interval.estimate:.2f} [{d.interval.low:.2f}, {d.interval.high:.2f}]"
            for k, d in parts.items()
        ),
        kind="book's own finding",
        change="the book's own finding (issue 27): the notes read it off Table 1's numbers and the paper's text does not state it (Table 7 at "
        "beta >= 7 even reverses it), so it no longer counts as a reproduction; " + seeds_change,
    )


def _claims_c8_c10(t: _Table1Values, vaes: Sequence[str], b1: str) -> None:
    """C8 (confounding without full support hurts), C9 (SI cannot repair missing support) and C10 (with full support, SI recovers)."""
    img, eff, ev, decide = t.img, t.eff, t.ev, t.decide
    uc, seeds_change = _UNCONFOUNDED, _TABLE1_SEEDS_CHANGE
    cf = ("confounded", "no")
    parts = {
        "hue error (do digit)": vd.decide_above(
            seed_diff(
                img(*cf, b1, "effectiveness", "digit", "hue"),
                img(*uc, b1, "effectiveness", "digit", "hue"),
                paired=False,
            ),
            0,
            quantity="hue error x100 under do(digit), confounded - unconfounded",
        ),
        "composition": vd.decide_above(
            seed_diff(img(*cf, b1, "composition"), img(*uc, b1, "composition")),
            0,
            quantity="composition^(1), confounded - unconfounded",
        ),
        "reversibility": vd.decide_above(
            seed_diff(img(*cf, b1, "reversibility", "digit"), img(*uc, b1, "reversibility", "digit"), paired=False),
            0,
            quantity="digit reversibility^(1), confounded - unconfounded",
        ),
        "digit accuracy": vd.decide_above(
            seed_diff(
                img(*uc, b1, "effectiveness", "digit", "digit"),
                img(*cf, b1, "effectiveness", "digit", "digit"),
                paired=False,
            ),
            0,
            quantity="digit accuracy (%), unconfounded - confounded",
        ),
    }
    claim(
        "C8",
        f"Confounding without full support hurts ({b1}): worse effectiveness, larger composition and reversibility distances.",
        paper="hue error 1.29 -> 10.74; composition 5.98 -> 9.20; reversibility 7.67 -> 11.42",
        ours=", ".join(f"{k} {d.interval.estimate:+.2f}" for k, d in parts.items()),
        **decide("C8", parts, "all four directions, the same VAE trained on the two SCMs"),
        evidence=ev(parts)
        + " (the blocks draw different do-values: each seed's difference is of means over the test images)",
        change=seeds_change,
    )
    parts = {
        n: vd.decide_above(
            seed_diff(
                img("confounded", "yes", n, "effectiveness", "digit", "hue"),
                img(*uc, n, "effectiveness", "digit", "hue"),
                paired=False,
            ),
            0,
            quantity=f"{n}: hue error x100 under do(digit), confounded + SI - unconfounded",
        )
        for n in vaes
    }
    si_nf = [eff("confounded", "yes", n, "digit", "hue") for n in vaes]
    uc_h = [eff(*uc, n, "digit", "hue") for n in vaes]
    claim(
        "C9",
        "SI cannot repair missing support: trained with SI on the confounded data without full support, the models stay "
        "worse than unconfounded ones (hue error under the digit intervention).",
        paper="hue error 6.4-7.5 vs 1.2-1.5 unconfounded",
        ours=f"hue error {min(si_nf):.2f}-{max(si_nf):.2f} vs {min(uc_h):.2f}-{max(uc_h):.2f}",
        **decide(
            "C9", parts, "for every VAE, the SI model's hue error under do(digit) above the same VAE's unconfounded one"
        ),
        evidence=ev(parts),
        change=seeds_change,
    )
    fs = {
        flag: {
            "digit acc": eff("confounded_full_support", flag, b1, "digit", "digit"),
            "hue err (do digit)": eff("confounded_full_support", flag, b1, "digit", "hue"),
            "hue err (do hue)": eff("confounded_full_support", flag, b1, "hue", "hue"),
        }
        for flag in ("no", "yes")
    }

    def fs_img(flag: str, k: str, j: str) -> np.ndarray:
        return img("confounded_full_support", flag, b1, "effectiveness", k, j)

    parts = {
        "digit accuracy up": vd.decide_above(
            seed_diff(fs_img("yes", "digit", "digit"), fs_img("no", "digit", "digit")),
            0,
            quantity="digit accuracy, SI - no SI",
        ),
        "hue error (do digit) down": vd.decide_below(
            seed_diff(fs_img("yes", "digit", "hue"), fs_img("no", "digit", "hue")),
            0,
            quantity="hue error under do(digit), SI - no SI",
        ),
        "hue error (do hue) down": vd.decide_below(
            seed_diff(fs_img("yes", "hue", "hue"), fs_img("no", "hue", "hue")),
            0,
            quantity="hue error under do(hue), SI - no SI",
        ),
    }
    claim(
        "C10",
        f"With full support, SI recovers effectiveness ({b1}).",
        paper="digit 96.62 -> 99.07 %; hue error 8.52 -> 2.31 (do digit), 12.15 -> 3.08 (do hue)",
        ours="; ".join(f"{k} {fs['no'][k]:.2f} -> {fs['yes'][k]:.2f}" for k in fs["no"]),
        **decide(
            "C10", parts, "all three effectiveness columns better with SI (the same VAE, test images and do-values)"
        ),
        evidence=ev(parts),
        change=seeds_change,
    )


def _claim_c12(t: _Table1Values, results: Mapping[str, Any]) -> None:
    """C12 (the book's reading of Table 1): the GAN with SI against each VAE with SI, at matched setting."""
    v, img, eff, ev, decide, images, seeds_change = t.v, t.img, t.eff, t.ev, t.decide, t.images, _TABLE1_SEEDS_CHANGE
    others = _c12_comparators(images)
    parts = {}
    for part, (col, sign) in C12_PARTS.items():
        for o in others:
            iv = seed_diff(img(*C12_GAN, *col), img(*o, *col))
            parts[f"{part}: GAN - {o[2]}"] = (vd.decide_above if sign > 0 else vd.decide_below)(
                iv, 0, quantity=f"GAN - {o[2]}: {part}"
            )
    fails = [k for k, d in parts.items() if d.verdict == vd.NOT_REPRODUCED]
    g = C12_GAN
    claim(
        "C12",
        "The book's reading of Table 1 (the paper does not state it): trained on the full-support data with SI, the GAN with the "
        "composition constraint has better composition and hue effectiveness than each VAE trained on the same data with SI, but worse "
        "digit reversibility.",
        paper="composition 5.25, hue error 1.84 / 1.77 (best); digit reversibility 10.75 (worst); the paper's Table 1 passes this comparator",
        ours=f"composition {v(*g, 'composition'):.2f}, hue error {eff(*g, 'digit', 'hue'):.2f} / {eff(*g, 'hue', 'hue'):.2f}, digit reversibility "
        f"{v(*g, 'reversibility', 'digit'):.2f} against the VAEs with SI: "
        + "; ".join(
            f"{o[2]} {v(*o, 'composition'):.2f}, {eff(*o, 'digit', 'hue'):.2f} / {eff(*o, 'hue', 'hue'):.2f}, {v(*o, 'reversibility', 'digit'):.2f}"
            for o in others
        ),
        **decide(
            "C12",
            parts,
            "at matched setting (full support, SI for both; the 'yes*' GAN and the VAEs without SI differ in a setting, "
            "not in the model): the GAN's composition and both hue errors below, its digit reversibility above, each VAE's"
            + (
                f"; each model at its own training settings here, the VAEs {results['steps']} steps, the GAN {results['gan_steps']} steps "
                f"at learning rate {results['gan_lr']:g} (the paper trains both 20 000 steps, each at its own learning rate)"
                if all(k in results for k in ("steps", "gan_steps", "gan_lr"))
                else ""
            ),
        ),
        evidence=("not reproduced parts: " + "; ".join(f"{k}: {parts[k].interval}" for k in fails))
        if fails
        else ev(parts),
        kind="book's own finding",
        change="the comparator took in every other full-support configuration, the GAN 'yes*' among them, against which the paper's own "
        "Table 1 fails the claim (1.73 < 1.77 hue error, 11.18 > 10.75 digit reversibility); the notes' words compare the GAN with "
        "the VAEs, so now the VAEs trained with SI (matched setting), on both hue errors the words cite (1.84 / 1.77; was do(hue) "
        "only). The book's own finding: the notes read it off Table 1 and the paper's text does not state it. "
        + seeds_change,
    )


def _claim_c14(t: _Table1Values, rank_changes: pd.DataFrame) -> None:
    """C14: model rankings are robust to the oracle family (Tables 2-4)."""
    ev, decide, images, seeds_change = t.ev, t.decide, t.images, _TABLE1_SEEDS_CHANGE
    block_of = {title: b for b, title in BLOCKS.items()}
    parts = {
        f"{i} / {c}": vd.decide_below(
            _rank_change_interval(images, block_of[c], i.split(": ", 1)[1]), 1, quantity="mean |change of average rank|"
        )
        for i in rank_changes.index
        for c in rank_changes.columns
    }
    claim(
        "C14",
        "Model rankings are robust to the oracle: the mean |change of average rank| stays below 1 for biased, biased + SI and linear oracles.",
        paper="0.83 / 0.75; 0.83 / 0.625; 0.92 / 0.69",
        ours="; ".join(
            f"{i}: {rank_changes.loc[i].iloc[0]:.2f} / {rank_changes.loc[i].iloc[1]:.2f}" for i in rank_changes.index
        )
        + " (ranks of the means over seeds)",
        **decide(
            "C14",
            parts,
            "mean |change of average rank| below 1 for every family and block, each training seed's models ranked on their own",
        ),
        evidence=ev(parts),
        change=seeds_change
        + "; the change of rank is now each seed's (the paper ranks the means over 5 seeds, shown in 'ours')",
    )


def _claim_c19(t: _Table1Values, rows: Sequence[tuple[str, str, str]], cycles: int) -> None:
    """C19: repeated reversibility cycles degrade progressively for the VAEs."""
    img, decide, seeds_change = t.img, t.decide, _TABLE1_SEEDS_CHANGE
    parts = {
        f"{b}/{si_flag}/{n}": vd.decide_above(
            seed_diff(
                img(b, si_flag, n, "reversibility", "hue", step=cycles), img(b, si_flag, n, "reversibility", "hue")
            ),
            0,
            quantity=f"hue reversibility^({cycles}) - reversibility^(1)",
        )
        for b, si_flag, n in rows
    }
    n_up = sum(d.verdict == vd.REPRODUCED for d in parts.values())
    claim(
        "C19",
        "Repeated reversibility cycles degrade progressively: reversibility^(c) grows with c for the VAEs.",
        paper="qualitative (Fig. 13)",
        ours=f"reversibility^({cycles}) above reversibility^(1) in {n_up} of {len(parts)} VAE configurations (hue intervention)",
        **decide("C19", parts, f"hue reversibility^({cycles}) above reversibility^(1) for every VAE configuration"),
        evidence="; ".join(
            f"{k}: {d.verdict} {d.interval.estimate:.2f} [{d.interval.low:.2f}, {d.interval.high:.2f}]"
            for k, d in parts.items()
        ),
        change=seeds_change,
    )


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C2-C5, C8-C10, C12 (with the GAN), C14 and C19 of notebook 03.

    Every claim but the sanity check C2 compares trained models, so it is decided with training seeds as
    the units (:func:`cflib.verdicts.seed_interval` of per-seed differences); with one seed it is
    undecided (:func:`cflib.verdicts.one_seed`), whatever that seed's test images say.

    Parameters
    ----------
    results : dict
        ``summary`` and ``images`` (:func:`soundness_study`; per-image values ``(seeds, images)``),
        ``models`` (VAE configuration names, the first being the Bernoulli beta=1 reference),
        ``gan_configs``, ``m``, ``cycles`` and ``rank_changes`` (:func:`rank_robustness`); optionally
        ``steps``, ``gan_steps`` and ``gan_lr``, the training settings C12's rule states.

    Returns
    -------
    pandas.DataFrame
        The rows of the recorded claims.
    """
    claims.require(results, ["summary", "images", "models", "gan_configs", "m", "cycles", "rank_changes"], "claims_03")
    summary, images, models, m, cycles, rank_changes = (
        results[k] for k in ("summary", "images", "models", "m", "cycles", "rank_changes")
    )
    run_gan = ("confounded_full_support", "yes") in [tuple(c) for c in results["gan_configs"]]
    t = _Table1Values(summary, images)
    n_seeds = t.n_seeds
    claims.record("rank_changes", {f"{i} | {c}": float(x) for (i, c), x in rank_changes.stack().items()})
    claims.record("training_seeds", n_seeds)
    vaes = [MODEL_LABELS[k] for k in models]
    b1 = MODEL_LABELS[models[0]]
    ne_means = _claim_c2(t, m, cycles)
    _claims_c3_c4(t, vaes, m, ne_means)
    rows = _vae_rows(summary, vaes)
    _claim_c5(t, rows)
    _claims_c8_c10(t, vaes, b1)
    keys = ["C2", "C3", "C4", "C5", "C8", "C9", "C10"]
    if run_gan:
        _claim_c12(t, results)
        keys.append("C12")
    _claim_c14(t, rank_changes)
    _claim_c19(t, rows, cycles)
    return claims.rows([*keys, "C14", "C19"])


# ----------------------------------------------------------------------------------------------------
# 04: shapes (Table 5) and the trade-offs (Tables 6-7, Figures 7, 8 and 11)
# ----------------------------------------------------------------------------------------------------
def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C15 (no exogenous noise), C16 (partial abduction), C17 and C17-nll (beta) and C18 (temperature) of notebook 04.

    Each is a property of trained models, decided with training seeds as the units (:func:`cflib.verdicts.seed_interval`
    of the per-seed estimates, each a mean over the test images); with one seed it is undecided (:func:`cflib.verdicts.one_seed`).

    Parameters
    ----------
    results : dict
        ``shapes_summary`` and ``shapes_images`` (:func:`shapes_study`), ``composition`` (:func:`table5`'s
        composition table), ``run_gan``, ``table6`` and ``table6_images`` (:func:`partial_abduction`; per-image
        values ``(seeds, images)`` throughout, a 1-d array being one seed's),
        ``table7`` and ``table7_images`` (:func:`beta_sweep`), ``betas``, ``levels``, ``fig8`` and
        ``fig8_images`` (:func:`temperature_sweep`) and ``temperatures``.

    Returns
    -------
    pandas.DataFrame
        The rows of C15, C16, C17, C17-nll and C18.
    """
    need = [
        "shapes_summary",
        "shapes_images",
        "composition",
        "run_gan",
        "table6",
        "table6_images",
        "table7",
        "table7_images",
        "betas",
        "levels",
        "fig8",
        "fig8_images",
        "temperatures",
    ]
    claims.require(results, need, "claims_04")
    s_summary, s_img, comp, table6, t6, table7, t7, fig8, f8 = (
        results[k]
        for k in (
            "shapes_summary",
            "shapes_images",
            "composition",
            "table6",
            "table6_images",
            "table7",
            "table7_images",
            "fig8",
            "fig8_images",
        )
    )
    betas, temperatures = list(results["betas"]), list(results["temperatures"])
    claims.record("table6", table6.round(3).to_dict())
    claims.record("table7", table7.round(3).to_dict())
    n_seeds = seed_array(next(iter(next(iter(t6.values())).values()))).shape[0]
    claims.record("training_seeds", n_seeds)
    seeds_change = (
        "decided with training seeds as units (issue 27): a t interval over the per-seed estimates, each the mean over the test "
        "images (or scenes), instead of one trained model's interval over its test images; with one seed the claim is undecided. "
        "The book scale trains 3 seeds (was 1)"
    )

    def note(d: vd.Decision) -> str:
        return seed_note(d, n_seeds)

    def model_rows(model: str, metric: str) -> pd.Series:
        return s_summary[(s_summary.model == model) & (s_summary.metric == metric)]["mean"]

    vae = s_img["VAE"]
    c1, c10 = (
        seed_array(vae["composition", "null", "image", 1, "none"]),
        seed_array(vae["composition", "null", "image", 10, "none"]),
    )
    band = 0.1 * float(c1.mean())
    parts = {
        "composition^(10) - composition^(1)": vd.decide_within(
            seed_diff(c10, c1, unit="test scenes"), -band, band, quantity="composition^(10) - composition^(1)"
        )
    }
    rev_keys = [k for k in vae if k[0] == "reversibility"]
    for key in rev_keys:
        parts[f"reversibility do({key[1]}) cycle {key[3]} - composition^(1)"] = vd.decide_within(
            seed_diff(vae[key], c1, unit="test scenes"),
            -2.5 * band,
            2.5 * band,
            quantity="reversibility - composition^(1)",
        )
    vae_c, vae_rev, vae_eff = comp.loc["VAE"], model_rows("VAE", "reversibility"), model_rows("VAE", "effectiveness")
    ours15 = f"VAE composition {vae_c[1]:.2f} -> {vae_c[10]:.2f}, reversibility {vae_rev.min():.2f}-{vae_rev.max():.2f}, effectiveness >= {vae_eff.min():.1f} %"
    if results["run_gan"]:
        ours15 += f"; GAN composition {comp.loc['GAN'][1]:.2f} -> {comp.loc['GAN'][10]:.2f}, effectiveness >= {model_rows('GAN', 'effectiveness').min():.1f} %"
    fails = [k for k, d in parts.items() if d.verdict != vd.REPRODUCED]
    claim(
        "C15",
        "With no exogenous noise, a VAE's composition^(1) = composition^(10) = reversibility (3D Shapes, Table 5).",
        paper="1.62 / 1.62 / 1.62; GAN 5.11 -> 5.16, effectiveness >= 98.8 %",
        ours=ours15,
        decision=(
            d15 := seeded(
                all_hold(
                    parts.values(),
                    rule=f"composition^(10) within 10 % ({band:.2f}) of composition^(1), every reversibility within 25 %, "
                    "the same VAE per training seed",
                ),
                n_seeds,
            )
        ),
        evidence=f"{parts['composition^(10) - composition^(1)'].interval}"
        + (
            f"; not inside: {'; '.join(f'{k}: {parts[k].interval}' for k in fails)}"
            if fails
            else f"; all {len(rev_keys)} reversibility intervals inside"
        ),
        undecided=note(d15),
        change=seeds_change,
    )
    lo_k, hi_k = min(k for k in t6 if k >= 1), max(t6)
    parts = {
        "composition": vd.decide_below(
            seed_diff(t6[hi_k]["composition l1"], t6[lo_k]["composition l1"]),
            0,
            quantity=f"composition, k = {hi_k} - k = {lo_k}",
        ),
        "reversibility": vd.decide_below(
            seed_diff(t6[hi_k]["reversibility l1"], t6[lo_k]["reversibility l1"]),
            0,
            quantity=f"reversibility, k = {hi_k} - k = {lo_k}",
        ),
        "digit accuracy": vd.decide_below(
            seed_diff(t6[hi_k]["digit accuracy (%)"], t6[lo_k]["digit accuracy (%)"]),
            0,
            quantity=f"digit accuracy, k = {hi_k} - k = {lo_k}",
        ),
    }
    claim(
        "C16",
        "Partial abduction: abducting more latent levels lowers composition and reversibility distances and lowers effectiveness.",
        paper="smiling composition 60.1 -> 3.66, F1 0.984 -> 0.848 (k = 1 -> 42)",
        ours=f"k = {lo_k} -> {hi_k}: composition {table6['composition l1'][lo_k]:.1f} -> {table6['composition l1'][hi_k]:.1f}, reversibility "
        f"{table6['reversibility l1'][lo_k]:.1f} -> {table6['reversibility l1'][hi_k]:.1f}, accuracy {table6['digit accuracy (%)'][lo_k]:.1f} -> {table6['digit accuracy (%)'][hi_k]:.1f} %",
        decision=(
            d16 := seeded(
                all_hold(
                    parts.values(),
                    rule=f"all three fall from k = {lo_k} (the paper's fewest abducted layers) to all {hi_k}, "
                    "the same hierarchical VAE per training seed",
                ),
                n_seeds,
            )
        ),
        evidence="; ".join(f"{k}: {d.interval}" for k, d in parts.items()),
        undecided=note(d16),
        change=seeds_change,
    )
    in_range = sorted(b for b in betas if 1 <= b <= 10)
    if len(in_range) < 2:
        for key, what in (("C17", "the trade-off"), ("C17-nll", "the bound")):
            claim(
                key,
                f"Raising beta from 1 (within 1-10) worsens {what}.",
                paper="beta 1 -> 10",
                ours=f"betas {betas}: fewer than two in [1, 10]",
                verdict=vd.UNDECIDED,
                evidence="no comparison within the paper's range",
                note="run at least two betas in [1, 10] (the full scale runs 1, 3, 5, 7, 10)",
                change=seeds_change,
            )
        return claims.rows(["C15", "C16", "C17", "C17-nll", "C18"])
    b0, rest = in_range[0], in_range[1:]
    parts = {}
    for b in rest:
        parts[f"composition beta {b:g}"] = vd.decide_above(
            seed_diff(t7[b]["composition l1"], t7[b0]["composition l1"]),
            0,
            quantity=f"composition, beta {b:g} - {b0:g}",
        )
        parts[f"reversibility beta {b:g}"] = vd.decide_above(
            seed_diff(t7[b]["reversibility l1"], t7[b0]["reversibility l1"]),
            0,
            quantity=f"reversibility, beta {b:g} - {b0:g}",
        )
        parts[f"digit accuracy beta {b:g}"] = vd.decide_above(
            seed_diff(t7[b]["digit accuracy (%)"], t7[b0]["digit accuracy (%)"]),
            0,
            quantity=f"digit accuracy, beta {b:g} - {b0:g}",
        )
    c7, a7 = table7["composition l1"], table7["digit accuracy (%)"]
    claim(
        "C17",
        f"Raising beta above {b0:g} (within the paper's 1-10) raises the composition and reversibility distances but raises effectiveness: a trade-off.",
        paper="composition 1.79 -> 12.21, reversibility 2.48 -> 10.05, F1 0.536 -> 0.952 (beta 1 -> 10)",
        ours=f"composition {c7[b0]:.2f} -> {c7[rest[-1]]:.2f}, reversibility {table7['reversibility l1'][b0]:.2f} -> {table7['reversibility l1'][rest[-1]]:.2f}, "
        f"accuracy {a7[b0]:.1f} -> {a7[rest[-1]]:.1f} % (beta {b0:g} -> {rest[-1]:g})",
        decision=(
            d17 := seeded(
                all_hold(
                    parts.values(),
                    rule=f"every beta in ({b0:g}, 10] worse than beta = {b0:g} on composition and reversibility and "
                    "better on effectiveness, the VAEs of each training seed",
                ),
                n_seeds,
            )
        ),
        evidence="; ".join(f"{k}: {d.verdict} {d.interval}" for k, d in parts.items()),
        undecided=f"at beta = {b0:g} this substitute VAE already reads the digit at {a7[b0]:.1f} %, so the accuracy has little room to rise; "
        + note(d17)
        + "; the paper-sized run is the full scale (28x28, beta 1, 3, 5, 7, 10)",
        change=seeds_change,
    )
    nll = {
        b: vd.decide_above(
            seed_diff(t7[b]["NLL bound (bits/dim)"], t7[b0]["NLL bound (bits/dim)"]),
            0,
            quantity=f"NLL bound, beta {b:g} - {b0:g}",
        )
        for b in rest
    }
    claim(
        "C17-nll",
        f"Beta = {b0:g} gives the best likelihood bound within the paper's 1-10: the NLL bound (bits/dim) is higher at every larger beta.",
        paper="2.874 -> 4.446 bits/dim (beta 1 -> 10)",
        ours=" -> ".join(f"{table7['NLL bound (bits/dim)'][b]:.3f}" for b in in_range)
        + f" bits/dim (beta {b0:g} -> {rest[-1]:g})",
        decision=(
            dnll := seeded(
                all_hold(
                    nll.values(),
                    rule=f"the negative ELBO (one-sample estimate per image) at every beta in ({b0:g}, 10] above that at "
                    f"beta = {b0:g}, the VAEs of each training seed",
                ),
                n_seeds,
            )
        ),
        evidence="; ".join(f"beta {b:g}: {d.interval}" for b, d in nll.items()),
        undecided=note(dnll),
        change=seeds_change,
    )
    t_lo, t_hi = min(temperatures), max(temperatures)

    def loss(col: str) -> np.ndarray:
        return seed_array(f8[t_hi][col]) - seed_array(f8[t_lo][col])

    back, cf = loss("cycled-back digit accuracy (%)"), loss("digit accuracy (%)")
    parts = {
        "cycled back hurt": vd.decide_above(
            seed_diff(back), 0, quantity=f"cycled-back accuracy, t = {t_hi:g} - t = {t_lo:g}"
        ),
        "hurt the most": vd.decide_above(seed_diff(back, cf), 0, quantity="cycled-back loss - counterfactual loss"),
    }
    claim(
        "C18",
        "Very low prior temperatures hurt the effectiveness of cycled-back images most (Figure 8).",
        paper="qualitative",
        ours=f"accuracy lost at t = {t_lo:g} against t = {t_hi:g}: counterfactual {cf.mean():.1f} points, cycled back {back.mean():.1f} points",
        decision=(
            d18 := seeded(
                all_hold(
                    parts.values(),
                    rule=f"the cycled-back accuracy falls from t = {t_hi:g} to t = {t_lo:g}, and by more than the "
                    "counterfactual accuracy, the same hierarchical VAE (k = 1) per training seed",
                ),
                n_seeds,
            )
        ),
        evidence="; ".join(f"{k}: {d.interval}" for k, d in parts.items()) + " (k = 1)",
        undecided=note(d18),
        change=seeds_change,
    )
    return claims.rows(["C15", "C16", "C17", "C17-nll", "C18"])


# ----------------------------------------------------------------------------------------------------
# 05: metrics against the truth (beyond the paper)
# ----------------------------------------------------------------------------------------------------
def _spearman(rows: np.ndarray) -> float:
    return float(stats.spearmanr(rows[:, 0], rows[:, 1]).statistic)


def claims_05(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claim B1 of notebook 05 (the book's own finding): jointly, the three metrics track the true counterfactual error.

    The rank correlation of each seed's zoo is one unit: a t interval over the training seeds. With one seed,
    a bootstrap over that zoo's functions, and the claim is undecided (:func:`cflib.verdicts.one_seed`).

    Parameters
    ----------
    results : dict
        ``tables``: seed -> :func:`true_error_table` (:func:`truth_study`).

    Returns
    -------
    pandas.DataFrame
        The row of B1.
    """
    claims.require(results, ["tables"], "claims_05")
    tables = dict(results["tables"])
    if not tables:
        raise ValueError("claims_05 needs at least one seed's table in results['tables']")
    corr = seed_correlations(tables)
    claims.record("spearman_metric_vs_truth", {f"{k} | {mtr}": float(v) for (k, mtr), v in corr["mean"].items()})
    n_seeds, first = len(tables), next(iter(tables.values()))
    n = int(first["model"].nunique())
    claims.record("training_seeds", n_seeds)
    parts, single = {}, {}
    for k in PARENTS:
        rho = corr.loc[(k, "combined rank")].drop("mean").to_numpy(dtype=float)
        if n_seeds >= 2:
            within = f"each the Spearman rho over its zoo's {n} counterfactual functions"
            if np.isfinite(rho).all():
                iv = vd.mean_interval(rho, unit="training seeds")
                iv = vd.Interval(iv.estimate, iv.low, iv.high, f"{iv.method}, {within}")
            else:  # a zoo whose true error (or combined rank) is constant has no rank correlation
                iv = vd.Interval(
                    float("nan"),
                    float("nan"),
                    float("nan"),
                    f"t interval, {n_seeds} training seeds, {within} (undefined for {int((~np.isfinite(rho)).sum())} seeds)",
                )
        else:
            sub = first[first.intervention == k]
            with warnings.catch_warnings():
                warnings.simplefilter(
                    "ignore"
                )  # a resample with a constant column has no correlation: the interval is then undefined
                iv = vd.bootstrap_interval(
                    sub[["combined rank", "true error"]].to_numpy(),
                    _spearman,
                    n_boot=1000,
                    seed=0,
                    unit="counterfactual functions",
                )
        parts[k] = vd.decide_above(iv, 0, quantity=f"Spearman rho of the combined rank with the true error, do({k})")
        single[k] = max(corr.loc[(k, mtr), "mean"] for mtr in TRUTH_METRICS)
    d = seeded(
        all_hold(
            parts.values(),
            rule="the combined rank's Spearman correlation with the true error positive under both interventions, one zoo per training seed",
        ),
        n_seeds,
    )
    claim(
        "B1",
        "Beyond the paper: jointly, the three soundness metrics track the true counterfactual error "
        "(positive rank correlation of the combined rank with the true error), although no single metric need.",
        paper="not measurable in the paper (no true counterfactuals)",
        ours="; ".join(
            f"do({k}): combined rho {parts[k].interval.estimate:.2f}, best single metric rho {single[k]:.2f}"
            for k in PARENTS
        )
        + f" (mean over {n_seeds} training seed{'s' if n_seeds > 1 else ''})",
        decision=d,
        evidence="; ".join(f"do({k}): {p.interval}" for k, p in parts.items()),
        undecided=(
            seed_note(d, n_seeds)
            + f"; each zoo has {n} functions (the functions of one hierarchical VAE are not independent)"
        ),
        kind="book's own finding",
        change="the book's own finding (issue 27): the paper cannot measure it (no true counterfactuals) and does not state it, so it no longer "
        "counts as a reproduction; decided with training seeds as units, a t interval over the per-seed rank correlations of one zoo "
        "per seed (was a bootstrap over the functions of one zoo trained with one seed); the book scale trains 3 seeds",
    )
    return claims.rows(["B1"])
