"""Benchmark: a pipeline refresh after a change of 1% of lineitem, TPC-H Q3 both ways.

Two Spark Declarative Pipelines over the same TPC-H tables:

- ``full``: SDP's own ``@dp.materialized_view`` of Q3 (``examples/tpch/q03.sql``) over temporary
  views reading the tables' Parquet files: every run recomputes it (SPARK-56451);
- ``ivm``: the incremental view of ``planner.pipelines`` over change files: a run applies the
  files that arrived since the last one.

Each pipeline runs once over the base tables (for ``ivm`` every row is an insert), then 1% of the
lineitem rows are updated (``l_extendedprice`` + 1.00, each update a delete and an insert; the
``full`` pipeline's lineitem files are rewritten, the ``ivm`` one gets one change file) and each runs
again. Printed per run: the wall time of the whole ``ivm pipelines run`` (Spark's start included)
and of the flow(s) computing Q3 (from the run's events: RUNNING to COMPLETED). The two results are
compared after the refresh.

    python examples/benchmarks/pipeline_refresh.py --sf 0.1 [--work DIR]

With ``SPARK_IVM_PROFILE=DIR`` in the environment the incremental view's processors also write their
per-task counters there (``operators/runtime/spark_counters.py``: phases, state calls, chunks).

Not a test: nothing here asserts but the two results' equality; numbers go to RESULTS.md by hand.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.tpch import tpch_catalog  # noqa: E402
from operators.runtime.stream import OP_COLUMN, SEQ_COLUMN  # noqa: E402
from planner.pipelines.landing import _plain, land  # noqa: E402
from planner.workloads.tpch_data import generate_tpch  # noqa: E402

QUERY = ROOT / "examples" / "tpch" / "q03.sql"
TABLES = ("customer", "orders", "lineitem")
SPEC = "name: {name}\nstorage: storage\nlibraries:\n  - glob:\n      include: transformations/**\n"
IVM_DEFINITION = f'''
from pathlib import Path
from planner.pipelines import incremental_view

incremental_view(spark, "q3", Path({str(QUERY)!r}).read_text(), catalog="tpch",
                 changes_dir=spark.conf.get("spark.bench.changes"))
'''
FULL_DEFINITION = f'''
from pathlib import Path
from pyspark import pipelines as dp

TABLES = spark.conf.get("spark.bench.tables")
for table in {TABLES!r}:
    dp.temporary_view(name=table)(lambda table=table: spark.read.parquet(f"{{TABLES}}/{{table}}"))


@dp.materialized_view(name="q3_full")
def q3_full():
    return spark.sql(Path({str(QUERY)!r}).read_text())
'''
EVENT = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d): Flow (\S+) (?:is|has) (RUNNING|COMPLETED)")


def project(directory: Path, name: str, definition: str) -> Path:
    (directory / "transformations").mkdir(parents=True, exist_ok=True)
    (directory / "spark-pipeline.yml").write_text(SPEC.format(name=name))
    (directory / "transformations" / "definitions.py").write_text(definition)
    return directory / "spark-pipeline.yml"


#: The heap of the pipeline's JVMs (spark-submit's default is 1 GiB): at SF 1 the incremental view's
#: first run is one micro-batch of every row; the same for both pipelines (``make_spark_session``'s size).
DRIVER_MEMORY = "4g"
#: Spark's fixed 10 s wait for a new Python worker (PythonWorkerFactory) is missed on a loaded machine
WORKER_TIMEOUT = "Python worker failed to connect back"


def run(spec: Path, settings: dict[str, str], label: str, attempts: int = 3) -> tuple[float, float]:
    """One ``ivm pipelines run``: (wall seconds, seconds from the first flow RUNNING to the last COMPLETED),
    printed as soon as the run ends (a long run's phases are known even if a later one fails). A run
    failing only by Spark's worker timeout commits nothing and is run again (at most ``attempts``
    times, each retry printed); the times are the successful attempt's."""
    conf = [word for key, value in settings.items() for word in ("--conf", f"{key}={value}")]
    for attempt in range(1, attempts + 1):
        started = time.perf_counter()
        completed = subprocess.run([sys.executable, "-m", "planner.cli", "pipelines", "run", "--spec", str(spec), *conf],
                                   cwd=ROOT, capture_output=True, text=True, env=os.environ | {
                                       "PYTHONPATH": str(ROOT), "SPARK_DRIVER_MEMORY": DRIVER_MEMORY})
        wall = time.perf_counter() - started
        if completed.returncode == 0:
            break
        if WORKER_TIMEOUT not in completed.stdout + completed.stderr or attempt == attempts:
            raise SystemExit(f"{spec}: exit {completed.returncode}\n{completed.stdout[-3000:]}\n{completed.stderr[-3000:]}")
        print(f"{spec}: attempt {attempt} failed by Spark's Python worker timeout after {wall:.0f} s; again", flush=True)
    stamps = [datetime.fromisoformat(m.group(1)) for line in completed.stdout.splitlines() if (m := EVENT.match(line))]
    flows = (max(stamps) - min(stamps)).total_seconds()
    print(f"{datetime.now():%H:%M:%S} {spec.parent.name} {label}: wall {wall:.1f} s, flows {flows:.1f} s", flush=True)
    return wall, flows


