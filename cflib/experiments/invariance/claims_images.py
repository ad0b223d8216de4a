"""Claims of the toy chest X-ray notebooks 04, 05 and 06: one function per notebook.

The helpers and the paper's words they share with :mod:`.claims` are in :mod:`.decisions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import claims
from ... import verdicts as vd
from ...data.toy_cxr import DISEASES, GROUPS
from .decisions import (
    ALMOST_ALL,
    HIGH,
    HIGH_ECA,
    IN_SUM,
    MOST,
    NOTES_SIGN,
    OWN,
    OWN_CHANGE,
    alignment_parts,
    count,
    difference_interval,
    join_parts,
    undecided_note,
)

_FIG3_WORDS = "from the CIT-LR method exhibit higher correlation and lower variance than those of EO and DP."


_PRESERVE = (
    "generates high-fidelity counterfactual images with perturbed sensitive feature while preserving "
    "disease-related features"
)


#: The book's DONE-1 bar for an effective counterfactual: the group predictor follows the intervention 20 points
#: more often than chance (one of the three groups).
_EFFECTIVE = 1 / len(GROUPS) + 0.2


#: Effectiveness may fall by at most this many points when the forward noise is lowered (C11's condition before
#: issue 20 dropped it; restored by issue 27).
_EFFECTIVE_DROP = 10.0


#: The authors' lambda of the disentangler phi (App. H.2 as the notebook reads it; notes §3.3: "chosen by random search").
PAPER_MINE_LAMBDA = 1e-3


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims C13 (the group is predictable, Table 6) and C14 (prevalence tests, Figs. 6-7) of notebook 04.

    Both hold by construction of the toy data (a visible group trace, group-dependent prevalence), so
    they are sanity checks of the substitute data.

    Parameters
    ----------
    results : mapping
        ``auc`` (:func:`one_vs_rest_auc`), ``prevalence`` (:func:`cflib.data.toy_cxr.prevalence_table`),
        ``n_test``.

    Returns
    -------
    pandas.DataFrame
    """
    auc, table, n_test = claims.require(results, ["auc", "prevalence", "n_test"])
    c13 = join_parts(
        {
            str(g): vd.decide_above(
                vd.normal_interval(float(r.AUC), float(r.sd), method=f"bootstrap standard error over {n_test} images"),
                0.94,
                inclusive=True,
                quantity=f"AUC of {g}",
            )
            for g, r in auc.iterrows()
        },
        "every group",
    )
    claims.claim(
        "C13",
        "The sensitive attribute is predictable from the image (race predictor ROC-AUC >= 0.94, Table 6).",
        paper="AUC 0.973-0.981 (known races)",
        ours=round(float(auc["AUC"].min()), 4),
        decision=c13,
        kind="sanity check",
        quote="Table 6: ROC AUC score of the protected attribute predictor.",
        source="App. I, Table 6",
        evidence=f"one-vs-rest AUC of a small CNN on {n_test} held-out toy images, each group with its bootstrap standard error. "
        "The toy group trace is visible by construction, so this checks the substitute data, not the paper.",
    )
    p_assoc = table.loc[["cardiomegaly", "effusion"], "p-value"]
    p_cons = float(table.loc["consolidation", "p-value"])
    c14 = join_parts(
        {
            d: vd.decide_below(
                vd.exact(float(p), method=f"chi-square p-value on {n_test} images"), 0.05, quantity=f"p of {d}"
            )
            for d, p in p_assoc.items()
        },
        "the associated diseases",
    )
    claims.claim(
        "C14",
        "Chi-square tests of group vs disease are significant for the associated diseases (Figs. 6-7).",
        paper="significant for all five diseases",
        ours={"cardiomegaly": float(p_assoc.iloc[0]), "effusion": float(p_assoc.iloc[1]), "consolidation": p_cons},
        decision=c14,
        kind="sanity check",
        quote="the racial attribute is significantly correlated with all the five inspected diseases",
        source="App. F.2, Fig. 6",
        evidence=f"chi-square test of independence on {n_test} held-out images. The toy prevalences differ by group by construction; "
        f"consolidation carries no association (p = {p_cons:.2g}), the toy counterpart of the paper's invariant column.",
    )
    return claims.rows(["C13", "C14"])


