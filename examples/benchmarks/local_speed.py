"""Issue 13's "Done when", measured: `ivm run --engine local` against hand-written loops and peers.

Every measurement runs in its own child process, one after the other, so each peak RSS belongs to
one run and the runs do not share the 2 cores; everything of one invocation runs side by side on the
same stream file. The numbers:

- **loop maintenance**: ``hand_loops.py`` (dicts keyed by the join keys) over the updates read into
  memory first; only the delta loop is timed.
- **ivm maintenance**: `ivm run --engine local`'s own maintenance time (validation and the stages,
  batch by batch), from ``--stats-json`` (``maintenance_seconds``) when `ivm run` has it, else
  parsed from the line it prints last.
- **ivm whole process**: wall time of the `ivm run` child from its start to its exit (interpreter
  start, reading the stream, maintenance, whatever else it does), measured here the same way as the
  peers'; peak RSS from ``--stats-json``, else from ``wait4`` (the child's ``ru_maxrss``).
- **peers** (``--peers``): ``flink_q3.py`` (Flink SQL, parallelism 1, in ``data/peers/flink``) and
  ``pathway_q3.py`` (Pathway, commits of 1 000 updates, in ``data/peers/pathway``), each timed as
  a whole child process on the same stream file as `ivm run` Q3 (peak RSS: the larger of ``wait4``'s
  and the one the script reports; Flink's JVM is not a waited-for child, ``flink_q3.py`` samples
  its process tree). Ratio = peer wall / ivm wall,
  which is the throughput ratio on the same stream (the peers count only the updates of the three
  tables Q3 reads in their own rates; the ratio does not depend on that).

Every child runs with Python's bytecode cached (``child_env``), as installed packages (the peers'
among them) have it.

updates/s everywhere is the stream's update count (all tables, as `ivm run` counts them) over the
time; with ``--repeat N`` each run is made N times and the median time (the largest RSS) is shown.
CPU seconds (user + system of the whole child, all threads; Flink's JVM as ``flink_q3.py`` samples
it; maintenance as `ivm run` (``time.thread_time`` around each batch's ``apply``) and the
loops (``time.process_time``) measure it) stand beside the
wall times: on a shared machine they are the ones a ratio can trust.

Modes (``--mode``), the ones the issue's "Done when" needs:

    # loops vs ivm on Q3, Q5, Q10 (+ peers on Q3), one stream:
    python examples/benchmarks/local_speed.py --stream data/streams/sf0.1-window --peers
    # (a) per-update cost at batch sizes 1, 50, 10 000 (Q3, SF 0.01):
    python examples/benchmarks/local_speed.py --mode batch-sizes --stream data/streams/sf0.01-window
    # (b) per-update time across scale factors (streams that do not exist are skipped):
    python examples/benchmarks/local_speed.py --mode scale \\
        --streams data/streams/sf0.01-window,data/streams/sf0.1-window,data/streams/sf1-window
    # (c) Q5: AJU's live-tuple plan vs `--join-tree theorem11` on a live-dimension stream:
    python examples/benchmarks/local_speed.py --mode join-trees --stream data/streams/sf0.1-live

The live-dimension stream is `ivm tpch stream --lambda 1` (``planner/workloads/lambda_streams.py``):
every table but orders and lineitem inserted first and never deleted, orders and lineitem in a FIFO
window of a fifth of them (λ ≈ 1.5 counted over all tables). On the window stream nation and region
leave too, so Q5's result is empty nearly throughout; that is why (c) uses this one:

    ivm tpch stream --sf 0.1 --lambda 1 --data data/streams/tpch-sf0.1 --out data/streams/sf0.1-live

Not a test: nothing here asserts timing; numbers go to RESULTS.md by hand with the machine and its
load (printed first).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
QUERY_FILES = {"q3": "q03.sql", "q5": "q05.sql", "q10": "q10.sql"}
# each peer in its own venv: the first of these that exists
FLINK_PYTHONS = (ROOT / "data" / "peers" / "flink" / "bin" / "python",)
PATHWAY_PYTHONS = (ROOT / "data" / "peers" / "pathway" / "bin" / "python",)
# the last line `ivm run` prints: "<n> updates (...) in <s> s (<rate> updates/s) with the local runner; result: <k> rows"
IVM_LINE = re.compile(r"^(\d+) updates .* in ([\d.]+) s \(.*; result: (\d+) rows")
# the peers' last line: "<n> updates of customer, orders, lineitem in <s> s (...) ... <rss> MiB"
PEER_LINE = re.compile(r"^(\d+) updates of .*? in ([\d.]+) s")
PEER_RSS = re.compile(r"(?:process tree \(sampled\)|peak RSS) ([\d,]+) MiB")
PEER_CPU = re.compile(r"CPU of the tree ([\d.]+) s")


@attrs.frozen
class Child:
    """What one child process printed, how long it ran (wall), its CPU seconds (user + system, all
    its threads) and its peak RSS (``wait4``)."""

    stdout: str
    wall_seconds: float
    peak_rss_mb: float
    cpu_seconds: float


class ChildFailed(Exception):
    """A measured child process exited with an error; the message has the end of its output."""


#: where children keep their bytecode (outside the checkout)
PYCACHE = Path(tempfile.gettempdir()) / "ivm-benchmark-pycache"


def child_env(root: Path | None = ROOT) -> dict[str, str]:
    """The environment of a measured child: ``root``'s code first on the path (None: as it is), and
    Python's bytecode cached. The peers run from installed packages, compiled at install time; this
    checkout is installed editable, so with ``PYTHONDONTWRITEBYTECODE`` set (as it is on the shared
    machine) every `ivm run` would compile its 450 modules first (0.3 s CPU), which no installed
    `ivm` does. The cache lives in a directory of its own, so the checkout stays clean."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
    if root is not None:
        env["PYTHONPATH"] = str(root)
    return env


