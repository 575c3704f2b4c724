-- A few of the regression's cofactor aggregates over the full Retailer-like join: one
-- CofactorRing payload per view holds all of them (count, every SUM(x), every SUM(x*y)).
select count(*) as tuples,
       sum(i.inventoryunits) as units,
       sum(i.inventoryunits * c.population) as units_population,
       sum(it.price * w.temp) as price_temp,
       sum(w.temp * w.temp) as temp_squared
from inventory i
join location l on i.locn = l.locn
join census c on l.zip = c.zip
join item it on i.ksn = it.ksn
join weather w on i.locn = w.locn and i.dateid = w.dateid
