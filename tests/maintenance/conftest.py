"""Fixtures for end-to-end maintenance tests: TPC-H SF 0.01 tables and their update streams."""

from __future__ import annotations

import pytest

from catalog.tpch import tpch_catalog
from catalog.tpch_data import load_tables
from catalog.tpch_streams import make_stream

WINDOW = 2_000  # lineitem tuples: the window slides about 30 times over SF 0.01


@pytest.fixture(scope="session")
def tpch_tables(tpch_sf001_dir):
    return load_tables(tpch_sf001_dir, tpch_catalog())


@pytest.fixture(scope="session")
def tpch_streams(tpch_tables):
    """The three stream kinds the issue asks every query to be checked on."""
    catalog = tpch_catalog()
    return {
        "window": make_stream(tpch_tables, catalog, "window", WINDOW, seed=0),
        "insert": make_stream(tpch_tables, catalog, "insert"),
        "random": make_stream(tpch_tables, catalog, "random", seed=7),
    }
