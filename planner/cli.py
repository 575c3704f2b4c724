"""The ``ivm`` command line: explain, run, tpch gen / stream, iedyn stream, demo, ui."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import NoReturn, TextIO

import pyarrow.parquet as pq

from catalog.iedyn import TRANS, iedyn_catalog
from catalog.load import load_catalog
from catalog.schema import CatalogError, UnknownTableError
from catalog.tpch import tpch_catalog
from operators.lowering.route_masks import row_masks
from operators.lowering.stream_columns import columns_read
from operators.runtime.result_files import rows_table
from operators.runtime.run_errors import SparkBatchError, WorkDirMismatchError
from operators.runtime.stream import (
    OpenStream,
    StreamFormatError,
    UnknownStreamTableError,
    open_stream,
    write_stream,
)
from operators.runtime.validate import InvalidChangeError, Rejected
from operators.stages.scalar import ScalarSubqueryTooManyRowsError
from planner.compiler import UnsupportedQueryError, compile_query
from planner.ir.values import SqlRuntimeError
from planner.optimizer.context import JOIN_STRATEGIES as FORCEABLE
from planner.run_stats import peak_rss_mb, process_seconds, progress_bar, thread_clock_cost
from planner.sql.errors import UnsupportedSqlError
from planner.view import MaintainedView
from planner.workloads.enclosureness import StreamLifespanError, stream_enclosureness
from planner.workloads.iedyn_streams import ORDERS, make_iedyn_stream, make_trans_stream
from planner.workloads.lambda_streams import make_lambda_stream
from planner.workloads.tpch_streams import default_window, make_stream

DEFAULT_DATA = Path("data")
#: the catalog of ``explain`` and ``run`` without --catalog, and what a query naming another table is told
DEFAULT_CATALOG = "tpch"
CATALOG_HELP = "'tpch' (the default) or a DDL file with CREATE TABLE ... keys"
CATALOG_HINT = ("; without --catalog the catalog is TPC-H's: pass your tables' CREATE TABLE statements with "
                "--catalog schema.sql")


def _read_query(text: str) -> str:
    """A .sql file's text, or ``text`` itself: SQL given on the command line."""
    path = Path(text)
    try:
        is_file = path.is_file()
    except OSError:  # SQL text longer than a file name may be is not a file
        is_file = False
    return path.read_text() if is_file or path.suffix == ".sql" else text


def cmd_explain(args) -> int:
    from planner.explain import explain_json, explain_text  # here: `ivm run` does without tabulate

    compiled = compile_query(_read_query(args.query), load_catalog(args.catalog), **_planner_options(args))
    print(explain_json(compiled) if args.format == "json" else explain_text(compiled, verbose=args.verbose))
    return 0


#: --join-strategy: the strategies a user may force (OptimizerContext.join_strategy).
JOIN_STRATEGIES = tuple(s for s in FORCEABLE if s is not None)
JOIN_STRATEGY_HELP = ("'binary': maintain joins by the materializing fallback instead of a GJT or view tree; "
                      "'view-tree': on a view tree (Olteanu §4) where another strategy would apply (refused with the "
                      "reason when the query is not hierarchical after its FD reduct)")


TIME_ZONE_HELP = ("the session time zone (Spark's spark.sql.session.timeZone): how a TIMESTAMP shows, truncates and "
                  "reads a string or a date; a region such as America/Los_Angeles or an offset +02:00 (default UTC)")


def _planner_options(args) -> dict:
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


def _epsilon(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"ε must be in [0, 1], got {text}")
    return value


def cmd_tpch_gen(args) -> int:
    from planner.workloads.tpch_data import generate_tpch

    out = generate_tpch(args.sf, args.out or DEFAULT_DATA / f"tpch-sf{args.sf}")
    print(f"TPC-H SF {args.sf} written to {out}")
    return 0


def cmd_tpch_stream(args) -> int:
    from planner.workloads.tpch_data import generate_tpch, load_tables

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


