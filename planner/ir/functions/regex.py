"""Regular-expression functions with Java's regex semantics, run on Python's ``re``.

Spark compiles patterns with ``java.util.regex``. A pattern is translated to an equivalent Python
pattern (``java_regex``) or refused when a construct means something else in Python or is not
there at all: ``\\p{...}`` classes, nested classes and ``&&`` intersections, ``\\b`` (Unicode-aware in
Java 17, not in ``\\w``), ``\\h``/``\\v``/``\\R``, inline flags other than a leading ``(?i)``/``(?s)``,
octal escapes, multi-digit back-references. What is translated: ``.`` and ``$`` (Java's line
terminators are ``\\n``, ``\\r``, ``\\r\\n``, U+0085, U+2028, U+2029, Python's only ``\\n``), ``\\z``, ``\\Z``,
``\\Q...\\E``, named groups; ``\\w``, ``\\d``, ``\\s`` and ``(?i)`` are ASCII in both (``re.ASCII``).
Matches are found as Java's ``Matcher.find`` finds them: after an empty match the next search
starts one character later (Python's ``re.sub`` would also try a non-empty match there), and a
replacement's ``$n``, ``${name}`` and ``\\x`` are expanded as ``Matcher.appendReplacement`` does.

A constant pattern is checked when the view is planned (refused with the reason); a pattern read
from a column is checked on each row, and one that cannot be run raises an error naming it — never
a silently different match. A pattern Java rejects raises Spark's INVALID_PARAMETER_VALUE.PATTERN
when a row is evaluated, as in Spark.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

from catalog.types import BOOLEAN, INT, NULL, STRING
from planner.ir import values
from planner.ir.functions.registry import (
    Arg,
    ArgumentTypeError,
    Function,
    Signature,
    UnsupportedArgumentError,
    integer_param,
    plain,
    string_param,
)

# Java's `$` without MULTILINE: at the end, or before a final line terminator (not inside \r\n)
_DOLLAR = r"(?:(?<!\r)(?=\n\Z)|(?=(?:\r\n|[\r\x85\u2028\u2029])?\Z))"
_DOT = r"[^\n\r\x85\u2028\u2029]"
_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")
_LEADING_FLAGS = re.compile(r"\(\?([is]+)\)")
_GROUP_NAME = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# escapes meaning the same in both: classes (ASCII in both), control characters, anchors
_SAME_ESCAPES = frozenset("dDwWsStnrfaA")


class UnsupportedRegex(ValueError):
    """A Java pattern whose meaning Python's ``re`` does not have."""


def java_regex(pattern: str) -> str:
    """The Python pattern (for ``re.ASCII``) matching what the Java ``pattern`` matches."""
    out: list[str] = []
    i, dotall = 0, False
    if flags := _LEADING_FLAGS.match(pattern):
        dotall = "s" in flags.group(1)
        out.append(flags.group(0))
        i = flags.end()
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            text, i = _escape(pattern, i, in_class)
            out.append(text)
            continue
        if in_class:
            if c == "[" or pattern.startswith("&&", i):
                raise UnsupportedRegex("nested character classes, POSIX [:name:] classes and && intersections differ in Python")
            in_class = c != "]"
            out.append(c)
            i += 1
            continue
        if c == "[":
            start = i + 2 if pattern.startswith("[^", i) else i + 1
            if pattern.startswith("]", start):
                raise UnsupportedRegex("a character class starting with ] is read differently by Java and Python")
            out.append(pattern[i:start])
            in_class, i = True, start
            continue
        if c == "(" and pattern.startswith("(?", i):
            text, i = _group_opening(pattern, i)
            out.append(text)
            continue
        if c == "{" and not _QUANTIFIER.match(pattern, i):
            raise UnsupportedRegex("{ that does not start a {n}, {n,} or {n,m} quantifier")
        out.append(_DOT if c == "." and not dotall else _DOLLAR if c == "$" else c)
        i += 1
    return "".join(out)


