"""Execute the book's notebooks with papermill at a scale, with caching.

Three scales (see ``DESIGN.md``): ``smoke`` (seconds, for the tests), ``book`` (the notebooks'
own defaults, what the rendered book shows) and ``full`` (paper scale, for a GPU). Overrides of
the ``parameters`` cell come from ``notebooks/params/<scale>.yaml``, a mapping from a notebook's
path relative to ``notebooks/`` to ``{parameter: value}``; an unknown notebook or parameter is an
error, never a silent no-op.

A notebook is re-executed only when its source cells, its resolved parameters, the scale or the
``cflib`` source changed since its last successful run. Outputs are written atomically: the
executed notebook and its ``.claims.json`` appear under their final names only after the whole
notebook succeeded, and a stamp file (``.run.json``) holding the cache key is written last.

A kernel that does not start (see :mod:`cflib.kernels`) is started again, a bounded number of times, with
a line on stderr; only a notebook's own error fails it. :func:`run` holds a lock on its output folder
(:func:`folder_lock`): a second run into the same folder stops at once with one line and touches nothing.
An interrupted run (SIGINT, SIGTERM) kills its kernels, removes their partial files and raises
:class:`Interrupted`; the notebooks that finished are cached, so running the same command again resumes.

With several jobs, the notebooks start in the order given, except that one starts only after the
notebooks of the same run that it must follow (:func:`run_after`) have finished: those whose trained
models it loads from the model cache would otherwise train them at the same time or make it wait on
their lock with a core idle.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import signal
import sys
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import yaml

from .kernels import KernelStartError, env_number
from .paths import build_dir, notebooks_dir, repo_root
from .runtime import cpu_kernels

__all__ = [
    "SCALES",
    "RECEIPT_PACKAGES",
    "kernel_threads",
    "NotebookError",
    "KernelStartError",
    "BuildLocked",
    "Interrupted",
    "folder_lock",
    "sigterm_as_interrupt",
    "RunResult",
    "toc_notebooks",
    "run_after",
    "notebook_parameters",
    "parameter_specs",
    "load_overrides",
    "resolve_parameters",
    "cache_key",
    "is_cached",
    "execute",
    "run",
]

SCALES = ("smoke", "book", "full")
#: Packages whose versions an execution receipt lists.
RECEIPT_PACKAGES = ("cflib", "numpy", "scipy", "pandas", "scikit-learn", "torch", "diffusers", "matplotlib")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class NotebookError(RuntimeError):
    """A notebook failed while executing.

    Attributes
    ----------
    notebook : str
        Path relative to ``notebooks/``.
    cell : int or None
        Index of the failing code cell in the source notebook (0-based), when known.
    traceback : str
        The kernel's traceback without terminal colour codes.
    """

    def __init__(self, notebook: str, cell: int | None, message: str, traceback: str = "") -> None:
        self.notebook = notebook
        self.cell = cell
        self.traceback = traceback
        where = f" in cell {cell}" if cell is not None else ""
        super().__init__(f"notebooks/{notebook} failed{where}: {message}")


class BuildLocked(RuntimeError):
    """Another process is running into the same output folder (see :func:`folder_lock`); nothing was done."""


class Interrupted(RuntimeError):
    """A run was stopped (SIGINT or SIGTERM): its kernels were killed and their partial files removed.

    Attributes
    ----------
    finished : list of str
        The notebooks that finished before the interruption (cached: a new run reuses them).
    """

    def __init__(self, finished: list[str], message: str) -> None:
        self.finished = finished
        super().__init__(message)


# Locks this process holds: lock file -> [file descriptor, depth], so that build() may call run() on a folder
# it already holds. flock locks belong to an open file, and a second open() of the same file would conflict.
_HELD: dict[str, list[int]] = {}
_HELD_GUARD = threading.Lock()


@contextmanager
def folder_lock(folder: str | os.PathLike, what: str, name: str = ".cflib.lock") -> Iterator[Path]:
    """Hold an exclusive lock on an output folder for as long as the ``with`` block runs.

    The lock is ``flock`` on ``<folder>/<name>``, which holds the holder's pid and command for the message
    of a second process; the operating system releases it when the holder exits, however it exits. The
    same process may take it again (re-entrant).

    Parameters
    ----------
    folder : path-like
        The folder the holder writes (created if missing).
    what : str
        What holds it, for the message (e.g. ``"cflib run"``).
    name : str
        The lock file's name inside ``folder``.

    Yields
    ------
    pathlib.Path
        The lock file.

    Raises
    ------
    BuildLocked
        Another process holds it; the message (one line) names it. Nothing else was written.
    """
    import fcntl

    path = Path(folder) / name
    key = str(path.resolve())
    with _HELD_GUARD:
        if key in _HELD:
            _HELD[key][1] += 1
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.read(fd, 500).decode(errors="replace").strip() or "another process"
                os.close(fd)
                raise BuildLocked(
                    f"another {what} is writing {Path(folder)}: {holder}; wait for it to finish or stop it, "
                    "then run this again"
                ) from None
            program = os.path.basename(sys.argv[0]) if sys.argv else "python"
            program = "cflib" if program in ("cli.py", "__main__.py") else program
            command = " ".join([program, *sys.argv[1:]])
            os.ftruncate(fd, 0)
            os.pwrite(fd, f"pid {os.getpid()} ({command}, since {time.strftime('%H:%M:%S')})".encode(), 0)
            _HELD[key] = [fd, 1]
    try:
        yield path
    finally:
        with _HELD_GUARD:
            _HELD[key][1] -= 1
            release = _HELD[key][1] == 0
            fd = _HELD.pop(key)[0] if release else -1
        if release:
            os.close(fd)  # closing the only descriptor releases the flock


@dataclass(frozen=True)
class RunResult:
    """Outcome of running one notebook.

    Attributes
    ----------
    notebook : str
        Path relative to ``notebooks/``.
    status : str
        ``"executed"`` or ``"cached"`` (skipped because nothing it depends on changed).
    seconds : float
        Wall time of the execution (of the original run, for a cached result).
    output : pathlib.Path
        The executed notebook.
    parameters : dict
        The parameters it ran with (overrides only; defaults are the notebook's).
    """

    notebook: str
    status: str
    seconds: float
    output: Path
    parameters: dict


def _check_scale(scale: str) -> None:
    if scale not in SCALES:
        raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")


def toc_notebooks() -> list[str]:
    """Notebooks listed in ``_toc.yml``, in book order, relative to ``notebooks/``.

    Returns
    -------
    list of str
    """
    toc = yaml.safe_load((repo_root() / "_toc.yml").read_text())
    found: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            f = node.get("file")
            if isinstance(f, str) and f.startswith("notebooks/"):
                found.append(f.removeprefix("notebooks/") + ("" if f.endswith(".ipynb") else ".ipynb"))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return found


def resolve_notebook(notebook: str | os.PathLike) -> tuple[str, Path]:
    """Accept 'slug/nn-x.ipynb', 'notebooks/slug/nn-x.ipynb' or an absolute path.

    Parameters
    ----------
    notebook : str or path-like
        The notebook (the ``.ipynb`` suffix may be left out).

    Returns
    -------
    (str, pathlib.Path)
        Its path relative to ``notebooks/`` (POSIX) and its resolved absolute path.

    Raises
    ------
    ValueError
        A notebook outside ``notebooks/``.
    FileNotFoundError
        A notebook that does not exist.
    """
    nbdir = notebooks_dir()
    p = Path(notebook)
    if not p.is_absolute():
        text = str(p)
        p = repo_root() / text if text.startswith("notebooks/") else nbdir / text
    if p.suffix != ".ipynb":
        p = p.with_suffix(".ipynb")
    p = p.resolve()
    try:
        rel = p.relative_to(nbdir.resolve()).as_posix()
    except ValueError as exc:
        raise ValueError(f"notebook {notebook!s} is not inside {nbdir}") from exc
    if not p.exists():
        raise FileNotFoundError(f"notebook {notebook!s} does not exist (looked for {p})")
    return rel, p


def _parameters_cell(nb: nbformat.NotebookNode, name: str) -> tuple[int, str]:
    cells = [(i, c) for i, c in enumerate(nb.cells) if "parameters" in c.get("metadata", {}).get("tags", [])]
    if len(cells) != 1:
        raise ValueError(f"notebook {name} must have exactly one cell tagged 'parameters', found {len(cells)}")
    return cells[0][0], cells[0][1].source


def notebook_parameters(notebook: str | os.PathLike) -> dict[str, Any]:
    """Names and default values of a notebook's ``parameters`` cell.

    Parameters
    ----------
    notebook : str or path-like
        Path relative to ``notebooks/`` (or with the ``notebooks/`` prefix, or absolute).

    Returns
    -------
    dict
        Parameter name -> default (the literal value, or the source text when not a literal).
    """
    return {name: default for name, (default, _, _) in parameter_specs(notebook).items()}


_RANGE_COMMENT = re.compile(r"#\s*range:\s*(.+?)\s*$")


def parameter_specs(notebook: str | os.PathLike) -> dict[str, tuple[Any, bool, Any]]:
    """Default, literal-ness and declared range of each parameter of a notebook.

    A range is declared in a comment on the parameter's line, e.g. ``n_fit = 500  # range: >=1``
    (see CONTRIBUTING.md, "Parameters", and :func:`cflib.validation.parse_range`).

    Parameters
    ----------
    notebook : str or path-like
        Path relative to ``notebooks/``.

    Returns
    -------
    dict
        Parameter name -> ``(default, is_literal, range or None)``.

    Raises
    ------
    ValueError
        A ``# range:`` comment that does not parse.
    """
    from .validation import parse_range

    rel, path = resolve_notebook(notebook)
    _, source = _parameters_cell(nbformat.read(path, as_version=4), rel)
    lines = source.splitlines()
    out: dict[str, tuple[Any, bool, Any]] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            continue
        try:
            default, literal = ast.literal_eval(value), True
        except ValueError:
            default, literal = ast.get_source_segment(source, value), False
        m = _RANGE_COMMENT.search(lines[(node.end_lineno or node.lineno) - 1])  # set by ast.parse
        try:
            allowed = parse_range(m[1]) if m else None
        except ValueError as exc:
            raise ValueError(f"notebook {rel}: parameters cell: {exc}") from None
        for t in targets:
            if isinstance(t, ast.Name):
                out[t.id] = (default, literal, allowed)
    return out


def load_overrides(scale: str) -> dict[str, dict[str, Any]]:
    """Read and validate ``notebooks/params/<scale>.yaml``.

    Parameters
    ----------
    scale : {"smoke", "book", "full"}

    Returns
    -------
    dict
        Notebook path (relative to ``notebooks/``) -> parameter overrides. Empty when the file is
        absent (the ``book`` scale usually has none: the notebooks' defaults are the book scale).

    Raises
    ------
    ValueError
        Malformed YAML, an unknown notebook or an unknown parameter name.
    """
    _check_scale(scale)
    path = notebooks_dir() / "params" / f"{scale}.yaml"
    if not path.exists():
        return {}
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping 'notebook path: {{parameter: value}}', got {type(data).__name__}")
    out: dict[str, dict[str, Any]] = {}
    for key, params in data.items():
        try:
            rel, _ = resolve_notebook(key)
        except (FileNotFoundError, ValueError) as exc:
            raise ValueError(f"{path}: {exc}") from None
        if not isinstance(params, dict):
            raise ValueError(f"{path}: {key} must map to {{parameter: value}}, got {params!r}")
        check_known_parameters(rel, params, f"{path.name}")
        check_parameter_values(rel, params, f"{path.name}")
        out[rel] = dict(params)
    return out


def check_known_parameters(rel: str, params: Mapping[str, Any], source: str) -> None:
    """Refuse parameters that the notebook's ``parameters`` cell does not define.

    Parameters
    ----------
    rel : str
        The notebook, relative to ``notebooks/``.
    params : mapping
        Parameter name -> value.
    source : str
        Where the values come from (a file, a sweep), for the message.

    Returns
    -------
    None

    Raises
    ------
    ValueError
        An unknown parameter (the known ones are listed).
    """
    known = notebook_parameters(rel)
    unknown = sorted(set(params) - set(known))
    if unknown:
        raise ValueError(
            f"{source}: notebook {rel} has no parameter {', '.join(map(repr, unknown))} "
            f"(its parameters are: {', '.join(known) or 'none'})"
        )


def check_parameter_values(rel: str, params: Mapping[str, Any], source: str) -> None:
    """Each value has the type of its default and lies in its range (:func:`cflib.validation.check_parameter`).

    Parameters
    ----------
    rel : str
        The notebook, relative to ``notebooks/``.
    params : mapping
        Parameter name -> value (every name a parameter of the notebook).
    source : str
        Where the values come from, for the message.

    Returns
    -------
    None

    Raises
    ------
    TypeError, ValueError
        A value of the wrong type or outside its declared range.
    """
    from .validation import check_parameter

    specs = parameter_specs(rel)
    for name, value in params.items():
        default, literal, allowed = specs[name]
        check_parameter(name, value, default, literal=literal, allowed=allowed, where=f"{source}: notebook {rel}")


def resolve_parameters(notebook: str, scale: str, parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Overrides for one notebook: the scale's YAML entry updated with explicit ``parameters``.

    Parameters
    ----------
    notebook : str
        Path relative to ``notebooks/``.
    scale : {"smoke", "book", "full"}
    parameters : mapping, optional
        Explicit values (a sweep point, ``cflib run -p``); they win over the YAML.

    Returns
    -------
    dict
    """
    rel, _ = resolve_notebook(notebook)
    params = dict(load_overrides(scale).get(rel, {}))
    if parameters:
        check_known_parameters(rel, parameters, "parameters")
        check_parameter_values(rel, parameters, "parameters")
        params.update(parameters)
    return params


def _cflib_files() -> dict[str, str]:
    """sha256 of every source file of the ``cflib`` package, keyed by its path inside the package."""
    pkg = Path(__file__).resolve().parent
    return {
        f.relative_to(pkg).as_posix(): hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(pkg.rglob("*.py"))
    }


# Bump when what the runner injects into a notebook changes, so that earlier results are re-run.
_RUNNER_VERSION = 4
_THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")


def kernel_threads() -> int:
    """BLAS/OpenMP threads of every notebook kernel: ``CFLIB_THREADS``, else ``OMP_NUM_THREADS``, else 1.

    The count is set in each kernel before anything imports numpy or torch and is part of the cache
    key: a few results (float sums in a different order) depend on it, so a build must not reuse a
    notebook executed with another count.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If the variable is not a whole number >= 1.
    """
    for name in ("CFLIB_THREADS", "OMP_NUM_THREADS"):
        n = env_number(name, int, 1, what="threads per notebook kernel")
        if n is not None:
            return int(n)
    return 1


def cache_key(notebook: str, scale: str, parameters: Mapping[str, Any]) -> str:
    """Hash of what an executed notebook depends on, apart from the ``cflib`` modules it imported.

    Parameters
    ----------
    notebook : str
        Path relative to ``notebooks/``.
    scale : str
        The scale name.
    parameters : mapping
        The resolved overrides.

    Returns
    -------
    str
        Hex digest over the source cells (outputs ignored), declared dependencies, parameters,
        scale, the kernel's thread count (:func:`kernel_threads`), the instruction set of torch's CPU kernels
        (:func:`cflib.runtime.cpu_kernels`) and the runner's injection version. The ``cflib`` modules a run imported
        are recorded in its stamp and checked separately
        (:func:`is_cached`), so editing one chapter's module does not re-run the other chapters.
    """
    return hashlib.sha256(
        json.dumps(
            {
                "notebook": _notebook_hash(notebook),
                "parameters": parameters,
                "scale": scale,
                "runner": _RUNNER_VERSION,
                "threads": kernel_threads(),
                "cpu": cpu_kernels(),
            },
            sort_keys=True,
            default=str,
        ).encode()
    ).hexdigest()


def is_cached(notebook: str, scale: str, parameters: Mapping[str, Any], output_dir: str | os.PathLike) -> dict | None:
    """The stamp of a still-valid earlier run of ``notebook`` in ``output_dir``, else ``None``.

    A run is valid when its notebook, dependencies, parameters and scale are unchanged and every
    ``cflib`` source file it imported (all of them, for a notebook with declared dependencies, which
    may run other notebooks) still has the same content.

    Parameters
    ----------
    notebook : str
        Path relative to ``notebooks/``.
    scale : str
        The scale name.
    parameters : mapping
        The resolved overrides.
    output_dir : path-like
        The folder the run wrote into.

    Returns
    -------
    dict or None
    """
    rel, _ = resolve_notebook(notebook)
    o = _outputs(Path(output_dir), rel)
    if not (o["stamp"].exists() and o["notebook"].exists()):
        return None
    stamp = json.loads(o["stamp"].read_text())
    if stamp.get("key") != cache_key(rel, scale, parameters):
        return None
    current = _cflib_files()
    modules = stamp.get("modules")
    if not isinstance(modules, dict) or not modules or any(current.get(f) != h for f, h in modules.items()):
        return None
    return stamp


def _file_hash(path: Path, by: str) -> str:
    if not path.is_file():
        raise ValueError(f"notebook {by} declares a dependency on {path}, which does not exist")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _notebook_hash(notebook: str, _seen: frozenset = frozenset()) -> str:
    """Hash of a notebook's source cells and of what it declares it depends on (metadata
    ``{"cflib": {"depends": [...]}}``: notebooks, hashed recursively, or other files such as a sweep
    definition, paths relative to ``notebooks/``), for a notebook that runs or reads other notebooks."""
    rel, path = resolve_notebook(notebook)
    nb = nbformat.read(path, as_version=4)
    cells = [{"type": c.cell_type, "source": c.source, "tags": c.get("metadata", {}).get("tags", [])} for c in nb.cells]
    deps = nb.metadata.get("cflib", {}).get("depends", [])
    if rel in _seen:
        raise ValueError(f"notebook {rel} depends on itself through {sorted(_seen)}")
    dep_hashes = {
        d: _notebook_hash(d, _seen | {rel}) if d.endswith(".ipynb") else _file_hash(notebooks_dir() / d, rel)
        for d in deps
    }
    return hashlib.sha256(json.dumps({"cells": cells, "depends": dep_hashes}, sort_keys=True).encode()).hexdigest()


def _outputs(output_dir: Path, rel: str) -> dict[str, Path]:
    out = output_dir / rel
    stem = out.with_suffix("")
    return {
        "notebook": out,
        "claims": Path(f"{stem}.claims.json"),
        "stamp": Path(f"{stem}.run.json"),
        "failed": Path(f"{stem}.failed.ipynb"),
        "modules": out.parent / f".{out.stem}.modules.json",
        "partial": out.parent / f".{out.stem}.partial.ipynb",
        "input": out.parent / f".{out.name}.input.ipynb",
    }


def _injected_cell(rel: str, scale: str, claims: Path, env: Mapping[str, str] | None) -> nbformat.NotebookNode:
    # Inline figures even when the caller exported another backend (MPLBACKEND=Agg would drop every
    # figure from the executed notebook); the first cell runs before anything imports matplotlib.
    threads = str(kernel_threads())
    env = {
        "CFLIB_SCALE": scale,
        "CFLIB_NOTEBOOK": rel,
        "CFLIB_CLAIMS_FILE": str(claims),
        "MPLBACKEND": "module://matplotlib_inline.backend_inline",
        **dict.fromkeys(_THREAD_VARS, threads),
        **(env or {}),
    }
    src = "# Injected by cflib.runner: tells cflib.claims where to write and which scale this is.\nimport os\n"
    src += "".join(f"os.environ[{k!r}] = {v!r}\n" for k, v in env.items())
    cell = nbformat.v4.new_code_cell(src)
    cell.metadata["tags"] = ["remove-cell", "cflib-injected"]
    return cell


def _modules_cell(path: Path) -> nbformat.NotebookNode:
    """Last cell: list the cflib modules the kernel imported (for the cache, see is_cached) and
    describe the kernel's environment (for the page's execution receipt)."""
    src = (
        "# Injected by cflib.runner: which cflib modules this run used (for the cache) and where it ran.\n"
        "import json as _json, os as _os, platform as _platform, sys as _sys\n"
        "from importlib import metadata as _md\n"
        "_mods = sorted({m.__file__ for n, m in list(_sys.modules.items())\n"
        "                if (n == 'cflib' or n.startswith('cflib.')) and getattr(m, '__file__', None)})\n"
        "def _version(name):\n"
        "    try:\n"
        "        return _md.version(name)\n"
        "    except _md.PackageNotFoundError:\n"
        "        return None\n"
        f"_pkgs = {{p: _version(p) for p in {list(RECEIPT_PACKAGES)!r}}}\n"
        "_device = f'CPU ({_os.cpu_count()} cores, {_platform.machine()})'\n"
        "_torch = _sys.modules.get('torch')\n"
        "if _torch is not None and _torch.cuda.is_available():\n"
        "    _device = 'CUDA: ' + _torch.cuda.get_device_name(0)\n"
        "elif _torch is not None:  # the instruction set of torch's CPU kernels changes trained models' numbers\n"
        "    _device = f'CPU ({_os.cpu_count()} cores, {_platform.machine()}, {_torch.backends.cpu.get_cpu_capability()} kernels)'\n"
        f"with open({str(path)!r}, 'w') as _f:\n"
        "    _json.dump({'modules': _mods, 'python': _platform.python_version(), 'packages': _pkgs,\n"
        "               'device': _device}, _f)\n"
        "# joblib's reusable worker pool (cross-fitted folds) ends with the notebook; left to the kernel's shutdown,\n"
        "# its resource tracker prints 'leaked semlock' and 'leaked folder' warnings into the build's log\n"
        "_loky = _sys.modules.get('joblib.externals.loky.reusable_executor')\n"
        "_pool = getattr(_loky, '_executor', None)\n"
        "if _pool is not None:  # joblib's MemmappingExecutor: terminate also removes its memmapping folders\n"
        "    (_pool.terminate if hasattr(_pool, 'terminate') else _pool.shutdown)()\n"
        "# at a normal shutdown ipykernel's control task is still pending, and asyncio would log 'Task was destroyed\n"
        "# but it is pending!' into the build's log as the interpreter exits; on a loaded machine a message still in\n"
        "# flight at the shutdown can also make tornado log 'Uncaught exception in ZMQStream callback' with its traceback\n"
        "import logging as _logging\n"
        "_logging.getLogger('asyncio').setLevel(_logging.CRITICAL)\n"
        "_logging.getLogger('tornado').setLevel(_logging.CRITICAL)\n"
    )
    cell = nbformat.v4.new_code_cell(src)
    cell.metadata["tags"] = ["remove-cell", "cflib-injected"]
    return cell


def _git_commit(root: Path) -> str:
    """Short commit of the checkout, with ``+changes`` when tracked files differ from it."""
    import subprocess

    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=10", "HEAD"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=20,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown (not a git checkout)"
    return sha + ("+changes" if dirty else "")


def _lock_hash(root: Path) -> str:
    lock = root / "requirements.txt"
    return hashlib.sha256(lock.read_bytes()).hexdigest()[:12] if lock.exists() else "none"


def run_after(notebook: str | os.PathLike) -> list[str]:
    """The notebooks that ``notebook`` starts after when they run in the same build.

    They are its declared notebook dependencies (metadata ``{"cflib": {"depends": [...]}}``, part of its
    cache key) and the notebooks whose trained models it loads from the model cache (metadata
    ``{"cflib": {"after": [...]}}``, a scheduling hint only: it does not re-run the notebook when they
    change, since the model cache is keyed by the models' own settings).

    Parameters
    ----------
    notebook : str or path-like
        The notebook (see :func:`resolve_notebook`).

    Returns
    -------
    list of str
        Paths relative to ``notebooks/``.

    Raises
    ------
    ValueError
        If ``after`` is not a list of existing notebooks.
    """
    rel, path = resolve_notebook(notebook)
    meta = nbformat.read(path, as_version=4).metadata.get("cflib", {})
    after = meta.get("after", [])
    if not isinstance(after, list) or not all(isinstance(a, str) and a.endswith(".ipynb") for a in after):
        raise ValueError(f"notebook {rel}: metadata cflib.after must be a list of notebook paths, got {after!r}")
    deps = [d for d in meta.get("depends", []) if d.endswith(".ipynb")]
    return [resolve_notebook(d)[0] for d in dict.fromkeys(deps + after)]


def _start_order_waits(names: list[str]) -> dict[str, set[str]]:
    """Per notebook of a run, the notebooks of the same run it must start after; a cycle is refused."""
    waits = {n: set(run_after(n)) & set(names) - {n} for n in names}
    placed: set[str] = set()
    while len(placed) < len(names):
        ready = [n for n in names if n not in placed and waits[n] <= placed]
        if not ready:
            cycle = sorted(n for n in names if n not in placed)
            raise ValueError(
                f"notebooks {cycle} wait on each other (metadata cflib.after / cflib.depends); break the cycle"
            )
        placed.update(ready)
    return waits


def _has_dependencies(rel: str) -> bool:
    _, path = resolve_notebook(rel)
    return bool(nbformat.read(path, as_version=4).metadata.get("cflib", {}).get("depends"))


def _papermill(rel: str, o: Mapping[str, Path], params: Mapping[str, Any]) -> None:
    """Execute ``o["input"]`` into ``o["partial"]``; a kernel that does not start is started again (a bounded
    number of times, a line on stderr each time): that is not the notebook's error."""
    import papermill as pm

    from .kernels import KernelManager, quiet_start_errors, start_timeout, start_tries, stopping

    quiet_start_errors()
    tries = start_tries()
    for attempt in range(1, tries + 1):
        try:
            pm.execute_notebook(
                str(o["input"]),
                str(o["partial"]),
                parameters=dict(params),
                kernel_name="python3",
                progress_bar=False,
                log_output=False,
                request_save_on_cell_execute=False,
                start_timeout=start_timeout(),
                kernel_manager_class=KernelManager,
                # What a kernel's child processes write to the file descriptors (a sweep's own kernels logging their
                # start-up, C libraries) is not the notebook's output: it goes to the runner's stderr, not the page.
                extra_arguments=["--IPKernelApp.capture_fd_output=False"],
            )
            return
        except KernelStartError as exc:
            if stopping():
                raise
            if attempt == tries:
                raise KernelStartError(
                    f"notebooks/{rel}: its kernel did not start in {tries} tries (last: {exc}); "
                    "more tries: CFLIB_KERNEL_START_TRIES, a longer wait: CFLIB_KERNEL_START_TIMEOUT (seconds)"
                ) from None
            print(
                f"cflib: notebooks/{rel}: the kernel did not start ({exc}); starting it again "
                f"(try {attempt + 1} of {tries})",
                file=sys.stderr,
                flush=True,
            )


def execute(
    notebook: str | os.PathLike,
    scale: str = "book",
    parameters: Mapping[str, Any] | None = None,
    *,
    output_dir: str | os.PathLike | None = None,
    force: bool = False,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Execute one notebook at a scale (or return its cached result).

    Parameters
    ----------
    notebook : str or path-like
        Path relative to ``notebooks/`` (the ``notebooks/`` prefix and absolute paths also work).
    scale : {"smoke", "book", "full"}
        Which overrides to apply.
    parameters : mapping, optional
        Extra overrides on top of the scale's YAML.
    output_dir : path-like, optional
        Where the executed notebook goes (default ``_build/executed/<scale>``); the notebook's
        folder under ``notebooks/`` is kept.
    force : bool
        Execute even when the cache says nothing changed.
    env : mapping, optional
        Extra environment variables set in the kernel before the first cell.

    Returns
    -------
    RunResult

    Raises
    ------
    NotebookError
        When a cell raises; the message names the cell and the traceback is attached. The partly
        executed notebook is kept as ``<name>.failed.ipynb`` and no result under the final name
        is left behind.
    """
    from nbclient.exceptions import DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    from .kernels import stopping

    _check_scale(scale)
    rel, path = resolve_notebook(notebook)
    params = resolve_parameters(rel, scale, parameters)
    output_dir = Path(output_dir) if output_dir is not None else build_dir() / "executed" / scale
    o = _outputs(output_dir, rel)
    stamp = None if force else is_cached(rel, scale, params, output_dir)
    if stamp is not None:
        return RunResult(rel, "cached", stamp.get("seconds", 0.0), o["notebook"], params)
    key = cache_key(rel, scale, params)
    before = _cflib_files()

    o["notebook"].parent.mkdir(parents=True, exist_ok=True)
    for name in ("stamp", "notebook", "claims", "failed"):
        o[name].unlink(missing_ok=True)  # nothing stale may survive a failed re-run
    partial_claims = Path(f"{o['claims']}.partial")
    partial_claims.unlink(missing_ok=True)
    nb = nbformat.read(path, as_version=4)
    nb.cells.insert(0, _injected_cell(rel, scale, partial_claims, env))
    nb.cells.append(_modules_cell(o["modules"]))
    nbformat.write(nb, o["input"])
    t0 = time.perf_counter()
    try:
        _papermill(rel, o, params)
    except PapermillExecutionError as exc:
        if o["partial"].exists():
            os.replace(o["partial"], o["failed"])
        partial_claims.unlink(missing_ok=True)
        o["modules"].unlink(missing_ok=True)
        # papermill's cell index counts the injected cells: ours first, then its parameters cell.
        p_index, _ = _parameters_cell(nb, rel)
        cell = exc.cell_index - 1
        if params and cell > p_index:
            cell -= 1
        tb = _ANSI.sub("", "\n".join(exc.traceback or []))
        raise NotebookError(rel, cell, f"{exc.ename}: {_ANSI.sub('', str(exc.evalue))}", tb) from None
    except DeadKernelError:
        if stopping():  # the run is being interrupted: not this notebook's failure
            for leftover in (o["partial"], partial_claims, o["modules"]):
                leftover.unlink(missing_ok=True)
            raise
        if o["partial"].exists():
            os.replace(o["partial"], o["failed"])
        partial_claims.unlink(missing_ok=True)
        o["modules"].unlink(missing_ok=True)
        msg = "its kernel died while it ran (killed from outside, or out of memory); run it again"
        raise NotebookError(rel, None, msg) from None
    except BaseException:
        for leftover in (o["partial"], partial_claims, o["modules"]):
            leftover.unlink(missing_ok=True)
        raise
    finally:
        o["input"].unlink(missing_ok=True)
    seconds = time.perf_counter() - t0
    if partial_claims.exists():
        os.replace(partial_claims, o["claims"])
    os.replace(o["partial"], o["notebook"])
    pkg = Path(__file__).resolve().parent
    kernel = json.loads(o["modules"].read_text()) if o["modules"].exists() else {}
    o["modules"].unlink(missing_ok=True)
    used = kernel.get("modules")
    if used is None or _has_dependencies(rel):
        # It may run other notebooks, whose imports it cannot see (or its list is missing): depend on all of cflib.
        modules = before
    else:
        modules = {}
        for f in used:
            try:
                name = Path(f).resolve().relative_to(pkg).as_posix()
            except ValueError:  # another cflib installation than this checkout's: depend on all of it
                modules = before
                break
            modules[name] = before.get(name, "")
    finished = time.time()
    receipt = {
        "scale": scale,
        "device": kernel.get("device", "unknown"),
        "threads": kernel_threads(),
        "seconds": round(seconds, 1),
        "finished_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(finished)),
        "commit": _git_commit(repo_root()),
        "python": kernel.get("python", "unknown"),
        "packages": {k: v for k, v in kernel.get("packages", {}).items() if v},
        "lock": _lock_hash(repo_root()),
    }
    stamp = {
        "key": key,
        "modules": modules,
        "seconds": round(seconds, 2),
        "scale": scale,
        "parameters": params,
        "finished": finished,
        "receipt": receipt,
    }
    tmp = o["stamp"].with_suffix(".tmp")
    tmp.write_text(json.dumps(stamp, default=str))
    os.replace(tmp, o["stamp"])
    return RunResult(rel, "executed", seconds, o["notebook"], params)


def run(
    notebooks: Iterable[str] | None = None,
    scale: str = "book",
    *,
    output_dir: str | os.PathLike | None = None,
    force: bool = False,
    jobs: int = 1,
    parameters: Mapping[str, Any] | None = None,
    log=sys.stderr,
) -> list[RunResult]:
    """Execute several notebooks (by default every notebook in ``_toc.yml``).

    Parameters
    ----------
    notebooks : iterable of str, optional
        Paths relative to ``notebooks/``; default: the table of contents.
    scale : {"smoke", "book", "full"}
    output_dir : path-like, optional
        Default ``_build/executed/<scale>``.
    force : bool
        Ignore the cache.
    jobs : int
        Notebooks executed at once (each in its own kernel).
    parameters : mapping, optional
        Overrides applied to every notebook (each must be a parameter of every notebook).
    log : file-like
        Where progress lines go (``None`` for silence).

    Returns
    -------
    list of RunResult
        In the order given.

    Raises
    ------
    NotebookError
        The first failure, after the notebooks already running have finished.
    KernelStartError
        A kernel did not start in :func:`cflib.kernels.start_tries` tries.
    BuildLocked
        Another process runs into the same output folder (nothing was done).
    Interrupted
        SIGINT or SIGTERM: the running kernels were killed and their partial files removed; the
        notebooks that finished are kept (cached).
    """
    _check_scale(scale)
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"jobs must be a positive integer, got {jobs!r}")
    names = list(notebooks) if notebooks is not None else toc_notebooks()
    names = [resolve_notebook(n)[0] for n in names]
    load_overrides(scale)  # validate the whole file up front: one clear error, nothing executed
    for n in names:
        resolve_parameters(n, scale, parameters)
    waits = _start_order_waits(names)
    folder = Path(output_dir) if output_dir is not None else build_dir() / "executed" / scale
    with folder_lock(folder, "cflib run"), sigterm_as_interrupt():
        return _run_locked(names, waits, scale, folder, force, jobs, parameters, log)


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """In the main thread, SIGTERM raises KeyboardInterrupt (as Ctrl-C does) for as long as the block runs.

    Elsewhere (a thread) it does nothing: only the main thread may set a signal handler.

    Yields
    ------
    None
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_locked(
    names: list[str],
    waits: Mapping[str, set[str]],
    scale: str,
    folder: Path,
    force: bool,
    jobs: int,
    parameters: Mapping[str, Any] | None,
    log: Any,
) -> list[RunResult]:
    """:func:`run` once it holds the folder's lock: the notebooks on ``jobs`` threads, each started when the
    notebooks it waits on (``waits``, from :func:`_start_order_waits`) have ended, stopped on an interrupt."""
    from .kernels import allow_kernels, stop_kernels

    results: dict[str, RunResult] = {}
    errors: list[Exception] = []
    stop = threading.Event()

    def one(i_name: tuple[int, str]) -> None:
        i, name = i_name
        if errors or stop.is_set():
            return
        try:
            r = execute(name, scale, parameters, output_dir=folder, force=force)
        except (NotebookError, KernelStartError) as exc:
            if stop.is_set():
                return
            errors.append(exc)
            if log:
                print(f"[{i + 1}/{len(names)}] {name}: FAILED", file=log, flush=True)
            return
        except BaseException:
            if stop.is_set():  # its kernel was killed by the interruption
                return
            raise
        results[name] = r
        if log:
            print(f"[{i + 1}/{len(names)}] {name}: {r.status} ({r.seconds:.1f} s)", file=log, flush=True)

    pending = list(enumerate(names))
    ended: set[str] = set()  # finished, failed or skipped
    turn = threading.Condition()

    def next_ready() -> tuple[int, str] | None:
        """The first pending notebook whose predecessors have ended; None when there is nothing left to start."""
        with turn:
            while pending and not (errors or stop.is_set()):
                for k, (_, name) in enumerate(pending):
                    if waits[name] <= ended:
                        return pending.pop(k)
                turn.wait()
            return None

    def worker() -> None:
        while (item := next_ready()) is not None:
            try:
                one(item)
            finally:
                with turn:
                    ended.add(item[1])
                    turn.notify_all()

    allow_kernels()
    pool = ThreadPoolExecutor(max_workers=jobs)
    futures: list[Any] = []
    try:
        futures += [pool.submit(worker) for _ in range(min(jobs, len(names)))]
        for f in futures:
            f.result()
    except KeyboardInterrupt:
        stop.set()
        with turn:
            turn.notify_all()
        killed = stop_kernels()
        for f in futures:
            f.cancel()
        pool.shutdown(wait=True)
        done = [n for n in names if n in results]
        raise Interrupted(
            done,
            f"interrupted: {len(done)} of {len(names)} notebook(s) finished and are kept, {killed} stopped "
            "(no partial output left); run the same command again to resume",
        ) from None
    finally:
        pool.shutdown(wait=True)
        allow_kernels()
    if errors:
        raise errors[0]
    return [results[n] for n in names]
