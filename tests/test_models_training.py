"""The shared trainer of cflib.models, the grey-image check, and the model cache of cflib.runtime.

The "reference" loops below are the hand-written training loops the models had before they moved to
``cflib.models._train.train``; each test trains a model a few steps both ways from the same seeds and
requires bit-identical weights, so the book's numbers cannot move through the trainer.
"""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time

import numpy as np
import pytest
import torch
from torch import nn

from cflib import runtime
from cflib.data.toy_cxr import check_images as toy_check_images
from cflib.data.toy_cxr import toy_cxr
from cflib.models._train import (
    check_grey_images,
    optimizer_step,
    random_batches,
    run_steps,
    shuffled_batches,
    train,
)
from cflib.models.classifier import ImageClassifier, check_target
from cflib.models.cnn_zoo import SmallCNN
from cflib.models.diffusion import LatentDiffusion, LDMConfig, independence_weights
from cflib.models.mine import MINEDisentangler, dv_bound
from cflib.models.oracles import CNNOracle
from cflib.models.tabular import TabularClassifier, _build

torch.set_num_threads(1)

TINY = LDMConfig(size=16, vae_channels=(8, 8), unet_channels=(16, 16), latent_channels=2, num_train_timesteps=100)


@pytest.fixture(scope="module")
def data():
    return toy_cxr(100, size=16, seed=0)


def _assert_same_weights(a: nn.Module, b: nn.Module) -> None:
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys()
    for k in sa:
        assert torch.equal(sa[k], sb[k]), f"weights {k} differ"


# ----------------------------------------------------------------------------- samplers and loop
def test_shuffled_batches_are_permutations_drawn_lazily_per_epoch():
    gen = torch.Generator().manual_seed(0)
    it = shuffled_batches(10, 4, gen)
    epoch = [next(it) for _ in range(3)]
    assert [len(b) for b in epoch] == [4, 4, 2]
    assert sorted(torch.cat(epoch).tolist()) == list(range(10))
    # the next epoch's permutation is drawn only when its first batch is asked for: a step that draws
    # from the same generator in between sees the same stream as in a hand-written epoch loop
    ref = torch.Generator().manual_seed(0)
    first = torch.randperm(10, generator=ref)
    between = torch.rand(1, generator=ref)
    second = torch.randperm(10, generator=ref)
    gen = torch.Generator().manual_seed(0)
    it = shuffled_batches(10, 10, gen)
    assert torch.equal(next(it), first)
    assert torch.equal(torch.rand(1, generator=gen), between)
    assert torch.equal(next(it), second)
    # indices with repeats and weights: draws come from the pool only, in proportion to the weights
    pool = torch.tensor([3, 3, 7])
    w = torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)
    b = next(shuffled_batches(10, 3, torch.Generator().manual_seed(1), indices=pool, weights=w))
    assert b.tolist() == [3, 3, 3]


def test_random_batches_draw_each_step_in_order():
    gen = torch.Generator().manual_seed(2)
    step = next(random_batches(50, 8, gen, per_step=3))
    ref = torch.Generator().manual_seed(2)
    assert len(step) == 3
    for b in step:
        assert torch.equal(b, torch.randint(0, 50, (8,), generator=ref))


def test_train_history_scheduler_and_step_count():
    calls = []

    def step(b):
        calls.append(len(b))
        return {"loss": float(len(calls))}

    class Counter:
        n = 0

        def step(self):
            Counter.n += 1

    # 10 rows, batches of 4: epochs of 3 steps (4, 4, 2 rows); 7 steps end mid-epoch
    hist = train(
        step,
        shuffled_batches(10, 4, torch.Generator().manual_seed(0)),
        7,
        per_epoch=3,
        scheduler=Counter(),
        progress=False,
    )
    assert calls == [4, 4, 2, 4, 4, 2, 4] and Counter.n == 7
    assert [h["step"] for h in hist] == [3, 6, 7]
    # batch-size-weighted mean of the losses of each epoch
    assert hist[0]["loss"] == pytest.approx((1 * 4 + 2 * 4 + 3 * 2) / 10)
    assert hist[2]["loss"] == pytest.approx(7.0)
    per_step = train(lambda b: {"v": 1.5}, iter([[0]] * 3), 3, progress=False)
    assert per_step == [{"step": 1, "v": 1.5}, {"step": 2, "v": 1.5}, {"step": 3, "v": 1.5}]
    assert train(step, iter(()), 0, progress=False) == []
    with pytest.raises(ValueError, match="total"):
        train(step, iter(()), -1)
    with pytest.raises(ValueError, match="per_epoch"):
        train(step, iter(()), 1, per_epoch=0)


