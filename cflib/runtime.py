"""Runtime helpers: device selection, seeding, progress bars, the environment report every notebook ends
with, and the cache of trained models (:func:`fit_cached`) keyed on what changes their weights."""

from __future__ import annotations

import ast
import dataclasses
import functools
import hashlib
import importlib
import importlib.abc
import importlib.util
import inspect
import os
import platform
import random
import sys
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol, TypeVar

import numpy as np

__all__ = [
    "get_device",
    "seed_everything",
    "current_scale",
    "environment_report",
    "run_summary",
    "as_generator",
    "progress",
    "fingerprint",
    "code_fingerprint",
    "fit_cached",
    "cpu_kernels",
]

try:
    import fcntl
except ImportError:  # Windows: no lock, two processes may both train a missing model
    fcntl = None  # type: ignore[assignment]  # the module's name stands for "no locking here"


class SavesItself(Protocol):
    """What :func:`fit_cached` needs of a model: ``save(path)`` (it sets ``cache_path`` on the model it returns)."""

    def save(self, path: Path) -> Any: ...


class LoadsItself(Protocol):
    """A model class whose ``load(path, device=...)`` reads back what its models' ``save(path)`` wrote.

    What a caller of :func:`fit_cached` passes as the class itself, to build ``load=lambda p: cls.load(p, device=d)``.
    """

    def load(self, path: str | os.PathLike[str], device: str = ...) -> Any: ...


T = TypeVar("T", bound=SavesItself)

_DEVICE_CHOICES = ("auto", "cpu", "cuda")


def get_device(device: str = "auto"):
    """Return the torch device to compute on.

    Parameters
    ----------
    device : {"auto", "cpu", "cuda"} or str
        ``"auto"`` picks CUDA when a GPU is visible and the CPU otherwise. Any string torch accepts
        (``"cuda:1"``) is passed through after checking that CUDA is available for it.

    Returns
    -------
    torch.device
        The selected device.

    Raises
    ------
    ValueError
        If ``device`` is not a string torch understands, or CUDA is requested but not available.
    """
    import torch

    if not isinstance(device, str):
        raise TypeError(f"device must be a string such as 'auto', 'cpu' or 'cuda', got {type(device).__name__}")
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but torch sees no CUDA GPU; use device='auto' or 'cpu', "
            "or install a CUDA build of torch (see the README, 'Paper scale on a GPU')."
        )
    try:
        return torch.device(device)
    except RuntimeError as exc:  # torch raises RuntimeError for unknown device strings
        raise ValueError(f"device={device!r} is not a device torch knows; expected one of {_DEVICE_CHOICES}") from exc


class _SeedTorchOnImport(importlib.abc.MetaPathFinder):
    """Seeds torch when it is first imported, for a :func:`seed_everything` that ran before anything needed torch.

    Importing torch takes seconds; a notebook that works with numpy and scikit-learn alone should not pay them
    to seed a generator it never draws from. Until torch is imported nothing can draw from its generator, so
    seeding it right after its import leaves it in the state seeding it earlier would have.
    """

    def __init__(self) -> None:
        self.seed: int | None = None

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "torch" or self.seed is None:
            return None
        spec = next(
            (s for f in sys.meta_path if f is not self and (s := f.find_spec(fullname, path, target)) is not None),
            None,
        )
        if spec is None or spec.loader is None:
            return spec
        seed, real = self.seed, spec.loader
        self.seed = None

        class _Loader(importlib.abc.Loader):
            def create_module(self, spec: Any) -> Any:
                return real.create_module(spec)

            def exec_module(self, module: Any) -> None:
                module.__loader__ = module.__spec__.loader = real  # torch sees its own loader while it imports
                real.exec_module(module)
                _seed_torch(module, seed)

        spec.loader = _Loader()
        return spec


_TORCH_SEED = _SeedTorchOnImport()


