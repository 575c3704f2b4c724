"""Keyed stages that maintain a foreign-key tree join with live tuples (AJU §3.1, §3.3; Cquirrel §2).

A tuple is *alive* when it joins one tuple of every descendant relation. Each relation R emits its
live tuples, extended with the columns of the unique descendants they join (its *subtree row*), to
the stage of its parent; the root's live tuples are the join result. Nothing larger than a base
relation is ever stored: a live tuple's subtree row has one partner per descendant.

Two stage kinds, both order-insensitive within a batch (they diff a key's output before and after):

- ``ForeignKeyLookupStage`` keyed by the foreign key value f: holds the tuples of R with R.fk = f
  (AJU's index I(R, R_c)) and the live tuple of the child with that key. When the child turns alive
  or dies, every R tuple of the group is emitted or retracted: the O(λ) amortized step of AJU.
  For a relation with one child this stage *is* the live-tuple test (s(t) ∈ {0, 1}).
- ``LiveTupleStage`` keyed by R's primary key, for relations with several children: it receives the
  "alive on child j" messages of one lookup stage per child and keeps the counter s(t) of children
  t is alive on; t is live when s(t) = |C(R)| and, in a DAG, every assertion key has one value
  (Lemma 4). Assertion-key values travel in the subtree rows, which carry every descendant's key.
"""

from __future__ import annotations

from operator import itemgetter

from operators.stages.base import Change, KeyedStage, StageDescription, UnchangedOldState, key_getter
from operators.stages.source_text import (
    ProgramText,
    SourceUnit,
    indented,
    key_source,
    slot_change,
    tuple_source,
)
from operators.zset import Changelog, Row, consolidate

# Stage states are plain lists indexed by input port, not classes: the Spark runner pickles every
# key's state on its own, and a class reference in each pickle more than doubled the size of the
# largest states (a live lineitem: 111 bytes as a class, 45 as a list).
#
# Lookup state, I(R, R_c) for one key value: [R's tuples (a set: R has a primary key), the child's
# live subtree row or None]. When R has no primary key (bag semantics) its tuples are a dict
# {row: copies} instead: a row may be present several times.


def _apply_to_set(rows: set, changes: list[tuple[Row, int]], stage: str) -> None:
    """Apply consolidated ±1 changes of rows unique by their primary key to ``rows`` in place; all or,
    if one does not fit, none (a stage's step is atomic, operators/stages/base.py)."""
    changes = consolidate(changes)
    for row, weight in changes:
        if not (weight == -1 and row in rows or weight == 1 and row not in rows):
            raise RuntimeError(f"{stage}: change {row!r} (weight {weight:+d}) does not fit the stored tuples "
                               "(input was not validated)")
    for row, weight in changes:
        if weight == 1:
            rows.add(row)
        else:
            rows.remove(row)


def _apply_to_bag(rows: dict, changes: list[tuple[Row, int]], stage: str) -> None:
    """Apply consolidated changes to a keyless relation's ``{row: copies}`` in place (validated input
    never removes more copies than are present)."""
    for row, weight in consolidate(changes):
        copies = rows.get(row, 0) + weight
        if copies < 0:
            raise RuntimeError(f"{stage}: change {row!r} (weight {weight:+d}) removes more copies than are "
                               "stored (input was not validated)")
        if copies:
            rows[row] = copies
        else:
            del rows[row]


