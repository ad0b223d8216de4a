"""Audit your own model in one call: causal fairness, counterfactual invariance and closeness, with provenance.

:func:`audit` runs the book's methods on a user's model and data and returns an :class:`AuditReport`:

- always: TV and Ctf-DE/IE/SE of the prediction and of the true outcome (doubly robust, Plecko &
  Bareinboim, Def. 3 and Props. 3-4; chapter *parity-decomposition*), Algorithm 1 of the same paper
  (causal predictive parity under a business-necessity set) when the outcome is present, and the
  demographic-parity and equal-opportunity tests (Ma et al., eqs. 5-6; chapter *invariance-test*);
- with a ``counterfactual`` model (anything implementing :class:`cflib.scm.CounterfactualModel`, or a
  function ``frame -> frame`` giving each unit's counterfactual under ``do(x = other level)``): the
  expected counterfactual accuracy (ECA), CF-CLOT (Fu et al., Eq. 7; chapter *closeness-test*) on the
  factual and counterfactual predictions, and, with an adjustment set ``z``, CIT-LR (Ma et al., Alg. 1,
  with the debiased form that stays valid when ``z`` depends on ``x``).

Every row of the report has an estimate or statistic, an interval or p-value, a verdict in words, the
method and the chapter it comes from. The JSON (:meth:`AuditReport.to_json`, schema
``cflib/audit_schema.json``, versioned) and the HTML page (:meth:`AuditReport.to_html`: one
self-contained file, figures inline, no network) carry provenance: a sha256 of the data, a hash of the
model, the cflib version, seed, device, environment and wall time. The same seed gives the same
report, byte for byte, apart from the time stamps.

The package, one idea a module:

- :mod:`~cflib.audit.tabular`: :func:`audit` and its stages;
- :mod:`~cflib.audit.inputs`: the tabular audit's arguments, missing values, outcome and predictions, checked;
- :mod:`~cflib.audit.comparison`: every check of one comparison (effects, Algorithm 1, parity tests,
  ECA, CF-CLOT, CIT-LR);
- :mod:`~cflib.audit.report`: :class:`AuditReport`, its summary and its renderings (JSON, HTML, model card,
  JUnit);
- :mod:`~cflib.audit.checks`: the check names, ``--fail-on`` selection and each row's book page;
- :mod:`~cflib.audit.schema`: the report's JSON schema and its version;
- :mod:`~cflib.audit.provenance`: the cflib version, environment and hashes a report records;
- :mod:`~cflib.audit.loading` and :mod:`~cflib.audit.config`: the files a YAML config names, and
  :func:`audit_from_config` (``cflib audit``);
- :mod:`~cflib.audit.distributed`: :func:`audit_distributed`, the audit of a Dask DataFrame (issue 30), with
  :mod:`~cflib.audit.partitions` (its per-partition passes), :mod:`~cflib.audit.reproducible` (row hashes and
  exact sums, so the numbers do not depend on the partitioning) and :mod:`~cflib.audit.distributed_tables`
  (its tables); :func:`audit` hands a Dask DataFrame to it, and both return an :class:`AuditReport`
  (``DistributedAudit`` is a deprecated alias of it);
- :mod:`~cflib.audit.settings` (:class:`AuditSettings`, the options every form shares),
  :mod:`~cflib.audit.rows` (every row built from its test's result) and :mod:`~cflib.audit.intersections`
  (group tables from counts, intersectional groups);
- :mod:`cflib.audit.images`: the image audit (:func:`audit_images`, also importable from :mod:`cflib.audit_images`).
"""

from .checks import CHECKS, book_url, reference_link, select_checks
from .config import audit_from_config
from .distributed import audit_distributed
from .distributed_tables import DistributedAudit
from .images import audit_images
from .report import AuditReport
from .schema import SCHEMA_VERSION, load_schema
from .settings import AuditSettings
from .tabular import audit

__all__ = [
    "CHECKS",
    "SCHEMA_VERSION",
    "AuditReport",
    "AuditSettings",
    "DistributedAudit",
    "audit",
    "audit_distributed",
    "audit_from_config",
    "audit_images",
    "book_url",
    "load_schema",
    "reference_link",
    "select_checks",
]
