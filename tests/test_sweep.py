"""Sweeps on a 2-worker LocalCluster: one row per point, failures recorded, resume after a kill."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from cflib.sweep import load_sweep, run_sweep, sweep_points

from .conftest import make_notebook

pytestmark = pytest.mark.slow


def _sweep_file(repo, grid: str, collect: str = "[square]", extra: str = "") -> str:
    path = repo / "notebooks" / "sweeps" / "demo.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"notebook: demo/01-square.ipynb\ngrid:\n{grid}\ncollect: {collect}\nworkers: 2\n{extra}")
    return str(path)


def test_grid_runs_as_rows_and_a_failing_point_is_recorded(fake_repo):
    f = _sweep_file(fake_repo, "  x: [1, 2]\n  fail_at: [2, 9]\n")
    res = run_sweep(f, progress=False)
    t = res.table.sort_values(["x", "fail_at"]).reset_index(drop=True)
    assert len(t) == 4 and res.n_failed == 1 and res.n_executed == 4
    bad = t[t["status"] == "failed"]
    assert list(bad["x"]) == [2] and "asked to fail at x=2" in bad["error"].iloc[0]
    ok = t[t["status"] != "failed"]
    assert list(ok["square"]) == [x * x for x in ok["x"]]
    assert (res.output_dir / "results.csv").exists() and res.table_path.suffix == ".parquet"
    # Re-running skips the completed points and retries only the failed one.
    again = run_sweep(f, progress=False)
    assert again.n_cached == 3 and again.n_executed == 1 and len(again.table) == 4


def test_killed_sweep_resumes_with_only_the_missing_points(fake_repo):
    make_notebook(
        fake_repo / "notebooks" / "demo" / "01-square.ipynb",
        "x = 2\nseed = 0\nfail_at = -1\n",
        "import time\nfrom cflib import claims\ntime.sleep(1)\nclaims.record('square', x * x)\n",
    )
    f = _sweep_file(fake_repo, "  x: [1, 2, 3, 4]\n")
    out = fake_repo / "_build" / "sweeps" / "demo"
    env = {**os.environ, "CFLIB_ROOT": str(fake_repo)}
    cmd = [sys.executable, "-m", "cflib.cli", "sweep", f, "--workers", "1"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 240
    while time.time() < deadline and len(list(out.glob("points/*/demo/01-square.run.json"))) < 2:
        time.sleep(0.5)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list(out.glob("points/*/demo/01-square.run.json")))
    assert 2 <= done < 4, f"kill came too late or too early ({done} points done)"
    res = run_sweep(f, progress=False)
    assert res.n_cached == done and res.n_executed == 4 - done and res.n_failed == 0
    assert sorted(res.table["square"]) == [1, 4, 9, 16]
    assert len(pd.read_csv(out / "results.csv")) == 4


def test_cli_exit_status_and_rows(fake_repo):
    f = _sweep_file(fake_repo, "  x: [3]\n  fail_at: [3]\n")
    env = {**os.environ, "CFLIB_ROOT": str(fake_repo)}
    res = subprocess.run(
        [sys.executable, "-m", "cflib.cli", "sweep", f, "--workers", "1"], env=env, capture_output=True, text=True
    )
    assert res.returncode == 1 and "1 failed point(s)" in res.stdout


@pytest.mark.parametrize(
    ("grid", "collect", "extra", "match"),
    [
        ("  x: 3\n", "[square]", "", r"grid\['x'\] must be a non-empty list"),
        ("  y: [1]\n", "[square]", "", "has no parameter 'y'"),
        ("  x: [1]\n", "square", "", "collect must be a non-empty list"),
        ("  x: [1]\n", "[square]", "colour: red\n", "unknown key"),
        ("  x: [1]\n", "[square]", "scale: huge\n", "scale must be one of"),
    ],
)
def test_malformed_sweep_files_give_one_clear_error(fake_repo, grid, collect, extra, match):
    f = _sweep_file(fake_repo, grid, collect, extra)
    with pytest.raises(ValueError, match=match):
        load_sweep(f)
    assert not (fake_repo / "_build").exists()  # nothing written


def test_malformed_yaml_and_cli_one_line(fake_repo):
    path = fake_repo / "notebooks" / "sweeps" / "bad.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("notebook: [unclosed\n")
    env = {**os.environ, "CFLIB_ROOT": str(fake_repo)}
    res = subprocess.run(
        [sys.executable, "-m", "cflib.cli", "sweep", str(path)], env=env, capture_output=True, text=True
    )
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and "not valid YAML" in lines[0]


def test_points_are_the_cartesian_product(fake_repo):
    spec = load_sweep(_sweep_file(fake_repo, "  x: [1, 2]\n  seed: [0, 1, 2]\n"))
    pts = sweep_points(spec)
    assert len(pts) == 6 and {json.dumps(p, sort_keys=True) for p in pts}.__len__() == 6


def test_shards_cover_the_grid_and_merge_into_the_full_table(fake_repo):
    """Split a 3x2 grid into 2 shards on the embedded Dask cluster and merge them back in grid order."""
    f = _sweep_file(fake_repo, "  x: [1, 2, 3]\n  seed: [0, 1]\n")
    env = {**os.environ, "CFLIB_ROOT": str(fake_repo)}
    outs = []
    for k in (1, 2):  # as two CI jobs would, each into its own folder (its artifact)
        out = fake_repo / "artifacts" / f"shard-{k}"
        res = run_sweep(f, output=out, shard=f"{k}/2", workers=1, progress=False)
        assert len(res.table) == 3 and res.n_failed == 0
        assert (out / f"results.shard-{k}-of-2.csv").exists() and not (out / "results.parquet").exists()
        outs.append(out)
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "cflib.cli",
            "merge",
            f,
            str(fake_repo / "artifacts"),
            "--output",
            str(fake_repo / "merged"),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 0, cli.stderr
    merged = pd.read_parquet(fake_repo / "merged" / "results.parquet")
    assert [(r.x, r.seed) for r in merged.itertuples()] == [(x, s) for x in (1, 2, 3) for s in (0, 1)]
    assert list(merged["square"]) == [x * x for x in merged["x"]]


def test_merge_refuses_incomplete_or_overlapping_shards(fake_repo):
    from cflib.sweep import merge_shards, parse_shard

    f = _sweep_file(fake_repo, "  x: [1, 2, 3]\n")
    a = run_sweep(f, output=fake_repo / "a", shard="1/2", workers=1, progress=False).output_dir
    with pytest.raises(ValueError, match="shard\\(s\\) 2/2 missing"):
        merge_shards(f, [a])
    b = run_sweep(f, output=fake_repo / "b", shard="1/2", workers=1, progress=False).output_dir
    with pytest.raises(ValueError, match="given twice"):
        merge_shards(f, [a / "results.shard-1-of-2.parquet", b / "results.shard-1-of-2.parquet"])
    with pytest.raises(FileNotFoundError, match="does not exist"):
        merge_shards(f, [fake_repo / "nowhere"])
    for bad in ("0/2", "3/2", "1", "a/b", "1/2/3"):
        with pytest.raises(ValueError, match="K/N"):
            parse_shard(bad)
    env = {**os.environ, "CFLIB_ROOT": str(fake_repo)}
    res = subprocess.run(
        [sys.executable, "-m", "cflib.cli", "sweep", f, "--shard", "5/2"], env=env, capture_output=True, text=True
    )
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1 and "K/N" in res.stderr