def run_child(command: list[str], python_path: bool = True, root: Path = ROOT) -> Child:
    """Run ``command`` to its end in checkout ``root`` (its code first on the path); raise with its output if it fails."""
    env = child_env(root if python_path else None)
    with tempfile.TemporaryFile("w+") as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, cwd=root, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read()
    if process.returncode:
        raise ChildFailed(f"{' '.join(command)} failed ({process.returncode}):\n{text[-3000:]}")
    return Child(text, wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime)


@attrs.frozen
class Run:
    """One measured run: updates, maintenance and whole-process seconds (wall, then CPU), peak RSS,
    result size. On a loaded machine the CPU seconds are the ones to compare."""

    updates: int
    maintenance_seconds: float
    process_seconds: float
    peak_rss_mb: float
    result_rows: int | None
    maintenance_cpu_seconds: float
    process_cpu_seconds: float


def median_run(runs: list[Run]) -> Run:
    """Median times over repeats, largest RSS."""
    return Run(runs[0].updates, statistics.median(r.maintenance_seconds for r in runs),
               statistics.median(r.process_seconds for r in runs), max(r.peak_rss_mb for r in runs), runs[0].result_rows,
               statistics.median(r.maintenance_cpu_seconds for r in runs),
               statistics.median(r.process_cpu_seconds for r in runs))


def loop_run(query: str, stream: Path, streamed: bool = False) -> Run:
    child = run_child([sys.executable, str(HERE / "hand_loops.py"), "--stream", str(stream), "--query", query,
                       *(["--streamed"] if streamed else [])])
    stats = json.loads(child.stdout.strip().splitlines()[-1])
    return Run(stats["updates"], stats["maintenance_seconds"], child.wall_seconds, child.peak_rss_mb, stats["result_rows"],
               stats["maintenance_cpu_seconds"], child.cpu_seconds)


def stats_json_supported() -> bool:
    """Whether this checkout's `ivm run` writes ``--stats-json`` (else its printed line is parsed)."""
    help_text = run_child([sys.executable, "-m", "planner.cli", "run", "--help"]).stdout
    return "--stats-json" in help_text


