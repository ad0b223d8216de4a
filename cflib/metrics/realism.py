"""Realism: the Fréchet distance between real and generated images in a feature space.

Melistas et al. (*Benchmarking counterfactual image generation*, Sec. 3.3 (c)) report FID
(Heusel et al. 2017): ``||mu_r - mu_g||^2 + Tr(S_r + S_g - 2 (S_r S_g)^{1/2})`` on Inception-v3 pool
features. Inception's ImageNet weights must be downloaded, which this project does not do, so the
same formula is applied to **in-domain features**: the penultimate activations of the anti-causal
predictors trained inside the project (a "Fréchet classifier distance"). Values are therefore not
comparable with the paper's FID numbers; orderings between models are what the chapter checks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..results import Interval
from ..runtime import as_generator
from ..scm.adapters import function_name as _function_name
from ..validation import (
    ValidationError,
    ValidationTypeError,
    check_callable,
    check_count,
    check_finite,
    check_probability,
    describe,
    warn,
)

__all__ = ["frechet_distance", "FrechetResult", "frechet_feature_distance"]


#: Fewest rows for which the covariance of a few features is more than a rough guess (the warning's threshold).
MIN_ROWS = 10


def _check_features(a: np.ndarray, name: str) -> np.ndarray:
    if a is None or isinstance(a, (str, bytes, dict)):
        raise ValidationTypeError(
            f"{name} must be a 2-D array (n_images, n_features), got {describe(a)} ({type(a).__name__})"
        )
    try:
        a = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValidationTypeError(
            f"{name} must be a numeric 2-D array (n_images, n_features), got {describe(a)}"
        ) from None
    if a.ndim != 2 or a.shape[1] == 0:
        raise ValidationError(
            f"{name} must be a 2-D array (n_images, n_features) with at least one feature, got shape {a.shape}"
        )
    if a.shape[0] < 2:
        raise ValidationError(f"{name} needs at least 2 rows to estimate a covariance, got {a.shape[0]}")
    if not np.isfinite(a).all():
        check_finite(a, name)
    return a


def _size_warning(a: np.ndarray, name: str) -> str | None:
    """Why the covariance of ``a`` cannot be trusted, with the size needed (``None`` when it can)."""
    n, p = a.shape
    if n <= p:
        return (
            f"{name} has {n} rows for {p} features: its covariance is singular, so the Fréchet distance is unreliable; "
            f"it needs more rows than features (at least {p + 1}, preferably several times more)"
        )
    if n < MIN_ROWS:
        return f"{name} has only {n} rows: its covariance is a rough guess and the Fréchet distance unreliable; use at least {MIN_ROWS} rows"
    return None


def _checked_pair(
    a: np.ndarray, b: np.ndarray, names: tuple[str, str]
) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Both feature sets checked (same width), with the size warnings raised and returned for the record."""
    a, b = _check_features(a, names[0]), _check_features(b, names[1])
    if a.shape[1] != b.shape[1]:
        raise ValidationError(f"feature sets must have the same width, got {a.shape[1]} and {b.shape[1]}")
    notes = [_size_warning(a, names[0]), _size_warning(b, names[1])]
    for note in notes:
        if note:
            warn(note, stacklevel=4)  # warn, _checked_pair, the public function, its caller
    return a, b, tuple(note for note in notes if note)


def _sqrt_psd(s: np.ndarray) -> np.ndarray:
    w, v = np.linalg.eigh((s + s.T) / 2)
    return (v * np.sqrt(np.clip(w, 0, None))) @ v.T


def _frechet_from_moments(mu1: np.ndarray, s1: np.ndarray, mu2: np.ndarray, s2: np.ndarray) -> float:
    # Tr (S1 S2)^{1/2} = sum sqrt(eig(S1^{1/2} S2 S1^{1/2})): a symmetric eigenproblem, much faster and
    # more stable than scipy.linalg.sqrtm of the non-symmetric product.
    r = _sqrt_psd(s1)
    eig = np.linalg.eigvalsh(r @ s2 @ r)
    tr_covmean = float(np.sqrt(np.clip(eig, 0, None)).sum())
    return float(max(((mu1 - mu2) ** 2).sum() + np.trace(s1) + np.trace(s2) - 2 * tr_covmean, 0.0))


def frechet_distance(features_real: np.ndarray, features_generated: np.ndarray) -> float:
    """Fréchet distance between Gaussians fitted to two feature sets.

    Parameters
    ----------
    features_real, features_generated : numpy.ndarray
        ``(n, p)`` and ``(m, p)`` feature matrices.

    Returns
    -------
    float
        ``||mu_r - mu_g||^2 + Tr(S_r + S_g - 2 (S_r S_g)^{1/2})`` (non-negative).

    Raises
    ------
    TypeError, ValueError
        Non-numeric or non-2-D features, fewer than 2 rows, NaN or inf, different widths.

    Warns
    -----
    cflib.CflibWarning
        A feature set with no more rows than features (a singular covariance) or fewer than
        :data:`MIN_ROWS` rows; the message says the size needed.
    """
    a, b, _ = _checked_pair(features_real, features_generated, ("features_real", "features_generated"))
    return _frechet(a, b)


