"""Bad input gets one clear line: a table of malformed calls across the API and the ``cflib`` command.

Each row is a call, the error (or :class:`cflib.CflibWarning`) it must raise, and the names its
message must contain. Every call runs in an empty working folder with an empty output folder, and
both must still be empty afterwards: a refused call writes nothing.
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cflib
from cflib import audit as audit_mod
from cflib import claims, formatting, runner, sweep, validation, verdicts
from cflib.fairness import adapt, compas, decomposition, effects, parity, plots
from cflib.fairness import sfm as sfm_mod
from cflib.fairness.sfm import StandardFairnessModel
from cflib.stats import rates

from .conftest import make_notebook
from .validation_table import Case, case, one_clear_line

# ---------------------------------------------------------------------------- small inputs
RNG = np.random.default_rng(0)
N = 120
_X = np.repeat([0, 1], N // 2)
_Z = RNG.normal(size=N)
_W = 0.5 * _X + 0.3 * _Z + RNG.normal(size=N)
_Y = (0.4 * _X + 0.5 * _W + 0.2 * _Z + RNG.normal(size=N) > 0.3).astype(float)
DF = pd.DataFrame({"x": _X, "z": _Z, "w": _W, "y": _Y, "yhat": 0.5 * _W + 0.1 * _Z})
SFM = StandardFairnessModel("x", ["z"], ["w"], "y")
TINY = DF.iloc[[0, 1, 2, 3, 60, 61, 62, 63]].reset_index(drop=True)  # the issue's 8 rows
TRUTH = {"DE": 0.1, "IE": 0.05, "SE": -0.02}
X4, S4 = np.array([0, 1, 0, 1]), np.array([0.1, 0.4, 0.3, 0.9])


def with_value(col: str, row: int, value: float) -> pd.DataFrame:
    d = DF.copy()
    d.loc[row, col] = value
    return d


def predict(frame: pd.DataFrame) -> np.ndarray:
    return 0.5 * frame["w"].to_numpy() + 0.1 * frame["z"].to_numpy()


class Fitted:
    """An estimator fitted on labels ``classes`` (its predict_proba gives each the same probability)."""

    def __init__(self, classes: list) -> None:
        self.classes_ = np.array(classes)

    def predict_proba(self, frame: pd.DataFrame) -> np.ndarray:
        return np.full((len(frame), len(self.classes_)), 1 / len(self.classes_))


# ---------------------------------------------------------------------------- a throw-away repository
PARAMETERS = """\
n_fit = 500
delta_t = 1.0
seed = 0
seeds = [0, 1]
ns = [100, 200]
small = False
learner = "linear"
alpha = 0.05
quantile = 0.68  # range: (0, 1)
n_boot = 200  # range: >=0
kinds = list(range(3))
cases = None
"""
NB = "demo/01-params.ipynb"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("repo")
    (root / "notebooks" / "params").mkdir(parents=True)
    (root / "notebooks" / "sweeps").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: index\nchapters:\n  - file: notebooks/demo/01-params\n")
    make_notebook(root / "notebooks" / NB, PARAMETERS, "from cflib import claims\nclaims.record('n', n_fit)\n")
    (root / "notebooks" / "params" / "smoke.yaml").write_text(f"{NB}:\n  n_fit: 20\n  n_boot: 0\n")
    (root / "notebooks" / "params" / "full.yaml").write_text(f"{NB}:\n  n_fit: -20\n")
    sweeps = root / "notebooks" / "sweeps"
    base = f"notebook: {NB}\ncollect: [n]\n"
    (sweeps / "ok.yaml").write_text(base + "grid:\n  n_fit: [10, 20]\n")
    (sweeps / "negative.yaml").write_text(base + "grid:\n  n_fit: [10, -5]\n")
    (sweeps / "string.yaml").write_text(base + "grid:\n  n_fit: [10, abc]\n")
    (sweeps / "empty.yaml").write_text(base + "grid:\n  n_fit: []\n")
    (sweeps / "workers.yaml").write_text(base + "grid:\n  n_fit: [10]\nworkers: 0\n")
    (sweeps / "alpha.yaml").write_text(base + "grid:\n  alpha: [0.05, 1.5]\n")
    bad = root / "bad-claims"
    bad.mkdir()
    (bad / "x.claims.json").write_text("{not json")
    (root / "a-file.txt").write_text("not a folder")
    return root


@pytest.fixture
def env(repo, tmp_path, monkeypatch):
    """An empty working folder and output folder, the throw-away repo as cflib's root."""
    monkeypatch.setenv("CFLIB_ROOT", str(repo))
    monkeypatch.delenv("CFLIB_CLAIMS_FILE", raising=False)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    claims.reset()
    return tmp_path


def _r(rel: str) -> str:
    """A path inside the throw-away repository."""
    return str(Path(os.environ["CFLIB_ROOT"]) / rel)


# ---------------------------------------------------------------------------- the table


def cli(*args: str) -> Callable[[Path], int]:
    """In-process ``cflib ARGS``; ``{out}`` and ``{root}`` are replaced by the output folder and the repo."""
    from cflib.cli import main

    def call(env: Path) -> int:
        argv = [a.format(out=env / "out", root=os.environ["CFLIB_ROOT"]) for a in args]
        return main(argv)

    return call


class EXIT2(Exception):
    """Marker: a CLI case must return exit status 2 with one line on stderr."""


