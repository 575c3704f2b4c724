"""A GJT stage's T-representation in pages, so a batch reads and writes O(|Δ| log n) pages, not the state.

``GjtStage.process`` reads a key's state through ``reducts`` (dicts) and ``indexes`` (sorted groups)
only. ``PagedGjtState`` gives it the same two lists over a ``page_store.PageStore``: each reduct a
``PagedWeights`` (one page per row), each index ``PagedSortedGroups`` (a B-tree of pages per group),
and one meta page with the reducts' sizes and the next page number. The algorithms (IEDyn's
Algorithms 1 and 2, delta enumeration) stay the stage's: this module only decides where the state
lives. A batch then touches the pages of the rows it changes, the B-tree paths of their probes
(O(log_B n) each), and the leaf pages holding the rows its walks yield (Line 10 where the parent's
variables come from the sibling, and the delta enumeration: what it emits anyway).

All page ids of one stage key start with the key's canonical text, so the keys of a Spark bucket
share one MapState without colliding. Nothing is cached between batches: a ``PagedGjtState`` is
built per batch over that batch's ``PageStore``, and the store starts empty each batch.
"""

from __future__ import annotations

from operators.stages.gjt.stage import GjtStage
from operators.structures.page_store import KeyPages, PagedWeights, PageStore
from operators.structures.paged_sorted_groups import PagedSortedGroups


class PagedGjtState:
    """One stage key's ``GjtState`` in ``pages`` (module docstring). Call ``save`` after ``process``."""

    __slots__ = ("reducts", "indexes", "key_pages")

    def __init__(self, stage: GjtStage, pages: PageStore, key: tuple) -> None:
        node_count, index_count = stage.state_shape
        self.key_pages = owned = KeyPages(pages, key, lambda: [0, [0] * node_count])
        prefix, sizes = owned.prefix, owned.meta[1]
        self.reducts = [PagedWeights(pages, f"{prefix}r{n}|", sizes, n) for n in range(node_count)]
        self.indexes = [PagedSortedGroups(pages, f"{prefix}i{i}|", owned.allocate) for i in range(index_count)]

    def save(self, result: object = None) -> None:
        """Store the meta page, or drop it when every reduct is empty (then so is every index: the
        key has no pages left). ``result``, what ``process`` returned, is this state itself."""
        self.key_pages.save(keep=any(self.key_pages.meta[1]))
