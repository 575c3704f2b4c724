"""The plan text notation: what EXPLAIN prints, what tests write, and what parses back to a plan.

One node a line, two spaces of indentation a level, ``Kind[variant] key=value ...``, the children on
the following lines one level deeper. The printer and the parser are generic over plan classes:
``Kind`` is the class name of any ``@attrs.frozen`` subclass of ``LogicalPlan`` (found by walking
``LogicalPlan.__subclasses__()`` when parsing), ``[variant]`` shows the class's ``variant_field``,
the ``child_fields`` are the indented lines, and every other field is ``key=value`` in declaration
order. So a module that adds plan nodes (maintenance plans, say) gets the notation for free.

>>> from planner.ir.logical import Filter, Scan
>>> from planner.ir.expressions import Call, Column, Literal
>>> plan = Filter(Call(">", (Column("o", "o_totalprice"), Literal(10.5, "float"))),
...               Scan("orders", "o", ("o_orderkey", "o_totalprice")))
>>> print(print_plan(plan))
Filter condition=o.o_totalprice > 10.5
  Scan table=orders alias=o columns=[o_orderkey, o_totalprice]
>>> parse_plan(print_plan(plan)) == plan
True

Values. ``None``, ``True``, ``False``; numbers (``1`` is an int, ``1.0`` a float); a str is a bare
name when it is an identifier (``alias=o``) and ``'single quoted'`` with backslash escapes
otherwise; tuples are ``[a, b]``; ``NamedExpr`` is ``expr AS name``; ``SortKey`` is ``expr ASC`` or
``expr DESC`` (upper case; the other keywords are lower case); a class registered with
``@notation_value`` is ``TypeName(field=value, ...)``; a plan held in a field (not a child) is a
block like a subquery's; anything else must be an expression. Because a bare name, a number and a
quoted string already mean a Python value, an expression that would print exactly like one is put
in parentheses there: ``(x)`` is the column ``x``, ``(1)`` and ``('a')`` are literals.

Expressions read like SQL with the fewest parentheses that keep the tree: ``a - b - c`` is
``(a - b) - c``, ``a - (b - c)`` keeps its parentheses, ``not (a and b)``, ``x in (1, 2)``,
``x between lo and hi``, ``case when c then v else e end``, ``date '1995-03-15'``,
``interval '3' month``, ``null``/``true``/``false``, ``sum(x)``, ``count(*)``,
``count(distinct x)``. Every other ``Call`` is function syntax ``op(args)``; the op is double-quoted
(``"sum"(x)``, ``"Upper"(x)``, ``"||"(a, b)``) when a bare name would read as something else, and so
is a column name that is not a plain identifier (``t."order"``). A negative number literal is
``-1``; negation of an expression is ``-x`` and of a literal ``-(1)``.

Subqueries print their plan inline as an indented block between braces: ``exists{``, ``scalar{``,
``x in {``, ``x not in {`` and ``not exists{`` open it, the plan follows on its own lines four
spaces deeper than the node that holds the expression, and ``}`` closes it on a line of its own
two spaces deeper, after which the expression (and the node's fields) go on::

    Filter condition=exists{
        Scan table=lineitem alias=l columns=[l_orderkey]
      } and o.o_totalprice > 10
      Scan table=orders alias=o columns=[o_orderkey, o_totalprice]

``not (exists{...})`` is the ``not`` of a subquery, ``not exists{...}`` the negated subquery.

Limits: field names must be identifiers that are not keywords of the notation (``and``, ``end``,
``date``...); a node may have at most one child field holding a tuple of plans; literal floats are
finite; ``AggregateCall.func`` is one of ``sum count avg min max``.
"""

from __future__ import annotations

import datetime
import functools
import importlib.resources
import math
import re
import typing
from collections.abc import Iterator

import attrs
import lark
from lark import Token, Tree

from planner.ir.expressions import AggregateCall, Call, Column, Expr, Literal, Subquery
from planner.ir.logical import LogicalPlan, NamedExpr, SortKey

AGGREGATE_FUNCTIONS = ("sum", "count", "avg", "min", "max")

_EXPRESSION_TYPES = typing.get_args(Expr)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE_FUNCTION = re.compile(r"[a-z_][A-Za-z0-9_]*")
_INTEGER = re.compile(r"-?[0-9]+")

