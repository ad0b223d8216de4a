"""The package's layers, read from the import graph (``ast``; nothing is imported).

``data`` -> ``scm``/``models`` -> ``metrics``/``stats``/``fairness`` -> ``experiments``/``audit`` ->
``runner``/``sweep``/``book``/``cli`` (DESIGN.md, "Layers"). A module may import modules of its own layer
or of a lower one, and the graph between modules has no cycle.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "cflib"

# Longest matching prefix wins. The causal-graph and SCM primitives sit below the datasets, which are
# generated from SCMs; the deep SCM and the model adapters sit with the models they wrap.
LAYERS: dict[str, int] = {
    "cflib": 0,
    "cflib._lazy": 0,
    "cflib.paths": 0,
    "cflib.runtime": 0,
    "cflib.results": 0,
    "cflib.plotting": 0,
    "cflib.claims": 0,
    "cflib.validation": 0,
    "cflib.verdicts": 0,
    "cflib.formatting": 0,
    "cflib.scm.graph": 1,
    "cflib.scm.scm": 1,
    "cflib.scm.examples": 1,
    "cflib.scm.protocol": 1,
    "cflib.data": 2,
    "cflib.scm": 3,
    "cflib.models": 3,
    "cflib.metrics": 4,
    "cflib.stats": 4,
    "cflib.fairness": 4,
    "cflib.experiments": 5,
    "cflib.audit": 5,
    "cflib.audit_images": 5,
    "cflib.runner": 6,
    "cflib.sweep": 6,
    "cflib.book": 6,
    "cflib.cli": 6,
    "cflib.__main__": 6,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def layer(module: str) -> int:
    best = max((p for p in LAYERS if module == p or module.startswith(p + ".")), key=len)
    return LAYERS[best]


def import_graph() -> dict[str, set[str]]:
    """Module -> the cflib modules it imports (at any depth of the file, TYPE_CHECKING blocks excluded)."""
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        tree = ast.parse(path.read_text())
        skip: set[int] = set()
        for node in ast.walk(tree):  # imports only for the type checker do not count
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                skip.update(id(n) for b in node.body for n in ast.walk(b))
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                targets.append(target)
                targets += [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            elif isinstance(node, ast.Import):
                targets += [a.name for a in node.names]
            for t in targets:
                if t.startswith("cflib") and t in modules and t != mod:
                    graph[mod].add(t)
    return graph


def test_every_module_has_a_layer():
    for path in ROOT.rglob("*.py"):
        mod = module_name(path)
        assert any(mod == p or mod.startswith(p + ".") for p in LAYERS if p != "cflib") or mod == "cflib", mod


def test_no_import_against_the_layers():
    bad = sorted(
        f"{m} (layer {layer(m)}) imports {t} (layer {layer(t)})"
        for m, ts in import_graph().items()
        for t in ts
        if layer(t) > layer(m) and t != m.rsplit(".", 1)[0]
    )
    assert not bad, "imports against the layers:\n" + "\n".join(bad)


def test_no_import_cycle():
    graph = import_graph()
    # package __init__ files re-export their modules; an edge module -> its own package is not a dependency
    edges = {m: {t for t in ts if not m.startswith(t + ".")} for m, ts in graph.items()}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            pytest.fail("import cycle: " + " -> ".join(cycle))


def test_the_checker_sees_a_violation(tmp_path, monkeypatch):
    """The graph reader finds relative and absolute imports (so the tests above can fail)."""
    graph = import_graph()
    assert "cflib.paths" in graph["cflib.runner"]
    assert layer("cflib.experiments.parity_decomposition") > layer("cflib.fairness.effects")
    assert layer("cflib.scm.deep") > layer("cflib.data.morphosynth") > layer("cflib.scm.scm")


def test_no_module_calls_a_private_method_of_another_object():
    """``obj._method(...)`` couples a caller to another class's internals (an HVAE refactor once broke the
    benchmark at run time this way); only ``self``/``cls``/``super()`` may call private methods."""
    found = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name, base = node.func.attr, ast.unparse(node.func.value)
                if name.startswith("_") and not name.startswith("__") and base not in ("self", "cls") \
                        and not base.startswith("super("):
                    found.append(f"{module_name(path)}:{node.lineno} {base}.{name}()")
    assert not found, "\n".join(found)


def test_models_and_metrics_import_no_dataset_module():
    """Models and metrics take arrays and the protocols; they know no data set (the protocol itself is allowed)."""
    graph = import_graph()
    bad = sorted(f"{m} imports {t}" for m, ts in graph.items() if m.startswith(("cflib.models", "cflib.metrics"))
                 for t in ts if t.startswith("cflib.data") and t not in ("cflib.data", "cflib.data.protocol"))
    assert not bad, "\n".join(bad)
