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
    page = (
        audit(reads_x, d, sfm=SFM, learner="linear", n_boot=0, progress=False).to_html(tmp_path / "r.html").read_text()
    )
    assert "data:image/png;base64," in page and "Ctf-DE" in page and "data_sha256" in page
    # nothing is fetched (no external image, style sheet or script); the only addresses are links to the book
    assert 'src="http' not in page and "<link" not in page and "<script" not in page
    import re

    links = re.findall(r'href="([^"]+)"', page)
    assert links and all(u.startswith("https://") and u.endswith(".html") and "/notebooks/" in u for u in links)
    assert page.index('class="summary"') < page.index('class="checks"')  # the plain-language summary comes first


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
    with pytest.raises(ValueError, match=r"missing values in 'w' \(1 of 2000 rows\).*impute=True"):
        audit(reads_x, d.assign(w=d.w.where(d.index > 0)), sfm=SFM, n_boot=0, progress=False)
    with pytest.raises(ValueError, match=r"infinite values in 'w' \(1\)"):
        audit(reads_x, d.assign(w=d.w.where(d.index > 0, np.inf)), sfm=SFM, n_boot=0, progress=False)
    three = d.assign(x=np.where(d.index % 7 == 0, 2, d.x))
    two_of_three = audit(
        lambda f: f.w.to_numpy(),
        three,
        sfm=StandardFairnessModel("x", ["z"], ["w"], "y", 0, 1),
        n_boot=0,
        learner="linear",
        progress=False,
    )
    assert two_of_three.provenance["n_rows"] == int((three.x != 2).sum())


def test_missing_values_imputed_on_request_and_said(world):
    d, reads_x, _ = world
    holes = d.assign(w=d.w.where(d.index % 50 > 0))  # 40 missing mediator values
    r = audit(lambda f: f.z.to_numpy(), holes, sfm=SFM, n_boot=0, learner="linear", progress=False, impute=True)
    assert r.provenance["imputed"] == {"w": 40}
    assert any("imputed" in w and "'w' (40)" in w for w in r.warnings) and "imputed" in r.plain_summary()
    with pytest.raises(ValueError, match="protected attribute or the outcome cannot be audited"):
        audit(reads_x, d.assign(y=d.y.where(d.index > 0)), sfm=SFM, n_boot=0, progress=False, impute=True)


def test_attribute_with_three_levels_is_audited_pairwise_with_bonferroni(world):
    d, _, _ = world
    three = d.assign(x=np.where(d.index % 7 == 0, "c", np.where(d.x == 1, "b", "a")))
    r = audit(lambda f: f.w.to_numpy(), three, sfm=SFM, n_boot=0, learner="linear", progress=False)
    ref = three.x.value_counts().index[0]  # the most frequent level is the reference
    others = sorted(set(three.x) - {ref})
    assert r.provenance["comparisons"] == [[o, ref] for o in others]
    assert "Bonferroni" in r.provenance["multiplicity"] and "0.05/2" in r.provenance["multiplicity"]
    for o in others:
        assert f"DP [{o} vs {ref}]" in r.rows.index and f"Ctf-DE [{o} vs {ref}]" in r.rows.index
        assert "0.975 interval" in r.rows.loc[f"DP [{o} vs {ref}]", "method"]  # each pair at alpha / 2
    assert list(r.groups.index) == sorted(map(str, set(three.x)))  # one table over every level
    assert r.gate("DP") == [c for c in r.rows.index if c.startswith("DP [") and r.flagged()[c]]
    with pytest.raises(ValueError, match="reference: 'z' is not a level"):
        audit(lambda f: f.w.to_numpy(), three, sfm=SFM, n_boot=0, progress=False, reference="z")
    with pytest.raises(ValueError, match="x0= and x1="):
        audit(lambda f: f.w.to_numpy(), d.assign(x=np.where(d.x == 1, "b", "a")), sfm=SFM, n_boot=0, progress=False)