# Binding strength, loosest first; a child binding looser than its slot needs parentheses.
_OR, _AND, _NOT, _PREDICATE, _ADD, _MUL, _UNARY, _ATOM = range(1, 9)
_INFIX = {"or": _OR, "and": _AND, "+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL}
_PREDICATES = ("=", "<>", "<", "<=", ">", ">=", "like", "not like")

_value_classes: dict[str, type] = {}


def notation_value(cls: type) -> type:
    """Class decorator: let plan fields hold ``cls`` values, written ``TypeName(field=value, ...)``.

    Registration is by class name, because the name is what the text shows.
    """
    if not attrs.has(cls):
        raise ValueError(f"notation_value needs an attrs class, got {cls.__qualname__}")
    known = _value_classes.get(cls.__name__)
    if known is not None and _origin(known) != _origin(cls):
        raise ValueError(
            f"value class name {cls.__name__} is already registered by {known.__module__}.{known.__qualname__}"
        )
    _value_classes[cls.__name__] = cls
    return cls


def print_plan(plan: LogicalPlan) -> str:
    """The canonical text of ``plan``: ``parse_plan(print_plan(p)) == p``."""
    return "\n".join(_plan_lines(plan, 0))


def parse_plan(text: str) -> LogicalPlan:
    """Parse plan notation; leading blank lines and a common indentation are fine.

    Raises ValueError naming the line and column of the first problem.
    """
    tree = parse_with(_plan_parser(), text.rstrip())
    return _Builder().plan(tree.children[-1])


def print_expr(expr: Expr) -> str:
    """The expression as the notation writes it in a `condition=`, without value-position parentheses."""
    return _expr(expr, 0)[0]


def parse_expr(text: str) -> Expr:
    """Parse one expression (the text of a ``condition=`` value, say)."""
    return _Builder().expr(parse_with(_expr_parser(), text.strip()))


def expr_from_tree(tree: Tree) -> Expr:
    """The expression of a parse tree from a grammar that imports ``expr`` from plan_notation.lark.

    Lark prefixes the rules and terminals it imports with the grammar's name; they are stripped.
    """
    for subtree in tree.iter_subtrees():
        subtree.data = subtree.data.rsplit("__", 1)[-1]
        for token in subtree.children:
            if isinstance(token, Token):
                token.type = token.type.rsplit("__", 1)[-1]
    return _Builder().expr(tree)


def format_identifier(name: str) -> str:
    """``name`` as written in the notation: bare if it is a plain identifier, else double-quoted."""
    return name if _is_bare_identifier(name) else _quoted(name, '"')


def identifier_from_token(token: Token) -> str:
    """The name a NAME or QUOTED_NAME token spells."""
    return _unquoted(token) if token.type == "QUOTED_NAME" else str(token)


# Printing


def _plan_lines(plan: LogicalPlan, indent: int) -> Iterator[str]:
    cls = type(plan)
    head = cls.__name__
    if cls.variant_field is not None:
        head += f"[{_value(getattr(plan, cls.variant_field), indent)}]"
    for field in _shown_fields(cls, skipped={*cls.child_fields, cls.variant_field}):
        value = getattr(plan, field.name)
        if field.metadata.get("omit_default") and value == field.default:
            continue  # an optional field left at its default is not written (the parser fills it in)
        head += f" {field.name}={_value(value, indent)}"
    yield " " * indent + head
    for child in plan.children:
        yield from _plan_lines(child, indent + 2)


def _shown_fields(cls: type, skipped: set[str | None]) -> list[attrs.Attribute]:
    """The fields written ``key=value``: the ``__init__`` ones outside ``skipped``."""
    fields = [f for f in attrs.fields(cls) if f.init and f.name not in skipped]
    for field in fields:
        if not _is_bare_identifier(field.name):
            raise ValueError(
                f"field {field.name!r} of {cls.__name__} is a keyword of the plan notation; rename it"
            )
    return fields


def _value(value: object, indent: int) -> str:
    """A value in a field (or a list or value class in a field); see the module docstring."""
    match value:
        case None | True | False:
            return repr(value)
        case int():
            return str(value)
        case float():
            return _float(value)
        case str():
            return value if _is_bare_identifier(value) else _quoted(value, "'")
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
        case _ if _value_classes.get(type(value).__name__) is type(value):
            fields = _shown_fields(type(value), skipped=set())
            inner = ", ".join(f"{f.name}={_value(getattr(value, f.name), indent)}" for f in fields)
            return f"{type(value).__name__}({inner})"
    raise ValueError(
        f"cannot print {type(value).__qualname__} value {value!r} in the plan notation; "
        "register its class with @notation_value"
    )


def _reads_as_plain_value(expr: Expr) -> bool:
    match expr:
        case Column(None, name):
            return _is_bare_identifier(name)
        case Literal(_, "int" | "float" | "string"):
            return True
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
        case AggregateCall(func, arg, distinct):
            if func not in AGGREGATE_FUNCTIONS:
                raise ValueError(
                    f"aggregate {func!r} has no notation; known: {', '.join(AGGREGATE_FUNCTIONS)}"
                )
            inner = "*" if arg is None else _expr(arg, indent)[0]
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
        is_number = isinstance(args[0], Literal) and args[0].type in ("int", "float")
        return (f"-{text}" if strength == _ATOM and not is_number else f"-({text})"), _UNARY
    if op == "case":
        whens = "".join(f" when {_expr(c, indent)[0]} then {_expr(v, indent)[0]}" for c, v in _pairs(args))
        otherwise = f" else {_expr(args[-1], indent)[0]}" if arity % 2 else ""
        return f"case{whens}{otherwise} end", _ATOM
    name = op if _is_bare_function(op) else _quoted(op, '"')
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
    value, kind = literal.value, literal.type
    text = None
    if kind == "int" and type(value) is int:
        text = str(value)
    elif kind == "float" and type(value) in (int, float):
        text = _float(float(value))
    elif kind == "string" and isinstance(value, str):
        text = _quoted(value, "'")
    elif kind == "date" and type(value) is datetime.date:
        text = f"date '{value.isoformat()}'"
    elif kind == "bool" and isinstance(value, bool):
        text = "true" if value else "false"
    elif kind == "null" and value is None:
        text = "null"
    elif kind == "interval" and _is_interval(value):
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
        and _is_bare_identifier(value[1])
    )


