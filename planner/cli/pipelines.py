"""``ivm pipelines run`` (``spark-pipelines run`` set up for incremental views: planner/pipelines/) and
``ivm pipelines land`` (a slice of a stream, by ``_seq``, into a pipeline's change files)."""

from __future__ import annotations

import argparse
from pathlib import Path

from catalog.load import load_catalog
from planner.cli.common import CATALOG_HELP, CommandLineError


def add_pipelines(sub: argparse._SubParsersAction) -> None:
    pipelines = sub.add_parser("pipelines", help="Spark Declarative Pipelines holding incremental views").add_subparsers(
        dest="pipelines_command", required=True)
    pipeline_run = pipelines.add_parser("run", help="spark-pipelines run, set up for incremental views (docs/spark.md)")
    _pipeline_run_arguments(pipeline_run)
    pipeline_run.set_defaults(func=cmd_pipelines_run)
    land = pipelines.add_parser("land", help="add a slice of a stream (by _seq) to a pipeline's change files")
    land.add_argument("stream", help="stream directory")
    land.add_argument("changes_dir", help="the pipeline's change directory (changes_dir/<table>/ receives a file)")
    land.add_argument("--part", type=int, required=True, help="which slice, from 1")
    land.add_argument("--of", dest="parts", type=int, required=True, help="into how many slices of equal count")
    land.add_argument("--catalog", help=CATALOG_HELP)
    land.set_defaults(func=cmd_pipelines_land)


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _pipeline_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``spark-pipelines run``'s options, and those the wrapper adds (--storage, --conf)."""
    parser.add_argument("--spec", help="the pipeline spec (default: spark-pipeline.yml found from the current directory)")
    parser.add_argument("--storage", help="the run's storage directory, instead of the spec's")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    parser.add_argument("--full-refresh", type=_names, action="extend", default=[],
                        help="views or datasets to rebuild from their sources (comma-separated)")
    parser.add_argument("--full-refresh-all", action="store_true", help="rebuild everything from the sources")
    parser.add_argument("--refresh", type=_names, action="extend", default=[], help="datasets to update (comma-separated)")
    parser.add_argument("--dry-run", action="store_true", help="validate the graph, run nothing")


def cmd_pipelines_run(args) -> int:
    from planner.pipelines.launcher import run_pipeline

    settings = dict(text.partition("=")[::2] for text in args.conf)
    malformed = [text for text in args.conf if "=" not in text or text.startswith("=")]
    if malformed:
        raise CommandLineError(f"--conf takes KEY=VALUE, got {malformed[0]!r}")
    return run_pipeline(args.spec, args.storage, settings, args.full_refresh, args.full_refresh_all, args.refresh,
                        args.dry_run)


def cmd_pipelines_land(args) -> int:
    from planner.pipelines.landing import land

    landed = land(Path(args.stream), Path(args.changes_dir), args.part, args.parts, load_catalog(args.catalog))
    counts = ", ".join(f"{table} {count}" for table, count in landed.items() if count)
    print(f"landed part {args.part} of {args.parts}: {counts or 'no changes'}")
    return 0
