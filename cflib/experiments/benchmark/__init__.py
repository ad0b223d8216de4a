"""The counterfactual-image benchmark: train deep SCMs and score them on the paper's four axes.

Melistas et al. (*Benchmarking counterfactual image generation*, Secs. 3-4, Tables 1-5) compare
deep SCMs that share their attribute mechanisms and differ in the image mechanism (VAE with fixed
or learned sigma, hierarchical VAE, GAN, GAN with encoder fine-tuning) on composition,
effectiveness, realism and minimality. :func:`run_benchmark` does the same on the project's
synthetic stand-ins (MorphoSynth for Morpho-MNIST, SmileyFaces for CelebA), where the true
counterfactual is known, and adds two reference "models" through the same :class:`DeepSCM`
interface: ``identity`` (the image never changes) and ``true`` (the data's own mechanism).

Everything is returned as a :class:`BenchmarkResult`: DataFrames named after the paper's tables plus
per-image arrays, so a notebook can draw the figures and run paired comparisons between models on the
same test images (:meth:`BenchmarkResult.summary` gives the headline table, :meth:`BenchmarkResult.plot`
the composition curves).

The package holds one idea per module:

- :mod:`~cflib.experiments.benchmark.config`: the models, their labels, :class:`BenchmarkConfig` and
  the datasets' :class:`DatasetSpec`
- :mod:`~cflib.experiments.benchmark.training`: predictors, attribute and image mechanisms, the CLD's VAE
- :mod:`~cflib.experiments.benchmark.evaluation`: the shared :class:`EvalContext` and :func:`evaluate_scm`
- :mod:`~cflib.experiments.benchmark.result`: :class:`BenchmarkResult` and :func:`with_temperature`
- :mod:`~cflib.experiments.benchmark.pipeline`: :func:`run_benchmark`, :func:`run_seeds` and the
  results the claims read
- :mod:`~cflib.experiments.benchmark.tables` and :mod:`~cflib.experiments.benchmark.figures`: the
  chapter's tables and figures
- :mod:`~cflib.experiments.benchmark.morphosynth`: notebook 01's learned intensity flow and dataset figures
- :mod:`~cflib.experiments.benchmark.agreement`: notebook 04's metrics against the truth, with its figure
- :mod:`~cflib.experiments.benchmark.parts`, :mod:`~cflib.experiments.benchmark.seeds`,
  :mod:`~cflib.experiments.benchmark.convergence` and :mod:`~cflib.experiments.benchmark.intervals`: the verdict
  helpers of the claims (a comparison of models that are still learning is undecided)
- ``claims_morphosynth`` (:func:`claims_01`, :func:`claims_02`), ``claims_smileyfaces``
  (:func:`claims_03`), ``claims_learning`` (:func:`claims_learning`) and ``claims_metrics``
  (:func:`claims_04`): one ``claims_<nn>`` function per notebook that turns the measured results into
  the recorded claim verdicts.

A notebook imports the package (``from cflib.experiments import benchmark as exp``).
"""

from __future__ import annotations

from .agreement import (
    agreement_summary,
    oriented_proxy,
    plot_proxies_vs_truth,
    rank_agreement,
    score_configurations,
    within_model_agreement,
)
from .claims_learning import LEARNING_BAR, claims_learning
from .claims_metrics import claims_04
from .claims_morphosynth import PAPER_TABLE5, claims_01, claims_02
from .claims_smileyfaces import claims_03
from .config import BASELINES, MODEL_LABELS, MODELS, BenchmarkConfig, DatasetSpec, dataset_spec
from .convergence import CONVERGED_SHARE, convergence_table, training_convergence
from .evaluation import EvalContext, evaluate_scm
from .figures import (
    composition_grid,
    intervention_grid,
    plot_cld_histograms,
    plot_composition_curves,
    plot_finetuning_history,
    plot_p1_p2,
)
from .morphosynth import (
    FlowCheck,
    fit_intensity_flow,
    plot_attribute_sweeps,
    plot_flow_fit,
    plot_glyph_skeletons,
    plot_interventional_vs_counterfactual,
    plot_morphosynth_attributes,
)
from .pipeline import benchmark_results, learning_results, run_benchmark, run_seeds, seed_results
from .result import BenchmarkResult, with_temperature
from .tables import format_mean_std, paired_table, seed_table, temperature_table, versus_paper

__all__ = [
    "MODELS",
    "BASELINES",
    "MODEL_LABELS",
    "BenchmarkConfig",
    "DatasetSpec",
    "dataset_spec",
    "BenchmarkResult",
    "EvalContext",
    "run_benchmark",
    "evaluate_scm",
    "with_temperature",
    "format_mean_std",
    "composition_grid",
    "intervention_grid",
    "FlowCheck",
    "fit_intensity_flow",
    "benchmark_results",
    "seed_results",
    "run_seeds",
    "seed_table",
    "learning_results",
    "convergence_table",
    "training_convergence",
    "CONVERGED_SHARE",
    "claims_learning",
    "LEARNING_BAR",
    "PAPER_TABLE5",
    "temperature_table",
    "versus_paper",
    "paired_table",
    "score_configurations",
    "oriented_proxy",
    "rank_agreement",
    "within_model_agreement",
    "agreement_summary",
    "plot_morphosynth_attributes",
    "plot_glyph_skeletons",
    "plot_attribute_sweeps",
    "plot_interventional_vs_counterfactual",
    "plot_flow_fit",
    "plot_composition_curves",
    "plot_cld_histograms",
    "plot_p1_p2",
    "plot_finetuning_history",
    "plot_proxies_vs_truth",
    "claims_01",
    "claims_02",
    "claims_03",
    "claims_04",
]
