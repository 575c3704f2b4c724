"""What ``ivm run`` reports about itself: whole-process time, peak memory, and a progress bar.

The whole-process time counts from the start of the process (interpreter start and imports included,
as ``/usr/bin/time`` would), so a benchmark can compare it with peers that are timed from outside;
maintenance time is measured separately around ``MaintainedView.apply``.
"""

from __future__ import annotations

import os
import resource
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tqdm import tqdm


_IMPORTED = time.monotonic()


def process_seconds() -> float:
    """Seconds since this process started (Linux: from /proc; elsewhere: since this module's import)."""
    try:
        ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        uptime = float(Path("/proc/uptime").read_text().split()[0])
    except (OSError, IndexError, ValueError):
        return time.monotonic() - _IMPORTED
    return uptime - ticks / os.sysconf("SC_CLK_TCK")


def thread_clock_cost(pairs: int = 2001) -> float:
    """The CPU seconds that reading ``time.thread_time`` before and after an interval adds to it, the
    median over ``pairs`` empty intervals. Each read is a system call (no fast path for a thread's CPU
    clock: ~0.6 µs here, where ``perf_counter`` takes 0.05), so at batches of one change `ivm run`'s
    per-batch reads were a fifth of the maintenance CPU they measured; the run subtracts this per batch."""
    clock = time.thread_time
    intervals = []
    for _ in range(pairs):
        before = clock()
        intervals.append(clock() - before)
    intervals.sort()
    return intervals[pairs // 2]


def peak_rss_mb() -> float:
    """The peak resident set size of this process so far, in MiB (``ru_maxrss``: KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


class _NoProgress:
    """What ``progress_bar`` hands out when stderr is not a terminal: counts nothing, shows nothing."""

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def update(self, count: int) -> None:
        """Nothing to show."""


def progress_bar(total: int) -> tqdm | _NoProgress:
    """Updates done, rate and ETA on stderr when it is a terminal, shown only once a run has taken two
    seconds; nothing when stderr is not a terminal (a log or a pipe gets the final line only, and the
    run does not import tqdm, whose package loads its command line and GUI modules too)."""
    if not sys.stderr.isatty():
        return _NoProgress()
    from tqdm import tqdm

    return tqdm(total=total, unit=" updates", unit_scale=True, delay=2, file=sys.stderr, leave=False)
