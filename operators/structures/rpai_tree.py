"""The RPAI tree: an ordered map from aggregate values to partial aggregates (RPAI paper, §3).

A correlated nested aggregate with an inequality (VWAP: ``SUM(b2.volume) WHERE b2.price <= b.price``)
gives every outer group a key that is itself an aggregate. One inserted or deleted tuple moves a
whole suffix of those keys by the same amount, and the query result is a prefix sum over them. The
RPAI tree answers both in O(log n): each node stores its key *relative to its parent* (the absolute
key is the sum along the root path), so moving the root of a subtree moves every key below it, and
each node stores the sum of the values in its subtree (§3.1), so a prefix sum touches one root path.
Balance comes from a left-leaning red-black tree (§3.2.5, Sedgewick's 2-3 variant); rotations and
deletion re-express the relative keys of the few nodes whose parent changes.

Example 2.2 (VWAP) with three bids; ``rhs_sum`` keys the index, ``price * volume`` is the value:

>>> index = RPAITree()
>>> index.put(10, 100 * 10)     # price 100, volume 10: rhs_sum = 10
>>> index.put(15, 105 * 5)      # price 105, volume 5:  rhs_sum = 15
>>> index.put(35, 110 * 20)     # price 110, volume 20: rhs_sum = 35
>>> index.shift_keys(10, 4)     # a bid of volume 4 at price 102 raises every rhs_sum above 10
0
>>> index.put(14, 102 * 4)
>>> index.items()
[(10, 1000), (14, 408), (19, 525), (39, 2200)]
>>> index.total() - index.get_sum(0.75 * 39)  # bids in the final quartile of volume
2200
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from fractions import Fraction

Number = int | float | Fraction

_RED = True
_BLACK = False


class _Node:
    """One entry; ``key`` is relative to the parent's absolute key (to 0 at the root)."""

    __slots__ = ("key", "value", "subtree_sum", "red", "left", "right")

    def __init__(self, key: Number, value: Number) -> None:
        self.key = key
        self.value = value
        self.subtree_sum = value
        self.red = _RED
        self.left: _Node | None = None
        self.right: _Node | None = None


def _is_red(node: _Node | None) -> bool:
    return node is not None and node.red


def _sum(node: _Node | None) -> Number:
    return 0 if node is None else node.subtree_sum


def _rotate_left(h: _Node) -> _Node:
    x = h.right
    moved = x.key  # x's key relative to h
    h.right = x.left
    x.left = h
    x.key = h.key + moved
    h.key = -moved
    if h.right is not None:
        h.right.key += moved  # was relative to x, now relative to h
    x.red, h.red = h.red, _RED
    x.subtree_sum = h.subtree_sum
    h.subtree_sum = h.value + _sum(h.left) + _sum(h.right)
    return x


def _rotate_right(h: _Node) -> _Node:
    x = h.left
    moved = x.key
    h.left = x.right
    x.right = h
    x.key = h.key + moved
    h.key = -moved
    if h.left is not None:
        h.left.key += moved
    x.red, h.red = h.red, _RED
    x.subtree_sum = h.subtree_sum
    h.subtree_sum = h.value + _sum(h.left) + _sum(h.right)
    return x


def _flip_colors(h: _Node) -> None:
    h.red = not h.red
    h.left.red = not h.left.red
    h.right.red = not h.right.red


def _balance(h: _Node) -> _Node:
    """Restore the LLRB shape at ``h`` on the way up, and its subtree sum."""
    if _is_red(h.right) and not _is_red(h.left):
        h = _rotate_left(h)
    if _is_red(h.left) and _is_red(h.left.left):
        h = _rotate_right(h)
    if _is_red(h.left) and _is_red(h.right):
        _flip_colors(h)
    h.subtree_sum = h.value + _sum(h.left) + _sum(h.right)
    return h


def _move_red_left(h: _Node) -> _Node:
    _flip_colors(h)
    if _is_red(h.right.left):
        h.right = _rotate_right(h.right)
        h = _rotate_left(h)
        _flip_colors(h)
    return h


def _move_red_right(h: _Node) -> _Node:
    _flip_colors(h)
    if _is_red(h.left.left):
        h = _rotate_right(h)
        _flip_colors(h)
    return h


