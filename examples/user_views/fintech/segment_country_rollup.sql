-- Board pack: customers per segment and country with subtotals.
SELECT COALESCE(segment, 'all segments') AS segment,
       COALESCE(country, 'all countries') AS country,
       COUNT(*) AS customers
FROM customers
GROUP BY ROLLUP (segment, country)
