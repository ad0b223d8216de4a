"""Baseline counterfactual functions of the paper (Monteiro et al., ICLR 2023, Sec. 4.1, Table 1) and the ground truth.

* :class:`Identity` — ``f(x, pa, pa*) = x``: perfect composition and reversibility, chance effectiveness
  (the lower bound on effectiveness).
* :class:`NoEncoderVAE` — a trained conditional VAE whose encoder is ignored at inference:
  ``z = eps ~ N(0, I)`` fixed per image and ``x* = decode(z, pa*)``. It cannot abduct, so its
  composition, every power of it and its reversibility are all the same distance (the lower bound on
  composition; paper: 19.04 in all three columns).
* :class:`GroundTruth` — the true counterfactual function of a synthetic SCM
  (:func:`cflib.data.colour_digits.true_counterfactual`, :func:`cflib.data.shapes.true_counterfactual`):
  the paper never had one; it scores zero composition and reversibility and oracle-level effectiveness.

All follow the :class:`cflib.metrics.axioms.CounterfactualFunction` protocol: numpy images and
parent dicts in, numpy images out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from cflib.metrics.axioms import ParentEncoder, Parents, _check_parent_dict
from cflib.runtime import as_generator

__all__ = ["Identity", "NoEncoderVAE", "GroundTruth"]


class Identity:
    """The identity counterfactual function ``f(x, pa, pa*) = x``.

    Parameters
    ----------
    parent_names : sequence of str
        Parents the function accepts (unknown names in ``pa`` are an error, as for any model).
    """

    def __init__(self, parent_names: Sequence[str]) -> None:
        self.parent_names = tuple(parent_names)

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        _check_parent_dict(pa, self.parent_names, len(x), "pa")
        _check_parent_dict(pa_star, self.parent_names, len(x), "pa_star")
        return x.copy()


class NoEncoderVAE:
    """"VAE w/o encoder": decode a fixed prior draw per image with the counterfactual parents.

    Parameters
    ----------
    vae : cflib.models.vae.ConditionalVAE
        A trained model.
    encoder : ParentEncoder
        Parent encoding the VAE was trained with.
    n : int
        Number of images (one fixed noise vector each).
    seed : int, Generator or None
        Randomness of the fixed draws.
    """

    def __init__(self, vae: Any, encoder: ParentEncoder, n: int, seed: int | np.random.Generator | None = 0) -> None:
        self.vae = vae
        self.encoder = encoder
        self.parent_names = encoder.names
        self.eps = vae.sample_noise(int(n), as_generator(seed))

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Parents) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        if len(x) != len(self.eps):
            raise ValueError(f"this function fixes noise for {len(self.eps)} images but got {len(x)}")
        self.encoder.encode(pa, len(x), "pa")
        b = self.encoder.encode(pa_star, len(x), "pa_star")
        return np.asarray(self.vae.decode(self.eps.numpy(), b))


class GroundTruth:
    """Wrap a synthetic data set's true counterfactual function ``fn(x, pa, pa_star)``.

    Parameters
    ----------
    fn : callable
        True counterfactual function of the SCM.
    parent_names : sequence of str
        Its parents.
    **kwargs
        Passed to ``fn`` on every call (e.g. ``sizes`` of the shapes scene).
    """

    def __init__(self, fn: Callable[..., np.ndarray], parent_names: Sequence[str], **kwargs: Any) -> None:
        self.fn = fn
        self.parent_names = tuple(parent_names)
        self.kwargs = kwargs

    def __call__(self, x: np.ndarray, pa: Parents, pa_star: Mapping[str, np.ndarray]) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        a = _check_parent_dict(pa, self.parent_names, len(x), "pa")
        b = _check_parent_dict(pa_star, self.parent_names, len(x), "pa_star")
        return np.asarray(self.fn(x, a, b, **self.kwargs), dtype=np.float32)
