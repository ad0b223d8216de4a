"""Benchmark: cflib's MMD permutation test against hyppo, and the vectorised N-TE bootstrap against a loop.

Backs the speed claims of the ``closeness-test`` chapter (Fu et al. 2025, CF-CLOT; the MMD test is its
``epsilon = 0`` case). hyppo is not a dependency of cflib; run this in a separate environment::

    python3 -m venv /tmp/benchvenv
    /tmp/benchvenv/bin/pip install torch==2.13.0
    /tmp/benchvenv/bin/pip install -e . hyppo
    /tmp/benchvenv/bin/python benchmarks/bench_mmd.py            # writes benchmarks/results/bench_mmd.json

Both libraries get the same data (n = m = 1000, d = 5), the same Gaussian kernel with the same
bandwidth (the median heuristic, passed to hyppo as ``gamma = 1 / (2 s^2)``), the biased statistic
(hyppo's ``bias=True``, which its docs show equals MMD^2_b) and 1000 permutations. hyppo's numba code
is compiled on a small warm-up call first, so compile time is not counted.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np


def _timed(fn, repeat: int = 1):
    best, out = np.inf, None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def bench_mmd(n: int, d: int, reps: int, seed: int) -> dict:
    """cflib.stats.mmd.mmd_test vs hyppo.ksample.MMD().test on identical inputs."""
    from hyppo.ksample import MMD

    from cflib.stats.kernels import median_bandwidth
    from cflib.stats.mmd import mmd_test

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    y = rng.normal(size=(n, d))
    y[:, 0] += 0.08  # a small shift: p-values away from both ends, so agreement is informative
    s = median_bandwidth(x, y, max_n=2 * n)
    gamma = 1.0 / (2 * s * s)
    # warm-ups: numba compilation for hyppo, thread pools for torch
    MMD(compute_kernel="gaussian", bias=True, gamma=gamma).test(x[:20], y[:20], reps=10, auto=False, random_state=0)
    mmd_test(x[:20], y[:20], bandwidth=s, n_permutations=10, seed=0)
    ours, t_ours = _timed(lambda: mmd_test(x, y, bandwidth=s, n_permutations=reps, seed=seed, estimator="biased"), repeat=3)
    (stat_h, p_h), t_h = _timed(
        lambda: MMD(compute_kernel="gaussian", bias=True, gamma=gamma).test(x, y, reps=reps, workers=1, auto=False, random_state=seed)
    )
    # hyppo's MMD statistic is not MMD^2 itself: it is 2 n^2 m^2 / N^4 times the biased, square-rooted
    # distance correlation between the pooled kernel and the group labels (hyppo.independence.Hsic).
    # For n = m this works out to sqrt(MMD^2_b / (4 ||H K H||_F / N)) / 8 with H the centring matrix, so
    # hyppo's value is predicted exactly from cflib's MMD^2_b and the pooled Gram matrix.
    from cflib.stats.kernels import GaussianKernel

    kz = GaussianKernel(s).gram(np.vstack([x, y])).numpy()
    big_n = kz.shape[0]
    hk = kz - kz.mean(0, keepdims=True) - kz.mean(1, keepdims=True) + kz.mean()
    predicted = float(np.sqrt(ours.statistic / (4 * np.linalg.norm(hk) / big_n)) / 8)
    p = 0.5 * (ours.pvalue + p_h)
    mc_se = float(np.sqrt(2 * p * (1 - p) / reps))  # s.e. of the difference of two independent MC p-values
    return {
        "n": n, "m": n, "d": d, "n_permutations": reps, "bandwidth": s,
        "statistic_cflib": ours.statistic, "statistic_hyppo": float(stat_h),
        "statistic_hyppo_predicted_from_cflib": predicted,
        "statistic_abs_diff": abs(predicted - float(stat_h)),
        "pvalue_cflib": ours.pvalue, "pvalue_hyppo": float(p_h),
        "pvalue_diff_in_mc_se": abs(ours.pvalue - float(p_h)) / mc_se if mc_se > 0 else 0.0,
        "seconds_cflib": t_ours, "seconds_hyppo": t_h, "speedup": t_h / t_ours,
    }


def bench_bootstrap(m: int, draws: int, loop_recompute_draws: int, seed: int) -> dict:
    """N-TE bootstrap: all draws as one matrix product vs a plain Python loop over draws."""
    import torch

    from cflib.stats.closeness import (
        _pair_stats,
        _resample_null,
        cfclot_test,
        gaussian_pair_sample,
        nte,
    )
    from cflib.stats.kernels import GaussianKernel

    y, y_cf = gaussian_pair_sample(m, 1.3, seed=seed)
    k = GaussianKernel().fit(y, y_cf)
    res, t_test = _timed(lambda: cfclot_test(y, y_cf, 0.1, kernel=k, method="bootstrap", n_boot=draws, seed=seed), repeat=2)
    ps = _pair_stats(y, y_cf, k, "cpu")
    # the bootstrap draws alone: all weight vectors in a few matrix products
    _, t_vec = _timed(lambda: _resample_null(ps, res.statistic, 0.1, "bootstrap", draws, np.random.default_rng(seed)), repeat=2)
    # the same weights and the same algebra, one draw at a time (what a direct transcription does)
    h, d = ps.h.clone().numpy(), ps.d.clone().numpy()
    np.fill_diagonal(h, 0.0)
    np.fill_diagonal(d, 0.0)
    rng = np.random.default_rng(seed)

    def loop():
        out = np.empty(draws)
        for b in range(draws):
            w = rng.multinomial(m, np.full(m, 1.0 / m)).astype(float)
            out[b] = (w @ h @ w) / (w @ d @ w)
        return out

    _, t_loop = _timed(loop)
    # the naive script: resample the units and recompute the kernel matrices for every draw
    rng2 = np.random.default_rng(seed)

    def loop_recompute():
        for _ in range(loop_recompute_draws):
            idx = rng2.integers(0, m, m)
            nte(y[idx], y_cf[idx], kernel=k)

    _, t_rec = _timed(loop_recompute)
    per_draw_rec = t_rec / loop_recompute_draws
    # check the vectorised replicates against the loop with identical weights
    g = np.random.default_rng(1)
    vec = _resample_null(ps, res.statistic, 0.1, "bootstrap", 5, g)
    g = np.random.default_rng(1)
    w = g.multinomial(m, np.full(m, 1.0 / m), size=5).astype(float)
    ref = 0.1 + np.array([(wi @ h @ wi) / (wi @ d @ wi) for wi in w]) - res.statistic
    return {
        "m": m, "n_boot": draws, "seconds_full_test": t_test, "seconds_vectorised": t_vec, "seconds_loop_same_algebra": t_loop,
        "speedup_vs_loop": t_loop / t_vec,
        "seconds_per_draw_loop_recompute_kernel": per_draw_rec,
        "speedup_vs_recompute_loop": per_draw_rec * draws / t_test,
        "max_abs_diff_vectorised_vs_loop": float(np.max(np.abs(vec - ref))),
        "torch_threads": torch.get_num_threads(),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--d", type=int, default=5)
    ap.add_argument("--reps", type=int, default=1000)
    ap.add_argument("--boot-m", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "bench_mmd.json"))
    args = ap.parse_args()
    result = {
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "load_average_at_start": list(os.getloadavg())},
        "mmd_vs_hyppo": bench_mmd(args.n, args.d, args.reps, args.seed),
        "nte_bootstrap": bench_bootstrap(args.boot_m, args.reps, 50, args.seed),
    }
    try:
        from importlib.metadata import version

        result["machine"]["hyppo"] = version("hyppo")
        result["machine"]["torch"] = version("torch")
    except Exception:  # pragma: no cover - versions are informative only
        pass
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(result, indent=1))
    os.replace(tmp, out)  # atomic: a crash never leaves a half-written result
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
