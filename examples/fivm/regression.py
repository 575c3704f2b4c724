"""Incremental linear regression over the Retailer-like join (F-IVM, Olteanu PODS'24 §4.3).

    PYTHONPATH=. python examples/fivm/regression.py [--scale 2] [--batch 200] [--seed 0]

A random insert/delete stream over all five tables; after every batch the model
``inventoryunits ≈ θ0 + θ·(population, price, temp)`` is read from the maintained cofactor payload
(exact Fractions) and compared with numpy's lstsq on the join recomputed from scratch. The variable
order of the view tree is built by hand (``planner.workloads.retailer.regression_order``): deriving
it from SQL, keys and FDs is the planner's job and not wired here yet.
"""

from __future__ import annotations

import argparse
import time

from tabulate import tabulate

from operators.runtime.stream import batches
from operators.structures.rings import SingularNormalEquations
from planner.workloads.retailer import (
    IncrementalRegression,
    apply_updates,
    least_squares,
    retailer_catalog,
    retailer_tables,
)
from planner.workloads.view_tree_input import random_stream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=2)
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    catalog = retailer_catalog()
    stream = random_stream(retailer_tables(args.scale, args.seed), catalog, args.seed)
    model, live, lines = IncrementalRegression(catalog), {}, []
    for number, batch in enumerate(batches(stream, args.batch)):
        started = time.perf_counter()
        model.apply(batch)
        try:
            theta = [float(value) for value in model.coefficients()]
        except SingularNormalEquations:
            theta = None
        elapsed = time.perf_counter() - started
        apply_updates(live, batch)
        expected, size, _ = least_squares(live)
        if theta is None:
            lines.append((number, size, "singular", "", f"{elapsed * 1e3:.1f}"))
            continue
        worst = max(abs(t - e) / abs(e) for t, e in zip(theta, expected, strict=True))
        lines.append((number, size, " ".join(f"{t:.4g}" for t in theta), f"{worst:.1e}", f"{elapsed * 1e3:.1f}"))
    print(tabulate(lines, headers=["batch", "join size", "θ (1, population, price, temp)",
                                   "max rel. diff vs lstsq", "update+solve ms"]))


if __name__ == "__main__":
    main()
