"""Audit your own model in one call: causal fairness, counterfactual invariance and closeness, with provenance.

:func:`audit` runs the book's methods on a user's model and data and returns an :class:`AuditReport`:

- always: TV and Ctf-DE/IE/SE of the prediction and of the true outcome (doubly robust, Plecko &
  Bareinboim, Def. 3 and Props. 3-4; chapter *parity-decomposition*), Algorithm 1 of the same paper
  (causal predictive parity under a business-necessity set) when the outcome is present, and the
  demographic-parity and equal-opportunity tests (Ma et al., eqs. 5-6; chapter *invariance-test*);
- with a ``counterfactual`` model (anything implementing :class:`cflib.scm.CounterfactualModel`, or a
  function ``frame -> frame`` giving each unit's counterfactual under ``do(x = other level)``): the
  expected counterfactual accuracy (ECA), CF-CLOT (Fu et al., Eq. 7; chapter *closeness-test*) on the
  factual and counterfactual predictions, and, with an adjustment set ``z``, CIT-LR (Ma et al., Alg. 1,
  with the debiased form that stays valid when ``z`` depends on ``x``).

Every row of the report has an estimate or statistic, an interval or p-value, a verdict in words, the
method and the chapter it comes from. The JSON (:meth:`AuditReport.to_json`, schema
``cflib/audit_schema.json``, versioned) and the HTML page (:meth:`AuditReport.to_html`: one
self-contained file, figures inline, no network) carry provenance: a sha256 of the data, a hash of the
model, the cflib version, seed, device, environment and wall time. The same seed gives the same
report, byte for byte, apart from the time stamps.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import json
import math
import os
import pickle
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .fairness.effects import MEASURES, ctf_effects
from .fairness.parity import causal_predictive_parity
from .fairness.sfm import StandardFairnessModel
from .results import check_alpha
from .validation import check_count, check_real

if TYPE_CHECKING:  # resolved lazily by __getattr__ below (cflib.audit_images imports this module)
    from .audit_images import audit_images

__all__ = ["SCHEMA_VERSION", "AuditReport", "audit", "audit_from_config", "audit_images", "load_schema"]

_CONFIG_KEYS = {"data", "roles", "model", "counterfactual", "cit_z", "business_necessity", "epsilon", "alpha", "seed",
                "n_boot", "learner"}

#: Version of the report's JSON schema (``cflib/audit_schema.json``); bumped on any change to its shape.
SCHEMA_VERSION = "1.1"  # 1.1: image audits (cflib.audit_images) add provenance entries
_SCHEMA_FILE = Path(__file__).with_name("audit_schema.json")
_COLUMNS = ["estimate", "ci_low", "ci_high", "pvalue", "verdict", "method", "reference"]
_NAMES = {"TV": "TV", "DE": "Ctf-DE", "IE": "Ctf-IE", "SE": "Ctf-SE"}


def __getattr__(name: str) -> Any:
    # cflib.audit.audit_images lives in cflib.audit_images, which builds on this module's AuditReport:
    # imported on first use, so neither module imports the other at load time.
    if name == "audit_images":
        import importlib

        return importlib.import_module(f"{__package__}.audit_images").audit_images
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def load_schema() -> dict[str, Any]:
    """The JSON schema every :meth:`AuditReport.to_json` file satisfies.

    Returns
    -------
    dict
    """
    return json.loads(_SCHEMA_FILE.read_text())


@dataclass(frozen=True)
class AuditReport:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    rows : pandas.DataFrame
        One row per check, indexed by its name (``"TV"``, ``"Ctf-DE"``, ..., ``"DP"``, ``"EO"``,
        ``"CIT-LR"``, ``"CF-CLOT"``, ``"ECA"``, ``"PP (Algorithm 1)"``, and ``"... (y)"`` for the true
        outcome), columns ``estimate, ci_low, ci_high, pvalue, verdict, method, reference``.
    alpha : float
        The level of every test and ``1 - alpha`` the level of every interval.
    provenance : dict
        Data and model hashes, versions, seed, device, environment, group counts.
    timing : dict
        Start time and wall time (the only entries that change between runs with the same seed).
    details : dict
        The underlying result objects (effect estimates, test results), for a closer look.
    warnings : tuple of str
        Why some answer may be unreliable (a :class:`cflib.CflibWarning` raised during the audit, e.g. too
        few units in a group for the doubly robust effects).
    """

    rows: pd.DataFrame
    alpha: float
    provenance: dict
    timing: dict
    details: dict = field(default_factory=dict, repr=False)
    warnings: tuple[str, ...] = ()

    def summary(self) -> pd.DataFrame:
        """The checks, one row each: estimate, interval, p-value and verdict.

        Returns
        -------
        pandas.DataFrame
            Indexed by check name, columns ``estimate, ci_low, ci_high, pvalue, verdict``.
        """
        return self.rows[["estimate", "ci_low", "ci_high", "pvalue", "verdict"]].copy()

    def plot(self, ax=None):
        """Each effect with its interval (the prediction's, and the true outcome's where present).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        from . import plotting

        if ax is None:
            _, ax = plotting.subplots(1, 1, width=6.0, height=3.2)
        r = self.rows
        names = [n for n in r.index if n.split(" ")[0] in _NAMES.values() and np.isfinite(r.loc[n, "ci_low"])]
        pos = np.arange(len(names))[::-1]
        for p, n in zip(pos, names, strict=True):
            est, lo, hi = r.loc[n, ["estimate", "ci_low", "ci_high"]]
            flagged = lo > 0 or hi < 0
            ax.errorbar([est], [p], xerr=[[est - lo], [hi - est]], fmt="o", capsize=4,
                        color=plotting.PALETTE[3] if flagged else plotting.PALETTE[0])
        ax.axvline(0.0, color="0.5", lw=0.8)
        ax.set_yticks(pos, names)
        ax.set_xlabel(f"effect on the prediction's scale ({1 - self.alpha:.0%} interval)")
        ax.set_title("Counterfactual effects of the protected attribute")
        return ax

    def to_dict(self) -> dict[str, Any]:
        """The report as plain data, in the shape of the JSON schema.

        Returns
        -------
        dict
        """
        checks = []
        for name, row in self.rows.iterrows():
            checks.append({"check": str(name), **{c: _plain(row[c]) for c in _COLUMNS}})
        return {"schema_version": SCHEMA_VERSION, "alpha": self.alpha, "checks": checks,
                "warnings": list(self.warnings), "provenance": self.provenance, "timing": self.timing}

    def to_json(self, path: str | os.PathLike) -> Path:
        """Write the report as JSON (atomically), sorted keys, the schema of :func:`load_schema`.

        Parameters
        ----------
        path : path-like

        Returns
        -------
        pathlib.Path
        """
        return _atomic_write(Path(path), json.dumps(self.to_dict(), indent=1, sort_keys=True) + "\n")

    def to_html(self, path: str | os.PathLike) -> Path:
        """Write one self-contained HTML page (figure inline, no network) a person can send on.

        Parameters
        ----------
        path : path-like

        Returns
        -------
        pathlib.Path
        """
        import matplotlib.pyplot as plt

        ax = self.plot()
        buf = io.BytesIO()
        ax.figure.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(ax.figure)
        png = base64.b64encode(buf.getvalue()).decode()
        table = self.rows.copy()
        for c in ("estimate", "ci_low", "ci_high"):
            table[c] = table[c].map(lambda v: "" if not np.isfinite(v) else f"{v:.4f}")
        table["pvalue"] = table["pvalue"].map(lambda v: "" if not np.isfinite(v) else f"{v:.3g}")
        prov = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_short(v))}</td></tr>"
                       for k, v in {**self.provenance, **self.timing}.items())
        page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cflib audit report</title>
<style>body{{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:.25em .5em;text-align:left;font-size:.9em}}
th{{background:#f4f4f4}}.flag{{color:#b00;font-weight:bold}}</style></head>
<body><h1>Audit report</h1>
<p>Every check, its estimate with a {1 - self.alpha:.0%} interval or its p-value at level {self.alpha},
the verdict, the method and the chapter of the book that explains it. Made by cflib {html.escape(self.provenance["cflib_version"])}
(report schema {SCHEMA_VERSION}).</p>
{table.to_html(classes="checks", escape=True, border=0)}
{"".join(f'<p class="flag">Warning: {html.escape(w)}</p>' for w in self.warnings)}
<img alt="Counterfactual effects with intervals" src="data:image/png;base64,{png}">
<h2>Provenance</h2><table class="provenance">{prov}</table>
</body></html>
"""
        return _atomic_write(Path(path), page)


