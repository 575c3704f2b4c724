"""The plan notation's printer: plans and expressions to text (see ``planner.ir.notation``)."""

from __future__ import annotations

import datetime
import decimal
import typing
from collections.abc import Iterator

import attrs

from catalog.types import (
    BOOLEAN,
    DATE,
    DOUBLE,
    INTEGRAL,
    NULL,
    STRING,
    TIMESTAMP,
    TIMESTAMPS,
    DecimalType,
    IntervalType,
    is_numeric,
)
from planner.ir.expressions import AggregateCall, Call, Column, Expr, Literal, Subquery, cast_op
from planner.ir.logical import LogicalPlan, NamedExpr, SortKey
from planner.ir.notation_syntax import (
    AGGREGATE_FUNCTIONS,
    float_text,
    format_identifier,
    is_bare_function,
    is_bare_identifier,
    is_edge_class,
    is_omitted,
    quoted,
    shown_fields,
    shown_parameters,
    value_class,
)
from planner.ir.timestamps import format_local

_EXPRESSION_TYPES = typing.get_args(Expr)
_PARAMETER_TYPES = {float: DOUBLE, bool: BOOLEAN}  # an aggregate's parameters: a percentile's (fraction, descending)

#: A line longer than this wraps: a node's fields move to continuation lines, four spaces deeper
#: than the node (its children are two deeper), and long lists and value objects put their items on
#: lines of their own. The parser ignores line breaks inside brackets.
WIDTH = 150
_FIELD_INDENT = 4

