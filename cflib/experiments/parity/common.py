"""Names the study modules of the chapter share: the three effects, the chunks of batch-means errors, a progress bar."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

__all__ = [
    "EFFECTS",
    "CHUNKS",
    "with_progress",
]

_T = TypeVar("_T")

#: The three counterfactual effects of the decomposition ``TV = DE - IE - SE``, in the order of the tables.
EFFECTS = ("DE", "IE", "SE")
CHUNKS = 10  # disjoint chunks of a population sample for batch-means standard errors


def with_progress(it: Iterable[_T], show: bool, desc: str) -> Iterable[_T]:
    """Wrap an iterable in a progress bar when asked.

    Parameters
    ----------
    it : iterable
        The loop's items.
    show : bool
        Whether to show a bar; ``False`` returns ``it`` unchanged.
    desc : str
        Label of the bar.

    Returns
    -------
    iterable
        ``it``, or a ``tqdm`` bar over it.
    """
    if not show:
        return it
    # Plain tqdm: tqdm.auto warns when ipywidgets is missing, which would clutter the executed pages.
    from tqdm import tqdm

    return tqdm(it, desc=desc)
