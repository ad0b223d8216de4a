"""The distributed audit's results as JSON, markdown tables, a figure and a section of the Performance page.

Nothing here is measured or typed in: every number comes from ``benchmarks/results/audit_dask.json``, which
``python -m benchmarks audit-dask`` writes (:mod:`benchmarks.audit_dask`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS_JSON = ROOT / "benchmarks" / "results" / "audit_dask.json"
FIGURE = ROOT / "book" / "_static" / "audit_dask_scaling.png"
GB = 1e9
MEASURES = (("TV", "TV"), ("DE", "Ctf-DE"), ("IE", "Ctf-IE"), ("SE", "Ctf-SE"))
OUTCOMES = (("y", "outcome y"), ("_y_hat", "prediction"))


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        text = f"{v:.{digits}g}"
        return f"{float(text):.0f}" if "e+" in text else text  # no e-notation in the book's tables
    return str(v)


def _rows(n: int) -> str:
    """``10^5``-style for powers of ten (math in the page), else the number with thousands separators."""
    k = len(str(n)) - 1
    return f"$10^{k}$" if n == 10**k else f"{n:,}"


def _ok(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in rows if "error" not in r]


def worker_peak(row: dict[str, Any]) -> float:
    """The largest worker's peak resident memory (bytes): the larger of the sampled peak and ``ru_maxrss``."""
    return float(max([*row["worker_peak_rss_sampled_bytes"].values(), *row["worker_maxrss_bytes"].values()]))


def summary(doc: dict[str, Any]) -> dict[str, Any]:
    """Per size: the distributed audit's time, stages and memory, the in-memory times and their ratio."""
    memory = {r["rows"]: r for r in _ok(doc["in_memory"])}
    sizes = []
    for r in _ok(doc["distributed"]):
        m = memory.get(r["rows"])
        sizes.append(
            {
                "rows": r["rows"],
                "partitions": r["partitions"],
                "repeats": r["repeats"],
                "wall_s": r["wall_s"],
                "stage_s": {k.removesuffix("_seconds"): v for k, v in r["stage_s"].items() if k != "wall_seconds"},
                "worker_peak_gb": worker_peak(r) / GB,
                "client_peak_gb": r["maxrss_bytes"] / GB,
                "memory_limit_gb": r["memory_limit_bytes"] / GB,
                "workers_restarted": len(r["workers_restarted"]),
                "identical_across_repeats": r["identical_across_repeats"],
                "in_memory_audit_s": m["audit_wall_s"] if m else None,
                "in_memory_effects_s": m["effects_wall_s"] if m else None,
                "in_memory_peak_gb": m["maxrss_bytes"] / GB if m else None,
                "ratio_in_memory_audit_to_distributed": m["audit_wall_s"] / r["wall_s"] if m else None,
                "ratio_in_memory_effects_to_distributed": m["effects_wall_s"] / r["wall_s"] if m else None,
            }
        )
    return {"sizes": sizes}