CASES: list[Case] = [
    # --- cflib.validation helpers
    case("array-none", TypeError, "x", lambda e: validation.check_array(None, "x")),
    case("array-string", TypeError, "x", lambda e: validation.check_array("abc", "x")),
    case("array-2d-for-1d", ValueError, "x", lambda e: validation.check_array([[1, 2], [3, 4]], "x")),
    case("array-nan", ValueError, ("x", "NaN"), lambda e: validation.check_array([1.0, np.nan], "x")),
    case("array-inf", ValueError, ("x", "infinite"), lambda e: validation.check_array([1.0, np.inf], "x")),
    case(
        "array-transposed",
        ValueError,
        ("feats", "transpose"),
        lambda e: validation.check_array(np.ones((3, 10)), "feats", ndim=2, n=10, n_name="y"),
    ),
    case("array-length", ValueError, ("y", "4"), lambda e: validation.check_array(np.ones(5), "y", n=4)),
    case("array-empty", ValueError, "x", lambda e: validation.check_array([], "x")),
    case("array-strings", TypeError, "x", lambda e: validation.check_array(["a", "b"], "x")),
    case("array-ragged", TypeError, "x", lambda e: validation.check_array([[1], [1, 2]], "x")),
    case("same-length", ValueError, ("a", "b"), lambda e: validation.check_same_length(a=[1, 2], b=[1])),
    case("count-bool", TypeError, "n", lambda e: validation.check_count(True, "n")),
    case("count-negative", ValueError, "n", lambda e: validation.check_count(-5, "n")),
    case("count-float", TypeError, "n_boot", lambda e: validation.check_count(2.0, "n_boot")),
    case("count-zero", ValueError, "n", lambda e: validation.check_count(0, "n")),
    case("probability-high", ValueError, "alpha", lambda e: validation.check_probability(1.5, "alpha")),
    case("probability-bool", TypeError, "alpha", lambda e: validation.check_probability(True, "alpha")),
    case("probability-nan", ValueError, "alpha", lambda e: validation.check_probability(float("nan"), "alpha")),
    case("probability-closed", ValueError, "p", lambda e: validation.check_probability(1.2, "p", closed=True)),
    case("real-inf", ValueError, "clip", lambda e: validation.check_real(float("inf"), "clip")),
    case("attribute-constant", ValueError, "x", lambda e: validation.check_attribute([1, 1, 1], "x")),
    case("attribute-three-levels", ValueError, "x", lambda e: validation.check_attribute([0, 1, 2], "x")),
    case("attribute-small-level", ValueError, ("x", "2"), lambda e: validation.check_attribute([0, 0, 0, 1], "x")),
    case("columns-not-frame", TypeError, "data", lambda e: validation.check_columns({"a": 1}, ["a"])),
    case("columns-missing", ValueError, "zz", lambda e: validation.check_columns(DF, ["zz"])),
    case("columns-empty", ValueError, "data", lambda e: validation.check_columns(DF.iloc[:0], ["x"])),
    case("callable", TypeError, "predict", lambda e: validation.check_callable(3, "predict")),
    case("choice", ValueError, "ci", lambda e: validation.check_choice("bca", "ci", ("normal", "percentile"))),
    case("range-syntax", ValueError, "range", lambda e: validation.parse_range(">= abc")),
    case("parameter-empty", TypeError, ("n_fit", "None"), lambda e: validation.check_parameter("n_fit", None, 500)),
    case("parameter-scalar-for-list", TypeError, "ns", lambda e: validation.check_parameter("ns", 5, [1, 2])),
    case(
        "parameter-declared-range",
        ValueError,
        "q",
        lambda e: validation.check_parameter("q", 1.0, 0.5, allowed=validation.parse_range("(0, 1)")),
    ),
    # --- cflib.fairness: ctf_effects
    case("effects-sfm", TypeError, "sfm", lambda e: effects.ctf_effects(DF, "sfm")),
    case("effects-folds-1", ValueError, "n_folds", lambda e: effects.ctf_effects(DF, SFM, n_folds=1)),
    case("effects-folds-bool", TypeError, "n_folds", lambda e: effects.ctf_effects(DF, SFM, n_folds=True)),
    case("effects-boot-negative", ValueError, "n_boot", lambda e: effects.ctf_effects(DF, SFM, n_boot=-1)),
    case("effects-level", ValueError, "level", lambda e: effects.ctf_effects(DF, SFM, level=1.5)),
    case("effects-level-bool", TypeError, "level", lambda e: effects.ctf_effects(DF, SFM, level=True)),
    case("effects-clip", ValueError, "clip", lambda e: effects.ctf_effects(DF, SFM, clip=0.5)),
    case("effects-ci", ValueError, "ci", lambda e: effects.ctf_effects(DF, SFM, ci="bca")),
    case("effects-percentile-no-boot", ValueError, "n_boot", lambda e: effects.ctf_effects(DF, SFM, ci="percentile")),
    case("effects-learner-name", ValueError, "learner", lambda e: effects.ctf_effects(DF, SFM, learner="xgb")),
    case("effects-learner-object", TypeError, "learner", lambda e: effects.ctf_effects(DF, SFM, learner=object())),
    case("effects-outcome-missing", ValueError, "nope", lambda e: effects.ctf_effects(DF, SFM, "nope")),
    case("effects-outcome-empty", ValueError, "outcome", lambda e: effects.ctf_effects(DF, SFM, [])),
    case("effects-nan", ValueError, "w", lambda e: effects.ctf_effects(with_value("w", 3, np.nan), SFM)),
    case("effects-inf", ValueError, ("y", "infinite"), lambda e: effects.ctf_effects(with_value("y", 3, np.inf), SFM)),
    case("effects-constant-x", ValueError, "x", lambda e: effects.ctf_effects(DF.assign(x=1), SFM)),
    case("effects-8-rows", ValueError, ("n_folds", "10"), lambda e: effects.ctf_effects(TINY, SFM, learner="linear")),
    case(
        "effects-8-rows-2-folds",
        cflib.CflibWarning,
        ("x", "50"),
        lambda e: effects.ctf_effects(TINY, SFM, learner="linear", n_folds=2, seed=0),
    ),
    case("effects-array", TypeError, "data", lambda e: effects.ctf_effects(DF.to_numpy(), SFM)),
    case("effects-empty", ValueError, "data", lambda e: effects.ctf_effects(DF.iloc[:0], SFM)),
    case("effects-string-outcome", TypeError, "y", lambda e: effects.ctf_effects(DF.assign(y="a"), SFM)),
    case("whitebox-callable", TypeError, "predict", lambda e: effects.whitebox_direct_effect(DF, SFM, 3)),
    case(
        "whitebox-shape", ValueError, "predict", lambda e: effects.whitebox_direct_effect(DF, SFM, lambda d: np.ones(3))
    ),
    case(
        "whitebox-inf",
        ValueError,
        "predict",
        lambda e: effects.whitebox_direct_effect(DF, SFM, lambda d: np.full(len(d), np.inf)),
    ),
    case("discrete-columns", ValueError, "joint", lambda e: effects.identify_discrete(pd.DataFrame({"p": [1.0]}))),
    case("discrete-not-frame", TypeError, "joint", lambda e: effects.identify_discrete("joint.csv")),
    case(
        "discrete-sum",
        ValueError,
        "joint",
        lambda e: effects.identify_discrete(
            pd.DataFrame({"p": [0.5, 1.0], "x": [0, 1], "z": [0, 0], "w": [0, 0], "y": [0.0, 1.0]})
        ),
    ),
    # --- cflib.fairness: decomposition
    case("spm-x-levels", ValueError, "x", lambda e: decomposition.spm([0, 1, 2], [1.0, 2.0, 3.0])),
    case("spm-outcome-inf", ValueError, "outcome", lambda e: decomposition.spm(X4, [1.0, 2.0, np.inf, 3.0])),
    case("spm-x-2d", ValueError, "x", lambda e: decomposition.spm(np.ones((2, 4)), S4)),
    case("spm-length", ValueError, "outcome", lambda e: decomposition.spm(X4, [1.0, 2.0, 3.0])),
    case("bins-nan", ValueError, "score", lambda e: decomposition.bin_scores([1.0, np.nan])),
    case("bins-zero", ValueError, "bins", lambda e: decomposition.bin_scores(S4, bins=0)),
    case("bins-bool", ValueError, "bins", lambda e: decomposition.bin_scores(S4, bins=True)),
    case("bins-decreasing", ValueError, "bin", lambda e: decomposition.bin_scores(S4, bins=[0.9, 0.5, 0.1])),
    case("ppm-score-inf", ValueError, "score", lambda e: decomposition.ppm_table(X4, S4, [0.1, np.inf, 0.2, 0.3])),
    case("ippm-weights", ValueError, "weights", lambda e: decomposition.ippm(X4, S4, S4, weights="size")),
    case("pp-y_x0-length", ValueError, "y_x0", lambda e: decomposition.pp_decomposition(X4, S4, S4, S4[:3])),
    case(
        "pp-cf-nan",
        ValueError,
        "yhat_x1",
        lambda e: decomposition.pp_decomposition_counterfactual(X4, S4, S4, S4, [0.1, np.nan, 0.2, 0.3]),
    ),
    case("linear-terms-type", TypeError, "a_xw", lambda e: decomposition.linear_pp_terms("a", 1.0, 1.0)),
    case("linear-terms-inf", ValueError, "a_wy", lambda e: decomposition.linear_pp_terms(1.0, np.inf, 1.0)),
    # --- cflib.fairness: parity, sfm, adapt, compas, plots
    case("cpp-alpha", ValueError, "alpha", lambda e: parity.causal_predictive_parity(DF, SFM, "y", "yhat", alpha=0.7)),
    case(
        "cpp-alpha-bool",
        TypeError,
        "alpha",
        lambda e: parity.causal_predictive_parity(DF, SFM, "y", "yhat", alpha=True),
    ),
    case("cpp-test", ValueError, "test", lambda e: parity.causal_predictive_parity(DF, SFM, "y", "yhat", test="eq")),
    case(
        "cpp-margin",
        ValueError,
        "margin",
        lambda e: parity.causal_predictive_parity(DF, SFM, "y", "yhat", test="equivalence"),
    ),
    case(
        "cpp-margin-inf",
        ValueError,
        "margin",
        lambda e: parity.causal_predictive_parity(DF, SFM, "y", "yhat", test="equivalence", margin=np.inf),
    ),
    case(
        "cpp-estimates",
        ValueError,
        "estimates",
        lambda e: parity.causal_predictive_parity(DF, SFM, "y", "yhat", estimates={"y": None}),
    ),
    case(
        "cpp-estimates-type",
        TypeError,
        "estimates",
        lambda e: parity.causal_predictive_parity(DF, SFM, "y", "yhat", estimates=[1, 2]),
    ),
    case("cpp-y_hat", TypeError, "y_hat", lambda e: parity.causal_predictive_parity(DF, SFM, "y", 3)),
    case("cpp-sfm", TypeError, "sfm", lambda e: parity.causal_predictive_parity(DF, "sfm", "y", "yhat")),
    case("cookbook-missing", ValueError, "truth_y", lambda e: parity.cookbook_population({}, TRUTH, set())),
    case(
        "cookbook-nan",
        ValueError,
        "truth_yhat",
        lambda e: parity.cookbook_population(TRUTH, {**TRUTH, "IE": np.nan}, set()),
    ),
    case("cookbook-bn", ValueError, "business", lambda e: parity.cookbook_population(TRUTH, TRUTH, {"XX"})),
    case("cookbook-atol", ValueError, "atol", lambda e: parity.cookbook_population(TRUTH, TRUTH, set(), atol=-1.0)),
    case("bn-string", TypeError, "bn", lambda e: sfm_mod.bn_effects("Z")),
    case("sfm-z-string", TypeError, "z", lambda e: StandardFairnessModel("x", "z", ["w"], "y")),
    case("sfm-roles-repeated", ValueError, "z", lambda e: StandardFairnessModel("x", ["z"], ["z"], "y")),
    case("sfm-outcomes-string", TypeError, "outcomes", lambda e: SFM.validate(DF, "y")),
    case("demean-length", ValueError, "x", lambda e: adapt.demean_by_group([1.0, 2.0, 3.0], [0, 1])),
    case("demean-nan", ValueError, "score", lambda e: adapt.demean_by_group([1.0, np.nan, 3.0], [0, 1, 0])),
    case("transport-x", ValueError, "x", lambda e: adapt.SequentialTransport({"x": []}, "q")),
    case(
        "transport-levels", ValueError, "max_levels", lambda e: adapt.SequentialTransport({"x": []}, "x", max_levels=0)
    ),
    case(
        "transport-levels-bool",
        TypeError,
        "max_levels",
        lambda e: adapt.SequentialTransport({"x": []}, "x", max_levels=True),
    ),
    case("transport-parents", TypeError, "parents", lambda e: adapt.SequentialTransport("x -> y", "x")),
    case("transport-graph-de", ValueError, "business necessity", lambda e: adapt.transport_graph(SFM, bn={"DE"})),
    case("fair-predictor-folds", ValueError, "n_folds", lambda e: adapt.fair_predictor(DF, SFM, n_folds=1)),
    case("projection-folds", TypeError, "n_folds", lambda e: adapt.projection_predictor(DF, SFM, {"Z"}, n_folds=2.0)),
    case("projection-small", ValueError, "n_folds", lambda e: adapt.projection_predictor(TINY, SFM, {"Z"})),
    case("compas-path", TypeError, "raw", lambda e: compas.prepare_compas("compas.csv")),
    case("compas-columns", ValueError, "columns", lambda e: compas.prepare_compas(pd.DataFrame({"a": [1]}))),
    case("plot-sfm-kind", ValueError, "kind", lambda e: plots.plot_sfm("dag")),
    case("plot-sfm-ax", TypeError, "ax", lambda e: plots.plot_sfm(ax=3)),
    case("plot-bars-empty", TypeError, "results", lambda e: plots.plot_effect_bars({})),
    case("plot-bars-pair", ValueError, "results", lambda e: plots.plot_effect_bars({"a": {"DE": (1.0, 2.0)}})),
    case(
        "plot-bars-measures",
        ValueError,
        "results",
        lambda e: plots.plot_effect_bars({"a": {"DE": (1, 0, 2)}, "b": {"IE": (1, 0, 2)}}),
    ),
    case("plot-pareto", ValueError, "table", lambda e: plots.plot_pareto(pd.DataFrame({"a": [1]}))),
    case("plot-terms", ValueError, "table", lambda e: plots.plot_terms_vs_n(pd.DataFrame({"n": [1]}))),
    case("plot-term1", ValueError, "truth", lambda e: plots.plot_term1_by_bin(np.ones(3), np.ones((2, 4)))),
    # --- cflib.audit
    case("audit-data", TypeError, "data", lambda e: _audit(data="data.csv")),
    case("audit-sfm", TypeError, "sfm", lambda e: _audit(sfm="x")),
    case("audit-alpha", ValueError, "alpha", lambda e: _audit(alpha=2.0)),
    case("audit-n_boot", ValueError, "n_boot", lambda e: _audit(n_boot=-1)),
    case("audit-epsilon", ValueError, "epsilon", lambda e: _audit(epsilon=-0.1)),
    case("audit-seed", ValueError, "seed", lambda e: _audit(seed=-3)),
    case("audit-bn-string", TypeError, "business_necessity", lambda e: _audit(business_necessity="SE")),
    case("audit-no-model", ValueError, "predict", lambda e: _audit(predict=None)),
    case("audit-shape", ValueError, "predict", lambda e: _audit(predict=lambda d: np.ones(3))),
    case("audit-scores-nan", ValueError, "scores", lambda e: _audit(predict=None, scores=np.full(N, np.nan))),
    case("audit-inf", ValueError, "w", lambda e: _audit(data=with_value("w", 0, -np.inf))),
    case("audit-config", FileNotFoundError, "config", lambda e: audit_mod.audit_from_config("missing.yaml", e / "out")),
    # --- issue 29: data as it comes, the group table, the CI gate
    case(
        "audit-string-outcome-no-y1",
        ValueError,
        ("y1", "roles.y1"),
        lambda e: _audit(data=DF.assign(y=np.where(DF.y > 0, "yes", "no"))),
    ),
    case(
        "audit-y1-not-a-value",
        ValueError,
        ("y1", "'maybe'"),
        lambda e: _audit(data=DF.assign(y=np.where(DF.y > 0, "yes", "no")), y1="maybe"),
    ),
    # --- issue 35: the positive class is looked up in the model's classes; the CPU budget of a trained generator
    case(
        "audit-y1-not-a-class",
        ValueError,
        ("y1", "classes", "['bad', 'good']"),
        lambda e: _audit(predict=Fitted(["bad", "good"]), y1=1.0),
    ),
    case("audit-classes-not-0-1", ValueError, ("y1", "[1, 2]"), lambda e: _audit(predict=Fitted([1, 2]))),
    case(
        "audit-images-train-budget",
        ValueError,
        "train_options['budget_s']",
        lambda e: _audit_images(counterfactual="train", train_options={"budget_s": -1}),
    ),
    case("audit-missing-values", ValueError, ("'w'", "impute=True"), lambda e: _audit(data=with_value("w", 0, np.nan))),
    case(
        "audit-missing-attribute",
        ValueError,
        ("'x'", "dropna"),
        lambda e: _audit(data=DF.assign(x=DF.x.where(DF.index > 0)), impute=True),
    ),
    case("audit-impute-type", TypeError, "impute", lambda e: _audit(impute="yes")),
    case("audit-threshold", ValueError, "threshold", lambda e: _audit(threshold=1.5)),
    case("audit-threshold-type", ValueError, "threshold", lambda e: _audit(threshold="half")),
    case("audit-n_jobs", ValueError, "n_jobs", lambda e: _audit(n_jobs=0)),
    case("effects-n_jobs", ValueError, "n_jobs", lambda e: effects.ctf_effects(DF, SFM, learner="linear", n_jobs=0)),
    case("audit-reference-level", ValueError, ("reference", "'purple'"), lambda e: _audit(reference="purple")),
    case(
        "audit-reference-and-pair",
        ValueError,
        ("reference", "x0"),
        lambda e: _audit(sfm=StandardFairnessModel("x", ["z"], ["w"], "y", 0, 1), reference=0),
    ),
    case(
        "audit-string-levels",
        ValueError,
        ("x0=", "reference="),
        lambda e: _audit(data=DF.assign(x=np.where(DF.x == 1, "b", "a"))),
    ),
    case("audit-fail-on-name", ValueError, ("fail_on", "'EO'"), lambda e: audit_mod.select_checks(["TV", "DP"], "EO")),
    case("audit-fail-on-empty", ValueError, "fail_on", lambda e: audit_mod.select_checks(["TV", "DP"], "DP,,")),
    case("audit-fail-on-type", TypeError, "fail_on", lambda e: audit_mod.select_checks(["TV", "DP"], 3)),
    case("audit-tolerances-name", ValueError, ("tolerances", "'XYZ'"), lambda e: _audit(tolerances={"XYZ": 0.1})),
    case("audit-tolerances-value", ValueError, "tolerances['DP']", lambda e: _audit(tolerances={"DP": -1})),
    case("audit-tolerances-type", TypeError, "tolerances", lambda e: _audit(tolerances=0.1)),
    case(
        "audit-config-fail-on",
        ValueError,
        "fail_on",
        lambda e: audit_mod.audit_from_config("missing.yaml", e / "out", fail_on=" "),
    ),
    case(
        "effects-differences-type",
        TypeError,
        "differences",
        lambda e: effects.ctf_effects(DF, SFM, ["y", "yhat"], learner="linear", differences=[("y", "yhat")]),
    ),
    case(
        "effects-differences-column",
        ValueError,
        ("differences", "'nope'"),
        lambda e: effects.ctf_effects(DF, SFM, ["y", "yhat"], learner="linear", differences={"d": ("y", "nope")}),
    ),
    case(
        "effects-differences-single",
        ValueError,
        "differences",
        lambda e: effects.ctf_effects(DF, SFM, "y", learner="linear", differences={"d": ("y", "yhat")}),
    ),
    case("wilson-k", ValueError, "k", lambda e: rates.wilson_interval(5, 3)),
    case("wilson-type", TypeError, "k", lambda e: rates.wilson_interval(1.5, 3)),
    case("wilson-level", ValueError, "level", lambda e: rates.wilson_interval(1, 3, level=95)),
    case("newcombe-count", TypeError, "k0", lambda e: rates.newcombe_difference(-1, 3, 1, 3)),
    case("newcombe-k-above-n", ValueError, "k1", lambda e: rates.newcombe_difference(1, 3, 4, 3)),
    case("welch-level", ValueError, "level", lambda e: rates.welch_difference([0, 1], [1, 1], level=2)),
    case("group-rates-coding", ValueError, "decision", lambda e: rates.group_rates(["a", "b"], [0.3, 1], [0, 1])),
    case("group-rates-length", ValueError, "y", lambda e: rates.group_rates(["a", "b"], [0, 1], [0, 1, 1])),
    case("format-pvalue-range", ValueError, "p", lambda e: formatting.format_pvalue(1.5)),
    case("format-pvalue-floor", ValueError, "floor", lambda e: formatting.format_pvalue(0.2, floor=2)),
    case("format-number-type", TypeError, "value", lambda e: formatting.format_number("0.1")),
    case("format-number-digits", ValueError, "digits", lambda e: formatting.format_number(0.1, digits=0)),
    case(
        "audit-images-3d",
        ValueError,
        ("images", "images[:, None]"),
        lambda e: _audit_images(images=np.zeros((8, 4, 4))),
    ),
    case(
        "audit-images-levels",
        ValueError,
        ("attribute", "levels=(x0, x1)"),
        lambda e: _audit_images(attributes=pd.DataFrame({"g": np.arange(8) % 3})),
    ),
    case(
        "audit-images-generator",
        ValueError,
        ("counterfactual", "shape"),
        lambda e: _audit_images(counterfactual=lambda x, pa, ps: x[:1]),
    ),
    # --- cflib.claims
    case("record-key", ValueError, "key", lambda e: claims.record("a b", 1)),
    case("record-empty-key", ValueError, "key", lambda e: claims.record("", 1)),
    case(
        "claim-statement",
        ValueError,
        "statement",
        lambda e: claims.claim("C1", "", paper=1, ours=1, holds=True, evidence="t", kind="reproduction"),
    ),
    case(
        "claim-holds",
        TypeError,
        "holds",
        lambda e: claims.claim("C1", "s", paper=1, ours=1, holds="yes", evidence="t", kind="reproduction"),
    ),
    case(
        "claim-evidence",
        ValueError,
        "evidence",
        lambda e: claims.claim("C1", "s", paper=1, ours=1, holds=True, evidence=" ", kind="reproduction"),
    ),
    case(
        "claim-verdict",
        ValueError,
        "verdict",
        lambda e: claims.claim(
            "C1", "s", paper=1, ours=1, holds=True, evidence="t", verdict="maybe", kind="reproduction"
        ),
    ),
    case("gather-file", ValueError, "directory", lambda e: claims.gather(_r("a-file.txt"))),
    case("gather-missing", ValueError, "directory", lambda e: claims.gather(e / "cwd" / "no-such-folder")),
    case("gather-notebooks-string", TypeError, "notebooks", lambda e: claims.gather(e / "cwd", notebooks="a.ipynb")),
    case("gather-bad-json", ValueError, "claims file", lambda e: claims.gather(_r("bad-claims"))),
    case("report-type", TypeError, "df", lambda e: claims.report_markdown("claims")),
    case("report-columns", ValueError, "df", lambda e: claims.report_markdown(pd.DataFrame({"a": [1]}))),
    case(
        "changes-before-type",
        TypeError,
        "before",
        lambda e: claims.changes_markdown(claims.gather(e / "cwd"), "before.csv"),
    ),
    case(
        "claim-two-deciders",
        ValueError,
        ("holds", "decision"),
        lambda e: claims.claim(
            "C1",
            "s",
            paper=1,
            ours=1,
            evidence="e",
            holds=True,
            decision=verdicts.decide_above(verdicts.exact(1.0), 0),
            kind="reproduction",
        ),
    ),
    case(
        "claim-decision-type",
        TypeError,
        "decision",
        lambda e: claims.claim("C1", "s", paper=1, ours=1, evidence="e", decision="reproduced", kind="reproduction"),
    ),
    case(
        "claim-kind",
        ValueError,
        "kind",
        lambda e: claims.claim("C1", "s", paper=1, ours=1, evidence="e", holds=True, kind="sanity"),
    ),
    case(
        "claim-quote-type",
        TypeError,
        "quote",
        lambda e: claims.claim("C1", "s", paper=1, ours=1, evidence="e", holds=True, quote=3, kind="reproduction"),
    ),
    case(
        "claim-not-checkable-note",
        ValueError,
        "note",
        lambda e: claims.claim(
            "C1", "s", paper=1, ours=1, evidence="e", verdict="not checkable here", kind="reproduction"
        ),
    ),
    case("verdict-interval-type", TypeError, "interval", lambda e: verdicts.decide_below((0.1, 0.2), 0.5)),
    case("verdict-binomial-k", ValueError, "k", lambda e: verdicts.binomial_interval(4, 3)),
    case("verdict-binomial-n", ValueError, "n", lambda e: verdicts.binomial_interval(0, -2)),
    case("verdict-mean-nan", ValueError, "values", lambda e: verdicts.mean_interval([1.0, float("inf")])),
    case("verdict-level", ValueError, "level", lambda e: verdicts.mean_interval([1.0, 2.0], level=0)),
    case(
        "verdict-within-band",
        ValueError,
        ("low", "high"),
        lambda e: verdicts.decide_within(verdicts.exact(0.0), 1.0, -1.0),
    ),
    # --- cflib.runner and cflib.sweep: parameter values
    case("param-empty", TypeError, ("n_fit", "None"), lambda e: _resolve(n_fit=None)),
    case("param-string-for-int", TypeError, "n_fit", lambda e: _resolve(n_fit="abc")),
    case("param-negative", ValueError, ("n_fit", ">= 1"), lambda e: _resolve(n_fit=-5)),
    case("param-zero", ValueError, "n_fit", lambda e: _resolve(n_fit=0)),
    case("param-float-for-int", TypeError, "n_fit", lambda e: _resolve(n_fit=2.5)),
    case("param-inf", ValueError, "delta_t", lambda e: _resolve(delta_t=float("inf"))),
    case("param-seed", ValueError, "seed", lambda e: _resolve(seed=-1)),
    case("param-seeds-scalar", TypeError, "seeds", lambda e: _resolve(seeds=0)),
    case("param-list-entry", ValueError, "ns", lambda e: _resolve(ns=[100, -1])),
    case("param-list-type", TypeError, "ns", lambda e: _resolve(ns=[100, "a"])),
    case("param-bool", TypeError, "small", lambda e: _resolve(small="yes")),
    case("param-str", TypeError, "learner", lambda e: _resolve(learner=3)),
    case("param-alpha", ValueError, "alpha", lambda e: _resolve(alpha=1.5)),
    case("param-declared-range", ValueError, ("quantile", "(0, 1)"), lambda e: _resolve(quantile=1.0)),
    case("param-declared-floor", ValueError, ("n_boot", ">= 0"), lambda e: _resolve(n_boot=-1)),
    case("param-unknown", ValueError, "nope", lambda e: _resolve(nope=1)),
    case("param-scale", ValueError, "scale", lambda e: runner.resolve_parameters(NB, "huge")),
    case("params-yaml", ValueError, ("full.yaml", "n_fit"), lambda e: runner.load_overrides("full")),
    case("run-jobs", ValueError, "jobs", lambda e: runner.run([NB], "smoke", output_dir=e / "out", jobs=0)),
    case("sweep-negative", ValueError, ("negative.yaml", "n_fit"), lambda e: _sweep("negative")),
    case("sweep-string", TypeError, "n_fit", lambda e: _sweep("string")),
    case("sweep-empty-grid", ValueError, "grid", lambda e: _sweep("empty")),
    case("sweep-workers", ValueError, "workers", lambda e: _sweep("workers")),
    case("sweep-alpha", ValueError, "alpha", lambda e: _sweep("alpha")),
    case("sweep-missing", FileNotFoundError, "sweep file", lambda e: _sweep("missing")),
    case("sweep-shard", ValueError, "shard", lambda e: sweep.parse_shard("3/2")),
    case(
        "sweep-run-workers",
        ValueError,
        "workers",
        lambda e: sweep.run_sweep(_r("notebooks/sweeps/ok.yaml"), workers=0, output=e / "out"),
    ),
    # --- the command line (in-process): exit status 2 and one line
    case("cli-p-empty", EXIT2, "n_fit", cli("run", NB, "--scale", "smoke", "-p", "n_fit=", "--output", "{out}")),
    case("cli-p-string", EXIT2, "n_fit", cli("run", NB, "--scale", "smoke", "-p", "n_fit=abc", "--output", "{out}")),
    case("cli-p-negative", EXIT2, "n_fit", cli("run", NB, "--scale", "smoke", "-p", "n_fit=-5", "--output", "{out}")),
    case("cli-p-yaml", EXIT2, ("n_fit", "YAML"), cli("run", NB, "-p", "n_fit=[1, 2", "--output", "{out}")),
    case("cli-p-no-name", EXIT2, "-p", cli("run", NB, "-p", "=3", "--output", "{out}")),
    case("cli-p-no-equals", EXIT2, "-p", cli("run", NB, "-p", "n_fit", "--output", "{out}")),
    case("cli-p-unknown", EXIT2, "nope", cli("run", NB, "-p", "nope=3", "--output", "{out}")),
    case("cli-p-list", EXIT2, "ns", cli("run", NB, "-p", "ns=5", "--output", "{out}")),
    case("cli-run-missing", EXIT2, "missing", cli("run", "demo/missing.ipynb", "--output", "{out}")),
    case("cli-run-jobs", EXIT2, "--jobs", cli("run", NB, "--jobs", "0", "--output", "{out}")),
    case("cli-sweep-missing", EXIT2, "missing.yaml", cli("sweep", "missing.yaml", "--output", "{out}")),
    case("cli-sweep-value", EXIT2, "n_fit", cli("sweep", "{root}/notebooks/sweeps/negative.yaml", "--output", "{out}")),
    case(
        "cli-sweep-workers",
        EXIT2,
        "--workers",
        cli("sweep", "{root}/notebooks/sweeps/ok.yaml", "--workers", "0", "--output", "{out}"),
    ),
    case(
        "cli-merge-missing",
        EXIT2,
        "missing",
        cli("merge", "{root}/notebooks/sweeps/ok.yaml", "missing/", "--output", "{out}"),
    ),
    case("cli-report-directory", EXIT2, ("--directory", "missing"), cli("report", "--directory", "missing/")),
    case("cli-report-file-as-directory", EXIT2, "--directory", cli("report", "--directory", "{root}/a-file.txt")),
    case(
        "cli-report-output",
        EXIT2,
        "--output",
        cli("report", "--directory", "{root}/bad-claims", "--output", "{out}/x/r.md"),
    ),
    case("cli-wheel-missing", EXIT2, ("--wheel", "missing.whl"), cli("data", "fetch", "--wheel", "missing.whl")),
    case("cli-wheel-folder", EXIT2, "--wheel", cli("data", "fetch", "--wheel", "{root}/notebooks")),
    case("cli-audit-config", EXIT2, "config", cli("audit", "missing.yaml", "--out", "{out}")),
    case(
        "cli-audit-fail-on-empty", EXIT2, "--fail-on", cli("audit", "missing.yaml", "--out", "{out}", "--fail-on", " ")
    ),
    case(
        "cli-audit-require-clear-empty",
        EXIT2,
        "--require-clear",
        cli("audit", "missing.yaml", "--out", "{out}", "--require-clear", " "),
    ),
    case(
        "cli-audit-junit-folder",
        EXIT2,
        "--junit",
        cli("audit", "missing.yaml", "--out", "{out}", "--junit", "{out}/no/j.xml"),
    ),
    # --- issue 30: the audit of a Dask DataFrame, and `cflib audit` on Parquet data (refused before any cluster starts)
    case(
        "audit-distributed-pandas",
        TypeError,
        ("data", "dask.dataframe.DataFrame"),
        lambda e: audit_mod.audit_distributed(predict, DF, sfm=SFM),
    ),
    case("audit-distributed-sfm", TypeError, "sfm", lambda e: _audit_dask(sfm="x")),
    case("audit-distributed-key", ValueError, ("key", "'nope'"), lambda e: _audit_dask(key="nope")),
    case("audit-distributed-folds", ValueError, "n_folds", lambda e: _audit_dask(n_folds=1)),
    case("audit-distributed-nuisance-rows", ValueError, "nuisance_rows", lambda e: _audit_dask(nuisance_rows=3)),
    case("audit-distributed-n_boot", ValueError, "n_boot", lambda e: _audit_dask(n_boot=-1)),
    case("audit-distributed-clip", ValueError, "clip", lambda e: _audit_dask(clip=0.7)),
    case("audit-distributed-learner", ValueError, "learner", lambda e: _audit_dask(learner="xgb")),
    case("audit-distributed-split-every", ValueError, "split_every", lambda e: _audit_dask(split_every=1)),
    case("audit-distributed-client", TypeError, "client", lambda e: _audit_dask(client=3)),
    case(
        "audit-dask-in-memory-option",
        ValueError,
        ("impute", "Dask DataFrame"),
        lambda e: audit_mod.audit(predict, _dask_frame(), sfm=SFM, impute=True, progress=False),
    ),
    case("cli-audit-parquet-none", EXIT2, ("nothing-*.parquet", "no Parquet file"), lambda e: _cli_parquet(e, [])),
    case("cli-audit-parquet-junit", EXIT2, "--junit", lambda e: _cli_parquet(e, ["--junit", str(e / "no/j.xml")])),
    case(
        "cli-audit-parquet-scheduler",
        EXIT2,
        ("scheduler", "'localhost'"),
        lambda e: _cli_parquet(e, ["--scheduler", "localhost"]),
    ),
    case(
        "cli-audit-csv-scheduler",
        EXIT2,
        ("scheduler", "Parquet"),
        lambda e: _cli_parquet(e, ["--scheduler", "tcp://127.0.0.1:1", "--data", str(e / "inputs" / "data.csv")]),
    ),
]


