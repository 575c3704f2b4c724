"""Maintenance-plan nodes: what the strategy rules rewrite logical plans into.

They are plan nodes like the logical ones (frozen, printed in the plan notation), but each stands
for an incremental operator with a known update cost:

- ``Atom``: one copy of a base table, with the selection pushed into it (AJU §2.3 drops updates
  that fail it) and only the columns the query uses.
- ``JoinGraph``: a flattened inner join of atoms; equality conjuncts grouped into equi-join variable
  classes, the rest kept as conditions. Normalization produces it; strategies consume it.
- ``ForeignKeyJoin``: a foreign-key-acyclic join maintained with live tuples (AJU §3.1, §3.3):
  ``root`` is the relation of in-degree 0, ``edges`` the foreign-key graph of the query. It owns
  the facts derived from them (assertion keys, auxiliary attributes, Theorem 11's tree).
- ``JoinSelect`` (on a ``ForeignKeyJoin``): a comparison between a referencing relation and the
  keyed view it joins, maintained with the view's value as a pointer (AJU Theorem 15).
- ``RingAggregate``: GROUP BY with SUM/COUNT/AVG maintained as ring aggregates (AJU Thm 14).
- ``TopK``: ORDER BY ... LIMIT k maintained under deletes from an ordered multiset of the result
  (only the k best rows over insert-only input).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from types import MappingProxyType

import attrs

from catalog.types import DATE, TIMESTAMPS, DataType, is_numeric
from planner.ir import fk_graph
from planner.ir.expressions import Column, Expr
from planner.ir.fk_graph import FkEdge
from planner.ir.guarantee import Guarantee
from planner.ir.logical import (
    Filter,
    LogicalPlan,
    NamedExpr,
    Project,
    SetOperation,
    SortKey,
    SubqueryAlias,
    grouped_output,
)
from planner.ir.notation import notation_value

#: A live-tuple stage's cost (AJU §3.3): a tuple is filed in O(1); when the child it waits on turns
#: (non-)live its whole group follows, which amortizes to O(λ) (Theorem 11's bound).
LIVE_TUPLE_COST = "O(1) per tuple; O(group) when the child turns (non-)live: O(λ) amortized"
#: The strategies of ``NestedAggregate`` as EXPLAIN names them.
NESTED = {"rpai_tree": "RPAI tree", "pai_map": "PAI map", "per_key_index": "per-key RPAI trees (AJU Thm 15)",
          "general": "RPAI's general algorithm"}
#: The aggregates a group keeps its values of in order (operators/stages/aggregate.py): O(log n) per change.
ORDERED_AGGREGATES = ("min", "max", "min_by", "max_by", "median", "percentile", "percentile_cont", "percentile_disc")
#: The trees of ``ChangePropagationJoin`` as EXPLAIN names them.
PROPAGATION = {"theorem11": "change propagation over AJU Theorem 11's join tree",
               "forced": "change propagation over a forced join order",
               "fallback": "general fallback: change propagation over binary delta joins"}


@attrs.frozen
class Atom(LogicalPlan):
    maintained = True
    table: str
    alias: str
    columns: tuple[str, ...]
    predicate: Expr | None = None

    @property
    def output(self) -> tuple[Column, ...]:
        return tuple(Column(self.alias, c) for c in self.columns)


@attrs.frozen
class ViewAtom(LogicalPlan):
    """A relation maintained by its own subplan and joined like a table whose primary key is ``key``.

    Decorrelated EXISTS/IN subqueries become views grouped by their correlation columns, so the join
    back is a join on the view's key: a foreign-key join (AJU §5). ``anti`` (NOT EXISTS/NOT IN): an
    outer tuple qualifies when no view row has its key, and the view contributes no columns.

    ``key`` None: the view's rows have no key, a bag like a table without a primary key (a derived
    table of window functions or of a set operation, rules/derived_rows.py); joined by the
    materializing fallback, never referenced along a foreign key.
    """

    child_fields = ("child",)
    maintained = True
    alias: str
    key: tuple[str, ...] | None
    columns: tuple[str, ...]
    anti: bool
    child: LogicalPlan
    #: optional: an outer tuple with no view row stays, its view columns NULL (a left outer lookup)
    optional: bool = False
    #: what EXPLAIN's ``Subquery:`` line says of the subquery this view decorrelates (its strategy and
    #: per-update cost), where that is more than a join on the view's key
    note: str | None = None

    @property
    def output(self) -> tuple[Column, ...]:
        return () if self.anti else tuple(Column(self.alias, c) for c in self.columns)

    @property
    def rows(self) -> tuple[Column, ...]:
        """The columns of the rows the subplan emits (also for an anti view)."""
        return tuple(Column(self.alias, c) for c in self.columns)

    @property
    def computes(self) -> str:
        """What computes a keyless view's rows: ``window`` or its set operation (``UNION ALL``), the first
        of them under its derived table's filters, aliases and select list."""
        found = self.child
        while isinstance(found, Filter | SubqueryAlias | Project):
            found = found.child
        return found.kind.replace("_", " ").upper() if isinstance(found, SetOperation) else "window"

    def own_guarantee(self) -> Guarantee:
        if self.key is not None:
            return Guarantee()
        # its stages' costs are its subplan's; each changed row then costs what a change costs above
        return Guarantee.stated(f"derived table {self.alias} ({self.computes}) read as a relation fed by its row changes")


