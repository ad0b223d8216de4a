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

:func:`train_paper_model` builds and trains the paper's Table 1 configurations by name.

All follow the :class:`cflib.metrics.axioms.CounterfactualFunction` protocol: numpy images and
parent dicts in, numpy images out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

import numpy as np

from cflib.runtime import as_generator
from cflib.scm.adapters import ParentEncoder, Parents
from cflib.scm.adapters import check_parent_dict as _check_parent_dict

__all__ = ["Identity", "NoEncoderVAE", "GroundTruth", "PAPER_MODELS", "MODEL_LABELS", "train_paper_model"]


class _LearningRate(TypedDict, total=False):
    """The learning rate passed on to a model's ``fit`` only when given (absent: the model's own default)."""

    lr: float


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
    """ "VAE w/o encoder": decode a fixed prior draw per image with the counterfactual parents.

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


#: The paper's model configurations (Table 1): constructor keyword arguments per name.
PAPER_MODELS: dict[str, dict[str, Any]] = {
    "bernoulli_b1": {"cls": "vae", "likelihood": "bernoulli", "beta": 1.0},
    "bernoulli_b2": {"cls": "vae", "likelihood": "bernoulli", "beta": 2.0},
    "normal_b5": {"cls": "vae", "likelihood": "normal", "beta": 5.0, "normal_variance": 0.1},
    "gan": {"cls": "gan", "composition_weight": 1.0},
}

#: Display names of :data:`PAPER_MODELS`, as in the paper's tables.
MODEL_LABELS = {
    "bernoulli_b1": "Bernoulli VAE β=1",
    "bernoulli_b2": "Bernoulli VAE β=2",
    "normal_b5": "Normal VAE β=5",
    "gan": "GAN",
}


def train_paper_model(
    name: str,
    x: np.ndarray,
    pa: np.ndarray,
    *,
    steps: int,
    batch_size: int = 64,
    lr: float | None = None,
    seed: int = 0,
    indices: np.ndarray | None = None,
    target_indices: np.ndarray | None = None,
    parent_groups: Sequence[Sequence[int]] | None = None,
    device: str = "auto",
    **model_kwargs: Any,
) -> Any:
    """Build and train one of the paper's Colour-MNIST models by name.

    Parameters
    ----------
    name : {"bernoulli_b1", "bernoulli_b2", "normal_b5", "gan"}
        Configuration (:data:`PAPER_MODELS`).
    x : numpy.ndarray, shape (n, C, H, W)
        Training images.
    pa : numpy.ndarray, shape (n, k)
        Encoded parents.
    steps, batch_size : int
        Optimisation steps and minibatch size.
    lr : float, optional
        Learning rate (default: the model's own, 1e-3 for the VAEs and 2e-4 for the GAN).
    seed : int
        Seed of the initialisation and of training.
    indices : array of int, optional
        Training rows (the source distribution; e.g. a simulated intervention).
    target_indices : array of int, optional
        GAN only: rows of the interventional target (a simulated intervention). Required for the GAN,
        which is why it needs full support.
    parent_groups : sequence, optional
        GAN only: columns of each parent in ``pa``.
    device : str
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    **model_kwargs
        Extra constructor arguments (``width``, ``hidden``, ``latent_dim``).

    Returns
    -------
    ConditionalVAE or ConditionalGAN
        The trained model.
    """
    from .gan import ConditionalGAN
    from .vae import ConditionalVAE

    if name not in PAPER_MODELS:
        raise ValueError(f"name must be one of {sorted(PAPER_MODELS)}, got {name!r}")
    cfg = {k: v for k, v in PAPER_MODELS[name].items() if k != "cls"}
    shape = tuple(np.asarray(x).shape[1:])
    if PAPER_MODELS[name]["cls"] == "gan":
        if target_indices is None:
            raise ValueError(
                "the GAN needs target_indices: a simulated intervention of the training data (it needs full support)"
            )
        gan = ConditionalGAN(shape, pa.shape[1], seed=seed, **cfg, **model_kwargs)
        extra: _LearningRate = {} if lr is None else {"lr": lr}
        return gan.fit(
            x,
            pa,
            steps=steps,
            batch_size=batch_size,
            seed=seed,
            source_indices=indices,
            target_indices=target_indices,
            parent_groups=parent_groups,
            device=device,
            **extra,
        )
    vae = ConditionalVAE(shape, pa.shape[1], seed=seed, **cfg, **model_kwargs)
    extra = {} if lr is None else {"lr": lr}
    return vae.fit(x, pa, steps=steps, batch_size=batch_size, seed=seed, indices=indices, device=device, **extra)
