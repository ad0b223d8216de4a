"""Experiments of the chapter *Predictive and statistical parity* (Plecko & Bareinboim, arXiv 2306.05059).

The chapter's studies over repeated samples, the tables and figures its notebooks show, and one
``claims_<nn>`` function per notebook that turns the notebook's results into claim verdicts. A notebook
imports the package (``from cflib.experiments import parity as exp``); its modules are:

* :mod:`~cflib.experiments.parity.tv_decomposition` (notebook 01): :func:`coverage_study`, DR estimates
  on the linear SFM against the closed forms (notes, claim 6); :func:`discrete_identification`, App. B's
  identification formulas on a discrete SFM (Eq. 56's sign); :func:`linearity_gap`;
* :mod:`~cflib.experiments.parity.pp_decomposition` (notebook 02): :func:`a2_three_terms`,
  :func:`corollary1`, :func:`calibration_vs_parity`, Theorem 1, Corollary 1 and Props. 1-2 on true
  counterfactuals; :func:`a2_terms_study`, Theorem 1's integrated terms against ``n`` (App. A.2, Fig. 7)
  and the per-bin Term I against its ground truth (Fig. 8);
* :mod:`~cflib.experiments.parity.cookbook` (notebook 03): :func:`compas_effects`, :func:`algorithm1`,
  COMPAS (Fig. 5, Algorithm 1); :func:`compas_fair_risk`, :func:`compas_truth`, :func:`cookbook_study`,
  the oracle fair predictor, the population truth and Algorithm 1 over repeated samples of the
  COMPAS-like SFM (claims 13-14);
* :mod:`~cflib.experiments.parity.spectrum` (notebook 04): :func:`pareto_study`, :func:`effects_kept`,
  SPM against iPPM along the business-necessity spectrum (Sec. 4, Fig. 6);
* :mod:`~cflib.experiments.parity.tables` (:func:`coverage_table`, :func:`effects_table`,
  :func:`compare_fig5`, :func:`cookbook_summary`, :func:`pareto_front`) and
  :mod:`~cflib.experiments.parity.figures` (:func:`plot_standardised_errors`, :func:`fig5_bars`);
* :mod:`~cflib.experiments.parity.claims`: :func:`claims_01` ... :func:`claims_04`, the verdicts of
  notebooks 01-04, each an estimate with its interval decided by a rule of :mod:`cflib.verdicts` written
  from the paper's words;
* :mod:`~cflib.experiments.parity.common`: the names the study modules share.
"""

from __future__ import annotations

from .claims import (
    EQUIVALENCE_MARGIN,
    claims_01,
    claims_02,
    claims_03,
    claims_04,
)
from .cookbook import (
    COMPAS_OUTCOMES,
    PAPER_FIG5,
    PAPER_FIG5_HALFWIDTH,
    algorithm1,
    compas_effects,
    compas_fair_risk,
    compas_truth,
    cookbook_study,
)
from .figures import (
    fig5_bars,
    plot_standardised_errors,
)
from .pp_decomposition import (
    A2_PARENTS,
    a2_terms_study,
    a2_three_terms,
    calibration_vs_parity,
    corollary1,
    efficient_ctf_gap,
    fig8_arrays,
    fig8_within_1sd,
    make_transport_learner,
)
from .spectrum import (
    effects_kept,
    pareto_study,
)
from .tables import (
    compare_fig5,
    cookbook_summary,
    coverage_table,
    effects_table,
    pareto_front,
)
from .tv_decomposition import (
    coverage_study,
    discrete_identification,
    linearity_gap,
)

__all__ = [
    "A2_PARENTS",
    "COMPAS_OUTCOMES",
    "PAPER_FIG5",
    "PAPER_FIG5_HALFWIDTH",
    "EQUIVALENCE_MARGIN",
    "coverage_study",
    "coverage_table",
    "plot_standardised_errors",
    "discrete_identification",
    "linearity_gap",
    "a2_three_terms",
    "corollary1",
    "calibration_vs_parity",
    "efficient_ctf_gap",
    "make_transport_learner",
    "a2_terms_study",
    "fig8_arrays",
    "fig8_within_1sd",
    "compas_effects",
    "effects_table",
    "compas_fair_risk",
    "compas_truth",
    "fig5_bars",
    "compare_fig5",
    "algorithm1",
    "cookbook_study",
    "cookbook_summary",
    "pareto_study",
    "pareto_front",
    "effects_kept",
    "claims_01",
    "claims_02",
    "claims_03",
    "claims_04",
]
