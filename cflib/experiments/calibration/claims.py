"""The calibration page's claims: each rate's Clopper-Pearson interval against Bradley's band."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from ... import verdicts as vd
from .cases import CalibrationResult, level_band, row_rule

# --------------------------------------------------------------------------------------------
# claims
# --------------------------------------------------------------------------------------------
#: The rule of one row (kept under its old name for the tests that read it).
_row_rule = row_rule


def deciding_replications(
    rate: float, rule: Callable[[vd.Interval], vd.Decision], *, level: float = 0.99, start: int = 1, limit: int = 10**6
) -> int | None:
    """The fewest replications at which ``rule`` would decide, if the observed ``rate`` stayed as it is.

    Parameters
    ----------
    rate : float
        The observed rate in [0, 1].
    rule : callable
        ``rule(interval) -> cflib.verdicts.Decision``.
    level : float
        Coverage of the Clopper-Pearson interval.
    start : int
        Replications already run (the search starts above them).
    limit : int
        Largest size searched.

    Returns
    -------
    int or None
        A multiple of a hundred at which the rule decides, or ``None`` when none up to ``limit`` decides
        (the rate sits on the rule's boundary).
    """
    if not 0 <= rate <= 1:
        raise ValueError(f"rate must lie in [0, 1], got {rate!r}")

    def undecided(n: int) -> bool:
        return (
            rule(vd.binomial_interval(int(round(rate * n)), n, level=level, unit="replications")).verdict
            == vd.UNDECIDED
        )

    def hundreds(n: int) -> int:
        return int(-(-n // 100) * 100)

    n = hundreds(max(int(start), 100))
    while undecided(n):
        if n >= limit:
            return None
        n = min(hundreds(int(n * 1.25) + 1), limit)
    return n


def claims_calibration(result: CalibrationResult) -> pd.DataFrame:
    """Record one claim per calibration row: the rate's interval against its level (Bradley's band).

    A row checking a level the paper itself promises (CF-CLOT's Theorem 2, Fu et al.) is a reproduction
    of that promise, quoted; every other row checks cflib's own test and is a sanity check. Rule,
    written before running, on the rate's Clopper-Pearson interval at ``result.level``:

    - a test claimed to hold level ``alpha``: the interval lies inside ``[0.5 alpha, 1.5 alpha]``
      (:func:`level_band`; for an interval's coverage, its miss rate does);
    - a test that promises only "at most ``alpha``" (a Bonferroni union): the interval lies at or below ``1.5 alpha``;
    - a sanity check of a form kept to show its failure (``expected_fail``): the interval lies above
      ``1.5 alpha`` (it misses its level on the side it is known to err).

    An undecided row's note gives the replications that would decide it at the observed rate.

    Parameters
    ----------
    result : CalibrationResult
        Output of :func:`calibration_table`.

    Returns
    -------
    pandas.DataFrame
        The claims recorded (one per row, keys ``K1``, ``K2``, ...).
    """
    from cflib import claims

    if not isinstance(result, CalibrationResult):
        raise TypeError(f"result must be the CalibrationResult of calibration_table, got {type(result).__name__}")
    t = result.table
    claims.record("calibration_rates", dict(zip(t["test"], t["rate"].astype(float), strict=True)))
    claims.record("calibration_unexpected", list(result.unexpected["test"]))
    # the measured cost of one replication of each row (this run, this device): the report's paper-scale plan reads it
    per_rep = [float(s) / int(n) for s, n in zip(t["seconds"], t["R"], strict=True)]
    if "stream" in t.columns:  # rows of one stream share a fit per replication: each costs what the stream's first paid
        per_rep = list(pd.Series(per_rep, index=t.index).groupby(t["stream"]).transform("max"))
    claims.record("calibration_seconds_per_replication", {f"K{i + 1}": s for i, s in enumerate(per_rep)})
    if len(t) == 1:  # one case per point of notebooks/sweeps/calibration.yaml: scalars for its table
        r = t.iloc[0]
        for key in ("test", "rate", "ci_low", "ci_high", "passed"):
            claims.record(f"case_{key}", r[key].item() if hasattr(r[key], "item") else r[key])
    keys = []
    for i, r in enumerate(t.itertuples()):
        key = f"K{i + 1}"
        keys.append(key)
        reproduction = r.kind == "reproduction"
        expect_failure = bool(r.expected_fail) and not reproduction
        rule = row_rule(r.quantity, r.nominal, r.conservative, expect_failure)
        decision = rule(vd.binomial_interval(int(r.events), int(r.R), level=result.level, unit="replications"))
        what = "coverage" if r.quantity == "coverage" else ("size at most" if r.conservative else "size")
        lo, hi = level_band(r.quantity, r.nominal)
        if expect_failure:
            statement = f"{r.test} misses its nominal {what} {r.nominal:g}: {r.expected_fail}"
            change = (
                f"the failure is now read as the rate's interval beyond Bradley's liberal band [{lo:g}, {hi:g}] "
                "(it was: the interval excludes the nominal value)"
            )
        else:
            statement = f"{r.test}: {what} {r.nominal:g}" + (
                f" (expected to fail: {r.expected_fail})" if r.expected_fail else ""
            )
            change = (
                f"'holds its level' is now read as the rate's interval inside Bradley's liberal band [{lo:g}, {hi:g}], "
                "fixed before running (it was: the interval contains the nominal value and is narrower than 0.1, so a "
                "wide interval could pass)"
            )
            if r.expected_fail:
                change = (
                    "the claim is now the paper's promise of level alpha, checked on its printed form, read on Bradley's "
                    f"liberal band [{lo:g}, {hi:g}] (it was the book's statement that this form misses its level)"
                )
        note, needs = "", None
        if decision.verdict == vd.UNDECIDED:
            n = deciding_replications(float(r.rate), rule, level=result.level, start=int(r.R))
            note = (
                f"At the observed rate, about {n} replications would decide it "
                f"(about {_minutes(n * per_rep[i])} on the device of this run; the notebook's reps parameter sets {key} to {n})."
                if n
                else "The observed rate sits on the rule's boundary: no number of replications decides it at this rate."
            )
            if n:
                needs = {
                    "size": n,
                    "unit": "replications",
                    "now": int(r.R),
                    "parameter": f"reps.{key}",
                    "seconds_per_unit": per_rep[i],
                    "gpu": False,  # numpy and scikit-learn: a GPU does not run these steps
                }
        claims.claim(
            key,
            statement,
            paper=r.nominal,
            ours=f"{r.events}/{r.R} = {r.rate:.3f}",
            decision=decision,
            quote=r.quote,
            source=r.source,
            kind=r.kind,
            note=note,
            needs=needs,
            change=change,
            about="closeness-test" if r.test.startswith("CF-CLOT") else "",  # counted under Fu et al.'s paper
            evidence=f"{r.R} null replications of {r.data} (n = {r.n} per replication), cflib function {r.function}",
        )
    return claims.rows(keys)


def _minutes(seconds: float) -> str:
    """A duration in words: seconds under two minutes, else minutes."""
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