def _escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """The Python text of the escape at ``pattern[i]`` (a backslash) and the index after it."""
    if i + 1 == len(pattern):
        return "\\", i + 1  # Java rejects a trailing backslash, and so does Python
    d = pattern[i + 1]
    if d == "Q":  # \Q...\E quotes everything between
        end = pattern.find("\\E", i + 2)
        quoted = pattern[i + 2: end if end >= 0 else len(pattern)]
        return "".join(re.escape(ch) for ch in quoted), (end + 2 if end >= 0 else len(pattern))
    if d in _SAME_ESCAPES:
        return "\\" + d, i + 2
    if d == "x" and not pattern.startswith("{", i + 2):
        return pattern[i: i + 4], i + 4
    if d == "u":
        if 0xD800 <= int(pattern[i + 2: i + 6] or "0", 16) <= 0xDFFF:
            raise UnsupportedRegex("a surrogate \\u escape matches half a character in Java, nothing in Python")
        return pattern[i: i + 6], i + 6
    if d == "z" and not in_class:
        return r"\Z", i + 2
    if d == "Z" and not in_class:
        return _DOLLAR, i + 2
    if d == "k" and not in_class and (name := _GROUP_NAME.match(pattern, i + 3)) and pattern.startswith("<", i + 2):
        if pattern.startswith(">", name.end()):
            return f"(?P={name.group(0)})", name.end() + 1
    if d in "123456789" and not in_class and not (i + 2 < len(pattern) and pattern[i + 2].isdigit()):
        return "\\" + d, i + 2
    if d.isascii() and d.isalnum():
        raise UnsupportedRegex(f"the escape \\{d} means something else (or nothing) in Python's re")
    return "\\" + d, i + 2  # an escaped punctuation character is itself in both


def _group_opening(pattern: str, i: int) -> tuple[str, int]:
    """``(?...`` openings: non-capturing, lookaround, atomic, named groups and a scoped ``(?i:``."""
    rest = pattern[i + 2:]
    for same in (":", "=", "!", "<=", "<!", ">", "i:"):
        if rest.startswith(same):
            return "(?" + same, i + 2 + len(same)
    if rest.startswith("<") and (name := _GROUP_NAME.match(rest, 1)) and rest.startswith(">", name.end()):
        return f"(?P<{name.group(0)}>", i + 2 + name.end() + 1
    raise UnsupportedRegex("inline flags other than a leading (?i) or (?s), and (?i:...), differ in Python")


@functools.lru_cache(maxsize=1024)
def _compiled(pattern: str) -> re.Pattern | Exception:
    """The compiled pattern, or the error to raise when a row needs it."""
    try:
        return re.compile(java_regex(pattern), re.ASCII)
    except UnsupportedRegex as error:
        return values.SqlRuntimeError("UNSUPPORTED_REGEX", f"the regular expression {pattern!r} cannot be run exactly as Java runs it: {error}")
    except re.error as error:
        return values.SqlRuntimeError("INVALID_PARAMETER_VALUE.PATTERN", f"the regular expression {pattern!r} is invalid: {error}")


def _regex(pattern: str) -> re.Pattern:
    compiled = _compiled(pattern)
    if isinstance(compiled, Exception):
        raise compiled
    return compiled


def _matches(regex: re.Pattern, text: str):
    """Every match ``Matcher.find`` finds in turn: after an empty match the search moves on one
    character; after a non-empty one it starts at its end."""
    position = 0
    while position <= len(text) and (match := regex.search(text, position)) is not None:
        yield match
        if match.end() == match.start() and match.end() < len(text) and ord(text[match.end()]) > 0xFFFF:
            # Java steps one UTF-16 unit, into the character's surrogate pair (Spark then writes '?')
            raise values.SqlRuntimeError(
                "UNSUPPORTED_REGEX", f"an empty match of {regex.pattern!r} before {text[match.end()]!r}, a character "
                "outside the Basic Multilingual Plane, splits it in Java: Spark's result there is not text",
            )
        position = match.end() + (1 if match.end() == match.start() else 0)


# --- the functions --------------------------------------------------------------------------------


def _rlike(text: str, pattern: str) -> bool:
    return _regex(pattern).search(text) is not None


def _extract(text: str, pattern: str, index: int = 1) -> str:
    regex = _regex(pattern)
    match = regex.search(text)
    if match is None:
        return ""
    if not 0 <= index <= regex.groups:
        raise values.SqlRuntimeError(
            "INVALID_PARAMETER_VALUE.REGEX_GROUP_INDEX",
            f"regexp_extract expects a group index between 0 and {regex.groups}, but got {index}",
        )
    return match.group(index) or ""


