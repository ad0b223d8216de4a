"""What an audit config names, loaded: the user's model or generator (``module:attribute`` or a pickle),
images and their attributes, an image classifier (``module:function`` or TorchScript).
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..validation import ValidationError

__all__ = ["load_classifier", "load_images", "load_object"]


def load_object(spec: str, base: Path, what: str) -> Any:
    """``module:attribute`` (imported; the config's folder is searched first) or a pickled object's path.

    Parameters
    ----------
    spec : str
        ``module:attribute``, or the path of a ``.pkl``, ``.pickle`` or ``.joblib`` file (relative to ``base``).
    base : pathlib.Path
        The config file's folder.
    what : str
        The config key, named in every error.

    Returns
    -------
    object
        The attribute, or the unpickled object.

    Raises
    ------
    FileNotFoundError, ValueError
        A missing file, a module that cannot be imported, an attribute it lacks.
    """
    import importlib
    import sys

    path = (base / spec).resolve()
    if spec.endswith((".pkl", ".pickle", ".joblib")):
        if not path.is_file():
            raise FileNotFoundError(f"{what}: pickled model {path} does not exist")
        if spec.endswith(".joblib"):
            import joblib

            return joblib.load(path)
        with open(path, "rb") as fh:
            return pickle.load(fh)  # the user's own file, named in their own config
    if ":" not in spec:
        raise ValueError(f"{what}: give an importable 'module:function' or a .pkl/.joblib file, got {spec!r}")
    module, _, attr = spec.partition(":")
    sys.path.insert(0, str(base))
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"{what}: cannot import module {module!r} ({exc})") from None
    finally:
        sys.path.remove(str(base))
    if not hasattr(mod, attr):
        raise ValueError(f"{what}: module {module!r} has no attribute {attr!r}")
    return getattr(mod, attr)


def load_images(
    path: str | os.PathLike, attributes_csv: str | os.PathLike | None = None
) -> tuple[np.ndarray, pd.DataFrame]:
    """Images and their attributes from an ``.npz`` file or a folder of PNGs with a CSV.

    Parameters
    ----------
    path : path-like
        An ``.npz`` holding ``images`` (``(n, C, H, W)`` in [0, 1], or ``uint8`` in 0-255) and one
        array per attribute column; or a folder of PNG files.
    attributes_csv : path-like, optional
        For a folder: a CSV with a ``file`` column naming each PNG and one column per attribute
        (default ``attributes.csv`` in the folder).

    Returns
    -------
    (numpy.ndarray, pandas.DataFrame)
        ``(n, C, H, W)`` float32 images in [0, 1] and the attributes, one row per image.

    Raises
    ------
    FileNotFoundError, ValueError
        A missing file, an ``.npz`` without ``images``, a CSV without ``file``, PNGs of different sizes.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"images: {path} does not exist")
    if path.is_file():
        if path.suffix != ".npz":
            raise ValidationError(f"images: give an .npz file or a folder of PNGs with a CSV, got {path.name}")
        with np.load(path, allow_pickle=False) as blob:
            if "images" not in blob.files:
                raise ValidationError(f"images: {path.name} has no array named 'images' (it has {blob.files[:10]})")
            x = blob["images"]
            cols = {k: blob[k] for k in blob.files if k != "images"}
        if x.dtype == np.uint8:
            x = x.astype(np.float32) / 255.0
        bad = [k for k, v in cols.items() if v.ndim != 1 or len(v) != len(x)]
        if bad:
            raise ValidationError(f"images: arrays {bad} in {path.name} must hold one value per image ({len(x)})")
        return x, pd.DataFrame(cols)
    from PIL import Image

    csv = Path(attributes_csv) if attributes_csv is not None else path / "attributes.csv"
    if not csv.is_file():
        raise FileNotFoundError(
            f"images: the attributes CSV {csv} does not exist (a folder of PNGs needs one, with a 'file' column)"
        )
    frame = pd.read_csv(csv)
    if "file" not in frame.columns:
        raise ValidationError(
            f"images: {csv.name} needs a 'file' column naming each PNG, got columns {list(frame.columns)[:10]}"
        )
    arrays = []
    for name in frame["file"]:
        p = path / str(name)
        if not p.is_file():
            raise FileNotFoundError(f"images: {p} (listed in {csv.name}) does not exist")
        arr = np.asarray(Image.open(p))
        arr = arr[None] if arr.ndim == 2 else np.moveaxis(arr[..., :3], -1, 0)
        arrays.append(arr.astype(np.float32) / (65535.0 if arr.dtype == np.uint16 else 255.0))
    shapes = {a.shape for a in arrays}
    if len(shapes) != 1:
        raise ValidationError(f"images: the PNGs have different shapes {sorted(shapes)[:3]}; resize them to one shape")
    return np.stack(arrays), frame.drop(columns="file")


def load_classifier(spec: str, base: Path) -> Any:
    """An image classifier from a config: ``module:function`` or a TorchScript file.

    Parameters
    ----------
    spec : str
        ``module:function``, or the path of a ``.pt``, ``.pth`` or ``.torchscript`` file (relative to ``base``).
    base : pathlib.Path
        The config file's folder.

    Returns
    -------
    callable or torch.jit.ScriptModule
    """
    if spec.endswith((".pt", ".pth", ".torchscript")):
        import torch

        p = (base / spec).resolve()
        if not p.is_file():
            raise FileNotFoundError(f"classifier: TorchScript file {p} does not exist")
        try:
            return torch.jit.load(str(p), map_location="cpu")
        except RuntimeError as exc:
            raise ValidationError(
                f"classifier: {p.name} is not a TorchScript file ({str(exc).splitlines()[0]}); "
                "save the model with torch.jit.script(model).save(path)"
            ) from None
    return load_object(spec, base, "classifier")
