"""Record reproduced values and verdicts on the papers' claims.

A notebook calls :func:`record` for every number the text refers to and :func:`claim` for every
checkable claim of its paper. When the notebook is executed by :mod:`cflib.runner`, both are
written as JSON beside the executed notebook (the path comes from the ``CFLIB_CLAIMS_FILE``
environment variable the runner sets); run interactively, they are only shown. Values are also
*glued* (``myst_nb.glue``) so the book's text can cite them. :func:`gather` collects every
notebook's JSON into the book's reproduction report.
"""

from __future__ import annotations

import html
import importlib.util
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
from .formatting import claim_anchor, first_sentence, reader_number, reader_numbers, rule_criterion, rule_position
from .formatting import plain_value as _plain_value
from .formatting import reader_html as _html
from .formatting import reader_markdown as _reader_markdown
from .formatting import reader_plain as _reader_plain
from .formatting import reader_text as _reader_text
from .formatting import short_number as _num

__all__ = [
    "VERDICTS",
    "KINDS",
    "changes_markdown",
    "claim_link",
    "PAPERS",
    "PAPERS_SHORT",
    "Claim",
    "ClaimCard",
    "ClaimRows",
    "record",
    "claim",
    "claims_table",
    "gather",
    "report_markdown",
    "tally",
    "tally_markdown",
    "reset",
    "reader_number",
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
    "axiomatic-soundness": "Monteiro et al. 2023, axiomatic soundness",
    "counterfactual-benchmark": "Melistas et al. 2024, benchmarking counterfactual images",
    "invariance-test": "Ma et al. 2024, counterfactual invariance in medical imaging",
    "closeness-test": "Fu et al. 2025, CF-CLOT",
    "parity-decomposition": "Plecko & Bareinboim 2023, predictive vs statistical parity",
    "auditing": "Auditing your own model (the one-call audit, checked against Plecko & Bareinboim)",
}

