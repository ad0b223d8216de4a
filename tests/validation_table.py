"""The shared form of the malformed-call tables (test_validation*, issue 19): a row and its one-line check."""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import pytest

import cflib


@dataclass(frozen=True)
class Case:
    """One malformed call, the error (or warning) it must raise and the names its message must contain."""

    id: str
    call: Callable[..., object]
    error: type
    names: tuple[str, ...]


def case(id: str, error: type, names: str | tuple[str, ...], call: Callable[..., object]) -> Case:
    return Case(id, call, error, (names,) if isinstance(names, str) else names)


def raised_in_cflib(exc: BaseException) -> bool:
    """Whether the innermost frame of the traceback lies in cflib's own code (not numpy, scipy, torch, yaml)."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and "/cflib/" in frames[-1].filename.replace("\\", "/")


def one_clear_line(c: Case, *args: object, in_cflib: bool = True) -> str:
    """Run ``c.call(*args)``; check it raises (or warns) ``c.error`` with one line naming ``c.names``.

    Returns the message. ``in_cflib`` also requires an error to be raised from cflib's own code.
    """
    if issubclass(c.error, Warning):
        with pytest.warns(c.error) as record:
            c.call(*args)
        message = str(next(w.message for w in record if issubclass(w.category, c.error)))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cflib.CflibWarning)
            with pytest.raises(c.error) as info:
                c.call(*args)
        message = str(info.value)
        if in_cflib:
            assert raised_in_cflib(info.value), f"raised outside cflib: {traceback.extract_tb(info.tb)[-1].filename}"
    assert "\n" not in message, message
    for name in c.names:
        assert name in message, f"{name!r} not in: {message}"
    return message
