"""The index of the papers' figures and tables (issue 39): one registry, checked against the papers' notes and
against the targets in the notebooks, and the page generated from it."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from cflib.experiments.papers import index as ix

ROOT = Path(__file__).resolve().parent.parent
NOTES = [ROOT.parent / "shared" / "papers" / "notes", ROOT / "papers" / "notes"]
#: Notes file prefix -> the chapter of the paper.
NOTE_PAPER = {
    "000": "invariance-test",
    "001": "counterfactual-benchmark",
    "002": "closeness-test",
    "003": "axiomatic-soundness",
    "004": "parity-decomposition",
}


def _span(a: str, b: str | None) -> range:
    return range(int(a), int(b or a) + 1)


def notes_inventory(text: str) -> set[tuple[str, int]]:
    """Every figure and table a paper's notes list in their section 4 ("Figures and tables"), as (kind, number)."""
    start = re.search(r"^## 4\.", text, re.M)
    end = re.search(r"^## 5\.", text, re.M)
    assert start and end, "the notes have no section 4 (figures and tables) followed by section 5"
    sec = text[start.start() : end.start()]
    found: set[tuple[str, int]] = set()
    for m in re.finditer(
        r"\*\*Figs?\.\s*(\d+)(?:[–-](\d+))?\*\*|^###\s+Figs?\.\s*(\d+)|^###\s+Figures\s+(\d+)[–-](\d+)", sec, re.M
    ):
        a, b = (
            (m.group(1), m.group(2)) if m.group(1) else (m.group(3), None) if m.group(3) else (m.group(4), m.group(5))
        )
        found |= {("fig", n) for n in _span(a, b)}
    head = ""
    for line in sec.splitlines():  # the rows of a table of figures (its first column headed "#", "fig" or "Fig.")
        if not line.startswith("|"):
            head = ""
            continue
        if not head:
            head = line.split("|")[1].strip().lower()
            continue
        m = re.match(r"^\| (\d+)(?: \(App\. B\))? \|", line)
        if m and head in ("#", "fig", "fig."):
            found.add(("fig", int(m.group(1))))
    for m in re.finditer(
        r"\*\*Tables?\s*(\d+)\*\*|^###\s+Table\s+(\d+)|^###\s+Appendix Tables\s+(\d+)[–-](\d+)|^- \*\*T(\d+),",
        sec,
        re.M,
    ):
        a, b = (
            next((g, None) for g in (m.group(1), m.group(2), m.group(5)) if g)
            if not m.group(3)
            else (m.group(3), m.group(4))
        )
        found |= {("table", n) for n in _span(a, b)}
    return found


def _notes_dir() -> Path:
    for d in NOTES:
        if d.is_dir():
            return d
    pytest.skip("the papers' notes are not in this checkout")


def test_every_figure_and_table_of_the_notes_is_in_the_registry():
    notes = _notes_dir()
    have = {(it.paper, it.kind, it.number) for it in ix.PAPER_ITEMS}
    total = 0
    for prefix, paper in NOTE_PAPER.items():
        (path,) = notes.glob(f"{prefix}_*.md")
        listed = notes_inventory(path.read_text())
        assert listed, path
        total += len(listed)
        missing = sorted((paper, k, n) for k, n in listed if (paper, k, n) not in have)
        assert not missing, f"{path.name} lists items the registry lacks: {missing}"
        extra = sorted(it.target for it in ix.paper_items(paper) if (it.kind, it.number) not in listed)
        assert not extra, f"the registry has items {path.name} does not list: {extra}"
    assert total == len(ix.PAPER_ITEMS) == 88


def test_the_registry_counts_results_and_the_rest():
    results = ix.paper_items(category="result")
    assert len(results) == 65 and len(ix.PAPER_ITEMS) - len(results) == 23
    assert all(it.notebook is None for it in ix.paper_items(status="not here"))
    assert ix.paper_item("invariance-test", "fig", 12).status == "not here"
    assert ix.paper_item("closeness-test", "fig", 4).target == "paper-closeness-test-fig-4"
    with pytest.raises(ValueError, match="has no fig 99"):
        ix.paper_item("closeness-test", "fig", 99)
    with pytest.raises(ValueError, match="paper must be one of"):
        ix.paper_items("closeness")


def _targets(notebook: Path) -> set[str]:
    nb = nbformat.read(notebook, as_version=4)
    return {
        m.group(1)
        for c in nb.cells
        if c.cell_type == "markdown"
        for m in re.finditer(r"^\((paper-[a-z0-9-]+)\)=\s*$", c.source, re.M)
    }


def test_every_counterpart_has_its_target_in_its_notebook_and_no_other_target_exists():
    wanted: dict[str, set[str]] = {}
    for it in ix.PAPER_ITEMS:
        if it.notebook:
            wanted.setdefault(it.notebook, set()).add(it.target)
    for path in sorted((ROOT / "notebooks").glob("*/*.ipynb")):
        rel = path.relative_to(ROOT / "notebooks").as_posix()
        assert _targets(path) == wanted.get(rel, set()), rel
    assert all((ROOT / "notebooks" / nb).exists() for nb in wanted)


def test_the_index_page_lists_every_item_with_a_link_or_a_reason():
    text = ix.index_markdown()
    rows = [line for line in text.splitlines() if re.match(r"\| (Fig\.|Table) \d+", line)]
    assert len(rows) == 88
    for it, row in zip(ix.PAPER_ITEMS, rows, strict=True):
        assert row.startswith(f"| {it.label}")
        if it.notebook:
            assert f"<{it.target}>`" in row and "{ref}`" in row
        else:
            assert f"not here: {it.note}" in row
    assert "65 of them results" in text and "| — |" in text


def test_each_counterpart_is_labelled_with_the_registrys_caption_above_its_target():
    for it in ix.PAPER_ITEMS:
        if not it.notebook:
            assert it.caption == ""
            continue
        nb = nbformat.read(ROOT / "notebooks" / it.notebook, as_version=4)
        cell = next(c for c in nb.cells if c.cell_type == "markdown" and f"({it.target})=" in c.source)
        before = cell.source.split(f"({it.target})=")[0]
        assert it.caption in before, f"{it.notebook}: the label above {it.target} is not the registry's caption"
        assert it.caption.startswith(f"*{ix.PAPER_SHORT[it.paper]}, {it.label}: ")
