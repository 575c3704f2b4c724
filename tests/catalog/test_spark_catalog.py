"""catalog_from_spark: schemas from the Spark session, keys from ``ivm.*`` table properties.

Tables are small parquet tables in two throwaway databases whose files live in a temp dir: one holds
the TPC-H schema (so "every table of the database" has a known answer), the other the one-off tables
of the other tests, which name the tables they load.
"""

from __future__ import annotations

import pytest

from catalog import FunctionalDependency
from catalog.schema import Catalog, CatalogError, Column, ForeignKey, Table, UnknownTableError
from catalog.spark import catalog_from_spark
from catalog.tpch import tpch_catalog
from operators.runtime.spark_session import make_spark_session

pytestmark = pytest.mark.spark

TPCH_DB = "ivm_test_tpch"
MISC_DB = "ivm_test_misc"


@pytest.fixture(scope="module")
def spark(tmp_path_factory):
    session = make_spark_session(app="test-spark-catalog")
    warehouse = tmp_path_factory.mktemp("warehouse")
    previous_database = session.catalog.currentDatabase()
    for database in (TPCH_DB, MISC_DB):
        session.sql(f"CREATE DATABASE {database} LOCATION '{warehouse / database}'")
    for table in tpch_catalog().tables.values():
        create_table(session, f"{TPCH_DB}.{table.name}", spark_columns(table), tpch_properties(table))
    yield session
    session.catalog.setCurrentDatabase(previous_database)
    for database in (TPCH_DB, MISC_DB):
        session.sql(f"DROP DATABASE {database} CASCADE")
    session.stop()


def create_table(spark, name: str, columns: str, properties: dict[str, str]) -> None:
    listed = ", ".join(f"'{key}' = '{value}'" for key, value in properties.items())
    spark.sql(
        f"CREATE TABLE {name} ({columns}) USING parquet" + (f" TBLPROPERTIES ({listed})" if listed else "")
    )


def spark_columns(table: Table) -> str:
    return ", ".join(f"{c.name} {str(c.type).upper()}" for c in table.columns)


def tpch_properties(table: Table) -> dict[str, str]:
    """The keys of a TPC-H table as properties, one-column FKs as ``t.c`` and composite ones as ``t(c1, c2)``."""
    properties = {"ivm.primary_key": ",".join(table.primary_key)}
    for fk in table.foreign_keys:
        if len(fk.columns) == 1:
            target = f"{fk.ref_table}.{fk.ref_columns[0]}"
        else:
            target = f"{fk.ref_table}({', '.join(fk.ref_columns)})"
        properties["ivm.fk." + ",".join(fk.columns)] = target
    return properties


def assert_same_schema(loaded: Catalog, expected: Catalog) -> None:
    assert sorted(loaded.tables) == sorted(expected.tables)
    for name, table in expected.tables.items():
        got = loaded.table(name)
        assert got.columns == table.columns, name
        assert got.primary_key == table.primary_key, name
        assert set(got.foreign_keys) == set(table.foreign_keys), name


def test_every_table_of_the_current_database_with_keys_and_foreign_keys(spark):
    spark.catalog.setCurrentDatabase(TPCH_DB)
    spark.sql("CREATE OR REPLACE TEMP VIEW scratch AS SELECT 1 AS x")
    spark.sql(f"CREATE OR REPLACE VIEW {TPCH_DB}.big_orders AS SELECT * FROM {TPCH_DB}.orders")
    try:
        assert_same_schema(catalog_from_spark(spark), tpch_catalog())
    finally:
        spark.sql("DROP VIEW scratch")
        spark.sql(f"DROP VIEW {TPCH_DB}.big_orders")
        spark.catalog.setCurrentDatabase("default")


def test_a_named_database_and_a_subset_of_its_tables(spark):
    catalog = catalog_from_spark(spark, ["region", "nation", "supplier"], database=TPCH_DB)
    assert sorted(catalog.tables) == ["nation", "region", "supplier"]
    assert catalog.table("supplier").foreign_keys == (
        ForeignKey("supplier", ("s_nationkey",), "nation", ("n_nationkey",)),
    )


def test_qualified_table_names(spark):
    catalog = catalog_from_spark(spark, [f"{TPCH_DB}.region", f"{TPCH_DB}.Nation"])
    assert catalog.table("nation").primary_key == ("n_nationkey",)


def test_composite_key_and_composite_foreign_key_read_back(spark):
    create_table(
        spark, f"{MISC_DB}.stock", "item INT, depot INT, qty INT", {"ivm.primary_key": "item, depot"}
    )
    create_table(
        spark,
        f"{MISC_DB}.picks",
        "pick_id BIGINT, Item INT, depot INT",
        {"ivm.primary_key": "pick_id", "ivm.fk.item,depot": "stock(item, depot)", "ivm.insert_only": "true"},
    )
    catalog = catalog_from_spark(spark, ["stock", "picks"], database=MISC_DB)
    stock, picks = catalog.table("stock"), catalog.table("picks")
    assert stock.primary_key == ("item", "depot")
    assert [c.nullable for c in stock.columns] == [False, False, True]
    assert picks.foreign_keys == (ForeignKey("picks", ("item", "depot"), "stock", ("item", "depot")),)
    assert catalog.foreign_key("picks", ("depot", "item"), "stock") == picks.foreign_keys[0]
    assert (picks.insert_only, picks.static, stock.insert_only) == (True, False, False)


