"""The SmileyFaces claims of notebook 03: composition, the fine-tuned HVAE's effectiveness, realism, minimality.

:func:`claims_03` runs named stages in the order the claims are recorded: composition (C7, C2-faces,
C3-faces), the HVAE's counterfactual fine-tuning (E7), the eyeglasses margin (E8), realism (R1-faces,
R2-faces) and minimality (M4, M5-faces). A claim whose substitute metric is degenerate on SmileyFaces
(:func:`~cflib.experiments.benchmark.parts.degenerate_metric`) is "differs with the substitute data".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ... import claims, verdicts
from .config import MODEL_LABELS
from .evaluation import composition_at
from .intervals import binary_outcomes, f1_difference, f1_score
from .parts import MORE_SEEDS, TABLE5_CAPTION, Part, degenerate_metric, join_parts, record_claim
from .pipeline import BENCHMARK_KEYS
from .seeds import SeedUnits

_MATCHED = (
    "every VAE and HVAE now abducts at the VAEs' temperature (the HVAEs used 0.3), and training seeds are the units"
)


class _Benchmark03:
    """What the claims of notebook 03 share: the model comparisons over training seeds."""

    def __init__(self, results: Mapping[str, Any]) -> None:
        self.models, self.cycles = tuple(results["models"]), results["cycles"]
        self.refs = ("identity", "true")
        self.seeds = SeedUnits(results["seeds"], (*self.models, *self.refs), frechet=(*self.models, *self.refs))
        self.ms = sorted({1, self.cycles})
        temperature = next(iter(results["seeds"].values())).get("temperature")
        self.paired = self.seeds.evidence + (
            f"; every VAE and HVAE abducts at one pixel-noise temperature T = {temperature:g}"
            if temperature is not None
            else ""
        )

    @staticmethod
    def comp(r: Mapping[str, Any], mdl: str, dist: str, m: int) -> np.ndarray:
        return composition_at(r["per_image"], mdl, dist, m)

    def comp_part(self, a: str, b: str, dist: str, m: int, side: str) -> Part:
        L, comp = MODEL_LABELS, self.comp
        return self.seeds.paired(
            f"{dist} composition m={m}: {L[a]} - {L[b]}",
            lambda r: comp(r, a, dist, m) - comp(r, b, dist, m),
            side,
            models=(a, b),
        )

    def mean(self, mdl: str, dist: str, m: int) -> float:
        return self.seeds.mean(lambda r: float(self.comp(r, mdl, dist, m).mean()))

    def f1(self, mdl: str, attr: str) -> float:
        return self.seeds.mean(lambda r: float(f1_score(*binary_outcomes(r["per_image"], mdl, attr))))

    def f1_part(self, a: str, b: str, attr: str, side: str, threshold: float) -> Part:
        L, S = MODEL_LABELS, self.seeds

        def stat(k: int) -> float:
            pi = S.runs[k]["per_image"]
            return float(f1_score(*binary_outcomes(pi, a, attr)) - f1_score(*binary_outcomes(pi, b, attr)))

        return S.part(
            f"F1 for {attr} under do({attr}): {L[a]} - {L[b]}",
            stat,
            lambda k: f1_difference(S.runs[k]["per_image"], a, b, attr),
            side,
            threshold,
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

    @staticmethod
    def per(r: Mapping[str, Any], mdl: str, what: str) -> np.ndarray:
        return np.asarray(r["per_image"][mdl][what], float)

    def per_mean(self, mdl: str, what: str) -> float:
        return self.seeds.mean(lambda r: float(self.per(r, mdl, what).mean()))

    def per_mean_part(self, label: str, mdl: str, what: str, side: str, threshold: float) -> Part:
        """The mean of ``what`` for ``mdl`` against ``threshold`` (per seed its mean over the test images)."""
        S, per = self.seeds, self.per
        return S.part(
            label,
            lambda j: float(per(S.runs[j], mdl, what).mean()),
            lambda j: verdicts.mean_interval(per(S.runs[j], mdl, what), unit="test images"),
            side,
            threshold,
            models=(mdl,),
        )

    def per_part(self, label: str, what: str, a: str, b: str, side: str) -> Part:
        """The per-image difference of ``what`` between ``a`` and ``b``."""
        per = self.per
        return self.seeds.paired(label, lambda r: per(r, a, what) - per(r, b, what), side, models=(a, b))


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 03 (SmileyFaces benchmark): composition, effectiveness of the fine-tuned HVAE, realism, minimality.

    Every comparison between trained models takes the training seeds as units (see :func:`claims_02`);
    with one seed it is undecided. A claim whose substitute metric is degenerate on SmileyFaces
    (:func:`degenerate_metric`: constant across the models and the truth, or ranking the truth worst), or that
    the substitute cannot reach at all (a margin above a ceiling), is "differs with the substitute data"
    with the measurement that shows it.

    Parameters
    ----------
    results : mapping
        :func:`benchmark_results` of the first seed's SmileyFaces run with the six models (``vae_fixed``,
        ``vae_learned``, ``hvae``, ``hvae_cf``, ``gan``, ``gan_ft``) and both references, and ``seeds``,
        the per-seed results of :func:`seed_results`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, (*BENCHMARK_KEYS, "seeds"), "claims_03")
    bench = _Benchmark03(results)
    _composition_claims(bench)
    fd, fd_bad, boot = _frechet_means(bench)
    _fine_tuning_claim(bench, fd, fd_bad)
    _eyeglasses_claim(bench)
    _realism_claims(bench, fd, fd_bad, boot)
    _minimality_claims(bench)
    return claims.rows(["C7", "C2-faces", "C3-faces", "E7", "E8", "R1-faces", "R2-faces", "M4", "M5-faces"])


def _composition_claims(bench: _Benchmark03) -> None:
    """C7, C2-faces and C3-faces: the fine-tuned HVAE composes best, errors grow with cycles, the GAN is worst."""
    L, MODELS, cycles, ms, paired, matched = (
        MODEL_LABELS,
        bench.models,
        bench.cycles,
        bench.ms,
        bench.paired,
        _MATCHED,
    )
    comp_part, mean = bench.comp_part, bench.mean
    comp_dists = ("l1_embedding", "perceptual")
    paper_rows = [k for k in MODELS if k not in ("hvae_cf", "hvae")]  # Table 2 has no ELBO-only HVAE row
    c7 = [comp_part("hvae_cf", k, d, m, "below") for d in comp_dists for m in ms for k in paper_rows]
    best = {f"{d} m={m}": L[min(MODELS, key=lambda k: mean(k, d, m))] for d in comp_dists for m in ms}
    record_claim(
        "C7",
        "On faces the counterfactually fine-tuned HVAE has the best perceptual and embedding composition.",
        c7,
        "HVAE fine-tuned below each of the four other models of Table 2, per distance and cycle count",
        paper="LPIPS 0.063 vs >= 0.290; emb 0.498 vs >= 0.516 (m = 1)",
        ours=best,
        evidence=paired,
        quote="From Table 2 we observe that HVAE achieves the best composition scores in terms of […] embeddings and LPIPS distance",
        source="Sec. 4.1, Table 2 (the HVAE row is the fine-tuned HVAE)",
        change="compared only against the models of the paper's Table 2 (its HVAE row is the fine-tuned HVAE; the ELBO-only HVAE "
        "is not in it); " + matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    grow = [bench.grows(k, d) for k in ("vae_fixed", "vae_learned", "hvae_cf", "gan", "gan_ft") for d in comp_dists]
    record_claim(
        "C2-faces",
        "Composition error grows with the number of cycles on faces (embedding and perceptual distances).",
        grow,
        "all ten model-distance pairs",
        paper="all m=10 above m=1 except the bug-affected pixel column (Table 2)",
        ours=f"perceptual, HVAE fine-tuned: {mean('hvae_cf', 'perceptual', 1):.3f} -> {mean('hvae_cf', 'perceptual', cycles):.3f}",
        evidence=f"per-image m={cycles} minus m=1; {paired}",
        quote="Particularly, it retains the details of the original image, while VAE progressively blurs and distorts it during repeating cycles.",
        source="Sec. 4.1, Fig. 3; Table 2 (every 10-cycle embedding and LPIPS entry above its 1-cycle entry)",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )
    worst = L[max(MODELS, key=lambda k: mean(k, "perceptual", 1))]
    record_claim(
        "C3-faces",
        "The un-fine-tuned GAN has the worst perceptual composition after one cycle.",
        [comp_part("gan", k, "perceptual", 1, "above") for k in MODELS if k != "gan"],
        "GAN above each of the five others",
        paper="LPIPS 0.403 (worst)",
        ours=worst,
        evidence=paired,
        quote="while GAN again performs the worst.",
        source="Sec. 4.1, Table 2 (LPIPS 0.403 at 1 cycle)",
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
    )


def _frechet_means(bench: _Benchmark03) -> tuple[dict[str, float], str, str]:
    """Each model's Fréchet distance (mean over seeds), why it is degenerate on faces (or ``""``), and the realism evidence."""
    MODELS, S, refs = bench.models, bench.seeds, bench.refs
    fd = {k: float(np.mean([f.point[k] for f in S.frechet])) for k in (*MODELS, *refs)}
    fd_bad = degenerate_metric(fd, "The in-domain Fréchet distance (mean over seeds)", lower_is_better=True)
    boot = f"Fréchet distances of in-domain predictor features; {S.evidence}"
    return fd, fd_bad, boot


