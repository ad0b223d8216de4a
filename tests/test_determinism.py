"""Same seed, same numbers: two notebooks executed twice from a clean cache record identical values (issue 15).

The two executions differ in everything that must not matter: the output folder (so nothing is
reused), the hash seed of the kernel's Python (set and dict-of-str order) and the number of BLAS/OpenMP
threads. Any recorded value or claim that differs between them is a reproducibility bug.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cflib import runner

NOTEBOOKS = ["foundations/01-counterfactuals-in-three-steps.ipynb", "invariance-test/07-cit-lr-under-dependence.ipynb"]
ENVIRONMENTS = [{"PYTHONHASHSEED": "1", "OMP_NUM_THREADS": "1"}, {"PYTHONHASHSEED": "4242", "OMP_NUM_THREADS": "2"}]


def _recorded(out: Path, notebook: str) -> dict:
    data = json.loads((out / Path(notebook).with_suffix(".claims.json")).read_text())
    return {"values": data["values"], "claims": [(c["key"], c["ours"], c["verdict"]) for c in data["claims"]]}


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_two_clean_runs_record_the_same_values(notebook, tmp_path, monkeypatch):
    runs = []
    for i, env in enumerate(ENVIRONMENTS):
        for key, value in env.items():
            monkeypatch.setenv(key, value)  # inherited by the kernel, which starts after this
        out = tmp_path / f"run{i}"
        result = runner.execute(notebook, "smoke", output_dir=out, force=True)
        assert result.status == "executed"
        runs.append(_recorded(out, notebook))
    assert runs[0]["claims"], "the notebook records claims"
    assert runs[0] == runs[1]


def test_cpu_kernels_key_the_notebook_cache(monkeypatch):
    """A warm build must not reuse a notebook executed where torch's kernels use another instruction set."""
    nb = NOTEBOOKS[0]
    one = runner.cache_key(nb, "smoke", {})
    monkeypatch.setattr(runner, "cpu_kernels", lambda: "x86_64 OTHER")
    assert runner.cache_key(nb, "smoke", {}) != one


def test_thread_count_is_set_in_the_kernel_and_keys_the_cache(monkeypatch):
    """A warm build must not reuse a notebook executed with another BLAS thread count (some float sums
    depend on it), and every kernel gets the count explicitly."""
    nb = NOTEBOOKS[0]
    monkeypatch.delenv("CFLIB_THREADS", raising=False)
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    one = runner.cache_key(nb, "smoke", {})
    assert (
        runner.kernel_threads() == 1
        and "os.environ['OMP_NUM_THREADS'] = '1'" in runner._injected_cell(nb, "smoke", Path("c"), None).source
    )
    monkeypatch.setenv("CFLIB_THREADS", "3")  # wins over OMP_NUM_THREADS
    assert runner.kernel_threads() == 3 and runner.cache_key(nb, "smoke", {}) != one
    assert "os.environ['OPENBLAS_NUM_THREADS'] = '3'" in runner._injected_cell(nb, "smoke", Path("c"), None).source
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("CFLIB_THREADS", bad)
        with pytest.raises(ValueError, match="CFLIB_THREADS must be a whole number >= 1"):
            runner.kernel_threads()