def _dask_frame():
    import dask.dataframe as dd

    return dd.from_pandas(DF, npartitions=2)


def _audit_dask(**kw):
    args = {"predict": predict, "data": _dask_frame(), "sfm": SFM, "progress": False}
    args.update(kw)
    return audit_mod.audit_distributed(args.pop("predict"), args.pop("data"), **args)


def _parquet_config(env: Path, **over) -> Path:
    """A config naming Parquet files that do not exist, in a folder beside the working and output folders."""
    import yaml

    folder = env / "inputs"
    folder.mkdir(exist_ok=True)
    cfg = {"data": "nothing-*.parquet", "roles": {"x": "x", "z": ["z"], "w": ["w"], "y": "y"}, "model": "m:f", **over}
    (folder / "audit.yaml").write_text(yaml.safe_dump(cfg))
    return folder / "audit.yaml"


def _cli_parquet(env: Path, extra: list[str]) -> int:
    from cflib.cli import main

    return main(["audit", str(_parquet_config(env)), "--out", str(env / "out"), *extra])


def _audit(**kw):
    args = {"predict": predict, "data": DF, "sfm": SFM, "n_boot": 0, "learner": "linear", "progress": False}
    args.update(kw)
    return audit_mod.audit(args.pop("predict"), args.pop("data"), **args)


