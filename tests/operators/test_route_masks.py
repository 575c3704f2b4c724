"""A route's selection translated to Arrow (``row_masks``) keeps exactly the rows the compiled selection
keeps, NULLs (SQL's unknown) included, for every form it translates; a part it does not translate only
widens the mask, and a selection it cannot see through gives the table no mask (every row read)."""

from __future__ import annotations

import datetime
import random
from decimal import Decimal

import numpy as np
import pytest

from catalog import types
from catalog.ddl import catalog_from_ddl
from operators.lowering.expr_eval import compile_predicate
from operators.lowering.route_masks import row_masks
from operators.runtime.dataflow import Dataflow, SourceRoute
from operators.runtime.stream import arrow_from_rows
from planner.ir.expressions import Call, Column, Literal
from planner.view import MaintainedView

CATALOG = catalog_from_ddl("""
CREATE TABLE t (id INT NOT NULL, qty INT, amount DECIMAL(15,2), day DATE, day2 DATE, tag VARCHAR(10), big BIGINT,
                note VARCHAR(20), price DECIMAL(15,2), PRIMARY KEY (id));
""")
TABLE = CATALOG.table("t")
DAY = datetime.date(1995, 3, 15)


def random_rows(count: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)

    def maybe(value):
        return None if rng.random() < 0.15 else value

    return [(i, maybe(rng.randint(0, 9)), maybe(Decimal(rng.randint(0, 400)) / 100),
             maybe(DAY + datetime.timedelta(rng.randint(-3, 3))), maybe(DAY + datetime.timedelta(rng.randint(-3, 3))),
             maybe(rng.choice(["a", "b", "ab", "", "é", "z"])), maybe(rng.randint(-2**62, 2**62)),
             f"note {i}", Decimal(i % 90) / 2 if i % 5 else None)
            for i in range(count)]


ROWS = random_rows(600, seed=1)
CASTS = arrow_from_rows(ROWS, TABLE, "test").columns


def kept_and_mask(dataflow: Dataflow) -> tuple[list[bool], np.ndarray | None]:
    """What the compiled selections keep (any route) and the table's mask on the same rows (None: none)."""
    kept = [any(route.predicate is None or route.predicate(row) for route in dataflow.sources) for row in ROWS]
    mask = row_masks(dataflow, CATALOG).get("t")
    return kept, None if mask is None else mask.keep(CASTS)


def selection(where: str) -> Dataflow:
    return MaintainedView(f"SELECT id, note, price FROM t WHERE {where}", CATALOG).compiled.dataflow


EXACT = [
    "qty > 5", "5 < qty", "qty <= 3", "qty = 4", "qty <> 4", "big >= 0",
    "amount >= 1.5", "amount = 2", "amount < 0.5", "price > 30",
    "day < date '1995-03-15'", "day >= date '1995-03-14'", "day = date '1995-03-15'", "day < day2",
    "tag = 'ab'", "tag < 'b'", "tag > 'a'", "tag <> ''", "tag >= 'é'",
    "qty between 2 and 5", "amount between 0.5 and 2.5",
    "qty is null", "tag is not null", "amount is null or qty > 7",
    "qty in (1, 3)", "qty in (1, 3, null)", "qty not in (1, 3)", "qty not in (1, null) or tag = 'a'", "tag in ('a', 'é')",
    "not (qty > 5)", "not (qty in (1, null)) or day < day2", "qty > 5 or tag = 'a'", "qty > 5 and (tag = 'a' or amount is null)",
    "not (qty > 5 and day < day2)",
]


@pytest.mark.parametrize("where", EXACT)
def test_a_translated_selection_keeps_exactly_the_rows_its_compiled_closure_keeps(where):
    kept, mask = kept_and_mask(selection(where))
    assert mask is not None, "the selection should translate"
    assert 0 < sum(kept) < len(kept), "the comparison must see rows kept and rows dropped"
    assert mask.tolist() == kept


@pytest.mark.parametrize("where", ["qty > 3 and tag like 'a%'", "tag like '%b' and amount >= 1 and day < day2"])
def test_an_untranslated_conjunct_widens_the_mask_and_never_narrows_it(where):
    kept, mask = kept_and_mask(selection(where))
    assert mask is not None and 0 < sum(kept)
    assert all(mask[np.array(kept)])
    assert sum(mask) > sum(kept)  # wider: the LIKE is taken as true


@pytest.mark.parametrize("where", [
    "tag like 'a%'", "qty > 3 or tag like 'a%'", "qty + 1 > 5", "not (qty > 3 and tag like 'a%')",
    "qty > 2.5",  # a DECIMAL literal against an INT column: not translated, though it could be
    "amount > 0.055",  # not exactly a DECIMAL(15,2)
    "coalesce(qty, 0) > 3",
])
def test_a_selection_that_does_not_translate_gives_no_mask(where):
    kept, mask = kept_and_mask(selection(where))
    assert 0 < sum(kept) < len(kept)
    assert mask is None


def route(predicate, table: str = "t") -> SourceRoute:
    layout = {Column("t", name): position for position, name in enumerate(TABLE.column_names)}
    return SourceRoute(table, 0, 0, (0,), None if predicate is None else compile_predicate(predicate, layout))


@pytest.mark.parametrize("literal", [
    Literal("5", types.STRING), Literal(True, types.BOOLEAN), Literal(5.0, types.DOUBLE), Literal(None, types.NULL),
    Literal(2**40, types.BIGINT),  # beyond the INT column's Arrow type
])
def test_a_literal_that_is_not_exactly_a_value_of_its_columns_type_gives_no_mask(literal):
    dataflow = Dataflow((), (route(Call(">", (Column("t", "qty"), literal))),), ())
    assert row_masks(dataflow, CATALOG) == {}


def test_a_row_is_kept_when_any_route_of_its_table_keeps_it_and_a_route_without_selection_keeps_all():
    first, second = (Call(op, (Column("t", "qty"), Literal(value, types.INT))) for op, value in (("<", 2), (">", 7)))
    kept, mask = kept_and_mask(Dataflow((), (route(first), route(second)), ()))
    assert 0 < sum(kept) < len(kept) and mask.tolist() == kept
    assert row_masks(Dataflow((), (route(first), route(None)), ()), CATALOG) == {}


def test_the_selections_columns_and_the_key_are_made_at_every_row():
    masks = row_masks(selection("qty > 5 and day < day2"), CATALOG)
    assert masks["t"].always == {"id", "qty", "day", "day2"}
