"""The chapter's tables: the paper's Tables 1-5 from the scored rows, over seeds, over temperatures, and paired.

:func:`benchmark_tables` assembles the paper's tables of one run; :func:`seed_table` gives the headline
numbers over training seeds with intervals; :func:`temperature_table` and :func:`paired_table` are the
studies of notebook 02.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ... import claims, verdicts
from ...formatting import format_pvalue
from ...metrics.benchmark_metrics import paired_comparison
from ...metrics.minimality import identity_cld
from ..papers.values import paper_table, show_side_by_side, side_by_side
from .config import MODEL_LABELS
from .evaluation import composition_at
from .intervals import FrechetDistances, binary_outcomes, f1_interval
from .result import BenchmarkResult, at_temperatures


def benchmark_tables(
    rows: Mapping[str, Sequence[Mapping[str, Any]]], kinds: Mapping[str, str], cld_weights: tuple[float, float]
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The paper's tables of one run, from the rows of every model's scores.

    Parameters
    ----------
    rows : mapping
        ``"composition"``, ``"effectiveness"``, ``"realism_minimality"``, ``"true_error"`` -> rows, from
        :func:`~cflib.experiments.benchmark.evaluation.evaluate_models`.
    kinds : mapping
        Parent -> ``"regression"``, ``"multiclass"`` or ``"binary"`` (names the effectiveness metric).
    cld_weights : (float, float)
        ``(w1, w2)`` of the CLD (for the identity's CLD column).

    Returns
    -------
    composition, effectiveness, realism_minimality, true_error : pandas.DataFrame
        Tables 1/2, 3/4 and 5, and the mean pixel l1 to the true counterfactual per intervention
        (the fields ``table_*`` of :class:`~cflib.experiments.benchmark.result.BenchmarkResult`).
    """
    comp_df = pd.DataFrame(rows["composition"])
    table_comp = comp_df.pivot_table(index="model", columns=["distance", "cycles"], values=["mean", "std"], sort=False)
    table_comp = table_comp.reorder_levels([1, 2, 0], axis=1).sort_index(axis=1, level=[0, 1], sort_remaining=False)
    eff_df = pd.DataFrame(rows["effectiveness"])
    metric_name = {"regression": "MAE", "multiclass": "acc", "binary": "F1"}
    eff_df["attribute"] = [f"{a} {metric_name[kinds[a]]}" for a in eff_df["attribute"]]
    table_eff = eff_df.pivot_table(index="model", columns=["attribute", "intervention"], values="score", sort=False)
    table_rm = pd.DataFrame(rows["realism_minimality"]).set_index("model")
    table_rm["identity CLD"] = identity_cld(cld_weights)
    table_true = pd.DataFrame(rows["true_error"]).set_index("model")
    return table_comp, table_eff, table_rm, table_true


def format_mean_std(table: pd.DataFrame, digits: int = 3) -> pd.DataFrame:
    """Turn the composition table's ``(distance, cycles, mean|std)`` columns into ``mean ± std`` strings.

    Parameters
    ----------
    table : pandas.DataFrame
        ``result.table_composition``.
    digits : int
        Decimals shown.

    Returns
    -------
    pandas.DataFrame
        Columns ``(distance, "<m> cycle(s)")`` of ``"mean ± std"`` strings.
    """
    out = {}
    for dist, m in dict.fromkeys((d, c) for d, c, _ in table.columns):
        out[(dist, f"{m} cycle" + ("s" if m > 1 else ""))] = [
            f"{a:.{digits}f} ± {b:.{digits}f}"
            for a, b in zip(table[(dist, m, "mean")], table[(dist, m, "std")], strict=False)
        ]
    return pd.DataFrame(out, index=table.index)


def _headline_columns(result: BenchmarkResult) -> dict[str, dict[str, tuple[float, float]]]:
    """Per model: the truth-based headline numbers of one run and the half-width of their 95 % interval over test images."""
    ctx = result.context
    parents, kinds = ctx.parents, ctx.kinds
    eff = result.table_effectiveness
    frechet = FrechetDistances(ctx.real_features, result.per_image, list(result.per_image))

    def half(iv: verdicts.Interval) -> float:
        return (iv.high - iv.low) / 2

    out: dict[str, dict[str, tuple[float, float]]] = {}
    for mdl, per in result.per_image.items():
        err = np.mean([per["true_error"][p] for p in parents], axis=0)
        row = {"true error": (float(err.mean()), half(verdicts.mean_interval(err, unit="test images")))}
        for a in parents:
            col = next(c for c in eff.columns if c[0].split()[0] == a and c[1] == f"do({a})")
            arr = np.asarray(per["effectiveness"][(a, a)], float)
            if kinds[a] == "regression":
                iv = verdicts.mean_interval(arr, unit="test images")
            elif kinds[a] == "multiclass":
                iv = verdicts.binomial_interval(int(arr.sum()), len(arr), unit="test images")
            else:
                iv = f1_interval(*binary_outcomes(result.per_image, mdl, a))
            row[f"{col[0]} {col[1]}"] = (float(eff.loc[MODEL_LABELS[mdl], col]), half(iv))
        row["Fréchet"] = (frechet.point[mdl], 1.96 * float(np.std(frechet.draws[mdl], ddof=1)))
        out[mdl] = row
    return out


