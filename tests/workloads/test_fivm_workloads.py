"""The F-IVM workloads (examples/fivm): generated Retailer-like and Housing-like data keep their keys
and the FD locn → zip; view trees over random insert/delete streams equal DuckDB on the example
queries and a least-squares fit after every batch; streams keep set semantics and round-trip
through the Parquet stream format."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy
import pytest

from operators.runtime.stream import Update, batches, read_stream
from operators.runtime.validate import InvalidChangeError
from operators.stages.view_tree import ViewTreeStage
from operators.structures.rings import CofactorRing, SingularNormalEquations, SumRing
from planner.workloads.housing import housing_catalog, housing_order, housing_tables
from planner.workloads.oracle import DuckDBOracle
from planner.workloads.retailer import (
    IncrementalRegression,
    apply_updates,
    least_squares,
    regression_order,
    retailer_catalog,
    retailer_order,
    retailer_tables,
)
from planner.workloads.view_tree_input import ViewTreeRun, churn_stream, random_stream, write

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "fivm"


def keys_are_unique(catalog, tables) -> None:
    for name, rows in tables.items():
        table = catalog.table(name)
        positions = [table.column_names.index(c) for c in table.primary_key]
        keys = Counter(tuple(row[p] for p in positions) for row in rows)
        assert rows and max(keys.values()) == 1, name


def test_generated_tables_keep_their_keys_and_the_declared_dependency():
    catalog = retailer_catalog()
    tables = retailer_tables(scale=2, seed=1, zips=3)
    keys_are_unique(catalog, tables)
    keys_are_unique(housing_catalog(), housing_tables(scale=2, seed=1))
    assert any(fd.declared and fd.determinant == ("locn",) for fd in catalog.functional_dependencies("location"))
    zips = {}
    for locn, zip_, *_ in tables["location"]:
        assert zips.setdefault(locn, zip_) == zip_
    assert len(set(zips.values())) == 3 and len(tables["inventory"]) == 2 * 10 * 6 * 4
    census = {row[0] for row in tables["census"]}
    assert set(zips.values()) <= census and {row[2] for row in tables["inventory"]} <= {row[0] for row in tables["item"]}


def test_regression_coefficients_equal_least_squares_after_every_batch():
    catalog = retailer_catalog()
    stream = random_stream(retailer_tables(scale=2, seed=4), catalog, seed=4)
    model, live = IncrementalRegression(catalog), {}
    compared = []
    for batch in batches(stream, 40):
        model.apply(batch)
        apply_updates(live, batch)
        expected, size, rank = least_squares(live)
        if rank < 4:
            with pytest.raises(SingularNormalEquations):
                model.coefficients()
            continue
        theta = numpy.array([float(t) for t in model.coefficients()])
        assert numpy.allclose(theta, expected, rtol=1e-9, atol=0), (theta, expected)
        compared.append(size)
    assert len(compared) > 10 and max(compared) > 100
    assert any(u.op < 0 for u in stream)
    before = model.payload()
    present = next(iter(live["census"]))
    with pytest.raises(InvalidChangeError, match="census"):  # the validator guards set semantics
        model.apply([Update(len(stream) + 1, "inventory", 1, (999, 0, 0, 5)),
                     Update(len(stream) + 2, "census", 1, present)])
    assert model.payload() == before and before[0] > 0


def sum_by_free(stage, state) -> set:
    """(free values…, count, Σ) of a SumRing(1) view tree."""
    return {(*key, count, sums[0]) for key, (count, sums) in stage.enumerate(state)}


def cofactor_row(stage, state) -> set:
    """The aggregates of retailer_cofactors.sql read off the root's cofactor payload."""
    ring = stage.ring
    count, sums, products = stage.total(state) if state is not None else ring.zero
    if count == 0:
        return {(0, None, None, None, None)}
    return {(count, sums[0], products[ring.pairs.index((0, 1))], products[ring.pairs.index((2, 3))],
             products[ring.pairs.index((3, 3))])}


QUERIES = {
    "retailer_units_by_zip.sql": (retailer_catalog, lambda: retailer_tables(scale=2, seed=2, zips=3),
                                  retailer_order((("inventoryunits", 0),), ("zip",), with_item=False), SumRing(1),
                                  sum_by_free),
    "retailer_cofactors.sql": (retailer_catalog, lambda: retailer_tables(scale=1, seed=3),
                               regression_order(), CofactorRing(4), cofactor_row),
    "housing_by_postcode.sql": (housing_catalog, lambda: housing_tables(scale=1, seed=5),
                                housing_order((("house.price", 0),), ("postcode",)), SumRing(1), sum_by_free),
}


@pytest.mark.parametrize("query", sorted(QUERIES))
def test_view_trees_equal_duckdb_on_the_example_queries_after_every_batch(query):
    make_catalog, make_tables, order, ring, read = QUERIES[query]
    catalog = make_catalog()
    sql = (EXAMPLES / query).read_text()
    stream = random_stream(make_tables(), catalog, seed=7)
    run, live = ViewTreeRun(ViewTreeStage(query, order, ring), catalog), {}
    non_empty = 0
    with DuckDBOracle(catalog) as oracle:
        for batch in batches(stream, max(1, len(stream) // 25)):
            run.apply(batch)
            apply_updates(live, batch)
            oracle.load({name: sorted(rows) for name, rows in live.items()})
            expected = set(oracle.query(sql))
            assert read(run.stage, run.state) == expected
            non_empty += any(row[0] for row in expected) if query == "retailer_cofactors.sql" else bool(expected)
    assert non_empty > 5


def test_streams_keep_set_semantics_and_round_trip_through_parquet(tmp_path):
    catalog = retailer_catalog()
    tables = retailer_tables(scale=1, seed=6)
    for stream in (random_stream(tables, catalog, seed=6), churn_stream(tables, catalog, 300, seed=6)):
        live = {name: set(rows) for name, rows in tables.items()} if len(stream) == 300 else {}
        apply_updates(live, stream)  # raises on a delete of an absent row
        assert read_stream(write(tmp_path / str(len(stream)), catalog, stream), catalog).updates == stream.updates
    sizes = {name: len(rows) for name, rows in live.items()}
    assert all(abs(sizes[name] - len(rows)) < 60 for name, rows in tables.items())
