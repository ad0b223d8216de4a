"""The counterfactual generator of an image audit: one checked interface over a function ``f(x, pa, pa*)``, a
:class:`cflib.scm.CounterfactualModel` or the book's CLDM+D trained on the audited images.
"""

from __future__ import annotations

import hashlib
import inspect
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from ...validation import ValidationError, ValidationTypeError, describe

__all__ = [
    "CPU_BUDGET_S",
    "CPU_TRAIN_DEFAULTS",
    "TRAIN_DEFAULTS",
    "Generator",
    "ReusedCounterfactual",
    "as_function",
    "estimate_train_seconds",
    "train_generator",
]

# A counterfactual function ``f(images, pa, pa_star) -> images``: ``pa`` and ``pa_star`` map the attribute and the
# parents to one value per image (the factual and the counterfactual parents); no ``parent_names`` is required
# (unlike cflib.metrics.function_form.CounterfactualFunction).
_Counterfactual = Callable[[np.ndarray, Mapping[str, Any], Mapping[str, Any]], Any]

#: Settings of the CLDM+D trained by ``counterfactual="train"`` (the invariance chapter's book scale);
#: ``train_options`` overrides any of them. ``config`` keys go to :class:`cflib.models.diffusion.LDMConfig`,
#: ``fit`` keys to :meth:`LatentDiffusion.fit`, ``counterfactual`` keys to :meth:`LatentDiffusion.counterfactual`.
TRAIN_DEFAULTS: dict[str, dict[str, Any]] = {
    "config": {"latent_channels": 4, "vae_channels": (16, 32), "unet_channels": (16, 32)},
    "fit": {"vae_epochs": 10, "diffusion_epochs": 20, "batch_size": 32, "lr": 2e-3},
    "counterfactual": {"t_star": 600, "steps": 10, "guidance": 2.0, "aux_guidance": 3.0},
}

#: The settings ``counterfactual="train"`` starts from on a CPU (:data:`TRAIN_DEFAULTS` on CUDA): fewer epochs and
#: DDIM steps, meant for 1,000 grey 28 x 28 images trained on and given their three counterfactual sets (the
#: counterfactual, the null intervention, the round trip) within :data:`CPU_BUDGET_S` on two cores; whether a
#: request fits is measured on the machine before training (:func:`estimate_train_seconds`), and
#: ``python -m benchmarks audit-images-train`` measures the whole audit.
CPU_TRAIN_DEFAULTS: dict[str, dict[str, Any]] = {
    "config": dict(TRAIN_DEFAULTS["config"]),
    "fit": {"vae_epochs": 3, "diffusion_epochs": 6, "batch_size": 64, "lr": 2e-3},
    "counterfactual": {"t_star": 400, "steps": 5, "guidance": 2.0, "aux_guidance": 3.0},
}

#: The time budget of ``counterfactual="train"`` on a CPU, in seconds (``train_options["budget_s"]`` sets another;
#: ``None`` lifts it): a request whose estimate (:func:`estimate_train_seconds`, measured on this machine before
#: anything is trained) exceeds it is refused with the estimate.
CPU_BUDGET_S = 300.0

#: Images per call of the trained model while generating (one step of the generation's progress bar).
GENERATION_BATCH = 64


