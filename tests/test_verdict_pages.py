"""Each notebook page opens with its verdicts, in one vocabulary (issue 39): the calibration table's verdict
column is the claims' verdict, and the staged page carries the verdict table under its overview."""

from __future__ import annotations

from cflib import claims
from cflib.experiments import calibration as cal


def test_the_calibration_table_and_the_cards_give_the_same_verdicts(fresh_claims):
    res = cal.calibration_table(20, cases=["h=marginalize", "Demographic parity", "delta variance"], seed=0)
    table = res.summary()
    rows = cal.claims_calibration(res)
    assert list(table["claim"]) == list(rows["key"])
    assert list(table["verdict"]) == list(rows["verdict"])
    assert set(table["verdict"]) <= set(claims.VERDICTS)  # no "pass" / "FAIL" beside the cards' words
    about = {k: c["about"] for k, c in claims._STATE["claims"].items()}
    cfclot = [k for k, t in zip(table["claim"], table["test"], strict=True) if t.startswith("CF-CLOT")]
    assert cfclot and all(about[k] == "closeness-test" for k in cfclot)  # counted under Fu et al.
    assert all(about[k] == "" for k in about if k not in cfclot)
