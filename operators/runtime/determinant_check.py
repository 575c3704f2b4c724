"""One determinant value's share of a declared functional dependency check, for the Spark runner's
dependency stage (``spark_dependencies``), which is keyed by the dependency's determinant.

The local ``Validator`` checks a dependency ``X → Y`` over a whole batch with ``DependencyState``
(``dependencies.py``); the same call decides here, fed only the changes whose determinant is ``x`` and
the state held for ``x`` (its dependent value and how many live rows carry it), so the verdicts and
the reason texts are the local ones: the batch is netted per determinant (order-insensitive), the
value that stays is the stored one if a stored row keeps it, else the first inserted.

What differs is where the primary key lives. Locally an insert quarantined for breaking the
dependency never enters the key state, and a later delete of that row is refused as absent. On Spark
the key-validation stage ran first and already holds the row (stages never talk back upstream), so
this stage remembers it as a *ghost* (row → copies, per determinant): a later delete of a ghost is
refused here with the local reason for an absent row, and the key stage forgets the row with that
delete, so both agree again. Ghosts exist only under the ``quarantine`` policy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from operators.runtime.dependencies import DependencyState
from operators.zset import Row

#: A change as the validation stages pass it on: (``_seq``, ``_op``, row), in apply order.
SeqChange = tuple[int | None, int, Row]


@attrs.frozen
class DeterminantOutcome:
    """What a batch did to one determinant: the accepted changes and the rejected ones with their
    reasons (both in apply order), the dependent value held after it (``[value, rows]`` or None) and the ghosts."""

    accepted: list[SeqChange]
    rejected: list[tuple[SeqChange, str]]
    held: list | None
    ghosts: dict[Row, int]


def check_determinant(dependency: DependencyState, x: tuple, changes: Sequence[SeqChange], held: list | None,
                      ghosts: dict[Row, int], absent: Callable[[Row], str]) -> DeterminantOutcome:
    """Check ``changes`` (all with determinant ``x``, in apply order) against ``held`` and ``ghosts``.

    As the local validator under quarantine: an insert that breaks the dependency is set aside and the
    changes are judged again without it, until none breaks it. A set-aside insert becomes a ghost; a
    delete of a ghost is refused with ``absent(row)``. The caller raises for the first rejection under
    the ``error`` policy (then nothing of the batch is kept).
    """
    offenders: dict[int, str] = {}
    while True:
        remaining = dict(ghosts)
        accepted: list[tuple[int, Row, int]] = []
        rejected: list[tuple[SeqChange, str]] = []
        for position, (seq, op, row) in enumerate(changes):
            if position in offenders:
                remaining[row] = remaining.get(row, 0) + 1
                rejected.append(((seq, op, row), offenders[position]))
            elif op == -1 and remaining.get(row):
                remaining[row] -= 1
                rejected.append(((seq, op, row), absent(row)))
            else:
                accepted.append((position, row, op))
        dependency.values = {} if held is None else {x: held}
        reasons, writes = dependency.violations(accepted)
        if not reasons:
            break
        offenders.update(reasons)
    for _, value in writes:  # at most one: the changes share the determinant x
        held = None if value is None else list(value)
    return DeterminantOutcome([changes[position] for position, _, _ in accepted], rejected, held,
                              {row: copies for row, copies in remaining.items() if copies})
