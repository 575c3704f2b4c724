"""Plan values: expressions, logical and maintenance nodes (frozen, children in tuples), their
outputs and reads, the plan notation EXPLAIN prints and tests parse, and the foreign-key graph.

The bottom layer of the planner: rules, the optimizer, the SQL front end and the lowering all read
these values, so it may import ``catalog`` only.
"""
