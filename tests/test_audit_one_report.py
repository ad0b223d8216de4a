"""One audit at three scales (issue 37): the in-memory and the Dask audit give one report type with the same rows.

The same synthetic data (two attributes, sex and race, with one intersectional group of 12 rows) go through
:func:`cflib.audit.audit` as a pandas frame and as a Dask frame: the same :class:`~cflib.audit.AuditReport` type, the
same group rows (the small group listed, ``inconclusive``), the same statuses, each estimate within its interval's
half-width of the other's, and HTML, JUnit, model card and schema-valid JSON from both. ECA on Dask equals the
in-memory row to 1e-9 and CIT-LR agrees within the level; both are identical for 3 and 7 partitions.
"""

from __future__ import annotations

import json
import logging
import sys
import warnings
import xml.etree.ElementTree as ET

import cloudpickle
import dask.dataframe as dd
import jsonschema
import numpy as np
import pandas as pd
import pytest

from cflib.audit import AuditReport, AuditSettings, audit, load_schema
from cflib.audit.distributed import audit_distributed
from cflib.audit.intersections import holm
from cflib.fairness.sfm import StandardFairnessModel

cloudpickle.register_pickle_by_value(sys.modules[__name__])

SEED = 3
N = 4000
SMALL = "sex=F & race=C"
SFM = StandardFairnessModel("x", ["z"], ["w"], "y")
OPTIONS = {"n_boot": 50, "learner": "linear", "seed": SEED, "progress": False, "groups": ["sex", "race"]}


def make_data(n: int = N, seed: int = SEED) -> pd.DataFrame:
    """Two attributes; the protected one (x) is sex; race C holds 12 rows, all with sex F."""
    rng = np.random.default_rng(seed)
    sex = rng.choice(["F", "M"], n)
    race = rng.choice(["A", "B"], n)
    race[np.flatnonzero(sex == "F")[:12]] = "C"
    x = (sex == "M").astype(int)
    z = rng.normal(size=n)
    w = 0.8 * z + 1.2 * x + rng.normal(size=n)
    y = (w + 0.5 * (race == "B") + rng.normal(size=n) > 0.8).astype(int)
    return pd.DataFrame({"id": np.arange(n), "sex": sex, "race": race, "x": x, "z": z, "w": w, "y": y})


DATA = make_data()


def model(frame: pd.DataFrame) -> np.ndarray:
    """A score that reads the mediator only: x reaches it through w."""
    return 1 / (1 + np.exp(-(frame["w"].to_numpy() - 0.8)))


def counterfactual(frame: pd.DataFrame) -> pd.DataFrame:
    """x already at the other level: w moves by 1.2 per unit of x."""
    return frame.assign(w=frame["w"] + 1.2 * (2 * frame["x"] - 1))


@pytest.fixture(scope="module")
def client():
    from dask.distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=logging.ERROR
    )
    c = Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def both(client):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = audit(model, DATA, sfm=SFM, counterfactual=counterfactual, z=["z"], **OPTIONS)
        dis = audit(
            model, dd.from_pandas(DATA, npartitions=3), sfm=SFM, counterfactual=counterfactual, z=["z"], **OPTIONS
        )
    return mem, dis


def test_one_report_type_same_groups_and_statuses(both):
    mem, dis = both
    assert type(mem) is AuditReport and type(dis) is AuditReport
    # the group table: every combination present, the small one listed with its n and inconclusive
    assert list(mem.groups.index) == list(dis.groups.index)
    assert mem.groups.loc[SMALL, "n"] == 12 and mem.groups.loc[SMALL, "status"] == "inconclusive"
    assert (mem.groups["status"] == np.where(mem.groups["n"] < 30, "inconclusive", "sufficient")).all()
    pd.testing.assert_frame_equal(mem.groups, dis.groups, check_dtype=False, rtol=0, atol=1e-12)
    # the rows: the Dask audit has every in-memory row but Algorithm 1 (refused out of core)
    assert set(mem.rows.index) - set(dis.rows.index) == {"PP (Algorithm 1)"}
    common = [c for c in mem.rows.index if c in dis.rows.index]
    assert list(dis.rows.index) == common  # same order
    small_rows = [c for c in common if f"[{SMALL} vs" in c]
    assert len(small_rows) == 3  # DP, EO, FPR of the small group, never dropped
    for c in small_rows:
        assert mem.rows.loc[c, "status"] == dis.rows.loc[c, "status"] == "inconclusive"
        assert "min_group_size" in mem.rows.loc[c, "status_reason"]
    pd.testing.assert_series_equal(mem.status()[common], dis.status()[common])
    for c in common:
        est_m, est_d = mem.rows.loc[c, "estimate"], dis.rows.loc[c, "estimate"]
        lo, hi = mem.rows.loc[c, "ci_low"], mem.rows.loc[c, "ci_high"]
        if np.isfinite(lo) and np.isfinite(hi):
            assert abs(est_m - est_d) <= (hi - lo) / 2, c
            lo, hi = dis.rows.loc[c, "ci_low"], dis.rows.loc[c, "ci_high"]
            assert abs(est_m - est_d) <= (hi - lo) / 2, c


