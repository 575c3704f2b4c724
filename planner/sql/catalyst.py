"""The DataFrame front end: a Spark DataFrame → logical plan, by walking Catalyst's analyzed plan.

A view given as a DataFrame is planned from ``df._jdf.queryExecution().analyzed()``, read through
py4j, so it works in Spark's classic mode only; a Spark Connect DataFrame has no ``_jdf`` and is
refused with a pointer to SQL text.

Design: the walk renders the analyzed plan, node by node, as one Spark SQL query, and that text goes
through ``parse_sql`` like any view written in SQL. We chose text over building ``planner.ir``
values directly because the SQL front end already owns everything a second builder would have to
repeat and keep in step: types resolved as Spark's analyzer resolves them, the checks and
refusals of unsupported SQL, GROUP BY and ORDER BY bookkeeping, and the naive plan shape the
normalization rules expect. The text is also what EXPLAIN shows and what a reference engine can
re-run. What the walk adds is the part SQL text cannot see: every plan node is matched by class,
and any node or expression outside the list below is refused by name (a ``Window`` node, a Python
UDF, a subquery expression), so nothing the DataFrame computes is silently dropped.

Supported nodes: ``Project``, ``Filter``, ``Join``, ``Aggregate``, ``Sort`` (a global sort),
``GlobalLimit`` over ``LocalLimit`` (a constant LIMIT), ``Distinct``, ``Deduplicate`` over all
columns (``df.distinct()``), ``Union`` / ``Intersect`` / ``Except`` (the ALL forms of the last two
are refused by the SQL front end), ``SubqueryAlias``, ``View`` (read through to its definition),
``ResolvedHint`` and ``Repartition``/``RepartitionByExpression`` (read through), and
relations over catalog tables (``LogicalRelation`` and ``HiveTableRelation`` with a catalog table,
``DataSourceV2Relation`` with an identifier). Joins: inner, cross and left outer joins as JOIN
clauses; left semi and anti joins as ``EXISTS`` / ``NOT EXISTS`` (Spark plans those subqueries as
these joins, and the planner maintains the subquery form); right and full outer joins as JOIN clauses
too, a side that was filtered before them made a derived table. Expressions are rendered with Catalyst's
own ``sql()`` after each attribute is replaced by what it stands for in the SQL block; UDFs,
subquery and window expressions, non-deterministic functions and expressions without a SQL form
are refused. Casts the analyzer inserted (those without Catalyst's ``USER_SPECIFIED_CAST`` tag) are
left out: the SQL front end derives the same implicit casts, so a DataFrame and its SQL get the
same typed plan.

Rendering keeps query blocks flat where SQL's clause order allows (a Filter over a Join becomes the
block's WHERE, a Filter over an Aggregate its HAVING, a Sort its ORDER BY), so a DataFrame written
the way its SQL would be gets the same plan; elsewhere the child becomes a derived table, which
``rules/inline_views.py`` inlines when it only selects, projects and joins. An attribute defined by
a select item of the same block is replaced by that item's expression, which is what it means.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs
from sqlglot.tokens import Tokenizer

from catalog.schema import Catalog, UnknownTableError
from planner.ir.logical import LogicalPlan
from planner.sql.errors import UnsupportedDataFrameError, UnsupportedSqlError
from planner.sql.statements import parse_sql

JavaObject = Any  # a py4j handle on a Catalyst object

_EXPRESSIONS = "org.apache.spark.sql.catalyst.expressions."
# Expression families refused wherever they occur, with the reason shown to the user.
_REFUSED_EXPRESSIONS = (
    (_EXPRESSIONS + "UserDefinedExpression", "a user-defined function: its body is opaque to the planner"),
    (_EXPRESSIONS + "SubqueryExpression", "a subquery expression: write the view as SQL text instead"),
    (_EXPRESSIONS + "WindowExpression", "a window function: windows are not maintained"),
    (_EXPRESSIONS + "Nondeterministic", "a non-deterministic function: its value differs between recomputations"),
    (_EXPRESSIONS + "NonSQLExpression", "an expression with no SQL form"),
)
_SEMI_JOINS = {"LEFT SEMI": "EXISTS", "LEFT ANTI": "NOT EXISTS"}
_JOINS = {
    "INNER": "JOIN",
    "CROSS": "CROSS JOIN",
    "LEFT OUTER": "LEFT JOIN",
    **_SEMI_JOINS,
    "RIGHT OUTER": "RIGHT JOIN",
    "FULL OUTER": "FULL JOIN",
}
_PLACEHOLDER = "__ivm_attribute_{}__"
_PLACEHOLDER_PATTERN = re.compile(r"`?__ivm_attribute_(\d+)__`?")  # `...` should Catalyst quote it
_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_REFERENCE = re.compile(r"(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)*`)(?:\.(?:[A-Za-z_][A-Za-z0-9_]*|`(?:[^`]|``)*`))*")
_CALL_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\(|\(")


def logical_plan_from_dataframe(df: Any, catalog: Catalog) -> LogicalPlan:
    """The logical plan of a classic-mode Spark DataFrame over tables of ``catalog``."""
    sql = dataframe_sql(df, catalog)
    try:
        return parse_sql(sql, catalog)
    except UnsupportedSqlError as err:
        err.add_note(f"the DataFrame's analyzed plan read as SQL: {sql}")
        raise


def dataframe_sql(df: Any, catalog: Catalog) -> str:
    """The Spark SQL query the DataFrame's analyzed plan computes, over tables of ``catalog``."""
    jdf = getattr(df, "_jdf", None)
    if jdf is None:
        raise UnsupportedDataFrameError(
            f"a DataFrame view needs Spark's classic mode, where the planner can read the DataFrame's "
            f"Catalyst plan; a {type(df).__module__}.{type(df).__qualname__} (Spark Connect) has none: "
            f"give the view as SQL text instead"
        )
    jvm = df.sparkSession._jvm
    return _Translator(catalog, jvm).query(jdf.queryExecution().analyzed())


