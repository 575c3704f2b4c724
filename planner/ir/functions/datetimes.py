"""Spark's date and time functions over DATE, TIMESTAMP and TIMESTAMP_NTZ (planner/ir/timestamps.py).

A function whose value depends on the session time zone (what hour an instant shows, where its day
starts) gets the zone as a last argument when it is planned (``_zoned``: Spark's analyzer gives every
TimeZoneAwareExpression the session's zone the same way), so evaluating it needs nothing else.
Arguments are cast as Spark casts them: a date or a string into a TIMESTAMP where an instant is
needed, anything date-like into a DATE where a day is. Patterns: the functions that parse text
(``unix_timestamp``, ``to_date``, ``to_timestamp``) take only Spark's default pattern, and those that
print it (``date_format``, ``from_unixtime``) a whitelist of pattern letters (``format_pattern``); any
other pattern is refused with the reason rather than read differently.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Callable

from catalog import types
from catalog.types import BIGINT, DATE, INT, NULL, STRING, TIMESTAMP, TIMESTAMP_NTZ, TIMESTAMPS
from planner.ir import timestamps
from planner.ir.dates import shift_date
from planner.ir.expressions import Literal, cast_op
from planner.ir.functions.registry import (
    Arg,
    ArgumentTypeError,
    Bound,
    Function,
    Signature,
    UnsupportedArgumentError,
    integer_param,
    plain,
)
from planner.ir.values import SqlRuntimeError

DATE_LIKE = (DATE, STRING, NULL, *TIMESTAMPS)
DEFAULT_PATTERN = "yyyy-MM-dd HH:mm:ss"


def _zoned(name: str) -> Callable[..., object]:
    """The front end's rewrite of ``name(args)`` into ``name(args, <session time zone>)``."""
    def rewrite(call, *args):
        return call(name, *args, Literal(timestamps.session_time_zone.get(), STRING))
    return rewrite


def _instant_param(arg: Arg, what: str) -> types.DataType:
    """An instant: a TIMESTAMP as it is; a date, a string or a TIMESTAMP_NTZ cast to one (in the zone)."""
    if arg.type in DATE_LIKE:
        return TIMESTAMP
    raise ArgumentTypeError(what)


def _date_param(arg: Arg, what: str) -> types.DataType:
    if arg.type in DATE_LIKE:
        return DATE
    raise ArgumentTypeError(what)


def _local(value: datetime.datetime, zone: str) -> datetime.datetime:
    """The local date-time of a TIMESTAMP (aware) in ``zone``, or a TIMESTAMP_NTZ (naive) as it is."""
    return value if value.tzinfo is None else timestamps.to_local(value, zone)


def _constant_text(arg: Arg, what: str) -> str | None:
    """The value of a constant string argument (None for a NULL); refused when it is not constant."""
    if arg.type == NULL:
        return None
    if arg.type != STRING or not arg.constant:
        raise UnsupportedArgumentError(f"{what} must be a constant string")
    return arg.value


# --- truncation --------------------------------------------------------------------------------

_DATE_LEVELS = {"year": "year", "yyyy": "year", "yy": "year", "quarter": "quarter", "month": "month", "mm": "month",
                "mon": "month", "week": "week"}
_TIME_LEVELS = {"day": "day", "dd": "day", "hour": "hour", "minute": "minute", "second": "second",
                "millisecond": "millisecond", "microsecond": "microsecond"}


