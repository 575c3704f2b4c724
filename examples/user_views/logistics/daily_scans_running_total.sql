-- Volume chart: scans per warehouse per day and the warehouse's running total.
SELECT warehouse_id, scan_date, COUNT(*) AS scans,
       SUM(COUNT(*)) OVER (PARTITION BY warehouse_id ORDER BY scan_date
                           ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cumulative_scans
FROM scans
GROUP BY warehouse_id, scan_date
