"""Device selection, seeding and the figure helpers."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pytest
import torch

from cflib import plotting, runtime


def test_get_device_auto_matches_cuda_availability(monkeypatch):
    assert runtime.get_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert runtime.get_device("cpu").type == "cpu"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert runtime.get_device("auto").type == "cuda"
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(ValueError, match="no CUDA GPU"):
        runtime.get_device("cuda")
    with pytest.raises(ValueError, match="not a device"):
        runtime.get_device("tpu9")


def test_seed_everything_reproduces_numpy_and_torch():
    g1 = runtime.seed_everything(3)
    a = (g1.normal(size=3), np.random.rand(2), torch.rand(2))
    g2 = runtime.seed_everything(3)
    b = (g2.normal(size=3), np.random.rand(2), torch.rand(2))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert torch.equal(a[2], b[2])
    with pytest.raises(ValueError, match="seed"):
        runtime.seed_everything(-1)
    with pytest.raises(ValueError, match="seed"):
        runtime.as_generator(1.5)


def test_seed_everything_seeds_torch_when_it_is_first_imported():
    """Before torch is imported, seed_everything leaves it unimported and seeds it on import, as if seeded at once."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from cflib import runtime\n"
        "runtime.seed_everything(5)\n"
        "assert 'torch' not in sys.modules\n"
        "print(runtime.run_summary())\n"
        "import torch, torch.nn\n"
        "assert torch.__spec__.loader is torch.__loader__ and type(torch.__loader__).__name__ != '_Loader'\n"
        "print(torch.rand(3).tolist())\n"
        "runtime.seed_everything(6)\n"  # torch imported now: seeded at once
        "print(torch.rand(3).tolist())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout.splitlines()
    assert "torch not used" in out[0]
    torch.manual_seed(5)
    assert out[1] == str(torch.rand(3).tolist())
    torch.manual_seed(6)
    assert out[2] == str(torch.rand(3).tolist())


def test_environment_report_names_scale_and_device(monkeypatch):
    monkeypatch.setenv("CFLIB_SCALE", "smoke")
    text = runtime.environment_report()
    assert "scale        smoke" in text and "device" in text and "torch" in text


def test_run_summary_is_one_line(monkeypatch):
    monkeypatch.setenv("CFLIB_SCALE", "smoke")
    text = runtime.run_summary()
    assert "\n" not in text and "smoke scale" in text and "cpu" in text.lower()


_TABLE_OPTIONS = (
    "display.float_format",
    "display.max_colwidth",
    "display.max_columns",
    "display.width",
    "styler.format.precision",
)


def test_set_style_formats_tables_with_three_significant_figures():
    import pandas as pd

    with pd.option_context(*[x for o in _TABLE_OPTIONS for x in (o, pd.get_option(o))]):  # restored afterwards
        plotting.set_style()
        assert pd.get_option("display.max_colwidth") is None
        frame = pd.DataFrame({"x": [6.932, 0.0010000005131587386, 1.5e-3, 2.0], "s": ["a" * 120, "b", "c", "d"]})
        html = frame.to_html()
    assert "6.93" in html and "0.00100" in html and "2.00" in html and "a" * 120 in html
    assert "e+" not in html and "e-0" not in html and "0.0010000005" not in html and "..." not in html


def test_plot_helpers_return_axes_and_validate():
    import pandas as pd

    with pd.option_context(*[x for o in _TABLE_OPTIONS for x in (o, pd.get_option(o))]):
        plotting.set_style()
    fig, ax = plotting.subplots()
    assert plotting.line_with_band([1, 2], [1, 2], [0, 1], [2, 3], ax=ax) is ax
    assert plotting.qq_uniform(np.linspace(0.01, 0.99, 50), ax=ax) is ax
    assert plotting.scatter_with_fit([1, 2, 3, 4], [2, 4, 5, 9], ax=ax) is ax
    assert "r = " in ax.get_legend_handles_labels()[1][-1]
    axes = plotting.image_grid(np.zeros((2, 3, 8, 8)), row_labels=["a", "b"], col_labels=["x", "y", "z"])
    assert axes.shape == (2, 3)
    with pytest.raises(ValueError, match="row_labels"):
        plotting.image_grid(np.zeros((2, 3, 8, 8)), row_labels=["a"])
    with pytest.raises(ValueError, match="pvalues"):
        plotting.qq_uniform([0.5, 1.5])
    plt.close("all")


def test_the_alpha_line_has_a_colour_no_series_uses():
    from matplotlib.colors import to_hex

    from cflib.stats.replications import plot_pvalue_vs_eca

    assert plotting.ALPHA_COLOR.lower() not in {c.lower() for c in plotting.PALETTE}
    rng = np.random.default_rng(0)
    eca = rng.uniform(0, 1, 30)
    for i, series in enumerate(plotting.PALETTE):
        ax = plot_pvalue_vs_eca(eca, -3 * eca - rng.uniform(0.01, 0.2, 30), alpha=0.05, color=series)
        level = [ln for ln in ax.get_lines() if np.allclose(ln.get_ydata(), np.log10(0.05))]
        assert [to_hex(ln.get_color()) for ln in level] == [plotting.ALPHA_COLOR.lower()], i
        assert to_hex(ax.collections[0].get_facecolor()[0]) == series.lower()
        plt.close("all")


def test_image_grid_separates_groups_of_columns_by_gaps():
    images = np.random.default_rng(0).uniform(0, 1, (2, 5, 4, 4))
    axes = plotting.image_grid(images, col_labels=list("abcde"), panel=1.0, gaps_after=(1, 3))
    assert axes.shape == (2, 5)
    for c in range(5):
        np.testing.assert_array_equal(np.asarray(axes[1, c].images[0].get_array()), images[1, c])
    axes[0, 0].figure.canvas.draw()
    left = [axes[0, c].get_position().x0 for c in range(5)]
    width = axes[0, 0].get_position().width
    steps = np.diff(left) / width
    # a gap of half a panel after columns 1 and 3, none elsewhere
    assert steps[1] > steps[0] + 0.3 and steps[3] > steps[2] + 0.3
    assert len(axes[0, 0].figure.axes) == 10
    with pytest.raises(ValueError, match="gaps_after"):
        plotting.image_grid(images, gaps_after=(4,))
    plt.close("all")
