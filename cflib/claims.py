"""Record reproduced values and verdicts on the papers' claims.

A notebook calls :func:`record` for every number the text refers to and :func:`claim` for every
checkable claim of its paper. When the notebook is executed by :mod:`cflib.runner`, both are
written as JSON beside the executed notebook (the path comes from the ``CFLIB_CLAIMS_FILE``
environment variable the runner sets); run interactively, they are only shown. Values are also
*glued* (``myst_nb.glue``) so the book's text can cite them. :func:`gather` collects every
notebook's JSON into the book's reproduction report.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import verdicts as _verdicts

__all__ = [
    "VERDICTS",
    "KINDS",
    "changes_markdown",
    "PAPERS",
    "Claim",
    "record",
    "claim",
    "claims_table",
    "gather",
    "report_markdown",
    "reset",
    "require",
    "rows",
]

#: The verdicts a claim can get (:mod:`cflib.verdicts` explains each).
VERDICTS = _verdicts.VERDICTS

#: What a claim is: a reproduction of the paper; a sanity check that holds by construction (a model
#: that never reads the attribute is fair) or checks cflib itself; or the book's own finding, a
#: property the paper does not state (from the implementation notes or the book's own experiments).
#: Only reproductions count in the report's tallies of the papers' claims; the others are listed apart.
KINDS = ("reproduction", "sanity check", "book's own finding")
REPRODUCTION, SANITY, FINDING = KINDS

#: Verdict names used before the fixed vocabulary (read from old claims files and snapshots).
_RENAMED = {"inconclusive at this scale": _verdicts.UNDECIDED}

#: Chapter slug -> short reference of the paper it reproduces.
PAPERS = {
    "foundations": "Pearl's counterfactual axioms (foundations)",
    "axiomatic-soundness": "Monteiro et al. 2023, axiomatic soundness (003)",
    "counterfactual-benchmark": "Melistas et al., benchmarking counterfactual images (001)",
    "invariance-test": "Ma et al., counterfactual invariance in medical imaging (000)",
    "closeness-test": "Fu et al., CF-CLOT (002)",
    "parity-decomposition": "Plecko & Bareinboim, predictive vs statistical parity (004)",
    "auditing": "Auditing your own model (the one-call audit, checked against 004)",
}

_STATE: dict[str, Any] = {"values": {}, "claims": {}}


@dataclass(frozen=True)
class Claim:
    """One checked claim of a paper.

    Attributes
    ----------
    key : str
        Identifier, unique within a notebook (e.g. ``"C3"``).
    statement : str
        The paper's claim in words.
    paper : Any
        The paper's value or statement of the quantity (number or short text).
    ours : Any
        Our reproduced value.
    verdict : str
        One of :data:`VERDICTS`.
    evidence : str
        How the verdict was reached (test, interval, p-value, tolerance).
    notebook, scale : str
        Where and at which scale the claim was checked.
    quote : str
        The paper's own words the claim checks, verbatim.
    source : str
        Where they are: section, table, figure or equation.
    interval : dict or None
        The estimate the rule read: ``estimate``, ``low``, ``high`` and ``method``.
    rule : str
        The decision rule, written before running.
    kind : str
        One of :data:`KINDS`.
    note : str
        What size would decide an undecided claim, where a claim not checkable here is checked
        instead, or why the substitute data changes the answer.
    change : str
        Why this claim's criterion changed from the previous report, when it did for another
        reason than adopting the interval rule (shown on the changes page).
    """

    key: str
    statement: str
    paper: Any
    ours: Any
    verdict: str
    evidence: str
    notebook: str = field(default="")
    scale: str = field(default="")
    quote: str = field(default="")
    source: str = field(default="")
    interval: dict[str, Any] | None = field(default=None)
    rule: str = field(default="")
    kind: str = field(default="reproduction")
    note: str = field(default="")
    change: str = field(default="")


def _jsonable(value: Any) -> Any:
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_jsonable(v) for v in (value.tolist() if isinstance(value, np.ndarray) else value)]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)


def _write() -> None:
    path = os.environ.get("CFLIB_CLAIMS_FILE")
    if not path:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "notebook": os.environ.get("CFLIB_NOTEBOOK", ""),
        "scale": os.environ.get("CFLIB_SCALE", "interactive"),
        "values": _STATE["values"],
        "claims": list(_STATE["claims"].values()),
    }
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(payload, indent=1))
    os.replace(tmp, path)


def _glue(key: str, value: Any) -> None:
    try:
        from myst_nb import glue
    except ImportError:  # the book extra is not installed: nothing to glue into
        return
    glue(key, value, display=False)


def reset() -> None:
    """Forget everything recorded in this process (used by tests and at notebook start)."""
    _STATE["values"] = {}
    _STATE["claims"] = {}


def _check_key(key: str) -> None:
    if not isinstance(key, str) or not key or any(c.isspace() for c in key):
        raise ValueError(f"key must be a non-empty string without spaces, got {key!r}")


def record(key: str, value: Any, *, glue: bool = True) -> Any:
    """Record a reproduced value under ``key`` (and glue it for the book's text).

    Parameters
    ----------
    key : str
        Identifier without spaces, unique within the notebook.
    value : Any
        A number, string, list or dict of those (numpy scalars are converted).
    glue : bool
        Also ``myst_nb.glue`` the value so the text can show it with ``{glue:text}`key```.

    Returns
    -------
    Any
        ``value`` unchanged, so ``x = record("x", compute())`` reads naturally.
    """
    _check_key(key)
    _STATE["values"][key] = _jsonable(value)
    _write()
    if glue:
        _glue(key, value)
    return value


def _fmt(value: Any) -> str:
    if isinstance(value, (float, np.floating)):
        return f"{value:.4g}"
    return str(value)


_UNSET: Any = object()


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value.strip()


def claim(
    key: str,
    statement: str,
    *,
    paper: Any,
    ours: Any,
    evidence: str,
    holds: bool | None = _UNSET,
    verdict: str | None = None,
    decision: _verdicts.Decision | None = None,
    quote: str = "",
    source: str = "",
    rule: str = "",
    kind: str = "reproduction",
    note: str = "",
    change: str = "",
) -> Claim:
    """Record the verdict on one of the paper's claims and show it.

    The verdict comes from exactly one of ``decision`` (a rule of :mod:`cflib.verdicts` applied to
    an estimate and its interval: the preferred form), ``holds`` (a bare yes/no, for claims not yet
    given an interval) or ``verdict`` (the verdicts no rule gives: "not checkable here" and
    "differs with the substitute data", which need a ``note``).

    Parameters
    ----------
    key : str
        Identifier (the notes' claim number, e.g. ``"C4"``).
    statement : str
        What the paper claims, in our words.
    paper : Any
        The paper's value (or ``"qualitative"``).
    ours : Any
        Our value.
    evidence : str
        The data the verdict rests on (sizes, seeds, test). Must not be empty.
    holds : bool or None, optional
        ``True`` -> reproduced, ``False`` -> not reproduced, ``None`` -> undecided at this scale.
    verdict : str, optional
        One of :data:`VERDICTS`, given by hand.
    decision : cflib.verdicts.Decision, optional
        The rule's decision; its interval and rule are recorded with the claim.
    quote : str
        The paper's words, verbatim.
    source : str
        Section, table, figure or equation of the quote.
    rule : str
        The decision rule (taken from ``decision`` when given).
    kind : str
        One of :data:`KINDS`.
    note : str
        For an undecided claim, the size that would decide it; for "not checkable here", where the
        checkable analogue lives; for "differs with the substitute data", why.
    change : str
        Why the criterion changed from the previous report, other than adopting the interval rule.

    Returns
    -------
    Claim
        The stored claim (also displayed as a one-line verdict).
    """
    _check_key(key)
    if not isinstance(statement, str) or not statement.strip():
        raise ValueError(f"statement must say what the paper claims (a non-empty string), got {statement!r}")
    if not isinstance(evidence, str) or not evidence.strip():
        raise ValueError("evidence must say what the verdict rests on (a test, interval or tolerance)")
    quote, source, rule, note, change = (_text(v, n) for v, n in
                                         ((quote, "quote"), (source, "source"), (rule, "rule"), (note, "note"), (change, "change")))
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    given = [n for n, v in (("holds", holds is not _UNSET), ("verdict", verdict is not None), ("decision", decision is not None)) if v]
    if len(given) != 1:
        raise ValueError(f"give exactly one of holds, verdict or decision to decide claim {key}, got {given or 'none'}")
    interval = None
    if decision is not None:
        if not isinstance(decision, _verdicts.Decision):
            raise TypeError(f"decision must be a cflib.verdicts.Decision, got {type(decision).__name__}")
        verdict, rule = decision.verdict, rule or decision.rule
        if decision.interval is not None:
            iv = decision.interval
            interval = {"estimate": _jsonable(iv.estimate), "low": _jsonable(iv.low), "high": _jsonable(iv.high), "method": iv.method}
    elif holds is not _UNSET:
        if holds is None:
            verdict = _verdicts.UNDECIDED
        elif isinstance(holds, (bool, np.bool_)):
            verdict = _verdicts.REPRODUCED if bool(holds) else _verdicts.NOT_REPRODUCED
        else:
            raise TypeError(f"holds must be True, False or None, got {holds!r}")
    verdict = _RENAMED.get(verdict, verdict)
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    if verdict in (_verdicts.NOT_CHECKABLE, _verdicts.SUBSTITUTE) and not note:
        raise ValueError(f"a claim {verdict!r} needs a note: where its checkable analogue lives, or why the substitute data differs")
    c = Claim(
        key=key,
        statement=statement,
        paper=_jsonable(paper),
        ours=_jsonable(ours),
        verdict=verdict,
        evidence=evidence,
        notebook=os.environ.get("CFLIB_NOTEBOOK", ""),
        scale=os.environ.get("CFLIB_SCALE", "interactive"),
        quote=quote,
        source=source,
        interval=interval,
        rule=rule,
        kind=kind,
        note=note,
        change=change,
    )
    _STATE["claims"][key] = asdict(c)
    _write()
    _glue(f"claim-{key}", verdict)
    try:
        from IPython.display import Markdown, display

        mark = {"reproduced": "✅", "not reproduced": "❌"}.get(verdict, "⚠️")
        label = f"{key} ({kind}): {verdict}" if kind != "reproduction" else f"{key}: {verdict}"
        said = f" The paper ({source or 'no source'}): “{quote}”" if quote else ""
        est = f" Estimate: {_interval_text(interval)}." if interval else ""
        display(Markdown(f"{mark} **{label}.** {statement}{said} Paper: {_fmt(paper)}; ours: {_fmt(ours)}.{est} "
                         f"*{rule + '. ' if rule else ''}{evidence}*{' ' + note if note else ''}"))
    except ImportError:  # pragma: no cover - IPython ships with the notebook stack
        pass
    return c


def _interval_text(interval: Any) -> str:
    if not isinstance(interval, dict):
        return ""
    est, low, high = (interval.get(k) for k in ("estimate", "low", "high"))
    if not all(isinstance(v, (int, float)) for v in (est, low, high)):
        return f"{_fmt(est)} (interval undefined: {interval.get('method', '')})"
    return f"{_fmt(est)} [{_fmt(low)}, {_fmt(high)}] ({interval.get('method', '')})"


def claims_table() -> pd.DataFrame:
    """The claims recorded so far in this process, one row each.

    Returns
    -------
    pandas.DataFrame
        Columns ``key, statement, paper, ours, verdict, evidence, quote, source, interval, rule, kind, note``.
    """
    cols = ["key", "statement", "paper", "ours", "verdict", "evidence", "quote", "source", "interval", "rule", "kind", "note"]
    return pd.DataFrame([{k: c.get(k) for k in cols} for c in _STATE["claims"].values()], columns=cols)


#: Claim fields added with the fixed verdict vocabulary, and their values in older claims files.
_OPTIONAL: dict[str, Any] = {"quote": "", "source": "", "interval": None, "rule": "", "kind": "reproduction", "note": "", "change": ""}


def gather(directory: str | os.PathLike, notebooks: Iterable[str] | None = None) -> pd.DataFrame:
    """Collect the claims of every executed notebook under ``directory``.

    Parameters
    ----------
    directory : path-like
        Folder the runner wrote executed notebooks and ``*.claims.json`` files into.
    notebooks : iterable of str, optional
        Restrict to these notebook paths (relative to ``notebooks/``), in this order.

    Returns
    -------
    pandas.DataFrame
        One row per claim with columns ``chapter, paper_ref, notebook, key, statement, paper,
        ours, verdict, evidence, scale, quote, source, interval, rule, kind, note, change`` (claims
        files written before the last five existed get empty values, and the old verdict name
        "inconclusive at this scale" reads as "undecided at this scale").
    """
    directory = Path(directory)
    if not directory.exists():  # a mistyped folder must not read as "no claims yet"
        raise ValueError(f"directory {directory} does not exist; pass the folder the runner wrote executed notebooks into "
                         "(run `cflib run` first)")
    if not directory.is_dir():
        raise ValueError(f"directory {directory} is a file, expected the folder of executed notebooks")
    if isinstance(notebooks, str):
        raise TypeError(f"notebooks must be a list of notebook paths, got the string {notebooks!r}; use [{notebooks!r}]")
    files = sorted(directory.rglob("*.claims.json"))
    rows = []
    for f in files:
        try:
            data = json.loads(f.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{f}: not a claims file (invalid JSON: {exc})") from None
        if not isinstance(data, dict):
            raise ValueError(f"{f}: not a claims file (expected a JSON object, got {type(data).__name__})")
        nb = data.get("notebook") or str(f.relative_to(directory)).replace(".claims.json", ".ipynb")
        chapter = nb.split("/")[0]
        for c in data.get("claims", []):
            rows.append(
                {
                    "chapter": chapter,
                    "paper_ref": PAPERS.get(chapter, chapter),
                    "notebook": nb,
                    "key": c["key"],
                    "statement": c["statement"],
                    "paper": c["paper"],
                    "ours": c["ours"],
                    "verdict": _RENAMED.get(c["verdict"], c["verdict"]),
                    "evidence": c["evidence"],
                    "scale": data.get("scale", ""),
                    **{k: c.get(k, d) for k, d in _OPTIONAL.items()},
                }
            )
    cols = ["chapter", "paper_ref", "notebook", "key", "statement", "paper", "ours", "verdict", "evidence", "scale", *_OPTIONAL]
    df = pd.DataFrame(rows, columns=cols)
    if notebooks is not None:
        order = {nb: i for i, nb in enumerate(notebooks)}
        df = df[df["notebook"].isin(order)].copy()
        df["_o"] = df["notebook"].map(order)
        df = df.sort_values(["_o"], kind="stable").drop(columns="_o")
    return df.reset_index(drop=True)


def _cell(value: Any) -> str:
    text = _fmt(value) if not isinstance(value, str) else value
    return text.replace("|", "\\|").replace("\n", " ")


def _check_report_frame(df: Any, name: str = "df") -> None:
    need = ["chapter", "notebook", "key", "statement", "paper", "ours", "verdict", "evidence", "scale"]
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"{name} must be the DataFrame returned by gather(), got {type(df).__name__}")
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"{name} lacks column(s) {missing}; pass the DataFrame returned by gather()")


def _with_optional(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for k, d in _OPTIONAL.items():
        if k not in df.columns:
            df[k] = [d] * len(df)
    df["kind"] = df["kind"].fillna("reproduction")
    for k in ("quote", "source", "rule", "note", "change"):
        df[k] = df[k].fillna("")
    return df


def _words(r: Any) -> str:
    if not r.quote:
        return "*(not quoted yet)*"
    return f"“{_cell(r.quote)}”" + (f" ({_cell(r.source)})" if r.source else "")


def report_markdown(df: pd.DataFrame) -> str:
    """Render gathered claims as the book's reproduction-report page (MyST markdown).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gather`.

    Returns
    -------
    str
        The page's text: counts by verdict (reproductions and sanity checks apart), how many claims
        still lack the paper's words, an interval or a rule, the evidence of every claim that is not
        reproduced in one line each, then one table per paper.
    """
    _check_report_frame(df)
    lines = [
        "# Reproduction report",
        "",
        "Every checkable claim of the five papers that the book's notebooks test: the paper's words, the",
        "quantity we computed with its interval, the rule that decides, and the verdict. The rule is fixed",
        "before running: **reproduced** when the interval lies on the paper's side of the rule's boundary,",
        "**not reproduced** when it lies on the other side, **undecided at this scale** when it straddles it",
        "(the note says what size would decide). Two verdicts are given by hand: **not checkable here**",
        "(the note says where the checkable analogue lives) and **differs with the substitute data** (the",
        "note says why). *Sanity checks* hold by construction or check cflib itself; they are listed but not",
        "counted as reproductions. The page is generated from the executed notebooks each time the book is",
        "built; the [changes page](reproduction-changes.md) lists every criterion and verdict that changed.",
        "",
    ]
    if df.empty:
        lines.append("No notebook has recorded a claim yet.")
        return "\n".join(lines) + "\n"
    df = _with_optional(df)
    lines += ["| verdict | reproductions | sanity checks |", "|---|---|---|"]
    for v in VERDICTS:
        n_rep = int(((df["verdict"] == v) & (df["kind"] == "reproduction")).sum())
        n_san = int(((df["verdict"] == v) & (df["kind"] != "reproduction")).sum())
        lines.append(f"| {v} | {n_rep} | {n_san} |")
    reps = df["kind"] == "reproduction"
    lines.append(f"| **total** | {int(reps.sum())} | {int((~reps).sum())} |")
    lines.append("")
    gaps = {
        "the paper's words": int((df["quote"] == "").sum()),
        "an estimate with an interval": int((df["interval"].isna() & (df["verdict"] != _verdicts.NOT_CHECKABLE)).sum()),
        "a decision rule": int((df["rule"] == "").sum()),
    }
    if any(gaps.values()):
        lines.append("Claims still lacking " + "; ".join(f"{what}: {n}" for what, n in gaps.items() if n) + ".")
        lines.append("")
    failing = df[(df["verdict"] == _verdicts.NOT_REPRODUCED) & reps]
    if not failing.empty:
        lines += ["## Not reproduced, with the evidence", ""]
        for r in failing.itertuples():
            nb = r.notebook.rsplit("/", 1)[-1].removesuffix(".ipynb")
            iv = f" Estimate {_interval_text(r.interval)}." if isinstance(r.interval, dict) else ""
            lines.append(f"- **{_cell(r.chapter)}/{_cell(nb)} {_cell(r.key)}**: {_cell(r.statement)}{_cell(iv)} *{_cell(r.evidence)}*")
        lines.append("")
    for chapter, sub in df.groupby("chapter", sort=False):
        lines += [f"## {PAPERS.get(chapter, chapter)}", ""]
        lines.append("| notebook | claim | the paper's words | statement | paper | ours | estimate [interval] | rule | verdict | evidence | scale |")
        lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
        for r in sub.itertuples():
            nb = r.notebook.rsplit("/", 1)[-1].removesuffix(".ipynb")
            verdict = f"**{r.verdict}**" + (" (sanity check)" if r.kind != "reproduction" else "")
            note = f" {r.note}" if r.note else ""
            lines.append(
                f"| {_cell(nb)} | {_cell(r.key)} | {_words(r)} | {_cell(r.statement)} | {_cell(r.paper)} | {_cell(r.ours)} "
                f"| {_cell(_interval_text(r.interval))} | {_cell(r.rule)} | {verdict} | {_cell(r.evidence + note)} | {_cell(r.scale)} |"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def changes_markdown(df: pd.DataFrame, before: pd.DataFrame) -> str:
    """Render the changes page: every claim whose criterion or verdict differs from an earlier report.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gather` for this build.
    before : pandas.DataFrame
        The earlier report: columns ``notebook, key, statement, verdict, evidence`` (its evidence
        column stands for its rule, which earlier reports did not record apart).

    Returns
    -------
    str
        The page's text: one entry per changed claim with the paper's words, the old and new rule,
        the old and new verdict and why; then the claims that are new or gone.
    """
    _check_report_frame(df)
    if not isinstance(before, pd.DataFrame):
        raise TypeError(f"before must be a DataFrame of the earlier report, got {type(before).__name__}")
    missing = [c for c in ("notebook", "key", "statement", "verdict", "evidence") if c not in before.columns]
    if missing:
        raise ValueError(f"before lacks column(s) {missing}; it needs notebook, key, statement, verdict and evidence")
    df = _with_optional(df)
    old = before.assign(verdict=before["verdict"].map(lambda v: _RENAMED.get(v, v))).set_index(["notebook", "key"])
    lines = [
        "# Changes to the reproduction report",
        "",
        "Every claim whose criterion or verdict changed since the earlier report, with the paper's words, the",
        "old and new rule, the old and new verdict, and why. The earlier report recorded no rule apart from its",
        "evidence, so its evidence stands for its rule. A criterion changes only to match the paper's words or",
        "to decide on an interval instead of a point; no threshold is tuned on the book's own results. The",
        "earlier verdict \"inconclusive at this scale\" is now called \"undecided at this scale\".",
        "",
    ]
    now = set(zip(df["notebook"], df["key"], strict=True))
    gone = [k for k in old.index if k not in now]
    changed, new = [], []
    for r in df.itertuples():
        if (r.notebook, r.key) not in old.index:
            new.append(r)
            continue
        o = old.loc[(r.notebook, r.key)]
        rule_changed = bool(r.rule) or bool(r.change)
        if rule_changed or o["verdict"] != r.verdict or r.kind != "reproduction":
            changed.append((r, o))
    lines.append(f"{len(changed)} claims changed, {len(new)} are new, {len(gone)} are gone.")
    lines.append("")
    for r, o in changed:
        nb = r.notebook.removesuffix(".ipynb")
        why = []
        if r.change:
            why.append(r.change)
        if r.rule and not r.change:
            why.append("the verdict now rests on the estimate's interval and a rule written down first")
        if r.kind != "reproduction":
            why.append("it holds by construction or checks cflib itself, so it is a sanity check, not a reproduction")
        if o["verdict"] != r.verdict and not r.change:
            why.append("the interval decides it" if r.rule else "the estimate changed")
        lines += [
            f"## {nb} {r.key}",
            "",
            f"- The paper's words: {_words(r)}",
            f"- Old rule: {_cell(o['evidence'])}",
            f"- New rule: {_cell(r.rule) if r.rule else '(unchanged)'}",
            f"- Verdict: {o['verdict']} \u2192 **{r.verdict}**" + (f" ({r.kind})" if r.kind != "reproduction" else ""),
            f"- Why: {'; '.join(why) or 'unchanged'}.",
            "",
        ]
    if new:
        lines += ["## New claims", ""]
        for r in new:
            lines.append(f"- {r.notebook.removesuffix('.ipynb')} {r.key}: **{r.verdict}**. {_cell(r.statement)}")
        lines.append("")
    if gone:
        lines += ["## Claims no longer checked", ""]
        for nb, key in gone:
            lines.append(f"- {nb.removesuffix('.ipynb')} {key}: was **{old.loc[(nb, key), 'verdict']}**. {_cell(old.loc[(nb, key), 'statement'])}")
        lines.append("")
    return "\n".join(lines) + "\n"


def require(results: Any, keys: Iterable[str], where: str = "the claims") -> list[Any]:
    """Check that a chapter's ``claims_<nn>`` function got every result it needs, and return them.

    Parameters
    ----------
    results : mapping
        What the notebook computed, by name.
    keys : iterable of str
        The names the function reads.
    where : str
        The function's name, for the message.

    Returns
    -------
    list
        ``[results[k] for k in keys]``.

    Raises
    ------
    TypeError
        ``results`` is not a mapping.
    ValueError
        A key is missing (all missing keys are named).
    """
    from collections.abc import Mapping

    if not isinstance(results, Mapping):
        raise TypeError(f"results must be a mapping (a dict of what the notebook computed), got {type(results).__name__}")
    keys = list(keys)
    missing = [k for k in keys if k not in results]
    if missing:
        raise ValueError(f"results is missing {missing}, needed by {where}: pass every value the claims use in the dict")
    return [results[k] for k in keys]


def rows(keys: Iterable[str]) -> pd.DataFrame:
    """The rows of :func:`claims_table` for ``keys``, in that order (a claims function's return value).

    Parameters
    ----------
    keys : iterable of str

    Returns
    -------
    pandas.DataFrame
    """
    keys = list(keys)
    table = claims_table()
    return table.set_index("key").loc[[k for k in keys if k in set(table["key"])]].reset_index()
