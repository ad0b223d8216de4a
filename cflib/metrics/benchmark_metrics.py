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

Per-image values are kept so that models can be compared on the **same** test images with paired
tests (Wilcoxon signed-rank, paired bootstrap of the mean difference, exact McNemar), which the
paper does not do: its ``±`` are spreads over images or batches of one training run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd
from scipy import stats

from ..runtime import as_generator

__all__ = [
    "AttributePredictor",
    "l1_pixel",
    "embedding_l1",
    "perceptual_distance",
    "CompositionResult",
    "scm_composition",
    "InterventionSampler",
    "EffectivenessResult",
    "scm_effectiveness",
    "score",
    "PairedComparison",
    "paired_comparison",
    "memoize_features",
]

Distance = Callable[[np.ndarray, np.ndarray], np.ndarray]


class AttributePredictor(Protocol):
    """An anti-causal predictor ``g_k(x[, context]) -> pa_k`` as effectiveness needs it.

    Attributes
    ----------
    kind : {"regression", "multiclass", "binary"}
        Output type (MAE, accuracy or F1).
    context : tuple of str
        Names of other variables it is conditioned on (e.g. ``("i",)`` for ``q(t | x, i)``).
    """

    kind: str
    context: tuple[str, ...]

    def predict(self, images: np.ndarray, context: np.ndarray | None = None) -> np.ndarray:
        """Predicted attribute (values, class labels or 0/1)."""


# ----------------------------------------------------------------------------------------------
# distances
# ----------------------------------------------------------------------------------------------
def _pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"images must have the same shape, got {a.shape} and {b.shape}")
    return a, b


def l1_pixel(scale: float = 255.0) -> Distance:
    """Mean absolute pixel difference per image, on a 0-``scale`` grey-level scale.

    Parameters
    ----------
    scale : float
        Multiplier from the images' range to grey levels (255 for images in [0, 1]).

    Returns
    -------
    callable
        ``d(a, b) -> (n,)``.
    """

    def d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _pair(a, b)
        return scale * np.abs(a - b).reshape(len(a), -1).mean(1)

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

    def d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _pair(a, b)
        return np.abs(np.asarray(embed(a), float) - np.asarray(embed(b), float)).reshape(len(a), -1).mean(1)

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

    def d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        a, b = _pair(a, b)
        total = np.zeros(len(a))
        for fa, fb in zip(feature_maps(a), feature_maps(b), strict=False):
            fa = np.asarray(fa, float)
            fb = np.asarray(fb, float)
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
@dataclass(frozen=True)
class CompositionResult:
    """Composition distances ``d(x, f_null^m(x))`` for ``m = 1..M``, per image.

    Attributes
    ----------
    statistic : float
        Mean of the first distance at ``m = 1``.
    pvalue : float
        Page-type trend test across cycles (one-sided Spearman of per-image distance vs ``m``,
        averaged over images and tested against 0 with a t-test); ``nan`` for one cycle.
    distances : dict
        Name -> ``(n, M)`` array.
    cycles : numpy.ndarray
        ``1..M``.
    images : list of numpy.ndarray
        The images of a few units through the cycles (for Figs 2/3/6/8), ``(k, M + 1, ...)``.
    """

    statistic: float
    pvalue: float
    distances: dict[str, np.ndarray] = field(repr=False)
    cycles: np.ndarray = field(repr=False)
    images: np.ndarray = field(repr=False)

    def at(self, m: int) -> dict[str, np.ndarray]:
        """Per-image distances after ``m`` cycles."""
        if m < 1 or m > len(self.cycles):
            raise ValueError(f"m must be in 1..{len(self.cycles)}, got {m}")
        return {k: v[:, m - 1] for k, v in self.distances.items()}

    def summary(self, cycles: Sequence[int] = (1, 10)) -> pd.DataFrame:
        """Mean and standard deviation over images per distance and number of cycles."""
        rows = []
        for name, arr in self.distances.items():
            for m in cycles:
                if m <= arr.shape[1]:
                    rows.append({"distance": name, "cycles": m, "mean": arr[:, m - 1].mean(), "std": arr[:, m - 1].std(ddof=1)})
        return pd.DataFrame(rows)

    def plot(self, ax=None, distance: str | None = None, label: str | None = None):
        """Mean distance against the number of cycles with a 95 % band over images."""
        import matplotlib.pyplot as plt

        from ..plotting import line_with_band

        ax = plt.gca() if ax is None else ax
        name = distance or next(iter(self.distances))
        arr = self.distances[name]
        se = arr.std(0, ddof=1) / np.sqrt(len(arr))
        mean = arr.mean(0)
        line_with_band(self.cycles, mean, mean - 1.96 * se, mean + 1.96 * se, label=label, ax=ax)
        ax.set_xlabel("null-intervention cycles m")
        ax.set_ylabel(f"composition ({name})")
        return ax


