"""Fixtures shared by the whole suite: TPC-H SF 0.01 data, generated once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from planner.workloads.tpch_data import generate_tpch, load_tables

TPCH_CACHE_ENV = "IVM_TPCH_CACHE"


@pytest.fixture(scope="session")
def tpch_sf001_dir(tmp_path_factory) -> Path:
    """A directory with the 8 TPC-H tables at SF 0.01 as Parquet.

    Set ``$IVM_TPCH_CACHE`` to a directory to keep the data between sessions (it lands in
    ``$IVM_TPCH_CACHE/sf0.01``); otherwise it is generated into a session temp dir (~2 s).
    """
    cache = os.environ.get(TPCH_CACHE_ENV)
    out_dir = Path(cache) / "sf0.01" if cache else tmp_path_factory.mktemp("tpch-sf0.01")
    return generate_tpch(0.01, out_dir)


@pytest.fixture(scope="session")
def tpch_sf001_tables(tpch_sf001_dir) -> dict[str, list[tuple]]:
    """The SF 0.01 tables as tuples in catalog column order. Shared: never mutate."""
    return load_tables(tpch_sf001_dir, tpch_catalog())
