"""Benchmark peer: TPC-H Q3 maintained by Flink SQL over the same update stream (issue 10).

Runs the text of `examples/tpch/q03.sql` unchanged in Flink SQL (streaming mode, parallelism 1)
over the changes of customer, orders and lineitem from a stream directory in the project's format
(one Parquet file per table, `_seq` global order, `_op` +1/-1), collects the changelog of the
result, applies it to get the final top 10, and prints updates/s for the whole job (process start
to final result, JVM start-up included), the CPU seconds and peak RSS of the process tree (Python
driver + JVM, sampled from /proc every 0.2 s) and the final rows. `--check` compares the rows with a Parquet result of
`ivm run --out` (non-empty, equal as sets of exact values).

How the changes reach Flink, and why. Flink SQL has no way to turn an insert-only row carrying an
`_op` column into a retraction, so the stream must arrive in a changelog format. Flink's filesystem
connector reads `debezium-json` as a changelog (+I for "c", -D for "d"), decoded in the JVM. So the
job first writes the three tables' changes, merged in `_seq` order, to ONE debezium-json file (each
row tagged with its table in a column `t`; built column-wise with Arrow), then scans it
once (one file is one split, read by one source at parallelism 1, so the changes enter Flink in
`_seq` order; Flink's log shows the one `FileSourceSplit [0, file size)`) and splits it into three views `... WHERE t = '<table>'` (see `table_environment`
for why the scan passes through a DataStream). Across tables the joins see the changes
interleaved as Flink's network buffers deliver them, which is how Flink always runs; within a
table the order is `_seq`. The JSON rows carry all columns, as a CDC record does; the scan decodes
only the ten Q3 reads. Alternatives rejected: a Python collection (`from_collection` ->
`from_changelog_stream`) pickles 1.45 M rows in the driver and is the naive job, not a fair peer;
Flink's Parquet format is not in the PyFlink wheel and is insert-only anyway (setting the row kind
from `_op` needs a Python map, i.e. every row through the Python worker); one file per table
would be read by three independent sources, each at its own pace, losing the `_seq` interleaving.
Writing the JSON is counted in the job's wall time (it is this job's way of reading the stream);
its seconds are printed apart so the rate without it can be read too. `--read-only` runs the same
scan into a blackhole sink, to show the reading's share.

Dialect notes: the query text runs as is. DECIMAL stays exact: the JSON carries decimals as
strings, read into DECIMAL(15, 2); Flink types `sum(l_extendedprice * (1 - l_discount))` as
DECIMAL(38, 4), as Spark does. `ORDER BY ... LIMIT 10` runs as Flink's streaming Top-N
(SortLimit, retract strategy), which keeps the whole aggregate input ordered in state; the joins
are Flink's regular (non-windowed) stream joins holding both inputs in heap state. Ties at the 10th place may be
broken differently from the local runner; `--check` would then report them.

Runs in its own venv, not the project's (PyFlink pins its own pyarrow and Beam):

    python3 -m venv data/peers/flink && data/peers/flink/bin/pip install apache-flink==2.3.0
    data/peers/flink/bin/python examples/benchmarks/flink_q3.py --stream data/streams/sf0.1-window \
        --check /tmp/flink-check/local.parquet

Not a test: numbers go to RESULTS.md by hand with the machine described.
"""

from __future__ import annotations

import argparse
import decimal
import os
import resource
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from peer_check import check_against_ivm  # examples/benchmarks/, beside this script

STARTED = time.perf_counter()  # the whole job is timed from here (the interpreter start is ~0.1 s before)
ROOT = Path(__file__).resolve().parents[2]
TABLES = ("customer", "orders", "lineitem")
Q3_COLUMNS = ("c_custkey", "c_mktsegment", "o_orderkey", "o_custkey", "o_orderdate", "o_shippriority",
              "l_orderkey", "l_extendedprice", "l_discount", "l_shipdate")  # the columns Q3 reads
FLINK_TYPES = {pa.int32(): "INT", pa.int64(): "BIGINT", pa.string(): "STRING", pa.date32(): "DATE"}


def flink_type(arrow_type: pa.DataType) -> str:
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision}, {arrow_type.scale})"
    return FLINK_TYPES[arrow_type]


