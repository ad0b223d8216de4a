"""Scoring deep SCMs: the evaluation context every model shares, and the scores of one model.

:func:`evaluation_context` fixes what every model is scored against (test units, interventions, true
counterfactuals, metric models) in a typed :class:`EvalContext`; :func:`evaluate_scm` scores one model on
the paper's four axes and the true error; :func:`evaluate_models` scores the models of a run.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...data.morphosynth import MorphoSynth
from ...data.smileyfaces import SmileyFaces
from ...metrics.benchmark_metrics import (
    InterventionSampler,
    embedding_l1,
    l1_pixel,
    memoize_features,
    perceptual_distance,
    scm_composition,
    scm_effectiveness,
    score,
)
from ...metrics.minimality import counterfactual_latent_divergence
from ...metrics.realism import frechet_distance
from ...models.predictors import AntiCausalPredictor
from ...runtime import as_generator
from ...scm.deep import DeepSCM, OracleImage
from .config import MODEL_LABELS, BenchmarkConfig, DatasetSpec


@dataclass(frozen=True)
class EvalContext:
    """What every model is scored against: the same test units, interventions and metric models.

    :func:`cflib.experiments.benchmark.run_benchmark` builds one per run (``result.context``), so a new
    model, or the same model at another temperature, is scored by :func:`evaluate_scm` on exactly the
    same units and interventions as the others.

    Attributes
    ----------
    cfg : BenchmarkConfig
        The run's settings.
    parents : tuple of str
        The image's parents (:attr:`DatasetSpec.parents`).
    kinds : dict
        Parent -> ``"regression"``, ``"multiclass"`` or ``"binary"``.
    obs : dict
        The factual test units: parents and ``"x"`` (images on the models' scale).
    distances : dict
        Composition distances: ``"l1_pixel"``, ``"l1_embedding"``, ``"perceptual"``.
    predictors : dict
        Parent -> anti-causal predictor (effectiveness, and the features of the metrics).
    sampler : InterventionSampler
        Draws the intervention values and bins the parents.
    do_values : dict
        Parent -> the intervention value of each test unit.
    truth : dict
        Parent -> the true counterfactual of each test unit under ``do(parent)``.
    chosen : numpy.ndarray
        The parent intervened on per unit for realism and minimality.
    cld_encode : callable
        ``images -> (mu, log_variance)`` of the CLD's VAE.
    mu_f, lv_f : numpy.ndarray
        The CLD posterior of the factual test images.
    ref_groups : numpy.ndarray
        ``(n, parents)`` bins of the factual parents.
    real_features : numpy.ndarray
        Features of the training images (the Fréchet distance's reference set).
    embed : callable
        ``images -> features`` (the predictors' concatenated embeddings).
    show : numpy.ndarray
        Test units whose images are kept for figures.
    """

    cfg: BenchmarkConfig
    parents: tuple[str, ...]
    kinds: dict[str, str]
    obs: dict[str, np.ndarray]
    distances: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]]
    predictors: dict[str, AntiCausalPredictor]
    sampler: InterventionSampler
    do_values: dict[str, np.ndarray]
    truth: dict[str, dict[str, np.ndarray]]
    chosen: np.ndarray
    cld_encode: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
    mu_f: np.ndarray
    lv_f: np.ndarray
    ref_groups: np.ndarray
    real_features: np.ndarray
    embed: Callable[[np.ndarray], np.ndarray]
    show: np.ndarray


def evaluate_scm(ctx: EvalContext, scm: DeepSCM, label: str) -> dict[str, Any]:
    """Score one deep SCM on composition, effectiveness, realism, minimality and the true error.

    Parameters
    ----------
    ctx : EvalContext
        ``result.context`` of a :func:`~cflib.experiments.benchmark.run_benchmark` result (test units, interventions,
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
    cf_features = ctx.embed(cf_x)
    fd = frechet_distance(ctx.real_features, cf_features)
    mu_c, lv_c = ctx.cld_encode(cf_x)
    cf_groups = np.stack([ctx.sampler.bin(p, ctx.do_values[p]) for p in parents])[ctx.chosen, units]
    cld = counterfactual_latent_divergence(
        (ctx.mu_f, ctx.lv_f),
        (mu_c, lv_c),
        ctx.ref_groups[units, ctx.chosen],
        cf_groups,
        reference_group=ctx.ref_groups,
        parent=ctx.chosen,
        weights=cfg.cld_weights,
    )
    rows_c = [
        {"model": label, "distance": dist, "cycles": m, "mean": arr[:, m - 1].mean(), "std": arr[:, m - 1].std(ddof=1)}
        for dist, arr in comp.distances.items()
        for m in sorted({1, cfg.cycles})
    ]
    rows_e = [
        {"model": label, "attribute": attr, "intervention": do, "score": v}
        for do, row in eff.table.iterrows()
        for attr, v in row.items()
    ]
    row_rm = {"model": label, "Fréchet (in-domain)": fd, "CLD": cld.statistic, "P1": cld.mean_p1, "P2": cld.mean_p2}
    row_t = {"model": label, **{f"do({p})": true_err[p].mean() for p in parents}}
    summary = {
        f"composition {d} m={m}": arr[:, m - 1].mean()
        for d, arr in comp.distances.items()
        for m in sorted({1, cfg.cycles})
    }
    summary.update({f"effectiveness {a} do({a})": eff.table.loc[f"do({a})", a] for a in parents})
    summary.update(
        {"Fréchet": fd, "CLD": cld.statistic, "true error": float(np.mean([v.mean() for v in true_err.values()]))}
    )
    per_image = {
        "composition": comp.distances,
        "composition_trend_p": comp.pvalue,
        "effectiveness": eff.per_image,
        "true_error": true_err,
        "cld": cld.cld,
        "p1": cld.p1,
        "p2": cld.p2,
        "chosen": ctx.chosen,
        "features": cf_features,
        "counterfactual_parents": {p: {q: eff.counterfactuals[p][q] for q in parents} for p in parents},
    }
    figures = {"composition": comp.images, "interventions": {p: eff.counterfactuals[p]["x"][ctx.show] for p in parents}}
    return {
        "rows": {"composition": rows_c, "effectiveness": rows_e, "realism_minimality": row_rm, "true_error": row_t},
        "per_image": per_image,
        "figures": figures,
        "summary": summary,
    }


def composition_at(per_image: Mapping[str, Any], mdl: str, dist: str = "l1_pixel", m: int = 1) -> np.ndarray:
    """Per-image composition distance of one model after ``m`` null-intervention cycles.

    Parameters
    ----------
    per_image : mapping
        Model -> its per-image results (``result.per_image``, or :func:`seed_results`' per seed).
    mdl : str
        Model key.
    dist : str
        Composition distance.
    m : int
        Number of cycles (1-based).

    Returns
    -------
    numpy.ndarray
        ``(n,)`` distances, one per test image.
    """
    return per_image[mdl]["composition"][dist][:, m - 1]


def predictor_quality(
    predictors: Mapping[str, AntiCausalPredictor], test: MorphoSynth | SmileyFaces, obs: Mapping[str, np.ndarray]
) -> pd.DataFrame:
    """The predictors on real test images: the ceiling of effectiveness.

    Parameters
    ----------
    predictors : mapping
        Parent -> anti-causal predictor.
    test : MorphoSynth or SmileyFaces
        The test units (the parents' true values).
    obs : mapping
        The test units with their images on the models' scale (``"x"``).

    Returns
    -------
    pandas.DataFrame
        One row per parent: ``attribute``, ``metric`` (MAE, accuracy or F1) and ``real test images``.
    """
    quality = []
    for p, pred in predictors.items():
        s, _ = score(pred.kind, getattr(test, p), pred.predict(obs["x"]))
        quality.append(
            {
                "attribute": p,
                "metric": {"regression": "MAE", "multiclass": "accuracy", "binary": "F1"}[pred.kind],
                "real test images": s,
            }
        )
    return pd.DataFrame(quality)


def metric_distances(
    predictors: Mapping[str, AntiCausalPredictor],
) -> tuple[dict[str, Any], Callable[[np.ndarray], np.ndarray]]:
    """The composition distances and the feature embedding, from the predictors' features (one pass per predictor).

    Parameters
    ----------
    predictors : mapping
        Parent -> anti-causal predictor.

    Returns
    -------
    distances : dict
        ``"l1_pixel"`` (0-255), ``"l1_embedding"`` and ``"perceptual"`` (the predictors' feature maps).
    embed : callable
        ``images -> features``: the predictors' embeddings, concatenated (memoised with the feature maps).
    """

    def _features(images: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
        outs = [
            pred.feature_maps(images, return_embedding=True) for pred in predictors.values()
        ]  # one pass per predictor
        return np.concatenate([o[1] for o in outs], axis=1), [m for o in outs for m in o[0]]

    features = memoize_features(_features)

    def embed(images: np.ndarray) -> np.ndarray:
        return features(images)[0]

    def maps(images: np.ndarray) -> list[np.ndarray]:
        return features(images)[1]

    distances = {
        "l1_pixel": l1_pixel(255.0),
        "l1_embedding": embedding_l1(embed),
        "perceptual": perceptual_distance(maps),
    }
    return distances, embed


def evaluation_context(
    cfg: BenchmarkConfig,
    spec: DatasetSpec,
    test: MorphoSynth | SmileyFaces,
    obs: dict[str, np.ndarray],
    *,
    x_train: np.ndarray,
    predictors: dict[str, AntiCausalPredictor],
    distances: dict[str, Any],
    embed: Callable[[np.ndarray], np.ndarray],
    cld_encode: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    true_attributes: Mapping[str, Any],
) -> EvalContext:
    """Fix what every model is scored against: one set of interventions, their true counterfactuals, the references.

    One set of interventions for every model gives paired comparisons on the same units and values.

    Parameters
    ----------
    cfg : BenchmarkConfig
        The run's settings (seed, ``n_bins``, ``n_test``, ``n_show``).
    spec : DatasetSpec
        The dataset's parents and scale.
    test : MorphoSynth or SmileyFaces
        The test units (graph, parents and the data's own image mechanism).
    obs : dict
        The factual test units with their images on the models' scale.
    x_train : numpy.ndarray
        Training images (the Fréchet distance's reference set).
    predictors, distances, embed
        From :func:`~cflib.experiments.benchmark.training.train_predictors` and :func:`metric_distances`.
    cld_encode : callable
        From :func:`~cflib.experiments.benchmark.training.cld_encoder`.
    true_attributes : mapping
        The data's own attribute mechanisms (for the true counterfactuals).

    Returns
    -------
    EvalContext
    """
    parents = spec.parents
    real_features = embed(x_train)
    mu_f, lv_f = cld_encode(obs["x"])

    # One set of interventions for every model: paired comparisons on the same units and values.
    rng = as_generator(cfg.seed + 1)
    sampler = InterventionSampler({p: getattr(test, p) for p in parents}, discrete=spec.discrete, n_bins=cfg.n_bins)
    do_values = {p: sampler.sample(p, getattr(test, p), rng) for p in parents}
    chosen = rng.integers(0, len(parents), cfg.n_test)  # one random parent per unit for realism / minimality
    ref_groups = np.column_stack([sampler.bin(p, getattr(test, p)) for p in parents])
    truth: dict[str, dict[str, np.ndarray]] = {}
    oracle_scm = DeepSCM(test.graph, {**true_attributes, "x": OracleImage(test, scale=spec.scale)})
    for p in parents:
        truth[p] = oracle_scm.counterfactual(obs, {p: do_values[p]})

    show = np.arange(min(cfg.n_show, cfg.n_test))
    return EvalContext(
        cfg=cfg,
        parents=parents,
        kinds=spec.kinds,
        obs=obs,
        distances=distances,
        predictors=predictors,
        sampler=sampler,
        do_values=do_values,
        truth=truth,
        chosen=chosen,
        cld_encode=cld_encode,
        mu_f=mu_f,
        lv_f=lv_f,
        ref_groups=ref_groups,
        real_features=real_features,
        embed=embed,
        show=show,
    )


def evaluate_models(
    ctx: EvalContext, scms: Mapping[str, DeepSCM], timings: dict[str, float]
) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]], dict[str, Any]]:
    """Score every model of a run with :func:`evaluate_scm` on the shared context.

    Parameters
    ----------
    ctx : EvalContext
        From :func:`evaluation_context`.
    scms : mapping
        Model key -> deep SCM (trained models and references).
    timings : dict
        Receives ``"evaluate <model>"`` seconds per model.

    Returns
    -------
    rows : dict
        ``"composition"``, ``"effectiveness"``, ``"realism_minimality"``, ``"true_error"`` -> the table rows
        of every model (for :func:`~cflib.experiments.benchmark.tables.benchmark_tables`).
    per_image : dict
        Model key -> per-image arrays.
    figures : dict
        Images for the figures (see :class:`~cflib.experiments.benchmark.result.BenchmarkResult`).
    """
    obs, show, parents = ctx.obs, ctx.show, ctx.parents
    rows: dict[str, list[dict[str, Any]]] = {
        "composition": [],
        "effectiveness": [],
        "realism_minimality": [],
        "true_error": [],
    }
    per_image: dict[str, dict[str, Any]] = {}
    figures: dict[str, Any] = {
        "composition": {},
        "interventions": {},
        "factual": obs["x"][show],
        "do_values": {p: ctx.do_values[p][show] for p in parents},
        "true": {p: ctx.truth[p]["x"][show] for p in parents},
        "factual_parents": {p: obs[p][show] for p in parents},
    }
    for name, scm in scms.items():
        t0 = time.perf_counter()
        ev = evaluate_scm(ctx, scm, MODEL_LABELS[name])
        rows["composition"] += ev["rows"]["composition"]
        rows["effectiveness"] += ev["rows"]["effectiveness"]
        rows["realism_minimality"].append(ev["rows"]["realism_minimality"])
        rows["true_error"].append(ev["rows"]["true_error"])
        per_image[name] = ev["per_image"]
        figures["composition"][name] = ev["figures"]["composition"]
        figures["interventions"][name] = ev["figures"]["interventions"]
        timings[f"evaluate {name}"] = time.perf_counter() - t0
    return rows, per_image, figures
