"""Training seeds as the units of the benchmark's model comparisons (:class:`SeedUnits`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ... import verdicts
from .config import MODEL_LABELS
from .convergence import guard, unconverged
from .intervals import N_BOOT_FRECHET, FrechetDistances
from .parts import Part, side_part


class SeedUnits:
    """Training seeds as the units of a model comparison.

    Each seed's estimate (a mean of paired per-image differences, or a difference of Fréchet distances or
    F1 scores over its test images) is one unit, and the claim is decided on
    :func:`cflib.verdicts.seed_interval` of those estimates. With one seed the image-level interval is
    shown but cannot decide (:func:`cflib.verdicts.one_seed`).

    Parameters
    ----------
    runs : mapping
        ``seed ->`` results with ``per_image`` and ``real_features`` (:func:`seed_results`), and optionally
        ``convergence`` (:func:`~cflib.experiments.benchmark.convergence.training_convergence`): a comparison of
        models that have not converged is then undecided (:func:`~cflib.experiments.benchmark.convergence.guard`).
    models : sequence of str
        Models every seed must hold.
    frechet : sequence of str
        Models whose Fréchet distances are measured per seed.

    Attributes
    ----------
    seeds : list
        The seeds, in order.
    runs : list
        Their results.
    n : int
        Seeds.
    frechet : list of FrechetDistances
        Per seed (with bootstrap draws only for one seed, where the image-level interval is shown).
    trained : tuple of str
        Models with a convergence criterion (the trained ones).
    still_learning : dict
        Model -> the criterion's reading, for the trained models that have not converged in some seed.
    """

    def __init__(self, runs: Any, models: Sequence[str], *, frechet: Sequence[str] = ()) -> None:
        if not isinstance(runs, Mapping) or not runs:
            raise ValueError("results['seeds'] must map each training seed to its results (see seed_results)")
        self.seeds, self.runs = list(runs), list(runs.values())
        self.n = len(self.runs)
        for s, r in runs.items():
            missing = [m for m in models if m not in r.get("per_image", {})]
            if missing:
                raise ValueError(f"results['seeds'][{s!r}] lacks the per-image results of {missing}")
        convergence = {s: r["convergence"] for s, r in runs.items() if "convergence" in r}
        self.trained = tuple(next(iter(convergence.values()))) if convergence else ()
        self.still_learning = unconverged(convergence) if convergence else {}
        draws = N_BOOT_FRECHET if self.n == 1 else 0
        self.frechet = (
            [FrechetDistances(r["real_features"], r["per_image"], frechet, draws=draws) for r in self.runs]
            if frechet
            else []
        )

    def part(
        self,
        label: str,
        stat: Callable[[int], float],
        image_interval: Callable[[int], verdicts.Interval],
        side: str,
        threshold: float = 0.0,
        models: Sequence[str] = (),
    ) -> Part:
        """One comparison: ``stat(k)`` is seed ``k``'s estimate, ``image_interval(k)`` its interval over test images.

        Parameters
        ----------
        label : str
            What is compared.
        stat : callable
            ``k -> float``: seed ``k``'s estimate.
        image_interval : callable
            ``k -> Interval`` over seed ``k``'s test images (shown, undecided, when there is one seed).
        side : {"below", "above"}
            Where the claim puts the quantity.
        threshold : float
            The boundary.
        models : sequence of str
            The models it reads: when trained ones among them have not converged, the part is undecided
            (:func:`~cflib.experiments.benchmark.convergence.guard`).

        Returns
        -------
        Part
        """
        if self.n == 1:
            p = side_part(label, image_interval(0), side, threshold)
            p = Part(label, verdicts.one_seed(p.decision), threshold, p.n)
        else:
            p = side_part(label, verdicts.seed_interval([stat(k) for k in range(self.n)]), side, threshold)
        return guard(p, models, self.trained, self.still_learning)

    def paired(
        self,
        label: str,
        diff: Callable[[Mapping[str, Any]], np.ndarray],
        side: str,
        threshold: float = 0.0,
        models: Sequence[str] = (),
    ) -> Part:
        """A comparison of per-image paired differences ``diff(run)``: each seed's estimate is their mean.

        Parameters
        ----------
        label : str
            What is compared.
        diff : callable
            ``run -> (n,)`` per-image differences.
        side : {"below", "above"}
            Where the claim puts the mean difference.
        threshold : float
            The boundary.
        models : sequence of str
            The models it reads (see :meth:`part`).

        Returns
        -------
        Part
        """
        return self.part(
            label,
            lambda k: float(np.mean(diff(self.runs[k]))),
            lambda k: verdicts.mean_interval(diff(self.runs[k]), unit="test images"),
            side,
            threshold,
            models,
        )

    def frechet_diff(self, a: str, b: str, side: str, label: str | None = None) -> Part:
        """Fréchet distance of ``a`` minus that of ``b``: per seed, the difference of the two distances.

        Parameters
        ----------
        a, b : str
            Model keys.
        side : {"below", "above"}
            Where the claim puts the difference.
        label : str, optional
            What is compared (default ``"Fréchet <a> - <b>"``).

        Returns
        -------
        Part
        """
        return self.part(
            label or f"Fréchet {MODEL_LABELS[a]} - {MODEL_LABELS[b]}",
            lambda k: self.frechet[k].point[a] - self.frechet[k].point[b],
            lambda k: self.frechet[k].diff(a, b),
            side,
            models=(a, b),
        )

    def mean(self, value: Callable[[Mapping[str, Any]], float]) -> float:
        """The mean over seeds of ``value(run)``.

        Parameters
        ----------
        value : callable
            ``run -> float``.

        Returns
        -------
        float
        """
        return float(np.mean([value(r) for r in self.runs]))

    @property
    def evidence(self) -> str:
        """What the comparisons rest on, for a claim's evidence."""
        n_img = len(np.asarray(self.runs[0]["per_image"]["identity"]["cld"]))
        if self.n == 1:
            return f"1 training seed ({n_img} test images): a model comparison needs at least two seeds"
        return f"{self.n} training seeds (seeds {', '.join(map(str, self.seeds))}) as the units, each the mean over its {n_img} test images"
