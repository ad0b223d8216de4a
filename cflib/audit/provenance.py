"""Provenance of an audit report: the cflib version, the environment, hashes of the data and the model.

Shared by the tabular audit (:func:`cflib.audit.audit`) and the image audit
(:func:`cflib.audit_images.audit_images`); :func:`plain` turns numpy scalars into the JSON the report writes.
"""

from __future__ import annotations

import hashlib
import math
import pickle
import platform
from importlib import metadata
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["cflib_version", "data_hash", "environment", "model_hash", "model_type", "plain", "plain_tree"]


def cflib_version() -> str:
    """The installed cflib's version, as the report records it.

    Returns
    -------
    str
    """
    from .. import __version__

    return __version__


def environment() -> dict[str, str]:
    """The Python version, the machine and the versions of the numerical packages a report depends on.

    Returns
    -------
    dict of str to str
        ``python``, ``machine`` and each of numpy, scipy, pandas, scikit-learn and torch that is installed.
    """
    out = {"python": platform.python_version(), "machine": platform.machine()}
    for p in ("numpy", "scipy", "pandas", "scikit-learn", "torch"):
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            continue
    return out


def model_hash(predict: Any) -> str:
    """A hash of a model (or of any object a report names): of its pickle, else of its source, else of its repr.

    Parameters
    ----------
    predict : object
        The model, function or generator.

    Returns
    -------
    str
        ``"sha256:..."`` of the pickle or of the source code (a lambda or a closure cannot be pickled), or
        ``"repr:..."`` (the repr without memory addresses, stated as such) when neither is available.
    """
    try:
        return "sha256:" + hashlib.sha256(pickle.dumps(predict, protocol=4)).hexdigest()
    except Exception:  # a lambda or a closure cannot be pickled: hash its source, else its repr (stated as such)
        import inspect
        import re

        try:
            return "sha256:" + hashlib.sha256(inspect.getsource(predict).encode()).hexdigest()
        except (OSError, TypeError):
            return (
                "repr:" + re.sub(r" at 0x[0-9a-fA-F]+", "", repr(predict))[:200]
            )  # no memory address: same run, same text


def data_hash(data: pd.DataFrame) -> str:
    """The sha256 of a frame's CSV text (without the index).

    Parameters
    ----------
    data : pandas.DataFrame

    Returns
    -------
    str
        ``"sha256:..."``.
    """
    return "sha256:" + hashlib.sha256(data.to_csv(index=False).encode()).hexdigest()


def model_type(predict: Any) -> str | None:
    """The model's kind in words: the steps of a scikit-learn pipeline, else its name or its class's name.

    Parameters
    ----------
    predict : object or None

    Returns
    -------
    str or None
        ``None`` when there is no model (scores were given).
    """
    if predict is None:
        return None
    steps = getattr(predict, "steps", None)
    if steps:
        return "Pipeline(" + ", ".join(type(s).__name__ for _, s in steps) + ")"
    return getattr(predict, "__name__", None) or type(predict).__name__


def plain(v: Any) -> Any:
    """A value as plain JSON data: numpy numbers as Python numbers, NaN and infinities as ``None``.

    Parameters
    ----------
    v : object

    Returns
    -------
    object
        ``float``, ``int``, ``None`` or ``v`` itself.
    """
    if isinstance(v, (np.floating, float)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def plain_tree(v: Any) -> Any:
    """Nested dicts, lists and tuples with every leaf made plain by :func:`plain` (keys as text).

    Parameters
    ----------
    v : object

    Returns
    -------
    object
    """
    if isinstance(v, dict):
        return {str(k): plain_tree(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain_tree(x) for x in v]
    return plain(v)
