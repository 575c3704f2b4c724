"""Views using Spark's scalar functions in SELECT, WHERE and GROUP BY, maintained over random
insert/delete streams and equal to recomputation after every batch: DuckDB where the two agree on
the functions used, ``spark.sql`` (marked spark) for the ones only Spark defines this way (Java
regular expressions, ``bround``, ``pmod``, ``concat``'s NULL)."""

from __future__ import annotations

import random
from decimal import Decimal

import pytest

from catalog.ddl import catalog_from_ddl
from operators.runtime.stream import Update
from tests.maintenance.checking import check_against_recomputation, check_against_spark

DDL = """
CREATE TABLE customer (id INT PRIMARY KEY, name STRING, city STRING, score DOUBLE);
CREATE TABLE orders (id INT PRIMARY KEY, cust INT REFERENCES customer(id), amount DECIMAL(10,2), note STRING)
"""
NAMES = ["ann", " Bob ", "Çelik", "", None, "x_y-z", "Zoë"]
CITIES = ["oslo", " rome", "LIMA ", None, "", "Oslo"]
NOTES = ["gift:12", "ref-7", None, "", "a1b22", "gift:3:x", "Ref-70"]


def shop_stream(seed: int, updates: int = 700) -> list[Update]:
    """Customers and orders inserted and deleted at random (a customer only once no order of its is
    present), with NULLs, empty and padded strings, unicode, negative and tied amounts."""
    rng = random.Random(seed)
    seq = 0
    customers: dict[int, tuple] = {}
    orders: dict[int, tuple] = {}
    stream: list[Update] = []

    def emit(table: str, op: int, row: tuple) -> None:
        nonlocal seq
        seq += 1
        stream.append(Update(seq, table, op, row))

    def new_customer() -> None:
        key = max(customers, default=0) + 1
        customers[key] = (key, rng.choice(NAMES), rng.choice(CITIES), rng.choice([None, 2.5, -0.5, 3.25, 7.0]))
        emit("customer", 1, customers[key])

    for _ in range(6):
        new_customer()
    next_order = 1
    while seq < updates:
        roll = rng.random()
        if roll < 0.05:
            new_customer()
        elif roll < 0.08:
            idle = [c for c in customers if all(o[1] != c for o in orders.values())]
            if idle:
                emit("customer", -1, customers.pop(rng.choice(idle)))
        elif roll < 0.38 and orders:
            emit("orders", -1, orders.pop(rng.choice(list(orders))))
        else:
            amount = Decimal(rng.choice([-250, -5, 5, 15, 25, 125, 1999, 2050, 12345])) / 100
            orders[next_order] = (next_order, rng.choice(list(customers)), amount, rng.choice(NOTES))
            emit("orders", 1, orders[next_order])
            next_order += 1
    return stream


DUCKDB_QUERIES = {
    "functions in select, where and group by": """
        select upper(trim(c.city)) as place, round(sum(o.amount), 1) as total, count(*) as n,
               max(abs(o.amount)) as biggest
        from orders o, customer c
        where o.cust = c.id and length(coalesce(c.name, '')) >= 3 and abs(o.amount) > 0.1
        group by upper(trim(c.city))""",
    "string functions over a join, grouped by a computed key": """
        select left(lower(coalesce(nullif(trim(c.name), ''), 'none')), 2) as initial,
               floor(o.amount) as whole, ceil(o.amount) as up, count(*) as n
        from orders o join customer c on o.cust = c.id
        where o.note is null or starts_with(o.note, 'gift') or lpad(o.note, 3, '*') = '*a1'
        group by left(lower(coalesce(nullif(trim(c.name), ''), 'none')), 2), floor(o.amount), ceil(o.amount)""",
    "functions in a projection without aggregates": """
        select o.id, o.note || '/' || replace(coalesce(c.city, '?'), ' ', '_') as label,
               greatest(o.amount, 0) as paid, sign(o.amount) as direction, split_part(o.note, ':', 2) as part,
               instr(coalesce(o.note, ''), '-') as dash
        from orders o, customer c where o.cust = c.id and length(o.note) > 0""",
}