def _write_config(tmp_path, d, **over):
    d.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "mymodel.py").write_text("def predict(frame):\n    return 0.5 * frame['x'] + frame['w']\n")
    cfg = {
        "data": "data.csv",
        "roles": {"x": "x", "z": ["z"], "w": ["w"], "y": "y"},
        "model": "mymodel:predict",
        "n_boot": 0,
        "learner": "linear",
        **over,
    }
    import yaml

    (tmp_path / "audit.yaml").write_text(yaml.safe_dump(cfg))
    return tmp_path / "audit.yaml"


def test_cli_writes_both_files(world, tmp_path):
    d, _, _ = world
    cfg = _write_config(tmp_path, d)
    env = {**os.environ, "PYTHONPATH": ""}
    res = subprocess.run(
        [sys.executable, "-m", "cflib.cli", "audit", str(cfg), "--out", str(tmp_path / "out"), "--quiet"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0, res.stderr
    assert "Ctf-DE" in res.stdout
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["model_card.md", "report.html", "report.json"]


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
        res = subprocess.run(
            [sys.executable, "-m", "cflib.cli", "audit", str(path), "--out", str(tmp_path / "out")],
            capture_output=True,
            text=True,
        )
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
        r = audit(
            lambda f: f.w.to_numpy() + f.x.to_numpy(),
            d,
            sfm=SFM,
            counterfactual=FlipX(),
            z=["z"],
            n_boot=0,
            learner="linear",
            progress=False,
        )
    assert any(w.startswith("cfclot_test") and "30 pairs" in w for w in r.warnings)


# ---------------------------------------------------------------------------------------------------- issue 29
def labelled_world(n: int = 1500, seed: int = 4) -> pd.DataFrame:
    """Data as it comes: string attribute levels, a string outcome, string and boolean covariates."""
    rng = np.random.default_rng(seed)
    region = rng.choice(["north", "south", "east"], size=n)
    x = (rng.random(n) < np.where(region == "north", 0.3, 0.5)).astype(int)
    school = rng.choice(["A", "B", "C", "D"], size=n, p=[0.4, 0.3, 0.2, 0.1])
    w = 0.6 * x + (school == "A") + rng.normal(size=n)
    owner = rng.random(n) < 0.4
    y = (0.5 * x + w + 0.4 * owner - 0.3 * (region == "south") + rng.normal(size=n)) > 0.8
    return pd.DataFrame(
        {
            "group": np.where(x == 1, "g1", "g0"),
            "region": region,
            "school": school,
            "owner": owner,
            "w": w,
            "label": np.where(y, "yes", "no"),
        }
    )


LSFM = StandardFairnessModel("group", ["region"], ["school", "owner", "w"], "label", "g0", "g1")


def score_model(f: pd.DataFrame) -> np.ndarray:
    return 1 / (1 + np.exp(-(f.w.to_numpy() + 0.8 * (f.group == "g1").to_numpy() - 1.0)))


def test_data_as_it_comes_string_outcome_y1_and_categorical_covariates():
    d = labelled_world()
    with pytest.raises(ValueError, match=r"outcome column 'label' holds labels \['no', 'yes'\].*y1=.*roles.y1"):
        audit(score_model, d, sfm=LSFM, n_boot=0, progress=False)
    with pytest.raises(ValueError, match="y1: 'maybe' is not a value of the outcome column 'label'"):
        audit(score_model, d, sfm=LSFM, n_boot=0, progress=False, y1="maybe")
    for learner in ("linear", "hgb", "rf"):  # every learner reads the string and boolean columns
        r = audit(score_model, d, sfm=LSFM, n_boot=0, progress=False, y1="yes", learner=learner)
        coded = d.assign(label=(d.label == "yes").astype(int))
        assert r.rows.loc["TV (y)", "estimate"] == pytest.approx(
            coded.loc[d.group == "g1", "label"].mean() - coded.loc[d.group == "g0", "label"].mean(), abs=1e-12
        )
    assert r.provenance["roles"]["y1"] == "yes" and r.provenance["decisions"] == "score >= 0.5"


def hand_rates(groups: np.ndarray, dec: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    """The group table computed with plain pandas, the way a reader would check it."""
    f = pd.DataFrame({"g": groups, "d": dec, "y": y})
    out = {}
    for g, s in f.groupby("g"):
        out[str(g)] = {
            "n": len(s),
            "base_rate": s.y.mean(),
            "selection_rate": s.d.mean(),
            "tpr": s.loc[s.y == 1, "d"].mean() if (s.y == 1).any() else np.nan,
            "fpr": s.loc[s.y == 0, "d"].mean() if (s.y == 0).any() else np.nan,
            "ppv": s.loc[s.d == 1, "y"].mean() if (s.d == 1).any() else np.nan,
        }
    return pd.DataFrame.from_dict(out, orient="index")


def test_group_table_equals_rates_computed_directly():
    d = labelled_world()
    r = audit(score_model, d, sfm=LSFM, n_boot=0, progress=False, y1="yes", learner="linear", threshold=0.6)
    want = hand_rates(
        d.group.to_numpy(), (score_model(d) >= 0.6).astype(int), (d.label == "yes").astype(int).to_numpy()
    )
    got = r.groups
    assert list(got.index) == ["g0", "g1"]
    assert (got["n"] == want["n"]).all()
    for c in ("base_rate", "selection_rate", "tpr", "fpr", "ppv"):
        np.testing.assert_allclose(got[c].to_numpy(float), want[c].to_numpy(float), rtol=0, atol=1e-15)
        assert ((got[c + "_low"] <= got[c]) & (got[c] <= got[c + "_high"])).all()
    # DP and EO carry intervals and are the differences of the table's rates (x1 - x0)
    for check, rate in (("DP", "selection_rate"), ("EO", "tpr"), ("FPR difference", "fpr")):
        row = r.rows.loc[check]
        assert row["estimate"] == pytest.approx(got.loc["g1", rate] - got.loc["g0", rate], abs=1e-12)
        assert row["ci_low"] < row["estimate"] < row["ci_high"] and 0 <= row["pvalue"] <= 1
        assert bool(row["flagged"]) == (not row["ci_low"] <= 0 <= row["ci_high"])  # interval and p-value agree


def test_small_groups_are_not_estimable_never_zero():
    from cflib.stats.rates import group_rates

    g = np.array(["a"] * 6 + ["tiny"] * 3)
    dec = np.array([1, 0, 1, 0, 1, 1, 0, 0, 0])
    y = np.array([1, 1, 0, 0, 1, 0, 1, 1, 1])  # 'tiny' has no y = 0 unit and no decision 1
    t = group_rates(g, dec, y)
    assert np.isnan(t.loc["tiny", "fpr"]) and np.isnan(t.loc["tiny", "fpr_low"]) and np.isnan(t.loc["tiny", "ppv"])
    assert (
        "fpr: not estimable (no y = 0)" in t.loc["tiny", "note"]
        and "ppv: not estimable (no decision = 1)" in t.loc["tiny", "note"]
    )
    assert t.loc["tiny", "tpr"] == 0.0 and t.loc["tiny", "tpr_high"] > 0.5  # 0 of 3 is estimable, with a wide interval
    assert t.loc["a", "note"] == ""


def test_wilson_interval_closed_forms_and_published_value():
    from scipy import stats

    from cflib.stats.rates import wilson_interval

    z2 = stats.norm.ppf(0.975) ** 2
    for n in (1, 7, 40, 1000):
        assert wilson_interval(0, n) == pytest.approx((0.0, z2 / (n + z2)), abs=1e-12)
        assert wilson_interval(n, n) == pytest.approx((n / (n + z2), 1.0), abs=1e-12)
        for k in range(0, n + 1, max(1, n // 5)):
            lo, hi = wilson_interval(k, n)
            lo2, hi2 = wilson_interval(n - k, n)
            assert lo == pytest.approx(1 - hi2, abs=1e-12) and hi == pytest.approx(1 - lo2, abs=1e-12)
            # the ends solve (p - k/n)^2 = z^2 p (1 - p) / n, the score test's acceptance boundary
            for e in (lo, hi):
                if 0 < e < 1:
                    assert (e - k / n) ** 2 == pytest.approx(z2 * e * (1 - e) / n, rel=1e-9)
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)  # Newcombe (1998a), example
    assert np.isnan(wilson_interval(0, 0)).all()


def test_newcombe_interval_published_value_and_its_pvalue_inverts_it():
    from cflib.stats.rates import newcombe_difference

    assert tuple(newcombe_difference(48, 80, 56, 70).ci) == pytest.approx(
        (0.0524, 0.3339), abs=5e-5
    )  # Newcombe (1998b), method 10
    for k0, n0, k1, n1 in ((30, 100, 50, 100), (0, 3, 190, 1000), (12, 40, 5, 35), (1, 1, 0, 1)):
        r = newcombe_difference(k0, n0, k1, n1)
        if 1e-12 < r.pvalue < 1:
            end = newcombe_difference(k0, n0, k1, n1, level=1 - r.pvalue).ci
            assert min(abs(end[0]), abs(end[1])) < 1e-9
        for a in (0.01, 0.05, 0.2):
            lo, hi = newcombe_difference(k0, n0, k1, n1, level=1 - a).ci
            assert (lo > 0 or hi < 0) == (r.pvalue < a)
    assert newcombe_difference(0, 3, 190, 1000).pvalue > 0.3  # a group of 3 with no positives is no evidence


def test_difference_outcome_shares_the_fits_and_equals_the_difference():
    d = linear_world(n=600, seed=5).assign(yhat=lambda f: 0.5 * f.w + 0.2 * f.z)
    e = ctf_effects(
        d, SFM, ["y", "yhat"], learner="hgb", n_boot=30, seed=1, ci="percentile", differences={"diff": ("y", "yhat")}
    )
    for m in ("TV", "DE", "IE", "SE"):
        assert e["diff"].estimate[m] == pytest.approx(e["y"].estimate[m] - e["yhat"].estimate[m], abs=1e-12)
    np.testing.assert_allclose(e["diff"].draws, e["y"].draws - e["yhat"].draws, atol=1e-12)
    np.testing.assert_allclose(e["diff"].influence, e["y"].influence - e["yhat"].influence, atol=1e-12)
    alone = ctf_effects(d, SFM, ["y", "yhat"], learner="hgb", n_boot=30, seed=1, ci="percentile")
    assert alone["y"].estimate == e["y"].estimate and alone["yhat"].ci == e["yhat"].ci  # sharing changes nothing else
    two = ctf_effects(
        d,
        SFM,
        ["y", "yhat"],
        learner="hgb",
        n_boot=30,
        seed=1,
        ci="percentile",
        differences={"diff": ("y", "yhat")},
        n_jobs=2,
    )  # folds in two processes: the same numbers
    assert all(two[k].estimate == e[k].estimate and two[k].ci == e[k].ci for k in e)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "cflib.cli", "audit", *args], capture_output=True, text=True)


def test_fail_on_exit_status_and_junit(world, tmp_path):
    import xml.etree.ElementTree as ET

    d, _, _ = world
    # the model reads x: Ctf-DE is flagged; a wide tolerance makes Ctf-SE clear (the config's tolerances: key)
    cfg = _write_config(tmp_path, d, tolerances={"Ctf-SE": 10.0})
    first = _cli(str(cfg), "--out", str(tmp_path / "o0"), "--quiet", "--junit", str(tmp_path / "j0.xml"))
    assert first.returncode == 0, first.stderr  # no gate: the report is written and the job passes
    doc = json.loads((tmp_path / "o0" / "report.json").read_text())
    flagged = [c["check"] for c in doc["checks"] if c["flagged"]]
    # a gate never passes on nothing: --fail-on fails on a flagged or a not-estimable check (issue 35)
    quiet = [c["check"] for c in doc["checks"] if c["status"] in ("clear", "inconclusive")]
    missing = [c["check"] for c in doc["checks"] if c["status"] == "not estimable"]
    unclear = [c["check"] for c in doc["checks"] if c["status"] == "inconclusive"]
    assert "Ctf-DE" in flagged and "Ctf-SE" in quiet and missing
    res = _cli(
        str(cfg),
        "--out",
        str(tmp_path / "o1"),
        "--quiet",
        "--fail-on",
        "Ctf-DE",
        "--junit",
        str(tmp_path / "o1" / "j1.xml"),
    )  # the JUnit file may go into the report's own folder, which the audit makes
    assert res.returncode == 1 and "Ctf-DE" in res.stderr
    res = _cli(str(cfg), "--out", str(tmp_path / "o2"), "--quiet", "--fail-on", ",".join(quiet))
    assert res.returncode == 0, res.stderr
    res = _cli(str(cfg), "--out", str(tmp_path / "o2b"), "--quiet", "--fail-on", missing[0])
    assert res.returncode == 1 and f"{missing[0]} (not estimable)" in res.stderr
    if unclear:  # --require-clear also fails on an inconclusive check
        res = _cli(str(cfg), "--out", str(tmp_path / "o2c"), "--quiet", "--require-clear", unclear[0])
        assert res.returncode == 1 and f"{unclear[0]} (inconclusive)" in res.stderr
    res = _cli(str(cfg), "--out", str(tmp_path / "o3"), "--quiet", "--fail-on", "any")
    assert res.returncode == 1
    for bad, match in (("Nope", "no check 'Nope'"), ("DP,,EO", "empty check name")):
        res = _cli(str(cfg), "--out", str(tmp_path / "o4"), "--quiet", "--fail-on", bad)
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2 and len(lines) == 1 and match in lines[0], res.stderr
        assert not (tmp_path / "o4").exists()
    res = _cli(str(cfg), "--out", str(tmp_path / "o5"), "--junit", str(tmp_path / "no" / "j.xml"))
    assert res.returncode == 2 and "--junit" in res.stderr and not (tmp_path / "o5").exists()
    # JUnit: one test case per check; failures are the flagged checks the gate names, skips the not estimable
    suite = ET.parse(tmp_path / "o1" / "j1.xml").getroot().find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [c["check"] for c in doc["checks"]]
    failed = [c.get("name") for c in cases if c.find("failure") is not None]
    assert failed == ["Ctf-DE"] and suite.get("failures") == "1" and suite.get("tests") == str(len(cases))
    ungated = ET.parse(tmp_path / "j0.xml").getroot().find("testsuite")
    assert sorted(c.get("name") for c in ungated.findall("testcase") if c.find("failure") is not None) == sorted(
        flagged
    )


def test_select_checks_names():
    from cflib.audit import select_checks

    checks = ["TV", "Ctf-DE", "Ctf-DE (white-box)", "TV (y)", "PP (Algorithm 1)", "DP [b vs a]", "DP [c vs a]"]
    assert select_checks(checks, "Ctf-DE") == ["Ctf-DE"]  # not the white-box or the outcome's rows
    assert select_checks(checks, "PP, DP") == ["PP (Algorithm 1)", "DP [b vs a]", "DP [c vs a]"]
    assert select_checks(checks, ["any"]) == checks
    assert "TV (y)" not in select_checks(checks, "model")
    with pytest.raises(ValueError, match="no check 'EO'"):
        select_checks(checks, "EO")
    with pytest.raises(TypeError, match="fail_on"):
        select_checks(checks, 3)


def test_adult_as_it_comes_through_the_command_line(tmp_path):
    """The issue's reader: a scikit-learn pipeline on Adult saved with joblib, the CSV as it ships, `cflib audit`."""
    import xml.etree.ElementTree as ET

    import joblib
    import yaml
    from sklearn.compose import ColumnTransformer
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import OneHotEncoder

    from cflib.data.real import dataset_path

    raw = pd.read_csv(dataset_path("adult")).sample(2500, random_state=0).reset_index(drop=True)
    raw.to_csv(tmp_path / "adult.csv", index=False)
    cols = [
        "sex",
        "age",
        "race",
        "native-country",
        "education-num",
        "marital-status",
        "relationship",
        "workclass",
        "occupation",
        "hours-per-week",
    ]
    cat = [c for c in cols if not pd.api.types.is_numeric_dtype(raw[c])]
    pipe = make_pipeline(
        ColumnTransformer(
            [("c", OneHotEncoder(handle_unknown="ignore", sparse_output=False), cat)], remainder="passthrough"
        ),
        HistGradientBoostingClassifier(max_iter=50, random_state=0),
    )
    pipe.fit(raw[cols], raw["income-per-year"] == ">50K")
    joblib.dump(pipe, tmp_path / "model.joblib")
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    start = readme.index("# audit.yaml")
    cfg = yaml.safe_load(readme[start : readme.index("```", start)])  # the README's config, as a reader copies it
    assert cfg["data"] == "adult.csv" and cfg["model"] == "model.joblib" and cfg["roles"]["y1"] == ">50K"
    cfg["n_boot"] = 20  # seconds, not minutes
    (tmp_path / "audit.yaml").write_text(yaml.safe_dump(cfg))
    res = _cli(
        str(tmp_path / "audit.yaml"),
        "--out",
        str(tmp_path / "out"),
        "--quiet",
        "--fail-on",
        "model",
        "--junit",
        str(tmp_path / "junit.xml"),
    )
    assert res.returncode in (0, 1) and "cflib audited 2500 rows" in res.stdout, res.stderr
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    import jsonschema

    jsonschema.validate(doc, load_schema())
    dec = (pipe.predict_proba(raw[cols])[:, 1] >= 0.5).astype(int)
    want = hand_rates(raw["sex"].to_numpy(), dec, (raw["income-per-year"] == ">50K").astype(int).to_numpy())
    for g in doc["groups"]:
        for c in ("n", "base_rate", "selection_rate", "tpr", "fpr", "ppv"):
            assert g[c] == pytest.approx(want.loc[g["group"], c], abs=1e-12)
    rows = {c["check"]: c for c in doc["checks"]}
    for c in ("DP", "EO", "FPR difference"):
        assert rows[c]["ci_low"] is not None and rows[c]["ci_low"] <= rows[c]["estimate"] <= rows[c]["ci_high"]
    assert rows["Ctf-DE"]["link"].endswith("parity-decomposition/01-sfm-and-tv-decomposition.html")
    assert (res.returncode == 1) == any(c["flagged"] for n, c in rows.items() if "(y)" not in n)
    assert len(ET.parse(tmp_path / "junit.xml").getroot().find("testsuite").findall("testcase")) == len(rows)
    card = (tmp_path / "out" / "model_card.md").read_text()
    assert card.startswith("# Model card") and "## Flagged checks" in card and "| Female |" in card


def test_report_text_formats_pvalues_and_summarises(world):
    from cflib.formatting import format_number

    d, reads_x, _ = world
    r = audit(reads_x, d, sfm=SFM, learner="linear", n_boot=0, progress=False)
    text = r.plain_summary()
    assert text.startswith("cflib audited 2000 rows") and "level 0.05" in text and "p < 0.001" in text
    import re

    assert not re.search(r"\de-\d", text)  # no 1.8e-99
    page_card = r.model_card()
    assert "< 0.001" in page_card and "](https://" in page_card
    shown = r.summary(formatted=True)
    assert list(shown.index) == list(r.rows.index) and not shown["p-value"].str.contains(r"\de|^0$").any()
    assert (shown["p-value"] == "< 0.001").any() and shown.loc["TV", "estimate"] == format_number(
        r.rows.loc["TV", "estimate"]
    )