def _fine_tuning_claim(bench: _Benchmark03, fd: Mapping[str, float], fd_bad: str) -> None:
    """E7: the ELBO-only HVAE ignores interventions; counterfactual fine-tuning makes it effective at a realism cost.

    Issue 38: when the Fréchet distance is degenerate on SmileyFaces (R1-faces, R2-faces) or the VAEs' eyeglasses F1
    sits at the ceiling (E8), a part of E7 reads a metric its siblings declare uninformative here, so E7 differs with
    the substitute data, its parts' reading kept in the rule.
    """
    S, paired, matched, f1, f1_part = bench.seeds, bench.paired, _MATCHED, bench.f1, bench.f1_part
    e7 = [f1_part("hvae", "identity", a, "below", 0.25) for a in ("s", "e")]
    e7 += [f1_part("hvae_cf", "hvae", a, "above", 0.1) for a in ("s", "e")]
    e7.append(S.frechet_diff("hvae_cf", "hvae", "above"))
    headroom = min(1 - f1(k, "e") for k in ("vae_fixed", "vae_learned"))
    text: dict[str, Any] = {
        "paper": "HVAE 'unaffected by interventions'; HVAE-ft F1 0.998 / 0.981; FID 12.667 -> 22.047",
        "ours": f"F1 do(s)/do(e): identity {f1('identity', 's'):.2f}/{f1('identity', 'e'):.2f}, HVAE {f1('hvae', 's'):.2f}/{f1('hvae', 'e'):.2f}, "
        f"HVAE-ft {f1('hvae_cf', 's'):.2f}/{f1('hvae_cf', 'e'):.2f}; Fréchet {fd['hvae']:.3f} -> {fd['hvae_cf']:.3f}",
        "quote": "We observe that by training HVAE only with the standard ELBO loss, the model exclusively reconstructs the initial image "
        "and systematically ignores the causal/counterfactual condition.",
        "source": "Sec. 4.2; Table 4 (HVAE fine-tuned F1 0.998 / 0.981); Table 5 (FID 12.667 -> 22.047)",
    }
    evidence = f"ELBO-only HVAE within 0.25 F1 of the identity map; fine-tuning adds > 0.1 F1 on both attributes; Fréchet distance rises; {paired}"
    if fd_bad or headroom <= 0.1:
        why = (fd_bad + " ") if fd_bad else ""
        if headroom <= 0.1:
            why += f"The VAEs' eyeglasses F1 is at the ceiling (1 - F1 = {headroom:.3f} <= 0.1, E8)."
        claims.claim(
            "E7",
            "An HVAE trained only on the ELBO ignores interventions; counterfactual fine-tuning makes it effective at a realism cost.",
            evidence=evidence,
            decision=verdicts.on_substitute(
                join_parts(e7, "the five parts", MORE_SEEDS)[0],
                "a metric E7 reads is degenerate on SmileyFaces (its siblings E8, R1-faces, R2-faces say so)",
            ),
            note=why + " A metric shown degenerate on the substitute decides no claim on it.",
            change="issue 38: substitutes by one rule; E7 read the F1 and Fréchet distance its sibling claims declare "
            "degenerate on SmileyFaces",
            kind="reproduction",
            **text,
        )
        return
    record_claim(
        "E7",
        "An HVAE trained only on the ELBO ignores interventions; counterfactual fine-tuning makes it effective at a realism cost.",
        e7,
        "the five parts",
        evidence=evidence,
        change=matched,
        more=MORE_SEEDS,
        kind="reproduction",
        **text,
    )


