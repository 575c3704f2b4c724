"""The check ``run_steps.sh`` ends with: did the three pipeline runs maintain Q3, each reading only its own changes?

    python check.py STREAM_DIR OUT_DIR

Two things, each printed, exit code 1 if either fails:

- the result in ``OUT_DIR/result`` equals ``spark.sql`` of Q3 (``examples/tpch/q03.sql``) over the
  stream's final tables (``planner.workloads.spark_reference``: each table's rows summed by ``_op``,
  handed to a local Spark session), in Q3's ORDER BY with ties, and is not empty;
- run *k* read only the change files landed for step *k*: the stateful flow's checkpoint (SDP's,
  under ``OUT_DIR/storage``) has one micro-batch per run, whose file-source log names exactly the
  files ``part-0000k-of-00003.parquet`` of the tables.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT))

from catalog.tpch import tpch_catalog  # noqa: E402
from operators.runtime.spark_session import make_spark_session  # noqa: E402
from planner.workloads.oracle import StreamTables, assert_matches_reference  # noqa: E402
from planner.workloads.spark_reference import SparkReference  # noqa: E402

QUERY = ROOT / "examples" / "tpch" / "q03.sql"
STEPS = 3
#: the flow writing the change feed: its checkpoint under the pipeline's storage (SDP's layout)
FLOW_CHECKPOINT = Path("_checkpoints/spark_catalog/default/q3_changes/q3_changes/0")


def read_files(checkpoint: Path) -> dict[int, set[str]]:
    """Per micro-batch of the flow, the names of the files its file sources read (their source logs)."""
    batches: dict[int, set[str]] = {}
    for source in (checkpoint / "sources").iterdir():
        for log in source.iterdir():
            if log.name.isdigit():
                lines = log.read_text().splitlines()[1:]  # the first line is the log's version
                batches.setdefault(int(log.name), set()).update(Path(json.loads(line)["path"]).name for line in lines)
    return batches


def check_steps(out: Path) -> list[str]:
    """What is wrong with the runs' reading (empty: each run read exactly its own step's files)."""
    checkpoint = out / "storage" / FLOW_CHECKPOINT
    committed = sorted(int(p.name) for p in (checkpoint / "commits").iterdir() if p.name.isdigit())
    if committed != list(range(STEPS)):
        return [f"the stateful flow committed micro-batches {committed}, not one per run"]
    read = read_files(checkpoint)
    problems = []
    for step in range(1, STEPS + 1):
        landed = {f"part-{step:05d}-of-{STEPS:05d}.parquet"}
        if read.get(step - 1) != landed:
            problems.append(f"run {step} read {sorted(read.get(step - 1, ()))}, not only {sorted(landed)}")
        else:
            print(f"check: run {step} read only the files landed for it ({', '.join(sorted(landed))})")
    return problems


def check_result(stream: Path, out: Path) -> list[str]:
    """What is wrong with the result (empty: equal to ``spark.sql``'s Q3 over the final tables)."""
    rows = [row for file in sorted((out / "result").glob("*.parquet")) for row in pq.read_table(file).to_pylist()]
    rows.sort(key=lambda row: (-row["revenue"], row["o_orderdate"]))  # Q3's ORDER BY revenue DESC, o_orderdate
    catalog = tpch_catalog()
    tables = StreamTables.from_directory(stream, catalog)
    spark = make_spark_session(app="tpch-q3-check")
    try:
        with SparkReference(spark, catalog, tables) as reference:
            reference.as_of(max(max(data.column("_seq").to_pylist(), default=0) for data in tables.tables.values()))
            expected = reference.reference(QUERY.read_text())
    finally:
        spark.stop()
    if not expected.is_informative():
        return ["Q3 over the final tables is empty: the comparison would prove nothing"]
    try:
        assert_matches_reference([tuple(row.values()) for row in rows], expected, "Q3 after the pipeline runs")
    except AssertionError as err:
        return [str(err)]
    print(f"check: the result equals spark.sql's Q3 over the stream's final tables ({len(rows)} rows)")
    return []


def main() -> int:
    if len(sys.argv) != 3:
        print(f"usage: {sys.argv[0]} STREAM_DIR OUT_DIR", file=sys.stderr)
        return 2
    stream, out = Path(sys.argv[1]), Path(sys.argv[2])
    problems = check_steps(out) + check_result(stream, out)
    for problem in problems:
        print(f"check failed: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
