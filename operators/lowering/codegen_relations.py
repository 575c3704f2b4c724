"""AJU's live tuples kept the paper's way in the compiled program (issue 13, item 5).

The stage plan of a relation R with children C1..Ck is one ``ForeignKeyLookupStage`` per child (the
index I(R, Cj), keyed by R's foreign key to Cj, holding R's tuples and Cj's live tuple) and one
``LiveTupleStage`` keyed by R's primary key, which collects "alive on child j" messages in slots and
decides liveness. That is the shape Spark needs (every state lives under one key), but run locally
it costs a change of R three visits of the live tuple's state and a message per child, and Q5's
live-tuple plan ran 1.7× slower than Theorem 11's binary joins, the opposite of the paper.

AJU keeps the counter s(t) on the tuple itself. So does this code: a tuple of R is one list
``T = [R's row, e1, ..., ek]`` where ``ej`` is the entry of I(R, Cj) it belongs to, ``[{R's key:
T, ...}, Cj's live partner]``, shared by all tuples with that foreign key. The live row of T is R's
row extended with each entry's partner, read through the references: an insert of R visits each
index once (to find or make its entry) and nothing else; a delete visits one index and reaches the
others through T; a child turning (non-)live walks its entry's tuples, O(group), as in AJU. The
``LiveTupleStage``'s own dict is not used (its keys are counted through the first index).

Fused when the plan allows it exactly: every index of R is fed R's changes by R's table with the
live-tuple stage's selection, forwards its partner as the whole message payload, emits no
NULL-padded rows and stores a keyed R (not a bag); anything else keeps the stage-by-stage code.
"""

from __future__ import annotations

from typing import Protocol

from operators.lowering.source_text import indented, key_source, slot_change, tuple_source
from operators.runtime.compiled.program import Relation, Unit
from operators.runtime.dataflow import SourceRoute
from operators.stages.foreign_key import ForeignKeyLookupStage


class ProgramWriter(Protocol):
    """What this module needs of codegen.py's writer (a protocol, so the two modules do not import each other)."""

    def emit(self, unit: Unit, row: str, weight: str, hot: bool) -> list[str]: ...

    def partner(self, stage: ForeignKeyLookupStage, child: str) -> str: ...

def fused_relations(units: tuple[Unit, ...], entry: dict[int, int], sources: tuple[SourceRoute, ...]) -> dict[int, Relation]:
    """The live-tuple units that run fused with their indexes, by unit id (see the module docstring)."""
    relations = {}
    for live in units:
        if live.kind != "live":
            continue
        feeding = sorted((u for u in units if u.downstream == live.id), key=lambda u: u.port)
        live_routes = [r for r in sources if entry[r.stage] == live.id]
        if ([u.port for u in feeding] != list(range(1, live.stage.children + 1)) or len(live_routes) != 1
                or live_routes[0].port != 0):
            continue
        if all(_fusable_index(lookup, live, live_routes[0], units, entry, sources) for lookup in feeding):
            relations[live.id] = Relation(live, tuple(feeding))
    return relations


def _fusable_index(lookup: Unit, live: Unit, live_route: SourceRoute, units, entry, sources) -> bool:
    stage = lookup.stage
    if lookup.kind != "lookup" or stage.padding is not None or stage.bag:
        return False
    parents = [r for r in sources if entry[r.stage] == lookup.id and r.port == ForeignKeyLookupStage.PARENT]
    if any(u.downstream == lookup.id and u.port == ForeignKeyLookupStage.PARENT for u in units):
        return False  # R's changes reach the index from another stage, not only from R's table
    return (len(parents) == 1 and parents[0].table == live_route.table
            and parents[0].predicate_text == live_route.predicate_text
            and live.stage.prefix_widths[lookup.port - 1] == len(parents[0].columns))


def _live(writer: ProgramWriter, relation: Relation, tuple_: str, override: dict[int, str] | None = None) -> str:
    """Source of the live row of ``tuple_`` (None when not live); ``override`` gives child j's partner
    by name instead of reading it from the tuple's entry (a child's change, before or after)."""
    override = override or {}
    u = relation.live.id
    tests, parts = [], [f"{tuple_}[0]"]
    for j, lookup in enumerate(relation.lookups, start=1):
        partner = override.get(j) or writer.partner(lookup.stage, f"{tuple_}[{j}][1]")
        name = f"pa{u}_{j}"
        tests.append(f"({name} := {partner}) is not None")
        parts.append(name)
    row = f"lr{u}"
    tests.append(f"({row} := {' + '.join(parts)}) is not None")
    tests += [f"{row}[{positions[0]}] == {row}[{other}]"
              for positions in relation.live.stage.assertions for other in positions[1:]]
    return f"({row} if {' and '.join(tests)} else None)"


