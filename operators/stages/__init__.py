"""Keyed stages: each maintenance operator as a ``process(key, changes, state)`` that runs alike in
the local runner and under Spark's ``transformWithState``, and describes itself for EXPLAIN.

They may import ``operators.structures``, ``operators.zset`` and ``catalog``; never the planner.
"""
