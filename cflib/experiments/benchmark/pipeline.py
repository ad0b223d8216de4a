"""The benchmark's runner: :func:`run_benchmark` (train, then score on one shared context), :func:`run_seeds`,
and the plain results the claims read (:func:`benchmark_results`, :func:`seed_results`).

:func:`run_benchmark` runs named stages in a fixed order (data, predictors, attribute and image
mechanisms, the CLD's VAE, the evaluation context, the scores, the tables), each in
:mod:`~cflib.experiments.benchmark.training`, :mod:`~cflib.experiments.benchmark.evaluation` or
:mod:`~cflib.experiments.benchmark.tables`; the configuration reaches them as a :class:`BenchmarkConfig`
and its :class:`~cflib.experiments.benchmark.config.DatasetSpec`.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from typing import Any

import numpy as np

from ...data.morphosynth import MorphoSynth, make_morphosynth
from ...data.smileyfaces import SmileyFaces, make_smileyfaces
from ...scm.deep import DeepSCM, IdentityImage, OracleImage
from .config import MODEL_LABELS, BenchmarkConfig, DatasetSpec
from .convergence import training_convergence
from .evaluation import (
    evaluate_models,
    evaluate_scm,
    evaluation_context,
    metric_distances,
    predictor_quality,
)
from .result import BenchmarkResult, with_temperature
from .tables import benchmark_tables
from .training import attribute_mechanisms, cld_encoder, train_image_models, train_predictors


def _make_data(cfg: BenchmarkConfig) -> tuple[MorphoSynth | SmileyFaces, MorphoSynth | SmileyFaces]:
    if cfg.dataset == "morphosynth":
        return make_morphosynth(cfg.n_train, cfg.size, seed=cfg.seed), make_morphosynth(
            cfg.n_test, cfg.size, seed=cfg.seed + 10_000
        )
    return make_smileyfaces(cfg.n_train, cfg.size, seed=cfg.seed), make_smileyfaces(
        cfg.n_test, cfg.size, seed=cfg.seed + 10_000
    )


def _obs(data: MorphoSynth | SmileyFaces, scale: float) -> dict[str, np.ndarray]:
    obs = data.observations()
    obs["x"] = np.asarray(data.x, dtype=np.float32) * np.float32(scale)  # the same expression as OracleImage
    return obs


def _resolve_config(
    config: BenchmarkConfig | Mapping[str, Any] | None, overrides: Mapping[str, Any]
) -> BenchmarkConfig:
    """The run's :class:`BenchmarkConfig`: ``config`` (a config, a mapping or the defaults) with ``overrides``."""
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
    return BenchmarkConfig(**{**config, **overrides})


def _deep_scms(
    cfg: BenchmarkConfig,
    spec: DatasetSpec,
    test: MorphoSynth | SmileyFaces,
    learned_attr: Mapping[str, Any],
    true_attr: Mapping[str, Any],
    mechs: Mapping[str, Any],
) -> dict[str, DeepSCM]:
    """The references (``identity``, ``true``) and the trained models as deep SCMs on the test units' graph."""
    scms: dict[str, DeepSCM] = {}
    for name in cfg.baselines:
        if name == "identity":
            scms[name] = DeepSCM(test.graph, {**learned_attr, "x": IdentityImage()})
        else:
            scms[name] = DeepSCM(test.graph, {**true_attr, "x": OracleImage(test, scale=spec.scale)})
    for name in cfg.models:
        scms[name] = DeepSCM(test.graph, {**learned_attr, "x": mechs[name]})
    return scms


