"""One figure style for the whole book, and axes-level helpers.

Every figure in the book comes from here or from a result object's ``plot`` method, which call
these helpers. Functions take an optional ``ax`` and return the axes they drew on, so figures
compose (``fig, axes = subplots(1, 2)``, then ``helper(..., ax=axes[0])``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
from numpy.typing import ArrayLike

__all__ = [
    "PALETTE",
    "set_style",
    "set_table_style",
    "reader_table",
    "subplots",
    "line_with_band",
    "image_grid",
    "qq_uniform",
    "scatter_with_fit",
    "identity_line",
    "verdict_colors",
    "ALPHA_COLOR",
]

#: Colour-blind-safe palette (Okabe-Ito) used for every categorical series in the book.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]

#: Colour of a significance-level line (the text calls it red): a dark red that no series of :data:`PALETTE` uses.
ALPHA_COLOR = "#A50026"

#: Colours for claim verdicts in tables and figures.
verdict_colors = {
    "reproduced": "#009E73",
    "not reproduced": "#D55E00",
    "undecided at this scale": "#E69F00",
}


def set_style(context: str = "notebook", dpi: int = 110) -> None:
    """Apply the book's matplotlib/seaborn theme.

    Parameters
    ----------
    context : {"paper", "notebook", "talk"}
        Seaborn scaling context.
    dpi : int
        Figure resolution for inline display.
    """
    import seaborn as sns

    if context not in ("paper", "notebook", "talk", "poster"):
        raise ValueError(f"context must be 'paper', 'notebook', 'talk' or 'poster', got {context!r}")
    sns.set_theme(context=context, style="whitegrid", palette=PALETTE, font="DejaVu Sans")
    mpl.rcParams.update(
        {
            "figure.dpi": dpi,
            "savefig.dpi": 150,
            "figure.figsize": (6.4, 4.0),
            "figure.constrained_layout.use": True,
            "axes.titleweight": "bold",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "image.cmap": "viridis",
            "legend.frameon": False,
        }
    )
    set_table_style()
    _reader_warnings()


def _table_number(value: float) -> str:
    """One number format for every table: three significant figures, no e-notation (``cflib.claims``' reader's number)."""
    from .claims import reader_number

    return reader_number(value)


def set_table_style() -> None:
    """Pandas display options for the book's tables (:func:`set_style` calls it).

    Every float shows three significant figures, each value on its own (pandas would otherwise print a
    whole column in e-notation when one value is small), never in e-notation (below 1e-4 it reads
    ``< 0.0001``); no cell is cut off with "..."; wide frames show all their columns (the book's pages
    scroll a wide table inside its own box).
    """
    import pandas as pd

    pd.set_option("display.float_format", _table_number)
    pd.set_option("display.max_colwidth", None)
    pd.set_option("display.max_columns", 40)
    pd.set_option("display.width", 120)
    pd.set_option("styler.format.precision", 3)


def reader_table(
    frame: Any,
    *,
    pvalues: Sequence[str] = (),
    counts: Sequence[str] = (),
    missing: str = "",
    caption: str = "",
) -> Any:
    """A table as the reader sees it: "—" for a missing value with a note why, p-values and counts in their form.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (not changed).
    pvalues : sequence of str
        Columns of p-values, shown ``< 0.001`` or with two significant figures.
    counts : sequence of str
        Columns of counts, shown as integers.
    missing : str
        Why a cell can be empty (said under the table when one is); required when the table has a missing value.
    caption : str
        Text above the table.

    Returns
    -------
    pandas.io.formats.style.Styler
        Other numbers with three significant figures (:func:`cflib.claims.reader_number`).
    """
    import pandas as pd

    from .formatting import format_pvalue

    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    unknown = [c for c in (*pvalues, *counts) if c not in frame.columns]
    if unknown:
        raise ValueError(
            f"pvalues and counts must name columns of frame, got {unknown}; its columns are {list(frame.columns)}"
        )
    has_missing = bool(frame.isna().to_numpy().any())
    if has_missing and not missing.strip():
        raise ValueError("missing must say why a cell is empty: the table has a missing value")

    def number(v: Any) -> str:
        return _table_number(float(v)) if isinstance(v, (float, np.floating)) else str(v)

    formats: dict[Any, Any] = dict.fromkeys(frame.columns, number)
    formats.update({c: (lambda v: format_pvalue(float(v))) for c in pvalues})
    formats.update({c: (lambda v: str(int(round(float(v))))) for c in counts})
    note = f"— : {missing.strip()}" if has_missing else ""
    text = " ".join(t for t in (caption.strip(), note) if t)
    styler = frame.style.format(formats, na_rep="—")
    return styler.set_caption(text) if text else styler


#: Warning messages already shown in this kernel (each is shown once, however often it is raised).
_SHOWN: set[str] = set()


def _reader_warnings() -> None:
    """In a notebook kernel, show the warnings a reader should see (cflib's and the notebook's own) once each, as a
    warning box without file paths, and silence the rest (numerical RuntimeWarnings, third-party deprecations):
    no stderr block on the book's pages."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover
        return
    shell = get_ipython()
    if shell is None or not hasattr(shell, "kernel"):
        return
    import warnings

    for category in (RuntimeWarning, DeprecationWarning, PendingDeprecationWarning, FutureWarning):
        warnings.filterwarnings("ignore", category=category)
    warnings.showwarning = _show_warning


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    import html
    import re

    from IPython.display import HTML, display

    from .validation import CflibWarning

    ours = "/cflib/" in str(filename) or "ipykernel_" in str(filename) or str(filename).startswith("<")
    if not (issubclass(category, CflibWarning) or (issubclass(category, UserWarning) and ours)):
        return
    text = re.sub(r"(?:/tmp|/var/folders|/private)[^\s:,;)]*", "a temporary file", str(message))
    if text in _SHOWN:
        return
    _SHOWN.add(text)
    display(
        HTML(
            f'<div class="admonition warning cflib-warning"><p class="admonition-title">Warning</p>'
            f"<p>{html.escape(text, quote=False)}</p></div>"
        )
    )


