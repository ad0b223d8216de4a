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
from dataclasses import dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .fairness.effects import MEASURES, ctf_effects
from .fairness.parity import causal_predictive_parity
from .fairness.sfm import StandardFairnessModel
from .formatting import format_interval, format_number, format_pvalue
from .results import check_alpha
from .validation import check_count, check_real

if TYPE_CHECKING:  # resolved lazily by __getattr__ below (cflib.audit_images imports this module)
    from .audit_images import audit_images

__all__ = ["CHECKS", "SCHEMA_VERSION", "AuditReport", "audit", "audit_from_config", "audit_images", "book_url",
           "load_schema", "reference_link", "select_checks"]

_CONFIG_KEYS = {"data", "roles", "model", "counterfactual", "cit_z", "business_necessity", "epsilon", "alpha", "seed",
                "n_boot", "learner", "impute", "threshold", "n_jobs"}
_ROLES = {"x", "z", "w", "y", "x0", "x1", "y1", "reference"}

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
        ``"FPR difference"``, ``"CIT-LR"``, ``"CF-CLOT"``, ``"ECA"``, ``"PP (Algorithm 1)"``, ``"... (y)"``
        for the true outcome, and ``"... [x1 vs x0]"`` for each pair when the attribute has more than two
        levels), columns ``estimate, ci_low, ci_high, pvalue, verdict, method, reference`` and ``flagged``
        (whether the check found what it looks for at level ``alpha``).
    alpha : float
        The level of every test and ``1 - alpha`` the level of every interval (per comparison: with
        several comparisons the provenance's ``multiplicity`` says how the level is shared).
    provenance : dict
        Data and model hashes, versions, seed, device, environment, group counts.
    timing : dict
        Start time and wall time (the only entries that change between runs with the same seed).
    details : dict
        The underlying result objects (effect estimates, test results), for a closer look.
    warnings : tuple of str
        Why some answer may be unreliable (a :class:`cflib.CflibWarning` raised during the audit, e.g. too
        few units in a group for the doubly robust effects), and what was done to the data (imputation).
    groups : pandas.DataFrame or None
        One row per level of the protected attribute: ``n`` and the base rate, selection rate, TPR, FPR
        and PPV with Wilson intervals (:func:`cflib.stats.rates.group_rates`); ``note`` says why a rate is
        not estimable. ``None`` for reports made without it.
    """

    rows: pd.DataFrame
    alpha: float
    provenance: dict
    timing: dict
    details: dict = field(default_factory=dict, repr=False)
    warnings: tuple[str, ...] = ()
    groups: pd.DataFrame | None = None

    def summary(self, formatted: bool = False) -> pd.DataFrame:
        """The checks, one row each: estimate, interval, p-value and verdict.

        Parameters
        ----------
        formatted : bool
            Return text as a reader sees it (three significant figures, the interval as ``[low, high]``,
            p-values as ``< 0.001``: :mod:`cflib.formatting`) instead of numbers.

        Returns
        -------
        pandas.DataFrame
            Indexed by check name, columns ``estimate, ci_low, ci_high, pvalue, verdict`` (formatted:
            ``estimate, interval, p-value, verdict``).
        """
        out = self.rows[["estimate", "ci_low", "ci_high", "pvalue", "verdict"]].copy()
        if not formatted:
            return out
        return pd.DataFrame({
            "estimate": [format_number(_num(v)) for v in out["estimate"]],
            f"{1 - self.alpha:.0%} interval": [format_interval(_num(lo), _num(hi)) for lo, hi in zip(out["ci_low"], out["ci_high"], strict=True)],
            "p-value": [_p_text(_num(v)) for v in out["pvalue"]],
            "verdict": out["verdict"].astype(str).to_numpy(),
        }, index=out.index)

    def flagged(self) -> pd.Series:
        """Whether each check is flagged: it found what it looks for at level ``alpha``.

        An effect or disparity is flagged when its interval excludes 0, a test when its p-value is at most
        ``alpha``, ECA when some prediction changes under ``do(x)``; a check that could not be estimated
        is not flagged (:meth:`not_estimable` lists them). Rows made without a ``flagged`` column are
        flagged when their p-value is at most ``alpha``.

        Returns
        -------
        pandas.Series of bool
            Indexed by check name.
        """
        if "flagged" in self.rows.columns:
            return self.rows["flagged"].fillna(False).astype(bool)
        p = pd.to_numeric(self.rows["pvalue"], errors="coerce")
        return (p <= self.alpha).fillna(False).astype(bool)

    def not_estimable(self) -> pd.Series:
        """Whether each check could not be estimated (its verdict says so, with the reason).

        Returns
        -------
        pandas.Series of bool
        """
        return self.rows["verdict"].astype(str).str.startswith("not estimable")

    def gate(self, fail_on: str | Sequence[str]) -> list[str]:
        """The checks named in ``fail_on`` that are flagged (what ``cflib audit --fail-on`` exits 1 on).

        Parameters
        ----------
        fail_on : str or sequence of str
            Check names as in :attr:`rows` (``"Ctf-DE"``, ``"DP"``, ``"PP (Algorithm 1)"`` or its short
            name ``"PP"``), comma-separated in one string or as a list; a name also selects its pairwise
            rows ``"name [a vs b]"``. ``"any"`` selects every check, ``"model"`` every check of the
            model's predictions (all but the outcome's own ``(y)`` rows).

        Returns
        -------
        list of str
            The flagged checks among those selected, in the report's order (empty: the gate passes).

        Raises
        ------
        ValueError
            An empty name, or a name that selects no check of this report (the message lists them).
        """
        selected = select_checks(self.rows.index, fail_on)
        flags = self.flagged()
        return [c for c in selected if flags[c]]

    def plain_summary(self) -> str:
        """What a reader needs first, in words: what was flagged, at what level, with the numbers.

        Returns
        -------
        str
            A few sentences (no markup), the top of the HTML page and of the model card.
        """
        prov = self.provenance
        roles = prov.get("roles", {})
        flags, missing = self.flagged(), self.not_estimable()
        level = f"{1 - self.alpha:.0%}"
        pairs = prov.get("comparisons") or ([[roles.get("x1"), roles.get("x0")]] if roles.get("x1") is not None else [])
        what = "; ".join(f"{a} against {b}" for a, b in pairs) if pairs else "its levels"
        parts = [f"cflib audited {prov.get('n_rows', '?')} rows, comparing {roles.get('x', 'the protected attribute')} "
                 f"({what}) at level {self.alpha} ({level} intervals)."]
        mult = prov.get("multiplicity")
        if mult:
            parts.append(mult)
        flagged = [c for c in self.rows.index if flags[c]]
        if flagged:
            parts.append(f"{len(flagged)} of {len(self.rows)} checks are flagged:")
            parts.extend(f"- {c}: {self._row_text(c)}" for c in flagged)
        else:
            parts.append(f"None of the {len(self.rows)} checks is flagged.")
        quiet = [c for c in self.rows.index if not flags[c] and not missing[c]]
        if quiet:
            parts.append("Not flagged: " + ", ".join(quiet) + ".")
        ne = [c for c in self.rows.index if missing[c]]
        if ne:
            parts.append("Not estimable: " + "; ".join(f"{c} ({self.rows.loc[c, 'verdict']})" for c in ne) + ".")
        if self.groups is not None and len(self.groups):
            small = [str(g) for g, r in self.groups.iterrows() if r.get("note")]
            if small:
                parts.append("Some group rates are not estimable: " + "; ".join(
                    f"{g}: {self.groups.loc[g, 'note']}" for g in small) + ".")
        for w in self.warnings:
            parts.append(f"Warning: {w}")
        return "\n".join(parts)

    def _row_text(self, check: str) -> str:
        r = self.rows.loc[check]
        bits = [f"estimate {format_number(float(r['estimate']))}"] if np.isfinite(_num(r["estimate"])) else []
        if np.isfinite(_num(r["ci_low"])) and np.isfinite(_num(r["ci_high"])):
            bits.append(f"{1 - self.alpha:.0%} interval {format_interval(float(r['ci_low']), float(r['ci_high']))}")
        if np.isfinite(_num(r["pvalue"])):
            bits.append(f"p {_p_text(float(r['pvalue']))}")
        return f"{r['verdict']} ({', '.join(bits)})" if bits else str(r["verdict"])

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
        flags = self.flagged()
        for name, row in self.rows.iterrows():
            checks.append({"check": str(name), **{c: _plain(row[c]) for c in _COLUMNS}, "flagged": bool(flags[name]),
                           "link": reference_link(str(row["reference"]))})
        out = {"schema_version": SCHEMA_VERSION, "alpha": self.alpha, "checks": checks,
               "warnings": list(self.warnings), "provenance": self.provenance, "timing": self.timing,
               "summary": self.plain_summary()}
        if self.groups is not None:
            out["groups"] = [{"group": str(g), **{c: _plain(v) for c, v in row.items()}} for g, row in self.groups.iterrows()]
        return out

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

    def model_card(self) -> str:
        """A model card in Markdown: model, data, intended groups, flagged checks, group rates, provenance.

        Returns
        -------
        str
            The text :meth:`to_markdown` writes; another tool can embed it (the JSON holds the same facts).
        """
        prov, roles = self.provenance, self.provenance.get("roles", {})
        flags, lines = self.flagged(), []
        lines += ["# Model card: fairness audit", "", "## Summary", "", self.plain_summary(), "", "## Model", "",
                  f"- model: `{prov.get('model')}`" + (f" ({prov['model_type']})" if prov.get("model_type") else ""),
                  f"- predictions read as decisions: {prov.get('decisions', 'as given')}", "", "## Data", "",
                  f"- rows: {prov.get('n_rows')}; data sha256: `{prov.get('data_sha256')}`",
                  f"- protected attribute: `{roles.get('x')}`; confounders: {', '.join(map(str, roles.get('z', []))) or 'none'}; "
                  f"mediators: {', '.join(map(str, roles.get('w', []))) or 'none'}; outcome: `{roles.get('y')}`"
                  + (f" (positive label {roles['y1']!r})" if roles.get("y1") is not None else "")]
        if prov.get("imputed"):
            lines.append("- imputed: " + ", ".join(f"{c} ({n} values)" for c, n in prov["imputed"].items()))
        lines += ["", "## Intended groups", ""]
        lines += [f"- {g}: {n} rows" for g, n in prov.get("group_counts", {}).items()]
        lines += ["", "## Flagged checks", ""]
        head = ["check", "estimate", f"{1 - self.alpha:.0%} interval", "p-value", "verdict", "reference"]
        body = [[c, format_number(_num(r["estimate"])), format_interval(_num(r["ci_low"]), _num(r["ci_high"])),
                 _p_text(_num(r["pvalue"])), str(r["verdict"]), _md_link(str(r["reference"]))]
                for c, r in self.rows.iterrows() if flags[c]]
        lines += _md_table(head, body) if body else ["No check is flagged."]
        lines += ["", "## All checks", ""]
        lines += _md_table(head, [[c, format_number(_num(r["estimate"])), format_interval(_num(r["ci_low"]), _num(r["ci_high"])),
                                   _p_text(_num(r["pvalue"])), str(r["verdict"]), _md_link(str(r["reference"]))]
                                  for c, r in self.rows.iterrows()])
        if self.groups is not None:
            lines += ["", "## Group rates", ""]
            lines += _md_table(*_group_cells(self.groups, self.alpha))
        lines += ["", "## How this was made", "",
                  f"cflib {prov.get('cflib_version')}, report schema {SCHEMA_VERSION}, seed {prov.get('seed')}, "
                  f"{prov.get('n_boot')} bootstrap replicates, started {self.timing.get('started_utc')}."]
        return "\n".join(lines) + "\n"

    def to_markdown(self, path: str | os.PathLike) -> Path:
        """Write :meth:`model_card` (atomically).

        Parameters
        ----------
        path : path-like

        Returns
        -------
        pathlib.Path
        """
        return _atomic_write(Path(path), self.model_card())

    def to_junit(self, path: str | os.PathLike, fail_on: str | Sequence[str] | None = None) -> Path:
        """Write one JUnit test case per check (atomically), for CI dashboards.

        A check that cannot be estimated is *skipped* with its reason. A flagged check *fails* when it is
        selected by ``fail_on`` (:meth:`gate`), or when ``fail_on`` is ``None``; a flagged check outside the
        gate passes and says so in its output, so the dashboard agrees with ``cflib audit``'s exit status.

        Parameters
        ----------
        path : path-like
        fail_on : str or sequence of str, optional
            As in :meth:`gate`.

        Returns
        -------
        pathlib.Path
        """
        from xml.sax.saxutils import quoteattr

        gated = set(select_checks(self.rows.index, fail_on)) if fail_on is not None else set(self.rows.index)
        flags, missing = self.flagged(), self.not_estimable()
        cases, n_fail, n_skip = [], 0, 0
        for c, r in self.rows.iterrows():
            text = html.escape(f"{self._row_text(c)}; method: {r['method']}; reference: {r['reference']}", quote=False)
            if missing[c]:
                n_skip += 1
                inner = f"<skipped message={quoteattr(str(r['verdict']))}/>"
            elif flags[c] and c in gated:
                n_fail += 1
                inner = f"<failure type=\"flagged\" message={quoteattr(str(r['verdict']))}>{text}</failure>"
            elif flags[c]:
                inner = f"<system-out>flagged, not in --fail-on: {text}</system-out>"
            else:
                inner = f"<system-out>{text}</system-out>"
            cases.append(f'  <testcase classname="cflib.audit" name={quoteattr(str(c))} time="0">{inner}</testcase>')
        props = "".join(f"<property name={quoteattr(k)} value={quoteattr(_short(v))}/>"
                        for k, v in self.provenance.items() if k in ("data_sha256", "model", "cflib_version", "seed", "n_rows"))
        n = len(self.rows)
        wall = self.timing.get("wall_seconds", 0)
        xml = ('<?xml version="1.0" encoding="UTF-8"?>\n'
               f'<testsuites name="cflib audit" tests="{n}" failures="{n_fail}" errors="0" skipped="{n_skip}" time="{wall}">\n'
               f' <testsuite name="cflib audit" tests="{n}" failures="{n_fail}" errors="0" skipped="{n_skip}" time="{wall}" '
               f'timestamp={quoteattr(str(self.timing.get("started_utc", "")).rstrip("Z"))}>\n'
               f'  <properties>{props}</properties>\n' + "\n".join(cases) + "\n </testsuite>\n</testsuites>\n")
        return _atomic_write(Path(path), xml)

    def to_html(self, path: str | os.PathLike) -> Path:
        """Write one self-contained HTML page (figure inline, no network) a person can send on.

        It opens with the plain-language summary, then the checks (p-values as ``< 0.001``, each
        reference linked to its book page), the group table, the figure, the model card's facts and
        the provenance.

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
        flags = self.flagged()
        rows_html = []
        for c, r in self.rows.iterrows():
            link = reference_link(str(r["reference"]))
            ref = html.escape(str(r["reference"]))
            ref = f'<a href="{html.escape(link)}">{ref}</a>' if link else ref
            cls = ' class="flag"' if flags[c] else ""
            cells = [html.escape(str(c)), format_number(_num(r["estimate"])),
                     format_interval(_num(r["ci_low"]), _num(r["ci_high"])), _p_text(_num(r["pvalue"])),
                     html.escape(str(r["verdict"])), html.escape(str(r["method"])), ref]
            rows_html.append(f"<tr{cls}>" + "".join(f"<td>{v}</td>" for v in cells) + "</tr>")
        checks = ("<table class=\"checks\"><thead><tr><th>check</th><th>estimate</th>"
                  f"<th>{1 - self.alpha:.0%} interval</th><th>p-value</th><th>verdict</th><th>method</th><th>reference</th>"
                  "</tr></thead><tbody>" + "".join(rows_html) + "</tbody></table>")
        groups = ""
        if self.groups is not None:
            head, body = _group_cells(self.groups, self.alpha)
            groups = ("<h2>Groups</h2><p>Rates per level of the protected attribute with "
                      f"{1 - self.alpha:.0%} Wilson intervals; a rate whose denominator is empty is not estimable.</p>"
                      "<table class=\"groups\"><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in head)
                      + "</tr></thead><tbody>" + "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in b) + "</tr>"
                                                          for b in body) + "</tbody></table>")
        summary = "".join(f"<li>{html.escape(s[2:])}</li>" if s.startswith("- ") else f"<p>{html.escape(s)}</p>"
                          for s in self.plain_summary().splitlines())
        prov = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_short(v))}</td></tr>"
                       for k, v in {**self.provenance, **self.timing}.items())
        page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cflib audit report</title>