def _short(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str) if isinstance(v, (dict, list)) else str(v)


def _plain(v: Any) -> Any:
    if isinstance(v, (np.floating, float)):
        return None if not math.isfinite(float(v)) else float(v)
    if isinstance(v, np.integer):
        return int(v)
    return v


def _atomic_write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path


def _predictor(predict: Any, data: pd.DataFrame, columns: Sequence[str]) -> Callable[[pd.DataFrame], np.ndarray]:
    """A function frame -> 1-d predictions from a callable or a scikit-learn estimator."""
    if hasattr(predict, "predict_proba") or hasattr(predict, "predict"):
        cols = list(getattr(predict, "feature_names_in_", columns))
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise ValueError(f"predict: the estimator was fitted on columns {missing} that data lacks")
        if hasattr(predict, "predict_proba"):
            return lambda d: np.asarray(predict.predict_proba(d[cols]))[:, -1]
        return lambda d: np.asarray(predict.predict(d[cols]))
    if callable(predict):
        return lambda d: np.asarray(predict(d))
    raise TypeError(f"predict must be a callable on a DataFrame or a scikit-learn estimator, got {type(predict).__name__}")


def _checked_predictions(values: Any, n: int, name: str) -> np.ndarray:
    v = np.asarray(values)
    if v.ndim == 2 and v.shape[1] == 1:
        v = v[:, 0]
    if v.ndim != 1 or v.size != n:
        raise ValueError(f"{name} must give one prediction per row ({n}), got shape {v.shape}")
    if not np.issubdtype(v.dtype, np.number) and v.dtype != bool:
        raise TypeError(f"{name} must give numeric predictions, got dtype {v.dtype}")
    v = v.astype(float)
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} gave NaN or infinite predictions")
    return v


