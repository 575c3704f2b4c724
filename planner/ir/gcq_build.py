"""Reading a join block of a plan into a GCQ (IEDyn §2): equalities become shared variables.

Two sources: the logical plan's join block (a Filter over inner/cross joins of Scans, the shape the
SQL front end gives for comma joins, as ``ivm explain`` shows for TPC-H), and the normalized
``JoinGraph`` (atoms with their pushed selections, equi-join classes, other conditions), which is
what a strategy rule will hold. Columns made equal by an equality are one variable, named after
the first of them (``alias.column``). A conjunct that mentions one atom only is that atom's local
filter (applied before the join, not part of pred(Q)). A conjunct over several atoms that is
neither an equality nor an inequality between two columns, possibly with a constant offset
(``a.x < b.y + 1``, ``a.x - b.y <= 5``, ``a.t > b.t - interval 1 day``), is refused with its text
(an ``OR``, ``a.x * 2 < b.y``): no GJT edge could hold it as IEDyn's indexes need. Outer joins,
views and subqueries are refused too (outside the paper's GCQs).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from decimal import Decimal

from catalog.types import DATE
from planner.ir.expressions import Call, Column, Expr, Literal, columns, conjuncts
from planner.ir.gcq import Atom, Gcq, Inequality, Offset, inequality
from planner.ir.logical import Filter, Join, LogicalPlan, Scan
from planner.ir.maintenance import Atom as PlanAtom
from planner.ir.maintenance import JoinGraph
from planner.ir.notation_printer import print_expr


class _Variables:
    """Union-find over columns: an equality merges two columns into one variable."""

    def __init__(self, cols: Iterable[Column]) -> None:
        self.parent = {c: c for c in cols}

    def find(self, c: Column) -> Column:
        while self.parent[c] != c:
            c = self.parent[c]
        return c

    def union(self, a: Column, b: Column) -> None:
        ra, rb = sorted((self.find(a), self.find(b)), key=str)
        self.parent[rb] = ra

    def name(self, c: Column) -> str:
        return str(self.find(c))


_INTERVAL_UNITS = {"day": timedelta(days=1), "hour": timedelta(hours=1), "minute": timedelta(minutes=1),
                   "second": timedelta(seconds=1), "week": timedelta(weeks=1)}


def _constant(expr: Expr) -> Offset | None:
    """A numeric literal, or a fixed-length interval as a timedelta; None for anything else."""
    match expr:
        case Literal(value=bool()):
            return None
        case Literal(value=int() | float() | Decimal() as value) if value == value:
            return value
        case Literal(value=(int() as n, str() as unit)) if unit.lower().rstrip("s") in _INTERVAL_UNITS:
            return n * _INTERVAL_UNITS[unit.lower().rstrip("s")]
    return None


def _shifted(expr: Expr) -> tuple[Column, Offset] | None:
    """``expr`` as ``column + c``: a column alone, or plus or minus a constant."""
    match expr:
        case Column():
            return expr, 0
        case Call("+", (Column() as col, constant)) | Call("+", (constant, Column() as col)):
            c = _typed_offset(col, _constant(constant))
            return None if c is None else (col, c)
        case Call("-", (Column() as col, constant)):
            c = _typed_offset(col, _constant(constant))
            return None if c is None else (col, -c)
    return None


def _typed_offset(col: Column, c: Offset | None) -> Offset | None:
    """``c`` in the unit of ``col``'s values: a DATE plus an integer (Spark's ``date_add``) or a day
    interval moves by whole days, a ``timedelta`` the stages add to dates; a part of a day (a DATE
    plus hours is a TIMESTAMP in Spark) is no offset of a date."""
    if c is None or col.dtype != DATE:
        return c
    if isinstance(c, int):
        return timedelta(days=c)
    if isinstance(c, timedelta) and not c % timedelta(days=1):
        return c
    return None


def _difference(a: Offset, b: Offset) -> Offset | None:
    """``a - b`` for offsets where either may be the plain 0 of an unshifted column; None when the two
    are of kinds that do not subtract (a number and an interval)."""
    if not b:
        return a
    if not a:
        return -b
    try:
        return a - b
    except TypeError:
        return None


def _comparison(op: str, left: Expr, right: Expr, variables: _Variables) -> Inequality | None:
    """``left op right`` as ``x op y + c`` (``x + a op y + b``, ``x - y op c``), if it has that form."""
    if isinstance(left, Call) and left.op == "-" and all(isinstance(a, Column) for a in left.args):
        c = _constant(right)  # x - y op c  ⇔  x op y + c
        return None if c is None else inequality(variables.name(left.args[0]), op, variables.name(left.args[1]), c)
    lhs, rhs = _shifted(left), _shifted(right)
    if lhs is None or rhs is None:
        return None
    offset = _difference(rhs[1], lhs[1])
    return None if offset is None else inequality(variables.name(lhs[0]), op, variables.name(rhs[0]), offset)


def _predicates(parts: list[Expr], variables: _Variables) -> tuple[list[Inequality], list[tuple[str, Expr]]]:
    """The inequalities among ``parts`` (equalities already merged) and the single-atom filters."""
    predicates: list[Inequality] = []
    filters: list[tuple[str, Expr]] = []
    for part in parts:
        tables = {c.table for c in columns(part)}
        if len(tables) <= 1:
            filters.append((next(iter(tables), None) or "", part))
            continue
        match part:
            case Call("<" | "<=" | ">" | ">=" as op, (a, b)) if (found := _comparison(op, a, b, variables)):
                predicates.append(found)
            case Call("between", (x, lo, hi)) if (low := _comparison("<=", lo, x, variables)) and (
                high := _comparison("<=", x, hi, variables)
            ):
                predicates += [low, high]
            case _:
                raise ValueError(f"the condition {print_expr(part)} relates several relations but is neither an equality "
                                 "nor an inequality between two columns (with a constant offset)")
    return list(dict.fromkeys(predicates)), filters


def _gcq(
    relations: list[tuple[str, str, tuple[Column, ...]]],
    classes: list[tuple[Column, ...]],
    parts: list[Expr],
    output: Iterable[Column] | None,
) -> Gcq:
    """The GCQ of ``relations`` (alias, table, columns) with equality ``classes`` and other ``parts``."""
    variables = _Variables(c for _, _, cols in relations for c in cols)
    for cls in classes:
        for other in cls[1:]:
            variables.union(cls[0], other)
    predicates, filters = _predicates(parts, variables)
    atoms = tuple(
        Atom(alias, tuple(variables.name(c) for c in cols), table, tuple(c.name for c in cols))
        for alias, table, cols in relations
    )
    out = None if output is None else frozenset(variables.name(c) for c in output)
    return Gcq(atoms, tuple(predicates), out, tuple(filters))


def _scans(plan: LogicalPlan) -> tuple[list[Scan], list[Expr]]:
    """The Scans under inner/cross joins and the join conditions met on the way."""
    match plan:
        case Scan():
            return [plan], []
        case Join(kind="inner" | "cross", condition=condition, left=left, right=right):
            left_scans, left_conds = _scans(left)
            right_scans, right_conds = _scans(right)
            return left_scans + right_scans, left_conds + right_conds + conjuncts(condition)
    raise ValueError(f"not a join block of scans: {type(plan).__name__}")


def _is_equality(part: Expr) -> bool:
    return isinstance(part, Call) and part.op == "=" and all(isinstance(a, Column) for a in part.args)


def from_join_block(plan: LogicalPlan, output: Iterable[Column] | None = None) -> Gcq:
    """The GCQ of ``Filter?(inner/cross joins of Scans)``; ``output`` the columns kept (None: all)."""
    parts: list[Expr] = []
    if isinstance(plan, Filter):
        parts, plan = conjuncts(plan.condition), plan.child
    scans, join_parts = _scans(plan)
    parts = join_parts + parts
    classes = [part.args for part in parts if _is_equality(part)]
    rest = [part for part in parts if not _is_equality(part)]
    return _gcq([(s.alias, s.table, s.output) for s in scans], classes, rest, output)


def from_join_graph(graph: JoinGraph, output: Iterable[Column] | None = None) -> Gcq:
    """The GCQ of a normalized ``JoinGraph`` of plain atoms; pushed selections stay atom filters."""
    if graph.preserved:
        raise ValueError(f"outer join (preserved {list(graph.preserved)}) is not a GCQ")
    atoms = []
    for atom in graph.atoms:
        if not isinstance(atom, PlanAtom):
            raise ValueError(f"{type(atom).__name__} in the join graph is not a base-table atom")
        atoms.append(atom)
    parts = list(graph.conditions)
    classes = list(graph.join_classes) + [part.args for part in parts if _is_equality(part)]
    rest = [part for part in parts if not _is_equality(part)]
    rest += [p for a in atoms if a.predicate is not None for p in conjuncts(a.predicate)]
    return _gcq([(a.alias, a.table, a.output) for a in atoms], classes, rest, output)
