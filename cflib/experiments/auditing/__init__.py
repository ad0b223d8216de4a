"""Experiments of the chapter *Audit your own model*: the reader's models on COMPAS and Adult, the image zoo, and the claims.

The chapter shows :func:`cflib.audit.audit` on models a practitioner would train, and checks that the
one-call report reproduces the numbers the chapters compute by hand; its image section runs
:func:`cflib.audit_images.audit_images` on the invariance chapter's toy chest X-ray zoo. One idea a module:

* :mod:`~cflib.experiments.auditing.tabular`: :data:`ADULT_SFM` and :func:`prepare_adult` (UCI Adult under the
  standard fairness model), :func:`compas_model` and :func:`adult_model` (the models the reader trains, both
  reading the protected attribute), :func:`report_frame` (the rendered HTML report as an inline frame for the
  book page) and :func:`audit_benchmark`;
* :mod:`~cflib.experiments.auditing.conformance` (notebook 02): :data:`PAPER_COMPAS` and :func:`paper_tv_band`,
  :func:`faircause_table` (the audit's COMPAS effects beside the paper's, computed with faircause),
  :data:`AEQUITAS_COMPAS`, :func:`compas_by_race` and :func:`aequitas_table` (the group table beside the
  Aequitas COMPAS example's counts and rates) and :func:`direct_rates`;
* :mod:`~cflib.experiments.auditing.figures`: :func:`plot_faircause` and :func:`plot_error_rates`;
* :mod:`~cflib.experiments.auditing.images` (notebook 03): :func:`audit_set`, :func:`cldm_generator`,
  :class:`TrueCounterfactual`, :func:`identity_counterfactual`, :func:`group_reader` and :func:`zoo_summary`;
* :mod:`~cflib.experiments.auditing.claims`: :func:`claims_01`, :func:`claims_02` and :func:`claims_03`, the
  verdicts of the three notebooks.
"""

from .claims import claims_01, claims_02, claims_03
from .conformance import (
    AEQUITAS_COMPAS,
    PAPER_COMPAS,
    aequitas_table,
    compas_by_race,
    direct_rates,
    faircause_table,
    paper_tv_band,
)
from .figures import plot_error_rates, plot_faircause
from .images import (
    GROUPS_AUDITED,
    CLDMCounterfactual,
    TrueCounterfactual,
    audit_set,
    cldm_generator,
    group_reader,
    identity_counterfactual,
    zoo_summary,
)
from .tabular import (
    ADULT_SFM,
    adult_model,
    audit_benchmark,
    compas_model,
    prepare_adult,
    report_frame,
)

__all__ = [
    "ADULT_SFM",
    "PAPER_COMPAS",
    "AEQUITAS_COMPAS",
    "prepare_adult",
    "compas_model",
    "adult_model",
    "report_frame",
    "audit_benchmark",
    "paper_tv_band",
    "claims_01",
    "compas_by_race",
    "aequitas_table",
    "faircause_table",
    "direct_rates",
    "plot_faircause",
    "plot_error_rates",
    "claims_02",
    "GROUPS_AUDITED",
    "audit_set",
    "cldm_generator",
    "CLDMCounterfactual",
    "TrueCounterfactual",
    "identity_counterfactual",
    "group_reader",
    "zoo_summary",
    "claims_03",
]
