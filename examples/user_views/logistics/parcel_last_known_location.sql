-- Tracking page: each parcel's latest scan and where it happened.
SELECT parcel_id, warehouse_id, scan_type, scanned_at
FROM (
    SELECT s.*, ROW_NUMBER() OVER (PARTITION BY parcel_id ORDER BY scanned_at DESC, scan_type, warehouse_id) AS rn
    FROM scans s
) latest
WHERE rn = 1