def _done1(check: pd.DataFrame, name: str) -> tuple[vd.Decision, dict, str, int]:
    """DONE-1's parts for one generator: effectiveness, disease status kept and the disease-region error, per target group."""
    sub = check.xs(name, level=0)
    parts = {}
    for g, r in sub.iterrows():
        n = int(r["images"])
        parts[f"{g} effectiveness"] = vd.decide_above(
            vd.binomial_interval(count(r["effectiveness %"], n), n, unit="images"), _EFFECTIVE, quantity="effectiveness"
        )
        pairs = n * len(DISEASES)
        kept = difference_interval(
            count(r["disease kept %"], pairs),
            pairs,
            count(r["disease kept %, true cf"], pairs),
            pairs,
            unit="image-disease pairs",
        )
        parts[f"{g} disease kept"] = vd.decide_above(
            kept, -0.1, inclusive=True, quantity="disease kept, generated minus true cf"
        )
        parts[f"{g} disease region"] = vd.decide_below(
            vd.normal_interval(r["L1 margin"], r["L1 margin se"], method=f"standard error over {n} images"),
            0.0,
            quantity="L1 to truth minus the midpoint of floor and random patient",
        )
    n_min = int(sub["images"].min())
    ours = {
        "min effectiveness %": round(float(sub["effectiveness %"].min()), 1),
        "min disease kept %": round(float(sub["disease kept %"].min()), 1),
        "max disease-region L1": round(float(sub["disease-region L1 to truth"].max()), 2),
        "min random-patient L1": round(float(sub["random patient"].min()), 2),
    }
    evidence = (
        f"{name}, per target group ({sub['images'].astype(int).tolist()} images): effectiveness above chance (1/3) by 20 "
        f"points; the disease predictors keep the patient's disease status at most 10 points below their rate on the true "
        f"counterfactual (generated: {sub['disease kept %'].round(1).tolist()}, truth: {sub['disease kept %, true cf'].round(1).tolist()}); "
        f"and the disease-region error to the truth is closer to the autoencoder floor ({float(sub['autoencoder floor'].iloc[0]):.2f}) "
        f"than to a random patient's (generated: {sub['disease-region L1 to truth'].round(2).tolist()}, random patient: "
        f"{sub['random patient'].round(2).tolist()})."
    )
    return join_parts(parts, "every part for every target group"), ours, evidence, n_min


