"""Tests of the conditional image models (ConditionalVAE, HierarchicalConditionalVAE, ConditionalGAN) and pseudo-oracles."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from cflib.models.classifier import score_predictions
from cflib.models.gan import ConditionalGAN
from cflib.models.hvae import HierarchicalConditionalVAE
from cflib.models.oracles import CNNOracle, LinearOracle
from cflib.models.vae import ConditionalVAE
from cflib.runtime import get_device

SHAPE = (3, 8, 8)


@pytest.fixture(autouse=True, scope="module")
def _one_thread():
    # tiny models: thread start-up costs more than it saves, and the CI machine is shared
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    pa = rng.random((96, 2)).astype(np.float32)
    # images whose colour depends on the parents (channels 0, 1), so a conditional model has something to learn
    x = np.zeros((96, 3, 8, 8))
    x[:, :2] = pa[:, :, None, None]
    x = np.clip(x + 0.03 * rng.standard_normal(x.shape), 0, 1).astype(np.float32)
    return x, pa


def _models():
    return [
        ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, seed=0),
        ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, likelihood="normal", beta=5.0, seed=0),
        HierarchicalConditionalVAE(SHAPE, 2, levels=3, latent_dim=3, width=8, hidden=16, seed=0),
        ConditionalGAN(SHAPE, 2, width=8, hidden=16, seed=0),
    ]


@pytest.mark.parametrize("idx", range(4))
def test_fit_api_shapes_and_save_load(idx, data, tmp_path):
    x, pa = data
    model = _models()[idx]
    assert model.fit(x, pa, epochs=1, batch_size=32, device="cpu", seed=0) is model
    assert len(model.history_) >= 1 and np.isfinite(list(model.history_[-1].values())).all()
    z = model.abduct(x[:5], pa[:5])
    out = model.decode(z, pa[:5])
    assert isinstance(out, np.ndarray) and out.shape == (5, *SHAPE)
    assert out.min() >= 0 and out.max() <= 1
    eps = model.sample_noise(5, seed=3) if hasattr(model, "sample_noise") else None
    cf = model.counterfactual(x[:5], pa[:5], pa[5:10], eps=eps)
    # fixed noise -> a deterministic function
    np.testing.assert_array_equal(cf, model.counterfactual(x[:5], pa[:5], pa[5:10], eps=eps))
    # tensor in -> tensor out
    t = model.counterfactual(torch.from_numpy(x[:5]), pa[:5], pa[5:10], eps=eps)
    assert isinstance(t, torch.Tensor)
    np.testing.assert_allclose(t.numpy(), cf, atol=1e-6)
    path = model.save(tmp_path / "m.pt")
    loaded = type(model).load(path)
    np.testing.assert_allclose(loaded.counterfactual(x[:5], pa[:5], pa[5:10], eps=eps), cf, atol=1e-6)
    assert loaded.history_ == model.history_


def test_same_seed_same_model(data):
    x, pa = data
    a = ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, seed=1).fit(
        x, pa, epochs=1, batch_size=32, device="cpu", seed=2
    )
    b = ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, seed=1).fit(
        x, pa, epochs=1, batch_size=32, device="cpu", seed=2
    )
    np.testing.assert_array_equal(
        a.decode(np.zeros((3, 4), np.float32), pa[:3]), b.decode(np.zeros((3, 4), np.float32), pa[:3])
    )


def test_vae_training_improves_fit(data):
    x, pa = data
    vae = ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, seed=0)
    before_elbo = vae.elbo(x, pa).mean()
    before = np.abs(vae.counterfactual(x, pa, pa) - x).mean()
    vae.fit(x, pa, steps=160, batch_size=32, lr=3e-3, device="cpu", seed=0)
    assert np.abs(vae.counterfactual(x, pa, pa) - x).mean() < 0.5 * before
    assert vae.elbo(x, pa).mean() > before_elbo


def test_vae_posterior_mean_when_no_eps(data):
    x, pa = data
    vae = ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, seed=0)
    z0 = vae.abduct(x[:4], pa[:4])
    zeros = vae.abduct(x[:4], pa[:4], eps=np.zeros((4, 4), np.float32))
    np.testing.assert_allclose(z0, zeros, atol=1e-6)
    assert not np.allclose(vae.abduct(x[:4], pa[:4], seed=1), z0)


def test_bad_input_errors(data):
    x, pa = data
    vae = ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, seed=0).fit(
        x, pa, epochs=1, batch_size=32, device="cpu"
    )
    with pytest.raises(ValueError, match="rows but the image batch has"):
        vae.counterfactual(x[:5], pa[:4], pa[:5])
    with pytest.raises(ValueError, match="parent_dim=2"):
        vae.counterfactual(x[:5], pa[:5, :1], pa[:5])
    with pytest.raises(ValueError, match="outside the parent range"):
        vae.counterfactual(x[:5], pa[:5], pa[:5] + 3.0)
    # forcing extrapolation is possible, explicitly
    assert vae.counterfactual(x[:5], pa[:5], pa[:5] + 3.0, check_range=False).shape == (5, *SHAPE)
    with pytest.raises(ValueError, match=r"\(n, C, H, W\)"):
        vae.counterfactual(x[0], pa[:1], pa[:1])
    with pytest.raises(ValueError, match="image shape"):
        vae.counterfactual(np.zeros((2, 1, 8, 8), np.float32), pa[:2], pa[:2])
    with pytest.raises(ValueError, match="NaN"):
        vae.fit(np.full_like(x, np.nan), pa, epochs=1)
    with pytest.raises(TypeError, match="numpy array or a torch tensor"):
        vae.abduct([[1.0]], pa[:1])
    with pytest.raises(ValueError, match="likelihood"):
        ConditionalVAE(SHAPE, 2, likelihood="poisson")
    with pytest.raises(ValueError, match="indices"):
        vae.fit(x, pa, epochs=1, indices=[0, 500])
    hv = HierarchicalConditionalVAE(SHAPE, 2, levels=3, latent_dim=3, width=8, hidden=16, seed=0)
    with pytest.raises(ValueError, match="abduct_levels"):
        hv.counterfactual(x[:2], pa[:2], pa[:2], abduct_levels=4)
    with pytest.raises(ValueError, match="eps must have shape"):
        hv.counterfactual(x[:2], pa[:2], pa[:2], eps=np.zeros((2, 3), np.float32))
    gan = ConditionalGAN(SHAPE, 2, width=8, hidden=16, seed=0)
    with pytest.raises(ValueError, match="partition"):
        gan.fit(x, pa, epochs=1, parent_groups=[[0]])


def test_hvae_partial_abduction_knob(data):
    x, pa = data
    hv = HierarchicalConditionalVAE(SHAPE, 2, levels=3, latent_dim=3, width=8, hidden=16, seed=0).fit(
        x, pa, epochs=2, batch_size=32, device="cpu"
    )
    eps = hv.sample_noise(6, seed=0)
    full = hv.counterfactual(x[:6], pa[:6], pa[:6], eps=eps)
    z = hv.abduct(x[:6], pa[:6], eps)
    # full abduction = decoding the abducted latents of every level
    np.testing.assert_allclose(full, hv.decode(z, pa[:6]), atol=1e-6)
    # k = 0 ignores x entirely: two different images with the same parents and noise give the same output
    a = hv.counterfactual(x[:6], pa[:6], pa[:6], eps=eps, abduct_levels=0)
    b = hv.counterfactual(x[6:12], pa[:6], pa[:6], eps=eps, abduct_levels=0)
    np.testing.assert_allclose(a, b, atol=1e-6)
    # temperature 0 with k = 0 is the prior mean path: independent of eps
    c = hv.counterfactual(x[:6], pa[:6], pa[:6], eps=hv.sample_noise(6, seed=9), abduct_levels=0, temperature=0.0)
    d = hv.counterfactual(x[:6], pa[:6], pa[:6], eps=eps, abduct_levels=0, temperature=0.0)
    np.testing.assert_allclose(c, d, atol=1e-6)
    assert hv.elbo(x[:6], pa[:6], per_level=True).shape == (6, 3)


def test_gan_counterfactual_is_decode_of_abduct(data):
    x, pa = data
    gan = ConditionalGAN(SHAPE, 2, width=8, hidden=16, seed=0).fit(
        x, pa, steps=3, batch_size=32, device="cpu", target_indices=np.arange(50)
    )
    u = gan.abduct(x[:4], pa[:4])
    assert u.shape == (4, gan.code_dim)
    np.testing.assert_allclose(gan.decode(u, pa[4:8]), gan.counterfactual(x[:4], pa[:4], pa[4:8]), atol=1e-6)
    assert {"critic", "generator", "composition_l2"} <= set(gan.history_[-1])


def test_device_selection_prefers_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert get_device("auto").type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert get_device("auto").type == "cpu"
    with pytest.raises(ValueError, match="CUDA"):
        get_device("cuda")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_training_step_on_cuda(data):  # pragma: no cover - CPU CI
    x, pa = data
    vae = ConditionalVAE(SHAPE, 2, latent_dim=4, width=8, hidden=16, seed=0).fit(x, pa, steps=2, device="auto")
    assert vae.device.type == "cuda"


def test_oracles_learn_and_score():
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    x = np.zeros((200, 1, 8, 8), np.float32)
    x[y == 1, :, :4] = 1.0  # class 1: top half bright
    x[y == 0, :, 4:] = 1.0
    cnn = CNNOracle((1, 8, 8), "classification", 2, width=8, hidden=16, seed=0).fit(
        x, y, steps=60, batch_size=32, device="cpu", max_shift=0.0
    )
    assert cnn.score(x, y).mean() > 0.95
    lin = LinearOracle("classification", 2).fit(x, y)
    assert lin.score(x, y).mean() == 1.0
    hue = rng.random(200)
    img = np.broadcast_to(hue[:, None, None, None] * np.ones((1, 1, 8, 8)), (200, 1, 8, 8)).astype(np.float32)
    circ = LinearOracle("circular").fit(np.concatenate([np.cos(2 * np.pi * img), np.sin(2 * np.pi * img)], 1), hue)
    assert circ.score(np.concatenate([np.cos(2 * np.pi * img), np.sin(2 * np.pi * img)], 1), hue).max() < 0.05
    with pytest.raises(ValueError, match="integer labels in 0..1"):
        cnn.fit(x, y + 5, steps=1)
    with pytest.raises(ValueError, match="one target per image"):
        lin.fit(x, y[:10])
    with pytest.raises(ValueError, match="not fitted"):
        LinearOracle("regression").predict(x)


def test_score_predictions_circular():
    np.testing.assert_allclose(score_predictions(np.array([0.95, 0.1]), np.array([0.05, 0.6]), "circular"), [0.1, 0.5])
    np.testing.assert_allclose(score_predictions(np.array([0.95]), np.array([0.05]), "regression"), [0.9])
    np.testing.assert_array_equal(score_predictions(np.array([1, 2]), np.array([1, 3]), "classification"), [1.0, 0.0])


def test_hvae_generate_needs_the_latents_of_the_kept_levels():
    hv = HierarchicalConditionalVAE(SHAPE, 2, levels=3, latent_dim=3, width=8, hidden=16, seed=0)
    pa = torch.zeros(2, 2)
    assert hv.generate(pa, None, 0, 1.0, None, 2).shape == (2, *SHAPE)  # k = 0: every level from the prior
    with pytest.raises(ValueError, match="z_fixed is needed"):
        hv.generate(pa, None, 1, 1.0, None, 2)
