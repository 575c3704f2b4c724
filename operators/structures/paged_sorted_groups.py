"""IEDyn's sorted groups (S_n, P_n) as B-trees of pages, so a batch reads and writes O(|Δ| log_B n) pages.

The treap of ``sorted_groups`` is the fastest form in one process, but its nodes are Python objects
linked at random: stored as pages, a root-to-leaf walk would touch a page per level of a depth-2·log₂ n
tree. A B-tree packs B entries per page instead: depth log_B n, and every page is one small pickled
value of a ``page_store.PageStore``. A group is one tree whose root page has a fixed id (prefix + the
group's canonical text), so no directory of groups is read; the other pages get ids from the
owner's ``allocate``.

- A leaf page ``[True, keys, rows, weights]``: distinct sort values ascending, each with its row (or a
  dict ``{row: weight}`` for several, as the treap's entries) and the entry's summed weight.
- An inner page ``[False, separators, children, totals]``: child ``i`` holds the keys in
  ``[separators[i-1], separators[i])`` and ``totals[i]`` is its subtree's summed weight, so a prefix
  sum (``below``) adds whole children's totals on the way down: O(log_B n) pages, O(B) additions each.
- ``rows`` walks from the leaf holding the interval's low end with a stack of inner pages: O(log_B n)
  pages to the first row, then one page per B rows it yields.
- ``add`` compares keys only on the way down (``bisect``), before changing anything, so a key that
  cannot be compared raises with the tree untouched (the stage's atomicity relies on it). Then the
  totals on the path are updated, an overfull page splits in two, an empty page leaves its parent,
  and a page under a quarter full merges with a neighbour (or shares its entries with it when both do
  not fit one page): pages stay at least a quarter full, so walks stay O(rows / B) pages.

Weights are ints or ring payloads (``ring_weight.RingWeight``), summed with ``sum`` from the int 0.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterator

from operators.structures.page_store import PageStore
from operators.structures.sorted_groups import UNBOUNDED, IntervalSums
from operators.zset import Row, key_text

#: A page as a list: [is leaf, keys or separators, rows or children, weights or totals].
Page = list


def _size(page: Page) -> int:
    return len(page[2])


def _concat(left: Page, separator, right: Page) -> Page:
    """Two neighbouring pages of one level as one (the parent's separator between them)."""
    if left[0]:
        return [True, left[1] + right[1], left[2] + right[2], left[3] + right[3]]
    return [False, left[1] + [separator] + right[1], left[2] + right[2], left[3] + right[3]]


def _halves(page: Page) -> tuple[Page, object, Page]:
    """An overfull page as two pages and the separator between them."""
    half = _size(page) // 2
    keys, items, weights = page[1], page[2], page[3]
    if page[0]:
        return [True, keys[:half], items[:half], weights[:half]], keys[half], [True, keys[half:], items[half:], weights[half:]]
    return ([False, keys[:half - 1], items[:half], weights[:half]], keys[half - 1],
            [False, keys[half:], items[half:], weights[half:]])


class PagedSortedGroup(IntervalSums):
    """One group as a B-tree of pages (module docstring); the interface of ``sorted_groups.SortedGroup``."""

    #: Entries per leaf page and children per inner page (tests lower them to exercise splits and merges).
    LEAF_CAPACITY = 64
    FANOUT = 64

    __slots__ = ("pages", "root", "allocate")

    def __init__(self, pages: PageStore, root: str, allocate: Callable[[], str]) -> None:
        self.pages, self.root, self.allocate = pages, root, allocate

    def __bool__(self) -> bool:
        return self.pages.get(self.root) is not None

    def total(self):
        page = self.pages.get(self.root)
        return 0 if page is None else sum(page[3])

    def end(self, last: bool):
        """The least sort value (the greatest when ``last``), or None when the group is empty: one page
        per level down the leftmost (rightmost) path."""
        pages = self.pages
        page = pages.get(self.root)
        if page is None:
            return None
        while not page[0]:
            page = pages.get(page[2][-1 if last else 0])
        return page[1][-1 if last else 0]

    def below(self, bound, inclusive: bool):
        """Summed weight of the rows with sort value < ``bound`` (<= if ``inclusive``): O(log_B n) pages."""
        pages, acc = self.pages, 0
        page = pages.get(self.root)
        if page is None:
            return 0
        while not page[0]:
            i = bisect_right(page[1], bound)
            if i:
                acc = acc + sum(page[3][:i])
            page = pages.get(page[2][i])
        j = bisect_right(page[1], bound) if inclusive else bisect_left(page[1], bound)
        return acc + sum(page[3][:j]) if j else acc

    def rows(self, low=UNBOUNDED, low_inclusive: bool = False, high=UNBOUNDED,
             high_inclusive: bool = False) -> Iterator[tuple[Row, object]]:
        """The rows with sort value inside the interval, ascending (module docstring)."""
        pages = self.pages
        page = pages.get(self.root)
        if page is None:
            return
        stack: list[tuple[Page, int]] = []  # inner pages on the way, with the next child to visit
        while not page[0]:
            i = 0 if low is UNBOUNDED else bisect_right(page[1], low)
            stack.append((page, i + 1))
            page = pages.get(page[2][i])
        if low is UNBOUNDED:
            start = 0
        else:
            start = bisect_left(page[1], low) if low_inclusive else bisect_right(page[1], low)
        while True:
            keys, items, weights = page[1], page[2], page[3]
            for k in range(start, len(keys)):
                if high is not UNBOUNDED and not (keys[k] < high or (high_inclusive and keys[k] == high)):
                    return
                entry = items[k]
                if type(entry) is dict:
                    yield from entry.items()
                else:
                    yield entry, weights[k]
            while stack:  # climb to the next unvisited child, then down its leftmost path
                parent, i = stack.pop()
                if i < len(parent[2]):
                    break
            else:
                return
            stack.append((parent, i + 1))
            page = pages.get(parent[2][i])
            while not page[0]:
                stack.append((page, 1))
                page = pages.get(page[2][0])
            start = 0

    def add(self, key, row: Row, weight) -> None:
        """``row`` with ``weight`` added under ``key``; an entry whose rows cancel is removed."""
        pages = self.pages
        page_id, page = self.root, pages.get(self.root)
        if page is None:
            pages.put(self.root, [True, [key], [row], [weight]])
            return
        path: list[tuple[str, Page, int]] = []
        while not page[0]:
            i = bisect_right(page[1], key)
            path.append((page_id, page, i))
            page_id = page[2][i]
            page = pages.get(page_id)
        keys, items, weights = page[1], page[2], page[3]
        j = bisect_left(keys, key)
        if j < len(keys) and keys[j] == key:
            entry, emptied = items[j], False
            if type(entry) is not dict:
                if entry != row:
                    items[j] = {entry: weights[j], row: weight}
                else:
                    emptied = not weights[j] + weight
            else:
                count = entry.pop(row, 0) + weight
                if count:
                    entry[row] = count
                else:
                    emptied = not entry
            if emptied:
                del keys[j], items[j], weights[j]
            else:
                weights[j] = weights[j] + weight
        else:
            keys.insert(j, key)
            items.insert(j, row)
            weights.insert(j, weight)
        pages.touch(page_id)
        for parent_id, parent, i in path:
            parent[3][i] = parent[3][i] + weight
            pages.touch(parent_id)
        self._rebalance(path, page_id, page)

    def _capacity(self, page: Page) -> int:
        return self.LEAF_CAPACITY if page[0] else self.FANOUT

    def _rebalance(self, path: list[tuple[str, Page, int]], page_id: str, page: Page) -> None:
        """Split, drop or merge pages from the changed leaf up, as long as a level changed shape."""
        pages = self.pages
        while path:
            parent_id, parent, i = path.pop()
            size, capacity = _size(page), self._capacity(page)
            if size > capacity:
                self._split(parent, i, page_id, page)
            elif size == 0:
                del parent[2][i], parent[3][i]
                if parent[1]:
                    del parent[1][max(i - 1, 0)]
                pages.put(page_id, None)
            elif 4 * size < capacity and len(parent[2]) > 1:
                self._merge(parent, i)
            else:
                return
            pages.touch(parent_id)
            page_id, page = parent_id, parent
        self._settle_root(page)

    def _settle_root(self, root: Page) -> None:
        pages = self.pages
        if _size(root) > self._capacity(root):  # the root's entries move down into two new pages
            moved = self.allocate()
            pages.put(moved, root)
            root = [False, [], [moved], [sum(root[3])]]
            pages.put(self.root, root)
            self._split(root, 0, moved, pages.get(moved))
        elif _size(root) == 0:
            pages.put(self.root, None)
        while not root[0] and _size(root) == 1:  # one child: it becomes the root
            child = root[2][0]
            root = pages.get(child)
            pages.put(self.root, root)
            pages.put(child, None)

    def _split(self, parent: Page, i: int, page_id: str, page: Page) -> None:
        """Child ``i`` of ``parent`` (``page``, overfull) split in two; the new half gets a new page."""
        low, separator, high = _halves(page)
        page[1:] = low[1:]
        new_id = self.allocate()
        self.pages.put(new_id, high)
        self.pages.touch(page_id)
        parent[1].insert(i, separator)
        parent[2].insert(i + 1, new_id)
        parent[3][i] = sum(page[3])
        parent[3].insert(i + 1, sum(high[3]))

    def _merge(self, parent: Page, i: int) -> None:
        """Child ``i`` of ``parent`` (under a quarter full) merged with a neighbour, or their entries
        shared evenly between the two when they do not fit one page."""
        pages = self.pages
        left_index = i if i + 1 < len(parent[2]) else i - 1
        left_id, right_id = parent[2][left_index], parent[2][left_index + 1]
        left, right = pages.get(left_id), pages.get(right_id)
        merged = _concat(left, parent[1][left_index], right)
        pages.touch(left_id)
        if _size(merged) <= self._capacity(merged):
            left[1:] = merged[1:]
            pages.put(right_id, None)
            del parent[1][left_index], parent[2][left_index + 1], parent[3][left_index + 1]
            parent[3][left_index] = sum(left[3])
            return
        low, separator, high = _halves(merged)
        left[1:], right[1:] = low[1:], high[1:]
        pages.touch(right_id)
        parent[1][left_index] = separator
        parent[3][left_index], parent[3][left_index + 1] = sum(left[3]), sum(right[3])


class PagedSortedGroups:
    """ρ_n grouped by the shared variables' values, each group a ``PagedSortedGroup`` whose root page
    is ``prefix`` + the group's canonical text; the interface of ``sorted_groups.SortedGroups``."""

    __slots__ = ("pages", "prefix", "allocate")

    def __init__(self, pages: PageStore, prefix: str, allocate: Callable[[], str]) -> None:
        self.pages, self.prefix, self.allocate = pages, prefix, allocate

    def _group(self, group: tuple) -> PagedSortedGroup:
        return PagedSortedGroup(self.pages, self.prefix + key_text(group), self.allocate)

    def add(self, group: tuple, key, row: Row, weight) -> None:
        self._group(group).add(key, row, weight)

    def get(self, group: tuple) -> PagedSortedGroup | None:
        found = self._group(group)
        return found if found else None
