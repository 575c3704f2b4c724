"""TPC-H change streams with a chosen enclosureness λ (AJU §1, §6): live dimensions, flickering orders.

What AJU specifies: λ(i) is the largest number of pairwise-disjoint lifespans inside lifespan i and
λ the average over all lifespans (§1); AJU maintains a foreign-key acyclic join in O(λ) amortized
time because a tuple's counter s(t) changes once per insert or delete of a child tuple it joins
with, and those child tuples share a primary key, so their lifespans inside i are disjoint: at most
λ(i) + 2 of them (§3.4, Lemma 7). The cost is high when "a tuple affecting a lot of other tuples is
repeatedly deleted and inserted back". For Figure 15, AJU §6 says only that the streams have "the
same length" and that it "adjust[s] the order of the insertions and deletions"; how is not stated.

What we chose, and why:

- **Dimension tables live.** Every table but ``orders`` and ``lineitem`` is inserted first, in
  ``make_stream``'s ``insert`` order, and never deleted, so joins through them never go empty (the
  earlier streams deleted nation and region and left Q5's result empty most of the time).
- **Facts in a FIFO window.** ``orders`` and ``lineitem`` follow in the ``insert`` order (an order
  next to its lineitems); each fact tuple is deleted ``window`` fact insertions after its insert
  (default: a fifth of the facts, AJU §6.2's FIFO keeps 20% of the data). Without flicker this is
  FIFO over the facts.
- **λ from re-inserted orders.** A stream whose tuples are each inserted and deleted once costs AJU
  O(1) amortized per update whatever its λ (each child lifespan changes each joining s(t) at most
  twice), so reordering alone cannot make Q5 slower. What Lemma 7 charges is a child deleted and
  inserted back under live parents: here an order (child of lineitem in Q5's tree) is deleted and
  re-inserted while its lineitems stay, every such change flipping all of its lineitems non-live and
  live again. Each ``flickering`` order's span of ``window`` insertions is cut into ``k`` lifespans
  (about ``window / k`` long each) with a pause of ``gap`` insertions before each re-insert; a
  lineitem's lifespan then holds about ``k`` disjoint order lifespans, its own order's among them.
  ``k`` is a per-order integer drawn (seeded) around a real knob ``x``, and ``x`` is found by
  bisection on the exact λ of the generated stream (``planner.workloads.enclosureness``), so the achieved λ
  is close to the target.
- **One length.** Every stream is cut to the length of the stream without flicker (``x = 1``), so
  streams of every λ have the same number of updates (AJU's "same length"); re-inserts make a
  high-λ stream cover less of the fact timeline. Tuples present at the cut stay (lifespans to +∞).

Consequences to keep in mind when reading λ (all measured, none hidden):

- λ is an average over all lifespans, so it counts containments the query never pays for: a
  dimension tuple, present from the start to the end, holds every fact lifespan (its λ(i) is the
  longest chain of disjoint lifespans in the stream), and a lineitem holds other orders' lifespans
  too. With no flicker the stream is therefore λ ≈ 1.1, not 1.
- Re-inserting *every* order dilutes λ: each re-insert adds an order lifespan of λ ≈ 1 to the
  average, so while lineitems dominate the stream λ stays below about 1 + |lineitem| / |orders| ≈ 5,
  and higher targets are reached only once orders updates crowd out the lineitems (at SF 0.01, λ 8
  took 91% orders updates). High λ with a realistic mix needs few flickering orders under many
  lineitems: by default a seeded ``FLICKER_SHARE`` of the orders; ``flickering`` picks them instead
  (the benchmark picks the orders Q5's selections keep, since a flicker of any other order is
  dropped by Q5 at its source in O(1)). Which orders flicker is our choice, not AJU's.
- The local runner nets a key's changes inside one batch, so a delete and re-insert of an order in
  the same batch costs nothing downstream; ``gap`` (in insertions, hence at least as many updates)
  must be at least the batch size for the flicker to be seen as AJU's tuple-at-a-time algorithm
  sees it.
- The mix changes with λ: re-inserts add ``orders`` updates and, at one length, displace lineitem
  updates. A query whose per-update work differs by table (Q13 ignores lineitem) sees that too.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

import attrs
import numpy as np

from catalog.schema import Catalog
from operators.runtime.stream import DELETE, INSERT, CheckedTables, Update, UpdateBatch, gc_paused
from planner.workloads.enclosureness import enclosureness
from planner.workloads.tpch_streams import make_stream

FACT_TABLES = ("orders", "lineitem")
FLICKER_TABLE = "orders"  # the fact table that is deleted and re-inserted under its live lineitems
WINDOW_SHARE = 1 / 5  # default window: AJU §6.2's FIFO streams keep 20% of the data
FLICKER_SHARE = 1 / 32  # default share of orders re-inserted: few, so lineitems stay most of the stream
DEFAULT_GAP = 100  # insertions between an order's delete and its re-insert (>= the benchmark's batch)
CLOSE_ENOUGH = 2e-3  # relative distance from the target at which the search stops
SEARCH_STEPS = 40


@attrs.frozen
class _Layout:
    """The parts of the schedule that do not depend on the flicker knob."""

    dimensions: list[tuple[str, tuple]]  # inserted first, never deleted
    facts: list[tuple[str, tuple]]  # the fact timeline: fact i is inserted at step i
    flickering: np.ndarray  # fact indexes of the orders that may be re-inserted
    draws: np.ndarray  # one seeded uniform per flickering order (rounds the knob to an integer k)
    window: int
    gap: int


@gc_paused()
def make_lambda_stream(
    tables: Mapping[str, Sequence[tuple]],
    catalog: Catalog,
    target_lambda: float,
    seed: int = 0,
    *,
    window: int | None = None,
    gap: int = DEFAULT_GAP,
    flickering: Callable[[tuple], bool] | None = None,
    length: int | None = None,
    first_seq: int = 1,
) -> UpdateBatch:
    """A valid stream over ``tables`` whose exact λ is as close to ``target_lambda`` as the knob allows.

    ``flickering`` selects the ``orders`` rows that may be deleted and re-inserted (default: a
    seeded ``FLICKER_SHARE`` of them);
    ``window`` is a fact tuple's lifetime in fact insertions; ``gap`` the pause before a re-insert;
    ``length`` the number of updates (default: that of the stream without flicker). ``_seq`` runs
    from ``first_seq`` without gaps; it is ``checked`` when ``tables`` are (``load_tables``). Raises
    ``ValueError`` for a target below 1 or out of reach.
    """
    layout = _layout(tables, catalog, seed, window, gap, flickering)
    length = length or _stream_length(layout, 1.0)
    knob = _lambda_knob(layout, target_lambda, length)
    owners, is_insert = _schedule(layout, knob, length)
    everything = layout.dimensions + layout.facts
    updates = tuple(
        Update(first_seq + position, everything[owner][0], INSERT if inserting else DELETE, everything[owner][1])
        for position, (owner, inserting) in enumerate(zip(owners.tolist(), is_insert.tolist(), strict=True))
    )
    return UpdateBatch(updates, checked=isinstance(tables, CheckedTables))


def _layout(tables, catalog: Catalog, seed: int, window: int | None, gap: int,
            flickering: Callable[[tuple], bool] | None) -> _Layout:
    """Split ``tables`` into live dimensions and the fact timeline, and draw the flicker rounding."""
    missing = [name for name in FACT_TABLES if name not in tables]
    if missing:
        raise ValueError(f"a λ stream needs the fact tables {', '.join(FACT_TABLES)}; missing: {', '.join(missing)}")
    dimensions = {name: rows for name, rows in tables.items() if name not in FACT_TABLES}
    facts = [(u.table, u.row) for u in make_stream({name: tables[name] for name in FACT_TABLES}, catalog, "insert")]
    if not facts:
        raise ValueError("a λ stream needs at least one fact tuple")
    window = window if window is not None else max(1, round(len(facts) * WINDOW_SHARE))
    if window < 1 or gap < 1:
        raise ValueError(f"window and gap must be at least 1 insertion, got window {window} and gap {gap}")
    rng = np.random.default_rng(seed)
    orders = [i for i, (table, _) in enumerate(facts) if table == FLICKER_TABLE]
    if flickering is None:
        chosen = [i for i, draw in zip(orders, rng.random(len(orders)), strict=True) if draw < FLICKER_SHARE]
    else:
        chosen = [i for i in orders if flickering(facts[i][1])]
    return _Layout(
        dimensions=[(u.table, u.row) for u in make_stream(dimensions, catalog, "insert")] if dimensions else [],
        facts=facts, flickering=np.array(chosen, dtype=np.int64),
        draws=rng.random(len(chosen)), window=window, gap=gap,
    )


def _lambda_knob(layout: _Layout, target_lambda: float, length: int) -> float:
    """The flicker knob x (mean lifespans per flickering order) whose stream's λ is nearest the target.

    λ grows with x (more, shorter order lifespans fit in each lineitem lifespan), so bisection; the
    per-order rounding draws make it grow in small steps.
    """
    if not target_lambda >= 1:
        raise ValueError(f"target λ must be at least 1 (every lifespan contains itself), got {target_lambda}")
    highest = max(1.0, layout.window / (layout.gap + 1))  # a lifespan needs more room than its pause

    def achieved(knob: float) -> float:
        return _schedule_enclosureness(layout, knob, length)

    low, high = 1.0, highest
    if achieved(low) >= target_lambda or len(layout.flickering) == 0:
        return low
    if achieved(high) < target_lambda:
        raise ValueError(
            f"target λ {target_lambda} is out of reach: at most {achieved(high):.3f} with window {layout.window}, "
            f"gap {layout.gap} and {len(layout.flickering)} flickering orders; flicker fewer orders or widen the window"
        )
    for _ in range(SEARCH_STEPS):
        middle = (low + high) / 2
        if achieved(middle) < target_lambda:
            low = middle
        else:
            high = middle
        if abs(achieved(high) - target_lambda) <= CLOSE_ENOUGH * target_lambda:
            break
    return min((low, high), key=lambda knob: abs(achieved(knob) - target_lambda))


def _flicker_counts(layout: _Layout, knob: float) -> np.ndarray:
    """Lifespans per flickering order: floor(x) or ceil(x), ceil with probability frac(x) (seeded, monotone in x)."""
    whole = math.floor(knob)
    return whole + (layout.draws < knob - whole).astype(np.int64)


def _events(layout: _Layout, knob: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fact events as (step, fact index, is insert), unordered, before the stream is cut.

    Fact i is inserted at step i and deleted at step i + window; a flickering order with k
    lifespans is also deleted at i + round(j * window / k) and re-inserted ``gap`` steps later,
    j = 1 .. k-1. Events at or after the last step are dropped (those tuples stay).
    """
    count, window = len(layout.facts), layout.window
    inserted = np.arange(count)
    cuts_per_order = _flicker_counts(layout, knob) - 1
    owners = np.repeat(layout.flickering, cuts_per_order)
    lifespans = np.repeat(cuts_per_order + 1, cuts_per_order)
    ordinal = np.arange(len(owners)) - np.repeat(np.cumsum(cuts_per_order) - cuts_per_order, cuts_per_order) + 1
    cut_steps = owners + np.rint(ordinal * window / np.maximum(lifespans, 1)).astype(np.int64)
    steps = np.concatenate([inserted, inserted + window, cut_steps, cut_steps + layout.gap])
    facts = np.concatenate([inserted, inserted, owners, owners])
    is_insert = np.concatenate([np.ones(count, bool), np.zeros(count, bool), np.zeros(len(owners), bool),
                                np.ones(len(owners), bool)])
    kept = steps < count
    return steps[kept], facts[kept], is_insert[kept]


