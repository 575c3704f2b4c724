"""Fixtures shared by the whole suite: TPC-H SF 0.01 data, generated once per test session; and the
``--regenerate-golden`` flag, which rewrites the expected output of the golden-file tests (the rule
cases' ``after:`` blocks, the EXPLAIN files) from what the code prints, to review as a diff.

pytest learns options only from the conftest files beside the paths it is given: run
``pytest tests --regenerate-golden`` (or a path below ``tests``).
"""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest

from catalog.tpch import tpch_catalog
from planner.workloads.tpch_data import generate_tpch, load_tables

TPCH_CACHE_ENV = "IVM_TPCH_CACHE"
REGENERATE_FLAG = "--regenerate-golden"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(REGENERATE_FLAG, action="store_true", default=False,
                     help="rewrite golden files (rule cases' after: blocks, EXPLAIN files) from what the code prints")


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Undo the ``gc.freeze()`` of local runners a test left open (``LocalRunner.close`` does it for
    closed ones): objects still frozen at exit are never collected, and DuckDB's bindings then end
    the run with a page of "nanobind: leaked" warnings."""
    gc.unfreeze()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``pytest -n 2 --dist loadgroup`` (``make test``) every Spark test runs on one worker, one
    after the other, while the other worker runs the rest: two Spark sessions at once on 2 cores would
    miss Spark's fixed 10 s Python-worker start timeout, and they would share ``spark-warehouse``."""
    for item in items:
        if item.get_closest_marker("spark") is not None:
            item.add_marker(pytest.mark.xdist_group("spark"))


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
