"""Tests of the latent diffusion model, the MINE disentangler and the CNN zoo (Ma et al. Sec. 3, 6.3)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from cflib.data.toy_cxr import toy_cxr
from cflib.experiments.invariance import train_zoo
from cflib.models.cnn_zoo import SmallCNN
from cflib.models.diffusion import (
    LatentDiffusion,
    LDMConfig,
    fit_cldm_pair,
    fit_latent_diffusion,
    independence_weights,
)
from cflib.models.mine import MINEDisentangler, dv_bound, estimate_mi

torch.set_num_threads(1)  # the shared CI machine has 2 cores: avoid thread oversubscription

TINY = LDMConfig(size=16, vae_channels=(8, 8), unet_channels=(16, 16), latent_channels=2, num_train_timesteps=100)


@pytest.fixture(scope="module")
def data():
    return toy_cxr(96, size=16, seed=0)


@pytest.fixture(scope="module")
def ldm(data):
    torch.set_num_threads(1)
    return LatentDiffusion(TINY, seed=0).fit(
        data.images, data.A, vae_epochs=1, diffusion_epochs=1, batch_size=32, device="cpu", seed=0
    )


def test_ddim_move_matches_diffusers_forward_process_and_is_invertible(ldm):
    gen = torch.Generator().manual_seed(0)
    z0 = torch.randn(4, 2, 8, 8, generator=gen)
    eps = torch.randn(4, 2, 8, 8, generator=gen)
    t = 37
    # from the clean latent, a DDIM move with the true noise is exactly q(z_t | z_0) of diffusers
    zt = ldm._ddim_move(z0, eps, -1, t)
    np.testing.assert_allclose(zt, ldm.ddpm.add_noise(z0, eps, torch.full((4,), t)), atol=1e-5)
    # and moving back with the same noise returns the start: abduction then prediction is exact
    np.testing.assert_allclose(ldm._ddim_move(zt, eps, t, -1), z0, atol=1e-4)
    z50 = ldm._ddim_move(zt, eps, t, 50)
    np.testing.assert_allclose(ldm._ddim_move(z50, eps, 50, t), zt, atol=1e-4)


def test_shapes_ranges_and_latent_scale(ldm, data):
    z = ldm.encode(data.images[:5])
    assert z.shape == (5, 2, 8, 8)
    x = ldm.decode(z)
    assert x.shape == (5, 16, 16) and x.min() >= 0 and x.max() <= 1
    # latents are scaled to unit variance on the training data
    assert 0.5 < ldm.encode(data.images).std() < 2.0
    cf = ldm.counterfactual(data.images[:3], data.A[:3], 1, t_star=50, steps=5)
    assert cf.shape == (3, 16, 16)
    s = ldm.sample([0, 1, 2], steps=4, guidance=2.0, seed=0)
    assert s.shape == (3, 16, 16)
    assert len(ldm.history["vae"]) == 3 and len(ldm.history["diffusion"]) == 3


def test_inversion_then_denoising_under_the_same_label_comes_back(ldm, data):
    # DDIM inversion approximates eps(z_t, t) by eps(z_prev, prev); at a low noise level the round
    # trip returns close to the autoencoder's reconstruction even for a barely trained network.
    x = data.images[:4]
    zt = ldm.invert(x, data.A[:4], t_star=30, steps=3)
    assert zt.shape == (4, 2, 8, 8)
    back = ldm.denoise(zt, data.A[:4], t_star=30, steps=3)
    assert np.abs(back - ldm.reconstruct(x)).mean() < 0.02
    # the inverted latent is noisier than the clean one: it moved along the forward process
    assert np.linalg.norm(zt - ldm.encode(x)) > 0


def test_seeded_and_deterministic(ldm, data):
    np.testing.assert_array_equal(ldm.sample([0, 1], steps=3, seed=4), ldm.sample([0, 1], steps=3, seed=4))
    a = ldm.counterfactual(data.images[:2], data.A[:2], 2, t_star=40, steps=4)
    b = ldm.counterfactual(data.images[:2], data.A[:2], 2, t_star=40, steps=4)
    np.testing.assert_array_equal(a, b)
    other = LatentDiffusion(TINY, seed=0).fit(
        data.images, data.A, vae_epochs=1, diffusion_epochs=1, batch_size=32, device="cpu", seed=0
    )
    np.testing.assert_allclose(other.encode(data.images[:3]), ldm.encode(data.images[:3]), atol=1e-5)


def test_counterfactuals_of_the_same_images_share_one_abduction_and_equal_fresh_ones(data):
    model = LatentDiffusion(TINY, seed=0).fit(
        data.images, data.A, vae_epochs=1, diffusion_epochs=1, batch_size=32, device="cpu", seed=0
    )
    x, A = data.images[:6], data.A[:6]
    kw = {"t_star": 40, "steps": 4, "guidance": 2.0}

    def fresh(a_new, images=x, labels=A):
        model._last_abduction = None  # no remembered inversion: abduction computed anew
        return model.counterfactual(images, labels, a_new, **kw)

    expected = [fresh(a) for a in range(3)]
    model._last_abduction = None
    calls = []
    invert = model._invert_latent
    model._invert_latent = lambda *args: calls.append(1) or invert(*args)
    try:
        got = [model.counterfactual(x, A, a, **kw) for a in range(3)]
        assert len(calls) == 1  # one inversion for the three targets
        for g, e in zip(got, expected, strict=True):
            np.testing.assert_array_equal(g, e)  # bit-identical to an abduction computed for each target
        # other images, other factual labels or another noise level are inverted again
        model.counterfactual(x[:5], A[:5], 1, **kw)
        model.counterfactual(x, (A + 1) % 3, 1, **kw)
        model.counterfactual(x, A, 1, t_star=30, steps=4)
        assert len(calls) == 4
        # new weights (in place, as an optimiser or load_state_dict writes them) forget the inversion
        with torch.no_grad():
            next(model.unet.parameters()).add_(0.01)
        after = model.counterfactual(x, A, 2, **kw)
        assert len(calls) == 5
        # invert() shares the remembered inversion and hands out a copy: writing into it changes nothing
        zt = model.invert(x, A, t_star=40, steps=4)
        zt += 1.0
        assert len(calls) == 5
        np.testing.assert_array_equal(model.counterfactual(x, A, 2, **kw), after)
        # another UNet whose weights have the same update counters is another model: inverted again
        trained = model.unet
        first, second = copy.deepcopy(trained), copy.deepcopy(trained)
        for p in second.parameters():
            p.data.add_(0.01)  # through .data: new values, the same counters as the first copy's
        model.unet = first
        model.counterfactual(x, A, 2, **kw)
        model.unet = second
        other = model.counterfactual(x, A, 2, **kw)
        assert len(calls) == 7
    finally:
        model._invert_latent = invert
    np.testing.assert_array_equal(other, fresh(2))
    model.unet = trained
    np.testing.assert_array_equal(after, fresh(2))
    assert not np.array_equal(after, expected[2])


def test_save_load_roundtrip(ldm, data, tmp_path):
    path = ldm.save(tmp_path / "m.pt")
    back = LatentDiffusion.load(path, device="cpu")
    assert back.config == ldm.config
    np.testing.assert_allclose(back.encode(data.images[:3]), ldm.encode(data.images[:3]), atol=1e-6)
    np.testing.assert_allclose(back.sample([1], steps=3, seed=1), ldm.sample([1], steps=3, seed=1), atol=1e-6)


def test_fit_latent_diffusion_reuses_the_cached_model(data, tmp_path):
    kw = {
        "config": TINY,
        "cache_dir": tmp_path,
        "seed": 0,
        "device": "cpu",
        "vae_epochs": 1,
        "diffusion_epochs": 1,
        "batch_size": 48,
    }
    m1 = fit_latent_diffusion(data.images[:48], data.A[:48], **kw)
    m2 = fit_latent_diffusion(data.images[:48], data.A[:48], **kw)
    assert m1.cache_path == m2.cache_path and m1.cache_path.exists()
    np.testing.assert_allclose(m1.encode(data.images[:2]), m2.encode(data.images[:2]), atol=1e-6)
    # the key holds what changes the weights (here the seed), not what does not (the progress bar)
    assert fit_latent_diffusion(data.images[:48], data.A[:48], **{**kw, "progress": False}).cache_path == m1.cache_path
    assert fit_latent_diffusion(data.images[:48], data.A[:48], **{**kw, "seed": 1}).cache_path != m1.cache_path


def test_bad_input(ldm, data):
    with pytest.raises(ValueError, match="16x16"):
        ldm.counterfactual(toy_cxr(2, size=32, seed=0).images, [0, 0], 1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        ldm.encode(data.images[:2] * 2 - 1.5)
    with pytest.raises(ValueError, match="unknown attribute value 5"):
        ldm.counterfactual(data.images[:2], data.A[:2], 5)
    with pytest.raises(ValueError, match="one per image"):
        ldm.counterfactual(data.images[:2], [0, 1, 2], 1)
    with pytest.raises(ValueError, match="t_star"):
        ldm.invert(data.images[:2], data.A[:2], t_star=1000)
    with pytest.raises(ValueError, match="unknown LDMConfig fields"):
        LatentDiffusion(TINY, bogus=1)
    with pytest.raises(ValueError, match="latents must have shape"):
        ldm.decode(np.zeros((1, 3, 3, 3)))
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="CUDA"):
            LatentDiffusion(TINY).fit(data.images, data.A, vae_epochs=0, diffusion_epochs=0, device="cuda")


def test_independence_weights_make_the_weighted_joint_the_product_of_marginals():
    d = toy_cxr(2000, size=16, seed=5)
    w = independence_weights(d.A, d.D)
    assert w.shape == (d.n,) and w.mean() == pytest.approx(1.0)
    # weighted P(A = a, effusion = 1) equals weighted P(A = a) * weighted P(effusion = 1), exactly
    for k in range(3):
        for a in range(3):
            joint = np.sum(w * (a == d.A) * d.D[:, k]) / w.sum()
            prod = (np.sum(w * (a == d.A)) / w.sum()) * (np.sum(w * d.D[:, k]) / w.sum())
            assert joint == pytest.approx(prod, abs=1e-12)
    # and the marginal of A is untouched
    np.testing.assert_allclose(np.bincount(d.A, weights=w) / w.sum(), np.bincount(d.A) / d.n, atol=1e-12)
    # already independent parents get unit weights
    a = np.repeat([0, 1], 4)
    c = np.tile([0, 1], 4)
    np.testing.assert_allclose(independence_weights(a, c), 1.0)
    with pytest.raises(ValueError, match="same n"):
        independence_weights(a, c[:3])


@pytest.fixture(scope="module")
def ldm_aux(data):
    torch.set_num_threads(1)
    cfg = LDMConfig(**{**TINY.__dict__, "aux_classes": (2, 2, 2)})
    w = independence_weights(data.A, data.D)
    return LatentDiffusion(cfg, seed=0).fit(
        data.images,
        data.A,
        aux=data.D,
        sample_weight=w,
        vae_epochs=1,
        diffusion_epochs=1,
        batch_size=32,
        device="cpu",
        seed=0,
    )


def test_auxiliary_parents_condition_the_model(ldm_aux, data):
    x, a, d = data.images[:4], data.A[:4], data.D[:4]
    cf = ldm_aux.counterfactual(x, a, 1, aux=d, t_star=30, steps=3, guidance=2.0)
    assert cf.shape == (4, 16, 16)
    # the auxiliary parents enter the network: other disease labels give other counterfactuals
    other = ldm_aux.counterfactual(x, a, 1, aux=1 - d, t_star=30, steps=3, guidance=2.0)
    assert np.abs(cf - other).max() > 0
    # abduction then prediction under the same (a, c) comes back close to the reconstruction
    back = ldm_aux.denoise(ldm_aux.invert(x, a, aux=d, t_star=30, steps=3), a, aux=d, t_star=30, steps=3)
    assert np.abs(back - ldm_aux.reconstruct(x)).mean() < 0.02
    # compositional guidance on the parents changes the prediction; at 1 it is the plain guided model
    stronger = ldm_aux.counterfactual(x, a, 1, aux=d, t_star=30, steps=3, guidance=2.0, aux_guidance=3.0)
    assert np.abs(stronger - cf).max() > 0
    np.testing.assert_array_equal(
        ldm_aux.counterfactual(x, a, 1, aux=d, t_star=30, steps=3, guidance=2.0, aux_guidance=1.0), cf
    )
    # sampling may leave the parents unspecified (their null labels)
    assert ldm_aux.sample([0, 2], steps=3, seed=0).shape == (2, 16, 16)
    assert ldm_aux.sample([0, 2], aux=d[:2], steps=3, seed=0).shape == (2, 16, 16)


def test_cldm_pair_shares_one_autoencoder(data, tmp_path):
    kw = {
        "config": TINY,
        "cache_dir": tmp_path,
        "device": "cpu",
        "vae_epochs": 1,
        "diffusion_epochs": 1,
        "batch_size": 48,
    }
    pair = fit_cldm_pair(data.images[:48], data.A[:48], data.D[:48], **kw)
    ours, paper = pair["CLDM+D"], pair["CLDM"]
    assert ours.config.aux_classes == (2, 2, 2) and paper.config.aux_classes == ()
    assert len(ours.history["vae"]) == 1 and paper.history["vae"] == []  # the autoencoder is trained once
    np.testing.assert_allclose(paper.encode(data.images[:3]), ours.encode(data.images[:3]), atol=1e-6)
    again = fit_cldm_pair(data.images[:48], data.A[:48], data.D[:48], **kw)
    assert [m.cache_path for m in again.values()] == [m.cache_path for m in pair.values()]
    with pytest.raises(ValueError, match="autoencoders differ"):
        LatentDiffusion(LDMConfig(size=16, vae_channels=(8, 16), latent_channels=2)).copy_autoencoder(ours)


def test_auxiliary_parents_bad_input(ldm_aux, ldm, data):
    x, a, d = data.images[:3], data.A[:3], data.D[:3]
    with pytest.raises(ValueError, match="aux is required"):
        ldm_aux.counterfactual(x, a, 1)
    with pytest.raises(ValueError, match=r"shape \(3, 3\)"):
        ldm_aux.counterfactual(x, a, 1, aux=d[:, :2])
    with pytest.raises(ValueError, match="column 1 has unknown value 2"):
        ldm_aux.counterfactual(x, a, 1, aux=d + np.array([0, 2, 0]))
    with pytest.raises(ValueError, match="no auxiliary parents"):
        ldm.counterfactual(x, a, 1, aux=d)
    with pytest.raises(ValueError, match="aux_guidance needs auxiliary parents"):
        ldm.counterfactual(x, a, 1, aux_guidance=2.0)
    with pytest.raises(ValueError, match="aux_classes"):
        LDMConfig(aux_classes=(1,))
    with pytest.raises(ValueError, match="sample_weight"):
        LatentDiffusion(TINY).fit(
            data.images, data.A, sample_weight=-np.ones(data.n), vae_epochs=0, diffusion_epochs=1, device="cpu"
        )


# ----------------------------------------------------------------------------- MINE
def test_dv_bound_closed_form():
    tj = torch.tensor([1.0, 2.0, 3.0])
    tm = torch.tensor([0.0, np.log(3.0)])
    # mean(tj) - log(mean(exp(tm))) = 2 - log(2)
    assert float(dv_bound(tj, tm)) == pytest.approx(2 - np.log(2.0), abs=1e-6)
    # a constant critic gives exactly zero information
    assert float(dv_bound(torch.full((5,), 0.7), torch.full((7,), 0.7))) == pytest.approx(0.0, abs=1e-6)


def test_estimate_mi_separates_dependence_from_independence():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 400)
    z_ind = rng.normal(size=(400, 2, 4, 4)).astype(np.float32)
    z_dep = z_ind + 2.0 * a[:, None, None, None]
    dep = estimate_mi(z_dep, a, 2, steps=150, device="cpu", seed=0, hidden=8)
    ind = estimate_mi(z_ind, a, 2, steps=150, device="cpu", seed=0, hidden=8)
    assert dep.statistic > 0.3 and dep.pvalue <= 0.05
    assert dep.statistic <= dep.upper + 0.05  # a lower bound on I <= H(A) = log 2
    assert ind.statistic < 0.1
    assert list(dep.summary().columns)[0].startswith("MI lower bound")


def test_disentangler_moves_by_exactly_lambda_and_trains():
    rng = np.random.default_rng(1)
    a = rng.integers(0, 3, 128)
    z = (rng.normal(size=(128, 2, 4, 4)) + a[:, None, None, None]).astype(np.float32)
    dis = MINEDisentangler((2, 4, 4), 3, lam=0.25, hidden=4, seed=0).fit(z, a, steps=3, critic_steps=2, device="cpu")
    moved = np.linalg.norm((dis.transform(z) - z).reshape(128, -1), axis=1)
    np.testing.assert_allclose(moved, 0.25, rtol=1e-4)
    assert len(dis.history["critic_bound"]) == 6 and len(dis.history["perturbation_bound"]) == 3
    with pytest.raises(ValueError, match="latent shape"):
        dis.fit(z[:, :1], a)
    with pytest.raises(ValueError, match="integer labels"):
        dis.fit(z, a + 3)


# ----------------------------------------------------------------------------- zoo
def test_small_cnn_learns_the_trace_and_the_zoo_is_graded():
    torch.set_num_threads(1)
    d = toy_cxr(600, size=16, seed=2)
    clf = SmallCNN("cnn-s", 16, 3, seed=0).fit(d.images, d.A, epochs=10, device="cpu")
    test = toy_cxr(200, size=16, seed=3)
    assert (clf.predict(test.images) == test.A).mean() > 0.8  # the trace is visible
    assert clf.predict_proba(test.images).shape == (200, 3)
    assert clf.embed(test.images).shape[0] == 200
    zoo = train_zoo(d, diseases=["cardiomegaly"], archs=["cnn-s"], rhos=[0.0, 1.0], epochs=6, device="cpu")
    flip = []
    for m in zoo:
        pred = m.predict(test.images)
        flip.append(np.mean([(m.predict(test.counterfactual(a)) != pred).mean() for a in range(3)]))
    assert flip[1] > flip[0]  # the shortcut-trained member reacts more to do(A)
    with pytest.raises(ValueError, match="arch"):
        SmallCNN("resnet")
    with pytest.raises(ValueError, match="labels"):
        SmallCNN("cnn-s", 16, 1).fit(d.images, np.full(600, 3))


def test_small_cnn_and_mine_save_load_roundtrip(tmp_path):
    import torch

    from cflib.models.cnn_zoo import SmallCNN
    from cflib.models.mine import MINEDisentangler

    cnn = SmallCNN("cnn-m", 32, 1, seed=1).eval()
    back = SmallCNN.load(cnn.save(tmp_path / "cnn.pt"), device="cpu")
    x = torch.rand(3, 1, 32, 32)
    assert torch.equal(cnn(x), back(x))
    phi = MINEDisentangler((4, 8, 8), 3, lam=0.01, hidden=8, seed=2).eval()
    phi2 = MINEDisentangler.load(phi.save(tmp_path / "phi.pt"), device="cpu")
    assert (phi2.latent_shape, phi2.n_classes, phi2.lam) == (phi.latent_shape, phi.n_classes, phi.lam)
    for (k, v), (k2, v2) in zip(phi.state_dict().items(), phi2.state_dict().items(), strict=True):
        assert k == k2 and torch.equal(v, v2)