def _quote(name: str) -> str:
    if _SIMPLE_NAME.fullmatch(name) and name.upper() not in Tokenizer.KEYWORDS:
        return name
    return "`" + name.replace("`", "``") + "`"


def _is_reference(text: str) -> bool:
    """Whether ``text`` is a plain (possibly qualified) column name, which needs no parentheses."""
    return _REFERENCE.fullmatch(text) is not None


def _is_enclosed(text: str) -> bool:
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


def _class_name(obj: JavaObject) -> str:
    return obj.getClass().getSimpleName()


def _items(seq: JavaObject) -> list[JavaObject]:
    """A Scala ``Seq`` as a Python list."""
    return [seq.apply(i) for i in range(seq.size())]


def _first_line(node: JavaObject, width: int = 160) -> str:
    text = node.toString().splitlines()[0]
    return text if len(text) <= width else text[: width - 1] + "…"


@attrs.frozen
class _Block:
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
        items = ", ".join(_item(text, name) for text, (_, name) in zip(texts, self.outputs, strict=True))
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


def _selecting(block: _Block, items: list[tuple[int, str, str]], **changes) -> _Block:
    """``block`` selecting ``items`` (expression id, output name, SQL text), with other ``changes``."""
    return attrs.evolve(
        block,
        refs={id_: text for id_, _, text in items},
        outputs=tuple((id_, name) for id_, name, _ in items),
        select=tuple(text for _, _, text in items),
        **changes,
    )


def _unique_names(outputs: tuple[tuple[int, str], ...]) -> tuple[tuple[int, str], ...]:
    """``outputs`` with a repeated name numbered (``o_orderkey_2``), as a derived table needs."""
    unique: list[tuple[int, str]] = []
    for id_, name in outputs:
        candidate, number = name, 1
        while any(candidate == taken for _, taken in unique):
            number += 1
            candidate = f"{name}_{number}"
        unique.append((id_, candidate))
    return tuple(unique)


def _item(text: str, name: str) -> str:
    """A select item; ``o.o_orderkey`` rather than ``o.o_orderkey AS o_orderkey``."""
    if _is_reference(text) and text.rsplit(".", 1)[-1] == _quote(name):
        return text
    return f"{text} AS {_quote(name)}"


