"""AJU's live tuples kept the paper's way in the compiled program (issue 13, item 5).

The stage plan of a relation R with children C1..Ck is one ``ForeignKeyLookupStage`` per child (the
index I(R, Cj), keyed by R's foreign key to Cj, holding R's tuples and Cj's live tuple) and one
``LiveTupleStage`` keyed by R's primary key, which collects "alive on child j" messages in slots and
decides liveness. That is the shape Spark needs (every state lives under one key), but run locally
it costs a change of R three visits of the live tuple's state and a message per child, and Q5's
live-tuple plan ran 1.7× slower than Theorem 11's binary joins, the opposite of the paper.

Here the indexes are the whole state. An entry of I(R, Cj) is ``[{rest of R's key: R's row, ...},
Cj's live partner]``, where the rest of R's key is R's primary key without the columns of the
foreign key (fixed within the entry: Q5's lineitems of one order are kept by ``l_linenumber``, an
int, not by a tuple). A tuple's live row is R's row extended with each child's partner, read from
its entries; there is no counter s(t) to keep because nothing else reads it, and no per-tuple record
beside the row itself. The ``LiveTupleStage``'s own dict is not used.

The first index (port 1, the *home*) keeps every tuple of R; every other index keeps only the tuples
alive on the home's child. A tuple that is not cannot turn live when another child changes, so the
others' walks need not see it; it enters them when its home partner appears (the home's walk, O(group)
as in AJU) and leaves them when the partner goes. So a change of R whose home partner is absent
(Q5: a lineitem of an order that is not live, nearly all of them on a window stream) visits one
index, and the indexes other than the home hold only what can still reach the result. This departs
from AJU §3.3's data structures, which put every tuple in every I(R, Cj) to keep s(t) exact; the
live rows, and so the output, are the same (the tests compare with the generic stages).

Fused when the plan allows it exactly: every index of R is fed R's changes by R's table with the
live-tuple stage's selection, forwards its partner as the whole message payload, emits no
NULL-padded rows and stores a keyed R (not a bag), and R's row holds every foreign key; anything
else keeps the stage-by-stage code.
"""

from __future__ import annotations

from operators.runtime.compiled.program import Relation, Unit
from operators.runtime.dataflow import SourceRoute
from operators.stages.foreign_key import ForeignKeyLookupStage
from operators.stages.source_text import ProgramText, indented, key_source, slot_change, tuple_source


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
        keys = [_index_keys(lookup, live, live_routes[0], units, entry, sources) for lookup in feeding]
        if all(key is not None for key in keys):
            relations[live.id] = Relation(live, tuple(feeding), tuple(keys))
    return relations


def _index_keys(lookup: Unit, live: Unit, live_route: SourceRoute, units, entry,
                sources) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """The positions in R's row of the index's foreign key and of the rest of R's primary key; None when
    the index cannot be fused (see the module docstring)."""
    stage = lookup.stage
    if lookup.kind != "lookup" or stage.padding is not None or stage.bag:
        return None
    parents = [r for r in sources if entry[r.stage] == lookup.id and r.port == ForeignKeyLookupStage.PARENT]
    if any(u.downstream == lookup.id and u.port == ForeignKeyLookupStage.PARENT for u in units):
        return None  # R's changes reach the index from another stage, not only from R's table
    if not (len(parents) == 1 and parents[0].table == live_route.table
            and parents[0].predicate_text == live_route.predicate_text
            and live.stage.prefix_widths[lookup.port - 1] == len(parents[0].columns)):
        return None
    columns = live_route.columns  # table positions of R's row
    foreign = [parents[0].columns[p] for p in stage.parent_key]
    if not set(foreign) <= set(columns):
        return None
    rest = tuple(p for p in live.stage.row_key if columns[p] not in foreign)
    return tuple(columns.index(c) for c in foreign), rest


