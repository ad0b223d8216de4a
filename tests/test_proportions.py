"""The one home of the proportion intervals (cflib.stats.proportions): Wilson, Newcombe, Clopper-Pearson.

Closed forms at the ends, the symmetries, published values (Newcombe 1998a Table I for Wilson, Newcombe
1998b Table II method 10 for the difference), scipy's exact interval, coverage measured by simulation with
fixed seeds against the exact coverage, array input equal to scalar input, and bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from cflib.stats import proportions as pr

LEVELS = (0.9, 0.95, 0.99)


def _z(level: float) -> float:
    return float(stats.norm.ppf(0.5 + level / 2))


@pytest.mark.parametrize("level", LEVELS)
def test_wilson_closed_forms_at_the_ends_and_exact_ends(level):
    z2 = _z(level) ** 2
    for n in range(1, 400):
        lo, hi = pr.wilson_interval(0, n, level)
        assert lo == 0.0 and hi == pytest.approx(z2 / (n + z2), rel=1e-12)
        lo, hi = pr.wilson_interval(n, n, level)
        # exactly 1 at k = n: the unclipped formula gives 1 - 1.1e-16 for many n (an interval that
        # would seem to exclude 1 for an invariant classifier)
        assert hi == 1.0 and lo == pytest.approx(n / (n + z2), rel=1e-12)


def test_wilson_solves_the_score_equation_and_is_symmetric():
    """The ends are the roots in pi of (k/n - pi)^2 = z^2 pi (1 - pi) / n; k -> n - k mirrors the interval."""
    for level in LEVELS:
        z = _z(level)
        for n in (1, 2, 7, 30, 263, 1000):
            for k in range(0, n + 1, max(1, n // 13)):
                p = k / n
                # the quadratic (1 + z^2/n) pi^2 - (2p + z^2/n) pi + p^2 = 0, solved with numpy's roots
                roots = np.sort(np.roots([1 + z * z / n, -(2 * p + z * z / n), p * p]).real)
                lo, hi = pr.wilson_interval(k, n, level)
                assert (lo, hi) == pytest.approx(tuple(roots), abs=1e-7)
                lo2, hi2 = pr.wilson_interval(n - k, n, level)
                assert lo == pytest.approx(1 - hi2, abs=1e-12) and hi == pytest.approx(1 - lo2, abs=1e-12)
                assert 0.0 <= lo <= p <= hi <= 1.0


def test_wilson_published_values():
    # Newcombe (1998a), Table I, method 3 (score): 81/263, 15/148, 0/20, 1/29
    table = {
        (81, 263): (0.2553, 0.3662),
        (15, 148): (0.0624, 0.1605),
        (0, 20): (0.0, 0.1611),
        (1, 29): (0.0061, 0.1718),
    }
    for (k, n), ends in table.items():
        assert pr.wilson_interval(k, n) == pytest.approx(ends, abs=5e-5)


def test_newcombe_published_values_and_antisymmetry():
    # Newcombe (1998b), Table II, method 10 (hybrid score): examples (a), (b), (d)-(h)
    table = {
        (56, 70, 48, 80): (0.0524, 0.3339),
        (9, 10, 3, 10): (0.1705, 0.8090),
        (5, 56, 0, 29): (-0.0381, 0.1926),
        (0, 10, 0, 20): (-0.1611, 0.2775),
        (0, 10, 0, 10): (-0.2775, 0.2775),
        (10, 10, 0, 20): (0.6791, 1.0),
        (10, 10, 0, 10): (0.6075, 1.0),
    }
    for counts, ends in table.items():
        assert pr.newcombe_interval(*counts) == pytest.approx(ends, abs=5e-5)
        k1, n1, k2, n2 = counts
        lo, hi = pr.newcombe_interval(k2, n2, k1, n1)
        assert (lo, hi) == pytest.approx((-ends[1], -ends[0]), abs=5e-5)


def test_newcombe_is_built_from_the_two_wilson_intervals():
    """Method 10 by hand: d -+ sqrt of the sums of the squared Wilson distances on each side."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        n1, n2 = rng.integers(1, 80, 2)
        k1, k2 = int(rng.integers(0, n1 + 1)), int(rng.integers(0, n2 + 1))
        p1, p2 = k1 / n1, k2 / n2
        (l1, u1), (l2, u2) = pr.wilson_interval(k1, n1), pr.wilson_interval(k2, n2)
        want = (p1 - p2 - np.hypot(p1 - l1, u2 - p2), p1 - p2 + np.hypot(u1 - p1, p2 - l2))
        assert pr.newcombe_interval(k1, n1, k2, n2) == pytest.approx(want, abs=1e-12)


