"""``ivm run``: maintain a query over an update stream, batch by batch, on the local engine (here) or on
Spark (``run_spark``); write the result, the changelog and the quarantined updates; report the rate."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from pathlib import Path
from typing import TextIO

import attrs
import pyarrow.parquet as pq

from catalog.load import load_catalog
from operators.runtime.result_files import rows_table
from operators.runtime.stream import OpenStream, open_stream
from operators.runtime.validate import InvalidChangeError, Rejected
from operators.stages.scalar import ScalarSubqueryTooManyRowsError
from planner.cli.common import (
    CATALOG_HELP,
    CommandLineError,
    add_planner_options,
    check_batch_size,
    planner_options,
    read_query,
)
from planner.cli.streams import enclosureness_text
from planner.compiler import CompiledQuery, compile_query
from planner.ir.values import SqlRuntimeError
from planner.run_stats import peak_rss_mb, process_seconds, progress_bar, thread_clock_cost
from planner.view import MaintainedView


def add_run(sub: argparse._SubParsersAction) -> None:
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
    run.add_argument("--spark-strategy", choices=("auto", "jvm", "python"), default="auto",
                     help="spark engine: JVM delta queries (Spark SQL per micro-batch, for inner joins and SUM/COUNT/AVG), "
                          "Python stages (every view), or auto: the JVM where it applies (docs/spark.md)")
    add_planner_options(run)
    run.add_argument("--report-lambda", action="store_true",
                     help="local engine: also compute the stream's enclosureness λ (AJU §1; a second pass over the stream)")
    run.add_argument("--stats-json", help="local engine: write updates, process_seconds, maintenance_seconds (wall), "
                                          "their CPU seconds (process_cpu_seconds; maintenance_cpu_seconds, without the "
                                          "per-batch clock reads' own CPU, clock_cpu_seconds), "
                                          "peak_rss_mb, result_rows, engine and batch_size as JSON to this file")
    run.set_defaults(func=cmd_run)


def cmd_run(args) -> int:
    _check_run_options(args)
    catalog = load_catalog(args.catalog)
    if args.engine == "spark":
        # imported here: pyspark takes seconds to import, and the local run does without it
        from planner.cli.run_spark import run_on_spark

        return run_on_spark(args, catalog)
    compiled, stream = _compiled_and_opened(args, catalog)
    # Without --deltas no batch's changes are read: a result read from a stage's state (a generalized
    # join tree's) is then maintained without producing them (IEDyn's pull-based mode)
    push = bool(args.deltas) or compiled.dataflow.enumerated_by is None
    view = MaintainedView(compiled, catalog, engine=args.engine, on_invalid=args.on_invalid, push=push)
    rejects_path = args.rejects or "rejects.jsonl"
    # Replaced, never appended to: after a run the rejects file holds exactly that run's rejects.
    with view, (open(rejects_path, "w") if args.on_invalid == "quarantine" else nullcontext()) as rejects, \
            progress_bar(len(stream)) as progress:
        totals = _maintain(args, view, stream, rejects, progress)
        result = view.result()
    if args.out:
        write_rows(args.out, view, result)
    if args.deltas:
        write_rows(args.deltas, view, totals.deltas, {"_batch": totals.batch_ids, "_weight": totals.weights})
    quarantined = len(totals.without_seq) + len(view.rejected)
    if args.on_invalid == "quarantine":
        print(f"{quarantined} invalid updates quarantined in {rejects_path}")
    if args.report_lambda:
        enclosureness = "undefined (the stream has invalid updates)" if quarantined else enclosureness_text(
            (update for batch in open_stream(args.stream, catalog).batches(args.batch_size) for update in batch), catalog)
        print(f"enclosureness λ of the stream = {enclosureness}")
    _report(args, len(stream) + len(totals.without_seq), totals, len(result))
    return 0


def _check_run_options(args) -> None:
    """Options that exclude each other or need another engine, refused before any work."""
    check_batch_size(args)
    if args.rejects and args.on_invalid != "quarantine":
        raise CommandLineError("--rejects needs --on-invalid quarantine (under 'error' invalid input stops the run)")
    if args.work_dir and args.engine != "spark":
        raise CommandLineError("--work-dir is where the Spark engine keeps its checkpoint: it needs --engine spark")
    for option, value in (("--spark-master", args.spark_master), ("--spark-remote", args.spark_remote)):
        if value and args.engine != "spark":
            raise CommandLineError(f"{option} needs --engine spark")
    if args.spark_remote and args.spark_master:
        raise CommandLineError("--spark-remote and --spark-master exclude each other: "
                               "a local Connect server takes its master as --spark-remote local[N]")
    if args.spark_strategy != "auto" and args.engine != "spark":
        raise CommandLineError("--spark-strategy needs --engine spark")
    if args.report_lambda and args.engine != "local":
        raise CommandLineError("--report-lambda reads the whole stream on the driver: it needs --engine local")
    if args.stats_json and args.engine != "local":
        raise CommandLineError("--stats-json reports the local engine's process (with Spark the work is in the JVMs)")


def _compiled_and_opened(args, catalog) -> tuple[CompiledQuery, OpenStream]:
    """The query compiled and the stream opened, at once.

    Read batch by batch as the run goes: the stream is never in memory as a whole (open_stream). It is
    opened (its _seq and _op read: Arrow work, the GIL released) while the query compiles (Python); a
    stream that cannot be read is still the error reported, before any error of the query."""
    with ThreadPoolExecutor(1, thread_name_prefix="stream-open") as pool:
        opening = pool.submit(_opened_stream, args, catalog)
        try:
            compiled = compile_query(read_query(args.query), catalog, **planner_options(args))
        except Exception:
            opening.result()
            raise
        return compiled, opening.result()


def _opened_stream(args, catalog) -> OpenStream:
    """``args.stream`` opened, refused when a change has no ``_seq`` and invalid input is an error."""
    stream = open_stream(args.stream, catalog)
    if stream.without_seq and args.on_invalid == "error":
        first = stream.without_seq[0]
        raise InvalidChangeError(first, first.defect)
    return stream


@attrs.define
class _Totals:
    """What the batch loop gathers: the changelog (with --deltas), the clocks, the updates without ``_seq``."""

    without_seq: list[Rejected]
    deltas: list[tuple] = attrs.Factory(list)
    batch_ids: list[int] = attrs.Factory(list)
    weights: list[int] = attrs.Factory(list)
    batches: int = 0
    maintenance: float = 0.0
    maintenance_cpu: float = 0.0


def _maintain(args, view: MaintainedView, stream: OpenStream, rejects: TextIO | None, progress) -> _Totals:
    """Apply the stream batch by batch, writing rejects as they come (a run stopped later by an error still
    leaves those of the batches it applied)."""
    totals = _Totals([Rejected(update, update.defect) for update in stream.without_seq])
    if rejects:
        write_rejects(rejects, totals.without_seq)
    read = view.batches(stream, args.batch_size)  # read for the view: the reader's pushdown
    cpu_clock = bool(args.stats_json)
    for number, batch in enumerate(read):
        totals.batches += 1
        already = len(view.rejected)
        # the main thread's CPU, for --stats-json only (a system call pair, 0.6 µs: more than a batch of one
        # change costs); read innermost, so that its interval holds ``apply`` and the reads alone (reading the
        # next batch is outside it).
        started = time.perf_counter()
        try:
            if cpu_clock:
                started_cpu = time.thread_time()
                delta = view.apply(batch)
                totals.maintenance_cpu += time.thread_time() - started_cpu
            else:
                delta = view.apply(batch)
        except (SqlRuntimeError, ScalarSubqueryTooManyRowsError) as error:
            raise _batch_error(number, batch, "", error) from None
        totals.maintenance += time.perf_counter() - started
        if view.errors:  # the view's value is Spark's error from this batch on: the run stops here
            raise _batch_error(number, batch, "after batch", f"the view's value is Spark's error: {view.error}")
        progress.update(len(batch))
        if rejects and len(view.rejected) > already:
            write_rejects(rejects, view.rejected[already:])
        if args.deltas:
            for row, weight in delta:
                totals.deltas.append(row)
                totals.batch_ids.append(number)
                totals.weights.append(weight)
    return totals


class BatchError(RuntimeError):
    """A batch of ``ivm run`` failed with Spark's run-time error, or left the view's value one (a held
    error, operators/held_errors.py): the message names the batch, as a streaming query would stop."""


def _batch_error(number: int, batch, what: str, error: BaseException | str) -> BatchError:
    seqs = [update.seq for update in batch]  # (read only on this path: a batch does not keep them)
    where = f"batch {number + 1} (_seq {min(seqs)}..{max(seqs)})" if seqs else f"batch {number + 1}"
    return BatchError(f"{where.replace('batch', what, 1) if what else where}: {error}")


def _report(args, updates: int, totals: _Totals, result_rows: int) -> None:
    """The closing line, and with --stats-json the run's clocks and memory as JSON."""
    seconds, maintenance = process_seconds(), totals.maintenance
    if args.stats_json:
        # what the clock reads themselves added to maintenance_cpu, one pair per batch (thread_clock_cost);
        # CPU seconds beside wall seconds: on a shared machine they are what a comparison can trust
        clock_cpu = min(totals.maintenance_cpu, totals.batches * thread_clock_cost())
        stats = {"updates": updates, "process_seconds": round(seconds, 6), "maintenance_seconds": round(maintenance, 6),
                 "process_cpu_seconds": round(time.process_time(), 6),
                 "maintenance_cpu_seconds": round(totals.maintenance_cpu - clock_cpu, 6),
                 "clock_cpu_seconds": round(clock_cpu, 6),
                 "peak_rss_mb": round(peak_rss_mb(), 1), "result_rows": result_rows, "engine": args.engine,
                 "batch_size": args.batch_size}
        Path(args.stats_json).write_text(json.dumps(stats, indent=2) + "\n")
    print(f"{updates} updates in {seconds:.2f} s ({rate(updates, seconds)} updates/s whole process; maintenance "
          f"{maintenance:.2f} s, {rate(updates, maintenance)} updates/s) with the {args.engine} runner; "
          f"result: {result_rows} rows" + (f" written to {args.out}" if args.out else ""))


def write_rows(path: str, view: MaintainedView, rows: list[tuple], extra: dict[str, list] | None = None) -> None:
    """``rows`` as a Parquet file with one column per result position in its Spark type, then ``extra``."""
    pq.write_table(rows_table(rows, view.columns, view.column_types, extra), path)


def write_rejects(out: TextIO, rejected: Iterable[Rejected]) -> None:
    for r in rejected:
        out.write(json.dumps({"table": r.update.table, "seq": r.update.seq, "op": r.update.op,
                              "row": [None if v is None else str(v) for v in r.update.row], "reason": r.reason}) + "\n")
    out.flush()


def rate(updates: int, seconds: float) -> str:
    return f"{updates / seconds:,.0f}" if seconds > 0 else "inf"