def _eyeglasses_claim(bench: _Benchmark03) -> None:
    """E8: the fine-tuned HVAE's eyeglasses margin over the VAEs ('differs with the substitute data' when the VAEs leave no headroom)."""
    S, paired, matched, f1, f1_part = bench.seeds, bench.paired, _MATCHED, bench.f1, bench.f1_part
    e8_quote = (
        "The fine-tuned HVAE outperforms all other models across most scenarios with the most evident difference being "
        "observed in interventions on the attribute eyeglasses."
    )
    e8_ours = f"{f1('hvae_cf', 'e'):.3f} vs {f1('vae_fixed', 'e'):.3f} / {f1('vae_learned', 'e'):.3f}"
    headroom = min(1 - f1(k, "e") for k in ("vae_fixed", "vae_learned"))
    if headroom <= 0.1:
        claims.claim(
            "E8",
            "On the eyeglasses intervention the fine-tuned HVAE beats the VAEs by a wide margin.",
            paper="0.981 vs 0.771 / 0.810",
            ours=e8_ours,
            evidence=f"F1 of the eyeglasses classifier on the counterfactuals of do(e); {S.evidence}",
            decision=verdicts.Decision(
                verdicts.SUBSTITUTE,
                verdicts.exact(headroom, method=f"1 - the better VAE's eyeglasses F1, mean over {S.n} training seeds"),
                "a margin above 0.1 F1 needs a VAE F1 below 0.9; when both VAEs are above it no model can "
                "show the margin",
            ),
            quote=e8_quote,
            source="Sec. 4.2, Table 4 (0.981 vs 0.771 / 0.810)",
            note=f"The VAEs already reach eyeglasses F1 {e8_ours.split(' vs ')[1]} (1 - F1 = {headroom:.3f} <= 0.1): on SmileyFaces "
            "the eyeglasses classifier reads every model's counterfactual, so the ceiling leaves no room for the paper's margin.",
            change="the substitute's eyeglasses F1 is at the ceiling for every model; the claim cannot be decided on it",
            kind="reproduction",
        )
    else:
        record_claim(
            "E8",
            "On the eyeglasses intervention the fine-tuned HVAE beats the VAEs by a wide margin.",
            [f1_part("hvae_cf", k, "e", "above", 0.1) for k in ("vae_fixed", "vae_learned")],
            "both VAEs",
            paper="0.981 vs 0.771 / 0.810",
            ours=e8_ours,
            evidence=f"F1 margin above 0.1; {paired}",
            quote=e8_quote,
            source="Sec. 4.2, Table 4 (0.981 vs 0.771 / 0.810)",
            change=matched,
            more=MORE_SEEDS,
            kind="reproduction",
        )


