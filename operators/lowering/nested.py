"""Lower a ``NestedAggregate`` (RPAI) to keyed stages; ``operators/stages/nested/`` has one module per strategy.

Equality-correlated parts are keyed by the correlation key and scale out; the global index stages
(rpai_tree, the PAI map's index, the general algorithm, the final sum) are keyed by a constant and
do not: EXPLAIN says so.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable

import attrs

from catalog.literals import sql_literal
from catalog.types import DATE, TIMESTAMP, TIMESTAMP_NTZ, DataType
from operators.lowering.builder import Emitter, LoweredQuery, LoweringError, StageBuilder, finish_function
from operators.lowering.expr_eval import compile_expr, compile_predicate
from operators.runtime.dataflow import RowRequirement
from operators.stages.base import StageDescription
from operators.stages.nested.general import CorrelatedMaps, GeneralNestedStage, ParameterizedIndex
from operators.stages.nested.pai_map import AggregateIndexStage, CorrelationGroupStage
from operators.stages.nested.per_key_index import PerKeyIndexStage, SumVectorsStage
from operators.stages.nested.rpai_tree import RpaiTreeStage
from operators.stages.nested.sums import RequiredSums, ScalarAggregate
from operators.structures.aggregate_index import PrefixAggregateIndex
from operators.zset import Row
from planner.ir.expressions import Call, Column, Expr, columns, transform, type_of
from planner.ir.logical import Project
from planner.ir.maintenance import (
    Atom,
    Correlation,
    ForeignKeyJoin,
    NestedAggregate,
    ParameterizedAggregate,
    SubqueryAggregate,
    fed_as_number,
)
from planner.ir.notation import print_expr
from planner.ir.timestamps import epoch_micros, from_epoch_micros

AGG = {Column(None, "_agg"): 0}


def _tuple_of(positions: tuple[int, ...]) -> Callable[[Row], tuple]:
    return lambda row: tuple(row[p] for p in positions)


def _table_layout(builder: StageBuilder, table: str, alias: str) -> dict[Column, int]:
    return {Column(alias, c): i for i, c in enumerate(builder.catalog.table(table).column_names)}


def _scalar(builder: StageBuilder, q: SubqueryAggregate, nested: NestedAggregate) -> ScalarAggregate:
    if q.func == "value":
        # The fed query emits its one row as -old/+new from its row over empty input on (its start
        # output, sent here in the dataflow's start step), so its value is Σ value·weight, of the
        # value as a number (a date or timestamp travels as its day or microsecond count).
        to_number, from_number = _as_number(_fed_type(nested, q))
        value = compile_expr(q.value, AGG)
        return ScalarAggregate("sum", lambda row: None if row[0] is None else to_number(row[0]),
                               lambda row: value((None if row[0] is None else from_number(row[0]),)))
    layout = _table_layout(builder, q.table, q.alias)
    argument = None if q.argument is None else compile_expr(q.argument, layout)
    return ScalarAggregate(q.func, argument, compile_expr(q.value, AGG))


def _fed_type(nested: NestedAggregate, q: SubqueryAggregate) -> DataType | None:
    """The type of the value the query feeding ``q`` emits (its select list's one expression)."""
    fed = [s.alias for s in nested.subqueries if isinstance(s, SubqueryAggregate) and s.func == "value"]
    plan = nested.feeds[fed.index(q.alias)]
    return type_of(plan.items[0].expr) if isinstance(plan, Project) and len(plan.items) == 1 else None


def _as_number(dtype: DataType | None) -> tuple[Callable[[object], object], Callable[[object], object]]:
    """(to, from) a number that sums exactly: a timestamp as microseconds since the epoch, a date as
    its day number, a number as itself (``fed_as_number`` says which types the rule feeds)."""
    if dtype == TIMESTAMP:
        return epoch_micros, from_epoch_micros
    if dtype == TIMESTAMP_NTZ:  # a naive datetime: the same count, read as if in UTC
        return (lambda v: epoch_micros(v.replace(tzinfo=datetime.UTC)),
                lambda n: from_epoch_micros(n).replace(tzinfo=None))
    if dtype == DATE:
        return datetime.date.toordinal, datetime.date.fromordinal
    if fed_as_number(dtype):
        return _same, _same
    raise LoweringError(f"NestedAggregate: a fed value of type {dtype} has no sum (the rule feeds numbers, dates "
                        "and timestamps only)")


def _same(value: object) -> object:
    return value


def _route_subquery(builder: StageBuilder, q: SubqueryAggregate | ParameterizedAggregate, stage: int, port: int,
                    fed: dict[str, LoweredQuery] | None = None) -> None:
    """A subquery's input rows to ``stage``: its table's rows, or a fed query's result rows."""
    if isinstance(q, ParameterizedAggregate):
        q = q.aggregate  # its prefix aggregate reads the same rows (the rule checked it)
    if q.func == "value":
        builder.downstream[fed[q.alias].last] = (stage, port)
        return
    columns_all = builder.catalog.table(q.table).column_names
    builder.route(Atom(q.table, q.alias, columns_all, q.where), columns_all, stage, port)


def _lower_feeds(builder: StageBuilder, nested: NestedAggregate) -> dict[str, LoweredQuery]:
    """Lower the queries feeding values first (stages stay in topological order): alias → the lowered query."""
    fed_subqueries = [q for q in nested.subqueries if isinstance(q, SubqueryAggregate) and q.func == "value"]
    return {q.alias: builder.lower_scalar(plan, f"the subquery feeding {q.alias}")
            for q, plan in zip(fed_subqueries, nested.feeds, strict=True)}


def _prefix_index(builder: StageBuilder, table: str, layout: dict[Column, int], where: Expr | None,
                  correlation: Correlation, argument: Expr | None) -> PrefixAggregateIndex:
    """The rows of ``table`` passing ``where`` indexed by their prefix aggregate along ``correlation``.

    The keys are prefix sums of ``argument``, which must grow with every row (§3.2.4's monotone
    keys): the validator rejects an inserted row whose ``argument`` is not positive, before any
    stage runs. COUNT (no argument) adds 1 per row."""
    index = PrefixAggregateIndex(compile_expr(correlation.inner, layout), correlation.op,
                                 None if argument is None else compile_expr(argument, layout), table)
    if argument is not None:
        builder.requirements.append(RowRequirement(table, _positive(layout, where, argument)))
    return index


def _positive(layout: dict[Column, int], where: Expr | None, argument: Expr):
    """What is wrong with a row passing ``where`` whose ``argument`` is not positive and finite (None: nothing)."""
    amount, passes = compile_expr(argument, layout), compile_predicate(where, layout)
    shown = transform(argument, lambda e: Column(None, e.name) if isinstance(e, Column) else e)

    def violation(row) -> str | None:
        if passes is not None and not passes(row):
            return None
        value = amount(row)
        if value is not None and value > 0 and value - value == 0:  # not NaN, not Infinity (above every number)
            return None
        return (f"{shown} is {sql_literal(value)}, but the RPAI tree maintaining this query sums it by prefix "
                "and needs it positive and finite on every row (RPAI §3)")

    return violation


@attrs.frozen
class _Given:
    """What each strategy builds its stages from: the nested aggregate, the outer join and its lowered
    root, the outer aggregates as required sums, the select list over a result row and the result's
    column names, and the lowered queries feeding subquery values (by alias)."""

    nested: NestedAggregate
    join: ForeignKeyJoin
    root: Emitter
    sums: RequiredSums
    finish: Callable[[Row], Row | None]
    names: tuple[str, ...]
    fed: dict[str, LoweredQuery]


def lower_nested(builder: StageBuilder, nested: NestedAggregate, items: tuple | None, having: Expr | None,
                 join: ForeignKeyJoin, root: Emitter) -> tuple[int, tuple[Column, ...]]:
    """Add the stages of ``nested`` (a ``having`` above it drops the result rows it rejects, as a
    grouped aggregate's); return (last stage, output layout)."""
    if join.residual is not None:
        raise LoweringError(f"NestedAggregate[{nested.strategy}]: the join below it has a condition beside its foreign-key "
                            f"equalities ({print_expr(join.residual)}), which the nested-aggregate stages do not apply")
    layout = {c: i for i, c in enumerate(root.layout)}
    agg_layout = nested.output
    output_layout = tuple(Column(None, i.name) for i in items) if items is not None else agg_layout
    sums = RequiredSums(
        tuple(item.expr.func for item in nested.aggregates),
        tuple(None if item.expr.arg is None else compile_expr(item.expr.arg, layout) for item in nested.aggregates),
    )
    finish = finish_function(items, having, agg_layout, hold=True)
    names = tuple(c.name for c in output_layout)
    lowering = {
        "rpai_tree": _rpai_tree, "pai_map": _pai_map, "per_key_index": _per_key_index, "general": _general,
    }[nested.strategy]
    last = lowering(builder, _Given(nested, join, root, sums, finish, names, _lower_feeds(builder, nested)))
    return last, output_layout


def _group_function(nested: NestedAggregate, layout: dict[Column, int]) -> Callable[[Row], tuple]:
    """The outer row's group-by values as a tuple (``()`` without GROUP BY)."""
    parts = tuple(compile_expr(g.expr, layout) for g in nested.group_by)
    return lambda row: tuple(part(row) for part in parts)


def _split(nested: NestedAggregate) -> tuple[Expr, str, int]:
    """``value op _s<k>`` → (value, op, k)."""
    match nested.predicate:
        case Call(op=op, args=(value, Column(table=None, name=name))):
            return value, op, int(name[2:])
    raise LoweringError(f"NestedAggregate[{nested.strategy}]: the strategy needs a predicate 'value op subquery', "
                         f"not {print_expr(nested.predicate)}")


def _uncorrelated(builder: StageBuilder, nested: NestedAggregate, k: int, value: Expr):
    """The uncorrelated subqueries (all but k) and ``value`` compiled over their values."""
    others = [i for i in range(len(nested.subqueries)) if i != k]
    compiled = compile_expr(value, {Column(None, f"_s{i}"): n for n, i in enumerate(others)})
    return others, tuple(_scalar(builder, nested.subqueries[i], nested) for i in others), compiled


def _rpai_tree(builder: StageBuilder, given: _Given) -> int:
    """One RPAI tree stage over the outer relation, which is also q's (VWAP): q shifts by prefix."""
    nested, join, sums, fed = given.nested, given.join, given.sums, given.fed
    value, op, k = _split(nested)
    q = nested.subqueries[k]
    (correlation,) = q.correlations
    others, uncorrelated, v = _uncorrelated(builder, nested, k, value)
    atom = join.atom(join.root)
    table = builder.catalog.table(atom.table)
    outer = {**_table_layout(builder, atom.table, q.alias), **_table_layout(builder, atom.table, atom.alias)}
    # The outer rows are also the inner rows: route whole rows so q's argument can be read too.
    row_sums = RequiredSums(sums.funcs, tuple(
        None if item.expr.arg is None else compile_expr(item.expr.arg, outer) for item in nested.aggregates))
    index = _prefix_index(builder, table.name, outer, atom.predicate, correlation, q.argument)
    stage = builder.add(RpaiTreeStage(
        f"RPAI tree on {q.table}.{correlation.inner.name}", index, row_sums, v, op, uncorrelated, given.finish, given.names,
        StageDescription(operator="NestedAggregate[rpai_tree] (RPAI tree)",
                         inputs=f"{table.name} rows",
                         state=f"RPAI trees: {correlation.inner.name} → Σ {q.func}; q → required sums",
                         key="constant (does not scale out)",
                         update_cost=nested.update_costs[0],
                         why=f"q = {q.func.upper()} correlated by one inequality on {correlation.inner.name}: "
                             "inserting a row shifts the q of all later groups by the same amount (RPAI §2.2.3, §3)"),
        _group_function(nested, outer) if nested.group_by else None,
    ))
    builder.route(Atom(atom.table, atom.alias, table.column_names, atom.predicate), table.column_names, stage, 0)
    for port, i in enumerate(others, start=1):
        _route_subquery(builder, nested.subqueries[i], stage, port, fed)
    return stage


def _correlation_keys(builder: StageBuilder, q: SubqueryAggregate, layout: dict[Column, int]):
    # an uncorrelated q (a global threshold) is keyed by a constant; a fed query has no table to read
    inner_layout = _table_layout(builder, q.table, q.alias) if q.correlations else {}
    outer_key = _tuple_of(tuple(layout[c.outer] for c in q.correlations))
    inner_key = _tuple_of(tuple(inner_layout[c.inner] for c in q.correlations))
    return outer_key, inner_key, ", ".join(f"{c.inner} = {c.outer}" for c in q.correlations)


def _pai_map(builder: StageBuilder, given: _Given) -> int:
    """Correlation groups keyed by the correlation key, then the PAI map moving each group's sums."""
    nested, root, sums, fed = given.nested, given.root, given.sums, given.fed
    value, op, k = _split(nested)
    q = nested.subqueries[k]
    others, uncorrelated, v = _uncorrelated(builder, nested, k, value)
    layout = {c: i for i, c in enumerate(root.layout)}
    outer_key, inner_key, key_text = _correlation_keys(builder, q, layout)
    grouped = " per GROUP BY group" if nested.group_by else ""
    group = builder.add(CorrelationGroupStage(
        "correlation groups", outer_key, inner_key, _scalar(builder, q, nested), sums, _group_function(nested, layout),
        ("q",) + given.names,
        StageDescription(operator="NestedAggregate[pai_map] groups",
                         state=f"per key: q's Σ and count, the required sums{grouped}",
                         key=key_text,
                         update_cost=nested.update_costs[0],
                         why="equality correlation: an update changes one group's q"),
    ))
    root.connect(builder, group, 0)
    _route_subquery(builder, q, group, 1)
    index = builder.add(AggregateIndexStage(
        "PAI map", sums, v, op, uncorrelated, given.finish, given.names,
        StageDescription(operator="NestedAggregate[pai_map] (PAI map)",
                         state="aggregate index: q → required sums "
                               + ("(hash map)" if op == "=" else "(RPAI tree for the range)") + grouped,
                         key="constant (does not scale out)",
                         update_cost=nested.update_costs[1],
                         why="a group's sums move from its old q to its new q (RPAI §2.1.3)"),
        len(nested.group_by),
    ))
    builder.downstream[group] = (index, 0)
    for port, i in enumerate(others, start=1):
        _route_subquery(builder, nested.subqueries[i], index, port, fed)
    return index


def _per_key_index(builder: StageBuilder, given: _Given) -> int:
    """Per correlation key the outer rows indexed by v, then each key's contribution summed per group."""
    nested, root, sums, fed = given.nested, given.root, given.sums, given.fed
    value, op, k = _split(nested)
    q = nested.subqueries[k]
    layout = {c: i for i, c in enumerate(root.layout)}
    outer_key, inner_key, key_text = _correlation_keys(builder, q, layout)
    keyed = builder.add(PerKeyIndexStage(
        "per-key index", outer_key, inner_key, compile_expr(value, layout), op, _scalar(builder, q, nested), sums,
        _group_function(nested, layout), given.names,
        StageDescription(operator="NestedAggregate[per_key_index] (join-select-aggregate, AJU Theorem 15)",
                         state="per key and group: q's Σ and count; RPAI trees v → required sums",
                         key=key_text or "constant: q is a global threshold (does not scale out)",
                         update_cost=nested.update_costs[0],
                         why="q is correlated by equalities (or not at all) and compared with a per-row value v: "
                             "AJU Theorem 15's join-select-aggregate, the rows of a key in a tree by v annotated with "
                             "partial sums, so each key's contribution is one range sum per group"),
        constant_key=not key_text,
    ))
    root.connect(builder, keyed, 0)
    _route_subquery(builder, q, keyed, 1, fed)
    groups = ", ".join(g.name for g in nested.group_by)
    total = builder.add(SumVectorsStage(
        "sum of contributions", sums, len(nested.group_by), given.finish, given.names,
        StageDescription(operator="SumVectors",
                         state="per group: the required sums of its result row",
                         key=groups or "constant (does not scale out)",
                         update_cost=nested.update_costs[1],
                         why="adds each key's contribution change into its group's result"),
    ))
    builder.downstream[keyed] = (total, 0)
    return total


def _parameterized(builder: StageBuilder, q: ParameterizedAggregate, position: int,
                   nested: NestedAggregate) -> ParameterizedIndex:
    """The middle level of a two-level nesting: an RPAI tree over its rows, read at the parameter."""
    (correlation,) = q.prefix.correlations
    layout = {**_table_layout(builder, q.prefix.table, q.prefix.alias),
              **_table_layout(builder, q.aggregate.table, q.aggregate.alias)}
    index = _prefix_index(builder, q.aggregate.table, layout, q.aggregate.where, correlation, q.prefix.argument)
    earlier = {Column(None, f"_s{j}"): j for j in range(position)}
    return ParameterizedIndex(_scalar(builder, q.aggregate, nested), index, compile_expr(q.parameter, earlier), q.op)


def _general(builder: StageBuilder, given: _Given) -> int:
    """RPAI's general algorithm: one stage keyed by a constant, with free, bound and result maps."""
    nested, join, root, sums, fed = given.nested, given.join, given.root, given.sums, given.fed
    atom = join.atom(join.root)
    layout = {c: i for i, c in enumerate(root.layout)}
    placeholders = {Column(None, f"_s{i}") for i in range(len(nested.subqueries))}
    key_columns: list[Column] = sorted({c for c in columns(nested.predicate) if c not in placeholders}
                                       | {c for g in nested.group_by for c in columns(g.expr)}, key=str)
    for q in nested.subqueries:
        if isinstance(q, SubqueryAggregate) and q.correlation is not None:
            if q.alias == atom.alias:
                raise LoweringError(f"NestedAggregate[general]: the subquery over {q.table} reuses the outer alias {q.alias}; "
                                   "rename one of them")
            key_columns += sorted({c for c in columns(q.correlation) if c.table == atom.alias} - set(key_columns), key=str)
    key_index = {c: i for i, c in enumerate(key_columns)}
    specs = []
    two_levels = nested.two_levels
    for q in nested.subqueries:
        if isinstance(q, ParameterizedAggregate):
            specs.append(_parameterized(builder, q, len(specs), nested))
            continue
        if q.correlation is None:
            specs.append(_scalar(builder, q, nested))
            continue
        equalities = bool(q.correlations) and all(c.op == "=" for c in q.correlations)
        if equalities:  # pairwise aligned, so that bound values look up the equal free key
            free, bound = [c.outer for c in q.correlations], [c.inner for c in q.correlations]
        else:
            free = sorted({c for c in columns(q.correlation) if c.table == atom.alias}, key=str)
            bound = sorted({c for c in columns(q.correlation) if c.table == q.alias}, key=str)
        inner_layout = _table_layout(builder, q.table, q.alias)
        both = {c: n for n, c in enumerate(free + bound)}
        specs.append(CorrelatedMaps(
            _scalar(builder, q, nested), _tuple_of(tuple(key_index[c] for c in free)),
            _tuple_of(tuple(inner_layout[c] for c in bound)), compile_expr(q.correlation, both), equalities))
    predicate_layout = {**key_index, **{Column(None, f"_s{i}"): len(key_columns) + i for i in range(len(specs))}}
    stage = builder.add(GeneralNestedStage(
        "general nested aggregate", _tuple_of(tuple(layout[c] for c in key_columns)), tuple(specs),
        compile_expr(nested.predicate, predicate_layout), sums, _group_function(nested, key_index), given.finish, given.names,
        StageDescription(operator="NestedAggregate[general] (RPAI §4.2)",
                         state="free, bound and result maps"
                               + ("; an RPAI tree per subquery nested two levels" if two_levels else ""),
                         key="constant (does not scale out)",
                         update_cost=nested.update_costs[0],
                         why="no aggregate index applies (see 'Not applied'); still avoids O(n²) recomputation"
                             + (" (O(n³) for two levels)" if two_levels else "")),
        grouped=bool(nested.group_by),
    ))
    root.connect(builder, stage, 0)
    for port, q in enumerate(nested.subqueries, start=1):
        _route_subquery(builder, q, stage, port, fed)
    return stage
