"""Lower a view tree's variable order to keyed stages, one per view or fused chain of views (issue 12 item 7).

The view at variable X is V_X(dep(X)) = Σ_X lift(X) · Π parts, where the parts are the atoms placed
at X and the views of X's children, and dep(X) (X's ancestors that its subtree mentions) is what X
shares with its parent. A stage is keyed by variables every row it receives carries, so the view
whose parts it holds is computed from one partition:

- **Which views get a stage.** The root; every view with two or more parts, except a free one whose
  free descendants branch (see below). A view with one part is linear in it (ΔV = Σ_X lift · Δpart)
  and is fused into its parent's stage, which never coarsens the parent's key (the part carries
  dep(X) ∪ {X}, the parent's key is within dep(X)). The bound leaves of a query (variables of one
  atom: SUM arguments, unread columns) are such views, so a q-hierarchical GROUP BY of n atoms over
  one join variable gets the root's stage and one stage per inner join variable.
- **Keys.** A stage with top T receives its fragment's atoms and the outputs of the stages below
  (a bound child C sends V_C keyed by dep(C)); it is keyed by the variables of dep(T) ∪ {T} that all
  of them carry. In the canonical order of a hierarchical query every atom under X holds all of X's
  ancestors, so the key is dep(T) ∪ {T} = dep(C) of each child: each view is kept keyed by its
  variables shared with its parent, in its parent's stage. Where that fails the key shrinks, down to
  a constant (EXPLAIN says so): an atom or child missing a variable of dep(T) ∪ {T} (orders chosen
  by cost or forced, free variables placed above bound ones for a GROUP BY, a Σ-reduct's variables
  that the original atoms do not carry), because its change reaches every key that extends it.
- **Free variables** (GROUP BY) are not summed: a free stage emits its groups, −old/+new, and the
  root's stage is keyed by the group variables all its inputs carry (a global aggregate's root
  sends its contributions to a ``TotalStage`` keyed by a constant: one group). A free view with two
  parts gets its own stage (Ex. 4.12's V'_X, keyed by X where the parent's is keyed by Y) when its
  free descendants form a chain, so its groups' variables lie on one path of the parent's order;
  otherwise it is fused into its parent.

Each stage's order is its fragment under the chain of dep(T), its inputs placed at their deepest
variable there; lifts are those of the fragment's bound variables.
"""

from __future__ import annotations

from operators.lowering.builder import LoweringError, StageBuilder
from operators.stages.view_stages import GroupViewStage, TotalStage, ViewStage
from operators.structures.rings import Ring
from operators.structures.variable_order import Atom, OrderNode, VariableOrder, ViewTreeLayout, build_layout
from planner.ir.view_tree_plan import ViewTreeAggregate


def stage_tops(layout: ViewTreeLayout) -> dict[int, int]:
    """Each node's stage: the node at the top of its fragment (see the module docstring)."""
    nodes = layout.nodes
    children = {i: [j for j, n in enumerate(nodes) if n.parent == i] for i in range(len(nodes))}

    def free_chain(i: int) -> bool:
        free = [j for j in children[i] if nodes[j].free]
        return len(free) <= 1 and all(free_chain(j) for j in free)

    def own(i: int) -> bool:
        node = nodes[i]
        return node.parent == -1 or (len(node.parts) > 1 and (not node.free or free_chain(i)))

    tops: dict[int, int] = {}
    for i in reversed(range(len(nodes))):  # post-order reversed: parents first
        tops[i] = i if own(i) else tops[nodes[i].parent]
    return tops