def _model_hash(predict: Any) -> str:
    try:
        return "sha256:" + hashlib.sha256(pickle.dumps(predict, protocol=4)).hexdigest()
    except Exception:  # a lambda or a closure cannot be pickled: hash its source, else its repr (stated as such)
        import inspect
        import re

        try:
            return "sha256:" + hashlib.sha256(inspect.getsource(predict).encode()).hexdigest()
        except (OSError, TypeError):
            return "repr:" + re.sub(r" at 0x[0-9a-fA-F]+", "", repr(predict))[:200]  # no memory address: same run, same text


def _data_hash(data: pd.DataFrame) -> str:
    return "sha256:" + hashlib.sha256(data.to_csv(index=False).encode()).hexdigest()


def _environment() -> dict[str, str]:
    out = {"python": platform.python_version(), "machine": platform.machine()}
    for p in ("numpy", "scipy", "pandas", "scikit-learn", "torch"):
        try:
            out[p] = metadata.version(p)
        except metadata.PackageNotFoundError:
            continue
    return out


def _verdict_interval(lo: float, hi: float, what: str) -> str:
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "not estimable"
    return f"{what} (interval excludes 0)" if lo > 0 or hi < 0 else "no evidence (interval covers 0)"


def _verdict_test(p: float, alpha: float, reject: str, keep: str) -> str:
    return reject if p <= alpha else keep


