"""The image audit, :func:`audit_images`, in named stages.

:func:`audit_images` checks the call (:func:`_checked_settings`, :func:`cflib.audit.images.inputs.check_images`,
:func:`~cflib.audit.images.inputs.check_frame`, :func:`_checked_call`), sets up the generator
(:func:`_generator`), then, under one progress bar with the warnings caught for the report (:func:`_checks`),
scores the classifier, runs the generator on the images and reads them (:func:`_read_counterfactuals`), computes
the gate (:func:`_gate_and_reader_rows`), then the counterfactual rows when the gate passes
(:func:`_counterfactual_rows`; :func:`_stopped_rows` when it fails) and the observational rows
(:func:`_observational_rows`), and assembles the table (:func:`_table`) and the provenance (:func:`_provenance`)
into an :class:`~cflib.audit.images.report.ImageAuditReport`.
"""

from __future__ import annotations

import hashlib
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ...validation import (
    CflibWarning,
    ValidationError,
    ValidationTypeError,
    check_count,
    check_real,
    describe,
)
from ..provenance import cflib_version, environment, model_hash, plain
from ..status import add_status, resolve_tolerances
from .gate import check_gate, gate_rows
from .generator import Generator, ReusedCounterfactual, as_function, train_generator
from .inputs import batched, check_frame, check_images, image_predictor
from .reader import read_attribute, train_reader
from .report import ImageAuditReport
from .rows import decisions, make_row, parity_row, wilson_bounds

__all__ = ["audit_images"]

_N_COMPONENTS = 8


@dataclass(frozen=True)
class _Images:
    """The checked inputs of one image audit: the images, their attributes, the attribute coded 0/1 and the roles."""

    x: np.ndarray
    frame: pd.DataFrame
    a01: np.ndarray
    x0: Any
    x1: Any
    attribute: str
    parents: list[str]
    outcome: str | None
    z: list[str] | None


@dataclass(frozen=True)
class _Settings:
    """The checked settings of one image audit."""

    alpha: float
    epsilon: float
    seed: int
    device: str
    gate: dict[str, float]
    progress: bool

    @property
    def level(self) -> float:
        """The intervals' confidence level, ``1 - alpha``."""
        return 1 - self.alpha


