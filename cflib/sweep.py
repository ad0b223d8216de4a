"""Parameter sweeps: one notebook run over a grid of parameters as Dask tasks.

A sweep file (``notebooks/sweeps/<name>.yaml``) names a notebook, a grid and the values to collect::

    notebook: foundations/01-counterfactuals-in-three-steps.ipynb
    scale: smoke          # overrides applied under every point (default: smoke)
    grid:                 # the cartesian product of these lists is run
      n_fit: [25, 100, 400]
      seed: [0, 1, 2]
    collect: [cf_error]   # keys the notebook stores with cflib.claims.record
    workers: 2            # workers of the embedded LocalCluster (optional)

Each point is executed by :func:`cflib.runner.execute` into its own folder, so the executed notebook
of every point is kept and a completed point (same notebook, parameters and ``cflib`` source) is
skipped on re-run: a crash loses nothing. A failing point records its error and the others go on.
The results table (one row per point: parameters, collected values, status, error, seconds) is
rewritten atomically after every point as Parquet and CSV.

A large grid can be split across machines (a CI matrix, a cluster's job array): ``shard=(k, n)`` runs
points ``k - 1, k - 1 + n, ...`` only and writes ``results.shard-k-of-n.{parquet,csv}``;
:func:`merge_shards` then checks that the shard tables cover every point of the grid exactly once
and writes the full ``results.{parquet,csv}``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from .paths import build_dir, repo_root
from .runner import folder_lock

__all__ = ["SweepSpec", "SweepResult", "load_sweep", "sweep_points", "parse_shard", "run_sweep", "merge_shards"]

_KEYS = {"notebook", "grid", "collect", "scale", "workers", "name", "description"}


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep definition.

    Attributes
    ----------
    name : str
        Sweep name (the file's stem unless given).
    notebook : str
        Notebook path relative to ``notebooks/``.
    grid : dict
        Parameter -> list of values.
    collect : tuple of str
        Keys recorded by the notebook (``cflib.claims.record``) that become columns.
    scale : str
        Scale whose overrides apply under every point.
    workers : int
        Workers of the embedded cluster.
    """

    name: str
    notebook: str
    grid: dict
    collect: tuple[str, ...]
    scale: str = "smoke"
    workers: int = 2


@dataclass(frozen=True)
class SweepResult:
    """Outcome of a sweep.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per point.
    table_path : pathlib.Path
        The Parquet file (a CSV copy lies beside it).
    output_dir : pathlib.Path
        Folder with ``points/<id>/`` (executed notebooks) and the tables.
    n_executed, n_cached, n_failed : int
        How many points ran now, were skipped as complete, or failed.
    """

    table: pd.DataFrame
    table_path: Path
    output_dir: Path
    n_executed: int
    n_cached: int
    n_failed: int


