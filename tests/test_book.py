"""The book builds from the smoke-scale notebooks with no warnings, and every page renders in a browser."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cflib import runner
from cflib.book import RECEIPT_CLASS, build, check_links

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_build" / "test-book"
SCREENSHOTS = ROOT / "_build" / "screenshots"

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def html(smoke_runs):
    results, executed = smoke_runs
    failed = [n for n, r in results.items() if isinstance(r, runner.NotebookError)]
    if failed:
        pytest.fail(f"cannot build the book: notebooks failed at smoke scale: {', '.join(failed)}")
    hub = os.environ.get("CFLIB_JUPYTERHUB_URL")
    os.environ["CFLIB_JUPYTERHUB_URL"] = HUB  # so the JupyterHub launch button is built too
    try:
        return build("smoke", executed_dir=executed, path_output=OUT)
    finally:
        if hub is None:
            os.environ.pop("CFLIB_JUPYTERHUB_URL")
        else:
            os.environ["CFLIB_JUPYTERHUB_URL"] = hub


HUB = "https://hub.example.org"
LAUNCHERS = {"Binder": "mybinder.org/v2/gh/", "Colab": "colab.research.google.com/github/", "JupyterHub": HUB}


def _pages(html: Path) -> list[Path]:
    skip = {html / "genindex.html", html / "search.html", html / "index.html"}  # the root index only redirects
    return sorted(p for p in html.rglob("*.html") if p not in skip and "_static" not in p.parts)


def test_book_has_every_page(html):
    pages = {p.relative_to(html).with_suffix("").as_posix() for p in _pages(html)}
    expected = {"book/index", "book/references", "book/reproduction-report", "book/reproduction-changes"}
    expected |= {"notebooks/" + n.removesuffix(".ipynb") for n in runner.toc_notebooks()}
    assert expected <= pages
    report = (html / "book" / "reproduction-report.html").read_text()
    assert "reproduced" in report and "Pearl" in report
    changes = (html / "book" / "reproduction-changes.html").read_text()
    assert "Changes to the reproduction report" in changes and "claims changed" in changes
    assert not list(html.rglob("*cdn.jsdelivr*")) and "cdn.jsdelivr" not in (html / "book" / "index.html").read_text()


def test_no_broken_internal_link(html):
    report = check_links(html)
    assert not report.broken, "broken internal links:\n" + "\n".join(report.broken[:30])
    assert report.external, "external links are listed (the bibliography and launch buttons have some)"


def test_link_checker_finds_a_missing_page_and_anchor(tmp_path):
    (tmp_path / "a.html").write_text(
        '<a href="b.html#there">x</a><a href="c.html">y</a><a href="#here">z</a>'
        '<a href="https://example.org/">e</a><p id="here"></p>'
    )
    (tmp_path / "b.html").write_text('<p id="elsewhere"></p>')
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "macros.html").write_text("<script src=\"{{ pathto('x.js', 1) }}\"></script>")  # a template
    report = check_links(tmp_path)
    assert report.broken == ["a.html -> b.html#there (no anchor #there)", "a.html -> c.html (no such file)"]
    assert report.external == ["https://example.org/"]


def test_every_notebook_page_has_a_receipt_and_launch_buttons(html):
    for nb in runner.toc_notebooks():
        page = (html / "notebooks" / nb).with_suffix(".html")
        text = page.read_text()
        assert RECEIPT_CLASS in text and "Execution receipt" in text, f"{nb}: no execution receipt"
        for row in ("scale", "device", "wall time", "cflib commit", "lock file", "cache"):
            assert f"<td><p>{row}</p></td>" in text or f"<td>{row}</td>" in text, f"{nb}: receipt lacks {row}"
        for name, url in LAUNCHERS.items():
            assert url in text, f"{nb}: no {name} launch button"


def test_pages_show_no_reader_facing_defect(html):
    """Issue 26: no dict text or cut-off cells in tables, at most 20 numbers in e-notation, no float with nine or more
    decimals, no TeX or $ outside math, no stderr block, no "notes §", at most 5 figures without alt text that says
    what they show and at most 10 claim cards over 150 words; the receipt has a header row."""
    from tests.html_defects import defects, over_limits

    problems = over_limits(defects(html))
    assert not problems, "\n".join(problems)
    page = (html / "notebooks" / runner.toc_notebooks()[0]).with_suffix(".html").read_text()
    assert '<th class="head"><p>fact</p></th>' in page or "<th>fact</th>" in page, "the receipt's table has no header"


def test_at_least_20_tables_show_the_papers_numbers_beside_the_books(html):
    """Issue 39: results tables hold the paper's value and the book's side by side ("paper" and "book" headers)."""
    from tests.html_defects import paper_beside_book

    found = paper_beside_book(html)
    assert len(found) >= 20, f"{len(found)} tables with the paper beside the book: " + "; ".join(found)


def _browser():
    chromium = shutil.which("chromium")
    driver = shutil.which("chromedriver")
    if not (chromium and driver):
        pytest.fail("the browser test needs Debian's chromium and chromium-driver (make test installs them)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-quic",
        "--window-size=1280,1600",
    ):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver), options=opts)


def test_every_page_renders_in_a_browser(html):
    from selenium.webdriver.support.ui import WebDriverWait

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser = _browser()
    problems = []
    try:
        for page in _pages(html):
            name = page.relative_to(html).with_suffix("").as_posix()
            browser.get(page.as_uri())
            WebDriverWait(browser, 30).until(lambda b: b.execute_script("return document.readyState") == "complete")
            has_math = browser.execute_script(
                "return document.querySelectorAll('.math, .MathJax, mjx-container').length > 0"
            )
            if has_math:
                try:
                    WebDriverWait(browser, 30).until(
                        lambda b: b.execute_script("return document.querySelectorAll('mjx-container').length > 0")
                    )
                except Exception:
                    problems.append(f"{name}: math was not typeset by MathJax")
            broken = browser.execute_script(
                "return Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
            )
            if broken:
                problems.append(f"{name}: images that did not load: {broken[:3]}")
            # Errors and tracebacks fail the page; warnings on stderr are allowed (the notebooks keep them rare).
            errors = browser.execute_script(
                "return document.querySelectorAll('.output.traceback, .output.error').length"
            )
            body = browser.find_element("tag name", "body").text
            if errors or "Traceback (most recent call last)" in body:
                problems.append(f"{name}: shows error output or a traceback")
            if name.startswith("notebooks/"):
                shown = browser.execute_script(
                    f"const r = document.querySelector('.{RECEIPT_CLASS}'); return r ? r.innerText : ''"
                )
                if "Execution receipt" not in shown or "smoke" not in shown:
                    problems.append(f"{name}: the execution receipt is not shown")
                launch = browser.execute_script(
                    "return Array.from(document.querySelectorAll('a')).map(a => a.href).join(' ')"
                )
                if not all(u in launch for u in LAUNCHERS.values()):
                    problems.append(f"{name}: launch buttons missing")
            browser.save_screenshot(str(SCREENSHOTS / (name.replace("/", "__") + ".png")))
    finally:
        browser.quit()
    assert not problems, "\n".join(problems)


def test_audit_report_html_opens_in_a_browser(tmp_path):
    """The page `AuditReport.to_html` writes is self-contained: it opens offline, shows its table and its
    figure loads, with no error (issue 13)."""
    import numpy as np
    import pandas as pd

    from cflib.audit import audit
    from cflib.fairness.sfm import StandardFairnessModel

    rng = np.random.default_rng(0)
    z = rng.normal(size=600)
    x = (rng.random(600) < 0.5).astype(int)
    w = 0.5 * x + z + rng.normal(size=600)
    d = pd.DataFrame({"x": x, "z": z, "w": w, "y": w + 0.3 * x + rng.normal(size=600)})
    page = audit(
        lambda f: f.w.to_numpy() + 0.2 * f.x.to_numpy(),
        d,
        sfm=StandardFairnessModel("x", ["z"], ["w"], "y"),
        n_boot=0,
        learner="linear",
        progress=False,
    ).to_html(tmp_path / "report.html")
    browser = _browser()
    try:
        browser.get(page.as_uri())
        images = browser.execute_script("return Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
        text = browser.find_element("tag name", "body").text
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOTS / "audit-report.png"))
    finally:
        browser.quit()
    assert images == [True], "the report's figure did not load"
    assert "Ctf-DE (white-box)" in text and "Provenance" in text and "Traceback" not in text


def test_image_audit_report_html_opens_in_a_browser(tmp_path):
    """The page an image audit writes (issue 28) opens offline with its table and its figure (the gate and the
    units whose decision flips most), with no error."""
    from tests.test_audit_images import corner_marks, reads, run

    page = run(*corner_marks(200, seed=4), clf=reads).to_html(tmp_path / "image-report.html")
    browser = _browser()
    try:
        browser.get(page.as_uri())
        images = browser.execute_script("return Array.from(document.images).map(i => i.complete && i.naturalWidth > 0)")
        sizes = browser.execute_script("return Array.from(document.images).map(i => [i.naturalWidth, i.naturalHeight])")
        text = browser.find_element("tag name", "body").text
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOTS / "image-audit-report.png"))
    finally:
        browser.quit()
    assert images == [True], "the report's figure did not load"
    assert sizes[0][1] > 400, f"the figure lacks its image rows: {sizes[0]}"
    for row in (
        "generator composition",
        "generator reversibility",
        "generator effectiveness",
        "ECA",
        "CIT-LR",
        "Provenance",
    ):
        assert row in text, row
    assert "Traceback" not in text