def run_benchmark(
    config: BenchmarkConfig | Mapping[str, Any] | None = None,
    *,
    cache: bool | str | os.PathLike = True,
    **overrides: Any,
) -> BenchmarkResult:
    """Train the deep SCMs of the configuration and score them (Tables 1-5 plus the truth).

    Parameters
    ----------
    config : BenchmarkConfig or mapping, optional
        Settings (a mapping is turned into a :class:`BenchmarkConfig`).
    cache : bool or path-like
        Keep the trained image models, the anti-causal predictors and the CLD's VAE in the shared model cache
        (:func:`cflib.runtime.fit_cached`, default ``_build/cache/models``) and load them when the same model is
        asked for again; a path names another cache folder; ``False`` always trains.
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
    cfg = _resolve_config(config, overrides)
    timings: dict[str, float] = {}
    t_all = time.perf_counter()
    spec = cfg.spec

    t0 = time.perf_counter()
    train, test = _make_data(cfg)
    x_train = np.asarray(train.x, np.float32) * np.float32(spec.scale)
    pa_train = spec.encoder({p: getattr(train, p) for p in spec.parents})
    obs = _obs(test, spec.scale)
    timings["data"] = time.perf_counter() - t0

    t0 = time.perf_counter()
    predictors, predictors_ft = train_predictors(cfg, spec, x_train, train, cache=cache)
    timings["predictors"] = time.perf_counter() - t0
    quality = predictor_quality(predictors, test, obs)
    distances, embed = metric_distances(predictors)

    t0 = time.perf_counter()
    learned_attr, true_attr = attribute_mechanisms(cfg, train)
    timings["attribute mechanisms"] = time.perf_counter() - t0
    mechs, histories = train_image_models(cfg, x_train, pa_train, spec, predictors_ft, timings, cache=cache)
    scms = _deep_scms(cfg, spec, test, learned_attr, true_attr, mechs)

    t0 = time.perf_counter()
    cld_encode = cld_encoder(cfg, x_train, spec, cache=cache)
    timings["CLD encoder"] = time.perf_counter() - t0
    ctx = evaluation_context(
        cfg,
        spec,
        test,
        obs,
        x_train=x_train,
        predictors=predictors,
        distances=distances,
        embed=embed,
        cld_encode=cld_encode,
        true_attributes=true_attr,
    )
    rows, per_image, figures = evaluate_models(ctx, scms, timings)
    table_comp, table_eff, table_rm, table_true = benchmark_tables(rows, spec.kinds, cfg.cld_weights)
    timings["total"] = time.perf_counter() - t_all
    return BenchmarkResult(
        config=cfg,
        table_composition=table_comp,
        table_effectiveness=table_eff,
        table_realism_minimality=table_rm,
        table_true_error=table_true,
        per_image=per_image,
        figures=figures,
        predictor_quality=quality,
        timings=timings,
        models=scms,
        context=ctx,
        test=test,
        mechanisms=mechs,
        learned_attributes=learned_attr,
        finetune_history=histories,
    )


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
        ``realism_minimality``, ``predictor_quality``, ``per_image``, ``obs`` (factual test units) and
        ``real_features`` (the training images' features, the Fréchet distance's reference set).
    """
    return {
        "models": tuple(result.config.models),
        "cycles": result.config.cycles,
        "composition": result.table_composition,
        "effectiveness": result.table_effectiveness,
        "realism_minimality": result.table_realism_minimality,
        "predictor_quality": result.predictor_quality,
        "per_image": result.per_image,
        "obs": result.context.obs,
        "real_features": result.context.real_features,
    }


def run_seeds(
    config: BenchmarkConfig | Mapping[str, Any] | None = None,
    seeds: Sequence[int] = (0, 1, 2),
    *,
    cache: bool | str | os.PathLike = True,
    **overrides: Any,
) -> dict[int, BenchmarkResult]:
    """:func:`run_benchmark` once per training seed (data, models, predictors and interventions all follow the seed).

    Parameters
    ----------
    config : BenchmarkConfig or mapping, optional
        Settings shared by every run.
    seeds : sequence of int
        Training seeds (at least two, for an interval over seeds).
    cache : bool or path-like
        See :func:`run_benchmark`.
    **overrides
        Fields of :class:`BenchmarkConfig` to override (not ``seed``).

    Returns
    -------
    dict
        ``seed -> BenchmarkResult``.
    """
    seeds = [int(s) for s in seeds]
    if len(seeds) < 2 or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must hold at least two different seeds, got {seeds!r}")
    if "seed" in overrides:
        raise ValueError("give the training seeds with seeds=..., not seed=")
    return {s: run_benchmark(config, cache=cache, **{**overrides, "seed": s}) for s in seeds}


