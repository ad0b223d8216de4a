"""The experiments of the chapter *Counterfactual invariance test*: pipelines, studies and claims.

Ma, Quinzan, Willem & Bauer, *AI Alignment in Medical Imaging: Unveiling Hidden Biases Through
Counterfactual Analysis*. One module per idea, used by the notebooks of ``notebooks/invariance-test/``
as ``from cflib.experiments import invariance as exp``:

* :mod:`.zoo`: the Table 1 classifier zoo of Sec. 6.2 / App. G.1 (:data:`TABLE1`, :func:`classifier_zoo`,
  :func:`fit_zoo`, :func:`audit_zoo`), with its departures from the paper;
* :mod:`.synthetic`: the synthetic studies, Theorem 4.2 and the ECA identity (notebook 01) and the
  Figure 2 protocol (notebook 02);
* :mod:`.calibration_power`: calibration, power and the parity counterexamples (notebook 03,
  :func:`simulate_cit_pvalues`);
* :mod:`.cxr_zoo`: the toy chest X-ray CNN zoo of Sec. 6.3, Table 6 (notebook 04, :func:`one_vs_rest_auc`)
  and the zoo audit of Figures 3-4 and 8-12 (notebook 06, :func:`train_zoo`, :func:`audit_cnn_zoo`);
* :mod:`.diffusion`: the latent-diffusion counterfactuals measured against the truth (notebook 05);
* :mod:`.tables` and :mod:`.figures`: the chapter's tables and figures;
* :mod:`.claims` (notebooks 01-03 and 07) and :mod:`.claims_images` (notebooks 04-06): ``claims_01`` ...
  ``claims_07``, each notebook's claim verdicts, decided on intervals (:mod:`cflib.verdicts`) with the
  helpers and the paper's words of :mod:`.decisions`.
"""

from __future__ import annotations

from .calibration_power import (
    PARITY_MODELS,
    calibration_study,
    parity_counterexamples,
    power_study,
    simulate_cit_pvalues,
    trained_model,
)
from .claims import claims_01, claims_02, claims_03, claims_07
from .claims_images import PAPER_MINE_LAMBDA, claims_04, claims_05, claims_06
from .cxr_zoo import AUDIT_TESTS, CNNZooMember, audit_cnn_zoo, one_vs_rest_auc, train_zoo
from .decisions import difference_interval, panel_bootstrap
from .diffusion import (
    beta_vae_counterfactuals,
    check_counterfactuals,
    disentangler_study,
    generation_quality,
    judge_accuracy,
    ldm_counterfactual,
    quality_table,
    train_judges,
    variance_control,
)
from .figures import (
    plot_audit_pvalues,
    plot_counterfactual_rows,
    plot_eca_identity,
    plot_factual_vs_counterfactual,
    plot_figure2,
    plot_null_pvalues,
    plot_power,
    plot_training_curves,
    plot_true_counterfactuals,
)
from .synthetic import (
    FIGURE2_TESTS,
    audit_synthetic_zoos,
    eca_identity_study,
    figure2_alignment,
    theorem42_enumeration,
)
from .tables import (
    alignment_pivot,
    counterfactual_checks,
    dataset_overview,
    group_auc_table,
    power_table,
    quality_versus_paper,
    rejection_by_eca,
    rejection_rate_by_form,
    rejection_rates,
    table1,
    table12,
    zoo_table,
    zoo_versus_paper,
)
from .zoo import TABLE1, ZooMember, audit_zoo, classifier_zoo, fit_zoo, make_classifier

__all__ = [
    "TABLE1",
    "ZooMember",
    "make_classifier",
    "classifier_zoo",
    "fit_zoo",
    "audit_zoo",
    "simulate_cit_pvalues",
    "dataset_overview",
    "counterfactual_checks",
    "theorem42_enumeration",
    "eca_identity_study",
    "plot_eca_identity",
    "FIGURE2_TESTS",
    "table1",
    "audit_synthetic_zoos",
    "plot_figure2",
    "figure2_alignment",
    "alignment_pivot",
    "rejection_by_eca",
    "trained_model",
    "calibration_study",
    "plot_null_pvalues",
    "power_study",
    "plot_power",
    "power_table",
    "quality_versus_paper",
    "rejection_rate_by_form",
    "PARITY_MODELS",
    "parity_counterexamples",
    "CNNZooMember",
    "train_zoo",
    "zoo_table",
    "zoo_versus_paper",
    "one_vs_rest_auc",
    "audit_cnn_zoo",
    "plot_true_counterfactuals",
    "train_judges",
    "judge_accuracy",
    "plot_training_curves",
    "ldm_counterfactual",
    "plot_counterfactual_rows",
    "check_counterfactuals",
    "disentangler_study",
    "beta_vae_counterfactuals",
    "generation_quality",
    "quality_table",
    "variance_control",
    "AUDIT_TESTS",
    "group_auc_table",
    "plot_factual_vs_counterfactual",
    "plot_audit_pvalues",
    "table12",
    "rejection_rates",
    "claims_01",
    "claims_02",
    "claims_03",
    "claims_04",
    "claims_05",
    "claims_06",
    "claims_07",
    "PAPER_MINE_LAMBDA",
    "difference_interval",
    "panel_bootstrap",
]
