"""The ``ivm`` command line: explain, run, tpch gen / stream, demo."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from catalog.load import load_catalog
from catalog.schema import CatalogError
from catalog.tpch import tpch_catalog
from operators.runtime.stream_format import StreamFormatError, batches, read_stream, write_stream
from operators.runtime.validate import InvalidChangeError
from operators.stages.scalar import ScalarSubqueryTooManyRowsError
from planner.compiler import UnsupportedQueryError, compile_query
from planner.demo import run_demo
from planner.explain import explain_json, explain_text
from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from planner.workloads.enclosureness import StreamLifespanError, stream_enclosureness
from planner.workloads.lambda_streams import make_lambda_stream
from planner.workloads.tpch_data import generate_tpch, load_tables
from planner.workloads.tpch_streams import default_window, make_stream

DEFAULT_DATA = Path("data")


def _read_query(text: str) -> str:
    """A .sql file's text, or ``text`` itself: SQL given on the command line."""
    path = Path(text)
    try:
        is_file = path.is_file()
    except OSError:  # SQL text longer than a file name may be is not a file
        is_file = False
    return path.read_text() if is_file or path.suffix == ".sql" else text


def cmd_explain(args) -> int:
    compiled = compile_query(_read_query(args.query), load_catalog(args.catalog), **_planner_options(args))
    print(explain_json(compiled) if args.format == "json" else explain_text(compiled, verbose=args.verbose))
    return 0


def _planner_options(args) -> dict:
    """--nested-strategy and --join-tree ('theorem11' or comma-separated aliases) as optimizer options."""
    options = {}
    if args.nested_strategy:
        options["nested_strategy"] = args.nested_strategy
    if args.join_tree:
        options["join_tree"] = args.join_tree if args.join_tree == "theorem11" else tuple(args.join_tree.split(","))
    return options


def cmd_tpch_gen(args) -> int:
    out = generate_tpch(args.sf, args.out or DEFAULT_DATA / f"tpch-sf{args.sf}")
    print(f"TPC-H SF {args.sf} written to {out}")
    return 0


def cmd_tpch_stream(args) -> int:
    catalog = tpch_catalog()
    data = generate_tpch(args.sf, args.data or DEFAULT_DATA / f"tpch-sf{args.sf}")
    tables = load_tables(data, catalog)
    window = None
    if args.target_lambda is not None:
        updates = make_lambda_stream(tables, catalog, args.target_lambda, seed=args.seed)
        kind = f"λ-target {args.target_lambda}"
    else:
        window = args.window or default_window(len(tables["lineitem"])) if args.kind == "window" else None
        updates = make_stream(tables, catalog, args.kind, window, args.seed)
        kind = args.kind
    out = write_stream(args.out, catalog, updates)
    inserts = sum(1 for u in updates if u.op > 0)
    print(f"{kind} stream: {len(updates)} updates ({inserts} inserts, {len(updates) - inserts} deletes)"
          + (f", window {window} lineitem tuples" if window else "")
          + f", enclosureness λ = {_enclosureness(updates, catalog)}, written to {out}")
    return 0


def _enclosureness(updates, catalog) -> str:
    """λ of the stream (AJU §1), or why it is undefined (invalid updates have no lifespan)."""
    try:
        return f"{stream_enclosureness(updates, catalog):.3f}"
    except StreamLifespanError:
        return "undefined (the stream has invalid updates)"


