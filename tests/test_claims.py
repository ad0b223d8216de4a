"""Claims and values: JSON beside the executed notebook, verdicts, the reproduction report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cflib import claims


@pytest.fixture(autouse=True)
def _fresh(monkeypatch, tmp_path):
    claims.reset()
    monkeypatch.setenv("CFLIB_CLAIMS_FILE", str(tmp_path / "ch" / "01-x.claims.json"))
    monkeypatch.setenv("CFLIB_NOTEBOOK", "closeness-test/01-x.ipynb")
    monkeypatch.setenv("CFLIB_SCALE", "smoke")
    yield
    claims.reset()


def test_record_and_claim_write_json(tmp_path):
    assert claims.record("n", np.int64(5)) == 5
    claims.claim("C1", "a claim", paper=0.05, ours=np.float32(0.049), holds=True, evidence="binomial CI")
    claims.claim("C2", "another", paper=1, ours=2, holds=False, evidence="t-test")
    claims.claim("C3", "third", paper=1, ours=None, holds=None, evidence="too few replications")
    data = json.loads((tmp_path / "ch" / "01-x.claims.json").read_text())
    assert data["values"] == {"n": 5}
    assert [c["verdict"] for c in data["claims"]] == list(claims.VERDICTS)
    assert data["scale"] == "smoke" and data["notebook"] == "closeness-test/01-x.ipynb"
    assert list(claims.claims_table()["key"]) == ["C1", "C2", "C3"]


def test_claim_requires_evidence_and_a_valid_verdict():
    with pytest.raises(ValueError, match="evidence"):
        claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence=" ")
    with pytest.raises(ValueError, match="verdict must be one of"):
        claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence="e", verdict="mostly")
    with pytest.raises(TypeError, match="holds must be"):
        claims.claim("C1", "s", paper=1, ours=1, holds="yes", evidence="e")
    with pytest.raises(ValueError, match="key"):
        claims.record("two words", 1)


def test_gather_and_report(tmp_path):
    claims.claim("C1", "pipes | are escaped", paper=0.05, ours=0.0512345, holds=True, evidence="e")
    claims.claim("C2", "fails", paper=1, ours=2, holds=False, evidence="e")
    df = claims.gather(tmp_path)
    assert list(df["key"]) == ["C1", "C2"] and set(df["chapter"]) == {"closeness-test"}
    text = claims.report_markdown(df)
    assert "| reproduced | 1 |" in text and "| not reproduced | 1 |" in text
    assert "pipes \\| are escaped" in text and "0.05123" in text
    assert claims.PAPERS["closeness-test"] in text
    assert "No notebook" in claims.report_markdown(claims.gather(tmp_path / "empty"))


def test_cli_report_writes_the_page(tmp_path, capsys):
    from cflib.cli import main

    claims.claim("C9", "a claim", paper=1, ours=1, holds=True, evidence="exact")
    page = tmp_path / "report.md"
    assert main(["report", "--directory", str(tmp_path), "--output", str(page)]) == 0
    assert "| C9 |" in page.read_text() and "**reproduced**" in page.read_text()


def test_cli_data_unknown_name_is_one_line(capsys):
    from cflib.cli import main

    assert main(["data", "fetch", "mnist"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown data set 'mnist'" in err[0]
