"""Types and implicit casts of scalar expressions, resolved at plan time as Spark's analyzer does.

The SQL front end builds every call through ``typed_call``: it checks the arguments' types, inserts
the casts Spark 4 (ANSI mode) would insert (catalog/types.py has the rules), folds casts and
arithmetic of constants (``o_orderdate < '1995-03-15'`` compares with a DATE literal, so the rules see
a plain date range) and records the result type in ``Call.dtype``. What Spark's analyzer rejects is
refused here, naming the clause and the types, so no Python TypeError can reach a user at run time;
what Spark raises at run time raises ``SqlRuntimeError`` when a row meets it (planner/ir/values.py).

Only values that change under the cast get an explicit ``cast``: an integer meets a decimal without
one (Python compares and adds ``int`` and ``Decimal`` exactly, as Spark's widening does), while a
string read as a number, or a decimal read as a double, is cast.
"""

from __future__ import annotations

import decimal as pydecimal

from catalog import types
from catalog.literals import sql_literal
from catalog.types import (
    BIGINT,
    BOOLEAN,
    DATE,
    DOUBLE,
    INT,
    NULL,
    STRING,
    TIMESTAMP,
    TIMESTAMP_NTZ,
    TIMESTAMPS,
    DataType,
    DecimalType,
    IntervalType,
)
from planner.ir import functions, values
from planner.ir.expressions import AggregateCall, Call, Expr, Literal, cast_op, cast_target, type_of
from planner.ir.notation import print_expr
from planner.ir.timestamps import session_time_zone
from planner.ir.values import SqlRuntimeError, cast_value
from planner.sql.errors import UnsupportedSqlError

ARITHMETIC = ("+", "-", "*", "/", "%", "div")
COMPARISONS = ("=", "<>", "<", "<=", ">", ">=")


class TypeMismatchError(UnsupportedSqlError):
    """An expression Spark's analyzer rejects (DATATYPE_MISMATCH): names the clause and the types."""


def _mismatch(clause: str, what: str, args: tuple[Expr, ...]) -> TypeMismatchError:
    described = ", ".join(f"{sql_literal(a.value, a.type) if isinstance(a, Literal) else print_expr(a)} "
                          f"({type_of(a) or 'unknown type'})" for a in args)
    return TypeMismatchError(f"{clause}: {what} is not defined for {described} (Spark rejects it: DATATYPE_MISMATCH)")


def cast(expr: Expr, target: DataType, clause: str, compared_only: bool = True) -> Expr:
    """``expr`` as ``target``; a constant is converted now (``_constant_cast``).

    ``compared_only``: the value is only compared or computed with, so one that an int/Decimal
    comparison already treats exactly is left alone; a value that becomes the result (a CASE
    branch, COALESCE) is always cast, so a DECIMAL result holds a Decimal of its scale."""
    source = type_of(expr)
    if source == target or source is None or source == NULL:
        return expr
    if isinstance(expr, Literal):
        return _constant_cast(expr, target, clause, in_branch=not compared_only)
    if compared_only and _widens_exactly(source, target):
        return expr
    return Call(cast_op(target), (expr, *zone_argument(source, target)), target)


def zone_argument(source: DataType | None, target: DataType | None) -> tuple[Literal, ...]:
    """The session time zone as the last argument of an expression from ``source`` to ``target``
    when its value depends on it (a TIMESTAMP meeting a date, a string or a TIMESTAMP_NTZ), as
    Spark's analyzer gives such an expression the session's zone; else nothing."""
    if TIMESTAMP in (source, target) and {source, target} & {STRING, DATE, TIMESTAMP_NTZ}:
        return (Literal(session_time_zone.get(), STRING),)
    return ()


def _widens_exactly(source: DataType, target: DataType) -> bool:
    """An integer or decimal read as a wider integer or decimal keeps its value: Python's int and
    Decimal already compare and add exactly, so no cast is needed at run time."""
    if source in types.INTEGRAL:
        return target in types.INTEGRAL or isinstance(target, DecimalType)
    return isinstance(source, DecimalType) and isinstance(target, DecimalType)


