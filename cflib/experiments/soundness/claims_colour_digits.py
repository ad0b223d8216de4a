"""The claims of notebook 03 (soundness of Colour-Digit models, Tables 1-4): ``claims_03`` (C2-C5, C8-C10, C12, C14, C19).

Every claim but the sanity check C2 compares trained models and is decided with training seeds as the units.

Each takes a plain dict of what the notebook computed, decides every claim with a rule of :mod:`cflib.verdicts`
on an interval, records it through :func:`cflib.claims.claim` with the paper's words of
:data:`~cflib.experiments.soundness.deciding.QUOTES`, and returns those claims' rows of
:func:`cflib.claims.claims_table`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import claims
from ... import verdicts as vd
from ...models.baselines import MODEL_LABELS
from .common import BLOCKS, PARENTS
from .deciding import (
    all_hold,
    claim,
    part_interval,
    seed_array,
    seed_diff,
    seed_note,
    seeded,
)
from .tables import RANK_COLUMNS, summary_value


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

#: The convergence criterion of the Table 1 VAEs (issue 38): the unconfounded control's hue error under do(hue), which the
#: paper's beta = 1 VAE brings to 1.26 (Table 1, unconfounded, no SI); a control above twice that has not converged.
PAPER_CONTROL_HUE_ERROR = 1.26
CONTROL_FACTOR = 2.0


def converged_or_undecided(decided: dict[str, Any], control: float, what: str) -> dict[str, Any]:
    """A claim's ``decision``/``undecided`` pair, made undecided when the unconfounded control has not converged.

    Parameters
    ----------
    decided : dict
        ``{"decision": Decision, "undecided": note}`` as the Table 1 claims build it.
    control : float
        The unconfounded control's hue error under do(hue) (mean over seeds).
    what : str
        Which model the control is, for the text.

    Returns
    -------
    dict
        ``decided`` unchanged when ``control <= CONTROL_FACTOR * PAPER_CONTROL_HUE_ERROR``; otherwise the decision through
        :func:`cflib.verdicts.not_converged` and a note naming the training that would decide it.
    """
    bar = CONTROL_FACTOR * PAPER_CONTROL_HUE_ERROR
    if control <= bar:
        return decided
    criterion = (
        f"{what} reads a hue error of {control:.2f} under do(hue), above {bar:g} = {CONTROL_FACTOR:g} x the paper's "
        f"{PAPER_CONTROL_HUE_ERROR:g}"
    )
    return {
        "decision": vd.not_converged(decided["decision"], criterion),
        "undecided": f"Undecided: {criterion}, so the models are under-trained here. Training until the control's hue error "
        f"is at most {bar:g} (the paper trains 20 000 steps; notebooks/params/full.yaml's steps) would decide it.",
    }


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
        kind="reproduction",
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
        kind="reproduction",
    )


def _vae_rows(summary: pd.DataFrame, vaes: Sequence[str]) -> list[tuple[str, str, str]]:
    """The (block, SI flag, model) configurations of the VAEs in Table 1's summary."""
    return [
        (r.block, r.SI, r.model)
        for r in summary[(summary.metric == "composition") & summary.model.isin(vaes)][["block", "SI", "model"]]
        .drop_duplicates()
        .itertuples()
    ]


def _verdicts_and_intervals(parts: Mapping[str, vd.Decision]) -> str:
    """``"<part>: <verdict> <estimate> [<low>, <high>]"`` of every part, joined by ``"; "`` (the evidence of C5 and C19)."""
    texts = []
    for k, d in parts.items():
        iv = part_interval(d)
        texts.append(f"{k}: {d.verdict} {iv.estimate:.2f} [{iv.low:.2f}, {iv.high:.2f}]")
    return "; ".join(texts)


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
        evidence=_verdicts_and_intervals(parts),
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
        ours=", ".join(f"{k} {part_interval(d).estimate:+.2f}" for k, d in parts.items()),
        **decide("C8", parts, "all four directions, the same VAE trained on the two SCMs"),
        evidence=ev(parts)
        + " (the blocks draw different do-values: each seed's difference is of means over the test images)",
        change=seeds_change,
        kind="reproduction",
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
        kind="reproduction",
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
        **converged_or_undecided(
            decide(
                "C10", parts, "all three effectiveness columns better with SI (the same VAE, test images and do-values)"
            ),
            t.eff(*_UNCONFOUNDED, b1, "hue", "hue"),
            f"the {b1} trained on the unconfounded data",
        ),
        evidence=ev(parts),
        change="issue 38: under-training is not failure; the comparison is undecided while the unconfounded control's "
        f"hue error under do(hue) is above {CONTROL_FACTOR:g} x the paper's {PAPER_CONTROL_HUE_ERROR:g}. "
        + seeds_change,
        kind="reproduction",
    )


def _matched_training(results: Mapping[str, Any], decided: dict[str, Any]) -> dict[str, Any]:
    """C12's decision, undecided when the VAEs and the GAN trained for different numbers of steps (issue 38)."""
    steps, gan_steps = results.get("steps"), results.get("gan_steps")
    if steps is None or gan_steps is None or steps == gan_steps:
        return decided
    criterion = f"the VAEs trained {steps} steps and the GAN {gan_steps}: the comparison is not at matched training"
    return {
        "decision": vd.not_converged(decided["decision"], criterion),
        "undecided": f"Undecided: {criterion}. Training both to convergence (the paper: 20 000 steps each; "
        "notebooks/params/full.yaml) would decide it.",
    }


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
        **_matched_training(
            results,
            decide(
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
        ),
        evidence=("not reproduced parts: " + "; ".join(f"{k}: {parts[k].interval}" for k in fails))
        if fails
        else ev(parts),
        kind="book's own finding",
        change="issue 38: under-training is not failure; VAEs and GAN trained for different numbers of steps are not "
        "compared. Before: the comparator took in every other full-support configuration, the GAN 'yes*' among them, against which the paper's own "
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
        kind="reproduction",
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
        evidence=_verdicts_and_intervals(parts),
        change=seeds_change,
        kind="reproduction",
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
