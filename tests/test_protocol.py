"""The CounterfactualModel and CounterfactualDataset protocols: every model and adapter implements them and
gives, through the protocol, exactly the counterfactuals of its own API; every dataset's truth is consistent."""

import numpy as np
import pytest
import torch

from cflib.data.colour_digits import colour_digits
from cflib.data.morphosynth import make_morphosynth
from cflib.data.protocol import CounterfactualDataset
from cflib.data.shapes import shapes_scene
from cflib.data.smileyfaces import make_smileyfaces
from cflib.data.toy_cxr import toy_cxr
from cflib.models.diffusion import LatentDiffusion, LDMConfig
from cflib.models.gan import ConditionalGAN
from cflib.models.hvae import HierarchicalConditionalVAE
from cflib.models.vae import ConditionalVAE
from cflib.scm import morpho_attributes
from cflib.scm.adapters import (
    FunctionModel,
    ImageModelAdapter,
    LatentDiffusionAdapter,
    ParentEncoder,
)
from cflib.scm.deep import ClosedForm, DeepSCM, OracleImage
from cflib.scm.protocol import CounterfactualModel

SHAPE = (3, 8, 8)
ENC = ParentEncoder({"digit": ("categorical", 3), "hue": "circular"})


def _units(n=6, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (n, *SHAPE)).astype(np.float32)
    pa = {"digit": rng.integers(0, 3, n), "hue": rng.uniform(0, 1, n)}
    do = {"digit": (pa["digit"] + 1) % 3}
    return x, pa, do


@pytest.mark.parametrize("kind", ["vae", "hvae", "gan"])
def test_image_model_adapters_give_the_models_own_counterfactuals(kind):
    torch.manual_seed(0)
    model = {
        "vae": lambda: ConditionalVAE(SHAPE, ENC.dim, latent_dim=4, width=4, hidden=8, seed=0),
        "hvae": lambda: HierarchicalConditionalVAE(SHAPE, ENC.dim, levels=2, latent_dim=2, width=4, hidden=8, seed=0),
        "gan": lambda: ConditionalGAN(SHAPE, ENC.dim, width=4, hidden=8, seed=0),
    }[kind]()
    x, pa, do = _units()
    eps = model.sample_noise(len(x), 3) if hasattr(model, "sample_noise") else None
    m = ImageModelAdapter(model, ENC, eps)
    assert isinstance(m, CounterfactualModel)
    ps = {**pa, **do}
    old = model.counterfactual(x, ENC.encode(pa), ENC.encode(ps), eps=eps)
    cf = m.counterfactual({**pa, "x": x}, do=do)
    np.testing.assert_array_equal(cf["x"], old)
    np.testing.assert_array_equal(cf["digit"], do["digit"])
    np.testing.assert_array_equal(cf["hue"], pa["hue"])  # not intervened on: unchanged
    np.testing.assert_array_equal(m(x, pa, ps), old)  # the function form is the same call
    # abduct / predict use the model's own encoder and decoder
    noise = m.abduct({**pa, "x": x})
    np.testing.assert_array_equal(noise["x"], model.abduct(x, ENC.encode(pa), eps=eps))
    np.testing.assert_array_equal(
        m.predict(noise, do)["x"], model.decode(noise["x"], ENC.encode(ps), **({"eps": eps} if kind == "hvae" else {}))
    )


def test_latent_diffusion_adapter_gives_the_models_own_counterfactuals():
    cfg = LDMConfig(size=16, vae_channels=(8, 8), unet_channels=(16, 16), latent_channels=2, num_train_timesteps=100)
    ldm = LatentDiffusion(cfg, seed=0)
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, (4, 16, 16)).astype(np.float32)
    A = np.array([0, 1, 2, 0])
    kw = {"t_star": 20, "steps": 2}
    m = LatentDiffusionAdapter(ldm, **kw)
    assert isinstance(m, CounterfactualModel)
    cf = m.counterfactual({"A": A, "x": x}, do={"A": 1})
    np.testing.assert_array_equal(cf["x"], ldm.counterfactual(x, A, 1, **kw))
    np.testing.assert_array_equal(cf["A"], np.ones(4))
    z = m.abduct({"A": A, "x": x})["x"]
    np.testing.assert_array_equal(z, ldm.invert(x, A, **kw))
    np.testing.assert_array_equal(m.predict({"A": A, "x": z}, {"A": 1})["x"], ldm.denoise(z, np.ones(4, int), **kw))
    with pytest.raises(ValueError, match="lacks variable"):
        m.counterfactual({"x": x}, do={"A": 1})


