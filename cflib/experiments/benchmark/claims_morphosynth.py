"""The MorphoSynth claims: notebook 01 (graph mutilation, the learned flow) and notebook 02 (the benchmark).

:func:`claims_02` runs named stages, one per group of claims, in the order the claims are recorded:
composition (C1-C6, X1), effectiveness (E1-E4), the learned SCM's checks against the truth (E6, X-ceiling,
X4), realism (R1, R2), the CLD's properties (M1, M2), minimality (M3, M5) and the overall claims (G1-*).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ... import claims, verdicts
from ..papers.values import paper_table
from .config import MODEL_LABELS
from .evaluation import composition_at
from .intervals import paired_difference
from .parts import MORE_SEEDS, NOT_PAPER, TABLE5_CAPTION, Part, band_part, record_claim, side_part
from .pipeline import BENCHMARK_KEYS
from .seeds import SeedUnits

_TABLE1 = "Table 1: Composition for MorphoMNIST. For embeddings, we concatenate the last layer activations across all predictors trained."
_TABLE3 = "Table 3: Effectiveness on MorphoMNIST test set."
_OWN = "a property the paper does not state (from the notes or the book's own experiments): the book's own finding, not a reproduction"
#: The composition distances of Table 1.
_DISTANCES = ("l1_pixel", "l1_embedding", "perceptual")
_MATCHED = (
    "the HVAE abducted at T = 0.3 and the VAEs at 0.1 (the official code), so part of the HVAE's lead was the setting; "
    "now every model abducts at the VAEs' temperature, and training seeds, not test images, are the units"
)
_SEEDS_ONLY = "training seeds, not the test images of one seed, are the units of a model comparison"


#: The paper's Table 5 as printed (all 11 rows: CLD, P1, P2; MorphoMNIST's five, then CelebA's six), for claim M2,
#: from the registry of the papers' values.
PAPER_TABLE5 = np.vstack(
    [
        paper_table("counterfactual-benchmark", "Table 5")
        .frame()[[f"{d} CLD", f"{d} P1", f"{d} P2"]]
        .dropna()
        .to_numpy()
        for d in ("MorphoMNIST", "CelebA")
    ]
)


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 01 (MorphoSynth): graph mutilation (E6) and the learned intensity flow (X0-flow).

    Both are sanity checks of cflib's code: E6 runs the data's own SCM (exact quantities), X0-flow checks
    the flow's inverse (exact) and its counterfactual error (t interval over held-out units).

    Parameters
    ----------
    results : mapping
        ``mutilation``: four numbers in this order: mean ``|i* - i|`` after ``do(t)``, max ``|t* - t|`` after
        ``do(i)``, max ``|t* - t|`` after ``do(d)``, max ``|i* - i|`` after ``do(d)``; ``n_units``: units
        of the mutilation check; ``roundtrip`` and ``flow_errors`` (per held-out unit) from :class:`FlowCheck`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, ("mutilation", "n_units", "roundtrip", "flow_errors"), "claims_01")
    mutilation = [float(v) for v in results["mutilation"]]
    if len(mutilation) != 4:
        raise ValueError(f"results['mutilation'] must hold 4 numbers (see the docstring), got {len(mutilation)}")
    roundtrip, errors = float(results["roundtrip"]), np.asarray(results["flow_errors"], float)
    exact = verdicts.exact
    parts = [
        side_part("mean |i* - i| after do(t)", exact(mutilation[0]), "above", 1.0),
        side_part("max |t* - t| after do(i)", exact(mutilation[1]), "below", 0.0, inclusive=True),
        side_part("max |t* - t| after do(d)", exact(mutilation[2]), "below", 0.0, inclusive=True),
        side_part("max |i* - i| after do(d)", exact(mutilation[3]), "below", 1e-9),
    ]
    record_claim(
        "E6",
        "Graph mutilation: after do(t) the intensity changes; after do(i) the thickness does not; after do(d) neither does.",
        parts,
        "all four mutilation checks",
        paper="qualitative (Fig. 4 / 7, deterministic given the SCM)",
        ours=f"mean |i*-i| = {mutilation[0]:.2f}; max |t*-t| = {mutilation[1]:.1e}, {mutilation[2]:.1e}; max |i*-i| = {mutilation[3]:.1e}",
        evidence=f"the data's own SCM on {results['n_units']} units: exact values (no sampling); t exactly unchanged, i within float round-off 1e-9",
        quote="Intervening on thickness modifies intensity, while intervening on intensity does not affect thickness (graph "
        "mutilation). Interventions on the digit alter neither.",
        source="Sec. 4.2, Fig. 4",
        kind="sanity check",
    )
    parts = [
        side_part("flow round-trip error (grey levels)", exact(roundtrip), "below", 1e-2),
        side_part(
            "flow counterfactual MAE under do(t=4) (grey levels)",
            verdicts.mean_interval(errors, unit="held-out units"),
            "below",
            3.0,
        ),
    ]
    record_claim(
        "X0-flow",
        "A conditional flow recovers the intensity mechanism: exact inverse and accurate counterfactuals.",
        parts,
        "inverse and counterfactual error",
        paper="flows are exactly invertible (Sec. 3.2)",
        ours=f"round trip {roundtrip:.1e}; cf MAE {errors.mean():.2f}",
        evidence=f"round trip exact on {len(errors)} held-out units (< 1e-2 grey levels); counterfactual MAE < 3 grey levels",
        quote="Invertible, explicit used for the attribute mechanisms in conjunction with Conditional Normalising Flows [46]. "
        "This mechanism is invertible by design.",
        source="Sec. 3.1 (three categories of mechanisms), Sec. 3.2",
        kind="sanity check",
    )
    return claims.rows(["E6", "X0-flow"])


def _eff(per_image: Mapping[str, Any], mdl: str, attr: str, do: str) -> np.ndarray:
    """Per-image effectiveness of the ``attr`` predictor under ``do(do)`` (absolute error or 0/1 correctness)."""
    return np.asarray(per_image[mdl]["effectiveness"][(do, attr)], float)


class _Benchmark02:
    """What the claims of notebook 02 share: the first seed's results and the model comparisons over training seeds."""

    def __init__(self, results: Mapping[str, Any]) -> None:
        self.models, self.cycles = tuple(results["models"]), results["cycles"]
        self.realism, self.per_image = results["realism_minimality"], results["per_image"]
        self.seeds = SeedUnits(results["seeds"], self.models, frechet=self.models)
        temperature = next(iter(results["seeds"].values())).get("temperature")
        self.ms = sorted({1, self.cycles})
        self.paired = self.seeds.evidence + (
            f"; every VAE and HVAE abducts at one pixel-noise temperature T = {temperature:g}"
            if temperature is not None
            else ""
        )

    @staticmethod
    def comp(r: Mapping[str, Any], mdl: str, dist: str = "l1_pixel", m: int = 1) -> np.ndarray:
        return composition_at(r["per_image"], mdl, dist, m)

    def lower(self, a: str, b: str, dist: str, m: int) -> Part:
        L, comp = MODEL_LABELS, self.comp
        return self.seeds.paired(
            f"composition {dist} m={m}: {L[a]} - {L[b]}",
            lambda r: comp(r, a, dist, m) - comp(r, b, dist, m),
            "below",
            models=(a, b),
        )

    def higher(self, a: str, b: str, dist: str, m: int) -> Part:
        L, comp = MODEL_LABELS, self.comp
        return self.seeds.paired(
            f"composition {dist} m={m}: {L[a]} - {L[b]}",
            lambda r: comp(r, a, dist, m) - comp(r, b, dist, m),
            "above",
            models=(a, b),
        )

    def grows(self, mdl: str, dist: str) -> Part:
        L, comp, cycles = MODEL_LABELS, self.comp, self.cycles
        return self.seeds.paired(
            f"{L[mdl]} {dist}: m={cycles} - m=1",
            lambda r: comp(r, mdl, dist, cycles) - comp(r, mdl, dist, 1),
            "above",
            models=(mdl,),
        )

    def mean(self, mdl: str, dist: str = "l1_pixel", m: int = 1) -> float:
        return self.seeds.mean(lambda r: float(self.comp(r, mdl, dist, m).mean()))

    @staticmethod
    def eff(r: Mapping[str, Any], mdl: str, attr: str, do: str) -> np.ndarray:
        return _eff(r["per_image"], mdl, attr, do)

    def eff_mean(self, mdl: str, attr: str, do: str) -> float:
        return self.seeds.mean(lambda r: float(self.eff(r, mdl, attr, do).mean()))

    def eff_part(self, label: str, a: str, b: str, attr: str, do_a: str, do_b: str | None, side: str) -> Part:
        eff = self.eff
        return self.seeds.paired(
            label, lambda r: eff(r, a, attr, do_a) - eff(r, b, attr, do_b or do_a), side, models=(a, b)
        )

    @staticmethod
    def per(r: Mapping[str, Any], mdl: str, what: str) -> np.ndarray:
        return np.asarray(r["per_image"][mdl][what], float)

    def per_mean(self, mdl: str, what: str) -> float:
        return self.seeds.mean(lambda r: float(self.per(r, mdl, what).mean()))

    def per_part(self, what: str, a: str, b: str, side: str) -> Part:
        L, per = MODEL_LABELS, self.per
        label = f"{'CLD' if what == 'cld' else what.upper()} {L[a]} - {L[b]}"
        return self.seeds.paired(label, lambda r: per(r, a, what) - per(r, b, what), side, models=(a, b))


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 02 (MorphoSynth benchmark): composition, effectiveness, realism, minimality, overall.

    Every comparison between trained models takes the **training seeds as units**: per seed, the mean of
    the paired per-image differences on the same test images and interventions (composition, MAE, digit
    accuracy, CLD, P1) or the difference of the two Fréchet distances, then a t interval over the seeds
    (:func:`cflib.verdicts.seed_interval`); with one seed the comparison is undecided
    (:func:`cflib.verdicts.one_seed`). The models are compared at one pixel-noise temperature
    (:func:`seed_results`). A claim about several comparisons needs every one
    (:func:`cflib.verdicts.combine`). The sanity checks and the book's own findings read the first seed's
    run at the benchmark's settings. M2 checks the paper's own Table 5 (:data:`PAPER_TABLE5`). Records
    ``cld_jensen_gap``.

    Parameters
    ----------
    results : mapping
        :func:`benchmark_results` of the first seed's MorphoSynth run with the five models (``vae_fixed``,
        ``vae_learned``, ``hvae``, ``gan``, ``gan_ft``) and both references; ``seeds``, the per-seed
        results of :func:`seed_results`; and ``composition_at_T1_max`` (the largest pixel composition after
        one cycle at ``T = 1``, from :func:`temperature_table`).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, (*BENCHMARK_KEYS, "seeds", "composition_at_T1_max"), "claims_02")
    bench = _Benchmark02(results)
    _composition_claims(bench, results["composition_at_T1_max"])
    e1, best, acc = _effectiveness_claims(bench)
    _learned_scm_checks(bench, results)
    fd, boot = _realism_claims(bench)
    _cld_checks(bench)
    cld = _minimality_claims(bench)
    _overall_claims(bench, e1=e1, best=best, acc=acc, fd=fd, boot=boot, cld=cld)
    return claims.rows(
        [
            "C1",
            "C2",
            "C3",
            "C5",
            "C6",
            "X1",
            "E1",
            "E2",
            "E3",
            "E4",
            "E6",
            "X-ceiling",
            "X4",
            "R1",
            "R2",
            "M1",
            "M2",
            "M3",
            "M5",
            "G1-composition",
            "G1-effectiveness",
            "G1-realism",
            "G1-minimality",
        ]
    )


