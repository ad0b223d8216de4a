"""DeepSCM (abduction, action, prediction), the attribute flows and the image-mechanism wrappers."""

import numpy as np
import pytest

from cflib.data.morphosynth import encode_parents, make_morphosynth
from cflib.metrics.benchmark_metrics import l1_pixel, scm_composition
from cflib.models.flows import ConditionalFlow1D
from cflib.scm import morpho_attributes
from cflib.scm.deep import ClosedForm, DeepSCM, IdentityImage, OracleImage, RootMechanism


@pytest.fixture(scope="module")
def data():
    return make_morphosynth(200, 16, seed=0)


def _true_scm(ds, image=None):
    m = morpho_attributes().mechanisms
    return DeepSCM(
        ds.graph,
        {
            "t": ClosedForm(m["t"]),
            "i": ClosedForm(m["i"]),
            "d": RootMechanism(ds.d),
            "x": image if image is not None else OracleImage(ds),
        },
    )


def test_oracle_scm_gives_the_true_counterfactual(data):
    scm = _true_scm(data)
    obs = data.observations()
    for do in ({"t": 4.5}, {"i": 90.0}, {"d": (data.d + 3) % 10}):
        cf = scm.counterfactual(obs, do)
        tc = data.true_counterfactual(do)
        np.testing.assert_array_equal(cf["x"], tc["x"])
        np.testing.assert_allclose(cf["i"], tc["i"], rtol=1e-10)


def test_graph_mutilation(data):
    scm = _true_scm(data, IdentityImage())
    obs = data.observations()
    cf_t = scm.counterfactual(obs, {"t": obs["t"] + 1.0})
    assert np.all(cf_t["i"] > obs["i"])  # after do(t) the intensity changes (t -> i)
    cf_i = scm.counterfactual(obs, {"i": 120.0})
    np.testing.assert_array_equal(cf_i["t"], obs["t"])  # after do(i) the thickness does not
    np.testing.assert_array_equal(cf_i["i"], 120.0)
    cf_d = scm.counterfactual(obs, {"d": 0})
    np.testing.assert_allclose(cf_d["t"], obs["t"])
    np.testing.assert_allclose(cf_d["i"], obs["i"], rtol=1e-12)


def test_null_cycles_of_identity_and_truth_are_exact(data):
    obs = data.observations()
    for image in (IdentityImage(), OracleImage(data)):
        chain = _true_scm(data, image).null_cycles(obs, 4)
        assert len(chain) == 5
        for c in chain:
            np.testing.assert_array_equal(c["x"], obs["x"])
        res = scm_composition(
            _true_scm(data, image), obs, cycles=3, distances={"l1": l1_pixel(1.0, value_range=(0, 255))}
        )
        assert np.all(res.distances["l1"] == 0)


def test_sampling_observational_and_interventional(data):
    scm = _true_scm(data)
    s = scm.sample(50, seed=1)
    assert s["x"].shape == (50, 1, 16, 16)
    s2 = scm.sample(50, {"t": 3.0}, seed=1)
    np.testing.assert_array_equal(s2["t"], 3.0)
    np.testing.assert_array_equal(scm.sample(50, seed=1)["x"], s["x"])  # same seed, same draws


def test_bad_input_errors(data):
    scm = _true_scm(data)
    obs = data.observations()
    with pytest.raises(ValueError, match="cannot intervene on 'z'"):
        scm.counterfactual(obs, {"z": 1.0})
    with pytest.raises(ValueError, match="cycle"):
        DeepSCM({"a": ["b"], "b": ["a"]}, {"a": RootMechanism(), "b": RootMechanism()})
    with pytest.raises(ValueError, match="no mechanism for node"):
        DeepSCM(data.graph, {"t": RootMechanism()})
    with pytest.raises(ValueError, match="not nodes of the graph"):
        DeepSCM({"a": []}, {"a": RootMechanism(), "b": RootMechanism()})
    with pytest.raises(TypeError, match="abduct, predict and sample_noise"):
        DeepSCM({"a": []}, {"a": object()})
    with pytest.raises(ValueError, match="200 values"):
        scm.counterfactual(obs, {"t": np.ones(7)})
    with pytest.raises(ValueError, match="same number of units"):
        scm.counterfactual({**obs, "t": obs["t"][:5]}, {"t": 1.0})
    with pytest.raises(ValueError, match="lacks node"):
        scm.abduct({k: v for k, v in obs.items() if k != "i"})
    with pytest.raises(ValueError, match="only abduct images rendered"):
        scm.abduct({**obs, "x": obs["x"] + 1.0})