def load_sweep(path: str | os.PathLike, grid: Mapping[str, list] | None = None) -> SweepSpec:
    """Read and validate a sweep file.

    Parameters
    ----------
    path : path-like
        The YAML file.
    grid : mapping, optional
        Replaces the file's grid (e.g. a smaller grid from a notebook's parameters).

    Returns
    -------
    SweepSpec

    Raises
    ------
    ValueError
        One line naming the file and what to fix: bad YAML, a missing or unknown key, a grid that
        is not ``{parameter: [values]}``, an unknown notebook or parameter.
    """
    from .runner import SCALES, check_known_parameters, check_parameter_values, resolve_notebook

    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"sweep file {path} does not exist")
    try:
        data = yaml.safe_load(path.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping with keys notebook, grid, collect")
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise ValueError(f"{path}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_KEYS))}")
    for key in ("notebook", "grid", "collect"):
        if key not in data:
            raise ValueError(f"{path}: missing key {key!r}")
    try:
        rel, _ = resolve_notebook(data["notebook"])
    except (FileNotFoundError, ValueError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    g = dict(grid) if grid is not None else data["grid"]
    if not isinstance(g, dict) or not g:
        raise ValueError(f"{path}: grid must be a non-empty mapping {{parameter: [values]}}")
    for k, v in g.items():
        if not isinstance(v, list) or not v:
            raise ValueError(f"{path}: grid[{k!r}] must be a non-empty list of values, got {v!r}")
    check_known_parameters(rel, g, str(path))
    for k, values in g.items():
        for v in values:
            check_parameter_values(rel, {k: v}, f"{path}: grid")
    collect = data["collect"]
    if not isinstance(collect, list) or not collect or not all(isinstance(c, str) for c in collect):
        raise ValueError(f"{path}: collect must be a non-empty list of recorded value names")
    scale = data.get("scale", "smoke")
    if scale not in SCALES:
        raise ValueError(f"{path}: scale must be one of {SCALES}, got {scale!r}")
    workers = data.get("workers", 2)
    if not isinstance(workers, int) or workers < 1:
        raise ValueError(f"{path}: workers must be a positive integer, got {workers!r}")
    return SweepSpec(data.get("name", path.stem), rel, g, tuple(collect), scale, workers)


def sweep_points(spec: SweepSpec) -> list[dict[str, Any]]:
    """The cartesian product of the grid, one parameter dict per point, in a fixed order.

    Parameters
    ----------
    spec : SweepSpec

    Returns
    -------
    list of dict
    """
    keys = list(spec.grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(spec.grid[k] for k in keys))]


def parse_shard(text: str | tuple[int, int] | None) -> tuple[int, int] | None:
    """Read a shard given as ``"K/N"`` (1 <= K <= N) or ``(K, N)``.

    Parameters
    ----------
    text : str, tuple of int, or None
        ``None`` means the whole grid.

    Returns
    -------
    tuple of int or None
        ``(K, N)``.

    Raises
    ------
    ValueError
        When it is not of the form ``K/N`` with whole numbers ``1 <= K <= N``.
    """
    if text is None:
        return None
    parts = text if isinstance(text, tuple) else tuple(str(text).split("/"))
    try:
        k, n = (int(v) for v in parts)
    except (TypeError, ValueError):
        raise ValueError(f"shard must be K/N with whole numbers 1 <= K <= N (e.g. 2/4), got {text!r}") from None
    if len(parts) != 2 or not 1 <= k <= n:
        raise ValueError(f"shard must be K/N with whole numbers 1 <= K <= N (e.g. 2/4), got {text!r}")
    return k, n


def _table_stem(shard: tuple[int, int] | None) -> str:
    return "results" if shard is None else f"results.shard-{shard[0]}-of-{shard[1]}"


def _point_id(params: Mapping[str, Any]) -> str:
    text = json.dumps(params, sort_keys=True, default=str)
    readable = "_".join(f"{k}={v}" for k, v in params.items())
    readable = "".join(c if c.isalnum() or c in "=_-." else "-" for c in readable)[:80]
    return f"{readable}__{hashlib.sha256(text.encode()).hexdigest()[:8]}"


def _run_point(
    root: str, notebook: str, scale: str, params: dict, out: str, collect: tuple[str, ...], force: bool
) -> dict:
    """Execute one point (runs on a Dask worker). Never raises: errors become the row's status."""
    os.environ.setdefault("CFLIB_ROOT", root)
    from .runner import NotebookError, execute

    row: dict[str, Any] = {**params}
    t0 = time.perf_counter()
    try:
        res = execute(notebook, scale, params, output_dir=out, force=force)
        values = _collected(Path(out), notebook, collect)
        row.update(values)
        row.update(status=res.status, error="", seconds=res.seconds)
    except NotebookError as exc:
        row.update(status="failed", error=str(exc).splitlines()[0], seconds=time.perf_counter() - t0)
    except Exception as exc:  # a worker must report, not die: the other points go on
        row.update(
            status="failed", error=f"{type(exc).__name__}: {exc}".splitlines()[0], seconds=time.perf_counter() - t0
        )
    return row


def _collected(out: Path, notebook: str, collect: tuple[str, ...]) -> dict[str, Any]:
    claims_file = out / Path(notebook).with_suffix(".claims.json")
    values = json.loads(claims_file.read_text()).get("values", {}) if claims_file.exists() else {}
    missing = [c for c in collect if c not in values]
    if missing:
        raise ValueError(f"the notebook recorded no value named {', '.join(missing)} (cflib.claims.record)")
    return {c: values[c] for c in collect}


def _cached_row(spec: SweepSpec, params: dict, out: Path) -> dict | None:
    from .runner import is_cached, resolve_parameters

    stamp = is_cached(spec.notebook, spec.scale, resolve_parameters(spec.notebook, spec.scale, params), out)
    if stamp is None:
        return None
    try:
        values = _collected(out, spec.notebook, spec.collect)
    except ValueError:
        return None
    return {**params, **values, "status": "cached", "error": "", "seconds": stamp.get("seconds", 0.0)}


def _write_table(rows: list[dict], columns: list[str], out_dir: Path, stem: str = "results") -> Path:
    df = pd.DataFrame(rows, columns=columns)
    parquet = out_dir / f"{stem}.parquet"
    for path, writer in ((parquet, df.to_parquet), (out_dir / f"{stem}.csv", df.to_csv)):
        tmp = path.with_name(f".{path.name}.tmp")
        writer(tmp, index=False)
        os.replace(tmp, path)
    return parquet


def run_sweep(
    path: str | os.PathLike,
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    output: str | os.PathLike | None = None,
    force: bool = False,
    grid: Mapping[str, list] | None = None,
    progress: bool = True,
    shard: str | tuple[int, int] | None = None,
    scale: str | None = None,
) -> SweepResult:
    """Run a sweep on Dask: an embedded ``LocalCluster`` or an existing scheduler.

    Parameters
    ----------
    path : path-like
        Sweep file (``notebooks/sweeps/<name>.yaml``).
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``); its workers must have
        ``cflib`` installed and see this repository at the same path.
    workers : int, optional
        Workers of the embedded cluster (default: the file's ``workers``).
    output : path-like, optional
        Output folder (default ``_build/sweeps/<name>``).
    force : bool
        Re-run completed points too.
    grid : mapping, optional
        Replace the file's grid.
    progress : bool
        Show a progress bar.
    shard : str or tuple of int, optional
        ``"K/N"``: run only the K-th of N interleaved slices of the grid and write
        ``results.shard-K-of-N.{parquet,csv}`` (combine them with :func:`merge_shards`).
    scale : {"smoke", "book", "full"}, optional
        Replace the file's scale (the overrides applied under every point).

    Returns
    -------
    SweepResult
    """
    from dask.distributed import Client, LocalCluster, as_completed
    from tqdm import tqdm  # tqdm.auto warns in kernels without ipywidgets

    from .runner import SCALES

    spec = load_sweep(path, grid)
    if scale is not None:
        if scale not in SCALES:
            raise ValueError(f"scale must be one of {SCALES}, got {scale!r}")
        spec = replace(spec, scale=scale)
    shard = parse_shard(shard)
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer, got {workers!r}")
    out_dir = Path(output) if output is not None else build_dir() / "sweeps" / spec.name
    with folder_lock(out_dir, "cflib sweep"):  # a second sweep into this folder stops here, touching nothing
        points = sweep_points(spec)
        if shard is not None:
            points = points[shard[0] - 1 :: shard[1]]
        columns = [*spec.grid, *spec.collect, "status", "error", "seconds"]
        rows: dict[int, dict] = {}
        todo: list[int] = []
        for i, p in enumerate(points):
            row = None if force else _cached_row(spec, p, out_dir / "points" / _point_id(p))
            if row is None:
                todo.append(i)
            else:
                rows[i] = row
        n_cached = len(rows)

        def table() -> Path:
            return _write_table([rows[i] for i in sorted(rows)], columns, out_dir, _table_stem(shard))

        table_path = table()
        if todo:
            if scheduler:
                client = Client(scheduler)
                cluster = None
            else:
                # silence_logs: the workers' start and shutdown are logged as warnings ("Worker process still alive
                # ... killing"), which would show as stderr on a notebook page that runs a sweep
                cluster = LocalCluster(
                    n_workers=workers or spec.workers,
                    threads_per_worker=1,
                    processes=True,
                    dashboard_address=None,
                    silence_logs=logging.ERROR,
                )
                client = Client(cluster)
            try:
                futures = {
                    client.submit(
                        _run_point,
                        str(repo_root()),
                        spec.notebook,
                        spec.scale,
                        points[i],
                        str(out_dir / "points" / _point_id(points[i])),
                        spec.collect,
                        force,
                        pure=False,
                    ): i
                    for i in todo
                }
                bar = tqdm(total=len(points), initial=n_cached, desc=spec.name, disable=not progress)
                for fut in as_completed(futures):
                    i = futures[fut]
                    try:
                        row = fut.result()
                    except Exception as exc:  # its worker died (KilledWorker): this point failed, the others go on
                        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                        row = {**points[i], "status": "failed", "error": error, "seconds": 0.0}
                    rows[i] = row
                    table_path = table()
                    bar.update(1)
                    if row["status"] == "failed" and progress:  # the reason belongs in the terminal too
                        point = ", ".join(f"{k}={row[k]}" for k in spec.grid)
                        bar.write(f"{spec.name}: point {point} failed: {row['error']}")
                bar.close()
            finally:
                client.close()
                if cluster is not None:
                    cluster.close()
    df = pd.read_parquet(table_path)
    n_failed = int((df["status"] == "failed").sum())
    return SweepResult(df, table_path, out_dir, len(todo), n_cached, n_failed)


def merge_shards(
    path: str | os.PathLike,
    inputs: list[str | os.PathLike],
    *,
    output: str | os.PathLike | None = None,
    grid: Mapping[str, list] | None = None,
) -> SweepResult:
    """Combine the shard tables of a sweep into its full results table.

    Parameters
    ----------
    path : path-like
        The sweep file the shards ran.
    inputs : list of path-like
        Shard tables (``results.shard-K-of-N.parquet``) or folders searched recursively for them (the
        artifacts of a CI matrix, downloaded side by side).
    output : path-like, optional
        Where ``results.{parquet,csv}`` go (default ``_build/sweeps/<name>``).
    grid : mapping, optional
        The grid the shards ran, when it replaced the file's.

    Returns
    -------
    SweepResult
        ``n_executed`` counts the merged rows; ``n_cached`` is 0.

    Raises
    ------
    FileNotFoundError
        An input path does not exist, or no shard table was found.
    ValueError
        The tables disagree on their number of shards, a shard is missing or given twice, a point is
        missing or duplicated, or a row is not a point of the grid.
    """
    spec = load_sweep(path, grid)
    files: list[Path] = []
    for item in inputs:
        p = Path(item)
        if not p.exists():
            raise FileNotFoundError(f"shard input {p} does not exist")
        files += sorted(p.rglob("results.shard-*-of-*.parquet")) if p.is_dir() else [p]
    if not files:
        raise FileNotFoundError(f"no results.shard-K-of-N.parquet found under {', '.join(map(str, inputs))}")
    shards: dict[tuple[int, int], Path] = {}
    for f in files:
        try:
            k, n = (int(v) for v in f.name.removeprefix("results.shard-").removesuffix(".parquet").split("-of-"))
        except ValueError:
            raise ValueError(f"{f}: not a shard table (expected results.shard-K-of-N.parquet)") from None
        if (k, n) in shards:
            raise ValueError(f"shard {k}/{n} given twice: {shards[(k, n)]} and {f}")
        shards[(k, n)] = f
    counts = {n for _, n in shards}
    if len(counts) != 1:
        raise ValueError(f"the shard tables come from different splits: {sorted(shards)}")
    n = counts.pop()
    missing = sorted(set(range(1, n + 1)) - {k for k, _ in shards})
    if missing:
        raise ValueError(f"shard(s) {', '.join(f'{k}/{n}' for k in missing)} missing: run them or pass their tables")
    table = pd.concat([pd.read_parquet(shards[key]) for key in sorted(shards)], ignore_index=True)
    want = {_point_id(p): i for i, p in enumerate(sweep_points(spec))}
    try:
        ids = [_point_id({k: _plain(r[k]) for k in spec.grid}) for _, r in table.iterrows()]
    except KeyError as exc:
        raise ValueError(f"the shard tables have no column {exc}: were they made from {path}?") from None
    unknown = [i for i in ids if i not in want]
    if unknown:
        raise ValueError(f"{len(unknown)} row(s) are not points of the grid in {path} (first: {unknown[0]})")
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise ValueError(f"point(s) present in more than one shard: {', '.join(dupes[:3])}")
    absent = sorted(set(want) - set(ids))
    if absent:
        raise ValueError(f"{len(absent)} point(s) of the grid are in no shard table (first: {absent[0]})")
    table = table.assign(_o=[want[i] for i in ids]).sort_values("_o").drop(columns="_o").reset_index(drop=True)
    out_dir = Path(output) if output is not None else build_dir() / "sweeps" / spec.name
    out_dir.mkdir(parents=True, exist_ok=True)
    table_path = _write_table(table.to_dict("records"), list(table.columns), out_dir)
    n_failed = int((table["status"] == "failed").sum())
    return SweepResult(table, table_path, out_dir, len(table), 0, n_failed)


def _plain(value: Any) -> Any:
    """A table cell as the plain Python value the grid holds (numpy scalars come back from Parquet)."""
    return value.tolist() if hasattr(value, "tolist") else value
