"""The one-call image audit: its gate stops an unsound generator, it flags a classifier exactly when the
classifier reads the attribute, its JSON validates, and every malformed call gives one clear line and writes nothing.

The images are *corner marks*, a set no chapter uses: 16x16 grey images of sensor noise with, for label 1, a
bright square somewhere in the centre; the binary attribute ``group`` brightens the top-left 4x4 corner and nothing
else, so the true counterfactual under do(group) adds or removes that brightness. The group is associated with the
label (as in the chest X-rays), so demographic parity differs even for a classifier that ignores the corner.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cflib.audit import audit_from_config, load_schema
from cflib.audit_images import GATE_DEFAULTS, ReusedCounterfactual, audit_images, load_images
from tests.validation_table import case, one_clear_line

SIZE, BASE, TRACE = 16, 0.3, 0.35
MARK = np.zeros((1, SIZE, SIZE), dtype=bool)
MARK[0, :4, :4] = True
CF_ROWS = ("ECA", "CF-CLOT", "CIT-LR")


def corner_marks(n: int = 400, seed: int = 0) -> tuple[np.ndarray, pd.DataFrame]:
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(int)
    a = (rng.random(n) < np.where(y == 1, 0.65, 0.35)).astype(int)
    x = np.full((n, 1, SIZE, SIZE), BASE, dtype=np.float32)
    x += np.clip(rng.normal(0, 0.04, x.shape), -0.12, 0.12).astype(np.float32)
    r, c = rng.integers(5, 10, n), rng.integers(5, 10, n)
    bright = rng.uniform(0.25, 0.45, n)
    for i in np.flatnonzero(y):
        x[i, 0, r[i] : r[i] + 3, c[i] : c[i] + 3] += bright[i]
    x += (TRACE * a)[:, None, None, None] * MARK
    return np.clip(x, 0, 1), pd.DataFrame({"group": a, "y": y, "site": rng.integers(0, 2, n)})


def true_counterfactual(x, pa, pa_star):
    delta = np.asarray(pa_star["group"], float) - np.asarray(pa["group"], float)
    return np.clip(x + (TRACE * delta)[:, None, None, None] * MARK, 0, 1)


def identity(x, pa, pa_star):
    return np.array(x, copy=True)


def _centre(x):
    return x[:, :, 5:13, 5:13].reshape(len(x), -1).max(1)


def ignores(x):
    return 1 / (1 + np.exp(-30 * (_centre(x) - 0.55)))


def reads(x):
    corner = x[:, :, :4, :4].reshape(len(x), -1).mean(1)
    return 1 / (1 + np.exp(-30 * (_centre(x) + 0.6 * (corner - BASE) - 0.55)))


def reader(x):
    return (x[:, :, :4, :4].reshape(len(x), -1).mean(1) > BASE + TRACE / 2).astype(int)


@pytest.fixture(scope="module")
def marks():
    return corner_marks()


def run(x, frame, clf=ignores, cf=true_counterfactual, **kw):
    args = {
        "attribute": "group",
        "outcome": "y",
        "parents": ["site"],
        "counterfactual": cf,
        "attribute_reader": reader,
        "progress": False,
        **kw,
    }
    return audit_images(clf, x, frame, **args)


def test_classifier_that_ignores_the_attribute_gets_eca_1_and_no_rejection(marks):
    r = run(*marks, clf=ignores)
    t = r.rows
    assert all(
        t.loc[f"generator {k}", "verdict"].startswith("pass") for k in ("composition", "reversibility", "effectiveness")
    )
    assert t.loc["ECA", "estimate"] == 1.0 and t.loc["ECA", "ci_high"] == 1.0 and t.loc["ECA", "ci_low"] > 0.98
    assert t.loc["CIT-LR", "pvalue"] >= r.alpha and t.loc["CIT-LR", "verdict"] == "no evidence against invariance"
    assert t.loc["CF-CLOT", "estimate"] == pytest.approx(0.0, abs=1e-12) and t.loc["CF-CLOT", "pvalue"] > r.alpha
    # the label is associated with the group, so parity reacts although the classifier never looks at the corner
    assert t.loc["DP", "pvalue"] < r.alpha and t.loc["DP", "ci_low"] > 0
    assert t.loc["generator effectiveness", "estimate"] == 1.0 and t.loc["attribute reader", "estimate"] == 1.0


def test_classifier_that_reads_the_attribute_is_flagged(marks):
    x, frame = marks
    r = run(x, frame, clf=reads)
    t = r.rows
    # the truth: the share of decisions that the true counterfactual leaves unchanged
    flip = (reads(x) >= 0.5) != (reads(true_counterfactual(x, frame, {"group": 1 - frame.group})) >= 0.5)
    assert t.loc["ECA", "estimate"] == pytest.approx(1 - flip.mean())
    assert t.loc["ECA", "ci_high"] < 1.0 and "interval excludes 1" in t.loc["ECA", "verdict"]
    assert t.loc["ECA", "ci_low"] <= 1 - flip.mean() <= t.loc["ECA", "ci_high"]
    assert t.loc["CIT-LR", "pvalue"] < 1e-6 and t.loc["CIT-LR", "verdict"] == "not counterfactually invariant"
    assert t.loc[["ECA", "CIT-LR"], "flagged"].all() and not t.loc["generator effectiveness", "flagged"]
    # the figure shows the units whose score moves most, the largest first
    fig = r.details["figure"]
    moved = np.abs(fig["score_cf"] - fig["score"])
    assert moved[0] == pytest.approx(
        np.abs(reads(true_counterfactual(x, frame, {"group": 1 - frame.group})) - reads(x)).max()
    )


def test_cit_lr_holds_its_level_for_an_invariant_classifier_and_keeps_its_power():
    """Over 30 image sets, CIT-LR (z computed by the audit) rejects the classifier that ignores the corner about alpha
    of the time (3 of 30 here; 4 or fewer has probability 0.98 at level 0.05) and the one that reads it every time."""
    import warnings

    ignored, read = [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s in range(30):
            x, frame = corner_marks(300, seed=100 + s)
            ignored.append(run(x, frame, clf=ignores).rows.loc["CIT-LR", "pvalue"])
            read.append(run(x, frame, clf=reads).rows.loc["CIT-LR", "pvalue"])
    assert sum(p < 0.05 for p in ignored) <= 4 and np.median(ignored) > 0.25
    assert max(read) < 1e-6


def test_identity_generator_fails_the_gate_and_nothing_counterfactual_is_estimated(marks):
    x, frame = marks
    seen = []

    def counting(im):
        seen.append(len(im))
        return reads(im)

    r = run(x, frame, clf=counting, cf=identity)
    t = r.rows
    assert (
        t.loc["generator composition", "verdict"].startswith("pass")
        and t.loc["generator reversibility", "estimate"] == 0
    )
    assert t.loc["generator effectiveness", "estimate"] == 0.0 and t.loc[
        "generator effectiveness", "verdict"
    ].startswith("fail")
    for name in CF_ROWS:
        assert t.loc[name, "verdict"].startswith("not estimable: the counterfactual generator fails effectiveness (0 [")
        assert np.isnan(t.loc[name, ["estimate", "ci_low", "ci_high", "pvalue"]].astype(float)).all()
    assert sum(seen) == len(x)  # the classifier never saw a counterfactual image
    assert t.loc["generator effectiveness", "flagged"] and not t.loc[list(CF_ROWS), "flagged"].any()
    assert "reader" not in t.loc["ECA", "verdict"]  # the reader reads every factual image: the generator is at fault
    blind = run(x, frame, clf=reads, cf=true_counterfactual, attribute_reader=lambda im: np.zeros(len(im), dtype=int))
    assert "the attribute reader itself reads only" in blind.rows.loc["ECA", "verdict"]
    assert np.isfinite(t.loc["DP", "pvalue"])  # the rows that need no generator are still there


def test_a_generator_that_loses_the_image_fails_composition_and_reversibility(marks):
    x, frame = marks
    rng = np.random.default_rng(1)

    def noisy(im, pa, pa_star):  # effective, but repaints the whole image
        out = true_counterfactual(im, pa, pa_star)
        return np.clip(out + rng.normal(0, 0.15, out.shape), 0, 1)

    r = run(x, frame, clf=reads, cf=noisy)
    t = r.rows
    assert t.loc["generator composition", "ci_high"] > GATE_DEFAULTS["composition"]
    assert t.loc["generator composition", "verdict"].startswith("fail")
    assert "composition (" in t.loc["ECA", "verdict"] and "reversibility (" in t.loc["ECA", "verdict"]
    # a stricter threshold than the interval allows fails even the true counterfactual's effectiveness
    strict = run(x, frame, gate={"effectiveness": 1.0})
    assert strict.rows.loc["generator effectiveness", "verdict"].startswith("fail")
    assert strict.provenance["gate"] == {**GATE_DEFAULTS, "effectiveness": 1.0}


def test_generator_forms_and_torch_module_give_the_same_report(marks):
    import torch

    x, frame = marks
    base = run(x, frame, clf=reads)

    class Model:  # a CounterfactualModel over {"x", "group", "site"}
        def counterfactual(self, obs, do):
            return {"x": true_counterfactual(obs["x"], obs, {**obs, **do})}

    class Net(torch.nn.Module):  # the same classifier as a module returning logits
        def forward(self, im):
            flat = im[:, :, 5:13, 5:13].flatten(1).max(1).values
            corner = im[:, :, :4, :4].flatten(1).mean(1)
            return 30 * (flat + 0.6 * (corner - BASE) - 0.55)

    shared = ReusedCounterfactual(true_counterfactual)
    for r in (
        run(x, frame, clf=reads, cf=Model()),
        run(x, frame, clf=Net(), cf=shared),
        run(x, frame, clf=reads, cf=shared),
    ):
        for name in ("ECA", "generator effectiveness", "generator composition"):
            assert r.rows.loc[name, "estimate"] == pytest.approx(base.rows.loc[name, "estimate"], abs=1e-6)
    assert shared.calls == 3  # two audits, three distinct generator calls
    assert run(x, frame, clf=Net()).provenance["model"].startswith("sha256:")

    def wrap(model):
        return lambda im: model(im)  # the same source around different models: different hashes

    assert run(x, frame, clf=wrap(reads)).provenance["model"] != run(x, frame, clf=wrap(ignores)).provenance["model"]


def test_unbounded_scores_have_no_accuracy_but_keep_their_checks(marks):
    x, frame = marks
    r = run(x, frame, clf=lambda im: 10 * (reads(im) - 0.5))  # a margin, not a probability
    assert r.rows.loc["accuracy (0)", "verdict"].startswith("not estimable: the predictions are scores")
    assert "of scores change" in r.rows.loc["ECA", "verdict"] and r.rows.loc["ECA", "estimate"] < 0.01


def test_levels_pick_two_of_three(marks):
    x, frame = marks
    three = frame.assign(group=np.where(np.arange(len(frame)) % 9 == 0, 2, frame.group))
    r = run(x, three, levels=(0, 1), cf=lambda im, pa, ps: true_counterfactual(im, pa, ps))
    assert r.provenance["n_rows"] == int((three.group != 2).sum())
    assert r.provenance["group_counts"] == {"0": int((three.group == 0).sum()), "1": int((three.group == 1).sum())}


def test_json_validates_and_same_seed_same_report(marks, tmp_path):
    import jsonschema

    docs = []
    for i in range(2):
        docs.append(json.loads(run(*marks, clf=reads).to_json(tmp_path / f"r{i}.json").read_text()))
    jsonschema.validate(docs[0], load_schema())
    assert docs[0]["provenance"]["kind"] == "images" and docs[0]["provenance"]["image_shape"] == [1, SIZE, SIZE]
    for doc in docs:
        doc.pop("timing")
    assert docs[0] == docs[1]
    broken = json.loads(json.dumps(docs[0]))
    del broken["provenance"]["gate"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, load_schema())
    gated = json.loads((tmp_path / "r0.json").read_text())
    assert {c["check"] for c in gated["checks"]} >= {
        "generator composition",
        "generator effectiveness",
        "ECA",
        "CIT-LR",
        "EO",
    }


def test_html_is_one_self_contained_page_with_the_figure(marks, tmp_path):
    page = run(*marks, clf=reads).to_html(tmp_path / "r.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and "generator effectiveness" in page and "gate" in page
    assert 'src="http' not in page  # nothing is fetched (links to the book's pages are allowed)


def test_the_audit_trains_its_own_reader_and_reports_its_accuracy(marks, tmp_path, monkeypatch):
    monkeypatch.setenv("CFLIB_ROOT", str(tmp_path))  # the model cache goes under tmp_path/_build
    x, frame = marks
    r = run(x, frame, clf=reads, attribute_reader=None)
    t = r.rows
    assert t.loc["attribute reader", "ci_low"] > 0.9 and "held-out half" in t.loc["attribute reader", "verdict"]
    assert t.loc["generator effectiveness", "verdict"].startswith("pass")
    assert "SmallCNN" in r.provenance["attribute_reader"] and list(
        (tmp_path / "_build" / "cache" / "models").glob("audit-reader-*.pt")
    )


def test_train_generator_at_tiny_size(tmp_path, monkeypatch):
    """counterfactual='train' fits the CLDM+D on the images (cached) and the audit runs its gate on it."""
    monkeypatch.setenv("CFLIB_ROOT", str(tmp_path))
    x, frame = corner_marks(64, seed=3)
    opts = {
        "config": {"latent_channels": 2, "vae_channels": [8, 8], "unet_channels": [16, 16]},
        "fit": {"vae_epochs": 1, "diffusion_epochs": 1, "batch_size": 32},
        "counterfactual": {"steps": 3},
        "cache_dir": str(tmp_path / "models"),
    }
    r = run(x, frame, clf=reads, cf="train", parents=["site"], train_options=opts)
    assert r.provenance["counterfactual"].startswith("CLDM+D trained here") and list(
        (tmp_path / "models").glob("ldm-*.pt")
    )
    assert {"generator composition", "generator reversibility", "generator effectiveness"} <= set(r.rows.index)
    again = run(x, frame, clf=reads, cf="train", parents=["site"], train_options=opts)  # loaded from the cache
    assert again.rows.loc["generator composition", "estimate"] == r.rows.loc["generator composition", "estimate"]


def test_audit_is_reachable_from_cflib_audit():
    import cflib.audit

    assert cflib.audit.audit_images is audit_images and "audit_images" in cflib.audit.__all__


# ----------------------------------------------------------------------------------------------------
# Malformed calls: one clear line naming the argument and the fix, and nothing written
# ----------------------------------------------------------------------------------------------------
def _bad(**over):
    def call(x, frame):
        args = {"predict": reads, "images": x, "attributes": frame, **over}
        return run(args.pop("images"), args.pop("attributes"), clf=args.pop("predict"), **args)

    return call


def _images(transform):
    def call(x, frame):
        return run(transform(x), frame)

    return call


def _frame(transform):
    def call(x, frame):
        return run(x, transform(frame))

    return call


MALFORMED = [
    case("images-string", TypeError, ("images", "(n, C, H, W)"), _bad(images="pictures")),
    case("images-3d", ValueError, ("images", "images[:, None]"), _images(lambda x: x[:, 0])),
    case("images-0-255", ValueError, ("images", "[0, 1]", "divide by 255"), _images(lambda x: x * 255)),
    case("images-negative", ValueError, ("images", "rescale"), _images(lambda x: x - 0.5)),
    case(
        "images-nan",
        ValueError,
        ("images", "NaN"),
        _images(lambda x: np.where(np.arange(x.size).reshape(x.shape) == 7, np.nan, x)),
    ),
    case("attributes-array", TypeError, ("attributes", "DataFrame"), _bad(attributes=np.zeros((400, 2)))),
    case("attributes-short", ValueError, ("attributes", "one row per image"), _frame(lambda f: f.iloc[:-1])),
    case("attribute-missing", ValueError, ("attribute", "'race'"), _bad(attribute="race")),
    case(
        "attribute-three-levels",
        ValueError,
        ("attribute", "levels=(x0, x1)"),
        _frame(lambda f: f.assign(group=np.arange(len(f)) % 3)),
    ),
    case("attribute-constant", ValueError, ("attribute", "constant"), _frame(lambda f: f.assign(group=1))),
    case("outcome-not-binary", ValueError, ("outcome", "binary"), _frame(lambda f: f.assign(y=np.arange(len(f)) % 4))),
    case("parents-missing", ValueError, ("parents", "'hospital'"), _bad(parents=["hospital"])),
    case("predict-not-callable", TypeError, ("predict", "callable"), _bad(predict=42)),
    case(
        "predict-wrong-length",
        ValueError,
        ("predict", "one value per image"),
        _bad(predict=lambda im: np.zeros(len(im) + 1)),
    ),
    case("predict-nan", ValueError, ("predict", "NaN"), _bad(predict=lambda im: np.full(len(im), np.nan))),
    case(
        "generator-wrong-shape",
        ValueError,
        ("counterfactual", "shape"),
        _bad(counterfactual=lambda im, pa, ps: im[:, :, :8]),
    ),
    case("generator-nan", ValueError, ("counterfactual", "NaN"), _bad(counterfactual=lambda im, pa, ps: im * np.nan)),
    case("generator-range", ValueError, ("counterfactual", "[0, 1]"), _bad(counterfactual=lambda im, pa, ps: im * 255)),
    case("generator-string", ValueError, ("counterfactual", "'train'"), _bad(counterfactual="trian")),
    case("generator-number", TypeError, ("counterfactual", "f(images, pa, pa_star)"), _bad(counterfactual=3)),
    case(
        "reader-wrong-length",
        ValueError,
        ("attribute_reader", "one value per image"),
        _bad(attribute_reader=lambda im: np.zeros(len(im) - 1)),
    ),
    case(
        "reader-wrong-values",
        ValueError,
        ("attribute_reader", "levels"),
        _bad(attribute_reader=lambda im: np.full(len(im), 7.0)),
    ),
    case("gate-unknown", ValueError, ("gate", "'realism'"), _bad(gate={"realism": 3})),
    case("gate-out-of-range", ValueError, ("gate['effectiveness']",), _bad(gate={"effectiveness": 1.5})),
    case("epsilon", ValueError, ("epsilon",), _bad(epsilon=-0.1)),
    case("alpha", ValueError, ("alpha",), _bad(alpha=1.5)),
    case("z-missing", ValueError, ("z", "'age'"), _bad(z=["age"])),
    case("train-options-without-train", ValueError, ("train_options", "'train'"), _bad(train_options={"fit": {}})),
]


@pytest.mark.parametrize("c", MALFORMED, ids=[c.id for c in MALFORMED])
def test_malformed_calls_give_one_clear_line_and_write_nothing(marks, c, tmp_path, monkeypatch):
    monkeypatch.setenv("CFLIB_ROOT", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    one_clear_line(c, *marks)
    assert not list(tmp_path.iterdir()), "a malformed call wrote files"


def test_enough_malformed_cases():
    assert len(MALFORMED) >= 15


# ----------------------------------------------------------------------------------------------------
# cflib audit with an image config
# ----------------------------------------------------------------------------------------------------
MODULE = """
import numpy as np

