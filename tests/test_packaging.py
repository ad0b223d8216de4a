"""Packaging: pins, the conda mirror, CI = the README's test command, the CLI entry point."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def _pins() -> list[str]:
    return [
        line.strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]


def test_requirements_are_exact_pins_with_cpu_torch_and_jupyter_book_1():
    pins = _pins()
    assert all("==" in p for p in pins)
    versions = dict(p.split("==") for p in pins)
    assert versions["torch"] == "2.13.0"
    assert versions["jupyter-book"].startswith("1.")


def test_environment_yml_mirrors_requirements():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert [p for p in pip if p != "-e ."] == _pins()


def test_ci_runs_the_readme_test_command():
    assert "make test" in (ROOT / ".ci" / "run").read_text()
    assert "make test" in (ROOT / "README.md").read_text()


def test_cli_help_lists_the_commands(capsys):
    import pytest

    from cflib.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    for cmd in ("run", "sweep", "book", "report", "data"):
        assert cmd in out
