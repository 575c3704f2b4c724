-- Hardware: scans per handheld device, when it was last seen and at how many warehouses.
SELECT COALESCE(device_id, 'unknown') AS device, COUNT(*) AS scans,
       MAX(scanned_at) AS last_seen, COUNT(DISTINCT warehouse_id) AS warehouses
FROM scans
GROUP BY COALESCE(device_id, 'unknown')
