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