def _audit_images(**kw):
    args = {
        "predict": lambda x: x.mean(axis=(1, 2, 3)),
        "images": np.full((8, 1, 4, 4), 0.5),
        "attributes": pd.DataFrame({"g": np.arange(8) % 2}),
        "attribute": "g",
        "counterfactual": lambda x, pa, ps: x,
        "attribute_reader": lambda x: np.zeros(len(x)),
        "progress": False,
    }
    args.update(kw)
    return audit_mod.audit_images(args.pop("predict"), args.pop("images"), args.pop("attributes"), **args)


def _resolve(**params):
    return runner.resolve_parameters(NB, "smoke", params)


def _sweep(name: str):
    return sweep.load_sweep(_r(f"notebooks/sweeps/{name}.yaml"))


def test_the_table_is_large_and_its_ids_unique():
    assert len(CASES) >= 80
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_malformed_call_gets_one_clear_line(c: Case, env: Path, capsys):
    if c.error is EXIT2:
        assert c.call(env) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("cflib: error:"), err
        assert "\n" not in err, err
        for name in c.names:
            assert name in err, f"{name!r} not in: {err}"
    else:
        one_clear_line(c, env, in_cflib=False)
    assert not any((env / "cwd").iterdir()), "the call wrote into the working folder"
    assert not (env / "out").exists() or not any((env / "out").rglob("*")), "the call wrote into the output folder"