class ForeignKeyLookupStage(KeyedStage):
    """Join R's tuples (port 0) with the live child tuple of the same key (port 1), keyed by the key.

    Output rows are ``parent row + child subtree row``, the child row cut to ``child_columns`` (the
    positions something above still reads; None: all), which is also all the stage keeps of it.
    """

    PARENT, CHILD = 0, 1
    codegen_kind = "lookup"

    def __init__(self, name: str, parent_key: tuple[int, ...], child_key: tuple[int, ...],
                 output_columns: tuple[str, ...], description: StageDescription, anti: bool = False,
                 preserve_child_padding: int | None = None, optional_width: int | None = None,
                 child_columns: tuple[int, ...] | None = None, bag: bool = False,
                 row_key: tuple[int, ...] | None = None):
        self.name = name
        # bag: R has no primary key, so its tuples are counted copies (see _apply_to_bag)
        self.bag = bag
        # the positions of R's primary key in R's rows (None: not all in them, or no key): this stage keeps
        # R's tuples as a set; the compiled program keys them by it instead (codegen.py says why)
        self.row_key = row_key
        self.child_columns = child_columns
        # optional: the parent is alive with or without a child, extended by NULLs without one
        self.optional_width = optional_width
        # anti: the parent is alive when NO child has its key (NOT EXISTS / NOT IN) and gains no columns
        self.anti = anti
        # LEFT OUTER JOIN preserving the child: a child tuple with no parent shows once, the parent's
        # ``preserve_child_padding`` columns NULL (Q13's customers without orders)
        self.padding = preserve_child_padding
        self.parent_key = parent_key
        self.child_key = child_key
        self.output_columns = output_columns
        self.description = description
        self._parent_key = key_getter(parent_key)
        self._child_key = key_getter(child_key)

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_parent_key"], state["_child_key"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._parent_key = key_getter(self.parent_key)
        self._child_key = key_getter(self.child_key)

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(self._parent_key(row) if port == self.PARENT else self._child_key(row))

    def key_function(self, port: int):
        return self._parent_key if port == self.PARENT else self._child_key

    def process(self, key: tuple, state: list | None, changes: list[Change]) -> tuple[list | None, Changelog]:
        state = state or [{} if self.bag else set(), None]  # [parents, child]: slot = input port
        parents = state[self.PARENT]
        before = self._partner(state)
        parent_changes = [(c.row, c.weight) for c in changes if c.port == self.PARENT]
        # SQL's equality never holds on NULL: a child with a NULL key (a view's NULL group; a table's key
        # is never NULL) is no partner, unless this stage preserves the child (its padded row shows)
        child_changes = [] if self.padding is None and None in key else [
            (c.row, c.weight) for c in changes if c.port == self.CHILD]
        if self.child_columns is not None and child_changes:
            child_changes = [(tuple(row[p] for p in self.child_columns), w) for row, w in child_changes]
        old_parents = parents.copy() if child_changes else parents
        had_parents = bool(parents)
        child = _slot_after(state[self.CHILD], child_changes, self.name)  # may raise: before any change
        (_apply_to_bag if self.bag else _apply_to_set)(parents, parent_changes, self.name)
        state[self.CHILD] = child
        after = self._partner(state)
        if before == after:
            # Child unchanged: only the changed parent tuples enter or leave the result.
            out = [(row + after, w) for row, w in parent_changes] if after is not None else []
        else:
            # Child turned alive, died or changed: the whole group is retracted and re-emitted
            # (each copy of a keyless R tuple counts).
            copies = old_parents.items() if self.bag else ((row, 1) for row in old_parents)
            out = [(row + before, -n) for row, n in copies] if before is not None else []
            if after is not None:
                copies = parents.items() if self.bag else ((row, 1) for row in parents)
                out.extend((row + after, n) for row, n in copies)
        if self.padding is not None:
            out.extend(self._padding_changes(before, had_parents, after, bool(parents)))
        new_state = state if (parents or state[self.CHILD] is not None) else None
        # No consolidation: with the child unchanged each parent change maps to one distinct row, and
        # with it changed old and new rows differ in the child part (downstream sums weights anyway).
        return new_state, out

    def _padding_changes(self, before, had_parents: bool, after, has_parents: bool) -> Changelog:
        """The NULL-padded row of a preserved child: present while the child is and no parent is."""
        nulls = (None,) * self.padding
        old = nulls + before if before is not None and not had_parents else None
        new = nulls + after if after is not None and not has_parents else None
        if old == new:
            return []
        return ([(old, -1)] if old is not None else []) + ([(new, 1)] if new is not None else [])

    def _partner(self, state: list) -> Row | None:
        """What a parent of this key is extended with when alive, or None when it is not alive."""
        child = state[self.CHILD]
        if self.anti:
            return () if child is None else None
        if child is None and self.optional_width is not None:
            return (None,) * self.optional_width
        return child

    def describe(self) -> StageDescription:
        return self.description

    # -- the compiled program's template (operators/lowering/codegen.py assembles it) --------------

    def source(self, program: ProgramText, unit: SourceUnit, port: int, row: str, w: str) -> list[str]:
        """The compiled program's lines applying one change (``row``, ``w``: names) to R (``PARENT``) or
        to R's child (``CHILD``), ``process`` one change at a time against the state ``_S<unit>``: key →
        [R's tuples, the child's live row]; a child change of an index fused into its relation walks the
        relation's tuples instead (``FusedRelation.child_source``, operators/stages/live_relation.py)."""
        stage = self
        keyed = self.tuples_key
        empty = "[set(), None]" if keyed is None and not stage.bag else "[{}, None]"
        nulls = program.constant((None,) * stage.padding, "nulls") if stage.padding is not None else None
        if port == stage.PARENT:
            return self._parent_change(program, unit, row, w, keyed, empty, nulls)
        relation = program.relation_of(unit)
        if relation is None:
            lines = self._child_change(program, unit, row, w, keyed, empty, nulls)
        else:
            lines = relation.child_source(program, unit, row, w)
        if stage.padding is not None:  # a preserved child shows padded whatever its key
            return lines
        # SQL's equality never holds on NULL: a child with a NULL key (a view's NULL group) is no partner
        if not stage.child_key:  # an uncorrelated view's one row: no key to be NULL
            return lines
        null_free = " and ".join(f"{row}[{p}] is not None" for p in stage.child_key)
        return [f"if {null_free}:", *indented(lines)]


    def _parent_change(self, program: ProgramText, unit: SourceUnit, row: str, w: str, keyed: tuple | None, empty: str,
                       nulls: str | None) -> list[str]:
        """A change to R: filed under its key, then extended with the key's live child row if there is one
        (and, for a LEFT JOIN's padding, the padded row retracted or restored when the key's tuples appear
        or vanish)."""
        stage = self
        u, parents = unit.id, f"p{unit.id}"
        lines = [f"k{u} = {key_source(row, stage.parent_key)}", f"st{u} = _S{u}_get(k{u})",
                 f"if st{u} is None:", f"    st{u} = _S{u}[k{u}] = {empty}", f"{parents} = st{u}[0]"]
        if nulls:
            lines.append(f"had{u} = bool({parents})")
        lines += self._parent_membership(u, parents, row, w, keyed)
        lines += [f"m{u} = {self.partner_source(program, f'st{u}[1]')}", f"if m{u} is not None:",
                  *indented(program.emit(unit, f"{row} + m{u}", w, hot=True))]
        if nulls:
            lines += [f"    if had{u} != bool({parents}):",
                      *indented(program.emit(unit, f"{nulls} + m{u}", f"(1 if had{u} else -1)", hot=False), 2)]
        lines += [f"if not {parents} and st{u}[1] is None:", f"    del _S{u}[k{u}]"]
        return lines


    def _child_change(self, program: ProgramText, unit: SourceUnit, row: str, w: str, keyed: tuple | None, empty: str,
                      nulls: str | None) -> list[str]:
        """A change to R's child: when the key's partner changes, every R tuple of the key changes with it."""
        stage = self
        u, parents = unit.id, f"p{unit.id}"
        child = tuple_source(row, stage.child_columns) if stage.child_columns is not None else row
        lines = [f"k{u} = {key_source(row, stage.child_key)}", f"c{u} = {child}", f"st{u} = _S{u}_get(k{u})",
                 f"if st{u} is None:", f"    st{u} = _S{u}[k{u}] = {empty}",
                 *slot_change(f"st{u}[1]", f"old{u}", f"c{u}", w, stage.name),
                 f"before{u} = {self.partner_source(program, f'old{u}')}", f"after{u} = {self.partner_source(program, f'st{u}[1]')}",
                 f"if before{u} != after{u}:"]
        if stage.bag:
            body = [f"for q{u}, n{u} in {parents}.items():",
                    f"    if before{u} is not None:", *indented(program.emit(unit, f"q{u} + before{u}", f"-n{u}", False), 2),
                    f"    if after{u} is not None:", *indented(program.emit(unit, f"q{u} + after{u}", f"n{u}", False), 2)]
        else:
            body = [f"for q{u} in {parents}{'' if keyed is None else '.values()'}:",
                    f"    if before{u} is not None:", *indented(program.emit(unit, f"q{u} + before{u}", "-1", False), 2),
                    f"    if after{u} is not None:", *indented(program.emit(unit, f"q{u} + after{u}", "1", False), 2)]
        lines += indented([f"{parents} = st{u}[0]", *body])
        if nulls:
            lines += indented([f"if not {parents}:",
                              f"    if before{u} is not None:", *indented(program.emit(unit, f"{nulls} + before{u}", "-1", False), 2),
                              f"    if after{u} is not None:", *indented(program.emit(unit, f"{nulls} + after{u}", "1", False), 2)])
        lines += [f"if not st{u}[0] and st{u}[1] is None:", f"    del _S{u}[k{u}]"]
        return lines


    @property
    def tuples_key(self) -> tuple[int, ...] | None:
        """The positions a lookup's compiled state keys R's tuples of one foreign key by: R's primary key
        without the foreign key's columns (equal within the group), when R's rows hold it; None: a set of
        the tuples, as the stage keeps them. Why not the set: adding or removing a tuple hashes all of it,
        and a DECIMAL's hash is computed anew for every row read (a few hundred ns each; a Q3 lineitem
        tuple carries two), where the key is an int or two and the tuple only compared on a delete.
        On validated input the two hold the same tuples: one per primary key."""
        if self.bag or self.row_key is None:
            return None
        return tuple(p for p in self.row_key if p not in self.parent_key)


    def _parent_membership(self, u: int, parents: str, row: str, w: str, keyed: tuple | None) -> list[str]:
        """R's tuple filed in (or out of) its key's tuples: a bag counts copies; keyed tuples take one probe per
        change (a key already taken, or a key of another row, is wrong); a set takes one probe too (an add that
        does not grow it, a remove that misses, is wrong)."""
        invariant = f"_invariant({self.name!r}, {row}, {w})"
        if self.bag:
            return [f"n{u} = {parents}.get({row}, 0) + {w}", f"if n{u} > 0:", f"    {parents}[{row}] = n{u}",
                    f"elif n{u} == 0:", f"    del {parents}[{row}]", "else:", f"    {invariant}"]
        if keyed is not None:
            tuple_key = key_source(row, keyed) if keyed else "()"
            return [f"if {w} == 1:", f"    if {parents}.setdefault({tuple_key}, {row}) is not {row}:", f"        {invariant}",
                    f"elif {w} == -1:", f"    if {parents}.pop({tuple_key}, None) != {row}:", f"        {invariant}",
                    "else:", f"    {invariant}"]
        size = f"n{u}"
        return [f"if {w} == 1:", f"    {size} = len({parents})", f"    {parents}.add({row})",
                f"    if len({parents}) == {size}:", f"        {invariant}",
                f"elif {w} == -1:", "    try:", f"        {parents}.remove({row})",
                "    except KeyError:", f"        {invariant}", "else:", f"    {invariant}"]


    def partner_source(self, program: ProgramText, child: str) -> str:
        """Source of what R's tuples of a key are extended with when alive, given the child's live row
        (``child``, None when there is none); None when they are not alive (``_partner``)."""
        if self.anti:
            return f"(() if {child} is None else None)"
        if self.optional_width is not None:
            nulls = program.constant((None,) * self.optional_width, "nulls")
            return f"({child} if {child} is not None else {nulls})"
        return child


