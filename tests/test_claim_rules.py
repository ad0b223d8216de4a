"""Issue 38: the rules every claim follows, checked on cflib's sources and on recorded claims."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cflib import claims

ROOT = Path(__file__).resolve().parents[1]
#: The functions that record a claim: cflib.claims.claim and the chapters' wrappers around it.
CLAIM_FUNCTIONS = {"claim", "record_claim"}


def _claim_calls(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name in CLAIM_FUNCTIONS:
                yield node


def test_every_claim_call_in_cflib_states_its_kind():
    missing, seen = [], 0
    for path in sorted((ROOT / "cflib").rglob("*.py")):
        for call in _claim_calls(path):
            seen += 1
            if "kind" not in {k.arg for k in call.keywords}:
                missing.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert seen > 100, "the scan finds the chapters' claim calls"
    assert not missing, f"claims without an explicit kind: {missing}"


def test_claim_has_no_default_kind(monkeypatch, tmp_path):
    monkeypatch.setenv("CFLIB_CLAIMS_FILE", str(tmp_path / "x.claims.json"))
    claims.reset()
    with pytest.raises(TypeError, match="kind"):
        claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence="e")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="kind"):
        claims.Claim("C1", "s", 1, 1, "reproduced", "e")  # type: ignore[call-arg]
    c = claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence="e", kind="sanity check")
    assert c.kind == "sanity check"
    claims.reset()


@pytest.mark.parametrize("module", ["cflib.experiments.soundness.deciding", "cflib.experiments.benchmark.parts"])
def test_chapter_claim_wrappers_have_no_default_kind(module):
    import importlib
    import inspect

    mod = importlib.import_module(module)
    fn = mod.claim if hasattr(mod, "claim") else mod.record_claim
    assert inspect.signature(fn).parameters["kind"].default is inspect.Parameter.empty
