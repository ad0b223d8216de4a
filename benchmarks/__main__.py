"""Benchmark harness: ``python -m benchmarks run [--quick]``, ``python -m benchmarks page``, ``python -m benchmarks audit``.

``run`` measures every comparison in a fresh subprocess pinned to a number of threads
(``OMP/MKL/OPENBLAS/NUMEXPR_NUM_THREADS`` and ``torch.set_num_threads``): a warm-up call, then the
median of ``repeats`` timed calls (wall clock and CPU time), the peak memory of the process
(``ru_maxrss``), and the statistic and p-value for the agreement check. It writes
``benchmarks/results/mmd_engine.json`` (every measurement and the machine), ``bench_mmd.json`` (the
summary the closeness-test chapter reads), the scaling plot ``book/_static/performance_scaling.png``
and ``book/performance.md`` (``page`` re-renders the last two from the JSON alone).

Peers that are not dependencies of cflib (hyppo, alibi-detect) run only when importable: install them
with ``pip install -e .[bench]`` in a separate environment (see ``benchmarks/README.md``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS")

#: Sizes of the full run (``--quick`` shrinks them). hyppo and alibi-detect recompute the statistic
#: per permutation in Python-level loops, so they are timed at small n and fewer permutations only.
PLAN = {
    "d": 5,
    "B": 1000,
    "scaling_n": [250, 500, 1000, 2000],
    "peer_n": {"hyppo": [250, 500], "alibi-detect": [250, 500, 1000]},
    "peer_B": 100,
    "limit_n": 2000,
    "large": [(20000, 200), (100000, 10)],
    "bootstrap": {"m": 1000, "B": 1000, "recompute_draws": 20},
}
QUICK = {
    "d": 5,
    "B": 200,
    "scaling_n": [250, 500],
    "peer_n": {"hyppo": [250], "alibi-detect": [250]},
    "peer_B": 50,
    "limit_n": 500,
    "large": [(3000, 50)],
    "bootstrap": {"m": 300, "B": 200, "recompute_draws": 5},
}


def _worker(case: str, params: dict[str, Any]) -> None:
    """Child side: pin threads, run one case, print its JSON on the last line."""
    import torch

    torch.set_num_threads(params["threads"])
    from benchmarks.cases import CASES

    out = CASES[case](params)
    out["torch_threads"] = torch.get_num_threads()
    out["maxrss_bytes"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps(out))


def measure(
    case: str, params: dict[str, Any], *, python: str = sys.executable, timeout: float = 3600
) -> dict[str, Any]:
    """Run one case in a fresh subprocess pinned to ``params['threads']`` threads.

    Parameters
    ----------
    case : str
        A key of ``benchmarks.cases.CASES``.
    params : dict
        The case's parameters; ``threads`` is required.
    python : str
        Interpreter of the child (the benchmark environment).
    timeout : float
        Seconds before the child is killed.

    Returns
    -------
    dict
        The case's output plus ``params``, or ``error`` when the child failed.
    """
    env = {**os.environ, **{v: str(params["threads"]) for v in THREAD_VARS}, "PYTHONPATH": str(ROOT)}
    cmd = [python, "-m", "benchmarks", "_worker", case, json.dumps(params)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT, timeout=timeout)
    row = {"case": case, **params, "process_wall_s": time.perf_counter() - t}
    if proc.returncode != 0:
        row["error"] = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"
        print(f"  {case} {params}: FAILED {row['error']}", file=sys.stderr, flush=True)
        return row
    row.update(json.loads(proc.stdout.strip().splitlines()[-1]))
    secs = row.get("wall_s", row.get("cflib_wall_s", row.get("seconds_full_test", 0.0)))
    print(
        f"  {case} {params.get('impl', '')} n={params.get('n', params.get('m'))} threads={params['threads']}: "
        f"{secs:.3g} s (process {row['process_wall_s']:.3g} s)",
        flush=True,
    )
    return row


def machine() -> dict[str, Any]:
    """The machine and library versions, with the load when the run started."""
    from importlib.metadata import PackageNotFoundError, version

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "processor": platform.processor(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_average_at_start": list(os.getloadavg()),
    }
    try:
        model = [
            ln.split(":", 1)[1].strip()
            for ln in Path("/proc/cpuinfo").read_text().splitlines()
            if ln.startswith("model name")
        ]
        info["cpu_model"] = model[0] if model else None
        info["memory_gb"] = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (OSError, ValueError):
        pass
    for pkg in ("numpy", "torch", "hyppo", "alibi-detect", "mmdagg", "mmdfuse"):
        try:
            info[pkg] = version(pkg)
        except PackageNotFoundError:
            info[pkg] = None
    return info


def run(quick: bool, python: str) -> dict[str, Any]:
    """Every comparison of the plan; returns the JSON document."""
    plan = QUICK if quick else PLAN
    d, b, seed = plan["d"], plan["B"], 0
    rows: list[dict[str, Any]] = []
    common = {"d": d, "seed": seed, "repeats": 3}
    print("scaling (one thread):", flush=True)
    for n in plan["scaling_n"]:
        for impl in ("cflib", "cflib-float64", "numpy-float64", "numpy-float32"):
            rows.append(measure("mmd", {"impl": impl, "n": n, "B": b, "threads": 1, **common}, python=python))
    print("two threads:", flush=True)
    for impl in ("cflib", "numpy-float64"):
        rows.append(
            measure("mmd", {"impl": impl, "n": plan["scaling_n"][-1], "B": b, "threads": 2, **common}, python=python)
        )
    print("peers:", flush=True)
    peers = {"hyppo": "hyppo", "alibi-detect": "alibi_detect"}
    missing = [
        p
        for p, mod in peers.items()
        if subprocess.run([python, "-c", f"import {mod}"], capture_output=True).returncode != 0
    ]
    for impl, ns in plan["peer_n"].items():
        if impl in missing:
            print(f"  {impl} not installed: skipped", flush=True)
            continue
        for n in ns:
            rows.append(
                measure("mmd", {"impl": impl, "n": n, "B": plan["peer_B"], "threads": 1, **common}, python=python)
            )
    for n in sorted({n for ns in plan["peer_n"].values() for n in ns}):  # cflib at the peers' B, like for like
        rows.append(
            measure("mmd", {"impl": "cflib", "n": n, "B": plan["peer_B"], "threads": 1, **common}, python=python)
        )
    print("the K @ V limit, same process:", flush=True)
    for threads in (1, 2):
        rows.append(measure("limit", {"n": plan["limit_n"], "B": b, "threads": threads, **common}, python=python))
    print("large n (one repeat):", flush=True)
    for n, bb in plan["large"]:
        rows.append(
            measure(
                "mmd",
                {"impl": "cflib", "n": n, "B": bb, "threads": 1, "d": d, "seed": seed, "repeats": 1},
                python=python,
            )
        )
    print("N-TE bootstrap:", flush=True)
    rows.append(measure("bootstrap", {**plan["bootstrap"], "threads": 1, "seed": seed, "repeats": 3}, python=python))
    return {
        "machine": machine(),
        "plan": plan,
        "quick": quick,
        "python": python,
        "not_installable": {
            "mmdagg": "no distribution on PyPI (`pip download mmdagg` finds none)",
            "mmdfuse": "no distribution on PyPI (`pip download mmdfuse` finds none)",
        },
        "rows": rows,
    }


def audit_adult(label: str, python: str) -> dict[str, Any]:
    """Time the Adult audit (``n_boot = 200``, two threads) as a ratio to one fit of the reader's model.

    The run is stored under ``label`` in ``benchmarks/results/audit_adult.json`` beside the runs stored
    under other labels (``before`` and ``after`` for issue 29), with the machine, the load and the commit.

    Parameters
    ----------
    label : str
        Name of this run.
    python : str
        Interpreter of the child process.

    Returns
    -------
    dict
        The document written.
    """
    path = RESULTS / "audit_adult.json"
    doc = json.loads(path.read_text()) if path.exists() else {"runs": {}}
    row = measure("audit_adult", {"n_boot": 200, "seed": 0, "threads": 2, "repeats": 3}, python=python)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    dirty = bool(
        subprocess.run(
            ["git", "status", "--porcelain", "cflib"], capture_output=True, text=True, cwd=ROOT
        ).stdout.strip()
    )
    doc["runs"][label] = {"machine": machine(), "commit": commit, "cflib_uncommitted_changes": dirty, "row": row}
    runs = doc["runs"]
    if (
        "before" in runs
        and "after" in runs
        and "error" not in runs["before"]["row"]
        and "error" not in runs["after"]["row"]
    ):
        b, a = runs["before"]["row"], runs["after"]["row"]
        doc["speedup"] = {
            "ratio_before": b["ratio_to_one_fit"],
            "ratio_after": a["ratio_to_one_fit"],
            "speedup_in_fits": b["ratio_to_one_fit"] / a["ratio_to_one_fit"],
            "speedup_in_seconds": b["audit_wall_s"] / a["audit_wall_s"],
        }
    path.write_text(json.dumps(doc, indent=1) + "\n")
    if "error" not in row:
        print(
            f"audit of Adult ({label}), n_boot = 200, 2 threads: {row['audit_wall_s']:.1f} s = "
            f"{row['ratio_to_one_fit']:.1f} fits of the reader's model ({row['fit_wall_s']:.2f} s) -> {path}"
        )
    if "speedup" in doc:
        print(f"speed-up before -> after: {doc['speedup']['speedup_in_fits']:.2f}x in fits of the model")
    return doc


#: The direct effect's check (issue 30, item 4): the rows where Ctf-DE(y) = 0.484 was seen, and replications.
DIRECT_EFFECT = {"n": 10**6, "seed": 1, "replications": 200, "replication_seed": 10_000, "small_n": 100_000}
DIRECT_EFFECT_QUICK = {"n": 10**5, "seed": 1, "replications": 10, "replication_seed": 10_000, "small_n": 20_000}


def audit_dask(python: str, sizes: list[int], out: Path, direct: dict[str, Any] = DIRECT_EFFECT) -> dict[str, Any]:
    """The distributed audit at each size (fresh process and cluster each), the in-memory audit where it fits.

    Parameters
    ----------
    python : str
        Interpreter of the child processes.
    sizes : list of int
        Rows; up to 10^6 the distributed audit is timed three times after a warm-up at the same size, above it
        once after a warm-up of 10^5 rows on the same cluster; the in-memory audit runs up to 10^6 rows.
    out : pathlib.Path
        Folder of ``audit_dask.json`` and ``audit_dask.md``.
    direct : dict
        Sizes and seeds of the direct effect's check (:func:`benchmarks.audit_dask.case_direct_effect`).

    Returns
    -------
    dict
        The document written.
    """
    from benchmarks import audit_dask_report

    def uptime() -> str:
        return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()

    git = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    # From a `git archive` of a commit (no .git), the commit is named in BENCH_COMMIT.
    commit = git.stdout.strip() if git.returncode == 0 else os.environ.get("BENCH_COMMIT", "")
    doc: dict[str, Any] = {
        "machine": machine(),
        "commit": commit,
        "uptime_at_start": uptime(),
        "distributed": [],
        "in_memory": [],
    }
    common = {"seed": 0, "threads": 1}
    for n in sizes:
        load = list(os.getloadavg())
        row = measure("audit_dask", {"n": n, "repeats": 3 if n <= 10**6 else 1, **common}, python=python)
        doc["distributed"].append({**row, "load_average_before": load})
        if n <= 10**6:
            load = list(os.getloadavg())
            row = measure("audit_memory", {"n": n, "repeats": 3, **common}, python=python)
            doc["in_memory"].append({**row, "load_average_before": load})
    doc["direct_effect"] = measure(
        "direct_effect", {**direct, "small_replications": direct["replications"] // 2, "threads": 1}, python=python
    )
    doc["uptime_at_end"] = uptime()
    audit_dask_report.write_audit_dask(doc, out)
    return doc


def _commit() -> str:
    """The commit measured (``BENCH_COMMIT`` when run from a ``git archive``)."""
    git = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, cwd=ROOT)
    return git.stdout.strip() if git.returncode == 0 else os.environ.get("BENCH_COMMIT", "")


def main(argv: list[str] | None = None) -> None:
    """Command line: ``run`` (measure and write everything) or ``page`` (re-render from the JSON)."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure every comparison (fresh processes) and write results and page")
    r.add_argument("--quick", action="store_true", help="small sizes: a check that the harness works (minutes)")
    r.add_argument("--python", default=sys.executable, help="interpreter of the benchmark environment")
    r.add_argument(
        "--out", default=None, help="results folder (default benchmarks/results; a temporary one with --quick)"
    )
    sub.add_parser("page", help="re-render book/performance.md and the plot from benchmarks/results")
    a = sub.add_parser(
        "audit",
        help="time the one-call audit (n_boot=200, two threads) on COMPAS -> results/audit_compas.json "
        "and on Adult as a ratio to one fit -> results/audit_adult.json",
    )
    a.add_argument("--python", default=sys.executable, help="interpreter of the benchmark environment")
    a.add_argument("--data", choices=("compas", "adult", "both"), default="both", help="which audit to time")
    a.add_argument(
        "--label",
        default="current",
        help="name of the Adult run in audit_adult.json (e.g. before, after); runs under other names are kept",
    )
    ad = sub.add_parser(
        "audit-dask",
        help="the audit of a Dask DataFrame at 10^5, 10^6, 10^7 rows on two 4 GB workers, and in memory where it fits "
        "-> results/audit_dask.json, audit_dask.md and the performance page",
    )
    ad.add_argument("--python", default=sys.executable, help="interpreter of the benchmark environment")
    ad.add_argument("--quick", action="store_true", help="10^5 rows only, into a temporary folder (a harness check)")
    ai = sub.add_parser(
        "audit-images-train",
        help="counterfactual='train' on 1,000 28x28 images, two threads, against its CPU budget "
        "-> results/audit_images_train.json",
    )
    ai.add_argument("--python", default=sys.executable, help="interpreter of the benchmark environment")
    ai.add_argument("--n", type=int, default=None, help="images (default 1000; fewer for a harness check)")
    w = sub.add_parser("_worker")
    w.add_argument("case")
    w.add_argument("params")
    args = ap.parse_args(argv)
    if args.cmd == "_worker":
        _worker(args.case, json.loads(args.params))
        return
    from benchmarks import report

    if args.cmd == "audit-images-train":
        from benchmarks.audit_images_train import N_IMAGES

        n = args.n or N_IMAGES
        row = measure("audit_images_train", {"n": n, "seed": 0, "threads": 2}, python=args.python, timeout=7200)
        doc = {"machine": machine(), "commit": _commit(), "run": row}
        dest = (
            RESULTS / "audit_images_train.json"
            if n == N_IMAGES
            else Path(tempfile.mkdtemp()) / "audit_images_train.json"
        )
        tmp = dest.with_suffix(".partial")
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        os.replace(tmp, dest)
        print(f"results in {dest}")
        return
    if args.cmd == "audit-dask":
        from benchmarks.audit_dask import SIZES

        out = Path(tempfile.mkdtemp(prefix="bench-dask-")) if args.quick else RESULTS
        if args.quick:
            audit_dask(args.python, list(SIZES[:1]), out, DIRECT_EFFECT_QUICK)
        else:
            audit_dask(args.python, list(SIZES), out)
        print(f"results in {out}")
        if args.quick:
            return
    elif args.cmd == "audit":
        if args.data in ("compas", "both"):
            row = measure("audit", {"n_boot": 200, "seed": 0, "threads": 2, "repeats": 3}, python=args.python)
            doc = {"machine": machine(), "row": row}
            (RESULTS / "audit_compas.json").write_text(json.dumps(doc, indent=1) + "\n")
            print(
                f"audit of COMPAS, n_boot = 200, 2 threads: {row.get('audit_wall_s', float('nan')):.1f} s "
                f"(checks called one by one: {row.get('by_hand_wall_s', float('nan')):.1f} s) -> {RESULTS / 'audit_compas.json'}"
            )
        if args.data in ("adult", "both"):
            audit_adult(args.label, args.python)
        return
    if args.cmd == "run":
        doc = run(args.quick, args.python)
        out = Path(args.out) if args.out else (Path(tempfile.mkdtemp(prefix="bench-quick-")) if args.quick else RESULTS)
        report.write_results(doc, out)
        print(f"results in {out}")
        if args.quick or out != RESULTS:
            return  # a harness check: never overwrite the book's page with quick sizes
    report.write_page(json.loads((RESULTS / "mmd_engine.json").read_text()))


if __name__ == "__main__":
    main()