def _delete_min(h: _Node) -> _Node | None:
    if h.left is None:
        return None
    if not _is_red(h.left) and not _is_red(h.left.left):
        h = _move_red_left(h)
    h.left = _delete_min(h.left)
    return _balance(h)


class KeyShifts(ABC):
    """``shift_keys`` of an RPAI tree, shared by its two forms (``RPAITree`` here, in memory, and
    ``paged_rpai_tree.PagedRPAITree``, a B-tree of pages for the Spark runner): each supplies
    ``get``/``add``/``remove``, the neighbour searches and Algorithm 1's order-preserving shift, and
    this class puts them together as §3.2 does."""

    def shift_keys(self, key: Number, offset: Number) -> int:
        """Add ``offset`` to every key strictly greater than ``key`` (§3.2); equal keys then merge.

        The paper's semantics: ``shiftKeys(k, d)`` moves the keys ``> k`` (Figure 2c passes
        ``rhs_sum - volume`` to include ``rhs_sum`` itself; ``shift_keys_inclusive`` does that
        directly). Keys that land on an unshifted key are merged by summing their values, which is
        what the paper's re-insertion with ``add`` in ``fixTree`` does.

        An offset that keeps the shifted keys above every unshifted key only changes keys along one
        root path (Algorithm 1), O(log n). Otherwise, instead of Algorithm 2's bottom-up ``fixTree``
        (which detaches whole subtrees and would break the red-black balance), the shifted keys that
        would land at or below the largest unshifted key are removed first, the rest are shifted by
        Algorithm 1, and the removed ones are re-inserted with ``add``: O((m + 1) log n) for m such
        keys, O(n log n) at worst like the paper. For the monotone aggregates of §3.2.4 a deletion
        makes at most one shifted key meet its unshifted neighbour, so m ≤ 1 and the shift is
        O(log n): exactly the paper's "delete the duplicate node" special case.

        Returns m, the number of keys that had to be re-inserted.
        """
        return self._shift(key, offset, inclusive=False)

    def shift_keys_inclusive(self, key: Number, offset: Number) -> int:
        """Like ``shift_keys`` but for every key ≥ ``key`` (Algorithm 4's ``shiftKeysInclusive``)."""
        return self._shift(key, offset, inclusive=True)

    def _shift(self, key: Number, offset: Number, inclusive: bool) -> int:
        displaced: list[tuple[Number, Number]] = []
        if offset < 0:
            highest_unshifted = self._neighbour_below(key, inclusive=not inclusive)
            if highest_unshifted is not None:
                while (lowest := self._neighbour_above(key, inclusive)) is not None:
                    if lowest + offset > highest_unshifted:
                        break
                    displaced.append((lowest + offset, self.remove(lowest)))
        if offset != 0:
            self._shift_order_preserving(key, offset, inclusive)
        for new_key, value in displaced:
            self.add(new_key, value)
        return len(displaced)

    @abstractmethod
    def get(self, key: Number) -> Number:
        """The value at ``key``, 0 when absent."""

    @abstractmethod
    def add(self, key: Number, delta: Number) -> None:
        """Add ``delta`` at ``key`` (a sum of 0 drops the key)."""

    @abstractmethod
    def remove(self, key: Number) -> Number:
        """Delete ``key`` and return its value; ``KeyError`` when absent."""

    @abstractmethod
    def _neighbour_below(self, key: Number, inclusive: bool) -> Number | None:
        """The greatest key ≤ ``key`` (``inclusive``) or < ``key``."""

    @abstractmethod
    def _neighbour_above(self, key: Number, inclusive: bool) -> Number | None:
        """The least key ≥ ``key`` (``inclusive``) or > ``key``."""

    @abstractmethod
    def _shift_order_preserving(self, key: Number, offset: Number, inclusive: bool) -> None:
        """Algorithm 1: add ``offset`` to the keys > ``key`` (≥ if ``inclusive``); the caller
        guarantees no shifted key passes an unshifted one."""