def json_values(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Each value as JSON text: numbers bare, text/decimal/date quoted (decimals stay exact), null as null."""
    text = pc.cast(column, pa.string())
    if pa.types.is_integer(column.type):
        return pc.fill_null(text, "null")
    if pa.types.is_string(column.type) and pc.any(pc.match_substring_regex(column, "[\\x00-\\x1f]")).as_py():
        raise SystemExit("a text value holds a control character; this JSON writer escapes only \\ and \"")
    escaped = pc.replace_substring(pc.replace_substring(text, "\\", "\\\\"), '"', '\\"')
    return pc.fill_null(pc.binary_join_element_wise('"', escaped, '"', ""), "null")


def table_changes(path: Path) -> tuple[pa.Schema, pa.Table]:
    """One table's changes as (_seq, debezium-json line) columns, built column-wise in Arrow.

    The row object also carries the table's name in `t`, so one file can hold every table."""
    table = pq.read_table(path)
    columns = [name for name in table.schema.names if name not in ("_seq", "_op")]
    pieces: list = ['{"t":"' + path.stem + '"']
    for name in columns:
        pieces += [f',"{name}":', json_values(table[name])]
    row = pc.binary_join_element_wise(*pieces, "}", "")
    line = pc.if_else(pc.equal(table["_op"], 1),
                      pc.binary_join_element_wise('{"before":null,"after":', row, ',"op":"c"}\n', ""),
                      pc.binary_join_element_wise('{"before":', row, ',"after":null,"op":"d"}\n', ""))
    return pa.schema([table.schema.field(name) for name in columns]), pa.table({"seq": table["_seq"], "line": line})


def write_changelog(stream: Path, out: Path) -> tuple[dict[str, pa.Schema], int]:
    """Merge the tables' changes in `_seq` order into one debezium-json file; (schemas, update count)."""
    schemas, changes = {}, []
    for name in TABLES:
        schemas[name], lines = table_changes(stream / f"{name}.parquet")
        changes.append(lines)
    merged = pa.concat_tables(changes).sort_by("seq")["line"].combine_chunks().cast(pa.large_string())
    _, offsets, data = merged.buffers()  # every line ends in \n, so the value bytes are the file
    first, last = np.frombuffer(offsets, dtype=np.int64)[[merged.offset, merged.offset + len(merged)]]
    with open(out, "wb") as sink:
        sink.write(data[first:last])
    return schemas, len(merged)


def table_environment(schemas: dict[str, pa.Schema], path: Path, mini_batch: bool):
    """A streaming TableEnvironment at parallelism 1 reading the changelog file ONCE, one view per table.

    Three views straight over the source table would each get their own scan (the planner pushes
    each view's filter into its scan, and scans with different filters are not reused): the file
    would be read and decoded three times, and each table's scan would run at its own pace. Passing
    the one scan through a DataStream (`to_changelog_stream` -> `from_changelog_stream`, all in the
    JVM) stops the pushdown, so the source reads the file once, in `_seq` order. The scan keeps the
    columns Q3 reads (`Q3_COLUMNS`), as the planner's projection pushdown would have."""
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import EnvironmentSettings, StreamTableEnvironment

    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    t_env = StreamTableEnvironment.create(env, EnvironmentSettings.in_streaming_mode())
    if mini_batch:  # Flink's documented throughput tuning for aggregates (buffers per key before updating)
        config = t_env.get_config()
        config.set("table.exec.mini-batch.enabled", "true")
        config.set("table.exec.mini-batch.allow-latency", "1 s")
        config.set("table.exec.mini-batch.size", "5000")
    columns = [f"`{field.name}` {flink_type(field.type)}" for schema in schemas.values() for field in schema]
    t_env.execute_sql(f"CREATE TEMPORARY TABLE changes (t STRING, {', '.join(columns)}) WITH ("
                      f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'debezium-json')")
    scan = t_env.sql_query(f"SELECT t, {', '.join(Q3_COLUMNS)} FROM changes")
    t_env.create_temporary_view("changes_once", t_env.from_changelog_stream(t_env.to_changelog_stream(scan)))
    for name, schema in schemas.items():
        kept = [column for column in schema.names if column in Q3_COLUMNS]
        t_env.execute_sql(f"CREATE TEMPORARY VIEW {name} AS SELECT {', '.join(kept)} "
                          f"FROM changes_once WHERE t = '{name}'")
    return t_env


def run_query(t_env, query: str) -> tuple[list[tuple], int]:
    """Run the query to the end of the bounded source; (final rows, changelog rows received)."""
    from pyflink.common import RowKind

    result: dict[tuple, int] = {}
    received = 0
    with t_env.execute_sql(query).collect() as changes:
        for change in changes:
            received += 1
            row = tuple(change)
            weight = 1 if change.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER) else -1
            result[row] = result.get(row, 0) + weight
            if result[row] == 0:
                del result[row]
    if any(count != 1 for count in result.values()):
        raise SystemExit(f"the result changelog does not add up to a set: {result}")
    return list(result), received


