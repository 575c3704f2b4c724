"""The ``ivm`` entry point: the parser of every command, and one clear line for every user-facing failure."""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn

from catalog.schema import CatalogError, UnknownTableError
from operators.runtime.run_errors import SparkBatchError, WorkDirMismatchError
from operators.runtime.stream import StreamFormatError, UnknownStreamTableError
from operators.runtime.validate import InvalidChangeError
from operators.stages.scalar import ScalarSubqueryTooManyRowsError
from planner.cli.common import CATALOG_HINT, DEFAULT_CATALOG, CommandLineError
from planner.cli.explain import add_explain
from planner.cli.pages import add_demo, add_ui
from planner.cli.pipelines import add_pipelines
from planner.cli.run import BatchError, add_run, cmd_run
from planner.cli.streams import add_iedyn, add_tpch
from planner.compiler import UnsupportedQueryError
from planner.ir.values import SqlRuntimeError
from planner.sql.errors import UnsupportedSqlError

#: the failures a user can cause (a query, a catalog, a stream, an option): one line, exit code 2
USER_ERRORS = (CatalogError, StreamFormatError, InvalidChangeError, UnsupportedQueryError, UnsupportedSqlError,
               SqlRuntimeError, ScalarSubqueryTooManyRowsError, CommandLineError, BatchError, FileNotFoundError,
               SparkBatchError, WorkDirMismatchError)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ivm", description="Incremental view maintenance on Spark (spark-ivm).")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in (add_explain, add_tpch, add_iedyn, add_run, add_demo, add_pipelines, add_ui):
        add(sub)
    return parser


class NoPandas:
    """A module finder that has no pandas: ``import pandas`` raises ImportError (see ``main``)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "pandas":
            raise ModuleNotFoundError("pandas is not used by ivm run --engine local", name=name)
        return None


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    default_catalog = getattr(args, "catalog", "") is None
    if default_catalog:
        args.catalog = DEFAULT_CATALOG
    # this process is the local run's own (argv None: `ivm` or `python -m planner.cli`), not an embedding program's
    own_local_run = argv is None and args.func is cmd_run and args.engine == "local"
    if own_local_run and "pandas" not in sys.modules:
        # pyarrow imports pandas on its first array only to recognize pandas objects among its inputs
        # (0.3 s CPU, more than a second of wall on a loaded machine); the local run converts none. Only
        # in the command's own process: pyarrow remembers for the process that pandas is missing,
        # which an embedding program must not inherit.
        sys.meta_path.insert(0, NoPandas)
    try:
        code = args.func(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's flush at exit
    except BrokenPipeError:
        code = _closed_pipe()
    except USER_ERRORS as err:  # every user-facing failure ends as one clear line, not a traceback
        hint = CATALOG_HINT if default_catalog and isinstance(err, (UnknownTableError, UnknownStreamTableError)) else ""
        print(f"ivm: error: {err}{hint}", file=sys.stderr)
        code = 2
    if own_local_run:
        _exit_now(code)
    return code


def _closed_pipe() -> int:
    """The reader of stdout went away (``ivm explain q.sql | head -1``): end quietly, as a Unix tool
    does. stdout is pointed at devnull so that no later flush (the interpreter's at exit) fails on the
    pipe again, the recipe of Python's ``signal`` documentation; the exit code is 1, as there."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 1


def _exit_now(code: int) -> NoReturn:
    """End the process without tearing the interpreter down: a run leaves millions of objects (the
    maintained state, the validator's fingerprints) that the interpreter would free one by one at exit
    (0.3 s CPU, 0.5 s wall on TPC-H Q3 SF 0.1), where the operating system takes the memory back at
    once. Every file the run writes is closed by then; the standard streams are flushed here."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