def _seed_torch(torch: Any, seed: int) -> None:
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, NumPy and torch (CPU and CUDA) and return a fresh NumPy generator.

    Torch is seeded now when it is already imported, else as soon as something imports it (nothing can draw from
    its generator before), so a notebook that never uses torch does not pay for importing it.

    Parameters
    ----------
    seed : int
        Non-negative integer seed.

    Returns
    -------
    numpy.random.Generator
        ``np.random.default_rng(seed)``, for code that takes an explicit generator.
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    if "torch" in sys.modules:
        _TORCH_SEED.seed = None
        _seed_torch(sys.modules["torch"], seed)
    else:
        _TORCH_SEED.seed = seed
        if _TORCH_SEED not in sys.meta_path:
            sys.meta_path.insert(0, _TORCH_SEED)
    return np.random.default_rng(seed)


def as_generator(seed: int | np.random.Generator | None) -> np.random.Generator:
    """Turn a seed or a generator into a ``numpy.random.Generator``.

    Parameters
    ----------
    seed : int, numpy.random.Generator or None
        A generator is returned unchanged; an integer seeds a new one; ``None`` draws fresh entropy.

    Returns
    -------
    numpy.random.Generator
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0):
        return np.random.default_rng(seed)
    raise ValueError(f"seed must be a non-negative integer, a numpy Generator or None, got {seed!r}")


def current_scale() -> str:
    """Name of the scale this notebook runs at.

    Returns
    -------
    str
        ``smoke``, ``book`` or ``full`` when executed by :mod:`cflib.runner`, else ``interactive``
        (the notebook's own defaults, which are the book scale).
    """
    return os.environ.get("CFLIB_SCALE", "interactive")


@functools.cache
def cpu_kernels() -> str:
    """The machine's architecture and the vector instruction set torch's CPU kernels use, e.g. ``x86_64 AVX512``.

    Trained models depend on it as on the thread count: torch picks its convolution, matrix and reduction kernels
    by the widest instruction set the CPU has (``ATEN_CPU_CAPABILITY`` and ``ONEDNN_MAX_CPU_ISA`` lower it), and
    kernels of another width sum in another order. The rounding differences grow over thousands of training steps
    into other weights, so the same seed trains other models on an AVX2 and an AVX-512 machine, and a verdict near
    its bar can read differently. The caches of executed notebooks and trained models are keyed on this string, so
    a cache carried to another machine is not mixed with results computed there.

    Returns
    -------
    str
        ``platform.machine()`` and ``torch.backends.cpu.get_cpu_capability()``; the architecture alone when torch
        is not installed.
    """
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a dependency of the image chapters
        return platform.machine()
    return f"{platform.machine()} {torch.backends.cpu.get_cpu_capability()}"


def _cpu_name(torch: Any) -> str:
    """``CPU, <threads> threads, <instruction set> kernels``: what a CPU result depends on."""
    return f"CPU, {torch.get_num_threads()} threads, {torch.backends.cpu.get_cpu_capability()} kernels"


def environment_report(
    packages: tuple[str, ...] = ("cflib", "numpy", "scipy", "pandas", "scikit-learn", "torch"),
) -> str:
    """Versions, device and scale, as printed in the last cell of every notebook.

    Parameters
    ----------
    packages : tuple of str
        Distribution names whose versions to report.

    Returns
    -------
    str
        A multi-line report (also suitable for ``print``).
    """
    lines = [f"python       {platform.python_version()} ({platform.machine()})"]
    for name in packages:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "not installed"
        lines.append(f"{name:<12} {version}")
    try:
        import torch

        dev = get_device("auto")
        name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else _cpu_name(torch)
        lines.append(f"device       {dev} ({name})")
    except ImportError:  # pragma: no cover
        lines.append("device       cpu (torch not installed)")
    lines.append(f"scale        {current_scale()}")
    return "\n".join(lines)


def run_summary() -> str:
    """One line on where this notebook ran (scale and device), printed in the last cell of every notebook.

    The book's page ends with the full execution receipt (versions, wall time, commit); run
    interactively, :func:`environment_report` gives the versions.

    Returns
    -------
    str
        For example ``Ran at smoke scale on cpu (CPU, 1 threads, AVX2 kernels).``
    """
    torch = sys.modules.get("torch")
    if torch is None:  # nothing in this run needed torch: numpy and scikit-learn on the CPU
        device = "cpu (torch not used)"
    else:
        dev = get_device("auto")
        name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else _cpu_name(torch)
        device = f"{dev} ({name})"
    scale = current_scale()
    where = "interactively (the book-scale defaults)" if scale == "interactive" else f"at {scale} scale"
    return f"Ran {where} on {device}."


def progress(iterable=None, *, total: int | None = None, desc: str | None = None, disable: bool | None = None):
    """A text progress bar for long loops (training epochs, replications).

    Plain ``tqdm`` rather than ``tqdm.auto``: the widget version warns in kernels without
    ipywidgets, and that warning would show on the book's pages. The bar is hidden when the notebook
    runs under :mod:`cflib.runner` (nobody watches it) unless ``disable=False``.

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over.
    total : int, optional
        Number of steps when ``iterable`` has no length.
    desc : str, optional
        Label.
    disable : bool, optional
        Force the bar off or on.

    Returns
    -------
    tqdm.tqdm
    """
    from tqdm import tqdm

    if disable is None:
        disable = current_scale() != "interactive"
    return tqdm(iterable, total=total, desc=desc, disable=disable, leave=False)


def _feed(h: Any, obj: Any) -> None:
    # Canonical, type-tagged serialisation: equal keys hash equal, different types never collide.
    if obj is None or isinstance(obj, (bool, int, float, str)):
        h.update(f"{type(obj).__name__}:{obj!r};".encode())
    elif isinstance(obj, bytes):
        h.update(b"bytes:%d;" % len(obj) + obj)
    elif isinstance(obj, os.PathLike):
        _feed(h, os.fspath(obj))
    elif isinstance(obj, np.generic):
        _feed(h, obj.item())
    elif hasattr(obj, "detach") and hasattr(obj, "cpu"):  # a torch tensor, without importing torch here
        _feed(h, obj.detach().cpu().numpy())
    elif isinstance(obj, np.ndarray):
        if obj.dtype == object:
            raise TypeError("fingerprint: object arrays cannot be hashed; convert them to a numeric or string dtype")
        h.update(f"ndarray:{obj.dtype.str}:{obj.shape};".encode())
        h.update(np.ascontiguousarray(obj).tobytes())
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        _feed(
            h,
            {
                "__dataclass__": type(obj).__qualname__,
                **{f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)},
            },
        )
    elif isinstance(obj, dict):
        h.update(f"dict:{len(obj)};".encode())
        for k in sorted(obj, key=repr):
            _feed(h, k)
            _feed(h, obj[k])
    elif isinstance(obj, (list, tuple)):
        h.update(f"{type(obj).__name__}:{len(obj)};".encode())
        for v in obj:
            _feed(h, v)
    else:
        raise TypeError(
            f"fingerprint cannot hash a {type(obj).__name__}; pass arrays, tensors, numbers, strings, "
            "dataclasses, or dicts/lists/tuples of them"
        )


def fingerprint(obj: Any) -> str:
    """SHA-256 of a nested structure of arrays, tensors, numbers, strings, dataclasses, dicts and sequences.

    Arrays hash by dtype, shape and bytes; dict keys are sorted, so the insertion order does not matter.

    Parameters
    ----------
    obj : object
        What to hash.

    Returns
    -------
    str
        The hex digest.

    Raises
    ------
    TypeError
        If ``obj`` holds something without a canonical serialisation (an arbitrary object).
    """
    h = hashlib.sha256()
    _feed(h, obj)
    return h.hexdigest()


def _strip_docstrings(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                node.body = body[1:] or [ast.Pass()]
    return tree


@functools.lru_cache(maxsize=64)
def _module_index(
    module: str, mtime: float
) -> tuple[dict[str, list[str]], dict[str, list[set[str]]], dict[str, tuple[str, str | None]], str]:
    # For one module: each top-level name -> dumps of its definitions (docstrings stripped, no line
    # numbers, so comments, formatting and docs do not count), the names those definitions use, and
    # every import in the module (name -> (module, attribute)); plus the dump of the whole module.
    mod = sys.modules[module]
    try:
        source = inspect.getsource(mod)
    except (OSError, TypeError) as exc:
        raise TypeError(
            f"code_fingerprint cannot read the source of module {module!r}; define the training code in a .py module"
        ) from exc
    tree = _strip_docstrings(ast.parse(source))
    package = mod.__package__ or module.rpartition(".")[0]
    defs: dict[str, list[str]] = {}
    uses: dict[str, list[set[str]]] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for tgt in targets for t in ast.walk(tgt) if isinstance(t, ast.Name)]
        else:
            continue
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        for name in names:
            defs.setdefault(name, []).append(ast.dump(node))
            uses.setdefault(name, []).append(used)
    imports: dict[str, tuple[str, str | None]] = {}
    for found in ast.walk(tree):
        if isinstance(found, ast.ImportFrom):
            source = (
                importlib.util.resolve_name("." * found.level + (found.module or ""), package)
                if found.level
                else (found.module or "")  # an absolute import always names its module
            )
            for alias in found.names:
                imports[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(found, ast.Import):
            for alias in found.names:
                imports[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0],
                    None,
                )
    return defs, uses, imports, ast.dump(tree)


def _index(
    module: str,
) -> tuple[dict[str, list[str]], dict[str, list[set[str]]], dict[str, tuple[str, str | None]], str]:
    if module not in sys.modules:
        importlib.import_module(module)
    try:
        path = inspect.getsourcefile(sys.modules[module])
    except TypeError as exc:  # a built-in module such as an interactive __main__
        raise TypeError(
            f"code_fingerprint cannot read the source of module {module!r}; define the training code in a .py module"
        ) from exc
    return _module_index(module, os.path.getmtime(path) if path else 0.0)


def _version(package: str) -> str:
    mod = sys.modules.get(package)
    version = getattr(mod, "__version__", None)
    if version is None:
        try:
            version = metadata.version(package)
        except metadata.PackageNotFoundError:
            version = "unknown"
    return str(version)


def code_fingerprint(*objects: Any) -> str:
    """SHA-256 of the code of functions and classes and of everything in ``cflib`` they use, without docs.

    Starting from each object's top-level definition, follows the names it uses to the module-level
    functions, classes and constants of ``cflib`` (and of the objects' own package), in its own module or
    imported from another (also inside function bodies), and hashes their syntax trees with docstrings
    removed: editing a docstring, a comment or the layout does not change the digest; editing code that
    runs does. Other packages the code imports enter through their version (the standard library not at
    all).

    Parameters
    ----------
    *objects : function or class
        Entry points of the code, e.g. the model class whose ``fit`` trains it.

    Returns
    -------
    str
        The hex digest.

    Raises
    ------
    TypeError
        If an object is not a function or class defined in an importable module.
    """
    todo: list[tuple[str, str | None]] = []
    roots = {"cflib"} | {getattr(obj, "__module__", "").partition(".")[0] for obj in objects}
    for obj in objects:
        if not (inspect.isclass(obj) or inspect.isfunction(obj)) or obj.__module__ not in sys.modules:
            raise TypeError(f"code_fingerprint takes functions and classes of importable modules, got {obj!r}")
        top = obj.__qualname__.partition(".")[0]
        if top not in _index(obj.__module__)[0]:
            raise TypeError(
                f"code_fingerprint cannot find the definition of {obj.__qualname__} in the source of {obj.__module__}; "
                "define the training code in a .py module"
            )
        todo.append((obj.__module__, top))
    seen: set[tuple[str, str | None]] = set()
    parts: dict[str, str] = {}
    while todo:
        module, name = todo.pop()
        if (module, name) in seen:
            continue
        seen.add((module, name))
        root = module.partition(".")[0]
        if root not in roots:
            if root not in sys.stdlib_module_names:
                parts[f"package {root}"] = _version(root)
            continue
        defs, uses, imports, whole = _index(module)
        if name is None:  # a whole cflib module used as a namespace (``from cflib import runtime``)
            parts[module] = whole
            continue
        if name not in defs:
            if name in imports:
                todo.append(imports[name])
            elif (
                hasattr(sys.modules[module], "__path__") and importlib.util.find_spec(f"{module}.{name}") is not None
            ):  # a sub-module
                todo.append((f"{module}.{name}", None))
            continue
        parts[f"{module}:{name}"] = "\n".join(defs[name])
        for used in set().union(*uses[name]):
            if used in defs:
                todo.append((module, used))
            elif used in imports:
                src, attr = imports[used]
                todo.append((src, attr) if attr is not None else (src, None))
    return fingerprint(parts)


def fit_cached(
    fit: Callable[[], T],
    *,
    load: Callable[[Path], T],
    key: Any,
    code: Sequence[Any] = (),
    name: str = "model",
    cache_dir: str | os.PathLike | None = None,
) -> T:
    """Train a model once and keep it: later calls with the same key, in any process, load it.

    The cache file is named by :func:`fingerprint` of ``key`` (the training data, config, seed and
    settings: whatever changes the weights) and :func:`code_fingerprint` of ``code`` (the code that
    trains, docstrings excluded). A lock file makes a second process that asks for a model being trained
    wait for it and load it instead of training it again; the model is written to a temporary file and
    renamed, so a crash never leaves a half-written model under the final name.

    Parameters
    ----------
    fit : callable
        ``fit() -> model``: builds and trains the model; the model has ``save(path)``.
    load : callable
        ``load(path) -> model``: reads a model written by ``model.save``.
    key : object
        Everything besides code that determines the weights (see :func:`fingerprint` for what it may hold).
    code : sequence of functions or classes
        Entry points of the training code (e.g. the model class).
    name : str
        Prefix of the file name.
    cache_dir : path-like, optional
        Folder of cached models (default ``models`` in :func:`cflib.paths.cache_dir`: the clone's
        ``_build/cache/models`` for the book, the user's cache folder elsewhere).

    Returns
    -------
    object
        The trained model, with attribute ``cache_path`` (where it is stored).

    Examples
    --------
    >>> from cflib.models.cnn_zoo import SmallCNN
    >>> clf = fit_cached(lambda: SmallCNN("cnn-s", 16, seed=0).fit(x, y, seed=0), load=SmallCNN.load,
    ...                  key={"x": x, "y": y, "arch": "cnn-s", "seed": 0}, code=[SmallCNN])  # doctest: +SKIP
    """
    if not callable(fit) or not callable(load):
        raise TypeError("fit and load must be callables: fit() -> model and load(path) -> model")
    if not isinstance(name, str) or not name or any(c in name for c in "/\\"):
        raise ValueError(f"name must be a non-empty file-name prefix without slashes, got {name!r}")
    from .paths import cache_dir as default_cache

    digest = fingerprint({"key": key, "code": code_fingerprint(*code), "cpu": cpu_kernels()})
    folder = Path(cache_dir) if cache_dir is not None else default_cache() / "models"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}-{digest[:16]}.pt"
    with open(path.with_suffix(".lock"), "w") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if path.exists():
            model = load(path)
        else:
            model = fit()
            tmp = path.with_name(f"{path.stem}.{os.getpid()}.partial{path.suffix}")
            try:
                model.save(tmp)
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
    model.cache_path = path  # type: ignore[attr-defined]  # set on any model class, declared by none
    return model
