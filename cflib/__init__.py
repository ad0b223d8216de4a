"""cflib: counterfactual auditing of machine-learning models.

The package under the book *Counterfactual auditing of machine-learning models*. Every model,
statistical test, metric, data generator and figure helper used by the book's notebooks lives
here; the notebooks only call it. Sub-packages follow the five papers the book covers (see the
book's landing page and ``DESIGN.md``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["CflibWarning", "__version__"]

if TYPE_CHECKING:
    from .validation import CflibWarning


def __getattr__(name: str) -> Any:
    # Imported on first use, so that `import cflib` stays light (cflib.validation imports numpy).
    if name == "CflibWarning":
        from .validation import CflibWarning

        return CflibWarning
    raise AttributeError(f"module 'cflib' has no attribute {name!r}")
