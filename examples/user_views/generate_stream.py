"""Write the user-view suite's change streams: ``<out>/shop/<table>.parquet``, ``<out>/saas/...``,
``<out>/fintech/...``, ``<out>/logistics/...`` in the stream format ``ivm run --stream`` reads (the
table's columns, ``_seq``, ``_op``).

    python examples/user_views/generate_stream.py --out /tmp/user_views_stream

The streams are seeded (the same files every time); ``planner/workloads/user_view_streams.py``,
``fintech_stream.py`` and ``logistics_stream.py`` say what they hold.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from planner.workloads.user_view_streams import write_streams  # noqa: E402
from planner.workloads.user_views import ALL_SCHEMAS  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="directory for <schema>/<table>.parquet")
    parser.add_argument("--schema", choices=[*ALL_SCHEMAS, "all"], default="all")
    args = parser.parse_args()
    schemas = ALL_SCHEMAS if args.schema == "all" else (args.schema,)
    for schema, counts in write_streams(args.out, schemas).items():
        print(f"{schema}: {sum(counts.values())} changes ({', '.join(f'{t} {n}' for t, n in counts.items())})")


if __name__ == "__main__":
    main()
