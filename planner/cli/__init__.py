"""The ``ivm`` command line, one module per command: ``explain``, ``run`` (``run_spark`` for
``--engine spark``), ``streams`` (``tpch gen``/``stream``, ``iedyn stream``), ``pages`` (``demo``,
``ui``); ``common`` holds what they share and ``main`` the parser and the entry point."""

from planner.cli.main import build_parser, main

__all__ = ["build_parser", "main"]
