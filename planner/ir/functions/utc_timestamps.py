"""``from_utc_timestamp`` and ``to_utc_timestamp``: an instant shifted by a zone's offset, as Spark does.

Spark's ``DateTimeUtils.convertTz(micros, from, to)`` reads the instant's local date-time in ``to``
and takes that local date-time in ``from`` back to an instant. ``from_utc_timestamp(ts, tz)`` is
``convertTz(ts, UTC, tz)``: the wall clock of ``ts`` in ``tz``, read as if it were UTC;
``to_utc_timestamp(ts, tz)`` is ``convertTz(ts, tz, UTC)``: the UTC wall clock of ``ts`` taken as a
local time in ``tz`` (Java's ``ZonedDateTime.of``: in a DST gap moved forward by the gap, in an
overlap the earlier offset, as ``timestamps.from_local`` does). Neither depends on the session time
zone (but for casting a string, a date or a TIMESTAMP_NTZ argument to an instant). The zone is a
value, a constant or a column, read as Java's ``ZoneId.of`` reads it (planner/ir/zone_ids.py); an
invalid one raises ``[INVALID_TIMEZONE]``, when the query is planned for a constant (Spark fails the
query then, whatever the rows), for each row otherwise.
"""

from __future__ import annotations

import datetime

from catalog.types import TIMESTAMP
from planner.ir.functions.datetimes import _instant_param
from planner.ir.functions.registry import (
    Arg,
    Function,
    Signature,
    UnsupportedArgumentError,
    plain,
    string_param,
)
from planner.ir.values import SqlRuntimeError
from planner.ir.zone_ids import spark_zone

UTC = datetime.UTC


def _from_utc(instant: datetime.datetime, zone: str) -> datetime.datetime:
    local = instant.astimezone(spark_zone(zone)).replace(tzinfo=None)
    return local.replace(tzinfo=UTC, fold=0)


def _to_utc(instant: datetime.datetime, zone: str) -> datetime.datetime:
    # fold=0: Python reads a gap's local time with the offset before it (Java's shift forward by the
    # gap gives the same instant) and an overlap's with the earlier offset, as Java does
    local = instant.astimezone(UTC).replace(tzinfo=spark_zone(zone), fold=0)
    return local.astimezone(UTC)


def _in_range(convert):
    """A conversion whose result past year 9999 (or before year 1) is Spark's overflow error."""
    def evaluate(instant: datetime.datetime, zone: str) -> datetime.datetime:
        try:
            return convert(instant, zone)
        except OverflowError:
            raise SqlRuntimeError("DATETIME_OVERFLOW", f"{instant} shifted by the offset of {zone} is outside years "
                                                       "1..9999") from None
    return evaluate


def _typing(name: str):
    def typing(args: tuple[Arg, ...]) -> Signature:
        subject, zone = args
        if zone.constant and isinstance(zone.value, str):
            try:
                spark_zone(zone.value)
            except SqlRuntimeError as error:
                raise UnsupportedArgumentError(f"{name}: {error} (Spark fails the query)") from None
        return Signature((_instant_param(subject, f"{name}'s first argument (a timestamp)"),
                          string_param(zone, f"{name}'s time zone (a string)")), TIMESTAMP)
    return typing


FUNCTIONS = (
    Function(
        "from_utc_timestamp", "date", "the wall clock of the instant in the zone (a region or an offset), read as a UTC "
        "instant; [INVALID_TIMEZONE] for another zone", (2, 2), "timestamp ts, string tz", "timestamp",
        typing=_typing("from_utc_timestamp"), evaluator=plain(_in_range(_from_utc)),
    ),
    Function(
        "to_utc_timestamp", "date", "the instant's UTC wall clock read as a local time in the zone (a region or an "
        "offset); [INVALID_TIMEZONE] for another zone", (2, 2), "timestamp ts, string tz", "timestamp",
        typing=_typing("to_utc_timestamp"), evaluator=plain(_in_range(_to_utc)),
    ),
)