def _float(value: float) -> str:
    if not math.isfinite(value):
        raise ValueError(f"the plan notation has no text for the float {value}")
    return repr(value)


def _is_bare_identifier(name: str) -> bool:
    return bool(_IDENTIFIER.fullmatch(name)) and name not in _keywords()


def _is_bare_function(op: str) -> bool:
    """Capitalised names open value classes and aggregate names read as aggregates: both are quoted."""
    return bool(_BARE_FUNCTION.fullmatch(op)) and op not in _keywords() and op not in AGGREGATE_FUNCTIONS


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def _quoted(text: str, quote: str) -> str:
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char == quote:
            out.append("\\" + quote)
        elif not char.isprintable():
            out.append(f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}")
        else:
            out.append(char)
    return quote + "".join(out) + quote


def _unquoted(token: str) -> str:
    def unescape(match: re.Match) -> str:
        escape = match.group(1)
        if escape[0] in "uU" and len(escape) > 1:
            return chr(int(escape[1:], 16))
        return _UNESCAPES.get(escape, escape)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", unescape, token[1:-1])


# Parsing


def load_grammar(file_name: str, start: str) -> lark.Lark:
    """An LALR parser for a grammar file of this package; ``%import`` finds sibling grammar files."""

    def sibling(_base_path: str | None, grammar_path: str) -> tuple[str, str]:
        return grammar_path, _grammar_text(grammar_path)  # FileNotFoundError sends lark to its own

    return lark.Lark(
        _grammar_text(file_name), parser="lalr", start=start, maybe_placeholders=True, import_paths=[sibling]
    )


def parse_with(parser: lark.Lark, text: str) -> Tree:
    """Parse ``text``; a syntax error becomes a ValueError naming its line and column."""
    try:
        return parser.parse(text)
    except lark.UnexpectedInput as error:
        raise ValueError(_syntax_error(error, text)) from None


def _grammar_text(file_name: str) -> str:
    return importlib.resources.files("planner.ir").joinpath(file_name).read_text()


