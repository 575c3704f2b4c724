"""Keyed stages for correlated nested aggregates (RPAI, Abeysinghe et al., SIGMOD 2022), one module
per strategy (named as ``NestedAggregate.strategy``) plus ``sums`` for what they share.

The outer query's aggregates are kept as *required sums* (RPAI Algorithm 4's ``requiredSums``): per
aggregate the sum of its argument and the count of non-NULL arguments, so AVG needs no extra index.
Aggregate indexes map a value of the correlated aggregate q to the required sums of the outer rows
having that q; the result is a range sum over the index for ``v θ q``.

- ``rpai_tree.RpaiTreeStage`` (VWAP, §2.2.3): q is a prefix sum along one column; an insert shifts the q of
  every later group: ``shift_keys`` on an RPAI tree, O(log n). Keyed by a constant.
- ``pai_map.CorrelationGroupStage`` + ``AggregateIndexStage`` (Example 2.1, §2.1.3): keyed by the
  correlation key, a group's q moves as one point; the global index stage moves that group's sums
  from the old q to the new one (the PAI map), O(1) for ``=``, O(log n) for a range.
- ``per_key_index.PerKeyIndexStage`` + ``SumVectorsStage`` (TPC-H Q17): per correlation key an RPAI tree keyed by
  the outer value v; the key's contribution is one range sum, O(log n) per update.
- ``general.GeneralNestedStage`` (§4.2): free, bound and result maps; O(n) per update. A subquery nested two
  levels in the VWAP shape (NQ2) is one more of its subqueries, read from an RPAI tree.

Index keys are made exact numbers (``operators/structures/aggregate_index.py`` says why).
"""