def test_newcombe_test_inverts_the_interval():
    for counts in [(56, 70, 48, 80), (3, 9, 7, 8), (0, 12, 5, 12), (190, 1000, 0, 3), (4, 10, 4, 10)]:
        stat, p = pr.newcombe_test(*counts)
        k1, n1, k2, n2 = counts
        d = k1 / n1 - k2 / n2
        if d == 0:
            assert stat == 0.0 and p == 1.0
            continue
        assert np.sign(stat) == np.sign(d) and p == pytest.approx(2 * stats.norm.sf(abs(stat)), rel=1e-12)
        lo, hi = pr.newcombe_interval(*counts, level=1 - p)
        assert (lo if d > 0 else hi) == pytest.approx(0.0, abs=1e-9)  # 0 is an end at level 1 - p
        for level in (0.8, 0.9, 0.95, 0.99):
            lo, hi = pr.newcombe_interval(*counts, level=level)
            assert (lo > 0 or hi < 0) == (p < 1 - level)


@pytest.mark.parametrize("level", LEVELS)
def test_clopper_pearson_is_scipys_exact_interval_and_the_beta_quantiles(level):
    a = 1 - level
    for n in (1, 2, 5, 17, 100, 401):
        for k in sorted({0, 1, n // 3, n // 2, n - 1, n}):
            lo, hi = pr.clopper_pearson_interval(k, n, level)
            ref = stats.binomtest(k, n).proportion_ci(confidence_level=level, method="exact")
            assert (lo, hi) == pytest.approx((ref.low, ref.high), rel=1e-8, abs=1e-11)  # scipy solves by root-finding
            assert lo == (0.0 if k == 0 else stats.beta.ppf(a / 2, k, n - k + 1))
            assert hi == (1.0 if k == n else stats.beta.ppf(1 - a / 2, k + 1, n - k))
        # closed forms at the ends: P(K = 0 | pi) = (1 - pi)^n = a/2 at the upper end of k = 0
        assert pr.clopper_pearson_interval(0, n, level)[1] == pytest.approx(1 - (a / 2) ** (1 / n), rel=1e-10)
        assert pr.clopper_pearson_interval(n, n, level)[0] == pytest.approx((a / 2) ** (1 / n), rel=1e-10)


def _exact_coverage(interval, n: int, p: float, level: float) -> float:
    k = np.arange(n + 1)
    lo, hi = interval(k, np.full(n + 1, n), level)
    return float(stats.binom.pmf(k, n, p)[(lo <= p) & (p <= hi)].sum())


@pytest.mark.parametrize(("n", "p", "seed"), [(20, 0.1, 0), (50, 0.3, 1), (200, 0.5, 2), (37, 0.93, 3)])
def test_coverage_by_simulation_within_a_binomial_interval(n, p, seed):
    """Simulated coverage over 4000 draws agrees with the exact coverage (99.9% binomial interval of the count);
    Clopper-Pearson's exact coverage is at least the level, Wilson's within 0.03 of it (Brown, Cai & DasGupta)."""
    level, reps = 0.95, 4000
    k = np.random.default_rng(seed).binomial(n, p, size=reps)
    for interval in (pr.wilson_interval, pr.clopper_pearson_interval):
        lo, hi = interval(k, n, level)
        covered = int(((lo <= p) & (p <= hi)).sum())
        exact = _exact_coverage(interval, n, p, level)
        band = stats.binom.ppf([0.0005, 0.9995], reps, exact)
        assert band[0] <= covered <= band[1], (interval.__name__, covered / reps, exact)
        if interval is pr.clopper_pearson_interval:
            assert exact >= level
        else:
            assert abs(exact - level) < 0.03


def test_clopper_pearson_never_undercovers_on_a_grid():
    for n in (5, 13, 40):
        for p in np.linspace(0.01, 0.99, 37):
            assert _exact_coverage(pr.clopper_pearson_interval, n, float(p), 0.9) >= 0.9 - 1e-12


def test_arrays_equal_scalars_and_empty_groups_are_nan():
    rng = np.random.default_rng(7)
    n = rng.integers(0, 60, 50)
    k = np.array([rng.integers(0, m + 1) for m in n])
    for f in (pr.wilson_interval, pr.clopper_pearson_interval):
        lo, hi = f(k, n, 0.9)
        assert isinstance(lo, np.ndarray) and lo.shape == (50,)
        for i in range(50):
            assert np.allclose(f(int(k[i]), int(n[i]), 0.9), (lo[i], hi[i]), equal_nan=True, rtol=0, atol=0)
        assert np.isnan(lo[n == 0]).all() and not np.isnan(lo[n > 0]).any()
    m = rng.integers(0, 60, 50)
    j = np.array([rng.integers(0, x + 1) for x in m])
    for f in (pr.newcombe_interval, pr.newcombe_test):
        a, b = f(k, n, j, m)
        for i in range(50):
            assert np.allclose(f(int(k[i]), int(n[i]), int(j[i]), int(m[i])), (a[i], b[i]), equal_nan=True, atol=0)
        assert np.isnan(a[(n == 0) | (m == 0)]).all()
    assert isinstance(pr.wilson_interval(3, 10)[0], float) and isinstance(pr.newcombe_test(3, 10, 5, 9)[1], float)
    assert pr.wilson_interval(3.0, 10.0) == pr.wilson_interval(3, 10)  # integer-valued floats are counts


@pytest.mark.parametrize(
    ("call", "error", "names"),
    [
        (lambda: pr.wilson_interval(11, 10), ValueError, "k must lie in \\[0, n\\]"),
        (lambda: pr.wilson_interval(-1, 10), ValueError, "k must lie in \\[0, n\\]"),
        (lambda: pr.wilson_interval(0, -3), ValueError, "n must be >= 0"),
        (lambda: pr.wilson_interval(1.5, 10), TypeError, "k must be whole numbers"),
        (lambda: pr.wilson_interval(True, 10), TypeError, "k must be whole numbers"),
        (lambda: pr.wilson_interval(1, "10"), TypeError, "n must be whole numbers"),
        (lambda: pr.wilson_interval([1, 2], [3, np.nan]), TypeError, "n must be whole numbers"),
        (lambda: pr.wilson_interval(1, 10, level=1.0), ValueError, "level"),
        (lambda: pr.wilson_interval(1, 10, level=0.0), ValueError, "level"),
        (lambda: pr.wilson_interval(1, 10, level=95), ValueError, "level"),
        (lambda: pr.clopper_pearson_interval(5, 4), ValueError, "k must lie in \\[0, n\\]"),
        (lambda: pr.clopper_pearson_interval(1, 4, level=-0.5), ValueError, "level"),
        (lambda: pr.newcombe_interval(1, 4, 6, 5), ValueError, "k2 must lie in \\[0, n2\\]"),
        (lambda: pr.newcombe_interval(1, -4, 0, 5), ValueError, "n1 must be >= 0"),
        (lambda: pr.newcombe_interval(1, 4, 2, 5, level=2), ValueError, "level"),
        (lambda: pr.newcombe_test(0.5, 4, 2, 5), TypeError, "k1 must be whole numbers"),
    ],
)
def test_bad_input_names_the_argument(call, error, names):
    with pytest.raises(error, match=names):
        call()


def test_the_old_names_are_the_one_home():
    from cflib import stats as cs
    from cflib.audit.images import rows
    from cflib.stats import rates

    assert rates.wilson_interval is pr.wilson_interval and cs.wilson_interval is pr.wilson_interval
    assert rows.wilson_bounds is pr.wilson_interval
    assert cs.clopper_pearson_interval is pr.clopper_pearson_interval
