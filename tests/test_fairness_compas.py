"""COMPAS under the SFM (Plecko & Bareinboim, Sec. 4) and the fair predictors of cflib.fairness.adapt."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cflib.data.fairness_sim import compas_like_sfm, linear_sfm
from cflib.fairness.adapt import fair_predictor, projection_predictor
from cflib.fairness.compas import prepare_compas
from cflib.fairness.decomposition import spm
from cflib.fairness.effects import ctf_effects
from cflib.fairness.sfm import StandardFairnessModel


@pytest.fixture(scope="module")
def compas():
    from cflib.data.real import DatasetMissingError

    try:
        return prepare_compas()
    except DatasetMissingError as exc:
        pytest.skip(str(exc))


def test_compas_disparities_exact(compas):
    df, sfm = compas
    assert len(df) == 7214
    assert round(spm(df.nonwhite, df.two_year_recid), 4) == 0.0864
    assert round(spm(df.nonwhite, df.northpointe), 4) == 0.1694
    sfm.validate(df, ["two_year_recid", "northpointe"])


def test_prepare_compas_rejects_wrong_table():
    with pytest.raises(ValueError, match="lacks columns"):
        prepare_compas(pd.DataFrame({"race": ["a"]}))


def test_projection_predictor_has_no_direct_or_indirect_effect():
    df = linear_sfm(4000, seed=0)
    sfm = StandardFairnessModel("x", ["z"], ["w"], "y")
    df["proj"] = projection_predictor(df, sfm, {"Z"}, learner="linear", seed=0)
    df["diff"] = df.y - df.proj
    r = ctf_effects(df, sfm, ["proj", "diff"], learner="linear", seed=0)
    assert abs(r["proj"].estimate["DE"]) < 0.02 and abs(r["proj"].estimate["IE"]) < 0.02
    # Its spurious effect equals the outcome's: the paired difference is not significant.
    assert not r["diff"].significant("SE")


def test_fair_predictor_bn_empty_removes_disparity():
    df = compas_like_sfm(4000, seed=1)
    sfm = StandardFairnessModel("x", ["z1", "z2"], ["j", "p", "d"], "y")
    none = fair_predictor(df, sfm, set(), learner="linear", transport_learner="linear", n_folds=2, seed=0)
    both = fair_predictor(df, sfm, {"Z", "W"}, learner="linear", transport_learner="linear", n_folds=2, seed=0)
    assert abs(spm(df.x, none.score)) < 0.02
    assert spm(df.x, both.score) > spm(df.x, none.score) + 0.03
    # x0 units keep their values under every transport
    x0 = df.x == 0
    assert np.array_equal(none.loc[x0, "p_adapted"].to_numpy(), df.loc[x0, "p"].to_numpy())
