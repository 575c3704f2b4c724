"""The relations of IEDyn's experiments: ``r``, ``s``, ``t`` (Table 1) and §1's ``trans``.

The schema lives in ``examples/iedyn/schema.sql``; the seeded change streams over it are
``planner/workloads/iedyn_streams.py``.
"""

from __future__ import annotations

from pathlib import Path

from catalog.ddl import catalog_from_ddl
from catalog.schema import Catalog

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "examples" / "iedyn" / "schema.sql"

R, S, T, TRANS = "r", "s", "t", "trans"
RELATIONS = (R, S, T)


def iedyn_catalog() -> Catalog:
    """The catalog of ``examples/iedyn/schema.sql``."""
    return catalog_from_ddl(SCHEMA_PATH.read_text())
