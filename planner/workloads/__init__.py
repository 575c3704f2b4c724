"""Workloads to maintain and check: TPC-H data (tpchgen-cli) and update streams, order-book and
λ-target streams, enclosureness λ, and the DuckDB oracle that recomputes a query from scratch.

Used by the CLI, the demo, the tests and the benchmarks; it may import ``catalog`` and
``operators.runtime`` (the ``Update`` a stream is made of), never the planner's front door.
"""
