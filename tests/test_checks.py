"""The maintainers' checks run with the tests: ``ruff check``, ``ruff format --check`` and ``mypy`` (issue 31).

``make test`` (and so CI) fails when any of them fails; each has a test here that feeds it a violation, so
a check that silently stopped checking would fail too. ``make lint`` and the pre-commit hooks run the same
three commands.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PATHS = ["cflib", "tests", "benchmarks"]

#: The three checks, as CONTRIBUTING.md, the Makefile's lint target and .pre-commit-config.yaml run them.
CHECKS = {
    "ruff check": [str(BIN / "ruff"), "check", *PATHS],
    "ruff format --check": [str(BIN / "ruff"), "format", "--check", *PATHS],
    "mypy": [sys.executable, "-m", "mypy"],  # configured in pyproject.toml: the package
}


def run(cmd: list[str], cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("name", list(CHECKS))
def test_the_code_passes(name):
    res = run(CHECKS[name])
    assert res.returncode == 0, f"`{name}` failed (run it to see and fix):\n{res.stdout[-4000:]}{res.stderr[-2000:]}"


def test_each_check_fails_on_a_violation(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        (ROOT / "pyproject.toml").read_text().replace('files = ["cflib"]', 'files = ["bad.py"]')
    )
    (tmp_path / "bad.py").write_text("import os\n\n\ndef f(x: int) -> str:\n    return x+1\n")
    ruff = str(BIN / "ruff")
    assert run([ruff, "check", "bad.py"], tmp_path).returncode == 1  # F401: os imported but unused
    assert run([ruff, "format", "--check", "bad.py"], tmp_path).returncode == 1  # `x+1` is not formatted
    res = run([sys.executable, "-m", "mypy"], tmp_path)
    assert res.returncode == 1 and "Incompatible return value type" in res.stdout
    (tmp_path / "bad.py").write_text("def f(x: int) -> int:\n    return x + 1\n")
    assert run([ruff, "check", "bad.py"], tmp_path).returncode == 0
    assert run([ruff, "format", "--check", "bad.py"], tmp_path).returncode == 0
    assert run([sys.executable, "-m", "mypy"], tmp_path).returncode == 0


def test_the_makefile_and_pre_commit_run_the_same_checks():
    lint = (ROOT / "Makefile").read_text().split("\nlint:")[1].split("\n\n")[0]
    hooks = (ROOT / ".pre-commit-config.yaml").read_text()
    for text in (lint, hooks):
        assert "ruff check cflib tests benchmarks" in text
        assert "ruff format --check cflib tests benchmarks" in text
        assert "mypy" in text
