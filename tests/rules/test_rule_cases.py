"""Rule cases from fixture files: each runs one rule on a plan and compares the printed result.

``tests/rules/cases/<module>.txt`` holds the cases of the rules in ``rules/<module>.py``. A case::

    # title: A sentence about the behaviour (the test id).
    # rule: FlattenInnerJoins
    # catalog: tpch                         (optional: tpch, the default, or orderbook)
    # ddl: CREATE TABLE r1 (x1 INT PRIMARY KEY);     (optional, repeatable: a catalog of its own)
    # decision: part of the reason the rule records in ctx.decisions  (optional)
    # xfail: why the rule is known to get this wrong  (optional)
    before:
      <plan in the plan notation, indented>
    after:
      <the plan the rule must return>

Instead of ``after:`` a case says ``unchanged`` (the rule returns the very same plan object and
records no refusal) or ``refused: <substring>`` (the rule returns the same plan and records in
``ctx.refusals`` a reason containing the substring). Other ``#`` lines are comments. A block is
the indented lines after its header. ``pytest tests --regenerate-golden`` rewrites the
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
from planner.ir.notation import parse_plan, print_plan
from planner.optimizer.context import OptimizerContext
from planner.optimizer.executor import Rule
from planner.optimizer.testing import assert_plan_text, assert_unchanged

CASES_DIR = Path(__file__).parent / "cases"
NAMED_CATALOGS = {"tpch": tpch_catalog, "orderbook": orderbook_catalog}
DIRECTIVES = ("title", "rule", "catalog", "ddl", "decision", "xfail")


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
    decision: str | None
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
    """The fields of the case being read, checked when the next case (or the file) ends it."""

    def __init__(self, path: Path, line: int, title: str) -> None:
        self.path, self.line = path, line
        self.fields: dict[str, object] = {"title": title, "ddl": []}
        # block name -> (0-based index of its first body line, its lines)
        self.blocks: dict[str, tuple[int, list[str]]] = {}

    def set(self, key: str, value: str, line: int) -> None:
        if key == "ddl":
            self.fields["ddl"].append(value)
        elif key in self.fields:
            raise CaseFileError(f"{self.path.name}:{line}: case {self.fields['title']!r} already has {key}")
        else:
            self.fields[key] = value

    def _body(self, name: str) -> tuple[int, list[str]] | None:
        """A block without its trailing blank lines (they separate cases)."""
        if name not in self.blocks:
            return None
        start, lines = self.blocks[name]
        while lines and not lines[-1]:
            lines = lines[:-1]
        return start, lines

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
        before, after = (self._body(name) for name in ("before", "after"))
        return RuleCase(
            path=self.path,
            line=self.line,
            title=title,
            rule=self.fields["rule"],
            catalog=catalog,
            ddl=tuple(self.fields["ddl"]),
            decision=self.fields.get("decision"),
            xfail=self.fields.get("xfail"),
            before="\n".join(before[1]),
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
    if case.after is None:
        _check_left_alone(case, rule, ctx)
        return
    assert print_plan(before) != _dedented(case.after), (
        f"{case.where}: after: equals before:; write `unchanged` for a rule that must not fire"
    )
    actual = rule.apply(before, ctx)
    if case.decision is not None:
        decision = ctx.decisions.get(rule.name)
        assert decision is not None, f"{case.where}: {rule.name} recorded no decision"
        assert case.decision in decision, f"{case.where}: the decision {decision!r} does not mention {case.decision!r}"
    if after_block_writer is not None and case.xfail is None:
        after_block_writer.replace(case.path, case.after_span, ["  " + line for line in print_plan(actual).splitlines()])
    else:
        assert_plan_text(actual, case.after)


def _check_left_alone(case: RuleCase, rule: Rule, ctx: OptimizerContext) -> None:
    """``unchanged``: same plan, no refusal; ``refused:``: same plan and the expected reason."""
    assert_unchanged(rule, case.before, ctx)
    reason = ctx.refusals.get(rule.name)
    if case.unchanged:
        assert reason is None, f"{case.where}: {rule.name} refused ({reason}); write `refused: <part of it>`"
    else:
        assert reason is not None, f"{case.where}: {rule.name} recorded no refusal"
        assert case.refused in reason, f"{case.where}: the refusal {reason!r} does not mention {case.refused!r}"


def _dedented(text: str) -> str:
    return "\n".join(line.rstrip() for line in textwrap.dedent(text).strip().splitlines())


# The runner itself: the file format and the regeneration of after: blocks.

_TWO_CASES = """\
# title: First case.
# rule: MaintainTopK
before:
  Limit count=1
    Sort keys=[x ASC]
      Scan table=t alias=t columns=[x]
after:
  stale line one
  stale line two

# title: Second case.
# rule: MaintainTopK
before:
  Scan table=t alias=t columns=[x]
unchanged
"""


def test_regeneration_replaces_exactly_the_after_block(tmp_path: Path) -> None:
    from tests.rules.conftest import AfterBlockWriter

    path = tmp_path / "top_k.txt"
    path.write_text(_TWO_CASES)
    first, second = read_cases(path)
    assert (first.after, second.unchanged) == ("  stale line one\n  stale line two", True)
    writer = AfterBlockWriter()
    writer.replace(path, first.after_span, ["  fresh"])
    writer.write()
    assert path.read_text() == _TWO_CASES.replace("  stale line one\n  stale line two\n", "  fresh\n")
    assert [case.title for case in read_cases(path)] == ["First case.", "Second case."]


def test_a_case_without_an_outcome_is_reported_with_its_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "top_k.txt"
    path.write_text(_TWO_CASES.replace("unchanged\n", ""))
    with pytest.raises(CaseFileError, match=r"top_k\.txt:11: case 'Second case\.' needs exactly one of"):
        read_cases(path)
