"""Functional dependencies in the catalog: implied by primary keys, declared as ``ivm.fd.<columns>``
table properties in DDL text and on Spark tables (the same parser reads both; no JVM needed here)."""

from __future__ import annotations

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.properties import table_properties
from catalog.schema import CatalogError, FunctionalDependency, UnknownColumnError

LOCATION = """
CREATE TABLE location (locn INT, zip INT, city STRING, PRIMARY KEY (locn))
TBLPROPERTIES ('ivm.fd.zip' = 'city', 'ivm.fd.city,zip' = 'locn', 'ivm.static' = 'true');
"""


def test_ddl_declares_dependencies_in_tblproperties_beside_the_primary_keys():
    catalog = catalog_from_ddl(LOCATION)
    assert catalog.functional_dependencies("location") == (
        FunctionalDependency("location", ("locn",), ("zip", "city"), declared=False),
        FunctionalDependency("location", ("city", "zip"), ("locn",)),
        FunctionalDependency("location", ("zip",), ("city",)),
    )
    assert catalog.table("location").static and not catalog.table("location").insert_only


def test_a_table_without_key_or_declaration_has_no_dependency():
    assert catalog_from_ddl("CREATE TABLE census (zip INT, population INT)").functional_dependencies("census") == ()


def test_a_dependency_on_an_unknown_column_is_refused_with_its_name():
    with pytest.raises(UnknownColumnError, match="location: zip → town.*no column 'town'"):
        catalog_from_ddl("CREATE TABLE location (locn INT, zip INT) TBLPROPERTIES ('ivm.fd.zip' = 'town')")


def test_a_primary_key_given_both_ways_is_refused():
    with pytest.raises(CatalogError, match="both as a constraint and as ivm.primary_key"):
        catalog_from_ddl("CREATE TABLE t (a INT, b INT, PRIMARY KEY (a)) TBLPROPERTIES ('ivm.primary_key' = 'b')")


def test_spark_table_properties_parse_dependencies_keys_and_flags():
    """The dict is what ``SHOW TBLPROPERTIES`` returns (keys lower-cased by the Spark loader)."""
    found = table_properties("location", {
        "ivm.primary_key": "locn",
        "ivm.fd.zip": "city",
        "ivm.fd.city, zip": " locn ",
        "ivm.insert_only": "true",
        "transient_lastddltime": "1700000000",
    })
    assert found.primary_key == ("locn",) and found.insert_only and not found.static
    assert found.functional_dependencies == (
        FunctionalDependency("location", ("city", "zip"), ("locn",)),
        FunctionalDependency("location", ("zip",), ("city",)),
    )


@pytest.mark.parametrize(("properties", "message"), [
    ({"ivm.fd.zip": ""}, "not a comma-separated list of columns"),
    ({"ivm.fd.": "zip"}, "not a comma-separated list of columns"),
    ({"ivm.fds.zip": "locn"}, "unknown property 'ivm.fds.zip'.*ivm.fd.<columns>"),
])
def test_malformed_dependency_properties_are_errors(properties, message):
    with pytest.raises(CatalogError, match=message):
        table_properties("location", properties)
