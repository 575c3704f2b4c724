"""The RPAI tree as a B-tree of pages, so a Spark batch reads and writes O(|Δ| log_B n) pages, not the tree.

``rpai_tree.RPAITree`` is an LLRB of Python objects: fast in one process, but on the Spark runner a
stage keyed by a constant (VWAP) keeps it under one key, and pickled whole it costs O(n) per batch;
stored one node per page, a root path would touch ~2·log₂ n pages. The RPAI paper notes (end of §3)
that its principles "would apply to B-trees as well", and this is that tree: B entries per page
(a ``page_store.PageStore`` page), keys relative to their page's base, depth log_B n.

- A leaf page ``[True, keys, values]``: keys ascending, relative to the leaf's base; values nonzero.
- An inner page ``[False, lows, bases, children, sums, counts]``: for child ``i``, its base relative
  to this page's base (``bases[i]``), its least key in this page's frame (``lows[i]``: exactly the
  least key, not a bound, so a shifted child's low is a real shifted key and routing stays right
  after a negative shift), its subtree's sum and number of keys. The root's base is 0.

Parent-relative keys (§3.2.1) at page granularity: shifting every key above k (Algorithm 1) adds the
offset to ``lows``/``bases`` of the children wholly above k in each page on one root path, and to the
keys above k in one leaf: O(log_B n) pages, O(B) additions each. ``get_sum`` (§3.1) adds whole
children's sums on the way down. An insert or delete updates sums, counts and lows on its path, an
overfull page splits in two (both halves keep the base, so no key is rewritten), an empty page leaves
its parent, and a page under a quarter full merges with a neighbour (its keys re-expressed in the
neighbour's base) or shares its entries with it. Negative shifts that make keys meet are
``KeyShifts``' (shared with the in-memory tree): the displaced keys are removed and added back.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Callable

from operators.structures.page_store import PageStore
from operators.structures.rpai_tree import KeyShifts, Number

#: A page as a list: a leaf [True, keys, values], an inner page [False, lows, bases, children, sums, counts].
Page = list


def _size(page: Page) -> int:
    return len(page[1])


def _summary(page: Page) -> tuple[Number, int]:
    """(sum of the values, number of keys) below ``page``."""
    return (sum(page[2]), len(page[1])) if page[0] else (sum(page[4]), sum(page[5]))


def _halves(page: Page) -> tuple[Page, Page]:
    """A page's entries as two pages of one base."""
    half = _size(page) // 2
    return [page[0], *(part[:half] for part in page[1:])], [page[0], *(part[half:] for part in page[1:])]


def _rebased(page: Page, offset: Number) -> list:
    """A page's entries expressed against a base ``offset`` lower (its keys, or its children's lows
    and bases, grow by ``offset``)."""
    if page[0]:
        return [[key + offset for key in page[1]], page[2]]
    return [[low + offset for low in page[1]], [base + offset for base in page[2]], *page[3:]]


def _child(lows: list, key: Number, inclusive: bool = True) -> int:
    """The last child whose least key is ≤ ``key`` (< if not ``inclusive``), or -1."""
    return (bisect_right(lows, key) if inclusive else bisect_left(lows, key)) - 1


