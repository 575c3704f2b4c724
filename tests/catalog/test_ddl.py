"""The DDL loader (catalog_from_ddl, load_catalog), the built-in TPC-H catalog, and the catalog's FK queries."""

from __future__ import annotations

import re

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.load import load_catalog
from catalog.schema import CatalogError, Column, ForeignKey, UnknownColumnError, UnknownTableError
from catalog.tpch import TPCH_TABLES, tpch_catalog

DIM = "CREATE TABLE dim (id INT PRIMARY KEY, label STRING);"

# TPC-H spec §1.4.2: every primary key, and every foreign key as (table, columns, referenced table).
TPCH_PRIMARY_KEYS = {
    "part": ("p_partkey",),
    "supplier": ("s_suppkey",),
    "partsupp": ("ps_partkey", "ps_suppkey"),
    "customer": ("c_custkey",),
    "orders": ("o_orderkey",),
    "lineitem": ("l_orderkey", "l_linenumber"),
    "nation": ("n_nationkey",),
    "region": ("r_regionkey",),
}
TPCH_FOREIGN_KEYS = {
    ("supplier", ("s_nationkey",), "nation"),
    ("partsupp", ("ps_partkey",), "part"),
    ("partsupp", ("ps_suppkey",), "supplier"),
    ("customer", ("c_nationkey",), "nation"),
    ("orders", ("o_custkey",), "customer"),
    ("lineitem", ("l_orderkey",), "orders"),
    ("lineitem", ("l_partkey",), "part"),
    ("lineitem", ("l_suppkey",), "supplier"),
    ("lineitem", ("l_partkey", "l_suppkey"), "partsupp"),
    ("nation", ("n_regionkey",), "region"),
}


def test_table_level_primary_and_foreign_keys():
    catalog = catalog_from_ddl(
        DIM
        + "CREATE TABLE fact (k BIGINT, dim_id INT, PRIMARY KEY (k), FOREIGN KEY (dim_id) REFERENCES dim (id))"
    )
    fact = catalog.table("fact")
    assert fact.primary_key == ("k",)
    assert fact.foreign_keys == (ForeignKey("fact", ("dim_id",), "dim", ("id",)),)


def test_column_level_primary_key_and_references():
    catalog = catalog_from_ddl(
        DIM + "CREATE TABLE fact (k BIGINT PRIMARY KEY, dim_id INT REFERENCES dim(id))"
    )
    assert catalog.table("dim").primary_key == ("id",)
    assert catalog.table("fact").foreign_keys == (ForeignKey("fact", ("dim_id",), "dim", ("id",)),)


def test_references_without_a_column_list_mean_the_primary_key():
    catalog = catalog_from_ddl(
        "CREATE TABLE pair (a INT, b INT, PRIMARY KEY (a, b));"
        "CREATE TABLE one (p INT REFERENCES dim);"
        "CREATE TABLE two (x INT, y INT, FOREIGN KEY (x, y) REFERENCES pair);" + DIM
    )
    assert catalog.table("one").foreign_keys == (ForeignKey("one", ("p",), "dim", ("id",)),)
    assert catalog.table("two").foreign_keys == (ForeignKey("two", ("x", "y"), "pair", ("a", "b")),)


@pytest.mark.parametrize("tail", ["\n-- the end\n", "\n-- the end", " -- the end"])
def test_comments_after_the_last_statement_are_ignored(tail):
    """A file ending in a ``--`` comment parses the comment as a statement of its own (sqlglot)."""
    for sep in (";", ""):
        catalog = catalog_from_ddl(DIM.rstrip(";") + sep + tail)
        assert catalog.table("dim").column_names == ("id", "label")


def test_a_table_without_a_primary_key_has_an_empty_key():
    """Bag semantics: the validator keeps copies of a row (see operators/runtime/validate.py)."""
    catalog = catalog_from_ddl("CREATE TABLE events (kind STRING, amount INT) -- no key")
    assert catalog.table("events").primary_key == ()


def test_key_columns_are_not_null_and_names_are_lower_cased():
    catalog = catalog_from_ddl("CREATE TABLE Pair (A INT, B INT NOT NULL, C INT, PRIMARY KEY (a))")
    assert catalog.table("PAIR").columns == (
        Column("a", "int", False),
        Column("b", "int", False),
        Column("c", "int", True),
    )


def test_column_types_are_spark_types():
    catalog = catalog_from_ddl(
        "CREATE TABLE t (a TINYINT, b BIGINT, c DECIMAL(15,2), d DOUBLE, e CHAR(3), f VARCHAR(9), g STRING, h DATE, i BOOLEAN, j DECIMAL)"
    )
    assert [str(c.type) for c in catalog.table("t").columns] == [
        "int",
        "bigint",
        "decimal(15,2)",
        "double",
        "string",
        "string",
        "string",
        "date",
        "boolean",
        "decimal(10,0)",
    ]