def test_flow_exact_inverse_density_and_fit():
    vals, noise = morpho_attributes().sample(2000, seed=0, return_noise=True)
    flow = ConditionalFlow1D(["t"], bounds=(64.0, 255.0), seed=0)
    e = np.linspace(-3, 3, 11)
    pa = {"t": np.full(11, 2.5)}
    np.testing.assert_allclose(flow.abduct(flow.predict(e, pa), pa), e, atol=1e-4)
    # the density integrates to one over the bounded support
    grid = np.linspace(64.001, 254.999, 20001)
    dens = np.exp(flow.log_prob(grid, {"t": np.full(len(grid), 2.5)}).detach().numpy())
    assert abs(np.trapezoid(dens, grid) - 1) < 1e-2
    flow.fit(vals["i"], {"t": vals["t"]}, epochs=40, seed=0, device="cpu")
    true_cf = morpho_attributes().counterfactual(vals, {"t": 4.0})["i"]
    cf = flow.predict(flow.abduct(vals["i"], {"t": vals["t"]}), {"t": np.full(2000, 4.0)})
    assert np.mean(np.abs(cf - true_cf)) < 2.0  # grey levels
    with pytest.raises(ValueError, match="strictly inside bounds"):
        flow.abduct(np.array([300.0]), {"t": np.array([2.0])})
    with pytest.raises(ValueError, match="missing"):
        flow.predict(np.zeros(3), {"x": np.zeros(3)})


def test_image_mechanism_temperature_one_reproduces_x(data):
    from cflib.models.image_mechanisms import (
        FIXED_SIGMA_VARIANCE,
        DeepImageMechanism,
        LearnedScaleVAE,
    )
    from cflib.models.vae import ConditionalVAE

    x = data.x / 255.0
    enc = lambda pa: encode_parents(pa["t"], pa["i"], pa["d"])  # noqa: E731
    obs = {**data.observations(), "x": x.astype(np.float32)}
    m = morpho_attributes().mechanisms
    attrs = {"t": ClosedForm(m["t"]), "i": ClosedForm(m["i"]), "d": RootMechanism(data.d)}
    for model in (
        ConditionalVAE(
            (1, 16, 16), 12, likelihood="normal", normal_variance=FIXED_SIGMA_VARIANCE, width=8, hidden=16, seed=0
        ),
        LearnedScaleVAE((1, 16, 16), 12, width=8, hidden=16, seed=0),
    ):
        # untrained weights suffice: with T = 1 the abducted pixel noise restores x exactly (notes X1)
        scm1 = DeepSCM(data.graph, {**attrs, "x": DeepImageMechanism(model, enc, noise_temperature=1.0)})
        d1 = scm_composition(scm1, obs, cycles=2, distances={"l1": l1_pixel(255.0)}).distances["l1"]
        assert d1.max() < 1e-3
        scm01 = DeepSCM(data.graph, {**attrs, "x": DeepImageMechanism(model, enc, noise_temperature=0.1)})
        d01 = scm_composition(scm01, obs, cycles=2, distances={"l1": l1_pixel(255.0)}).distances["l1"]
        assert d01.mean() > 1.0
    with pytest.raises(TypeError, match="model must be"):
        DeepImageMechanism(object(), enc)
    with pytest.raises(ValueError, match="images must have shape"):
        DeepImageMechanism(model, enc).abduct(np.zeros((2, 1, 8, 8)), {k: obs[k][:2] for k in "tid"})


def test_image_mechanism_refuses_prior_noise_its_model_cannot_generate(data):
    # ImageNoise(from_prior=True) is prior noise of a hierarchical VAE, generated level by level by its decode
    # (abduct_levels=0, eps=z); a VAE's or a GAN's decode takes neither, so the mechanism must refuse it
    # with a message instead of calling decode with arguments it does not have.
    from cflib.models.gan import ConditionalGAN
    from cflib.models.image_mechanisms import DeepImageMechanism, ImageNoise
    from cflib.models.vae import ConditionalVAE

    enc = lambda pa: encode_parents(pa["t"], pa["i"], pa["d"])  # noqa: E731
    pa = {k: getattr(data, k)[:2] for k in "tid"}
    for model, z in (
        (ConditionalVAE((1, 16, 16), 12, latent_dim=4, width=4, hidden=8, seed=0), np.zeros((2, 4), np.float32)),
        (ConditionalGAN((1, 16, 16), 12, width=4, hidden=8, seed=0), np.zeros((2, 20), np.float32)),
    ):
        mech = DeepImageMechanism(model, enc)
        with pytest.raises(ValueError, match="from_prior=True is prior noise of a hierarchical VAE"):
            mech.predict(ImageNoise(z=z, eps=None, from_prior=True), pa)