class RPAITree(KeyShifts):
    """Relative partial aggregate index: a sorted map with O(log n) prefix sums and suffix key shifts.

    Absent keys read as 0 and a key whose value becomes 0 is dropped, like the paper's DBToaster-style
    maps: the tree only answers ``get``, ``get_sum`` and ``shift_keys``, and for all three an entry
    with value 0 is indistinguishable from no entry, so dropping it keeps the state proportional to
    the live groups of a Z-set stream.

    Keys are exact for ``int`` and ``Fraction``. Float keys work but, being stored as differences,
    may come back off by a few ulps; callers that need exact float keys should scale them to ints.
    """

    def __init__(self) -> None:
        self._root: _Node | None = None
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def __contains__(self, key: Number) -> bool:
        return self._find(key) is not None

    def __repr__(self) -> str:
        return f"RPAITree({self.items()!r})"

    def get(self, key: Number) -> Number:
        """The value at ``key``, 0 when absent."""
        node = self._find(key)
        return 0 if node is None else node.value

    def total(self) -> Number:
        """The sum of all values (``getSum(inf)`` in Figure 2c)."""
        return _sum(self._root)

    def height(self) -> int:
        """Nodes on the longest root-to-leaf path (0 when empty); at most 2·log2(n+1) for an LLRB."""
        deepest = 0
        stack = [(self._root, 1)] if self._root is not None else []
        while stack:
            node, depth = stack.pop()
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (node.left, node.right) if child is not None)
        return deepest

    def items(self) -> list[tuple[Number, Number]]:
        """All ``(key, value)`` pairs with absolute keys, in increasing key order."""
        result = []
        stack: list[tuple[_Node, Number]] = []
        node, base = self._root, 0
        while stack or node is not None:
            while node is not None:
                stack.append((node, base + node.key))
                base += node.key
                node = node.left
            node, absolute = stack.pop()
            result.append((absolute, node.value))
            node, base = node.right, absolute
        return result

    def put(self, key: Number, value: Number) -> None:
        """Set the value at ``key``; a value of 0 removes the key."""
        if value == 0:
            if key in self:
                self.remove(key)
            return
        self._root = self._put(self._root, key, value)
        self._root.red = _BLACK

    def add(self, key: Number, delta: Number) -> None:
        """Add ``delta`` to the value at ``key``, creating it when absent (the paper's ``add``)."""
        if delta != 0:
            self.put(key, self.get(key) + delta)

    def remove(self, key: Number) -> Number:
        """Delete ``key`` and return its value; raises ``KeyError`` naming the key when absent."""
        node = self._find(key)
        if node is None:
            raise KeyError(f"RPAI tree has no key {key!r} to remove")
        value = node.value
        if not _is_red(self._root.left) and not _is_red(self._root.right):
            self._root.red = _RED
        self._root = self._delete(self._root, key)
        if self._root is not None:
            self._root.red = _BLACK
        self._count -= 1
        return value

    def get_sum(self, key: Number) -> Number:
        """The sum of the values whose keys are ≤ ``key`` (§3.1, Figure 3), in O(log n)."""
        total: Number = 0
        node, relative = self._root, key
        while node is not None:
            if relative < node.key:
                relative -= node.key
                node = node.left
            else:
                total += _sum(node.left) + node.value
                relative -= node.key
                node = node.right
        return total

    def check_invariants(self) -> None:
        """Raise ``AssertionError`` naming the node unless the tree is a valid RPAI tree.

        Checks strict BST order of the absolute keys derived from the relative ones, LLRB shape (black
        root, no red right link, no two reds in a row, equal black height on every path), subtree sums,
        no zero values, and the entry count.
        """
        if _is_red(self._root):
            raise AssertionError("RPAI tree root is red")
        count = self._check_subtree(self._root, 0, None, None)[1]
        if count != self._count:
            raise AssertionError(f"RPAI tree holds {count} nodes but counts {self._count}")

    def _check_subtree(
        self, node: _Node | None, base: Number, lower: Number | None, upper: Number | None
    ) -> tuple[int, int]:
        """Black height and node count of ``node``'s subtree; its keys must lie in (lower, upper)."""
        if node is None:
            return 0, 0
        absolute = base + node.key
        where = f"RPAI tree node with key {absolute!r}"
        if (lower is not None and absolute <= lower) or (upper is not None and absolute >= upper):
            raise AssertionError(f"{where} is outside its BST range ({lower!r}, {upper!r})")
        if _is_red(node.right):
            raise AssertionError(f"{where} has a red right link")
        if node.red and _is_red(node.left):
            raise AssertionError(f"{where} is red with a red left child")
        if node.value == 0:
            raise AssertionError(f"{where} stores the value 0")
        if node.subtree_sum != node.value + _sum(node.left) + _sum(node.right):
            raise AssertionError(f"{where} has subtree sum {node.subtree_sum!r}, not the sum of its subtree")
        left_black, left_count = self._check_subtree(node.left, absolute, lower, absolute)
        right_black, right_count = self._check_subtree(node.right, absolute, absolute, upper)
        if left_black != right_black:
            raise AssertionError(f"{where} has black heights {left_black} (left) and {right_black} (right)")
        return left_black + (0 if node.red else 1), left_count + right_count + 1

    def _find(self, key: Number) -> _Node | None:
        node, relative = self._root, key
        while node is not None:
            if relative == node.key:
                return node
            next_node = node.left if relative < node.key else node.right
            relative -= node.key
            node = next_node
        return None

    def _put(self, h: _Node | None, key: Number, value: Number) -> _Node:
        """Insert or overwrite below ``h``; ``key`` is relative to ``h``'s parent."""
        if h is None:
            self._count += 1
            return _Node(key, value)
        if key < h.key:
            h.left = self._put(h.left, key - h.key, value)
        elif key > h.key:
            h.right = self._put(h.right, key - h.key, value)
        else:
            h.value = value
        return _balance(h)

    def _delete(self, h: _Node, key: Number) -> _Node | None:
        """Sedgewick's LLRB delete; ``key`` (present) is relative to ``h``'s parent."""
        if key < h.key:
            if not _is_red(h.left) and not _is_red(h.left.left):
                h = _move_red_left(h)
            h.left = self._delete(h.left, key - h.key)
        else:
            if _is_red(h.left):
                h = _rotate_right(h)
            if key == h.key and h.right is None:
                return None
            if not _is_red(h.right) and not _is_red(h.right.left):
                h = _move_red_right(h)
            if key == h.key:
                self._take_successor(h)
            else:
                h.right = self._delete(h.right, key - h.key)
        return _balance(h)

    @staticmethod
    def _take_successor(h: _Node) -> None:
        """Move the minimum entry of ``h.right`` into ``h`` and delete it from ``h.right``.

        ``h``'s key grows by the successor's distance; its children are re-expressed against the
        new key so that no other absolute key moves.
        """
        successor, distance = h.right, h.right.key
        while successor.left is not None:
            successor = successor.left
            distance += successor.key
        h.key += distance
        h.value = successor.value
        if h.left is not None:
            h.left.key -= distance
        h.right.key -= distance
        h.right = _delete_min(h.right)

    def _neighbour_below(self, key: Number, inclusive: bool) -> Number | None:
        """The greatest key ≤ ``key`` (``inclusive``) or < ``key``."""
        best = None
        node, base = self._root, 0
        while node is not None:
            absolute = base + node.key
            below = absolute <= key if inclusive else absolute < key
            if below:
                best = absolute
            node, base = (node.right if below else node.left), absolute
        return best

    def _neighbour_above(self, key: Number, inclusive: bool) -> Number | None:
        """The least key ≥ ``key`` (``inclusive``) or > ``key``."""
        best = None
        node, base = self._root, 0
        while node is not None:
            absolute = base + node.key
            above = absolute >= key if inclusive else absolute > key
            if above:
                best = absolute
            node, base = (node.left if above else node.right), absolute
        return best

    def _shift_order_preserving(self, key: Number, offset: Number, inclusive: bool) -> None:
        """Algorithm 1: move the qualifying keys by changing one relative key per level.

        A qualifying node moves with its whole right subtree by changing its own relative key; its
        left child is moved back by the same amount and the walk continues there. The caller
        guarantees that no shifted key passes an unshifted one.
        """
        node, relative = self._root, key
        while node is not None:
            if relative < node.key or (inclusive and relative == node.key):
                node.key += offset
                if node.left is not None:
                    node.left.key -= offset
                relative -= node.key
                node = node.left
            else:
                relative -= node.key
                node = node.right