def test_the_warning_is_recorded_and_shown():
    with pytest.warns(cflib.CflibWarning, match="unreliable below 50"):
        res = effects.ctf_effects(TINY, SFM, learner="linear", n_folds=2, seed=0)
    assert res.warnings and "50" in res.warnings[0]
    assert set(res.summary()["warning"]) == {res.warnings[0]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", cflib.CflibWarning)  # enough units: no warning, no column
        big = effects.ctf_effects(DF, SFM, learner="linear", n_folds=2, seed=0)
    assert big.warnings == () and "warning" not in big.summary().columns


def test_rejecting_values_does_not_change_valid_results():
    """The checks only refuse: a valid call gives what it gave (same seed, same numbers) and the same
    answer whether or not the data frame carries extra, unused columns with inf in them."""
    a = effects.ctf_effects(DF, SFM, learner="linear", n_folds=2, seed=3)
    b = effects.ctf_effects(DF.assign(junk=np.inf), SFM, learner="linear", n_folds=2, seed=3)
    assert a.estimate == b.estimate and a.se == b.se


def test_valid_values_and_declared_ranges_pass(env):
    specs = runner.parameter_specs(NB)
    assert str(specs["quantile"][2]) == "in (0, 1)" and specs["n_fit"][2] is None and specs["kinds"][1] is False
    # n_boot = 0 is allowed by its declared range although the implicit size rule would refuse it.
    assert runner.load_overrides("smoke")[NB] == {"n_fit": 20, "n_boot": 0}
    got = runner.resolve_parameters(
        NB, "smoke", {"delta_t": 2, "ns": [1], "kinds": "anything", "cases": [1, "a"], "seed": 0}
    )
    assert got["delta_t"] == 2 and got["kinds"] == "anything"


def test_the_book_s_own_parameters_pass_the_rules(monkeypatch):
    """Every value in the real params YAML files and sweep grids satisfies the type and range rules."""
    from cflib.paths import notebooks_dir

    monkeypatch.delenv("CFLIB_ROOT", raising=False)
    for scale in ("smoke", "book", "full"):
        runner.load_overrides(scale)
    for f in sorted((notebooks_dir() / "sweeps").glob("*.yaml")):
        sweep.load_sweep(f)


@pytest.mark.parametrize(
    "args",
    [
        ["run", NB, "--scale", "smoke", "-p", "n_fit=", "--output", "OUT"],
        ["data", "fetch", "--wheel", "missing.whl"],
        ["report", "--directory", "missing/"],
    ],
    ids=["p-empty", "wheel", "directory"],
)
def test_console_exits_2_with_one_line(args, repo, tmp_path):
    argv = [a.replace("OUT", str(tmp_path / "out")) for a in args]
    env = {**os.environ, "CFLIB_ROOT": str(repo)}
    p = subprocess.run(
        [sys.executable, "-m", "cflib.cli", *argv], capture_output=True, text=True, cwd=tmp_path, env=env
    )
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cflib: error:"), p.stderr
    assert not (tmp_path / "out").exists()
    assert p.stdout == ""
