"""The audit of a Dask DataFrame (issue 30) on a LocalCluster of two single-threaded workers.

The same rows give the same numbers for any partitioning and row order, agree with the in-memory estimator
(:func:`cflib.fairness.effects.ctf_effects`) within its interval's half-width, recover the direct effect of the
generating linear SFM (:func:`cflib.data.fairness_sim.linear_sfm_truth`: ``Ctf-DE = b_x``), give the in-memory
group table and Newcombe differences from reduced counts, and survive a worker killed mid-audit. With a
counterfactual model, the row ``"CF-CLOT"`` (random Fourier features, :mod:`cflib.stats.closeness_rff`) is the same
for any partitioning, equals the in-memory :func:`cflib.stats.closeness_rff.cfclot_rff_test` on the same rows and
leaves the other rows as they are.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import time
import warnings

import cloudpickle
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pytest
from scipy.special import expit
from sklearn.linear_model import LinearRegression

from cflib.audit import AuditReport, audit
from cflib.audit.distributed import audit_distributed
from cflib.data.fairness_sim import LinearSFMParams, linear_sfm, linear_sfm_truth
from cflib.fairness.effects import MEASURES, ctf_effects
from cflib.fairness.sfm import StandardFairnessModel
from cflib.stats.closeness import cfclot_test
from cflib.stats.closeness_rff import cfclot_rff_test
from cflib.stats.rates import group_rates, newcombe_difference
from cflib.validation import CflibWarning

# The workers cannot import this test module: its functions travel by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])

SEED = 7
N = 20_000
PARAMS = LinearSFMParams()
SFM = StandardFairnessModel("x", ["z"], ["w"], "y")
DATA = linear_sfm(N, PARAMS, seed=SEED).drop(columns="y_hat").assign(id=np.arange(N) * 7919 + 13)
MODEL = LinearRegression().fit(DATA[["x", "z", "w"]], DATA["y"])
NUMERIC = ["estimate", "se", "ci_low", "ci_high", "pvalue"]


def slow_model(frame: pd.DataFrame) -> np.ndarray:
    """The fitted model, slowed down so that a worker can be killed while the audit runs."""
    time.sleep(0.15)
    return MODEL.predict(frame[["x", "z", "w"]])


def score(frame: pd.DataFrame) -> np.ndarray:
    """A probability score (decisions at 0.5) of the categorical-confounder data."""
    return expit(frame["w"].to_numpy() + 0.4 * frame["z"].to_numpy() - 0.8)


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        memory_limit="1GiB",
        dashboard_address=":0",
        silence_logs=logging.ERROR,
    )
    c = Client(cluster)
    c.run(__import__, "cflib.audit.distributed")  # the workers' imports (seconds) belong to the cluster's start
    yield c
    c.close()
    cluster.close()


def run(client, frame: pd.DataFrame, npartitions: int, predict=MODEL, **kw):
    kw = {"sfm": SFM, "nuisance_rows": 5000, "seed": SEED, "client": client, "progress": False, **kw}
    return audit_distributed(predict, dd.from_pandas(frame, npartitions=npartitions, sort=False), **kw)


@pytest.fixture(scope="module")
def by_key(client):
    """Keyed on the id column, nuisances fitted on all rows, 5 partitions in the generated order."""
    return run(client, DATA, 5, key="id", nuisance_rows=10**6)


def assert_same(a, b) -> None:
    np.testing.assert_allclose(a.rows[NUMERIC].to_numpy(float), b.rows[NUMERIC].to_numpy(float), rtol=0, atol=1e-9)
    for out in a.details["effects"]:
        np.testing.assert_allclose(a.details["effects"][out].draws, b.details["effects"][out].draws, rtol=0, atol=1e-9)
    pd.testing.assert_frame_equal(a.groups, b.groups)


def test_partitioning_and_row_order_do_not_change_the_numbers(client):
    three = run(client, DATA, 3)
    shuffled = DATA.sample(frac=1.0, random_state=1)
    seventeen = run(client, shuffled, 17)
    assert three.details["settings"]["n_partitions"] == 3 and seventeen.details["settings"]["n_partitions"] == 17
    assert (
        three.details["settings"]["nuisance_rows_used"] == 5000
        and "subsample of 5000 of 20000" in three.details["settings"]["nuisance_fit"]
    )
    assert_same(three, seventeen)
    # Not a vacuous comparison: another seed draws other folds, subsample and multipliers.
    other = run(client, DATA, 3, seed=SEED + 1)
    assert np.abs(other.rows["ci_low"].to_numpy(float) - three.rows["ci_low"].to_numpy(float))[:4].max() > 1e-6


def test_agrees_with_the_in_memory_estimator_and_recovers_the_direct_effect(by_key):
    assert (
        by_key.details["settings"]["nuisance_rows_used"] == N
        and by_key.details["settings"]["nuisance_fit"] == "all rows of the other folds"
    )
    frame = DATA.assign(_y_hat=MODEL.predict(DATA[["x", "z", "w"]]))
    mem = ctf_effects(frame, SFM, ["_y_hat", "y"], learner="linear", n_boot=200, ci="percentile", seed=SEED)
    for out, suffix in (("_y_hat", ""), ("y", " (y)")):
        for m, name in zip(MEASURES, ("TV", "Ctf-DE", "Ctf-IE", "Ctf-SE"), strict=True):
            lo, hi = mem[out].ci[m]
            gap = abs(by_key.rows.loc[name + suffix, "estimate"] - mem[out].estimate[m])
            assert gap <= (hi - lo) / 2, (name + suffix, gap, (hi - lo) / 2)
            mem_se = mem[out].influence[:, MEASURES.index(m)].std(ddof=1) / np.sqrt(N)  # its influence-function SE
            assert by_key.details["effects"][out].se[m] == pytest.approx(mem_se, rel=0.05, abs=1e-12)
    truth = linear_sfm_truth(PARAMS)["DE"]  # Ctf-DE of the linear SFM is b_x
    row = by_key.rows.loc["Ctf-DE (y)"]
    assert row["ci_low"] < truth < row["ci_high"]
    assert by_key.details["effects"]["y"].decomposition_residual() < 1e-9
    white = by_key.rows.loc["Ctf-DE (white-box)", "estimate"]
    assert white == pytest.approx(MODEL.coef_[0], abs=1e-9)  # a linear model's f(x1) - f(x0) is its x coefficient


def test_group_table_and_parity_match_the_in_memory_counts(client):
    rng = np.random.default_rng(SEED)
    base = linear_sfm(6000, PARAMS, seed=SEED + 2)
    region = np.where(
        rng.random(6000) < 0.3 + 0.4 * base["x"], "north", np.where(rng.random(6000) < 0.5, "east", "south")
    )
    frame = pd.DataFrame(
        {
            "group": np.where(base["x"] == 1, "b", "a"),
            "z": base["z"],
            "region": region,
            "w": base["w"] + (region == "north"),
            "label": np.where(base["y"] > 1.0, "yes", "no"),
        }
    )
    extra = frame.iloc[:300].assign(group="c")  # a third level, left out of the a-b comparison
    data = pd.concat([frame, extra], ignore_index=True)
    sfm = StandardFairnessModel("group", ["z", "region"], ["w"], "label", x0="a", x1="b")
    res = run(client, data, 4, predict=score, sfm=sfm, y1="yes", nuisance_rows=10**6, n_boot=50)
    assert res.provenance["group_counts"]["c"] == 300 and res.provenance["n_rows_compared"] == 6000
    dec = (score(frame) >= 0.5).astype(int)
    y01 = (frame["label"] == "yes").to_numpy().astype(int)
    expected = group_rates(
        frame["group"].to_numpy(),
        dec,
        y01,
        level=0.95,
        no_decision="predictions outside [0, 1] are not decisions",
        no_outcome="no outcome column",
    )
    pd.testing.assert_frame_equal(res.groups, expected, check_dtype=False)
    a, b = frame["group"].to_numpy() == "a", frame["group"].to_numpy() == "b"
    for name, sel in (("DP", np.ones(len(frame), bool)), ("EO", y01 == 1), ("FPR difference", y01 == 0)):
        d = newcombe_difference(
            int(dec[a & sel].sum()), int((a & sel).sum()), int(dec[b & sel].sum()), int((b & sel).sum())
        )
        got = res.rows.loc[name]
        np.testing.assert_allclose(
            [got["estimate"], got["ci_low"], got["ci_high"], got["pvalue"]],
            [d.difference, d.ci[0], d.ci[1], d.pvalue],
            rtol=0,
            atol=1e-12,
        )
    # The effects with a categorical confounder agree with the in-memory estimator on the pair's rows.
    mem = ctf_effects(
        frame.assign(_y_hat=score(frame), label=y01.astype(float)),
        sfm,
        ["_y_hat", "label"],
        learner="linear",
        seed=SEED,
    )
    for out, suffix in (("_y_hat", ""), ("label", " (y)")):
        for m, name in zip(MEASURES, ("TV", "Ctf-DE", "Ctf-IE", "Ctf-SE"), strict=True):
            lo, hi = mem[out].ci[m]
            assert abs(res.rows.loc[name + suffix, "estimate"] - mem[out].estimate[m]) <= (hi - lo) / 2


def test_a_worker_killed_mid_audit_gives_the_same_numbers(client, by_key):
    pids = client.run(os.getpid)
    killed: dict[str, object] = {}

    def kill_a_busy_worker() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            busy = sorted(w for w, keys in client.processing().items() if keys)
            if busy:
                time.sleep(0.3)
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.update(worker=busy[0], at=time.monotonic())
                return
            time.sleep(0.02)

    thread = threading.Thread(target=kill_a_busy_worker)
    thread.start()
    shuffled = DATA.sample(frac=1.0, random_state=2)
    res = run(client, shuffled, 11, predict=slow_model, key="id", nuisance_rows=10**6)
    finished = time.monotonic()
    thread.join()
    client.wait_for_workers(2, timeout=120)
    assert killed and killed["at"] < finished, "the worker was not killed while the audit ran"
    assert set(client.run(os.getpid).values()) != set(pids.values())  # the nanny started a new worker
    assert_same(res, by_key)


def test_bad_input_gets_one_clear_line(client):
    def message(exc_type, call) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CflibWarning)
            with pytest.raises(exc_type) as info:
                call()
        text = str(info.value)
        assert "\n" not in text
        return text

    small = dd.from_pandas(DATA.iloc[:400], npartitions=2)
    assert "dask.dataframe.DataFrame" in message(TypeError, lambda: audit_distributed(MODEL, DATA, sfm=SFM))
    bad_sfm = StandardFairnessModel("x", ["zz"], ["w"], "y")
    assert "'zz'" in message(ValueError, lambda: audit_distributed(MODEL, small, sfm=bad_sfm))
    assert "key" in message(ValueError, lambda: audit_distributed(MODEL, small, sfm=SFM, key="nope"))
    assert "n_folds" in message(ValueError, lambda: audit_distributed(MODEL, small, sfm=SFM, n_folds=1))
    holes = DATA.iloc[:400].copy()
    holes.loc[3, "z"] = np.nan
    holes.loc[[5, 9], "w"] = np.inf
    text = message(ValueError, lambda: run(client, holes, 2))
    assert "missing" in text and "'z': 1" in text and "'w': 2" in text
    three = DATA.iloc[:400].assign(x=np.arange(400) % 3)
    assert "x0= and x1=" in message(ValueError, lambda: run(client, three, 2))


def test_audit_dispatches_a_dask_frame(client):
    small = DATA.iloc[:5000]
    got = audit(MODEL, dd.from_pandas(small, npartitions=3), sfm=SFM, learner="linear", seed=SEED, progress=False)
    assert type(got) is AuditReport  # the current client (the cluster's) runs it
    direct = run(client, small, 4, learner="linear", nuisance_rows=200_000, n_boot=200)
    assert_same(got, direct)
    frame = dd.from_pandas(small, npartitions=2)
    text = str(pytest.raises(ValueError, audit, MODEL, frame, sfm=SFM, business_necessity=["DE"]).value)
    assert text.startswith("business_necessity:") and "\n" not in text


def test_cli_audits_parquet_files_on_the_cluster(client, tmp_path, capsys):
    """`cflib audit` on a glob of Parquet files with --scheduler gives audit_distributed's numbers, and gates."""
    import json
    import xml.etree.ElementTree as ET

    import jsonschema
    import yaml

    from cflib.audit import load_schema
    from cflib.cli import main

    small = DATA.iloc[:6000]
    for i, rows in enumerate(np.array_split(np.arange(len(small)), 3)):
        small.iloc[rows].to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    (tmp_path / "dask_cli_model.py").write_text(
        "def predict(frame):\n    return 0.5 * frame['x'] + frame['w']\n\n\n"
        "def counterfactual(frame):  # x already at the other level: W moves by a_xw = 1\n"
        "    return frame.assign(w=frame['w'] + 2 * frame['x'] - 1)\n"
    )
    roles = {"x": "x", "z": ["z"], "w": ["w"], "y": "y"}
    settings = {"n_boot": 50, "learner": "linear", "key": "id", "nuisance_rows": 10**6, "seed": SEED}
    cfg = {"data": "part-*.parquet", "roles": roles, "model": "dask_cli_model:predict", **settings}
    (tmp_path / "audit.yaml").write_text(yaml.safe_dump(cfg))
    out = tmp_path / "out"
    address = client.scheduler.address
    argv = ["audit", str(tmp_path / "audit.yaml"), "--out", str(out), "--quiet", "--scheduler", address]
    junit = tmp_path / "junit.xml"
    assert main([*argv, "--fail-on", "Ctf-DE", "--junit", str(junit)]) == 1  # the model reads x: Ctf-DE is flagged
    assert "Ctf-DE" in capsys.readouterr().out
    failures = [c.get("name") for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    assert failures == ["Ctf-DE"]  # the JUnit file agrees with the gate
    assert sorted(p.name for p in out.iterdir()) == ["model_card.md", "report.html", "report.json"]
    got = json.loads((out / "report.json").read_text())
    jsonschema.validate(got, load_schema())  # the one schema of every audit report
    assert got["provenance"]["settings"]["n_partitions"] == 3 and got["provenance"]["n_rows"] == 6000
    assert "CF-CLOT" not in {r["check"] for r in got["checks"]}

    def same_model(frame: pd.DataFrame) -> pd.Series:
        return 0.5 * frame["x"] + frame["w"]

    direct = run(client, small, 2, predict=same_model, **settings)
    estimates = {r["check"]: r["estimate"] for r in got["checks"]}
    for name in ("TV", "Ctf-DE", "Ctf-IE", "Ctf-SE", "Ctf-DE (y)"):
        assert estimates[name] == pytest.approx(direct.rows.loc[name, "estimate"], abs=1e-9)
    # DP is not estimable (the predictions are not decisions): a gate never passes on nothing (issue 35)
    assert main([*argv, "--fail-on", "DP"]) == 1
    cfg["counterfactual"] = "dask_cli_model:counterfactual"  # CF-CLOT joins the checks
    (tmp_path / "audit.yaml").write_text(yaml.safe_dump(cfg))
    assert main(argv) == 0
    clot = [r for r in json.loads((out / "report.json").read_text())["checks"] if r["check"] == "CF-CLOT"]
    assert len(clot) == 1 and clot[0]["estimate"] > 0  # the model reads x and w: its counterfactuals differ


# ---------------------------------------------------------------------------- CF-CLOT with a counterfactual model
CF_N = 4000
CF_DATA = DATA.iloc[:CF_N]
EPS = 0.002  # the model moves the predictions under do(x): N-TE about 0.006 on these rows


def counterfactual(frame: pd.DataFrame) -> pd.DataFrame:
    """The linear SFM's counterfactual rows: ``x`` is already the intervened level; ``w`` moves by ``a_xw`` per unit of x."""
    moved = frame["x"].to_numpy() - (1 - frame["x"].to_numpy())  # +1 where x went 0 -> 1, -1 where it went 1 -> 0
    return frame.assign(w=frame["w"] + PARAMS.a_xw * moved)


def wrong_level(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(x=0)


def run_cf(client, frame: pd.DataFrame, npartitions: int, **kw):
    kw = {"key": "id", "n_boot": 20, "learner": "linear", "nuisance_rows": 200_000, **kw}
    return run(client, frame, npartitions, **kw)


@pytest.fixture(scope="module")
def cf_three(client):
    return run_cf(client, CF_DATA, 3, counterfactual=counterfactual, epsilon=EPS, n_features=128)


def in_memory_outputs(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    other = frame.assign(x=1 - frame["x"])
    return MODEL.predict(frame[["x", "z", "w"]]), MODEL.predict(counterfactual(other)[["x", "z", "w"]])


def test_cfclot_row_is_partition_invariant_and_equals_the_in_memory_test(client, cf_three):
    shuffled = CF_DATA.sample(frac=1.0, random_state=3)
    seven = run_cf(client, shuffled, 7, counterfactual=counterfactual, epsilon=EPS, n_features=128)
    a, b = cf_three.rows.loc["CF-CLOT", NUMERIC], seven.rows.loc["CF-CLOT", NUMERIC]
    np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), rtol=0, atol=1e-9, equal_nan=True)
    assert cf_three.details["settings"]["cfclot"] == seven.details["settings"]["cfclot"]
    s = cf_three.details["settings"]["cfclot"]
    assert s["pairs"] == CF_N and s["n_features"] == 128 and s["bandwidth"] > 0
    y_hat, y_cf = in_memory_outputs(CF_DATA)
    x = CF_DATA["x"].to_numpy()
    # each direction equals the in-memory random-feature test on that direction's units, at alpha / 2
    mems = []
    for code, key in enumerate(("x0 -> x1", "x1 -> x0")):
        sel = x == code
        mem = cfclot_rff_test(
            y_hat[sel], y_cf[sel], EPS, n_features=128, bandwidth=s["bandwidth"], seed=SEED, alpha=0.025
        )
        d = s["directions"][key]
        assert d["pairs"] == sel.sum()
        np.testing.assert_allclose(
            [d["statistic"], d["std_error"], d["pvalue"], d["threshold"], d["sigma_features"]],
            [mem.statistic, mem.std_error, mem.pvalue, mem.threshold, mem.sigma_features],
            rtol=0,
            atol=1e-9,
        )
        mems.append(mem)
    row = cf_three.rows.loc["CF-CLOT"]
    assert row["estimate"] == max(m.statistic for m in mems)
    assert row["pvalue"] == pytest.approx(min(1.0, 2 * min(m.pvalue for m in mems)), abs=1e-12)
    assert row["flagged"] == any(m.rejected for m in mems) and "128 random Fourier features" in row["method"]
    # the exact-kernel CF-CLOT on the same units lies within a few of the random-feature test's standard errors
    worst = int(np.argmax([m.statistic for m in mems]))
    exact = cfclot_test(y_hat[x == worst], y_cf[x == worst], EPS, bandwidth=s["bandwidth"], method="normal")
    assert abs(exact.statistic - row["estimate"]) < 4 * mems[worst].std_error
    # N-TE about 0.006: not EPS-close, by both tests
    assert exact.rejected and row["flagged"] and row["verdict"].startswith(f"not {EPS}-close (N-TE > {EPS} under do(x")


def test_cfclot_per_direction_sees_flips_that_go_both_ways(client):
    """A model that outputs the attribute itself: pooled, the factual and counterfactual outputs have the same
    distribution (x is balanced); each direction moves every output by 1, so the row is flagged."""
    frame = CF_DATA.iloc[:1000]

    def says_x(rows: pd.DataFrame) -> np.ndarray:
        return rows["x"].to_numpy(dtype=float)

    res = run_cf(client, frame, 3, predict=says_x, counterfactual=counterfactual, epsilon=0.1, n_features=128, n_boot=0)
    row = res.rows.loc["CF-CLOT"]
    assert row["flagged"] and row["estimate"] > 0.3 and res.rows.loc["CF-CLOT", "status"] == "flagged"
    # the pooled comparison this row replaced sees nothing: the two pooled samples have the same ones and zeros
    x = frame["x"].to_numpy(dtype=float)
    pooled = cfclot_rff_test(
        x, 1 - x, 0.1, n_features=128, bandwidth=res.details["settings"]["cfclot"]["bandwidth"], seed=SEED
    )
    assert not pooled.rejected and pooled.statistic < 0.05


def test_a_counterfactual_model_leaves_the_other_rows_unchanged(client, cf_three):
    plain = run_cf(client, CF_DATA, 3)
    assert "CF-CLOT" not in plain.rows.index and "cfclot" not in plain.details["settings"]
    shared = plain.rows.index
    np.testing.assert_allclose(
        cf_three.rows.loc[shared, NUMERIC].to_numpy(float), plain.rows[NUMERIC].to_numpy(float), rtol=0, atol=1e-12
    )
    # a model that ignores x: its counterfactual predictions equal the factual ones, N-TE 0, not flagged
    blind = LinearRegression().fit(CF_DATA[["z"]], CF_DATA["y"])
    res = audit_distributed(
        blind,
        dd.from_pandas(CF_DATA, npartitions=2),
        sfm=SFM,
        key="id",
        n_boot=0,
        learner="linear",
        counterfactual=counterfactual,
        epsilon=EPS,
        client=client,
        progress=False,
    )
    row = res.rows.loc["CF-CLOT"]
    assert row["estimate"] == 0.0 and not row["flagged"] and row["pvalue"] > 0.99


def test_audit_of_a_dask_frame_takes_a_counterfactual_model(client):
    small = CF_DATA.iloc[:2000]
    got = audit(
        MODEL,
        dd.from_pandas(small, npartitions=2),
        sfm=SFM,
        counterfactual=counterfactual,
        epsilon=EPS,
        learner="linear",
        n_boot=20,
        seed=SEED,
        progress=False,
    )
    assert type(got) is AuditReport and "CF-CLOT" in got.rows.index
    direct = run_cf(client, small, 3, key=None, counterfactual=counterfactual, epsilon=EPS)
    np.testing.assert_allclose(
        got.rows.loc["CF-CLOT", NUMERIC].to_numpy(float),
        direct.rows.loc["CF-CLOT", NUMERIC].to_numpy(float),
        rtol=0,
        atol=1e-9,
        equal_nan=True,
    )


def test_bad_closeness_input_gets_one_clear_line(client):
    def message(exc_type, call) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CflibWarning)
            with pytest.raises(exc_type) as info:
                call()
        text = str(info.value)
        assert "\n" not in text
        return text

    small = CF_DATA.iloc[:600]
    assert "epsilon" in message(
        ValueError, lambda: run_cf(client, small, 2, counterfactual=counterfactual, epsilon=0.0)
    )
    assert "n_features" in message(
        ValueError, lambda: run_cf(client, small, 2, counterfactual=counterfactual, n_features=1)
    )
    assert "counterfactual" in message(TypeError, lambda: run_cf(client, small, 2, counterfactual=3))
    assert "bandwidth" in message(
        ValueError, lambda: run_cf(client, small, 2, counterfactual=counterfactual, bandwidth=-1.0)
    )
    text = message(ValueError, lambda: run_cf(client, small, 2, counterfactual=wrong_level))
    assert text.startswith("counterfactual:") and "intervened level" in text