def cmd_iedyn_stream(args) -> int:
    try:  # the generators name the bad setting
        if args.relations == TRANS:
            updates = make_trans_stream(args.size, args.order, args.delete_fraction, args.seed)
        else:
            updates = make_iedyn_stream(args.size, tuple(args.relations.split(",")), args.order, args.delete_fraction,
                                        args.seed, key_domain=args.key_domain)
    except ValueError as error:
        raise CommandLineError(str(error)) from None
    out = write_stream(args.out, iedyn_catalog(), updates)
    inserts = sum(1 for u in updates if u.op > 0)
    print(f"IEDyn {args.order} stream of {args.relations}: {len(updates)} updates ({inserts} inserts, "
          f"{len(updates) - inserts} deletes), written to {out}; run it with --catalog examples/iedyn/schema.sql")
    return 0


def _enclosureness(updates, catalog) -> str:
    """λ of the stream (AJU §1), or why it is undefined (invalid updates have no lifespan)."""
    try:
        return f"{stream_enclosureness(updates, catalog):.3f}"
    except StreamLifespanError:
        return "undefined (the stream has invalid updates)"


class CommandLineError(ValueError):
    """An option value the command cannot use; the message names the option."""


def _write_rows(path: str, view: MaintainedView, rows: list[tuple], extra: dict[str, list] | None = None) -> None:
    """``rows`` as a Parquet file with one column per result position in its Spark type, then ``extra``."""
    pq.write_table(rows_table(rows, view.columns, view.column_types, extra), path)


def _write_rejects(out: TextIO, rejected: Iterable[Rejected]) -> None:
    for r in rejected:
        out.write(json.dumps({"table": r.update.table, "seq": r.update.seq, "op": r.update.op,
                              "row": [None if v is None else str(v) for v in r.update.row], "reason": r.reason}) + "\n")
    out.flush()  # a run stopped later by an error still leaves the rejects of the batches it applied


def _check_batch_size(args) -> None:
    """Checked before any work, so a typo costs no stream read or demo data generation."""
    if args.batch_size < 1:
        raise CommandLineError(f"--batch-size must be at least 1, got {args.batch_size}")


