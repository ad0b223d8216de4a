"""Composition and effectiveness of deep-SCM counterfactuals, and paired comparisons of models.

Melistas et al. (*Benchmarking counterfactual image generation*, Sec. 3.3 (a)-(b), Eqs. 7-8):

* **Composition** ``d(x, f_null^m(x))``: the null intervention applied ``m`` times (image *and*
  re-predicted parents fed back in) should return the factual image. Three distances:
  ``l1`` in pixels (0-255 scale), ``l1`` between predictor embeddings, and an in-domain
  perceptual distance (LPIPS needs ImageNet VGG weights, unavailable here; this is an
  unweighted LPIPS on the feature maps of our own predictor: channel-normalised, squared
  difference, spatial mean, summed over layers).
* **Effectiveness** ``d(pa_k*, g_k(x*))``: anti-causal predictors trained on real data recover
  the intervened value from the counterfactual image: MAE for continuous parents (original units),
  accuracy for the digit, F1 for binary attributes. Interventions follow the official code: for
  each unit a value drawn uniformly among the observed values that differ from the factual one
  (another bin of 10 for continuous parents, another class for categorical ones).

Composition and effectiveness are computed by :mod:`cflib.metrics.measures` (the one implementation
of the axiom metrics); this module adds the benchmark's distances and its defaults.

Per-image values are kept so that models can be compared on the **same** test images with paired
tests (Wilcoxon signed-rank, paired bootstrap of the mean difference, exact McNemar), which the
paper does not do: its ``±`` are spreads over images or batches of one training run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from ..results import BaseTestResult, Interval
from ..runtime import as_generator
from ..scm.adapters import function_name
from ..scm.protocol import CounterfactualModel
from ..validation import (
    ValidationError,
    check_array,
    check_callable,
    check_choice,
    check_count,
    check_finite,
    check_names,
    check_positive,
    check_probability,
    check_same_length,
)
from .image_distance import check_value_range, image_batch, l1_distance
from .measures import (
    CompositionResult,
    EffectivenessResult,
    measure_composition,
    measure_effectiveness,
)
from .readers import AttributePredictor as AttributePredictor
from .readers import check_readers
from .readers import score as score
from .samplers import InterventionSampler as InterventionSampler
from .samplers import Sampler, check_sampler

# AttributePredictor, CompositionResult, EffectivenessResult, InterventionSampler and score live in
# cflib.metrics.readers, .measures and .samplers (all re-exported by cflib.metrics.axioms); they stay
# importable from here for existing code but are not listed twice.
__all__ = [
    "l1_pixel",
    "embedding_l1",
    "perceptual_distance",
    "scm_composition",
    "scm_effectiveness",
    "PairedComparison",
    "paired_comparison",
    "memoize_features",
]

Distance = Callable[[np.ndarray, np.ndarray], np.ndarray]


# ----------------------------------------------------------------------------------------------
# distances
# ----------------------------------------------------------------------------------------------
def _pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = check_finite(image_batch(a, "a"), "a"), check_finite(image_batch(b, "b"), "b")
    if a.shape != b.shape:
        raise ValidationError(f"images a and b must have the same shape, got {a.shape} and {b.shape}")
    return a, b


def _rows(out: Any, n: int, what: str) -> np.ndarray:
    """A feature function's output as floats, refused (``what`` names the function) unless it has ``n`` finite rows."""
    out = np.asarray(out, float)
    if out.ndim == 0 or len(out) != n:
        raise ValidationError(f"{what} returned shape {out.shape}, expected one row per image ({n}, ...)")
    if not np.isfinite(out).all():
        raise ValidationError(f"{what} returned {int((~np.isfinite(out)).sum())} NaN or infinite value(s)")
    return out


