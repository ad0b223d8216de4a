"""The counterfactual-image benchmark: train deep SCMs and score them on the paper's four axes.

Melistas et al. (*Benchmarking counterfactual image generation*, Secs. 3-4, Tables 1-5) compare
deep SCMs that share their attribute mechanisms and differ in the image mechanism (VAE with fixed
or learned sigma, hierarchical VAE, GAN, GAN with encoder fine-tuning) on composition,
effectiveness, realism and minimality. :func:`run_benchmark` does the same on the project's
synthetic stand-ins (MorphoSynth for Morpho-MNIST, SmileyFaces for CelebA), where the true
counterfactual is known, and adds two reference "models" through the same :class:`DeepSCM`
interface: ``identity`` (the image never changes) and ``true`` (the data's own mechanism).

Everything is returned as DataFrames named after the paper's tables plus per-image arrays, so a
notebook can draw the figures and run paired comparisons between models on the same test images.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ..data.morphosynth import MorphoSynth, encode_parents, make_morphosynth
from ..data.smileyfaces import SmileyFaces, make_smileyfaces
from ..metrics.benchmark_metrics import (
    InterventionSampler,
    embedding_l1,
    l1_pixel,
    memoize_features,
    perceptual_distance,
    scm_composition,
    scm_effectiveness,
)
from ..metrics.minimality import counterfactual_latent_divergence, identity_cld
from ..metrics.realism import frechet_distance
from ..models.predictors import AntiCausalPredictor
from ..runtime import as_generator
from ..scm import morpho_attributes
from ..scm.deep import ClosedForm, DeepSCM, IdentityImage, OracleImage, RootMechanism

__all__ = [
    "MODELS", "BASELINES", "MODEL_LABELS", "BenchmarkConfig", "BenchmarkResult", "run_benchmark", "evaluate_scm",
    "with_temperature", "format_mean_std", "composition_grid", "intervention_grid",
]

#: Image mechanisms the benchmark can train (``hvae_cf`` only for SmileyFaces).
MODELS = ("vae_fixed", "vae_learned", "hvae", "hvae_cf", "gan", "gan_ft")
#: Reference "models" that need no training.
BASELINES = ("identity", "true")
#: Row labels as in the paper's tables.
MODEL_LABELS = {
    "vae_fixed": "VAE (σ=√e⁻⁵)",
    "vae_learned": "VAE (σ learned)",
    "hvae": "HVAE",
    "hvae_cf": "HVAE fine-tuned",
    "gan": "GAN",
    "gan_ft": "GAN fine-tuned",
    "identity": "identity (reference)",
    "true": "true counterfactual (reference)",
}


@dataclass
class BenchmarkConfig:
    """Settings of one benchmark run.

    Attributes
    ----------
    dataset : {"morphosynth", "smileyfaces"}
        MorphoSynth (Morpho-MNIST stand-in) or SmileyFaces (CelebA stand-in).
    size : int
        Image side in pixels.
    n_train, n_test : int
        Training and test images.
    models : tuple of str
        Image mechanisms to train (see :data:`MODELS`).
    baselines : tuple of str
        References to score too (see :data:`BASELINES`).
    epochs : int
        Training epochs of the VAEs and the HVAE.
    gan_epochs : int
        Training epochs of the GAN.
    gan_finetune_steps : int
        Encoder fine-tuning steps of ``gan_ft``.
    gan_composition_weight : float
        Weight of the project GAN's composition penalty. The paper's ALI/BiGAN gets reconstruction
        pressure from training its encoder jointly with the discriminator on (x, z) pairs; the project's
        image-to-image GAN has none without this penalty and collapses at small scale, so a weak one
        (0.1) stands in for it. 0 gives pure adversarial training.
    cf_steps : int
        Counterfactual fine-tuning steps of ``hvae_cf``.
    cf_lr : float
        Learning rate of the counterfactual fine-tuning (paper: 1e-4 for 2000 steps; a few hundred
        steps at small scale need a larger one).
    predictor_epochs : int
        Training epochs of the anti-causal predictors.
    cld_vae_epochs : int
        Training epochs of the unconditional VAE of the CLD.
    flow_epochs : int
        Training epochs of the intensity flow (MorphoSynth).
    cycles : int
        Null-intervention cycles for composition (reported at 1 and ``cycles``).
    vae_temperature, hvae_temperature : float
        Pixel-noise temperature ``T`` (code: 0.1 and 0.3).
    hvae_posterior_temperature : float
        Posterior temperature of the HVAE's abduction (code: 0.1).
    beta : float
        KL weight of the VAEs and HVAE (paper: 1 Morpho-MNIST, 5 CelebA).
    latent_dim : int
        Latent size of the VAEs (paper 16).
    width, hidden : int
        Convolution channels and dense width of the image models.
    hvae_levels : int
        Latent groups of the HVAE.
    batch_size : int
        Minibatch size.
    lr : float
        Learning rate of the image models.
    cld_weights : (float, float)
        ``(w1, w2)`` of the CLD.
    n_bins : int
        Bins of continuous parents (interventions and CLD).
    n_show : int
        Test units whose images are kept for figures.
    seed : int
        Seed of data, training and interventions.
    device : str
        ``"auto"``, ``"cpu"`` or ``"cuda"``.
    """

    dataset: str = "morphosynth"
    size: int = 16
    n_train: int = 3000
    n_test: int = 500
    models: tuple[str, ...] = ("vae_fixed", "vae_learned", "hvae", "gan", "gan_ft")
    baselines: tuple[str, ...] = ("identity", "true")
    epochs: int = 10
    gan_epochs: int = 10
    gan_finetune_steps: int = 200
    gan_composition_weight: float = 0.1
    cf_steps: int = 150
    cf_lr: float = 1e-4
    predictor_epochs: int = 6
    cld_vae_epochs: int = 8
    flow_epochs: int = 60
    cycles: int = 10
    vae_temperature: float = 0.1
    hvae_temperature: float = 0.3
    hvae_posterior_temperature: float = 0.1
    beta: float = 1.0
    latent_dim: int = 16
    width: int = 16
    hidden: int = 64
    hvae_levels: int = 4
    batch_size: int = 128
    lr: float = 2e-3
    cld_weights: tuple[float, float] = (0.8, 0.2)
    n_bins: int = 10
    n_show: int = 6
    seed: int = 0
    device: str = "auto"

    def __post_init__(self) -> None:
        if self.dataset not in ("morphosynth", "smileyfaces"):
            raise ValueError(f"dataset must be 'morphosynth' or 'smileyfaces', got {self.dataset!r}")
        self.models = tuple(self.models)
        self.baselines = tuple(self.baselines)
        unknown = [m for m in self.models if m not in MODELS]
        if unknown:
            raise ValueError(f"unknown model(s) {unknown}; choose from {MODELS}")
        if "hvae_cf" in self.models and self.dataset != "smileyfaces":
            raise ValueError("hvae_cf (counterfactual fine-tuning with binary classifiers) is defined for dataset='smileyfaces' only")
        bad = [b for b in self.baselines if b not in BASELINES]
        if bad:
            raise ValueError(f"unknown baseline(s) {bad}; choose from {BASELINES}")
        for name in ("size", "n_train", "n_test", "epochs", "gan_epochs", "predictor_epochs", "cld_vae_epochs", "cycles", "batch_size"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if self.n_test < 20:
            raise ValueError(f"n_test must be at least 20 for the metrics' reference sets, got {self.n_test}")


@dataclass
class BenchmarkResult:
    """Everything :func:`run_benchmark` measured.

    Attributes
    ----------
    config : BenchmarkConfig
    table_composition : pandas.DataFrame
        Table 1 (MorphoSynth) or 2 (SmileyFaces): mean and std over images per distance and cycles.
    table_effectiveness : pandas.DataFrame
        Table 3 or 4: rows model, columns ``(attribute, do(k))``.
    table_realism_minimality : pandas.DataFrame
        Table 5: Fréchet distance, CLD, P1, P2 (and the identity CLD).
    table_true_error : pandas.DataFrame
        Mean pixel l1 (0-255) between each model's counterfactual and the true one, per intervention.
    per_image : dict
        ``model -> {"composition": {distance: (n, cycles)}, "effectiveness": {(do, attr): (n,)},
        "true_error": {do: (n,)}, "cld": (n,), "p1": (n,), "p2": (n,)}``.
    figures : dict
        Images for the figures: ``"composition"`` (model -> (k, cycles + 1, ...)),
        ``"interventions"`` (model -> {do: (k, ...)}), ``"factual"`` (k, ...), ``"do_values"``.
    predictor_quality : pandas.DataFrame
        Predictors on real test images (the ceiling of effectiveness).
    timings : dict
        Seconds per stage.
    models : dict
        The trained DeepSCMs (not serialised).
    """

    config: BenchmarkConfig
    table_composition: pd.DataFrame
    table_effectiveness: pd.DataFrame
    table_realism_minimality: pd.DataFrame
    table_true_error: pd.DataFrame
    per_image: dict[str, dict[str, Any]] = field(repr=False)
    figures: dict[str, Any] = field(repr=False)
    predictor_quality: pd.DataFrame = field(repr=False)
    timings: dict[str, float] = field(repr=False)
    models: dict[str, Any] = field(repr=False)
    extras: dict[str, Any] = field(repr=False, default_factory=dict)


# ----------------------------------------------------------------------------------------------
# pieces
# ----------------------------------------------------------------------------------------------
def _spec(cfg: BenchmarkConfig) -> dict[str, Any]:
    """Dataset-specific names: parents, their kinds, the parent encoder and the data."""
    if cfg.dataset == "morphosynth":
        return {
            "parents": ("t", "i", "d"),
            "kinds": {"t": "regression", "i": "regression", "d": "multiclass"},
            "discrete": ("d",),
            "encoder": lambda pa: encode_parents(pa["t"], pa["i"], pa["d"]),
            "pa_dim": 12,
            "channels": 1,
            "scale": 1.0 / 255.0,
        }
    return {
        "parents": ("s", "e"),
        "kinds": {"s": "binary", "e": "binary"},
        "discrete": ("s", "e"),
        "encoder": lambda pa: np.column_stack([np.asarray(pa["s"], np.float32), np.asarray(pa["e"], np.float32)]),
        "pa_dim": 2,
        "channels": 3,
        "scale": 1.0,
    }


def _make_data(cfg: BenchmarkConfig) -> tuple[MorphoSynth | SmileyFaces, MorphoSynth | SmileyFaces]:
    if cfg.dataset == "morphosynth":
        return make_morphosynth(cfg.n_train, cfg.size, seed=cfg.seed), make_morphosynth(cfg.n_test, cfg.size, seed=cfg.seed + 10_000)
    return make_smileyfaces(cfg.n_train, cfg.size, seed=cfg.seed), make_smileyfaces(cfg.n_test, cfg.size, seed=cfg.seed + 10_000)


def _obs(data: MorphoSynth | SmileyFaces, scale: float) -> dict[str, np.ndarray]:
    obs = data.observations()
    obs["x"] = np.asarray(data.x, dtype=np.float32) * np.float32(scale)  # the same expression as OracleImage
    return obs


def _attribute_mechanisms(cfg: BenchmarkConfig, train: Any, spec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Learned attribute mechanisms (shared by all models) and the true ones (for the reference)."""
    if cfg.dataset == "morphosynth":
        from ..models.flows import ConditionalFlow1D

        flow = ConditionalFlow1D(["t"], bounds=(64.0, 255.0), seed=cfg.seed).fit(
            train.i, {"t": train.t}, epochs=cfg.flow_epochs, seed=cfg.seed, device="cpu")
        learned = {"t": RootMechanism(train.t), "i": flow, "d": RootMechanism(train.d)}
        true = morpho_attributes().mechanisms
        return learned, {"t": ClosedForm(true["t"]), "i": ClosedForm(true["i"]), "d": RootMechanism(train.d)}
    learned = {"s": RootMechanism(train.s), "e": RootMechanism(train.e)}
    return learned, dict(learned)