def cmd_run(args) -> int:
    _check_batch_size(args)
    if args.rejects and args.on_invalid != "quarantine":
        raise CommandLineError("--rejects needs --on-invalid quarantine (under 'error' invalid input stops the run)")
    if args.work_dir and args.engine != "spark":
        raise CommandLineError("--work-dir is where the Spark engine keeps its checkpoint: it needs --engine spark")
    if args.spark_master and args.engine != "spark":
        raise CommandLineError("--spark-master needs --engine spark")
    if args.spark_remote and args.engine != "spark":
        raise CommandLineError("--spark-remote needs --engine spark")
    if args.spark_remote and args.spark_master:
        raise CommandLineError("--spark-remote and --spark-master exclude each other: "
                               "a local Connect server takes its master as --spark-remote local[N]")
    if args.report_lambda and args.engine != "local":
        raise CommandLineError("--report-lambda reads the whole stream on the driver: it needs --engine local")
    if args.stats_json and args.engine != "local":
        raise CommandLineError("--stats-json reports the local engine's process (with Spark the work is in the JVMs)")
    catalog = load_catalog(args.catalog)
    if args.engine == "spark":
        return _run_on_spark(args, catalog)
    # Read batch by batch as the run goes: the stream is never in memory as a whole (open_stream). It is
    # opened (its _seq and _op read: Arrow work, the GIL released) while the query compiles (Python);
    # a stream that cannot be read is still the error reported, before any error of the query.
    with ThreadPoolExecutor(1, thread_name_prefix="stream-open") as pool:
        opening = pool.submit(_opened_stream, args, catalog)
        try:
            compiled = compile_query(_read_query(args.query), catalog, **_planner_options(args))
        except Exception:
            opening.result()
            raise
        stream = opening.result()
    # Without --deltas no batch's changes are read: a result read from a stage's state (a generalized
    # join tree's) is then maintained without producing them (IEDyn's pull-based mode)
    push = bool(args.deltas) or compiled.dataflow.enumerated_by is None
    view = MaintainedView(compiled, catalog, engine=args.engine, on_invalid=args.on_invalid, push=push)
    deltas, batch_ids, weights = [], [], []
    rejects_path = args.rejects or "rejects.jsonl"
    maintenance = maintenance_cpu = 0.0
    # Replaced, never appended to: after a run the rejects file holds exactly that run's rejects.
    with view, (open(rejects_path, "w") if args.on_invalid == "quarantine" else nullcontext()) as rejects, \
            progress_bar(len(stream)) as progress:
        without_seq = [Rejected(update, update.defect) for update in stream.without_seq]
        if rejects:
            _write_rejects(rejects, without_seq)
        # only the tables the validator checks, of those only the columns the run reads, and of the
        # columns only the selections and keys at the rows no route can keep
        dataflow = view.compiled.dataflow
        read = stream.batches(args.batch_size, tables=view.validator.tables,
                              columns=columns_read(dataflow, catalog), masks=row_masks(dataflow, catalog))
        batches, cpu_clock = 0, bool(args.stats_json)
        for number, batch in enumerate(read):
            batches += 1
            already = len(view.rejected)
            # the main thread's CPU, for --stats-json only (a system call pair, 0.6 µs: more than a batch of
            # one change costs); read innermost, so that its interval holds ``apply`` and the reads alone
            # (reading the next batch is outside it).
            started = time.perf_counter()
            if cpu_clock:
                started_cpu = time.thread_time()
                delta = view.apply(batch)
                maintenance_cpu += time.thread_time() - started_cpu
            else:
                delta = view.apply(batch)
            maintenance += time.perf_counter() - started
            progress.update(len(batch))
            if rejects and len(view.rejected) > already:
                _write_rejects(rejects, view.rejected[already:])
            if args.deltas:
                for row, weight in delta:
                    deltas.append(row)
                    batch_ids.append(number)
                    weights.append(weight)
        result = view.result()
    # what the clock reads themselves added to maintenance_cpu, one pair per batch (thread_clock_cost)
    clock_cpu = min(maintenance_cpu, batches * thread_clock_cost()) if args.stats_json else 0.0
    if args.out:
        _write_rows(args.out, view, result)
    if args.deltas:
        _write_rows(args.deltas, view, deltas, {"_batch": batch_ids, "_weight": weights})
    quarantined = len(without_seq) + len(view.rejected)
    if args.on_invalid == "quarantine":
        print(f"{quarantined} invalid updates quarantined in {rejects_path}")
    if args.report_lambda:
        enclosureness = "undefined (the stream has invalid updates)" if quarantined else _enclosureness(
            (update for batch in open_stream(args.stream, catalog).batches(args.batch_size) for update in batch), catalog)
        print(f"enclosureness λ of the stream = {enclosureness}")
    updates, seconds = len(stream) + len(without_seq), process_seconds()
    if args.stats_json:
        # CPU seconds beside wall seconds: on a shared machine they are what a comparison can trust
        stats = {"updates": updates, "process_seconds": round(seconds, 6), "maintenance_seconds": round(maintenance, 6),
                 "process_cpu_seconds": round(time.process_time(), 6), "maintenance_cpu_seconds": round(maintenance_cpu - clock_cpu, 6),
                 "clock_cpu_seconds": round(clock_cpu, 6),
                 "peak_rss_mb": round(peak_rss_mb(), 1), "result_rows": len(result), "engine": args.engine,
                 "batch_size": args.batch_size}
        Path(args.stats_json).write_text(json.dumps(stats, indent=2) + "\n")
    print(f"{updates} updates in {seconds:.2f} s ({_rate(updates, seconds)} updates/s whole process; maintenance "
          f"{maintenance:.2f} s, {_rate(updates, maintenance)} updates/s) with the {args.engine} runner; "
          f"result: {len(result)} rows" + (f" written to {args.out}" if args.out else ""))
    return 0