def l1_pixel(scale: float = 255.0, value_range: tuple[float, float] | None = (0.0, 1.0)) -> Distance:
    """Mean absolute pixel difference per image, on a 0-``scale`` grey-level scale (:func:`~cflib.metrics.image_distance.l1_distance`).

    Like :func:`~cflib.metrics.image_distance.l1_distance`, the distance checks the images against a
    declared value range instead of clipping them.

    Parameters
    ----------
    scale : float
        Multiplier from the images' range to grey levels (255 for images in [0, 1]).
    value_range : (float, float) or None
        The declared range of the intensities: a value outside it is an error when the distance is
        called. ``None`` declares no range (e.g. images on the 0-255 scale with ``scale=1``, or pass
        ``value_range=(0, 255)``).

    Returns
    -------
    callable
        ``d(a, b) -> (n,)``.

    Raises
    ------
    TypeError, ValueError
        A ``scale`` that is not a positive number, or a malformed ``value_range`` (at once); images
        outside ``value_range`` (when the distance is called).
    """
    scale = check_positive(scale, "scale")
    check_value_range(value_range)

    def d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return l1_distance(a, b, scale, value_range=value_range)

    d.__name__ = "l1_pixel"
    return d


def embedding_l1(embed: Callable[[np.ndarray], np.ndarray]) -> Distance:
    """Mean absolute difference between embeddings (the paper's concatenated predictor features).

    Parameters
    ----------
    embed : callable
        ``images -> (n, p)``.

    Returns
    -------
    callable
        ``d(a, b) -> (n,)``.
    """
    check_callable(embed, "embed")

    def d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _pair(a, b)
        what = f"the embedding {function_name(embed)}"
        return np.abs(_rows(embed(a), len(a), what) - _rows(embed(b), len(b), what)).reshape(len(a), -1).mean(1)

    d.__name__ = "l1_embedding"
    return d


def perceptual_distance(feature_maps: Callable[[np.ndarray], Sequence[np.ndarray]]) -> Distance:
    """In-domain, unweighted LPIPS: distance between channel-normalised feature maps.

    For each layer ``l`` with maps ``F_l`` of shape ``(n, C, H, W)``:
    ``mean_{h,w} || F_l(a)/|F_l(a)| - F_l(b)/|F_l(b)| ||^2`` (unit norm over channels at each
    location), summed over layers: the LPIPS recipe without the learned per-channel weights.

    Parameters
    ----------
    feature_maps : callable
        ``images -> list of (n, C, H, W)`` arrays (e.g. a predictor's intermediate activations).

    Returns
    -------
    callable
        ``d(a, b) -> (n,)``.
    """
    check_callable(feature_maps, "feature_maps")

    def d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _pair(a, b)
        total = np.zeros(len(a))
        maps_a, maps_b = list(feature_maps(a)), list(feature_maps(b))
        if not maps_a or len(maps_a) != len(maps_b):
            raise ValidationError(
                f"feature_maps ({function_name(feature_maps)}) returned {len(maps_a)} and {len(maps_b)} layers for a and b: "
                "it must return the same non-empty list of layers for every batch"
            )
        for fa, fb in zip(maps_a, maps_b, strict=True):
            what = f"a layer of feature_maps ({function_name(feature_maps)})"
            fa, fb = _rows(fa, len(a), what), _rows(fb, len(b), what)
            if fa.shape != fb.shape or fa.ndim < 2:
                raise ValidationError(
                    f"feature_maps ({function_name(feature_maps)}) returned layers of shapes {fa.shape} and {fb.shape}, "
                    "expected equal shapes (n, C, ...)"
                )
            fa = fa / (np.sqrt((fa**2).sum(1, keepdims=True)) + 1e-10)
            fb = fb / (np.sqrt((fb**2).sum(1, keepdims=True)) + 1e-10)
            total += ((fa - fb) ** 2).sum(1).reshape(len(a), -1).mean(1)
        return total

    d.__name__ = "perceptual"
    return d


