"""The plan notation's parser: text to plans and expressions (see ``planner.ir.notation``)."""

from __future__ import annotations

import datetime
import decimal
import re
import typing

import attrs
from lark import Token, Tree

from catalog.types import (
    BOOLEAN,
    DATE,
    DOUBLE,
    NULL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    IntervalType,
    literal_decimal_type,
)
from planner.ir.expressions import AggregateCall, Call, Column, Expr, Literal, Subquery, cast_target
from planner.ir.logical import LogicalPlan, NamedExpr, SortKey
from planner.ir.notation_syntax import (
    AGGREGATE_FUNCTIONS,
    PARAMETERIZED_AGGREGATES,
    absent_value,
    edge_class,
    expr_parser,
    full_parameters,
    identifier_from_token,
    origin,
    parse_with,
    plan_parser,
    shown_fields,
    token_error,
    unquoted,
    value_class,
    value_class_names,
)
from planner.ir.values import SqlRuntimeError, cast_value, integral_type_of

_INTEGER = re.compile(r"-?[0-9]+")


def parse_plan(text: str) -> LogicalPlan:
    """Parse plan notation; leading blank lines and a common indentation are fine.

    Raises ValueError naming the line and column of the first problem.
    """
    tree = parse_with(plan_parser(), text.rstrip())
    return _Builder().plan(tree.children[-1])


