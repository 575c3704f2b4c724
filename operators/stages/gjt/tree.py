"""The generalized join tree a GJT stage maintains, as the lowering hands it over: nodes in the order
of their tuples' variables, leaves naming their input port, and the inequalities on each edge
(pred(parent → child), IEDyn Definition 3.1)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import attrs


@attrs.frozen
class Bound:
    """The predicate ``left op right + offset`` with ``op`` in ``<``, ``<=``."""

    left: str
    op: str
    right: str
    offset: int | float | Decimal | timedelta = 0  # a timedelta for dates (date + n days, + interval)


@attrs.frozen
class TEdge:
    child: TNode
    predicates: tuple[Bound, ...] = ()  # pred(parent -> child)


@attrs.frozen
class TNode:
    """A GJT node: ``variables`` in the order of its tuples; a leaf names the port of its rows."""

    variables: tuple[str, ...]
    children: tuple[TEdge, ...] = ()
    port: int | None = None

