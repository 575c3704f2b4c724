"""Spark's scalar functions, each declared once: the one registry every layer reads.

The SQL front end maps any function call to the Spark name the user wrote (planner/sql/calls.py)
and looks it up here (``lookup``); typing (planner/sql/typing.py) applies the entry's ``typing``
rule (implicit casts, result type, Spark's refusals); the lowering (operators/lowering/expr_operators.py)
makes its ``evaluator`` an operator of the expression compilers; ``table.py`` renders the registry as docs/supported-functions.md. The
``Call.op`` of a registered function is its Spark name (``upper``), whichever alias was written.

To add a function, add one ``Function`` to the ``FUNCTIONS`` tuple of its category module
(``numeric.py``, ``strings.py``, ``regex.py``, ``conditional.py``, ``dates.py``...; a new module is
listed in ``_MODULES`` below):

    Function(
        "abs", "numeric", "the absolute value",               # Spark name, category, one-line doc
        (1, 1), "number", "the number's type",                # arity (min, max or None), params, result (docs)
        typing=_same_numeric("abs"),                          # (Arg, ...) -> Signature, or ArgumentTypeError
        evaluator=_abs,                                       # Bound -> function of the argument values
        aliases=(),                                           # other names Spark accepts
    )

The evaluator sees non-NULL values unless ``nulls`` says otherwise (registry.py), and raises
``planner.ir.values.SqlRuntimeError`` where Spark raises in ANSI mode. A function Spark defines as
another expression (``nvl2`` is a CASE) has a ``rewrite`` instead; a non-deterministic one a
``refusal`` (nondeterministic.py). If sqlglot parses the new
function into a class whose Spark name or argument order differs from Spark's call, add its shape
to planner/sql/calls.py; then re-run ``python -m planner.ir.functions.table`` to regenerate the
docs table (a test fails while it differs).
"""

from __future__ import annotations

from planner.ir.functions import (
    calendar,
    conditional,
    dates,
    datetimes,
    nondeterministic,
    numeric,
    regex,
    strings,
    tried,
    utc_timestamps,
)
from planner.ir.functions.registry import (
    Arg,
    ArgumentCountError,
    ArgumentTypeError,
    Bound,
    Function,
    Signature,
    UnsupportedArgumentError,
    arguments,
)

_MODULES = (numeric, tried, strings, regex, conditional, dates, datetimes, calendar, utc_timestamps, nondeterministic)

#: Every registered function, in declaration order.
FUNCTIONS: tuple[Function, ...] = tuple(f for module in _MODULES for f in module.FUNCTIONS)


def _index() -> dict[str, Function]:
    index: dict[str, Function] = {}
    for function in FUNCTIONS:
        for name in (function.name, *function.aliases):
            if name in index:
                raise ValueError(f"the function name {name} is registered twice")
            index[name] = function
    return index


_BY_NAME = _index()


def lookup(name: str) -> Function | None:
    """The function Spark calls ``name`` (any case, an alias too), None when none is registered."""
    return _BY_NAME.get(name.lower())


def registered(op: str) -> Function | None:
    """The function a ``Call.op`` names (its Spark name), None for operators and special forms."""
    function = _BY_NAME.get(op)
    return function if function is not None and function.name == op else None


__all__ = [
    "FUNCTIONS", "Arg", "ArgumentCountError", "ArgumentTypeError", "Bound", "Function", "Signature", "UnsupportedArgumentError", "arguments",
    "lookup", "registered",
]
