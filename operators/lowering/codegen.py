"""Generate the Python source of a lowered dataflow: one function per input table (issue 13).

Why: the generic runner turns every change into a ``Change``, groups it by key, splits it by port
inside the stage and re-wraps it between stages: about ten allocations and several dict probes per
update and stage, where a hand-written delta loop does two dict probes. As Catalyst's whole-stage
code generation and DBToaster's triggers do, the plan is written out once per view as specialized
Python and ``compile()``d: constant tuple positions, expressions as inline source
(expr_source.py), state dicts bound as locals, no per-row wrapper objects.

Shape of the program. Each stage kind's code is written by the stage class itself, beside the
``process`` it compiles (``source`` for one change applied inline, ``batch_source`` for a buffered
batch; ``codegen_kind`` says which): this module assembles them into functions and holds no stage
logic. Stages fall in three groups:

- *inline* stages (the foreign-key lookup and live-tuple stages of AJU, the binary join) evaluate no
  expression and cannot fail on validated input. They process one change at a time: a change is
  pushed through every inline stage it reaches inside the table's function, each stage's usual
  output (a parent tuple joining its live child, a tuple turning live) written *inline* into the
  code of the stage before, the rarer outputs (a child turning live re-emits its whole group) by a
  call to the next stage's function;
- *buffered* stages (ring aggregates, the stateless map) evaluate expressions, which can raise
  (overflow, division by zero). Their input is collected in a list during the batch and applied
  after their inputs are complete, so an error leaves every inline stage complete for each change;
- every other stage (top-k, the nested-aggregate stages, join-select, MIN/MAX aggregates) is
  *generic*: it runs through its ``KeyedStage.process`` as on the generic runner, from a buffer too.

Applying a batch's changes one at a time instead of per key gives the same result: each change of
a base table is valid against the tables as changed so far (the validator checks them in that
order), so every stage's state after each change is the state of a real database, and the result's
changes telescope to the batch's. operators/runtime/compiled/runner.py says how a failed batch is undone.

Each table the validator writes at once (``write_program``'s ``checked``) also gets a *checked*
function for a stream batch of one change: the validator's key and set-semantics probe of the
change, then its steps, straight-line (``_checked_function``), so the runner validates and runs such
a batch with one call (``CompiledRunner.run_one``).

The generic stage classes stay the specification (and the Spark runner's code): the tests run both
paths over the same streams and require identical output.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping

from operators.lowering.expr_source import SourceWriter
from operators.runtime.compiled.program import RESULT, Program, Unit
from operators.runtime.dataflow import Dataflow, SourceRoute
from operators.runtime.packed_keys import MAX_WIDTH, PackedRowKey, RowKey
from operators.stages.base import Change
from operators.stages.foreign_key import ForeignKeyLookupStage
from operators.stages.live_relation import FusedRelation, index_keys
from operators.stages.source_text import indented, key_source, tuple_source


def units_of(dataflow: Dataflow) -> tuple[tuple[Unit, ...], dict[int, int]]:
    """The dataflow's units in topological order, and the unit each stage id's input enters."""
    chains = [(node, node.stage.chain()) for node in dataflow.stages]
    entry, next_id = {}, 0
    for node, chain in chains:
        entry[node.id] = next_id
        next_id += len(chain)
    units = []
    for node, chain in chains:
        for position, (stage, port) in enumerate(chain):
            uid = entry[node.id] + position
            if position + 1 < len(chain):
                downstream, port_in = uid + 1, port
            elif node.downstream is None:
                downstream, port_in = RESULT, 0
            else:
                downstream, port_in = entry[node.downstream], node.downstream_port
            units.append(Unit(uid, stage, stage.codegen_kind, downstream, port_in))
    return tuple(units), entry


def fused_relations(units: tuple[Unit, ...], entry: dict[int, int],
                    sources: tuple[SourceRoute, ...]) -> dict[int, FusedRelation]:
    """The live-tuple units run fused with the index units feeding them, by unit id: those whose every
    index is fed R's changes by R's own table, on the route (and selection) feeding the live-tuple unit,
    and keeps them as ``index_keys`` allows (operators/stages/live_relation.py says why and how)."""
    relations = {}
    for live in units:
        if live.kind != "live":
            continue
        feeding = sorted((u for u in units if u.downstream == live.id), key=lambda u: u.port)
        live_routes = [r for r in sources if entry[r.stage] == live.id]
        if ([u.port for u in feeding] != list(range(1, live.stage.children + 1)) or len(live_routes) != 1
                or live_routes[0].port != 0):
            continue
        keys = []
        for lookup in feeding:
            parents = [r for r in sources if entry[r.stage] == lookup.id and r.port == ForeignKeyLookupStage.PARENT]
            fed_by_stage = any(u.downstream == lookup.id and u.port == ForeignKeyLookupStage.PARENT for u in units)
            if (lookup.kind != "lookup" or fed_by_stage or len(parents) != 1 or parents[0].table != live_routes[0].table
                    or parents[0].predicate_text != live_routes[0].predicate_text):
                break
            keys.append(index_keys(lookup.stage, live.stage, lookup.port, parents[0].columns, live_routes[0].columns))
        if len(keys) == len(feeding) and None not in keys:
            relations[live.id] = FusedRelation(live, tuple(feeding), tuple(keys))
    return relations


def _table_loop(loop: str, checks: list[str], pushes: list[str]) -> list[str]:
    """A table function's loop (``loop``: its ``for`` line) over validated changes: a selection that
    raises does so before its change touched any stage, and ``_FAILED`` says how many did (no count
    when no route has a selection)."""
    if not checks:
        return [loop, *indented(pushes)]
    return ["done = 0", loop, "    try:", *indented(checks, 2), "    except BaseException:", "        _FAILED[0] = done",
            "        raise", *indented(pushes), "    done += 1"]


def _probe(stop: str) -> list[str]:
    """``validate_probe.store_changes``'s probe of the validator's ``state`` for one change (``w``, ``key``,
    ``fingerprint``), ``stop`` (a statement) at a change that is not plainly valid, with nothing written.
    Two probes of the dict where the loop makes one: the second hits what the first brought into the
    cache, and binding ``setdefault``/``pop`` first cost more at a batch of one change."""
    return ["if w == 1:", "    if key in state:", f"        {stop}", "    state[key] = fingerprint",
            "elif w == -1:", "    if state.get(key) != fingerprint:", f"        {stop}", "    del state[key]",
            "else:", f"    {stop}"]


def validator_key(row_key: RowKey, stop: str) -> list[str]:
    """Lines setting ``key`` to ``row_key.of(row)``, the key the validator stores ``row`` under, with a
    packed key's packing inline as ``validate_probe.store_changes`` has it (``width``, ``limit``: the packing's
    current width and ``1 << width``), or ``stop`` (a statement) at a ``b`` the key would pack once
    widened (``PackedRowKey.fit``, which the general path runs); a ``b`` no widening packs (negative, or
    past ``MAX_WIDTH`` bits) stays the tuple, as in ``PackedRowKey.of``. A value that is not an int
    raises TypeError before anything is written."""
    if not isinstance(row_key, PackedRowKey):
        return [f"key = {key_source('row', row_key.positions)}"]
    first, second = row_key.positions
    return [f"b = row[{second}]", "if 0 <= b < limit:", f"    key = (row[{first}] << width) | b",
            f"elif 0 <= b < {1 << MAX_WIDTH}:", f"    {stop}", "else:", f"    key = (row[{first}], b)"]


def _invariant(stage: str, row: tuple, weight: int) -> None:
    """What a compiled inline stage raises when a change does not fit its state (never after validation)."""
    raise RuntimeError(f"{stage}: change {row!r} (weight {weight:+d}) does not fit the stage's state "
                       "(input was not validated)")


class ProgramWriter:
    """Writes the program of one dataflow (``write``); see the module docstring for its shape."""

    def __init__(self, dataflow: Dataflow, checked: Mapping[str, RowKey]):
        self.dataflow = dataflow
        self.checked = checked
        self.units, self.entry = units_of(dataflow)
        self.namespace: dict[str, object] = {
            "_Change": Change, "_invariant": _invariant,
            # a table's selection that raises writes here how many of the table's changes went through
            # every inline stage (the runner undoes exactly those): the failing one went through none
            "_FAILED": [None],
        }
        self.expressions = SourceWriter(self.namespace)
        self.states = {unit.id: {} for unit in self.units}
        self.buffers: dict[int, list] = {unit.id: [] for unit in self.units if not unit.inline}
        self.buffers[RESULT] = []
        for uid, state in self.states.items():
            self.namespace[f"_S{uid}"] = state
        for uid, buffer in self.buffers.items():
            self.namespace[f"_B{uid}" if uid != RESULT else "_OUT"] = buffer
        self._called: set[tuple[int, int]] = set()
        self.relations = fused_relations(self.units, self.entry, dataflow.sources)
        self.fused_lookups = {lookup.id: relation for relation in self.relations.values() for lookup in relation.lookups}

    # -- emitting a change to the next unit ------------------------------------------------------------

    def emit(self, unit: Unit, row: str, weight: str, hot: bool) -> list[str]:
        """Lines sending (row, weight) from ``unit`` downstream: inline into an inline unit when ``hot``,
        else by a call to that unit's function; appended to a buffer otherwise."""
        target = unit.downstream
        if target == RESULT:
            return [f"_OUT_append(({row}, {weight}))"]
        downstream = self.units[target]
        if not downstream.inline:
            if downstream.kind == "generic":
                return [f"_B{target}_append(_Change({unit.port}, {row}, {weight}))"]
            return [f"_B{target}_append(({row}, {weight}))"]
        if not hot:
            self._called.add((target, unit.port))
            return [f"_push{target}_{unit.port}({row}, {weight})"]
        name = f"r{target}"
        return [f"{name} = {row}", *self._push(downstream, unit.port, name, weight)]

    def _push(self, unit: Unit, port: int, row: str, weight: str) -> list[str]:
        """Lines applying one change (``row``, ``weight``: names) arriving at ``unit`` on ``port``."""
        return unit.stage.source(self, unit, port, row, weight)

    # -- what a stage's template asks of the program (operators/stages/source_text.py's ProgramText) ----

    def bind(self, name: str, value: object) -> None:
        self.namespace[name] = value

    def constant(self, value: object, hint: str) -> str:
        return self.expressions.constant(value, hint)

    def value_of(self, function: Callable, row: str) -> str:
        return self.expressions.value_of(function, row)

    def keeps(self, function: Callable, row: str) -> str:
        return self.expressions.keeps(function, row)

    def relation_of(self, unit: Unit) -> FusedRelation | None:
        return self.fused_lookups.get(unit.id)

    # -- functions -----------------------------------------------------------------------------------

    def _function(self, name: str, parameters: str, body: list[str]) -> str:
        """A function binding every program name its body reads as a default argument (a fast local)."""
        text = "\n".join(body)
        bound = []
        for used in sorted(set(re.findall(r"\b_[A-Za-z]+\d*(?:_append|_get)?\b", text))):
            base = used.removesuffix("_append").removesuffix("_get")
            if used.endswith("_append") and base in self.namespace:
                bound.append(f"{used}={base}.append")
            elif used.endswith("_get") and base in self.namespace:
                bound.append(f"{used}={base}.get")
            elif used in self.namespace:
                bound.append(f"{used}={used}")
        signature = ", ".join([parameters, *bound])
        return f"def {name}({signature}):\n" + "\n".join(indented(body)) + "\n"

    def _table_steps(self, routes: list[SourceRoute]) -> tuple[list[str], list[str]]:
        """A change's lines in the table's function: every selection of the table's routes (``keep<i>``),
        evaluated first, then the change pushed down each route it passed. Routes without a selection
        take every change, untested."""
        checks, pushes = [], []
        fused = self._fused_routes(routes)
        taken = {j for lookups in fused.values() for j in lookups}
        for i, route in enumerate(routes):
            if route.predicate is not None:
                checks.append(f"keep{i} = {self.expressions.keeps(route.predicate, 'row')}")
            if i in taken:
                continue
            unit = self.units[self.entry[route.stage]]
            if i in fused:
                push = self._fused_live(routes, i, fused[i])
            else:
                push = [f"s{i} = {tuple_source('row', route.columns)}", *self._push_or_buffer(unit, route.port, f"s{i}")]
            pushes += push if route.predicate is None else [f"if keep{i}:", *indented(push)]
        return checks, pushes

    def _table_function(self, table: str, checks: list[str], pushes: list[str]) -> str:
        """The table's function over validated changes (``_table_loop``)."""
        return self._function(f"_table_{table}", "changes", _table_loop("for row, w in changes:", checks, pushes))

    def _checked_function(self, table: str, checks: list[str], pushes: list[str], row_key: RowKey) -> str:
        """The table's function for a stream batch of one change with the validator's check (issue 13):
        straight-line code computing the change's validator key (``validator_key``) and making
        ``store_changes``'s probe of the validator's ``state`` (set semantics: an insert's key absent, a
        delete's stored fingerprint its own), then the table's steps for the change. It returns 0 at a
        change that is not plainly valid, having written nothing and run no stage; else 1 when the change
        stayed in the inline stages, 2 when it reached a buffer or the result (the runner then finishes
        the batch). A selection that raises takes back the probe's write and leaves ``_FAILED`` at 0.
        The caller (``CompiledRunner.run_one``) then lets the general path word the reason or raise, so
        reasons and policies stay ``Validator.validate``'s. Batches of several changes take
        ``Validator.validate``'s probe (``validate_probe.store_changes``) and the table's function: the
        same probe in one Python loop, as fast as generated code at a batch of 10 000, where the call
        per batch is nothing."""
        body = []
        if isinstance(row_key, PackedRowKey):
            body.append("limit = 1 << width")
        # a key value that cannot be hashed or packed raises TypeError before the probe wrote anything
        body += ["try:", *indented(validator_key(row_key, "return 0") + _probe("return 0")), "except TypeError:",
                 "    return 0"]
        if checks:
            # a selection that raises takes back the probe's write (w is ±1 past the probe): nothing written
            body += ["try:", *indented(checks), "except BaseException:", "    _FAILED[0] = 0", "    if w == 1:",
                     "        del state[key]", "    else:", "        state[key] = fingerprint", "    raise"]
        pending = " or ".join(f"_B{uid}" if uid != RESULT else "_OUT" for uid in self.buffers)
        body += [*pushes, f"return 2 if {pending} else 1"]
        return self._function(f"_checked_{table}", "row, w, fingerprint, state, width", body)

    def _fused_routes(self, routes: list[SourceRoute]) -> dict[int, list[int]]:
        """The table's routes into a fused relation (``fused_relations``): its live-tuple route → its index
        routes in port order."""
        fused = {}
        for i, route in enumerate(routes):
            relation = self.relations.get(self.entry[route.stage])
            if relation is None:
                continue
            ids = [lookup.id for lookup in relation.lookups]
            fused[i] = sorted((j for j, other in enumerate(routes) if self.entry[other.stage] in ids),
                              key=lambda j: ids.index(self.entry[routes[j].stage]))
        return fused

    def _fused_live(self, routes: list[SourceRoute], live_route: int, lookups: list[int]) -> list[str]:
        """One change of R through its fused relation: each index and the live tuple in one step."""
        relation = self.relations[self.entry[routes[live_route].stage]]
        return [f"s{live_route} = {tuple_source('row', routes[live_route].columns)}",
                *relation.change_source(self, f"s{live_route}")]

    def _push_or_buffer(self, unit: Unit, port: int, row: str) -> list[str]:
        """A change entering ``unit`` from outside the inline code (a table, a buffered unit's output)."""
        if unit.inline:
            return self._push(unit, port, row, "w")
        if unit.kind == "generic":
            return [f"_B{unit.id}_append(_Change({port}, {row}, w))"]
        return [f"_B{unit.id}_append(({row}, w))"]

    def _ring_function(self, unit: Unit) -> str:
        return self._function(f"_ring{unit.id}", "buffer, touched", unit.stage.batch_source(self, unit))

    def write(self) -> Program:
        functions = []
        by_table: dict[str, list[SourceRoute]] = {}
        for route in self.dataflow.sources:
            by_table.setdefault(route.table, []).append(route)
        tables = {table: f"_table_{table}" for table in by_table}
        checked = {table: f"_checked_{table}" for table in by_table if table in self.checked}
        for table, routes in by_table.items():
            checks, pushes = self._table_steps(routes)
            functions.append(self._table_function(table, checks, pushes))
            if table in checked:
                functions.append(self._checked_function(table, checks, pushes, self.checked[table]))
        rings = {unit.id: f"_ring{unit.id}" for unit in self.units if unit.kind == "ring"}
        functions += [self._ring_function(self.units[uid]) for uid in rings]
        entries = {}
        for unit in self.units:
            if not unit.inline and unit.downstream != RESULT and self.units[unit.downstream].inline:
                target = self.units[unit.downstream]
                entries[(target.id, unit.port)] = name = f"_enter{target.id}_{unit.port}"
                functions.append(self._function(name, "changes", ["for row, w in changes:",
                                                                   *indented(self._push(target, unit.port, "row", "w"))]))
        functions += list(self._called_functions())
        # the cold emissions' functions are read as globals when called, so the order does not matter
        source = "\n\n".join(functions)
        exec(compile(source, "<maintenance program>", "exec"), self.namespace)  # noqa: S102
        name = self.namespace.__getitem__
        return Program(source, self.units, {t: name(f) for t, f in tables.items()},
                       {k: name(f) for k, f in entries.items()}, {u: name(f) for u, f in rings.items()},
                       self.namespace["_FAILED"], self.states, self.buffers, self.relations,
                       {t: name(f) for t, f in checked.items()})

    def _called_functions(self) -> Iterator[str]:
        """The functions of inline units that other code calls (the cold emissions), each written once;
        writing one may call for another (its own cold emissions)."""
        written: set[tuple[int, int]] = set()
        while pending := self._called - written:
            target, port = min(pending)
            written.add((target, port))
            body = self._push(self.units[target], port, "row", "w")
            yield self._function(f"_push{target}_{port}", "row, w", body)


def write_program(dataflow: Dataflow, checked: Mapping[str, RowKey] | None = None) -> Program:
    """The dataflow's program, compiled and ready to run (``CompiledRunner`` runs it). ``checked``: the
    tables the validator stores at once (``Validator.storable``) with their validator keys; each also
    gets a function fused with the validator's check (``ProgramWriter._checked_function``)."""
    return ProgramWriter(dataflow, checked or {}).write()