def test_a_key_on_a_column_of_an_unsupported_type_names_the_column_and_its_type():
    with pytest.raises(CatalogError, match="table t, column a has type BINARY"):
        catalog_from_ddl("CREATE TABLE t (a BINARY PRIMARY KEY)")


@pytest.mark.parametrize(
    "ddl, error, message",
    [
        pytest.param(
            "CREATE TABLE fact (d INT REFERENCES dim(id))",
            UnknownTableError,
            "foreign key fact(d) → dim(id): unknown table 'dim'",
            id="unknown-table-in-references",
        ),
        pytest.param(
            "CREATE TABLE fact (d INT REFERENCES dim)",
            CatalogError,
            "foreign key fact(d) → dim(): unknown table 'dim'",
            id="unknown-table-in-bare-references",
        ),
        pytest.param(
            DIM + "CREATE TABLE fact (l STRING REFERENCES dim(label))",
            CatalogError,
            "foreign key fact(l) → dim(label) does not reference the primary key of dim (its primary key is (id))",
            id="fk-to-non-key",
        ),
        pytest.param(
            "CREATE TABLE dim (id INT); CREATE TABLE fact (d INT REFERENCES dim(id))",
            CatalogError,
            "does not reference the primary key of dim (its primary key is (none declared))",
            id="fk-to-table-without-key",
        ),
        pytest.param(
            "CREATE TABLE pair (a INT, b INT, PRIMARY KEY (a, b)); CREATE TABLE fact (x INT, FOREIGN KEY (x) REFERENCES pair(a, b))",
            CatalogError,
            "foreign key fact(x) → pair(a, b) has 1 columns but references 2",
            id="fk-column-count",
        ),
        pytest.param(
            "CREATE TABLE t (a INT, PRIMARY KEY (nope))",
            UnknownColumnError,
            "table t has no column 'nope' (columns: a)",
            id="unknown-key-column",
        ),
        pytest.param(
            DIM + "CREATE TABLE fact (a INT, FOREIGN KEY (nope) REFERENCES dim(id))",
            UnknownColumnError,
            "table fact has no column 'nope'",
            id="unknown-fk-column",
        ),
        pytest.param(
            DIM + "CREATE TABLE fact (a INT REFERENCES dim(nope))",
            UnknownColumnError,
            "table dim has no column 'nope'",
            id="unknown-referenced-column",
        ),
        pytest.param(
            "CREATE TABLE t (a INT, CHECK (a > 0))",
            CatalogError,
            "table t: unsupported table element 'CHECK (a > 0)'",
            id="unsupported-element",
        ),
        pytest.param(
            "SELECT 1",
            CatalogError,
            "only CREATE TABLE statements are allowed in a catalog file, got: SELECT 1",
            id="select",
        ),
        pytest.param("CREATE VIEW v AS SELECT 1", CatalogError, "only CREATE TABLE statements", id="view"),
        pytest.param(
            "CREATE TABLE t AS SELECT 1 AS a",
            CatalogError,
            "CREATE TABLE without a column list is not supported",
            id="ctas",
        ),
        pytest.param("", CatalogError, "the DDL defines no table", id="empty"),
        pytest.param("-- only a comment\n", CatalogError, "the DDL defines no table", id="comment-only"),
        pytest.param(
            "CREATE TABLE t (a INT); CREATE TABLE T (b INT)",
            CatalogError,
            "table t is defined twice",
            id="duplicate-table",
        ),
        pytest.param("CREATE TABLE (", CatalogError, "cannot parse DDL", id="parse-error"),
    ],
)
def test_errors_name_what_is_wrong(ddl, error, message):
    with pytest.raises(error) as caught:
        catalog_from_ddl(ddl)
    assert message in str(caught.value)


@pytest.mark.parametrize(
    "ddl",
    [
        "CREATE TABLE t (a INT PRIMARY KEY, b INT PRIMARY KEY)",
        "CREATE TABLE t (a INT PRIMARY KEY, b INT, PRIMARY KEY (b))",
    ],
)
def test_two_primary_keys_are_rejected(ddl):
    with pytest.raises(CatalogError, match="table t"):
        catalog_from_ddl(ddl)


def test_load_catalog_reads_a_ddl_file(tmp_path):
    path = tmp_path / "shop.sql"
    path.write_text(DIM + "\nCREATE TABLE fact (k INT PRIMARY KEY, d INT REFERENCES dim);\n")
    assert sorted(load_catalog(str(path)).tables) == ["dim", "fact"]


def test_load_catalog_names_a_missing_file(tmp_path):
    with pytest.raises(CatalogError, match="neither 'tpch' nor an existing DDL file"):
        load_catalog(str(tmp_path / "missing.sql"))


def test_load_catalog_tpch_is_the_built_in_catalog():
    assert load_catalog("tpch") is tpch_catalog()