<style>body{{font-family:sans-serif;max-width:64em;margin:2em auto;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:.25em .5em;text-align:left;font-size:.9em}}
th{{background:#f4f4f4}}.flag td{{color:#b00}}.summary{{background:#fafafa;border-left:4px solid #b00;padding:.5em 1em}}</style></head>
<body><h1>Audit report</h1>
<div class="summary">{summary}</div>
<h2>Checks</h2>
<p>Every check, its estimate with a {1 - self.alpha:.0%} interval or its p-value at level {self.alpha},
the verdict, the method and the page of the book that explains it (flagged checks in red). Made by cflib
{html.escape(str(self.provenance.get("cflib_version", "")))} (report schema {SCHEMA_VERSION}).</p>
{checks}
{"".join(f'<p class="flag">Warning: {html.escape(w)}</p>' for w in self.warnings)}
{groups}
<img alt="Counterfactual effects with intervals" src="data:image/png;base64,{png}">
<h2>Provenance</h2><table class="provenance">{prov}</table>
</body></html>
"""
        return _atomic_write(Path(path), page)


#: Every check a tabular audit can report (rows of :attr:`AuditReport.rows`, before any pairwise suffix).
CHECKS = ("TV", "Ctf-DE", "Ctf-IE", "Ctf-SE", "Ctf-DE (white-box)", "TV (y)", "Ctf-DE (y)", "Ctf-IE (y)", "Ctf-SE (y)",
          "PP (Algorithm 1)", "DP", "EO", "FPR difference", "ECA", "CF-CLOT", "CIT-LR")
_ALIASES = {"PP": "PP (Algorithm 1)"}


def select_checks(checks: Sequence[str], names: str | Sequence[str] | None) -> list[str]:
    """The checks of a report that ``names`` selects (``--fail-on``): exact names, ``any`` or ``model``.

    Parameters
    ----------
    checks : sequence of str
        The report's check names (:attr:`AuditReport.rows` index).
    names : str or sequence of str
        Comma-separated names in one string, or a list. A name selects the check of that name and its
        pairwise rows (``"DP"`` selects ``"DP [Black vs White]"``); ``"PP"`` is short for
        ``"PP (Algorithm 1)"``; ``"any"`` selects every check; ``"model"`` every check but the outcome's
        own ``(y)`` rows.

    Returns
    -------
    list of str
        In the order of ``checks``.

    Raises
    ------
    TypeError
        ``names`` is not a string or a list of strings.
    ValueError
        An empty name, or a name that selects no check (the message lists the report's checks).
    """
    if names is None:
        return []
    items = _check_names(names)
    checks = [str(c) for c in checks]
    chosen: set[str] = set()
    for s in items:
        if s == "any":
            chosen.update(checks)
            continue
        if s == "model":
            chosen.update(c for c in checks if "(y)" not in c)
            continue
        target = _ALIASES.get(s, s)
        hits = [c for c in checks if c == target or c.startswith(target + " [")]
        if not hits:
            raise ValueError(f"fail_on: no check {s!r} in this report; its checks are {', '.join(checks)} (or 'any', 'model')")
        chosen.update(hits)
    return [c for c in checks if c in chosen]


def _check_names(names: Any) -> list[str]:
    """The check names of ``--fail-on`` (comma-separated text or a list), or one line saying what is wrong."""
    if isinstance(names, str):
        items = [s.strip() for s in names.split(",")]
    elif isinstance(names, Sequence) and all(isinstance(s, str) for s in names):
        items = [s.strip() for n in names for s in n.split(",")]
    else:
        raise TypeError(f"fail_on must be check names (a comma-separated string or a list of strings), got {names!r}")
    if not items or any(not s for s in items):
        raise ValueError(f"fail_on: empty check name in {names!r}; give names such as 'Ctf-DE,DP', or 'any'")
    return items


#: Book pages that explain each chapter's checks (paths of the rendered book).
_PAGES = {
    "parity-decomposition, Algorithm 1": "notebooks/parity-decomposition/03-compas-cookbook.html",
    "parity-decomposition": "notebooks/parity-decomposition/01-sfm-and-tv-decomposition.html",
    "invariance-test": "notebooks/invariance-test/01-counterfactual-invariance.html",
    "closeness-test": "notebooks/closeness-test/01-nte-and-mmd.html",
    "axiomatic-soundness": "notebooks/axiomatic-soundness/01-from-axioms-to-metrics.html",
    "auditing": "notebooks/auditing/01-audit-your-own-model.html",
}


def book_url() -> str:
    """Address of the rendered book (GitHub Pages of the repository in ``_config.yml``).

    ``CFLIB_BOOK_URL`` overrides it (a fork or a local build); ``CFLIB_REPOSITORY`` (``owner/name``, as
    the book workflow sets it) points it at a fork's pages.

    Returns
    -------
    str
        Ends with ``/``.
    """
    env = os.environ.get("CFLIB_BOOK_URL", "").strip()
    if env:
        return env.rstrip("/") + "/"
    repo = os.environ.get("CFLIB_REPOSITORY", "").strip() or "cflib-org/counterfactual-auditing-book"
    owner, _, name = repo.partition("/")
    return f"https://{owner.lower()}.github.io/{name}/"


def reference_link(reference: str) -> str | None:
    """The book page a row's ``reference`` (``"chapter, section"``) points to, or ``None``.

    Parameters
    ----------
    reference : str

    Returns
    -------
    str or None
    """
    ref = str(reference)
    for key in sorted(_PAGES, key=len, reverse=True):
        if ref.startswith(key):
            return book_url() + _PAGES[key]
    return None


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _p_text(p: float) -> str:
    return format_pvalue(p) if np.isfinite(p) and 0 <= p <= 1 else ""


def _md_link(reference: str) -> str:
    link = reference_link(reference)
    return f"[{reference}]({link})" if link else reference


def _md_table(head: Sequence[str], body: Sequence[Sequence[Any]]) -> list[str]:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    return ["| " + " | ".join(map(cell, head)) + " |", "|" + "---|" * len(head)] + [
        "| " + " | ".join(map(cell, row)) + " |" for row in body]


def _group_cells(groups: pd.DataFrame, alpha: float) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the group table as text: each rate with its Wilson interval, or 'not estimable'."""
    from .stats.rates import RATES

    head = ["group", "n"] + [f"{r.replace('_', ' ')} [{1 - alpha:.0%} CI]" for r in RATES] + ["note"]
    body = []
    for g, row in groups.iterrows():
        cells = [str(g), str(int(row["n"]))]
        for r in RATES:
            v = _num(row[r])
            cells.append("not estimable" if not np.isfinite(v) else
                         f"{format_number(v)} {format_interval(_num(row[r + '_low']), _num(row[r + '_high']))}")
        cells.append(str(row.get("note", "")))
        body.append(cells)
    return head, body


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
              business_necessity: Any = (), threshold: Any = 0.5, impute: Any = False,
              reference: Any = None) -> tuple[StandardFairnessModel, float, list[Any]]:
    """Check the arguments; return the SFM, alpha and the levels of the attribute (in the data's order)."""
    check_real(epsilon, "epsilon", low=0.0)
    if not isinstance(seed, np.random.Generator):
        check_count(seed, "seed", minimum=0)
    if isinstance(business_necessity, str):
        raise TypeError(f"business_necessity must be a list of effects such as ['SE'], got the string {business_necessity!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.floating)) or not 0 < float(threshold) < 1:
        raise ValueError(f"threshold must be a number in (0, 1) (scores at or above it count as decision 1), got {threshold!r}")
    if not isinstance(impute, (bool, np.bool_)):
        raise TypeError(f"impute must be true or false, got {impute!r}")
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
    levels = list(pd.unique(data[sfm.x].dropna()))
    if len(levels) < 2:
        raise ValueError(f"sfm.x: the protected attribute {sfm.x!r} is constant; the audit compares its levels")
    if reference is not None:
        if sfm.x0 is not None:
            raise ValueError("reference: give either sfm's x0 and x1 (one pair) or reference (every level against it), not both")
        if reference not in levels:
            raise ValueError(f"reference: {reference!r} is not a level of {sfm.x!r}; its levels are {sorted(map(str, levels))[:20]}")
    elif sfm.x0 is None and len(levels) == 2 and not (set(levels) <= {0, 1} or set(levels) <= {False, True}):
        raise ValueError(f"sfm.x: {sfm.x!r} has levels {sorted(map(str, levels))}; name the baseline and comparison with "
                         "x0= and x1= (config: roles.x0, roles.x1), or the baseline with reference=")
    if sfm.x0 is not None:
        absent = [v for v in (sfm.x0, sfm.x1) if v not in levels]
        if absent:
            raise ValueError(f"sfm.x0/x1: {absent} are not levels of {sfm.x!r}; its levels are {sorted(map(str, levels))[:20]}")
    return sfm, alpha, levels


def _missing_values(data: pd.DataFrame, sfm: StandardFairnessModel, impute: bool) -> tuple[pd.DataFrame, dict[str, int]]:
    """Refuse missing values (naming each column and its count) or, with ``impute``, fill them in the roles' columns."""
    cols = list(dict.fromkeys([sfm.x, *sfm.z, *sfm.w] + ([sfm.y] if sfm.y in data.columns else [])))
    inf = {c: int(np.isinf(data[c].to_numpy(float)).sum()) for c in cols if pd.api.types.is_float_dtype(data[c])}
    inf = {c: n for c, n in inf.items() if n}
    if inf:
        raise ValueError("data: infinite values in " + ", ".join(f"{c!r} ({n})" for c, n in inf.items())
                         + "; replace or drop those rows first")
    na = {c: int(data[c].isna().sum()) for c in cols}
    na = {c: n for c, n in na.items() if n}
    if not na:
        return data, {}
    fixed = [c for c in (sfm.x, sfm.y) if c in na]
    if fixed:
        raise ValueError(f"data: missing values in {', '.join(f'{c!r} ({na[c]})' for c in fixed)}; rows without the "
                         f"protected attribute or the outcome cannot be audited: drop them (data.dropna(subset={fixed}))")
    if not impute:
        raise ValueError("data: missing values in " + ", ".join(f"{c!r} ({n} of {len(data)} rows)" for c, n in na.items())
                         + "; drop those rows, or pass impute=True (config: impute: true) to fill them (median of a "
                         "number, most frequent level of a category)")
    out = data.copy()
    for c in na:
        s = out[c]
        fill = s.median() if pd.api.types.is_numeric_dtype(s) and s.dtype != bool else s.mode(dropna=True).iloc[0]
        out[c] = s.fillna(fill)
    return out, na


def _binary_outcome(values: pd.Series, y1: Any, column: str) -> np.ndarray:
    """The outcome as numbers: ``1{y == y1}`` when ``y1`` is given, True/False as 1/0, numbers as they are."""
    if y1 is not None:
        vals = list(pd.unique(values))
        hit = values == y1
        if not hit.any():
            hit = values.astype(str).str.strip() == str(y1).strip()
        if not hit.any():
            raise ValueError(f"y1: {y1!r} is not a value of the outcome column {column!r}; its values are {sorted(map(str, vals))[:10]}")
        return hit.to_numpy(dtype=float)
    if values.dtype == bool:
        return values.to_numpy(dtype=float)
    if not pd.api.types.is_numeric_dtype(values) or isinstance(values.dtype, pd.CategoricalDtype):
        vals = sorted(map(str, pd.unique(values)))
        raise ValueError(f"sfm.y: the outcome column {column!r} holds labels {vals[:10]}, not numbers; name the positive "
                         f"one with y1= (config: roles.y1), e.g. y1={vals[-1]!r}")
    return values.to_numpy(dtype=float)


def _decisions(y_hat: np.ndarray, threshold: float) -> tuple[np.ndarray | None, str]:
    """0/1 decisions from the predictions: labels as they are, scores in [0, 1] at the threshold, else none."""
    if set(np.unique(y_hat)) <= {0.0, 1.0}:
        return y_hat.astype(int), "the predictions (0/1 labels)"
    if y_hat.min() >= 0.0 and y_hat.max() <= 1.0:
        return (y_hat >= threshold).astype(int), f"score >= {threshold}"
    return None, "none (predictions outside [0, 1] are neither labels nor probabilities)"


def _model_type(predict: Any) -> str | None:
    if predict is None:
        return None
    steps = getattr(predict, "steps", None)
    if steps:
        return "Pipeline(" + ", ".join(type(s).__name__ for _, s in steps) + ")"
    return getattr(predict, "__name__", None) or type(predict).__name__


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
    y1: Any = None,
    impute: bool = False,
    reference: Any = None,
    threshold: float = 0.5,
    n_jobs: int | None = None,
) -> AuditReport:
    """Audit a model's predictions for causal unfairness, counterfactual variance and closeness.

    Parameters
    ----------
    predict : callable or scikit-learn estimator or None
        The model: a callable ``DataFrame -> predictions``, or an estimator (its ``predict_proba``
        column of the last class when it has one, else ``predict``, on the columns it was fitted on,
        or on ``sfm``'s x, z, w columns). ``None`` when ``scores`` are given. The model always sees the
        data as given (never the imputed copy).
    data : pandas.DataFrame
        One row per unit with the columns of ``sfm`` (the outcome ``sfm.y`` is optional), as it comes:
        string, categorical and boolean confounders and mediators are handled by every learner.
    sfm : cflib.fairness.StandardFairnessModel
        Roles of the columns: protected attribute ``x``, confounders ``z``, mediators ``w``, outcome ``y``.
        ``x0``/``x1`` name the two levels to compare (the others are left out); without them a 0/1 or
        boolean attribute compares 1 with 0, and an attribute with more than two levels is audited
        pairwise, every level against ``reference``.
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
        Level of every test; intervals are at ``1 - alpha``. With ``k`` pairwise comparisons each uses
        ``alpha / k`` (Bonferroni), so the whole report keeps level ``alpha``.
    seed : int
        Seed of every random draw (folds, bootstrap, permutations).
    n_boot : int
        Bootstrap replicates of the effects (0: normal intervals only).
    learner : {"hgb", "linear", "rf"} or estimator
        Nuisance regressions of the doubly robust effects.
    progress : bool
        Show a progress bar over the steps.
    y1 : scalar, optional
        The positive label of the outcome (``">50K"``): the audit reads ``1{y == y1}``. Needed for a
        string or categorical outcome; a boolean outcome counts ``True``; a numeric one is used as it is.
    impute : bool
        Fill missing values of the confounders and mediators (median of a number, most frequent level
        of a category) instead of refusing them; the report says which and how many. Rows without the
        attribute or the outcome are always refused.
    reference : scalar, optional
        The baseline level when the attribute has more than two levels (default: its most frequent
        level); each other level is compared with it.
    threshold : float
        Scores in [0, 1] at or above it count as decision 1 (group table, DP, EO, FPR difference, ECA).
    n_jobs : int, optional
        Cross-fitting folds fitted at once, in separate processes (:func:`cflib.fairness.effects.ctf_effects`);
        the numbers do not depend on it. Default: one per available core (at most the 5 folds) from 5000 rows
        on, where a fit takes long enough to pay for starting the processes, and 1 below.

    Returns
    -------
    AuditReport

    Raises
    ------
    TypeError, ValueError
        One line naming the argument: a missing role column, a constant attribute, missing values (with
        the column and the count), a string outcome without ``y1``, predictions of the wrong shape, an
        alpha outside (0, 1), ...
    """
    from tqdm import tqdm

    from .stats.rates import group_rates

    t0 = time.perf_counter()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    sfm, alpha, levels = _validate(data, sfm, alpha, n_boot, epsilon, seed, business_necessity, threshold, impute, reference)
    if sfm.x0 is not None and len(levels) > 2:  # one named pair: the other levels are left out (and not hashed)
        data = data[data[sfm.x].isin([sfm.x0, sfm.x1])].reset_index(drop=True)
    bn = tuple(business_necessity)
    if not set(bn) <= set(MEASURES[1:]):
        raise ValueError(f"business_necessity must hold effects among DE, IE, SE, got {bn!r}")
    if predict is None and scores is None:
        raise ValueError("predict: give the model (predict=) or its predictions on data (scores=)")
    if z is not None:
        z = [z] if isinstance(z, str) else list(z)
        missing = [c for c in z if c not in data.columns]
        if missing:
            raise ValueError(f"z: column(s) {missing} are not in data")
    if counterfactual is not None and predict is None:
        raise ValueError("counterfactual: the counterfactual checks call the model; give predict=")
    if n_jobs is not None and (isinstance(n_jobs, bool) or not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1):
        raise ValueError(f"n_jobs must be a whole number >= 1 or None (one per core on large data), got {n_jobs!r}")
    if n_jobs is None:
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
        n_jobs = min(5, cores) if len(data) >= 5000 else 1
    has_y = sfm.y in data.columns
    filled, imputed = _missing_values(data, sfm, bool(impute))
    y01 = _binary_outcome(data[sfm.y], y1, sfm.y) if has_y else None
    cols = [sfm.x, *sfm.z, *sfm.w]
    f = _predictor(predict, data, cols) if predict is not None else None
    if scores is not None:
        y_hat = _checked_predictions(scores, len(data), "scores")
    else:
        try:
            raw = f(data)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"predict: the model failed on data ({' '.join(str(exc).split())[:300]})") from None
        y_hat = _checked_predictions(raw, len(data), "predict")

    # The comparisons: one pair (x0, x1), or every level against the reference (Bonferroni over the pairs).
    if sfm.x0 is not None:
        pairs = [(sfm.x0, sfm.x1)]
    elif len(levels) == 2 and reference is None:
        pairs = [tuple(sfm.levels(data.dropna(subset=[sfm.x])))]
    else:
        counts = data[sfm.x].value_counts()
        ref = reference if reference is not None else counts.index[0]
        pairs = [(ref, lv) for lv in sorted((v for v in levels if v != ref), key=str)]
    k = len(pairs)
    alpha_pair = alpha / k
    level = 1 - alpha_pair
    decision, decided_by = _decisions(y_hat, float(threshold))
    binary_y = y01 is not None and set(np.unique(y01)) <= {0.0, 1.0}

    steps = 2 + k * (2 + (counterfactual is not None))
    bar = tqdm(total=steps, desc="audit", disable=not progress)
    bar.set_postfix_str("group table")
    groups = group_rates(data[sfm.x].astype(str).to_numpy(), decision, y01.astype(int) if binary_y else None, level=1 - alpha,
                         no_decision="predictions outside [0, 1] are not decisions",
                         no_outcome="no outcome column" if y01 is None else "the outcome is not 0/1: name its positive label with y1=")
    bar.update(1)
    rows: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    notes: tuple[str, ...] = ()
    if imputed:
        notes += (f"imputed missing values in {', '.join(f'{c!r} ({n})' for c, n in imputed.items())} for the audit's own "
                  "models (median of a number, most frequent level of a category); the model saw the data as given",)
    for x0, x1 in pairs:
        suffix = f" [{x1} vs {x0}]" if k > 1 else ""
        keep = data[sfm.x].isin([x0, x1]).to_numpy()
        pair_sfm = sfm if sfm.x0 is not None or (x0, x1) == (0, 1) else replace(sfm, x0=x0, x1=x1)
        got = _audit_pair(
            f, data.loc[keep].reset_index(drop=True), filled.loc[keep].reset_index(drop=True), y_hat[keep],
            None if y01 is None else y01[keep], None if decision is None else decision[keep], decided_by, pair_sfm,
            x0, x1, alpha_pair, level, n_boot, seed, learner, bn, epsilon, counterfactual, z, bar, int(n_jobs))
        for name, row in got[0].items():
            rows[name + suffix] = row
        details.update({key + suffix: v for key, v in got[1].items()})
        notes = tuple(dict.fromkeys((*notes, *got[2])))
    bar.set_postfix_str("report")
    table = pd.DataFrame.from_dict(rows, orient="index")[[*_COLUMNS, "flagged"]]
    table.index.name = "check"
    counts = data[sfm.x].value_counts()
    x0_all, x1_all = pairs[0] if k == 1 else (pairs[0][0], None)
    provenance = {
        "data_sha256": _data_hash(data),
        "n_rows": int(len(data)),
        "group_counts": {str(k_): int(v) for k_, v in sorted(counts.items(), key=lambda kv: str(kv[0]))},
        "roles": {"x": sfm.x, "z": list(sfm.z), "w": list(sfm.w), "y": sfm.y if has_y else None,
                  "x0": _plain(x0_all), "x1": _plain(x1_all), "cit_z": z, "business_necessity": list(bn),
                  "y1": _plain(y1), "reference": _plain(pairs[0][0]) if k > 1 or reference is not None else None},
        "model": _model_hash(predict) if predict is not None else "scores given",
        "model_type": _model_type(predict),
        "counterfactual": None if counterfactual is None else _model_hash(counterfactual),
        "cflib_version": _cflib_version(),
        "seed": int(seed),
        "n_boot": int(n_boot),
        "device": "cpu",
        "environment": _environment(),
        "comparisons": [[_plain(b), _plain(a)] for a, b in pairs],
        "multiplicity": (f"{k} comparisons with the reference level {pairs[0][0]!r}: each test and interval is at level "
                         f"{alpha}/{k} = {alpha_pair:.4g} (Bonferroni), so the report as a whole keeps level {alpha}"
                         if k > 1 else None),
        "decisions": decided_by,
        "threshold": float(threshold),
        "imputed": {c: int(n) for c, n in imputed.items()},
    }
    bar.update(1)
    bar.close()
    timing = {"started_utc": started, "wall_seconds": round(time.perf_counter() - t0, 2)}
    return AuditReport(table, alpha, provenance, timing, details, notes, groups)


def _rate_row(v0: np.ndarray, v1: np.ndarray, level: float, alpha: float, *, what: str, method: str,
              reference: str, missing: str = "", decisions: bool = True) -> tuple[dict[str, Any], Any]:
    """A DP/EO/FPR row: the signed difference (x1 - x0) with an interval and the p-value that inverts it.

    Decisions (0/1) get Newcombe's hybrid score interval (honest for small groups and rates of 0 or 1),
    means of scores the Welch interval; a group without units makes the row not estimable.
    """
    from .stats.rates import newcombe_difference, welch_difference

    if missing:
        return ({"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "pvalue": math.nan,
                 "verdict": f"not estimable: {missing}", "method": method, "reference": reference, "flagged": False}, None)
    if decisions:
        d = newcombe_difference(int(v0.sum()), int(v0.size), int(v1.sum()), int(v1.size), level)
    else:
        d = welch_difference(v0, v1, level)
    if d.reason.startswith("not estimable"):
        return ({"estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "pvalue": math.nan,
                 "verdict": f"{d.reason} ({what})", "method": method, "reference": reference, "flagged": False}, d)
    flagged = bool(d.pvalue <= alpha)
    return ({"estimate": d.difference, "ci_low": d.ci[0], "ci_high": d.ci[1], "pvalue": d.pvalue,
             "verdict": "violated" if flagged else "no evidence of a violation", "method": method, "reference": reference,
             "flagged": flagged}, d)


def _audit_pair(f, model_frame: pd.DataFrame, learn_frame: pd.DataFrame, y_hat: np.ndarray, y01: np.ndarray | None,
                decision: np.ndarray | None, decided_by: str, sfm: StandardFairnessModel, x0: Any, x1: Any,
                alpha: float, level: float, n_boot: int, seed: int, learner: Any, bn: tuple[str, ...], epsilon: float,
                counterfactual: Any, z: list[str] | None, bar: Any, n_jobs: int = 1) -> tuple[dict, dict, tuple[str, ...]]:
    """Every check of one comparison ``x1`` against ``x0`` (rows without the pair's name suffix)."""
    from .stats.closeness import cfclot_test
    from .stats.invariance import cit_lr_test, expected_counterfactual_accuracy

    rows: dict[str, dict[str, Any]] = {}
    details: dict[str, Any] = {}
    has_y = y01 is not None
    a = (model_frame[sfm.x].to_numpy() == x1).astype(int)
    frame = learn_frame.assign(_y_hat=y_hat)
    if has_y:
        frame[sfm.y] = y01
    bar.set_postfix_str(f"effects {x1} vs {x0}")
    outcomes = ["_y_hat"] + ([sfm.y] if has_y else [])
    # One set of nuisance fits per fold for the prediction and the outcome; their difference (Algorithm 1)
    # reuses both (ctf_effects' differences), and the bootstrap reweights the influence values.
    eff = ctf_effects(frame, sfm, outcomes, learner=learner, n_boot=n_boot, level=level, seed=seed,
                      ci="percentile" if n_boot >= 2 else "normal",
                      differences={"_diff": (sfm.y, "_y_hat")} if has_y else None, n_jobs=n_jobs)
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
                "flagged": bool(np.isfinite(lo) and np.isfinite(hi) and (lo > 0 or hi < 0)),
            }
        if out == "_y_hat" and f is not None:
            rows["Ctf-DE (white-box)"] = _whitebox_de(f, model_frame.assign(_y_hat=y_hat), sfm, x0, x1, level)
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
            "flagged": bool(cpp.pvalue <= alpha),
        }
    bar.update(1)

    bar.set_postfix_str(f"parity tests {x1} vs {x0}")
    v = decision.astype(float) if decision is not None else y_hat
    on = (f"decisions ({decided_by})" if decision is not None else "mean predictions (no decisions: "
          "predictions outside [0, 1])")
    welch = (f"Newcombe hybrid score {level:.4g} interval and the p-value that inverts it" if decision is not None
             else f"Welch t-test and {level:.4g} interval")
    rows["DP"], details["DP"] = _rate_row(
        v[a == 0], v[a == 1], level, alpha, what="selection rates", reference="invariance-test, eq. 5",
        method=f"demographic parity: difference of {on} between {x1!r} and {x0!r}, {welch}", decisions=decision is not None)
    if has_y:
        binary = set(np.unique(y01)) <= {0.0, 1.0}
        why = "" if binary else "the outcome is not 0/1 (name its positive label with y1=)"
        for name, yv, what, ref in (("EO", 1.0, "true-positive rates, units with y = 1", "invariance-test, eq. 6"),
                                    ("FPR difference", 0.0, "false-positive rates, units with y = 0", "invariance-test, eq. 6")):
            sel = (y01 == yv) if binary else np.zeros(len(y01), bool)
            rows[name], details[name] = _rate_row(
                v[sel & (a == 0)], v[sel & (a == 1)], level, alpha, what=what, reference=ref, missing=why,
                decisions=decision is not None,
                method=f"{'equal opportunity' if yv == 1 else 'false-positive rate'}: difference of {on} among units "
                       f"with y = {int(yv)} between {x1!r} and {x0!r}, {welch}")
    bar.update(1)

    if counterfactual is not None:
        bar.set_postfix_str(f"counterfactuals {x1} vs {x0}")
        cf = _counterfactual_frame(counterfactual, model_frame, sfm, x0, x1)
        y_cf = _checked_predictions(f(cf), len(model_frame), "predict on the counterfactual rows")
        both = np.r_[y_hat, y_cf]
        binary = set(np.unique(both)) <= {0.0, 1.0}
        # A score in [0, 1] is a probability: ECA compares the decisions it leads to (at the threshold),
        # since almost every continuous score moves a little under any intervention.
        decide = not binary and both.min() >= 0.0 and both.max() <= 1.0
        thr = float(decided_by.split(">= ")[1]) if decided_by.startswith("score >= ") else 0.5
        f_dec, cf_dec = ((y_hat >= thr).astype(float), (y_cf >= thr).astype(float)) if decide else (y_hat, y_cf)
        eca = expected_counterfactual_accuracy(None, f_dec, cf_dec, tol=0.0 if (binary or decide) else 1e-9)
        details["ECA"] = eca
        what = f"decisions (score >= {thr})" if decide else "predictions"
        rows["ECA"] = {"estimate": eca.eca, "ci_low": eca.ci[0], "ci_high": eca.ci[1], "pvalue": math.nan,
                       "verdict": "invariant on every unit" if eca.eca == 1.0 else f"{eca.flip_rate:.1%} of {what} change under do(x)",
                       "method": f"share of {what} unchanged by do(x = other level), Wilson interval",
                       "reference": "invariance-test, eqs. 7-8", "flagged": bool(eca.eca < 1.0)}
        clot = cfclot_test(y_hat, y_cf, epsilon, alpha=alpha, seed=seed)
        details["CF-CLOT"] = clot
        notes = tuple(dict.fromkeys((*notes, *clot.warnings)))  # e.g. too few pairs for the normal threshold
        rows["CF-CLOT"] = {"estimate": clot.statistic, "ci_low": math.nan, "ci_high": math.nan, "pvalue": clot.pvalue,
                           "verdict": _verdict_test(clot.pvalue, alpha, f"not {epsilon}-close (N-TE > {epsilon})",
                                                    f"no evidence against {epsilon}-closeness"),
                           "method": f"CF-CLOT, N-TE <= {epsilon}, {clot.method}", "reference": "closeness-test, Eq. 7",
                           "flagged": bool(clot.pvalue <= alpha)}
        if z is not None:
            zmat = pd.get_dummies(learn_frame[z], drop_first=True, dtype=float).to_numpy(dtype=float)
            cit = cit_lr_test(y_hat, a, zmat, seed=seed)
            details["CIT-LR"] = cit
            rows["CIT-LR"] = {"estimate": cit.statistic, "ci_low": math.nan, "ci_high": math.nan, "pvalue": cit.pvalue,
                              "verdict": _verdict_test(cit.pvalue, alpha, "not counterfactually invariant",
                                                       "no evidence against invariance"),
                              "method": f"CIT-LR given {z}", "reference": "invariance-test, Alg. 1",
                              "flagged": bool(cit.pvalue <= alpha)}
        bar.update(1)
    return rows, details, notes


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
    flagged = not exact_zero and bool(np.isfinite(e.ci.low) and np.isfinite(e.ci.high) and (e.ci.low > 0 or e.ci.high < 0))
    return {"estimate": e.estimate, "ci_low": e.ci.low, "ci_high": e.ci.high, "pvalue": math.nan, "verdict": verdict,
            "method": f"the model evaluated at x = {x1!r} on the {diff.size} units with x = {x0!r}, normal interval",
            "reference": "parity-decomposition, notes Sec. 2.10 (white-box Ctf-DE)", "flagged": flagged}


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


