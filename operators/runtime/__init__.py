"""Running a dataflow of stages: the dataflow itself, the local and Spark runners, the Spark session,
validation of base-table changes, and the change-stream format on disk (``Update``).

It may import ``operators.stages``, ``operators.structures``, ``operators.zset`` and ``catalog``;
never the planner, so a lowered dataflow runs without it.
"""
