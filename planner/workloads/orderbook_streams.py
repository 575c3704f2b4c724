"""Seeded change streams for the RPAI paper's workloads: an order book (bids, asks) and Example 2.1's r.

The paper (RPAI §2.2, §5.1.1) runs its finance queries on order-book traces of the DBToaster finance
benchmark (10k records in its Figure 7, several sizes in Figure 8). It says only that the traces
carry bids and asks with timestamp, id, broker_id, volume and price, and that they "often contain
updates or retractions of older transactions", so they must be maintained under inserts *and*
deletes. We do not ship those traces; this generator reproduces that behaviour, and where the text
is silent it follows DBToaster's order-book adaptor (which turns the trace's order events into
inserts and deletes) or says it chose:

- an event either places a new order or removes a live one (``delete_fraction`` of the events when
  that side of the book is not empty); the removed order is picked uniformly among the live ones,
  so orders live for a random time before they are cancelled or executed;
- a removal is a *partial execution* with probability ``partial_fill_fraction``: the order is
  deleted and inserted again under the same id with a smaller volume and the event's time, as
  DBToaster's order-book adaptor turns an ``E`` event into a delete and an insert;
- order ids come from one counter shared by both sides (an exchange numbers all orders) and
  ``broker_id = id % brokers``, DBToaster's deterministic broker assignment;
- prices are integer ticks in a fixed band of ``price_levels`` ticks per side — bids below
  ``mid_price``, asks at or above it — crowded towards the mid (the top of a real book is deepest);
  the fixed band is our choice so that ``price_levels`` bounds the number of distinct prices, the
  size of the RPAI tree VWAP and MST keep;
- volumes are whole shares, uniform in ``1..max_volume``.

``t`` is the event's number in the trace (both halves of a partial execution share it) and
``_seq`` numbers the updates from ``first_seq``. Every stream has set semantics: a present id is
never inserted, an absent row never deleted. Every value is a Python int, as the integer columns of
``examples/orderbook/schema.sql`` want, so the streams are ``checked`` batches.
"""

from __future__ import annotations

import numpy as np

from catalog.orderbook import SIDES, R
from operators.runtime.stream import DELETE, INSERT, Update, UpdateBatch, gc_paused


