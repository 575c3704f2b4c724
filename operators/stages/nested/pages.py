"""An RPAI-tree stage's state in pages, so a Spark batch reads and writes O(|Δ| log_B n) pages, not the state.

``RpaiTreeStage.process`` reads its state through ``index`` (a ``PrefixIndexState``: the tree of the
correlated column's values and, per group, the trees keyed by q) and ``uncorrelated`` (per
uncorrelated subquery its ``[Σ, count]``) only. ``PagedRpaiState`` gives it the same two over a
``page_store.PageStore``: every tree a ``PagedRPAITree`` (a B-tree of pages with page-relative keys),
and one meta page with the groups, the subqueries' sums and the next page number. The algorithm
(RPAI Figure 2c, ``PrefixAggregateIndex.apply``) stays the stage's: this module only decides where
the state lives. A batch then touches, per change, one root path of pages in each tree (the stage
shifts every group's trees: O(groups · log_B n) pages), and its output reads one range sum per tree.

The stage is keyed by a constant, so all of this is one Spark group's; nothing is cached between
batches: a ``PagedRpaiState`` is built per batch over that batch's ``PageStore``.
"""

from __future__ import annotations

from operators.stages.nested.rpai_tree import RpaiTreeStage
from operators.structures.page_store import SEPARATOR, KeyPages, PageStore
from operators.structures.paged_rpai_tree import PagedRPAITree
from operators.zset import key_text


class PagedPrefixIndexState:
    """A ``PrefixIndexState`` in a key's pages: ``bound`` and ``indexes`` as the stage reads them, the
    groups' trees named by the group's text (their root pages need no directory beyond the meta page)."""

    __slots__ = ("bound", "indexes", "key_pages")

    def __init__(self, key_pages: KeyPages, groups: list[tuple[tuple, int]]) -> None:
        self.key_pages = key_pages
        self.bound = PagedRPAITree(key_pages.pages, key_pages.prefix + "b", key_pages.allocate)
        self.indexes = {group: self.new_trees(group, width) for group, width in groups}

    def new_trees(self, group: tuple, width: int) -> list[PagedRPAITree]:
        owned = self.key_pages
        root = f"{owned.prefix}g{key_text(group)}{SEPARATOR}"
        return [PagedRPAITree(owned.pages, f"{root}{component}", owned.allocate) for component in range(width)]


class PagedRpaiState:
    """One stage key's ``RpaiState`` in ``pages`` (module docstring). Call ``save`` after ``process``."""

    __slots__ = ("index", "uncorrelated", "key_pages")

    def __init__(self, stage: RpaiTreeStage, pages: PageStore, key: tuple) -> None:
        self.key_pages = owned = KeyPages(pages, key, lambda: [0, [], [[0, 0] for _ in stage.uncorrelated]])
        self.index = PagedPrefixIndexState(owned, owned.meta[1])
        self.uncorrelated: list[list] = owned.meta[2]

    def save(self, result: object = None) -> None:
        """Store the meta page (the groups now indexed, the subqueries' sums), or drop it when no row is
        left and every subquery's sum and count is 0: then every tree is empty and has no page.
        ``result``, what ``process`` returned, is this state itself."""
        self.key_pages.meta[1] = [(group, len(trees)) for group, trees in self.index.indexes.items()]
        self.key_pages.save(keep=bool(len(self.index.bound)) or any(map(any, self.uncorrelated)))
