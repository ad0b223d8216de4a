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

The module also holds the chapter's studies (the learned intensity flow of notebook 01, the temperature
sweep of 02, the metric-versus-truth configurations of 04), its figures, and one ``claims_<nn>``
function per notebook that turns the measured results into the recorded claim verdicts.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .. import claims
from ..data.morphosynth import MorphoSynth, encode_parents, make_morphosynth
from ..data.smileyfaces import SmileyFaces, make_smileyfaces
from ..metrics.benchmark_metrics import (
    InterventionSampler,
    embedding_l1,
    l1_pixel,
    memoize_features,
    paired_comparison,
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
    "FlowCheck", "fit_intensity_flow", "benchmark_results", "temperature_table", "paired_table", "score_configurations",
    "oriented_proxy", "rank_agreement", "within_model_agreement", "agreement_summary",
    "plot_morphosynth_attributes", "plot_glyph_skeletons", "plot_attribute_sweeps", "plot_interventional_vs_counterfactual",
    "plot_flow_fit", "plot_composition_curves", "plot_cld_histograms", "plot_p1_p2", "plot_finetuning_history",
    "plot_proxies_vs_truth", "claims_01", "claims_02", "claims_03", "claims_04",
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
                mu, sigma = vae.posterior(xb, torch.zeros(len(xb), 1, device=vae.device))
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


def composition_grid(result: BenchmarkResult, models: Sequence[str], units: Sequence[int] = (0, 1, 2), fig: Any = None) -> np.ndarray:
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


def intervention_grid(result: BenchmarkResult, models: Sequence[str], unit: int = 0, fig: Any = None) -> np.ndarray:
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
        outs = [pred.feature_maps(images, return_embedding=True) for pred in predictors.values()]  # one pass per predictor
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


# ----------------------------------------------------------------------------------------------
# notebook 01: MorphoSynth and a learned attribute mechanism
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FlowCheck:
    """A conditional flow fitted to MorphoSynth's intensity mechanism and checked against the truth.

    Attributes
    ----------
    flow : ConditionalFlow1D
        The fitted flow of ``i | t``.
    test : slice
        The held-out units (the second half of the data).
    eps_hat : numpy.ndarray
        Noise abducted by the flow on the held-out units.
    roundtrip : float
        Largest ``|predict(abduct(i)) - i|`` on the held-out units (grey levels).
    cf_mae : float
        Mean ``|i*_flow - i*_true|`` under ``do(t = t_star)`` on the held-out units (grey levels).
    t_star : float
        The intervention value.
    """

    flow: Any
    test: slice
    eps_hat: np.ndarray
    roundtrip: float
    cf_mae: float
    t_star: float


def fit_intensity_flow(data: MorphoSynth, *, epochs: int, seed: int, t_star: float = 4.0) -> FlowCheck:
    """Fit the paper's conditional flow of intensity given thickness (Sec. 3.2) and check it against the truth.

    The flow is trained on the first half of the units; the second half measures the exactness of its
    inverse and the error of its counterfactual intensities under ``do(t = t_star)``.

    Parameters
    ----------
    data : MorphoSynth
        Units with their true attribute mechanisms.
    epochs : int
        Training epochs of the flow.
    seed : int
        Seed of the flow's initialisation and training.
    t_star : float
        Thickness of the counterfactual check.

    Returns
    -------
    FlowCheck
    """
    from ..models.flows import ConditionalFlow1D

    half = len(data) // 2
    flow = ConditionalFlow1D(["t"], bounds=(64.0, 255.0), seed=seed).fit(
        data.i[:half], {"t": data.t[:half]}, epochs=epochs, seed=seed, device="cpu")
    test = slice(half, None)
    eps_hat = flow.abduct(data.i[test], {"t": data.t[test]})
    roundtrip = np.max(np.abs(flow.predict(eps_hat, {"t": data.t[test]}) - data.i[test]))
    true_cf_i = morpho_attributes().counterfactual({"t": data.t[test], "i": data.i[test]}, {"t": t_star})["i"]
    flow_cf_i = flow.predict(eps_hat, {"t": np.full(len(eps_hat), t_star)})
    return FlowCheck(flow=flow, test=test, eps_hat=eps_hat, roundtrip=float(roundtrip),
                     cf_mae=float(np.mean(np.abs(flow_cf_i - true_cf_i))), t_star=t_star)


def plot_morphosynth_attributes(data: MorphoSynth, axes: Any = None) -> np.ndarray:
    """Fig. 1a's data: the joint distribution of thickness and intensity, and the thickness histogram.

    Parameters
    ----------
    data : MorphoSynth
    axes : sequence of two matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import subplots

    if axes is None:
        _, axes = subplots(1, 2, width=3.6, height=3.0)
    axes[0].scatter(data.t, data.i, s=3, alpha=0.3)
    tt = np.linspace(data.t.min(), data.t.max(), 200)
    axes[0].plot(tt, 64 + 191 / (1 + np.exp(-2 * (tt - 2.5))), color="C1", label="i at eps = 0")
    axes[0].set_xlabel("thickness t (px at 28x28)")
    axes[0].set_ylabel("intensity i")
    axes[0].legend()
    axes[1].hist(data.t, bins=40)
    axes[1].set_xlabel("thickness t")
    axes[1].set_ylabel("count")
    return axes


def plot_glyph_skeletons(fonts: Sequence[int] = (0, 3, 6, 9), digit: int = 3, axes: Any = None) -> np.ndarray:
    """The one-pixel skeletons that MorphoSynth thickens: one digit in several fonts.

    Parameters
    ----------
    fonts : sequence of int
        Indices into :data:`cflib.data.morphosynth.FONTS`.
    digit : int
        The digit drawn.
    axes : sequence of matplotlib axes, optional
        One per font.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..data.morphosynth import FONTS, glyph_skeletons
    from ..plotting import subplots

    if axes is None:
        _, axes = subplots(1, len(fonts), width=1.6, height=1.8)
    points, counts = glyph_skeletons()
    for ax, f in zip(np.atleast_1d(axes), fonts, strict=True):
        p = points[f, digit, : counts[f, digit]]
        ax.scatter(p[:, 0], p[:, 1], s=2)
        ax.set_title(FONTS[f].replace(".ttf", ""), fontsize=7)
        ax.set_aspect("equal")
        ax.set_axis_off()
    return axes


def plot_attribute_sweeps(data: MorphoSynth, unit: int, t_values: Sequence[float], i_values: Sequence[float]) -> np.ndarray:
    """True counterfactuals of one unit along thickness (top row) and along intensity (bottom row).

    Parameters
    ----------
    data : MorphoSynth
    unit : int
        The unit whose exogenous noise is kept.
    t_values, i_values : sequence of float
        The same number of thickness and intensity values.

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import image_grid

    if len(t_values) != len(i_values):
        raise ValueError(f"t_values and i_values must have the same length, got {len(t_values)} and {len(i_values)}")
    idx = np.array([unit])
    along_t = np.concatenate([data.true_counterfactual({"t": v}, idx=idx)["x"] for v in t_values])
    along_i = np.concatenate([data.true_counterfactual({"i": v}, idx=idx)["x"] for v in i_values])
    return image_grid(np.stack([along_t[:, 0], along_i[:, 0]]) / 255, row_labels=["do(t)", "do(i)"],
                      col_labels=[f"t={a:.1f} / i={b:.0f}" for a, b in zip(t_values, i_values, strict=True)],
                      vmin=0, vmax=1, panel=1.0)


def plot_interventional_vs_counterfactual(scm: DeepSCM, obs: Mapping[str, np.ndarray], noise_i: np.ndarray, *,
                                          t: float = 4.0, seed: int = 0, axes: Any = None) -> np.ndarray:
    """Intensities under ``do(t)``: fresh units (interventional) against the same units (counterfactual).

    Parameters
    ----------
    scm : DeepSCM
        The (true) MorphoSynth SCM.
    obs : mapping
        Observed units.
    noise_i : numpy.ndarray
        The units' true intensity noise.
    t : float
        The intervention value.
    seed : int
        Seed of the interventional sample.
    axes : sequence of two matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import subplots

    interv = scm.sample(len(noise_i), {"t": t}, seed=seed)
    cf = scm.counterfactual(obs, {"t": t})
    r_cf = np.corrcoef(noise_i, cf["i"])[0, 1]
    r_int = np.corrcoef(noise_i, interv["i"])[0, 1]
    if axes is None:
        _, axes = subplots(1, 2, width=3.6, height=3.0)
    axes[0].hist([interv["i"], cf["i"]], bins=40, label=["interventional", "counterfactual"])
    axes[0].set_xlabel(f"intensity under t = {t:g}")
    axes[0].legend()
    axes[1].scatter(noise_i, cf["i"], s=2, alpha=0.3, label=f"counterfactual (r = {r_cf:.2f})")
    axes[1].scatter(noise_i, interv["i"], s=2, alpha=0.3, label=f"interventional (r = {r_int:.2f})")
    axes[1].set_xlabel("the unit's eps_i")
    axes[1].set_ylabel(f"intensity under t = {t:g}")
    axes[1].legend(fontsize=7)
    return axes


def plot_flow_fit(check: FlowCheck, data: MorphoSynth, t_values: Sequence[float] = (1.8, 2.5, 3.5), axes: Any = None) -> np.ndarray:
    """The flow's training curve, its abducted noise against the true noise, and ``p(i | t)`` against the truth.

    Parameters
    ----------
    check : FlowCheck
        From :func:`fit_intensity_flow`.
    data : MorphoSynth
        The data it was fitted on.
    t_values : sequence of float
        Thicknesses at which the densities are drawn.
    axes : sequence of three matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import identity_line, subplots

    if axes is None:
        _, axes = subplots(1, 3, width=3.2, height=2.9)
    flow = check.flow
    axes[0].plot(flow.history_)
    axes[0].set_xlabel("epoch")
    axes[0].set_ylabel("validation NLL")
    axes[1].scatter(data.noise["i"][check.test], check.eps_hat, s=2, alpha=0.3)
    identity_line(axes[1])
    axes[1].set_xlabel("true eps_i")
    axes[1].set_ylabel("abducted by the flow")
    grid = np.linspace(64.5, 254.5, 400)
    for k, tv in enumerate(t_values):
        dens = np.exp(flow.log_prob(grid, {"t": np.full(len(grid), tv)}).detach().numpy())
        z = (np.log((grid - 64) / (255 - grid)) - 2 * (tv - 2.5)) / 0.5
        true_dens = np.exp(-0.5 * z**2) / np.sqrt(2 * np.pi) / 0.5 * 191 / ((grid - 64) * (255 - grid))
        axes[2].plot(grid, dens, color=f"C{k}", label=f"t = {tv}")
        axes[2].plot(grid, true_dens, color=f"C{k}", ls="--")
    axes[2].set_xlabel("intensity")
    axes[2].set_ylabel("p(i | t): flow (solid), true (dashed)")
    axes[2].legend(fontsize=7)
    return axes


# ----------------------------------------------------------------------------------------------
# notebooks 02-04: studies on a benchmark run
# ----------------------------------------------------------------------------------------------
def benchmark_results(result: BenchmarkResult) -> dict[str, Any]:
    """The plain results dict that :func:`claims_02` and :func:`claims_03` read from a benchmark run.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.

    Returns
    -------
    dict
        ``models`` (the trained model keys), ``cycles``, the tables ``composition``, ``effectiveness``,
        ``realism_minimality``, ``predictor_quality``, and ``per_image`` and ``obs`` (factual test units).
    """
    return {"models": tuple(result.config.models), "cycles": result.config.cycles,
            "composition": result.table_composition, "effectiveness": result.table_effectiveness,
            "realism_minimality": result.table_realism_minimality, "predictor_quality": result.predictor_quality,
            "per_image": result.per_image, "obs": result.extras["obs"]}


def _at_temperatures(result: BenchmarkResult, models: Sequence[str],
                     temperatures: Sequence[float]) -> Iterator[tuple[str, float, dict[str, Any]]]:
    """Yield ``(model, T, evaluate_scm output)`` for each trained model re-scored at each temperature."""
    for mdl in models:
        for T in temperatures:
            label = f"{MODEL_LABELS[mdl]} T={T}"
            yield mdl, T, evaluate_scm(result.extras["context"], with_temperature(result, mdl, T), label)


def temperature_table(result: BenchmarkResult, models: Sequence[str], temperatures: Sequence[float]) -> pd.DataFrame:
    """Composition after one cycle and the true error of trained models re-scored at other noise temperatures.

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.
    models : sequence of str
        Trained VAE / HVAE keys.
    temperatures : sequence of float
        Pixel-noise temperatures ``T``.

    Returns
    -------
    pandas.DataFrame
        Index ``(model, T)``; columns the ``m=1`` composition distances and ``true error``.
    """
    rows = [{"model": MODEL_LABELS[mdl], "T": T, **{k: v for k, v in ev["summary"].items() if "m=1" in k or k == "true error"}}
            for mdl, T, ev in _at_temperatures(result, models, temperatures)]
    return pd.DataFrame(rows).set_index(["model", "T"])


def _composition(per_image: Mapping[str, Any], mdl: str, dist: str = "l1_pixel", m: int = 1) -> np.ndarray:
    return per_image[mdl]["composition"][dist][:, m - 1]


def paired_table(result: BenchmarkResult, pairs: Sequence[tuple[str, str]], *, seed: int = 0,
                 distances: Sequence[str] = ("l1_pixel", "l1_embedding", "perceptual")) -> pd.DataFrame:
    """Paired comparisons of composition between models on the same test images (after 1 and ``cycles`` cycles).

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark`.
    pairs : sequence of (str, str)
        Model keys ``(a, b)``; the difference is ``a - b``.
    seed : int
        Seed of the paired bootstrap interval.
    distances : sequence of str
        Composition distances.

    Returns
    -------
    pandas.DataFrame
        One row per distance, cycle count and pair: mean difference, bootstrap 95 % interval, Wilcoxon p.
    """
    rows = []
    for dist in distances:
        for m in sorted({1, result.config.cycles}):
            for a, b in pairs:
                r = paired_comparison(_composition(result.per_image, a, dist, m), _composition(result.per_image, b, dist, m), seed=seed)
                rows.append({"distance": dist, "m": m, "a": MODEL_LABELS[a], "b": MODEL_LABELS[b], "mean(a - b)": r.mean_diff,
                             "95% CI": f"[{r.ci[0]:.3g}, {r.ci[1]:.3g}]", "Wilcoxon p": r.pvalue})
    return pd.DataFrame(rows)


def score_configurations(result: BenchmarkResult, temperatures: Sequence[float]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Score a family of configurations on the same test units: VAEs / HVAE at each temperature, GANs, references.

    Parameters
    ----------
    result : BenchmarkResult
        A MorphoSynth run of :func:`run_benchmark` with the VAEs, the HVAE, both GANs and both references.
    temperatures : sequence of float
        Pixel-noise temperatures of the VAEs and the HVAE.

    Returns
    -------
    configs : pandas.DataFrame
        One row per configuration: ``kind`` (``model`` or ``reference``) and the summary of
        :func:`evaluate_scm` (composition, effectiveness, Fréchet, CLD, true error).
    per_image : dict
        Configuration label -> per-image arrays.
    """
    rows, per_image = [], {}

    def add(label: str, kind: str, ev: dict[str, Any]) -> None:
        rows.append({"configuration": label, "kind": kind, **ev["summary"]})
        per_image[label] = ev["per_image"]

    for mdl, T, ev in _at_temperatures(result, ("vae_fixed", "vae_learned", "hvae"), temperatures):
        add(f"{MODEL_LABELS[mdl]} T={T}", "model", ev)
    ctx = result.extras["context"]
    for mdl in ("gan", "gan_ft"):
        add(MODEL_LABELS[mdl], "model", evaluate_scm(ctx, result.models[mdl], mdl))
    for ref in ("identity", "true"):
        add(MODEL_LABELS[ref], "reference", evaluate_scm(ctx, result.models[ref], ref))
    return pd.DataFrame(rows).set_index("configuration"), per_image


def oriented_proxy(configs: pd.DataFrame, column: str) -> np.ndarray:
    """A proxy metric oriented so that lower is better (digit accuracy enters as ``1 - accuracy``).

    Parameters
    ----------
    configs : pandas.DataFrame
        From :func:`score_configurations`.
    column : str
        A summary column.

    Returns
    -------
    numpy.ndarray
    """
    v = configs[column].to_numpy(float)
    return 1 - v if " d do(d)" in column else v


def rank_agreement(configs: pd.DataFrame) -> pd.DataFrame:
    """Spearman correlation across configurations between each proxy metric and the true counterfactual error.

    Parameters
    ----------
    configs : pandas.DataFrame
        From :func:`score_configurations`.

    Returns
    -------
    pandas.DataFrame
        Rows the proxies; columns ``(Spearman rho | p-value, all configurations | models only)``; NaN where
        a proxy or the truth is constant on the set (no ranking).
    """
    from scipy import stats

    proxies = [c for c in configs.columns if c.startswith("composition") or c in ("Fréchet", "CLD")]
    proxies += [c for c in configs.columns if c.startswith("effectiveness")]
    agree = []
    for name in proxies:
        for subset, mask in (("all configurations", np.ones(len(configs), bool)), ("models only", (configs["kind"] == "model").to_numpy())):
            a, b = oriented_proxy(configs, name)[mask], configs["true error"].to_numpy()[mask]
            r = stats.spearmanr(a, b) if np.ptp(a) > 0 and np.ptp(b) > 0 else None
            agree.append({"proxy": name, "set": subset, "Spearman rho": np.nan if r is None else r.statistic,
                          "p-value": np.nan if r is None else r.pvalue, "n": int(mask.sum())})
    return pd.DataFrame(agree).pivot_table(index="proxy", columns="set", values=["Spearman rho", "p-value"], dropna=False)


def within_model_agreement(per_image: Mapping[str, Any]) -> pd.DataFrame:
    """Spearman correlation over test images between per-image composition and per-image true error.

    Only the trained models at their benchmark temperatures (0.1 and 0.3) and the GANs are kept.

    Parameters
    ----------
    per_image : mapping
        From :func:`score_configurations`.

    Returns
    -------
    pandas.DataFrame
        Rows configurations, columns interventions, values Spearman's rho.
    """
    from scipy import stats

    within = []
    for label, pi in per_image.items():
        if not (label.endswith("T=0.1") or label.endswith("T=0.3") or label.startswith("GAN")):
            continue
        c1 = pi["composition"]["l1_pixel"][:, 0]
        for do, err in pi["true_error"].items():
            if np.ptp(c1) == 0 or np.ptp(err) == 0:
                continue
            r = stats.spearmanr(c1, err)
            within.append({"configuration": label, "intervention": f"do({do})", "rho": r.statistic, "p": r.pvalue})
    return pd.DataFrame(within).pivot_table(index="configuration", columns="intervention", values="rho")


def agreement_summary(agreement: pd.DataFrame) -> str:
    """One line per headline proxy: its Spearman rho and p-value against the true error, models only.

    Parameters
    ----------
    agreement : pandas.DataFrame
        From :func:`rank_agreement`.

    Returns
    -------
    str
    """
    lines = []
    for name in ("composition l1_pixel m=1", "Fréchet", "CLD", "effectiveness t do(t)", "effectiveness i do(i)", "effectiveness d do(d)"):
        r, p = agreement[("Spearman rho", "models only")][name], agreement[("p-value", "models only")][name]
        lines.append(f"{name}: Spearman rho = {r:+.2f} (p = {p:.2g}) against the true error across model configurations")
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# figures of notebooks 02-04
# ----------------------------------------------------------------------------------------------
def plot_composition_curves(result: BenchmarkResult, models: Sequence[str],
                            distances: Sequence[str] = ("l1_pixel", "l1_embedding", "perceptual"), axes: Any = None) -> np.ndarray:
    """Mean composition distance against the number of cycles, with 95 % bands over images (Table 1's curves).

    Parameters
    ----------
    result : BenchmarkResult
    models : sequence of str
        Model keys.
    distances : sequence of str
        One panel per distance.
    axes : sequence of matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import line_with_band, subplots

    if axes is None:
        _, axes = subplots(1, len(distances), width=3.6, height=3.0)
    axes = np.atleast_1d(axes)
    for ax, dist in zip(axes, distances, strict=True):
        for mdl in models:
            arr = result.per_image[mdl]["composition"][dist]
            se = arr.std(0, ddof=1) / np.sqrt(len(arr))
            line_with_band(np.arange(1, arr.shape[1] + 1), arr.mean(0), arr.mean(0) - 1.96 * se, arr.mean(0) + 1.96 * se,
                           label=MODEL_LABELS[mdl], ax=ax)
        ax.set_xlabel("cycles m")
        ax.set_title(dist)
    axes[0].legend(fontsize=7)
    return axes


def plot_cld_histograms(result: BenchmarkResult, models: Sequence[str], *, unit: str = "test image", ax: Any = None) -> Any:
    """Per-image CLD of each model, with the identity map's value ``log(0.8 + 0.2e)`` marked.

    Parameters
    ----------
    result : BenchmarkResult
    models : sequence of str
        Model or reference keys.
    unit : str
        What a test unit is called on the axis label.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    for mdl in models:
        ax.hist(result.per_image[mdl]["cld"], bins=30, histtype="step", label=MODEL_LABELS[mdl])
    ident = identity_cld(result.config.cld_weights)
    ax.axvline(ident, color="0.3", ls="--", label=f"identity {ident:.4f}")
    ax.set_xlabel(f"CLD per {unit}")
    ax.legend(fontsize=6)
    return ax


def plot_p1_p2(table: pd.DataFrame, ax: Any = None) -> Any:
    """Each model's ``P1 = P(S_x* <= div)`` against ``P2 = P(S_x >= div)`` (Table 5's minimality columns).

    Parameters
    ----------
    table : pandas.DataFrame
        ``result.table_realism_minimality``.
    ax : matplotlib.axes.Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    ax = plt.gca() if ax is None else ax
    ax.scatter(table["P1"], table["P2"])
    for name, row in table.iterrows():
        ax.annotate(name.split(" (")[0] if "VAE" not in name else name, (row["P1"], row["P2"]), fontsize=6)
    ax.set_xlabel("P1 = P(S_x* <= div)")
    ax.set_ylabel("P2 = P(S_x >= div)")
    return ax


def plot_finetuning_history(history: Mapping[str, Sequence[float]], axes: Any = None) -> np.ndarray:
    """The HVAE's counterfactual fine-tuning: classifier loss, NELBO against its constraint, Lagrange multiplier.

    Parameters
    ----------
    history : mapping
        ``result.extras["raw_models"]["hvae_cf_history"]`` (``cf_loss``, ``nelbo``, ``constraint``, ``lambda``).
    axes : sequence of three matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import subplots

    if axes is None:
        _, axes = subplots(1, 3, width=3.0, height=2.6)
    axes[0].plot(history["cf_loss"])
    axes[0].set_title("classifier loss on x*")
    axes[1].plot(history["nelbo"])
    axes[1].axhline(history["constraint"][0], color="0.3", ls="--")
    axes[1].set_title("NELBO per pixel (constraint dashed)")
    axes[2].plot(history["lambda"])
    axes[2].set_title("Lagrange multiplier")
    for ax in axes:
        ax.set_xlabel("step")
    return axes


def plot_proxies_vs_truth(configs: pd.DataFrame, proxies: Sequence[str], axes: Any = None) -> np.ndarray:
    """Each configuration's oriented proxy metric against its true counterfactual error, one panel per proxy.

    Parameters
    ----------
    configs : pandas.DataFrame
        From :func:`score_configurations`.
    proxies : sequence of str
        Summary columns.
    axes : sequence of matplotlib axes, optional

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
    """
    from ..plotting import subplots

    if axes is None:
        _, axes = subplots(1, len(proxies), width=2.8, height=2.8)
    axes = np.atleast_1d(axes)
    colours = {"vae_fixed": "C0", "vae_learned": "C1", "hvae": "C2"}
    for ax, name in zip(axes, proxies, strict=True):
        for label, row in configs.iterrows():
            c = next((col for k, col in colours.items() if label.startswith(MODEL_LABELS[k])), "C3" if row["kind"] == "model" else "0.2")
            ax.scatter(oriented_proxy(configs, name)[configs.index.get_loc(label)], row["true error"], color=c, s=18,
                       marker="o" if row["kind"] == "model" else "*")
        ax.set_xlabel(name, fontsize=8)
    axes[0].set_ylabel("true counterfactual error (pixel l1)")
    for label in (MODEL_LABELS["identity"], MODEL_LABELS["true"]):
        axes[0].annotate(label.split(" (")[0], (oriented_proxy(configs, proxies[0])[configs.index.get_loc(label)],
                                                 configs.loc[label, "true error"]), fontsize=7)
    return axes


# ----------------------------------------------------------------------------------------------
# claims
# ----------------------------------------------------------------------------------------------
#: The paper's Table 5 as printed (all 11 rows: CLD, P1, P2), for claim M2.
PAPER_TABLE5 = np.array([[0.276, 0.065, 0.843], [0.268, 0.055, 0.839], [0.272, 0.112, 0.736], [0.390, 0.339, 0.570],
                         [0.286, 0.119, 0.764], [0.310, 0.072, 0.925], [0.297, 0.014, 0.984], [0.295, 0.0001, 0.999],
                         [0.295, 0.003, 0.996], [0.362, 0.224, 0.777], [0.304, 0.046, 0.953]])


def claims_01(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 01 (MorphoSynth): graph mutilation (E6) and the learned intensity flow (X0-flow).

    Parameters
    ----------
    results : mapping
        ``mutilation``: four numbers in this order: mean ``|i* - i|`` after ``do(t)``, max ``|t* - t|`` after
        ``do(i)``, max ``|t* - t|`` after ``do(d)``, max ``|i* - i|`` after ``do(d)``; ``n_units``: units
        of the mutilation check; ``roundtrip`` and ``flow_mae`` from :class:`FlowCheck`; ``n_heldout``:
        its held-out units.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, ("mutilation", "n_units", "roundtrip", "flow_mae", "n_heldout"), "claims_01")
    mutilation = [float(v) for v in results["mutilation"]]
    if len(mutilation) != 4:
        raise ValueError(f"results['mutilation'] must hold 4 numbers (see the docstring), got {len(mutilation)}")
    roundtrip, flow_mae = results["roundtrip"], results["flow_mae"]
    claims.claim("E6", "Graph mutilation: after do(t) the intensity changes; after do(i) the thickness does not; after do(d) neither does.",
                 paper="qualitative (Fig. 4 / 7, deterministic given the SCM)",
                 ours=f"mean |i*-i| = {mutilation[0]:.2f}; max |t*-t| = {mutilation[1]:.1e}, {mutilation[2]:.1e}",
                 holds=bool(mutilation[0] > 1 and mutilation[1] == 0 and mutilation[2] == 0 and mutilation[3] < 1e-9),
                 evidence=f"true SCM on {results['n_units']} units: exact equalities for the non-descendants, mean change > 1 grey level for i")
    claims.claim("X0-flow", "A conditional flow recovers the intensity mechanism: exact inverse and accurate counterfactuals.",
                 paper="flows are exactly invertible (Sec. 3.2)", ours=f"round trip {roundtrip:.1e}; cf MAE {flow_mae:.2f}",
                 holds=bool(roundtrip < 1e-2 and flow_mae < 3.0),
                 evidence=f"round-trip error < 1e-2 grey levels; counterfactual MAE under do(t=4) < 3 grey levels on {results['n_heldout']} held-out units")
    return claims.rows(["E6", "X0-flow"])


_BENCHMARK_KEYS = ("models", "cycles", "composition", "effectiveness", "realism_minimality", "predictor_quality", "per_image", "obs")


def claims_02(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 02 (MorphoSynth benchmark): composition, effectiveness, realism, minimality, overall.

    Composition orderings need a lower mean and a paired Wilcoxon p < 0.05; effectiveness, realism and
    minimality claims compare table cells; M2 checks the paper's own Table 5 (:data:`PAPER_TABLE5`).
    Records ``cld_jensen_gap``.

    Parameters
    ----------
    results : mapping
        :func:`benchmark_results` of a MorphoSynth run with the five models (``vae_fixed``,
        ``vae_learned``, ``hvae``, ``gan``, ``gan_ft``) and both references, plus
        ``composition_at_T1_max`` (the largest pixel composition after one cycle at ``T = 1``, from
        :func:`temperature_table`).

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, (*_BENCHMARK_KEYS, "composition_at_T1_max"), "claims_02")
    L, MODELS, cycles = MODEL_LABELS, tuple(results["models"]), results["cycles"]
    T1, E, R = results["composition"], results["effectiveness"], results["realism_minimality"]
    per_image, comp_at_T1 = results["per_image"], results["composition_at_T1_max"]

    def comp(mdl: str, dist: str = "l1_pixel", m: int = 1) -> np.ndarray:
        return _composition(per_image, mdl, dist, m)

    def mean(mdl: str, dist: str, m: int) -> float:
        return T1.loc[L[mdl], (dist, m, "mean")]

    def better(a: str, b: str, dist: str, m: int) -> bool:  # a lower than b and the paired test agrees
        r = paired_comparison(comp(a, dist, m), comp(b, dist, m))
        return r.mean_diff < 0 and r.pvalue < 0.05

    dists = ("l1_pixel", "l1_embedding", "perceptual")
    c1 = {(d, m, v): better("hvae", v, d, m) for d in dists for m in (1, cycles) for v in ("vae_fixed", "vae_learned")}
    claims.claim("C1", "The HVAE composes better than both VAEs on every distance, at 1 and 10 cycles.",
                 paper="0.438 vs 2.600 / 4.244 (pixel, m=1); 1.550 vs 7.698 / 9.855 (m=10)",
                 ours=f"{sum(c1.values())}/{len(c1)} comparisons; pixel m=1: {mean('hvae','l1_pixel',1):.2f} vs {mean('vae_learned','l1_pixel',1):.2f} / {mean('vae_fixed','l1_pixel',1):.2f}",
                 holds=all(c1.values()), evidence="paired Wilcoxon p < 0.05 and lower mean, for all 12 comparisons")
    c2 = {(mdl, d): bool(np.mean(comp(mdl, d, cycles)) > np.mean(comp(mdl, d, 1)) and paired_comparison(comp(mdl, d, cycles), comp(mdl, d, 1)).pvalue < 0.05)
          for mdl in ("vae_fixed", "vae_learned", "hvae", "gan_ft") for d in dists}
    claims.claim("C2", "Composition error grows with the number of cycles (VAEs, HVAE, GAN fine-tuned; every distance).",
                 paper="all m=10 entries above m=1 (Table 1)", ours=f"{sum(c2.values())}/{len(c2)} model-distance pairs",
                 holds=all(c2.values()), evidence=f"mean at m={cycles} > m=1 with paired Wilcoxon p < 0.05")
    gan_worst = {d: max(MODELS, key=lambda k: mean(k, d, 1)) == "gan" for d in dists}
    claims.claim("C3", "The GAN without encoder fine-tuning has the worst composition after one cycle.",
                 paper="16.779 vs <= 4.244 (pixel)", ours={d: L[max(MODELS, key=lambda k: mean(k, d, 1))] for d in dists},
                 holds=all(gan_worst.values()), evidence="largest mean composition^1 among the five models on each distance")
    rel = abs(mean("gan", "l1_pixel", cycles) - mean("gan", "l1_pixel", 1)) / mean("gan", "l1_pixel", 1)
    claims.claim("C4", "The un-fine-tuned GAN reaches a fixed point after one cycle: composition^1 = composition^10.",
                 paper="16.779 vs 16.780", ours=f"{mean('gan','l1_pixel',1):.2f} vs {mean('gan','l1_pixel',cycles):.2f} (relative change {rel:.1%})",
                 holds=bool(rel < 0.1), evidence="relative change of the mean pixel composition from m=1 to m=10 below 10 %")
    c5a = better("gan_ft", "gan", "l1_pixel", 1)
    c5b = all(mean("gan_ft", d, cycles) > mean(v, d, cycles) for d in ("l1_embedding", "perceptual") for v in ("vae_fixed", "vae_learned"))
    claims.claim("C5", "Encoder fine-tuning improves composition^1, but GAN-ft errors accumulate faster than the VAEs' (m=10).",
                 paper="16.779 -> 3.807; emb 0.272 vs 0.135/0.158 at m=10",
                 ours=f"pixel m=1 {mean('gan','l1_pixel',1):.2f} -> {mean('gan_ft','l1_pixel',1):.2f}; emb m=10 {mean('gan_ft','l1_embedding',cycles):.3f} vs {mean('vae_learned','l1_embedding',cycles):.3f}/{mean('vae_fixed','l1_embedding',cycles):.3f}",
                 holds=bool(c5a and c5b), evidence="paired Wilcoxon for the improvement; mean comparison at m=10 on embedding and perceptual distances")
    c6 = [better("vae_learned", "vae_fixed", d, m) for d in dists for m in (1, cycles)]
    claims.claim("C6", "A learned decoder σ composes better than a fixed σ.", paper="2.600 < 4.244 (m=1); 7.698 < 9.855 (m=10)",
                 ours=f"{sum(c6)}/{len(c6)} comparisons; pixel m=1 {mean('vae_learned','l1_pixel',1):.2f} vs {mean('vae_fixed','l1_pixel',1):.2f}",
                 holds=all(c6), evidence="paired Wilcoxon p < 0.05 and lower mean on all distances at m=1 and 10")
    claims.claim("X1", "With pixel-noise temperature T = 1 the null intervention returns x exactly: composition is 0 and uninformative.",
                 paper="implied by Eqs. of Sec. 3.2; the code uses T = 0.1 / 0.3 (undisclosed)", ours=f"max mean pixel composition^1 at T=1: {comp_at_T1:.2e}",
                 holds=bool(comp_at_T1 < 0.05), evidence="three trained models re-scored at T = 1; tolerance 0.05 grey levels (clipping)")

    def eff(mdl: str, attr: str, do: str) -> float:
        col = {"t": "t MAE", "i": "i MAE", "d": "d acc"}[attr]
        return E.loc[L[mdl], (col, f"do({do})")]

    cells = [(a, do) for a in ("t", "i") for do in ("t", "i", "d")]
    e1 = {c: min(MODELS, key=lambda k: eff(k, *c)) == "hvae" for c in cells}
    claims.claim("E1", "The HVAE gives the lowest thickness and intensity MAE under every intervention (6 cells).",
                 paper="6/6 cells", ours=f"{sum(e1.values())}/6 cells", holds=all(e1.values()),
                 evidence="row minimum among the five trained models per cell")
    e2 = {mdl: eff(mdl, "i", "t") < eff(mdl, "i", "i") for mdl in MODELS}
    claims.claim("E2", "Intensity MAE under do(t) is lower than under do(i), for every model (the flow propagates t -> i).",
                 paper="5/5 models", ours=f"{sum(e2.values())}/5 models", holds=all(e2.values()), evidence="cell comparison per model")
    e3 = {(mdl, a): max(("t", "i", "d"), key=lambda do: eff(mdl, a, do)) == "i" for mdl in MODELS for a in ("t", "i")}
    claims.claim("E3", "do(i) is the hardest intervention for the thickness and intensity predictors.",
                 paper="10/10 row groups", ours=f"{sum(e3.values())}/10 row groups", holds=all(e3.values()),
                 evidence="do(i) column is the maximum MAE within each (model, attribute) row")
    acc = {mdl: eff(mdl, "d", "d") for mdl in MODELS}
    e4 = max(acc, key=acc.get) == "hvae" and min(acc, key=acc.get) == "gan_ft" and acc["vae_learned"] < acc["vae_fixed"]
    claims.claim("E4", "Digit accuracy under do(d): highest for the HVAE, lowest for GAN-ft, learned-σ VAE below fixed-σ VAE.",
                 paper="0.972 / 0.451; 0.775 < 0.933", ours={L[k]: round(v, 3) for k, v in acc.items()}, holds=bool(e4),
                 evidence="ordering of the do(d) accuracy cells")
    gacc = [eff("gan", "d", do) for do in ("t", "i", "d")]
    claims.claim("E5", "The un-fine-tuned GAN's digit accuracy is about the same whatever the intervention.",
                 paper="0.810 / 0.811 / 0.813", ours=[round(v, 3) for v in gacc], holds=bool(np.ptp(gacc) < 0.05),
                 evidence="range of the three digit-accuracy cells below 0.05")
    cfp, obs = per_image["hvae"]["counterfactual_parents"], results["obs"]
    e6 = bool(np.all(cfp["i"]["t"] == obs["t"]) and np.mean(np.abs(cfp["t"]["i"] - obs["i"])) > 1
              and np.allclose(cfp["d"]["i"], obs["i"], atol=1e-6))
    claims.claim("E6", "Graph mutilation in the learned SCM: do(t) changes i, do(i) leaves t, do(d) leaves t and i.",
                 paper="qualitative (Figs 4, 7)", ours="exact equalities and mean |i* - i| > 1 under do(t)", holds=e6,
                 evidence="counterfactual parents of the HVAE SCM on all test units")
    quality = results["predictor_quality"]
    ceiling = dict(zip(quality["attribute"], quality["real test images"], strict=True))
    diag = {"t": eff("true", "t", "t"), "d": eff("true", "d", "d")}
    at_ceiling = abs(diag["t"] - ceiling["t"]) < 0.25 * ceiling["t"] and diag["d"] > ceiling["d"] - 0.03
    claims.claim("X-ceiling", "The true counterfactual scores effectiveness at the predictors' ceiling (do(t) read by q(t|x), do(d) by q(d|x)).",
                 paper="not measurable in the paper", ours=f"true: t MAE {diag['t']:.3f}, d acc {diag['d']:.3f}; ceiling: {ceiling['t']:.3f}, {ceiling['d']:.3f}",
                 holds=bool(at_ceiling), evidence="within 25 % of the real-image MAE and 0.03 of the real-image accuracy")
    true_rank = {a: max(("t", "i", "d"), key=lambda do: eff("true", a, do)) for a in ("t", "i")}
    claims.claim("X4", "Even the true counterfactual scores worst under do(i): part of E3 is an artefact of the anti-causal predictors.",
                 paper="E3 is read as a property of the models", ours=f"hardest intervention for the true counterfactual: {true_rank}; "
                 f"i MAE under do(i) {eff('true', 'i', 'i'):.1f} vs {ceiling['i']:.1f} on real images",
                 holds=bool(all(v == "i" for v in true_rank.values())),
                 evidence="do(i) is the largest MAE in the true-counterfactual row for both the t and the i predictor")

    fd = {mdl: R.loc[L[mdl], "Fréchet (in-domain)"] for mdl in MODELS}
    claims.claim("R1", "Realism: HVAE < VAE (σ learned) < VAE (σ fixed).", paper="FID 5.362 < 10.124 < 17.096",
                 ours={L[k]: round(fd[k], 3) for k in ("hvae", "vae_learned", "vae_fixed")},
                 holds=bool(fd["hvae"] < fd["vae_learned"] < fd["vae_fixed"]), evidence="Fréchet distance on in-domain predictor features (not Inception)")
    claims.claim("R2", "The un-fine-tuned GAN has the worst realism, and encoder fine-tuning improves it.", paper="72.766 -> 35.568",
                 ours=f"{fd['gan']:.3f} -> {fd['gan_ft']:.3f}; worst: {L[max(fd, key=fd.get)]}",
                 holds=bool(max(fd, key=fd.get) == "gan" and fd["gan_ft"] < fd["gan"]), evidence="Fréchet distance ordering")
    ident = R.loc[L["identity"], "CLD"]
    claims.claim("M1", "CLD lies in [0, 1] and the identity counterfactual scores log(0.8 + 0.2e) = 0.2954.", paper=0.2954,
                 ours=round(float(ident), 4), holds=bool(abs(ident - 0.2954) < 1e-4 and R["CLD"].between(0, 1).all()),
                 evidence="identity row of Table 5; every row within [0, 1]")
    paper_gap = float(np.max(np.abs(np.log(0.8 * np.exp(PAPER_TABLE5[:, 1]) + 0.2 * np.exp(PAPER_TABLE5[:, 2])) - PAPER_TABLE5[:, 0])))
    ours_gap = float(np.max(np.abs(np.log(0.8 * np.exp(R["P1"]) + 0.2 * np.exp(R["P2"])) - R["CLD"])))
    claims.record("cld_jensen_gap", ours_gap)
    claims.claim("M2", "The reported CLD equals log(0.8 e^mean P1 + 0.2 e^mean P2) within 0.001 (all 11 rows of Table 5).",
                 paper="11 rows", ours=f"max gap on the paper's rows {paper_gap:.4f}; on ours (mean of per-image CLD) {ours_gap:.4f}",
                 holds=bool(paper_gap <= 0.0015),
                 evidence="recomputed from the printed P1, P2 (rounding to 3 decimals allows 0.0015); our table averages Eq. 9 per image, "
                          "which differs from the formula at the averaged P's by Jensen's inequality: the paper's numbers behave like the formula at the means")
    cld = {mdl: R.loc[L[mdl], "CLD"] for mdl in MODELS}
    claims.claim("M3", "Minimality: the learned-σ VAE has the lowest CLD and the un-fine-tuned GAN the highest.", paper="0.268 lowest; 0.390 highest",
                 ours={L[k]: round(v, 3) for k, v in cld.items()}, holds=bool(min(cld, key=cld.get) == "vae_learned" and max(cld, key=cld.get) == "gan"),
                 evidence="ordering of the CLD column among the five models")
    p1 = {mdl: R.loc[L[mdl], "P1"] for mdl in MODELS}
    claims.claim("M5", "The GAN has the highest P1 (its counterfactuals land far from the factual).", paper="0.339 (MorphoMNIST)",
                 ours={L[k]: round(v, 3) for k, v in p1.items()}, holds=bool(max(p1, key=p1.get) == "gan"), evidence="ordering of the P1 column")
    board = {"composition": all(mean("hvae", d, m) <= min(mean(k, d, m) for k in MODELS) for d in dists for m in (1, cycles)),
             "effectiveness (t, i)": all(e1.values()), "digit accuracy": max(acc, key=acc.get) == "hvae",
             "realism": min(fd, key=fd.get) == "hvae", "minimality": min(cld, key=cld.get) == "hvae"}
    claims.claim("G1", "The HVAE outperforms all other models across all metrics.", paper="stated; contradicted by the paper's own Tables 3 and 5",
                 ours={k: bool(v) for k, v in board.items()}, holds=all(board.values()), evidence="best model per metric family among the five")
    return claims.rows(["C1", "C2", "C3", "C4", "C5", "C6", "X1", "E1", "E2", "E3", "E4", "E5", "E6", "X-ceiling", "X4",
                         "R1", "R2", "M1", "M2", "M3", "M5", "G1"])


def claims_03(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 03 (SmileyFaces benchmark): composition, effectiveness of the fine-tuned HVAE, realism, minimality.

    Parameters
    ----------
    results : mapping
        :func:`benchmark_results` of a SmileyFaces run with the six models (``vae_fixed``,
        ``vae_learned``, ``hvae``, ``hvae_cf``, ``gan``, ``gan_ft``) and both references.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, _BENCHMARK_KEYS, "claims_03")
    L, MODELS, cycles = MODEL_LABELS, tuple(results["models"]), results["cycles"]
    E, R, per_image = results["effectiveness"], results["realism_minimality"], results["per_image"]

    def comp(mdl: str, dist: str, m: int) -> np.ndarray:
        return _composition(per_image, mdl, dist, m)

    def f1(mdl: str, attr: str, do: str) -> float:
        return E.loc[L[mdl], (f"{attr} F1", f"do({do})")]

    best = {(d, m): min(MODELS, key=lambda k: comp(k, d, m).mean()) for d in ("l1_embedding", "perceptual") for m in (1, cycles)}
    claims.claim("C7", "On faces the counterfactually fine-tuned HVAE has the best perceptual and embedding composition.",
                 paper="LPIPS 0.063 vs >= 0.290; emb 0.498 vs >= 0.516 (m = 1)", ours={f"{d} m={m}": L[v] for (d, m), v in best.items()},
                 holds=all(v == "hvae_cf" for v in best.values()), evidence="lowest mean among the six models per distance and cycle count")
    grow = {(mdl, d): bool(comp(mdl, d, cycles).mean() > comp(mdl, d, 1).mean() and paired_comparison(comp(mdl, d, cycles), comp(mdl, d, 1)).pvalue < 0.05)
            for mdl in ("vae_fixed", "vae_learned", "hvae_cf", "gan", "gan_ft") for d in ("l1_embedding", "perceptual")}
    claims.claim("C2-faces", "Composition error grows with the number of cycles on faces (embedding and perceptual distances).",
                 paper="all m=10 above m=1 except the bug-affected pixel column (Table 2)", ours=f"{sum(grow.values())}/{len(grow)}",
                 holds=all(grow.values()), evidence=f"mean at m={cycles} > m=1 and paired Wilcoxon p < 0.05")
    gan_worst = max(MODELS, key=lambda k: comp(k, "perceptual", 1).mean())
    claims.claim("C3-faces", "The un-fine-tuned GAN has the worst perceptual composition after one cycle.", paper="LPIPS 0.403 (worst)",
                 ours=L[gan_worst], holds=gan_worst == "gan", evidence="largest mean perceptual composition^1")
    ident_s, ident_e = f1("identity", "s", "s"), f1("identity", "e", "e")
    hv_s, hv_e = f1("hvae", "s", "s"), f1("hvae", "e", "e")
    cf_s, cf_e = f1("hvae_cf", "s", "s"), f1("hvae_cf", "e", "e")
    fd_h, fd_cf = R.loc[L["hvae"], "Fréchet (in-domain)"], R.loc[L["hvae_cf"], "Fréchet (in-domain)"]
    e7a = max(hv_s - ident_s, hv_e - ident_e) < 0.25
    e7b = cf_s > hv_s + 0.1 and cf_e > hv_e + 0.1
    claims.claim("E7", "An HVAE trained only on the ELBO ignores interventions; counterfactual fine-tuning makes it effective at a realism cost.",
                 paper="HVAE 'unaffected by interventions'; HVAE-ft F1 0.998 / 0.981; FID 12.667 -> 22.047",
                 ours=f"F1 do(s)/do(e): identity {ident_s:.2f}/{ident_e:.2f}, HVAE {hv_s:.2f}/{hv_e:.2f}, HVAE-ft {cf_s:.2f}/{cf_e:.2f}; Fréchet {fd_h:.3f} -> {fd_cf:.3f}",
                 holds=bool(e7a and e7b and fd_cf > fd_h),
                 evidence="ELBO-only HVAE within 0.25 F1 of the identity map; fine-tuning adds > 0.1 F1 on both attributes; Fréchet distance rises")
    vae_e = max(f1("vae_fixed", "e", "e"), f1("vae_learned", "e", "e"))
    claims.claim("E8", "On the eyeglasses intervention the fine-tuned HVAE beats the VAEs by a wide margin.", paper="0.981 vs 0.771 / 0.810",
                 ours=f"{cf_e:.3f} vs {f1('vae_fixed', 'e', 'e'):.3f} / {f1('vae_learned', 'e', 'e'):.3f}", holds=bool(cf_e > vae_e + 0.1),
                 evidence="F1 margin above 0.1")
    fd = {m: R.loc[L[m], "Fréchet (in-domain)"] for m in MODELS}
    claims.claim("R1-faces", "The ELBO-only HVAE has the best realism on faces.", paper="FID 12.667 (best)", ours={L[k]: round(v, 3) for k, v in fd.items()},
                 holds=min(fd, key=fd.get) == "hvae", evidence="lowest Fréchet distance on in-domain features")
    claims.claim("R2-faces", "On faces both GANs are more realistic than both VAEs.", paper="41.5 / 31.6 vs 77.3 / 66.4",
                 ours={L[k]: round(fd[k], 3) for k in ("gan", "gan_ft", "vae_fixed", "vae_learned")},
                 holds=bool(max(fd["gan"], fd["gan_ft"]) < min(fd["vae_fixed"], fd["vae_learned"])), evidence="Fréchet distance ordering")
    p2 = {m: R.loc[L[m], "P2"] for m in ("vae_fixed", "vae_learned", "hvae", "hvae_cf")}
    claims.claim("M4", "On faces P2 is close to 1 for the VAE and HVAE rows, so their CLD sits near the identity value 0.2954.",
                 paper="P2 0.925-0.999; CLD 0.295-0.310", ours={L[k]: round(v, 3) for k, v in p2.items()},
                 holds=bool(min(p2.values()) > 0.9), evidence="P2 above 0.9 for all four rows")
    p1 = {m: R.loc[L[m], "P1"] for m in MODELS}
    claims.claim("M5-faces", "The GAN has the highest P1 on faces.", paper="0.224", ours={L[k]: round(v, 3) for k, v in p1.items()},
                 holds=max(p1, key=p1.get) == "gan", evidence="ordering of the P1 column")
    return claims.rows(["C7", "C2-faces", "C3-faces", "E7", "E8", "R1-faces", "R2-faces", "M4", "M5-faces"])


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 04: do the proxy metrics rank configurations like the true counterfactual error?

    Each X2 claim needs Spearman's rho > 0 with p < 0.05 across the model configurations; X3 checks the
    identity row exactly. Records ``rho_composition_all`` and ``rho_composition_models``.

    Parameters
    ----------
    results : mapping
        ``agreement`` from :func:`rank_agreement` and ``configs`` from :func:`score_configurations`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, ("agreement", "configs"), "claims_04")
    A, configs = results["agreement"], results["configs"]
    rho_all = A[("Spearman rho", "all configurations")]
    rho_mod = A[("Spearman rho", "models only")]
    p_mod = A[("p-value", "models only")]
    comp_rho = rho_all["composition l1_pixel m=1"]
    claims.record("rho_composition_all", float(comp_rho))
    claims.record("rho_composition_models", float(rho_mod["composition l1_pixel m=1"]))
    claims.claim("X2-composition", "Better composition goes with counterfactuals closer to the truth (rank agreement across configurations).",
                 paper="implicit (composition is used to rank models)", ours=f"rho = {comp_rho:.2f} (all), {rho_mod['composition l1_pixel m=1']:.2f} (models only)",
                 holds=bool(rho_mod["composition l1_pixel m=1"] > 0 and p_mod["composition l1_pixel m=1"] < 0.05),
                 evidence=f"Spearman across {int((configs['kind'] == 'model').sum())} model configurations, p < 0.05 required")
    eff_cols = [c for c in rho_mod.index if c.startswith("effectiveness")]
    claims.claim("X2-effectiveness", "Effectiveness (error of the anti-causal predictors) ranks configurations like the true error.",
                 paper="implicit", ours={c: round(float(rho_mod[c]), 2) for c in eff_cols},
                 holds=bool(all(rho_mod[c] > 0 and p_mod[c] < 0.05 for c in eff_cols)), evidence="Spearman > 0 with p < 0.05 for each attribute, models only")
    for key, col in (("X2-realism", "Fréchet"), ("X2-minimality", "CLD")):
        claims.claim(key, f"{col} ranks configurations like the true error.", paper="implicit",
                     ours=f"rho = {rho_mod[col]:.2f} (models only), {rho_all[col]:.2f} (all)",
                     holds=bool(rho_mod[col] > 0 and p_mod[col] < 0.05), evidence="Spearman > 0 with p < 0.05, models only")
    identity, true = MODEL_LABELS["identity"], MODEL_LABELS["true"]
    id_comp = configs.loc[identity, "composition l1_pixel m=1"]
    id_err = configs.loc[identity, "true error"]
    claims.claim("X3", "The identity map has perfect composition and a CLD of 0.2954 while its counterfactuals are wrong.",
                 paper="implied by Eq. 7 and Eq. 9 (notes: 'minimality can reward doing nothing')",
                 ours=f"composition {id_comp:.1f}, CLD {configs.loc[identity, 'CLD']:.4f}, true error {id_err:.1f}",
                 holds=bool(id_comp == 0 and abs(configs.loc[identity, "CLD"] - 0.2954) < 1e-4 and id_err > configs.loc[true, "true error"] + 1),
                 evidence="exact values of the identity row against the true counterfactual's zero error")
    return claims.rows(["X2-composition", "X2-effectiveness", "X2-realism", "X2-minimality", "X3"])
