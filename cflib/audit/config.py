"""Audits from a YAML config (``cflib audit CONFIG --out DIR``): tabular, or images when the file has ``images``.

Tabular data in a CSV file are audited in memory (:func:`cflib.audit.audit`); data in Parquet files (a file, a
folder or a glob such as ``decisions/*.parquet``) are read with :func:`dask.dataframe.read_parquet` and audited on
a Dask cluster (:func:`cflib.audit.distributed.audit_distributed`, issue 30): an existing scheduler
(``scheduler=``, ``cflib audit --scheduler tcp://...``) or a LocalCluster of one single-threaded worker per core.
"""

from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from ..fairness.sfm import StandardFairnessModel
from ..validation import ValidationError
from .checks import check_names
from .distributed import audit_distributed
from .images.pipeline import audit_images
from .images.report import ImageAuditReport
from .inputs import one_line
from .loading import load_classifier, load_images, load_object
from .report import AuditReport
from .settings import MIN_GROUP_SIZE, AuditSettings
from .tabular import audit

_Report = TypeVar("_Report", bound=AuditReport)

__all__ = ["audit_from_config", "audit_images_from_config", "is_parquet"]

_CONFIG_KEYS = {
    "data",
    "roles",
    "model",
    "counterfactual",
    "cit_z",
    "business_necessity",
    "epsilon",
    "alpha",
    "seed",
    "n_boot",
    "learner",
    "impute",
    "threshold",
    "n_jobs",
    "key",
    "nuisance_rows",
    "n_folds",
    "tolerances",
    "groups",
    "min_group_size",
}
#: Keys of the in-memory audit that the audit of Parquet data (on a cluster) does not have.
_IN_MEMORY_ONLY = ("business_necessity", "impute", "n_jobs")
#: Keys of the audit of Parquet data only.
_PARQUET_ONLY = ("key", "nuisance_rows", "n_folds")
_ROLES = {"x", "z", "w", "y", "x0", "x1", "y1", "reference"}
_IMAGE_KEYS = {
    "images",
    "attributes",
    "attribute",
    "levels",
    "classifier",
    "counterfactual",
    "outcome",
    "parents",
    "attribute_reader",
    "z",
    "gate",
    "epsilon",
    "alpha",
    "seed",
    "train_options",
    "tolerances",
}


