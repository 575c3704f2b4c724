"""Choosing the Spark runner's physical strategy, and building the JVM delta strategy's plan from SQL.

The Spark runner has two strategies (docs/spark.md, "Two strategies"):

- **JVM delta queries** (``operators/runtime/delta_sql``): per micro-batch, the view's delta terms run
  as Spark SQL over the batch's changes and the tables' stored rows (the classic delta rule,
  ``delta_sql/plan.py``), summed into a ring of partial aggregates. Spark evaluates the view's own
  expressions, so the work stays in the JVM. It applies to a view that is one SELECT over base tables
  joined by inner joins, with WHERE, GROUP BY, SUM/COUNT/AVG, HAVING, and ORDER BY … LIMIT over the
  aggregate.
- **Python stages** (``transformWithState``): every other view, and the algorithms SQL cannot express
  (generalized join trees, RPAI, MIN/MAX, outer joins, windows).

``spark_strategy`` decides, with the reason EXPLAIN prints. Every check here is on the qualified SQL
tree (sqlglot); the view has passed the planner already, so what it reads exists and is typed.
"""

from __future__ import annotations

import attrs
import sqlglot
from sqlglot import exp
from sqlglot.errors import OptimizeError
from sqlglot.optimizer.annotate_types import annotate_types
from sqlglot.optimizer.qualify import qualify

from catalog.schema import Catalog
from operators.runtime.delta_sql.plan import (
    AGGREGATE_REF,
    ARGUMENT,
    GROUP,
    GROUP_REF,
    WEIGHT,
    DeltaSqlPlan,
    DeltaTerm,
    JoinStep,
    Occurrence,
    RingAggregate,
    renamed,
)

#: The weight column of a table's changes (``spark_changes.OP``; not imported: that module imports pyspark).
OP = "_op"
#: The argument types whose AVG the ring keeps exactly as Spark computes it (sum / count in DOUBLE);
#: Spark rounds a DECIMAL's average once, at the result's scale, which partial sums do not reproduce yet.
AVERAGED_TYPES = (*exp.DataType.INTEGER_TYPES, exp.DataType.Type.DOUBLE, exp.DataType.Type.FLOAT)
#: ``MaintainedView(spark_strategy=...)``. "auto" takes the Python stages for now: the JVM delta queries
#: measured slower on TPC-H Q3 at SF 0.1 (examples/benchmarks/RESULTS.md, 2026-11-28), so they are opt-in.
SPARK_STRATEGIES = ("auto", "jvm", "python")


class NotDeltaSql(ValueError):
    """Why a view is not one the JVM delta strategy maintains (the reason EXPLAIN and errors print)."""


@attrs.frozen
class SparkStrategy:
    """The strategy chosen for a view on Spark, and why; ``delta`` is the JVM delta queries' plan
    wherever they apply (shown by EXPLAIN even when not chosen), ``plan`` only when chosen."""

    delta: DeltaSqlPlan | None
    jvm: bool
    reason: str

    @property
    def plan(self) -> DeltaSqlPlan | None:
        return self.delta if self.jvm else None

    @property
    def name(self) -> str:
        return "JVM delta queries" if self.jvm else "Python stages"


def spark_strategy(sql: str, catalog: Catalog, visible_width: int, width: int, choice: str = "auto") -> SparkStrategy:
    """The strategy for ``sql`` under ``choice`` (``SPARK_STRATEGIES``); ``jvm`` raises ``NotDeltaSql``
    when the view does not qualify. ``visible_width``/``width``: the result's visible and total columns
    (ORDER BY columns outside the select list make them differ, which the delta strategy does not keep)."""
    if choice not in SPARK_STRATEGIES:
        raise ValueError(f"unknown Spark strategy {choice!r}; choose one of {', '.join(SPARK_STRATEGIES)}")
    try:
        if visible_width != width:
            raise NotDeltaSql("ORDER BY uses a value outside the select list")
        plan = delta_sql_plan(sql, catalog)
    except NotDeltaSql as err:
        if choice == "jvm":
            raise
        return SparkStrategy(None, False, f"Python stages: the JVM delta queries do not apply ({err})")
    if choice == "jvm":
        return SparkStrategy(plan, True, "JVM delta queries (spark_strategy='jvm'): inner joins and ring aggregates "
                                         "run as Spark SQL per micro-batch")
    why = "chosen by the caller" if choice == "python" else "the default"
    return SparkStrategy(plan, False, f"Python stages ({why}); the JVM delta queries apply too (spark_strategy='jvm'), "
                                      "measured slower on Q3 at SF 0.1 (RESULTS.md)")