@attrs.frozen
class JoinGraph(LogicalPlan):
    child_fields = ("atoms",)
    atoms: tuple[LogicalPlan, ...]
    conditions: tuple[Expr, ...] = ()
    join_classes: tuple[tuple[Column, ...], ...] = ()
    #: atoms a LEFT OUTER JOIN preserves: their tuples without a partner appear padded with NULLs
    preserved: tuple[str, ...] = ()

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return tuple(col for atom in self.atoms for col in atom.output)


@notation_value
@attrs.frozen
class JoinSelect:
    """AJU Theorem 15's join-select on the edge from ``row``'s relation into the keyed view of ``value``:
    a tuple joins the view's row of its key only where ``row op value`` (x3 θ x2) holds. The view
    then contributes only its key columns to the join (its other columns move with the pointer)."""

    row: Column
    op: str
    value: Column


@attrs.frozen
class ForeignKeyJoin(LogicalPlan):
    child_fields = ("atoms",)
    maintained = True
    root: str
    edges: tuple[FkEdge, ...]
    residual: Expr | None
    atoms: tuple[LogicalPlan, ...]
    #: atoms a LEFT OUTER JOIN preserves: their tuples without a partner appear padded with NULLs
    preserved: tuple[str, ...] = ()
    join_selects: tuple[JoinSelect, ...] = ()

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        # a view under a join-select passes on its key only: its value is the pointer (rules/join_select.py)
        pointing = {s.value.table for s in self.join_selects}
        return tuple(col for atom in self.atoms for col in atom.output
                     if col.table not in pointing or col.name in self.atom(col.table).key)

    def own_guarantee(self) -> Guarantee:
        if not self.edges:  # no join: each change goes on to the operators above
            return Guarantee.stated(cost="O(1)", alone=(self.root,))
        selects = ("join-select (AJU Thm 15)",) if self.join_selects else ()
        return Guarantee.stated(f"AJU live tuples over the foreign-key tree rooted at {self.root}", *selects,
                                cost=LIVE_TUPLE_COST + ("; O(log n + rows that flip) when a view's value changes"
                                                        if selects else ""))

    def atom(self, alias: str) -> Atom | ViewAtom:
        for atom in self.atoms:
            if isinstance(atom, Atom | ViewAtom) and atom.alias == alias:
                return atom
        raise KeyError(alias)

    def children_of(self, alias: str) -> tuple[FkEdge, ...]:
        """Edges leaving ``alias``: the relations its tuples must find alive (AJU's C(R))."""
        return tuple(e for e in self.edges if e.referencing == alias)

    def parents_of(self, alias: str) -> tuple[FkEdge, ...]:
        return tuple(e for e in self.edges if e.referenced == alias)

    def join_select_into(self, alias: str) -> JoinSelect | None:
        """The join-select whose keyed view is ``alias``, if any (its one edge in is the join-select's)."""
        return next((s for s in self.join_selects if s.value.table == alias), None)

    # The facts below are pure functions of the fields, so they are cached properties, not fields: a
    # node parsed from the plan notation or copied by ``attrs.evolve`` derives them again, never stale,
    # and the notation (which prints fields) does not show them.

    @functools.cached_property
    def assertion_keys(self) -> Mapping[str, tuple[str, ...]]:
        """For each relation, the relations whose primary key is an assertion key of it (AJU §3.2)."""
        return MappingProxyType(fk_graph.assertion_keys(self.edges))

    @functools.cached_property
    def auxiliary_attributes(self) -> Mapping[str, tuple[str, ...]]:
        """The fewest auxiliary attributes satisfying AJU Condition 5: relation → descendants whose key it gets."""
        return MappingProxyType(fk_graph.auxiliary_attributes(self.edges))

    @functools.cached_property
    def theorem11_tree(self) -> LogicalPlan:
        """AJU Theorem 11's change-propagation tree for this join (AJU §3.5): a leaf's view is the
        relation; a non-leaf R's view joins R with its children's views left-deep, along each foreign
        key and, in a DAG, also on the keys of the descendants two children share."""
        return self._theorem11_view(self.root)[0]

    def _theorem11_view(self, alias: str) -> tuple[LogicalPlan, tuple[Column, ...]]:
        """``alias``'s view in Theorem 11's tree and its output columns (those of its atoms, in order)."""
        atom = self.atom(alias)
        tree: LogicalPlan = atom
        output = atom.output
        for edge in self.children_of(alias):
            child, child_output = self._theorem11_view(edge.referenced)
            on = tuple((Column(alias, c), Column(edge.referenced, k)) for c, k in zip(edge.columns, edge.key, strict=True))
            shared = fk_graph.natural_pairs(output, child_output, ())
            tree = BinaryJoin(on + tuple(p for p in shared if p not in on), tree, child)
            output += child_output
        return tree, output


