"""Profile: where a Spark-runner view spends each micro-batch, per stateful operator.

Runs one view over one stream directory as ``ivm run --engine spark`` does (one query, the stream
source in batches of ``--batch-size`` ``_seq`` values), followed by ``--empty`` micro-batches that
carry no change (their cost is the query's fixed cost per micro-batch), with three sources of numbers:

- Structured Streaming's progress per micro-batch (``StreamingQuery.recentProgress``): input rows and
  the trigger's phases (query planning, the batch itself, the offset and commit logs);
- Spark's SQL metrics per operator and micro-batch, from the session's REST API (the UI is turned on
  for this): per ``transformWithState`` operator its Python time as Spark sees it, its state-store
  commit, the shuffle bytes written into it, its output rows;
- the processors' own counters (``operators/runtime/spark_counters.py``, on through an executor
  environment variable): changes in and out, Spark groups, chunks, state-server calls and their round
  trips, and the Python phases (reading the input rows, unpickling changes and states, the stage
  logic, pickling states and changes); and the sink's own time (``ResultSink.seconds``).

Operators are named by the state variables they hold (the checkpoint's state metadata): ``stage_N``
is stage N of the dataflow, ``validated_T`` the validation of table T.

    python examples/benchmarks/spark_profile.py --stream data/streams/sf0.1-window --batch-size 100000 \\
        [--query examples/tpch/q03.sql] [--empty 2] [--json profile.json] [--conf KEY=VALUE ...] \\
        [--spark-strategy python|jvm]

With ``--spark-strategy jvm`` (the JVM delta strategy, docs/spark.md) there is no stateful operator to
profile; the table is then the seconds of each phase of its ``foreachBatch`` function per micro-batch.

Not a test: it asserts nothing. Numbers go to RESULTS.md by hand, with the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import urllib.request
from collections import defaultdict
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.load import load_catalog  # noqa: E402
from operators.runtime.spark_counters import PROFILE_ENV  # noqa: E402
from operators.runtime.spark_session import make_spark_session  # noqa: E402
from operators.runtime.spark_stream_source import plan_batches, stream_changes, table_files  # noqa: E402
from planner.view import MaintainedView  # noqa: E402

#: Spark's SQL metrics kept per operator, by the names Spark gives them.
SQL_METRICS = {
    "time to execute Python code": "spark python ms",
    "time to commit changes": "commit ms",
    "RocksDB: commit - changelog commit time": "changelog ms",
    "number of output rows": "spark rows out",
    "RocksDB: number of get calls": "rocksdb gets",
    "RocksDB: number of put calls": "rocksdb puts",
    "RocksDB: write - total of uncompressed bytes written by DB::{Put(), Delete(), Merge(), Write()}": "rocksdb bytes written",
}
UNITS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}


def metric_value(text: str) -> float:
    """A SQL metric's total: '516', '97 ms', or 'total (min, med, max ...)\\n1.2 MiB (...)'."""
    total = text.split("\n", 1)[1] if "\n" in text else text
    match = re.match(r"\s*([\d.,]+)\s*([A-Za-z]*)", total)
    return float(match.group(1).replace(",", "")) * UNITS.get(match.group(2), 1) if match else 0.0


def sql_operator_metrics(spark) -> dict[int, dict[int, dict[str, float]]]:
    """Per micro-batch, per state operator id: ``SQL_METRICS`` and the shuffle bytes and rows written
    by the exchanges feeding it, from the REST API's SQL executions."""
    context = spark.sparkContext
    url = f"{context.uiWebUrl}/api/v1/applications/{context.applicationId}/sql?details=true&length=100000"
    executions = json.load(urllib.request.urlopen(url))
    found: dict[int, dict[int, dict[str, float]]] = defaultdict(dict)
    for execution in executions:
        batch = re.search(r"batch = (\d+)", execution.get("description", ""))
        if batch is None:
            continue
        nodes = {node["nodeId"]: node for node in execution["nodes"]}
        children = defaultdict(list)
        for edge in execution.get("edges", []):
            children[edge["toId"]].append(edge["fromId"])
        for node in nodes.values():
            operator = re.search(r"opId = (\d+)", node.get("desc", ""))
            if not node["nodeName"].startswith("TransformWithState") or operator is None:
                continue
            metrics = {name: 0.0 for name in SQL_METRICS.values()} | {"shuffle bytes": 0.0, "shuffle rows": 0.0}
            for metric in node["metrics"]:
                if metric["name"] in SQL_METRICS:
                    metrics[SQL_METRICS[metric["name"]]] += metric_value(metric["value"])
            for exchange in feeding_exchanges(node["nodeId"], nodes, children):
                for metric in exchange["metrics"]:
                    if metric["name"] == "shuffle bytes written":
                        metrics["shuffle bytes"] += metric_value(metric["value"])
                    elif metric["name"] == "shuffle records written":
                        metrics["shuffle rows"] += metric_value(metric["value"])
            found[int(batch.group(1))][int(operator.group(1))] = metrics
    return found


