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

__all__ = [
    "VERDICTS",
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

#: The three verdicts a claim can get.
VERDICTS = ("reproduced", "not reproduced", "inconclusive at this scale")

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
    """

    key: str
    statement: str
    paper: Any
    ours: Any
    verdict: str
    evidence: str
    notebook: str = field(default="")
    scale: str = field(default="")


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


def claim(
    key: str,
    statement: str,
    *,
    paper: Any,
    ours: Any,
    holds: bool | None,
    evidence: str,
    verdict: str | None = None,
) -> Claim:
    """Record the verdict on one of the paper's claims and show it.

    Parameters
    ----------
    key : str
        Identifier (the notes' claim number, e.g. ``"C4"``).
    statement : str
        What the paper claims.
    paper : Any
        The paper's value (or ``"qualitative"``).
    ours : Any
        Our value.
    holds : bool or None
        ``True`` -> ``reproduced``, ``False`` -> ``not reproduced``,
        ``None`` -> ``inconclusive at this scale``.
    evidence : str
        The test, interval or tolerance the verdict rests on. Must not be empty.
    verdict : str, optional
        Override the verdict derived from ``holds`` (one of :data:`VERDICTS`).

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
    if verdict is None:
        if holds is None:
            verdict = VERDICTS[2]
        elif isinstance(holds, (bool, np.bool_)):
            verdict = VERDICTS[0] if bool(holds) else VERDICTS[1]
        else:
            raise TypeError(f"holds must be True, False or None, got {holds!r}")
    if verdict not in VERDICTS:
        raise ValueError(f"verdict must be one of {VERDICTS}, got {verdict!r}")
    c = Claim(
        key=key,
        statement=statement,
        paper=_jsonable(paper),
        ours=_jsonable(ours),
        verdict=verdict,
        evidence=evidence,
        notebook=os.environ.get("CFLIB_NOTEBOOK", ""),
        scale=os.environ.get("CFLIB_SCALE", "interactive"),
    )
    _STATE["claims"][key] = asdict(c)
    _write()
    _glue(f"claim-{key}", verdict)
    try:
        from IPython.display import Markdown, display

        mark = {"reproduced": "✅", "not reproduced": "❌"}.get(verdict, "⚠️")
        display(Markdown(f"{mark} **{key}: {verdict}.** {statement} Paper: {_fmt(paper)}; ours: {_fmt(ours)}. *{evidence}*"))
    except ImportError:  # pragma: no cover - IPython ships with the notebook stack
        pass
    return c


def claims_table() -> pd.DataFrame:
    """The claims recorded so far in this process, one row each.

    Returns
    -------
    pandas.DataFrame
        Columns ``key, statement, paper, ours, verdict, evidence``.
    """
    cols = ["key", "statement", "paper", "ours", "verdict", "evidence"]
    return pd.DataFrame([{k: c[k] for k in cols} for c in _STATE["claims"].values()], columns=cols)


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
        ours, verdict, evidence, scale``.
    """
    directory = Path(directory)
    if directory.exists() and not directory.is_dir():  # a folder not created yet holds no claims
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
                    "verdict": c["verdict"],
                    "evidence": c["evidence"],
                    "scale": data.get("scale", ""),
                }
            )
    cols = ["chapter", "paper_ref", "notebook", "key", "statement", "paper", "ours", "verdict", "evidence", "scale"]
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


def report_markdown(df: pd.DataFrame) -> str:
    """Render gathered claims as the book's reproduction-report page (MyST markdown).

    Parameters
    ----------
    df : pandas.DataFrame
        Output of :func:`gather`.

    Returns
    -------
    str
        The page's text: a summary count per verdict, then one table per paper.
    """
    need = ["chapter", "notebook", "key", "statement", "paper", "ours", "verdict", "evidence", "scale"]
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be the DataFrame returned by gather(), got {type(df).__name__}")
    missing = [c for c in need if c not in df.columns]
    if missing:
        raise ValueError(f"df lacks column(s) {missing}; pass the DataFrame returned by gather()")
    lines = [
        "# Reproduction report",
        "",
        "Every checkable claim of the five papers that the book's notebooks test, with the paper's value,",
        "ours, the verdict and the evidence it rests on. The table is generated from the executed",
        "notebooks each time the book is built; a claim that does not reproduce is reported as such.",
        "",
    ]
    if df.empty:
        lines.append("No notebook has recorded a claim yet.")
        return "\n".join(lines) + "\n"
    counts = df["verdict"].value_counts()
    lines.append("| verdict | claims |")
    lines.append("|---|---|")
    for v in VERDICTS:
        lines.append(f"| {v} | {int(counts.get(v, 0))} |")
    lines.append("")
    for chapter, sub in df.groupby("chapter", sort=False):
        lines += [f"## {PAPERS.get(chapter, chapter)}", ""]
        lines.append("| notebook | claim | statement | paper | ours | verdict | evidence | scale |")
        lines.append("|---|---|---|---|---|---|---|---|")
        for r in sub.itertuples():
            nb = r.notebook.rsplit("/", 1)[-1].removesuffix(".ipynb")
            lines.append(
                f"| {_cell(nb)} | {_cell(r.key)} | {_cell(r.statement)} | {_cell(r.paper)} | {_cell(r.ours)} "
                f"| **{r.verdict}** | {_cell(r.evidence)} | {_cell(r.scale)} |"
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
