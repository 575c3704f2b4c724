"""AJU's live tuples kept the paper's way in the compiled program (issue 13, item 5): the template of a
``LiveTupleStage`` run fused with the ``ForeignKeyLookupStage`` indexes feeding it.

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

Fused when the plan allows it exactly (``index_keys`` says it of each index; the program's assembly,
operators/lowering/codegen.py, matches the routes): every index of R is fed R's changes by R's table
with the live-tuple stage's selection, forwards its partner as the whole message payload, emits no
NULL-padded rows and stores a keyed R (not a bag), and R's row holds every foreign key; anything else
keeps the stage-by-stage templates (``ForeignKeyLookupStage.source``, ``LiveTupleStage.source``).
"""

from __future__ import annotations

import attrs

from operators.stages.foreign_key import ForeignKeyLookupStage, LiveTupleStage
from operators.stages.source_text import (
    ProgramText,
    SourceUnit,
    indented,
    key_source,
    slot_change,
    tuple_source,
)

#: per index: the positions in R's row of its foreign key, and of the rest of R's primary key
IndexKeys = tuple[tuple[int, ...], tuple[int, ...]]


def index_keys(lookup: ForeignKeyLookupStage, live: LiveTupleStage, port: int, parent_columns: tuple[int, ...],
               live_columns: tuple[int, ...]) -> IndexKeys | None:
    """How the index ``lookup`` (fed on ``port`` of ``live``, R's rows reaching it as the table's
    ``parent_columns``, the live-tuple stage's as ``live_columns``) keeps R's tuples in the fused
    relation: the positions in R's row of its foreign key and of the rest of R's primary key; None when
    it cannot be fused (see the module docstring)."""
    if lookup.padding is not None or lookup.bag or live.prefix_widths[port - 1] != len(parent_columns):
        return None
    foreign = [parent_columns[p] for p in lookup.parent_key]
    if not set(foreign) <= set(live_columns):
        return None
    rest = tuple(p for p in live.row_key if live_columns[p] not in foreign)
    return tuple(live_columns.index(c) for c in foreign), rest


