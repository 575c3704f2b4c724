"""``ivm ui``: a live page for one maintained view (Cquirrel's demo interface, VLDB 2021 §3).

SQL in, the maintenance plan drawn from EXPLAIN's own document, the update stream applied batch by
batch with the result, a chart, throughput and per-stage state on the page, and a Check button that
recomputes the view with DuckDB. ``session.py`` holds one run, ``server.py`` serves it over HTTP
with server-sent events, ``static/`` is the page.
"""
