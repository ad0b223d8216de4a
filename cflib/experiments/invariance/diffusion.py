"""Notebook 05: counterfactual images with conditional latent diffusion, measured against the truth.

The judges (a group predictor and disease predictors), the counterfactuals of the latent-diffusion
models and of the beta-VAE baselines, the MINE disentangler of Sec. 3.3, the generation quality of
Tables 7-11 and the variance control of App. H.1.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ...data.toy_cxr import DISEASES, GROUPS, ToyCXR
from ...validation import check_grey_images

if TYPE_CHECKING:  # torch is imported only by the image experiments
    from ...models.cnn_zoo import SmallCNN


def train_judges(
    train: ToyCXR, *, epochs: int, device: str = "auto", seed: int = 0
) -> tuple[SmallCNN, dict[str, SmallCNN]]:
    """The judges of the counterfactuals: a group predictor and one predictor per disease.

    Trained on the observed images and on blurred copies of them, so that they read structure and
    density rather than the sensor noise that no autoencoder reproduces.

    Parameters
    ----------
    train : ToyCXR
        Training images.
    epochs : int
        Epochs of each predictor.
    device : str
        Device.
    seed : int
        Seed.

    Returns
    -------
    (SmallCNN, dict of str to SmallCNN)
        The group predictor (three classes) and the disease predictors.
    """
    from scipy.ndimage import gaussian_filter

    from ...models.cnn_zoo import SmallCNN

    size = train.size
    judge_x = np.concatenate([train.images, gaussian_filter(train.images, sigma=(0, 1, 1))])

    def twice(y):
        return np.concatenate([y, y])

    apred = SmallCNN("cnn-s", size, n_outputs=3, seed=seed).fit(
        judge_x, twice(train.A), epochs=epochs, device=device, seed=seed
    )
    dpred = {
        d: SmallCNN("cnn-s", size, seed=seed).fit(
            judge_x, twice(train.label(d)), epochs=epochs, device=device, seed=seed
        )
        for d in DISEASES
    }
    return apred, dpred


def judge_accuracy(apred: SmallCNN, dpred: Mapping[str, SmallCNN], test: ToyCXR) -> pd.Series:
    """Accuracy of the judges on real test images.

    Parameters
    ----------
    apred : SmallCNN
        Group predictor.
    dpred : mapping of str to SmallCNN
        Disease predictors.
    test : ToyCXR
        Test images.

    Returns
    -------
    pandas.Series
        ``group predictor`` and one entry per disease.
    """
    return pd.Series(
        {
            "group predictor": (apred.predict(test.images) == test.A).mean(),
            **{d: (dpred[d].predict(test.images) == test.label(d)).mean() for d in DISEASES},
        },
        name="accuracy on real test images",
    )


def ldm_counterfactual(
    model: Any,
    idx: np.ndarray,
    a_new: Any,
    *,
    data: ToyCXR,
    t_star: int,
    steps: int,
    guidance: float,
    aux_guidance: float,
    **kw: Any,
) -> np.ndarray:
    """Counterfactuals of the images ``idx`` under do(A = a_new); a model conditioned on the diseases holds them fixed.

    Parameters
    ----------
    model : LatentDiffusion
        A fitted model; when it has auxiliary classes (CLDM+D), each patient's disease labels are
        passed with guidance ``aux_guidance``.
    idx : numpy.ndarray
        Indices of the images.
    a_new : int or numpy.ndarray
        Target group(s).
    data : ToyCXR
        The images.
    t_star, steps, guidance, aux_guidance : numbers
        Abduction noise level, DDIM steps and the guidance scales.
    **kw
        Passed on to ``model.counterfactual`` (e.g. ``disentangler``, ``abduction``, ``seed``).

    Returns
    -------
    numpy.ndarray
        ``(len(idx), size, size)`` images.
    """
    extra = {"aux": data.D[idx], "aux_guidance": aux_guidance} if model.config.aux_classes else {}
    return model.counterfactual(
        data.images[idx], data.A[idx], a_new, t_star=t_star, steps=steps, guidance=guidance, **{**extra, **kw}
    )


def check_counterfactuals(
    variants: Mapping[str, tuple[Any, dict]],
    counterfactual: Callable[..., np.ndarray],
    test: ToyCXR,
    apred: SmallCNN,
    dpred: Mapping[str, SmallCNN],
    recon: np.ndarray,
    *,
    seed: int = 0,
) -> pd.DataFrame:
    """Measure generated counterfactuals against the true ones, per generator and target group.

    For each target group ``a`` and the test patients not in it: effectiveness (the group predictor
    finds ``a``), disease status kept by the disease predictors (overall and for each present
    disease; also on the true counterfactuals and the autoencoder reconstructions), and the
    disease-region L1 error to the truth next to the autoencoder floor and to a random patient.

    Parameters
    ----------
    variants : mapping of str to (model, dict)
        Generator name -> (model, extra keyword arguments of ``counterfactual``).
    counterfactual : callable
        ``counterfactual(model, idx, a_new, **kw)`` -> images (e.g. a partial of :func:`ldm_counterfactual`).
    test : ToyCXR
        Test images.
    apred : SmallCNN
        Group predictor.
    dpred : mapping of str to SmallCNN
        Disease predictors.
    recon : numpy.ndarray
        Autoencoder reconstructions of the test images.
    seed : int
        Seed of the random-patient permutation.

    Returns
    -------
    pandas.DataFrame
        Indexed by ``(generator, group)``.
    """
    region = test.disease_region()
    floor = 255 * np.abs(recon - test.images)[region].mean()
    perm = np.random.default_rng(seed).permutation(test.n)

    def kept(imgs, sel):
        return 100 * float(np.mean([(dpred[d].predict(imgs) == test.label(d)[sel]).mean() for d in DISEASES]))

    def present_kept(imgs, sel, d):
        return 100 * float(dpred[d].predict(imgs)[test.label(d)[sel] == 1].mean())

    check = {}
    for name, (model, kw) in variants.items():
        for a in range(3):
            other = np.flatnonzero(a != test.A)
            x_cf = counterfactual(model, other, a, **kw)
            x_true = test.render(A=a, idx=other)
            x_far = test.render(A=a, idx=perm[other])
            reg = region[other]
            # Per image: the disease-region error to the truth minus the midpoint of the floor and a random patient's error.
            per_image = [
                255 * (np.abs(x_cf - t) * reg).sum(axis=(1, 2)) / np.maximum(reg.sum(axis=(1, 2)), 1)
                for t in (x_true, x_far)
            ]
            margin = per_image[0] - (floor + per_image[1]) / 2
            check[(name, GROUPS[a])] = {
                "images": float(other.size),
                "effectiveness %": 100 * float((apred.predict(x_cf) == a).mean()),
                "disease kept %": kept(x_cf, other),
                **{f"present kept %, {d}": present_kept(x_cf, other, d) for d in DISEASES},
                "disease kept %, true cf": kept(x_true, other),
                "disease kept %, AE reconstruction": kept(recon[other], other),
                "disease-region L1 to truth": 255 * float(np.abs(x_cf - x_true)[reg].mean()),
                "autoencoder floor": float(floor),
                "random patient": 255 * float(np.abs(x_cf - x_far)[reg].mean()),
                "L1 margin": float(margin.mean()),
                "L1 margin se": float(margin.std(ddof=1) / np.sqrt(margin.size)) if margin.size > 1 else np.nan,
                **{f"present n, {d}": float((test.label(d)[other] == 1).sum()) for d in DISEASES},
            }
    return pd.DataFrame(check).T


def disentangler_study(
    ldm: Any, train: ToyCXR, *, lam: float, steps: int, mi_steps: int, device: str = "auto", seed: int = 0
) -> dict[str, Any]:
    """Fit the MINE disentangler of Section 3.3 on the latents and compare held-out MI bounds before and after.

    Parameters
    ----------
    ldm : LatentDiffusion
        Model whose encoder gives the latents ``z0``.
    train : ToyCXR
        Training images and groups.
    lam : float
        The paper's lambda (size of the perturbation).
    steps : int
        Perturbation updates.
    mi_steps : int
        Critic updates of the held-out MI estimates.
    device : str
        Device.
    seed : int
        Seed.

    Returns
    -------
    dict
        ``disentangler``, ``mi_before``, ``mi_after`` (MI results), ``shift`` (per-latent norm of
        ``phi(z) - z``) and ``table`` (a summary frame).
    """
    from ...models.mine import MINEDisentangler, estimate_mi

    z_train = ldm.encode(train.images)
    dis = MINEDisentangler(z_train.shape[1:], 3, lam=lam, seed=seed).fit(
        z_train, train.A, steps=steps, device=device, seed=seed
    )
    z_phi = dis.transform(z_train)
    mi_before = estimate_mi(z_train, train.A, 3, steps=mi_steps, device=device, seed=seed)
    mi_after = estimate_mi(z_phi, train.A, 3, steps=mi_steps, device=device, seed=seed)
    shift = np.linalg.norm((z_phi - z_train).reshape(len(z_train), -1), axis=1)
    table = pd.DataFrame({"z0": mi_before.summary().iloc[0], "phi(z0)": mi_after.summary().iloc[0]}).T
    table["mean ||phi(z) - z||"] = [0.0, float(shift.mean())]
    table["mean ||z||"] = float(np.linalg.norm(z_train.reshape(len(z_train), -1), axis=1).mean())
    return {"disentangler": dis, "mi_before": mi_before, "mi_after": mi_after, "shift": shift, "table": table}


def beta_vae_counterfactuals(
    train: ToyCXR, betas: Sequence[float], *, epochs: int, batch_size: int, device: str = "auto", seed: int = 0
) -> dict[str, Callable[..., np.ndarray]]:
    """The conditional beta-VAE baselines of Tables 7-11 as counterfactual functions ``f(x, a, a_new)``.

    Parameters
    ----------
    train : ToyCXR
        Training images and groups.
    betas : sequence of float
        Positive beta values.
    epochs, batch_size : int
        Training settings.
    device : str
        Device.
    seed : int
        Seed.

    Returns
    -------
    dict
        ``"VAE beta=<b>"`` -> counterfactual function.
    """
    from ...models.vae import ConditionalVAE

    def onehot(a):
        return np.eye(3, dtype=np.float32)[np.asarray(a)]

    def as_function(vae):
        return lambda x, a, a_new: np.asarray(vae.counterfactual(x[:, None], onehot(a), onehot(a_new)))[:, 0]

    models = {}
    for b in betas:
        vae = ConditionalVAE(
            (1, train.size, train.size), parent_dim=3, latent_dim=16, beta=b, width=16, hidden=64, seed=seed
        )
        vae.fit(train.images[:, None], onehot(train.A), epochs=epochs, batch_size=batch_size, device=device, seed=seed)
        models[f"VAE beta={b:g}"] = as_function(vae)
    return models


@dataclass(frozen=True)
class _GroupCounterfactual:
    """A counterfactual function ``f(images, A, a_new)`` as :class:`~cflib.metrics.axioms.FunctionModel` reads it.

    ``FunctionModel`` calls ``(x, pa, pa_star)`` and reads ``parent_names``; the output is checked to be
    grey images of the input's size.
    """

    f: Callable[..., np.ndarray]
    name: str
    size: int
    parent_names: tuple[str, ...] = ("A",)

    def __call__(
        self, images: np.ndarray, pa: Mapping[str, np.ndarray], pa_star: Mapping[str, np.ndarray]
    ) -> np.ndarray:
        return check_grey_images(self.f(images, pa["A"], pa_star["A"]), self.size, name=f"{self.name} output")


def generation_quality(
    counterfactuals: Mapping[str, Callable[..., np.ndarray]],
    images: np.ndarray,
    A: np.ndarray,
    attribute_predictor: Any,
    *,
    true_counterfactual: Callable[[int], np.ndarray] | None = None,
    disease_region: np.ndarray | None = None,
    n_classes: int = 3,
    fd_boot: int = 50,
) -> pd.DataFrame:
    """Composition, effectiveness, Fréchet distance and distance to the truth of counterfactual models.

    The toy counterpart of the paper's Tables 7-11 (Appendix I): for every model,

    * **composition** (Tables 7, 9): mean absolute pixel difference (on the 0-255 scale) between an image
      and its regeneration under the null intervention ``do(A = A)``, per observed group;
    * **effectiveness** (Tables 8, 10): share of counterfactuals under ``do(A = a)`` that the attribute
      predictor assigns to ``a``, over images not already in group ``a``;
    * **FD** (Table 11): Fréchet distance between the attribute predictor's penultimate features of the
      real images and of all counterfactuals (an in-domain stand-in for FID, which needs Inception
      weights);
    * **L1 to truth** (not in the paper, which has no ground truth): mean absolute difference (0-255)
      between the counterfactual and the true counterfactual, optionally only inside
      ``disease_region`` (where the diseases are drawn).

    Composition and effectiveness come from :mod:`cflib.metrics.axioms` (one null-intervention cycle of
    :func:`~cflib.metrics.axioms.measure_composition`, :func:`~cflib.metrics.axioms.measure_effectiveness`
    with the predictor as the reader of ``A``), each ``f`` seen as a
    :class:`~cflib.metrics.axioms.FunctionModel` over ``{"x", "A"}``.

    Parameters
    ----------
    counterfactuals : mapping
        ``{name: f}`` with ``f(images, A, a_new) -> images`` for an array ``a_new``.
    images : numpy.ndarray
        ``(n, H, W)`` test images in [0, 1].
    A : numpy.ndarray
        ``(n,)`` observed groups.
    attribute_predictor : object
        Has ``score(images, target)`` (per-image correctness) and ``embed(images)``, e.g. an
        :class:`cflib.models.classifier.ImageClassifier` such as :class:`cflib.models.cnn_zoo.SmallCNN`.
    true_counterfactual : callable, optional
        ``a -> images``: the true counterfactuals of ``images`` under ``do(A = a)``.
    disease_region : numpy.ndarray, optional
        ``(n, H, W)`` boolean mask restricting the distance to the truth.
    n_classes : int
        Number of groups.
    fd_boot : int
        Bootstrap draws of the Fréchet distance's standard error (images resampled in both feature sets,
        from a generator of its own so that no other random stream moves).

    Returns
    -------
    pandas.DataFrame
        One row per model; columns ``(metric, group)``, with ``("composition L1", "all")`` over all images and
        the standard errors ``("composition L1 se", "all")`` and ``("FD se", "all")``.
    """
    from ...metrics.axioms import FunctionModel, measure_composition, measure_effectiveness
    from ...metrics.realism import frechet_distance

    x = check_grey_images(images)
    A = np.asarray(A)
    if A.shape != (x.shape[0],):
        raise ValueError(f"A must have shape ({x.shape[0]},), got {A.shape}")
    if not isinstance(counterfactuals, Mapping) or not counterfactuals:
        raise TypeError("counterfactuals must be a non-empty dict {name: f(images, A, a_new)}")
    real_feat = attribute_predictor.embed(x)
    truth = [true_counterfactual(a) for a in range(n_classes)] if true_counterfactual is not None else None
    obs = {"x": x, "A": A}
    rows = {}
    for name, f in counterfactuals.items():
        model = FunctionModel(_GroupCounterfactual(f, name, x.shape[1]))
        comp = measure_composition(model, obs, cycles=1).at(1)["l1"]  # the null intervention do(A = A), 0-255 scale
        row: dict[tuple[str, int | str], float] = {}
        cfs = []
        for a in range(n_classes):
            eff = measure_effectiveness(model, obs, {"A": attribute_predictor}, do={"A": np.full_like(A, a)})
            cfs.append(eff.counterfactuals["A"]["x"])
            row[("composition L1", a)] = float(comp[a == A].mean()) if np.any(a == A) else np.nan
            other = np.not_equal(A, a)
            row[("effectiveness %", a)] = (
                float(100 * eff.per_image[("A", "A")][other].mean()) if other.any() else np.nan
            )
            if truth is not None:
                err = np.abs(cfs[a] - truth[a])
                row[("L1 to truth", a)] = float(
                    255 * (err[disease_region].mean() if disease_region is not None else err.mean())
                )
        row[("composition L1", "all")] = float(comp.mean())
        row[("composition L1 se", "all")] = float(comp.std(ddof=1) / np.sqrt(comp.size)) if comp.size > 1 else np.nan
        gen_feat = attribute_predictor.embed(np.concatenate(cfs))
        row[("FD", "all")] = frechet_distance(real_feat, gen_feat)
        row[("FD se", "all")] = _bootstrap_fd_se(real_feat, gen_feat, n_boot=fd_boot)
        rows[name] = row
    df = pd.DataFrame(rows).T
    df.columns = pd.MultiIndex.from_tuples(df.columns, names=["metric", "do(A)"])
    return df


def _bootstrap_fd_se(real: np.ndarray, generated: np.ndarray, *, n_boot: int, seed: int = 0) -> float:
    """Bootstrap standard error of the Fréchet distance, resampling the rows of both feature sets."""
    from ...metrics.realism import frechet_distance

    if n_boot < 2:
        return np.nan
    rng = np.random.default_rng(seed)
    draws = [
        frechet_distance(
            real[rng.integers(0, len(real), len(real))], generated[rng.integers(0, len(generated), len(generated))]
        )
        for _ in range(n_boot)
    ]
    return float(np.std(draws, ddof=1))


def quality_table(models: Mapping[str, Callable[..., np.ndarray]], test: ToyCXR, apred: SmallCNN) -> pd.DataFrame:
    """Generation quality of every counterfactual function (Tables 7-11) with short group names as columns.

    Parameters
    ----------
    models : mapping of str to callable
        Counterfactual functions ``f(x, a, a_new)``.
    test : ToyCXR
        Test images (their true counterfactuals and disease region are the ground truth).
    apred : SmallCNN
        Group predictor for effectiveness.

    Returns
    -------
    pandas.DataFrame
        :func:`generation_quality` with ``(metric, group)`` columns.
    """

    quality = generation_quality(
        models,
        test.images,
        test.A,
        apred,
        true_counterfactual=test.counterfactual,
        disease_region=test.disease_region(),
    )
    quality.columns = pd.MultiIndex.from_tuples(
        [(m, GROUPS[g].split(" (")[1].rstrip(")") if g != "all" else g) for m, g in quality.columns]
    )
    return quality


def variance_control(
    ldm: Any,
    test: ToyCXR,
    apred: SmallCNN,
    *,
    n_images: int,
    t_star: int,
    steps: int,
    guidance: float,
    aux_guidance: float,
) -> pd.DataFrame:
    """Appendix H.1: spread, error and effectiveness of three stochastic abductions at t* and t*/4.

    Each quantity is computed per image (the pixel sd across the draws, the L1 to the true counterfactual
    averaged over the draws, the share of the draws the group predictor assigns to the target group) and
    averaged over the images, with its standard error over images.

    Parameters
    ----------
    ldm : LatentDiffusion
        A model conditioned on the diseases (CLDM+D).
    test : ToyCXR
        Test images; the first ``n_images`` are moved to the next group.
    apred : SmallCNN
        Group predictor.
    n_images : int
        Number of images.
    t_star, steps, guidance, aux_guidance : numbers
        Counterfactual settings.

    Returns
    -------
    pandas.DataFrame
        One row per noise level: ``pixel sd across draws (0-255)``, ``L1 to truth (0-255)`` and ``effectiveness %``,
        each with its standard error over images (``, se``; NaN with one image).
    """
    idx = np.arange(min(n_images, test.n))
    target = (test.A[idx] + 1) % 3
    truth = test.render(A=target, idx=idx)
    rows = {}
    for ts in (t_star, max(1, t_star // 4)):
        draws = np.stack(
            [
                ldm.counterfactual(
                    test.images[idx],
                    test.A[idx],
                    target,
                    aux=test.D[idx],
                    t_star=ts,
                    steps=steps,
                    guidance=guidance,
                    aux_guidance=aux_guidance,
                    abduction="forward",
                    seed=s,
                )
                for s in range(3)
            ]
        )
        sd_i = 255 * draws.std(axis=0).mean(axis=(1, 2))  # per image
        l1_i = 255 * np.abs(draws - truth).mean(axis=(0, 2, 3))
        eff_i = 100 * np.mean(
            [apred.predict(d) == target for d in draws], axis=0
        )  # per image: share of its draws that moved
        rows[f"t* = {ts}"] = {
            "pixel sd across draws (0-255)": float(sd_i.mean()),
            "L1 to truth (0-255)": float(l1_i.mean()),
            "effectiveness %": float(eff_i.mean()),
            **{
                f"{name}, se": float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else np.nan
                for name, v in (
                    ("pixel sd across draws (0-255)", sd_i),
                    ("L1 to truth (0-255)", l1_i),
                    ("effectiveness %", eff_i),
                )
            },
        }
    return pd.DataFrame(rows).T
