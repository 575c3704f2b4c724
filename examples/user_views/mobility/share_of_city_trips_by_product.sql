-- Each product's share of completed trips within its city.
SELECT city_id, product, n,
       ROUND(n / SUM(n) OVER (PARTITION BY city_id), 3) AS share
FROM (SELECT city_id, product, COUNT(*) AS n FROM trips WHERE status = 'completed' GROUP BY city_id, product) x
