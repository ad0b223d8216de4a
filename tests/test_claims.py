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
    claims.claim(
        "C1", "a claim", paper=0.05, ours=np.float32(0.049), holds=True, evidence="binomial CI", kind="reproduction"
    )
    claims.claim("C2", "another", paper=1, ours=2, holds=False, evidence="t-test", kind="reproduction")
    claims.claim("C3", "third", paper=1, ours=None, holds=None, evidence="too few replications", kind="reproduction")
    data = json.loads((tmp_path / "ch" / "01-x.claims.json").read_text())
    assert data["values"] == {"n": 5}
    assert [c["verdict"] for c in data["claims"]] == list(claims.VERDICTS[:3])
    assert data["scale"] == "smoke" and data["notebook"] == "closeness-test/01-x.ipynb"
    assert list(claims.claims_table()["key"]) == ["C1", "C2", "C3"]


def test_claim_requires_evidence_and_a_valid_verdict():
    with pytest.raises(ValueError, match="evidence"):
        claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence=" ", kind="reproduction")
    with pytest.raises(ValueError, match="verdict must be one of"):
        claims.claim("C1", "s", paper=1, ours=1, evidence="e", verdict="mostly", kind="reproduction")
    with pytest.raises(ValueError, match="exactly one of holds, verdict or decision"):
        claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence="e", verdict="reproduced", kind="reproduction")
    with pytest.raises(ValueError, match="exactly one of holds, verdict or decision"):
        claims.claim("C1", "s", paper=1, ours=1, evidence="e", kind="reproduction")
    with pytest.raises(ValueError, match="needs a note"):
        claims.claim("C1", "s", paper=1, ours=1, evidence="e", verdict="not checkable here", kind="reproduction")
    with pytest.raises(ValueError, match="kind must be one of"):
        claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence="e", kind="sanity")
    with pytest.raises(TypeError, match="holds must be"):
        claims.claim("C1", "s", paper=1, ours=1, holds="yes", evidence="e", kind="reproduction")
    with pytest.raises(ValueError, match="key"):
        claims.record("two words", 1)


def test_gather_and_report(tmp_path):
    claims.claim("C1", "pipes | are escaped", paper=0.05, ours=0.0512345, holds=True, evidence="e", kind="reproduction")
    claims.claim("C2", "fails", paper=1, ours=2, holds=False, evidence="e", kind="reproduction")
    df = claims.gather(tmp_path)
    assert list(df["key"]) == ["C1", "C2"] and set(df["chapter"]) == {"closeness-test"}
    text = claims.report_markdown(df)
    t = claims.tally(df)
    assert (
        t.loc["all papers", "reproduced"] == 1
        and t.loc["all papers", "not reproduced"] == 1
        and t.loc["all papers", "claims"] == 2
    )
    assert "| Fu et al. 2025 | 1 | 1 | 0 | 0 | 0 | 2 | 0 | 0 |" in text
    assert "lacking the paper's words: 2" in text and "## Not reproduced" in text
    assert "pipes \\| are escaped" in text and "0.0512" in text and "0.0512345" not in text  # three significant figures
    assert claims.PAPERS["closeness-test"] in text
    # the verdict is the second column of each paper's table
    row = next(line for line in text.splitlines() if line.startswith("| **C2**"))
    assert row.split(" | ")[1].endswith("not reproduced")
    (tmp_path / "empty").mkdir()
    assert "No notebook" in claims.report_markdown(claims.gather(tmp_path / "empty"))


def test_cli_report_writes_the_page(tmp_path, capsys):
    from cflib.cli import main

    claims.claim("C9", "a claim", paper=1, ours=1, holds=True, evidence="exact", kind="reproduction")
    page = tmp_path / "report.md"
    assert main(["report", "--directory", str(tmp_path), "--output", str(page)]) == 0
    assert "| **C9** a claim | ✅ reproduced |" in page.read_text()