class _Translator:
    """Renders one analyzed plan; derived-table and table aliases are unique across the query."""

    def __init__(self, catalog: Catalog, jvm: JavaObject):
        self.catalog = catalog
        self.jvm = jvm
        self.aliases: set[str] = set()
        self.refused_classes = [(jvm.java.lang.Class.forName(name), why) for name, why in _REFUSED_EXPRESSIONS]
        self.user_specified_cast = jvm.org.apache.spark.sql.catalyst.expressions.Cast.USER_SPECIFIED_CAST()

    def query(self, plan: JavaObject) -> str:
        return self.block(plan, None).sql()

    def block(self, node: JavaObject, alias: str | None) -> _Block:
        """The block computing ``node``; ``alias`` is the name a SubqueryAlias above gave it."""
        kind = _class_name(node)
        children = _items(node.children())
        match kind:
            case "SubqueryAlias":
                inner = self.block(children[0], alias or node.alias())
                return inner if inner.alias_hint else attrs.evolve(inner, alias_hint=alias or node.alias())
            # hints and repartitioning change how Spark distributes the rows, not which rows
            case "View" | "ResolvedHint" | "Repartition" | "RepartitionByExpression":
                return self.block(children[0], alias)
            case "LogicalRelation" | "HiveTableRelation" | "DataSourceV2Relation":
                return self.relation(node, self._table_name(node), alias)
            case "Filter":
                return self.filter(node, self.block(children[0], None))
            case "Project":
                return self.project(node, self.block(children[0], None))
            case "Aggregate":
                return self.aggregate(node, self.block(children[0], None))
            case "Join":
                return self.join(node, self.block(children[0], None), self.block(children[1], None))
            case "Sort":
                return self.sort(node, self.block(children[0], None))
            case "GlobalLimit":
                return self.limit(node, children[0])
            case "Distinct":
                return self.distinct(self.block(children[0], None))
            case "Deduplicate":
                return self.deduplicate(node, children[0])
            case "Union" | "Intersect" | "Except":
                return self.set_operation(node, kind, children)
        raise self.refusal(node, f"a {kind} node")

    def refusal(self, node: JavaObject, what: str, why: str = "") -> UnsupportedDataFrameError:
        reason = f" ({why})" if why else ""
        return UnsupportedDataFrameError(
            f"cannot maintain a DataFrame plan with {what}{reason}: {_first_line(node)}"
        )

    # --- relations -------------------------------------------------------------------------------

    def _table_name(self, node: JavaObject) -> str:
        kind = _class_name(node)
        if kind == "HiveTableRelation":
            return node.tableMeta().identifier().table().lower()
        table = node.catalogTable() if kind == "LogicalRelation" else node.identifier()
        if table.isEmpty():
            raise self.refusal(node, f"a {kind} node", "a relation that is not a catalog table")
        identifier = table.get()
        return (identifier.identifier().table() if kind == "LogicalRelation" else identifier.name()).lower()

    def relation(self, node: JavaObject, table: str, alias: str | None) -> _Block:
        try:
            known = set(self.catalog.table(table).column_names)
        except UnknownTableError as err:
            raise self.refusal(node, f"a read of table {table!r}", str(err)) from None
        alias = self.unique_alias(alias or table)
        refs, outputs = {}, []
        for attribute in _items(node.output()):
            name = attribute.name().lower()
            if name not in known:
                raise self.refusal(node, f"column {name!r} of table {table}", "the catalog does not know it")
            refs[attribute.exprId().id()] = f"{_quote(alias)}.{_quote(name)}"
            outputs.append((attribute.exprId().id(), name))
        from_ = _quote(table) if alias == table else f"{_quote(table)} AS {_quote(alias)}"
        return _Block(from_, refs, tuple(outputs))

    def unique_alias(self, wanted: str) -> str:
        alias, number = wanted.lower(), 1
        while alias in self.aliases:
            number += 1
            alias = f"{wanted.lower()}_{number}"
        self.aliases.add(alias)
        return alias

    def wrapped(self, block: _Block) -> _Block:
        """``block`` as a derived table in the FROM of a new block; its column names made unique."""
        inner = attrs.evolve(block, outputs=_unique_names(block.outputs))
        return self.derived_table(f"({inner.sql()})", inner.outputs, block.alias_hint or "_t")

    def derived_table(self, query: str, outputs: tuple[tuple[int, str], ...], alias: str) -> _Block:
        alias = self.unique_alias(alias)
        refs = {id_: f"{_quote(alias)}.{_quote(name)}" for id_, name in outputs}
        return _Block(f"{query} AS {_quote(alias)}", refs, outputs)

    # --- expressions -----------------------------------------------------------------------------

    def render(self, expr: JavaObject, block: _Block, node: JavaObject) -> str:
        """``expr`` as SQL text valid in ``block``'s clauses; ``node`` is named in refusals."""
        sql = self._placeheld(expr, node).sql()

        def reference(match: re.Match) -> str:
            id_ = int(match.group(1))
            if id_ not in block.refs:
                raise self.refusal(node, f"attribute #{id_}", "it is not an output of the node's child")
            text = block.refs[id_]
            return text if _is_reference(text) or _is_enclosed(text) else f"({text})"

        return _PLACEHOLDER_PATTERN.sub(reference, sql)

    def _placeheld(self, expr: JavaObject, node: JavaObject) -> JavaObject:
        """``expr`` with every attribute renamed to a placeholder holding its id, checked on the way."""
        for family, why in self.refused_classes:
            if family.isInstance(expr):
                raise self.refusal(node, f"a {_class_name(expr)} expression", why)
        if _class_name(expr) == "Cast" and expr.getTagValue(self.user_specified_cast).isEmpty():
            return self._placeheld(expr.child(), node)
        if _class_name(expr) == "AttributeReference":
            return expr.withName(_PLACEHOLDER.format(expr.exprId().id())).withQualifier(self._seq([]))
        children = [self._placeheld(child, node) for child in _items(expr.children())]
        return expr.withNewChildren(self._seq(children))

    def _seq(self, items: list[JavaObject]) -> JavaObject:
        values = self.jvm.java.util.ArrayList()
        for item in items:
            values.add(item)
        return self.jvm.scala.jdk.javaapi.CollectionConverters.asScala(values).toSeq()

    def conjuncts(self, condition: JavaObject, block: _Block, node: JavaObject) -> tuple[str, ...]:
        """The rendered conjuncts of ``condition``: ``a AND b AND c`` reads as SQL text does."""
        if _class_name(condition) != "And":
            return (self.render(condition, block, node),)
        return self.conjuncts(condition.left(), block, node) + self.conjuncts(condition.right(), block, node)

    def named(self, expr: JavaObject, block: _Block, node: JavaObject) -> tuple[int, str, str]:
        """A select item: (attribute id, name, SQL text of its value)."""
        value = expr.child() if _class_name(expr) == "Alias" else expr
        return expr.exprId().id(), expr.name().lower(), self.render(value, block, node)

    # --- operators -------------------------------------------------------------------------------

    def filter(self, node: JavaObject, block: _Block) -> _Block:
        if block.limit is not None:
            block = self.wrapped(block)
        conjuncts = self.conjuncts(node.condition(), block, node)
        # σ over an aggregate is HAVING; over anything else it commutes down to the WHERE
        # (a filter on output columns commutes with projection, DISTINCT and ORDER BY)
        if block.group_by is not None:
            return attrs.evolve(block, having=block.having + conjuncts)
        return attrs.evolve(block, where=block.where + conjuncts)

    def project(self, node: JavaObject, block: _Block) -> _Block:
        if block.distinct or block.limit is not None:
            block = self.wrapped(block)
        return _selecting(block, [self.named(e, block, node) for e in _items(node.projectList())])

    def aggregate(self, node: JavaObject, block: _Block) -> _Block:
        if not (block.group_by is None and not block.distinct and not block.order and block.limit is None):
            block = self.wrapped(block)
        keys = tuple(self.render(e, block, node) for e in _items(node.groupingExpressions()))
        items = [self.named(e, block, node) for e in _items(node.aggregateExpressions())]
        return _selecting(block, items, group_by=keys)

    def join(self, node: JavaObject, left: _Block, right: _Block) -> _Block:
        join_type = node.joinType().sql()
        if join_type not in _JOINS:
            raise self.refusal(node, f"a {join_type} join")
        semi = join_type in _SEMI_JOINS
        # a WHERE stays above the joins that follow, which holds while they keep the rows it tested: a
        # RIGHT or FULL OUTER JOIN pads the left side's rows, so a side filtered before one is a derived
        # table, as is its right side's filter (R ⟖_c σ_p(S) keeps S's rows failing p, padded)
        pads = join_type in ("RIGHT OUTER", "FULL OUTER")
        if not left.selects_nothing_yet or (join_type == "LEFT OUTER" or pads) and left.where:
            left = self.wrapped(left)
        if not right.selects_nothing_yet or (right.joins and not semi) or pads and right.where:
            right = self.wrapped(right)
        scope = attrs.evolve(left, refs={**left.refs, **right.refs})
        on = self.conjuncts(node.condition().get(), scope, node) if node.condition().isDefined() else ()
        outputs = tuple((a.exprId().id(), a.name().lower()) for a in _items(node.output()))
        if semi:
            # R ⋉_c S = σ_{∃s ∈ S: c}(R) and R ▷_c S = σ_{∄s ∈ S: c}(R): Spark plans EXISTS as these
            # joins (RewritePredicateSubquery), and the planner maintains the EXISTS form
            test = " ".join(("SELECT 1 FROM", right.from_, *right.joins))
            if on + right.where:
                test += " WHERE " + " AND ".join(on + right.where)
            exists = f"{_SEMI_JOINS[join_type]} ({test})"
            return attrs.evolve(left, outputs=outputs, where=(*left.where, exists))
        # σ_p(R) ⋈ S = σ_p(R ⋈ S) (and R ⋈ σ_p(S) too for an inner join); a left join's right-side
        # filter joins the ON condition: R ⟕_c σ_p(S) = R ⟕_{c ∧ p} S (a RIGHT or FULL join has none here)
        where = left.where
        if join_type == "INNER":
            where += right.where
        else:
            on += right.where
        words = _JOINS[join_type]
        if words == "JOIN" and not on:
            words = "CROSS JOIN"
        clause = f"{words} {right.from_}" + (f" ON {' AND '.join(on)}" if on else "")
        return _Block(left.from_, scope.refs, outputs, (*left.joins, clause), where)

    def sort(self, node: JavaObject, block: _Block) -> _Block:
        if not getattr(node, "global")():
            raise self.refusal(node, "a partition-local Sort", "sortWithinPartitions has no result order")
        if block.limit is not None:
            block = self.wrapped(block)
        # a later sort decides the order alone
        return attrs.evolve(block, order=tuple(self.render(o, block, node) for o in _items(node.order())))

    def limit(self, node: JavaObject, local: JavaObject) -> _Block:
        count = node.limitExpr()
        if _class_name(local) != "LocalLimit" or not count.foldable():
            raise self.refusal(node, "a GlobalLimit that is not a LIMIT of a constant")
        block = self.block(_items(local.children())[0], None)
        if block.limit is not None:
            block = self.wrapped(block)
        return attrs.evolve(block, limit=int(count.eval(None)))

    def distinct(self, block: _Block) -> _Block:
        match block.bare_set_operation:
            # δ(R ⊎ S) = R ∪ S
            case ("UNION ALL", inputs):
                return self.set_block("UNION", inputs, block.outputs)
        if block.limit is not None:
            block = self.wrapped(block)
        return attrs.evolve(block, distinct=True)

    def set_operation(self, node: JavaObject, kind: str, children: list[JavaObject]) -> _Block:
        """``df.union`` (UNION ALL), ``intersect``, ``subtract`` (set semantics, as in SQL) as a derived
        table; the columns are named by the first input, as Catalyst's output is."""
        if kind == "Union" and node.byName():
            raise self.refusal(node, "a Union by name")
        words = "UNION ALL" if kind == "Union" else kind.upper() + (" ALL" if node.isAll() else "")
        inputs = [self.block(child, None) for child in children]
        inputs[0] = attrs.evolve(inputs[0], outputs=_unique_names(inputs[0].outputs))
        ids = tuple(a.exprId().id() for a in _items(node.output()))
        names = tuple(name for _, name in inputs[0].outputs)
        # each input in parentheses keeps its own ORDER BY and LIMIT
        texts = tuple(f"({block.sql()})" for block in inputs)
        return self.set_block(words, texts, tuple(zip(ids, names, strict=True)))

    def set_block(self, words: str, inputs: tuple[str, ...], outputs: tuple[tuple[int, str], ...]) -> _Block:
        query = f" {words} ".join(inputs)
        alias = "_" + words.split()[0].lower()
        return attrs.evolve(self.derived_table(f"({query})", outputs, alias), set_operation=(words, inputs))

    def deduplicate(self, node: JavaObject, child: JavaObject) -> _Block:
        keys = {key.exprId().id() for key in _items(node.keys())}
        if keys != {attribute.exprId().id() for attribute in _items(child.output())}:
            raise self.refusal(
                node, "a Deduplicate on some of the columns",
                "dropDuplicates(subset) keeps an arbitrary row per key; use distinct() or groupBy",
            )
        return self.distinct(self.block(child, None))