def audit_from_config(
    config: str | os.PathLike,
    out: str | os.PathLike,
    *,
    progress: bool = True,
    fail_on: str | Sequence[str] | None = None,
    data: str | os.PathLike | None = None,
    scheduler: str | None = None,
    require_clear: str | Sequence[str] | None = None,
) -> AuditReport:
    """Run :func:`audit` from a YAML file and write ``report.json``, ``report.html`` and ``model_card.md`` into ``out``.

    The file holds ``data`` (a CSV path, relative to the file, read as it comes; or Parquet data, see below),
    ``roles`` (``x``, ``z``,
    ``w``, ``y``; ``y1`` the positive label of a string or categorical outcome; ``x0``/``x1`` to compare
    two levels of the attribute, or ``reference`` to compare every level with one), ``model``
    (``module:function`` taking a DataFrame, or a pickled scikit-learn estimator ``.pkl``/``.joblib``),
    and optionally ``counterfactual`` (``module:function``, frame to counterfactual frame), ``cit_z``,
    ``business_necessity``, ``epsilon``, ``alpha``, ``seed``, ``n_boot``, ``learner``, ``impute``
    (true/false), ``threshold`` (scores at or above it are decision 1), ``n_jobs`` and ``tolerances`` (check name ->
    the largest effect accepted, :data:`cflib.audit.status.TOLERANCES`). A file with an ``images`` key is an
    image audit (:func:`cflib.audit_images.audit_images_from_config`).

    **Parquet data** (``data`` a ``.parquet`` file, a folder of them, or a glob such as ``decisions/*.parquet``)
    are read with :func:`dask.dataframe.read_parquet` and audited on a Dask cluster by
    :func:`cflib.audit.distributed.audit_distributed` (the model is applied partition by partition; no process
    holds all rows): the same report and files (the effects, the group table, DP/EO/FPR, and with a
    ``counterfactual`` ECA, CF-CLOT with random Fourier features and with ``cit_z`` CIT-LR). The keys ``key`` (an id
    column: folds and bootstrap multipliers from its hash), ``nuisance_rows`` and ``n_folds`` apply to it; the
    in-memory audit's ``business_necessity``, ``impute``, ``n_jobs`` and ``roles.reference`` do not (refused).
    ``groups`` (a list of columns) and ``min_group_size`` add the intersectional groups to either form.

    Parameters
    ----------
    config : path-like
        The YAML file.
    out : path-like
        Output folder; written only when the audit succeeded (each file atomically).
    progress : bool
        Show a progress bar (one step per pass for Parquet data, quiet when not a terminal).
    fail_on : str or sequence of str, optional
        Check names of a CI gate (:meth:`AuditReport.gate`); checked before anything is written, so a
        name that selects no check of this report writes nothing.
    data : path-like, optional
        Replaces the file's ``data`` (relative to the working folder, not to the file): ``cflib audit --data``.
    scheduler : str, optional
        Address of a Dask scheduler (``tcp://host:port``) for Parquet data; default a LocalCluster of one
        single-threaded worker per core, closed at the end. Refused for CSV data.
    require_clear : str or sequence of str, optional
        Check names that must be clear (``cflib audit --require-clear``); checked like ``fail_on``.

    Returns
    -------
    AuditReport
        The same type for CSV and Parquet data.

    Raises
    ------
    FileNotFoundError, TypeError, ValueError
        One line naming the key or argument at fault.
    """

    for names in (fail_on, require_clear):
        if names is not None:
            check_names(names)  # the spelling now; the names against the report before any file is written
    config = Path(config)
    cfg = _read_yaml(config, "data, roles, model", ValueError)
    if "images" in cfg:  # an image audit (cflib.audit_images)
        return audit_images_from_config(config, out, progress=progress, fail_on=fail_on, require_clear=require_clear)
    unknown = sorted(set(cfg) - _CONFIG_KEYS)
    if unknown:
        raise ValueError(f"{config}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_CONFIG_KEYS))}")
    for key in ("data", "roles", "model"):
        if key not in cfg:
            raise ValueError(f"{config}: missing key {key!r}")
    base = config.parent.resolve()
    data_spec = str(data) if data is not None else str(base / str(cfg["data"]))
    if is_parquet(data_spec):
        return _audit_parquet(config, cfg, data_spec, out, progress, fail_on, scheduler, require_clear)
    if scheduler is not None:
        raise ValueError(f"scheduler: only Parquet data are audited on a cluster; {config}'s data is {data_spec}")
    misplaced = [k for k in _PARQUET_ONLY if k in cfg]
    if misplaced:
        raise ValueError(f"{config}: key(s) {', '.join(misplaced)} apply to Parquet data only (the audit on a cluster)")
    data_path = Path(data_spec).resolve()
    if not data_path.is_file():
        raise FileNotFoundError(f"{config}: data file {data_path} does not exist")
    frame = pd.read_csv(data_path)
    sfm, roles = _checked_roles(config, cfg, frame, data_path)
    model = load_object(str(cfg["model"]), base, "model")
    cf = load_object(str(cfg["counterfactual"]), base, "counterfactual") if cfg.get("counterfactual") else None
    shared = _shared_settings(cfg, roles, progress, cf)
    report = audit(
        model,
        frame,
        sfm=sfm,
        business_necessity=cfg.get("business_necessity", ()),
        impute=cfg.get("impute", False),
        reference=roles.get("reference"),
        n_jobs=cfg.get("n_jobs"),
        **{f.name: getattr(shared, f.name) for f in dataclasses.fields(shared)},
    )
    return _written(report, out, fail_on, require_clear)


def is_parquet(spec: str | os.PathLike) -> bool:
    """Whether a config's ``data`` names Parquet data: a ``.parquet``/``.pq`` file, a glob, or a folder.

    Parameters
    ----------
    spec : path-like
        The ``data`` entry (a path, or a pattern with ``*``, ``?`` or ``[``).

    Returns
    -------
    bool
    """
    text = str(spec)
    return text.endswith((".parquet", ".pq")) or any(ch in Path(text).name for ch in "*?[") or Path(text).is_dir()


def _parquet_files(config: Path, spec: str) -> list[str]:
    """The Parquet files a path, folder or glob names (sorted), or one line saying that it names none."""
    path = Path(spec)
    if path.is_dir():
        files = sorted(str(p) for p in path.rglob("*") if p.suffix in (".parquet", ".pq") and p.is_file())
    elif any(ch in path.name for ch in "*?["):
        files = sorted(p for p in glob.glob(spec) if Path(p).is_file())
    else:
        files = [spec] if path.is_file() else []
    if not files:
        raise FileNotFoundError(f"{config}: data {spec} names no Parquet file")
    return files


