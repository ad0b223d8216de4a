"""The attribute reader of an image audit: what scores the generator's effectiveness (given, or a small CNN
trained here on half of the images).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from ...validation import ValidationError
from .inputs import per_image

__all__ = ["read_attribute", "train_reader"]

_READER_EPOCHS = 4
_READER_STEPS = 400


def read_attribute(reader: Callable[[np.ndarray], Any], x: np.ndarray, x0: Any, x1: Any) -> np.ndarray:
    """1 where the reader sees level x1, 0 where x0 (labels in the attribute's own coding, or P(x1) in [0, 1]).

    Parameters
    ----------
    reader : callable
        ``images -> levels or P(x1)``.
    x : numpy.ndarray
        The images.
    x0, x1 : scalar
        The two levels.

    Returns
    -------
    numpy.ndarray
        0/1 per image.

    Raises
    ------
    cflib.validation.ValidationError
        The reader returns something else.
    """
    v = np.asarray(per_image(reader, x, "attribute_reader"))
    vals = set(pd.unique(v))
    if vals <= {x0, x1}:
        return (v == x1).astype(int)
    if np.issubdtype(v.dtype, np.number) and np.isfinite(v).all() and v.min() >= 0 and v.max() <= 1:
        return (v >= 0.5).astype(int)
    raise ValidationError(
        f"attribute_reader must return the attribute's levels ({x0!r} or {x1!r}) or P({x1!r}) in [0, 1], "
        f"got values such as {sorted(map(str, vals))[:4]}"
    )


def train_reader(
    x: np.ndarray, a01: np.ndarray, seed: int, device: str, progress: bool
) -> tuple[Callable, np.ndarray, str]:
    """A small CNN trained on half of the images (stratified), cached; returns it and the held-out mask.

    Parameters
    ----------
    x : numpy.ndarray
        Grey square images ``(n, 1, S, S)``.
    a01 : numpy.ndarray
        The attribute coded 0/1.
    seed : int
        Seed of the split and the training.
    device : str
        Device of the training.
    progress : bool
        Show a progress bar.

    Returns
    -------
    (callable, numpy.ndarray, str)
        The reader ``images -> 0/1``, the mask of the held-out images and its description.

    Raises
    ------
    cflib.validation.ValidationError
        Images that are not grey and square.
    """
    from ...models.cnn_zoo import SmallCNN
    from ...runtime import fit_cached

    if x.shape[1] != 1 or x.shape[2] != x.shape[3] or x.shape[2] < 4:
        raise ValidationError(
            f"attribute_reader: the audit trains its own reader on grey square images (n, 1, S, S) only, got {x.shape}; "
            "pass attribute_reader= (a function images -> attribute)"
        )
    rng = np.random.default_rng(seed)
    held = np.zeros(len(x), dtype=bool)
    for lv in (0, 1):
        idx = np.flatnonzero(a01 == lv)
        held[rng.permutation(idx)[: len(idx) // 2]] = True
    train = ~held
    # at least _READER_STEPS optimiser steps whatever the number of images (a few hundred images give 4 batches an epoch)
    epochs = max(_READER_EPOCHS, math.ceil(_READER_STEPS / math.ceil(int(train.sum()) / 64)))
    key = {"images": x[train, 0], "labels": a01[train], "arch": "cnn-s", "epochs": epochs, "seed": seed}
    model = fit_cached(
        lambda: SmallCNN("cnn-s", x.shape[2], 1, seed=seed).fit(
            x[train, 0], a01[train], epochs=epochs, device=device, seed=seed, progress=progress
        ),
        load=lambda p: SmallCNN.load(p, device=device),
        key=key,
        code=[SmallCNN],
        name="audit-reader",
    )
    return (
        (lambda imgs: model.predict(imgs[:, 0])),
        held,
        # fit_cached sets cache_path (a Path) on the model; torch's stubs type Module.__getattr__ as Tensor | Module
        f"SmallCNN cnn-s trained on {int(train.sum())} images, cached at {model.cache_path.name}",  # type: ignore[union-attr]
    )
