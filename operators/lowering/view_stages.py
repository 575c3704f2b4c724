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
  one join variable gets the root's stage and one stage per inner join variable. A root with one
  part takes its child's stage in when that stage's key holds the root variable (the same key: one
  exchange less).
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


def lower_view_stages(builder: StageBuilder, node: ViewTreeAggregate, order: VariableOrder, ring: Ring) -> int:
    """Add the stages of ``order`` (``node``'s variable order) to ``builder``; returns the stage that emits
    ``(order.free values..., payload)``: the root's groups, or a global aggregate's one total."""
    layout = build_layout(order)
    if len(layout.roots) != 1:
        raise LoweringError(f"a view tree over a forest ({len(layout.roots)} roots) has no stage for the product")
    tree = _Tree(layout, order)
    nodes = layout.nodes
    aliases = {a.alias: a for a in node.atoms}
    built: dict[int, int] = {}  # top → stage id
    lifts = dict(order.lifts)
    for top in range(len(nodes)):  # post-order: child stages are built first
        if tree.tops[top] != top:
            continue
        me = nodes[top]
        fragment = tree.fragment(top)
        inputs, below = tree.inputs(top)
        sub = VariableOrder(atoms=inputs, roots=(tree.sub_order(top, inputs),), free=tree.output(top) if me.free else (),
                            lifts=tuple((nodes[i].variable, lifts[nodes[i].variable]) for i in fragment
                                        if nodes[i].variable in lifts))
        atom_ports = len(inputs) - len(below)
        views = frozenset(range(atom_ports, len(inputs)))
        held = (me.variable, *(nodes[i].variable for i in fragment if i != top))
        key = tree.key(top)
        if me.free:
            stage = GroupViewStage(f"view tree groups at {me.variable}", sub, ring, held, key, views)
        else:
            stage = ViewStage(f"view tree V_{me.variable}", sub, ring, held, key, views)
        stage_id = built[top] = builder.add(stage)
        for port, atom in enumerate(inputs[:atom_ports]):
            builder.route(aliases[atom.name], node.atom_columns[atom.name], stage_id, port)
        for port, j in enumerate(below, start=atom_ports):
            builder.downstream[built[j]] = (stage_id, port)
    root = layout.roots[0]
    if nodes[root].free:
        return built[root]
    total = builder.add(TotalStage("view tree total", ring))
    builder.downstream[built[root]] = (total, 0)
    return total


class _Tree:
    """The full order's nodes, their stage tops (``tops[i]``: the node at the top of node i's stage)
    and, per stage, its inputs, key, output and order (see the module docstring)."""

    def __init__(self, layout: ViewTreeLayout, order: VariableOrder):
        self.nodes, self.order = layout.nodes, order
        self.children = {i: [j for j, n in enumerate(self.nodes) if n.parent == i] for i in range(len(self.nodes))}
        self.tops: dict[int, int] = {}
        for i in reversed(range(len(self.nodes))):  # post-order reversed: parents first
            self.tops[i] = i if self._own(i) else self.tops[self.nodes[i].parent]
        root = layout.roots[0]
        (part,) = self.nodes[root].parts if len(self.nodes[root].parts) == 1 else (None,)
        only = next((j for j in self.children[root] if self.nodes[j].view == part), None)
        if only is not None and self.tops[only] == only and self.nodes[root].variable in self.key(only):
            # a root of one part, whose stage would have its key: one stage (Ex. 4.12's Y over Z)
            self.tops = {i: root if top == only else top for i, top in self.tops.items()}

    def _own(self, i: int) -> bool:
        node = self.nodes[i]
        return node.parent == -1 or (len(node.parts) > 1 and (not node.free or self._free_chain(i)))

    def _free_chain(self, i: int) -> bool:
        free = [j for j in self.children[i] if self.nodes[j].free]
        return len(free) <= 1 and all(self._free_chain(j) for j in free)

    def free_below(self, i: int) -> list[int]:
        """The free descendants of node ``i``, parents first."""
        found = []
        for j in self.children[i]:
            if self.nodes[j].free:
                found += [j, *self.free_below(j)]
        return found

    def fragment(self, top: int) -> list[int]:
        return [i for i in range(len(self.nodes)) if self.tops[i] == top]

    def output(self, top: int) -> tuple[str, ...]:
        """The variables of the stage's output rows (before the payload)."""
        node = self.nodes[top]
        if not node.free:
            return node.dep
        if node.parent == -1:
            return self.order.free
        return (*node.dep, node.variable, *(self.nodes[j].variable for j in self.free_below(top)))

    def inputs(self, top: int) -> tuple[tuple[Atom, ...], list[int]]:
        """The stage's inputs, its fragment's atoms then the stages below, and those stages' tops."""
        nodes, atoms = self.nodes, self.order.atoms
        fragment = self.fragment(top)
        below = [j for i in fragment for j in self.children[i] if self.tops[j] == j]
        found = [atoms[part] for i in fragment for part in nodes[i].parts if part < len(atoms)]
        found += [Atom(("V'_" if nodes[j].free else "V_") + nodes[j].variable, self.output(j)) for j in below]
        return tuple(found), below

    def key(self, top: int) -> tuple[str, ...]:
        """The variables of dep(top) ∪ {top} that every input carries."""
        node = self.nodes[top]
        inputs, _ = self.inputs(top)
        return tuple(v for v in (*node.dep, node.variable) if all(v in a.variables for a in inputs))

    def sub_order(self, top: int, inputs: tuple[Atom, ...]) -> OrderNode:
        """The stage's order: its fragment and the free variables below it (they give the groups of a
        free stage below their values) under the chain of dep(top); each input at its deepest variable."""
        nodes, children = self.nodes, self.children
        shown = set(self.fragment(top)) | set(self.free_below(top))
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