def _opened_stream(args, catalog) -> OpenStream:
    """``args.stream`` opened, refused when a change has no ``_seq`` and invalid input is an error."""
    stream = open_stream(args.stream, catalog)
    if stream.without_seq and args.on_invalid == "error":
        first = stream.without_seq[0]
        raise InvalidChangeError(first, first.defect)
    return stream


def _rate(updates: int, seconds: float) -> str:
    return f"{updates / seconds:,.0f}" if seconds > 0 else "inf"


def _run_on_spark(args, catalog) -> int:
    """The stream read, validated and maintained on the executors (planner/spark_run.py): the driver
    reads no row of the stream, so the enclosureness λ, which needs all of them, is not computed."""
    # not a cycle: importing pyspark takes seconds, and the local engine must not pay for it
    from planner.spark_run import change_feed, rejects_lines, run_stream

    arguments = {"query": str(Path(args.query).resolve()) if Path(args.query).is_file() else args.query,
                 "catalog": args.catalog, "stream": str(Path(args.stream).resolve()), "batch_size": args.batch_size,
                 "on_invalid": args.on_invalid, **_planner_options(args)}
    run = run_stream(_read_query(args.query), catalog, args.stream, args.batch_size, args.work_dir, args.on_invalid,
                     arguments, _planner_options(args), master=args.spark_master, remote=args.spark_remote)
    try:
        if args.out:
            _write_rows(args.out, run.view, run.result)
        if args.deltas:
            feed = change_feed(run.output_dir)
            pq.write_table(feed if feed is not None else rows_table([], run.view.columns, run.view.column_types,
                                                                    {"_batch": [], "_weight": []}), args.deltas)
        rejects = rejects_lines(run.output_dir)
        if args.on_invalid == "quarantine":
            rejects_path = args.rejects or "rejects.jsonl"
            Path(rejects_path).write_text("".join(line + "\n" for line in rejects))
            print(f"{len(rejects)} invalid updates quarantined in {rejects_path}")
    finally:
        run.cleanup()
    rate = run.updates / run.seconds if run.seconds > 0 else float("inf")
    print(f"{run.updates} updates (enclosureness λ not computed by the spark engine) in {run.seconds:.2f} s "
          f"({rate:,.0f} updates/s, the whole query including its start) with the spark runner; "
          f"result: {len(run.result)} rows" + (f" written to {args.out}" if args.out else ""))
    return 0


def cmd_demo(args) -> int:
    # imported here: the demo's and the page's DuckDB check is the only use of duckdb, whose 2.x
    # bindings report leaked objects at interpreter exit; other commands need not load it
    from planner.demo import run_demo

    _check_batch_size(args)
    return run_demo(sf=args.sf, batch_size=args.batch_size, engine=args.engine)


def _pipeline_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``spark-pipelines run``'s options, and those the wrapper adds (--storage, --conf)."""
    names = lambda text: [name.strip() for name in text.split(",") if name.strip()]  # noqa: E731
    parser.add_argument("--spec", help="the pipeline spec (default: spark-pipeline.yml found from the current directory)")
    parser.add_argument("--storage", help="the run's storage directory, instead of the spec's")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE", help="a Spark setting")
    parser.add_argument("--full-refresh", type=names, action="extend", default=[],
                        help="views or datasets to rebuild from their sources (comma-separated)")
    parser.add_argument("--full-refresh-all", action="store_true", help="rebuild everything from the sources")
    parser.add_argument("--refresh", type=names, action="extend", default=[], help="datasets to update (comma-separated)")
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