def audit_images(
    predict: Any,
    images: Any,
    attributes: pd.DataFrame,
    *,
    attribute: str,
    counterfactual: Any,
    outcome: str | None = None,
    parents: Sequence[str] = (),
    levels: Sequence[Any] | None = None,
    attribute_reader: Callable[[np.ndarray], Any] | None = None,
    z: Sequence[str] | None = None,
    gate: Mapping[str, float] | None = None,
    epsilon: float = 0.1,
    alpha: float = 0.05,
    seed: int = 0,
    train_options: Mapping[str, Any] | None = None,
    device: str = "auto",
    progress: bool = True,
    tolerances: Mapping[str, float] | None = None,
) -> ImageAuditReport:
    """Audit an image classifier for counterfactual invariance to an attribute, after checking the generator.

    Parameters
    ----------
    predict : callable or torch.nn.Module
        The classifier: ``(n, C, H, W)`` float images in [0, 1] -> ``(n,)`` scores or 0/1 labels, called in
        batches of 256; or a torch module, evaluated batch-wise without gradients on the device its
        parameters live on, whose outputs are read as logits (sigmoid of one column, the last class's
        softmax of several).
    images : array-like, shape (n, C, H, W)
        The audited images, intensities in [0, 1].
    attributes : pandas.DataFrame
        One row per image: the ``attribute``, the ``outcome`` if given and the ``parents``.
    attribute : str
        The sensitive attribute's column: binary, or name the two levels to compare with ``levels``.
    counterfactual : callable, CounterfactualModel or "train"
        The generator: a counterfactual function ``f(images, pa, pa_star) -> images`` (``pa`` and
        ``pa_star`` map the attribute and the parents to one value per image; ``pa_star`` differs in the
        attribute only); an object with ``counterfactual(obs, do)`` over ``{"x": images, attribute,
        *parents}``; or ``"train"``: the book's CLDM+D fitted on these images (grey, square), conditioned on
        the attribute and the integer-coded parents, cached (:func:`cflib.runtime.fit_cached`), on CUDA
        when present (:data:`TRAIN_DEFAULTS`; on a CPU :data:`CPU_TRAIN_DEFAULTS` and a budget; ``train_options``).
    outcome : str, optional
        Column of the true 0/1 label: adds equal opportunity and the accuracy per group.
    parents : sequence of str
        Columns the generator is conditioned on and must hold fixed under ``do(attribute)``.
    levels : (x0, x1), optional
        The two levels to compare when the attribute has more; images at other levels are left out.
    attribute_reader : callable, optional
        ``images -> attribute`` (the levels, or the probability of ``x1``) used to score effectiveness.
        ``None``: a small CNN is trained on half of the images and its accuracy on the other half is reported.
    z : sequence of str, optional
        Columns of non-sensitive content for CIT-LR. ``None``: the parents and the first principal
        components of the generator's images with the attribute held at ``x0`` (the content of each image
        with the attribute standardised).
    gate : dict, optional
        Thresholds overriding :data:`GATE_DEFAULTS` (``composition``, ``reversibility`` in [0, 255],
        ``effectiveness`` in [0, 1]).
    epsilon : float
        Tolerated N-TE of CF-CLOT, in [0, 1).
    alpha : float
        Level of every test; intervals are at ``1 - alpha``.
    seed : int
        Seed of every random draw (reader split and training, folds, median heuristic).
    train_options : dict, optional
        With ``counterfactual="train"``: ``config``, ``fit``, ``counterfactual``, ``cache_dir``, ``budget_s``.
    device : str
        Device of the models the audit trains (``"auto"``: CUDA when present).
    progress : bool
        Show a progress bar over the steps.
    tolerances : dict of str to float, optional
        The largest effect accepted per check (``{"ECA": 0.02, "DP": 0.05}``), overriding
        :data:`cflib.audit.status.TOLERANCES`; each row's ``status`` is ``flagged``, ``clear``, ``inconclusive`` or
        ``not estimable`` against it (:mod:`cflib.audit.status`). ``"CF-CLOT"`` sets ``epsilon``.

    Returns
    -------
    ImageAuditReport
        Rows ``generator composition``, ``generator reversibility``, ``generator effectiveness``,
        ``attribute reader``, ``ECA``, ``CF-CLOT``, ``CIT-LR``, ``DP``, ``EO`` and ``accuracy (<level>)``.

    Raises
    ------
    TypeError, ValueError
        One line naming the argument and the fix: images of the wrong shape or outside [0, 1], a
        non-binary or constant attribute, a missing column, a classifier, generator or reader returning the
        wrong shape or NaN, ...

    Examples
    --------
    >>> report = audit_images(clf, x, frame, attribute="group", counterfactual=f)  # doctest: +SKIP
    >>> report.summary()  # doctest: +SKIP
    """
    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    tols, epsilon = resolve_tolerances(tolerances, epsilon)
    alpha, epsilon, seed, gate, dev = _checked_settings(alpha, epsilon, seed, gate, device)
    x = check_images(images)
    frame, x0, x1, parents, keep = check_frame(attributes, len(x), attribute, outcome, parents, levels)
    f_predict = image_predictor(predict)
    z = _checked_call(frame, attribute_reader, counterfactual, z)
    if not keep.all():
        x, frame = x[keep], frame[keep].reset_index(drop=True)
    a01 = (frame[attribute].to_numpy() == x1).astype(np.int64)
    data = _Images(x, frame, a01, x0, x1, attribute, parents, outcome, z)
    settings = _Settings(alpha, epsilon, seed, str(dev), gate, progress)
    gen, current, target, generator_hash = _generator(counterfactual, data, train_options, settings)
    rows, details, notes, reader_kind = _checks(f_predict, gen, data, current, target, attribute_reader, settings)
    provenance = _provenance(
        data,
        settings,
        predict=predict,
        generator_hash=generator_hash,
        reader_kind=reader_kind,
        attribute_reader=attribute_reader,
    )
    timing = {"started_utc": started, "wall_seconds": round(time.perf_counter() - t0, 2)}
    provenance["tolerances"] = tols
    return ImageAuditReport(_table(rows, alpha, tols, len(x)), alpha, provenance, timing, details, notes)


