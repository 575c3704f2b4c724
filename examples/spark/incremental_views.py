# %% [markdown]
# # Incremental views in a Spark session
#
# A notebook-style walk through the session API (`planner/session.py`), runnable as a script:
#
#     .venv/bin/python examples/spark/incremental_views.py
#
# 1. TPC-H tables (SF 0.01) registered in the session, keys in `TBLPROPERTIES`, half the orders in them;
# 2. a view from SQL (TPC-H Q3) and one from a DataFrame, both bootstrapped from the tables' rows;
# 3. changes arriving as Parquet files in directories read by Spark's file source (a streaming DataFrame
#    per table: the table's columns and `_op`);
# 4. the result tables read as DataFrames and checked against `spark.sql` over the tables' new
#    contents; the change feed read as a DataFrame and as a stream.

# %%
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402

from catalog.tpch import tpch_catalog  # noqa: E402
from operators.runtime.spark_changes import change_schema  # noqa: E402
from operators.runtime.spark_session import make_spark_session  # noqa: E402
from operators.runtime.stream import arrow_schema  # noqa: E402
from planner.session import IncrementalViews  # noqa: E402
from planner.workloads.tpch_data import generate_tpch  # noqa: E402

WORK = Path(tempfile.mkdtemp(prefix="ivm-example-"))
TABLES = ("customer", "orders", "lineitem")
spark = make_spark_session(app="ivm-example")
data = generate_tpch(0.01, ROOT / "data" / "tpch-sf0.01")
catalog = tpch_catalog()

# %% [markdown]
# ## 1. Tables with keys in their properties; even orders (and their lineitems) are there already

# %%
spark.sql(f"CREATE DATABASE IF NOT EXISTS ivm_example LOCATION '{WORK / 'warehouse'}'")
spark.catalog.setCurrentDatabase("ivm_example")
rows = {name: pq.read_table(data / f"{name}.parquet").cast(arrow_schema(catalog.table(name))) for name in TABLES}
odd = {"orders": pc.equal(pc.bit_wise_and(rows["orders"]["o_orderkey"], 1), 1),
       "lineitem": pc.equal(pc.bit_wise_and(rows["lineitem"]["l_orderkey"], 1), 1)}
for name in TABLES:
    table = catalog.table(name)
    columns = ", ".join(f"{c.name} {c.type}" for c in table.columns)
    properties = {"ivm.primary_key": ",".join(table.primary_key)}
    properties |= {f"ivm.fk.{','.join(fk.columns)}": f"{fk.ref_table}({', '.join(fk.ref_columns)})"
                   for fk in table.foreign_keys if fk.ref_table in TABLES}
    listed = ", ".join(f"'{k}' = '{v}'" for k, v in properties.items())
    spark.sql(f"CREATE TABLE {name} ({columns}) USING parquet TBLPROPERTIES ({listed})")
    initial = rows[name] if name not in odd else rows[name].filter(pc.invert(odd[name]))
    spark.createDataFrame(initial.to_pandas(), spark.table(name).schema).write.insertInto(name)

ivm = IncrementalViews(spark, work_dir=WORK / "views")   # the catalog comes from the session's tables

# %% [markdown]
# ## 2. Change streams, and two views: Q3 as SQL, revenue per market segment as a DataFrame

# %%
inboxes = {name: WORK / "changes" / name for name in ("orders", "lineitem")}
for name, inbox in inboxes.items():
    inbox.mkdir(parents=True)
    ivm.register_changes(name, spark.readStream.schema(change_schema(catalog.table(name))).parquet(str(inbox)))

q3 = ivm.create("q3", (ROOT / "examples" / "tpch" / "q03.sql").read_text())
segments = (spark.table("orders").join(spark.table("customer"), F.col("o_custkey") == F.col("c_custkey"))
            .groupBy("c_mktsegment").agg(F.sum("o_totalprice").alias("revenue"), F.count("*").alias("orders"))
            .orderBy("c_mktsegment"))
by_segment = ivm.create("by_segment", segments)
print(by_segment.explain())
for view in (q3, by_segment):
    view.start().process_available()
by_segment.result().show()

# %% [markdown]
# ## 3. Changes arrive: the odd orders are inserted, then every fourth order is deleted

# %%
def drop_changes(number: int, name: str, table: pa.Table, op: int) -> None:
    """A file of changes (the table's columns, ``_op``) moved into the watched directory at once."""
    table = table.append_column("_op", pa.array([op] * table.num_rows, pa.int32()))
    staged = WORK / f".{name}-{number}.parquet"
    pq.write_table(table, staged)
    staged.rename(inboxes[name] / f"{number}.parquet")


for name in ("orders", "lineitem"):
    drop_changes(1, name, rows[name].filter(odd[name]), +1)
key = {"orders": "o_orderkey", "lineitem": "l_orderkey"}
for name in ("orders", "lineitem"):
    fourth = pc.equal(pc.bit_wise_and(rows[name][key[name]], 3), 0)
    drop_changes(2, name, rows[name].filter(fourth), -1)
for view in (q3, by_segment):
    view.process_available()

# %% [markdown]
# ## 4. Results as DataFrames, checked against spark.sql over the new contents, and the change feed

# %%
for name in ("orders", "lineitem"):   # the tables' contents now, as temporary views shadowing them
    remaining = rows[name].filter(pc.not_equal(pc.bit_wise_and(rows[name][key[name]], 3), 0))
    spark.createDataFrame(remaining.to_pandas(), spark.table(name).schema).createOrReplaceTempView(name)
q3_now = spark.sql((ROOT / "examples" / "tpch" / "q03.sql").read_text()).collect()
segments_now = spark.sql("SELECT c_mktsegment, SUM(o_totalprice) AS revenue, COUNT(*) AS orders FROM orders "
                         "JOIN customer ON o_custkey = c_custkey GROUP BY c_mktsegment ORDER BY c_mktsegment").collect()
for name in ("orders", "lineitem"):
    spark.catalog.dropTempView(name)
assert q3.result().collect() == q3_now and q3_now, "Q3 differs from spark.sql"
assert by_segment.result().collect() == segments_now and segments_now, "the DataFrame view differs from spark.sql"
q3.result().show()
print("both views equal spark.sql over the tables' new contents")

feed = spark.read.parquet(str(q3.view.runner.sink.changes_dir))   # every committed batch's changes
feed.orderBy("_batch", "_weight").show(5)
stream = q3.changes().writeStream.format("memory").queryName("q3_changes").start()
stream.processAllAvailable()
print(spark.sql("SELECT _batch, SUM(_weight) AS net FROM q3_changes GROUP BY _batch ORDER BY _batch").collect())
stream.stop()
for name in ("q3", "by_segment"):
    ivm.drop(name)
