"""README's code blocks run as written, in order, in a fresh directory, as a newcomer would run them.

A block is run by its language: ``python`` is executed as its own script (a fresh namespace, the
directory as working directory); every line of an ``sh`` block must be an ``ivm ...`` command, run
through the CLI's entry point (``planner.cli.main``) and expected to succeed. A comment just above
a block changes what is done with it:

- ``<!-- readme-test: file NAME -->``: the block is the content of the file NAME (a DDL or SQL file
  a later step reads);
- ``<!-- readme-test: output -->``: the block is the exact standard output of the block before it;
- ``<!-- readme-test: spark -->``: the block starts Spark; it runs in the ``spark``-marked test only;
- ``<!-- readme-test: skip (why) -->``: the block is not run (installing packages, a half-hour test run).

Any other block with a language is run, so a README example cannot stop working unnoticed. The
README also stays a front door (at most 200 lines) whose links all resolve inside the repository, and
no file of the repository points outside it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
from pathlib import Path

import attrs
import pytest

from planner.cli import main as ivm_main

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
MAX_LINES = 200

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.M | re.S)
_MARKER = re.compile(r"<!-- readme-test: (file|output|spark|skip)\b\s*(.*?)\s*-->")


@attrs.frozen
class Block:
    """One fenced code block of a Markdown file, with the test marker just above it, if any."""

    language: str
    text: str
    line: int  # 1-based line of the opening fence
    marker: str | None = None  # file | output | spark | skip
    argument: str = ""  # the file name of a ``file`` marker, the reason of a ``skip``


def blocks(markdown: str) -> list[Block]:
    """The fenced blocks of ``markdown`` in order, each with the marker on the non-blank line above it.

    >>> [b.marker for b in blocks("<!-- readme-test: skip (slow) -->\\n```sh\\nmake\\n```\\n\\n```sh\\nivm\\n```\\n")]
    ['skip', None]
    """
    found = []
    for match in _FENCE.finditer(markdown):
        before = markdown[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = _MARKER.fullmatch(before.strip())
        found.append(Block(match[1], match[2], markdown.count("\n", 0, match.start()) + 1,
                           marker[1] if marker else None, marker[2] if marker else ""))
    return found


def _commands(block: Block) -> list[list[str]]:
    """The ``ivm`` commands of an ``sh`` block as argument lists (comments dropped)."""
    commands = []
    for line in block.text.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        assert words[0] == "ivm", f"README line {block.line}: an sh block runs ivm commands only, got {line!r} " \
                                  "(mark the block <!-- readme-test: skip (why) --> if it cannot run in a test)"
        commands.append(words[1:])
    return commands


def _run_python(block: Block) -> str:
    """Execute a python block as a script of its own; its standard output."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.text, f"README.md:{block.line}", "exec"), {"__name__": "__main__"})
    return out.getvalue()


def _run_sh(block: Block) -> str:
    out = io.StringIO()
    for arguments in _commands(block):
        with contextlib.redirect_stdout(out):
            code = ivm_main(arguments)
        assert code == 0, f"README line {block.line}: `ivm {shlex.join(arguments)}` exited with {code}"
    return out.getvalue()


def run_blocks(markdown: str, directory: Path, with_spark: bool = False) -> list[Block]:
    """Run ``markdown``'s blocks in order in ``directory``; the blocks that ran (each raises on failure)."""
    ran: list[Block] = []
    previous_output: str | None = None
    cwd = os.getcwd()
    os.chdir(directory)
    try:
        for block in blocks(markdown):
            if block.marker == "file":
                (directory / block.argument).write_text(block.text)
                continue
            if block.marker == "output":
                assert previous_output is not None, f"README line {block.line}: an output block follows no run block"
                assert previous_output.strip() == block.text.strip(), f"README line {block.line}: printed output differs"
                continue
            if block.marker == "skip" or not block.language or (block.marker == "spark" and not with_spark):
                previous_output = None
                continue
            if block.language == "python":
                previous_output = _run_python(block)
            elif block.language == "sh":
                previous_output = _run_sh(block)
            else:
                raise AssertionError(f"README line {block.line}: a {block.language} block is neither run nor marked")
            ran.append(block)
    finally:
        os.chdir(cwd)
    return ran


