"""String functions, with Spark's semantics on Python's ``str`` (both count Unicode code points)."""

from __future__ import annotations

from catalog import types
from catalog.types import INT, NULL, STRING
from planner.ir.functions.registry import Arg, ArgumentTypeError, Function, Signature, plain, string_param


def substring(text: str, position: int, length: int = 2**31 - 1) -> str:
    """Spark's ``substring`` (``UTF8String.substringSQL``): position 1 is the first character, 0 too,
    a negative position counts from the end; a negative length gives ''."""
    start = position - 1 if position > 0 else len(text) + position if position < 0 else 0
    end = start + length
    start = max(start, 0)
    return text[start:end] if start < end else ""


def _substring_typing(args: tuple[Arg, ...]) -> Signature:
    subject = string_param(args[0], "substring's string")
    for bound in args[1:]:
        if bound.type not in (*types.INTEGRAL, NULL):
            raise ArgumentTypeError("substring's position and length (integers)")
    return Signature((subject, *(None for _ in args[1:])), STRING)


def _text_to(result, what: str):
    """A function of one string (any atomic value is read as its text) with a ``result`` type."""

    def typing(args: tuple[Arg, ...]) -> Signature:
        return Signature((string_param(args[0], what),), result)

    return typing


FUNCTIONS = (
    Function(
        "substring", "string", "the characters from pos (1-based; negative: from the end), len of them",
        (2, 3), "string, int[, int]", "string", typing=_substring_typing, evaluator=plain(substring),
        aliases=("substr",),
    ),
    Function(
        "upper", "string", "the string in upper case", (1, 1), "string", "string",
        typing=_text_to(STRING, "upper's argument (a string)"), evaluator=plain(str.upper), aliases=("ucase",),
    ),
    Function(
        "lower", "string", "the string in lower case", (1, 1), "string", "string",
        typing=_text_to(STRING, "lower's argument (a string)"), evaluator=plain(str.lower), aliases=("lcase",),
    ),
    Function(
        "length", "string", "the number of characters", (1, 1), "string", "int",
        typing=_text_to(INT, "length's argument (a string)"), evaluator=plain(len),
        aliases=("char_length", "character_length", "len"),
    ),
)
