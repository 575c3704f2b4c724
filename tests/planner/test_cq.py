"""The conjunctive-query notation parses to atoms and conditions and prints back exactly."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.ir.cq import Atom, ConjunctiveQuery, parse_cq, print_cq
from planner.ir.expressions import Call, Column, Expr, Literal


def var(name: str) -> Column:
    return Column(None, name)


def test_the_example_parses_to_head_atoms_and_conditions() -> None:
    query = parse_cq("Q(y, u) :- r(x, y), s(y, z), t(u) | x < z, y >= 3")
    assert query == ConjunctiveQuery(
        "Q",
        ("y", "u"),
        (Atom("r", ("x", "y")), Atom("s", ("y", "z")), Atom("t", ("u",))),
        (Call("<", (var("x"), var("z"))), Call(">=", (var("y"), Literal(3, "int")))),
    )


def test_variables_are_the_body_variables_in_order_of_first_occurrence_and_the_head_is_free() -> None:
    query = parse_cq("Q(u, y) :- s(y, z), r(x, y), t(u, u)")
    assert query.variables() == ("y", "z", "x", "u")
    assert query.free_variables() == ("u", "y")


CANONICAL = [
    "Q(y, u) :- r(x, y), s(y, z), t(u) | x < z, y >= 3",
    "Q() :- r(x)",
    "Answer(a) :- edge(a, b), edge(b, a)",
    'Q("date") :- "my table"("date", "x y") | "x y" between 1 and 2.5',
    "Q(x) :- r(x, y) | x + 1 < y - 2, x <> 'it\\'s', not (x = 1 or y = 2), x in (1, 2, 3)",
]


@pytest.mark.parametrize("text", CANONICAL)
def test_canonical_text_prints_back_unchanged(text: str) -> None:
    query = parse_cq(text)
    assert print_cq(query) == text
    assert str(query) == text
    assert parse_cq(str(query)) == query


def test_spacing_is_free_on_input() -> None:
    assert str(parse_cq("  Q( y ):-r(x,y) ,s(y)|x<3  ")) == "Q(y) :- r(x, y), s(y) | x < 3"


identifiers = st.one_of(
    st.sampled_from(["x", "y", "z", "and", "date", "X1", "a b"]), st.text(min_size=1, max_size=3)
)


@st.composite
def queries(draw: st.DrawFn) -> ConjunctiveQuery:
    atoms = draw(
        st.lists(
            st.builds(Atom, identifiers, st.lists(identifiers, max_size=3).map(tuple)), min_size=1, max_size=3
        )
    )
    bound = list(dict.fromkeys(v for atom in atoms for v in atom.variables))
    head = draw(st.lists(st.sampled_from(bound), max_size=3).map(tuple)) if bound else ()
    terms: st.SearchStrategy[Expr] = st.one_of(
        st.builds(Literal, st.integers(), st.just("int")),
        st.builds(Literal, st.text(max_size=3), st.just("string")),
        *([st.sampled_from(bound).map(var)] if bound else []),
    )
    comparisons = st.builds(Call, st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), st.tuples(terms, terms))
    conditions = draw(st.lists(comparisons, max_size=3).map(tuple))
    return ConjunctiveQuery(draw(identifiers), head, tuple(atoms), conditions)


@settings(max_examples=200, deadline=None)
@given(queries())
def test_random_queries_round_trip(query: ConjunctiveQuery) -> None:
    text = print_cq(query)
    assert parse_cq(text) == query
    assert print_cq(parse_cq(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("Q(x) :- r(x", "line 1, column 11: unexpected end of text"),
        ("Q(x) r(x)", "line 1, column 6: unexpected 'r'"),
        ("Q(x) :- r(x) | x <", "line 1, column 18: unexpected end of text"),
        ("Q(x) :- r(y)", "head variable x of Q occurs in no atom"),
        ("Q(x) :- r(x) | x < z", "condition x < z of Q uses z, which is no atom's variable"),
        ("Q(x) :- r(x) | r.x < 1", "condition r.x < 1 of Q uses r.x, which is no atom's variable"),
        ("Q() :- ", "line 1, column 5: unexpected end of text"),
    ],
)
def test_malformed_or_unsafe_queries_raise_value_errors_saying_where_or_which_variable(
    text: str, message: str
) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(message)):
        parse_cq(text)


def test_a_query_without_atoms_is_refused() -> None:
    with pytest.raises(ValueError, match="conjunctive query Q has no atoms"):
        ConjunctiveQuery("Q", (), ())