# Binding strength, loosest first; a child binding looser than its slot needs parentheses.
_OR, _AND, _NOT, _PREDICATE, _ADD, _MUL, _UNARY, _ATOM = range(1, 9)
_INFIX = {"or": _OR, "and": _AND, "+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL}
_PREDICATES = ("=", "<>", "<", "<=", ">", ">=", "like", "not like")


def print_plan(plan: LogicalPlan) -> str:
    """The canonical text of ``plan``: ``parse_plan(print_plan(p)) == p``."""
    return "\n".join(_plan_lines(plan, 0))


def print_expr(expr: Expr) -> str:
    """The expression as the notation writes it in a `condition=`, without value-position parentheses."""
    return _expr(expr, 0)[0]


def _plan_lines(plan: LogicalPlan, indent: int) -> Iterator[str]:
    cls = type(plan)
    head = cls.__name__
    if cls.variant_field is not None:
        head += f"[{_value(getattr(plan, cls.variant_field), indent)}]"
    fields = [
        (f"{name}=", value) for name, value in _shown(plan, skipped={*cls.child_fields, cls.variant_field})
    ]
    yield " " * indent + _packed(head, fields, _Layout("", "", indent + _FIELD_INDENT, indent), indent)
    for child in plan.children:
        yield from _plan_lines(child, indent + 2)


def _shown(value: object, skipped: set[str | None]) -> list[tuple[str, object]]:
    """The ``(name, value)`` of the fields written: all shown fields but those at their default or None."""
    fields = shown_fields(type(value), skipped)
    return [(f.name, getattr(value, f.name)) for f in fields if not is_omitted(f, getattr(value, f.name))]


@attrs.frozen
class _Layout:
    """How a sequence of pieces wraps: what follows each piece but the last, what follows the last,
    how deep its continuation lines are, and where the sequence starts on its line."""

    separator: str
    closing: str
    indent: int
    column: int


def _packed(opening: str, pieces: list[tuple[str, object]], layout: _Layout, block_indent: int) -> str:
    """``opening`` and the pieces (a prefix and a value each), on one line while they fit ``WIDTH``.

    A piece that does not fit starts a continuation line ``layout.indent`` deep; one too long for a
    line of its own wraps its value (``_wrapped``). A piece holding a subquery block, or one no new
    line would shorten (a long expression), stays in place.
    """
    text, column = opening, layout.column + len(opening)
    for i, (prefix, value) in enumerate(pieces):
        tail = layout.closing if i == len(pieces) - 1 else layout.separator
        gap = "" if i == 0 and opening.endswith(("[", "(")) else " "
        flat = prefix + _value(value, block_indent) + tail
        start = layout.indent + len(prefix)
        fits_here = column + len(gap) + len(flat) <= WIDTH
        helps = start + len(flat) - len(prefix) <= WIDTH or _can_wrap(value)
        if "\n" in flat or fits_here or not helps:
            text, column = _appended(text, gap + flat, column)
            continue
        piece = (
            prefix + _wrapped(value, _Layout(layout.separator, "", layout.indent, start), block_indent) + tail
        )
        text, column = _appended(text + "\n" + " " * layout.indent, piece, layout.indent)
    return text


def _wrapped(value: object, layout: _Layout, block_indent: int) -> str:
    """``value`` starting at ``layout.column``: a list or value object too long for the line puts its
    items on lines two deeper than ``layout.indent``; anything else is written whole."""
    flat = _value(value, block_indent)
    if layout.column + len(flat) <= WIDTH:
        return flat
    inner = layout.indent + 2
    match value:
        case tuple() | list() if value:
            items = [("", item) for item in value]
            return _packed("[", items, _Layout(",", "]", inner, layout.column), block_indent)
        case _ if _is_value_object(value):
            fields = [(f"{name}=", field_value) for name, field_value in _shown(value, skipped=set())]
            opening = f"{type(value).__name__}("
            return _packed(opening, fields, _Layout(",", ")", inner, layout.column), block_indent)
    return flat


def _appended(text: str, piece: str, column: int) -> tuple[str, int]:
    """``text + piece`` and the column after it."""
    last_line = piece.rsplit("\n", 1)
    return text + piece, (len(last_line[-1]) if len(last_line) > 1 else column + len(piece))


def _can_wrap(value: object) -> bool:
    """Whether ``_wrapped`` can break ``value`` over lines (else a new line would not shorten it)."""
    return (isinstance(value, tuple | list) and bool(value)) or _is_value_object(value)


def _is_value_object(value: object) -> bool:
    return not is_edge_class(type(value)) and value_class(type(value).__name__) is type(value)


def _value(value: object, indent: int) -> str:
    """A value in a field (or a list or value class in a field); see the module docstring."""
    match value:
        case None | True | False:
            return repr(value)
        case int():
            return str(value)
        case float():
            return float_text(value)
        case str():
            return value if is_bare_identifier(value) else quoted(value, "'")
        case tuple() | list():
            return "[" + ", ".join(_value(v, indent) for v in value) + "]"
        case NamedExpr(name, expr):
            return f"{_expr(expr, indent)[0]} AS {format_identifier(name)}"
        case SortKey(expr, ascending):
            return f"{_expr(expr, indent)[0]} {'ASC' if ascending else 'DESC'}"
        case LogicalPlan():
            return _block(value, indent)
        case _ if isinstance(value, _EXPRESSION_TYPES):
            text = _expr(value, indent)[0]
            return f"({text})" if _reads_as_plain_value(value) else text
        case _ if is_edge_class(type(value)):
            source, columns, target, key = (getattr(value, f.name) for f in shown_fields(type(value), set()))
            return f"{_edge_end(source, columns)}→{_edge_end(target, key)}"
        case _ if _is_value_object(value):
            inner = ", ".join(
                f"{name}={_value(field_value, indent)}" for name, field_value in _shown(value, set())
            )
            return f"{type(value).__name__}({inner})"
    raise ValueError(
        f"cannot print {type(value).__qualname__} value {value!r} in the plan notation; "
        "register its class with @notation_value"
    )


def _edge_end(relation: str, columns: tuple[str, ...]) -> str:
    return f"{format_identifier(relation)}({','.join(format_identifier(c) for c in columns)})"


def _reads_as_plain_value(expr: Expr) -> bool:
    match expr:
        case Column(None, name):
            return is_bare_identifier(name)
        case Literal(_, dtype):
            return dtype == STRING or is_numeric(dtype)
    return False


def _block(plan: LogicalPlan, indent: int) -> str:
    """A plan inside a line: its lines four spaces deeper, the closing brace two spaces deeper."""
    lines = "\n".join(_plan_lines(plan, indent + 4))
    return "{\n" + lines + "\n" + " " * (indent + 2) + "}"


def _expr(expr: Expr, indent: int) -> tuple[str, int]:
    """The text of ``expr`` and how tightly it binds; ``indent`` places subquery blocks."""
    match expr:
        case Column(table, name):
            text = (
                format_identifier(name)
                if table is None
                else f"{format_identifier(table)}.{format_identifier(name)}"
            )
            return text, _ATOM
        case Literal():
            return _literal(expr)
        case AggregateCall(func, arg, distinct, _, further, parameters):
            if func not in AGGREGATE_FUNCTIONS:
                raise ValueError(
                    f"aggregate {func!r} has no notation; known: {', '.join(AGGREGATE_FUNCTIONS)}"
                )
            inner = "*" if arg is None else ", ".join(_expr(a, indent)[0] for a in (arg, *further))
            inner += "".join(f", {_literal(Literal(p, _PARAMETER_TYPES[type(p)]))[0]}"
                             for p in shown_parameters(func, parameters))
            return f"{func}({'distinct ' if distinct else ''}{inner})", _ATOM
        case Subquery():
            return _subquery(expr, indent)
        case Call(op, args):
            return _call(op, args, indent)
    raise ValueError(f"not an expression: {expr!r}")


def _call(op: str, args: tuple[Expr, ...], indent: int) -> tuple[str, int]:
    def operand(arg: Expr, loosest: int) -> str:
        text, strength = _expr(arg, indent)
        return text if strength >= loosest else f"({text})"

    def listed(values: tuple[Expr, ...]) -> str:
        return ", ".join(_expr(v, indent)[0] for v in values)

    arity = len(args)
    if op in _INFIX and arity == 2:
        strength = _INFIX[op]
        return f"{operand(args[0], strength)} {op} {operand(args[1], strength + 1)}", strength
    if op in _PREDICATES and arity == 2:
        return f"{operand(args[0], _ADD)} {op} {operand(args[1], _ADD)}", _PREDICATE
    if op in ("in", "not in") and arity >= 1:
        return f"{operand(args[0], _ADD)} {op} ({listed(args[1:])})", _PREDICATE
    if op == "between" and arity == 3:
        low, high = operand(args[1], _ADD), operand(args[2], _ADD)
        return f"{operand(args[0], _ADD)} between {low} and {high}", _PREDICATE
    if op in ("is null", "is not null") and arity == 1:
        return f"{operand(args[0], _ADD)} {op}", _PREDICATE
    if op == "not" and arity == 1:
        # `not exists{...}` is the negated subquery, so the `not` of one keeps its parentheses.
        text, strength = _expr(args[0], indent)
        is_exists = isinstance(args[0], Subquery) and args[0].kind == "exists"
        return (f"not ({text})" if is_exists or strength < _NOT else f"not {text}"), _NOT
    if op == "neg" and arity == 1:
        # `-1` is a negative literal, so negating a number literal keeps its parentheses.
        text, strength = _expr(args[0], indent)
        is_number = isinstance(args[0], Literal) and is_numeric(args[0].type)
        return (f"-{text}" if strength == _ATOM and not is_number else f"-({text})"), _UNARY
    if op == "case":
        whens = "".join(f" when {_expr(c, indent)[0]} then {_expr(v, indent)[0]}" for c, v in _pairs(args))
        otherwise = f" else {_expr(args[-1], indent)[0]}" if arity % 2 else ""
        return f"case{whens}{otherwise} end", _ATOM
    name = op if is_bare_function(op) else quoted(op, '"')
    return f"{name}({listed(args)})", _ATOM


def _pairs(args: tuple[Expr, ...]) -> Iterator[tuple[Expr, Expr]]:
    for i in range(0, len(args) - 1, 2):
        yield args[i], args[i + 1]


def _subquery(subquery: Subquery, indent: int) -> tuple[str, int]:
    kind, plan, operand, negated = subquery.kind, subquery.plan, subquery.operand, subquery.negated
    block = _block(plan, indent)
    if kind == "exists" and operand is None:
        return (f"not exists{block}", _NOT) if negated else (f"exists{block}", _ATOM)
    if kind == "scalar" and operand is None and not negated:
        return f"scalar{block}", _ATOM
    if kind == "in" and operand is not None:
        text, strength = _expr(operand, indent)
        text = text if strength >= _ADD else f"({text})"
        return f"{text} {'not in' if negated else 'in'} {block}", _PREDICATE
    raise ValueError(f"no notation for a {kind} subquery with operand={operand!r} and negated={negated}")


def _literal(literal: Literal) -> tuple[str, int]:
    """A literal's text, which reads back as the same type: ``12``, ``0.06`` (decimal), ``2.5e0`` (double)."""
    value, kind = literal.value, literal.type
    if value is None and kind != NULL:
        # a typed NULL (CAST(NULL AS INT) folded) prints as that cast, which the parser folds back
        return _call(cast_op(kind), (Literal(None, NULL),), 0)
    text = None
    if kind in INTEGRAL and type(value) is int:
        text = str(value)
    elif isinstance(kind, DecimalType) and isinstance(value, decimal.Decimal):
        text = format(value, "f")
    elif kind == DOUBLE and type(value) in (int, float):
        text = float_text(float(value))
        text = text if "e" in text else f"{text}e0"
    elif kind == STRING and isinstance(value, str):
        text = quoted(value, "'")
    elif kind == DATE and type(value) is datetime.date:
        text = f"date '{value.isoformat()}'"
    elif kind in TIMESTAMPS and isinstance(value, datetime.datetime):
        # an instant in UTC, marked so it reads back as the same instant in any session time zone
        suffix = "Z" if kind == TIMESTAMP else ""
        text = f"{kind} '{format_local(value.replace(tzinfo=None))}{suffix}'"
    elif kind == BOOLEAN and isinstance(value, bool):
        text = "true" if value else "false"
    elif kind == NULL and value is None:
        text = "null"
    elif isinstance(kind, IntervalType) and _is_interval(value):
        text = f"interval '{value[0]}' {value[1]}"
    if text is None:
        raise ValueError(f"no notation for a {kind} literal holding {value!r}")
    return text, (_UNARY if text.startswith("-") else _ATOM)


def _is_interval(value: object) -> bool:
    return (
        isinstance(value, tuple)
        and len(value) == 2
        and type(value[0]) is int
        and isinstance(value[1], str)
        and is_bare_identifier(value[1])
    )