def write_audit_dask(doc: dict[str, Any], out: Path) -> None:
    """``audit_dask.json`` (every measurement and the summary) and ``audit_dask.md`` (the tables) in ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    doc["summary"] = summary(doc)
    _atomic_write(out / "audit_dask.json", json.dumps(doc, indent=1) + "\n")
    _atomic_write(out / "audit_dask.md", "# The audit of a Dask DataFrame (issue 30)\n\n" + tables(doc))


def _timing_table(doc: dict[str, Any]) -> list[str]:
    lines = [
        "| rows | partitions | runs timed | distributed audit s | scan s | fits s | AIPW sums s | influence s "
        "| peak per worker GB | client peak GB | in-memory audit s | in-memory effects s | in-memory peak GB "
        "| in-memory audit / distributed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in summary(doc)["sizes"]:
        st = s["stage_s"]
        lines.append(
            f"| {_rows(s['rows'])} | {s['partitions']} | {s['repeats']} | {_fmt(s['wall_s'])} | {_fmt(st.get('scan'))} "
            f"| {_fmt(st.get('fit'))} | {_fmt(st.get('sums'))} | {_fmt(st.get('influence'))} "
            f"| {_fmt(s['worker_peak_gb'])} | {_fmt(s['client_peak_gb'])} | {_fmt(s['in_memory_audit_s'])} "
            f"| {_fmt(s['in_memory_effects_s'])} | {_fmt(s['in_memory_peak_gb'])} "
            f"| {_fmt(s['ratio_in_memory_audit_to_distributed'])} |"
        )
    return lines


def _estimates_table(doc: dict[str, Any]) -> list[str]:
    memory = {r["rows"]: r for r in _ok(doc["in_memory"])}
    lines = [
        "| rows | what | measure | truth | distributed estimate | 95% interval | in-memory estimate | 95% interval |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in _ok(doc["distributed"]):
        m = memory.get(r["rows"])
        for out, label in OUTCOMES:
            for key, name in MEASURES:
                e = r["estimates"][out][key]
                mem = m["estimates"][out][key] if m else None
                mem_est = _fmt(mem["estimate"], 4) if mem else "–"
                mem_ci = f"[{_fmt(mem['ci'][0], 4)}, {_fmt(mem['ci'][1], 4)}]" if mem else "–"
                lines.append(
                    f"| {_rows(r['rows'])} | {label} | {name} | {_fmt(e['truth'], 4)} | {_fmt(e['estimate'], 4)} "
                    f"| [{_fmt(e['ci'][0], 4)}, {_fmt(e['ci'][1], 4)}] | {mem_est} | {mem_ci} |"
                )
    return lines


def _machine_line(doc: dict[str, Any]) -> str:
    m = doc["machine"]
    return (
        f"Machine: {_fmt(m.get('cpu_model'))}, {m['cpus']} CPUs, {_fmt(m.get('memory_gb'))} GB, {m['platform']}; "
        f"Python {m['python']}, numpy {m['numpy']}; cflib at commit {_fmt(doc.get('commit', '')[:7] or None)}. Load (`uptime`) at the start: {doc['uptime_at_start']}; "
        f"at the end: {doc['uptime_at_end']} (the machine is shared: the load includes other sessions' work)."
    )


def tables(doc: dict[str, Any]) -> str:
    """The timing, memory and estimate tables, and the machine."""
    lines = [
        _machine_line(doc),
        "",
        "**Time and memory** (seconds are medians of the timed runs; stages are the distributed audit's passes; peak "
        "memory per worker is the largest worker's resident set size, sampled twice a second and from the kernel's "
        "`ru_maxrss`; the client is the process that fits the nuisance models):",
        "",
        *_timing_table(doc),
        "",
        "**Estimates** (the model's prediction and the outcome; truth: `linear_sfm_truth`, for the prediction with "
        "the model's coefficients):",
        "",
        *_estimates_table(doc),
    ]
    de = doc.get("direct_effect")
    if de and "error" not in de:
        lines += ["", direct_effect_text(de)]
    return "\n".join(lines) + "\n"


def direct_effect_text(de: dict[str, Any]) -> str:
    """The direct effect at 10^6 rows (issue 30, item 4) in words, every number from the measurement."""
    rep, est = de["replications"], de["estimator_replications"]
    return (
        f"**The direct effect at {_rows(de['rows'])} rows** (seed {de['seed']}, the rows `linear_sfm(n, seed=seed)` "
        f"draws): the truth function gives Ctf-DE = {_fmt(de['truth_function'], 4)}; the Monte Carlo estimand on the "
        f"same rows, each unit's $Y_{{x_1, W_{{x_0}}}} - Y_{{x_0}}$ from the structural equations with its own noise "
        f"(`linear_sfm_counterfactuals`), averaged over the $x_0$ units, is {_fmt(de['monte_carlo_estimand'], 6)} "
        f"({_spread(de['monte_carlo_unit_spread'])}). The doubly robust estimate "
        f"(`ctf_effects`, linear learners) is {_fmt(de['estimate'], 4)} with standard error {_fmt(de['se'], 2)} "
        f"({_fmt(de['z_of_estimate'], 2)} standard errors from the truth; interval [{_fmt(de['ci'][0], 4)}, "
        f"{_fmt(de['ci'][1], 4)}]); with the propensities clipped at $10^{{-9}}$ instead of 0.01 it is "
        f"{_fmt(de['estimate_clip_1e-9'], 4)}, and with the SFM's true nuisances (no fitting, no clipping) "
        f"{_fmt(de['oracle_estimate'], 4)}. {_moved(de)} Over {rep['count']} fresh samples of {_rows(rep['rows'])} rows the "
        f"estimator with the true nuisances averages {_fmt(rep['mean'], 5)} ± {_fmt(rep['mean_se'], 2)} (spread "
        f"{_fmt(rep['sd'], 3)}, median standard error {_fmt(rep['median_influence_se'], 3)}, 95% coverage "
        f"{_fmt(rep['coverage_95'], 3)}, {_fmt(100 * rep['share_beyond_3_se'], 2)}% beyond 3 standard errors), and "
        f"`ctf_effects` itself over {est['count']} samples of {_rows(est['rows'])} rows averages {_fmt(est['mean'], 4)} "
        f"± {_fmt(est['mean_se'], 2)} (spread {_fmt(est['sd'], 3)}, mean standard error "
        f"{_fmt(est['mean_influence_se'], 3)}, coverage {_fmt(est['coverage_95'], 3)}). {_biased(de)}"
    )


def _spread(sd: float) -> str:
    return "the same for every unit, to rounding" if sd < 1e-9 else f"standard deviation over the units {_fmt(sd, 3)}"


def _moved(de: dict[str, Any]) -> str:
    """Whether the learners or the clipping move the estimate on these rows (against a quarter standard error)."""
    learners = abs(de["estimate"] - de["oracle_estimate"])
    clipping = abs(de["estimate"] - de["estimate_clip_1e-9"])
    if max(learners, clipping) < 0.25 * de["se"]:
        return (
            f"Neither the fitted learners (a difference of {_fmt(learners, 2)}) nor the clipping "
            f"({_fmt(clipping, 2)}) moves it by a quarter of a standard error: the deviation is in these rows' noise."
        )
    return (
        f"The fitted learners move it by {_fmt(learners, 2)} and the clipping by {_fmt(clipping, 2)}, more than a "
        "quarter of a standard error."
    )


def _biased(de: dict[str, Any]) -> str:
    """Whether the replications show a bias (their mean more than 3 of its standard errors from the truth)."""
    truth = de["truth_function"]
    off = [
        abs(r["mean"] - truth) / r["mean_se"]
        for r in (de["replications"], de["estimator_replications"])
        if r["mean_se"]
    ]
    if max(off) < 3:
        return (
            "Both means lie within 3 of their standard errors of the truth: no bias at this SFM, and the truth "
            f"function is the estimand; the seed-{de['seed']} sample's estimate lies "
            f"{_fmt(abs(de['z_of_estimate']), 2)} standard errors out"
            + (", a draw from the tail." if abs(de["z_of_estimate"]) > 3 else ".")
        )
    return f"A mean lies {_fmt(max(off), 2)} of its standard errors from the truth: a bias at this SFM."


def plot(doc: dict[str, Any], path: Path = FIGURE) -> None:
    """Wall time and peak memory against rows, log-log: the distributed audit, the in-memory audit and effects."""
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from cflib import plotting

    plotting.set_style()
    sizes = summary(doc)["sizes"]
    rows = [s["rows"] for s in sizes]
    fig, axes = plotting.subplots(1, 2, width=4.6, height=3.4)
    plotting.line_with_band(rows, [s["wall_s"] for s in sizes], label="distributed audit (2 workers)", ax=axes[0])
    mem = [s for s in sizes if s["in_memory_audit_s"] is not None]
    plotting.line_with_band(
        [s["rows"] for s in mem], [s["in_memory_audit_s"] for s in mem], label="in-memory audit", ax=axes[0]
    )
    plotting.line_with_band(
        [s["rows"] for s in mem], [s["in_memory_effects_s"] for s in mem], label="in-memory effects only", ax=axes[0]
    )
    plotting.line_with_band(rows, [s["worker_peak_gb"] for s in sizes], label="largest worker", ax=axes[1])
    plotting.line_with_band(rows, [s["client_peak_gb"] for s in sizes], label="client (nuisance fits)", ax=axes[1])
    plotting.line_with_band(
        [s["rows"] for s in mem], [s["in_memory_peak_gb"] for s in mem], label="in-memory audit process", ax=axes[1]
    )
    axes[1].axhline(sizes[0]["memory_limit_gb"], color="grey", linestyle="--", linewidth=1, label="worker memory limit")
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")  # 0.4, 2, 10: no 4 x 10^-1 on a log axis
    for ax in axes:
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(plain)
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.legend(fontsize=7)
    axes[0].set(xlabel="rows", ylabel="wall seconds", title="time")
    axes[1].set(xlabel="rows", ylabel="peak resident memory (GB)", title="memory")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def page_section(doc: dict[str, Any]) -> str:
    """The Performance page's section on the distributed audit (and its figure, written to :data:`FIGURE`)."""
    plot(doc)
    sizes = summary(doc)["sizes"]
    top = max(sizes, key=lambda s: s["rows"])
    worst = max(s["worker_peak_gb"] for s in sizes)
    scaling = ""
    if len(sizes) > 1:
        slope = float(np.polyfit(np.log([s["rows"] for s in sizes]), np.log([s["wall_s"] for s in sizes]), 1)[0])
        growth = max(s["worker_peak_gb"] for s in sizes) / min(s["worker_peak_gb"] for s in sizes)
        scaling = (
            f"Over the sizes the time grows as rows to the power {_fmt(slope, 2)} (a least-squares line through the "
            f"logarithms), and the largest worker's peak changes by a factor of {_fmt(growth, 2)} over a "
            f"{_fmt(float(top['rows'] / sizes[0]['rows']))}-fold growth of the rows: a worker holds a few partitions "
            "and the reduced sums, the client the nuisance subsample."
        )
    return f"""
## Auditing $10^7$ rows on a cluster

This section is generated from `benchmarks/results/audit_dask.json`, which `python -m benchmarks audit-dask`
writes (`benchmarks/results/audit_dask.md` holds the same tables). Rows of the linear SFM of
`cflib.data.fairness_sim.linear_sfm` are generated on the workers, partition by partition
(`dask.dataframe.from_map`, partition $i$ drawn from `SeedSequence([0, i])`, at most 250,000 rows a partition),
so no process ever holds all of them. A least-squares model of `y` on `x, z, w`, fitted on other rows of the
same SFM, is audited by `cflib.audit.audit_distributed` (linear nuisance learners, 5 cross-fitting folds from a
hash of the `id` column, nuisance models fitted on a hash-selected subsample of at most 200,000 rows, 200
bootstrap replicates) on a `LocalCluster` of two single-threaded workers with a memory limit of 4 GB each, a
fresh process and cluster for every size. Up to $10^6$ rows the time is the median of three runs after a
warm-up at the same size; at $10^7$ rows it is one run, after a warm-up of $10^5$ rows on the same cluster.
Beside it, in its own fresh process and on the same two cores, the in-memory audit of the same rows
(`cflib.audit.audit` with the same learners, folds and replicates, its folds fitted in two processes) and its
effects alone (`ctf_effects`), medians of three after a warm-up, where the rows fit in one process.

The audit of {_rows(top["rows"])} rows took {_fmt(top["wall_s"])} seconds ({_fmt(top["wall_s"] / 60, 2)} minutes); the largest worker's peak
memory over all sizes was {_fmt(worst, 2)} GB (limit {_fmt(top["memory_limit_gb"], 2)} GB); the issue's bars
are 30 minutes and 4 GB per worker. {scaling}

```{{image}} _static/audit_dask_scaling.png
:alt: Wall time and peak memory against the number of rows, log-log, for the distributed audit on two workers and the in-memory audit and effects
```

{tables(doc)}
### Identical however the data are split

Every random choice of the audit is a function of the row and the seed, never of its partition: each row's
cross-fitting fold, its rank in the nuisance subsample and its 200 bootstrap multipliers come from a 64-bit
hash of its key (or of its content); the nuisance models are fitted on the client on the subsample rows of
smallest rank, sorted by rank, so they see the same rows in the same order; and every sum is computed
exactly (each value cut into integer limbs on a fixed grid), so adding the partitions' sums in any order and
any tree gives the same total, rounded to a float once. The tests check the estimates and intervals of 3 and 17
partitions of shuffled rows to $10^{{-9}}$ (`tests/test_audit_dask.py`), and a worker killed mid-audit gives the
same numbers.

### Pointing the audit at a cluster

In Python, a Dask DataFrame and a client (or a scheduler's address) are all the audit needs:

```python
import dask.dataframe as dd
from distributed import Client

from cflib.audit import audit_distributed
from cflib.fairness import StandardFairnessModel

client = Client("tcp://scheduler:8786")            # or leave client out: a LocalCluster, one worker per core
data = dd.read_parquet("decisions/*.parquet")
sfm = StandardFairnessModel("x", ["z"], ["w"], "y")
result = audit_distributed(model, data, sfm=sfm, key="id", client=client)
result.summary()
```

`cflib.audit.audit(model, data, sfm=sfm)` hands a Dask DataFrame to the same function. On the command line,
a config whose `data` is a Parquet file, folder or glob is audited on the cluster that `--scheduler` names
(without it, a `LocalCluster` of one single-threaded worker per core), and `--data` replaces the config's
data:

```bash
cflib audit audit.yaml --data 'data/*.parquet' --scheduler tcp://scheduler:8786 --out report/
```

The workers need cflib installed; a model defined in a module beside the config travels to them by value.
"""
