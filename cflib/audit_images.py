"""Audit an image classifier in one call, with its counterfactual generator checked first.

:func:`audit_images` is :func:`cflib.audit.audit` for a classifier that reads images. Its counterfactuals
come from a generator (a counterfactual function ``f(x, pa, pa*)`` in the sense of Monteiro et al., ICLR
2023, Sec. 3.1; a :class:`cflib.scm.CounterfactualModel`; or the book's CLDM+D trained on the images, Ma
et al., Sec. 3.2, chapter *invariance-test*), and no classifier is called invariant on the word of a
generator that fails its own soundness checks. The report (the :class:`cflib.audit.AuditReport` of the
tabular audit) holds:

- **the generator gate**, computed first: composition (Monteiro et al., eq. 1: the null intervention
  ``f(x, pa, pa)`` must leave the image alone), reversibility (eq. 2: ``f(f(x, pa, pa*), pa*, pa)`` must
  give the image back) and effectiveness (eq. 3: an attribute reader must read the intervened level from
  the counterfactual), each with an interval over images and a pass/fail against documented thresholds
  (:data:`GATE_DEFAULTS`; the chapter *auditing* justifies them);
- **the counterfactual rows** when the gate passes: the expected counterfactual accuracy (ECA, Ma et al.,
  eqs. 7-8, Wilson interval), CF-CLOT on the factual and counterfactual scores (Fu et al., Eq. 7) and the
  doubly robust CIT-LR (Ma et al., Alg. 1, with the non-sensitive content ``z`` given as columns or
  computed from the generator's images with the attribute held at one level). When the gate fails, each
  of them is ``not estimable`` and says which axiom failed, with its estimate, interval and threshold;
- **the observational rows**, which need no generator: demographic parity and equal opportunity (Ma et
  al., eqs. 5-6) as differences of group rates with intervals and Welch p-values, and the accuracy per
  group when the outcome is given;
- a figure of the gate and of the units whose decision the intervention moves most (factual,
  counterfactual and their difference), and provenance: the data, classifier, generator and reader
  hashes, the gate thresholds, the device.
"""

from __future__ import annotations

import hashlib
import inspect
import math
import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .audit import AuditReport, _cflib_version, _environment, _model_hash, _plain
from .validation import (
    CflibWarning,
    ValidationError,
    ValidationTypeError,
    check_count,
    check_real,
    describe,
)

__all__ = ["GATE_DEFAULTS", "TRAIN_DEFAULTS", "ImageAuditReport", "ReusedCounterfactual", "audit_images",
           "audit_images_from_config", "load_images"]

#: Default thresholds of the generator gate. ``composition`` and ``reversibility`` bound the mean l1
#: distance (0-255 scale, Monteiro et al., App. B) between an image and the generator's null intervention
#: or its round trip: the upper end of the interval must lie at or below them. ``effectiveness`` bounds
#: the share of counterfactuals read as the intervened level: the lower end must lie at or above it.
GATE_DEFAULTS: dict[str, float] = {"composition": 12.0, "reversibility": 12.0, "effectiveness": 0.8}

#: Settings of the CLDM+D trained by ``counterfactual="train"`` (the invariance chapter's book scale);
#: ``train_options`` overrides any of them. ``config`` keys go to :class:`cflib.models.diffusion.LDMConfig`,
#: ``fit`` keys to :meth:`LatentDiffusion.fit`, ``counterfactual`` keys to :meth:`LatentDiffusion.counterfactual`.
TRAIN_DEFAULTS: dict[str, dict[str, Any]] = {
    "config": {"latent_channels": 4, "vae_channels": (16, 32), "unet_channels": (16, 32)},
    "fit": {"vae_epochs": 10, "diffusion_epochs": 20, "batch_size": 32, "lr": 2e-3},
    "counterfactual": {"t_star": 600, "steps": 10, "guidance": 2.0, "aux_guidance": 3.0},
}

_IMAGE_KEYS = {"images", "attributes", "attribute", "levels", "classifier", "counterfactual", "outcome", "parents",
               "attribute_reader", "z", "gate", "epsilon", "alpha", "seed", "train_options"}
_READER_EPOCHS = 4
_READER_STEPS = 400
_N_COMPONENTS = 8
_BATCH = 256


# ----------------------------------------------------------------------------------------------------
# The report
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ImageAuditReport(AuditReport):
    """The :class:`cflib.audit.AuditReport` of :func:`audit_images`: the same rows, JSON and HTML.

    Its figure (:meth:`plot`, embedded by :meth:`to_html`) shows the generator gate against its
    thresholds, the counterfactual checks, and the units whose decision the intervention moves most.
    """

    def plot(self, ax=None):
        """The gate and the checks with their intervals; with ``ax=None`` also the units that flip most.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Draw only the interval panel into it.

        Returns
        -------
        matplotlib.axes.Axes
            The interval panel (its ``figure`` holds the image rows too when ``ax`` was ``None``).
        """
        from . import plotting

        shown = self.details.get("figure", {})
        k = len(shown.get("factual", ()))
        if ax is None:
            import matplotlib.pyplot as plt

            fig = plt.figure(figsize=(7.0, 2.8 + 1.25 * k), layout="constrained")
            grid = fig.add_gridspec(1 + k, 3, height_ratios=[2.2] + [1.0] * k)
            ax = fig.add_subplot(grid[0, :])
            for i in range(k):
                self._image_row(fig, grid, i, shown)
        r = self.rows
        names = [n for n in r.index if n.startswith("generator ") or n == "ECA"]
        pos = np.arange(len(names))[::-1]
        for p, n in zip(pos, names, strict=True):
            est, lo, hi = (float(v) for v in r.loc[n, ["estimate", "ci_low", "ci_high"]])
            thr = self.provenance.get("gate", {}).get(n.removeprefix("generator "))
            scale = 255.0 if n in ("generator composition", "generator reversibility") else 1.0
            ok = "pass" in str(r.loc[n, "verdict"]) or (n == "ECA" and est == 1.0)
            colour = plotting.PALETTE[2] if ok else plotting.PALETTE[3]
            if np.isfinite(est):
                xerr = [[(est - lo) / scale], [(hi - est) / scale]] if np.isfinite(lo) else None
                ax.errorbar([est / scale], [p], xerr=xerr, fmt="o", capsize=4, color=colour)
            else:
                ax.text(0.02, p, "not estimable", va="center", fontsize=8, color=plotting.PALETTE[3])
            if thr is not None:
                ax.plot([thr / scale] * 2, [p - 0.3, p + 0.3], color="0.3", lw=1.5)
        ax.set_yticks(pos, names)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(f"share (ECA, effectiveness) or l1 / 255 (composition, reversibility); {1 - self.alpha:.0%} "
                      "intervals, bars: gate thresholds")
        ax.set_title("Generator gate and counterfactual accuracy")
        return ax

    @staticmethod
    def _image_row(fig, grid, i: int, shown: Mapping[str, Any]) -> None:
        x, xc = shown["factual"][i], shown["counterfactual"][i]
        s_cf = float(shown["score_cf"][i])
        cf_label = f"score {s_cf:.2f}" if np.isfinite(s_cf) else "not scored (gate failed)"
        panels = [(x, "factual", f"score {shown['score'][i]:.2f}"), (xc, "counterfactual", cf_label),
                  (xc - x, "counterfactual − factual", "")]
        for j, (img, title, label) in enumerate(panels):
            a = fig.add_subplot(grid[1 + i, j])
            pic = np.moveaxis(img, 0, -1) if img.shape[0] == 3 else img.mean(0)
            if j == 2:
                lim = max(float(np.abs(pic).max()), 1e-6)
                a.imshow(pic if pic.ndim == 2 else pic.mean(-1), cmap="RdBu_r", vmin=-lim, vmax=lim)
            else:
                a.imshow(pic, cmap=None if pic.ndim == 3 else "gray", vmin=0, vmax=1)
            a.set_xticks([])
            a.set_yticks([])
            if i == 0:
                a.set_title(title, fontsize=9)
            a.set_xlabel(label, fontsize=8)


