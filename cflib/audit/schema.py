"""The JSON schema of an audit report: its version and the file every :meth:`AuditReport.to_json` satisfies.

The schema lives in ``cflib/audit_schema.json`` (package data), beside this package.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["SCHEMA_VERSION", "load_schema"]

#: Version of the report's JSON schema (``cflib/audit_schema.json``); bumped on any change to its shape.
SCHEMA_VERSION = "2.1"  # 1.1: image audits add provenance entries; 2.0: every check has a status against a tolerance;
# 2.1: distributed audits (provenance kind "distributed"), intersectional groups (group status), pass timings
_SCHEMA_FILE = Path(__file__).resolve().parent.parent / "audit_schema.json"


def load_schema() -> dict[str, Any]:
    """The JSON schema every :meth:`AuditReport.to_json` file satisfies.

    Returns
    -------
    dict
    """
    return json.loads(_SCHEMA_FILE.read_text())