@attrs.frozen
class RingAggregate(LogicalPlan):
    child_fields = ("child",)
    maintained = having_applies = True
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return grouped_output(self.group_by, self.aggregates)

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost="O(1) per join change")  # a ring: a delete subtracts its insert (AJU Thm 14)


@attrs.frozen
class TopK(LogicalPlan):
    child_fields = ("child",)
    maintained = True
    keys: tuple[SortKey, ...]
    count: int
    child: LogicalPlan
    #: the insert-only tables (Olteanu §4.6) the child's rows come from, when nothing between them and
    #: the top-k can retract a row (rules/insert_only.py): then only the k best rows are kept
    insert_only: tuple[str, ...] = ()

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output

    @property
    def update_cost(self) -> str:
        """Over insert-only input only the k best rows are kept; else every row, in order."""
        if self.insert_only:
            return "O(1) per insert not among the k best, O(log k + k) per one that enters; O(k) per batch"
        return "O(log n + k) per batch"

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost=self.update_cost)


@notation_value
@attrs.frozen
class Correlation:
    """One correlation predicate of a nested aggregate, read as ``inner op outer``."""

    inner: Column
    op: str
    outer: Column


def fed_as_number(dtype: DataType | None) -> bool:
    """Whether a value of ``dtype`` can feed a ``NestedAggregate``: the stages keep a fed value as
    Σ value·weight over its query's -old/+new rows, which needs a number, or something that travels
    as one (a date as its day number, a timestamp as microseconds: operators/lowering/nested.py)."""
    return dtype is None or is_numeric(dtype) or dtype == DATE or dtype in TIMESTAMPS


