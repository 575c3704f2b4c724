"""Under ``--regenerate-golden`` (tests/conftest.py): rewrite the ``after:`` blocks of the rule fixture files.

With the flag, each rewrite case records what its rule printed instead of comparing it; when the
session ends the recorded blocks replace the old ones in ``tests/rules/cases/*.txt``, so the change
a rule makes to the expected plans is reviewed as a diff of those files.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import REGENERATE_FLAG


class AfterBlockWriter:
    """Collects new ``after:`` bodies by file and line span, and writes them all at the end."""

    def __init__(self) -> None:
        self.replacements: dict[Path, dict[tuple[int, int], list[str]]] = defaultdict(dict)

    def replace(self, path: Path, span: tuple[int, int], body_lines: list[str]) -> None:
        """Replace lines ``span`` (0-based, end exclusive) of ``path`` with ``body_lines``."""
        self.replacements[path][span] = body_lines

    def write(self) -> None:
        for path, spans in self.replacements.items():
            lines = path.read_text().splitlines()
            # Bottom-up, so earlier spans keep their line numbers.
            for (start, end), body in sorted(spans.items(), reverse=True):
                lines[start:end] = body
            path.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="session")
def after_block_writer(request: pytest.FixtureRequest):
    """An ``AfterBlockWriter`` when the flag is given (written at session end), else None."""
    if not request.config.getoption(REGENERATE_FLAG):
        yield None
        return
    writer = AfterBlockWriter()
    yield writer
    writer.write()
