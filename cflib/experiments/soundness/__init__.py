"""Experiments of the chapter *Axiomatic soundness* (Monteiro et al., ICLR 2023): pipelines, studies and claims.

The chapter's five notebooks call this package (``from cflib.experiments import soundness as exp``); it
re-exports the names they use from its modules of one idea each:

- :mod:`~cflib.experiments.soundness.common`: the Colour-Digits oracles, SCM names and parents, the parent
  encoder, the test split, do-values, training seeds and the per-image values behind the metrics;
- :mod:`~cflib.experiments.soundness.training`: the chapter's models, trained once through the shared model cache;
- :mod:`~cflib.experiments.soundness.ground_truth` (notebook 01): :class:`HueOracle`, :func:`score_functions`,
  :func:`commutativity_study` and :func:`truth_effectiveness`;
- :mod:`~cflib.experiments.soundness.support` (notebook 02, Figures 4-5, eq. 4): :func:`simulated_interventions`,
  :func:`dependence`, :func:`si_dependence` and :func:`oracle_quality`;
- :mod:`~cflib.experiments.soundness.colour_digit_study` (notebook 03, Tables 1-4): :func:`colour_digit_blocks`,
  :func:`oracle_families`, :func:`table1_configs`, :func:`soundness_study` and :func:`figure1_models`;
- :mod:`~cflib.experiments.soundness.shapes` (notebook 04, Table 5): :func:`shapes_study`;
- :mod:`~cflib.experiments.soundness.trade_offs` (notebook 04, Tables 6-7, Figure 8): :func:`trade_off_images`,
  :func:`beta_sweep`, :func:`train_hvaes`, :func:`partial_abduction` and :func:`temperature_sweep`;
- :mod:`~cflib.experiments.soundness.truth` (notebook 05, beyond the paper): :func:`truth_zoo`,
  :func:`truth_study` and :func:`true_error_table`;
- :mod:`~cflib.experiments.soundness.tables`: :func:`summary_value`, :func:`rank_robustness` (Tables 2-4),
  :func:`table5`, :func:`metric_truth_correlations` and :func:`seed_correlations`;
- :mod:`~cflib.experiments.soundness.figures`: Figures 1, 4, 5, 7, 8 and 11 and the book's own plots
  (:func:`figure1`, ``plot_*``);
- :mod:`~cflib.experiments.soundness.deciding`: the paper's words (:data:`QUOTES`) and the intervals and joint
  decisions the claims rest on;
- the claims, one module per notebook's claims: :mod:`~cflib.experiments.soundness.claims` (:func:`claims_01`:
  C1, C6, C7; :func:`claims_02`: C11, C13), :mod:`~cflib.experiments.soundness.claims_colour_digits`
  (:func:`claims_03`: C2-C5, C8-C10, C12, C14, C19), :mod:`~cflib.experiments.soundness.claims_trade_offs`
  (:func:`claims_04`: C15-C18) and :mod:`~cflib.experiments.soundness.claims_truth` (:func:`claims_05`: B1).

Each ``claims_<nn>(results)`` takes a plain dict of what the notebook computed, decides every claim with
a rule of :mod:`cflib.verdicts` on an interval (over test images, over training seeds, or over
counterfactual functions for B1), records it through :func:`cflib.claims.claim` with the paper's words of
:data:`QUOTES`, and returns those claims' rows of :func:`cflib.claims.claims_table`.
"""

from __future__ import annotations

from .claims import FLOAT_ZERO, claims_01, claims_02
from .claims_colour_digits import C12_GAN, C12_PARTS, TABLE1_FULL_SUPPORT, claims_03
from .claims_trade_offs import claims_04
from .claims_truth import claims_05
from .colour_digit_study import (
    colour_digit_blocks,
    figure1_models,
    oracle_families,
    soundness_study,
    table1_configs,
)
from .common import (
    BLOCKS,
    DIGIT_HUE_ORACLES,
    ORACLE_SEED,
    PARENTS,
    SCM_TITLES,
    colour_digits_test,
    digit_hue_encoder,
    sample_do,
)
from .deciding import QUOTES, seed_diff
from .figures import (
    figure1,
    plot_abduction_strip,
    plot_composition_reversibility,
    plot_hue_joints,
    plot_metric_truth,
    plot_partial_abduction,
    plot_samples,
    plot_shape_counterfactuals,
    plot_si_before_after,
    plot_support_reports,
    plot_temperature,
    plot_temperature_counterfactuals,
    plot_temperature_traversal,
    plot_true_counterfactuals,
)
from .ground_truth import HueOracle, commutativity_study, score_functions, truth_effectiveness
from .shapes import shapes_study
from .support import dependence, oracle_quality, si_dependence, simulated_interventions
from .tables import (
    RANK_COLUMNS,
    metric_truth_correlations,
    rank_robustness,
    ranks_versus_paper,
    seed_correlations,
    summary_value,
    table1_versus_paper,
    table5,
    trade_off_versus_paper,
)
from .trade_offs import beta_sweep, partial_abduction, temperature_sweep, trade_off_images
from .training import train_hvaes
from .truth import TRUTH_METRICS, ZOO_VAES, true_error_table, truth_study, truth_zoo

__all__ = [
    "BLOCKS",
    "C12_GAN",
    "C12_PARTS",
    "TABLE1_FULL_SUPPORT",
    "QUOTES",
    "DIGIT_HUE_ORACLES",
    "FLOAT_ZERO",
    "HueOracle",
    "ORACLE_SEED",
    "PARENTS",
    "RANK_COLUMNS",
    "SCM_TITLES",
    "TRUTH_METRICS",
    "ZOO_VAES",
    "beta_sweep",
    "claims_01",
    "claims_02",
    "claims_03",
    "claims_04",
    "claims_05",
    "colour_digit_blocks",
    "colour_digits_test",
    "commutativity_study",
    "dependence",
    "digit_hue_encoder",
    "figure1",
    "figure1_models",
    "metric_truth_correlations",
    "oracle_families",
    "oracle_quality",
    "partial_abduction",
    "plot_abduction_strip",
    "plot_composition_reversibility",
    "plot_hue_joints",
    "plot_metric_truth",
    "plot_partial_abduction",
    "plot_samples",
    "plot_shape_counterfactuals",
    "plot_si_before_after",
    "plot_support_reports",
    "plot_temperature",
    "plot_temperature_counterfactuals",
    "plot_temperature_traversal",
    "plot_true_counterfactuals",
    "rank_robustness",
    "ranks_versus_paper",
    "table1_versus_paper",
    "sample_do",
    "seed_correlations",
    "seed_diff",
    "score_functions",
    "shapes_study",
    "si_dependence",
    "simulated_interventions",
    "soundness_study",
    "summary_value",
    "table1_configs",
    "table5",
    "trade_off_versus_paper",
    "temperature_sweep",
    "trade_off_images",
    "train_hvaes",
    "true_error_table",
    "truth_study",
    "truth_effectiveness",
    "truth_zoo",
]
