"""TPC-H Q3, the specification's text, as an incremental view of this pipeline.

Each run applies the changes that arrived in the change directory since the last run: Parquet files
of the stream format under ``<changes_dir>/<table>/`` (``ivm pipelines land`` writes them). The
directory is the Spark setting ``spark.ivm.changes_dir`` (default: ``changes`` beside the spec).
The pipeline then holds ``q3_changes`` (the change feed, a streaming table) and ``q3`` (the result).
"""

from pathlib import Path

from planner.pipelines import incremental_view

QUERY = Path(__file__).resolve().parents[3] / "tpch" / "q03.sql"

incremental_view(spark, "q3", QUERY.read_text(), catalog="tpch",  # noqa: F821 (SDP gives the module `spark`)
                 changes_dir=spark.conf.get("spark.ivm.changes_dir", "changes"))  # noqa: F821