def audit_from_config(config: str | os.PathLike, out: str | os.PathLike, *, progress: bool = True,
                      fail_on: str | Sequence[str] | None = None) -> AuditReport:
    """Run :func:`audit` from a YAML file and write ``report.json``, ``report.html`` and ``model_card.md`` into ``out``.

    The file holds ``data`` (a CSV path, relative to the file, read as it comes), ``roles`` (``x``, ``z``,
    ``w``, ``y``; ``y1`` the positive label of a string or categorical outcome; ``x0``/``x1`` to compare
    two levels of the attribute, or ``reference`` to compare every level with one), ``model``
    (``module:function`` taking a DataFrame, or a pickled scikit-learn estimator ``.pkl``/``.joblib``),
    and optionally ``counterfactual`` (``module:function``, frame to counterfactual frame), ``cit_z``,
    ``business_necessity``, ``epsilon``, ``alpha``, ``seed``, ``n_boot``, ``learner``, ``impute``
    (true/false), ``threshold`` (scores at or above it are decision 1) and ``n_jobs``. A file with an ``images`` key is an
    image audit (:func:`cflib.audit_images.audit_images_from_config`).

    Parameters
    ----------
    config : path-like
        The YAML file.
    out : path-like
        Output folder; written only when the audit succeeded (each file atomically).
    progress : bool
        Show a progress bar.
    fail_on : str or sequence of str, optional
        Check names of a CI gate (:meth:`AuditReport.gate`); checked before anything is written, so a
        name that selects no check of this report writes nothing.

    Returns
    -------
    AuditReport

    Raises
    ------
    FileNotFoundError, TypeError, ValueError
        One line naming the key or argument at fault.
    """
    import yaml

    if fail_on is not None:
        _check_names(fail_on)  # the spelling now; the names against the report before any file is written
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

        return importlib.import_module(f"{__package__}.audit_images").audit_images_from_config(config, out, progress=progress,
                                                                                              fail_on=fail_on)
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
    bad_roles = sorted(set(roles) - _ROLES)
    if bad_roles:
        raise ValueError(f"{config}: unknown role(s) {bad_roles}; roles are {', '.join(sorted(_ROLES))}")
    if ("x0" in roles) != ("x1" in roles):
        raise ValueError(f"{config}: roles.x0 and roles.x1 go together (one pair of levels); to compare every level "
                         "with one baseline, give roles.reference alone")
    if "impute" in cfg and not isinstance(cfg["impute"], bool):
        raise ValueError(f"{config}: impute must be true or false, got {cfg['impute']!r}")
    as_list = {k: [roles[k]] if isinstance(roles.get(k), str) else list(roles.get(k) or []) for k in ("z", "w")}
    sfm = StandardFairnessModel(roles["x"], as_list["z"], as_list["w"], roles["y"], roles.get("x0"), roles.get("x1"))
    if sfm.y not in data.columns:
        raise ValueError(f"{config}: roles.y column {sfm.y!r} is not in {data_path.name}")
    model = _load_object(str(cfg["model"]), base, "model")
    cf = _load_object(str(cfg["counterfactual"]), base, "counterfactual") if cfg.get("counterfactual") else None
    report = audit(model, data, sfm=sfm, counterfactual=cf, z=cfg.get("cit_z"),
                   business_necessity=cfg.get("business_necessity", ()), epsilon=cfg.get("epsilon", 0.1),
                   alpha=cfg.get("alpha", 0.05), seed=cfg.get("seed", 0), n_boot=cfg.get("n_boot", 200),
                   learner=cfg.get("learner", "hgb"), progress=progress, y1=roles.get("y1"),
                   impute=cfg.get("impute", False), reference=roles.get("reference"), threshold=cfg.get("threshold", 0.5),
                   n_jobs=cfg.get("n_jobs"))
    if fail_on is not None:
        report.gate(fail_on)  # a name that selects no check: one line, nothing written
    out = Path(out)
    report.to_json(out / "report.json")
    report.to_html(out / "report.html")
    report.to_markdown(out / "model_card.md")
    return report
