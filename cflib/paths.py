"""Where the project's folders are: the repository root, notebooks, data and build outputs."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["repo_root", "notebooks_dir", "data_dir", "build_dir"]


def repo_root() -> Path:
    """The repository root (the folder holding ``_toc.yml``).

    Taken from ``CFLIB_ROOT`` when set, else the folder above the installed ``cflib`` package
    (an editable install), else the first parent of the working directory holding ``_toc.yml``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If no such folder can be found.
    """
    env = os.environ.get("CFLIB_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent.parent
    if (here / "_toc.yml").exists():
        return here
    for parent in [Path.cwd(), *Path.cwd().parents]:
        if (parent / "_toc.yml").exists():
            return parent
    raise FileNotFoundError(
        "cannot find the repository root (a folder with _toc.yml); run from inside the clone or set CFLIB_ROOT"
    )


def notebooks_dir() -> Path:
    """The ``notebooks/`` folder of the repository."""
    return repo_root() / "notebooks"


def data_dir() -> Path:
    """The ``data/`` folder (``CFLIB_DATA`` overrides it)."""
    env = os.environ.get("CFLIB_DATA")
    return Path(env).resolve() if env else repo_root() / "data"


def build_dir() -> Path:
    """The ``_build/`` folder where executed notebooks and the HTML book go."""
    return repo_root() / "_build"
