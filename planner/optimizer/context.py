"""What rules may read and record while optimizing one query."""

from __future__ import annotations

import attrs

from catalog.schema import Catalog

#: The join strategies a user may force (``join_strategy``; ``--join-strategy`` on the command line).
JOIN_STRATEGIES = (None, "binary", "view-tree")


@attrs.define
class FreshAliases:
    """Names ``<prefix><n>`` for the relations a rule adds (decorrelated views ``_v<n>``), ``next`` the
    first not yet taken: a rule reads the names it may need and takes those it used."""

    prefix: str
    next: int = 0

    def name(self, offset: int = 0) -> str:
        return f"{self.prefix}{self.next + offset}"

    def take(self, count: int) -> None:
        self.next += count


@attrs.define
class OptimizerContext:
    """The catalog (the only source of schema facts) and the reasons rules record for EXPLAIN.

    ``decisions`` say why a strategy was chosen; ``refusals`` why a stronger one did not apply. Both
    are keyed by rule name so EXPLAIN can print them beside the operator they concern.
    """

    catalog: Catalog
    #: Forces a nested-aggregate strategy (e.g. "general", to compare it with the index strategies).
    nested_strategy: str | None = None
    #: Forces the change-propagation join tree: "theorem11" (AJU Theorem 11) or a left-deep join order
    #: as a tuple of aliases; None keeps the live-tuple plan.
    join_tree: str | tuple[str, ...] | None = None
    #: Forces the view tree's variable order (rules/view_tree.py): variables or columns, first = highest.
    variable_order: tuple[str, ...] | None = None
    #: ε of the heavy/light triangle count (rules/heavy_light.py): threshold M^ε; 1 = plain delta queries.
    heavy_light_epsilon: float = attrs.field(default=0.5, validator=[attrs.validators.ge(0), attrs.validators.le(1)])
    #: To compare, None chooses: "binary" forces the materializing fallback (binary joins with their
    #: views) for joins a generalized join tree or a view tree would maintain; "view-tree" forces a view
    #: tree (Olteanu §4) on joins other strategies would take (foreign keys), refused with the reason
    #: when the query is not hierarchical after its Σ-reduct (planner/compiler.py checks).
    join_strategy: str | None = attrs.field(default=None, validator=attrs.validators.in_(JOIN_STRATEGIES))
    #: Names for the relations the running rule adds, numbered after those already in the whole plan
    #: (set per rule run: rules/decorrelate.py's ``DecorrelationRule``).
    aliases: FreshAliases = attrs.field(factory=lambda: FreshAliases("_v"))
    decisions: dict[str, str] = attrs.field(factory=dict)
    refusals: dict[str, str] = attrs.field(factory=dict)

    def decide(self, rule: str, why: str) -> None:
        self.decisions[rule] = why

    def refuse(self, rule: str, why: str) -> None:
        """Record why ``rule`` did not apply; the first reason stays (it speaks of the query as written,
        later runs of the rule see shapes that other rules already rewrote)."""
        self.refusals.setdefault(rule, why)
