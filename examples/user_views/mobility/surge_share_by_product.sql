-- Share of trips under surge pricing per product.
SELECT product,
       COUNT(*) AS trips,
       SUM(CASE WHEN surge_multiplier > 1 THEN 1 ELSE 0 END) AS surged,
       ROUND(AVG(CASE WHEN surge_multiplier > 1 THEN 1.0 ELSE 0.0 END), 3) AS surge_share,
       MAX(surge_multiplier) AS max_surge
FROM trips
GROUP BY product