def memoize_features(fn: Callable[[np.ndarray], Any], maxsize: int = 4) -> Callable[[np.ndarray], Any]:
    """Cache a feature extractor on the bytes of its input (the last ``maxsize`` inputs).

    Composition compares the factual images with each cycle's output under several distances that
    share one network pass; the cache keeps the factual features and shares each pass.

    Parameters
    ----------
    fn : callable
        ``images -> features``.
    maxsize : int
        Inputs remembered.

    Returns
    -------
    callable
        Same signature as ``fn``.
    """
    import hashlib
    from collections import OrderedDict

    check_callable(fn, "fn")
    maxsize = check_count(maxsize, "maxsize")
    cache: OrderedDict[bytes, Any] = OrderedDict()

    def wrapped(images: np.ndarray) -> Any:
        a = np.ascontiguousarray(images)
        key = hashlib.blake2b(a.tobytes(), digest_size=16).digest() + str(a.shape).encode() + a.dtype.str.encode()
        if key in cache:
            cache.move_to_end(key)
            return cache[key]
        out = fn(a)
        cache[key] = out
        if len(cache) > maxsize:
            cache.popitem(last=False)
        return out

    return wrapped


# ----------------------------------------------------------------------------------------------
# composition
# ----------------------------------------------------------------------------------------------
def scm_composition(
    scm: CounterfactualModel,
    obs: Mapping[str, np.ndarray],
    *,
    image: str = "x",
    cycles: int = 10,
    distances: Mapping[str, Distance] | None = None,
    keep_images: int = 4,
) -> CompositionResult:
    """Composition over ``1..cycles`` null interventions (Eq. 7), per image: :func:`cflib.metrics.axioms.measure_composition`.

    Parameters
    ----------
    scm : CounterfactualModel
        E.g. a :class:`cflib.scm.deep.DeepSCM`.
    obs : mapping
        Factual values of every node.
    image : str
        Name of the image node.
    cycles : int
        Largest ``m``.
    distances : mapping, optional
        Name -> ``d(a, b) -> (n,)``; default pixel ``l1`` on a 0-255 scale (:func:`l1_pixel`).
    keep_images : int
        Units whose images are kept through the cycles (for figures).

    Returns
    -------
    CompositionResult
    """
    return measure_composition(
        scm,
        obs,
        cycles=cycles,
        distances=distances if distances is not None else {"l1_pixel": l1_pixel()},
        image=image,
        keep_images=keep_images,
    )


def scm_effectiveness(
    scm: CounterfactualModel,
    obs: Mapping[str, np.ndarray],
    predictors: Mapping[str, Any],
    sampler: Sampler,
    *,
    interventions: Sequence[str] | None = None,
    image: str = "x",
    seed: int | np.random.Generator | None = 0,
    do_values: Mapping[str, np.ndarray] | None = None,
) -> EffectivenessResult:
    """Effectiveness (Eq. 8): each predictor on each intervention's counterfactual images.

    :func:`cflib.metrics.axioms.measure_effectiveness` with the benchmark's sampler.

    Parameters
    ----------
    scm : CounterfactualModel
        E.g. a :class:`cflib.scm.deep.DeepSCM`.
    obs : mapping
        Factual values.
    predictors : mapping
        Attribute name -> :class:`~cflib.metrics.axioms.AttributePredictor`. A predictor with ``context``
        gets the *counterfactual* values of those variables (the paper's ``q(t | x, i*)``).
    sampler : InterventionSampler
        Draws the intervened values.
    interventions : sequence of str, optional
        Parents to intervene on (default: every predictor's attribute).
    image : str
        Name of the image node.
    seed : int or numpy.random.Generator
        Randomness of the intervened values.
    do_values : mapping, optional
        Fixed intervened values per parent (overrides the sampler; used to compare models on the
        same interventions).

    Returns
    -------
    EffectivenessResult
    """
    check_readers(predictors, "predictors")
    check_sampler(sampler)
    names = check_names(interventions, "interventions") if interventions is not None else []
    return measure_effectiveness(
        scm,
        obs,
        predictors,
        do=do_values,
        sampler=sampler,
        interventions=list(names or predictors),
        seed=seed,
        image=image,
    )


