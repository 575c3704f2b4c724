"""The DataFrame front end under Spark Connect: a Connect DataFrame's client-side plan → Spark SQL.

A Connect DataFrame has no Catalyst plan in this process (``catalyst.py`` needs ``df._jdf``); what it
has is ``df._plan``, the unresolved plan the client sends the server, as the protocol's
``Relation`` message (built here, with no server round trip). Its columns are names, not resolved
attributes: ``F.col("x")`` is a name resolved against the node's input, ``df["x"]`` a name tagged
with the plan id of ``df``, ``"o.x"`` a name qualified by an alias or a table. This module resolves
them the way Spark's analyzer does for the plans it accepts (an unqualified name must match exactly
one input column, case-insensitively, else it is refused as ambiguous or unknown), hands every
column an integer id, and renders the plan with the block writer the Catalyst reader uses
(``sql_blocks``), so the same DataFrame gets the same SQL in both modes where both accept it. Types
come from the catalog: the SQL front end types the text, as it types a view given as SQL.

Supported nodes: ``read`` of a catalog table, ``sql`` (``spark.sql(text)``, without parameters),
``project``, ``filter``, ``join`` (inner, cross, left, right and full outer, left semi/anti; ``on`` a
condition, or column names except for a right or full outer join), ``aggregate``
(``groupBy``), ``sort`` (global), ``limit``, ``deduplicate`` over all columns, ``set_op``
(union/intersect/except), ``subquery_alias``, ``with_columns``, ``with_columns_renamed``,
``drop``, ``to_df``, and ``hint``/``repartition`` (read through). Expressions: columns, literals,
function calls and Column operators, ``cast``, ``F.expr``/``selectExpr``/``where("...")`` strings
(parsed with sqlglot, their column names resolved like the others), ``*``. Any other node or
expression (a UDF, a window, a lambda, a file read, a local relation, rollup/cube/pivot...) is
refused with its name. An expression selected without an alias is named by its SQL text over bare
column names, which may differ from the name Spark gives it: alias it to be sure.
"""

from __future__ import annotations

import datetime
import itertools
import math
import re
from collections.abc import Sequence
from typing import Any

import attrs
import sqlglot
from sqlglot import exp

from catalog.schema import Catalog, UnknownTableError
from planner.sql.errors import UnsupportedDataFrameError
from planner.sql.sql_blocks import JOINS, Block, BlockWriter, Items, is_enclosed, is_reference, quote

Message = Any  # a Spark Connect protocol message (pyspark.sql.connect.proto)
Visible = Sequence[tuple[int, str]]  # the columns a name may resolve to: (id, lower-case name)

_JOIN_TYPES = {
    "JOIN_TYPE_INNER": "INNER", "JOIN_TYPE_CROSS": "CROSS", "JOIN_TYPE_LEFT_OUTER": "LEFT OUTER",
    "JOIN_TYPE_LEFT_SEMI": "LEFT SEMI", "JOIN_TYPE_LEFT_ANTI": "LEFT ANTI",
    "JOIN_TYPE_RIGHT_OUTER": "RIGHT OUTER", "JOIN_TYPE_FULL_OUTER": "FULL OUTER",
}
_INFIX = {"+": "+", "-": "-", "*": "*", "/": "/", "%": "%", "<": "<", ">": ">", "<=": "<=", ">=": ">=",
          "==": "=", "=": "=", "!=": "!=", "<=>": "<=>", "and": "AND", "or": "OR",
          "like": "LIKE", "ilike": "ILIKE", "rlike": "RLIKE"}
_POSTFIX = {"isnull": "IS NULL", "isnotnull": "IS NOT NULL"}
_REFUSED_EXPRESSIONS = {
    "common_inline_user_defined_function": "a user-defined function: its body is opaque to the planner",
    "window": "a window function: give the view as SQL text",
    "subquery_expression": "a subquery expression: give the view as SQL text",
}
_PLACEHOLDER = "__ivm_column_{}__"
_PLACEHOLDER_PATTERN = re.compile(r"`?__ivm_column_(\d+)__`?")
_IDENTIFIER_PART = re.compile(r"`((?:[^`]|``)*)`|([^.`]+)")