def cmd_ui(args) -> int:
    from planner.ui.server import serve

    serve(args.host, args.port, Path(args.data_dir))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ivm", description="Incremental view maintenance on Spark (spark-ivm).")
    sub = parser.add_subparsers(dest="command", required=True)

    explain = sub.add_parser("explain", help="show the maintenance plan of a query")
    explain.add_argument("query", help="a .sql file or SQL text")
    explain.add_argument("--catalog", help=CATALOG_HELP)
    explain.add_argument("--format", choices=("text", "json"), default="text")
    explain.add_argument("--verbose", action="store_true", help="add the rule trace and the generated program")
    explain.add_argument("--nested-strategy", choices=("general",), help="force RPAI's general algorithm")
    explain.add_argument("--join-tree", help="maintain joins by change propagation: 'theorem11' or an order 'l,o,c'")
    explain.add_argument("--variable-order", help="force the view tree's variable order, highest first: 'r.a,s.c'")
    explain.add_argument("--heavy-light-epsilon", type=_epsilon, help="ε of the heavy/light triangle count (threshold N^ε), "
                        "in [0, 1]: 0.5 gives O(√N) per update (default), 1 plain delta queries")
    explain.add_argument("--join-strategy", choices=JOIN_STRATEGIES, help=JOIN_STRATEGY_HELP)
    explain.add_argument("--time-zone", help=TIME_ZONE_HELP)
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

    iedyn = sub.add_parser("iedyn", help="IEDyn's workload streams (examples/iedyn)").add_subparsers(
        dest="iedyn_command", required=True)
    iedyn_stream = iedyn.add_parser("stream", help="write an IEDyn §6 stream, with deletes (Parquet, _seq and _op)")
    iedyn_stream.add_argument("--size", type=int, required=True, help="inserts, split evenly over the relations")
    iedyn_stream.add_argument("--relations", default="r,s,t", help="'r,s,t', 'r,s' (Q1, Q2) or 'trans' (fraud)")
    iedyn_stream.add_argument("--order", choices=ORDERS, default="random")
    iedyn_stream.add_argument("--delete-fraction", type=float, default=0.0, help="chance an event deletes a present row")
    iedyn_stream.add_argument("--key-domain", type=int, default=200, help="k uniform in 1..this (IEDyn: 200)")
    iedyn_stream.add_argument("--seed", type=int, default=0)
    iedyn_stream.add_argument("--out", required=True, help="stream directory to write")
    iedyn_stream.set_defaults(func=cmd_iedyn_stream)

    run = sub.add_parser("run", help="maintain a query over an update stream")
    run.add_argument("--query", required=True, help="a .sql file")
    run.add_argument("--catalog", help=CATALOG_HELP)
    run.add_argument("--stream", required=True, help="stream directory")
    run.add_argument("--engine", choices=("local", "spark"), default="local")
    run.add_argument("--batch-size", type=int, default=10_000)
    run.add_argument("--out", help="final result as Parquet")
    run.add_argument("--deltas", help="the output changelog as Parquet (_batch, _weight)")
    run.add_argument("--on-invalid", choices=("error", "quarantine"), default="error")
    run.add_argument("--rejects", help="where quarantined updates go (JSON lines; default rejects.jsonl)")
    run.add_argument("--work-dir", help="spark engine: checkpoint and outputs; started again after a crash with the "
                                        "same arguments, the run resumes (default: a temporary directory)")
    run.add_argument("--spark-master", help="spark engine: the Spark master (default local[2]; e.g. local-cluster[2,1,1024] "
                                            "for two executor JVMs)")
    run.add_argument("--spark-remote", help="spark engine: run over Spark Connect, on the server at this URL "
                                            "(sc://host:15002), or on one started here for a local master (local[2])")
    run.add_argument("--nested-strategy", choices=("general",), help="force RPAI's general algorithm")
    run.add_argument("--join-tree", help="maintain joins by change propagation: 'theorem11' or an order 'l,o,c'")
    run.add_argument("--variable-order", help="force the view tree's variable order, highest first: 'r.a,s.c'")
    run.add_argument("--heavy-light-epsilon", type=_epsilon, help="ε of the heavy/light triangle count (threshold N^ε), "
                        "in [0, 1]: 0.5 gives O(√N) per update (default), 1 plain delta queries")
    run.add_argument("--join-strategy", choices=JOIN_STRATEGIES, help=JOIN_STRATEGY_HELP)
    run.add_argument("--time-zone", help=TIME_ZONE_HELP)
    run.add_argument("--report-lambda", action="store_true",
                     help="local engine: also compute the stream's enclosureness λ (AJU §1; a second pass over the stream)")
    run.add_argument("--stats-json", help="local engine: write updates, process_seconds, maintenance_seconds (wall), "
                                          "their CPU seconds (process_cpu_seconds; maintenance_cpu_seconds, without the "
                                          "per-batch clock reads' own CPU, clock_cpu_seconds), "
                                          "peak_rss_mb, result_rows, engine and batch_size as JSON to this file")
    run.set_defaults(func=cmd_run)

    demo = sub.add_parser("demo", help="EXPLAIN TPC-H Q3, maintain it over a window stream, check it")
    demo.add_argument("--sf", type=float, default=0.01)
    demo.add_argument("--batch-size", type=int, default=5_000)
    demo.add_argument("--engine", choices=("local", "spark"), default="local")
    demo.set_defaults(func=cmd_demo)

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

    ui = sub.add_parser("ui", help="a live page: SQL in, the plan drawn, the result kept up to date, checked")
    ui.add_argument("--port", type=int, default=8050)
    ui.add_argument("--host", default="127.0.0.1")
    ui.add_argument("--data-dir", default=str(DEFAULT_DATA), help="where TPC-H data is generated (default data/)")
    ui.set_defaults(func=cmd_ui)
    return parser