def _audit_parquet(
    config: Path,
    cfg: dict[str, Any],
    spec: str,
    out: str | os.PathLike,
    progress: bool,
    fail_on: str | Sequence[str] | None,
    scheduler: str | None,
    require_clear: str | Sequence[str] | None = None,
) -> AuditReport:
    """Parquet data: read with Dask, audited on a cluster (:func:`audit_distributed`), the same files written."""
    import dask.dataframe as dd

    def refuse(keys: list[str]) -> None:
        if keys:
            raise ValueError(
                f"{config}: key(s) {', '.join(keys)} do not apply to Parquet data (the audit on a cluster runs the "
                "effects, the group table, DP/EO/FPR, ECA, CF-CLOT and CIT-LR); audit a CSV sample in memory for them"
            )

    refuse([k for k in _IN_MEMORY_ONLY if k in cfg])
    if scheduler is not None and (not isinstance(scheduler, str) or "://" not in scheduler):
        raise ValueError(f"scheduler: give a Dask scheduler's address such as tcp://host:8786, got {scheduler!r}")
    try:
        frame = dd.read_parquet(_parquet_files(config, spec))
    except (OSError, ValueError) as exc:
        if isinstance(exc, FileNotFoundError) and str(config) in str(exc):
            raise
        raise ValueError(f"{config}: data {spec} is not readable as Parquet ({one_line(exc, 200)})") from None
    sfm, roles = _checked_roles(config, cfg, frame, Path(spec))
    refuse(["roles.reference"] if "reference" in roles else [])
    base = config.parent.resolve()
    model = load_object(str(cfg["model"]), base, "model")
    cf = load_object(str(cfg["counterfactual"]), base, "counterfactual") if cfg.get("counterfactual") else None
    for obj in (model, cf):
        _send_by_value(obj, base)
    result = audit_distributed(
        model,
        frame,
        sfm=sfm,
        settings=_shared_settings(cfg, roles, progress, cf),
        key=cfg.get("key"),
        n_folds=cfg.get("n_folds", 5),
        nuisance_rows=cfg.get("nuisance_rows", 200_000),
        client=scheduler,
    )
    return _written(result, out, fail_on, require_clear)


def _shared_settings(cfg: dict[str, Any], roles: dict[str, Any], progress: bool, cf: Any) -> AuditSettings:
    """The options every form of the audit shares, from the config (:class:`AuditSettings`)."""
    return AuditSettings(
        alpha=cfg.get("alpha", 0.05),
        seed=cfg.get("seed", 0),
        n_boot=cfg.get("n_boot", 200),
        learner=cfg.get("learner", "hgb"),
        y1=roles.get("y1"),
        threshold=cfg.get("threshold", 0.5),
        epsilon=cfg.get("epsilon", 0.1),
        counterfactual=cf,
        z=cfg.get("cit_z"),
        tolerances=cfg.get("tolerances"),
        progress=progress,
        groups=cfg.get("groups"),
        min_group_size=cfg.get("min_group_size", MIN_GROUP_SIZE),
    )


def _send_by_value(model: Any, base: Path) -> None:
    """A model defined in a module of the config's folder travels to the workers by value (they cannot import it)."""
    import sys

    import cloudpickle

    module = sys.modules.get(str(getattr(model, "__module__", "") or ""))
    where = getattr(module, "__file__", None)
    if module is not None and where is not None and Path(where).resolve().is_relative_to(base):
        cloudpickle.register_pickle_by_value(module)


def _checked_roles(config: Path, cfg: dict, data: Any, data_path: Path) -> tuple[StandardFairnessModel, dict]:
    """The config's ``roles`` as a standard fairness model (and the roles as given), or one line naming the key at fault."""
    roles = cfg["roles"]
    if not isinstance(roles, dict) or not {"x", "y"} <= set(roles):
        raise ValueError(f"{config}: roles must map x, z, w and y to columns (x and y at least), got {roles!r}")
    bad_roles = sorted(set(roles) - _ROLES)
    if bad_roles:
        raise ValueError(f"{config}: unknown role(s) {bad_roles}; roles are {', '.join(sorted(_ROLES))}")
    if ("x0" in roles) != ("x1" in roles):
        raise ValueError(
            f"{config}: roles.x0 and roles.x1 go together (one pair of levels); to compare every level "
            "with one baseline, give roles.reference alone"
        )
    if "impute" in cfg and not isinstance(cfg["impute"], bool):
        raise ValueError(f"{config}: impute must be true or false, got {cfg['impute']!r}")
    as_tuple = {k: (roles[k],) if isinstance(roles.get(k), str) else tuple(roles.get(k) or ()) for k in ("z", "w")}
    sfm = StandardFairnessModel(roles["x"], as_tuple["z"], as_tuple["w"], roles["y"], roles.get("x0"), roles.get("x1"))
    if sfm.y not in data.columns:
        raise ValueError(f"{config}: roles.y column {sfm.y!r} is not in {data_path.name}")
    return sfm, roles


