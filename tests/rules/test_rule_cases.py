"""Rule cases from fixture files: each runs one rule on a plan and compares the printed result.

``tests/rules/cases/<module>.txt`` holds the cases of the rules in ``rules/<module>.py``. A case::

    # title: A sentence about the behaviour (the test id).
    # rule: FlattenInnerJoins
    # catalog: tpch                         (optional: tpch, the default, or orderbook)
    # ddl: CREATE TABLE r1 (x1 INT PRIMARY KEY);     (optional, repeatable: a catalog of its own)
    # xfail: why the rule is known to get this wrong  (optional)
    before:
      <plan in the plan notation, indented>
    after:
      <the plan the rule must return>

Instead of ``after:`` a case says ``unchanged`` (the rule returns the very same plan object and
records no refusal) or ``refused: <substring>`` (the rule returns the same plan and records in
``ctx.refusals`` a reason containing the substring). Other ``#`` lines are comments. A block is
the indented lines after its header. ``pytest tests/rules --regenerate-rule-cases`` rewrites the
``after:`` blocks from what the rules print (xfail cases keep theirs: they state the right answer).
"""

from __future__ import annotations

import functools
import importlib
import textwrap
from pathlib import Path

import attrs
import pytest

from catalog.ddl import catalog_from_ddl
from catalog.orderbook import orderbook_catalog
from catalog.schema import Catalog
from catalog.tpch import tpch_catalog
from planner.context import OptimizerContext
from planner.notation import parse_plan, print_plan
from planner.rule_executor import Rule
from planner.testing import assert_plan_text, assert_unchanged

CASES_DIR = Path(__file__).parent / "cases"
NAMED_CATALOGS = {"tpch": tpch_catalog, "orderbook": orderbook_catalog}
DIRECTIVES = ("title", "rule", "catalog", "ddl", "xfail")


class CaseFileError(ValueError):
    """A fixture file does not follow the case format (names the file and line)."""


@attrs.frozen
class RuleCase:
    """One case of a fixture file; ``after_span`` is the 0-based line span of the ``after:`` body."""

    path: Path
    line: int
    title: str
    rule: str
    catalog: str | None
    ddl: tuple[str, ...]
    xfail: str | None
    before: str
    after: str | None
    after_span: tuple[int, int] | None
    unchanged: bool
    refused: str | None

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


class _CaseBuilder:
    """The fields of the case being read, checked when the next case (or the file) starts."""

    def __init__(self, path: Path, line: int, title: str) -> None:
        self.path, self.line = path, line
        self.fields: dict[str, object] = {"title": title, "ddl": []}
        self.blocks: dict[str, tuple[int, list[str]]] = {}

    def set(self, key: str, value: str, line: int) -> None:
        if key == "ddl":
            self.fields["ddl"].append(value)
        elif key in self.fields:
            raise CaseFileError(f"{self.path.name}:{line}: case {self.fields['title']!r} already has {key}")
        else:
            self.fields[key] = value

    def build(self) -> RuleCase:
        title = self.fields["title"]
        where = f"{self.path.name}:{self.line}"
        if "rule" not in self.fields or "before" not in self.blocks:
            raise CaseFileError(f"{where}: case {title!r} needs a '# rule:' line and a before: block")
        outcomes = ["after" in self.blocks, "unchanged" in self.fields, "refused" in self.fields]
        if sum(outcomes) != 1:
            raise CaseFileError(f"{where}: case {title!r} needs exactly one of after:, unchanged, refused:")
        catalog = self.fields.get("catalog")
        if catalog is not None and catalog not in NAMED_CATALOGS:
            raise CaseFileError(f"{where}: unknown catalog {catalog!r}; known: {', '.join(NAMED_CATALOGS)}")
        if catalog is not None and self.fields["ddl"]:
            raise CaseFileError(f"{where}: case {title!r} names a catalog and declares DDL; keep one")
        after = self.blocks.get("after")
        return RuleCase(
            path=self.path,
            line=self.line,
            title=title,
            rule=self.fields["rule"],
            catalog=catalog,
            ddl=tuple(self.fields["ddl"]),
            xfail=self.fields.get("xfail"),
            before="\n".join(self.blocks["before"][1]),
            after=None if after is None else "\n".join(after[1]),
            after_span=None if after is None else (after[0], after[0] + len(after[1])),
            unchanged="unchanged" in self.fields,
            refused=self.fields.get("refused"),
        )


