"""Shared test set-up: a headless backend, offline hubs, and helpers for throw-away notebook repos."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import matplotlib
import nbformat
import pytest

matplotlib.use("Agg")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

ROOT = Path(__file__).resolve().parent.parent


def make_notebook(path: Path, parameters: str, body: str) -> Path:
    """Write a minimal notebook with a parameters cell and one body cell."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    p = nbformat.v4.new_code_cell(textwrap.dedent(parameters))
    p.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# Test"), p, nbformat.v4.new_code_cell(textwrap.dedent(body))]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def fake_repo(tmp_path, monkeypatch):
    """A throw-away repository (``_toc.yml`` + ``notebooks/``) that cflib treats as its root."""
    (tmp_path / "notebooks" / "params").mkdir(parents=True)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n  - file: notebooks/demo/01-square\n")
    make_notebook(
        tmp_path / "notebooks" / "demo" / "01-square.ipynb",
        "x = 2\nseed = 0\nfail_at = -1\n",
        """
        from cflib import claims
        if x == fail_at:
            raise RuntimeError(f"asked to fail at x={x}")
        claims.record("square", x * x)
        claims.claim("D1", "x squared is non-negative", paper=">= 0", ours=x * x, holds=x * x >= 0, evidence="arithmetic", kind="sanity check")
        """,
    )
    monkeypatch.setenv("CFLIB_ROOT", str(tmp_path))
    return tmp_path


def shard_of(names: list[str]) -> list[str]:
    """The notebooks of this test shard: ``CFLIB_TEST_SHARD=K/N`` keeps every N-th from the K-th on
    (the CI workflow runs the notebooks in N parallel jobs); unset, all of them."""
    from cflib.sweep import parse_shard

    shard = parse_shard(os.environ.get("CFLIB_TEST_SHARD") or None)
    return names if shard is None else names[shard[0] - 1 :: shard[1]]


@pytest.fixture(scope="session")
def smoke_runs():
    """Execute every notebook of the table of contents at smoke scale, two at a time.

    Returns ``{notebook: RunResult or NotebookError}``; results go to ``_build/executed/smoke`` (the
    runner's cache makes a repeated local test run fast; CI starts from a clean clone).
    """
    from concurrent.futures import ThreadPoolExecutor

    from cflib import runner

    os.environ.pop("CFLIB_ROOT", None)
    names = shard_of(runner.toc_notebooks())
    out = ROOT / "_build" / "executed" / "smoke"

    def one(name):
        try:
            return name, runner.execute(name, "smoke", output_dir=out)
        except runner.NotebookError as exc:
            return name, exc

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, names)), out


@pytest.fixture
def fresh_claims(monkeypatch):
    """An empty claims record that writes no file, before and after the test (the chapters' claims tests)."""
    from cflib import claims

    monkeypatch.delenv("CFLIB_CLAIMS_FILE", raising=False)
    claims.reset()
    yield
    claims.reset()


def verdicts(table) -> dict[str, str]:
    """``{key: verdict}`` of a claims table."""
    return dict(zip(table["key"], table["verdict"], strict=True))