def test_optimizer_step_clears_clips_and_steps():
    w = nn.Parameter(torch.tensor([3.0, 4.0]))
    opt = torch.optim.SGD([w], lr=1.0)
    w.grad = torch.full((2,), 100.0)  # stale gradient: must be cleared, not accumulated
    value = optimizer_step(opt, (w**2).sum(), clip=1.0)  # gradient (6, 8), norm 10, clipped to norm 1
    assert value == pytest.approx(25.0)
    np.testing.assert_allclose(w.detach().numpy(), [3.0 - 0.6, 4.0 - 0.8], rtol=1e-5)


# ----------------------------------------------------------------------------- bit-identity with the old loops
def test_small_cnn_trains_exactly_as_its_previous_loop(data):
    y = data.D[:, 0]
    new = SmallCNN("cnn-s", 16, 1, seed=1).fit(
        data.images, y, epochs=2, batch_size=32, device="cpu", seed=2, progress=False
    )
    ref = SmallCNN("cnn-s", 16, 1, seed=1)
    x = torch.from_numpy(data.images[:, None] * 2.0 - 1.0)
    yt = torch.from_numpy(y.astype(np.int64))
    gen = torch.Generator().manual_seed(2)
    opt = torch.optim.Adam(ref.parameters(), lr=2e-3, weight_decay=1e-4)
    ref.train()
    for _ in range(2):
        perm = torch.randperm(len(x), generator=gen)
        for i in range(0, len(x), 32):
            idx = perm[i : i + 32]
            loss = nn.functional.binary_cross_entropy_with_logits(ref(x[idx])[:, 0], yt[idx].float())
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    _assert_same_weights(new, ref)
    assert [h["step"] for h in new.history_] == [4, 8]


def test_mine_trains_exactly_as_its_previous_loop(data):
    z = torch.randn(100, 2, 4, 4, generator=torch.Generator().manual_seed(0)).numpy()
    new = MINEDisentangler((2, 4, 4), 3, hidden=4, seed=6).fit(
        z, data.A, steps=3, batch_size=16, critic_steps=2, device="cpu", seed=7, progress=False
    )
    ref = MINEDisentangler((2, 4, 4), 3, hidden=4, seed=6)
    zt, at = torch.from_numpy(z), torch.from_numpy(data.A.astype(np.int64))
    gen = torch.Generator().manual_seed(7)
    opt_c = torch.optim.Adam(ref.critic.parameters(), lr=1e-4, weight_decay=1e-5)
    opt_m = torch.optim.Adam(ref.m.parameters(), lr=1e-4, weight_decay=1e-5)
    ref.train()

    def batch():
        idx = torch.randint(0, 100, (16,), generator=gen)
        shuf = torch.randint(0, 100, (16,), generator=gen)
        return zt[idx], at[idx], at[shuf]

    critic_bounds = []
    for _ in range(3):
        for _ in range(2):
            zb, ab, ash = batch()
            with torch.no_grad():
                zp = ref.phi(zb)
            bound = dv_bound(ref.critic(zp, ab), ref.critic(zp, ash))
            opt_c.zero_grad(set_to_none=True)
            (-bound).backward()
            nn.utils.clip_grad_norm_(ref.critic.parameters(), 1.0)
            opt_c.step()
            critic_bounds.append(float(bound.detach()))
        zb, ab, ash = batch()
        zp = ref.phi(zb)
        bound = dv_bound(ref.critic(zp, ab), ref.critic(zp, ash))
        opt_m.zero_grad(set_to_none=True)
        bound.backward()
        nn.utils.clip_grad_norm_(ref.m.parameters(), 1.0)
        opt_m.step()
    _assert_same_weights(new, ref)
    assert new.history["critic_bound"] == critic_bounds


