"""Run the user-view suite: every view of a schema (``shop/``, ``saas/``, ``fintech/``, ``logistics/``)
planned, maintained on the local runner over its schema's change stream in batches, and compared after
every batch with ``spark.sql``
(or DuckDB) over the tables rebuilt from the stream; prints a Markdown report (counts, refusals by
construct, each wrong or crashing view with its difference, every view's outcome).

    python examples/user_views/run_suite.py                       # all four schemas, Spark as the reference
    python examples/user_views/run_suite.py --schema fintech      # one schema (shop, saas, fintech, logistics)
    python examples/user_views/run_suite.py --schema shop --only top10_products_by_revenue
    python examples/user_views/run_suite.py --reference duckdb    # no Java needed; DuckDB's dialect differs on a few views

Without ``--stream`` the seeded streams are generated into a temporary directory first.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from planner.workloads.user_view_streams import write_streams  # noqa: E402
from planner.workloads.user_view_suite import duckdb_disagreements, report, run_schema  # noqa: E402
from planner.workloads.user_views import ALL_SCHEMAS, SchemaCatalogs, schema_ddl  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", choices=[*ALL_SCHEMAS, "all"], default="all")
    parser.add_argument("--only", help="run only the view of this name (its file name without .sql)")
    parser.add_argument("--reference", choices=["spark", "duckdb"], default="spark")
    parser.add_argument("--batches", type=int, default=8, help="batches the stream is applied in (default 8)")
    parser.add_argument("--stream", type=Path, help="a directory written by generate_stream.py (default: generate one)")
    parser.add_argument("--compare-references", action="store_true",
                        help="instead: list the views where DuckDB's result differs from spark.sql's")
    args = parser.parse_args()
    schemas = ALL_SCHEMAS if args.schema == "all" else (args.schema,)
    spark = None
    if args.reference == "spark" or args.compare_references:
        from operators.runtime.spark_session import make_spark_session

        spark = make_spark_session(app="user-view-suite")
    with tempfile.TemporaryDirectory(prefix="user-view-streams-") as scratch:
        stream = args.stream or Path(scratch)
        if args.stream is None:
            write_streams(stream, schemas)
        if args.compare_references:
            for schema in schemas:
                for name, difference in duckdb_disagreements(schema, stream / schema, spark, args.batches).items():
                    print(f"{schema}/{name}: {difference}")
            return 0
        outcomes = [outcome for schema in schemas
                    for outcome in run_schema(schema, stream / schema, args.reference, spark, args.batches, args.only)]
    refused = {schema: SchemaCatalogs(schema_ddl(schema)).refused for schema in schemas}
    print(report(outcomes, args.reference, refused), end="")
    return 1 if any(o.kind in ("wrong", "crash") for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
