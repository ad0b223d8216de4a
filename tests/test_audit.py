"""The one-call audit: flags a direct effect exactly when the model reads x, a valid JSON, a sendable HTML
page, the same report from the same seed, and one clear line for every malformed input."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LinearRegression

from cflib.audit import audit, audit_from_config, load_schema
from cflib.fairness.effects import ctf_effects
from cflib.fairness.sfm import StandardFairnessModel

SFM = StandardFairnessModel("x", ["z"], ["w"], "y")


def linear_world(n: int = 2000, seed: int = 11) -> pd.DataFrame:
    """A linear SFM no chapter uses: z -> x, (x, z) -> w, (x, z, w) -> y, with a direct effect of 0.5."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=n)
    x = (rng.random(n) < 1 / (1 + np.exp(-0.7 * z))).astype(int)
    w = 0.8 * x + 0.5 * z + rng.normal(size=n)
    y = 0.5 * x + w + 0.3 * z + rng.normal(size=n)
    return pd.DataFrame({"x": x, "z": z, "w": w, "y": y})


@pytest.fixture(scope="module")
def world():
    d = linear_world()
    reads_x = LinearRegression().fit(d[["x", "z", "w"]], d.y)
    reads_zw = LinearRegression().fit(d[["z", "w"]], d.y)
    return d, reads_x, reads_zw


def _flagged(report, check: str) -> bool:
    lo, hi = report.rows.loc[check, ["ci_low", "ci_high"]]
    return bool(lo > 0 or hi < 0)


def test_direct_effect_flagged_only_for_the_model_that_reads_x(world):
    d, reads_x, reads_zw = world
    a = audit(reads_x, d, sfm=SFM, learner="linear", n_boot=50, progress=False)
    b = audit(reads_zw, d, sfm=SFM, learner="linear", n_boot=50, progress=False)
    assert _flagged(a, "Ctf-DE") and _flagged(a, "Ctf-DE (white-box)")
    assert a.rows.loc["Ctf-DE (white-box)", "estimate"] == pytest.approx(reads_x.coef_[0])  # f is linear in x
    assert not _flagged(b, "Ctf-DE")
    assert b.rows.loc["Ctf-DE (white-box)", "estimate"] == 0.0
    assert b.rows.loc["Ctf-DE (white-box)", "verdict"].startswith("no direct effect")
    # both reach the prediction through the mediator, so neither is flagged as free of indirect effects
    assert _flagged(a, "Ctf-IE") and _flagged(b, "Ctf-IE")
    assert a.rows.loc["PP (Algorithm 1)", "verdict"].startswith("FAIL")


def test_report_numbers_equal_the_chapter_functions(world):
    """Cross-check: the report's effects are ctf_effects on the same inputs, seed and learner."""
    d, reads_x, _ = world
    r = audit(reads_x, d, sfm=SFM, learner="linear", n_boot=0, seed=3, progress=False)
    frame = d.assign(_y_hat=reads_x.predict(d[["x", "z", "w"]]))
    frame = frame.assign(_diff=frame.y - frame._y_hat)
    ref = ctf_effects(frame, SFM, ["_y_hat", "y", "_diff"], learner="linear", seed=3, level=0.95)
    for m, name in (("TV", "TV"), ("DE", "Ctf-DE"), ("IE", "Ctf-IE"), ("SE", "Ctf-SE")):
        assert r.rows.loc[name, "estimate"] == ref["_y_hat"].estimate[m]
        assert r.rows.loc[f"{name} (y)", "ci_low"] == ref["y"].ci[m].low


def test_counterfactual_checks(world):
    d, reads_x, reads_zw = world

    class FlipX:  # a CounterfactualModel that intervenes on x alone (the model-level flip test)
        def counterfactual(self, obs, do):
            return {"x": np.asarray(do["x"])}

    a = audit(reads_x, d, sfm=SFM, counterfactual=FlipX(), z=["z"], learner="linear", n_boot=0, progress=False)
    b = audit(reads_zw, d, sfm=SFM, counterfactual=FlipX(), z=["z"], learner="linear", n_boot=0, progress=False)
    assert a.rows.loc["ECA", "estimate"] == 0.0 and b.rows.loc["ECA", "estimate"] == 1.0
    assert b.rows.loc["CF-CLOT", "estimate"] == pytest.approx(0.0, abs=1e-12)
    assert a.rows.loc["CIT-LR", "pvalue"] < 0.05


def test_json_validates_and_same_seed_same_report(world, tmp_path):
    import jsonschema

    d, reads_x, _ = world
    paths = []
    for i in range(2):
        r = audit(reads_x, d, sfm=SFM, learner="linear", n_boot=30, seed=5, progress=False)
        paths.append(r.to_json(tmp_path / f"r{i}.json"))
    docs = [json.loads(p.read_text()) for p in paths]
    jsonschema.validate(docs[0], load_schema())
    for doc in docs:
        doc.pop("timing")
    assert docs[0] == docs[1]
    assert docs[0]["provenance"]["data_sha256"].startswith("sha256:") and docs[0]["provenance"]["seed"] == 5
    broken = dict(docs[0], checks=[{"check": "TV"}])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(broken, load_schema())


