"""SQL a user expects to work, from a public query suite nobody here wrote (issue 9, item 9): each
form planned and maintained on the local runner, equal to DuckDB's recomputation after every batch
of random insert/delete streams, on results that are not empty."""

from __future__ import annotations

import random

import pytest

from catalog.ddl import catalog_from_ddl
from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, batches
from operators.runtime.validate import InvalidChangeError
from planner.compiler import UnsupportedQueryError, compile_query
from planner.explain import explain_text
from planner.view import MaintainedView
from planner.workloads.oracle import DuckDBOracle
from tests.maintenance.checking import check_against_recomputation, stream_tables

# A keyless fact table (bag semantics: a row may be present several times) and a keyed dimension.
BAG_DDL = """
CREATE TABLE shop (id INT PRIMARY KEY, city STRING);
CREATE TABLE sale (shop_id INT REFERENCES shop(id), kind STRING, amount INT)
-- sale has no primary key: a sale of the same kind and amount in the same shop may repeat
"""


def bag_stream(seed: int, updates: int = 600) -> list[Update]:
    """Shops inserted first; then sales drawn from a small domain, so the same row is inserted
    several times, and random deletes of one present copy (never of an absent row)."""
    rng = random.Random(seed)
    stream = [Update(seq, "shop", 1, (seq, rng.choice(["oslo", "rome", "lima"]))) for seq in range(1, 6)]
    present: list[tuple] = []
    for seq in range(len(stream) + 1, updates):
        if present and rng.random() < 0.35:
            row = present.pop(rng.randrange(len(present)))
            stream.append(Update(seq, "sale", -1, row))
        else:
            row = (rng.randint(1, 5), rng.choice(["a", "b", "c"]), rng.randint(1, 4))
            present.append(row)
            stream.append(Update(seq, "sale", 1, row))
    return stream


BAG_QUERIES = {
    "count(*) and sum(1) over a keyless table": "select count(*) as n, sum(1) as m, sum(amount) as s from sale",
    "grouped count(*) over a keyless table": "select kind, count(*) as n, sum(amount) as s from sale group by kind",
    "projection keeps duplicates": "select kind, amount from sale where amount > 1",
    "distinct over duplicates": "select distinct kind, amount from sale",
    "keyless joined with its own grouped derived table": """select s.kind, s.amount, t.total
        from sale s, (select kind, sum(amount) as total from sale group by kind) t where s.kind = t.kind""",
    "keyless joined with a keyed dimension": """select city, count(*) as n, sum(amount) as s
        from sale, shop where shop_id = id group by city""",
}


@pytest.mark.parametrize("name", list(BAG_QUERIES))
@pytest.mark.parametrize("seed", [1, 2])
def test_keyless_table_has_bag_semantics(name, seed):
    catalog = catalog_from_ddl(BAG_DDL)
    stream = bag_stream(seed)
    assert len({u.row for u in stream if u.table == "sale"}) < sum(u.op == 1 for u in stream if u.table == "sale")
    view = check_against_recomputation(BAG_QUERIES[name], catalog, stream, batch_size=70)
    assert view.result(), "the final result must not be empty"


def test_keyless_delete_removes_one_copy_and_an_absent_row_is_invalid():
    catalog = catalog_from_ddl(BAG_DDL)
    with MaintainedView("select kind, amount from sale", catalog) as view:
        row = (1, "a", 2)
        view.apply([Update(1, "sale", 1, row), Update(2, "sale", 1, row), Update(3, "sale", -1, row)])
        assert view.result() == [("a", 2)]
        view.apply([Update(4, "sale", -1, row)])
        assert view.result() == []
        with pytest.raises(InvalidChangeError, match="absent row"):
            view.apply([Update(5, "sale", -1, row)])


BAG_TWO_PARENTS_DDL = BAG_DDL + """;
CREATE TABLE item (kind STRING PRIMARY KEY, label STRING);
CREATE TABLE sale2 (shop_id INT REFERENCES shop(id), kind STRING REFERENCES item(kind), amount INT)
"""


