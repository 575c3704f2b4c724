"""The compiled program's foreign-key lookup (AJU's live-tuple lookup, ``ForeignKeyLookupStage``): the
lines applying one change to R or to R's child inline, against the stage's state held as plain dicts
(``_S<unit>``: key → [R's tuples, the child's live row])."""

from __future__ import annotations

from typing import TYPE_CHECKING

from operators.lowering.codegen_relations import child_change
from operators.lowering.source_text import indented, key_source, slot_change, tuple_source
from operators.runtime.compiled.program import Unit
from operators.stages.foreign_key import ForeignKeyLookupStage

if TYPE_CHECKING:
    from operators.lowering.codegen import ProgramWriter


def lookup_change(writer: ProgramWriter, unit: Unit, port: int, row: str, w: str) -> list[str]:
    """One change to R (``PARENT``) or to R's child (``CHILD``); a child change of an index fused
    into its relation walks the relation's tuples instead (codegen_relations.py)."""
    stage: ForeignKeyLookupStage = unit.stage
    keyed = tuples_key(stage)
    empty = "[set(), None]" if keyed is None and not stage.bag else "[{}, None]"
    nulls = writer.expressions.constant((None,) * stage.padding, "nulls") if stage.padding is not None else None
    if port == stage.PARENT:
        return _parent_change(writer, unit, row, w, keyed, empty, nulls)
    if unit.id in writer.fused_lookups:
        lines = child_change(writer, writer.fused_lookups[unit.id], unit, row, w)
    else:
        lines = _child_change(writer, unit, row, w, keyed, empty, nulls)
    if stage.padding is not None:  # a preserved child shows padded whatever its key
        return lines
    # SQL's equality never holds on NULL: a child with a NULL key (a view's NULL group) is no partner
    if not stage.child_key:  # an uncorrelated view's one row: no key to be NULL
        return lines
    null_free = " and ".join(f"{row}[{p}] is not None" for p in stage.child_key)
    return [f"if {null_free}:", *indented(lines)]


def _parent_change(writer: ProgramWriter, unit: Unit, row: str, w: str, keyed: tuple | None, empty: str, nulls: str | None) -> list[str]:
    """A change to R: filed under its key, then extended with the key's live child row if there is one
    (and, for a LEFT JOIN's padding, the padded row retracted or restored when the key's tuples appear
    or vanish)."""
    stage: ForeignKeyLookupStage = unit.stage
    u, parents = unit.id, f"p{unit.id}"
    lines = [f"k{u} = {key_source(row, stage.parent_key)}", f"st{u} = _S{u}_get(k{u})",
             f"if st{u} is None:", f"    st{u} = _S{u}[k{u}] = {empty}", f"{parents} = st{u}[0]"]
    if nulls:
        lines.append(f"had{u} = bool({parents})")
    lines += _parent_membership(stage, u, parents, row, w, keyed)
    lines += [f"m{u} = {writer.partner(stage, f'st{u}[1]')}", f"if m{u} is not None:",
              *indented(writer.emit(unit, f"{row} + m{u}", w, hot=True))]
    if nulls:
        lines += [f"    if had{u} != bool({parents}):",
                  *indented(writer.emit(unit, f"{nulls} + m{u}", f"(1 if had{u} else -1)", hot=False), 2)]
    lines += [f"if not {parents} and st{u}[1] is None:", f"    del _S{u}[k{u}]"]
    return lines


def _child_change(writer: ProgramWriter, unit: Unit, row: str, w: str, keyed: tuple | None, empty: str, nulls: str | None) -> list[str]:
    """A change to R's child: when the key's partner changes, every R tuple of the key changes with it."""
    stage: ForeignKeyLookupStage = unit.stage
    u, parents = unit.id, f"p{unit.id}"
    child = tuple_source(row, stage.child_columns) if stage.child_columns is not None else row
    lines = [f"k{u} = {key_source(row, stage.child_key)}", f"c{u} = {child}", f"st{u} = _S{u}_get(k{u})",
             f"if st{u} is None:", f"    st{u} = _S{u}[k{u}] = {empty}",
             *slot_change(f"st{u}[1]", f"old{u}", f"c{u}", w, stage.name),
             f"before{u} = {writer.partner(stage, f'old{u}')}", f"after{u} = {writer.partner(stage, f'st{u}[1]')}",
             f"if before{u} != after{u}:"]
    if stage.bag:
        body = [f"for q{u}, n{u} in {parents}.items():",
                f"    if before{u} is not None:", *indented(writer.emit(unit, f"q{u} + before{u}", f"-n{u}", False), 2),
                f"    if after{u} is not None:", *indented(writer.emit(unit, f"q{u} + after{u}", f"n{u}", False), 2)]
    else:
        body = [f"for q{u} in {parents}{'' if keyed is None else '.values()'}:",
                f"    if before{u} is not None:", *indented(writer.emit(unit, f"q{u} + before{u}", "-1", False), 2),
                f"    if after{u} is not None:", *indented(writer.emit(unit, f"q{u} + after{u}", "1", False), 2)]
    lines += indented([f"{parents} = st{u}[0]", *body])
    if nulls:
        lines += indented([f"if not {parents}:",
                          f"    if before{u} is not None:", *indented(writer.emit(unit, f"{nulls} + before{u}", "-1", False), 2),
                          f"    if after{u} is not None:", *indented(writer.emit(unit, f"{nulls} + after{u}", "1", False), 2)])
    lines += [f"if not st{u}[0] and st{u}[1] is None:", f"    del _S{u}[k{u}]"]
    return lines


def tuples_key(stage: ForeignKeyLookupStage) -> tuple[int, ...] | None:
    """The positions a lookup's compiled state keys R's tuples of one foreign key by: R's primary key
    without the foreign key's columns (equal within the group), when R's rows hold it; None: a set of
    the tuples, as the stage keeps them. Why not the set: adding or removing a tuple hashes all of it,
    and a DECIMAL's hash is computed anew for every row read (a few hundred ns each; a Q3 lineitem
    tuple carries two), where the key is an int or two and the tuple only compared on a delete.
    On validated input the two hold the same tuples: one per primary key."""
    if stage.bag or stage.row_key is None:
        return None
    return tuple(p for p in stage.row_key if p not in stage.parent_key)


def _parent_membership(stage: ForeignKeyLookupStage, u: int, parents: str, row: str, w: str, keyed: tuple | None) -> list[str]:
    """R's tuple filed in (or out of) its key's tuples: a bag counts copies; keyed tuples take one probe per
    change (a key already taken, or a key of another row, is wrong); a set takes one probe too (an add that
    does not grow it, a remove that misses, is wrong)."""
    invariant = f"_invariant({stage.name!r}, {row}, {w})"
    if stage.bag:
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
