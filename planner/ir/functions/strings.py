"""String functions, with Spark's semantics on Python's ``str``.

Both count Unicode code points (``length('😀')`` is 1) and use Unicode's full case mappings
(``upper('ß')`` is ``SS``, ``lower`` knows the final sigma). Any atomic argument where a string is
expected is read as its text (``concat(1, true)`` is ``1true``), as Spark's implicit cast does.
"""

from __future__ import annotations

from collections.abc import Callable

from catalog import types
from catalog.types import BIGINT, BOOLEAN, INT, NULL, STRING, DataType
from planner.ir import values
from planner.ir.functions.registry import (
    Arg,
    ArgumentTypeError,
    Function,
    Signature,
    integer_param,
    plain,
    string_param,
)

_MAX_LENGTH = 2**31 - 1


def substring(text: str, position: int, length: int = _MAX_LENGTH) -> str:
    """Spark's ``substring`` (``UTF8String.substringSQL``): position 1 is the first character, 0 too,
    a negative position counts from the end; a negative length gives ''."""
    start = position - 1 if position > 0 else len(text) + position if position < 0 else 0
    end = start + length
    start = max(start, 0)
    return text[start:end] if start < end else ""


def _right(text: str, length: int) -> str:
    return "" if length <= 0 else substring(text, -length, length)


def _replace(text: str, search: str, replacement: str = "") -> str:
    return text if search == "" else text.replace(search, replacement)  # an empty search changes nothing