SPARK_QUERIES = {
    "regular expressions, bround, pmod and concat": """
        select regexp_extract(o.note, '([a-z]+)[:-]?(\\\\d+)', 1) as word, pmod(o.id, 3) as bucket,
               bround(sum(o.amount), 1) as total, count(*) as n, max(concat(c.name, '@', c.city)) as who
        from orders o, customer c
        where o.cust = c.id and (o.note rlike '\\\\d' or regexp_replace(c.name, '[aeiou]', '') <> c.name)
        group by regexp_extract(o.note, '([a-z]+)[:-]?(\\\\d+)', 1), pmod(o.id, 3)""",
    "rounding and logarithms of doubles per row": """
        select c.id, round(c.score * 1.5, 1) as r, bround(c.score, 0) as b, sqrt(abs(c.score)) as s,
               ln(c.score) as l, power(c.score, 2) as p, if(c.score > 3, 'high', 'low') as band,
               nvl2(c.name, concat_ws('|', c.name, c.city), 'anonymous') as label
        from customer c""",
    "months_between, try_ arithmetic and calendar functions grouped": """
        select months_between(make_date(2024, 1 + pmod(o.id, 12), 1 + pmod(o.id, 28)), date '2023-03-31') as months,
               next_day(make_date(2024, 1 + pmod(o.id, 12), 1), 'FRI') as friday, weekofyear(date '2024-01-01' + o.id) as week,
               sum(try_divide(o.amount, c.score)) as per_point, max(try_multiply(o.id, 1000000000)) as big,
               max(translate(o.note, 'ag', 'A')) as note, count_if(c.name <=> c.city) as same, count(*) as n
        from orders o join customer c on o.cust = c.id
        group by 1, 2, 3""",
}


@pytest.mark.parametrize("name", list(DUCKDB_QUERIES))
@pytest.mark.parametrize("seed", [1, 2])
def test_functions_maintained_equal_duckdb(name, seed):
    view = check_against_recomputation(DUCKDB_QUERIES[name], catalog_from_ddl(DDL), shop_stream(seed), batch_size=60,
                                       informative_at_least=0.8)
    assert view.result(), "the final result must not be empty"


CALENDAR_QUERY = """
        select last_day(make_date(2024, 1 + o.id % 12, 1)) as month_end, dayofyear(make_date(2024, 1 + o.id % 12, 28)) as doy,
               reverse(coalesce(c.name, '')) as back, repeat(coalesce(c.city, '?'), 2) as twice,
               try_cast(o.note as int) as number, nullif(ascii(coalesce(c.city, '')), 32) as first_code, count(*) as n, sum(o.amount) as total
        from orders o join customer c on o.cust = c.id
        group by 1, 2, 3, 4, 5, 6"""


def test_calendar_string_and_null_functions_maintained_equal_duckdb():
    """last_day, dayofyear, make_date, reverse, repeat, try_cast and ascii in a grouping key (one short stream:
    the Spark comparison below covers months_between and the try_ arithmetic)."""
    view = check_against_recomputation(CALENDAR_QUERY, catalog_from_ddl(DDL), shop_stream(1, 300), batch_size=60,
                                       informative_at_least=0.8)
    assert view.result(), "the final result must not be empty"


@pytest.fixture(scope="module")
def spark():
    from operators.runtime.spark_session import make_spark_session

    return make_spark_session(app="spark-ivm-functions", cores=1)


@pytest.mark.spark
@pytest.mark.parametrize("name", list(SPARK_QUERIES))
def test_functions_maintained_equal_spark(spark, name, tmp_path):
    view = check_against_spark(SPARK_QUERIES[name], catalog_from_ddl(DDL), shop_stream(3, 400), 80, spark,
                               str(tmp_path), informative_at_least=0.8)
    assert view.result(), "the final result must not be empty"