# ----------------------------------------------------------------------------------------------------
# Input checks (each raises one line naming the argument and the fix)
# ----------------------------------------------------------------------------------------------------
def _check_images(images: Any, name: str = "images") -> np.ndarray:
    if images is None or isinstance(images, (str, bytes, Mapping, pd.DataFrame)) or callable(images):
        raise ValidationTypeError(f"{name} must be a numeric array of shape (n, C, H, W) in [0, 1], got {describe(images)} "
                                  f"({type(images).__name__})")
    try:
        x = np.asarray(images)
    except (TypeError, ValueError):
        raise ValidationTypeError(f"{name} must be a rectangular numeric array of shape (n, C, H, W), got {type(images).__name__}") from None
    if not (np.issubdtype(x.dtype, np.number) or x.dtype == bool):
        raise ValidationTypeError(f"{name} must be numeric, got dtype {x.dtype}: convert the images to floats in [0, 1]")
    if x.ndim == 3:
        raise ValidationError(f"{name} must have shape (n, C, H, W), got {x.shape}: add the channel axis ({name}[:, None]) for grey images")
    if x.ndim != 4 or min(x.shape) < 1:
        raise ValidationError(f"{name} must have shape (n, C, H, W) with every axis >= 1, got {x.shape}")
    x = x.astype(np.float32, copy=False)
    lo, hi = float(x.min()), float(x.max())
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValidationError(f"{name} holds {int((~np.isfinite(x)).sum())} NaN or infinite values: drop or repair those images")
    if lo < 0.0 or hi > 1.0:
        fix = f"divide by 255 ({name} / 255)" if hi <= 255.0 and lo >= 0.0 else "rescale them to [0, 1]"
        raise ValidationError(f"{name} must hold intensities in [0, 1], got values in [{lo:.4g}, {hi:.4g}]: {fix}")
    return x


def _check_frame(attributes: Any, n: int, attribute: Any, outcome: Any, parents: Any,
                 levels: Any) -> tuple[pd.DataFrame, Any, Any, list[str], np.ndarray]:
    if not isinstance(attributes, pd.DataFrame):
        raise ValidationTypeError(f"attributes must be a pandas DataFrame with one row per image, got {type(attributes).__name__}")
    if len(attributes) != n:
        raise ValidationError(f"attributes must have one row per image ({n}), got {len(attributes)} rows")
    if not isinstance(attribute, str):
        raise ValidationTypeError(f"attribute must be the name (str) of a column of attributes, got {describe(attribute)}")
    if isinstance(parents, str):
        parents = [parents]
    if not isinstance(parents, (list, tuple)) or not all(isinstance(p, str) for p in parents):
        raise ValidationTypeError(f"parents must be a list of column names, got {describe(parents)}")
    parents = list(parents)
    if outcome is not None and not isinstance(outcome, str):
        raise ValidationTypeError(f"outcome must be a column name (str) or None, got {describe(outcome)}")
    cols = [attribute, *parents] + ([outcome] if outcome is not None else [])
    for c, what in [(attribute, "attribute")] + [(p, "parents") for p in parents] + ([(outcome, "outcome")] if outcome else []):
        if c not in attributes.columns:
            raise ValidationError(f"{what}: column {c!r} is not in attributes; its columns are {list(map(str, attributes.columns))[:20]}")
    if attribute in parents or attribute == outcome:  # the outcome may be a parent the generator holds fixed
        raise ValidationError(f"attribute {attribute!r} cannot also be the outcome or a parent; name another column for "
                              f"outcome={outcome!r} and parents={parents}")
    bad = [c for c in cols if attributes[c].isna().any()]
    if bad:
        raise ValidationError(f"attributes: column(s) {bad} hold missing values; drop those images or fill the values")
    a = attributes[attribute].to_numpy()
    found = list(pd.unique(a))
    if levels is None:
        if len(found) < 2:
            raise ValidationError(f"attribute {attribute!r} is constant ({describe(found[0])}): the audit compares two levels")
        if len(found) > 2:
            raise ValidationError(f"attribute {attribute!r} has {len(found)} levels {sorted(map(str, found))[:6]}: "
                                  "name the two to compare with levels=(x0, x1)")
        x0, x1 = sorted(found, key=lambda v: (str(type(v)), v))
    else:
        if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence) or len(levels) != 2 or levels[0] == levels[1]:
            raise ValidationError(f"levels must be a pair of two different values of {attribute!r} (x0, x1), got {describe(levels)}")
        x0, x1 = levels
        missing = [v for v in (x0, x1) if v not in set(found)]
        if missing:
            raise ValidationError(f"levels: {describe(missing)} not found in column {attribute!r}, whose values are {sorted(map(str, found))[:6]}")
    keep = np.isin(a, [x0, x1])
    counts = [(a == v).sum() for v in (x0, x1)]
    if min(counts) < 2:
        raise ValidationError(f"attribute {attribute!r} needs at least 2 images at each level, got {dict(zip(map(str, (x0, x1)), map(int, counts), strict=True))}")
    if outcome is not None:
        y = attributes[outcome].to_numpy()[keep]
        if not set(pd.unique(y)) <= {0, 1}:
            raise ValidationError(f"outcome: column {outcome!r} must be binary 0/1 (the label the classifier predicts), got values "
                                  f"{sorted(map(str, pd.unique(y)))[:6]}")
    return attributes, x0, x1, parents, keep