@notation_value
@attrs.frozen
class SubqueryAggregate:
    """A scalar aggregate subquery over one relation: ``value`` of ``func(argument)`` over the rows of
    ``table`` that pass ``where`` (inner columns only) and ``correlation`` (the conjuncts that read
    the outer row; None: uncorrelated). ``correlations`` is ``correlation`` parsed into
    ``inner op outer`` comparisons when every conjunct has that form, else empty. ``value`` reads
    the aggregate as the column ``_agg`` (e.g. ``0.2 * _agg`` in TPC-H Q17)."""

    table: str
    alias: str
    func: str
    argument: Expr | None
    where: Expr | None
    correlation: Expr | None
    correlations: tuple[Correlation, ...]
    value: Expr


@notation_value
@attrs.frozen
class ParameterizedAggregate:
    """A subquery one level down whose own WHERE compares a *parameter* with a VWAP-shaped aggregate
    (NQ2's middle level): ``aggregate``'s value over the rows r of its table with
    ``parameter op q(r)``, where ``prefix`` is q, a SUM/COUNT over the same rows correlated to r by
    one inequality on one column. ``parameter`` reads the enclosing ``NestedAggregate``'s other
    subqueries as ``_s<j>`` (hoisted there because they read only the outer rows) and constants, so
    the subquery is a function of the outer row through them. One RPAI tree keyed by q answers it
    for any parameter with one range sum (RPAI §4.2: "for multi-level nesting, apply this approach
    recursively"; §2.2.3 for the tree)."""

    aggregate: SubqueryAggregate
    parameter: Expr
    op: str
    prefix: SubqueryAggregate


@attrs.frozen
class NestedAggregate(LogicalPlan):
    """An aggregate over the ``child`` rows that satisfy ``predicate`` (RPAI §4.1 grammar).

    ``predicate`` reads each scalar subquery ``subqueries[i]`` as the column ``_s<i>``. For the
    index strategies (rpai_tree, pai_map, per_key_index: RPAI §2.1.3, §2.2.3, §4.3) it is exactly
    ``value op _s<k>`` with ``subqueries[k]`` the one correlated aggregate (for per_key_index it may
    be uncorrelated: a global threshold) and ``value`` built from constants, outer columns and
    uncorrelated aggregates; the general strategy (§4.2) takes any predicate. ``group_by`` groups
    the outer rows (one index per group). A ``ParameterizedAggregate`` (a subquery
    nested two levels) appears only under the general strategy.
    """

    child_fields = ("child", "feeds")
    variant_field = "strategy"
    maintained = having_applies = True
    strategy: str
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    predicate: Expr
    subqueries: tuple[SubqueryAggregate | ParameterizedAggregate, ...]
    child: LogicalPlan
    #: Uncorrelated subqueries too complex for one relation (NQ1's inner VWAP): maintained as queries of
    #: their own, each feeding its one value to the ``subqueries`` entry with ``func == "value"`` (in order).
    feeds: tuple[LogicalPlan, ...] = ()

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return grouped_output(self.group_by, self.aggregates)

    @property
    def two_levels(self) -> bool:
        """A subquery nested two levels (RPAI §5.2.1, NQ2): read once per distinct parameter."""
        return any(isinstance(q, ParameterizedAggregate) for q in self.subqueries)

    @property
    def update_costs(self) -> tuple[str, ...]:
        """The cost of each stage the strategy lowers to, in order (operators/lowering/nested.py)."""
        match self.strategy:
            case "rpai_tree":  # q is a prefix sum: an update shifts a range of q values
                return ("O(log n) per update (getSum + shiftKeys)",)
            case "pai_map":  # an update moves one group's q; an equality finds its sums in a hash map
                return ("O(1) per update" + (" (O(groups) when q moves)" if self.group_by else ""),
                        "O(1) per moved group" if getattr(self.predicate, "op", None) == "=" else "O(log n) per moved group")
            case "per_key_index":  # one range sum per key
                return "O(log n) per update", "O(1) per changed key and group"
        return ("O(n log n) per update" if self.two_levels else "O(n) per update",)

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(f"{NESTED[self.strategy]} for the nested aggregate", cost="; ".join(self.update_costs))


