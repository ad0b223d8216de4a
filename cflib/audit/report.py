"""The report of an audit: :class:`AuditReport`, its summary and its renderings (JSON, HTML, model card, JUnit).

Every row of the report has an estimate or statistic, an interval or p-value, a verdict in words, the
method and the chapter it comes from. The JSON (:meth:`AuditReport.to_json`, schema
``cflib/audit_schema.json``, versioned) and the HTML page (:meth:`AuditReport.to_html`: one
self-contained file, figures inline, no network) carry the provenance.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..formatting import format_interval, format_number, format_pvalue
from .checks import COLUMNS, EFFECT_NAMES, reference_link
from .provenance import plain
from .schema import SCHEMA_VERSION
from .status import gate_checks, statuses

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["AuditReport"]


@dataclass(frozen=True)
class AuditReport:
    """The outcome of :func:`audit`.

    Attributes
    ----------
    rows : pandas.DataFrame
        One row per check, indexed by its name (``"TV"``, ``"Ctf-DE"``, ..., ``"DP"``, ``"EO"``,
        ``"FPR difference"``, ``"CIT-LR"``, ``"CF-CLOT"``, ``"ECA"``, ``"PP (Algorithm 1)"``, ``"... (y)"``
        for the true outcome, and ``"... [x1 vs x0]"`` for each pair when the attribute has more than two
        levels), columns ``estimate, ci_low, ci_high, pvalue, verdict, method, reference``, ``status``
        (``flagged``, ``clear``, ``inconclusive`` or ``not estimable`` against the check's ``tolerance``:
        :mod:`cflib.audit.status`), ``n_to_decide`` (for an inconclusive check, the sample that would decide
        it at the observed estimate), ``status_reason``, and ``flagged`` (``status == "flagged"``).
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
        """The checks, one row each: estimate, interval, p-value, verdict and status.

        Parameters
        ----------
        formatted : bool
            Return text as a reader sees it (three significant figures, the interval as ``[low, high]``,
            p-values as ``< 0.001``: :mod:`cflib.formatting`) instead of numbers.

        Returns
        -------
        pandas.DataFrame
            Indexed by check name, columns ``estimate, ci_low, ci_high, pvalue, verdict, status`` (formatted:
            ``estimate, interval, p-value, verdict, status``).
        """
        out = self.rows[["estimate", "ci_low", "ci_high", "pvalue", "verdict"]].copy()
        out["status"] = self.status()
        if not formatted:
            return out
        return pd.DataFrame(
            {
                "estimate": [format_number(_num(v)) for v in out["estimate"]],
                f"{1 - self.alpha:.0%} interval": [
                    format_interval(_num(lo), _num(hi)) for lo, hi in zip(out["ci_low"], out["ci_high"], strict=True)
                ],
                "p-value": [_p_text(_num(v)) for v in out["pvalue"]],
                "verdict": out["verdict"].astype(str).to_numpy(),
                "status": out["status"].to_numpy(),
            },
            index=out.index,
        )

    def status(self) -> pd.Series:
        """The status of each check: ``flagged``, ``clear``, ``inconclusive``, ``not estimable`` (or ``descriptive``
        for a row that tests nothing), against its tolerance (:mod:`cflib.audit.status`).

        Returns
        -------
        pandas.Series of str
            Indexed by check name.
        """
        return statuses(self.rows)

    def flagged(self) -> pd.Series:
        """Whether each check is flagged: its status is ``flagged`` (its interval lies beyond its tolerance, or a
        test that can only reject rejects at ``p < alpha``).

        A check that could not be estimated is not flagged (:meth:`not_estimable` lists them). Rows made without
        a ``status`` or ``flagged`` column are flagged when their p-value is below ``alpha``.

        Returns
        -------
        pandas.Series of bool
            Indexed by check name.
        """
        if "status" in self.rows.columns:
            return self.rows["status"].astype(str) == "flagged"
        if "flagged" in self.rows.columns:
            return self.rows["flagged"].fillna(False).astype(bool)
        p = pd.to_numeric(self.rows["pvalue"], errors="coerce")
        return (p < self.alpha).fillna(False).astype(bool)

    def not_estimable(self) -> pd.Series:
        """Whether each check could not be estimated (its verdict says so, with the reason).

        Returns
        -------
        pandas.Series of bool
        """
        return self.rows["verdict"].astype(str).str.startswith("not estimable")

    def gate(
        self, fail_on: str | Sequence[str] | None = None, require_clear: str | Sequence[str] | None = None
    ) -> list[str]:
        """The checks that fail the gate (what ``cflib audit --fail-on/--require-clear`` exits 1 on): those named in
        ``fail_on`` that are flagged *or not estimable* (a gate never passes on nothing), and those named in
        ``require_clear`` that are not clear (flagged, inconclusive or not estimable).

        Parameters
        ----------
        fail_on : str or sequence of str
            Check names as in :attr:`rows` (``"Ctf-DE"``, ``"DP"``, ``"PP (Algorithm 1)"`` or its short
            name ``"PP"``), comma-separated in one string or as a list; a name also selects its pairwise
            rows ``"name [a vs b]"``. ``"any"`` selects every check, ``"model"`` every check of the
            model's predictions (all but the outcome's own ``(y)`` rows).
        require_clear : str or sequence of str, optional
            Names as in ``fail_on``; these must be ``clear``. Descriptive rows are never gated.

        Returns
        -------
        list of str
            The failing checks among those selected, in the report's order (empty: the gate passes).

        Raises
        ------
        ValueError
            An empty name, or a name that selects no check of this report (the message lists them).
        """
        return gate_checks(self.rows, fail_on, require_clear)

    def plain_summary(self) -> str:
        """What a reader needs first, in words: what was flagged, at what level, with the numbers.

        Returns
        -------
        str
            A few sentences (no markup), the top of the HTML page and of the model card.
        """
        prov = self.provenance
        roles = prov.get("roles", {})
        level = f"{1 - self.alpha:.0%}"
        pairs = prov.get("comparisons") or ([[roles.get("x1"), roles.get("x0")]] if roles.get("x1") is not None else [])
        what = "; ".join(f"{a} against {b}" for a, b in pairs) if pairs else "its levels"
        parts = [
            f"cflib audited {prov.get('n_rows', '?')} rows, comparing {roles.get('x', 'the protected attribute')} "
            f"({what}) at level {self.alpha} ({level} intervals)."
        ]
        if prov.get("scored"):
            parts.append(f"Scored: {prov['scored']}; decisions: {prov.get('decisions', 'as given')}.")
        mult = prov.get("multiplicity")
        if mult:
            parts.append(mult)
        parts.extend(self._who_gets_less())
        st = self.status()
        names = [str(c) for c in self.rows.index]
        flagged = [c for c in names if st[c] == "flagged"]
        if flagged:
            parts.append(f"{len(flagged)} of {len(self.rows)} checks are flagged (beyond their tolerance):")
            parts.extend(f"- {c}: {self._row_text(c)}" for c in flagged)
        else:
            parts.append(f"None of the {len(self.rows)} checks is flagged (beyond its tolerance).")
        clear = [c for c in names if st[c] == "clear"]
        if clear:
            parts.append("Clear (within their tolerance): " + ", ".join(clear) + ".")
        unsure = [c for c in names if st[c] == "inconclusive"]
        if unsure:
            parts.append("Inconclusive (neither shown beyond nor within the tolerance):")
            reasons = self.rows.get("status_reason", pd.Series("", index=self.rows.index))
            parts.extend(f"- {c}: {self._row_text(c)}; {reasons[c]}" for c in unsure)
        ne = [c for c in names if st[c] == "not estimable"]
        if ne:
            parts.append("Not estimable: " + "; ".join(f"{c} ({self.rows.loc[c, 'verdict']})" for c in ne) + ".")
        if self.groups is not None and len(self.groups):
            small = [str(g) for g, r in self.groups.iterrows() if r.get("note")]
            if small:
                parts.append(
                    "Some group rates are not estimable: "
                    + "; ".join(f"{g}: {self.groups.loc[g, 'note']}" for g in small)
                    + "."
                )
        for w in self.warnings:
            parts.append(f"Warning: {w}")
        return "\n".join(parts)

    def _who_gets_less(self) -> list[str]:
        """A sentence per demographic-parity row: which group receives fewer positive decisions (or lower mean
        scores), by how much, with the interval and the row's status."""
        roles, out = self.provenance.get("roles", {}), []
        for c in self.rows.index:
            name = str(c)
            if not name.startswith("DP") or name.split(" [", 1)[0] != "DP":
                continue
            r = self.rows.loc[c]
            est, lo, hi = _num(r["estimate"]), _num(r["ci_low"]), _num(r["ci_high"])
            if not np.isfinite(est):
                continue
            x1, x0 = roles.get("x1", "x1"), roles.get("x0", "x0")
            if " [" in name:
                x1, _, x0 = name.split(" [", 1)[1].rstrip("]").partition(" vs ")
            low, high = (f"{roles.get('x', 'x')} = {v}" for v in ((x1, x0) if est < 0 else (x0, x1)))
            scores = "mean score" in str(r["method"]) or "mean prediction" in str(r["method"])
            what = "lower mean scores" if scores else "fewer positive decisions"
            unit = "in mean score" if scores else "in the selection rate"
            status = r["status"] if "status" in r.index else ""
            tol = _num(r["tolerance"]) if "tolerance" in r.index else math.nan
            tol_text = f" at tolerance {format_number(tol)}" if np.isfinite(tol) else ""
            if est == 0:
                out.append(f"The groups {x1} and {x0} receive the same share of positive decisions ({name}).")
                continue
            out.append(
                f"{low} receives {what} than {high}: {format_number(abs(est))} less {unit} "
                f"({1 - self.alpha:.0%} interval for {x1} minus {x0}: {format_interval(lo, hi)}; {name} is {status}"
                f"{tol_text})."
            )
        return out

    def _row_text(self, check: str) -> str:
        r = self.rows.loc[check]
        bits = [f"estimate {format_number(float(r['estimate']))}"] if np.isfinite(_num(r["estimate"])) else []
        if np.isfinite(_num(r["ci_low"])) and np.isfinite(_num(r["ci_high"])):
            bits.append(f"{1 - self.alpha:.0%} interval {format_interval(float(r['ci_low']), float(r['ci_high']))}")
        if np.isfinite(_num(r["pvalue"])):
            bits.append(f"p {_p_text(float(r['pvalue']))}")
        return f"{r['verdict']} ({', '.join(bits)})" if bits else str(r["verdict"])

    def plot(self, ax: Axes | None = None) -> Axes:
        """Each effect with its interval (the prediction's, and the true outcome's where present).

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional

        Returns
        -------
        matplotlib.axes.Axes
        """
        from .. import plotting

        if ax is None:
            _, ax = plotting.subplots(1, 1, width=6.0, height=3.2)
        r = self.rows
        names = [n for n in r.index if n.split(" ")[0] in EFFECT_NAMES.values() and np.isfinite(r.loc[n, "ci_low"])]
        pos = np.arange(len(names))[::-1]
        for p, n in zip(pos, names, strict=True):
            est, lo, hi = r.loc[n, ["estimate", "ci_low", "ci_high"]]
            flagged = lo > 0 or hi < 0
            ax.errorbar(
                [est],
                [p],
                xerr=[[est - lo], [hi - est]],
                fmt="o",
                capsize=4,
                color=plotting.PALETTE[3] if flagged else plotting.PALETTE[0],
            )
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
        flags, st = self.flagged(), self.status()
        for name, row in self.rows.iterrows():
            checks.append(
                {
                    "check": str(name),
                    **{c: plain(row[c]) for c in COLUMNS},
                    "flagged": bool(flags[name]),
                    "status": str(st[name]),
                    **{c: plain(row[c]) for c in ("tolerance", "n_to_decide", "status_reason") if c in row.index},
                    "link": reference_link(str(row["reference"])),
                }
            )
        out = {
            "schema_version": SCHEMA_VERSION,
            "alpha": self.alpha,
            "checks": checks,
            "warnings": list(self.warnings),
            "provenance": self.provenance,
            "timing": self.timing,
            "summary": self.plain_summary(),
        }
        if self.groups is not None:
            out["groups"] = [
                {"group": str(g), **{c: plain(v) for c, v in row.items()}} for g, row in self.groups.iterrows()
            ]
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
        lines += [
            "# Model card: fairness audit",
            "",
            "## Summary",
            "",
            self.plain_summary(),
            "",
            "## Model",
            "",
            f"- model: `{prov.get('model')}`" + (f" ({prov['model_type']})" if prov.get("model_type") else ""),
            f"- predictions read as decisions: {prov.get('decisions', 'as given')}",
            "",
            "## Data",
            "",
            f"- rows: {prov.get('n_rows')}; data sha256: `{prov.get('data_sha256')}`",
            f"- protected attribute: `{roles.get('x')}`; confounders: {', '.join(map(str, roles.get('z', []))) or 'none'}; "
            f"mediators: {', '.join(map(str, roles.get('w', []))) or 'none'}; outcome: `{roles.get('y')}`"
            + (f" (positive label {roles['y1']!r})" if roles.get("y1") is not None else ""),
        ]
        if prov.get("imputed"):
            lines.append("- imputed: " + ", ".join(f"{c} ({n} values)" for c, n in prov["imputed"].items()))
        lines += ["", "## Intended groups", ""]
        lines += [f"- {g}: {n} rows" for g, n in prov.get("group_counts", {}).items()]
        lines += ["", "## Flagged checks", ""]
        head = ["check", "status", "estimate", f"{1 - self.alpha:.0%} interval", "p-value", "verdict", "reference"]
        st = self.status()
        every = [
            [
                c,
                st[c],
                format_number(_num(r["estimate"])),
                format_interval(_num(r["ci_low"]), _num(r["ci_high"])),
                _p_text(_num(r["pvalue"])),
                str(r["verdict"]),
                _md_link(str(r["reference"])),
            ]
            for c, r in self.rows.iterrows()
        ]
        body = [cells for cells in every if flags[cells[0]]]
        lines += _md_table(head, body) if body else ["No check is flagged."]
        lines += ["", "## All checks", ""]
        lines += _md_table(head, every)
        if self.groups is not None:
            lines += ["", "## Group rates", ""]
            lines += _md_table(*_group_cells(self.groups, self.alpha))
        lines += [
            "",
            "## How this was made",
            "",
            f"cflib {prov.get('cflib_version')}, report schema {SCHEMA_VERSION}, seed {prov.get('seed')}, "
            f"{prov.get('n_boot')} bootstrap replicates, started {self.timing.get('started_utc')}.",
        ]
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

    def to_junit(
        self,
        path: str | os.PathLike,
        fail_on: str | Sequence[str] | None = None,
        require_clear: str | Sequence[str] | None = None,
    ) -> Path:
        """Write one JUnit test case per check (atomically), for CI dashboards.

        With a gate (``fail_on`` or ``require_clear``) the checks :meth:`gate` returns *fail* (a gated check that
        is not estimable fails too: a gate never passes on nothing), a not-estimable check outside the gate is
        *skipped* with its reason, and a flagged check outside the gate passes and says so in its output, so the
        dashboard agrees with ``cflib audit``'s exit status. Without a gate every flagged check fails and every
        not-estimable check is skipped.

        Parameters
        ----------
        path : path-like
        fail_on, require_clear : str or sequence of str, optional
            As in :meth:`gate`.

        Returns
        -------
        pathlib.Path
        """
        from xml.sax.saxutils import quoteattr

        gated = fail_on is not None or require_clear is not None
        failing = set(self.gate(fail_on, require_clear)) if gated else {c for c, f in self.flagged().items() if f}
        flags, missing, st = self.flagged(), self.not_estimable(), self.status()
        cases, n_fail, n_skip = [], 0, 0
        for c, r in self.rows.iterrows():
            text = html.escape(
                f"{st[c]}: {self._row_text(c)}; method: {r['method']}; reference: {r['reference']}", quote=False
            )
            if c in failing:
                n_fail += 1
                inner = f'<failure type="{st[c]}" message={quoteattr(str(r["verdict"]))}>{text}</failure>'
            elif missing[c]:
                n_skip += 1
                inner = f"<skipped message={quoteattr(str(r['verdict']))}/>"
            elif flags[c]:
                inner = f"<system-out>flagged, not in --fail-on: {text}</system-out>"
            else:
                inner = f"<system-out>{text}</system-out>"
            cases.append(f'  <testcase classname="cflib.audit" name={quoteattr(str(c))} time="0">{inner}</testcase>')
        props = "".join(
            f"<property name={quoteattr(k)} value={quoteattr(_short(v))}/>"
            for k, v in self.provenance.items()
            if k in ("data_sha256", "model", "cflib_version", "seed", "n_rows")
        )
        n = len(self.rows)
        wall = self.timing.get("wall_seconds", 0)
        xml = (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="cflib audit" tests="{n}" failures="{n_fail}" errors="0" skipped="{n_skip}" time="{wall}">\n'
            f' <testsuite name="cflib audit" tests="{n}" failures="{n_fail}" errors="0" skipped="{n_skip}" time="{wall}" '
            f"timestamp={quoteattr(str(self.timing.get('started_utc', '')).rstrip('Z'))}>\n"
            f"  <properties>{props}</properties>\n" + "\n".join(cases) + "\n </testsuite>\n</testsuites>\n"
        )
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
        fig = ax.get_figure(root=True)
        assert fig is not None, "plot() draws on the axes of a figure"
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        png = base64.b64encode(buf.getvalue()).decode()
        flags, st = self.flagged(), self.status()
        rows_html = []
        for c, r in self.rows.iterrows():
            link = reference_link(str(r["reference"]))
            ref = html.escape(str(r["reference"]))
            ref = f'<a href="{html.escape(link)}">{ref}</a>' if link else ref
            cls = ' class="flag"' if flags[c] else ""
            cells = [
                html.escape(str(c)),
                html.escape(str(st[c])),
                format_number(_num(r["estimate"])),
                format_interval(_num(r["ci_low"]), _num(r["ci_high"])),
                _p_text(_num(r["pvalue"])),
                html.escape(str(r["verdict"])),
                html.escape(str(r["method"])),
                ref,
            ]
            rows_html.append(f"<tr{cls}>" + "".join(f"<td>{v}</td>" for v in cells) + "</tr>")
        checks = (
            '<table class="checks"><thead><tr><th>check</th><th>status</th><th>estimate</th>'
            f"<th>{1 - self.alpha:.0%} interval</th><th>p-value</th><th>verdict</th><th>method</th><th>reference</th>"
            "</tr></thead><tbody>" + "".join(rows_html) + "</tbody></table>"
        )
        groups = ""
        if self.groups is not None:
            head, body = _group_cells(self.groups, self.alpha)
            groups = (
                "<h2>Groups</h2><p>Rates per level of the protected attribute with "
                f"{1 - self.alpha:.0%} Wilson intervals; a rate whose denominator is empty is not estimable.</p>"
                '<table class="groups"><thead><tr>'
                + "".join(f"<th>{html.escape(h)}</th>" for h in head)
                + "</tr></thead><tbody>"
                + "".join("<tr>" + "".join(f"<td>{html.escape(str(v))}</td>" for v in b) + "</tr>" for b in body)
                + "</tbody></table>"
            )
        summary = "".join(
            f"<li>{html.escape(s[2:])}</li>" if s.startswith("- ") else f"<p>{html.escape(s)}</p>"
            for s in self.plain_summary().splitlines()
        )
        prov = "".join(
            f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_short(v))}</td></tr>"
            for k, v in {**self.provenance, **self.timing}.items()
        )
        page = f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cflib audit report</title>
