"""``counterfactual="train"`` on a CPU (issue 35, item 7): a budget checked before anything is trained, with the
estimate in the refusal, and a progress bar for every stage (autoencoder, diffusion, each set of counterfactuals).

The images are the corner marks of ``tests/test_audit_images.py`` (16 x 16, a set no chapter uses).
"""

from __future__ import annotations

import pytest

from cflib.audit_images import audit_images
from cflib.validation import ValidationError

from .test_audit_images import corner_marks, reader, reads

TINY = {
    "config": {"latent_channels": 2, "vae_channels": [8, 8], "unet_channels": [16, 16]},
    "fit": {"vae_epochs": 1, "diffusion_epochs": 1, "batch_size": 32},
    "counterfactual": {"steps": 2, "t_star": 200},
}


def _run(x, frame, opts, progress=False):
    return audit_images(
        reads,
        x,
        frame,
        attribute="group",
        outcome="y",
        parents=["site"],
        counterfactual="train",
        attribute_reader=reader,
        train_options=opts,
        progress=progress,
        device="cpu",
    )


def test_a_request_over_the_budget_is_refused_with_its_estimate_before_training(tmp_path):
    x, frame = corner_marks(64, seed=3)
    with pytest.raises(ValidationError) as info:
        _run(x, frame, {**TINY, "budget_s": 1e-6, "cache_dir": str(tmp_path / "models")})
    message = str(info.value)
    assert message.startswith("counterfactual='train': 64 images would take about ") and "\n" not in message
    for part in ("autoencoder", "diffusion", "generation", "over the budget of 0 s", "budget_s"):
        assert part in message, message
    assert not (tmp_path / "models").exists() or not list((tmp_path / "models").glob("ldm-*.pt"))  # nothing trained
    with pytest.raises(ValidationError, match=r"train_options\['budget_s'\] must be seconds > 0 or None"):
        _run(x, frame, {**TINY, "budget_s": -1})
    with pytest.raises(ValidationError, match="allowed: budget_s, cache_dir, config, counterfactual, fit"):
        _run(x, frame, {**TINY, "epochs": 3})


def test_every_stage_has_a_progress_bar_and_the_report_states_the_estimate(tmp_path, capsys):
    x, frame = corner_marks(64, seed=4)
    r = _run(x, frame, {**TINY, "budget_s": 600, "cache_dir": str(tmp_path / "models")}, progress=True)
    err = capsys.readouterr().err
    for desc in (
        "autoencoder",
        "diffusion",
        "generation: counterfactuals",
        "generation: null interventions",
        "generation: round trips",
        "image audit",
    ):
        assert desc in err, desc
    assert "against a budget of 600 s" in r.provenance["counterfactual"]
    assert {"generator composition", "generator reversibility", "generator effectiveness"} <= set(r.rows.index)