def relation_change(writer: ProgramWriter, relation: Relation, live_row: str, live_key: str,
                    lookup_keys: list[str]) -> list[str]:
    """One change of R (``w``): its tuple made or dropped in every index, its live row emitted or retracted.

    ``live_row`` names R's row as the live-tuple stage sees it, ``live_key`` is the source of its key
    (the live stage's ``row_key``), ``lookup_keys`` the source of each index's key of it (the
    lookups' ``parent_key``, in port order): read off the table's row, not off a projection of it
    built for the purpose."""
    live = relation.live
    u = live.id
    name = repr(live.stage.name)
    keys = [f"fk{u}_{j}" for j in range(1, len(relation.lookups) + 1)]
    lines = [f"kr{u} = {live_key}"]
    lines += [f"{key} = {source}" for key, source in zip(keys, lookup_keys, strict=True)]
    # the tuple is made first and set into each entry in one probe: a new list is in no entry, so an
    # entry that keeps another under R's key (a duplicate) is the one whose setdefault returns that
    insert = [f"t{u} = [{live_row}{', None' * len(relation.lookups)}]"]
    for j, (key, lookup) in enumerate(zip(keys, relation.lookups, strict=True), start=1):
        entry = f"e{u}_{j}"
        insert += [f"{entry} = _S{lookup.id}_get({key})", f"if {entry} is None:", f"    {entry} = _S{lookup.id}[{key}] = [{{}}, None]",
                   f"if {entry}[0].setdefault(kr{u}, t{u}) is not t{u}:", f"    _invariant({name}, {live_row}, w)",
                   f"t{u}[{j}] = {entry}"]
    insert += [f"after{u} = {_live(writer, relation, f't{u}')}", f"if after{u} is not None:",
               *indented(writer.emit(live, f"after{u}", "1", hot=True))]
    first = relation.lookups[0]
    delete = [f"e{u}_1 = _S{first.id}_get({keys[0]})", f"t{u} = None if e{u}_1 is None else e{u}_1[0].get(kr{u})",
              f"if t{u} is None or t{u}[0] != {live_row}:", f"    _invariant({name}, {live_row}, w)",
              f"before{u} = {_live(writer, relation, f't{u}')}"]
    for j, (key, lookup) in enumerate(zip(keys, relation.lookups, strict=True), start=1):
        entry = f"e{u}_{j}"
        delete += [f"{entry} = t{u}[{j}]", f"del {entry}[0][kr{u}]",
                   f"if not {entry}[0] and {entry}[1] is None:", f"    del _S{lookup.id}[{key}]"]
    delete += [f"if before{u} is not None:", *indented(writer.emit(live, f"before{u}", "-1", hot=True))]
    return [*lines, "if w == 1:", *indented(insert), "elif w == -1:", *indented(delete),
            "else:", f"    _invariant({name}, {live_row}, w)"]


def child_change(writer: ProgramWriter, relation: Relation, lookup: Unit, row: str, w: str) -> list[str]:
    """Child j's live tuple with this key appears, vanishes or changes: every tuple of R in the entry
    is retracted with the old partner and emitted with the new one (AJU's O(λ) step)."""
    stage: ForeignKeyLookupStage = lookup.stage
    j = relation.lookups.index(lookup) + 1
    u = lookup.id
    child = tuple_source(row, stage.child_columns) if stage.child_columns is not None else row
    old, new = f"bp{u}", f"ap{u}"
    walk = [f"for t{u} in e{u}[0].values():",
            f"    b{u} = {_live(writer, relation, f't{u}', {j: old})}",
            f"    a{u} = {_live(writer, relation, f't{u}', {j: new})}",
            f"    if b{u} != a{u}:",
            f"        if b{u} is not None:", *indented(writer.emit(relation.live, f"b{u}", "-1", hot=False), 3),
            f"        if a{u} is not None:", *indented(writer.emit(relation.live, f"a{u}", "1", hot=False), 3)]
    return [f"k{u} = {key_source(row, stage.child_key)}", f"c{u} = {child}", f"e{u} = _S{u}_get(k{u})",
            f"if e{u} is None:", f"    e{u} = _S{u}[k{u}] = [{{}}, None]",
            *slot_change(f"e{u}[1]", f"o{u}", f"c{u}", w, stage.name),
            f"{old} = {writer.partner(stage, f'o{u}')}", f"{new} = {writer.partner(stage, f'e{u}[1]')}",
            f"if {old} != {new}:", *indented(walk),
            f"if not e{u}[0] and e{u}[1] is None:", f"    del _S{u}[k{u}]"]
