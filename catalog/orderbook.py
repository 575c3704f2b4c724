"""The order book of the RPAI paper's workloads: ``bids``, ``asks`` and Example 2.1's ``r``.

The schema lives in ``examples/orderbook/schema.sql``; the seeded change streams over it are
``planner/workloads/orderbook_streams.py``.
"""

from __future__ import annotations

from pathlib import Path

from catalog.ddl import catalog_from_ddl
from catalog.schema import Catalog

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "examples" / "orderbook" / "schema.sql"

BIDS, ASKS, R = "bids", "asks", "r"
SIDES = (BIDS, ASKS)


def orderbook_catalog() -> Catalog:
    """The catalog of ``examples/orderbook/schema.sql``: ``bids``, ``asks`` and Example 2.1's ``r``."""
    return catalog_from_ddl(SCHEMA_PATH.read_text())
