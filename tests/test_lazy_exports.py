"""Sub-packages re-export their modules' public names lazily, without clashes."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from cflib._lazy import exports

PACKAGES = ["cflib.data", "cflib.models", "cflib.metrics", "cflib.stats", "cflib.fairness", "cflib.scm"]

# Names that mean the same operation on different data sets: each is imported from its module
# (``from cflib.data.shapes import true_counterfactual``) and left out of the package namespace.
ALLOWED_CLASHES = {
    "cflib.data": {"true_counterfactual", "encode_parents"},
}


@pytest.mark.parametrize("package", PACKAGES)
def test_no_name_is_exported_by_two_modules(package):
    mod = importlib.import_module(package)
    _, clashes = exports(mod.__file__)
    unexpected = {k: v for k, v in clashes.items() if k not in ALLOWED_CLASHES.get(package, set())}
    assert not unexpected, f"{package}: names exported by several modules: {unexpected}"
    for name in clashes:
        assert name not in mod.__all__


@pytest.mark.parametrize("package", PACKAGES)
def test_every_listed_name_resolves(package):
    mod = importlib.import_module(package)
    for name in mod.__all__:
        assert getattr(mod, name) is not None
    with pytest.raises(AttributeError, match="has no attribute"):
        mod.no_such_name  # noqa: B018


def test_importing_one_name_imports_one_module():
    code = "import sys; from cflib.data import load_compas; print(sorted(m for m in sys.modules if m.startswith('cflib.data.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['cflib.data.real']"


@pytest.mark.parametrize("package", PACKAGES)
def test_type_checking_block_is_up_to_date(package):
    """Each __init__ lists every lazily exported name as an explicit import for IDEs and type checkers."""
    from cflib._lazy import type_checking_block

    mod = importlib.import_module(package)
    text = Path(mod.__file__).read_text()
    assert type_checking_block(mod.__file__) in text, f"run `python -m cflib._lazy` to regenerate {mod.__file__}"


def test_importing_cflib_loads_no_heavy_dependency():
    """`import cflib` (and a sub-package) stays light: torch, pandas and scikit-learn load on first use only."""
    code = (
        "import sys, cflib, cflib.stats, cflib.models, cflib.fairness; "
        "print(sorted(m for m in ('torch', 'pandas', 'sklearn', 'diffusers', 'scipy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
