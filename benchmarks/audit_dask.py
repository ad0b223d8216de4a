"""The audit of a Dask DataFrame from 10^5 to 10^7 rows (issue 30): ``python -m benchmarks audit-dask``.

Rows of the linear SFM of :func:`cflib.data.fairness_sim.linear_sfm` are generated **on the workers**, partition
by partition (:func:`dask.dataframe.from_map`; partition ``i`` is drawn from ``SeedSequence([seed, i])``), so no
process ever holds the 10^7 rows. A linear model fitted on other rows of the same SFM is audited by
:func:`cflib.audit.audit_distributed` on a LocalCluster of two single-threaded workers with a memory limit of 4 GB
each, started afresh for every size (one benchmark process per size). Measured: the wall time of the audit and
of each of its stages, the peak memory of each worker (its resident set size sampled twice a second, and the
kernel's ``ru_maxrss`` at the end), the client process's peak, and the estimates with their intervals beside the
truth of the SFM (:func:`cflib.data.fairness_sim.linear_sfm_truth`; for the model's prediction, the same closed
form with the model's coefficients).

Beside it, in its own fresh process, the in-memory audit (:func:`cflib.audit.audit`, and the effects alone,
:func:`cflib.fairness.effects.ctf_effects`) of the same rows, where they fit in one process (10^5 and 10^6 rows),
with the same learner, folds, replicates and two cores (the in-memory audit fits its folds in two processes).

And the direct effect at 10^6 rows (issue 30, item 4): the estimand computed by Monte Carlo from the SFM's own
structural equations (each unit's counterfactuals with its own noise,
:func:`cflib.data.fairness_sim.linear_sfm_counterfactuals`), the doubly robust estimate with fitted nuisances and
with the SFM's true nuisances on the same rows, and replications over fresh samples (bias, spread, coverage).
"""

from __future__ import annotations

import logging
import os
import resource
import statistics
import threading
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from cflib.data.fairness_sim import LinearSFMParams, linear_sfm, linear_sfm_counterfactuals, linear_sfm_truth
from cflib.fairness.sfm import StandardFairnessModel

PARAMS = LinearSFMParams()
SFM = StandardFairnessModel("x", ["z"], ["w"], "y")
#: Rows of the audit's benchmark: the scaling curve.
SIZES = (100_000, 1_000_000, 10_000_000)
#: Largest partition (10^7 rows: 40 partitions); smaller sizes are split in four.
ROWS_PER_PARTITION = 250_000
#: The audit's settings, the same at every size and for the in-memory audit (whose folds are always 5).
SETTINGS: dict[str, Any] = {"n_boot": 200, "learner": "linear", "seed": 0}
N_FOLDS = 5
#: The distributed audit's own settings.
DASK_SETTINGS: dict[str, Any] = {"key": "id", "nuisance_rows": 200_000, "n_folds": N_FOLDS}
CLUSTER: dict[str, Any] = {"n_workers": 2, "threads_per_worker": 1, "memory_limit": "4GB"}
MEMORY_LIMIT_BYTES = 4 * 10**9
#: The rows the audited model is fitted on (other rows of the same SFM).
MODEL_ROWS = 100_000
CHECKS = ("TV", "Ctf-DE", "Ctf-IE", "Ctf-SE")
MEASURE_OF = {"TV": "TV", "Ctf-DE": "DE", "Ctf-IE": "IE", "Ctf-SE": "SE"}