def test_cli_data_unknown_name_is_one_line(capsys):
    from cflib.cli import main

    assert main(["data", "fetch", "mnist"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown data set 'mnist'" in err[0]


def test_decided_claims_carry_words_interval_and_rule(tmp_path):
    from cflib import verdicts

    d = verdicts.decide_above(verdicts.binomial_interval(45, 50, unit="images"), 0.6, quantity="digit accuracy")
    c = claims.claim(
        "C1",
        "accuracy above 0.6",
        paper=0.6,
        ours=0.9,
        evidence="50 images",
        decision=d,
        quote="the counterfactuals change the digit",
        source="Sec. 5",
        kind="reproduction",
    )
    assert c.verdict == "reproduced" and c.rule == d.rule and c.interval["low"] == d.interval.low
    claims.claim("C2", "holds by construction", paper="-", ours=0, holds=True, evidence="e", kind="sanity check")
    claims.claim(
        "C3",
        "not on this data",
        paper="-",
        ours="-",
        evidence="e",
        verdict="not checkable here",
        note="its analogue is closeness-test/02 C4",
        kind="reproduction",
    )
    data = json.loads((tmp_path / "ch" / "01-x.claims.json").read_text())
    assert data["claims"][0]["quote"] == "the counterfactuals change the digit"
    df = claims.gather(tmp_path)
    text = claims.report_markdown(df)
    t = claims.tally(df)
    assert (t.loc["all papers", ["reproduced", "not checkable", "claims", "sanity checks"]] == [1, 1, 2, 1]).all()
    claims.claim(
        "C4",
        "a property the paper does not state",
        paper="-",
        ours=1,
        holds=True,
        evidence="e",
        kind="book's own finding",
    )
    t = claims.tally(claims.gather(tmp_path))
    assert (
        t.loc["all papers", "claims"] == 2 and t.loc["all papers", "book's own findings"] == 1
    )  # not counted as the paper's
    assert "\u201cthe counterfactuals change the digit\u201d (Sec. 5)" in text and "Clopper-Pearson" in text
    assert "closeness-test/02 C4" in text


def test_changes_page_lists_changed_criteria_and_verdicts(tmp_path):
    import pandas as pd

    from cflib import verdicts

    nb = "closeness-test/01-x.ipynb"
    claims.claim(
        "C1",
        "a",
        paper=0,
        ours=0,
        evidence="e",
        decision=verdicts.decide_above(verdicts.mean_interval([1.0, 1.1, 1.2]), 0),
        kind="reproduction",
    )
    claims.claim("C2", "b", paper=0, ours=0, holds=True, evidence="same rule", kind="reproduction")
    claims.claim(
        "C3",
        "c",
        paper=0,
        ours=0,
        holds=None,
        evidence="same rule",
        change="the paper says 1-10, not 0.05-4",
        kind="reproduction",
    )
    claims.claim("C4", "d", paper=0, ours=0, holds=True, evidence="e", kind="reproduction")
    before = pd.DataFrame(
        {
            "notebook": [nb] * 4,
            "key": ["C1", "C2", "C3", "C9"],
            "statement": ["a", "b", "c", "z"],
            "verdict": ["not reproduced", "reproduced", "inconclusive at this scale", "reproduced"],
            "evidence": ["old rule 1", "same rule", "old rule 3", "gone"],
        }
    )
    text = claims.changes_markdown(claims.gather(tmp_path), before)
    assert "1 claims changed verdict or kind, 1 changed only their rule, 1 are new, 1 are gone." in text
    assert "| not reproduced | 1 |" in text  # the table of how verdicts moved
    assert (
        "### closeness-test/01-x C1" in text and "not reproduced \u2192 **reproduced**" in text and "old rule 1" in text
    )
    assert "### closeness-test/01-x C3" in text and "the paper says 1-10" in text
    assert text.index(":::{dropdown}") < text.index("### closeness-test/01-x C3")  # a rule change alone is folded
    assert "undecided at this scale \u2192 **undecided at this scale**" in text  # the old name is read as the new one
    assert "### closeness-test/01-x C2" not in text  # same rule, same verdict: not listed
    # an earlier report that recorded its rules: a claim is listed only if its rule, verdict or kind changed
    rules = before.assign(
        rule=[claims.gather(tmp_path).set_index("key").loc["C1", "rule"], "", "", ""], kind="reproduction"
    )
    text = claims.changes_markdown(claims.gather(tmp_path), rules)
    assert "1 claims changed verdict or kind, 0 changed only their rule" in text
    assert "closeness-test/01-x C4" in text and "closeness-test/01-x C9" in text
    with pytest.raises(ValueError, match="before lacks"):
        claims.changes_markdown(claims.gather(tmp_path), before.drop(columns="evidence"))


def test_report_links_land_on_each_claims_card_and_name_the_threshold(tmp_path):
    from cflib import verdicts

    d = verdicts.decide_above(verdicts.binomial_interval(45, 50, unit="images"), 0.6, quantity="digit accuracy")
    claims.claim(
        "C1", "Accuracy above 0.6. Details.", paper=0.85, ours=0.9, evidence="e", decision=d, kind="reproduction"
    )
    u = verdicts.decide_within(verdicts.binomial_interval(4, 50, unit="replications"), 0.025, 0.075, quantity="size")
    claims.claim(
        "K2",
        "size 0.05",
        paper=0.05,
        ours=0.08,
        evidence="e",
        decision=u,
        note="About 900 replications would decide it. More.",
        kind="reproduction",
    )
    df = claims.gather(tmp_path)
    text = claims.report_markdown(df)
    row = next(line for line in text.splitlines() if line.startswith("| **C1**"))
    why = row.split(" | ")[2]
    assert "paper 0.85;" in why and "0.900 [" in why and "rule digit accuracy > 0.6: the interval lies above 0.6" in why
    assert '<a href="../notebooks/closeness-test/01-x.html#claim-c1">01-x C1</a>' in row
    undecided = next(line for line in text.splitlines() if line.startswith("- ") and "K2" in line)
    assert "#claim-k2" in undecided and "overlaps an edge of [0.025, 0.075]" in undecided
    assert "; about 900 replications would decide it)" in undecided and "…" not in text
    assert "Details" not in row  # the first sentence, whole
    table = claims.verdict_table_markdown(df)
    lines = table.splitlines()
    assert lines[0] == "| claim | paper | book [interval] | verdict | why |" and len(lines) == 4
    assert lines[2].startswith('| <a href="#claim-c1">C1</a> Accuracy above 0.6 | 0.85 | 0.900 [')
    assert "✅ reproduced" in lines[2] and "the interval lies above 0.6" in lines[2] and "paper 0.85" not in lines[2]
    assert "⚠️ undecided at this scale" in lines[3] and "about 900 replications would decide it" in lines[3]
    assert claims.verdict_table_markdown(df.iloc[:0]) == ""


def test_a_claim_counts_under_the_paper_it_is_about(tmp_path, monkeypatch):
    monkeypatch.setenv("CFLIB_CLAIMS_FILE", str(tmp_path / "foundations" / "03-calibration.claims.json"))
    monkeypatch.setenv("CFLIB_NOTEBOOK", "foundations/03-calibration.ipynb")
    claims.claim(
        "K1", "cflib's MMD test: size 0.05", paper=0.05, ours=0.05, holds=True, evidence="e", kind="sanity check"
    )
    claims.claim(
        "K2",
        "CF-CLOT: size 0.05",
        paper=0.05,
        ours=0.05,
        holds=True,
        evidence="e",
        kind="reproduction",
        about="closeness-test",
    )
    with pytest.raises(ValueError, match="about must be empty or a chapter slug"):
        claims.claim("K3", "s", paper=1, ours=1, holds=True, evidence="e", kind="reproduction", about="fu2025")
    df = claims.gather(tmp_path)
    t = claims.tally(df)
    assert t.loc[claims.PAPERS["closeness-test"], "reproduced"] == 1
    assert (
        t.loc[claims.PAPERS["foundations"], "claims"] == 0 and t.loc[claims.PAPERS["foundations"], "sanity checks"] == 1
    )
    assert list(t.index) == [claims.PAPERS["foundations"], claims.PAPERS["closeness-test"], "all papers"]
    text = claims.report_markdown(df)
    closeness = text.split(f"## {claims.PAPERS['closeness-test']}")[1]
    assert "**K2**" in closeness and "foundations/03-calibration.html#claim-k2" in closeness


def test_glue_writes_what_myst_nb_glue_writes():
    """claims.record glues without importing myst_nb.ext.glue: the display data must be the one myst-nb writes."""
    pytest.importorskip("myst_nb")
    import pandas as pd
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from myst_nb import glue

    InteractiveShell.instance()  # as in a kernel (glue formats through the shell, which any record() call creates)

    values = [0.8524590163934426, 3, "10.1 to 14.8", {"a": 1.5, "b": [1, 2]}, pd.DataFrame({"x": [1.0, 2.5]})]
    for i, value in enumerate(values):
        with capture_output() as ours:
            claims._glue(f"k{i}", value)
        with capture_output() as theirs:
            glue(f"k{i}", value, display=False)
        assert [(o.data, o.metadata) for o in ours.outputs] == [(o.data, o.metadata) for o in theirs.outputs]
        assert ours.outputs and all(k.startswith(claims.GLUE_PREFIX) for k in ours.outputs[0].data)
