"""Where the project's folders are: the repository root, notebooks, data, build outputs and the cache."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["repo_root", "notebooks_dir", "data_dir", "build_dir", "cache_dir", "user_cache_dir"]


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


def _own_clone() -> Path | None:
    """The repository this cflib belongs to: ``CFLIB_ROOT`` when set, else the folder above the package when it
    holds ``_toc.yml`` (a clone with an editable install); ``None`` for an installed copy."""
    env = os.environ.get("CFLIB_ROOT")
    if env:
        return Path(env).resolve()
    here = Path(__file__).resolve().parent.parent
    return here if (here / "_toc.yml").exists() else None


def user_cache_dir() -> Path:
    """The user's cache folder for cflib: ``platformdirs.user_cache_dir("cflib")`` when platformdirs is installed,
    else ``$XDG_CACHE_HOME/cflib``, else ``~/.cache/cflib``.

    Returns
    -------
    pathlib.Path
    """
    try:
        import platformdirs
    except ImportError:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        return Path(base).expanduser().resolve() / "cflib"
    return Path(platformdirs.user_cache_dir("cflib", appauthor=False)).resolve()


def cache_dir() -> Path:
    """Where cflib keeps what it trains once and reuses (the models of :func:`cflib.runtime.fit_cached`).

    ``CFLIB_CACHE`` when set. Else, for the clone's own work (``CFLIB_ROOT`` set, or the working folder inside the
    clone that holds the package: the book's notebooks and the tests), the repository's ``_build/cache``, which
    the book's rebuild reuses. Anywhere else (an installed copy, or a run from another folder) the user's cache
    folder (:func:`user_cache_dir`): nothing is written into the working folder.

    Returns
    -------
    pathlib.Path
        The folder (not created here).
    """
    env = os.environ.get("CFLIB_CACHE")
    if env:
        return Path(env).expanduser().resolve()
    clone = _own_clone()
    if clone is not None:
        cwd = Path.cwd().resolve()
        if os.environ.get("CFLIB_ROOT") or cwd == clone or clone in cwd.parents:
            return clone / "_build" / "cache"
    return user_cache_dir()