def test_latent_diffusion_trains_exactly_as_its_previous_loops(data):
    aux = data.D
    w = independence_weights(data.A, aux)
    cfg = LDMConfig(**{**TINY.__dict__, "aux_classes": (2, 2, 2)})
    new = LatentDiffusion(cfg, seed=3).fit(
        data.images,
        data.A,
        aux=aux,
        sample_weight=w,
        vae_epochs=2,
        diffusion_epochs=2,
        batch_size=32,
        device="cpu",
        seed=4,
        progress=False,
    )
    ref = LatentDiffusion(cfg, seed=3)
    x = torch.from_numpy(data.images[:, None] * 2.0 - 1.0)
    n, bs = len(x), 32
    # stage 1: the autoencoder
    gen = ref._seed_gen(4)
    opt = torch.optim.Adam(ref.vae.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 2 * math.ceil(n / bs))
    ref.vae.train()
    for _ in range(2):
        perm = torch.randperm(n, generator=gen)
        for i in range(0, n, bs):
            xb = x[perm[i : i + bs]]
            post = ref.vae.encode(xb).latent_dist
            zz = post.mean + post.std * torch.randn(post.mean.shape, generator=gen)
            rec = ref.vae.decode(zz).sample
            loss = (rec - xb).abs().mean() + ((rec - xb) ** 2).mean() + 1e-4 * post.kl().mean() / zz[0].numel()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
    ref.vae.eval()
    with torch.no_grad():
        ref.latent_scale.fill_(float(torch.cat([ref.vae.encode(x).latent_dist.mean]).std().clamp_min(1e-3)))
    # stage 2: the conditional UNet, on independence-weighted batches
    cond = torch.cat([torch.from_numpy(data.A.astype(np.int64))[:, None], torch.from_numpy(aux.astype(np.int64))], 1)
    z0 = ref._encode_tensor(x).cpu()
    gen = ref._seed_gen(5)
    opt = torch.optim.Adam([*ref.unet.parameters(), *ref.label_embedding.parameters()], lr=1e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 2 * math.ceil(n / bs))
    nulls = torch.tensor([3, 2, 2, 2])
    ref.unet.train()
    ref.label_embedding.train()
    for _ in range(2):
        perm = torch.multinomial(torch.from_numpy(w), n, replacement=True, generator=gen)
        for i in range(0, n, bs):
            idx = perm[i : i + bs]
            zb = z0[idx]
            noise = torch.randn(zb.shape, generator=gen)
            t = torch.randint(0, 100, (zb.shape[0],), generator=gen)
            lab = cond[idx].clone()
            drop = torch.rand(zb.shape[0], 2, generator=gen) < cfg.cond_dropout
            lab[drop[:, 0], 0] = nulls[0]
            lab[drop[:, 1], 1:] = nulls[1:]
            loss = ((ref._unet(ref.ddpm.add_noise(zb, noise, t), t, lab) - noise) ** 2).mean()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
    _assert_same_weights(new, ref)
    assert len(new.history["vae"]) == len(new.history["diffusion"]) == 8


@pytest.mark.parametrize("arch", ["mlp", "transformer"])
def test_tabular_classifier_trains_exactly_as_its_previous_loop(arch):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(203, 5)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=203) > 0).astype(int)
    new = TabularClassifier(arch, width=8, epochs=2, batch_size=32).fit(X, y, seed=4, device="cpu")
    ref = TabularClassifier(arch, width=8, epochs=2, batch_size=32)
    gen = torch.Generator().manual_seed(4)
    torch.manual_seed(4)
    ref.net = _build(arch, 5, 8, 2)  # as fit builds it: after seeding torch's global generator
    xt, yt = torch.as_tensor(X), torch.as_tensor(y, dtype=torch.long)
    opt = torch.optim.Adam(ref.parameters(), lr=ref.lr, weight_decay=ref.weight_decay)
    ref.train()
    for _ in range(2):
        order = torch.randperm(203, generator=gen)
        for start in range(0, 203, 32):
            idx = order[start : start + 32]
            opt.zero_grad()
            loss = nn.functional.cross_entropy(ref(xt[idx]), yt[idx])
            loss.backward()
            opt.step()
    _assert_same_weights(new, ref)
    assert [h["step"] for h in new.history_] == [7, 14]


