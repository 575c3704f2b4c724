-- BAND, a band join on price: per broker, the pairs of a bid and an ask whose prices lie more than
-- c = 1000 ticks apart. It is the join of the DBToaster finance benchmark's axfinder query, which
-- writes the band as abs(a.price - b.price) > 1000, i.e. as the disjunction
--   a.price > b.price + 1000  OR  b.price > a.price + 1000.
-- A disjunction is not a conjunctive query, so each disjunct is its own conjunctive query (one
-- inequality with an offset beside the equality on broker_id) and the two are added with UNION ALL.
-- That is exactly equal, multiplicities included, because for c >= 0 the two sides are disjoint:
-- a row in both would have a.price > b.price + c > a.price + 2c >= a.price. So no pair is counted
-- twice and every pair of the band is counted once.
-- axfinder then sums a.volume - b.volume per broker; an aggregate over a UNION ALL is not maintained
-- yet ("UNION_ALL is maintained only between two maintained queries"), so this file is the join.
-- The order-book generator never crosses the book (every bid is below every ask), so on its
-- streams the second disjunct is empty; tests/workloads/test_iedyn_workloads.py shifts the asks
-- down so both sides hold pairs.
select b.broker_id, b.id as bid_id, a.id as ask_id, b.price as bid_price, a.price as ask_price
from bids b, asks a
where b.broker_id = a.broker_id and a.price > b.price + 1000
union all
select b.broker_id, b.id as bid_id, a.id as ask_id, b.price as bid_price, a.price as ask_price
from bids b, asks a
where b.broker_id = a.broker_id and b.price > a.price + 1000