def test_tpch_catalog_has_every_key_of_the_spec():
    catalog = tpch_catalog()
    assert sorted(catalog.tables) == sorted(TPCH_TABLES)
    assert {name: table.primary_key for name, table in catalog.tables.items()} == TPCH_PRIMARY_KEYS


def test_tpch_catalog_has_every_foreign_key_of_the_spec():
    catalog = tpch_catalog()
    declared = {
        (fk.table, fk.columns, fk.ref_table) for table in catalog.tables.values() for fk in table.foreign_keys
    }
    assert declared == TPCH_FOREIGN_KEYS
    for table, columns, ref_table in TPCH_FOREIGN_KEYS:
        assert catalog.foreign_key(table, columns, ref_table).ref_columns == TPCH_PRIMARY_KEYS[ref_table]


def test_foreign_key_lookup_ignores_column_order_but_not_columns():
    catalog = tpch_catalog()
    composite = ForeignKey("lineitem", ("l_partkey", "l_suppkey"), "partsupp", ("ps_partkey", "ps_suppkey"))
    assert catalog.foreign_key("lineitem", ("l_suppkey", "l_partkey"), "partsupp") == composite
    assert catalog.foreign_key("lineitem", ("l_partkey",), "partsupp") is None
    assert catalog.foreign_key("lineitem", ("l_partkey",), "part") == ForeignKey(
        "lineitem", ("l_partkey",), "part", ("p_partkey",)
    )
    assert catalog.foreign_key("orders", ("o_orderkey",), "customer") is None


def test_fk_graph_has_an_edge_per_foreign_key():
    graph = tpch_catalog().fk_graph()
    assert set(graph) == set(TPCH_TABLES)
    assert graph["region"] == () and graph["part"] == ()
    assert {fk.ref_table for fk in graph["lineitem"]} == {"orders", "part", "supplier", "partsupp"}
    assert sum(len(edges) for edges in graph.values()) == len(TPCH_FOREIGN_KEYS)


def test_tpch_column_types():
    catalog = tpch_catalog()
    assert str(catalog.table("orders").column("o_orderdate").type) == "date"
    assert str(catalog.table("lineitem").column("l_extendedprice").type) == "decimal(15,2)"
    assert str(catalog.table("customer").column("c_mktsegment").type) == "string"
    assert catalog.table("orders").column("o_orderkey") == Column("o_orderkey", "bigint", nullable=False)


def test_a_primary_key_determines_every_column_of_its_table():
    catalog = tpch_catalog()
    (fd,) = catalog.functional_dependencies("partsupp")
    assert (fd.determinant, fd.dependent, fd.declared) == (
        ("ps_partkey", "ps_suppkey"), ("ps_availqty", "ps_supplycost", "ps_comment"), False,
    )


def test_a_column_of_an_unsupported_type_makes_only_the_views_that_read_it_refused():
    from catalog.schema import UnsupportedColumnError
    from planner.compiler import compile_query

    catalog = catalog_from_ddl("""
        CREATE TABLE events (id INT PRIMARY KEY, at TIMESTAMP, local_at TIMESTAMP_NTZ, body BINARY, tags ARRAY<INT>,
                             attrs MAP<STRING, INT>, span INTERVAL DAY, point STRUCT<x: INT, y: INT>);
        CREATE TABLE users (id INT PRIMARY KEY, name STRING)""")
    events = catalog.table("events")
    assert [str(c.type) for c in events.columns] == ["int", "timestamp", "timestamp_ntz"]
    assert [(c.name, str(c.type)) for c in events.unsupported_columns] == [
        ("body", "BINARY"), ("tags", "ARRAY<INT>"), ("attrs", "MAP<STRING, INT>"), ("span", "INTERVAL DAY"),
        ("point", "STRUCT<x: INT, y: INT>")]
    for sql in ("SELECT id, at FROM events", "SELECT count(*) AS n FROM events", "SELECT * FROM users"):
        compile_query(sql, catalog)
    refused = {"SELECT tags FROM events": "column tags has type ARRAY<INT>",
               "SELECT * FROM events": "column body has type BINARY",
               "SELECT e.* FROM events e JOIN users u ON e.id = u.id": "column body has type BINARY",
               "SELECT id FROM events WHERE attrs IS NOT NULL": "WHERE reads attrs: table events, column attrs has type MAP",
               "SELECT e.point FROM events e": "table events, column point has type STRUCT<x: INT, y: INT>"}
    for sql, message in refused.items():
        with pytest.raises(UnsupportedColumnError, match=re.escape(message)):
            compile_query(sql, catalog)


def test_ddl_timestamp_types_are_spark_s():
    catalog = catalog_from_ddl("CREATE TABLE t (a TIMESTAMP, b TIMESTAMP_LTZ, c TIMESTAMP_NTZ)")
    assert [str(c.type) for c in catalog.table("t").columns] == ["timestamp", "timestamp", "timestamp_ntz"]