def _realism_claims(bench: _Benchmark03, fd: Mapping[str, float], fd_bad: str, boot: str) -> None:
    """R1-faces and R2-faces: the Fréchet distances' orderings, unless the substitute's Fréchet distance is degenerate."""
    L, MODELS, S, matched = MODEL_LABELS, bench.models, bench.seeds, _MATCHED
    realism = {
        "R1-faces": (
            "The ELBO-only HVAE has the best realism on faces.",
            [S.frechet_diff("hvae", k, "below") for k in MODELS if k != "hvae"],
            "HVAE below each of the five others",
            "FID 12.667 (best)",
            {L[k]: round(fd[k], 3) for k in MODELS},
            "HVAE without counterfactual training performs better on CelebA, as expected, since it does not introduce any information.",
            "Sec. 4.3, Table 5 (CelebA FID 12.667)",
        ),
        "R2-faces": (
            "On faces both GANs are more realistic than both VAEs.",
            [S.frechet_diff(g, v, "below") for g in ("gan", "gan_ft") for v in ("vae_fixed", "vae_learned")],
            "the four GAN-VAE comparisons",
            "41.5 / 31.6 vs 77.3 / 66.4",
            {L[k]: round(fd[k], 3) for k in ("gan", "gan_ft", "vae_fixed", "vae_learned")},
            TABLE5_CAPTION,
            "Table 5, CelebA FID: GAN 41.536, GAN fine-tuned 31.560 vs VAEs 77.307 / 66.412",
        ),
    }
    for key, (statement, parts, what, paper, ours, quote, source) in realism.items():
        if fd_bad:
            gap = fd["true"] - max(fd[k] for k in MODELS)
            claims.claim(
                key,
                statement,
                paper=paper,
                ours=ours,
                evidence=boot,
                quote=quote,
                source=source,
                decision=verdicts.Decision(
                    verdicts.SUBSTITUTE,
                    verdicts.exact(
                        gap,
                        method="the true counterfactual's Fréchet distance "
                        f"minus the largest model's, mean over {S.n} training seeds",
                    ),
                    "decided only when the substitute's Fréchet distance is informative (not constant across "
                    "the models and the truth, and not ranking the true counterfactual worst)",
                ),
                note=fd_bad
                + " The features are the book's in-domain attribute classifiers' (no Inception network can be "
                "loaded here).",
                change="the substitute's Fréchet distance ranks the true counterfactual worst, so it cannot decide realism",
                kind="reproduction",
            )
        else:
            record_claim(
                key,
                statement,
                parts,
                what,
                paper=paper,
                ours=ours,
                evidence=boot,
                quote=quote,
                source=source,
                change=matched,
                more=MORE_SEEDS,
                kind="reproduction",
            )


