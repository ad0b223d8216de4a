"""Benchmarks of cflib against peer libraries; run with ``python -m benchmarks run``."""