class PagedRPAITree(KeyShifts):
    """An RPAI tree in pages (module docstring): ``RPAITree``'s interface over a ``PageStore``, its root
    page at id ``root``, its other pages at ids from ``allocate``."""

    #: Keys per leaf page and children per inner page (tests lower them to exercise splits and merges).
    LEAF_CAPACITY = 64
    FANOUT = 64

    __slots__ = ("pages", "root", "allocate")

    def __init__(self, pages: PageStore, root: str, allocate: Callable[[], str]) -> None:
        self.pages, self.root, self.allocate = pages, root, allocate

    def __len__(self) -> int:
        page = self.pages.get(self.root)
        return 0 if page is None else _summary(page)[1]

    def total(self) -> Number:
        page = self.pages.get(self.root)
        return 0 if page is None else _summary(page)[0]

    def get(self, key: Number) -> Number:
        pages, page = self.pages, self.pages.get(self.root)
        if page is None:
            return 0
        while not page[0]:
            i = max(_child(page[1], key), 0)
            key -= page[2][i]
            page = pages.get(page[3][i])
        j = bisect_left(page[1], key)
        return page[2][j] if j < len(page[1]) and page[1][j] == key else 0

    def get_sum(self, key: Number) -> Number:
        """The sum of the values whose keys are ≤ ``key``: O(log_B n) pages."""
        pages, page, total = self.pages, self.pages.get(self.root), 0
        if page is None:
            return 0
        while not page[0]:
            i = _child(page[1], key)
            if i < 0:
                return total
            if i:
                total = total + sum(page[4][:i])
            key -= page[2][i]
            page = pages.get(page[3][i])
        j = bisect_right(page[1], key)
        return total + sum(page[2][:j]) if j else total

    def items(self) -> list[tuple[Number, Number]]:
        """All ``(key, value)`` pairs with absolute keys, in increasing key order (reads every page)."""
        page = self.pages.get(self.root)
        return [] if page is None else self._items(page, 0)

    def _items(self, page: Page, base: Number) -> list[tuple[Number, Number]]:
        if page[0]:
            return [(base + key, value) for key, value in zip(page[1], page[2], strict=True)]
        return [item for child, offset in zip(page[3], page[2], strict=True)
                for item in self._items(self.pages.get(child), base + offset)]

    def put(self, key: Number, value: Number) -> None:
        """Set the value at ``key``; a value of 0 removes the key."""
        self.add(key, value - self.get(key))

    def remove(self, key: Number) -> Number:
        value = self.get(key)
        if value == 0:
            raise KeyError(f"RPAI tree has no key {key!r} to remove")
        self.add(key, -value)
        return value

    def add(self, key: Number, delta: Number) -> None:
        if delta == 0:
            return
        pages = self.pages
        page_id, page = self.root, pages.get(self.root)
        if page is None:
            pages.put(self.root, [True, [key], [delta]])
            return
        path: list[tuple[str, Page, int]] = []
        while not page[0]:
            i = max(_child(page[1], key), 0)
            path.append((page_id, page, i))
            key -= page[2][i]
            page_id = page[3][i]
            page = pages.get(page_id)
        keys, values = page[1], page[2]
        j = bisect_left(keys, key)
        if j < len(keys) and keys[j] == key:
            value = values[j] + delta
            if value == 0:
                del keys[j], values[j]
                counted = -1
            else:
                values[j], counted = value, 0
        else:
            keys.insert(j, key)
            values.insert(j, delta)
            counted = 1
        pages.touch(page_id)
        self._settle(path, page_id, page, delta, counted)

    def _capacity(self, page: Page) -> int:
        return self.LEAF_CAPACITY if page[0] else self.FANOUT

    def _settle(self, path: list[tuple[str, Page, int]], page_id: str, page: Page, delta: Number,
                counted: int) -> None:
        """From the changed leaf up: each parent's sum, count and low of the child on the path, and the
        child split, dropped or merged when its size left its bounds; then the root."""
        pages = self.pages
        while path:
            parent_id, parent, i = path.pop()
            parent[4][i] += delta
            parent[5][i] += counted
            size, capacity = _size(page), self._capacity(page)
            if size == 0:
                for part in parent[1:]:
                    del part[i]
                pages.put(page_id, None)
            else:
                parent[1][i] = parent[2][i] + page[1][0]  # its least key may have come or gone
                if size > capacity:
                    self._split(parent, i, page_id, page)
                elif 4 * size < capacity and len(parent[3]) > 1:
                    self._merge(parent, i)
            pages.touch(parent_id)
            page_id, page = parent_id, parent
        self._settle_root(page)

    def _settle_root(self, root: Page) -> None:
        pages = self.pages
        if _size(root) > self._capacity(root):  # the root's entries move down into two new pages
            moved = self.allocate()
            pages.put(moved, root)
            root = [False, [root[1][0]], [0], [moved], *([value] for value in _summary(root))]
            pages.put(self.root, root)
            self._split(root, 0, moved, pages.get(moved))
        elif _size(root) == 0:
            pages.put(self.root, None)
        while not root[0] and _size(root) == 1:  # one child: it becomes the root, its base 0
            child_id, offset = root[3][0], root[2][0]
            root = pages.get(child_id)
            root[1:] = _rebased(root, offset)
            pages.put(self.root, root)
            pages.put(child_id, None)

    def _split(self, parent: Page, i: int, page_id: str, page: Page) -> None:
        """Child ``i`` of ``parent`` (``page``, overfull) split in two; the high half gets a new page."""
        low, high = _halves(page)
        page[1:] = low[1:]
        self.pages.touch(page_id)
        new_id = self.allocate()
        self.pages.put(new_id, high)
        base = parent[2][i]
        for part, value in zip(parent[1:], (base + high[1][0], base, new_id, *_summary(high)), strict=True):
            part.insert(i + 1, value)
        parent[4][i], parent[5][i] = _summary(page)

    def _merge(self, parent: Page, i: int) -> None:
        """Child ``i`` of ``parent`` (under a quarter full) merged with a neighbour, or their entries
        shared evenly between the two when they do not fit one page."""
        pages = self.pages
        left_index = i if i + 1 < len(parent[3]) else i - 1
        right_index = left_index + 1
        left_id, right_id = parent[3][left_index], parent[3][right_index]
        left, right = pages.get(left_id), pages.get(right_id)
        in_left = _rebased(right, parent[2][right_index] - parent[2][left_index])
        merged = [left[0], *(a + b for a, b in zip(left[1:], in_left, strict=True))]
        pages.touch(left_id)
        if _size(merged) <= self._capacity(merged):
            left[1:] = merged[1:]
            pages.put(right_id, None)
            for part in parent[1:]:
                del part[right_index]
            parent[4][left_index], parent[5][left_index] = _summary(left)
            return
        low, high = _halves(merged)
        left[1:], right[1:] = low[1:], high[1:]
        pages.touch(right_id)
        parent[2][right_index] = parent[2][left_index]
        parent[1][right_index] = parent[2][left_index] + right[1][0]
        parent[4][left_index], parent[5][left_index] = _summary(left)
        parent[4][right_index], parent[5][right_index] = _summary(right)

    def _shift_order_preserving(self, key: Number, offset: Number, inclusive: bool) -> None:
        """Algorithm 1 at page granularity: in each page of one root path, the children wholly above
        ``key`` move by ``offset`` (their low and base in this page), then the walk goes on into the
        child holding ``key``; in the leaf, the keys above it move."""
        pages = self.pages
        page_id, page = self.root, pages.get(self.root)
        while page is not None:
            if page[0]:
                keys = page[1]
                start = bisect_left(keys, key) if inclusive else bisect_right(keys, key)
                for j in range(start, len(keys)):
                    keys[j] += offset
                if start < len(keys):
                    pages.touch(page_id)
                return
            lows, bases = page[1], page[2]
            i = _child(lows, key, inclusive=not inclusive)
            for j in range(i + 1, len(lows)):
                lows[j] += offset
                bases[j] += offset
            if i + 1 < len(lows):
                pages.touch(page_id)
            if i < 0:
                return
            key -= bases[i]
            page_id = page[3][i]
            page = pages.get(page_id)

    def _neighbour_above(self, key: Number, inclusive: bool) -> Number | None:
        pages, page = self.pages, self.pages.get(self.root)
        best, base = None, 0
        while page is not None and not page[0]:
            lows = page[1]
            i = _child(lows, key, inclusive=not inclusive)
            if i + 1 < len(lows):  # the next child's least key is the nearest one outside child i
                best = base + lows[i + 1]
            if i < 0:
                return best
            base, key = base + page[2][i], key - page[2][i]
            page = pages.get(page[3][i])
        if page is None:
            return None
        keys = page[1]
        j = bisect_left(keys, key) if inclusive else bisect_right(keys, key)
        return base + keys[j] if j < len(keys) else best

    def _neighbour_below(self, key: Number, inclusive: bool) -> Number | None:
        pages, page, base = self.pages, self.pages.get(self.root), 0
        while page is not None and not page[0]:
            i = _child(page[1], key, inclusive)
            if i < 0:
                return None
            base, key = base + page[2][i], key - page[2][i]
            page = pages.get(page[3][i])
        if page is None:
            return None
        j = _child(page[1], key, inclusive)
        return base + page[1][j] if j >= 0 else None

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` unless every page is in order: keys strictly ascending across pages,
        each low exactly its child's least key, sums and counts of the subtrees, no zero value, no
        empty page, and no overfull one."""
        page = self.pages.get(self.root)
        if page is not None:
            self._check(page, 0, None)

    def _check(self, page: Page, base: Number, low: Number | None) -> tuple[Number, int, Number]:
        """(sum, count, greatest absolute key) of ``page``'s subtree; its least key must be ``low``."""
        if not 0 < _size(page) <= self._capacity(page):
            raise AssertionError(f"RPAI page of {_size(page)} entries (capacity {self._capacity(page)})")
        if low is not None and base + page[1][0] != low:
            raise AssertionError(f"RPAI page's least key {base + page[1][0]!r} is not its parent's low {low!r}")
        if page[0]:
            if any(a >= b for a, b in zip(page[1], page[1][1:], strict=False)) or 0 in page[2]:
                raise AssertionError(f"RPAI leaf out of order or holding 0: {page!r}")
            return sum(page[2]), len(page[1]), base + page[1][-1]
        greatest = None
        for child_low, offset, child, total, count in zip(*page[1:], strict=True):
            found = self._check(self.pages.get(child), base + offset, base + child_low)
            if found[:2] != (total, count):
                raise AssertionError(f"RPAI page {child} holds {found[:2]!r}, its parent says {(total, count)!r}")
            if greatest is not None and base + child_low <= greatest:
                raise AssertionError(f"RPAI page {child} starts at {base + child_low!r}, not above {greatest!r}")
            greatest = found[2]
        return sum(page[4]), sum(page[5]), greatest
