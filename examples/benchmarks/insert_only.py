"""Benchmark: MIN/MAX and top-k over an insert-only table (Olteanu §4.6) against the same query over the
same table without the flag, side by side at two sizes.

Declared ``ivm.insert_only``, the table's deletes are rejected by validation and the planner
(rules/insert_only.py) keeps only what inserts need: the current MIN/MAX per group
(``InsertOnlyAggregateStage``, O(1) per insert and per group) and the k best rows
(``InsertOnlyTopKStage``). Without the flag the general plan keeps, per group, the sorted multiset of
values (``GroupAggregateStage``, O(log n) per insert, O(distinct values) state) and the whole result in
order (``TopKStage``). Both get the same stream: inserts of (g, v) rows into ``GROUPS`` groups with v
from a large domain (nearly all distinct), so the general state grows with the data.

Two levels, each configuration in a fresh (spawned) interpreter:

- ``sql``: the query through ``MaintainedView`` (compiled local runner, batches of ``BATCH`` inserts,
  validation included: the same for both): µs per insert, and the aggregate's or top-k's state as
  pickled bytes (what a Spark state store would hold) with its number of keys;
- ``stage``: the stage alone fed pre-built batches (no validation, no runner): µs per insert, and the
  memory its states hold (tracemalloc, in a second run, so tracing does not slow the timed one).

    PYTHONPATH=. python examples/benchmarks/insert_only.py                 # sizes 50 000 and 500 000
    PYTHONPATH=. python examples/benchmarks/insert_only.py --sizes 2000,20000   # to check it runs
"""

from __future__ import annotations

import argparse
import gc
import json
import multiprocessing
import os
import pickle
import random
import sys
import time
import tracemalloc
from concurrent.futures import ProcessPoolExecutor
from operator import itemgetter
from pathlib import Path

from tabulate import tabulate

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from catalog.ddl import catalog_from_ddl  # noqa: E402
from operators.runtime.stream import Update, batches  # noqa: E402
from operators.stages.aggregate import AggregateSpec, GroupAggregateStage  # noqa: E402
from operators.stages.base import Change, StageDescription  # noqa: E402
from operators.stages.insert_only_aggregate import InsertOnlyAggregateStage  # noqa: E402
from operators.stages.insert_only_top_k import InsertOnlyTopKStage  # noqa: E402
from operators.stages.top_k import OrderedRowsStage, TopKStage  # noqa: E402
from planner.view import MaintainedView  # noqa: E402

GROUPS = 100
BATCH = 1000
K = 10
QUERIES = {
    "min/max": "select g, min(v) as lo, max(v) as hi from t group by g",
    "top-k": f"select g, v from t order by v desc, g limit {K}",
}
DDL = "CREATE TABLE t (g INT, v BIGINT){properties};"
INSERT_ONLY = " TBLPROPERTIES ('ivm.insert_only' = 'true')"


def rows(size: int, seed: int = 1) -> list[tuple[int, int]]:
    rng = random.Random(seed)
    return [(rng.randrange(GROUPS), rng.randrange(10**9)) for _ in range(size)]


# --- through SQL ---------------------------------------------------------------------------------

def sql_run(query: str, flagged: bool, size: int) -> dict:
    catalog = catalog_from_ddl(DDL.format(properties=INSERT_ONLY if flagged else ""))
    MaintainedView(QUERIES[query], catalog).apply([Update(1, "t", 1, (0, 0))])  # lazy imports, untimed
    view = MaintainedView(QUERIES[query], catalog)
    node = next(n for n in view.compiled.dataflow.stages
                if isinstance(n.stage, GroupAggregateStage | OrderedRowsStage))
    updates = [Update(seq, "t", 1, row) for seq, row in enumerate(rows(size), 1)]
    started = time.perf_counter()
    for batch in batches(updates, BATCH):
        view.apply(batch)
    elapsed = time.perf_counter() - started
    states = view.runner.stage_states(node.id)
    return {"stage": type(node.stage).__name__, "us_per_insert": elapsed / size * 1e6,
            "state_keys": len(states), "state_bytes": len(pickle.dumps(states, pickle.HIGHEST_PROTOCOL)),
            "result": view.result()}


# --- the stage alone -----------------------------------------------------------------------------