def base_stream(data: Path, stream: Path) -> None:
    """Every row of Q3's tables as an insert, ``_seq`` numbered across the tables."""
    stream.mkdir(parents=True, exist_ok=True)
    seq = 1
    for table in TABLES:
        rows = pq.read_table(data / f"{table}.parquet")
        rows = rows.append_column(OP_COLUMN, pa.array([1] * len(rows), pa.int32()))
        rows = rows.append_column(SEQ_COLUMN, pa.array(range(seq, seq + len(rows)), pa.int64()))
        seq += len(rows)
        pq.write_table(rows, stream / f"{table}.parquet")


def updated_lineitem(lineitem: pa.Table) -> tuple[pa.Table, pa.Table, pa.Table]:
    """(old rows, new rows, the new table): 1% of the rows (every 100th) with l_extendedprice + 1.00."""
    chosen = pa.array([i % 100 == 0 for i in range(len(lineitem))])
    old = lineitem.filter(chosen)
    price = old.column("l_extendedprice")
    position = old.schema.get_field_index("l_extendedprice")
    new = old.set_column(position, old.schema.field(position),
                         pc.add(price, pa.scalar(1, price.type)).cast(price.type))
    return old, new, pa.concat_tables([lineitem.filter(pc.invert(chosen)), new])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=0.1)
    parser.add_argument("--work", help="working directory (default: a temporary one, deleted)")
    parser.add_argument("--reuse", action="store_true", help="the --work directory holds the initial runs: refresh only")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="pipeline-refresh-")).resolve()
    data = generate_tpch(args.sf, work / "tpch")
    tables, changes, stream = work / "tables", work / "changes", work / "stream"
    for table in TABLES:
        (tables / table).mkdir(parents=True, exist_ok=True)
        shutil.copyfile(data / f"{table}.parquet", tables / table / "part-0.parquet")
    base_stream(data, stream)
    land(stream, changes, 1, 1, tpch_catalog())
    specs = {"full": project(work / "full", "q3_full", FULL_DEFINITION), "ivm": project(work / "ivm", "q3_ivm", IVM_DEFINITION)}
    settings = {"spark.bench.tables": str(tables), "spark.bench.changes": str(changes)}
    lineitem = _plain(pq.read_table(data / "lineitem.parquet"))
    print(f"SF {args.sf}: lineitem {len(lineitem)} rows; work directory {work}")
    # --reuse: the initial runs were made in --work before (not timed again)
    timings = {name: [run(spec, settings, "initial")] if not args.reuse else [] for name, spec in specs.items()}

    old, new, updated = updated_lineitem(lineitem)
    seq = sum(pq.read_metadata(stream / f"{t}.parquet").num_rows for t in TABLES) + 1
    update = pa.concat_tables([old.append_column(OP_COLUMN, pa.array([-1] * len(old), pa.int32())),
                               new.append_column(OP_COLUMN, pa.array([1] * len(new), pa.int32()))])
    update = update.append_column(SEQ_COLUMN, pa.array(range(seq, seq + len(update)), pa.int64()))
    shutil.rmtree(stream)
    stream.mkdir()
    pq.write_table(update, stream / "lineitem.parquet")
    land(stream, work / "landing", 1, 1, tpch_catalog())  # then moved in under a name of its own
    os.replace(work / "landing" / "lineitem" / "part-00001-of-00001.parquet", changes / "lineitem" / "update-1pct.parquet")
    pq.write_table(updated, tables / "lineitem" / ".part-0.parquet")
    os.replace(tables / "lineitem" / ".part-0.parquet", tables / "lineitem" / "part-0.parquet")
    print(f"1% of lineitem updated: {len(old)} rows ({len(update)} changes)")
    for name, spec in specs.items():
        timings[name].append(run(spec, settings, "refresh"))

    ivm = pq.read_table(work / "ivm" / "storage" / "ivm" / "q3" / "table" / "part-00000.parquet")
    full = pq.read_table(sorted((work / "full" / "storage" / "warehouse" / "q3_full").glob("*.parquet")))
    same = sorted(map(tuple, (r.values() for r in ivm.to_pylist()))) == sorted(
        map(tuple, (r.values() for r in full.to_pylist())))
    print(f"results after the refresh: {len(ivm)} rows, equal: {same}")
    print("| pipeline | run | wall s (whole `ivm pipelines run`) | flows s (RUNNING → COMPLETED) |")
    print("|---|---|---|---|")
    for name, runs in timings.items():
        for label, (wall, flows) in zip(("initial", "refresh after 1% of lineitem")[-len(runs):], runs, strict=True):
            print(f"| {name} | {label} | {wall:.1f} | {flows:.1f} |")
    if not args.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
