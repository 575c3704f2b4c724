"""A time-zone argument read as Spark reads one (``DateTimeUtils.getZoneId``): Java's ``ZoneId.of``.

``from_utc_timestamp(ts, tz)`` and ``to_utc_timestamp(ts, tz)`` take the zone as a value, so a
row can name any zone; Spark reads it with ``ZoneId.of(id, ZoneId.SHORT_IDS)`` after widening a
one-digit hour (``+1:00`` is ``+01:00``), and raises ``[INVALID_TIMEZONE]`` for anything else.
That reading is stricter than the session time zone's (planner/ir/timestamps.py ``zone_of``): it
is case-sensitive (``utc`` and ``europe/london`` are not zones), and it knows Java's three-letter
aliases (``PST`` is America/Los_Angeles, ``EST`` a fixed -05:00). Regions come from the IANA
database Python's ``zoneinfo`` reads, which names the same regions as Java's, but for Java-only
legacy names (``SystemV/...``), which are refused here as invalid.
"""

from __future__ import annotations

import datetime
import re
import zoneinfo
from functools import lru_cache

from planner.ir.values import SqlRuntimeError

#: ``java.time.ZoneId.SHORT_IDS``
SHORT_IDS = {
    "EST": "-05:00", "HST": "-10:00", "MST": "-07:00",
    "ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo", "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare", "CNT": "America/St_Johns", "CST": "America/Chicago", "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa", "ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan", "NST": "Pacific/Auckland", "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix", "PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
}

#: ``ZoneOffset.of``: ±h, ±hh, ±hh:mm, ±hhmm, ±hh:mm:ss, ±hhmmss
_OFFSET = re.compile(r"([+-])(\d{1,2})|([+-])(\d{2}):?(\d{2})|([+-])(\d{2})(:?)(\d{2})\8(\d{2})")
#: ``ZoneRegion.checkName``
_REGION = re.compile(r"[A-Za-z][A-Za-z0-9~/._+-]+")
#: files of the system's zoneinfo directory that are not regions Java knows
_NOT_REGIONS = ("posix/", "right/", "posixrules", "localtime", "Factory")


def _offset(text: str) -> datetime.timezone | None:
    match = _OFFSET.fullmatch(text)
    if text == "Z":
        return datetime.UTC
    if match is None:
        return None
    groups = [g for g in match.groups() if g is not None and g != ":"]
    sign, numbers = groups[0], [int(g) for g in groups[1:]] + [0, 0]
    hours, minutes, seconds = numbers[:3]
    if minutes > 59 or seconds > 59 or hours * 3600 + minutes * 60 + seconds > 18 * 3600:
        return None
    delta = datetime.timedelta(hours=hours, minutes=minutes, seconds=seconds)
    return datetime.timezone(-delta if sign == "-" else delta)


def _region(name: str) -> datetime.tzinfo | None:
    if not _REGION.fullmatch(name) or name.startswith(_NOT_REGIONS):
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


@lru_cache(maxsize=4096)
def spark_zone(text: str) -> datetime.tzinfo:
    """The zone ``text`` names, read as Spark's ``getZoneId`` reads it; ``[INVALID_TIMEZONE]`` if none.

    >>> spark_zone("+1:00"), spark_zone("GMT-8"), spark_zone("PST")
    (datetime.timezone(datetime.timedelta(seconds=3600)), datetime.timezone(datetime.timedelta(days=-1, seconds=57600)), zoneinfo.ZoneInfo(key='America/Los_Angeles'))
    """
    name = re.sub(r"([+-])(\d):", r"\g<1>0\2:", text, count=1)
    name = re.sub(r"([+-])(\d\d):(\d)$", r"\1\2:0\3", name, count=1)
    name = SHORT_IDS.get(name, name)
    if len(name) <= 1 or name[0] in "+-":
        zone = _offset(name)
    elif (prefix := next((p for p in ("UTC", "GMT", "UT") if name.startswith(p)), None)) is not None \
            and name[len(prefix):len(prefix) + 1] in ("", "+", "-"):
        zone = _offset(name[len(prefix):]) if len(name) > len(prefix) else datetime.UTC
    else:
        zone = _region(name)
    if zone is None:
        raise SqlRuntimeError("INVALID_TIMEZONE", f"The timezone: {text} is invalid. The timezone must be either a "
                              "region-based zone ID or a zone offset, such as 'America/Los_Angeles' or '+01:00'")
    return zone
