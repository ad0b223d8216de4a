"""The report's paper-scale plan (cflib.book.scale_plan) and the earlier report the changes page reads (issue 38)."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from cflib import book, claims
from cflib import verdicts as vd


def _claims_file(folder, notebook, entries):
    path = folder / notebook.replace(".ipynb", ".claims.json")
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [
        {
            "key": key,
            "statement": f"statement {key}",
            "paper": 0.05,
            "ours": 0.06,
            "verdict": verdict,
            "evidence": evidence,
            "rule": f"rule {key}",
            "kind": kind,
            "note": note,
            "needs": needs,
        }
        for key, verdict, evidence, kind, note, needs in entries
    ]
    path.write_text(json.dumps({"notebook": notebook, "scale": "book", "values": {}, "claims": rows}))


NEEDS = {
    "size": 8000,
    "unit": "replications",
    "now": 1000,
    "parameter": "reps.K3",
    "seconds_per_unit": 0.02,
    "gpu": False,
}


def _build(tmp_path):
    _claims_file(
        tmp_path,
        "foundations/03-calibration.ipynb",
        [
            ("K2", vd.REPRODUCED, "2500 replications", "reproduction", "", None),
            ("K3", vd.UNDECIDED, "1000 replications", "sanity check", "about 8000 replications would decide it", NEEDS),
            ("K4", vd.UNDECIDED, "1000 replications", "reproduction", "", {**NEEDS, "gpu": True, "size": 100}),
        ],
    )
    _claims_file(
        tmp_path,
        "axiomatic-soundness/03-soundness-of-colour-digit-models.ipynb",
        [
            (
                "C19",
                vd.UNDECIDED,
                "3 seeds",
                "reproduction",
                "at the same estimate about 126 training seeds (now 3) would decide it",
                None,
            ),
            ("C20", vd.UNDECIDED, "3 seeds", "reproduction", "no size in words here", None),
        ],
    )
    return claims.gather(tmp_path)


def test_plan_times_each_size_by_its_measured_rate_and_reads_sizes_in_notes(tmp_path):
    plan = book.scale_plan(_build(tmp_path)).set_index("key")
    assert list(plan.index) == ["C19", "C20", "K4", "K3"]  # reproductions first (gather's order), then the rest
    assert "K2" not in plan.index
    assert plan.loc["K3", "cpu_seconds"] == pytest.approx(8000 * 0.02)
    assert plan.loc["K3", "gpu_seconds"] == pytest.approx(8000 * 0.02)  # a numpy step: the same on a GPU machine
    assert plan.loc["K4", "cpu_seconds"] == pytest.approx(100 * 0.02) and pd.isna(plan.loc["K4", "gpu_seconds"])
    c19 = plan.loc["C19"]
    assert (c19["size"], c19["now"], c19["unit"], c19["parameter"]) == (126, 3, "training seeds", "")
    assert pd.isna(c19["cpu_seconds"]) and pd.isna(plan.loc["C20", "size"])
    text = book.scale_plan_markdown(_build(tmp_path))
    assert "1,000 → 8,000 replications | `reps.K3` | 3 min | 3 min |" in text
    assert "3 → 126 training seeds | (the note's) | no rate recorded" in text
    assert "in the note: no size in words here" in text
    assert "3 of 4 undecided claims give the size" in text and "2 come with the rate" in text
    assert "No rate is recorded yet for the claims of" in text and "03-soundness-of-colour-digit-models" in text
    with pytest.raises(TypeError, match="gather"):
        book.scale_plan(pd.DataFrame({"key": ["K1"]}))


def test_before_report_round_trips_through_the_changes_page(tmp_path):
    old = tmp_path / "old"
    _build(old)
    out = tmp_path / "before.csv"
    table = book.before_report(old)
    assert list(table.columns) == book.BEFORE_COLUMNS and len(table) == 5
    out.write_text(table.to_csv(index=False))
    new = tmp_path / "new"
    _claims_file(
        new,
        "foundations/03-calibration.ipynb",
        [
            ("K2", vd.REPRODUCED, "2500 replications", "reproduction", "", None),
            ("K3", vd.REPRODUCED, "9000 replications", "sanity check", "", None),
            ("K4", vd.UNDECIDED, "1000 replications", "book's own finding", "", None),
        ],
    )
    text = claims.changes_markdown(claims.gather(new), pd.read_csv(out))
    assert "2 claims changed verdict or kind" in text and "2 are gone" in text
    k3 = text[text.index("### foundations/03-calibration K3") :]
    assert "the evidence changed: it was 1000 replications; it is now 9000 replications" in k3.split("###")[1]
    k4 = text[text.index("### foundations/03-calibration K4") :].split("###")[1]
    assert "it is now a book's own finding" in k4 and "evidence changed" not in k4
    written = book.write_before_report(new, tmp_path / "x.csv")  # the book's notebooks, in the book's order
    back = pd.read_csv(written, dtype=str, keep_default_na=False)
    assert back.to_dict("records") == book.before_report(new).astype(str).to_dict("records")
    _claims_file(tmp_path / "other", "demo/01-x.ipynb", [("D1", vd.REPRODUCED, "e", "reproduction", "", None)])
    with pytest.raises(ValueError, match="no claims of the book's notebooks"):
        book.write_before_report(tmp_path / "other", tmp_path / "y.csv")


def test_a_claim_keeps_its_size_only_while_undecided(tmp_path, monkeypatch):
    monkeypatch.setenv("CFLIB_CLAIMS_FILE", str(tmp_path / "c.claims.json"))
    claims.reset()
    kw = {"paper": 0, "ours": 0, "evidence": "e", "kind": "reproduction", "needs": dict(NEEDS)}
    claims.claim("U1", "undecided", holds=None, **kw)
    claims.claim("D1", "decided", holds=True, **kw)
    stored = {c["key"]: c for c in json.loads((tmp_path / "c.claims.json").read_text())["claims"]}
    assert stored["U1"]["needs"] == NEEDS and stored["D1"]["needs"] is None
    with pytest.raises(ValueError, match="needs\\['size'\\]"):
        claims.claim("U2", "bad", holds=None, **{**kw, "needs": {**NEEDS, "size": 0}})
    assert book.scale_plan(claims.gather(tmp_path)).set_index("key").loc["U1", "size"] == 8000