def _write_rows(path: str, columns: tuple[str, ...], rows: list[tuple], extra: dict[str, list] | None = None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = {name: [row[i] for row in rows] for i, name in enumerate(columns)}
    data.update(extra or {})
    pq.write_table(pa.table(data), path)


def cmd_run(args) -> int:
    catalog = load_catalog(args.catalog)
    updates = read_stream(args.stream, catalog)
    view = MaintainedView(_read_query(args.query), catalog, engine=args.engine, on_invalid=args.on_invalid,
                          **_planner_options(args))
    deltas, batch_ids, weights = [], [], []
    started = time.perf_counter()
    with view:
        for number, batch in enumerate(batches(updates, args.batch_size)):
            delta = view.apply(batch)
            if args.deltas:
                for row, weight in delta:
                    deltas.append(row)
                    batch_ids.append(number)
                    weights.append(weight)
        elapsed = time.perf_counter() - started
        result = view.result()
    if args.out:
        _write_rows(args.out, view.columns, result)
    if args.deltas:
        _write_rows(args.deltas, view.columns, deltas, {"_batch": batch_ids, "_weight": weights})
    if view.rejected:
        rejects = args.rejects or "rejects.jsonl"
        with open(rejects, "w") as out:
            for r in view.rejected:
                out.write(json.dumps({"table": r.update.table, "seq": r.update.seq, "op": r.update.op,
                                      "row": [str(v) for v in r.update.row], "reason": r.reason}) + "\n")
        print(f"{len(view.rejected)} invalid updates quarantined in {rejects}")
    rate = len(updates) / elapsed if elapsed > 0 else float("inf")
    print(f"{len(updates)} updates (enclosureness λ = {_enclosureness(updates, catalog)}) in {elapsed:.2f} s "
          f"({rate:,.0f} updates/s) with the {args.engine} runner; "
          f"result: {len(result)} rows" + (f" written to {args.out}" if args.out else ""))
    return 0


def cmd_demo(args) -> int:
    return run_demo(sf=args.sf, batch_size=args.batch_size, engine=args.engine)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ivm", description="Incremental view maintenance on Spark (spark-ivm).")
    sub = parser.add_subparsers(dest="command", required=True)

    explain = sub.add_parser("explain", help="show the maintenance plan of a query")
    explain.add_argument("query", help="a .sql file or SQL text")
    explain.add_argument("--catalog", default="tpch", help="'tpch' or a DDL file with CREATE TABLE ... keys")
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--verbose", action="store_true", help="add the rule trace")
    explain.add_argument("--nested-strategy", choices=("general",), help="force RPAI's general algorithm")
    explain.add_argument("--join-tree", help="maintain joins by change propagation: 'theorem11' or an order 'l,o,c'")
    explain.set_defaults(func=cmd_explain)

    tpch = sub.add_parser("tpch", help="TPC-H data and update streams").add_subparsers(dest="tpch_command", required=True)
    gen = tpch.add_parser("gen", help="generate TPC-H tables as Parquet")
    gen.add_argument("--sf", type=float, default=0.01)
    gen.add_argument("--out", help="directory (default data/tpch-sf<SF>)")
    gen.set_defaults(func=cmd_tpch_gen)
    stream = tpch.add_parser("stream", help="write an update stream (one Parquet file per table, _seq and _op)")
    stream.add_argument("--sf", type=float, default=0.01)
    stream.add_argument("--kind", choices=("window", "insert", "random"), default="window")
    stream.add_argument("--window", type=int, help="window size in lineitem tuples (default: a tenth of lineitem)")
    stream.add_argument("--seed", type=int, default=0)
    stream.add_argument("--lambda", dest="target_lambda", type=float,
                        help="generate a stream with this enclosureness λ instead of --kind (AJU §1, §6)")
    stream.add_argument("--data", help="TPC-H data directory (generated if missing)")
    stream.add_argument("--out", required=True, help="stream directory to write")
    stream.set_defaults(func=cmd_tpch_stream)

    run = sub.add_parser("run", help="maintain a query over an update stream")
    run.add_argument("--query", required=True, help="a .sql file")
    run.add_argument("--catalog", default="tpch")
    run.add_argument("--stream", required=True, help="stream directory")
    run.add_argument("--engine", choices=("local", "spark"), default="local")
    run.add_argument("--batch-size", type=int, default=10_000)
    run.add_argument("--out", help="final result as Parquet")
    run.add_argument("--deltas", help="the output changelog as Parquet (_batch, _weight)")
    run.add_argument("--on-invalid", choices=("error", "quarantine"), default="error")
    run.add_argument("--rejects", help="where quarantined updates go (JSON lines; default rejects.jsonl)")
    run.add_argument("--nested-strategy", choices=("general",), help="force RPAI's general algorithm")
    run.add_argument("--join-tree", help="maintain joins by change propagation: 'theorem11' or an order 'l,o,c'")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser("demo", help="EXPLAIN TPC-H Q3, maintain it over a window stream, check it")
    demo.add_argument("--sf", type=float, default=0.01)
    demo.add_argument("--batch-size", type=int, default=5_000)
    demo.add_argument("--engine", choices=("local", "spark"), default="local")
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except Exception as err:  # every user-facing failure ends as one clear line, not a traceback

        known = (CatalogError, StreamFormatError, InvalidChangeError, UnsupportedQueryError, UnsupportedSqlError,
                 FileNotFoundError, ScalarSubqueryTooManyRowsError)
        if isinstance(err, known):
            print(f"ivm: error: {err}", file=sys.stderr)
            return 2
        raise


if __name__ == "__main__":
    sys.exit(main())