def test_scm_and_deep_scm_implement_the_protocol():
    scm = morpho_attributes()
    obs = scm.sample(50, seed=0)
    assert isinstance(scm, CounterfactualModel)
    np.testing.assert_array_equal(
        scm.counterfactual(obs, do={"t": 3.0})["i"], scm.predict(scm.abduct(obs), do={"t": 3.0})["i"]
    )
    data = make_morphosynth(8, size=16, seed=0)
    deep = DeepSCM(
        data.graph,
        {
            "t": ClosedForm(scm.mechanisms["t"]),
            "i": ClosedForm(scm.mechanisms["i"]),
            "d": _Root(),
            "x": OracleImage(data),
        },
    )
    assert isinstance(deep, CounterfactualModel)
    cf = deep.counterfactual(data.observations(), do={"t": 2.0})
    truth = data.true_counterfactual({"t": 2.0})
    np.testing.assert_allclose(cf["i"], truth["i"], rtol=1e-10)
    np.testing.assert_allclose(cf["x"], truth["x"], atol=1e-3)


class _Root:
    def abduct(self, value, pa):
        return np.asarray(value)

    def predict(self, noise, pa):
        return np.asarray(noise)

    def sample_noise(self, n, rng):
        return rng.integers(0, 10, n)


def test_function_model_checks_its_input():
    def f(x, pa, pa_star):
        return x

    f.parent_names = ("b",)
    m = FunctionModel(f)
    x = np.zeros((3, 1, 2, 2))
    with pytest.raises(ValueError, match="cannot intervene on 'c'"):
        m.counterfactual({"b": np.zeros(3), "x": x}, do={"c": 1})
    with pytest.raises(ValueError, match="has 2 values for 3 units"):
        m.counterfactual({"b": np.zeros(3), "x": x}, do={"b": [1, 2]})
    with pytest.raises(ValueError, match="lacks the image"):
        m.counterfactual({"b": np.zeros(3)}, do={})
    with pytest.raises(TypeError, match="parent_names"):
        FunctionModel(lambda x, pa, ps: x)
    with pytest.raises(ValueError, match="not a parent"):
        FunctionModel(f, image="b")


DATASETS = {
    "morphosynth": lambda: make_morphosynth(6, size=16, seed=0),
    "smileyfaces": lambda: make_smileyfaces(6, size=16, seed=0),
    "colour_digits": lambda: colour_digits("unconfounded", "test", replicas=1, resolution=8, max_base=6, seed=0),
    "shapes": lambda: shapes_scene(
        {"shape": 2, "floor_hue": 2, "wall_hue": 2, "object_hue": 2, "scale": 2, "orientation": 2}, resolution=8
    ),
    "toy_cxr": lambda: toy_cxr(6, size=16, seed=0),
}
DO = {
    "morphosynth": {"d": 3},
    "smileyfaces": {"s": 1},
    "colour_digits": {"hue": 0.5},
    "shapes": {"shape": 1},
    "toy_cxr": {"A": 2},
}


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_datasets_expose_their_true_counterfactuals(name):
    data = DATASETS[name]()
    assert isinstance(data, CounterfactualDataset)
    obs = data.observations()
    idx = np.array([0, 2, 3])
    # the null intervention (every intervenable variable at its own value) reproduces the units
    ((k, v),) = DO[name].items()
    null = data.true_counterfactual({k: obs[k][idx]}, idx)
    for var in obs:
        np.testing.assert_allclose(null[var], obs[var][idx], atol=1e-5, err_msg=var)
    cf = data.true_counterfactual(DO[name], idx)
    np.testing.assert_array_equal(cf[k], np.full(3, v, dtype=cf[k].dtype))
    assert cf["x"].shape == obs["x"][idx].shape
    with pytest.raises(ValueError, match="cannot intervene on 'nope'"):
        data.true_counterfactual({"nope": 1})
