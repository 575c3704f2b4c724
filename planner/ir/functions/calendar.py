"""Calendar functions over dates: months between two instants, a month's last day, the next weekday,
the week and day numbers, and a date made from its fields, each as Spark 4 computes it (ANSI mode).

``months_between`` depends on the session time zone (it reads the local date and time of day of two
instants), so it gets the zone as its last argument when planned, as datetimes.py's functions do.
"""

from __future__ import annotations

import calendar
import datetime
import math
from fractions import Fraction

from catalog.types import BOOLEAN, DATE, DOUBLE, INT, NULL, STRING
from planner.ir import timestamps
from planner.ir.expressions import Literal
from planner.ir.functions import datetimes
from planner.ir.functions.datetimes import _date_param, _instant_param, _local, _one_date
from planner.ir.functions.registry import (
    Arg,
    ArgumentTypeError,
    Function,
    Signature,
    UnsupportedArgumentError,
    integer_param,
    plain,
)
from planner.ir.notation import print_expr
from planner.ir.values import SqlRuntimeError

_SECONDS_PER_DAY = 86_400
_SECONDS_IN_A_31_DAY_MONTH = 31 * _SECONDS_PER_DAY


def _is_last_day(day: datetime.date) -> bool:
    return day.day == calendar.monthrange(day.year, day.month)[1]


def _seconds_into_day(instant: datetime.datetime, day: datetime.date, zone: str) -> int:
    """Whole seconds since the start of ``day`` (its first instant in ``zone``)."""
    start = timestamps.from_local(timestamps.date_to_local(day), zone)
    return (timestamps.epoch_micros(instant) - timestamps.epoch_micros(start)) // 1_000_000


def java_round(value: float) -> int:
    """Java's ``Math.round``: the nearest whole number, a half rounded up (toward +infinity), exactly."""
    return math.floor(Fraction(value) + Fraction(1, 2))


def months_between(end: datetime.datetime, start: datetime.datetime, round_off: bool, zone: str) -> float:
    """Spark's ``months_between`` (``DateTimeUtils.monthsBetween``) on the local dates of two instants in
    the session time zone: the whole number of months between their months when both fall on the same
    day of the month or both on the last day of their month (the time of day ignored); otherwise that
    plus the difference of days and of seconds into the day over a 31-day month, rounded to 8 decimal
    places (Java's Math.round of the value times 1e8) unless ``round_off`` is false."""
    end_day, start_day = _local(end, zone).date(), _local(start, zone).date()
    months = float((end_day.year * 12 + end_day.month) - (start_day.year * 12 + start_day.month))
    if end_day.day == start_day.day or (_is_last_day(end_day) and _is_last_day(start_day)):
        return months
    seconds = ((end_day.day - start_day.day) * _SECONDS_PER_DAY + _seconds_into_day(end, end_day, zone)
               - _seconds_into_day(start, start_day, zone))
    difference = months + seconds / float(_SECONDS_IN_A_31_DAY_MONTH)
    return java_round(difference * 1e8) / 1e8 if round_off else difference


def _months_between_typing(args: tuple[Arg, ...]) -> Signature:
    end, start, round_off, _ = args
    if round_off.type not in (BOOLEAN, NULL):
        raise ArgumentTypeError("months_between's roundOff (a boolean)")
    return Signature((_instant_param(end, "months_between's first argument (a timestamp)"),
                      _instant_param(start, "months_between's second argument (a timestamp)"), BOOLEAN, None), DOUBLE)


def _months_between_call(call, end, start, round_off=None):
    return call("months_between", end, start, round_off or Literal(True, BOOLEAN),
                Literal(timestamps.session_time_zone.get(), STRING))


def _last_day(day: datetime.date) -> datetime.date:
    return day.replace(day=calendar.monthrange(day.year, day.month)[1])


#: Spark's names of the days of the week (``DateTimeUtils.getDayOfWeekFromString``), any case.
_WEEKDAYS = {name: index for index, names in enumerate((
    ("MO", "MON", "MONDAY"), ("TU", "TUE", "TUESDAY"), ("WE", "WED", "WEDNESDAY"), ("TH", "THU", "THURSDAY"),
    ("FR", "FRI", "FRIDAY"), ("SA", "SAT", "SATURDAY"), ("SU", "SUN", "SUNDAY"))) for name in names}


def _next_day(day: datetime.date, weekday: str) -> datetime.date:
    """The first date later than ``day`` falling on ``weekday``; an unknown name fails in ANSI mode."""
    target = _WEEKDAYS.get(weekday.upper())
    if target is None:
        raise SqlRuntimeError("ILLEGAL_DAY_OF_WEEK", f"Illegal input for day of week: {weekday}")
    try:
        return day + datetime.timedelta(days=(target - day.weekday() - 1) % 7 + 1)
    except OverflowError:
        raise SqlRuntimeError("DATETIME_OVERFLOW", f"the day after {day} is outside years 1..9999") from None


