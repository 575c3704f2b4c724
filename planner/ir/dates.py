"""Date ± interval with Spark's semantics, shared by constant folding and row-at-a-time evaluation.

The SQL front end folds ``date '1995-03-15' + interval '3' month`` to a date literal and the
lowering evaluates ``l_shipdate + interval '90' day`` on every row; both call ``shift_date`` so a
folded constant and an evaluated one can never disagree. Like Spark's ``add_months``, a month or
year step keeps the day of the month where it exists and clamps it to the month's last day where
it does not:

>>> shift_date(datetime.date(2024, 1, 31), 1, "month")
datetime.date(2024, 2, 29)
>>> shift_date(datetime.date(2023, 1, 31), 1, "month")
datetime.date(2023, 2, 28)
>>> shift_date(datetime.date(2024, 2, 29), -1, "year")
datetime.date(2023, 2, 28)
>>> shift_date(datetime.date(1995, 3, 15), -90, "day")
datetime.date(1994, 12, 15)
"""

from __future__ import annotations

import calendar
import datetime

INTERVAL_UNITS = ("day", "month", "year")


def shift_date(day: datetime.date, amount: int, unit: str) -> datetime.date:
    """``day + interval 'amount' unit`` (``amount`` may be negative); ValueError outside years 1-9999.

    >>> shift_date(datetime.date(1995, 3, 15), 3, "month")
    datetime.date(1995, 6, 15)
    """
    if unit not in INTERVAL_UNITS:
        raise ValueError(f"unknown interval unit {unit!r}; known: {', '.join(INTERVAL_UNITS)}")
    try:
        if unit == "day":
            return day + datetime.timedelta(days=amount)
        months = day.month - 1 + amount * (12 if unit == "year" else 1)
        year, month = day.year + months // 12, months % 12 + 1
        last_day = calendar.monthrange(year, month)[1] if datetime.MINYEAR <= year <= datetime.MAXYEAR else 0
        return day.replace(year=year, month=month, day=min(day.day, last_day))
    except (OverflowError, ValueError):
        raise ValueError(f"cannot add {amount} {unit} to {day}: the result is outside years 1-9999") from None
