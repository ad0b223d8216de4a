"""The package's layers and the shape of its modules, read with ``ast`` (nothing is imported).

``data`` -> ``scm``/``models`` -> ``metrics``/``stats``/``fairness`` -> ``experiments``/``audit`` ->
``runner``/``sweep``/``book``/``cli`` (DESIGN.md, "Layers"). A module may import modules of its own layer
or of a lower one, and the graph between modules has no cycle.

The shape (issue 25): no file over :data:`MAX_FILE_LINES` lines, no function over :data:`MAX_FUNCTION_LINES`
lines, no module named like a test, no private name used across modules (a helper two modules need is public
in one of them), and one interval class (:class:`cflib.results.Interval`).
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
    "cflib.stats.proportions": 0,  # numerics only (scipy, cflib.validation): cflib.verdicts uses it
    "cflib.fairness": 4,
    "cflib.experiments": 5,
    "cflib.audit": 5,
    "cflib.audit_images": 5,
    "cflib.kernels": 6,
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
                return stack[stack.index(nxt) :] + [nxt]
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
    assert layer("cflib.experiments.parity") > layer("cflib.fairness.effects")
    assert layer("cflib.scm.deep") > layer("cflib.data.morphosynth") > layer("cflib.scm.scm")


def test_no_module_calls_a_private_method_of_another_object():
    """``obj._method(...)`` couples a caller to another class's internals (an HVAE refactor once broke the
    benchmark at run time this way); only ``self``/``cls``/``super()`` may call private methods."""
    found = []
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                name, base = node.func.attr, ast.unparse(node.func.value)
                if (
                    name.startswith("_")
                    and not name.startswith("__")
                    and base not in ("self", "cls")
                    and not base.startswith("super(")
                ):
                    found.append(f"{module_name(path)}:{node.lineno} {base}.{name}()")
    assert not found, "\n".join(found)


def test_models_and_metrics_import_no_dataset_module():
    """Models and metrics take arrays and the protocols; they know no data set (the protocol itself is allowed)."""
    graph = import_graph()
    bad = sorted(
        f"{m} imports {t}"
        for m, ts in graph.items()
        if m.startswith(("cflib.models", "cflib.metrics"))
        for t in ts
        if t.startswith("cflib.data") and t not in ("cflib.data", "cflib.data.protocol")
    )
    assert not bad, "\n".join(bad)


# ---------------------------------------------------------------------------- the shape of the modules
MAX_FILE_LINES = 1200
MAX_FUNCTION_LINES = 150
BENCHMARKS = ROOT.parent / "benchmarks"


def long_files(root: Path = ROOT, limit: int = MAX_FILE_LINES) -> list[str]:
    """Files under ``root`` with more than ``limit`` lines."""
    return sorted(
        f"{p.relative_to(root.parent)}: {n} lines"
        for p in root.rglob("*.py")
        if (n := len(p.read_text().splitlines())) > limit
    )


def long_functions(root: Path = ROOT, limit: int = MAX_FUNCTION_LINES) -> list[str]:
    """Functions and methods under ``root`` longer than ``limit`` lines (from ``def`` to the last line)."""
    found = []
    for p in root.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if (
                isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                and (n := node.end_lineno - node.lineno + 1) > limit
            ):
                found.append(f"{p.relative_to(root.parent)}:{node.lineno} {node.name}: {n} lines")
    return sorted(found)


def test_named_like_tests(root: Path = ROOT) -> list[str]:
    """Modules whose names make test collectors and tools that skip tests treat them as tests."""
    return sorted(
        str(p.relative_to(root.parent))
        for p in root.rglob("*.py")
        if p.stem.startswith("test_") or p.stem.endswith("_test") or p.stem == "conftest"
    )


test_named_like_tests.__test__ = False  # a checker, not a test


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(paths: list[Path], package: str = "cflib") -> list[str]:
    """Private names another module reaches: ``from m import _x``, or ``m._x`` on an imported module ``m``."""
    found = []
    for path in paths:
        tree = ast.parse(path.read_text())
        modules: set[str] = set()  # local names bound to imported package modules
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(package)):
                where = "." * node.level + (node.module or "")
                for a in node.names:
                    if _private(a.name):
                        found.append(f"{path.name}:{node.lineno} from {where} import {a.name}")
                    elif a.name[:1].islower():
                        modules.add(a.asname or a.name)
            elif isinstance(node, ast.Import):
                modules.update((a.asname or a.name).split(".")[0] for a in node.names if a.name.startswith(package))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and _private(node.attr)
                and isinstance(node.value, ast.Name)
                and node.value.id in modules
            ):
                found.append(f"{path.name}:{node.lineno} {node.value.id}.{node.attr}")
    return sorted(found)


def interval_classes(root: Path = ROOT) -> list[str]:
    """Classes that hold an interval of their own: named ``*Interval`` or with both ``low`` and ``high`` fields."""
    found = []
    for p in root.rglob("*.py"):
        for node in ast.walk(ast.parse(p.read_text())):
            if isinstance(node, ast.ClassDef):
                fields = {
                    t.target.id for t in node.body if isinstance(t, ast.AnnAssign) and isinstance(t.target, ast.Name)
                }
                if node.name.endswith("Interval") or {"low", "high"} <= fields:
                    found.append(".".join(p.relative_to(root.parent).with_suffix("").parts + (node.name,)))
    return sorted(found)


def test_no_file_is_a_god_module():
    assert not long_files(), "split these files into modules of one idea:\n" + "\n".join(long_files())


def test_no_function_is_too_long():
    found = long_functions()
    assert not found, "split these into named stages:\n" + "\n".join(found)


def test_no_module_is_named_like_a_test():
    assert not test_named_like_tests(), test_named_like_tests()


def test_no_private_name_is_used_across_modules():
    found = private_imports(sorted(ROOT.rglob("*.py")) + sorted(BENCHMARKS.rglob("*.py")))
    assert not found, "make these public in their module (or move them to their one user):\n" + "\n".join(found)


def test_one_interval_class():
    assert interval_classes() == ["cflib.results.Interval"]


def test_the_shape_checkers_see_violations(tmp_path):
    pkg = tmp_path / "cflib"
    (pkg / "stats").mkdir(parents=True)
    (pkg / "stats" / "closeness_test.py").write_text(
        "import cflib.stats.mmd as m\n"
        "from cflib.stats.mmd import _pvalue, check\n"
        "from .mmd import _check_same_dim\n"
        "def f():\n" + "    x = 1\n" * 160 + "    return m._helper(x)\n"
    )
    (pkg / "stats" / "big.py").write_text("class PairInterval:\n    low: float\n    high: float\n" + "x = 1\n" * 1300)
    (pkg / "stats" / "ok.py").write_text("from cflib.results import Interval\nclass Fit:\n    low: float\n")
    assert long_files(pkg) == ["cflib/stats/big.py: 1303 lines"]
    assert long_functions(pkg) == ["cflib/stats/closeness_test.py:4 f: 162 lines"]
    assert test_named_like_tests(pkg) == ["cflib/stats/closeness_test.py"]
    assert private_imports([pkg / "stats" / "closeness_test.py", pkg / "stats" / "ok.py"]) == [
        "closeness_test.py:165 m._helper",
        "closeness_test.py:2 from cflib.stats.mmd import _pvalue",
        "closeness_test.py:3 from .mmd import _check_same_dim",
    ]
    assert interval_classes(pkg) == ["cflib.stats.big.PairInterval"]