def test_html_is_one_self_contained_page(world, tmp_path):
    d, reads_x, _ = world
    page = audit(reads_x, d, sfm=SFM, learner="linear", n_boot=0, progress=False).to_html(tmp_path / "r.html").read_text()
    assert "data:image/png;base64," in page and "Ctf-DE" in page and "data_sha256" in page
    assert 'src="http' not in page and 'href="http' not in page


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"data": "not a frame"}, TypeError, "data must be a pandas DataFrame"),
        ({"data": pd.DataFrame(columns=["x", "z", "w", "y"])}, ValueError, "data is empty"),
        ({"sfm": "x"}, TypeError, "sfm must be"),
        ({"sfm": StandardFairnessModel("x", ["nope"], ["w"], "y")}, ValueError, r"sfm: role column\(s\) \['nope'\]"),
        ({"alpha": 1.5}, ValueError, "alpha must be in"),
        ({"n_boot": -1}, ValueError, "n_boot"),
        ({"business_necessity": ["XE"]}, ValueError, "business_necessity"),
        ({"predict": None}, ValueError, "predict: give the model"),
        ({"predict": lambda f: np.zeros(3)}, ValueError, "predict must give one prediction per row"),
        ({"predict": lambda f: np.full(len(f), np.nan)}, ValueError, "NaN or infinite"),
        ({"z": ["missing"]}, ValueError, r"z: column\(s\) \['missing'\]"),
        ({"predict": 42}, TypeError, "predict must be a callable"),
    ],
)
def test_malformed_api_calls_name_the_argument(world, kwargs, error, match):
    d, reads_x, _ = world
    call = {"predict": reads_x, "data": d, "sfm": SFM, "n_boot": 0, "progress": False, "learner": "linear", **kwargs}
    with pytest.raises(error, match=match):
        audit(call.pop("predict"), call.pop("data"), **call)


def test_constant_nan_and_multilevel_attributes(world):
    d, reads_x, _ = world
    with pytest.raises(ValueError, match="is constant"):
        audit(reads_x, d.assign(x=1), sfm=SFM, n_boot=0, progress=False)
    with pytest.raises(ValueError, match="NaN or infinite"):
        audit(reads_x, d.assign(w=d.w.where(d.index > 0)), sfm=SFM, n_boot=0, progress=False)
    three = d.assign(x=np.where(d.index % 7 == 0, 2, d.x))
    with pytest.raises(ValueError, match="name the two to compare with x0= and x1="):
        audit(lambda f: f.w.to_numpy(), three, sfm=SFM, n_boot=0, progress=False)
    two_of_three = audit(lambda f: f.w.to_numpy(), three, sfm=StandardFairnessModel("x", ["z"], ["w"], "y", 0, 1),
                         n_boot=0, learner="linear", progress=False)
    assert two_of_three.provenance["n_rows"] == int((three.x != 2).sum())


