"""Rings for view-tree payloads (Olteanu PODS'24 §2; F-IVM, Nikolic & Olteanu SIGMOD'18 / VLDBJ'23).

A view tree computes ``Σ_bound Π_atoms R · Π_variables lift(X)`` over one ring: the ring decides
what is aggregated, the view tree only joins and marginalizes. Every ring here is commutative and
carries the *count* of the join tuples it summarizes, so a stored view entry is zero exactly when
no tuple supports it (multiplicities are non-negative in a valid database): view trees drop zero
entries and enumerate only non-zero ones.

- ``CountRing``: ℤ; COUNT(*) and the multiplicities of Z-sets.
- ``SumRing(k)``: ``(count, (Σv_1, …, Σv_k))`` with ``(c1, s1)(c2, s2) = (c1c2, c2s1 + c1s2)``; each
  ``v_i`` is lifted at one variable, so ``SUM(v_i)`` and ``AVG(v_i) = Σv_i / count`` are read off one
  payload.
- ``CofactorRing(m)``: the degree-m covariance ring ``(c, s, Q)`` with ``s = Σx`` (m-vector) and
  ``Q = Σxxᵀ`` (m×m, symmetric, stored as its upper triangle row by row). The product, for payloads
  over disjoint sets of variables, is ``c = c1c2``, ``s = c2s1 + c1s2``, ``Q = c2Q1 + c1Q2 + s1s2ᵀ +
  s2s1ᵀ``: the cross terms ``s1s2ᵀ`` are ``Σ x_i x_j`` for features from different relations,
  which per-relation sums alone cannot give.

Why one cofactor payload per view instead of one view per ``SUM(a*b)``: with 10 features a
regression needs COUNT, 10 ``SUM(x_i)`` and 55 ``SUM(x_i*x_j)`` (i ≤ j), 66 aggregates. As
separate views each would repeat the whole join's maintenance: 66 hash maps per view-tree node,
66 lookups per delta and node. As one payload they share keys, lookups and the join: one hash
entry per view key holding 66 numbers, computed by the product above in O(m²) arithmetic.

Arithmetic is Python's own, so payloads are exact for int and Fraction values, and for Decimal
within the Decimal context's precision (28 digits by default; raise it for wide DECIMALs). A
``SumRing`` lifts a double into an exact ``DoubleSum`` (operators/doubles.py), read once, correctly
rounded, so deletes leave no float residue; ``CofactorRing`` keeps doubles as floats (its products of
sums would need exact products of ``DoubleSum``s). Payloads are plain ints and tuples: cheap to build,
hash-free, picklable.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from fractions import Fraction
from numbers import Number
from operator import add as _add
from operator import neg as _neg
from typing import Any, Protocol

import numpy

from operators.doubles import sum_value, summand


class Ring(Protocol):
    """A commutative ring of payloads (zero, one, +, ·, −) with ``lift``, F-IVM's per-variable map
    from a value into the ring; ``from_int(n)`` is ``n · one``, the payload of a tuple of weight n."""

    zero: Any
    one: Any

    def add(self, a: Any, b: Any) -> Any: ...

    def mul(self, a: Any, b: Any) -> Any: ...

    def neg(self, a: Any) -> Any: ...

    def is_zero(self, a: Any) -> bool: ...

    def lift(self, slot: int, value: Any) -> Any: ...

    def mul_lift(self, a: Any, slot: int, value: Any) -> Any:
        """``mul(a, lift(slot, value))``, cheaper: a lift is sparse (what a view does per variable value)."""

    def from_int(self, n: int) -> Any: ...


class CountRing:
    """ℤ: the count of join tuples (COUNT(*)); ``lift`` is ``one`` for every variable.

    >>> ring = CountRing()
    >>> ring.mul(ring.add(2, 3), ring.from_int(-1)), ring.lift(0, "any value")
    (-5, 1)
    """

    zero, one = 0, 1

    def add(self, a: int, b: int) -> int:
        return a + b

    def mul(self, a: int, b: int) -> int:
        return a * b

    def neg(self, a: int) -> int:
        return -a

    def is_zero(self, a: int) -> bool:
        return a == 0

    def lift(self, slot: int, value: Any) -> int:
        return 1

    def mul_lift(self, a: int, slot: int, value: Any) -> int:
        return a

    def from_int(self, n: int) -> int:
        return n

    def __repr__(self) -> str:
        return "CountRing()"


class SumRing:
    """``(count, (Σv_1, …, Σv_k))``: COUNT, k SUMs and their AVGs over a join in one payload.

    >>> ring = SumRing(2)
    >>> price, units = ring.lift(0, 5), ring.lift(1, 3)   # two variables of the same join tuple
    >>> ring.mul(ring.from_int(2), ring.mul(price, units))   # that tuple twice
    (2, (10, 6))
    >>> SumRing.average((2, (10, 6)), 0)
    Fraction(5, 1)
    """

    def __init__(self, width: int):
        self.width = width
        self.zero = (0, (0,) * width)
        self.one = (1, (0,) * width)

    def add(self, a: tuple, b: tuple) -> tuple:
        return (a[0] + b[0], tuple(map(_add, a[1], b[1])))

    def mul(self, a: tuple, b: tuple) -> tuple:
        c1, s1 = a
        c2, s2 = b
        return (c1 * c2, tuple(c2 * x + c1 * y for x, y in zip(s1, s2, strict=True)))

    def neg(self, a: tuple) -> tuple:
        return (-a[0], tuple(map(_neg, a[1])))

    def is_zero(self, a: tuple) -> bool:
        return a[0] == 0 and not any(a[1])

    def lift(self, slot: int, value: Any) -> tuple:
        sums = [0] * self.width
        sums[slot] = summand(value)  # a double kept exactly (operators/doubles.py): deletes leave no residue, no NaN
        return (1, tuple(sums))

    def mul_lift(self, a: tuple, slot: int, value: Any) -> tuple:
        count, sums = a
        changed = list(sums)
        changed[slot] += count * summand(value)
        return (count, tuple(changed))

    def from_int(self, n: int) -> tuple:
        return (n, (0,) * self.width)

    @staticmethod
    def average(payload: tuple, slot: int) -> Any:
        """AVG of slot ``slot``: exact (a Fraction) for int and Fraction sums, a double's correctly rounded
        sum over the count for DOUBLE; None over no tuples."""
        count, sums = payload
        if count == 0:
            return None
        total = sum_value(sums[slot])
        return total / count if isinstance(total, float | Decimal) else Fraction(total, 1) / count

    def __repr__(self) -> str:
        return f"SumRing({self.width})"


class CofactorRing:
    """The degree-m covariance ring ``(c, s, Q)``; Q holds the upper triangle ``Q[i][j]``, i ≤ j.

    >>> ring = CofactorRing(2)
    >>> row = ring.mul(ring.lift(0, 2), ring.lift(1, 3))   # one tuple with x0 = 2, x1 = 3
    >>> row                                                # Q = (x0², x0·x1, x1²)
    (1, (2, 3), (4, 6, 9))
    >>> ring.add(row, ring.mul(ring.lift(0, 1), ring.lift(1, 1)))
    (2, (3, 4), (5, 7, 10))
    """

    def __init__(self, degree: int):
        self.degree = degree
        self.pairs = tuple((i, j) for i in range(degree) for j in range(i, degree))
        self._diagonal = {i: self.pairs.index((i, i)) for i in range(degree)}
        #: per slot j: (i, position of Q[min(i,j)][max(i,j)]) for every i ≠ j
        self._row_of = {j: tuple((i, self.pairs.index((min(i, j), max(i, j)))) for i in range(degree) if i != j)
                        for j in range(degree)}
        self.zero = (0, (0,) * degree, (0,) * len(self.pairs))
        self.one = (1, (0,) * degree, (0,) * len(self.pairs))

    def add(self, a: tuple, b: tuple) -> tuple:
        return (a[0] + b[0], tuple(map(_add, a[1], b[1])), tuple(map(_add, a[2], b[2])))

    def mul(self, a: tuple, b: tuple) -> tuple:
        c1, s1, q1 = a
        c2, s2, q2 = b
        sums = tuple(c2 * x + c1 * y for x, y in zip(s1, s2, strict=True))
        products = tuple(c2 * p + c1 * r + s1[i] * s2[j] + s2[i] * s1[j]
                         for (i, j), p, r in zip(self.pairs, q1, q2, strict=True))
        return (c1 * c2, sums, products)

    def neg(self, a: tuple) -> tuple:
        return (-a[0], tuple(map(_neg, a[1])), tuple(map(_neg, a[2])))

    def is_zero(self, a: tuple) -> bool:
        return a[0] == 0 and not any(a[1]) and not any(a[2])

    def lift(self, slot: int, value: Any) -> tuple:
        sums = [0] * self.degree
        sums[slot] = value
        products = [0] * len(self.pairs)
        products[self._diagonal[slot]] = value * value
        return (1, tuple(sums), tuple(products))

    def mul_lift(self, a: tuple, slot: int, value: Any) -> tuple:
        """Only row and column ``slot`` change: s_j += c·x, Q_ij += s_i·x (i ≠ j), Q_jj += 2·s_j·x + c·x²."""
        count, sums, products = a
        new_sums = list(sums)
        new_sums[slot] += count * value
        new_products = list(products)
        for i, position in self._row_of[slot]:
            new_products[position] += sums[i] * value
        new_products[self._diagonal[slot]] += 2 * sums[slot] * value + count * value * value
        return (count, tuple(new_sums), tuple(new_products))

    def from_int(self, n: int) -> tuple:
        return (n, (0,) * self.degree, (0,) * len(self.pairs))

    def matrix(self, payload: tuple) -> list[list[Any]]:
        """The (m+1)×(m+1) moment matrix ``[[c, sᵀ], [s, Q]]``: ``Σ [1, x][1, x]ᵀ`` over the tuples."""
        count, sums, products = payload
        full = [[count, *sums]] + [[sums[i]] + [0] * self.degree for i in range(self.degree)]
        for (i, j), value in zip(self.pairs, products, strict=True):
            full[i + 1][j + 1] = full[j + 1][i + 1] = value
        return full

    def __repr__(self) -> str:
        return f"CofactorRing({self.degree})"


class SingularNormalEquations(ValueError):
    """The features are linearly dependent over the current join (or it has too few tuples)."""


def linear_regression(ring: CofactorRing, payload: tuple, label: int,
                      features: Sequence[int] | None = None) -> tuple:
    """Least-squares ``label ≈ θ0 + Σ θ_j x_j`` from a cofactor payload: ``(θ0, θ_features…)``.

    Solves the normal equations ``(Σ zzᵀ) θ = Σ z·y`` with ``z = [1, x_features]``, whose entries are
    all in the payload. Exact payloads (int, Fraction, Decimal) are solved exactly with Fractions, so
    the coefficients are the least-squares solution itself; float payloads go through numpy.

    >>> ring = CofactorRing(2)   # y = x1 = 1 + 2·x0 on three points
    >>> rows = [ring.mul(ring.lift(0, x), ring.lift(1, 1 + 2 * x)) for x in (0, 1, 5)]
    >>> linear_regression(ring, ring.add(ring.add(rows[0], rows[1]), rows[2]), label=1)
    (Fraction(1, 1), Fraction(2, 1))
    """
    chosen = [j for j in range(ring.degree) if j != label] if features is None else list(features)
    moments = ring.matrix(payload)
    index = [0] + [j + 1 for j in chosen]
    system = [[moments[r][c] for c in index] + [moments[r][label + 1]] for r in index]
    if all(isinstance(value, int | Fraction | Decimal) for row in system for value in row):
        return _solve_exact(system)
    return _solve_float(system)


def _solve_exact(augmented: list[list[Number]]) -> tuple:
    """Gauss-Jordan elimination over Fractions on an n×(n+1) augmented matrix."""
    rows = [[Fraction(value) for value in row] for row in augmented]
    size = len(rows)
    for column in range(size):
        pivot = next((r for r in range(column, size) if rows[r][column] != 0), None)
        if pivot is None:
            raise SingularNormalEquations(f"feature {column} is a linear combination of the others")
        rows[column], rows[pivot] = rows[pivot], rows[column]
        lead = rows[column][column]
        rows[column] = [value / lead for value in rows[column]]
        for r in range(size):
            factor = rows[r][column]
            if r != column and factor != 0:
                rows[r] = [value - factor * top for value, top in zip(rows[r], rows[column], strict=True)]
    return tuple(row[size] for row in rows)


def _solve_float(augmented: list[list[Any]]) -> tuple:
    matrix = numpy.array([row[:-1] for row in augmented], dtype=float)
    target = numpy.array([row[-1] for row in augmented], dtype=float)
    if numpy.linalg.matrix_rank(matrix) < len(matrix):
        raise SingularNormalEquations("the normal equations are singular over the current join")
    return tuple(float(value) for value in numpy.linalg.solve(matrix, target))
