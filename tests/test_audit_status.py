"""Four statuses against stated tolerances, the gate that never passes on nothing, and CF-CLOT per direction.

Images no chapter uses (the corner marks of tests/test_audit_images.py) and classifiers whose share of flipped
decisions is known exactly: the classifier says 1 when the corner is bright *and* the image is one of ``k`` chosen
by a pixel the counterfactual does not touch, so do(group) flips exactly those ``k`` decisions (0 -> 1 for group 0,
1 -> 0 for group 1: flips that go both ways).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from cflib.audit import audit, load_schema
from cflib.audit.status import TOLERANCE_SOURCES, TOLERANCES, check_tolerances, decide_status, row_status
from cflib.fairness.sfm import StandardFairnessModel
from tests.test_audit_images import (
    BASE,
    TRACE,
    _image_config,
    corner_marks,
    identity,
    ignores,
    run,
    true_counterfactual,
)


def flipper(x_ref: np.ndarray, k: int):
    """A classifier whose decision do(group) flips on exactly ``k`` of the images ``x_ref``: those with the ``k``
    largest values of the bottom-right pixel (noise the counterfactual leaves alone)."""
    key = x_ref[:, 0, -1, -1]
    cut = np.sort(key)[-k] if k else np.inf

    def clf(x: np.ndarray) -> np.ndarray:
        corner = x[:, :, :4, :4].reshape(len(x), -1).mean(1) > BASE + TRACE / 2
        return (corner & (x[:, 0, -1, -1] >= cut)).astype(float)

    return clf


def test_decide_status_on_an_interval_and_a_region():
    assert decide_status(0.02, -0.01, 0.05, (-0.1, 0.1))[0] == "clear"
    assert decide_status(0.3, 0.2, 0.4, (-0.1, 0.1))[0] == "flagged"
    assert decide_status(-0.3, -0.4, -0.2, (-0.1, 0.1))[0] == "flagged"
    st, n = decide_status(0.05, -0.05, 0.15, (-0.1, 0.1), n=100)
    # half-width 0.1, distance to the edge 0.05: an interval half as wide, four times the units
    assert st == "inconclusive" and n == 400
    st, n = decide_status(0.15, 0.05, 0.25, (-0.1, 0.1), n=100)
    assert st == "inconclusive" and n == 400
    assert decide_status(0.1, 0.0, 0.2, (-0.1, 0.1), n=100) == ("inconclusive", math.inf)
    assert decide_status(math.nan, math.nan, math.nan, (-0.1, 0.1))[0] == "not estimable"
    assert decide_status(0.99, 0.985, 0.995, (0.98, math.inf))[0] == "clear"  # ECA >= 0.98


def test_an_inconclusive_row_says_why_in_words_that_fit_its_sample_size():
    # no sample size behind the row (an intersectional comparison): the interval straddles; on the edge: no size decides
    row = {"estimate": 0.236, "ci_low": -0.0946, "ci_high": 0.445, "pvalue": 0.47, "verdict": ""}
    out = row_status("FPR difference [a & b vs a & c]", row, 0.05, TOLERANCES, None)
    assert out["status"] == "inconclusive" and out["status_reason"] == "the interval straddles the tolerance"
    on_edge = {**row, "estimate": TOLERANCES["DP"], "ci_low": 0.0, "ci_high": 0.2}
    out = row_status("DP", on_edge, 0.05, TOLERANCES, 100)
    assert out["n_to_decide"] == math.inf and "no sample size decides it" in out["status_reason"]
    out = row_status("DP", {**row, "estimate": 0.15, "ci_low": 0.05, "ci_high": 0.25}, 0.05, TOLERANCES, 100)
    assert out["status_reason"] == "about 400 units would decide it at the observed estimate"


def test_every_tolerance_has_a_source_and_bad_tolerances_are_refused():
    assert set(TOLERANCES) == set(TOLERANCE_SOURCES)
    assert check_tolerances({"DP": 0.05})["DP"] == 0.05
    with pytest.raises(ValueError, match="tolerances: unknown check"):
        check_tolerances({"XYZ": 0.1})
    with pytest.raises(ValueError, match=r"tolerances\['ECA'\]"):
        check_tolerances({"ECA": 1.5})
    with pytest.raises(TypeError, match="tolerances must be a dict"):
        check_tolerances(0.1)


@pytest.fixture(scope="module")
def thousand():
    return corner_marks(1000, seed=3)


@pytest.mark.parametrize("k", [0, 5])
def test_invariant_and_half_percent_flips_are_clear_at_eca_tolerance_002(thousand, k):
    x, frame = thousand
    clf = ignores if k == 0 else flipper(x, k)
    r = run(x, frame, clf=clf, tolerances={"ECA": 0.02})
    row = r.rows.loc["ECA"]
    assert row["estimate"] == pytest.approx(1 - k / len(x))
    assert row["status"] == "clear" and row["ci_low"] >= 0.98 and row["tolerance"] == 0.02
    assert r.gate(require_clear="ECA") == [] and r.gate("ECA") == []
    if k:  # the same classifier at tolerance 0 (any flip is too many): the interval lies below 1
        assert run(x, frame, clf=clf, tolerances={"ECA": 0.0}).rows.loc["ECA", "status"] == "flagged"


def test_forty_percent_flips_both_ways_are_flagged_by_eca_and_by_cfclot_per_direction(thousand):
    x, frame = thousand
    clf = flipper(x, 400)
    # N-TE is on a squared scale: a shift of a positive rate from 0 to 0.4 within a direction is an N-TE of at most
    # 0.4^2 / 1.24 = 0.13 (nte_bernoulli, r = 0), about 0.06 at the median bandwidth; epsilon 0.02 tolerates ~0.15
    r = run(x, frame, clf=clf, tolerances={"CF-CLOT": 0.02})
    t = r.rows
    assert t.loc["ECA", "estimate"] == pytest.approx(0.6) and t.loc["ECA", "status"] == "flagged"
    assert t.loc["CF-CLOT", "status"] == "flagged" and t.loc["CF-CLOT", "ci_low"] > 0.02
    # each direction alone sees the flips; the pooled comparison of the two mixtures (the old row) barely does
    per = r.details["CF-CLOT"]
    assert per["x0 -> x1"].statistic > 0.04 and per["x1 -> x0"].statistic > 0.04
    from cflib.stats.closeness import cfclot_test

    y, y_cf = clf(x), clf(true_counterfactual(x, frame, {"group": 1 - frame.group}))
    pooled = cfclot_test(y, y_cf, 0.02, seed=0)
    assert pooled.statistic < min(per["x0 -> x1"].statistic, per["x1 -> x0"].statistic)
    assert set(r.gate("ECA,CF-CLOT")) == {"ECA", "CF-CLOT"}


def test_forty_images_with_five_percent_flips_are_inconclusive():
    x, frame = corner_marks(40, seed=4)
    r = run(x, frame, clf=flipper(x, 2), tolerances={"ECA": 0.02})
    row = r.rows.loc["ECA"]
    assert row["estimate"] == pytest.approx(0.95) and row["status"] == "inconclusive"
    assert row["ci_low"] < 0.98 < row["ci_high"] and row["n_to_decide"] > 40
    assert "would decide it" in row["status_reason"] and "Inconclusive" in r.plain_summary()
    assert r.gate("ECA") == [] and r.gate(require_clear="ECA") == ["ECA"]


def test_identity_generator_is_not_estimable_and_the_gate_fails(thousand, tmp_path):
    x, frame = corner_marks(120, seed=5)
    r = run(x, frame, clf=ignores, cf=identity)
    assert (r.status()[["ECA", "CF-CLOT", "CIT-LR"]] == "not estimable").all()
    assert r.gate("ECA") == ["ECA"] and r.gate("DP") == []
    r.to_junit(tmp_path / "j.xml", fail_on="ECA")
    xml = (tmp_path / "j.xml").read_text()
    assert 'failures="1"' in xml and 'failure type="not estimable"' in xml
    cfg = _image_config(tmp_path, x, frame, counterfactual="imgmodel:identity")
    with open(tmp_path / "imgmodel.py", "a") as fh:
        fh.write("\n\ndef identity(x, pa, pa_star):\n    return np.array(x, copy=True)\n")
    res = subprocess.run(
        [sys.executable, "-m", "cflib.cli", "audit", str(cfg), "--out", str(tmp_path / "o"), "--quiet"]
        + ["--fail-on", "ECA", "--junit", str(tmp_path / "cli.xml")],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ""},
    )
    assert res.returncode == 1, res.stderr
    assert "ECA (not estimable)" in res.stderr
    assert 'failure type="not estimable"' in (tmp_path / "cli.xml").read_text()
    doc = json.loads((tmp_path / "o" / "report.json").read_text())
    import jsonschema

    jsonschema.validate(doc, load_schema())
    assert {c["check"]: c["status"] for c in doc["checks"]}["ECA"] == "not estimable"


def _tabular(n: int = 1200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    x = (rng.random(n) < 0.5).astype(int)
    w = 0.5 * z + rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(-(z + w)))).astype(int)
    return pd.DataFrame({"x": x, "z": z, "w": w, "y": y})


def _flip_x(frame: pd.DataFrame) -> pd.DataFrame:
    """The true counterfactual rows: the audit hands over the rows with x at the intervened level, and here x
    causes neither z nor w."""
    return frame.copy()


def test_tabular_cfclot_per_direction_sees_a_model_that_says_1_exactly_when_x_is_1():
    """The issue's case: a balanced attribute, a model that says 1 whenever x = 1. Every decision changes under
    do(x), yet the pooled factual and counterfactual outputs have the same distribution (half ones each)."""
    d = _tabular()
    sfm = StandardFairnessModel("x", ["z"], ["w"], "y")

    def says_x(f):
        return f["x"].to_numpy().astype(float)

    r = audit(says_x, d, sfm=sfm, counterfactual=_flip_x, n_boot=0, progress=False)
    row = r.rows.loc["CF-CLOT"]
    assert row["status"] == "flagged" and row["estimate"] > 0.3
    from cflib.stats.closeness import cfclot_test

    y = says_x(d)
    pooled = cfclot_test(y, 1 - y, 0.1, seed=0)
    assert pooled.statistic < 0.01 and not pooled.rejected  # the blind spot of the pooled comparison


def test_tabular_statuses_tolerances_and_words():
    d = _tabular()
    sfm = StandardFairnessModel("x", ["z"], ["w"], "y")

    def fair(f):
        return (f["z"].to_numpy() > 0).astype(float)

    r = audit(fair, d, sfm=sfm, counterfactual=_flip_x, n_boot=0, progress=False, tolerances={"DP": 0.2})
    t = r.rows
    assert t.loc["DP", "tolerance"] == 0.2 and t.loc["EO", "tolerance"] == TOLERANCES["EO"]
    assert t.loc["DP", "status"] == "clear"  # the rates differ by chance only, well inside 0.2
    assert t.loc["ECA", "status"] == "clear" and t.loc["CF-CLOT", "status"] == "clear"
    assert set(r.summary()["status"]) <= {"flagged", "clear", "inconclusive", "not estimable"}
    text = r.plain_summary()
    lo_group = "x = 1" if t.loc["DP", "estimate"] < 0 else "x = 0"
    assert f"{lo_group} receives fewer positive decisions" in text
    doc = r.to_dict()
    import jsonschema

    jsonschema.validate(json.loads(json.dumps(doc)), load_schema())
    assert doc["provenance"]["tolerances"]["DP"] == 0.2
    assert all(c["status"] for c in doc["checks"])
