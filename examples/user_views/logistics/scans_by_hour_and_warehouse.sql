-- Staffing heatmap: scans per warehouse and hour of day.
SELECT w.code, hour(s.scanned_at) AS hour_of_day, COUNT(*) AS scans
FROM scans s
JOIN warehouses w ON w.warehouse_id = s.warehouse_id
GROUP BY w.code, hour(s.scanned_at)