class Generator:
    """One interface over the generators the audit accepts: ``gen(x, target) -> images`` with checked output.

    Parameters
    ----------
    f : callable
        The counterfactual function ``f(images, pa, pa_star)``.
    pa : dict
        The parents held fixed, one value per image.
    attribute : str
        The key of the intervened attribute in ``pa`` and ``pa_star``.
    what : str
        The generator's kind, in words.
    """

    def __init__(self, f: _Counterfactual, pa: dict[str, np.ndarray], attribute: str, what: str) -> None:
        self.f, self.pa, self.attribute, self.what = f, pa, attribute, what

    def __call__(self, x: np.ndarray, target: np.ndarray, current: np.ndarray) -> np.ndarray:
        """The images ``f(x, pa, pa*)`` with the attribute at ``current`` in ``pa`` and at ``target`` in ``pa*``.

        Parameters
        ----------
        x : numpy.ndarray
            Images.
        target, current : numpy.ndarray
            The attribute's counterfactual and factual levels, one per image.

        Returns
        -------
        numpy.ndarray
            Images of ``x``'s shape in [0, 1].

        Raises
        ------
        cflib.validation.ValidationError, cflib.validation.ValidationTypeError
            The generator returned something else.
        """
        pa = {**self.pa, self.attribute: current}
        pa_star = {**self.pa, self.attribute: target}
        out = self.f(x, pa, pa_star)
        try:
            out = np.asarray(out, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValidationTypeError(
                f"counterfactual must return a numeric image array, got {type(out).__name__}"
            ) from None
        if out.shape != x.shape:
            raise ValidationError(f"counterfactual must return images of the input's shape {x.shape}, got {out.shape}")
        bad = ~np.isfinite(out)
        if bad.any():
            raise ValidationError(
                f"counterfactual returned {int(bad.sum())} NaN or infinite pixel values; "
                "it must return finite images in [0, 1]"
            )
        lo, hi = float(out.min()), float(out.max())
        if lo < -1e-6 or hi > 1 + 1e-6:
            raise ValidationError(
                f"counterfactual returned intensities in [{lo:.4g}, {hi:.4g}]; it must return images in [0, 1] "
                "(clip or rescale its output)"
            )
        return np.clip(out, 0.0, 1.0)


class ReusedCounterfactual:
    """A counterfactual function that computes each distinct call once, so several classifiers can be audited
    with one generator at the cost of one (the audit calls it three times per image set: the counterfactual,
    the null intervention and the round trip).

    Parameters
    ----------
    f : callable
        ``f(images, pa, pa_star) -> images``.

    Examples
    --------
    >>> shared = ReusedCounterfactual(my_generator)  # doctest: +SKIP
    >>> reports = [audit_images(c, x, frame, attribute="group", counterfactual=shared) for c in classifiers]  # doctest: +SKIP
    """

    def __init__(self, f: _Counterfactual) -> None:
        if not callable(f):
            raise ValidationTypeError(f"f must be a counterfactual function f(images, pa, pa_star), got {describe(f)}")
        self.f = f
        self.calls = 0
        self._memo: dict[str, np.ndarray] = {}

    def __call__(self, x: np.ndarray, pa: Mapping[str, Any], pa_star: Mapping[str, Any]) -> np.ndarray:
        """The images ``f(x, pa, pa_star)``, computed on the first call with these arguments.

        Parameters
        ----------
        x : numpy.ndarray
            Images.
        pa, pa_star : dict
            Factual and counterfactual parents.

        Returns
        -------
        numpy.ndarray
        """
        h = hashlib.sha256(np.ascontiguousarray(x).tobytes())
        for d in (pa, pa_star):
            for k in sorted(d):
                h.update(str(k).encode())
                h.update(np.ascontiguousarray(np.asarray(d[k])).tobytes())
        key = h.hexdigest()
        if key not in self._memo:
            self.calls += 1
            self._memo[key] = np.asarray(self.f(x, pa, pa_star))
        return self._memo[key].copy()


def as_function(counterfactual: Any, image_key: str = "x") -> tuple[_Counterfactual, str]:
    """A counterfactual function ``f(x, pa, pa_star)`` from a function or a CounterfactualModel.

    Parameters
    ----------
    counterfactual : callable or CounterfactualModel
        A function of three arguments (or with ``parent_names``), or an object with ``counterfactual(obs, do)``.
    image_key : str
        The key of the images in the model's observations.

    Returns
    -------
    (callable, str)
        The function and its kind (``"function"`` or ``"CounterfactualModel"``).

    Raises
    ------
    cflib.validation.ValidationTypeError
        ``counterfactual`` is neither.
    """
    if callable(counterfactual) and not isinstance(counterfactual, type):
        try:
            n_args = len(inspect.signature(counterfactual).parameters)
        except (TypeError, ValueError):
            n_args = 3
        if n_args >= 3 or hasattr(counterfactual, "parent_names"):
            return counterfactual, "function"
    if callable(getattr(counterfactual, "counterfactual", None)):
        model = counterfactual

        def f(x: np.ndarray, pa: Mapping[str, Any], pa_star: Mapping[str, Any]) -> np.ndarray:
            changed = {k: v for k, v in pa_star.items() if not np.array_equal(np.asarray(v), np.asarray(pa[k]))}
            out = model.counterfactual({image_key: x, **pa}, changed or {k: pa_star[k] for k in list(pa_star)[:1]})
            if not isinstance(out, Mapping) or image_key not in out:
                raise ValidationTypeError(
                    f"counterfactual: counterfactual(obs, do) must return a dict holding the image {image_key!r}"
                )
            return out[image_key]

        return f, "CounterfactualModel"
    raise ValidationTypeError(
        "counterfactual must be a function f(images, pa, pa_star) -> images, a CounterfactualModel "
        f"(counterfactual(obs, do)) or 'train', got {describe(counterfactual)} ({type(counterfactual).__name__})"
    )


def estimate_train_seconds(
    cfg: Any, n: int, fit: Mapping[str, Any], cf: Mapping[str, Any], aux: np.ndarray | None, device: str
) -> dict[str, float]:
    """What ``counterfactual="train"`` will take here, measured before anything is trained: one optimiser step of
    the autoencoder and of the UNet, and the counterfactuals of a few images, each timed on this machine (after a
    warm-up) and scaled to the request.

    Parameters
    ----------
    cfg : cflib.models.diffusion.LDMConfig
        The architecture.
    n : int
        Images to train on and to give their three counterfactual sets.
    fit : mapping
        ``vae_epochs``, ``diffusion_epochs``, ``batch_size`` (as :meth:`LatentDiffusion.fit` takes them).
    cf : mapping
        The settings of :meth:`LatentDiffusion.counterfactual` (``t_star``, ``steps``, guidance).
    aux : numpy.ndarray or None
        The integer-coded parents (their number of columns matters).
    device : str
        Where the model runs.

    Returns
    -------
    dict of str to float
        Seconds: ``autoencoder``, ``diffusion``, ``generation`` and ``total``.
    """
    import time

    import torch

    from ...models.diffusion import LatentDiffusion

    batch = int(fit.get("batch_size", 32))
    probe_n = max(2, min(batch, 16))
    rng = np.random.default_rng(0)
    x = rng.random((probe_n, cfg.size, cfg.size)).astype(np.float32)
    a = np.arange(probe_n) % 2
    pa = None if aux is None else np.zeros((probe_n, aux.shape[1]), dtype=np.int64)
    with torch.random.fork_rng(devices=[]):
        model = LatentDiffusion(cfg, seed=0)

        def timed(run: Callable[[], Any]) -> float:
            run()  # warm-up
            t0 = time.perf_counter()
            run()
            return time.perf_counter() - t0

        t_vae = timed(lambda: model.fit_autoencoder(x, epochs=1, batch_size=probe_n, device=device, progress=False))
        t_unet = timed(
            lambda: model.fit_diffusion(x, a, aux=pa, epochs=1, batch_size=probe_n, device=device, progress=False)
        )
        t_cf = timed(lambda: model.counterfactual(x, a, 1 - a, aux=pa, **cf))
    steps = math.ceil(n / batch)
    scale = min(batch, n) / probe_n  # a step's cost grows with its batch (near linearly on a CPU)
    out = {
        "autoencoder": float(fit.get("vae_epochs", 0)) * steps * t_vae * scale,
        "diffusion": float(fit.get("diffusion_epochs", 0)) * steps * t_unet * scale,
        "generation": 3 * n * t_cf / probe_n,
    }
    out["total"] = sum(out.values())
    return out


def train_generator(
    x: np.ndarray,
    a01: np.ndarray,
    aux: np.ndarray | None,
    options: Mapping[str, Any] | None,
    seed: int,
    device: str,
    progress: bool,
) -> tuple[_Counterfactual, str]:
    """The book's CLDM+D trained on the audited images (cached): conditioned on the attribute and the parents,
    on batches in which the two are independent, so do(attribute) holds the parents fixed.

    On a CPU it starts from :data:`CPU_TRAIN_DEFAULTS` and has a time budget (:data:`CPU_BUDGET_S`, or
    ``options["budget_s"]``): the cost is measured on this machine first (:func:`estimate_train_seconds`), and a
    request whose estimate exceeds the budget is refused, with the estimate, before anything is trained. Training
    shows a progress bar per stage (autoencoder, diffusion) and generation one per set of counterfactuals.

    Parameters
    ----------
    x : numpy.ndarray
        Grey square images ``(n, 1, S, S)``.
    a01 : numpy.ndarray
        The attribute coded 0/1.
    aux : numpy.ndarray or None
        The integer-coded parents, one column each.
    options : mapping or None
        ``config``, ``fit``, ``counterfactual`` overrides of the defaults, ``cache_dir`` and ``budget_s`` (seconds,
        or ``None`` for no budget; default :data:`CPU_BUDGET_S` on a CPU, none on CUDA).
    seed : int
        Seed of the training.
    device : str
        Device of the training.
    progress : bool
        Show progress bars.

    Returns
    -------
    (callable, str)
        The counterfactual function ``f(images, pa, pa_star)`` (``pa["_a01"]`` the attribute) and its description
        (with the estimate and the budget).

    Raises
    ------
    cflib.validation.ValidationError, cflib.validation.ValidationTypeError
        Images that are not grey and square, unknown or invalid options, or an estimate over the budget.
    """
    from dataclasses import replace

    from tqdm import tqdm

    from ...models.diffusion import LDMConfig, fit_latent_diffusion, independence_weights

    if x.shape[1] != 1 or x.shape[2] != x.shape[3]:
        raise ValidationError(
            f"counterfactual='train' trains a grey-image model: images must have shape (n, 1, S, S), got {x.shape}; "
            "pass your own counterfactual function for other images"
        )
    if options is None:
        options = {}
    allowed = ["budget_s", "cache_dir", "config", "counterfactual", "fit"]
    if not isinstance(options, Mapping):
        raise ValidationTypeError(
            f"train_options must be a dict with keys among {', '.join(allowed)}; got {describe(options)}"
        )
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise ValidationError(f"train_options: unknown key(s) {unknown}; allowed: {', '.join(allowed)}")
    on_cpu = not str(device).startswith("cuda")
    budget = options.get("budget_s", CPU_BUDGET_S if on_cpu else None)
    if budget is not None and (
        isinstance(budget, bool) or not isinstance(budget, (int, float)) or not math.isfinite(budget) or budget <= 0
    ):
        raise ValidationError(f"train_options['budget_s'] must be seconds > 0 or None (no budget), got {budget!r}")
    base = CPU_TRAIN_DEFAULTS if on_cpu else TRAIN_DEFAULTS
    parts = {k: {**base[k], **dict(options.get(k) or {})} for k in base}
    # the user's config keys, checked by LDMConfig itself (an unknown key or a wrong type is reported below)
    config: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in parts["config"].items()}
    try:
        cfg = LDMConfig(size=int(x.shape[2]), n_classes=2, **config)
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"train_options['config']: {' '.join(str(exc).split())}") from None
    cf_kw = dict(parts["counterfactual"])
    if aux is not None:
        cfg = replace(cfg, aux_classes=tuple(max(2, int(col.max()) + 1) for col in aux.T))
        weights = independence_weights(a01, aux)
    else:
        cf_kw.pop("aux_guidance", None)
        weights = None
    said = ""
    if budget is not None:
        est = estimate_train_seconds(cfg, len(x), parts["fit"], cf_kw, aux, device)
        said = f"; estimated {est['total']:.0f} s here against a budget of {float(budget):.0f} s"
        if est["total"] > float(budget):
            raise ValidationError(
                f"counterfactual='train': {len(x)} images would take about {est['total']:.0f} s on {device} "
                f"(autoencoder {est['autoencoder']:.0f} s, diffusion {est['diffusion']:.0f} s, generation "
                f"{est['generation']:.0f} s, measured here), over the budget of {float(budget):.0f} s; audit fewer "
                "images, lower train_options fit epochs or counterfactual steps, use a GPU (device='cuda'), or "
                "raise train_options['budget_s'] (None: no budget)"
            )
    model = fit_latent_diffusion(
        x[:, 0],
        a01,
        aux=aux,
        sample_weight=weights,
        config=cfg,
        seed=seed,
        device=device,
        cache_dir=options.get("cache_dir"),
        progress=progress,
        **parts["fit"],
    )
    sets = iter(["counterfactuals", "null interventions", "round trips"])

    def f(images: np.ndarray, pa: Mapping[str, Any], pa_star: Mapping[str, Any]) -> np.ndarray:
        out = np.empty((len(images), *images.shape[2:]), dtype=np.float32)
        bar = tqdm(total=len(images), desc=f"generation: {next(sets, 'images')}", disable=not progress, unit="img")
        for i in range(0, len(images), GENERATION_BATCH):
            sl = slice(i, i + GENERATION_BATCH)
            out[sl] = model.counterfactual(
                images[sl, 0], pa["_a01"][sl], pa_star["_a01"][sl], aux=None if aux is None else aux[sl], **cf_kw
            )
            bar.update(len(images[sl]))
        bar.close()
        return out[:, None]

    # fit_cached sets cache_path (a Path) on the model; torch's stubs type Module.__getattr__ as Tensor | Module
    return f, f"CLDM+D trained here, cached at {Path(model.cache_path).name}{said}"  # type: ignore[arg-type]