@functools.cache
def _plan_parser() -> lark.Lark:
    return load_grammar("plan_notation.lark", "start")


@functools.cache
def _expr_parser() -> lark.Lark:
    return load_grammar("plan_notation.lark", "expr")


@functools.cache
def _keywords() -> frozenset[str]:
    """Words the grammar reserves; a name spelled like one is quoted when printed."""
    return frozenset(
        t.pattern.value
        for t in _plan_parser().terminals
        if t.pattern.type == "str" and _IDENTIFIER.fullmatch(t.pattern.value)
    )


def _syntax_error(error: lark.UnexpectedInput, text: str) -> str:
    where = f"line {error.line}, column {error.column}"
    match error:
        case lark.UnexpectedToken(token=token) if token.type == "$END":
            what = "unexpected end of text"
        case lark.UnexpectedToken(token=token) if not token.value.strip():
            what = "unexpected line break"
        case lark.UnexpectedToken(token=token):
            what = f"unexpected {token.value.strip()!r}"
        case lark.UnexpectedCharacters(char=char):
            what = f"unexpected character {char!r}"
        case _:
            what = "unexpected input"
    return f"{where}: {what}\n{error.get_context(text).rstrip()}"


class _Builder:
    """Turns parse trees into plans and expressions.

    Hand-written rather than a lark Transformer because a few readings depend on the unconverted
    tree: a bare name in a value position is a str but ``(x)`` is a column, ``-1`` is a literal but
    ``-(1)`` a negation, ``not exists{}`` a negated subquery but ``not (exists{})`` a ``not``.
    """

    def __init__(self) -> None:
        self.plan_classes, self.ambiguous_plan_classes = _plan_classes()

    def plan(self, tree: Tree) -> LogicalPlan:
        """Nest the lines of a ``plan`` tree by indentation, then build bottom-up."""
        nodes = tree.children
        root_column = nodes[0].children[0].column
        children: dict[int, list[Tree]] = {id(n): [] for n in nodes}
        path = [nodes[0]]
        for node in nodes[1:]:
            kind = node.children[0]
            depth, misaligned = divmod(kind.column - root_column, 2)
            if misaligned or not 1 <= depth <= len(path):
                raise _error(
                    kind,
                    f"{kind} is indented {kind.column - root_column} spaces past the root {nodes[0].children[0]};"
                    f" expected an even number from 2 to {2 * len(path)}",
                )
            del path[depth:]
            children[id(path[-1])].append(node)
            path.append(node)
        return self.node(nodes[0], children)

    def node(self, tree: Tree, children: dict[int, list[Tree]]) -> LogicalPlan:
        kind, *parts = tree.children
        if kind in self.ambiguous_plan_classes:
            raise _error(
                kind, f"{kind} names several plan classes: {', '.join(self.ambiguous_plan_classes[kind])}"
            )
        cls = self.plan_classes.get(str(kind))
        if cls is None:
            raise _error(kind, f"unknown plan node {kind}; known: {', '.join(sorted(self.plan_classes))}")
        values = {}
        for part in parts:
            if part.data == "variant":
                if cls.variant_field is None:
                    raise _error(kind, f"{kind} has no [variant]")
                values[cls.variant_field] = self.value(part.children[0])
        shown = _shown_fields(cls, skipped={*cls.child_fields, cls.variant_field})
        values |= self.fields(kind, [p for p in parts if p.data == "field"], shown)
        child_plans = [self.node(c, children) for c in children[id(tree)]]
        values |= _distribute_children(kind, cls, child_plans)
        return _construct(kind, cls, values)

    def fields(self, owner: Token, trees: list[Tree], allowed: list[attrs.Attribute]) -> dict:
        names = [f.name for f in allowed]
        values = {}
        for tree in trees:
            name, value = tree.children
            if name not in names:
                raise _error(name, f"{owner} has no field {name}; fields: {', '.join(names) or 'none'}")
            if name in values:
                raise _error(name, f"field {name} of {owner} is given twice")
            values[str(name)] = self.value(value)
        return values

    def value(self, tree: Tree | Token) -> object:
        match tree:
            case Tree(data="column", children=[Token(type="NAME") as name]):
                return str(name)
            case Tree(data="string", children=[token]):
                return _unquoted(token)
            case Tree(data="number", children=[token]):
                return _number(token)
            case Tree(data="neg", children=[Tree(data="number", children=[token])]):
                return -_number(token)
            case Tree(data="none"):
                return None
            case Tree(data="true_value"):
                return True
            case Tree(data="false_value"):
                return False
            case Tree(data="list", children=items):
                return tuple(self.value(item) for item in items if item is not None)
            case Tree(data="named", children=[expr, name]):
                return NamedExpr(identifier_from_token(name), self.expr(expr))
            case Tree(data="sort_key", children=[expr, order]):
                return SortKey(self.expr(expr), order.children[0] == "ASC")
            case Tree(data="block", children=[plan]):
                return self.plan(plan)
            case Tree(data="value_object", children=[opening, *fields]):
                return self.value_object(opening, [f for f in fields if f is not None])
        return self.expr(tree)

    def value_object(self, opening: Token, fields: list[Tree]) -> object:
        name = opening[:-1]
        cls = _value_classes.get(name)
        if cls is None:
            raise _error(
                opening, f"unknown value class {name}; registered: {', '.join(sorted(_value_classes))}"
            )
        return _construct(opening, cls, self.fields(opening, fields, _shown_fields(cls, skipped=set())))

    def expr(self, tree: Tree) -> Expr:
        return getattr(self, f"expr_{tree.data}")(tree, *tree.children)

    def expr_paren(self, tree, inner):
        return self.expr(inner)

    def expr_number(self, tree, token):
        number = _number(token)
        return Literal(number, "float" if isinstance(number, float) else "int")

    def expr_neg(self, tree, operand):
        if operand.data == "number":
            literal = self.expr(operand)
            return Literal(-literal.value, literal.type)
        return Call("neg", (self.expr(operand),))

    def expr_string(self, tree, token):
        return Literal(_unquoted(token), "string")

    def expr_null(self, tree):
        return Literal(None, "null")

    def expr_true(self, tree):
        return Literal(True, "bool")

    def expr_false(self, tree):
        return Literal(False, "bool")

    def expr_date(self, tree, token):
        try:
            return Literal(datetime.date.fromisoformat(_unquoted(token)), "date")
        except ValueError:
            raise _error(token, f"date {token} is not a date written YYYY-MM-DD") from None

    def expr_interval(self, tree, count, unit):
        if not _INTEGER.fullmatch(_unquoted(count)):
            raise _error(count, f"interval count {count} is not a whole number")
        return Literal((int(_unquoted(count)), str(unit)), "interval")

    def expr_column(self, tree, *names):
        *table, name = (identifier_from_token(n) for n in names)
        return Column(table[0] if table else None, name)

    def expr_call(self, tree, name, arguments):
        function = identifier_from_token(name)
        rule = None if arguments is None else arguments.data
        args = (
            () if rule in (None, "star", "distinct_star") else tuple(self.expr(a) for a in arguments.children)
        )
        if name.type == "QUOTED_NAME" or function not in AGGREGATE_FUNCTIONS:
            if rule not in (None, "positional"):
                raise _error(name, f"only the aggregates {', '.join(AGGREGATE_FUNCTIONS)} take * or distinct")
            return Call(function, args)
        if len(args) > 1 or rule is None:
            raise _error(
                name, f'aggregate {function} takes one argument or *; quote it ("{function}") for a function'
            )
        return AggregateCall(function, args[0] if args else None, rule.startswith("distinct"))

    def expr_case(self, tree, *parts):
        *whens, otherwise = parts
        args = tuple(self.expr(e) for when in whens for e in when.children)
        return Call("case", args if otherwise is None else (*args, self.expr(otherwise)))

    def expr_exists(self, tree, block):
        return Subquery("exists", self.plan(block.children[0]))

    def expr_scalar(self, tree, block):
        return Subquery("scalar", self.plan(block.children[0]))

    def expr_not_op(self, tree, operand):
        if operand.data == "exists":
            return attrs.evolve(self.expr(operand), negated=True)
        return Call("not", (self.expr(operand),))

    def expr_or_op(self, tree, left, right):
        return Call("or", (self.expr(left), self.expr(right)))

    def expr_and_op(self, tree, left, right):
        return Call("and", (self.expr(left), self.expr(right)))

    def expr_comparison(self, tree, left, op, right):
        return Call(str(op.children[0]), (self.expr(left), self.expr(right)))

    def expr_arithmetic(self, tree, left, op, right):
        return Call(str(op.children[0]), (self.expr(left), self.expr(right)))

    def expr_like(self, tree, left, right):
        return Call("like", (self.expr(left), self.expr(right)))

    def expr_not_like(self, tree, left, right):
        return Call("not like", (self.expr(left), self.expr(right)))

    def expr_in_list(self, tree, operand, *values):
        return Call("in", tuple(self.expr(v) for v in (operand, *values) if v is not None))

    def expr_not_in_list(self, tree, operand, *values):
        return Call("not in", tuple(self.expr(v) for v in (operand, *values) if v is not None))

    def expr_in_subquery(self, tree, operand, block):
        return Subquery("in", self.plan(block.children[0]), self.expr(operand))

    def expr_not_in_subquery(self, tree, operand, block):
        return Subquery("in", self.plan(block.children[0]), self.expr(operand), negated=True)

    def expr_between(self, tree, operand, low, high):
        return Call("between", (self.expr(operand), self.expr(low), self.expr(high)))

    def expr_is_null(self, tree, operand):
        return Call("is null", (self.expr(operand),))

    def expr_is_not_null(self, tree, operand):
        return Call("is not null", (self.expr(operand),))


