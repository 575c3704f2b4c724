"""RowCodec: a table row's DECIMAL, DATE and TIMESTAMP values stored as plain integers, read back equal
and with the same exponent; NULLs kept; a Decimal of another exponent kept as itself."""

from __future__ import annotations

import pickle
from datetime import UTC, date, datetime
from decimal import Decimal

from catalog import types
from operators.runtime.spark_state_codec import PICKLED, RowCodec

TYPES = (types.BIGINT, types.DecimalType(15, 2), types.DATE, types.STRING, types.DecimalType(38, 10),
         types.TIMESTAMP, types.TIMESTAMP_NTZ, types.DecimalType(5, 0))
ROWS = [
    (1, Decimal("21168.23"), date(1996, 3, 13), "x", Decimal("1234567890123456789012345678.0123456789"),
     datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=UTC), datetime(1969, 12, 31, 23, 59, 59, 999999), Decimal("-7")),
    (None, Decimal("0.00"), None, None, Decimal("-1.0000000001"), None, None, None),
    # not the column's exponent, or a negative zero: kept as the Decimal itself, never rounded
    (2, Decimal("1.505"), date(1, 1, 1), "", Decimal("1.00E-8"), datetime(1900, 1, 1, tzinfo=UTC),
     datetime(9999, 12, 31), Decimal("5.0")),
    (3, Decimal("-0.00"), date(9999, 12, 31), "y", Decimal("-0E-10"), None, None, Decimal("0")),
]


def test_rows_read_back_equal_with_their_exponents():
    codec = RowCodec(TYPES)
    for row in ROWS:
        back = codec.decode(codec.encode(row))
        assert back == row
        assert [repr(value) for value in back] == [repr(value) for value in row]


def test_decimals_dates_and_timestamps_are_stored_as_integers():
    codec = RowCodec(TYPES)
    plain = pickle.loads(codec.encode(ROWS[0]))
    assert plain[:3] == (1, 2116823, date(1996, 3, 13).toordinal())
    assert plain[4] == 12345678901234567890123456780123456789 and plain[7] == -7
    assert plain[5] == 1704164645000006 and plain[6] == -1
    assert len(codec.encode(ROWS[0])) < len(PICKLED.encode(ROWS[0]))


def test_a_codec_travels_to_the_workers_by_its_types():
    codec = pickle.loads(pickle.dumps(RowCodec(TYPES)))
    assert codec.decode(RowCodec(TYPES).encode(ROWS[0])) == ROWS[0]
