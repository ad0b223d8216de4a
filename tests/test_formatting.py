"""Numbers as a reader sees them: p-values never print as 0 or in e-notation, three significant figures."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from cflib.formatting import format_interval, format_number, format_percent, format_pvalue


@pytest.mark.parametrize(
    ("p", "text"),
    [
        (0.0, "< 0.001"),
        (1.8e-99, "< 0.001"),
        (0.000999, "< 0.001"),
        (0.001, "0.0010"),
        (0.0123, "0.012"),
        (0.04999, "0.050"),
        (0.5, "0.50"),
        (1.0, "1.0"),
    ],
)
def test_pvalues(p, text):
    assert format_pvalue(p) == text


def test_pvalue_text_is_never_zero_nor_e_notation_and_keeps_order():
    ps = np.r_[0.0, np.logspace(-300, 0, 400)]
    texts = [format_pvalue(float(p)) for p in ps]
    assert all(t != "0" and not re.search(r"\de", t) for t in texts)
    shown = [0.0 if t.startswith("<") else float(t) for t in texts]
    assert all(a <= b for a, b in zip(shown, shown[1:], strict=False))  # rounding never reverses two p-values
    assert format_pvalue(float("nan")) == "" and format_pvalue(0.02, floor=0.05) == "< 0.05"


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (0.012345, "0.0123"),
        (-0.18749, "-0.187"),
        (1.0, "1.00"),
        (0.09996, "0.100"),
        (32561, "32600"),
        (123.45, "123"),
        (0.0, "0.00"),
        (1e-5, "1.00e-05"),
    ],
)
def test_three_significant_figures(x, text):
    assert format_number(x) == text


def test_significant_figures_round_trip():
    rng = np.random.default_rng(0)
    for x in rng.uniform(-1, 1, 500) * 10.0 ** rng.integers(-3, 5, 500):
        t = format_number(float(x))
        assert math.isclose(float(t), float(f"{x:.2e}"), rel_tol=1e-12)
    assert format_number(float("nan"), missing="n/a") == "n/a" and format_number(float("-inf")) == "-inf"


def test_interval_and_percent():
    assert format_interval(-0.0123, 0.0456) == "[-0.0123, 0.0456]"
    assert format_interval(float("nan"), 1.0, missing="not estimable") == "not estimable"
    assert format_percent(0.1694) == "16.9%"


@pytest.mark.parametrize(
    ("call", "error", "name"),
    [
        (lambda: format_pvalue(1.5), ValueError, "p"),
        (lambda: format_pvalue(-0.1), ValueError, "p"),
        (lambda: format_pvalue(0.2, floor=0), ValueError, "floor"),
        (lambda: format_number("0.1"), TypeError, "value"),
        (lambda: format_number(True), TypeError, "value"),
        (lambda: format_number(0.1, digits=0), ValueError, "digits"),
        (lambda: format_interval("a", 1.0), TypeError, "low"),
    ],
)
def test_bad_input_names_the_argument(call, error, name):
    with pytest.raises(error, match=rf"^{name} "):
        call()
