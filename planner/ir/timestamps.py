"""Spark's two timestamps as Python values, and the session time zone that relates them.

``TIMESTAMP`` (Spark's default, ``TIMESTAMP_LTZ``) is an instant: a row holds it as an *aware*
``datetime`` in UTC, which hashes, compares and sorts as the instant it is (C code, as fast as an
int for grouping, joining and top-k), and is what pyarrow gives for ``timestamp[us, tz=UTC]``.
``TIMESTAMP_NTZ`` is a local date-time: a *naive* ``datetime``. Both have microsecond precision,
years 1..9999.

What an instant looks like (its hour, its day, its text) depends on the session time zone
(``spark.sql.session.timeZone``, UTC by default). As Spark's analyzer gives every time-zone-aware
expression the session's zone (``ResolveTimeZone``), the planner writes the zone into each such
expression at plan time (``session_time_zone`` holds it while a query is planned), so evaluating
one needs nothing else. The conversions follow ``java.time``, as Spark's ``DateTimeUtils`` do: a
local time in a DST gap moves forward by the gap, one in an overlap takes the earlier offset, and
shifting or truncating an instant on the local time line keeps its offset where it can
(``ZonedDateTime.plusDays``/``truncatedTo``).

The functions here raise ``ValueError`` on text that is not a timestamp or a result outside years
1..9999; planner/ir/values.py turns that into Spark's error.
"""

from __future__ import annotations

import contextlib
import datetime
import re
import zoneinfo
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from functools import cache

from planner.ir.dates import shift_date

UTC = datetime.UTC
DEFAULT_TIME_ZONE = "UTC"
#: the Spark setting a view on the Spark engine takes its session time zone from, unless given one
SPARK_TIME_ZONE = "spark.sql.session.timeZone"
#: the session time zone of the query being planned (Spark's ``spark.sql.session.timeZone``)
session_time_zone: ContextVar[str] = ContextVar("session_time_zone", default=DEFAULT_TIME_ZONE)


@contextlib.contextmanager
def time_zone_of_session(name: str | None) -> Iterator[None]:
    """Plan with ``name`` as the session time zone (checked to be one); None keeps the default."""
    token = session_time_zone.set(DEFAULT_TIME_ZONE if name is None else checked_zone_name(name))
    try:
        yield
    finally:
        session_time_zone.reset(token)


def checked_zone_name(name: str) -> str:
    """``name`` when it is a time zone (a region such as ``America/Los_Angeles``, ``UTC``, ``+02:00``)."""
    zone_of(name)
    return name


@cache
def zone_of(name: str) -> datetime.tzinfo:
    """The tzinfo of a zone ID as Spark reads one: a region, ``UTC``/``GMT``/``Z``, or an offset
    ``+hh[:mm]`` (optionally after ``UTC``/``GMT``)."""
    if name.upper() in ("UTC", "Z", "GMT", "UT", "ETC/UTC"):
        return UTC
    if match := _OFFSET.fullmatch(name):
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 18 or minutes > 59:
            raise ValueError(f"{name!r} is not a time zone offset")
        delta = datetime.timedelta(hours=hours, minutes=minutes)
        return datetime.timezone(-delta if sign == "-" else delta)
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is not a time zone") from None


_OFFSET = re.compile(r"(?:UTC|GMT|UT)?([+-])(\d{1,2})(?::?(\d{2}))?", re.IGNORECASE)


def to_local(instant: datetime.datetime, zone: str) -> datetime.datetime:
    """The local date-time (naive) an instant shows in ``zone``; ``fold`` marks an overlap's second."""
    if zone_of(zone) is UTC:
        return instant.replace(tzinfo=None)
    return instant.astimezone(zone_of(zone)).replace(tzinfo=None)


def from_local(local: datetime.datetime, zone: str, preferred: datetime.timedelta | None = None) -> datetime.datetime:
    """The instant (aware, UTC) of a local date-time in ``zone``: in a gap moved forward by the gap,
    in an overlap the ``preferred`` offset if it is one of the two, else the earlier one."""
    tz = zone_of(zone)
    if tz is UTC:
        return local.replace(tzinfo=UTC, fold=0)
    earlier = local.replace(tzinfo=tz, fold=0)
    if preferred is not None and earlier.utcoffset() != preferred:
        later = local.replace(tzinfo=tz, fold=1)
        if later.utcoffset() == preferred:
            return later.astimezone(UTC)
    return earlier.astimezone(UTC)


def on_local_time_line(instant: datetime.datetime, zone: str,
                       change: Callable[[datetime.datetime], datetime.datetime]) -> datetime.datetime:
    """``change`` applied to the local date-time of ``instant``, back to an instant keeping the
    offset where it can (``ZonedDateTime.plusDays``, ``truncatedTo``)."""
    tz = zone_of(zone)
    if tz is UTC:
        return change(instant.replace(tzinfo=None)).replace(tzinfo=UTC)
    local = instant.astimezone(tz)
    return from_local(change(local.replace(tzinfo=None, fold=0)), zone, local.utcoffset())


