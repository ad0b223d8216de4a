"""Shared plumbing of the models in :mod:`cflib.models`: validation, networks, the one training loop, saving.

Used by the conditional image models (:mod:`~cflib.models.vae`, :mod:`~cflib.models.hvae`,
:mod:`~cflib.models.gan`; Monteiro et al., ICLR 2023, App. D.2: the shared image encoder and
decoder), the image classifiers (:mod:`~cflib.models.classifier`, :mod:`~cflib.models.oracles`,
:mod:`~cflib.models.cnn_zoo`), the MINE disentangler, the latent diffusion model and the tabular
classifiers. It holds input validation (images ``(n, C, H, W)``, grey images ``(n, H, W)`` in
``[0, 1]``, parent vectors ``(n, k)``), the record of the parents' training range (so a model refuses
to extrapolate), a size-generic convolutional encoder/decoder pair, save/load helpers, and the
training loop every model runs: :func:`train` (``total`` steps of a model's step function over a
sampler, an optional learning-rate scheduler, one ``progress=`` flag), its samplers
(:func:`shuffled_batches`, :func:`random_batches`), :func:`optimizer_step`, and :func:`run_steps`
(the epoch-based form the image models use).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import torch
from torch import nn

from cflib.runtime import get_device
from cflib.runtime import progress as progress_bar
from cflib.validation import check_grey_images

#: A model class :func:`load_model` rebuilds (its return value has the class it was given).
ModuleT = TypeVar("ModuleT", bound=nn.Module)

__all__ = [
    "to_tensor",
    "like_input",
    "check_images",
    "check_grey_images",
    "check_parents",
    "ParentRange",
    "ConvEncoder",
    "ConvDecoder",
    "shuffled_batches",
    "random_batches",
    "optimizer_step",
    "train",
    "save_model",
    "load_model",
    "default_downsamplings",
    "seeded",
    "run_steps",
    "check_indices",
    "check_positive_int",
]


def to_tensor(a: Any, name: str, device: torch.device | None = None) -> torch.Tensor:
    """Convert a numpy array or tensor to a float32 tensor on ``device``.

    Parameters
    ----------
    a : numpy.ndarray or torch.Tensor
        The array.
    name : str
        Argument name used in error messages.
    device : torch.device, optional
        Target device (unchanged when ``None``).

    Returns
    -------
    torch.Tensor
    """
    if isinstance(a, torch.Tensor):
        t = a.detach().float()
    elif isinstance(a, np.ndarray):
        t = torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))
    else:
        raise TypeError(f"{name} must be a numpy array or a torch tensor, got {type(a).__name__}")
    return t if device is None else t.to(device)


def like_input(out: torch.Tensor, ref: Any) -> Any:
    """Return ``out`` in the container type of ``ref`` (numpy in, numpy out; tensor in, tensor on ref's device out)."""
    if isinstance(ref, np.ndarray):
        return out.detach().cpu().numpy()
    if isinstance(ref, torch.Tensor):
        return out.detach().to(ref.device)
    return out.detach()


def check_images(
    x: Any, shape: Sequence[int] | None, name: str = "x", device: torch.device | None = None
) -> torch.Tensor:
    """Validate an image batch ``(n, C, H, W)`` with finite values and return it as a tensor.

    Parameters
    ----------
    x : array or tensor
        Images, channels first, intensities in ``[0, 1]``.
    shape : sequence of int or None
        Expected ``(C, H, W)``; ``None`` accepts any.
    name : str
        Argument name for messages.
    device : torch.device, optional
        Device to move to.

    Returns
    -------
    torch.Tensor
    """
    t = to_tensor(x, name, device)
    if t.ndim != 4:
        raise ValueError(f"{name} must have shape (n, C, H, W) (channels first), got {tuple(t.shape)}")
    if shape is not None and tuple(t.shape[1:]) != tuple(shape):
        raise ValueError(f"{name} has image shape {tuple(t.shape[1:])}, but the model was built for {tuple(shape)}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


def check_parents(
    pa: Any, n: int | None, dim: int | None, name: str = "pa", device: torch.device | None = None
) -> torch.Tensor:
    """Validate an encoded parent matrix ``(n, k)`` and return it as a float tensor.

    Parameters
    ----------
    pa : array or tensor
        Encoded parents (one row per image; the caller one-hot encodes discrete parents).
    n : int or None
        Required number of rows (the image batch size), or ``None``.
    dim : int or None
        Required number of columns (the model's ``parent_dim``), or ``None``.
    name : str
        Argument name for messages.
    device : torch.device, optional
        Device to move to.

    Returns
    -------
    torch.Tensor
    """
    t = to_tensor(pa, name, device)
    if t.ndim == 1:
        t = t[:, None]
    if t.ndim != 2:
        raise ValueError(f"{name} must have shape (n, k): one row of encoded parents per image, got {tuple(t.shape)}")
    if n is not None and t.shape[0] != n:
        raise ValueError(f"{name} has {t.shape[0]} rows but the image batch has {n}: give one parent row per image")
    if dim is not None and t.shape[1] != dim:
        raise ValueError(f"{name} has {t.shape[1]} columns, but the model was built with parent_dim={dim}")
    if not torch.isfinite(t).all():
        raise ValueError(f"{name} contains NaN or infinite values")
    return t


class ParentRange:
    """The per-column range of the parents seen in training; a model refuses values far outside it.

    A conditional decoder has only seen parent values inside its training range; asked for values
    outside it, it extrapolates arbitrarily and the "counterfactual" is meaningless. Values within
    ``tolerance`` times the column's span of the range are accepted.

    Parameters
    ----------
    low, high : numpy.ndarray
        Column minima and maxima of the training parents.
    tolerance : float
        Accepted overshoot as a fraction of each column's span (absolute ``tolerance`` for constant columns).
    """

    def __init__(self, low: np.ndarray, high: np.ndarray, tolerance: float = 0.05) -> None:
        self.low = np.asarray(low, dtype=np.float64)
        self.high = np.asarray(high, dtype=np.float64)
        self.tolerance = float(tolerance)

    @classmethod
    def from_data(cls, pa: torch.Tensor, tolerance: float = 0.05) -> ParentRange:
        """Record the range of a training parent matrix."""
        a = pa.detach().cpu().double().numpy()
        return cls(a.min(axis=0), a.max(axis=0), tolerance)

    def check(self, pa: torch.Tensor, name: str = "pa_star") -> None:
        """Raise ``ValueError`` naming the columns of ``pa`` that lie outside the training range."""
        a = pa.detach().cpu().double().numpy()
        span = np.where(self.high > self.low, self.high - self.low, 1.0)
        lo = self.low - self.tolerance * span
        hi = self.high + self.tolerance * span
        bad = np.where((a < lo) | (a > hi))
        if bad[0].size:
            cols = sorted(set(bad[1].tolist()))
            details = ", ".join(
                f"column {c}: values in [{a[:, c].min():.3g}, {a[:, c].max():.3g}] vs training range "
                f"[{self.low[c]:.3g}, {self.high[c]:.3g}]"
                for c in cols[:4]
            )
            raise ValueError(
                f"{name} lies outside the parent range the model was trained on ({details}); the decoder cannot "
                "extrapolate. Intervene with values inside the training range, or pass check_range=False to force it."
            )

    def state(self) -> dict[str, Any]:
        """Serialisable state."""
        return {"low": self.low.tolist(), "high": self.high.tolist(), "tolerance": self.tolerance}

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> ParentRange | None:
        """Inverse of :meth:`state`."""
        if state is None:
            return None
        return cls(np.array(state["low"]), np.array(state["high"]), state["tolerance"])


@contextlib.contextmanager
def seeded(seed: int | None) -> Iterator[None]:
    """Seed torch's CPU generator inside the block only (weight initialisation), leaving the global state as it was."""
    if seed is None:
        yield
        return
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(seed))
        yield


def default_downsamplings(height: int, width: int) -> int:
    """Number of stride-2 convolutions that bring an image down to about 4x4 (1 to 4)."""
    side = min(height, width)
    return int(min(4, max(1, math.floor(math.log2(max(side, 2))) - 2)))


def _conv_sizes(h: int, w: int, n_down: int) -> list[tuple[int, int]]:
    sizes = [(h, w)]
    for _ in range(n_down):
        h, w = (h + 2 - 4) // 2 + 1, (w + 2 - 4) // 2 + 1
        if h < 1 or w < 1:
            raise ValueError(f"image of size {sizes[0]} is too small for {n_down} downsamplings")
        sizes.append((h, w))
    return sizes


class ConvEncoder(nn.Module):
    """Image encoder of App. D.2.2: ``n_down`` x [Conv(4x4, stride 2) -> LeakyReLU] -> Flatten -> Dense -> LeakyReLU.

    Parameters
    ----------
    image_shape : tuple of int
        ``(C, H, W)``.
    width : int
        Convolution channels.
    out_dim : int
        Output feature size.
    n_down : int, optional
        Stride-2 convolutions (default: down to about 4x4).
    extra_channels : int
        Extra input channels (e.g. parents broadcast over the image, for a critic).
    """

    def __init__(
        self,
        image_shape: Sequence[int],
        width: int = 32,
        out_dim: int = 128,
        n_down: int | None = None,
        extra_channels: int = 0,
    ) -> None:
        super().__init__()
        c, h, w = image_shape
        n_down = default_downsamplings(h, w) if n_down is None else int(n_down)
        self.sizes = _conv_sizes(h, w, n_down)
        layers: list[nn.Module] = []
        cin = c + extra_channels
        for _ in range(n_down):
            layers += [nn.Conv2d(cin, width, 4, 2, 1), nn.LeakyReLU(0.2)]
            cin = width
        fh, fw = self.sizes[-1]
        self.net = nn.Sequential(*layers, nn.Flatten(), nn.Linear(width * fh * fw, out_dim), nn.LeakyReLU(0.2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Features of ``x``, shape ``(n, out_dim)``."""
        return self.net(x)


class ConvDecoder(nn.Module):
    """Image decoder mirroring :class:`ConvEncoder`: Dense -> reshape -> n x [ConvTranspose(4x4, stride 2)].

    The paper's decoder (App. D.2.2) resizes bilinearly and applies 4x4 convolutions at full
    resolution; transposed convolutions do the same upsampling job at a fraction of the CPU cost,
    which is what makes book-scale training fit on two cores. The last stage outputs the image
    channels directly.

    Parameters
    ----------
    image_shape : tuple of int
        ``(C, H, W)`` of the output.
    in_dim : int
        Input size (latent + parents).
    width : int
        Convolution channels.
    n_down : int, optional
        Number of upsampling stages (mirrors :class:`ConvEncoder`).
    """

    def __init__(self, image_shape: Sequence[int], in_dim: int, width: int = 32, n_down: int | None = None) -> None:
        super().__init__()
        c, h, w = image_shape
        n_down = default_downsamplings(h, w) if n_down is None else int(n_down)
        self.sizes = _conv_sizes(h, w, n_down)[::-1]
        self.width = width
        fh, fw = self.sizes[0]
        self.fc = nn.Sequential(nn.Linear(in_dim, width * fh * fw), nn.LeakyReLU(0.2))
        blocks: list[nn.Module] = []
        for i, (src, dst) in enumerate(zip(self.sizes[:-1], self.sizes[1:], strict=True)):
            # output_padding restores odd sizes (e.g. 7 -> 14 -> 28 and 3 -> 7) exactly.
            pad = (dst[0] - 2 * src[0], dst[1] - 2 * src[1])
            last = i == len(self.sizes) - 2
            blocks.append(nn.ConvTranspose2d(width, c if last else width, 4, 2, 1, output_padding=pad))
            if not last:
                blocks.append(nn.LeakyReLU(0.2))
        self.up = nn.Sequential(*blocks)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        """Unnormalised image (logits or mean) of shape ``(n, C, H, W)``."""
        fh, fw = self.sizes[0]
        return self.up(self.fc(h).view(-1, self.width, fh, fw))


def check_indices(indices: Any, n: int, name: str = "indices") -> torch.Tensor | None:
    """Validate optional training indices (e.g. a simulated-intervention resampling) into ``n`` rows."""
    if indices is None:
        return None
    idx = torch.as_tensor(np.asarray(indices), dtype=torch.long)
    if idx.ndim != 1 or idx.numel() == 0:
        raise ValueError(f"{name} must be a non-empty 1-D array of row indices")
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"{name} must index rows 0..{n - 1}, got values in [{int(idx.min())}, {int(idx.max())}]")
    return idx


def shuffled_batches(
    n: int,
    batch_size: int,
    generator: torch.Generator,
    indices: torch.Tensor | None = None,
    weights: torch.Tensor | None = None,
) -> Iterator[torch.Tensor]:
    """Endless minibatches of row indices, epoch after epoch: the sampler of :func:`train`.

    Each epoch is a random permutation of ``indices`` (default ``arange(n)``), or, with ``weights``,
    ``len(indices)`` draws with replacement with probability proportional to them; it is cut into
    chunks of ``batch_size``. An epoch's draw is made when its first batch is asked for, so a training
    step that draws from the same ``generator`` interleaves with the sampler as a hand-written loop
    (``for epoch: perm = randperm(n); for batch in perm: step(batch)``) does.

    Parameters
    ----------
    n : int
        Number of rows.
    batch_size : int
        Rows per batch (the last batch of an epoch may be smaller).
    generator : torch.Generator
        Source of the permutations.
    indices : torch.Tensor, optional
        Rows to draw from, repeats allowed (e.g. a simulated-intervention resampling).
    weights : torch.Tensor, optional
        Non-negative sampling weights, one per entry of ``indices``.

    Yields
    ------
    torch.Tensor
        Long tensor of row indices.
    """
    pool = torch.arange(n) if indices is None else indices
    while True:
        if weights is None:
            order = pool[torch.randperm(len(pool), generator=generator)]
        else:
            order = pool[torch.multinomial(weights, len(pool), replacement=True, generator=generator)]
        for start in range(0, len(order), batch_size):
            yield order[start : start + batch_size]


def random_batches(
    n: int, batch_size: int, generator: torch.Generator, per_step: int = 1
) -> Iterator[list[torch.Tensor]]:
    """Endless steps of ``per_step`` index batches drawn uniformly with replacement: the sampler of :func:`train`.

    For steps that need several independent batches (a MINE step: critic batches, the labels of the
    product of marginals); the batches of one step are drawn in order, before the step runs.

    Parameters
    ----------
    n : int
        Number of rows.
    batch_size : int
        Rows per batch.
    generator : torch.Generator
        Source of the draws.
    per_step : int
        Batches per step.

    Yields
    ------
    list of torch.Tensor
        ``per_step`` long tensors of ``batch_size`` row indices.
    """
    while True:
        yield [torch.randint(0, n, (batch_size,), generator=generator) for _ in range(per_step)]


def optimizer_step(optimizer: torch.optim.Optimizer, loss: torch.Tensor, clip: float | None = None) -> float:
    """One gradient step on ``loss`` (gradients cleared first, optionally norm-clipped); returns the loss.

    Parameters
    ----------
    optimizer : torch.optim.Optimizer
        Optimizer of the parameters to update.
    loss : torch.Tensor
        Scalar loss.
    clip : float, optional
        Largest gradient norm over the optimizer's parameters.

    Returns
    -------
    float
        The loss value.
    """
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if clip is not None:
        nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], clip)
    optimizer.step()
    return float(loss.detach())


def train(
    step_fn: Callable[[Any], dict[str, float]],
    batches: Iterator[Any],
    total: int,
    *,
    per_epoch: int | None = None,
    scheduler: Any | None = None,
    progress: bool | None = None,
    desc: str = "",
) -> list[dict[str, float]]:
    """The training loop of every model in :mod:`cflib.models`: ``total`` steps of ``step_fn`` on ``batches``.

    Parameters
    ----------
    step_fn : callable
        Does one optimisation step on a batch and returns its losses (floats).
    batches : iterator
        The sampler: yields what one step consumes (e.g. :func:`shuffled_batches`, :func:`random_batches`).
    total : int
        Number of steps (0 trains nothing).
    per_epoch : int, optional
        Steps per epoch: the history then holds one entry per epoch (and one at the last step) with the
        batch-size-weighted mean of each loss. ``None``: one entry per step.
    scheduler : object, optional
        Learning-rate scheduler; its ``step()`` is called after every step.
    progress : bool, optional
        Show a progress bar; ``None``: only when the code does not run under :mod:`cflib.runner`
        (see :func:`cflib.runtime.progress`).
    desc : str
        Progress-bar label.

    Returns
    -------
    list of dict
        The history: ``{"step": k, <loss>: value, ...}`` entries.
    """
    if isinstance(total, bool) or not isinstance(total, (int, np.integer)) or total < 0:
        raise ValueError(f"total must be a non-negative integer number of steps, got {total!r}")
    if per_epoch is not None:
        per_epoch = check_positive_int(per_epoch, "per_epoch")
    history: list[dict[str, float]] = []
    sums: dict[str, float] = {}
    count = 0
    for done in progress_bar(
        range(1, int(total) + 1), total=int(total), desc=desc, disable=None if progress is None else not progress
    ):
        b = next(batches)
        losses = step_fn(b)
        if scheduler is not None:
            scheduler.step()
        if per_epoch is None:
            history.append({"step": done, **{k: float(v) for k, v in losses.items()}})
            continue
        for k, v in losses.items():
            sums[k] = sums.get(k, 0.0) + float(v) * len(b)
        count += len(b)
        if done % per_epoch == 0 or done == total:
            history.append({"step": done, **{k: v / count for k, v in sums.items()}})
            sums, count = {}, 0
    return history


def run_steps(
    step_fn: Callable[[torch.Tensor], dict[str, float]],
    n: int,
    batch_size: int,
    epochs: int,
    steps: int | None,
    seed: int,
    indices: torch.Tensor | None = None,
    desc: str = "",
    progress: bool | None = None,
) -> list[dict[str, float]]:
    """:func:`train` over shuffled minibatches with per-epoch history, seeded as the image models expect.

    Seeds the shuffling generator and torch's global generator (which dropout and reparameterisation
    draw from) with ``seed``.

    Parameters
    ----------
    step_fn : callable
        Does one optimisation step on the rows ``batch_indices`` and returns its losses.
    n : int
        Number of rows.
    batch_size, epochs : int
        Minibatch size and passes over ``indices``.
    steps : int, optional
        Exact number of steps (overrides ``epochs``).
    seed : int
        Seed of the shuffling and of torch's global generator.
    indices : torch.Tensor, optional
        Rows to draw from, with repeats.
    desc : str
        Progress-bar label.
    progress : bool, optional
        Force the progress bar on or off.

    Returns
    -------
    list of dict
        One entry per epoch (and at the last step): ``step`` and the mean of each loss.
    """
    gen = torch.Generator().manual_seed(int(seed))
    torch.manual_seed(int(seed))
    n_rows = n if indices is None else len(indices)
    per_epoch = max(1, math.ceil(n_rows / batch_size))
    total = per_epoch * epochs if steps is None else check_positive_int(steps, "steps")
    return train(
        step_fn, shuffled_batches(n, batch_size, gen, indices), total, per_epoch=per_epoch, progress=progress, desc=desc
    )


def check_positive_int(value: Any, name: str) -> int:
    """Return ``value`` as an int, raising ``ValueError`` unless it is a positive integer."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def save_model(
    model: nn.Module, path: str | os.PathLike[str], config: dict[str, Any], extra: dict[str, Any] | None = None
) -> Path:
    """Atomically write a model's constructor config, weights and extra state with :func:`torch.save`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "class": type(model).__name__,
        "config": config,
        "state_dict": {k: v.cpu() for k, v in model.state_dict().items()},
        "extra": extra or {},
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    torch.save(payload, tmp)
    os.replace(tmp, path)
    return path


def load_model(cls: type[ModuleT], path: str | os.PathLike[str], device: str = "cpu") -> tuple[ModuleT, dict[str, Any]]:
    """Rebuild a model saved by :func:`save_model`; returns the model and its extra state."""
    payload = torch.load(Path(path), map_location="cpu", weights_only=False)
    if payload.get("class") != cls.__name__:
        raise ValueError(f"{path} holds a {payload.get('class')}, not a {cls.__name__}")
    model = cls(**payload["config"])
    model.load_state_dict(payload["state_dict"])
    model.to(get_device(device))
    return model, payload["extra"]