def seed_table(results: Mapping[int, BenchmarkResult], *, level: float = 0.95) -> pd.DataFrame:
    """The headline table over training seeds: true error, effectiveness and realism with intervals.

    Each run is one training seed; for every model and metric the table gives the per-seed values,
    their mean and a Student-t interval over seeds (the seed-to-seed variation of training, the
    uncertainty a reader re-training the models would see), and ``± test images``, the mean over seeds
    of the half-width of each seed's 95 % interval over its test images (t interval for the true error
    and the MAEs, Clopper-Pearson for an accuracy, paired percentile bootstrap for an F1, bootstrap
    standard error for the Fréchet distance): the uncertainty of one run's number. The true error is
    the mean pixel l1 (0-255) to the true counterfactual over the test images and interventions.

    Parameters
    ----------
    results : mapping
        ``seed -> BenchmarkResult`` from :func:`run_seeds`.
    level : float
        Confidence level of the intervals over seeds.

    Returns
    -------
    pandas.DataFrame
        Rows: model labels; columns ``(metric, "seed s" | "mean" | "low" | "high" | "± test images")``.
    """
    if len(results) < 2:
        raise ValueError(f"results must hold at least two seeds, got {len(results)}")
    per_seed = {s: _headline_columns(r) for s, r in results.items()}
    models = list(next(iter(per_seed.values())))
    metrics = list(next(iter(per_seed.values()))[models[0]])
    rows = {}
    for mdl in models:
        row = {}
        for met in metrics:
            vals = [per_seed[s][mdl][met][0] for s in results]
            ci = verdicts.mean_interval(vals, level=level, unit="training seeds")
            row.update({(met, f"seed {s}"): v for s, v in zip(results, vals, strict=True)})
            row.update(
                {
                    (met, "mean"): ci.estimate,
                    (met, "low"): ci.low,
                    (met, "high"): ci.high,
                    (met, "± test images"): float(np.mean([per_seed[s][mdl][met][1] for s in results])),
                }
            )
        rows[MODEL_LABELS[mdl]] = row
    table = pd.DataFrame.from_dict(rows, orient="index")
    table.columns = pd.MultiIndex.from_tuples(table.columns)
    return table


def temperature_table(result: BenchmarkResult, models: Sequence[str], temperatures: Sequence[float]) -> pd.DataFrame:
    """Composition after one and after ``cycles`` cycles and the true error of trained models at other noise temperatures.

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
        Index ``(model, T)``; columns the composition distances after ``m = 1`` and ``m = cycles`` null-intervention
        cycles (the run's ``config.cycles``) and ``true error``.
    """
    keep = {f"m={m}" for m in (1, result.config.cycles)}
    rows = [
        {
            "model": MODEL_LABELS[mdl],
            "T": T,
            **{k: v for k, v in ev["summary"].items() if k.rsplit(" ", 1)[-1] in keep or k == "true error"},
        }
        for mdl, T, ev in at_temperatures(result, models, temperatures)
    ]
    return pd.DataFrame(rows).set_index(["model", "T"])


