"""The built-in TPC-H catalog, loaded from the DDL shipped beside this module."""

from __future__ import annotations

from functools import cache
from importlib import resources

from catalog.ddl import catalog_from_ddl
from catalog.schema import Catalog

TPCH_TABLES = ("region", "nation", "part", "supplier", "partsupp", "customer", "orders", "lineitem")


def tpch_ddl() -> str:
    return resources.files("catalog").joinpath("tpch.sql").read_text()


@cache
def tpch_catalog() -> Catalog:
    """Every TPC-H table with its primary key and foreign keys (spec §1.4)."""
    return catalog_from_ddl(tpch_ddl())