def _constant_cast(literal: Literal, target: DataType, clause: str, in_branch: bool) -> Expr:
    """``literal`` cast now, as Spark's constant folding does. A cast that fails fails the query in
    Spark (refused here) unless it sits in a branch of CASE/COALESCE, which Spark leaves unfolded so
    it raises only if a row takes that branch: there it stays a run-time cast."""
    try:
        return Literal(cast_value(literal.value, literal.type, target, session_time_zone.get()), target)
    except SqlRuntimeError as error:
        if in_branch:
            return Call(cast_op(target), (literal, *zone_argument(literal.type, target)), target)
        raise UnsupportedSqlError(f"{clause}: {error} (Spark fails the query)") from None


def common(args: tuple[Expr, ...], clause: str, what: str, literal_digits: bool = False) -> DataType | None:
    """The one type ``args`` are compared or merged as, or a refusal naming them.

    ``literal_digits``: an integer literal counts as a decimal of just its digits, as Spark's
    ``DecimalPrecision`` does for a binary comparison; merging values (CASE, COALESCE, IN,
    GREATEST) goes through ``findWiderCommonType``, where an int is ``decimal(10,0)``.
    """
    result: DataType = NULL
    for arg in args:
        arg_type = type_of(arg)
        if arg_type is None:
            return None
        literal = arg.value if isinstance(arg, Literal) and literal_digits else None
        widened = types.common_type(result, arg_type, None, literal)
        if widened is None:
            raise _mismatch(clause, what, args)
        result = widened
    return result


def _unify(args: tuple[Expr, ...], clause: str, what: str, literal_digits: bool = False, compared_only: bool = True
           ) -> tuple[tuple[Expr, ...], DataType | None]:
    target = common(args, clause, what, literal_digits)
    if target is None:
        return args, None
    return tuple(cast(a, target, clause, compared_only) for a in args), target


def typed_call(op: str, args: tuple[Expr, ...], clause: str) -> Expr:
    """``Call(op, args)`` with Spark's implicit casts and its result type; untyped args stay untyped."""
    if any(type_of(a) is None for a in args):
        return Call(op, args)
    if op in ARITHMETIC:
        return _folded(_arithmetic(op, args, clause))
    if op in COMPARISONS or op in ("in", "not in", "between"):
        new_args, _ = _unify(args, clause, f"operator {op.upper()}", literal_digits=op not in ("in", "not in"))
        return Call(op, new_args, BOOLEAN)
    if op in ("and", "or", "not"):
        for arg in args:
            if type_of(arg) not in (BOOLEAN, NULL):
                raise _mismatch(clause, op.upper(), args)
        return Call(op, args, BOOLEAN)
    if op in ("like", "not like"):
        return Call(op, tuple(cast(a, STRING, clause) for a in args), BOOLEAN)
    if op in ("is null", "is not null"):
        return Call(op, args, BOOLEAN)
    if op == "neg":
        if type_of(args[0]) == NULL:  # Spark reads -NULL as a DOUBLE
            return Literal(None, DOUBLE)
        if not types.is_numeric(type_of(args[0])):
            raise _mismatch(clause, "unary minus", args)
        return Call(op, args, type_of(args[0]))
    return _function(op, args, clause)


def _folded(call: Expr) -> Expr:
    """Arithmetic on constants computed now, as Spark's constant folding does (``0.06 + 0.01`` is the
    decimal 0.07), so rules see plain constants; one that fails (``1 / 0``) stays, to raise if a row
    evaluates it, as in Spark."""
    if not (isinstance(call, Call) and call.op in ARITHMETIC and types.is_numeric(call.dtype)
            and all(isinstance(a, Literal) for a in call.args)):
        return call
    left, right = (a.value for a in call.args)
    if left is None or right is None:
        return Literal(None, call.dtype)
    try:
        return Literal(values.arithmetic(call.op, call.dtype)(left, right), call.dtype)
    except SqlRuntimeError:
        return call


