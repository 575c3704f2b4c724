-- BSP, broker spread (the DBToaster finance benchmark's brokerspread query; IEDyn issue's order-book
-- inequality workload). Per broker, over every pair of its bids where x came after y (x.t > y.t),
-- the summed difference of the two orders' values (price·volume): an equality beside an inequality
-- on the same pair of atoms, aggregated. DBToaster sums x.volume·x.price − y.volume·y.price, the
-- value spread; we keep its expression (integer ticks and shares, so the sum is exact).
select x.broker_id, sum(x.volume * x.price - y.volume * y.price) as bsp
from bids x, bids y
where x.broker_id = y.broker_id and x.t > y.t
group by x.broker_id
