"""What the JVM delta strategy runs for one view: the delta terms, the aggregate and the result's shape.

The classic delta rule for a join of table occurrences R1 ⋈ … ⋈ Rn under bag semantics (each change
a row and a weight ±1):

    Δ(R1 ⋈ … ⋈ Rn) = Σᵢ R1' ⋈ … ⋈ R(i-1)' ⋈ ΔRi ⋈ R(i+1) ⋈ … ⋈ Rn

where Rj' is Rj after the batch and Rj before it (the same table read twice is two occurrences, so
a self-join is covered). Term i is the view's own FROM … WHERE over the occurrences read as
``new``/``delta``/``old``, joined from the changed occurrence outwards along the view's conditions;
Spark evaluates the user's expressions itself, so every function keeps Spark's semantics. Over a GROUP BY the terms' rows are summed into a
ring of partial aggregates per group (a sum and a count of non-NULL arguments per SUM/COUNT/AVG and
a row count, all additive under ±), which is why MIN, MAX and DISTINCT aggregates are not taken.
"""

from __future__ import annotations

import attrs

#: Between an occurrence's alias and a column's name in the terms' SQL: each occurrence's columns are
#: renamed ``<alias>__<column>``, so one row of a join holds every occurrence's columns unambiguously.
SEPARATOR = "__"
#: The columns of a term's rows: group values, aggregate arguments, and the weight of the change.
GROUP, ARGUMENT, WEIGHT = "g", "a", "_w"
#: The aggregate state's columns per aggregate j: sum, count of non-NULL arguments; and the row count.
SUM, NON_NULL, ROWS = "s", "n", "_rows"
#: In the final select list and HAVING: the group value i and the aggregate value j, by these names.
GROUP_REF, AGGREGATE_REF = "__grp_", "__agg_"
#: The kinds of aggregate the ring holds.
AGGREGATE_KINDS = ("sum", "count", "count_rows", "avg")


def renamed(alias: str, column: str) -> str:
    """The name of occurrence ``alias``'s ``column`` in a term's rows."""
    return f"{alias}{SEPARATOR}{column}"


@attrs.frozen
class Occurrence:
    """One table reference in the view's FROM clause."""

    table: str
    alias: str


@attrs.frozen
class JoinStep:
    """One step of a delta term: occurrence ``occurrence`` read as ``kind`` (``new``, ``old``, or ``delta``:
    the batch's changes), its own conditions ``filter`` applied, joined to the rows so far on
    ``condition`` (None for the first step). SQL over renamed columns (``renamed``)."""

    occurrence: int
    kind: str
    filter: str | None
    condition: str | None


@attrs.frozen
class DeltaTerm:
    """Term i of the delta rule: the join steps from the changed occurrence outwards, then the
    ``columns`` it selects (SQL with their names). The rows so far are always the small side of the
    next join (they grow from one batch's changes), which the runtime broadcasts; a state is only scanned."""

    steps: tuple[JoinStep, ...]
    columns: tuple[str, ...]


@attrs.frozen
class RingAggregate:
    """Aggregate j of the view: its kind and its argument column ``a<j>`` in the terms (None for COUNT(*))."""

    kind: str
    argument: int | None
    #: the SQL of the call as the view wrote it, for EXPLAIN and for Spark to type the result
    text: str


@attrs.frozen
class DeltaSqlPlan:
    """A view the JVM delta strategy maintains; see the module docstring.

    ``terms[i]`` is term i. Without aggregation (``aggregates`` None) its columns are the
    result's plus ``_w``; with it, ``g0…``, ``a0…`` and ``_w``. ``select`` and ``having`` are the
    result's columns and condition over ``__grp_i``/``__agg_j`` (aggregation only). ``order``/``limit``:
    a top-k view (ORDER BY over the result's columns, as SQL text)."""

    tables: tuple[str, ...]
    occurrences: tuple[Occurrence, ...]
    terms: tuple[DeltaTerm, ...]
    groups: int
    aggregates: tuple[RingAggregate, ...] | None
    select: tuple[str, ...]
    having: str | None
    order: str | None
    limit: int | None

    @property
    def aggregated(self) -> bool:
        return self.aggregates is not None

    @property
    def global_aggregate(self) -> bool:
        """One result row whatever the input (an aggregate without GROUP BY)."""
        return self.aggregated and self.groups == 0

    @property
    def recomputes_top(self) -> bool:
        """Whether a batch's result changes are the difference of the result before and after (a top-k or
        a global aggregate: the result is read off the whole aggregate state), rather than the changed
        groups' old and new rows."""
        return self.limit is not None or self.global_aggregate
