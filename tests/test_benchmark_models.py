"""Image mechanisms of the benchmark: learned-scale VAE, HVAE / GAN wrappers, fine-tuning procedures."""

import numpy as np
import pytest
import torch

from cflib.data.smileyfaces import make_smileyfaces
from cflib.models.gan import ConditionalGAN
from cflib.models.hvae import HierarchicalConditionalVAE
from cflib.models.image_mechanisms import (
    FIXED_SIGMA_VARIANCE,
    DeepImageMechanism,
    ImageNoise,
    LearnedScaleVAE,
    counterfactual_finetune,
    finetune_encoder,
)
from cflib.models.oracles import CNNOracle
from cflib.scm.deep import DeepSCM, RootMechanism


@pytest.fixture(scope="module")
def faces():
    return make_smileyfaces(160, 16, p_glasses=0.3, seed=0)


def _enc(pa):
    return np.column_stack([np.asarray(pa["s"], np.float32), np.asarray(pa["e"], np.float32)])


def test_learned_scale_vae_likelihood_is_gaussian():
    vae = LearnedScaleVAE((1, 8, 8), 2, width=4, hidden=8, seed=0)
    raw = torch.zeros(2, 2, 8, 8)
    raw[:, 1] = np.log(0.5)  # sigma = 0.5 on the [-1, 1] scale
    x = torch.full((2, 1, 8, 8), 0.75)  # 0.5 on the [-1, 1] scale: z = 1
    ll = vae.log_likelihood(raw, x)
    expected = 64 * (-0.5 * 1.0 - np.log(0.5) - 0.5 * np.log(2 * np.pi))
    np.testing.assert_allclose(ll.numpy(), expected, rtol=1e-5)
    with pytest.raises(ValueError, match="normal"):
        LearnedScaleVAE((1, 8, 8), 2, likelihood="bernoulli")


def test_hvae_mechanism_sampling_and_null_cycle(faces):
    h = HierarchicalConditionalVAE(
        (3, 16, 16),
        2,
        levels=2,
        latent_dim=2,
        likelihood="normal",
        normal_variance=FIXED_SIGMA_VARIANCE,
        width=4,
        hidden=8,
        seed=0,
    )
    mech = DeepImageMechanism(h, _enc, noise_temperature=1.0, posterior_temperature=0.1)
    scm = DeepSCM(faces.graph, {"s": RootMechanism(faces.s), "e": RootMechanism(faces.e), "x": mech})
    obs = {**faces.observations()}
    chain = scm.null_cycles(obs, 1)
    assert np.abs(chain[1]["x"] - obs["x"]).max() < 1e-4  # T = 1: exact
    s = scm.sample(5, seed=0)
    assert s["x"].shape == (5, 3, 16, 16) and s["x"].min() >= 0 and s["x"].max() <= 1
    noise = mech.abduct(obs["x"][:3], {"s": obs["s"][:3], "e": obs["e"][:3]})
    assert isinstance(noise, ImageNoise) and noise.z.shape == (3, 2, 2)
    with pytest.raises(TypeError, match="ImageNoise"):
        mech.predict(np.zeros(3), {"s": obs["s"][:3], "e": obs["e"][:3]})


def test_gan_encoder_finetuning_reduces_the_image_cycle(faces):
    g = ConditionalGAN((3, 16, 16), 2, composition_weight=0.1, width=4, hidden=8, seed=0)
    x, pa = faces.x, faces.parents
    before = np.abs(g.counterfactual(x, pa, pa, check_range=False) - x).mean()
    frozen = [p.detach().clone() for p in g.decoder.parameters()]
    hist = finetune_encoder(g, x, pa, steps=40, batch_size=32, lr=3e-3, device="cpu", seed=0)
    after = np.abs(g.counterfactual(x, pa, pa, check_range=False) - x).mean()
    assert after < before and len(hist) == 40
    for p, q in zip(g.decoder.parameters(), frozen, strict=False):
        assert torch.equal(p, q)  # the generator is frozen
    mech = DeepImageMechanism(g, _enc)
    with pytest.raises(ValueError, match="no latent prior"):
        mech.sample_noise(3)
    with pytest.raises(ValueError, match="pa must have shape"):
        finetune_encoder(g, x, pa[:, :1], steps=1)


