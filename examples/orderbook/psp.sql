-- PSP, price spread (RPAI §5.1.1, §5.2.1; the DBToaster finance benchmark's pricespread query).
-- The paper does not print it; it says PSP is like MST (bids x asks) but compares a column (volume)
-- with the nested aggregates instead of a correlated nested aggregate. This is the benchmark's
-- query: the summed spread between significant orders, those above 0.01% of their side's volume.
select sum(a.price - b.price) as psp
from bids b, asks a
where b.volume > 0.0001 * (select sum(b1.volume) from bids b1)
  and a.volume > 0.0001 * (select sum(a1.volume) from asks a1)
