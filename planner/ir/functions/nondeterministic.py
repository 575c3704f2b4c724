"""Functions whose value is not a function of the row: refused, since a maintained view must be a
function of its inputs (the same rows must give the same result, at every update and on replay)."""

from __future__ import annotations

from planner.ir.functions.registry import Function

_CLOCK = "its value depends on when it is evaluated, so a maintained view would change without any input change"
_RANDOM = "it returns a different value at every evaluation, so the view would not be a function of its input rows"
_PHYSICAL = "its value depends on how Spark partitions and schedules the rows, not on the rows"
_SESSION = "its value depends on the session, not on the view's input rows"


def _refused(name: str, reason: str, aliases: tuple[str, ...] = ()) -> Function:
    return Function(name, "non-deterministic (refused)", reason, (0, None), "", "", aliases=aliases, refusal=reason)


FUNCTIONS = (
    _refused("current_date", _CLOCK, ("curdate",)),
    _refused("current_timestamp", _CLOCK, ("now", "localtimestamp")),
    _refused("current_timezone", _SESSION),
    _refused("rand", _RANDOM, ("random",)),
    _refused("randn", _RANDOM),
    _refused("uniform", _RANDOM),
    _refused("randstr", _RANDOM),
    _refused("uuid", _RANDOM),
    _refused("shuffle", _RANDOM),
    _refused("monotonically_increasing_id", _PHYSICAL),
    _refused("spark_partition_id", _PHYSICAL),
    _refused("input_file_name", _PHYSICAL),
    _refused("current_user", _SESSION, ("user", "session_user")),
    _refused("current_database", _SESSION, ("current_schema",)),
    _refused("current_catalog", _SESSION),
)
