"""Write a compiled expression as inline Python source, for the local runner's plan compiler.

``expr_eval`` turns an expression into nested closures: one Python call per node and row, which on
TPC-H Q3's ``l_extendedprice * (1 - l_discount)`` costs 3.6 µs per row where the arithmetic itself
costs 0.25 µs. The plan compiler (operators/lowering/codegen.py) instead writes each expression into
the generated function as Python source. This module writes that source for the forms the hot
paths meet, with exactly ``expr_eval``'s semantics, and falls back to calling ``expr_eval``'s closure
of a subexpression for everything else, so every expression compiles and none is computed
differently:

- a column is ``row[i]``; a subexpression without columns is folded into a constant at compile time
  (when it raises, it is left to raise per row, as the closure would);
- NULL propagates through strict operators by walrus temporaries: ``(None if (t1 := a) is None or
  (t2 := b) is None else t1 * t2)``;
- DECIMAL ``+ - *`` are inlined only when the result type is the natural one (no precision cap at
  38): the exact result then always fits and needs no rounding (planner/ir/values.py rounds to a
  scale it already has), computed in the 100-digit context as ``values`` does; integer ``+ - *``
  with the range check; DOUBLE ``+ - *`` of doubles (a NaN result made the one NaN); comparisons of any two values;
- in predicate position (keep a row when the predicate is exactly true) AND and OR short-circuit,
  and comparisons, BETWEEN, IN of constants, LIKE with a constant pattern and IS [NOT] NULL are
  written out; a NULL is falsy there, which is all a filter needs.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Mapping
from operator import itemgetter

from catalog.types import DECIMAL_CONTEXT, DOUBLE, INT, INTEGRAL, DataType, DecimalType, integral_range
from operators.doubles import NAN
from operators.lowering.expr_eval import _compile, _like_regex, source_of
from planner.ir import values
from planner.ir.expressions import Call, Column, Expr, Literal, columns, type_of

_COMPARISONS = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ARITHMETIC = ("+", "-", "*")
_DECIMAL_METHODS = {"+": "add", "-": "subtract", "*": "multiply"}


def _natural_decimal(op: str, left: DataType | None, right: DataType | None) -> DecimalType | None:
    """Spark's result type of ``left op right`` before it is capped at 38 digits (None if not decimals)."""
    operands = []
    for t in (left, right):
        if isinstance(t, DecimalType):
            operands.append((t.precision, t.scale))
        elif t in INTEGRAL:
            operands.append((10 if t == INT else 20, 0))
        else:
            return None
    (p1, s1), (p2, s2) = operands
    if op == "*":
        return DecimalType(p1 + p2 + 1, s1 + s2)
    scale = max(s1, s2)
    return DecimalType(scale + max(p1 - s1, p2 - s2) + 1, scale)


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

    def _temporary(self) -> str:
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
        if isinstance(expr, Call) and len(expr.args) == 2:
            left, right = expr.args
            operator = self._binary_operator(expr)
            if operator is not None:
                (a, a_null), (b, b_null) = self._operand(left, layout, row), self._operand(right, layout, row)
                nulls = " or ".join(test for test in (a_null, b_null) if test)
                return f"(None if {nulls} else {operator(a, b)})" if nulls else f"({operator(a, b)})"
        return self._closure(expr, layout, row)

    def condition(self, expr: Expr, layout: Mapping[Column, int], row: str) -> str:
        """Source truthy exactly when ``expr`` is true (false and NULL are both falsy)."""
        match expr:
            case Call(op=("and" | "or") as op, args=args):
                return "(" + f" {op} ".join(self.condition(a, layout, row) for a in args) + ")"
            case Call(op=op, args=(left, right)) if op in _COMPARISONS:
                (a, a_null), (b, b_null) = self._operand(left, layout, row), self._operand(right, layout, row)
                tests = [f"not {test}" for test in (a_null, b_null) if test]
                return "(" + " and ".join([*tests, f"{a} {_COMPARISONS[op]} {b}"]) + ")"
            case Call(op="between", args=(subject, low, high)):
                s, lo, hi = self._temporary(), self._temporary(), self._temporary()
                return (f"(({s} := {self.value(subject, layout, row)}) is not None and "
                        f"({lo} := {self.value(low, layout, row)}) is not None and "
                        f"({hi} := {self.value(high, layout, row)}) is not None and {lo} <= {s} <= {hi})")
            case Call(op=("in" | "not in") as op, args=(subject, *members)) if self._constant_members(subject, members):
                s = self._temporary()
                options = self.constant(tuple(m.value for m in members), "in")
                return f"(({s} := {self.value(subject, layout, row)}) is not None and {s} {op} {options})"
            case Call(op=("like" | "not like") as op, args=(subject, Literal(value=str(pattern)))):
                s = self._temporary()
                regex = self.constant(_like_regex(pattern), "re")
                matched = "is not None" if op == "like" else "is None"
                return f"(({s} := {self.value(subject, layout, row)}) is not None and {regex}.fullmatch({s}) {matched})"
            case Call(op="is null", args=(subject,)):
                return f"({self.value(subject, layout, row)} is None)"
            case Call(op="is not null", args=(subject,)):
                return f"({self.value(subject, layout, row)} is not None)"
        return f"({self.value(expr, layout, row)} is True)"

    def _operand(self, expr: Expr, layout: Mapping[Column, int], row: str) -> tuple[str, str]:
        """(source naming the operand's value, source of the test that it is NULL, or '' if it never is).

        A non-NULL constant is used as is; anything else is bound to a temporary once, so the test
        and the use read the same value.
        """
        source = self.value(expr, layout, row)
        if source in self.namespace and self.namespace[source] is not None or source.isdigit():
            return source, ""
        name = self._temporary()
        return name, f"({name} := {source}) is None"

    @staticmethod
    def _constant_members(subject: Expr, members: list[Expr]) -> bool:
        """IN of non-NULL literals, not over doubles (a NaN member would match itself in a tuple)."""
        return (type_of(subject) != DOUBLE and bool(members)
                and all(isinstance(m, Literal) and m.value is not None for m in members))

    def _binary_operator(self, expr: Call) -> Callable[[str, str], str] | None:
        """How to write ``a op b`` over two non-NULL temporaries, or None when only the closure is exact."""
        op, (left, right) = expr.op, expr.args
        if op in _COMPARISONS:
            return lambda a, b: f"{a} {_COMPARISONS[op]} {b}"
        if op not in _ARITHMETIC:
            return None
        result, left_type, right_type = type_of(expr), type_of(left), type_of(right)
        if isinstance(result, DecimalType) and _natural_decimal(op, left_type, right_type) == result:
            method = self.constant(getattr(DECIMAL_CONTEXT, _DECIMAL_METHODS[op]), "dec")
            return lambda a, b: f"{method}({a}, {b})"
        if result in INTEGRAL and left_type in INTEGRAL and right_type in INTEGRAL:
            low, high = integral_range(result)
            check = self.constant(values.check_integral, "check")
            kind = self.constant(result, "type")
            v = self._temporary()
            return lambda a, b: f"({v} if {low} <= ({v} := {a} {op} {b}) <= {high} else {check}({v}, {kind}))"
        if result == DOUBLE and left_type == DOUBLE and right_type == DOUBLE:
            # a NaN result is made the one NaN, as expr_eval's closure makes it (operators/doubles.py)
            nan = self.constant(NAN, "nan")
            v = self._temporary()
            return lambda a, b: f"({v} if ({v} := {a} {op} {b}) == {v} else {nan})"
        return None

    def _folded(self, expr: Expr, layout: Mapping[Column, int], row: str) -> str:
        """A column-free expression evaluated once now; one that raises is left to raise per row."""
        try:
            value = _compile(expr, layout)(())
        except (values.SqlRuntimeError, ArithmeticError, decimal.DecimalException):
            return self._closure(expr, layout, row)
        return self.constant(value, "k")

    def _closure(self, expr: Expr, layout: Mapping[Column, int], row: str) -> str:
        return f"{self.constant(_compile(expr, layout), 'f')}({row})"
