"""Write a compiled expression as inline Python source, for the local runner's plan compiler.

``expr_eval`` turns an expression into nested closures: one Python call per node and row, which on
TPC-H Q3's ``l_extendedprice * (1 - l_discount)`` costs 3.6 µs per row where the arithmetic itself
costs 0.25 µs. The plan compiler (operators/lowering/codegen.py) instead writes each expression into
the generated function as Python source. This is the source-writing one of the three expression
compilers over operators/lowering/expr_operators.py: it writes an operator whose entry has a source
form, with exactly the closure's semantics, and calls ``expr_eval``'s closure of a subexpression
for everything else, so every expression compiles and none is computed differently:

- a column is ``row[i]``; a subexpression without columns is folded into a constant at compile time
  (when it raises, it is left to raise per row, as the closure would);
- a strict operator's NULL is written once for all (walrus temporaries, tested in the order the
  closure computes them): ``(None if (t1 := a) is None or (t2 := b) is None else t1 * t2)``;
  the entries' forms say which operators have one (comparisons, NOT, LIKE of a constant pattern,
  exact ``+ - *``, IS [NOT] NULL);
- in predicate position (keep a row when the predicate is exactly true) AND and OR short-circuit,
  a predicate is its tests and its form (``not (t1 := a) is None and t1 < 5``), BETWEEN is its
  two comparisons, and IN of constants is a tuple membership; a NULL is falsy there, which is all
  a filter needs.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping, Sequence
from operator import itemgetter

from catalog.types import DOUBLE
from operators.lowering.expr_eval import _compile, source_of
from operators.lowering.expr_operators import Aware, Expansion, Kleene, Membership, Strict, operator_of
from planner.ir import values
from planner.ir.expressions import Call, Column, Expr, Literal, columns, type_of


class SourceWriter:
    """Writes expressions over the row variable ``row`` into source, collecting the constants and
    fallback closures the source names in ``namespace`` (passed to ``exec`` with the program)."""

    def __init__(self, namespace: dict[str, object]):
        self.namespace = namespace
        self._temporaries = 0

    def constant(self, value: object, hint: str = "c") -> str:
        """A name bound to ``value`` in the namespace (literals, regexes, closures)."""
        if value is None or isinstance(value, (bool, int)):
            return repr(value)
        name = f"_{hint}{len(self.namespace)}"
        self.namespace[name] = value
        return name

    def temporary(self) -> str:
        """A fresh walrus temporary."""
        self._temporaries += 1
        return f"_t{self._temporaries}"

    def value_of(self, function: Callable, row: str) -> str:
        """Source of ``function(row)`` for a closure made by ``compile_expr`` (inline where it can)."""
        if isinstance(function, itemgetter):  # compile_expr of a bare column
            _, positions = function.__reduce__()
            if len(positions) == 1 and isinstance(positions[0], int):
                return f"{row}[{positions[0]}]"
        source = source_of(function)
        if source is None or source.predicate:
            return f"{self.constant(function, 'f')}({row})"
        return self.value(source.expr, source.layout, row)

    def keeps(self, function: Callable, row: str) -> str:
        """Source that is truthy exactly when the predicate closure ``function`` keeps ``row``."""
        source = source_of(function)
        if source is None or not source.predicate:
            return f"{self.constant(function, 'f')}({row})"
        return self.condition(source.expr, source.layout, row)

    def value(self, expr: Expr, layout: Mapping[Column, int], row: str) -> str:
        """Source evaluating ``expr`` to its value (None for NULL)."""
        if isinstance(expr, Column):
            return f"{row}[{layout[expr]}]"
        if not columns(expr):
            return self._folded(expr, layout, row)
        entry = operator_of(expr) if isinstance(expr, Call) else None
        match entry:
            case Strict() | Aware() if (written := self._written(entry, expr, layout, row)) is not None:
                tests, result = written
                return f"(None if {' or '.join(tests)} else {result})" if tests else f"({result})"
            case Expansion(expand=expand):
                return self.value(expand(expr), layout, row)
        return self._closure(expr, layout, row)

    def condition(self, expr: Expr, layout: Mapping[Column, int], row: str) -> str:
        """Source truthy exactly when ``expr`` is true (false and NULL are both falsy)."""
        entry = operator_of(expr) if isinstance(expr, Call) else None
        match entry:
            case Kleene():  # short-circuits as SQL's AND/OR do on the true/not-true answer
                return "(" + f" {entry.keyword} ".join(self.condition(a, layout, row) for a in expr.args) + ")"
            case Strict(predicate=True) | Aware(predicate=True) if (written := self._written(entry, expr, layout, row)) is not None:
                tests, result = written
                return "(" + " and ".join([*(f"not {test}" for test in tests), result]) + ")"
            case Expansion(expand=expand):
                return self.condition(expand(expr), layout, row)
            case Membership(negated=negated) if self._constant_members(expr.args[0], expr.args[1:]):
                subject, *members = expr.args
                s, options = self.temporary(), self.constant(tuple(m.value for m in members), "in")
                return f"(({s} := {self.value(subject, layout, row)}) is not None and {s} {'not in' if negated else 'in'} {options})"
        return f"({self.value(expr, layout, row)} is True)"

    def _written(self, entry: Strict | Aware, call: Call, layout: Mapping[Column, int], row: str) -> tuple[list[str], str] | None:
        """(the NULL tests of the operands, in the order they are computed; the result's source over
        them), for an operator whose entry has a source form for ``call``; None otherwise. An aware
        operator tests nothing: it is written over the operands as they are."""
        form = entry.source(call, self) if entry.source is not None else None
        if form is None:
            return None
        if isinstance(entry, Aware):
            return [], form(*(self.value(a, layout, row) for a in call.args))
        order = range(entry.operands(call))
        if entry.divisor_first:
            order = reversed(order)
        operands = {i: self._operand(call.args[i], layout, row) for i in order}
        return [test for _, test in operands.values() if test], form(*(operands[i][0] for i in sorted(operands)))

    def _operand(self, expr: Expr, layout: Mapping[Column, int], row: str) -> tuple[str, str]:
        """(source naming the operand's value, source of the test that it is NULL, or '' if it never is).

        A non-NULL constant is used as is; anything else is bound to a temporary once, so the test
        and the use read the same value.
        """
        source = self.value(expr, layout, row)
        if source in self.namespace and self.namespace[source] is not None or source.isdigit():
            return source, ""
        name = self.temporary()
        return name, f"({name} := {source}) is None"

    @staticmethod
    def _constant_members(subject: Expr, members: Sequence[Expr]) -> bool:
        """IN of non-NULL literals, not over doubles (a NaN member would match itself in a tuple)."""
        return (type_of(subject) != DOUBLE and bool(members)
                and all(isinstance(m, Literal) and m.value is not None for m in members))

    def _folded(self, expr: Expr, layout: Mapping[Column, int], row: str) -> str:
        """A column-free expression evaluated once now; one that raises is left to raise per row."""
        try:
            value = _compile(expr, layout)(())
        except (values.SqlRuntimeError, ArithmeticError, decimal.DecimalException):
            return self._closure(expr, layout, row)
        return self.constant(value, "k")

    def _closure(self, expr: Expr, layout: Mapping[Column, int], row: str) -> str:
        return f"{self.constant(_compile(expr, layout), 'f')}({row})"
