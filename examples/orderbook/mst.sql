-- MST, missed trades (RPAI §5.1.1, §5.2.1; the DBToaster finance benchmark's missedtrades query).
-- The paper does not print it; it says MST joins bids and asks by a cross product with inequality
-- predicates and has four nested aggregates of which two are correlated. This is the benchmark's
-- query in that shape: per bidding broker, the value of the top-quartile asks minus that of the
-- top-quartile bids, where "top quartile" is VWAP's test written with > on the higher prices.
select b.broker_id, sum(a.price * a.volume - b.price * b.volume) as mst
from bids b, asks a
where 0.25 * (select sum(a1.volume) from asks a1)
    > (select sum(a2.volume) from asks a2 where a2.price > a.price)
  and 0.25 * (select sum(b1.volume) from bids b1)
    > (select sum(b2.volume) from bids b2 where b2.price > b.price)
group by b.broker_id