def test_readme_blocks_run_as_written(tmp_path):
    ran = run_blocks(README.read_text(), tmp_path)
    commands = [words[0] for block in ran if block.language == "sh" for words in _commands(block)]
    # the five steps: explain and run through the CLI, the result file read back, the Python API
    assert commands == ["explain", "run"]
    assert (tmp_path / "result.parquet").exists() and (tmp_path / "result_changes.parquet").exists()
    assert sum(block.language == "python" for block in ran) >= 3


@pytest.mark.spark
def test_readme_spark_block_runs(tmp_path):
    """The block's tables are managed tables of this process's Spark session, whose warehouse is
    wherever its JVM started (often the checkout): they are dropped after, so nothing is left there
    for a second run to trip over (LOCATION_ALREADY_EXISTS)."""
    before = _managed_tables()
    try:
        run_blocks(README.read_text(), tmp_path, with_spark=True)
    finally:
        from pyspark.sql import SparkSession

        session = SparkSession.getActiveSession()
        for table in _managed_tables() - before if session is not None else ():
            session.sql(f"DROP TABLE IF EXISTS `{table}`")


def _managed_tables() -> set[str]:
    """The tables of the running Spark session's current database (none without a session)."""
    from pyspark.sql import SparkSession

    session = SparkSession.getActiveSession()
    return set() if session is None else {t.name for t in session.catalog.listTables() if not t.isTemporary}


def test_readme_skips_few_blocks():
    skipped = [block for block in blocks(README.read_text()) if block.marker == "skip"]
    assert len(skipped) <= 2, [block.line for block in skipped]
    assert all(block.argument for block in skipped), "a skipped block says why"


def test_a_failing_block_fails_the_run(tmp_path):
    broken = "<!-- readme-test: file q.sql -->\n```sql\nselect nope from nowhere\n```\n\n```sh\nivm explain q.sql\n```\n"
    with pytest.raises(AssertionError, match="exited with 2"):
        run_blocks(broken, tmp_path)
    with pytest.raises(AssertionError, match="printed output differs"):
        run_blocks("```python\nprint(1)\n```\n<!-- readme-test: output -->\n```text\n2\n```\n", tmp_path)
    with pytest.raises(AssertionError, match="ivm commands only"):
        run_blocks("```sh\nmake demo\n```\n", tmp_path)


def test_readme_is_a_front_door():
    assert len(README.read_text().splitlines()) <= MAX_LINES


# Pages another branch generates, linked before it lands: planner/ir/functions/table.py writes the


def _markdown_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md")), *sorted((ROOT / "examples").rglob("*.md"))]


@pytest.mark.parametrize("page", _markdown_files(), ids=lambda path: str(path.relative_to(ROOT)))
def test_links_resolve_inside_the_repository(page):
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
        if re.match(r"\w+://", target):
            continue
        resolved = (page.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{page.name}: link to {target} leaves the repository"
        assert resolved.exists(), f"{page.name}: link to {target}, which does not exist"


_OUTSIDE = re.compile("|".join(re.escape(part) for part in ("../" + "shared", "/" + "work/")))


def _repository_files() -> list[Path]:
    """The files the repository holds (git's index), not what runs leave beside them (.hypothesis/,
    data/, a virtualenv); without git (an unpacked copy) every file under the root but dot-folders."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True)
    if listed.returncode == 0:
        return [ROOT / name for name in listed.stdout.split("\0") if name]
    return [path for path in ROOT.rglob("*") if path.is_file()
            and not any(part.startswith(".") or part in ("data", "__pycache__") for part in path.relative_to(ROOT).parts)]


def test_no_file_points_outside_the_repository():
    pointing = []
    for path in _repository_files():
        if path.suffix not in {".py", ".md", ".sql", ".txt", ".cfg", ".toml", ""} or not path.is_file():
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        pointing += [f"{path.relative_to(ROOT)}:{text.count(chr(10), 0, m.start()) + 1}" for m in _OUTSIDE.finditer(text)]
    assert not pointing, pointing