def date_to_local(day: datetime.date) -> datetime.datetime:
    """Midnight of ``day``, naive."""
    return datetime.datetime(day.year, day.month, day.day)


# Spark's ``stringToTimestamp``: a date (yyyy, yyyy-[m]m, yyyy-[m]m-[d]d), then after ' ' or 'T' a time
# [h]h[:[m]m[:[s]s[.fraction]]], then a zone (Z, an offset, a region), surrounding spaces ignored.
_TIMESTAMP_TEXT = re.compile(
    r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?"
    r"(?:[ T](?:(\d{1,2})(?::(\d{1,2})(?::(\d{1,2})(?:\.(\d*))?)?)?)?)?"
    r"\s*(Z|[+-]\d{1,2}(?::?\d{2})?|[A-Za-z][A-Za-z0-9_/+\-:]*)?"
)


def parse_timestamp(text: str) -> tuple[datetime.datetime, str | None]:
    """The local date-time a string spells and the zone it names (None: the session's); ValueError
    if it is not one. A fraction beyond microseconds is cut, as Spark cuts it.

    >>> parse_timestamp(" 2024-3-1 1:2:3.1234567Z ")
    (datetime.datetime(2024, 3, 1, 1, 2, 3, 123456), 'Z')
    """
    match = _TIMESTAMP_TEXT.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text!r} is not a timestamp")
    year, month, day, hour, minute, second, fraction, zone = match.groups()
    if zone is not None and hour is None:
        raise ValueError(f"{text!r} is not a timestamp")
    numbers = [int(g) if g else d for g, d in zip((year, month, day, hour, minute, second), (0, 1, 1, 0, 0, 0), strict=True)]
    micros = int((fraction or "")[:6].ljust(6, "0"))
    local = datetime.datetime(*numbers, micros)  # ValueError for a month 13 or an hour 25
    if zone is not None:
        zone_of(zone)
    return local, zone


def string_to_instant(text: str, zone: str) -> datetime.datetime:
    """``CAST(text AS TIMESTAMP)``: the zone the text names, else the session's."""
    local, named = parse_timestamp(text)
    return from_local(local, named or zone)


def format_local(local: datetime.datetime) -> str:
    """Spark's text of a timestamp: ``yyyy-MM-dd HH:mm:ss`` and the fraction without trailing zeros.

    >>> format_local(datetime.datetime(2024, 3, 10, 12, 0, 0, 120000))
    '2024-03-10 12:00:00.12'
    """
    text = f"{local.year:04d}-{local.month:02d}-{local.day:02d} {local.hour:02d}:{local.minute:02d}:{local.second:02d}"
    if local.microsecond:
        text += "." + f"{local.microsecond:06d}".rstrip("0")
    return text


EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


def epoch_micros(instant: datetime.datetime) -> int:
    """Microseconds since 1970-01-01 UTC (exact: timedelta arithmetic, no float)."""
    delta = instant - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def from_epoch_micros(micros: int) -> datetime.datetime:
    return EPOCH + datetime.timedelta(microseconds=micros)


#: The units of an interval literal added to a timestamp: months (year-month) or microseconds (day-time).
_MONTHS_PER = {"year": 12, "month": 1}
_MICROS_PER = {"day": 86_400_000_000, "hour": 3_600_000_000, "minute": 60_000_000, "second": 1_000_000}
INTERVAL_UNITS = (*_MONTHS_PER, *_MICROS_PER)


def shift_timestamp(value: datetime.datetime, amount: int, unit: str, zone: str | None = None) -> datetime.datetime:
    """``value + INTERVAL 'amount' unit`` as Spark adds it: months on the local date (its day clamped
    to the month's end); a day-time interval's whole days on the local time line (a day is a calendar
    day across a DST change) and the rest as elapsed time. ``zone`` None: a TIMESTAMP_NTZ (naive).

    >>> shift_timestamp(datetime.datetime(2024, 3, 9, 20, tzinfo=UTC), 24, "hour", "America/Los_Angeles")
    datetime.datetime(2024, 3, 10, 19, 0, tzinfo=datetime.timezone.utc)
    """
    if unit in _MONTHS_PER:
        months = amount * _MONTHS_PER[unit]

        def change(local: datetime.datetime) -> datetime.datetime:
            return datetime.datetime.combine(shift_date(local.date(), months, "month"), local.time())
    else:
        days, micros = divmod(amount * _MICROS_PER[unit], _MICROS_PER["day"])
        if amount < 0 and micros:  # Spark splits toward zero: -25 hours is -1 day and -1 hour
            days, micros = days + 1, micros - _MICROS_PER["day"]

        def change(local: datetime.datetime) -> datetime.datetime:
            return local + datetime.timedelta(days=days)
    if zone is None:
        shifted = change(value)
    else:
        shifted = on_local_time_line(value, zone, change)
    return shifted if unit in _MONTHS_PER else shifted + datetime.timedelta(microseconds=micros)
