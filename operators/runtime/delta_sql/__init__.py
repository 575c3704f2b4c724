"""The Spark runner's second physical strategy: delta queries run by Spark SQL in the JVM (issue 26, item 6).

``plan`` describes a view's delta queries (built by ``planner/spark_delta.py`` from the view's SQL),
``state_files`` keeps each base table's rows and the aggregate's partial sums as versioned Parquet
files, ``net_changes`` validates a micro-batch's changes and folds them to one net change per key, and
``batch`` is the ``foreachBatch`` function that runs one micro-batch through all of it.
"""
