"""Experiments of the chapter *Testing for causal fairness* (Fu et al. 2025, CF-CLOT): audits, studies and claims.

The auditing pipeline of the paper: Definition 1 (the factual outputs ``f(A_s, A_c)`` and the
counterfactual outputs ``f(A_s \\ a_t, do(a_t -> a_t'), A_c)`` of a trained model), Eq. 7
(epsilon-counterfactual closeness fairness for every sensitive attribute) and the experimental
protocol of Sec. 5.1 (SAA: all attributes; SSA: no sensitive attribute; SFA-eps: drop only the
attributes CF-CLOT flags at tolerance ``eps``); the simulation studies of notebooks 01, 02 and 04
(closed forms, calibration and power, what epsilon tolerates); and one ``claims_<nn>`` function per
notebook that turns its results into claim verdicts. A notebook imports the package
(``from cflib.experiments import closeness as exp``); its modules are:

* :mod:`~cflib.experiments.closeness.audit`: interventions on a fitted model (:func:`intervene`,
  :func:`counterfactual_outputs`, :func:`counterfactual_gap`), attribute screening
  (:func:`screen_attributes`) and the SAA / SSA / SFA-eps protocol (:func:`audit_feature_sets`,
  :func:`audit_tabular`);
* :mod:`~cflib.experiments.closeness.scm_method`: CF-CLOT against an SCM method (the paper's Fig. 6) on a
  synthetic credit SCM with a known graph (:func:`scm_credit`, :func:`interventional_gap`,
  :func:`scm_method_comparison`);
* :mod:`~cflib.experiments.closeness.nte_mmd`: the studies of notebook 01 (closed forms, identities,
  Hoeffding's bound);
* :mod:`~cflib.experiments.closeness.calibration_power`: the studies of notebook 02 (z-scores at the
  boundary, type-I error, power, the epsilon = 0 test);
* :mod:`~cflib.experiments.closeness.epsilon`: the studies of notebook 04 (rate gaps, bandwidth, flip
  against set-to-value, the LLM example);
* :mod:`~cflib.experiments.closeness.tables` and :mod:`~cflib.experiments.closeness.figures`: the
  tables and figures the notebooks show;
* :mod:`~cflib.experiments.closeness.claims`: :func:`claims_01` ... :func:`claims_05`, the verdicts of
  notebooks 01-05 (notebook 05's linear-time MMD study itself lives in :mod:`cflib.stats.mmd_linear`).

The paper leaves the intervention undefined ("removing sensitive attributes or converting them into
noise"); here it is explicit (notes, Sec. 7 item 3): ``"flip"`` swaps the two levels of a binary
attribute, a value sets every unit to that level, ``"resample"`` redraws the attribute from its
marginal (noise), and a callable does anything else. Other features are held fixed: this is the
model-level flip test, not a counterfactual through an SCM. The "unfairness" of the experiments is
also undefined (notes, item 14); :func:`counterfactual_gap` uses the mean absolute change of the
predicted probability under the intervention, averaged over the sensitive attributes.
"""

from __future__ import annotations

from .audit import (
    AuditResult,
    ScreeningResult,
    audit_feature_sets,
    audit_tabular,
    counterfactual_gap,
    counterfactual_outputs,
    intervene,
    screen_attributes,
)
from .calibration_power import (
    EPS0_METHODS,
    boundary_bootstrap,
    boundary_zscores,
    eps0_study,
    ks_normality,
    power_point,
    power_study,
    type1_study,
)
from .claims import (
    claims_01,
    claims_02,
    claims_03,
    claims_03_scm,
    claims_04,
    claims_05,
)
from .epsilon import (
    R_VALUES,
    bandwidth_study,
    direction_study,
    epsilon_gap_tables,
    flip_vs_set_study,
    llm_example,
)
from .figures import (
    plot_audit_grid,
    plot_bandwidth_study,
    plot_closed_form,
    plot_concentration,
    plot_flip_vs_set,
    plot_output_histograms,
    plot_power,
    plot_type1,
    plot_zscore_qq,
)
from .nte_mmd import (
    closed_form_max_z,
    closed_form_study,
    concentration_study,
    estimator_identities,
    normalisation_table,
)
from .scm_method import (
    SCM_FEATURES,
    SCM_SENSITIVE,
    SCMComparison,
    interventional_gap,
    scm_credit,
    scm_method_comparison,
)
from .tables import (
    audit_tables,
    tasks_table,
)

__all__ = [
    "intervene",
    "counterfactual_outputs",
    "counterfactual_gap",
    "screen_attributes",
    "ScreeningResult",
    "audit_feature_sets",
    "AuditResult",
    "plot_output_histograms",
    "normalisation_table",
    "closed_form_study",
    "closed_form_max_z",
    "plot_closed_form",
    "estimator_identities",
    "concentration_study",
    "plot_concentration",
    "claims_01",
    "boundary_zscores",
    "ks_normality",
    "plot_zscore_qq",
    "type1_study",
    "plot_type1",
    "power_study",
    "plot_power",
    "power_point",
    "EPS0_METHODS",
    "eps0_study",
    "boundary_bootstrap",
    "claims_02",
    "audit_tabular",
    "tasks_table",
    "plot_audit_grid",
    "audit_tables",
    "claims_03",
    "SCM_SENSITIVE",
    "SCM_FEATURES",
    "scm_credit",
    "interventional_gap",
    "scm_method_comparison",
    "SCMComparison",
    "claims_03_scm",
    "R_VALUES",
    "epsilon_gap_tables",
    "bandwidth_study",
    "plot_bandwidth_study",
    "direction_study",
    "flip_vs_set_study",
    "plot_flip_vs_set",
    "llm_example",
    "claims_04",
    "claims_05",
]
