"""What the page's inputs name, made real: a catalog and an update stream.

The page sends plain JSON; this module turns it into a ``Catalog`` and a list of updates with the
same generators the CLI uses (``ivm tpch stream``, the order-book workloads, a stream directory),
so a run on the page is a run the CLI could repeat.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import attrs

from catalog.ddl import catalog_from_ddl
from catalog.orderbook import orderbook_catalog
from catalog.schema import Catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import Update, UpdateBatch, read_stream_contents
from operators.runtime.validate import Rejected
from planner.demo import showcase_window
from planner.workloads.lambda_streams import make_lambda_stream
from planner.workloads.orderbook_streams import make_orderbook_stream, make_r_stream
from planner.workloads.tpch_data import generate_tpch, load_tables
from planner.workloads.tpch_streams import make_stream

CATALOGS = ("tpch", "orderbook", "ddl")
#: stream kinds: TPC-H generators, the RPAI order book (bids and asks) and Example 2.1's r, a directory
STREAM_KINDS = ("window", "insert", "random", "lambda", "orderbook", "r", "path")
TPCH_KINDS = ("window", "insert", "random", "lambda")


class InputError(ValueError):
    """An input on the page the server cannot use; the message names the input."""


def make_catalog(choice: str, ddl: str = "") -> Catalog:
    """The built-in TPC-H catalog, the order book's, or the catalog of pasted ``CREATE TABLE`` DDL."""
    if choice == "tpch":
        return tpch_catalog()
    if choice == "orderbook":
        return orderbook_catalog()
    if choice == "ddl":
        if not ddl.strip():
            raise InputError("catalog: 'pasted DDL' needs CREATE TABLE statements")
        return catalog_from_ddl(ddl)
    raise InputError(f"catalog: unknown choice {choice!r} (choices: {', '.join(CATALOGS)})")


@attrs.frozen
class StreamChoice:
    """The stream inputs: ``kind`` and the knobs that kind reads (the others are ignored)."""

    kind: str = "window"
    sf: float = 0.01
    target_lambda: float = 2.0
    window: int | None = None  # lineitem tuples in the sliding window (None: a third of lineitem, ``showcase_window``)
    events: int = 20_000  # order book and r: updates generated
    path: str = ""
    seed: int = 0

    @classmethod
    def from_json(cls, data: Mapping) -> StreamChoice:
        try:
            window = data.get("window") or None
            choice = cls(kind=str(data.get("kind", "window")), sf=float(data.get("sf", 0.01)),
                         target_lambda=float(data.get("lambda", 2.0)), window=None if window is None else int(window),
                         events=int(data.get("events", 20_000)),
                         path=str(data.get("path", "")), seed=int(data.get("seed", 0)))
        except (TypeError, ValueError) as err:
            raise InputError(f"stream: {err}") from err
        if choice.kind not in STREAM_KINDS:
            raise InputError(f"stream: unknown kind {choice.kind!r} (kinds: {', '.join(STREAM_KINDS)})")
        if choice.kind in TPCH_KINDS and choice.sf <= 0:
            raise InputError(f"stream: the scale factor must be positive, got {choice.sf}")
        if choice.window is not None and choice.window < 1:
            raise InputError(f"stream: the window must hold at least one lineitem tuple, got {choice.window}")
        if choice.kind in ("orderbook", "r") and choice.events < 1:
            raise InputError(f"stream: at least one event, got {choice.events}")
        return choice

    def describe(self) -> str:
        if self.kind in TPCH_KINDS:
            what = {"lambda": f"λ-target {self.target_lambda}",
                    "window": f"window ({self.window or 'a third of lineitem'} lineitem tuples)"}.get(self.kind, self.kind)
            return f"TPC-H SF {self.sf} {what} stream"
        if self.kind == "path":
            return f"stream directory {self.path}"
        return f"{self.events:,} updates of the {'order book' if self.kind == 'orderbook' else 'r'} stream"


@attrs.frozen
class Stream:
    """The updates in ``_seq`` order, and the rows of a directory that had no ``_seq`` (set aside)."""

    updates: UpdateBatch | tuple[Update, ...]
    without_seq: tuple[Rejected, ...] = ()


def make_updates(choice: StreamChoice, catalog: Catalog, data_dir: Path) -> Stream:
    """The stream ``choice`` names over ``catalog``; TPC-H data is generated into ``data_dir`` once."""
    if choice.kind in TPCH_KINDS:
        _require_tables(catalog, ("lineitem", "orders", "customer"), "a TPC-H stream")
        tables = load_tables(generate_tpch(choice.sf, data_dir / f"tpch-sf{choice.sf}"), catalog)
        if choice.kind == "lambda":
            return Stream(make_lambda_stream(tables, catalog, choice.target_lambda, seed=choice.seed))
        window = (choice.window or showcase_window(len(tables["lineitem"]))) if choice.kind == "window" else None
        return Stream(make_stream(tables, catalog, choice.kind, window, choice.seed))
    if choice.kind == "orderbook":
        _require_tables(catalog, ("bids", "asks"), "the order-book stream")
        return Stream(make_orderbook_stream(choice.events // 2, choice.events - choice.events // 2, seed=choice.seed))
    if choice.kind == "r":
        _require_tables(catalog, ("r",), "the r stream")
        return Stream(make_r_stream(choice.events, seed=choice.seed))
    if not choice.path or not Path(choice.path).exists():
        raise InputError(f"stream: directory {choice.path!r} does not exist")
    contents = read_stream_contents(choice.path, catalog)
    return Stream(contents.updates, tuple(Rejected(u, u.defect) for u in contents.without_seq))


def _require_tables(catalog: Catalog, names: tuple[str, ...], what: str) -> None:
    missing = [name for name in names if name not in catalog.tables]
    if missing:
        raise InputError(f"stream: {what} writes tables {', '.join(missing)}, which the catalog does not have")
