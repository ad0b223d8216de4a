"""The ``cflib`` command: run notebooks, sweeps, the book, the reproduction report, audits and data set-up."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

__all__ = ["main"]


def _parse_params(items: list[str]) -> dict:
    out = {}
    for item in items:
        if "=" not in item:
            raise ValueError(f"-p expects NAME=VALUE (a YAML value), got {item!r}")
        k, v = item.split("=", 1)
        if not k.strip():
            raise ValueError(f"-p expects NAME=VALUE with a parameter name before '=', got {item!r}")
        try:
            out[k.strip()] = yaml.safe_load(v)
        except yaml.YAMLError as exc:
            first = " ".join(str(exc).split())
            raise ValueError(f"-p {k.strip()}: {v!r} is not a YAML value ({first})") from None
    return out


def _existing(path: Path | None, option: str, *, directory: bool = False) -> None:
    """A path named in an option must exist (a file, or a folder where ``directory``)."""
    if path is None:
        return
    if not path.exists():
        raise FileNotFoundError(f"{option}: {path} does not exist")
    if directory and not path.is_dir():
        raise FileNotFoundError(f"{option}: {path} is not a folder")
    if not directory and path.is_dir():
        raise FileNotFoundError(f"{option}: {path} is a folder, expected a file")


def _positive(value: int | None, option: str) -> None:
    if value is not None and value < 1:
        raise ValueError(f"{option} must be a positive integer, got {value}")


def _stopped(exc: Exception) -> int:
    """One line for a run that did not go to its end for a reason other than a notebook's error."""
    from .runner import BuildLocked, Interrupted

    print(f"cflib: {' '.join(str(exc).split())}", file=sys.stderr)
    if isinstance(exc, BuildLocked):
        return 3
    return 130 if isinstance(exc, Interrupted) else 1


def _cmd_run(args: argparse.Namespace) -> int:
    from .kernels import KernelStartError
    from .runner import BuildLocked, Interrupted, run

    _positive(args.jobs, "--jobs")
    try:
        run(
            args.notebooks or None,
            args.scale,
            output_dir=args.output,
            force=args.force,
            jobs=args.jobs,
            parameters=_parse_params(args.param) or None,
        )
    except (BuildLocked, Interrupted, KernelStartError) as exc:
        return _stopped(exc)
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from .runner import BuildLocked
    from .sweep import run_sweep

    _existing(args.file, "sweep file")
    _positive(args.workers, "--workers")
    try:
        result = run_sweep(
            args.file,
            scheduler=args.scheduler,
            workers=args.workers,
            output=args.output,
            force=args.force,
            shard=args.shard,
            scale=args.scale,
        )
    except BuildLocked as exc:
        return _stopped(exc)
    print(f"{result.table_path}: {len(result.table)} rows, {result.n_failed} failed point(s)")
    return 1 if result.n_failed else 0


