"""The registry as the Markdown table of docs/supported-functions.md, generated so it cannot drift.

``python -m planner.ir.functions.table`` rewrites the file; a test fails while the file differs
from what ``supported_functions_table`` renders.
"""

from __future__ import annotations

import sys
from pathlib import Path

from planner.ir.functions import FUNCTIONS, Function

DOCS_FILE = Path(__file__).resolve().parents[3] / "docs" / "supported-functions.md"

_HEADER = """# Supported scalar functions

Generated from the function registry (`planner/ir/functions`) by
`python -m planner.ir.functions.table`; do not edit by hand. Each function has Spark 4's semantics
in ANSI mode: its result type, its implicit casts, NULL in gives NULL out unless the notes say
otherwise, and Spark's run-time errors (`ARITHMETIC_OVERFLOW`, `DIVIDE_BY_ZERO`...) fail the batch
as they fail a Spark query. A function evaluates per row, so its cost per update is that of the
operator computing it. Operators, `CASE`, `CAST`, `EXTRACT`, `LIKE`, `IN` and `BETWEEN` are
built into the SQL front end and not listed here.
"""


def _row(function: Function) -> str:
    aliases = ", ".join(f"`{a}`" for a in function.aliases)
    cells = (f"`{function.name}`", aliases, function.category, function.params, function.returns, function.doc)
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def supported_functions_table() -> str:
    """The Markdown page listing every registered function: supported ones by category, then the
    refused ones with the reason."""
    supported = sorted((f for f in FUNCTIONS if f.deterministic), key=lambda f: (f.category, f.name))
    refused = sorted((f for f in FUNCTIONS if not f.deterministic), key=lambda f: f.name)
    lines = [_HEADER, "| function | aliases | category | arguments | result | notes |", "|---|---|---|---|---|---|"]
    lines += [_row(f) for f in supported]
    lines += ["", "## Refused: not a function of the view's input rows", "",
              "A maintained view must give the same result for the same input rows at every update, so these",
              "are refused with the reason below.", "", "| function | aliases | reason |", "|---|---|---|"]
    lines += [f"| `{f.name}` | {', '.join(f'`{a}`' for a in f.aliases)} | {f.refusal} |" for f in refused]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    DOCS_FILE.write_text(supported_functions_table())
    sys.stdout.write(f"wrote {DOCS_FILE}\n")