def _composition_claims(bench: _Benchmark02, comp_at_T1: float) -> None:
    """C1-C6 and X1: composition after 1 and ``cycles`` cycles, between models and at ``T = 1``."""
    L, MODELS, cycles, dists, ms, paired = MODEL_LABELS, bench.models, bench.cycles, _DISTANCES, bench.ms, bench.paired
    matched, seeds_only = _MATCHED, _SEEDS_ONLY
    lower, higher, grows, mean = bench.lower, bench.higher, bench.grows, bench.mean
    record_claim(
        "C1",
        "The HVAE composes better than both VAEs on every distance, at 1 and 10 cycles.",
        [lower("hvae", v, d, m) for d in dists for m in ms for v in ("vae_fixed", "vae_learned")],
        "all 12 comparisons",
        paper="0.438 vs 2.600 / 4.244 (pixel, m=1); 1.550 vs 7.698 / 9.855 (m=10)",
        ours=f"pixel m=1: {mean('hvae'):.2f} vs {mean('vae_learned'):.2f} / {mean('vae_fixed'):.2f}",
        evidence=paired,
        quote="We can observe that HVAE significantly outperforms all models across metrics both for […] and […]",
        source="Sec. 4.1, Table 1 (composition after 1 and 10 cycles)",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    record_claim(
        "C2",
        "Composition error grows with the number of cycles (VAEs, HVAE, GAN fine-tuned; every distance).",
        [grows(mdl, d) for mdl in ("vae_fixed", "vae_learned", "hvae", "gan_ft") for d in dists],
        "all 12 model-distance pairs",
        paper="all m=10 entries above m=1 (Table 1)",
        ours=f"pixel, HVAE: {mean('hvae'):.2f} -> {mean('hvae', m=cycles):.2f}",
        evidence=f"per-image m={cycles} minus m=1; {paired}",
        quote=_TABLE1,
        source="Table 1: every 10-cycle entry above its 1-cycle entry for both VAEs, the HVAE and GAN fine-tuned",
        change=seeds_only,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    others = [k for k in MODELS if k != "gan"]
    record_claim(
        "C3",
        "The GAN without encoder fine-tuning has the worst composition after one cycle.",
        [higher("gan", k, d, 1) for d in dists for k in others],
        "GAN above each of the four other models on each distance",
        paper="16.779 vs <= 4.244 (pixel)",
        ours={d: L[max(MODELS, key=lambda k: mean(k, d))] for d in dists},
        evidence=paired,
        quote="while GAN without cyclic cost minimisation performs poorly even from the first cycle.",
        source="Sec. 4.1, Table 1",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    c5 = [lower("gan_ft", "gan", "l1_pixel", 1)]
    c5 += [higher("gan_ft", v, d, cycles) for d in ("l1_embedding", "perceptual") for v in ("vae_fixed", "vae_learned")]
    record_claim(
        "C5",
        "Encoder fine-tuning improves composition^1, but GAN-ft errors accumulate faster than the VAEs' (m=10).",
        c5,
        "the improvement and the four m=10 comparisons",
        paper="16.779 -> 3.807; emb 0.272 vs 0.135/0.158 at m=10",
        ours=f"pixel m=1 {mean('gan'):.2f} -> {mean('gan_ft'):.2f}; emb m={cycles} {mean('gan_ft', 'l1_embedding', cycles):.3f} vs "
        f"{mean('vae_learned', 'l1_embedding', cycles):.3f}/{mean('vae_fixed', 'l1_embedding', cycles):.3f}",
        evidence=paired,
        quote="For GAN, we found that fine-tuning the cyclic cost minimisation was necessary to ensure closeness to the factual "
        "image for both datasets.",
        source="Sec. 4 (Setup); Table 1, GAN fine-tuned at 10 cycles (embeddings, LPIPS)",
        change=seeds_only,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    record_claim(
        "C6",
        "A learned decoder σ composes better than a fixed σ.",
        [lower("vae_learned", "vae_fixed", d, m) for d in dists for m in ms],
        "all six comparisons",
        paper="2.600 < 4.244 (m=1); 7.698 < 9.855 (m=10)",
        ours=f"pixel m=1 {mean('vae_learned'):.2f} vs {mean('vae_fixed'):.2f}",
        evidence=paired,
        quote="We compare VAE with a fixed standard deviation of […] as used in [31, 3] versus a VAE with learnable standard deviation.",
        source="Sec. 4 (Setup); Table 1: 2.600 < 4.244 (1 cycle), 7.698 < 9.855 (10 cycles)",
        change=seeds_only,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    record_claim(
        "X1",
        "With pixel-noise temperature T = 1 the null intervention returns x exactly: composition is 0 and uninformative.",
        [
            side_part(
                "largest mean pixel composition^1 at T = 1",
                verdicts.exact(comp_at_T1, method="an identity of abduction at T = 1"),
                "below",
                0.05,
            )
        ],
        "the identity",
        paper="implied by Eqs. of Sec. 3.2; the code uses T = 0.1 / 0.3 (undisclosed)",
        ours=f"max mean pixel composition^1 at T=1: {comp_at_T1:.2e}",
        evidence="three trained models re-scored at T = 1; tolerance 0.05 grey levels (clipping)",
        quote="Abduction with a noise temperature of 1 makes composition exactly 0 (up to clamping) for VAE and HVAE, because ε "
        "is abducted at the pixel level.",
        source=f"notes §5 X1, {NOT_PAPER}",
        kind="sanity check",
    )


def _effectiveness_claims(bench: _Benchmark02) -> tuple[list[Part], dict[tuple[str, str], str], dict[str, float]]:
    """E1-E4: the predictors' errors and digit accuracy under each intervention; returns E1's parts, each cell's best model and the digit accuracies."""
    L, MODELS, paired, matched, seeds_only = MODEL_LABELS, bench.models, bench.paired, _MATCHED, _SEEDS_ONLY
    eff_mean, eff_part = bench.eff_mean, bench.eff_part
    cells = [(a, do) for a in ("t", "i") for do in ("t", "i", "d")]
    e1 = [
        eff_part(f"{a} MAE under do({do}): {L['hvae']} - {L[k]}", "hvae", k, a, do, None, "below")
        for a, do in cells
        for k in MODELS
        if k != "hvae"
    ]
    best = {c: min(MODELS, key=lambda k: eff_mean(k, *c)) for c in cells}
    record_claim(
        "E1",
        "The HVAE gives the lowest thickness and intensity MAE under every intervention (6 cells).",
        e1,
        "HVAE below each other model in each of the 6 cells",
        paper="6/6 cells",
        ours=f"row minimum is the HVAE in {sum(v == 'hvae' for v in best.values())}/6 cells",
        evidence=paired,
        quote=_TABLE3,
        source="Table 3: the HVAE is bold in all six thickness and intensity MAE cells",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    e2 = [eff_part(f"{L[k]}: i MAE under do(t) - under do(i)", k, k, "i", "t", "i", "below") for k in MODELS]
    record_claim(
        "E2",
        "Intensity MAE under do(t) is lower than under do(i), for every model (the flow propagates t -> i).",
        e2,
        "all five models",
        paper="5/5 models",
        ours={L[k]: f"{eff_mean(k, 'i', 't'):.2f} < {eff_mean(k, 'i', 'i'):.2f}" for k in MODELS},
        evidence=f"per-image differences between the two interventions; {paired}",
        quote="We note that the error for intensity remains low when performing an intervention on thickness, compared to other "
        "interventions, which showcases the effectiveness of the conditional intensity mechanism.",
        source="Sec. 4.2, Table 3",
        change=seeds_only,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    e3 = [
        eff_part(f"{L[k]}: {a} MAE under do(i) - under do({o})", k, k, a, "i", o, "above")
        for k in MODELS
        for a in ("t", "i")
        for o in ("t", "d")
    ]
    hardest = sum(max(("t", "i", "d"), key=lambda do: eff_mean(k, a, do)) == "i" for k in MODELS for a in ("t", "i"))
    record_claim(
        "E3",
        "do(i) is the hardest intervention for the thickness and intensity predictors.",
        e3,
        "do(i) above do(t) and do(d) in each of the 10 (model, attribute) rows",
        paper="10/10 row groups",
        ours=f"do(i) is the largest mean MAE in {hardest}/10 row groups",
        evidence=paired,
        quote=_TABLE3,
        source="Table 3: the do(i) column is the largest thickness and intensity MAE for all five models",
        change=seeds_only,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    acc = {k: eff_mean(k, "d", "d") for k in MODELS}
    e4 = [
        eff_part(f"digit accuracy under do(d): {L['hvae']} - {L[k]}", "hvae", k, "d", "d", None, "above")
        for k in MODELS
        if k != "hvae"
    ]
    e4 += [
        eff_part(f"digit accuracy under do(d): {L['gan_ft']} - {L[k]}", "gan_ft", k, "d", "d", None, "below")
        for k in MODELS
        if k not in ("gan_ft", "hvae")
    ]
    e4.append(
        eff_part(
            f"digit accuracy under do(d): {L['vae_learned']} - {L['vae_fixed']}",
            "vae_learned",
            "vae_fixed",
            "d",
            "d",
            None,
            "below",
        )
    )
    record_claim(
        "E4",
        "Digit accuracy under do(d): highest for the HVAE, lowest for GAN-ft, learned-σ VAE below fixed-σ VAE.",
        e4,
        "the eight orderings",
        paper="0.972 / 0.451; 0.775 < 0.933",
        ours={L[k]: round(v, 3) for k, v in acc.items()},
        evidence=f"paired per-image correctness differences; {paired}",
        quote=_TABLE3,
        source="Table 3, digit accuracy under do(y): HVAE 0.972 (bold), GAN fine-tuned 0.451, VAE σ learned 0.775 < σ fixed 0.933",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    return e1, best, acc


def _learned_scm_checks(bench: _Benchmark02, results: Mapping[str, Any]) -> None:
    """E6, X-ceiling and X4 on the first seed's run: graph mutilation, the predictors' ceiling, the artefact of do(i)."""
    per_image = bench.per_image
    n = len(composition_at(per_image, "hvae"))
    cfp, obs = per_image["hvae"]["counterfactual_parents"], results["obs"]
    exact = verdicts.exact
    e6 = [
        side_part("mean |i* - i| under do(t)", exact(np.mean(np.abs(cfp["t"]["i"] - obs["i"]))), "above", 1.0),
        side_part(
            "max |t* - t| under do(i)", exact(np.max(np.abs(cfp["i"]["t"] - obs["t"]))), "below", 0.0, inclusive=True
        ),
        side_part(
            "max (|i* - i| - 1e-5 |i|) under do(d)",
            exact(np.max(np.abs(cfp["d"]["i"] - obs["i"]) - 1e-5 * np.abs(obs["i"]))),
            "below",
            1e-6,
            inclusive=True,
        ),
    ]
    record_claim(
        "E6",
        "Graph mutilation in the learned SCM: do(t) changes i, do(i) leaves t, do(d) leaves t and i.",
        e6,
        "the three mutilation checks",
        paper="qualitative (Figs 4, 7)",
        ours="exact equalities and mean |i* - i| > 1 under do(t)",
        evidence="counterfactual parents of the HVAE SCM on all test units (exact values; i within float32 round-off of the flow, "
        "1e-6 + 1e-5 |i|)",
        quote="Intervening on thickness modifies intensity, while intervening on intensity does not affect thickness (graph "
        "mutilation). Interventions on the digit alter neither.",
        source="Sec. 4.2, Fig. 4",
        kind="sanity check",
    )
    quality = results["predictor_quality"]
    ceiling = dict(zip(quality["attribute"], quality["real test images"], strict=True))
    true_t, true_d = _eff(per_image, "true", "t", "t"), _eff(per_image, "true", "d", "d")
    ceil = [
        band_part(
            "true counterfactual: t MAE under do(t)",
            verdicts.mean_interval(true_t, unit="test images"),
            0.75 * ceiling["t"],
            1.25 * ceiling["t"],
        ),
        side_part(
            "true counterfactual: digit accuracy under do(d)",
            verdicts.binomial_interval(int(true_d.sum()), len(true_d), unit="test images"),
            "above",
            ceiling["d"] - 0.03,
        ),
    ]
    record_claim(
        "X-ceiling",
        "The true counterfactual scores effectiveness at the predictors' ceiling (do(t) read by q(t|x), do(d) by q(d|x)).",
        ceil,
        "both",
        paper="not measurable in the paper",
        ours=f"true: t MAE {true_t.mean():.3f}, d acc {true_d.mean():.3f}; ceiling: {ceiling['t']:.3f}, {ceiling['d']:.3f}",
        evidence="within 25 % of the real-image MAE and above the real-image accuracy minus 0.03",
        quote="Report their accuracy on real test data: the ceiling for effectiveness.",
        source=f"notes §6.2 (notebook A, step 5), {NOT_PAPER}",
        kind="sanity check",
    )

    def true_diff(a: str, o: str) -> verdicts.Interval:
        return paired_difference(_eff(per_image, "true", a, "i"), _eff(per_image, "true", a, o))

    x4 = [
        side_part(f"true counterfactual: {a} MAE under do(i) - under do({o})", true_diff(a, o), "above")
        for a in ("t", "i")
        for o in ("t", "d")
    ]
    true_mean = {(a, do): float(_eff(per_image, "true", a, do).mean()) for a in ("t", "i") for do in ("t", "i")}
    record_claim(
        "X4",
        "Even the true counterfactual scores worst under do(i): part of E3 is an artefact of the anti-causal predictors.",
        x4,
        "do(i) above do(t) and do(d) for both predictors",
        paper="E3 is read as a property of the models",
        ours=f"i MAE under do(i) {true_mean[('i', 'i')]:.1f} vs {ceiling['i']:.1f} on real images; t MAE {true_mean[('t', 'i')]:.3f} "
        f"vs {true_mean[('t', 't')]:.3f} under do(t)",
        evidence=f"per-image differences of the true counterfactual on {n} test images",
        quote="Caveat the paper raises itself: data-driven predictors may give biased effectiveness measurements.",
        source=f"notes §2.7; the artefact is {NOT_PAPER}",
        kind=claims.FINDING,
        change=_OWN,
    )


def _realism_claims(bench: _Benchmark02) -> tuple[dict[str, float], str]:
    """R1 and R2: the Fréchet distances' orderings; returns each model's mean distance over seeds and the evidence text."""
    L, MODELS, S, matched = MODEL_LABELS, bench.models, bench.seeds, _MATCHED
    fd = {k: float(np.mean([f.point[k] for f in S.frechet])) for k in MODELS}
    boot = f"Fréchet distances of in-domain predictor features (not Inception); {S.evidence}"
    record_claim(
        "R1",
        "Realism: HVAE < VAE (σ learned) < VAE (σ fixed).",
        [S.frechet_diff("hvae", "vae_learned", "below"), S.frechet_diff("vae_learned", "vae_fixed", "below")],
        "both orderings",
        paper="FID 5.362 < 10.124 < 17.096",
        ours={L[k]: round(fd[k], 3) for k in ("hvae", "vae_learned", "vae_fixed")},
        evidence=boot,
        quote="The FID metric in Table 5 aligns with our qualitative results, showing that HVAE outperforms VAEs on "
        "MorphoMNIST and GANs on CelebA.",
        source="Sec. 4.3, Table 5 (FID 5.362 < 10.124 < 17.096)",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    record_claim(
        "R2",
        "The un-fine-tuned GAN has the worst realism, and encoder fine-tuning improves it.",
        [S.frechet_diff("gan", k, "above") for k in MODELS if k != "gan"] + [S.frechet_diff("gan_ft", "gan", "below")],
        "GAN above the four others, GAN fine-tuned below GAN",
        paper="72.766 -> 35.568",
        ours=f"{fd['gan']:.3f} -> {fd['gan_ft']:.3f}; worst: {L[max(fd, key=lambda k: fd[k])]}",
        evidence=boot,
        quote=TABLE5_CAPTION,
        source="Table 5, MorphoMNIST FID: GAN 72.766 (worst), GAN fine-tuned 35.568",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    return fd, boot


def _cld_checks(bench: _Benchmark02) -> None:
    """M1 and M2: the CLD's range and identity value, and the paper's Table 5 against the CLD formula (records ``cld_jensen_gap``)."""
    MODELS, R, per_image, exact = bench.models, bench.realism, bench.per_image, verdicts.exact
    ident = float(np.mean(per_image["identity"]["cld"]))
    all_cld = np.concatenate([np.asarray(per_image[k]["cld"], float) for k in (*MODELS, "identity")])
    m1_parts = [
        band_part(
            "identity CLD",
            exact(ident, method="every per-image CLD of the identity map, no sampling error"),
            0.2954 - 1e-4,
            0.2954 + 1e-4,
        ),
        side_part("smallest per-image CLD", exact(all_cld.min()), "above", 0.0, inclusive=True),
        side_part("largest per-image CLD", exact(all_cld.max()), "below", 1.0, inclusive=True),
    ]
    record_claim(
        "M1",
        "CLD lies in [0, 1] and the identity counterfactual scores log(0.8 + 0.2e) = 0.2954.",
        m1_parts,
        "the three properties",
        paper=0.2954,
        ours=round(ident, 4),
        evidence="identity rows and every per-image CLD of the five models (exact values)",
        quote="Metric property: with w = (0.8, 0.2), CLD ∈ [0, 1], and the identity counterfactual scores log(0.8 + 0.2e) = 0.2954.",
        source=f"notes §5 M1 (derived from Eq. 9), {NOT_PAPER}",
        kind="sanity check",
    )
    paper_gap = float(
        np.max(np.abs(np.log(0.8 * np.exp(PAPER_TABLE5[:, 1]) + 0.2 * np.exp(PAPER_TABLE5[:, 2])) - PAPER_TABLE5[:, 0]))
    )
    ours_gap = float(np.max(np.abs(np.log(0.8 * np.exp(R["P1"]) + 0.2 * np.exp(R["P2"])) - R["CLD"])))
    claims.record("cld_jensen_gap", ours_gap)
    record_claim(
        "M2",
        "The reported CLD equals log(0.8 e^mean P1 + 0.2 e^mean P2) within 0.001 (all 11 rows of Table 5).",
        [
            side_part(
                "largest gap on the paper's 11 rows",
                exact(paper_gap, method="the paper's printed numbers"),
                "below",
                0.0015,
            )
        ],
        "the gap",
        paper="11 rows",
        ours=f"max gap on the paper's rows {paper_gap:.4f}; on ours (mean of per-image CLD) {ours_gap:.4f}",
        evidence="recomputed from the printed P1, P2 (rounding to 3 decimals allows 0.0015); our table averages Eq. 9 per image, "
        "which differs from the formula at the averaged P's by Jensen's inequality",
        quote="Reported CLD equals log(0.8e^{P̄1} + 0.2e^{P̄2}) within 0.001 (all 11 rows).",
        source=f"notes §5 M2 (Table 5 and Eq. 9), {NOT_PAPER}",
        kind=claims.FINDING,
        change=_OWN,
    )


def _minimality_claims(bench: _Benchmark02) -> dict[str, float]:
    """M3 and M5: the CLD's and P1's orderings; returns each model's mean CLD over seeds."""
    L, MODELS, paired, matched = MODEL_LABELS, bench.models, bench.paired, _MATCHED
    per_part = bench.per_part
    cld = {k: bench.per_mean(k, "cld") for k in MODELS}
    m3 = [per_part("cld", "vae_learned", k, "below") for k in MODELS if k != "vae_learned"]
    m3 += [per_part("cld", "gan", k, "above") for k in MODELS if k not in ("gan", "vae_learned")]
    record_claim(
        "M3",
        "Minimality: the learned-σ VAE has the lowest CLD and the un-fine-tuned GAN the highest.",
        m3,
        "learned-σ VAE below the four others, GAN above the other three",
        paper="0.268 lowest; 0.390 highest",
        ours={L[k]: round(v, 3) for k, v in cld.items()},
        evidence=paired,
        quote="For minimality, we report the weighted CLD metric and its component probabilities (Table 5). We report lower "
        "values for VAEs on MorphoMNIST",
        source="Sec. 4.3, Table 5 (CLD 0.268 lowest, GAN 0.390 highest)",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    record_claim(
        "M5",
        "The GAN has the highest P1 (its counterfactuals land far from the factual).",
        [per_part("p1", "gan", k, "above") for k in MODELS if k != "gan"],
        "GAN above each of the four others",
        paper="0.339 (MorphoMNIST)",
        ours={L[k]: round(bench.per_mean(k, "p1"), 3) for k in MODELS},
        evidence=paired,
        quote=TABLE5_CAPTION,
        source="Table 5, MorphoMNIST P(S_x* ≤ div): GAN 0.339 (highest)",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    return cld


def _overall_claims(
    bench: _Benchmark02,
    *,
    e1: list[Part],
    best: dict[tuple[str, str], str],
    acc: dict[str, float],
    fd: dict[str, float],
    boot: str,
    cld: dict[str, float],
) -> None:
    """G1-*: the conclusion's 'the HVAE outperformed all other models across all metrics', one claim per metric."""
    L, MODELS, S, dists, ms, paired, matched = (
        MODEL_LABELS,
        bench.models,
        bench.seeds,
        _DISTANCES,
        bench.ms,
        bench.paired,
        _MATCHED,
    )
    lower, mean, eff_part, per_part = bench.lower, bench.mean, bench.eff_part, bench.per_part
    g1_quote = (
        "We identify that the development of Deep-SCM-based conditional HVAE is in the right direction, as it outperformed all "
        "other models examined (VAEs, GANs) across all metrics performed."
    )
    rest = [k for k in MODELS if k != "hvae"]
    record_claim(
        "G1-composition",
        "Composition: the HVAE is below every other model on every distance, at 1 and 10 cycles.",
        [lower("hvae", k, d, m) for d in dists for m in ms for k in rest],
        "HVAE below each of the four others, 6 columns",
        paper="stated (Sec. 5); Table 1 agrees",
        ours=f"pixel m=1: HVAE {mean('hvae'):.2f}, others {[round(mean(k), 2) for k in rest]}",
        evidence=paired,
        quote=g1_quote,
        source="Sec. 5 (Conclusion); Table 1",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    e_all = e1 + [
        eff_part(f"digit accuracy under do({do}): {L['hvae']} - {L[k]}", "hvae", k, "d", do, None, "above")
        for do in ("t", "i", "d")
        for k in rest
    ]
    record_claim(
        "G1-effectiveness",
        "Effectiveness: the HVAE is best in all nine cells (thickness and intensity MAE, digit accuracy).",
        e_all,
        "HVAE better than each of the four others in each of the 9 cells",
        paper="stated (Sec. 5); contradicted by Table 3 (VAEs best digit accuracy under do(t), do(i))",
        ours=f"HVAE digit accuracy under do(d) {acc['hvae']:.3f}; t, i MAE row minimum in {sum(v == 'hvae' for v in best.values())}/6 cells",
        evidence=paired,
        quote=g1_quote,
        source="Sec. 5 (Conclusion); Table 3",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    record_claim(
        "G1-realism",
        "Realism: the HVAE has the lowest Fréchet distance of the five models.",
        [S.frechet_diff("hvae", k, "below") for k in rest],
        "HVAE below each of the four others",
        paper="stated (Sec. 5); Table 5 agrees (5.362)",
        ours={L[k]: round(fd[k], 3) for k in MODELS},
        evidence=boot,
        quote=g1_quote,
        source="Sec. 5 (Conclusion); Table 5",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    record_claim(
        "G1-minimality",
        "Minimality: the HVAE has the lowest CLD of the five models.",
        [per_part("cld", "hvae", k, "below") for k in rest],
        "HVAE below each of the four others",
        paper="stated (Sec. 5); contradicted by Table 5 (VAE σ learned 0.268 < HVAE 0.272)",
        ours={L[k]: round(v, 3) for k, v in cld.items()},
        evidence=paired,
        quote=g1_quote,
        source="Sec. 5 (Conclusion); Table 5",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
