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
from operators.structures.page_store import PagedWeights, PageStore
from operators.structures.paged_sorted_groups import PagedSortedGroups
from operators.zset import key_text

#: Separates the key's text from the rest of a page id (``repr`` never prints it raw).
SEPARATOR = "\x1f"


class PagedGjtState:
    """One stage key's ``GjtState`` in ``pages`` (module docstring). Call ``save`` after ``process``."""

    __slots__ = ("reducts", "indexes", "pages", "prefix", "meta")

    def __init__(self, stage: GjtStage, pages: PageStore, key: tuple) -> None:
        self.pages, self.prefix = pages, key_text(key) + SEPARATOR
        node_count, index_count = stage.state_shape
        meta = pages.get(self.prefix + "m")
        self.meta: list = meta if meta is not None else [0, [0] * node_count]
        sizes = self.meta[1]
        self.reducts = [PagedWeights(pages, f"{self.prefix}r{n}|", sizes, n) for n in range(node_count)]
        self.indexes = [PagedSortedGroups(pages, f"{self.prefix}i{i}|", self._allocate) for i in range(index_count)]

    def _allocate(self) -> str:
        """A new page id for a B-tree page (numbers are never reused while the key has state)."""
        number = self.meta[0]
        self.meta[0] = number + 1
        return f"{self.prefix}p{number}"

    def save(self) -> None:
        """Store the meta page, or drop it when every reduct is empty (then so is every index: the
        key has no pages left)."""
        self.pages.put(self.prefix + "m", self.meta if any(self.meta[1]) else None)