def _minimality_claims(bench: _Benchmark03) -> None:
    """M4 and M5-faces: P2 near 1 for the VAE rows, and the GAN's P1 highest (unless P1 is at its floor for every model)."""
    L, MODELS, S, paired, matched = MODEL_LABELS, bench.models, bench.seeds, bench.paired, _MATCHED
    vaes = ("vae_fixed", "vae_learned", "hvae", "hvae_cf")
    p2 = [bench.per_mean_part(f"mean P2 of {L[k]}", k, "p2", "above", 0.9) for k in vaes]
    m4: dict[str, Any] = {
        "paper": "P2 0.925-0.999; CLD 0.295-0.310",
        "ours": {L[k]: round(bench.per_mean(k, "p2"), 3) for k in vaes},
        "evidence": f"per-image P2; {paired}",
        "quote": "We notice that for CelebA, the term […] cannot effectively discern changes that are too minimal from effective ones",
        "source": "Sec. 4.3, Table 5 (CelebA P(S_x ≥ div) 0.925-0.999)",
    }
    statement = "On faces P2 is close to 1 for the VAE and HVAE rows, so their CLD sits near the identity value 0.2954."
    p2_all = {k: bench.per_mean(k, "p2") for k in (*MODELS, "true")}
    if min(p2_all.values()) >= 0.99:  # issue 38: P2 at its ceiling for every row, the truth's included
        shown = ", ".join(f"{L.get(k, k)} {v:.3f}" for k, v in p2_all.items())
        claims.claim(
            "M4",
            statement,
            decision=verdicts.on_substitute(
                join_parts(p2, "all four rows above 0.9", MORE_SEEDS)[0],
                "P2 sits at its ceiling for every row on SmileyFaces, the true counterfactual's included",
            ),
            note=f"P2 (mean over seeds) is at least 0.99 for every model and for the true counterfactual ({shown}): on "
            "SmileyFaces it reads 1 whatever the counterfactual, so 'P2 near 1' says nothing about the paper's point that on "
            "CelebA it cannot tell too-minimal changes from effective ones. A metric shown degenerate on the substitute "
            "decides no claim on it.",
            change="issue 38: substitutes by one rule; M4 read the P2 that is at its ceiling for every row on SmileyFaces",
            kind="reproduction",
            **m4,
        )
    else:
        record_claim(
            "M4", statement, p2, "all four rows above 0.9", change=matched, more=MORE_SEEDS, kind="reproduction", **m4
        )
    p1 = {k: bench.per_mean(k, "p1") for k in (*MODELS, "true")}
    p1_bad = degenerate_metric(p1, "P1 (mean over seeds)", lower_is_better=None, floor=1e-3)
    m5 = (
        "The GAN has the highest P1 on faces.",
        "0.224",
        {L[k]: round(v, 3) for k, v in p1.items()},
        TABLE5_CAPTION,
        "Table 5, CelebA P(S_x* ≤ div): GAN 0.224 (highest)",
    )
    if p1_bad:
        spread = max(v for k, v in p1.items() if k != "true") - min(v for k, v in p1.items() if k != "true")
        claims.claim(
            "M5-faces",
            m5[0],
            paper=m5[1],
            ours=m5[2],
            evidence=f"per-image P1; {S.evidence}",
            quote=m5[3],
            source=m5[4],
            decision=verdicts.Decision(
                verdicts.SUBSTITUTE,
                verdicts.exact(spread, method=f"spread of the mean P1 over the models, mean over {S.n} training seeds"),
                "decided only when the substitute's P1 is informative (not constant across the models)",
            ),
            note=p1_bad,
            change="P1 sits at its floor (below 0.001) for every model on SmileyFaces, so it cannot rank the models",
            kind="reproduction",
        )
    else:
        record_claim(
            "M5-faces",
            m5[0],
            [bench.per_part(f"P1 {L['gan']} - {L[k]}", "p1", "gan", k, "above") for k in MODELS if k != "gan"],
            "GAN above each of the five others",
            paper=m5[1],
            ours=m5[2],
            evidence=paired,
            quote=m5[3],
            source=m5[4],
            change=matched,
            more=MORE_SEEDS,
            kind="reproduction",
        )
