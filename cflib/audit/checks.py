"""The checks of an audit report by name: the row vocabulary, ``--fail-on`` selection and each row's book page.

:data:`CHECKS` names every row a tabular audit can report, :func:`select_checks` resolves the names a CI
gate gives (``cflib audit --fail-on``), and :func:`reference_link` points a row's ``reference`` at the page
of the book that explains it (:func:`book_url`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

__all__ = ["CHECKS", "COLUMNS", "EFFECT_NAMES", "book_url", "check_names", "reference_link", "select_checks"]

#: Columns of every report row (:attr:`cflib.audit.AuditReport.rows`, before ``flagged``).
COLUMNS = ["estimate", "ci_low", "ci_high", "pvalue", "verdict", "method", "reference"]
#: Row names of the counterfactual effects (:data:`cflib.fairness.effects.MEASURES` -> check name).
EFFECT_NAMES = {"TV": "TV", "DE": "Ctf-DE", "IE": "Ctf-IE", "SE": "Ctf-SE"}


#: Every check a tabular audit can report (rows of :attr:`AuditReport.rows`, before any pairwise suffix).
CHECKS = (
    "TV",
    "Ctf-DE",
    "Ctf-IE",
    "Ctf-SE",
    "Ctf-DE (white-box)",
    "TV (y)",
    "Ctf-DE (y)",
    "Ctf-IE (y)",
    "Ctf-SE (y)",
    "PP (Algorithm 1)",
    "DP",
    "EO",
    "FPR difference",
    "ECA",
    "CF-CLOT",
    "CIT-LR",
)
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
    items = check_names(names)
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
            raise ValueError(
                f"fail_on: no check {s!r} in this report; its checks are {', '.join(checks)} (or 'any', 'model')"
            )
        chosen.update(hits)
    return [c for c in checks if c in chosen]


def check_names(names: Any) -> list[str]:
    """The check names of ``--fail-on`` (comma-separated text or a list), or one line saying what is wrong.

    Parameters
    ----------
    names : str or sequence of str
        Comma-separated names in one string, or a list of such strings.

    Returns
    -------
    list of str
        The names, stripped, in the order given.

    Raises
    ------
    TypeError
        ``names`` is neither a string nor a list of strings.
    ValueError
        An empty name.
    """
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