def _train_image_models(cfg: BenchmarkConfig, x: np.ndarray, pa: np.ndarray, spec: dict[str, Any],
                        predictors_ft: Mapping[str, AntiCausalPredictor] | None, timings: dict[str, float]) -> dict[str, Any]:
    from ..models.gan import ConditionalGAN
    from ..models.hvae import HierarchicalConditionalVAE
    from ..models.image_mechanisms import (
        FIXED_SIGMA_VARIANCE,
        DeepImageMechanism,
        LearnedScaleVAE,
        counterfactual_finetune,
        finetune_encoder,
    )
    from ..models.vae import ConditionalVAE

    shape = (spec["channels"], cfg.size, cfg.size)
    k = spec["pa_dim"]
    enc = spec["encoder"]
    common = {"width": cfg.width, "hidden": cfg.hidden, "seed": cfg.seed}
    fit_kw = {"batch_size": cfg.batch_size, "lr": cfg.lr, "device": cfg.device, "seed": cfg.seed, "show_progress": False}
    out: dict[str, Any] = {}
    want = set(cfg.models)
    raw: dict[str, Any] = {}

    def timed(name: str, fn):
        t0 = time.perf_counter()
        r = fn()
        timings[f"train {name}"] = time.perf_counter() - t0
        return r

    if "vae_fixed" in want:
        m = ConditionalVAE(shape, k, latent_dim=cfg.latent_dim, likelihood="normal", normal_variance=FIXED_SIGMA_VARIANCE, beta=cfg.beta, **common)
        raw["vae_fixed"] = timed("vae_fixed", lambda: m.fit(x, pa, epochs=cfg.epochs, **fit_kw))
        out["vae_fixed"] = DeepImageMechanism(m, enc, noise_temperature=cfg.vae_temperature, seed=cfg.seed)
    if "vae_learned" in want:
        m2 = LearnedScaleVAE(shape, k, latent_dim=cfg.latent_dim, beta=cfg.beta, **common)
        raw["vae_learned"] = timed("vae_learned", lambda: m2.fit(x, pa, epochs=cfg.epochs, **fit_kw))
        out["vae_learned"] = DeepImageMechanism(m2, enc, noise_temperature=cfg.vae_temperature, seed=cfg.seed)
    if want & {"hvae", "hvae_cf"}:
        h = HierarchicalConditionalVAE(shape, k, levels=cfg.hvae_levels, latent_dim=max(2, cfg.latent_dim // 2), beta=cfg.beta,
                                       likelihood="normal", normal_variance=FIXED_SIGMA_VARIANCE, **common)
        timed("hvae", lambda: h.fit(x, pa, epochs=cfg.epochs, **fit_kw))
        if "hvae" in want:
            out["hvae"] = DeepImageMechanism(h, enc, noise_temperature=cfg.hvae_temperature,
                                             posterior_temperature=cfg.hvae_posterior_temperature, seed=cfg.seed)
        if "hvae_cf" in want:
            hc = copy.deepcopy(h)
            clfs = {j: predictors_ft[p].module for j, p in enumerate(spec["parents"])}
            hist = timed("hvae_cf (fine-tuning)", lambda: counterfactual_finetune(
                hc, x, pa, clfs, steps=cfg.cf_steps, batch_size=min(64, cfg.batch_size), lr=cfg.cf_lr, device=cfg.device, seed=cfg.seed))
            raw["hvae_cf_history"] = hist
            out["hvae_cf"] = DeepImageMechanism(hc, enc, noise_temperature=cfg.hvae_temperature,
                                                posterior_temperature=cfg.hvae_posterior_temperature, seed=cfg.seed)
    if want & {"gan", "gan_ft"}:
        g = ConditionalGAN(shape, k, composition_weight=cfg.gan_composition_weight, **common)
        groups = [[0], [1], list(range(2, 12))] if cfg.dataset == "morphosynth" else [[0], [1]]
        timed("gan", lambda: g.fit(x, pa, epochs=cfg.gan_epochs, batch_size=cfg.batch_size, lr=2e-4, device=cfg.device,
                                   seed=cfg.seed, parent_groups=groups, show_progress=False))
        if "gan" in want:
            out["gan"] = DeepImageMechanism(g, enc, seed=cfg.seed)
        if "gan_ft" in want:
            gf = copy.deepcopy(g)
            raw["gan_ft_history"] = timed("gan_ft (fine-tuning)", lambda: finetune_encoder(
                gf, x, pa, steps=cfg.gan_finetune_steps, batch_size=cfg.batch_size, lr=1e-3, device=cfg.device, seed=cfg.seed))
            out["gan_ft"] = DeepImageMechanism(gf, enc, seed=cfg.seed)
    out["_raw"] = raw
    return out


def _cld_encoder(cfg: BenchmarkConfig, x: np.ndarray, spec: dict[str, Any]):
    """Unconditional VAE for the CLD: the project's VAE with a constant (uninformative) parent."""
    import torch

    from ..models.vae import ConditionalVAE

    shape = (spec["channels"], cfg.size, cfg.size)
    vae = ConditionalVAE(shape, 1, latent_dim=cfg.latent_dim, likelihood="bernoulli", beta=1.0,
                         width=cfg.width, hidden=cfg.hidden, seed=cfg.seed + 1)
    zero = np.zeros((len(x), 1), np.float32)
    vae.fit(x, zero, epochs=cfg.cld_vae_epochs, batch_size=cfg.batch_size, lr=cfg.lr, device=cfg.device, seed=cfg.seed, show_progress=False)

    def encode(images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vae.eval()
        mus, lvs = [], []
        with torch.no_grad():
            for s in range(0, len(images), 1024):
                xb = torch.as_tensor(np.asarray(images[s : s + 1024], np.float32), device=vae.device)
                mu, sigma = vae._posterior(xb, torch.zeros(len(xb), 1, device=vae.device))
                mus.append(mu.cpu().numpy())
                lvs.append((2 * torch.log(sigma)).cpu().numpy())
        return np.concatenate(mus).astype(np.float64), np.concatenate(lvs).astype(np.float64)

    return encode


@dataclass
class _EvalContext:
    """What every model is scored against: the same test units, interventions and metric models."""

    cfg: BenchmarkConfig
    parents: tuple[str, ...]
    kinds: dict[str, str]
    obs: dict[str, np.ndarray]
    distances: dict[str, Any]
    predictors: dict[str, AntiCausalPredictor]
    sampler: InterventionSampler
    do_values: dict[str, np.ndarray]
    truth: dict[str, dict[str, np.ndarray]]
    chosen: np.ndarray
    cld_encode: Any
    mu_f: np.ndarray
    lv_f: np.ndarray
    ref_groups: np.ndarray
    real_features: np.ndarray
    embed: Any
    show: np.ndarray


def evaluate_scm(ctx: _EvalContext, scm: DeepSCM, label: str) -> dict[str, Any]:
    """Score one deep SCM on composition, effectiveness, realism, minimality and the true error.

    Parameters
    ----------
    ctx : object
        ``result.extras["context"]`` of a :func:`run_benchmark` result (test units, interventions,
        predictors, CLD encoder), so a new model, or the same model at another temperature, is scored
        on exactly the same units and interventions as the others.
    scm : DeepSCM
        The model.
    label : str
        Row label.

    Returns
    -------
    dict
        ``rows`` (table rows), ``per_image`` arrays, ``figures`` images and ``summary`` (flat dict of
        the headline numbers).
    """
    cfg, parents, obs, n = ctx.cfg, ctx.parents, ctx.obs, len(ctx.chosen)
    comp = scm_composition(scm, obs, cycles=cfg.cycles, distances=ctx.distances, keep_images=len(ctx.show))
    eff = scm_effectiveness(scm, obs, ctx.predictors, ctx.sampler, do_values=ctx.do_values)
    true_err = {p: l1_pixel(255.0)(eff.counterfactuals[p]["x"], ctx.truth[p]["x"]) for p in parents}
    units = np.arange(n)
    cf_x = np.stack([eff.counterfactuals[p]["x"] for p in parents])[ctx.chosen, units]
    fd = frechet_distance(ctx.real_features, ctx.embed(cf_x))
    mu_c, lv_c = ctx.cld_encode(cf_x)
    cf_groups = np.stack([ctx.sampler.bin(p, ctx.do_values[p]) for p in parents])[ctx.chosen, units]
    cld = counterfactual_latent_divergence((ctx.mu_f, ctx.lv_f), (mu_c, lv_c), ctx.ref_groups[units, ctx.chosen], cf_groups,
                                           reference_group=ctx.ref_groups, parent=ctx.chosen, weights=cfg.cld_weights)
    rows_c = [{"model": label, "distance": dist, "cycles": m, "mean": arr[:, m - 1].mean(), "std": arr[:, m - 1].std(ddof=1)}
              for dist, arr in comp.distances.items() for m in sorted({1, cfg.cycles})]
    rows_e = [{"model": label, "attribute": attr, "intervention": do, "score": v} for do, row in eff.table.iterrows() for attr, v in row.items()]
    row_rm = {"model": label, "Fréchet (in-domain)": fd, "CLD": cld.statistic, "P1": cld.mean_p1, "P2": cld.mean_p2}
    row_t = {"model": label, **{f"do({p})": true_err[p].mean() for p in parents}}
    summary = {f"composition {d} m={m}": arr[:, m - 1].mean() for d, arr in comp.distances.items() for m in sorted({1, cfg.cycles})}
    summary.update({f"effectiveness {a} do({a})": eff.table.loc[f"do({a})", a] for a in parents})
    summary.update({"Fréchet": fd, "CLD": cld.statistic, "true error": float(np.mean([v.mean() for v in true_err.values()]))})
    per_image = {"composition": comp.distances, "composition_trend_p": comp.pvalue, "effectiveness": eff.per_image,
                 "true_error": true_err, "cld": cld.cld, "p1": cld.p1, "p2": cld.p2, "chosen": ctx.chosen,
                 "counterfactual_parents": {p: {q: eff.counterfactuals[p][q] for q in parents} for p in parents}}
    figures = {"composition": comp.images, "interventions": {p: eff.counterfactuals[p]["x"][ctx.show] for p in parents}}
    return {"rows": {"composition": rows_c, "effectiveness": rows_e, "realism_minimality": row_rm, "true_error": row_t},
            "per_image": per_image, "figures": figures, "summary": summary}


def with_temperature(result: BenchmarkResult, model: str, noise_temperature: float) -> DeepSCM:
    """The trained deep SCM ``model`` with another pixel-noise temperature (no retraining).

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.
    model : str
        A trained VAE or HVAE model key.
    noise_temperature : float
        New ``T``.

    Returns
    -------
    DeepSCM
    """
    from ..models.image_mechanisms import DeepImageMechanism

    mechs = result.extras["mechanisms"]
    if model not in mechs:
        raise ValueError(f"{model!r} was not trained in this run (trained: {sorted(mechs)})")
    old = mechs[model]
    new = DeepImageMechanism(old.model, old.parent_encoder, noise_temperature=noise_temperature,
                             posterior_temperature=old.posterior_temperature, seed=old.seed)
    scm = result.models[model]
    return DeepSCM(scm.graph, {**scm.mechanisms, "x": new})


def format_mean_std(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Turn the composition table's ``(distance, cycles, mean|std)`` columns into ``mean ± std`` strings."""
    out = {}
    for dist, m in dict.fromkeys((d, c) for d, c, _ in table.columns):
        out[(dist, f"{m} cycle" + ("s" if m > 1 else ""))] = [
            f"{a:.{digits}f} ± {b:.{digits}f}" for a, b in zip(table[(dist, m, "mean")], table[(dist, m, "std")], strict=False)]
    return pd.DataFrame(out, index=table.index)


def composition_grid(result: BenchmarkResult, models: Sequence[str], units: Sequence[int] = (0, 1, 2), fig=None):
    """Figs 2 / 3 / 6 / 8: each row one unit of one model, columns the factual and cycles 1..m.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import image_grid

    rows, labels = [], []
    for mdl in models:
        for u in units:
            rows.append(result.figures["composition"][mdl][u])
            labels.append(f"{MODEL_LABELS[mdl].split(' (')[0] if mdl not in ('vae_fixed', 'vae_learned') else MODEL_LABELS[mdl]} #{u}")
    imgs = np.stack(rows)
    cols = ["x"] + [f"m={k}" for k in range(1, imgs.shape[1])]
    return image_grid(_display(imgs), row_labels=labels, col_labels=cols, vmin=0, vmax=1, panel=0.75, fig=fig)


def intervention_grid(result: BenchmarkResult, models: Sequence[str], unit: int = 0, fig=None):
    """Figs 4 / 5 / 7 / 9 with the true counterfactual as an extra row: factual, then one column per intervention.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import image_grid

    parents = tuple(result.figures["do_values"])
    rows = [np.stack([result.figures["factual"][unit]] + [result.figures["true"][p][unit] for p in parents])]
    labels = ["true"]
    for mdl in models:
        rows.append(np.stack([result.figures["factual"][unit]] + [result.figures["interventions"][mdl][p][unit] for p in parents]))
        labels.append(MODEL_LABELS[mdl])
    fp = result.figures["factual_parents"]
    dv = result.figures["do_values"]
    cols = ["factual\n" + ", ".join(f"{p}={_fmt(fp[p][unit])}" for p in parents)] + [f"do({p}={_fmt(dv[p][unit])})" for p in parents]
    return image_grid(_display(np.stack(rows)), row_labels=labels, col_labels=cols, vmin=0, vmax=1, panel=1.0, fig=fig)


def _fmt(v: Any) -> str:
    v = float(v)
    return f"{v:.0f}" if abs(v - round(v)) < 1e-9 or abs(v) >= 20 else f"{v:.1f}"


def _display(imgs: np.ndarray) -> np.ndarray:
    # (rows, cols, C, H, W) -> grey (rows, cols, H, W) or colour (rows, cols, H, W, 3)
    if imgs.shape[2] == 1:
        return imgs[:, :, 0]
    return np.moveaxis(imgs, 2, -1)


# ----------------------------------------------------------------------------------------------
# the runner
# ----------------------------------------------------------------------------------------------
def run_benchmark(config: BenchmarkConfig | Mapping[str, Any] | None = None, **overrides: Any) -> BenchmarkResult:
    """Train the deep SCMs of the configuration and score them (Tables 1-5 plus the truth).

    Parameters
    ----------
    config : BenchmarkConfig or mapping, optional
        Settings (a mapping is turned into a :class:`BenchmarkConfig`).
    **overrides
        Fields of :class:`BenchmarkConfig` to override.

    Returns
    -------
    BenchmarkResult

    Raises
    ------
    ValueError
        Unknown settings, models or datasets.
    """
    if config is None:
        config = BenchmarkConfig()
    if isinstance(config, Mapping):
        config = {**config}
    elif isinstance(config, BenchmarkConfig):
        config = asdict(config)
    else:
        raise TypeError(f"config must be a BenchmarkConfig or a mapping, got {type(config).__name__}")
    known = set(BenchmarkConfig.__dataclass_fields__)
    unknown = [k for k in {**config, **overrides} if k not in known]
    if unknown:
        raise ValueError(f"unknown benchmark setting(s) {unknown}; known: {sorted(known)}")
    cfg = BenchmarkConfig(**{**config, **overrides})
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    spec = _spec(cfg)
    parents = spec["parents"]

    t0 = time.perf_counter()
    train, test = _make_data(cfg)
    x_train = np.asarray(train.x, np.float32) * np.float32(spec["scale"])
    pa_train = spec["encoder"]({p: getattr(train, p) for p in parents})
    obs = _obs(test, spec["scale"])
    timings["data"] = time.perf_counter() - t0

    # Anti-causal predictors (evaluation), and a second set for counterfactual fine-tuning
    # trained on the other half of the data, so the fine-tuned HVAE is not scored by its teacher.
    t0 = time.perf_counter()
    shape = (spec["channels"], cfg.size, cfg.size)
    predictors = {}
    for j, p in enumerate(parents):
        kind = spec["kinds"][p]
        pred = AntiCausalPredictor(shape, kind, n_classes=10 if kind == "multiclass" else None, width=cfg.width, hidden=cfg.hidden, seed=cfg.seed + j)
        predictors[p] = pred.fit(x_train, getattr(train, p), epochs=cfg.predictor_epochs, balance=kind != "regression",
                                 device=cfg.device, seed=cfg.seed + j)
    predictors_ft = None
    if "hvae_cf" in cfg.models:
        half = np.arange(len(x_train)) % 2 == 1
        predictors_ft = {}
        for j, p in enumerate(parents):
            pred = AntiCausalPredictor(shape, "binary", width=cfg.width, hidden=cfg.hidden, seed=cfg.seed + 100 + j)
            predictors_ft[p] = pred.fit(x_train[half], getattr(train, p)[half], epochs=cfg.predictor_epochs, balance=True,
                                        device=cfg.device, seed=cfg.seed + 100 + j)
    timings["predictors"] = time.perf_counter() - t0
    quality = []
    for p, pred in predictors.items():
        from ..metrics.benchmark_metrics import score as _score

        s, _ = _score(pred.kind, getattr(test, p), pred.predict(obs["x"]))
        quality.append({"attribute": p, "metric": {"regression": "MAE", "multiclass": "accuracy", "binary": "F1"}[pred.kind], "real test images": s})
    quality = pd.DataFrame(quality)

    def _features(images: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        outs = [pred._maps(images) for pred in predictors.values()]  # one pass per predictor
        return np.concatenate([o[1] for o in outs], axis=1), [m for o in outs for m in o[0]]

    features = memoize_features(_features)

    def embed(images: np.ndarray) -> np.ndarray:
        return features(images)[0]

    def maps(images: np.ndarray) -> list[np.ndarray]:
        return features(images)[1]

    distances = {"l1_pixel": l1_pixel(255.0), "l1_embedding": embedding_l1(embed), "perceptual": perceptual_distance(maps)}

    t0 = time.perf_counter()
    learned_attr, true_attr = _attribute_mechanisms(cfg, train, spec)
    timings["attribute mechanisms"] = time.perf_counter() - t0
    mechs = _train_image_models(cfg, x_train, pa_train, spec, predictors_ft, timings)
    raw = mechs.pop("_raw")
    scms: dict[str, DeepSCM] = {}
    for name in cfg.baselines:
        if name == "identity":
            scms[name] = DeepSCM(test.graph, {**learned_attr, "x": IdentityImage()})
        else:
            scms[name] = DeepSCM(test.graph, {**true_attr, "x": OracleImage(test, scale=spec["scale"])})
    for name in cfg.models:
        scms[name] = DeepSCM(test.graph, {**learned_attr, "x": mechs[name]})

    t0 = time.perf_counter()
    cld_encode = _cld_encoder(cfg, x_train, spec)
    timings["CLD encoder"] = time.perf_counter() - t0
    real_features = embed(x_train)
    mu_f, lv_f = cld_encode(obs["x"])

    # One set of interventions for every model: paired comparisons on the same units and values.
    rng = as_generator(cfg.seed + 1)
    sampler = InterventionSampler({p: getattr(test, p) for p in parents}, discrete=spec["discrete"], n_bins=cfg.n_bins)
    do_values = {p: sampler.sample(p, getattr(test, p), rng) for p in parents}
    chosen = rng.integers(0, len(parents), cfg.n_test)  # one random parent per unit for realism / minimality
    ref_groups = np.column_stack([sampler.bin(p, getattr(test, p)) for p in parents])
    truth: dict[str, dict[str, np.ndarray]] = {}
    oracle_scm = DeepSCM(test.graph, {**true_attr, "x": OracleImage(test, scale=spec["scale"])})
    for p in parents:
        truth[p] = oracle_scm.counterfactual(obs, {p: do_values[p]})

    show = np.arange(min(cfg.n_show, cfg.n_test))
    ctx = _EvalContext(cfg=cfg, parents=parents, kinds=spec["kinds"], obs=obs, distances=distances, predictors=predictors,
                       sampler=sampler, do_values=do_values, truth=truth, chosen=chosen, cld_encode=cld_encode, mu_f=mu_f,
                       lv_f=lv_f, ref_groups=ref_groups, real_features=real_features, embed=embed, show=show)
    comp_rows, eff_rows, rm_rows, true_rows = [], [], [], []
    per_image: dict[str, dict[str, Any]] = {}
    figures: dict[str, Any] = {"composition": {}, "interventions": {}, "factual": obs["x"][show], "do_values": {p: do_values[p][show] for p in parents},
                               "true": {p: truth[p]["x"][show] for p in parents}, "factual_parents": {p: obs[p][show] for p in parents}}
    for name, scm in scms.items():
        t0 = time.perf_counter()
        ev = evaluate_scm(ctx, scm, MODEL_LABELS[name])
        comp_rows += ev["rows"]["composition"]
        eff_rows += ev["rows"]["effectiveness"]
        rm_rows.append(ev["rows"]["realism_minimality"])
        true_rows.append(ev["rows"]["true_error"])
        per_image[name] = ev["per_image"]
        figures["composition"][name] = ev["figures"]["composition"]
        figures["interventions"][name] = ev["figures"]["interventions"]
        timings[f"evaluate {name}"] = time.perf_counter() - t0

    comp_df = pd.DataFrame(comp_rows)
    table_comp = comp_df.pivot_table(index="model", columns=["distance", "cycles"], values=["mean", "std"], sort=False)
    table_comp = table_comp.reorder_levels([1, 2, 0], axis=1).sort_index(axis=1, level=[0, 1], sort_remaining=False)
    eff_df = pd.DataFrame(eff_rows)
    metric_name = {"regression": "MAE", "multiclass": "acc", "binary": "F1"}
    eff_df["attribute"] = [f"{a} {metric_name[spec['kinds'][a]]}" for a in eff_df["attribute"]]
    table_eff = eff_df.pivot_table(index="model", columns=["attribute", "intervention"], values="score", sort=False)
    table_rm = pd.DataFrame(rm_rows).set_index("model")
    table_rm["identity CLD"] = identity_cld(cfg.cld_weights)
    table_true = pd.DataFrame(true_rows).set_index("model")
    timings["total"] = time.perf_counter() - t_all
    extras = {"raw_models": raw, "predictors": predictors, "do_values": do_values, "test": test, "obs": obs,
              "sampler": sampler, "distances": distances, "embed": embed, "cld_encode": cld_encode, "truth": truth,
              "learned_attributes": learned_attr, "mechanisms": mechs, "real_features": real_features, "context": ctx}
    return BenchmarkResult(config=cfg, table_composition=table_comp, table_effectiveness=table_eff, table_realism_minimality=table_rm,
                           table_true_error=table_true, per_image=per_image, figures=figures, predictor_quality=quality,
                           timings=timings, models=scms, extras=extras)
