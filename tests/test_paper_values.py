"""The paper values registry (cflib.experiments.papers.values) against the papers' notes, and the side-by-side table."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cflib.experiments.papers.values import MISSING, PAPER_TABLES, PaperTable, paper_table, side_by_side

NOTES = Path("/work/shared/papers/notes")
if not NOTES.is_dir():  # a fresh clone: the notes live beside the checkout when present
    NOTES = Path(__file__).resolve().parents[2] / "shared" / "papers" / "notes"
needs_notes = pytest.mark.skipif(not NOTES.is_dir(), reason="the papers' notes are not on this machine")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _cell(text: str) -> float | None:
    """A notes cell ('**0.438_{0.178}**', '9.20 (1.31)', '≤ 2.874', '—') as its mean."""
    m = NUMBER.search(text.replace("**", "").replace("−", "-"))
    return None if text.strip() in ("—", "–", "missing") or m is None else float(m.group(0))


def _markdown_tables(name: str, heading: str) -> list[list[list[str]]]:
    """The markdown tables under the first heading containing ``heading`` (header and rule dropped)."""
    lines = next(NOTES.glob(name)).read_text().splitlines()
    start = next(k for k, line in enumerate(lines) if line.startswith("#") and heading in line)
    tables: list[list[list[str]]] = []
    current: list[list[str]] | None = None
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            current = [] if current is None else current
            current.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif current is not None:
            tables.append(current[2:])
            current = None
    if current is not None:
        tables.append(current[2:])
    return tables


def _code_block(name: str, heading: str) -> list[str]:
    text = next(NOTES.glob(name)).read_text()
    start = text.index(heading)
    open_ = text.index("```", start)
    return text[open_ + 3 : text.index("```", open_ + 3)].strip("\n").splitlines()


def _check(table: PaperTable, notes_rows: list[list[float | None]]) -> None:
    """Every value of ``table`` equals the notes' row by row (None where the notes print nothing)."""
    n = len(table.index)
    assert len(table.rows) == len(notes_rows)
    for ours, theirs in zip(table.rows, notes_rows, strict=True):
        assert list(ours[n:]) == pytest.approx(theirs), ours[:n]


@needs_notes
@pytest.mark.parametrize("number", [1, 2, 3, 4, 5])
def test_benchmark_tables_equal_the_notes(number: int) -> None:
    (rows,) = _markdown_tables("001_*.md", f"Table {number}:")
    _check(paper_table("counterfactual-benchmark", f"Table {number}"), [[_cell(c) for c in r[1:]] for r in rows])


@needs_notes
def test_soundness_table1_blocks_equal_the_notes() -> None:
    blocks = _markdown_tables("003_*.md", "Table 1 — Colour")
    notes_rows = [[_cell(c) for c in r[(2 if len(r) == 9 else 1) :]] for block in blocks for r in block]
    _check(paper_table("axiomatic-soundness", "Table 1"), notes_rows)
    unconfounded = paper_table("axiomatic-soundness", "Table 1").block("unconfounded").frame()
    assert unconfounded.loc[("", "GAN"), "comp"] == 4.92 and np.isnan(
        unconfounded.loc[("", "Bernoulli VAE β=2"), "h-acc"]
    )


@needs_notes
@pytest.mark.parametrize(("number", "labels"), [(2, 3), (3, 3), (4, 3), (5, 2), (6, 1)])
def test_soundness_rank_and_other_tables_equal_the_notes(number: int, labels: int) -> None:
    (rows,) = _markdown_tables("003_*.md", f"Table {number} —")
    _check(paper_table("axiomatic-soundness", f"Table {number}"), [[_cell(c) for c in r[labels:]] for r in rows])


@needs_notes
def test_cit_lr_tables_equal_the_notes() -> None:
    chexpert = paper_table("invariance-test", "Table 2").frame()
    line = _code_block("000_*.md", "### 4.1 Table 2")[3]  # VGG13
    model, rest = line.split(None, 1)
    for part in rest.split("|"):
        race, *values = part.split()
        assert chexpert.loc[(model, race)].tolist() == [float(v) for v in values]
    t13 = paper_table("invariance-test", "Table 13").frame()
    for line in _code_block("000_*.md", "### 4.5 Table 13")[1:]:
        model, *cells = line.split()
        assert t13.loc[model].tolist() == [float(x) for c in cells for x in c.split("/")]
    quality = _code_block("000_*.md", "### 4.3 Tables 7")
    assert paper_table("invariance-test", "Table 7").frame().loc["CLDM"].tolist() == [810.5, 789.8, 798.2]
    assert "DLDM 89.2 92.0 93.7" in quality[12]
    assert paper_table("invariance-test", "Table 10").frame().loc["DLDM"].tolist() == [89.2, 92.0, 93.7]


