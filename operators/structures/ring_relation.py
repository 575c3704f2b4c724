"""A relation with ring payloads: the state of one view (or one input atom) of a view tree.

``entries`` maps a key tuple to a non-zero payload; a payload that adds up to zero is dropped, so
absent and zero are the same and the size stays that of the support. ``indexes`` group the keys by
some of their positions (the variables a delta binds when it probes this relation, or the
ancestors a free variable is enumerated under), so a probe costs O(1 + matches), not a scan.
"""

from __future__ import annotations

from typing import Any


class RingRelation:
    __slots__ = ("entries", "indexes")

    def __init__(self, index_positions: tuple[tuple[int, ...], ...] = ()):
        self.entries: dict[tuple, Any] = {}
        #: positions → (values at those positions → set of full keys)
        self.indexes: dict[tuple[int, ...], dict[tuple, set[tuple]]] = {p: {} for p in index_positions}

    def __getstate__(self):
        return self.entries, self.indexes

    def __setstate__(self, state):
        self.entries, self.indexes = state

    def add(self, key: tuple, delta: Any, ring: Any) -> None:
        """Add a non-zero ``delta`` at ``key`` (a ring payload), keeping the indexes in step."""
        old = self.entries.get(key)
        if old is None:
            self.entries[key] = delta
            for positions, index in self.indexes.items():
                group = tuple(key[p] for p in positions)
                members = index.get(group)
                if members is None:
                    index[group] = {key}
                else:
                    members.add(key)
            return
        new = ring.add(old, delta)
        if not ring.is_zero(new):
            self.entries[key] = new
            return
        del self.entries[key]
        for positions, index in self.indexes.items():
            group = tuple(key[p] for p in positions)
            members = index[group]
            members.discard(key)
            if not members:
                del index[group]

    def matching(self, positions: tuple[int, ...], group: tuple) -> set[tuple] | frozenset[tuple]:
        """The keys whose values at ``positions`` are ``group`` (an index built for ``positions``)."""
        return self.indexes[positions].get(group, _NONE)


_NONE: frozenset[tuple] = frozenset()
