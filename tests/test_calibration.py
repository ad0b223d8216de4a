"""Tests of cflib.experiments.calibration: the calibration page and the CIT-LR dependence study (issue 15)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from cflib import claims
from cflib import verdicts as vd
from cflib.experiments import calibration as cal


@pytest.mark.parametrize(("k", "n"), [(0, 10), (3, 10), (10, 10), (50, 1000), (1, 1)])
def test_the_page_reads_clopper_pearson_intervals_at_its_level(k, n):
    """The table's interval is verdicts.binomial_interval at 99% (the page's former copy of it is gone)."""
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=0.99, method="exact")
    assert tuple(vd.binomial_interval(k, n, level=0.99)) == pytest.approx((ci.low, ci.high), abs=1e-12)
    if k in (0, n):
        edge = 0.005 ** (1 / n)
        assert tuple(vd.binomial_interval(k, n, level=0.99)) == pytest.approx(
            (0.0, 1 - edge) if k == 0 else (edge, 1.0)
        )


def test_bad_input_errors():
    with pytest.raises(ValueError, match="matches 0 cases"):
        cal.calibration_table(5, cases=["no such test"])
    with pytest.raises(ValueError, match="matches 3 cases"):
        cal.calibration_table(5, cases=["CIT-LR regression"])
    with pytest.raises(ValueError, match="unknown form"):
        cal.cit_lr_dependence_study(forms=["debiased"])
    with pytest.raises(ValueError, match="n must be an integer >= 4"):
        cal.common_cause_data(2, dependence=1.0)


def test_common_cause_data_dependence_and_invariance():
    y0, a0, z0 = cal.common_cause_data(20_000, dependence=0.0, seed=1)
    _, a2, z2 = cal.common_cause_data(20_000, dependence=2.0, seed=1)
    gap = lambda a, z: z[a == 1, 0].mean() - z[a == 0, 0].mean()  # noqa: E731
    assert abs(gap(a0, z0)) < 0.05 and gap(a2, z2) > 1.0
    # same seed and the same dependence: identical draws; y_hat ignores a when a_effect = 0
    y0b, a0b, z0b = cal.common_cause_data(20_000, dependence=0.0, seed=1)
    assert np.array_equal(y0, y0b) and np.array_equal(a0, a0b) and np.array_equal(z0, z0b)
    y1, _, _ = cal.common_cause_data(20_000, dependence=0.0, a_effect=1.0, seed=1)
    assert y1.mean() > y0.mean() and np.all(y1[a0 == 0] == y0[a0 == 0])


FAST = ["Demographic parity", "Equal opportunity", "delta variance", "generator form"]


def test_calibration_table_passes_fast_cases_and_is_reproducible():
    """Fixed seeds: the default tests' rates lie in their 99% intervals; a subset reproduces the full rows."""
    res = cal.calibration_table(200, cases=FAST, seed=3)
    t = res.table
    assert list(t["R"]) == [200] * 4 and t["passed"].all(), t[["test", "rate", "ci_low", "ci_high"]]
    again = cal.calibration_table(200, cases=FAST[::-1], seed=3).table.set_index("test")
    pd.testing.assert_series_equal(t.set_index("test")["events"], again.loc[t["test"], "events"])
    assert res.unexpected.empty
    # the table speaks the claims' vocabulary (issue 39): 200 replications place no rate in its band, none outside
    assert set(res.summary()["verdict"]) == {"undecided at this scale"}


def test_marginalized_cit_lr_fails_where_expected_and_claims_say_so():
    res = cal.calibration_table(40, cases=["h=marginalize", "Demographic parity"], seed=0)
    row = res.table.iloc[0]
    assert not row["passed"] and row["ci_low"] > 0.05 and row["expected_fail"]
    assert res.unexpected.empty
    claims.reset()
    out = cal.claims_calibration(res).set_index("key")
    assert out.loc["K1", "verdict"] == "reproduced"  # the claim is that it fails
    assert out.loc["K2", "verdict"] == "undecided at this scale"  # 40 replications cannot place the rate in the band
    claims.reset()


