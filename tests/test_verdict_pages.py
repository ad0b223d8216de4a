"""Each notebook page opens with its verdicts, in one vocabulary (issue 39): the calibration table's verdict
column is the claims' verdict, and the staged page carries the verdict table under its overview."""

from __future__ import annotations

import json
import re
from pathlib import Path

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


def _executed_notebook(folder, notebook, claim_rows):
    """A fake executed notebook (title and overview, prerequisites, a card) and its claims file."""
    import json

    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# A page\n\n## Overview\nWhat it shows."),
        nbformat.v4.new_markdown_cell("## Prerequisites\n\nNone."),
        nbformat.v4.new_code_cell("claims_01()"),
    ]
    path = folder / notebook
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    payload = {"notebook": notebook, "scale": "smoke", "values": {}, "claims": claim_rows}
    path.with_suffix(".claims.json").write_text(json.dumps(payload))


def test_stage_puts_the_verdict_table_under_the_overview(tmp_path, monkeypatch, fresh_claims):
    import json

    from cflib import book, verdicts

    d = verdicts.decide_above(verdicts.binomial_interval(45, 50, unit="images"), 0.6, quantity="digit accuracy")
    c1 = claims.claim("C1", "Accuracy above 0.6.", paper=0.85, ours=0.9, evidence="e", decision=d, kind="reproduction")
    c2 = claims.claim("C2", "By construction.", paper="-", ours=0, holds=True, evidence="e", kind="sanity check")
    rows = [dict(vars(c), notebook="foundations/01-a.ipynb") for c in (c1, c2)]
    _executed_notebook(tmp_path / "exec", "foundations/01-a.ipynb", rows)
    _executed_notebook(tmp_path / "exec", "foundations/02-b.ipynb", [])
    monkeypatch.setattr(book, "toc_notebooks", lambda: ["foundations/01-a.ipynb", "foundations/02-b.ipynb"])
    site = book.stage(tmp_path / "exec", tmp_path / "site")
    cells = json.loads((site / "notebooks" / "foundations" / "01-a.ipynb").read_text())["cells"]
    assert [c.get("id") for c in cells][1] == book.VERDICTS_CELL and cells[-1]["id"] == "cflib-execution-receipt"
    text = "".join(cells[1]["source"])
    assert text.startswith("## Verdicts") and '<a href="#claim-c1">C1</a> Accuracy above 0.6 | 0.85 |' in text
    assert "(sanity check)" in text and text.count("\n| <a href=") == 2
    again = book.stage(tmp_path / "exec", tmp_path / "site")  # staging twice keeps one verdict table
    cells = json.loads((again / "notebooks" / "foundations" / "01-a.ipynb").read_text())["cells"]
    assert [c.get("id") for c in cells].count(book.VERDICTS_CELL) == 1
    plain = json.loads((site / "notebooks" / "foundations" / "02-b.ipynb").read_text())["cells"]
    assert book.VERDICTS_CELL not in [c.get("id") for c in plain]  # a page without claims gets no table
    report = (site / "book" / "reproduction-report.md").read_text()
    assert '<a href="../notebooks/foundations/01-a.html#claim-c1">01-a C1</a>' in report


def test_stage_writes_the_papers_index_page_and_the_toc_lists_it(tmp_path, monkeypatch):
    import yaml

    from cflib import book
    from cflib.experiments.papers.index import index_markdown

    _executed_notebook(tmp_path / "exec", "foundations/01-a.ipynb", [])
    monkeypatch.setattr(book, "toc_notebooks", lambda: ["foundations/01-a.ipynb"])
    site = book.stage(tmp_path / "exec", tmp_path / "site")
    assert (site / "book" / book.PAPERS_INDEX).read_text() == index_markdown()
    toc = yaml.safe_load((site / "_toc.yml").read_text())
    back = next(p for p in toc["parts"] if p["caption"] == "Back matter")
    assert {"file": "book/" + book.PAPERS_INDEX.removesuffix(".md")} in back["chapters"]


# A claim key (C10, Fig1-3c, L2-truth, DONE-1, K3) and a verdict word within a clause of each other, not glued.
_KEY = r"\b[A-Z][A-Za-z]*\d+[A-Za-z0-9]*(?:-\w+)*"
_VERDICT = r"(?:not reproduced|reproduced|undecided|not checkable|differs with the substitute data)"
_TYPED = re.compile(rf"{_KEY}[^.\n`{{}}|]{{0,30}}?\b{_VERDICT}|\b{_VERDICT}\b[^.\n`{{}}|]{{0,12}}?{_KEY}")


def _prose():
    """(where, text) of every markdown cell of the notebooks and every page under book/."""
    root = Path(__file__).resolve().parents[1]
    for path in sorted((root / "notebooks").rglob("*.ipynb")):
        for i, cell in enumerate(json.loads(path.read_text())["cells"]):
            if cell["cell_type"] == "markdown":
                yield f"{path.relative_to(root)} cell {i}", "".join(cell["source"])
    for path in sorted((root / "book").rglob("*.md")):
        yield str(path.relative_to(root)), path.read_text()


def test_the_text_glues_the_verdicts_it_names():
    """A sentence that names a claim and its verdict takes the verdict from the claim ({glue:text}`claim-KEY`, or
    `path::claim-KEY:s` on a part page), so it stays true where the verdict reads otherwise: on another machine
    (trained models depend on the CPU's kernels) or at another scale."""
    for typed in ("(C10 is not reproduced)", "(Fig1-3c, not reproduced: every", "C15c is *not checkable here*"):
        assert _TYPED.search(typed), typed
    for glued in ("(C10: {glue:text}`claim-C10`)", "C12 reads {glue:text}`/notebooks/a.ipynb::claim-C12:s`"):
        assert not _TYPED.search(glued), glued
    typed = [f"{where}: {m.group(0)!r}" for where, text in _prose() for m in _TYPED.finditer(text)]
    assert not typed, "verdicts typed in the text (glue them from the claim):\n" + "\n".join(typed)