def feeding_exchanges(node_id: int, nodes: dict, children: dict) -> list[dict]:
    """The Exchange nodes below a node, not looking past another state operator."""
    exchanges, frontier, seen = [], list(children[node_id]), set()
    while frontier:
        current = frontier.pop()
        if current in seen or current not in nodes:
            continue
        seen.add(current)
        name = nodes[current]["nodeName"]
        if name == "Exchange":
            exchanges.append(nodes[current])
        elif not name.startswith("TransformWithState"):
            frontier.extend(children[current])
    return exchanges


def operator_names(spark, checkpoint: Path, view: MaintainedView) -> dict[int, tuple[str, set[str]]]:
    """State operator id → (a readable name, its state variable names), from the state metadata."""
    stages = {f"stage_{node.id}": node.stage.name for node in view.compiled.dataflow.stages}
    named = {}
    for operator in spark.read.format("state-metadata").load(str(checkpoint)).collect():
        variables = {v["stateName"] for v in json.loads(operator.operatorProperties)["stateVariables"]}
        stage = next((name for name in sorted(variables) if re.fullmatch(r"stage_\d+(_rows|_pages)?", name)), None)
        if stage is not None:
            base = re.match(r"stage_\d+", stage).group(0)
            label = f"{base} {stages.get(base, '')}".strip()
        else:
            label = min(variables)
        named[operator.operatorId] = (label, variables)
    return named


def worker_counters(directory: Path) -> dict[int, dict[str, dict[str, float]]]:
    """Per micro-batch, per state variable the task reported under: its counters summed over tasks."""
    found: dict[int, dict[str, dict[str, float]]] = defaultdict(lambda: defaultdict(lambda: defaultdict(float)))
    for path in directory.glob("*.jsonl"):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            into = found[record["batch"]][record["operator"]]
            into["tasks"] += 1
            for name, value in record["seconds"].items():
                into[f"{name} s"] += value
            for name, value in record["counts"].items():
                into[name] += value
    return found


def run_with_retries(runner, attempts: int = 4) -> None:
    """``runner.run_available()``, the query restarted from its checkpoint when a Python worker missed
    Spark's fixed 10 s connect-back timeout (a loaded machine), so that an older runner without its
    own retry can be profiled on the same machine; the batches before a restart lose their progress."""
    for attempt in range(attempts):
        try:
            runner.run_available()
            return
        except Exception as error:  # SparkBatchError, whose module path moved between versions
            if attempt == attempts - 1 or "failed to connect back" not in str(error):
                raise
            print(f"restarting after a Python worker start timeout ({attempt + 1})", file=sys.stderr)


def profile(args) -> dict:
    catalog = load_catalog(args.catalog)
    stream = Path(args.stream)
    sql = Path(args.query).read_text()
    tables = [name for name in catalog.tables if table_files(stream, name)]
    batches = plan_batches(stream, tables, args.batch_size)
    batches = attrs.evolve(batches, count=batches.count + args.empty)  # the trailing batches hold no change
    counters_dir = Path(tempfile.mkdtemp(prefix="spark-profile-"))
    settings = {"spark.ui.enabled": "true", f"spark.executorEnv.{PROFILE_ENV}": str(counters_dir),
                "spark.sql.streaming.numRecentProgressUpdates": "1000"}
    settings |= dict(setting.split("=", 1) for setting in args.conf)
    spark = make_spark_session(settings=settings)
    changes = {name: stream_changes(spark, stream, catalog.table(name), batches) for name in tables}
    started = time.perf_counter()
    view = MaintainedView(sql, catalog, engine="spark", spark=spark, changes=changes, keep_outputs=False,
                          spark_strategy=args.spark_strategy)
    runner = view.runner
    run_with_retries(runner)
    seconds = time.perf_counter() - started
    progress = [json.loads(p.json) for p in runner.query.recentProgress]
    # the JVM delta strategy has no stateful operator: its phases are timed by its foreachBatch function
    phases = runner.delta_batch.phases if runner.delta_plan is not None else {}
    names = operator_names(spark, runner.checkpoint_dir, view) if not phases else {}
    operators = sql_operator_metrics(spark)
    workers = worker_counters(counters_dir)
    result_rows = len(runner.current_result())
    view.close()
    rows = []
    for batch in progress:
        number = batch["batchId"]
        ops = {}
        for operator_id, (label, variables) in sorted(names.items()):
            entry = dict(operators.get(number, {}).get(operator_id, {}))
            for variable in variables:
                for name, value in workers.get(number, {}).get(variable, {}).items():
                    entry[name] = entry.get(name, 0) + value
            ops[label] = entry
        query_s, write_s = runner.sink.seconds.get(number, (0.0, 0.0))
        rows.append({"batch": number, "input rows": batch["numInputRows"], "durations ms": batch["durationMs"],
                     "sink wait s": query_s, "sink write s": write_s, "operators": ops,
                     "jvm phases s": phases.get(number, {})})
    return {"stream": str(stream), "query": args.query, "batch size": args.batch_size, "empty batches": args.empty,
            "seconds": seconds, "result rows": result_rows, "settings": args.conf, "load": os.getloadavg(), "batches": rows}


