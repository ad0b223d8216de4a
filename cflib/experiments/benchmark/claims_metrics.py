"""The claims of notebook 04: do the proxy metrics rank configurations like the true counterfactual error (X2, X3)?"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from ... import claims, verdicts
from .config import MODEL_LABELS
from .intervals import paired_difference
from .parts import NOT_PAPER, Part, band_part, record_claim, side_part

#: Why the X2 claims are the book's own findings (issue 38): they had no kind, so they counted as reproductions.
X2_CHANGE = (
    "the book's own finding, not a reproduction (issue 38): the notes' X2 question (§5), not a claim of the paper, "
    "which only uses the metrics to rank models; it had no kind and counted as a reproduction"
)


def claims_04(results: Mapping[str, Any]) -> pd.DataFrame:
    """Claims of notebook 04: do the proxy metrics rank configurations like the true counterfactual error?

    Each X2 claim needs Spearman's rho > 0 across the model configurations (a Fisher-z interval over
    configurations); X3 checks the identity row (exact values, and a t interval of its per-image true
    error). Records ``rho_composition_all`` and ``rho_composition_models``.

    Parameters
    ----------
    results : mapping
        ``agreement`` from :func:`~cflib.experiments.benchmark.agreement.rank_agreement`, and ``configs`` and
        ``per_image`` from :func:`~cflib.experiments.benchmark.agreement.score_configurations`.

    Returns
    -------
    pandas.DataFrame
        The rows of :func:`cflib.claims.claims_table` for the keys recorded here.
    """
    claims.require(results, ("agreement", "configs", "per_image"), "claims_04")
    A, configs, per_image = results["agreement"], results["configs"], results["per_image"]
    rho_all, rho_mod = A[("Spearman rho", "all configurations")], A[("Spearman rho", "models only")]
    n_mod = int((configs["kind"] == "model").sum())
    comp = "composition l1_pixel m=1"
    claims.record("rho_composition_all", float(rho_all[comp]))
    claims.record("rho_composition_models", float(rho_mod[comp]))
    quote = (
        "Rank correlation (Spearman) across models between each no-ground-truth metric and the true counterfactual error "
        "‖x* − x*_true‖. For example: does lower composition or CLD go with lower true error?"
    )
    source = f"notes §5 X2, {NOT_PAPER}"
    evidence = f"Spearman across {n_mod} model configurations (three VAE/HVAE at each temperature, two GANs)"
    more = (
        "the units are model configurations: more temperatures or training seeds add them, and they are not independent"
    )

    def agrees(col: str) -> Part:
        return side_part(
            f"Spearman rho({col}, true error), models only",
            verdicts.correlation_interval(
                float(rho_mod[col]),
                n_mod,
                spearman=True,
                unit="model configurations (they share trained models, so it is optimistic)",
            ),
            "above",
        )

    record_claim(
        "X2-composition",
        "Better composition goes with counterfactuals closer to the truth (rank agreement across configurations).",
        [agrees(comp)],
        "rho",
        paper="implicit (composition is used to rank models)",
        ours=f"rho = {rho_all[comp]:.2f} (all), {rho_mod[comp]:.2f} (models only)",
        evidence=evidence,
        quote=quote,
        source=source,
        more=more,
        kind=claims.FINDING,
        change=X2_CHANGE,
    )
    eff_cols = [c for c in rho_mod.index if c.startswith("effectiveness")]
    record_claim(
        "X2-effectiveness",
        "Effectiveness (error of the anti-causal predictors) ranks configurations like the true error.",
        [agrees(c) for c in eff_cols],
        "each attribute",
        paper="implicit",
        ours={c: round(float(rho_mod[c]), 2) for c in eff_cols},
        evidence=evidence,
        quote=quote,
        source=source,
        more=more,
        kind=claims.FINDING,
        change=X2_CHANGE,
    )
    for key, col in (("X2-realism", "Fréchet"), ("X2-minimality", "CLD")):
        record_claim(
            key,
            f"{col} ranks configurations like the true error.",
            [agrees(col)],
            "rho",
            paper="implicit",
            ours=f"rho = {rho_mod[col]:.2f} (models only), {rho_all[col]:.2f} (all)",
            evidence=evidence,
            quote=quote,
            source=source,
            more=more,
            kind=claims.FINDING,
            change=X2_CHANGE,
        )
    identity, true = MODEL_LABELS["identity"], MODEL_LABELS["true"]

    def unit_error(label: str) -> np.ndarray:
        return np.mean([np.asarray(v, float) for v in per_image[label]["true_error"].values()], axis=0)

    exact = verdicts.exact
    x3 = [
        side_part("identity composition^1 (pixel)", exact(configs.loc[identity, comp]), "below", 0.0, inclusive=True),
        band_part("identity CLD", exact(configs.loc[identity, "CLD"]), 0.2954 - 1e-4, 0.2954 + 1e-4),
        side_part(
            "identity true error - true counterfactual's (grey levels)",
            paired_difference(unit_error(identity), unit_error(true)),
            "above",
            1.0,
        ),
    ]
    record_claim(
        "X3",
        "The identity map has perfect composition and a CLD of 0.2954 while its counterfactuals are wrong.",
        x3,
        "the three parts",
        paper="implied by Eq. 7 and Eq. 9 (notes: 'minimality can reward doing nothing')",
        ours=f"composition {configs.loc[identity, comp]:.1f}, CLD {configs.loc[identity, 'CLD']:.4f}, true error {configs.loc[identity, 'true error']:.1f}",
        evidence="exact values of the identity row; its per-image true error against the true counterfactual's",
        quote="Always report the identity baseline next to CLD, and read minimality together with effectiveness.",
        source=f"notes §7.15 ('Minimality ↓' can reward doing nothing), {NOT_PAPER}",
        kind="sanity check",
    )
    return claims.rows(["X2-composition", "X2-effectiveness", "X2-realism", "X2-minimality", "X3"])