def test_keyless_table_referencing_two_tables_is_maintained_by_the_general_join():
    """A live-tuple stage is keyed by a primary key: a keyless relation with two foreign-key
    partners is refused by the foreign-key tree (the reason in EXPLAIN) and joined by the fallback."""
    catalog = catalog_from_ddl(BAG_TWO_PARENTS_DDL)
    sql = "select city, label, count(*) as n from sale2, shop, item where shop_id = id and sale2.kind = item.kind group by city, label"
    stream = [Update(i, "item", 1, (k, k.upper())) for i, k in enumerate("abc", start=1)]
    stream += [Update(u.seq + 10, "sale2" if u.table == "sale" else u.table, u.op, u.row) for u in bag_stream(3)]
    view = check_against_recomputation(sql, catalog, stream, batch_size=50)
    assert view.result()
    assert "no primary key (bag semantics)" in explain_text(view.compiled, verbose=True)


EMP_DDL = """
CREATE TABLE dept (dept_id INT PRIMARY KEY, dname STRING);
CREATE TABLE emp (emp_id INT PRIMARY KEY, salary INT, dept_id INT REFERENCES dept(dept_id), dname STRING);
"""


def emp_stream(seed: int, updates: int = 500) -> list[Update]:
    """Departments and employees inserted, deleted and re-inserted in a random order: dangling
    foreign keys, NULL salaries, and employees whose ``dname`` matches their department's or not."""
    rng = random.Random(seed)
    names = ["ops", "dev", "law"]
    present: dict[tuple[str, int], tuple] = {}
    stream = []
    for seq in range(1, updates):
        table = rng.choice(["dept", "emp", "emp", "emp"])
        key = rng.randint(1, 4 if table == "dept" else 40)
        if (table, key) in present and rng.random() < 0.5:
            stream.append(Update(seq, table, -1, present.pop((table, key))))
        elif (table, key) not in present:
            if table == "dept":
                row = (key, rng.choice(names))
            else:
                row = (key, rng.choice([None, *range(10, 60, 7)]), rng.randint(1, 5), rng.choice(names))
            present[(table, key)] = row
            stream.append(Update(seq, table, 1, row))
    return stream


# Spark lists the USING columns once, first, then the rest of the left side, then the rest of the
# right side; DuckDB keeps the left side's order, so its query spells Spark's order out.
USING_QUERIES = {
    "NATURAL JOIN (two common names)": (
        "select * from emp natural join dept",
        "select dept_id, dname, emp_id, salary from emp natural join dept",
    ),
    "JOIN ... USING, SELECT *": (
        "select * from emp join dept using (dept_id)",
        "select dept_id, emp_id, salary, emp.dname, dept.dname from emp join dept using (dept_id)",
    ),
    "JOIN ... USING grouped by the merged column": (
        "select dept_id, dept.dname, count(*) as n, sum(salary) as s from emp join dept using (dept_id) group by dept_id, dept.dname",
        None,
    ),
    "LEFT JOIN ... USING": (
        "select * from emp left join dept using (dept_id)",
        "select emp.dept_id, emp_id, salary, emp.dname, dept.dname from emp left join dept using (dept_id)",
    ),
}


@pytest.mark.parametrize("name", list(USING_QUERIES))
@pytest.mark.parametrize("seed", [1, 2])
def test_natural_join_and_using(name, seed):
    sql, oracle_sql = USING_QUERIES[name]
    view = check_against_recomputation(sql, catalog_from_ddl(EMP_DDL), emp_stream(seed), batch_size=60,
                                       oracle_sql=oracle_sql)
    assert view.result()