def _make_date(year: int, month: int, day: int) -> datetime.date:
    try:
        return datetime.date(year, month, day)
    except ValueError as error:
        raise SqlRuntimeError("DATETIME_FIELD_OUT_OF_BOUNDS", f"make_date({year}, {month}, {day}): {error} "
                              "(years 1..9999 only here)") from None


def _make_date_typing(args: tuple[Arg, ...]) -> Signature:
    names = ("year", "month", "day")
    return Signature(tuple(integer_param(a, f"make_date's {n} (an int)") for a, n in zip(args, names, strict=True)), DATE)


#: date_part's fields (Spark's synonyms, any case) and the call each is.
_DATE_PARTS = {
    **dict.fromkeys(("year", "y", "years", "yr", "yrs"), "extract_year"),
    **dict.fromkeys(("quarter", "qtr"), "extract_quarter"),
    **dict.fromkeys(("month", "mon", "mons", "months"), "extract_month"),
    **dict.fromkeys(("week", "w", "weeks"), "extract_week"),
    **dict.fromkeys(("day", "d", "days"), "extract_day"),
    **dict.fromkeys(("dayofweek", "dow"), "dayofweek"),
    "doy": "dayofyear",
    **dict.fromkeys(("hour", "h", "hours", "hr", "hrs"), "hour"),
    **dict.fromkeys(("minute", "m", "min", "mins", "minutes"), "minute"),
}


def _date_part(call, field, source):
    """``date_part(field, source)``: EXTRACT(field FROM source) for a constant field; SECOND (a decimal
    with the fraction) and the ISO week-year fields are not supported."""
    name = _DATE_PARTS.get(field.value.lower()) if isinstance(field, Literal) and field.type == STRING else None
    if name is None:
        raise UnsupportedArgumentError(
            f"date_part's field must be a constant string, one of YEAR, QUARTER, MONTH, WEEK, DAY, DAYOFWEEK, DOY, HOUR, "
            f"MINUTE (or a synonym), not {print_expr(field)}")
    zoned = next((f for f in datetimes.FUNCTIONS if f.name == name and f.rewrite is not None), None)
    return zoned.rewrite(call, source) if zoned is not None else call(name, source)


def _day_function(name: str, doc: str, fn, aliases: tuple[str, ...] = ()) -> Function:
    return Function(name, "date", doc, (1, 1), "date", "int", typing=_one_date(name, INT), evaluator=plain(fn),
                    aliases=aliases)


FUNCTIONS = (
    Function(
        "months_between", "date", "months from start to end: whole when both are the same day of the month or both "
        "the last day of their month, else counted in 31-day months with the time of day, in the session time "
        "zone; rounded to 8 digits unless roundOff is false", (2, 3), "timestamp end, timestamp start[, roundOff]",
        "double", typing=_months_between_typing, evaluator=plain(months_between), rewrite=_months_between_call,
    ),
    Function("last_day", "date", "the last day of the date's month", (1, 1), "date", "date",
             typing=_one_date("last_day", DATE), evaluator=plain(_last_day)),
    Function("next_day", "date", "the first date later than d on the day of the week (MO, MON, MONDAY... any "
             "case); ILLEGAL_DAY_OF_WEEK for another name", (2, 2), "date d, string dayOfWeek", "date",
             typing=lambda args: Signature((_date_param(args[0], "next_day's first argument (a date)"), STRING), DATE),
             evaluator=plain(_next_day)),
    _day_function("weekofyear", "the ISO week of the year, 1 to 53 (weeks start on Monday; week 1 holds the "
                  "year's first Thursday)", lambda day: day.isocalendar()[1]),
    _day_function("dayofmonth", "the day of the month, 1 to 31", lambda day: day.day),
    _day_function("dayofyear", "the day of the year, 1 to 366", lambda day: day.timetuple().tm_yday),
    _day_function("weekday", "the day of the week, 0 (Monday) to 6 (Sunday)", lambda day: day.weekday()),
    Function("date_part", "date", "EXTRACT(field FROM source) for a constant field: YEAR, QUARTER, MONTH, WEEK, "
             "DAY, DAYOFWEEK, DOY, HOUR, MINUTE or a synonym", (2, 2), "string field, date/timestamp source", "int",
             rewrite=_date_part),
    Function("make_date", "date", "the date of year, month and day; DATETIME_FIELD_OUT_OF_BOUNDS for a field out "
             "of range (and, here, a year outside 1..9999)", (3, 3), "int year, int month, int day", "date",
             typing=_make_date_typing, evaluator=plain(_make_date)),
)
