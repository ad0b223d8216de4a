"""Audit an image classifier in one call, with its counterfactual generator checked first.

The image audit lives in :mod:`cflib.audit.images` (its pipeline, generator gate, reader and report) with
its config and file readers in :mod:`cflib.audit.config` and :mod:`cflib.audit.loading`; this module keeps
``from cflib.audit_images import ...`` working: :func:`audit_images`, :func:`audit_images_from_config`,
:func:`load_images`, :class:`ImageAuditReport`, :class:`ReusedCounterfactual`, :data:`GATE_DEFAULTS` and
:data:`TRAIN_DEFAULTS`.
"""

from .audit.config import audit_images_from_config
from .audit.images import (
    GATE_DEFAULTS,
    TRAIN_DEFAULTS,
    ImageAuditReport,
    ReusedCounterfactual,
    audit_images,
)
from .audit.loading import load_images

__all__ = [
    "GATE_DEFAULTS",
    "TRAIN_DEFAULTS",
    "ImageAuditReport",
    "ReusedCounterfactual",
    "audit_images",
    "audit_images_from_config",
    "load_images",
]