# ORDER BY columns that are not selected: (Spark SQL, DuckDB's with Spark's NULL order spelled out).
ORDER_BY_HIDDEN = {
    "ORDER BY a column not selected": (
        "select emp_id, dname from emp order by salary desc, emp_id",
        "select emp_id, dname from emp order by salary desc nulls last, emp_id",
    ),
    "ORDER BY an aggregate not selected": (
        "select dept_id from emp group by dept_id order by count(*) desc, sum(salary), dept_id",
        "select dept_id from emp group by dept_id order by count(*) desc, sum(salary) nulls first, dept_id",
    ),
    "top-k by a column not selected": (
        "select emp_id, dname from emp order by salary, emp_id desc limit 5",
        "select emp_id, dname from emp order by salary nulls first, emp_id desc limit 5",
    ),
}


@pytest.mark.parametrize("name", list(ORDER_BY_HIDDEN))
@pytest.mark.parametrize("seed", [1, 2])
def test_order_by_a_column_that_is_not_selected(name, seed):
    """The result comes back in Spark's order, compared in order (the keys make it total)."""
    sql, duckdb_sql = ORDER_BY_HIDDEN[name]
    catalog = catalog_from_ddl(EMP_DDL)
    compared = 0
    stream = emp_stream(seed)
    with DuckDBOracle(catalog) as oracle, MaintainedView(sql, catalog, strict=True) as view:
        oracle.load_stream(stream_tables(catalog, stream))  # the tables as the stream has them, not the engine
        for number, batch in enumerate(batches(stream, 60)):
            delta = view.apply(batch)
            assert all(len(row) == len(view.columns) for row, _ in delta)
            oracle.as_of(batch[-1].seq)
            expected = oracle.connection.execute(duckdb_sql).fetchall()
            assert view.result() == expected, f"after batch {number}"
            compared += bool(expected)
    assert compared > 3


GREATEST_LEAST = {
    "in the select list, with NULL arguments": "select emp_id, salary, greatest(salary, 30, dept_id * 10) as g, least(salary, emp_id) as l from emp",
    "in WHERE and in an aggregate": """select dname, count(*) as n, sum(greatest(salary, 25)) as s
        from emp where least(salary, 40) > 20 group by dname""",
}


@pytest.mark.parametrize("name", list(GREATEST_LEAST))
def test_greatest_and_least(name):
    """Spark's GREATEST/LEAST skip NULLs (NULL only when all are); DuckDB's agree."""
    view = check_against_recomputation(GREATEST_LEAST[name], catalog_from_ddl(EMP_DDL), emp_stream(3), batch_size=60)
    assert view.result()
    if "select list" in name:
        nulls = [row for row in view.result() if row[1] is None]
        assert nulls and all(g is not None and least == emp for emp, _, g, least in nulls), "NULL arguments are skipped"


# Q18 with its HAVING written as a WHERE on the derived table (threshold lowered from 300 so the
# result is not empty at SF 0.01 on these streams).
Q18_DERIVED_FILTER = """select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity) as sum_quantity
from customer, orders, lineitem
where o_orderkey in (
    select l_orderkey from (select l_orderkey, sum(l_quantity) as sum_qty from lineitem group by l_orderkey) t
    where sum_qty > 200)
  and c_custkey = o_custkey and o_orderkey = l_orderkey
group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice"""

# A derived table over a derived table with a join, itself joined (one level always worked).
NESTED_DERIVED_JOIN = """select t.n_name, count(*) as orders, sum(o_totalprice) as total
from (select n_name, c_custkey from (select n_name, c_name, c_custkey from customer join nation
      on c_nationkey = n_nationkey) a) t join orders on t.c_custkey = o_custkey
group by t.n_name"""

# SELECT DISTINCT in a derived table: a view keyed by all its columns.
DISTINCT_DERIVED = """select o_orderpriority, count(*) as customers
from (select distinct o_custkey, o_orderpriority from orders) t group by o_orderpriority"""

DISTINCT_DERIVED_JOINED = """select c_mktsegment, count(*) as pairs, sum(c_acctbal) as balance
from customer, (select distinct o_custkey, o_orderpriority from orders where o_orderstatus = 'F') t
where c_custkey = t.o_custkey group by c_mktsegment"""

