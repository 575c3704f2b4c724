"""``ivm explain``: the maintenance plan of a query, as compact text, with the theory (--verbose), or JSON."""

from __future__ import annotations

import argparse

from catalog.load import load_catalog
from planner.cli.common import CATALOG_HELP, add_planner_options, planner_options, read_query
from planner.compiler import compile_query


def add_explain(sub: argparse._SubParsersAction) -> None:
    explain = sub.add_parser("explain", help="show the maintenance plan of a query")
    explain.add_argument("query", help="a .sql file or SQL text")
    explain.add_argument("--catalog", help=CATALOG_HELP)
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--verbose", action="store_true",
                         help="add the theory: plans, query classes and bounds, the rule trace and the generated program")
    add_planner_options(explain)
    explain.set_defaults(func=cmd_explain)


def cmd_explain(args) -> int:
    from planner.explain import explain_json, explain_text  # here: `ivm run` does without tabulate

    compiled = compile_query(read_query(args.query), load_catalog(args.catalog), **planner_options(args))
    print(explain_json(compiled) if args.format == "json" else explain_text(compiled, verbose=args.verbose))
    return 0
