"""Synthetic Housing-like data (F-IVM's Housing benchmark): the star on postcode of
``examples/fivm/housing.sql``, sized by ``scale``, and its view-tree order (built by hand; one
variable, postcode, shared by all six atoms, so the join is q-hierarchical and every delta is O(1)).

Per unit of scale: 20 postcodes, each with one Demographics and one Transport row and a random
number (1 to ``per_postcode``) of houses, shops, institutions and restaurants.
"""

from __future__ import annotations

import random

from catalog.schema import Catalog
from operators.runtime.stream import CheckedTables
from operators.structures.variable_order import Atom, OrderNode, VariableOrder
from planner.workloads.view_tree_input import load_catalog

#: Ten numeric features over the six relations (the cofactor benchmark's 10 features, 55 sums).
FEATURES = {"house": ("livingarea", "price", "nbbedrooms"), "shop": ("pricerange",),
            "institution": ("sizeinstitution",), "restaurant": ("pricerange",),
            "demographics": ("averagesalary", "crimesperyear"), "transport": ("nbbuslines", "distancecitycentre")}


def housing_catalog() -> Catalog:
    return load_catalog("housing")


def housing_tables(scale: int = 1, seed: int = 0, *, per_postcode: int = 3) -> CheckedTables:
    """The six tables, rows in catalog column order (every value an int)."""
    if scale < 1 or per_postcode < 1:
        raise ValueError(f"scale and per_postcode must be at least 1, got {scale}, {per_postcode}")
    rng = random.Random(seed)
    postcodes = range(20 * scale)
    tables = CheckedTables(house=[], shop=[], institution=[], restaurant=[], demographics=[], transport=[])
    columns = {"house": lambda: (rng.randrange(30, 300), rng.randrange(80, 900), rng.randrange(1, 6)),
               "shop": lambda: (rng.randrange(6, 24), rng.randrange(1, 5)),
               "institution": lambda: (rng.randrange(1, 4), rng.randrange(50, 2_000)),
               "restaurant": lambda: (rng.randrange(6, 24), rng.randrange(1, 5))}
    for postcode in postcodes:
        for name, values in columns.items():
            for _ in range(rng.randint(1, per_postcode)):
                tables[name].append((len(tables[name]), postcode, *values()))
        tables["demographics"].append((postcode, rng.randrange(18_000, 90_000), rng.randrange(0, 500),
                                       rng.randrange(2, 15)))
        tables["transport"].append((postcode, rng.randrange(0, 30), rng.randrange(0, 4), rng.randrange(1, 40)))
    return tables


def housing_order(lifts: tuple[tuple[str, int], ...] = (), free: tuple[str, ...] = ()) -> VariableOrder:
    """postcode → one child per relation: its id (many-per-postcode relations) holding its features.

    Variables are named ``<table>.<column>`` except postcode, so equal column names in different
    tables (shop and restaurant both have pricerange) stay different variables;
    ``atom_routes`` maps them back to columns.
    """
    atoms, children = [], []
    for table, features in FEATURES.items():
        keyed_by_postcode = table in ("demographics", "transport")
        own = () if keyed_by_postcode else (f"{table}.{table}_id",)
        variables = ("postcode", *own, *(f"{table}.{f}" for f in features))
        atoms.append(Atom(table, variables))
        chain = [*own, *variables[1 + len(own):]]
        node = OrderNode(chain[-1], atoms=(table,))
        for variable in reversed(chain[:-1]):
            node = OrderNode(variable, (node,))
        children.append(node)
    return VariableOrder(tuple(atoms), (OrderNode("postcode", tuple(children)),), free, lifts)


def feature_variables() -> tuple[str, ...]:
    """The ten feature variables of ``housing_order``, in cofactor-slot order."""
    return tuple(f"{table}.{f}" for table, features in FEATURES.items() for f in features)
