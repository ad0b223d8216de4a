"""Issue 38: the rules every claim follows, checked on cflib's sources and on recorded claims."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cflib import claims, verdicts

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


def _recorded(verdict, method, evidence="e", kind="reproduction", rule="r"):
    return {
        "key": "K",
        "verdict": verdict,
        "kind": kind,
        "evidence": evidence,
        "rule": rule,
        "interval": {"method": method},
    }


def test_seed_count_reads_the_interval_method():
    assert verdicts.seed_count(verdicts.seed_interval([1.0, 2.0, 3.0]).method) == 3
    assert verdicts.seed_count("95% t interval, 12 audits") is None
    iv = verdicts.mean_interval([0.1, 0.2, 0.3], unit="images")
    assert verdicts.seed_count(verdicts.one_seed(verdicts.decide_above(iv, 0)).interval.method) == 1
    with pytest.raises(TypeError, match="method must be a string"):
        verdicts.seed_count(None)  # type: ignore[arg-type]


def test_seed_problem_finds_model_comparisons_decided_on_one_seed():
    on_images = verdicts.decide_above(verdicts.mean_interval([1.0, 1.1, 1.2], unit="test images"), 0.0)
    per_seed = verdicts.decide_above(verdicts.seed_interval([1.0, 1.1, 1.2]), 0.0)
    cases = {
        # evidence names one seed, decided on test images: the rule is broken
        ("reproduced", on_images.interval.method, "toy scale, one seed"): True,
        ("not reproduced", on_images.interval.method, "one oracle seed; intervals over test images"): True,
        ("reproduced", "95% normal interval, standard errors", "3 training seeds x 5 models"): True,
        # decided over seeds, undecided through one_seed, or no model comparison named: kept
        ("reproduced", per_seed.interval.method, "3 training seeds x 5 models"): False,
        ("undecided at this scale", verdicts.one_seed(on_images).interval.method, "toy scale, one seed"): False,
        ("reproduced", on_images.interval.method, "20000 units of the SCM"): False,
    }
    for (verdict, method, evidence), broken in cases.items():
        assert (verdicts.seed_problem(_recorded(verdict, method, evidence)) is not None) is broken, (verdict, evidence)
    assert (
        verdicts.seed_problem(_recorded("reproduced", on_images.interval.method, "one seed", kind="sanity check"))
        is None
    )
    assert verdicts.one_seed(on_images).verdict == "undecided at this scale"
    with pytest.raises(TypeError, match="claim must be a mapping"):
        verdicts.seed_problem("C10")  # type: ignore[arg-type]


def test_on_substitute_keeps_the_reading_and_the_measurement():
    d = verdicts.decide_above(verdicts.mean_interval([1.0, 1.1, 1.2]), 0.0)
    sub = verdicts.on_substitute(d, "the toy keeps the knob but not the depth")
    assert sub.verdict == "differs with the substitute data" and sub.interval is d.interval
    assert "the toy keeps the knob" in sub.rule and "the rule reads reproduced" in sub.rule and d.rule in sub.rule
    with pytest.raises(ValueError, match="why must say"):
        verdicts.on_substitute(d, " ")
    with pytest.raises(TypeError, match="decision must be"):
        verdicts.on_substitute("reproduced", "x")  # type: ignore[arg-type]
