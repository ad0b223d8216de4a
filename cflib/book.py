"""Build the book: execute the notebooks (cached), stage the sources, run Jupyter Book 1.

The notebooks are executed by :mod:`cflib.runner` (only those whose content, parameters or ``cflib``
source changed), then copied with the prose pages into ``_build/site/``, where the reproduction
report is generated from the notebooks' claims. Jupyter Book builds ``_build/html`` from there with
``-W`` (warnings are errors) and never executes anything itself. Files are copied only when their
bytes changed, so a rebuild with nothing changed lets Sphinx reuse its whole environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from .claims import gather, report_markdown
from .paths import build_dir, repo_root
from .runner import run, toc_notebooks

__all__ = ["stage", "build"]


def _sync(src: Path, dst: Path) -> bool:
    """Copy ``src`` to ``dst`` only if the bytes differ; return whether it was written."""
    data = src.read_bytes()
    if dst.exists() and dst.read_bytes() == data:
        return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, dst)
    return True


def _write_text(dst: Path, text: str) -> None:
    if dst.exists() and dst.read_text() == text:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(f".{dst.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, dst)


def stage(executed_dir: Path, site: Path | None = None) -> Path:
    """Assemble the book's sources in ``site`` (default ``_build/site``).

    Parameters
    ----------
    executed_dir : pathlib.Path
        Where the runner wrote the executed notebooks of the scale being built.
    site : pathlib.Path, optional
        Staging folder.

    Returns
    -------
    pathlib.Path
        The staging folder.
    """
    root = repo_root()
    site = site or build_dir() / "site"
    wanted: set[Path] = set()
    for name in ("_config.yml", "_toc.yml"):
        _sync(root / name, site / name)
        wanted.add(site / name)
    for f in (root / "book").rglob("*"):
        if f.is_file():
            _sync(f, site / "book" / f.relative_to(root / "book"))
            wanted.add(site / "book" / f.relative_to(root / "book"))
    notebooks = toc_notebooks()
    for nb in notebooks:
        src = executed_dir / nb
        if not src.exists():
            raise FileNotFoundError(f"executed notebook {src} is missing; run `cflib run` first")
        _sync(src, site / "notebooks" / nb)
        wanted.add(site / "notebooks" / nb)
    report = site / "book" / "reproduction-report.md"
    _write_text(report, report_markdown(gather(executed_dir, notebooks)))
    wanted.add(report)
    for f in list(site.rglob("*")):
        if f.is_file() and f not in wanted and "_build" not in f.relative_to(site).parts:
            f.unlink()  # a page removed from the sources must not linger in the book
    return site


def build(
    scale: str = "book",
    *,
    jobs: int = 1,
    force: bool = False,
    executed_dir: Path | None = None,
    path_output: Path | None = None,
) -> Path:
    """Execute the table of contents at ``scale`` and build the HTML book into ``_build/html``.

    Parameters
    ----------
    scale : {"smoke", "book", "full"}
        The scale the notebooks run at.
    jobs : int
        Notebooks executed at once.
    force : bool
        Re-execute every notebook.
    executed_dir : pathlib.Path, optional
        Where executed notebooks go (default ``_build/executed/<scale>``).
    path_output : pathlib.Path, optional
        Folder under which ``_build/site`` and ``_build/html`` are written (default: the repository).

    Returns
    -------
    pathlib.Path
        The HTML folder, ``<path_output>/_build/html``.

    Raises
    ------
    cflib.runner.NotebookError
        A notebook failed (nothing is built).
    RuntimeError
        Jupyter Book reported an error or a warning.
    """
    executed_dir = executed_dir or build_dir() / "executed" / scale
    run(None, scale, output_dir=executed_dir, force=force, jobs=jobs)
    root = repo_root()
    path_output = Path(path_output) if path_output is not None else root
    site = stage(executed_dir, path_output / "_build" / "site")
    jb = Path(sys.executable).parent / "jupyter-book"
    if not jb.exists():
        raise FileNotFoundError(f"{jb} not found: install Jupyter Book 1 (`make setup`, or pip install 'jupyter-book<2')")
    cmd = [str(jb), "build", str(site), "--path-output", str(path_output), "-W", "-n", "--keep-going", "-q"]
    env = {**os.environ, "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    res = subprocess.run(cmd, cwd=root, env=env)
    if res.returncode != 0:
        raise RuntimeError(f"jupyter-book build failed (exit {res.returncode}); see the warnings above")
    return path_output / "_build" / "html"