def test_declared_functional_dependency_read_back(spark):
    create_table(
        spark, f"{MISC_DB}.location", "locn INT, zip INT, city STRING",
        {"ivm.primary_key": "locn", "ivm.fd.zip": "city"},
    )
    catalog = catalog_from_spark(spark, ["location"], database=MISC_DB)
    assert catalog.functional_dependencies("location") == (
        FunctionalDependency("location", ("locn",), ("zip", "city"), declared=False),
        FunctionalDependency("location", ("zip",), ("city",)),
    )


def test_spark_types_map_to_catalog_types(spark):
    create_table(
        spark,
        f"{MISC_DB}.typed",
        "t TINYINT, s SMALLINT, i INT, b BIGINT, f FLOAT, d DOUBLE, m DECIMAL(15,2), "
        "c CHAR(3), v VARCHAR(9), str STRING, day DATE, flag BOOLEAN, at TIMESTAMP, local_at TIMESTAMP_NTZ",
        {"ivm.static": "TRUE", "ivm.insert_only": "false"},
    )
    typed = catalog_from_spark(spark, ["typed"], database=MISC_DB).table("typed")
    assert typed.columns == tuple(
        Column(name, family)
        for name, family in [
            ("t", "int"),
            ("s", "int"),
            ("i", "int"),
            ("b", "bigint"),
            ("f", "double"),
            ("d", "double"),
            ("m", "decimal(15,2)"),
            ("c", "string"),
            ("v", "string"),
            ("str", "string"),
            ("day", "date"),
            ("flag", "boolean"),
            ("at", "timestamp"),
            ("local_at", "timestamp_ntz"),
        ]
    )
    assert (typed.static, typed.insert_only, typed.primary_key) == (True, False, ())


BAD_TABLES = [
    (
        "bad_map",
        "id INT, counts MAP<STRING, INT>",
        {},
        "table bad_map, column counts: unsupported type map<string,int>",
    ),
    (
        "bad_array",
        "id INT, tags ARRAY<STRING>",
        {},
        "table bad_array, column tags: unsupported type array<string>",
    ),
    (
        "bad_property",
        "id INT",
        {"ivm.primary_keys": "id"},
        "table bad_property: unknown property 'ivm.primary_keys'",
    ),
    (
        "bad_flag",
        "id INT",
        {"ivm.static": "yes"},
        "table bad_flag, property 'ivm.static': 'yes' is neither 'true' nor 'false'",
    ),
    (
        "bad_key_list",
        "id INT",
        {"ivm.primary_key": "id,,x"},
        "table bad_key_list, property 'ivm.primary_key': 'id,,x' is not a comma-separated list",
    ),
    ("bad_key_column", "id INT", {"ivm.primary_key": "nope"}, "table bad_key_column has no column 'nope'"),
    (
        "bad_fk_target",
        "id INT, d INT",
        {"ivm.fk.d": "dim"},
        "table bad_fk_target, property 'ivm.fk.d': 'dim' is neither 'table.column' nor",
    ),
    (
        "bad_fk_column",
        "id INT",
        {"ivm.primary_key": "id", "ivm.fk.nope": "bad_fk_column.id"},
        "table bad_fk_column has no column 'nope'",
    ),
]


@pytest.mark.parametrize(
    "table, columns, properties, message", BAD_TABLES, ids=[case[0] for case in BAD_TABLES]
)
def test_errors_name_the_table_and_what_is_wrong(spark, table, columns, properties, message):
    create_table(spark, f"{MISC_DB}.{table}", columns, properties)
    with pytest.raises(CatalogError) as caught:
        catalog_from_spark(spark, [table], database=MISC_DB)
    assert message in str(caught.value)


def test_foreign_key_to_a_non_key_column_names_both(spark):
    create_table(spark, f"{MISC_DB}.dim", "id INT, label STRING", {"ivm.primary_key": "id"})
    create_table(spark, f"{MISC_DB}.fact", "id INT, dim_label STRING", {"ivm.fk.dim_label": "dim.label"})
    with pytest.raises(
        CatalogError,
        match=r"fact\(dim_label\) → dim\(label\) does not reference the primary key of dim \(its primary key is \(id\)\)",
    ):
        catalog_from_spark(spark, ["dim", "fact"], database=MISC_DB)


def test_foreign_key_to_an_unknown_table_names_the_property(spark):
    create_table(spark, f"{MISC_DB}.orphan", "id INT, ghost_id INT", {"ivm.fk.ghost_id": "ghost(id)"})
    with pytest.raises(
        UnknownTableError,
        match=r"table orphan, property 'ivm.fk.ghost_id': .* references table 'ghost', which is not loaded",
    ):
        catalog_from_spark(spark, ["orphan"], database=MISC_DB)


def test_foreign_key_to_a_table_left_out_of_the_load(spark):
    with pytest.raises(
        UnknownTableError, match=r"references table 'nation', which is not loaded \(loaded: supplier\)"
    ):
        catalog_from_spark(spark, ["supplier"], database=TPCH_DB)


def test_a_table_missing_from_the_session(spark):
    with pytest.raises(
        UnknownTableError, match=rf"table '{MISC_DB}.no_such_table' is not in the Spark session"
    ):
        catalog_from_spark(spark, ["no_such_table"], database=MISC_DB)


def test_a_missing_database(spark):
    with pytest.raises(CatalogError, match="cannot list the tables of database 'no_such_db'"):
        catalog_from_spark(spark, database="no_such_db")