class _NoPandas:
    """A module finder that has no pandas: ``import pandas`` raises ImportError (see ``main``)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not used by ivm run --engine local", name=name)
        return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    default_catalog = getattr(args, "catalog", "") is None
    if default_catalog:
        args.catalog = DEFAULT_CATALOG
    # this process is the local run's own (argv None: `ivm` or `python -m planner.cli`), not an embedding program's
    own_local_run = argv is None and args.func is cmd_run and args.engine == "local"
    if own_local_run and "pandas" not in sys.modules:
        # pyarrow imports pandas on its first array only to recognize pandas objects among its inputs
        # (0.3 s CPU, more than a second of wall on a loaded machine); the local run converts none. Only
        # in the command's own process: pyarrow remembers for the process that pandas is missing,
        # which an embedding program must not inherit.
        sys.meta_path.insert(0, _NoPandas)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
    except BrokenPipeError:
        code = _closed_pipe()
    except Exception as err:  # every user-facing failure ends as one clear line, not a traceback

        known = (CatalogError, StreamFormatError, InvalidChangeError, UnsupportedQueryError, UnsupportedSqlError,
                 SqlRuntimeError, ScalarSubqueryTooManyRowsError, CommandLineError, FileNotFoundError,
                 SparkBatchError, WorkDirMismatchError)
        if not isinstance(err, known):
            raise
        hint = CATALOG_HINT if default_catalog and isinstance(err, (UnknownTableError, UnknownStreamTableError)) else ""
        print(f"ivm: error: {err}{hint}", file=sys.stderr)
        code = 2
    if own_local_run:
        _exit_now(code)
    return code


def _closed_pipe() -> int:
    """The reader of stdout went away (``ivm explain q.sql | head -1``): end quietly, as a Unix tool
    does. stdout is pointed at devnull so that no later flush (the interpreter's at exit) fails on the
    pipe again, the recipe of Python's ``signal`` documentation; the exit code is 1, as there."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def _exit_now(code: int) -> NoReturn:
    """End the process without tearing the interpreter down: a run leaves millions of objects (the
    maintained state, the validator's fingerprints) that the interpreter would free one by one at exit
    (0.3 s CPU, 0.5 s wall on TPC-H Q3 SF 0.1), where the operating system takes the memory back at
    once. Every file the run writes is closed by then; the standard streams are flushed here."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