def _live(writer: ProgramText, relation: Relation, row: str, partners: list[str], present: str = "") -> str:
    """Source of the live row of R's row ``row`` (None when not live) given each child's partner as
    source: a name, or an expression read only when the partners before it are not None. ``present``
    names a partner known not to be None (not tested again)."""
    u = relation.live.id
    tests, parts = [], [row]
    for j, partner in enumerate(partners, start=1):
        if not partner.isidentifier():
            name = f"pa{u}_{j}"
            tests.append(f"({name} := {partner}) is not None")
            partner = name
        elif partner != present:
            tests.append(f"{partner} is not None")
        parts.append(partner)
    joined = f"lr{u}"
    tests.append(f"({joined} := {' + '.join(parts)}) is not None")
    tests += [f"{joined}[{positions[0]}] == {joined}[{other}]"
              for positions in relation.live.stage.assertions for other in positions[1:]]
    return f"({joined} if {' and '.join(tests)} else None)"


def _entry(index: Unit, entry: str, key: str) -> list[str]:
    """Lines binding ``entry`` to the index's entry of ``key``, made if absent."""
    return [f"{entry} = _S{index.id}_get({key})", f"if {entry} is None:", f"    {entry} = _S{index.id}[{key}] = [{{}}, None]"]


def _drop_if_empty(index: Unit, entry: str, key: str) -> list[str]:
    return [f"if not {entry}[0] and {entry}[1] is None:", f"    del _S{index.id}[{key}]"]


def _enter_others(writer: ProgramText, relation: Relation, row: str, name: str) -> tuple[list[str], list[str]]:
    """Lines putting R's tuple ``row`` into every index but the home, and each one's partner (names)."""
    lines, partners = [], []
    for j in range(1, len(relation.lookups)):
        index, (foreign, rest) = relation.lookups[j], relation.keys[j]
        key, entry, partner = f"fk{name}_{j + 1}", f"e{name}_{j + 1}", f"pa{name}_{j + 1}"
        lines += [f"{key} = {key_source(row, foreign)}", *_entry(index, entry, key),
                  f"if {entry}[0].setdefault({key_source(row, rest)}, {row}) is not {row}:",
                  f"    _invariant({relation.live.stage.name!r}, {row}, 1)",
                  f"{partner} = {index.stage.partner_source(writer, f'{entry}[1]')}"]
        partners.append(partner)
    return lines, partners


def _leave_others(writer: ProgramText, relation: Relation, row: str, name: str) -> tuple[list[str], list[str]]:
    """Lines taking R's tuple ``row`` out of every index but the home (where it is: it was alive on the
    home's child), and each one's partner (names)."""
    lines, partners = [], []
    for j in range(1, len(relation.lookups)):
        index, (foreign, rest) = relation.lookups[j], relation.keys[j]
        key, entry, partner = f"fk{name}_{j + 1}", f"e{name}_{j + 1}", f"pa{name}_{j + 1}"
        lines += [f"{key} = {key_source(row, foreign)}", f"{entry} = _S{index.id}[{key}]",
                  f"del {entry}[0][{key_source(row, rest)}]",
                  f"{partner} = {index.stage.partner_source(writer, f'{entry}[1]')}", *_drop_if_empty(index, entry, key)]
        partners.append(partner)
    return lines, partners


def relation_change(writer: ProgramText, relation: Relation, live_row: str) -> list[str]:
    """One change of R (``w``; ``live_row`` names R's row as the live-tuple stage sees it): its tuple
    made or dropped in the home index and, when alive on the home's child, in the others; its live
    row emitted or retracted."""
    live, home = relation.live, relation.lookups[0]
    u = live.id
    name = repr(live.stage.name)
    foreign, rest = relation.keys[0]
    key, entry, partner = f"fk{u}_1", f"e{u}_1", f"pa{u}_1"
    found = f"t{u}"
    lines = [f"{key} = {key_source(live_row, foreign)}"]
    enter, partners = _enter_others(writer, relation, live_row, str(u))
    # the home entry's setdefault both stores the row and finds a duplicate key
    insert = [*_entry(home, entry, key),
              f"if {entry}[0].setdefault({key_source(live_row, rest)}, {live_row}) is not {live_row}:",
              f"    _invariant({name}, {live_row}, w)",
              f"{partner} = {home.stage.partner_source(writer, f'{entry}[1]')}", f"if {partner} is not None:",
              *indented(enter), f"    after{u} = {_live(writer, relation, live_row, [partner, *partners], partner)}",
              f"    if after{u} is not None:", *indented(writer.emit(live, f"after{u}", "1", hot=True), 2)]
    leave, partners = _leave_others(writer, relation, found, str(u))
    delete = [f"{entry} = _S{home.id}_get({key})",
              f"{found} = None if {entry} is None else {entry}[0].pop({key_source(live_row, rest)}, None)",
              f"if {found} != {live_row}:", f"    _invariant({name}, {live_row}, w)",
              f"{partner} = {home.stage.partner_source(writer, f'{entry}[1]')}", f"if {partner} is not None:",
              *indented(leave), f"    before{u} = {_live(writer, relation, found, [partner, *partners], partner)}",
              f"    if before{u} is not None:", *indented(writer.emit(live, f"before{u}", "-1", hot=True), 2),
              *_drop_if_empty(home, entry, key)]
    return [*lines, "if w == 1:", *indented(insert), "elif w == -1:", *indented(delete),
            "else:", f"    _invariant({name}, {live_row}, w)"]


