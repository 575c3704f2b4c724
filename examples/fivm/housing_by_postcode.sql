-- The Housing-like star grouped by postcode: every relation joins on postcode only, so the join
-- is q-hierarchical and the view tree keeps COUNT and SUM per postcode in O(1) per update.
select h.postcode, count(*) as combinations, sum(h.price) as price
from house h
join shop s on h.postcode = s.postcode
join institution n on h.postcode = n.postcode
join restaurant r on h.postcode = r.postcode
join demographics d on h.postcode = d.postcode
join transport t on h.postcode = t.postcode
group by h.postcode