def test_run_steps_seeds_the_global_stream_and_averages_per_epoch():
    seen = []
    hist = run_steps(lambda b: seen.append(b) or {"loss": 1.0}, 10, 4, 2, None, 3, progress=False)
    assert len(seen) == 6 and [h["step"] for h in hist] == [3, 6]
    after = torch.rand(2)
    torch.manual_seed(3)
    assert torch.equal(after, torch.rand(2))  # the batches come from their own generator
    hist = run_steps(lambda b: {"loss": 0.0}, 10, 4, 2, 4, 0, torch.tensor([1, 1, 2]), progress=False)
    assert [h["step"] for h in hist] == [1, 2, 3, 4]  # one step per epoch of 3 rows, steps= overrides epochs


# ----------------------------------------------------------------------------- one image classifier
def test_small_cnn_and_cnn_oracle_are_one_image_classifier(data, tmp_path):
    cnn = SmallCNN("cnn-s", 16, 3, seed=0).fit(
        data.images, data.A, epochs=1, batch_size=50, device="cpu", progress=False
    )
    x3 = data.images[:, None]
    oracle = CNNOracle((1, 16, 16), "classification", 3, width=8, hidden=16, seed=0).fit(
        x3, data.A, steps=2, batch_size=50, device="cpu"
    )
    for m, x in ((cnn, data.images), (oracle, x3)):
        assert isinstance(m, ImageClassifier)
        proba = m.predict_proba(x)
        np.testing.assert_allclose(proba.sum(1), 1.0, rtol=1e-5)
        np.testing.assert_array_equal(m.predict(x), proba.argmax(1))
        np.testing.assert_array_equal(m.score(x, data.A), (m.predict(x) == data.A).astype(float))
        back = type(m).load(m.save(tmp_path / f"{type(m).__name__}.pt"), device="cpu")
        assert back.history_ == m.history_ and len(m.history_) > 0
        np.testing.assert_array_equal(back.predict_proba(x), proba)
    assert cnn.embed(data.images).shape == (100, 16)  # input of the head's last layer
    assert oracle.embed(x3).shape == (100, 16)
    binary = SmallCNN("mlp", 16, 1, seed=0).fit(data.images, data.D[:, 1], epochs=1, device="cpu", progress=False)
    p = binary.predict_proba(data.images)
    assert p.shape == (100,)
    np.testing.assert_array_equal(binary.predict(data.images), (p >= 0.5).astype(int))
    reg = CNNOracle((1, 16, 16), "regression", width=8, hidden=16, seed=0)
    with pytest.raises(ValueError, match="binary or classification"):
        reg.predict_proba(x3)


def test_check_target_by_kind():
    np.testing.assert_array_equal(check_target([0.0, 1.0, 1.0], 3, "binary"), [0, 1, 1])
    assert check_target(np.array([True, False]), 2, "binary").dtype == np.int64
    with pytest.raises(ValueError, match="integer labels in 0..2"):
        check_target([0, 3], 2, "classification", 3)
    with pytest.raises(ValueError, match="integer labels"):
        check_target([0.5, 1.0], 2, "binary")
    with pytest.raises(ValueError, match="one target per image"):
        check_target([0, 1], 3, "binary")
    with pytest.raises(ValueError, match="NaN"):
        check_target([0.1, np.nan], 2, "regression")
    with pytest.raises(ValueError, match="kind"):
        check_target([0], 1, "ordinal")