def partitions(n: int) -> list[tuple[int, int, int]]:
    """``(index, first id, rows)`` of each partition of ``n`` rows: at most :data:`ROWS_PER_PARTITION` rows, at least 4."""
    k = max(4, -(-n // ROWS_PER_PARTITION))
    bounds = np.linspace(0, n, k + 1).round().astype(int)
    return [(i, int(bounds[i]), int(bounds[i + 1] - bounds[i])) for i in range(k)]


def sfm_partition(part: tuple[int, int, int], seed: int) -> pd.DataFrame:
    """One partition of the benchmark's rows: ``id, x, z, w, y`` drawn from ``SeedSequence([seed, index])``."""
    index, first, rows = part
    frame = linear_sfm(rows, PARAMS, seed=np.random.default_rng(np.random.SeedSequence([seed, index])))
    frame = frame.drop(columns="y_hat")
    frame.insert(0, "id", np.arange(first, first + rows, dtype=np.int64))
    return frame


def sfm_frame(n: int, seed: int) -> Any:
    """The benchmark's ``n`` rows as a Dask DataFrame generated on the workers (nothing is drawn here)."""
    import dask.dataframe as dd

    meta = sfm_partition((0, 0, 2), seed).iloc[:0]
    return dd.from_map(sfm_partition, partitions(n), args=(seed,), meta=meta, enforce_metadata=False)


def sfm_pandas(n: int, seed: int) -> pd.DataFrame:
    """The same ``n`` rows as :func:`sfm_frame`, in one pandas frame (for the in-memory audit)."""
    return pd.concat([sfm_partition(p, seed) for p in partitions(n)], ignore_index=True)


def fitted_model(seed: int) -> Any:
    """The audited model: least squares of ``y`` on ``x, z, w``, fitted on :data:`MODEL_ROWS` other rows."""
    from sklearn.linear_model import LinearRegression

    train = linear_sfm(MODEL_ROWS, PARAMS, seed=np.random.default_rng(np.random.SeedSequence([seed, 10**9])))
    return LinearRegression().fit(train[["x", "z", "w"]], train["y"])


def truths(model: Any) -> dict[str, dict[str, float]]:
    """The SFM's TV and Ctf measures of the outcome, and of the model's prediction (its coefficients in the closed form)."""
    cx, cz, cw = (float(c) for c in model.coef_)
    return {
        "y": linear_sfm_truth(PARAMS),
        "_y_hat": linear_sfm_truth(replace(PARAMS, b_x=cx, b_z=cz, b_w=cw)),
    }


class WorkerMemory:
    """Samples every worker's resident set size in a thread (``client.run``) and keeps each worker's largest."""

    def __init__(self, client: Any, every: float = 0.5) -> None:
        self.client, self.every = client, every
        self.peak: dict[str, int] = {}
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                now = self.client.run(_rss)
            except Exception:  # a worker restarting: the next sample sees its successor
                now = {}
            for worker, rss in now.items():
                self.peak[worker] = max(self.peak.get(worker, 0), int(rss))
            self.samples += 1
            self._stop.wait(self.every)

    def __enter__(self) -> WorkerMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _rss() -> int:
    import psutil

    return int(psutil.Process().memory_info().rss)


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _estimates(effects: dict[str, Any], rows: pd.DataFrame | None, truth: dict[str, dict[str, float]]) -> dict:
    """Each outcome's TV and Ctf measures: estimate, interval, standard error and the truth."""
    out: dict[str, Any] = {}
    for outcome, est in effects.items():
        out[outcome] = {
            m: {
                "estimate": est.estimate[m],
                "ci": [float(est.ci[m][0]), float(est.ci[m][1])],
                "se": est.se[m],
                "truth": truth[outcome][m],
            }
            for m in MEASURE_OF.values()
        }
    if rows is not None and "Ctf-DE (white-box)" in rows.index:
        r = rows.loc["Ctf-DE (white-box)"]
        out["white_box_DE"] = {"estimate": float(r["estimate"]), "truth": truth["_y_hat"]["DE"]}
    return out


def case_audit_dask(p: dict[str, Any]) -> dict[str, Any]:
    """The distributed audit of ``p["n"]`` rows on a fresh LocalCluster of two single-threaded 4 GB workers."""
    from distributed import Client, LocalCluster

    from cflib.audit import audit_distributed

    n, seed, repeats = p["n"], p["seed"], p["repeats"]
    cluster = LocalCluster(processes=True, dashboard_address=None, silence_logs=logging.ERROR, **CLUSTER)
    client = Client(cluster)
    try:
        pids = client.run(os.getpid)
        model = fitted_model(seed)

        def once(frame: Any) -> Any:
            return audit_distributed(model, frame, sfm=SFM, client=client, progress=False, **SETTINGS, **DASK_SETTINGS)

        # Warm-up (the workers' imports, thread pools): the same size, or 10^5 rows where one run must do.
        warm_n = n if repeats > 1 else min(n, SIZES[0])
        t = time.perf_counter()
        once(sfm_frame(warm_n, seed + 1))
        warm_s = time.perf_counter() - t
        data = sfm_frame(n, seed)
        runs, walls = [], []
        with WorkerMemory(client) as mem:
            for _ in range(repeats):
                t = time.perf_counter()
                runs.append(once(data))
                walls.append(time.perf_counter() - t)
        peak_rss = client.run(_maxrss)
        restarted = sorted(set(pids.values()) - set(client.run(os.getpid).values()))
    finally:
        client.close()
        cluster.close()
    res = runs[-1]
    stages = {k: statistics.median(r.timing[k] for r in runs) for k in res.timing if k.endswith("_seconds")}
    same = all(
        np.array_equal(r.rows["estimate"].to_numpy(float), res.rows["estimate"].to_numpy(float), equal_nan=True)
        for r in runs
    )
    return {
        "rows": n,
        "partitions": len(partitions(n)),
        "rows_per_partition": max(r for _, _, r in partitions(n)),
        "settings": {**SETTINGS, **DASK_SETTINGS, "cluster": CLUSTER},
        "repeats": repeats,
        "warm_up_rows": warm_n,
        "warm_up_s": warm_s,
        "wall_s": statistics.median(walls),
        "wall_s_each": walls,
        "stage_s": stages,
        "worker_peak_rss_sampled_bytes": dict(sorted(mem.peak.items())),
        "worker_memory_samples": mem.samples,
        "worker_maxrss_bytes": dict(sorted(peak_rss.items())),
        "memory_limit_bytes": MEMORY_LIMIT_BYTES,
        "workers_restarted": restarted,
        "identical_across_repeats": bool(same),
        "nuisance_fit": res.details["settings"]["nuisance_fit"],
        "estimates": _estimates(res.details["effects"], res.rows, truths(model)),
    }


def case_audit_memory(p: dict[str, Any]) -> dict[str, Any]:
    """The in-memory audit and the effects alone on the same rows (one process, folds in two processes)."""
    from cflib.audit import audit
    from cflib.fairness.effects import ctf_effects

    n, seed, repeats = p["n"], p["seed"], p["repeats"]
    model = fitted_model(seed)
    frame = sfm_pandas(n, seed)
    scored = frame.assign(_y_hat=model.predict(frame[["x", "z", "w"]]))

    def one_call() -> Any:
        return audit(model, frame, sfm=SFM, progress=False, n_jobs=2, **SETTINGS)

    def effects_only() -> Any:
        return ctf_effects(scored, SFM, ["_y_hat", "y"], ci="percentile", n_jobs=2, n_folds=N_FOLDS, **SETTINGS)

    one_call(), effects_only()  # warm-up: imports, the fold processes
    walls_audit, walls_effects = [], []
    for _ in range(repeats):
        t = time.perf_counter()
        report = one_call()
        walls_audit.append(time.perf_counter() - t)
        t = time.perf_counter()
        eff = effects_only()
        walls_effects.append(time.perf_counter() - t)
    return {
        "rows": n,
        "settings": {**SETTINGS, "n_folds": N_FOLDS, "n_jobs": 2},
        "repeats": repeats,
        "wall_s": statistics.median(walls_audit),
        "audit_wall_s": statistics.median(walls_audit),
        "audit_wall_s_each": walls_audit,
        "effects_wall_s": statistics.median(walls_effects),
        "effects_wall_s_each": walls_effects,
        "estimates": _estimates(eff, report.rows, truths(model)),
    }


def oracle_direct_effect(frame: pd.DataFrame, params: LinearSFMParams = PARAMS) -> tuple[float, float]:
    """The doubly robust Ctf-DE (``ctf_effects``' estimator) with the SFM's true nuisances, and its influence SE.

    From the SFM's equations: ``E[Y | x1, z, w] = b_x + b_w w + b_z z``, and the log-odds of ``x1`` given ``(z, w)``
    is ``logit p + (mu1 - mu0) z - (mu1^2 - mu0^2) / 2 + a_xw (w - a_zw z) / sigma^2 - a_xw^2 / (2 sigma^2)`` (Bayes'
    rule with Gaussian ``Z | X`` and ``W | X, Z``). No clipping, no fitting: what is left is the rows' own noise.
    """
    x, z, w, y = (frame[c].to_numpy(dtype=float) for c in ("x", "z", "w", "y"))
    mu1 = params.b_x + params.b_w * w + params.b_z * z
    logit = (
        np.log(params.p / (1 - params.p))
        + (params.mu1 - params.mu0) * z
        - (params.mu1**2 - params.mu0**2) / 2
        + (params.a_xw * (w - params.a_zw * z) - params.a_xw**2 / 2) / params.sigma**2
    )
    p_zw = expit(logit)
    x0m, x1m = 1 - x, x
    a = x0m * mu1 + x1m * (1 - p_zw) / p_zw * (y - mu1)
    n0 = x0m.sum()
    big_a, y0 = a.sum() / n0, (x0m * y).sum() / n0
    infl = ((a - x0m * big_a) - x0m * (y - y0)) / (n0 / x.size)
    return float(big_a - y0), float(infl.std(ddof=1) / np.sqrt(x.size))


def case_direct_effect(p: dict[str, Any]) -> dict[str, Any]:
    """Item 4 of issue 30: the Ctf-DE estimand by Monte Carlo against the truth function and the estimates."""
    from cflib.fairness.effects import ctf_effects

    n, seed = p["n"], p["seed"]
    cf = linear_sfm_counterfactuals(n, PARAMS, seed=seed)  # the rows of linear_sfm(n, seed=seed), with counterfactuals
    x0 = cf["x"].to_numpy() == 0
    unit_de = (cf["y_x1_w0"] - cf["y_x0"]).to_numpy()[x0]
    est = ctf_effects(cf[["x", "z", "w", "y"]], SFM, "y", learner="linear", n_boot=0, seed=seed)
    est_tight = ctf_effects(cf[["x", "z", "w", "y"]], SFM, "y", learner="linear", n_boot=0, seed=seed, clip=1e-9)
    oracle, oracle_se = oracle_direct_effect(cf)
    truth = linear_sfm_truth(PARAMS)["DE"]
    reps = []
    for r in range(p["replications"]):
        o, s = oracle_direct_effect(linear_sfm(n, PARAMS, seed=p["replication_seed"] + r))
        reps.append((o, s))
    arr = np.array(reps)
    t = (arr[:, 0] - truth) / arr[:, 1]
    small = []
    for r in range(p["small_replications"]):
        e = ctf_effects(
            linear_sfm(p["small_n"], PARAMS, seed=p["replication_seed"] + r),
            SFM,
            "y",
            learner="linear",
            n_boot=0,
            seed=r,
        )
        small.append((e.estimate["DE"], e.se["DE"]))
    sm = np.array(small)
    return {
        "rows": n,
        "seed": seed,
        "truth_function": truth,
        "monte_carlo_estimand": float(unit_de.mean()),
        "monte_carlo_unit_spread": float(unit_de.std()),
        "estimate": est.estimate["DE"],
        "se": est.se["DE"],
        "ci": [float(est.ci["DE"][0]), float(est.ci["DE"][1])],
        "n_clipped": est.n_clipped,
        "estimate_clip_1e-9": est_tight.estimate["DE"],
        "oracle_estimate": oracle,
        "oracle_se": oracle_se,
        "z_of_estimate": (est.estimate["DE"] - truth) / est.se["DE"],
        "replications": {
            "what": "the doubly robust Ctf-DE with the true nuisances on fresh samples of the same size",
            "rows": n,
            "count": len(reps),
            "seeds": [p["replication_seed"], p["replication_seed"] + len(reps) - 1],
            "mean": float(arr[:, 0].mean()),
            "mean_se": float(arr[:, 0].std(ddof=1) / np.sqrt(len(reps))),
            "sd": float(arr[:, 0].std(ddof=1)),
            "median_influence_se": float(np.median(arr[:, 1])),
            "coverage_95": float(np.mean(np.abs(t) < 1.959964)),
            "share_beyond_3_se": float(np.mean(np.abs(t) > 3)),
        },
        "estimator_replications": {
            "what": "ctf_effects (linear learners, 5 folds, clip 0.01) on fresh samples",
            "rows": p["small_n"],
            "count": len(small),
            "mean": float(sm[:, 0].mean()),
            "mean_se": float(sm[:, 0].std(ddof=1) / np.sqrt(len(small))),
            "sd": float(sm[:, 0].std(ddof=1)),
            "mean_influence_se": float(sm[:, 1].mean()),
            "coverage_95": float(np.mean(np.abs((sm[:, 0] - truth) / sm[:, 1]) < 1.959964)),
        },
    }