def test_intersectional_rows_are_exact_and_holm_corrected(both):
    mem, dis = both
    inter = [c for c in mem.rows.index if " & " in c]
    assert len(inter) == 3 * (len(mem.groups) - 1)
    cols = ["estimate", "ci_low", "ci_high", "pvalue"]
    # counts reduce exactly: the intersectional rows are the same numbers in memory and on Dask
    np.testing.assert_allclose(mem.rows.loc[inter, cols].to_numpy(float), dis.rows.loc[inter, cols].to_numpy(float))
    info = mem.provenance["intersections"]
    assert info["reference"] == mem.groups["n"].idxmax() and "Holm" in info["correction"]
    assert "Holm" in mem.rows.loc[inter[0], "method"]
    # Holm: the i-th smallest of m p-values times m - i + 1, made monotone
    assert holm([0.01, 0.04, 0.03, np.nan]) == pytest.approx([0.03, 0.06, 0.06, np.nan], nan_ok=True)


def test_renderings_from_both(both, tmp_path):
    for name, report in zip(("mem", "dask"), both, strict=True):
        data = json.loads(report.to_json(tmp_path / f"{name}.json").read_text())
        jsonschema.validate(data, load_schema())
        page = report.to_html(tmp_path / f"{name}.html").read_text()
        assert SMALL.replace("&", "&amp;") in page and "inconclusive" in page
        card = report.model_card()
        assert SMALL in card and "## Group rates" in card
        tree = ET.parse(report.to_junit(tmp_path / f"{name}.xml", fail_on="DP"))
        cases = tree.getroot().findall(".//testcase")
        assert len(cases) == len(report.rows)
        failed = {c.get("name") for c in cases if c.find("failure") is not None}
        assert failed == set(report.gate("DP")) and "DP" in failed  # x reaches the decisions through w


def test_eca_and_cit_lr_on_dask_match_memory_and_any_partitioning(client, both):
    mem, three = both
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seven = audit_distributed(
            model,
            dd.from_pandas(DATA.sample(frac=1.0, random_state=1), npartitions=7),
            sfm=SFM,
            settings=AuditSettings(counterfactual=counterfactual, z=["z"], **OPTIONS),
            client=client,
        )
    cols = ["estimate", "ci_low", "ci_high", "pvalue"]
    for c in ("ECA", "CIT-LR"):
        pd.testing.assert_series_equal(three.rows.loc[c], seven.rows.loc[c])  # identical for 3 and 7 partitions
    np.testing.assert_allclose(
        three.rows.loc["ECA", cols].to_numpy(float), mem.rows.loc["ECA", cols].to_numpy(float), rtol=0, atol=1e-9
    )
    assert three.details["ECA"].n == mem.details["ECA"].n == N
    p_d, p_m, alpha = three.rows.loc["CIT-LR", "pvalue"], mem.rows.loc["CIT-LR", "pvalue"], mem.alpha
    assert (p_d < alpha) == (p_m < alpha) and abs(p_d - p_m) < alpha  # the same decision, p-values within the level


def test_settings_are_checked():
    with pytest.raises(TypeError, match="unknown audit option"):
        AuditSettings().with_options(folds=3)
    with pytest.raises(ValueError, match="groups"):
        AuditSettings(groups=["sex", "sex"]).group_columns()
    with pytest.raises(ValueError, match="min_group_size"):
        AuditSettings(min_group_size=0).group_columns()
    with pytest.raises(ValueError, match="groups: column"):
        audit(model, DATA, sfm=SFM, progress=False, groups=["sex", "nope"])
