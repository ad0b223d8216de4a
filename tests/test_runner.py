"""The papermill runner: parameters, scales, caching, failures and atomic outputs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import nbformat
import pytest

from cflib import runner
from cflib.cli import main

from .conftest import make_notebook

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


def _blocking_notebooks(repo, names=("a", "b", "c")):
    """Notebooks demo/<name>.ipynb that record their name; 'c' waits while the file <repo>/block exists."""
    for name in names:
        wait = (
            "while (root / 'block').exists() and time.time() < t0 + 300:\n    time.sleep(0.2)\n" if name == "c" else ""
        )
        make_notebook(
            repo / "notebooks" / "demo" / f"{name}.ipynb",
            "seed = 0\n",
            f"import os, time\nfrom pathlib import Path\nfrom cflib import claims\nroot = Path(os.environ['CFLIB_ROOT'])\n"
            f"t0 = time.time()\n{wait}claims.record('name', {name!r})\n",
        )
    return [f"demo/{n}.ipynb" for n in names]


def _tree(folder):
    """Every file under a folder with its size and modification time (what 'touching nothing' keeps)."""
    return {p.relative_to(folder).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.rglob("*")}


def _cli(repo, *args):
    env = {**os.environ, "CFLIB_ROOT": str(repo)}
    return [sys.executable, "-m", "cflib.cli", *args], env


def _wait_for(predicate, what, seconds=240):
    deadline = time.time() + seconds
    while not predicate():
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_interrupted_run_keeps_the_finished_notebooks_and_resumes(fake_repo):
    """SIGTERM (or Ctrl-C) while one notebook runs: the finished ones stay, the running one leaves nothing under its
    final name and no partial file, and the next run reuses the finished ones and executes only the missing one."""
    names = _blocking_notebooks(fake_repo)
    (fake_repo / "block").touch()
    out = fake_repo / "_build" / "executed" / "smoke" / "demo"
    cmd, env = _cli(fake_repo, "run", *names, "--scale", "smoke", "--jobs", "3")
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(lambda: (out / "a.run.json").exists() and (out / "b.run.json").exists(), "a and b to finish")
        assert (out / ".c.partial.ipynb").exists() or (out / ".c.ipynb.input.ipynb").exists()  # c is running
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "cflib: interrupted: 2 of 3 notebook(s) finished and are kept" in err
    assert "Traceback" not in err and "KeyboardInterrupt caught in kernel" not in err
    assert not (out / "c.ipynb").exists() and not (out / "c.run.json").exists() and not (out / "c.claims.json").exists()
    assert not [p.name for p in out.glob(".*")]  # no partial file of c
    (fake_repo / "block").unlink()
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=400)
    assert res.returncode == 0, res.stderr
    assert "demo/a.ipynb: cached" in res.stderr and "demo/b.ipynb: cached" in res.stderr
    assert "demo/c.ipynb: executed" in res.stderr
    assert json.loads((out / "c.claims.json").read_text())["values"]["name"] == "c"


def test_a_notebook_starts_only_after_the_notebooks_it_must_follow(fake_repo):
    """Two jobs, order [c, b, a] with b after c: a takes the free job while c runs, b starts once c has ended; a
    cycle of cflib.after is refused before anything runs."""
    names = _blocking_notebooks(fake_repo)  # c sleeps while <repo>/block exists
    for name in ("a", "b"):  # each records when it started
        path = fake_repo / "notebooks" / "demo" / f"{name}.ipynb"
        nb = nbformat.read(path, as_version=4)
        nb.cells.append(nbformat.v4.new_code_cell("claims.record('start', t0)"))
        if name == "b":
            nb.metadata["cflib"] = {"after": ["demo/c.ipynb"]}
        nbformat.write(nb, path)
    assert runner.run_after("demo/b.ipynb") == ["demo/c.ipynb"] and runner.run_after("demo/a.ipynb") == []
    (fake_repo / "block").touch()
    out = fake_repo / "out"
    done = {}
    thread = threading.Thread(
        target=lambda: done.update(r=runner.run(names[::-1], "smoke", output_dir=out, jobs=2, log=None))
    )
    thread.start()
    _wait_for(lambda: (out / "demo" / "a.run.json").exists(), "a to finish beside c")
    time.sleep(3)  # a free job: b would have started by now if it did not wait for c
    assert not (out / "demo" / "b.run.json").exists() and not (out / "demo" / ".b.partial.ipynb").exists()
    released = time.time()
    (fake_repo / "block").unlink()
    thread.join(timeout=240)
    assert [r.notebook for r in done["r"]] == names[::-1]  # results in the order given
    assert json.loads((out / "demo" / "b.claims.json").read_text())["values"]["start"] >= released
    path = fake_repo / "notebooks" / "demo" / "c.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.metadata["cflib"] = {"after": ["demo/b.ipynb"]}
    nbformat.write(nb, path)
    with pytest.raises(ValueError, match=r"wait on each other .*break the cycle"):
        runner.run(names, "smoke", output_dir=fake_repo / "out2", jobs=2, log=None)
    assert not (fake_repo / "out2" / "demo").exists()


def test_a_second_run_or_book_into_the_same_folder_stops_in_one_line_and_touches_nothing(fake_repo):
    names = _blocking_notebooks(fake_repo, ("c",))
    (fake_repo / "block").touch()
    build = fake_repo / "_build"
    cmd, env = _cli(fake_repo, "run", *names, "--scale", "smoke")
    first = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    holder = subprocess.Popen(  # what `cflib book` holds while it builds
        [
            sys.executable,
            "-c",
            "import sys, time\nfrom cflib.runner import folder_lock\n"
            f"with folder_lock({str(build)!r}, 'cflib book', '.cflib-book.lock'):\n    print('held', flush=True)\n"
            "    time.sleep(300)\n",
        ],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        _wait_for(
            lambda: (
                (build / "executed" / "smoke" / "demo" / ".c.partial.ipynb").exists()
                or (build / "executed" / "smoke" / "demo" / ".c.ipynb.input.ipynb").exists()
            ),
            "the first run",
        )
        before = _tree(build)
        for args in (("run", *names, "--scale", "smoke"), ("book", "--scale", "smoke")):
            c2, _ = _cli(fake_repo, *args)
            second = subprocess.run(c2, env=env, capture_output=True, text=True, timeout=120)
            lines = second.stderr.strip().splitlines()
            assert second.returncode == 3 and len(lines) == 1, second.stderr
            what = "cflib book" if args[0] == "book" else "cflib run"
            assert lines[0].startswith(f"cflib: another {what} is writing ") and f"{build}" in lines[0]
            assert f"pid {first.pid if args[0] == 'run' else holder.pid} (" in lines[0]
        assert _tree(build) == before  # the second one wrote nothing
    finally:
        first.kill()
        holder.kill()
        first.wait()
        holder.wait()


def test_a_kernel_killed_mid_run_fails_its_notebook_in_one_message_and_leaves_no_result(fake_repo):
    make_notebook(
        fake_repo / "notebooks" / "demo" / "01-square.ipynb",
        "x = 2\nseed = 0\nfail_at = -1\n",
        "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n",
    )
    out = fake_repo / "out"
    with pytest.raises(runner.NotebookError, match="its kernel died while it ran"):
        runner.execute("demo/01-square.ipynb", "smoke", output_dir=out)
    d = out / "demo"
    assert not (d / "01-square.ipynb").exists() and not (d / "01-square.run.json").exists()
    assert not list(d.glob(".*"))  # no partial file