def paired_table(
    result: BenchmarkResult,
    pairs: Sequence[tuple[str, str]],
    *,
    seed: int = 0,
    distances: Sequence[str] = ("l1_pixel", "l1_embedding", "perceptual"),
) -> pd.DataFrame:
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
        One row per distance, cycle count and pair: mean difference, bootstrap 95 % interval, Wilcoxon p (as text:
        ``< 0.001`` or two significant figures).
    """
    rows = []
    for dist in distances:
        for m in sorted({1, result.config.cycles}):
            for a, b in pairs:
                r = paired_comparison(
                    composition_at(result.per_image, a, dist, m),
                    composition_at(result.per_image, b, dist, m),
                    seed=seed,
                )
                rows.append(
                    {
                        "distance": dist,
                        "m": m,
                        "a": MODEL_LABELS[a],
                        "b": MODEL_LABELS[b],
                        "mean(a - b)": r.mean_diff,
                        "95% CI": f"[{claims.reader_number(r.ci[0])}, {claims.reader_number(r.ci[1])}]",
                        "Wilcoxon p": format_pvalue(r.pvalue),
                    }
                )
    return pd.DataFrame(rows)


#: Per dataset: the paper's tables (composition, effectiveness, realism/minimality), the paper's data, and the
#: paper's names of the book's parents (effectiveness columns).
_PAPER = {
    "morphosynth": (("Table 1", "Table 3", "Table 5"), "MorphoMNIST", {"t": "t MAE", "i": "i MAE", "d": "y acc"}),
    "smileyfaces": (("Table 2", "Table 4", "Table 5"), "CelebA", {"s": "Smiling F1", "e": "Eyeglasses F1"}),
}
#: The paper whose tables these are.
PAPER = "counterfactual-benchmark"
_DO = {"d": "y"}  # the book's digit parent is the paper's y
_RANKED = "Each cell: the value and, in brackets, its rank among the models both tables have (1 = best)."


def versus_paper(result: BenchmarkResult, kind: str) -> Any:
    """The paper's table beside the book's: composition, effectiveness or realism and minimality.

    The book's models are matched to the paper's rows by name, its columns to the paper's by meaning (the
    in-domain perceptual distance stands for LPIPS, the in-domain Fréchet distance for FID); every cell
    carries its rank among the models both tables have, the comparison that holds when the data and the
    scales differ (synthetic images, a few epochs).

    Parameters
    ----------
    result : BenchmarkResult
        From :func:`run_benchmark` on ``"morphosynth"`` or ``"smileyfaces"``.
    kind : {"composition", "effectiveness", "realism"}
        Which table: the paper's Table 1/2, 3/4 or 5 (the dataset's half).

    Returns
    -------
    pandas.io.formats.style.Styler
        From :func:`cflib.experiments.papers.values.side_by_side`, with its caption.
    """
    dataset = result.config.dataset
    if dataset not in _PAPER:
        raise ValueError(f"result must come from the morphosynth or smileyfaces benchmark, got dataset {dataset!r}")
    (comp, eff, rm), data, names = _PAPER[dataset]
    m = result.config.cycles
    substitute = (
        f"the book: synthetic {'MorphoSynth digits' if dataset == 'morphosynth' else 'SmileyFaces'} "
        f"({result.config.size} x {result.config.size}, {result.config.n_test} test images) in place of {data}"
    )
    if kind == "composition":
        table = paper_table(PAPER, comp)
        book = result.table_composition.xs("mean", axis=1, level=2)
        dist = {"l1_pixel": "l1 image", "l1_embedding": "l1 embedding", "perceptual": "LPIPS"}
        cols: dict[Any, str] = {
            (d, c): f"{dist[d]}, {'1 cycle' if c == 1 else '10 cycles'}" for d, c in book.columns if d in dist
        }
        caption = (
            f"Paper {comp} (composition on {data}) beside the book; {substitute}; LPIPS is the book's in-domain "
            f"perceptual distance, and the book's '10 cycles' column is after {m} cycles. {_RANKED}"
        )
        frame = side_by_side(book, table, columns=cols, ranks=True, layout="rows")
    elif kind == "effectiveness":
        table = paper_table(PAPER, eff)
        book = result.table_effectiveness
        cols = {}
        for attr, do in book.columns:
            parent, target = attr.split()[0], do[3:-1]
            cols[(attr, do)] = f"{names[parent]} do({_DO.get(target, target)})"
        caption = (
            f"Paper {eff} (effectiveness on {data}) beside the book; {substitute}; the book's own predictors. {_RANKED}"
        )
        frame = side_by_side(book, table, columns=cols, ranks=True, layout="rows")
    elif kind == "realism":
        table = paper_table(PAPER, rm)
        book = result.table_realism_minimality
        cols = {
            "Fréchet (in-domain)": f"{data} FID",
            "CLD": f"{data} CLD",
            "P1": f"{data} P1",
            "P2": f"{data} P2",
        }
        caption = (
            f"Paper {rm} ({data} half: FID and the CLD with its P1, P2) beside the book; {substitute}; FID is the book's "
            f"in-domain Fréchet distance. {_RANKED}"
        )
        frame = side_by_side(book, table, columns=cols, ranks=True)
    else:
        raise ValueError(f"kind must be 'composition', 'effectiveness' or 'realism', got {kind!r}")
    return show_side_by_side(frame, caption)