# ----------------------------------------------------------------------------- grey-image check
def test_check_grey_images_matches_the_data_check_and_names_the_problem():
    rng = np.random.default_rng(0)
    for x in (rng.random((3, 8, 8)), rng.random((2, 1, 8, 8)), np.clip(rng.random((2, 8, 8)) * 1.0005, 0, 1.0005)):
        np.testing.assert_array_equal(check_grey_images(x, 8), toy_check_images(x, 8))
        assert check_grey_images(x).dtype == np.float32
    with pytest.raises(ValueError, match="must be 16x16"):
        check_grey_images(np.zeros((1, 8, 8)), 16)
    with pytest.raises(ValueError, match="H == W"):
        check_grey_images(np.zeros((1, 8, 9)))
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        check_grey_images(np.full((1, 4, 4), -1.0))
    with pytest.raises(ValueError, match="NaN"):
        check_grey_images(np.full((1, 4, 4), np.nan), name="judge images")
    with pytest.raises(TypeError, match="numeric"):
        check_grey_images([["a"]])


# ----------------------------------------------------------------------------- the model cache
def test_fingerprint_is_canonical_and_type_aware():
    a = np.arange(6, dtype=np.int64)
    assert runtime.fingerprint({"x": a, "s": 1}) == runtime.fingerprint({"s": 1, "x": a.copy()})
    assert runtime.fingerprint(a) != runtime.fingerprint(a.astype(np.int32))
    assert runtime.fingerprint(a) != runtime.fingerprint(a.reshape(2, 3))
    assert runtime.fingerprint(torch.arange(6)) == runtime.fingerprint(a)
    assert runtime.fingerprint((1, 2)) != runtime.fingerprint([1, 2])
    assert runtime.fingerprint(1) != runtime.fingerprint(1.0) != runtime.fingerprint("1")
    assert runtime.fingerprint(TINY) != runtime.fingerprint(LDMConfig(**{**TINY.__dict__, "cond_dropout": 0.1}))
    with pytest.raises(TypeError, match="cannot hash a object"):
        runtime.fingerprint({"x": object()})


def _write(path, text, mtime):
    path.write_text(text)
    os.utime(path, (mtime, mtime))


def test_code_fingerprint_ignores_docs_and_follows_the_code_that_runs(tmp_path, monkeypatch):
    pkg = tmp_path / "fp_probe"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    helper = 'SCALE = 2\n\n\ndef helper(v):\n    """Double."""\n    return SCALE * v\n'
    model = (
        '"""Module doc."""\nimport numpy as np\n\nfrom .helper import helper\n\n\n'
        "def unrelated():\n    return 0\n\n\n"
        'class Model:\n    """A model."""\n\n    def fit(self, v):\n        # a comment\n        return helper(np.asarray(v))\n'
    )
    _write(pkg / "helper.py", helper, 1_000_000)
    _write(pkg / "model.py", model, 1_000_000)
    monkeypatch.syspath_prepend(str(tmp_path))
    from fp_probe.model import Model

    base = runtime.code_fingerprint(Model)
    _write(
        pkg / "model.py",
        model.replace('"""A model."""', '"""A model, better documented."""').replace("# a comment", "# why"),
        1_000_001,
    )
    assert runtime.code_fingerprint(Model) == base  # docstrings and comments do not count
    _write(pkg / "model.py", model.replace("return 0", "return 1"), 1_000_002)
    assert runtime.code_fingerprint(Model) == base  # nor does code the model does not use
    _write(pkg / "helper.py", helper.replace("SCALE = 2", "SCALE = 3"), 1_000_003)
    assert runtime.code_fingerprint(Model) != base  # a constant of a helper it calls does
    _write(pkg / "helper.py", helper, 1_000_004)
    assert runtime.code_fingerprint(Model) == base
    _write(pkg / "model.py", model.replace("helper(np.asarray(v))", "helper(np.asarray(v)) + 1"), 1_000_005)
    assert runtime.code_fingerprint(Model) != base
    sys.modules.pop("fp_probe.model")
    sys.modules.pop("fp_probe.helper")
    sys.modules.pop("fp_probe")
    with pytest.raises(TypeError, match="functions and classes"):
        runtime.code_fingerprint(3)
    namespace: dict = {"__name__": "__main__"}
    exec("def in_a_notebook():\n    return 1\n", namespace)
    with pytest.raises(TypeError, match="cannot (read the source|find the definition)"):
        runtime.code_fingerprint(namespace["in_a_notebook"])


