"""Tests of the soundness metrics (cflib.metrics.axioms) and the baselines, against exact identities and the paper's tables."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from cflib.data import colour_digits as cd
from cflib.data import shapes as sh
from cflib.metrics.axioms import (
    ModelFunction,
    ParentEncoder,
    average_rank,
    commutativity,
    composition,
    effectiveness,
    l1_distance,
    partial,
    rank_change,
    reversibility,
    sample_do_values,
    soundness_report,
    summarise,
    table1,
)
from cflib.models.baselines import GroundTruth, Identity, NoEncoderVAE
from cflib.models.vae import ConditionalVAE

NAMES = ("digit", "hue")


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def test_set() -> cd.ColourDigits:
    return cd.colour_digits("unconfounded", "test", replicas=1, resolution=8, seed=3)


class ExactOracle:
    """Programmatic oracles for Colour-Digits at 8x8: nearest grey exemplar for the digit, measured hue."""

    def __init__(self, parent: str, resolution: int = 8) -> None:
        self.parent = parent
        self.kind = "classification" if parent == "digit" else "circular"
        self.imgs, self.labels, _ = cd.digit_bank(resolution)

    def score(self, x: np.ndarray, target: np.ndarray) -> np.ndarray:
        if self.parent == "hue":
            return cd.hue_error(cd.measure_hue(x, 0.05), target)
        g = x.max(1).reshape(len(x), -1)
        d = ((g[:, None] - self.imgs.reshape(len(self.imgs), -1)[None]) ** 2).sum(-1)
        return (self.labels[d.argmin(1)] == np.asarray(target)).astype(float)


@pytest.fixture(scope="module")
def oracles() -> dict[str, ExactOracle]:
    return {"digit": ExactOracle("digit"), "hue": ExactOracle("hue")}


def test_l1_properties():
    rng = np.random.default_rng(0)
    a, b, c = (rng.random((20, 3, 4, 4)) for _ in range(3))
    assert np.all(l1_distance(a, a) == 0)
    np.testing.assert_allclose(l1_distance(a, b), l1_distance(b, a))
    assert np.all(l1_distance(a, c) <= l1_distance(a, b) + l1_distance(b, c) + 1e-9)
    assert np.all(l1_distance(a, b) >= 0)
    # scale: a black and a white image differ by 255
    np.testing.assert_allclose(l1_distance(np.zeros((1, 3, 2, 2)), np.ones((1, 3, 2, 2))), [255.0])
    with pytest.raises(ValueError, match="same shape"):
        l1_distance(a, b[:3])


def test_identity_exact_zero_and_chance(test_set, oracles):
    x, pa = test_set.x, test_set.parents
    f = Identity(NAMES)
    assert np.all(composition(f, x, pa, m=5) == 0)
    rng = np.random.default_rng(0)
    assert np.all(reversibility(f, x, pa, "hue", rng.random(len(x)), cycles=3) == 0)
    assert np.all(reversibility(f, x, pa, "digit", rng.integers(0, 10, len(x)), cycles=3) == 0)
    # effectiveness at chance: digit accuracy = share of do-values equal to the current digit
    do_d = sample_do_values(np.arange(10), len(x), seed=1)
    eff = effectiveness(f, x, pa, "digit", do_d, oracles)
    np.testing.assert_allclose(eff["digit"].mean(), np.mean(do_d == test_set.digit))
    lo, hi = 0.1 - 3 * np.sqrt(0.09 / len(x)), 0.1 + 3 * np.sqrt(0.09 / len(x))
    assert lo < eff["digit"].mean() < hi
    # hue under uniform do-values: circular error 1/4 on average
    eff_h = effectiveness(f, x, pa, "hue", np.random.default_rng(2).random(len(x)), oracles)
    se = np.sqrt(1 / 48 / len(x))  # var of U(0, 1/2) is 1/48
    assert abs(eff_h["hue"].mean() - 0.25) < 4 * se
    # the preserved parent is read as on clean images
    assert eff_h["digit"].mean() == 1.0


def test_ground_truth_perfect_and_commutes(test_set, oracles):
    x, pa = test_set.x, test_set.parents
    f = GroundTruth(cd.true_counterfactual, NAMES)
    rng = np.random.default_rng(0)
    do_d, do_h = rng.integers(0, 10, len(x)), rng.random(len(x))
    assert np.all(composition(f, x, pa, m=3) == 0)
    assert np.all(reversibility(f, x, pa, "digit", do_d, cycles=2) == 0)
    assert np.all(reversibility(f, x, pa, "hue", do_h, cycles=2) < 1e-4)
    eff = effectiveness(f, x, pa, "digit", do_d, oracles)
    assert eff["digit"].mean() == 1.0 and eff["hue"].max() < 1e-6
    eff = effectiveness(f, x, pa, "hue", do_h, oracles)
    assert eff["digit"].mean() == 1.0 and eff["hue"].max() < 1e-6
    np.testing.assert_allclose(commutativity(f, x, pa, "digit", do_d, "hue", do_h), 0, atol=1e-4)


def test_shapes_ground_truth():
    data = sh.shapes_scene(
        {"object_hue": 2, "floor_hue": 2, "wall_hue": 2, "orientation": 2, "scale": 2, "shape": 3}, resolution=12
    )
    sizes = data.sizes
    f = GroundTruth(sh.true_counterfactual, sh.FACTORS, sizes=sizes)
    pa = data.parents
    assert np.all(composition(f, data.x, pa, m=2) == 0)
    do = (pa["shape"] + 1) % 3
    assert np.all(reversibility(f, data.x, pa, "shape", do, cycles=2) == 0)
    np.testing.assert_array_equal(commutativity(f, data.x, pa, "shape", do, "scale", 1 - pa["scale"]), 0)
    # every factor changes the image: the scene is identifiable
    for k in sh.FACTORS:
        other = {**pa, k: (pa[k] + 1) % sizes[k]}
        assert np.all(l1_distance(data.x, sh.render_shapes(other, 12, sizes)) > 0), k


@pytest.fixture(scope="module")
def small_vae(test_set) -> ConditionalVAE:
    tr = cd.colour_digits("unconfounded", "train", replicas=2, resolution=8, seed=0)
    vae = ConditionalVAE((3, 8, 8), 12, latent_dim=8, width=16, hidden=64, seed=0)
    return vae.fit(tr.x, tr.pa, steps=250, batch_size=64, lr=2e-3, device="cpu", seed=0)


def test_no_encoder_vae_constant_distance(small_vae, test_set):
    x, pa = test_set.x[:60], {k: v[:60] for k, v in test_set.parents.items()}
    enc = ParentEncoder({"digit": ("categorical", 10), "hue": "circular"})
    f = NoEncoderVAE(small_vae, enc, len(x), seed=0)
    comp = composition(f, x, pa, m=4)
    np.testing.assert_allclose(comp, np.broadcast_to(comp[0], comp.shape), rtol=1e-5)
    rev = reversibility(f, x, pa, "hue", np.random.default_rng(0).random(len(x)), cycles=3)
    np.testing.assert_allclose(rev, np.broadcast_to(comp[0], rev.shape), rtol=1e-4)


def test_vae_composition_grows_with_m(small_vae, test_set):
    x, pa = test_set.x[:100], {k: v[:100] for k, v in test_set.parents.items()}
    enc = ParentEncoder({"digit": ("categorical", 10), "hue": "circular"})
    f = ModelFunction.sample(small_vae, enc, len(x), seed=0)
    comp = composition(f, x, pa, m=10).mean(1)
    assert comp[-1] > comp[0]
    assert np.all(comp > 0)


def test_encoder_and_protocol_errors(test_set, oracles):
    enc = ParentEncoder({"digit": ("categorical", 10), "hue": "circular"})
    np.testing.assert_allclose(enc.encode(test_set.parents), test_set.pa, atol=1e-6)
    assert enc.parent_groups() == [list(range(10)), [10, 11]]
    with pytest.raises(ValueError, match="unknown parent name"):
        enc.encode({"digit": [1], "hue": [0.1], "thickness": [2.0]})
    with pytest.raises(ValueError, match="missing parent"):
        enc.encode({"digit": [1]})
    with pytest.raises(ValueError, match="integer classes"):
        enc.encode({"digit": [12], "hue": [0.1]})
    f = Identity(NAMES)
    x, pa = test_set.x[:5], {k: v[:5] for k, v in test_set.parents.items()}
    with pytest.raises(ValueError, match="unknown parent name"):
        reversibility(f, x, pa, "colour", np.zeros(5))
    with pytest.raises(ValueError, match="image batch has 5"):
        composition(f, x, {"digit": pa["digit"][:4], "hue": pa["hue"][:4]})
    with pytest.raises(ValueError, match="do_values has 3"):
        effectiveness(f, x, pa, "hue", np.zeros(3), oracles)
    with pytest.raises(ValueError, match="m must be an integer >= 1"):
        composition(f, x, pa, m=0)
    with pytest.raises(ValueError, match="unknown parent name"):
        partial(f, "size")
    np.testing.assert_array_equal(partial(f, "hue")(x, pa, np.zeros(5)), x)


def test_sample_do_values():
    train = np.array([0, 1, 2, 3])
    v = sample_do_values(train, 1000, seed=0)
    assert set(np.unique(v)) <= set(train)
    np.testing.assert_array_equal(v, sample_do_values(train, 1000, seed=0))
    cur = np.zeros(1000, int)
    forced = sample_do_values(train, 1000, seed=0, current=cur)
    assert np.all(forced != cur)


def test_report_summary_and_table_layout(test_set, oracles):
    x, pa = test_set.x[:40], {k: v[:40] for k, v in test_set.parents.items()}
    rng = np.random.default_rng(0)
    do = {"digit": rng.integers(0, 10, 40), "hue": rng.random(40)}
    frames = [
        soundness_report(Identity(NAMES), x, pa, do, oracles, m=3, cycles=2, labels={"model": "identity", "seed": s})
        for s in range(2)
    ]
    df = pd.concat(frames)
    assert set(df.metric) == {"composition", "reversibility", "effectiveness"}
    s = summarise(df)
    assert (s.seeds == 2).all() and (s["std"] == 0).all()
    t = table1(s)
    assert t.loc["identity", "composition"] == "0.00 (0.00)"
    assert list(t.columns)[:1] == ["composition"]
    with pytest.raises(ValueError, match="lacks column"):
        summarise(df.drop(columns="model"))


def test_average_rank_reproduces_paper_table_columns():
    # Table 1, confounded w/o full support block: (d-acc, d-ae, h-acc, h-ae); the paper's "original rank"
    t = pd.DataFrame(
        {
            "d_acc": [97.12, 98.94, 94.74, 96.94, 95.76, 95.35],
            "d_ae": [10.74, 10.36, 14.17, 6.38, 6.44, 7.54],
            "h_acc": [98.89, 99.17, 98.81, 98.88, 95.77, 98.79],
            "h_ae": [11.60, 10.07, 14.27, 7.02, 6.44, 7.30],
        }
    )
    cols = {"d_acc": True, "d_ae": False, "h_acc": True, "h_ae": False}
    orig = average_rank(t, cols)
    np.testing.assert_allclose(orig, [3.5, 2.5, 5.5, 2.25, 3.25, 4.0])
    # Table 3, same block (biased oracles + SI): avg ranks 3.5, 4, 3.5, 3, 3.5, 3.5 and mean change 0.8(3)
    t3 = pd.DataFrame(
        {
            "d_acc": [57.09, 53.43, 62.93, 53.72, 50.96, 47.89],
            "d_ae": [11.17, 10.08, 13.81, 8.57, 7.93, 7.83],
            "h_acc": [57.14, 54.03, 67.23, 55.36, 51.79, 51.23],
            "h_ae": [11.42, 9.73, 13.55, 8.88, 7.89, 7.42],
        }
    )
    r3 = average_rank(t3, cols)
    np.testing.assert_allclose(r3, [3.5, 4.0, 3.5, 3.0, 3.5, 3.5])
    assert rank_change(r3, orig) == pytest.approx(5 / 6)
    with pytest.raises(ValueError, match="same rows"):
        rank_change(r3, orig.iloc[::-1])


def test_sequences_and_rescoring(test_set, oracles):
    x, pa = test_set.x[:6], {k: v[:6] for k, v in test_set.parents.items()}
    import cflib.metrics.axioms as seq

    comp = seq.composition_sequence(Identity(NAMES), x, pa, m=3)
    assert comp.shape == (6, 4, 3, 8, 8) and np.all(comp == x[:, None])
    gt = GroundTruth(cd.true_counterfactual, NAMES)
    rev = seq.reversibility_sequence(gt, x, pa, "digit", (pa["digit"] + 1) % 10, cycles=2)
    assert rev.shape == (6, 5, 3, 8, 8)
    np.testing.assert_allclose(rev[:, 2], x, atol=1e-6)
    np.testing.assert_allclose(rev[:, 4], x, atol=1e-6)
    s = seq.score_counterfactuals(x, pa, oracles)
    assert s["digit"] == 100.0 and s["hue"] < 1e-4
    with pytest.raises(ValueError, match="no target"):
        seq.score_counterfactuals(x, {"digit": pa["digit"]}, oracles)


def test_effectiveness_ranks_from_summary():
    from cflib.metrics.axioms import effectiveness_ranks

    rows = []
    vals = {"A": (90, 2, 95, 3), "B": (80, 5, 85, 6), "C": (70, 1, 99, 9)}
    alt = {"A": (60, 3, 70, 4), "B": (50, 6, 60, 7), "C": (40, 2, 75, 10)}
    for fam, table in (("main", vals), ("alt", alt)):
        for model, (da, dh, ha, hh) in table.items():
            for (i, j), v in {
                ("digit", "digit"): da,
                ("digit", "hue"): dh,
                ("hue", "digit"): ha,
                ("hue", "hue"): hh,
            }.items():
                rows.append(
                    {
                        "model": model,
                        "metric": "effectiveness",
                        "intervened": i,
                        "measured": j,
                        "step": 1,
                        "oracles": fam,
                        "mean": v,
                    }
                )
    summ = pd.DataFrame(rows)
    cols = {("digit", "digit"): True, ("digit", "hue"): False, ("hue", "digit"): True, ("hue", "hue"): False}
    t = effectiveness_ranks(summ, ["model"], "alt", cols)
    # the alternative oracle shifts every score but keeps each column's order: ranks unchanged
    np.testing.assert_allclose(t["abs diff"], 0)
    np.testing.assert_allclose(t["avg rank"], [(1 + 2 + 2 + 1) / 4, (2 + 3 + 3 + 2) / 4, (3 + 1 + 1 + 3) / 4])
    with pytest.raises(ValueError, match="no effectiveness rows"):
        effectiveness_ranks(summ, ["model"], "linear", cols)


# ----------------------------------------------------------------------------------------------------
# the protocol-level metrics (the one implementation behind the function form and the benchmark)
# ----------------------------------------------------------------------------------------------------
def test_l1_checks_a_declared_range_instead_of_clipping():
    a = np.full((2, 1, 2, 2), 0.5)
    b = np.full((2, 1, 2, 2), 1.5)
    with pytest.raises(ValueError, match="outside the declared value_range"):
        l1_distance(a, b)
    np.testing.assert_allclose(l1_distance(a, b, value_range=None), [255.0, 255.0])  # not clipped to 0
    np.testing.assert_allclose(
        l1_distance(a * 255, np.full_like(a, 255.0), scale=1.0, value_range=(0, 255)), [127.5, 127.5]
    )
    from cflib.metrics.benchmark_metrics import l1_pixel

    # l1_pixel checks the same declared range (issue 25): it used to pass 1.5 silently
    with pytest.raises(ValueError, match="outside the declared value_range"):
        l1_pixel(255.0)(a, b)
    with pytest.raises(ValueError, match=r"b has intensities in \[-0\.5, -0\.5\]"):
        l1_pixel()(a, a - 1.0)
    np.testing.assert_array_equal(l1_pixel(255.0, value_range=None)(a, b), l1_distance(a, b, value_range=None))
    np.testing.assert_array_equal(
        l1_pixel(1.0, value_range=(0, 255))(a * 255, b * 100), l1_distance(a * 255, b * 100, 1.0, (0, 255))
    )
    inside = np.full((2, 1, 2, 2), 0.25)
    np.testing.assert_array_equal(l1_pixel()(a, inside), l1_distance(a, inside))  # in range: the same numbers
    with pytest.raises(ValueError, match="value_range must have low < high"):
        l1_pixel(value_range=(1.0, 0.0))  # refused when the distance is made, not when it is first called


class _Blur:
    """A counterfactual function that is not sound: it blurs towards the mean and shifts with the hue."""

    parent_names = NAMES

    def __call__(self, x, pa, pa_star):
        shift = (np.asarray(pa_star["hue"]) - np.asarray(pa["hue"]))[:, None, None, None]
        return np.clip(0.8 * x + 0.2 * x.mean() + 0.1 * shift, 0, 1)


def test_function_form_is_the_protocol_metric_through_one_adapter(test_set, oracles):
    from cflib.metrics import axioms as ax

    x, pa = test_set.x[:40], {k: v[:40] for k, v in test_set.parents.items()}
    f = _Blur()
    model = ax.FunctionModel(f)
    obs = {**pa, "x": x}
    do_h = np.random.default_rng(0).random(40)
    comp = ax.measure_composition(model, obs, cycles=3)
    np.testing.assert_array_equal(comp.distances["l1"].T, composition(f, x, pa, m=3))
    assert comp.distances["l1"].shape == (40, 3) and comp.statistic == comp.distances["l1"][:, 0].mean()
    # the blur compounds: distances grow with m, per image
    assert np.all(np.diff(comp.distances["l1"], axis=1) > 0)
    rev = ax.measure_reversibility(model, obs, do={"hue": do_h}, cycles=2)
    np.testing.assert_array_equal(rev.distances["l1"].T, reversibility(f, x, pa, "hue", do_h, cycles=2))
    eff = ax.measure_effectiveness(model, obs, oracles, do={"hue": do_h})
    old = effectiveness(f, x, pa, "hue", do_h, oracles)
    for k in oracles:
        np.testing.assert_array_equal(eff.per_image[("hue", k)], old[k])
        assert eff.table.loc["do(hue)", k] == old[k].mean()
    com = ax.measure_commutativity(model, obs, {"digit": (pa["digit"] + 1) % 10}, {"hue": do_h})
    np.testing.assert_array_equal(
        com.distances["l1"], commutativity(f, x, pa, "digit", (pa["digit"] + 1) % 10, "hue", do_h)
    )
    with pytest.raises(TypeError, match="CounterfactualModel"):
        ax.measure_composition(f, obs)


def test_samplers_are_arguments_and_keep_their_streams(test_set):
    from cflib.metrics import axioms as ax

    x, pa = test_set.x[:30], {k: v[:30] for k, v in test_set.parents.items()}
    model = ax.FunctionModel(Identity(NAMES))
    obs = {**pa, "x": x}
    train = {"digit": np.arange(10).repeat(3), "hue": np.linspace(0, 1, 30, endpoint=False)}
    marginal = ax.MarginalSampler(train, force_change=["digit"])
    eff = ax.measure_effectiveness(
        model, obs, {"digit": ExactOracle("digit"), "hue": ExactOracle("hue")}, sampler=marginal, seed=5
    )
    rng = np.random.default_rng(5)
    d = sample_do_values(train["digit"], 30, rng, current=pa["digit"])  # same generator, same order
    h = sample_do_values(train["hue"], 30, rng)
    np.testing.assert_array_equal(eff.targets["digit"], d)
    np.testing.assert_array_equal(eff.targets["hue"], h)
    assert np.all(eff.targets["digit"] != pa["digit"])
    # the identity never shows the forced new digit
    assert eff.table.loc["do(digit)", "digit"] == 0.0
    other = ax.InterventionSampler(train, discrete=["digit"])
    eff2 = ax.measure_effectiveness(
        model, obs, {"digit": ExactOracle("digit")}, sampler=other, seed=5, interventions=["digit"]
    )
    np.testing.assert_array_equal(eff2.targets["digit"], other.sample("digit", pa["digit"], np.random.default_rng(5)))
    with pytest.raises(ValueError, match="pass do="):
        ax.measure_reversibility(model, obs, parents=["hue"])
    with pytest.raises(ValueError, match="force_change"):
        ax.MarginalSampler(train, force_change=["nope"])


def test_composition_hold_is_pearls_do_at_the_current_value():
    from cflib.metrics import axioms as ax
    from cflib.scm import morpho_attributes

    scm = morpho_attributes()
    obs = scm.sample(200, seed=0)
    d = {"abs": lambda a, b: ax.l1_distance(a, b, scale=1.0, value_range=None)}
    held = ax.measure_composition(scm, obs, cycles=2, hold=["t"], distances=d, image="i")
    null = scm.counterfactual(obs, {"t": obs["t"]})
    np.testing.assert_array_equal(held.distances["abs"][:, 0], np.abs(null["i"] - obs["i"]))
    assert held.distances["abs"].max() < 1e-9
    eff = ax.measure_effectiveness(scm, obs, {"t": ax.AbsoluteError()}, do={"t": 2.0}, image="t")
    assert eff.per_image[("t", "t")].max() == 0.0
    with pytest.raises(ValueError, match="hold names"):
        ax.measure_composition(scm, obs, hold=["z"], distances=d, image="i")


def test_results_summarise_and_plot(test_set):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cflib.metrics import axioms as ax

    x, pa = test_set.x[:20], {k: v[:20] for k, v in test_set.parents.items()}
    model, obs = ax.FunctionModel(_Blur()), {**pa, "x": x}
    do_h = np.random.default_rng(1).random(20)
    results = [
        ax.measure_composition(model, obs, cycles=2),
        ax.measure_reversibility(model, obs, do={"hue": do_h}, cycles=2),
        ax.measure_commutativity(model, obs, {"digit": (pa["digit"] + 1) % 10}, {"hue": do_h}),
    ]
    for r in results:
        s = r.summary()
        assert {"distance", "mean", "std"} <= set(s.columns)
        np.testing.assert_allclose(s["mean"].iloc[0], r.statistic)
        fig, axes = plt.subplots()
        assert r.plot(ax=axes) is axes
        plt.close(fig)
