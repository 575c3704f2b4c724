-- NQ2 (RPAI §5.2.1), a synthetic variant the paper describes but does not print: "similar [to NQ1]
-- but the replaced query also has a correlation to the outer query (i.e., the lowest level is
-- correlated to the outermost query)". Our choice: NQ1 with the lowest-level total b3 restricted to
-- the outer bid's broker (b3.broker_id = b.broker_id, the same correlation SQ1 adds), so the
-- two-level subquery must be evaluated per outer bid.
select sum(b.price * b.volume) as nq2
from bids b
where 0.75 * (
      select sum(b1.volume)
      from bids b1
      where 0.75 * (select sum(b3.volume) from bids b3 where b3.broker_id = b.broker_id)
          < (select sum(b4.volume) from bids b4 where b4.price <= b1.price)
    )
    < (select sum(b2.volume) from bids b2 where b2.price <= b.price)