class _Box:
    """A minimal model for the cache: a JSON file."""

    def __init__(self, value):
        self.value = value

    def save(self, path):
        with open(path, "w") as f:
            json.dump(self.value, f)

    @classmethod
    def load(cls, path):
        with open(path) as f:
            return cls(json.load(f))


def test_fit_cached_does_not_load_a_model_trained_with_other_cpu_kernels(tmp_path, monkeypatch):
    """A model cache carried to a machine whose torch kernels use another instruction set (AVX2 against AVX-512:
    other summation orders, other weights from the same seed) trains the model there instead of loading it."""
    fits = []

    def fit(value):
        fits.append(value)
        return _Box(value)

    here = runtime.fit_cached(lambda: fit(1.0), load=_Box.load, key={"x": 1}, code=[_Box], cache_dir=tmp_path)
    monkeypatch.setattr(runtime, "cpu_kernels", lambda: "x86_64 OTHER")
    there = runtime.fit_cached(lambda: fit(2.0), load=_Box.load, key={"x": 1}, code=[_Box], cache_dir=tmp_path)
    assert fits == [1.0, 2.0] and there.value == 2.0 and there.cache_path != here.cache_path


def test_cpu_kernels_names_the_instruction_set_torch_computes_with():
    """The string follows torch's kernel choice, including a capability lowered by ATEN_CPU_CAPABILITY."""
    import platform
    import subprocess

    assert runtime.cpu_kernels() == f"{platform.machine()} {torch.backends.cpu.get_cpu_capability()}"
    code = "from cflib import runtime; import torch; print(runtime.cpu_kernels()); print(runtime.run_summary())"
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    kernels, summary = out.splitlines()
    assert kernels == f"{platform.machine()} DEFAULT" and "DEFAULT kernels" in summary


def test_fit_cached_trains_once_per_key_across_threads_and_writes_atomically(tmp_path):
    fits = []

    def fit(value=1.0):
        fits.append(value)
        time.sleep(0.3)  # long enough for the second caller to find the lock taken
        return _Box(value)

    out = []
    threads = [
        threading.Thread(
            target=lambda: out.append(
                runtime.fit_cached(fit, load=_Box.load, key={"x": np.ones(3)}, code=[_Box], cache_dir=tmp_path)
            )
        )
        for _ in range(2)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert fits == [1.0] and out[0].cache_path == out[1].cache_path and out[1].value == 1.0
    again = runtime.fit_cached(lambda: fit(2.0), load=_Box.load, key={"x": np.ones(3)}, code=[_Box], cache_dir=tmp_path)
    assert again.value == 1.0 and fits == [1.0]  # loaded, not retrained
    other = runtime.fit_cached(
        lambda: fit(2.0), load=_Box.load, key={"x": np.zeros(3)}, code=[_Box], cache_dir=tmp_path
    )
    assert other.value == 2.0 and other.cache_path != again.cache_path

    def crash():
        raise RuntimeError("out of memory")

    class Torn(_Box):
        def save(self, path):
            with open(path, "w") as f:
                f.write('{"half": ')
            raise OSError("disk full")

    with pytest.raises(RuntimeError):
        runtime.fit_cached(crash, load=_Box.load, key={"x": np.full(3, 5.0)}, cache_dir=tmp_path)
    with pytest.raises(OSError):
        runtime.fit_cached(lambda: Torn(3.0), load=_Box.load, key={"x": np.full(3, 6.0)}, cache_dir=tmp_path)
    assert sorted(p.suffix for p in tmp_path.iterdir() if p.suffix != ".lock") == [".pt", ".pt"]  # nothing half-written
    with pytest.raises(ValueError, match="name"):
        runtime.fit_cached(fit, load=_Box.load, key=1, name="a/b", cache_dir=tmp_path)
