"""Audit an image classifier in one call, with its counterfactual generator checked first.

:func:`audit_images` is :func:`cflib.audit.audit` for a classifier that reads images. Its counterfactuals
come from a generator (a counterfactual function ``f(x, pa, pa*)`` in the sense of Monteiro et al., ICLR
2023, Sec. 3.1; a :class:`cflib.scm.CounterfactualModel`; or the book's CLDM+D trained on the images, Ma
et al., Sec. 3.2, chapter *invariance-test*), and no classifier is called invariant on the word of a
generator that fails its own soundness checks. The report (the :class:`cflib.audit.AuditReport` of the
tabular audit) holds:

- **the generator gate**, computed first: composition (Monteiro et al., eq. 1: the null intervention
  ``f(x, pa, pa)`` must leave the image alone), reversibility (eq. 2: ``f(f(x, pa, pa*), pa*, pa)`` must
  give the image back) and effectiveness (eq. 3: an attribute reader must read the intervened level from
  the counterfactual), each with an interval over images and a pass/fail against documented thresholds
  (:data:`GATE_DEFAULTS`; the chapter *auditing* justifies them);
- **the counterfactual rows** when the gate passes: the expected counterfactual accuracy (ECA, Ma et al.,
  eqs. 7-8, Wilson interval), CF-CLOT on the factual and counterfactual scores (Fu et al., Eq. 7) and the
  doubly robust CIT-LR (Ma et al., Alg. 1, with the non-sensitive content ``z`` given as columns or
  computed from the generator's images with the attribute held at one level). When the gate fails, each
  of them is ``not estimable`` and says which axiom failed, with its estimate, interval and threshold;
- **the observational rows**, which need no generator: demographic parity and equal opportunity (Ma et
  al., eqs. 5-6) as differences of group rates with intervals and Welch p-values, and the accuracy per
  group when the outcome is given;
- a figure of the gate and of the units whose decision the intervention moves most (factual,
  counterfactual and their difference), and provenance: the data, classifier, generator and reader
  hashes, the gate thresholds, the device.

The subpackage, one idea a module: :mod:`~cflib.audit.images.pipeline` (:func:`audit_images` and its stages),
:mod:`~cflib.audit.images.inputs` (the images, attributes and classifier, checked),
:mod:`~cflib.audit.images.generator` (the generator and :class:`ReusedCounterfactual`),
:mod:`~cflib.audit.images.reader` (the attribute reader), :mod:`~cflib.audit.images.gate` (the generator gate),
:mod:`~cflib.audit.images.rows` (the other rows) and :mod:`~cflib.audit.images.report` (:class:`ImageAuditReport`).
Images and configs are read by :mod:`cflib.audit.loading` and :mod:`cflib.audit.config`.
"""

from .gate import GATE_DEFAULTS
from .generator import TRAIN_DEFAULTS, ReusedCounterfactual
from .pipeline import audit_images
from .report import ImageAuditReport

__all__ = ["GATE_DEFAULTS", "TRAIN_DEFAULTS", "ImageAuditReport", "ReusedCounterfactual", "audit_images"]