def _function(op: str, args: tuple[Expr, ...], clause: str) -> Expr:
    match op:
        case "case":
            conditions, values = args[0:-1:2] if len(args) % 2 else args[0::2], args[1::2]
            if len(args) % 2:
                values = (*values, args[-1])
            for condition in conditions:
                if type_of(condition) != BOOLEAN:  # Spark refuses even a NULL literal here
                    raise _mismatch(clause, "a CASE condition", (condition,))
            new_values, target = _unify(tuple(values), clause, "the branches of CASE", compared_only=False)
            rebuilt = [x for pair in zip(conditions, new_values, strict=False) for x in pair]
            if len(args) % 2:
                rebuilt.append(new_values[-1])
            return Call(op, tuple(rebuilt), target)
        case "try" | "try_eval":  # Spark's TRY mode of a call / TryEval of an expression: NULL where it fails
            (inner,) = args
            return Call(op, args, type_of(inner)) if isinstance(inner, Call) else inner
        case _ if op.startswith("extract_"):
            date = cast(args[0], DATE, clause)
            return Call(op, (date,), INT)
        case _ if (target := cast_target(op)) is not None:
            return explicit_cast(args[0], target, clause)
    function = functions.registered(op)
    if function is None or function.typing is None:
        raise UnsupportedSqlError(f"function {op} in {clause} is not supported")
    return _registered_call(function, args, clause)


def _registered_call(function: functions.Function, args: tuple[Expr, ...], clause: str) -> Expr:
    """A call of a registered function: its typing rule's casts and result type (planner/ir/functions)."""
    try:
        signature = function.typing(functions.arguments(args))
    except functions.UnsupportedArgumentError as error:
        raise UnsupportedSqlError(f"{clause}: {error}") from None
    except functions.ArgumentTypeError as error:
        raise _mismatch(clause, str(error), args) from None
    cast_args = tuple(
        a if target is None else cast(a, target, clause, compared_only=False)
        for a, target in zip(args, signature.params, strict=True)
    )
    return Call(function.name, cast_args, signature.result)


def explicit_cast(operand: Expr, target: DataType, clause: str) -> Expr:
    """``CAST(operand AS target)``: the conversions Spark 4 allows in ANSI mode."""
    source = type_of(operand)
    allowed = (
        source in (target, NULL, STRING)
        or target == STRING
        or (types.is_numeric(source) and (types.is_numeric(target) or target == BOOLEAN))
        or (source == BOOLEAN and types.is_numeric(target))
        or (source in (DATE, *TIMESTAMPS) and target in (DATE, *TIMESTAMPS))
    )
    if not allowed:
        raise _mismatch(clause, f"CAST to {target}", (operand,))
    if isinstance(operand, Literal):
        return _constant_cast(operand, target, clause, in_branch=False)
    return operand if source == target else Call(cast_op(target), (operand, *zone_argument(source, target)), target)


def try_cast(operand: Expr, target: DataType, clause: str) -> Expr:
    """``TRY_CAST(operand AS target)``: the casts CAST allows, NULL where CAST fails at run time (a
    constant that cannot be cast is NULL now, not a failed query); what CAST refuses at plan time
    TRY_CAST refuses too, as Spark's analyzer does."""
    if isinstance(operand, Literal) and type_of(operand) != target:
        explicit_cast(Literal(None, type_of(operand)), target, clause)  # the conversion must be allowed
        try:
            return Literal(cast_value(operand.value, type_of(operand), target, session_time_zone.get()), target)
        except SqlRuntimeError:
            return Literal(None, target)
    return typed_call("try", (explicit_cast(operand, target, clause),), clause)


