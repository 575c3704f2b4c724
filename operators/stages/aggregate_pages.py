"""A global aggregate's MIN/MAX in pages, so a Spark batch reads and writes O(|Δ| log_B n) pages, not every value.

A ``GroupAggregateStage`` without GROUP BY is keyed by a constant; with MIN or MAX (or MIN_BY/MAX_BY)
its state holds every distinct argument value, which one chunk would re-pickle each batch.
``PagedGroupState`` gives ``process`` the same ``GroupState`` fields over a ``page_store.PageStore``:
the row count, the non-NULL counts and the ring sums (SUM/COUNT/AVG beside the MIN/MAX) in the key's
meta page, and each ordered aggregate as ``PagedOrderedValues``: ``OrderedValues`` itself (its
``add``/``result``, the one definition of MIN/MAX's logic) over a value → multiplicity map with one
page per value (``page_store.PagedWeights``) and the present values as a B-tree of pages
(``paged_sorted_groups.PagedSortedGroup``), whose ends are the answer. A batch touches one page per
changed value, one B-tree path per value that appears or vanishes, and one path per end read.

Only the ordered aggregates are paged: a global aggregate with a DISTINCT aggregate or a percentile
keeps its one chunk (``paged_group_state`` says which stages take this layout).
"""

from __future__ import annotations

from operators.stages.aggregate import ORDERED_FUNCTIONS, GroupAggregateStage, GroupState, OrderedValues
from operators.structures.page_store import KeyPages, PagedWeights, PageStore
from operators.structures.paged_sorted_groups import PagedSortedGroup


def pages_ordered_values(stage: object) -> bool:
    """Whether ``stage`` is a global aggregate whose kept values are all MIN/MAX(_BY) ones (at least one)."""
    if not isinstance(stage, GroupAggregateStage) or stage.group_by:
        return False
    kept = [spec.func for spec in stage.aggregates if spec.keeps_values]
    return bool(kept) and all(func in ORDERED_FUNCTIONS for func in kept)


class PagedMultiplicity:
    """The value → multiplicity map ``ValueCounts`` keeps, one page per value (``PagedWeights`` of 1-tuples)."""

    __slots__ = ("weights",)

    def __init__(self, weights: PagedWeights) -> None:
        self.weights = weights

    def get(self, value: object, default: int = 0) -> int:
        return self.weights.get((value,), default)

    def __setitem__(self, value: object, multiplicity: int) -> None:
        self.weights[(value,)] = multiplicity

    def __delitem__(self, value: object) -> None:
        del self.weights[(value,)]


class PagedSortedValues:
    """The present values as ``OrderedValues`` reads its SortedList: ``add``, ``remove``, truth, and its
    two ends (``[0]``, ``[-1]``), over a B-tree of pages whose sort value is the value itself."""

    __slots__ = ("group",)

    def __init__(self, group: PagedSortedGroup) -> None:
        self.group = group

    def add(self, value: object) -> None:
        self.group.add(value, value, 1)

    def remove(self, value: object) -> None:
        self.group.add(value, value, -1)

    def __bool__(self) -> bool:
        return bool(self.group)

    def __getitem__(self, end: int) -> object:
        if end not in (0, -1):
            raise IndexError(f"paged values read only their ends, not position {end}")
        return self.group.end(last=end == -1)


class PagedOrderedValues(OrderedValues):
    """``OrderedValues`` over pages (module docstring): its methods unchanged, its two fields paged."""

    __slots__ = ()

    def __init__(self, multiplicity: PagedMultiplicity, ordered: PagedSortedValues) -> None:
        self.multiplicity, self.ordered = multiplicity, ordered


class PagedGroupState:
    """The one ``GroupState`` of a global aggregate in ``pages`` (module docstring). ``process`` copies its
    scalars into a new ``GroupState`` and shares the paged values; call ``save`` with what it returned."""

    __slots__ = ("rows", "group", "values", "counts", "key_pages")

    def __init__(self, stage: GroupAggregateStage, pages: PageStore, key: tuple) -> None:
        width = len(stage.aggregates)
        # meta: [next page number, rows, non-NULL counts, ring sums, each ordered aggregate's value count]
        self.key_pages = owned = KeyPages(pages, key, lambda: [0, 0, [0] * width, [None] * width, [0] * width])
        _, self.rows, counts, sums, sizes = owned.meta
        self.group, self.counts = key, list(counts)
        prefix = owned.prefix
        self.values = [
            PagedOrderedValues(PagedMultiplicity(PagedWeights(pages, f"{prefix}c{i}|", sizes, i)),
                               PagedSortedValues(PagedSortedGroup(pages, f"{prefix}s{i}", owned.allocate)))
            if spec.keeps_values else total
            for i, (spec, total) in enumerate(zip(stage.aggregates, sums, strict=True))]

    def save(self, result: GroupState | None) -> None:
        """Store ``result``'s scalars in the meta page, or drop it when the group has no row left (then
        every value's multiplicity is 0 and no value page is left either)."""
        meta = self.key_pages.meta
        if result is not None:
            meta[1], meta[2] = result.rows, list(result.counts)
            meta[3] = [None if isinstance(value, OrderedValues) else value for value in result.values]
        self.key_pages.save(keep=result is not None)
