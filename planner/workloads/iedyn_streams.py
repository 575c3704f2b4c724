"""Seeded change streams for IEDyn's workloads: ``r``, ``s``, ``t`` of Table 1 and §1's ``trans``.

IEDyn §6 generates insert-only streams, the database empty at the start, in two kinds:

- **random-order** (``order="random"``): "a random update stream of size N for a query with k
  relations": N/k tuples with random attribute values for each relation, inserted "by uniformly
  and randomly selecting them without repetitions". Equality join attributes (our ``k``) are
  uniform in 1..200 (``key_domain``).
- **temporally-ordered** (``order="temporal"``): generated "similarly, but when a new insertion
  tuple is chosen, a new value is inserted in the attributes that are compared through
  inequalities. This value is larger than the corresponding values of previously inserted tuples."
  Here that value is the insert's number in the stream (1, 2, ...), one clock for all relations,
  written into every column some Table 1 inequality compares (``a``, ``d``, ``e``, ``g``).
- types: "All attributes hold integer values, except for attributes c and i which contain string
  values." The paper does not give the domain of the other attributes; we draw them uniform in
  1..1,000,000 (``value_domain``), so ties are rare and an inequality between two random columns
  holds for about half of the pairs (Table 2's Q1 output, 18,017k of the 6k × 6k pairs, is that
  half). ``c`` and ``i`` are such a number as a string (``"c123"``, ``"i45"``).

Ours must also delete (issue 11), so ``delete_fraction`` is the chance that an event removes a row
rather than inserting the next one: the removed row is picked uniformly among the rows present in
any of the stream's relations, so a delete always removes a row inserted before and still present.
Every insert of the paper's stream still happens, in the paper's order: ``size`` counts inserts,
and about ``size · f / (1 − f)`` deletes come on top. ``delete_fraction=0`` is the paper's
insert-only stream (Table 2). Each row carries a synthetic ``id`` (``examples/iedyn/schema.sql``),
numbered per relation from 1 in insertion order, so set semantics hold and a delete names its row.

``make_trans_stream`` is the same for the fraud query's ``trans(id, ts, acc, amnt)``: the paper
gives no data for it, so the module's choices are in its docstring.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from catalog.iedyn import RELATIONS, TRANS
from operators.runtime.stream import DELETE, INSERT, Update, UpdateBatch, gc_paused
from planner.workloads.orderbook_streams import LiveRows, require_at_least, require_fraction

ORDERS = ("random", "temporal")

#: IEDyn §6's domain of the equality join attribute k
PAPER_KEY_DOMAIN = 200
#: ours (the paper gives none) for every other integer attribute
VALUE_DOMAIN = 1_000_000

#: per relation: its columns (after ``id``) and which of them a Table 1 inequality compares
COLUMNS = {"r": ("a", "b", "c", "k"), "s": ("d", "e", "f", "k"), "t": ("g", "h", "i", "k")}
INEQUALITY_COLUMNS = frozenset({"a", "d", "e", "g"})
STRING_COLUMNS = frozenset({"c", "i"})


def _check_order(order: str) -> None:
    if order not in ORDERS:
        raise ValueError(f"unknown stream order {order!r} (orders: {', '.join(ORDERS)})")


def _with_deletes(inserts: Sequence[tuple[str, tuple]], delete_fraction: float, rng: np.random.Generator,
                  first_seq: int) -> UpdateBatch:
    """``inserts`` (table, row) in their order, with a delete of a uniformly chosen present row
    before an insert with chance ``delete_fraction`` per event (none while nothing is present)."""
    draws = rng.random((2, len(inserts) * 2)).tolist()  # a delete removes an inserted row: <= 2 events per insert
    live = LiveRows()
    updates: list[Update] = []
    event = 0
    for table, row in inserts:
        while live and draws[0][event] < delete_fraction:
            removed_table, removed = live.pop(draws[1][event])
            updates.append(Update(first_seq + len(updates), removed_table, DELETE, removed))
            event += 1
        live.add((table, row))
        updates.append(Update(first_seq + len(updates), table, INSERT, row))
        event += 1
    return UpdateBatch(tuple(updates), checked=True)


@gc_paused()
def make_iedyn_stream(
    size: int,
    relations: Sequence[str] = RELATIONS,
    order: str = "random",
    delete_fraction: float = 0.0,
    seed: int = 0,
    *,
    key_domain: int = PAPER_KEY_DOMAIN,
    value_domain: int = VALUE_DOMAIN,
    first_seq: int = 1,
) -> UpdateBatch:
    """IEDyn §6's stream of ``size`` inserts into ``relations`` (``size // len(relations)`` each, the
    remainder to the first ones), in ``order``, with deletes mixed in at ``delete_fraction``.

    Rows follow ``examples/iedyn/schema.sql``: ``r(id, a, b, c, k)``, ``s(id, d, e, f, k)``,
    ``t(id, g, h, i, k)``. Use ``relations=("r", "s")`` for Q1 and Q2 (k = 2 relations).
    """
    _check_order(order)
    require_at_least(0, size=size)
    require_at_least(1, key_domain=key_domain, value_domain=value_domain)
    require_fraction(delete_fraction=delete_fraction)
    unknown = sorted(set(relations) - set(COLUMNS))
    if unknown or not relations:
        raise ValueError(f"relations must be some of {', '.join(COLUMNS)}, got {list(relations)}")
    rng = np.random.default_rng(seed)
    per_relation = [size // len(relations) + (i < size % len(relations)) for i in range(len(relations))]
    # the paper's "uniformly and randomly selecting them without repetitions": a random permutation
    labels = rng.permutation(np.repeat(np.arange(len(relations)), per_relation)).tolist()
    values = rng.integers(1, value_domain, size=(size, 3), endpoint=True).tolist()
    keys = rng.integers(1, key_domain, size=size, endpoint=True).tolist()
    next_id = [1] * len(relations)
    inserts = []
    for position, label in enumerate(labels):
        table = relations[label]
        row: list = [next_id[label]]
        next_id[label] += 1
        for column, value in zip(COLUMNS[table][:3], values[position], strict=True):
            if order == "temporal" and column in INEQUALITY_COLUMNS:
                value = position + 1  # the clock: larger than every value inserted before
            row.append(f"{column}{value}" if column in STRING_COLUMNS else value)
        row.append(keys[position])
        inserts.append((table, tuple(row)))
    return _with_deletes(inserts, delete_fraction, rng, first_seq)


@gc_paused()
def make_trans_stream(
    size: int,
    order: str = "temporal",
    delete_fraction: float = 0.0,
    seed: int = 0,
    *,
    accounts: int = 5,
    mean_gap_seconds: int = 30,
    max_amount: int = 500,
    first_seq: int = 1,
) -> UpdateBatch:
    """``size`` credit-card transactions ``trans(id, ts, acc, amnt)`` for §1's fraud query, deletes
    mixed in at ``delete_fraction`` (a cancelled transaction).

    Our choices (the paper gives no data): ``ts`` in seconds, the gaps between consecutive
    transactions uniform in 0..2·``mean_gap_seconds``; ``acc`` uniform over ``accounts``; ``amnt``
    uniform in 1..``max_amount``, so with the defaults a fifth of the transactions are small
    (< 100) and a fifth large (> 400), and an account sees about 24 transactions an hour: the
    one-hour pattern small, small, large occurs often. ``order="temporal"`` inserts them in ``ts``
    order, ``"random"`` in a random order (out-of-order events).
    """
    _check_order(order)
    require_at_least(0, size=size)
    require_at_least(1, accounts=accounts, mean_gap_seconds=mean_gap_seconds, max_amount=max_amount)
    require_fraction(delete_fraction=delete_fraction)
    rng = np.random.default_rng(seed)
    times = np.cumsum(rng.integers(0, 2 * mean_gap_seconds, size=size, endpoint=True)).tolist()
    accounts_drawn = rng.integers(1, accounts, size=size, endpoint=True).tolist()
    amounts = rng.integers(1, max_amount, size=size, endpoint=True).tolist()
    arrival = range(size) if order == "temporal" else rng.permutation(size).tolist()
    inserts = [(TRANS, (number + 1, times[event], accounts_drawn[event], amounts[event]))
               for number, event in enumerate(arrival)]
    return _with_deletes(inserts, delete_fraction, rng, first_seq)
