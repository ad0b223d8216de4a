"""Effectiveness ceiling of the true counterfactual, and the benchmark runner end to end (tiny config)."""

import numpy as np
import pytest

from cflib.data.morphosynth import make_morphosynth
from cflib.experiments.benchmark import BenchmarkConfig, run_benchmark
from cflib.metrics.benchmark_metrics import InterventionSampler, scm_effectiveness, score
from cflib.scm import morpho_attributes
from cflib.scm.deep import ClosedForm, DeepSCM, IdentityImage, OracleImage, RootMechanism


class _PlateauReader:
    """A fixed intensity reader (brightest pixel): an anti-causal predictor with no training."""

    kind = "regression"
    context = ()

    def predict(self, images, context=None):
        return images.reshape(len(images), -1).max(1)


def test_true_counterfactual_is_at_the_predictor_ceiling():
    ds = make_morphosynth(600, 16, seed=0)
    m = morpho_attributes().mechanisms
    attrs = {"t": ClosedForm(m["t"]), "i": ClosedForm(m["i"]), "d": RootMechanism(ds.d)}
    obs = ds.observations()
    sampler = InterventionSampler({"t": ds.t, "i": ds.i, "d": ds.d}, discrete=["d"])
    reader = {"i": _PlateauReader()}
    ceiling, per = score("regression", ds.i, reader["i"].predict(ds.x))
    se = per.std(ddof=1) / np.sqrt(len(per))
    true = scm_effectiveness(
        DeepSCM(ds.graph, {**attrs, "x": OracleImage(ds)}), obs, reader, sampler, interventions=["d", "i"], seed=0
    )
    ident = scm_effectiveness(
        DeepSCM(ds.graph, {**attrs, "x": IdentityImage()}), obs, reader, sampler, interventions=["d", "i"], seed=0
    )
    # do(d) leaves the intensity distribution unchanged: the true model scores the reader's own error on real images
    assert abs(true.table.loc["do(d)", "i"] - ceiling) < 3 * se
    # under do(i) the true model follows the intervention; the identity map does not
    assert true.table.loc["do(i)", "i"] < 3 * ceiling
    assert ident.table.loc["do(i)", "i"] > 10 * true.table.loc["do(i)", "i"]


def test_config_errors():
    with pytest.raises(ValueError, match="unknown model"):
        BenchmarkConfig(models=("vae_fixed", "diffusion"))
    with pytest.raises(ValueError, match="smileyfaces"):
        BenchmarkConfig(models=("hvae_cf",))
    with pytest.raises(ValueError, match="dataset"):
        BenchmarkConfig(dataset="mnist")
    with pytest.raises(ValueError, match="unknown benchmark setting"):
        run_benchmark(n_epochs=3)
    with pytest.raises(ValueError, match="n_test"):
        BenchmarkConfig(n_test=5)


@pytest.mark.slow
def test_run_benchmark_smoke_morphosynth():
    r = run_benchmark(
        dataset="morphosynth",
        size=16,
        n_train=200,
        n_test=40,
        models=("vae_fixed", "gan", "gan_ft"),
        epochs=1,
        gan_epochs=1,
        gan_finetune_steps=3,
        predictor_epochs=1,
        cld_vae_epochs=1,
        flow_epochs=3,
        cycles=3,
        seed=0,
        device="cpu",
        cache=False,
    )
    comp = r.table_composition
    ident = comp.loc["identity (reference)"]
    assert np.all(ident.xs("mean", level=2) == 0)
    assert np.all(comp.loc["true counterfactual (reference)"].xs("mean", level=2) == 0)
    rm = r.table_realism_minimality
    assert rm.loc["identity (reference)", "CLD"] == pytest.approx(0.2954, abs=1e-4)
    assert np.all(r.table_true_error.loc["true counterfactual (reference)"] == 0)
    assert r.table_effectiveness.shape == (5, 9)
    assert r.per_image["vae_fixed"]["composition"]["l1_pixel"].shape == (40, 3)
