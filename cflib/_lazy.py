"""Lazy re-exports for cflib's sub-packages.

``from cflib.stats import mmd_test`` should work without importing every module of ``cflib.stats``
(some pull in torch or diffusers, and the notebook cache tracks which cflib modules a run imported).
Each sub-package's ``__init__`` calls :func:`attach`, which reads the ``__all__`` of its modules with
``ast`` (nothing is imported) and imports a module only when one of its names is first used.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

__all__ = ["attach", "exports", "public_names"]


def public_names(path: Path) -> list[str]:
    """The literal ``__all__`` of a module file, or ``[]`` when it has none.

    Parameters
    ----------
    path : pathlib.Path
        A ``.py`` file.

    Returns
    -------
    list of str
    """
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return [str(v) for v in ast.literal_eval(node.value)]
    return []


def exports(init_file: str) -> tuple[dict[str, str], dict[str, list[str]]]:
    """Which module of a package exports each public name, and the names exported twice.

    Parameters
    ----------
    init_file : str
        The package's ``__init__.py``.

    Returns
    -------
    (dict, dict)
        ``name -> module`` for unambiguous names; ``name -> [modules]`` for clashes.
    """
    found: dict[str, list[str]] = {}
    for f in sorted(Path(init_file).parent.glob("*.py")):
        if not f.name.startswith("_"):
            for name in public_names(f):
                found.setdefault(name, []).append(f.stem)
    where = {n: m[0] for n, m in found.items() if len(m) == 1}
    return where, {n: m for n, m in found.items() if len(m) > 1}


def attach(package: str, init_file: str, eager: dict[str, object] | None = None):
    """Build ``__getattr__``, ``__dir__`` and ``__all__`` for a sub-package.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    init_file : str
        The package's ``__file__``.
    eager : dict, optional
        Names already imported by the ``__init__`` itself.

    Returns
    -------
    (callable, callable, list of str)

    Notes
    -----
    A name exported by two modules is left out (import it from its module); a test checks that
    no package has such a clash.
    """
    where, _ = exports(init_file)
    eager = dict(eager or {})

    def __getattr__(name: str):
        if name in where:
            value = getattr(importlib.import_module(f"{package}.{where[name]}"), name)
            eager[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(where) | set(eager))

    return __getattr__, __dir__, sorted(set(where) | set(eager))
