"""The checker of the built book's reader-facing defects (issue 26) finds each defect on a hand-made page;
`tests/test_book.py` runs it on the smoke-scale build."""

from __future__ import annotations

from tests.html_defects import defects, over_limits

CLEAN = (
    """<html><body><main>
<section id="verdicts"><h2>Verdicts</h2><table><tr><td>C1</td><td>reproduced</td></tr></table></section>
<p>An estimate of 0.123 with <span class="math notranslate nohighlight">\\(x^*\\)</span> and code <code>a = {'k': 1}</code>.</p>
<pre>print(1.234567890123, "$HOME")</pre>
<table><tr><td>0.0123</td><td>12.3</td></tr></table>
<img src="_images/abc.png" alt="Power against the sample size, one line per test">
<div class="cflib-claim" id="claim-c1"><p><strong>C1</strong> reproduced: short.</p><details><summary>more</summary><p>"""
    + "word " * 400
    + """</p></details></div>
</main></body></html>"""
)

DIRTY = (
    """<html><body><main>
<p>The paper says $x^*$ and \\hat{Y} (notes §5 item 3); ours 0.0010000005131587386.</p>
<table><tr><td>{'VAE seed 0': 0.886}</td><td>a long cell ...</td><td>6.932e+00</td><td>1.712e-82</td></tr></table>
<div class="output stderr"><pre>/tmp/ipykernel_1/2.py:4: UserWarning: x</pre></div>
<img src="_images/0f3a9c2b1d4e5f60718293a4b5c6d7e8.png" alt="_images/0f3a9c2b1d4e5f60718293a4b5c6d7e8.png">
<div class="cflib-claim"><p>"""
    + "word " * 160
    + """</p><p>Paper: a value cut off …</p></div>
<p>Decided as in issue 27, p = 0.00.</p>
<table><tr><td>nan</td><td>0.5</td></tr></table>
"""
    + "<p>filler text</p>" * 40
    + """<section id="verdicts"><h2>Verdicts</h2></section>
</main></body></html>"""
)


def test_a_clean_page_has_no_defect(tmp_path):
    (tmp_path / "page.html").write_text(CLEAN)
    found = defects(tmp_path)
    assert not any(found.values()), found


def test_each_defect_is_found(tmp_path):
    (tmp_path / "notebooks").mkdir()
    (tmp_path / "notebooks" / "page.html").write_text(DIRTY)
    found = defects(tmp_path)
    assert len(found["dict text"]) == 1 and len(found["cut-off cells"]) == 1 and len(found["e-notation"]) == 2
    assert found["long floats"] == ["notebooks/page: 0.0010000005131587386"]
    assert len(found["TeX or $ outside math"]) == 3  # the two $ and \hat
    assert len(found["stderr"]) == 1 and len(found["notes §"]) == 1
    assert len(found["figures without alt text"]) == 1 and len(found["claim cards over 150 words"]) == 1
    assert len(found["issue references"]) == 1 and len(found["p = 0.00"]) == 1 and len(found["NaN cells"]) == 1
    assert len(found["cut-off claim lines"]) == 1 and len(found["claims without anchor"]) == 1
    assert found["verdicts late"] and "start at" in found["verdicts late"][0]
    problems = over_limits(found)
    assert any(p.startswith("dict text: 1") for p in problems) and not any(p.startswith("e-notation") for p in problems)


def test_report_links_must_land_on_a_claim(tmp_path):
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "reproduction-report.html").write_text(
        '<html><body><main><a href="../notebooks/a/01-x.html#claim-c1">01-x C1</a>'
        '<a href="../notebooks/a/01-x.html">01-x</a></main></body></html>'
    )
    assert defects(tmp_path)["report links without anchor"] == ["book/reproduction-report: ../notebooks/a/01-x.html"]


def test_tables_with_the_paper_beside_the_book_are_counted(tmp_path):
    import pandas as pd

    from tests.html_defects import paper_beside_book

    cols = pd.DataFrame(
        [[0.4, 0.5]], index=["VAE"], columns=pd.MultiIndex.from_tuples([("F1", "paper"), ("F1", "book")])
    )
    rows = pd.DataFrame(
        [[0.4], [0.5]], index=pd.MultiIndex.from_tuples([("VAE", "paper"), ("VAE", "book")]), columns=["F1"]
    )
    only_paper = pd.DataFrame([[0.4]], columns=["paper"])
    body = "".join(t.to_html() for t in (cols, rows, only_paper))
    (tmp_path / "page.html").write_text(f"<html><body><main>{body}</main></body></html>")
    assert paper_beside_book(tmp_path) == ["page.html: table 1", "page.html: table 2"]