def _check_gate(gate: Any) -> dict[str, float]:
    if gate is None:
        return dict(GATE_DEFAULTS)
    if not isinstance(gate, Mapping):
        raise ValidationTypeError(f"gate must be a dict of thresholds among {sorted(GATE_DEFAULTS)}, got {describe(gate)}")
    unknown = sorted(set(gate) - set(GATE_DEFAULTS))
    if unknown:
        raise ValidationError(f"gate: unknown threshold(s) {unknown}; the gate's thresholds are {sorted(GATE_DEFAULTS)}")
    out = dict(GATE_DEFAULTS)
    for k, v in gate.items():
        high = 1.0 if k == "effectiveness" else 255.0
        out[k] = check_real(v, f"gate[{k!r}]", low=0.0, high=high)
    return out


def _batched(fn: Callable[[np.ndarray], Any], x: np.ndarray, name: str) -> np.ndarray:
    outs = []
    for i in range(0, len(x), _BATCH):
        part = x[i:i + _BATCH]
        v = np.asarray(fn(part))
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1 or v.shape[0] != len(part):
            raise ValidationError(f"{name} must return one value per image ({len(part)} for a batch of {len(part)}), got shape {v.shape}")
        outs.append(v)
    v = np.concatenate(outs)
    if not (np.issubdtype(v.dtype, np.number) or v.dtype == bool):
        raise ValidationTypeError(f"{name} must return numeric scores or labels, got dtype {v.dtype}")
    v = v.astype(float)
    if not np.isfinite(v).all():
        raise ValidationError(f"{name} returned {int((~np.isfinite(v)).sum())} NaN or infinite values; it must give a finite score per image")
    return v


def _module_predictor(module: Any) -> Callable[[np.ndarray], np.ndarray]:
    """A torch module's outputs read as logits: sigmoid of one column, softmax's last class of several."""
    import torch

    def run(x: np.ndarray) -> np.ndarray:
        params = list(module.parameters()) if hasattr(module, "parameters") else []
        device = params[0].device if params else torch.device("cpu")
        was_training = bool(getattr(module, "training", False))
        module.eval()
        try:
            with torch.no_grad():
                out = module(torch.from_numpy(np.ascontiguousarray(x)).to(device)).float().cpu()
        finally:
            module.train(was_training)
        if out.ndim == 2 and out.shape[1] >= 2:
            return torch.softmax(out, dim=1)[:, -1].numpy()
        return torch.sigmoid(out.reshape(out.shape[0], -1)[:, 0] if out.ndim == 2 else out).numpy()

    return run


def _predictor(predict: Any) -> Callable[[np.ndarray], np.ndarray]:
    try:
        import torch

        if isinstance(predict, torch.nn.Module):
            return _module_predictor(predict)
    except ImportError:  # pragma: no cover - torch is a dependency
        pass
    if not callable(predict):
        raise ValidationTypeError(f"predict must be a callable images -> scores or a torch.nn.Module, got {describe(predict)} "
                                  f"({type(predict).__name__})")
    return predict


