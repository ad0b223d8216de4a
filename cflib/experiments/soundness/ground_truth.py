"""Notebook 01, from axioms to metrics: the soundness metrics of known functions (the identity, the ground truth).

The programmatic hue oracle, every metric of named counterfactual functions, Lemma C.1 (commutativity) on
Colour-Digits and the shapes scene, and the oracles' scores on the true counterfactuals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

import cflib.data.colour_digits as cd

from ...data import shapes as sh
from ...metrics import axioms as ax
from ...models.baselines import GroundTruth


class HueOracle:
    """Programmatic hue oracle of the official code (``measure_hue``): mean hue of the bright pixels.

    Parameters
    ----------
    value_threshold : float
        Brightness above which a pixel counts as ink.
    """

    kind = "circular"

    def __init__(self, value_threshold: float = 0.2) -> None:
        self.value_threshold = value_threshold

    def score(self, images: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Circular hue error of each image against ``target``.

        Parameters
        ----------
        images : numpy.ndarray, shape (n, 3, H, W)
            Images in ``[0, 1]``.
        target : numpy.ndarray, shape (n,)
            Hues the images should show, in ``[0, 1)``.

        Returns
        -------
        numpy.ndarray, shape (n,)
            Errors in ``[0, 0.5]``.
        """
        return cd.hue_error(cd.measure_hue(images, value_threshold=self.value_threshold), target)


def score_functions(
    functions: Mapping[str, ax.CounterfactualFunction],
    x: np.ndarray,
    pa: Mapping[str, np.ndarray],
    do: Mapping[str, np.ndarray],
    oracles: Mapping[str, Any],
    *,
    m: int,
    cycles: int,
    seed: int,
) -> pd.DataFrame:
    """Every soundness metric of each named counterfactual function, summarised per model.

    Parameters
    ----------
    functions : dict
        Name -> counterfactual function.
    x, pa : numpy.ndarray, dict
        Test images and parents.
    do : dict
        Intervened parent -> counterfactual values.
    oracles : dict
        Parent -> pseudo-oracle.
    m, cycles : int
        Composition powers and reversibility cycles.
    seed : int
        Seed label of the rows.

    Returns
    -------
    pandas.DataFrame
        :func:`~cflib.metrics.axioms.summarise` of the :func:`~cflib.metrics.axioms.soundness_report` rows.
    """
    frames = [
        ax.soundness_report(f, x, pa, do, oracles, m=m, cycles=cycles, labels={"model": name, "seed": seed})
        for name, f in functions.items()
    ]
    return ax.summarise(pd.concat(frames, ignore_index=True))


def commutativity_study(
    truth: GroundTruth,
    x: np.ndarray,
    pa: Mapping[str, np.ndarray],
    do: Mapping[str, np.ndarray],
    summary: pd.DataFrame,
    *,
    n_shapes: int,
    seed: int,
) -> pd.DataFrame:
    """Lemma C.1 on Colour-Digits and the shapes scene: largest commutativity and composition distances of the truth.

    Parameters
    ----------
    truth : GroundTruth
        True Colour-Digits counterfactual function.
    x, pa, do : numpy.ndarray, dict, dict
        Test images, parents and the digit / hue counterfactual values.
    summary : pandas.DataFrame
        :func:`score_functions` output holding the ground truth's composition (model ``"ground truth"``).
    n_shapes : int
        Shapes-scene images (a random subset of the 16x16 scene).
    seed : int
        Seed of the subset and of the shape / object-hue interventions.

    Returns
    -------
    pandas.DataFrame
        Rows ``Colour-Digits`` and ``shapes scene``; columns ``commutativity l1 (max)``, ``composition l1 (max)``.
    """
    comm_digits = ax.commutativity(truth, x, pa, "digit", do["digit"], "hue", do["hue"])
    joint_digits = _joint_gap(truth, x, pa, {"digit": do["digit"], "hue": do["hue"]})
    scene = sh.shapes_scene(resolution=16)
    scene = scene.subset(np.random.default_rng(seed).permutation(len(scene))[:n_shapes])
    truth_shapes = GroundTruth(sh.true_counterfactual, sh.FACTORS)
    rng = np.random.default_rng(seed)
    shape_do = {"shape": rng.integers(0, 3, len(scene)), "object_hue": rng.integers(0, 4, len(scene))}
    comm_shapes = ax.commutativity(
        truth_shapes, scene.x, scene.parents, "shape", shape_do["shape"], "object_hue", shape_do["object_hue"]
    )
    joint_shapes = _joint_gap(truth_shapes, scene.x, scene.parents, shape_do)
    comp_shapes = ax.composition(truth_shapes, scene.x, scene.parents, m=3)
    comp_digits = summary.query("model == 'ground truth' and metric == 'composition'")["mean"].max()
    return pd.DataFrame(
        {
            "commutativity l1 (max)": [comm_digits.max(), comm_shapes.max()],
            "joint l1 (max)": [joint_digits.max(), joint_shapes.max()],
            "composition l1 (max)": [comp_digits, comp_shapes.max()],
        },
        index=["Colour-Digits", "shapes scene"],
    )


