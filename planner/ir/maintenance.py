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

from planner.ir import fk_graph
from planner.ir.expressions import Column, Expr
from planner.ir.fk_graph import FkEdge
from planner.ir.logical import LogicalPlan, NamedExpr, SortKey
from planner.ir.notation import notation_value


@attrs.frozen
class Atom(LogicalPlan):
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
    """

    child_fields = ("child",)
    alias: str
    key: tuple[str, ...]
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


@attrs.frozen
class JoinGraph(LogicalPlan):
    child_fields = ("atoms",)
    atoms: tuple[LogicalPlan, ...]
    conditions: tuple[Expr, ...] = ()
    join_classes: tuple[tuple[Column, ...], ...] = ()
    #: atoms a LEFT OUTER JOIN preserves: their tuples without a partner appear padded with NULLs
    preserved: tuple[str, ...] = ()


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
    root: str
    edges: tuple[FkEdge, ...]
    residual: Expr | None
    atoms: tuple[LogicalPlan, ...]
    #: atoms a LEFT OUTER JOIN preserves: their tuples without a partner appear padded with NULLs
    preserved: tuple[str, ...] = ()
    join_selects: tuple[JoinSelect, ...] = ()

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
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    child: LogicalPlan


@attrs.frozen
class TopK(LogicalPlan):
    child_fields = ("child",)
    keys: tuple[SortKey, ...]
    count: int
    child: LogicalPlan
    #: the insert-only tables (Olteanu §4.6) the child's rows come from, when nothing between them and
    #: the top-k can retract a row (rules/insert_only.py): then only the k best rows are kept
    insert_only: tuple[str, ...] = ()


@notation_value
@attrs.frozen
class Correlation:
    """One correlation predicate of a nested aggregate, read as ``inner op outer``."""

    inner: Column
    op: str
    outer: Column


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
    strategy: str
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    predicate: Expr
    subqueries: tuple[SubqueryAggregate | ParameterizedAggregate, ...]
    child: LogicalPlan
    #: Uncorrelated subqueries too complex for one relation (NQ1's inner VWAP): maintained as queries of
    #: their own, each feeding its one value to the ``subqueries`` entry with ``func == "value"`` (in order).
    feeds: tuple[LogicalPlan, ...] = ()


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
    group_by: tuple[NamedExpr, ...]
    aggregates: tuple[NamedExpr, ...]
    child: LogicalPlan
    insert_only: tuple[str, ...] = ()


@attrs.frozen
class CountedDistinct(LogicalPlan):
    """SELECT DISTINCT maintained by counting each result row's multiplicity: a row is in the
    result while its count is positive, so a change costs O(1)."""

    child_fields = ("child",)
    child: LogicalPlan


@attrs.frozen
class BinaryJoin(LogicalPlan):
    """One join of the change-propagation framework: a materialized view ``σ_condition(left ⋈ right)``
    on ``on`` (pairs of equal columns; none: a constant key, every pair meets). Its delta is
    σ(ΔL ⋈ R + L' ⋈ ΔR)."""

    child_fields = ("left", "right")
    on: tuple[tuple[Column, Column], ...]
    left: LogicalPlan
    right: LogicalPlan
    condition: Expr | None = None


@attrs.frozen
class ChangePropagationJoin(LogicalPlan):
    """A join maintained by change propagation over a tree of binary joins with materialized views.

    ``tree_kind``: ``theorem11`` (AJU Theorem 11's tree: a view per relation joining it with its
    children's views along foreign keys, O(λ) amortized), ``forced`` (a join order given by the
    user, to compare), or ``fallback`` (any other equi-join: no guarantee, EXPLAIN says why).
    """

    child_fields = ("tree",)
    variant_field = "tree_kind"
    tree_kind: str
    residual: Expr | None
    tree: LogicalPlan


@attrs.frozen
class ThresholdFilter(LogicalPlan):
    """The rows of ``child`` with ``value op q``, where q is the one value of the uncorrelated plan
    ``threshold`` (TPC-H Q11's ``HAVING sum(...) > (SELECT 0.0001 * sum(...) ...)``). The rows are
    kept ordered by value, so a new q flips only the rows between the old and the new q."""

    child_fields = ("child", "threshold")
    value: Expr
    op: str
    child: LogicalPlan
    threshold: LogicalPlan


@attrs.frozen
class ScalarProduct(LogicalPlan):
    """The rows of ``child``, each extended by the one value of every uncorrelated plan of ``scalars``,
    as the column of the same position in ``names`` (NULL while that plan has no row): an uncorrelated
    scalar subquery in a select list, a product with one-row relations. When a value changes every
    row changes with it (operators/stages/scalar_product.py)."""

    child_fields = ("child", "scalars")
    names: tuple[str, ...]
    child: LogicalPlan
    scalars: tuple[LogicalPlan, ...]


@notation_value
@attrs.frozen
class ProductTerm:
    """``coefficient × Π part[column]``: one monomial of an aggregate argument split across relations."""

    coefficient: float
    factors: tuple[tuple[int, str], ...]


@attrs.frozen
class CrossProductAggregate(LogicalPlan):
    """A global SUM/COUNT/AVG over a cross product of relations with per-relation conditions (RPAI
    §4.3's multi-relation form ``v1 θ q_R1 AND ... AND vn θ q_Rn``; PSP).

    ``Σ_{(a,b) ∈ A'×B'} f(a)·g(b) = Σ_{A'} f · Σ_{B'} g``: each part is a one-row aggregate query over
    one relation (its count ``_n`` and the sums ``_f<i>`` of its factors), maintained by whatever
    strategy fits it; ``sums[k]`` lists the terms of the k-th outer aggregate, ``funcs[k]`` its
    function (sum, count, avg), ``names[k]`` its output name.
    """

    child_fields = ("parts",)
    funcs: tuple[str, ...]
    names: tuple[str, ...]
    sums: tuple[tuple[ProductTerm, ...], ...]
    parts: tuple[LogicalPlan, ...]
    #: GROUP BY columns, all of one relation: that part (``grouped_part``) is grouped the same way (MST)
    group_names: tuple[str, ...] = ()
    grouped_part: int = -1
