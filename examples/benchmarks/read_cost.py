"""What `ivm run`'s whole process costs besides maintenance: the floor under issue 13's "10× the peers".

Each step runs in a fresh child process (so each pays its own interpreter start, as a run would) and
reports the CPU seconds of the process (user + system, ``os.times`` at its end: robust on a loaded
machine, where wall time is not) and its wall time, for the tables and columns Q3 reads (``--query``)
of a stream directory:

1. ``start``: the interpreter with ``planner.cli`` imported (what any `ivm run` pays first);
2. ``decode``: 1, then the stream's Parquet files decoded into Arrow record batches (Q3's columns
   only, as Flink's and Pathway's jobs read them), nothing converted to Python;
3. ``tuples``: 2, then every row turned into a Python tuple of Python values (``Decimal``, ``date``,
   ``int``, ``str``) with the cheapest conversions we know (numpy ``tolist``, Decimal from Arrow's
   text): the least any Python engine that computes on Python values pays to get the rows;
4. ``all-columns``: 1, then every column of the three tables decoded and cast to its catalog type
   (what the reader decodes: the validator's fingerprint covers the whole row);
5. ``fingerprints``: 4, then the rows' fingerprints (``arrow_fingerprints``, as the reader makes them);
6. ``reader``: 1, then the project's reader (``open_stream(...).batches``, batches of 10 000, the
   columns the plan reads, of them only the selections' and keys' at the rows no route keeps
   (``row_masks``), ``_seq`` merge, type checks, row fingerprints for the validator) as `ivm run` uses it;
7. ``run``: `ivm run --engine local` itself (the child's CPU), and its maintenance CPU (validation
   and the stages, the main thread's) from ``--stats-json``.

The reader decodes, casts and fingerprints each chunk on the main thread when a batch needs it
(only the stream's ``_seq``/``_op`` are read on a thread, while the query compiles).

    python examples/benchmarks/read_cost.py --stream data/streams/sf0.1-window

Not a test: numbers go to RESULTS.md by hand, with the load average printed first.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from local_speed import child_env  # a sibling script

ROOT = Path(__file__).resolve().parents[2]
QUERIES = {"q3": "q03.sql", "q5": "q05.sql", "q10": "q10.sql"}
STATS = Path(tempfile.gettempdir()) / "read_cost_stats.json"


def step(name: str, stream: Path, query: str) -> None:
    """Run one step in this process and print its JSON line (CPU and wall seconds since start)."""
    import planner.cli.main  # every step pays what `ivm run` imports, and goes without pandas as it does

    sys.meta_path.insert(0, planner.cli.main.NoPandas)
    if name in ("decode", "tuples", "all-columns", "fingerprints", "reader"):
        _read(name, stream, query)
    times = os.times()
    print(json.dumps({"step": name, "cpu_seconds": round(times.user + times.system, 3)}))


def _read(name: str, stream: Path, query: str) -> None:
    import pyarrow.parquet as pq

    from catalog.tpch import tpch_catalog
    from operators.lowering.route_masks import row_masks
    from operators.lowering.stream_columns import columns_read
    from operators.runtime.column_types import arrow_type
    from operators.runtime.row_fingerprints import arrow_fingerprints
    from operators.runtime.stream import open_stream, python_values
    from planner.compiler import compile_query

    catalog = tpch_catalog()
    dataflow = compile_query((ROOT / "examples" / "tpch" / QUERIES[query]).read_text(), catalog).dataflow
    columns = columns_read(dataflow, catalog)
    if name == "reader":
        for _ in open_stream(stream, catalog).batches(10_000, tables=columns, columns=columns,
                                                      masks=row_masks(dataflow, catalog)):
            pass
        return
    if name in ("all-columns", "fingerprints"):
        for table in columns:
            for batch in pq.ParquetFile(stream / f"{table}.parquet").iter_batches(65_536):
                casts = [batch.column(c.name).cast(arrow_type(c.type)) for c in catalog.table(table).columns]
                if name == "fingerprints":
                    arrow_fingerprints(casts)
        return
    for table, names in columns.items():
        wanted = [column.name for column in catalog.table(table).columns if column.name in names]
        for batch in pq.ParquetFile(stream / f"{table}.parquet").iter_batches(65_536, columns=[*wanted, "_seq", "_op"]):
            if name == "tuples":
                types = {column.name: column.type for column in catalog.table(table).columns}
                values = [python_values(batch.column(c), types[c]) for c in wanted]
                rows = list(zip(*values, strict=True))
                del rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", type=Path, required=True)
    parser.add_argument("--query", choices=sorted(QUERIES), default="q3")
    parser.add_argument("--step", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    if args.step:
        step(args.step, args.stream, args.query)
        return
    with open("/proc/loadavg") as load:
        print(f"load average {' '.join(load.read().split()[:3])}; {args.stream}, {args.query}")
    env = child_env()  # with bytecode cached, as an installed `ivm` has it (see local_speed.child_env)
    warm = [sys.executable, __file__, "--stream", str(args.stream), "--query", args.query, "--step", "start"]
    subprocess.run(warm, env=env, cwd=ROOT, check=True, capture_output=True)  # fills the bytecode cache
    for name in ("start", "decode", "tuples", "all-columns", "fingerprints", "reader", "run"):
        for _ in range(args.repeat):
            started = time.perf_counter()
            if name == "run":
                command = [sys.executable, "-m", "planner.cli", "run", "--engine", "local", "--query",
                           str(ROOT / "examples" / "tpch" / QUERIES[args.query]), "--stream", str(args.stream),
                           "--batch-size", "10000", "--stats-json", str(STATS)]
            else:
                command = [sys.executable, __file__, "--stream", str(args.stream), "--query", args.query, "--step", name]
            before = os.times()
            output = subprocess.run(command, env=env, cwd=ROOT, check=True, capture_output=True, text=True).stdout
            after = os.times()
            wall = time.perf_counter() - started
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            last = output.strip().splitlines()[-1]
            maintenance = f"maintenance cpu {json.loads(STATS.read_text())['maintenance_cpu_seconds']:.2f} s; " \
                if name == "run" else ""
            print(f"{name:12s} cpu {cpu:6.2f} s  wall {wall:6.2f} s   {maintenance}{last[:150] if name == 'run' else ''}",
                  flush=True)


if __name__ == "__main__":
    main()