def _torch_hash(module: Any) -> str:
    h = hashlib.sha256(type(module).__name__.encode())
    for k, v in sorted(module.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return "sha256:" + h.hexdigest()


def _hash_of(obj: Any, _seen: frozenset = frozenset()) -> str:
    if isinstance(obj, ReusedCounterfactual):
        return _hash_of(obj.f, _seen)
    cells = getattr(obj, "__closure__", None)
    if cells and id(obj) not in _seen:  # a lambda around a model: its source is the same for every model it wraps
        h = hashlib.sha256(_model_hash(obj).encode())
        for cell in cells:
            try:
                h.update(_hash_of(cell.cell_contents, _seen | {id(obj)}).encode())
            except ValueError:  # an empty cell
                continue
        return "sha256:" + h.hexdigest()
    try:
        import torch

        if isinstance(obj, torch.nn.Module):
            return _torch_hash(obj)
    except ImportError:  # pragma: no cover
        pass
    return _model_hash(obj)


# ----------------------------------------------------------------------------------------------------
# The generator
# ----------------------------------------------------------------------------------------------------
class _Generator:
    """One interface over the generators the audit accepts: ``gen(x, target) -> images`` with checked output."""

    def __init__(self, f: Callable[[np.ndarray, dict, dict], Any], pa: dict[str, np.ndarray], attribute: str, what: str) -> None:
        self.f, self.pa, self.attribute, self.what = f, pa, attribute, what

    def __call__(self, x: np.ndarray, target: np.ndarray, current: np.ndarray) -> np.ndarray:
        pa = {**self.pa, self.attribute: current}
        pa_star = {**self.pa, self.attribute: target}
        out = self.f(x, pa, pa_star)
        try:
            out = np.asarray(out, dtype=np.float32)
        except (TypeError, ValueError):
            raise ValidationTypeError(f"counterfactual must return a numeric image array, got {type(out).__name__}") from None
        if out.shape != x.shape:
            raise ValidationError(f"counterfactual must return images of the input's shape {x.shape}, got {out.shape}")
        bad = ~np.isfinite(out)
        if bad.any():
            raise ValidationError(f"counterfactual returned {int(bad.sum())} NaN or infinite pixel values; "
                                  "it must return finite images in [0, 1]")
        lo, hi = float(out.min()), float(out.max())
        if lo < -1e-6 or hi > 1 + 1e-6:
            raise ValidationError(f"counterfactual returned intensities in [{lo:.4g}, {hi:.4g}]; it must return images in [0, 1] "
                                  "(clip or rescale its output)")
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

    def __init__(self, f: Callable[[np.ndarray, dict, dict], Any]) -> None:
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


def _as_function(counterfactual: Any, image_key: str = "x") -> tuple[Callable[[np.ndarray, dict, dict], Any], str]:
    """A counterfactual function ``f(x, pa, pa_star)`` from a function or a CounterfactualModel."""
    if callable(counterfactual) and not isinstance(counterfactual, type):
        try:
            n_args = len(inspect.signature(counterfactual).parameters)
        except (TypeError, ValueError):
            n_args = 3
        if n_args >= 3 or hasattr(counterfactual, "parent_names"):
            return counterfactual, "function"
    if callable(getattr(counterfactual, "counterfactual", None)):
        model = counterfactual

        def f(x: np.ndarray, pa: dict, pa_star: dict) -> np.ndarray:
            changed = {k: v for k, v in pa_star.items() if not np.array_equal(np.asarray(v), np.asarray(pa[k]))}
            out = model.counterfactual({image_key: x, **pa}, changed or {k: pa_star[k] for k in list(pa_star)[:1]})
            if not isinstance(out, Mapping) or image_key not in out:
                raise ValidationTypeError(f"counterfactual: counterfactual(obs, do) must return a dict holding the image {image_key!r}")
            return out[image_key]

        return f, "CounterfactualModel"
    raise ValidationTypeError("counterfactual must be a function f(images, pa, pa_star) -> images, a CounterfactualModel "
                              f"(counterfactual(obs, do)) or 'train', got {describe(counterfactual)} ({type(counterfactual).__name__})")


def _train_generator(x: np.ndarray, a01: np.ndarray, aux: np.ndarray | None, options: Mapping[str, Any],
                     seed: int, device: str, progress: bool) -> tuple[Callable, str]:
    """The book's CLDM+D trained on the audited images (cached): conditioned on the attribute and the parents,
    on batches in which the two are independent, so do(attribute) holds the parents fixed."""
    from dataclasses import replace

    from .models.diffusion import LDMConfig, fit_latent_diffusion, independence_weights

    if x.shape[1] != 1 or x.shape[2] != x.shape[3]:
        raise ValidationError(f"counterfactual='train' trains a grey-image model: images must have shape (n, 1, S, S), got {x.shape}; "
                              "pass your own counterfactual function for other images")
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ValidationTypeError(f"train_options must be a dict with keys among config, fit, counterfactual, cache_dir; got {describe(options)}")
    unknown = sorted(set(options) - {"config", "fit", "counterfactual", "cache_dir"})
    if unknown:
        raise ValidationError(f"train_options: unknown key(s) {unknown}; allowed: cache_dir, config, counterfactual, fit")
    parts = {k: {**TRAIN_DEFAULTS[k], **dict(options.get(k) or {})} for k in TRAIN_DEFAULTS}
    try:
        cfg = LDMConfig(size=int(x.shape[2]), n_classes=2, **{k: tuple(v) if isinstance(v, list) else v for k, v in parts["config"].items()})
    except (TypeError, ValueError) as exc:
        raise ValidationError(f"train_options['config']: {' '.join(str(exc).split())}") from None
    cf_kw = dict(parts["counterfactual"])
    if aux is not None:
        cfg = replace(cfg, aux_classes=tuple(max(2, int(col.max()) + 1) for col in aux.T))
        weights = independence_weights(a01, aux)
    else:
        cf_kw.pop("aux_guidance", None)
        weights = None
    model = fit_latent_diffusion(x[:, 0], a01, aux=aux, sample_weight=weights, config=cfg, seed=seed, device=device,
                                 cache_dir=options.get("cache_dir"), progress=progress, **parts["fit"])

    def f(images: np.ndarray, pa: dict, pa_star: dict) -> np.ndarray:
        extra = {"aux": aux} if aux is not None else {}
        return model.counterfactual(images[:, 0], pa["_a01"], pa_star["_a01"], **extra, **cf_kw)[:, None]

    return f, f"CLDM+D trained here, cached at {Path(model.cache_path).name}"


# ----------------------------------------------------------------------------------------------------
# The attribute reader
# ----------------------------------------------------------------------------------------------------
def _read(reader: Callable[[np.ndarray], Any], x: np.ndarray, x0: Any, x1: Any) -> np.ndarray:
    """1 where the reader sees level x1, 0 where x0 (labels in the attribute's own coding, or P(x1) in [0, 1])."""
    v = np.asarray(_call_reader(reader, x))
    vals = set(pd.unique(v))
    if vals <= {x0, x1}:
        return (v == x1).astype(int)
    if np.issubdtype(v.dtype, np.number) and np.isfinite(v).all() and v.min() >= 0 and v.max() <= 1:
        return (v >= 0.5).astype(int)
    raise ValidationError(f"attribute_reader must return the attribute's levels ({x0!r} or {x1!r}) or P({x1!r}) in [0, 1], "
                          f"got values such as {sorted(map(str, vals))[:4]}")


def _call_reader(reader: Callable[[np.ndarray], Any], x: np.ndarray) -> np.ndarray:
    outs = []
    for i in range(0, len(x), _BATCH):
        part = x[i:i + _BATCH]
        v = np.asarray(reader(part))
        if v.ndim == 2 and v.shape[1] == 1:
            v = v[:, 0]
        if v.ndim != 1 or v.shape[0] != len(part):
            raise ValidationError(f"attribute_reader must return one value per image ({len(part)} for a batch of {len(part)}), "
                                  f"got shape {v.shape}")
        outs.append(v)
    return np.concatenate(outs)


def _train_reader(x: np.ndarray, a01: np.ndarray, seed: int, device: str, progress: bool) -> tuple[Callable, np.ndarray, str]:
    """A small CNN trained on half of the images (stratified), cached; returns it and the held-out mask."""
    from .models.cnn_zoo import SmallCNN
    from .runtime import fit_cached

    if x.shape[1] != 1 or x.shape[2] != x.shape[3] or x.shape[2] < 4:
        raise ValidationError(f"attribute_reader: the audit trains its own reader on grey square images (n, 1, S, S) only, got {x.shape}; "
                              "pass attribute_reader= (a function images -> attribute)")
    rng = np.random.default_rng(seed)
    held = np.zeros(len(x), dtype=bool)
    for lv in (0, 1):
        idx = np.flatnonzero(a01 == lv)
        held[rng.permutation(idx)[: len(idx) // 2]] = True
    train = ~held
    # at least _READER_STEPS optimiser steps whatever the number of images (a few hundred images give 4 batches an epoch)
    epochs = max(_READER_EPOCHS, math.ceil(_READER_STEPS / math.ceil(int(train.sum()) / 64)))
    key = {"images": x[train, 0], "labels": a01[train], "arch": "cnn-s", "epochs": epochs, "seed": seed}
    model = fit_cached(lambda: SmallCNN("cnn-s", x.shape[2], 1, seed=seed).fit(x[train, 0], a01[train], epochs=epochs,
                                                                                device=device, seed=seed, progress=progress),
                       load=lambda p: SmallCNN.load(p, device=device), key=key, code=[SmallCNN], name="audit-reader")
    return (lambda imgs: model.predict(imgs[:, 0])), held, f"SmallCNN cnn-s trained on {int(train.sum())} images, cached at {model.cache_path.name}"


# ----------------------------------------------------------------------------------------------------
# Rows
# ----------------------------------------------------------------------------------------------------
def _wilson(k: int, n: int, level: float) -> tuple[float, float]:
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    p = k / n
    den = 1 + z**2 / n
    mid = (p + z**2 / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z**2 / (4 * n**2)) / den
    return (0.0 if k == 0 else max(0.0, mid - half)), (1.0 if k == n else min(1.0, mid + half))  # exact ends, no rounding


def _row(estimate: float, lo: float, hi: float, p: float, verdict: str, method: str, reference: str) -> dict[str, Any]:
    return {"estimate": float(estimate), "ci_low": float(lo), "ci_high": float(hi), "pvalue": float(p), "verdict": verdict,
            "method": method, "reference": reference}


def _gate_rows(d_null: np.ndarray, d_back: np.ndarray, hits: np.ndarray, gate: Mapping[str, float],
               level: float) -> tuple[dict[str, dict[str, Any]], list[str]]:
    from .verdicts import binomial_interval, mean_interval

    rows, failed = {}, []
    for name, d, eq, what in (("composition", d_null, "eq. 1", "the null intervention f(x, pa, pa)"),
                              ("reversibility", d_back, "eq. 2", "the round trip f(f(x, pa, pa*), pa*, pa)")):
        iv = mean_interval(d, level=level, unit="images")
        ok = iv.high <= gate[name]
        text = f"{iv.estimate:.3g} [{iv.low:.3g}, {iv.high:.3g}] vs <= {gate[name]:g}"
        if not ok:
            failed.append(f"{name} ({text})")
        rows[f"generator {name}"] = _row(iv.estimate, iv.low, iv.high, math.nan,
                                         ("pass" if ok else "fail") + f": mean l1 {text}",
                                         f"mean l1 distance (0-255 scale) between each image and {what}, {iv.method}; passes when "
                                         f"the interval's upper end is <= {gate[name]:g}",
                                         f"axiomatic-soundness, {eq} ({name})")
    iv = binomial_interval(int(hits.sum()), int(hits.size), level=level, unit="images")
    ok = iv.low >= gate["effectiveness"]
    text = f"{iv.estimate:.3g} [{iv.low:.3g}, {iv.high:.3g}] vs >= {gate['effectiveness']:g}"
    if not ok:
        failed.append(f"effectiveness ({text})")
    rows["generator effectiveness"] = _row(iv.estimate, iv.low, iv.high, math.nan, ("pass" if ok else "fail") + f": {text}",
                                           "share of counterfactuals f(x, pa, pa*) the attribute reader reads as the intervened "
                                           f"level, {iv.method}; passes when the interval's lower end is >= {gate['effectiveness']:g}",
                                           "axiomatic-soundness, eq. 3 (effectiveness)")
    return rows, failed


def _flagged(name: str, row: pd.Series, alpha: float) -> bool:
    """Whether a row found what it looks for: a generator failing the gate, a decision that flips, a rejecting test."""
    verdict = str(row["verdict"])
    if verdict.startswith("not estimable"):
        return False
    if name.startswith("generator "):
        return verdict.startswith("fail")
    if name == "ECA":
        return bool(row["estimate"] < 1.0)
    if name in ("CF-CLOT", "CIT-LR", "DP", "EO"):
        return bool(row["pvalue"] <= alpha) if name == "CF-CLOT" else bool(row["pvalue"] < alpha)
    return False


def _decisions(s: np.ndarray, s_cf: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None, str]:
    both = s if s_cf is None else np.r_[s, s_cf]
    if set(np.unique(both)) <= {0.0, 1.0}:
        return s, s_cf, "decisions"
    if both.min() >= 0.0 and both.max() <= 1.0:  # a probability: compare the decisions it leads to
        return (s >= 0.5).astype(float), None if s_cf is None else (s_cf >= 0.5).astype(float), "decisions (score >= 0.5)"
    return s, s_cf, "scores"


def _parity_row(y_hat: np.ndarray, a01: np.ndarray, level: float, alpha: float, seed: int, label: str,
                reference: str, criterion: str) -> tuple[dict[str, Any], Any]:
    from .stats.invariance import demographic_parity_test
    from .verdicts import normal_interval

    res = demographic_parity_test(y_hat, a01, seed=seed)
    r0, r1 = y_hat[a01 == 0], y_hat[a01 == 1]
    diff = float(r1.mean() - r0.mean())
    se = math.sqrt(r1.var(ddof=1) / r1.size + r0.var(ddof=1) / r0.size) if min(r0.size, r1.size) > 1 else math.nan
    iv = normal_interval(diff, se, level=level, method="Welch standard error") if math.isfinite(se) else None
    verdict = "violated" if res.pvalue < alpha else "no evidence of a violation"
    row = _row(diff, iv.low if iv else math.nan, iv.high if iv else math.nan, res.pvalue, verdict,
               f"{criterion}: mean {label} at x1 minus at x0, {iv.method if iv else 'no interval'}; {res.method} p-value",
               reference)
    return row, res


# ----------------------------------------------------------------------------------------------------
# The audit
# ----------------------------------------------------------------------------------------------------
def audit_images(
    predict: Any,
    images: Any,
    attributes: pd.DataFrame,
    *,
    attribute: str,
    counterfactual: Any,
    outcome: str | None = None,
    parents: Sequence[str] = (),
    levels: Sequence[Any] | None = None,
    attribute_reader: Callable[[np.ndarray], Any] | None = None,
    z: Sequence[str] | None = None,
    gate: Mapping[str, float] | None = None,
    epsilon: float = 0.1,
    alpha: float = 0.05,
    seed: int = 0,
    train_options: Mapping[str, Any] | None = None,
    device: str = "auto",
    progress: bool = True,
) -> ImageAuditReport:
    """Audit an image classifier for counterfactual invariance to an attribute, after checking the generator.

    Parameters
    ----------
    predict : callable or torch.nn.Module
        The classifier: ``(n, C, H, W)`` float images in [0, 1] -> ``(n,)`` scores or 0/1 labels, called in
        batches of 256; or a torch module, evaluated batch-wise without gradients on the device its
        parameters live on, whose outputs are read as logits (sigmoid of one column, the last class's
        softmax of several).
    images : array-like, shape (n, C, H, W)
        The audited images, intensities in [0, 1].
    attributes : pandas.DataFrame
        One row per image: the ``attribute``, the ``outcome`` if given and the ``parents``.
    attribute : str
        The sensitive attribute's column: binary, or name the two levels to compare with ``levels``.
    counterfactual : callable, CounterfactualModel or "train"
        The generator: a counterfactual function ``f(images, pa, pa_star) -> images`` (``pa`` and
        ``pa_star`` map the attribute and the parents to one value per image; ``pa_star`` differs in the
        attribute only); an object with ``counterfactual(obs, do)`` over ``{"x": images, attribute,
        *parents}``; or ``"train"``: the book's CLDM+D fitted on these images (grey, square), conditioned on
        the attribute and the integer-coded parents, cached (:func:`cflib.runtime.fit_cached`), on CUDA
        when present (settings :data:`TRAIN_DEFAULTS`, overridden by ``train_options``).
    outcome : str, optional
        Column of the true 0/1 label: adds equal opportunity and the accuracy per group.
    parents : sequence of str
        Columns the generator is conditioned on and must hold fixed under ``do(attribute)``.
    levels : (x0, x1), optional
        The two levels to compare when the attribute has more; images at other levels are left out.
    attribute_reader : callable, optional
        ``images -> attribute`` (the levels, or the probability of ``x1``) used to score effectiveness.
        ``None``: a small CNN is trained on half of the images and its accuracy on the other half is reported.
    z : sequence of str, optional
        Columns of non-sensitive content for CIT-LR. ``None``: the parents and the first principal
        components of the generator's images with the attribute held at ``x0`` (the content of each image
        with the attribute standardised).
    gate : dict, optional
        Thresholds overriding :data:`GATE_DEFAULTS` (``composition``, ``reversibility`` in [0, 255],
        ``effectiveness`` in [0, 1]).
    epsilon : float
        Tolerated N-TE of CF-CLOT, in [0, 1).
    alpha : float
        Level of every test; intervals are at ``1 - alpha``.
    seed : int
        Seed of every random draw (reader split and training, folds, median heuristic).
    train_options : dict, optional
        With ``counterfactual="train"``: ``config``, ``fit``, ``counterfactual`` overrides and ``cache_dir``.
    device : str
        Device of the models the audit trains (``"auto"``: CUDA when present).
    progress : bool
        Show a progress bar over the steps.

    Returns
    -------
    ImageAuditReport
        Rows ``generator composition``, ``generator reversibility``, ``generator effectiveness``,
        ``attribute reader``, ``ECA``, ``CF-CLOT``, ``CIT-LR``, ``DP``, ``EO`` and ``accuracy (<level>)``.

    Raises
    ------
    TypeError, ValueError
        One line naming the argument and the fix: images of the wrong shape or outside [0, 1], a
        non-binary or constant attribute, a missing column, a classifier, generator or reader returning the
        wrong shape or NaN, ...

    Examples
    --------
    >>> report = audit_images(clf, x, frame, attribute="group", counterfactual=f)  # doctest: +SKIP
    >>> report.summary()  # doctest: +SKIP
    """
    from tqdm import tqdm

    from .results import check_alpha
    from .runtime import get_device
    from .stats.closeness import cfclot_test
    from .stats.invariance import cit_lr_test

    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    alpha = check_alpha(alpha)
    epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0, high_open=True)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValidationTypeError(f"seed must be a whole number >= 0, got {describe(seed)}")
    seed = check_count(seed, "seed", minimum=0)
    gate = _check_gate(gate)
    dev = get_device(device)
    x = _check_images(images)
    frame, x0, x1, parents, keep = _check_frame(attributes, len(x), attribute, outcome, parents, levels)
    f_predict = _predictor(predict)
    if attribute_reader is not None and not callable(attribute_reader):
        raise ValidationTypeError(f"attribute_reader must be a callable images -> attribute, or None, got {describe(attribute_reader)}")
    if isinstance(counterfactual, str) and counterfactual != "train":
        raise ValidationError(f"counterfactual must be a function, a CounterfactualModel or 'train', got the string {counterfactual!r}")
    if counterfactual is None:
        raise ValidationTypeError("counterfactual is required: a function f(images, pa, pa_star), a CounterfactualModel or 'train'")
    if z is not None:
        z = [z] if isinstance(z, str) else list(z)
        missing = [c for c in z if c not in frame.columns]
        if missing:
            raise ValidationError(f"z: column(s) {missing} are not in attributes; its columns are {list(map(str, frame.columns))[:20]}")
        if any(not pd.api.types.is_numeric_dtype(frame[c]) for c in z) or frame[z].isna().any().any():
            raise ValidationError(f"z: columns {z} must be numeric without missing values")
    if not keep.all():
        x, frame = x[keep], frame[keep].reset_index(drop=True)
    n = len(x)
    a = frame[attribute].to_numpy()
    a01 = (a == x1).astype(np.int64)
    pa = {p: frame[p].to_numpy() for p in parents}
    if counterfactual == "train":
        aux = None
        if parents:
            aux_frame = frame[parents]
            if not all(pd.api.types.is_integer_dtype(aux_frame[c]) or pd.api.types.is_bool_dtype(aux_frame[c]) for c in parents) \
                    or (aux_frame.to_numpy(dtype=float) < 0).any():
                raise ValidationError(f"parents: counterfactual='train' conditions on integer-coded parents (0, 1, ...), got dtypes "
                                      f"{[str(aux_frame[c].dtype) for c in parents]}; code them as integers first")
            aux = aux_frame.to_numpy(dtype=np.int64)
        f_cf, generator_kind = _train_generator(x, a01, aux, train_options, seed, str(dev), progress)
        gen = _Generator(f_cf, {**pa}, "_a01", "CLDM+D")
        current, target = a01, 1 - a01
        generator_hash = generator_kind
    else:
        if train_options is not None:
            raise ValidationError("train_options applies to counterfactual='train' only; remove it or pass counterfactual='train'")
        f_cf, generator_kind = _as_function(counterfactual)
        gen = _Generator(f_cf, pa, attribute, generator_kind)
        current, target = a, np.where(a01 == 1, x0, x1)
        generator_hash = _hash_of(counterfactual)

    steps = ["classifier", "generator", "reader", "checks"]
    bar = tqdm(total=len(steps), desc="image audit", disable=not progress)
    rows: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    level = 1 - alpha
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CflibWarning)
        y_hat = _batched(f_predict, x, "predict")
        bar.update(1)

        x_cf = gen(x, target, current)
        x_null = gen(x, current, current)
        x_back = gen(x_cf, current, target)
        bar.update(1)
        from .metrics.axioms import l1_distance

        d_null, d_back = l1_distance(x, x_null), l1_distance(x, x_back)

        if attribute_reader is None:
            reader, held, reader_kind = _train_reader(x, a01, seed, str(dev), progress)
        else:
            reader, held, reader_kind = attribute_reader, np.ones(n, dtype=bool), "given"
        read_factual = _read(reader, x[held], x0, x1)
        read_cf = _read(reader, x_cf, x0, x1)
        hits = read_cf == (1 - a01)
        bar.update(1)

        from .verdicts import binomial_interval

        acc = binomial_interval(int((read_factual == a01[held]).sum()), int(held.sum()), level=level, unit="images")
        where = "held-out half of the images" if attribute_reader is None else "the factual images"
        rows_gate, failed = _gate_rows(d_null, d_back, hits, gate, level)
        rows.update(rows_gate)
        rows["attribute reader"] = _row(acc.estimate, acc.low, acc.high, math.nan,
                                        f"reads the attribute correctly on {acc.estimate:.1%} of {where}",
                                        f"accuracy of the attribute reader ({reader_kind}) on {where}, {acc.method}",
                                        "axiomatic-soundness, effectiveness readers (pseudo-oracles)")

        cf_names = ("ECA", "CF-CLOT", "CIT-LR")
        if failed:
            reason = "not estimable: the counterfactual generator fails " + " and ".join(failed)
            if any(f.startswith("effectiveness") for f in failed) and acc.low < gate["effectiveness"]:
                reason += (f"; the attribute reader itself reads only {acc.estimate:.1%} of {where} correctly, "
                           "so a better reader may pass it")
            for name, ref in zip(cf_names, ("invariance-test, eqs. 7-8", "closeness-test, Eq. 7", "invariance-test, Alg. 1"), strict=True):
                rows[name] = _row(math.nan, math.nan, math.nan, math.nan, reason,
                                  "not computed: a generator that fails the gate cannot vouch for any classifier", ref)
            y_cf = None
        else:
            y_cf = _batched(f_predict, x_cf, "predict (on the counterfactual images)")
            dec, dec_cf, what = _decisions(y_hat, y_cf)
            same = np.abs(dec - dec_cf) <= (0.0 if what != "scores" else 1e-9)
            k = int(same.sum())
            lo, hi = _wilson(k, n, level)
            eca = k / n
            rows["ECA"] = _row(eca, lo, hi, math.nan,
                               "invariant on every image" if k == n else f"{1 - eca:.1%} of {what} change under do({attribute}) "
                               + ("(interval excludes 1)" if hi < 1 else ""),
                               f"share of {what} unchanged by do({attribute} = other level), Wilson {level:.0%} interval, {n} images",
                               "invariance-test, eqs. 7-8")
            clot = cfclot_test(y_hat, y_cf, epsilon, alpha=alpha, seed=seed)
            details["CF-CLOT"] = clot
            rows["CF-CLOT"] = _row(clot.statistic, math.nan, math.nan, clot.pvalue,
                                   f"not {epsilon}-close (N-TE > {epsilon})" if clot.pvalue <= alpha
                                   else f"no evidence against {epsilon}-closeness",
                                   f"CF-CLOT, N-TE <= {epsilon}, {clot.method}", "closeness-test, Eq. 7")
            if z is not None:
                zz, z_text = frame[z].to_numpy(dtype=float), f"given columns {z}"
            else:
                zz, z_text = _content_embedding(x_null, x_cf, a01, frame, parents, f_predict)
            cit = cit_lr_test(y_hat, a01, zz, seed=seed)
            details["CIT-LR"] = cit
            rows["CIT-LR"] = _row(cit.statistic, math.nan, math.nan, cit.pvalue,
                                  "not counterfactually invariant" if cit.pvalue < alpha else "no evidence against invariance",
                                  f"CIT-LR ({cit.method}), z = {z_text}", "invariance-test, Alg. 1")
            order = np.argsort(-np.abs(y_cf - y_hat), kind="stable")[: min(3, n)]
            details["figure"] = {"factual": x[order], "counterfactual": x_cf[order], "score": y_hat[order], "score_cf": y_cf[order]}

        rows["DP"], details["DP"] = _parity_row(y_hat, a01, level, alpha, seed, "prediction", "invariance-test, eq. 5",
                                                "demographic parity")
        if outcome is not None:
            y = frame[outcome].to_numpy().astype(int)
            if (y == 1).sum() >= 4 and min(((y == 1) & (a01 == v)).sum() for v in (0, 1)) >= 2:
                # equal opportunity is demographic parity among the units with y = 1 (eq. 6)
                rows["EO"], details["EO"] = _parity_row(y_hat[y == 1], a01[y == 1], level, alpha, seed, "prediction among y = 1",
                                                        "invariance-test, eq. 6", "equal opportunity")
            else:
                rows["EO"] = _row(math.nan, math.nan, math.nan, math.nan,
                                  "not estimable: fewer than 2 images with y = 1 in a group",
                                  "equal opportunity: mean prediction among y = 1 at x1 minus at x0", "invariance-test, eq. 6")
            dec, _, what = _decisions(y_hat)
            for lv, code in ((x0, 0), (x1, 1)):
                sel = a01 == code
                ref = "invariance-test, Tables 2-3 (per-group performance)"
                if what == "scores":  # neither labels nor probabilities: there is no decision to score
                    rows[f"accuracy ({lv})"] = _row(math.nan, math.nan, math.nan, math.nan,
                                                    "not estimable: the predictions are scores outside [0, 1], not decisions",
                                                    f"share of correct decisions among the images with {attribute} = {lv}", ref)
                    continue
                iv = binomial_interval(int((dec[sel] == y[sel]).sum()), int(sel.sum()), level=level, unit="images")
                rows[f"accuracy ({lv})"] = _row(iv.estimate, iv.low, iv.high, math.nan, f"{iv.estimate:.1%} of {what} correct",
                                                f"share of correct {what} among the images with {attribute} = {lv}, {iv.method}",
                                                ref)
        if "figure" not in details:
            order = np.arange(min(3, n))
            details["figure"] = {"factual": x[order], "counterfactual": x_cf[order], "score": y_hat[order],
                                 "score_cf": np.full(order.size, np.nan)}
        bar.update(1)
    bar.close()
    notes = tuple(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, CflibWarning)))
    for w in caught:  # recorded in the report, and passed on to the caller
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)

    table = pd.DataFrame.from_dict(rows, orient="index")[["estimate", "ci_low", "ci_high", "pvalue", "verdict", "method", "reference"]]
    table.index.name = "check"
    table["flagged"] = [_flagged(name, row, alpha) for name, row in table.iterrows()]
    data_hash = hashlib.sha256(np.ascontiguousarray(x).tobytes())
    data_hash.update(frame.to_csv(index=False).encode())
    provenance = {
        "data_sha256": "sha256:" + data_hash.hexdigest(),
        "n_rows": int(n),
        "group_counts": {str(x0): int((a01 == 0).sum()), str(x1): int((a01 == 1).sum())},
        "roles": {"x": attribute, "z": list(parents), "w": [], "y": outcome, "x0": _plain(x0), "x1": _plain(x1),
                  "cit_z": z, "business_necessity": [], "parents": list(parents)},
        "model": _hash_of(predict),
        "counterfactual": generator_hash,
        "cflib_version": _cflib_version(),
        "seed": int(seed),
        "n_boot": 0,
        "device": str(dev),
        "environment": _environment(),
        "kind": "images",
        "image_shape": [int(s) for s in x.shape[1:]],
        "gate": dict(gate),
        "attribute_reader": reader_kind if attribute_reader is None else _hash_of(attribute_reader),
    }
    timing = {"started_utc": started, "wall_seconds": round(time.perf_counter() - t0, 2)}
    return ImageAuditReport(table, alpha, provenance, timing, details, notes)