def delta_sql_plan(sql: str, catalog: Catalog) -> DeltaSqlPlan:
    """The delta queries of ``sql``, or ``NotDeltaSql`` naming the first construct they do not cover."""
    try:
        tree = qualify(sqlglot.parse_one(sql, read="spark"), schema=_schema(catalog), dialect="spark",
                       quote_identifiers=False)
        tree = annotate_types(tree, schema=_schema(catalog), dialect="spark")
    except (sqlglot.errors.ParseError, OptimizeError) as err:
        raise NotDeltaSql(f"the SQL is not one the delta rewrite reads: {err}") from None
    if not isinstance(tree, exp.Select):
        raise NotDeltaSql(f"the view is a {tree.key.upper()}, not one SELECT")
    _refuse_constructs(tree)
    occurrences = _occurrences(tree, catalog)
    _refuse_unchecked_tables([o.table for o in occurrences], catalog)
    calls = _aggregate_calls(tree)
    groups = list(tree.args["group"].expressions) if tree.args.get("group") else []
    if not calls and not groups:
        return _join_plan(tree, occurrences, catalog)
    return _aggregate_plan(tree, occurrences, groups, calls, catalog)


def _schema(catalog: Catalog) -> dict[str, dict[str, str]]:
    return {name: {c.name: str(c.type) for c in table.columns} for name, table in catalog.tables.items()}


def _refuse_constructs(tree: exp.Select) -> None:
    """Refuse what the delta rule over inner joins and a ring does not cover, naming it."""
    if tree.args.get("with_") or tree.args.get("with"):
        raise NotDeltaSql("WITH (common table expressions)")
    if tree.args.get("distinct"):
        raise NotDeltaSql("SELECT DISTINCT")
    for key, what in (("qualify", "QUALIFY"), ("laterals", "LATERAL VIEW"), ("pivots", "PIVOT")):
        if tree.args.get(key):
            raise NotDeltaSql(what)
    group = tree.args.get("group")
    if group is not None and any(group.args.get(k) for k in ("rollup", "cube", "grouping_sets")):
        raise NotDeltaSql("GROUP BY ROLLUP, CUBE or GROUPING SETS")
    for node in tree.walk():
        if isinstance(node, exp.Select) and node is not tree or isinstance(node, exp.Subquery | exp.Exists):
            raise NotDeltaSql("a subquery")
        if isinstance(node, exp.Window):
            raise NotDeltaSql("a window function")
    if tree.args.get("limit") is not None and not tree.args.get("order"):
        raise NotDeltaSql("LIMIT without ORDER BY")


def _occurrences(tree: exp.Select, catalog: Catalog) -> list[Occurrence]:
    """The FROM clause's tables in order; inner and cross joins of base tables only."""
    found = []
    for join in tree.args.get("joins") or []:
        if join.side or (join.kind or "INNER").upper() not in ("INNER", "CROSS"):
            raise NotDeltaSql(f"a {' '.join(filter(None, (join.side, join.kind)))} JOIN (outer, semi or anti)")
        if join.args.get("using"):
            raise NotDeltaSql("JOIN … USING")
    for item in [tree.args["from_"].this, *(j.this for j in tree.args.get("joins") or [])]:
        if not isinstance(item, exp.Table) or item.name.lower() not in catalog.tables or item.args.get("db"):
            raise NotDeltaSql(f"FROM item {item.sql('spark')} is not a base table")
        found.append(Occurrence(item.name.lower(), item.alias_or_name))
    return found


def _aggregate_calls(tree: exp.Select) -> list[exp.AggFunc]:
    """The distinct aggregate calls of the select list, HAVING and ORDER BY, refusing those outside the ring."""
    calls: list[exp.AggFunc] = []
    for node in tree.walk():
        if not isinstance(node, exp.AggFunc):
            continue
        if not isinstance(node, exp.Sum | exp.Count | exp.Avg):
            raise NotDeltaSql(f"aggregate {node.sql('spark')}: only SUM, COUNT and AVG are a ring (±)")
        if isinstance(node.this, exp.Distinct) or node.args.get("distinct"):
            raise NotDeltaSql(f"aggregate {node.sql('spark')}: DISTINCT is not a ring")
        if node.this is not None and node.this.find(exp.AggFunc):
            raise NotDeltaSql("a nested aggregate")
        if isinstance(node, exp.Avg) and not (node.this.type and node.this.type.is_type(*AVERAGED_TYPES)):
            raise NotDeltaSql(f"aggregate {node.sql('spark')}: AVG of a DECIMAL (its rounding is not kept yet)")
        if node not in calls:
            calls.append(node)
    if tree.args.get("where") is not None and tree.args["where"].find(exp.AggFunc):
        raise NotDeltaSql("an aggregate in WHERE")
    return calls


