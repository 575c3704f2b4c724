-- Insurance: declared value statistics per priority.
SELECT priority, COUNT(*) AS shipments,
       MIN(declared_value) AS min_value, MAX(declared_value) AS max_value,
       AVG(declared_value) AS avg_value, median(declared_value) AS median_value,
       stddev(declared_value) AS sd_value
FROM shipments
GROUP BY priority