def read_cases(path: Path) -> list[RuleCase]:
    """Every case of one fixture file, in file order."""
    cases: list[RuleCase] = []
    current: _CaseBuilder | None = None
    block: list[str] | None = None
    for number, raw in enumerate(path.read_text().splitlines()):
        line = raw.rstrip()
        if block is not None and (not line or line[0] == " "):
            block.append(line)
            continue
        if block is not None:
            while block and not block[-1]:
                block.pop()
            block = None
        if not line:
            continue
        directive, _, value = line.partition(":")
        key = directive.removeprefix("#").strip()
        if line.startswith("#") and key in DIRECTIVES and value:
            if key == "title":
                if current is not None:
                    cases.append(current.build())
                current = _CaseBuilder(path, number + 1, value.strip())
                continue
            if current is None:
                raise CaseFileError(f"{path.name}:{number + 1}: '# {key}:' comes before the first '# title:'")
            current.set(key, value.strip(), number + 1)
        elif line.startswith("#"):
            continue
        elif current is None:
            raise CaseFileError(f"{path.name}:{number + 1}: {line!r} comes before the first '# title:'")
        elif line in ("before:", "after:"):
            name = line[:-1]
            if name in current.blocks:
                raise CaseFileError(f"{path.name}:{number + 1}: a second {line} block in one case")
            block = []
            current.blocks[name] = (number + 1, block)
        elif line == "unchanged":
            current.set("unchanged", "", number + 1)
        elif directive == "refused" and value.strip():
            current.set("refused", value.strip(), number + 1)
        else:
            raise CaseFileError(
                f"{path.name}:{number + 1}: expected before:, after:, unchanged, refused: <reason> "
                f"or a '# ' line, found {line!r}"
            )
    if block is not None:
        while block and not block[-1]:
            block.pop()
    if current is not None:
        cases.append(current.build())
    return cases


def all_cases() -> list[RuleCase]:
    cases = [case for path in sorted(CASES_DIR.glob("*.txt")) for case in read_cases(path)]
    seen: dict[str, RuleCase] = {}
    for case in cases:
        if case.title in seen:
            raise CaseFileError(f"{case.where}: title {case.title!r} is also used at {seen[case.title].where}")
        seen[case.title] = case
    return cases


def rule_of(case: RuleCase) -> Rule:
    """The rule class named by the case, which must live in the module its file is named after."""
    module = importlib.import_module(f"rules.{case.path.stem}")
    cls = getattr(module, case.rule, None)
    if not (isinstance(cls, type) and issubclass(cls, Rule) and cls.__module__ == module.__name__):
        raise CaseFileError(f"{case.where}: rules/{case.path.stem}.py defines no rule class {case.rule}")
    return cls()


@functools.cache
def named_catalog(name: str) -> Catalog:
    return NAMED_CATALOGS[name]()


@functools.cache
def ddl_catalog(ddl: tuple[str, ...]) -> Catalog:
    return catalog_from_ddl("\n".join(ddl))


def catalog_of(case: RuleCase) -> Catalog:
    return ddl_catalog(case.ddl) if case.ddl else named_catalog(case.catalog or "tpch")


def _param(case: RuleCase):
    marks = () if case.xfail is None else (pytest.mark.xfail(reason=case.xfail, strict=True),)
    return pytest.param(case, id=case.title, marks=marks)


@pytest.mark.parametrize("case", [_param(case) for case in all_cases()])
def test_rule_case(case: RuleCase, after_block_writer) -> None:
    rule, ctx = rule_of(case), OptimizerContext(catalog_of(case))
    before = parse_plan(case.before)
    assert print_plan(before) == _dedented(case.before), (
        f"{case.where}: the before: block is not in the canonical notation; it prints as\n{print_plan(before)}"
    )
    if case.after is not None:
        assert print_plan(before) != _dedented(case.after), (
            f"{case.where}: after: equals before:; write `unchanged` for a rule that must not fire"
        )
        actual = rule.apply(before, ctx)
        if after_block_writer is not None and case.xfail is None:
            after_block_writer.replace(case.path, case.after_span, ["  " + line for line in print_plan(actual).splitlines()])
            return
        assert_plan_text(actual, case.after)
        return
    assert_unchanged(rule, case.before, ctx)
    reason = ctx.refusals.get(rule.name)
    if case.unchanged:
        assert reason is None, f"{case.where}: {rule.name} refused ({reason}); write `refused: <part of it>`"
    else:
        assert reason is not None, f"{case.where}: {rule.name} recorded no refusal"
        assert case.refused in reason, f"{case.where}: the refusal {reason!r} does not mention {case.refused!r}"


def _dedented(text: str) -> str:
    return "\n".join(line.rstrip() for line in textwrap.dedent(text).strip().splitlines())