def learning_results(results: Mapping[int, BenchmarkResult]) -> dict[str, Any]:
    """What :func:`claims_learning` reads: per seed and model the per-image true errors and digit/attribute hits.

    Parameters
    ----------
    results : mapping
        ``seed -> BenchmarkResult``.

    Returns
    -------
    dict
        ``models`` (trained keys), ``parents``, ``kinds``, ``runs``: ``seed -> {model -> {"true_error":
        (n,) mean over interventions, "effectiveness": {attribute: (n,) per-image outcome under do(attribute)},
        "target": {attribute: (n,) the intervened value}}}`` and ``convergence``: ``seed ->``
        :func:`~cflib.experiments.benchmark.convergence.training_convergence` of its trained models.
    """
    first = next(iter(results.values()))
    parents = tuple(first.figures["do_values"])
    runs = {}
    for s, r in results.items():
        runs[s] = {
            mdl: {
                "true_error": np.mean([per["true_error"][p] for p in parents], axis=0),
                "effectiveness": {p: np.asarray(per["effectiveness"][(p, p)], float) for p in parents},
                "target": {p: np.asarray(per["counterfactual_parents"][p][p]) for p in parents},
            }
            for mdl, per in r.per_image.items()
        }
    return {
        "models": tuple(first.config.models),
        "parents": parents,
        "kinds": dict(first.context.kinds),
        "runs": runs,
        "convergence": {s: training_convergence(r.mechanisms) for s, r in results.items()},
    }


#: The keys of :func:`benchmark_results` that :func:`claims_02` and :func:`claims_03` read.
BENCHMARK_KEYS = ("models", "cycles", "realism_minimality", "predictor_quality", "per_image", "obs", "real_features")
#: The hierarchical-VAE mechanisms, re-scored at the VAEs' temperature for the model comparisons.
_HVAES = ("hvae", "hvae_cf")


def seed_results(runs: Mapping[int, BenchmarkResult], *, temperature: float | None = None) -> dict[int, dict[str, Any]]:
    """Per training seed, the results the model comparisons of :func:`claims_02` and :func:`claims_03` read.

    The official code abducts the VAEs at pixel-noise temperature 0.1 and the HVAE at 0.3, and a higher
    temperature alone lowers the composition error (at ``T = 1`` it is 0 by construction). So that a
    comparison is about the models and not about a setting, every HVAE is re-scored here (no
    retraining) at the VAEs' temperature, on the same test units and interventions.

    Parameters
    ----------
    runs : mapping
        ``seed -> BenchmarkResult`` from :func:`run_seeds` (or one seed's :func:`run_benchmark`).
    temperature : float, optional
        The one pixel-noise temperature of every VAE and HVAE (default: the runs' ``vae_temperature``).

    Returns
    -------
    dict
        ``seed ->`` :func:`benchmark_results` of that run with the HVAEs' per-image results at the matched
        temperature, plus ``temperature`` and ``convergence`` (the trained models'
        :func:`~cflib.experiments.benchmark.convergence.training_convergence`).
    """
    if not isinstance(runs, Mapping) or not runs:
        raise ValueError(
            "runs must map each training seed to its BenchmarkResult (run_seeds(...) or {seed: run_benchmark(...)})"
        )
    out = {}
    for s, r in runs.items():
        if not isinstance(r, BenchmarkResult):
            raise TypeError(f"runs[{s!r}] must be a BenchmarkResult, got {type(r).__name__}")
        t = float(r.config.vae_temperature if temperature is None else temperature)
        res = benchmark_results(r)
        per_image = dict(res["per_image"])
        for mdl in _HVAES:
            if mdl in r.mechanisms and r.mechanisms[mdl].noise_temperature != t:
                per_image[mdl] = evaluate_scm(r.context, with_temperature(r, mdl, t), f"{MODEL_LABELS[mdl]} T={t:g}")[
                    "per_image"
                ]
        out[s] = {**res, "per_image": per_image, "temperature": t, "convergence": training_convergence(r.mechanisms)}
    return out
