"""The plan notation's vocabulary, shared by its printer and its parser.

Which names may stand bare and which are quoted, how strings are escaped, which words the grammar
reserves, which value classes fields may hold, and the lark parsers of ``plan_notation.lark``: the
printer (``planner.ir.notation_printer``) writes exactly what the parser
(``planner.ir.notation_parser``) reads, because both ask this module. The notation itself is
described in ``planner.ir.notation``.
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re
import typing
from collections.abc import Iterator

import attrs
import lark
from lark import Token, Tree

AGGREGATE_FUNCTIONS = ("sum", "count", "avg", "min", "max", "max_by", "min_by", "stddev", "stddev_samp", "stddev_pop", "std", "variance",
                       "var_samp", "var_pop", "median", "percentile", "percentile_cont", "percentile_disc")
#: Aggregates whose constant parameters (fraction, descending order) follow the argument:
#: ``percentile_disc(x, 0.25, true)``; the defaults are left out (``median(x)``, ``percentile(x, 0.25)``).
PARAMETERIZED_AGGREGATES = ("median", "percentile", "percentile_cont", "percentile_disc")


def shown_parameters(func: str, parameters: tuple) -> tuple:
    """The parameters the notation writes: those that differ from ``full_parameters``' defaults."""
    if func == "median" and parameters == (0.5, False):
        return ()
    return parameters[:1] if parameters[1:] == (False,) else parameters


def full_parameters(func: str, written: tuple) -> tuple:
    """A percentile's (fraction, descending) from what the notation wrote (see ``shown_parameters``)."""
    if func == "median" and not written:
        return (0.5, False)
    return written + (False,) if len(written) == 1 else written

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BARE_FUNCTION = re.compile(r"[a-z_][A-Za-z0-9_]*")

_VALUE_CLASSES: dict[str, type] = {}
_EDGE_CLASSES: list[type] = []  # at most one: the class an arrow builds


def notation_value(cls: type) -> type:
    """Class decorator: let plan fields hold ``cls`` values, written ``TypeName(field=value, ...)``.

    Registration is by class name, because the name is what the text shows.
    """
    if not attrs.has(cls):
        raise ValueError(f"notation_value needs an attrs class, got {cls.__qualname__}")
    known = _VALUE_CLASSES.get(cls.__name__)
    if known is not None and origin(known) != origin(cls):
        raise ValueError(
            f"value class name {cls.__name__} is already registered by {known.__module__}.{known.__qualname__}"
        )
    _VALUE_CLASSES[cls.__name__] = cls
    return cls


def notation_edge(cls: type) -> type:
    """Class decorator: a value class of four fields (source, its columns, target, its columns), written
    ``source(c1,c2)→target(k1,k2)`` as an arrow is drawn, instead of ``TypeName(field=value, ...)``.

    Foreign-key edges fill plan lines; the arrow form says the same in a third of the width. One
    class may use the form, so the parser knows what an arrow builds; the long form still parses.
    """
    fields = [f for f in attrs.fields(cls) if f.init] if attrs.has(cls) else []
    if len(fields) != 4:
        raise ValueError(f"notation_edge needs an attrs class of four fields, got {cls.__qualname__}")
    known = edge_class()
    if known is not None and origin(known) != origin(cls):
        raise ValueError(f"the edge notation is already taken by {known.__module__}.{known.__qualname__}")
    _EDGE_CLASSES[:] = [cls]
    return notation_value(cls)


def edge_class() -> type | None:
    """The class an arrow ``a(x)→b(y)`` builds, if one is registered with ``@notation_edge``."""
    return _EDGE_CLASSES[0] if _EDGE_CLASSES else None


def is_edge_class(cls: type) -> bool:
    """Whether values of ``cls`` print in the arrow form."""
    return edge_class() is cls


def value_class(name: str) -> type | None:
    """The class registered with ``@notation_value`` under ``name``, if any."""
    return _VALUE_CLASSES.get(name)


def value_class_names() -> list[str]:
    """The registered value class names, sorted (for error messages)."""
    return sorted(_VALUE_CLASSES)


def format_identifier(name: str) -> str:
    """``name`` as written in the notation: bare if it is a plain identifier, else double-quoted."""
    return name if is_bare_identifier(name) else quoted(name, '"')


def identifier_from_token(token: Token) -> str:
    """The name a NAME or QUOTED_NAME token spells."""
    return unquoted(token) if token.type == "QUOTED_NAME" else str(token)


def shown_fields(cls: type, skipped: set[str | None]) -> list[attrs.Attribute]:
    """The fields written ``key=value``: the ``__init__`` ones outside ``skipped``."""
    fields = [f for f in attrs.fields(cls) if f.init and f.name not in skipped]
    for field in fields:
        if not is_bare_identifier(field.name):
            raise ValueError(
                f"field {field.name!r} of {cls.__name__} is a keyword of the plan notation; rename it"
            )
    return fields


def is_omitted(field: attrs.Attribute, value: object) -> bool:
    """Whether ``value`` goes unwritten: it is the field's default, or None where None needs no default.

    The parser reads an absent field back the same way (``absent_value``), so lines stay short
    without losing anything.
    """
    default = _default(field)
    if default is not attrs.NOTHING:
        return type(value) is type(default) and value == default
    return value is None and _admits_none(field)