def read_only(t_env) -> None:
    """Only read and decode the changelog (the columns Q3 uses) into a blackhole: the source's share."""
    t_env.execute_sql("CREATE TEMPORARY TABLE drained (t STRING, " + ", ".join(
        f"{name} STRING" for name in Q3_COLUMNS) + ") WITH ('connector' = 'blackhole')")
    casts = ", ".join(f"CAST({name} AS STRING)" for name in Q3_COLUMNS)
    t_env.execute_sql(f"INSERT INTO drained SELECT t, {casts} FROM changes_once").wait()


class TreeUsage:
    """Peak summed RSS and CPU seconds of this process and its descendants (the JVM), sampled from /proc.

    The JVM is not a waited-for child of the driver, so `time -v` and `RUSAGE_CHILDREN` miss it."""

    def __init__(self, every: float = 0.2) -> None:
        self.peak_kib = 0
        self.descendants_peak_kib = 0  # the JVM (and its launcher)
        self._cpu_ticks: dict[int, int] = {}  # last seen utime + stime of each process
        self._every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def cpu_seconds(self) -> float:
        return sum(self._cpu_ticks.values()) / os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> TreeUsage:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def _run(self) -> None:
        while not self._stop.wait(self._every):
            self._sample()

    def _sample(self) -> None:
        stats = _stats()
        tree, frontier = [os.getpid()], [os.getpid()]
        while frontier:
            frontier = [pid for pid, (parent, _, _) in stats.items() if parent in frontier]
            tree.extend(frontier)
        rss = [stats[pid][2] for pid in tree if pid in stats]
        self.peak_kib = max(self.peak_kib, sum(rss))
        self.descendants_peak_kib = max(self.descendants_peak_kib, sum(rss[1:]))
        for pid in tree:
            if pid in stats:
                self._cpu_ticks[pid] = stats[pid][1]


def _stats() -> dict[int, tuple[int, int, int]]:
    """pid -> (parent pid, utime + stime in clock ticks, RSS in KiB) of every process."""
    page_kib = os.sysconf("SC_PAGE_SIZE") // 1024
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as stat:
                    fields = stat.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            # proc(5) numbers the fields from 1: ppid 4, utime 14, stime 15, rss 24 (pages); state (3) is [0] here
            stats[int(entry)] = (int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[21]) * page_kib)
    return stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stream", type=Path, required=True, help="stream directory (one Parquet file per table)")
    parser.add_argument("--query", type=Path, default=ROOT / "examples" / "tpch" / "q03.sql")
    parser.add_argument("--work", type=Path, default=None, help="where the debezium-json file goes (default: temp)")
    parser.add_argument("--mini-batch", action="store_true", help="enable Flink's mini-batch aggregation")
    parser.add_argument("--check", type=Path, help="Parquet result of `ivm run --out` to compare with")
    parser.add_argument("--read-only", action="store_true", help="only read the changelog: no query, no result")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="flink-q3-"))
    work.mkdir(parents=True, exist_ok=True)
    path = work / "changes.json"
    with TreeUsage() as usage:
        schemas, updates = write_changelog(args.stream, path)
        converted = time.perf_counter() - STARTED
        t_env = table_environment(schemas, path, args.mini_batch)
        if args.read_only:
            read_only(t_env)
            rows, received = [], 0
        else:
            rows, received = run_query(t_env, args.query.read_text())
        elapsed = time.perf_counter() - STARTED
    rows.sort(key=lambda row: (-row[1], row[2]))
    for row in rows:
        print(*row, sep="\t")
    print(f"{updates} updates of {', '.join(TABLES)} in {elapsed:.2f} s ({updates / elapsed:,.0f} updates/s) with "
          f"Flink SQL{' reading only' if args.read_only else ''}, whole job; of which {converted:.2f} s writing debezium-json "
          f"({updates / (elapsed - converted):,.0f} updates/s without it); {received} result changes; "
          f"result: {len(rows)} rows; peak RSS: process tree (sampled) {usage.peak_kib / 1024:,.0f} MiB, "
          f"the JVM {usage.descendants_peak_kib / 1024:,.0f} MiB, "
          f"the Python driver {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB; "
          f"CPU of the tree {usage.cpu_seconds:.1f} s")
    if args.check:
        exact = [(key, decimal.Decimal(revenue), date, priority) for key, revenue, date, priority in rows]
        check_against_ivm("Flink", exact, args.check)


if __name__ == "__main__":
    main()
