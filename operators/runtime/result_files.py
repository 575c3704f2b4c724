"""A view's result rows as an Arrow table: one column per result position in its Spark type.

Shared by the CLI's ``--out``/``--deltas`` files and the Spark runner's result table and change feed,
so every file of a result has the same column names and types (DECIMAL as decimal128(p,s), exact).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import pyarrow as pa

from catalog.types import NULL, DataType
from operators.runtime.column_types import arrow_type


def rows_table(rows: Sequence[tuple], names: Sequence[str], dtypes: Sequence[DataType | None],
               extra: Mapping[str, list] | None = None) -> pa.Table:
    """``rows`` column by column (a position without a type, or beyond ``dtypes``, is inferred), then the
    ``extra`` columns (``_batch``, ``_weight``...)."""
    extra = extra or {}
    arrays = []
    for i in range(len(names)):
        dtype = dtypes[i] if i < len(dtypes) else None
        arrays.append(pa.array([row[i] for row in rows], None if dtype in (None, NULL) else arrow_type(dtype)))
    arrays += [pa.array(values, pa.int64()) for values in extra.values()]
    return pa.Table.from_arrays(arrays, names=[*unique_names(names, reserved=extra), *extra])


def unique_names(names: Iterable[str], reserved: Iterable[str] = ()) -> list[str]:
    """Column names for a file: a name already used (``select a, a``, two aggregates aliased alike, or
    one of the ``reserved`` names such as ``_weight``) gets the first free ``_1``, ``_2``... suffix, as
    DuckDB's Parquet export does. Keeping the repeated names instead would make a file that pandas,
    pyarrow's dataset reader and Spark all refuse to read, and dropping one (a dict by name) loses data.

    >>> unique_names(["a", "a", "a_1", "b"], reserved=["b"])
    ['a', 'a_2', 'a_1', 'b_1']
    """
    names, reserved = list(names), set(reserved)
    used = reserved | set(names)
    seen: set[str] = set()
    unique = []
    for name in names:
        if name not in seen and name not in reserved:
            seen.add(name)
            unique.append(name)
            continue
        suffix = 1
        while f"{name}_{suffix}" in used:
            suffix += 1
        used.add(f"{name}_{suffix}")
        unique.append(f"{name}_{suffix}")
    return unique