def _validate(data: Any, sfm: Any, alpha: Any, n_boot: Any, epsilon: Any = 0.1, seed: Any = 0,
              business_necessity: Any = ()) -> tuple[pd.DataFrame, StandardFairnessModel, float]:
    check_real(epsilon, "epsilon", low=0.0)
    if not isinstance(seed, np.random.Generator):
        check_count(seed, "seed", minimum=0)
    if isinstance(business_necessity, str):
        raise TypeError(f"business_necessity must be a list of effects such as ['SE'], got the string {business_necessity!r}")
    if not isinstance(data, pd.DataFrame):
        raise TypeError(f"data must be a pandas DataFrame, got {type(data).__name__}")
    if len(data) == 0:
        raise ValueError("data is empty: the audit needs rows")
    if not isinstance(sfm, StandardFairnessModel):
        raise TypeError(f"sfm must be a cflib.fairness.StandardFairnessModel (the x, z, w, y roles), got {type(sfm).__name__}")
    alpha = check_alpha(alpha)
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 0:
        raise ValueError(f"n_boot must be a whole number >= 0, got {n_boot!r}")
    missing = [c for c in (sfm.x, *sfm.z, *sfm.w) if c not in data.columns]
    if missing:
        raise ValueError(f"sfm: role column(s) {missing} are not in data; its columns are {list(data.columns)[:20]}")
    if data[sfm.x].nunique() < 2:
        raise ValueError(f"sfm.x: the protected attribute {sfm.x!r} is constant; the audit compares its levels")
    if data[sfm.x].nunique() > 2:
        if sfm.x0 is None:
            raise ValueError(f"sfm.x: {sfm.x!r} has {data[sfm.x].nunique()} levels; name the two to compare with x0= and x1=")
        data = data[data[sfm.x].isin([sfm.x0, sfm.x1])].reset_index(drop=True)
    cols = [sfm.x, *sfm.z, *sfm.w] + ([sfm.y] if sfm.y in data.columns else [])
    bad = [c for c in cols if data[c].isna().any() or (pd.api.types.is_numeric_dtype(data[c]) and not np.isfinite(data[c].to_numpy(float)).all())]
    if bad:
        raise ValueError(f"data: columns {bad} hold NaN or infinite values; drop or impute them first")
    sfm.levels(data)  # clear error when the levels cannot be read
    return data, sfm, alpha


