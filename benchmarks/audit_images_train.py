"""``counterfactual="train"`` on a CPU (issue 35, item 7): ``python -m benchmarks audit-images-train``.

The image audit trains the book's CLDM+D on the audited images and gives each image its three counterfactual sets
(the counterfactual, the null intervention, the round trip). Its budget on a CPU is
:data:`cflib.audit.images.generator.CPU_BUDGET_S` (300 s), the target being 1,000 grey 28 x 28 images on two cores
with :data:`cflib.audit.images.generator.CPU_TRAIN_DEFAULTS`. In a fresh process pinned to two threads this measures,
on *scanner marks* (substitute data made here, no chapter uses it: 28 x 28 sensor noise, a bright square in the
centre for label 1, and a binary ``group`` that brightens the top-left 6 x 6 corner, associated with the label):

- the estimate the audit makes before training (:func:`cflib.audit.images.generator.estimate_train_seconds`),
  and whether the default budget would refuse the request on this machine at this load;
- the wall time of the whole audit (budget lifted, so it runs whatever the estimate) and of its training and
  generation (the model is trained afresh in a temporary cache);
- the generator gate's rows, so the time is read beside what the trained generator achieves.

The load average before and after is stored: on a shared machine the seconds say little.
"""

from __future__ import annotations

import os
import tempfile
import time
from typing import Any

import numpy as np
import pandas as pd

SIZE = 28
#: The benchmark's request: the issue's example.
N_IMAGES = 1000
GATE_ROWS = ("generator composition", "generator reversibility", "generator effectiveness")


def scanner_marks(n: int, seed: int = 0) -> tuple[np.ndarray, pd.DataFrame]:
    """Substitute images: ``(n, 1, 28, 28)`` in [0, 1] and their ``group``, label ``y`` and parent ``site``."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.5).astype(int)
    a = (rng.random(n) < np.where(y == 1, 0.65, 0.35)).astype(int)
    x = np.full((n, 1, SIZE, SIZE), 0.3, dtype=np.float32)
    x += np.clip(rng.normal(0, 0.04, x.shape), -0.12, 0.12).astype(np.float32)
    r, c = rng.integers(9, 15, n), rng.integers(9, 15, n)
    for i in np.flatnonzero(y):
        x[i, 0, r[i] : r[i] + 5, c[i] : c[i] + 5] += rng.uniform(0.25, 0.45)
    x[:, 0, :6, :6] += 0.35 * a[:, None, None]
    return np.clip(x, 0, 1), pd.DataFrame({"group": a, "y": y, "site": rng.integers(0, 2, n)})


def _reader(x: np.ndarray) -> np.ndarray:
    return (x[:, 0, :6, :6].reshape(len(x), -1).mean(1) > 0.475).astype(int)


def _classifier(x: np.ndarray) -> np.ndarray:
    centre = x[:, 0, 9:20, 9:20].reshape(len(x), -1).max(1)
    return 1 / (1 + np.exp(-30 * (centre - 0.55)))


def case_audit_images_train(p: dict[str, Any]) -> dict[str, Any]:
    """One request: the estimate, then the audit with the budget lifted, timed; the gate's rows."""
    from cflib.audit.images import generator as gen
    from cflib.audit_images import audit_images
    from cflib.models.diffusion import LDMConfig

    n = int(p["n"])
    x, frame = scanner_marks(n, seed=int(p.get("seed", 0)))
    parts = gen.CPU_TRAIN_DEFAULTS
    cfg = LDMConfig(size=SIZE, n_classes=2, aux_classes=(2,), **parts["config"])
    aux = frame[["site"]].to_numpy(dtype=np.int64)
    t0 = time.perf_counter()
    est = gen.estimate_train_seconds(cfg, n, parts["fit"], parts["counterfactual"], aux, "cpu")
    t_estimate = time.perf_counter() - t0
    times: dict[str, float] = {}
    from cflib.audit.images import pipeline

    def timed_train(*args: Any, **kw: Any) -> Any:
        t = time.perf_counter()
        out = gen.train_generator(*args, **kw)
        times["training_s"] = time.perf_counter() - t
        return out

    load_before = list(os.getloadavg())
    with tempfile.TemporaryDirectory() as cache:
        pipeline.train_generator = timed_train  # time the training stage alone
        try:
            t = time.perf_counter()
            report = audit_images(
                _classifier,
                x,
                frame,
                attribute="group",
                outcome="y",
                parents=["site"],
                counterfactual="train",
                attribute_reader=_reader,
                train_options={"budget_s": None, "cache_dir": cache},
                progress=False,
                device="cpu",
            )
            wall = time.perf_counter() - t
        finally:
            pipeline.train_generator = gen.train_generator
    rows = report.rows
    return {
        "n": n,
        "size": SIZE,
        "settings": {k: dict(v) for k, v in parts.items()},
        "budget_s": gen.CPU_BUDGET_S,
        "estimate_s": est,
        "estimate_took_s": t_estimate,
        "default_budget_would_refuse": est["total"] > gen.CPU_BUDGET_S,
        "wall_s": wall,
        "training_s": times.get("training_s"),
        "rest_s": wall - times.get("training_s", 0.0),
        "within_budget": wall <= gen.CPU_BUDGET_S,
        "gate": {
            name: {
                k: (None if pd.isna(rows.loc[name, k]) else float(rows.loc[name, k]))
                for k in ("estimate", "ci_low", "ci_high")
            }
            | {"verdict": str(rows.loc[name, "verdict"])}
            for name in GATE_ROWS
        },
        "load_average_before": load_before,
        "load_average_after": list(os.getloadavg()),
    }