def _schedule(layout: _Layout, knob: float, length: int) -> tuple[np.ndarray, np.ndarray]:
    """The stream's first ``length`` events as (index into dimensions + facts, is insert) arrays.

    Dimensions come first; then fact events by step, deletes of a step before its inserts (as in a
    FIFO window), ties by fact index.
    """
    steps, facts, is_insert = _events(layout, knob)
    order = np.lexsort((facts, is_insert, steps))
    dimension_count = len(layout.dimensions)
    owners = np.concatenate([np.arange(dimension_count), facts[order] + dimension_count])[:length]
    inserting = np.concatenate([np.ones(dimension_count, bool), is_insert[order]])[:length]
    return owners, inserting


def _stream_length(layout: _Layout, knob: float) -> int:
    """Number of updates of the uncut stream at ``knob``."""
    return len(layout.dimensions) + len(_events(layout, knob)[0])


def _schedule_enclosureness(layout: _Layout, knob: float, length: int) -> float:
    """λ of ``_schedule(layout, knob, length)`` from event positions, without building the updates.

    A tuple's events alternate insert, delete, insert ...; each insert opens a lifespan that its
    tuple's next event closes (+∞ when there is none).
    """
    owners, is_insert = _schedule(layout, knob, length)
    by_owner = np.lexsort((np.arange(len(owners)), owners))
    same_next = np.append(owners[by_owner][1:] == owners[by_owner][:-1], False)
    positions = by_owner.astype(float)
    opening = is_insert[by_owner]
    next_position = np.append(positions[1:], math.inf)
    starts = positions[opening]
    ends = np.where(same_next, next_position, math.inf)[opening]
    return enclosureness(np.column_stack([starts, ends]))
