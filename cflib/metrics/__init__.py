"""Metrics for counterfactual models: axioms (composition, reversibility, effectiveness), realism, minimality.

Import from the submodules (``from cflib.metrics.axioms import composition``).
"""
