"""A lowered maintenance plan: keyed stages in topological order and the routes of base-table changes.

``SourceRoute`` sends each change of a base table (a validated ``(row, weight)``) through a selection
(rows failing it are dropped, AJU §2.3) and a projection to one stage port, as a ``Change``. Each stage sends its output to one downstream
(stage, port), or to the result when ``downstream`` is None.

The start step: before the first batch the dataflow must be the query over empty tables, where a
global aggregate has one row (COUNT 0, SUM NULL) that every operator above it sees: a UNION of two
global aggregates holds both rows, a join with one pairs with it. So each stage's ``start_output``
(``KeyedStage``) goes downstream as changes, through the stages above in topological order, once,
before any batch (``Dataflow.start``); a stage's first change then retracts or replaces its row.
The result of that step is ``initial_result``.

A stage's output may hold ``ErrorRow``s (a row whose value is Spark's run-time error,
operators/held_errors.py): they go to the result, never to the stage downstream.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from operator import itemgetter

import attrs

from operators.held_errors import is_error, split_errors
from operators.stages.base import Change, Journal, KeyedStage, run_keyed
from operators.zset import Changelog, Row, consolidate


@attrs.frozen
class SourceRoute:
    table: str
    stage: int
    port: int
    #: Positions (in the table's catalog column order) of the columns the stage receives.
    columns: tuple[int, ...]
    #: Selection pushed to the source; None keeps every row.
    predicate: Callable[[Row], bool] | None = attrs.field(default=None, eq=False)
    predicate_text: str = ""

    def route(self, changes: Changelog) -> list[Change]:
        """The table's changes of a batch as the stage's input (selection, then projection)."""
        keep, positions, port = self.predicate, self.columns, self.port
        if len(positions) == 1:
            (only,) = positions
            project = lambda row: (row[only],)  # noqa: E731
        elif not positions:  # COUNT(*) of a keyless table reads no column: each copy is an empty row
            project = lambda row: ()  # noqa: E731
        else:
            project = itemgetter(*positions)
        return [Change(port, project(row), w) for row, w in changes if keep is None or keep(row)]


@attrs.frozen
class RowRequirement:
    """A condition a stage's algorithm needs of every inserted row of ``table`` (e.g. the RPAI tree's
    positive aggregated values). The validator checks it with the rest of a batch, so a row that
    breaks it is rejected before any stage runs and all state stays as it was.

    ``violation`` returns None for a good row, else what is wrong with it.
    """

    table: str
    violation: Callable[[Row], str | None] = attrs.field(eq=False)


@attrs.frozen
class StageNode:
    id: int
    stage: KeyedStage = attrs.field(eq=False)
    downstream: int | None  # None: output goes to the result
    downstream_port: int = 0


@attrs.frozen
class Dataflow:
    """Stages listed so that every stage comes after all stages feeding it."""

    stages: tuple[StageNode, ...]
    sources: tuple[SourceRoute, ...]
    output_columns: tuple[str, ...]
    #: The result before any change, over empty tables (``start``; a global aggregate shows one row).
    initial_result: tuple[Row, ...] = ()
    #: ORDER BY of the query without LIMIT: applied when the result is read, not maintained.
    presentation_order: tuple[tuple[int, bool], ...] = ()
    #: What the stages need of the input rows beyond the schema (checked by the validator).
    requirements: tuple[RowRequirement, ...] = ()
    #: Trailing output columns that only order the result (ORDER BY a column not selected): the
    #: result keeps them so it can be sorted when read, and the reader drops them.
    hidden_columns: int = 0
    #: Pull mode: the stage whose ``enumerate(key, state)`` over all its keys, passed through the
    #: stateless maps after it, is the result (a GJT's T-representation, a view tree's factorized output). The view then keeps no
    #: copy of the result and reads it from that state (``enumerate_result``). None: it keeps one.
    enumerated_by: int | None = None
    #: Derived tables read as relations without a key (a window's or a set operation's rows): each
    #: alias with the stage emitting its rows' changes, the input of the operators above (EXPLAIN).
    relations: tuple[tuple[str, int], ...] = ()

    @property
    def visible_width(self) -> int:
        """How many leading output columns the query selects."""
        return len(self.output_columns) - self.hidden_columns

    def __attrs_post_init__(self) -> None:
        position = {node.id: i for i, node in enumerate(self.stages)}
        for node in self.stages:
            if node.downstream is not None and position[node.downstream] <= position[node.id]:
                raise ValueError(f"stage {node.id} ({node.stage.name}) feeds stage {node.downstream}, listed before it")

    def stage(self, stage_id: int) -> StageNode:
        for node in self.stages:
            if node.id == stage_id:
                return node
        raise KeyError(stage_id)

    def propagate(self, states: Mapping[int, dict], inputs: dict[int, list[Change]], journal: Journal,
                  start: bool = False, counts: dict[str, tuple[int, int]] | None = None) -> Changelog:
        """Run each stage over its ``inputs`` (stage id → changes; consumed) in topological order, its
        output on to its downstream, with ``states`` (stage id → key → state) updated and each key
        journaled; returns the result's changes, consolidated. ``start``: the start step, where each
        stage also emits its ``start_output``. ``counts`` takes each run stage's (rows in, rows out)."""
        result: Changelog = []
        for node in self.stages:
            changes = inputs.pop(node.id, [])
            outputs = list(node.stage.start_output()) if start else []
            if changes:
                outputs += run_keyed(node.stage, states[node.id], changes, journal)
                if counts is not None:
                    counts[node.stage.name] = (len(changes), len(outputs))
            if not outputs:
                continue
            if node.downstream is None:
                result.extend(outputs)
            else:
                outputs, errors = split_errors(outputs)
                if errors:  # held errors go to the result, unless the stage downstream takes them
                    if node.downstream_port in self.stage(node.downstream).stage.error_ports:
                        outputs += errors
                    else:
                        result.extend(errors)
                inputs.setdefault(node.downstream, []).extend(Change(node.downstream_port, row, w) for row, w in outputs)
        return consolidate(result)

    def start(self, states: Mapping[int, dict]) -> Changelog:
        """The start step (module docstring) into ``states``, which must be empty; returns the result over
        empty tables. Not journaled: a stage raising over empty input leaves a dataflow no one can run."""
        return self.propagate(states, {}, Journal(), start=True)

    def route(self, changes_by_table: Mapping[str, Changelog]) -> dict[int, list[Change]]:
        """Validated base-table changes → per-stage input changes (selection and projection applied)."""
        inputs: dict[int, list[Change]] = defaultdict(list)
        for route in self.sources:
            if changes := changes_by_table.get(route.table):
                inputs[route.stage].extend(route.route(changes))
        return inputs

    def without_changes(self) -> Dataflow:
        """The dataflow in pull-based mode (IEDyn §6): the enumerating stage keeps its state up to
        date but emits no result changes, so a batch costs the state's update alone and the result
        is read from the state on request. Only a result enumerated from a stage can be read so."""
        if self.enumerated_by is None:
            raise ValueError("this plan keeps its result from the changes it emits (no stage enumerates it), "
                             "so it cannot run without them; pull mode needs a result enumerated from a generalized "
                             "join tree or a view tree")
        stages = tuple(attrs.evolve(node, stage=node.stage.without_changes()) if node.id == self.enumerated_by
                       else node for node in self.stages)
        return attrs.evolve(self, stages=stages)

    def enumerate_result(self, states: Mapping[tuple, object]) -> Iterator[tuple[Row, int]]:
        """The result's rows and counts read off the enumerating stage's ``states`` (key → state)."""
        if self.enumerated_by is None:
            raise ValueError("this dataflow keeps its result; no stage enumerates it")
        maps = []
        node = self.stage(self.enumerated_by)
        while node.downstream is not None:
            node = self.stage(node.downstream)
            maps.append(node.stage.mapping)
        source = self.stage(self.enumerated_by).stage
        for key, state in states.items():
            for row, weight in source.enumerate(key, state):
                for mapping in maps:
                    # a held error is the result's as it is (operators/held_errors.py)
                    row = row if is_error(row) else mapping(row)
                    if row is None:
                        break
                else:
                    yield row, weight

    def tables(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(route.table for route in self.sources))
