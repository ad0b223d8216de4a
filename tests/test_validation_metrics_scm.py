"""Bad input gets one clear line: a table of malformed calls to :mod:`cflib.metrics` and :mod:`cflib.scm`.

The same table style as ``test_validation.py``: each row is a call, the error (or
:class:`cflib.CflibWarning`) it must raise, and the names its message must contain. Every call runs in
an empty working folder, which must still be empty afterwards. Inputs are tiny (2 images of 1x8x8,
SCMs of 5 units) so the whole table runs in seconds.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import cflib
from cflib.metrics import axioms as ax
from cflib.metrics import benchmark_metrics as bm
from cflib.metrics import minimality as mn
from cflib.metrics import realism as rl
from cflib.scm import (
    SCM,
    CausalGraph,
    Mechanism,
    fit_intensity_mechanism,
    intensity_mechanism,
    morpho_attributes,
)
from cflib.scm.adapters import (
    FunctionModel,
    ImageModelAdapter,
    LatentDiffusionAdapter,
    ParentEncoder,
    check_parent_dict,
)
from cflib.scm.deep import ClosedForm, DeepSCM, OracleImage, RootMechanism

from .validation_table import Case, case, one_clear_line

# ---------------------------------------------------------------------------- tiny inputs
RNG = np.random.default_rng(0)
X = RNG.uniform(size=(2, 1, 8, 8)).astype(np.float32)
PA = {"b": np.array([0.0, 1.0]), "c": np.array([1.0, 0.0])}
NAN_X = X.copy()
NAN_X[0, 0, 0, 0] = np.nan


def shift(x, pa, pa_star):
    """A sound counterfactual function: the intensity follows ``b``."""
    return np.clip(x + 0.1 * (pa_star["b"] - pa["b"])[:, None, None, None], 0, 1)


def cropping(x, pa, pa_star):
    """Returns images of the wrong shape."""
    return x[:, :, :4]


def nan_images(x, pa, pa_star):
    """Returns NaN images."""
    return x * np.nan


def dropping(x, pa, pa_star):
    """Returns one image fewer than it was given (numpy's "cannot reshape" before issue 25)."""
    return x[1:]


def scalar_out(x, pa, pa_star):
    """Returns one number instead of images."""
    return 0.5


for _f in (shift, cropping, nan_images, dropping, scalar_out):
    _f.parent_names = ("b", "c")


class MeanOracle:
    """Reads ``b`` as the mean intensity: one absolute error per image."""

    kind = "regression"

    def score(self, x, target):
        return np.abs(np.asarray(x).reshape(len(x), -1).mean(1) - np.asarray(target))


class ShortOracle(MeanOracle):
    def score(self, x, target):
        return np.zeros(len(x) + 1)


class LongPredictor:
    """A predictor of ``b`` that returns one value too many."""

    kind = "regression"
    context = ()

    def predict(self, images, context=None):
        return np.zeros(len(images) + 1)


class ProbabilityPredictor(LongPredictor):
    """A binary predictor that returns probabilities instead of 0/1 labels."""

    kind = "binary"

    def predict(self, images, context=None):
        return np.full(len(images), 0.7)


SCM0 = morpho_attributes()
OBS = SCM0.sample(5, seed=0)
NOISE = SCM0.abduct(OBS)
DEEP = DeepSCM(SCM0.graph, {n: ClosedForm(m) for n, m in SCM0.mechanisms.items()})
FM = FunctionModel(shift)
FOBS = {"x": X, **PA}
ABS = {"|d|": lambda a, b: ax.l1_distance(a, b, scale=1.0, value_range=None)}
REPORT = ax.soundness_report(
    shift, X, PA, {"b": np.array([1.0, 0.0])}, {"b": MeanOracle()}, m=2, cycles=1, labels={"model": "shift", "seed": 0}
)
SUMMARY = ax.summarise(REPORT)
TABLE = pd.DataFrame({"acc": [0.9, 0.8], "err": [0.1, 0.2]}, index=["a", "b"])
RANK = ax.average_rank(TABLE, {"acc": True, "err": False})
FEAT = RNG.normal(size=(40, 3))
MU, LV = RNG.normal(size=(6, 2)), RNG.normal(size=(6, 2)) * 0.1
GROUPS = np.array([0, 0, 0, 1, 1, 1])


def with_nan(obs: dict, key: str, value: float = np.nan) -> dict:
    out = {k: np.array(v, dtype=float) for k, v in obs.items()}
    out[key][0] = value
    return out


def bad_mechanism_scm(forward: Callable) -> SCM:
    return SCM(CausalGraph({"a": []}), {"a": Mechanism(forward, lambda r, n: r.normal(size=n), lambda pa, v: v)})


class LD:
    """Just enough of a LatentDiffusion for the adapter's constructor."""

    def counterfactual(self, *a, **k): ...

    def invert(self, *a, **k): ...

    def denoise(self, *a, **k): ...


# ---------------------------------------------------------------------------- the table


W = cflib.CflibWarning
CASES: list[Case] = [
    # --- cflib.scm.graph
    case("graph-not-mapping", TypeError, "parents", lambda: CausalGraph([("a", [])])),
    case("graph-empty", ValueError, "parents", lambda: CausalGraph({})),
    case("graph-node-type", TypeError, "node names", lambda: CausalGraph({1: []})),
    case("graph-parents-int", TypeError, ("parents of", "'a'"), lambda: CausalGraph({"a": 3})),
    case("graph-unknown-parent", ValueError, ("'z'", "not a node"), lambda: CausalGraph({"a": ["z"]})),
    case("graph-cycle", ValueError, ("cycle", "a", "b"), lambda: CausalGraph({"a": ["b"], "b": ["a"]})),
    case("graph-node-query-type", TypeError, "node", lambda: SCM0.graph.parents(["t"])),
    case("graph-mutilate-unknown", ValueError, ("targets", "'q'"), lambda: SCM0.graph.mutilate(["q"])),
    case("graph-mutilate-type", TypeError, "targets", lambda: SCM0.graph.mutilate(3)),
    # --- cflib.scm.scm
    case("mechanism-forward", TypeError, "forward", lambda: Mechanism(3, lambda r, n: r.normal(size=n))),
    case("scm-graph-type", TypeError, "graph", lambda: SCM({"t": []}, SCM0.mechanisms)),
    case("scm-mechanisms-type", TypeError, "mechanisms", lambda: SCM(SCM0.graph, [1, 2])),
    case("scm-sample-zero", ValueError, "n", lambda: SCM0.sample(0)),
    case("scm-sample-bool", TypeError, "n", lambda: SCM0.sample(True)),
    case("scm-sample-float", TypeError, "n", lambda: SCM0.sample(5.0)),
    case(
        "scm-cf-inf-obs",
        ValueError,
        ("obs['t']", "infinite"),
        lambda: SCM0.counterfactual(with_nan(OBS, "t", np.inf), {"t": 1.0}),
    ),
    case(
        "scm-cf-nan-obs", ValueError, ("obs['i']", "NaN"), lambda: SCM0.counterfactual(with_nan(OBS, "i"), {"t": 1.0})
    ),
    case("scm-cf-empty-obs", ValueError, "obs['t']", lambda: SCM0.counterfactual({"t": [], "i": []}, {"t": 1.0})),
    case(
        "scm-cf-2d-obs",
        ValueError,
        ("obs['t']", "(n,)"),
        lambda: SCM0.counterfactual({"t": np.ones((5, 2)), "i": np.full((5, 2), 100.0)}, {"t": 1.0}),
    ),
    case(
        "scm-cf-string-obs",
        TypeError,
        "obs['t']",
        lambda: SCM0.counterfactual({"t": ["a"] * 5, "i": OBS["i"]}, {"t": 1.0}),
    ),
    case("scm-cf-obs-type", TypeError, "obs", lambda: SCM0.counterfactual([OBS["t"], OBS["i"]], {"t": 1.0})),
    case("scm-cf-inf-do", ValueError, ("'t'", "infinite"), lambda: SCM0.counterfactual(OBS, {"t": np.inf})),
    case("scm-cf-do-unknown", ValueError, ("'q'", "not a node"), lambda: SCM0.counterfactual(OBS, {"q": 1.0})),
    case("scm-cf-do-type", TypeError, "do", lambda: SCM0.counterfactual(OBS, ["t"])),
    case("scm-cf-do-length", ValueError, ("'t'", "length 5"), lambda: SCM0.counterfactual(OBS, {"t": np.ones(3)})),
    case(
        "scm-cf-callable-shape",
        ValueError,
        ("do['t']", "(5,)"),
        lambda: SCM0.counterfactual(OBS, {"t": lambda v: v["t"][:2]}),
    ),
    case(
        "scm-cf-callable-nan",
        ValueError,
        ("do['t']", "NaN"),
        lambda: SCM0.counterfactual(OBS, {"t": lambda v: v["t"] * np.nan}),
    ),
    case("scm-predict-noise-missing", ValueError, ("noise", "i"), lambda: SCM0.predict({"t": NOISE["t"]})),
    case(
        "scm-predict-noise-inf",
        ValueError,
        ("noise['i']", "infinite"),
        lambda: SCM0.predict(with_nan(NOISE, "i", np.inf)),
    ),
    case(
        "scm-mechanism-shape",
        ValueError,
        ("mechanism of 'a'", "(3,)"),
        lambda: bad_mechanism_scm(lambda pa, u: u[:1]).sample(3, seed=0),
    ),
    case(
        "scm-mechanism-nan",
        ValueError,
        ("mechanism of 'a'", "NaN"),
        lambda: bad_mechanism_scm(lambda pa, u: np.full(len(u), np.nan)).sample(3, seed=0),
    ),
    case("scm-do-array", ValueError, ("'t'", "scalar"), lambda: SCM0.do({"t": [1.0, 2.0]})),
    case("scm-abduct-intensity-range", ValueError, "64", lambda: SCM0.abduct({"t": OBS["t"], "i": np.full(5, 300.0)})),
    # --- cflib.scm.examples
    case("intensity-noise-scale-zero", ValueError, "noise_scale", lambda: intensity_mechanism(noise_scale=0.0)),
    case("intensity-noise-scale-nan", ValueError, "noise_scale", lambda: intensity_mechanism(noise_scale=float("nan"))),
    case("intensity-slope-string", TypeError, "slope", lambda: intensity_mechanism(slope="2")),
    case("fit-empty", ValueError, "t", lambda: fit_intensity_mechanism([], [])),
    case(
        "fit-inf",
        ValueError,
        ("i", "infinite"),
        lambda: fit_intensity_mechanism(OBS["t"], with_nan(OBS, "i", np.inf)["i"]),
    ),
    case("fit-lengths", ValueError, ("t", "i"), lambda: fit_intensity_mechanism(OBS["t"], OBS["i"][:4])),
    case("fit-too-few", ValueError, "3", lambda: fit_intensity_mechanism(OBS["t"][:2], OBS["i"][:2])),
    case("fit-2d", ValueError, "t", lambda: fit_intensity_mechanism(np.ones((5, 2)), np.ones((5, 2)))),
    case("fit-out-of-range", ValueError, ("i", "255"), lambda: fit_intensity_mechanism(OBS["t"], np.full(5, 255.0))),
    case("fit-constant-t", ValueError, "t", lambda: fit_intensity_mechanism(np.ones(5), OBS["i"])),
    # --- cflib.scm.deep
    case(
        "deep-graph-cycle",
        ValueError,
        "cycle",
        lambda: DeepSCM({"a": ["b"], "b": ["a"]}, {"a": RootMechanism(), "b": RootMechanism()}),
    ),
    case("deep-graph-type", TypeError, "graph", lambda: DeepSCM(3, {})),
    case(
        "deep-cf-inf",
        ValueError,
        ("obs['t']", "infinite"),
        lambda: DEEP.counterfactual(with_nan(OBS, "t", np.inf), {"t": 1.0}),
    ),
    case(
        "deep-cf-empty",
        ValueError,
        ("obs", "no units"),
        lambda: DEEP.counterfactual({"t": np.array([]), "i": np.array([])}, {"t": 1.0}),
    ),
    case("deep-cf-do-nan", ValueError, ("do['t']", "NaN"), lambda: DEEP.counterfactual(OBS, {"t": np.nan})),
    case("deep-cf-do-unknown", ValueError, "'q'", lambda: DEEP.counterfactual(OBS, {"q": 1.0})),
    case("deep-cf-do-type", TypeError, "do", lambda: DEEP.counterfactual(OBS, "t")),
    case("deep-sample-negative", ValueError, "n", lambda: DEEP.sample(-5)),
    case("deep-sample-bool", TypeError, "n", lambda: DEEP.sample(True)),
    case("deep-null-cycles-float", TypeError, "m", lambda: DEEP.null_cycles(OBS, 2.0)),
    case("deep-predict-noise-type", TypeError, "noise", lambda: DEEP.predict([1, 2])),
    case("root-empty", ValueError, "values", lambda: RootMechanism([])),
    case("root-nan", ValueError, ("values", "NaN"), lambda: RootMechanism([1.0, np.nan])),
    case("root-sample-zero", ValueError, "n", lambda: RootMechanism([1.0]).sample_noise(0, np.random.default_rng(0))),
    case("closed-form-type", TypeError, "mechanism", lambda: ClosedForm(lambda pa, u: u)),
    case(
        "oracle-image-scale",
        ValueError,
        "scale",
        lambda: OracleImage(type("D", (), {"x": X, "subset": 0, "render": 0})(), scale=-1.0),
    ),
    # --- cflib.scm.adapters
    case("parents-type", TypeError, "pa", lambda: check_parent_dict([1, 2], ("b",), 2, "pa")),
    case(
        "parents-unknown",
        ValueError,
        ("pa", "'z'"),
        lambda: check_parent_dict({"b": [1, 2], "z": [1, 2]}, ("b",), 2, "pa"),
    ),
    case(
        "parents-inf",
        ValueError,
        ("pa['b']", "infinite"),
        lambda: check_parent_dict({"b": [1.0, np.inf]}, ("b",), 2, "pa"),
    ),
    case("parents-empty", ValueError, "pa['b']", lambda: check_parent_dict({"b": []}, ("b",), None, "pa")),
    case("encoder-spec-type", TypeError, "spec", lambda: ParentEncoder(["digit"])),
    case(
        "encoder-classes-string",
        TypeError,
        ("classes", "digit"),
        lambda: ParentEncoder({"digit": ("categorical", "ten")}),
    ),
    case("encoder-classes-one", ValueError, "digit", lambda: ParentEncoder({"digit": ("categorical", 1)})),
    case("encoder-kind", ValueError, "hue", lambda: ParentEncoder({"hue": "angle"})),
    case("encoder-empty-kind", TypeError, "hue", lambda: ParentEncoder({"hue": ()})),
    case(
        "encoder-n-negative", ValueError, "n", lambda: ParentEncoder({"hue": "circular"}).encode({"hue": [0.1]}, n=-1)
    ),
    case("function-model-no-parents", TypeError, "parent_names", lambda: FunctionModel(lambda x, pa, ps: x)),
    case(
        "function-model-parent-string",
        TypeError,
        "parent_names",
        lambda: FunctionModel(type("F", (), {"parent_names": "bc", "__call__": lambda s, *a: 0})()),
    ),
    case("function-model-image-parent", ValueError, ("image", "'b'"), lambda: FunctionModel(shift, image="b")),
    case(
        "function-model-wrong-shape",
        ValueError,
        ("cropping", "(2, 1, 4, 8)", "(2, 1, 8, 8)"),
        lambda: FunctionModel(cropping).counterfactual(FOBS, {"b": 1.0}),
    ),
    case(
        "function-model-nan",
        ValueError,
        ("nan_images", "NaN"),
        lambda: FunctionModel(nan_images).counterfactual(FOBS, {"b": 1.0}),
    ),
    case(
        "function-model-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "2 images", "expected 2 rows"),
        lambda: FunctionModel(dropping).counterfactual(FOBS, {"b": 1.0}),
    ),
    case(
        "function-model-scalar-out",
        ValueError,
        ("scalar_out", "a scalar", "expected 2 rows"),
        lambda: FunctionModel(scalar_out).counterfactual(FOBS, {"b": 1.0}),
    ),
    case("function-model-do-unknown", ValueError, "'q'", lambda: FM.counterfactual(FOBS, {"q": 1.0})),
    case("function-model-do-inf", ValueError, ("do['b']", "infinite"), lambda: FM.counterfactual(FOBS, {"b": np.inf})),
    case(
        "function-model-nan-input",
        ValueError,
        ("obs['x']", "NaN"),
        lambda: FM.counterfactual({**FOBS, "x": NAN_X}, {"b": 1.0}),
    ),
    case(
        "function-model-scalar-image", TypeError, "obs['x']", lambda: FM.counterfactual({**FOBS, "x": 3.0}, {"b": 1.0})
    ),
    case(
        "image-adapter-model",
        TypeError,
        "model",
        lambda: ImageModelAdapter(object(), ParentEncoder({"b": "continuous"})),
    ),
    case(
        "image-adapter-sample-n",
        TypeError,
        "n",
        lambda: ImageModelAdapter.sample(
            type("M", (), {"counterfactual": 0})(), ParentEncoder({"b": "continuous"}), 2.5
        ),
    ),
    case("diffusion-adapter-model", TypeError, "model", lambda: LatentDiffusionAdapter(object())),
    case(
        "diffusion-adapter-unknown",
        ValueError,
        "'q'",
        lambda: LatentDiffusionAdapter(LD()).abduct({"x": X[:, 0], "A": [0, 1], "q": [0, 1]}),
    ),
    # --- cflib.metrics.axioms: the distance and the function form
    case("l1-nan", ValueError, ("b", "NaN"), lambda: ax.l1_distance(X, NAN_X)),
    case("l1-nan-no-range", ValueError, ("b", "NaN"), lambda: ax.l1_distance(X, NAN_X, value_range=None)),
    case("l1-255-scale", ValueError, ("a", "value_range"), lambda: ax.l1_distance(X * 255, X * 127)),
    case("l1-shapes", ValueError, ("a", "b", "shape"), lambda: ax.l1_distance(X, X[:1])),
    case("l1-empty", ValueError, "a", lambda: ax.l1_distance(X[:0], X[:0])),
    case("l1-scale-negative", ValueError, "scale", lambda: ax.l1_distance(X, X, scale=-1.0)),
    case("l1-range-reversed", ValueError, "value_range", lambda: ax.l1_distance(X, X, value_range=(1.0, 0.0))),
    case("l1-strings", TypeError, "a", lambda: ax.l1_distance(["a", "b"], ["a", "b"])),
    case("partial-not-function", TypeError, "f", lambda: ax.partial(lambda x: x, "b")),
    case("partial-unknown", ValueError, "'size'", lambda: ax.partial(shift, "size")),
    case(
        "composition-wrong-shape",
        ValueError,
        ("cropping", "(2, 1, 4, 8)"),
        lambda: ax.composition(cropping, X, PA, m=1),
    ),
    case(
        "composition-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "expected 2 rows"),
        lambda: ax.composition(dropping, X, PA, m=1),
    ),
    case(
        "reversibility-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "expected 2 rows"),
        lambda: ax.reversibility(dropping, X, PA, "b", np.zeros(2)),
    ),
    case(
        "effectiveness-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "expected 2 rows"),
        lambda: ax.effectiveness(dropping, X, PA, "b", np.zeros(2), {"b": MeanOracle()}),
    ),
    case(
        "commutativity-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "expected 2 rows"),
        lambda: ax.commutativity(dropping, X, PA, "b", np.zeros(2), "c", np.ones(2)),
    ),
    case(
        "partial-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "expected 2 rows"),
        lambda: ax.partial(dropping, "b")(X, PA, np.zeros(2)),
    ),
    case(
        "report-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "expected 2 rows"),
        lambda: ax.soundness_report(dropping, X, PA, {"b": np.zeros(2)}, {"b": MeanOracle()}),
    ),
    case("composition-nan-images", ValueError, ("nan_images", "NaN"), lambda: ax.composition(nan_images, X, PA, m=1)),
    case("composition-x-nan", ValueError, ("x", "NaN"), lambda: ax.composition(shift, NAN_X, PA)),
    case("composition-x-3d", ValueError, ("x", "(n, C, H, W)"), lambda: ax.composition(shift, X[:, 0], PA)),
    case("composition-x-empty", ValueError, "x", lambda: ax.composition(shift, X[:0], {"b": [], "c": []})),
    case("composition-m-bool", TypeError, "m", lambda: ax.composition(shift, X, PA, m=True)),
    case("composition-m-zero", ValueError, "m", lambda: ax.composition(shift, X, PA, m=0)),
    case("composition-distance", TypeError, "distance", lambda: ax.composition(shift, X, PA, distance="l1")),
    case(
        "composition-pa-inf",
        ValueError,
        ("pa['b']", "infinite"),
        lambda: ax.composition(shift, X, {"b": [0.0, np.inf], "c": [0.0, 1.0]}),
    ),
    case(
        "reversibility-do-nan",
        ValueError,
        ("do_values", "NaN"),
        lambda: ax.reversibility(shift, X, PA, "b", [np.nan, 1.0]),
    ),
    case(
        "reversibility-do-length",
        ValueError,
        ("do_values", "3"),
        lambda: ax.reversibility(shift, X, PA, "b", np.zeros(3)),
    ),
    case(
        "reversibility-cycles-negative",
        ValueError,
        "cycles",
        lambda: ax.reversibility(shift, X, PA, "b", np.zeros(2), cycles=-1),
    ),
    case(
        "effectiveness-oracles-type",
        TypeError,
        "oracles",
        lambda: ax.effectiveness(shift, X, PA, "b", np.zeros(2), [MeanOracle()]),
    ),
    case(
        "effectiveness-oracle-object",
        TypeError,
        "oracles['b']",
        lambda: ax.effectiveness(shift, X, PA, "b", np.zeros(2), {"b": 3}),
    ),
    case(
        "effectiveness-oracle-unknown",
        ValueError,
        ("oracles", "'q'"),
        lambda: ax.effectiveness(shift, X, PA, "b", np.zeros(2), {"q": MeanOracle()}),
    ),
    case(
        "effectiveness-oracle-length",
        ValueError,
        ("oracle of 'b'", "ShortOracle", "(2,)"),
        lambda: ax.effectiveness(shift, X, PA, "b", np.zeros(2), {"b": ShortOracle()}),
    ),
    case(
        "commutativity-same",
        ValueError,
        ("parent_a", "parent_b"),
        lambda: ax.commutativity(shift, X, PA, "b", np.zeros(2), "b", np.ones(2)),
    ),
    case(
        "commutativity-do-inf",
        ValueError,
        ("do['c']", "infinite"),
        lambda: ax.commutativity(shift, X, PA, "b", np.zeros(2), "c", [np.inf, 0.0]),
    ),
    case(
        "sequence-wrong-shape",
        ValueError,
        ("cropping", "(2, 1, 4, 8)"),
        lambda: ax.composition_sequence(cropping, X, PA, m=1),
    ),
    case(
        "sequence-wrong-rows",
        ValueError,
        ("dropping", "1 rows", "expected 2 rows"),
        lambda: ax.reversibility_sequence(dropping, X, PA, "b", np.zeros(2)),
    ),
    case(
        "reversibility-sequence-length",
        ValueError,
        ("do_values", "3"),
        lambda: ax.reversibility_sequence(shift, X, PA, "b", np.zeros(3)),
    ),
    case(
        "report-do-values-type",
        TypeError,
        "do_values",
        lambda: ax.soundness_report(shift, X, PA, [0.0, 1.0], {"b": MeanOracle()}),
    ),
    case(
        "report-do-values-unknown",
        ValueError,
        "'q'",
        lambda: ax.soundness_report(shift, X, PA, {"q": np.zeros(2)}, {"b": MeanOracle()}),
    ),
    case(
        "report-cycles-zero",
        ValueError,
        "cycles",
        lambda: ax.soundness_report(shift, X, PA, {"b": np.zeros(2)}, {"b": MeanOracle()}, cycles=0),
    ),
    case(
        "report-labels-type",
        TypeError,
        "labels",
        lambda: ax.soundness_report(shift, X, PA, {"b": np.zeros(2)}, {"b": MeanOracle()}, labels=["x"]),
    ),
    case(
        "score-counterfactuals-oracle-length",
        ValueError,
        ("oracle of 'b'", "ShortOracle"),
        lambda: ax.score_counterfactuals(X, PA, {"b": ShortOracle()}),
    ),
    case(
        "score-counterfactuals-targets-length",
        ValueError,
        ("targets['b']", "3"),
        lambda: ax.score_counterfactuals(X, {"b": np.zeros(3)}, {"b": MeanOracle()}),
    ),
    # --- cflib.metrics.axioms: the protocol form
    case(
        "measure-model-type", TypeError, ("model", "CounterfactualModel"), lambda: ax.measure_composition(shift, FOBS)
    ),
    case("measure-obs-type", TypeError, "obs", lambda: ax.measure_composition(FM, [X])),
    case("measure-image-missing", ValueError, ("obs", "'img'"), lambda: ax.measure_composition(FM, FOBS, image="img")),
    case("measure-hold-unknown", ValueError, ("hold", "'q'"), lambda: ax.measure_composition(FM, FOBS, hold=["q"])),
    case("measure-hold-type", TypeError, "hold", lambda: ax.measure_composition(FM, FOBS, hold=3)),
    case("measure-keep-images", ValueError, "keep_images", lambda: ax.measure_composition(FM, FOBS, keep_images=-1)),
    case(
        "measure-cycles-string",
        TypeError,
        "cycles",
        lambda: ax.measure_composition(SCM0, OBS, cycles="10", image="i", distances=ABS),
    ),
    case(
        "measure-distances-type",
        TypeError,
        "distances",
        lambda: ax.measure_composition(SCM0, OBS, image="i", distances=[ax.l1_distance]),
    ),
    case(
        "measure-distance-not-callable",
        TypeError,
        "distances['d']",
        lambda: ax.measure_composition(SCM0, OBS, image="i", distances={"d": 3}),
    ),
    case(
        "measure-distance-output",
        ValueError,
        ("'d'", "(5,)"),
        lambda: ax.measure_composition(SCM0, OBS, image="i", distances={"d": lambda a, b: np.zeros(2)}),
    ),
    case(
        "measure-scm-image-range",
        ValueError,
        ("a", "value_range"),
        lambda: ax.measure_composition(SCM0, OBS, cycles=1, image="i"),
    ),
    case(
        "reversibility-parents-unknown",
        ValueError,
        ("parents", "'q'"),
        lambda: ax.measure_reversibility(SCM0, OBS, parents=["q"], image="i", distances=ABS),
    ),
    case(
        "reversibility-do-type",
        TypeError,
        "do",
        lambda: ax.measure_reversibility(SCM0, OBS, do=[1.0], image="i", distances=ABS),
    ),
    case(
        "reversibility-sampler-type",
        TypeError,
        "sampler",
        lambda: ax.measure_reversibility(SCM0, OBS, parents=["t"], sampler=3, image="i", distances=ABS),
    ),
    case(
        "effect-readers-empty",
        TypeError,
        "readers",
        lambda: ax.measure_effectiveness(SCM0, OBS, {}, do={"t": OBS["t"]}, image="t"),
    ),
    case(
        "effect-reader-kind",
        ValueError,
        ("readers['b']", "kind"),
        lambda: ax.measure_effectiveness(
            FM,
            FOBS,
            {"b": type("P", (), {"kind": "ordinal", "predict": lambda s, x, c=None: x})()},
            do={"b": [1.0, 0.0]},
        ),
    ),
    case(
        "effect-predictor-length",
        ValueError,
        ("predictor of 'b'", "LongPredictor", "(2,)"),
        lambda: ax.measure_effectiveness(FM, FOBS, {"b": LongPredictor()}, do={"b": [1.0, 0.0]}),
    ),
    case(
        "effect-predictor-probabilities",
        ValueError,
        ("predicted", "0/1"),
        lambda: ax.measure_effectiveness(FM, FOBS, {"b": ProbabilityPredictor()}, do={"b": [1.0, 0.0]}),
    ),
    case(
        "effect-interventions-unknown",
        ValueError,
        "'q'",
        lambda: ax.measure_effectiveness(SCM0, OBS, {"t": ax.AbsoluteError()}, interventions=["q"], image="t"),
    ),
    case(
        "effect-do-inf",
        ValueError,
        ("'t'", "infinite"),
        lambda: ax.measure_effectiveness(SCM0, OBS, {"t": ax.AbsoluteError()}, do={"t": np.full(5, np.inf)}, image="t"),
    ),
    case(
        "commutativity-overlap",
        ValueError,
        ("do_a", "do_b"),
        lambda: ax.measure_commutativity(FM, FOBS, {"b": 1.0}, {"b": 0.0}),
    ),
    case("commutativity-do-type", TypeError, "do_a", lambda: ax.measure_commutativity(FM, FOBS, [1.0], {"c": 0.0})),
    case("score-kind", ValueError, "kind", lambda: ax.score("ordinal", [1, 2], [1, 2])),
    case("score-empty", ValueError, "target", lambda: ax.score("regression", [], [])),
    case("score-nan", ValueError, ("predicted", "NaN"), lambda: ax.score("regression", [1.0, 2.0], [1.0, np.nan])),
    case("score-shapes", ValueError, ("target", "predicted"), lambda: ax.score("regression", [1.0, 2.0], [1.0])),
    case(
        "score-multiclass-fraction",
        ValueError,
        ("predicted", "multiclass"),
        lambda: ax.score("multiclass", [1, 2], [1.5, 2.0]),
    ),
    case(
        "absolute-error-broadcast",
        ValueError,
        ("x", "target"),
        lambda: ax.AbsoluteError().score(np.zeros(3), np.zeros((3, 1))),
    ),
    case("sample-do-n-negative", ValueError, "n", lambda: ax.sample_do_values([1, 2, 3], -1)),
    case("sample-do-n-float", TypeError, "n", lambda: ax.sample_do_values([1, 2, 3], 2.5)),
    case("sample-do-empty", ValueError, "train_values", lambda: ax.sample_do_values([], 3)),
    case("sample-do-nan", ValueError, ("train_values", "NaN"), lambda: ax.sample_do_values([1.0, np.nan], 3)),
    case(
        "sample-do-current-length",
        ValueError,
        ("current", "3"),
        lambda: ax.sample_do_values([1, 2, 3], 3, current=[1, 2]),
    ),
    case("marginal-empty", ValueError, "train_values", lambda: ax.MarginalSampler({})),
    case(
        "marginal-force-unknown",
        ValueError,
        ("force_change", "'q'"),
        lambda: ax.MarginalSampler({"b": [0, 1]}, force_change=["q"]),
    ),
    case("marginal-values-empty", ValueError, "train_values['b']", lambda: ax.MarginalSampler({"b": []})),
    case("intervention-bins-one", ValueError, "n_bins", lambda: ax.InterventionSampler({"t": OBS["t"]}, n_bins=1)),
    case("intervention-bins-float", TypeError, "n_bins", lambda: ax.InterventionSampler({"t": OBS["t"]}, n_bins=2.5)),
    case(
        "intervention-inf",
        ValueError,
        ("observed['t']", "infinite"),
        lambda: ax.InterventionSampler({"t": [1.0, np.inf]}),
    ),
    case(
        "intervention-discrete-unknown",
        ValueError,
        ("discrete", "'d'"),
        lambda: ax.InterventionSampler({"t": OBS["t"]}, discrete=["d"]),
    ),
    case(
        "intervention-factual-nan",
        ValueError,
        ("factual", "NaN"),
        lambda: ax.InterventionSampler({"t": OBS["t"]}).sample("t", [np.nan]),
    ),
    case("result-at-bool", TypeError, "m", lambda: ax.measure_composition(FM, FOBS, cycles=2).at(True)),
    case("result-at-range", ValueError, ("m", "1..2"), lambda: ax.measure_composition(FM, FOBS, cycles=2).at(3)),
    # --- cflib.metrics.axioms: tables and ranks
    case("summarise-type", TypeError, "df", lambda: ax.summarise(REPORT.to_dict())),
    case("summarise-empty", ValueError, "df", lambda: ax.summarise(REPORT.iloc[:0])),
    case("summarise-by-missing", ValueError, ("df", "'block'"), lambda: ax.summarise(REPORT, by=["block"])),
    case("table1-decimals", ValueError, "decimals", lambda: ax.table1(SUMMARY, decimals=-1)),
    case("table1-step", TypeError, "composition_step", lambda: ax.table1(SUMMARY, composition_step=1.0)),
    case("table1-columns", ValueError, ("summary", "mean"), lambda: ax.table1(REPORT)),
    case("average-rank-columns-type", TypeError, "columns", lambda: ax.average_rank(TABLE, ["acc"])),
    case("average-rank-direction", TypeError, "columns['acc']", lambda: ax.average_rank(TABLE, {"acc": "up"})),
    case("average-rank-missing", ValueError, ("table", "'f1'"), lambda: ax.average_rank(TABLE, {"f1": True})),
    case(
        "average-rank-nan",
        W,
        ("table", "acc"),
        lambda: ax.average_rank(TABLE.assign(acc=[0.9, np.nan]), {"acc": True, "err": False}),
    ),
    case(
        "effectiveness-ranks-columns",
        ValueError,
        ("summary", "oracles"),
        lambda: ax.effectiveness_ranks(SUMMARY.drop(columns="oracles"), ["model"], "main", {("b", "b"): False}),
    ),
    case(
        "effectiveness-ranks-keys",
        TypeError,
        "columns",
        lambda: ax.effectiveness_ranks(SUMMARY, ["model"], "main", {"b": False}),
    ),
    case("rank-change-type", TypeError, "rank_a", lambda: ax.rank_change(RANK.to_numpy(), RANK)),
    case("rank-change-nan", ValueError, "rank_b", lambda: ax.rank_change(RANK, RANK.where(RANK < 1.5))),
    # --- cflib.metrics.benchmark_metrics
    case("l1-pixel-scale", ValueError, "scale", lambda: bm.l1_pixel(0.0)),
    case("l1-pixel-range", ValueError, ("b", "[1.5, 1.5]", "value_range"), lambda: bm.l1_pixel()(X, X * 0 + 1.5)),
    case("l1-pixel-255-scale", ValueError, ("a", "value_range"), lambda: bm.l1_pixel(1.0)(X * 255, X * 127)),
    case("l1-pixel-range-reversed", ValueError, "value_range", lambda: bm.l1_pixel(value_range=(1.0, 0.0))),
    case("l1-pixel-range-type", TypeError, "value_range", lambda: bm.l1_pixel(value_range=0.5)),
    case("embedding-not-callable", TypeError, "embed", lambda: bm.embedding_l1(3)),
    case(
        "embedding-rows",
        ValueError,
        ("embedding", "<lambda>", "(2, ...)"),
        lambda: bm.embedding_l1(lambda x: np.zeros((1, 3)))(X, X),
    ),
    case(
        "embedding-inf-images",
        ValueError,
        ("b", "NaN"),
        lambda: bm.embedding_l1(lambda x: x.reshape(len(x), -1))(X, NAN_X),
    ),
    case(
        "perceptual-layers", ValueError, ("feature_maps", "layers"), lambda: bm.perceptual_distance(lambda x: [])(X, X)
    ),
    case("memoize-maxsize", ValueError, "maxsize", lambda: bm.memoize_features(lambda x: x, maxsize=0)),
    case(
        "paired-inf", ValueError, ("a", "infinite"), lambda: bm.paired_comparison([1.0, np.inf, 2.0], [1.0, 2.0, 3.0])
    ),
    case("paired-empty", ValueError, "a", lambda: bm.paired_comparison([], [])),
    case("paired-one", ValueError, ("a", "2 pairs"), lambda: bm.paired_comparison([1.0], [2.0])),
    case("paired-2d", ValueError, "a", lambda: bm.paired_comparison(np.ones((3, 2)), np.ones((3, 2)))),
    case("paired-lengths", ValueError, ("a", "b"), lambda: bm.paired_comparison([1.0, 2.0, 3.0], [1.0, 2.0])),
    case(
        "paired-n-boot-negative", ValueError, "n_boot", lambda: bm.paired_comparison([1.0, 2.0], [2.0, 1.0], n_boot=-1)
    ),
    case("paired-ci", ValueError, "ci", lambda: bm.paired_comparison([1.0, 2.0], [2.0, 1.0], ci=95)),
    case("paired-test", ValueError, "test", lambda: bm.paired_comparison([1.0, 2.0], [2.0, 1.0], test="ttest")),
    case(
        "scm-effectiveness-sampler",
        TypeError,
        "sampler",
        lambda: bm.scm_effectiveness(SCM0, OBS, {"t": ax.AbsoluteError()}, sampler=3, image="t"),
    ),
    case(
        "scm-effectiveness-predictors",
        TypeError,
        "predictors",
        lambda: bm.scm_effectiveness(SCM0, OBS, ["t"], ax.InterventionSampler({"t": OBS["t"]}), image="t"),
    ),
    case(
        "scm-composition-keep",
        TypeError,
        "keep_images",
        lambda: bm.scm_composition(SCM0, OBS, image="i", keep_images=1.5, distances=ABS),
    ),
    # --- cflib.metrics.minimality
    case("kl-diag-reduce", ValueError, "reduce", lambda: mn.gaussian_kl_diag(MU, LV, MU, LV, reduce="max")),
    case(
        "kl-diag-inf",
        ValueError,
        ("logvar_p", "infinite"),
        lambda: mn.gaussian_kl_diag(MU, LV, MU, np.full_like(LV, np.inf)),
    ),
    case("kl-diag-broadcast", ValueError, "mu_q", lambda: mn.gaussian_kl_diag(MU, LV, MU[:, :1].T, LV)),
    case("kl-matrix-1d", ValueError, "a mu", lambda: mn.kl_matrix(MU[:, 0], LV[:, 0], MU, LV)),
    case(
        "kl-matrix-width",
        ValueError,
        ("a", "b", "latent dimension"),
        lambda: mn.kl_matrix(MU, LV, MU[:, :1], LV[:, :1]),
    ),
    case("identity-cld-negative", ValueError, "weights", lambda: mn.identity_cld((-0.2, 1.2))),
    case("identity-cld-zero", ValueError, "weights", lambda: mn.identity_cld((0.0, 0.0))),
    case("discretize-bins-bool", TypeError, "bins", lambda: mn.discretize([0.1, 0.5], bins=True)),
    case("discretize-nan", ValueError, ("values", "NaN"), lambda: mn.discretize([0.1, np.nan])),
    case("discretize-empty", ValueError, "values", lambda: mn.discretize([])),
    case("discretize-range", ValueError, "value_range", lambda: mn.discretize([0.1, 0.5], value_range=(1.0, 0.0))),
    case(
        "cld-not-pair", TypeError, "factual", lambda: mn.counterfactual_latent_divergence(MU, (MU, LV), GROUPS, GROUPS)
    ),
    case(
        "cld-nan",
        ValueError,
        ("counterfactual mu", "NaN"),
        lambda: mn.counterfactual_latent_divergence((MU, LV), (MU * np.nan, LV), GROUPS, GROUPS),
    ),
    case(
        "cld-empty",
        ValueError,
        "factual mu",
        lambda: mn.counterfactual_latent_divergence((MU[:0], LV[:0]), (MU[:0], LV[:0]), GROUPS[:0], GROUPS[:0]),
    ),
    case(
        "cld-groups-shape",
        ValueError,
        "factual_group",
        lambda: mn.counterfactual_latent_divergence((MU, LV), (MU, LV), GROUPS[:3], GROUPS),
    ),
    case(
        "cld-weights",
        ValueError,
        "weights",
        lambda: mn.counterfactual_latent_divergence((MU, LV), (MU, LV), GROUPS, GROUPS, weights=(np.nan, 0.2)),
    ),
    case(
        "cld-chunk",
        ValueError,
        "chunk",
        lambda: mn.counterfactual_latent_divergence((MU, LV), (MU, LV), GROUPS, GROUPS, chunk=0),
    ),
    case(
        "cld-parent-range",
        ValueError,
        ("parent", "0..1"),
        lambda: mn.counterfactual_latent_divergence(
            (MU, LV), (MU, LV), GROUPS, GROUPS, reference_group=np.column_stack([GROUPS, GROUPS]), parent=np.full(6, 5)
        ),
    ),
    # --- cflib.metrics.realism
    case(
        "frechet-inf",
        ValueError,
        ("features_real", "infinite"),
        lambda: rl.frechet_distance(np.vstack([FEAT, [np.inf] * 3]), FEAT),
    ),
    case("frechet-1d", ValueError, "features_real", lambda: rl.frechet_distance(FEAT[:, 0], FEAT)),
    case("frechet-one-row", ValueError, ("features_generated", "2 rows"), lambda: rl.frechet_distance(FEAT, FEAT[:1])),
    case("frechet-width", ValueError, "width", lambda: rl.frechet_distance(FEAT, FEAT[:, :2])),
    case("frechet-strings", TypeError, "features_real", lambda: rl.frechet_distance([["a", "b"], ["c", "d"]], FEAT)),
    case(
        "frechet-singular",
        W,
        ("features_generated", "4 rows for 8 features", "at least 9"),
        lambda: rl.frechet_distance(RNG.normal(size=(40, 8)), RNG.normal(size=(4, 8))),
    ),
    case(
        "frechet-few-rows", W, ("features_real", "5 rows", "10"), lambda: rl.frechet_distance(FEAT[:5, :2], FEAT[:, :2])
    ),
    case(
        "frechet-features-callable", TypeError, "features", lambda: rl.frechet_feature_distance(FEAT, FEAT, features=3)
    ),
    case("frechet-n-boot", ValueError, "n_boot", lambda: rl.frechet_feature_distance(FEAT, FEAT, n_boot=-5)),
    case("frechet-ci", ValueError, "ci", lambda: rl.frechet_feature_distance(FEAT, FEAT, n_boot=5, ci=1.5)),
    case(
        "frechet-feature-output",
        ValueError,
        ("real", "<lambda>"),
        lambda: rl.frechet_feature_distance(X, X, features=lambda x: x.reshape(-1)),
    ),
]


def test_the_table_is_large_and_its_ids_unique():
    assert len(CASES) >= 50
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.fixture
def empty_cwd(tmp_path, monkeypatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("c", CASES, ids=[c.id for c in CASES])
def test_malformed_call_gets_one_clear_line(c: Case, empty_cwd: Path):
    one_clear_line(c)  # raised by cflib's own code, not from inside numpy, scipy or pandas
    assert not any(empty_cwd.iterdir()), "the call wrote into the working folder"


def test_frechet_warning_is_recorded_and_shown():
    small, big = RNG.normal(size=(5, 8)), RNG.normal(size=(60, 8))
    with pytest.warns(cflib.CflibWarning, match="at least 9"):
        res = rl.frechet_feature_distance(big, small, n_boot=3)
    assert len(res.warnings) == 1 and "generated" in res.warnings[0]
    assert res.summary()["warning"].tolist() == [res.warnings[0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error", cflib.CflibWarning)  # enough rows: no warning, no column
        ok = rl.frechet_feature_distance(big, RNG.normal(size=(60, 8)))
    assert ok.warnings == () and "warning" not in ok.summary().columns


def test_checks_only_refuse_valid_calls_keep_their_numbers():
    """Closed forms that pass through every new check: an exact SCM has zero axiom errors, the l1 distance
    of App. B is 255 x the mean absolute difference, the Fréchet distance of a set to itself is 0, and
    a Gaussian KL with equal arguments is 0."""
    scm_cf = SCM0.counterfactual(OBS, {"t": OBS["t"]})
    np.testing.assert_allclose(scm_cf["i"], OBS["i"], rtol=0, atol=1e-9)
    np.testing.assert_allclose(
        DEEP.counterfactual(OBS, {"t": 3.0})["i"], SCM0.counterfactual(OBS, {"t": 3.0})["i"], rtol=1e-12
    )
    assert ax.l1_distance(X, np.clip(X + 0.01, 0, 1)).mean() == pytest.approx(
        255 * np.abs(np.clip(X + 0.01, 0, 1) - X).mean(), rel=1e-6
    )
    assert ax.composition(shift, X, PA, m=3).max() == 0.0
    assert rl.frechet_distance(FEAT, FEAT) == pytest.approx(0.0, abs=1e-9)
    np.testing.assert_allclose(mn.gaussian_kl_diag(MU, LV, MU, LV), 0.0, atol=1e-12)
    assert mn.identity_cld() == pytest.approx(np.log(0.8 + 0.2 * np.e))
    s = ax.InterventionSampler({"t": OBS["t"], "d": [0, 1, 2, 0, 1]}, discrete="d")  # one name as a str
    assert s.discrete == {"d"} and np.all(s.sample("d", [0, 1, 2, 0, 1], 0) != [0, 1, 2, 0, 1])
    assert SCM0.graph.mutilate("i").parents("i") == ()
