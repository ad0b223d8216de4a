"""cflib: counterfactual auditing of machine-learning models.

The package under the book *Counterfactual auditing of machine-learning models*. Every model,
statistical test, metric, data generator and figure helper used by the book's notebooks lives
here; the notebooks only call it. Sub-packages follow the five papers the book covers (see the
book's landing page and ``DESIGN.md``).
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
