"""Pages: state kept as many small pickled entries of a key-value backend, read and written per batch.

A structure that must not be (un)pickled whole every batch (a GJT's T-representation on Spark, where
a stage keyed by a constant holds everything under one key) keeps its parts as *pages*: each a small
Python value (a B-tree node, one reduct row) under a string id in a ``PageBackend`` (on Spark, a
MapState; in tests and benchmarks, ``DictBackend``). A ``PageStore`` is one batch's view of a
backend: a page is unpickled the first time the batch reads it and cached, changes are made to the
cached value in place (``touch``) or by ``put``, and ``flush`` writes back only the pages the batch
changed. The cache lives for one batch only, so nothing is trusted across batches: after a restart
from a checkpoint the backend is all there is. The store counts pages and bytes read and written,
which is what the per-batch bound (O(|Δ| log n) pages) is tested and measured by.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from typing import Any, Protocol

from operators.zset import key_text

PICKLE_PROTOCOL = pickle.HIGHEST_PROTOCOL
_ABSENT = object()
#: Separates a stage key's text from the rest of a page id (``repr`` never prints it raw).
SEPARATOR = "\x1f"


class PageBackend(Protocol):
    """Where pages live between batches: pickled bytes by page id."""

    def read(self, page: str) -> bytes | None: ...

    def write(self, page: str, data: bytes) -> None: ...

    def remove(self, page: str) -> None: ...

    def scan(self) -> Iterator[tuple[str, bytes]]: ...


class DictBackend:
    """A ``PageBackend`` in a dict: the backend of the unit tests and of the layout benchmark."""

    def __init__(self) -> None:
        self.pages: dict[str, bytes] = {}

    def read(self, page: str) -> bytes | None:
        return self.pages.get(page)

    def write(self, page: str, data: bytes) -> None:
        self.pages[page] = data

    def remove(self, page: str) -> None:
        self.pages.pop(page, None)

    def scan(self) -> Iterator[tuple[str, bytes]]:
        return iter(list(self.pages.items()))


class PageStore:
    """One batch's pages over ``backend`` (module docstring); ``flush`` ends the batch."""

    __slots__ = ("backend", "cache", "dirty", "pages_read", "pages_written", "bytes_read", "bytes_written")

    def __init__(self, backend: PageBackend) -> None:
        self.backend = backend
        self.cache: dict[str, Any] = {}
        self.dirty: set[str] = set()
        self.pages_read = self.pages_written = self.bytes_read = self.bytes_written = 0

    def get(self, page: str) -> Any:
        """The page's value, or None when it does not exist (an absent page is cached too)."""
        found = self.cache.get(page, _ABSENT)
        if found is _ABSENT:
            data = self.backend.read(page)
            self.pages_read += 1
            if data is None:
                found = None
            else:
                self.bytes_read += len(data)
                found = pickle.loads(data)
            self.cache[page] = found
        return found

    def put(self, page: str, value: Any) -> None:
        """Replace the page's value; None removes the page."""
        self.cache[page] = value
        self.dirty.add(page)

    def touch(self, page: str) -> None:
        """The cached value of ``page`` was changed in place: write it back at ``flush``."""
        self.dirty.add(page)

    def flush(self) -> None:
        """Write back the pages changed since the last flush (removing those set to None)."""
        for page in self.dirty:
            value = self.cache[page]
            if value is None:
                self.backend.remove(page)
            else:
                data = pickle.dumps(value, PICKLE_PROTOCOL)
                self.backend.write(page, data)
                self.bytes_written += len(data)
            self.pages_written += 1
        self.dirty.clear()

    def scan(self, prefix: str) -> Iterator[tuple[str, Any]]:
        """Every page whose id starts with ``prefix``, as this batch sees it: O(all pages of the
        backend), for reading a whole structure (a pull-mode enumeration), never on a batch's path."""
        seen = set()
        for page, data in self.backend.scan():
            if page.startswith(prefix):
                seen.add(page)
                value = self.cache.get(page, _ABSENT)
                if value is _ABSENT:  # unpickled from the scan itself: no second read during it
                    self.pages_read += 1
                    self.bytes_read += len(data)
                    value = pickle.loads(data)
                if value is not None:
                    yield page, value
        for page, value in list(self.cache.items()):
            if page.startswith(prefix) and page not in seen and value is not None:
                yield page, value


class PagedWeights:
    """A dict row → weight (a GJT reduct ρ_n) with one page per row, ``prefix`` + the row's canonical
    text → (row, weight): a batch reads and writes the pages of the rows it changes. Its size is
    ``sizes[slot]``, in a list its owner keeps in a page of its own (emptiness without a scan)."""

    __slots__ = ("pages", "prefix", "sizes", "slot")

    def __init__(self, pages: PageStore, prefix: str, sizes: list[int], slot: int) -> None:
        self.pages, self.prefix, self.sizes, self.slot = pages, prefix, sizes, slot

    def get(self, row: tuple, default: Any = None) -> Any:
        page = self.pages.get(self.prefix + key_text(row))
        return default if page is None else page[1]

    def __setitem__(self, row: tuple, weight: Any) -> None:
        page = self.prefix + key_text(row)
        if self.pages.get(page) is None:
            self.sizes[self.slot] += 1
        self.pages.put(page, (row, weight))

    def __delitem__(self, row: tuple) -> None:
        page = self.prefix + key_text(row)
        if self.pages.get(page) is None:
            raise KeyError(row)
        self.pages.put(page, None)
        self.sizes[self.slot] -= 1

    def __len__(self) -> int:
        return self.sizes[self.slot]

    def items(self) -> Iterator[tuple[tuple, Any]]:
        """Every row and weight: a scan of the backend (pull mode), not for a batch's path."""
        return (entry for _, entry in self.pages.scan(self.prefix))


class KeyPages:
    """The pages of one stage key in a ``PageStore``: every id starts with the key's canonical text (so
    the keys of a Spark bucket share one MapState without colliding), and a meta page holds a list
    whose first item numbers the pages ``allocate`` gave out (never reused while the key has state);
    the owner keeps its own small fields after it (``fresh`` makes the list of a new key)."""

    __slots__ = ("pages", "prefix", "meta")

    def __init__(self, pages: PageStore, key: tuple, fresh: Callable[[], list]) -> None:
        self.pages, self.prefix = pages, key_text(key) + SEPARATOR
        meta = pages.get(self.prefix + "m")
        self.meta: list = meta if meta is not None else fresh()

    def allocate(self) -> str:
        number = self.meta[0]
        self.meta[0] = number + 1
        return f"{self.prefix}p{number}"

    def save(self, keep: bool) -> None:
        """Store the meta page, or drop it when the key keeps nothing (``keep`` false: then it has no
        other page either, and its numbering starts again)."""
        self.pages.put(self.prefix + "m", self.meta if keep else None)