def _checks(
    f_predict: Callable[[np.ndarray], Any],
    gen: Generator,
    data: _Images,
    current: np.ndarray,
    target: np.ndarray,
    attribute_reader: Callable[[np.ndarray], Any] | None,
    settings: _Settings,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any], tuple[str, ...], str]:
    """The audit's steps under one progress bar, with the cflib warnings caught for the report: the classifier's
    scores, the generator's images (counterfactual, null intervention, round trip), the attribute reader's readings,
    then every row (the gate and the reader; the counterfactual rows or why they are not estimable; the observational
    rows). Returns the rows, the details, the notes and the reader's kind."""
    from tqdm import tqdm

    from ...metrics.axioms import l1_distance

    steps = ["classifier", "generator", "reader", "checks"]
    bar = tqdm(total=len(steps), desc="image audit", disable=not settings.progress)
    x, a01 = data.x, data.a01
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CflibWarning)
        y_hat = batched(f_predict, x, "predict")
        bar.update(1)

        x_cf = gen(x, target, current)
        x_null = gen(x, current, current)
        x_back = gen(x_cf, current, target)
        bar.update(1)
        d_null, d_back = l1_distance(x, x_null), l1_distance(x, x_back)
        reader_kind, held, read_factual, hits = _read_counterfactuals(data, x_cf, attribute_reader, settings)
        bar.update(1)

        rows, failed, acc, where = _gate_and_reader_rows(
            d_null,
            d_back,
            hits,
            read_factual,
            a01,
            held,
            settings.gate,
            settings.level,
            reader_kind,
            given_reader=attribute_reader is not None,
        )
        details: dict[str, Any] = {}
        if failed:
            rows.update(_stopped_rows(failed, acc, settings.gate, where))
        else:
            cf_rows, details = _counterfactual_rows(f_predict, data, x_cf, x_null, y_hat, settings)
            rows.update(cf_rows)
        obs_rows, obs_details = _observational_rows(y_hat, data, settings)
        rows.update(obs_rows)
        details.update(obs_details)
        if "figure" not in details:  # the gate failed: the first units, not scored on their counterfactuals
            details["figure"] = _first_units(x, x_cf, y_hat)
        bar.update(1)
    bar.close()
    notes = _passed_on(caught)
    return rows, details, notes, reader_kind


def _passed_on(caught: list[warnings.WarningMessage]) -> tuple[str, ...]:
    """The cflib warnings raised during the audit, for the report; every warning caught is passed on to the caller."""
    notes = tuple(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, CflibWarning)))
    for w in caught:  # recorded in the report, and passed on to the caller
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return notes


def _checked_settings(
    alpha: Any, epsilon: Any, seed: Any, gate: Any, device: str
) -> tuple[float, float, int, dict[str, float], Any]:
    """The level, epsilon, seed, gate thresholds and device, checked (one line naming the argument at fault)."""
    from ...results import check_alpha
    from ...runtime import get_device

    alpha = check_alpha(alpha)
    epsilon = check_real(epsilon, "epsilon", low=0.0, high=1.0, high_open=True)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValidationTypeError(f"seed must be a whole number >= 0, got {describe(seed)}")
    seed = check_count(seed, "seed", minimum=0)
    gate = check_gate(gate)
    dev = get_device(device)
    return alpha, epsilon, seed, gate, dev