def audit(
    predict: Any,
    data: pd.DataFrame,
    *,
    sfm: StandardFairnessModel,
    counterfactual: Any = None,
    z: Sequence[str] | None = None,
    scores: Any = None,
    business_necessity: Sequence[str] = (),
    epsilon: float = 0.1,
    alpha: float = 0.05,
    seed: int = 0,
    n_boot: int = 200,
    learner: Any = "hgb",
    progress: bool = True,
) -> AuditReport:
    """Audit a model's predictions for causal unfairness, counterfactual variance and closeness.

    Parameters
    ----------
    predict : callable or scikit-learn estimator or None
        The model: a callable ``DataFrame -> predictions``, or an estimator (its ``predict_proba``
        column of the last class when it has one, else ``predict``, on the columns it was fitted on,
        or on ``sfm``'s x, z, w columns). ``None`` when ``scores`` are given.
    data : pandas.DataFrame
        One row per unit with the columns of ``sfm`` (the outcome ``sfm.y`` is optional).
    sfm : cflib.fairness.StandardFairnessModel
        Roles of the columns: protected attribute ``x`` (binary; for more levels name the two to
        compare with ``x0``/``x1``), confounders ``z``, mediators ``w``, outcome ``y``.
    counterfactual : CounterfactualModel or callable, optional
        Gives each unit's counterfactual row under ``do(x = the other level)``: an object with
        ``counterfactual(obs: dict, do: dict) -> dict`` (:class:`cflib.scm.CounterfactualModel`) or a
        function ``frame -> frame``. Enables ECA, CF-CLOT and (with ``z``) CIT-LR.
    z : sequence of str, optional
        Columns that form a valid adjustment set for CIT-LR (the non-sensitive content of each unit).
    scores : array-like, optional
        Predictions already computed on ``data`` (instead of calling ``predict``).
    business_necessity : sequence of {"DE", "IE", "SE"}
        Effects allowed to pass into the prediction (Algorithm 1); default none.
    epsilon : float
        Tolerated N-TE of CF-CLOT.
    alpha : float
        Level of every test; intervals are at ``1 - alpha``.
    seed : int
        Seed of every random draw (folds, bootstrap, permutations).
    n_boot : int
        Bootstrap replicates of the effects (0: normal intervals only).
    learner : {"hgb", "linear", "rf"} or estimator
        Nuisance regressions of the doubly robust effects.
    progress : bool
        Show a progress bar over the checks.

    Returns
    -------
    AuditReport

    Raises
    ------
    TypeError, ValueError
        One line naming the argument: a missing role column, a constant attribute, NaN, predictions of
        the wrong shape, an alpha outside (0, 1), ...
    """
    from tqdm import tqdm

    from .stats.closeness import cfclot_test
    from .stats.invariance import (
        cit_lr_test,
        demographic_parity_test,
        equal_opportunity_test,
        expected_counterfactual_accuracy,
    )

    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    data, sfm, alpha = _validate(data, sfm, alpha, n_boot, epsilon, seed, business_necessity)
    bn = tuple(business_necessity)
    if not set(bn) <= set(MEASURES[1:]):
        raise ValueError(f"business_necessity must hold effects among DE, IE, SE, got {bn!r}")
    if predict is None and scores is None:
        raise ValueError("predict: give the model (predict=) or its predictions on data (scores=)")
    cols = [sfm.x, *sfm.z, *sfm.w]
    f = _predictor(predict, data, cols) if predict is not None else None
    y_hat = _checked_predictions(scores if scores is not None else f(data), len(data), "scores" if scores is not None else "predict")
    has_y = sfm.y in data.columns
    if z is not None:
        z = [z] if isinstance(z, str) else list(z)
        missing = [c for c in z if c not in data.columns]
        if missing:
            raise ValueError(f"z: column(s) {missing} are not in data")
    if counterfactual is not None and f is None:
        raise ValueError("counterfactual: the counterfactual checks call the model; give predict=")
    frame = data.assign(**{"_y_hat": y_hat})
    x0, x1 = sfm.levels(frame)
    a = (frame[sfm.x].to_numpy() == x1).astype(int)
    steps = ["effects", "parity tests"] + (["counterfactuals"] if counterfactual is not None else [])
    bar = tqdm(total=len(steps), desc="audit", disable=not progress)
    rows: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    level = 1 - alpha

    outcomes = ["_y_hat"] + ([sfm.y, "_diff"] if has_y else [])
    if has_y:
        frame = frame.assign(_diff=frame[sfm.y].astype(float) - y_hat)
    eff = ctf_effects(frame, sfm, outcomes, learner=learner, n_boot=n_boot, level=level, seed=seed,
                      ci="percentile" if n_boot >= 2 else "normal")
    details["effects"] = eff
    notes = tuple(dict.fromkeys(w for e in eff.values() for w in e.warnings))  # also raised as CflibWarning
    for out, suffix in (("_y_hat", ""), (sfm.y, " (y)")):
        if out not in eff:
            continue
        e = eff[out]
        for m in MEASURES:
            lo, hi = e.ci[m]
            rows[_NAMES[m] + suffix] = {
                "estimate": e.estimate[m], "ci_low": lo, "ci_high": hi, "pvalue": e.pvalue[m],
                "verdict": _verdict_interval(lo, hi, "effect" if m != "TV" else "disparity"),
                "method": e.method, "reference": "parity-decomposition, Def. 3 and Props. 3-4",
            }
        if out == "_y_hat" and f is not None:
            rows["Ctf-DE (white-box)"] = _whitebox_de(f, frame, sfm, x0, x1, level)
    if has_y:
        cpp = causal_predictive_parity(frame, sfm, sfm.y, "_y_hat", bn, alpha=min(alpha, 0.499),
                                       estimates={"y": eff[sfm.y], "y_hat": eff["_y_hat"], "diff": eff["_diff"]})
        details["predictive_parity"] = cpp
        rows["PP (Algorithm 1)"] = {
            "estimate": max(abs(c.tested) for c in cpp.checks), "ci_low": math.nan, "ci_high": math.nan, "pvalue": cpp.pvalue,
            # One level-alpha decision over the three assertions (Bonferroni); Algorithm 1 as printed checks each at
            # alpha and says FAIL for a compliant predictor about 16% of the time (the calibration page).
            "verdict": ("FAIL: an effect outside business necessity reaches the prediction" if cpp.pvalue <= alpha
                        else "SUCCESS: no evidence that an effect outside business necessity reaches the prediction"),
            "method": f"Algorithm 1, {cpp.test} test over DE, IE, SE (Bonferroni), business necessity {sorted(bn) or 'none'}; "
                      "estimate: the largest |tested effect|",
            "reference": "parity-decomposition, Algorithm 1",
        }
    bar.update(1)

    dp = demographic_parity_test(y_hat, a, seed=seed)
    details["DP"] = dp
    rows["DP"] = {"estimate": dp.difference, "ci_low": math.nan, "ci_high": math.nan, "pvalue": dp.pvalue,
                  "verdict": _verdict_test(dp.pvalue, alpha, "violated", "no evidence of a violation"),
                  "method": f"demographic parity, {dp.method}", "reference": "invariance-test, eq. 5"}
    if has_y and set(np.unique(frame[sfm.y])) <= {0, 1} and (frame[sfm.y] == 1).sum() >= 4:
        eo = equal_opportunity_test(y_hat, a, frame[sfm.y].to_numpy(), seed=seed)
        details["EO"] = eo
        rows["EO"] = {"estimate": eo.difference, "ci_low": math.nan, "ci_high": math.nan, "pvalue": eo.pvalue,
                      "verdict": _verdict_test(eo.pvalue, alpha, "violated", "no evidence of a violation"),
                      "method": f"equal opportunity, {eo.method}", "reference": "invariance-test, eq. 6"}
    bar.update(1)

    if counterfactual is not None:
        cf = _counterfactual_frame(counterfactual, data, sfm, x0, x1)
        y_cf = _checked_predictions(f(cf), len(data), "predict on the counterfactual rows")
        both = np.r_[y_hat, y_cf]
        binary = set(np.unique(both)) <= {0.0, 1.0}
        # A score in [0, 1] is a probability: ECA compares the decisions it leads to (threshold 0.5),
        # since almost every continuous score moves a little under any intervention.
        decide = not binary and both.min() >= 0.0 and both.max() <= 1.0
        f_dec, cf_dec = ((y_hat >= 0.5).astype(float), (y_cf >= 0.5).astype(float)) if decide else (y_hat, y_cf)
        eca = expected_counterfactual_accuracy(None, f_dec, cf_dec, tol=0.0 if (binary or decide) else 1e-9)
        details["ECA"] = eca
        what = "decisions (score >= 0.5)" if decide else "predictions"
        rows["ECA"] = {"estimate": eca.eca, "ci_low": eca.ci[0], "ci_high": eca.ci[1], "pvalue": math.nan,
                       "verdict": "invariant on every unit" if eca.eca == 1.0 else f"{eca.flip_rate:.1%} of {what} change under do(x)",
                       "method": f"share of {what} unchanged by do(x = other level), Wilson interval",
                       "reference": "invariance-test, eqs. 7-8"}
        clot = cfclot_test(y_hat, y_cf, epsilon, alpha=alpha, seed=seed)
        details["CF-CLOT"] = clot
        notes = tuple(dict.fromkeys((*notes, *clot.warnings)))  # e.g. too few pairs for the normal threshold
        rows["CF-CLOT"] = {"estimate": clot.statistic, "ci_low": math.nan, "ci_high": math.nan, "pvalue": clot.pvalue,
                           "verdict": _verdict_test(clot.pvalue, alpha, f"not {epsilon}-close (N-TE > {epsilon})",
                                                    f"no evidence against {epsilon}-closeness"),
                           "method": f"CF-CLOT, N-TE <= {epsilon}, {clot.method}", "reference": "closeness-test, Eq. 7"}
        if z is not None:
            cit = cit_lr_test(y_hat, frame[sfm.x].to_numpy(), frame[z].to_numpy(dtype=float), seed=seed)
            details["CIT-LR"] = cit
            rows["CIT-LR"] = {"estimate": cit.statistic, "ci_low": math.nan, "ci_high": math.nan, "pvalue": cit.pvalue,
                              "verdict": _verdict_test(cit.pvalue, alpha, "not counterfactually invariant",
                                                       "no evidence against invariance"),
                              "method": f"CIT-LR given {z}", "reference": "invariance-test, Alg. 1"}
        bar.update(1)
    bar.close()

    table = pd.DataFrame.from_dict(rows, orient="index")[_COLUMNS]
    table.index.name = "check"
    counts = frame[sfm.x].value_counts()
    provenance = {
        "data_sha256": _data_hash(data),
        "n_rows": int(len(data)),
        "group_counts": {str(k): int(v) for k, v in sorted(counts.items(), key=lambda kv: str(kv[0]))},
        "roles": {"x": sfm.x, "z": list(sfm.z), "w": list(sfm.w), "y": sfm.y if has_y else None,
                  "x0": _plain(x0), "x1": _plain(x1), "cit_z": z, "business_necessity": list(bn)},
        "model": _model_hash(predict) if predict is not None else "scores given",
        "counterfactual": None if counterfactual is None else _model_hash(counterfactual),
        "cflib_version": _cflib_version(),
        "seed": int(seed),
        "n_boot": int(n_boot),
        "device": "cpu",
        "environment": _environment(),
    }
    timing = {"started_utc": started, "wall_seconds": round(time.perf_counter() - t0, 2)}
    return AuditReport(table, alpha, provenance, timing, details, notes)