#: Chapter slug -> the paper's short name, for the tally tables (the report's sections use :data:`PAPERS`).
PAPERS_SHORT = {
    "foundations": "Pearl (foundations)",
    "axiomatic-soundness": "Monteiro et al. 2023",
    "counterfactual-benchmark": "Melistas et al. 2024",
    "invariance-test": "Ma et al. 2024",
    "closeness-test": "Fu et al. 2025",
    "parity-decomposition": "Plecko & Bareinboim 2023",
    "auditing": "The one-call audit",
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
    about : str
        The chapter slug of the paper the claim is about, when that is not the notebook's chapter (a
        calibration row of the foundations part checking CF-CLOT's level is about ``"closeness-test"``);
        empty otherwise. The tallies and the report count the claim under that paper.
    needs : dict or None
        For an undecided claim, the size that would decide it as data (:func:`cflib.verdicts.check_needs`): ``size``,
        ``unit``, ``now``, ``parameter`` (the notebook parameter ``notebooks/params/full.yaml`` sets),
        ``seconds_per_unit`` (measured by this run, on its device) and ``gpu`` (whether that step runs on a
        GPU); the report's paper-scale plan is computed from it.
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
    kind: str = field(kw_only=True)  # every claim states its kind: no default (issue 38)
    note: str = field(default="")
    change: str = field(default="")
    about: str = field(default="")
    needs: dict[str, Any] | None = field(default=None)


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
    where = os.environ.get("CFLIB_CLAIMS_FILE")
    if not where:
        return
    path = Path(where)
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


#: The mime-type prefix of a value glued without being displayed: the format myst-nb's ``{glue}`` roles read.
GLUE_PREFIX = "application/papermill.record/"


def _glue(key: str, value: Any) -> None:
    """Glue ``value`` as ``myst_nb.glue(key, value, display=False)`` does, without importing ``myst_nb.ext.glue``.

    That module loads nbformat and jsonschema (about 2 s in every kernel, for the book build's 43 kernels and the
    tests' as many) only to type its readers; the output written here is the same display data (checked against
    myst-nb in the tests). Without the book extra (no myst-nb) nothing is glued, as before.
    """
    if importlib.util.find_spec("myst_nb") is None:  # the book extra is not installed: nothing to glue into
        return
    from IPython.core.formatters import format_display_data
    from IPython.display import display

    bundle, metadata = format_display_data(value)
    metadata["scrapbook"] = {"name": key, "mime_prefix": GLUE_PREFIX}
    display({GLUE_PREFIX + k: v for k, v in bundle.items()}, raw=True, metadata=metadata)


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
    """A value for a reader: numbers through :func:`_num`, dicts and lists through :func:`_plain_value`."""
    if isinstance(value, (dict, list, tuple)):
        return _plain_value(value)
    if isinstance(value, (float, np.floating, int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return _num(value)
    return str(value)


_UNSET: Any = object()


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a string, got {type(value).__name__}")
    return value.strip()


def _decided(
    key: str, holds: Any, verdict: str | None, decision: Any, rule: str
) -> tuple[str, str, dict[str, Any] | None]:
    """The verdict, rule and interval of :func:`claim` from exactly one of ``holds``, ``verdict`` or ``decision``."""
    given = [
        n
        for n, v in (
            ("holds", holds is not _UNSET),
            ("verdict", verdict is not None),
            ("decision", decision is not None),
        )
        if v
    ]
    if len(given) != 1:
        raise ValueError(f"give exactly one of holds, verdict or decision to decide claim {key}, got {given or 'none'}")
    interval = None
    if decision is not None:
        if not isinstance(decision, _verdicts.Decision):
            raise TypeError(f"decision must be a cflib.verdicts.Decision, got {type(decision).__name__}")
        verdict, rule = decision.verdict, rule or decision.rule
        if decision.interval is not None:
            iv = decision.interval
            interval = {
                "estimate": _jsonable(iv.estimate),
                "low": _jsonable(iv.low),
                "high": _jsonable(iv.high),
                "method": iv.method,
            }
    elif holds is not _UNSET:
        if holds is None:
            verdict = _verdicts.UNDECIDED
        elif isinstance(holds, (bool, np.bool_)):
            verdict = _verdicts.REPRODUCED if bool(holds) else _verdicts.NOT_REPRODUCED
        else:
            raise TypeError(f"holds must be True, False or None, got {holds!r}")
    assert verdict is not None  # exactly one of holds, verdict or decision set it (checked above)
    return verdict, rule, interval


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
    kind: str,
    note: str = "",
    change: str = "",
    about: str = "",
    needs: dict[str, Any] | None = None,
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
        One of :data:`KINDS`, always given: ``"reproduction"`` (the paper's claim in the paper's own form), ``"book's
        own finding"`` (the book's generator, metric, bar or correction), ``"sanity check"`` (true by construction).
    note : str
        Undecided: the size that would decide it; "not checkable here": where the checkable analogue lives; "differs
        with the substitute data": why.
    change : str
        Why the criterion changed from the previous report, other than adopting the interval rule.
    about : str
        The chapter slug (a key of :data:`PAPERS`) of the paper the claim is about, when it is not the
        notebook's own chapter's paper; the tallies count the claim there.
    needs : dict, optional
        An undecided claim's size as data (:func:`cflib.verdicts.check_needs`); dropped once decided.

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
    quote, source, rule, note, change = (
        _text(v, n)
        for v, n in ((quote, "quote"), (source, "source"), (rule, "rule"), (note, "note"), (change, "change"))
    )
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    if about and about not in PAPERS:
        raise ValueError(f"about must be empty or a chapter slug of PAPERS {sorted(PAPERS)}, got {about!r}")
    verdict, rule, interval = _decided(key, holds, verdict, decision, rule)
    verdict = _RENAMED.get(verdict, verdict)
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    if verdict in (_verdicts.NOT_CHECKABLE, _verdicts.SUBSTITUTE) and not note:
        raise ValueError(
            f"a claim {verdict!r} needs a note: where its checkable analogue lives, or why the substitute data differs"
        )
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
        about=about,
        needs=_verdicts.check_needs(needs) if needs is not None and verdict == _verdicts.UNDECIDED else None,
    )
    _STATE["claims"][key] = asdict(c)
    _write()
    _glue(f"claim-{key}", verdict)
    try:
        from IPython.display import display

        display(ClaimCard(asdict(c)))
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
        Columns ``key, statement, paper, ours, verdict, evidence, quote, source, interval, rule, kind, note, change``.
    """
    cols = [
        "key",
        "statement",
        "paper",
        "ours",
        "verdict",
        "evidence",
        "quote",
        "source",
        "interval",
        "rule",
        "kind",
        "note",
        "change",
    ]
    return pd.DataFrame([{k: c.get(k) for k in cols} for c in _STATE["claims"].values()], columns=cols)


#: Claim fields added with the fixed verdict vocabulary, and their values in older claims files.
_OPTIONAL: dict[str, Any] = {
    "quote": "",
    "source": "",
    "interval": None,
    "rule": "",
    "kind": "reproduction",
    "note": "",
    "change": "",
    "about": "",
    "needs": None,
}


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
        ours, verdict, evidence, scale, quote, source, interval, rule, kind, note, change, about`` (claims
        files written before the last six existed get empty values, and the old verdict name
        "inconclusive at this scale" reads as "undecided at this scale").
    """
    directory = Path(directory)
    if not directory.exists():  # a mistyped folder must not read as "no claims yet"
        raise ValueError(
            f"directory {directory} does not exist; pass the folder the runner wrote executed notebooks into "
            "(run `cflib run` first)"
        )
    if not directory.is_dir():
        raise ValueError(f"directory {directory} is a file, expected the folder of executed notebooks")
    if isinstance(notebooks, str):
        raise TypeError(
            f"notebooks must be a list of notebook paths, got the string {notebooks!r}; use [{notebooks!r}]"
        )
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
                    "paper_ref": PAPERS.get(c.get("about") or chapter, chapter),
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
    cols = [
        "chapter",
        "paper_ref",
        "notebook",
        "key",
        "statement",
        "paper",
        "ours",
        "verdict",
        "evidence",
        "scale",
        *_OPTIONAL,
    ]
    df = pd.DataFrame(rows, columns=cols)
    if notebooks is not None:
        order = {nb: i for i, nb in enumerate(notebooks)}
        df = df[df["notebook"].isin(order)].copy()
        df["_o"] = df["notebook"].map(order)
        df = df.sort_values(["_o"], kind="stable").drop(columns="_o")
    return df.reset_index(drop=True)


def _cell(value: Any) -> str:
    text = _fmt(value) if not isinstance(value, str) else _reader_markdown(value)
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


#: Short labels of the verdicts, for the tally tables.
_SHORT = {
    _verdicts.REPRODUCED: "reproduced",
    _verdicts.NOT_REPRODUCED: "not reproduced",
    _verdicts.UNDECIDED: "undecided",
    _verdicts.NOT_CHECKABLE: "not checkable",
    _verdicts.SUBSTITUTE: "differs (substitute)",
}
_BADGE = {
    _verdicts.REPRODUCED: "✅",
    _verdicts.NOT_REPRODUCED: "❌",
    _verdicts.UNDECIDED: "⚠️",
    _verdicts.NOT_CHECKABLE: "➖",
    _verdicts.SUBSTITUTE: "🔁",
}


def _short_interval(interval: Any) -> str:
    if not isinstance(interval, dict):
        return ""
    est, low, high = (interval.get(k) for k in ("estimate", "low", "high"))
    if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (est, low, high)):
        return f"{reader_number(est)} (no interval)"
    return f"{reader_number(est)} [{reader_number(low)}, {reader_number(high)}]"


def _unit(interval: Any) -> str:
    if not isinstance(interval, dict):
        return ""
    method = str(interval.get("method", ""))
    found = [u for u in ("training seed", "test image", "replication", "seed", "unit") if u in method]
    if not found:
        return ""
    return " on one training seed" if "1 training seed" in method else f" over {found[0]}s"


def _why(r: Any, *, with_values: bool) -> str:
    """Why a claim got its verdict, in one line: the rule's threshold and where the interval lies against it
    (with the paper's and the book's values when ``with_values``), or the note of a verdict given by hand."""
    note = first_sentence(r.note) if r.note else ""
    if r.verdict in (_verdicts.NOT_CHECKABLE, _verdicts.SUBSTITUTE):
        head = note or first_sentence(r.evidence)
    else:
        position = rule_position(r.rule, r.verdict) if isinstance(r.interval, dict) else ""
        head = position or (f"rule: {first_sentence(r.rule)}" if r.rule else first_sentence(r.evidence))
        if r.verdict == _verdicts.UNDECIDED and note:  # "At the observed rate, ..." continues the line in lower case
            head = f"{head}; {note[0].lower() + note[1:] if note[1:2].islower() else note}"
    if with_values:
        iv = _short_interval(r.interval)
        book = f"book {iv}{_unit(r.interval)}" if iv else f"book {_short_value(r.ours)}"
        head = f"paper {_short_value(r.paper)}; {book}; {head}"
    return _cell(reader_numbers(head))


def _short_value(value: Any, most: int = 4) -> str:
    """A claim's value for a table cell: whole, or for a dict or list of more than ``most`` entries their number
    (the card lists them)."""
    if isinstance(value, (dict, list, tuple)) and len(value) > most:
        return f"{len(value)} values (listed in the claim's card)"
    return reader_numbers(_fmt(value))


def claim_link(notebook: str, key: str | None = None, base: str = "../notebooks/") -> str:
    """A raw HTML link to a notebook's page, at a claim's card when ``key`` is given (MyST's ``{doc}`` role
    cannot carry an anchor that only the notebook's output defines).

    Parameters
    ----------
    notebook : str
        Notebook path relative to ``notebooks/``.
    key : str, optional
        The claim's key.
    base : str
        Relative path from the linking page to the notebooks' pages.

    Returns
    -------
    str
    """
    name = notebook.removesuffix(".ipynb")
    label = name.rsplit("/", 1)[-1] + (f" {key}" if key else "")
    anchor = f"#{claim_anchor(key)}" if key else ""
    return f'<a href="{base}{name}.html{anchor}">{html.escape(label)}</a>'


_link = claim_link


def _paper_of(df: pd.DataFrame) -> pd.Series:
    """The chapter slug of the paper each claim is about: its ``about`` where given, else its chapter."""
    about = df["about"] if "about" in df.columns else pd.Series([""] * len(df), index=df.index)
    return about.fillna("").where(about.fillna("") != "", df["chapter"])


def verdict_table_markdown(df: pd.DataFrame) -> str:
    """The verdicts of one page's claims as a MyST table: claim (linked to its card), paper, book [interval],
    verdict, why (the rule's threshold and where the interval lies against it).

    Parameters
    ----------
    df : pandas.DataFrame
        The rows of :func:`gather` for one notebook.

    Returns
    -------
    str
        The table, or an empty string when ``df`` has no claim.
    """
    _check_report_frame(df)
    if df.empty:
        return ""
    df = _with_optional(df)
    lines = ["| claim | paper | book [interval] | verdict | why |", "|---|---|---|---|---|"]
    for r in df.itertuples():
        iv = _short_interval(r.interval)
        book = (iv + _unit(r.interval)) if iv else _short_value(r.ours)
        kind = "" if r.kind == REPRODUCTION else f" ({r.kind})"
        lines.append(
            f'| <a href="#{claim_anchor(r.key)}">{html.escape(str(r.key))}</a> {_cell(first_sentence(reader_numbers(r.statement)))} '
            f"| {_cell(_short_value(r.paper))} | {_cell(book)} | {_BADGE.get(r.verdict, '')} {r.verdict}{kind} "
            f"| {_why(r, with_values=False)} |"
        )
    return "\n".join(lines) + "\n"


def _by_paper(df: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The claims grouped by the paper they are about, in the order of :data:`PAPERS` (others after)."""
    paper = _paper_of(df)
    order = [p for p in PAPERS if (paper == p).any()] + [p for p in dict.fromkeys(paper) if p not in PAPERS]
    return [(p, df[paper == p]) for p in order]


def tally(df: pd.DataFrame) -> pd.DataFrame:
    """Where each paper stands: its claims counted by verdict, with the book's own findings and sanity checks apart.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gather`.

    Returns
    -------
    pandas.DataFrame
        One row per paper (indexed by the paper's reference, in the order of :data:`PAPERS`) and an ``all
        papers`` row; columns the verdicts of the papers' claims (kind ``reproduction``), ``claims`` (their
        total), ``book's own findings`` and ``sanity checks``. A claim counts under the paper it is about
        (its ``about``, else its notebook's chapter).
    """
    _check_report_frame(df)
    df = _with_optional(df)
    rows = {}
    for chapter, sub in [*_by_paper(df), ("all papers", df)]:
        reps = sub[sub["kind"] == REPRODUCTION]
        row = {_SHORT[v]: int((reps["verdict"] == v).sum()) for v in VERDICTS}
        row.update(
            {
                "claims": len(reps),
                "book's own findings": int((sub["kind"] == FINDING).sum()),
                "sanity checks": int((sub["kind"] == SANITY).sum()),
            }
        )
        rows[PAPERS.get(chapter, chapter) if chapter != "all papers" else chapter] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def tally_markdown(df: pd.DataFrame) -> str:
    """The tally of :func:`tally` as a markdown table (the report's first table, and the landing page's).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gather`.

    Returns
    -------
    str
    """
    t = tally(df)
    cols = list(t.columns)
    heads = {
        "not reproduced": "not",
        "not checkable": "not checkable",
        "differs (substitute)": "substitute",
        "claims": "total",
        "book's own findings": "own findings",
        "sanity checks": "sanity",
    }
    short = {PAPERS.get(k, k): v for k, v in PAPERS_SHORT.items()}
    lines = ["| paper | " + " | ".join(heads.get(c, c) for c in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, row in t.iterrows():
        label = "**all papers**" if name == "all papers" else short.get(name, name)
        lines.append(f"| {label} | " + " | ".join(str(int(row[c])) for c in cols) + " |")
    lines += [
        "",
        "*not*: not reproduced; *substitute*: differs with the substitute data; *total*: the papers' claims; "
        "*own findings* and *sanity* checks are not counted in it.",
    ]
    return "\n".join(lines) + "\n"


def report_markdown(df: pd.DataFrame) -> str:
    """Render gathered claims as the book's reproduction-report page (MyST markdown).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gather`.

    Returns
    -------
    str
        The page's text: the tally per paper (:func:`tally`), the claims not reproduced and those
        undecided, grouped by the paper they are about with links to each claim's card, then per paper one
        table of claim | verdict | why (the paper's value, the book's interval and the rule's threshold) |
        notebook, with the paper's words, rule, interval and evidence of every claim in a dropdown, and the
        book's own findings and sanity checks apart.
    """
    _check_report_frame(df)
    lines = [
        "# Reproduction report",
        "",
        "Every checkable claim of the five papers that the book's notebooks test. Each is decided by a rule fixed",
        "before running, on an estimate with its interval: **reproduced** when the interval lies on the paper's",
        "side of the rule's boundary, **not reproduced** when it lies on the other side, **undecided** when it",
        "straddles it (the reason says what size would decide). **Not checkable** (no size can decide it here)",
        "and **differs (substitute)** (the substitute data cannot answer it) are given by hand, with the reason.",
        "A comparison of trained models takes training seeds as its units. The *book's own findings* (properties",
        "the papers do not state) and *sanity checks* (true by construction, or checks of cflib) are listed apart",
        "and not counted as the papers' claims. The page is generated from the executed notebooks at every",
        "build; the [changes page](reproduction-changes.md) lists what moved and why.",
        "",
    ]
    if df.empty:
        lines.append("No notebook has recorded a claim yet.")
        return "\n".join(lines) + "\n"
    df = _with_optional(df)
    lines += ["## Where each paper stands", "", tally_markdown(df), ""]
    gaps = {
        "the paper's words": int((df["quote"] == "").sum()),
        "an estimate with an interval": int((df["interval"].isna() & (df["verdict"] != _verdicts.NOT_CHECKABLE)).sum()),
        "a decision rule": int((df["rule"] == "").sum()),
    }
    if any(gaps.values()):
        lines.append("Claims still lacking " + "; ".join(f"{what}: {n}" for what, n in gaps.items() if n) + ".")
        lines.append("")
    reps = df["kind"] == REPRODUCTION
    for verdict, title in (
        (_verdicts.NOT_REPRODUCED, "Not reproduced"),
        (_verdicts.UNDECIDED, "Undecided, and what would decide it"),
    ):
        sub = df[(df["verdict"] == verdict) & reps]
        if sub.empty:
            continue
        lines += [f"## {title}", ""]
        for chapter, group in _by_paper(sub):
            lines += [f"**{PAPERS.get(chapter, chapter)}**", ""]
            for r in group.itertuples():
                lines.append(
                    f"- {_link(r.notebook, r.key)}: {_cell(first_sentence(reader_numbers(r.statement)))} "
                    f"({_why(r, with_values=True)})"
                )
            lines.append("")
    for chapter, sub in _by_paper(df):
        lines += [f"## {PAPERS.get(chapter, chapter)}", ""]
        for kinds, caption in (
            ((REPRODUCTION,), ""),
            ((FINDING, SANITY), "The book's own findings and sanity checks (not counted)"),
        ):
            part = sub[sub["kind"].isin(kinds)]
            if part.empty:
                continue
            if caption:
                lines += [f"*{caption}:*", ""]
            lines += ["| claim | verdict | why | notebook |", "|---|---|---|---|"]
            for r in part.itertuples():
                kind = "" if r.kind == REPRODUCTION else f" ({r.kind})"
                lines.append(
                    f"| **{_cell(r.key)}** {_cell(first_sentence(reader_numbers(r.statement)))} | "
                    f"{_BADGE.get(r.verdict, '')} {r.verdict}{kind} | {_why(r, with_values=True)} | "
                    f"{_link(r.notebook, r.key)} |"
                )
            lines.append("")
        lines += [":::{dropdown} The paper's words, the rule, the interval and the evidence of every claim", ""]
        for r in sub.itertuples():
            nb = r.notebook.rsplit("/", 1)[-1].removesuffix(".ipynb")
            lines += [
                f"**{_cell(nb)} {_cell(r.key)}** ({r.verdict}{'' if r.kind == REPRODUCTION else ', ' + r.kind}). "
                f"{_cell(reader_numbers(r.statement))}",
                "",
                f"- The paper's words: {_words(r)}",
                f"- Paper: {_cell(_num(r.paper) if not isinstance(r.paper, (dict, list)) else _plain_value(r.paper))}; "
                f"ours: {_cell(_num(r.ours) if not isinstance(r.ours, (dict, list)) else _plain_value(r.ours))}",
                f"- Estimate: {_cell(_interval_text(r.interval)) or 'none'}",
                f"- Rule: {_cell(r.rule) or 'none'}",
                f"- Evidence: {_cell(reader_numbers(r.evidence))}"
                + (f" {_cell(reader_numbers(r.note))}" if r.note else ""),
                "",
            ]
        lines += [":::", ""]
    return "\n".join(lines) + "\n"


def changes_markdown(df: pd.DataFrame, before: pd.DataFrame) -> str:
    """Render the changes page: every claim whose criterion or verdict differs from an earlier report.

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gather` for this build.
    before : pandas.DataFrame
        The earlier report: columns ``notebook, key, statement, verdict, evidence`` and, when it recorded
        them, ``rule`` and ``kind`` (without ``rule``, its evidence stands for its rule).

    Returns
    -------
    str
        The page's text: a table of how the verdicts moved, one entry per claim whose verdict or kind
        changed (the paper's words, old and new rule and verdict, why), the claims whose rule changed but
        not their verdict folded into a dropdown, then the claims that are new or gone.
    """
    _check_report_frame(df)
    if not isinstance(before, pd.DataFrame):
        raise TypeError(f"before must be a DataFrame of the earlier report, got {type(before).__name__}")
    missing = [c for c in ("notebook", "key", "statement", "verdict", "evidence") if c not in before.columns]
    if missing:
        raise ValueError(f"before lacks column(s) {missing}; it needs notebook, key, statement, verdict and evidence")
    df = _with_optional(df)
    has_rule = "rule" in before.columns
    old = before.assign(verdict=before["verdict"].map(lambda v: _RENAMED.get(v, v)))
    old = old.assign(
        rule=old["rule"].fillna("") if has_rule else old["evidence"],
        kind=old["kind"].fillna(REPRODUCTION) if "kind" in old.columns else REPRODUCTION,
    ).set_index(["notebook", "key"])
    lines = [
        "# Changes to the reproduction report",
        "",
        "What moved since the earlier report: how the verdicts moved, then every claim whose verdict or kind",
        "changed, with the paper's words, the old and new rule and why. A criterion changes only to match the",
        "paper's words, to decide on an interval instead of a point, to take training seeds as the units of a",
        "model comparison, or to leave undecided what cannot decide a claim (models that have not converged, a",
        "metric degenerate on the substitute data); no threshold is tuned on the book's own results.",
        "",
    ]
    now = set(zip(df["notebook"], df["key"], strict=True))
    gone = [k for k in old.index if k not in now]
    moved, rule_only, new = [], [], []
    for r in df.itertuples():
        if (r.notebook, r.key) not in old.index:
            new.append(r)
            continue
        o = old.loc[(r.notebook, r.key)]
        if o["verdict"] != r.verdict or o["kind"] != r.kind:
            moved.append((r, o))
        elif (has_rule and str(o["rule"]) != r.rule) or (not has_rule and (bool(r.rule) or bool(r.change))):
            rule_only.append((r, o))
    lines.append(
        f"{len(moved)} claims changed verdict or kind, {len(rule_only)} changed only their rule, {len(new)} are new, "
        f"{len(gone)} are gone."
    )
    lines.append("")
    if moved:
        flows = pd.crosstab(
            pd.Series([o["verdict"] for _, o in moved], name="before"),
            pd.Series([r.verdict for r, _ in moved], name="now"),
        )
        lines += ["| before \\ now | " + " | ".join(flows.columns) + " |", "|---" * (len(flows.columns) + 1) + "|"]
        lines += [
            f"| {v} | " + " | ".join(str(int(flows.loc[v, c])) for c in flows.columns) + " |" for v in flows.index
        ]
        kinds = sum(o["kind"] != r.kind for r, o in moved)
        if kinds:
            lines += [
                "",
                f"{kinds} of them also changed kind (a reproduction that is now the book's own finding or a sanity check).",
            ]
        lines.append("")

    def entry(r: Any, o: Any) -> list[str]:
        why = []
        if str(o["evidence"]) != r.evidence:  # a new size or new data moves a verdict without a new rule
            why.append(f"the evidence changed: it was {o['evidence']}; it is now {r.evidence}")
        if r.change:
            why.append(r.change)
        if o["kind"] != r.kind:
            why.append(
                f"it is now a {r.kind}: "
                + (
                    "a property the paper does not state"
                    if r.kind == FINDING
                    else "it holds by construction or checks cflib itself"
                )
            )
        if o["verdict"] != r.verdict and not r.change and str(o["evidence"]) == r.evidence:
            why.append("the estimate or its interval moved")
        return [
            f"### {r.notebook.removesuffix('.ipynb')} {r.key}",
            "",
            f"- The paper's words: {_words(r)}",
            f"- Old rule: {_cell(o['rule']) or '(none)'}",
            f"- New rule: {_cell(r.rule) if r.rule else '(unchanged)'}",
            f"- Verdict: {o['verdict']}{'' if o['kind'] == REPRODUCTION else ' (' + o['kind'] + ')'} \u2192 **{r.verdict}**"
            + (f" ({r.kind})" if r.kind != REPRODUCTION else ""),
            f"- Why: {_reader_markdown('; '.join(why)) or 'the rule was written down'}.",
            "",
        ]

    if moved:
        lines += ["## Verdicts that moved", ""]
        for r, o in moved:
            lines += entry(r, o)
    if rule_only:
        lines += [
            "## Rules that changed without moving the verdict",
            "",
            f":::{{dropdown}} {len(rule_only)} claims",
            "",
        ]
        for r, o in rule_only:
            lines += entry(r, o)
        lines += [":::", ""]
    if new:
        lines += ["## New claims", ""]
        for r in new:
            lines.append(f"- {r.notebook.removesuffix('.ipynb')} {r.key}: **{r.verdict}**. {_cell(r.statement)}")
        lines.append("")
    if gone:
        lines += ["## Claims no longer checked", ""]
        for nb, key in gone:
            lines.append(
                f"- {nb.removesuffix('.ipynb')} {key}: was **{old.loc[(nb, key), 'verdict']}**. {_cell(old.loc[(nb, key), 'statement'])}"
            )
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
        raise TypeError(
            f"results must be a mapping (a dict of what the notebook computed), got {type(results).__name__}"
        )
    keys = list(keys)
    missing = [k for k in keys if k not in results]
    if missing:
        raise ValueError(
            f"results is missing {missing}, needed by {where}: pass every value the claims use in the dict"
        )
    return [results[k] for k in keys]


def _value_html(value: Any) -> tuple[str, str]:
    """A claim's paper/ours value: a line (the whole value, or for a dict or list of more than four entries their
    number), and for dicts and long lists a small table for the fold."""
    if isinstance(value, dict) and value:
        cells = "".join(f"<tr><td>{_html(k)}</td><td>{_html(_reader_plain(v))}</td></tr>" for k, v in value.items())
        table = f'<table class="cflib-claim-values"><tbody>{cells}</tbody></table>'
    elif isinstance(value, (list, tuple)) and len(value) > 4:
        table = f"<p>{html.escape(_plain_value(value), quote=False)}</p>"
    else:
        table = ""
    line = _short_value(value).replace("listed in the claim's card", "listed in the fold below")
    return _html(line), table


class ClaimCard:
    """One claim as a short card: id, verdict badge and statement; paper, ours [interval] and rule in three
    lines; the paper's words, evidence, note and parts folded (``<details>``). Display only: what is
    recorded is the :class:`Claim`."""

    def __init__(self, record: dict[str, Any]) -> None:
        self.record = dict(record)

    def _repr_html_(self) -> str:
        r = self.record
        verdict, kind = r["verdict"], r.get("kind", REPRODUCTION)
        badge = f'<span class="cflib-verdict">{_BADGE.get(verdict, "")} {verdict}</span>'
        kind_text = "" if kind == REPRODUCTION else f" <em>({kind})</em>"
        paper, paper_table = _value_html(r["paper"])
        ours, ours_table = _value_html(r["ours"])
        iv = _short_interval(r.get("interval"))
        method = str((r.get("interval") or {}).get("method", "")) if isinstance(r.get("interval"), dict) else ""
        ours_line = f"{ours}" + (f"; estimate {_html(iv)}" if iv and _html(iv) not in ours else "")
        rule = r.get("rule") or ""
        visible = [
            f"<p><strong>{_html(r['key'])}</strong> {badge}{kind_text}: {_html(reader_numbers(r['statement']))}</p>",
            f'<p class="cflib-claim-lines">Paper: {paper}<br>Ours: {ours_line}<br>Rule: {_html(rule_criterion(rule)) or "given by hand"}</p>',
        ]
        fold = []
        if r.get("quote"):
            src = f" ({_html(r['source'])})" if r.get("source") else ""
            fold.append(f"<p>The paper's words{src}: “{_html(r['quote'])}”</p>")
        if method:
            fold.append(f"<p>Interval: {_html(_short_interval(r['interval']))} ({_html(method)})</p>")
        if rule and " ".join(rule.split()) != rule_criterion(rule):
            fold.append(f"<p>Rule in full: {_html(rule)}</p>")
        if paper_table:
            fold.append(f"<p>Paper:</p>{paper_table}")
        if ours_table:
            fold.append(f"<p>Ours:</p>{ours_table}")
        fold.append(f"<p>Evidence: {_html(reader_numbers(r['evidence']))}</p>")
        if r.get("note"):
            fold.append(f"<p>Note: {_html(reader_numbers(r['note']))}</p>")
        if r.get("change"):
            fold.append(f"<p>Criterion changed: {_html(r['change'])}</p>")
        details = (
            "<details><summary>The paper's words, the evidence and the parts</summary>" + "".join(fold) + "</details>"
        )
        return f'<div class="cflib-claim" id="{claim_anchor(r["key"])}">{"".join(visible)}{details}</div>'

    def __repr__(self) -> str:
        r = self.record
        label = f"{r['key']}: {r['verdict']}" + (
            "" if r.get("kind", REPRODUCTION) == REPRODUCTION else f" ({r['kind']})"
        )
        iv = _short_interval(r.get("interval"))
        return (
            f"{_BADGE.get(r['verdict'], '')} {label}. {_reader_text(r['statement'])}\n"
            f"  paper: {_reader_text(_short_value(r['paper']))}\n"
            f"  ours:  {_reader_text(_short_value(r['ours']))}{' ' + iv if iv else ''}\n"
            f"  rule:  {_reader_text(rule_criterion(r.get('rule') or '')) or 'given by hand'}"
        )


class ClaimRows(pd.DataFrame):
    """The claims a chapter's ``claims_<nn>`` function recorded: a normal DataFrame for code and tests whose
    notebook display is one line (each claim is already shown as a card above it)."""

    @property
    def _constructor(self):  # slicing and arithmetic give plain DataFrames
        return pd.DataFrame

    def _summary_line(self) -> str:
        if "verdict" not in self.columns:
            return f"{len(self)} claims recorded above"
        counts = self["verdict"].value_counts()
        parts = ", ".join(f"{int(counts[v])} {_SHORT[v]}" for v in VERDICTS if v in counts.index)
        return f"{len(self)} claim{'' if len(self) == 1 else 's'} recorded above" + (f": {parts}" if parts else "")

    def _repr_html_(self) -> str:
        return f'<p class="cflib-claims-summary">{self._summary_line()}.</p>'

    def _repr_markdown_(self) -> str:
        return self._summary_line() + "."

    def _repr_latex_(self) -> str:
        return self._summary_line() + "."


def rows(keys: Iterable[str]) -> pd.DataFrame:
    """The rows of :func:`claims_table` for ``keys``, in that order (a claims function's return value).

    Parameters
    ----------
    keys : iterable of str

    Returns
    -------
    ClaimRows
        A :class:`pandas.DataFrame` (of that subclass) whose notebook display is one line counting the
        verdicts: the claims themselves are shown once each, as cards, when they are recorded.
    """
    keys = list(keys)
    table = claims_table()
    return ClaimRows(table.set_index("key").loc[[k for k in keys if k in set(table["key"])]].reset_index())
