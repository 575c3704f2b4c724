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
