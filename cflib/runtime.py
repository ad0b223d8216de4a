"""Runtime helpers: device selection, seeding and the environment report every notebook ends with."""

from __future__ import annotations

import os
import platform
import random
from importlib import metadata

import numpy as np

__all__ = ["get_device", "seed_everything", "current_scale", "environment_report", "as_generator", "progress"]

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


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, NumPy and torch (CPU and CUDA) and return a fresh NumPy generator.

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
    try:
        import torch

        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
    except ImportError:  # pragma: no cover - torch is a hard dependency, but keep numpy-only use working
        pass
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


def environment_report(packages: tuple[str, ...] = ("cflib", "numpy", "scipy", "pandas", "scikit-learn", "torch")) -> str:
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
        name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else f"CPU, {torch.get_num_threads()} threads"
        lines.append(f"device       {dev} ({name})")
    except ImportError:  # pragma: no cover
        lines.append("device       cpu (torch not installed)")
    lines.append(f"scale        {current_scale()}")
    return "\n".join(lines)


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
