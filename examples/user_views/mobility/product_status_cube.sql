-- Trip counts by every combination of product and status.
SELECT product, status, COUNT(*) AS trips, GROUPING_ID(product, status) AS level
FROM trips
GROUP BY CUBE (product, status)
