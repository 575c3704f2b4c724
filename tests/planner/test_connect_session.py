"""IncrementalViews on a Spark Connect session (issue 27, item 2): a view from SQL text and one from a
Connect DataFrame (planned from its client-side plan, ``planner/sql/connect_plan.py``), both fed by
a file stream of order changes, each equal to ``spark.sql`` over the tables' contents after every
batch: inserts, deletes, a NULL foreign key, a group that empties, and an emptied table.

The script runs in a fresh interpreter, which starts a local Connect server in its own process
(``connect_session("local[2]")``): one Spark application per process, and the test process may
hold the suite's classic session. Slow: a Spark application starts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = [pytest.mark.spark, pytest.mark.slow]

PROJECT_ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import json, sys
    from decimal import Decimal
    from pathlib import Path
    import pyarrow as pa, pyarrow.parquet as pq
    sys.path.insert(0, sys.argv[2])
    from operators.runtime.spark_connect import connect_session
    work = Path(sys.argv[1])
    spark = connect_session("local[2]", settings={"spark.sql.warehouse.dir": str(work / "warehouse")})
    from pyspark.sql import functions as F
    spark.sql("CREATE TABLE customers (c_custkey INT, c_segment STRING) USING parquet "
              "TBLPROPERTIES ('ivm.primary_key' = 'c_custkey')")
    spark.sql("CREATE TABLE orders (o_orderkey INT, o_custkey INT, o_price DECIMAL(12,2)) USING parquet "
              "TBLPROPERTIES ('ivm.primary_key' = 'o_orderkey', 'ivm.fk.o_custkey' = 'customers.c_custkey')")
    spark.sql("INSERT INTO customers VALUES (1, 'AUTO'), (2, 'BUILD'), (3, 'AUTO'), (4, 'FURNITURE')")
    spark.sql("INSERT INTO orders VALUES (10, 1, 5.50), (11, 2, 7.25), (12, 3, 1.00), (13, 3, 2.00)")
    orders = {10: (10, 1, Decimal("5.50")), 11: (11, 2, Decimal("7.25")), 12: (12, 3, Decimal("1.00")),
              13: (13, 3, Decimal("2.00"))}
    QUERY = ("SELECT c_segment, SUM(o_price) AS total, COUNT(*) AS orders FROM orders JOIN customers "
             "ON o_custkey = c_custkey GROUP BY c_segment ORDER BY c_segment")
    o, c = spark.table("orders"), spark.table("customers")
    frame = (o.join(c, o["o_custkey"] == c["c_custkey"]).groupBy("c_segment")
             .agg(F.sum("o_price").alias("total"), F.count("*").alias("orders")).orderBy("c_segment"))
    inbox = work / "changes"
    inbox.mkdir()
    schema = "o_orderkey int, o_custkey int, o_price decimal(12,2), _op int"
    from planner.session import IncrementalViews
    ivm = IncrementalViews(spark, work_dir=work / "views")
    views = {name: ivm.create(name, query, sources={"orders": spark.readStream.schema(schema).parquet(str(inbox))}).start()
             for name, query in (("from_sql", QUERY), ("from_dataframe", frame))}
    arrow = pa.schema([("o_orderkey", pa.int32()), ("o_custkey", pa.int32()), ("o_price", pa.decimal128(12, 2)),
                       ("_op", pa.int32())])
    batches = [
        [(14, 4, Decimal("9.99"), 1), (15, None, Decimal("1.00"), 1), (11, 2, Decimal("7.25"), -1)],  # BUILD empties
        [(16, 2, Decimal("0.50"), 1), (10, 1, Decimal("5.50"), -1), (10, 1, Decimal("6.00"), 1)],     # an update
        [(k, *orders_row[1:], -1) for k, orders_row in [(10, (10, 1, Decimal("6.00"))), (12, (12, 3, Decimal("1.00"))),
         (13, (13, 3, Decimal("2.00"))), (14, (14, 4, Decimal("9.99"))), (15, (15, None, Decimal("1.00"))),
         (16, (16, 2, Decimal("0.50")))]],                                                            # all deleted
    ]
    def reference():
        spark.createDataFrame(sorted(orders.values()), "o_orderkey int, o_custkey int, o_price decimal(12,2)") \\
            .createOrReplaceTempView("orders")
        try:
            return [list(map(str, r)) for r in spark.sql(QUERY).collect()]
        finally:
            spark.catalog.dropTempView("orders")
    steps = []
    for number, batch in enumerate([[], *batches]):
        if batch:
            table = pa.Table.from_pylist([dict(zip(arrow.names, row)) for row in batch], schema=arrow)
            pq.write_table(table, work / f".{number}.parquet")
            (work / f".{number}.parquet").rename(inbox / f"{number}.parquet")
            for key, custkey, price, op in batch:
                if op < 0:
                    del orders[key]
                else:
                    orders[key] = (key, custkey, price)
        maintained = {}
        for name, view in views.items():
            view.process_available()
            maintained[name] = [list(map(str, r)) for r in view.result().collect()]
        steps.append({"expected": reference(), **maintained})
    print(json.dumps({"steps": steps, "explain": views["from_dataframe"].explain(),
                      "dataframe_sql": views["from_dataframe"].compiled.sql}))
""")


def test_views_from_sql_and_from_a_connect_dataframe_equal_spark_sql_after_every_batch(tmp_path):
    script = tmp_path / "connect_views.py"
    script.write_text(SCRIPT)
    completed = subprocess.run([sys.executable, str(script), str(tmp_path), str(PROJECT_ROOT)], cwd=tmp_path,
                               capture_output=True, text=True, timeout=1200)
    assert completed.returncode == 0, "\n".join(line for line in completed.stderr.splitlines()
                                                if not line.lstrip().startswith("at "))[-4000:]
    outcome = json.loads(completed.stdout.strip().splitlines()[-1])
    steps = outcome["steps"]
    assert len(steps) == 4
    for step in steps:
        assert step["from_sql"] == step["expected"], step
        assert step["from_dataframe"] == step["expected"], step
    assert all(step["expected"] for step in steps[:3]) and steps[3]["expected"] == []
    assert ["BUILD", "7.25", "1"] in steps[0]["expected"] and not any(r[0] == "BUILD" for r in steps[1]["expected"])
    assert "Aggregate" in outcome["explain"]