def _arithmetic(op: str, args: tuple[Expr, ...], clause: str) -> Expr:
    left, right = args
    lt, rt = type_of(left), type_of(right)
    if NULL in (lt, rt):
        return _null_arithmetic(op, left, right, clause)
    if set(TIMESTAMPS) & {lt, rt} or DATE in (lt, rt) and _day_time(lt if rt == DATE else rt):
        return _timestamp_arithmetic(op, left, right, clause)
    if DATE in (lt, rt):
        return _date_arithmetic(op, left, right, clause)
    # a string operand is read as a number: bigint beside an integer, double otherwise (AnsiTypeCoercion)
    if lt == STRING and rt == STRING:
        left, right = cast(left, DOUBLE, clause), cast(right, DOUBLE, clause)
    elif STRING in (lt, rt):
        other = rt if lt == STRING else lt
        as_number = BIGINT if other in types.INTEGRAL else DOUBLE
        left, right = cast(left, as_number, clause), cast(right, as_number, clause)
    lt, rt = type_of(left), type_of(right)
    if not (types.is_numeric(lt) and types.is_numeric(rt)):
        raise _mismatch(clause, f"operator {op.upper()}", args)
    if op == "div":
        if DOUBLE in (lt, rt):
            raise _mismatch(clause, "DIV (integral division)", args)
        return Call(op, (left, right), BIGINT)
    if DOUBLE in (lt, rt):
        return Call(op, (cast(left, DOUBLE, clause), cast(right, DOUBLE, clause)), DOUBLE)
    if lt in types.INTEGRAL and rt in types.INTEGRAL:
        if op == "/":
            return Call(op, (cast(left, DOUBLE, clause), cast(right, DOUBLE, clause)), DOUBLE)
        return Call(op, (left, right), BIGINT if BIGINT in (lt, rt) else INT)
    left_decimal = types.as_decimal(lt, left.value if isinstance(left, Literal) else None)
    right_decimal = types.as_decimal(rt, right.value if isinstance(right, Literal) else None)
    return Call(op, (left, right), types.decimal_result(op, left_decimal, right_decimal))


def _null_arithmetic(op: str, left: Expr, right: Expr, clause: str) -> Literal:
    """Arithmetic with a NULL literal: NULL (Spark's NullPropagation folds it, the other side unevaluated),
    of the type Spark's analyzer gives it after casting the NULL to the other side's type: ``d * NULL`` is
    ``d * d``'s decimal, ``i div NULL`` a bigint, ``date + NULL`` a TIMESTAMP (the NULL an interval),
    ``date - NULL`` an INTERVAL DAY; a string or boolean beside a NULL is refused as Spark refuses it, and
    ``NULL op NULL`` is a DOUBLE (a BIGINT for div)."""
    other = type_of(right) if type_of(left) == NULL else type_of(left)
    if other == NULL:
        return Literal(None, BIGINT if op == "div" else DOUBLE)
    if types.is_numeric(other):
        typed = tuple(Literal(None, other) if type_of(a) == NULL else a for a in (left, right))
        return Literal(None, type_of(_arithmetic(op, typed, clause)))
    if other in (DATE, TIMESTAMP, TIMESTAMP_NTZ) and op == "+":
        return Literal(None, TIMESTAMP if other == DATE else other)
    if other == DATE and op == "-":
        return Literal(None, IntervalType("day"))
    if other in TIMESTAMPS and op == "-":
        raise UnsupportedSqlError(f"{clause}: timestamp - NULL (an interval day to second) is not supported: "
                                  f"{print_expr(left)} - {print_expr(right)}")
    raise _mismatch(clause, f"operator {op.upper()}", (left, right))


def _day_time(dtype: DataType | None) -> bool:
    """An interval of hours, minutes or seconds: a date plus one is a TIMESTAMP, as in Spark."""
    return isinstance(dtype, IntervalType) and dtype.unit in ("hour", "minute", "second")


def _timestamp_arithmetic(op: str, left: Expr, right: Expr, clause: str) -> Expr:
    """``timestamp ± interval`` (``timestamp_shift``, the interval's sign folded in; a date plus a day-time
    interval is a TIMESTAMP plus it). ``timestamp - timestamp`` (an interval day to second) is not supported."""
    lt, rt = type_of(left), type_of(right)
    if op == "+" and isinstance(lt, IntervalType):
        return _timestamp_arithmetic(op, right, left, clause)
    if op in ("+", "-") and isinstance(right, Literal) and isinstance(rt, IntervalType) and lt in (DATE, *TIMESTAMPS):
        subject = cast(left, TIMESTAMP, clause) if lt == DATE else left
        amount, unit = right.value
        shift = Literal((amount if op == "+" else -amount, unit), rt)
        zone = zone_argument(TIMESTAMP, STRING) if type_of(subject) == TIMESTAMP else ()
        return Call("timestamp_shift", (subject, shift, *zone), type_of(subject))
    if op == "-" and lt in (DATE, STRING, *TIMESTAMPS) and rt in (DATE, STRING, *TIMESTAMPS):
        raise UnsupportedSqlError(f"{clause}: timestamp - timestamp (an interval day to second) is not supported: "
                                  f"{print_expr(left)} - {print_expr(right)}")
    raise _mismatch(clause, f"{op!r}", (left, right))