def _join_plan(tree: exp.Select, occurrences: list[Occurrence], catalog: Catalog) -> DeltaSqlPlan:
    """A view without aggregation: its changes are the terms' rows (its columns and weights)."""
    if tree.args.get("limit") is not None:
        raise NotDeltaSql("ORDER BY … LIMIT over a join without aggregation (the top rows need the join kept)")
    columns = [e.copy() for e in tree.expressions]
    return DeltaSqlPlan(_tables(occurrences), tuple(occurrences), _terms(tree, occurrences, columns, catalog), 0, None, (), None, None, None)


def _aggregate_plan(tree: exp.Select, occurrences: list[Occurrence], groups: list[exp.Expression],
                    calls: list[exp.AggFunc], catalog: Catalog) -> DeltaSqlPlan:
    arguments: list[exp.Expression] = []
    aggregates = []
    for call in calls:
        argument = None if isinstance(call, exp.Count) and isinstance(call.this, exp.Star) else call.this
        kind = "count_rows" if argument is None else type(call).__name__.lower()
        if argument is not None:
            arguments.append(argument)
        aggregates.append(RingAggregate(kind, None if argument is None else len(arguments) - 1, call.sql("spark")))
    columns = [g.copy().as_(f"{GROUP}{i}") for i, g in enumerate(groups)]
    columns += [a.copy().as_(f"{ARGUMENT}{j}") for j, a in enumerate(arguments)]
    terms = _terms(tree, occurrences, columns, catalog)

    def over_state(node: exp.Expression) -> exp.Expression:
        """``node`` over the aggregate state's named values instead of the joined rows."""
        def replace(part: exp.Expression) -> exp.Expression:
            for j, call in enumerate(calls):
                if part == call:
                    return exp.column(f"{AGGREGATE_REF}{j}")
            for i, group in enumerate(groups):
                if part == group:
                    return exp.column(f"{GROUP_REF}{i}")
            if isinstance(part, exp.Column):
                raise NotDeltaSql(f"column {part.sql('spark')} is neither grouped nor aggregated")
            return part
        return node.copy().transform(replace)

    select = tuple(over_state(e).sql("spark") for e in tree.expressions)
    having = tree.args.get("having")
    order, limit = _top(tree)
    return DeltaSqlPlan(_tables(occurrences), tuple(occurrences), terms, len(groups), tuple(aggregates), select,
                        None if having is None else over_state(having.this).sql("spark"), order, limit)


def _top(tree: exp.Select) -> tuple[str | None, int | None]:
    """ORDER BY … LIMIT as SQL over the result's columns (a top-k), or (None, None) without LIMIT."""
    limit = tree.args.get("limit")
    if limit is None:
        return None, None
    names = [e.alias_or_name for e in tree.expressions]
    for column in tree.args["order"].find_all(exp.Column):
        if column.table or column.name not in names:
            raise NotDeltaSql(f"ORDER BY {column.sql('spark')} is not a column of the result")
    count = limit.expression
    if not isinstance(count, exp.Literal) or not count.is_int:
        raise NotDeltaSql(f"LIMIT {count.sql('spark')} is not an integer")
    return ", ".join(o.sql("spark") for o in tree.args["order"].expressions), int(count.this)


def _terms(tree: exp.Select, occurrences: list[Occurrence], columns: list[exp.Expression],
           catalog: Catalog) -> tuple[DeltaTerm, ...]:
    """The delta terms: each joins from its changed occurrence outwards (``_join_order``); occurrences
    before the changed one are read after the batch, those after it before (the delta rule)."""
    aliases = [o.alias for o in occurrences]
    where = tree.args.get("where")
    conjuncts = [*_conjuncts(where.this if where is not None else None),
                 *(c for join in tree.args.get("joins") or [] for c in _conjuncts(join.args.get("on")))]
    own: dict[str, list[exp.Expression]] = {alias: [] for alias in aliases}
    shared: list[tuple[set[str], exp.Expression]] = []
    for conjunct in conjuncts:
        used = {c.table for c in conjunct.find_all(exp.Column)}
        if len(used) > 1:
            shared.append((used, conjunct))
        else:
            own[next(iter(used)) if used else aliases[0]].append(conjunct)
    selected = tuple(_renamed(c).sql("spark") for c in columns)
    terms = []
    for i in range(len(occurrences)):
        steps, joined, pending = [], set(), list(shared)
        for j in _join_order(i, occurrences, shared, catalog):
            joined.add(aliases[j])
            ready = [c for used, c in pending if used <= joined]
            pending = [(used, c) for used, c in pending if not used <= joined]
            if steps and not ready:
                raise NotDeltaSql(f"table {occurrences[j].table} joins the others on no condition of two tables (a cross join)")
            kind = "new" if j < i else "delta" if j == i else "old"
            steps.append(JoinStep(j, kind, _sql(own[aliases[j]]), _sql(ready) if steps else None))
        terms.append(DeltaTerm(tuple(steps), (*selected, f"{renamed(aliases[i], OP)} AS {WEIGHT}")))
    return tuple(terms)