def scm_composition(
    scm: Any,
    obs: Mapping[str, np.ndarray],
    *,
    image: str = "x",
    cycles: int = 10,
    distances: Mapping[str, Distance] | None = None,
    keep_images: int = 4,
) -> CompositionResult:
    """Composition over ``1..cycles`` null interventions (Eq. 7), per image.

    Parameters
    ----------
    scm : DeepSCM
        Any object with ``null_cycles(obs, m)``.
    obs : mapping
        Factual values of every node.
    image : str
        Name of the image node.
    cycles : int
        Largest ``m``.
    distances : mapping, optional
        Name -> ``d(a, b) -> (n,)``; default pixel ``l1`` on a 0-255 scale.
    keep_images : int
        Units whose images are kept through the cycles (for figures).

    Returns
    -------
    CompositionResult
    """
    if not isinstance(cycles, (int, np.integer)) or cycles < 1:
        raise ValueError(f"cycles must be a positive integer, got {cycles!r}")
    distances = dict(distances or {"l1_pixel": l1_pixel()})
    if not distances:
        raise ValueError("distances must name at least one distance")
    chain = scm.null_cycles(obs, int(cycles))
    x0 = np.asarray(chain[0][image])
    out = {name: np.column_stack([d(x0, np.asarray(c[image])) for c in chain[1:]]) for name, d in distances.items()}
    first = next(iter(out.values()))
    pvalue = float("nan")
    if cycles > 1:
        # Growth over cycles: per-image Spearman rho of distance vs m, tested > 0 across images.
        ranks = stats.rankdata(first, axis=1)
        m_r = stats.rankdata(np.arange(cycles))
        rc = ranks - ranks.mean(1, keepdims=True)
        mc = m_r - m_r.mean()
        with np.errstate(invalid="ignore", divide="ignore"):
            rho = (rc @ mc) / (np.sqrt((rc**2).sum(1)) * np.sqrt((mc**2).sum()))
        rho = rho[np.isfinite(rho)]
        if len(rho) > 1 and np.ptp(rho) > 1e-6:
            pvalue = float(stats.ttest_1samp(rho, 0.0, alternative="greater").pvalue)
    k = min(int(keep_images), len(x0))
    imgs = np.stack([np.asarray(c[image])[:k] for c in chain], axis=1)
    return CompositionResult(statistic=float(first[:, 0].mean()), pvalue=pvalue, distances=out,
                             cycles=np.arange(1, cycles + 1), images=imgs)


