"""Turn the harness's measurements into the results JSON, a markdown table, a plot and the book page.

Nothing here is measured or typed in: every number comes from ``benchmarks/results/mmd_engine.json`` (and the
page's section on the distributed audit from ``audit_dask.json``, :mod:`benchmarks.audit_dask_report`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import audit_dask_report

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "book" / "performance.md"
PLOT = ROOT / "book" / "_static" / "performance_scaling.png"
LABELS = {
    "cflib": "cflib (float32 products, float64 re-check)",
    "cflib-float64": "cflib (float64)",
    "numpy-float64": "numpy K @ V (float64)",
    "numpy-float32": "numpy K @ V (float32)",
    "hyppo": "hyppo",
    "alibi-detect": "alibi-detect (torch)",
}


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _mmd_rows(doc: dict[str, Any], **match: Any) -> list[dict[str, Any]]:
    return [
        r
        for r in doc["rows"]
        if r["case"] == "mmd" and "error" not in r and all(r.get(k) == v for k, v in match.items())
    ]


def hyppo_summary(doc: dict[str, Any]) -> dict[str, Any] | None:
    """cflib against hyppo at the largest size where hyppo was timed (same data, B and bandwidth)."""
    hy = _mmd_rows(doc, impl="hyppo", threads=1)
    if not hy:
        return None
    h = max(hy, key=lambda r: r["n"])
    c = _mmd_rows(doc, impl="cflib", threads=1, n=h["n"], B=h["B"])[0]
    p = 0.5 * (c["pvalue"] + h["pvalue"])
    mc_se = float(np.sqrt(2 * p * (1 - p) / h["B"]))
    return {
        "n": h["n"],
        "m": h["n"],
        "d": h["d"],
        "n_permutations": h["B"],
        "bandwidth": h["bandwidth"],
        "statistic_hyppo": h["statistic"],
        "statistic_hyppo_predicted_from_cflib": h["statistic_predicted_from_cflib"],
        "statistic_abs_diff": abs(h["statistic"] - h["statistic_predicted_from_cflib"]),
        "pvalue_cflib": c["pvalue"],
        "pvalue_hyppo": h["pvalue"],
        "pvalue_diff_in_mc_se": abs(c["pvalue"] - h["pvalue"]) / mc_se if mc_se > 0 else 0.0,
        "seconds_cflib": c["cpu_s"],
        "seconds_hyppo": h["cpu_s"],
        "speedup": h["cpu_s"] / c["cpu_s"],
        "wall_seconds_cflib": c["wall_s"],
        "wall_seconds_hyppo": h["wall_s"],
        "speedup_wall": h["wall_s"] / c["wall_s"],
        "speedup_basis": "median CPU seconds of 3 runs after a warm-up, one thread, fresh processes",
    }


def per_permutation_fit(doc: dict[str, Any], impl: str) -> dict[str, float] | None:
    """Least-squares ``log(CPU s per permutation) = a + b log n`` over the sizes measured for ``impl``."""
    rows = [r for r in _mmd_rows(doc, impl=impl, threads=1) if r["n"] <= max(doc["plan"]["scaling_n"])]
    if len(rows) < 2:
        return None
    n = np.array([r["n"] for r in rows], dtype=float)
    t = np.array([r["cpu_s"] / r["B"] for r in rows])
    b, a = np.polyfit(np.log(n), np.log(t), 1)
    return {"intercept": float(a), "slope": float(b), "n_max_measured": int(n.max())}


def extrapolate(doc: dict[str, Any], impl: str, n: int, b: int) -> float | None:
    """Extrapolated CPU seconds of ``impl`` at ``n = m`` and ``b`` permutations (from :func:`per_permutation_fit`)."""
    fit = per_permutation_fit(doc, impl)
    return None if fit is None else float(np.exp(fit["intercept"] + fit["slope"] * np.log(n)) * b)


def write_results(doc: dict[str, Any], out: Path) -> None:
    """``mmd_engine.json`` (everything), ``bench_mmd.json`` (the chapter's summary) and ``mmd_engine.md``."""
    out.mkdir(parents=True, exist_ok=True)
    doc["summary"] = summary(doc)
    _atomic_write(out / "mmd_engine.json", json.dumps(doc, indent=1))
    boot = [r for r in doc["rows"] if r["case"] == "bootstrap" and "error" not in r]
    compat = {"machine": doc["machine"], "source": "python -m benchmarks run (benchmarks/results/mmd_engine.json)"}
    if doc["summary"]["hyppo"] is not None:
        compat["mmd_vs_hyppo"] = doc["summary"]["hyppo"]
    if boot:
        compat["nte_bootstrap"] = {k: v for k, v in boot[0].items() if k not in ("case", "threads", "seed", "repeats")}
    _atomic_write(out / "bench_mmd.json", json.dumps(compat, indent=1))
    _atomic_write(out / "mmd_engine.md", tables(doc))


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """Headline numbers: the K @ V limit ratios, the peers, large n, extrapolations."""
    lim = {r["threads"]: r for r in doc["rows"] if r["case"] == "limit" and "error" not in r}
    big_b = doc["plan"]["B"]
    extra = {}
    for impl in ("hyppo", "alibi-detect"):
        for n in (1000, 4000):
            v = extrapolate(doc, impl, n, big_b)
            if v is not None:
                extra[f"{impl} n={n} B={big_b}"] = v
    return {
        "limit": {
            str(k): {kk: vv for kk, vv in v.items() if kk.startswith(("ratio", "cflib", "numpy"))}
            for k, v in lim.items()
        },
        "hyppo": hyppo_summary(doc),
        "large": [
            {
                "n": r["n"],
                "B": r["B"],
                "wall_s": r["wall_s"],
                "cpu_s": r["cpu_s"],
                "peak_gb": r["maxrss_bytes"] / 2**30,
                "pvalue": r["pvalue"],
            }
            for r in _mmd_rows(doc, impl="cflib", threads=1)
            if r["n"] > max(doc["plan"]["scaling_n"])
        ],
        "extrapolated_cpu_s": extra,
        "fits": {impl: per_permutation_fit(doc, impl) for impl in LABELS},
    }


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        text = f"{v:.{digits}g}"
        return f"{float(text):.0f}" if "e+" in text else text  # the book's tables show no e-notation (issue 26)
    return str(v)


def tables(doc: dict[str, Any]) -> str:
    """Markdown tables of every measurement and of the summary."""
    m = doc["machine"]
    s = doc.get("summary") or summary(doc)
    lines = [
        f"Machine: {_fmt(m.get('cpu_model'))}, {m['cpus']} CPUs, {_fmt(m.get('memory_gb'))} GB, {m['platform']}; "
        f"Python {m['python']}, numpy {m['numpy']}, torch {m['torch']}, hyppo {_fmt(m.get('hyppo'))}, "
        f"alibi-detect {_fmt(m.get('alibi-detect'))}; load average at start {', '.join(f'{x:.1f}' for x in m['load_average_at_start'])} "
        "(a shared machine: CPU time is the robust measure, wall time includes waiting for a core).",
        "",
        "**The K @ V limit** (n = m = {n}, d = {d}, B = {B}, same process, interleaved, medians of {r}):".format(
            n=doc["plan"]["limit_n"], d=doc["plan"]["d"], B=doc["plan"]["B"], r=3
        ),
        "",
        "| threads | cflib CPU s | numpy float64 CPU s | numpy float32 CPU s | cflib / numpy64 (CPU) | cflib / numpy32 (CPU) | cflib / numpy64 (wall) | cflib / numpy32 (wall) | p-values (cflib, numpy64, numpy32) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for t, v in sorted(s["limit"].items()):
        lines.append(
            f"| {t} | {_fmt(v['cflib_cpu_s'])} | {_fmt(v['numpy-float64_cpu_s'])} | {_fmt(v['numpy-float32_cpu_s'])} | "
            f"{_fmt(v['ratio_cpu_vs_numpy-float64'])} | {_fmt(v['ratio_cpu_vs_numpy-float32'])} | "
            f"{_fmt(v['ratio_wall_vs_numpy-float64'])} | {_fmt(v['ratio_wall_vs_numpy-float32'])} | "
            f"{_fmt(v['cflib_pvalue'], 4)}, {_fmt(v['numpy-float64_pvalue'], 4)}, {_fmt(v['numpy-float32_pvalue'], 4)} |"
        )
    h = s["hyppo"]
    if h:
        lines += [
            "",
            f"**hyppo** (measured at n = m = {h['n']}, B = {h['n_permutations']}): cflib is {h['speedup']:.0f}x faster in CPU time "
            f"({h['speedup_wall']:.0f}x in wall time); hyppo's statistic predicted from cflib's differs by {h['statistic_abs_diff']:.1e}; "
            f"p-values {h['pvalue_cflib']:.3f} (cflib) and {h['pvalue_hyppo']:.3f} (hyppo), {h['pvalue_diff_in_mc_se']:.1f} Monte Carlo s.e. apart.",
        ]
    if s["extrapolated_cpu_s"]:
        lines += [
            "",
            "**Extrapolated** (not measured: CPU seconds per permutation fitted as a power of n over the measured sizes, times B):",
            "",
            "| implementation, size | CPU seconds (extrapolated) |",
            "|---|---|",
        ]
        lines += [f"| {k} | {_fmt(v)} |" for k, v in s["extrapolated_cpu_s"].items()]
    if s["large"]:
        lines += [
            "",
            "**Large n** (cflib, one run, one thread):",
            "",
            "| n = m | B | wall s | CPU s | peak memory GB | p-value |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {r['n']} | {r['B']} | {_fmt(r['wall_s'])} | {_fmt(r['cpu_s'])} | {_fmt(r['peak_gb'])} | {_fmt(r['pvalue'], 3)} |"
            for r in s["large"]
        ]
    lines += [
        "",
        "**Every measurement** (unpaired permutation MMD test, d = {d}; medians of the repeats):".format(
            d=doc["plan"]["d"]
        ),
        "",
        "| implementation | n = m | B | threads | wall s | CPU s | peak memory MB | statistic | p-value |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in doc["rows"]:
        if r["case"] != "mmd":
            continue
        if "error" in r:
            lines.append(
                f"| {LABELS.get(r['impl'], r['impl'])} | {r['n']} | {r['B']} | {r['threads']} | failed: {r['error']} | | | | |"
            )
            continue
        lines.append(
            f"| {LABELS.get(r['impl'], r['impl'])} | {r['n']} | {r['B']} | {r['threads']} | {_fmt(r['wall_s'])} | {_fmt(r['cpu_s'])} | "
            f"{r['maxrss_bytes'] / 2**20:.0f} | {_fmt(r['statistic'], 4)} | {_fmt(r['pvalue'], 4)} |"
        )
    boot = [r for r in doc["rows"] if r["case"] == "bootstrap" and "error" not in r]
    if boot:
        b = boot[0]
        lines += [
            "",
            f"**N-TE bootstrap** (m = {b['m']}, {b['n_boot']} draws): all draws through the engine {b['seconds_vectorised']:.3g} s, "
            f"a loop with the same weights and algebra {b['seconds_loop_same_algebra']:.3g} s (ratio {b['speedup_vs_loop']:.2g}), "
            f"recomputing the kernel matrices per draw about {b['seconds_per_draw_loop_recompute_kernel'] * b['n_boot']:.3g} s "
            f"(ratio {b['speedup_vs_recompute_loop']:.2g} to the full test); largest difference of the replicates {b['max_abs_diff_vectorised_vs_loop']:.1e}.",
        ]
    na = doc.get("not_installable", {})
    if na:
        lines += ["", "Not compared: " + "; ".join(f"{k} ({v})" for k, v in na.items()) + "."]
    return "\n".join(lines) + "\n"


def plot(doc: dict[str, Any], path: Path = PLOT) -> None:
    """Log-log CPU seconds per permutation and peak memory against n, every implementation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    for impl, label in LABELS.items():
        rows = sorted(_mmd_rows(doc, impl=impl, threads=1), key=lambda r: (r["n"], r["B"]))
        if impl == "cflib":  # the same-B companions of the peers would draw a second line at those sizes
            rows = [r for r in rows if r["B"] != doc["plan"]["peer_B"] or r["n"] > max(doc["plan"]["scaling_n"])]
        if not rows:
            continue
        n = [r["n"] for r in rows]
        axes[0].loglog(n, [r["cpu_s"] / r["B"] for r in rows], marker="o", ms=4, label=label)
        axes[1].loglog(n, [r["maxrss_bytes"] / 2**20 for r in rows], marker="o", ms=4, label=label)
    axes[0].set(xlabel="n = m", ylabel="CPU seconds per permutation", title="time (one thread, medians of 3)")
    axes[1].set(xlabel="n = m", ylabel="peak memory of the process (MB)", title="memory")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_page(doc: dict[str, Any]) -> None:
    """``book/performance.md`` and its plot, generated from the results JSON."""
    plot(doc)
    text = f"""# Performance

This page is generated by `python -m benchmarks page` from `benchmarks/results/mmd_engine.json`, which
`python -m benchmarks run` writes: every comparison runs in a fresh process pinned to one thread (and a
two-thread column), with a warm-up call, then the median of three timed calls; peak memory is the
process's `ru_maxrss`; the statistics and p-values of the implementations are compared. Do not edit it
by hand.

What is compared: `cflib.stats.mmd_test` (the unpaired permutation MMD test, Gaussian kernel, median
bandwidth given to every implementation), the numpy limit (the kernel matrix and all permutations as
one `K @ V` product, in float64 and in float32, using cflib's permutations so its p-value must be
identical), hyppo's `MMD().test` and alibi-detect's `MMDDrift` (PyTorch backend). hyppo and alibi-detect
recompute the statistic permutation by permutation, so they are timed at small sizes and fewer
permutations only; the figure shows time per permutation so that all fit on one scale (at the large-n
points, run with few permutations, that time also carries the kernel matrix's cost, paid once per test).
Peak memory includes the Python process itself (about 0.3 GB with torch loaded).

```{{image}} _static/performance_scaling.png
:alt: CPU time per permutation and peak memory against n, log-log, every implementation
```

{tables(doc)}"""
    if audit_dask_report.RESULTS_JSON.exists():  # the distributed audit (python -m benchmarks audit-dask)
        text += audit_dask_report.page_section(json.loads(audit_dask_report.RESULTS_JSON.read_text()))
    _atomic_write(PAGE, text)
