-- Units in stock per zip code over the Retailer-like join without Item: q-hierarchical after the
-- FD locn -> zip (the reduct's order zip -> locn -> dateid -> ksn; O(1) per update, constant delay).
select l.zip, count(*) as stocked, sum(i.inventoryunits) as units
from inventory i
join location l on i.locn = l.locn
join census c on l.zip = c.zip
join weather w on i.locn = w.locn and i.dateid = w.dateid
group by l.zip