def _replacement(replacement: str, regex: re.Pattern) -> list[str | int]:
    """``replacement`` as literal parts and group references, read as ``appendReplacement`` reads it."""
    parts: list[str | int] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\":
            if i + 1 == len(replacement):
                raise ValueError("character to be escaped is missing")
            parts.append(replacement[i + 1])
            i += 2
        elif c == "$":
            reference, i = _group_reference(replacement, i + 1, regex)
            parts.append(reference)
        else:
            parts.append(c)
            i += 1
    return parts


def _group_reference(replacement: str, i: int, regex: re.Pattern) -> tuple[int, int]:
    if replacement.startswith("{", i):
        end = replacement.find("}", i)
        name = replacement[i + 1: end] if end > 0 else ""
        if name not in regex.groupindex:
            raise ValueError(f"no group with name {{{name}}}")
        return regex.groupindex[name], end + 1
    if i == len(replacement) or not replacement[i].isdigit():
        raise ValueError("illegal group reference")
    number, i = int(replacement[i]), i + 1
    if number > regex.groups:
        raise ValueError(f"no group {number}")
    while i < len(replacement) and replacement[i].isdigit() and number * 10 + int(replacement[i]) <= regex.groups:
        number, i = number * 10 + int(replacement[i]), i + 1
    return number, i


def _replace(text: str, pattern: str, replacement: str, position: int = 1) -> str:
    """``regexp_replace``: every match from ``position`` (1-based; the text before it is kept, and
    the search sees only the rest, as Java's region does) replaced."""
    start = position - 1
    if not (start == 0 or start < len(text)):
        return text
    regex = _regex(pattern)
    out, kept_to, parts = [text[:start]], 0, None
    region = text[start:]
    for match in _matches(regex, region):
        if parts is None:
            try:
                parts = _replacement(replacement, regex)
            except ValueError as error:
                raise values.SqlRuntimeError(
                    "INVALID_REGEXP_REPLACE",
                    f"could not perform regexp_replace for source {text!r}, pattern {pattern!r}, replacement "
                    f"{replacement!r}: {error}",
                ) from None
        out.append(region[kept_to: match.start()])
        out.extend(p if isinstance(p, str) else match.group(p) or "" for p in parts)
        kept_to = match.end()
    out.append(region[kept_to:])
    return "".join(out)


# --- typing -----------------------------------------------------------------------------------------


def _checked_pattern(arg: Arg, name: str) -> None:
    """A constant pattern is checked now: refused when Python's ``re`` cannot run it as Java does."""
    if arg.constant and isinstance(arg.value, str):
        try:
            java_regex(arg.value)
        except UnsupportedRegex as error:
            raise UnsupportedArgumentError(
                f"the regular expression {arg.value!r} of {name} is not supported: {error}"
            ) from None


def _typing(name: str, result, integers: tuple[int, ...] = ()) -> Callable[[tuple[Arg, ...]], Signature]:
    def typing(args: tuple[Arg, ...]) -> Signature:
        _checked_pattern(args[1], name)
        params = tuple(
            integer_param(a, f"{name}'s argument {i + 1} (an integer)") if i in integers
            else string_param(a, f"{name}'s argument {i + 1} (a string)")
            for i, a in enumerate(args)
        )
        if name == "regexp_replace" and len(args) == 4:
            position = args[3]
            if not (position.constant and position.type == INT and position.value > 0) and position.type != NULL:
                raise ArgumentTypeError("regexp_replace's position (an integer constant > 0)")
        return Signature(params, result)

    return typing


FUNCTIONS = (
    Function("rlike", "string", "whether the Java regular expression matches somewhere in str", (2, 2),
             "str, regexp", "boolean", typing=_typing("rlike", BOOLEAN), evaluator=plain(_rlike),
             aliases=("regexp_like", "regexp")),
    Function("regexp_extract", "string", "group idx (default 1) of the first match, '' when none", (2, 3),
             "str, regexp[, int idx]", "string", typing=_typing("regexp_extract", STRING, (2,)),
             evaluator=plain(_extract)),
    Function("regexp_replace", "string", "every match (from pos) replaced; $n, ${name} and \\x as in Java", (3, 4),
             "str, regexp, rep[, int constant pos]", "string", typing=_typing("regexp_replace", STRING, (3,)),
             evaluator=plain(_replace)),
)