def test_counterfactual_finetune_runs_the_lagrangian(faces):
    h = HierarchicalConditionalVAE(
        (3, 16, 16),
        2,
        levels=2,
        latent_dim=2,
        beta=5.0,
        likelihood="normal",
        normal_variance=FIXED_SIGMA_VARIANCE,
        width=4,
        hidden=8,
        seed=0,
    )
    h.fit(faces.x, faces.parents, epochs=1, batch_size=64, device="cpu", show_progress=False)
    clfs = {c: CNNOracle((3, 16, 16), kind="classification", n_classes=2, width=4, hidden=8, seed=c) for c in (0, 1)}
    hist = counterfactual_finetune(h, faces.x, faces.parents, clfs, steps=6, batch_size=16, device="cpu", seed=0)
    assert len(hist["cf_loss"]) == 6 and min(hist["lambda"]) >= 0
    assert all(np.isfinite(hist["nelbo"]))
    with pytest.raises(ValueError, match="binary"):
        counterfactual_finetune(h, faces.x, faces.parents + 0.5, clfs, steps=1)
    with pytest.raises(TypeError, match="HierarchicalConditionalVAE"):
        counterfactual_finetune(object(), faces.x, faces.parents, clfs)


def test_projection_critic_gan_saves_loads_and_averages_weights(faces, tmp_path):
    x, pa = faces.x, faces.parents
    kw = {"steps": 6, "batch_size": 32, "device": "cpu", "seed": 0, "loss": "hinge"}
    last = ConditionalGAN((3, 16, 16), 2, width=4, hidden=8, seed=0, critic="projection").fit(
        x, pa, aux_weight=1.0, **kw
    )
    avg = ConditionalGAN((3, 16, 16), 2, width=4, hidden=8, seed=0, critic="projection").fit(
        x, pa, aux_weight=1.0, ema=0.9, **kw
    )
    # The same training run: the critic is the same, the generator kept is the average, not the last iterate.
    assert all(
        torch.equal(p, q)
        for p, q in zip(last.critic_features.parameters(), avg.critic_features.parameters(), strict=True)
    )
    assert not torch.equal(last.decoder.up[0].weight, avg.decoder.up[0].weight)
    assert {"critic", "generator", "composition_l2"} <= set(avg.history_[-1])
    # spectral normalisation: every critic layer has largest singular value about 1 after the power iterations
    w = avg.critic_head.weight
    assert float(torch.linalg.matrix_norm(w.detach(), ord=2)) == pytest.approx(1.0, abs=0.05)
    avg.finetune_history_ = [0.5, 0.25]
    loaded = ConditionalGAN.load(avg.save(tmp_path / "g.pt"))
    np.testing.assert_allclose(
        loaded.counterfactual(x[:4], pa[:4], pa[4:8]), avg.counterfactual(x[:4], pa[:4], pa[4:8]), atol=1e-6
    )
    assert loaded.critic_kind == "projection" and loaded.finetune_history_ == [0.5, 0.25]
    with pytest.raises(ValueError, match="aux_weight"):
        ConditionalGAN((3, 16, 16), 2, width=4, hidden=8, seed=0).fit(x, pa, aux_weight=1.0, **kw)
    with pytest.raises(ValueError, match="critic must be"):
        ConditionalGAN((3, 16, 16), 2, critic="wasserstein")
    with pytest.raises(ValueError, match="loss must be"):
        last.fit(x, pa, steps=1, loss="wgan")
    with pytest.raises(ValueError, match="ema"):
        last.fit(x, pa, steps=1, ema=1.0)


def test_learned_scale_vae_scale_stays_under_its_ceiling():
    vae = LearnedScaleVAE((1, 8, 8), 2, width=4, hidden=8, seed=0, max_log_scale=-2.5)
    raw = torch.zeros(3, 2, 8, 8)
    raw[:, 1] = 4.0  # a decoder asking for a huge scale
    _, log_s = vae._split_raw(raw)
    assert float(log_s.max()) == pytest.approx(-2.5)
    scale = vae.decode_scale(np.zeros((3, vae.latent_dim), np.float32), np.zeros((3, 2), np.float32))
    assert scale.max() <= np.exp(-2.5) / 2 + 1e-7  # on the [0, 1] scale
    with pytest.raises(ValueError, match="min_log_scale must be below"):
        LearnedScaleVAE((1, 8, 8), 2, min_log_scale=-1.0, max_log_scale=-2.0)
