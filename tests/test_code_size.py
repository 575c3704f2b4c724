"""Rooms of a readable size (the house issue): no module of the product over 500 lines and no function
over 60, so that each reads in one sitting. The product is catalog/, planner/, rules/ and operators/;
tests, examples and benchmarks are not held to it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p for layer in ("catalog", "planner", "rules", "operators") for p in (ROOT / layer).rglob("*.py"))
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 60


def test_the_product_has_modules_to_check():
    assert len(MODULES) > 100


@pytest.mark.parametrize("module", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_and_functions_stay_small(module: Path):
    text = module.read_text()
    lines = text.count("\n")
    assert lines <= MAX_MODULE_LINES, f"{module.relative_to(ROOT)} has {lines} lines: split it by job"
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines, line {node.lineno})"
            for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES]
    assert not long, f"{module.relative_to(ROOT)}: functions over {MAX_FUNCTION_LINES} lines: {', '.join(long)}"
