"""The compiled program's template of a ring aggregate (``GroupAggregateStage`` whose aggregates are
all rings: SUM, COUNT, AVG, STDDEV/VARIANCE): the body of ``_ring<unit>(buffer, touched)``, which
applies a batch's buffered (row, weight) changes to the state ``_S<unit>``: group key → [row count,
then per aggregate its sum and its non-NULL count], as ``GroupAggregateStage.process`` keeps them,
noting each touched group's old state in ``touched`` (the runner finishes and undoes from there).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from operators.doubles import SCALE_BITS, non_finite
from operators.stages.source_text import ProgramText, SourceUnit, indented
from operators.structures.moments import VARIANCE_FUNCTIONS, moments


def ring_source(program: ProgramText, unit: SourceUnit, where: Callable | None, group_by: Sequence[Callable],
                aggregates: Sequence) -> list[str]:
    """The lines of the ring function's body (module docstring) for the stage's ``where``, ``group_by``
    and ``aggregates`` (its ``AggregateSpec``s)."""
    u = unit.id
    body = ["for row, w in buffer:"]
    loop = []
    if where is not None:
        loop += [f"if not {program.keeps(where, 'row')}:", "    continue"]
    loop.append(f"k = ({''.join(program.value_of(g, 'row') + ', ' for g in group_by).removesuffix(' ')})")
    for i, spec in enumerate(aggregates):
        if spec.argument is not None:
            loop.append(f"a{i} = {program.value_of(spec.argument, 'row')}")
    empty = [0] + [None, 0] * len(aggregates)
    loop += [f"st = _S{u}_get(k)", "if k not in touched:", "    touched[k] = None if st is None else st.copy()",
             "if st is None:", f"    st = _S{u}[k] = {empty!r}", "st[0] += w"]
    for i, spec in enumerate(aggregates):
        value, count = 1 + 2 * i, 2 + 2 * i
        if spec.argument is None:
            loop.append(f"st[{count}] += w")
            continue
        loop += [f"if a{i} is not None:", f"    st[{count}] += w"]
        if spec.func in VARIANCE_FUNCTIONS:  # summed as its exact (x, x²) payload
            loop.append(f"    a{i} = {program.constant(moments, 'moments')}(a{i})")
        if spec.func != "count":
            if spec.double and spec.func not in VARIANCE_FUNCTIONS:
                # operators/doubles.exact inlined (a call is 40% of its cost): the exact Σx·2**1074
                loop += ["    try:", f"        n, d = a{i}.as_integer_ratio()",
                         f"        a{i} = n << ({SCALE_BITS + 1} - d.bit_length())",
                         "    except (OverflowError, ValueError):",  # NaN or ±Infinity: counted apart
                         f"        a{i} = {program.constant(non_finite, 'non_finite')}(a{i})"]
            loop += [f"    v = st[{value}]", f"    st[{value}] = a{i} * w if v is None else v + a{i} * w"]
    return body + indented(loop)