def _whitebox_de(f: Callable[[pd.DataFrame], np.ndarray], frame: pd.DataFrame, sfm: StandardFairnessModel,
                 x0: Any, x1: Any, level: float) -> dict[str, Any]:
    """Ctf-DE of the prediction computed from the model itself: for the x0 units, whose own (z, w) follow
    P(z, w | x0), the mean of f(x1, z, w) - f(x0, z, w); interval from the units' spread."""
    from .results import Estimate

    d0 = frame[frame[sfm.x] == x0]
    diff = _checked_predictions(f(d0.assign(**{sfm.x: x1})), len(d0), "predict") - frame.loc[d0.index, "_y_hat"].to_numpy()
    se = float(diff.std(ddof=1) / math.sqrt(diff.size)) if diff.size > 1 else math.nan
    e = Estimate.normal(float(diff.mean()), se, level) if np.isfinite(se) else Estimate(float(diff.mean()))
    exact_zero = bool(np.all(diff == 0))
    verdict = ("no direct effect: the prediction does not change with x on any unit" if exact_zero
               else _verdict_interval(e.ci.low, e.ci.high, "effect"))
    return {"estimate": e.estimate, "ci_low": e.ci.low, "ci_high": e.ci.high, "pvalue": math.nan, "verdict": verdict,
            "method": f"the model evaluated at x = {x1!r} on the {diff.size} units with x = {x0!r}, normal interval",
            "reference": "parity-decomposition, notes Sec. 2.10 (white-box Ctf-DE)"}


