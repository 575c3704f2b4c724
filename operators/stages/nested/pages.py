"""The RPAI trees of the constant-keyed nested-aggregate stages in pages, so a Spark batch reads and
writes O(|Δ| log_B n) pages, not the state.

``RpaiTreeStage.process`` (VWAP, MST, NQ1) reads its state through ``index`` (a ``PrefixIndexState``:
the tree of the correlated column's values and, per group, the trees keyed by q) and
``uncorrelated`` (per uncorrelated subquery its ``[Σ, count]``) only; ``PerKeyIndexStage.process``
under a global threshold (PSP, TPC-H Q22: keyed by a constant) through ``inner`` (q's Σ and count)
and ``trees`` (per group the trees keyed by v). ``PagedRpaiState`` and ``PagedKeyIndexState`` give
them the same fields over a ``page_store.PageStore``: every tree a ``PagedRPAITree`` (a B-tree of
pages with page-relative keys), the groups and the small sums in the key's meta page. The algorithms
(RPAI Figure 2c, ``PrefixAggregateIndex.apply``; the per-key range sums) stay the stages': this module
only decides where the state lives. A batch then touches, per change, one root path of pages in each
tree it changes (the RPAI stage shifts every group's trees: O(groups · log_B n) pages), and its
output reads one range sum per tree.

Nothing is cached between batches: a paged state is built per batch over that batch's ``PageStore``.
"""

from __future__ import annotations

from operators.stages.nested.per_key_index import PerKeyIndexStage
from operators.stages.nested.rpai_tree import RpaiTreeStage
from operators.structures.page_store import SEPARATOR, KeyPages, PageStore
from operators.structures.paged_rpai_tree import PagedRPAITree
from operators.zset import key_text


class PagedGroupTrees:
    """The trees of a key's groups in its pages, each group's named by the group's text (their root
    pages need no directory beyond the meta page, which lists the groups and their widths)."""

    __slots__ = ("key_pages",)

    def __init__(self, key_pages: KeyPages) -> None:
        self.key_pages = key_pages

    def new_trees(self, group: tuple, width: int) -> list[PagedRPAITree]:
        owned = self.key_pages
        root = f"{owned.prefix}g{key_text(group)}{SEPARATOR}"
        return [PagedRPAITree(owned.pages, f"{root}{component}", owned.allocate) for component in range(width)]

    def by_group(self, groups: list[tuple[tuple, int]]) -> dict[tuple, list[PagedRPAITree]]:
        """The trees of ``groups`` (as ``listed`` wrote them)."""
        return {group: self.new_trees(group, width) for group, width in groups}

    @staticmethod
    def listed(trees: dict[tuple, list]) -> list[tuple[tuple, int]]:
        return [(group, len(group_trees)) for group, group_trees in trees.items()]


class PagedPrefixIndexState(PagedGroupTrees):
    """A ``PrefixIndexState`` in a key's pages: ``bound`` and ``indexes`` as the stage reads them."""

    __slots__ = ("bound", "indexes")

    def __init__(self, key_pages: KeyPages, groups: list[tuple[tuple, int]]) -> None:
        super().__init__(key_pages)
        self.bound = PagedRPAITree(key_pages.pages, key_pages.prefix + "b", key_pages.allocate)
        self.indexes = self.by_group(groups)


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
        self.key_pages.meta[1] = self.index.listed(self.index.indexes)
        self.key_pages.save(keep=bool(len(self.index.bound)) or any(map(any, self.uncorrelated)))


class PagedKeyIndexState(PagedGroupTrees):
    """A ``PerKeyIndexStage``'s ``KeyIndexState`` in ``pages``, for the stage under a global threshold
    (keyed by a constant: PSP, TPC-H Q22): ``inner`` (q's Σ and count) and the groups in the meta
    page, each group's trees keyed by v in pages. Call ``save`` with what ``process`` returned."""

    __slots__ = ("inner", "trees")

    def __init__(self, stage: PerKeyIndexStage, pages: PageStore, key: tuple) -> None:
        super().__init__(KeyPages(pages, key, lambda: [0, [], [0, 0]]))
        _, groups, self.inner = self.key_pages.meta
        self.trees = self.by_group(groups)

    def save(self, result: object) -> None:
        """Store the meta page, or drop it when ``process`` returned None (no tree and no inner row left)."""
        self.key_pages.meta[1] = self.listed(self.trees)
        self.key_pages.save(keep=result is not None)
