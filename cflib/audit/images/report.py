"""The report of an image audit: :class:`ImageAuditReport` and its figure (the gate, ECA, the units that flip)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..report import AuditReport

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.gridspec import GridSpec

__all__ = ["ImageAuditReport"]


@dataclass(frozen=True)
class ImageAuditReport(AuditReport):
    """The :class:`cflib.audit.AuditReport` of :func:`audit_images`: the same rows, JSON and HTML.

    Its figure (:meth:`plot`, embedded by :meth:`to_html`) shows the generator gate against its
    thresholds, the counterfactual checks, and the units whose decision the intervention moves most.
    """

    def plot(self, ax: Axes | None = None) -> Axes:
        """The gate and the checks with their intervals; with ``ax=None`` also the units that flip most.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Draw only the interval panel into it.

        Returns
        -------
        matplotlib.axes.Axes
            The interval panel (its ``figure`` holds the image rows too when ``ax`` was ``None``).
        """
        from ... import plotting

        shown = self.details.get("figure", {})
        k = len(shown.get("factual", ()))
        if ax is None:
            import matplotlib.pyplot as plt

            fig = plt.figure(figsize=(7.0, 2.8 + 1.25 * k), layout="constrained")
            grid = fig.add_gridspec(1 + k, 3, height_ratios=[2.2] + [1.0] * k)
            ax = fig.add_subplot(grid[0, :])
            for i in range(k):
                self._image_row(fig, grid, i, shown)
        r = self.rows
        names = [n for n in r.index if n.startswith("generator ") or n == "ECA"]
        pos = np.arange(len(names))[::-1]
        for p, n in zip(pos, names, strict=True):
            est, lo, hi = (float(v) for v in r.loc[n, ["estimate", "ci_low", "ci_high"]])
            thr = self.provenance.get("gate", {}).get(n.removeprefix("generator "))
            scale = 255.0 if n in ("generator composition", "generator reversibility") else 1.0
            ok = self.status()[n] == "clear"  # the gate passed, or ECA shown within its tolerance
            colour = plotting.PALETTE[2] if ok else plotting.PALETTE[3]
            if np.isfinite(est):
                xerr = [[(est - lo) / scale], [(hi - est) / scale]] if np.isfinite(lo) else None
                ax.errorbar([est / scale], [p], xerr=xerr, fmt="o", capsize=4, color=colour)
            else:
                ax.text(0.02, p, "not estimable", va="center", fontsize=8, color=plotting.PALETTE[3])
            if thr is not None:
                ax.plot([thr / scale] * 2, [p - 0.3, p + 0.3], color="0.3", lw=1.5)
        ax.set_yticks(pos, names)
        ax.set_xlim(-0.02, 1.02)
        ax.set_xlabel(
            f"share (ECA, effectiveness) or l1 / 255 (composition, reversibility); {1 - self.alpha:.0%} "
            "intervals, bars: gate thresholds"
        )
        ax.set_title("Generator gate and counterfactual accuracy")
        return ax

    @staticmethod
    def _image_row(fig: Figure, grid: GridSpec, i: int, shown: Mapping[str, Any]) -> None:
        x, xc = shown["factual"][i], shown["counterfactual"][i]
        s_cf = float(shown["score_cf"][i])
        cf_label = f"score {s_cf:.2f}" if np.isfinite(s_cf) else "not scored (gate failed)"
        panels = [
            (x, "factual", f"score {shown['score'][i]:.2f}"),
            (xc, "counterfactual", cf_label),
            (xc - x, "counterfactual − factual", ""),
        ]
        for j, (img, title, label) in enumerate(panels):
            a = fig.add_subplot(grid[1 + i, j])
            pic = np.moveaxis(img, 0, -1) if img.shape[0] == 3 else img.mean(0)
            if j == 2:
                lim = max(float(np.abs(pic).max()), 1e-6)
                a.imshow(pic if pic.ndim == 2 else pic.mean(-1), cmap="RdBu_r", vmin=-lim, vmax=lim)
            else:
                a.imshow(pic, cmap=None if pic.ndim == 3 else "gray", vmin=0, vmax=1)
            a.set_xticks([])
            a.set_yticks([])
            if i == 0:
                a.set_title(title, fontsize=9)
            a.set_xlabel(label, fontsize=8)