COLUMNS = ("changes in", "changes out", "groups", "chunks", "state calls", "state calls s", "python s",
           "input rows s", "unpickle changes s", "unpickle state s", "stage s", "pickle state s", "pickle changes s",
           "spark python ms", "commit ms", "shuffle bytes")


def operator_table(batches: list[dict]) -> str:
    """One row per operator: the per-micro-batch mean over ``batches``."""
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for batch in batches:
        for label, entry in batch["operators"].items():
            for name, value in entry.items():
                totals[label][name] += value
    count = max(len(batches), 1)
    lines = ["| operator | " + " | ".join(COLUMNS) + " |", "|---" * (len(COLUMNS) + 1) + "|"]
    for label, entry in totals.items():
        lines.append(f"| {label} | " + " | ".join(number(entry.get(c, 0) / count) for c in COLUMNS) + " |")
    lines.append("| **all** | " + " | ".join(number(sum(e.get(c, 0) for e in totals.values()) / count) for c in COLUMNS) + " |")
    return "\n".join(lines)


def batch_table(batches: list[dict]) -> str:
    """One row per micro-batch: its trigger's phases and the operators' sums."""
    header = ("batch", "input rows", "trigger s", "planning s", "sink wait s", "sink write s", "logs s", "state calls",
              "state calls s", "python s", "spark python s", "commit s", "shuffle MB")
    lines = ["| " + " | ".join(header) + " |", "|---" * len(header) + "|"]
    for batch in batches:
        durations = batch["durations ms"]
        logs = durations.get("walCommit", 0) + durations.get("commitOffsets", 0) + durations.get("latestOffset", 0)
        values = (batch["batch"], batch["input rows"], durations.get("triggerExecution", 0) / 1000,
                  durations.get("queryPlanning", 0) / 1000, batch["sink wait s"], batch["sink write s"], logs / 1000,
                  *(summed(batch, name) / scale for name, scale in
                    (("state calls", 1), ("state calls s", 1), ("python s", 1), ("spark python ms", 1000),
                     ("commit ms", 1000), ("shuffle bytes", 1e6))))
        lines.append("| " + " | ".join(number(v) for v in values) + " |")
    return "\n".join(lines)


def phase_table(batches: list[dict]) -> str:
    """One row per micro-batch: the JVM delta strategy's phases (``DeltaBatch.phases``)."""
    names = list(dict.fromkeys(name for b in batches for name in b["jvm phases s"]))
    lines = ["| batch | input rows | " + " | ".join(names) + " |", "|---" * (len(names) + 2) + "|"]
    for batch in batches:
        values = [batch["batch"], batch["input rows"], *(batch["jvm phases s"].get(n, 0.0) for n in names)]
        lines.append("| " + " | ".join(number(v) for v in values) + " |")
    return "\n".join(lines)


def summed(batch: dict, name: str) -> float:
    """A counter of one micro-batch, summed over its operators."""
    return sum(entry.get(name, 0) for entry in batch["operators"].values())


def number(value: float) -> str:
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}".replace(",", " ")
    return f"{value:.2f}" if abs(value) < 100 else f"{value:,.0f}".replace(",", " ")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stream", required=True)
    parser.add_argument("--query", default=str(ROOT / "examples" / "tpch" / "q03.sql"))
    parser.add_argument("--catalog", default="tpch")
    parser.add_argument("--batch-size", type=int, default=100_000)
    parser.add_argument("--empty", type=int, default=2, help="micro-batches without changes after the stream")
    parser.add_argument("--json", help="write every number here")
    parser.add_argument("--spark-strategy", choices=("python", "jvm"), default="python",
                        help="python: per stateful operator; jvm: the JVM delta strategy's phases per micro-batch")
    parser.add_argument("--conf", action="append", default=[], metavar="KEY=VALUE",
                        help="a Spark setting for the session (repeatable), e.g. spark.python.unix.domain.socket.enabled=true")
    args = parser.parse_args()
    found = profile(args)
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1))
    batches = found["batches"]
    data = [b for b in batches if b["input rows"] > 0]
    empty = [b for b in batches if b["input rows"] == 0][-1:]  # the last: after the start batch and warm-up
    print(f"{found['query']} over {found['stream']}, batches of {found['batch size']}: {found['seconds']:.1f} s "
          f"for {sum(b['input rows'] for b in batches)} input rows, {found['result rows']} result rows; "
          f"load average {found['load'][0]:.2f}")
    print("\nPer micro-batch:\n" + batch_table(batches))
    if any(b["jvm phases s"] for b in batches):
        print("\nJVM delta strategy, seconds per phase:\n" + phase_table(batches))
        return
    print("\nPer operator, mean of the micro-batches with changes:\n" + operator_table(data))
    if empty:
        print(f"\nPer operator, the empty micro-batch {empty[0]['batch']}:\n" + operator_table(empty))


if __name__ == "__main__":
    main()
