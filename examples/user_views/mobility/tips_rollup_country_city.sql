-- Tips by country and city with subtotals.
SELECT c.country, c.name AS city, SUM(p.tip) AS tips, COUNT(p.tip) AS tipped_payments
FROM payments p
JOIN trips t ON t.trip_id = p.trip_id
JOIN cities c ON c.city_id = t.city_id
WHERE p.status = 'captured'
GROUP BY ROLLUP (c.country, c.name)