def ivm_run(query: str, stream: Path, batch_size: int, stats_json: bool, extra: tuple[str, ...] = ()) -> Run:
    command = [sys.executable, "-m", "planner.cli", "run", "--engine", "local", "--query",
               str(ROOT / "examples" / "tpch" / QUERY_FILES[query]), "--stream", str(stream),
               "--batch-size", str(batch_size), *extra]
    with tempfile.TemporaryDirectory() as work:
        stats_path = Path(work) / "stats.json"
        child = run_child(command + (["--stats-json", str(stats_path)] if stats_json else []))
        if stats_json:
            stats = json.loads(stats_path.read_text())
            return Run(stats["updates"], stats["maintenance_seconds"], child.wall_seconds, stats["peak_rss_mb"],
                       stats["result_rows"], stats.get("maintenance_cpu_seconds", stats["maintenance_seconds"]),
                       child.cpu_seconds)
    last = child.stdout.strip().splitlines()[-1]
    match = IVM_LINE.match(last)
    if not match:
        raise SystemExit(f"cannot read `ivm run`'s last line: {last!r}")
    updates, seconds, rows = match.groups()
    return Run(int(updates), float(seconds), child.wall_seconds, child.peak_rss_mb, int(rows), float(seconds),
               child.cpu_seconds)


def peer_run(name: str, stream: Path) -> Run | str:
    """Run a peer benchmark script as a whole process; why not, if its venv is missing.

    ``maintenance_seconds`` holds the job's own time (from its start to its final result, what it
    prints), ``peak_rss_mb`` and ``process_cpu_seconds`` the larger of ``wait4``'s and what it reports
    (Flink's JVM is not a waited-for child, so ``flink_q3.py`` samples its process tree itself)."""
    pythons, script = {"flink": (FLINK_PYTHONS, "flink_q3.py"), "pathway": (PATHWAY_PYTHONS, "pathway_q3.py")}[name]
    python = next((python for python in pythons if python.exists()), None)
    if python is None:
        return f"{pythons[0]} missing"
    child = run_child([str(python), str(HERE / script), "--stream", str(stream)], python_path=False)
    summary = child.stdout.strip().splitlines()[-1]
    own = PEER_LINE.search(summary)
    reported_rss = PEER_RSS.search(summary)
    if not own:
        raise SystemExit(f"cannot read {script}'s last line: {summary!r}")
    rss = max(child.peak_rss_mb, float(reported_rss.group(1).replace(",", "")) if reported_rss else 0)
    rows = sum(1 for line in child.stdout.splitlines() if "\t" in line)
    reported_cpu = PEER_CPU.search(summary)
    cpu = max(child.cpu_seconds, float(reported_cpu.group(1)) if reported_cpu else 0)
    return Run(int(own.group(1)), float(own.group(2)), child.wall_seconds, rss, rows, float(own.group(2)), cpu)


def repeated(measure, repeat: int) -> Run:
    return median_run([measure() for _ in range(repeat)])


def rate(updates: int, seconds: float) -> str:
    return f"{updates / seconds:,.0f}" if seconds > 0 else "-"


def per_update_us(run: Run, seconds: float) -> float:
    return seconds / run.updates * 1e6


