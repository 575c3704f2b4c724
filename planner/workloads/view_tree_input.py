"""What the F-IVM workloads (Retailer-like, Housing-like) share: their catalogs from the DDL in
``examples/fivm/``, random insert/delete streams over generated tables, and the translation of a
stream's updates into the changes a view-tree stage reads (through the runtime's source routes,
validator and local runner).

A view tree's atoms are named after tables and its variables after columns (``<table>.<column>``
where a column name recurs in another table but is no join variable), so an atom is the projection
of its table onto those columns and equal variable names are the natural join. Every
atom keeps its table's primary key, so a projection never merges two rows: the stage's weights are
the table's +1/−1 operations.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from catalog.ddl import catalog_from_ddl
from catalog.schema import Catalog
from operators.runtime.dataflow import Dataflow, SourceRoute, StageNode
from operators.runtime.local_runner import LocalRunner
from operators.runtime.stream import CheckedTables, Update, UpdateBatch, write_stream
from operators.runtime.validate import Validator
from operators.stages.base import Change
from operators.stages.view_tree import ViewTreeStage, ViewTreeState
from operators.structures.variable_order import VariableOrder
from operators.zset import Changelog
from planner.workloads.tpch_streams import make_stream

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "fivm"


def load_catalog(schema: str) -> Catalog:
    """The catalog of ``examples/fivm/<schema>.sql``."""
    return catalog_from_ddl((EXAMPLES / f"{schema}.sql").read_text())


def random_stream(tables: Mapping[str, Sequence[tuple]], catalog: Catalog, seed: int) -> UpdateBatch:
    """Every row inserted once in a seeded shuffle, with deletes of present rows (about one per
    three inserts) and re-inserts interleaved: ``tpch_streams``' ``random`` kind, which only needs
    primary keys, so it serves these schemas as it is."""
    return make_stream(tables, catalog, "random", seed=seed)


def churn_stream(tables: Mapping[str, Sequence[tuple]], catalog: Catalog, count: int, seed: int,
                 only: Sequence[str] | None = None, first_seq: int = 1) -> UpdateBatch:
    """``count`` updates on top of ``tables`` already loaded: each deletes a random present row of a
    random table (of ``only``, if given) or re-inserts one deleted earlier, half and half, so the
    sizes stay put (what a per-update benchmark on a fixed database size needs)."""
    rng = random.Random(seed)
    names = sorted(name for name in (only or tables) if tables[name])
    if not names:
        raise ValueError("churn_stream needs a non-empty table to delete from")
    present = {name: list(tables[name]) for name in names}
    gone: dict[str, list[tuple]] = {name: [] for name in names}
    updates = []
    for position in range(count):
        name = rng.choice(names)
        if gone[name] and (rng.random() < 0.5 or not present[name]):
            pool, target, op = gone[name], present[name], 1
        else:
            pool, target, op = present[name], gone[name], -1
        index = rng.randrange(len(pool))
        pool[index], pool[-1] = pool[-1], pool[index]
        row = pool.pop()
        target.append(row)
        updates.append(Update(first_seq + position, name, op, row))
    return UpdateBatch(updates, checked=isinstance(tables, CheckedTables))


def write(stream_dir: Path | str, catalog: Catalog, stream: UpdateBatch) -> Path:
    """The stream in the on-disk format (one ``<table>.parquet`` with ``_seq`` and ``_op`` each)."""
    return write_stream(stream_dir, catalog, {name: [u for u in stream if u.table == name] for name in catalog.tables})


class ViewTreeRun:
    """A view-tree stage run the way a maintained view runs: the atoms are ``SourceRoute``s of a
    one-stage ``Dataflow`` (projection onto the atom's columns), every batch is checked by the
    ``Validator`` (set semantics per primary key: an invalid stream is an error, nothing applied)
    and applied by the ``LocalRunner``."""

    def __init__(self, stage: ViewTreeStage, catalog: Catalog):
        self.stage = stage
        self.dataflow = Dataflow((StageNode(0, stage, None),), atom_routes(stage.order, catalog), stage.output_columns)
        self.validator = Validator(catalog, self.dataflow.tables())
        self.runner = LocalRunner(self.dataflow)

    def apply(self, updates: Iterable[Update]) -> Changelog:
        return self.validator.apply(updates, self.runner, None)

    @property
    def state(self) -> ViewTreeState | None:
        return self.runner.states[0].get(())

    def close(self) -> None:
        self.runner.close()


def atom_routes(order: VariableOrder, catalog: Catalog) -> tuple[SourceRoute, ...]:
    """One route per atom into port ``i`` of stage 0, projecting its table onto the atom's columns."""
    routes = []
    for port, atom in enumerate(order.atoms):
        table = catalog.table(atom.name)
        columns = [v.removeprefix(f"{atom.name}.") for v in atom.variables]
        if missing := set(table.primary_key) - set(columns):
            raise ValueError(f"atom {atom.name} drops key columns {sorted(missing)}: rows would merge")
        routes.append(SourceRoute(atom.name, 0, port, tuple(table.column_names.index(c) for c in columns)))
    return tuple(routes)


def stage_changes(routes: Sequence[SourceRoute], updates: Iterable[Update]) -> list[Change]:
    """The updates of the routed tables as the stage's changes, unvalidated (benchmarks on streams
    known to be valid); other tables' updates are skipped."""
    by_table: dict[str, Changelog] = {}
    for update in updates:
        by_table.setdefault(update.table, []).append((update.row, update.op))
    return [change for route in routes for change in route.route(by_table.get(route.table, []))]


def initial_rows(routes: Sequence[SourceRoute], tables: Mapping[str, Sequence[tuple]]) -> dict[str, list[tuple]]:
    """The atoms' rows of ``tables``: a view tree's ``initial`` state."""
    return {route.table: [change.row for change in route.route([(row, 1) for row in tables.get(route.table, ())])]
            for route in routes}