def audit_images_from_config(
    config: str | os.PathLike,
    out: str | os.PathLike,
    *,
    progress: bool = True,
    fail_on: str | Sequence[str] | None = None,
    require_clear: str | Sequence[str] | None = None,
) -> ImageAuditReport:
    """Run :func:`audit_images` from a YAML file and write ``report.json`` and ``report.html`` into ``out``.

    The file holds ``images`` (an ``.npz``, or a folder of PNGs with ``attributes`` naming its CSV, both
    relative to the file), ``attribute``, ``classifier`` (``module:function`` or a TorchScript file) and
    ``counterfactual`` (``module:function`` or ``train``), and optionally ``levels``, ``outcome``,
    ``parents``, ``attribute_reader`` (``module:function``), ``z``, ``gate``, ``epsilon``, ``alpha``,
    ``seed``, ``train_options`` (its ``cache_dir`` relative to the file) and ``tolerances``.

    Parameters
    ----------
    config : path-like
        The YAML file.
    out : path-like
        Output folder; written only when the audit succeeded (each file atomically).
    progress : bool
        Show a progress bar.
    fail_on : str or sequence of str, optional
        Check names ``cflib audit --fail-on`` gates on; checked against the report before anything is written.
    require_clear : str or sequence of str, optional
        Check names that must be clear (``cflib audit --require-clear``), checked the same way.

    Returns
    -------
    ImageAuditReport

    Raises
    ------
    FileNotFoundError, TypeError, ValueError
        One line naming the key at fault.
    """

    config = Path(config)
    cfg = _read_yaml(config, "images, attribute, classifier, counterfactual", ValidationError)
    unknown = sorted(set(cfg) - _IMAGE_KEYS)
    if unknown:
        raise ValidationError(
            f"{config}: unknown key(s) {', '.join(unknown)}; allowed for an image audit: {', '.join(sorted(_IMAGE_KEYS))}"
        )
    for key in ("images", "attribute", "classifier", "counterfactual"):
        if key not in cfg:
            raise ValidationError(
                f"{config}: missing key {key!r} (an image audit needs images, attribute, classifier, counterfactual)"
            )
    base = config.parent.resolve()
    x, frame = load_images(
        base / str(cfg["images"]), (base / str(cfg["attributes"])) if cfg.get("attributes") else None
    )
    classifier = load_classifier(str(cfg["classifier"]), base)
    cf = (
        "train" if cfg["counterfactual"] == "train" else load_object(str(cfg["counterfactual"]), base, "counterfactual")
    )
    reader = (
        load_object(str(cfg["attribute_reader"]), base, "attribute_reader") if cfg.get("attribute_reader") else None
    )
    train_options = cfg.get("train_options")
    if isinstance(train_options, dict) and train_options.get("cache_dir") is not None:  # relative to the config file
        train_options = {**train_options, "cache_dir": str(base / str(train_options["cache_dir"]))}
    report = audit_images(
        classifier,
        x,
        frame,
        attribute=cfg["attribute"],
        counterfactual=cf,
        outcome=cfg.get("outcome"),
        parents=cfg.get("parents") or (),
        levels=cfg.get("levels"),
        attribute_reader=reader,
        z=cfg.get("z"),
        gate=cfg.get("gate"),
        epsilon=cfg.get("epsilon", 0.1),
        alpha=cfg.get("alpha", 0.05),
        seed=cfg.get("seed", 0),
        train_options=train_options,
        progress=progress,
        tolerances=cfg.get("tolerances"),
    )
    return _written(report, out, fail_on, require_clear)


def _read_yaml(config: Path, keys: str, error: type[ValueError]) -> dict[str, Any]:
    """The config file's mapping, or one line: the file is missing, not YAML, or not a mapping (of ``keys``)."""
    import yaml

    if not config.is_file():
        raise FileNotFoundError(f"config file {config} does not exist")
    try:
        cfg = yaml.safe_load(config.read_text())
    except yaml.YAMLError as exc:
        raise error(f"{config}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(cfg, dict):
        raise error(f"{config}: expected a mapping with keys {keys}")
    return cfg


def _written(
    report: _Report,
    out: str | os.PathLike,
    fail_on: str | Sequence[str] | None,
    require_clear: str | Sequence[str] | None,
) -> _Report:
    """Check the gate's names (a name that selects no check: one line, nothing written), then write the report's
    JSON, HTML and model card into ``out`` (each atomically), for every form of the config audit (in memory,
    Parquet, images)."""
    if fail_on is not None or require_clear is not None:
        report.gate(fail_on, require_clear)
    folder = Path(out)
    report.to_json(folder / "report.json")
    report.to_html(folder / "report.html")
    report.to_markdown(folder / "model_card.md")
    return report
