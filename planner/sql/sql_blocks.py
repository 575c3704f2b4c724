"""SQL query blocks built up one plan operator at a time: the shared back half of the DataFrame
front ends (``catalyst.py`` reads Catalyst's analyzed plan in classic mode, ``connect_plan.py`` the
client-side plan of a Spark Connect DataFrame).

Both render a DataFrame's plan, node by node, as one Spark SQL query that then goes through
``parse_sql`` like any view written in SQL (``catalyst.py`` says why text). What they share is
here: a ``Block`` is one SQL query block under construction, and ``BlockWriter`` adds an operator
to it, keeping blocks flat where SQL's clause order allows (a Filter over a Join becomes the
block's WHERE, a Filter over an Aggregate its HAVING, a Sort its ORDER BY), so a DataFrame written
the way its SQL would be gets the same plan; elsewhere the child becomes a derived table, which
``rules/inline_views.py`` inlines when it only selects, projects and joins. Columns are named by
integer ids (Catalyst's expression ids, or ids the Connect reader hands out); each front end
renders its own expressions, given the block they must be valid in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import attrs
from sqlglot.tokens import Tokenizer

_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)*`)(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)*`))*")
_CALL_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\(|\(")
SEMI_JOINS = {"LEFT SEMI": "EXISTS", "LEFT ANTI": "NOT EXISTS"}
JOINS = {
    "INNER": "JOIN",
    "CROSS": "CROSS JOIN",
    "LEFT OUTER": "LEFT JOIN",
    **SEMI_JOINS,
    "RIGHT OUTER": "RIGHT JOIN",
    "FULL OUTER": "FULL JOIN",
}


def quote(name: str) -> str:
    if _SIMPLE_NAME.fullmatch(name) and name.upper() not in Tokenizer.KEYWORDS:
        return name
    return "`" + name.replace("`", "``") + "`"


def is_reference(text: str) -> bool:
    """Whether ``text`` is a plain (possibly qualified) column name, which needs no parentheses."""
    return _REFERENCE.fullmatch(text) is not None


def is_enclosed(text: str) -> bool:
    """Whether ``text`` is one parenthesized term, ``(a + b)`` or ``sum(a)``, safe to use as an operand."""
    opening = _CALL_PREFIX.match(text)
    if opening is None or not text.endswith(")"):
        return False
    depth, quote, escaped = 0, "", False
    for position in range(opening.end() - 1, len(text)):
        char = text[position]
        if quote:
            escaped, quote = (not escaped and char == "\\"), ("" if char == quote and not escaped else quote)
        elif char in "'`\"":
            quote = char
        elif char in "()":
            depth += 1 if char == "(" else -1
            if depth == 0:
                return position == len(text) - 1
    return False


@attrs.frozen
class Block:
    """One SQL query block under construction, clauses in the order SQL evaluates them.

    ``refs`` maps the id of every attribute the block's parent may name to SQL text valid inside
    the block's clauses: a column of a FROM item, or the expression of a select item of this block
    (``sum(l.l_extendedprice)`` for an aggregate's output). ``outputs`` are the block's columns in
    order, as (attribute id, name); ``select`` holds the SQL text of each output, None while the
    block outputs its FROM columns.
    """

    from_: str
    refs: Mapping[int, str]
    outputs: tuple[tuple[int, str], ...]
    joins: tuple[str, ...] = ()
    where: tuple[str, ...] = ()
    group_by: tuple[str, ...] | None = None
    having: tuple[str, ...] = ()
    select: tuple[str, ...] | None = None
    distinct: bool = False
    order: tuple[str, ...] = ()
    limit: int | None = None
    alias_hint: str | None = None
    # (words, parenthesized inputs) when the FROM is a set operation: the planner maintains one at
    # the top of a query, not as a derived table, so it is written bare while nothing is added
    set_operation: tuple[str, tuple[str, ...]] | None = None

    @property
    def selects_nothing_yet(self) -> bool:
        """Only FROM and WHERE are set: joins may extend the FROM, filters the WHERE."""
        return (
            self.group_by is None and self.select is None and not self.distinct
            and not self.order and self.limit is None
        )

    @property
    def bare_set_operation(self) -> tuple[str, tuple[str, ...]] | None:
        untouched = self.selects_nothing_yet and not self.where and not self.joins
        return self.set_operation if untouched else None

    def sql(self) -> str:
        if self.bare_set_operation is not None:
            words, inputs = self.bare_set_operation
            return f" {words} ".join(inputs)
        texts = self.select if self.select is not None else tuple(self.refs[id_] for id_, _ in self.outputs)
        items = ", ".join(item(text, name) for text, (_, name) in zip(texts, self.outputs, strict=True))
        parts = ["SELECT", "DISTINCT " + items if self.distinct else items]
        parts += ["FROM", self.from_, *self.joins]
        if self.where:
            parts += ["WHERE", " AND ".join(self.where)]
        if self.group_by:
            parts += ["GROUP BY", ", ".join(self.group_by)]
        if self.having:
            parts += ["HAVING", " AND ".join(self.having)]
        if self.order:
            parts += ["ORDER BY", ", ".join(self.order)]
        if self.limit is not None:
            parts += ["LIMIT", str(self.limit)]
        return " ".join(parts)


def selecting(block: Block, items: list[tuple[int, str, str]], **changes) -> Block:
    """``block`` selecting ``items`` (expression id, output name, SQL text), with other ``changes``."""
    return attrs.evolve(
        block,
        refs={id_: text for id_, _, text in items},
        outputs=tuple((id_, name) for id_, name, _ in items),
        select=tuple(text for _, _, text in items),
        **changes,
    )


def unique_names(outputs: tuple[tuple[int, str], ...]) -> tuple[tuple[int, str], ...]:
    """``outputs`` with a repeated name numbered (``o_orderkey_2``), as a derived table needs."""
    unique: list[tuple[int, str]] = []
    for id_, name in outputs:
        candidate, number = name, 1
        while any(candidate == taken for _, taken in unique):
            number += 1
            candidate = f"{name}_{number}"
        unique.append((id_, candidate))
    return tuple(unique)


def item(text: str, name: str) -> str:
    """A select item; ``o.o_orderkey`` rather than ``o.o_orderkey AS o_orderkey``."""
    if is_reference(text) and text.rsplit(".", 1)[-1] == quote(name):
        return text
    return f"{text} AS {quote(name)}"


Items = list[tuple[int, str, str]]  # select items: (column id, output name, SQL text of the value)


class BlockWriter:
    """Adds plan operators to blocks; derived-table and table aliases are unique across the query.
    Each operator takes a function rendering its expressions in the block it ends up in (the child's
    block, or a derived table over it when the clauses cannot be merged)."""

    def __init__(self):
        self.aliases: set[str] = set()

    def unique_alias(self, wanted: str) -> str:
        alias, number = wanted.lower(), 1
        while alias in self.aliases:
            number += 1
            alias = f"{wanted.lower()}_{number}"
        self.aliases.add(alias)
        return alias

    def relation(self, table: str, alias: str | None, columns: list[tuple[int, str]]) -> Block:
        """A catalog table's columns (id, lower-case name) read under ``alias`` (default: its name)."""
        alias = self.unique_alias(alias or table)
        refs = {id_: f"{quote(alias)}.{quote(name)}" for id_, name in columns}
        from_ = quote(table) if alias == table else f"{quote(table)} AS {quote(alias)}"
        return Block(from_, refs, tuple(columns))

    def wrapped(self, block: Block) -> Block:
        """``block`` as a derived table in the FROM of a new block; its column names made unique."""
        inner = attrs.evolve(block, outputs=unique_names(block.outputs))
        return self.derived_table(f"({inner.sql()})", inner.outputs, block.alias_hint or "_t")

    def derived_table(self, query: str, outputs: tuple[tuple[int, str], ...], alias: str) -> Block:
        alias = self.unique_alias(alias)
        refs = {id_: f"{quote(alias)}.{quote(name)}" for id_, name in outputs}
        return Block(f"{query} AS {quote(alias)}", refs, outputs)

    def filtered(self, block: Block, conjuncts: Callable[[Block], tuple[str, ...]]) -> Block:
        if block.limit is not None:
            block = self.wrapped(block)
        rendered = conjuncts(block)
        # σ over an aggregate is HAVING; over anything else it commutes down to the WHERE
        # (a filter on output columns commutes with projection, DISTINCT and ORDER BY)
        if block.group_by is not None:
            return attrs.evolve(block, having=block.having + rendered)
        return attrs.evolve(block, where=block.where + rendered)

    def projected(self, block: Block, items: Callable[[Block], Items]) -> Block:
        if block.distinct or block.limit is not None:
            block = self.wrapped(block)
        return selecting(block, items(block))

    def aggregated(self, block: Block, grouping: Callable[[Block], tuple[tuple[str, ...], Items]]) -> Block:
        """``grouping`` renders (GROUP BY keys, select items) in the block."""
        if not (block.group_by is None and not block.distinct and not block.order and block.limit is None):
            block = self.wrapped(block)
        keys, items = grouping(block)
        return selecting(block, items, group_by=keys)

    def join_inputs(self, join_type: str, left: Block, right: Block) -> tuple[Block, Block, Block]:
        """The two sides as they can be joined, and the scope the ON condition is rendered in."""
        semi = join_type in SEMI_JOINS
        # a WHERE stays above the joins that follow, which holds while they keep the rows it tested: a
        # RIGHT or FULL OUTER JOIN pads the left side's rows, so a side filtered before one is a derived
        # table, as is its right side's filter (R ⟖_c σ_p(S) keeps S's rows failing p, padded)
        pads = join_type in ("RIGHT OUTER", "FULL OUTER")
        if not left.selects_nothing_yet or (join_type == "LEFT OUTER" or pads) and left.where:
            left = self.wrapped(left)
        if not right.selects_nothing_yet or (right.joins and not semi) or pads and right.where:
            right = self.wrapped(right)
        return left, right, attrs.evolve(left, refs={**left.refs, **right.refs})

    def joined(self, join_type: str, left: Block, right: Block, scope: Block, on: tuple[str, ...],
               outputs: tuple[tuple[int, str], ...]) -> Block:
        """``left`` ``join_type`` ``right`` (sides and scope from ``join_inputs``) ON ``on``."""
        if join_type in SEMI_JOINS:
            # R ⋉_c S = σ_{∃s ∈ S: c}(R) and R ▷_c S = σ_{∄s ∈ S: c}(R): Spark plans EXISTS as these
            # joins (RewritePredicateSubquery), and the planner maintains the EXISTS form
            test = " ".join(("SELECT 1 FROM", right.from_, *right.joins))
            if on + right.where:
                test += " WHERE " + " AND ".join(on + right.where)
            exists = f"{SEMI_JOINS[join_type]} ({test})"
            return attrs.evolve(left, outputs=outputs, where=(*left.where, exists))
        # σ_p(R) ⋈ S = σ_p(R ⋈ S) (and R ⋈ σ_p(S) too for an inner join); a left join's right-side
        # filter joins the ON condition: R ⟕_c σ_p(S) = R ⟕_{c ∧ p} S (a RIGHT or FULL join has none here)
        where = left.where
        if join_type == "INNER":
            where += right.where
        else:
            on += right.where
        words = JOINS[join_type]
        if words == "JOIN" and not on:
            words = "CROSS JOIN"
        clause = f"{words} {right.from_}" + (f" ON {' AND '.join(on)}" if on else "")
        return Block(left.from_, scope.refs, outputs, (*left.joins, clause), where)

    def sorted(self, block: Block, order: Callable[[Block], tuple[str, ...]]) -> Block:
        if block.limit is not None:
            block = self.wrapped(block)
        # a later sort decides the order alone
        return attrs.evolve(block, order=order(block))

    def limited(self, block: Block, count: int) -> Block:
        if block.limit is not None:
            block = self.wrapped(block)
        return attrs.evolve(block, limit=count)

    def distinct(self, block: Block) -> Block:
        match block.bare_set_operation:
            # δ(R ⊎ S) = R ∪ S
            case ("UNION ALL", inputs):
                return self.set_block("UNION", inputs, block.outputs)
        if block.limit is not None:
            block = self.wrapped(block)
        return attrs.evolve(block, distinct=True)

    def combined(self, words: str, inputs: list[Block], ids: tuple[int, ...]) -> Block:
        """``inputs`` combined by ``words`` (``UNION ALL``, ``INTERSECT``...) as a derived table; the
        columns are named by the first input, as Spark's output is, and get ``ids``."""
        inputs[0] = attrs.evolve(inputs[0], outputs=unique_names(inputs[0].outputs))
        names = tuple(name for _, name in inputs[0].outputs)
        # each input in parentheses keeps its own ORDER BY and LIMIT
        texts = tuple(f"({block.sql()})" for block in inputs)
        return self.set_block(words, texts, tuple(zip(ids, names, strict=True)))

    def set_block(self, words: str, inputs: tuple[str, ...], outputs: tuple[tuple[int, str], ...]) -> Block:
        query = f" {words} ".join(inputs)
        alias = "_" + words.split()[0].lower()
        return attrs.evolve(self.derived_table(f"({query})", outputs, alias), set_operation=(words, inputs))