def _write_config(tmp_path, d, **over):
    d.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "mymodel.py").write_text("def predict(frame):\n    return 0.5 * frame['x'] + frame['w']\n")
    cfg = {"data": "data.csv", "roles": {"x": "x", "z": ["z"], "w": ["w"], "y": "y"}, "model": "mymodel:predict",
           "n_boot": 0, "learner": "linear", **over}
    import yaml

    (tmp_path / "audit.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path / "audit.yaml"


def test_cli_writes_both_files(world, tmp_path):
    d, _, _ = world
    cfg = _write_config(tmp_path, d)
    env = {**os.environ, "PYTHONPATH": ""}
    res = subprocess.run([sys.executable, "-m", "cflib.cli", "audit", str(cfg), "--out", str(tmp_path / "out"), "--quiet"],
                         capture_output=True, text=True, env=env)
    assert res.returncode == 0, res.stderr
    assert "Ctf-DE" in res.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["report.html", "report.json"]


@pytest.mark.parametrize(
    ("over", "match"),
    [
        ({"colour": "red"}, "unknown key"),
        ({"data": "missing.csv"}, "does not exist"),
        ({"roles": {"x": "x", "z": ["nope"], "w": ["w"], "y": "y"}}, r"role column\(s\) \['nope'\]"),
        ({"roles": {"x": "x", "y": "nope"}}, "roles.y column 'nope'"),
        ({"roles": {"x": "x", "y": "y", "q": "z"}}, "unknown role"),
        ({"model": "nomodule:predict"}, "cannot import module 'nomodule'"),
        ({"model": "mymodel:nothing"}, "has no attribute 'nothing'"),
        ({"model": "model.pkl"}, "does not exist"),
        ({"model": "justaname"}, "module:function"),
        ({"alpha": 0}, "alpha must be in"),
    ],
)
def test_malformed_configs_give_one_line_and_write_nothing(world, tmp_path, over, match):
    d, _, _ = world
    cfg = _write_config(tmp_path, d, **over)
    with pytest.raises((ValueError, FileNotFoundError, TypeError), match=match):
        audit_from_config(cfg, tmp_path / "out", progress=False)
    assert not (tmp_path / "out").exists()


def test_cli_malformed_yaml_and_constant_attribute_exit_2(world, tmp_path):
    d, _, _ = world
    cfg = _write_config(tmp_path, d.assign(x=0))
    bad = tmp_path / "bad.yaml"
    bad.write_text("data: [unclosed\n")
    for path, match in ((cfg, "is constant"), (bad, "not valid YAML"), (tmp_path / "none.yaml", "does not exist")):
        res = subprocess.run([sys.executable, "-m", "cflib.cli", "audit", str(path), "--out", str(tmp_path / "out")],
                             capture_output=True, text=True)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and match in lines[0], res.stderr
    assert not (tmp_path / "out").exists()


def test_progress_is_shown_on_stderr(world, capsys):
    d, reads_x, _ = world
    audit(reads_x, d.head(400), sfm=SFM, n_boot=0, learner="linear", progress=True)
    assert "audit" in capsys.readouterr().err


def test_compas_report_equals_the_parity_chapter_estimates():
    """The chapter cross-check on real data: the audit of Northpointe's prediction gives the parity chapter's
    ctf_effects numbers (same data, learner, folds and seed) and the paper's TV values."""
    from cflib.fairness.compas import prepare_compas

    compas, sfm = prepare_compas()
    r = audit(None, compas, sfm=sfm, scores=compas["northpointe"], learner="linear", n_boot=0, seed=0, progress=False)
    ref = ctf_effects(compas, sfm, ["northpointe", "two_year_recid"], learner="linear", seed=0)
    for m, name in (("TV", "TV"), ("DE", "Ctf-DE"), ("IE", "Ctf-IE"), ("SE", "Ctf-SE")):
        assert r.rows.loc[name, "estimate"] == pytest.approx(ref["northpointe"].estimate[m], abs=1e-12)
        assert r.rows.loc[f"{name} (y)", "estimate"] == pytest.approx(ref["two_year_recid"].estimate[m], abs=1e-12)
    assert round(r.rows.loc["TV", "estimate"], 4) == 0.1694 and round(r.rows.loc["TV (y)", "estimate"], 4) == 0.0864


def test_chapter_claim_rule():
    from cflib import claims
    from cflib.experiments.auditing import claims_01

    class Fake:
        def __init__(self, tv, tv_y):
            self.rows = pd.DataFrame({"estimate": [tv, tv_y]}, index=["TV", "TV (y)"])

    from cflib.experiments.auditing import paper_tv_band

    # Proposition 3 on the paper's estimates: 6 + 7.73 + 3.75 = 17.48% and -0.08 + 5.06 + 3.17 = 8.15%
    assert paper_tv_band("northpointe") == pytest.approx((0.1748, 0.1748 - 0.0607, 0.1748 + 0.0607))
    assert paper_tv_band("y") == pytest.approx((0.0815, 0.0815 - 0.0536, 0.0815 + 0.0536))
    claims.reset()
    out = claims_01({"northpointe": Fake(0.16943, 0.08640)})
    assert out.verdict.tolist() == ["reproduced"] and out.quote[0] and out.interval[0]["low"] == 0.16943
    claims.reset()
    assert claims_01({"northpointe": Fake(0.2400, 0.0864)}).verdict.tolist() == ["not reproduced"]  # above 23.55%
    claims.reset()
    with pytest.raises(ValueError, match="northpointe"):
        claims_01({})
    claims.reset()


def test_small_groups_are_warned_about_in_the_report(tmp_path):
    """Legal but unreliable input (few units in a group) reaches the report, its JSON and its HTML."""
    import warnings

    from cflib import CflibWarning

    d = linear_world(n=80, seed=2)  # about 37 units in the smaller group: estimable, but fewer than 50
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CflibWarning)
        r = audit(lambda f: f.w.to_numpy(), d, sfm=SFM, n_boot=0, learner="linear", progress=False)
    assert r.warnings and any("units" in w for w in r.warnings)
    assert json.loads(r.to_json(tmp_path / "r.json").read_text())["warnings"] == list(r.warnings)
    assert "Warning:" in r.to_html(tmp_path / "r.html").read_text()


def test_too_few_pairs_for_cf_clot_reach_the_report():
    """CF-CLOT's own warning (too few pairs for its normal threshold) is recorded like the effects' warnings."""
    import warnings

    class FlipX:
        def counterfactual(self, obs, do):
            return {"x": np.asarray(do["x"])}

    d = linear_world(n=28, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = audit(lambda f: f.w.to_numpy() + f.x.to_numpy(), d, sfm=SFM, counterfactual=FlipX(), z=["z"], n_boot=0,
                  learner="linear", progress=False)
    assert any(w.startswith("cfclot_test") and "30 pairs" in w for w in r.warnings)
