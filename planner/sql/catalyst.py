"""The DataFrame front end: a Spark DataFrame → logical plan, by walking Catalyst's analyzed plan.

A view given as a DataFrame is planned from ``df._jdf.queryExecution().analyzed()``, read through
py4j, in Spark's classic mode; a Spark Connect DataFrame has no ``_jdf``, and is read from its
client-side plan by ``connect_plan.py`` instead.

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
too, a side filtered before them made a derived table (``sql_blocks.BlockWriter.join_inputs``). Expressions are rendered with Catalyst's
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
from typing import Any

import attrs

from catalog.schema import Catalog, UnknownTableError
from planner.ir.logical import LogicalPlan
from planner.sql.errors import UnsupportedDataFrameError, UnsupportedSqlError
from planner.sql.sql_blocks import JOINS, Block, BlockWriter, is_enclosed, is_reference
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
_PLACEHOLDER = "__ivm_attribute_{}__"
_PLACEHOLDER_PATTERN = re.compile(r"`?__ivm_attribute_(\d+)__`?")  # `...` should Catalyst quote it


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
    if jdf is None and hasattr(df, "_plan"):  # Spark Connect: the client-side plan, read by name
        from planner.sql.connect_plan import connect_dataframe_sql

        return connect_dataframe_sql(df, catalog)
    if jdf is None:
        raise UnsupportedDataFrameError(
            f"a DataFrame view needs a Spark DataFrame (a Catalyst plan in classic mode, or a Spark Connect "
            f"plan); a {type(df).__module__}.{type(df).__qualname__} is neither: give the view as SQL text instead"
        )
    jvm = df.sparkSession._jvm
    return _Translator(catalog, jvm).query(jdf.queryExecution().analyzed())


def _class_name(obj: JavaObject) -> str:
    return obj.getClass().getSimpleName()


def _items(seq: JavaObject) -> list[JavaObject]:
    """A Scala ``Seq`` as a Python list."""
    return [seq.apply(i) for i in range(seq.size())]


def _first_line(node: JavaObject, width: int = 160) -> str:
    text = node.toString().splitlines()[0]
    return text if len(text) <= width else text[: width - 1] + "…"


class _Translator(BlockWriter):
    """Renders one analyzed plan."""

    def __init__(self, catalog: Catalog, jvm: JavaObject):
        super().__init__()
        self.catalog = catalog
        self.jvm = jvm
        self.refused_classes = [(jvm.java.lang.Class.forName(name), why) for name, why in _REFUSED_EXPRESSIONS]
        self.user_specified_cast = jvm.org.apache.spark.sql.catalyst.expressions.Cast.USER_SPECIFIED_CAST()

    def query(self, plan: JavaObject) -> str:
        return self.block(plan, None).sql()

    def block(self, node: JavaObject, alias: str | None) -> Block:
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
                return self.table_relation(node, self._table_name(node), alias)
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

    def table_relation(self, node: JavaObject, table: str, alias: str | None) -> Block:
        try:
            known = set(self.catalog.table(table).column_names)
        except UnknownTableError as err:
            raise self.refusal(node, f"a read of table {table!r}", str(err)) from None
        columns = []
        for attribute in _items(node.output()):
            name = attribute.name().lower()
            if name not in known:
                raise self.refusal(node, f"column {name!r} of table {table}", "the catalog does not know it")
            columns.append((attribute.exprId().id(), name))
        return self.relation(table, alias, columns)

    # --- expressions -----------------------------------------------------------------------------

    def render(self, expr: JavaObject, block: Block, node: JavaObject) -> str:
        """``expr`` as SQL text valid in ``block``'s clauses; ``node`` is named in refusals."""
        sql = self._placeheld(expr, node).sql()

        def reference(match: re.Match) -> str:
            id_ = int(match.group(1))
            if id_ not in block.refs:
                raise self.refusal(node, f"attribute #{id_}", "it is not an output of the node's child")
            text = block.refs[id_]
            return text if is_reference(text) or is_enclosed(text) else f"({text})"

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

    def conjuncts(self, condition: JavaObject, block: Block, node: JavaObject) -> tuple[str, ...]:
        """The rendered conjuncts of ``condition``: ``a AND b AND c`` reads as SQL text does."""
        if _class_name(condition) != "And":
            return (self.render(condition, block, node),)
        return self.conjuncts(condition.left(), block, node) + self.conjuncts(condition.right(), block, node)

    def named(self, expr: JavaObject, block: Block, node: JavaObject) -> tuple[int, str, str]:
        """A select item: (attribute id, name, SQL text of its value)."""
        value = expr.child() if _class_name(expr) == "Alias" else expr
        return expr.exprId().id(), expr.name().lower(), self.render(value, block, node)

    # --- operators -------------------------------------------------------------------------------

    def filter(self, node: JavaObject, block: Block) -> Block:
        return self.filtered(block, lambda scope: self.conjuncts(node.condition(), scope, node))

    def project(self, node: JavaObject, block: Block) -> Block:
        return self.projected(block, lambda scope: [self.named(e, scope, node) for e in _items(node.projectList())])

    def aggregate(self, node: JavaObject, block: Block) -> Block:
        return self.aggregated(block, lambda scope: (
            tuple(self.render(e, scope, node) for e in _items(node.groupingExpressions())),
            [self.named(e, scope, node) for e in _items(node.aggregateExpressions())],
        ))

    def join(self, node: JavaObject, left: Block, right: Block) -> Block:
        join_type = node.joinType().sql()
        if join_type not in JOINS:
            raise self.refusal(node, f"a {join_type} join")
        left, right, scope = self.join_inputs(join_type, left, right)
        on = self.conjuncts(node.condition().get(), scope, node) if node.condition().isDefined() else ()
        outputs = tuple((a.exprId().id(), a.name().lower()) for a in _items(node.output()))
        return self.joined(join_type, left, right, scope, on, outputs)

    def sort(self, node: JavaObject, block: Block) -> Block:
        if not getattr(node, "global")():
            raise self.refusal(node, "a partition-local Sort", "sortWithinPartitions has no result order")
        return self.sorted(block, lambda scope: tuple(self.render(o, scope, node) for o in _items(node.order())))

    def limit(self, node: JavaObject, local: JavaObject) -> Block:
        count = node.limitExpr()
        if _class_name(local) != "LocalLimit" or not count.foldable():
            raise self.refusal(node, "a GlobalLimit that is not a LIMIT of a constant")
        return self.limited(self.block(_items(local.children())[0], None), int(count.eval(None)))

    def set_operation(self, node: JavaObject, kind: str, children: list[JavaObject]) -> Block:
        """``df.union`` (UNION ALL), ``intersect``, ``subtract`` (set semantics, as in SQL)."""
        if kind == "Union" and node.byName():
            raise self.refusal(node, "a Union by name")
        words = "UNION ALL" if kind == "Union" else kind.upper() + (" ALL" if node.isAll() else "")
        inputs = [self.block(child, None) for child in children]
        return self.combined(words, inputs, tuple(a.exprId().id() for a in _items(node.output())))

    def deduplicate(self, node: JavaObject, child: JavaObject) -> Block:
        keys = {key.exprId().id() for key in _items(node.keys())}
        if keys != {attribute.exprId().id() for attribute in _items(child.output())}:
            raise self.refusal(
                node, "a Deduplicate on some of the columns",
                "dropDuplicates(subset) keeps an arbitrary row per key; use distinct() or groupBy",
            )
        return self.distinct(self.block(child, None))
