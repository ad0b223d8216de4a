"""Notebook 02: Colour-Digits' full support and simulated interventions (Figures 4-5, eq. 4).

The simulated-intervention resampler with its warnings, the dependence between digit and hue before and
after it, and the quality of oracles trained on biased data.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

import cflib.data.colour_digits as cd

from ...models.oracles import fit_oracles
from .common import DIGIT_HUE_ORACLES


def simulated_interventions(
    scms: Mapping[str, cd.ColourDigits], names: Sequence[str], *, bins: int, seed: int
) -> tuple[dict[str, np.ndarray], dict[str, list[str]]]:
    """Simulated-intervention indices of the named SCMs, with the warnings the resampler raised.

    Parameters
    ----------
    scms : dict
        SCM name -> training split.
    names : sequence of str
        SCMs to resample.
    bins : int
        Hue bins.
    seed : int
        Resampler seed.

    Returns
    -------
    indices : dict
        Name -> resampled row indices.
    messages : dict
        Name -> warning messages (an SCM without full support warns about its empty cells).
    """
    si, messages = {}, {}
    for name in names:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            si[name] = cd.simulated_intervention(scms[name].parents, bins=bins, seed=seed)
        messages[name] = [str(w.message) for w in caught]
    return si, messages


def resampled(d: cd.ColourDigits, idx: np.ndarray) -> dict[str, np.ndarray]:
    """The parents of a training split's rows ``idx`` (a simulated intervention's resample).

    Parameters
    ----------
    d : ColourDigits
        Training split.
    idx : numpy.ndarray
        Row indices (:func:`simulated_interventions`).

    Returns
    -------
    dict
        Parent -> values of the resampled rows.
    """
    return {k: v[idx] for k, v in d.parents.items()}


def dependence(parents: Mapping[str, np.ndarray], bins: int) -> float:
    """Largest gap, in probability, between the binned digit-hue joint and the product of its marginals.

    Parameters
    ----------
    parents : dict
        ``"digit"`` and ``"hue"`` arrays.
    bins : int
        Hue bins.

    Returns
    -------
    float
        ``max |p(d, h) - p(d) p(h)|``; 0 for independent parents.
    """
    c, _, _ = cd.joint_histogram(parents, bins=bins, discrete=["digit"])
    p = c / c.sum()
    return float(np.abs(p - p.sum(1, keepdims=True) * p.sum(0, keepdims=True)).max())


def si_dependence(scms: Mapping[str, cd.ColourDigits], si: Mapping[str, np.ndarray], bins: int) -> pd.DataFrame:
    """:func:`dependence` before and after the simulated intervention, one row per resampled SCM.

    Parameters
    ----------
    scms, si : dict
        Training splits and their simulated-intervention indices.
    bins : int
        Hue bins.

    Returns
    -------
    pandas.DataFrame
        Columns ``before`` and ``after SI``.
    """
    return pd.DataFrame(
        {
            name: {
                "before": dependence(scms[name].parents, bins),
                "after SI": dependence(resampled(scms[name], si[name]), bins),
            }
            for name in si
        }
    ).T


def oracle_quality(
    scms: Mapping[str, cd.ColourDigits],
    si: Mapping[str, np.ndarray],
    test: cd.ColourDigits,
    *,
    steps: int,
    seed: int,
    device: str = "auto",
) -> pd.DataFrame:
    """Tables 2-4's oracle families (CNN on unconfounded, confounded, confounded + SI data; linear) on clean test images.

    Parameters
    ----------
    scms : dict
        Training splits of ``"unconfounded"`` and ``"confounded_full_support"``.
    si : dict
        Simulated-intervention indices, with ``"confounded_full_support"``.
    test : ColourDigits
        Unconfounded test split.
    steps : int
        CNN training steps.
    seed : int
        Oracle seed.
    device : str
        Torch device.

    Returns
    -------
    pandas.DataFrame
        Rows per family; columns ``digit accuracy (%)``, ``hue error (x100)`` and their standard errors over
        the test images (``digit accuracy s.e.``, ``hue error s.e.``).
    """
    full = scms["confounded_full_support"]
    families = {
        "unconfounded (CNN)": (scms["unconfounded"], None, "cnn"),
        "confounded (CNN)": (full, None, "cnn"),
        "confounded + SI (CNN)": (full, si["confounded_full_support"], "cnn"),
        "unconfounded (linear)": (scms["unconfounded"], None, "linear"),
    }
    quality = {}
    for name, (d, idx, arch) in families.items():
        orc = fit_oracles(
            d.x, d.parents, DIGIT_HUE_ORACLES, arch=arch, steps=steps, indices=idx, seed=seed, device=device
        )
        d_ok, h_err = (
            100 * np.asarray(orc["digit"].score(test.x, test.digit), dtype=float),
            100 * np.asarray(orc["hue"].score(test.x, test.hue), dtype=float),
        )
        quality[name] = {
            "digit accuracy (%)": d_ok.mean(),
            "hue error (x100)": h_err.mean(),
            "digit accuracy s.e.": d_ok.std(ddof=1) / np.sqrt(len(d_ok)),
            "hue error s.e.": h_err.std(ddof=1) / np.sqrt(len(h_err)),
        }
    return pd.DataFrame(quality).T
