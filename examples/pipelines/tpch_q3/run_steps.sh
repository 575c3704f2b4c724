#!/usr/bin/env bash
# Maintain TPC-H Q3 in this pipeline over the stream directory STREAM_DIR in three runs: the first
# third of its changes (by _seq), then the second, then the rest, each landed as new change files
# before one `ivm pipelines run`. Leaves the view's result as Parquet in OUT_DIR/result, the
# pipeline's storage in OUT_DIR/storage and its change files in OUT_DIR/changes (both started
# afresh). Then checks itself (check.py): the result equals spark.sql's Q3 over the stream's final
# tables, and each run read only the change files landed for it (the stateful flow's checkpoint).
# Exit code 0 only if every step and the check succeeded. Uses the repository's .venv (`make` makes it).
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: $0 STREAM_DIR OUT_DIR" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../../.." && pwd)"
python="$repo/.venv/bin/python"
stream="$(cd "$1" && pwd)"
mkdir -p "$2"
out="$(cd "$2" && pwd)"

ivm() {
  # the repository's own code, whatever the venv was installed from
  PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" "$python" -m planner.cli "$@"
}

rm -rf "$out/storage" "$out/changes" "$out/result"
for part in 1 2 3; do
  ivm pipelines land "$stream" "$out/changes" --part "$part" --of 3
  ivm pipelines run --spec "$here/spark-pipeline.yml" --storage "$out/storage" \
    --conf "spark.ivm.changes_dir=$out/changes"
done
mkdir -p "$out/result"
cp "$out/storage/ivm/q3/table/part-00000.parquet" "$out/result/"
echo "result: $out/result"
PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" "$python" "$here/check.py" "$stream" "$out"