def table(header: list[str], rows: list[list]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def compare(args, stats_json: bool) -> None:
    rows, ivm_q3 = [], None
    for query in args.queries:
        loop = repeated(lambda q=query: loop_run(q, args.stream), args.repeat)
        ivm = repeated(lambda q=query: ivm_run(q, args.stream, args.batch_size, stats_json), args.repeat)
        if query == "q3":
            ivm_q3 = ivm
        rows.append([query.upper(), f"{ivm.updates:,}", rate(loop.updates, loop.maintenance_seconds),
                     rate(ivm.updates, ivm.maintenance_seconds), rate(ivm.updates, ivm.process_seconds),
                     f"{ivm.peak_rss_mb:,.0f}", ivm.result_rows,
                     f"{loop.maintenance_seconds / ivm.maintenance_seconds:.2f}",
                     f"{loop.maintenance_cpu_seconds / ivm.maintenance_cpu_seconds:.2f}"])
    print(table(["query", "updates", "loop maintenance upd/s", "ivm maintenance upd/s", "ivm whole process upd/s",
                 "ivm peak RSS MB", "result rows", "ivm maintenance / loop", "same, CPU seconds"], rows), flush=True)
    if args.peers:
        if ivm_q3 is None:
            ivm_q3 = repeated(lambda: ivm_run("q3", args.stream, args.batch_size, stats_json), args.repeat)
        peer_rows = [["ivm run (local)", f"{ivm_q3.process_seconds:.1f}", f"{ivm_q3.process_cpu_seconds:.1f}",
                      rate(ivm_q3.updates, ivm_q3.process_seconds), f"{ivm_q3.peak_rss_mb:,.0f}", "1", "1", ""]]
        for name in ("flink", "pathway"):
            runs = [peer_run(name, args.stream) for _ in range(args.repeat)]
            if isinstance(runs[0], str):
                peer_rows.append([name, "skipped: " + runs[0], "", "", "", "", "", ""])
                continue
            peer = median_run(runs)
            peer_rows.append([name, f"{peer.process_seconds:.1f}", f"{peer.process_cpu_seconds:.1f}",
                              rate(ivm_q3.updates, peer.process_seconds), f"{peer.peak_rss_mb:,.0f}",
                              f"{peer.process_seconds / ivm_q3.process_seconds:.2f}",
                              f"{peer.process_cpu_seconds / ivm_q3.process_cpu_seconds:.2f}",
                              f"{peer.maintenance_seconds:.1f} s, {rate(peer.updates, peer.maintenance_seconds)} upd/s "
                              f"of its {peer.updates:,}"])
        print(f"\nQ3, whole process on {args.stream} (updates/s: the stream's {ivm_q3.updates:,} updates over the wall time)")
        print(table(["run", "wall s", "CPU s", "upd/s", "peak RSS MB", "ivm speed / peer's (wall)",
                     "ivm / peer (CPU)", "peer's own report"], peer_rows))


def batch_sizes(args, stats_json: bool) -> None:
    sizes = [int(size) for size in args.batch_sizes.split(",")]
    for query in args.queries:
        loop = repeated(lambda q=query: loop_run(q, args.stream), args.repeat)
        runs = {size: repeated(lambda q=query, s=size: ivm_run(q, args.stream, s, stats_json), args.repeat)
                for size in sizes}
        # CPU, as the other modes: `ivm run`'s maintenance_cpu_seconds leaves out its per-batch reads of
        # the CPU clock (a system call pair, 0.6 µs), which its wall maintenance_seconds hold
        largest = runs[max(sizes)]
        base = per_update_us(largest, largest.maintenance_cpu_seconds)
        rows = [[f"{size:,}", f"{per_update_us(run, run.maintenance_cpu_seconds):.2f}",
                 f"{per_update_us(run, run.maintenance_cpu_seconds) / base:.2f}",
                 f"{per_update_us(run, run.maintenance_seconds):.2f}",
                 f"{loop.maintenance_cpu_seconds / run.maintenance_cpu_seconds:.2f}"] for size, run in runs.items()]
        print(f"{query.upper()} on {args.stream}: {largest.updates:,} updates; "
              f"the loop {per_update_us(loop, loop.maintenance_cpu_seconds):.2f} µs/update (CPU)")
        print(table(["batch size", "ivm maintenance µs/update (CPU)", f"vs batch {max(sizes):,}",
                     "same, wall (with the clock reads)", "ivm maintenance / loop (CPU)"], rows), flush=True)


def failed(failure: ChildFailed) -> str:
    """A table cell for a run that failed: the last line of its output (MemoryError, ...)."""
    return "failed: " + str(failure).strip().splitlines()[-1][:60]


SCALE_HEADER = ["query", "stream", "updates", "loop µs/update (CPU)", "loop vs first", "ivm maintenance µs/update (CPU)",
                "ivm vs first", "ivm growth / loop growth", "ivm maintenance µs/update (wall)", "ivm whole µs/update (CPU)",
                "ivm peak RSS MB"]


def scale(args, stats_json: bool) -> None:
    """Per-update maintenance across stream sizes, ivm beside the loop (read batch by batch, so it fits
    at SF 1), in CPU seconds: on a shared machine the wall time of a long run swings with the load."""
    streams = [Path(stream) for stream in args.streams.split(",")]
    present = [stream for stream in streams if stream.is_dir()]
    for stream in streams:
        if stream not in present:
            print(f"skipped {stream}: missing")
    rows = []
    for query in args.queries:
        first_ivm = first_loop = None
        for stream in present:
            loop_us, loop_growth = None, ""
            try:
                if not args.no_loops:
                    loop = repeated(lambda q=query, s=stream: loop_run(q, s, streamed=True), args.repeat)
                    loop_us = per_update_us(loop, loop.maintenance_cpu_seconds)
                    first_loop = first_loop or loop_us
                    loop_growth = f"{loop_us / first_loop:.2f}"
            except ChildFailed as failure:
                loop_growth = failed(failure)
            try:
                ivm = repeated(lambda q=query, s=stream: ivm_run(q, s, args.batch_size, stats_json), args.repeat)
            except ChildFailed as failure:
                rows.append([query.upper(), stream.name, "", "", loop_growth, failed(failure), "", "", "", "", ""])
                print(f"| {' | '.join(rows[-1])} |", flush=True)
                continue
            maintenance = per_update_us(ivm, ivm.maintenance_cpu_seconds)
            first_ivm = first_ivm or maintenance
            growth = maintenance / first_ivm
            rows.append([query.upper(), stream.name, f"{ivm.updates:,}", "" if loop_us is None else f"{loop_us:.2f}",
                         loop_growth, f"{maintenance:.2f}", f"{growth:.2f}",
                         "" if loop_us is None else f"{growth / (loop_us / first_loop):.2f}",
                         f"{per_update_us(ivm, ivm.maintenance_seconds):.2f}",
                         f"{per_update_us(ivm, ivm.process_cpu_seconds):.2f}", f"{ivm.peak_rss_mb:,.0f}"])
            print(table(SCALE_HEADER, rows[-1:]).splitlines()[-1], flush=True)  # a long sweep shows each row as it comes
    print(table(SCALE_HEADER, rows))


def join_trees(args, stats_json: bool) -> None:
    loop = repeated(lambda: loop_run("q5", args.stream), args.repeat)
    plans = {"live tuples (default)": (), "theorem11": ("--join-tree", "theorem11")}
    runs = {label: repeated(lambda e=extra: ivm_run("q5", args.stream, args.batch_size, stats_json, e), args.repeat)
            for label, extra in plans.items()}
    live = runs["live tuples (default)"]
    rows = [[label, rate(run.updates, run.maintenance_seconds), rate(run.updates, run.process_seconds),
             f"{run.peak_rss_mb:,.0f}", run.result_rows, f"{run.maintenance_seconds / live.maintenance_seconds:.2f}",
             f"{loop.maintenance_seconds / run.maintenance_seconds:.2f}"] for label, run in runs.items()]
    print(f"Q5 on {args.stream}: {live.updates:,} updates, batches of {args.batch_size:,}; "
          f"the loop {rate(loop.updates, loop.maintenance_seconds)} upd/s")
    print(table(["plan", "maintenance upd/s", "whole process upd/s", "peak RSS MB", "result rows",
                 "live-tuple speed / this plan's", "maintenance / loop"], rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mode", choices=("compare", "batch-sizes", "scale", "join-trees"), default="compare")
    parser.add_argument("--queries", default=None, help="comma list of q3,q5,q10 (default: all; batch-sizes: q3)")
    parser.add_argument("--stream", type=Path, help="default: data/streams/sf0.01-window (join-trees: sf0.01-live)")
    parser.add_argument("--streams", default="data/streams/sf0.01-window,data/streams/sf0.1-window,"
                                             "data/streams/sf1-window", help="scale: comma list of streams")
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--batch-sizes", default="1,50,10000", help="batch-sizes: comma list")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement (median shown)")
    parser.add_argument("--peers", action="store_true", help="compare: also Flink SQL and Pathway on Q3")
    parser.add_argument("--no-loops", action="store_true", help="scale: measure ivm only")
    args = parser.parse_args()
    default_queries = "q3" if args.mode == "batch-sizes" else "q3,q5,q10"
    args.queries = (args.queries or default_queries).split(",")
    unknown = set(args.queries) - set(QUERY_FILES)
    if unknown:
        parser.error(f"unknown queries {sorted(unknown)}; choose from {', '.join(QUERY_FILES)}")
    args.stream = args.stream or Path("data/streams/sf0.01-live" if args.mode == "join-trees" else "data/streams/sf0.01-window")
    stats_json = stats_json_supported()
    with open("/proc/loadavg") as load:
        print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
              f"load average {' '.join(load.read().split()[:3])}; ivm stats from "
              f"{'--stats-json' if stats_json else 'its printed line (no --stats-json in this checkout)'}\n", flush=True)
    try:
        {"compare": compare, "batch-sizes": batch_sizes, "scale": scale, "join-trees": join_trees}[args.mode](args, stats_json)
    except ChildFailed as failure:
        raise SystemExit(str(failure)) from None


if __name__ == "__main__":
    main()