def _checked_call(frame: pd.DataFrame, attribute_reader: Any, counterfactual: Any, z: Any) -> list[str] | None:
    """The reader and the generator checked, and CIT-LR's ``z`` as a list of numeric columns of the attributes."""
    if attribute_reader is not None and not callable(attribute_reader):
        raise ValidationTypeError(
            f"attribute_reader must be a callable images -> attribute, or None, got {describe(attribute_reader)}"
        )
    if isinstance(counterfactual, str) and counterfactual != "train":
        raise ValidationError(
            f"counterfactual must be a function, a CounterfactualModel or 'train', got the string {counterfactual!r}"
        )
    if counterfactual is None:
        raise ValidationTypeError(
            "counterfactual is required: a function f(images, pa, pa_star), a CounterfactualModel or 'train'"
        )
    if z is not None:
        z = [z] if isinstance(z, str) else list(z)
        missing = [c for c in z if c not in frame.columns]
        if missing:
            raise ValidationError(
                f"z: column(s) {missing} are not in attributes; its columns are {list(map(str, frame.columns))[:20]}"
            )
        if any(not pd.api.types.is_numeric_dtype(frame[c]) for c in z) or frame[z].isna().any().any():
            raise ValidationError(f"z: columns {z} must be numeric without missing values")
    return z


def _generator(
    counterfactual: Any, data: _Images, train_options: Mapping[str, Any] | None, settings: _Settings
) -> tuple[Generator, np.ndarray, np.ndarray, str]:
    """The generator with checked output, the current and target levels it is called with, and its hash (or kind)."""
    frame, parents, a01 = data.frame, data.parents, data.a01
    a = frame[data.attribute].to_numpy()
    pa = {p: frame[p].to_numpy() for p in parents}
    if counterfactual == "train":
        aux = None
        if parents:
            aux_frame = frame[parents]
            if (
                not all(
                    pd.api.types.is_integer_dtype(aux_frame[c]) or pd.api.types.is_bool_dtype(aux_frame[c])
                    for c in parents
                )
                or (aux_frame.to_numpy(dtype=float) < 0).any()
            ):
                raise ValidationError(
                    f"parents: counterfactual='train' conditions on integer-coded parents (0, 1, ...), got dtypes "
                    f"{[str(aux_frame[c].dtype) for c in parents]}; code them as integers first"
                )
            aux = aux_frame.to_numpy(dtype=np.int64)
        f_cf, generator_kind = train_generator(
            data.x, a01, aux, train_options, settings.seed, settings.device, settings.progress
        )
        gen = Generator(f_cf, {**pa}, "_a01", "CLDM+D")
        current, target = a01, 1 - a01
        generator_hash = generator_kind
    else:
        if train_options is not None:
            raise ValidationError(
                "train_options applies to counterfactual='train' only; remove it or pass counterfactual='train'"
            )
        f_cf, generator_kind = as_function(counterfactual)
        gen = Generator(f_cf, pa, data.attribute, generator_kind)
        current, target = a, np.where(a01 == 1, data.x0, data.x1)
        generator_hash = _hash_of(counterfactual)
    return gen, current, target, generator_hash


def _read_counterfactuals(
    data: _Images, x_cf: np.ndarray, attribute_reader: Any, settings: _Settings
) -> tuple[str, np.ndarray, np.ndarray, np.ndarray]:
    """The attribute reader (given, or trained on half of the images) on the factual images it did not learn from and on
    the counterfactuals: its kind, the images it is scored on, its reading of them, and which counterfactuals it reads as
    the intervened level."""
    x, a01, x0, x1 = data.x, data.a01, data.x0, data.x1
    if attribute_reader is None:
        reader, held, reader_kind = train_reader(x, a01, settings.seed, settings.device, settings.progress)
    else:
        reader, held, reader_kind = attribute_reader, np.ones(len(x), dtype=bool), "given"
    read_factual = read_attribute(reader, x[held], x0, x1)
    read_cf = read_attribute(reader, x_cf, x0, x1)
    hits = read_cf == (1 - a01)
    return reader_kind, held, read_factual, hits


