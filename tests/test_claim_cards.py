"""Claims show once, as short cards, and a claims function's table displays as one line (issue 26)."""

from __future__ import annotations

import pandas as pd

from cflib import claims, verdicts


def test_card_is_short_and_folds_the_details(fresh_claims):
    c = claims.claim(
        "C1",
        "A claim with $x^*$ and \\hat{Y}^{NP} and a *worst* case.",
        paper={"VAE seed 0": 0.886, "tiny": 1.6e-11},
        ours=0.0010000005131587386,
        evidence="300 images (notes §5 C4)",
        quote="the paper's words " * 40,
        source="Monteiro et al. 2023 (003), Sec. 3.1 (notes §2.6)",
        decision=verdicts.decide_above(
            verdicts.Interval(0.9, 0.8, 0.95, "95% Wilson, 300 images"), 0.6, quantity="accuracy"
        ),
        kind="reproduction",
    )
    html = claims.ClaimCard(claims._STATE["claims"][c.key])._repr_html_()
    shown, fold = html.split("<details>")
    assert (
        "C1" in shown
        and "reproduced" in shown
        and "Paper:" in shown
        and "Ours: 0.001" in shown
        and "Rule: accuracy &gt; 0.6" in shown
    )
    assert len(shown.split()) < 150 and "the paper's words" in fold and "300 images" in fold
    assert "{'" not in html and "0.0010000005" not in html and "§" not in html and "(003)" not in html
    assert "tiny &lt; 0.0001" in shown and "&lt; 0.0001" in fold and "e-11" not in html  # never e-notation
    assert shown.startswith('<div class="cflib-claim" id="claim-c1">')  # the report and the verdict table link here
    assert "$" not in html and html.count('class="math') == 2 and "<em>worst</em>" in shown


def test_rows_display_as_one_line_and_stay_a_dataframe(fresh_claims):
    claims.claim("C1", "a", paper=1, ours=1, holds=True, evidence="e", kind="reproduction")
    claims.claim("C2", "b", paper=1, ours=2, holds=False, evidence="e", kind="reproduction")
    claims.claim("C3", "c", paper=1, ours=None, holds=None, evidence="e", kind="reproduction")
    rows = claims.rows(["C3", "C1", "C2"])
    assert isinstance(rows, pd.DataFrame) and list(rows["key"]) == ["C3", "C1", "C2"]
    assert (
        rows._repr_html_().count("\n") == 0
        and "3 claims recorded above: 1 reproduced, 1 not reproduced, 1 undecided" in rows._repr_html_()
    )
    assert (
        rows.set_index("key").loc["C2", "verdict"] == "not reproduced" and type(rows.set_index("key")) is pd.DataFrame
    )
    pd.testing.assert_frame_equal(rows.sort_values("key").reset_index(drop=True), claims.claims_table())


def test_card_never_cuts_a_value_and_reads_numbers_for_a_reader(fresh_claims):
    many = {f"model {i}": i / 7 for i in range(9)}
    claims.claim(
        "C2.b",
        "Rejects at p = 1.0e-28 with 61.0 images and residual = 3.47e-17. A second sentence.",
        paper="a long paper value " * 10,
        ours=many,
        evidence="p=0.00 over 12 seeds",
        holds=True,
        kind="reproduction",
    )
    html = claims.ClaimCard(claims._STATE["claims"]["C2.b"])._repr_html_()
    shown, fold = html.split("<details>")
    assert 'id="claim-c2-b"' in shown and "…" not in html and "..." not in html
    assert "p &lt; 0.001" in shown and "residual &lt; 0.0001" in shown and "e-" not in html
    assert "a long paper value " * 9 in shown  # the whole value, not its first words
    assert "9 values" in shown and all(f"model {i}" in fold for i in range(9))  # a long dict is listed in the fold
    assert "p &lt; 0.005" in fold  # "p=0.00" was rounded to zero by the code that wrote it: below 0.005
    text = repr(claims.ClaimCard(claims._STATE["claims"]["C2.b"]))
    assert "…" not in text and "9 values" in text