# ----------------------------------------------------------------------------------------------
# effectiveness
# ----------------------------------------------------------------------------------------------
class InterventionSampler:
    """Draw counterfactual parent values that differ from the factual ones (official protocol).

    Parameters
    ----------
    observed : mapping
        Name -> observed values (the test set's): the support interventions are drawn from.
    discrete : sequence of str
        Names of categorical / binary parents (another value is drawn).
    n_bins : int
        Continuous parents: the new value must fall in another of ``n_bins`` equal-width bins.
    """

    def __init__(self, observed: Mapping[str, np.ndarray], discrete: Sequence[str] = (), n_bins: int = 10) -> None:
        if not observed:
            raise ValueError("observed must map at least one parent name to its observed values")
        self.observed = {k: np.asarray(v) for k, v in observed.items()}
        self.discrete = set(discrete)
        unknown = self.discrete - set(self.observed)
        if unknown:
            raise ValueError(f"discrete names {sorted(unknown)} are not in observed")
        if n_bins < 2:
            raise ValueError(f"n_bins must be at least 2, got {n_bins}")
        self.n_bins = int(n_bins)
        self.edges = {
            k: np.linspace(v.min(), v.max(), self.n_bins + 1)[1:-1] for k, v in self.observed.items() if k not in self.discrete
        }

    def bin(self, var: str, values: np.ndarray) -> np.ndarray:
        """Category of ``values`` of ``var`` (the value itself for discrete parents)."""
        self._check(var)
        v = np.asarray(values)
        return v.astype(int) if var in self.discrete else np.searchsorted(self.edges[var], v, side="right")

    def _check(self, var: str) -> None:
        if var not in self.observed:
            raise ValueError(f"cannot intervene on {var!r}: the sampler knows {sorted(self.observed)}")

    def sample(self, var: str, factual: np.ndarray, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """One counterfactual value per unit, different from its factual value (or bin).

        Parameters
        ----------
        var : str
            Parent to intervene on.
        factual : numpy.ndarray
            Factual values of ``var``.
        rng : numpy.random.Generator or int, optional
            Randomness.

        Returns
        -------
        numpy.ndarray
            Same length as ``factual``.
        """
        self._check(var)
        rng = as_generator(rng)
        f = np.asarray(factual)
        if var in self.discrete:
            u = np.unique(self.observed[var])
            if len(u) < 2:
                raise ValueError(f"{var!r} takes a single observed value: nothing to intervene to")
            pos = np.searchsorted(u, f)
            r = rng.integers(0, len(u) - 1, len(f))
            return u[r + (r >= pos)]  # uniform over the other values
        pool = self.observed[var]
        pool_bin = self.bin(var, pool)
        fb = self.bin(var, f)
        out = pool[rng.integers(0, len(pool), len(f))]
        todo = self.bin(var, out) == fb
        for _ in range(200):  # rejection: a few rounds suffice unless one bin holds nearly everything
            if not todo.any():
                break
            out[todo] = pool[rng.integers(0, len(pool), todo.sum())]
            todo = self.bin(var, out) == fb
        if todo.any():
            others = [pool[pool_bin != b] for b in fb[todo]]
            out[todo] = [o[rng.integers(0, len(o))] for o in others]
        return out


def score(kind: str, target: np.ndarray, predicted: np.ndarray) -> tuple[float, np.ndarray]:
    """Effectiveness score and its per-image contributions.

    Parameters
    ----------
    kind : {"regression", "multiclass", "binary"}
        MAE, accuracy or F1.
    target, predicted : numpy.ndarray
        Intervened values and predictions.

    Returns
    -------
    (float, numpy.ndarray)
        The score and the per-image absolute error (regression) or correctness (0/1).
    """
    t, p = np.asarray(target), np.asarray(predicted)
    if t.shape != p.shape:
        raise ValueError(f"target and predicted must have the same shape, got {t.shape} and {p.shape}")
    if kind == "regression":
        err = np.abs(t.astype(float) - p.astype(float))
        return float(err.mean()), err
    if kind == "multiclass":
        ok = (t.astype(int) == p.astype(int)).astype(float)
        return float(ok.mean()), ok
    if kind == "binary":
        t, p = t.astype(int), p.astype(int)
        tp = float(((t == 1) & (p == 1)).sum())
        denom = 2 * tp + float(((t == 0) & (p == 1)).sum()) + float(((t == 1) & (p == 0)).sum())
        return (2 * tp / denom if denom else float("nan")), (t == p).astype(float)
    raise ValueError(f"kind must be 'regression', 'multiclass' or 'binary', got {kind!r}")


@dataclass(frozen=True)
class EffectivenessResult:
    """Effectiveness of one model: every predictor under every intervention (Tables 3 and 4).

    Attributes
    ----------
    statistic : float
        Mean over the diagonal cells of the normalised scores (1 = perfect), for ranking only.
    pvalue : float
        Not a test: ``nan``.
    table : pandas.DataFrame
        Rows: intervention; columns: predicted attribute; values: MAE / accuracy / F1.
    per_image : dict
        ``(intervention, attribute)`` -> per-image error (regression) or correctness.
    counterfactuals : dict
        Intervention -> counterfactual values of every node.
    targets : dict
        Intervention -> the intervened values drawn.
    """

    statistic: float
    pvalue: float
    table: pd.DataFrame
    per_image: dict[tuple[str, str], np.ndarray] = field(repr=False)
    counterfactuals: dict[str, dict[str, np.ndarray]] = field(repr=False)
    targets: dict[str, np.ndarray] = field(repr=False)

    def summary(self) -> pd.DataFrame:
        """Long format: intervention, attribute, score."""
        return self.table.stack().rename("score").reset_index().rename(columns={"level_0": "intervention", "level_1": "attribute"})

    def plot(self, ax=None):
        """Heat map of the table."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        vals = self.table.to_numpy(float)
        ax.imshow(vals, cmap="viridis", aspect="auto")
        ax.set_xticks(range(vals.shape[1]), self.table.columns)
        ax.set_yticks(range(vals.shape[0]), self.table.index)
        for (r, c), v in np.ndenumerate(vals):
            ax.text(c, r, f"{v:.3g}", ha="center", va="center", color="w", fontsize=8)
        ax.set_xlabel("predicted attribute")
        ax.set_ylabel("intervention")
        return ax


def scm_effectiveness(
    scm: Any,
    obs: Mapping[str, np.ndarray],
    predictors: Mapping[str, Any],
    sampler: InterventionSampler,
    *,
    interventions: Sequence[str] | None = None,
    image: str = "x",
    seed: int | np.random.Generator | None = 0,
    do_values: Mapping[str, np.ndarray] | None = None,
) -> EffectivenessResult:
    """Effectiveness (Eq. 8): each predictor on each intervention's counterfactual images.

    Parameters
    ----------
    scm : DeepSCM
        Any object with ``counterfactual(obs, do)``.
    obs : mapping
        Factual values.
    predictors : mapping
        Attribute name -> :class:`AttributePredictor`. A predictor with ``context`` gets the
        *counterfactual* values of those variables (the paper's ``q(t | x, i*)``).
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
    rng = as_generator(seed)
    interventions = list(interventions or predictors)
    for k in interventions:
        if k not in obs:
            raise ValueError(f"cannot intervene on {k!r}: it is not in obs ({', '.join(obs)})")
    table: dict[str, dict[str, float]] = {}
    per_image: dict[tuple[str, str], np.ndarray] = {}
    cfs: dict[str, dict[str, np.ndarray]] = {}
    targets: dict[str, np.ndarray] = {}
    diag = []
    for k in interventions:
        value = np.asarray(do_values[k]) if do_values is not None and k in do_values else sampler.sample(k, np.asarray(obs[k]), rng)
        cf = scm.counterfactual(obs, {k: value})
        cfs[k], targets[k] = cf, value
        row = {}
        for a, pred in predictors.items():
            ctx = tuple(getattr(pred, "context", ()) or ())
            context = np.column_stack([np.asarray(cf[c], float) for c in ctx]) if ctx else None
            s, per = score(pred.kind, np.asarray(cf[a]), np.asarray(pred.predict(np.asarray(cf[image]), context)))
            row[a], per_image[(k, a)] = s, per
            if a == k:
                diag.append(s)
        table[f"do({k})"] = row
    df = pd.DataFrame(table).T
    return EffectivenessResult(statistic=float(np.nanmean(diag)) if diag else float("nan"), pvalue=float("nan"),
                               table=df, per_image=per_image, counterfactuals=cfs, targets=targets)


# ----------------------------------------------------------------------------------------------
# paired comparisons
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PairedComparison:
    """Paired comparison of two models on the same units.

    Attributes
    ----------
    statistic : float
        Wilcoxon's W, McNemar's discordant count ``b``, or the mean difference (bootstrap).
    pvalue : float
        Two-sided p-value (bootstrap: share of replicates on the other side of 0, doubled).
    mean_diff : float
        Mean of ``a - b``.
    ci : (float, float)
        Paired-bootstrap interval of the mean difference.
    n : int
        Number of pairs.
    test : str
        Test used.
    """

    statistic: float
    pvalue: float
    mean_diff: float
    ci: tuple[float, float]
    n: int
    test: str
    diffs: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))

    def summary(self) -> pd.DataFrame:
        """One row with the test, statistic, p-value, mean difference and interval."""
        return pd.DataFrame([{"test": self.test, "n": self.n, "statistic": self.statistic, "pvalue": self.pvalue,
                              "mean diff (a - b)": self.mean_diff, "ci_low": self.ci[0], "ci_high": self.ci[1]}])

    def plot(self, ax=None):
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
    a: np.ndarray, b: np.ndarray, *, test: str = "wilcoxon", n_boot: int = 2000, ci: float = 0.95,
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
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"a and b must be 1-D arrays of the same length (paired units), got {a.shape} and {b.shape}")
    if len(a) < 2:
        raise ValueError("need at least 2 pairs")
    if np.isnan(a).any() or np.isnan(b).any():
        raise ValueError("a and b must not contain NaN")
    rng = as_generator(seed)
    diff = a - b
    idx = rng.integers(0, len(diff), (int(n_boot), len(diff)))
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
            raise ValueError("McNemar needs 0/1 outcomes (e.g. correct / wrong per unit)")
        n01 = int(((a == 1) & (b == 0)).sum())
        n10 = int(((a == 0) & (b == 1)).sum())
        stat = float(n01)
        p = float(stats.binomtest(n01, n01 + n10, 0.5).pvalue) if n01 + n10 else 1.0
    else:
        raise ValueError(f"test must be 'wilcoxon', 'bootstrap' or 'mcnemar', got {test!r}")
    return PairedComparison(statistic=stat, pvalue=p, mean_diff=float(diff.mean()), ci=(float(lo), float(hi)),
                            n=len(diff), test=test, diffs=diff)
