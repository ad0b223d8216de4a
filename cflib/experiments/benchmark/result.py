"""What a benchmark run returns: :class:`BenchmarkResult`, and its trained models at other noise temperatures."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ...data.morphosynth import MorphoSynth
from ...data.smileyfaces import SmileyFaces
from ...scm.deep import DeepSCM
from .config import MODEL_LABELS, BenchmarkConfig
from .evaluation import EvalContext, evaluate_scm
from .figures import plot_composition_curves


@dataclass
class BenchmarkResult:
    """Everything :func:`~cflib.experiments.benchmark.run_benchmark` measured.

    :meth:`summary` gives the headline numbers per model as one table and :meth:`plot` draws the
    composition curves; the chapter's tables and figures (:mod:`cflib.experiments.benchmark.tables`,
    :mod:`cflib.experiments.benchmark.figures`) take a result first.

    Attributes
    ----------
    config : BenchmarkConfig
        The run's settings.
    table_composition : pandas.DataFrame
        Table 1 (MorphoSynth) or 2 (SmileyFaces): mean and std over images per distance and cycles.
    table_effectiveness : pandas.DataFrame
        Table 3 or 4: rows model, columns ``(attribute, do(k))``.
    table_realism_minimality : pandas.DataFrame
        Table 5: Fréchet distance, CLD, P1, P2 (and the identity CLD).
    table_true_error : pandas.DataFrame
        Mean pixel l1 (0-255) between each model's counterfactual and the true one, per intervention.
    per_image : dict
        ``model -> {"composition": {distance: (n, cycles)}, "effectiveness": {(do, attr): (n,)},
        "true_error": {do: (n,)}, "cld": (n,), "p1": (n,), "p2": (n,), "features": (n, k)}`` (the
        features are the predictor embeddings of the realism counterfactuals, for intervals on the
        Fréchet distance).
    figures : dict
        Images for the figures: ``"composition"`` (model -> (k, cycles + 1, ...)),
        ``"interventions"`` (model -> {do: (k, ...)}), ``"factual"`` (k, ...), ``"do_values"``, ``"true"``
        (do -> the true counterfactuals (k, ...)) and ``"factual_parents"``.
    predictor_quality : pandas.DataFrame
        Predictors on real test images (the ceiling of effectiveness).
    timings : dict
        Seconds per stage.
    models : dict
        The trained DeepSCMs (not serialised).
    context : EvalContext
        What every model was scored against (test units, interventions, true counterfactuals, predictors,
        metric models): :func:`~cflib.experiments.benchmark.evaluate_scm` scores another model on it.
    test : MorphoSynth or SmileyFaces
        The test units.
    mechanisms : dict
        Model key -> its trained image mechanism (:class:`cflib.models.image_mechanisms.DeepImageMechanism`).
    learned_attributes : dict
        Parent -> the learned attribute mechanism every model shares.
    finetune_history : dict
        ``"hvae_cf"`` / ``"gan_ft"`` -> the history of that model's fine-tuning (when it was trained).
    """

    config: BenchmarkConfig
    table_composition: pd.DataFrame
    table_effectiveness: pd.DataFrame
    table_realism_minimality: pd.DataFrame
    table_true_error: pd.DataFrame
    per_image: dict[str, dict[str, Any]] = field(repr=False)
    figures: dict[str, Any] = field(repr=False)
    predictor_quality: pd.DataFrame = field(repr=False)
    timings: dict[str, float] = field(repr=False)
    models: dict[str, Any] = field(repr=False)
    context: EvalContext = field(repr=False)
    test: MorphoSynth | SmileyFaces = field(repr=False)
    mechanisms: dict[str, Any] = field(repr=False)
    learned_attributes: dict[str, Any] = field(repr=False)
    finetune_history: dict[str, Any] = field(repr=False)

    def summary(self) -> pd.DataFrame:
        """The headline table: one row per model with its composition, effectiveness, realism, minimality and true error.

        The numbers are those of the paper's tables (and of ``evaluate_scm(...)["summary"]``), one column
        each: the mean composition distance after 1 and ``cycles`` cycles, the predictor's score of each
        attribute under an intervention on it, the in-domain Fréchet distance, the CLD, and the true error
        (mean pixel l1, 0-255, to the true counterfactual, averaged over the interventions).

        Returns
        -------
        pandas.DataFrame
            Index the model labels of :data:`MODEL_LABELS`; columns ``composition <distance> m=<m>``,
            ``effectiveness <attribute> do(<attribute>)``, ``Fréchet``, ``CLD`` and ``true error``.

        Examples
        --------
        >>> result = run_benchmark(n_train=300, n_test=40, epochs=1)  # doctest: +SKIP
        >>> result.summary()["true error"]  # doctest: +SKIP
        """
        comp, eff = self.table_composition, self.table_effectiveness
        columns = {
            f"composition {dist} m={m}": comp[(dist, m, "mean")]
            for dist, m in dict.fromkeys((d, c) for d, c, _ in comp.columns)
        }
        for attribute, do in eff.columns:
            if do == f"do({attribute.split()[0]})":
                columns[f"effectiveness {attribute.split()[0]} {do}"] = eff[(attribute, do)]
        columns["Fréchet"] = self.table_realism_minimality["Fréchet (in-domain)"]
        columns["CLD"] = self.table_realism_minimality["CLD"]
        columns["true error"] = self.table_true_error.mean(axis=1)
        return pd.DataFrame(columns, index=self.table_realism_minimality.index)

    def plot(self, models: Sequence[str] | None = None, **kwargs: Any) -> np.ndarray:
        """Mean composition distance against the number of cycles, one panel per distance (Table 1's curves).

        Parameters
        ----------
        models : sequence of str, optional
            Model keys (default: every model and reference of the run).
        **kwargs
            Passed to :func:`~cflib.experiments.benchmark.figures.plot_composition_curves` (``distances``, ``axes``).

        Returns
        -------
        numpy.ndarray of matplotlib.axes.Axes
        """
        return plot_composition_curves(self, tuple(self.per_image) if models is None else models, **kwargs)


def with_temperature(result: BenchmarkResult, model: str, noise_temperature: float) -> DeepSCM:
    """The trained deep SCM ``model`` with another pixel-noise temperature (no retraining).

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`~cflib.experiments.benchmark.run_benchmark`.
    model : str
        A trained VAE or HVAE model key.
    noise_temperature : float
        New ``T``.

    Returns
    -------
    DeepSCM
    """
    from ...models.image_mechanisms import DeepImageMechanism

    mechs = result.mechanisms
    if model not in mechs:
        raise ValueError(f"{model!r} was not trained in this run (trained: {sorted(mechs)})")
    old = mechs[model]
    new = DeepImageMechanism(
        old.model,
        old.parent_encoder,
        noise_temperature=noise_temperature,
        posterior_temperature=old.posterior_temperature,
        seed=old.seed,
    )
    scm = result.models[model]
    return DeepSCM(scm.graph, {**scm.mechanisms, "x": new})


def at_temperatures(
    result: BenchmarkResult, models: Sequence[str], temperatures: Sequence[float]
) -> Iterator[tuple[str, float, dict[str, Any]]]:
    """Yield ``(model, T, evaluate_scm output)`` for each trained model re-scored at each temperature.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`~cflib.experiments.benchmark.run_benchmark`.
    models : sequence of str
        Trained VAE / HVAE keys.
    temperatures : sequence of float
        Pixel-noise temperatures ``T``.

    Yields
    ------
    tuple
        ``(model, T, evaluate_scm(...))``, the model scored on ``result.context`` and labelled ``"<label> T=<T>"``.
    """
    for mdl in models:
        for T in temperatures:
            label = f"{MODEL_LABELS[mdl]} T={T}"
            yield mdl, T, evaluate_scm(result.context, with_temperature(result, mdl, T), label)