BASE, TRACE = 0.3, 0.35


def classifier(x):
    corner = x[:, :, :4, :4].reshape(len(x), -1).mean(1)
    return 1 / (1 + np.exp(-30 * (x[:, :, 5:13, 5:13].reshape(len(x), -1).max(1) + 0.6 * (corner - BASE) - 0.55)))


def counterfactual(x, pa, pa_star):
    mark = np.zeros(x.shape[1:], dtype=bool)
    mark[:, :4, :4] = True
    delta = np.asarray(pa_star["group"], float) - np.asarray(pa["group"], float)
    return np.clip(x + (TRACE * delta)[:, None, None, None] * mark, 0, 1)


def reader(x):
    return (x[:, :, :4, :4].reshape(len(x), -1).mean(1) > BASE + TRACE / 2).astype(int)
"""


def _image_config(tmp_path, x, frame, **over):
    import yaml

    np.savez(tmp_path / "marks.npz", images=x, **{c: frame[c].to_numpy() for c in frame.columns})
    (tmp_path / "imgmodel.py").write_text(MODULE)
    cfg = {
        "images": "marks.npz",
        "attribute": "group",
        "outcome": "y",
        "classifier": "imgmodel:classifier",
        "counterfactual": "imgmodel:counterfactual",
        "attribute_reader": "imgmodel:reader",
        **over,
    }
    (tmp_path / "audit.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path / "audit.yaml"


def test_cli_audits_an_image_config_end_to_end(tmp_path):
    x, frame = corner_marks(120, seed=5)
    cfg = _image_config(tmp_path, x, frame)
    res = subprocess.run(
        [sys.executable, "-m", "cflib.cli", "audit", str(cfg), "--out", str(tmp_path / "out"), "--quiet"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert res.returncode == 0, res.stderr
    assert "generator effectiveness" in res.stdout and "CIT-LR" in res.stdout
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    import jsonschema

    jsonschema.validate(doc, load_schema())
    checks = {c["check"]: c for c in doc["checks"]}
    assert checks["ECA"]["ci_high"] < 1 and checks["generator effectiveness"]["verdict"].startswith("pass")
    written = {p.name for p in (tmp_path / "out").iterdir()}
    assert written == {"report.html", "report.json", "model_card.md"}  # the same three files as a tabular config


def test_png_folder_with_a_csv_reads_like_the_npz(tmp_path):
    from PIL import Image

    x, frame = corner_marks(12, seed=6)
    folder = tmp_path / "pngs"
    folder.mkdir()
    names = []
    for i, im in enumerate(x):
        names.append(f"img{i:02d}.png")
        Image.fromarray(np.round(im[0] * 255).astype(np.uint8)).save(folder / names[-1])
    frame.assign(file=names).to_csv(folder / "attributes.csv", index=False)
    xs, fs = load_images(folder)
    assert xs.shape == x.shape and np.abs(xs - x).max() <= 0.5 / 255 + 1e-6
    pd.testing.assert_frame_equal(fs, frame)


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"colour": "red"}, "unknown key"),
        ({"images": "missing.npz"}, "does not exist"),
        ({"images": "audit.yaml"}, "an .npz file or a folder"),
        ({"classifier": "nomodule:f"}, "cannot import module 'nomodule'"),
        ({"classifier": "model.pt"}, "TorchScript file"),
        ({"counterfactual": "imgmodel:nothing"}, "has no attribute 'nothing'"),
        ({"attribute": "race"}, "'race' is not in attributes"),
        ({"gate": {"effectiveness": 2}}, "gate"),
    ],
)
def test_malformed_image_configs_give_one_line_and_write_nothing(tmp_path, over, match):
    x, frame = corner_marks(40, seed=7)
    cfg = _image_config(tmp_path, x, frame, **over)
    with pytest.raises((ValueError, FileNotFoundError, TypeError), match=match) as info:
        audit_from_config(cfg, tmp_path / "out", progress=False)
    assert "\n" not in str(info.value)
    assert not (tmp_path / "out").exists()


def test_torchscript_classifier_in_a_config(tmp_path):
    import torch

    class Net(torch.nn.Module):
        def forward(self, im):
            corner = im[:, :, :4, :4].flatten(1).mean(1)
            return 30 * (im[:, :, 5:13, 5:13].flatten(1).max(1).values + 0.6 * (corner - 0.3) - 0.55)

    torch.jit.script(Net()).save(str(tmp_path / "net.pt"))
    x, frame = corner_marks(80, seed=8)
    cfg = _image_config(tmp_path, x, frame, classifier="net.pt")
    r = audit_from_config(cfg, tmp_path / "out", progress=False)
    ref = run(x, frame, clf=reads, parents=[])
    assert r.rows.loc["ECA", "estimate"] == pytest.approx(ref.rows.loc["ECA", "estimate"])


def test_chapter_claims_rule(marks, fresh_claims):
    """claims_03 (auditing notebook 03): I1 needs the reader flagged and the ignorer cleared on a generator that passed
    the gate, undecided when the gate stopped it; I2 needs the identity stopped."""
    from cflib.experiments.auditing import claims_03

    x, frame = marks
    good = {
        "reads": run(x, frame, clf=reads),
        "ignores": run(x, frame, clf=ignores),
        "identity": run(x, frame, clf=reads, cf=identity),
        "alpha": 0.05,
    }
    out = claims_03(good).set_index("key")
    assert out.loc["I1", "verdict"] == "reproduced" and out.loc["I2", "verdict"] == "reproduced"
    swapped = claims_03({**good, "ignores": good["reads"]}).set_index("key")  # a flagged "ignorer" breaks I1
    assert swapped.loc["I1", "verdict"] == "not reproduced"
    stopped = claims_03({**good, "reads": good["identity"]}).set_index("key")
    assert stopped.loc["I1", "verdict"] == "undecided at this scale" and stopped.loc["I1", "note"]
    fooled = claims_03({**good, "identity": good["reads"]}).set_index("key")  # a generator that passed is not "stopped"
    assert fooled.loc["I2", "verdict"] == "not reproduced"


def test_config_with_a_generator_trained_here(tmp_path, monkeypatch):
    """`counterfactual: train` in a config fits the CLDM+D on the images (tiny settings) and writes the report."""
    monkeypatch.setenv("CFLIB_ROOT", str(tmp_path))
    x, frame = corner_marks(64, seed=9)
    opts = {
        "config": {"latent_channels": 2, "vae_channels": [8, 8], "unet_channels": [16, 16]},
        "fit": {"vae_epochs": 1, "diffusion_epochs": 1, "batch_size": 32},
        "counterfactual": {"steps": 3},
        "cache_dir": "models",
    }
    cfg = _image_config(tmp_path, x, frame, counterfactual="train", parents=["site"], train_options=opts)
    r = audit_from_config(cfg, tmp_path / "out", progress=False)
    assert r.provenance["counterfactual"].startswith("CLDM+D trained here")
    assert json.loads((tmp_path / "out" / "report.json").read_text())["provenance"]["kind"] == "images"
    assert list((tmp_path / "models").glob("ldm-*.pt"))  # the cache folder is read relative to the config file
