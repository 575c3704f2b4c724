"""Ring axioms on random payloads, and the cofactor ring against the sums it stands for."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

import numpy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from operators.structures.rings import (
    CofactorRing,
    CountRing,
    SingularNormalEquations,
    SumRing,
    linear_regression,
)

numbers = st.one_of(st.integers(-50, 50), st.fractions(min_value=-20, max_value=20, max_denominator=7))
RINGS = [CountRing(), SumRing(3), CofactorRing(3)]


def payloads(ring):
    """Arbitrary ring elements, not only lifts of tuples: the axioms must hold for all of them."""
    if isinstance(ring, CountRing):
        return st.integers(-50, 50)
    if isinstance(ring, SumRing):
        return st.tuples(numbers, st.tuples(*[numbers] * ring.width))
    return st.tuples(numbers, st.tuples(*[numbers] * ring.degree), st.tuples(*[numbers] * len(ring.pairs)))


@pytest.mark.parametrize("ring", RINGS, ids=repr)
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_ring_axioms_hold_on_random_payloads(ring, data):
    a, b, c = (data.draw(payloads(ring)) for _ in range(3))
    add, mul = ring.add, ring.mul
    assert add(add(a, b), c) == add(a, add(b, c))
    assert mul(mul(a, b), c) == mul(a, mul(b, c))
    assert add(a, b) == add(b, a) and mul(a, b) == mul(b, a)
    assert mul(a, add(b, c)) == add(mul(a, b), mul(a, c))
    assert add(a, ring.zero) == a and mul(a, ring.one) == a
    assert ring.is_zero(mul(a, ring.zero)) and ring.is_zero(add(a, ring.neg(a)))
    assert ring.from_int(3) == add(ring.one, add(ring.one, ring.one))
    assert not ring.is_zero(ring.one)
    value = data.draw(numbers)
    for slot in range(getattr(ring, "degree", getattr(ring, "width", 1))):
        assert ring.mul_lift(a, slot, value) == mul(a, ring.lift(slot, value))


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), numbers, st.integers(1, 3)), min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 2), numbers, numbers, st.integers(1, 3)), min_size=1, max_size=8))
def test_cofactor_payload_of_a_join_equals_the_direct_sums(r_rows, s_rows):
    """R(a, x0) ⋈ S(a, x1, x2) with multiplicities: Σ_a (Σ_R lifts)(Σ_S lifts) is COUNT, Σx, Σxxᵀ."""
    ring = CofactorRing(3)
    joined = [(x0, x1, x2) for a, x0, m in r_rows for b, x1, x2, n in s_rows if b == a for _ in range(m * n)]
    total = ring.zero
    for a in {row[0] for row in r_rows}:
        left = right = ring.zero
        for b, x0, m in r_rows:
            if b == a:
                left = ring.add(left, ring.mul(ring.from_int(m), ring.lift(0, x0)))
        for b, x1, x2, n in s_rows:
            if b == a:
                right = ring.add(right, ring.mul(ring.from_int(n), ring.mul(ring.lift(1, x1), ring.lift(2, x2))))
        total = ring.add(total, ring.mul(left, right))
    count, sums, products = total
    assert count == len(joined)
    assert list(sums) == [sum(row[i] for row in joined) for i in range(3)]
    assert list(products) == [sum(row[i] * row[j] for row in joined) for i, j in ring.pairs]


def test_sum_ring_gives_sum_and_average_of_one_payload():
    ring = SumRing(1)
    payload = ring.zero
    for value, weight in [(4, 2), (10, 1), (4, -1)]:
        payload = ring.add(payload, ring.mul(ring.from_int(weight), ring.lift(0, value)))
    assert payload == (2, (14,))
    assert SumRing.average(payload, 0) == 7
    assert SumRing.average(ring.zero, 0) is None


def test_regression_matches_lstsq_and_refuses_dependent_features():
    ring = CofactorRing(3)
    rng = numpy.random.default_rng(7)
    rows = [tuple(int(v) for v in rng.integers(-9, 10, size=3)) for _ in range(20)]
    payload = ring.zero
    for row in rows:
        payload = ring.add(payload, ring.mul(ring.mul(ring.lift(0, row[0]), ring.lift(1, row[1])), ring.lift(2, row[2])))
    theta = linear_regression(ring, payload, label=2)
    design = numpy.array([[1, r[0], r[1]] for r in rows], dtype=float)
    expected, *_ = numpy.linalg.lstsq(design, numpy.array([r[2] for r in rows], dtype=float), rcond=None)
    assert numpy.allclose([float(t) for t in theta], expected, rtol=1e-9, atol=0)
    float_theta = linear_regression(ring, (float(payload[0]), tuple(map(float, payload[1])),
                                           tuple(map(float, payload[2]))), label=2)
    assert numpy.allclose(float_theta, expected, rtol=1e-9, atol=0)
    collinear = ring.zero
    for x in (1, 2, 3):
        collinear = ring.add(collinear, ring.mul(ring.mul(ring.lift(0, x), ring.lift(1, 2 * x)), ring.lift(2, Fraction(x))))
    with pytest.raises(SingularNormalEquations):
        linear_regression(ring, collinear, label=2)


def test_cofactor_payload_is_exact_over_decimals():
    """DECIMAL columns stay Decimal: the payload equals the direct sums digit for digit, and the
    regression solved from it equals the one solved from the same values as Fractions."""
    ring = CofactorRing(2)
    rows = [(Decimal("1.25"), Decimal("3.10")), (Decimal("-0.05"), Decimal("2.00")), (Decimal("7.50"), Decimal("0.33"))]
    payload = ring.zero
    for x, y in rows:
        payload = ring.add(payload, ring.mul(ring.lift(0, x), ring.lift(1, y)))
    assert payload == (3, (sum(x for x, _ in rows), sum(y for _, y in rows)),
                       (sum(x * x for x, _ in rows), sum(x * y for x, y in rows), sum(y * y for _, y in rows)))
    assert all(isinstance(value, Decimal) for value in payload[1] + payload[2])
    as_fractions = (payload[0], tuple(map(Fraction, payload[1])), tuple(map(Fraction, payload[2])))
    assert linear_regression(ring, payload, label=1) == linear_regression(ring, as_fractions, label=1)