def _joint_gap(
    f: ax.CounterfactualFunction, x: np.ndarray, pa: Mapping[str, np.ndarray], do: Mapping[str, np.ndarray]
) -> np.ndarray:
    """Per-image l1 between the two partial interventions applied in turn and the joint one (eq. 12: both give g(eps, pa1*, pa2*))."""
    (a, da), (b, db) = do.items()
    step = {**pa, a: da}
    return ax.l1_distance(f(f(x, pa, step), step, {**step, b: db}), f(x, pa, {**pa, a: da, b: db}))


def truth_effectiveness(
    truth: GroundTruth,
    train: cd.ColourDigits,
    test: cd.ColourDigits,
    do: Mapping[str, np.ndarray],
    oracles: Mapping[str, Any],
) -> pd.DataFrame:
    """Per test image: the oracles' scores on the true counterfactuals and on the clean image, and whether the oracle saw the counterfactual.

    The true ``do(digit = d')`` counterfactual is the bank exemplar of class ``d'`` with the image's style
    rank, so most of them are exemplars the digit oracle was trained on (in another hue). Effectiveness
    of the truth is then compared with the oracle's clean accuracy only on counterfactuals it did not see.

    Parameters
    ----------
    truth : GroundTruth
        The true Colour-Digits counterfactual function.
    train : ColourDigits
        The oracle's training split (its ``base`` exemplars are the ones the oracle saw).
    test : ColourDigits
        Test split.
    do : dict
        ``"digit"`` and ``"hue"`` -> counterfactual values.
    oracles : dict
        Digit and hue oracles.

    Returns
    -------
    pandas.DataFrame
        One row per test image: ``target exemplar``, ``seen by the oracle``, ``digit correct`` (on the
        counterfactual), ``clean digit correct``, ``hue error`` (on the ``do(hue)`` counterfactual) and
        ``clean hue error``.
    """
    _, labels, rank = cd.digit_bank(test.resolution)
    per_class = int(np.bincount(labels, minlength=10).min())
    target = np.asarray(do["digit"]) * per_class + np.rint(test.style * per_class - 0.5).astype(int)
    if not np.array_equal(labels[target], do["digit"]) or not np.allclose(rank[target], test.style):
        raise ValueError(
            "the digit bank is not ordered by class and style rank; truth_effectiveness cannot locate the counterfactual exemplars"
        )
    x, pa = test.x, test.parents
    dig = truth(x, pa, {**pa, "digit": do["digit"]})
    hue = truth(x, pa, {**pa, "hue": do["hue"]})
    return pd.DataFrame(
        {
            "target exemplar": target,
            "seen by the oracle": np.isin(target, train.base),
            "digit correct": oracles["digit"].score(dig, do["digit"]),
            "clean digit correct": oracles["digit"].score(x, pa["digit"]),
            "hue error": oracles["hue"].score(hue, do["hue"]),
            "clean hue error": oracles["hue"].score(x, pa["hue"]),
        }
    )