<style>body{{font-family:sans-serif;max-width:64em;margin:2em auto;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:.25em .5em;text-align:left;font-size:.9em}}
th{{background:#f4f4f4}}.flag td{{color:#b00}}.summary{{background:#fafafa;border-left:4px solid #b00;padding:.5em 1em}}</style></head>
<body><h1>Audit report</h1>
<div class="summary">{summary}</div>
<h2>Checks</h2>
<p>Every check, its status against its tolerance (flagged: beyond it; clear: within it; inconclusive: neither;
not estimable), its estimate with a {1 - self.alpha:.0%} interval or its p-value at level {self.alpha},
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
        "| " + " | ".join(map(cell, row)) + " |" for row in body
    ]


def _group_cells(groups: pd.DataFrame, alpha: float) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the group table as text: each rate with its Wilson interval, or 'not estimable'."""
    from ..stats.rates import RATES

    head = ["group", "n"] + [f"{r.replace('_', ' ')} [{1 - alpha:.0%} CI]" for r in RATES] + ["note"]
    head += ["status"] if "status" in groups.columns else []
    body = []
    for g, row in groups.iterrows():
        cells = [str(g), str(int(row["n"]))]
        for r in RATES:
            v = _num(row[r])
            cells.append(
                "not estimable"
                if not np.isfinite(v)
                else f"{format_number(v)} {format_interval(_num(row[r + '_low']), _num(row[r + '_high']))}"
            )
        cells.append(str(row.get("note", "")))
        if "status" in groups.columns:
            cells.append(str(row["status"]))
        body.append(cells)
    return head, body


def _short(v: Any) -> str:
    return json.dumps(v, sort_keys=True, default=str) if isinstance(v, (dict, list)) else str(v)


def _atomic_write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path
