"""The axiomatic-soundness experiments layer (cflib.experiments.soundness): claims functions on hand-made results, and the moved pipelines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cflib import claims
from cflib import verdicts as vd
from cflib.data import colour_digits as cd
from cflib.experiments import soundness as exp
from cflib.experiments.soundness import claims_colour_digits as soundness_claims
from cflib.metrics import axioms as ax
from cflib.models.baselines import MODEL_LABELS, GroundTruth, Identity

from .conftest import verdicts

pytestmark = pytest.mark.usefixtures("fresh_claims")

VAE = MODEL_LABELS["bernoulli_b1"]


def row(metric, intervened="null", measured="image", step=1, mean=0.0, oracles="none", **labels):
    return {
        **labels,
        "metric": metric,
        "intervened": intervened,
        "measured": measured,
        "step": step,
        "oracles": oracles,
        "mean": float(mean),
        "std": 0.0,
        "seeds": 1,
    }


def model_rows(comp, rev, eff, m, cycles, **labels):
    """Summary rows of one model: comp(step), rev(parent, cycle) and eff(intervened, measured) as callables."""
    rows = [row("composition", step=s, mean=comp(s), **labels) for s in range(1, m + 1)]
    rows += [
        row("reversibility", k, step=c, mean=rev(k, c), **labels)
        for k in ("digit", "hue")
        for c in range(1, cycles + 1)
    ]
    return rows + [
        row("effectiveness", k, j, mean=eff(k, j), oracles="main", **labels)
        for k in ("digit", "hue")
        for j in ("digit", "hue")
    ]


# ----------------------------------------------------------------------------------------------------
# claims_01
# ----------------------------------------------------------------------------------------------------
def held_out(n=100, *, unseen_correct=0.9, clean_correct=0.9, seen_correct=1.0, n_unseen=40):
    """A truth_effectiveness frame: the oracle reads seen counterfactuals better than clean images (the old C6 bug)."""
    seen = np.arange(n) >= n_unseen
    k_unseen, k_clean = int(round(unseen_correct * n_unseen)), int(round(clean_correct * n))
    digit = np.where(
        seen, np.arange(n) < n_unseen + round(seen_correct * (n - n_unseen)), np.arange(n) < k_unseen
    ).astype(float)
    return pd.DataFrame(
        {
            "target exemplar": np.arange(n),
            "seen by the oracle": seen,
            "digit correct": digit,
            "clean digit correct": (np.arange(n) < k_clean).astype(float),
            "hue error": np.full(n, 0.001),
            "clean hue error": np.full(n, 0.001),
        }
    )


def results_01(*, id_comp=0.0, id_digit=10.0, id_hue=25.0, commutativity=0.0, joint=0.0, m=3, cycles=2, **held):
    n = 100
    digit = np.arange(n) % 10
    do_digit = np.where(np.arange(n) < 10, digit, (digit + 1) % 10)  # P(do = current) = 10 %
    rows = model_rows(
        lambda s: id_comp,
        lambda k, c: 0.0,
        lambda k, j: id_digit if (k, j) == ("digit", "digit") else (id_hue if j == "hue" else 100.0),
        m,
        cycles,
        model="identity",
    )
    rows += model_rows(
        lambda s: 0.0, lambda k, c: 1e-5, lambda k, j: 100.0 if j == "digit" else 0.5, m, cycles, model="ground truth"
    )
    comm = pd.DataFrame(
        {
            "commutativity l1 (max)": [0.0, commutativity],
            "joint l1 (max)": [joint, 0.0],
            "composition l1 (max)": [0.0, 0.0],
        },
        index=["Colour-Digits", "shapes scene"],
    )
    return {
        "summary": pd.DataFrame(rows),
        "clean": {"digit": 100.0, "hue": 0.5},
        "do_digit": do_digit,
        "digit": digit,
        "m": m,
        "cycles": cycles,
        "commutativity": comm,
        "truth_effectiveness": held_out(**held),
        "seed": 0,
    }


def test_claims_01_sanity_checks_reproduced_with_the_papers_words():
    table = exp.claims_01(results_01())
    assert list(table.key) == ["C1", "C6", "C7"]
    assert set(verdicts(table).values()) == {"reproduced"}
    assert set(table.kind) == {"sanity check"}  # the identity, the truth and the l1 distance hold by construction
    assert all(table.quote) and all(table.rule) and table.interval.notna().all()
    recorded = claims._STATE["values"]
    assert recorded["identity_digit_accuracy"] == 10.0 and recorded["identity_hue_error"] == 25.0


@pytest.mark.parametrize(
    "change, failing, verdict",
    [
        ({"id_comp": 0.5}, "C1", "not reproduced"),  # an identity that changes the image
        (
            {"id_digit": 30.0},
            "C1",
            "not reproduced",
        ),  # 30/100 correct: the Clopper-Pearson interval excludes chance 1/10
        ({"id_hue": 33.0}, "C1", "not reproduced"),  # the linear, not the circular, chance level: 8 s.e. away
        ({"commutativity": 0.01}, "C6", "not reproduced"),  # partial functions that do not commute
        ({"joint": 0.01}, "C6", "not reproduced"),  # both orders agree but differ from the joint intervention (eq. 12)
        (
            {"unseen_correct": 0.5},
            "C6",
            "not reproduced",
        ),  # the truth reads worse than clean images on counterfactuals the oracle never saw
        ({"n_unseen": 0}, "C6", "undecided at this scale"),  # no unseen counterfactual: an empty group decides nothing
    ],
)
def test_claims_01_failing_and_degenerate(change, failing, verdict):
    v = verdicts(exp.claims_01(results_01(**change)))
    assert v[failing] == verdict
    assert all(verdict_ == "reproduced" for key, verdict_ in v.items() if key != failing)


def test_claims_01_seen_counterfactuals_do_not_count():
    # the old criterion failed here: 100 % on the 60 seen counterfactuals, 90 % clean; on the 40 unseen ones it is 90 % too
    v = verdicts(exp.claims_01(results_01(seen_correct=1.0, unseen_correct=0.9, clean_correct=0.9)))
    assert v["C6"] == "reproduced"


def test_truth_effectiveness_locates_the_true_counterfactual_exemplars():
    train = cd.colour_digits("unconfounded", "train", replicas=1, resolution=8, seed=0)
    test = exp.colour_digits_test(8, 80, seed=3)
    do = exp.sample_do(train.parents, len(test), seed=0)
    truth = GroundTruth(cd.true_counterfactual, ("digit", "hue"))
    te = exp.truth_effectiveness(truth, train, test, do, {"digit": ExactOracle(), "hue": exp.HueOracle(0.05)})
    imgs, labels, _ = cd.digit_bank(8)
    cf = truth(test.x, test.parents, {**test.parents, "digit": do["digit"]})
    assert np.allclose(cf.max(1), imgs[te["target exemplar"]], atol=1e-6)  # the exemplar the truth renders
    assert te["seen by the oracle"].to_numpy().tolist() == np.isin(te["target exemplar"], train.base).tolist()
    assert 0 < te["seen by the oracle"].mean() < 1  # most, not all, counterfactuals are training exemplars
    assert te["digit correct"].mean() == te["clean digit correct"].mean() == 1.0  # an exact oracle reads both perfectly
    assert te["hue error"].max() < 0.02


def test_claims_01_bad_input():
    with pytest.raises(TypeError, match="results must be a mapping"):
        exp.claims_01([("summary", None)])
    r = results_01()
    del r["commutativity"]
    with pytest.raises(ValueError, match="commutativity"):
        exp.claims_01(r)
    r = results_01()
    r["summary"] = r["summary"][r["summary"].model != "ground truth"]
    with pytest.raises(ValueError, match="no summary row"):
        exp.claims_01(r)


# ----------------------------------------------------------------------------------------------------
# claims_02 and its pipelines
# ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scms():
    return {
        name: cd.colour_digits(name, "train", replicas=1, resolution=8, outlier_p=0.2, seed=0)
        for name in ("confounded", "confounded_full_support")
    }


def quality(digit, hue, se=0.5):
    names = ["unconfounded (CNN)", "confounded (CNN)", "confounded + SI (CNN)", "unconfounded (linear)"]
    return pd.DataFrame(
        {"digit accuracy (%)": digit, "hue error (x100)": hue, "digit accuracy s.e.": se, "hue error s.e.": se},
        index=names,
    )


def test_claims_02_verdicts(scms):
    si, messages = exp.simulated_interventions(scms, list(scms), bins=5, seed=0)
    assert messages["confounded"] and not messages["confounded_full_support"]  # empty cells warn, full support does not
    dep = exp.si_dependence(scms, si, 5)
    base = {"scms": scms, "si": si, "hue_bins": 5, "dependence": dep, "n_test": 348}
    table = exp.claims_02({**base, "oracle_quality": quality([99, 90, 96, 98], [1, 6, 4, 1])})
    # issue 38: one oracle seed per training set: C13 is undecided whatever the test images read
    assert verdicts(table) == {"C11": "reproduced", "C13": "undecided at this scale"}
    c13 = table.set_index("key").loc["C13"]
    assert "it would read reproduced" in c13["rule"] and "two or more oracle seeds" in c13["note"]
    assert (
        table.set_index("key").loc["C11", "kind"] == "sanity check"
        and table.set_index("key").loc["C13", "kind"] == "reproduction"
    )
    claims.reset()  # SI within noise of the confounded oracle on the hue: undecided, with the size that would decide it
    table = exp.claims_02({**base, "oracle_quality": quality([99, 90, 96, 98], [1, 6, 5.5, 1])}).set_index("key")
    assert (
        table.loc["C13", "verdict"] == "undecided at this scale"
        and "about 2674 test images (now 348)" in table.loc["C13", "note"]
        and "it would read undecided" in table.loc["C13", "rule"]
    )  # 348 (1.96 sqrt(0.5) / 0.5)^2
    assert (
        "it would read not reproduced"
        in exp.claims_02({**base, "oracle_quality": quality([90, 99, 96, 98], [1, 6, 4, 1])})
        .set_index("key")
        .loc["C13", "rule"]
    )
    # SI above the unconfounded oracle: the paper's words ("SI helps") hold; the old ordering rule called it inconclusive
    assert (
        "it would read reproduced"
        in exp.claims_02({**base, "oracle_quality": quality([96, 90, 99, 98], [1, 6, 4, 1])})
        .set_index("key")
        .loc["C13", "rule"]
    )
    # zero standard errors: the points decide (equal oracles are not "worse")
    assert (
        "it would read not reproduced"
        in exp.claims_02({**base, "oracle_quality": quality([99, 99, 99, 98], [1, 1, 1, 1], se=0.0)})
        .set_index("key")
        .loc["C13", "rule"]
    )
    # no resampling at all: the dependence stays, so C11 fails
    none = {k: np.arange(len(d)) for k, d in scms.items()}
    v = verdicts(
        exp.claims_02(
            {
                **base,
                "si": none,
                "dependence": exp.si_dependence(scms, none, 5),
                "oracle_quality": quality([99, 90, 96, 98], [1, 6, 4, 1]),
            }
        )
    )
    assert v["C11"] == "not reproduced"


def test_dependence_is_zero_for_a_product_joint_and_positive_under_confounding(scms):
    digit, hue = np.meshgrid(np.arange(10), (np.arange(5) + 0.5) / 5, indexing="ij")
    assert exp.dependence({"digit": digit.ravel(), "hue": hue.ravel()}, 5) == 0.0
    assert exp.dependence(scms["confounded"].parents, 5) > 0.05
    dep = exp.si_dependence(scms, exp.simulated_interventions(scms, ["confounded_full_support"], bins=5, seed=0)[0], 5)
    assert dep.loc["confounded_full_support", "after SI"] < 0.1 * dep.loc["confounded_full_support", "before"]


# ----------------------------------------------------------------------------------------------------
# claims_03
# ----------------------------------------------------------------------------------------------------
FAMILIES = ("biased", "biased + SI", "linear")
SEEDS = 3


def images_from(rows, *, n=40, noise=0.0, seed_sd=0.0, seeds=SEEDS, seed=0, families=FAMILIES):
    """Per-image values ``(seeds, images)`` whose means are the summary rows' (plus centred image noise and a per-seed offset of sd ``seed_sd``),
    keyed like soundness_study's images; ``seeds=None`` gives one seed's 1-d arrays."""
    rng, images = np.random.default_rng(seed), {}
    for r in rows:
        key = (r["block"], r["SI"], r["model"])
        e = rng.standard_normal((seeds or 1, n))
        values = r["mean"] + noise * (e - e.mean(1, keepdims=True)) + seed_sd * rng.standard_normal((seeds or 1, 1))
        fams = ["main", *families] if r["metric"] == "effectiveness" else [r["oracles"]]
        for fam in fams:
            images.setdefault(key, {})[r["metric"], r["intervened"], r["measured"], r["step"], fam] = (
                values if seeds else values[0]
            )
    return images


def world_03(*, gan_comp=1.0, rev_slope=1.0, m=3, cycles=3, noise=0.0, seeds=SEEDS, extra_rows=()):
    """A summary where every Table 1 claim holds: confounding hurts, SI with full support repairs."""
    bad = {
        ("unconfounded", "no"): 0.0,
        ("confounded", "no"): 3.0,
        ("confounded", "yes"): 2.5,
        ("confounded_full_support", "no"): 2.0,
        ("confounded_full_support", "yes"): 0.5,
    }
    rows = []
    for (block, si), b in bad.items():
        labels = {"block": block, "SI": si}
        rows += model_rows(
            lambda s, b=b: 5 + b + s,
            lambda k, c, b=b: 7 + b + rev_slope * c,
            lambda k, j, b=b: 99 - b if j == "digit" else 1 + b,
            m,
            cycles,
            model=VAE,
            **labels,
        )
    uc = {"block": "unconfounded", "SI": "no"}
    rows += model_rows(
        lambda s: 0.0, lambda k, c: 0.0, lambda k, j: 10.0 if j == "digit" else 25.0, m, cycles, model="identity", **uc
    )
    rows += model_rows(
        lambda s: 19.0,
        lambda k, c: 19.0,
        lambda k, j: 97.0 if j == "digit" else 1.0,
        m,
        cycles,
        model="VAE w/o encoder",
        **uc,
    )
    rows += model_rows(
        lambda s: gan_comp,
        lambda k, c: 30.0,
        lambda k, j: 99.0 if j == "digit" else 0.1,
        m,
        cycles,
        model="GAN",
        block="confounded_full_support",
        SI="yes",
    )
    replaced = {(r["block"], r["SI"], r["model"]) for r in extra_rows}
    rows = [r for r in rows if (r["block"], r["SI"], r["model"]) not in replaced] + list(extra_rows)
    changes = pd.DataFrame(
        {"Confounded w/o full support": [0.8, 0.8, 0.9], "Confounded w/ full support": [0.7, 0.6, 0.7]},
        index=["Table 2: biased", "Table 3: biased + SI", "Table 4: linear"],
    )
    return {
        "summary": pd.DataFrame(rows),
        "images": images_from(rows, noise=noise, seeds=seeds),
        "models": ["bernoulli_b1"],
        "gan_configs": [["confounded_full_support", "yes"]],
        "m": m,
        "cycles": cycles,
        "rank_changes": changes,
    }


def test_claims_03_reproduced_in_a_world_where_every_claim_holds():
    table = exp.claims_03(world_03())
    assert list(table.key) == ["C2", "C3", "C4", "C5", "C8", "C9", "C10", "C12", "C14", "C19"]
    assert set(table.verdict) == {"reproduced"}  # zero variance over seeds: the points decide
    kinds = table.set_index("key").kind
    assert kinds["C2"] == "sanity check"
    assert kinds["C5"] == kinds["C12"] == "book's own finding"  # read off Table 1 by the notes, not stated by the paper
    assert (kinds.drop(["C2", "C5", "C12"]) == "reproduction").all()
    # every model comparison is decided on training seeds, and says so in its interval
    for key, iv in table.set_index("key").interval.drop("C2").items():
        assert f"{SEEDS} training seeds" in iv["method"], key
    assert all(table.quote) and table.interval.notna().all()
    assert claims._STATE["values"]["rank_changes"]["Table 2: biased | Confounded w/ full support"] == 0.7
    assert claims._STATE["values"]["training_seeds"] == SEEDS
    assert all(
        claims._STATE["claims"][k]["change"] for k in table.key if k != "C2"
    )  # the changes page says why each changed
    claims.reset()  # the same world seen through noisy images: the large effects stay reproduced
    v = verdicts(exp.claims_03(world_03(noise=1.0)))
    assert (
        v.pop("C2") == "not reproduced"
    )  # independent noise per distance breaks the no-encoder VAE's per-image equality
    assert set(v.values()) == {"reproduced"}


def test_claims_03_one_seed_decides_no_model_comparison():
    # the world where every claim holds, trained with one seed: its test images say "reproduced", but one seed says
    # nothing of the seed-to-seed spread, so every model comparison is undecided and names its single seed
    table = exp.claims_03(world_03(seeds=None)).set_index("key")
    assert table.loc["C2", "verdict"] == "reproduced"  # the sanity check is exact, no model comparison
    comparisons = table.drop("C2")
    assert set(comparisons.verdict) == {"undecided at this scale"}
    assert all(r.startswith("undecided: one training seed") and "reproduced" in r for r in comparisons.rule)
    assert all(iv["method"].endswith(", 1 training seed") for iv in comparisons.interval)
    assert all("one training seed" in note and "seeds" in note for note in comparisons.note)


def test_claims_03_not_reproduced_undecided_and_without_gan():
    r = world_03(gan_comp=50.0, rev_slope=-0.5)  # GAN not best on composition; reversibility improving with cycles
    # the biased oracles reverse the ranks of the three full-support configurations: mean |rank change| 4/3 > 1
    fs = [k for k in r["images"] if k[0] == "confounded_full_support"]
    for rank, key in enumerate(fs):
        for (k, j), better in exp.RANK_COLUMNS.items():
            r["images"][key]["effectiveness", k, j, 1, "biased"] = np.full(
                (SEEDS, 40), float(-rank if better else rank)
            )
    v = verdicts(exp.claims_03(r))
    assert v["C12"] == v["C14"] == v["C19"] == "not reproduced"
    assert v["C3"] == v["C8"] == "reproduced"
    claims.reset()
    v = verdicts(exp.claims_03({**world_03(), "gan_configs": []}))
    assert "C12" not in v and v["C14"] == "reproduced"
    claims.reset()  # 0.5-point effects against a seed-to-seed spread of sd 10 over 3 seeds: every interval straddles its boundary
    r = world_03()
    r["images"] = images_from(
        [{**row, "mean": row["mean"] / 20} for row in r["summary"].to_dict("records")], seed_sd=10.0
    )
    table = exp.claims_03(r).set_index("key")
    assert table.loc["C8", "verdict"] == "undecided at this scale"
    assert "training seeds (now 3)" in table.loc["C8", "note"] and "full.yaml" in table.loc["C8", "note"]
    claims.reset()  # the same small effects with no seed-to-seed spread but large image noise: seeds, not images, are the units
    r["images"] = images_from(
        [{**row, "mean": row["mean"] / 20} for row in r["summary"].to_dict("records")], noise=10.0
    )
    assert verdicts(exp.claims_03(r))["C8"] == "reproduced"


def table1_rows(m=3, cycles=3):
    """Summary rows of the paper's Table 1, full-support block (every step and cycle at the table's first value)."""
    rows = []
    for (block, si, model), cols in exp.TABLE1_FULL_SUPPORT.items():
        rows += model_rows(
            lambda s, c=cols: c["composition", "null", "image"],
            lambda k, c_, c=cols: c["reversibility", k, "image"],
            lambda k, j, c=cols: c["effectiveness", k, j],
            m,
            cycles,
            block=block,
            SI=si,
            model=model,
        )
    return rows


def test_c12_comparator_reads_the_configurations_of_the_papers_words():
    t1 = exp.TABLE1_FULL_SUPPORT
    others = soundness_claims._c12_comparators(t1)
    # the GAN with SI against the three VAEs with SI: not the same GAN trained with SI only for its target, nor the VAEs without SI
    assert sorted(o[2] for o in others) == sorted(
        MODEL_LABELS[k] for k in ("bernoulli_b1", "bernoulli_b2", "normal_b5")
    )
    assert all(o[1] == "yes" and o[2] != "GAN" for o in others)
    margins = soundness_claims._c12_margins(t1)
    assert len(margins) == len(exp.C12_PARTS) * 3 and all(
        v > 0 for v in margins.values()
    )  # the paper's own numbers pass, as it states
    # the old comparator's mistake: against the "yes*" GAN, the paper's table itself fails (hue error 1.73 < 1.77, reversibility 11.18 > 10.75)
    g, star = t1[exp.C12_GAN], t1["confounded_full_support", "yes*", "GAN"]
    assert (
        star["effectiveness", "hue", "hue"] < g["effectiveness", "hue", "hue"]
        and star["reversibility", "digit", "image"] > g["reversibility", "digit", "image"]
    )
    with pytest.raises(ValueError, match="no configuration"):
        soundness_claims._c12_margins({k: v for k, v in t1.items() if k != exp.C12_GAN})


def test_claims_03_c12_reproduced_on_the_papers_table1_with_the_yes_star_gan_present():
    r = world_03(extra_rows=table1_rows())
    r["gan_configs"] = [["confounded_full_support", "yes*"], ["confounded_full_support", "yes"]]
    assert ("confounded_full_support", "yes*", "GAN") in r["images"]
    table = exp.claims_03({**r, "steps": 1000, "gan_steps": 1000, "gan_lr": 0.001}).set_index("key")
    assert table.loc["C12", "verdict"] == "reproduced"
    assert (
        "matched setting" in table.loc["C12", "rule"] and "3 training seeds" in table.loc["C12", "interval"]["method"]
    )
    assert "the VAEs 1000 steps, the GAN 1000 steps" in table.loc["C12", "rule"]
    claims.reset()  # issue 38: VAEs at 500 steps against a GAN at 1000 are not at matched training: undecided
    table = exp.claims_03({**r, "steps": 500, "gan_steps": 1000, "gan_lr": 0.001}).set_index("key")
    assert table.loc["C12", "verdict"] == "undecided at this scale"
    assert "not converged" in table.loc["C12", "rule"] and "it would read reproduced" in table.loc["C12", "rule"]
    assert "20 000 steps" in table.loc["C12", "note"]
    assert (
        "the VAEs 500 steps, the GAN 1000 steps at learning rate 0.001" in table.loc["C12", "rule"]
    )  # the rule says which settings differ
    assert "yes*" in claims._STATE["claims"]["C12"]["change"]


def test_rank_change_interval_matches_rank_robustness():
    rng = np.random.default_rng(1)
    rows = [
        row("effectiveness", k, j, mean=0.0, oracles=fam, block=b, SI=si, model=mdl)
        for b in ("confounded", "confounded_full_support")
        for si in ("no", "yes")
        for mdl in ("A", "B")
        for fam in ("main", *FAMILIES)
        for k in ("digit", "hue")
        for j in ("digit", "hue")
    ]
    images = {}
    for r in rows:
        images.setdefault((r["block"], r["SI"], r["model"]), {})[
            r["metric"], r["intervened"], r["measured"], r["step"], r["oracles"]
        ] = rng.random(30)
    for r in rows:
        r["mean"] = float(
            images[r["block"], r["SI"], r["model"]][
                r["metric"], r["intervened"], r["measured"], r["step"], r["oracles"]
            ].mean()
        )
    _, changes = exp.rank_robustness(pd.DataFrame(rows))
    for fam, table_no in zip(FAMILIES, (2, 3, 4), strict=True):
        for b in ("confounded", "confounded_full_support"):
            iv = soundness_claims._rank_change_interval(
                images, b, fam, n_boot=50
            )  # one seed: a bootstrap over its images
            assert iv.estimate == pytest.approx(changes.loc[f"Table {table_no}: {fam}", exp.BLOCKS[b]])
            assert iv.low <= iv.high and "bootstrap" in iv.method
    # with seeds: each seed's models ranked on their own, a t interval over the seeds
    stacked = {cfg: {k: np.stack([v, v[::-1] * 0.5, v + 0.1]) for k, v in vals.items()} for cfg, vals in images.items()}
    iv = soundness_claims._rank_change_interval(stacked, "confounded", "linear")
    per_seed = [
        soundness_claims._rank_change_interval(
            {c: {k: v[s] for k, v in vals.items()} for c, vals in stacked.items()}, "confounded", "linear"
        ).estimate
        for s in range(3)
    ]
    assert "3 training seeds" in iv.method and iv.estimate == pytest.approx(np.mean(per_seed))


def test_part_interval_reads_a_parts_interval_and_refuses_a_joint_decision():
    from cflib import verdicts as vd
    from cflib.experiments.soundness.deciding import part_interval

    part = vd.decide_above(vd.exact(1.0), 0, quantity="x")
    assert part_interval(part) is part.interval
    with pytest.raises(ValueError, match="no interval"):
        part_interval(vd.Decision(vd.REPRODUCED, None, "joint"))


def test_the_claims_of_every_notebook_are_the_packages():
    from cflib.experiments.soundness import claims as c12
    from cflib.experiments.soundness import claims_colour_digits, claims_trade_offs, claims_truth

    assert (exp.claims_01, exp.claims_02) == (c12.claims_01, c12.claims_02)
    assert exp.claims_03 is claims_colour_digits.claims_03 and exp.C12_GAN is claims_colour_digits.C12_GAN
    assert exp.claims_04 is claims_trade_offs.claims_04 and exp.claims_05 is claims_truth.claims_05


def test_seed_diff_uses_seeds_as_units():
    a = np.array([[1.0, 3.0], [2.0, 4.0], [3.0, 5.0]])  # per-seed means 2, 3, 4
    iv = exp.seed_diff(a, np.zeros_like(a))
    assert iv.estimate == pytest.approx(3.0) and "3 training seeds" in iv.method and "test images" in iv.method
    from scipy import stats

    assert iv.high - iv.estimate == pytest.approx(stats.t.ppf(0.975, 2) * 1.0 / np.sqrt(3))  # sd of 2, 3, 4 is 1
    assert (
        "1 training seed" not in exp.seed_diff(a[0], a[0] * 0).method
    )  # one seed: the images' interval, the claim marks it
    with pytest.raises(ValueError, match="training seeds"):
        exp.seed_diff(a, a[:2])


def test_table1_configs_and_rank_robustness():
    configs = exp.table1_configs(["bernoulli_b1", "normal_b5"], [["confounded_full_support", "yes"]])
    assert (
        len(configs) == 2 * 5 + 1 and configs[0] == ("unconfounded", "no", "bernoulli_b1") and configs[-1][2] == "gan"
    )
    rows = []
    for block in ("confounded", "confounded_full_support"):
        for model, score in (("A", 1.0), ("B", 2.0)):
            for fam in ("main", "biased", "biased + SI", "linear"):
                rows += [
                    row(
                        "effectiveness",
                        k,
                        j,
                        mean=score if j == "digit" else -score,
                        oracles=fam,
                        block=block,
                        SI="no",
                        model=model,
                    )
                    for k in ("digit", "hue")
                    for j in ("digit", "hue")
                ]
    tables, changes = exp.rank_robustness(pd.DataFrame(rows))
    assert changes.shape == (3, 2) and (changes.to_numpy() == 0).all()  # identical families: no rank changes
    assert tables[2, "confounded"]["avg rank"].tolist() == [2.0, 1.0]


# ----------------------------------------------------------------------------------------------------
# claims_04
# ----------------------------------------------------------------------------------------------------
def per_image(table, n=40, noise=0.0, seed_sd=0.0, seeds=SEEDS, seed=0):
    """Per-image values ``(seeds, images)`` with the table's means (plus centred image noise and a per-seed offset of sd ``seed_sd``),
    keyed like the sweeps' images; ``seeds=None`` gives one seed's 1-d arrays."""
    rng, out = np.random.default_rng(seed), {}
    for idx, r in table.iterrows():
        out[idx] = {}
        for c, v in r.items():
            e = rng.standard_normal((seeds or 1, n))
            values = v + noise * (e - e.mean(1, keepdims=True)) + seed_sd * rng.standard_normal((seeds or 1, 1))
            out[idx][c] = values if seeds else values[0]
    return out


def results_04(
    *,
    drift=0.0,
    cf_drop=1.0,
    back_drop=10.0,
    noise=0.0,
    seed_sd=0.0,
    seeds=SEEDS,
    betas=(0.1, 1.0, 4.0),
    nll=(2.8, 3.0, 3.5),
):
    s = [row("reversibility", "shape", step=c, mean=1.62, model=name) for name in ("VAE", "GAN") for c in (1, 2)]
    s += [row("effectiveness", "shape", "shape", mean=100.0, oracles="main", model=name) for name in ("VAE", "GAN")]
    comp = pd.DataFrame({s_: [1.62 + drift * (s_ - 1), 5.11] for s_ in range(1, 11)}, index=["VAE", "GAN"])
    shape = (seeds, 30) if seeds else (30,)
    shapes_images = {
        "VAE": {("composition", "null", "image", j, "none"): np.full(shape, comp.loc["VAE", j]) for j in (1, 10)}
        | {("reversibility", "shape", "image", c, "none"): np.full(shape, 1.62) for c in (1, 2)}
    }
    table6 = pd.DataFrame(
        {
            "composition l1": [25.0, 20.0, 10.0, 5.0],
            "reversibility l1": [26.0, 25.0, 12.0, 6.0],
            "digit accuracy (%)": [99.0, 98.0, 90.0, 80.0],
        },
        index=pd.Index([0, 1, 2, 3], name="levels abducted"),
    )
    table7 = pd.DataFrame(
        {
            "NLL bound (bits/dim)": list(nll),
            "composition l1": [2.0, 5.0, 9.0],
            "reversibility l1": [3.0, 6.0, 9.0],
            "digit accuracy (%)": [60.0, 80.0, 95.0],
            "hue error (x100)": [1.0, 1.0, 1.0],
        },
        index=pd.Index(list(betas), name="beta"),
    )
    fig8 = pd.DataFrame(
        {"digit accuracy (%)": [90.0 - cf_drop, 90.0], "cycled-back digit accuracy (%)": [80.0 - back_drop, 80.0]},
        index=pd.Index([0.0, 1.0], name="temperature"),
    )
    kw = {"noise": noise, "seed_sd": seed_sd, "seeds": seeds}
    return {
        "shapes_summary": pd.DataFrame(s),
        "shapes_images": shapes_images,
        "composition": comp,
        "run_gan": True,
        "table6": table6,
        "table6_images": per_image(table6, **kw),
        "table7": table7,
        "table7_images": per_image(table7, **kw),
        "betas": list(betas),
        "levels": 3,
        "fig8": fig8,
        "fig8_images": per_image(fig8, **kw),
        "temperatures": [0.0, 1.0],
    }


def test_claims_04_reproduced():
    table = exp.claims_04(results_04())
    assert list(table.key) == ["C15", "C16", "C17", "C17-nll", "C18"]
    # issue 38: C17-nll and C18 are about the CelebA-HQ VDVAE, which the toy does not keep: substitute, reading kept
    sub = table.set_index("key").loc[["C17-nll", "C18"]]
    assert set(sub.verdict) == {"differs with the substitute data"} and sub.note.str.contains("VDVAE").all()
    assert sub.rule.str.contains("on the substitute the rule reads reproduced").all()
    assert set(table.set_index("key").drop(index=["C17-nll", "C18"]).verdict) == {"reproduced"}
    assert set(table.kind) == {"reproduction"}
    assert "GAN composition 5.11 -> 5.11" in table.set_index("key").loc["C15", "ours"]
    assert all(table.quote) and table.interval.notna().all()
    assert all(
        f"{SEEDS} training seeds" in iv["method"] for iv in table.interval
    )  # properties of trained models: seeds are the units
    assert all("training seeds" in claims._STATE["claims"][k]["change"] for k in table.key)


def test_claims_04_one_seed_is_undecided():
    table = exp.claims_04(
        results_04(seeds=None)
    )  # every property holds on this seed's test images, but one seed decides nothing
    t = table.set_index("key")
    assert set(t.drop(index=["C17-nll", "C18"]).verdict) == {"undecided at this scale"}
    assert set(t.loc[["C17-nll", "C18"], "verdict"]) == {"differs with the substitute data"}
    assert all(r.startswith("undecided: one training seed") for r in t.drop(index=["C17-nll", "C18"]).rule)
    assert all("undecided: one training seed" in r for r in t.loc[["C17-nll", "C18"], "rule"])
    assert all(iv["method"].endswith(", 1 training seed") for iv in table.interval)


def test_claims_04_failing_and_undecided_cases():
    r = results_04(drift=0.1, cf_drop=5.0, back_drop=1.0)  # composition drifts with m; cycled-back images hurt less
    r["table6"] = r["table6"].iloc[::-1].set_axis(r["table6"].index)  # more abduction, larger distances
    r["table6_images"] = per_image(r["table6"])
    r["table7_images"][4.0]["NLL bound (bits/dim)"] = np.full((SEEDS, 40), 2.9)  # the bound falls from beta 1 to 4
    v = verdicts(exp.claims_04(r))
    assert v == {
        "C15": "not reproduced",
        "C16": "not reproduced",
        "C17": "reproduced",
        "C17-nll": "differs with the substitute data",
        "C18": "differs with the substitute data",
    }
    claims.reset()  # losses of 3 and 4 points against a seed-to-seed spread of sd 30: undecided, with the seeds that would decide it
    table = exp.claims_04(results_04(cf_drop=3.0, back_drop=4.0, seed_sd=30.0)).set_index("key")
    assert table.loc["C18", "verdict"] == "differs with the substitute data"
    assert "rule reads undecided at this scale" in table.loc["C18", "rule"] and "VDVAE" in table.loc["C18", "note"]


def test_claims_04_reads_beta_in_the_papers_range_only():
    # below beta = 1 the bound must fall (beta = 1 is the true ELBO's optimum): the old rule counted it against the paper
    t = exp.claims_04(results_04(betas=(0.05, 1.0, 4.0), nll=(3.6, 3.0, 3.5))).set_index("key")
    assert "on the substitute the rule reads reproduced" in t.loc["C17-nll", "rule"]
    claims.reset()  # fewer than two betas in [1, 10]: nothing to compare
    table = exp.claims_04(results_04(betas=(0.05, 0.2, 1.0))).set_index("key")
    assert table.loc["C17", "verdict"] == table.loc["C17-nll", "verdict"] == "undecided at this scale"
    assert "1, 3, 5, 7, 10" in table.loc["C17-nll", "note"]


def test_claims_04_no_temperature_effect_is_not_the_papers_effect():
    # identical accuracies at every temperature (zero variance): the point decides, and nothing was hurt
    t = exp.claims_04(results_04(cf_drop=0.0, back_drop=0.0)).set_index("key")
    assert "on the substitute the rule reads not reproduced" in t.loc["C18", "rule"]


# ----------------------------------------------------------------------------------------------------
# claims_05 and its pipelines
# ----------------------------------------------------------------------------------------------------
def truth_table(combined, truth):
    rows = [
        {
            "model": f"m{i}",
            "intervention": k,
            "combined rank": c,
            "true error": t,
            "composition": c,
            "reversibility": c,
            "effectiveness error": c,
        }
        for k in ("digit", "hue")
        for i, (c, t) in enumerate(zip(combined, truth, strict=True))
    ]
    return pd.DataFrame(rows)


@pytest.mark.parametrize(
    "combined, truth, verdict",
    [
        (np.arange(12.0), np.arange(12.0) ** 2, "reproduced"),  # a monotone relation: rho 1 in every seed's zoo
        (np.arange(12.0), -np.arange(12.0), "not reproduced"),  # the metrics rank the functions backwards
        (np.arange(12.0), np.ones(12), "undecided at this scale"),  # a constant true error has no rank correlation
    ],
)
@pytest.mark.filterwarnings("ignore::scipy.stats.ConstantInputWarning")
def test_claims_05_verdicts(combined, truth, verdict):
    table = exp.claims_05({"tables": {s: truth_table(combined, truth) for s in range(SEEDS)}})
    assert verdicts(table) == {"B1": verdict}
    assert table.quote.iloc[0] and "not in the paper" in table.source.iloc[0]
    assert table.kind.iloc[0] == "book's own finding"  # the paper cannot measure it and does not state it
    assert f"{SEEDS} training seeds" in table.interval.iloc[0]["method"]


def test_claims_05_seeds_are_the_units_and_one_seed_is_undecided():
    rng = np.random.default_rng(0)
    # three zoos, each a shuffled ranking of the truth (rank correlations 0.87, 0.40 and 0.00): the first alone would decide, the seeds disagree
    truth = np.arange(12.0)
    tables = {}
    for s, swaps in enumerate((2, 8, 6)):
        combined = truth.copy()
        for _ in range(swaps):
            i, j = rng.integers(0, 12, 2)
            combined[[i, j]] = combined[[j, i]]
        tables[s] = truth_table(combined, truth)
    rhos = exp.seed_correlations(tables).loc[("digit", "combined rank")].drop("mean").to_numpy(dtype=float)
    assert rhos.max() > 0.8 and rhos.min() < 0.1
    iv = exp.claims_05({"tables": tables}).interval.iloc[0]
    from scipy import stats

    half = stats.t.ppf(0.975, 2) * rhos.std(ddof=1) / np.sqrt(3)  # a t interval over the three seeds' rho
    assert iv["estimate"] == pytest.approx(rhos.mean()) and iv["low"] == pytest.approx(rhos.mean() - half)
    assert claims._STATE["claims"]["B1"]["verdict"] == "undecided at this scale"
    claims.reset()
    assert verdicts(exp.claims_05({"tables": {0: tables[0]}})) == {
        "B1": "undecided at this scale"
    }  # the first zoo alone: one seed
    claims.reset()  # one zoo with a perfect ranking: over its functions it reads reproduced, but it is one training seed
    table = exp.claims_05({"tables": {0: truth_table(np.arange(12.0), np.arange(12.0))}})
    assert table.verdict.iloc[0] == "undecided at this scale" and table.rule.iloc[0].startswith(
        "undecided: one training seed"
    )
    assert table.interval.iloc[0]["method"].endswith(", 1 training seed") and "functions" in table.note.iloc[0]
    with pytest.raises(ValueError, match="at least one seed"):
        exp.claims_05({"tables": {}})


class ExactOracle:
    """Nearest grey exemplar for the digit (exact on undistorted 8x8 images)."""

    def __init__(self) -> None:
        self.imgs, self.labels, _ = cd.digit_bank(8)

    def score(self, x: np.ndarray, target: np.ndarray) -> np.ndarray:
        g = x.max(1).reshape(len(x), -1)
        d = ((g[:, None] - self.imgs.reshape(len(self.imgs), -1)[None]) ** 2).sum(-1)
        return (self.labels[d.argmin(1)] == np.asarray(target)).astype(float)


def test_true_error_table_and_correlations_on_known_functions():
    test = exp.colour_digits_test(8, 60, seed=3)
    train = cd.colour_digits("unconfounded", "train", replicas=1, resolution=8, seed=0)
    do = exp.sample_do(train.parents, len(test), seed=0, current={"digit": test.digit})
    assert np.all(do["digit"] != test.digit)
    oracles = {"digit": ExactOracle(), "hue": exp.HueOracle(0.05)}
    zoo = {
        "identity": Identity(("digit", "hue")),
        "ground truth": GroundTruth(cd.true_counterfactual, ("digit", "hue")),
    }
    table = exp.true_error_table(zoo, test, do, oracles).set_index(["model", "intervention"])
    assert (
        table.loc[("ground truth", "digit"), "true error"] == 0 and table.loc[("identity", "digit"), "true error"] > 10
    )
    assert table.loc[("identity", "digit"), "effectiveness error"] == 100  # a forced change the identity never makes
    assert table.loc[("ground truth", "hue"), "effectiveness error"] < 2 and table["composition"].max() == 0
    # combined rank: the mean of the three within-intervention ranks
    digit = table.xs("digit", level="intervention")
    expected = digit[exp.TRUTH_METRICS].rank().mean(axis=1)
    assert np.allclose(digit["combined rank"], expected)
    with pytest.raises(ValueError, match="ground truth"):
        exp.true_error_table({"identity": zoo["identity"]}, test, do, oracles)


def test_metric_truth_correlations_are_spearman():
    rng = np.random.default_rng(0)
    rows = [
        {
            "model": f"m{i}",
            "intervention": k,
            "composition": rng.random(),
            "reversibility": rng.random(),
            "effectiveness error": rng.random(),
            "true error": rng.random(),
        }
        for k in ("digit", "hue")
        for i in range(8)
    ]
    table = pd.DataFrame(rows)
    table["combined rank"] = table["true error"] * 3  # a monotone transform of the truth
    corr = exp.metric_truth_correlations(table)
    assert corr.loc[("digit", "combined rank"), "Spearman rho"] == pytest.approx(1.0)
    sub = table[table.intervention == "hue"]
    from scipy import stats

    assert corr.loc[("hue", "composition"), "Spearman rho"] == pytest.approx(
        stats.spearmanr(sub["composition"], sub["true error"]).statistic
    )


# ----------------------------------------------------------------------------------------------------
# shared helpers
# ----------------------------------------------------------------------------------------------------
def test_sample_do_uses_one_seed_per_parent_and_forces_changes():
    parents = {"digit": np.arange(50) % 10, "hue": np.linspace(0, 1, 50, endpoint=False)}
    do = exp.sample_do(parents, 30, seed=5)
    assert np.array_equal(do["digit"], ax.sample_do_values(parents["digit"], 30, seed=5))
    assert np.array_equal(do["hue"], ax.sample_do_values(parents["hue"], 30, seed=6))
    current = np.zeros(30, dtype=int)
    assert np.all(exp.sample_do(parents, 30, seed=5, names=["digit"], current={"digit": current})["digit"] != 0)
    with pytest.raises(ValueError, match="names has parent"):
        exp.sample_do(parents, 3, seed=0, names=["colour"])


def test_summary_value_filters_and_errors():
    s = pd.DataFrame([row("composition", step=1, mean=3.0, model="a"), row("composition", step=1, mean=4.0, model="b")])
    assert exp.summary_value(s, "composition", model="b") == 4.0
    with pytest.raises(ValueError, match="no column 'block'"):
        exp.summary_value(s, "composition", block="x")
    with pytest.raises(ValueError, match="no summary row"):
        exp.summary_value(s, "composition", step=2)


def test_hue_oracle_reads_the_hue_circularly():
    test = exp.colour_digits_test(8, 40, seed=3)
    oracle = exp.HueOracle()
    assert oracle.score(test.x, test.hue).max() < 0.02
    assert oracle.score(test.x, (test.hue + 0.5) % 1).min() > 0.48  # the opposite hue is the farthest, 0.5 circularly


def test_claims_03_c10_is_undecided_while_the_unconfounded_control_has_not_converged():
    """Issue 38: the beta = 1 VAE's unconfounded hue error above twice the paper's 1.26 means under-training, not failure."""
    from cflib.experiments.soundness import claims_colour_digits as ccd

    decided = {"decision": vd.decide_above(vd.seed_interval([1.0, 1.2, 1.1]), 0.0), "undecided": ""}
    assert ccd.converged_or_undecided(decided, 2.5, "the VAE") is decided  # 2.5 <= 2 x 1.26
    out = ccd.converged_or_undecided(decided, 8.35, "the VAE")
    assert (
        out["decision"].verdict == "undecided at this scale"
        and out["decision"].interval is decided["decision"].interval
    )
    assert "8.35" in out["decision"].rule and "it would read reproduced" in out["decision"].rule
    assert "2.52" in out["undecided"] and "20 000 steps" in out["undecided"]