@pytest.mark.parametrize(("table", "counts"), [("Table 12", [7, 8, 1, 5, 9]), ("Table 13", [6, 5, 2, 10, 10])])
def test_cit_lr_rejection_counts_match_the_notes_summary(table: str, counts: list[int]) -> None:
    """The notes' own count of p < 0.05 per disease (Cardiomegaly, Edema, Consolidation, Atelectasis, Effusion)."""
    frame = paper_table("invariance-test", table).frame()
    assert [int((frame[c] < 0.05).sum()) for c in frame.columns if c.endswith(" p")] == counts


def test_table5_cld_identity_holds_for_every_printed_row() -> None:
    """The notes' derived fact: CLD = log(0.8 e^P1 + 0.2 e^P2) to +-0.001 (catches a mistyped value)."""
    frame = paper_table("counterfactual-benchmark", "Table 5").frame()
    for data in ("MorphoMNIST", "CelebA"):
        part = frame[[f"{data} CLD", f"{data} P1", f"{data} P2"]].dropna().to_numpy()
        assert np.abs(np.log(0.8 * np.exp(part[:, 1]) + 0.2 * np.exp(part[:, 2])) - part[:, 0]).max() < 1.5e-3


def test_every_registry_table_has_consistent_shape_and_unique_rows() -> None:
    assert len(PAPER_TABLES) >= 20
    for table in PAPER_TABLES.values():
        frame = table.frame()
        assert frame.index.is_unique, table.table
        assert frame.shape == (len(table.rows), len(table.columns))


def test_side_by_side_matches_rows_and_columns_by_name() -> None:
    paper = pd.DataFrame({"a": [1.0, 2.0, np.nan], "b": [10.0, 20.0, 30.0]}, index=["x", "y", "z"])
    book = pd.DataFrame({"B": [0.25, 0.5], "A": [3.0, np.nan], "extra": [7.0, 8.0]}, index=["book y", "w"])
    out = side_by_side(book, paper, rows={"book y": "y"}, columns={"A": "a", "B": "b"})
    assert list(out.index) == ["x", "y", "z", "w"]
    assert list(out.columns) == [("a", "paper"), ("a", "book"), ("b", "paper"), ("b", "book")]
    assert out.loc["y", ("a", "book")] == "3.00" and out.loc["y", ("b", "book")] == "0.250"
    assert out.loc["y", ("b", "paper")] == "20" and out.loc["z", ("a", "paper")] == MISSING
    assert out.loc["w", ("a", "book")] == MISSING and out.loc["x", ("b", "book")] == MISSING
    assert not out.isna().to_numpy().any() and "nan" not in out.to_string().lower()


def test_side_by_side_ranks_layout_and_formats() -> None:
    table = paper_table("counterfactual-benchmark", "Table 3")
    book = pd.DataFrame(
        {"t": [0.3, 0.1, 0.2], "acc": [0.5, 0.9, 0.7], "p": [0.0000123, 0.049, 0.5]},
        index=["GAN", "HVAE", "VAE (σ learned)"],
    )
    out = side_by_side(book, table, columns={"t": "t MAE do(t)", "acc": "y acc do(y)"}, ranks=True)
    # paper t MAE do(t): HVAE 0.086 < VAE learned 0.109 < GAN 0.227 (lower is better); accuracy higher is better
    assert out.loc["HVAE", ("t MAE do(t)", "paper")] == "0.086 (1)"
    assert out.loc["GAN", ("t MAE do(t)", "book")] == "0.300 (3)"
    assert (
        out.loc["GAN", ("y acc do(y)", "paper")] == "0.813 (2)"
        and out.loc["HVAE", ("y acc do(y)", "book")] == "0.900 (1)"
    )
    assert out.loc["GAN fine-tuned", ("t MAE do(t)", "book")] == MISSING  # a paper row the book lacks: no rank
    rows = side_by_side(book, table, columns={"t": "t MAE do(t)"}, layout="rows")
    assert (
        rows.loc[("HVAE", "paper"), "t MAE do(t)"] == "0.086" and rows.loc[("HVAE", "book"), "t MAE do(t)"] == "0.100"
    )
    pv = side_by_side(
        book.rename(columns={"p": "q"}), pd.DataFrame({"q": [0.01]}, index=["GAN"]), pvalues=["q"], counts=["acc"]
    )
    assert pv.loc["GAN", ("q", "book")] == "< 0.001" and pv.loc["HVAE", ("q", "book")] == "0.049"
    assert pv.loc["GAN", ("acc", "book")] == "0" and pv.loc["HVAE", ("acc", "book")] == "1"


