"""The image section of the chapter (notebook 03): the toy chest X-ray zoo audited in one call.

The section runs :func:`cflib.audit_images.audit_images` on classifiers of the invariance chapter's zoo
(Ma et al., *AI alignment in medical imaging*, Sec. 6.3, scaled down; :func:`cflib.experiments.invariance.train_zoo`)
with the chapter's CLDM+D as the counterfactual generator (Sec. 3.2; trained by notebook 05 of that chapter with
the same settings, so the model cache serves it), a generator that does nothing (the identity of Monteiro et al.,
ICLR 2023, Sec. 4.1, which the gate must stop), and the renderer's true counterfactuals (the ground truth the
toy data give). The toy chest X-rays stand in for CheXpert / MIMIC-CXR (substitute data); the audit compares
two of their three groups, as the tabular audit compares two levels.

* :func:`audit_set`: test images of two groups as ``(n, 1, S, S)`` with their attribute frame;
* :func:`cldm_generator`: the cached CLDM+D as a counterfactual function ``f(x, pa, pa*)``;
* :class:`TrueCounterfactual`, :func:`identity_counterfactual`: the ground truth and the generator that does nothing;
* :func:`group_reader`: the attribute reader for effectiveness (cached);
* :func:`zoo_summary`: one row per audited classifier.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ...data.toy_cxr import DISEASES, ToyCXR, toy_cxr

__all__ = [
    "GROUPS_AUDITED",
    "CLDMCounterfactual",
    "TrueCounterfactual",
    "audit_set",
    "cldm_generator",
    "group_reader",
    "identity_counterfactual",
    "zoo_summary",
]

#: The two groups of the toy chest X-rays the audit compares (the paper's white and black patients).
GROUPS_AUDITED = (0, 1)


def audit_set(n: int, size: int, *, seed: int) -> tuple[np.ndarray, pd.DataFrame, ToyCXR]:
    """Toy chest X-rays of the two audited groups: images ``(n', 1, S, S)``, their attributes, and the data.

    Parameters
    ----------
    n : int
        Images drawn (those of the third group are left out, about 15%).
    size : int
        Side length.
    seed : int
        Seed of the draw.

    Returns
    -------
    (numpy.ndarray, pandas.DataFrame, ToyCXR)
        The images, a frame with ``group`` and one 0/1 column per disease, and the kept images as a
        :class:`ToyCXR` (for their true counterfactuals).
    """
    data = toy_cxr(n, size, seed=seed)
    data = data.subset(np.isin(data.A, GROUPS_AUDITED))
    frame = pd.DataFrame({"group": data.A, **{d: data.D[:, k] for k, d in enumerate(DISEASES)}})
    return data.images[:, None], frame, data


class CLDMCounterfactual:
    """A :class:`cflib.models.diffusion.LatentDiffusion` conditioned on the diseases as ``f(x, pa, pa*)``.

    Parameters
    ----------
    model : LatentDiffusion
        CLDM+D (``config.aux_classes`` holds one entry per disease).
    **kwargs
        ``t_star``, ``steps``, ``guidance``, ``aux_guidance`` of :meth:`LatentDiffusion.counterfactual`.
    """

    parent_names = ("group", *DISEASES)

    def __init__(self, model: Any, **kwargs: Any) -> None:
        self.model, self.kwargs = model, kwargs

    def __call__(self, x: np.ndarray, pa: Mapping[str, Any], pa_star: Mapping[str, Any]) -> np.ndarray:
        """Counterfactual images of ``x`` (``(n, 1, S, S)``) under ``do(group = pa_star["group"])``, diseases held.

        Parameters
        ----------
        x : numpy.ndarray
            Images.
        pa, pa_star : dict
            ``group`` and the diseases, factual and counterfactual.

        Returns
        -------
        numpy.ndarray
            ``(n, 1, S, S)`` images.
        """
        aux = np.stack([np.asarray(pa[d]) for d in DISEASES], axis=1)
        out = self.model.counterfactual(
            x[:, 0], np.asarray(pa["group"]), np.asarray(pa_star["group"]), aux=aux, **self.kwargs
        )
        return out[:, None]


def cldm_generator(
    train: ToyCXR,
    *,
    config: Any,
    fit: Mapping[str, Any],
    counterfactual: Mapping[str, Any],
    seed: int = 0,
    device: str = "auto",
) -> CLDMCounterfactual:
    """The invariance chapter's CLDM+D (trained on ``train``, cached) as a counterfactual function.

    The training call is the one :func:`cflib.models.diffusion.fit_cldm_pair` makes for its ``"CLDM+D"``:
    the same key, so the model notebook 05 of that chapter trained is loaded, not trained again.

    Parameters
    ----------
    train : ToyCXR
        Training images (all three groups, as in the invariance chapter).
    config : LDMConfig
        Architecture (its ``aux_classes`` are set from the diseases).
    fit : mapping
        Training settings (``vae_epochs``, ``diffusion_epochs``, ``batch_size``, ``lr``).
    counterfactual : mapping
        ``t_star``, ``steps``, ``guidance``, ``aux_guidance``.
    seed : int
        Seed.
    device : str
        Device.

    Returns
    -------
    CLDMCounterfactual
    """
    from ...models.diffusion import fit_latent_diffusion, independence_weights

    c = train.D
    aux_classes = tuple(max(2, int(col.max()) + 1) for col in c.T)
    model = fit_latent_diffusion(
        train.images,
        train.A,
        aux=c,
        sample_weight=independence_weights(train.A, c),
        config=replace(config, aux_classes=aux_classes),
        seed=seed,
        device=device,
        cache_dir=None,
        **dict(fit),
    )
    return CLDMCounterfactual(model, **dict(counterfactual))


class TrueCounterfactual:
    """The renderer's true counterfactuals of one :class:`ToyCXR`, as ``f(x, pa, pa*)`` (ground truth).

    Parameters
    ----------
    data : ToyCXR
        The audited images, in the order they are given to the audit.
    """

    parent_names = ("group", *DISEASES)

    def __init__(self, data: ToyCXR) -> None:
        self.data = data
        self._factual = data.images

    def __call__(self, x: np.ndarray, pa: Mapping[str, Any], pa_star: Mapping[str, Any]) -> np.ndarray:
        """The same patients re-rendered with ``pa_star["group"]``.

        Parameters
        ----------
        x : numpy.ndarray
            ``(n, 1, S, S)`` images of ``data`` (factual or re-rendered), in its order.
        pa, pa_star : dict
            Factual and counterfactual parents.

        Returns
        -------
        numpy.ndarray
        """
        if len(x) != self.data.n:
            raise ValueError(f"x must hold the {self.data.n} images of the data this function renders, got {len(x)}")
        return self.data.render(A=np.asarray(pa_star["group"]))[:, None]


def identity_counterfactual(x: np.ndarray, pa: Mapping[str, Any], pa_star: Mapping[str, Any]) -> np.ndarray:
    """A generator that does nothing: every counterfactual is the factual image (Monteiro et al., Sec. 4.1).

    Parameters
    ----------
    x : numpy.ndarray
        Images.
    pa, pa_star : dict
        Ignored.

    Returns
    -------
    numpy.ndarray
        A copy of ``x``.
    """
    return np.array(x, copy=True)


# the names of the parents the audit passes (cflib.audit.images.generator.as_function reads parent_names); mypy does
# not model attributes set on a function (python/mypy#2087)
identity_counterfactual.parent_names = ("group", *DISEASES)  # type: ignore[attr-defined]


def group_reader(
    train: ToyCXR, *, epochs: int, device: str = "auto", seed: int = 0
) -> Callable[[np.ndarray], np.ndarray]:
    """The attribute reader of the gate: a small CNN telling the two audited groups apart (cached).

    Trained on the training images of the two groups and on blurred copies of them, like the invariance
    chapter's judges, so that it reads the soft-tissue density of the trace rather than the sensor noise that
    no autoencoder reproduces.

    Parameters
    ----------
    train : ToyCXR
        Training images.
    epochs : int
        Epochs.
    device : str
        Device.
    seed : int
        Seed.

    Returns
    -------
    callable
        ``images (n, 1, S, S) -> group`` (0 or 1), with attribute ``model`` (the SmallCNN).
    """
    from scipy.ndimage import gaussian_filter

    from ...models.cnn_zoo import SmallCNN
    from ...runtime import fit_cached

    keep = np.isin(train.A, GROUPS_AUDITED)
    imgs = train.images[keep]
    x = np.concatenate([imgs, gaussian_filter(imgs, sigma=(0, 1, 1))])
    y = np.tile((train.A[keep] == GROUPS_AUDITED[1]).astype(np.int64), 2)
    model = fit_cached(
        lambda: SmallCNN("cnn-s", train.size, 1, seed=seed).fit(x, y, epochs=epochs, device=device, seed=seed),
        load=lambda p: SmallCNN.load(p, device=device),
        key={"x": x, "y": y, "epochs": epochs, "seed": seed},
        code=[SmallCNN],
        name="audit-group-reader",
    )

    def read(images: np.ndarray) -> np.ndarray:
        return np.where(model.predict(images[:, 0]) == 1, GROUPS_AUDITED[1], GROUPS_AUDITED[0])

    read.model = model  # type: ignore[attr-defined]  # an attribute set on a function (python/mypy#2087)
    return read


def zoo_summary(reports: Mapping[str, Any]) -> pd.DataFrame:
    """One row per audit: the gate, ECA with its interval, and the CIT-LR and CF-CLOT verdicts.

    Parameters
    ----------
    reports : mapping
        Label -> :class:`cflib.audit_images.ImageAuditReport`.

    Returns
    -------
    pandas.DataFrame
    """
    rows = []
    for label, r in reports.items():
        t = r.rows
        gate = (
            "pass"
            if all(
                str(t.loc[f"generator {k}", "verdict"]).startswith("pass")
                for k in ("composition", "reversibility", "effectiveness")
            )
            else "fail"
        )
        rows.append(
            {
                "audit": label,
                "gate": gate,
                "effectiveness": t.loc["generator effectiveness", "estimate"],
                "ECA": t.loc["ECA", "estimate"],
                "ECA low": t.loc["ECA", "ci_low"],
                "ECA high": t.loc["ECA", "ci_high"],
                "CIT-LR p": t.loc["CIT-LR", "pvalue"],
                "CIT-LR": t.loc["CIT-LR", "verdict"],
                "DP p": t.loc["DP", "pvalue"],
            }
        )
    return pd.DataFrame(rows).set_index("audit")
