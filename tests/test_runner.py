"""The papermill runner: parameters, scales, caching, failures and atomic outputs."""

from __future__ import annotations

import json

import nbformat
import pytest

from cflib import runner
from cflib.cli import main

pytestmark = pytest.mark.slow  # each test starts a kernel (a few seconds)


def test_parameters_are_parsed_from_the_tagged_cell(fake_repo):
    assert runner.notebook_parameters("demo/01-square.ipynb") == {"x": 2, "seed": 0, "fail_at": -1}
    assert runner.toc_notebooks() == ["demo/01-square.ipynb"]


def test_execute_writes_notebook_claims_and_stamp_then_caches(fake_repo):
    out = fake_repo / "out"
    r1 = runner.execute("demo/01-square.ipynb", "smoke", {"x": 3}, output_dir=out)
    assert r1.status == "executed"
    data = json.loads((out / "demo" / "01-square.claims.json").read_text())
    assert data["values"]["square"] == 9
    assert data["scale"] == "smoke"
    assert data["claims"][0]["verdict"] == "reproduced"
    stamp = json.loads((out / "demo" / "01-square.run.json").read_text())
    assert "claims.py" in stamp["modules"] and "scm/scm.py" not in stamp["modules"]
    assert runner.execute("demo/01-square.ipynb", "smoke", {"x": 3}, output_dir=out).status == "cached"
    # A different parameter value is a different run.
    assert runner.execute("demo/01-square.ipynb", "smoke", {"x": 4}, output_dir=out).status == "executed"


def test_changing_the_notebook_invalidates_the_cache(fake_repo):
    out = fake_repo / "out"
    runner.execute("demo/01-square.ipynb", "smoke", output_dir=out)
    path = fake_repo / "notebooks" / "demo" / "01-square.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(nbformat.v4.new_markdown_cell("A new paragraph."))
    nbformat.write(nb, path)
    assert runner.execute("demo/01-square.ipynb", "smoke", output_dir=out).status == "executed"


def test_a_changed_cflib_module_the_run_used_invalidates_the_cache(fake_repo):
    out = fake_repo / "out"
    runner.execute("demo/01-square.ipynb", "smoke", output_dir=out)
    stamp_path = out / "demo" / "01-square.run.json"
    stamp = json.loads(stamp_path.read_text())
    stamp["modules"]["claims.py"] = "0" * 64  # as if claims.py had been edited since
    stamp_path.write_text(json.dumps(stamp))
    assert runner.execute("demo/01-square.ipynb", "smoke", output_dir=out).status == "executed"


def test_failing_notebook_names_cell_and_leaves_no_result(fake_repo):
    out = fake_repo / "out"
    runner.execute("demo/01-square.ipynb", "smoke", output_dir=out)  # a good earlier result
    with pytest.raises(runner.NotebookError) as info:
        runner.execute("demo/01-square.ipynb", "smoke", {"x": 5, "fail_at": 5}, output_dir=out)
    assert "cell 2" in str(info.value) and "asked to fail at x=5" in str(info.value)
    assert "RuntimeError" in info.value.traceback
    d = out / "demo"
    assert not (d / "01-square.ipynb").exists() and not (d / "01-square.claims.json").exists()
    assert not (d / "01-square.run.json").exists()
    assert (d / "01-square.failed.ipynb").exists()
    assert not list(d.glob(".*"))  # no partial files


def test_unknown_parameter_is_an_error(fake_repo):
    with pytest.raises(ValueError, match="has no parameter 'y'"):
        runner.execute("demo/01-square.ipynb", "smoke", {"y": 1}, output_dir=fake_repo / "out")
    (fake_repo / "notebooks" / "params" / "smoke.yaml").write_text("demo/01-square.ipynb:\n  xx: 1\n")
    with pytest.raises(ValueError, match=r"smoke.yaml: notebook demo/01-square.ipynb has no parameter 'xx'"):
        runner.load_overrides("smoke")


def test_scale_yaml_overrides_and_validation(fake_repo):
    params = fake_repo / "notebooks" / "params"
    (params / "smoke.yaml").write_text("demo/01-square.ipynb:\n  x: 7\n")
    assert runner.resolve_parameters("demo/01-square.ipynb", "smoke") == {"x": 7}
    assert runner.resolve_parameters("demo/01-square.ipynb", "smoke", {"x": 8}) == {"x": 8}
    assert runner.resolve_parameters("demo/01-square.ipynb", "book") == {}
    (params / "smoke.yaml").write_text("demo/missing.ipynb:\n  x: 1\n")
    with pytest.raises(ValueError, match="does not exist"):
        runner.load_overrides("smoke")
    (params / "smoke.yaml").write_text("demo/01-square.ipynb: [1, 2\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        runner.load_overrides("smoke")
    with pytest.raises(ValueError, match="scale must be one of"):
        runner.load_overrides("huge")


def test_cli_reports_one_line_errors(fake_repo, capsys):
    assert (
        main(["run", "demo/01-square.ipynb", "--scale", "smoke", "-p", "nope=1", "--output", str(fake_repo / "o")]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cflib: error:") and "has no parameter 'nope'" in err[0]
    assert not (fake_repo / "o").exists() or not any((fake_repo / "o").rglob("*.ipynb"))
