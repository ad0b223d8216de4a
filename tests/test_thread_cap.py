"""The thread cap of the fairness estimators reaches scikit-learn's OpenMP runtime in a fresh process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from cflib.fairness.effects import thread_cap

_PROBE = """
from threadpoolctl import threadpool_info
from cflib.fairness.effects import thread_cap
with thread_cap(1):
    # nothing had loaded OpenMP before: the cap must load it and then limit it
    omp = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "openmp"]
print(omp)
"""


def _probe(code: str) -> list[int]:
    """Run ``code`` in a fresh process without OMP_NUM_THREADS; the list of ints it prints last."""
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"},
    )
    return eval(out.stdout.strip().splitlines()[-1])  # a list of ints printed by the probe


def test_thread_cap_limits_openmp_loaded_inside_it():
    counts = _probe(_PROBE)
    assert counts, "scikit-learn's OpenMP runtime should be loaded and capped inside thread_cap"
    assert all(c == 1 for c in counts), counts


def test_thread_cap_rejects_bad_counts():
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError, match="n_threads"), thread_cap(bad):
            pass
    with thread_cap(None):  # None leaves the defaults alone
        pass


_PROBE_LATER = """
from threadpoolctl import threadpool_info
from cflib.fairness.effects import thread_cap
with thread_cap(1):
    pass
import torch  # loads its own OpenMP runtime after the first cap
with thread_cap(1):
    counts = {i["filepath"]: i["num_threads"] for i in threadpool_info()}
print(sorted(counts.values()))
"""


def test_thread_cap_reaches_a_library_loaded_after_its_first_use():
    counts = _probe(_PROBE_LATER)
    assert counts and all(c == 1 for c in counts), counts


def test_thread_cap_scans_the_libraries_once_while_no_module_is_imported(monkeypatch):
    import threadpoolctl

    from cflib.fairness import effects

    made = []
    real = threadpoolctl.ThreadpoolController
    monkeypatch.setattr(threadpoolctl, "ThreadpoolController", lambda: made.append(1) or real())
    effects._CONTROLLER.clear()
    for _ in range(3):
        with thread_cap(1):
            pass
    assert len(made) == 1
