"""``ivm demo`` (EXPLAIN Q3, maintain it, check it) and ``ivm ui`` (the live page)."""

from __future__ import annotations

import argparse
from pathlib import Path

from planner.cli.common import DEFAULT_DATA, check_batch_size


def add_demo(sub: argparse._SubParsersAction) -> None:
    demo = sub.add_parser("demo", help="EXPLAIN TPC-H Q3, maintain it over a window stream, check it")
    demo.add_argument("--sf", type=float, default=0.01)
    demo.add_argument("--batch-size", type=int, default=5_000)
    demo.add_argument("--engine", choices=("local", "spark"), default="local")
    demo.set_defaults(func=cmd_demo)


def add_ui(sub: argparse._SubParsersAction) -> None:
    ui = sub.add_parser("ui", help="a live page: SQL in, the plan drawn, the result kept up to date, checked")
    ui.add_argument("--port", type=int, default=8050)
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--data-dir", default=str(DEFAULT_DATA), help="where TPC-H data is generated (default data/)")
    ui.set_defaults(func=cmd_ui)


def cmd_demo(args) -> int:
    # imported here: the demo's and the page's DuckDB check is the only use of duckdb, whose 2.x
    # bindings report leaked objects at interpreter exit; other commands need not load it
    from planner.demo import run_demo

    check_batch_size(args)
    return run_demo(sf=args.sf, batch_size=args.batch_size, engine=args.engine)


def cmd_ui(args) -> int:
    from planner.ui.server import serve

    serve(args.host, args.port, Path(args.data_dir))
    return 0
