"""The check every benchmark peer makes: its final rows against a Parquet result of `ivm run --out`.

Peers run in their own venvs (PyFlink, Pathway), so this module needs only pyarrow, which each has.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq


def check_against_ivm(peer: str, rows: list[tuple], expected_path: Path) -> None:
    """Exit unless ``rows`` (exact values: Decimal, date) and the file are non-empty and equal as sets."""
    expected = {tuple(row.values()) for row in pq.read_table(expected_path).to_pylist()}
    got = set(rows)
    if not expected or not got:
        raise SystemExit(f"check FAILED: empty result (expected {len(expected)} rows, {peer} {len(got)})")
    if got != expected:
        raise SystemExit(f"check FAILED:\n only {peer}: {sorted(got - expected)}\n only local: {sorted(expected - got)}")
    print(f"check ok: {peer}'s {len(got)} rows equal {expected_path}")
