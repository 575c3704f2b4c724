"""Where Spark raises at run time, the batch is rejected with Spark's error and nothing changes (issue 9,
items 3 and 4): division by zero, integer overflow and a cast of a malformed string, met by a row in
the middle of a batch, after other rows and other stages already ran it.
"""

from __future__ import annotations

import copy
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from planner.ir.values import SqlRuntimeError
from planner.view import MaintainedView

CATALOG = catalog_from_ddl(
    """CREATE TABLE shop (id INT NOT NULL, region INT, PRIMARY KEY (id));
    CREATE TABLE sale (id INT NOT NULL, shop_id INT, qty INT, price DECIMAL(15,2), code STRING,
      PRIMARY KEY (id), FOREIGN KEY (shop_id) REFERENCES shop (id));"""
)
GOOD = [Update(1, "shop", 1, (1, 10)), Update(2, "shop", 1, (2, 20)),
        Update(3, "sale", 1, (1, 1, 4, Decimal("2.50"), "7")), Update(4, "sale", 1, (2, 2, 2, Decimal("1.25"), "8"))]

CASES = {
    "division by zero": ("select s.region, sum(price / qty) as unit from sale, shop s where shop_id = s.id group by s.region",
                         (3, 1, 0, Decimal("1.00"), "9"), "DIVIDE_BY_ZERO"),
    "int overflow": ("select sale.id, qty + 2147483640 as big from sale, shop where shop_id = shop.id",
                     (3, 2, 9, Decimal("1.00"), "9"), "ARITHMETIC_OVERFLOW"),
    "malformed cast": ("select region, count(*) as n from sale, shop where shop_id = shop.id and cast(code as int) > 7 group by region",
                       (3, 1, 1, Decimal("1.00"), "x"), "CAST_INVALID_INPUT"),
}


def _state(view: MaintainedView) -> tuple:
    return copy.deepcopy((view.runner.states, view.validator.state(), view.current, view.rejected))


@pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "generic"])
@pytest.mark.parametrize(("sql", "bad_row", "error_class"), CASES.values(), ids=CASES.keys())
def test_a_spark_runtime_error_rejects_the_batch_and_leaves_every_state_as_it_was(sql, bad_row, error_class, compiled):
    view = MaintainedView(sql, CATALOG, compiled=compiled)
    view.apply(GOOD)
    before_result, before = view.result(), _state(view)
    assert before_result, "the comparison must start from a non-empty result"
    fine = (4, 2, 5, Decimal("3.00"), "9")
    batch = [Update(5, "sale", 1, fine), Update(6, "sale", 1, bad_row)]  # the good row runs first
    with pytest.raises(SqlRuntimeError, match=error_class) as raised:
        view.apply(batch)
    assert raised.value.error_class == error_class
    assert _state(view) == before and view.result() == before_result
    # the same batch without the bad row goes through, as if the failed one had never been sent
    view.apply([Update(5, "sale", 1, fine)])
    fresh = MaintainedView(sql, CATALOG)
    fresh.apply(GOOD)
    fresh.apply([Update(5, "sale", 1, fine)])
    assert view.result() == fresh.result() != before_result