# sum(x) / sum(1) as avg(x), and the same divided by count(*)
SUM_OVER_SUM_ONE = """select o_orderpriority, sum(o_totalprice) / sum(1) as mean, avg(o_totalprice) as average,
  sum(o_shippriority + 1) / count(*) as ones from orders group by o_orderpriority"""
GLOBAL_SUM_OVER_SUM_ONE = "select sum(l_quantity) / sum(1) as mean, sum(1) as n from lineitem where l_quantity > 10"

TPCH_BREADTH = {
    "IN over a derived table filtered in WHERE (Q18 written with WHERE)": Q18_DERIVED_FILTER,
    "derived table of a derived table with a join, joined": NESTED_DERIVED_JOIN,
    "SELECT DISTINCT derived table": DISTINCT_DERIVED,
    # Spark names a derived table without an alias __auto_generated_subquery_name
    "derived tables without an alias": "select o_orderpriority, n from (select o_orderpriority, count(*) as n from orders "
                                       "group by o_orderpriority) where n > 10",
    "SELECT DISTINCT derived table joined on its key": DISTINCT_DERIVED_JOINED,
    "sum(x) / sum(1) grouped": SUM_OVER_SUM_ONE,
    "sum(x) / sum(1) global": GLOBAL_SUM_OVER_SUM_ONE,
}


@pytest.mark.parametrize("name", list(TPCH_BREADTH))
@pytest.mark.parametrize("kind", ["live", "random"])  # the window stream deletes every nation
def test_tpch_shaped_breadth(tpch_streams, name, kind):
    check_against_recomputation(TPCH_BREADTH[name], tpch_catalog(), tpch_streams[kind], batch_size=15_000,
                                informative_at_least=0.5)


# Not-NULL integer and double columns: there sum(x) / sum(1) is avg(x) exactly (see block_grouping.RatioAsAverage).
STOCK_DDL = """
CREATE TABLE item (item_id INT PRIMARY KEY, grp INT NOT NULL, qty INT NOT NULL, price DOUBLE NOT NULL, note INT);
"""


def stock_stream(seed: int, updates: int = 500) -> list[Update]:
    rng = random.Random(seed)
    present: dict[int, tuple] = {}
    stream = []
    for seq in range(1, updates):
        key = rng.randint(1, 60)
        if key in present and rng.random() < 0.4:
            stream.append(Update(seq, "item", -1, present.pop(key)))
        elif key not in present:
            present[key] = (key, rng.randint(1, 4), rng.randint(1, 50), rng.randint(1, 400) / 4,
                            rng.choice([None, rng.randint(1, 9)]))
            stream.append(Update(seq, "item", 1, present[key]))
    return stream


RATIO_QUERIES = {
    "correlated: 0.5 * sum(qty) / sum(1) as avg (Q17's shape)": """select item_id, qty from item i
        where qty < (select 0.5 * sum(qty) / sum(1) from item j where j.grp = i.grp)""",
    "correlated: sum(price) / count(*)": """select grp, count(*) as n from item i
        where price > (select sum(price) / count(*) from item j where j.grp = i.grp) group by grp""",
    "grouped, with HAVING": """select grp, sum(qty) / sum(1) as mean from item group by grp
        having sum(price) / sum(1) > 20""",
}


@pytest.mark.parametrize("name", list(RATIO_QUERIES))
@pytest.mark.parametrize("seed", [1, 2])
def test_sum_over_sum_one_is_maintained_where_avg_is(name, seed):
    view = check_against_recomputation(RATIO_QUERIES[name], catalog_from_ddl(STOCK_DDL), stock_stream(seed),
                                       batch_size=50)
    assert view.result()


def test_sum_over_sum_one_of_a_nullable_column_is_not_read_as_avg():
    """sum(note) / sum(1) divides by every row, avg(note) by the non-NULL ones: not the same."""
    sql = "select item_id from item i where note < (select sum(note) / sum(1) from item j where j.grp = i.grp)"
    with pytest.raises(UnsupportedQueryError, match="subquery that no rule maintains"):
        compile_query(sql, catalog_from_ddl(STOCK_DDL))
