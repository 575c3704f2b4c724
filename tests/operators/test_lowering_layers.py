"""The lowering's floor plan holds: no import cycle in operators/lowering (no lazy import hiding one),
only the entry point imports the query lowering, and stages and structures import no lowering."""

from __future__ import annotations

import ast
from pathlib import Path

OPERATORS = Path(__file__).resolve().parents[2] / "operators"


def _imports(path: Path) -> list[tuple[str, bool]]:
    """(module imported, whether the import sits inside a function) for each ``from x import``."""
    tree = ast.parse(path.read_text())
    nested = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
              for n in ast.walk(f) if isinstance(n, ast.ImportFrom | ast.Import)}
    return [(node.module or "", id(node) in nested) for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]


def test_no_lowering_module_imports_lazily_or_imports_the_query_lowering_but_the_entry_point():
    for path in sorted((OPERATORS / "lowering").glob("*.py")):
        imports = _imports(path)
        assert not [m for m, lazy in imports if lazy], f"{path.name} imports inside a function"
        if path.name != "pipeline.py":
            assert "operators.lowering.query" not in {m for m, _ in imports}, f"{path.name} imports query.py back"


def test_stages_and_structures_import_neither_lowering_nor_planner():
    for path in sorted([*(OPERATORS / "stages").rglob("*.py"), *(OPERATORS / "structures").rglob("*.py")]):
        wrong = [m for m, _ in _imports(path) if m.startswith(("operators.lowering", "planner", "rules"))]
        assert not wrong, f"{path.relative_to(OPERATORS)} imports {wrong}"
