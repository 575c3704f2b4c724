-- NQ1 (RPAI §5.2.1), a synthetic variant of VWAP the paper describes but does not print: it
-- "replaces the nested aggregate in VWAP with another correlated nested aggregate query like VWAP
-- (2-level nesting)", which the paper maintains on its own and then treats like VWAP's
-- uncorrelated side. So the replaced aggregate is VWAP's uncorrelated one: 0.75 * total volume
-- becomes 0.75 * the volume of the bids in the final quartile (a VWAP-shaped query whose
-- correlation stays inside it: b4 refers to b1, nothing refers to the outer b).
select sum(b.price * b.volume) as nq1
from bids b
where 0.75 * (
      select sum(b1.volume)
      from bids b1
      where 0.75 * (select sum(b3.volume) from bids b3)
          < (select sum(b4.volume) from bids b4 where b4.price <= b1.price)
    )
    < (select sum(b2.volume) from bids b2 where b2.price <= b.price)
