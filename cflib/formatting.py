"""Numbers and text as a reader sees them: p-values (``< 0.001``), three significant figures, intervals,
and the claims' texts without the project's internal references.

Used by the audit report (:mod:`cflib.audit`: its HTML page, plain-language summary and model card), by the
claim cards and the reproduction report (:mod:`cflib.claims`) and by the book's tables
(``cflib.plotting.set_style`` sets :func:`reader_number` as pandas' float format), so a number reads the same
wherever it is printed. Nothing here rounds what is stored: the JSON keeps every digit, these functions only
render.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Callable
from typing import Any

import numpy as np

from . import verdicts

__all__ = [
    "format_pvalue",
    "format_number",
    "format_interval",
    "format_percent",
    "short_number",
    "reader_number",
    "reader_plain",
    "plain_value",
    "reader_text",
    "reader_numbers",
    "reader_html",
    "reader_markdown",
    "MISSING",
    "first_sentence",
    "claim_anchor",
    "rule_criterion",
    "rule_position",
]

#: What a reader sees where a value is missing or undefined (NaN): a dash, never "nan".
MISSING = "—"


def _check_real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(value, "__float__"):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, got {value!r}") from None


def _check_digits(digits: Any, name: str = "digits") -> int:
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {digits!r}")
    return digits


def format_number(value: Any, digits: int = 3, *, missing: str = "") -> str:
    """``value`` to ``digits`` significant figures, in plain notation between 1e-4 and 1e6.

    Parameters
    ----------
    value : float
        The number; NaN or infinite gives ``missing`` (NaN) or ``"inf"``/``"-inf"``.
    digits : int
        Significant figures (at least 1).
    missing : str
        Text for NaN (a value that could not be estimated).

    Returns
    -------
    str
        For example ``0.0123``, ``-0.187``, ``1.00`` (trailing zeros kept: they are significant), ``1.23e-05``.

    Examples
    --------
    >>> format_number(0.012345), format_number(-0.18749), format_number(32561, 3), format_number(1.0)
    ('0.0123', '-0.187', '32600', '1.00')
    """
    v = _check_real(value, "value")
    digits = _check_digits(digits)
    if math.isnan(v):
        return missing
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v == 0:
        return "0" if digits == 1 else "0." + "0" * (digits - 1)
    mag = math.floor(math.log10(abs(v)))
    rounded = float(f"{v:.{digits - 1}e}")  # round to the significant figures first (0.09996 -> 0.100)
    if rounded != 0:
        mag = math.floor(math.log10(abs(rounded)))
    if not -4 <= mag < 6:
        return f"{v:.{digits - 1}e}"
    if mag >= digits - 1:
        return f"{round(rounded):d}"
    return f"{rounded:.{digits - 1 - mag}f}"


def format_pvalue(p: Any, *, floor: float = 0.001, digits: int = 2, missing: str = "") -> str:
    """A p-value as it is reported: ``< 0.001`` below ``floor``, else ``digits`` significant figures.

    Parameters
    ----------
    p : float
        The p-value, in [0, 1]; NaN gives ``missing`` (a row without a test).
    floor : float
        Smallest value printed as a number, in (0, 1).
    digits : int
        Significant figures above the floor.
    missing : str
        Text for NaN.

    Returns
    -------
    str

    Raises
    ------
    ValueError
        ``p`` outside [0, 1], or ``floor`` outside (0, 1).

    Examples
    --------
    >>> format_pvalue(0.0), format_pvalue(1.8e-99), format_pvalue(0.0012), format_pvalue(0.5), format_pvalue(1.0)
    ('< 0.001', '< 0.001', '0.0012', '0.50', '1.0')
    """
    v = _check_real(p, "p")
    f = _check_real(floor, "floor")
    digits = _check_digits(digits)
    if not 0 < f < 1:
        raise ValueError(f"floor must lie in (0, 1), got {floor!r}")
    if math.isnan(v):
        return missing
    if not 0 <= v <= 1:
        raise ValueError(f"p must be a probability in [0, 1], got {p!r}")
    if v < f:
        return f"< {format_number(f, 1)}"
    return format_number(v, digits)


def format_interval(low: Any, high: Any, digits: int = 3, *, missing: str = "") -> str:
    """``[low, high]`` with :func:`format_number`; ``missing`` when either end is NaN.

    Parameters
    ----------
    low, high : float
    digits : int
    missing : str

    Returns
    -------
    str

    Examples
    --------
    >>> format_interval(-0.0123, 0.0456)
    '[-0.0123, 0.0456]'
    """
    lo, hi = _check_real(low, "low"), _check_real(high, "high")
    if math.isnan(lo) or math.isnan(hi):
        return missing
    return f"[{format_number(lo, digits)}, {format_number(hi, digits)}]"


def format_percent(value: Any, digits: int = 3, *, missing: str = "") -> str:
    """A proportion as a percentage with ``digits`` significant figures (``0.1694`` -> ``16.9%``).

    Parameters
    ----------
    value : float
    digits : int
    missing : str

    Returns
    -------
    str
    """
    v = _check_real(value, "value")
    if math.isnan(v):
        return missing
    return f"{format_number(100 * v, digits)}%"


def short_number(value: Any) -> str:
    """A number in a sentence: three significant figures, no e-notation between 0.001 and 10^6.

    Parameters
    ----------
    value : Any
        A number; anything else is returned as ``str(value)``.

    Returns
    -------
    str
        ``0.123``, ``61`` (an integral value is written as an integer), :data:`MISSING` for NaN, ``∞``.

    Examples
    --------
    >>> short_number(0.12345), short_number(61.0), short_number(float("nan")), short_number(2.5e-7)
    ('0.123', '61', '—', '2.50e-07')
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    x = float(value)
    if not math.isfinite(x):
        return MISSING if math.isnan(x) else ("∞" if x > 0 else "−∞")
    if x == 0 or 1e-3 <= abs(x) < 1e6:
        text = f"{x:.3g}"
        return f"{x:.0f}" if "e" in text else text
    return f"{x:.2e}"


