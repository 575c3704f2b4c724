-- Approximate distance quartiles per product.
SELECT product, percentile_approx(distance_km, array(0.25, 0.5, 0.75)) AS quartiles
FROM trips
WHERE distance_km IS NOT NULL
GROUP BY product
