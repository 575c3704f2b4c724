"""``ivm run --engine spark``: the stream read, validated and maintained on the executors
(planner/spark_run.py); imported only by a Spark run, since pyspark takes seconds to import."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq

from catalog.schema import Catalog
from operators.runtime.result_files import rows_table
from planner.cli.common import planner_options, read_query
from planner.cli.run import write_rows
from planner.spark_run import change_feed, rejects_lines, run_stream


def run_on_spark(args, catalog: Catalog) -> int:
    """The driver reads no row of the stream, so the enclosureness λ, which needs all of them, is not computed."""
    arguments = {"query": str(Path(args.query).resolve()) if Path(args.query).is_file() else args.query,
                 "catalog": args.catalog, "stream": str(Path(args.stream).resolve()), "batch_size": args.batch_size,
                 "on_invalid": args.on_invalid, "spark_strategy": args.spark_strategy, **planner_options(args)}
    view_options = {**planner_options(args), "spark_strategy": args.spark_strategy}
    run = run_stream(read_query(args.query), catalog, args.stream, args.batch_size, args.work_dir, args.on_invalid,
                     arguments, view_options, master=args.spark_master, remote=args.spark_remote)
    try:
        if args.out:
            write_rows(args.out, run.view, run.result)
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