def truncate_date(day: datetime.date, level: str) -> datetime.date:
    """The first day of ``day``'s year, quarter, month or week (weeks start on Monday)."""
    match level:
        case "year":
            return day.replace(month=1, day=1)
        case "quarter":
            return day.replace(month=(day.month - 1) // 3 * 3 + 1, day=1)
        case "month":
            return day.replace(day=1)
    return day - datetime.timedelta(days=day.weekday())


def truncate_instant(instant: datetime.datetime, level: str, zone: str) -> datetime.datetime:
    """Spark's ``truncTimestamp``: below a minute on the instant itself (offsets are whole seconds),
    minutes to days on the local time line keeping the offset, longer levels from the local date's
    truncation at the start of its day."""
    match level:
        case "microsecond":
            return instant
        case "millisecond":
            return instant.replace(microsecond=instant.microsecond // 1000 * 1000)
        case "second":
            return instant.replace(microsecond=0)
        case "minute":
            return timestamps.on_local_time_line(instant, zone, lambda t: t.replace(second=0, microsecond=0))
        case "hour":
            return timestamps.on_local_time_line(instant, zone, lambda t: t.replace(minute=0, second=0, microsecond=0))
        case "day":
            return timestamps.on_local_time_line(instant, zone, lambda t: t.replace(hour=0, minute=0, second=0, microsecond=0))
    day = truncate_date(timestamps.to_local(instant, zone).date(), level)
    return timestamps.from_local(timestamps.date_to_local(day), zone)


def _date_trunc(unit: str, instant: datetime.datetime, zone: str) -> datetime.datetime | None:
    level = _DATE_LEVELS.get(unit.lower()) or _TIME_LEVELS.get(unit.lower())
    return None if level is None else truncate_instant(instant, level, zone)  # an unknown unit is NULL in Spark


def _trunc(day: datetime.date, unit: str) -> datetime.date | None:
    level = _DATE_LEVELS.get(unit.lower())
    return None if level is None else truncate_date(day, level)


# --- differences ---------------------------------------------------------------------------------

_MICROS_IN = {"microsecond": 1, "millisecond": 1_000, "second": 1_000_000, "minute": 60_000_000, "hour": 3_600_000_000}
_MONTHS_IN = {"month": 1, "quarter": 3, "year": 12}
_TIMESTAMPDIFF_UNITS = (*_MICROS_IN, "day", "week", *_MONTHS_IN)


def _toward_zero(numerator: int, denominator: int) -> int:
    quotient = abs(numerator) // denominator
    return quotient if numerator >= 0 else -quotient


def _timestampdiff(unit: str, start: datetime.datetime, end: datetime.datetime, zone: str) -> int:
    """Spark's ``timestampdiff`` (``DateTimeUtils.timestampDiff``): Java's ``ChronoUnit.between`` of the
    two local date-times in the session time zone, whole units toward zero. Time units count the
    microseconds between them; day-based units first step the end day back (or forward) one day when
    its time of day has not reached the start's, then count days, weeks (days / 7) or months (by the
    month and day, ``LocalDate.until``: quarters and years are whole 3 and 12 months)."""
    begin, finish = _local(start, zone).replace(tzinfo=None), _local(end, zone).replace(tzinfo=None)
    if unit in _MICROS_IN:
        return _toward_zero((finish - begin) // datetime.timedelta(microseconds=1), _MICROS_IN[unit])
    end_day = finish.date()
    if end_day > begin.date() and finish.time() < begin.time():
        end_day -= datetime.timedelta(days=1)
    elif end_day < begin.date() and finish.time() > begin.time():
        end_day += datetime.timedelta(days=1)
    if unit in ("day", "week"):
        return _toward_zero((end_day - begin.date()).days, 1 if unit == "day" else 7)
    packed = (end_day.year * 12 + end_day.month) * 32 + end_day.day - ((begin.year * 12 + begin.month) * 32 + begin.day)
    return _toward_zero(_toward_zero(packed, 32), _MONTHS_IN[unit])


def _timestampdiff_typing(args: tuple[Arg, ...]) -> Signature:
    unit = _constant_text(args[0], "timestampdiff's unit")
    if unit is None or unit.lower() not in _TIMESTAMPDIFF_UNITS:
        raise UnsupportedArgumentError(f"timestampdiff's unit must be one of {', '.join(u.upper() for u in _TIMESTAMPDIFF_UNITS)}")
    return Signature((STRING, _instant_param(args[1], "timestampdiff's start (a timestamp)"),
                      _instant_param(args[2], "timestampdiff's end (a timestamp)"), None), BIGINT)


# --- parts of a date-time --------------------------------------------------------------------

def _time_part(part: str) -> Callable[[datetime.datetime, str], int]:
    return lambda value, zone: getattr(_local(value, zone), part)


def _local_time_param(arg: Arg, what: str) -> types.DataType:
    """hour/minute/second: a TIMESTAMP_NTZ as it is, anything else read as an instant."""
    return TIMESTAMP_NTZ if arg.type == TIMESTAMP_NTZ else _instant_param(arg, what)


def _time_part_typing(name: str):
    return lambda args: Signature((_local_time_param(args[0], f"{name}'s argument (a timestamp)"), None), INT)


def _day_of_week(day: datetime.date) -> int:
    """1 for Sunday ... 7 for Saturday, as Spark counts."""
    return (day.weekday() + 1) % 7 + 1


def _one_date(name: str, result: types.DataType):
    return lambda args: Signature((_date_param(args[0], f"{name}'s argument (a date)"),), result)


# --- day and month arithmetic ---------------------------------------------------------------

def add_days(day: datetime.date, days: int) -> datetime.date:
    try:
        return day + datetime.timedelta(days=days)
    except OverflowError:
        raise SqlRuntimeError("DATETIME_OVERFLOW", f"{day} + {days} days is outside years 1..9999") from None


def _add_months(day: datetime.date, months: int) -> datetime.date:
    try:
        return shift_date(day, months, "month")
    except ValueError as error:
        raise SqlRuntimeError("DATETIME_OVERFLOW", str(error)) from None


def _days_param(arg: Arg, what: str) -> types.DataType:
    """date_add's day count: an int (a bigint only as a constant that fits), a string read as one."""
    return INT if arg.type == STRING else integer_param(arg, what)


def _date_and_days(name: str):
    return lambda args: Signature(
        (_date_param(args[0], f"{name}'s first argument (a date)"), _days_param(args[1], f"{name}'s second argument (an int)")), DATE
    )


# --- epoch seconds and patterns --------------------------------------------------------------

_DEFAULT_TEXT = re.compile(r"(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})")


def _epoch_seconds(instant: datetime.datetime) -> int:
    return timestamps.epoch_micros(instant) // 1_000_000


def _unix_timestamp_of(source: types.DataType) -> Callable[..., int]:
    """unix_timestamp of a value of ``source``: a string by the default pattern, in the session time
    zone; a date at its start there; a TIMESTAMP_NTZ as if in UTC (as Spark does)."""
    def of_text(text: str, pattern: str, zone: str) -> int:
        match = _DEFAULT_TEXT.fullmatch(text)
        try:
            if match is None:
                raise ValueError
            return _epoch_seconds(timestamps.from_local(datetime.datetime(*map(int, match.groups())), zone))
        except ValueError:
            raise SqlRuntimeError("CANNOT_PARSE_TIMESTAMP", f"{text!r} does not match the pattern {DEFAULT_PATTERN}") from None

    if source == STRING:
        return of_text
    if source == DATE:
        return lambda day, pattern, zone: _epoch_seconds(timestamps.from_local(timestamps.date_to_local(day), zone))
    if source == TIMESTAMP_NTZ:
        return lambda local, pattern, zone: _epoch_seconds(local.replace(tzinfo=timestamps.UTC))
    return lambda instant, pattern, zone: _epoch_seconds(instant)


def _default_pattern_only(arg: Arg, name: str) -> None:
    pattern = _constant_text(arg, f"{name}'s pattern")
    if pattern not in (None, DEFAULT_PATTERN):
        raise UnsupportedArgumentError(
            f"{name} with the pattern {pattern!r}: only Spark's default pattern {DEFAULT_PATTERN!r} is supported"
        )


def _unix_timestamp_typing(args: tuple[Arg, ...]) -> Signature:
    subject, pattern, _ = args
    if subject.type not in DATE_LIKE:
        raise ArgumentTypeError("unix_timestamp's argument (a timestamp, a date or a string)")
    _default_pattern_only(pattern, "unix_timestamp")
    return Signature((None, STRING, None), BIGINT)


# Pattern letters printed exactly as Spark's DateTimeFormatter prints them, and how many of each.
_LETTERS = re.compile(r"'(?:[^']|'')*'|([A-Za-z])\1*|[^A-Za-z']+")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _padded(part: Callable[[datetime.datetime], int], width: int) -> Callable[[datetime.datetime], str]:
    return lambda t: f"{part(t):0{width}d}"


def _field(letter: str, count: int) -> Callable[[datetime.datetime], str] | None:
    numeric = {"d": lambda t: t.day, "H": lambda t: t.hour, "h": lambda t: (t.hour - 1) % 12 + 1,
               "m": lambda t: t.minute, "s": lambda t: t.second}
    if letter in numeric and count <= 2:
        return _padded(numeric[letter], count)
    match letter, count:
        case "y", 2:
            return lambda t: f"{t.year % 100:02d}"
        case "y", _ if count <= 4:
            return _padded(lambda t: t.year, count)
        case "M", 1 | 2:
            return _padded(lambda t: t.month, count)
        case "M", 3:
            return lambda t: _MONTHS[t.month - 1][:3]
        case "M", 4:
            return lambda t: _MONTHS[t.month - 1]
        case "S", _ if count <= 6:
            return lambda t: f"{t.microsecond:06d}"[:count]
        case "a", 1:
            return lambda t: "AM" if t.hour < 12 else "PM"
        case "E", 1 | 2 | 3:
            return lambda t: _DAYS[t.weekday()][:3]
        case "E", 4:
            return lambda t: _DAYS[t.weekday()]
    return None


def format_pattern(pattern: str) -> Callable[[datetime.datetime], str]:
    """A printer of local date-times by a Spark datetime pattern of the letters y M d H h m s S a E
    (and quoted text); ValueError names a letter outside that list.

    >>> format_pattern("yyyy-MM-dd HH:mm:ss.SSS a EEE 'at' h")(datetime.datetime(2024, 3, 10, 14, 3, 4, 500000))
    '2024-03-10 14:03:04.500 PM Sun at 2'
    """
    parts: list[Callable[[datetime.datetime], str]] = []
    for match in _LETTERS.finditer(pattern):
        token = match.group(0)
        if token.startswith("'"):
            text = token[1:-1].replace("''", "'") if len(token) > 2 else "'"
            parts.append(lambda t, text=text: text)
        elif match.group(1):
            field = _field(match.group(1), len(token))
            if field is None:
                raise ValueError(f"the pattern letters {token!r} are not supported (supported: y M d H h m s S a E)")
            parts.append(field)
        else:
            parts.append(lambda t, text=token: text)
    return lambda t: "".join(part(t) for part in parts)


def _pattern_printer(arg: Arg, name: str) -> Callable[[datetime.datetime], str] | None:
    pattern = _constant_text(arg, f"{name}'s pattern")
    if pattern is None:
        return None
    try:
        return format_pattern(pattern)
    except ValueError as error:
        raise UnsupportedArgumentError(f"{name}: {error}") from None


def _date_format_typing(args: tuple[Arg, ...]) -> Signature:
    _pattern_printer(args[1], "date_format")
    return Signature((_instant_param(args[0], "date_format's first argument (a timestamp)"), STRING, None), STRING)


def _date_format(bound: Bound) -> Callable[..., str]:
    printer = _pattern_printer(bound.args[1], "date_format")
    return lambda instant, pattern, zone: printer(timestamps.to_local(instant, zone))


def _from_unixtime_typing(args: tuple[Arg, ...]) -> Signature:
    seconds = args[0]
    if not (types.is_numeric(seconds.type) or seconds.type in (STRING, NULL)):
        raise ArgumentTypeError("from_unixtime's first argument (seconds since 1970)")
    if len(args) == 3:
        _pattern_printer(args[1], "from_unixtime")
    return Signature((BIGINT, *(STRING,) * (len(args) - 2), None), STRING)


def _from_unixtime(bound: Bound) -> Callable[..., str]:
    printer = _pattern_printer(bound.args[1], "from_unixtime") if len(bound.args) == 3 else format_pattern(DEFAULT_PATTERN)

    def evaluate(seconds: int, *pattern_and_zone: str) -> str:
        try:
            instant = timestamps.from_epoch_micros(seconds * 1_000_000)
        except OverflowError:
            raise SqlRuntimeError("DATETIME_OVERFLOW", f"{seconds} seconds since 1970 is outside years 1..9999") from None
        return printer(timestamps.to_local(instant, pattern_and_zone[-1]))

    return evaluate


def _cast_without_pattern(name: str, target: types.DataType):
    """``to_date(x)`` / ``to_timestamp(x)`` are ``CAST(x AS ...)``; parsing by a pattern is refused."""
    def rewrite(call, subject, *pattern):
        if pattern:
            raise UnsupportedArgumentError(f"{name} with a pattern is not supported; {name}(x) without one (a CAST) is")
        return call(cast_op(target), subject)
    return rewrite


FUNCTIONS = (
    Function(
        "date_trunc", "date", "the timestamp truncated to the unit (YEAR, QUARTER, MONTH, WEEK, DAY, HOUR, MINUTE, "
        "SECOND...) in the session time zone; NULL for an unknown unit", (2, 2), "string unit, timestamp ts", "timestamp",
        typing=lambda args: Signature((STRING, _instant_param(args[1], "date_trunc's second argument (a timestamp)"), None),
                                      TIMESTAMP),
        evaluator=plain(_date_trunc), rewrite=_zoned("date_trunc"),
    ),
    Function(
        "trunc", "date", "the date truncated to the unit (YEAR, QUARTER, MONTH, WEEK); NULL for another unit", (2, 2),
        "date d, string unit", "date",
        typing=lambda args: Signature((_date_param(args[0], "trunc's first argument (a date)"), STRING), DATE),
        evaluator=plain(_trunc),
    ),
    Function(
        "timestampdiff", "date", "whole units (MICROSECOND to YEAR) from start to end, on the local time line of the "
        "session time zone; also datediff(unit, start, end)", (3, 3), "unit, timestamp start, timestamp end", "bigint",
        typing=_timestampdiff_typing, evaluator=plain(lambda unit, start, end, zone: _timestampdiff(unit.lower(), start, end, zone)),
        rewrite=_zoned("timestampdiff"),
    ),
    Function("hour", "date", "the hour of the timestamp in the session time zone", (1, 1), "timestamp", "int",
             typing=_time_part_typing("hour"), evaluator=plain(_time_part("hour")), rewrite=_zoned("hour")),
    Function("minute", "date", "the minute of the timestamp in the session time zone", (1, 1), "timestamp", "int",
             typing=_time_part_typing("minute"), evaluator=plain(_time_part("minute")), rewrite=_zoned("minute")),
    Function("second", "date", "the whole second of the timestamp", (1, 1), "timestamp", "int",
             typing=_time_part_typing("second"), evaluator=plain(_time_part("second")), rewrite=_zoned("second")),
    Function("quarter", "date", "the quarter of the year, 1 to 4", (1, 1), "date", "int",
             rewrite=lambda call, day: call("extract_quarter", day)),
    Function("dayofweek", "date", "the day of the week, 1 (Sunday) to 7 (Saturday)", (1, 1), "date", "int",
             typing=_one_date("dayofweek", INT), evaluator=plain(_day_of_week)),
    Function("date_add", "date", "the date n days later", (2, 2), "date, int", "date",
             typing=_date_and_days("date_add"), evaluator=plain(add_days)),
    Function("date_sub", "date", "the date n days earlier", (2, 2), "date, int", "date",
             typing=_date_and_days("date_sub"), evaluator=plain(lambda day, days: add_days(day, -days))),
    Function("add_months", "date", "the date n months later, its day clamped to the month's end", (2, 2), "date, int",
             "date", typing=_date_and_days("add_months"), evaluator=plain(_add_months)),
    Function("to_date", "date", "CAST(x AS DATE) (a pattern is not supported)", (1, 2), "string/timestamp", "date",
             rewrite=_cast_without_pattern("to_date", DATE)),
    Function("to_timestamp", "date", "CAST(x AS TIMESTAMP) (a pattern is not supported)", (1, 2), "string/date",
             "timestamp", rewrite=_cast_without_pattern("to_timestamp", TIMESTAMP)),
    Function(
        "unix_timestamp", "date", "seconds since 1970-01-01 UTC (a string read by the default pattern in the session "
        "time zone)", (1, 2), "timestamp/date/string[, pattern]", "bigint",
        typing=_unix_timestamp_typing, rewrite=lambda call, subject, pattern=None: call(
            "unix_timestamp", subject, pattern or Literal(DEFAULT_PATTERN, STRING),
            Literal(timestamps.session_time_zone.get(), STRING)),
        evaluator=lambda bound: _unix_timestamp_of(bound.args[0].type),
    ),
    Function(
        "from_unixtime", "date", "the text of an epoch second in the session time zone, by the default pattern or one of "
        "the letters y M d H h m s S a E", (1, 2), "bigint[, pattern]", "string",
        typing=_from_unixtime_typing, evaluator=_from_unixtime, rewrite=_zoned("from_unixtime"),
    ),
    Function(
        "date_format", "date", "the text of a timestamp in the session time zone by a pattern of the letters "
        "y M d H h m s S a E", (2, 2), "timestamp, pattern", "string",
        typing=_date_format_typing, evaluator=_date_format, rewrite=_zoned("date_format"),
    ),
)