@attrs.frozen
class GroupAggregate(LogicalPlan):
    """GROUP BY with at least one aggregate that is not a ring: MIN/MAX or a DISTINCT aggregate.

    Per group it keeps each such aggregate's argument values as value → multiplicity; MIN/MAX also
    keep the distinct values sorted, so a change costs O(log n) (n: distinct values in the group),
    the others O(1) (AJU §5 Thm 14, "an ordered structure per group").

    ``insert_only`` (set by rules/insert_only.py): the insert-only tables (Olteanu §4.6) the child's
    rows come from, when nothing between them and the aggregate can retract a row; then a MIN/MAX
    only ever improves, and each group keeps just its current extreme.
    """

    child_fields = ("child",)
    maintained = having_applies = True
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    child: LogicalPlan
    insert_only: tuple[str, ...] = ()

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return grouped_output(self.group_by, self.aggregates)

    def own_guarantee(self) -> Guarantee:
        # MIN/MAX and percentiles keep their values ordered per group; insert-only MIN/MAX keep the extreme
        ordered = not self.insert_only and any(getattr(a.expr, "func", None) in ORDERED_AGGREGATES for a in self.aggregates)
        return Guarantee.stated(cost="O(log n) per join change" if ordered else "O(1) per join change")


@attrs.frozen
class CountedDistinct(LogicalPlan):
    """SELECT DISTINCT maintained by counting each result row's multiplicity: a row is in the
    result while its count is positive, so a change costs O(1)."""

    child_fields = ("child",)
    maintained = True
    child: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost="O(1) per result change")


#: A binary delta join's cost: a change meets every row of its key on the other side.
BINARY_JOIN_COST = "O(matching rows on the other side) per change"


@attrs.frozen
class BinaryJoin(LogicalPlan):
    """One join of the change-propagation framework: a materialized view ``σ_condition(left ⋈ right)``
    on ``on`` (pairs of equal columns; none: a constant key, every pair meets). Its delta is
    σ(ΔL ⋈ R + L' ⋈ ΔR)."""

    child_fields = ("left", "right")
    maintained = True
    on: tuple[tuple[Column, Column], ...]
    left: LogicalPlan
    right: LogicalPlan
    condition: Expr | None = None

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.left.output + self.right.output

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost=BINARY_JOIN_COST)


@attrs.frozen
class ChangePropagationJoin(LogicalPlan):
    """A join maintained by change propagation over a tree of binary joins with materialized views.

    ``tree_kind``: ``theorem11`` (AJU Theorem 11's tree: a view per relation joining it with its
    children's views along foreign keys, O(λ) amortized), ``forced`` (a join order given by the
    user, to compare), or ``fallback`` (any other equi-join: no guarantee, EXPLAIN says why).
    """

    child_fields = ("tree",)
    variant_field = "tree_kind"
    maintained = True
    tree_kind: str
    residual: Expr | None
    tree: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.tree.output

    def own_guarantee(self) -> Guarantee:
        # Theorem 11's tree amortizes to O(λ) per update; any other tree promises only its joins' costs
        return Guarantee.stated(PROPAGATION[self.tree_kind], cost="O(λ) amortized" if self.tree_kind == "theorem11" else "")


@attrs.frozen
class ThresholdFilter(LogicalPlan):
    """The rows of ``child`` with ``value op q``, where q is the one value of the uncorrelated plan
    ``threshold`` (TPC-H Q11's ``HAVING sum(...) > (SELECT 0.0001 * sum(...) ...)``). The rows are
    kept ordered by value, so a new q flips only the rows between the old and the new q."""

    child_fields = ("child", "threshold")
    maintained = True
    #: the rows kept ordered by value: a new q flips only the rows between the old and the new q
    update_cost = "O(log n) per row; O(log n + rows that flip) when q changes"
    value: Expr
    op: str
    child: LogicalPlan
    threshold: LogicalPlan

    @functools.cached_property
    def output(self) -> tuple[Column, ...]:
        return self.child.output

    def own_guarantee(self) -> Guarantee:
        return Guarantee.stated(cost=self.update_cost)