# ----------------------------------------------------------------------------------------------
# paired comparisons
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairedComparison(BaseTestResult):
    """Paired comparison of two models on the same units.

    Attributes
    ----------
    statistic : float
        Wilcoxon's W, McNemar's discordant count ``b``, or the mean difference (bootstrap).
    pvalue : float
        Two-sided p-value (bootstrap: share of replicates on the other side of 0, doubled).
    mean_diff : float
        Mean of ``a - b``.
    ci : cflib.results.Interval
        Paired-bootstrap interval of the mean difference.
    n : int
        Number of pairs.
    test : str
        Test used.
    """

    statistic: float
    pvalue: float
    mean_diff: float
    ci: Interval
    n: int
    test: str
    diffs: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))

    def summary(self) -> pd.DataFrame:
        """One row with the test, statistic, p-value, mean difference and interval."""
        return pd.DataFrame(
            [
                {
                    "test": self.test,
                    "n": self.n,
                    "statistic": self.statistic,
                    "pvalue": self.pvalue,
                    "mean diff (a - b)": self.mean_diff,
                    "ci_low": self.ci[0],
                    "ci_high": self.ci[1],
                }
            ]
        )

    def plot(self, ax: Any = None) -> Any:
        """Histogram of the per-unit differences with the mean and its interval."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        ax.hist(self.diffs, bins=30, alpha=0.7)
        ax.axvline(0, color="0.5", lw=1)
        ax.axvline(self.mean_diff, color="C1", lw=1.5)
        ax.axvspan(*self.ci, color="C1", alpha=0.2)
        ax.set_xlabel("a - b per unit")
        return ax


def paired_comparison(
    a: np.ndarray,
    b: np.ndarray,
    *,
    test: str = "wilcoxon",
    n_boot: int = 2000,
    ci: float = 0.95,
    seed: int | np.random.Generator | None = 0,
) -> PairedComparison:
    """Compare two models' per-unit scores on the same units.

    Parameters
    ----------
    a, b : numpy.ndarray
        Per-unit values (errors, distances, or 0/1 correctness for McNemar).
    test : {"wilcoxon", "bootstrap", "mcnemar"}
        Wilcoxon signed-rank, paired bootstrap of the mean difference, or exact McNemar on 0/1
        outcomes.
    n_boot : int
        Bootstrap replicates (also used for the interval with the other tests).
    ci : float
        Interval coverage.
    seed : int or numpy.random.Generator
        Randomness of the bootstrap.

    Returns
    -------
    PairedComparison
    """
    check_choice(test, "test", ("wilcoxon", "bootstrap", "mcnemar"))
    a, b = np.asarray(check_array(a, "a"), float), np.asarray(check_array(b, "b"), float)
    check_same_length(a=a, b=b)
    if len(a) < 2:
        raise ValidationError(f"a and b need at least 2 pairs, got {len(a)}")
    n_boot = check_count(n_boot, "n_boot")
    ci = check_probability(ci, "ci")
    rng = as_generator(seed)
    diff = a - b
    idx = rng.integers(0, len(diff), (n_boot, len(diff)))
    boot = diff[idx].mean(1)  # one matrix gather, no loop over replicates
    lo, hi = np.quantile(boot, [(1 - ci) / 2, (1 + ci) / 2])
    if test == "wilcoxon":
        if np.all(diff == 0):
            stat, p = 0.0, 1.0
        else:
            r = stats.wilcoxon(a, b, zero_method="wilcox")
            stat, p = float(r.statistic), float(r.pvalue)
    elif test == "bootstrap":
        stat = float(diff.mean())
        p = float(min(1.0, 2 * min((boot <= 0).mean(), (boot >= 0).mean())))
    elif test == "mcnemar":
        if not np.isin(a, (0, 1)).all() or not np.isin(b, (0, 1)).all():
            raise ValidationError("McNemar needs 0/1 outcomes (e.g. correct / wrong per unit)")
        n01 = int(((a == 1) & (b == 0)).sum())
        n10 = int(((a == 0) & (b == 1)).sum())
        stat = float(n01)
        p = float(stats.binomtest(n01, n01 + n10, 0.5).pvalue) if n01 + n10 else 1.0
    return PairedComparison(
        statistic=stat,
        pvalue=p,
        mean_diff=float(diff.mean()),
        ci=Interval.of(
            (float(lo), float(hi)),
            estimate=float(diff.mean()),
            method=f"{100 * ci:g}% paired bootstrap, {len(diff)} pairs",
        ),
        n=len(diff),
        test=test,
        diffs=diff,
    )
