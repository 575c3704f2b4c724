"""``ivm tpch gen``, ``ivm tpch stream`` and ``ivm iedyn stream``: the workloads' data and update streams."""

from __future__ import annotations

import argparse

from catalog.iedyn import TRANS, iedyn_catalog
from catalog.tpch import tpch_catalog
from operators.runtime.stream import write_stream
from planner.cli.common import DEFAULT_DATA, CommandLineError
from planner.workloads.enclosureness import StreamLifespanError, stream_enclosureness
from planner.workloads.iedyn_streams import ORDERS, make_iedyn_stream, make_trans_stream
from planner.workloads.lambda_streams import make_lambda_stream
from planner.workloads.tpch_streams import default_window, make_stream


def add_tpch(sub: argparse._SubParsersAction) -> None:
    tpch = sub.add_parser("tpch", help="TPC-H data and update streams").add_subparsers(dest="tpch_command", required=True)
    gen = tpch.add_parser("gen", help="generate TPC-H tables as Parquet")
    gen.add_argument("--sf", type=float, default=0.01)
    gen.add_argument("--out", help="directory (default data/tpch-sf<SF>)")
    gen.set_defaults(func=cmd_tpch_gen)
    stream = tpch.add_parser("stream", help="write an update stream (one Parquet file per table, _seq and _op)")
    stream.add_argument("--sf", type=float, default=0.01)
    stream.add_argument("--kind", choices=("window", "insert", "random"), default="window")
    stream.add_argument("--window", type=int, help="window size in lineitem tuples (default: a tenth of lineitem)")
    stream.add_argument("--seed", type=int, default=0)
    stream.add_argument("--lambda", dest="target_lambda", type=float,
                        help="generate a stream with this enclosureness λ instead of --kind (AJU §1, §6)")
    stream.add_argument("--data", help="TPC-H data directory (generated if missing)")
    stream.add_argument("--out", required=True, help="stream directory to write")
    stream.set_defaults(func=cmd_tpch_stream)


def add_iedyn(sub: argparse._SubParsersAction) -> None:
    iedyn = sub.add_parser("iedyn", help="IEDyn's workload streams (examples/iedyn)").add_subparsers(
        dest="iedyn_command", required=True)
    stream = iedyn.add_parser("stream", help="write an IEDyn §6 stream, with deletes (Parquet, _seq and _op)")
    stream.add_argument("--size", type=int, required=True, help="inserts, split evenly over the relations")
    stream.add_argument("--relations", default="r,s,t", help="'r,s,t', 'r,s' (Q1, Q2) or 'trans' (fraud)")
    stream.add_argument("--order", choices=ORDERS, default="random")
    stream.add_argument("--delete-fraction", type=float, default=0.0, help="chance an event deletes a present row")
    stream.add_argument("--key-domain", type=int, default=200, help="k uniform in 1..this (IEDyn: 200)")
    stream.add_argument("--seed", type=int, default=0)
    stream.add_argument("--out", required=True, help="stream directory to write")
    stream.set_defaults(func=cmd_iedyn_stream)


def cmd_tpch_gen(args) -> int:
    from planner.workloads.tpch_data import generate_tpch

    out = generate_tpch(args.sf, args.out or DEFAULT_DATA / f"tpch-sf{args.sf}")
    print(f"TPC-H SF {args.sf} written to {out}")
    return 0


def cmd_tpch_stream(args) -> int:
    from planner.workloads.tpch_data import generate_tpch, load_tables

    catalog = tpch_catalog()
    data = generate_tpch(args.sf, args.data or DEFAULT_DATA / f"tpch-sf{args.sf}")
    tables = load_tables(data, catalog)
    window = None
    if args.target_lambda is not None:
        updates = make_lambda_stream(tables, catalog, args.target_lambda, seed=args.seed)
        kind = f"λ-target {args.target_lambda}"
    else:
        window = args.window or default_window(len(tables["lineitem"])) if args.kind == "window" else None
        updates = make_stream(tables, catalog, args.kind, window, args.seed)
        kind = args.kind
    out = write_stream(args.out, catalog, updates)
    inserts = sum(1 for u in updates if u.op > 0)
    print(f"{kind} stream: {len(updates)} updates ({inserts} inserts, {len(updates) - inserts} deletes)"
          + (f", window {window} lineitem tuples" if window else "")
          + f", enclosureness λ = {enclosureness_text(updates, catalog)}, written to {out}")
    return 0


def cmd_iedyn_stream(args) -> int:
    try:  # the generators name the bad setting
        if args.relations == TRANS:
            updates = make_trans_stream(args.size, args.order, args.delete_fraction, args.seed)
        else:
            updates = make_iedyn_stream(args.size, tuple(args.relations.split(",")), args.order, args.delete_fraction,
                                        args.seed, key_domain=args.key_domain)
    except ValueError as error:
        raise CommandLineError(str(error)) from None
    out = write_stream(args.out, iedyn_catalog(), updates)
    inserts = sum(1 for u in updates if u.op > 0)
    print(f"IEDyn {args.order} stream of {args.relations}: {len(updates)} updates ({inserts} inserts, "
          f"{len(updates) - inserts} deletes), written to {out}; run it with --catalog examples/iedyn/schema.sql")
    return 0


def enclosureness_text(updates, catalog) -> str:
    """λ of the stream (AJU §1), or why it is undefined (invalid updates have no lifespan)."""
    try:
        return f"{stream_enclosureness(updates, catalog):.3f}"
    except StreamLifespanError:
        return "undefined (the stream has invalid updates)"
