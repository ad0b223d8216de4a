"""cflib runs wherever it is installed (issue 35, item 6): without a clone its caches go to the user's cache folder,
and a run writes nothing into the working folder but ``--out``.

The end-to-end test copies the ``cflib`` folder out of the clone (what ``pip install`` puts in site-packages) and runs
``python -m cflib audit`` on an image config from another folder, with no ``CFLIB_ROOT``: the audit trains its
attribute reader, which must land in the user cache (``XDG_CACHE_HOME``), not in the clone's ``_build/cache``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from cflib import paths

from .test_audit_images import corner_marks

ROOT = Path(__file__).resolve().parent.parent

MODULE = """
import numpy as np

MARK = np.zeros((1, 16, 16), dtype=bool)
MARK[0, :4, :4] = True


def classifier(x):
    centre = x[:, :, 5:13, 5:13].reshape(len(x), -1).max(1)
    return 1 / (1 + np.exp(-30 * (centre - 0.55)))


def counterfactual(x, pa, pa_star):
    delta = np.asarray(pa_star["group"], float) - np.asarray(pa["group"], float)
    return np.clip(x + (0.35 * delta)[:, None, None, None] * MARK, 0, 1)
"""


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def test_cache_dir_follows_cflib_cache_then_the_clone_then_the_user_cache(tmp_path, monkeypatch):
    for var in ("CFLIB_CACHE", "CFLIB_ROOT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(ROOT / "cflib")  # inside the clone that holds this cflib: the book's cache
    assert paths.cache_dir() == ROOT / "_build" / "cache"
    monkeypatch.chdir(tmp_path)  # another folder: the user's cache, nothing in the working folder
    assert paths.cache_dir() == paths.user_cache_dir() == (tmp_path / "xdg" / "cflib").resolve()
    monkeypatch.setenv("CFLIB_ROOT", str(tmp_path / "repo"))  # a repository named explicitly
    assert paths.cache_dir() == (tmp_path / "repo" / "_build" / "cache").resolve()
    monkeypatch.setenv("CFLIB_CACHE", str(tmp_path / "mine"))  # the user's own choice wins
    assert paths.cache_dir() == (tmp_path / "mine").resolve()


def test_fit_cached_writes_into_the_user_cache_outside_the_clone(tmp_path, monkeypatch):
    from cflib.runtime import fit_cached

    class Saved:
        def save(self, path):
            Path(path).write_text("weights")

    for var in ("CFLIB_CACHE", "CFLIB_ROOT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    model = fit_cached(Saved, load=lambda p: Saved(), key={"k": 1}, name="probe")
    assert model.cache_path.parent == (tmp_path / "xdg" / "cflib" / "models").resolve()
    assert model.cache_path.read_text() == "weights" and not list(work.iterdir())


@pytest.mark.skipif(sys.platform == "win32", reason="XDG_CACHE_HOME is the user cache on Linux and macOS")
def test_the_image_audit_runs_from_an_installed_copy_outside_any_clone(tmp_path):
    import yaml

    site = tmp_path / "site"
    shutil.copytree(ROOT / "cflib", site / "cflib", ignore=shutil.ignore_patterns("__pycache__"))
    work = tmp_path / "work"
    work.mkdir()
    x, frame = corner_marks(160, seed=7)
    np.savez(work / "marks.npz", images=x, **{c: frame[c].to_numpy() for c in frame.columns})
    (work / "imgmodel.py").write_text(MODULE)
    cfg = {
        "images": "marks.npz",
        "attribute": "group",
        "outcome": "y",
        "classifier": "imgmodel:classifier",
        "counterfactual": "imgmodel:counterfactual",
    }  # no attribute_reader: the audit trains one and caches it
    (work / "img.yaml").write_text(yaml.safe_dump(cfg))
    before = _tree(work)
    env = {k: v for k, v in os.environ.items() if k not in ("CFLIB_ROOT", "CFLIB_CACHE", "CFLIB_DATA", "PYTHONPATH")}
    env.update(
        PYTHONPATH=str(site),
        XDG_CACHE_HOME=str(tmp_path / "xdg"),
        MPLCONFIGDIR=str(tmp_path / "mpl"),
        PYTHONDONTWRITEBYTECODE="1",
        OMP_NUM_THREADS="1",
    )
    where = subprocess.run(
        [sys.executable, "-c", "import cflib; print(cflib.__file__)"], cwd=work, env=env, capture_output=True, text=True
    )
    assert where.stdout.strip() == str(site / "cflib" / "__init__.py"), where.stderr  # the copy, not the clone
    res = subprocess.run(
        [sys.executable, "-m", "cflib.cli", "audit", "img.yaml", "--out", "out", "--quiet"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "repository root" not in res.stderr
    written = _tree(work) - before
    assert (
        {"out", "out/report.json", "out/report.html"}
        <= written
        <= {"out", "out/report.json", "out/report.html", "out/model_card.md"}
    ), written
    import json

    doc = json.loads((work / "out" / "report.json").read_text())
    name = doc["provenance"]["attribute_reader"].rsplit(" ", 1)[-1]
    assert name.startswith("audit-reader-") and name.endswith(".pt")
    assert (tmp_path / "xdg" / "cflib" / "models" / name).is_file()
    assert not (ROOT / "_build" / "cache" / "models" / name).exists()