def test_dependence_study_default_calibrated_and_paper_form_not():
    t = cal.cit_lr_dependence_study(
        [0.0, 2.0],
        [0.0],
        forms=["debiased, joint g (default)", "marginalize, separate g (paper)"],
        n=600,
        n_rep=25,
        seed=1,
    )
    assert len(t) == 4 and set(t.columns) >= {"rate", "ci_low", "ci_high", "calibrated"}
    default = t[t["form"].str.startswith("debiased")]
    assert default["calibrated"].all() and (default["rate"] <= 0.12).all()
    paper_dep = t[(t["form"].str.startswith("marginalize")) & (t["dependence"] == 2.0)].iloc[0]
    assert paper_dep["ci_low"] > 0.05, paper_dep


def test_reps_add_replications_to_the_named_rows_only():
    """reps={"K10": n} runs that row n times; its first n_rep replications are the plain run's, other rows keep n_rep."""
    names = ["Demographic parity", "Equal opportunity"]  # K9 and K10 of calibration_cases()
    plain = cal.calibration_table(60, cases=names, seed=2).table.set_index("test")
    more = cal.calibration_table(60, cases=names, seed=2, reps={"K10": 150, "K1": 10}).table.set_index("test")
    eo = "Equal opportunity (Welch on y = 1)"
    assert more.loc[eo, "R"] == 150 and more.loc["Demographic parity (Welch)", "R"] == 60
    assert more.loc["Demographic parity (Welch)", "events"] == plain.loc["Demographic parity (Welch)", "events"]
    case = cal.calibration_cases()[9]
    first = case.run(60, 2, 9)
    assert first.sum() == plain.loc[eo, "events"] and np.array_equal(case.run(150, 2, 9)[:60], first)
    assert more.loc[eo, "events"] == case.run(150, 2, 9).sum()
    # a smaller size than n_rep never cuts a row: max(n_rep, reps)
    assert cal.calibration_table(60, cases=names, seed=2, reps={"K10": 5}).table["R"].tolist() == [60, 60]
    for bad, match in (
        ({"K0": 5}, "not a claim key"),
        ({"K99": 5}, "not a claim key"),
        ({"K2": 0}, "positive integer"),
    ):
        with pytest.raises(ValueError, match=match):
            cal.calibration_table(5, cases=names, reps=bad)
    with pytest.raises(TypeError, match="mapping of claim keys"):
        cal.calibration_table(5, cases=names, reps=[("K2", 5)])


def test_undecided_rows_record_their_size_and_the_measured_rate(tmp_path, monkeypatch):
    """An undecided row's needs: the note's size, its replications now and the seconds one took in this run."""
    monkeypatch.setenv("CFLIB_CLAIMS_FILE", str(tmp_path / "c.claims.json"))
    claims.reset()
    res = cal.calibration_table(30, cases=["Demographic parity", "Equal opportunity"], seed=0)
    cal.claims_calibration(res)
    df = claims.claims_table()
    written = json.loads((tmp_path / "c.claims.json").read_text())
    rates = written["values"]["calibration_seconds_per_replication"]
    t = res.table
    for i, r in enumerate(t.itertuples()):
        assert rates[f"K{i + 1}"] == pytest.approx(r.seconds / r.R)
    stored = {c["key"]: c for c in written["claims"]}
    for key, c in stored.items():
        if c["verdict"] == vd.UNDECIDED:
            n = c["needs"]
            assert n["now"] == 30 and n["unit"] == "replications" and n["parameter"] == f"reps.{key}"
            assert f"about {n['size']} replications" in c["note"] and n["size"] > 30
            assert n["seconds_per_unit"] == pytest.approx(rates[key]) and n["gpu"] is False
        else:
            assert c["needs"] is None
    assert len(df) == 2
