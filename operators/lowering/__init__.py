"""Lowering: a maintenance plan → a dataflow of keyed stages, with expressions compiled to closures.

The only bridge from plans to stages: it may import ``planner.ir`` and ``catalog`` above and the
operator layers below (``runtime``, ``stages``, ``structures``, ``zset``); nothing below imports it back.
"""