def _frechet(a: np.ndarray, b: np.ndarray) -> float:
    return _frechet_from_moments(
        a.mean(0), np.atleast_2d(np.cov(a, rowvar=False)), b.mean(0), np.atleast_2d(np.cov(b, rowvar=False))
    )


@dataclass(frozen=True)
class FrechetResult:
    """Fréchet distance with a bootstrap interval over the generated images.

    Attributes
    ----------
    statistic : float
        The Fréchet distance (an estimate, not a test: there is no p-value).
    ci : cflib.results.Interval
        Percentile bootstrap interval (resampling generated images).
    boot : numpy.ndarray
        Bootstrap replicates.
    feature : str
        Name of the feature space.
    warnings : tuple of str
        The :class:`cflib.CflibWarning` messages raised while computing it (too few rows for the
        feature width); :meth:`summary` shows them in a ``warning`` column.
    """

    statistic: float
    ci: Interval
    boot: np.ndarray = field(repr=False)
    feature: str = "in-domain"
    warnings: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """One row: distance, interval, features (and the recorded warnings, if any)."""
        row = {
            "Frechet distance": self.statistic,
            "ci_low": self.ci[0],
            "ci_high": self.ci[1],
            "features": self.feature,
        }
        if self.warnings:
            row["warning"] = "; ".join(self.warnings)
        return pd.DataFrame([row])

    def plot(self, ax: Any = None) -> Any:
        """Histogram of the bootstrap replicates with the estimate marked."""
        import matplotlib.pyplot as plt

        ax = plt.gca() if ax is None else ax
        ax.hist(self.boot, bins=30, alpha=0.7)
        ax.axvline(self.statistic, color="0.2", lw=1.2)
        ax.set_xlabel(f"Fréchet distance ({self.feature} features)")
        return ax


def frechet_feature_distance(
    real: np.ndarray,
    generated: np.ndarray,
    features: Callable[[np.ndarray], np.ndarray] | None = None,
    *,
    n_boot: int = 0,
    ci: float = 0.95,
    seed: int | np.random.Generator | None = 0,
    feature_name: str = "in-domain",
) -> FrechetResult:
    """Fréchet distance in a feature space, optionally with a bootstrap interval.

    Parameters
    ----------
    real, generated : numpy.ndarray
        Images (or features when ``features`` is None).
    features : callable, optional
        ``images -> (n, p)`` feature extractor (e.g. a predictor's ``embed``).
    n_boot : int
        Bootstrap replicates over the generated set (0: no interval).
    ci : float
        Coverage of the interval.
    seed : int or numpy.random.Generator
        Randomness of the bootstrap.
    feature_name : str
        Label for the feature space.

    Returns
    -------
    FrechetResult
        With the size warnings of :func:`frechet_distance` recorded in ``warnings``.
    """
    if features is not None:
        check_callable(features, "features")
    n_boot = check_count(n_boot, "n_boot", minimum=0)
    ci = check_probability(ci, "ci")
    if not isinstance(feature_name, str):
        raise ValidationTypeError(f"feature_name must be a str, got {describe(feature_name)}")
    what = f"features={_function_name(features)}" if features is not None else ""
    fa, fb, notes = _checked_pair(
        features(real) if features is not None else real,
        features(generated) if features is not None else generated,
        (f"real ({what})" if what else "real", f"generated ({what})" if what else "generated"),
    )
    stat = _frechet(fa, fb)
    boot = np.empty(0)
    lo = hi = float("nan")
    if n_boot:
        rng = as_generator(seed)
        mu_a, s_a = fa.mean(0), np.atleast_2d(np.cov(fa, rowvar=False))
        idx = rng.integers(0, len(fb), (n_boot, len(fb)))
        boot = np.array(
            [_frechet_from_moments(mu_a, s_a, fb[i].mean(0), np.atleast_2d(np.cov(fb[i], rowvar=False))) for i in idx]
        )
        lo, hi = np.quantile(boot, [(1 - ci) / 2, (1 + ci) / 2])
    return FrechetResult(
        statistic=stat,
        ci=Interval.of(
            (float(lo), float(hi)),
            estimate=stat,
            method=f"{100 * ci:g}% percentile bootstrap of the generated images, {n_boot} replicates"
            if n_boot
            else "no bootstrap (n_boot=0)",
        ),
        boot=boot,
        feature=feature_name,
        warnings=notes,
    )