def child_change(writer: ProgramText, relation: Relation, lookup: Unit, row: str, w: str) -> list[str]:
    """Child j's live tuple with this key appears, vanishes or changes: every tuple of R in the entry
    is retracted with the old partner and emitted with the new one (AJU's O(λ) step). At the home
    index the tuples also enter the other indexes when the partner appears and leave them when it goes."""
    stage: ForeignKeyLookupStage = lookup.stage
    j = relation.lookups.index(lookup)
    u = lookup.id
    child = tuple_source(row, stage.child_columns) if stage.child_columns is not None else row
    old, new, tuple_ = f"bp{u}", f"ap{u}", f"t{u}"

    def emit(row: str, weight: str) -> list[str]:
        return indented(writer.emit(relation.live, row, weight, hot=False))

    def diff(before: str, after: str) -> list[str]:
        return [f"b{u} = {before}", f"a{u} = {after}", f"if b{u} != a{u}:",
                f"    if b{u} is not None:", *indented(emit(f"b{u}", "-1")),
                f"    if a{u} is not None:", *indented(emit(f"a{u}", "1"))]

    def read(i: int) -> list[str]:  # child i's partner of the tuple, read from its entry (it is there)
        index, (foreign, _) = relation.lookups[i], relation.keys[i]
        return [f"pa{u}_{i + 1} = {index.stage.partner_source(writer, f'_S{index.id}[{key_source(tuple_, foreign)}][1]')}"]

    others = [i for i in range(len(relation.lookups)) if i != j]
    partners = [f"pa{u}_{i + 1}" for i in range(len(relation.lookups))]
    if j > 0:  # the tuples here are alive on the home's child: their other partners are in their entries
        walk = [*(line for i in others for line in read(i)),
                *diff(_live(writer, relation, tuple_, partners[:j] + [old] + partners[j + 1:]),
                      _live(writer, relation, tuple_, partners[:j] + [new] + partners[j + 1:]))]
    elif stage.optional_width is None:  # one of old and new is None: the tuples enter or leave the others
        enter, entered = _enter_others(writer, relation, tuple_, str(u))
        leave, left = _leave_others(writer, relation, tuple_, str(u))
        walk = [f"if {old} is None:", *indented(enter),
                f"    a{u} = {_live(writer, relation, tuple_, [new, *entered], new)}",
                f"    if a{u} is not None:", *indented(emit(f"a{u}", "1")),
                "else:", *indented(leave),
                f"    b{u} = {_live(writer, relation, tuple_, [old, *left], old)}",
                f"    if b{u} is not None:", *indented(emit(f"b{u}", "-1"))]
    else:  # an optional child's partner is never None (NULLs without a child): every tuple is everywhere
        walk = [*(line for i in others for line in read(i)),
                *diff(_live(writer, relation, tuple_, [old, *partners[1:]], old),
                      _live(writer, relation, tuple_, [new, *partners[1:]], new))]
    return [f"k{u} = {key_source(row, stage.child_key)}", f"c{u} = {child}", *_entry(lookup, f"e{u}", f"k{u}"),
            *slot_change(f"e{u}[1]", f"o{u}", f"c{u}", w, stage.name),
            f"{old} = {stage.partner_source(writer, f'o{u}')}", f"{new} = {stage.partner_source(writer, f'e{u}[1]')}",
            f"if {old} != {new}:", f"    for {tuple_} in e{u}[0].values():", *indented(walk, 2),
            *_drop_if_empty(lookup, f"e{u}", f"k{u}")]
