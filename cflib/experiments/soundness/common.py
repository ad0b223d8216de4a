"""Building blocks shared by the chapter's studies (axiomatic soundness).

The Colour-Digits oracles, SCM names and parents, the parent encoder, the test split, counterfactual
do-values drawn from the training marginals, training seeds, and the per-image values behind every
soundness metric.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

import cflib.data.colour_digits as cd

from ...metrics import axioms as ax

#: Oracle kinds of the Colour-Digits parents (digit classifier, circular hue regressor).
DIGIT_HUE_ORACLES: dict[str, tuple[str, int | None]] = {"digit": ("classification", 10), "hue": ("circular", None)}

#: Display names of the three hue SCMs (Table 1's blocks).
BLOCKS = {
    "unconfounded": "Unconfounded",
    "confounded": "Confounded w/o full support",
    "confounded_full_support": "Confounded w/ full support",
}

#: Panel titles of Figure 4.
SCM_TITLES = {
    "unconfounded": "(a) unconfounded",
    "confounded": "(b) confounded, w/o full support",
    "confounded_full_support": "(c) confounded, w/ full support",
}

#: Oracle seed shared by the chapter (the paper trains its oracles once with a fixed seed).
ORACLE_SEED = 392

#: The Colour-Digits parents, in the order the chapter intervenes on them.
PARENTS = ("digit", "hue")


def digit_hue_encoder() -> ax.ParentEncoder:
    """The Colour-Digits parent encoder: one-hot digit and (cos, sin) of the circular hue."""
    return ax.ParentEncoder({"digit": ("categorical", 10), "hue": "circular"})


def colour_digits_test(resolution: int, n_test: int | None = None, *, seed: int = 1) -> cd.ColourDigits:
    """The unconfounded Colour-Digits test split, optionally its first ``n_test`` images.

    Parameters
    ----------
    resolution : int
        Image side.
    n_test : int, optional
        Keep the first ``n_test`` images (all by default).
    seed : int
        Seed of the hue draw (the notebooks use ``seed + 1``).

    Returns
    -------
    ColourDigits
    """
    test = cd.colour_digits("unconfounded", "test", replicas=1, resolution=resolution, seed=seed)
    return test if n_test is None else test.subset(np.arange(n_test))


def sample_do(
    train_parents: Mapping[str, np.ndarray],
    n: int,
    *,
    seed: int,
    names: Sequence[str] | None = None,
    current: Mapping[str, np.ndarray] | None = None,
) -> dict[str, np.ndarray]:
    """Counterfactual parent values drawn from the training marginals, one per test image.

    Parameters
    ----------
    train_parents : dict
        Parent -> training values (the marginal to draw from).
    n : int
        Number of test images.
    seed : int
        Seed of the first parent; parent ``i`` (in ``names`` order) uses ``seed + i``.
    names : sequence of str, optional
        Parents to draw (all of ``train_parents`` by default).
    current : dict, optional
        Parent -> current values that the draw must differ from (a forced change).

    Returns
    -------
    dict
        Parent -> ``(n,)`` values.
    """
    names = list(train_parents) if names is None else list(names)
    unknown = [k for k in names if k not in train_parents]
    if unknown:
        raise ValueError(f"names has parent(s) {unknown} missing from train_parents {list(train_parents)}")
    current = current or {}
    return {
        k: ax.sample_do_values(train_parents[k], n, seed=seed + i, current=current.get(k)) for i, k in enumerate(names)
    }


def check_seeds(seeds: Sequence[int]) -> list[int]:
    """Training seeds as a list of distinct non-negative integers (at least one).

    Parameters
    ----------
    seeds : sequence of int
        Training seeds.

    Returns
    -------
    list of int
        The seeds, in order.

    Raises
    ------
    ValueError
        If there is none, one repeats, or one is negative.
    """
    out = [int(x) for x in seeds]
    if not out or len(set(out)) != len(out) or min(out) < 0:
        raise ValueError(f"seeds must be distinct non-negative integers, at least one, got {list(seeds)}")
    return out


def image_values(
    f: ax.CounterfactualFunction,
    x: np.ndarray,
    pa: Mapping[str, np.ndarray],
    do: Mapping[str, np.ndarray],
    oracles: Mapping[str, Any],
    *,
    m: int,
    cycles: int,
    extra: Mapping[str, Mapping[str, Any]] | None = None,
) -> dict[tuple[str, str, str, int, str], np.ndarray]:
    """Per-image values behind :func:`~cflib.metrics.axioms.soundness_report`'s means (same keys, same scale: effectiveness x 100).

    Keys are ``(metric, intervened, measured, step, oracles)``; the intervals of the claims are taken over these images.

    Parameters
    ----------
    f : CounterfactualFunction
        The function to score, its noise fixed per image.
    x, pa : numpy.ndarray, dict
        Test images and their parents.
    do : dict
        Intervened parent -> counterfactual values.
    oracles : dict
        Parent -> main pseudo-oracle.
    m, cycles : int
        Composition powers and reversibility cycles.
    extra : dict, optional
        Oracle family -> parent -> oracle, scored on the same counterfactuals.

    Returns
    -------
    dict
        ``(metric, intervened, measured, step, oracles)`` -> ``(n,)`` values.
    """
    out = {("composition", "null", "image", j + 1, "none"): v for j, v in enumerate(ax.composition(f, x, pa, m))}
    for k, dv in do.items():
        out |= {
            ("reversibility", k, "image", c + 1, "none"): v
            for c, v in enumerate(ax.reversibility(f, x, pa, k, dv, cycles))
        }
        scored = ax.effectiveness(f, x, pa, k, dv, oracles, return_images=True)
        assert isinstance(scored, tuple)  # return_images=True: (scores, counterfactual images)
        eff, xs = scored
        out |= {("effectiveness", k, j, 1, "main"): 100.0 * np.asarray(s, dtype=float) for j, s in eff.items()}
        ps = {**pa, k: np.asarray(dv).reshape(-1)}
        for fam, orc in (extra or {}).items():
            out |= {
                ("effectiveness", k, j, 1, fam): 100.0 * np.asarray(o.score(xs, ps[j]), dtype=float)
                for j, o in orc.items()
            }
    return out
