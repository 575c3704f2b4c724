"""IEDyn's Table 2 (the output sizes of its largest insert-only runs) against ours, in shape.

The paper's outputs are hundreds of millions of rows; we run the same generator at a fraction of
its stream sizes, so absolute counts cannot match. What is scale-free is the *selectivity*: the
output divided by the product of the relation sizes, times the key domain once per equality (an
equality on keys uniform in 1..K keeps one pair in K). With values drawn independently and
uniformly (IEDyn §6), it is 1/2 for Q1 and Q2 (one inequality), 1/4 for Q3 (two inequalities on
different attributes of s) and 1/6 for Q4–Q12 (the chain a < d < g: one of the six orders of three
values). A projection keeps multiplicities, so Q7–Q12 count as many rows as the join they project.

Table 2's own selectivities mostly agree (Q1 0.50, Q3 0.25, Q6 0.17, Q7 and Q10 0.16, Q11 0.17)
and sometimes not (Q2 0.02, Q4 0.12, Q5 and Q8 0.24, Q9 0.06): the paper's Q4 and its projections
Q7 and Q10 share a stream size but not an output, so its rows come from different streams, some
with settings it does not state (for Q2 an equality domain near 4,700 instead of 200 would give its
3.8k). ``table2_rows`` puts both side by side; examples/iedyn/table2.py prints them.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import attrs

from catalog.iedyn import RELATIONS, iedyn_catalog
from operators.runtime.stream import UpdateBatch
from planner.workloads.iedyn_streams import PAPER_KEY_DOMAIN, make_iedyn_stream
from planner.workloads.oracle import DuckDBOracle, StreamTables

QUERY_DIR = Path(__file__).resolve().parents[2] / "examples" / "iedyn"

#: Table 2 of IEDyn (k = 1000 rows): per query, the stream size and the output size
PAPER = {
    "q01": (12_000, 18_017_000), "q02": (12_000, 3_800), "q03": (2_700, 178_847_000),
    "q04": (2_700, 90_425_000), "q05": (21_000, 411_669_000), "q06": (21_000, 297_873_000),
    "q07": (2_700, 114_561_000), "q08": (21_000, 411_669_000), "q09": (21_000, 99_043_000),
    "q10": (2_700, 114_561_000), "q11": (21_000, 294_139_000), "q12": (21_000, 297_873_000),
}
#: equalities in each query (Table 1): r.k = s.k or s.k = t.k
EQUALITIES = {query: int(query in ("q02", "q05", "q06", "q08", "q09", "q11", "q12")) for query in PAPER}
#: the selectivity of each query when all values are independent and uniform (module docstring)
EXPECTED = {query: Fraction(1, 2) if query in ("q01", "q02") else Fraction(1, 4) if query == "q03" else Fraction(1, 6)
            for query in PAPER}


def relations_of(query: str) -> tuple[str, ...]:
    return RELATIONS[:2] if query in ("q01", "q02") else RELATIONS


def selectivity(query: str, stream_size: int, output: int, key_domain: int = PAPER_KEY_DOMAIN) -> float:
    """``output`` over the product of the relation sizes (N/k each), times ``key_domain`` per equality."""
    arity = len(relations_of(query))
    return output * key_domain ** EQUALITIES[query] / (stream_size / arity) ** arity


def query_sql(query: str) -> str:
    return (QUERY_DIR / f"{query}.sql").read_text()


def stream_for(query: str, scale: float, seed: int = 0, order: str = "random") -> UpdateBatch:
    """The insert-only stream of ``query`` at ``scale`` times Table 2's size (a multiple of its arity)."""
    arity = len(relations_of(query))
    size = max(arity, round(PAPER[query][0] * scale / arity) * arity)
    return make_iedyn_stream(size, relations_of(query), order, seed=seed)


def duckdb_count(query: str, updates: UpdateBatch) -> int:
    """The number of output rows, multiplicities included, recomputed by DuckDB."""
    catalog = iedyn_catalog()
    with DuckDBOracle(catalog) as oracle:
        oracle.load_stream(StreamTables.from_updates(catalog, updates))
        oracle.as_of(updates[-1].seq)
        return oracle.connection.execute(f"select count(*) from ({query_sql(query)})").fetchone()[0]


@attrs.frozen
class Table2Row:
    query: str
    paper_stream: int
    paper_output: int
    stream: int
    output: int

    @property
    def paper_selectivity(self) -> float:
        return selectivity(self.query, self.paper_stream, self.paper_output)

    @property
    def our_selectivity(self) -> float:
        return selectivity(self.query, self.stream, self.output)


def table2_rows(scale: float, seed: int = 0, order: str = "random",
                count: Callable[[str, UpdateBatch], int] = duckdb_count) -> list[Table2Row]:
    """Each query's Table 2 entry beside ours at ``scale``; ``count`` counts a query's output rows
    over an insert-only stream (DuckDB by default; the script can use a maintained view)."""
    rows = []
    for query, (paper_stream, paper_output) in PAPER.items():
        updates = stream_for(query, scale, seed, order)
        rows.append(Table2Row(query, paper_stream, paper_output, len(updates), count(query, updates)))
    return rows