def _slot_after(slot: Row | None, changes: list[tuple[Row, int]], stage: str) -> Row | None:
    """A primary key's one row after ``changes`` (consolidated: deletes first, each ±1 on valid input)."""
    for row, weight in consolidate(changes):
        if weight == -1 and slot == row:
            slot = None
        elif weight == 1 and slot is None:
            slot = row
        else:
            raise RuntimeError(f"{stage}: change {row!r} (weight {weight:+d}) conflicts with the key's row {slot!r}: "
                               "several live tuples share one primary key (input was not validated)")
    return slot


def live_row(state: list, assertions: tuple[tuple[int, ...], ...] = ()) -> Row | None:
    """A live-tuple state ``[t's row, the subtree row t is alive on for child 1, ..., child k]`` (None
    where absent) as t extended with its children's subtree rows when s(t) = |C(R)| and no
    assertion key is ⊥; else None. R's key and each child's key are primary keys: one row each."""
    row = state[0]
    if row is None:
        return None
    for partner in state[1:]:
        if partner is None:
            return None
        row = row + partner
    # Each group holds the positions of one assertion-key column reached along different paths:
    # different values mean different tuples, Definition 3's ⊥, and t is not live (Lemma 4).
    for positions in assertions:
        first = row[positions[0]]
        if any(row[p] != first for p in positions[1:]):
            return None
    return row