def claims_05(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims DONE-1 (CLDM+D and the paper's CLDM), DONE-1-present, C10, C11 and C12 of notebook 05.

    Also records the judges' accuracy, the counterfactual checks, the MI bounds, the generation
    quality table and the variance control. Each stage is a function of its own: the recorded values,
    the three DONE-1 claims, C10, C11 and C12.

    Parameters
    ----------
    results : mapping
        ``judge_accuracy`` (:func:`judge_accuracy`), ``check`` (:func:`check_counterfactuals`),
        ``mine`` (:func:`disentangler_study`), ``quality`` (:func:`quality_table`),
        ``variance`` (:func:`variance_control`), ``n_test``, ``n_variance``, ``t_star``, ``mine_lambda``
        and ``mi_steps``.

    Returns
    -------
    pandas.DataFrame
    """
    acc, check, mine, quality, variance, n_test, n_variance, t_star, mine_lambda, mi_steps = claims.require(
        results,
        [
            "judge_accuracy",
            "check",
            "mine",
            "quality",
            "variance",
            "n_test",
            "n_variance",
            "t_star",
            "mine_lambda",
            "mi_steps",
        ],
    )
    mi_before, mi_after, shift = mine["mi_before"], mine["mi_after"], mine["shift"]
    _record_05(acc, check, mi_before, mi_after, quality, variance)
    _claim_done1(check)
    _claim_generation_ordering(check, quality)
    _claim_variance_control(variance, n_variance, t_star)
    _claim_disentangler(mi_before, mi_after, shift, mine_lambda, mi_steps)
    return claims.rows(["DONE-1", "DONE-1-present", "DONE-1-paper-CLDM", "C10", "C11", "C12"])


def _record_05(
    acc: pd.Series, check: pd.DataFrame, mi_before: Any, mi_after: Any, quality: pd.DataFrame, variance: pd.DataFrame
) -> None:
    """Record notebook 05's values: the judges' accuracy, the counterfactual checks, the MI bounds, the quality and the variance control."""
    claims.record("apred_test_accuracy", float(acc["group predictor"]))
    claims.record("cf_check", {f"{m}|{g}": row for (m, g), row in check.round(3).to_dict(orient="index").items()})
    claims.record("mi_before", mi_before.statistic)
    claims.record("mi_after", mi_after.statistic)
    claims.record(
        "generation_quality", {f"{m}|{c[0]}|{c[1]}": float(v) for m, row in quality.iterrows() for c, v in row.items()}
    )
    claims.record("variance_control", variance.round(4).to_dict())


def _claim_done1(check: pd.DataFrame) -> None:
    """DONE-1 (CLDM+D), DONE-1-present and DONE-1-paper-CLDM: effective counterfactuals that keep the disease status."""
    full = "notebooks/params/full.yaml runs 1500 test images"
    done1_source = "Sec. 1 (contributions); the bars (20 points above chance, 10 points of the true counterfactual's disease rate) are the book's DONE-1 bar, not the paper's"
    d, ours, evidence, n_min = _done1(check, "CLDM+D")
    claims.claim(
        "DONE-1",
        "Counterfactual images move the attribute predictor to the intended group well above chance while the disease "
        "region stays close to the true counterfactual.",
        paper="effectiveness 83-93% (Tables 8, 10); no ground truth",
        ours=ours,
        decision=d,
        quote=_PRESERVE,
        source=done1_source,
        evidence=evidence,
        note=undecided_note(d, _EFFECTIVE, n_min, "images per target group", full),
        kind=OWN,
        change="the book's own finding, not a reproduction (issue 38): it reads the book's own generator (CLDM+D, the "
        "CLDM with the disease as a condition) against the book's bars; the paper's CLDM under the same bar is "
        "DONE-1-paper-CLDM, the reproduction",
    )
    sub = check.xs("CLDM+D", level=0)
    present = {
        f"{g}, {dis}": vd.decide_above(
            vd.binomial_interval(
                count(r[f"present kept %, {dis}"], int(r[f"present n, {dis}"])),
                int(r[f"present n, {dis}"]),
                unit="patients with the disease",
            ),
            0.9,
            inclusive=True,
            quantity="share of the disease still found",
        )
        for g, r in sub.iterrows()
        for dis in DISEASES
    }
    d_present = join_parts(present, "every target group and disease")
    n_present = int(sub[[f"present n, {dis}" for dis in DISEASES]].min().min())
    claims.claim(
        "DONE-1-present",
        "Every disease a patient has is still found in at least 90% of their counterfactuals, for every target group.",
        paper="not measured (no ground truth)",
        ours=sub[[f"present kept %, {dis}" for dis in DISEASES]].round(1).to_dict(orient="index"),
        decision=d_present,
        quote=_PRESERVE,
        source="Sec. 1 (contributions); the 90% bar is the book's, not the paper's",
        evidence="CLDM+D; share of patients with the disease whose counterfactual the disease predictor still calls positive, per "
        f"target group and disease, each with its Clopper-Pearson interval (the true counterfactuals: "
        f"{sub['disease kept %, true cf'].round(1).tolist()} overall).",
        note=undecided_note(d_present, 0.9, n_present, "patients with the rarest disease per target group", full),
        kind=OWN,
        change="the book's own finding, not a reproduction (issue 38): the book's generator (CLDM+D) and the book's 90% "
        "bar; the paper measures no disease preservation",
    )
    d, ours, evidence, n_min = _done1(check, "CLDM")
    claims.claim(
        "DONE-1-paper-CLDM",
        "The same bar for the paper's CLDM, conditioned on the group alone and trained on the observed data.",
        paper="effectiveness 83-93% (Tables 8, 10); disease preservation not measured",
        ours=ours,
        decision=d,
        quote=_PRESERVE,
        source=done1_source,
        evidence=evidence,
        note=undecided_note(
            d,
            _EFFECTIVE,
            n_min,
            "images per target group",
            "more test images do not fit the book's budget (all six generators of this notebook run on them); " + full,
        ),
        kind="reproduction",
    )


def _claim_generation_ordering(check: pd.DataFrame, quality: pd.DataFrame) -> None:
    """C10: the orderings of Tables 7-11 (effectiveness, FD and composition) between the generators."""
    groups = [c for c in quality["effectiveness %"].columns if c != "all"]
    vae_names = [m for m in quality.index if m.startswith("VAE")]
    images = check.xs("CLDM", level=0)["images"].astype(int)
    n_eff = int(images.sum())

    def eff_k(model):
        return sum(
            count(quality.loc[model, ("effectiveness %", g)], int(n)) for g, n in zip(groups, images, strict=True)
        )

    def eff_gt(a, b):
        return vd.decide_above(
            difference_interval(eff_k(a), n_eff, eff_k(b), n_eff, unit="counterfactuals"),
            0.0,
            quantity=f"effectiveness {a} - {b}",
        )

    def lower(
        metric, a, b
    ):  # a's metric below b's, on a normal interval of the difference (independent errors: conservative)
        m, s = (
            quality.loc[[a, b], (metric, "all")].to_numpy(float),
            quality.loc[[a, b], (f"{metric} se", "all")].to_numpy(float),
        )
        return vd.decide_below(
            vd.normal_interval(m[0] - m[1], float(np.hypot(*s)), method="standard errors of the two models"),
            0.0,
            quantity=f"{metric} {a} - {b}",
        )

    parts = {
        "effectiveness DLDM > CLDM": eff_gt("DLDM", "CLDM"),
        **{f"effectiveness CLDM > {v}": eff_gt("CLDM", v) for v in vae_names},
        "FD DLDM < CLDM": lower("FD", "DLDM", "CLDM"),
        **{f"FD CLDM < {v}": lower("FD", "CLDM", v) for v in vae_names},
        **{f"composition {m} < CLDM": lower("composition L1", m, "CLDM") for m in [*vae_names, "DLDM"]},
    }
    eff_cols = quality["effectiveness %"][groups].mean(axis=1)
    c10 = vd.one_seed(join_parts(parts, "every ordering of Tables 7-11"))
    claims.claim(
        "C10",
        "Generation ordering: effectiveness DLDM > CLDM > beta-VAEs; FD DLDM < CLDM < beta-VAEs; composition worst for the CLDM, better for the DLDM.",
        paper="eff 88.7-93.3 > 83.5-89.1 > 76.8-87.4; FID 21.8 < 22.1 < 23.9-25.1; composition CLDM 790-816 vs 230-350",
        ours={
            "effectiveness": eff_cols.round(1).to_dict(),
            "FD": quality[("FD", "all")].round(3).to_dict(),
            "composition": quality[("composition L1", "all")].round(2).to_dict(),
        },
        decision=c10,
        quote="Overall we see significant improvements in the counterfactual effectiveness and the FID scores for DLDM.",
        source="App. I, Tables 7-11",
        change="issue 38: the generators are trained models compared on one training seed each, so the claim is undecided "
        "(cflib.verdicts.one_seed) whatever the test images read. Before: the old rule could only give 'not reproduced' or "
        "'inconclusive' and left out the composition it reported; it is now every ordering the tables state (effectiveness, "
        "FD, and composition worst for the CLDM), each on an interval",
        note="Undecided: one training seed of each generator; the orderings need two or more training seeds of every "
        "generator (seed_interval over the per-seed differences). With lambda = 1e-3 the DLDM-against-CLDM parts stay "
        "undecided at any size (C12).",
        evidence=f"toy scale, one seed; effectiveness pooled over target groups ({n_eff} counterfactuals per model), FD with a "
        "bootstrap standard error over images, composition with its standard error over images. With lambda = 1e-3 phi moves "
        "each latent by 1e-3 (C12), so DLDM and CLDM cannot differ: those parts stay undecided at any size.",
        kind="reproduction",
    )


def _claim_variance_control(variance: pd.DataFrame, n_variance: int, t_star: int) -> None:
    """C11: less forward noise gives less variable counterfactuals without a loss of quality, still effective."""
    v = variance
    lo_t, hi_t = v.index[1], v.index[0]
    conservative = f"standard errors over {n_variance} images (independent errors: conservative)"
    diff = {
        m: vd.normal_interval(
            float(v[m].iloc[1] - v[m].iloc[0]),
            float(np.hypot(v[f"{m}, se"].iloc[0], v[f"{m}, se"].iloc[1])),
            method=conservative,
        )
        for m in ("pixel sd across draws (0-255)", "L1 to truth (0-255)", "effectiveness %")
    }
    eff_lo = vd.normal_interval(
        float(v["effectiveness %"].iloc[1]),
        float(v["effectiveness %, se"].iloc[1]),
        method=f"standard error over {n_variance} images",
    )
    # part -> (decision, boundary): the boundary gives the deciding size of an undecided part
    parts11 = {
        "less variance": (
            vd.decide_below(diff["pixel sd across draws (0-255)"], 0.0, quantity=f"pixel sd at {lo_t} minus at {hi_t}"),
            0.0,
        ),
        "quality not worse": (
            vd.decide_below(
                diff["L1 to truth (0-255)"],
                0.0,
                inclusive=True,
                quantity=f"L1 to the true counterfactual at {lo_t} minus at {hi_t}",
            ),
            0.0,
        ),
        "still effective": (
            vd.decide_above(
                diff["effectiveness %"],
                -_EFFECTIVE_DROP,
                inclusive=True,
                quantity=f"effectiveness (points) at {lo_t} minus at {hi_t}",
            ),
            -_EFFECTIVE_DROP,
        ),
    }
    # the book's DONE-1 bar (issue 27) is reported, not decided on: the paper's words do not state it (issue 38)
    book_bar = vd.decide_above(eff_lo, 100 * _EFFECTIVE, quantity=f"effectiveness (%) at {lo_t}")
    c11 = vd.one_seed(
        join_parts(
            {k: d for k, (d, _) in parts11.items()},
            "lower variance without a loss of quality, the counterfactuals still effective",
        )
    )
    open11 = next((k for k, (d, _) in parts11.items() if d.verdict == vd.UNDECIDED), None)
    c11_images = join_parts({k: d for k, (d, _) in parts11.items()}, "the parts over this seed's images")
    claims.claim(
        "C11",
        "Less forward noise gives less variable counterfactuals without a significant loss of quality, and they still change the group.",
        paper="qualitative (App. H.1)",
        ours=v.drop(columns=[c for c in v.columns if c.endswith(", se")]).round(2).to_dict(orient="index"),
        decision=c11,
        quote="Experiments show that diffusion models achieves lower sample variance without significantly compromising "
        "the quality of the generated images.",
        source="App. H.1",
        change="issue 38: one trained diffusion model (one training seed) at two noise levels is undecided "
        "(cflib.verdicts.one_seed), and the chapter's DONE-1 bar for an effective counterfactual, which the book added and the "
        f"paper does not state, no longer decides it (its part reads {book_bar.verdict} in the evidence). Before: "
        "an earlier rule restored the effectiveness condition a rule before it had dropped ('the effectiveness must stay within "
        f"{_EFFECTIVE_DROP:g} points'), now on an interval, and added the chapter's DONE-1 bar for an effective counterfactual "
        f"({100 * _EFFECTIVE:.1f}%): the quality of a counterfactual image (App. H.1: the reduced noise must 'fit our counterfactual "
        "demand') includes carrying the new group, and the distance to the true counterfactual alone rewards an image that changes "
        "nothing, since the truth differs from the input only in the group's trace. The rule before had kept only the sample variance and "
        "the distance to the true counterfactual",
        evidence=f"3 stochastic abductions of {n_variance} images at t* = {t_star} and {max(1, t_star // 4)}; each quantity per image "
        f"(pixel sd across the draws, L1 to the true counterfactual, share of the draws in the target group), its standard error over "
        f"images. Effectiveness {v['effectiveness %'].iloc[0]:.0f}% -> {v['effectiveness %'].iloc[1]:.0f}%: it may fall by at most "
        f"{_EFFECTIVE_DROP:g} points. The book's bar (above chance, 1/{len(GROUPS)}, by 20 points; not the paper's): "
        f"{book_bar.verdict} at {book_bar.interval}.",
        note="Undecided: one training seed of the diffusion model; two or more training seeds with seed_interval over the "
        "per-seed differences would decide it. Over this seed's images: "
        + (
            undecided_note(
                c11_images,
                parts11[open11][1] if open11 else 0.0,
                n_variance,
                "images",
                "notebooks/params/full.yaml runs 200",
            )
            or f"{c11_images.verdict}."
        ),
        kind="reproduction",
    )


def _claim_disentangler(mi_before: Any, mi_after: Any, shift: np.ndarray, mine_lambda: float, mi_steps: int) -> None:
    """C12: the disentangler lowers the MINE bound on the group's information in the latents."""
    null_sd = [
        float(np.std(m.null, ddof=1)) if len(getattr(m, "null", ())) > 1 else np.nan for m in (mi_before, mi_after)
    ]
    iv12 = (
        vd.normal_interval(
            mi_before.statistic - mi_after.statistic,
            float(np.hypot(null_sd[0], null_sd[1])),
            method="held-out evaluation noise: sd of each bound's permutation null (critic training noise not included)",
        )
        if np.all(np.isfinite(null_sd))
        else vd.Interval(mi_before.statistic - mi_after.statistic, np.nan, np.nan, "no permutation null")
    )
    c12 = vd.decide_above(iv12, 0.0, quantity="MI bound of z0 minus MI bound of phi(z0)")
    shown12 = (
        f"{iv12.estimate:.4f} [{iv12.low:.4f}, {iv12.high:.4f}]"
        if iv12.defined
        else f"{iv12.estimate:.4f} (undefined: {iv12.method})"
    )
    if mine_lambda <= PAPER_MINE_LAMBDA:  # the authors' lambda: phi is the identity up to a shift of norm lambda
        decided12: dict[str, Any] = {
            "verdict": vd.NOT_CHECKABLE,
            "rule": f"given by hand: at the authors' lambda ({PAPER_MINE_LAMBDA:g}) or below, the two bounds estimate the same "
            f"information, so no size decides it (with a larger lambda: {c12.rule})",
            "note": f"Not checkable at any size: with lambda = {mine_lambda:g} (the authors' value is {PAPER_MINE_LAMBDA:g}) phi moves "
            f"every latent by exactly lambda (mean ||phi(z) - z|| = {float(shift.mean()):.2g}), so the information about the group "
            "in phi(z0) is that in z0: the two bounds estimate the same quantity and any difference between them is the "
            "critics' noise, which the interval leaves out. C10's DLDM-against-CLDM parts stay undecided for the same reason.",
        }
    else:
        decided12 = {
            "decision": c12,
            "note": "Undecided: the drop's interval straddles 0; it narrows with more training latents "
            "(notebooks/params/full.yaml trains on 20000 images)."
            if c12.verdict == vd.UNDECIDED
            else "",
        }
    claims.claim(
        "C12",
        "The disentangler lowers the MINE bound on I(phi(z0); A) below I(z0; A).",
        paper="implied by Sec. 3.3 (no number)",
        ours={
            "MI z0": round(mi_before.statistic, 4),
            "MI phi(z0)": round(mi_after.statistic, 4),
            "||phi(z)-z||": float(shift.mean()),
        },
        quote="to disentangle the CLDM representation vector from the chosen conditioning attribute",
        source="Sec. 3.3",
        change=f"issue 27: not checkable here at the authors' lambda ({PAPER_MINE_LAMBDA:g}) or below, where phi moves every latent by "
        "exactly lambda and no size decides the claim (its own note said so while the verdict read 'undecided at this scale'); a "
        "larger lambda is still decided on the drop's interval above 0, which replaced (issue 20) a hand-set drop of 0.05 nats",
        evidence=f"held-out DV bounds with fresh critics ({mi_steps} steps; permutation p {mi_before.pvalue:.2g} and {mi_after.pvalue:.2g}); "
        f"drop of the bound {shown12} ({iv12.method}).",
        **decided12,
        kind="reproduction",
    )


def _group_rate(audit: pd.DataFrame, mask: pd.Series, test: str, alpha: float, unit: str) -> vd.Interval:
    return vd.binomial_interval(int((audit.loc[mask, f"p {test}"] < alpha).sum()), int(mask.sum()), unit=unit)


#: The generator whose CIT-LR the notebook-06 claims read after DONE-2.
_CIT_06 = "CIT-LR[CLDM+D]"
#: Where notebook 06 runs a larger zoo (for an undecided claim's note).
_FULL_06 = "notebooks/params/full.yaml trains 720 classifiers"


def claims_06(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims DONE-2 (CLDM+D, the paper's CLDM, the true counterfactuals), C6, C5, C9, C15 and C15-universal of notebook 06.

    Also records the rejection rates.

    Parameters
    ----------
    results : mapping
        ``audit`` (:func:`audit_cnn_zoo`), ``rates`` (:func:`rejection_rates`), ``alpha``, ``n_test``,
        ``rhos``, ``n_zoo`` (number of classifiers) and ``seed``.

    Returns
    -------
    pandas.DataFrame
    """
    audit, rates, alpha, n_test, rhos, n_zoo, seed = claims.require(
        results, ["audit", "rates", "alpha", "n_test", "rhos", "n_zoo", "seed"]
    )
    claims.record("rejection_rates", {f"{a}|{b}": r["rate"] for (a, b), r in rates.iterrows()})
    _claims_done2(audit, alpha, n_test)
    _claim_test_pattern(audit, alpha)
    per = n_zoo // len(DISEASES)
    _claim_alignment(audit, per, seed)
    _claim_sign(audit, alpha)
    sig = audit.assign(sig=audit[f"p {_CIT_06}"] < alpha)
    _claim_per_disease(sig, alpha, per, rhos)
    _claim_no_universal_model(sig)
    return claims.rows(["DONE-2", "DONE-2-paper-CLDM", "DONE-2-oracle", "C6", "C5", "C9", "C15", "C15-universal"])


def _claims_done2(audit: pd.DataFrame, alpha: float, n_test: int) -> None:
    """DONE-2 and its two variants: CIT-LR with CLDM+D, the paper's CLDM and the true counterfactuals."""
    inv_mask, use_mask = audit["ECA"] >= 0.99, audit["ECA"] < 0.9
    variants = {
        "DONE-2": (
            "CIT-LR[CLDM+D]",
            "CIT-LR does not reject classifiers that ignore the trace above alpha and rejects those that use it.",
            f"CIT-LR with CLDM+D counterfactuals, alpha = {alpha}, {n_test} test images per test.",
        ),
        "DONE-2-paper-CLDM": (
            "CIT-LR[CLDM]",
            "The same bar with the paper's CLDM (conditioned on the group alone) as the generator.",
            "as DONE-2 with the paper's CLDM: a failure means the generator, not the test, is wrong (it changes the "
            "diseases along with the group, previous notebook).",
        ),
        "DONE-2-oracle": (
            "CIT-LR[true]",
            "The same bar with a perfect generator: CIT-LR fed the true counterfactuals does not reject "
            "classifiers that ignore the trace above alpha and rejects those that use it.",
            "as DONE-2 with g and h from the renderer's true counterfactuals: separates the test from the generator.",
        ),
    }
    for key, (test, statement, evidence) in variants.items():
        iv_inv = _group_rate(audit, inv_mask, test, alpha, "classifiers with ECA >= 0.99")
        iv_use = _group_rate(audit, use_mask, test, alpha, "classifiers with ECA < 0.9")
        d_inv = vd.decide_below(
            iv_inv, alpha, inclusive=True, quantity="rejection rate of classifiers that ignore the trace"
        )
        d_use = vd.decide_above(iv_use, 0.8, inclusive=True, quantity="rejection rate of trace users")
        d = join_parts({"ignores trace: not above alpha": d_inv, "uses trace: rejected": d_use}, "both groups")
        claims.claim(
            key,
            statement,
            paper="CIT-LR rejects when ECA is low and not when ECA is high (Sec. 6.3)",
            ours={
                "rejection rate, ignores trace": iv_inv.estimate if iv_inv.defined else None,
                "rejection rate, uses trace": iv_use.estimate if iv_use.defined else None,
                "n": [int(inv_mask.sum()), int(use_mask.sum())],
            },
            decision=d,
            quote=IN_SUM,
            source="Sec. 6.3; the groups (ECA >= 0.99 ignores the trace, < 0.9 uses it) and the 80% bar are the book's DONE-2 bar, not the paper's",
            change="the old rule passed the invariant group when a one-sided binomial test did not reject alpha, which 8 classifiers "
            "can never do; the rate's Clopper-Pearson interval must now lie at or below alpha",
            evidence=evidence,
            note=" ".join(
                filter(
                    None,
                    (
                        undecided_note(
                            d_inv, alpha, int(inv_mask.sum()), "classifiers that ignore the trace", _FULL_06
                        ),
                        undecided_note(d_use, 0.8, int(use_mask.sum()), "trace users", _FULL_06),
                    ),
                )
            ),
            kind="reproduction",
        )


_TOY_SHORTCUT = (
    "Differs with the substitute data: the toy chest X-rays' shortcut (the group's trace the classifiers learn) drives "
    "both a classifier's ECA and its group gap, so ECA, DP and EO read one quantity here; the paper's CheXpert and MIMIC "
    "classifiers have no such single shortcut."
)


def _claim_test_pattern(audit: pd.DataFrame, alpha: float) -> None:
    """C6: CIT-LR rejects most low-ECA classifiers and few high-ECA ones; DP and EO reject almost all high-ECA ones."""
    cit = _CIT_06
    high = audit["ECA"] >= HIGH
    iv_cit_hi = _group_rate(audit, high, cit, alpha, f"classifiers with ECA >= {HIGH}")
    iv_cit_lo = _group_rate(audit, ~high, cit, alpha, f"classifiers with ECA < {HIGH}")
    iv_dp, iv_eo = (_group_rate(audit, high, t, alpha, f"classifiers with ECA >= {HIGH}") for t in ("DP", "EO"))
    c6 = join_parts(
        {
            "CIT-LR: high ECA mostly not rejected": vd.decide_below(
                iv_cit_hi, MOST, quantity=f"CIT-LR rejection rate at ECA >= {HIGH}"
            ),
            "CIT-LR: low ECA mostly rejected": vd.decide_above(
                iv_cit_lo, MOST, quantity=f"CIT-LR rejection rate at ECA < {HIGH}"
            ),
            "DP rejects almost all high ECA": vd.decide_above(
                iv_dp, ALMOST_ALL, quantity=f"DP rejection rate at ECA >= {HIGH}"
            ),
            "EO rejects almost all high ECA": vd.decide_above(
                iv_eo, ALMOST_ALL, quantity=f"EO rejection rate at ECA >= {HIGH}"
            ),
        },
        "all four",
    )
    claims.claim(
        "C6",
        f"Real-data pattern: CIT-LR is not significant for most classifiers with ECA >= {HIGH} and significant for most below; "
        f"DP and EO reject almost all (> {ALMOST_ALL:.0%}) of those with ECA >= {HIGH}.",
        paper="qualitative (Figs. 3-4)",
        ours={
            f"CIT-LR reject | ECA>={HIGH}": iv_cit_hi.estimate if iv_cit_hi.defined else None,
            f"CIT-LR reject | ECA<{HIGH}": iv_cit_lo.estimate if iv_cit_lo.defined else None,
            f"DP reject | ECA>={HIGH}": iv_dp.estimate if iv_dp.defined else None,
            f"EO reject | ECA>={HIGH}": iv_eo.estimate if iv_eo.defined else None,
        },
        decision=vd.on_substitute(c6, "the toy shortcut drives both ECA and the group gap"),
        quote=HIGH_ECA + " ... " + IN_SUM,
        source="Sec. 6.3, Figs. 3-4",
        change="issue 38: substitutes by one rule; the toy data do not keep what the claim is about. Before: "
        f"the paper's words set the high-ECA range at ECA >= {HIGH} and say DP and EO reject 'almost all' of it; the old rule "
        "used ECA >= 0.99 and < 0.9 and only asked DP to reject more often than CIT-LR",
        evidence=f"rejection rates at alpha = {alpha} over the zoo ({len(audit)} classifiers), each with its Clopper-Pearson interval.",
        note=_TOY_SHORTCUT
        + " The pattern of Figs. 3-4 is about real classifiers whose group gap and ECA come apart; the "
        "substitute keeps the tests and the zoo but not that.",
        kind="reproduction",
    )


def _claim_alignment(audit: pd.DataFrame, per: int, seed: int) -> None:
    """C5: log p of CIT-LR follows ECA more closely than DP's and EO's (per disease, bootstrapped over classifiers)."""
    cit = _CIT_06
    spread = audit.groupby("disease")["ECA"].agg(np.ptp)
    informative = [d for d in DISEASES if spread.get(d, 0.0) >= 0.05]
    panels = {d: audit[audit["disease"] == d] for d in informative}
    iv = alignment_parts(panels, "ECA", f"log10p {cit}", ["log10p DP", "log10p EO"], seed=seed)
    c5 = join_parts(
        {
            "r > 0": vd.decide_above(iv["r"], 0.0, quantity="mean r(ECA, log10 p) of CIT-LR"),
            "higher correlation": vd.decide_above(iv["r gap"], 0.0, quantity="mean of r_CIT - max(r_DP, r_EO)"),
            "lower variance": vd.decide_below(
                iv["spread gap"], 0.0, quantity="mean of sqrt(1-r_CIT^2) - min(sqrt(1-r_DP^2), sqrt(1-r_EO^2))"
            ),
        },
        "correlation and spread",
    )
    claims.claim(
        "C5",
        "log p of CIT-LR rises with ECA with a higher correlation and a smaller standardised residual spread than DP and EO.",
        paper="qualitative (Figs. 3-4)",
        ours={
            "mean r": round(iv["r"].estimate, 3),
            "mean r gap": round(iv["r gap"].estimate, 3),
            "mean spread gap": round(iv["spread gap"].estimate, 3),
        },
        decision=vd.on_substitute(c5, "the toy shortcut drives both ECA and the group gap"),
        quote=_FIG3_WORDS,
        source="Sec. 6.3, Figs. 3-4",
        change="issue 38: substitutes by one rule; the toy data do not keep what the claim is about. Before: "
        "the raw residual sd of log10 p is on each test's own scale and cannot be compared across tests; the spread is now "
        "sqrt(1 - r^2), the residual sd in units of the test's own sd, and every part is bootstrapped over classifiers",
        evidence=f"Pearson r between ECA and log10 p per disease ({per} classifiers each) on the diseases whose classifiers spread "
        f"over ECA by at least 0.05 ({informative}), mean over those diseases. sqrt(1 - r^2) is a function of |r|, so the spread "
        "part is the correlation part read without its sign.",
        note=_TOY_SHORTCUT
        + " How closely each test's log p follows ECA on real classifiers is what Figs. 3-4 show; on "
        "the substitute DP's and EO's p-values follow the same shortcut as ECA.",
        kind="reproduction",
    )


def _claim_sign(audit: pd.DataFrame, alpha: float) -> None:
    """C9 (the book's own): the paired mean of y(g - h) is not significantly negative beyond alpha/2 of the tests."""
    cit = _CIT_06
    neg = audit[f"mean d {cit}"] < 0
    sig_neg = int((neg & (audit[f"p {cit}"] < alpha)).sum())
    iv9 = vd.binomial_interval(sig_neg, len(audit), unit="tests")
    c9 = vd.decide_below(iv9, alpha / 2, inclusive=True, quantity="share of significantly negative mean differences")
    claims.claim(
        "C9",
        "The paired mean of y(g - h) is >= 0 up to noise (the functional is E[(g-h)^2]); the paper's tables show mixed signs.",
        paper="mixed signs in Tables 12-13",
        ours={"negative means": int(neg.sum()), "significant negative": sig_neg, "tests": len(audit)},
        decision=c9,
        quote=NOTES_SIGN,
        source="notes §5 item 9, not in the paper",
        kind=OWN,
        change=OWN_CHANGE.format(what="the sign check is the notes'; the paper's Tables 12-13 show mixed signs")
        + "; before, the "
        "old rule allowed max(1, 5%) significant negatives; a two-sided test at alpha finds a negative mean significant "
        f"at most alpha/2 = {alpha / 2:g} of the time when the functional is >= 0, and the share is now decided on its interval",
        evidence="sign of the CIT-LR mean difference over the zoo. With h the A-marginal of g, a significant negative mean can only "
        "come from the generator: y is predicted on real images but g and h on generated ones.",
        note=undecided_note(c9, alpha / 2, len(audit), "tests", _FULL_06),
    )


def _claim_per_disease(sig: pd.DataFrame, alpha: float, per: int, rhos: Sequence[float]) -> None:
    """C15: most classifiers are not significant for consolidation and significant for the shortcut diseases.

    ``sig`` is the audit with a column ``sig``: CIT-LR[CLDM+D] rejects at ``alpha``.
    """
    by = {
        d: vd.binomial_interval(
            int(sig.loc[sig["disease"] == d, "sig"].sum()), int((sig["disease"] == d).sum()), unit="classifiers"
        )
        for d in DISEASES
    }
    c15 = join_parts(
        {
            "consolidation: most not significant": vd.decide_below(
                by["consolidation"], MOST, quantity="share significant, consolidation"
            ),
            **{
                f"{d}: most significant": vd.decide_above(by[d], MOST, quantity=f"share significant, {d}")
                for d in ("cardiomegaly", "effusion")
            },
        },
        "the three diseases",
    )
    claims.claim(
        "C15",
        "Per-model tables: most models are non-significant for the disease unaffected by A (consolidation) and significant "
        "for diseases where models pick up A-shortcuts.",
        paper="consolidation 1/10 (CheXpert), 2/10 (MIMIC) significant; others 5-10/10",
        ours={d: round(iv.estimate, 3) if iv.defined else None for d, iv in by.items()},
        decision=c15,
        quote="For cardiomegaly, edema and pleural effusion, most models show significant ... Whereas for consolidation, most "
        "models, such as Densenet 121 or VGG13+BN shows non-significant results",
        source="App. I.1, Tables 12-13",
        change="'most' is read as more than half on both sides; the old rule asked for at most 20% significant on consolidation "
        "(the paper's counts, not its words) and moved 'no model is invariant for all diseases' to C15-universal",
        evidence=f"share of zoo members with CIT-LR p < {alpha} per disease; shortcut strengths {rhos} for the associated diseases.",
        note=undecided_note(c15, MOST, per, "classifiers per disease", _FULL_06),
        kind="reproduction",
    )


def _claim_no_universal_model(sig: pd.DataFrame) -> None:
    """C15-universal: no model is invariant for every disease (given by hand: the toy zoo has invariant models by design)."""
    models = sig.groupby(["arch", "rho", "seed"])["sig"].any()
    # The verdict is given by hand (the substitute zoo changes the answer); the estimate is still recorded with its interval.
    universal = vd.Decision(
        vd.SUBSTITUTE,
        vd.binomial_interval(int((~models).sum()), len(models), unit="models"),
        "share of models non-significant for every disease = 0 (the paper's 'no model'); verdict given by hand "
        "because the toy zoo holds models that are invariant by design",
    )
    claims.claim(
        "C15-universal",
        "No model of the pool is invariant (non-significant) for every disease.",
        paper="no model universally invariant",
        ours={"models significant for no disease": int((~models).sum()), "models": len(models)},
        decision=universal,
        quote="However no model our tested pool is universally invariant across all the diseases",
        source="App. I.1, Tables 12-13",
        evidence="models are (architecture, shortcut strength, seed) triples trained once per disease.",
        note="the toy zoo trains some classifiers without a shortcut (rho = 0) on data whose trace does not predict the label, so it "
        "holds models invariant by design; the paper's pool was trained on the observed data only, where every disease's label "
        "is associated with the group.",
        kind="reproduction",
    )
