"""Calibration of every test in ``cflib.stats`` and ``cflib.fairness`` on data the chapters never use.

Two studies:

* :func:`cit_lr_dependence_study`: level and power of the regression form of CIT-LR (Ma et al.,
  2024, Sec. 5 and 6.2; :func:`cflib.stats.invariance.cit_lr_test`) against the strength of the
  dependence between the adjustment set ``Z`` and the attribute ``A``, for each of its forms. The data
  (:func:`common_cause_data`) have ``Z`` and ``A`` sharing a common cause, so ``Z`` is a valid
  adjustment set but is not independent of ``A``: the practical case the paper's forms assume away.
* :func:`calibration_table`: for every test (MMD, CF-CLOT at the null boundary with the exact kernel and with
  random Fourier features, CIT-LR in its regression and generator forms, DP, EO, the doubly robust effects'
  intervals and Algorithm 1 of Plecko & Bareinboim), the empirical type-I error or coverage over ``R`` null
  replications with a Clopper-Pearson interval and a pass/fail verdict.

Every replication ``r`` of a case draws from ``numpy.random.default_rng([seed, case_index, r])``:
the numbers depend on the seed only, not on the order or the process the cases run in.

The page's claims (:func:`claims_calibration`) read each rate's Clopper-Pearson interval against
Bradley's liberal band ``[0.5 alpha, 1.5 alpha]`` (:func:`level_band`) with the rules of
:mod:`cflib.verdicts`.

Modules: ``dependence`` (the CIT-LR study), ``cases`` (the cases and their table) and ``claims``.
"""

from .cases import CalibrationCase, CalibrationResult, calibration_cases, calibration_table
from .claims import claims_calibration, deciding_replications, level_band
from .dependence import (
    CIT_FORMS,
    cit_lr_dependence_study,
    common_cause_data,
    plot_dependence_study,
    replication_rng,
)

__all__ = [
    "common_cause_data",
    "CIT_FORMS",
    "cit_lr_dependence_study",
    "plot_dependence_study",
    "replication_rng",
    "CalibrationCase",
    "CalibrationResult",
    "calibration_cases",
    "calibration_table",
    "level_band",
    "deciding_replications",
    "claims_calibration",
]