def reader_number(value: Any) -> str:
    """A number in a table a reader compares: three significant figures and never e-notation.

    The book's one table format (``cflib.plotting.set_style`` sets it as pandas' float format).

    Parameters
    ----------
    value : Any
        A number; anything else is returned as ``str(value)``.

    Returns
    -------
    str
        ``0.0123``, ``1.00``, ``123000``; an integral value from 10 up as an integer (a count: ``61``, not
        ``61.0``); magnitudes below 1e-4 read ``< 0.0001`` (or ``> -0.0001``), those from 1e6 up are written out
        with thousands separators (``482,000,000``); NaN reads :data:`MISSING`.

    Examples
    --------
    >>> reader_number(0.012345), reader_number(1.0), reader_number(61.0), reader_number(3e-9)
    ('0.0123', '1.00', '61', '< 0.0001')
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        return str(value)
    x = float(value)
    if not math.isfinite(x):
        return short_number(x)
    if x != 0 and abs(x) < 1e-4:
        return "< 0.0001" if x > 0 else "> -0.0001"
    if abs(x) >= 1e6:
        return f"{float(f'{x:.3g}'):,.0f}"
    if abs(x) >= 10 and x == round(x):
        return f"{x:.0f}"
    return format_number(x, 3)


def plain_value(value: Any, number: Callable[[Any], str] | None = None) -> str:
    """A dict or list as reader's text: ``a 0.886, b 0.862`` instead of Python's repr.

    Parameters
    ----------
    value : Any
    number : callable, optional
        How a number (a leaf) is written: :func:`short_number` by default.

    Returns
    -------
    str
    """
    if isinstance(value, dict):
        return ", ".join(f"{k} {plain_value(v, number)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return ", ".join(plain_value(v, number) for v in value)
    return (number or short_number)(value)


def reader_plain(value: Any) -> str:
    """A dict or list as reader's text with :func:`reader_number` for its numbers (a table cell's value).

    Parameters
    ----------
    value : Any

    Returns
    -------
    str
    """
    return plain_value(value, reader_number)


#: Paper codes of the project's notes ("Monteiro et al. 2023 (003)"), which point at nothing a reader has.
_PAPER_CODE = re.compile(r"\s*\(00\d\)")
#: References to the implementation notes: in parentheses they are dropped, elsewhere they become "the implementation notes".
_NOTES_ONE = r"§[\d.]*\d(?: (?:item|claim) \w+| [A-Z]\w*)?"
_NOTES_PAREN = re.compile(r"\s*\((?:the )?notes " + _NOTES_ONE + r"\)")
_NOTES_REF = re.compile(r"(?:the )?notes " + _NOTES_ONE + r"(?:(?:,| and) " + _NOTES_ONE + r")*")
_SECTION_PAREN = re.compile(r"\s*\(§[^()]*\)")
_SECTION = re.compile(r",? §[\d.]*\d(?:,? (?:item|claim) \w+| [A-Z]\w*)?(?: \[S\])?")
#: The project's issue numbers ("(issue 27)", "issue 38: ...", "issue 8 (Build); ..."), which mean nothing to a
#: reader: the reference and the punctuation that ties it to the text go, the words stay.
_ISSUE_PAREN = re.compile(
    r"\s*\((?:see |since |from |as of |after |before )?issues? \d+(?:(?:, | and | & )\d+)*\)", re.I
)
_ISSUE_REF = re.compile(
    r"\b(?:the book's )?issues? \d+(?:(?:, | and | & )\d+)*(?:'s)?(?: \([^()]*\))?(?: bar)?(?:,? Build)?[:;,]?\s*", re.I
)
_STAR_EMPH = re.compile(r"(?<![\w*^\\])\*(?=\S)([^*\n]*?\S)\*(?![\w*])")
_DOLLAR_MATH = re.compile(r"\$\$([^$]+?)\$\$|(?<![\\\w$])\$(?=[^\s$])([^$\n]*?\S)\$(?![\w$])")
#: TeX written without dollars in a quote (``\hat{Y}^{NP}``): a command with its braces, sub- and superscripts.
_BARE_TEX = re.compile(r"\\[A-Za-z]+(?:\{[^{}]*\})*(?:[\^_](?:\{[^{}]*\}|\w))*")
#: A p-value written by code: ``p = 1.0e-28``, ``p=0.00``, ``p-value 3.1e-05``.
_PVALUE = re.compile(r"\b(p(?:-value)?\s*(?:=|:)?\s*)(\d+(?:\.\d+)?(?:e[+-]?\d+)?)(?!\w|\.\d)", re.I)
#: A number in e-notation, with the ``=`` before it: ``residual = 3.47e-17``.
_E_NUMBER = re.compile(r"(=\s*)?(?<![\w.])(-?\d+(?:\.\d+)?e[+-]?\d+)(?!\w|\.\d)", re.I)
#: A count written as a float by code: ``61.0 images`` (an integral value from 10 up with a bare ``.0``).
_FLOAT_COUNT = re.compile(r"(?<![\w.])(\d{2,})\.0(?![\w]|\.\d)")


def reader_text(text: Any) -> str:
    """Plain text for a reader: no paper codes like "(003)", no "notes §" and no "issue 27" references.

    Parameters
    ----------
    text : Any
        Converted with ``str``.

    Returns
    -------
    str

    Examples
    --------
    >>> reader_text("Not a reproduction (issue 38): split. Issue 27: a claim (issue 8 bar, not a paper claim).")
    'Not a reproduction: split. A claim (not a paper claim).'
    >>> reader_text("the book's issue 29 (The audit in practice), Build: the conformance page")
    'The conformance page'
    """
    text = _PAPER_CODE.sub("", str(text))
    text = re.sub(r"\$\s+\$", "", text)  # a formula the paper's text extraction lost: nothing to render
    text = _NOTES_PAREN.sub("", text)
    text = _NOTES_REF.sub("the implementation notes", text)
    text = re.sub(r"\b[Ii]ssue requirement", "the book's requirement", text)
    text = _ISSUE_REF.sub("\x00", _ISSUE_PAREN.sub("", text))
    text = re.sub(r"(^|[.!?]\s+)\x00(\w)", lambda m: m.group(1) + m.group(2).upper(), text)  # a sentence's start
    text = text.replace("(\x00", "(").replace("\x00", "")
    return _SECTION.sub("", _SECTION_PAREN.sub("", text))


def _pvalue_text(m: re.Match[str]) -> str:
    head, number = m.group(1), m.group(2)
    p = float(number)
    if not 0 <= p <= 1:
        return m.group(0)
    decimals = len(number.split(".")[1]) if "." in number and "e" not in number.lower() else None
    if p == 0 and decimals:  # "p = 0.00": a p-value rounded to zero by the code that wrote it
        return f"{head.rstrip(' =:')} < {0.5 * 10.0**-decimals:g}"
    if p < 0.001:
        return f"{head.rstrip(' =:')} < 0.001"
    return f"{head}{format_pvalue(p)}"


def _e_number_text(m: re.Match[str]) -> str:
    x = float(m.group(2))
    if x != 0 and abs(x) < 1e-4:
        return "< 0.0001" if x > 0 else "> -0.0001"  # "residual = 3e-17" -> "residual < 0.0001"
    return (m.group(1) or "") + reader_number(x)


def reader_numbers(text: Any) -> str:
    """The numbers of a claim's text as a reader reads them: p-values as ``< 0.001`` or two significant
    figures, no e-notation (``3.47e-17`` reads ``< 0.0001``), counts as integers (``61.0 images``: ``61 images``).

    Parameters
    ----------
    text : Any
        Converted with ``str``; meant for the book's own texts (statements, evidence), not the papers' words.

    Returns
    -------
    str

    Examples
    --------
    >>> reader_numbers("p = 1.0e-28 and p=0.00; residual = 3.47e-17, n 1.2e+06 of 61.0 images.")
    'p < 0.001 and p < 0.005; residual < 0.0001, n 1,200,000 of 61 images.'
    """
    text = _PVALUE.sub(_pvalue_text, str(text))
    return _FLOAT_COUNT.sub(r"\1", _E_NUMBER.sub(_e_number_text, text))


def _math_html(tex: str) -> str:
    return f'<span class="math notranslate nohighlight">\\({html.escape(tex, quote=False)}\\)</span>'


def _prose_html(text: str) -> str:
    parts, last = [], 0
    for m in _BARE_TEX.finditer(text):
        parts += [
            _STAR_EMPH.sub(r"<em>\1</em>", html.escape(text[last : m.start()], quote=False)),
            _math_html(m.group(0)),
        ]
        last = m.end()
    return "".join(parts) + _STAR_EMPH.sub(r"<em>\1</em>", html.escape(text[last:], quote=False))


def reader_html(text: Any) -> str:
    """Reader's text as HTML: escaped, ``$...$`` and bare TeX (``\\hat{Y}``) as inline math typeset by MathJax,
    ``*word*`` as emphasis, no internal references (:func:`reader_text`).

    Parameters
    ----------
    text : Any

    Returns
    -------
    str
    """
    parts, last = [], 0
    text = reader_text(text)
    for m in _DOLLAR_MATH.finditer(text):
        parts += [_prose_html(text[last : m.start()]), _math_html((m.group(1) or m.group(2)).strip())]
        last = m.end()
    return "".join(parts) + _prose_html(text[last:])


def reader_markdown(text: Any) -> str:
    """Reader's text for a MyST page (the report): :func:`reader_text`, with bare TeX (``\\hat{Y}^{NP}``) put in
    ``$...$`` so that it renders as math.

    Parameters
    ----------
    text : Any

    Returns
    -------
    str
    """
    text, out, last = reader_text(text), [], 0
    for m in _DOLLAR_MATH.finditer(text):
        out += [
            _BARE_TEX.sub(lambda t: f"${t.group(0)}$", text[last : m.start()]),
            f"${(m.group(1) or m.group(2)).strip()}$",
        ]
        last = m.end()
    return "".join(out) + _BARE_TEX.sub(lambda t: f"${t.group(0)}$", text[last:])


#: A sentence's end: a full stop before a capital, not after an abbreviation ("e.g.", "et al.", "Fig.").
_SENTENCE_END = re.compile(
    r"(?<!\be\.g)(?<!\bi\.e)(?<!\bvs)(?<!\bal)(?<!\bFig)(?<!\bFigs)(?<!\bEq)(?<!\bEqs)(?<!\bSec)(?<!\bcf)"
    r"(?<!\bApp)(?<!\bTab)(?<!\bresp)(?<!\bapprox)(?<!\bno)\.\s+(?=[A-Z(“\"])"
)


def first_sentence(text: Any) -> str:
    """The first sentence of ``text``, whole: never cut inside, so a reader sees no "…".

    Parameters
    ----------
    text : Any
        Converted with ``str``; runs of white space read as one space.

    Returns
    -------
    str
        Up to the first full stop that is followed by a capital and does not end an abbreviation
        ("e.g.", "et al.", "Fig."), without that stop.

    Examples
    --------
    >>> first_sentence("The VAE (e.g. Fig. 2) blurs. The GAN does not.")
    'The VAE (e.g. Fig. 2) blurs'
    """
    text = " ".join(str(text).split())
    return _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(".")


def claim_anchor(key: str) -> str:
    """The HTML id of a claim's card on its notebook's page (the verdict table and the report link to it).

    Parameters
    ----------
    key : str
        The claim's key, e.g. ``"C3"``.

    Returns
    -------
    str
        ``"claim-c3"``: ``claim-`` and the key in lower case, each run of other characters than letters and
        digits as one ``-``.
    """
    return "claim-" + (re.sub(r"[^a-z0-9]+", "-", str(key).lower()).strip("-") or "x")


#: A rule's criterion: "<quantity> > 0.5" or "<quantity> in [0.025, 0.075]".
_ONE_SIDED = re.compile(r"^(?P<q>.*?)\s*(?P<op>>=|<=|>|<|≥|≤)\s*(?P<t>-?[\d.]+(?:e[+-]?\d+)?)$")
_BAND = re.compile(r"^(?P<q>.*?) in \[(?P<lo>[^,\]]+), (?P<hi>[^\]]+)\]$")


def rule_position(rule: str, verdict: str) -> str:
    """Where a claim's deciding interval lies against its rule's threshold, in words that name the threshold.

    Parameters
    ----------
    rule : str
        A rule of :mod:`cflib.verdicts` (``"accuracy > 0.6: reproduced if ..."``).
    verdict : str
        The claim's verdict (:data:`cflib.verdicts.VERDICTS`).

    Returns
    -------
    str
        ``"rule accuracy > 0.6: the interval lies above 0.6"``; for a joint rule, whether every part holds;
        empty for an empty rule.

    Examples
    --------
    >>> rule_position("size in [0.025, 0.075]: reproduced if its interval lies inside", "undecided at this scale")
    'rule size in [0.025, 0.075]: the interval overlaps an edge of [0.025, 0.075]'
    """
    crit = rule_criterion(rule)
    if not crit:
        return ""
    m = _ONE_SIDED.match(crit)
    if m:
        up = m["op"] in (">", ">=", "≥")
        side = {
            verdicts.REPRODUCED: "above" if up else "below",
            verdicts.NOT_REPRODUCED: "below" if up else "above",
        }.get(verdict)
        where = f"lies {side} {m['t']}" if side else f"contains {m['t']}"
        return f"rule {crit}: the interval {where}"
    m = _BAND.match(crit)
    if m:
        where = {
            verdicts.REPRODUCED: "lies inside",
            verdicts.NOT_REPRODUCED: "lies outside",
        }.get(verdict, "overlaps an edge of")
        return f"rule {crit}: the interval {where} [{m['lo']}, {m['hi']}]"
    joint = {
        verdicts.REPRODUCED: "every part holds",
        verdicts.NOT_REPRODUCED: "a part fails (its interval shown)",
    }.get(verdict, "a part is undecided (its interval shown)")
    return f"rule {crit}: {joint}"


def rule_criterion(rule: str) -> str:
    """The criterion of a rule, without the verdict wording every rule shares.

    Parameters
    ----------
    rule : str
        A rule of :mod:`cflib.verdicts`; for a joint rule (:func:`cflib.verdicts.combine` with ``detail``),
        each part's criterion is kept.

    Returns
    -------
    str
        ``"accuracy > 0.6"`` for ``"accuracy > 0.6: reproduced if its interval lies above 0.6, ..."``.
    """
    pieces = rule.split(": reproduced if")
    head = pieces[0]
    if len(pieces) > 2 and pieces[1].startswith(
        " every part is"
    ):  # combine(..., detail=True): name each part's criterion
        parts = [re.split(r"otherwise undecided \(|\]; |\); |; ", piece)[-1].strip() for piece in pieces[1:-1]]
        head = f"{head}: " + "; ".join(parts)
    return " ".join(head.split())
