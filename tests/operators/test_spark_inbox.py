"""The Spark runner's inbox file (no Spark needed): one file per apply, row groups of one table each,
every change where its table's struct column holds it, and the other tables' columns NULL."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from catalog.schema import Catalog, Column, Table
from operators.runtime.spark_inbox import inbox_schema, next_file_number, write_inbox_file
from operators.runtime.stream import Update

CATALOG = Catalog.of([Table("r", (Column("a", "int"), Column("b", "string")), ("a",)),
                      Table("s", (Column("c", "decimal(5,2)"),))])
TABLES = list(CATALOG.tables.values())


def test_an_apply_is_one_file_whose_row_groups_each_hold_one_table(tmp_path):
    by_table = {"s": [Update(1, "s", 1, (None,))], "r": [Update(2, "r", 1, (1, "x")), Update(3, "r", -1, (1, "x"))]}
    assert next_file_number(tmp_path) == 0
    path = write_inbox_file(tmp_path, 7, TABLES, by_table)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # the staged file was renamed into place
    assert next_file_number(tmp_path) == 8
    data = pq.ParquetFile(path)
    groups = [data.read_row_group(i).column("_table").unique().to_pylist() for i in range(data.num_row_groups)]
    assert groups == [["r"], ["s"]]
    rows = [(row["_table"], row["_op"], row["_seq"], row["r"], row["s"]) for row in data.read().to_pylist()]
    assert rows == [("r", 1, 2, {"a": 1, "b": "x"}, None), ("r", -1, 3, {"a": 1, "b": "x"}, None),
                    ("s", 1, 1, None, {"c": None})]


def test_a_table_named_like_an_inbox_column_is_refused():
    with pytest.raises(ValueError, match="table _op is named like a column"):
        inbox_schema([Table("_op", (Column("a", "int"),))])