def _content_embedding(x_null: np.ndarray, x_cf: np.ndarray, a01: np.ndarray, frame: pd.DataFrame,
                       parents: Sequence[str], f_predict: Callable[[np.ndarray], Any]) -> tuple[np.ndarray, str]:
    """Each image's content with the attribute standardised, as CIT-LR's ``z``.

    The standardised image is the generator's image of the unit at level x0 (the null intervention for units
    at x0, the counterfactual for units at x1, so both went through the generator); a function of the
    non-sensitive content alone when the generator is sound. ``z`` holds the classifier's score on it (under
    invariance the score itself, so E[y_hat | A, z] = E[y_hat | z] holds exactly), its first principal
    components and the parents' columns.
    """
    std = np.where((a01 == 0)[:, None, None, None], x_null, x_cf)
    score = _batched(f_predict, std, "predict (on the standardised images)")
    flat = std.reshape(len(a01), -1).astype(np.float64)
    flat = flat - flat.mean(0)
    k = int(min(_N_COMPONENTS, max(1, len(a01) // 20), flat.shape[1]))
    u, s, _ = np.linalg.svd(flat, full_matrices=False)
    cols = [frame[p].to_numpy(dtype=float)[:, None] for p in parents if pd.api.types.is_numeric_dtype(frame[p])]
    z = np.hstack([score[:, None], u[:, :k] * s[:k], *cols])
    return z, (f"the classifier's score on and {k} principal components of each image generated at x0"
               + (f", and parents {list(parents)}" if cols else ""))


# ----------------------------------------------------------------------------------------------------
# Files and the config
# ----------------------------------------------------------------------------------------------------
def load_images(path: str | os.PathLike, attributes_csv: str | os.PathLike | None = None) -> tuple[np.ndarray, pd.DataFrame]:
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
        raise FileNotFoundError(f"images: the attributes CSV {csv} does not exist (a folder of PNGs needs one, with a 'file' column)")
    frame = pd.read_csv(csv)
    if "file" not in frame.columns:
        raise ValidationError(f"images: {csv.name} needs a 'file' column naming each PNG, got columns {list(frame.columns)[:10]}")
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


def _load_classifier(spec: str, base: Path) -> Any:
    """``module:function`` or a TorchScript file."""
    from .audit import _load_object

    if spec.endswith((".pt", ".pth", ".torchscript")):
        import torch

        p = (base / spec).resolve()
        if not p.is_file():
            raise FileNotFoundError(f"classifier: TorchScript file {p} does not exist")
        try:
            return torch.jit.load(str(p), map_location="cpu")
        except RuntimeError as exc:
            raise ValidationError(f"classifier: {p.name} is not a TorchScript file ({str(exc).splitlines()[0]}); "
                                  "save the model with torch.jit.script(model).save(path)") from None
    return _load_object(spec, base, "classifier")


def audit_images_from_config(config: str | os.PathLike, out: str | os.PathLike, *, progress: bool = True,
                             fail_on: str | Sequence[str] | None = None) -> ImageAuditReport:
    """Run :func:`audit_images` from a YAML file and write ``report.json`` and ``report.html`` into ``out``.

    The file holds ``images`` (an ``.npz``, or a folder of PNGs with ``attributes`` naming its CSV, both
    relative to the file), ``attribute``, ``classifier`` (``module:function`` or a TorchScript file) and
    ``counterfactual`` (``module:function`` or ``train``), and optionally ``levels``, ``outcome``,
    ``parents``, ``attribute_reader`` (``module:function``), ``z``, ``gate``, ``epsilon``, ``alpha``,
    ``seed`` and ``train_options`` (its ``cache_dir`` relative to the file).

    Parameters
    ----------
    config : path-like
        The YAML file.
    out : path-like
        Output folder; written only when the audit succeeded (each file atomically).
    progress : bool
        Show a progress bar.
    fail_on : str or sequence of str, optional
        Check names ``cflib audit --fail-on`` gates on; checked against the report before anything is written.

    Returns
    -------
    ImageAuditReport

    Raises
    ------
    FileNotFoundError, TypeError, ValueError
        One line naming the key at fault.
    """
    import yaml

    from .audit import _load_object

    config = Path(config)
    if not config.is_file():
        raise FileNotFoundError(f"config file {config} does not exist")
    try:
        cfg = yaml.safe_load(config.read_text())
    except yaml.YAMLError as exc:
        raise ValidationError(f"{config}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(cfg, dict):
        raise ValidationError(f"{config}: expected a mapping with keys images, attribute, classifier, counterfactual")
    unknown = sorted(set(cfg) - _IMAGE_KEYS)
    if unknown:
        raise ValidationError(f"{config}: unknown key(s) {', '.join(unknown)}; allowed for an image audit: {', '.join(sorted(_IMAGE_KEYS))}")
    for key in ("images", "attribute", "classifier", "counterfactual"):
        if key not in cfg:
            raise ValidationError(f"{config}: missing key {key!r} (an image audit needs images, attribute, classifier, counterfactual)")
    base = config.parent.resolve()
    x, frame = load_images(base / str(cfg["images"]), (base / str(cfg["attributes"])) if cfg.get("attributes") else None)
    classifier = _load_classifier(str(cfg["classifier"]), base)
    cf = "train" if cfg["counterfactual"] == "train" else _load_object(str(cfg["counterfactual"]), base, "counterfactual")
    reader = _load_object(str(cfg["attribute_reader"]), base, "attribute_reader") if cfg.get("attribute_reader") else None
    train_options = cfg.get("train_options")
    if isinstance(train_options, dict) and train_options.get("cache_dir") is not None:  # relative to the config file
        train_options = {**train_options, "cache_dir": str(base / str(train_options["cache_dir"]))}
    report = audit_images(classifier, x, frame, attribute=cfg["attribute"], counterfactual=cf, outcome=cfg.get("outcome"),
                          parents=cfg.get("parents") or (), levels=cfg.get("levels"), attribute_reader=reader, z=cfg.get("z"),
                          gate=cfg.get("gate"), epsilon=cfg.get("epsilon", 0.1), alpha=cfg.get("alpha", 0.05),
                          seed=cfg.get("seed", 0), train_options=train_options, progress=progress)
    if fail_on is not None and callable(getattr(report, "gate", None)):
        report.gate(fail_on)  # a name that selects no check: one line, nothing written
    out = Path(out)
    report.to_json(out / "report.json")
    report.to_html(out / "report.html")
    if callable(getattr(report, "to_markdown", None)):  # the model card, where the report type has one
        report.to_markdown(out / "model_card.md")
    return report
