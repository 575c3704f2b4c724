-- SQ1 (RPAI §5.2.1), a synthetic variant of VWAP the paper describes but does not print: "SQ1 makes
-- the uncorrelated subquery into a correlated one by adding a predicate inside the nested
-- subquery", so both sides of the comparison vary with the outer bid. Our choice of predicate:
-- b1.broker_id = b.broker_id, i.e. the quartile is taken of the bid's own broker's volume.
select sum(b.price * b.volume) as sq1
from bids b
where 0.75 * (select sum(b1.volume) from bids b1 where b1.broker_id = b.broker_id)
    < (select sum(b2.volume) from bids b2 where b2.price <= b.price)