class LiveRows:
    """The rows currently in one table, with O(1) removal of a row picked by a uniform draw."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def __len__(self) -> int:
        return len(self.rows)

    def add(self, row: tuple) -> None:
        self.rows.append(row)

    def pop(self, uniform: float) -> tuple:
        rows = self.rows
        position = int(uniform * len(rows))
        row = rows[position]
        rows[position] = rows[-1]
        rows.pop()
        return row


def require_at_least(low: int, **values: int) -> None:
    for name, value in values.items():
        if value < low:
            raise ValueError(f"{name} must be at least {low}, got {value}")


def require_fraction(**values: float) -> None:
    for name, value in values.items():
        if not 0 <= value <= 1:
            raise ValueError(f"{name} must be between 0 and 1, got {value}")


@gc_paused()
def make_orderbook_stream(
    n_bids: int,
    n_asks: int = 0,
    seed: int = 0,
    delete_fraction: float = 0.2,
    brokers: int = 10,
    price_levels: int = 1_000,
    *,
    partial_fill_fraction: float = 0.25,
    max_volume: int = 1_000,
    mid_price: int = 100_000,
    first_seq: int = 1,
) -> UpdateBatch:
    """Exactly ``n_bids`` updates of ``bids`` and ``n_asks`` of ``asks``, interleaved at random.

    Rows are ``(t, id, broker_id, volume, price)``. ``delete_fraction`` is the chance that an event
    on a non-empty side removes an order rather than placing one; a partial execution adds an
    insert to its delete (see the module docstring for the model and where it follows the paper).
    """
    require_at_least(0, n_bids=n_bids, n_asks=n_asks)
    require_at_least(1, brokers=brokers, price_levels=price_levels, max_volume=max_volume)
    require_fraction(delete_fraction=delete_fraction, partial_fill_fraction=partial_fill_fraction)
    if mid_price < price_levels:
        raise ValueError(f"mid_price ({mid_price}) must be at least price_levels ({price_levels}) to keep bids positive")
    total = n_bids + n_asks
    rng = np.random.default_rng(seed)
    side_draws, action_draws, pick_draws, partial_draws, fill_draws = rng.random((5, total)).tolist()
    volumes = rng.integers(1, max_volume, size=total, endpoint=True).tolist()
    # u**2 crowds the draws towards offset 0, the top of the book.
    offsets = (rng.random(total) ** 2 * price_levels).astype(np.int64).tolist()

    books = (LiveRows(), LiveRows())  # indexed like SIDES
    remaining = [n_bids, n_asks]
    updates: list[Update] = []

    def emit(side: int, op: int, row: tuple) -> None:
        updates.append(Update(first_seq + len(updates), SIDES[side], op, row))
        remaining[side] -= 1

    event, next_id = 0, 1
    while remaining[0] + remaining[1]:
        side = 0 if side_draws[event] * (remaining[0] + remaining[1]) < remaining[0] else 1
        book = books[side]
        if book and action_draws[event] < delete_fraction:
            row = book.pop(pick_draws[event])
            emit(side, DELETE, row)
            _, order_id, broker_id, volume, price = row
            if remaining[side] and volume > 1 and partial_draws[event] < partial_fill_fraction:
                executed = 1 + int(fill_draws[event] * (volume - 1))
                row = (event, order_id, broker_id, volume - executed, price)
                book.add(row)
                emit(side, INSERT, row)
        else:
            price = mid_price - 1 - offsets[event] if side == 0 else mid_price + offsets[event]
            row = (event, next_id, next_id % brokers, volumes[event], price)
            next_id += 1
            book.add(row)
            emit(side, INSERT, row)
        event += 1
    return UpdateBatch(tuple(updates), checked=True)


@gc_paused()
def make_r_stream(
    n: int,
    seed: int = 0,
    delete_fraction: float = 0.2,
    groups: int = 2,
    max_b: int = 3,
    *,
    rebalance_fraction: float = 0.5,
    first_seq: int = 1,
) -> UpdateBatch:
    """``n`` updates of Example 2.1's ``r(id, a, b)``: inserts of fresh ids and deletes of live rows.

    ``a`` is in ``1..groups`` and ``b`` uniform in ``1..max_b``. The paper gives no distribution for
    R. Ours is chosen so that the query's equality ``0.5 * sum(b) = sum(b of a's group)`` holds now
    and then and the maintained result is not always empty: with ``rebalance_fraction`` chance an
    insert goes to the group with the least ``b`` so far, else to a uniform group. Without that
    pull, two groups drift apart like a random walk and balance only a handful of times.
    """
    require_at_least(0, n=n)
    require_at_least(1, groups=groups, max_b=max_b)
    require_fraction(delete_fraction=delete_fraction, rebalance_fraction=rebalance_fraction)
    rng = np.random.default_rng(seed)
    action_draws, pick_draws, rebalance_draws = rng.random((3, n)).tolist()
    a_values = rng.integers(1, groups, size=n, endpoint=True).tolist()
    b_values = rng.integers(1, max_b, size=n, endpoint=True).tolist()
    group_sums = [0] * (groups + 1)  # by a; index 0 unused
    live = LiveRows()
    updates: list[Update] = []
    next_id = 1
    for position in range(n):
        if live and action_draws[position] < delete_fraction:
            row = live.pop(pick_draws[position])
            group_sums[row[1]] -= row[2]
            updates.append(Update(first_seq + position, R, DELETE, row))
            continue
        a = a_values[position]
        if rebalance_draws[position] < rebalance_fraction:
            a = min(range(1, groups + 1), key=group_sums.__getitem__)
        row = (next_id, a, b_values[position])
        next_id += 1
        group_sums[a] += row[2]
        live.add(row)
        updates.append(Update(first_seq + position, R, INSERT, row))
    return UpdateBatch(tuple(updates), checked=True)