def _cmd_merge(args: argparse.Namespace) -> int:
    from .sweep import merge_shards

    _existing(args.file, "sweep file")
    result = merge_shards(args.file, args.inputs, output=args.output)
    print(f"{result.table_path}: {len(result.table)} rows, {result.n_failed} failed point(s)")
    return 1 if result.n_failed else 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .claims import gather, report_markdown
    from .paths import build_dir

    _existing(args.directory, "--directory", directory=True)
    if args.output is not None:
        _existing(args.output.parent, "--output's folder", directory=True)
    directory = args.directory or build_dir() / "executed" / args.scale
    text = report_markdown(gather(directory))
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _cmd_audit(args: argparse.Namespace) -> int:
    from .audit import audit_from_config

    if args.fail_on is not None and not args.fail_on.strip():
        raise ValueError("--fail-on: give check names such as Ctf-DE,DP, or any")
    if args.require_clear is not None and not args.require_clear.strip():
        raise ValueError("--require-clear: give check names such as ECA,DP, or any")
    if args.junit is not None:
        if args.junit.is_dir():
            raise FileNotFoundError(f"--junit: {args.junit} is a folder, expected a file name such as audit-junit.xml")
        folder = args.junit.parent if str(args.junit.parent) else Path(".")
        if folder.resolve() != Path(args.out).resolve():  # --out's folder is made by the audit itself
            _existing(folder, "--junit's folder", directory=True)
    _existing(args.config, "config")
    report = audit_from_config(
        args.config,
        args.out,
        progress=not args.quiet,
        fail_on=args.fail_on,
        data=args.data,
        scheduler=args.scheduler,
        require_clear=args.require_clear,
    )
    gated = args.fail_on is not None or args.require_clear is not None
    failed = report.gate(args.fail_on, args.require_clear) if gated else []
    status = report.status()
    why = ", ".join(f"{c} ({status[c]})" for c in failed)
    if args.junit is not None:
        report.to_junit(args.junit, fail_on=args.fail_on, require_clear=args.require_clear)
    print(report.plain_summary())
    print()
    print(report.summary(formatted=True).to_string())
    written = [args.out / n for n in ("report.json", "report.html", "model_card.md")] + (
        [args.junit] if args.junit else []
    )
    print("wrote " + ", ".join(map(str, written)))
    if failed:
        print(f"cflib: the gate fails on {why}", file=sys.stderr)
        return 1
    return 0


def _cmd_book(args: argparse.Namespace) -> int:
    from .book import build
    from .kernels import KernelStartError
    from .runner import BuildLocked, Interrupted

    _positive(args.jobs, "--jobs")
    try:
        build(scale=args.scale, jobs=args.jobs, force=args.force)
    except (BuildLocked, Interrupted, KernelStartError) as exc:
        return _stopped(exc)
    return 0


