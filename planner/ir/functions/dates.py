"""Date functions (EXTRACT, year/month/day and date ± interval are built by the front end)."""

from __future__ import annotations

import datetime

from catalog.types import DATE, INT
from planner.ir.functions.registry import Arg, Function, Signature, plain


def _datediff(end: datetime.date, start: datetime.date) -> int:
    return (end - start).days


def _two_dates(args: tuple[Arg, ...]) -> Signature:
    return Signature((DATE, DATE), INT)


FUNCTIONS = (
    Function(
        "datediff", "date", "whole days from start to end", (2, 2), "date end, date start", "int",
        typing=_two_dates, evaluator=plain(_datediff),
    ),
)
