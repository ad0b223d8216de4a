"""The decision rules of the reproduction report: intervals, verdicts and their degenerate cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cflib import verdicts as v
from cflib.verdicts import NOT_REPRODUCED, REPRODUCED, UNDECIDED


def test_binomial_interval_is_clopper_pearson_and_exact_at_the_edges():
    iv = v.binomial_interval(7, 20, level=0.9)
    ref = stats.binomtest(7, 20).proportion_ci(confidence_level=0.9, method="exact")
    assert iv.estimate == 7 / 20
    assert iv.low == pytest.approx(ref.low, abs=1e-12) and iv.high == pytest.approx(ref.high, abs=1e-12)
    zero, full = v.binomial_interval(0, 10), v.binomial_interval(10, 10)
    assert zero.low == 0.0 and zero.high == pytest.approx(1 - 0.025 ** (1 / 10))
    assert full.high == 1.0 and full.low == pytest.approx(0.025 ** (1 / 10))


def test_binomial_interval_covers_at_its_level():
    rng = np.random.default_rng(0)
    p, n, reps = 0.3, 40, 2000
    ks = rng.binomial(n, p, size=reps)
    covered = sum(v.binomial_interval(int(k), n).low <= p <= v.binomial_interval(int(k), n).high for k in ks)
    lo = stats.binom.ppf(0.005, reps, 0.95) / reps  # Clopper-Pearson is conservative: at least 95%
    assert covered / reps >= lo


def test_mean_interval_matches_the_t_interval():
    x = np.array([1.0, 2.0, 4.0, 7.0])
    iv = v.mean_interval(x, level=0.95)
    lo, hi = stats.t.interval(0.95, 3, loc=x.mean(), scale=stats.sem(x))
    assert (iv.low, iv.high) == pytest.approx((lo, hi))


def test_zero_variance_is_decided_on_the_point_not_an_infinite_statistic():
    # invariance-test/01 C2's degenerate row: every per-unit difference is 0
    iv = v.mean_interval(np.zeros(2000))
    assert iv.low == iv.high == 0.0 and iv.defined
    assert v.decide_within(iv, -0.01, 0.01).verdict == REPRODUCED
    assert v.decide_above(iv, 0.0).verdict == NOT_REPRODUCED  # 0 is not > 0
    assert v.decide_above(iv, 0.0, inclusive=True).verdict == REPRODUCED


@pytest.mark.parametrize(
    "iv", [v.mean_interval([]), v.mean_interval([3.0]), v.binomial_interval(0, 0), v.bootstrap_interval([1.0])]
)
def test_undefined_intervals_are_undecided(iv):
    assert not iv.defined
    for d in (v.decide_above(iv, 0.5), v.decide_below(iv, 0.5), v.decide_within(iv, 0, 1)):
        assert d.verdict == UNDECIDED


@pytest.mark.parametrize(
    ("low", "high", "above", "below"),
    [
        (0.61, 0.7, REPRODUCED, NOT_REPRODUCED),
        (0.5, 0.59, NOT_REPRODUCED, REPRODUCED),
        (0.55, 0.65, UNDECIDED, UNDECIDED),
        (0.6, 0.7, UNDECIDED, NOT_REPRODUCED),  # touching the boundary: not strictly above
    ],
)
def test_threshold_rules(low, high, above, below):
    iv = v.Interval((low + high) / 2, low, high, "test")
    assert v.decide_above(iv, 0.6).verdict == above
    assert v.decide_below(iv, 0.6).verdict == below


def test_inclusive_threshold_counts_the_boundary_for_the_paper():
    iv = v.Interval(0.65, 0.6, 0.7, "test")
    assert v.decide_above(iv, 0.6, inclusive=True).verdict == REPRODUCED
    assert v.decide_below(v.Interval(0.55, 0.5, 0.6, "t"), 0.6, inclusive=True).verdict == REPRODUCED


def test_within_band():
    assert v.decide_within(v.Interval(0, -0.1, 0.1, "t"), -0.2, 0.2).verdict == REPRODUCED
    assert v.decide_within(v.Interval(0.5, 0.3, 0.6, "t"), -0.2, 0.2).verdict == NOT_REPRODUCED
    assert v.decide_within(v.Interval(0.2, 0.1, 0.3, "t"), -0.2, 0.2).verdict == UNDECIDED
    with pytest.raises(ValueError, match="low must be <= high"):
        v.decide_within(v.Interval(0, 0, 0, "t"), 1, 0)


def test_combine():
    R, N, U = REPRODUCED, NOT_REPRODUCED, UNDECIDED
    assert v.combine([R, R]).verdict == R
    assert v.combine([R, U]).verdict == U
    assert v.combine([U, N, R]).verdict == N
    assert v.combine([]).verdict == U
    with pytest.raises(ValueError, match="decisions"):
        v.combine([v.NOT_CHECKABLE])


def test_bootstrap_interval_is_seeded_and_brackets_the_mean():
    x = np.random.default_rng(1).normal(2.0, 1.0, size=200)
    a, b = v.bootstrap_interval(x, seed=3), v.bootstrap_interval(x, seed=3)
    assert a == b and a.low < x.mean() < a.high
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert a.high - a.low == pytest.approx(2 * 1.96 * se, rel=0.15)


def test_normal_and_exact():
    iv = v.normal_interval(1.0, 0.5, level=0.95)
    assert (iv.low, iv.high) == pytest.approx((1 - 1.959964 * 0.5, 1 + 1.959964 * 0.5))
    assert v.exact(3.0).low == v.exact(3.0).high == 3.0


@pytest.mark.parametrize(
    ("call", "exc", "name"),
    [
        (lambda: v.binomial_interval(5, 3), ValueError, "k"),
        (lambda: v.binomial_interval(-1, 3), ValueError, "k"),
        (lambda: v.binomial_interval(1, 3, level=1.5), ValueError, "level"),
        (lambda: v.mean_interval([1.0, float("nan")]), ValueError, "values"),
        (lambda: v.mean_interval(["a"]), TypeError, "values"),
        (lambda: v.normal_interval(1.0, -1.0), ValueError, "se"),
        (lambda: v.normal_interval(float("inf"), 1.0), ValueError, "estimate"),
        (lambda: v.decide_above((0.1, 0.2), 0.5), TypeError, "interval"),
        (lambda: v.decide_above(v.exact(1.0), float("nan")), ValueError, "threshold"),
        (lambda: v.bootstrap_interval([1.0, 2.0], n_boot=0), ValueError, "n_boot"),
        (lambda: v.bootstrap_interval([1.0, 2.0], statistic="mean"), TypeError, "statistic"),
    ],
)
def test_bad_input_names_the_argument(call, exc, name):
    with pytest.raises(exc, match=name) as info:
        call()
    assert "\n" not in str(info.value)


def test_combine_keeps_the_deciding_parts_interval():
    ok = v.decide_above(v.exact(2.0), 1.0, quantity="a")
    straddles = v.decide_above(v.Interval(1.0, 0.5, 1.5, "t"), 1.0, quantity="b")
    fails = v.decide_above(v.Interval(0.2, 0.1, 0.3, "t"), 1.0, quantity="c")
    assert v.combine([ok, straddles]).interval == straddles.interval
    assert v.combine([ok, straddles, fails]).interval == fails.interval
    assert v.combine([ok, ok]).interval == ok.interval
    joint = v.combine([ok, fails], rule="both", detail=True)
    assert (
        joint.rule.startswith("both:")
        and "a > 1" in joint.rule
        and "c > 1" in joint.rule
        and "[0.2 [0.1, 0.3] (t)]" in joint.rule
    )


def test_deciding_size():
    # a t interval of half-width 0.2 around 0.1 on 100 units: clears 0 at 100 * (0.2 / 0.1)^2 = 400 units
    assert v.deciding_size(v.Interval(0.1, -0.1, 0.3, "t"), 0.0, 100) == 400
    assert v.deciding_size(v.Interval(0.1, -0.1, 0.3, "t"), [0.0, 0.5], 100) == 400  # the nearest edge counts
    assert v.deciding_size(v.Interval(0.0, -0.1, 0.1, "t"), 0.0, 100) is None  # on the boundary: no size decides
    assert v.deciding_size(v.mean_interval([1.0]), 0.0, 1) is None  # undefined interval
    cp = v.binomial_interval(58, 1000, level=0.95)
    size = v.deciding_size(cp, 0.05, 1000)
    assert size is not None and size > 1000
    assert not v.binomial_interval(round(0.058 * size), size).low <= 0.05  # decided at that size
    assert v.binomial_interval(round(0.058 * (size - 60)), size - 60).low <= 0.05  # and not much before


def test_seed_interval_is_a_t_interval_over_seed_estimates():
    from scipy.stats import t

    per_seed = [0.1, 0.3, 0.2]
    iv = v.seed_interval(per_seed)
    half = t.ppf(0.975, 2) * np.std(per_seed, ddof=1) / np.sqrt(3)
    assert iv.estimate == pytest.approx(0.2) and iv.high - iv.estimate == pytest.approx(half)
    assert "3 training seeds" in iv.method and "test images" in iv.method
    assert not v.seed_interval([0.4]).defined  # one seed: no spread, undecided by every rule
    assert v.decide_above(v.seed_interval([0.4]), 0).verdict == v.UNDECIDED


def test_one_seed_never_decides_a_model_comparison():
    iv = v.mean_interval([1.0, 1.1, 1.2, 0.9], unit="test images")
    for d in (v.decide_above(iv, 0), v.decide_below(iv, 0)):
        u = v.one_seed(d)
        assert d.verdict != v.UNDECIDED and u.verdict == v.UNDECIDED
        assert u.interval.method.endswith("1 training seed") and d.verdict in u.rule and "one training seed" in u.rule
        assert v.one_seed(u).interval.method.count("training seed") == 1  # idempotent
    with pytest.raises(TypeError, match="decision must be"):
        v.one_seed("reproduced")


def test_combine_keeps_the_deciding_part_and_says_the_parts_as_asked():
    lo = v.decide_above(v.Interval(0.2, 0.1, 0.3, "a"), 0.0, quantity="a")
    hi = v.decide_above(v.Interval(0.9, 0.5, 1.3, "b"), 0.0, quantity="b")
    mid = v.decide_above(v.Interval(0.1, -0.1, 0.3, "c"), 0.0, quantity="c")
    assert v.combine([lo, hi]).interval is lo.interval  # the first part with the joint verdict
    assert v.combine([lo, hi], pick=lambda d: d.interval.high).interval is hi.interval
    assert v.combine([lo, mid, hi]).verdict == UNDECIDED and v.combine([lo, mid, hi]).interval is mid.interval
    rules = v.combine([lo, lo, hi], rule="both", detail="rules").rule
    assert rules.endswith(f"(parts: {lo.rule}; {hi.rule})")  # distinct rules, in order
    named = v.combine({"first": lo, "third": mid}, rule="both", detail="verdicts")
    assert named.rule.endswith(f". Parts: first: {REPRODUCED} at {lo.interval}; third: {UNDECIDED} at {mid.interval}")
    assert named.interval is mid.interval
    assert v.combine({}, rule="none", detail="verdicts").verdict == UNDECIDED
    with pytest.raises(TypeError, match="mapping"):
        v.combine([lo], detail="verdicts")
    with pytest.raises(ValueError, match="detail must be"):
        v.combine([lo], detail="all")


def test_on_substitute_keeps_a_claim_without_a_measurement_undecided():
    """A substitute that gave no number (an undefined interval) has nothing to set beside the paper: still undecided."""
    none = v.Decision(UNDECIDED, v.Interval(float("nan"), float("nan"), float("nan"), "no panels"), "no data")
    assert v.on_substitute(none, "the toy lacks it") is none
    some = v.decide_above(v.exact(0.3), 0.1)
    assert v.on_substitute(some, "the toy lacks it").verdict == "differs with the substitute data"


def test_check_needs_keeps_a_well_formed_size_and_refuses_the_rest():
    good = {
        "size": 8000,
        "unit": "replications",
        "now": 1000,
        "parameter": "reps.K3",
        "seconds_per_unit": 0.01,
        "gpu": False,
    }
    assert v.check_needs(dict(good)) == good
    assert v.check_needs({**good, "seconds_per_unit": None})["seconds_per_unit"] is None
    for bad, match in (
        ({**good, "size": 0}, "size"),
        ({**good, "now": -1}, "now"),
        ({**good, "size": True}, "size"),
        ({**good, "unit": ""}, "unit"),
        ({**good, "seconds_per_unit": -1.0}, "seconds_per_unit"),
        ({**good, "seconds_per_unit": float("nan")}, "seconds_per_unit"),
        ({k: x for k, x in good.items() if k != "gpu"}, "exactly the keys"),
    ):
        with pytest.raises(ValueError, match=match):
            v.check_needs(bad)
    with pytest.raises(TypeError, match="gpu"):
        v.check_needs({**good, "gpu": "no"})
    with pytest.raises(TypeError, match="needs must be a dict"):
        v.check_needs([8000])