def _cflib_version() -> str:
    from . import __version__

    return __version__


def _counterfactual_frame(model: Any, data: pd.DataFrame, sfm: StandardFairnessModel, x0: Any, x1: Any) -> pd.DataFrame:
    """Every unit's counterfactual row under do(x = the other level)."""
    target = np.where(data[sfm.x].to_numpy() == x1, x0, x1)
    if hasattr(model, "counterfactual"):
        obs = {c: data[c].to_numpy() for c in data.columns}
        out = model.counterfactual(obs, do={sfm.x: target})
        if not isinstance(out, Mapping):
            raise TypeError(f"counterfactual: counterfactual(obs, do) must return a dict of columns, got {type(out).__name__}")
        cf = data.copy()
        for c, v in out.items():
            if c in cf.columns:
                v = np.asarray(v)
                if v.shape[:1] != (len(data),):
                    raise ValueError(f"counterfactual: column {c!r} has {v.shape[:1]} rows, expected {len(data)}")
                cf[c] = v.reshape(len(data), -1)[:, 0] if v.ndim > 1 else v
    elif callable(model):
        cf = model(data.assign(**{sfm.x: target}))
        if not isinstance(cf, pd.DataFrame) or len(cf) != len(data):
            raise ValueError(f"counterfactual: the function must return a DataFrame of {len(data)} rows")
    else:
        raise TypeError("counterfactual must implement counterfactual(obs, do) or be a function frame -> frame")
    if not (cf[sfm.x].to_numpy() == target).all():
        raise ValueError(f"counterfactual: the returned rows do not hold {sfm.x!r} at the intervened level")
    return cf


def _load_object(spec: str, base: Path, what: str) -> Any:
    """``module:attribute`` (imported; the config's folder is searched first) or a pickled object's path."""
    import importlib
    import sys

    path = (base / spec).resolve()
    if spec.endswith((".pkl", ".pickle", ".joblib")):
        if not path.is_file():
            raise FileNotFoundError(f"{what}: pickled model {path} does not exist")
        if spec.endswith(".joblib"):
            import joblib

            return joblib.load(path)
        with open(path, "rb") as fh:
            return pickle.load(fh)  # the user's own file, named in their own config
    if ":" not in spec:
        raise ValueError(f"{what}: give an importable 'module:function' or a .pkl/.joblib file, got {spec!r}")
    module, _, attr = spec.partition(":")
    sys.path.insert(0, str(base))
    try:
        mod = importlib.import_module(module)
    except ImportError as exc:
        raise ValueError(f"{what}: cannot import module {module!r} ({exc})") from None
    finally:
        sys.path.remove(str(base))
    if not hasattr(mod, attr):
        raise ValueError(f"{what}: module {module!r} has no attribute {attr!r}")
    return getattr(mod, attr)


