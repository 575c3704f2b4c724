"""Every ``case`` arm of a rule states its law (docs/contributing.md, "A rule is small and says its law"):
a comment on the line above the arm, or at its end, in rules/ and planner/optimizer/. A pattern without
its law is a rewrite whose correctness the reader has to rebuild."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p for folder in ("rules", "planner/optimizer") for p in (ROOT / folder).rglob("*.py"))


def arms_without_law(text: str) -> list[str]:
    """The ``case`` lines of ``text`` with no comment above them or on them."""
    lines = text.splitlines()
    missing = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.match_case):
            line = node.pattern.lineno - 1
            if not (lines[line - 1].strip().startswith("#") or "#" in lines[line]):
                missing.append(f"{line + 1}: {lines[line].strip()}")
    return missing


def test_an_arm_without_a_comment_is_found():
    text = "match x:\n    # x + 0 = x\n    case 0:\n        pass\n    case _:\n        pass\n"
    assert arms_without_law(text) == ["5: case _:"]


def test_every_case_arm_states_its_law():
    arms = sum(isinstance(n, ast.match_case) for p in MODULES for n in ast.walk(ast.parse(p.read_text())))
    assert arms > 100
    missing = [f"{p.relative_to(ROOT)}:{arm}" for p in MODULES for arm in arms_without_law(p.read_text())]
    assert not missing, "case arms without a law comment:\n" + "\n".join(missing)