def _date_arithmetic(op: str, left: Expr, right: Expr, clause: str) -> Expr:
    """``date ± n`` (days), ``date ± interval``, ``date - date`` (an INTERVAL DAY, as in Spark)."""
    lt, rt = type_of(left), type_of(right)
    if op == "+" and rt == DATE and lt != DATE:
        return _date_arithmetic(op, right, left, clause)
    if lt == DATE and op in ("+", "-"):
        if rt in types.INTEGRAL or rt == NULL:
            return Call(op, (left, right), DATE)
        if isinstance(rt, IntervalType):
            return Call(op, (left, right), DATE)
        if rt == DATE and op == "-":
            return Call("date_diff", (left, right), IntervalType("day"))
        if rt == STRING and op == "-":
            return Call("date_diff", (left, cast(right, DATE, clause)), IntervalType("day"))
    raise _mismatch(clause, f"operator {op.upper()}", (left, right))


#: Spark's aggregates of a numeric argument read as DOUBLE, whose result is a DOUBLE: the variance
#: family (``CentralMomentAgg``) and the exact percentiles (``Percentile``, ``PercentileCont/Disc``).
DOUBLE_STATISTICS = frozenset({"stddev", "stddev_samp", "stddev_pop", "std", "variance", "var_samp", "var_pop",
                               "median", "percentile", "percentile_cont", "percentile_disc"})


def typed_aggregate(func: str, arg: Expr | None, distinct: bool, clause: str,
                    further_args: tuple[Expr, ...] = (), parameters: tuple = ()) -> AggregateCall:
    """An aggregate with Spark's result type: COUNT bigint, SUM/AVG widened, MIN/MAX as their argument,
    max_by/min_by as their first argument (``further_args``: its ordering; count(DISTINCT a, b)'s b),
    the variance family and the percentiles DOUBLE (``parameters``: a percentile's constants)."""
    if arg is None or func == "count":
        return AggregateCall(func, arg, distinct, BIGINT, further_args)
    arg_type = type_of(arg)
    if arg_type is None:
        return AggregateCall(func, arg, distinct, further_args=further_args, parameters=parameters)
    if func in ("min", "max", "max_by", "min_by"):
        return AggregateCall(func, arg, distinct, arg_type, further_args)
    if func in DOUBLE_STATISTICS:
        # a string is read as a double (ANSI implicit cast); a BOOLEAN or DATE is refused, as by Spark
        if arg_type == STRING:
            arg = cast(arg, DOUBLE, clause)
        elif not (types.is_numeric(arg_type) or arg_type == NULL):
            raise _mismatch(clause, f"{func.upper()} (a numeric argument)", (arg,))
        return AggregateCall(func, arg, distinct, DOUBLE, parameters=parameters)
    if arg_type == STRING:
        arg, arg_type = cast(arg, DOUBLE, clause), DOUBLE
    result = types.sum_type(arg_type) if func == "sum" else types.avg_type(arg_type)
    if result is None:
        raise _mismatch(clause, f"{func.upper()}", (arg,))
    return AggregateCall(func, arg, distinct, result)


def literal_of_number(text: str) -> Literal:
    """A numeric literal typed as Spark types it: int, then bigint, then decimal; ``1.5`` is a decimal,
    ``1e3`` a double."""
    lowered = text.lower()
    if "e" in lowered:
        return Literal(float(text), DOUBLE)
    if "." not in text:
        value = int(text)
        for integral in (INT, BIGINT):
            low, high = types.integral_range(integral)
            if low <= value <= high:
                return Literal(value, integral)
        return Literal(pydecimal.Decimal(value), types.literal_decimal_type(text))
    return Literal(pydecimal.Decimal(text), types.literal_decimal_type(text))
