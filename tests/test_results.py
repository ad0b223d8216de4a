"""The shared result types (cflib.results): one reject rule, intervals, estimates."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from cflib.results import Estimate, Interval, TestResult, check_alpha


def test_reject_is_pvalue_at_most_alpha():
    r = TestResult(statistic=2.0, pvalue=0.05)
    assert r.reject(0.05) and not r.reject(0.049)
    assert TestResult(statistic=0.0, pvalue=1.0).reject(0.999) is False


@pytest.mark.parametrize("alpha", [0, 1, -0.1, 1.5, math.nan])
def test_reject_refuses_alpha_outside_the_unit_interval(alpha):
    with pytest.raises(ValueError, match="alpha"):
        TestResult(statistic=1.0, pvalue=0.5).reject(alpha)


@pytest.mark.parametrize("alpha", ["0.05", None, True])
def test_reject_refuses_non_numbers(alpha):
    with pytest.raises(TypeError, match="alpha"):
        check_alpha(alpha)


@pytest.mark.parametrize("p", [-0.01, 1.01, math.nan])
def test_pvalue_must_be_a_probability(p):
    with pytest.raises(ValueError, match="pvalue"):
        TestResult(statistic=1.0, pvalue=p)


def test_interval_is_a_pair_and_named():
    ci = Interval.of((0.1, 0.4))
    lo, hi = ci
    assert (lo, hi) == (ci.low, ci.high) == (ci[0], ci[1]) == tuple(ci) == (0.1, 0.4) and len(ci) == 2
    assert ci.contains(0.4) and not ci.contains(0.41)
    assert ci.excludes_zero() and not Interval.of((-1.0, 1.0)).excludes_zero()
    assert ci.width == pytest.approx(0.3)
    assert math.isnan(ci.estimate) and not ci.defined and Interval.of(ci) is ci
    with pytest.raises(ValueError, match="low <= high"):
        Interval.of((1.0, 0.0))
    with pytest.raises(ValueError, match=r"\(low, high\)"):
        Interval.of((1.0,))


def test_one_interval_class_for_results_and_verdicts():
    from cflib import verdicts

    assert verdicts.Interval is Interval
    est = Estimate.normal(0.5, 0.1, method="normal")
    assert isinstance(est.ci, Interval) and est.ci.estimate == 0.5 and est.ci.method == "normal" and est.ci.defined
    assert str(verdicts.binomial_interval(3, 10)).startswith("0.3 [")


def test_normal_estimate_matches_the_closed_form():
    e = Estimate.normal(1.0, 0.5, level=0.9, name="x")
    z = stats.norm.ppf(0.95)
    assert e.ci.low == pytest.approx(1.0 - z * 0.5) and e.ci.high == pytest.approx(1.0 + z * 0.5)
    assert e.significant() and not Estimate.normal(0.1, 0.5).significant()
    assert list(e.summary().columns) == ["estimate", "se", "ci_low", "ci_high"]
    with pytest.raises(ValueError, match="se"):
        Estimate.normal(1.0, -1.0)


def test_bootstrap_estimate_covers_the_mean_at_its_level():
    # percentile intervals of the mean of N(0, 1) samples cover 0 in about 95% of repetitions
    rng = np.random.default_rng(0)
    hits = 0
    reps = 200
    for _ in range(reps):
        x = rng.standard_normal(100)
        draws = [rng.choice(x, x.size).mean() for _ in range(200)]
        hits += Estimate.from_draws(x.mean(), draws).ci.contains(0.0)
    lo, hi = stats.binomtest(int(0.95 * reps), reps).proportion_ci(0.99)
    assert lo - 0.03 <= hits / reps <= hi  # percentile intervals run slightly narrow at n = 100
    with pytest.raises(ValueError, match="finite replicates"):
        Estimate.from_draws(0.0, [1.0, math.nan])


def _test_result_classes():
    """Every class in cflib whose instances carry a ``statistic`` and a ``pvalue`` (a hypothesis test's result)."""
    import dataclasses
    import importlib
    import inspect
    import pkgutil

    import cflib

    found = {}
    for info in pkgutil.walk_packages(cflib.__path__, "cflib."):
        if info.name.endswith("__main__"):
            continue
        for _, cls in inspect.getmembers(importlib.import_module(info.name), inspect.isclass):
            if cls.__module__.startswith("cflib.") and dataclasses.is_dataclass(cls):
                names = {f.name for f in dataclasses.fields(cls)}
                if {"statistic", "pvalue"} <= names:
                    found[f"{cls.__module__}.{cls.__qualname__}"] = cls
    return found


def test_every_test_result_derives_from_one_base_with_reject_summary_and_plot():
    from cflib.results import BaseTestResult

    classes = _test_result_classes()
    assert len(classes) >= 6, sorted(classes)  # MMD, linear MMD, CF-CLOT, CIT-LR, DP/EO, paired comparison, ...
    assert not [n for n, c in classes.items() if not issubclass(c, BaseTestResult)], sorted(classes)
    for cls in classes.values():
        assert callable(cls.reject) and callable(cls.summary) and callable(cls.plot)


def test_the_base_draws_the_null_distribution_or_the_pvalue():
    import matplotlib.pyplot as plt

    with_null = TestResult(statistic=2.0, pvalue=0.03, null_distribution=np.random.default_rng(0).normal(size=200))
    ax = with_null.plot()
    assert ax.get_xlabel() == "statistic" and len(ax.patches) == 30 and ax.lines[0].get_xdata()[0] == 2.0
    ax = TestResult(statistic=2.0, pvalue=0.03).plot()
    assert ax.get_xlabel() == "p-value" and ax.lines[-1].get_xdata()[0] == 0.03
    assert with_null.summary().loc["test", "pvalue"] == 0.03 and with_null.reject(0.05) and not with_null.reject(0.01)
    plt.close("all")