def _gate_and_reader_rows(
    d_null: np.ndarray,
    d_back: np.ndarray,
    hits: np.ndarray,
    read_factual: np.ndarray,
    a01: np.ndarray,
    held: np.ndarray,
    gate: Mapping[str, float],
    level: float,
    reader_kind: str,
    *,
    given_reader: bool,
) -> tuple[dict[str, dict[str, Any]], list[str], Any, str]:
    """The gate's rows and the attribute reader's accuracy: the rows, the failed axioms, the accuracy and where it was read."""
    from ...verdicts import binomial_interval

    acc = binomial_interval(int((read_factual == a01[held]).sum()), int(held.sum()), level=level, unit="images")
    where = "held-out half of the images" if not given_reader else "the factual images"
    rows, failed = gate_rows(d_null, d_back, hits, gate, level)
    rows["attribute reader"] = make_row(
        acc.estimate,
        acc.low,
        acc.high,
        math.nan,
        f"reads the attribute correctly on {acc.estimate:.1%} of {where}",
        f"accuracy of the attribute reader ({reader_kind}) on {where}, {acc.method}",
        "axiomatic-soundness, effectiveness readers (pseudo-oracles)",
    )
    return rows, failed, acc, where


def _stopped_rows(failed: list[str], acc: Any, gate: Mapping[str, float], where: str) -> dict[str, dict[str, Any]]:
    """ECA, CF-CLOT and CIT-LR when the generator fails the gate: not estimable, naming the failed axioms."""
    rows = {}
    cf_names = ("ECA", "CF-CLOT", "CIT-LR")
    reason = "not estimable: the counterfactual generator fails " + " and ".join(failed)
    if any(f.startswith("effectiveness") for f in failed) and acc.low < gate["effectiveness"]:
        reason += (
            f"; the attribute reader itself reads only {acc.estimate:.1%} of {where} correctly, "
            "so a better reader may pass it"
        )
    for name, ref in zip(
        cf_names, ("invariance-test, eqs. 7-8", "closeness-test, Eq. 7", "invariance-test, Alg. 1"), strict=True
    ):
        rows[name] = make_row(
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            reason,
            "not computed: a generator that fails the gate cannot vouch for any classifier",
            ref,
        )
    return rows


