"""Claims of the foundations chapter (notebooks 01-03), on small fixed inputs."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from scipy import stats

from cflib import verdicts as vd
from cflib.experiments import calibration as cal
from cflib.experiments import foundations as fnd

from .conftest import verdicts

pytestmark = pytest.mark.usefixtures("fresh_claims")

R, N, U = vd.REPRODUCED, vd.NOT_REPRODUCED, vd.UNDECIDED


# ---------------------------------------------------------------- notebook 01 (F1-F4)
def _axioms(**over):
    return {
        "composition_error": 0.0,
        "effectiveness_error": 0.0,
        "reversibility_error": 3e-13,
        "n_units": 2000,
        "corr_cf": 0.9,
        "corr_int": 0.0,
        **over,
    }


def test_correlation_interval_is_fisher_z():
    iv = vd.correlation_interval(0.6, 103)
    half = stats.norm.ppf(0.975) / 10
    assert (iv.low, iv.high) == pytest.approx((math.tanh(math.atanh(0.6) - half), math.tanh(math.atanh(0.6) + half)))
    assert vd.correlation_interval(1.0, 50).low == 1.0 == vd.correlation_interval(1.0, 50).high  # zero width
    assert not vd.correlation_interval(0.5, 3).defined  # fewer than 4 units: undefined
    with pytest.raises(ValueError, match="r must be a correlation"):
        vd.correlation_interval(1.5, 10)


def test_claims_01_axioms_are_sanity_checks_decided_on_exact_values():
    out = fnd.claims_01(_axioms())
    assert verdicts(out) == {"F1": R, "F2": R, "F3": R, "F4": R}
    assert set(out["kind"]) == {"sanity check"} and out["quote"].str.len().min() > 40
    assert out.set_index("key").loc["F1", "interval"]["low"] == 0.0  # an exact value: zero-width interval


def test_claims_01_fails_on_a_real_deviation_and_on_fresh_noise_that_correlates():
    out = fnd.claims_01(_axioms(effectiveness_error=1e-6, corr_int=0.3))
    assert verdicts(out) == {"F1": R, "F2": N, "F3": R, "F4": N}


def test_claims_01_undecided_when_the_interval_straddles_or_is_undefined():
    assert verdicts(fnd.claims_01(_axioms(corr_cf=0.55, n_units=100)))["F4"] == U  # [0.40, 0.67] contains 0.5
    assert verdicts(fnd.claims_01(_axioms(n_units=3)))["F4"] == U  # no interval on three units


def test_claims_01_names_missing_results():
    with pytest.raises(ValueError, match="corr_int"):
        fnd.claims_01({k: v for k, v in _axioms().items() if k != "corr_int"})


# ---------------------------------------------------------------- notebook 02 (F5)
def _sweep(slopes, n_fit=(25, 100, 400, 1600)):
    return pd.DataFrame(
        [
            {"n_fit": n, "seed": s, "cf_error": 2.0 * n**b, "status": "executed"}
            for s, b in enumerate(slopes)
            for n in n_fit
        ]
    )


def test_seed_slopes_recover_a_power_law_and_drop_failed_points():
    t = _sweep([-0.5, -1.0])
    t.loc[len(t)] = {"n_fit": 50, "seed": 0, "cf_error": 1e6, "status": "failed"}
    assert fnd.seed_slopes(t).to_numpy() == pytest.approx([-0.5, -1.0])
    with pytest.raises(ValueError, match="lacks column"):
        fnd.seed_slopes(t.drop(columns="cf_error"))


def test_claims_02_decides_on_seeds():
    assert verdicts(fnd.claims_02({"table": _sweep([-0.4, -0.5, -0.6])})) == {"F5": R}
    assert verdicts(fnd.claims_02({"table": _sweep([0.4, 0.5, 0.6])})) == {"F5": N}
    # zero variance over seeds: the point decides
    assert verdicts(fnd.claims_02({"table": _sweep([-0.5, -0.5])})) == {"F5": R}


def test_claims_02_undecided_with_one_seed_or_a_wide_interval_says_what_decides():
    out = fnd.claims_02({"table": _sweep([-0.5])}).iloc[0]
    assert out.verdict == U and "three seeds" in out.note
    out = fnd.claims_02({"table": _sweep([-1.5, 0.4])}).iloc[0]  # t(1) interval contains 0
    assert out.verdict == U and "seeds would decide it" in out.note


# ---------------------------------------------------------------- notebook 03 (K rows)
def test_level_band_is_bradleys_liberal_criterion():
    assert cal.level_band("type-I error", 0.05) == (0.025, 0.075)
    assert cal.level_band("coverage", 0.95) == (0.925, 0.975)
    with pytest.raises(ValueError, match="quantity must be"):
        cal.level_band("power", 0.05)


def _row(
    test,
    events,
    n_rep,
    *,
    quantity="type-I error",
    nominal=0.05,
    conservative=False,
    expected_fail="",
    kind="sanity check",
):
    return {
        "test": test,
        "function": "f",
        "quantity": quantity,
        "data": "null data",
        "n": 100,
        "R": n_rep,
        "events": events,
        "rate": events / n_rep,
        "nominal": nominal,
        "ci_low": 0.0,
        "ci_high": 1.0,
        "passed": True,
        "conservative": conservative,
        "expected_fail": expected_fail,
        "quote": "the words",
        "source": "Sec. 1",
        "kind": kind,
        "seconds": 0.0,
    }


def test_claims_calibration_rules_on_fixed_counts():
    rows = [
        _row("calibrated", 50, 1000),
        _row("too few replications", 1, 20),
        _row("anti-conservative", 200, 1000),
        _row("kept to fail", 600, 1000, expected_fail="its form assumes something"),
        _row("Bonferroni", 10, 1000, conservative=True),
        _row("paper's printed form", 84, 1000, expected_fail="printed variance", kind="reproduction"),
        _row("interval", 950, 1000, quantity="coverage", nominal=0.95),
        _row("never rejects", 0, 1000),  # zero variance: the point (0) lies below the band
    ]
    out = cal.claims_calibration(cal.CalibrationResult(pd.DataFrame(rows), 0.99)).set_index("key")
    assert out["verdict"].to_dict() == {"K1": R, "K2": U, "K3": N, "K4": R, "K5": R, "K6": U, "K7": R, "K8": N}
    assert list(out["kind"]) == ["sanity check"] * 5 + ["reproduction", "sanity check", "sanity check"]
    assert "misses its nominal size" in out.loc["K4", "statement"] and "expected to fail" in out.loc["K6", "statement"]
    assert "replications would decide it" in out.loc["K2", "note"] and out.loc["K1", "note"] == ""
    assert out.loc["K1", "interval"]["method"].startswith("99% Clopper-Pearson, 1000 replications")


def test_deciding_replications_grows_until_the_interval_fits_and_gives_up_on_the_boundary():
    rule = cal.claims._row_rule("type-I error", 0.05, False, False)
    n = cal.deciding_replications(0.058, rule, start=1000)
    assert n > 1000 and rule(vd.binomial_interval(round(0.058 * n), n, level=0.99)).verdict == R
    assert cal.deciding_replications(0.075, rule, limit=20_000) is None


def test_claims_calibration_on_a_real_table():
    res = cal.calibration_table(40, cases=["h=marginalize", "Demographic parity"], seed=0)
    out = cal.claims_calibration(res).set_index("key")
    assert out.loc["K1", "verdict"] == R  # the paper's form under dependence misses its level, as claimed
    assert out.loc["K2", "verdict"] == U  # 40 replications cannot place a calibrated rate inside the band
    with pytest.raises(TypeError, match="CalibrationResult"):
        cal.claims_calibration(res.table)


def test_every_case_carries_words_and_only_cfclot_boundary_rows_are_reproductions():
    cases = cal.calibration_cases(small=True)
    assert all(c.quote and c.source for c in cases)
    assert [c.name for c in cases if c.reproduces] == [c.name for c in cases if c.name.startswith("CF-CLOT, normal")]