def test_bad_input_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="paper, table"):
        paper_table("counterfactual-benchmark", "Table 9")
    with pytest.raises(TypeError, match="book must be"):
        side_by_side([1, 2], paper_table("counterfactual-benchmark", "Table 1"))
    with pytest.raises(ValueError, match="layout"):
        side_by_side(pd.DataFrame(), pd.DataFrame(), layout="wide")
    with pytest.raises(ValueError, match="columns names book columns"):
        side_by_side(pd.DataFrame({"a": [1]}), pd.DataFrame({"a": [1]}), columns={"zz": "a"})


def test_reader_table_shows_dashes_integers_and_pvalues() -> None:
    import re

    from cflib import plotting

    frame = pd.DataFrame({"rejected": [0.0, 3.0], "rate": [0.5, np.nan], "p": [1e-5, 0.0484]})
    styled = plotting.reader_table(frame, counts=["rejected"], pvalues=["p"], missing="no classifier in the group")
    cells = re.findall(r"<td[^>]*>(.*?)</td>", styled.to_html())
    assert cells == ["0", "0.500", "< 0.001", "3", "—", "0.048"]
    assert styled.caption == "— : no classifier in the group"
    assert frame["rate"].isna().sum() == 1  # the frame itself is not changed
    with pytest.raises(ValueError, match="missing must say why"):
        plotting.reader_table(frame)
    with pytest.raises(ValueError, match="must name columns"):
        plotting.reader_table(frame, counts=["n"], missing="x")


def test_chapter_helpers_match_the_books_labels_to_the_papers() -> None:
    """The chapters' versus-paper tables put each book cell under the paper's row and column for the same thing."""
    from types import SimpleNamespace

    from cflib.claims import reader_number
    from cflib.experiments import benchmark, invariance, soundness

    models = ["identity (reference)", "VAE (σ=√e⁻⁵)", "HVAE", "GAN"]
    eff_cols = pd.MultiIndex.from_tuples([(a, f"do({b})") for b in "tid" for a in ("t MAE", "i MAE", "d acc")])
    eff = pd.DataFrame(np.arange(36.0).reshape(4, 9), index=models, columns=eff_cols)
    result = SimpleNamespace(
        config=SimpleNamespace(dataset="morphosynth", cycles=3, size=16, n_test=100), table_effectiveness=eff
    )
    out = benchmark.versus_paper(result, "effectiveness").data  # type: ignore[arg-type]
    # ("d acc", "do(d)") of HVAE is row 2, column 8 = 26; GAN's 35 is the best of the three, so HVAE ranks 2
    assert out.loc[("HVAE", "book"), "y acc do(y)"] == f"{reader_number(26.0)} (2)"
    assert out.loc[("HVAE", "paper"), "y acc do(y)"] == "0.972 (1)"  # the paper's HVAE is best of the three
    assert out.loc[("identity (reference)", "paper"), "t MAE do(t)"] == MISSING

    idx = pd.MultiIndex.from_tuples([("no", "identity"), ("no", "GAN")], names=["SI", "model"])
    t1 = pd.DataFrame([["0.00 (0.00)", "50.0 (1.0)"], ["3.00 (0.10)", "90.0 (2.0)"]], index=idx)
    t1.columns = ["composition", "do(digit): digit"]
    out = soundness.table1_versus_paper(t1, "unconfounded").data
    assert (
        out.loc[("", "Identity", "paper"), "comp"] == "0 (1)"
        and out.loc[("", "GAN", "book"), "d-acc"] == f"{reader_number(90.0)} (1)"
    )

    cols = pd.MultiIndex.from_tuples([("FD", "all"), ("composition L1", "white")])
    quality = pd.DataFrame([[1.0, 5.0], [2.0, 6.0]], index=["VAE beta=0.001", "DLDM"], columns=cols)
    out = invariance.quality_versus_paper(quality, 11).data
    assert (
        out.loc["VAE β=0", ("CheXpert", "paper")] == "24.23 (2)"
        and out.loc["DLDM", ("CheXpert", "book")] == f"{reader_number(2.0)} (2)"
    )
    audit = pd.DataFrame({"disease": ["cardiomegaly", "effusion"], "p CIT-LR[CLDM+D]": [0.01, 0.2]})
    out = invariance.zoo_versus_paper(audit, 12).data
    assert out.loc["Cardiomegaly", ("rejected at 0.05", "paper")] == "7"
    assert (
        out.loc["Cardiomegaly", ("rejected at 0.05", "book")] == "1"
        and out.loc["Edema", ("classifiers", "book")] == MISSING
    )
