-- RPAI Example 2.2 (§2.2), as printed: the volume-weighted price sum over the bids in the final
-- quartile of total volume. One uncorrelated nested aggregate (0.75 * total volume) against one
-- correlated by a single inequality (b2.price <= b.price): an RPAI tree.
select sum(b.price * b.volume) as vwap
from bids b
where 0.75 * (select sum(b1.volume) from bids b1)
    < (select sum(b2.volume) from bids b2 where b2.price <= b.price)