def _number(token: Token) -> int | float:
    return float(token) if any(c in token for c in ".eE") else int(token)


def _error(token: Token, message: str) -> ValueError:
    return ValueError(f"line {token.line}, column {token.column}: {message}")


def _origin(cls: type) -> tuple[str, str]:
    return cls.__module__, cls.__qualname__


def _plan_classes() -> tuple[dict[str, type], dict[str, list[str]]]:
    """Every attrs plan class by name, and the names defined in several places (with those places).

    A class defined again at the same place (a test run twice) replaces the older one.
    """
    found: dict[str, type] = {}
    origins: dict[str, set[tuple[str, str]]] = {}
    pending = list(LogicalPlan.__subclasses__())
    while pending:
        cls = pending.pop(0)
        pending.extend(cls.__subclasses__())
        if attrs.has(cls):
            found[cls.__name__] = cls
            origins.setdefault(cls.__name__, set()).add(_origin(cls))
    ambiguous = {
        name: sorted(".".join(o) for o in places) for name, places in origins.items() if len(places) > 1
    }
    return found, ambiguous


def _distribute_children(kind: Token, cls: type, plans: list[LogicalPlan]) -> dict:
    """Children lines fill ``child_fields`` in order; one tuple-typed child field takes the rest."""
    fields = {f.name: f for f in attrs.fields(cls)}
    many = [name for name in cls.child_fields if _holds_many(fields[name])]
    if len(many) > 1:
        raise _error(
            kind, f"{kind} has several tuple child fields ({', '.join(many)}); the notation cannot split them"
        )
    singles = len(cls.child_fields) - len(many)
    if len(plans) < singles or (not many and len(plans) != singles):
        expected = f"at least {singles}" if many else str(singles)
        raise _error(
            kind, f"{kind} needs {expected} child line(s) ({', '.join(cls.child_fields)}), found {len(plans)}"
        )
    values: dict[str, object] = {}
    rest = list(plans)
    for name in cls.child_fields:
        if name in many:
            taken = len(rest) - (singles - len(values))
            values[name], rest = tuple(rest[:taken]), rest[taken:]
        else:
            values[name], rest = rest[0], rest[1:]
    return values


def _holds_many(field: attrs.Attribute) -> bool:
    annotation = field.type
    if isinstance(annotation, str):
        return bool(re.match(r"\s*(tuple|list|Sequence|typing\.Tuple|Tuple)\[", annotation))
    return typing.get_origin(annotation) in (tuple, list)


def _construct(owner: Token, cls: type, values: dict) -> object:
    missing = [
        f.name for f in attrs.fields(cls) if f.init and f.default is attrs.NOTHING and f.name not in values
    ]
    if missing:
        raise _error(owner, f"{cls.__name__} is missing {', '.join(missing)}")
    return cls(**{attrs.fields_dict(cls)[name].alias: value for name, value in values.items()})
