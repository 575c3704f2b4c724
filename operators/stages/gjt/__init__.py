"""IEDyn (GDyn over equalities and inequalities): a T-representation maintained as one keyed stage.

The package: ``tree`` (the GJT handed over by the lowering), ``probes`` (the indexes and probes of
Definition 5.4), ``plan`` (the tree compiled: nodes, indexes, probes, enumeration layouts), ``stage``
(Algorithms 1 and 2 per key), ``enumeration`` (one batch's delta enumeration), ``pages`` (the
state in pages of Spark's state store).

The stage holds, per key, the T-reduct of Definition 4.1 (one GMR ρ_n per node of a binary
generalized join tree) and the indexes of Definition 5.4 as IEDyn §5 instantiates them
(``operators.structures.sorted_groups``): S_n for every node with a sibling (grouped by the
variables shared with the sibling, sorted on n's variable bounded by pred(parent)) and P_n for
every node of the connex set N below the root (grouped by the variables shared with the parent,
sorted on n's variable bounded by pred(parent → n)). Its input is base rows on ports (one port per
leaf atom, rows in the leaf's variable order); it never materializes a join.

- Update (Algorithm 2): the batch's deltas climb the tree bottom-up, children before parents and
  the first child's subtree before the second's, so Line 10 joins a delta with the sibling's old
  reduct on one side and its new one on the other (Δ(A⋈B) = ΔA⋈B + A'⋈ΔB). The join probes S_m:
  when var(parent) ⊆ var(changed side) a delta row only needs the summed weight of the compatible
  sibling rows, one O(log n) prefix-sum query; otherwise the parent's tuples come from the sibling
  and the compatible rows are walked in sort order, stopping at the first one out of range.
- REDUCT mode (``output is None``): the stage emits Δρ_root, for a parent in another stage.
- With a ``ring`` (``rings.Ring``, e.g. ``SumRing``) and per-port ``lift`` ((slot, column position)
  pairs, a position may be a function of the row; (slot, position, True) counts non-NULL values),
  weights become ring payloads (``ring_weight.RingWeight``: +, ·, −, zero test through the ring; unlifted ports keep int
  weights, n standing for n·one). ρ_root(t) is then COUNT(*) and the SUMs of the join tuples
  grouped by var(root) (the root's tuples are the groups), maintained by Algorithm 2 alone,
  never enumerating the join (the F-IVM idea, IEDyn §2's footnote on rings). The stage emits
  group rows ``root tuple + (payload,)``, the old one out and the new one in, and ``enumerate``
  lists them. REDUCT mode only, with the key among the root's variables so each group lives under
  one key.
- ENUMERATE mode: Algorithm 1 walks N top-down through the P_n indexes (``enumerate``, pull
  mode); per batch the stage *delta-enumerates* ΔQ (push mode, what ``process`` returns), IEDyn §6.
  For a node n of N and one of its tuples t, let E(n, t) be what the subtree of N below n
  enumerates from t. With A and B the two children's parts, E = A×B and
  ΔE = ΔA×B' + A'×ΔB − ΔA×ΔB (primes: the state after the batch), so only the new state and
  the deltas are read. ΔA sums ΔE(c, s) over the *touched* tuples s of the child compatible with
  t: those whose subtree enumeration may have changed (a superset: the frontier's Δρ support, and
  upwards every parent tuple a touched child tuple can reach; Δρ alone would miss a tuple whose
  weight stays while its children change). Where both ΔA and ΔB are non-empty, each pair is
  listed once with its summed weight (``_DeltaEnumeration.both_changed``), so ΔQ comes out
  consolidated without a pass over it. When var(N) ⊋ output (acyclic, not free-connex) the
  enumeration is projected and consolidated, as IEDyn §6 does.

Bounds: an update costs O(|Δ| log n) plus, where the parent's variables come from the sibling,
the sibling rows it walks (once per batch and group: the probes are swept together); enumeration
has constant delay per row when each edge bounds one variable of the child (any number of bounds
on that variable make one interval: a band ``x - c < y < x + c`` is one walk, and one prefix-sum
difference in Algorithm 2). Inequalities on a second variable of the same edge are checked per row
while walking the first one's interval (and make Line 10 walk instead of summing): the delay is then
not bounded by a constant, nor by a logarithm (the paper's lexicographic sort with skips is not
built), which is the case the journal version of IEDyn withdrew its update bound for. Delta
enumeration files the batch's touched tuples like P_n, so a parent tuple finds its touched
children by the same probe that finds its rows. It lists each E'(n, s) and A' once per batch and
reuses the lists for every parent tuple that reaches them (``_DeltaEnumeration``): a batch costs
O(|ΔQ|) plus the touched tuples' probes, and O(|ΔQ|) memory, the size of the changelog returned
anyway (push mode returns a list, so the constant delay of a stream is not what it needs).

SQL NULLs: a comparison with NULL is never true and an equality on NULL never matches, so a row
with NULL in a joined or compared variable enters no index (it stays in ρ of its own node).
"""

from operators.stages.gjt.stage import GjtStage, GjtState
from operators.stages.gjt.tree import Bound, TEdge, TNode

__all__ = ["Bound", "GjtStage", "GjtState", "TEdge", "TNode"]
