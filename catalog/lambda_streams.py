"""TPC-H change streams with a chosen enclosureness λ (AJU §1, §6): a sliding window with two lifetimes.

AJU §6 says only that its streams of higher λ "adjust the order of the insertions and deletions";
how is not stated. We keep what makes a stream useful for joins and change only when tuples leave:

- Tuples are inserted once each, in ``make_stream``'s ``insert`` order (every table sorted by key and
  spread over one timeline), so an order arrives near its lineitems and joins are not empty.
- Each tuple is deleted a fixed number of insertions after its own insert, as in a FIFO window,
  but a seeded random share of them (``long_fraction``) lives ``long_life`` plus a seeded spread
  below ``window`` insertions instead of ``window``. Tuples due when the stream ends stay (their
  lifespans end at +∞).

With one lifetime this is FIFO and λ = 1 exactly. A long-lived tuple's lifespan contains the
lifespans of short-lived tuples inserted after it, about ``long_life / window - 1`` of them pairwise
disjoint, and no short lifespan contains anything but itself, so λ is about
``1 + long_fraction * (long_life / window - 2)``. Rather than trust that estimate, ``long_life`` is
chosen by bisection on the exact λ of the generated schedule. λ grows with ``long_life``: all long
ends move later together, so every containment between lifespans survives and new ones can only
appear; and the spread makes it grow in small steps, so the achieved λ is close to the target.

The default ``window`` puts long lifespans at about 1/20 of the stream, whatever the target; then
about 1/40 of the tuples are present at any time for every λ, so streams of different λ over the
same data differ in how hard they are, not in how big the database gets.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from functools import cache

import numpy as np

from catalog.schema import Catalog
from catalog.tpch_streams import make_stream
from operators.enclosureness import enclosureness
from operators.stream_format import DELETE, INSERT, Update, gc_paused

LONG_FRACTION = 0.5
LONG_LIFE_SHARE = 1 / 20  # default window: long lifespans cover about this share of the stream
CLOSE_ENOUGH = 1e-4  # relative distance from the target at which the search stops


@gc_paused()
def make_lambda_stream(
    tables: Mapping[str, Sequence[tuple]],
    catalog: Catalog,
    target_lambda: float,
    seed: int = 0,
    *,
    window: int | None = None,
    long_fraction: float = LONG_FRACTION,
    first_seq: int = 1,
) -> list[Update]:
    """A valid stream over ``tables`` whose exact λ is as close to ``target_lambda`` as ``long_life`` allows.

    ``window`` is the lifetime of short-lived tuples, in insertions; by default it is chosen so that
    long lifespans cover about 1/20 of the stream, which keeps the part of the stream that starts
    full (and ends with tuples left over) small. ``seed`` picks which tuples live long. ``_seq``
    runs from ``first_seq`` without gaps. Raises ``ValueError`` when the target is below 1 (no
    stream has λ < 1) or beyond what ``window`` allows on this many tuples.
    """
    timeline = [(update.table, update.row) for update in make_stream(tables, catalog, "insert")]
    lifetimes = lambda_lifetimes(len(timeline), target_lambda, seed, window=window, long_fraction=long_fraction)
    owners, is_insert = _schedule(lifetimes)
    updates = []
    for position, (owner, inserting) in enumerate(zip(owners.tolist(), is_insert.tolist(), strict=True)):
        table, row = timeline[owner]
        updates.append(Update(first_seq + position, table, INSERT if inserting else DELETE, row))
    return updates


def lambda_lifetimes(
    tuple_count: int,
    target_lambda: float,
    seed: int = 0,
    *,
    window: int | None = None,
    long_fraction: float = LONG_FRACTION,
) -> np.ndarray:
    """Each tuple's lifetime in insertions, short (``window``) or long, with λ of the schedule near the target."""
    if not target_lambda >= 1:
        raise ValueError(f"target λ must be at least 1 (every lifespan contains itself), got {target_lambda}")
    if not 0 < long_fraction <= 1:
        raise ValueError(f"long_fraction must be in (0, 1], got {long_fraction}")
    if tuple_count < 1:
        raise ValueError("a λ stream needs at least one tuple")
    if window is None:
        window = max(1, round(tuple_count * LONG_LIFE_SHARE / (2 + (target_lambda - 1) / long_fraction)))
    if window < 1:
        raise ValueError(f"window must be at least 1 insertion, got {window}")
    fifo = np.full(tuple_count, window)  # λ = 1 exactly
    if target_lambda == 1:
        return fifo
    rng = np.random.default_rng(seed)
    is_long = rng.random(tuple_count) < long_fraction
    # Without the spread, long lifespans reach the next short end all at the same long_life and λ jumps.
    spread = rng.integers(0, window, tuple_count)

    def lifetimes(long_life: int) -> np.ndarray:
        return np.where(is_long, long_life + spread, window)

    @cache
    def achieved(long_life: int) -> float:
        return _schedule_enclosureness(lifetimes(long_life))

    # Bracket the target starting from the estimate of the module docstring, then bisect.
    shortest, longest = window, min(tuple_count, round(window * (2 + (target_lambda - 1) / long_fraction)))
    while achieved(longest) < target_lambda and longest < tuple_count:
        shortest, longest = longest, min(tuple_count, 2 * longest)
    if achieved(longest) < target_lambda:
        raise ValueError(
            f"target λ {target_lambda} is out of reach with window {window} on {tuple_count} tuples "
            f"(at most {achieved(longest):.3f}); use a smaller window or more data"
        )
    # invariant: achieved(shortest) < target <= achieved(longest), or shortest == window
    while longest - shortest > 1 and achieved(longest) - target_lambda > CLOSE_ENOUGH * target_lambda:
        middle = (shortest + longest) // 2
        if achieved(middle) < target_lambda:
            shortest = middle
        else:
            longest = middle
    best = min((shortest, longest), key=lambda life: abs(achieved(life) - target_lambda))
    # Near the end, lifespans left open make even the shortest spread-out schedule a bit above 1.
    return fifo if target_lambda - 1 < abs(achieved(best) - target_lambda) else lifetimes(best)


def _schedule(lifetimes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stream's events in order, as (tuple index, is insert) arrays.

    Tuple t is inserted at step t; a tuple due at step d (t + its lifetime) is deleted just before
    the insert of step d, tuples due together in insertion order; tuples due after the last step stay.
    """
    tuple_count = len(lifetimes)
    inserted = np.arange(tuple_count)
    due = inserted + lifetimes
    leaving = inserted[due < tuple_count]
    owners = np.concatenate([inserted, leaving])
    steps = np.concatenate([inserted, due[leaving]])
    is_insert = np.concatenate([np.ones(tuple_count, dtype=bool), np.zeros(len(leaving), dtype=bool)])
    order = np.lexsort((owners, is_insert, steps))
    return owners[order], is_insert[order]


def _schedule_enclosureness(lifetimes: np.ndarray) -> float:
    """λ of ``_schedule(lifetimes)``, from event positions, without building the updates."""
    owners, is_insert = _schedule(lifetimes)
    positions = np.arange(len(owners), dtype=float)
    starts = np.empty(len(lifetimes))
    ends = np.full(len(lifetimes), math.inf)
    starts[owners[is_insert]] = positions[is_insert]
    ends[owners[~is_insert]] = positions[~is_insert]
    return enclosureness(np.column_stack([starts, ends]))
