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
    assert (
        "1.60e-11" in shown and "&lt; 0.0001" in fold
    )  # the line reads claims._num, the fold's table never e-notation
    assert "$" not in html and html.count('class="math') == 2 and "<em>worst</em>" in shown


def test_rows_display_as_one_line_and_stay_a_dataframe(fresh_claims):
    claims.claim("C1", "a", paper=1, ours=1, holds=True, evidence="e")
    claims.claim("C2", "b", paper=1, ours=2, holds=False, evidence="e")
    claims.claim("C3", "c", paper=1, ours=None, holds=None, evidence="e")
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
