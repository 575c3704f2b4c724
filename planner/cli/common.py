"""What several ``ivm`` commands share: the default catalog and data directory, reading a query given
as a file or as text, the optimizer options, and the error a bad option value raises."""

from __future__ import annotations

import argparse
from pathlib import Path

from planner.optimizer.context import JOIN_STRATEGIES as FORCEABLE

DEFAULT_DATA = Path("data")
#: the catalog of ``explain`` and ``run`` without --catalog, and what a query naming another table is told
DEFAULT_CATALOG = "tpch"
CATALOG_HELP = "'tpch' (the default) or a DDL file with CREATE TABLE ... keys"
CATALOG_HINT = ("; without --catalog the catalog is TPC-H's: pass your tables' CREATE TABLE statements with "
                "--catalog schema.sql")

#: --join-strategy: the strategies a user may force (OptimizerContext.join_strategy).
JOIN_STRATEGIES = tuple(s for s in FORCEABLE if s is not None)
JOIN_STRATEGY_HELP = ("'binary': maintain joins by the materializing fallback instead of a GJT or view tree; "
                      "'view-tree': on a view tree (Olteanu §4) where another strategy would apply (refused with the "
                      "reason when the query is not hierarchical after its FD reduct)")
TIME_ZONE_HELP = ("the session time zone (Spark's spark.sql.session.timeZone): how a TIMESTAMP shows, truncates and "
                  "reads a string or a date; a region such as America/Los_Angeles or an offset +02:00 (default UTC)")


class CommandLineError(ValueError):
    """An option value the command cannot use; the message names the option."""


def read_query(text: str) -> str:
    """A .sql file's text, or ``text`` itself: SQL given on the command line."""
    path = Path(text)
    try:
        is_file = path.is_file()
    except OSError:  # SQL text longer than a file name may be is not a file
        is_file = False
    return path.read_text() if is_file or path.suffix == ".sql" else text


def planner_options(args) -> dict:
    """--nested-strategy, --join-tree ('theorem11' or comma-separated aliases), --variable-order
    (comma-separated variables or columns), --join-strategy and --heavy-light-epsilon as optimizer options."""
    options = {}
    if args.join_strategy:
        options["join_strategy"] = args.join_strategy
    if args.nested_strategy:
        options["nested_strategy"] = args.nested_strategy
    if args.join_tree:
        options["join_tree"] = args.join_tree if args.join_tree == "theorem11" else tuple(args.join_tree.split(","))
    if args.variable_order:
        options["variable_order"] = tuple(args.variable_order.split(","))
    if args.heavy_light_epsilon is not None:
        options["heavy_light_epsilon"] = args.heavy_light_epsilon
    if args.time_zone:
        options["time_zone"] = args.time_zone
    return options


def add_planner_options(parser: argparse.ArgumentParser) -> None:
    """The optimizer options ``explain`` and ``run`` both take (``planner_options`` reads them)."""
    parser.add_argument("--nested-strategy", choices=("general",), help="force RPAI's general algorithm")
    parser.add_argument("--join-tree", help="maintain joins by change propagation: 'theorem11' or an order 'l,o,c'")
    parser.add_argument("--variable-order", help="force the view tree's variable order, highest first: 'r.a,s.c'")
    parser.add_argument("--heavy-light-epsilon", type=_epsilon, help="ε of the heavy/light triangle count (threshold "
                        "N^ε), in [0, 1]: 0.5 gives O(√N) per update (default), 1 plain delta queries")
    parser.add_argument("--join-strategy", choices=JOIN_STRATEGIES, help=JOIN_STRATEGY_HELP)
    parser.add_argument("--time-zone", help=TIME_ZONE_HELP)


def _epsilon(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"ε must be in [0, 1], got {text}")
    return value


def check_batch_size(args) -> None:
    """Checked before any work, so a typo costs no stream read or demo data generation."""
    if args.batch_size < 1:
        raise CommandLineError(f"--batch-size must be at least 1, got {args.batch_size}")