def absent_value(field: attrs.Attribute) -> object:
    """The value of a field the text leaves out: its default, None if it may be None, else NOTHING."""
    default = _default(field)
    if default is attrs.NOTHING and _admits_none(field):
        return None
    return default


def _default(field: attrs.Attribute) -> object:
    default = field.default
    if isinstance(default, attrs.Factory):
        return attrs.NOTHING if default.takes_self else default.factory()
    return default


def _admits_none(field: attrs.Attribute) -> bool:
    annotation = field.type
    if isinstance(annotation, str):
        return bool(re.search(r"\bNone\b|Optional\[", annotation))
    return type(None) in typing.get_args(annotation)


def float_text(value: float) -> str:
    """The text of a finite float; repr round-trips it exactly, and inf/nan have no notation."""
    if not math.isfinite(value):
        raise ValueError(f"the plan notation has no text for the float {value}")
    return repr(value)


def is_bare_identifier(name: str) -> bool:
    """Whether ``name`` may be written unquoted: an identifier that is not a word of the grammar."""
    return bool(IDENTIFIER.fullmatch(name)) and name not in keywords()


def is_bare_function(op: str) -> bool:
    """Capitalised names open value classes and aggregate names read as aggregates: both are quoted."""
    return bool(_BARE_FUNCTION.fullmatch(op)) and op not in keywords() and op not in AGGREGATE_FUNCTIONS


_ESCAPES = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_UNESCAPES = {"n": "\n", "r": "\r", "t": "\t"}


def quoted(text: str, quote: str) -> str:
    """``text`` between ``quote`` characters, with backslash escapes for the quote, breaks and unprintables."""
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


def unquoted(token: str) -> str:
    """The text a quoted token spells: the inverse of ``quoted``."""

    def unescape(match: re.Match) -> str:
        escape = match.group(1)
        if escape[0] in "uU" and len(escape) > 1:
            return chr(int(escape[1:], 16))
        return _UNESCAPES.get(escape, escape)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", unescape, token[1:-1])


def load_grammar(file_name: str, start: str, postlex: lark.lark.PostLex | None = None) -> lark.Lark:
    """An LALR parser for a grammar file of this package; ``%import`` finds sibling grammar files."""

    def sibling(_base_path: str | None, grammar_path: str) -> tuple[str, str]:
        return grammar_path, _grammar_text(grammar_path)  # FileNotFoundError sends lark to its own

    return lark.Lark(
        _grammar_text(file_name),
        parser="lalr",
        start=start,
        maybe_placeholders=True,
        import_paths=[sibling],
        postlex=postlex,
    )


class _BreaksInsideBrackets(lark.lark.PostLex):
    """Drops the line breaks inside ``[...]`` and ``(...)``, where the printer wraps long values.

    A line break still ends a node (or starts a continuation line of fields) at the top level and
    inside a subquery block ``{...}``, whose plan is lines again.
    """

    always_accept = ("_NL", "_FIELD_NL")
    _OPENING = frozenset({"LSQB", "LPAR", "VALUE_CLASS_OPEN"})
    _CLOSING = frozenset({"RSQB", "RPAR", "_BLOCK_END"})

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        open_brackets: list[str] = []
        for token in stream:
            if token.type in self.always_accept and open_brackets and open_brackets[-1] != "LBRACE":
                continue
            if token.type in self._OPENING or token.type == "LBRACE":
                open_brackets.append(token.type)
            elif token.type in self._CLOSING and open_brackets:
                open_brackets.pop()
            yield token


def parse_with(parser: lark.Lark, text: str) -> Tree:
    """Parse ``text``; a syntax error becomes a ValueError naming its line and column."""
    try:
        return parser.parse(text)
    except lark.UnexpectedInput as error:
        raise ValueError(_syntax_error(error, text)) from None


def _grammar_text(file_name: str) -> str:
    return importlib.resources.files("planner.ir").joinpath(file_name).read_text()


@functools.cache
def plan_parser() -> lark.Lark:
    """The parser of whole plans, built once."""
    return load_grammar("plan_notation.lark", "start", _BreaksInsideBrackets())


@functools.cache
def expr_parser() -> lark.Lark:
    """The parser of one expression (``parse_expr``), built once."""
    return load_grammar("plan_notation.lark", "expr", _BreaksInsideBrackets())


@functools.cache
def keywords() -> frozenset[str]:
    """Words the grammar reserves; a name spelled like one is quoted when printed: the grammar's
    string literals that are identifiers (the terminals of the built parser, a test checks). Read
    from its text, since building the parser (or even lark's grammar loader) costs tens of
    milliseconds, and every ``ivm run`` prints its source predicates."""
    return frozenset(word for word in re.findall(r'"([^"\\]*)"', _grammar_text("plan_notation.lark"))
                     if IDENTIFIER.fullmatch(word))


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


def token_error(token: Token, message: str) -> ValueError:
    """A ValueError that points at ``token``, for errors found after parsing (unknown nodes, fields)."""
    return ValueError(f"line {token.line}, column {token.column}: {message}")


def origin(cls: type) -> tuple[str, str]:
    """Where ``cls`` is defined: two classes of one name from different places are ambiguous."""
    return cls.__module__, cls.__qualname__