def _counterfactual_rows(
    f_predict: Callable[[np.ndarray], Any],
    data: _Images,
    x_cf: np.ndarray,
    x_null: np.ndarray,
    y_hat: np.ndarray,
    settings: _Settings,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """ECA, CF-CLOT (per direction) and CIT-LR on the counterfactual images (the gate passed), and the units that flip most."""
    from ...stats.invariance import cit_lr_test
    from ..directions import directional_cfclot

    x, a01, frame, attribute, z = data.x, data.a01, data.frame, data.attribute, data.z
    level, alpha, seed = settings.level, settings.alpha, settings.seed
    rows: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    n = len(x)
    y_cf = batched(f_predict, x_cf, "predict (on the counterfactual images)")
    dec, dec_cf, what = decisions(y_hat, y_cf)
    same = np.abs(dec - dec_cf) <= (0.0 if what != "scores" else 1e-9)
    k = int(same.sum())
    lo, hi = wilson_bounds(k, n, level)
    eca = k / n
    rows["ECA"] = make_row(
        eca,
        lo,
        hi,
        math.nan,
        "invariant on every image"
        if k == n
        else f"{1 - eca:.1%} of {what} change under do({attribute}) " + ("(interval excludes 1)" if hi < 1 else ""),
        f"share of {what} unchanged by do({attribute} = other level), Wilson {level:.0%} interval, {n} images",
        "invariance-test, eqs. 7-8",
    )
    rows["CF-CLOT"], details["CF-CLOT"], _ = directional_cfclot(
        y_hat, y_cf, a01, settings.epsilon, alpha, seed, (data.x0, data.x1)
    )
    if z is not None:
        zz, z_text = frame[z].to_numpy(dtype=float), f"given columns {z}"
    else:
        zz, z_text = _content_embedding(x_null, x_cf, a01, frame, data.parents, f_predict)
    cit = cit_lr_test(y_hat, a01, zz, seed=seed)
    details["CIT-LR"] = cit
    rows["CIT-LR"] = make_row(
        cit.statistic,
        math.nan,
        math.nan,
        cit.pvalue,
        "not counterfactually invariant" if cit.pvalue < alpha else "no evidence against invariance",
        f"CIT-LR ({cit.method}), z = {z_text}",
        "invariance-test, Alg. 1",
    )
    order = np.argsort(-np.abs(y_cf - y_hat), kind="stable")[: min(3, n)]
    details["figure"] = {
        "factual": x[order],
        "counterfactual": x_cf[order],
        "score": y_hat[order],
        "score_cf": y_cf[order],
    }
    return rows, details


def _observational_rows(
    y_hat: np.ndarray, data: _Images, settings: _Settings
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Demographic parity, and with the outcome equal opportunity and the accuracy per group (no generator needed)."""
    from ...verdicts import binomial_interval

    a01, outcome, attribute = data.a01, data.outcome, data.attribute
    level, alpha, seed = settings.level, settings.alpha, settings.seed

    rows: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    rows["DP"], details["DP"] = parity_row(
        y_hat, a01, level, alpha, seed, "score", "invariance-test, eq. 5", "demographic parity (mean scores)"
    )
    if outcome is None:
        return rows, details
    y = data.frame[outcome].to_numpy().astype(int)
    if (y == 1).sum() >= 4 and min(((y == 1) & (a01 == v)).sum() for v in (0, 1)) >= 2:
        # equal opportunity is demographic parity among the units with y = 1 (eq. 6)
        rows["EO"], details["EO"] = parity_row(
            y_hat[y == 1],
            a01[y == 1],
            level,
            alpha,
            seed,
            "score among y = 1",
            "invariance-test, eq. 6",
            "equal opportunity (mean scores)",
        )
    else:
        rows["EO"] = make_row(
            math.nan,
            math.nan,
            math.nan,
            math.nan,
            "not estimable: fewer than 2 images with y = 1 in a group",
            "equal opportunity: mean prediction among y = 1 at x1 minus at x0",
            "invariance-test, eq. 6",
        )
    dec, _, what = decisions(y_hat)
    for lv, code in ((data.x0, 0), (data.x1, 1)):
        sel = a01 == code
        ref = "invariance-test, Tables 2-3 (per-group performance)"
        if what == "scores":  # neither labels nor probabilities: there is no decision to score
            rows[f"accuracy ({lv})"] = make_row(
                math.nan,
                math.nan,
                math.nan,
                math.nan,
                "not estimable: the predictions are scores outside [0, 1], not decisions",
                f"share of correct decisions among the images with {attribute} = {lv}",
                ref,
            )
            continue
        iv = binomial_interval(int((dec[sel] == y[sel]).sum()), int(sel.sum()), level=level, unit="images")
        rows[f"accuracy ({lv})"] = make_row(
            iv.estimate,
            iv.low,
            iv.high,
            math.nan,
            f"{iv.estimate:.1%} of {what} correct",
            f"share of correct {what} among the images with {attribute} = {lv}, {iv.method}",
            ref,
        )
    return rows, details


def _first_units(x: np.ndarray, x_cf: np.ndarray, y_hat: np.ndarray) -> dict[str, np.ndarray]:
    """The figure's units when the gate failed: the first three, with no score on their counterfactuals."""
    order = np.arange(min(3, len(x)))
    return {
        "factual": x[order],
        "counterfactual": x_cf[order],
        "score": y_hat[order],
        "score_cf": np.full(order.size, np.nan),
    }


def _table(rows: Mapping[str, dict[str, Any]], alpha: float, tolerances: Mapping[str, float], n: int) -> pd.DataFrame:
    """The report's rows as a table indexed by check, with each row's status against its tolerance and ``flagged``
    (:func:`cflib.audit.status.add_status`)."""
    table = pd.DataFrame.from_dict(rows, orient="index")[
        ["estimate", "ci_low", "ci_high", "pvalue", "verdict", "method", "reference"]
    ]
    table.index.name = "check"
    return add_status(table, alpha, tolerances, n)


def _provenance(
    data: _Images,
    settings: _Settings,
    *,
    predict: Any,
    generator_hash: str,
    reader_kind: str,
    attribute_reader: Any,
) -> dict[str, Any]:
    """The report's provenance: hashes of the images, classifier, generator and reader, the gate, the device."""
    x, frame, a01, x0, x1, parents = data.x, data.frame, data.a01, data.x0, data.x1, data.parents
    data_hash = hashlib.sha256(np.ascontiguousarray(x).tobytes())
    data_hash.update(frame.to_csv(index=False).encode())
    return {
        "data_sha256": "sha256:" + data_hash.hexdigest(),
        "n_rows": int(len(x)),
        "group_counts": {str(x0): int((a01 == 0).sum()), str(x1): int((a01 == 1).sum())},
        "roles": {
            "x": data.attribute,
            "z": list(parents),
            "w": [],
            "y": data.outcome,
            "x0": plain(x0),
            "x1": plain(x1),
            "cit_z": data.z,
            "business_necessity": [],
            "parents": list(parents),
        },
        "model": _hash_of(predict),
        "counterfactual": generator_hash,
        "cflib_version": cflib_version(),
        "seed": int(settings.seed),
        "n_boot": 0,
        "device": settings.device,
        "environment": environment(),
        "kind": "images",
        "image_shape": [int(s) for s in x.shape[1:]],
        "gate": dict(settings.gate),
        "attribute_reader": reader_kind if attribute_reader is None else _hash_of(attribute_reader),
    }


def _content_embedding(
    x_null: np.ndarray,
    x_cf: np.ndarray,
    a01: np.ndarray,
    frame: pd.DataFrame,
    parents: Sequence[str],
    f_predict: Callable[[np.ndarray], Any],
) -> tuple[np.ndarray, str]:
    """Each image's content with the attribute standardised, as CIT-LR's ``z``.

    The standardised image is the generator's image of the unit at level x0 (the null intervention for units
    at x0, the counterfactual for units at x1, so both went through the generator); a function of the
    non-sensitive content alone when the generator is sound. ``z`` holds the classifier's score on it (under
    invariance the score itself, so E[y_hat | A, z] = E[y_hat | z] holds exactly), its first principal
    components and the parents' columns.
    """
    std = np.where((a01 == 0)[:, None, None, None], x_null, x_cf)
    score = batched(f_predict, std, "predict (on the standardised images)")
    flat = std.reshape(len(a01), -1).astype(np.float64)
    flat = flat - flat.mean(0)
    k = int(min(_N_COMPONENTS, max(1, len(a01) // 20), flat.shape[1]))
    u, s, _ = np.linalg.svd(flat, full_matrices=False)
    cols = [frame[p].to_numpy(dtype=float)[:, None] for p in parents if pd.api.types.is_numeric_dtype(frame[p])]
    z = np.hstack([score[:, None], u[:, :k] * s[:k], *cols])
    return z, (
        f"the classifier's score on and {k} principal components of each image generated at x0"
        + (f", and parents {list(parents)}" if cols else "")
    )


def _torch_hash(module: Any) -> str:
    h = hashlib.sha256(type(module).__name__.encode())
    for k, v in sorted(module.state_dict().items()):
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return "sha256:" + h.hexdigest()


def _hash_of(obj: Any, _seen: frozenset = frozenset()) -> str:
    if isinstance(obj, ReusedCounterfactual):
        return _hash_of(obj.f, _seen)
    cells = getattr(obj, "__closure__", None)
    if cells and id(obj) not in _seen:  # a lambda around a model: its source is the same for every model it wraps
        h = hashlib.sha256(model_hash(obj).encode())
        for cell in cells:
            try:
                h.update(_hash_of(cell.cell_contents, _seen | {id(obj)}).encode())
            except ValueError:  # an empty cell
                continue
        return "sha256:" + h.hexdigest()
    try:
        import torch

        if isinstance(obj, torch.nn.Module):
            return _torch_hash(obj)
    except ImportError:  # pragma: no cover
        pass
    return model_hash(obj)