def _pad(left: bool) -> Callable[..., str]:
    """lpad / rpad: ``text`` cut or padded to ``length`` characters with repeats of ``pad``; an
    empty pad only cuts."""

    def pad(text: str, length: int, filler: str = " ") -> str:
        if length <= len(text):
            return text[: max(length, 0)]
        if not filler:
            return text
        padding = (filler * ((length - len(text)) // len(filler) + 1))[: length - len(text)]
        return padding + text if left else text + padding

    return pad


def _locate(substr: str | None, text: str | None, start: int | None = 1) -> int | None:
    """Spark's ``StringLocate``: 1-based, 0 when absent or when ``start`` < 1; a NULL start gives 0
    (Hive's rule), before the other arguments are looked at."""
    if start is None:
        return 0
    if substr is None or text is None:
        return None
    if start < 1:
        return 0
    return text.find(substr, start - 1) + 1 if substr else 1


def _split_part(text: str, delimiter: str, index: int) -> str:
    if index == 0:
        raise values.SqlRuntimeError(
            "INVALID_INDEX_OF_ZERO", "split_part's index 0 is invalid: the first part is 1, the last -1"
        )
    parts = text.split(delimiter) if delimiter else [text]
    if text == "" and delimiter:
        parts = [""]
    position = index - 1 if index > 0 else len(parts) + index
    return parts[position] if 0 <= position < len(parts) else ""


def _substring_index(text: str, delimiter: str, count: int) -> str:
    """Spark's ``substring_index`` (``UTF8String.subStringIndex``): what comes before the count-th
    delimiter from the left (count > 0) or after the count-th from the right (count < 0); the whole
    string when there are fewer, '' for a count of 0 or an empty delimiter. Occurrences are searched
    from one character past the last one found, so they may overlap, as Spark's do."""
    if count == 0 or not delimiter:
        return ""
    if count > 0:
        found = -1
        for _ in range(min(count, len(text) + 1)):
            found = text.find(delimiter, found + 1)
            if found < 0:
                return text
        return text[:found]
    found = len(text) - len(delimiter) + 1
    for _ in range(min(-count, len(text) + 1)):
        if found - 1 < 0:
            return text
        found = text.rfind(delimiter, 0, found - 1 + len(delimiter))
        if found < 0:
            return text
    return text[found + len(delimiter):]


def _trimmer(strip: Callable[[str, str], str]) -> Callable[..., str]:
    """trim / ltrim / rtrim: spaces (only ' ', not tabs), or every character of ``characters``."""
    return lambda text, characters=" ": strip(text, characters)


def _concat(*texts: str | None) -> str | None:
    return None if any(t is None for t in texts) else "".join(texts)


def _concat_ws(separator: str | None, *texts: str | None) -> str | None:
    return None if separator is None else separator.join(t for t in texts if t is not None)


# --- typing -----------------------------------------------------------------------------------------


def _strings_to(result: DataType, name: str, integers: tuple[int, ...] = ()) -> Callable[[tuple[Arg, ...]], Signature]:
    """Every argument read as a string, except those at ``integers`` (an INT each)."""

    def typing(args: tuple[Arg, ...]) -> Signature:
        params = tuple(
            integer_param(a, f"{name}'s argument {i + 1} (an integer)") if i in integers
            else string_param(a, f"{name}'s argument {i + 1} (a string)")
            for i, a in enumerate(args)
        )
        return Signature(params, result)

    return typing


def _string_function(name: str, doc: str, arity: tuple[int, int | None], params: str, fn: Callable[..., object],
                     result: DataType = STRING, integers: tuple[int, ...] = (), aliases: tuple[str, ...] = (),
                     nulls: str = "strict") -> Function:
    return Function(name, "string", doc, arity, params, str(result), typing=_strings_to(result, name, integers),
                    evaluator=plain(fn), aliases=aliases, nulls=nulls)


def _initcap(text: str) -> str:
    """Spark's ``initcap`` (``UTF8String.toLowerCase().toTitleCase()``): the string in lower case, then
    the first character and each character after a space (only a space: not a tab or a hyphen) in
    title case; a character whose title case is not one character (``ß``) stays as it is, as Java's
    ``Character.toTitleCase`` leaves it."""
    characters = list(text.lower())
    for i, character in enumerate(characters):
        if i == 0 or characters[i - 1] == " ":
            titled = character.title()
            characters[i] = titled if len(titled) == 1 else character
    return "".join(characters)


def _translate(text: str, matching: str, replacement: str) -> str:
    """Spark's ``translate``: each character of ``matching`` becomes the character of ``replacement`` at
    its position, or is deleted when ``replacement`` is shorter; a character listed twice keeps its first
    mapping; a NUL as the replacement deletes too (Spark's dictionary uses it as the deletion mark)."""
    table: dict[str, str] = {}
    for i, character in enumerate(matching):
        table.setdefault(character, replacement[i] if i < len(replacement) else "\0")
    return "".join(c if c not in table else table[c] for c in text if table.get(c) != "\0")


def _chr(code: int) -> str:
    """Spark's ``chr``: '' for a negative code, else the character of its low byte (a NUL for 256)."""
    return "" if code < 0 else chr(code & 0xFF)


def _chr_typing(args: tuple[Arg, ...]) -> Signature:
    if not (types.is_numeric(args[0].type) or args[0].type in (NULL, STRING)):
        raise ArgumentTypeError("chr's argument (a bigint)")
    return Signature((BIGINT,), STRING)


def _predicate(name: str, doc: str, fn: Callable[[str, str], bool]) -> Function:
    return _string_function(name, doc, (2, 2), "string, string", fn, result=BOOLEAN)


FUNCTIONS = (
    _string_function("upper", "the string in upper case", (1, 1), "string", str.upper, aliases=("ucase",)),
    _string_function("lower", "the string in lower case", (1, 1), "string", str.lower, aliases=("lcase",)),
    _string_function("initcap", "each word (after a space) capitalized, the rest in lower case", (1, 1), "string",
                     _initcap),
    _string_function("length", "the number of characters", (1, 1), "string", len, result=INT,
                     aliases=("char_length", "character_length", "len")),
    _string_function("trim", "without leading and trailing spaces (or characters of trimStr)", (1, 2),
                     "string[, trimStr]", _trimmer(str.strip), aliases=("btrim",)),
    _string_function("ltrim", "without leading spaces (or characters of trimStr)", (1, 2), "string[, trimStr]",
                     _trimmer(str.lstrip)),
    _string_function("rtrim", "without trailing spaces (or characters of trimStr)", (1, 2), "string[, trimStr]",
                     _trimmer(str.rstrip)),
    _string_function("concat", "the strings joined; NULL if any is NULL (also a || b)", (0, None), "strings",
                     _concat, nulls="aware"),
    _string_function("concat_ws", "the non-NULL strings joined by sep; NULL only if sep is", (1, None),
                     "sep, strings", _concat_ws, nulls="aware"),
    _string_function("substring", "len characters from pos (1-based; negative: from the end)", (2, 3),
                     "string, int[, int]", substring, integers=(1, 2), aliases=("substr",)),
    _string_function("left", "the first len characters", (2, 2), "string, int", lambda t, n: substring(t, 1, n),
                     integers=(1,)),
    _string_function("right", "the last len characters", (2, 2), "string, int", _right, integers=(1,)),
    _string_function("replace", "every occurrence of search replaced (by '' when omitted)", (2, 3),
                     "string, search[, replacement]", _replace),
    _string_function("lpad", "padded on the left with pad (a space) to len characters, or cut to len", (2, 3),
                     "string, int[, pad]", _pad(left=True), integers=(1,)),
    _string_function("rpad", "padded on the right with pad (a space) to len characters, or cut to len", (2, 3),
                     "string, int[, pad]", _pad(left=False), integers=(1,)),
    _string_function("locate", "1-based position of substr in str from pos, 0 if absent; instr(str, substr) and "
                     "position(substr IN str) too", (2, 3), "substr, str[, int pos]", _locate, result=INT,
                     integers=(2,), aliases=("position",), nulls="aware"),
    _string_function("split_part", "the index-th part of str split at delim (negative: from the end; '' beyond)",
                     (3, 3), "str, delim, int", _split_part, integers=(2,)),
    _string_function("substring_index", "before the count-th delim from the left (count > 0) or after the count-th "
                     "from the right (count < 0)", (3, 3), "str, delim, int count", _substring_index, integers=(2,)),
    _string_function("repeat", "the string n times ('' for n <= 0; also space(n))", (2, 2), "string, int n",
                     lambda text, n: text * max(n, 0), integers=(1,)),
    _string_function("space", "n spaces ('' for n <= 0)", (1, 1), "int n", lambda n: " " * max(n, 0), integers=(0,)),
    _string_function("reverse", "the characters in reverse order", (1, 1), "string", lambda text: text[::-1]),
    _string_function("translate", "each character of from replaced by the one at its position in to, deleted when "
                     "to is shorter", (3, 3), "str, from, to", _translate),
    _string_function("ascii", "the code point of the first character, 0 for ''", (1, 1), "string",
                     lambda text: ord(text[0]) if text else 0, result=INT),
    Function("chr", "string", "the character of the code's low byte (code mod 256); '' for a negative code",
             (1, 1), "bigint", "string", typing=_chr_typing, evaluator=plain(_chr), aliases=("char",)),
    _predicate("startswith", "whether str starts with prefix", str.startswith),
    _predicate("endswith", "whether str ends with suffix", str.endswith),
    _predicate("contains", "whether str contains substr", lambda text, part: part in text),
)