def connect_dataframe_sql(df: Any, catalog: Catalog) -> str:
    """The Spark SQL query a Spark Connect DataFrame's plan computes, over tables of ``catalog``."""
    return relation_sql(df._plan.plan(df._session.client), catalog)


def relation_sql(relation: Message, catalog: Catalog) -> str:
    """The Spark SQL query a Connect ``Relation`` message computes, over tables of ``catalog``."""
    if relation.WhichOneof("rel_type") == "sql":
        return _Translator(catalog).sql_text(relation.sql)  # the view is SQL text already
    return _Translator(catalog).block(relation).sql()


def _identifier(text: str) -> list[str]:
    """``a.b`` / ```a.b`.c`` as its parts, lower-cased (Spark resolves names case-insensitively)."""
    return [(quoted.replace("``", "`") if quoted else plain).lower() for quoted, plain in _IDENTIFIER_PART.findall(text)]


class _Translator(BlockWriter):
    """Renders one Connect plan; column ids are handed out here."""

    def __init__(self, catalog: Catalog):
        super().__init__()
        self.catalog = catalog
        self.ids = itertools.count(1)
        self.by_plan: dict[int, tuple[tuple[int, str], ...]] = {}  # plan id -> that node's columns
        self.qualifiers: dict[int, set[str]] = {}  # column id -> aliases and table names qualifying it
        self.names: dict[int, str] = {}  # column id -> its name where it was made
        self.bare = False  # rendering an output name: columns by their bare names

    def refusal(self, what: str, why: str = "") -> UnsupportedDataFrameError:
        reason = f" ({why})" if why else ""
        return UnsupportedDataFrameError(f"cannot maintain a Spark Connect DataFrame plan with {what}{reason}")

    # --- nodes -----------------------------------------------------------------------------------

    def block(self, relation: Message, alias: str | None = None) -> Block:
        kind = relation.WhichOneof("rel_type")
        node = getattr(relation, kind) if kind else None
        match kind:
            case "read":
                block = self.read(node, alias)
            case "sql":
                block = self.sql_block(node)
            case "subquery_alias":
                block = self.block(node.input, node.alias)
                for id_, _ in block.outputs:
                    self.qualifiers.setdefault(id_, set()).add(node.alias.lower())
                block = block if block.alias_hint else attrs.evolve(block, alias_hint=node.alias)
            case "hint" | "repartition" | "repartition_by_expression":
                block = self.block(node.input, alias)  # how Spark distributes the rows, not which rows
            case "project":
                block = self.projected(self.block(node.input), lambda scope: self.items(node.expressions, scope))
            case "filter":
                block = self.filtered(self.block(node.input), lambda scope: self.conjuncts(node.condition, scope))
            case "aggregate":
                block = self.aggregate(node)
            case "join":
                block = self.join(node)
            case "sort":
                if not node.is_global:
                    raise self.refusal("a partition-local sort", "sortWithinPartitions has no result order")
                block = self.sorted(self.block(node.input), lambda scope: tuple(self.order(o, scope) for o in node.order))
            case "limit":
                block = self.limited(self.block(node.input), node.limit)
            case "deduplicate":
                block = self.deduplicate(node)
            case "set_op":
                block = self.set_op(node)
            case "with_columns" | "with_columns_renamed" | "drop" | "to_df":
                block = self.reshaped(kind, node)
            case _:
                raise self.refusal(f"a {kind} node")
        if relation.common.HasField("plan_id"):
            self.by_plan[relation.common.plan_id] = block.outputs
        for id_, name in block.outputs:
            self.names.setdefault(id_, name)
        return block

    def read(self, node: Message, alias: str | None) -> Block:
        if node.WhichOneof("read_type") != "named_table":
            raise self.refusal("a read of files or a data source", "a view reads catalog tables")
        if node.named_table.options:
            raise self.refusal(f"a read of {node.named_table.unparsed_identifier} with options")
        table = _identifier(node.named_table.unparsed_identifier)[-1]
        try:
            names = self.catalog.table(table).column_names
        except UnknownTableError as err:
            raise self.refusal(f"a read of table {table!r}", str(err)) from None
        columns = [(next(self.ids), name.lower()) for name in names]
        for id_, _ in columns:
            self.qualifiers[id_] = {table}
        return self.relation(table, alias, columns)

    def sql_text(self, node: Message) -> str:
        if any(getattr(node, field, None) for field in ("args", "pos_args", "named_arguments", "pos_arguments")):
            raise self.refusal("a parameterized spark.sql query", "give the view as SQL text with its values")
        return node.query

    def sql_block(self, node: Message) -> Block:
        """``spark.sql(text)`` under other nodes: the text as a derived table, its columns named by
        its select list (sqlglot reads it; a ``*`` there is refused, its columns being unknown here)."""
        text = self.sql_text(node)
        names = [name.lower() for name in sqlglot.parse_one(text, read="spark").named_selects]
        if not names or "*" in names or "" in names:
            raise self.refusal("a spark.sql query whose columns are not all named", text)
        return self.derived_table(f"({text})", tuple((next(self.ids), name) for name in names), "_sql")

    def aggregate(self, node: Message) -> Block:
        group_type = type(node).GroupType.Name(node.group_type)
        if group_type != "GROUP_TYPE_GROUPBY":
            raise self.refusal(f"a {group_type.removeprefix('GROUP_TYPE_').lower()} aggregate", "give the view as SQL text")

        def grouping(scope: Block) -> tuple[tuple[str, ...], Items]:
            keys = tuple(self.render(e, scope) for e in node.grouping_expressions)
            # Spark keeps the grouping columns in front of the aggregates (spark.sql.retainGroupColumns)
            return keys, self.items([*node.grouping_expressions, *node.aggregate_expressions], scope)

        return self.aggregated(self.block(node.input), grouping)

    def join(self, node: Message) -> Block:
        join_type = _JOIN_TYPES.get(type(node).JoinType.Name(node.join_type))
        if join_type not in JOINS:
            raise self.refusal(f"a {type(node).JoinType.Name(node.join_type)} join")
        left, right = self.block(node.left), self.block(node.right)
        left, right, scope = self.join_inputs(join_type, left, right)
        visible = (*left.outputs, *right.outputs)
        kept = left.outputs if join_type in ("LEFT SEMI", "LEFT ANTI") else visible
        if node.using_columns and join_type in ("RIGHT OUTER", "FULL OUTER"):
            # Spark's merged column is the right side's (RIGHT) or coalesce(l.k, r.k) (FULL), not the left's
            raise self.refusal(f"a {join_type} join on column names",
                               "write the condition (df.join(other, df.k == other.k, ...))")
        if node.using_columns:
            # USING: each named column once, the left side's, in front (Spark's output for these joins)
            pairs = [(self.resolve(name, None, scope, left.outputs), self.resolve(name, None, scope, right.outputs))
                     for name in node.using_columns]
            on = tuple(f"{scope.refs[lid]} = {scope.refs[rid]}" for lid, rid in pairs)
            keys = [lid for lid, _ in pairs]
            dropped = {id_ for pair in pairs for id_ in pair}
            names = dict(visible)
            kept = (*((id_, names[id_]) for id_ in keys), *((i, n) for i, n in kept if i not in dropped))
        else:
            on = self.conjuncts(node.join_condition, scope, visible) if node.HasField("join_condition") else ()
        return self.joined(join_type, left, right, scope, on, tuple(kept))

    def deduplicate(self, node: Message) -> Block:
        block = self.block(node.input)
        names = {name for _, name in block.outputs}
        if not node.all_columns_as_keys and {n.lower() for n in node.column_names} != names:
            raise self.refusal("a dropDuplicates on some of the columns",
                               "it keeps an arbitrary row per key; use distinct() or groupBy")
        return self.distinct(block)

    def set_op(self, node: Message) -> Block:
        kind = type(node).SetOpType.Name(node.set_op_type).removeprefix("SET_OP_TYPE_")
        if node.by_name:
            raise self.refusal("a union by name")
        words = kind + (" ALL" if node.is_all else "")
        inputs = [self.block(node.left_input), self.block(node.right_input)]
        return self.combined(words, inputs, tuple(next(self.ids) for _ in inputs[0].outputs))

    def reshaped(self, kind: str, node: Message) -> Block:
        """withColumn(s), withColumnRenamed, drop, toDF: a projection of the input's columns."""
        def items(scope: Block) -> Items:
            columns: Items = [(id_, name, scope.refs[id_]) for id_, name in scope.outputs]
            if kind == "with_columns":
                for alias in node.aliases:
                    name = alias.name[0].lower()
                    value = (next(self.ids), name, self.render(alias.expr, scope))
                    at = [i for i, (_, n, _) in enumerate(columns) if n == name]
                    columns = [*columns[:at[0]], value, *columns[at[0] + 1:]] if at else [*columns, value]
            elif kind == "with_columns_renamed":
                renames = {r.col_name.lower(): r.new_col_name.lower() for r in node.renames}
                renames |= {k.lower(): v.lower() for k, v in node.rename_columns_map.items()}
                columns = [(id_ if n not in renames else next(self.ids), renames.get(n, n), t) for id_, n, t in columns]
            elif kind == "drop":
                dropped = {n.lower() for n in node.column_names}
                dropped |= {name for c in node.columns for id_, name in scope.outputs if id_ == self.column(c, scope)}
                columns = [c for c in columns if c[1] not in dropped]
            else:  # to_df
                if len(node.column_names) != len(columns):
                    raise self.refusal(f"a toDF of {len(node.column_names)} names over {len(columns)} columns")
                columns = [(next(self.ids), new.lower(), t) for (_, _, t), new in zip(columns, node.column_names, strict=True)]
            return columns

        return self.projected(self.block(node.input), items)

    # --- expressions -----------------------------------------------------------------------------

    def items(self, expressions: Sequence[Message], scope: Block) -> Items:
        """Select items: ``*`` expanded, aliases named, columns keeping their id and name."""
        items: Items = []
        for expression in expressions:
            kind = expression.WhichOneof("expr_type")
            if kind == "unresolved_star":
                items += [(id_, name, scope.refs[id_]) for id_, name in scope.outputs]
            elif kind == "alias":
                if len(expression.alias.name) != 1:
                    raise self.refusal("a multi-name alias")
                items.append((next(self.ids), expression.alias.name[0].lower(), self.render(expression.alias.expr, scope)))
            elif kind == "unresolved_attribute":
                id_ = self.column(expression, scope)
                items.append((id_, dict(scope.outputs).get(id_, _identifier(expression.unresolved_attribute.unparsed_identifier)[-1]),
                              self.render(expression, scope)))
            elif kind == "expression_string":
                items += self.string_items(expression.expression_string.expression, scope)
            else:
                items.append((next(self.ids), self.output_name(expression, scope), self.render(expression, scope)))
        return items

    def output_name(self, expression: Message, scope: Block) -> str:
        self.bare = True
        try:
            return self.render(expression, scope).lower()
        finally:
            self.bare = False

    def conjuncts(self, condition: Message, scope: Block, visible: Visible | None = None) -> tuple[str, ...]:
        """The rendered conjuncts of ``condition``: ``a & b & c`` reads as SQL text does."""
        call = condition.unresolved_function if condition.WhichOneof("expr_type") == "unresolved_function" else None
        if call is not None and call.function_name == "and" and len(call.arguments) == 2:
            return sum((self.conjuncts(a, scope, visible) for a in call.arguments), ())
        return (self.render(condition, scope, visible),)

    def order(self, order: Message, scope: Block) -> str:
        descending = type(order).SortDirection.Name(order.direction) == "SORT_DIRECTION_DESCENDING"
        nulls_first = type(order).NullOrdering.Name(order.null_ordering) == "SORT_NULLS_FIRST"
        text = self.render(order.child, scope) + (" DESC" if descending else " ASC")
        # Spark's defaults: NULLS FIRST ascending, NULLS LAST descending
        return text if nulls_first != descending else text + (" NULLS FIRST" if nulls_first else " NULLS LAST")

    def column(self, expression: Message, scope: Block, visible: Visible | None = None) -> int:
        attribute = expression.unresolved_attribute
        plan_id = attribute.plan_id if attribute.HasField("plan_id") else None
        return self.resolve(attribute.unparsed_identifier, plan_id, scope, visible)

    def resolve(self, identifier: str, plan_id: int | None, scope: Block, visible: Visible | None = None) -> int:
        """The id of the column ``identifier`` names among ``visible`` (default: the scope's columns)."""
        *qualifier, name = _identifier(identifier)
        candidates = list(visible if visible is not None else scope.outputs)
        if plan_id is not None and plan_id in self.by_plan:
            candidates = [c for c in self.by_plan[plan_id] if c[0] in scope.refs]
        found = [id_ for id_, n in candidates
                 if n == name and (not qualifier or qualifier[-1] in self.qualifiers.get(id_, ()))]
        if len(found) != 1:
            problem = "no such column among " if not found else "an ambiguous name among "
            raise self.refusal(f"column {identifier!r}", problem + ", ".join(dict.fromkeys(n for _, n in candidates)))
        return found[0]

    def reference(self, id_: int, scope: Block) -> str:
        if self.bare:
            return quote(self.names[id_])
        text = scope.refs[id_]
        return text if is_reference(text) or is_enclosed(text) else f"({text})"

    def render(self, expression: Message, scope: Block, visible: Visible | None = None) -> str:
        """``expression`` as SQL text valid in ``scope``'s clauses; names resolve among ``visible``."""
        kind = expression.WhichOneof("expr_type")
        match kind:
            case "unresolved_attribute":
                return self.reference(self.column(expression, scope, visible), scope)
            case "literal":
                return self.literal(expression.literal)
            case "alias":
                return self.render(expression.alias.expr, scope, visible)
            case "cast":
                cast = expression.cast
                words = "TRY_CAST" if type(cast).EvalMode.Name(cast.eval_mode) == "EVAL_MODE_TRY" else "CAST"
                return f"{words}({self.render(cast.expr, scope, visible)} AS {self.type_text(cast)})"
            case "unresolved_function":
                return self.call(expression.unresolved_function, scope, visible)
            case "expression_string":
                return self.string_expression(expression.expression_string.expression, scope, visible)
            case "unresolved_star":
                return "*"
        raise self.refusal(f"a {kind} expression", _REFUSED_EXPRESSIONS.get(kind, ""))

    def call(self, call: Message, scope: Block, visible: Visible | None) -> str:
        name = call.function_name
        args = [self.render(a, scope, visible) for a in call.arguments]
        if name in _INFIX and len(args) == 2:
            return f"({args[0]} {_INFIX[name]} {args[1]})"
        if name.lower() in _POSTFIX and len(args) == 1:
            return f"({args[0]} {_POSTFIX[name.lower()]})"
        if name == "not" and len(args) == 1:
            return f"(NOT {args[0]})"
        if name == "negative" and len(args) == 1:
            return f"(- {args[0]})"
        if name == "in" and args:
            return f"({args[0]} IN ({', '.join(args[1:])}))"
        if name == "when":  # F.when(c, v).when(...).otherwise(e): the pairs, then the default
            pairs = " ".join(f"WHEN {c} THEN {v}" for c, v in zip(args[0::2], args[1::2], strict=False))
            default = f" ELSE {args[-1]}" if len(args) % 2 else ""
            return f"CASE {pairs}{default} END"
        return f"{name}({'DISTINCT ' if call.is_distinct else ''}{', '.join(args)})"

    def literal(self, literal: Message) -> str:
        kind = literal.WhichOneof("literal_type")
        value = getattr(literal, kind) if kind else None
        match kind:
            case "null":
                return "NULL"
            case "boolean":
                return "TRUE" if value else "FALSE"
            case "byte" | "short" | "integer":
                return str(value)
            case "long":
                return f"CAST({value} AS BIGINT)"
            case "float" | "double":
                # 1e+300 is a DOUBLE literal in Spark SQL, 1.5 a DECIMAL one (cast exactly)
                text = repr(float(value))
                if not math.isfinite(value):
                    return f"CAST('{text}' AS DOUBLE)"
                return text if "e" in text else f"CAST({text} AS DOUBLE)"
            case "decimal":
                if value.HasField("precision") and value.HasField("scale"):
                    return f"CAST({value.value} AS DECIMAL({value.precision}, {value.scale}))"
                return value.value
            case "string":
                return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
            case "date":
                return f"DATE '{datetime.date(1970, 1, 1) + datetime.timedelta(days=value)}'"
        raise self.refusal(f"a {kind} literal")

    def type_text(self, cast: Message) -> str:
        if cast.WhichOneof("cast_to_type") == "type_str":
            return cast.type_str
        from pyspark.sql.connect.types import proto_schema_to_pyspark_data_type

        return proto_schema_to_pyspark_data_type(cast.type).simpleString()

    # --- SQL strings (F.expr, selectExpr, where("...")) ---------------------------------------------

    def string_expression(self, text: str, scope: Block, visible: Visible | None) -> str:
        tree = self.parsed(text)
        return self.string_sql(tree.this if isinstance(tree, exp.Alias) else tree, scope, visible)

    def string_items(self, text: str, scope: Block) -> Items:
        tree = self.parsed(text)
        if isinstance(tree, exp.Star):
            return [(id_, name, scope.refs[id_]) for id_, name in scope.outputs]
        if isinstance(tree, exp.Alias):
            return [(next(self.ids), tree.alias.lower(), self.string_sql(tree.this, scope, None))]
        if isinstance(tree, exp.Column) and not isinstance(tree.this, exp.Star):
            id_ = self.string_column(tree, scope, None)
            return [(id_, dict(scope.outputs)[id_], self.reference(id_, scope))]
        return [(next(self.ids), text.strip().lower(), self.string_sql(tree, scope, None))]

    def parsed(self, text: str) -> exp.Expression:
        try:
            return sqlglot.parse_one(text, read="spark")
        except sqlglot.errors.ParseError as err:
            raise self.refusal(f"the SQL expression {text!r}", str(err).splitlines()[0]) from None

    def string_column(self, column: exp.Column, scope: Block, visible: Visible | None) -> int:
        identifier = ".".join(quote(part.name) for part in column.parts)
        return self.resolve(identifier, None, scope, visible)

    def string_sql(self, tree: exp.Expression, scope: Block, visible: Visible | None) -> str:
        """``tree`` as Spark SQL, each column name replaced by what it stands for in ``scope``."""
        tree = tree.copy()
        for column in list(tree.find_all(exp.Column)):
            if isinstance(column.this, exp.Star):
                continue
            id_ = self.string_column(column, scope, visible)
            column.replace(exp.column(_PLACEHOLDER.format(id_)))
        text = tree.sql(dialect="spark")
        return _PLACEHOLDER_PATTERN.sub(lambda m: self.reference(int(m.group(1)), scope), text)