def _join_order(start: int, occurrences: list[Occurrence], shared: list[tuple[set[str], exp.Expression]],
                catalog: Catalog) -> list[int]:
    """Occurrence indexes from ``start`` outwards. Each next one shares a condition with those before;
    among them the one that grows the rows least (``_growth``: a lookup by its whole primary key, then
    a fan-out along a foreign key into a key already joined, then any other), the first in FROM order
    on a tie. Refuses occurrences no condition reaches (a cross product)."""
    aliases = [o.alias for o in occurrences]
    order = [start]
    while len(order) < len(aliases):
        joined = {aliases[j] for j in order}
        candidates = [j for j in range(len(aliases)) if j not in order
                      and any(aliases[j] in used and used & joined for used, _ in shared)]
        if not candidates:
            missing = ", ".join(aliases[j] for j in range(len(aliases)) if j not in order)
            raise NotDeltaSql(f"{missing} joined on no condition (a cross product)")
        order.append(min(candidates, key=lambda j: (_growth(j, order, occurrences, shared, catalog), j)))
    return order


def _growth(j: int, order: list[int], occurrences: list[Occurrence], shared: list[tuple[set[str], exp.Expression]],
            catalog: Catalog) -> int:
    """0: joining occurrence ``j`` binds its whole primary key (at most one row per row so far); 1: it
    binds an occurrence's key already joined (a fan-out along a foreign key); 2: anything else."""
    alias = occurrences[j].alias
    joined = {occurrences[k].alias: k for k in order}
    bound: dict[str, set[str]] = {}
    for _, condition in shared:
        if isinstance(condition, exp.EQ) and isinstance(condition.this, exp.Column) \
                and isinstance(condition.expression, exp.Column):
            left, right = condition.this, condition.expression
            for own, other in ((left, right), (right, left)):
                if own.table == alias and other.table in joined:
                    bound.setdefault(alias, set()).add(own.name)
                    bound.setdefault(other.table, set()).add(other.name)
    if set(catalog.table(occurrences[j].table).primary_key) <= bound.get(alias, set()):
        return 0
    if any(set(catalog.table(occurrences[k].table).primary_key) <= bound.get(a, set()) for a, k in joined.items()):
        return 1
    return 2


def _conjuncts(condition: exp.Expression | None) -> list[exp.Expression]:
    if condition is None:
        return []
    return list(condition.flatten()) if isinstance(condition, exp.And) else [condition]


def _renamed(node: exp.Expression) -> exp.Expression:
    """``node`` over the terms' renamed columns (``alias.column`` → ``alias__column``)."""
    def rename(part: exp.Expression) -> exp.Expression:
        if isinstance(part, exp.Column) and part.table:
            return exp.column(renamed(part.table, part.name))
        return part
    return node.copy().transform(rename)


def _sql(conjuncts: list[exp.Expression]) -> str | None:
    if not conjuncts:
        return None
    return " AND ".join(f"({_renamed(c).sql('spark')})" for c in conjuncts)


def _tables(occurrences: list[Occurrence]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(o.table for o in occurrences))


def _refuse_unchecked_tables(names: list[str], catalog: Catalog) -> None:
    """Refuse a table whose rules the delta strategy's validation does not check (it checks a primary
    key's set semantics only)."""
    for table in (catalog.table(name) for name in dict.fromkeys(names)):
        if not table.primary_key:
            raise NotDeltaSql(f"table {table.name} has no primary key")
        if table.functional_dependencies or table.static or table.insert_only:
            raise NotDeltaSql(f"table {table.name} declares ivm.static, ivm.insert_only or functional dependencies")
