"""Synthetic Retailer-like data (Olteanu PODS'24 Ex. 4.10; F-IVM's Retailer is proprietary): the
tables of ``examples/fivm/retailer.sql`` with its keys and the dependency locn → zip, sized by
``scale``, and the view-tree orders of its join, built by hand (the rule wiring that derives them
from SQL, keys and FDs is separate work; these orders are what it should find).

Shape per unit of scale: 10 stores, 10 items, ``dates`` days; each store stocks ``stocked`` random
items per day (Inventory ≈ 10·dates·stocked rows), one Weather row per store and day, each store in
one zip (Location, so locn → zip holds), one Census row per zip and one Item row per ksn.
``zips`` fixes the number of zip codes (default: 3 per unit of scale); fixing it makes the stores
per zip grow with the scale, the fan-out that separates the orders in the benchmark.
``inventoryunits`` is a noisy linear function of population, price and temperature, so the
regression of the example has something to find; all values are ints (exact payloads).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

import numpy

from catalog.schema import Catalog
from operators.runtime.stream import CheckedTables, Update
from operators.stages.view_tree import ViewTreeStage
from operators.structures.rings import CofactorRing, linear_regression
from operators.structures.variable_order import Atom, OrderNode, VariableOrder
from planner.workloads.view_tree_input import ViewTreeRun, load_catalog

#: The regression's label and features, in cofactor-ring slot order (label first).
REGRESSION_VARIABLES = ("inventoryunits", "population", "price", "temp")


def retailer_catalog() -> Catalog:
    return load_catalog("retailer")


def retailer_tables(scale: int = 1, seed: int = 0, *, zips: int | None = None, dates: int = 6,
                    stocked: int = 4) -> CheckedTables:
    """The five tables, rows in catalog column order (every value an int of its INT column)."""
    if scale < 1 or dates < 1 or stocked < 1:
        raise ValueError(f"scale, dates and stocked must be at least 1, got {scale}, {dates}, {stocked}")
    rng = random.Random(seed)
    stores, items = 10 * scale, 10 * scale
    zip_count = zips if zips is not None else 3 * scale
    census = [(z, rng.randrange(2_000, 60_000), rng.randrange(25, 60), rng.randrange(800, 20_000))
              for z in range(zip_count)]
    location = [(locn, rng.randrange(zip_count), rng.randrange(5), rng.randrange(10_000, 200_000))
                for locn in range(stores)]
    item = [(ksn, rng.randrange(100, 5_000), rng.randrange(30), rng.randrange(6)) for ksn in range(items)]
    weather = [(locn, day, rng.randrange(-10, 35), rng.randrange(0, 40)) for locn in range(stores) for day in range(dates)]
    population = {z: pop for z, pop, *_ in census}
    zip_of = {locn: z for locn, z, *_ in location}
    price = {ksn: p for ksn, p, *_ in item}
    temp = {(locn, day): t for locn, day, t, _ in weather}
    inventory = []
    for locn in range(stores):
        for day in range(dates):
            for ksn in rng.sample(range(items), min(stocked, items)):
                units = (40 + population[zip_of[locn]] // 2_000 - price[ksn] // 250 + temp[locn, day] // 3
                         + rng.randrange(-5, 6))
                inventory.append((locn, day, ksn, units))
    return CheckedTables(inventory=inventory, location=location, census=census, item=item, weather=weather)


def retailer_order(lifts: tuple[tuple[str, int], ...] = (), free: tuple[str, ...] = (), *,
                   with_item: bool = True, reduct: bool = True) -> VariableOrder:
    """The join Inventory ⋈ Location ⋈ Census ⋈ Weather (⋈ Item), atoms projected on their join
    columns and REGRESSION_VARIABLES.

    ``reduct``: the order of the Σ-reduct under locn → zip, zip → locn → {dateid → {ksn, temp}};
    every relation with locn gains zip, so the reduct is q-hierarchical (without Item) and a delta
    to Inventory or Weather probes Location by locn, one match under the FD (Thm 4.11). Otherwise
    the order a planner without the FD may pick, locn → {zip → population, dateid → …}: a Census
    delta then probes Location by zip and enumerates every store of that zip. With Item the query
    is not hierarchical (ksn and dateid) whatever the FDs: an Item delta enumerates the stock of
    its ksn, unless Item is declared static (§4.5).
    """
    atoms = [Atom("inventory", ("locn", "dateid", "ksn", "inventoryunits")), Atom("location", ("locn", "zip")),
             Atom("census", ("zip", "population")), Atom("weather", ("locn", "dateid", "temp"))]
    below_ksn = [OrderNode("inventoryunits", atoms=("inventory",))]
    if with_item:
        atoms.append(Atom("item", ("ksn", "price")))
        below_ksn.append(OrderNode("price", atoms=("item",)))
    dateid = OrderNode("dateid", (OrderNode("ksn", tuple(below_ksn)), OrderNode("temp", atoms=("weather",))))
    population = OrderNode("population", atoms=("census",))
    if reduct:
        roots = (OrderNode("zip", (population, OrderNode("locn", (dateid,), atoms=("location",)))),)
    else:
        roots = (OrderNode("locn", (OrderNode("zip", (population,), atoms=("location",)), dateid)),)
    return VariableOrder(tuple(atoms), roots, free, lifts)


def regression_order() -> VariableOrder:
    """The full join with every REGRESSION_VARIABLES lifted into its cofactor slot."""
    return retailer_order(tuple((variable, slot) for slot, variable in enumerate(REGRESSION_VARIABLES)))


class IncrementalRegression:
    """``inventoryunits ≈ θ0 + θ·(population, price, temp)`` over the current Retailer-like join,
    maintained as one degree-4 cofactor payload at the root of a view tree (F-IVM): each batch of
    updates moves the payload, and the model is re-solved from its 15 moments, never from the join.
    The variable order is built by hand (``regression_order``) until the planner derives it."""

    def __init__(self, catalog: Catalog):
        self.ring = CofactorRing(len(REGRESSION_VARIABLES))
        self.run = ViewTreeRun(ViewTreeStage("retailer regression", regression_order(), self.ring), catalog)

    def apply(self, updates: Iterable[Update]) -> None:
        self.run.apply(updates)

    def payload(self) -> tuple:
        state = self.run.state
        return self.ring.zero if state is None else self.run.stage.total(state)

    def coefficients(self) -> tuple:
        """(θ0, θ_population, θ_price, θ_temp), exact Fractions; ``SingularNormalEquations`` when
        the join has too few tuples or dependent features."""
        return linear_regression(self.ring, self.payload(), label=0)


def apply_updates(live: dict[str, set[tuple]], updates: Iterable[Update]) -> None:
    """Apply a stream's updates to tables held as row sets; an insert of a present row or a delete
    of an absent one is an error (streams have set semantics)."""
    for update in updates:
        rows = live.setdefault(update.table, set())
        if (update.row in rows) == (update.op > 0):
            raise ValueError(f"_seq {update.seq}: invalid {'insert' if update.op > 0 else 'delete'} of "
                             f"{update.table} row {update.row!r}")
        (rows.add if update.op > 0 else rows.remove)(update.row)


def least_squares(live: Mapping[str, Iterable[tuple]]) -> tuple[numpy.ndarray, int, int]:
    """The recomputation oracle: lstsq on the join built from scratch (every dimension is joined on
    its primary key, so an Inventory row meets at most one row of each). Returns (θ, join size,
    rank of the design matrix: below 4, the normal equations are singular)."""
    location = {locn: zip_ for locn, zip_, *_ in live.get("location", ())}
    census = {zip_: population for zip_, population, *_ in live.get("census", ())}
    item = {ksn: price for ksn, price, *_ in live.get("item", ())}
    weather = {(locn, day): temp for locn, day, temp, _ in live.get("weather", ())}
    design, target = [], []
    for locn, day, ksn, units in live.get("inventory", ()):
        zip_ = location.get(locn)
        if zip_ in census and ksn in item and (locn, day) in weather:
            design.append((1.0, census[zip_], item[ksn], weather[locn, day]))
            target.append(units)
    if not design:
        return numpy.zeros(0), 0, 0
    theta, _, rank, _ = numpy.linalg.lstsq(numpy.array(design, dtype=float), numpy.array(target, dtype=float),
                                           rcond=None)
    return theta, len(design), int(rank)