def subplots(nrows: int = 1, ncols: int = 1, width: float = 4.0, height: float = 3.2, **kwargs):
    """Create a figure with a grid of axes sized per panel.

    Parameters
    ----------
    nrows, ncols : int
        Grid shape.
    width, height : float
        Size of one panel in inches.
    **kwargs
        Passed to :func:`matplotlib.pyplot.subplots`.

    Returns
    -------
    (matplotlib.figure.Figure, matplotlib.axes.Axes or numpy.ndarray)
    """
    return plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), **kwargs)


def _ax(ax):
    return plt.gca() if ax is None else ax


def line_with_band(
    x: ArrayLike,
    y: ArrayLike,
    lo: ArrayLike | None = None,
    hi: ArrayLike | None = None,
    *,
    label: str | None = None,
    color: str | None = None,
    ax: Any = None,
    **kwargs: Any,
) -> Any:
    """Plot a line with an optional shaded band (a confidence interval).

    Parameters
    ----------
    x, y : array-like of float
        The line.
    lo, hi : array-like of float, optional
        Lower and upper edges of the band.
    label, color : str, optional
        Legend label and colour.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on (current axes by default).
    **kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _ax(ax)
    (line,) = ax.plot(x, y, marker="o", ms=4, label=label, color=color, **kwargs)
    if lo is not None and hi is not None:
        ax.fill_between(x, lo, hi, alpha=0.2, color=line.get_color(), linewidth=0)
    return ax


def image_grid(
    images: np.ndarray,
    *,
    row_labels: Sequence[str] | None = None,
    col_labels: Sequence[str] | None = None,
    cmap: str | None = "gray",
    vmin: float | None = None,
    vmax: float | None = None,
    panel: float = 1.1,
    fig=None,
    gaps_after: Sequence[int] = (),
):
    """Show a grid of images, e.g. rows of counterfactuals.

    Parameters
    ----------
    images : numpy.ndarray
        Array of shape ``(rows, cols, H, W)`` (grey) or ``(rows, cols, H, W, 3)`` /
        ``(rows, cols, 3, H, W)`` (colour, values in [0, 1]).
    row_labels, col_labels : sequence of str, optional
        Labels written left of each row and above each column.
    cmap : str, optional
        Colour map for grey images.
    vmin, vmax : float, optional
        Grey-level range.
    panel : float
        Size of one image in inches.
    fig : matplotlib.figure.Figure, optional
        Figure to draw into; a new one by default.
    gaps_after : sequence of int
        Columns after which a gap of half a panel separates two groups (e.g. a figure's panels (a), (b), (c)).

    Returns
    -------
    numpy.ndarray of matplotlib.axes.Axes
        The ``(rows, cols)`` axes (the gaps are not axes).
    """
    images = np.asarray(images)
    if images.ndim not in (4, 5):
        raise ValueError(f"images must have shape (rows, cols, H, W[, 3]), got {images.shape}")
    if images.ndim == 5 and images.shape[2] in (1, 3) and images.shape[-1] not in (1, 3):
        images = np.moveaxis(images, 2, -1)
    if images.ndim == 5 and images.shape[-1] == 1:
        images = images[..., 0]
    rows, cols = images.shape[:2]
    if row_labels is not None and len(row_labels) != rows:
        raise ValueError(f"row_labels has {len(row_labels)} entries for {rows} rows")
    if col_labels is not None and len(col_labels) != cols:
        raise ValueError(f"col_labels has {len(col_labels)} entries for {cols} columns")
    gaps = sorted({int(g) for g in gaps_after})
    if any(not 0 <= g < cols - 1 for g in gaps):
        raise ValueError(f"gaps_after must name columns 0 to {cols - 2} (a gap goes between two columns), got {gaps}")
    if fig is None:
        width = panel * (cols + 0.5 * len(gaps)) + (1.2 if row_labels is not None else 0.2)
        fig = plt.figure(figsize=(width, panel * rows + 0.4))
    keep = [c + sum(g < c for g in gaps) for c in range(cols)]
    ratios = [1.0] * (cols + len(gaps))
    for j in range(len(ratios)):
        if j not in keep:
            ratios[j] = 0.5
    grid = np.asarray(fig.subplots(rows, len(ratios), squeeze=False, gridspec_kw={"width_ratios": ratios}))
    for j in range(len(ratios)):
        if j not in keep:
            for ax in grid[:, j]:
                ax.remove()
    axes = grid[:, keep]
    for r in range(rows):
        for c in range(cols):
            ax = axes[r, c]
            img = images[r, c]
            ax.imshow(
                np.clip(img, 0, 1) if img.ndim == 3 else img, cmap=None if img.ndim == 3 else cmap, vmin=vmin, vmax=vmax
            )
            ax.set_xticks([])
            ax.set_yticks([])
            ax.grid(False)
            for side in ax.spines.values():
                side.set_visible(False)
            if r == 0 and col_labels is not None:
                ax.set_title(col_labels[c], fontsize=9, fontweight="normal")
            if c == 0 and row_labels is not None:
                ax.set_ylabel(row_labels[r], fontsize=9, rotation=0, ha="right", va="center")
    return axes


def qq_uniform(pvalues: Sequence[float], *, label: str | None = None, ax=None, band: float = 0.95):
    """QQ plot of p-values against the uniform distribution with a pointwise band.

    Parameters
    ----------
    pvalues : sequence of float
        P-values in [0, 1].
    label : str, optional
        Legend label.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.
    band : float
        Coverage of the pointwise Beta band for uniform order statistics.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from scipy import stats

    p = np.sort(np.asarray(pvalues, dtype=float))
    if p.size == 0 or np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
        raise ValueError("pvalues must be a non-empty sequence of numbers in [0, 1]")
    n = p.size
    k = np.arange(1, n + 1)
    expected = k / (n + 1)
    ax = _ax(ax)
    lo = stats.beta.ppf((1 - band) / 2, k, n + 1 - k)
    hi = stats.beta.ppf(1 - (1 - band) / 2, k, n + 1 - k)
    ax.fill_between(expected, lo, hi, color="0.85", linewidth=0, label=f"{band:.0%} band")
    ax.plot(expected, p, ".", ms=3, label=label)
    identity_line(ax)
    ax.set_xlabel("uniform quantile")
    ax.set_ylabel("p-value quantile")
    return ax


def identity_line(ax=None, **kwargs):
    """Draw the line y = x across the current limits of ``ax``.

    Parameters
    ----------
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.
    **kwargs
        Passed to ``ax.plot``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _ax(ax)
    lo = min(ax.get_xlim()[0], ax.get_ylim()[0])
    hi = max(ax.get_xlim()[1], ax.get_ylim()[1])
    kwargs = {"color": "0.4", "lw": 1, "ls": "--", **kwargs}
    ax.plot([lo, hi], [lo, hi], **kwargs)
    return ax


def scatter_with_fit(x: ArrayLike, y: ArrayLike, *, label: str | None = None, ax: Any = None, **kwargs: Any) -> Any:
    """Scatter ``y`` against ``x`` with a least-squares line and Pearson's r in the legend.

    Parameters
    ----------
    x, y : sequence of float
        Points (NaNs are dropped pairwise).
    label : str, optional
        Series label; Pearson's r is appended.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.
    **kwargs
        Passed to ``ax.scatter``.

    Returns
    -------
    matplotlib.axes.Axes
    """
    xs = np.asarray(x, dtype=float)
    ys = np.asarray(y, dtype=float)
    if xs.shape != ys.shape:
        raise ValueError(f"x and y must have the same shape, got {xs.shape} and {ys.shape}")
    ok = ~(np.isnan(xs) | np.isnan(ys))
    xs, ys = xs[ok], ys[ok]
    ax = _ax(ax)
    r = np.corrcoef(xs, ys)[0, 1] if xs.size > 2 and np.std(xs) > 0 and np.std(ys) > 0 else np.nan
    text = f"r = {r:.2f}" if label is None else f"{label} (r = {r:.2f})"
    pts = ax.scatter(xs, ys, s=kwargs.pop("s", 12), alpha=kwargs.pop("alpha", 0.7), label=text, **kwargs)
    if np.isfinite(r):
        slope, intercept = np.polyfit(xs, ys, 1)
        grid = np.linspace(xs.min(), xs.max(), 50)
        ax.plot(grid, slope * grid + intercept, color=pts.get_facecolor()[0], lw=1.2)
    return ax