def _cmd_data(args: argparse.Namespace) -> int:
    from .data.real import fetch

    _existing(args.wheel, "--wheel")
    fetch(tuple(args.names) if args.names else None, wheel=args.wheel)
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``cflib`` command.

    Returns
    -------
    argparse.ArgumentParser
    """
    p = argparse.ArgumentParser(prog="cflib", description="Counterfactual auditing: notebooks, sweeps, book, data.")
    sub = p.add_subparsers(dest="command", required=True)

    stops = (
        "Exit status: 0 done, 1 a notebook failed or its kernel did not start, 2 bad input, 3 another run is "
        "writing the same folder (nothing done), 130 interrupted (finished notebooks are kept: run again to resume). "
        "Kernels: CFLIB_KERNEL_TRANSPORT (ipc|tcp), CFLIB_KERNEL_START_TIMEOUT (s), CFLIB_KERNEL_START_TRIES."
    )
    r = sub.add_parser("run", help="execute notebooks with papermill at a scale (cached)", epilog=stops)
    r.add_argument("notebooks", nargs="*", help="paths relative to notebooks/ (default: every notebook in _toc.yml)")
    r.add_argument("--scale", choices=("smoke", "book", "full"), default="book")
    r.add_argument("--jobs", type=int, default=1, help="notebooks executed at once")
    r.add_argument("--force", action="store_true", help="ignore the cache")
    r.add_argument("--output", type=Path, default=None, help="output folder (default _build/executed/<scale>)")
    r.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE", help="override a parameter")
    r.set_defaults(func=_cmd_run)

    s = sub.add_parser("sweep", help="run a notebook over a parameter grid on Dask")
    s.add_argument("file", type=Path, help="sweep definition (notebooks/sweeps/*.yaml)")
    s.add_argument("--scheduler", default=None, help="address of an existing Dask scheduler (tcp://host:port)")
    s.add_argument("--workers", type=int, default=None, help="workers of the embedded LocalCluster")
    s.add_argument("--output", type=Path, default=None, help="output folder (default _build/sweeps/<name>)")
    s.add_argument("--force", action="store_true", help="re-run completed points")
    s.add_argument(
        "--scale",
        choices=("smoke", "book", "full"),
        default=None,
        help="overrides applied under every point (default: the sweep file's scale)",
    )
    s.add_argument(
        "--shard",
        default=None,
        metavar="K/N",
        help="run only the K-th of N slices of the grid (combine the tables with `cflib merge`)",
    )
    s.set_defaults(func=_cmd_sweep)

    m = sub.add_parser("merge", help="combine the shard tables of a sweep run with --shard K/N")
    m.add_argument("file", type=Path, help="the sweep definition the shards ran")
    m.add_argument("inputs", nargs="+", type=Path, help="shard tables or folders holding them (searched recursively)")
    m.add_argument("--output", type=Path, default=None, help="output folder (default _build/sweeps/<name>)")
    m.set_defaults(func=_cmd_merge)

    b = sub.add_parser("book", help="execute the notebooks (cached) and build the HTML book", epilog=stops)
    b.add_argument("--scale", choices=("smoke", "book", "full"), default="book")
    b.add_argument("--jobs", type=int, default=1)
    b.add_argument("--force", action="store_true")
    b.set_defaults(func=_cmd_book)

    rep = sub.add_parser("report", help="print the reproduction report (markdown) from executed notebooks")
    rep.add_argument("--scale", choices=("smoke", "book", "full"), default="book")
    rep.add_argument("--directory", type=Path, default=None)
    rep.add_argument("--output", type=Path, default=None)
    rep.set_defaults(func=_cmd_report)

    a = sub.add_parser("audit", help="audit a model on a data set from a YAML config (JSON and HTML report)")
    a.add_argument(
        "config",
        type=Path,
        help="YAML: data, roles, model (see cflib.audit.audit_from_config); or, for an image "
        "classifier, images, attribute, classifier, counterfactual (see cflib.audit_images.audit_images_from_config)",
    )
    a.add_argument("--out", type=Path, required=True, help="folder for report.json and report.html")
    a.add_argument("--quiet", action="store_true", help="no progress bar")
    a.add_argument(
        "--data",
        default=None,
        metavar="PATH",
        help="the data, replacing the config's (relative to the working folder): a CSV file, or Parquet data "
        "(a .parquet file, a folder, or a quoted glob such as 'decisions/*.parquet') audited on a Dask cluster",
    )
    a.add_argument(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Dask scheduler (tcp://host:port) that audits Parquet data; default a LocalCluster of one "
        "single-threaded worker per core",
    )
    a.add_argument(
        "--fail-on",
        default=None,
        metavar="CHECK[,CHECK...]",
        help="exit 1 when a named check is flagged or not estimable (e.g. Ctf-DE,DP,PP; 'any' for every check, "
        "'model' for every check of the predictions); 0 otherwise, 2 on bad input",
    )
    a.add_argument(
        "--require-clear",
        default=None,
        metavar="CHECK[,CHECK...]",
        help="exit 1 unless every named check is clear (within its tolerance): flagged, inconclusive and not "
        "estimable all fail",
    )
    a.add_argument(
        "--junit",
        type=Path,
        default=None,
        metavar="FILE",
        help="also write one JUnit test case per check (failed: the checks the gate fails on)",
    )
    a.set_defaults(func=_cmd_audit)

    d = sub.add_parser("data", help="real-data set-up")
    dsub = d.add_subparsers(dest="data_command", required=True)
    f = dsub.add_parser("fetch", help="fetch COMPAS, Adult and German credit into data/ (sha256-verified)")
    f.add_argument("names", nargs="*", help="compas, adult, german (default: all)")
    f.add_argument("--wheel", type=Path, default=None, help="a local fairness-0.1.8 wheel to extract from")
    f.set_defaults(func=_cmd_data)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``cflib`` console script.

    Parameters
    ----------
    argv : list of str, optional
        Arguments (default ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status: 0 success, 1 a notebook or sweep point failed, 2 bad input.
    """
    from .runner import NotebookError

    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except NotebookError as exc:
        if exc.traceback:
            print(exc.traceback, file=sys.stderr)
        print(f"cflib: error: {exc}", file=sys.stderr)
        return 1
    except (ValueError, TypeError, OSError) as exc:  # bad input, a missing or unreadable path
        print(f"cflib: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
