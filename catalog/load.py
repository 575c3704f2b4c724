"""A catalog by name: the built-in TPC-H catalog or a DDL file (what ``--catalog`` takes)."""

from __future__ import annotations

from pathlib import Path

from catalog.ddl import catalog_from_ddl
from catalog.schema import Catalog, CatalogError
from catalog.tpch import tpch_catalog


def load_catalog(spec: str) -> Catalog:
    """``tpch`` for the built-in TPC-H catalog, else the path of a DDL file."""
    if spec == "tpch":
        return tpch_catalog()
    path = Path(spec)
    if not path.exists():
        raise CatalogError(f"catalog {spec!r} is neither 'tpch' nor an existing DDL file")
    return catalog_from_ddl(path.read_text())
