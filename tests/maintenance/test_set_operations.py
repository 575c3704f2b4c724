"""UNION [ALL], EXCEPT and INTERSECT of two maintained queries equal recomputation after every batch."""

from __future__ import annotations

import pytest

from catalog.tpch import tpch_catalog
from tests.maintenance.checking import check_against_recomputation

LEFT = "select c_nationkey as k, c_mktsegment as s from customer where c_acctbal > 3000"
RIGHT = "select s_nationkey as k, 'BUILDING' as s from supplier where s_acctbal > 3000"


@pytest.mark.parametrize("kind", ["union", "union all", "except", "intersect"])
@pytest.mark.parametrize("stream", ["window", "random"])
def test_set_operation_equals_recomputation(tpch_streams, kind, stream):
    check_against_recomputation(f"{LEFT} {kind} {RIGHT}", tpch_catalog(), tpch_streams[stream], batch_size=30_000)
