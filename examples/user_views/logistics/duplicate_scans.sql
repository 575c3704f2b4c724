-- Data quality: scans recorded more than once (scanner retries).
SELECT parcel_id, scan_type, scanned_at, COUNT(*) AS copies
FROM scans
GROUP BY parcel_id, scan_type, scanned_at
HAVING COUNT(*) > 1
