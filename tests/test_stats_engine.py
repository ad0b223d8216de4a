"""The resampling engine: exact against dense algebra, float32 within its bound, same p-values as float64."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from cflib.stats.closeness import cfclot_test, gaussian_pair_sample
from cflib.stats.engine import quadratic_forms, rounding_bound, settle_near_ties
from cflib.stats.mmd import mmd_test


def _sym(n: int, seed: int) -> torch.Tensor:
    a = torch.as_tensor(np.random.default_rng(seed).random((n, n)), dtype=torch.float64)
    return a + a.T


@pytest.mark.parametrize("chunk", [1, 7, 50, None])
def test_quadratic_forms_equal_dense_algebra_for_any_chunk(chunk):
    a = _sym(50, 0)
    v = torch.as_tensor(np.random.default_rng(1).normal(size=(50, 9)))
    qf = quadratic_forms(
        lambda i0, i1, out: out.copy_(a[i0:i1]), 50, v, exact=v[:, :2], precision="float64", chunk=chunk
    )
    dense = (v * (a @ v)).sum(0).numpy()
    np.testing.assert_allclose(qf.q, dense, rtol=1e-12)
    np.testing.assert_allclose(qf.q_exact, dense[:2], rtol=1e-12)
    np.testing.assert_allclose(qf.row_sums, a.sum(1).numpy(), rtol=1e-12)
    assert qf.abs_total == pytest.approx(float(a.abs().sum()), rel=1e-12)


def test_float32_error_within_rounding_bound():
    n = 400
    a = _sym(n, 2) - 1.0  # signed entries
    s = torch.as_tensor(np.random.default_rng(3).choice((-1.0, 1.0), size=(n, 300)))
    rows = lambda i0, i1, out: out.copy_(a[i0:i1])  # noqa: E731
    q32 = quadratic_forms(rows, n, s, chunk=64)
    q64 = quadratic_forms(rows, n, s, precision="float64").q
    err = np.abs(q32.q - q64)
    bound = rounding_bound(np.full(300, q32.abs_total), n, q32.dtype)
    assert q32.dtype == "float32" and err.max() > 0  # float32 really was used
    assert (err <= bound).all()


def test_settle_near_ties_recomputes_only_the_ambiguous():
    vals = np.array([0.0, 0.99, 1.0, 1.02, 2.0])
    out, k = settle_near_ties(vals, np.full(5, 0.015), 1.0, lambda idx: np.full(idx.size, -5.0))
    assert k == 2 and out.tolist() == [0.0, -5.0, -5.0, 1.02, 2.0]


@pytest.mark.parametrize("paired", [False, True])
def test_mixed_precision_gives_the_float64_pvalue_even_with_many_ties(paired):
    # binary outputs: a few distinct statistics, so many permutations tie with the observed one exactly
    for seed in range(12):
        rng = np.random.default_rng(seed)
        x = (rng.random(40) < 0.5).astype(float)
        y = (rng.random(40) < 0.5 + 0.02 * seed).astype(float)
        kw = {"paired": paired, "bandwidth": 1.0, "n_permutations": 300, "seed": seed}
        a, b = mmd_test(x, y, **kw), mmd_test(x, y, precision="float64", **kw)
        assert a.pvalue == b.pvalue, seed
        np.testing.assert_allclose(
            a.null_distribution, b.null_distribution, atol=1e-6 * np.abs(b.null_distribution).max()
        )


def test_chunking_does_not_change_the_test():
    rng = np.random.default_rng(5)
    x, y = rng.normal(size=(61, 3)), rng.normal(0.3, 1, size=(47, 3))
    for paired, yy in ((False, y), (True, rng.normal(0.3, 1, size=(61, 3)))):
        ref = mmd_test(x, yy, paired=paired, seed=1, precision="float64")
        for chunk in (1, 13):
            res = mmd_test(x, yy, paired=paired, seed=1, precision="float64", chunk=chunk)
            assert res.pvalue == ref.pvalue and res.statistic == pytest.approx(ref.statistic, rel=1e-12)
            np.testing.assert_allclose(res.null_distribution, ref.null_distribution, rtol=1e-10, atol=1e-15)


def test_cfclot_resampling_pvalues_independent_of_precision_path():
    y, y_cf = gaussian_pair_sample(120, 0.3, seed=4)
    for method in ("signflip", "bootstrap"):
        res = cfclot_test(y, y_cf, 0.0, method=method, n_boot=400, seed=2)
        assert 0 < res.pvalue <= 1 and res.null_distribution.shape == (400,)
    # the sign-flip null of CF-CLOT is mmd_test's paired null on the N-TE scale: same draws, same p-value
    flip = cfclot_test(y, y_cf, 0.0, method="signflip", n_boot=400, seed=2)
    k = flip.kernel
    ref = mmd_test(y, y_cf, paired=True, kernel=k, n_permutations=400, seed=np.random.default_rng(2))
    assert ref.pvalue == pytest.approx(flip.pvalue)


_MEMORY_PROBE = """
import resource, numpy as np, torch
torch.set_num_threads(1)
from cflib.stats.mmd import mmd_test
rng = np.random.default_rng(0)
x, y = rng.normal(size=(4000, 2)), rng.normal(size=(4000, 2))
mmd_test(x[:50], y[:50], n_permutations=5, seed=0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
mmd_test(x, y, n_permutations=20, seed=0, chunk=128)
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


def test_memory_is_linear_in_n_no_full_kernel_matrix():
    out = subprocess.run([sys.executable, "-c", _MEMORY_PROBE], capture_output=True, text=True, check=True)
    grew = int(out.stdout.strip().splitlines()[-1])
    full_matrix = 8000**2 * 8  # 512 MB: what a dense float64 kernel matrix would take
    assert grew < full_matrix / 4, f"peak memory grew by {grew / 2**20:.0f} MiB"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_gives_the_cpu_result():
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=(300, 4)), rng.normal(0.1, 1, size=(280, 4))
    for paired in (False, True):
        yy = rng.normal(0.1, 1, size=(300, 4)) if paired else y
        cpu = mmd_test(x, yy, paired=paired, seed=3, n_permutations=500)
        gpu = mmd_test(x, yy, paired=paired, seed=3, n_permutations=500, device="cuda")
        assert gpu.pvalue == cpu.pvalue
        assert gpu.statistic == pytest.approx(cpu.statistic, rel=1e-10)
        np.testing.assert_allclose(
            gpu.null_distribution, cpu.null_distribution, atol=1e-6 * np.abs(cpu.null_distribution).max()
        )