def parse_expr(text: str) -> Expr:
    """Parse one expression (the text of a ``condition=`` value, say)."""
    return _Builder().expr(parse_with(expr_parser(), text.strip()))


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
                raise token_error(
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
            raise token_error(
                kind, f"{kind} names several plan classes: {', '.join(self.ambiguous_plan_classes[kind])}"
            )
        cls = self.plan_classes.get(str(kind))
        if cls is None:
            raise token_error(
                kind, f"unknown plan node {kind}; known: {', '.join(sorted(self.plan_classes))}"
            )
        values = {}
        for part in parts:
            if part.data == "variant":
                if cls.variant_field is None:
                    raise token_error(kind, f"{kind} has no [variant]")
                values[cls.variant_field] = self.value(part.children[0])
        shown = shown_fields(cls, skipped={*cls.child_fields, cls.variant_field})
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
                raise token_error(name, f"{owner} has no field {name}; fields: {', '.join(names) or 'none'}")
            if name in values:
                raise token_error(name, f"field {name} of {owner} is given twice")
            values[str(name)] = self.value(value)
        return values

    def value(self, tree: Tree | Token) -> object:
        match tree:
            case Tree(data="column", children=[Token(type="NAME") as name]):
                return str(name)
            case Tree(data="string", children=[token]):
                return unquoted(token)
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
            case Tree(data="edge", children=[source, target]):
                return self.edge(source, target)
            case Tree(data="value_object", children=[opening, *fields]):
                return self.value_object(opening, [f for f in fields if f is not None])
        return self.expr(tree)

    def edge(self, source: Tree, target: Tree) -> object:
        """``a(x,y)→b(k,l)``: the ``@notation_edge`` class of a relation and columns at each end."""
        cls = edge_class()
        if cls is None:
            raise token_error(
                _first_token(source), "no class is registered with @notation_edge to build an edge"
            )
        (relation, columns), (referenced, key) = (self.edge_end(end) for end in (source, target))
        return cls(relation, columns, referenced, key)

    def edge_end(self, tree: Tree) -> tuple[str, tuple[str, ...]]:
        match tree:
            case Tree(data="call", children=[name, None]):
                return identifier_from_token(name), ()
            case Tree(data="call", children=[name, Tree(data="positional", children=columns)]) if all(
                c.data == "column" and len(c.children) == 1 for c in columns
            ):
                return identifier_from_token(name), tuple(
                    identifier_from_token(c.children[0]) for c in columns
                )
        raise token_error(_first_token(tree), "an edge end is relation(column, ...), naming columns only")

    def value_object(self, opening: Token, fields: list[Tree]) -> object:
        name = opening[:-1]
        cls = value_class(name)
        if cls is None:
            raise token_error(
                opening, f"unknown value class {name}; registered: {', '.join(value_class_names())}"
            )
        return _construct(opening, cls, self.fields(opening, fields, shown_fields(cls, skipped=set())))

    def expr(self, tree: Tree) -> Expr:
        return getattr(self, f"expr_{tree.data}")(tree, *tree.children)

    def expr_paren(self, tree, inner):
        return self.expr(inner)

    def expr_number(self, tree, token):
        """``12`` an int (bigint when large), ``0.06`` a decimal, ``2.5e0`` a double: Spark's literal types."""
        text = str(token)
        if any(c in text for c in "eE"):
            return Literal(float(text), DOUBLE)
        if "." in text:
            return Literal(decimal.Decimal(text), literal_decimal_type(text))
        value = int(text)
        return Literal(value, integral_type_of(value))

    def expr_neg(self, tree, operand):
        if operand.data == "number":
            literal = self.expr(operand)
            value = -literal.value
            return Literal(value, integral_type_of(value) if isinstance(value, int) else literal.type)
        return Call("neg", (self.expr(operand),))

    def expr_string(self, tree, token):
        return Literal(unquoted(token), STRING)

    def expr_null(self, tree):
        return Literal(None, NULL)

    def expr_true(self, tree):
        return Literal(True, BOOLEAN)

    def expr_false(self, tree):
        return Literal(False, BOOLEAN)

    def expr_date(self, tree, token):
        try:
            return Literal(datetime.date.fromisoformat(unquoted(token)), DATE)
        except ValueError:
            raise token_error(token, f"date {token} is not a date written YYYY-MM-DD") from None

    def expr_timestamp(self, tree, token):
        return self._timestamp(token, TIMESTAMP)

    def expr_timestamp_ntz(self, tree, token):
        return self._timestamp(token, TIMESTAMP_NTZ)

    @staticmethod
    def _timestamp(token, kind):
        """``timestamp '2024-03-10 19:00:00Z'`` (an instant, written in UTC), ``timestamp_ntz '...'``."""
        try:
            return Literal(cast_value(unquoted(token), STRING, kind), kind)
        except SqlRuntimeError:
            raise token_error(token, f"{kind} {token} is not a timestamp written YYYY-MM-DD HH:MM:SS") from None

    def expr_interval(self, tree, count, unit):
        if not _INTEGER.fullmatch(unquoted(count)):
            raise token_error(count, f"interval count {count} is not a whole number")
        return Literal((int(unquoted(count)), str(unit)), IntervalType(str(unit)))

    def expr_column(self, tree, *names):
        *table, name = (identifier_from_token(n) for n in names)
        return Column(table[0] if table else None, name)

    def expr_call(self, tree, name, arguments):
        function = identifier_from_token(name)
        rule = None if arguments is None else arguments.data
        args = (
            () if rule in (None, "star", "distinct_star") else tuple(self.expr(a) for a in arguments.children)
        )
        if (target := cast_target(function)) is not None and args == (Literal(None, NULL),):
            return Literal(None, target)  # a typed NULL, as the printer writes it
        if name.type == "QUOTED_NAME" or function not in AGGREGATE_FUNCTIONS:
            if rule not in (None, "positional"):
                raise token_error(
                    name, f"only the aggregates {', '.join(AGGREGATE_FUNCTIONS)} take * or distinct"
                )
            return Call(function, args)
        parameters = ()
        if function in PARAMETERIZED_AGGREGATES and all(isinstance(a, Literal) for a in args[1:]):
            args, parameters = args[:1], full_parameters(function, tuple(a.value for a in args[1:]))
        arity = 2 if function in ("max_by", "min_by") else len(args) if function == "count" and rule == "distinct" else 1
        if rule is None or (args and len(args) != arity):
            raise token_error(
                name, f'aggregate {function} takes {"one argument" if arity == 1 else f"{arity} arguments"} or *; '
                      f'quote it ("{function}") for a function'
            )
        return AggregateCall(function, args[0] if args else None, rule.startswith("distinct"),
                             further_args=args[1:], parameters=parameters)

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
            origins.setdefault(cls.__name__, set()).add(origin(cls))
    ambiguous = {
        name: sorted(".".join(o) for o in places) for name, places in origins.items() if len(places) > 1
    }
    return found, ambiguous


def _distribute_children(kind: Token, cls: type, plans: list[LogicalPlan]) -> dict:
    """Children lines fill ``child_fields`` in order; one tuple-typed child field takes the rest."""
    fields = {f.name: f for f in attrs.fields(cls)}
    many = [name for name in cls.child_fields if _holds_many(fields[name])]
    if len(many) > 1:
        raise token_error(
            kind, f"{kind} has several tuple child fields ({', '.join(many)}); the notation cannot split them"
        )
    singles = len(cls.child_fields) - len(many)
    if len(plans) < singles or (not many and len(plans) != singles):
        expected = f"at least {singles}" if many else str(singles)
        raise token_error(
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


def _first_token(tree: Tree) -> Token:
    return next(tree.scan_values(lambda v: isinstance(v, Token)))


def _construct(owner: Token, cls: type, values: dict) -> object:
    """``cls`` built from the fields the text gives; a field it leaves out takes its absent value."""
    fields = [f for f in attrs.fields(cls) if f.init]
    values = {f.name: absent_value(f) for f in fields if f.name not in values} | values
    missing = [name for name, value in values.items() if value is attrs.NOTHING]
    if missing:
        raise token_error(owner, f"{cls.__name__} is missing {', '.join(missing)}")
    return cls(**{attrs.fields_dict(cls)[name].alias: value for name, value in values.items()})