def audit_from_config(config: str | os.PathLike, out: str | os.PathLike, *, progress: bool = True) -> AuditReport:
    """Run :func:`audit` from a YAML file and write ``report.json`` and ``report.html`` into ``out``.

    The file holds ``data`` (a CSV path, relative to the file), ``roles`` (``x``, ``z``, ``w``, ``y``,
    and ``x0``/``x1`` for a non-0/1 attribute), ``model`` (``module:function`` taking a DataFrame, or a
    pickled scikit-learn estimator ``.pkl``/``.joblib``), and optionally ``counterfactual``
    (``module:function``, frame to counterfactual frame), ``cit_z``, ``business_necessity``,
    ``epsilon``, ``alpha``, ``seed``, ``n_boot`` and ``learner``. A file with an ``images`` key is an
    image audit (:func:`cflib.audit_images.audit_images_from_config`).

    Parameters
    ----------
    config : path-like
        The YAML file.
    out : path-like
        Output folder; written only when the audit succeeded (each file atomically).
    progress : bool
        Show a progress bar.

    Returns
    -------
    AuditReport

    Raises
    ------
    FileNotFoundError, TypeError, ValueError
        One line naming the key or argument at fault.
    """
    import yaml

    config = Path(config)
    if not config.is_file():
        raise FileNotFoundError(f"config file {config} does not exist")
    try:
        cfg = yaml.safe_load(config.read_text())
    except yaml.YAMLError as exc:
        raise ValueError(f"{config}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(cfg, dict):
        raise ValueError(f"{config}: expected a mapping with keys data, roles, model")
    if "images" in cfg:  # an image audit (cflib.audit_images)
        import importlib

        return importlib.import_module(f"{__package__}.audit_images").audit_images_from_config(config, out, progress=progress)
    unknown = sorted(set(cfg) - _CONFIG_KEYS)
    if unknown:
        raise ValueError(f"{config}: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(_CONFIG_KEYS))}")
    for key in ("data", "roles", "model"):
        if key not in cfg:
            raise ValueError(f"{config}: missing key {key!r}")
    base = config.parent.resolve()
    data_path = (base / str(cfg["data"])).resolve()
    if not data_path.is_file():
        raise FileNotFoundError(f"{config}: data file {data_path} does not exist")
    data = pd.read_csv(data_path)
    roles = cfg["roles"]
    if not isinstance(roles, dict) or not {"x", "y"} <= set(roles):
        raise ValueError(f"{config}: roles must map x, z, w and y to columns (x and y at least), got {roles!r}")
    bad_roles = sorted(set(roles) - {"x", "z", "w", "y", "x0", "x1"})
    if bad_roles:
        raise ValueError(f"{config}: unknown role(s) {bad_roles}; roles are x, z, w, y, x0, x1")
    as_list = {k: [roles[k]] if isinstance(roles.get(k), str) else list(roles.get(k) or []) for k in ("z", "w")}
    sfm = StandardFairnessModel(roles["x"], as_list["z"], as_list["w"], roles["y"], roles.get("x0"), roles.get("x1"))
    if sfm.y not in data.columns:
        raise ValueError(f"{config}: roles.y column {sfm.y!r} is not in {data_path.name}")
    model = _load_object(str(cfg["model"]), base, "model")
    cf = _load_object(str(cfg["counterfactual"]), base, "counterfactual") if cfg.get("counterfactual") else None
    report = audit(model, data, sfm=sfm, counterfactual=cf, z=cfg.get("cit_z"),
                   business_necessity=cfg.get("business_necessity", ()), epsilon=cfg.get("epsilon", 0.1),
                   alpha=cfg.get("alpha", 0.05), seed=cfg.get("seed", 0), n_boot=cfg.get("n_boot", 200),
                   learner=cfg.get("learner", "hgb"), progress=progress)
    out = Path(out)
    report.to_json(out / "report.json")
    report.to_html(out / "report.html")
    return report