def lower_view_stages(builder: StageBuilder, node: ViewTreeAggregate, order: VariableOrder, ring: Ring) -> int:
    """Add the stages of ``order`` (``node``'s variable order) to ``builder``; returns the stage that emits
    ``(order.free values..., payload)``: the root's groups, or a global aggregate's one total."""
    layout = build_layout(order)
    if len(layout.roots) != 1:
        raise LoweringError(f"a view tree over a forest ({len(layout.roots)} roots) has no stage for the product")
    tree = _Tree(layout, stage_tops(layout))
    nodes = layout.nodes
    aliases = {a.alias: a for a in node.atoms}
    built: dict[int, tuple[int, tuple[str, ...]]] = {}  # top → (stage id, output variables)
    for top in range(len(nodes)):  # post-order: child stages are built first
        if tree.tops[top] != top:
            continue
        me = nodes[top]
        fragment = sorted(i for i in range(len(nodes)) if tree.tops[i] == top)
        inputs = [order.atoms[part] for i in fragment for part in nodes[i].parts if part < len(order.atoms)]
        below = [j for i in fragment for j in tree.children[i] if tree.tops[j] == j]
        inputs += [Atom(("V'_" if nodes[j].free else "V_") + nodes[j].variable, built[j][1]) for j in below]
        path = (*me.dep, me.variable)
        key = tuple(v for v in path if all(v in a.variables for a in inputs))
        free = () if not me.free else order.free if me.parent == -1 else \
            path + tuple(nodes[j].variable for j in tree.free_below(top))
        lifts = dict(order.lifts)
        sub = VariableOrder(atoms=tuple(inputs), roots=(tree.sub_order(top, set(fragment), inputs),), free=free,
                            lifts=tuple((nodes[i].variable, lifts[nodes[i].variable]) for i in fragment
                                        if nodes[i].variable in lifts))
        atom_ports = len(inputs) - len(below)
        views = frozenset(range(atom_ports, len(inputs)))
        held = (me.variable, *(nodes[i].variable for i in fragment if i != top))
        if me.free:
            stage = GroupViewStage(f"view tree groups at {me.variable}", sub, ring, held, key, views)
        else:
            stage = ViewStage(f"view tree V_{me.variable}", sub, ring, held, key, views)
        stage_id = builder.add(stage)
        for port, atom in enumerate(inputs[:atom_ports]):
            builder.route(aliases[atom.name], node.atom_columns[atom.name], stage_id, port)
        for port, j in enumerate(below, start=atom_ports):
            builder.downstream[built[j][0]] = (stage_id, port)
        built[top] = (stage_id, stage.output_columns[:-1])
    root_stage, _ = built[layout.roots[0]]
    if nodes[layout.roots[0]].free:
        return root_stage
    total = builder.add(TotalStage("view tree total", ring))
    builder.downstream[root_stage] = (total, 0)
    return total


class _Tree:
    """The full order's nodes with their children and stage tops, and the order of one stage."""

    def __init__(self, layout: ViewTreeLayout, tops: dict[int, int]):
        self.nodes, self.tops = layout.nodes, tops
        self.children = {i: [j for j, n in enumerate(self.nodes) if n.parent == i] for i in range(len(self.nodes))}

    def free_below(self, i: int) -> list[int]:
        """The free descendants of node ``i``, parents first."""
        found = []
        for j in self.children[i]:
            if self.nodes[j].free:
                found += [j, *self.free_below(j)]
        return found

    def sub_order(self, top: int, fragment: set[int], inputs: list[Atom]) -> OrderNode:
        """The stage's order: ``fragment`` and the free variables below it (they give the groups of a free
        stage below their values) under the chain of dep(top); each input at its deepest variable."""
        nodes, children = self.nodes, self.children
        shown = fragment | set(self.free_below(top))
        depth = {v: d for d, v in enumerate(nodes[top].dep)}
        stack = [(top, len(depth))]
        while stack:
            i, level = stack.pop()
            depth[nodes[i].variable] = level
            stack += [(j, level + 1) for j in children[i] if j in shown]
        placed = {a.name: max(a.variables, key=depth.__getitem__) for a in inputs}

        def at(variable: str, below: tuple[OrderNode, ...]) -> OrderNode:
            return OrderNode(variable, below, tuple(name for name, where in placed.items() if where == variable))

        def convert(i: int) -> OrderNode:
            return at(nodes[i].variable, tuple(convert(j) for j in children[i] if j in shown))

        root = convert(top)
        for variable in reversed(nodes[top].dep):
            root = at(variable, (root,))
        return root
