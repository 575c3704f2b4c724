"""The SQL front end: Spark SQL text → logical plan, by walking sqlglot's AST; and a classic-mode
Spark DataFrame → the same, by rendering its analyzed Catalyst plan as SQL text (``catalyst.py``).

It builds ``planner.ir`` values against a ``catalog`` and may import only those two; what it
cannot express it refuses with the clause (``UnsupportedSqlError``).
"""