class LiveTupleStage(UnchangedOldState, KeyedStage):
    """Keyed by R's primary key: R's tuples on port 0, "alive on child j" messages on port j (1-based).

    A message row is ``R's key + child j's subtree row``; its key prefix routes it here.
    """

    codegen_kind = "live"

    def __init__(self, name: str, row_key: tuple[int, ...], key_width: int, prefix_widths: tuple[int, ...],
                 output_columns: tuple[str, ...], description: StageDescription,
                 assertions: tuple[tuple[int, ...], ...] = ()):
        self.name = name
        self.assertions = assertions  # groups of output positions that must hold equal values
        self.row_key = row_key
        self.key_width = key_width
        # message on port j = R's key (+ child j's foreign key columns): prefix_widths[j-1] columns
        self.prefix_widths = prefix_widths
        self.children = len(prefix_widths)
        self.output_columns = output_columns
        self.description = description
        self._row_key = key_getter(row_key)

    def __getstate__(self):
        state = dict(self.__dict__)
        del state["_row_key"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._row_key = key_getter(self.row_key)

    def key_of(self, port: int, row: Row) -> tuple:
        return tuple(self._row_key(row)) if port == 0 else row[: self.key_width]

    def key_function(self, port: int):
        return self._row_key if port == 0 else itemgetter(slice(0, self.key_width))

    def process(self, key: tuple, state: list | None, changes: list[Change]) -> tuple[list | None, Changelog]:
        # see live_row: slot = input port. A new list (a few slots): undo returns the old one untouched
        state = list(state) if state else [None] * (1 + self.children)
        before = live_row(state, self.assertions)
        by_port: dict[int, list[tuple[Row, int]]] = {}
        for change in changes:
            row = change.row if change.port == 0 else change.row[self.prefix_widths[change.port - 1] :]
            by_port.setdefault(change.port, []).append((row, change.weight))
        for port, port_changes in by_port.items():
            state[port] = _slot_after(state[port], port_changes, self.name)
        after = live_row(state, self.assertions)
        # t leaves L(R) (Algorithm 4) and/or enters it (Algorithm 2); equal rows cancel
        out = [] if before == after else [(r, w) for r, w in ((before, -1), (after, 1)) if r is not None]
        empty = all(slot is None for slot in state)
        return (None if empty else state), out

    def describe(self) -> StageDescription:
        return self.description

    def source(self, program: ProgramText, unit: SourceUnit, port: int, row: str, w: str) -> list[str]:
        """The compiled program's lines applying one change (``row``, ``w``: names) arriving on ``port``,
        ``process`` one change at a time: the state ``_S<unit>`` maps R's key to its slots [R's tuple,
        child 1's row, ...], and the live row is compared before and after the change."""
        stage = self
        if port == 0:
            key, payload = key_source(row, stage.row_key), row
        else:
            key, payload = key_source(row, tuple(range(stage.key_width))), f"{row}[{stage.prefix_widths[port - 1]}:]"
        return [*self._live_open(unit, key), f"c{unit.id} = {payload}", *self._live_slot(unit, port, f"c{unit.id}", w),
                *self._live_close(program, unit)]

    def _live_open(self, unit: SourceUnit, key: str) -> list[str]:
        """The live-tuple state of ``key`` (made if absent) and its live row before the change."""
        u = unit.id
        return [f"k{u} = {key}", f"st{u} = _S{u}_get(k{u})", f"if st{u} is None:",
                f"    st{u} = _S{u}[k{u}] = [None] * {1 + self.children}", f"before{u} = {self._live_row(unit)}"]

    def _live_slot(self, unit: SourceUnit, port: int, payload: str, w: str) -> list[str]:
        """Slot ``port`` takes (w = 1) or gives back (w = -1) ``payload``: R's tuple or a child's subtree row."""
        return slot_change(f"st{unit.id}[{port}]", f"old{unit.id}", payload, w, self.name)

    def _live_close(self, program: ProgramText, unit: SourceUnit) -> list[str]:
        """The live row after the change: t leaves and/or enters L(R) (AJU Algorithms 2 and 4)."""
        u, slots = unit.id, 1 + self.children
        return [f"after{u} = {self._live_row(unit)}", f"if before{u} != after{u}:",
                f"    if before{u} is not None:", *indented(program.emit(unit, f"before{u}", "-1", False), 2),
                f"    if after{u} is not None:", *indented(program.emit(unit, f"after{u}", "1", True), 2),
                f"if st{u}.count(None) == {slots}:", f"    del _S{u}[k{u}]"]

    def _live_row(self, unit: SourceUnit) -> str:
        """Source of ``live_row`` over the unit's state ``st<u>``."""
        slots = range(1 + self.children)
        return self.live_source(unit.id, [f"st{unit.id}[{i}]" for i in slots], [f"st{unit.id}[{i}] is not None" for i in slots])

    def live_source(self, u: int, parts: list[str], tests: list[str]) -> str:
        """Source of the live row joined of ``parts`` (R's row, then each child's row) when every one of
        ``tests`` holds and every assertion key holds one value along all its paths (Lemma 4), compared in
        the joined row; else None. Also the fused relation's (operators/stages/live_relation.py)."""
        joined = " + ".join(parts)
        if self.assertions:
            row = f"lr{u}"
            tests = [*tests, f"({row} := {joined}) is not None",
                     *(f"{row}[{positions[0]}] == {row}[{other}]" for positions in self.assertions for other in positions[1:])]
            joined = row
        return f"({joined} if {' and '.join(tests)} else None)" if tests else f"({joined})"