def stage_of(query: str, flagged: bool):
    tables = {"insert_only": ("t",)} if flagged else {}
    if query == "min/max":
        specs = (AggregateSpec("min", itemgetter(1)), AggregateSpec("max", itemgetter(1)))
        stage_class = InsertOnlyAggregateStage if flagged else GroupAggregateStage
        return stage_class(("g",), (itemgetter(0),), specs, lambda row: row, ("g", "lo", "hi"), **tables)
    stage_class = InsertOnlyTopKStage if flagged else TopKStage
    return stage_class("top", ((itemgetter(1), False), (itemgetter(0), True)), K, ("g", "v"),
                       StageDescription("top-k"), **tables)


def stage_batches(stage, size: int) -> list[dict[tuple, list[Change]]]:
    """The stream as the runner hands it to the stage: per batch, each key's changes."""
    out = []
    data = rows(size)
    for start in range(0, size, BATCH):
        by_key: dict[tuple, list[Change]] = {}
        for row in data[start:start + BATCH]:
            by_key.setdefault(stage.key_of(0, row), []).append(Change(0, row, 1))
        out.append(by_key)
    return out


def feed(stage, prepared: list[dict[tuple, list[Change]]]) -> dict:
    states: dict = {}
    for by_key in prepared:
        for key, changes in by_key.items():
            states[key] = stage.process(key, states.get(key), changes)[0]
    return states


def stage_run(query: str, flagged: bool, size: int) -> dict:
    stage = stage_of(query, flagged)
    prepared = stage_batches(stage, size)
    gc.collect()
    gc.disable()
    started = time.perf_counter()
    states = feed(stage, prepared)
    elapsed = time.perf_counter() - started
    gc.enable()
    answer = sorted(stage._result(s) for s in states.values()) if query == "min/max" else None
    del states
    gc.collect()
    tracemalloc.start()
    baseline = tracemalloc.get_traced_memory()[0]
    states = feed(stage, prepared)
    gc.collect()  # what the stage dropped is not state
    held = tracemalloc.get_traced_memory()[0] - baseline
    tracemalloc.stop()
    assert states
    return {"stage": type(stage).__name__, "us_per_insert": elapsed / size * 1e6, "state_kib": held / 1024,
            "result": answer}


# --- driver --------------------------------------------------------------------------------------

def measure(config: dict) -> dict:
    """One configuration, run in a fresh interpreter by ``in_fresh_process``."""
    run = sql_run if config["level"] == "sql" else stage_run
    return json.loads(json.dumps(run(config["query"], config["flagged"], config["size"]), default=str))


def in_fresh_process(config: dict) -> dict:
    """``measure(config)`` in a new interpreter (spawned: no warm caches or state of another run)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        try:
            return pool.submit(measure, config).result()
        except Exception as error:  # reported in the table, the other configurations go on
            return {"error": f"{type(error).__name__}: {error}"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50000,500000", help="inserts per run, comma-separated")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    print(f"load average {os.getloadavg()[0]:.2f} at start; {GROUPS} groups, batches of {BATCH}, k = {K}")
    for level in ("sql", "stage"):
        table, mismatches = [], []
        for query in QUERIES:
            for size in sizes:
                plain, flagged = (in_fresh_process({"level": level, "query": query, "flagged": f, "size": size})
                                  for f in (False, True))
                if "error" in plain or "error" in flagged:
                    table.append([query, size, plain.get("error", ""), flagged.get("error", "")])
                    continue
                if plain["result"] != flagged["result"]:
                    mismatches.append(f"{query} at {size}: the two plans' results differ")
                memory = ("state_bytes", "pickled state KiB", 1024) if level == "sql" else ("state_kib", "state KiB", 1)
                table.append([
                    query, size, f"{plain['us_per_insert']:.2f}", f"{flagged['us_per_insert']:.2f}",
                    f"{plain['us_per_insert'] / flagged['us_per_insert']:.2f}×",
                    f"{plain[memory[0]] / memory[2]:,.0f}", f"{flagged[memory[0]] / memory[2]:,.1f}",
                    f"{plain[memory[0]] / flagged[memory[0]]:,.0f}×",
                ])
        print(f"\n{level}: general plan (no flag) vs insert-only plan")
        print(tabulate(table, headers=["query", "inserts", "µs/insert general", "µs/insert insert-only", "speed-up",
                                       f"{memory[1]} general", f"{memory[1]} insert-only", "smaller"],
                       tablefmt="github"))
        for line in mismatches:
            print("MISMATCH:", line)
    print(f"\nload average {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