@attrs.frozen
class FusedRelation:
    """A live-tuple unit run fused with, in port order, the index units feeding it (each unit's
    ``stage``: the ``LiveTupleStage``, the ``ForeignKeyLookupStage``s)."""

    live: SourceUnit
    lookups: tuple[SourceUnit, ...]
    #: per index, in port order (``index_keys``): by which positions its entries keep R's tuples
    keys: tuple[IndexKeys, ...]

    def change_source(self, program: ProgramText, live_row: str) -> list[str]:
        """One change of R (``w``; ``live_row`` names R's row as the live-tuple stage sees it): its tuple
        made or dropped in the home index and, when alive on the home's child, in the others; its live
        row emitted or retracted."""
        live, home = self.live, self.lookups[0]
        u = live.id
        name = repr(live.stage.name)
        foreign, rest = self.keys[0]
        key, entry, partner = f"fk{u}_1", f"e{u}_1", f"pa{u}_1"
        found = f"t{u}"
        enter, partners = self._enter_others(program, live_row, str(u))
        # the home entry's setdefault both stores the row and finds a duplicate key
        insert = [*_entry(home, entry, key),
                  f"if {entry}[0].setdefault({key_source(live_row, rest)}, {live_row}) is not {live_row}:",
                  f"    _invariant({name}, {live_row}, w)",
                  f"{partner} = {home.stage.partner_source(program, f'{entry}[1]')}", f"if {partner} is not None:",
                  *indented(enter), f"    after{u} = {self._live(live_row, [partner, *partners], partner)}",
                  f"    if after{u} is not None:", *indented(program.emit(live, f"after{u}", "1", hot=True), 2)]
        leave, partners = self._leave_others(program, found, str(u))
        delete = [f"{entry} = _S{home.id}_get({key})",
                  f"{found} = None if {entry} is None else {entry}[0].pop({key_source(live_row, rest)}, None)",
                  f"if {found} != {live_row}:", f"    _invariant({name}, {live_row}, w)",
                  f"{partner} = {home.stage.partner_source(program, f'{entry}[1]')}", f"if {partner} is not None:",
                  *indented(leave), f"    before{u} = {self._live(found, [partner, *partners], partner)}",
                  f"    if before{u} is not None:", *indented(program.emit(live, f"before{u}", "-1", hot=True), 2),
                  *_drop_if_empty(home, entry, key)]
        return [f"{key} = {key_source(live_row, foreign)}", "if w == 1:", *indented(insert), "elif w == -1:",
                *indented(delete), "else:", f"    _invariant({name}, {live_row}, w)"]

    def child_source(self, program: ProgramText, lookup: SourceUnit, row: str, w: str) -> list[str]:
        """Child j's live tuple with this key appears, vanishes or changes: every tuple of R in the entry
        is retracted with the old partner and emitted with the new one (AJU's O(λ) step). At the home
        index the tuples also enter the other indexes when the partner appears and leave them when it
        goes."""
        stage: ForeignKeyLookupStage = lookup.stage
        u = lookup.id
        child = tuple_source(row, stage.child_columns) if stage.child_columns is not None else row
        old = f"bp{u}"
        return [f"k{u} = {key_source(row, stage.child_key)}", f"c{u} = {child}", *_entry(lookup, f"e{u}", f"k{u}"),
                *slot_change(f"e{u}[1]", f"o{u}", f"c{u}", w, stage.name),
                f"{old} = {stage.partner_source(program, f'o{u}')}", f"ap{u} = {stage.partner_source(program, f'e{u}[1]')}",
                f"if {old} != ap{u}:", f"    for t{u} in e{u}[0].values():", *indented(self._walk(program, lookup), 2),
                *_drop_if_empty(lookup, f"e{u}", f"k{u}")]

    def _walk(self, program: ProgramText, lookup: SourceUnit) -> list[str]:
        """``child_source``'s step for one tuple ``t<u>`` of the entry, its partner ``bp<u>`` before and
        ``ap<u>`` after."""
        j, u = self.lookups.index(lookup), lookup.id
        old, new, tuple_ = f"bp{u}", f"ap{u}", f"t{u}"
        partners = [f"pa{u}_{i + 1}" for i in range(len(self.lookups))]
        if j == 0 and lookup.stage.optional_width is None:  # one of old and new is None: enter or leave the others
            enter, entered = self._enter_others(program, tuple_, str(u))
            leave, left = self._leave_others(program, tuple_, str(u))
            return [f"if {old} is None:", *indented(enter), f"    a{u} = {self._live(tuple_, [new, *entered], new)}",
                    f"    if a{u} is not None:", *indented(self._emit(program, f"a{u}", "1"), 2),
                    "else:", *indented(leave), f"    b{u} = {self._live(tuple_, [old, *left], old)}",
                    f"    if b{u} is not None:", *indented(self._emit(program, f"b{u}", "-1"), 2)]
        # off the home the tuples are alive on the home's child; at an optional home a partner is never
        # None (NULLs without a child) and every tuple is everywhere: the others' partners are in their entries
        reads = [f"pa{u}_{i + 1} = {index.stage.partner_source(program, f'_S{index.id}[{key_source(tuple_, foreign)}][1]')}"
                 for i, (index, (foreign, _)) in enumerate(zip(self.lookups, self.keys, strict=True)) if i != j]
        before = self._live(tuple_, [*partners[:j], old, *partners[j + 1:]], old if j == 0 else "")
        after = self._live(tuple_, [*partners[:j], new, *partners[j + 1:]], new if j == 0 else "")
        return [*reads, f"b{u} = {before}", f"a{u} = {after}", f"if b{u} != a{u}:",
                f"    if b{u} is not None:", *indented(self._emit(program, f"b{u}", "-1"), 2),
                f"    if a{u} is not None:", *indented(self._emit(program, f"a{u}", "1"), 2)]

    def _emit(self, program: ProgramText, row: str, weight: str) -> list[str]:
        return program.emit(self.live, row, weight, hot=False)

    def _live(self, row: str, partners: list[str], present: str = "") -> str:
        """Source of the live row of R's row ``row`` (None when not live) given each child's partner as
        source: a name, or an expression read only when the partners before it are not None. ``present``
        names a partner known not to be None (not tested again)."""
        u = self.live.id
        tests, parts = [], [row]
        for j, partner in enumerate(partners, start=1):
            if not partner.isidentifier():
                name = f"pa{u}_{j}"
                tests.append(f"({name} := {partner}) is not None")
                partner = name
            elif partner != present:
                tests.append(f"{partner} is not None")
            parts.append(partner)
        return self.live.stage.live_source(u, parts, tests)

    def _enter_others(self, program: ProgramText, row: str, name: str) -> tuple[list[str], list[str]]:
        """Lines putting R's tuple ``row`` into every index but the home, and each one's partner (names)."""
        lines, partners = [], []
        for j in range(1, len(self.lookups)):
            index, (foreign, rest) = self.lookups[j], self.keys[j]
            key, entry, partner = f"fk{name}_{j + 1}", f"e{name}_{j + 1}", f"pa{name}_{j + 1}"
            lines += [f"{key} = {key_source(row, foreign)}", *_entry(index, entry, key),
                      f"if {entry}[0].setdefault({key_source(row, rest)}, {row}) is not {row}:",
                      f"    _invariant({self.live.stage.name!r}, {row}, 1)",
                      f"{partner} = {index.stage.partner_source(program, f'{entry}[1]')}"]
            partners.append(partner)
        return lines, partners

    def _leave_others(self, program: ProgramText, row: str, name: str) -> tuple[list[str], list[str]]:
        """Lines taking R's tuple ``row`` out of every index but the home (where it is: it was alive on the
        home's child), and each one's partner (names)."""
        lines, partners = [], []
        for j in range(1, len(self.lookups)):
            index, (foreign, rest) = self.lookups[j], self.keys[j]
            key, entry, partner = f"fk{name}_{j + 1}", f"e{name}_{j + 1}", f"pa{name}_{j + 1}"
            lines += [f"{key} = {key_source(row, foreign)}", f"{entry} = _S{index.id}[{key}]",
                      f"del {entry}[0][{key_source(row, rest)}]",
                      f"{partner} = {index.stage.partner_source(program, f'{entry}[1]')}",
                      *_drop_if_empty(index, entry, key)]
            partners.append(partner)
        return lines, partners


def _entry(index: SourceUnit, entry: str, key: str) -> list[str]:
    """Lines binding ``entry`` to the index's entry of ``key``, made if absent."""
    return [f"{entry} = _S{index.id}_get({key})", f"if {entry} is None:", f"    {entry} = _S{index.id}[{key}] = [{{}}, None]"]


def _drop_if_empty(index: SourceUnit, entry: str, key: str) -> list[str]:
    return [f"if not {entry}[0] and {entry}[1] is None:", f"    del _S{index.id}[{key}]"]
