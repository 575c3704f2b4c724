"""Insert/delete streams for the triangle count (``examples/fivm/triangle.sql``, IVM^ε): two-column
edge rows with skewed degrees, so that heavy keys exist and the partition rebalances.

A ``hub`` share of the values is one value (0), the rest uniform over ``domain``: the hub's degree
grows linearly with the data, so it turns heavy once it passes ~N^ε; the others stay light. The stream first grows the
tables (mostly inserts: N doubles past M again and again, major rebalancing up, hubs turning
heavy), then shrinks them (mostly deletes: M halves, hubs turning light again). Tables are bags:
a delete removes a present copy, never an absent row.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from operators.runtime.stream import Update


def triangle_stream(tables: Sequence[str], updates: int, seed: int, domain: int = 300, hub: float = 0.3,
                    grow: float = 0.6) -> list[Update]:
    """``updates`` changes over ``tables`` (each of two integer columns): the first ``grow`` of them
    insert four times in five, the rest delete nine times in ten."""
    g = random.Random(seed)

    def value() -> int:
        return 0 if g.random() < hub else g.randrange(domain)

    present: dict[str, list[tuple]] = {t: [] for t in tables}
    out = []
    for seq in range(1, updates + 1):
        table = g.choice(tables)
        rows = present[table]
        deletes = 0.2 if seq <= grow * updates else 0.9
        if rows and g.random() < deletes:
            index = g.randrange(len(rows))
            rows[-1], rows[index] = rows[index], rows[-1]
            out.append(Update(seq, table, -1, rows.pop()))
        else:
            rows.append((value(), value()))
            out.append(Update(seq, table, 1, rows[-1]))
    return out
